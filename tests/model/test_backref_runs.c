/*
 * tests/model/test_backref_runs.c - keyed backrefs and METADATA_ITEMs stored
 * as counted runs (model/btree.c BT9) are simulator memory only: the extent tree keeps the
 * leaves, items and addresses it has when every item is stored on its own.
 *
 * The workload gives every data extent more references than its extent item
 * holds inline (BTRFS_MAX_EXTENT_ITEM_SIZE): files with data, many
 * snapshots, a read of every file in every snapshot under strictatime (each
 * read copies the snapshot's leaf, and the copy references the leaf's
 * extents), then the deletion of half the snapshots. Two filesystems run it:
 * one as the model runs, one whose transaction never compacts
 * (txn.run_leaves NULL), and their extent trees are compared leaf by leaf.
 */
#include "model_fixture.h"

#include <string.h>

#include "constants.h"
#include "fs_internal.h"

#define FILES 60u
#define SNAPSHOTS 48u

static struct fs *new_fs(bool compact)
{
	struct fs_config config;
	fs_config_init(&config);
	config.nodesize = 4096;
	config.device_size = 1ull << 30;
	config.atime.mode = ATIME_STRICT;
	struct fs *fs = fixture_fs_new_config(&config);
	if (!compact) {
		g_ptr_array_unref(fs->txn.run_leaves);
		fs->txn.run_leaves = NULL;
	}
	return fs;
}

static void read_all(struct fs *fs, const char *prefix)
{
	for (unsigned i = 0; i < FILES; i++) {
		g_autofree char *path = g_strdup_printf("%s/d/file-%03u", prefix, i);
		assert_int_equal(fs_read(fs, path, NULL), 0);
	}
}

/* Between operations, as refs.c does once enough leaves wait: here after
 * every tree's reads, so that the transaction goes on over compacted leaves. */
static void compact(struct fs *fs)
{
	if (fs->txn.run_leaves)
		btree_compact_runs(&fs->txn, 0);
}

static void build(struct fs *fs)
{
	fixture_make_files(fs, FILES);
	assert_int_equal(fs_sync(fs), 0);
	for (unsigned s = 0; s < SNAPSHOTS; s++) {
		g_autofree char *dest = g_strdup_printf("/s%02u", s);
		assert_int_equal(fs_snapshot(fs, "/", dest, false), 0);
	}
	fs_set_clock(fs, fs_clock(fs) + 1000000000ll);
	for (unsigned s = 0; s < SNAPSHOTS; s++) {
		g_autofree char *prefix = g_strdup_printf("/s%02u", s);
		read_all(fs, prefix);
		compact(fs);
	}
}

static void delete_half(struct fs *fs)
{
	for (unsigned s = 0; s < SNAPSHOTS; s += 2) {
		g_autofree char *path = g_strdup_printf("/s%02u", s);
		assert_int_equal(fs_delete_snapshot(fs, path), 0);
	}
}

static void collect_leaves(const struct tree_block *block, GPtrArray *leaves)
{
	if (!block->level) {
		g_ptr_array_add(leaves, (gpointer)block);
		return;
	}
	for (uint32_t i = 0; i < block->nritems; i++)
		collect_leaves(block->children[i].block, leaves);
}

/* Leaves of the extent tree stored as runs. */
static unsigned leaves_with_runs(const struct fs *fs)
{
	g_autoptr(GPtrArray) leaves = g_ptr_array_new();
	collect_leaves(fs->extent_tree.root, leaves);
	unsigned runs = 0;
	for (guint i = 0; i < leaves->len; i++)
		runs += !!(((const struct tree_block *)leaves->pdata[i])->flags & TREE_BLOCK_RUNS);
	return runs;
}

