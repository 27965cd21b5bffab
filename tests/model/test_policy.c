/*
 * tests/model/test_policy.c - the atime policies' space rules (issue 4):
 * the free-space measure the threshold policy tests, the snapshot-time
 * warning under each policy, and lazytime (as btrfs does it, and as the VFS
 * defines it: when a kept atime reaches the tree).
 *
 * Each filesystem case builds a small tree (directories of files, the
 * relatime rule wanting every first access a second later: atime <= mtime
 * at creation),
 * then asks fs_unshare_estimate() what one read of everything would unshare
 * after a snapshot.
 */
#include <errno.h>
#include <stdio.h>

#include "model_fixture.h" /* MIB */

#include <string.h>

#include "atime_policy.h" /* the side table's storage, for the hybrid cases */
#include "constants.h"
#include "model_error.h"


/* --- space_report_metadata_free ---------------------------------------------- */

static void test_metadata_free_counts_chunk_room_less_global_reserve(void **state)
{
	(void)state;
	struct space_report r = { 0 };
	r.metadata_total = 256 * MIB;
	r.metadata_used = 200 * MIB;
	r.global_reserve = 6 * MIB;
	r.device_allocated = 1024 * MIB; /* nothing unallocated */
	assert_int_equal(space_report_metadata_free(&r, 1024 * MIB, true), 50 * MIB);
	r.metadata_used = 252 * MIB; /* the reserve is not room */
	assert_int_equal(space_report_metadata_free(&r, 1024 * MIB, true), 0);
}

static void test_metadata_free_counts_all_unallocated_space_as_chunks_shrink_to_fit(void **state)
{
	(void)state;
	struct space_report r = { 0 };
	r.metadata_total = 256 * MIB;
	r.metadata_used = 246 * MIB;
	r.global_reserve = 6 * MIB;
	r.device_allocated = 600 * MIB;
	/* 424 MiB unallocated: the kernel shrinks the last chunk to fit, so all
	 * of it counts, halved for DUP. */
	assert_int_equal(space_report_metadata_free(&r, 1024 * MIB, true), 4 * MIB + 212 * MIB);
	assert_int_equal(space_report_metadata_free(&r, 1024 * MIB, false), 4 * MIB + 424 * MIB);
	assert_int_equal(space_report_metadata_free(&r, 2048 * MIB, true), 4 * MIB + 724 * MIB);
}

/* --- the snapshot-time warning ----------------------------------------------- */

/* A filesystem of `config` with 40 directories of 30 files each, synced, the
 * clock a second on; populated_fs() the same from a policy and a mode. */
static struct fs *populated_fs_config(const struct fs_config *config)
{
	struct fs *fs = fixture_fs_new_config(config);
	struct fs_attributes a;
	fs_attributes_init(&a);
	char path[64];
	for (unsigned d = 0; d < 40; d++) {
		snprintf(path, sizeof(path), "/d%u", d);
		assert_int_equal(fs_mkdir(fs, path, &a), 0);
		for (unsigned f = 0; f < 30; f++) {
			snprintf(path, sizeof(path), "/d%u/file-with-a-longer-name-%u", d, f);
			assert_int_equal(fs_create(fs, path, 100, &a), 0);
		}
	}
	assert_int_equal(fs_sync(fs), 0);
	/* A second later, so that an access writes a new time (touch_atime). */
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 1000000000ll), 0);
	return fs;
}

/* The policy a --policy word names, in config (fails the test if none). */
static void use_policy(struct fs_config *config, const char *word)
{
	g_autoptr(GError) error = NULL;
	if (!fs_policy_parse(word, config, &error))
		fail_msg("fs_policy_parse(%s): %s", word, error->message);
}

static struct fs *populated_fs(const char *policy, enum atime_mode mode)
{
	struct fs_config config;
	fs_config_init(&config);
	use_policy(&config, policy);
	config.atime.mode = mode;
	return populated_fs_config(&config);
}

static uint64_t estimate(const char *policy, enum atime_mode mode)
{
	struct fs *fs = populated_fs(policy, mode);
	uint64_t bytes = UINT64_MAX;
	assert_int_equal(fs_unshare_estimate(fs, "/", &bytes), 0);
	fs_free(fs);
	return bytes;
}

