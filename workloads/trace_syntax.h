/*
 * workloads/trace_syntax.h - the lexical rules of the trace format, shared by
 * the reader (trace.c) and the writer (trace_writer.c).  Private to workloads/.
 *
 * Each value parser takes one token (bytes, not NUL-terminated) and returns
 * NULL on success or a static reason ("not a number", "out of range", ...)
 * that the reader puts into "FILE:LINE:COL: field NAME: REASON: 'TOKEN'".
 * Each formatter writes exactly the text its parser reads back (SY1: for
 * every value v in range, parse(format(v)) == v).
 */
#ifndef COWSIM_WORKLOADS_TRACE_SYNTAX_H
#define COWSIM_WORKLOADS_TRACE_SYNTAX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

/* --- grammar: what each op takes (one table, read by reader, writer, check) --- */

#include "trace.h"

enum trace_value {
	TRACE_VALUE_PATH,      /* an absolute path (rules TO1 of trace.h) */
	TRACE_VALUE_STRING,    /* any non-empty bytes without NUL: symlink target, label, options */
	TRACE_VALUE_SIZE,      /* bytes, optional K/M/G/T */
	TRACE_VALUE_CLOCK,     /* +DURATION or @TIME */
};

enum trace_slot {
	TRACE_SLOT_PATH,
	TRACE_SLOT_PATH2,
	TRACE_SLOT_SIZE,
	TRACE_SLOT_OFFSET,
	TRACE_SLOT_LENGTH,
	TRACE_SLOT_CLOCK,
};

struct trace_positional {
	const char *field;     /* the name errors use: "path", "old", "offset" ... */
	enum trace_value value;
	enum trace_slot slot;
};

/* key=value options; one bit each. */
enum trace_key {
	TRACE_KEY_SIZE = 1u << 0,
	TRACE_KEY_MODE = 1u << 1,
	TRACE_KEY_UID = 1u << 2,
	TRACE_KEY_GID = 1u << 3,
	TRACE_KEY_ATIME = 1u << 4,
	TRACE_KEY_MTIME = 1u << 5,
	TRACE_KEY_CTIME = 1u << 6,
};
#define TRACE_KEY_COUNT 7

struct trace_grammar {
	const char *name;                  /* the op keyword */
	struct trace_positional positional[3];
	int n_required;                    /* positionals that must appear */
	int n_positional;                  /* the rest come all together or not at all */
	unsigned keys;                     /* TRACE_KEY_* accepted */
	unsigned required_keys;            /* TRACE_KEY_* that must appear */
	bool needs_a_time;                 /* settime: atime= or mtime= or both */
	bool ro_flag;                      /* snapshot: the bare word "ro" */
	uint32_t default_mode;             /* mode when mode= is absent (keys has MODE) */
};

/* The grammar of KIND (kind must be in range). */
const struct trace_grammar *trace_syntax_grammar(enum trace_op_kind kind);
/* The kind whose keyword is the LEN bytes at S; false if none (the reader's op lookup). */
bool trace_syntax_kind_from_token(const char *s, size_t len, enum trace_op_kind *kind);
/* The name of key bit KEY ("size", "mode", ...), and the bit named NAME (0 if none). */
const char *trace_syntax_key_name(unsigned key);
unsigned trace_syntax_key_from_name(const char *name, size_t len);

/* NULL if S (LEN bytes) may be a path (TO1), else why not. */
const char *trace_syntax_path_problem(const char *s, size_t len);
/* NULL if S may be a string value (non-empty, no NUL, <= TRACE_PATH_MAX), else why not. */
const char *trace_syntax_string_problem(const char *s, size_t len);

/* --- eight bytes at a time (little-endian loads; the reader's hot loops) --- */

#define TRACE_BYTES_01 UINT64_C(0x0101010101010101)
#define TRACE_BYTES_7F UINT64_C(0x7f7f7f7f7f7f7f7f)

/* The high bit of each byte of X below N (N <= 128), exactly, and no other bit. */
static inline uint64_t trace_bytes_below(uint64_t x, unsigned n)
{
	return ~(((x & TRACE_BYTES_7F) + TRACE_BYTES_01 * (128 - n)) | x) & ~TRACE_BYTES_7F;
}

/* The high bit of each byte of X equal to C, exactly. */
static inline uint64_t trace_bytes_equal(uint64_t x, unsigned char c)
{
	return trace_bytes_below(x ^ (TRACE_BYTES_01 * c), 1);
}

/* Nonzero when some byte of X is below N (N <= 128): which byte is not said (the borrow of a lower
 * byte may mark bytes above it), so this only answers "any"; three operations. */
static inline uint64_t trace_any_byte_below(uint64_t x, unsigned n)
{
	return (x - TRACE_BYTES_01 * n) & ~x & ~TRACE_BYTES_7F;
}

/* Nonzero when some byte of X cannot continue an unquoted token: a blank, a control byte (NUL
 * included), '"', '\\' or 0x7f. */
static inline uint64_t trace_bytes_not_plain(uint64_t x)
{
	return trace_any_byte_below(x, 0x21) | trace_any_byte_below(x ^ (TRACE_BYTES_01 * '"'), 1) |
	       trace_any_byte_below(x ^ (TRACE_BYTES_01 * '\\'), 1) |
	       trace_any_byte_below(x ^ (TRACE_BYTES_01 * 0x7f), 1);
}

/* --- values --- */

/* Unsigned decimal up to MAX. */
const char *trace_syntax_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out);
/* Bytes: decimal with an optional K, M, G or T suffix (powers of 1024). */
const char *trace_syntax_parse_size(const char *s, size_t len, uint64_t *out);
/* Permission bits: octal, at most 07777. */
const char *trace_syntax_parse_mode(const char *s, size_t len, uint32_t *out);
/* Seconds since the epoch, optional '-', optional fraction of 1-9 digits -> ns. */
const char *trace_syntax_parse_time(const char *s, size_t len, int64_t *out_ns);
/* A duration: decimal with optional fraction and a unit ns|us|ms|s|m|h|d -> ns. */
const char *trace_syntax_parse_duration(const char *s, size_t len, int64_t *out_ns);

/* Buffers big enough for any formatted time or duration. */
#define TRACE_SYNTAX_NUMBER_MAX 48
void trace_syntax_format_time(char buf[TRACE_SYNTAX_NUMBER_MAX], int64_t ns);
void trace_syntax_format_duration(char buf[TRACE_SYNTAX_NUMBER_MAX], int64_t ns);

/* True when a string token must be written in double quotes. */
bool trace_syntax_needs_quotes(const char *s, size_t len);
/* Append S as one token, quoted and escaped when needed. */
void trace_syntax_append_token(GString *out, const char *s);
/* A printable rendering of a raw token for error messages (escapes like the writer). */
char *trace_syntax_display(const char *s, size_t len);

#endif
