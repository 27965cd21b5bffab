/*
 * sim/cmd_compare.c - `cowsim compare TRACE --policies A,B --mounts X,Y`:
 * every atime policy under every mount option, on the same trace.
 *
 * How it works
 *   The combinations run one after the other, mounts outer and policies
 *   inner, each a fresh model replaying the whole trace (multirun.h multirun_run):
 *
 *     TRACE --> relatime x inline      --> DIR/relatime-inline.csv
 *           --> relatime x threshold:5% --> DIR/relatime-threshold-5pct.csv
 *           --> noatime x inline        --> DIR/noatime-inline.csv   ...
 *     summaries --> DIR/compare.csv, DIR/compare.md, the table on stdout
 *     the CSVs  --> cowsim plot (results/plot.py) --> DIR/compare.png (a panel
 *                   per mount), compare-bars, compare-ratio (over noatime),
 *                   compare-attribution and compare-free (.png and .svg)
 *
 *   Every configuration is checked (options and mkfs) before the first run,
 *   so a bad --policies or --mounts value costs nothing.  A run that fills
 *   the device (ENOSPC) is a result, not a failure: its line says "enospc"
 *   and the others go on (--keep-going lets it finish the trace instead).
 *
 * Invariants
 *   CM1  Same trace and options, same bytes in every file of DIR (the PNG too,
 *       as plot.py makes it); progress goes to stderr only.
 *   CM2  File names are the mount and the policy made name-safe
 *       (grid_safe_name) and are distinct, or compare refuses to start.
 *   CM3  Exit status: 0 every run done or ended by ENOSPC; 1 a run broke (a
 *       model invariant, an unwritable file) or the plot failed; 2 bad
 *       arguments or a malformed trace; 128+signal interrupted.
 */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "cli.h"
#include "commands.h"
#include "grid.h"
#include "multirun.h"
#include "options.h"
#include "provenance.h"
#include "rows.h"
#include "sweep_store.h"

#define COMPARE_DEFAULT_POLICIES "inline,side-table,threshold:5%,snapshot-aware"

struct compare_args {
	struct model_option_text model;
	struct multirun_args run;     /* --out, --base, --every, --keep-going, --quiet */
	char *policies;
	char *mounts;
	char *json;                   /* --json[=FILE]: "-" for stdout, NULL for none */
	char **rest;
	char **given;                 /* the arguments as given, for parameters.json */
	GArray *entries;              /* every option, for parameters.json (cli_take_entries) */
	char *trace_sha256;
};

/* One policy x mount combination. */
struct combination {
	const char *mount;
	const char *policy;
	struct fs_config config;
	char *csv;                    /* DIR/<mount>-<policy>.csv */
	char *label;                  /* "relatime/inline", for the plot's legend */
};

static void free_args(struct compare_args *a)
{
	options_model_text_clear(&a->model);
	multirun_args_clear(&a->run);
	g_free(a->policies);
	g_free(a->mounts);
	g_free(a->json);
	g_strfreev(a->rest);
	g_strfreev(a->given);
	if (a->entries)
		g_array_unref(a->entries);
	g_free(a->trace_sha256);
}

static const struct cli_doc compare_doc = {
	.command = "compare",
	.args = "TRACE",
	.summary = "Replays TRACE once per policy and mount option and compares final metadata,\n"
		   "amplification (final / first mark), atime updates, failed reads and staleness.",
	.notes = "Writes DIR/<mount>-<policy>.csv per run, DIR/compare.csv, DIR/compare.md,\n"
		 "DIR/parameters.json (cowsim's version and commit, the trace's sha256 and the\n"
		 "command that generated it, every option; docs/json.md) and the figures (PNG and\n"
		 "SVG): compare (metadata by mark, a panel per mount, a colour per policy),\n"
		 "compare-bars (final and growth), compare-ratio (over the same policy under\n"
		 "noatime), compare-attribution (metadata_by_*) and compare-free (unallocated\n"
		 "space, first ENOSPC marked). With --json the summary goes to stdout as JSON\n"
		 "and the table to stderr.",
	.examples = "  cowsim gen seed-experiment --from-dir /usr/include --snapshots 10 -o t.trace\n"
		    "  cowsim compare t.trace --policies inline,side-table,threshold:5%,snapshot-aware \\\n"
		    "      --mounts relatime,strictatime,noatime -o cmp\n"
		    "  cowsim report cmp -o cmp.html\n"
		    "  cowsim compare t.trace --mounts relatime,noatime --json -q | jq '.runs[].amplification'",
	.exits = "  0  done (a run ended by ENOSPC is a result)\n"
		 "  1  a run broke or the plot failed\n"
		 "  2  bad arguments or a malformed trace\n"
		 "  130/143  interrupted",
	.model_options = true,
};

