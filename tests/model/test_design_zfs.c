/*
 * tests/model/test_design_zfs.c - the ZFS-like design behind the seam
 * (model/design_zfs.c): snapshots are read-only (a writable one is refused,
 * or made a clone), an atime update after a snapshot keeps the old dnode
 * block for the snapshot, a snapshot's exclusive bytes are what destroying
 * it frees (zfs destroy -nv) and a set's estimate what destroying the set
 * frees, the report's split by tree and cause is the pool's, and the design's checker (DZ1, DZ2 and the
 * pool's Z1-Z5) fails when the pool and the items part ways.
 */
#include "model_fixture.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "fs_internal.h"
#include "zfs_pool.h"

#define FILES 60u

static struct fs *zfs_fs(bool clones, enum atime_mode mode)
{
	struct fs_config config;
	fs_config_init(&config);
	config.design = fs_design_find("zfs");
	assert_non_null(config.design);
	config.snapshot_clones = clones;
	config.atime.mode = mode;
	struct fs *fs = fixture_fs_new_config(&config);
	fixture_make_files(fs, FILES);
	assert_int_equal(fs_sync(fs), 0);
	fixture_assert_fs_ok(fs, "after the files");
	return fs;
}

static void read_all(struct fs *fs, const char *root)
{
	for (unsigned i = 0; i < FILES; i++) {
		g_autofree char *path = g_strdup_printf("%s/d/file-%03u", root, i);
		assert_int_equal(fs_read(fs, path, NULL), 0);
	}
}

static const struct subvolume_usage *usage_of(GArray *usage, const char *path)
{
	for (unsigned i = 0; i < usage->len; i++)
		if (!strcmp(g_array_index(usage, struct subvolume_usage, i).path, path))
			return &g_array_index(usage, struct subvolume_usage, i);
	fail_msg("no usage row for %s", path);
	return NULL;
}

/* Bytes of blocks of the datasets (data and metadata), the MOS left out. */
static uint64_t datasets_bytes(const struct fs *fs)
{
	struct zfs_pool_usage u;
	zfs_pool_usage(*(struct zfs_pool *const *)fs->design_state, &u);
	return u.metadata_used - u.mos_used + u.data_used;
}

static void test_a_writable_snapshot_is_refused_and_changes_nothing(void **state)
{
	struct fs_attributes attributes = fixture_attributes(0644, INT64_MIN, INT64_MIN);
	struct fs *fs = zfs_fs(false, ATIME_RELATIME);
	uint64_t before = fixture_metadata_used(fs);
	assert_int_equal(fs_snapshot(fs, "/", "/rw", false), -EOPNOTSUPP);
	assert_int_equal(fs_stat(fs, "/rw"), -ENOENT);
	assert_int_equal(fixture_metadata_used(fs), before);
	assert_int_equal(fs_snapshot(fs, "/", "/ro", true), 0);
	assert_int_equal(fs_create(fs, "/ro/new", 10, &attributes), -EROFS);
	fixture_assert_fs_ok(fs, "after the read-only snapshot");
	fs_free(fs);
}

static void test_with_clones_a_writable_snapshot_is_a_clone_of_its_own_origin(void **state)
{
	struct fs_attributes attributes = fixture_attributes(0644, INT64_MIN, INT64_MIN);
	struct fs *fs = zfs_fs(true, ATIME_RELATIME);
	assert_int_equal(fs_snapshot(fs, "/", "/rw", false), 0);
	assert_int_equal(fs_create(fs, "/rw/new", 100000, &attributes), 0);
	assert_int_equal(fs_sync(fs), 0);
	fixture_assert_fs_ok(fs, "after a write into the clone");
	/* The source cannot go while its clone's origin snapshot lives. */
	assert_int_equal(fs_delete_snapshot(fs, "/rw"), 0);
	assert_int_equal(fs_sync(fs), 0);
	fixture_assert_fs_ok(fs, "after destroying the clone and its origin");
	fs_free(fs);
}