static void test_unshare_estimate_follows_the_policy_in_force(void **state)
{
	(void)state;
	uint64_t inline_bytes = estimate("inline", ATIME_RELATIME);
	uint64_t side = estimate("side-table", ATIME_RELATIME);
	print_message("# estimate: inline %llu, side-table %llu bytes\n", (unsigned long long)inline_bytes,
		      (unsigned long long)side);
	assert_true(inline_bytes > 16384);
	assert_true(side > 0 && side < inline_bytes);
	assert_int_equal(estimate("snapshot-aware", ATIME_RELATIME), 0);
	assert_int_equal(estimate("inline", ATIME_NOATIME), 0);
	/* threshold: as inline while the device has room (4 GiB here) */
	assert_int_equal(estimate("threshold:5%", ATIME_RELATIME), inline_bytes);
}

static void test_snapshot_aware_warning_is_zero_in_the_counters(void **state)
{
	(void)state;
	struct fs *fs = populated_fs("snapshot-aware", ATIME_STRICT);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	struct fs_report report;
	fs_report(fs, &report);
	assert_int_equal(report.counters.unshare_estimate, 0);
	fs_free(fs);
}

/* --- lazytime: as btrfs does it, and as the VFS defines it (FS_LAZYTIME_*) ----- */

#define HOUR_NS (3600ll * SECOND_NS)
#define LAZY_FILES (40u * 30u)

/* populated_fs under relatime[,lazytime] with the lazytime model `model`,
 * then a snapshot of / (so that a read of / unshares leaves), synced, and
 * the clock a second on. */
static struct fs *snapshotted_fs(enum fs_lazytime model, bool lazytime, const char *policy)
{
	struct fs_config config;
	fs_config_init(&config);
	use_policy(&config, policy);
	config.atime.lazytime = lazytime;
	config.lazytime = model;
	struct fs *fs = populated_fs_config(&config);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + SECOND_NS), 0);
	return fs;
}

/* Reads every file of / (not the snapshot), each once. */
static void read_all_files(struct fs *fs)
{
	char path[64];
	for (unsigned d = 0; d < 40; d++)
		for (unsigned f = 0; f < 30; f++) {
			snprintf(path, sizeof(path), "/d%u/file-with-a-longer-name-%u", d, f);
			assert_int_equal(fs_read(fs, path, NULL), 0);
		}
}

static uint64_t counter_updates(const struct fs *fs)
{
	struct fs_counters c;
	fixture_counters(fs, &c);
	return c.atime_updates;
}

static uint64_t counter_lazy(const struct fs *fs)
{
	struct fs_counters c;
	fixture_counters(fs, &c);
	return c.atime_lazy;
}

/* metadata_used after reading every file of a snapshotted / and syncing,
 * under `model` and lazytime (the reference the lazy cases compare with). */
static uint64_t synced_after_reads(enum fs_lazytime model, bool lazytime)
{
	struct fs *fs = snapshotted_fs(model, lazytime, "inline");
	read_all_files(fs);
	assert_int_equal(fs_sync(fs), 0);
	uint64_t used = fixture_metadata_used(fs);
	fs_free(fs);
	return used;
}

static void test_lazytime_btrfs_writes_the_atime_at_the_access(void **state)
{
	(void)state;
	struct fs *fs = snapshotted_fs(FS_LAZYTIME_BTRFS, true, "inline");
	uint64_t before = fixture_metadata_used(fs);
	read_all_files(fs);
	/* btrfs_update_time -> btrfs_dirty_inode: into the transaction at once */
	assert_int_equal(counter_updates(fs), LAZY_FILES);
	assert_int_equal(counter_lazy(fs), 0);
	assert_true(fixture_metadata_used(fs) > before);
	fixture_assert_fs_ok(fs, "lazytime btrfs after the reads");
	fs_free(fs);
	/* and it unshares what a mount without lazytime does */
	assert_int_equal(synced_after_reads(FS_LAZYTIME_BTRFS, true), synced_after_reads(FS_LAZYTIME_BTRFS, false));
}

