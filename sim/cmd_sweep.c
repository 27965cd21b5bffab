/*
 * sim/cmd_sweep.c - `cowsim sweep (TRACE | --gen CMD) --vary NAME=VALUES ...`:
 * the model over a grid of parameters, one CSV line per point; and
 * `cowsim sweep plan ...` and `cowsim sweep merge DIR...` to run the points
 * elsewhere (GNU parallel, a Slurm job array) and gather them.
 *
 * How it works
 *   The grid is the product of the --vary parameters (grid.h), --policies
 *   being --vary policy=LIST.  Model parameters (nodesize, mount, policy, ...)
 *   change the configuration; any other parameter (snapshots, files, ...)
 *   shapes the trace, so it needs a generator command line with a {name}
 *   placeholder instead of a fixed TRACE:
 *
 *     --gen 'seed-experiment --files 300 --snapshots {snapshots}'
 *        point: snapshots=10 --> cowsim gen seed-experiment --files 300
 *                                --snapshots 10 -o DIR/sweep-trace.tmp
 *                           --> multirun_run(trace, config of the point)
 *
 *   Every point has a key (sweep_store.h): the sha256 of cowsim's version,
 *   its model and run options, and the trace's sha256 or its filled --gen
 *   command.  A point that finishes is written at once to DIR/points/KEY.point
 *   (its line) and KEY.csv (its rows), and DIR/sweep.csv is rewritten from
 *   the finished points; a point whose file is already there is not run
 *   again.  So an interrupted sweep keeps what it finished, and running the
 *   same command again completes it:
 *
 *     sweep          -j 1: the points in this process, grouped by --gen
 *                    command (a stable sort) so each trace is generated once
 *                    -j N: N processes at a time, each `cowsim sweep ARGS
 *                    --point K` (this program, exec'd), which writes point K
 *     sweep plan     DIR/jobs.txt (a command per point, for GNU parallel) and
 *                    DIR/sweep.sbatch (a Slurm job array), both `--point K`
 *     sweep merge    the points of DIR1 DIR2 ... (the same plan) into one
 *                    sweep.csv, sweep.png/.svg and report.html
 *
 *   The lines of sweep.csv are in grid order whoever ran them, and are built
 *   from the point files the same way in every case, so -j 1, -j N, a job
 *   array and a merge write the same bytes.  Then DIR/sweep.png/.svg:
 *   amplification against the first parameter, a line per value of the
 *   others, drawn by results/plot.py --kind sweep through `cowsim plot`
 *   (so `cowsim plot --kind sweep DIR/sweep.csv` re-plots any sweep).
 *
 * Invariants
 *   SW1  Every point's configuration is checked (options and mkfs) before the
 *       first run: a bad --vary value is exit 2 and nothing is run. (--point K
 *       checks its own.)
 *   SW2  Same inputs, same bytes in sweep.csv and sweep.svg, whatever -j, the
 *       order points finished in, or how many runs it took; the progress
 *       lines and ETA go to stderr only.
 *   SW3  Exit status as compare's: 0 every point done (ENOSPC is a result),
 *       1 a run broke or the plot failed, 2 bad arguments, a malformed trace
 *       or a failed generator, 128+signal interrupted.  A point that fails is
 *       reported and the others still run; the worst status is the exit.
 *   SW4  A point is finished only when its file is written (SS1, SS2): an
 *       interrupted or failed point is run again by the next sweep.
 *   SW5  DIR/sweep.png and .svg show the sweep.csv beside them or are not
 *       there: the first rewrite that changes sweep.csv's bytes removes them
 *       (an interrupted sweep leaves no figure of the earlier sweep.csv), and
 *       the sweep draws them again when it ends.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "cli.h"
#include "commands.h"
#include "grid.h"
#include "multirun.h"
#include "options.h"
#include "provenance.h"
#include "rows.h"
#include "sweep_store.h"

/* sweep.csv is rewritten after every finished point, but not more often
 * than this once it holds many lines (each rewrite costs a line per point). */
#define SWEEP_REWRITE_LINES 1000
#define SWEEP_REWRITE_SECONDS 1.0

struct sweep_args {
	struct model_option_text model;
	struct multirun_args run;     /* --output, --base, --every, --keep-going, --quiet */
	char **vary;
	char *policies;
	char *gen;
	char **rest;
	gint jobs;                    /* -j N: points run at once (0: one per processor) */
	gint64 point;                 /* --point K, -1 without */
	char *trace_sha256;           /* hidden --trace-sha256: the parent's hash of TRACE (-j N children) */
	char **given;                 /* the arguments as given, for --point K command lines */
	char *json;                   /* --json[=FILE]: "-" for stdout, NULL for none */
	GArray *entries;              /* every option, for parameters.json (cli_take_entries) */
};

struct sweep {
	struct sweep_args *args;
	GPtrArray *params;            /* of struct grid_param *, in --vary order */
	unsigned n_points;
	struct fs_config *configs;    /* per point (only point K's with --point K) */
	struct sweep_plan plan;       /* title, columns and one key per point */
	char *trace_sha256;           /* of TRACE, NULL with --gen */
	char *trace_tmp;              /* DIR/sweep-trace.tmp with --gen */
	GPtrArray **lines;            /* per point: its texts once finished, else NULL */
	RowsTable *columns;           /* the sweep.csv columns, no lines */
};

static void free_args(struct sweep_args *a)
{
	options_model_text_clear(&a->model);
	multirun_args_clear(&a->run);
	g_strfreev(a->vary);
	g_free(a->policies);
	g_free(a->gen);
	g_strfreev(a->rest);
	g_strfreev(a->given);
	g_free(a->trace_sha256);
	g_free(a->json);
	if (a->entries)
		g_array_unref(a->entries);
}

static struct grid_param *const *param_list(const struct sweep *s)
{
	return (struct grid_param *const *)s->params->pdata;
}

static const struct cli_doc sweep_doc = {
	.command = "sweep",
	.args = "(TRACE | --gen CMD)",
	.summary = "Runs every point of the product of the --vary parameters and writes one CSV\n"
		   "line per point: the parameters, then final metadata, amplification, counters.\n"
		   "Each point is kept in DIR/points as it finishes; the same command run again\n"
		   "runs only the points not yet finished.\n\n"
		   "  cowsim sweep plan ARGS...   write DIR/jobs.txt (GNU parallel) and\n"
		   "                              DIR/sweep.sbatch (Slurm array) instead of running\n"
		   "  cowsim sweep merge DIR...   gather finished points into one sweep.csv, plot\n"
		   "                              and report.html (see docs/scale-out.md)",
	.notes = "Values: lists a,b,c; ranges a..b and a..b/step; sizes take K, M, G. Model\n"
		 "parameters: nodesize, device-size, metadata, mount, policy, mkfs-atime, design,\n"
		 "max-inline, commit-interval. Other parameters shape the trace and need --gen\n"
		 "with a {name} placeholder. Writes DIR/sweep.csv, DIR/sweep.png/.svg,\n"
		 "DIR/sweep-plan.ini, DIR/parameters.json (cowsim's version and commit, the trace's\n"
		 "sha256 or the --gen command, every option; docs/json.md) and DIR/points/ (a\n"
		 ".point and a .csv per finished point). With --json the summary goes to stdout as\n"
		 "JSON and the table to stderr; --point K writes neither. sweep.png/.svg always\n"
		 "show the sweep.csv beside them: once this sweep changes sweep.csv they are\n"
		 "removed, and drawn again when it ends (an interrupted sweep leaves none).",
	.examples = "  cowsim sweep t.trace --vary nodesize=4K,16K,64K --policies inline,side-table\n"
		    "  cowsim sweep --gen 'seed-experiment --from-dir /usr/include --snapshots {snapshots}' \\\n"
		    "      --vary snapshots=0..50/10 --vary nodesize=4K,16K,64K -o sw -j 2",
	.exits = "  0  done (a run ended by ENOSPC is a result)\n"
		 "  1  a run broke, the disk filled under DIR, or the plot failed\n"
		 "  2  bad arguments, a malformed trace (read through before DIR is touched), a\n"
		 "     --base that is no mark of the trace, a failed generator or a DIR that\n"
		 "     cannot be made\n"
		 "  130/143  interrupted (the finished points are kept)",
	.model_options = true,
};