static uint64_t keyed_backrefs(const struct fs *fs)
{
	g_autoptr(GPtrArray) leaves = g_ptr_array_new();
	collect_leaves(fs->extent_tree.root, leaves);
	uint64_t keyed = 0;
	for (guint i = 0; i < leaves->len; i++) {
		struct btree_leaf_cursor cursor;
		btree_leaf_cursor_init(&cursor, leaves->pdata[i], 0);
		for (const struct btree_item *item; (item = btree_leaf_cursor_next(&cursor));)
			keyed += btree_item_key(item)->type == BTRFS_EXTENT_DATA_REF_KEY;
	}
	return keyed;
}

/* The same leaves at the same addresses with the same items, byte for byte. */
static void assert_same_extent_tree(const struct fs *a, const struct fs *b)
{
	g_autoptr(GPtrArray) la = g_ptr_array_new();
	g_autoptr(GPtrArray) lb = g_ptr_array_new();
	collect_leaves(a->extent_tree.root, la);
	collect_leaves(b->extent_tree.root, lb);
	assert_int_equal(la->len, lb->len);
	for (guint i = 0; i < la->len; i++) {
		const struct tree_block *x = la->pdata[i], *y = lb->pdata[i];
		assert_int_equal(x->bytenr, y->bytenr);
		assert_int_equal(x->nritems, y->nritems);
		assert_int_equal(x->leaf_bytes, y->leaf_bytes);
		assert_int_equal(x->generation, y->generation);
		struct btree_leaf_cursor cx, cy;
		btree_leaf_cursor_init(&cx, x, 0);
		btree_leaf_cursor_init(&cy, y, 0);
		for (uint32_t s = 0; s < x->nritems; s++) {
			const struct btree_item *p = btree_leaf_cursor_next(&cx), *q = btree_leaf_cursor_next(&cy);
			assert_non_null(p);
			assert_non_null(q);
			assert_memory_equal(p, q, sizeof(*p));
			assert_memory_equal(p, btree_leaf_item(x, s), sizeof(*p));
		}
		assert_null(btree_leaf_cursor_next(&cx));
	}
	assert_int_equal(fixture_metadata_used(a), fixture_metadata_used(b));
}

static void test_keyed_backrefs_stored_as_runs_leave_the_extent_tree_as_items_one_by_one_do(void **state)
{
	(void)state;
	struct fs *runs = new_fs(true), *plain = new_fs(false);
	build(runs);
	build(plain);
	/* Mid-transaction: the throttle has written part of it. */
	assert_true(leaves_with_runs(runs) > 0);
	assert_same_extent_tree(runs, plain);
	fixture_assert_fs_ok(runs, "reads of every snapshot, runs");
	assert_int_equal(fs_sync(runs), 0);
	assert_int_equal(fs_sync(plain), 0);
	assert_true(keyed_backrefs(runs) > FILES);
	assert_true(leaves_with_runs(runs) > 0);
	assert_int_equal(leaves_with_runs(plain), 0);
	assert_same_extent_tree(runs, plain);
	delete_half(runs);
	delete_half(plain);
	assert_int_equal(fs_sync(runs), 0);
	assert_int_equal(fs_sync(plain), 0);
	assert_same_extent_tree(runs, plain);
	fixture_assert_fs_ok(runs, "half the snapshots deleted, runs");
	fixture_assert_fs_ok(plain, "half the snapshots deleted, one by one");
	fs_free(runs);
	fs_free(plain);
}

