/*
 * tests/model/test_attribution.c - every live tree block is charged to the
 * kind of operation that allocated it (fs_set_cause, space_report's
 * cause_bytes; docs/model.md, "Attribution").
 *
 * The specification, one test each:
 *  - mkfs's blocks are mkfs's; the causes sum to metadata_used after every
 *    operation, in both designs (blockstore BS4, checked by fs_check);
 *  - after a snapshot, the blocks a read pass copies are atime's, the
 *    extent-tree records the commit writes for them too, whatever cause is
 *    in force at the commit;
 *  - delayed writeback is the write's that queued it, not the sync's;
 *  - deleting a snapshot is delete's;
 *  - BS4 fails when a live block's cause is changed behind the store's back.
 */
#include "model_fixture.h"

#include <string.h>

#include "fs_internal.h"

#define FILES 60u

static void space(const struct fs *fs, struct space_report *out)
{
	struct fs_report report;
	fs_report(fs, &report);
	*out = report.space;
}

static uint64_t cause_sum(const struct space_report *s)
{
	uint64_t sum = 0;
	for (int c = 0; c < SPACE_CAUSE_COUNT; c++)
		sum += s->cause_bytes[c];
	return sum;
}

/* The causes sum to metadata_used and the checkers pass. */
static void assert_attribution_ok(struct fs *fs, const char *what)
{
	struct space_report s;
	space(fs, &s);
	if (cause_sum(&s) != s.metadata_used)
		fail_msg("%s: causes sum to %" G_GUINT64_FORMAT ", metadata_used %" G_GUINT64_FORMAT, what,
			 cause_sum(&s), s.metadata_used);
	fixture_assert_fs_ok(fs, what);
}

static struct fs *new_fs(const char *design)
{
	struct fs_config config;
	fs_config_init(&config);
	config.nodesize = 4096;
	config.atime.mode = ATIME_STRICT;
	config.design = fs_design_find(design);
	assert_non_null(config.design);
	return fixture_fs_new_config(&config);
}

/* /d with FILES files (some inline, some with extents), written and synced. */
static void populate(struct fs *fs)
{
	fs_set_cause(fs, SPACE_CAUSE_WRITE);
	fixture_make_files(fs, FILES);
	assert_int_equal(fs_sync(fs), 0);
}

static void read_all(struct fs *fs, const char *top)
{
	for (unsigned i = 0; i < FILES; i++) {
		g_autofree char *path = g_strdup_printf("%s/d/file-%03u", top, i);
		assert_int_equal(fs_read(fs, path, NULL), 0);
	}
}

/* Counts the live blocks transaction `transid` wrote, in every tree, by cause
 * (and of them the extent tree's in extent[]). */
static void count_written(struct fs *fs, uint64_t transid, unsigned all[SPACE_CAUSE_COUNT],
			  unsigned extent[SPACE_CAUSE_COUNT])
{
	g_autoptr(GHashTable) blocks = g_hash_table_new(NULL, NULL);
	struct btree *global[] = { &fs->root_tree, &fs->extent_tree, &fs->csum_tree, &fs->free_space_tree,
				   &fs->dev_tree, &fs->uuid_tree, &fs->data_reloc_tree };
	for (unsigned i = 0; i < G_N_ELEMENTS(global); i++)
		btree_collect_blocks(global[i]->root, blocks);
	fs_collect_subvolume_blocks(fs, blocks);
	memset(all, 0, SPACE_CAUSE_COUNT * sizeof(unsigned));
	memset(extent, 0, SPACE_CAUSE_COUNT * sizeof(unsigned));
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, blocks);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		const struct tree_block *block = key;
		if (block->generation != transid)
			continue;
		all[block->cause]++;
		extent[block->cause] += tree_block_owner(block) == BTRFS_EXTENT_TREE_OBJECTID;
	}
}

static uint64_t running_transid(const struct fs *fs)
{
	struct fs_report report;
	fs_report(fs, &report);
	return report.transid;
}

static void test_a_new_filesystem_is_all_mkfs(void **state)
{
	struct fs *fs = new_fs("btrfs");
	struct space_report s;
	space(fs, &s);
	assert_true(s.metadata_used > 0);
	assert_int_equal(s.cause_bytes[SPACE_CAUSE_MKFS], s.metadata_used);
	assert_attribution_ok(fs, "mkfs");
	fs_free(fs);
}

