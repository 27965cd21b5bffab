/*
 * workloads/trace.h - the cowsim trace: one filesystem operation per line.
 *
 * This header is the contract between the generators (cowsim gen), the
 * simulator (cowsim run) and anyone writing traces by hand.  The text format
 * is specified in docs/trace-format.md; in short:
 *
 *     # comment lines start with '#'; blank lines are ignored
 *     cowsim-trace 1                          <- first non-comment line
 *     clock @1338422400
 *     mkdir /tree mode=0755 uid=0 gid=0
 *     create "/tree/a b.txt" size=12K mode=0644 atime=1338422000.5 mtime=1338421000
 *     snapshot / /snap1 ro
 *     read /tree/a.txt
 *     clock +1.5s
 *     mark after_grep
 *
 * How the reader works: it reads the stream in fixed 256 KiB chunks into one
 * reused buffer (a trace never sits in memory whole, so a 10 GB trace
 * streams), takes one line at a time out of it, splits it into tokens,
 * decodes quoted tokens in place and fills a struct trace_op whose strings
 * point into that buffer.  A well-formed line costs no allocation.
 *
 * Invariants the reader guarantees for every op it returns (TO1..TO5):
 *   TO1 every path field required by the op is set, absolute, has no empty,
 *      "." or ".." component, no component longer than TRACE_NAME_MAX and is
 *      at most TRACE_PATH_MAX bytes; no string contains a NUL byte;
 *   TO2 every numeric field fits its type (no silent wrap-around);
 *   TO3 fields the op does not take are zero/NULL, and defaults are filled in
 *      (mkdir mode 0755, create mode 0644, uid/gid 0);
 *   TO4 op->line is the 1-based source line;
 *   TO5 op strings stay valid until the next trace_reader_next() or free.
 *
 * Errors are GError values in TRACE_ERROR, with the message
 *     FILE:LINE:COLUMN: field NAME: reason
 * (COLUMN is the 1-based byte column of the offending token or value; FILE is
 * "<stdin>" for "-").  The library never prints and never exits.
 *
 * The writer is the inverse: for every op o that trace_op_check() accepts,
 * parsing the writer's line gives back o (parse(write(o)) == o, ignoring
 * o.line).  Generators write only through it, so their traces always parse.
 */
#ifndef COWSIM_WORKLOADS_TRACE_H
#define COWSIM_WORKLOADS_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <glib.h>

/* The header line every trace starts with (after optional comments). */
#define TRACE_HEADER "cowsim-trace 1"
#define TRACE_VERSION 1

/* btrfs BTRFS_NAME_LEN: the longest path component, in bytes. */
#define TRACE_NAME_MAX 255
/* PATH_MAX - 1: the longest path (and symlink target), in bytes. */
#define TRACE_PATH_MAX 4095
/* The longest line the reader accepts: two maximal paths, fully \xHH-escaped, fit.  So the
 * strings of one op, NULs included, take at most TRACE_LINE_MAX + 2 bytes. */
#define TRACE_LINE_MAX (40 * 1024)

#define TRACE_ERROR (trace_error_quark())
GQuark trace_error_quark(void);

enum trace_error_code {
	TRACE_ERROR_IO,        /* could not open/read/write the file */
	TRACE_ERROR_HEADER,    /* missing or wrong "cowsim-trace 1" line */
	TRACE_ERROR_SYNTAX,    /* bad quoting/escape, trailing garbage, unknown op or key, duplicate key */
	TRACE_ERROR_MISSING,   /* a required field is absent */
	TRACE_ERROR_VALUE,     /* a field is present but invalid: not a number, overflow, bad path */
	TRACE_ERROR_LIMIT,     /* a writer's bound on ops or bytes (trace_writer_set_limits) */
};

/* Keep this order: it is the order of docs/trace-format.md. */
enum trace_op_kind {
	TRACE_MKDIR,           /* path; mode uid gid, times (atime mtime ctime) */
	TRACE_CREATE,          /* path, size (bytes of data written at creation); mode uid gid, times */
	TRACE_WRITE,           /* path, offset, length */
	TRACE_TRUNCATE,        /* path, size */
	TRACE_READ,            /* path; if has_range: offset, length, else the whole file.
	                          On a symlink: readlink(2) (the link, not its target). */
	TRACE_STAT,            /* path (lstat: does not follow a final symlink) */
	TRACE_READDIR,         /* path = the directory */
	TRACE_RENAME,          /* path = OLD, path2 = NEW */
	TRACE_LINK,            /* path = EXISTING, path2 = NEW name */
	TRACE_SYMLINK,         /* path = the new link, path2 = TARGET (any non-empty bytes, may be relative) */
	TRACE_UNLINK,          /* path */
	TRACE_RMDIR,           /* path */
	TRACE_SNAPSHOT,        /* path = SRC subvolume, path2 = DST, readonly */
	TRACE_DELETE_SNAPSHOT, /* path */
	TRACE_CLOCK,           /* clock_relative ? advance by clock_ns : set to clock_ns */
	TRACE_SYNC,            /* no fields: commit the transaction */
	TRACE_MARK,            /* path2 = LABEL (a measurement point) */
	TRACE_REMOUNT,         /* path2 = OPTIONS, e.g. "relatime,nodiratime" */
	TRACE_SETTIME,         /* path; times (atime and/or mtime only): utimensat(2),
	                          does not follow a final symlink */
	TRACE_FSYNC,           /* path */
};
/* Not an enum member, so switch statements over the kinds stay -Wswitch exact. */
#define TRACE_OP_KIND_COUNT ((int)TRACE_FSYNC + 1)

