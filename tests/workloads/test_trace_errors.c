/*
 * tests/workloads/test_trace_errors.c - malformed traces, each rejected with
 * the exact place and field: "t.trace:LINE:COLUMN: field NAME: reason".
 *
 * H is the header line, so the op under test is always on line 2.
 */
#include "helpers.h"

#include <string.h>

#define H "cowsim-trace 1\n"

/* The error for TEXT starts with WHERE ("t.trace:2:9: field trailing:"). */
static void assert_rejected_at(const char *text, const char *where)
{
	g_autofree char *message = helper_first_error(text);
	if (!g_str_has_prefix(message, where))
		fail_msg("expected '%s...', got '%s'", where, message);
}

#define REJECTS(name, text, where) \
	static void name(void **state) { assert_rejected_at(text, where); }

REJECTS(test_parser_rejects_a_missing_header_with_line_and_column,
	"# only a comment\nstat /a\n", "t.trace:2:1: field header: missing header 'cowsim-trace 1', got: 'stat'")
REJECTS(test_parser_rejects_an_empty_trace, "", "t.trace:1:1: field header: missing header")
REJECTS(test_parser_rejects_an_unsupported_version, "cowsim-trace 2\n",
	"t.trace:1:14: field version: unsupported trace version '2'")
REJECTS(test_parser_rejects_an_unknown_op_with_column, H "frobnicate /a\n",
	"t.trace:2:1: field op: unknown op: 'frobnicate'")
REJECTS(test_parser_rejects_trailing_garbage_after_the_last_argument, H "stat /a extra\n",
	"t.trace:2:9: field trailing: unexpected 'extra' after the arguments of stat")
REJECTS(test_parser_rejects_a_missing_positional_at_end_of_line, H "write /a 10\n",
	"t.trace:2:12: field length: missing")
REJECTS(test_parser_rejects_half_a_read_range, H "read /a 5\n", "t.trace:2:10: field length: missing")
REJECTS(test_parser_rejects_create_without_size, H "create /a mode=0644\n", "t.trace:2:20: field size: missing")
REJECTS(test_parser_rejects_settime_without_any_time, H "settime /a\n", "t.trace:2:11: field atime: missing")
REJECTS(test_parser_rejects_a_non_number_size_with_the_value_column, H "create /a size=12x\n",
	"t.trace:2:16: field size: not a number: '12x'")
REJECTS(test_parser_rejects_a_size_that_overflows_64_bits, H "truncate /a 18446744073709551616\n",
	"t.trace:2:13: field size: out of range")
REJECTS(test_parser_rejects_a_size_suffix_that_overflows, H "truncate /a 16777216T\n",
	"t.trace:2:13: field size: out of range")
REJECTS(test_parser_rejects_a_uid_above_32_bits, H "mkdir /a uid=4294967296\n",
	"t.trace:2:14: field uid: out of range")
REJECTS(test_parser_rejects_a_non_octal_mode, H "mkdir /a mode=0789\n",
	"t.trace:2:15: field mode: not an octal mode")
REJECTS(test_parser_rejects_a_mode_beyond_permission_bits, H "mkdir /a mode=10000\n",
	"t.trace:2:15: field mode: out of range")
REJECTS(test_parser_rejects_a_time_with_ten_fraction_digits, H "settime /a atime=1.0123456789\n",
	"t.trace:2:18: field atime: fraction longer than 9 digits")
REJECTS(test_parser_rejects_a_time_that_overflows_nanoseconds, H "settime /a mtime=9223372037\n",
	"t.trace:2:18: field mtime: out of range")
REJECTS(test_parser_rejects_a_duration_without_unit, H "clock +30\n", "t.trace:2:7: field time: missing unit")
REJECTS(test_parser_rejects_a_duration_with_an_unknown_unit, H "clock +3w\n",
	"t.trace:2:7: field time: unknown unit")
REJECTS(test_parser_rejects_a_fraction_of_a_nanosecond, H "clock +1.5ns\n",
	"t.trace:2:7: field time: not a whole number of nanoseconds")
