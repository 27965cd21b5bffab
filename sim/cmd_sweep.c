/*
 * sim/cmd_sweep.c - `cowsim sweep (TRACE | --gen CMD) --vary NAME=VALUES ...`:
 * the model over a grid of parameters, one CSV line per point.
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
 *   The generator runs in-process (cmd_gen) into one temporary trace in DIR.
 *   Points are run in an order that groups those with the same generator
 *   command (a stable sort), so each trace is generated once; the lines of
 *   DIR/sweep.csv stay in grid order.  Then DIR/sweep.png/.svg: amplification
 *   against the first parameter, a line per value of the others (drawn by a
 *   short matplotlib program run with /usr/bin/python3, as cowsim plot does).
 *
 * Invariants
 *   S1  Every point's configuration is checked (options and mkfs) before the
 *       first run: a bad --vary value is exit 2 and nothing is run.
 *   S2  Same inputs, same bytes in sweep.csv and sweep.svg; the progress bar
 *       and ETA go to stderr only.
 *   S3  Exit status as compare's: 0 done (ENOSPC is a result), 1 a run broke
 *       or the plot failed, 2 bad arguments, a malformed trace or a failed
 *       generator, 128+signal interrupted.
 */
#include <errno.h>
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
#include "rows.h"

#define SWEEP_PYTHON "/usr/bin/python3"

struct sweep_args {
	struct model_option_text model;
	struct multirun_args run;     /* --out, --base, --every, --keep-going, --quiet */
	char **vary;
	char *policies;
	char *gen;
	char **rest;
};

struct sweep {
	struct sweep_args *args;
	GPtrArray *params;            /* of struct grid_param *, in --vary order */
	unsigned n_points;
	struct fs_config *configs;    /* per point */
	struct rows_summary *summaries; /* per point */
	char *trace_tmp;              /* DIR/sweep-trace.tmp with --gen */
};

static void free_args(struct sweep_args *a)
{
	options_model_text_clear(&a->model);
	multirun_args_clear(&a->run);
	g_strfreev(a->vary);
	g_free(a->policies);
	g_free(a->gen);
	g_strfreev(a->rest);
}

static struct grid_param *const *param_list(const struct sweep *s)
{
	return (struct grid_param *const *)s->params->pdata;
}

static const struct cli_doc sweep_doc = {
	.command = "sweep",
	.args = "(TRACE | --gen CMD)",
	.summary = "Runs every point of the product of the --vary parameters and writes one CSV\n"
		   "line per point: the parameters, then final metadata, amplification, counters.",
	.notes = "Values: lists a,b,c; ranges a..b and a..b/step; sizes take K, M, G. Model\n"
		 "parameters: nodesize, device-size, metadata, mount, policy, mkfs-atime, design,\n"
		 "max-inline, commit-interval. Other parameters shape the trace and need --gen\n"
		 "with a {name} placeholder. Writes DIR/sweep.csv, DIR/parameters.txt and\n"
		 "DIR/sweep.png/.svg.",
	.examples = "  cowsim sweep t.trace --vary nodesize=4K,16K,64K --policies inline,side-table\n"
		    "  cowsim sweep --gen 'seed-experiment --from-dir /usr/include --snapshots {snapshots}' \\\n"
		    "      --vary snapshots=0..50/10 --vary nodesize=4K,16K,64K -o sw",
	.exits = "  0  done (a run ended by ENOSPC is a result)\n"
		 "  1  a run broke or the plot failed\n"
		 "  2  bad arguments, a malformed trace or a failed generator\n"
		 "  130/143  interrupted",
	.model_options = true,
};