static void add_entries(GOptionContext *context, struct sweep_args *a)
{
	const GOptionEntry entries[] = {
		{ "vary", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->vary,
		  "a parameter and its values: nodesize=4K,16K,64K, snapshots=0..50/5 (repeatable; the first is "
		  "the plot's x axis)", "NAME=VALUES" },
		{ "policies", 'P', 0, G_OPTION_ARG_STRING, &a->policies, "the same as --vary policy=LIST", "LIST" },
		{ "gen", 'g', 0, G_OPTION_ARG_STRING, &a->gen,
		  "generate the trace per point instead of TRACE: a 'cowsim gen' command line with {name} "
		  "placeholders", "CMD" },
		{ "jobs", 'j', 0, G_OPTION_ARG_INT, &a->jobs,
		  "run N points at once, each in its own process (0: one per processor; default 1)", "N" },
		{ "point", 0, 0, G_OPTION_ARG_INT64, &a->point,
		  "run only point K (0-based, grid order) into DIR/points, for a job array; "
		  "'cowsim sweep merge DIR' gathers them", "K" },
		/* A -j N child is told the hash its parent took once: hashing TRACE in
		 * every child cost as much as replaying a small point (callgrind: 51% of
		 * a child's instructions for a 3.6 MB trace), so -j 2 gained nothing. */
		{ "trace-sha256", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &a->trace_sha256,
		  "the sha256 of TRACE, already computed (for -j N children)", "HEX" },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->rest, NULL, NULL },
		{ NULL },
	};
	cli_add_entries(context, entries);
	multirun_add_entries(context, &a->run, "folder for sweep.csv, the plot and points/ (default cowsim-sweep)");
	options_add_model_entries(context, &a->model);
	cli_add_json_entry(context, &a->json, "the summary as JSON (docs/json.md) on stdout (the table then goes to "
			   "stderr), or with =FILE to FILE");
}

static int parse_args(int argc, char **argv, struct sweep_args *a)
{
	a->point = -1;
	a->jobs = 1;
	a->given = g_new0(char *, argc);
	for (int i = 1; i < argc; i++)
		a->given[i - 1] = g_strdup(argv[i]);
	g_autoptr(GOptionContext) context = cli_context_new(&sweep_doc);
	add_entries(context, a);
	bool parsed = cli_parse(context, &sweep_doc, &argc, &argv);
	a->entries = cli_take_entries(context);
	if (!parsed)
		return EXIT_BAD_INPUT;
	unsigned traces = a->rest ? g_strv_length(a->rest) : 0;
	if (traces > 1 || (traces == 1) == (a->gen != NULL)) {
		fprintf(stderr, "cowsim sweep: give one TRACE or --gen CMD, not %s (see 'cowsim sweep --help')\n",
			traces ? "both" : "neither");
		return EXIT_BAD_INPUT;
	}
	if (!a->vary && !a->policies) {
		fprintf(stderr, "cowsim sweep: nothing to vary: give --vary NAME=VALUES or --policies LIST\n");
		return EXIT_BAD_INPUT;
	}
	if (a->jobs < 0 || a->point < -1) {
		fprintf(stderr, "cowsim sweep: %s takes a number, 0 or more\n", a->jobs < 0 ? "--jobs" : "--point");
		return EXIT_BAD_INPUT;
	}
	if (a->jobs == 0)
		a->jobs = (gint)g_get_num_processors();
	int status = multirun_check("sweep", &a->run, traces ? a->rest[0] : NULL, "cowsim-sweep");
	/* MR3; a -j N child (given the trace's hash) was checked by its parent, and
	 * a --gen trace is checked as each point runs */
	if (status == EXIT_OK && traces && !a->trace_sha256)
		status = multirun_check_trace("sweep", a->rest[0], a->run.base);
	return status;
}

static bool add_param(struct sweep *s, struct grid_param *p, GError **error)
{
	for (unsigned i = 0; i < s->params->len; i++) {
		if (!strcmp(param_list(s)[i]->name, p->name)) {
			g_set_error(error, GRID_ERROR, 0, "--vary %s: given twice", p->name);
			grid_param_free(p);
			return false;
		}
	}
	if (p->model && grid_model_text(&s->args->model, p->name)) {
		g_set_error(error, GRID_ERROR, 0, "--vary %s: also fixed by --%s; give one of them", p->name, p->name);
		grid_param_free(p);
		return false;
	}
	g_ptr_array_add(s->params, p);
	return true;
}

/* The parameters, checked against TRACE or the --gen template. */
static bool parse_params(struct sweep *s, GError **error)
{
	const struct sweep_args *a = s->args;
	for (unsigned i = 0; a->vary && a->vary[i]; i++) {
		struct grid_param *p = grid_param_parse(a->vary[i], error);
		if (!p || !add_param(s, p, error))
			return false;
	}
	if (a->policies) {
		g_autoptr(GPtrArray) values = grid_split_list("policy", a->policies, error);
		if (!values || !add_param(s, grid_param_new("policy", values), error))
			return false;
	}
	if (a->gen)
		return grid_template_check(a->gen, param_list(s), s->params->len, error);
	for (unsigned i = 0; i < s->params->len; i++) {
		if (!param_list(s)[i]->model) {
			g_set_error(error, GRID_ERROR, 0,
				    "--vary %s: '%s' is not a model option, and a fixed TRACE cannot vary it; "
				    "generate the trace per point with --gen '... {%s}' instead of TRACE",
				    param_list(s)[i]->name, param_list(s)[i]->name, param_list(s)[i]->name);
			return false;
		}
	}
	return true;
}

/* "snapshots=10 nodesize=16K", for messages. */
static char *point_text(const struct sweep *s, unsigned point)
{
	g_autofree unsigned *choice = g_new0(unsigned, s->params->len);
	grid_point(param_list(s), s->params->len, point, choice);
	GString *out = g_string_new(NULL);
	for (unsigned i = 0; i < s->params->len; i++)
		g_string_append_printf(out, "%s%s=%s", i ? " " : "", param_list(s)[i]->name,
				       (const char *)param_list(s)[i]->values->pdata[choice[i]]);
	return g_string_free(out, FALSE);
}

