/*
 * tests/model/test_fs.c - the filesystem's contract (model/fs.h): a fresh
 * filesystem's size, each operation's errors, data accounting, the atime
 * rules, snapshots and ENOSPC.
 *
 * A failing call must change nothing: EXPECT_ERRNO checks the return value,
 * that metadata_used and the COW count did not move, and fs_check.
 * Real-btrfs numbers cited here are from docs/btrfs-ground-truth.md.
 */
#include "model_fixture.h"

#include <errno.h>
#include <string.h>

#include "atime_policy.h" /* fs_policy_parse, for the hybrid case */
#include "constants.h"
#include "derived_check.h" /* free_space_tree_check, after every read */
#include "fs_internal.h"
#include "model_error.h"
#include "name_forge.h"

#define NODESIZE 16384u

/* The clock at fs_new (fs_config_init's start time). */
static int64_t t0;

static int setup_fs(void **state)
{
	struct fs *fs = fixture_fs_new(NODESIZE, 4ull << 30);
	t0 = fs_clock(fs);
	*state = fs;
	return 0;
}

static int teardown_fs(void **state)
{
	fs_free(*state);
	return 0;
}

static void expect_errno(int got, int want, const char *call)
{
	if (got != want)
		fail_msg("%s returned %d (%s), want %d (%s)", call, got, g_strerror(-got), want, g_strerror(-want));
}

