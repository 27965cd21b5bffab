/*
 * tests/model/test_design.c - the design seam (model/design.h) and the
 * transaction's accounting hooks (model/transaction.h): the registry names
 * every design, btree.c tells the accounting of every block through the
 * hooks alone, and each design's checker catches a broken design state.
 */
#include "model_fixture.h"

#include <string.h>

#include "design.h"

#define NODESIZE 4096u

static void test_design_registry_names_btrfs_first_then_keyed(void **state)
{
	(void)state;
	assert_non_null(fs_design_at(0));
	assert_string_equal(fs_design_name(fs_design_at(0)), "btrfs");
	assert_string_equal(fs_design_name(fs_design_at(1)), "keyed");
	assert_ptr_equal(fs_design_find("keyed"), fs_design_at(1));
	assert_null(fs_design_find("zfs-like-but-not-yet"));
	unsigned count = 0;
	while (fs_design_at(count))
		count++;
	assert_null(fs_design_at(count + 1)); /* NULL past the last, however many there are */
	assert_string_equal(fs_design_name(NULL), "btrfs"); /* NULL in a config is the default */
}

static void test_design_every_registered_design_fills_every_method(void **state)
{
	(void)state;
	for (unsigned i = 0; fs_design_at(i); i++) {
		const struct fs_design_ops *d = fs_design_at(i);
		assert_non_null(d->top_subvolume);
		assert_non_null(d->lookup);
		assert_non_null(d->lookup_le);
		assert_non_null(d->visit_range);
		assert_non_null(d->lookup_for_write);
		assert_non_null(d->lookup_near);
		assert_non_null(d->visit_range_near);
		assert_non_null(d->lookup_for_write_near);
		assert_non_null(d->write_inode_atime_near);
		assert_non_null(d->insert);
		assert_non_null(d->resize);
		assert_non_null(d->delete);
		assert_non_null(d->snapshot_create);
		assert_non_null(d->snapshot_delete);
		assert_non_null(d->item_write_is_private);
		assert_non_null(d->inline_atime_estimate);
		assert_non_null(d->usage);
		assert_non_null(d->check);
	}
}

/* --- the transaction's hooks ----------------------------------------------- */

struct hook_counts {
	uint64_t allocated, cowed, unlinked, runs;
};
static struct hook_counts counts;

static void count_allocated(struct transaction *txn, struct tree_block *block)
{
	counts.allocated++;
	refs_transaction_ops.block_allocated(txn, block);
}

static void count_cowed(struct transaction *txn, uint64_t tree_id, struct tree_block *buf, struct tree_block *cow)
{
	counts.cowed++;
	refs_transaction_ops.block_cowed(txn, tree_id, buf, cow);
}

static void count_unlinked(struct transaction *txn, struct tree_block *block)
{
	counts.unlinked++;
	refs_transaction_ops.block_unlinked(txn, block);
}

static int pass_throttle(struct transaction *txn, bool stoppable)
{
	return refs_transaction_ops.throttle(txn, stoppable);
}

static void count_run_queued(struct transaction *txn)
{
	counts.runs++;
	refs_transaction_ops.run_queued(txn);
}

static bool pass_pending(const struct transaction *txn)
{
	return refs_transaction_ops.pending(txn);
}

static const struct transaction_ops counting_ops = {
	.block_allocated = count_allocated,
	.block_cowed = count_cowed,
	.block_unlinked = count_unlinked,
	.throttle = pass_throttle,
	.run_queued = count_run_queued,
	.pending = pass_pending,
};