static void test_an_atime_update_after_a_snapshot_keeps_the_old_dnode_blocks(void **state)
{
	struct fs *fs = zfs_fs(false, ATIME_STRICT);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 60 * SECOND_NS), 0);
	assert_int_equal(fs_snapshot(fs, "/", "/s1", true), 0);
	uint64_t before = fixture_metadata_used(fs);
	read_all(fs, "");
	assert_int_equal(fs_sync(fs), 0);
	uint64_t after = fixture_metadata_used(fs);
	/* 60 files and their dnodes: a few 16 KiB dnode blocks written anew,
	 * the old ones held by /s1, plus the indirect path above them. */
	assert_true(after >= before + 16384);
	/* Reading the read-only snapshot writes nothing. */
	read_all(fs, "/s1");
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(fixture_metadata_used(fs), after);
	fixture_assert_fs_ok(fs, "after the reads");
	fs_free(fs);
}

static void test_a_snapshots_exclusive_bytes_are_what_destroying_it_frees(void **state)
{
	struct fs *fs = zfs_fs(false, ATIME_STRICT);
	assert_int_equal(fs_snapshot(fs, "/", "/s1", true), 0);
	assert_int_equal(fs_unlink(fs, "/d/file-001"), 0);
	read_all(fs, "/s1");
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 60 * SECOND_NS), 0);
	assert_int_equal(fs_snapshot(fs, "/", "/s2", true), 0);
	assert_int_equal(fs_unlink(fs, "/d/file-004"), 0);
	assert_int_equal(fs_sync(fs), 0);
	g_autoptr(GArray) usage = fs_subvolume_usage(fs);
	uint64_t exclusive = usage_of(usage, "/s1")->exclusive_bytes;
	assert_true(exclusive > 0); /* file-001's blocks, born before s1, dead before s2 */
	uint64_t before = datasets_bytes(fs);
	assert_int_equal(fs_delete_snapshot(fs, "/s1"), 0);
	assert_int_equal(fs_sync(fs), 0);
	/* Outside the MOS (whose dataset and deadlist objects the destroy
	 * rewrites and frees), what went is exactly s1's exclusive bytes. */
	assert_int_equal(before - datasets_bytes(fs), exclusive);
	fixture_assert_fs_ok(fs, "after destroying s1");
	fs_subvolume_usage_free(g_steal_pointer(&usage));
	fs_free(fs);
}

/* zfs destroy -nv fs@s1,fs@s2: blocks both hold (a file deleted after
 * s2) are freed by the pair and by neither alone. */
static void test_destroying_two_snapshots_together_frees_what_the_estimate_says(void **state)
{
	struct fs *fs = zfs_fs(false, ATIME_STRICT);
	assert_int_equal(fs_snapshot(fs, "/", "/s1", true), 0);
	assert_int_equal(fs_unlink(fs, "/d/file-001"), 0);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 60 * SECOND_NS), 0);
	assert_int_equal(fs_snapshot(fs, "/", "/s2", true), 0);
	assert_int_equal(fs_unlink(fs, "/d/file-004"), 0);
	assert_int_equal(fs_sync(fs), 0);
	g_autoptr(GArray) usage = fs_subvolume_usage(fs);
	uint64_t alone = usage_of(usage, "/s1")->exclusive_bytes + usage_of(usage, "/s2")->exclusive_bytes;
	const char *const pair[] = { "/s1", "/s2" };
	struct fs_reclaim reclaim;
	assert_int_equal(fs_delete_estimate(fs, pair, 2, &reclaim), 0);
	assert_true(reclaim.data_bytes > 0);                       /* file-004's blocks */
	assert_true(reclaim.metadata_bytes + reclaim.data_bytes > alone);
	uint64_t before = datasets_bytes(fs);
	assert_int_equal(fs_delete_snapshot(fs, "/s1"), 0);
	assert_int_equal(fs_delete_snapshot(fs, "/s2"), 0);
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(before - datasets_bytes(fs), reclaim.metadata_bytes + reclaim.data_bytes);
	fixture_assert_fs_ok(fs, "after destroying both");
	fs_subvolume_usage_free(g_steal_pointer(&usage));
	fs_free(fs);
}

