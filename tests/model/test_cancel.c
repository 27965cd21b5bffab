/*
 * tests/model/test_cancel.c - a long op asked to stop (fs_config.cancelled,
 * model/fs.h) stops after a bounded piece of work, returns -EINTR, and
 * leaves the model consistent: fs_check passes, and the run can go on.
 *
 * The hook counts its calls and says "stop" from the Nth on, so a test
 * knows how much work the op did after the request: one extent (128 MiB).
 */
#include "model_fixture.h"

#include <errno.h>

#define GIB (1ull << 30)

struct stopper {
	unsigned calls;
	unsigned stop_from;   /* 0: never */
};

static bool stop_when_told(void *opaque)
{
	struct stopper *s = opaque;
	s->calls++;
	return s->stop_from && s->calls >= s->stop_from;
}

static struct fs *new_fs(struct stopper *s, bool delayed)
{
	struct fs_config config;
	fs_config_init(&config);
	config.device_size = 64 * GIB;
	config.delayed_writeback = delayed;
	config.cancelled = stop_when_told;
	config.cancelled_opaque = s;
	return fixture_fs_new_config(&config);
}

static struct fs_attributes regular(void)
{
	struct fs_attributes a;
	fs_attributes_init(&a);
	a.mode = 0644;
	return a;
}

/* Immediate writeback: the create writes as it goes; stopped after 3 asks
 * (3 extents of 128 MiB), the rest of the 40 GiB file is a hole. */
static void test_cancel_stops_a_direct_40g_create_after_three_extents(void **state)
{
	struct stopper s = { 0, 3 };
	struct fs *fs = new_fs(&s, false);
	struct fs_attributes a = regular();
	assert_int_equal(fs_create(fs, "/big", 40 * GIB, &a), -EINTR);
	assert_int_equal(s.calls, 3);
	assert_int_equal(fixture_data_used(fs), 3 * 128ull << 20);
	fixture_assert_fs_ok(fs, "after the stopped create");
	s.stop_from = 0;
	assert_int_equal(fs_sync(fs), 0);
	fixture_assert_fs_ok(fs, "after a sync that follows it");
	assert_int_equal(fs_create(fs, "/after", 1 * GIB, &a), 0);
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(fixture_data_used(fs), (3 * 128ull << 20) + 1 * GIB);
	fixture_assert_fs_ok(fs, "after more work");
	fs_free(fs);
}

/* Delayed writeback: the create only reserves; the commit's writeback is
 * the long part. Stopped, it commits what it wrote and keeps the rest queued;
 * the next commit finishes the file. */
static void test_cancel_stops_a_commit_writeback_and_the_next_commit_finishes_it(void **state)
{
	struct stopper s = { 0, 0 };
	struct fs *fs = new_fs(&s, true);
	struct fs_attributes a = regular();
	assert_int_equal(fs_create(fs, "/big", 40 * GIB, &a), 0);
	s.stop_from = s.calls + 2;
	assert_int_equal(fs_sync(fs), -EINTR);
	assert_int_equal(fixture_data_used(fs), 2 * 128ull << 20);
	fixture_assert_fs_ok(fs, "after the stopped commit");
	s.stop_from = 0;
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(fixture_data_used(fs), 40 * GIB);
	fixture_assert_fs_ok(fs, "after the commit that finished the writeback");
	fs_free(fs);
}

/* A hook that never says stop changes nothing: the same create, whole. */
static void test_cancel_hook_that_never_stops_changes_nothing(void **state)
{
	struct stopper s = { 0, 0 };
	struct fs *fs = new_fs(&s, false);
	struct fs_attributes a = regular();
	assert_int_equal(fs_create(fs, "/big", 40 * GIB, &a), 0);
	assert_int_equal(fixture_data_used(fs), 40 * GIB);
	assert_int_equal(s.calls, 40 * 8 - 1); /* asked before every extent but the first */
	fixture_assert_fs_ok(fs, "after the whole create");
	fs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_stops_a_direct_40g_create_after_three_extents),
		cmocka_unit_test(test_cancel_stops_a_commit_writeback_and_the_next_commit_finishes_it),
		cmocka_unit_test(test_cancel_hook_that_never_stops_changes_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
