/*
 * workloads/trace_writer.c - write trace ops as lines of the trace format.
 *
 * How it works: each op is checked with trace_op_check(), then rendered into
 * one reused GString from the same grammar table the reader uses
 * (trace_syntax.c): the keyword, the positionals in order, then the options.
 * Options equal to the reader's defaults (mode 0755/0644, uid 0, gid 0) are
 * left out, since the reader fills them back in.  Strings go through
 * trace_syntax_append_token(), which quotes exactly when the lexer needs it.
 *
 * Invariants:
 *   TW1 parse(write(op)) == op for every op trace_op_check() accepts;
 *   TW2 one op, one line; the header is written once, before any op;
 *   TW3 a write error is sticky: it is reported by the call that saw it and by
 *      trace_writer_finish(), so a generator cannot end "successfully" with
 *      a truncated trace.
 */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "trace_syntax.h"

struct trace_writer {
	FILE *out;
	GString *line;        /* reused for every op */
	uint64_t ops;
	uint64_t bytes;       /* written so far, header and comments included */
	uint64_t max_ops, max_bytes; /* 0: no bound (trace_writer_set_limits) */
	bool begun;
	int write_errno;      /* TW3: 0, or the errno of the first failed write */
};

struct trace_writer *trace_writer_new(FILE *out)
{
	struct trace_writer *w = g_new0(struct trace_writer, 1);
	w->out = out;
	w->line = g_string_sized_new(256);
	return w;
}

void trace_writer_free(struct trace_writer *writer)
{
	if (!writer)
		return;
	g_string_free(writer->line, TRUE);
	g_free(writer);
}

uint64_t trace_writer_op_count(const struct trace_writer *writer)
{
	return writer->ops;
}

static bool io_error(struct trace_writer *w, GError **error)
{
	g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "write error: %s", g_strerror(w->write_errno));
	return false;
}

void trace_writer_set_limits(struct trace_writer *writer, uint64_t max_ops, uint64_t max_bytes)
{
	writer->max_ops = max_ops;
	writer->max_bytes = max_bytes;
}

uint64_t trace_writer_max_ops(const struct trace_writer *writer)
{
	return writer->max_ops;
}

/* Write w->line plus a newline, within the writer's bounds. */
static bool emit_line(struct trace_writer *w, GError **error)
{
	if (w->write_errno)
		return io_error(w, error);
	g_string_append_c(w->line, '\n');
	if (w->max_bytes && w->bytes + w->line->len > w->max_bytes) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_LIMIT,
			    "the trace would pass %" G_GUINT64_FORMAT " bytes (--max-bytes); stopped after %"
			    G_GUINT64_FORMAT " ops", w->max_bytes, w->ops);
		return false;
	}
	if (fwrite(w->line->str, 1, w->line->len, w->out) != w->line->len) {
		w->write_errno = errno ? errno : EIO;
		return io_error(w, error);
	}
	w->bytes += w->line->len;
	return true;
}

bool trace_writer_begin(struct trace_writer *writer, GError **error)
{
	g_return_val_if_fail(!writer->begun, false);
	writer->begun = true;
	g_string_assign(writer->line, TRACE_HEADER);
	return emit_line(writer, error);
}

bool trace_writer_comment(struct trace_writer *writer, GError **error, const char *format, ...)
{
	va_list args;
	g_string_assign(writer->line, "# ");
	va_start(args, format);
	g_string_append_vprintf(writer->line, format, args);
	va_end(args);
	/* A newline would end the comment early and make the rest an op line. */
	for (size_t i = 0; i < writer->line->len; i++)
		if (writer->line->str[i] == '\n' || writer->line->str[i] == '\r')
			writer->line->str[i] = ' ';
	return emit_line(writer, error);
}

static void append_positional(GString *line, const struct trace_op *op, const struct trace_positional *p)
{
	char number[TRACE_SYNTAX_NUMBER_MAX];

	g_string_append_c(line, ' ');
	switch (p->slot) {
	case TRACE_SLOT_PATH:
		trace_syntax_append_token(line, op->path);
		return;
	case TRACE_SLOT_PATH2:
		trace_syntax_append_token(line, op->path2);
		return;
	case TRACE_SLOT_SIZE:
		g_string_append_printf(line, "%" PRIu64, op->size);
		return;
	case TRACE_SLOT_OFFSET:
		g_string_append_printf(line, "%" PRIu64, op->offset);
		return;
	case TRACE_SLOT_LENGTH:
		g_string_append_printf(line, "%" PRIu64, op->length);
		return;
	case TRACE_SLOT_CLOCK:
		if (op->clock_relative) {
			trace_syntax_format_duration(number, op->clock_ns);
			g_string_append_printf(line, "+%s", number);
		} else {
			trace_syntax_format_time(number, op->clock_ns);
			g_string_append_printf(line, "@%s", number);
		}
		return;
	}
}

