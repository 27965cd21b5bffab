/*
 * tests/workloads/test_trace_roundtrip.c - what the writer writes, the reader
 * reads back unchanged (trace_writer.c, TW1): every op kind, with and without its
 * options, and paths that need quoting.
 */
#include "helpers.h"

#include <string.h>

/* parse(write(op)) == op, and the line is what the format says. */
static void assert_round_trip(const struct trace_op *op)
{
	g_autofree char *text = helper_write_op(op);
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(text, &error);
	struct trace_op back;

	assert_non_null(reader);
	if (trace_reader_next(reader, &back, &error) != 1)
		fail_msg("%s\ndid not parse: %s", text, error ? error->message : "end of trace");
	/* TR10: the reader hands over each string's length, quoted and escaped ones decoded. */
	assert_int_equal(back.path_len, back.path ? strlen(back.path) : 0);
	assert_int_equal(back.path2_len, back.path2 ? strlen(back.path2) : 0);
	/* ... and where the path's last name starts, one past its last '/'. */
	assert_int_equal(back.name_at, back.path ? (size_t)(strrchr(back.path, '/') - back.path) + 1 : 0);
	if (!trace_op_equal(op, &back))
		fail_msg("round trip changed the op:\n%s", text);
	assert_int_equal(back.line, 2);
	assert_int_equal(trace_reader_next(reader, &back, &error), 0);
}

static struct trace_op op_of(enum trace_op_kind kind, const char *path, const char *path2)
{
	struct trace_op op;
	trace_op_init(&op, kind);
	op.path = path;
	op.path2 = path2;
	return op;
}

static void test_round_trip_mkdir_with_every_option(void **state)
{
	struct trace_op op = op_of(TRACE_MKDIR, "/tree", NULL);
	op.mode = 0700;
	op.uid = 1000;
	op.gid = 4294967295u;
	op.times_given = TRACE_TIME_ATIME | TRACE_TIME_MTIME | TRACE_TIME_CTIME;
	op.atime_ns = INT64_C(1354300000123456789);
	op.mtime_ns = -INT64_C(5500000000);
	op.ctime_ns = 0;
	assert_round_trip(&op);
	op = op_of(TRACE_MKDIR, "/plain", NULL);
	assert_round_trip(&op);
}

static void test_round_trip_create_keeps_size_mode_owner_and_times(void **state)
{
	struct trace_op op = op_of(TRACE_CREATE, "/tree/a.txt", NULL);
	op.size = UINT64_MAX;
	op.mode = 0;
	op.times_given = TRACE_TIME_MTIME;
	op.mtime_ns = INT64_MIN;
	assert_round_trip(&op);
	op = op_of(TRACE_CREATE, "/tree/empty", NULL);
	assert_round_trip(&op);
}

static void test_round_trip_data_ops(void **state)
{
	struct trace_op op = op_of(TRACE_WRITE, "/f", NULL);
	op.offset = 123;
	op.length = UINT64_MAX;
	assert_round_trip(&op);
	op = op_of(TRACE_TRUNCATE, "/f", NULL);
	op.size = 1 << 20;
	assert_round_trip(&op);
	op = op_of(TRACE_READ, "/f", NULL);
	assert_round_trip(&op);
	op.has_range = true;
	op.offset = 0;
	op.length = 4096;
	assert_round_trip(&op);
	op = op_of(TRACE_FSYNC, "/f", NULL);
	assert_round_trip(&op);
}

static void test_round_trip_namespace_ops(void **state)
{
	const struct trace_op ops[] = {
		op_of(TRACE_STAT, "/f", NULL), op_of(TRACE_READDIR, "/", NULL),
		op_of(TRACE_RENAME, "/a", "/b"), op_of(TRACE_LINK, "/a", "/c"),
		op_of(TRACE_SYMLINK, "/l", "../relative target"), op_of(TRACE_UNLINK, "/a", NULL),
		op_of(TRACE_RMDIR, "/d", NULL), op_of(TRACE_DELETE_SNAPSHOT, "/snap1", NULL),
	};
	for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
		assert_round_trip(&ops[i]);
}

static void test_round_trip_snapshot_rw_and_ro(void **state)
{
	struct trace_op op = op_of(TRACE_SNAPSHOT, "/", "/snap1");
	assert_round_trip(&op);
	op.readonly = true;
	assert_round_trip(&op);
}

static void test_round_trip_control_ops(void **state)
{
	struct trace_op op = op_of(TRACE_SYNC, NULL, NULL);
	assert_round_trip(&op);
	op = op_of(TRACE_MARK, NULL, "after_grep");
	assert_round_trip(&op);
	op = op_of(TRACE_REMOUNT, NULL, "relatime,nodiratime");
	assert_round_trip(&op);
	op = op_of(TRACE_SETTIME, "/f", NULL);
	op.times_given = TRACE_TIME_ATIME;
	op.atime_ns = 1;
	assert_round_trip(&op);
}

static void test_round_trip_clock_relative_and_absolute(void **state)
{
	const int64_t durations[] = { 0, 1, 999, 1500000, TRACE_NS_PER_SEC, 90 * 60 * TRACE_NS_PER_SEC,
				      TRACE_NS_PER_DAY, INT64_MAX };
	for (size_t i = 0; i < G_N_ELEMENTS(durations); i++) {
		struct trace_op op = op_of(TRACE_CLOCK, NULL, NULL);
		op.clock_relative = true;
		op.clock_ns = durations[i];
		assert_round_trip(&op);
		op.clock_relative = false;
		op.clock_ns = -durations[i];
		assert_round_trip(&op);
	}
}

