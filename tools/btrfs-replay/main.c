/*
 * tools/btrfs-replay/main.c - replay a cowsim trace on a real, loop-mounted btrfs.
 *
 *   btrfs-replay TRACE [--nodesize 16K] [--mount OPTS] [--size 4G] [--csv FILE]
 *                      [--keep-image] [--keep-going]
 *
 * How it works
 *   1. options (sizes as cowsim reads them, cli_parse_size; mount options
 *      checked by name, so a typo is status 2, not 77); the trace is read once to check it (unless it is "-"), so a
 *      bad trace fails with status 2 before anything is created;
 *   2. needs root, mkfs.btrfs, btrfs and mount(8), else status 77 (skip);
 *   3. mkdtemp /tmp/btrfs-replay-XXXXXX, a sparse image of --size,
 *      mkfs.btrfs -q -f -n NODESIZE, mount -o loop,OPTS (failure: 77);
 *   4. every op in order (ops.c); `mark` syncs, reads the space info and
 *      writes one CSV row (results/columns.h); `remount` runs
 *      mount -o remount,OPTS;
 *   5. cleanup, always (BR2): umount (retried, then lazy), remove the image
 *      and the folder; then the summary of the marks.
 *
 *   SIGINT and SIGTERM only set replay_stop_signal; the op loop and the data
 *   loops poll it, so cleanup runs in the main path, never in the handler.
 *   The simulated clock is not the kernel's (BR4 of replay.h): the atimes the
 *   kernel writes are the real time, and time_s is the trace's clock.
 *
 * Exit status: 0 done; 1 the replay failed (an op, mkfs, a sync); 2 bad
 * arguments or trace; 77 not possible here; 128+N after signal N.
 *
 * Invariants: BR1-BR4 of replay.h; BRM1 the CSV is opened before the image is
 * made, so an unwritable CSV costs nothing; BRM2 every path that leaves
 * run_replay() goes through env_cleanup().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "output_file.h"
#include "replay.h"

volatile sig_atomic_t replay_stop_signal;

enum { EXIT_DONE = 0, EXIT_FAILED = 1, EXIT_BAD_INPUT = 2, EXIT_SKIP = 77 };

struct options {
	int nodesize;   /* bytes, from nodesize_text */
	char *nodesize_text;
	char *mount_opts;
	char *size_text;
	char *csv;
	gboolean keep_image;
	gboolean keep_going;
	char **rest;
	uint64_t size;  /* bytes, from size_text */
	const char *trace;
};

/* The temporary folder, image and mount (BR1, BR2). */
struct env {
	char *dir;      /* mkdtemp result; NULL until made */
	char *image;
	char *mnt;
	char *device;   /* /dev/loopN, for bytes_written; may be NULL */
	bool mounted;
	int mnt_fd;
	uint64_t written_at_mount; /* device bytes written when mounted */
	bool have_written;
};

static void on_signal(int sig)
{
	replay_stop_signal = sig;
}

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: blocking calls return EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* ---- options ----------------------------------------------------------- */

/* The option names mount(8) (filesystem-independent) and btrfs(5) take, so
 * that a typo in -m is bad input (exit 2) and not "cannot mount here" (77).
 * "loop" is not one: btrfs-replay adds it. */
static const char *const mount_option_names[] = {
	"async", "atime", "noatime", "defaults", "dev", "nodev", "diratime", "nodiratime", "dirsync", "exec",
	"noexec", "iversion", "noiversion", "mand", "nomand", "relatime", "norelatime", "strictatime",
	"nostrictatime", "lazytime", "nolazytime", "suid", "nosuid", "silent", "loud", "ro", "rw", "sync",
	"context", "fscontext", "defcontext", "rootcontext",
	"acl", "noacl", "autodefrag", "noautodefrag", "barrier", "nobarrier", "check_int", "check_int_data",
	"check_int_print_mask", "clear_cache", "commit", "compress", "compress-force", "datacow", "nodatacow",
	"datasum", "nodatasum", "degraded", "device", "discard", "nodiscard", "enospc_debug", "noenospc_debug",
	"fatal_errors", "flushoncommit", "noflushoncommit", "fragment", "nologreplay", "max_inline",
	"metadata_ratio", "norecovery", "recovery", "rescan_uuid_tree", "rescue", "skip_balance", "space_cache",
	"nospace_cache", "ssd", "ssd_spread", "nossd", "nossd_spread", "subvol", "subvolid", "thread_pool",
	"treelog", "notreelog", "usebackuproot", "user_subvol_rm_allowed", "inode_cache", "noinode_cache",
	NULL,
};