/* A lookup of any member of a run finds it where a leaf of items would. */
static void test_lookups_find_every_member_of_a_run(void **state)
{
	(void)state;
	struct fs *fs = new_fs(true);
	build(fs);
	assert_int_equal(fs_sync(fs), 0);
	g_autoptr(GPtrArray) leaves = g_ptr_array_new();
	collect_leaves(fs->extent_tree.root, leaves);
	uint64_t members = 0;
	for (guint i = 0; i < leaves->len; i++) {
		const struct tree_block *leaf = leaves->pdata[i];
		for (uint32_t s = 0; s < leaf->nritems; s++) {
			struct btree_item item = *btree_leaf_item(leaf, s);
			struct btree_path path;
			assert_true(btree_lookup(&fs->extent_tree, btree_item_key(&item), &path));
			assert_ptr_equal(path.nodes[0], leaf);
			assert_int_equal(path.slots[0], s);
			assert_memory_equal(btree_path_item(&path), &item, sizeof(item));
			const struct btree_item *le = btree_lookup_le(&fs->extent_tree, btree_item_key(&item));
			assert_memory_equal(le, &item, sizeof(item));
			/* Just above it: not found, and the insertion point is the next slot. */
			struct btree_key above = *btree_item_key(&item);
			above.snapshot++;
			assert_false(btree_lookup(&fs->extent_tree, &above, &path));
			assert_int_equal(path.slots[0], s + 1);
			members += (leaf->flags & TREE_BLOCK_RUNS) &&
				   btree_item_key(&item)->type == BTRFS_EXTENT_DATA_REF_KEY;
		}
	}
	assert_true(members > 0);
	fs_free(fs);
}

struct key_log {
	GArray *keys;
	unsigned stop_after; /* 0: never */
};

static bool log_item(const struct btree_item *item, void *opaque)
{
	struct key_log *log = opaque;
	g_array_append_val(log->keys, *btree_item_key(item));
	return true;
}

static bool log_items(const struct btree_item *items, uint32_t count, void *opaque)
{
	struct key_log *log = opaque;
	assert_true(count > 0);
	for (uint32_t i = 0; i < count; i++)
		g_array_append_val(log->keys, *btree_item_key(&items[i]));
	return !log->stop_after || log->keys->len < log->stop_after;
}

/* btree_visit_range_items() hands over, run after run, the items
 * btree_visit_range() hands over one at a time: over the extent tree's
 * leaves with runs (made-up members, one a call) and without, whole ranges
 * and ranges cut short by the callback (a prefix, ending where a run does). */
static void test_a_visit_by_runs_of_items_hands_over_what_a_visit_item_by_item_does(void **state)
{
	(void)state;
	struct fs *fs = new_fs(true);
	build(fs);
	assert_int_equal(fs_sync(fs), 0);
	g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(struct btree_key));
	struct key_log every = { all, 0 };
	btree_visit_range(&fs->extent_tree, &BTREE_KEY_MIN, &BTREE_KEY_MAX, log_item, &every);
	assert_true(all->len > 100);
	for (guint i = 0; i < 400; i++) {
		guint from = (i * 7919u) % all->len, to = MIN(all->len - 1, from + (i * 104729u) % 300);
		struct btree_key first = g_array_index(all, struct btree_key, from);
		struct btree_key last = g_array_index(all, struct btree_key, to);
		if (i % 3 == 1)
			first.offset++; /* from between two keys */
		g_autoptr(GArray) one = g_array_new(FALSE, FALSE, sizeof(struct btree_key));
		g_autoptr(GArray) runs = g_array_new(FALSE, FALSE, sizeof(struct btree_key));
		struct key_log by_item = { one, 0 }, by_runs = { runs, i % 2 ? 1 + i % 40 : 0 };
		uint64_t items = btree_visit_range(&fs->extent_tree, &first, &last, log_item, &by_item);
		uint64_t handed = btree_visit_range_items(&fs->extent_tree, &first, &last, log_items, &by_runs);
		assert_int_equal(handed, runs->len);
		assert_true(runs->len <= one->len);
		if (!by_runs.stop_after || runs->len < by_runs.stop_after)
			assert_int_equal(runs->len, items); /* not cut short: all of them */
		assert_memory_equal(runs->data, one->data, runs->len * sizeof(struct btree_key));
	}
	fs_free(fs);
}

/* BT9: a run whose count no longer adds up to the leaf's items is caught. */
/* Items a stored entry stands for: a run of keyed backrefs counts them in
 * its value, a run of METADATA_ITEMs in the value's low 32 bits. */