/* The report's columns under zfs are the pool's: by tree (datasets as fs
 * trees, the MOS as the root tree), by cause (each block charged to the
 * kind of op whose txg wrote it), blocks copied on write. */
static void test_the_reports_split_by_tree_and_cause_is_the_pools(void **state)
{
	struct fs *fs = zfs_fs(false, ATIME_STRICT);
	struct fs_report before, after;
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 60 * SECOND_NS), 0);
	fs_set_cause(fs, SPACE_CAUSE_SNAPSHOT);
	assert_int_equal(fs_snapshot(fs, "/", "/s1", true), 0);
	fs_report(fs, &before);
	assert_int_equal(before.space.cause_bytes[SPACE_CAUSE_ATIME], 0);
	assert_true(before.space.cause_bytes[SPACE_CAUSE_SNAPSHOT] > 0); /* its txg's MOS blocks, until rewritten */
	fs_set_cause(fs, SPACE_CAUSE_ATIME);
	read_all(fs, "");
	assert_int_equal(fs_sync(fs), 0);
	fs_report(fs, &after);
	/* The greps' txg rewrote the dnode blocks (the snapshot keeps the old
	 * ones, still charged to the writes that made them). */
	assert_true(after.space.cause_bytes[SPACE_CAUSE_ATIME] >= 16384);
	assert_int_equal(after.space.cause_bytes[SPACE_CAUSE_WRITE], before.space.cause_bytes[SPACE_CAUSE_WRITE]);
	uint64_t by_cause = 0, by_tree = 0;
	for (unsigned k = 0; k < SPACE_CAUSE_COUNT; k++)
		by_cause += after.space.cause_bytes[k];
	for (unsigned k = 0; k < TREE_CATEGORY_COUNT; k++)
		by_tree += after.space.tree_bytes[k];
	assert_int_equal(by_cause, after.space.metadata_used);
	assert_int_equal(by_tree, after.space.metadata_used);
	assert_true(after.space.tree_bytes[TREE_CATEGORY_ROOT] > 0);   /* the MOS */
	assert_int_equal(after.space.tree_bytes[TREE_CATEGORY_EXTENT], 0);
	assert_true(after.counters.blocks_cowed > before.counters.blocks_cowed);
	assert_true(after.counters.bytes_written > before.counters.bytes_written);
	fixture_assert_fs_ok(fs, "after the reads");
	fs_free(fs);
}

/* The snapshot-aware policy asks the design whether a write is private:
 * under zfs, whether the dnode block was born after the newest snapshot or
 * is written in this txg anyway. */
static void test_snapshot_aware_holds_back_what_a_snapshot_would_keep(void **state)
{
	struct fs_config config;
	fs_config_init(&config);
	config.design = fs_design_find("zfs");
	config.atime.mode = ATIME_STRICT;
	g_autoptr(GError) error = NULL;
	assert_true(fs_policy_parse("snapshot-aware", &config, &error));
	struct fs *fs = fixture_fs_new_config(&config);
	fixture_make_files(fs, FILES);
	assert_int_equal(fs_sync(fs), 0);
	/* No snapshot: every dnode block is the filesystem's alone. */
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 60 * SECOND_NS), 0);
	read_all(fs, "");
	assert_int_equal(fs_sync(fs), 0);
	struct fs_counters c;
	fs_counters(fs, &c);
	assert_int_equal(c.atime_stale, 0);
	assert_int_equal(c.atime_updates, FILES);
	/* After a snapshot every dnode block is the snapshot's too: held back,
	 * and the snapshot-time warning predicts nothing. */
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 60 * SECOND_NS), 0);
	assert_int_equal(fs_snapshot(fs, "/", "/s1", true), 0);
	fs_counters(fs, &c);
	assert_int_equal(c.unshare_estimate, 0);
	uint64_t before = fixture_metadata_used(fs);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 60 * SECOND_NS), 0);
	read_all(fs, "");
	assert_int_equal(fs_sync(fs), 0);
	fs_counters(fs, &c);
	assert_int_equal(c.atime_stale, FILES);
	assert_int_equal(fixture_metadata_used(fs), before);
	/* A file's change writes its dnode block anyway: the next reads of the
	 * files in that block are private again. */
	struct fs_attributes attributes = fixture_attributes(0644, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_create(fs, "/d/new", 10, &attributes), 0);
	assert_int_equal(fs_write(fs, "/d/file-000", 0, 10), 0);
	assert_int_equal(fs_read(fs, "/d/file-000", NULL), 0);
	fs_counters(fs, &c);
	assert_int_equal(c.atime_stale, FILES);
	fixture_assert_fs_ok(fs, "after the reads");
	fs_free(fs);
}