static void test_lazytime_vfs_keeps_the_atime_in_memory_until_a_sync(void **state)
{
	(void)state;
	struct fs *fs = snapshotted_fs(FS_LAZYTIME_VFS, true, "inline");
	uint64_t before = fixture_metadata_used(fs);
	read_all_files(fs);
	assert_int_equal(counter_updates(fs), 0);
	assert_int_equal(counter_lazy(fs), LAZY_FILES);
	assert_int_equal(fixture_metadata_used(fs), before); /* no leaf copied */
	/* a commit interval passes: the commit does not write I_DIRTY_TIME inodes */
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 60 * SECOND_NS), 0);
	assert_int_equal(fixture_metadata_used(fs), before);
	assert_int_equal(fs_sync(fs), 0); /* sync_filesystem writes them all */
	assert_int_equal(counter_updates(fs), LAZY_FILES);
	uint64_t synced = fixture_metadata_used(fs);
	fixture_assert_fs_ok(fs, "lazytime vfs after the sync");
	fs_free(fs);
	print_message("# lazytime vfs: %llu bytes before the reads, %llu after the sync\n",
		      (unsigned long long)before, (unsigned long long)synced);
	assert_true(synced > before);
	/* deferred, not avoided: the sync unshares what btrfs's way does */
	assert_int_equal(synced, synced_after_reads(FS_LAZYTIME_BTRFS, true));
}

static void test_lazytime_vfs_writes_the_atime_12_hours_after_it_was_kept(void **state)
{
	(void)state;
	struct fs *fs = snapshotted_fs(FS_LAZYTIME_VFS, true, "inline");
	uint64_t before = fixture_metadata_used(fs);
	int64_t kept_at = fs_clock(fs);
	read_all_files(fs);
	assert_int_equal(fs_set_clock(fs, kept_at + 6 * HOUR_NS), 0);
	/* a read of an already kept inode does not move its dirtied time */
	assert_int_equal(fs_set_clock(fs, kept_at + 12 * HOUR_NS - SECOND_NS), 0);
	assert_int_equal(fs_read(fs, "/d0/file-with-a-longer-name-0", NULL), 0); /* relatime: 24 h rule not met */
	assert_int_equal(counter_updates(fs), 0);
	assert_int_equal(fixture_metadata_used(fs), before);
	assert_int_equal(fs_set_clock(fs, kept_at + 12 * HOUR_NS), 0); /* dirtytime_expire_interval */
	assert_int_equal(counter_updates(fs), LAZY_FILES);
	assert_true(fixture_metadata_used(fs) > before);
	fixture_assert_fs_ok(fs, "lazytime vfs after 12 h");
	fs_free(fs);
}

static void test_lazytime_vfs_writes_the_atime_with_the_inodes_next_change(void **state)
{
	(void)state;
	struct fs *fs = snapshotted_fs(FS_LAZYTIME_VFS, true, "inline");
	assert_int_equal(fs_read(fs, "/d1/file-with-a-longer-name-1", NULL), 0);
	assert_int_equal(fs_read(fs, "/d2/file-with-a-longer-name-2", NULL), 0);
	assert_int_equal(counter_updates(fs), 0);
	/* a write changes mtime: the kept atime goes with that inode item */
	assert_int_equal(fs_write(fs, "/d1/file-with-a-longer-name-1", 0, 10), 0);
	assert_int_equal(counter_updates(fs), 1);
	assert_int_equal(fs_sync(fs), 0); /* the other one waited for the sync */
	assert_int_equal(counter_updates(fs), 2);
	fixture_assert_fs_ok(fs, "lazytime vfs after a write");
	fs_free(fs);
}

