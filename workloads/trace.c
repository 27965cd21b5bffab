/*
 * workloads/trace.c - trace ops and the streaming trace reader (the parser).
 *
 * How reading works:
 *
 *   stream --fread--> chunk buffer (fixed, READ_CHUNK) --memchr--> line --lexer--> tokens --grammar--> trace_op
 *                                   |                                                                   ^
 *                                   +--- trace_reader_next(): one pass over the path (TR6) --------------+
 *
 *   0. trace_reader_next() takes the lines most traces are made of ("read
 *      PATH", "create PATH size=N atime=T") straight from the buffer: a
 *      remembered keyword, then one pass eight bytes at a time that checks
 *      the path and finds where it ends, then the options; the '\n' after
 *      them is the line's end.  Anything else goes to steps 1-3.
 *   1. read_line() finds the next '\n' in r->buf with memchr and makes
 *      r->line point at the line inside the buffer; no byte is copied unless a
 *      line straddles the end of the buffer, when the unread tail moves to the
 *      front and fread() fills the rest.  A line longer than TRACE_LINE_MAX
 *      bytes is an error, found within the first TRACE_LINE_MAX + 1 bytes, so
 *      memory stays bounded whatever the input.  It strips "\n" or "\r\n",
 *      NUL-terminates the line where the '\n' was, and counts the line.
 *   2. next_token() scans the next token from r->pos.  A quoted token is
 *      decoded in place (escapes only shrink text, so the decoded bytes and a
 *      terminating NUL always fit where the raw token was); an unquoted token
 *      is terminated by overwriting the delimiter after it.  So op strings are
 *      pointers into r->line, valid until the next line is read (TO5).  An
 *      unquoted token is scanned with a 256-entry byte class table (TR4).
 *   3. parse_op() looks the op keyword up in the grammar table
 *      (trace_syntax.c), consumes the positionals in order, then key=value
 *      options and flags, and checks what is required.
 *
 * Invariants:
 *   TR1 r->line_no is the number of the line whose tokens are being parsed;
 *   TR2 every error message is "NAME:LINE:COLUMN: field FIELD: reason", with
 *      COLUMN the 1-based byte column of the raw token (or value after '=');
 *   TR3 once an error was returned, the reader is poisoned: next() keeps
 *      returning -1 (a half-read line cannot be resumed sensibly);
 *   TR4 nothing on the path of a well-formed line allocates or formats: the
 *      strings of error messages are built only once an error is certain;
 *   TR5 r->buf[r->buf_start .. r->buf_end) are the bytes read but not yet
 *      consumed; r->buf[r->buf_end] is a NUL sentinel (the spare byte past
 *      READ_CHUNK, so a last line without '\n' is NUL-terminated too), and
 *      READ_PAD readable bytes follow it: a scan 8 or 16 bytes at a time that
 *      stops at the first byte no unquoted token holds never leaves the
 *      buffer, and never takes the sentinel for a line's end;
 *   TR6 the fast path (trace_reader_next) returns exactly the op read_line()
 *      and parse_op() would: it takes only "KEYWORD PATH\n" or "KEYWORD PATH
 *      key=value ...\n", whole in the buffer and at most TRACE_LINE_MAX
 *      bytes, with a keyword of the last lines parse_op() accepted, one ' '
 *      before each token, a path that is one plain token and certainly good,
 *      and plain key=value options the grammar takes, each once, each value
 *      good, every required key there; anything else ("\r\n", a line that
 *      runs past the buffer, errors included) goes to read_line() and
 *      parse_op(), and nothing is consumed or written before the line is
 *      known good. Most lines of a grep or a find (read, readdir, stat) and
 *      of a tree's copy (create size= atime= mtime=, settime) are such lines:
 *      they cost one word pass over the path instead of a memchr for the
 *      line's end, lexing and checking. The last KEYWORD_SLOTS keywords are
 *      remembered (a tree's copy alternates mkdir, create and settime);
 *   TR7 the fast path's options read "size=N" and "atime=T" (mtime, ctime)
 *      straight into the op only in the common form: N at most 18 digits, T
 *      at most 9 000 000 000 seconds and a fraction of 1-9 digits, ended by
 *      ' ' or '\n' (so no value can overflow on the way); any other value, or
 *      key, goes to apply_key(), whose verdict is the full lexer's. A failed
 *      attempt stores nothing;
 *   TR8 a reader watching a cancel fd (trace_reader_watch_cancel: a stream
 *      that is not a regular file, opened by trace_reader_open) reads it
 *      unbuffered, with poll() and read(2) only: stdio holds none of its bytes,
 *      so the raw reads see the stream exactly where fread() left it;
 *   TR9 such a reader never blocks in read(2) while the cancel fd is readable:
 *      it polls both before every read, and a readable cancel fd ends the read
 *      with TRACE_ERROR_IO "cancelled" (poisoned, TR3), whatever the stream
 *      does (a writer that is alive but silent);
 *   TR10 an op trace_reader_next() returns carries its strings' lengths:
 *      path_len == strlen(path) and path2_len == strlen(path2) (0 for a
 *      string it has not), from the scan or the token that found them, so
 *      no one after the reader measures them again; and where its path's
 *      last component starts: path[name_at - 1] is its last '/' (a path is
 *      absolute, TO1), so that a walk need not search the name for one; and,
 *      from a reader told to hash names (trace_reader_hash_names()), name_hash
 *      is that function of path[name_at, path_len), on the reader's thread;
 *      and path[0, shared) is the path of the op with a path read just before
 *      (the fast path's last_path is always that op's path, or forgotten).
 */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "trace_path_scan.h"
#include "trace_syntax.h"

/* Bytes fread() fills at once: several lines per call, and room for a whole maximal line (TR5). */
#define READ_CHUNK (256 * 1024)
G_STATIC_ASSERT(READ_CHUNK > TRACE_LINE_MAX + 1);
/* Bytes past the sentinel a scan may load (TR5): the rest of a 16-byte block that holds the sentinel. */
#define READ_PAD 16

G_DEFINE_QUARK(cowsim-trace-error-quark, trace_error)

/* --- ops --------------------------------------------------------------------- */

const char *trace_op_kind_name(enum trace_op_kind kind)
{
	if ((int)kind < 0 || (int)kind >= TRACE_OP_KIND_COUNT)
		return "?";
	return trace_syntax_grammar(kind)->name;
}

bool trace_op_kind_from_name(const char *name, enum trace_op_kind *kind)
{
	for (int k = 0; k < TRACE_OP_KIND_COUNT; k++) {
		if (!strcmp(trace_syntax_grammar((enum trace_op_kind)k)->name, name)) {
			*kind = (enum trace_op_kind)k;
			return true;
		}
	}
	return false;
}

void trace_op_init(struct trace_op *op, enum trace_op_kind kind)
{
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->mode = trace_syntax_grammar(kind)->default_mode;
}