REJECTS(test_parser_rejects_a_clock_without_plus_or_at, H "clock 5s\n",
	"t.trace:2:7: field time: want +DURATION or @TIME")
REJECTS(test_parser_rejects_an_unknown_key_naming_it, H "create /a size=1 colour=red\n",
	"t.trace:2:18: field colour: unknown key for create")
REJECTS(test_parser_rejects_a_key_on_an_op_without_options, H "stat /a mode=0644\n",
	"t.trace:2:9: field mode: unknown key for stat")
REJECTS(test_parser_rejects_a_duplicate_key_at_the_second_one, H "create /a size=1 size=2\n",
	"t.trace:2:18: field size: duplicate key (first at column 11)")
REJECTS(test_parser_rejects_a_duplicate_ro_flag, H "snapshot / /s ro ro\n",
	"t.trace:2:18: field ro: duplicate flag")
REJECTS(test_parser_rejects_unterminated_quote_with_column, H "stat \"/a b\n",
	"t.trace:2:6: field path: unterminated quote")
REJECTS(test_parser_rejects_a_bad_escape_at_the_backslash, H "stat \"/a\\qb\"\n",
	"t.trace:2:9: field path: bad escape '\\q'")
REJECTS(test_parser_rejects_a_short_hex_escape, H "stat \"/a\\x4\"\n",
	"t.trace:2:9: field path: bad escape: \\x needs two hex digits")
REJECTS(test_parser_rejects_text_glued_to_a_closing_quote, H "stat \"/a\"b\n",
	"t.trace:2:10: field path: unexpected 'b' after the closing quote")
REJECTS(test_parser_rejects_a_quote_inside_an_unquoted_token, H "stat /a\"b\n",
	"t.trace:2:8: field path: '\"' inside an unquoted token")
REJECTS(test_parser_rejects_a_quoted_key_value, H "create /a size=1 mode=\"0644\"\n",
	"t.trace:2:23: field mode: '\"' inside an unquoted token")
REJECTS(test_parser_rejects_a_relative_path, H "stat tree/a\n", "t.trace:2:6: field path: not an absolute path")
REJECTS(test_parser_rejects_a_relative_second_path, H "rename /a b\n", "t.trace:2:11: field new: not an absolute path")
REJECTS(test_parser_rejects_an_empty_path_component, H "stat /a//b\n", "t.trace:2:6: field path: empty path component")
REJECTS(test_parser_rejects_a_trailing_slash, H "rmdir /a/\n", "t.trace:2:7: field path: empty path component")
REJECTS(test_parser_rejects_dot_dot_components, H "stat /a/../b\n", "t.trace:2:6: field path: '.' and '..'")
REJECTS(test_parser_rejects_an_empty_quoted_path, H "unlink \"\"\n", "t.trace:2:8: field path: empty")
REJECTS(test_parser_rejects_a_nul_byte_in_a_path, H "stat \"/a\\x00b\"\n", "t.trace:2:6: field path: contains a NUL byte")
REJECTS(test_parser_rejects_a_raw_control_byte, H "stat /a\x01\n", "t.trace:2:8: field path: control byte 0x01")
REJECTS(test_parser_rejects_an_empty_mark_label, H "mark \"\"\n", "t.trace:2:6: field label: empty")
REJECTS(test_parser_reports_the_line_of_a_later_error, H "sync\n# c\n\nsync\nsync now\n",
	"t.trace:6:6: field trailing: unexpected 'now'")

static void test_parser_rejects_a_component_longer_than_255_bytes(void **state)
{
	g_autofree char *name = g_strnfill(256, 'n');
	g_autofree char *text = g_strdup_printf(H "stat /ok/%s\n", name);
	assert_rejected_at(text, "t.trace:2:6: field path: path component longer than 255 bytes");
	g_autofree char *fits = g_strdup_printf(H "stat /ok/%s\n", name + 1);
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(fits, &error);
	struct trace_op op;
	assert_int_equal(trace_reader_next(reader, &op, &error), 1);
}

