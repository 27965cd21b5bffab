/*
 * sim/cmd_compare.c - `cowsim compare TRACE --policies A,B --mounts X,Y`:
 * every atime policy under every mount option, on the same trace; with
 * --designs D1,D2 under every snapshot design too.
 *
 * How it works
 *   The combinations run one after the other, mounts outer and policies
 *   inner, each a fresh model replaying the whole trace (multirun.h multirun_run):
 *
 *     TRACE --> relatime x inline      --> DIR/relatime-inline.csv
 *           --> relatime x threshold:5% --> DIR/relatime-threshold-5pct.csv
 *           --> noatime x inline        --> DIR/noatime-inline.csv   ...
 *     summaries --> DIR/compare.csv, DIR/compare.md, the table on stdout
 *
 *   --designs adds the outermost axis: DIR/<design>-<mount>-<policy>.csv, a
 *   design column first in compare.csv, and the figures a panel per design
 *   (small multiples) instead of a panel per mount. Without --designs every
 *   file is what it was before the option existed.
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
 *   CM2  File names are the design (with --designs), the mount and the
 *       policy made name-safe (grid_safe_name) and are distinct, or compare
 *       refuses to start.
 *   CM3  Exit status: 0 every run done or ended by ENOSPC; 1 a run broke (a
 *       model invariant, a file the disk filled under) or the plot failed; 2
 *       bad arguments, a malformed trace, a --base no mark has (MR3) or a DIR
 *       that cannot be made (CLI2); 128+signal interrupted.
 *   CM4  DIR holds one compare's files, never a mix (MR4): every file is
 *       written into DIR/.compare-tmp-XXXXXX and moved onto its name only
 *       once the runs, the tables and parameters.json are written (a figure
 *       that fails to draw is then only missing); files of an earlier
 *       compare this one did not write (its figures, the run CSVs its
 *       parameters.json lists, report's report.html of them) are removed
 *       then. A signal, a run stopped
 *       by bad input or a disk that fills before that removes the stage: DIR
 *       as it was (and gone again if this compare made it).
 *   CM5  parameters.json names the sha256 of compare.csv and of each run's
 *       CSV, and is moved in last: report refuses a folder whose files are
 *       not the ones it lists (cmd_report.c RP6).
 */
#include <stddef.h>
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
/* With --designs: the policy every design takes (the side table needs a
 * tree per subvolume beside the items, which not every design has). */
#define COMPARE_DEFAULT_DESIGN_POLICIES "inline"

struct compare_args {
	struct model_option_text model;
	struct multirun_args run;     /* --out, --base, --every, --keep-going, --quiet */
	char *policies;
	char *mounts;
	char *designs;                /* --designs LIST; NULL: the one --design */
	char *json;                   /* --json[=FILE]: "-" for stdout, NULL for none */
	char **rest;
	char **given;                 /* the arguments as given, for parameters.json */
	GArray *entries;              /* every option, for parameters.json (cli_take_entries) */
	char *trace_sha256;
	struct multirun_stage stage;  /* CM4: where DIR's files are written until the commit */
};

/* One (design x) policy x mount combination. */
struct combination {
	const char *design;           /* NULL without --designs */
	const char *mount;
	const char *policy;
	struct fs_config config;
	char *csv;                    /* DIR/[<design>-]<mount>-<policy>.csv */
	char *staged;                 /* the same name in the stage, where the run writes it (CM4) */
	char *label;                  /* "[zfs/]relatime/inline", for the plot's legend */
};

static void free_args(struct compare_args *a)
{
	options_model_text_clear(&a->model);
	multirun_args_clear(&a->run);
	g_free(a->policies);
	g_free(a->mounts);
	g_free(a->designs);
	g_free(a->json);
	g_strfreev(a->rest);
	g_strfreev(a->given);
	if (a->entries)
		g_array_unref(a->entries);
	g_free(a->trace_sha256);
	multirun_stage_clear(&a->stage);
}