/* The model options of a point: the fixed ones and the point's values,
 * shallow (never options_model_text_clear() it). */
static struct model_option_text point_model_text(const struct sweep *s, const unsigned *choice)
{
	struct model_option_text text = s->args->model;
	for (unsigned i = 0; i < s->params->len; i++) {
		const struct grid_param *p = param_list(s)[i];
		if (p->model)
			grid_borrow_model_text(&text, p->name, p->values->pdata[choice[i]]);
	}
	return text;
}

/* The filled --gen command of a point, NULL with TRACE. */
static char *point_command(const struct sweep *s, const unsigned *choice)
{
	return s->args->gen ? grid_template_fill(s->args->gen, param_list(s), s->params->len, choice) : NULL;
}

/* What decides a point's result, as sweep_store_key() hashes it. */
static char *point_key(const struct sweep *s, const unsigned *choice)
{
	const struct sweep_args *a = s->args;
	struct model_option_text text = point_model_text(s, choice);
	g_autofree char *model = grid_model_identity(&text);
	g_autofree char *command = point_command(s, choice);
	g_autofree char *identity = g_strdup_printf(
		"cowsim sweep point\nversion=%s\n%sbase=%s\nevery=%" G_GINT64_FORMAT "\nkeep-going=%d\n%s=%s\n",
		COWSIM_VERSION, model, a->run.base ? a->run.base : "", a->run.every, a->run.keep_going ? 1 : 0,
		command ? "gen" : "trace-sha256", command ? command : s->trace_sha256);
	return sweep_store_key(identity);
}

/* The configuration of point `point`, checked down to mkfs (SW1). */
static bool point_config(struct sweep *s, unsigned point, const unsigned *choice, GError **error)
{
	struct model_option_text text = point_model_text(s, choice);
	if (!options_model_config(&text, &s->configs[point], error))
		return false;
	g_autoptr(Filesystem) fs = fs_new(&s->configs[point], error);
	return fs != NULL;
}

/* The trace's sha256: the one a -j N parent passed down (--trace-sha256), else hashed here. */
static bool trace_hash(struct sweep *s, GError **error)
{
	const char *given = s->args->trace_sha256;
	if (!given) {
		s->trace_sha256 = sweep_store_file_sha256(s->args->rest[0], error);
		return s->trace_sha256 != NULL;
	}
	size_t n = strspn(given, "0123456789abcdef");
	if (n != 64 || given[n]) {
		g_set_error(error, GRID_ERROR, 0, "--trace-sha256 '%s': not 64 lowercase hex digits", given);
		return false;
	}
	s->trace_sha256 = g_strdup(given);
	return true;
}

/* Every point's key, and the configuration of every point (SW1), or only of
 * --point K's; on an error *error names the point. */
static bool plan(struct sweep *s, GError **error)
{
	unsigned n = s->params->len;
	if (!grid_count_points(param_list(s), n, &s->n_points, error))
		return false;
	if (s->args->point >= (gint64)s->n_points) {
		g_set_error(error, GRID_ERROR, 0, "--point %" G_GINT64_FORMAT ": the grid has points 0 to %u",
			    s->args->point, s->n_points - 1);
		return false;
	}
	if (!s->args->gen && !trace_hash(s, error))
		return false;
	s->configs = g_new0(struct fs_config, s->n_points);
	s->lines = g_new0(GPtrArray *, s->n_points);
	s->plan.title = g_strdup_printf("sweep: %s", s->args->gen ? s->args->gen : s->args->rest[0]);
	for (unsigned i = 0; i < n; i++) {
		g_ptr_array_add(s->plan.param_names, g_strdup(param_list(s)[i]->name));
		g_array_append_val(s->plan.param_kinds, param_list(s)[i]->kind);
	}
	s->columns = sweep_plan_table(&s->plan);
	g_autofree unsigned *choice = g_new0(unsigned, n);
	for (unsigned point = 0; point < s->n_points; point++) {
		grid_point(param_list(s), n, point, choice);
		g_ptr_array_add(s->plan.keys, point_key(s, choice));
		if (s->args->point >= 0 && s->args->point != point)
			continue;
		g_autoptr(GError) config_error = NULL;
		if (!point_config(s, point, choice, &config_error)) {
			g_autofree char *where = point_text(s, point);
			g_set_error(error, GRID_ERROR, 0, "--vary at %s: %s", where, config_error->message);
			return false;
		}
	}
	return true;
}

static const char *key_of(const struct sweep *s, unsigned point)
{
	return s->plan.keys->pdata[point];
}

/* ---- the generator ---------------------------------------------------------- */

/* Writes the trace of `command` (a filled --gen template) to `path` with
 * cmd_gen, in-process. Returns an exit status. */
static int generate(const char *command, const char *path)
{
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) words = NULL;
	int n_words = 0;
	if (!g_shell_parse_argv(command, &n_words, &words, &error)) {
		fprintf(stderr, "cowsim sweep: --gen '%s': %s\n", command, error->message);
		return EXIT_BAD_INPUT;
	}
	int skip = 0;
	if (skip < n_words && !strcmp(words[skip], "cowsim"))
		skip++;
	if (skip < n_words && !strcmp(words[skip], "gen"))
		skip++;
	/* cmd_gen's option parser reorders its argv: give it a copy of the pointers */
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_ptr_array_add(argv, (char *)"gen");
	for (int i = skip; i < n_words; i++)
		g_ptr_array_add(argv, words[i]);
	g_ptr_array_add(argv, (char *)"-o");
	g_ptr_array_add(argv, (char *)path);
	g_ptr_array_add(argv, NULL);
	fflush(stdout);
	int status = cmd_gen((int)argv->len - 1, (char **)argv->pdata);
	if (status != EXIT_OK) {
		fprintf(stderr, "cowsim sweep: --gen '%s': the generator failed (exit %d)\n", command, status);
		return status == EXIT_RUN_FAILED ? EXIT_RUN_FAILED : EXIT_BAD_INPUT;
	}
	return EXIT_OK;
}

/* ---- one point --------------------------------------------------------------- */

/* A line table of point `point` from its summary. */
static RowsTable *point_line(const struct sweep *s, unsigned point, const struct rows_summary *summary)
{
	unsigned n = s->params->len;
	g_autofree unsigned *choice = g_new0(unsigned, n);
	g_autofree ResultsCell *cells = g_new0(ResultsCell, n);
	grid_point(param_list(s), n, point, choice);
	for (unsigned i = 0; i < n; i++) {
		const struct grid_param *p = param_list(s)[i];
		cells[i] = p->kind == RESULTS_CELL_U64 ? results_cell_u64(g_array_index(p->numbers, uint64_t, choice[i]))
						       : results_cell_string(p->values->pdata[choice[i]]);
	}
	RowsTable *line = rows_table_copy_columns(s->columns);
	rows_table_add(line, cells, summary, &s->configs[point]);
	return line;
}

/* Replays `trace` for point `point` and keeps the result in DIR/points
 * (SS1: its rows, then its line). Returns an exit status (SW3); a failure is
 * reported on stderr. */
