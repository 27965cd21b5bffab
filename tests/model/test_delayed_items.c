/*
 * tests/model/test_delayed_items.c - btrfs's delayed items as the model
 * keeps them (model/delayed_items.h): a directory's DIR_INDEX items wait in
 * memory and go into the tree in leaf-sized batches, when the worker gets
 * to the directory or at the commit; a batch insert splits a leaf once, at
 * the insertion point; the checker's invariants DI1-DI4.
 */
#include "model_fixture.h"

#include <errno.h>

#include "constants.h"
#include "fs_internal.h"

static struct fs *new_fs(const char *design)
{
	struct fs_config config;
	fs_config_init(&config);
	config.design = fs_design_find(design);
	assert_non_null(config.design);
	return fixture_fs_new_config(&config);
}

static void create_files(struct fs *fs, const char *dir, unsigned first, unsigned count)
{
	struct fs_attributes file = fixture_attributes(0644, INT64_MIN, INT64_MIN);
	for (unsigned i = first; i < first + count; i++) {
		g_autofree char *path = g_strdup_printf("%s/file-%04u", dir, i);
		assert_int_equal(fs_create(fs, path, 100, &file), 0);
	}
}

/* The directory's inode number: the inode its entry in / points at. */
static uint64_t dir_inode(struct fs *fs, const char *path)
{
	struct inode_location where;
	assert_int_equal(fs_resolve(fs, path, &where), 0);
	return where.inode;
}

static uint64_t indexes_in_tree(struct fs *fs, uint64_t dir)
{
	const struct subvolume *sv = fs_subvolume(fs, FS_TOP_SUBVOLUME);
	uint64_t n = 0;
	for (uint64_t index = 2; index < 4096; index++) {
		struct btree_key key = BTRFS_KEY(dir, BTRFS_DIR_INDEX_KEY, index);
		struct btree_path path;
		n += btree_lookup(sv->tree, &key, &path);
	}
	return n;
}

static void test_a_small_directory_s_indexes_wait_for_the_commit(void **state)
{
	struct fs *fs = new_fs("btrfs");
	struct fs_attributes dir = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_mkdir(fs, "/d", &dir), 0);
	create_files(fs, "/d", 0, 20);
	uint64_t d = dir_inode(fs, "/d");
	assert_int_equal(indexes_in_tree(fs, d), 0);
	/* 20 indexes of /d and one of / wait, and 22 inodes changed: 20 new
	 * files, /d and / (their sizes and times). */
	assert_int_equal(delayed_items_count(fs), 21 + 22);
	fixture_assert_fs_ok(fs, "indexes waiting");
	/* The names are there all the same: DIR_ITEMs go in at once. */
	struct inode_location where;
	assert_int_equal(fs_resolve(fs, "/d/file-0007", &where), 0);
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(indexes_in_tree(fs, d), 20);
	assert_int_equal(delayed_items_count(fs), 0);
	fixture_assert_fs_ok(fs, "after the commit");
	fs_free(fs);
}

static void test_the_worker_writes_a_directory_the_copy_has_left(void **state)
{
	struct fs *fs = new_fs("btrfs");
	struct fs_attributes dir = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_mkdir(fs, "/a", &dir), 0);
	assert_int_equal(fs_mkdir(fs, "/b", &dir), 0);
	create_files(fs, "/a", 0, 30);
	create_files(fs, "/b", 0, 300);
	/* The worker ran (300 files pass the background mark) and reached /a,
	 * the oldest node, long before the commit: all of /a is in the tree. */
	assert_int_equal(indexes_in_tree(fs, dir_inode(fs, "/a")), 30);
	/* Nothing waits past the point where the writer would have to wait. */
	assert_true(delayed_items_count(fs) < BTRFS_DELAYED_WRITEBACK);
	uint64_t b = dir_inode(fs, "/b");
	assert_true(indexes_in_tree(fs, b) < 300);
	fixture_assert_fs_ok(fs, "mid copy");
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(indexes_in_tree(fs, b), 300);
	fs_free(fs);
}

static void test_a_name_removed_before_its_index_went_in_takes_the_index_out(void **state)
{
	struct fs *fs = new_fs("btrfs");
	struct fs_attributes dir = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_mkdir(fs, "/d", &dir), 0);
	create_files(fs, "/d", 0, 3);
	uint64_t before = delayed_items_count(fs);
	assert_int_equal(fs_unlink(fs, "/d/file-0001"), 0);
	/* Its index and its inode's node go. */
	assert_int_equal(delayed_items_count(fs), before - 2);
	fixture_assert_fs_ok(fs, "after the unlink");
	/* A directory whose entries all wait is not empty. */
	assert_int_equal(fs_rmdir(fs, "/d"), -ENOTEMPTY);
	assert_int_equal(fs_unlink(fs, "/d/file-0000"), 0);
	assert_int_equal(fs_unlink(fs, "/d/file-0002"), 0);
	assert_int_equal(fs_rmdir(fs, "/d"), 0);
	assert_int_equal(fs_sync(fs), 0);
	fixture_assert_fs_ok(fs, "after the rmdir");
	fs_free(fs);
}

