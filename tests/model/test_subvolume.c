/*
 * tests/model/test_subvolume.c - subvolume deletion as btrfs does it
 * (issue 21.3), in every design of the registry:
 *   - deleting a subvolume that holds another is ENOTEMPTY
 *     (may_destroy_subvol), and changes nothing;
 *   - rmdir of an empty subvolume deletes it (Linux 4.18), of a full one is
 *     ENOTEMPTY;
 *   - the placeholder a snapshot shows where a nested subvolume was is no
 *     link to it: an empty directory with nothing on disk, in which nothing
 *     can be made (EPERM, EACCES for a create, ENOTTY for a snapshot), that
 *     is no subvolume (EINVAL), cannot be renamed (ENOTEMPTY), and whose
 *     use writes no metadata; rmdir removes the placeholder only, and the
 *     nested subvolume stays;
 *   - a subvolume can be renamed within its parent subvolume, into another
 *     directory of it too, and over an empty directory; into another
 *     subvolume it is EXDEV, and nothing replaces a subvolume (ENOTEMPTY).
 * fs_check runs after every step.
 */
#include "model_fixture.h"

#include <errno.h>

static struct fs_attributes dir_attributes(void)
{
	struct fs_attributes a;
	fs_attributes_init(&a);
	a.mode = 0755;
	return a;
}

/* Each test runs once per design. */
static void for_each_design(void (*body)(struct fs *fs))
{
	for (unsigned i = 0; fs_design_at(i); i++) {
		struct fs_config config;
		fs_config_init(&config);
		config.device_size = 4ull << 30;
		config.design = fs_design_at(i);
		config.snapshot_clones = true; /* zfs: writable snapshots are clones */
		struct fs *fs = fixture_fs_new_config(&config);
		body(fs);
		fixture_assert_fs_ok(fs, fs_design_name(config.design) ? fs_design_name(config.design) : "default");
		fs_free(fs);
	}
}

/* /a a subvolume (a snapshot of /), /a/b a subvolume inside it. */
static void make_nested(struct fs *fs)
{
	struct fs_attributes d = dir_attributes();
	assert_int_equal(fs_mkdir(fs, "/d", &d), 0);
	assert_int_equal(fs_snapshot(fs, "/", "/a", false), 0);
	assert_int_equal(fs_snapshot(fs, "/", "/a/b", false), 0);
	fixture_assert_fs_ok(fs, "nested subvolumes made");
}

static void delete_outer_first(struct fs *fs)
{
	make_nested(fs);
	uint64_t used = fixture_metadata_used(fs);
	assert_int_equal(fs_delete_snapshot(fs, "/a"), -ENOTEMPTY);
	assert_int_equal(fixture_metadata_used(fs), used);
	assert_int_equal(fs_stat(fs, "/a/b/d"), 0);
	fixture_assert_fs_ok(fs, "after the refused delete");
	assert_int_equal(fs_delete_snapshot(fs, "/a/b"), 0);
	assert_int_equal(fs_delete_snapshot(fs, "/a"), 0);
	assert_int_equal(fs_stat(fs, "/a"), -ENOENT);
}

static void test_subvolume_delete_of_one_holding_another_is_enotempty(void **state)
{
	for_each_design(delete_outer_first);
}

static void rmdir_subvolumes(struct fs *fs)
{
	struct fs_attributes d = dir_attributes();
	assert_int_equal(fs_snapshot(fs, "/", "/empty", false), 0);
	assert_int_equal(fs_mkdir(fs, "/x", &d), 0);
	assert_int_equal(fs_snapshot(fs, "/", "/full", false), 0);
	fixture_assert_fs_ok(fs, "subvolumes made");
	assert_int_equal(fs_rmdir(fs, "/full"), -ENOTEMPTY);
	assert_int_equal(fs_stat(fs, "/full/x"), 0);
	assert_int_equal(fs_unlink(fs, "/full/empty"), -EISDIR); /* a subvolume is no file */
	assert_int_equal(fs_rmdir(fs, "/full/x"), 0);
	assert_int_equal(fs_rmdir(fs, "/full/empty"), 0);        /* its placeholder for /empty */
	assert_int_equal(fs_rmdir(fs, "/full"), 0);
	assert_int_equal(fs_stat(fs, "/full"), -ENOENT);
	assert_int_equal(fs_rmdir(fs, "/empty"), 0);             /* taken before /x: empty */
	assert_int_equal(fs_stat(fs, "/empty"), -ENOENT);
	assert_int_equal(fs_stat(fs, "/x"), 0);
}

static void test_subvolume_rmdir_of_an_empty_subvolume_deletes_it(void **state)
{
	for_each_design(rmdir_subvolumes);
}