static int run_point(struct sweep *s, unsigned point, const char *trace)
{
	const struct sweep_args *a = s->args;
	const char *key = key_of(s, point);
	g_autofree char *csv = sweep_store_point_path(a->run.out, key, "csv");
	g_autofree char *csv_tmp = g_strconcat(csv, ".tmp", NULL);
	struct rows_summary summary = { 0 };
	g_autoptr(GError) error = NULL;
	int status = multirun_run(trace, &s->configs[point], &a->run, csv_tmp, &summary, &error);
	if (status == EXIT_OK) { /* done, or ended by ENOSPC: a result (SS2) */
		/* An ENOSPC end comes with its message: the line's status says it, and
		 * the error must be clear before the writes below may set one. */
		g_clear_error(&error);
		g_autoptr(RowsTable) line = point_line(s, point, &summary);
		if (g_rename(csv_tmp, csv) != 0) {
			g_set_error(&error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot rename '%s': %s",
				    csv_tmp, g_strerror(errno));
			status = EXIT_RUN_FAILED;
		} else if (!sweep_store_write_point(a->run.out, key, point, line, &error)) {
			status = EXIT_RUN_FAILED;
		}
	}
	rows_summary_clear(&summary);
	if (status != EXIT_OK) {
		g_unlink(csv_tmp);
		if (!a->run.quiet && isatty(STDERR_FILENO))
			fputc('\n', stderr);
		g_autofree char *where = point_text(s, point);
		fprintf(stderr, "cowsim sweep: point %u (%s): %s\n", point, where, error ? error->message : "failed");
	}
	return status;
}

/* `cowsim sweep ARGS --point K`: point K alone, unless already finished. */
static int run_one(struct sweep *s)
{
	unsigned point = (unsigned)s->args->point;
	if (sweep_store_has_point(s->args->run.out, key_of(s, point))) {
		if (!s->args->run.quiet)
			fprintf(stderr, "cowsim sweep: point %u is already finished in %s\n", point, s->args->run.out);
		return EXIT_OK;
	}
	if (!s->args->gen)
		return run_point(s, point, s->args->rest[0]);
	g_autofree unsigned *choice = g_new0(unsigned, s->params->len);
	grid_point(param_list(s), s->params->len, point, choice);
	g_autofree char *command = point_command(s, choice);
	g_autofree char *trace = sweep_store_point_path(s->args->run.out, key_of(s, point), "trace.tmp");
	int status = generate(command, trace);
	if (status == EXIT_OK)
		status = run_point(s, point, trace);
	g_unlink(trace);
	return status;
}

/* ---- the whole sweep ------------------------------------------------------------ */

struct progress {
	double started;
	unsigned finished;            /* points with a file, from before or from this run */
	unsigned launched;            /* points started by this run */
	unsigned ran;                 /* points of this run that ended, well or not */
	unsigned to_run;              /* points this run has to run */
	double last_csv_write;        /* when sweep.csv was last rewritten (0: never) */
	int worst;                    /* SW3: the worst status of a point, EXIT_OK to EXIT_BAD_INPUT */
	GArray *failed;               /* of unsigned: the points that failed */
};

static void format_duration(double seconds, char buf[32])
{
	long s = (long)(seconds + 0.5);
	if (s >= 3600)
		snprintf(buf, 32, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, 32, "%ld:%02ld", s / 60, s % 60);
}

/* As point `point` starts: a bar on a terminal, a line otherwise. The ETA
 * is over the whole sweep: the points still to run at the rate of those
 * this run finished (with -j N, N at a time). */
static void progress_start(const struct sweep *s, const struct progress *p, unsigned point)
{
	if (s->args->run.quiet)
		return;
	g_autofree char *where = point_text(s, point);
	double elapsed = multirun_seconds() - p->started;
	char elapsed_text[32], eta_text[32] = "?";
	format_duration(elapsed, elapsed_text);
	if (p->ran)
		format_duration(elapsed / p->ran * (p->to_run - p->ran), eta_text);
	unsigned number = p->finished + (p->launched - p->ran) + 1; /* this one, counting those running */
	if (!isatty(STDERR_FILENO)) {
		fprintf(stderr, "cowsim sweep: point %u of %u: %s (elapsed %s, eta %s)\n", number, s->n_points, where,
			elapsed_text, eta_text);
		return;
	}
	enum { WIDTH = 30 };
	char bar[WIDTH + 1];
	unsigned filled = (unsigned)((uint64_t)p->finished * WIDTH / s->n_points);
	for (unsigned i = 0; i < WIDTH; i++)
		bar[i] = i < filled ? '#' : '.';
	bar[WIDTH] = 0;
	fprintf(stderr, "\r[%s] %u/%u %s  %s elapsed, eta %s\033[K", bar, p->finished, s->n_points, where,
		elapsed_text, eta_text);
}

/* The finished points' lines in grid order, as one table. */
static RowsTable *finished_table(const struct sweep *s, GError **error)
{
	g_autoptr(RowsTable) table = rows_table_copy_columns(s->columns);
	for (unsigned point = 0; point < s->n_points; point++)
		if (s->lines[point] && !rows_table_add_texts(table, (const char *const *)s->lines[point]->pdata, error))
			return NULL;
	return g_steal_pointer(&table);
}

/* SW5: once sweep.csv no longer holds `before` (its bytes before the
 * rewrite), the figures drawn from it go. */
static void drop_stale_figures(const char *dir, const char *csv, const char *before, gsize before_length)
{
	g_autofree char *after = NULL;
	gsize after_length = 0;
	if (g_file_get_contents(csv, &after, &after_length, NULL) && before && after_length == before_length &&
	    !memcmp(after, before, after_length))
		return;
	static const char *const figures[] = { "sweep.png", "sweep.svg" };
	for (size_t i = 0; i < G_N_ELEMENTS(figures); i++) {
		g_autofree char *path = g_build_filename(dir, figures[i], NULL);
		g_unlink(path);
	}
}

/* Whether DIR has a figure of sweep.csv (SW5). */
static bool has_figures(const char *dir)
{
	g_autofree char *png = g_build_filename(dir, "sweep.png", NULL);
	g_autofree char *svg = g_build_filename(dir, "sweep.svg", NULL);
	return g_file_test(png, G_FILE_TEST_EXISTS) || g_file_test(svg, G_FILE_TEST_EXISTS);
}

/* DIR/sweep.csv from the finished points (SW2); not more than once a
 * second once it is long, unless `force`. */
static bool write_csv(struct sweep *s, struct progress *p, bool force, GError **error)
{
	double now = multirun_seconds();
	if (!force && p->finished > SWEEP_REWRITE_LINES && now - p->last_csv_write < SWEEP_REWRITE_SECONDS)
		return true;
	p->last_csv_write = now;
	g_autoptr(RowsTable) table = finished_table(s, error);
	const char *dir = s->args->run.out;
	g_autofree char *csv = g_build_filename(dir, "sweep.csv", NULL);
	g_autofree char *before = NULL;
	gsize before_length = 0;
	bool figures = has_figures(dir);
	if (figures)
		g_file_get_contents(csv, &before, &before_length, NULL);
	if (!table || !rows_table_write_csv(table, csv, error))
		return false;
	if (figures)
		drop_stale_figures(dir, csv, before, before_length);
	return true;
}