static void test_a_snapshot_sees_every_waiting_index(void **state)
{
	struct fs *fs = new_fs("btrfs");
	struct fs_attributes dir = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_mkdir(fs, "/d", &dir), 0);
	create_files(fs, "/d", 0, 10);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	const struct subvolume *snap = fs_subvolume(fs, FS_TOP_SUBVOLUME + 251);
	assert_non_null(snap);
	struct btree_key key = BTRFS_KEY(dir_inode(fs, "/d"), BTRFS_DIR_INDEX_KEY, 11);
	struct btree_path path;
	assert_true(btree_lookup(snap->tree, &key, &path));
	fixture_assert_fs_ok(fs, "after the snapshot");
	fs_free(fs);
}

static void test_a_design_without_batches_writes_indexes_at_once(void **state)
{
	struct fs *fs = new_fs("keyed");
	struct fs_attributes dir = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_mkdir(fs, "/d", &dir), 0);
	create_files(fs, "/d", 0, 5);
	assert_int_equal(delayed_items_count(fs), 0);
	fixture_assert_fs_ok(fs, "keyed");
	fs_free(fs);
}

/* A batch that does not fit beside the right half of a full leaf splits it
 * at the insertion point and gets a leaf of its own (split_leaf with
 * split = 2), where one insert after another would have split it in the
 * middle and refilled both halves. */
static void test_a_batch_splits_a_full_leaf_at_the_insertion_point(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	uint32_t capacity = btree_leaf_capacity(4096);
	uint32_t size = 75, per_leaf = capacity / (BTRFS_ITEM_HEADER_SIZE + size);
	for (uint32_t i = 0; i < per_leaf; i++) {
		struct btree_key key = fixture_key(1, i < per_leaf / 2 ? i : 1000 + i);
		btree_insert_item(&f->tree, &f->txn, &key, size, NULL);
	}
	assert_int_equal(f->tree.root->level, 0);
	enum { BATCH = 30 };
	struct btree_key keys[BATCH];
	uint32_t sizes[BATCH];
	for (uint32_t i = 0; i < BATCH; i++) {
		keys[i] = fixture_key(1, 500 + i);
		sizes[i] = size;
	}
	btree_insert_items(&f->tree, &f->txn, keys, sizes, NULL, BATCH);
	tree_fixture_assert_ok(f, "after the batch");
	const struct tree_block *root = f->tree.root;
	assert_int_equal(root->level, 1);
	assert_int_equal(root->nritems, 3);
	assert_int_equal(root->children[0].block->nritems, per_leaf / 2);
	assert_int_equal(root->children[1].block->nritems, BATCH);
	assert_int_equal(root->children[2].block->nritems, per_leaf - per_leaf / 2);
	assert_int_equal(tree_fixture_items(&f->tree), per_leaf + BATCH);
	tree_fixture_free(f);
}

/* A btrfs filesystem with /d and four files whose indexes still wait. */
static struct fs *four_files_waiting(void)
{
	struct fs *fs = new_fs("btrfs");
	struct fs_attributes dir = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_mkdir(fs, "/d", &dir), 0);
	create_files(fs, "/d", 0, 4);
	fixture_assert_fs_ok(fs, "before");
	return fs;
}

static void test_delayed_items_check_fails_when_the_count_is_off(void **state)
{
	struct fs *fs = four_files_waiting();
	delayed_items_miscount_for_test(fs, 1);
	fixture_assert_fs_corrupt(fs, "corrupt delayed items: 12, DI1");
	delayed_items_miscount_for_test(fs, -1);
	fs_free(fs);
}

static void test_delayed_items_check_fails_when_the_dirty_inodes_are_miscounted(void **state)
{
	struct fs *fs = four_files_waiting();
	uint64_t held = delayed_items_reserved_bytes(fs, 16384);
	assert_true(held > 0);
	delayed_items_miscount_dirty_for_test(fs, 1);
	assert_int_equal(delayed_items_reserved_bytes(fs, 16384), held + BTRFS_MAX_LEVEL * 16384u);
	fixture_assert_fs_corrupt(fs, "corrupt delayed items: 7 dirty inodes and 2 directories with indexes, DI1");
	delayed_items_miscount_dirty_for_test(fs, -1);
	fs_free(fs);
}