static int parse_args(int argc, char **argv, struct compare_args *a)
{
	const GOptionEntry entries[] = {
		{ "policies", 'P', 0, G_OPTION_ARG_STRING, &a->policies,
		  "atime policies to compare (default " COMPARE_DEFAULT_POLICIES ")", "LIST" },
		{ "mounts", 'M', 0, G_OPTION_ARG_STRING, &a->mounts,
		  "mount options to compare, as relatime,strictatime,noatime; nodiratime and lazytime join the "
		  "mode before them (default relatime)", "LIST" },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->rest, NULL, NULL },
		{ NULL },
	};
	a->given = g_strdupv(argv + 1);
	g_autoptr(GOptionContext) context = cli_context_new(&compare_doc);
	cli_add_entries(context, entries);
	multirun_add_entries(context, &a->run, "folder for the CSVs, tables and plot (default cowsim-compare)");
	options_add_model_entries(context, &a->model);
	cli_add_json_entry(context, &a->json, "the summary as JSON (docs/json.md) on stdout (the table then goes to "
			   "stderr), or with =FILE to FILE");
	bool parsed = cli_parse(context, &compare_doc, &argc, &argv);
	a->entries = cli_take_entries(context);
	if (!parsed)
		return EXIT_BAD_INPUT;
	if (!a->policies) /* the defaults, for parameters.json */
		a->policies = g_strdup(COMPARE_DEFAULT_POLICIES);
	if (!a->mounts)
		a->mounts = g_strdup("relatime");
	if (!a->rest || !a->rest[0] || a->rest[1]) {
		fprintf(stderr, "cowsim compare: give exactly one TRACE (see 'cowsim compare --help')\n");
		return EXIT_BAD_INPUT;
	}
	if (a->model.policy || a->model.mount) {
		fprintf(stderr, "cowsim compare: --%s: compare takes lists, give --%s instead\n",
			a->model.policy ? "policy" : "mount", a->model.policy ? "policies" : "mounts");
		return EXIT_BAD_INPUT;
	}
	return multirun_check("compare", &a->run, a->rest[0], "cowsim-compare");
}

/* The configuration of one combination, checked down to mkfs. */
static bool combination_config(const struct compare_args *a, struct combination *c, GError **error)
{
	struct model_option_text text = a->model;
	text.mount = (char *)c->mount;
	text.policy = (char *)c->policy;
	if (!options_model_config(&text, &c->config, error))
		return false;
	g_autoptr(Filesystem) fs = fs_new(&c->config, error);
	return fs != NULL;
}

static void combinations_free(GArray *combinations)
{
	for (unsigned i = 0; i < combinations->len; i++) {
		struct combination *c = &g_array_index(combinations, struct combination, i);
		g_free(c->csv);
		g_free(c->label);
	}
	g_array_unref(combinations);
}

/* All combinations (CM2), or NULL with a message printed. */
static GArray *plan(const struct compare_args *a, GPtrArray *mounts, GPtrArray *policies)
{
	GArray *combinations = g_array_new(FALSE, TRUE, sizeof(struct combination));
	g_autoptr(GHashTable) names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (unsigned m = 0; m < mounts->len; m++) {
		for (unsigned p = 0; p < policies->len; p++) {
			struct combination c = { .mount = mounts->pdata[m], .policy = policies->pdata[p] };
			g_autoptr(GError) error = NULL;
			g_autofree char *safe_mount = grid_safe_name(c.mount);
			g_autofree char *safe_policy = grid_safe_name(c.policy);
			g_autofree char *name = g_strdup_printf("%s-%s.csv", safe_mount, safe_policy);
			c.csv = g_build_filename(a->run.out, name, NULL);
			c.label = g_strdelimit(g_strdup_printf("%s/%s", c.mount, c.policy), ",", '+');
			g_array_append_val(combinations, c);
			if (!combination_config(a, &g_array_index(combinations, struct combination,
								  combinations->len - 1), &error)) {
				fprintf(stderr, "cowsim compare: mount %s, policy %s: %s\n", c.mount, c.policy,
					error->message);
				combinations_free(combinations);
				return NULL;
			}
			if (!g_hash_table_add(names, g_steal_pointer(&name))) {
				fprintf(stderr, "cowsim compare: mount %s, policy %s: its file name %s is taken by "
					"another combination\n", c.mount, c.policy, c.csv);
				combinations_free(combinations);
				return NULL;
			}
		}
	}
	return combinations;
}

