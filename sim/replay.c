/*
 * sim/replay.c - trace operations applied to the model.
 *
 * Mapping (docs/trace-format.md has the trace side):
 *   mkdir/create/symlink/link/write/truncate/unlink/rmdir/rename -> fs_*;
 *   read -> fs_read (atime per the mount and policy), readdir -> fs_readdir,
 *   stat -> fs_stat (no atime), settime -> fs_settime (utimensat),
 *   snapshot/delete-snapshot -> fs_snapshot/fs_delete_snapshot,
 *   clock -> fs_set_clock (commits every commit interval), sync -> fs_sync,
 *   mark -> fs_sync then a row, remount -> new atime options.
 * Each op is also a cause for the model's attribution (fs_set_cause, the
 * metadata_by_* columns): read and readdir are atime, snapshot is snapshot,
 * delete-snapshot is delete, and every other op is write (namespace and
 * data changes; settime too, an explicit utimensat; the ops that only
 * commit, whose work the model charges to what queued it).
 * A read whose atime update met ENOSPC fails in the model's counters but is
 * not an error of the trace; any other refused op stops the run with the
 * trace's file and line, unless keep_going.
 *
 * Invariants of the loop (replay_loop):
 *   RP6 the cause in force is the one the last fs_set_cause() set (fs.h: the
 *       model puts back every cause it sets for work it defers; after
 *       fs_new() it is SPACE_CAUSE_WRITE), so an op of that cause needs no
 *       call; a checked run (--check-every) calls before every op, and its
 *       rows must be the same (tests/sim/test_attribution.sh);
 *   RP7 an op with nothing to look at afterwards (no option that wants every
 *       op, not a clock, snapshot or mark, not refused) costs the loop only
 *       its call, the interrupt test and note_events(): everything else is in
 *       look_after_op();
 *   RP8 the first ENOSPC and the first lost atime update are noted after the
 *       first op after which their counter is not 0: the loop reads both
 *       counters live (fs_counters_live()) and calls note_events() only then,
 *       until both are seen;
 *   RP9 the loop takes its ops from a trace_pipe (workloads/trace_pipe.h), with
 *       read-ahead (a second thread parses while the model runs; the default)
 *       or without (replay_options.no_read_ahead): the same ops in the same
 *       order either way (TP1), so every output is the same; the trace's
 *       name, line and offset in messages and progress come from the pipe;
 *   RP10 a run that stops early (an error, a refused op, a mark, a signal, a
 *       sink) just returns: replay_run()'s trace_pipe_free() stops and joins
 *       the producer wherever it waits (TP4), and a parse error reaches the
 *       loop only after every op before it was applied (TP1);
 *   RP11 a model left to the exit (replay_options.leave_model_to_exit) is
 *       not freed but stays reachable from left_to_exit, so that leak
 *       checkers (LeakSanitizer, memcheck) count it in use at exit, never
 *       lost; the pipe is still freed and its thread joined (RP10);
 *   RP12 every RP_FOLLOW_HEAP_OPS ops, from the first, the loop lets
 *       huge_pages_follow() advise what the heap grew by (huge_pages.h HP2):
 *       a growth stays on 4 KiB pages only for what the model touched in the
 *       ops before that look.
 */
#include "replay.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "huge_pages.h"
#include "trace.h"
#include "trace_pipe.h"
#include "trace_syntax.h"

#define REPLAY_ERROR (replay_error_quark())
/* RP12: a look at the heap's growth every this many ops (a power of two): a
 * compare with sbrk(0), ~10 instructions. */
#define RP_FOLLOW_HEAP_OPS 64
static G_DEFINE_QUARK(cowsim-replay-error-quark, replay_error)

static int64_t op_time(const struct trace_op *op, uint32_t bit, int64_t value)
{
	return (op->times_given & bit) ? value : INT64_MIN;
}

static void op_attributes(const struct trace_op *op, struct fs_attributes *a)
{
	fs_attributes_init(a);
	a->mode = op->mode;
	a->uid = op->uid;
	a->gid = op->gid;
	a->atime = op_time(op, TRACE_TIME_ATIME, op->atime_ns);
	a->mtime = op_time(op, TRACE_TIME_MTIME, op->mtime_ns);
	a->ctime = op_time(op, TRACE_TIME_CTIME, op->ctime_ns);
}