static bool same_string(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

bool trace_op_equal(const struct trace_op *a, const struct trace_op *b)
{
	return a->kind == b->kind && same_string(a->path, b->path) && same_string(a->path2, b->path2) &&
	       a->size == b->size && a->offset == b->offset && a->length == b->length &&
	       a->mode == b->mode && a->uid == b->uid && a->gid == b->gid &&
	       a->times_given == b->times_given && a->atime_ns == b->atime_ns &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns &&
	       a->readonly == b->readonly && a->has_range == b->has_range &&
	       a->clock_relative == b->clock_relative && a->clock_ns == b->clock_ns;
}

/* --- checking an op built in memory ------------------------------------------ */

static bool check_fail(GError **error, const char *field, const char *reason)
{
	g_set_error(error, TRACE_ERROR, TRACE_ERROR_VALUE, "field %s: %s", field, reason);
	return false;
}

static const char *slot_string(const struct trace_op *op, enum trace_slot slot)
{
	return slot == TRACE_SLOT_PATH ? op->path : slot == TRACE_SLOT_PATH2 ? op->path2 : NULL;
}

static bool slot_is_used(const struct trace_grammar *g, enum trace_slot slot)
{
	for (int i = 0; i < g->n_positional; i++)
		if (g->positional[i].slot == slot)
			return true;
	return false;
}

/* The positionals: strings set and valid, unused slots empty (TO1, TO3). */
static bool check_positionals(const struct trace_op *op, const struct trace_grammar *g, GError **error)
{
	for (int i = 0; i < g->n_positional; i++) {
		const struct trace_positional *p = &g->positional[i];
		const char *s = slot_string(op, p->slot);
		if (p->value != TRACE_VALUE_PATH && p->value != TRACE_VALUE_STRING)
			continue;
		if (!s)
			return check_fail(error, p->field, "missing");
		const char *reason = p->value == TRACE_VALUE_PATH ? trace_syntax_path_problem(s, strlen(s))
								  : trace_syntax_string_problem(s, strlen(s));
		if (reason)
			return check_fail(error, p->field, reason);
	}
	if (op->path && !slot_is_used(g, TRACE_SLOT_PATH))
		return check_fail(error, "path", "this op takes no path");
	if (op->path2 && !slot_is_used(g, TRACE_SLOT_PATH2))
		return check_fail(error, "path2", "this op takes no second path");
	return true;
}

/* Numbers the op does not take must be zero (TO3), so write() loses nothing. */
static bool check_numbers(const struct trace_op *op, const struct trace_grammar *g, GError **error)
{
	bool has_size = (g->keys & TRACE_KEY_SIZE) || slot_is_used(g, TRACE_SLOT_SIZE);
	bool has_range = op->kind == TRACE_WRITE || (op->kind == TRACE_READ && op->has_range);

	if (op->size && !has_size)
		return check_fail(error, "size", "this op takes no size");
	if ((op->offset || op->length) && !has_range)
		return check_fail(error, "offset", "this op takes no range");
	if (op->has_range && op->kind != TRACE_READ)
		return check_fail(error, "offset", "has_range is only for read");
	if (!(g->keys & TRACE_KEY_MODE) && op->mode)
		return check_fail(error, "mode", "this op takes no mode");
	if (op->mode > 07777)
		return check_fail(error, "mode", "out of range (mode is permission bits, at most 07777)");
	if ((op->uid && !(g->keys & TRACE_KEY_UID)) || (op->gid && !(g->keys & TRACE_KEY_GID)))
		return check_fail(error, "uid", "this op takes no owner");
	if (op->readonly && !g->ro_flag)
		return check_fail(error, "ro", "this op takes no ro flag");
	if (op->kind != TRACE_CLOCK && (op->clock_ns || op->clock_relative))
		return check_fail(error, "time", "only clock takes a time");
	if (op->kind == TRACE_CLOCK && op->clock_relative && op->clock_ns < 0)
		return check_fail(error, "time", "a duration cannot be negative");
	return true;
}

static bool check_times(const struct trace_op *op, const struct trace_grammar *g, GError **error)
{
	static const struct { unsigned bit, key; const char *name; } times[] = {
		{ TRACE_TIME_ATIME, TRACE_KEY_ATIME, "atime" },
		{ TRACE_TIME_MTIME, TRACE_KEY_MTIME, "mtime" },
		{ TRACE_TIME_CTIME, TRACE_KEY_CTIME, "ctime" },
	};
	const int64_t values[] = { op->atime_ns, op->mtime_ns, op->ctime_ns };

	for (size_t i = 0; i < G_N_ELEMENTS(times); i++) {
		bool given = op->times_given & times[i].bit;
		if (given && !(g->keys & times[i].key))
			return check_fail(error, times[i].name, "this op takes no such time");
		if (!given && values[i])
			return check_fail(error, times[i].name, "set but not marked in times_given");
	}
	if (op->times_given & ~(unsigned)(TRACE_TIME_ATIME | TRACE_TIME_MTIME | TRACE_TIME_CTIME))
		return check_fail(error, "times_given", "unknown bits");
	if (g->needs_a_time && !(op->times_given & (TRACE_TIME_ATIME | TRACE_TIME_MTIME)))
		return check_fail(error, "atime", "missing (settime needs atime= or mtime=)");
	return true;
}

bool trace_op_check(const struct trace_op *op, GError **error)
{
	if ((int)op->kind < 0 || (int)op->kind >= TRACE_OP_KIND_COUNT)
		return check_fail(error, "op", "unknown op kind");
	const struct trace_grammar *g = trace_syntax_grammar(op->kind);
	return check_positionals(op, g, error) && check_numbers(op, g, error) && check_times(op, g, error);
}

/* --- the reader -------------------------------------------------------------- */

/* An op keyword the fast path knows (TR6): "NAME " as the first bytes of a little-endian word
 * (names of at most 7 bytes: all the keywords whose path may stand alone but delete-snapshot);
 * name NULL when the slot is empty. */
struct keyword {
	uint64_t head, head_mask;
	const char *name;
	size_t len;
	enum trace_op_kind kind;
	uint32_t default_mode; /* what trace_op_init() sets */
	const struct trace_grammar *grammar;
	bool stands_alone;     /* "KEYWORD PATH" with no option is a whole line */
};

/* The fast path remembers this many keywords: a tree's copy alternates mkdir, create and settime,
 * a grep read and readdir. */
#define KEYWORD_SLOTS 4

struct trace_reader {
	FILE *stream;
	bool owns_stream;
	char *name;            /* for messages */
	char *buf;             /* READ_CHUNK + 1 + READ_PAD bytes, reused for every chunk (TR5) */
	size_t buf_start;      /* first byte not yet consumed */
	size_t buf_end;        /* one past the last byte read */
	bool at_eof;           /* fread() reached the end of the stream */
	bool unbuffered;       /* TR8: a stream that is no regular file, opened unbuffered */
	int cancel_fd;         /* TR8/TR9: -1, or polled before every read(2) */
	char *line;            /* the current line, inside buf, NUL-terminated */
	size_t line_len;
	size_t pos;            /* the lexer's cursor in line */
	uint64_t line_no;
	bool poisoned;         /* TR3 */
	/* TR6: the last keywords parsed in full whose grammar lets "KEYWORD PATH" stand alone, newest
	 * first, and the last path the fast path accepted */
	struct keyword path_only[KEYWORD_SLOTS];
	const char *last_path; /* inside buf; refill() forgets it (last_path_len 0) */
	size_t last_path_len;
	trace_name_hash_fn name_hash; /* TR10: NULL, or what hashes each op's last name */
};

/* One token of the current line. */
struct token {
	const char *text;      /* decoded, NUL-terminated, inside r->line */
	size_t len;            /* decoded length (may include NUL bytes from \x00) */
	size_t column;         /* 1-based column of the raw token */
	bool quoted;
};

static bool fail(struct trace_reader *r, GError **error, int code, size_t column, const char *field,
		 const char *format, ...) G_GNUC_PRINTF(6, 7);

static bool fail(struct trace_reader *r, GError **error, int code, size_t column, const char *field,
		 const char *format, ...)
{
	va_list args;
	va_start(args, format);
	g_autofree char *reason = g_strdup_vprintf(format, args);
	va_end(args);
	g_set_error(error, TRACE_ERROR, code, "%s:%" PRIu64 ":%zu: field %s: %s", r->name,
		    r->line_no, column, field, reason);
	r->poisoned = true;
	return false;
}

/* fail() with the offending token shown: "REASON: 'TOKEN'". */
static bool fail_token(struct trace_reader *r, GError **error, int code, size_t column, const char *field,
		       const char *reason, const char *text, size_t len)
{
	g_autofree char *shown = trace_syntax_display(text, len);
	return fail(r, error, code, column, field, "%s: '%s'", reason, shown);
}

static bool fail_value(struct trace_reader *r, GError **error, size_t column, const char *field,
		       const char *reason, const char *text, size_t len)
{
	return fail_token(r, error, TRACE_ERROR_VALUE, column, field, reason, text, len);
}

/* TR8/TR9: up to WANT bytes of the stream into DST with read(2), each read after a poll() that
 * finds data (or the end) on the stream and nothing on the cancel fd.  Fewer than WANT at the end
 * of the stream, or with *ERR an errno (ECANCELED: the cancel fd became readable). */
static size_t read_watching(struct trace_reader *r, char *dst, size_t want, int *err)
{
	size_t got = 0;
	while (got < want) {
		struct pollfd fds[2] = { { .fd = fileno(r->stream), .events = POLLIN },
					 { .fd = r->cancel_fd, .events = POLLIN } };
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			*err = errno;
			break;
		}
		if (fds[1].revents) {
			*err = ECANCELED;
			break;
		}
		ssize_t n = read(fds[0].fd, dst + got, want - got);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			*err = errno;
			break;
		}
		got += (size_t)n;
	}
	return got;
}