static void report_run(const struct compare_args *a, const struct combination *c, const struct rows_summary *s, double seconds)
{
	const struct fs_report *f = &s->outcome.final;
	fprintf(stderr, "cowsim compare: %s, %s: %s, metadata %.1f MiB", c->mount, c->policy,
		rows_status_name(s->outcome.status), f->space.metadata_used / 1048576.0);
	if (s->base_label && s->metadata_base)
		fprintf(stderr, " (x%.2f of %s)", (double)f->space.metadata_used / s->metadata_base, s->base_label);
	else
		fprintf(stderr, " (no base mark%s%s)", a->run.base ? " " : "", a->run.base ? a->run.base : "");
	fprintf(stderr, ", %.1f s\n", seconds);
}

/* Runs every combination into `table`; returns the exit status so far (CM3). */
static int run_all(const struct compare_args *a, GArray *combinations, RowsTable *table, bool *any_mark)
{
	int status = EXIT_OK;
	for (unsigned i = 0; i < combinations->len; i++) {
		const struct combination *c = &g_array_index(combinations, struct combination, i);
		if (!a->run.quiet)
			fprintf(stderr, "cowsim compare: run %u of %u: mount %s, policy %s\n", i + 1,
				combinations->len, c->mount, c->policy);
		g_autoptr(GError) error = NULL;
		struct rows_summary summary;
		double started = multirun_seconds();
		int run = multirun_run(a->rest[0], &c->config, &a->run, c->csv, &summary, &error);
		if (run != EXIT_OK && run != EXIT_RUN_FAILED) {
			rows_summary_clear(&summary);
			fprintf(stderr, "cowsim compare: %s\n", error ? error->message : "failed");
			return run;
		}
		if (error && (run == EXIT_RUN_FAILED || !a->run.quiet)) /* ENOSPC (a result) or a broken run */
			fprintf(stderr, "cowsim compare: %s, %s: %s\n", c->mount, c->policy, error->message);
		if (run == EXIT_RUN_FAILED)
			status = EXIT_RUN_FAILED;
		if (!a->run.quiet)
			report_run(a, c, &summary, multirun_seconds() - started);
		ResultsCell params[] = { results_cell_string(c->mount), results_cell_string(c->policy) };
		rows_table_add(table, params, &summary, &c->config);
		*any_mark = *any_mark || summary.marks > 0;
		rows_summary_clear(&summary);
	}
	return status;
}

/* `cowsim plot --kind KIND ... -o DIR/NAME` over every combination's CSV
 * (cmd_plot.c finds plot.py); `extra` ends with NULL. */
static int plot_kind(const struct compare_args *a, GArray *combinations, const char *name, const char *kind,
		     const char *title, const char *const *extra)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(argv, g_strdup("plot"));
	if (!strcmp(kind, "bars")) {
		g_ptr_array_add(argv, g_build_filename(a->run.out, "compare.csv", NULL));
	} else {
		for (unsigned i = 0; i < combinations->len; i++) {
			const struct combination *c = &g_array_index(combinations, struct combination, i);
			g_ptr_array_add(argv, g_strdup(c->csv));
			g_ptr_array_add(argv, g_strdup_printf("--label=%s", c->label));
		}
		g_ptr_array_add(argv, g_strdup("--keys=mount,policy"));
	}
	g_ptr_array_add(argv, g_strdup_printf("--kind=%s", kind));
	g_ptr_array_add(argv, g_strdup("-o"));
	g_ptr_array_add(argv, g_build_filename(a->run.out, name, NULL));
	g_ptr_array_add(argv, g_strdup_printf("--title=%s", title));
	for (size_t i = 0; extra[i]; i++)
		g_ptr_array_add(argv, g_strdup(extra[i]));
	return cmd_plot((int)argv->len, (char **)argv->pdata);
}