static int apply_remount(struct fs *fs, const char *options)
{
	struct atime_options atime = *fs_atime_options(fs);
	const char *bad;
	int bad_length;
	if (!atime_parse_options(options, &atime, &bad, &bad_length))
		return -EINVAL;
	fs_set_atime_options(fs, &atime);
	return 0;
}

/* The kind of operation an op is, for attribution (see the top). */
static enum space_cause op_cause(enum trace_op_kind kind)
{
	switch (kind) {
	case TRACE_READ:
	case TRACE_READDIR:
		return SPACE_CAUSE_ATIME;
	case TRACE_SNAPSHOT:
		return SPACE_CAUSE_SNAPSHOT;
	case TRACE_DELETE_SNAPSHOT:
		return SPACE_CAUSE_DELETE;
	default:
		return SPACE_CAUSE_WRITE;
	}
}

/* RP6: an op of the cause in force needs no fs_set_cause() (a grep is half a million reads in a
 * row). *IN_FORCE is the cause last set, -1 when a call is wanted every op (a
 * checked run, --check-every: it compares with these runs, tests/sim/test_attribution.sh). */
static void set_cause(struct fs *fs, int *in_force, enum trace_op_kind kind)
{
	enum space_cause cause = op_cause(kind);
	if ((int)cause != *in_force) {
		fs_set_cause(fs, cause);
		if (*in_force >= 0)
			*in_force = (int)cause;
	}
}

/* A read op: 0 or a negative errno; an atime update that met ENOSPC is no
 * error of the trace (the model counts it as a failed read). *PATH_READ: the
 * last op with a path was a read whose path went to fs_read_path(), which
 * this one's becomes. */
static inline int apply_read(struct fs *fs, const struct trace_op *op, bool *path_read)
{
	/* rw_verify_area(): a range that passes the largest file offset is EINVAL. */
	if (op->has_range && (op->offset > INT64_MAX || op->length > INT64_MAX - op->offset)) {
		*path_read = false;
		return -EINVAL;
	}
	/* The reader measured the path, found and hashed its last name, and compared it with the
	 * last op's path (TR10): the walk's step out of the last directory does none of it again
	 * (fs_path.shared: bytes the last measured path given to fs_read_path() has, when the last op with a path
	 * was that read). */
	bool shared_known = *path_read;
	*path_read = op->path_len;
	int ret = op->path_len ? fs_read_path(fs, &(struct fs_path){ .bytes = op->path, .len = op->path_len,
								     .name_at = op->name_at, .name_hash = op->name_hash,
								     .hashed = true,
								     .shared = shared_known ? op->shared : 0 }, NULL)
			       : fs_read(fs, op->path, NULL);
	return ret == -ENOSPC ? 0 : ret;
}