static void test_lazytime_vfs_fsync_writes_that_inodes_atime_only(void **state)
{
	(void)state;
	struct fs *fs = snapshotted_fs(FS_LAZYTIME_VFS, true, "side-table");
	assert_int_equal(fs_read(fs, "/d3/file-with-a-longer-name-3", NULL), 0);
	assert_int_equal(fs_read(fs, "/d4/file-with-a-longer-name-4", NULL), 0);
	assert_int_equal(fs_fsync(fs, "/d3/file-with-a-longer-name-3"), 0);
	assert_int_equal(counter_updates(fs), 1);
	assert_int_equal(fs_fsync(fs, "/d3/file-with-a-longer-name-3"), 0); /* nothing left to write */
	assert_int_equal(counter_updates(fs), 1);
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(counter_updates(fs), 2);
	fixture_assert_fs_ok(fs, "lazytime vfs, side table, after fsync and sync");
	fs_free(fs);
}

static void test_lazytime_vfs_rules_see_the_atime_kept_in_memory(void **state)
{
	(void)state;
	struct fs *fs = snapshotted_fs(FS_LAZYTIME_VFS, true, "inline");
	const char *path = "/d5/file-with-a-longer-name-5";
	assert_int_equal(fs_read(fs, path, NULL), 0);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + SECOND_NS), 0);
	/* relatime: the in-memory atime is newer than mtime and ctime now */
	bool updated = true;
	assert_int_equal(fs_read(fs, path, &updated), 0);
	assert_false(updated);
	assert_int_equal(counter_lazy(fs), 1);
	/* strictatime: a new time, kept again, still one inode to write */
	struct atime_options options = *fs_atime_options(fs);
	options.mode = ATIME_STRICT;
	fs_set_atime_options(fs, &options);
	assert_int_equal(fs_read(fs, path, &updated), 0);
	assert_true(updated);
	assert_int_equal(counter_lazy(fs), 2);
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(counter_updates(fs), 1);
	fs_free(fs);
}

static void test_lazytime_vfs_without_a_lazytime_mount_writes_at_once(void **state)
{
	(void)state;
	struct fs *fs = snapshotted_fs(FS_LAZYTIME_VFS, false, "inline");
	read_all_files(fs);
	assert_int_equal(counter_updates(fs), LAZY_FILES);
	assert_int_equal(counter_lazy(fs), 0);
	fs_free(fs);
}

/* --- the registry and the design check ---------------------------------------- */

static void test_policy_registry_parses_every_word_and_describes_it_back(void **state)
{
	(void)state;
	const char *words[] = { "inline", "side-table", "threshold:5%", "snapshot-aware", "hybrid" };
	for (unsigned i = 0; i < G_N_ELEMENTS(words); i++) {
		struct fs_config config;
		fs_config_init(&config);
		use_policy(&config, words[i]);
		char back[64];
		fs_policy_describe(&config, back, sizeof(back));
		assert_string_equal(back, words[i]);
		assert_ptr_equal(config.atime_policy, fs_policy_at(i)); /* in the registry's order */
	}
	struct fs_config config;
	fs_config_init(&config);
	char word[64];
	fs_policy_describe(&config, word, sizeof(word));
	assert_string_equal(word, "inline"); /* the default */
}

static void test_policy_registry_refuses_unknown_words_and_bad_arguments(void **state)
{
	(void)state;
	const char *bad[] = { "nope", "inline:3", "threshold", "threshold:0%", "threshold:100", "threshold:x%" };
	for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
		struct fs_config config;
		fs_config_init(&config);
		g_autoptr(GError) error = NULL;
		if (fs_policy_parse(bad[i], &config, &error))
			fail_msg("fs_policy_parse(%s) accepted it", bad[i]);
		assert_true(g_error_matches(error, MODEL_ERROR, MODEL_ERROR_INVALID));
		assert_null(config.atime_policy);
	}
}

static void test_fs_new_refuses_side_table_policies_in_the_keyed_design(void **state)
{
	(void)state;
	const char *words[] = { "side-table", "hybrid" };
	for (unsigned i = 0; i < G_N_ELEMENTS(words); i++) {
		struct fs_config config;
		fs_config_init(&config);
		config.design = fs_design_find("keyed");
		use_policy(&config, words[i]);
		g_autoptr(GError) error = NULL;
		struct fs *fs = fs_new(&config, &error);
		assert_null(fs);
		assert_true(g_error_matches(error, MODEL_ERROR, MODEL_ERROR_INVALID));
		assert_non_null(strstr(error->message, words[i]));
		assert_non_null(strstr(error->message, "keyed"));
	}
	struct fs_config config;
	fs_config_init(&config);
	config.design = fs_design_find("keyed");
	use_policy(&config, "snapshot-aware");
	assert_true(fs_config_validate(&config, NULL));
}

