/*
 * workloads/gen_registry.c - the table of scenarios and of their options.
 *
 * How it works: every option of every scenario lives once in `options[]`,
 * with the offset of its field in struct tracegen_params; a scenario names
 * the options it takes with a bit mask.  tracegen_option_entries() builds
 * the GOptionEntry array for one scenario from that, so `cowsim gen NAME
 * --help` lists exactly what NAME accepts, and an option NAME does not take
 * is an "Unknown option" error from GOptionContext.
 *
 * Invariant: options[i].bit == 1 << i (checked at startup of each lookup).
 */
#include "tracegen.h"

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <string.h>

#include "trace_syntax.h"
#include "tracegen_private.h"

G_DEFINE_QUARK(cowsim-tracegen-error-quark, tracegen_error)

/* Bits for tracegen_scenario.options, in the order of options[] below. */
enum {
	OPT_FROM_DIR, OPT_FILES, OPT_SEED, OPT_PREFIX, OPT_ORDER, OPT_START, OPT_FILES_PER_DIR,
	OPT_DEPTH_MEAN, OPT_MAX_FILE_SIZE, OPT_SNAPSHOTS, OPT_READONLY, OPT_GREP, OPT_GREPS,
	OPT_SCOPE, OPT_NO_FOLLOW, OPT_DAYS, OPT_KEEP, OPT_RUN_DAYS, OPT_MAILBOXES, OPT_MAILS_PER_DAY,
	OPT_CHECK_INTERVAL, OPT_COLD_DAYS, OPT_NEW_PER_DAY, OPT_READ_FRACTION, OPT_ROOT, OPT_STRICT,
	OPT_PRELUDE, OPT_APPENDS, OPT_OVERWRITES, OPT_CREATES, OPT_DELETES, OPT_WRITE_SIZE, OPT_SIZE_DIST,
	OPT_SET, OPT_SCENARIO_SEED, OPT_REMAINING,
};
#define BIT(o) (UINT64_C(1) << (o))
#define TREE_OPTIONS (BIT(OPT_FROM_DIR) | BIT(OPT_FILES) | BIT(OPT_SEED) | BIT(OPT_PREFIX) | \
		      BIT(OPT_ORDER) | BIT(OPT_START) | BIT(OPT_FILES_PER_DIR) | BIT(OPT_DEPTH_MEAN) | \
		      BIT(OPT_MAX_FILE_SIZE))
#define SNAPSHOT_OPTIONS (BIT(OPT_SNAPSHOTS) | BIT(OPT_READONLY))

struct option {
	int index;
	const char *long_name;
	GOptionArg arg;
	size_t offset;
	const char *description;
	const char *arg_description;
};

#define FIELD(f) offsetof(struct tracegen_params, f)