/* Reads back point `point`'s file into s->lines. */
static bool load_point(struct sweep *s, unsigned point, GError **error)
{
	s->lines[point] = sweep_store_read_point(s->args->run.out, key_of(s, point), point, s->columns, error);
	return s->lines[point] != NULL;
}

/* A point of this run ended with `status`. */
static void point_ended(struct sweep *s, struct progress *p, unsigned point, int status)
{
	p->ran++;
	g_autoptr(GError) error = NULL;
	if (status == EXIT_OK && (!load_point(s, point, &error) || !write_csv(s, p, false, &error))) {
		fprintf(stderr, "cowsim sweep: %s\n", error->message);
		status = EXIT_RUN_FAILED;
	}
	if (status == EXIT_OK) {
		p->finished++;
		return;
	}
	if (status > EXIT_BAD_INPUT && multirun_interrupted)
		return; /* interrupted: not a failure of the point, run again next time (SW4) */
	if (status > EXIT_BAD_INPUT) {
		fprintf(stderr, "cowsim sweep: point %u: its process ended with status %d\n", point, status);
		status = EXIT_RUN_FAILED;
	}
	g_array_append_val(p->failed, point);
	if (status > p->worst)
		p->worst = status;
}

struct order_entry {
	unsigned point;
	unsigned group;               /* the first point with the same command */
	char *command;                /* the filled --gen template, NULL with TRACE */
};

static gint order_compare(gconstpointer a, gconstpointer b, gpointer unused)
{
	(void)unused;
	const struct order_entry *x = a, *y = b;
	if (x->group != y->group)
		return (x->group > y->group) - (x->group < y->group);
	return (x->point > y->point) - (x->point < y->point);
}

/* The points of `todo` grouped by generator command (see "How it works");
 * the groups come in grid order, so that snapshots=0..10 runs 0, 1, 2, ...
 * 10 and the ETA grows with the work. */
static struct order_entry *run_order(const struct sweep *s, const GArray *todo)
{
	struct order_entry *order = g_new0(struct order_entry, todo->len);
	g_autofree unsigned *choice = g_new0(unsigned, s->params->len);
	g_autoptr(GHashTable) first_point = g_hash_table_new(g_str_hash, g_str_equal);
	for (unsigned k = 0; k < todo->len; k++) {
		unsigned point = g_array_index(todo, unsigned, k);
		order[k].point = point;
		grid_point(param_list(s), s->params->len, point, choice);
		order[k].command = point_command(s, choice);
		if (order[k].command) {
			if (!g_hash_table_contains(first_point, order[k].command))
				g_hash_table_insert(first_point, order[k].command, GUINT_TO_POINTER(point));
			order[k].group = GPOINTER_TO_UINT(g_hash_table_lookup(first_point, order[k].command));
		}
	}
	g_qsort_with_data(order, (gint)todo->len, sizeof(*order), order_compare, NULL);
	return order;
}

static void free_order(struct order_entry *order, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		g_free(order[i].command);
	g_free(order);
}

/* -j 1: the points of `todo` one after the other, in this process. */
static void run_here(struct sweep *s, struct progress *p, const GArray *todo)
{
	struct order_entry *order = run_order(s, todo);
	const char *generated = NULL;
	int gen_status = EXIT_OK;
	for (unsigned k = 0; k < todo->len && !multirun_interrupted; k++) {
		const struct order_entry *e = &order[k];
		progress_start(s, p, e->point);
		p->launched++;
		if (e->command && (!generated || strcmp(generated, e->command))) {
			gen_status = generate(e->command, s->trace_tmp);
			generated = e->command;
		}
		int status = gen_status != EXIT_OK ? gen_status
			: run_point(s, e->point, e->command ? s->trace_tmp : s->args->rest[0]);
		point_ended(s, p, e->point, status);
	}
	g_unlink(s->trace_tmp);
	free_order(order, todo->len);
}

/* The command line of a child: this program, the arguments as given, and
 * --point K --quiet. */
static GPtrArray *child_argv(const struct sweep *s, const char *self, char point_text_buf[24], unsigned point)
{
	GPtrArray *argv = g_ptr_array_new();
	g_ptr_array_add(argv, (char *)self);
	g_ptr_array_add(argv, (char *)"sweep");
	for (unsigned i = 0; s->args->given[i]; i++)
		g_ptr_array_add(argv, s->args->given[i]);
	snprintf(point_text_buf, 24, "%u", point);
	if (s->trace_sha256 && !s->args->trace_sha256) {
		g_ptr_array_add(argv, (char *)"--trace-sha256");
		g_ptr_array_add(argv, s->trace_sha256);
	}
	g_ptr_array_add(argv, (char *)"--point");
	g_ptr_array_add(argv, point_text_buf);
	g_ptr_array_add(argv, (char *)"--quiet");
	g_ptr_array_add(argv, NULL);
	return argv;
}

/* An exit status from waitpid's: a child killed by a signal is 128+signal. */
static int child_status(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	return WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status) : EXIT_RUN_FAILED;
}

static void on_child(int signo)
{
	(void)signo; /* only there so that SIGCHLD ends sigsuspend */
}

/* A child that ended (its pid), or 0 once a signal arrived: sleeps until one
 * of the two happens.  SIGCHLD, SIGINT and SIGTERM are blocked between the
 * check and the sleep, and sigsuspend unblocks them atomically, so neither a
 * child's end nor a signal can slip in between and leave us asleep.  (It
 * used to poll every 10 ms: with points of 30 ms, that left a slot idle for
 * a sixth of the time.) */
static GPid wait_child(int *wait_status)
{
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	GPid pid = waitpid(-1, wait_status, WNOHANG);
	if (pid == 0 && !multirun_interrupted) {
		sigsuspend(&old);
		pid = waitpid(-1, wait_status, WNOHANG);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return pid;
}

/* -j N: each point of `todo` in a child `cowsim sweep ARGS --point K`, N at
 * a time. A signal to this process is passed on to the children, which
 * stop without writing their point (SW4); then this one stops too. */
static void run_children(struct sweep *s, struct progress *p, const GArray *todo, unsigned jobs)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *self = g_file_read_link("/proc/self/exe", &error);
	if (!self) {
		fprintf(stderr, "cowsim sweep: -j: cannot find this program: %s\n", error->message);
		p->worst = EXIT_RUN_FAILED;
		return;
	}
	g_autofree GPid *pids = g_new0(GPid, jobs);
	g_autofree unsigned *points = g_new0(unsigned, jobs);
	unsigned next = 0, running = 0;
	bool passed_on = false;
	struct sigaction child_ended = { .sa_handler = on_child }, before;
	sigaction(SIGCHLD, &child_ended, &before);
	fflush(stdout);
	fflush(stderr);
	while (next < todo->len || running > 0) {
		for (unsigned slot = 0; slot < jobs && next < todo->len && !multirun_interrupted; slot++) {
			if (pids[slot])
				continue;
			unsigned point = g_array_index(todo, unsigned, next++);
			char number[24];
			g_autoptr(GPtrArray) argv = child_argv(s, self, number, point);
			progress_start(s, p, point);
			p->launched++;
			if (!g_spawn_async(NULL, (char **)argv->pdata, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
					   &pids[slot], &error)) {
				fprintf(stderr, "cowsim sweep: point %u: cannot start %s: %s\n", point, self,
					error->message);
				g_clear_error(&error);
				point_ended(s, p, point, EXIT_RUN_FAILED);
				continue;
			}
			points[slot] = point;
			running++;
		}
		if (multirun_interrupted && !passed_on) {
			for (unsigned slot = 0; slot < jobs; slot++)
				if (pids[slot])
					kill(pids[slot], multirun_interrupted);
			passed_on = true;
		}
		if (multirun_interrupted && running == 0)
			break;
		int wait_status = 0;
		GPid pid = wait_child(&wait_status);
		if (pid == 0 || (pid < 0 && errno == EINTR))
			continue;
		if (pid < 0)
			break; /* no children left: cannot happen while running > 0 */
		for (unsigned slot = 0; slot < jobs; slot++) {
			if (pids[slot] == pid) {
				pids[slot] = 0;
				running--;
				point_ended(s, p, points[slot], child_status(wait_status));
			}
		}
	}
	sigaction(SIGCHLD, &before, NULL);
}