/* --- hybrid ---------------------------------------------------------------------- */

#define HYBRID_FILE "/d3/file-with-a-longer-name-7"

static struct subvolume *top_of(struct fs *fs)
{
	return fs->subvolumes->pdata[0];
}

static uint64_t inode_of(struct fs *fs, const char *path)
{
	struct inode_location where;
	assert_int_equal(fs_resolve(fs, path, &where), 0);
	return where.inode;
}

/* The atime the inode item holds, wherever its leaf keeps it (an atime
 * overlay while the leaf shares its item array: btree.h). */
static int64_t inline_atime(struct fs *fs, uint64_t ino)
{
	struct btree_key key = BTRFS_KEY(ino, BTRFS_INODE_ITEM_KEY, 0);
	struct btree_path path;
	assert_true(btree_lookup(top_of(fs)->tree, &key, &path));
	return btree_path_inode_atime(&path);
}

static void test_hybrid_writes_the_atime_inline_when_the_leaf_is_private(void **state)
{
	(void)state;
	struct fs *fs = populated_fs("hybrid", ATIME_STRICT);
	bool updated = false;
	assert_int_equal(fs_read(fs, HYBRID_FILE, &updated), 0);
	assert_true(updated);
	uint64_t ino = inode_of(fs, HYBRID_FILE);
	int64_t side;
	assert_false(atime_side_table_read(top_of(fs), ino, &side));
	assert_int_equal(inline_atime(fs, ino), fs_clock(fs));
	fixture_assert_fs_ok(fs, "hybrid inline write");
	fs_free(fs);
}

static void test_hybrid_puts_the_atime_in_the_side_table_when_the_update_would_unshare_a_leaf(void **state)
{
	(void)state;
	struct fs *fs = populated_fs("hybrid", ATIME_STRICT);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + SECOND_NS), 0);
	uint64_t ino = inode_of(fs, HYBRID_FILE);
	int64_t before = inline_atime(fs, ino);
	bool updated = false;
	assert_int_equal(fs_read(fs, HYBRID_FILE, &updated), 0);
	assert_true(updated);
	int64_t side = 0;
	assert_true(atime_side_table_read(top_of(fs), ino, &side));
	assert_int_equal(side, fs_clock(fs));
	/* the shared fs-tree leaf kept its inode item as it was */
	assert_int_equal(inline_atime(fs, ino), before);
	fixture_assert_fs_ok(fs, "hybrid side-table write");
	fs_free(fs);
}

static void test_hybrid_inline_write_removes_the_inodes_side_table_item(void **state)
{
	(void)state;
	struct fs *fs = populated_fs("hybrid", ATIME_STRICT);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + SECOND_NS), 0);
	uint64_t ino = inode_of(fs, HYBRID_FILE);
	assert_int_equal(fs_read(fs, HYBRID_FILE, NULL), 0);
	int64_t side;
	assert_true(atime_side_table_read(top_of(fs), ino, &side));
	/* A change to the inode copies its leaf in this transaction: the next
	 * update is private, goes inline, and the side item goes (HY1). */
	assert_int_equal(fs_write(fs, HYBRID_FILE, 0, 200), 0);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + SECOND_NS), 0);
	assert_int_equal(fs_read(fs, HYBRID_FILE, NULL), 0);
	assert_false(atime_side_table_read(top_of(fs), ino, &side));
	assert_int_equal(inline_atime(fs, ino), fs_clock(fs));
	fixture_assert_fs_ok(fs, "hybrid inline after side");
	fs_free(fs);
}