/* Applies one op; returns 0 or a negative errno. *PATH_READ as apply_read()'s. */
static int apply_op(struct fs *fs, const struct trace_op *op, bool *path_read)
{
	if (op->path && op->kind != TRACE_READ)
		*path_read = false;
	struct fs_attributes a;
	switch (op->kind) {
	case TRACE_MKDIR:
		op_attributes(op, &a);
		return fs_mkdir(fs, op->path, &a);
	case TRACE_CREATE:
		op_attributes(op, &a);
		return fs_create(fs, op->path, op->size, &a);
	case TRACE_WRITE:
		return fs_write(fs, op->path, op->offset, op->length);
	case TRACE_TRUNCATE:
		return fs_truncate(fs, op->path, op->size);
	case TRACE_READ:
		return apply_read(fs, op, path_read);
	case TRACE_STAT:
		return fs_stat(fs, op->path);
	case TRACE_READDIR: {
		int ret = fs_readdir(fs, op->path, NULL);
		return ret == -ENOSPC ? 0 : ret;
	}
	case TRACE_RENAME:
		return fs_rename(fs, op->path, op->path2);
	case TRACE_LINK:
		return fs_link(fs, op->path, op->path2);
	case TRACE_SYMLINK:
		op_attributes(op, &a);
		return fs_symlink(fs, op->path2, op->path, &a);
	case TRACE_UNLINK:
		return fs_unlink(fs, op->path);
	case TRACE_RMDIR:
		return fs_rmdir(fs, op->path);
	case TRACE_SNAPSHOT:
		return fs_snapshot(fs, op->path, op->path2, op->readonly);
	case TRACE_DELETE_SNAPSHOT:
		return fs_delete_snapshot(fs, op->path);
	case TRACE_SETTIME:
		return fs_settime(fs, op->path, op_time(op, TRACE_TIME_ATIME, op->atime_ns),
				  op_time(op, TRACE_TIME_MTIME, op->mtime_ns));
	case TRACE_FSYNC:
		return fs_fsync(fs, op->path);
	case TRACE_CLOCK: {
		int64_t now = op->clock_ns;
		if (op->clock_relative && __builtin_add_overflow(fs_clock(fs), op->clock_ns, &now))
			return -EOVERFLOW; /* past the int64 nanoseconds of 2262 */
		return fs_set_clock(fs, now);
	}
	case TRACE_SYNC:
	case TRACE_MARK:
		return fs_sync(fs);
	case TRACE_REMOUNT:
		return apply_remount(fs, op->path2);
	}
	return -EINVAL;
}

/* The ops that add a directory entry: the ones -EOVERFLOW can refuse for a
 * full DIR_ITEM hash window (model/fs.h FS_DIR_HASH_PROBE). */
static bool adds_a_name(enum trace_op_kind kind)
{
	switch (kind) {
	case TRACE_MKDIR:
	case TRACE_CREATE:
	case TRACE_RENAME:
	case TRACE_LINK:
	case TRACE_SYMLINK:
	case TRACE_SNAPSHOT:
		return true;
	default:
		return false;
	}
}

static const char *op_error_text(const struct trace_op *op, int ret)
{
	if (op->kind == TRACE_CLOCK && ret == -EINVAL)
		return "the clock cannot move backwards";
	if (op->kind == TRACE_CLOCK && ret == -EOVERFLOW)
		return "the clock would pass the year 2262 (int64 nanoseconds)";
	if (op->kind == TRACE_SNAPSHOT && ret == -EOPNOTSUPP)
		return "this design takes read-only snapshots only (snapshot -r); --zfs-clones makes a "
		       "writable one a clone of a read-only snapshot";
	if (op->kind == TRACE_DELETE_SNAPSHOT && ret == -EBUSY)
		return "snapshots were taken of it (ZFS destroys a dataset with snapshots only with -r)";
	if (op->kind == TRACE_REMOUNT && ret == -EINVAL)
		return "unknown mount option";
	if (ret == -EOVERFLOW && adds_a_name(op->kind))
		return "too many names of the directory share this name's hash (the model keeps a colliding "
		       "name at most " G_STRINGIFY(FS_DIR_HASH_PROBE) " past its hash; btrfs refuses a DIR_ITEM that "
		       "would overflow)";
	return g_strerror(-ret);
}

struct progress {
	bool enabled;
	double started, last;
	int64_t size;                 /* the trace's bytes, -1 when unknown (a pipe) */
};

static double wall_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "cowsim: 42%, line 1200, 3000 ops, 1500 ops/s, 0:03 left": the percent and
 * the time left only when the trace's size is known, from the bytes read. */
static void progress_tick(struct progress *p, const struct trace_pipe *pipe, uint64_t ops, uint64_t line)
{
	if (!p->enabled || (ops & 4095))
		return;
	double now = wall_seconds();
	if (now - p->last < 0.5 || now - p->started < 1.0)
		return;
	p->last = now;
	double rate = ops / (now - p->started);
	if (p->size <= 0) {
		fprintf(stderr, "\rcowsim: line %" PRIu64 ", %" PRIu64 " ops, %.0f ops/s   ", line, ops, rate);
		return;
	}
	double done = (double)trace_pipe_offset(pipe) / (double)p->size;
	done = done > 1.0 ? 1.0 : done;
	unsigned left = done > 0 ? (unsigned)((now - p->started) * (1.0 - done) / done + 0.5) : 0;
	fprintf(stderr, "\rcowsim: %.0f%%, line %" PRIu64 ", %" PRIu64 " ops, %.0f ops/s, %u:%02u:%02u left   ",
		100.0 * done, line, ops, rate, left / 3600, left / 60 % 60, left % 60);
}