/* False with the message printed when a word of OPTS (comma-separated,
 * NAME or NAME=VALUE) is not a mount option. */
static bool check_mount_options(const char *opts)
{
	g_auto(GStrv) words = g_strsplit(opts, ",", -1);
	for (char **w = words; *w; w++) {
		size_t name_len = strcspn(*w, "=");
		bool known = false;
		for (const char *const *n = mount_option_names; *n && !known; n++)
			known = strlen(*n) == name_len && !strncmp(*n, *w, name_len);
		if (!known) {
			g_printerr("btrfs-replay: -m %s: unknown mount option '%.*s' (e.g. relatime, noatime, "
				   "strictatime, lazytime, compress=zstd; see mount(8) and btrfs(5))\n",
				   opts, (int)name_len, *w);
			return false;
		}
	}
	return true;
}

static const struct cli_doc replay_doc = {
	.program = "btrfs-replay",
	.args = "TRACE",
	.summary = "Replays a cowsim trace on a real btrfs: makes an image in a temporary folder\n"
		   "under /tmp, mounts it with -o loop,OPTS, performs every op of TRACE with real\n"
		   "system calls (the trace's \"/\" is the mount root) and writes one CSV row per\n"
		   "mark with the columns of 'cowsim run' (docs/columns.md).",
	.notes = "The trace's clock only sets time_s: the kernel clock cannot be moved. Needs\n"
		 "root and loop devices.",
	.examples = "  btrfs-replay t.trace --nodesize 16K -m relatime -o btrfs.csv\n"
		    "  btrfs-replay t.trace -m noatime --keep-image",
	.exits = "  0  done\n"
		 "  1  the replay failed (an op the kernel refused, a measurement that failed)\n"
		 "  2  bad arguments or a malformed trace\n"
		 "  77  not possible here (no root, no loop devices, no mkfs.btrfs)",
	.model_options = true,
};

/* Checks and converts what parse_options read; false with the message printed. */
static bool check_options(struct options *o)
{
	if (!o->rest || !o->rest[0] || o->rest[1]) {
		g_printerr("btrfs-replay: give exactly one TRACE (see --help)\n");
		return false;
	}
	g_autoptr(GError) error = NULL;
	uint64_t nodesize = 0;
	if (!cli_parse_size("--nodesize", o->nodesize_text ? o->nodesize_text : "16K", &nodesize, &error) ||
	    !cli_parse_size("--size", o->size_text ? o->size_text : "4G", &o->size, &error)) {
		g_printerr("btrfs-replay: %s\n", error->message);
		return false;
	}
	if (nodesize < 4096 || nodesize > 65536 || (nodesize & (nodesize - 1))) {
		g_printerr("btrfs-replay: --nodesize %s: must be a power of two from 4K to 64K\n", o->nodesize_text);
		return false;
	}
	o->nodesize = (int)nodesize;
	if (o->size < (128u << 20)) {
		g_printerr("btrfs-replay: --size %s: must be at least 128M\n", o->size_text);
		return false;
	}
	return !o->mount_opts || check_mount_options(o->mount_opts);
}