static const struct cli_doc compare_doc = {
	.command = "compare",
	.args = "TRACE",
	.summary = "Replays TRACE once per policy and mount option (and snapshot design, with\n"
		   "--designs) and compares final metadata, amplification (final / first mark),\n"
		   "atime updates, failed reads and staleness.",
	.notes = "Writes DIR/<mount>-<policy>.csv per run, DIR/compare.csv, DIR/compare.md,\n"
		 "DIR/parameters.json (cowsim's version and commit, the trace's sha256 and the\n"
		 "command that generated it, every option; docs/json.md) and the figures (PNG and\n"
		 "SVG): compare (metadata by mark, a panel per mount, a colour per policy),\n"
		 "compare-bars (final and growth), compare-ratio (over the same policy under\n"
		 "noatime), compare-attribution (metadata_by_*) and compare-free (unallocated\n"
		 "space, first ENOSPC marked). With --json the summary goes to stdout as JSON\n"
		 "and the table to stderr. With --designs the files are\n"
		 "DIR/<design>-<mount>-<policy>.csv, compare.csv starts with a design column and each\n"
		 "figure has a panel per design (policies default to inline there).\n\n"
		 "DIR changes only when the compare ends: its files are written to\n"
		 "DIR/.compare-tmp-XXXXXX and moved in when every run, table and\n"
		 "parameters.json is written; then the files of an earlier compare there that\n"
		 "this one did not write (a figure such as compare-ratio, the run CSVs its\n"
		 "parameters.json lists) are removed. Interrupted, or on a full disk, DIR is\n"
		 "left as it was (a compare killed with SIGKILL may leave the hidden folder).",
	.examples = "  cowsim gen seed-experiment --from-dir /usr/include --snapshots 10 -o t.trace\n"
		    "  cowsim compare t.trace --policies inline,side-table,threshold:5%,snapshot-aware \\\n"
		    "      --mounts relatime,strictatime,noatime -o cmp\n"
		    "  cowsim report cmp -o cmp.html\n"
		    "  cowsim gen backup-rotation --from-dir /usr/include --readonly -o rot.trace\n"
		    "  cowsim compare rot.trace --designs btrfs,keyed,zfs --mounts relatime,noatime -o rot\n"
		    "  cowsim compare t.trace --mounts relatime,noatime --json -q | jq '.runs[].amplification'",
	.exits = "  0  done (a run ended by ENOSPC is a result; with no Python, no figures)\n"
		 "  1  a run broke, the disk filled under DIR (DIR as it was), or the plot failed\n"
		 "  2  bad arguments, a malformed trace (read through before DIR is touched), a\n"
		 "     --base that is no mark of the trace, or a DIR that cannot be made\n"
		 "  130/143  interrupted (DIR as it was)",
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
		{ "designs", 0, 0, G_OPTION_ARG_STRING, &a->designs,
		  "snapshot designs to compare, as btrfs,keyed,zfs: each runs every policy and mount; a panel per "
		  "design in the figures", "LIST" },
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
		a->policies = g_strdup(a->designs ? COMPARE_DEFAULT_DESIGN_POLICIES : COMPARE_DEFAULT_POLICIES);
	if (!a->mounts)
		a->mounts = g_strdup("relatime");
	if (!a->rest || !a->rest[0] || a->rest[1]) {
		fprintf(stderr, "cowsim compare: give exactly one TRACE (see 'cowsim compare --help')\n");
		return EXIT_BAD_INPUT;
	}
	if (a->model.policy || a->model.mount || (a->model.design && a->designs)) {
		unsigned which = a->model.policy ? 0 : a->model.mount ? 1 : 2;
		static const char *const one[] = { "policy", "mount", "design" };
		static const char *const list[] = { "policies", "mounts", "designs" };
		fprintf(stderr, "cowsim compare: --%s: compare takes lists, give --%s instead\n", one[which],
			list[which]);
		return EXIT_BAD_INPUT;
	}
	int status = multirun_check("compare", &a->run, a->rest[0], "cowsim-compare");
	return status == EXIT_OK ? multirun_check_trace("compare", a->rest[0], a->run.base) : status;
}

/* The configuration of one combination, checked down to mkfs. */
static bool combination_config(const struct compare_args *a, struct combination *c, GError **error)
{
	struct model_option_text text = a->model;
	text.mount = (char *)c->mount;
	text.policy = (char *)c->policy;
	if (c->design)
		text.design = (char *)c->design;
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
		g_free(c->staged);
		g_free(c->label);
	}
	g_array_unref(combinations);
}