static void test_hybrid_sweep_after_a_snapshot_unshares_less_than_inline(void **state)
{
	(void)state;
	uint64_t grown[2];
	const char *words[] = { "inline", "hybrid" };
	for (unsigned i = 0; i < 2; i++) {
		struct fs *fs = populated_fs(words[i], ATIME_STRICT);
		assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
		assert_int_equal(fs_set_clock(fs, fs_clock(fs) + SECOND_NS), 0);
		uint64_t before = fixture_metadata_used(fs);
		read_all_files(fs);
		assert_int_equal(fs_sync(fs), 0);
		grown[i] = fixture_metadata_used(fs) - before;
		fixture_assert_fs_ok(fs, words[i]);
		fs_free(fs);
	}
	print_message("# sweep after a snapshot grew metadata: inline %llu, hybrid %llu bytes\n",
		      (unsigned long long)grown[0], (unsigned long long)grown[1]);
	assert_true(grown[1] < grown[0] / 2);
}

/* --- chk-designs: the lazytime table and queue (LZ1-LZ3) and HY1 broken on
 * purpose: fs_check (fs_atime_check) passes, fails naming the label, passes
 * again once the break is undone ------------------------------------------ */

/* Two files read a second apart under lazytime vfs: two entries queued. */
static struct fs *two_atimes_in_memory(struct dirty_time **first, struct dirty_time **second)
{
	struct fs *fs = snapshotted_fs(FS_LAZYTIME_VFS, true, "inline");
	assert_int_equal(fs_read(fs, "/d0/file-with-a-longer-name-0", NULL), 0);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + SECOND_NS), 0);
	assert_int_equal(fs_read(fs, "/d0/file-with-a-longer-name-1", NULL), 0);
	assert_int_equal(g_queue_get_length(&fs->dirty_time_queue), 2);
	*first = g_queue_peek_head(&fs->dirty_time_queue);
	*second = g_queue_peek_tail(&fs->dirty_time_queue);
	assert_true((*first)->dirtied_ns < (*second)->dirtied_ns);
	fixture_assert_fs_ok(fs, "two atimes kept in memory");
	return fs;
}

/* A break of two_atimes_in_memory()'s entries that undoes itself when done
 * again. */
typedef void (*lazy_flip_fn)(struct fs *fs, struct dirty_time *first, struct dirty_time *second);

/* fs_check fails naming `label` at entry `named` (0: the first queued) once
 * `flip` broke it, and passes once `flip` undid it. */
static void assert_flip_breaks(lazy_flip_fn flip, const char *label, unsigned named)
{
	struct dirty_time *entry[2];
	struct fs *fs = two_atimes_in_memory(&entry[0], &entry[1]);
	flip(fs, entry[0], entry[1]);
	g_autofree char *want = g_strdup_printf("corrupt lazytime entry: %" G_GUINT64_FORMAT ", %s subvolume %" G_GUINT64_FORMAT,
						entry[named]->inode, label, entry[named]->subvolume_id);
	fixture_assert_fs_corrupt(fs, want);
	flip(fs, entry[0], entry[1]);
	fixture_assert_fs_ok(fs, "the break undone");
	fs_free(fs);
}

/* As a write-out that forgot to take the entry out of dirty_times. */
static void flip_written(struct fs *fs, struct dirty_time *first, struct dirty_time *second)
{
	(void)fs, (void)second;
	first->written = !first->written;
}

/* The 12-hour write-out would stop at the newer one and leave the older. */
static void flip_queue_order(struct fs *fs, struct dirty_time *first, struct dirty_time *second)
{
	GList *head = fs->dirty_time_queue.head;
	head->data = head->data == first ? second : first;
	head->next->data = head->data == first ? second : first;
}

/* No access set a time after the clock: stat would show the future. The
 * second entry's atime is its one access's, its dirtied_ns. */
static void flip_future_atime(struct fs *fs, struct dirty_time *first, struct dirty_time *second)
{
	(void)first;
	second->atime = second->atime == second->dirtied_ns ? fs_clock(fs) + 1 : second->dirtied_ns;
}

static void test_lazytime_check_fails_when_a_written_entry_stays_in_the_table(void **state)
{
	(void)state;
	assert_flip_breaks(flip_written, "LZ1", 0);
}

