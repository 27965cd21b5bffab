/*
 * sim/replay.h - drive the model with a trace.
 *
 * The one place where trace operations become model calls. `cowsim run`
 * (and the commands that run many configurations) call replay_run() with a
 * trace, a model configuration and a row sink; replay_run() streams the
 * trace, applies each op, and hands a row to the sink at every `mark` (after
 * committing, as btrfs-replay syncs before it measures) and every
 * `row_every` ops.
 */
#ifndef COWSIM_SIM_REPLAY_H
#define COWSIM_SIM_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

#include "fs.h"

/* A measurement point, handed to the sink. */
struct replay_row {
	uint64_t op_index;            /* 0-based index of the op after which it was taken */
	double time_s;                /* the simulated clock, seconds since the epoch */
	const char *label;            /* the mark's label, NULL for periodic rows */
	struct fs_report report;
	struct fs *fs;                /* for per-subvolume usage; valid during the call */
};

/* Returns false (with *error set) to stop the run. */
typedef bool (*replay_sink_fn)(void *opaque, const struct replay_row *row, GError **error);

struct replay_options {
	struct fs_config fs;
	uint64_t row_every;           /* 0: rows at marks only */
	uint64_t check_every;         /* run fs_check() every N ops (0: never; 1: paranoid) */
	bool keep_going;              /* a failed op is counted and the run goes on */
	bool progress;                /* progress on stderr */
	bool warn_snapshots;          /* print the snapshot-time warning on stderr */
	volatile int *interrupted;    /* set by a signal handler: stop at the next op */
	/* Added for `cowsim draw` (issue 8); zero keeps the behaviour above. */
	const char *stop_at_mark;     /* end the run (REPLAY_DONE) after the row of the first mark
				       * with this label; NULL: run the whole trace */
	bool row_at_end;              /* after the last op, sync and hand the sink one more row
				       * (label NULL), as a mark would; not when stopped at a mark */
};

enum replay_status {
	REPLAY_DONE = 0,
	REPLAY_ENOSPC = 1,            /* the device filled; rows so far are kept */
	REPLAY_BAD_INPUT = 2,         /* the trace is malformed or an op cannot apply */
	REPLAY_INTERRUPTED = 3,
	REPLAY_CORRUPT = 4,           /* an invariant checker failed: a model bug */
	REPLAY_SINK_FAILED = 5,       /* the sink refused a row (for example a full disk) */
};

struct replay_outcome {
	enum replay_status status;
	uint64_t ops;                 /* ops applied */
	uint64_t line;                /* trace line where it stopped */
	uint64_t failed_ops;          /* ops the model refused (with keep_going) */
	bool stopped_at_mark;         /* the run ended at options->stop_at_mark */
	struct fs_report final;
};

/* Replays `trace_path` ("-" for stdin). *error explains any status but DONE,
 * naming the trace file and line. */
enum replay_status replay_run(const char *trace_path, const struct replay_options *options,
			      replay_sink_fn sink, void *opaque, struct replay_outcome *outcome,
			      GError **error);

#endif