/* ---- the outputs ---------------------------------------------------------------- */

/* DIR/sweep.png and .svg: `cowsim plot --kind sweep` (results/plot.py draws
 * amplification against the first parameter, a line per value of the others;
 * the same script re-plots a merged sweep). */
static int plot(const char *dir, const char *title)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(argv, g_strdup("plot"));
	g_ptr_array_add(argv, g_build_filename(dir, "sweep.csv", NULL));
	g_ptr_array_add(argv, g_strdup("-o"));
	g_ptr_array_add(argv, g_build_filename(dir, "sweep", NULL));
	g_ptr_array_add(argv, g_strdup("--kind=sweep"));
	g_ptr_array_add(argv, g_strdup_printf("--title=%s", title));
	int status = cmd_plot((int)argv->len, (char **)argv->pdata);
	if (status == EXIT_SKIPPED) {
		fprintf(stderr, "cowsim sweep: no plot (see above); sweep.csv is written\n");
		return EXIT_OK;
	}
	if (status != EXIT_OK) {
		fprintf(stderr, "cowsim sweep: the plot failed\n");
		return EXIT_RUN_FAILED;
	}
	return EXIT_OK;
}

/* sweep.csv (already written), the table on stdout unless quiet, the plot
 * when there is a line to draw. */
static int finish_outputs(const char *dir, const RowsTable *table, const struct sweep_plan *plan, bool quiet,
			  FILE *out)
{
	g_autoptr(GError) error = NULL;
	if (!quiet && !rows_table_print(table, out, &error)) {
		fprintf(stderr, "cowsim sweep: %s\n", error->message);
		return EXIT_RUN_FAILED;
	}
	return rows_table_n_rows(table) ? plot(dir, plan->title) : EXIT_OK;
}

/* "3, 7, 12" (the first ten), for messages. */
static char *point_list(const GArray *points)
{
	GString *out = g_string_new(NULL);
	for (unsigned i = 0; i < points->len && i < 10; i++)
		g_string_append_printf(out, "%s%u", i ? ", " : "", g_array_index(points, unsigned, i));
	if (points->len > 10)
		g_string_append(out, ", ...");
	return g_string_free(out, FALSE);
}

/* The points whose file is not in DIR yet, and the lines of those that are. */
static GArray *points_to_run(struct sweep *s, struct progress *p)
{
	GArray *todo = g_array_new(FALSE, FALSE, sizeof(unsigned));
	for (unsigned point = 0; point < s->n_points; point++) {
		g_autoptr(GError) error = NULL;
		if (sweep_store_has_point(s->args->run.out, key_of(s, point)) && load_point(s, point, &error)) {
			p->finished++;
			continue;
		}
		if (error) /* SS3: not trusted, run again */
			fprintf(stderr, "cowsim sweep: %s: running the point again\n", error->message);
		g_array_append_val(todo, point);
	}
	return todo;
}

static struct provenance provenance_of(const struct sweep *s)
{
	const struct sweep_args *a = s->args;
	return (struct provenance){ .command = "sweep", .argv = a->given, .entries = a->entries,
				    .trace = a->gen ? NULL : a->rest[0], .trace_sha256 = s->trace_sha256,
				    .gen_command = a->gen };
}

/* DIR/parameters.json (provenance.h): with the model values of the first
 * point, and the values of every --vary parameter. */
static bool write_parameters(const struct sweep *s, GError **error)
{
	struct provenance p = provenance_of(s);
	ResultsJson *w = provenance_begin(&p, PROVENANCE_PARAMETERS_SCHEMA, error);
	if (!w)
		return false;
	provenance_model(w, "model", &s->configs[0], true);
	results_json_begin_object(w, "vary");
	for (unsigned i = 0; i < s->params->len; i++) {
		const struct grid_param *param = param_list(s)[i];
		results_json_begin_array(w, param->name);
		for (unsigned v = 0; v < param->values->len; v++)
			results_json_string(w, NULL, param->values->pdata[v]);
		results_json_end(w);
	}
	results_json_end(w);
	results_json_u64(w, "points", s->n_points);
	results_json_end(w);
	g_autofree char *path = g_build_filename(s->args->run.out, PROVENANCE_PARAMETERS_FILE, NULL);
	gsize length;
	g_autofree char *text = results_json_finish(w, &length);
	return g_file_set_contents(path, text, (gssize)length, error);
}

/* --json: the lines of sweep.csv (the finished points), each with its index
 * and its rows' CSV, after the provenance head; `status` is the exit status. */
static int write_json(const struct sweep *s, const RowsTable *table, int status)
{
	struct provenance p = provenance_of(s);
	ResultsJson *w = provenance_summary_begin(&p, "cowsim-sweep-summary/1", s->args->run.out, status);
	if (!w)
		return MAX(status, EXIT_RUN_FAILED);
	results_json_u64(w, "points_total", s->n_points);
	results_json_u64(w, "points_finished", rows_table_n_rows(table));
	results_json_begin_array(w, "points");
	unsigned line = 0;
	for (unsigned point = 0; point < s->n_points; point++) {
		if (!s->lines[point])
			continue;
		g_autofree char *csv = sweep_store_point_path(s->args->run.out, key_of(s, point), "csv");
		results_json_begin_object(w, NULL);
		results_json_u64(w, "index", point);
		rows_table_json_line(table, line++, w);
		results_json_string(w, "csv", csv);
		results_json_end(w);
	}
	results_json_end(w);
	results_json_end(w);
	return provenance_write(w, "sweep", s->args->json) ? status : MAX(status, EXIT_RUN_FAILED);
}