static const struct option options[] = {
	{ OPT_FROM_DIR, "from-dir", G_OPTION_ARG_FILENAME, FIELD(from_dir),
	  "Copy the tree of this real directory (as cp -a would)", "DIR" },
	{ OPT_FILES, "files", G_OPTION_ARG_INT64, FIELD(files),
	  "Use a synthetic tree of N files (Agrawal et al., FAST 2007)", "N" },
	{ OPT_SEED, "seed", G_OPTION_ARG_INT64, FIELD(seed), "Random seed (default 1)", "S" },
	{ OPT_PREFIX, "prefix", G_OPTION_ARG_STRING, FIELD(prefix),
	  "Where the tree goes in the filesystem (default /tree)", "PATH" },
	{ OPT_ORDER, "order", G_OPTION_ARG_STRING, FIELD(order),
	  "from-dir copy order: inode (what cp -a does, default), readdir, name", "ORDER" },
	{ OPT_START, "start", G_OPTION_ARG_STRING, FIELD(start),
	  "Simulated start time, seconds since the epoch (default: the day after the tree's newest time)",
	  "TIME" },
	{ OPT_FILES_PER_DIR, "files-per-dir", G_OPTION_ARG_DOUBLE, FIELD(files_per_dir),
	  "Synthetic tree: files per directory (default 5)", "F" },
	{ OPT_DEPTH_MEAN, "depth-mean", G_OPTION_ARG_DOUBLE, FIELD(depth_mean),
	  "Synthetic tree: mean file depth (default 6.49)", "D" },
	{ OPT_MAX_FILE_SIZE, "max-file-size", G_OPTION_ARG_INT64, FIELD(max_file_size),
	  "Synthetic tree: largest file in bytes (default 1073741824)", "BYTES" },
	{ OPT_SNAPSHOTS, "snapshots", G_OPTION_ARG_INT, FIELD(snapshots),
	  "Snapshots of / taken after the copy, /snap1../snapN (default 0)", "N" },
	{ OPT_READONLY, "readonly", G_OPTION_ARG_NONE, FIELD(readonly), "Make the snapshots read-only", NULL },
	{ OPT_GREP, "grep", G_OPTION_ARG_STRING, FIELD(grep),
	  "What grep -R reads: all (the whole mount, snapshots too; default) or trunk (the tree only)", "WHAT" },
	{ OPT_GREPS, "greps", G_OPTION_ARG_INT, FIELD(greps), "Number of grep passes (default 2)", "N" },
	{ OPT_SCOPE, "scope", G_OPTION_ARG_STRING, FIELD(scope),
	  "What the walk covers: trunk (the tree only; default) or all (the whole mount)", "WHAT" },
	{ OPT_NO_FOLLOW, "no-follow", G_OPTION_ARG_NONE, FIELD(no_follow),
	  "Walk like grep -r (do not follow symlinks) instead of grep -R", NULL },
	{ OPT_DAYS, "days", G_OPTION_ARG_INT, FIELD(days),
	  "backup-rotation, churn, mutt: days simulated (default 30, 30, 7); tmpwatch: age limit in days (default 10)", "D" },
	{ OPT_KEEP, "keep", G_OPTION_ARG_INT, FIELD(keep), "Snapshots kept (default 7)", "K" },
	{ OPT_RUN_DAYS, "run-days", G_OPTION_ARG_INT, FIELD(run_days), "Days simulated (default 30)", "D" },
	{ OPT_MAILBOXES, "mailboxes", G_OPTION_ARG_INT, FIELD(mailboxes), "Mailboxes (default 10)", "N" },
	{ OPT_MAILS_PER_DAY, "mails-per-day", G_OPTION_ARG_INT, FIELD(mails_per_day),
	  "Mean deliveries per mailbox per day (default 20)", "N" },
	{ OPT_CHECK_INTERVAL, "check-interval", G_OPTION_ARG_INT, FIELD(check_interval),
	  "Seconds between mutt's mailbox checks (default 300)", "S" },
	{ OPT_COLD_DAYS, "cold-days", G_OPTION_ARG_INT, FIELD(cold_days),
	  "A file is cold when its atime is older than this (default 90)", "D" },
	{ OPT_NEW_PER_DAY, "new-per-day", G_OPTION_ARG_INT, FIELD(new_per_day),
	  "Files created per day (default: 1% of the tree, at least 1)", "N" },
	{ OPT_READ_FRACTION, "read-fraction", G_OPTION_ARG_DOUBLE, FIELD(read_fraction),
	  "Fraction of the files read (per day, or of the cold files for hsm-scan)", "F" },
	{ OPT_ROOT, "root", G_OPTION_ARG_FILENAME, FIELD(root),
	  "The directory the recorded program worked on; it is PREFIX (default /tree) in the trace", "DIR" },
	{ OPT_STRICT, "strict", G_OPTION_ARG_NONE, FIELD(strict),
	  "Stop at the first malformed log line (exit 2) instead of skipping and counting it", NULL },
	{ OPT_PRELUDE, "prelude", G_OPTION_ARG_NONE, FIELD(prelude),
	  "Start with the ops of `cowsim gen from-dir ROOT`, so that replay starts from the tree", NULL },
	{ OPT_APPENDS, "appends", G_OPTION_ARG_DOUBLE, FIELD(appends),
	  "Mean appends per day (default: 1% of the tree's files, at least 1)", "N" },
	{ OPT_OVERWRITES, "overwrites", G_OPTION_ARG_DOUBLE, FIELD(overwrites),
	  "Mean in-place overwrites per day (default: 0.5% of the files, at least 1)", "N" },
	{ OPT_CREATES, "creates", G_OPTION_ARG_DOUBLE, FIELD(creates),
	  "Mean files created per day (default: 0.5% of the files, at least 1)", "N" },
	{ OPT_DELETES, "deletes", G_OPTION_ARG_DOUBLE, FIELD(deletes),
	  "Mean files deleted per day (default: 0.5% of the files, at least 1)", "N" },
	{ OPT_WRITE_SIZE, "write-size", G_OPTION_ARG_INT64, FIELD(write_size),
	  "Median bytes of an append, an overwrite or a new file (default 4096)", "BYTES" },
	{ OPT_SIZE_DIST, "size-dist", G_OPTION_ARG_STRING, FIELD(size_dist),
	  "Distribution of those sizes: lognormal (sigma 1.5, default), pareto (shape 1.5), fixed", "DIST" },
	{ OPT_SET, "set", G_OPTION_ARG_STRING_ARRAY, FIELD(sets),
	  "Override a value of the file: GROUP.KEY=VALUE, e.g. tree.files=500 or 'job backup.schedule=daily 03:00' "
	  "(repeatable)", "GROUP.KEY=VALUE" },
	{ OPT_SCENARIO_SEED, "seed", G_OPTION_ARG_INT64, FIELD(scenario_seed),
	  "Random seed (default: the file's [scenario] seed, else 1)", "S" },
	{ OPT_REMAINING, G_OPTION_REMAINING, G_OPTION_ARG_FILENAME_ARRAY, FIELD(remaining), NULL, "DIR" },
};

