/*
 * tests/workloads/test_trace_stream.c - the reader streams: a trace of a
 * million lines goes through one fixed line buffer (the reader never holds
 * more than a line), and a line longer than the limit is an error, not an
 * allocation.
 */
#include "helpers.h"

#include <stdio.h>
#include <string.h>

#define LINES 1000000

/* A million ops written with the writer into a temporary file. */
static FILE *million_line_trace(void)
{
	FILE *f = tmpfile();
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_writer) writer = trace_writer_new(f);
	char path[64];
	assert_true(trace_writer_begin(writer, &error));
	for (int i = 0; i < LINES; i++) {
		struct trace_op op;
		trace_op_init(&op, i % 2 ? TRACE_READ : TRACE_STAT);
		snprintf(path, sizeof(path), "/tree/dir %d/file-%d", i % 1000, i);
		op.path = path;
		assert_true(trace_writer_op(writer, &op, &error));
	}
	assert_true(trace_writer_finish(writer, &error));
	rewind(f);
	return f;
}

static void test_reader_streams_a_million_line_trace(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = trace_reader_new_from_stream(million_line_trace(), "big.trace", true, &error);
	struct trace_op op;
	uint64_t ops = 0;
	int got;
	assert_non_null(reader);
	while ((got = trace_reader_next(reader, &op, &error)) == 1) {
		ops++;
		if (ops == LINES)
			assert_string_equal(op.path, "/tree/dir 999/file-999999");
	}
	if (got < 0)
		fail_msg("%s", error->message);
	assert_int_equal(ops, LINES);
	assert_int_equal(trace_reader_line(reader), LINES + 1);
}

static void test_reader_rejects_a_line_over_the_limit_without_reading_it_whole(void **state)
{
	FILE *f = tmpfile();
	fputs("cowsim-trace 1\nstat /", f);
	for (int i = 0; i < 1 << 20; i++)
		fputc('a', f);
	fputc('\n', f);
	rewind(f);
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = trace_reader_new_from_stream(f, "long.trace", true, &error);
	struct trace_op op;
	assert_int_equal(trace_reader_next(reader, &op, &error), -1);
	assert_true(g_str_has_prefix(error->message, "long.trace:2:40961: field line: line longer than"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_streams_a_million_line_trace),
		cmocka_unit_test(test_reader_rejects_a_line_over_the_limit_without_reading_it_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