static void test_the_causes_sum_to_metadata_used_after_every_operation_in_both_designs(void **state)
{
	static const char *const designs[] = { "btrfs", "keyed" };
	for (unsigned d = 0; d < G_N_ELEMENTS(designs); d++) {
		struct fs *fs = new_fs(designs[d]);
		populate(fs);
		assert_attribution_ok(fs, "the copy");
		fs_set_cause(fs, SPACE_CAUSE_SNAPSHOT);
		assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
		assert_attribution_ok(fs, "the snapshot");
		fs_set_cause(fs, SPACE_CAUSE_ATIME);
		for (unsigned i = 0; i < FILES; i += 2) {
			g_autofree char *path = g_strdup_printf("/snap/d/file-%03u", i);
			assert_int_equal(fs_read(fs, path, NULL), 0);
			assert_attribution_ok(fs, "a read in the running transaction");
		}
		fs_set_cause(fs, SPACE_CAUSE_WRITE);
		assert_int_equal(fs_write(fs, "/d/file-001", 0, 50000), 0);
		assert_int_equal(fs_unlink(fs, "/snap/d/file-002"), 0);
		assert_attribution_ok(fs, "a write and an unlink");
		assert_int_equal(fs_sync(fs), 0);
		assert_attribution_ok(fs, "the commit");
		fs_set_cause(fs, SPACE_CAUSE_DELETE);
		assert_int_equal(fs_delete_snapshot(fs, "/snap"), 0);
		assert_attribution_ok(fs, "the deletion");
		fs_free(fs);
	}
}

static void test_a_read_pass_after_a_snapshot_is_charged_to_atime_even_when_another_op_commits(void **state)
{
	struct fs *fs = new_fs("btrfs");
	populate(fs);
	fs_set_cause(fs, SPACE_CAUSE_SNAPSHOT);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + DAY_NS), 0); /* atimes to change */
	uint64_t transid = running_transid(fs);
	struct space_report before, after;
	space(fs, &before);
	fs_set_cause(fs, SPACE_CAUSE_ATIME);
	read_all(fs, "");
	read_all(fs, "/snap");
	/* The commit comes from a sync the caller calls a write: the extent
	 * tree records, root items and free-space items it writes are still
	 * the reads'. */
	fs_set_cause(fs, SPACE_CAUSE_WRITE);
	assert_int_equal(fs_sync(fs), 0);
	space(fs, &after);
	assert_attribution_ok(fs, "the read pass");
	uint64_t growth = after.metadata_used - before.metadata_used;
	uint64_t atime = after.cause_bytes[SPACE_CAUSE_ATIME] - before.cause_bytes[SPACE_CAUSE_ATIME];
	print_message("# growth %" G_GUINT64_FORMAT ", atime %" G_GUINT64_FORMAT "\n", growth, atime);
	assert_true(after.metadata_used > before.metadata_used);
	assert_true(atime >= growth);
	assert_true(after.cause_bytes[SPACE_CAUSE_WRITE] <= before.cause_bytes[SPACE_CAUSE_WRITE]);
	assert_true(after.cause_bytes[SPACE_CAUSE_SNAPSHOT] <= before.cause_bytes[SPACE_CAUSE_SNAPSHOT]);
	/* Every block that transaction wrote, in every tree, is atime's. */
	unsigned all[SPACE_CAUSE_COUNT], extent[SPACE_CAUSE_COUNT];
	count_written(fs, transid, all, extent);
	print_message("# the read pass's transaction wrote %u blocks, %u of the extent tree\n",
		      all[SPACE_CAUSE_ATIME], extent[SPACE_CAUSE_ATIME]);
	assert_true(extent[SPACE_CAUSE_ATIME] > 0);
	for (int c = 0; c < SPACE_CAUSE_COUNT; c++)
		if (c != SPACE_CAUSE_ATIME)
			assert_int_equal(all[c], 0);
	fs_free(fs);
}

/* In a transaction of many creates and a few reads, the commit charges its
 * root items and free-space items to write (the busiest), but the extent-tree
 * records of the reads' copies to atime. */
static void test_extent_tree_records_are_charged_to_the_op_that_changed_the_references(void **state)
{
	struct fs *fs = new_fs("btrfs");
	populate(fs);
	fs_set_cause(fs, SPACE_CAUSE_SNAPSHOT);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + DAY_NS), 0);
	uint64_t transid = running_transid(fs);
	fs_set_cause(fs, SPACE_CAUSE_ATIME);
	read_all(fs, "/snap");
	fs_set_cause(fs, SPACE_CAUSE_WRITE);
	struct fs_attributes dir = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_mkdir(fs, "/e", &dir), 0);
	for (unsigned i = 0; i < 4 * FILES; i++) {
		g_autofree char *path = g_strdup_printf("/e/new-%03u", i);
		struct fs_attributes a = fixture_attributes(0644, INT64_MIN, INT64_MIN);
		assert_int_equal(fs_create(fs, path, 100, &a), 0);
	}
	assert_int_equal(fs_sync(fs), 0);
	assert_attribution_ok(fs, "the mixed transaction");
	unsigned all[SPACE_CAUSE_COUNT], extent[SPACE_CAUSE_COUNT];
	count_written(fs, transid, all, extent);
	print_message("# extent-tree blocks written: %u atime, %u write; all: %u atime, %u write\n",
		      extent[SPACE_CAUSE_ATIME], extent[SPACE_CAUSE_WRITE], all[SPACE_CAUSE_ATIME],
		      all[SPACE_CAUSE_WRITE]);
	assert_true(all[SPACE_CAUSE_WRITE] > all[SPACE_CAUSE_ATIME]);
	assert_true(extent[SPACE_CAUSE_ATIME] > 0);
	assert_true(extent[SPACE_CAUSE_WRITE] > 0);
	fs_free(fs);
}