static int run_sweep(struct sweep *s)
{
	const struct sweep_args *a = s->args;
	struct progress p = { .started = multirun_seconds(), .failed = g_array_new(FALSE, FALSE, sizeof(unsigned)) };
	g_autoptr(GArray) todo = points_to_run(s, &p);
	p.to_run = todo->len;
	if (p.finished && !a->run.quiet)
		fprintf(stderr, "cowsim sweep: %u of %u points already finished in %s; running the other %u\n",
			p.finished, s->n_points, a->run.out, todo->len);
	if (a->jobs > 1 && todo->len > 1)
		run_children(s, &p, todo, MIN((unsigned)a->jobs, todo->len));
	else
		run_here(s, &p, todo);
	if (!a->run.quiet && isatty(STDERR_FILENO))
		fputc('\n', stderr);
	g_autoptr(GError) error = NULL;
	g_autoptr(RowsTable) table = NULL;
	int status = p.worst;
	if (!write_csv(s, &p, true, &error) || !(table = finished_table(s, &error))) {
		fprintf(stderr, "cowsim sweep: %s\n", error->message);
		status = MAX(status, EXIT_RUN_FAILED);
	}
	if (p.failed->len) {
		g_autofree char *list = point_list(p.failed);
		fprintf(stderr, "cowsim sweep: %u of %u points failed (%s); the same command runs them again\n",
			p.failed->len, s->n_points, list);
	}
	if (multirun_interrupted) {
		fprintf(stderr, "cowsim sweep: interrupted: %u of %u points are finished in %s; the same command "
			"runs the others\n", p.finished, s->n_points, a->run.out);
		status = multirun_interrupted_status();
	} else if (table) {
		/* CLI1: a JSON summary on stdout leaves the table to stderr */
		int written = finish_outputs(a->run.out, table, &s->plan, a->run.quiet,
					     cli_is_stdio(a->json) ? stderr : stdout);
		status = MAX(status, written);
	}
	if (a->json && table)
		status = write_json(s, table, status);
	g_array_unref(p.failed);
	return status;
}

/* ---- cowsim sweep plan: a job list and a Slurm array ------------------------------ */

/* "cd CWD && SELF sweep ARGS --point " with every word shell-quoted. */
static char *job_prefix(const struct sweep *s, const char *self, const char *cwd)
{
	GString *out = g_string_new(NULL);
	g_autofree char *q_cwd = g_shell_quote(cwd), *q_self = g_shell_quote(self);
	g_string_append_printf(out, "cd %s && %s sweep", q_cwd, q_self);
	for (unsigned i = 0; s->args->given[i]; i++) {
		g_autofree char *word = g_shell_quote(s->args->given[i]);
		g_string_append_printf(out, " %s", word);
	}
	g_string_append(out, " --quiet --point ");
	return g_string_free(out, FALSE);
}

static bool write_text(const char *dir, const char *name, const char *text, GError **error)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);
	return g_file_set_contents(path, text, -1, error);
}

/* DIR/jobs.txt: a command line per point not yet finished, for GNU
 * parallel; DIR/sweep.sbatch: a Slurm array over every point (a finished one
 * returns at once). */
static int write_jobs(const struct sweep *s)
{
	const char *dir = s->args->run.out;
	g_autoptr(GError) error = NULL;
	g_autofree char *self = g_file_read_link("/proc/self/exe", &error);
	g_autofree char *cwd = g_get_current_dir();
	if (!self) {
		fprintf(stderr, "cowsim sweep plan: cannot find this program: %s\n", error->message);
		return EXIT_RUN_FAILED;
	}
	g_autofree char *prefix = job_prefix(s, self, cwd);
	g_autoptr(GString) jobs = g_string_new(NULL);
	unsigned pending = 0;
	for (unsigned point = 0; point < s->n_points; point++) {
		if (sweep_store_has_point(dir, key_of(s, point)))
			continue;
		g_string_append_printf(jobs, "%s%u\n", prefix, point);
		pending++;
	}
	g_autofree char *abs_dir = g_canonicalize_filename(dir, cwd);
	g_autofree char *q_cwd = g_shell_quote(cwd);
	g_autofree char *sbatch = g_strdup_printf(
		"#!/bin/sh\n"
		"# cowsim sweep plan: point $SLURM_ARRAY_TASK_ID of this sweep; then 'cowsim sweep merge DIR'\n"
		"#SBATCH --job-name=cowsim-sweep\n"
		"#SBATCH --array=0-%u\n"
		"#SBATCH --ntasks=1\n"
		"#SBATCH --cpus-per-task=1\n"
		"#SBATCH --output=%s/slurm-%%A_%%a.out\n"
		"cd %s || exit 1\n"
		"exec %s\"$SLURM_ARRAY_TASK_ID\"\n",
		s->n_points - 1, abs_dir, q_cwd, strstr(prefix, "&& ") + 3);
	if (!write_text(dir, "jobs.txt", jobs->str, &error) || !write_text(dir, "sweep.sbatch", sbatch, &error)) {
		fprintf(stderr, "cowsim sweep plan: %s\n", error->message);
		return EXIT_RUN_FAILED;
	}
	if (!s->args->run.quiet)
		printf("%u points (%u not finished) planned in %s:\n"
		       "  parallel --jobs N < %s/jobs.txt          (add --sshloginfile FILE for other machines)\n"
		       "  sbatch %s/sweep.sbatch                   (a Slurm array of %u tasks)\n"
		       "then: cowsim sweep merge %s\n",
		       s->n_points, pending, dir, dir, dir, s->n_points, dir);
	return EXIT_OK;
}

/* ---- cowsim sweep merge DIR... ------------------------------------------------------ */

struct merge_args {
	char *out;
	gboolean quiet;
	char **dirs;
};

static bool copy_file(const char *from, const char *to, GError **error)
{
	g_autofree char *bytes = NULL;
	gsize len = 0;
	return g_file_test(to, G_FILE_TEST_EXISTS) ||
	       (g_file_get_contents(from, &bytes, &len, error) && g_file_set_contents(to, bytes, (gssize)len, error));
}

/* OUT gets the plan and the files of every point found elsewhere, so that
 * it is a sweep folder like the others (a rerun there finds them). */
static bool gather(const char *out, char **dirs, const struct sweep_plan *plan, GError **error)
{
	if (!sweep_store_make_dirs(out, error) || !sweep_plan_write(out, plan, error))
		return false;
	g_autofree char *parameters_to = g_build_filename(out, PROVENANCE_PARAMETERS_FILE, NULL);
	for (unsigned d = 0; dirs[d]; d++) { /* the same sweep: any folder's parameters.json describes it */
		g_autofree char *from = g_build_filename(dirs[d], PROVENANCE_PARAMETERS_FILE, NULL);
		if (g_file_test(from, G_FILE_TEST_EXISTS) && !copy_file(from, parameters_to, error))
			return false;
	}
	for (unsigned k = 0; k < plan->keys->len; k++) {
		const char *key = plan->keys->pdata[k];
		for (unsigned d = 0; dirs[d] && !sweep_store_has_point(out, key); d++) {
			if (!sweep_store_has_point(dirs[d], key))
				continue;
			g_autofree char *csv_from = sweep_store_point_path(dirs[d], key, "csv");
			g_autofree char *csv_to = sweep_store_point_path(out, key, "csv");
			g_autofree char *from = sweep_store_point_path(dirs[d], key, "point");
			g_autofree char *to = sweep_store_point_path(out, key, "point");
			if ((g_file_test(csv_from, G_FILE_TEST_EXISTS) && !copy_file(csv_from, csv_to, error)) ||
			    !copy_file(from, to, error)) /* SS1: the .point last */
				return false;
		}
	}
	return true;
}