void tracegen_params_init(struct tracegen_params *params)
{
	memset(params, 0, sizeof(*params));
	params->seed = 1;
	params->greps = 2;
	params->keep = 7;
	params->run_days = 30;
	params->mailboxes = 10;
	params->mails_per_day = 20;
	params->check_interval = 300;
	params->cold_days = 90;
	params->read_fraction = -1; /* each scenario's own default */
	params->appends = params->overwrites = params->creates = params->deletes = -1;
	params->files_per_dir = 5.0;
	params->depth_mean = 6.49;
	params->max_file_size = G_GINT64_CONSTANT(1) << 30;
	params->scenario_seed = -1;
	params->notes = g_ptr_array_new_with_free_func(g_free);
}

void tracegen_params_clear(struct tracegen_params *params)
{
	g_free(params->output);
	g_free(params->from_dir);
	g_free(params->prefix);
	g_free(params->order);
	g_free(params->start);
	g_free(params->grep);
	g_free(params->scope);
	g_free(params->root);
	g_free(params->strace_log);
	g_free(params->size_dist);
	g_free(params->scenario_file);
	g_strfreev(params->sets);
	if (params->notes)
		g_ptr_array_unref(params->notes);
	g_strfreev(params->remaining);
	g_free(params->command);
	memset(params, 0, sizeof(*params));
}

GOptionEntry *tracegen_option_entries(const struct tracegen_scenario *scenario, struct tracegen_params *params)
{
	GOptionEntry *entries = g_new0(GOptionEntry, G_N_ELEMENTS(options) + 1);
	size_t n = 0;
	for (size_t i = 0; i < G_N_ELEMENTS(options); i++) {
		g_assert(options[i].index == (int)i);
		if (!(scenario->options & BIT(i)))
			continue;
		entries[n++] = (GOptionEntry){ options[i].long_name, 0, 0, options[i].arg,
					       (char *)params + options[i].offset, options[i].description,
					       options[i].arg_description };
		/* from-strace's positional is the log, not a tree (tracegen_params_check). */
		if (i == OPT_REMAINING && (scenario->options & BIT(OPT_ROOT)))
			entries[n - 1].arg_description = "LOG";
		if (i == OPT_REMAINING && scenario->options == BIT(OPT_REMAINING))
			entries[n - 1].arg_description = "TRACE…";
		if (i == OPT_REMAINING && (scenario->options & BIT(OPT_SET)))
			entries[n - 1].arg_description = "FILE";
	}
	return entries;
}