static int parse_args(int argc, char **argv, struct sweep_args *a)
{
	const GOptionEntry entries[] = {
		{ "vary", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->vary,
		  "a parameter and its values: nodesize=4K,16K,64K, snapshots=0..50/5 (repeatable; the first is "
		  "the plot's x axis)", "NAME=VALUES" },
		{ "policies", 'P', 0, G_OPTION_ARG_STRING, &a->policies, "the same as --vary policy=LIST", "LIST" },
		{ "gen", 'g', 0, G_OPTION_ARG_STRING, &a->gen,
		  "generate the trace per point instead of TRACE: a 'cowsim gen' command line with {name} "
		  "placeholders", "CMD" },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->rest, NULL, NULL },
		{ NULL },
	};
	g_autoptr(GOptionContext) context = cli_context_new(&sweep_doc);
	g_option_context_add_main_entries(context, entries, NULL);
	multirun_add_entries(context, &a->run, "folder for sweep.csv and the plot (default cowsim-sweep)");
	options_add_model_entries(context, &a->model);
	if (!cli_parse(context, &sweep_doc, &argc, &argv))
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
	return multirun_check("sweep", &a->run, traces ? a->rest[0] : NULL, "cowsim-sweep");
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
static char *point_text(const struct sweep *s, const unsigned *choice)
{
	GString *out = g_string_new(NULL);
	for (unsigned i = 0; i < s->params->len; i++)
		g_string_append_printf(out, "%s%s=%s", i ? " " : "", param_list(s)[i]->name,
				       (const char *)param_list(s)[i]->values->pdata[choice[i]]);
	return g_string_free(out, FALSE);
}

/* The configuration of point `point`, checked down to mkfs (S1). */
static bool point_config(struct sweep *s, unsigned point, const unsigned *choice, GError **error)
{
	struct model_option_text text = s->args->model; /* shallow: the fixed options */
	for (unsigned i = 0; i < s->params->len; i++) {
		const struct grid_param *p = param_list(s)[i];
		if (p->model)
			grid_borrow_model_text(&text, p->name, p->values->pdata[choice[i]]);
	}
	if (!options_model_config(&text, &s->configs[point], error))
		return false;
	g_autoptr(Filesystem) fs = fs_new(&s->configs[point], error);
	return fs != NULL;
}

/* Every point's configuration (S1); on an error *error names the point. */
static bool plan(struct sweep *s, GError **error)
{
	unsigned n = s->params->len;
	if (!grid_count_points(param_list(s), n, &s->n_points, error))
		return false;
	s->configs = g_new0(struct fs_config, s->n_points);
	s->summaries = g_new0(struct rows_summary, s->n_points);
	g_autofree unsigned *choice = g_new0(unsigned, n);
	for (unsigned point = 0; point < s->n_points; point++) {
		grid_point(param_list(s), n, point, choice);
		g_autoptr(GError) config_error = NULL;
		if (!point_config(s, point, choice, &config_error)) {
			g_autofree char *where = point_text(s, choice);
			g_set_error(error, GRID_ERROR, 0, "--vary at %s: %s", where, config_error->message);
			return false;
		}
	}
	return true;
}

/* ---- the generator ---------------------------------------------------------- */

/* Writes the trace of `command` (a filled --gen template) to s->trace_tmp
 * with cmd_gen, in-process. Returns an exit status. */
static int generate(const struct sweep *s, const char *command)
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
	g_ptr_array_add(argv, s->trace_tmp);
	g_ptr_array_add(argv, NULL);
	fflush(stdout);
	int status = cmd_gen((int)argv->len - 1, (char **)argv->pdata);
	if (status != EXIT_OK) {
		fprintf(stderr, "cowsim sweep: --gen '%s': the generator failed (exit %d)\n", command, status);
		return status == EXIT_RUN_FAILED ? EXIT_RUN_FAILED : EXIT_BAD_INPUT;
	}
	return EXIT_OK;
}

/* ---- running the points ------------------------------------------------------- */

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

/* The points grouped by generator command (see "How it works"); the groups
 * come in grid order, so that snapshots=0..10 runs 0, 1, 2, ... 10 and the
 * ETA grows with the work. */