static void test_btree_tells_the_transaction_hooks_of_every_block_it_allocates_copies_and_unlinks(void **state)
{
	(void)state;
	struct tree_fixture *f = tree_fixture_new(NODESIZE);
	f->txn.ops = &counting_ops;
	counts = (struct hook_counts){ 0 };
	uint64_t allocated = f->txn.stats.blocks_allocated;
	for (uint64_t i = 0; i < 2000; i++) {
		struct btree_key key = fixture_key(i, 0);
		btree_insert_item(&f->tree, &f->txn, &key, 60, NULL);
	}
	tree_fixture_commit(f);
	tree_fixture_clone_root(f, 300);
	tree_fixture_commit(f);
	uint64_t cowed = f->txn.stats.blocks_cowed;
	for (uint64_t i = 0; i < 2000; i += 2) {
		struct btree_key key = fixture_key(i, 0);
		assert_true(btree_delete_item(&f->tree, &f->txn, &key));
	}
	tree_fixture_assert_ok(f, "deleting every other item of a snapshotted tree");
	/* Every block btree.c made passed block_allocated, every copy
	 * block_cowed, and the deletes emptied leaves that went through
	 * block_unlinked; the accounting behind the hooks stayed consistent. */
	assert_int_equal(counts.allocated, f->txn.stats.blocks_allocated - allocated);
	assert_true(f->txn.stats.blocks_cowed > cowed);
	assert_int_equal(counts.cowed, f->txn.stats.blocks_cowed);
	assert_true(counts.unlinked > 0);
	/* The fixture commits through transaction_commit(), which runs the
	 * accounting's queue through its hook, once per commit here. */
	assert_int_equal(counts.runs, 2);
	tree_fixture_free(f);
}

/* --- each design's checker ------------------------------------------------- */

static struct fs *fs_with_a_snapshot(const char *design)
{
	struct fs_config config;
	fs_config_init(&config);
	config.nodesize = NODESIZE;
	config.design = fs_design_find(design);
	struct fs *fs = fixture_fs_new_config(&config);
	struct fs_attributes a;
	fs_attributes_init(&a);
	assert_int_equal(fs_create(fs, "/f", 100, &a), 0);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	g_autoptr(GError) error = NULL;
	if (!fs_check(fs, &error))
		fail_msg("%s: %s", design, error->message);
	return fs;
}

static struct subvolume *subvolume_at(struct fs *fs, unsigned i)
{
	return fs->subvolumes->pdata[i];
}

static void test_design_btrfs_check_fails_when_a_snapshot_tree_has_its_source_id(void **state)
{
	(void)state;
	struct fs *fs = fs_with_a_snapshot("btrfs");
	struct subvolume *snap = subvolume_at(fs, 1);
	uint64_t id = snap->tree->id;
	snap->tree->id = subvolume_at(fs, 0)->id;
	g_autoptr(GError) error = NULL;
	assert_false(fs_check(fs, &error));
	assert_non_null(strstr(error->message, "DB1"));
	snap->tree->id = id;
	fs_free(fs);
}

static void test_design_keyed_check_fails_when_two_subvolumes_share_a_snapshot_id(void **state)
{
	(void)state;
	struct fs *fs = fs_with_a_snapshot("keyed");
	/* The keyed design's per-subvolume state begins with the snapshot id. */
	uint32_t *snap_id = subvolume_at(fs, 1)->design_private, saved = *snap_id;
	*snap_id = *(uint32_t *)subvolume_at(fs, 0)->design_private;
	g_autoptr(GError) error = NULL;
	assert_false(fs_check(fs, &error));
	assert_non_null(strstr(error->message, "DK3"));
	*snap_id = saved;
	fs_free(fs);
}

/* A tree of three levels at 4 KiB nodes (2 000 files), committed: its
 * nodes below the root are ones no later transaction changes. Every atime
 * is the clock's now: no access would write one yet. */
static struct fs *three_levels_committed(void)
{
	struct fs_config config;
	fs_config_init(&config);
	config.nodesize = 4096;
	config.design = fs_design_find("btrfs");
	struct fs *fs = fixture_fs_new_config(&config);
	fixture_make_files(fs, 2000);
	assert_int_equal(fs_sync(fs), 0);
	assert_true(fs_subvolume(fs, FS_TOP_SUBVOLUME)->tree->root->level >= 2);
	return fs;
}

/* The unshare estimate of "/" now, and that it is what a visit of every
 * inode item counts. */
static uint64_t estimate_of_top(struct fs *fs)
{
	uint64_t bytes;
	assert_int_equal(fs_unshare_estimate(fs, "/", &bytes), 0);
	uint64_t visit = fs->design->inline_atime_estimate(fs, fs_subvolume(fs, FS_TOP_SUBVOLUME), fs_atime_wanted,
							   false, false);
	assert_int_equal(bytes, visit);
	fixture_assert_fs_ok(fs, "after an estimate");
	return bytes;
}

/* The snapshot-time estimate remembers what committed nodes counted
 * (design_btrfs.c DB3), and counts what a full visit counts: when the clock
 * moves, when a block of the running transaction changes in place, across
 * snapshots, reads and commits, and under other mount options. */