/* fs_check() names the node `inode` and the invariant; frees fs. */
static void assert_corrupt_node(struct fs *fs, uint64_t inode, const char *label)
{
	g_autofree char *want = g_strdup_printf("corrupt delayed node: %" G_GUINT64_FORMAT ", %s", inode, label);
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_delayed_items_check_fails_when_a_node_is_where_no_probe_finds_it(void **state)
{
	struct fs *fs = four_files_waiting();
	assert_corrupt_node(fs, delayed_items_misplace_for_test(fs), "DI2");
}

static void test_delayed_items_check_fails_when_the_memo_names_a_node_the_table_lacks(void **state)
{
	struct fs *fs = four_files_waiting();
	assert_corrupt_node(fs, delayed_items_break_memo_for_test(fs), "DI4");
}

static void test_delayed_items_check_fails_on_an_index_the_tree_already_has(void **state)
{
	struct fs *fs = new_fs("btrfs");
	struct fs_attributes dir = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_mkdir(fs, "/d", &dir), 0);
	create_files(fs, "/d", 0, 4);
	/* A bug that wrote the index at once and also left it waiting. */
	struct subvolume *sv = fs_subvolume(fs, FS_TOP_SUBVOLUME);
	uint64_t d = dir_inode(fs, "/d");
	struct btree_key key = BTRFS_KEY(d, BTRFS_DIR_INDEX_KEY, 5);
	btree_insert_item(sv->tree, &fs->txn, &key, BTRFS_DIR_ITEM_SIZE + 9, NULL);
	g_autofree char *want = g_strdup_printf("corrupt delayed node: %" G_GUINT64_FORMAT ", DI3", d);
	fixture_assert_fs_corrupt(fs, want);
	btree_delete_item(sv->tree, &fs->txn, &key);
	fs_free(fs);
}

/* A directory's waiting indexes outgrow their list's first room and go in in order; the next
 * directory's take the room it left (delayed_items.c index_list), and a name removed from the
 * middle of them takes its index out: the tree holds every other index, each at its offset. */
static void test_indexes_past_their_first_room_and_in_the_room_reused_go_in_in_order(void **state)
{
	struct fs *fs = new_fs("btrfs");
	struct fs_attributes dir = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	for (const char *const *name = (const char *const[]){ "/a", "/b", NULL }; *name; name++)
		assert_int_equal(fs_mkdir(fs, *name, &dir), 0);
	create_files(fs, "/a", 0, 70); /* past 16, 32 and 64 */
	fixture_assert_fs_ok(fs, "70 indexes waiting"); /* DI3: ascending, each with its DIR_ITEM */
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(indexes_in_tree(fs, dir_inode(fs, "/a")), 70);
	create_files(fs, "/b", 0, 40);
	assert_int_equal(fs_unlink(fs, "/b/file-0017"), 0);
	fixture_assert_fs_ok(fs, "one index taken out");
	assert_int_equal(fs_sync(fs), 0);
	uint64_t b = dir_inode(fs, "/b");
	assert_int_equal(indexes_in_tree(fs, b), 39);
	const struct subvolume *sv = fs_subvolume(fs, FS_TOP_SUBVOLUME);
	for (uint64_t index = 2; index < 42; index++) { /* file-i took index i + 2 */
		struct btree_key key = BTRFS_KEY(b, BTRFS_DIR_INDEX_KEY, index);
		struct btree_path path;
		assert_int_equal(btree_lookup(sv->tree, &key, &path), index != 19);
	}
	fixture_assert_fs_ok(fs, "after the commit");
	fs_free(fs);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_small_directory_s_indexes_wait_for_the_commit),
		cmocka_unit_test(test_the_worker_writes_a_directory_the_copy_has_left),
		cmocka_unit_test(test_a_name_removed_before_its_index_went_in_takes_the_index_out),
		cmocka_unit_test(test_a_snapshot_sees_every_waiting_index),
		cmocka_unit_test(test_a_design_without_batches_writes_indexes_at_once),
		cmocka_unit_test(test_a_batch_splits_a_full_leaf_at_the_insertion_point),
		cmocka_unit_test(test_indexes_past_their_first_room_and_in_the_room_reused_go_in_in_order),
		cmocka_unit_test(test_delayed_items_check_fails_when_the_count_is_off),
		cmocka_unit_test(test_delayed_items_check_fails_when_the_dirty_inodes_are_miscounted),
		cmocka_unit_test(test_delayed_items_check_fails_on_an_index_the_tree_already_has),
		cmocka_unit_test(test_delayed_items_check_fails_when_a_node_is_where_no_probe_finds_it),
		cmocka_unit_test(test_delayed_items_check_fails_when_the_memo_names_a_node_the_table_lacks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