static int parse_options(int argc, char **argv, struct options *o)
{
	GOptionEntry entries[] = {
		{ "nodesize", 'n', 0, G_OPTION_ARG_STRING, &o->nodesize_text,
		  "tree block size for mkfs.btrfs -n, e.g. 16K or 16384 (default 16K)", "SIZE" },
		{ "mount", 'm', 0, G_OPTION_ARG_STRING, &o->mount_opts,
		  "mount options after loop, e.g. relatime or noatime (default: the kernel's)", "OPTS" },
		{ "size", 's', 0, G_OPTION_ARG_STRING, &o->size_text,
		  "size of the sparse image (default 4G)", "SIZE" },
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &o->csv,
		  "write the marks' rows to FILE (default and '-': standard output)", "FILE" },
		{ "csv", 'c', 0, G_OPTION_ARG_FILENAME, &o->csv, "the same as --output", "FILE" },
		{ "keep-image", 0, 0, G_OPTION_ARG_NONE, &o->keep_image,
		  "keep the image file after the run (its path is printed)", NULL },
		{ "keep-going", 'k', 0, G_OPTION_ARG_NONE, &o->keep_going,
		  "warn about a failed op instead of stopping", NULL },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->rest, NULL, NULL },
		G_OPTION_ENTRY_NULL
	};
	g_autoptr(GOptionContext) ctx = cli_context_new(&replay_doc);
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!cli_parse(ctx, &replay_doc, &argc, &argv) || !check_options(o))
		return EXIT_BAD_INPUT;
	o->trace = o->rest[0];
	if (!o->csv)
		o->csv = g_strdup("-");
	return EXIT_DONE;
}

/* Reads the whole trace once (BRM1: before anything is made).  Returns the
 * number of ops, or -1 after printing the error. */
static int64_t check_trace(const char *path)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = trace_reader_open(path, &error);
	struct trace_op op;
	int64_t n = 0;
	int rc;

	if (!reader) {
		g_printerr("btrfs-replay: %s\n", error->message);
		return -1;
	}
	while ((rc = trace_reader_next(reader, &op, &error)) == 1)
		n++;
	if (rc < 0) {
		g_printerr("btrfs-replay: %s\n", error->message);
		return -1;
	}
	return n;
}

/* Status 77 with a reason when this machine cannot replay. */
static int check_environment(void)
{
	if (geteuid() != 0) {
		g_printerr("btrfs-replay: needs root (mkfs, loop mount); skipping\n");
		return EXIT_SKIP;
	}
	const char *programs[] = { "mkfs.btrfs", "btrfs", "mount" };
	for (gsize i = 0; i < G_N_ELEMENTS(programs); i++) {
		g_autofree char *p = g_find_program_in_path(programs[i]);
		if (!p) {
			g_printerr("btrfs-replay: %s not found (install btrfs-progs); skipping\n",
				   programs[i]);
			return EXIT_SKIP;
		}
	}
	return EXIT_DONE;
}

/* ---- the image and the mount ------------------------------------------- */

static bool make_image(struct env *e, uint64_t size, GError **error)
{
	int fd = open(e->image, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		int saved = errno;
		if (fd >= 0)
			close(fd);
		g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_OP, "cannot make the image %s: %s",
			    e->image, g_strerror(saved));
		return false;
	}
	close(fd);
	return true;
}

/* Steps 3: folder, image, mkfs, mount.  On a mount failure *skip is set. */
static bool env_setup(struct env *e, const struct options *o, bool *skip, GError **error)
{
	g_autofree char *tmpl = g_build_filename(g_get_tmp_dir(), "btrfs-replay-XXXXXX", NULL);
	if (!g_mkdtemp(tmpl)) {
		int saved = errno;
		g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_OP, "mkdtemp %s: %s", tmpl,
			    g_strerror(saved));
		return false;
	}
	e->dir = g_steal_pointer(&tmpl);
	e->image = g_build_filename(e->dir, "image", NULL);
	e->mnt = g_build_filename(e->dir, "mnt", NULL);
	if (!make_image(e, o->size, error))
		return false;
	g_autofree char *ns = g_strdup_printf("%d", o->nodesize);
	const char *mkfs[] = { "mkfs.btrfs", "-q", "-f", "-n", ns, e->image, NULL };
	if (!replay_command(mkfs, error))
		return false;
	if (mkdir(e->mnt, 0755) < 0) {
		int saved = errno;
		g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_OP, "mkdir %s: %s", e->mnt,
			    g_strerror(saved));
		return false;
	}
	g_autofree char *opts = o->mount_opts && *o->mount_opts
					? g_strconcat("loop,", o->mount_opts, NULL)
					: g_strdup("loop");
	const char *mount[] = { "mount", "-t", "btrfs", "-o", opts, e->image, e->mnt, NULL };
	if (!replay_command(mount, error)) {
		*skip = true; /* no loop devices or no btrfs here */
		return false;
	}
	e->mounted = true;
	e->mnt_fd = open(e->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (e->mnt_fd < 0) {
		int saved = errno;
		g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_OP, "open %s: %s", e->mnt,
			    g_strerror(saved));
		return false;
	}
	e->device = replay_mount_source(e->mnt);
	if (e->device)
		e->have_written = replay_device_bytes_written(e->device, &e->written_at_mount);
	return true;
}