static void placeholder(struct fs *fs)
{
	make_nested(fs);
	assert_int_equal(fs_snapshot(fs, "/a", "/c", false), 0);
	fixture_assert_fs_ok(fs, "snapshot of /a");
	assert_int_equal(fs_delete_snapshot(fs, "/c/b"), -EINVAL);
	assert_int_equal(fs_stat(fs, "/a/b/d"), 0);
	/* An empty directory with nothing on disk, measured on btrfs. */
	struct fs_attributes d = dir_attributes();
	uint64_t used = fixture_metadata_used(fs);
	assert_int_equal(fs_stat(fs, "/c/b"), 0);
	assert_int_equal(fs_readdir(fs, "/c/b", NULL), 0);
	assert_int_equal(fs_stat(fs, "/c/b/d"), -ENOENT);
	assert_int_equal(fs_mkdir(fs, "/c/b/n", &d), -EPERM);
	assert_int_equal(fs_create(fs, "/c/b/n", 0, &d), -EACCES);
	assert_int_equal(fs_snapshot(fs, "/a", "/c/b/s", false), -ENOTTY);
	assert_int_equal(fs_snapshot(fs, "/c/b", "/s", false), -EINVAL); /* not a subvolume */
	assert_int_equal(fs_settime(fs, "/c/b", 1000000000ll * 1000000000, INT64_MIN), 0);
	assert_int_equal(fs_read(fs, "/c/b", NULL), -EISDIR);
	assert_int_equal(fs_rename(fs, "/c/b", "/c/b2"), -ENOTEMPTY);
	fixture_assert_fs_ok(fs, "the placeholder used");
	assert_int_equal(fixture_metadata_used(fs), used);
	assert_int_equal(fs_stat(fs, "/a/b/d"), 0);
	assert_int_equal(fs_rmdir(fs, "/c/b"), 0);
	assert_int_equal(fs_stat(fs, "/c/b"), -ENOENT);
	assert_int_equal(fs_stat(fs, "/a/b/d"), 0);
	fixture_assert_fs_ok(fs, "placeholder removed");
	assert_int_equal(fs_delete_snapshot(fs, "/c"), 0);
	assert_int_equal(fs_delete_snapshot(fs, "/a/b"), 0);
	assert_int_equal(fs_delete_snapshot(fs, "/a"), 0);
}

static void test_subvolume_placeholder_in_a_snapshot_is_no_link_to_the_nested_one(void **state)
{
	for_each_design(placeholder);
}

static void rename_subvolume(struct fs *fs)
{
	struct fs_attributes d = dir_attributes();
	make_nested(fs);
	assert_int_equal(fs_mkdir(fs, "/x", &d), 0);
	assert_int_equal(fs_rename(fs, "/a", "/a2"), 0);
	assert_int_equal(fs_stat(fs, "/a"), -ENOENT);
	assert_int_equal(fs_stat(fs, "/a2/b/d"), 0);
	fixture_assert_fs_ok(fs, "renamed in place");
	assert_int_equal(fs_rename(fs, "/a2", "/x/a3"), 0);
	assert_int_equal(fs_stat(fs, "/x/a3/d"), 0);
	assert_int_equal(fs_rename(fs, "/x/a3/b", "/x/a3/renamed-b"), 0); /* within /a3, b's parent */
	assert_int_equal(fs_rename(fs, "/x/a3/renamed-b", "/b-out"), -EXDEV); /* into another subvolume */
	assert_int_equal(fs_mkdir(fs, "/x/a3/empty", &d), 0);
	assert_int_equal(fs_rename(fs, "/x/a3/empty", "/x/a3/renamed-b"), -ENOTEMPTY); /* over a subvolume */
	assert_int_equal(fs_rename(fs, "/x/a3/renamed-b", "/x/a3/empty"), 0); /* a subvolume over an empty dir */
	assert_int_equal(fs_stat(fs, "/x/a3/empty/d"), 0);
	assert_int_equal(fs_rename(fs, "/x/a3/empty", "/x/a3/renamed-b"), 0);
	fixture_assert_fs_ok(fs, "renamed into a directory");
	assert_int_equal(fs_delete_snapshot(fs, "/x/a3"), -ENOTEMPTY);
	assert_int_equal(fs_delete_snapshot(fs, "/x/a3/renamed-b"), 0);
	assert_int_equal(fs_delete_snapshot(fs, "/x/a3"), 0);
	assert_int_equal(fs_stat(fs, "/x"), 0);
}

static void test_subvolume_rename_within_its_parent_subvolume_is_allowed(void **state)
{
	for_each_design(rename_subvolume);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_subvolume_delete_of_one_holding_another_is_enotempty),
		cmocka_unit_test(test_subvolume_rmdir_of_an_empty_subvolume_deletes_it),
		cmocka_unit_test(test_subvolume_placeholder_in_a_snapshot_is_no_link_to_the_nested_one),
		cmocka_unit_test(test_subvolume_rename_within_its_parent_subvolume_is_allowed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