/* Move the unread tail to the front of the buffer and fill the rest.  false on a read error. */
static bool refill(struct trace_reader *r, GError **error)
{
	size_t tail = r->buf_end - r->buf_start;

	memmove(r->buf, r->buf + r->buf_start, tail);
	r->buf_start = 0;
	r->buf_end = tail;
	int read_error = 0;
	size_t got = r->cancel_fd >= 0 ? read_watching(r, r->buf + tail, READ_CHUNK - tail, &read_error)
				       : fread(r->buf + tail, 1, READ_CHUNK - tail, r->stream);
	r->buf_end += got;
	r->buf[r->buf_end] = '\0'; /* TR5's sentinel */
	r->last_path_len = 0;       /* its bytes moved */
	if (got == READ_CHUNK - tail)
		return true;
	if (read_error || (r->cancel_fd < 0 && ferror(r->stream))) {
		if (read_error == ECANCELED)
			g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s:%" PRIu64 ": read cancelled", r->name,
				    r->line_no + 1);
		else
			g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s:%" PRIu64 ": read error: %s", r->name,
				    r->line_no + 1, g_strerror(read_error ? read_error : errno));
		r->poisoned = true;
		return false;
	}
	r->at_eof = true;
	return true;
}

/* Make the LEN bytes at r->buf[r->buf_start] the current line; CONSUMED bytes are used up. */
static void take_line(struct trace_reader *r, size_t len, size_t consumed)
{
	char *line = r->buf + r->buf_start;

	r->buf_start += consumed;
	if (len > 0 && line[len - 1] == '\r')
		len--; /* accept CRLF line ends */
	line[len] = '\0'; /* over the '\n', or the spare byte of TR5 */
	r->line = line;
	r->line_len = len;
	r->pos = 0;
	r->line_no++;
}