/* The word-at-a-time path check (trace_syntax.c) accepts only what the exact check accepts:
 * names that start with dots, components at the 8-byte seams, the 256-byte length edge. */
static void test_parser_path_check_agrees_at_the_edges_of_its_fast_path(void **state)
{
	static const char *const good[] = { "/.a", "/a/..b", "/...", "/a/.b/c", "/abcdefg/h", "/abcdef/.x" };
	static const char *const bad[] = { "/a/.", "/a/..", "/abcdef/./x", "/abcdefg//h", "/abcdefgh/" };
	struct trace_op op;
	for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
		g_autofree char *text = g_strdup_printf(H "stat %s\n", good[i]);
		g_autoptr(GError) error = NULL;
		g_autoptr(trace_reader) reader = helper_reader(text, &error);
		if (trace_reader_next(reader, &op, &error) != 1)
			fail_msg("%s: %s", good[i], error->message);
		assert_string_equal(op.path, good[i]);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *text = g_strdup_printf(H "stat %s\n", bad[i]);
		g_autofree char *message = helper_first_error(text);
		assert_non_null(strstr(message, "field path:"));
	}
	/* 256 bytes: one component of 255 fits, and a second '/' makes one of 254. */
	g_autofree char *name = g_strnfill(255, 'n');
	g_autofree char *edge = g_strdup_printf(H "stat /%s\n", name);
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(edge, &error);
	assert_int_equal(trace_reader_next(reader, &op, &error), 1);
	g_autofree char *over = g_strdup_printf(H "stat /%sn\n", name);
	assert_rejected_at(over, "t.trace:2:6: field path: path component longer than 255 bytes");
}

/* What the reader makes of the last line of TEXT: the op (copied path) or the error, the line number
 * cut out so a verdict on line 2 compares with one on line 3. */
struct verdict {
	struct trace_op op;
	char path[8192];
	char message[512];
};

static void last_line_verdict(const char *text, struct verdict *v)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(text, &error);
	assert_non_null(reader);
	memset(v, 0, sizeof(*v));
	int got;
	while ((got = trace_reader_next(reader, &v->op, &error)) == 1)
		if (v->op.path)
			g_strlcpy(v->path, v->op.path, sizeof(v->path));
	if (got < 0) {
		v->path[0] = '\0';
		const char *column = strchr(strchr(error->message, ':') + 1, ':'); /* after "t.trace:LINE" */
		g_strlcpy(v->message, column, sizeof(v->message));
	}
	v->op.path = NULL;
	v->op.line = 0;
}

/* LINE, last in COLD_TEXT (the full lexer) and in WARM_TEXT (the fast path), reads the same. */
static void assert_read_alike(const char *line, const char *cold_text, const char *warm_text,
			      struct verdict *cold, struct verdict *warm)
{
	last_line_verdict(cold_text, cold);
	last_line_verdict(warm_text, warm);
	if (strcmp(cold->message, warm->message) || strcmp(cold->path, warm->path) ||
	    (!cold->message[0] && !trace_op_equal(&cold->op, &warm->op)))
		fail_msg("'%s': cold '%s' '%s', warm '%s' '%s'", line, cold->path, cold->message, warm->path,
			 warm->message);
}

/* TR6: after a line "KEYWORD WARM_PATH" the keyword takes the reader's fast path, and a path
 * sharing that prefix skips its checked bytes.  Each line must read the same with the fast path
 * (warm: the warm-up line first) as through the full lexer (cold: the first op of the trace). */