/* How many combinations run under `mount` (grid order keeps them apart). */
static unsigned count_mount(GArray *combinations, const char *mount)
{
	unsigned n = 0;
	for (unsigned i = 0; i < combinations->len; i++)
		n += !strcmp(g_array_index(combinations, struct combination, i).mount, mount);
	return n;
}

/* The figures of DIR (results/plot.py draws each):
 *   compare.png            metadata_used by mark, a panel per mount, a colour per policy
 *   compare-bars.png       final metadata and growth since the base mark per policy x mount
 *   compare-ratio.png      each run over the same policy under noatime (when noatime ran)
 *   compare-attribution.png  metadata_by_* stacked, a panel per run
 *   compare-free.png       unallocated device space over the trace, first ENOSPC marked */
static int plot(const struct compare_args *a, GArray *combinations, bool any_mark)
{
	if (!any_mark) {
		fprintf(stderr, "cowsim compare: no plot: no run reached a mark of the trace\n");
		return EXIT_OK;
	}
	g_autofree char *base = g_path_get_basename(a->rest[0]);
	g_autofree char *curves_title = g_strdup_printf("metadata_used by mark: %s", base);
	g_autofree char *bars_title = g_strdup_printf("final metadata and growth: %s", base);
	g_autofree char *ratio_title = g_strdup_printf("metadata_used over the same policy under noatime: %s", base);
	g_autofree char *stack_title = g_strdup_printf("metadata_used by the kind of op that allocated it: %s", base);
	g_autofree char *free_title = g_strdup_printf("unallocated device space: %s", base);
	const char *const by_mount[] = { "--x=mark", "--panel-by=mount", NULL };
	const char *const by_mark[] = { "--x=mark", NULL };
	const char *const ratio[] = { "--x=mark", "--panel-by=mount", "--baseline=mount=noatime", NULL };
	const char *const none[] = { NULL };
	const char *const free_space[] = { "--panel-by=mount", NULL };
	int status = plot_kind(a, combinations, "compare", "curves", curves_title, by_mount);
	if (status == EXIT_SKIPPED) {
		fprintf(stderr, "cowsim compare: no plot (see above); the CSVs and tables are written\n");
		return EXIT_OK;
	}
	if (status == EXIT_OK)
		status = plot_kind(a, combinations, "compare-bars", "bars", bars_title, none);
	unsigned noatime = count_mount(combinations, "noatime");
	if (status == EXIT_OK && noatime && noatime < combinations->len) /* a baseline and a run to divide */
		status = plot_kind(a, combinations, "compare-ratio", "ratio", ratio_title, ratio);
	if (status == EXIT_OK)
		status = plot_kind(a, combinations, "compare-attribution", "stack", stack_title, by_mark);
	if (status == EXIT_OK)
		status = plot_kind(a, combinations, "compare-free", "free", free_title, free_space);
	return status == EXIT_OK ? EXIT_OK : EXIT_RUN_FAILED;
}

static int write_tables(const struct compare_args *a, const RowsTable *table)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *csv = g_build_filename(a->run.out, "compare.csv", NULL);
	g_autofree char *md = g_build_filename(a->run.out, "compare.md", NULL);
	if (!rows_table_write_csv(table, csv, &error) || !rows_table_write_markdown(table, md, &error)) {
		fprintf(stderr, "cowsim compare: %s\n", error->message);
		return EXIT_RUN_FAILED;
	}
	/* CLI1: a JSON summary on stdout leaves the table to stderr */
	if (!a->run.quiet && !rows_table_print(table, cli_is_stdio(a->json) ? stderr : stdout, &error)) {
		fprintf(stderr, "cowsim compare: %s\n", error->message);
		return EXIT_RUN_FAILED;
	}
	return EXIT_OK;
}

static struct provenance provenance_of(struct compare_args *a)
{
	return (struct provenance){ .command = "compare", .argv = a->given, .entries = a->entries,
				    .trace = a->rest[0], .trace_sha256 = a->trace_sha256 };
}

/* DIR/parameters.json: what produced the folder (provenance.h); the trace's
 * sha256 is kept for the --json summary. */
