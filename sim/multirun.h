/*
 * sim/multirun.h - what the commands that replay one trace many times share
 * (cowsim compare, cowsim sweep).
 *
 * How it works
 *   Both commands take the same run options, check them the same way, stop on
 *   the same signals and turn each run into a summary line the same way; the
 *   command only decides which configurations to run and what to draw:
 *
 *     options:  -o/--output DIR --base LABEL --every N --keep-going --quiet
 *               multirun_add_entries() --> struct multirun_args
 *               multirun_check()       --> exit 2 and a message on a bad value
 *     signals:  multirun_catch_signals() --> multirun_interrupted
 *     each run: multirun_run(trace, config) --rows_run--> rows_summary
 *                                           --> the run's exit status
 *
 * Invariants
 *   MR1  A run the device filled (ENOSPC) is a result: exit status EXIT_OK,
 *       with *error saying where it stopped.
 *   MR2  Every message starts "cowsim COMMAND: " and goes to stderr.
 *   MR3  TRACE is read through before anything is created (multirun_check_trace):
 *       a malformed line is exit 2 with DIR as it was; --base LABEL names a
 *       mark of the trace, checked then too, and a run that replays a whole
 *       trace (a --gen one) without meeting it is bad input (exit 2), never a
 *       line of empty columns.
 *   MR4  A staged folder (multirun_stage_*) changes DIR only at its commit:
 *       until then every file goes to DIR/.COMMAND-tmp-XXXXXX (same
 *       filesystem, a hidden name report leaves out). The commit renames each
 *       file onto its name in DIR, `last` ones last, then removes the `stale`
 *       names the stage did not hold; a discard removes the stage (and DIR when
 *       the stage made it and it is empty again), leaving DIR as it was.
 */
#ifndef COWSIM_SIM_MULTIRUN_H
#define COWSIM_SIM_MULTIRUN_H

#include <stdbool.h>
#include <glib.h>

#include "rows.h"

struct multirun_args {
	char *out;                    /* DIR, owned; multirun_check() sets the default */
	char *base;                   /* --base LABEL, owned; NULL: the first mark */
	gint64 every;                 /* --every N: a row every N ops (0: marks only) */
	gboolean keep_going;          /* count refused ops and finish the trace */
	gboolean quiet;               /* no table on stdout, no progress */
};

/* Adds -o/--output (and its old spelling --out), --base, --every, --keep-going and --quiet to the context's main
 * group; `out_help` (kept, not copied) says what DIR receives. Cannot fail. */
void multirun_add_entries(GOptionContext *context, struct multirun_args *args, const char *out_help);
void multirun_args_clear(struct multirun_args *args);

/* Checks --every and, unless `trace` is NULL, that TRACE is a readable file
 * (not "-": every run reads it again); sets args->out to `default_out` when
 * not given. EXIT_OK, or EXIT_BAD_INPUT with the message printed (MR2). */
int multirun_check(const char *command, struct multirun_args *args, const char *trace, const char *default_out);

/* MR3: reads TRACE through (every line parsed, no replay) and, with `base`
 * set, checks it has a mark labelled `base`. EXIT_OK, or EXIT_BAD_INPUT with a message naming the
 * option and the trace's marks, or the trace's first malformed line. */
int multirun_check_trace(const char *command, const char *trace, const char *base);

/* Creates args->out. EXIT_OK, or with the message printed EXIT_BAD_INPUT (a
 * folder that cannot be made there) or EXIT_RUN_FAILED (a full disk), CLI2. */
int multirun_make_out_dir(const char *command, const struct multirun_args *args);

/* MR4: DIR's next set of files, written beside it first. */
struct multirun_stage {
	char *dir;                    /* DIR */
	char *path;                   /* DIR/.COMMAND-tmp-XXXXXX; NULL once committed or discarded */
	bool made_dir;                /* DIR did not exist before: a discard removes it if empty */
};

/* Creates args->out (as multirun_make_out_dir) and the stage inside it.
 * EXIT_OK, or with the message printed the status of a DIR that cannot be
 * made (CLI2). */
int multirun_stage_open(const char *command, const struct multirun_args *args, struct multirun_stage *stage);
/* STAGE/NAME, where the file DIR/NAME is written until the commit. */
char *multirun_stage_file(const struct multirun_stage *stage, const char *name);
/* Moves every file of the stage onto DIR/NAME (the `last` names last), then
 * removes DIR/NAME for each name of `stale` (NULL-terminated, plain file
 * names; either list may be NULL) that the stage did not hold, and the stage.
 * False with *error naming the file that could not be moved; the files not
 * yet moved stay in the stage. */
bool multirun_stage_commit(struct multirun_stage *stage, const char *const *last, const char *const *stale,
			   GError **error);
/* Removes the stage and its files: DIR as it was (MR4). Nothing when
 * already committed or discarded. */
void multirun_stage_discard(struct multirun_stage *stage);
void multirun_stage_clear(struct multirun_stage *stage);

/* The objects of member `member` of a parameters.json text (provenance.h
 * writes one member a line, two spaces of indent a level): one GHashTable
 * (key -> value text, strings unescaped, null members left out) per object
 * of an array member such as compare's "runs", or one for an object member
 * such as "summary". NULL when the text has no such member. */
GPtrArray *multirun_parameters_objects(const char *json, const char *member);

/* The signal that stopped the commands (SIGINT, SIGTERM), 0 while none came. */
extern volatile int multirun_interrupted;
void multirun_catch_signals(void);
/* The exit status of an interrupted command: 128 + the signal. */
int multirun_interrupted_status(void);

/* Wall-clock seconds (monotonic), for progress and ETAs only. */
double multirun_seconds(void);

/* Replays `trace` under `config` with the run options of `args`, rows to
 * `csv_path` (NULL: none), into *summary (always filled; free it with
 * rows_summary_clear()). Returns the run's exit status: EXIT_OK done or
 * ended by ENOSPC (MR1), EXIT_BAD_INPUT a malformed trace, 128+signal
 * interrupted, EXIT_RUN_FAILED a model invariant broke or a file could not
 * be written. *error explains every run that did not end done. */
int multirun_run(const char *trace, const struct fs_config *config, const struct multirun_args *args,
		 const char *csv_path, struct rows_summary *summary, GError **error);

#endif