static struct order_entry *run_order(const struct sweep *s)
{
	struct order_entry *order = g_new0(struct order_entry, s->n_points);
	g_autofree unsigned *choice = g_new0(unsigned, s->params->len);
	g_autoptr(GHashTable) first_point = g_hash_table_new(g_str_hash, g_str_equal);
	for (unsigned point = 0; point < s->n_points; point++) {
		order[point].point = point;
		if (s->args->gen) {
			grid_point(param_list(s), s->params->len, point, choice);
			order[point].command = grid_template_fill(s->args->gen, param_list(s), s->params->len, choice);
			if (!g_hash_table_contains(first_point, order[point].command))
				g_hash_table_insert(first_point, order[point].command, GUINT_TO_POINTER(point));
			order[point].group = GPOINTER_TO_UINT(g_hash_table_lookup(first_point, order[point].command));
		}
	}
	g_qsort_with_data(order, (gint)s->n_points, sizeof(*order), order_compare, NULL);
	return order;
}

static void free_order(struct order_entry *order, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		g_free(order[i].command);
	g_free(order);
}

static void format_duration(double seconds, char buf[32])
{
	long s = (long)(seconds + 0.5);
	if (s >= 3600)
		snprintf(buf, 32, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, 32, "%ld:%02ld", s / 60, s % 60);
}

/* Before point `done` + 1 of `total`: a bar on a terminal, a line otherwise. */
static void progress(const struct sweep *s, unsigned done, double started, unsigned point)
{
	if (s->args->run.quiet)
		return;
	g_autofree unsigned *choice = g_new0(unsigned, s->params->len);
	grid_point(param_list(s), s->params->len, point, choice);
	g_autofree char *where = point_text(s, choice);
	double elapsed = multirun_seconds() - started;
	char elapsed_text[32], eta_text[32] = "?";
	format_duration(elapsed, elapsed_text);
	if (done)
		format_duration(elapsed / done * (s->n_points - done), eta_text);
	if (!isatty(STDERR_FILENO)) {
		fprintf(stderr, "cowsim sweep: point %u of %u: %s (elapsed %s, eta %s)\n", done + 1, s->n_points,
			where, elapsed_text, eta_text);
		return;
	}
	enum { WIDTH = 30 };
	char bar[WIDTH + 1];
	unsigned filled = (unsigned)((uint64_t)done * WIDTH / s->n_points);
	for (unsigned i = 0; i < WIDTH; i++)
		bar[i] = i < filled ? '#' : '.';
	bar[WIDTH] = 0;
	fprintf(stderr, "\r[%s] %u/%u %s  %s elapsed, eta %s\033[K", bar, done, s->n_points, where,
		elapsed_text, eta_text);
}

/* Runs one point into s->summaries; returns an exit status (S3). */
static int run_point(struct sweep *s, unsigned point, const char *trace)
{
	const struct sweep_args *a = s->args;
	g_autoptr(GError) error = NULL;
	int run = multirun_run(trace, &s->configs[point], &a->run, NULL, &s->summaries[point], &error);
	if (run == EXIT_OK)
		return EXIT_OK; /* done, or ended by ENOSPC: a result */
	if (!a->run.quiet && isatty(STDERR_FILENO))
		fputc('\n', stderr);
	fprintf(stderr, "cowsim sweep: %s\n", error ? error->message : "failed");
	return run;
}

/* All points; stops at a malformed trace, a failed generator or a signal. */
static int run_all(struct sweep *s)
{
	struct order_entry *order = run_order(s);
	const char *generated = NULL;
	const char *trace = s->args->gen ? s->trace_tmp : s->args->rest[0];
	double started = multirun_seconds();
	int status = EXIT_OK;
	for (unsigned k = 0; k < s->n_points; k++) {
		const struct order_entry *e = &order[k];
		progress(s, k, started, e->point);
		if (e->command && (!generated || strcmp(generated, e->command))) {
			int gen_status = generate(s, e->command);
			if (gen_status != EXIT_OK) {
				status = gen_status;
				break;
			}
			generated = e->command;
		}
		int point_status = run_point(s, e->point, trace);
		if (point_status != EXIT_OK && point_status != EXIT_RUN_FAILED) {
			status = point_status;
			break;
		}
		if (point_status == EXIT_RUN_FAILED)
			status = EXIT_RUN_FAILED;
	}
	if (!s->args->run.quiet && isatty(STDERR_FILENO))
		fputc('\n', stderr);
	if (s->args->gen)
		g_unlink(s->trace_tmp);
	free_order(order, s->n_points);
	return status;
}