static void progress_done(struct progress *p)
{
	if (p->enabled && p->last > 0)
		fputc('\n', stderr);
}

struct run_state {
	struct fs *fs;
	const struct replay_options *options;
	replay_sink_fn sink;
	void *opaque;
	uint64_t snapshot_warnings;   /* snapshots that warned (only the first is printed in full) */
	uint64_t snapshot_warning_max; /* the largest unshare estimate of the others, bytes */
	bool clock_seen;              /* the trace's first clock op has run */
	int64_t clock_origin_ns;      /* where elapsed_s counts from */
	int cause;                    /* RP6: the cause in force, -1 for a call every op */
	uint32_t look_after;          /* RP7: the kinds (bits) that want a look after their op */
	const struct fs_counters *counters; /* RP8: the model's, live */
	bool events_seen;             /* RP8: both first events noted */
	bool path_read;               /* the last op with a path was a read given to fs_read_path() */
};

static bool emit_row(struct run_state *st, uint64_t op_index, const char *label, GError **error)
{
	struct replay_row row = { .op_index = op_index, .label = label, .fs = st->fs };
	fs_report(st->fs, &row.report);
	/* The simulated clock itself, as btrfs-replay writes it (columns.h CO4). */
	row.time_s = (double)fs_clock(st->fs) / 1e9;
	row.elapsed_s = st->clock_seen ? (double)(fs_clock(st->fs) - st->clock_origin_ns) / 1e9 : 0.0;
	return st->sink(st->opaque, &row, error);
}

static enum replay_status fail(GError **error, enum replay_status status, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static enum replay_status fail(GError **error, enum replay_status status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error_literal(error, REPLAY_ERROR, status, msg);
	return status;
}

void replay_format_clock(int64_t clock_ns, char *out, size_t size)
{
	time_t t = (time_t)(clock_ns / 1000000000);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(out, size, "%Y-%m-%d %H:%M:%S UTC", &tm))
		g_snprintf(out, size, "%" PRId64 " ns", clock_ns);
}

void replay_format_event(const struct replay_event *e, char *out, size_t size)
{
	if (!e->seen) {
		g_strlcpy(out, "none", size);
		return;
	}
	char when[64];
	replay_format_clock(e->clock_ns, when, sizeof(when));
	g_snprintf(out, size, "trace line %" PRIu64 " (%s), op_index %" PRIu64 ", time_s %.6f (%s)", e->line, e->op,
		   e->op_index, (double)e->clock_ns / 1e9, when);
}

static void note_first(struct replay_event *event, uint64_t count, struct run_state *st, const struct trace_op *op,
		       uint64_t index)
{
	if (event->seen || !count)
		return;
	*event = (struct replay_event){ .seen = true, .op_index = index, .line = op->line,
					.op = trace_op_kind_name(op->kind), .clock_ns = fs_clock(st->fs) };
}

/* The first ENOSPC and the first lost atime update (replay_outcome), once either counter left 0
 * (RP8). */
static G_GNUC_NO_INLINE void note_events(struct run_state *st, const struct trace_op *op, uint64_t index,
					 struct replay_outcome *outcome)
{
	note_first(&outcome->first_enospc, st->counters->enospc_events, st, op, index);
	note_first(&outcome->first_atime_lost, st->counters->atime_enospc, st, op, index);
	st->events_seen = outcome->first_enospc.seen && outcome->first_atime_lost.seen;
}

/* A path or label as one trace token (quoted and escaped when needed); ""
 * for none. */
static char *as_in_trace(const char *s)
{
	GString *token = g_string_new(NULL);
	if (s)
		trace_syntax_append_token(token, s);
	return g_string_free(token, false);
}