/* Read one line into r->line.  1 = a line, 0 = end of stream, -1 = error. */
static int read_line(struct trace_reader *r, GError **error)
{
	for (;;) {
		size_t avail = r->buf_end - r->buf_start;
		size_t scan = MIN(avail, (size_t)TRACE_LINE_MAX + 1);
		const char *nl = memchr(r->buf + r->buf_start, '\n', scan);
		if (nl) {
			size_t len = (size_t)(nl - (r->buf + r->buf_start));
			take_line(r, len, len + 1);
			return 1;
		}
		if (avail > TRACE_LINE_MAX) {
			r->line_no++;
			fail(r, error, TRACE_ERROR_SYNTAX, TRACE_LINE_MAX + 1, "line", "line longer than %d bytes",
			     TRACE_LINE_MAX);
			return -1;
		}
		if (r->at_eof) {
			if (avail == 0)
				return 0;
			take_line(r, avail, avail);
			return 1;
		}
		if (!refill(r, error))
			return -1;
	}
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static void skip_blanks(struct trace_reader *r)
{
	while (r->pos < r->line_len && is_blank(r->line[r->pos]))
		r->pos++;
}

/* A line with nothing to parse: blank, or a comment ('#' first, after blanks). */
static bool line_is_empty(struct trace_reader *r)
{
	skip_blanks(r);
	return r->pos == r->line_len || r->line[r->pos] == '#';
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode the escape at line[*in] (the byte after '\') into *out. */
static bool decode_escape(struct trace_reader *r, size_t *in, char *out, const char *field, GError **error)
{
	size_t backslash = *in - 1;
	char e = *in < r->line_len ? r->line[*in] : '\0';

	switch (e) {
	case '"': case '\\': *out = e; *in += 1; return true;
	case 'n': *out = '\n'; *in += 1; return true;
	case 't': *out = '\t'; *in += 1; return true;
	case 'x': {
		int hi = *in + 1 < r->line_len ? hex_value(r->line[*in + 1]) : -1;
		int lo = *in + 2 < r->line_len ? hex_value(r->line[*in + 2]) : -1;
		if (hi < 0 || lo < 0)
			return fail(r, error, TRACE_ERROR_SYNTAX, backslash + 1, field,
				    "bad escape: \\x needs two hex digits");
		*out = (char)(hi * 16 + lo);
		*in += 3;
		return true;
	}
	default:
		if (*in >= r->line_len)
			return fail(r, error, TRACE_ERROR_SYNTAX, backslash + 1, field, "unterminated quote");
		return fail(r, error, TRACE_ERROR_SYNTAX, backslash + 1, field,
			    "bad escape '\\%c' (want \\\" \\\\ \\n \\t or \\xHH)", e);
	}
}

/* Decode the quoted token starting at r->pos (the opening quote) in place. */
static bool lex_quoted(struct trace_reader *r, struct token *t, const char *field, GError **error)
{
	size_t in = r->pos + 1, out = r->pos;

	for (;;) {
		if (in >= r->line_len)
			return fail(r, error, TRACE_ERROR_SYNTAX, t->column, field, "unterminated quote");
		char c = r->line[in++];
		if (c == '"')
			break;
		if (c == '\\' && !decode_escape(r, &in, &c, field, error))
			return false;
		r->line[out++] = c;
	}
	if (in < r->line_len && !is_blank(r->line[in]))
		return fail(r, error, TRACE_ERROR_SYNTAX, in + 1, field,
			    "unexpected '%c' after the closing quote", r->line[in]);
	r->line[out] = '\0';
	t->text = r->line + r->pos;
	t->len = out - r->pos;
	t->quoted = true;
	r->pos = in;
	return true;
}

/* Bytes that may continue an unquoted token: all but blanks, '"', '\\' and control
 * bytes (NUL included, so the NUL after the line also ends the scan). */
#define PLAIN_RUN(c) ((c) > ' ' && (c) != '"' && (c) != '\\' && (c) != 0x7f)
#define PLAIN_ROW(b) PLAIN_RUN((b) + 0), PLAIN_RUN((b) + 1), PLAIN_RUN((b) + 2), PLAIN_RUN((b) + 3), \
	PLAIN_RUN((b) + 4), PLAIN_RUN((b) + 5), PLAIN_RUN((b) + 6), PLAIN_RUN((b) + 7)
#define PLAIN_ROWS(b) PLAIN_ROW(b), PLAIN_ROW((b) + 8), PLAIN_ROW((b) + 16), PLAIN_ROW((b) + 24)
static const bool plain_byte[256] = {
	PLAIN_ROWS(0), PLAIN_ROWS(32), PLAIN_ROWS(64), PLAIN_ROWS(96),
	PLAIN_ROWS(128), PLAIN_ROWS(160), PLAIN_ROWS(192), PLAIN_ROWS(224),
};

/* Advance r->pos over whole words of plain bytes (TR4: paths are mostly plain, and long).  Stops at
 * the first word holding a blank, control byte, '"', '\\' or 0x7f; the byte loop finishes. */
static void skip_plain_words(struct trace_reader *r)
{
	if (G_BYTE_ORDER != G_LITTLE_ENDIAN)
		return;
	while (r->pos + 8 <= r->line_len) {
		uint64_t word;
		memcpy(&word, r->line + r->pos, 8);
		if (trace_bytes_not_plain(word))
			return;
		r->pos += 8;
	}
}

static bool lex_plain(struct trace_reader *r, struct token *t, const char *field, GError **error)
{
	size_t start = r->pos;

	skip_plain_words(r);
	while (plain_byte[(unsigned char)r->line[r->pos]])
		r->pos++;
	/* Stopped at the end of the line, a blank, or a byte an unquoted token cannot hold. */
	if (r->pos < r->line_len && !is_blank(r->line[r->pos])) {
		unsigned char c = (unsigned char)r->line[r->pos];
		if (c == '"')
			return fail(r, error, TRACE_ERROR_SYNTAX, r->pos + 1, field,
				    "'\"' inside an unquoted token (quote the whole token)");
		if (c == '\\')
			return fail(r, error, TRACE_ERROR_SYNTAX, r->pos + 1, field,
				    "'\\' outside quotes (escapes need a quoted token)");
		return fail(r, error, TRACE_ERROR_SYNTAX, r->pos + 1, field,
			    "control byte 0x%02x (write it as \\x%02x inside quotes)", c, c);
	}
	t->text = r->line + start;
	t->len = r->pos - start;
	t->quoted = false;
	if (r->pos < r->line_len)
		r->line[r->pos++] = '\0';
	return true;
}

/* The next token, or false with *has = false at the end of the line. */
static bool next_token(struct trace_reader *r, struct token *t, bool *has, const char *field, GError **error)
{
	skip_blanks(r);
	*has = r->pos < r->line_len;
	if (!*has)
		return true;
	t->column = r->pos + 1;
	return r->line[r->pos] == '"' ? lex_quoted(r, t, field, error) : lex_plain(r, t, field, error);
}

/* The field name lexing errors in option position use: the key before '=', if readable. */
static const char *option_field_name(struct trace_reader *r, char *buf, size_t size)
{
	size_t i = r->pos;
	while (i < r->line_len && !is_blank(r->line[i]) && r->line[i] != '=' && r->line[i] != '"' &&
	       i - r->pos + 1 < size)
		i++;
	if (i < r->line_len && r->line[i] == '=' && i > r->pos) {
		memcpy(buf, r->line + r->pos, i - r->pos);
		buf[i - r->pos] = '\0';
		return buf;
	}
	return "option";
}

/* --- header ---------------------------------------------------------------------- */

static bool check_header(struct trace_reader *r, GError **error)
{
	int got;
	while ((got = read_line(r, error)) == 1 && line_is_empty(r))
		;
	if (got < 0)
		return false;
	if (got == 0) {
		r->line_no = r->line_no ? r->line_no : 1;
		return fail(r, error, TRACE_ERROR_HEADER, 1, "header",
			    "missing header '" TRACE_HEADER "' (the trace is empty)");
	}
	struct token magic, version, extra;
	bool has_magic, has_version, has_extra;
	if (!next_token(r, &magic, &has_magic, "header", error) ||
	    !next_token(r, &version, &has_version, "header", error))
		return false;
	if (strcmp(magic.text, "cowsim-trace") != 0)
		return fail_token(r, error, TRACE_ERROR_HEADER, magic.column, "header",
				  "missing header '" TRACE_HEADER "', got", magic.text, magic.len);
	if (!has_version || strcmp(version.text, "1") != 0)
		return fail(r, error, TRACE_ERROR_HEADER, has_version ? version.column : r->line_len + 1,
			    "version", "unsupported trace version '%s' (this reader reads %d)",
			    has_version ? version.text : "", TRACE_VERSION);
	if (!next_token(r, &extra, &has_extra, "header", error))
		return false;
	if (has_extra)
		return fail(r, error, TRACE_ERROR_HEADER, extra.column, "header",
			    "unexpected '%s' after the version", extra.text);
	return true;
}

static struct trace_reader *reader_new(FILE *stream, const char *name, bool owns)
{
	struct trace_reader *r = g_new0(struct trace_reader, 1);
	r->stream = stream;
	r->owns_stream = owns;
	r->name = g_strdup(name);
	r->buf = g_malloc0(READ_CHUNK + 1 + READ_PAD); /* buf[0] is the sentinel of an empty buffer */
	r->cancel_fd = -1;
	return r;
}

struct trace_reader *trace_reader_new_from_stream(FILE *stream, const char *name, bool take_ownership,
						  GError **error)
{
	g_autoptr(trace_reader) r = reader_new(stream, name, take_ownership);
	if (!check_header(r, error))
		return NULL;
	return g_steal_pointer(&r);
}

/* TR8: nothing read yet, so stdio may still be told to buffer nothing: no byte of the stream
 * will sit in stdio's buffer when read_watching() takes over. */
static bool unbuffered_if_not_a_file(FILE *stream)
{
	struct stat st;
	if (fstat(fileno(stream), &st) != 0 || S_ISREG(st.st_mode))
		return false;
	return setvbuf(stream, NULL, _IONBF, 0) == 0;
}

struct trace_reader *trace_reader_open(const char *path, GError **error)
{
	bool is_stdin = !strcmp(path, "-");
	FILE *stream = is_stdin ? stdin : fopen(path, "r");
	if (!stream) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: cannot open: %s", path, g_strerror(errno));
		return NULL;
	}
	g_autoptr(trace_reader) r = reader_new(stream, is_stdin ? "<stdin>" : path, !is_stdin);
	r->unbuffered = unbuffered_if_not_a_file(stream);
	if (!check_header(r, error))
		return NULL;
	return g_steal_pointer(&r);
}

bool trace_reader_may_block(const struct trace_reader *reader)
{
	return reader->unbuffered;
}

bool trace_reader_watch_cancel(struct trace_reader *reader, int fd)
{
	if (!reader->unbuffered || reader->poisoned)
		return false;
	reader->cancel_fd = fd;
	return true;
}

uint64_t trace_reader_line(const struct trace_reader *reader)
{
	return reader->line_no;
}

const char *trace_reader_name(const struct trace_reader *reader)
{
	return reader->name;
}

uint64_t trace_reader_offset(const struct trace_reader *reader)
{
	off_t at = ftello(reader->stream);
	return at > 0 ? (uint64_t)at : 0;
}

int64_t trace_reader_size(const struct trace_reader *reader)
{
	struct stat st;
	if (fstat(fileno(reader->stream), &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	return (int64_t)st.st_size;
}

void trace_reader_free(struct trace_reader *reader)
{
	if (!reader)
		return;
	if (reader->owns_stream)
		fclose(reader->stream);
	g_free(reader->buf);
	g_free(reader->name);
	g_free(reader);
}

/* --- values into the op ---------------------------------------------------------- */

/* TR10: one past the last '/' of a path of LEN bytes that starts with one (TO1). */
static inline uint16_t name_at(const char *path, size_t len)
{
	const char *slash = memrchr(path, '/', len);
	return slash ? (uint16_t)(slash - path + 1) : 0;
}

/* TR10: the op's path (LEN bytes at PATH), where its last name starts, and that name's hash. */
static inline void store_path(const struct trace_reader *r, struct trace_op *op, const char *path, size_t len)
{
	op->path = path;
	op->path_len = (uint16_t)len;
	op->name_at = name_at(path, len);
	if (r->name_hash)
		op->name_hash = r->name_hash(path + op->name_at, len - op->name_at);
}

void trace_reader_hash_names(struct trace_reader *reader, trace_name_hash_fn hash)
{
	reader->name_hash = hash;
}

static bool store_string(struct trace_reader *r, struct trace_op *op, const struct trace_positional *p,
			 const struct token *t, GError **error)
{
	const char *reason = p->value == TRACE_VALUE_PATH ? trace_syntax_path_problem(t->text, t->len)
							  : trace_syntax_string_problem(t->text, t->len);
	if (reason)
		return fail_value(r, error, t->column, p->field, reason, t->text, t->len);
	if (p->slot == TRACE_SLOT_PATH) { /* TR10: the token has no NUL byte (the problems above) */
		store_path(r, op, t->text, t->len);
	} else {
		op->path2 = t->text;
		op->path2_len = (uint16_t)t->len;
	}
	return true;
}

static bool store_size(struct trace_reader *r, uint64_t *slot, const char *field, const char *s, size_t len,
		       size_t column, GError **error)
{
	const char *reason = trace_syntax_parse_size(s, len, slot);
	return reason ? fail_value(r, error, column, field, reason, s, len) : true;
}

static bool store_clock(struct trace_reader *r, struct trace_op *op, const struct token *t, GError **error)
{
	const char *reason;

	if (t->len > 0 && t->text[0] == '+') {
		op->clock_relative = true;
		reason = trace_syntax_parse_duration(t->text + 1, t->len - 1, &op->clock_ns);
	} else if (t->len > 0 && t->text[0] == '@') {
		op->clock_relative = false;
		reason = trace_syntax_parse_time(t->text + 1, t->len - 1, &op->clock_ns);
	} else {
		reason = "want +DURATION or @TIME";
	}
	return reason ? fail_value(r, error, t->column, "time", reason, t->text, t->len) : true;
}

static bool store_positional(struct trace_reader *r, struct trace_op *op, const struct trace_positional *p,
			     const struct token *t, GError **error)
{
	switch (p->value) {
	case TRACE_VALUE_PATH:
	case TRACE_VALUE_STRING:
		return store_string(r, op, p, t, error);
	case TRACE_VALUE_SIZE: {
		uint64_t *slot = p->slot == TRACE_SLOT_SIZE ? &op->size
			       : p->slot == TRACE_SLOT_OFFSET ? &op->offset : &op->length;
		return store_size(r, slot, p->field, t->text, t->len, t->column, error);
	}
	case TRACE_VALUE_CLOCK:
		return store_clock(r, op, t, error);
	}
	return false;
}

/* Stores KEY's value into OP; the problem with the value, or NULL. */
static const char *apply_key(struct trace_op *op, unsigned key, const char *value, size_t len)
{
	const char *reason;
	uint64_t id;
	int64_t ns;

	switch (key) {
	case TRACE_KEY_SIZE:
		return trace_syntax_parse_size(value, len, &op->size);
	case TRACE_KEY_MODE:
		return trace_syntax_parse_mode(value, len, &op->mode);
	case TRACE_KEY_UID:
	case TRACE_KEY_GID:
		reason = trace_syntax_parse_uint(value, len, UINT32_MAX, &id);
		if (!reason)
			*(key == TRACE_KEY_UID ? &op->uid : &op->gid) = (uint32_t)id;
		return reason;
	default:
		reason = trace_syntax_parse_time(value, len, &ns);
		if (reason)
			return reason;
		if (key == TRACE_KEY_ATIME)
			op->atime_ns = ns;
		else if (key == TRACE_KEY_MTIME)
			op->mtime_ns = ns;
		else
			op->ctime_ns = ns;
		op->times_given |= key == TRACE_KEY_ATIME ? TRACE_TIME_ATIME
				 : key == TRACE_KEY_MTIME ? TRACE_TIME_MTIME : TRACE_TIME_CTIME;
		return NULL;
	}
}

static bool store_key(struct trace_reader *r, struct trace_op *op, unsigned key, const char *value,
		      size_t len, size_t column, GError **error)
{
	const char *reason = apply_key(op, key, value, len);
	return reason ? fail_value(r, error, column, trace_syntax_key_name(key), reason, value, len) : true;
}

/* --- the grammar ---------------------------------------------------------------- */

/* What parse_options() has seen so far on this line. */
struct seen_options {
	unsigned keys;
	size_t key_column[TRACE_KEY_COUNT];
	size_t ro_column;
};

static int key_index(unsigned key)
{
	return __builtin_ctz(key);
}

static char *allowed_keys(const struct trace_grammar *g)
{
	GString *s = g_string_new(NULL);
	for (int i = 0; i < TRACE_KEY_COUNT; i++)
		if (g->keys & (1u << i))
			g_string_append_printf(s, "%s%s=", s->len ? ", " : "", trace_syntax_key_name(1u << i));
	if (g->ro_flag)
		g_string_append_printf(s, "%sro", s->len ? ", " : "");
	return g_string_free(s, FALSE);
}

static bool parse_flag(struct trace_reader *r, const struct trace_grammar *g, struct trace_op *op,
		       const struct token *t, struct seen_options *seen, GError **error)
{
	if (!g->ro_flag || t->quoted || strcmp(t->text, "ro") != 0)
		return fail(r, error, TRACE_ERROR_SYNTAX, t->column, "trailing",
			    "unexpected '%s' after the arguments of %s", t->text, g->name);
	if (seen->ro_column)
		return fail(r, error, TRACE_ERROR_SYNTAX, t->column, "ro",
			    "duplicate flag (first at column %zu)", seen->ro_column);
	seen->ro_column = t->column;
	op->readonly = true;
	return true;
}

static bool parse_option(struct trace_reader *r, const struct trace_grammar *g, struct trace_op *op,
			 const struct token *t, struct seen_options *seen, GError **error)
{
	const char *eq = t->quoted ? NULL : memchr(t->text, '=', t->len);
	if (!eq)
		return parse_flag(r, g, op, t, seen, error);

	size_t name_len = (size_t)(eq - t->text);
	unsigned key = trace_syntax_key_from_name(t->text, name_len);
	if (!(key & g->keys)) {
		g_autofree char *name = g_strndup(t->text, name_len);
		g_autofree char *allowed = allowed_keys(g);
		return fail(r, error, TRACE_ERROR_SYNTAX, t->column, name, "unknown key for %s (%s%s)",
			    g->name, *allowed ? "want " : "it takes no options", allowed);
	}
	int i = key_index(key);
	if (seen->keys & key) /* a known key: its name is the table's */
		return fail(r, error, TRACE_ERROR_SYNTAX, t->column, trace_syntax_key_name(key),
			    "duplicate key (first at column %zu)", seen->key_column[i]);
	seen->keys |= key;
	seen->key_column[i] = t->column;
	size_t value_len = t->len - name_len - 1;
	return store_key(r, op, key, eq + 1, value_len, t->column + name_len + 1, error);
}

static bool is_option_token(const struct token *t)
{
	return !t->quoted && memchr(t->text, '=', t->len) != NULL;
}

/* The positionals, in order; a missing one is reported at the token that took its place. */
static bool parse_positionals(struct trace_reader *r, const struct trace_grammar *g, struct trace_op *op,
			      struct token *pending, bool *has_pending, GError **error)
{
	*has_pending = false;
	for (int i = 0; i < g->n_positional; i++) {
		const struct trace_positional *p = &g->positional[i];
		struct token t;
		bool has;
		if (!next_token(r, &t, &has, p->field, error))
			return false;
		if (has && !is_option_token(&t)) {
			if (!store_positional(r, op, p, &t, error))
				return false;
			if (i == 1 && op->kind == TRACE_READ)
				op->has_range = true;
			continue;
		}
		if (i < g->n_required || i > g->n_required)
			return fail(r, error, TRACE_ERROR_MISSING, has ? t.column : r->line_len + 1, p->field,
				    "missing (%s needs %s)", g->name, p->field);
		*pending = t;
		*has_pending = has;
		return true;
	}
	return true;
}

/* True when the options KEYS hold every key grammar G needs. */
static bool required_options_given(const struct trace_grammar *g, unsigned keys)
{
	return !(g->required_keys & ~keys) && (!g->needs_a_time || (keys & (TRACE_KEY_ATIME | TRACE_KEY_MTIME)));
}

static bool check_required_options(struct trace_reader *r, const struct trace_grammar *g,
				   const struct seen_options *seen, GError **error)
{
	if (required_options_given(g, seen->keys))
		return true;
	unsigned missing = g->required_keys & ~seen->keys;
	if (missing)
		return fail(r, error, TRACE_ERROR_MISSING, r->line_len + 1, trace_syntax_key_name(missing & -missing),
			    "missing (%s needs %s=)", g->name, trace_syntax_key_name(missing & -missing));
	if (g->needs_a_time && !(seen->keys & (TRACE_KEY_ATIME | TRACE_KEY_MTIME)))
		return fail(r, error, TRACE_ERROR_MISSING, r->line_len + 1, "atime",
			    "missing (%s needs atime= or mtime= or both)", g->name);
	return true;
}

static bool parse_options(struct trace_reader *r, const struct trace_grammar *g, struct trace_op *op,
			  struct token *first, bool has_first, GError **error)
{
	struct seen_options seen = { 0 };
	struct token t = *first;
	bool has = has_first;
	char field[64];

	while (has) {
		if (!parse_option(r, g, op, &t, &seen, error))
			return false;
		skip_blanks(r);
		if (!next_token(r, &t, &has, option_field_name(r, field, sizeof(field)), error))
			return false;
	}
	return check_required_options(r, g, &seen, error);
}

static bool parse_op(struct trace_reader *r, struct trace_op *op, GError **error)
{
	struct token keyword, pending;
	bool has, has_pending;
	enum trace_op_kind kind;

	if (!next_token(r, &keyword, &has, "op", error))
		return false;
	if (keyword.quoted || !trace_syntax_kind_from_token(keyword.text, keyword.len, &kind))
		return fail_token(r, error, TRACE_ERROR_SYNTAX, keyword.column, "op", "unknown op", keyword.text,
				  keyword.len);
	const struct trace_grammar *g = trace_syntax_grammar(kind);
	trace_op_init(op, kind);
	op->line = r->line_no;
	if (!parse_positionals(r, g, op, &pending, &has_pending, error))
		return false;
	if (!has_pending) {
		skip_blanks(r);
		char field[64];
		if (!next_token(r, &pending, &has_pending, option_field_name(r, field, sizeof(field)), error))
			return false;
	}
	return parse_options(r, g, op, &pending, has_pending, error);
}

/* True when grammar G's one required positional is the path: "KEYWORD PATH [key=value ...]". */
static bool path_comes_alone(const struct trace_grammar *g)
{
	return g->n_required == 1 && g->positional[0].value == TRACE_VALUE_PATH &&
	       g->positional[0].slot == TRACE_SLOT_PATH;
}

/* Remember OP's keyword for the fast path when its grammar allows it (TR6). */
static void remember_keyword(struct trace_reader *r, const struct trace_op *op)
{
	const struct trace_grammar *g = trace_syntax_grammar(op->kind);
	size_t len = strlen(g->name);
	if (r->path_only[0].name == g->name || !path_comes_alone(g) || len >= 8 || G_BYTE_ORDER != G_LITTLE_ENDIAN)
		return;
	struct keyword k = { .name = g->name, .len = len, .kind = op->kind, .default_mode = g->default_mode,
			     .grammar = g, .stands_alone = required_options_given(g, 0) };
	memcpy(&k.head, k.name, k.len);
	k.head |= (uint64_t)' ' << 8 * k.len;
	k.head_mask = k.len == 7 ? UINT64_MAX : (UINT64_C(1) << 8 * (k.len + 1)) - 1;
	int i = 0;
	while (i < KEYWORD_SLOTS - 1 && r->path_only[i].name != g->name)
		i++;
	memmove(&r->path_only[1], &r->path_only[0], (size_t)i * sizeof(k)); /* drops it, or the oldest */
	r->path_only[0] = k;
}

/* The remembered keyword that, with one ' ', starts the line at S; NULL if none.  The word loaded
 * stays inside the buffer's padding, and a line shorter than "NAME " holds TR5's sentinel (a NUL)
 * where the head has a name's byte or the ' ': no match. */
static const struct keyword *remembered_keyword(const struct trace_reader *r, const char *s)
{
	uint64_t word;
	memcpy(&word, s, 8);
	for (int i = 0; i < KEYWORD_SLOTS && r->path_only[i].name; i++)
		if ((word & r->path_only[i].head_mask) == r->path_only[i].head)
			return &r->path_only[i];
	return NULL;
}

/* TR7: a time value as the trace writes it, straight into nanoseconds: at most 10 decimal digits of
 * seconds, up to 9 000 000 000 (so no overflow anywhere), and an optional fraction of 1-9 digits;
 * the byte after it must end the option (' ' or '\n').  *END is that byte.  false for anything
 * else (a sign, a larger or longer number, a 10th digit of fraction): apply_key() decides. */
static bool plain_time(const char *s, const char **end, int64_t *ns)
{
	uint64_t seconds = 0, fraction = 0, scale = 1000000000;
	const char *p = s;
	for (unsigned d; (d = (unsigned)(unsigned char)*p - '0') <= 9 && p - s < 10; p++)
		seconds = seconds * 10 + d;
	if (p == s || seconds > UINT64_C(9000000000))
		return false;
	if (*p == '.') {
		const char *f = ++p;
		for (unsigned d; (d = (unsigned)(unsigned char)*p - '0') <= 9 && p - f < 9; p++) {
			fraction = fraction * 10 + d;
			scale /= 10;
		}
		if (p == f)
			return false;
	}
	if (*p != ' ' && *p != '\n')
		return false;
	*end = p;
	*ns = (int64_t)(seconds * 1000000000 + fraction * scale);
	return true;
}

/* TR7: a size of at most 18 decimal digits (no overflow), no suffix, ended as plain_time() says. */
static bool plain_size(const char *s, const char **end, uint64_t *size)
{
	uint64_t value = 0;
	const char *p = s;
	for (unsigned d; (d = (unsigned)(unsigned char)*p - '0') <= 9 && p - s < 18; p++)
		value = value * 10 + d;
	if (p == s || (*p != ' ' && *p != '\n'))
		return false;
	*end = p;
	*size = value;
	return true;
}

/* TR7: the option at S when it is "size=N", "atime=T", "mtime=T" or "ctime=T" as plain_size() and
 * plain_time() take them, a key of grammar G not in *SEEN: stored into OP, the byte after it
 * returned.  NULL for anything else (nothing stored): the token's lexer decides. */
static const char *plain_option(const struct trace_grammar *g, struct trace_op *op, const char *s, unsigned *seen)
{
	static const struct { uint64_t head, mask; unsigned key, len; } keys[] = {
		{ UINT64_C(0x3d657a6973), UINT64_C(0xffffffffff), TRACE_KEY_SIZE, 5 },        /* "size=" */
		{ UINT64_C(0x3d656d697461), UINT64_C(0xffffffffffff), TRACE_KEY_ATIME, 6 },   /* "atime=" */
		{ UINT64_C(0x3d656d69746d), UINT64_C(0xffffffffffff), TRACE_KEY_MTIME, 6 },   /* "mtime=" */
		{ UINT64_C(0x3d656d697463), UINT64_C(0xffffffffffff), TRACE_KEY_CTIME, 6 },   /* "ctime=" */
	};
	uint64_t word;
	memcpy(&word, s, 8);
	for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
		if ((word & keys[i].mask) != keys[i].head)
			continue;
		unsigned key = keys[i].key;
		const char *end;
		int64_t ns;
		if (!(key & g->keys) || (*seen & key))
			return NULL;
		if (key == TRACE_KEY_SIZE) {
			if (!plain_size(s + keys[i].len, &end, &op->size))
				return NULL;
		} else {
			if (!plain_time(s + keys[i].len, &end, &ns))
				return NULL;
			*(key == TRACE_KEY_ATIME ? &op->atime_ns : key == TRACE_KEY_MTIME ? &op->mtime_ns : &op->ctime_ns) = ns;
			op->times_given |= key == TRACE_KEY_ATIME ? TRACE_TIME_ATIME
					 : key == TRACE_KEY_MTIME ? TRACE_TIME_MTIME : TRACE_TIME_CTIME;
		}
		*seen |= key;
		return end;
	}
	return NULL;
}

/* TR6: the options at S (its first byte a ' ') as " key=value" tokens of grammar G, each one plain
 * token after one ' ', no key twice, every value good and every required key there, stored into
 * OP.  Returns the byte that ended them (the caller wants the '\n'), or NULL. */
static char *parse_plain_options(const struct trace_grammar *g, struct trace_op *op, char *s)
{
	unsigned seen = 0;
	while (*s == ' ') {
		const char *token = ++s, *eq = NULL, *end = plain_option(g, op, token, &seen);
		if (end) {
			s = (char *)end;
			continue;
		}
		for (; plain_byte[(unsigned char)*s]; s++)
			if (*s == '=' && !eq)
				eq = s;
		if (!eq)
			return NULL; /* a flag or a positional, or an empty token: the full lexer decides */
		unsigned key = trace_syntax_key_from_name(token, (size_t)(eq - token));
		if (!(key & g->keys) || (seen & key) || apply_key(op, key, eq + 1, (size_t)(s - eq - 1)))
			return NULL;
		seen |= key;
	}
	return required_options_given(g, seen) ? s : NULL;
}

/* trace_op_init() for the fast path, as seven 16-byte stores: a memset of the struct (or a loop of
 * stores, which gcc turns back into one) compiles to a `rep stos`, slow to start and one
 * instruction per word under callgrind. */
static inline void op_clear(struct trace_op *op)
{
#if defined(__SSE2__)
	G_STATIC_ASSERT(sizeof(*op) == 7 * 16);
	__m128i zero = _mm_setzero_si128(), *p = (__m128i *)op;
	_mm_storeu_si128(p + 0, zero);
	_mm_storeu_si128(p + 1, zero);
	_mm_storeu_si128(p + 2, zero);
	_mm_storeu_si128(p + 3, zero);
	_mm_storeu_si128(p + 4, zero);
	_mm_storeu_si128(p + 5, zero);
	_mm_storeu_si128(p + 6, zero);
#else
	memset(op, 0, sizeof(*op));
#endif
}

/* TR6: the line at LINE, whose PATH (LEN bytes) ends at END ('\n'), consumed and counted. */
static inline void take_plain_line(struct trace_reader *r, char *line, char *path, size_t len, char *end)
{
	path[len] = '\0'; /* over the '\n', or the blank before the options, as lex_plain() does */
	r->last_path = path;
	r->last_path_len = len;
	r->buf_start += (size_t)(end - line) + 1;
	r->line_no++;
}

/* Everything but the fast path: blank and comment lines, the full lexer, the end, errors.  Apart,
 * so that the fast path's call saves no registers for it. */
static G_GNUC_NO_INLINE int next_in_full(struct trace_reader *reader, struct trace_op *op, GError **error)
{
	if (reader->poisoned) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_SYNTAX, "%s:%" PRIu64 ": reader stopped at an earlier error",
			    reader->name, reader->line_no);
		return -1;
	}
	for (;;) {
		int got = read_line(reader, error);
		if (got <= 0)
			return got;
		if (line_is_empty(reader))
			continue; /* the next line to the full lexer too: comments are few */
		if (!parse_op(reader, op, error))
			return -1;
		remember_keyword(reader, op);
		if (op->path)
			reader->last_path_len = 0; /* TR10: the fast path's next op shares nothing it knows */
		return 1;
	}
}

/* TR6: the rest of a fast-path line whose path is followed by options (its first byte, a ' ', at
 * END), or the line to the full lexer.  Apart, so that the path lines' fast path calls nothing. */
static G_GNUC_NO_INLINE int next_with_options(struct trace_reader *r, struct trace_op *op,
					      const struct keyword *k, char *line, size_t len, GError **error)
{
	char *path = (char *)op->path, *end = parse_plain_options(k->grammar, op, path + len);
	/* a '\n' ends the line: not "\r\n", not the sentinel (the line goes on past the buffer) */
	if (!end || *end != '\n' || (size_t)(end - line) > TRACE_LINE_MAX)
		return next_in_full(r, op, error);
	take_plain_line(r, line, path, len, end);
	return 1;
}

/* TR6: a line "KEYWORD PATH\n" straight from the buffer, without a call or a saved register (the
 * calls below are the last thing done); nothing is consumed or written but *op before the line is
 * known good.  The current line (r->line) is left alone: only the full lexer reads it. */
int trace_reader_next(struct trace_reader *r, struct trace_op *op, GError **error)
{
	char *line = r->buf + r->buf_start;
	const struct keyword *k = r->poisoned ? NULL : remembered_keyword(r, line);
	if (!k)
		return next_in_full(r, op, error);
	char *path = line + k->len + 1;
	size_t shared;
	size_t len = trace_plain_path_after(path, r->last_path, r->last_path_len, &shared);
	if (!len)
		return next_in_full(r, op, error);
	op_clear(op);
	op->shared = (uint16_t)shared; /* TR10: last_path is the path of the last op with one */
	op->kind = k->kind;
	op->mode = k->default_mode;
	op->line = r->line_no + 1;
	store_path(r, op, path, len); /* TR10 */
	char *end = path + len; /* the byte after the path: not plain, at worst TR5's sentinel */
	if (*end == ' ' && k->grammar->keys)
		return next_with_options(r, op, k, line, len, error);
	/* a '\n' ends the line: not "\r\n", not the sentinel; a path of at most 256 bytes is no
	 * line longer than TRACE_LINE_MAX */
	if (*end != '\n' || !k->stands_alone)
		return next_in_full(r, op, error);
	take_plain_line(r, line, path, len, end);
	return 1;
}

/* --- the generator's command ------------------------------------------------ */

/* The first comment before PATH's first op that starts with PREFIX (a copy,
 * without its line end), or NULL. NULL and *error when PATH cannot be read. */
static char *header_comment(const char *path, const char *prefix, GError **error)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: %s", path, g_strerror(errno));
		return NULL;
	}
	char *line = NULL, *comment = NULL;
	size_t size = 0;
	ssize_t got;
	while (!comment && (got = getline(&line, &size, f)) >= 0) {
		while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
			line[--got] = '\0';
		if (*line && *line != '#' && strcmp(line, TRACE_HEADER))
			break; /* the first op: the generator's comment comes before it */
		if (g_str_has_prefix(line, prefix))
			comment = g_strdup(line);
	}
	bool failed = ferror(f);
	int saved = errno;
	free(line);
	fclose(f);
	if (failed) {
		g_free(comment);
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "%s: %s", path, g_strerror(saved));
		return NULL;
	}
	return comment;
}

char *trace_gen_command(const char *path, GError **error)
{
	g_autofree char *comment = header_comment(path, "# cowsim gen ", error);
	const char *tag = comment ? strstr(comment, TRACE_GEN_COMMAND_TAG) : NULL;
	return tag ? g_strdup(tag + strlen(TRACE_GEN_COMMAND_TAG)) : NULL;
}

bool trace_recorded_without_prelude(const char *path)
{
	g_autofree char *comment = header_comment(path, "# cowsim ", NULL);
	return comment &&
	       (g_str_has_prefix(comment, "# cowsim record ") || g_str_has_prefix(comment, "# cowsim gen from-strace")) &&
	       !strstr(comment, " --prelude");
}