/* "design zfs, mount relatime, policy inline" for messages. */
static char *combination_name(const struct combination *c)
{
	return g_strdup_printf("%s%s%smount %s, policy %s", c->design ? "design " : "", c->design ? c->design : "",
			       c->design ? ", " : "", c->mount, c->policy);
}

/* Adds one combination (CM2); false with a message printed. */
static bool plan_one(const struct compare_args *a, GArray *combinations, GHashTable *names, struct combination c)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *safe_design = c.design ? grid_safe_name(c.design) : NULL;
	g_autofree char *safe_mount = grid_safe_name(c.mount);
	g_autofree char *safe_policy = grid_safe_name(c.policy);
	g_autofree char *name = g_strdup_printf("%s%s%s-%s.csv", c.design ? safe_design : "", c.design ? "-" : "",
						safe_mount, safe_policy);
	g_autofree char *what = combination_name(&c);
	c.csv = g_build_filename(a->run.out, name, NULL);
	c.label = g_strdelimit(g_strdup_printf("%s%s%s/%s", c.design ? c.design : "", c.design ? "/" : "", c.mount,
					       c.policy), ",", '+');
	g_array_append_val(combinations, c);
	if (!combination_config(a, &g_array_index(combinations, struct combination, combinations->len - 1),
				&error)) {
		fprintf(stderr, "cowsim compare: %s: %s\n", what, error->message);
		return false;
	}
	if (!g_hash_table_add(names, g_steal_pointer(&name))) {
		fprintf(stderr, "cowsim compare: %s: its file name %s is taken by another combination\n", what, c.csv);
		return false;
	}
	return true;
}

/* All combinations, designs outermost (CM2), or NULL with a message
 * printed. `designs` NULL: the one design of the model options. */
static GArray *plan(const struct compare_args *a, GPtrArray *designs, GPtrArray *mounts, GPtrArray *policies)
{
	GArray *combinations = g_array_new(FALSE, TRUE, sizeof(struct combination));
	g_autoptr(GHashTable) names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (unsigned d = 0; d < (designs ? designs->len : 1); d++)
		for (unsigned m = 0; m < mounts->len; m++)
			for (unsigned p = 0; p < policies->len; p++) {
				struct combination c = { .design = designs ? designs->pdata[d] : NULL,
							 .mount = mounts->pdata[m], .policy = policies->pdata[p] };
				if (!plan_one(a, combinations, names, c)) {
					combinations_free(combinations);
					return NULL;
				}
			}
	return combinations;
}

/* "zfs, relatime, inline" (the design only with --designs), for progress. */
static char *combination_short_name(const struct combination *c)
{
	return g_strdup_printf("%s%s%s, %s", c->design ? c->design : "", c->design ? ", " : "", c->mount, c->policy);
}