/* Unmounts: retried while busy, then lazily (BR2). */
static void env_unmount(struct env *e)
{
	if (e->mnt_fd >= 0)
		close(e->mnt_fd);
	e->mnt_fd = -1;
	if (!e->mounted)
		return;
	for (int i = 0; i < 50; i++) {
		if (umount2(e->mnt, 0) == 0) {
			e->mounted = false;
			return;
		}
		if (errno != EBUSY && errno != EINTR)
			break;
		g_usleep(100 * 1000);
	}
	g_printerr("btrfs-replay: umount %s: %s; detaching lazily\n", e->mnt, g_strerror(errno));
	if (umount2(e->mnt, MNT_DETACH) == 0)
		e->mounted = false;
	else
		g_printerr("btrfs-replay: lazy umount %s: %s\n", e->mnt, g_strerror(errno));
}

static void env_cleanup(struct env *e, bool keep_image)
{
	env_unmount(e);
	if (e->dir) {
		if (!e->mounted && e->mnt)
			rmdir(e->mnt);
		if (keep_image && e->image && access(e->image, F_OK) == 0) {
			g_printerr("btrfs-replay: image kept at %s\n", e->image);
		} else {
			if (e->image)
				unlink(e->image);
			if (rmdir(e->dir) < 0)
				g_printerr("btrfs-replay: cannot remove %s: %s\n", e->dir,
					   g_strerror(errno));
		}
	}
	g_clear_pointer(&e->dir, g_free);
	g_clear_pointer(&e->image, g_free);
	g_clear_pointer(&e->mnt, g_free);
	g_clear_pointer(&e->device, g_free);
}

/* ---- marks, remounts, progress ----------------------------------------- */

struct run {
	struct replay r;
	struct env *env;
	const struct options *o;
	ResultsCsv *csv;
	ResultsTable *table;
	int64_t n_ops;          /* from check_trace(), -1 for stdin */
	bool progress;          /* stderr is a terminal */
	guint marks;            /* rows written */
	gint64 last_progress;   /* monotonic µs */
};

static const ResultsColumn summary_columns[] = {
	RESULTS_COL_LABEL, RESULTS_COL_OP_INDEX, RESULTS_COL_TIME_S, RESULTS_COL_METADATA_USED,
	RESULTS_COL_METADATA_TOTAL, RESULTS_COL_DATA_USED, RESULTS_COL_BYTES_WRITTEN,
	RESULTS_COL_ENOSPC_EVENTS, RESULTS_COL_FAILED_READS,
};