static void test_parser_fast_path_reads_every_line_as_the_full_lexer_does(void **state)
{
	g_autofree char *long_ok = g_strdup_printf("/tree/%0249d", 7);        /* 256 bytes */
	g_autofree char *long_bad = g_strdup_printf("/%0256d", 7);            /* a 256-byte component */
	g_autofree char *long_deep = g_strdup_printf("/tree/%0200d/%0200d", 1, 2); /* 408 bytes */
	const char *paths[] = {
		"/tree/abc/def.h", "/tree/abc/def.c", "/tree/abc/de", "/tree/abc/../x", "/tree/abc/./x",
		"/tree/abc/..", "/tree/abc/.", "/tree//abcdefg", "/tree/abcdef/", "/tree/abc/def.h/",
		"/tree/.hidden/file", "/tree/..x/file", "/tree/x../file", "/tree/abc\x7f" "def",
		"/tree/abc\x01" "def", "/tree/abc def", "/tree/abcdef 0 10", "/tree/abcdef 5", "/tree/abcdef ",
		" /tree/abcdef", "/tree/\"q\"/x", "\"/tree/a b\"", "\"/tree/abc/def.h\"", "relative/path/x",
		"/a", "/abcdefg", "/tree/caf\xc3\xa9/x", "/tree/abc/def.h#c", "/tree/abc/def.h\r",
		"/tree/abc\\x", "/tree/abc/def.h mode=0700", long_ok, long_bad, long_deep,
		"/tree12/.", "/tree12/..", "/tree12//abc", "/tree12/.x/abc", "/tree12/../abcdefgh", "/tree12/./abcdefgh",
		"/tree12//abcdefghij", "/tree12/abcdefgh/", "/tree12/abcdefgh",
		/* '=' makes a token an option, so the path is missing (main up to e2267f6 took it as a path) */
		"/tree/abc/d=ef.h", "/tree/abc=", "/tree/abc/def.h=x", "/=",
	};
	/* Slashes at 5 and 9, and at 7: a path sharing 8 bytes must still check the slash before them. */
	const char *warm_paths[] = { "/tree/abc/def.h", "/tree12/abcdefgh" };
	const char *keywords[] = { "read", "readdir", "stat", "mkdir", "unlink", "rmdir", "fsync",
				   "delete-snapshot" };
	struct verdict *cold = g_new(struct verdict, 1), *warm = g_new(struct verdict, 1);
	for (size_t k = 0; k < G_N_ELEMENTS(keywords) * 2; k++) {
		const char *keyword = keywords[k / 2], *warm_path = warm_paths[k % 2];
		for (size_t p = 0; p < G_N_ELEMENTS(paths); p++) {
			g_autofree char *line = g_strdup_printf("%s %s", keyword, paths[p]);
			g_autofree char *cold_text = g_strdup_printf(H "%s\n", line);
			/* twice: the first line teaches the keyword, the second (fast) leaves its path behind */
			g_autofree char *warm_text = g_strdup_printf(H "%s %s\n%s %s\n%s\n", keyword, warm_path, keyword,
								     warm_path, line);
			assert_read_alike(line, cold_text, warm_text, cold, warm);
		}
	}
	/* Both keyword slots: read and readdir alternate, as in a grep. */
	last_line_verdict(H "read /tree/abc/def.h\nreaddir /tree/abc\nread /tree/abc/.\n", warm);
	assert_string_equal(warm->message, ":6: field path: '.' and '..' components are not allowed: '/tree/abc/.'");
	g_free(cold);
	g_free(warm);
	(void)state;
}

/* TR6 with options: "KEYWORD PATH key=value ..." after a warm-up line of the keyword reads the
 * same through the fast path as through the full lexer, errors and odd spacing included. */