const struct tracegen_scenario *tracegen_find(const char *name)
{
	for (const struct tracegen_scenario *s = tracegen_scenarios; s->name; s++)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

static bool args_fail(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);
static bool args_fail(GError **error, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	g_autofree char *message = g_strdup_vprintf(format, args);
	va_end(args);
	g_set_error_literal(error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS, message);
	return false;
}

static bool check_choice(const char *option, const char *value, const char *const choices[], GError **error)
{
	if (!value)
		return true;
	for (int i = 0; choices[i]; i++)
		if (!strcmp(value, choices[i]))
			return true;
	return args_fail(error, "--%s: unknown value '%s'", option, value);
}

/* --files is in range wherever a scenario takes it: a negative count used to
 * become 2^64 - N files (tracegen_load_tree's cast) and grow without bound. */
static bool check_tree_source(const struct tracegen_scenario *s, const struct tracegen_params *p, GError **error)
{
	if (!(s->options & BIT(OPT_FILES)))
		return true;
	bool synthetic_only = !(s->options & BIT(OPT_FROM_DIR));
	if (synthetic_only && p->files == 0)
		return args_fail(error, "%s needs a tree: --files N (1..%d)", s->name, TRACEGEN_FILES_MAX);
	if (p->files < 0 || p->files > TRACEGEN_FILES_MAX)
		return args_fail(error, "--files %" G_GINT64_FORMAT ": must be within 1..%d (a synthetic tree holds "
				 "about 300 bytes of memory per file)", p->files, TRACEGEN_FILES_MAX);
	if (synthetic_only)
		return true;
	if (p->from_dir && p->files)
		return args_fail(error, "--from-dir and --files are exclusive");
	if (!p->from_dir && p->files <= 0)
		return args_fail(error, "%s needs a tree: --from-dir DIR or --files N (1..%d)", s->name,
				 TRACEGEN_FILES_MAX);
	return true;
}

static bool check_prefix(const struct tracegen_params *p, GError **error)
{
	if (!p->prefix)
		return true;
	const char *reason = trace_syntax_path_problem(p->prefix, strlen(p->prefix));
	if (reason)
		return args_fail(error, "--prefix '%s': %s", p->prefix, reason);
	if (!strcmp(p->prefix, "/"))
		return args_fail(error, "--prefix cannot be the mount root");
	return true;
}

/* The range of every count option: past these a trace is a typo, or a tree
 * or an array that would not fit in memory. */
struct count_range {
	const char *option;
	double value, min, max;
};

static bool check_ranges(const struct count_range *ranges, size_t n, GError **error)
{
	for (size_t i = 0; i < n; i++)
		if (!(ranges[i].value >= ranges[i].min && ranges[i].value <= ranges[i].max))
			return args_fail(error, "--%s %.17g: must be within %.17g..%.17g", ranges[i].option,
					 ranges[i].value, ranges[i].min, ranges[i].max);
	return true;
}

/* -1 is "not given" (each scenario's own default), in range by definition. */
static double given(double value)
{
	return value == -1 ? 0 : value;
}

static bool check_counts(const struct tracegen_params *p, GError **error)
{
	const struct count_range ranges[] = {
		{ "snapshots", p->snapshots, 0, 100000 },
		{ "greps", p->greps, 0, 1000 },
		{ "days", p->days, 0, 100000 },
		{ "keep", p->keep, 1, 1000000 },
		{ "run-days", p->run_days, 0, 100000 },
		{ "mailboxes", p->mailboxes, 1, 100000 },
		{ "mails-per-day", p->mails_per_day, 0, 1000000 },
		{ "check-interval", p->check_interval, 1, 86400 },
		{ "cold-days", p->cold_days, 0, 100000 },
		{ "new-per-day", p->new_per_day, 0, 10000000 },
		{ "max-file-size", (double)p->max_file_size, 0, 1125899906842624.0 /* 1 PiB */ },
		{ "write-size", (double)p->write_size, 0, 1099511627776.0 /* 1 TiB */ },
		{ "files-per-dir", p->files_per_dir, 1, 1000000 },
		{ "depth-mean", p->depth_mean, 0, 100 },
		{ "read-fraction", given(p->read_fraction), 0, 1 },
		{ "appends", given(p->appends), 0, 1e9 },
		{ "overwrites", given(p->overwrites), 0, 1e9 },
		{ "creates", given(p->creates), 0, 1e9 },
		{ "deletes", given(p->deletes), 0, 1e9 },
	};
	if (!check_ranges(ranges, G_N_ELEMENTS(ranges), error))
		return false;
	if (p->remaining && p->remaining[0])
		return args_fail(error, "unexpected argument '%s'", p->remaining[0]);
	return true;
}

bool tracegen_params_check(const struct tracegen_scenario *scenario, struct tracegen_params *params,
			   GError **error)
{
	static const char *const orders[] = { "inode", "readdir", "name", NULL };
	/* from-dir DIR: the positional is the tree. */
	bool takes_log = scenario->options & BIT(OPT_ROOT); /* from-strace LOG: the positional is the log */
	/* merge A B...: the positionals are the input traces, kept in params->remaining. */
	if (scenario->options == BIT(OPT_REMAINING)) {
		if (!params->remaining || !params->remaining[0])
			return args_fail(error, "%s needs traces: %s A.trace B.trace...", scenario->name, scenario->name);
		return true;
	}
	/* scenario FILE: one positional, the scenario file. */
	if (scenario->options & BIT(OPT_SET)) {
		if (!params->remaining || !params->remaining[0] || params->remaining[1])
			return args_fail(error, "%s needs one file: %s FILE", scenario->name, scenario->name);
		params->scenario_file = g_strdup(params->remaining[0]);
		return params->scenario_seed >= -1 ? true : args_fail(error, "--seed must be >= 0");
	}
	char **positional = takes_log ? &params->strace_log : &params->from_dir;
	if ((scenario->options & BIT(OPT_REMAINING)) && params->remaining && params->remaining[0] && !*positional) {
		*positional = params->remaining[0]; /* moved, not copied */
		memmove(params->remaining, params->remaining + 1,
			g_strv_length(params->remaining) * sizeof(char *));
	}
	if (takes_log && (!params->strace_log || !params->root))
		return args_fail(error, "%s needs a log and a root: %s LOG --root DIR", scenario->name, scenario->name);
	static const char *const scopes[] = { "all", "trunk", NULL };
	static const char *const size_dists[] = { "lognormal", "pareto", "fixed", NULL };
	return check_tree_source(scenario, params, error) && check_prefix(params, error) &&
	       check_counts(params, error) && check_choice("order", params->order, orders, error) &&
	       check_choice("grep", params->grep, scopes, error) &&
	       check_choice("scope", params->scope, scopes, error) &&
	       check_choice("size-dist", params->size_dist, size_dists, error);
}

bool tracegen_run(const struct tracegen_scenario *scenario, const struct tracegen_params *params,
		  struct trace_writer *writer, GError **error)
{
	/* The command goes on the summary's line, not a line of its own, so that
	 * no op of a generated trace moves (error positions stay). */
	return trace_writer_begin(writer, error) &&
	       trace_writer_comment(writer, error, "cowsim gen %s: %s%s%s", scenario->name, scenario->summary,
				    params->command ? TRACE_GEN_COMMAND_TAG : "", params->command ? params->command : "") &&
	       scenario->run(params, writer, error) && trace_writer_finish(writer, error);
}

/* --- trees and start times --------------------------------------------------- */

static enum fstree_order parse_order(const char *order)
{
	if (order && !strcmp(order, "readdir"))
		return FSTREE_ORDER_READDIR;
	if (order && !strcmp(order, "name"))
		return FSTREE_ORDER_NAME;
	return FSTREE_ORDER_INODE;
}

static bool parse_start(const struct tracegen_params *params, int64_t *start_ns, GError **error)
{
	const char *reason = trace_syntax_parse_time(params->start, strlen(params->start), start_ns);
	return reason ? args_fail(error, "--start '%s': %s", params->start, reason) : true;
}

/* A synthetic tree is built whole in memory before its copy is written, so
 * --max-ops would bite only after the memory is spent: refuse up front a tree
 * whose copy alone (a create per file, a mkdir per directory) passes it. */
bool tracegen_check_tree_budget(const struct tracegen_params *params, uint64_t max_ops, GError **error)
{
	if (params->from_dir || params->files <= 0 || !max_ops || !(params->files_per_dir >= 1.0))
		return true;
	uint64_t files = (uint64_t)params->files;
	uint64_t ops = files + (uint64_t)ceil((double)files / params->files_per_dir);
	if (ops <= max_ops)
		return true;
	return args_fail(error, "a synthetic tree of %" G_GUINT64_FORMAT " files: its copy alone writes at least %"
			 G_GUINT64_FORMAT " ops (a create per file, a mkdir per directory), past --max-ops %"
			 G_GUINT64_FORMAT ": give fewer files or a larger --max-ops", files, ops, max_ops);
}

struct fstree *tracegen_load_tree(const struct tracegen_params *params, GError **error)
{
	if (params->from_dir)
		return fstree_from_dir(params->from_dir, parse_order(params->order), error);
	struct fstree_synthetic_params synth;
	fstree_synthetic_params_init(&synth);
	synth.files = (uint64_t)params->files;
	synth.seed = (uint64_t)params->seed;
	synth.files_per_dir = params->files_per_dir;
	synth.depth_mean = params->depth_mean;
	synth.max_file_size = (uint64_t)params->max_file_size;
	if (params->start && !parse_start(params, &synth.now_ns, error))
		return NULL;
	return fstree_synthetic(&synth, error);
}

bool tracegen_start_time(const struct tracegen_params *params, const struct fstree *tree, int64_t *start_ns,
			 GError **error)
{
	const int64_t article_day = INT64_C(1338422400) * TRACE_NS_PER_SEC;
	if (params->start)
		return parse_start(params, start_ns, error);
	if (!tree || tree->newest_ns == INT64_MIN || tree->newest_ns < article_day) {
		*start_ns = article_day;
		return true;
	}
	/* The next UTC midnight after the newest time: the copy happens "after" the source. */
	*start_ns = (tree->newest_ns / TRACE_NS_PER_DAY + 1) * TRACE_NS_PER_DAY;
	return true;
}

/* --- the scenarios ------------------------------------------------------------ */

const struct tracegen_scenario tracegen_scenarios[] = {
	{ "from-dir", "copy a real directory as cp -a would",
	  "cowsim gen from-dir DIR: the ops of `cp -a DIR /tree` (mkdir, create, symlink, link, settime\n"
	  "with the sizes, modes, owners and times of lstat), then sync.  Entries are copied in inode\n"
	  "order, as GNU cp -a does (--order to change).",
	  BIT(OPT_REMAINING) | BIT(OPT_FROM_DIR) | BIT(OPT_PREFIX) | BIT(OPT_ORDER) | BIT(OPT_START),
	  tracegen_run_from_dir,
	  "  cowsim gen from-dir /usr/include -o t.trace\n"
	  "  cowsim gen from-dir /usr/include --order name | cowsim run - -o out.csv" },
	{ "synthetic", "copy a synthetic tree drawn from Agrawal et al. (FAST 2007)",
	  "cowsim gen synthetic --files N [--seed S]: a tree of N files whose sizes, directory fan-out\n"
	  "and depth follow the distributions of \"A Five-Year Study of File-System Metadata\"\n"
	  "(docs/trace-format.md cites the figures), copied to /tree, then sync.",
	  TREE_OPTIONS & ~(BIT(OPT_FROM_DIR) | BIT(OPT_ORDER)), tracegen_run_synthetic,
	  "  cowsim gen synthetic --files 1000 -o t.trace\n"
	  "  cowsim gen synthetic --files 1000 --seed 7 | cowsim run - -o out.csv" },
	{ "seed-experiment", "the LWN experiment: copy, N snapshots, grep -R twice",
	  "Copy the tree to /tree, sync, mark after_copy; snapshot / to /snap1../snapN (--readonly:\n"
	  "ro), sync, mark after_snapshots; grep -R over the whole mount (--grep all: /tree, then\n"
	  "/snap1/tree../snapN/tree) or /tree only (--grep trunk), sync, mark after_grep; again,\n"
	  "mark after_grep2 (--greps N passes).  Mirrors shared/calibration/btrfs-seed-experiment.sh.",
	  TREE_OPTIONS | SNAPSHOT_OPTIONS | BIT(OPT_GREP) | BIT(OPT_GREPS) | BIT(OPT_NO_FOLLOW),
	  tracegen_run_seed_experiment,
	  "  cowsim gen seed-experiment --from-dir /usr/include --snapshots 10 -o t.trace\n"
	  "  cowsim gen seed-experiment --files 1000 --snapshots 2 --grep trunk | cowsim run - -o out.csv" },
	{ "find", "copy, optional snapshots, then find (lstat + readdir only)",
	  "Copy the tree, [snapshots], then `find` over the tree (--scope trunk) or the mount\n"
	  "(--scope all): readdir each directory, lstat each entry; sync, mark after_find.",
	  TREE_OPTIONS | SNAPSHOT_OPTIONS | BIT(OPT_SCOPE), tracegen_run_find,
	  "  cowsim gen find --from-dir /usr/include --snapshots 2 --scope all -o find.trace\n"
	  "  cowsim gen find --files 1000 | cowsim run - -m noatime -o out.csv" },
	{ "tar", "copy, optional snapshots, then tar c of everything",
	  "Copy the tree, [snapshots], then `tar c` of the tree or the mount: lstat each entry,\n"
	  "read each file once (later hard-link names are stored as links), readlink each symlink;\n"
	  "sync, mark after_tar.",
	  TREE_OPTIONS | SNAPSHOT_OPTIONS | BIT(OPT_SCOPE), tracegen_run_tar,
	  "  cowsim gen tar --from-dir /usr/include -o tar.trace\n"
	  "  cowsim gen tar --files 1000 --snapshots 2 --scope all | cowsim run - -o out.csv" },
	{ "backup-rotation", "daily snapshots of / kept K days, daily reads",
	  "Copy the tree, mkdir /snapshots; then each day: at 09:00 read a fraction of the files\n"
	  "(--read-fraction, default 0.05), at 23:00 snapshot / to /snapshots/YYYY-MM-DD (--readonly:\n"
	  "ro), delete-snapshot the oldest beyond --keep, sync, mark day_N.  --days D days.",
	  TREE_OPTIONS | BIT(OPT_READONLY) | BIT(OPT_DAYS) | BIT(OPT_KEEP) | BIT(OPT_READ_FRACTION),
	  tracegen_run_backup_rotation,
	  "  cowsim gen backup-rotation --from-dir /usr/include --readonly -o rotation.trace\n"
	  "  cowsim gen backup-rotation --files 1000 --days 14 --keep 5 | cowsim run - -o out.csv" },
	{ "mutt", "mail delivery appends to mbox files; mutt checks atime vs mtime",
	  "Mailboxes PREFIX/Mail/inbox, box02..: each day deliveries append (write + fsync) at\n"
	  "random times; from 09:00 to 18:00 mutt stats every mailbox each --check-interval seconds\n"
	  "(new mail = mtime newer than atime) and opens one with new mail with probability 1/4: it\n"
	  "reads the whole mbox, and one time in five leaves mail unread, resetting atime to\n"
	  "mtime - 1 s with utime (settime), as mutt's mbox_reset_atime does.  sync, mark day_N.",
	  BIT(OPT_SEED) | BIT(OPT_PREFIX) | BIT(OPT_START) | SNAPSHOT_OPTIONS | BIT(OPT_MAILBOXES) |
	  BIT(OPT_DAYS) | BIT(OPT_MAILS_PER_DAY) | BIT(OPT_CHECK_INTERVAL), tracegen_run_mutt,
	  "  cowsim gen mutt --mailboxes 5 --days 3 -o mutt.trace\n"
	  "  cowsim gen mutt | cowsim run - -m relatime -o out.csv" },
	{ "tmpwatch", "daily tmpwatch of /tree/tmp: unlink files not accessed for D days",
	  "The tree is copied to PREFIX/tmp (default /tree/tmp).  Each day: at 03:00 tmpwatch reads\n"
	  "every directory, lstats every file and unlinks those whose atime is more than --days D\n"
	  "(default 10) days old; at 10:00 new files are created (--new-per-day) and a fraction of the\n"
	  "files is read (--read-fraction, default 0.02); sync, mark day_N.  --run-days days.\n"
	  "The generator decides from the atimes it assigned: a file's atime is its copied atime,\n"
	  "its creation time, or the time of the last read the trace itself issued (what a\n"
	  "strictatime or relatime mount records, to within a day).  Under noatime the simulated\n"
	  "atimes would differ: the trace still deletes what an atime-keeping system would.",
	  TREE_OPTIONS | SNAPSHOT_OPTIONS | BIT(OPT_DAYS) | BIT(OPT_RUN_DAYS) | BIT(OPT_NEW_PER_DAY) |
	  BIT(OPT_READ_FRACTION), tracegen_run_tmpwatch,
	  "  cowsim gen tmpwatch --files 1000 --run-days 20 -o tmpwatch.trace\n"
	  "  cowsim gen tmpwatch --from-dir /usr/include --days 5 | cowsim run - -m noatime -o out.csv" },
	{ "churn", "a tree that lives: daily appends, overwrites, creates and deletes",
	  "Copy the tree, [snapshots]; then each day, at times drawn between 00:00 and 22:00: appends\n"
	  "to live files (--appends per day), in-place overwrites of a range of a live file\n"
	  "(--overwrites), new files in the tree's directories (--creates) and unlinks of live files\n"
	  "(--deletes); each count is Poisson with that mean, each size drawn from --size-dist with\n"
	  "median --write-size.  At 23:00 sync, mark day_N.  --days D days (default 30).  The same\n"
	  "options and --seed give the same trace, byte for byte.",
	  TREE_OPTIONS | SNAPSHOT_OPTIONS | BIT(OPT_DAYS) | BIT(OPT_APPENDS) | BIT(OPT_OVERWRITES) |
	  BIT(OPT_CREATES) | BIT(OPT_DELETES) | BIT(OPT_WRITE_SIZE) | BIT(OPT_SIZE_DIST), tracegen_run_churn,
	  "  cowsim gen churn --files 1000 --days 10 -o churn.trace\n"
	  "  cowsim gen churn --from-dir /usr/include --snapshots 1 --size-dist pareto | cowsim run - -o out.csv" },
	{ "hsm-scan", "stat every file to find cold ones by atime, then read a fraction of them",
	  "Copy the tree, [snapshots]; an HSM scan lstats every file (readdir + stat walk), sync,\n"
	  "mark after_scan; then reads --read-fraction (default 0.1) of the files whose copied atime is\n"
	  "older than --cold-days (default 90) before the start, as a migration to slow storage\n"
	  "would; sync, mark after_migrate.",
	  TREE_OPTIONS | SNAPSHOT_OPTIONS | BIT(OPT_SCOPE) | BIT(OPT_COLD_DAYS) | BIT(OPT_READ_FRACTION),
	  tracegen_run_hsm_scan,
	  "  cowsim gen hsm-scan --from-dir /usr/include --cold-days 365 -o hsm.trace\n"
	  "  cowsim gen hsm-scan --files 1000 --read-fraction 0.5 | cowsim run - -o out.csv" },
	{ "from-strace", "convert an strace log of a real program into a trace (docs/recording.md)",
	  "cowsim gen from-strace LOG --root DIR: the file-system calls LOG shows on paths under DIR\n"
	  "(DIR is /tree, or --prefix, in the trace), with the log's times as clock steps, then sync\n"
	  "and mark after_record.  LOG is what `strace -f -ttt -qq -e trace=%file,%desc,%process -o LOG\n"
	  "CMD` writes.  --prelude starts with the copy of DIR that `cowsim gen from-dir DIR` writes\n"
	  "(DIR must then be as it was before the program ran).  Calls outside DIR, failed calls and\n"
	  "calls the format cannot express are dropped and counted on stderr and in the trace.\n"
	  "A line that is not understood is reported with its line number and skipped (--strict:\n"
	  "exit 2).",
	  BIT(OPT_REMAINING) | BIT(OPT_ROOT) | BIT(OPT_STRICT) | BIT(OPT_PRELUDE) | BIT(OPT_PREFIX) | BIT(OPT_START),
	  tracegen_run_from_strace,
	  "  strace -f -ttt -qq -e trace=%file,%desc,%process -o grep.log grep -R -l define /usr/include\n"
	  "  cowsim gen from-strace grep.log --root /usr/include --prelude -o grep.trace\n"
	  "  cowsim run grep.trace -o grep.csv" },
	{ "merge", "merge traces by clock onto one timeline, marks kept distinct",
	  "cowsim gen merge A.trace B.trace...: the ops of every input in the order of their clocks\n"
	  "(each input's clock ops move only its own clock; ties go to the input named first), with\n"
	  "the merged clock moved forward before each op, never back.  A mark LABEL of input A.trace\n"
	  "becomes A:LABEL (A-N when two inputs share a name).  The inputs' paths are kept as they\n"
	  "are: give each generator its own --prefix when they must not meet.",
	  BIT(OPT_REMAINING), tracegen_run_merge,
	  "  cowsim gen mutt --prefix /mail -o mail.trace\n"
	  "  cowsim gen churn --files 1000 --prefix /work -o work.trace\n"
	  "  cowsim gen merge mail.trace work.trace -o merged.trace" },
	{ "scenario", "jobs of a scenario file on one timeline (docs/scenarios.md)",
	  "cowsim gen scenario FILE: the jobs FILE describes (snapshots with retention, read-all,\n"
	  "rsync-style backup, find, tar, mutt, tmpwatch, hsm-scan, churn, marks), each on its\n"
	  "schedule (daily 02:00, every 5m, weekly, monthly, once), on one simulated timeline and\n"
	  "one shared tree ([tree]: from-dir or synthetic).  The format is GKeyFile (INI); see\n"
	  "docs/scenarios.md and workloads/scenarios/.  A bad value is reported as\n"
	  "FILE:LINE: [group] key: reason (exit 2).  The examples' files are in cowsim's source folder.",
	  BIT(OPT_REMAINING) | BIT(OPT_SET) | BIT(OPT_SCENARIO_SEED), tracegen_run_scenario,
	  "  cowsim gen scenario workloads/scenarios/home-mail-backup.ini -o home.trace\n"
	  "  cowsim gen scenario workloads/scenarios/build-server.ini --set tree.files=2000 --set scenario.days=3 -o build.trace" },
	{ NULL },
};