/* The call fails with `want` and leaves the filesystem as it was. */
#define EXPECT_ERRNO(fs, call, want)                                                     \
	do {                                                                             \
		struct fs_counters before_, after_;                                      \
		uint64_t used_ = fixture_metadata_used(fs);                              \
		fixture_counters(fs, &before_);                                          \
		expect_errno((call), (want), #call);                                     \
		fixture_counters(fs, &after_);                                           \
		assert_int_equal(fixture_metadata_used(fs), used_);                      \
		assert_int_equal(after_.blocks_cowed, before_.blocks_cowed);             \
		fixture_assert_fs_ok(fs, #call);                                         \
	} while (0)

#define EXPECT_OK(call) expect_errno((call), 0, #call)

static struct fs_attributes attrs(uint32_t mode)
{
	struct fs_attributes a;
	fs_attributes_init(&a);
	a.mode = mode;
	return a;
}

static void mkdir_p(struct fs *fs, const char *path)
{
	struct fs_attributes a = attrs(0755);
	EXPECT_OK(fs_mkdir(fs, path, &a));
}

static void create(struct fs *fs, const char *path, uint64_t size)
{
	struct fs_attributes a = attrs(0644);
	EXPECT_OK(fs_create(fs, path, size, &a));
}

/* A name of `length` bytes under `dir`. */
static char *long_name(const char *dir, size_t length)
{
	g_autofree char *name = g_strnfill(length, 'n');
	return g_strconcat(dir, "/", name, NULL);
}

/* --- a fresh filesystem ----------------------------------------------------- */

static void expect_fresh_blocks(uint32_t nodesize)
{
	struct fs *fs = fixture_fs_new(nodesize, 4ull << 30);
	assert_int_equal(fixture_metadata_used(fs), 8ull * nodesize);
	assert_int_equal(fixture_data_used(fs), 0);
	fixture_assert_fs_ok(fs, "fs_new");
	fs_free(fs);
}

static void test_fs_fresh_filesystem_is_131072_bytes_of_metadata_at_16k(void **state)
{
	struct fs *fs = fixture_fs_new(16384, 4ull << 30);
	assert_int_equal(fixture_metadata_used(fs), 131072);
	fs_free(fs);
	expect_fresh_blocks(16384);
}

static void test_fs_fresh_filesystem_is_8_blocks_at_4k(void **state)
{
	expect_fresh_blocks(4096);
}

static void test_fs_fresh_filesystem_is_8_blocks_at_64k(void **state)
{
	expect_fresh_blocks(65536);
}

static void test_fs_new_rejects_bad_nodesizes_with_an_error(void **state)
{
	const uint32_t bad[] = { 0, 2048, 12288, 131072, 4097 };
	for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
		struct fs_config config;
		fs_config_init(&config);
		config.nodesize = bad[i];
		g_autoptr(GError) error = NULL;
		struct fs *fs = fs_new(&config, &error);
		if (fs)
			fail_msg("fs_new accepted nodesize %u", bad[i]);
		assert_non_null(error);
		assert_true(g_error_matches(error, MODEL_ERROR, MODEL_ERROR_INVALID));
		assert_non_null(strstr(error->message, "nodesize"));
	}
}

static void test_fs_new_rejects_a_device_too_small_for_mkfs_chunks(void **state)
{
	/* mkfs.btrfs refuses devices under 114294784 bytes (measured); its chunks
	 * there take 1 MiB reserved + 2 x 8 MiB system + 2 x 32 MiB metadata +
	 * 8 MiB data = 89 MiB of raw space. */
	(void)state;
	struct fs_config config;
	fs_config_init(&config);
	config.device_size = BTRFS_MKFS_MIN_DEVICE - 1;
	g_autoptr(GError) error = NULL;
	assert_null(fs_new(&config, &error));
	assert_true(g_error_matches(error, MODEL_ERROR, MODEL_ERROR_NO_SPACE));
	g_clear_error(&error);
	config.device_size = 100 * MIB;
	assert_null(fs_new(&config, &error));
	assert_non_null(error);
	config.device_size = BTRFS_MKFS_MIN_DEVICE;
	struct fs *fs = fixture_fs_new_config(&config);
	fixture_assert_fs_ok(fs, "fs_new at the minimum size");
	fs_free(fs);
}

/* --- errors of the name operations -------------------------------------------- */

static void test_fs_mkdir_in_a_missing_parent_is_enoent(void **state)
{
	struct fs *fs = *state;
	struct fs_attributes a = attrs(0755);
	EXPECT_ERRNO(fs, fs_mkdir(fs, "/missing/d", &a), -ENOENT);
}

static void test_fs_mkdir_of_an_existing_name_is_eexist(void **state)
{
	struct fs *fs = *state;
	struct fs_attributes a = attrs(0755);
	mkdir_p(fs, "/d");
	create(fs, "/f", 10);
	EXPECT_ERRNO(fs, fs_mkdir(fs, "/d", &a), -EEXIST);
	EXPECT_ERRNO(fs, fs_mkdir(fs, "/f", &a), -EEXIST);
}

static void test_fs_create_of_an_existing_name_is_eexist(void **state)
{
	struct fs *fs = *state;
	struct fs_attributes a = attrs(0644);
	create(fs, "/f", 10);
	EXPECT_ERRNO(fs, fs_create(fs, "/f", 10, &a), -EEXIST);
}

static void test_fs_create_under_a_regular_file_is_enotdir(void **state)
{
	struct fs *fs = *state;
	struct fs_attributes a = attrs(0644);
	create(fs, "/f", 10);
	EXPECT_ERRNO(fs, fs_create(fs, "/f/g", 10, &a), -ENOTDIR);
	EXPECT_ERRNO(fs, fs_create(fs, "/f/g/h", 10, &a), -ENOTDIR);
}

static void test_fs_create_in_a_missing_parent_is_enoent(void **state)
{
	struct fs *fs = *state;
	struct fs_attributes a = attrs(0644);
	EXPECT_ERRNO(fs, fs_create(fs, "/nope/f", 10, &a), -ENOENT);
}

static void test_fs_names_of_255_bytes_work_and_256_is_enametoolong(void **state)
{
	struct fs *fs = *state;
	struct fs_attributes a = attrs(0644);
	g_autofree char *ok = long_name("", 255), *bad = long_name("", 256);
	create(fs, ok, 10);
	EXPECT_OK(fs_stat(fs, ok));
	EXPECT_ERRNO(fs, fs_create(fs, bad, 10, &a), -ENAMETOOLONG);
	EXPECT_ERRNO(fs, fs_mkdir(fs, bad, &a), -ENAMETOOLONG);
	EXPECT_ERRNO(fs, fs_symlink(fs, "/x", bad, &a), -ENAMETOOLONG);
	EXPECT_ERRNO(fs, fs_link(fs, ok, bad), -ENAMETOOLONG);
	EXPECT_ERRNO(fs, fs_rename(fs, ok, bad), -ENAMETOOLONG);
	/* A long component in the middle of a path, on lookup. */
	g_autofree char *through = g_strconcat(bad, "/f", NULL);
	EXPECT_ERRNO(fs, fs_stat(fs, through), -ENAMETOOLONG);
	EXPECT_ERRNO(fs, fs_read(fs, bad, NULL), -ENAMETOOLONG);
}

static void test_fs_stat_and_read_of_a_missing_path_are_enoent(void **state)
{
	struct fs *fs = *state;
	EXPECT_ERRNO(fs, fs_stat(fs, "/missing"), -ENOENT);
	EXPECT_ERRNO(fs, fs_read(fs, "/missing", NULL), -ENOENT);
	EXPECT_ERRNO(fs, fs_readdir(fs, "/missing", NULL), -ENOENT);
	EXPECT_ERRNO(fs, fs_settime(fs, "/missing", t0, t0), -ENOENT);
	EXPECT_ERRNO(fs, fs_write(fs, "/missing", 0, 10), -ENOENT);
	EXPECT_ERRNO(fs, fs_truncate(fs, "/missing", 0), -ENOENT);
}

static void test_fs_read_of_a_directory_is_eisdir_and_readdir_of_a_file_is_enotdir(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/d");
	create(fs, "/d/f", 10);
	EXPECT_ERRNO(fs, fs_read(fs, "/d", NULL), -EISDIR);
	EXPECT_ERRNO(fs, fs_readdir(fs, "/d/f", NULL), -ENOTDIR);
	EXPECT_OK(fs_readdir(fs, "/d", NULL));
	EXPECT_OK(fs_read(fs, "/d/f", NULL));
}

/* fs_read_path() of a path measured as its caller says (len, the last '/', the last name's hash,
 * as a replay's reader gives them): what fs_read() gives. */
static int read_measured(struct fs *fs, const char *path)
{
	size_t len = strlen(path), name_at = (size_t)(strrchr(path, '/') - path) + 1;
	struct fs_path measured = { .bytes = path, .len = len, .name_at = name_at,
				    .name_hash = fs_name_hash(path + name_at, len - name_at), .hashed = true };
	return fs_read_path(fs, &measured, NULL);
}

/* A measured path's hash is the caller's: the step out of the last directory looks the name up
 * by it and does not hash the name again (the replay's reader hashed it on its own thread). */
static void test_fs_read_path_looks_the_last_name_up_by_the_hash_given(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/d");
	create(fs, "/d/f", 10);
	create(fs, "/d/g", 10);
	for (int i = 0; i < 4; i++) /* the walk's memo in /d, and /d's table of names (DC1) */
		EXPECT_OK(read_measured(fs, i % 2 ? "/d/f" : "/d/g"));
	struct fs_path wrong = { .bytes = "/d/f", .len = 4, .name_at = 3, .name_hash = fs_name_hash("g", 1),
				 .hashed = true };
	EXPECT_ERRNO(fs, fs_read_path(fs, &wrong, NULL), -ENOENT);
	wrong.hashed = false; /* no hash given: the walk hashes the name itself */
	EXPECT_OK(fs_read_path(fs, &wrong, NULL));
}

static void test_fs_read_path_of_a_measured_path_answers_as_fs_read(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/d");
	mkdir_p(fs, "/d/e");
	create(fs, "/d/f", 10);
	create(fs, "/d/e/g", 10);
	static const char *const paths[] = { "/d/f", "/d/e/g", "/d/f", "/d/missing", "/d/e", "/d/f/x",
					     "/d/e/g", "/d/./f", "/d/e/../f", "/d/e/", "/d/f" };
	for (unsigned i = 0; i < G_N_ELEMENTS(paths); i++) {
		int want = fs_read(fs, paths[i], NULL);
		EXPECT_ERRNO(fs, read_measured(fs, paths[i]), want);
	}
}

/* NS7: the bytes a measured path's caller says it shares with the last measured path are not
 * compared again: the step out of the last directory trusts them (the replay's reader compared
 * them), and nothing else does (a walk of another path forgets what the memo shared). */
static void test_fs_read_path_trusts_the_bytes_said_shared_with_the_last_measured_path(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/d");
	mkdir_p(fs, "/e");
	create(fs, "/d/f", 10);
	EXPECT_OK(read_measured(fs, "/d/f")); /* the memo's deepest level: "/d/" */
	EXPECT_OK(read_measured(fs, "/d/f")); /* NS5's step: the memo's "/d/" is the path's */
	struct fs_path other = { .bytes = "/e/f", .len = 4, .name_at = 3 };
	other.shared = 3; /* not so: taken as "/d/f" */
	EXPECT_OK(fs_read_path(fs, &other, NULL));
	other.shared = 1; /* so: compared, walked */
	EXPECT_ERRNO(fs, fs_read_path(fs, &other, NULL), -ENOENT);
	EXPECT_OK(read_measured(fs, "/d/f"));
	EXPECT_OK(fs_readdir(fs, "/e", NULL)); /* another walk: the memo's "/e/" is no read's */
	struct fs_path again = { .bytes = "/d/f", .len = 4, .name_at = 3, .shared = 4 }; /* so: the last read's */
	EXPECT_OK(fs_read_path(fs, &again, NULL));
}

/* NS5: a listed directory is the walk's deepest level, so the reads of its names that follow (a
 * grep) each take one step. */
static void test_fs_readdir_leaves_the_walk_in_the_directory_it_listed(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/d");
	mkdir_p(fs, "/d/e");
	create(fs, "/d/e/g", 10);
	EXPECT_OK(fs_readdir(fs, "/d/e", NULL));
	const struct walk_memo *m = &fs->walk_memo;
	assert_true(m->depth > 0);
	assert_int_equal(m->levels[m->depth - 1].end, strlen("/d/e/"));
	assert_memory_equal(m->prefix, "/d/e/", strlen("/d/e/"));
	assert_true(m->levels[m->depth - 1].checked);
	fixture_assert_fs_ok(fs, "after the readdir");
	EXPECT_OK(read_measured(fs, "/d/e/g"));
	EXPECT_OK(fs_readdir(fs, "/d", NULL)); /* one step from "/d/e/"'s parent: a full walk */
	assert_int_equal(m->levels[m->depth - 1].end, strlen("/d/"));
	EXPECT_OK(fs_readdir(fs, "/d/e", NULL)); /* one step from "/d/" */
	assert_int_equal(m->levels[m->depth - 1].end, strlen("/d/e/"));
	fixture_assert_fs_ok(fs, "after the readdirs");
}

static void test_fs_write_or_truncate_of_a_directory_is_eisdir(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/d");
	EXPECT_ERRNO(fs, fs_write(fs, "/d", 0, 10), -EISDIR);
	EXPECT_ERRNO(fs, fs_truncate(fs, "/d", 0), -EISDIR);
}

static void test_fs_link_gives_a_second_name_and_to_an_existing_name_is_eexist(void **state)
{
	struct fs *fs = *state;
	create(fs, "/f", 10);
	create(fs, "/g", 10);
	EXPECT_OK(fs_link(fs, "/f", "/h"));
	EXPECT_OK(fs_stat(fs, "/h"));
	EXPECT_OK(fs_stat(fs, "/f"));
	EXPECT_ERRNO(fs, fs_link(fs, "/f", "/g"), -EEXIST);
	EXPECT_ERRNO(fs, fs_link(fs, "/missing", "/k"), -ENOENT);
	fixture_assert_fs_ok(fs, "link");
}

static void test_fs_link_of_a_directory_is_eperm(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/d");
	EXPECT_ERRNO(fs, fs_link(fs, "/d", "/e"), -EPERM);
}

static void test_fs_link_and_rename_across_subvolumes_are_exdev(void **state)
{
	struct fs *fs = *state;
	create(fs, "/f", 10);
	EXPECT_OK(fs_snapshot(fs, "/", "/snap", false));
	EXPECT_ERRNO(fs, fs_link(fs, "/f", "/snap/g"), -EXDEV);
	EXPECT_ERRNO(fs, fs_rename(fs, "/f", "/snap/g"), -EXDEV);
}

static void test_fs_symlink_onto_an_existing_name_is_eexist(void **state)
{
	struct fs *fs = *state;
	struct fs_attributes a = attrs(0777);
	create(fs, "/f", 10);
	EXPECT_OK(fs_symlink(fs, "/f", "/l", &a));
	EXPECT_OK(fs_stat(fs, "/l"));
	EXPECT_ERRNO(fs, fs_symlink(fs, "/f", "/l", &a), -EEXIST);
	EXPECT_ERRNO(fs, fs_symlink(fs, "/f", "/missing/l", &a), -ENOENT);
}

static void test_fs_unlink_removes_the_name_and_of_a_directory_is_eisdir(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/d");
	create(fs, "/d/f", 10);
	EXPECT_ERRNO(fs, fs_unlink(fs, "/d"), -EISDIR);
	EXPECT_OK(fs_unlink(fs, "/d/f"));
	EXPECT_ERRNO(fs, fs_stat(fs, "/d/f"), -ENOENT);
	EXPECT_ERRNO(fs, fs_unlink(fs, "/d/f"), -ENOENT);
	fixture_assert_fs_ok(fs, "unlink");
}

static void test_fs_rmdir_of_a_non_empty_directory_is_enotempty(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/d");
	create(fs, "/d/f", 10);
	EXPECT_ERRNO(fs, fs_rmdir(fs, "/d"), -ENOTEMPTY);
	EXPECT_OK(fs_unlink(fs, "/d/f"));
	EXPECT_OK(fs_rmdir(fs, "/d"));
	EXPECT_ERRNO(fs, fs_stat(fs, "/d"), -ENOENT);
	fixture_assert_fs_ok(fs, "rmdir");
}

static void test_fs_rmdir_of_a_file_is_enotdir_and_of_a_missing_name_enoent(void **state)
{
	struct fs *fs = *state;
	create(fs, "/f", 10);
	EXPECT_ERRNO(fs, fs_rmdir(fs, "/f"), -ENOTDIR);
	EXPECT_ERRNO(fs, fs_rmdir(fs, "/missing"), -ENOENT);
}

static void test_fs_rename_moves_a_name_and_of_a_missing_name_is_enoent(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/d");
	create(fs, "/f", 10);
	EXPECT_OK(fs_rename(fs, "/f", "/d/g"));
	EXPECT_ERRNO(fs, fs_stat(fs, "/f"), -ENOENT);
	EXPECT_OK(fs_stat(fs, "/d/g"));
	EXPECT_ERRNO(fs, fs_rename(fs, "/f", "/h"), -ENOENT);
	EXPECT_ERRNO(fs, fs_rename(fs, "/d/g", "/missing/h"), -ENOENT);
	fixture_assert_fs_ok(fs, "rename");
}

/* fs_namespace.c NS1: a walk that resumes from the last directory it
 * resolved sees every rename, rmdir and snapshot deletion since. */
static void test_fs_paths_resolve_anew_after_a_directory_is_renamed_removed_or_deleted(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/a");
	mkdir_p(fs, "/a/b");
	create(fs, "/a/b/f", 10);
	create(fs, "/a/b/g", 10);
	EXPECT_OK(fs_read(fs, "/a/b/f", NULL));
	EXPECT_OK(fs_rename(fs, "/a/b", "/a/c"));
	EXPECT_ERRNO(fs, fs_read(fs, "/a/b/g", NULL), -ENOENT);
	EXPECT_OK(fs_read(fs, "/a/c/g", NULL));
	EXPECT_OK(fs_unlink(fs, "/a/c/f"));
	EXPECT_OK(fs_unlink(fs, "/a/c/g"));
	EXPECT_OK(fs_rmdir(fs, "/a/c"));
	EXPECT_ERRNO(fs, fs_stat(fs, "/a/c/"), -ENOENT);
	EXPECT_ERRNO(fs, fs_mkdir(fs, "/a/c/h", NULL), -ENOENT);
	mkdir_p(fs, "/a/c");
	create(fs, "/a/c/h", 10);
	EXPECT_OK(fs_read(fs, "/a/c/h", NULL));
	EXPECT_OK(fs_snapshot(fs, "/", "/snap", false));
	EXPECT_OK(fs_read(fs, "/snap/a/c/h", NULL));
	EXPECT_OK(fs_delete_snapshot(fs, "/snap"));
	EXPECT_ERRNO(fs, fs_read(fs, "/snap/a/c/h", NULL), -ENOENT);
	fixture_assert_fs_ok(fs, "paths after renames and deletions");
}

/* btrfs_name_hash(): crc32c(~1, name), no final inversion, a bit at a time. */
static uint32_t crc32c_by_bits(const char *name, size_t length)
{
	uint32_t crc = ~1u;
	for (size_t i = 0; i < length; i++) {
		crc ^= (uint8_t)name[i];
		for (int k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
	}
	return crc;
}

/* fs_name_hash() for every length up to 3 words and a little more: whatever it takes a word,
 * four, two or one byte at a time, the hash is the byte-at-a-time crc32c. */
static void test_fs_name_hash_is_crc32c_at_every_length(void **state)
{
	static const char name[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	for (size_t length = 0; length + 1 < sizeof(name); length++)
		for (size_t start = 0; start < 3; start++)
			assert_int_equal(fs_name_hash(name + start, length - MIN(length, start)),
					 crc32c_by_bits(name + start, length - MIN(length, start)));
	assert_int_equal(fs_name_hash("n1441e896", 9), 0x34093da7u);
	(void)state;
}

/* Two names of one crc32c: the second's DIR_ITEM moves to the next hash value (fs_namespace.c).
 * A walk finds each by its name: the moved one past the other's entry at their hash, and past
 * the empty hash once the other is gone. */
static void test_fs_names_of_one_hash_resolve_each_to_its_own_inode(void **state)
{
	struct fs *fs = *state;
	assert_int_equal(fs_name_hash("n1441e896", 9), fs_name_hash("nfca1a963", 9)); /* 0x34093da7 */
	mkdir_p(fs, "/h");
	create(fs, "/h/n1441e896", 10);
	create(fs, "/h/nfca1a963", 20);
	struct inode_location first, moved, again;
	EXPECT_OK(fs_resolve(fs, "/h/n1441e896", &first));
	EXPECT_OK(fs_resolve(fs, "/h/nfca1a963", &moved));
	assert_int_not_equal(first.inode, moved.inode);
	EXPECT_OK(fs_read(fs, "/h/nfca1a963", NULL));
	EXPECT_OK(fs_unlink(fs, "/h/n1441e896"));
	EXPECT_ERRNO(fs, fs_read(fs, "/h/n1441e896", NULL), -ENOENT);
	EXPECT_OK(fs_resolve(fs, "/h/nfca1a963", &again));
	assert_int_equal(again.inode, moved.inode);
	EXPECT_OK(fs_read(fs, "/h/nfca1a963", NULL));
	fixture_assert_fs_ok(fs, "names of one hash");
}

/* The DIR_ITEM offset of the entry /h/NAME. */
static uint64_t hash_slot_of(struct fs *fs, const char *name)
{
	struct inode_location dir;
	EXPECT_OK(fs_resolve(fs, "/h", &dir));
	const struct btree_item *entry = fs_dir_lookup(dir.subvolume, dir.inode, name, (uint16_t)strlen(name));
	assert_non_null(entry);
	return btree_item_key(entry)->offset;
}

/* Colliding names take the first free hash value from their hash on (the
 * name check that found each absent saw which): a gap an unlink leaves is
 * taken again, and a rename's new name takes the slot its old one freed. */
static void test_fs_a_colliding_name_takes_the_first_free_slot_from_its_hash(void **state)
{
	struct fs *fs = *state;
	enum { NAMES = 6 };
	char names[NAMES][16], path[32], from[32];
	const uint32_t hash = fs_name_hash("anchor", 6);
	names_of_hash(names, NAMES, 'c', hash);
	mkdir_p(fs, "/h");
	for (int i = 0; i < 3; i++) {
		g_snprintf(path, sizeof(path), "/h/%s", names[i]);
		create(fs, path, 10);
		assert_int_equal(hash_slot_of(fs, names[i]), (uint64_t)hash + (uint64_t)i);
	}
	g_snprintf(path, sizeof(path), "/h/%s", names[1]);
	EXPECT_OK(fs_unlink(fs, path));
	g_snprintf(path, sizeof(path), "/h/%s", names[3]);
	create(fs, path, 10);
	assert_int_equal(hash_slot_of(fs, names[3]), (uint64_t)hash + 1);
	g_snprintf(path, sizeof(path), "/h/%s", names[4]);
	mkdir_p(fs, path);
	assert_int_equal(hash_slot_of(fs, names[4]), (uint64_t)hash + 3);
	g_snprintf(from, sizeof(from), "/h/%s", names[0]);
	g_snprintf(path, sizeof(path), "/h/%s", names[5]);
	EXPECT_OK(fs_rename(fs, from, path));
	assert_int_equal(hash_slot_of(fs, names[5]), (uint64_t)hash);
	for (int i = 2; i < NAMES; i++) {
		g_snprintf(path, sizeof(path), "/h/%s", names[i]);
		EXPECT_OK(fs_stat(fs, path));
	}
	fixture_assert_fs_ok(fs, "colliding names");
}

/* Colliding names sit at most FS_DIR_HASH_PROBE past their hash, where
 * lookups look: a new name whose window is full is refused with EOVERFLOW
 * by every way a name comes (create, mkdir, symlink, link, rename, snapshot),
 * before anything changes; a name leaving frees its slot again. */
static void test_fs_a_name_whose_hash_window_is_full_is_eoverflow(void **state)
{
	struct fs *fs = *state;
	struct fs_attributes a = attrs(0644);
	enum { TAKEN = FS_DIR_HASH_PROBE + 1, NAMES = TAKEN + 1 };
	char names[NAMES][16], path[32];
	const uint32_t hash = fs_name_hash("window", 6);
	names_of_hash(names, NAMES, 'w', hash);
	mkdir_p(fs, "/h");
	create(fs, "/elsewhere", 10);
	for (int i = 0; i < TAKEN; i++) {
		g_snprintf(path, sizeof(path), "/h/%s", names[i]);
		create(fs, path, 10);
		assert_int_equal(hash_slot_of(fs, names[i]), (uint64_t)hash + (uint64_t)i);
	}
	char full[32];
	g_snprintf(full, sizeof(full), "/h/%s", names[TAKEN]);
	EXPECT_ERRNO(fs, fs_create(fs, full, 10, &a), -EOVERFLOW);
	EXPECT_ERRNO(fs, fs_mkdir(fs, full, &a), -EOVERFLOW);
	EXPECT_ERRNO(fs, fs_symlink(fs, "/elsewhere", full, &a), -EOVERFLOW);
	EXPECT_ERRNO(fs, fs_link(fs, "/elsewhere", full), -EOVERFLOW);
	EXPECT_ERRNO(fs, fs_rename(fs, "/elsewhere", full), -EOVERFLOW);
	EXPECT_ERRNO(fs, fs_snapshot(fs, "/", full, false), -EOVERFLOW);
	EXPECT_ERRNO(fs, fs_stat(fs, full), -ENOENT);
	EXPECT_OK(fs_stat(fs, "/elsewhere"));
	/* Renaming over a name of the window replaces it in its own slot. */
	g_snprintf(path, sizeof(path), "/h/%s", names[4]);
	EXPECT_OK(fs_rename(fs, "/elsewhere", path));
	assert_int_equal(hash_slot_of(fs, names[4]), (uint64_t)hash + 4);
	g_snprintf(path, sizeof(path), "/h/%s", names[2]);
	EXPECT_OK(fs_unlink(fs, path));
	create(fs, full, 10);
	assert_int_equal(hash_slot_of(fs, names[TAKEN]), (uint64_t)hash + 2);
	fixture_assert_fs_ok(fs, "a full hash window");
}

static void test_fs_rename_over_an_existing_file_replaces_it(void **state)
{
	struct fs *fs = *state;
	create(fs, "/f", 100000);
	create(fs, "/g", 200000);
	EXPECT_OK(fs_sync(fs));
	EXPECT_OK(fs_rename(fs, "/f", "/g"));
	EXPECT_ERRNO(fs, fs_stat(fs, "/f"), -ENOENT);
	EXPECT_OK(fs_stat(fs, "/g"));
	EXPECT_OK(fs_sync(fs));
	/* The replaced file's data went with it: only /f's 100000 bytes (25 sectors). */
	assert_int_equal(fixture_data_used(fs), 25 * 4096);
	fixture_assert_fs_ok(fs, "rename over a file");
}

static void test_fs_rename_file_over_directory_is_eisdir_and_directory_over_file_enotdir(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/d");
	create(fs, "/f", 10);
	EXPECT_ERRNO(fs, fs_rename(fs, "/f", "/d"), -EISDIR);
	EXPECT_ERRNO(fs, fs_rename(fs, "/d", "/f"), -ENOTDIR);
}

static void test_fs_rename_of_a_directory_into_its_own_subdirectory_is_einval(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/a");
	mkdir_p(fs, "/a/b");
	/* rename(2): EINVAL when the new path is inside the old directory. */
	EXPECT_ERRNO(fs, fs_rename(fs, "/a", "/a/b/c"), -EINVAL);
	EXPECT_ERRNO(fs, fs_rename(fs, "/a", "/a/c"), -EINVAL);
	EXPECT_OK(fs_stat(fs, "/a/b"));
}

static void test_fs_rename_of_a_directory_over_an_empty_directory_replaces_it(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/a");
	create(fs, "/a/f", 10);
	mkdir_p(fs, "/b");
	mkdir_p(fs, "/c");
	create(fs, "/c/g", 10);
	/* rename(2): a directory may replace an empty directory; not a full one. */
	EXPECT_ERRNO(fs, fs_rename(fs, "/a", "/c"), -ENOTEMPTY);
	EXPECT_OK(fs_rename(fs, "/a", "/b"));
	EXPECT_ERRNO(fs, fs_stat(fs, "/a"), -ENOENT);
	EXPECT_OK(fs_stat(fs, "/b/f"));
	fixture_assert_fs_ok(fs, "rename over an empty directory");
}

static void test_fs_readonly_snapshot_refuses_every_change_with_erofs(void **state)
{
	struct fs *fs = *state;
	struct fs_attributes a = attrs(0644);
	mkdir_p(fs, "/d");
	mkdir_p(fs, "/e");
	create(fs, "/f", 5000);
	EXPECT_OK(fs_snapshot(fs, "/", "/ro", true));
	EXPECT_ERRNO(fs, fs_mkdir(fs, "/ro/new", &a), -EROFS);
	EXPECT_ERRNO(fs, fs_create(fs, "/ro/new", 10, &a), -EROFS);
	EXPECT_ERRNO(fs, fs_symlink(fs, "/f", "/ro/new", &a), -EROFS);
	EXPECT_ERRNO(fs, fs_link(fs, "/ro/f", "/ro/new"), -EROFS);
	EXPECT_ERRNO(fs, fs_unlink(fs, "/ro/f"), -EROFS);
	EXPECT_ERRNO(fs, fs_rmdir(fs, "/ro/e"), -EROFS);
	EXPECT_ERRNO(fs, fs_rename(fs, "/ro/f", "/ro/g"), -EROFS);
	EXPECT_ERRNO(fs, fs_truncate(fs, "/ro/f", 0), -EROFS);
	EXPECT_ERRNO(fs, fs_write(fs, "/ro/f", 0, 10), -EROFS);
	EXPECT_ERRNO(fs, fs_settime(fs, "/ro/f", t0, t0), -EROFS);
	EXPECT_ERRNO(fs, fs_snapshot(fs, "/", "/ro/snap", false), -EROFS);
	/* Reads work. */
	EXPECT_OK(fs_read(fs, "/ro/f", NULL));
	EXPECT_OK(fs_readdir(fs, "/ro/d", NULL));
}

static void test_fs_snapshot_of_a_plain_directory_is_einval_and_onto_a_name_eexist(void **state)
{
	struct fs *fs = *state;
	mkdir_p(fs, "/d");
	EXPECT_ERRNO(fs, fs_snapshot(fs, "/d", "/s", false), -EINVAL);
	EXPECT_ERRNO(fs, fs_snapshot(fs, "/", "/d", false), -EEXIST);
	EXPECT_ERRNO(fs, fs_delete_snapshot(fs, "/d"), -EINVAL);
	EXPECT_ERRNO(fs, fs_delete_snapshot(fs, "/missing"), -ENOENT);
}

static void test_fs_clock_never_moves_back(void **state)
{
	struct fs *fs = *state;
	EXPECT_OK(fs_set_clock(fs, t0 + SECOND_NS));
	EXPECT_ERRNO(fs, fs_set_clock(fs, t0), -EINVAL);
	assert_int_equal(fs_clock(fs), t0 + SECOND_NS);
}

/* --- data -------------------------------------------------------------------- */

static void test_fs_unlink_of_the_last_name_frees_the_data_after_sync(void **state)
{
	struct fs *fs = *state;
	create(fs, "/f", 1 * MIB);
	EXPECT_OK(fs_link(fs, "/f", "/g"));
	EXPECT_OK(fs_sync(fs));
	assert_int_equal(fixture_data_used(fs), 1 * MIB);
	EXPECT_OK(fs_unlink(fs, "/f"));
	EXPECT_OK(fs_sync(fs));
	assert_int_equal(fixture_data_used(fs), 1 * MIB);
	EXPECT_OK(fs_unlink(fs, "/g"));
	EXPECT_OK(fs_sync(fs));
	assert_int_equal(fixture_data_used(fs), 0);
	fixture_assert_fs_ok(fs, "unlinking the last name");
}

static void test_fs_file_of_2048_bytes_is_inline_and_adds_no_data(void **state)
{
	struct fs *fs = *state;
	create(fs, "/small", 2048);
	create(fs, "/tiny", 1);
	EXPECT_OK(fs_sync(fs));
	assert_int_equal(fixture_data_used(fs), 0);
	create(fs, "/over", 2049);
	EXPECT_OK(fs_sync(fs));
	assert_int_equal(fixture_data_used(fs), 4096);
}

static void test_fs_file_of_4097_bytes_adds_8192_bytes_of_data(void **state)
{
	struct fs *fs = *state;
	create(fs, "/f", 4097);
	EXPECT_OK(fs_sync(fs));
	assert_int_equal(fixture_data_used(fs), 8192);
	fixture_assert_fs_ok(fs, "a 4097-byte file");
}

static void test_fs_truncate_to_zero_frees_the_data_and_write_adds_it_back(void **state)
{
	struct fs *fs = *state;
	create(fs, "/f", 3 * MIB);
	EXPECT_OK(fs_sync(fs));
	assert_int_equal(fixture_data_used(fs), 3 * MIB);
	EXPECT_OK(fs_truncate(fs, "/f", 0));
	EXPECT_OK(fs_sync(fs));
	assert_int_equal(fixture_data_used(fs), 0);
	EXPECT_OK(fs_write(fs, "/f", 0, 2 * MIB));
	EXPECT_OK(fs_sync(fs));
	assert_int_equal(fixture_data_used(fs), 2 * MIB);
	fixture_assert_fs_ok(fs, "truncate and write");
}

/* Six 4 KiB pieces with holes between them are six extents; one write over
 * the whole file drops every one of them (a writeback keeps the first few
 * it reads on the stack and the rest in an array: both go). */
static void test_fs_write_over_a_file_of_six_extents_replaces_them_all(void **state)
{
	struct fs *fs = *state;
	create(fs, "/f", 0);
	for (uint64_t k = 0; k < 6; k++) {
		EXPECT_OK(fs_write(fs, "/f", k * 8192, 4096));
		EXPECT_OK(fs_sync(fs));
	}
	assert_int_equal(fixture_data_used(fs), 6 * 4096);
	EXPECT_OK(fs_write(fs, "/f", 0, 6 * 8192));
	EXPECT_OK(fs_sync(fs));
	assert_int_equal(fixture_data_used(fs), 6 * 8192);
	EXPECT_OK(fs_truncate(fs, "/f", 0));
	EXPECT_OK(fs_sync(fs));
	assert_int_equal(fixture_data_used(fs), 0);
	fixture_assert_fs_ok(fs, "a write over six extents");
}

/* --- atime ------------------------------------------------------------------- */

/* A file created now: atime == mtime == ctime == the clock. */
static void fresh_file(struct fs *fs, const char *path)
{
	create(fs, path, 100);
}

static bool read_updates(struct fs *fs, const char *path)
{
	bool updated = false;
	EXPECT_OK(fs_read(fs, path, &updated));
	return updated;
}

static bool readdir_updates(struct fs *fs, const char *path)
{
	bool updated = false;
	EXPECT_OK(fs_readdir(fs, path, &updated));
	return updated;
}

static void set_mode(struct fs *fs, enum atime_mode mode, bool nodiratime)
{
	struct atime_options options = { .mode = mode, .nodiratime = nodiratime };
	fs_set_atime_options(fs, &options);
}

static void test_atime_relatime_first_read_after_create_updates(void **state)
{
	struct fs *fs = *state;
	fresh_file(fs, "/f");
	EXPECT_OK(fs_set_clock(fs, t0 + SECOND_NS));
	assert_true(read_updates(fs, "/f"));
	struct fs_counters c;
	fixture_counters(fs, &c);
	assert_int_equal(c.atime_updates, 1);
}

static void test_atime_relatime_second_read_in_the_same_second_does_not_update(void **state)
{
	struct fs *fs = *state;
	fresh_file(fs, "/f");
	EXPECT_OK(fs_set_clock(fs, t0 + SECOND_NS));
	assert_true(read_updates(fs, "/f"));
	assert_false(read_updates(fs, "/f"));
	EXPECT_OK(fs_set_clock(fs, t0 + SECOND_NS + SECOND_NS / 2));
	assert_false(read_updates(fs, "/f"));
	struct fs_counters c;
	fixture_counters(fs, &c);
	assert_int_equal(c.atime_updates, 1);
	assert_int_equal(c.atime_skipped, 2);
}

static void test_atime_relatime_read_24_hours_later_updates(void **state)
{
	struct fs *fs = *state;
	fresh_file(fs, "/f");
	EXPECT_OK(fs_set_clock(fs, t0 + SECOND_NS));
	assert_true(read_updates(fs, "/f"));
	EXPECT_OK(fs_set_clock(fs, t0 + SECOND_NS + DAY_NS - 1));
	assert_false(read_updates(fs, "/f"));
	EXPECT_OK(fs_set_clock(fs, t0 + SECOND_NS + DAY_NS));
	assert_true(read_updates(fs, "/f"));
}

static void test_atime_relatime_read_after_a_write_updates(void **state)
{
	struct fs *fs = *state;
	fresh_file(fs, "/f");
	EXPECT_OK(fs_set_clock(fs, t0 + SECOND_NS));
	assert_true(read_updates(fs, "/f"));
	EXPECT_OK(fs_set_clock(fs, t0 + 2 * SECOND_NS));
	EXPECT_OK(fs_write(fs, "/f", 0, 10));
	EXPECT_OK(fs_set_clock(fs, t0 + 3 * SECOND_NS));
	assert_true(read_updates(fs, "/f"));
}

static void test_atime_strictatime_updates_every_read_at_a_new_time(void **state)
{
	struct fs *fs = *state;
	set_mode(fs, ATIME_STRICT, false);
	fresh_file(fs, "/f");
	for (int i = 1; i <= 5; i++) {
		EXPECT_OK(fs_set_clock(fs, t0 + i * SECOND_NS));
		assert_true(read_updates(fs, "/f"));
		assert_false(read_updates(fs, "/f")); /* same time: nothing to write */
	}
}

static void test_atime_noatime_never_updates(void **state)
{
	struct fs *fs = *state;
	set_mode(fs, ATIME_NOATIME, false);
	fresh_file(fs, "/f");
	mkdir_p(fs, "/d");
	for (int i = 1; i <= 3; i++) {
		EXPECT_OK(fs_set_clock(fs, t0 + i * 2 * DAY_NS));
		assert_false(read_updates(fs, "/f"));
		assert_false(readdir_updates(fs, "/d"));
	}
	struct fs_counters c;
	fixture_counters(fs, &c);
	assert_int_equal(c.atime_updates, 0);
}

static void test_atime_nodiratime_skips_readdir_but_not_read(void **state)
{
	struct fs *fs = *state;
	set_mode(fs, ATIME_RELATIME, true);
	fresh_file(fs, "/f");
	mkdir_p(fs, "/d");
	EXPECT_OK(fs_set_clock(fs, t0 + 2 * DAY_NS));
	assert_false(readdir_updates(fs, "/d"));
	assert_true(read_updates(fs, "/f"));
	/* Without nodiratime the same directory would update. */
	set_mode(fs, ATIME_RELATIME, false);
	assert_true(readdir_updates(fs, "/d"));
}

static void test_atime_readonly_snapshot_reads_never_update_and_are_counted(void **state)
{
	struct fs *fs = *state;
	set_mode(fs, ATIME_STRICT, false);
	fresh_file(fs, "/f");
	mkdir_p(fs, "/d");
	EXPECT_OK(fs_snapshot(fs, "/", "/ro", true));
	EXPECT_OK(fs_sync(fs));
	uint64_t used = fixture_metadata_used(fs);
	for (int i = 1; i <= 3; i++) {
		EXPECT_OK(fs_set_clock(fs, t0 + i * DAY_NS));
		assert_false(read_updates(fs, "/ro/f"));
		assert_false(readdir_updates(fs, "/ro/d"));
	}
	EXPECT_OK(fs_sync(fs));
	struct fs_counters c;
	fixture_counters(fs, &c);
	assert_int_equal(c.atime_readonly, 6);
	assert_int_equal(c.atime_updates, 0);
	assert_int_equal(fixture_metadata_used(fs), used);
}

/* n files of `size` bytes in /d, committed. */
static void populate(struct fs *fs, unsigned n, uint64_t size)
{
	mkdir_p(fs, "/d");
	for (unsigned i = 0; i < n; i++) {
		g_autofree char *path = g_strdup_printf("/d/file-%05u.h", i);
		create(fs, path, size);
	}
	EXPECT_OK(fs_sync(fs));
}

static void test_atime_update_after_a_snapshot_copies_only_one_leaf_path(void **state)
{
	struct fs *fs = *state;
	populate(fs, 2000, 600);
	uint64_t tree = fixture_metadata_used(fs);
	EXPECT_OK(fs_snapshot(fs, "/", "/snap", false));
	EXPECT_OK(fs_sync(fs));
	uint64_t before = fixture_metadata_used(fs);
	EXPECT_OK(fs_set_clock(fs, t0 + DAY_NS + SECOND_NS));
	assert_true(read_updates(fs, "/snap/d/file-01000.h"));
	EXPECT_OK(fs_sync(fs));
	uint64_t after = fixture_metadata_used(fs);
	print_message("# atime after snapshot: tree %" G_GUINT64_FORMAT " B, +%" G_GINT64_FORMAT
		      " B (%" G_GINT64_FORMAT " blocks)\n", tree, (int64_t)(after - before),
		      ((int64_t)after - (int64_t)before) / NODESIZE);
	assert_true(tree / NODESIZE > 50);
	/* The leaf, the node above it, and the extent tree's few changes. */
	assert_in_range(after - before, 1 * NODESIZE, 6 * NODESIZE);
	fixture_assert_fs_ok(fs, "one atime update in a snapshot");
}

static void test_fs_delete_snapshot_returns_metadata_to_its_size_before_the_snapshot(void **state)
{
	struct fs *fs = *state;
	populate(fs, 2000, 600);
	uint64_t before = fixture_metadata_used(fs);
	EXPECT_OK(fs_snapshot(fs, "/", "/snap", false));
	/* Unshare the whole snapshot: read every file a day later. */
	EXPECT_OK(fs_set_clock(fs, t0 + DAY_NS + SECOND_NS));
	for (unsigned i = 0; i < 2000; i++) {
		g_autofree char *path = g_strdup_printf("/snap/d/file-%05u.h", i);
		EXPECT_OK(fs_read(fs, path, NULL));
	}
	EXPECT_OK(fs_sync(fs));
	uint64_t unshared = fixture_metadata_used(fs);
	assert_true(unshared > before + before / 2);
	EXPECT_OK(fs_delete_snapshot(fs, "/snap"));
	EXPECT_OK(fs_sync(fs));
	uint64_t after = fixture_metadata_used(fs);
	print_message("# delete snapshot: before %" G_GUINT64_FORMAT ", unshared %" G_GUINT64_FORMAT
		      ", after delete %" G_GUINT64_FORMAT "\n", before, unshared, after);
	assert_in_range(after, before - 4 * NODESIZE, before + 4 * NODESIZE);
	EXPECT_ERRNO(fs, fs_stat(fs, "/snap"), -ENOENT);
	fixture_assert_fs_ok(fs, "deleting the snapshot");
}

/* --- keyed design: snapshot deletion -------------------------------------------- */

static struct fs *keyed_fs(void)
{
	struct fs_config config;
	fs_config_init(&config);
	config.nodesize = NODESIZE;
	config.device_size = 4ull << 30;
	config.design = fs_design_find("keyed");
	return fixture_fs_new_config(&config);
}

static enum fs_walk_answer count_fs_items(const struct fs_walk_block *block, void *opaque)
{
	if (block->category == TREE_CATEGORY_FS && block->level == 0)
		*(uint64_t *)opaque += block->nritems;
	return FS_WALK_CONTINUE;
}

/* Items in the subvolume trees: in the keyed design, every version. */
static uint64_t fs_tree_items(const struct fs *fs)
{
	uint64_t items = 0;
	fs_walk(fs, count_fs_items, &items);
	return items;
}

static void read_every_file(struct fs *fs, const char *root, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		g_autofree char *path = g_strdup_printf("%s/d/file-%05u.h", root, i);
		EXPECT_OK(fs_read(fs, path, NULL));
	}
}

static void test_fs_keyed_deleting_the_snapshot_of_an_emptied_tree_leaves_a_fresh_filesystem(void **state)
{
	(void)state;
	struct fs *fs = keyed_fs();
	t0 = fs_clock(fs);
	uint64_t fresh = fixture_metadata_used(fs);
	populate(fs, 500, 600);
	EXPECT_OK(fs_snapshot(fs, "/", "/snap", false));
	for (unsigned i = 0; i < 500; i++) {
		g_autofree char *path = g_strdup_printf("/d/file-%05u.h", i);
		EXPECT_OK(fs_unlink(fs, path));
	}
	EXPECT_OK(fs_rmdir(fs, "/d"));
	EXPECT_OK(fs_delete_snapshot(fs, "/snap"));
	EXPECT_OK(fs_sync(fs));
	/* The versions below the snapshot's id, hidden by the live tree's
	 * whiteouts, and the whiteouts themselves all go. */
	assert_int_equal(fixture_metadata_used(fs), fresh);
	fixture_assert_fs_ok(fs, "keyed: emptied tree, snapshot deleted");
	fs_free(fs);
}

static void test_fs_keyed_deleting_every_snapshot_drops_the_versions_only_they_saw(void **state)
{
	(void)state;
	struct fs *fs = keyed_fs();
	t0 = fs_clock(fs);
	populate(fs, 2000, 600);
	EXPECT_OK(fs_sync(fs));
	uint64_t before = fs_tree_items(fs);
	EXPECT_OK(fs_snapshot(fs, "/", "/snap1", false));
	EXPECT_OK(fs_snapshot(fs, "/", "/snap2", false));
	EXPECT_OK(fs_set_clock(fs, t0 + DAY_NS + SECOND_NS));
	read_every_file(fs, "", 2000);
	read_every_file(fs, "/snap1", 2000);
	EXPECT_OK(fs_sync(fs));
	uint64_t unshared = fs_tree_items(fs);
	EXPECT_OK(fs_delete_snapshot(fs, "/snap1"));
	EXPECT_OK(fs_delete_snapshot(fs, "/snap2"));
	EXPECT_OK(fs_sync(fs));
	uint64_t after = fs_tree_items(fs);
	print_message("# keyed items: before %" G_GUINT64_FORMAT ", after reads %" G_GUINT64_FORMAT
		      ", after deleting both snapshots %" G_GUINT64_FORMAT "\n", before, unshared, after);
	/* Two atime versions per file (and per directory read) were written,
	 * the live tree's and snap1's; deleting the snapshots leaves one
	 * version of each item, as before them. */
	assert_true(unshared >= before + 2 * 2000);
	assert_int_equal(after, before);
	fixture_assert_fs_ok(fs, "keyed: both snapshots deleted");
	fs_free(fs);
}

/* --- ENOSPC ------------------------------------------------------------------- */

/* Creates 16 MiB files on a 600 MiB device until one fails; returns how many
 * succeeded and the error of the first that failed. */
static unsigned fill_device(struct fs *fs, int *error)
{
	struct fs_attributes a = attrs(0644);
	for (unsigned i = 0; i < 64; i++) {
		g_autofree char *path = g_strdup_printf("/big-%02u", i);
		int ret = fs_create(fs, path, 16 * MIB, &a);
		if (!ret)
			ret = fs_sync(fs);
		if (ret) {
			*error = ret;
			return i;
		}
		fixture_assert_fs_ok(fs, path);
	}
	*error = 0;
	return 64;
}

static void expect_enospc_on_a_small_device(struct fs *fs)
{
	int error;
	unsigned created = fill_device(fs, &error);
	struct fs_report report;
	fs_report(fs, &report);
	print_message("# ENOSPC: %u files of 16 MiB before %d; data %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
		      ", enospc_events %" G_GUINT64_FORMAT "\n", created, error, report.space.data_used,
		      report.space.data_total, report.counters.enospc_events);
	assert_int_equal(error, -ENOSPC);
	assert_in_range(created, 1, 63);
	/* fs.h: a call that fails changes nothing, so the file is not there. */
	char failed[32];
	g_snprintf(failed, sizeof(failed), "/big-%02u", created);
	assert_int_equal(fs_stat(fs, failed), -ENOENT);
	assert_true(report.counters.enospc_events >= 1);
	assert_true(report.space.data_used <= report.space.data_total);
	assert_true(report.space.device_allocated <= 600 * MIB);
	fixture_assert_fs_ok(fs, "ENOSPC");
	/* Deleting a file makes room again. */
	EXPECT_OK(fs_unlink(fs, "/big-00"));
	EXPECT_OK(fs_sync(fs));
	struct fs_attributes a = attrs(0644);
	EXPECT_OK(fs_create(fs, "/after", 8 * MIB, &a));
	EXPECT_OK(fs_sync(fs));
	fixture_assert_fs_ok(fs, "creating after ENOSPC");
}

/* 600 MiB: mkfs's 537 MiB of chunks and one 60 MiB data chunk fit. */
static int setup_small_fs(void **state)
{
	*state = fixture_fs_new(NODESIZE, 600 * MIB);
	return 0;
}

static int setup_small_fs_immediate_writeback(void **state)
{
	struct fs_config config;
	fs_config_init(&config);
	config.device_size = 600 * MIB;
	config.delayed_writeback = false;
	*state = fixture_fs_new_config(&config);
	return 0;
}

static void test_fs_enospc_on_a_600_mib_device_creating_big_files_returns_enospc(void **state)
{
	expect_enospc_on_a_small_device(*state);
}

static void test_fs_enospc_on_a_600_mib_device_with_immediate_writeback_returns_enospc(void **state)
{
	expect_enospc_on_a_small_device(*state);
}

/*
 * A commit writes each changed chunk's free bytes into the free-space tree.
 * The lookup that finds the item copies the tree's leaf first, and on a full
 * device the copy can land in another chunk than the old leaf's: the chunk
 * being written loses (or gains) a block during its own write. The item must
 * say the bytes after that copy (FS2; the extent tree's block group items,
 * ET4, likewise). Found on a 64-snapshot hybrid run at 128 MiB; on main
 * before the fix this fails near read 976 281 of 1 300 000 (item 196 608
 * free bytes, the chunk 212 992).
 */
static void test_fs_a_commit_on_a_full_device_writes_free_bytes_after_moving_the_free_space_leaf(void **state)
{
	struct fs_config config;
	fs_config_init(&config);
	g_autoptr(GError) error = NULL;
	assert_true(fs_policy_parse("hybrid", &config, &error));
	config.atime.mode = ATIME_STRICT;
	config.device_size = 128 * MIB;
	struct fs *fs = fixture_fs_new_config(&config);
	const int64_t second = 1000000000ll;
	struct fs_attributes a = attrs(0644);
	a.atime = fs_clock(fs) - 422400 * second; /* older than the reads: every read writes an atime */
	a.mtime = fs_clock(fs) - 1422400 * second;
	EXPECT_OK(fs_mkdir(fs, "/d", &a));
	enum { FILES = 20000, SNAPSHOTS = 64 };
	char path[64];
	for (unsigned i = 0; i < FILES; i++) {
		g_snprintf(path, sizeof(path), "/d/f%05u", i);
		EXPECT_OK(fs_create(fs, path, 0, &a));
	}
	EXPECT_OK(fs_sync(fs));
	for (unsigned s = 1; s <= SNAPSHOTS; s++) {
		g_snprintf(path, sizeof(path), "/s%u", s);
		EXPECT_OK(fs_snapshot(fs, "/", path, false));
	}
	EXPECT_OK(fs_sync(fs));
	EXPECT_OK(fs_set_clock(fs, fs_clock(fs) + second));
	for (unsigned s = 0; s <= SNAPSHOTS; s++)
		for (unsigned i = 0; i < FILES; i++) {
			if (s)
				g_snprintf(path, sizeof(path), "/s%u/d/f%05u", s, i);
			else
				g_snprintf(path, sizeof(path), "/d/f%05u", i);
			EXPECT_OK(fs_read(fs, path, NULL)); /* kernel 6.18: a lost atime, never a failed read */
			if (!free_space_tree_check(fs, &error))
				fail_msg("after reading %s: %s", path, error->message);
		}
	struct fs_report report;
	fs_report(fs, &report);
	assert_true(report.counters.atime_lost > 0); /* the device did fill: the case this is about */
	fixture_assert_fs_ok(fs, "reads on a full device");
	fs_free(fs);
}

/* --- counters ------------------------------------------------------------------ */

static void test_fs_counters_count_allocated_and_cowed_blocks(void **state)
{
	struct fs *fs = *state;
	populate(fs, 500, 100);
	EXPECT_OK(fs_set_clock(fs, t0 + DAY_NS));
	EXPECT_OK(fs_read(fs, "/d/file-00010.h", NULL));
	EXPECT_OK(fs_sync(fs));
	struct fs_counters c;
	fixture_counters(fs, &c);
	assert_true(c.commits >= 2);
	assert_true(c.blocks_cowed >= 1);
	assert_true(c.blocks_written >= 1);
	/* "every new tree block, copies included" */
	assert_true(c.blocks_allocated >= c.blocks_cowed);
}

/* A flush submits its writes oldest first; an inline extent goes in as it is
 * submitted, a regular one `lag` submissions later (its ordered extent
 * completes behind the writeback), and every one by the flush's end. */
static void test_fs_writeback_inline_writes_overtake_the_regular_writes_before_them(void **state)
{
	(void)state;
	const bool is_inline[] = { false, false, true, false, true };
	unsigned order[5];
	fs_writeback_order(is_inline, 5, 2, order);
	/* 2 goes in at once; 0 and 1 two submissions after their own; 3 at the end. */
	const unsigned expected[] = { 2, 0, 1, 4, 3 };
	assert_memory_equal(order, expected, sizeof(expected));
}

static void test_fs_writeback_without_lag_is_submission_order(void **state)
{
	(void)state;
	const bool is_inline[] = { false, true, false, false, true, false };
	unsigned order[6];
	fs_writeback_order(is_inline, 6, 0, order);
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(order[i], i);
}

static void test_fs_writeback_a_flush_writes_every_write_once(void **state)
{
	(void)state;
	enum { N = 100 };
	bool is_inline[N];
	for (unsigned i = 0; i < N; i++)
		is_inline[i] = i % 3 == 0;
	unsigned order[N];
	fs_writeback_order(is_inline, N, 16, order);
	bool seen[N] = { false };
	for (unsigned k = 0; k < N; k++) {
		assert_true(order[k] < N);
		assert_false(seen[order[k]]);
		seen[order[k]] = true;
	}
	/* The regular writes keep their order among themselves. */
	int last_regular = -1;
	for (unsigned k = 0; k < N; k++) {
		if (is_inline[order[k]])
			continue;
		assert_true((int)order[k] > last_regular);
		last_regular = (int)order[k];
	}
}

#define FS_TEST(name) cmocka_unit_test_setup_teardown(name, setup_fs, teardown_fs)

/* The same files, overwrites, truncations, unlinks, commits and a snapshot,
 * with `fs->writeback_without_cursor` as given. */
static struct fs *writeback_workload(bool without_cursor)
{
	struct fs *fs = fixture_fs_new(16384, 4ull << 30);
	fs->writeback_without_cursor = without_cursor;
	struct fs_attributes attributes = fixture_attributes(0644, INT64_MIN, INT64_MIN);
	struct rng r;
	rng_seed(&r, 0x5eed0c0dull);
	assert_int_equal(fs_mkdir(fs, "/a", &attributes), 0);
	assert_int_equal(fs_mkdir(fs, "/b", &attributes), 0);
	for (unsigned i = 0; i < 3000; i++) {
		char path[64];
		g_snprintf(path, sizeof(path), "/%s/f%u", i % 3 ? "a" : "b", i);
		static const uint64_t sizes[] = { 0, 100, 1000, 2000, 3000, 5000, 70000, 300000 };
		assert_int_equal(fs_create(fs, path, sizes[rng_below(&r, G_N_ELEMENTS(sizes))], &attributes), 0);
		if (i > 10 && i % 7 == 0) { /* an earlier file changes */
			g_snprintf(path, sizeof(path), "/%s/f%u", (i - 10) % 3 ? "a" : "b", i - 10);
			if (i % 3)
				fs_write(fs, path, rng_below(&r, 8000), 1 + rng_below(&r, 9000));
			else if (i % 5)
				fs_truncate(fs, path, rng_below(&r, 4000));
			else
				assert_int_equal(fs_unlink(fs, path), 0);
		}
		if (i % 701 == 700)
			assert_int_equal(fs_sync(fs), 0);
		if (i == 1500)
			assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	}
	assert_int_equal(fs_sync(fs), 0);
	fixture_assert_fs_ok(fs, "after the writeback workload");
	return fs;
}

/*
 * flush_writeback() starts each write's inode lookup where the last write's
 * insert left its path (fs_data.c): with and without that, the same
 * workload leaves the same trees, block for block.
 */
static void test_fs_writeback_along_the_last_write_s_path_leaves_the_trees_lookups_from_the_root_leave(void **state)
{
	struct fs *along = writeback_workload(false), *plain = writeback_workload(true);
	for (unsigned i = 0; i < along->subvolumes->len; i++) {
		const struct subvolume *a = along->subvolumes->pdata[i], *p = plain->subvolumes->pdata[i];
		if (a->tree->root)
			fixture_assert_same_blocks(a->tree->root, p->tree->root, false);
	}
	fixture_assert_same_blocks(along->extent_tree.root, plain->extent_tree.root, false);
	fixture_assert_same_blocks(along->csum_tree.root, plain->csum_tree.root, false);
	fs_free(along);
	fs_free(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fs_writeback_along_the_last_write_s_path_leaves_the_trees_lookups_from_the_root_leave),
		cmocka_unit_test(test_fs_fresh_filesystem_is_131072_bytes_of_metadata_at_16k),
		cmocka_unit_test(test_fs_fresh_filesystem_is_8_blocks_at_4k),
		cmocka_unit_test(test_fs_fresh_filesystem_is_8_blocks_at_64k),
		cmocka_unit_test(test_fs_new_rejects_bad_nodesizes_with_an_error),
		cmocka_unit_test(test_fs_writeback_inline_writes_overtake_the_regular_writes_before_them),
		cmocka_unit_test(test_fs_writeback_without_lag_is_submission_order),
		cmocka_unit_test(test_fs_writeback_a_flush_writes_every_write_once),
		cmocka_unit_test(test_fs_new_rejects_a_device_too_small_for_mkfs_chunks),
		FS_TEST(test_fs_mkdir_in_a_missing_parent_is_enoent),
		FS_TEST(test_fs_mkdir_of_an_existing_name_is_eexist),
		FS_TEST(test_fs_create_of_an_existing_name_is_eexist),
		FS_TEST(test_fs_create_under_a_regular_file_is_enotdir),
		FS_TEST(test_fs_create_in_a_missing_parent_is_enoent),
		FS_TEST(test_fs_names_of_255_bytes_work_and_256_is_enametoolong),
		FS_TEST(test_fs_stat_and_read_of_a_missing_path_are_enoent),
		FS_TEST(test_fs_read_of_a_directory_is_eisdir_and_readdir_of_a_file_is_enotdir),
		FS_TEST(test_fs_read_path_of_a_measured_path_answers_as_fs_read),
		FS_TEST(test_fs_read_path_looks_the_last_name_up_by_the_hash_given),
		FS_TEST(test_fs_read_path_trusts_the_bytes_said_shared_with_the_last_measured_path),
		FS_TEST(test_fs_readdir_leaves_the_walk_in_the_directory_it_listed),
		FS_TEST(test_fs_write_or_truncate_of_a_directory_is_eisdir),
		FS_TEST(test_fs_link_gives_a_second_name_and_to_an_existing_name_is_eexist),
		FS_TEST(test_fs_link_of_a_directory_is_eperm),
		FS_TEST(test_fs_link_and_rename_across_subvolumes_are_exdev),
		FS_TEST(test_fs_symlink_onto_an_existing_name_is_eexist),
		FS_TEST(test_fs_unlink_removes_the_name_and_of_a_directory_is_eisdir),
		FS_TEST(test_fs_rmdir_of_a_non_empty_directory_is_enotempty),
		FS_TEST(test_fs_rmdir_of_a_file_is_enotdir_and_of_a_missing_name_enoent),
		FS_TEST(test_fs_rename_moves_a_name_and_of_a_missing_name_is_enoent),
		FS_TEST(test_fs_paths_resolve_anew_after_a_directory_is_renamed_removed_or_deleted),
		FS_TEST(test_fs_names_of_one_hash_resolve_each_to_its_own_inode),
		FS_TEST(test_fs_name_hash_is_crc32c_at_every_length),
		FS_TEST(test_fs_a_colliding_name_takes_the_first_free_slot_from_its_hash),
		FS_TEST(test_fs_a_name_whose_hash_window_is_full_is_eoverflow),
		FS_TEST(test_fs_rename_over_an_existing_file_replaces_it),
		FS_TEST(test_fs_rename_file_over_directory_is_eisdir_and_directory_over_file_enotdir),
		FS_TEST(test_fs_rename_of_a_directory_into_its_own_subdirectory_is_einval),
		FS_TEST(test_fs_rename_of_a_directory_over_an_empty_directory_replaces_it),
		FS_TEST(test_fs_readonly_snapshot_refuses_every_change_with_erofs),
		FS_TEST(test_fs_snapshot_of_a_plain_directory_is_einval_and_onto_a_name_eexist),
		FS_TEST(test_fs_clock_never_moves_back),
		FS_TEST(test_fs_unlink_of_the_last_name_frees_the_data_after_sync),
		FS_TEST(test_fs_file_of_2048_bytes_is_inline_and_adds_no_data),
		FS_TEST(test_fs_file_of_4097_bytes_adds_8192_bytes_of_data),
		FS_TEST(test_fs_truncate_to_zero_frees_the_data_and_write_adds_it_back),
		FS_TEST(test_fs_write_over_a_file_of_six_extents_replaces_them_all),
		FS_TEST(test_atime_relatime_first_read_after_create_updates),
		FS_TEST(test_atime_relatime_second_read_in_the_same_second_does_not_update),
		FS_TEST(test_atime_relatime_read_24_hours_later_updates),
		FS_TEST(test_atime_relatime_read_after_a_write_updates),
		FS_TEST(test_atime_strictatime_updates_every_read_at_a_new_time),
		FS_TEST(test_atime_noatime_never_updates),
		FS_TEST(test_atime_nodiratime_skips_readdir_but_not_read),
		FS_TEST(test_atime_readonly_snapshot_reads_never_update_and_are_counted),
		FS_TEST(test_atime_update_after_a_snapshot_copies_only_one_leaf_path),
		FS_TEST(test_fs_delete_snapshot_returns_metadata_to_its_size_before_the_snapshot),
		cmocka_unit_test(test_fs_keyed_deleting_the_snapshot_of_an_emptied_tree_leaves_a_fresh_filesystem),
		cmocka_unit_test(test_fs_keyed_deleting_every_snapshot_drops_the_versions_only_they_saw),
		cmocka_unit_test_setup_teardown(test_fs_enospc_on_a_600_mib_device_creating_big_files_returns_enospc,
						setup_small_fs, teardown_fs),
		cmocka_unit_test_setup_teardown(test_fs_enospc_on_a_600_mib_device_with_immediate_writeback_returns_enospc,
						setup_small_fs_immediate_writeback, teardown_fs),
		cmocka_unit_test(test_fs_a_commit_on_a_full_device_writes_free_bytes_after_moving_the_free_space_leaf),
		FS_TEST(test_fs_counters_count_allocated_and_cowed_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