static void test_lazytime_check_fails_when_the_queue_is_out_of_dirtying_order(void **state)
{
	(void)state;
	assert_flip_breaks(flip_queue_order, "LZ2", 0);
}

static void test_lazytime_check_fails_on_an_atime_after_the_clock(void **state)
{
	(void)state;
	assert_flip_breaks(flip_future_atime, "LZ3", 1);
}

static void test_hybrid_check_fails_when_an_inline_write_leaves_an_older_side_item(void **state)
{
	(void)state;
	struct fs *fs = populated_fs("hybrid", ATIME_STRICT);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + SECOND_NS), 0);
	assert_int_equal(fs_read(fs, HYBRID_FILE, NULL), 0);
	uint64_t ino = inode_of(fs, HYBRID_FILE);
	int64_t side;
	assert_true(atime_side_table_read(top_of(fs), ino, &side));
	fixture_assert_fs_ok(fs, "an atime in the side table");
	/* hybrid_write's inline write without its forget (HY1's rule). */
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + SECOND_NS), 0);
	struct inode_location where = { top_of(fs), ino };
	assert_int_equal(fs_reserve(fs, COWSIM_RESERVE_ATIME), 0);
	atime_write_inline(fs, &where, fs_clock(fs), NULL, NULL);
	fs_release(fs);
	g_autofree char *want = g_strdup_printf("corrupt side-table item: %" G_GUINT64_FORMAT ", HY1 atime %" G_GINT64_FORMAT
						" older than its inode item's %" G_GINT64_FORMAT " in subvolume %" G_GUINT64_FORMAT,
						ino, side, fs_clock(fs), top_of(fs)->id);
	fixture_assert_fs_corrupt(fs, want);
	atime_side_table_forget(fs, top_of(fs), ino);
	fixture_assert_fs_ok(fs, "the side item forgotten");
	fs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metadata_free_counts_chunk_room_less_global_reserve),
		cmocka_unit_test(test_metadata_free_counts_all_unallocated_space_as_chunks_shrink_to_fit),
		cmocka_unit_test(test_unshare_estimate_follows_the_policy_in_force),
		cmocka_unit_test(test_snapshot_aware_warning_is_zero_in_the_counters),
		cmocka_unit_test(test_lazytime_btrfs_writes_the_atime_at_the_access),
		cmocka_unit_test(test_lazytime_vfs_keeps_the_atime_in_memory_until_a_sync),
		cmocka_unit_test(test_lazytime_vfs_writes_the_atime_12_hours_after_it_was_kept),
		cmocka_unit_test(test_lazytime_vfs_writes_the_atime_with_the_inodes_next_change),
		cmocka_unit_test(test_lazytime_vfs_fsync_writes_that_inodes_atime_only),
		cmocka_unit_test(test_lazytime_vfs_rules_see_the_atime_kept_in_memory),
		cmocka_unit_test(test_lazytime_vfs_without_a_lazytime_mount_writes_at_once),
		cmocka_unit_test(test_policy_registry_parses_every_word_and_describes_it_back),
		cmocka_unit_test(test_policy_registry_refuses_unknown_words_and_bad_arguments),
		cmocka_unit_test(test_fs_new_refuses_side_table_policies_in_the_keyed_design),
		cmocka_unit_test(test_hybrid_writes_the_atime_inline_when_the_leaf_is_private),
		cmocka_unit_test(test_hybrid_puts_the_atime_in_the_side_table_when_the_update_would_unshare_a_leaf),
		cmocka_unit_test(test_hybrid_inline_write_removes_the_inodes_side_table_item),
		cmocka_unit_test(test_hybrid_sweep_after_a_snapshot_unshares_less_than_inline),
		cmocka_unit_test(test_lazytime_check_fails_when_a_written_entry_stays_in_the_table),
		cmocka_unit_test(test_lazytime_check_fails_when_the_queue_is_out_of_dirtying_order),
		cmocka_unit_test(test_lazytime_check_fails_on_an_atime_after_the_clock),
		cmocka_unit_test(test_hybrid_check_fails_when_an_inline_write_leaves_an_older_side_item),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