/* ---- the outputs ---------------------------------------------------------------- */

static RowsTable *make_table(const struct sweep *s)
{
	unsigned n = s->params->len;
	g_autofree struct rows_param *columns = g_new0(struct rows_param, n);
	for (unsigned i = 0; i < n; i++)
		columns[i] = (struct rows_param){ param_list(s)[i]->name, param_list(s)[i]->kind,
						  param_list(s)[i]->kind == RESULTS_CELL_U64 ? RESULTS_UNIT_COUNT
											     : RESULTS_UNIT_TEXT };
	RowsTable *table = rows_table_new(columns, n);
	g_autofree unsigned *choice = g_new0(unsigned, n);
	g_autofree ResultsCell *cells = g_new0(ResultsCell, n);
	for (unsigned point = 0; point < s->n_points; point++) {
		grid_point(param_list(s), n, point, choice);
		for (unsigned i = 0; i < n; i++) {
			const struct grid_param *p = param_list(s)[i];
			cells[i] = p->kind == RESULTS_CELL_U64
				? results_cell_u64(g_array_index(p->numbers, uint64_t, choice[i]))
				: results_cell_string(p->values->pdata[choice[i]]);
		}
		rows_table_add(table, cells, &s->summaries[point], &s->configs[point]);
	}
	return table;
}

/* Amplification against the first parameter, a line per value of the others
 * (stdlib + matplotlib; same settings as results/plot.py for S2). */
static const char plot_program[] =
	"import csv, sys\n"
	"import matplotlib\n"
	"matplotlib.use('Agg')\n"
	"matplotlib.rcParams['svg.hashsalt'] = 'cowsim'\n"
	"import matplotlib.pyplot as plt\n"
	"path, out, title, x = sys.argv[1:5]\n"
	"others = sys.argv[5:]\n"
	"with open(path, newline='', encoding='utf-8') as f:\n"
	"    rows = list(csv.DictReader(f))\n"
	"def num(t):\n"
	"    try:\n"
	"        return float(t)\n"
	"    except ValueError:\n"
	"        return None\n"
	"numeric = all(num(r[x]) is not None for r in rows)\n"
	"cats = {}\n"
	"for r in rows:\n"
	"    cats.setdefault(r[x], len(cats))\n"
	"lines = {}\n"
	"for r in rows:\n"
	"    key = ', '.join(p + '=' + r[p] for p in others)\n"
	"    pts = lines.setdefault(key, [])\n"
	"    if r['amplification'] != '':\n"
	"        pts.append((num(r[x]) if numeric else cats[r[x]], float(r['amplification'])))\n"
	"fig, ax = plt.subplots(figsize=(8, 5), dpi=100)\n"
	"for key, pts in lines.items():\n"
	"    pts.sort()\n"
	"    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker='o', markersize=4,\n"
	"            linewidth=1.5, label=key or 'amplification')\n"
	"xs = [num(r[x]) for r in rows] if numeric else []\n"
	"if numeric and min(xs) > 0 and max(xs) >= 16 * min(xs):\n"
	"    ax.set_xscale('log', base=2)\n"
	"if not numeric:\n"
	"    ax.set_xticks(range(len(cats)))\n"
	"    ax.set_xticklabels(list(cats), rotation=20 if len(cats) > 4 else 0)\n"
	"ax.set_xlabel(x)\n"
	"bases = sorted({r['base_mark'] for r in rows if r['base_mark']})\n"
	"ax.set_ylabel('amplification (final metadata / metadata at ' + (', '.join(bases) or '-') + ')')\n"
	"ax.set_title(title)\n"
	"ax.grid(True, linewidth=0.3)\n"
	"if others:\n"
	"    ax.legend()\n"
	"fig.tight_layout()\n"
	"fig.savefig(out + '.png', metadata={'Software': None})\n"
	"fig.savefig(out + '.svg', metadata={'Date': None})\n";