static void test_a_filesystem_with_snapshots_is_not_destroyed(void **state)
{
	struct fs *fs = zfs_fs(true, ATIME_RELATIME);
	assert_int_equal(fs_snapshot(fs, "/", "/rw", false), 0);
	assert_int_equal(fs_snapshot(fs, "/rw", "/rw-snap", true), 0);
	assert_int_equal(fs_delete_snapshot(fs, "/rw"), -EBUSY);
	const char *const rw[] = { "/rw" };
	struct fs_reclaim reclaim;
	assert_int_equal(fs_delete_estimate(fs, rw, 1, &reclaim), -EBUSY); /* nor estimated */
	assert_int_equal(fs_delete_snapshot(fs, "/rw-snap"), 0);
	assert_int_equal(fs_delete_snapshot(fs, "/rw"), 0);
	fixture_assert_fs_ok(fs, "after both");
	fs_free(fs);
}

static void test_check_fails_when_a_subvolume_and_its_dataset_disagree(void **state)
{
	struct fs *fs = zfs_fs(false, ATIME_RELATIME);
	assert_int_equal(fs_snapshot(fs, "/", "/s1", true), 0);
	struct subvolume *top = fs_subvolume(fs, FS_TOP_SUBVOLUME);
	top->readonly = true; /* a filesystem dataset is no snapshot */
	fixture_assert_fs_corrupt(fs, "DZ1: subvolume 5 (read-only) has the wrong dataset");
	top->readonly = false;
	fixture_assert_fs_ok(fs, "mended");
	fs_free(fs);
}

/* The design's state begins with its pool (design_zfs.c struct zfs_design):
 * a bug that frees an object behind the design's back. */
static void test_check_fails_when_the_pool_loses_an_object_the_items_keep(void **state)
{
	struct fs *fs = zfs_fs(false, ATIME_STRICT);
	struct zfs_pool *pool = *(struct zfs_pool **)fs->design_state;
	struct inode_location loc;
	assert_int_equal(fs_resolve(fs, "/d/file-002", &loc), 0);
	assert_non_null(fs_inode_item(loc.subvolume, loc.inode));
	assert_int_equal(zfs_object_free(pool, 1, loc.inode), 0);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 60 * SECOND_NS), 0);
	assert_int_equal(fs_read(fs, "/d/file-002", NULL), 0); /* its atime: a dnode the pool lost */
	fixture_assert_fs_corrupt(fs, "DZ2 touch of object");
	fs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_writable_snapshot_is_refused_and_changes_nothing),
		cmocka_unit_test(test_with_clones_a_writable_snapshot_is_a_clone_of_its_own_origin),
		cmocka_unit_test(test_an_atime_update_after_a_snapshot_keeps_the_old_dnode_blocks),
		cmocka_unit_test(test_a_snapshots_exclusive_bytes_are_what_destroying_it_frees),
		cmocka_unit_test(test_destroying_two_snapshots_together_frees_what_the_estimate_says),
		cmocka_unit_test(test_the_reports_split_by_tree_and_cause_is_the_pools),
		cmocka_unit_test(test_snapshot_aware_holds_back_what_a_snapshot_would_keep),
		cmocka_unit_test(test_a_filesystem_with_snapshots_is_not_destroyed),
		cmocka_unit_test(test_check_fails_when_a_subvolume_and_its_dataset_disagree),
		cmocka_unit_test(test_check_fails_when_the_pool_loses_an_object_the_items_keep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