static void append_time(GString *line, const char *key, int64_t ns)
{
	char number[TRACE_SYNTAX_NUMBER_MAX];
	trace_syntax_format_time(number, ns);
	g_string_append_printf(line, " %s=%s", key, number);
}

static void append_options(GString *line, const struct trace_op *op, const struct trace_grammar *g)
{
	if (g->keys & TRACE_KEY_SIZE)
		g_string_append_printf(line, " size=%" PRIu64, op->size);
	if ((g->keys & TRACE_KEY_MODE) && op->mode != g->default_mode)
		g_string_append_printf(line, " mode=%04" PRIo32, op->mode);
	if (op->uid)
		g_string_append_printf(line, " uid=%" PRIu32, op->uid);
	if (op->gid)
		g_string_append_printf(line, " gid=%" PRIu32, op->gid);
	if (op->times_given & TRACE_TIME_ATIME)
		append_time(line, "atime", op->atime_ns);
	if (op->times_given & TRACE_TIME_MTIME)
		append_time(line, "mtime", op->mtime_ns);
	if (op->times_given & TRACE_TIME_CTIME)
		append_time(line, "ctime", op->ctime_ns);
	if (op->readonly)
		g_string_append(line, " ro");
}

bool trace_writer_op(struct trace_writer *writer, const struct trace_op *op, GError **error)
{
	g_return_val_if_fail(writer->begun, false);
	if (writer->max_ops && writer->ops >= writer->max_ops) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_LIMIT,
			    "the trace would pass %" G_GUINT64_FORMAT " ops (--max-ops)", writer->max_ops);
		return false;
	}
	if (!trace_op_check(op, error))
		return false;
	const struct trace_grammar *g = trace_syntax_grammar(op->kind);
	int n = op->kind == TRACE_READ && !op->has_range ? g->n_required : g->n_positional;

	g_string_assign(writer->line, g->name);
	for (int i = 0; i < n; i++)
		append_positional(writer->line, op, &g->positional[i]);
	append_options(writer->line, op, g);
	if (!emit_line(writer, error))
		return false;
	writer->ops++;
	return true;
}

bool trace_writer_path_op(struct trace_writer *writer, enum trace_op_kind kind, const char *path,
			  GError **error)
{
	struct trace_op op;
	trace_op_init(&op, kind);
	op.path = path;
	return trace_writer_op(writer, &op, error);
}

bool trace_writer_sync(struct trace_writer *writer, GError **error)
{
	struct trace_op op;
	trace_op_init(&op, TRACE_SYNC);
	return trace_writer_op(writer, &op, error);
}

bool trace_writer_mark(struct trace_writer *writer, const char *label, GError **error)
{
	struct trace_op op;
	trace_op_init(&op, TRACE_MARK);
	op.path2 = label;
	return trace_writer_op(writer, &op, error);
}

static bool write_clock(struct trace_writer *writer, bool relative, int64_t ns, GError **error)
{
	struct trace_op op;
	trace_op_init(&op, TRACE_CLOCK);
	op.clock_relative = relative;
	op.clock_ns = ns;
	return trace_writer_op(writer, &op, error);
}

bool trace_writer_clock_advance(struct trace_writer *writer, int64_t ns, GError **error)
{
	return write_clock(writer, true, ns, error);
}

bool trace_writer_clock_set(struct trace_writer *writer, int64_t ns_since_epoch, GError **error)
{
	return write_clock(writer, false, ns_since_epoch, error);
}

bool trace_writer_finish(struct trace_writer *writer, GError **error)
{
	if (!writer->write_errno && fflush(writer->out) != 0)
		writer->write_errno = errno ? errno : EIO;
	if (!writer->write_errno && ferror(writer->out))
		writer->write_errno = EIO;
	return writer->write_errno ? io_error(writer, error) : true;
}