static bool do_mark(struct run *run, const struct trace_op *op, uint64_t index, GError **error)
{
	struct replay_space sp;
	ResultsRow row = { 0 };
	uint64_t written;

	if (!replay_sync(&run->r, true, error) || !replay_space_info(run->r.mnt_fd, &sp, error))
		return false;
	row.cells[RESULTS_COL_OP_INDEX] = results_cell_u64(index);
	row.cells[RESULTS_COL_TIME_S] = results_cell_double((double)run->r.n.clock_ns / 1e9);
	row.cells[RESULTS_COL_ELAPSED_S] = results_cell_double(
		run->r.n.clock_seen ? (double)(run->r.n.clock_ns - run->r.n.clock_origin_ns) / 1e9 : 0.0);
	/* identity: design and policy are the model's words, unset for a kernel */
	row.cells[RESULTS_COL_MOUNT] = results_cell_string(run->o->mount_opts ? run->o->mount_opts : "relatime");
	row.cells[RESULTS_COL_NODESIZE] = results_cell_u64((guint64)run->o->nodesize);
	row.cells[RESULTS_COL_DEVICE_SIZE] = results_cell_u64(run->o->size);
	row.cells[RESULTS_COL_LABEL] = results_cell_string(op->path2);
	row.cells[RESULTS_COL_METADATA_USED] = results_cell_u64(sp.metadata_used);
	row.cells[RESULTS_COL_METADATA_RAW] = results_cell_u64(sp.metadata_raw);
	row.cells[RESULTS_COL_METADATA_TOTAL] = results_cell_u64(sp.metadata_total);
	row.cells[RESULTS_COL_DATA_USED] = results_cell_u64(sp.data_used);
	row.cells[RESULTS_COL_DATA_TOTAL] = results_cell_u64(sp.data_total);
	row.cells[RESULTS_COL_GLOBAL_RESERVE] = results_cell_u64(sp.global_reserve);
	if (run->env->have_written && replay_device_bytes_written(run->env->device, &written))
		row.cells[RESULTS_COL_BYTES_WRITTEN] =
			results_cell_u64(written - run->env->written_at_mount);
	row.cells[RESULTS_COL_ENOSPC_EVENTS] = results_cell_u64(run->r.n.enospc_events);
	row.cells[RESULTS_COL_FAILED_READS] = results_cell_u64(run->r.n.failed_reads);
	/* tree_*, blocks_cowed, atime_*: not visible on a mounted btrfs (BR3) */
	if (!results_csv_write_row(run->csv, &row, error))
		return false;
	return results_table_add_results_row(run->table, &row, error);
}

static bool do_remount(struct run *run, const struct trace_op *op, GError **error)
{
	g_autofree char *opts = g_strconcat("remount,", op->path2, NULL);
	const char *argv[] = { "mount", "-o", opts, run->env->mnt, NULL };
	return replay_command(argv, error);
}

static void show_progress(struct run *run, uint64_t index, const struct trace_op *op, bool done)
{
	if (!run->progress)
		return;
	gint64 now = g_get_monotonic_time();
	if (!done && now - run->last_progress < 200000)
		return;
	run->last_progress = now;
	if (done) {
		g_printerr("\r\033[K");
		return;
	}
	if (run->n_ops > 0)
		g_printerr("\r\033[Kbtrfs-replay: %5.1f%% op %" G_GUINT64_FORMAT "/%" G_GINT64_FORMAT
			   " (line %" G_GUINT64_FORMAT ") %s",
			   100.0 * (double)index / (double)run->n_ops, index, run->n_ops, op->line,
			   trace_op_kind_name(op->kind));
	else
		g_printerr("\r\033[Kbtrfs-replay: op %" G_GUINT64_FORMAT " (line %" G_GUINT64_FORMAT
			   ") %s", index, op->line, trace_op_kind_name(op->kind));
}

/* Step 4: every op.  FALSE with an error on the first failure. */
static bool replay_all(struct run *run, GError **error)
{
	g_autoptr(trace_reader) reader = trace_reader_open(run->o->trace, error);
	struct trace_op op;
	uint64_t index = 0;
	int rc;

	if (!reader)
		return false;
	run->r.trace_name = trace_reader_name(reader);
	while ((rc = trace_reader_next(reader, &op, error)) == 1) {
		if (replay_stop_signal) {
			g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_INTERRUPTED,
				    "interrupted by signal %d", (int)replay_stop_signal);
			return false;
		}
		show_progress(run, index, &op, false);
		bool ok;
		if (op.kind == TRACE_MARK)
			ok = do_mark(run, &op, index, error);
		else if (op.kind == TRACE_REMOUNT)
			ok = do_remount(run, &op, error);
		else
			ok = replay_op(&run->r, &op, error);
		if (!ok) {
			show_progress(run, index, &op, true);
			if (op.kind == TRACE_MARK || op.kind == TRACE_REMOUNT || op.kind == TRACE_SYNC)
				g_prefix_error(error, "%s:%" G_GUINT64_FORMAT ": %s: ",
					       trace_reader_name(reader), op.line,
					       trace_op_kind_name(op.kind));
			return false;
		}
		if (op.kind == TRACE_MARK)
			run->marks++;
		index++;
	}
	show_progress(run, index, &op, true);
	return rc == 0;
}