static int report(const char *dir)
{
	g_autofree char *page = g_build_filename(dir, "report.html", NULL);
	char *argv[] = { (char *)"report", (char *)dir, (char *)"-o", page, NULL };
	return cmd_report(4, argv);
}

static int merge(const struct merge_args *a)
{
	unsigned n_dirs = g_strv_length(a->dirs);
	struct sweep_plan plan;
	sweep_plan_init(&plan);
	g_autoptr(GError) error = NULL;
	int status = EXIT_BAD_INPUT;
	g_autoptr(GArray) missing = g_array_new(FALSE, FALSE, sizeof(unsigned));
	g_autoptr(RowsTable) table = NULL;
	g_autofree char *csv = g_build_filename(a->out, "sweep.csv", NULL);
	for (unsigned d = 0; d < n_dirs; d++) {
		struct sweep_plan other;
		sweep_plan_init(&other);
		bool read = sweep_plan_read(a->dirs[d], d ? &other : &plan, &error);
		bool same = read && (!d || sweep_plan_same(&plan, &other));
		sweep_plan_clear(&other);
		if (!read)
			goto out;
		if (!same) {
			fprintf(stderr, "cowsim sweep merge: %s holds another sweep than %s (other parameters, "
				"trace or options)\n", a->dirs[d], a->dirs[0]);
			goto out_printed;
		}
	}
	status = EXIT_RUN_FAILED;
	if (!gather(a->out, a->dirs, &plan, &error))
		goto out;
	const char *out_dir[] = { a->out };
	if (!(table = sweep_store_table(out_dir, 1, &plan, missing, &error)) ||
	    !rows_table_write_csv(table, csv, &error))
		goto out;
	status = finish_outputs(a->out, table, &plan, a->quiet, stdout);
	if (status == EXIT_OK)
		status = report(a->out);
	if (missing->len) {
		g_autofree char *list = point_list(missing);
		fprintf(stderr, "cowsim sweep merge: %u of %u points are finished in none of the folders (%s): "
			"sweep.csv holds the others; run them with 'cowsim sweep ARGS --point K'\n", missing->len,
			plan.keys->len, list);
		status = MAX(status, EXIT_RUN_FAILED);
	}
	goto out_printed;
out:
	fprintf(stderr, "cowsim sweep merge: %s\n", error->message);
out_printed:
	sweep_plan_clear(&plan);
	return status;
}

static const struct cli_doc merge_doc = {
	.command = "sweep merge",
	.args = "DIR...",
	.summary = "Gathers the points that 'cowsim sweep ARGS --point K' (or a whole sweep) finished\n"
		   "in one or more folders of the same sweep into one folder: sweep.csv in grid order,\n"
		   "the plot and report.html; the folder gets the plan and the point files of the\n"
		   "others, so that it is a sweep folder like them.",
	.examples = "  parallel < sw/jobs.txt && cowsim sweep merge sw\n"
		    "  cowsim sweep merge node1/sw node2/sw -o sw",
	.exits = "  0  every point merged\n"
		 "  1  some point is finished in none of the folders (the others are merged), or\n"
		 "     a file could not be written\n"
		 "  2  bad arguments, a folder that is not a sweep, folders of different sweeps",
};

static int cmd_merge(int argc, char **argv)
{
	struct merge_args a = { 0 };
	const GOptionEntry entries[] = {
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &a.out,
		  "the merged folder (default: the first DIR); it gets the points of the others", "DIR" },
		{ "out", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &a.out, "the same as --output", "DIR" },
		{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &a.quiet, "no table on stdout", NULL },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a.dirs, NULL, NULL },
		{ NULL },
	};
	g_autoptr(GOptionContext) context = cli_context_new(&merge_doc);
	g_option_context_add_main_entries(context, entries, NULL);
	int status = EXIT_BAD_INPUT;
	bool parsed = cli_parse(context, &merge_doc, &argc, &argv);
	if (parsed && (!a.dirs || !a.dirs[0]))
		fprintf(stderr, "cowsim sweep merge: give the folders to merge (see 'cowsim sweep merge --help')\n");
	else if (parsed) {
		if (!a.out)
			a.out = g_strdup(a.dirs[0]);
		status = merge(&a);
	}
	g_free(a.out);
	g_strfreev(a.dirs);
	return status;
}

/* ---- the command ----------------------------------------------------------------- */

enum sweep_mode { SWEEP_RUN, SWEEP_PLAN };

static int sweep(struct sweep_args *a, enum sweep_mode mode)
{
	struct sweep s = { .args = a, .params = g_ptr_array_new_with_free_func((GDestroyNotify)grid_param_free) };
	sweep_plan_init(&s.plan);
	g_autoptr(GError) error = NULL;
	int status = EXIT_BAD_INPUT;
	if (!parse_params(&s, &error) || !plan(&s, &error)) {
		fprintf(stderr, "cowsim sweep: %s\n", error->message);
		goto out;
	}
	if (!sweep_store_make_dirs(a->run.out, &error) || !sweep_plan_write(a->run.out, &s.plan, &error) ||
	    (a->point < 0 && !write_parameters(&s, &error))) {
		fprintf(stderr, "cowsim sweep: %s\n", error->message);
		status = cli_output_error_status(error); /* CLI2: -o DIR that cannot be made is bad input */
		goto out;
	}
	s.trace_tmp = g_build_filename(a->run.out, "sweep-trace.tmp", NULL);
	if (mode == SWEEP_PLAN)
		status = write_jobs(&s);
	else if (a->point >= 0)
		status = run_one(&s);
	else
		status = run_sweep(&s);
out:
	g_ptr_array_unref(s.params);
	for (unsigned i = 0; s.lines && i < s.n_points; i++)
		if (s.lines[i])
			g_ptr_array_unref(s.lines[i]);
	g_free(s.lines);
	if (s.columns)
		rows_table_free(s.columns);
	sweep_plan_clear(&s.plan);
	g_free(s.configs);
	g_free(s.trace_sha256);
	g_free(s.trace_tmp);
	return status;
}

int cmd_sweep(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "merge"))
		return cmd_merge(argc - 1, argv + 1);
	enum sweep_mode mode = argc > 1 && !strcmp(argv[1], "plan") ? SWEEP_PLAN : SWEEP_RUN;
	if (mode == SWEEP_PLAN) {
		argc--;
		argv++;
	}
	struct sweep_args args = { 0 };
	int status = parse_args(argc, argv, &args);
	if (status == EXIT_OK && mode == SWEEP_PLAN && args.point >= 0) {
		fprintf(stderr, "cowsim sweep plan: --point is for the planned jobs, not for the plan\n");
		status = EXIT_BAD_INPUT;
	}
	if (status == EXIT_OK) {
		multirun_catch_signals();
		status = sweep(&args, mode);
	}
	free_args(&args);
	return status;
}