static void test_delayed_writeback_is_charged_to_the_write_that_queued_it(void **state)
{
	struct fs *fs = new_fs("btrfs");
	populate(fs);
	struct space_report before, after;
	space(fs, &before);
	fs_set_cause(fs, SPACE_CAUSE_WRITE);
	for (unsigned i = 0; i < FILES; i++) {
		g_autofree char *path = g_strdup_printf("/d/more-%03u", i);
		struct fs_attributes a = fixture_attributes(0644, INT64_MIN, INT64_MIN);
		assert_int_equal(fs_create(fs, path, 40000, &a), 0);
	}
	assert_true(fs->pending_writes->len > 0);
	fs_set_cause(fs, SPACE_CAUSE_ATIME); /* the commit runs under a reader's cause */
	assert_int_equal(fs_sync(fs), 0);
	space(fs, &after);
	assert_attribution_ok(fs, "the writeback");
	assert_true(after.cause_bytes[SPACE_CAUSE_WRITE] > before.cause_bytes[SPACE_CAUSE_WRITE]);
	assert_int_equal(after.cause_bytes[SPACE_CAUSE_ATIME], 0);
	fs_free(fs);
}

static void test_deleting_a_snapshot_is_charged_to_delete(void **state)
{
	struct fs *fs = new_fs("btrfs");
	populate(fs);
	fs_set_cause(fs, SPACE_CAUSE_SNAPSHOT);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	fs_set_cause(fs, SPACE_CAUSE_WRITE);
	for (unsigned i = 0; i < FILES; i += 2) {
		g_autofree char *path = g_strdup_printf("/snap/d/file-%03u", i);
		assert_int_equal(fs_write(fs, path, 0, 20000), 0);
	}
	assert_int_equal(fs_sync(fs), 0);
	struct space_report before, after;
	space(fs, &before);
	assert_int_equal(before.cause_bytes[SPACE_CAUSE_DELETE], 0);
	fs_set_cause(fs, SPACE_CAUSE_DELETE);
	assert_int_equal(fs_delete_snapshot(fs, "/snap"), 0);
	space(fs, &after);
	assert_attribution_ok(fs, "the deletion");
	assert_true(after.metadata_used < before.metadata_used);
	assert_true(after.cause_bytes[SPACE_CAUSE_DELETE] > 0);
	assert_true(after.cause_bytes[SPACE_CAUSE_WRITE] < before.cause_bytes[SPACE_CAUSE_WRITE]);
	fs_free(fs);
}

static void test_blockstore_check_fails_when_a_live_block_changes_cause_behind_the_store(void **state)
{
	struct fs *fs = new_fs("btrfs");
	populate(fs);
	assert_attribution_ok(fs, "before");
	struct tree_block *block = fs->csum_tree.root;
	block->cause = block->cause == SPACE_CAUSE_ATIME ? SPACE_CAUSE_WRITE : SPACE_CAUSE_ATIME;
	fixture_assert_fs_corrupt(fs, "corrupt blockstore: cause ");
	fs_free(fs);
}

static void test_blockstore_check_fails_on_a_block_of_no_cause(void **state)
{
	struct fs *fs = new_fs("btrfs");
	populate(fs);
	struct tree_block *block = fs->csum_tree.root;
	block->cause = SPACE_CAUSE_COUNT;
	g_autofree char *want = g_strdup_printf("corrupt blockstore: block %" G_GUINT64_FORMAT ", BS4 cause %u unknown",
						block->bytenr, (unsigned)SPACE_CAUSE_COUNT);
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_new_filesystem_is_all_mkfs),
		cmocka_unit_test(test_the_causes_sum_to_metadata_used_after_every_operation_in_both_designs),
		cmocka_unit_test(test_a_read_pass_after_a_snapshot_is_charged_to_atime_even_when_another_op_commits),
		cmocka_unit_test(test_extent_tree_records_are_charged_to_the_op_that_changed_the_references),
		cmocka_unit_test(test_delayed_writeback_is_charged_to_the_write_that_queued_it),
		cmocka_unit_test(test_deleting_a_snapshot_is_charged_to_delete),
		cmocka_unit_test(test_blockstore_check_fails_when_a_live_block_changes_cause_behind_the_store),
		cmocka_unit_test(test_blockstore_check_fails_on_a_block_of_no_cause),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