static void test_round_trip_paths_that_need_quotes(void **state)
{
	const char *paths[] = {
		"/with space", "/tab\there", "/quote\"d", "/back\\slash", "/hash#tag", "/eq=uals",
		"/caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac", "/bad\xff\xfe", "/new\nline", "/ctrl\x01\x7f",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
		struct trace_op op = op_of(TRACE_RENAME, paths[i], "/plain");
		assert_round_trip(&op);
		op = op_of(TRACE_MARK, NULL, paths[i] + 1);
		assert_round_trip(&op);
	}
}

static void test_writer_quotes_only_when_needed(void **state)
{
	struct trace_op op = op_of(TRACE_RENAME, "/a b", "/plain-name_1.txt");
	g_autofree char *text = helper_write_op(&op);
	assert_string_equal(text, "cowsim-trace 1\nrename \"/a b\" /plain-name_1.txt\n");
	op = op_of(TRACE_STAT, "/caf\xc3\xa9\"", NULL);
	g_autofree char *utf8 = helper_write_op(&op);
	assert_string_equal(utf8, "cowsim-trace 1\nstat \"/caf\\xc3\\xa9\\\"\"\n");
}

static void test_writer_leaves_out_defaults(void **state)
{
	struct trace_op op = op_of(TRACE_CREATE, "/f", NULL);
	op.size = 12;
	g_autofree char *text = helper_write_op(&op);
	assert_string_equal(text, "cowsim-trace 1\ncreate /f size=12\n");
}

static void test_writer_rejects_an_op_the_reader_would_reject(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_writer) writer = trace_writer_new(stdout);
	struct trace_op op = op_of(TRACE_STAT, "relative", NULL);
	assert_false(trace_op_check(&op, &error));
	assert_string_equal(error->message, "field path: not an absolute path");
	g_clear_error(&error);
	op = op_of(TRACE_STAT, "/f", NULL);
	op.size = 5; /* stat takes no size: writing it would lose it */
	assert_false(trace_op_check(&op, &error));
	assert_true(g_str_has_prefix(error->message, "field size:"));
}

static void test_reader_accepts_the_documented_example(void **state)
{
	const char *text = "# comment\n\ncowsim-trace 1\n"
			   "clock @1338422400\n"
			   "mkdir /tree mode=0755 uid=0 gid=0\n"
			   "create \"/tree/a b.txt\" size=12K mode=0644 atime=1338422000.5 mtime=1338421000\n"
			   "   # indented comment\n"
			   "snapshot / /snap1 ro\r\n"
			   "read /tree/a.txt 1M 4K\n"
			   "clock +1.5s\n"
			   "remount relatime,nodiratime\n"
			   "mark after_grep";
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(text, &error);
	struct trace_op op;
	assert_non_null(reader);
	int kinds[16], n = 0, got;
	while ((got = trace_reader_next(reader, &op, &error)) == 1) {
		kinds[n++] = op.kind;
		if (op.kind == TRACE_CREATE) {
			assert_string_equal(op.path, "/tree/a b.txt");
			assert_int_equal(op.size, 12 * 1024);
			assert_int_equal(op.atime_ns, INT64_C(1338422000500000000));
			assert_int_equal(op.line, 6);
		}
		if (op.kind == TRACE_READ)
			assert_true(op.has_range && op.offset == 1 << 20 && op.length == 4096);
		if (op.kind == TRACE_CLOCK && op.clock_relative)
			assert_int_equal(op.clock_ns, 1500000000);
	}
	assert_int_equal(got, 0);
	assert_int_equal(n, 8);
	assert_int_equal(kinds[3], TRACE_SNAPSHOT);
	assert_int_equal(trace_reader_line(reader), 12);
}

static void test_op_kind_names_match_the_format(void **state)
{
	for (int k = 0; k < TRACE_OP_KIND_COUNT; k++) {
		enum trace_op_kind back;
		assert_true(trace_op_kind_from_name(trace_op_kind_name((enum trace_op_kind)k), &back));
		assert_int_equal(back, k);
	}
	assert_string_equal(trace_op_kind_name(TRACE_DELETE_SNAPSHOT), "delete-snapshot");
	assert_string_equal(trace_op_kind_name((enum trace_op_kind)99), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_mkdir_with_every_option),
		cmocka_unit_test(test_round_trip_create_keeps_size_mode_owner_and_times),
		cmocka_unit_test(test_round_trip_data_ops),
		cmocka_unit_test(test_round_trip_namespace_ops),
		cmocka_unit_test(test_round_trip_snapshot_rw_and_ro),
		cmocka_unit_test(test_round_trip_control_ops),
		cmocka_unit_test(test_round_trip_clock_relative_and_absolute),
		cmocka_unit_test(test_round_trip_paths_that_need_quotes),
		cmocka_unit_test(test_writer_quotes_only_when_needed),
		cmocka_unit_test(test_writer_leaves_out_defaults),
		cmocka_unit_test(test_writer_rejects_an_op_the_reader_would_reject),
		cmocka_unit_test(test_reader_accepts_the_documented_example),
		cmocka_unit_test(test_op_kind_names_match_the_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