static int write_parameters(struct compare_args *a, GArray *combinations)
{
	g_autoptr(GError) error = NULL;
	if (!(a->trace_sha256 = sweep_store_file_sha256(a->rest[0], &error))) {
		fprintf(stderr, "cowsim compare: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	struct provenance p = provenance_of(a);
	ResultsJson *w = provenance_begin(&p, PROVENANCE_PARAMETERS_SCHEMA, &error);
	if (!w) {
		fprintf(stderr, "cowsim compare: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	/* The runs share every model value but their mount and policy. */
	provenance_model(w, "model", &g_array_index(combinations, struct combination, 0).config, false);
	results_json_begin_array(w, "runs");
	for (unsigned i = 0; i < combinations->len; i++) {
		const struct combination *c = &g_array_index(combinations, struct combination, i);
		g_autofree char *csv = g_path_get_basename(c->csv);
		results_json_begin_object(w, NULL);
		results_json_string(w, "mount", c->mount);
		results_json_string(w, "policy", c->policy);
		results_json_string(w, "csv", csv);
		results_json_end(w);
	}
	results_json_end(w);
	results_json_end(w);
	g_autofree char *path = g_build_filename(a->run.out, PROVENANCE_PARAMETERS_FILE, NULL);
	return provenance_write(w, "compare", path) ? EXIT_OK : EXIT_RUN_FAILED;
}

/* --json: the summary lines of compare.csv, each with its run's CSV, after
 * the provenance head; `status` is the exit status compare ends with. */
static int write_json(struct compare_args *a, GArray *combinations, const RowsTable *table, int status)
{
	struct provenance p = provenance_of(a);
	ResultsJson *w = provenance_summary_begin(&p, "cowsim-compare-summary/1", a->run.out, status);
	if (!w)
		return EXIT_RUN_FAILED;
	results_json_begin_array(w, "runs");
	for (unsigned r = 0; r < rows_table_n_rows(table); r++) {
		const struct combination *c = &g_array_index(combinations, struct combination, r);
		results_json_begin_object(w, NULL);
		rows_table_json_line(table, r, w);
		results_json_string(w, "csv", c->csv);
		results_json_end(w);
	}
	results_json_end(w);
	results_json_end(w);
	return provenance_write(w, "compare", a->json) ? status : EXIT_RUN_FAILED;
}

static int compare(struct compare_args *a)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) policies = grid_split_list("policy", a->policies ? a->policies
									     : COMPARE_DEFAULT_POLICIES, &error);
	g_autoptr(GPtrArray) mounts = policies ? grid_split_list("mount", a->mounts ? a->mounts : "relatime",
								 &error) : NULL;
	if (!mounts) {
		fprintf(stderr, "cowsim compare: --%s: %s\n", policies ? "mounts" : "policies", error->message);
		return EXIT_BAD_INPUT;
	}
	GArray *combinations = plan(a, mounts, policies);
	if (!combinations)
		return EXIT_BAD_INPUT;
	int status = multirun_make_out_dir("compare", &a->run);
	if (status == EXIT_OK)
		status = write_parameters(a, combinations);
	if (status != EXIT_OK) {
		combinations_free(combinations);
		return status;
	}
	const struct rows_param params[] = {
		{ "mount", RESULTS_CELL_STRING, RESULTS_UNIT_TEXT },
		{ "policy", RESULTS_CELL_STRING, RESULTS_UNIT_TEXT },
	};
	g_autoptr(RowsTable) table = rows_table_new(params, G_N_ELEMENTS(params));
	bool any_mark = false;
	status = run_all(a, combinations, table, &any_mark);
	if (status == EXIT_OK || status == EXIT_RUN_FAILED) {
		int written = write_tables(a, table);
		int plotted = written == EXIT_OK ? plot(a, combinations, any_mark) : EXIT_RUN_FAILED;
		if (status == EXIT_OK)
			status = written != EXIT_OK ? written : plotted;
		if (a->json)
			status = write_json(a, combinations, table, status);
	}
	combinations_free(combinations);
	return status;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_args args = { 0 };
	int status = parse_args(argc, argv, &args);
	if (status == EXIT_OK) {
		multirun_catch_signals();
		status = compare(&args);
	}
	free_args(&args);
	return status;
}