static int plot(const struct sweep *s, const char *csv)
{
	const char *python = g_getenv("COWSIM_PYTHON");
	if (!python || !*python)
		python = SWEEP_PYTHON;
	if (access(python, X_OK) != 0) {
		fprintf(stderr, "cowsim sweep: no plot: cannot run %s: %s (install python3-matplotlib); "
			"sweep.csv is written\n", python, g_strerror(errno));
		return EXIT_OK;
	}
	g_autofree char *out = g_build_filename(s->args->run.out, "sweep", NULL);
	g_autofree char *title = s->args->gen ? g_strdup_printf("sweep: %s", s->args->gen)
					      : g_strdup_printf("sweep: %s", s->args->rest[0]);
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_ptr_array_add(argv, (char *)python);
	g_ptr_array_add(argv, (char *)"-c");
	g_ptr_array_add(argv, (char *)plot_program);
	g_ptr_array_add(argv, (char *)csv);
	g_ptr_array_add(argv, out);
	g_ptr_array_add(argv, title);
	for (unsigned i = 0; i < s->params->len; i++)
		g_ptr_array_add(argv, param_list(s)[i]->name);
	g_ptr_array_add(argv, NULL);
	g_autoptr(GError) error = NULL;
	int wait_status = 0;
	fflush(stdout);
	fflush(stderr);
	if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &wait_status,
			  &error)) {
		fprintf(stderr, "cowsim sweep: no plot: cannot run %s: %s\n", python, error->message);
		return EXIT_OK;
	}
	if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
		fprintf(stderr, "cowsim sweep: the plot failed (%s)\n", python);
		return EXIT_RUN_FAILED;
	}
	return EXIT_OK;
}

static int write_outputs(const struct sweep *s)
{
	g_autoptr(RowsTable) table = make_table(s);
	g_autoptr(GError) error = NULL;
	g_autofree char *csv = g_build_filename(s->args->run.out, "sweep.csv", NULL);
	if (!rows_table_write_csv(table, csv, &error) ||
	    (!s->args->run.quiet && !rows_table_print(table, stdout, &error))) {
		fprintf(stderr, "cowsim sweep: %s\n", error->message);
		return EXIT_RUN_FAILED;
	}
	return plot(s, csv);
}

static int sweep(struct sweep_args *a)
{
	struct sweep s = { .args = a, .params = g_ptr_array_new_with_free_func((GDestroyNotify)grid_param_free) };
	g_autoptr(GError) error = NULL;
	int status = EXIT_BAD_INPUT;
	if (!parse_params(&s, &error) || !plan(&s, &error)) {
		fprintf(stderr, "cowsim sweep: %s\n", error->message);
		goto out;
	}
	if (multirun_make_out_dir("sweep", &a->run) != EXIT_OK) {
		status = EXIT_RUN_FAILED;
		goto out;
	}
	s.trace_tmp = g_build_filename(a->run.out, "sweep-trace.tmp", NULL);
	status = run_all(&s);
	if (status == EXIT_OK || status == EXIT_RUN_FAILED) {
		int written = write_outputs(&s);
		if (status == EXIT_OK)
			status = written;
	}
out:
	g_ptr_array_unref(s.params);
	for (unsigned i = 0; s.summaries && i < s.n_points; i++)
		rows_summary_clear(&s.summaries[i]);
	g_free(s.configs);
	g_free(s.summaries);
	g_free(s.trace_tmp);
	return status;
}

int cmd_sweep(int argc, char **argv)
{
	struct sweep_args args = { 0 };
	int status = parse_args(argc, argv, &args);
	if (status == EXIT_OK) {
		multirun_catch_signals();
		status = sweep(&args);
	}
	free_args(&args);
	return status;
}
