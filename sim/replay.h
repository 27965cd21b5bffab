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
	double elapsed_s;             /* seconds since the trace's first clock op (0 before it) */
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
	/* Added for `cowsim run --find-min-device` (issue 17): end the run
	 * (REPLAY_ENOSPC) after the first op that met ENOSPC, even one the
	 * model does not refuse (a read whose atime update was lost). */
	bool stop_at_enospc;
	/* Added for the ENOSPC hint of `cowsim run` (issue 18): end the run
	 * (REPLAY_DONE) after this many ops; 0: the whole trace. */
	uint64_t stop_after_ops;
	/* Added for issue 20 (round 16a): read and parse the trace on the caller's
	 * thread, as before; false (the default) reads ahead on a second thread
	 * (workloads/trace_pipe.h). The outputs are the same either way. */
	bool no_read_ahead;
	/* Added for issue 20 (round 17): the caller exits soon after the run,
	 * so the model's memory is left for the exit to return rather than
	 * freed block by block (RP11); false frees it before replay_run()
	 * returns. The outputs are the same either way. */
	bool leave_model_to_exit;
};

enum replay_status {
	REPLAY_DONE = 0,
	REPLAY_ENOSPC = 1,            /* the device filled; rows so far are kept */
	REPLAY_BAD_INPUT = 2,         /* the trace is malformed or an op cannot apply */
	REPLAY_INTERRUPTED = 3,
	REPLAY_CORRUPT = 4,           /* an invariant checker failed: a model bug */
	REPLAY_SINK_FAILED = 5,       /* the sink refused a row (for example a full disk) */
};

/* Where something first happened in a run; seen false when it never did. */
struct replay_event {
	bool seen;
	uint64_t op_index;            /* 0-based, as the CSV's op_index */
	uint64_t line;                /* the trace line of that op */
	const char *op;               /* its keyword ("read"), static */
	int64_t clock_ns;             /* the simulated clock after it */
};

struct replay_outcome {
	enum replay_status status;
	uint64_t ops;                 /* ops applied */
	uint64_t line;                /* trace line where it stopped */
	uint64_t failed_ops;          /* ops the model refused (with keep_going) */
	bool stopped_at_mark;         /* the run ended at options->stop_at_mark */
	struct replay_event first_enospc;      /* the first op after which ENOSPC had been met
						* (counters.enospc_events: an op refused, an atime
						* update or a writeback that could not get space) */
	struct replay_event first_atime_lost;  /* the first op after which an atime update had
						* been lost to ENOSPC (counters.atime_enospc:
						* lost as kernel 6.18 loses it, atime_lost;
						* dropped by a policy, atime_dropped; or its
						* read failed, failed_reads, --enospc-read fail) */
	struct fs_report final;
};

/* "2012-12-01 10:00:00 UTC": a simulated clock for people. */
void replay_format_clock(int64_t clock_ns, char *out, size_t size);
/* "trace line 1234 (read), op_index 1233, time_s 1354356000.000000
 * (2012-12-01 10:00:00 UTC)", or "none" when the event was not seen. */
void replay_format_event(const struct replay_event *event, char *out, size_t size);

/* Replays `trace_path` ("-" for stdin). *error explains any status but DONE,
 * naming the trace file and line. */
enum replay_status replay_run(const char *trace_path, const struct replay_options *options,
			      replay_sink_fn sink, void *opaque, struct replay_outcome *outcome,
			      GError **error);

#endif