/* After an op: the checker, and what to do with a refused op. */
static enum replay_status after_op(struct run_state *st, struct trace_pipe *pipe, const struct trace_op *op,
				   int ret, struct replay_outcome *outcome, GError **error)
{
	const struct replay_options *o = st->options;
	if (o->check_every && outcome->ops % o->check_every == 0) {
		g_autoptr(GError) check_error = NULL;
		if (!fs_check(st->fs, &check_error))
			return fail(error, REPLAY_CORRUPT, "%s:%" PRIu64 ": after %s: model invariant broken: %s",
				    trace_pipe_name(pipe), op->line, trace_op_kind_name(op->kind),
				    check_error->message);
	}
	if (!ret)
		return REPLAY_DONE;
	if (ret != -EINTR) { /* a refused op; a run that keeps going only counts it */
		outcome->failed_ops++;
		if (o->keep_going)
			return REPLAY_DONE;
	}
	/* Paths as the trace writes them: a name of raw bytes reads as its
	 * escapes, which a user can search the trace for. */
	g_autofree char *path = as_in_trace(op->path), *path2 = as_in_trace(op->path2);
	if (ret == -EINTR) /* fs_config.cancelled: a signal came during a long op */
		return fail(error, REPLAY_INTERRUPTED, "%s:%" PRIu64 ": %s %s: interrupted during this line",
			    trace_pipe_name(pipe), op->line, trace_op_kind_name(op->kind), path);
	if (ret == -ENOSPC)
		return fail(error, REPLAY_ENOSPC, "%s:%" PRIu64 ": %s %s: no space left on the modeled device",
			    trace_pipe_name(pipe), op->line, trace_op_kind_name(op->kind), path);
	/* An op from one path to another names both: "snapshot /a -> /s: File
	 * exists" is about the destination, "No such file" about the source. */
	bool two_paths = op->kind == TRACE_RENAME || op->kind == TRACE_LINK || op->kind == TRACE_SNAPSHOT;
	if (two_paths)
		return fail(error, REPLAY_BAD_INPUT, "%s:%" PRIu64 ": %s %s -> %s: %s", trace_pipe_name(pipe),
			    op->line, trace_op_kind_name(op->kind), path, path2, op_error_text(op, ret));
	/* The error path only: it reads the trace's first lines again. */
	const char *hint = ret == -ENOENT && trace_recorded_without_prelude(trace_pipe_name(pipe))
				   ? " (this trace was recorded without --prelude, so it starts with no tree: record it "
				     "again with --prelude)"
				   : "";
	return fail(error, REPLAY_BAD_INPUT, "%s:%" PRIu64 ": %s %s: %s%s", trace_pipe_name(pipe), op->line,
		    trace_op_kind_name(op->kind), op->path ? path : path2, op_error_text(op, ret), hint);
}

/* The snapshot-time warning (issue 4): what one full read of the source
 * would unshare now, under the mount options and policy in force. */
static void warn_snapshot(struct run_state *st, struct trace_pipe *pipe, const struct trace_op *op)
{
	struct fs_report report;
	fs_report(st->fs, &report);
	if (!report.counters.unshare_estimate)
		return;
	/* A 30-day rotation snapshots 30 times: the first warning in full, the
	 * others counted and summed up once at the end (warn_snapshot_summary). */
	if (st->snapshot_warnings++) {
		if (report.counters.unshare_estimate > st->snapshot_warning_max)
			st->snapshot_warning_max = report.counters.unshare_estimate;
		return;
	}
	char mount[64], policy[64];
	atime_format_options(fs_atime_options(st->fs), mount, sizeof(mount));
	const struct fs_config *config = &st->options->fs;
	fs_policy_describe(config, policy, sizeof(policy));
	fprintf(stderr, "cowsim: warning: %s:%" PRIu64 ": snapshot %s -> %s: one read of everything in %s would "
		"unshare about %.1f MiB of metadata (%s, policy %s)\n", trace_pipe_name(pipe), op->line, op->path,
		op->path2, op->path, report.counters.unshare_estimate / 1048576.0, mount, policy);
}

static void warn_snapshot_summary(const struct run_state *st)
{
	if (st->snapshot_warnings > 1)
		fprintf(stderr, "cowsim: warning: %" PRIu64 " more snapshots gave the same warning (the largest: about "
			"%.1f MiB of metadata to unshare)\n", st->snapshot_warnings - 1,
			st->snapshot_warning_max / 1048576.0);
}