/* Bits of trace_op.times_given. */
enum trace_time_bit {
	TRACE_TIME_ATIME = 1u << 0,
	TRACE_TIME_MTIME = 1u << 1,
	TRACE_TIME_CTIME = 1u << 2,
};

struct trace_op {
	enum trace_op_kind kind;
	uint16_t path_len;     /* strlen(path) in an op read from a trace (TR10); 0 in ops made in code */
	/* path[0, shared) is the path of the op with a path read just before it (TR10): what the
	 * reader's fast path found the two share; 0 when it does not know (the full lexer's ops) */
	uint16_t shared;
	const char *path;      /* see the kind's comment; NULL when the op has none */
	const char *path2;     /* target / new name / DST / label / options; else NULL */
	uint64_t size;         /* bytes: create size=, truncate SIZE */
	uint64_t offset;       /* bytes: write, read with range */
	uint64_t length;       /* bytes: write, read with range */
	uint32_t mode;         /* permission bits only (<= 07777): mkdir, create */
	uint32_t uid;          /* mkdir, create */
	uint32_t gid;          /* mkdir, create */
	uint8_t times_given;   /* TRACE_TIME_* bits: which of the three below are set */
	bool readonly;         /* snapshot ... ro */
	bool has_range;        /* read PATH OFF LEN */
	bool clock_relative;   /* clock +DURATION (true) or clock @TIME (false) */
	int64_t atime_ns;      /* nanoseconds since the epoch (may be negative) */
	int64_t mtime_ns;
	int64_t ctime_ns;      /* only mkdir/create; a real fs cannot set ctime */
	/* An op read by a reader told to hash names (trace_reader_hash_names(), TR10): the hash of its
	 * path's last name, path[name_at, path_len); 0 else */
	uint32_t name_hash;
	uint16_t name_at;      /* path[name_at - 1] is its last '/' in an op read from a trace (TR10); 0 else */
	uint16_t path2_len;    /* strlen(path2) in an op read from a trace (TR10); 0 in ops made in code */
	int64_t clock_ns;      /* the duration (>= 0) or the absolute time, nanoseconds */
	uint64_t line;         /* 1-based source line; 0 for ops not read from a file */
};

/* --- ops ------------------------------------------------------------------ */

/* The op's keyword in the format: "mkdir", "delete-snapshot", ...; "?" if out of range. */
const char *trace_op_kind_name(enum trace_op_kind kind);
/* The kind whose keyword is NAME; false if none. */
bool trace_op_kind_from_name(const char *name, enum trace_op_kind *kind);

/* Zero *op and set the kind's defaults (mkdir mode 0755, create mode 0644). */
void trace_op_init(struct trace_op *op, enum trace_op_kind kind);

/* True when a and b describe the same operation (line is ignored; strings by content). */
bool trace_op_equal(const struct trace_op *a, const struct trace_op *b);

/* Check TO1-TO3 on an op built in memory.  On failure the message is
 * "field NAME: reason" (no location). */
bool trace_op_check(const struct trace_op *op, GError **error);

/* --- the generator's command ------------------------------------------------ */

/* `cowsim gen` writes the command line that regenerates a trace (its -o left
 * out) on the comment line after the header, after the scenario's summary:
 *
 *     cowsim-trace 1
 *     # cowsim gen synthetic: copy a synthetic tree ...; command: cowsim gen synthetic --files 3
 *
 * On that line and not one of its own, so that no op moves. */
#define TRACE_GEN_COMMAND_TAG "; command: "

/* The command recorded in the comments of PATH before its first op, or NULL
 * when there is none (a trace written by hand, or before cowsim recorded
 * it). NULL and *error when PATH cannot be read. */
char *trace_gen_command(const char *path, GError **error);
/* True when PATH was written by `cowsim record` or `gen from-strace` without
 * --prelude: it starts with no tree, so its first path is missing on replay. */
bool trace_recorded_without_prelude(const char *path);

/* --- reader --------------------------------------------------------------- */

struct trace_reader;

/* Open PATH ("-" = stdin) and read up to and including the header line.
 * NULL with TRACE_ERROR_IO or TRACE_ERROR_HEADER on failure. */
struct trace_reader *trace_reader_open(const char *path, GError **error);
/* Same over an open stream; NAME is used in messages.  The reader closes
 * STREAM on free when take_ownership is true. */