static void test_design_btrfs_estimate_remembers_nothing_a_full_visit_would_not_count(void **state)
{
	(void)state;
	struct fs *fs = three_levels_committed();
	assert_int_equal(estimate_of_top(fs), 0); /* every atime is now */
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 1000000000ll), 0);
	uint64_t all = estimate_of_top(fs); /* relatime: no atime is newer than its mtime */
	assert_true(all > 0);
	char path[32];
	for (unsigned i = 0; i < 2000; i++) {
		g_snprintf(path, sizeof(path), "/d/file-%03u", i);
		assert_int_equal(fs_read(fs, path, NULL), 0);
	}
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 1000000000ll), 0);
	uint64_t read = estimate_of_top(fs); /* every leaf of /d copied and changed in this transaction */
	assert_true(read < all);
	assert_int_equal(fs_write(fs, "/d/file-1000", 0, 10), 0); /* mtime now: its leaf changes in place */
	uint64_t written = estimate_of_top(fs);
	assert_true(written > read);
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(estimate_of_top(fs), written); /* remembered, every node committed */
	struct atime_options strict = { .mode = ATIME_STRICT };
	fs_set_atime_options(fs, &strict); /* the same clock: every atime not now is wanted */
	assert_true(estimate_of_top(fs) > written);
	struct atime_options relatime = { .mode = ATIME_RELATIME };
	fs_set_atime_options(fs, &relatime);
	assert_int_equal(estimate_of_top(fs), written);
	for (unsigned i = 1; i <= 5; i++) {
		g_snprintf(path, sizeof(path), "/snap%u", i);
		assert_int_equal(fs_snapshot(fs, "/", path, false), 0);
		assert_int_equal(fs->counters.unshare_estimate, estimate_of_top(fs));
		g_snprintf(path, sizeof(path), "/d/file-%03u", i * 100);
		assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 1000000000ll), 0);
		assert_int_equal(fs_read(fs, path, NULL), 0);
		if (i == 2) /* relatime: every atime a day old is wanted again */
			assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 2 * 86400ll * 1000000000ll), 0);
		if (i >= 3) { /* strictatime; then nodiratime: no directory is wanted */
			struct atime_options options = { .mode = ATIME_STRICT, .nodiratime = i == 4 };
			fs_set_atime_options(fs, &options);
		}
	}
	fs_free(fs);
}

/* DB3 fails when an inode below a remembered node changes where no
 * transaction changes it (in place, in a block of an earlier one). */
static void test_design_btrfs_check_fails_when_the_estimate_memo_is_stale(void **state)
{
	(void)state;
	struct fs *fs = three_levels_committed();
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 1000000000ll), 0);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	const struct tree_block *root = fs_subvolume(fs, FS_TOP_SUBVOLUME)->tree->root;
	const struct tree_block *node = root->children[root->nritems - 1].block;
	assert_true(node->level >= 1 && node->generation != fs->txn.transid);
	while (node->level > 1)
		node = node->children[0].block;
	const struct tree_block *leaf = node->children[node->nritems - 1].block;
	for (uint32_t i = 0; i < leaf->nritems; i++) {
		struct btree_item *item = (struct btree_item *)btree_leaf_item(leaf, i);
		if (btree_item_key(item)->type == BTRFS_INODE_ITEM_KEY)
			btree_item_inode_for_write(item)->atime = fs_clock(fs); /* relatime: none wanted */
	}
	g_autoptr(GError) error = NULL;
	assert_false(fs_check(fs, &error));
	assert_non_null(strstr(error->message, "DB3 the estimate remembers"));
	fs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_design_registry_names_btrfs_first_then_keyed),
		cmocka_unit_test(test_design_every_registered_design_fills_every_method),
		cmocka_unit_test(test_btree_tells_the_transaction_hooks_of_every_block_it_allocates_copies_and_unlinks),
		cmocka_unit_test(test_design_btrfs_check_fails_when_a_snapshot_tree_has_its_source_id),
		cmocka_unit_test(test_design_keyed_check_fails_when_two_subvolumes_share_a_snapshot_id),
		cmocka_unit_test(test_design_btrfs_estimate_remembers_nothing_a_full_visit_would_not_count),
		cmocka_unit_test(test_design_btrfs_check_fails_when_the_estimate_memo_is_stale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