static int exit_status_for(const GError *error)
{
	if (g_error_matches(error, REPLAY_ERROR, REPLAY_ERROR_INTERRUPTED))
		return 128 + (int)replay_stop_signal;
	if (error->domain == TRACE_ERROR)
		return EXIT_BAD_INPUT;
	return EXIT_FAILED;
}

/* Steps 3-5 with the CSV open. */
static int run_replay(const struct options *o, ResultsCsv *csv, int64_t n_ops)
{
	struct env env = { .mnt_fd = -1 };
	g_autoptr(ResultsTable) table = results_table_new();
	g_autoptr(GError) error = NULL;
	g_autofree guint8 *buf = g_malloc(REPLAY_CHUNK);
	bool skip = false;
	int status = EXIT_DONE;

	results_table_add_main_columns(table, summary_columns, G_N_ELEMENTS(summary_columns));
	if (!env_setup(&env, o, &skip, &error)) {
		if (skip)
			g_printerr("btrfs-replay: cannot mount a btrfs loop device here: %s; skipping\n",
				   error->message);
		else
			g_printerr("btrfs-replay: %s\n", error->message);
		env_cleanup(&env, false); /* BRM2 */
		return replay_stop_signal ? 128 + (int)replay_stop_signal
					  : skip ? EXIT_SKIP : EXIT_FAILED;
	}
	struct run run = {
		.r = { .mnt = env.mnt, .mnt_fd = env.mnt_fd, .keep_going = o->keep_going, .buf = buf },
		.env = &env, .o = o, .csv = csv, .table = table, .n_ops = n_ops,
		.progress = isatty(STDERR_FILENO),
	};
	umask(0); /* modes in the trace are exact */
	if (!replay_all(&run, &error)) {
		g_printerr("btrfs-replay: %s\n", error->message);
		status = exit_status_for(error);
	}
	env_cleanup(&env, o->keep_image); /* BRM2 */
	if (run.marks > 0) {
		FILE *out = strcmp(o->csv, "-") == 0 ? stderr : stdout;
		g_autoptr(GError) print_error = NULL;
		if (!results_table_print(table, out, &print_error))
			g_printerr("btrfs-replay: %s\n", print_error->message);
	}
	return status;
}

/* Steps 1b-5 once the options are parsed. */
static int replay_main(const struct options *o)
{
	bool from_stdin = strcmp(o->trace, "-") == 0;
	int64_t n_ops = from_stdin ? -1 : check_trace(o->trace);
	if (n_ops < 0 && !from_stdin)
		return EXIT_BAD_INPUT;
	int status = check_environment();
	if (status != EXIT_DONE)
		return status;
	g_autoptr(GError) error = NULL;
	const char *outputs[] = { o->csv }, *inputs[] = { o->trace };
	ResultsCsv *csv = output_file_refuse_aliases(outputs, 1, inputs, 1, &error) ?
				  results_csv_open(o->csv, &error) : NULL; /* BRM1 */
	if (!csv) {
		g_printerr("btrfs-replay: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	install_signals();
	status = run_replay(o, csv, n_ops);
	if (!results_csv_close(csv, &error)) {
		g_printerr("btrfs-replay: %s\n", error->message);
		if (status == EXIT_DONE)
			status = EXIT_FAILED;
	}
	return status;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	int status = parse_options(argc, argv, &o);
	if (status == EXIT_DONE)
		status = replay_main(&o);
	g_free(o.mount_opts);
	g_free(o.size_text);
	g_free(o.nodesize_text);
	g_free(o.csv);
	g_strfreev(o.rest);
	return status;
}