/* RP7: the kinds whose ops want a look after them (a clock before it, too): all of them when an
 * option wants a look after every op, whatever it did; else only a clock, a snapshot and a mark
 * (and any refused op). One bit a kind. */
static uint32_t kinds_to_look_after(const struct replay_options *o)
{
	if (o->check_every || o->row_every || o->progress || o->stop_at_enospc || o->stop_after_ops)
		return UINT32_MAX;
	return 1u << TRACE_CLOCK | 1u << TRACE_SNAPSHOT | 1u << TRACE_MARK;
}
G_STATIC_ASSERT(TRACE_OP_KIND_COUNT <= 32);

/* Before OP: elapsed_s counts from the first clock (clock @T sets it, clock +D starts the clock
 * running). */
static void before_op(struct run_state *st, const struct trace_op *op)
{
	if (op->kind == TRACE_CLOCK && !st->clock_seen) {
		st->clock_seen = true;
		st->clock_origin_ns = op->clock_relative ? fs_clock(st->fs) : op->clock_ns;
	}
}

/* After OP (the INDEX-th, RET its result) when RP7 wants a look: the snapshot warning, the checker,
 * a refused op, the ENOSPC stop, rows, progress and the other stops.  REPLAY_DONE with *STOP false
 * goes on. */
static enum replay_status look_after_op(struct run_state *st, struct trace_pipe *pipe, const struct trace_op *op,
					int ret, uint64_t index, struct progress *progress,
					struct replay_outcome *outcome, bool *stop, GError **error)
{
	const struct replay_options *o = st->options;
	enum replay_status status;
	*stop = true;
	if (op->kind == TRACE_SNAPSHOT && !ret && o->warn_snapshots)
		warn_snapshot(st, pipe, op);
	if ((status = after_op(st, pipe, op, ret, outcome, error)) != REPLAY_DONE)
		return status;
	if (o->stop_at_enospc && outcome->first_enospc.seen)
		return fail(error, REPLAY_ENOSPC, "%s:%" PRIu64 ": %s: met ENOSPC (stopping there)",
			    trace_pipe_name(pipe), op->line, trace_op_kind_name(op->kind));
	bool periodic = o->row_every && outcome->ops % o->row_every == 0;
	if ((op->kind == TRACE_MARK || periodic) &&
	    !emit_row(st, index, op->kind == TRACE_MARK ? op->path2 : NULL, error))
		return REPLAY_SINK_FAILED;
	progress_tick(progress, pipe, outcome->ops, op->line);
	if (o->stop_after_ops && outcome->ops >= o->stop_after_ops)
		return REPLAY_DONE;
	if (op->kind == TRACE_MARK && o->stop_at_mark && !strcmp(op->path2, o->stop_at_mark)) {
		outcome->stopped_at_mark = true;
		return REPLAY_DONE;
	}
	*stop = false;
	return REPLAY_DONE;
}

static enum replay_status replay_loop(struct run_state *st, struct trace_pipe *pipe,
				      struct replay_outcome *outcome, GError **error)
{
	const struct replay_options *o = st->options;
	struct progress progress = { .enabled = o->progress, .started = wall_seconds(),
				     .size = o->progress ? trace_pipe_size(pipe) : -1 };
	static const volatile int never;
	const volatile int *interrupted = o->interrupted ? o->interrupted : &never;
	const struct trace_op *op;
	enum replay_status status = REPLAY_DONE;
	int more;
	while ((more = trace_pipe_next(pipe, &op, error)) == 1) {
		if (*interrupted) {
			status = fail(error, REPLAY_INTERRUPTED, "%s:%" PRIu64 ": interrupted before this line",
				      trace_pipe_name(pipe), op->line);
			break;
		}
		outcome->line = op->line;
		bool look = st->look_after >> op->kind & 1;
		if (look)
			before_op(st, op);
		int ret;
		if (op->kind == TRACE_READ && st->cause == SPACE_CAUSE_ATIME) {
			ret = apply_read(st->fs, op, &st->path_read); /* most ops of a grep: no cause to set, no switch */
		} else {
			set_cause(st->fs, &st->cause, op->kind);
			ret = apply_op(st->fs, op, &st->path_read);
		}
		uint64_t index = outcome->ops++;
		if (G_UNLIKELY(!(index & (RP_FOLLOW_HEAP_OPS - 1))))
			huge_pages_follow();
		if ((st->counters->enospc_events | st->counters->atime_enospc) && !st->events_seen)
			note_events(st, op, index, outcome);
		bool stop = false;
		if ((look || ret) &&
		    ((status = look_after_op(st, pipe, op, ret, index, &progress, outcome, &stop, error)) != REPLAY_DONE || stop))
			break;
	}
	progress_done(&progress);
	warn_snapshot_summary(st);
	if (more < 0) { /* the reader's error, or a signal while the loop waited for ops (TP5) */
		outcome->line = trace_pipe_line(pipe);
		status = trace_pipe_interrupted(pipe) ? REPLAY_INTERRUPTED : REPLAY_BAD_INPUT;
	}
	return status;
}