static uint32_t entry_items(const struct btree_item *entry)
{
	uint8_t type = btree_item_key(entry)->type;
	bool runs = type == BTRFS_EXTENT_DATA_REF_KEY || type == BTRFS_TREE_BLOCK_REF_KEY ||
		    type == BTRFS_METADATA_ITEM_KEY;
	uint32_t count = (uint32_t)btree_item_value(entry);
	return runs && count > 1 ? count : 1;
}

/* The first stored run of items of `type` in the extent tree, and its leaf. */
static struct btree_item *first_run(const struct fs *fs, uint8_t type, struct tree_block **leafp)
{
	g_autoptr(GPtrArray) leaves = g_ptr_array_new();
	collect_leaves(fs->extent_tree.root, leaves);
	for (guint i = 0; i < leaves->len; i++) {
		struct tree_block *leaf = leaves->pdata[i];
		if (!(leaf->flags & TREE_BLOCK_RUNS))
			continue;
		for (uint32_t e = 0, items = 0; items < leaf->nritems; e++) {
			struct btree_item *entry = &leaf->items[e];
			items += entry_items(entry);
			if (entry_items(entry) > 1 && btree_item_key(entry)->type == type) {
				*leafp = leaf;
				return entry;
			}
		}
	}
	return NULL;
}

static void test_tree_check_fails_on_a_run_that_does_not_add_up_to_the_leaf(void **state)
{
	(void)state;
	struct fs *fs = new_fs(true);
	build(fs);
	assert_int_equal(fs_sync(fs), 0);
	fixture_assert_fs_ok(fs, "before the break");
	struct tree_block *leaf = NULL;
	struct btree_item *run = first_run(fs, BTRFS_EXTENT_DATA_REF_KEY, &leaf);
	assert_non_null(run);
	(*btree_item_value_for_write(run))++;
	g_autofree char *want = g_strdup_printf("corrupt leaf: block %" G_GUINT64_FORMAT ", BT9 runs that do not add up",
						leaf->bytenr);
	fixture_assert_fs_corrupt(fs, want);
	(*btree_item_value_for_write(run))--;
	fixture_assert_fs_ok(fs, "after the repair");
	fs_free(fs);
}

/* The copies of leaves the reads made sit at consecutive addresses: their
 * METADATA_ITEMs are stored as runs, one block apart. */
static void test_tree_check_fails_on_a_run_of_metadata_items_not_a_block_apart(void **state)
{
	(void)state;
	struct fs *fs = new_fs(true);
	build(fs);
	assert_int_equal(fs_sync(fs), 0);
	struct tree_block *leaf = NULL;
	struct btree_item *run = first_run(fs, BTRFS_METADATA_ITEM_KEY, &leaf);
	assert_non_null(run);
	assert_int_equal(btree_item_value(run) >> 32, 12); /* 4 KiB blocks */
	*btree_item_value_for_write(run) += 1ull << 32;
	g_autofree char *want = g_strdup_printf("corrupt leaf: block %" G_GUINT64_FORMAT
						", BT9 a run of metadata items not a block apart", leaf->bytenr);
	fixture_assert_fs_corrupt(fs, want);
	*btree_item_value_for_write(run) -= 1ull << 32;
	fixture_assert_fs_ok(fs, "after the repair");
	fs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keyed_backrefs_stored_as_runs_leave_the_extent_tree_as_items_one_by_one_do),
		cmocka_unit_test(test_lookups_find_every_member_of_a_run),
		cmocka_unit_test(test_a_visit_by_runs_of_items_hands_over_what_a_visit_item_by_item_does),
		cmocka_unit_test(test_tree_check_fails_on_a_run_that_does_not_add_up_to_the_leaf),
		cmocka_unit_test(test_tree_check_fails_on_a_run_of_metadata_items_not_a_block_apart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