static void report_run(const struct compare_args *a, const struct combination *c, const struct rows_summary *s, double seconds)
{
	const struct fs_report *f = &s->outcome.final;
	g_autofree char *name = combination_short_name(c);
	fprintf(stderr, "cowsim compare: %s: %s, metadata %.1f MiB", name,
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
		if (multirun_interrupted) /* between two runs */
			return multirun_interrupted_status();
		const struct combination *c = &g_array_index(combinations, struct combination, i);
		g_autofree char *what = combination_name(c);
		g_autofree char *name = combination_short_name(c);
		if (!a->run.quiet)
			fprintf(stderr, "cowsim compare: run %u of %u: %s\n", i + 1, combinations->len, what);
		g_autoptr(GError) error = NULL;
		struct rows_summary summary;
		double started = multirun_seconds();
		int run = multirun_run(a->rest[0], &c->config, &a->run, c->staged, &summary, &error);
		if (run != EXIT_OK && run != EXIT_RUN_FAILED) {
			rows_summary_clear(&summary);
			fprintf(stderr, "cowsim compare: %s\n", error ? error->message : "failed");
			return run;
		}
		if (error && (run == EXIT_RUN_FAILED || !a->run.quiet)) /* ENOSPC (a result) or a broken run */
			fprintf(stderr, "cowsim compare: %s: %s\n", name, error->message);
		if (run == EXIT_RUN_FAILED)
			status = EXIT_RUN_FAILED;
		if (!a->run.quiet)
			report_run(a, c, &summary, multirun_seconds() - started);
		ResultsCell params[] = { results_cell_string(c->design), results_cell_string(c->mount),
					 results_cell_string(c->policy) };
		rows_table_add(table, c->design ? params : params + 1, &summary, &c->config); /* the design with --designs */
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
		g_ptr_array_add(argv, multirun_stage_file(&a->stage, "compare.csv"));
	} else {
		for (unsigned i = 0; i < combinations->len; i++) {
			const struct combination *c = &g_array_index(combinations, struct combination, i);
			g_ptr_array_add(argv, g_strdup(c->staged));
			g_ptr_array_add(argv, g_strdup_printf("--label=%s", c->label));
		}
		bool designs = g_array_index(combinations, struct combination, 0).design != NULL;
		g_ptr_array_add(argv, g_strdup(designs ? "--keys=design,mount,policy" : "--keys=mount,policy"));
	}
	g_ptr_array_add(argv, g_strdup_printf("--kind=%s", kind));
	g_ptr_array_add(argv, g_strdup("-o"));
	g_ptr_array_add(argv, multirun_stage_file(&a->stage, name));
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

/* How many distinct values the combinations take for a field (mount or
 * policy: offsetof into struct combination). */
static unsigned count_values(GArray *combinations, size_t field)
{
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
	for (unsigned i = 0; i < combinations->len; i++)
		g_hash_table_add(seen, *(char **)((char *)&g_array_index(combinations, struct combination, i) + field));
	return g_hash_table_size(seen);
}

/* The figures' layout (plot.py's keys): without --designs a panel per
 * mount and a colour per policy; with --designs a panel per design, a
 * colour per policy, a dash per mount. */
struct layout {
	const char *const *curves, *const *ratio, *const *free_space, *const *bars;
	bool bars_drawn;              /* compare-bars has two keys: design and the one list of several */
};

static struct layout layout_of(GArray *combinations)
{
	static const char *const by_mount[] = { "--x=mark", "--panel-by=mount", NULL };
	static const char *const ratio[] = { "--x=mark", "--panel-by=mount", "--baseline=mount=noatime", NULL };
	static const char *const free_space[] = { "--panel-by=mount", NULL };
	static const char *const none[] = { NULL };
	static const char *const by_design[] = { "--x=mark", "--panel-by=design", "--colour-by=policy",
						 "--style-by=mount", NULL };
	static const char *const design_ratio[] = { "--x=mark", "--panel-by=design", "--colour-by=policy",
						    "--style-by=mount", "--baseline=mount=noatime", NULL };
	static const char *const design_free[] = { "--panel-by=design", "--colour-by=policy", "--style-by=mount",
						   NULL };
	static const char *const bars_by_policy[] = { "--style-by=design", "--colour-by=policy", NULL };
	static const char *const bars_by_mount[] = { "--style-by=design", "--colour-by=mount", NULL };
	if (!g_array_index(combinations, struct combination, 0).design)
		return (struct layout){ by_mount, ratio, free_space, none, true };
	unsigned mounts = count_values(combinations, offsetof(struct combination, mount));
	unsigned policies = count_values(combinations, offsetof(struct combination, policy));
	return (struct layout){ by_design, design_ratio, design_free,
				mounts > 1 && policies == 1 ? bars_by_mount : bars_by_policy,
				mounts == 1 || policies == 1 };
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
	const char *const by_mark[] = { "--x=mark", NULL };
	struct layout l = layout_of(combinations);
	int status = plot_kind(a, combinations, "compare", "curves", curves_title, l.curves);
#define NEXT_FIGURE (status == EXIT_OK && !multirun_interrupted) /* a signal ends the figures (CM4) */
	if (status == EXIT_SKIPPED) {
		fprintf(stderr, "cowsim compare: no plot (see above); the CSVs and tables are written\n");
		return EXIT_OK;
	}
	if (NEXT_FIGURE && l.bars_drawn)
		status = plot_kind(a, combinations, "compare-bars", "bars", bars_title, l.bars);
	else if (status == EXIT_OK && !a->run.quiet)
		fprintf(stderr, "cowsim compare: no compare-bars: several designs, mounts and policies at once "
			"(compare.csv has them)\n");
	unsigned noatime = count_mount(combinations, "noatime");
	if (NEXT_FIGURE && noatime && noatime < combinations->len) /* a baseline and a run to divide */
		status = plot_kind(a, combinations, "compare-ratio", "ratio", ratio_title, l.ratio);
	if (NEXT_FIGURE)
		status = plot_kind(a, combinations, "compare-attribution", "stack", stack_title, by_mark);
	if (NEXT_FIGURE)
		status = plot_kind(a, combinations, "compare-free", "free", free_title, l.free_space);
#undef NEXT_FIGURE
	return status == EXIT_OK ? EXIT_OK : EXIT_RUN_FAILED;
}

static int write_tables(const struct compare_args *a, const RowsTable *table)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *csv = multirun_stage_file(&a->stage, "compare.csv");
	g_autofree char *md = multirun_stage_file(&a->stage, "compare.md");
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

/* The trace's sha256, for parameters.json and the --json summary, taken
 * before the runs (a trace that cannot be read is bad input). */
static int hash_trace(struct compare_args *a)
{
	g_autoptr(GError) error = NULL;
	if (!(a->trace_sha256 = sweep_store_file_sha256(a->rest[0], &error))) {
		fprintf(stderr, "cowsim compare: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	return EXIT_OK;
}

/* "sha256": the hash of the staged file NAME, null when it was not written. */
static void json_file_sha256(ResultsJson *w, const struct compare_args *a, const char *key, const char *name)
{
	g_autofree char *path = multirun_stage_file(&a->stage, name);
	g_autofree char *sha256 = sweep_store_file_sha256(path, NULL);
	if (sha256)
		results_json_string(w, key, sha256);
	else
		results_json_null(w, key);
}

/* DIR/parameters.json: what produced the folder (provenance.h), with the
 * sha256 of compare.csv and of each run's CSV (CM5), so report can tell the
 * folder's files belong together. Written after them, into the stage. */
static int write_parameters(struct compare_args *a, GArray *combinations)
{
	g_autoptr(GError) error = NULL;
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
		if (c->design)
			results_json_string(w, "design", c->design);
		results_json_string(w, "mount", c->mount);
		results_json_string(w, "policy", c->policy);
		results_json_string(w, "csv", csv);
		json_file_sha256(w, a, "sha256", csv);
		results_json_end(w);
	}
	results_json_end(w);
	results_json_begin_object(w, "summary");
	results_json_string(w, "csv", "compare.csv");
	json_file_sha256(w, a, "sha256", "compare.csv");
	results_json_end(w);
	results_json_end(w);
	g_autofree char *path = multirun_stage_file(&a->stage, PROVENANCE_PARAMETERS_FILE);
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

/* The files of DIR a compare writes (per-run CSVs aside), and report's
 * page of them: an earlier compare's that this one does not write again are
 * removed at the commit (CM4), so no figure or page outlives the data it was
 * drawn from (`cowsim report DIR` draws the page again). */
static const char *const compare_files[] = {
	"compare.csv", "compare.md", PROVENANCE_PARAMETERS_FILE, "compare.png", "compare.svg", "compare-bars.png",
	"compare-bars.svg", "compare-ratio.png", "compare-ratio.svg", "compare-attribution.png",
	"compare-attribution.svg", "compare-free.png", "compare-free.svg", "report.html", NULL,
};

/* compare_files and the run CSVs the folder's parameters.json lists (plain
 * names only: a hand-edited "../x" removes nothing outside DIR). */
static GStrv stale_files(const char *dir)
{
	g_autoptr(GStrvBuilder) names = g_strv_builder_new();
	g_strv_builder_addv(names, (const char **)compare_files);
	g_autofree char *path = g_build_filename(dir, PROVENANCE_PARAMETERS_FILE, NULL);
	g_autofree char *text = NULL;
	g_file_get_contents(path, &text, NULL, NULL);
	g_autoptr(GPtrArray) runs = multirun_parameters_objects(text, "runs");
	for (unsigned i = 0; runs && i < runs->len; i++) {
		const char *csv = g_hash_table_lookup(runs->pdata[i], "csv");
		if (csv && !strchr(csv, '/') && g_str_has_suffix(csv, ".csv") && csv[0] != '.')
			g_strv_builder_add(names, csv);
	}
	return g_strv_builder_end(names);
}

/* CM4: every file of this compare onto its name in DIR, parameters.json
 * last (until then the old one, whose sha256s do not match the new files,
 * tells report the folder is mixed); then the earlier compare's leftovers go. */
static int commit(struct compare_args *a)
{
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) stale = stale_files(a->run.out);
	const char *const last[] = { PROVENANCE_PARAMETERS_FILE, NULL };
	if (multirun_stage_commit(&a->stage, last, (const char *const *)stale, &error))
		return EXIT_OK;
	fprintf(stderr, "cowsim compare: %s\n", error->message);
	return EXIT_RUN_FAILED;
}

/* The combinations' CSVs in the stage (CM4). */
static void stage_runs(struct compare_args *a, GArray *combinations)
{
	for (unsigned i = 0; i < combinations->len; i++) {
		struct combination *c = &g_array_index(combinations, struct combination, i);
		g_autofree char *name = g_path_get_basename(c->csv);
		c->staged = multirun_stage_file(&a->stage, name);
	}
}

/* The runs, the tables, parameters.json and the figures, into the stage;
 * the exit status so far (CM3). `*whole`: every data file is written (the
 * figures may have failed), so the stage may replace DIR's files. */
static int run_into_stage(struct compare_args *a, GArray *combinations, RowsTable *table, bool *whole)
{
	bool any_mark = false;
	int status = run_all(a, combinations, table, &any_mark);
	if (status != EXIT_OK && status != EXIT_RUN_FAILED)
		return status;
	int written = write_tables(a, table);
	if (written == EXIT_OK)
		written = write_parameters(a, combinations);
	*whole = written == EXIT_OK && !multirun_interrupted;
	int plotted = *whole ? plot(a, combinations, any_mark) : EXIT_OK;
	if (multirun_interrupted)
		return multirun_interrupted_status();
	if (status == EXIT_OK)
		status = written != EXIT_OK ? written : plotted;
	return status;
}

static int compare(struct compare_args *a)
{
	g_autoptr(GError) error = NULL;
	const char *policy_list = a->policies ? a->policies
			      : a->designs ? COMPARE_DEFAULT_DESIGN_POLICIES : COMPARE_DEFAULT_POLICIES;
	g_autoptr(GPtrArray) policies = grid_split_list("policy", policy_list, &error);
	g_autoptr(GPtrArray) mounts = policies ? grid_split_list("mount", a->mounts ? a->mounts : "relatime",
								 &error) : NULL;
	g_autoptr(GPtrArray) designs = mounts && a->designs ? grid_split_list("design", a->designs, &error) : NULL;
	if (!mounts || (a->designs && !designs)) {
		fprintf(stderr, "cowsim compare: --%s: %s\n", !policies ? "policies" : !mounts ? "mounts" : "designs",
			error->message);
		return EXIT_BAD_INPUT;
	}
	GArray *combinations = plan(a, designs, mounts, policies);
	if (!combinations)
		return EXIT_BAD_INPUT;
	int status = hash_trace(a);
	if (status == EXIT_OK)
		status = multirun_stage_open("compare", &a->run, &a->stage);
	if (status != EXIT_OK) {
		combinations_free(combinations);
		return status;
	}
	stage_runs(a, combinations);
	const struct rows_param params[] = {
		{ "design", RESULTS_CELL_STRING, RESULTS_UNIT_TEXT },
		{ "mount", RESULTS_CELL_STRING, RESULTS_UNIT_TEXT },
		{ "policy", RESULTS_CELL_STRING, RESULTS_UNIT_TEXT },
	};
	/* The design column with --designs only (files as before without). */
	g_autoptr(RowsTable) table = designs ? rows_table_new(params, G_N_ELEMENTS(params))
					     : rows_table_new(params + 1, G_N_ELEMENTS(params) - 1);
	bool whole = false;
	status = run_into_stage(a, combinations, table, &whole);
	bool moving = whole && status <= EXIT_BAD_INPUT;
	int committed = moving ? commit(a) : EXIT_RUN_FAILED;
	if (committed != EXIT_OK) {
		multirun_stage_discard(&a->stage);
		if (moving) /* a rename failed part way: parameters.json, moved last, is the old one */
			fprintf(stderr, "cowsim compare: %s holds files of two compares (report refuses it): run the "
				"compare again\n", a->run.out);
		else
			fprintf(stderr, "cowsim compare: %s: %s as it was\n",
				status > EXIT_BAD_INPUT ? "interrupted" : "not finished", a->run.out);
	}
	if (status == EXIT_OK || status == EXIT_RUN_FAILED) {
		status = MAX(status, committed);
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
