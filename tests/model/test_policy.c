/*
 * tests/model/test_policy.c - the atime policies' space rules (issue 4):
 * the free-space measure the threshold policy tests, the snapshot-time
 * warning under each policy, and reads after an aborted transaction.
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

static void test_metadata_free_counts_only_whole_chunks_of_unallocated_space(void **state)
{
	(void)state;
	struct space_report r = { 0 };
	r.metadata_total = 256 * MIB;
	r.metadata_used = 246 * MIB;
	r.global_reserve = 6 * MIB;
	r.device_allocated = 600 * MIB;
	/* 424 MiB unallocated: no 512 MiB (DUP) chunk fits, one 256 MiB single one does. */
	assert_int_equal(space_report_metadata_free(&r, 1024 * MIB, true), 4 * MIB);
	assert_int_equal(space_report_metadata_free(&r, 1024 * MIB, false), 260 * MIB);
	/* 1448 MiB unallocated: two DUP chunks. */
	assert_int_equal(space_report_metadata_free(&r, 2048 * MIB, true), 4 * MIB + 512 * MIB);
}

/* --- the snapshot-time warning ----------------------------------------------- */

/* A filesystem under `policy` with 40 directories of 30 files each. */
static struct fs *populated_fs(enum atime_policy policy, enum atime_mode mode)
{
	struct fs_config config;
	fs_config_init(&config);
	config.atime_policy = policy;
	config.threshold_fraction = 0.05;
	config.atime.mode = mode;
	struct fs *fs = fixture_fs_new_config(&config);
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

static uint64_t estimate(enum atime_policy policy, enum atime_mode mode)
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
	uint64_t inline_bytes = estimate(ATIME_POLICY_INLINE, ATIME_RELATIME);
	uint64_t side = estimate(ATIME_POLICY_SIDE_TABLE, ATIME_RELATIME);
	print_message("# estimate: inline %llu, side-table %llu bytes\n", (unsigned long long)inline_bytes,
		      (unsigned long long)side);
	assert_true(inline_bytes > 16384);
	assert_true(side > 0 && side < inline_bytes);
	assert_int_equal(estimate(ATIME_POLICY_SNAPSHOT_AWARE, ATIME_RELATIME), 0);
	assert_int_equal(estimate(ATIME_POLICY_INLINE, ATIME_NOATIME), 0);
	/* threshold: as inline while the device has room (4 GiB here) */
	assert_int_equal(estimate(ATIME_POLICY_THRESHOLD, ATIME_RELATIME), inline_bytes);
}

static void test_snapshot_aware_warning_is_zero_in_the_counters(void **state)
{
	(void)state;
	struct fs *fs = populated_fs(ATIME_POLICY_SNAPSHOT_AWARE, ATIME_STRICT);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	struct fs_report report;
	fs_report(fs, &report);
	assert_int_equal(report.counters.unshare_estimate, 0);
	fs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metadata_free_counts_chunk_room_less_global_reserve),
		cmocka_unit_test(test_metadata_free_counts_only_whole_chunks_of_unallocated_space),
		cmocka_unit_test(test_unshare_estimate_follows_the_policy_in_force),
		cmocka_unit_test(test_snapshot_aware_warning_is_zero_in_the_counters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
