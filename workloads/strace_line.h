/*
 * workloads/strace_line.h - one line of an strace log, split into its parts;
 * private to workloads/ (strace.c is the only user).
 *
 * The lines `strace -f -ttt -o LOG` writes, and what they become:
 *
 *     9324  1796298443.170384 openat(AT_FDCWD, "t/b", O_RDONLY|O_DIRECTORY) = 3
 *     ^pid  ^time (-ttt, -tt or -t)  ^name ^args split at top-level commas  ^ret
 *     9324  12:00:01.000001 read(3,  <unfinished ...>          STRACE_LINE_UNFINISHED
 *     9325  12:00:01.000002 <... read resumed>"x", 9) = 1      STRACE_LINE_RESUMED
 *     9324  12:00:01.000003 --- SIGCHLD {si_signo=SIGCHLD} ---  STRACE_LINE_SIGNAL
 *     9324  12:00:01.000004 +++ exited with 0 +++             STRACE_LINE_EXIT
 *
 * The pid is there with -f (and absent without it); the time is there with
 * -t, -tt or -ttt.  An unfinished call and its resumption are joined by the
 * caller (strace_line_join) into the text of one complete call, which is then
 * split with strace_call_parse.
 *
 * Invariants:
 *   SL1 a parsed call has a non-empty name of [A-Za-z0-9_], and every arg is
 *      the exact text between top-level commas, trimmed of spaces;
 *   SL2 strings point into the caller's line buffer (valid until it changes);
 *   SL3 errors are a static reason string ("no '=' after the arguments"),
 *      never printed here.
 */
#ifndef COWSIM_WORKLOADS_STRACE_LINE_H
#define COWSIM_WORKLOADS_STRACE_LINE_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

enum strace_line_kind {
	STRACE_LINE_CALL,        /* name(args) = ret ... */
	STRACE_LINE_UNFINISHED,  /* name(args <unfinished ...> */
	STRACE_LINE_RESUMED,     /* <... name resumed>rest */
	STRACE_LINE_SIGNAL,      /* --- SIG... --- */
	STRACE_LINE_EXIT,        /* +++ exited with N +++, +++ killed by SIG +++ */
};

enum strace_time_kind {
	STRACE_TIME_NONE,        /* no -t */
	STRACE_TIME_OF_DAY,      /* -t, -tt: HH:MM:SS[.frac], no date */
	STRACE_TIME_EPOCH,       /* -ttt: seconds since the epoch */
};

struct strace_line {
	enum strace_line_kind kind;
	int64_t pid;             /* 0 when the log has no pid column */
	enum strace_time_kind time_kind;
	int64_t time_ns;         /* since the epoch, or since midnight for STRACE_TIME_OF_DAY */
	const char *name;        /* CALL, UNFINISHED, RESUMED (may be "" for a bare "<... resumed>") */
	size_t name_len;
	const char *rest;        /* CALL: from the name on; UNFINISHED: from the name up to " <unfinished ...>";
				    RESUMED: the text after '>' */
	size_t rest_len;
};

/* Split LINE (NUL-terminated, no newline).  NULL on success, else the reason. */
const char *strace_line_parse(const char *line, struct strace_line *out);

#define STRACE_CALL_MAX_ARGS 8

struct strace_call {
	char name[64];
	size_t argc;
	const char *args[STRACE_CALL_MAX_ARGS]; /* NUL-terminated copies in `storage` */
	bool ret_unknown;        /* "= ?" (the call did not return, e.g. exit_group) */
	int64_t ret;             /* the return value (decimal or 0x hex) */
	bool failed;             /* ret == -1 with an errno name, or "= ?" */
	GString *storage;        /* owned by the caller: strace_call_init / strace_call_clear */
};

void strace_call_init(struct strace_call *call);
void strace_call_clear(struct strace_call *call);
/* Split the complete call TEXT ("name(args) = ret ..."), LEN bytes.  NULL on success. */
const char *strace_call_parse(const char *text, size_t len, struct strace_call *call);

/* --- decoding one argument ------------------------------------------------------ */

/* A number: decimal, negative, 0x hex, 0-prefixed octal; an fd decorated by -y
 * ("3</path>") gives its number.  NULL on success. */
const char *strace_arg_int(const char *arg, int64_t *out);
/* A C string literal as strace prints it ("a\"b\n\303\251"), decoded into OUT.
 * A literal followed by "..." was cut by -s: *truncated is set.  NULL on success. */
const char *strace_arg_string(const char *arg, GString *out, bool *truncated);
/* True when the flag word FLAG is one of ARG's '|'-separated words. */
bool strace_arg_has_flag(const char *arg, const char *flag);
/* The -y decoration of an fd ("3</a/b>" gives "/a/b"), decoded into OUT; false if none. */
bool strace_arg_fd_path(const char *arg, GString *out);

#endif