struct trace_reader *trace_reader_new_from_stream(FILE *stream, const char *name,
						  bool take_ownership, GError **error);

/* Read the next op into *op: 1 with an op, 0 at the end of the trace, -1 with
 * *error set (after an error, further calls return -1 again). */
int trace_reader_next(struct trace_reader *reader, struct trace_op *op, GError **error);

/* The 1-based number of the line last read (0 before any). */
uint64_t trace_reader_line(const struct trace_reader *reader);
/* The name used in messages ("<stdin>" for "-"). */
const char *trace_reader_name(const struct trace_reader *reader);
/* For progress: bytes of the stream read so far, and the stream's size when
 * it is a regular file (-1 otherwise: a pipe, a terminal). */
uint64_t trace_reader_offset(const struct trace_reader *reader);
int64_t trace_reader_size(const struct trace_reader *reader);

/* True when a read of the reader's stream may wait for a writer: a pipe or a
 * terminal opened by trace_reader_open() (stdin with "-"), the streams
 * trace_reader_watch_cancel() takes. */
bool trace_reader_may_block(const struct trace_reader *reader);
/* For a reader on another thread (trace_pipe.h): from now on every read of
 * the stream first polls FD too, and FD readable ends the read with
 * TRACE_ERROR_IO "read cancelled" (the reader is then poisoned), so a reader
 * blocked on a silent pipe can be told to stop.  Only for a stream that is
 * not a regular file, opened by trace_reader_open() (stdio buffers none of
 * it); false otherwise, and nothing changes (a regular file's read never
 * blocks for long). */
bool trace_reader_watch_cancel(struct trace_reader *reader, int fd);
/* A hash of a path's last name (LEN bytes at NAME), for trace_reader_hash_names(). */
typedef uint32_t (*trace_name_hash_fn)(const char *name, size_t len);
/* From now on every op read with a path carries HASH of its last name (trace_op.name_hash, TR10):
 * the reader's thread hashes it, not the user's (a replay's model looks a directory's entries up
 * by such a hash).  NULL: no hash (name_hash 0). */
void trace_reader_hash_names(struct trace_reader *reader, trace_name_hash_fn hash);

void trace_reader_free(struct trace_reader *reader);
/* The typedef exists only so that g_autoptr(trace_reader) works. */
typedef struct trace_reader trace_reader;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(trace_reader, trace_reader_free)

/* --- writer --------------------------------------------------------------- */

struct trace_writer;

/* A writer over OUT; it does not close OUT.  Nothing is written yet. */
struct trace_writer *trace_writer_new(FILE *out);

/* Write the header line.  Call once, before any op. */
bool trace_writer_begin(struct trace_writer *writer, GError **error);
/* Write "# TEXT" (TEXT must not contain a newline; one is replaced by a space). */
bool trace_writer_comment(struct trace_writer *writer, GError **error, const char *format, ...)
	G_GNUC_PRINTF(3, 4);
/* Check OP with trace_op_check() and write it as one line. */
bool trace_writer_op(struct trace_writer *writer, const struct trace_op *op, GError **error);

/* Shorthands over trace_writer_op() for the ops generators write most. */
bool trace_writer_path_op(struct trace_writer *writer, enum trace_op_kind kind,
			  const char *path, GError **error); /* stat readdir unlink rmdir fsync
								read (whole) delete-snapshot */
bool trace_writer_sync(struct trace_writer *writer, GError **error);
bool trace_writer_mark(struct trace_writer *writer, const char *label, GError **error);
bool trace_writer_clock_advance(struct trace_writer *writer, int64_t ns, GError **error);
bool trace_writer_clock_set(struct trace_writer *writer, int64_t ns_since_epoch, GError **error);

/* Bounds on what WRITER writes, 0 for none: the op that would pass MAX_OPS
 * ops or MAX_BYTES bytes (header and comments included) is not written and
 * fails with TRACE_ERROR_LIMIT naming the bound, and so does every later
 * one. A generator that would write without end (grep -R over nested
 * symlinks) stops with a clear error instead of filling a disk. */
void trace_writer_set_limits(struct trace_writer *writer, uint64_t max_ops, uint64_t max_bytes);
/* The max_ops of trace_writer_set_limits (0: no bound). */
uint64_t trace_writer_max_ops(const struct trace_writer *writer);

/* Ops written so far (comments and the header excluded). */
uint64_t trace_writer_op_count(const struct trace_writer *writer);

/* Flush and report any write error seen so far (TRACE_ERROR_IO). */
bool trace_writer_finish(struct trace_writer *writer, GError **error);

void trace_writer_free(struct trace_writer *writer);
typedef struct trace_writer trace_writer;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(trace_writer, trace_writer_free)

/* Nanosecond constants for clock and time fields. */
#define TRACE_NS_PER_SEC INT64_C(1000000000)
#define TRACE_NS_PER_DAY (INT64_C(86400) * TRACE_NS_PER_SEC)

#endif
