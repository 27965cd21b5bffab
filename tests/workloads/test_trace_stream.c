/*
 * tests/workloads/test_trace_stream.c - the reader streams: a trace of a
 * million lines goes through one fixed line buffer (the reader never holds
 * more than a line), and a line longer than the limit is an error, not an
 * allocation.
 */
#include "helpers.h"

#include <inttypes.h>
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

/* The op of line I of the fast-path trace: plain paths of 5 to 201 bytes, so that over the chunks
 * of the reader's buffer (256 KiB) every line end meets the end of a chunk at some offset; read,
 * readdir and create with options, as a copy and a grep write them. */
static void fast_path_op(int i, struct trace_op *op, char *path, size_t size)
{
	static const enum trace_op_kind kinds[] = { TRACE_READ, TRACE_READDIR, TRACE_CREATE };
	trace_op_init(op, kinds[i / 100 % 3]); /* runs of one kind: the fast path remembers two */
	int n = snprintf(path, size, "/t%d/", i % 7);
	for (int k = 0; k <= i % 197; k++)
		path[n++] = (char)('a' + (i + k) % 26);
	path[n] = '\0';
	op->path = path;
	if (op->kind == TRACE_CREATE) {
		op->size = (uint64_t)i * 11;
		op->times_given = TRACE_TIME_ATIME | TRACE_TIME_MTIME;
		op->atime_ns = (int64_t)i * 1000000007;
		op->mtime_ns = 1669064730 * TRACE_NS_PER_SEC;
	}
}

/* A name hash for trace_reader_hash_names() (FNV-1a): any function of the name's bytes. */
static uint32_t test_name_hash(const char *name, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h;
}

/* TR5/TR6: lines the fast path takes straight from the buffer read back as written, across the
 * chunk ends (where a line goes on past the buffer and read_line() takes it); TR10: each with its
 * last name's hash, from the fast path and the full lexer alike. */
static void test_reader_fast_path_reads_back_what_was_written_across_chunks(void **state)
{
	enum { FAST_LINES = 40000 }; /* about 4.5 MB: 17 chunks */
	FILE *f = tmpfile();
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_writer) writer = trace_writer_new(f);
	char path[256], expected_path[256];
	assert_true(trace_writer_begin(writer, &error));
	for (int i = 0; i < FAST_LINES; i++) {
		struct trace_op op;
		fast_path_op(i, &op, path, sizeof(path));
		assert_true(trace_writer_op(writer, &op, &error));
	}
	assert_true(trace_writer_finish(writer, &error));
	rewind(f);
	g_autoptr(trace_reader) reader = trace_reader_new_from_stream(f, "fast.trace", true, &error);
	assert_non_null(reader);
	trace_reader_hash_names(reader, test_name_hash);
	struct trace_op op, expected;
	int i = 0, got;
	char last_path[256] = "";
	while ((got = trace_reader_next(reader, &op, &error)) == 1) {
		fast_path_op(i, &expected, expected_path, sizeof(expected_path));
		if (!trace_op_equal(&op, &expected) || op.line != (uint64_t)i + 2)
			fail_msg("line %d: read '%s' (line %" PRIu64 "), wrote '%s'", i + 2, op.path, op.line,
				 expected.path);
		if (op.path_len != strlen(op.path) || op.path2_len != (op.path2 ? strlen(op.path2) : 0))
			fail_msg("line %d: the fast path's lengths %u, %u (TR10)", i + 2, op.path_len, op.path2_len);
		if (op.name_at != (size_t)(strrchr(op.path, '/') - op.path) + 1)
			fail_msg("line %d: the fast path's name_at %u in '%s' (TR10)", i + 2, op.name_at, op.path);
		if (op.name_hash != test_name_hash(op.path + op.name_at, op.path_len - op.name_at))
			fail_msg("line %d: the last name's hash %08x in '%s' (TR10)", i + 2, op.name_hash, op.path);
		if (op.shared > strlen(last_path) || memcmp(op.path, last_path, op.shared))
			fail_msg("line %d: '%s' shares %u bytes with '%s' (TR10)", i + 2, op.path, op.shared, last_path);
		g_strlcpy(last_path, op.path, sizeof(last_path));
		i++;
	}
	if (got < 0)
		fail_msg("%s", error->message);
	assert_int_equal(i, FAST_LINES);
	(void)state;
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
		cmocka_unit_test(test_reader_fast_path_reads_back_what_was_written_across_chunks),
		cmocka_unit_test(test_reader_rejects_a_line_over_the_limit_without_reading_it_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