static void test_parser_fast_path_reads_options_as_the_full_lexer_does(void **state)
{
	const char *tails[] = {
		"", " size=19286", " size=19286 atime=1796416748.748279333 mtime=1669064730",
		" atime=1796411246.860279333 mtime=1779295752", " mtime=1779295752", " atime=5", " ctime=5",
		" size=1 size=2", " size=1  atime=5", " size=1\tatime=5", " size=1 ", " size=", " size=x",
		" size=1K", " size=1 mode=0600 uid=1000 gid=100", " uid=4294967296 size=1", " mode=9",
		" size=1 ro", " ro", " 0 10", " size=\"1\"", " \"size=1\"", " bogus=1 size=1", " =1",
		" size=1 atime=1.5 atime=2", " size=1=2", " size=1 atime=-1", " size=1#x",
		/* TR7: the digits read straight into the op, at the edges of what they take */
		" size=999999999999999999", " size=9999999999999999999", " size=18446744073709551615",
		" size=18446744073709551616", " size=00", " size=1\r", " size=1K atime=5", " atime=9000000000",
		" atime=9000000001", " atime=9223372036", " atime=9223372036.854775807",
		" atime=9223372036.854775808", " atime=1.123456789", " atime=1.1234567891", " atime=1.",
		" atime=.5", " atime=0000000000001", " atime=5x", " atime=5.5.5", " atime=5 mtime=6.000000001",
		" mtime=5 mtime=6", " ctime=7 atime=1", " atime=5 size=3", " atime=12345678901",
		" size=1 atime=5 mtime=6 ctime=7 mode=0600", " atime=5\t", " atime=5\"",
	};
	const char *keywords[] = { "create", "settime", "mkdir", "read" };
	const char *warm_tails[] = { " size=1 atime=5", " atime=5", "", "" };
	struct verdict *cold = g_new(struct verdict, 1), *warm = g_new(struct verdict, 1);
	for (size_t k = 0; k < G_N_ELEMENTS(keywords); k++) {
		for (size_t t = 0; t < G_N_ELEMENTS(tails); t++) {
			g_autofree char *line = g_strdup_printf("%s /tree/abc/def.h%s", keywords[k], tails[t]);
			g_autofree char *cold_text = g_strdup_printf(H "%s\n", line);
			g_autofree char *warm_text = g_strdup_printf(H "%s /tree/abc/xyz.h%s\n%s /tree/abc/xyz.h%s\n%s\n",
								     keywords[k], warm_tails[k], keywords[k],
								     warm_tails[k], line);
			assert_read_alike(line, cold_text, warm_text, cold, warm);
		}
	}
	/* Keyword slots (TR6): five keywords in turn, each line read as the full lexer reads it. */
	const char *cycle[] = { "mkdir /tree/d", "create /tree/d/f size=1 atime=2", "settime /tree/d mtime=3",
				"read /tree/d/f", "readdir /tree/d", "stat /tree/d/f" };
	GString *text = g_string_new(H);
	for (int round = 0; round < 3; round++) {
		for (size_t c = 0; c < G_N_ELEMENTS(cycle); c++) {
			g_string_append_printf(text, "%s\n", cycle[c]);
			g_autofree char *cold_text = g_strdup_printf(H "%s\n", cycle[c]);
			last_line_verdict(cold_text, cold);
			last_line_verdict(text->str, warm);
			assert_string_equal(warm->message, "");
			assert_string_equal(warm->path, cold->path);
			assert_true(trace_op_equal(&cold->op, &warm->op));
		}
	}
	g_string_free(text, TRUE);
	/* The fast path's own answer, checked field by field. */
	last_line_verdict(H "create /tree/abc/xyz.h size=1\ncreate /tree/abc/def.h size=2 atime=3.25 mtime=4\n", warm);
	assert_string_equal(warm->message, "");
	assert_int_equal(warm->op.size, 2);
	assert_int_equal(warm->op.atime_ns, 3250000000);
	assert_int_equal(warm->op.mtime_ns, 4000000000);
	assert_int_equal(warm->op.times_given, TRACE_TIME_ATIME | TRACE_TIME_MTIME);
	last_line_verdict(H "create /tree/abc/xyz.h size=1\ncreate /tree/abc/def.h size=2 atime=3 uid=7\n", warm);
	assert_string_equal(warm->message, "");
	assert_string_equal(warm->path, "/tree/abc/def.h");
	assert_int_equal(warm->op.size, 2);
	assert_int_equal(warm->op.atime_ns, 3000000000);
	assert_int_equal(warm->op.uid, 7);
	assert_int_equal(warm->op.times_given, TRACE_TIME_ATIME);
	g_free(cold);
	g_free(warm);
	(void)state;
}

