/*
 * workloads/strace.h - turn an strace log into a cowsim trace: what a real
 * program did to the files under one directory, replayable with cowsim run.
 *
 * The log is what `strace -f -ttt -e trace=%file,%desc,%process -o LOG CMD`
 * writes (docs/recording.md has the exact command line and the whole
 * mapping).  In short, for the calls that succeeded on paths under ROOT:
 *
 *     openat(O_CREAT) of a new file   -> create PATH size=0 mode=
 *     open + read/pread/mmap          -> read PATH     (once per open that reads)
 *     open + getdents64               -> readdir DIR   (once per open that lists)
 *     stat, lstat, newfstatat, statx, access, fstat -> stat PATH
 *     readlink                        -> read LINK     (a symlink's read is readlink)
 *     a path walk through a symlink   -> read LINK first (the kernel touches its atime)
 *     write/pwrite                    -> write PATH OFF LEN (offsets tracked per open file)
 *     mkdir rename unlink rmdir link symlink truncate fsync -> the same op
 *     utimensat, utimes, utime        -> settime PATH atime= mtime=
 *     the -ttt/-tt times              -> clock @T (first) and clock +D steps
 *
 * ROOT (a real directory) appears in the trace as PREFIX (default /tree, where
 * `cowsim gen from-dir ROOT` puts it).  Every call is counted in exactly one
 * bucket of struct strace_stats; nothing is dropped silently.
 *
 * How it works: the converter keeps, per pid, a file-descriptor table (shared
 * between threads made with CLONE_FILES, copied on fork, closed on exec for
 * O_CLOEXEC) and a working directory, so that dirfd-relative and relative
 * paths resolve as the kernel resolved them; and a map of the tree under ROOT
 * (from `options.tree`, then kept up to date by the ops it emits) that says
 * which paths are symlinks, which exist (O_CREAT of a new file is a create),
 * and how big files are (O_APPEND writes).
 *
 * Invariants:
 *   ST1 deterministic: the same log and options give the same bytes;
 *   ST2 every op goes through trace_writer_op (the trace always parses);
 *   ST3 when options.tree is given, every op is valid against the tree the
 *      ops before it built (a call the map contradicts is dropped and
 *      counted as "inconsistent"), so prelude + ops replays;
 *   ST4 a malformed line is reported as "LOG:LINE: reason" with the log's
 *      line number; with strict it stops the conversion, otherwise it is
 *      skipped and counted;
 *   ST5 the library never prints and never exits.
 */
#ifndef COWSIM_WORKLOADS_STRACE_H
#define COWSIM_WORKLOADS_STRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <glib.h>

#include "fstree.h"
#include "trace.h"

#define STRACE_ERROR (strace_error_quark())
GQuark strace_error_quark(void);

enum strace_error_code {
	STRACE_ERROR_IO,         /* the log could not be read */
	STRACE_ERROR_MALFORMED,  /* a line was not understood (strict) */
	STRACE_ERROR_ARGS,       /* bad options (no root, ...) */
};

/* The label of the measurement the converter writes at the end. */
#define STRACE_MARK_LABEL "after_record"

struct strace_options {
	const char *root;          /* the real directory the program worked on; absolute and canonical */
	const char *prefix;        /* where ROOT is in the trace; NULL for "/tree" */
	const char *cwd;           /* the first process's working directory; absolute */
	const struct fstree *tree; /* ROOT before the program ran, or NULL (then symlinks and
				      existing files are unknown, and ST3 does not hold) */
	uint32_t umask;            /* cleared from the modes of mkdir and O_CREAT, as the kernel does
				      (the log shows the mode the program asked for, not the umask) */
	bool strict;               /* a malformed line is an error, not a skip */
	bool clock_set;            /* a prelude has set the clock: no "clock @T"; */
	int64_t now_ns;            /* ... the simulated time it reads, for the first call */
};

/* What happened to the calls of a log (each call in exactly one bucket). */
struct strace_stats {
	uint64_t lines;            /* lines read */
	uint64_t calls;            /* complete calls (an unfinished + resumed pair is one) */
	uint64_t converted;        /* calls that produced one or more ops */
	uint64_t no_effect;        /* calls inside ROOT with nothing to replay (open, close, lseek, a second read) */
	uint64_t other;            /* calls that touch no file (mmap of memory, brk, exit, ...) */
	uint64_t outside;          /* calls on paths or fds outside ROOT */
	uint64_t failed;           /* calls that returned an error (they changed nothing) */
	uint64_t failed_walks;     /* of `converted`: failed calls whose path walk followed symlinks
				      (read LINK ops only: the walk touched their atimes) */
	uint64_t unknown_fd;       /* calls on fds the log never opened (inherited stdio, pipes, sockets) */
	uint64_t inconsistent;     /* calls the tree map contradicts (ST3) */
	uint64_t unsupported;      /* calls inside ROOT the trace format cannot express (see `unsupported_by_name`) */
	uint64_t malformed;        /* lines skipped as not understood */
	uint64_t first_malformed_line;
	uint64_t ops;              /* trace ops written by the conversion (the prelude excluded) */
};

struct strace_converter;

/* A converter writing through W (it does not write the header).  OPTIONS'
 * strings and tree must outlive it. */
struct strace_converter *strace_converter_new(const struct strace_options *options, struct trace_writer *w);
void strace_converter_free(struct strace_converter *conv);
typedef struct strace_converter strace_converter;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(strace_converter, strace_converter_free)

/* Convert one log line (no newline); LINENO is its 1-based number, NAME the
 * log's name for messages.  False with *error on a writer error, or on a
 * malformed line when strict. */
bool strace_converter_line(struct strace_converter *conv, const char *name, const char *line, uint64_t lineno,
			   GError **error);
/* Every line of LOG. */
bool strace_converter_stream(struct strace_converter *conv, FILE *log, const char *name, GError **error);
/* Write sync, mark after_record, and the counts as comment lines. */
bool strace_converter_finish(struct strace_converter *conv, GError **error);

const struct strace_stats *strace_converter_stats(const struct strace_converter *conv);
/* The report lines (counts, then up to 20 malformed-line messages), for stderr. */
GPtrArray *strace_converter_report(const struct strace_converter *conv);

/* The whole conversion of the log at LOG_PATH ("-" = stdin): if PRELUDE,
 * first the ops of `cowsim gen from-dir ROOT` (options->tree is required and
 * is what is copied), then the calls.  The header is not written.  Report
 * lines are appended to NOTES (char *, may be NULL). */
bool strace_write_trace(const struct strace_options *options, bool prelude, const char *log_path,
			struct trace_writer *w, GPtrArray *notes, GError **error);

#endif
