/*
 * tests/fuzz/fuzz_trace.c - fuzz the trace reader and the writer.
 *
 * The input is a trace file. The harness reads it to the end through
 * trace_reader_new_from_stream() over fmemopen() and holds the reader to
 * workloads/trace.h, aborting when any of these breaks:
 *   FZT1 every op the reader returns passes trace_op_check() (TO1-TO3) and
 *      carries the line the reader is on (TO4);
 *   FZT2 the writer accepts it, and reading the writer's line back gives an
 *      equal op and nothing else (parse(write(o)) == o);
 *   FZT3 an error is a TRACE_ERROR whose message starts "fuzz:LINE:COLUMN:
 *      field " (LINE the reader's line) or, for a header error, "fuzz:";
 *   FZT4 after an error the reader stays stopped (-1 again).
 * The sanitizers (tools/fuzz.sh) add: no out-of-bounds access, no
 * undefined behaviour, no leak.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "trace.h"

#define NAME "fuzz"

/* FZT3: "fuzz:LINE:COLUMN: field ..." with LINE == line. */
static bool message_names_line(const char *message, uint64_t line)
{
	g_autofree char *prefix = g_strdup_printf(NAME ":%" G_GUINT64_FORMAT ":", line);
	if (!g_str_has_prefix(message, prefix))
		return false;
	const char *p = message + strlen(prefix);
	if (!isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	return g_str_has_prefix(p, ": field ");
}

/* FZT2: write OP with the writer, read it back. */
static void check_round_trip(const struct trace_op *op)
{
	g_autofree char *text = NULL; /* declared first, so freed after the reader over it */
	size_t text_size = 0;
	FILE *out = open_memstream(&text, &text_size);
	FUZZ_REQUIRE(out, "open_memstream failed");
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_writer) writer = trace_writer_new(out);
	bool written = trace_writer_begin(writer, &error) && trace_writer_op(writer, op, &error) &&
		       trace_writer_finish(writer, &error);
	FUZZ_REQUIRE(written, "the writer refused a %s the reader returned: %s", trace_op_kind_name(op->kind),
		     error->message);
	fclose(out);

	FILE *in = fmemopen(text, text_size, "r");
	FUZZ_REQUIRE(in, "fmemopen failed");
	g_autoptr(trace_reader) again = trace_reader_new_from_stream(in, "roundtrip", true, &error);
	FUZZ_REQUIRE(again, "the writer's header does not read back: %s", error->message);
	struct trace_op back;
	int got = trace_reader_next(again, &back, &error);
	FUZZ_REQUIRE(got == 1, "the writer's line does not read back: %s\n%s", error ? error->message : "end", text);
	FUZZ_REQUIRE(trace_op_equal(op, &back), "the op read back differs from the op written:\n%s", text);
	got = trace_reader_next(again, &back, &error);
	FUZZ_REQUIRE(got == 0, "the writer wrote more than one op:\n%s", text);
}

/* FZT1 and FZT2 for each op, FZT3 and FZT4 at the error that ends the trace, if any. */
static void read_all(struct trace_reader *reader)
{
	struct trace_op op;
	g_autoptr(GError) error = NULL;
	int got;
	while ((got = trace_reader_next(reader, &op, &error)) == 1) {
		g_autoptr(GError) check_error = NULL;
		FUZZ_REQUIRE(trace_op_check(&op, &check_error), "the reader returned an op that fails its check: %s",
			     check_error->message);
		FUZZ_REQUIRE(op.line == trace_reader_line(reader), "op line %" G_GUINT64_FORMAT " but reader at %"
			     G_GUINT64_FORMAT, op.line, trace_reader_line(reader));
		check_round_trip(&op);
	}
	if (got == 0) {
		FUZZ_REQUIRE(!error, "end of trace with an error set");
		return;
	}
	FUZZ_REQUIRE(error && error->domain == TRACE_ERROR, "-1 without a TRACE_ERROR");
	FUZZ_REQUIRE(message_names_line(error->message, trace_reader_line(reader)),
		     "the message does not name file, line, column and field: %s", error->message);
	g_autoptr(GError) again = NULL;
	FUZZ_REQUIRE(trace_reader_next(reader, &op, &again) == -1 && again, "the reader went on after an error");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* fmemopen() of zero bytes: give it one byte it will not read. */
	static char empty[1];
	FILE *in = size ? fmemopen((void *)data, size, "r") : fmemopen(empty, 0, "r");
	if (!in)
		in = fopen("/dev/null", "r");
	FUZZ_REQUIRE(in, "no stream for the input");
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = trace_reader_new_from_stream(in, NAME, true, &error);
	if (!reader) {
		FUZZ_REQUIRE(error && error->domain == TRACE_ERROR && g_str_has_prefix(error->message, NAME ":"),
			     "a header error does not name the file: %s", error ? error->message : "(none)");
		return 0;
	}
	read_all(reader);
	return 0;
}