/* TR5/TR6: the fast path reads lines straight from the buffer, so the line's end is what it finds
 * after the path.  A last line without '\n', a raw NUL after the path, and a line of options past
 * TRACE_LINE_MAX read the same warm (after two lines of the keyword) as cold. */
static void test_parser_fast_path_finds_the_line_end_as_read_line_does(void **state)
{
	struct verdict *cold = g_new(struct verdict, 1), *warm = g_new(struct verdict, 1);
	/* the last line of the trace, without '\n' */
	assert_read_alike("read /tree/abc/def.h", H "read /tree/abc/def.h",
			  H "read /tree/abc/xyz.h\nread /tree/abc/xyz.h\nread /tree/abc/def.h", cold, warm);
	assert_string_equal(warm->path, "/tree/abc/def.h");
	assert_read_alike("create ... size=1", H "create /tree/abc/def.h size=1",
			  H "create /tree/a/b size=2\ncreate /tree/a/b size=2\ncreate /tree/abc/def.h size=1", cold,
			  warm);
	assert_int_equal(warm->op.size, 1);
	/* a line of 40 961 bytes whose options would all be good: too long, as read_line() says */
	g_autofree char *zeros = g_strnfill(40 * 1024, '0');
	g_autofree char *line = g_strdup_printf("create /tree/abc/def.h size=1 mtime=%s1", zeros);
	g_autofree char *cold_text = g_strdup_printf(H "%s\n", line);
	g_autofree char *warm_text = g_strdup_printf(H "create /a/b/c size=1\ncreate /a/b/c size=1\n%s\n", line);
	assert_read_alike("create ... mtime=000...", cold_text, warm_text, cold, warm);
	assert_non_null(strstr(warm->message, "field line: line longer than 40960 bytes"));
	g_free(cold);
	g_free(warm);
	(void)state;
}

/* TR6's byte classes (16 bytes a block with SSE2): every byte value but NUL, around a slash and at
 * the edges of the first block, reads warm as cold. */
static void test_parser_fast_path_classifies_every_byte_as_the_full_lexer_does(void **state)
{
	static const size_t at[] = { 1, 5, 6, 14, 15, 16, 17 }; /* "/tree/" has its slash at 5 */
	struct verdict *cold = g_new(struct verdict, 1), *warm = g_new(struct verdict, 1);
	for (unsigned b = 1; b < 256; b++) {
		for (size_t i = 0; i < G_N_ELEMENTS(at); i++) {
			char path[] = "/tree/abcdefghijklmnop";
			path[at[i]] = (char)b;
			g_autofree char *line = g_strdup_printf("read %s", path);
			g_autofree char *cold_text = g_strdup_printf(H "%s\n", line);
			g_autofree char *warm_text = g_strdup_printf(H "read /tree/abc\nread /tree/abc\n%s\n", line);
			assert_read_alike(line, cold_text, warm_text, cold, warm);
		}
	}
	g_free(cold);
	g_free(warm);
	(void)state;
}

/* The error for the LEN bytes of TEXT (which may hold NUL bytes). */
static char *first_error_of_bytes(const char *text, size_t len)
{
	FILE *stream = tmpfile();
	assert_non_null(stream);
	assert_int_equal(fwrite(text, 1, len, stream), len);
	rewind(stream);
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = trace_reader_new_from_stream(stream, "t.trace", true, &error);
	assert_non_null(reader);
	struct trace_op op;
	while (trace_reader_next(reader, &op, &error) == 1)
		;
	assert_non_null(error);
	return g_strdup(error->message);
}

/* TR6: the scan's blocks start 3 bytes before the bytes a path shares with the last one, so a block
 * can end anywhere: a slash at every place after SHARED bytes, followed by what makes a component
 * bad (or by the end), reads the same warm as cold; so does one followed by a good name. */