/* RP11: the model of a run whose process exits soon after.  Freeing it block by block visits every
 * block once more: 3.6-8.7 ms of the seed run's ~140 ms (issue 20, a clock around fs_free()). */
static struct fs *left_to_exit;

static void leave_to_exit(struct fs *fs)
{
	fs_free(left_to_exit); /* an earlier run's, if a caller left two */
	left_to_exit = fs;
}

static bool interrupt_requested(void *opaque)
{
	return *(volatile int *)opaque != 0;
}

/* replay_options.row_at_end: the state after the last op, committed. */
static enum replay_status final_row(struct run_state *st, struct replay_outcome *outcome, GError **error)
{
	int ret = fs_sync(st->fs);
	if (ret)
		return fail(error, ret == -ENOSPC ? REPLAY_ENOSPC : REPLAY_BAD_INPUT,
			    "the final sync after %" PRIu64 " ops failed: %s", outcome->ops, g_strerror(-ret));
	return emit_row(st, outcome->ops ? outcome->ops - 1 : 0, NULL, error) ? REPLAY_DONE : REPLAY_SINK_FAILED;
}

enum replay_status replay_run(const char *trace_path, const struct replay_options *options, replay_sink_fn sink,
			      void *opaque, struct replay_outcome *outcome, GError **error)
{
	memset(outcome, 0, sizeof(*outcome));
	struct trace_reader *reader = trace_reader_open(trace_path, error);
	if (!reader)
		return outcome->status = REPLAY_BAD_INPUT;
	trace_reader_hash_names(reader, fs_name_hash); /* the reader's thread hashes each read's name (TR10) */
	/* RP9: the reader is the pipe's from here; with read-ahead it reads on while fs_new() runs.
	 * RP10: every return below frees the pipe, which joins its thread. */
	g_autoptr(trace_pipe) pipe = trace_pipe_start(reader, !options->no_read_ahead, options->interrupted,
						      options->progress);
	/* The model is asked between the pieces of a long op whether to stop
	 * (fs_config.cancelled); it never sees the signal itself. */
	struct fs_config config = options->fs;
	if (options->interrupted) {
		config.cancelled = interrupt_requested;
		config.cancelled_opaque = (void *)options->interrupted;
	}
	g_autoptr(Filesystem) fs = fs_new(&config, error);
	if (!fs)
		return outcome->status = REPLAY_BAD_INPUT;
	struct run_state st = { .fs = fs, .options = options, .sink = sink, .opaque = opaque,
				.cause = options->check_every ? -1 : SPACE_CAUSE_WRITE,
				.look_after = kinds_to_look_after(options), .counters = fs_counters_live(fs) };
	outcome->status = replay_loop(&st, pipe, outcome, error);
	if (outcome->status == REPLAY_DONE && options->row_at_end && !outcome->stopped_at_mark)
		outcome->status = final_row(&st, outcome, error);
	fs_report(fs, &outcome->final);
	if (options->leave_model_to_exit)
		leave_to_exit(g_steal_pointer(&fs));
	return outcome->status;
}