static void test_parser_fast_path_checks_a_slash_at_every_place_after_the_shared_bytes(void **state)
{
	static const char *const after[] = { "/x", "./x", "../x", ".", "..", "", ".x", "x" };
	struct verdict *cold = g_new(struct verdict, 1), *warm = g_new(struct verdict, 1);
	for (size_t shared = 1; shared < 36; shared++) {
		g_autofree char *last = g_strdup_printf("/%.*s%s", (int)shared - 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", "#");
		for (size_t slash = shared; slash < shared + 20; slash++) {
			for (size_t a = 0; a < G_N_ELEMENTS(after); a++) {
				/* the last path's first SHARED bytes, 'q' up to the slash, the slash, the rest */
				g_autofree char *path = g_strdup_printf("%.*s%.*s/%s", (int)shared, last, (int)(slash - shared),
									"qqqqqqqqqqqqqqqqqqqqqqqq", after[a]);
				g_autofree char *line = g_strdup_printf("read %s", path);
				g_autofree char *cold_text = g_strdup_printf(H "%s\n", line);
				g_autofree char *warm_text = g_strdup_printf(H "read %s\nread %s\n%s\n", last, last, line);
				assert_read_alike(line, cold_text, warm_text, cold, warm);
			}
		}
	}
	g_free(cold);
	g_free(warm);
	(void)state;
}

/* A raw NUL ends the fast path's scan as the sentinel does; it is an error, at its column. */
static void test_parser_fast_path_rejects_a_raw_nul_after_the_path(void **state)
{
	static const char cold[] = H "read /tree/abc/def.h\0x\n";
	static const char warm[] = H "read /tree/abc/xyz.h\nread /tree/abc/xyz.h\nread /tree/abc/def.h\0x\n";
	g_autofree char *cold_message = first_error_of_bytes(cold, sizeof(cold) - 1);
	g_autofree char *warm_message = first_error_of_bytes(warm, sizeof(warm) - 1);
	assert_string_equal(cold_message, "t.trace:2:21: field path: control byte 0x00 (write it as \\x00 inside quotes)");
	assert_string_equal(warm_message, "t.trace:4:21: field path: control byte 0x00 (write it as \\x00 inside quotes)");
	(void)state;
}

static void test_parser_rejects_a_path_longer_than_4095_bytes(void **state)
{
	g_autoptr(GString) path = g_string_new(NULL);
	while (path->len < 4096)
		g_string_append(path, "/abcdefg");
	g_string_truncate(path, 4096);
	g_autofree char *text = g_strdup_printf(H "stat %s\n", path->str);
	assert_rejected_at(text, "t.trace:2:6: field path: longer than 4095 bytes");
}

static void test_parser_stops_after_the_first_error(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(H "bogus\nsync\n", &error);
	struct trace_op op;
	assert_int_equal(trace_reader_next(reader, &op, &error), -1);
	assert_true(g_error_matches(error, TRACE_ERROR, TRACE_ERROR_SYNTAX));
	g_clear_error(&error);
	assert_int_equal(trace_reader_next(reader, &op, &error), -1);
	assert_non_null(error);
}

static void test_reader_open_reports_a_missing_file(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = trace_reader_open("/nonexistent/t.trace", &error);
	assert_null(reader);
	assert_true(g_error_matches(error, TRACE_ERROR, TRACE_ERROR_IO));
	assert_true(g_str_has_prefix(error->message, "/nonexistent/t.trace: cannot open:"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parser_rejects_a_missing_header_with_line_and_column),
		cmocka_unit_test(test_parser_rejects_an_empty_trace),
		cmocka_unit_test(test_parser_rejects_an_unsupported_version),
		cmocka_unit_test(test_parser_rejects_an_unknown_op_with_column),
		cmocka_unit_test(test_parser_rejects_trailing_garbage_after_the_last_argument),
		cmocka_unit_test(test_parser_rejects_a_missing_positional_at_end_of_line),
		cmocka_unit_test(test_parser_rejects_half_a_read_range),
		cmocka_unit_test(test_parser_rejects_create_without_size),
		cmocka_unit_test(test_parser_rejects_settime_without_any_time),
		cmocka_unit_test(test_parser_rejects_a_non_number_size_with_the_value_column),
		cmocka_unit_test(test_parser_rejects_a_size_that_overflows_64_bits),
		cmocka_unit_test(test_parser_rejects_a_size_suffix_that_overflows),
		cmocka_unit_test(test_parser_rejects_a_uid_above_32_bits),
		cmocka_unit_test(test_parser_rejects_a_non_octal_mode),
		cmocka_unit_test(test_parser_rejects_a_mode_beyond_permission_bits),
		cmocka_unit_test(test_parser_rejects_a_time_with_ten_fraction_digits),
		cmocka_unit_test(test_parser_rejects_a_time_that_overflows_nanoseconds),
		cmocka_unit_test(test_parser_rejects_a_duration_without_unit),
		cmocka_unit_test(test_parser_rejects_a_duration_with_an_unknown_unit),
		cmocka_unit_test(test_parser_rejects_a_fraction_of_a_nanosecond),
		cmocka_unit_test(test_parser_rejects_a_clock_without_plus_or_at),
		cmocka_unit_test(test_parser_rejects_an_unknown_key_naming_it),
		cmocka_unit_test(test_parser_rejects_a_key_on_an_op_without_options),
		cmocka_unit_test(test_parser_rejects_a_duplicate_key_at_the_second_one),
		cmocka_unit_test(test_parser_rejects_a_duplicate_ro_flag),
		cmocka_unit_test(test_parser_rejects_unterminated_quote_with_column),
		cmocka_unit_test(test_parser_rejects_a_bad_escape_at_the_backslash),
		cmocka_unit_test(test_parser_rejects_a_short_hex_escape),
		cmocka_unit_test(test_parser_rejects_text_glued_to_a_closing_quote),
		cmocka_unit_test(test_parser_rejects_a_quote_inside_an_unquoted_token),
		cmocka_unit_test(test_parser_rejects_a_quoted_key_value),
		cmocka_unit_test(test_parser_rejects_a_relative_path),
		cmocka_unit_test(test_parser_rejects_a_relative_second_path),
		cmocka_unit_test(test_parser_rejects_an_empty_path_component),
		cmocka_unit_test(test_parser_rejects_a_trailing_slash),
		cmocka_unit_test(test_parser_rejects_dot_dot_components),
		cmocka_unit_test(test_parser_path_check_agrees_at_the_edges_of_its_fast_path),
		cmocka_unit_test(test_parser_rejects_an_empty_quoted_path),
		cmocka_unit_test(test_parser_rejects_a_nul_byte_in_a_path),
		cmocka_unit_test(test_parser_rejects_a_raw_control_byte),
		cmocka_unit_test(test_parser_rejects_an_empty_mark_label),
		cmocka_unit_test(test_parser_reports_the_line_of_a_later_error),
		cmocka_unit_test(test_parser_rejects_a_component_longer_than_255_bytes),
		cmocka_unit_test(test_parser_fast_path_reads_every_line_as_the_full_lexer_does),
		cmocka_unit_test(test_parser_fast_path_reads_options_as_the_full_lexer_does),
		cmocka_unit_test(test_parser_fast_path_finds_the_line_end_as_read_line_does),
		cmocka_unit_test(test_parser_fast_path_rejects_a_raw_nul_after_the_path),
		cmocka_unit_test(test_parser_fast_path_classifies_every_byte_as_the_full_lexer_does),
		cmocka_unit_test(test_parser_fast_path_checks_a_slash_at_every_place_after_the_shared_bytes),
		cmocka_unit_test(test_parser_rejects_a_path_longer_than_4095_bytes),
		cmocka_unit_test(test_parser_stops_after_the_first_error),
		cmocka_unit_test(test_reader_open_reports_a_missing_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
