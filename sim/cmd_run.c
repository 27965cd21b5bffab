/*
 * sim/cmd_run.c - `cowsim run TRACE`: replay a trace on the model.
 *
 * Writes a CSV row (results/columns.h) at every mark and every --every ops,
 * optionally per-subvolume rows at marks, and prints a summary table of the
 * marks on stdout (on stderr when the CSV goes to stdout). Exit status: 0 done; 1 a model invariant broke or
 * the disk filled under an output; 2 bad arguments, a malformed trace (the
 * message names file, line, column and field), the modeled device full (the
 * message names the op's line) or an output path that cannot be created
 * (CLI2); 130/143 interrupted.
 *
 * Invariants
 *   RUN1  An output file appears under its name only when the run is done.
 *       Bad input leaves it as it was and writes nothing (the trace opening
 *       and mkfs are checked before any output is created); a run stopped
 *       later keeps its whole rows in FILE.partial, FILE as it was.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "options.h"
#include "output_file.h"
#include "provenance.h"
#include "replay.h"
#include "results.h"
#include "rows.h"
#include "trace.h"

static volatile int interrupted;

static void on_signal(int signo)
{
	interrupted = signo;
}

struct run_sink {
	ResultsCsv *csv;
	ResultsSubvolCsv *subvol_csv;
	ResultsTable *summary;
	const struct fs_config *config;
	struct rows_identity identity;
	ResultsJson *json;            /* --json: the open "marks" array, NULL without */
};

static bool write_subvolume_rows(struct run_sink *sink, const struct replay_row *r, GError **error)
{
	GArray *usage = fs_subvolume_usage(r->fs);
	bool ok = true;
	for (unsigned i = 0; ok && i < usage->len; i++) {
		const struct subvolume_usage *u = &g_array_index(usage, struct subvolume_usage, i);
		ResultsSubvolRow row = { 0 };
		rows_identity_fill(&sink->identity, &row.cells[RESULTS_SUBVOL_COL_DESIGN]);
		row.cells[RESULTS_SUBVOL_COL_OP_INDEX] = results_cell_u64(r->op_index);
		row.cells[RESULTS_SUBVOL_COL_LABEL] = results_cell_string(r->label);
		row.cells[RESULTS_SUBVOL_COL_SUBVOLUME] = results_cell_string(u->path);
		row.cells[RESULTS_SUBVOL_COL_SUBVOLUME_ID] = results_cell_u64(u->id);
		row.cells[RESULTS_SUBVOL_COL_EXCLUSIVE_BYTES] = results_cell_u64(u->exclusive_bytes);
		row.cells[RESULTS_SUBVOL_COL_SHARED_BYTES] = results_cell_u64(u->shared_bytes);
		ok = results_subvol_csv_write_row(sink->subvol_csv, &row, error);
	}
	fs_subvolume_usage_free(usage);
	return ok;
}

static bool sink_row(void *opaque, const struct replay_row *r, GError **error)
{
	struct run_sink *sink = opaque;
	ResultsRow row;
	rows_fill(r, sink->config, &row);
	rows_identity_fill(&sink->identity, &row.cells[RESULTS_COL_DESIGN]);
	if (sink->csv && !results_csv_write_row(sink->csv, &row, error))
		return false;
	if (!r->label)
		return true;
	if (sink->subvol_csv && !write_subvolume_rows(sink, r, error))
		return false;
	if (sink->json) { /* the mark's row, every column by name, as in the CSV (JS1) */
		results_json_begin_object(sink->json, NULL);
		for (unsigned i = 0; i < RESULTS_N_COLUMNS; i++)
			results_json_cell(sink->json, results_columns()[i].name, &row.cells[i]);
		results_json_end(sink->json);
	}
	return results_table_add_results_row(sink->summary, &row, error);
}

static const ResultsColumn wide_columns[] = {
	RESULTS_COL_OP_INDEX, RESULTS_COL_LABEL, RESULTS_COL_METADATA_USED, RESULTS_COL_TREE_FS,
	RESULTS_COL_TREE_EXTENT, RESULTS_COL_DATA_USED, RESULTS_COL_BLOCKS_COWED, RESULTS_COL_ATIME_UPDATES,
	RESULTS_COL_ATIME_SKIPPED, RESULTS_COL_ENOSPC_EVENTS, RESULTS_COL_FAILED_READS,
};

/* The same, most telling first, for a table cut to 100 columns of text. */
static const ResultsColumn narrow_columns[] = {
	RESULTS_COL_LABEL, RESULTS_COL_METADATA_USED, RESULTS_COL_TREE_FS, RESULTS_COL_BLOCKS_COWED,
	RESULTS_COL_ATIME_UPDATES, RESULTS_COL_ATIME_SKIPPED, RESULTS_COL_FAILED_READS, RESULTS_COL_ENOSPC_EVENTS,
	RESULTS_COL_TREE_EXTENT, RESULTS_COL_DATA_USED, RESULTS_COL_OP_INDEX,
};
G_STATIC_ASSERT(G_N_ELEMENTS(wide_columns) == G_N_ELEMENTS(narrow_columns));

struct run_args {
	struct model_option_text model;
	char *csv;
	char *subvol_csv;
	gint64 every;
	gint64 check_every;
	gboolean paranoid;
	gboolean keep_going;
	gboolean quiet;
	gboolean wide;
	gboolean find_min_device;
	char *read_ahead;             /* --read-ahead=yes|no, NULL: yes */
	char *json;                   /* --json[=FILE]: "-" for stdout, NULL for none */
	char **rest;
	char **given;                 /* the arguments as given, for the --json summary */
	GArray *entries;              /* every option (cli_take_entries) */
};

static const struct cli_doc run_doc = {
	.command = "run",
	.args = "TRACE",
	.summary = "Replays TRACE (a cowsim trace, '-' for stdin; docs/trace-format.md) on the\n"
		   "modeled filesystem and writes a CSV row at every 'mark' line (and every --every\n"
		   "ops), with a summary table of the marks (docs/columns.md describes the columns).",
	.notes = "With -o - the CSV goes to stdout and the table, progress and warnings to stderr;\n"
		 "so does the table with --json (the summary as JSON: every mark's row, the totals,\n"
		 "cowsim's version and every option; docs/json.md), written whatever the run's end.\n"
		 "The summary names the trace line and simulated time of the first op that met ENOSPC\n"
		 "and of the first atime update lost to it, when there was one. --find-min-device\n"
		 "assumes a device that holds the run is not followed by a larger one that does not\n"
		 "(chunk sizes follow the device size, so check the answer's neighbours if it matters).\n"
		 "FILE (-o, --subvolume-csv) appears only when the run is done; until then it is as\n"
		 "it was. Bad input (the trace, a line, a device too small for mkfs) writes nothing.\n"
		 "A run stopped later (SIGINT/SIGTERM, ENOSPC, a broken invariant, a full disk)\n"
		 "keeps its whole rows in FILE.partial.",
	.examples = "  cowsim gen seed-experiment --from-dir /usr/include --snapshots 10 -o t.trace\n"
		    "  cowsim run t.trace --nodesize 16K -m relatime -o out.csv\n"
		    "  cowsim run t.trace -m strictatime --find-min-device\n"
		    "  cowsim gen synthetic --files 1000 | cowsim run - -o - --quiet | head\n"
		    "  cowsim run t.trace --json | jq '.marks[] | {\"label\": .label, metadata_used}'",
	.exits = "  0  done\n"
		 "  1  a model invariant broke (a bug in cowsim), or the disk filled under an output\n"
		 "  2  bad arguments, a malformed trace, the modeled device full (ENOSPC) or an\n"
		 "     output path that cannot be created; the message names the file, line and\n"
		 "     field; with --find-min-device, a run that meets ENOSPC on --device-size\n"
		 "  130/143  interrupted (SIGINT/SIGTERM)",
	.model_options = true,
};

static int parse_run_args(int argc, char **argv, struct run_args *a, struct fs_config *config)
{
	const GOptionEntry entries[] = {
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->csv, "write the CSV rows to FILE ('-': stdout)",
		  "FILE" },
		{ "csv", 'c', 0, G_OPTION_ARG_FILENAME, &a->csv, "the same as --output", "FILE" },
		{ "subvolume-csv", 0, 0, G_OPTION_ARG_FILENAME, &a->subvol_csv,
		  "write per-subvolume exclusive/shared bytes at each mark to FILE ('-': stdout)", "FILE" },
		{ "every", 'e', 0, G_OPTION_ARG_INT64, &a->every, "also write a row every N ops (default 0: marks only)",
		  "N" },
		{ "check-every", 0, 0, G_OPTION_ARG_INT64, &a->check_every,
		  "run the model's invariant checkers every N ops", "N" },
		{ "paranoid", 0, 0, G_OPTION_ARG_NONE, &a->paranoid, "run the invariant checkers after every op (slow)",
		  NULL },
		{ "keep-going", 'k', 0, G_OPTION_ARG_NONE, &a->keep_going,
		  "count ops the model refuses (ENOENT, ENOSPC, ...) and go on", NULL },
		{ "wide", 'w', 0, G_OPTION_ARG_NONE, &a->wide, "the summary table with every column (default: fits 100 columns)",
		  NULL },
		{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &a->quiet, "no summary table, no progress, no warnings", NULL },
		{ "find-min-device", 0, 0, G_OPTION_ARG_NONE, &a->find_min_device,
		  "write no rows: find by bisection the smallest device (to 1 MiB, at most --device-size) "
		  "on which the run never meets ENOSPC", NULL },
		{ "read-ahead", 0, 0, G_OPTION_ARG_STRING, &a->read_ahead,
		  "yes (default): a second thread reads and parses the trace ahead of the model; no: the "
		  "model's thread does it in turn (to measure or debug; the output is the same)",
		  "yes|no" },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->rest, NULL, NULL },
		{ NULL },
	};
	a->given = g_strdupv(argv + 1);
	g_autoptr(GOptionContext) context = cli_context_new(&run_doc);
	cli_add_entries(context, entries);
	options_add_model_entries(context, &a->model);
	cli_add_json_entry(context, &a->json, "the summary as JSON (docs/json.md) on stdout (the table then goes to "
			   "stderr), or with =FILE to FILE");
	bool parsed = cli_parse(context, &run_doc, &argc, &argv);
	a->entries = cli_take_entries(context);
	if (!parsed)
		return EXIT_BAD_INPUT;
	if (!a->rest || !a->rest[0] || a->rest[1]) {
		fprintf(stderr, "cowsim run: give exactly one TRACE (see 'cowsim run --help')\n");
		return EXIT_BAD_INPUT;
	}
	if (a->every < 0 || a->check_every < 0) {
		fprintf(stderr, "cowsim run: --every and --check-every take a count of ops, 0 or more\n");
		return EXIT_BAD_INPUT;
	}
	if (a->find_min_device && (a->csv || a->subvol_csv || a->every || a->json)) {
		fprintf(stderr, "cowsim run: --find-min-device replays the trace many times and writes no rows: "
			"drop --output, --subvolume-csv, --every and --json\n");
		return EXIT_BAD_INPUT;
	}
	if (a->read_ahead && strcmp(a->read_ahead, "yes") && strcmp(a->read_ahead, "no")) {
		fprintf(stderr, "cowsim run: --read-ahead takes yes or no, not '%s'\n", a->read_ahead);
		return EXIT_BAD_INPUT;
	}
	if (cli_is_stdio(a->csv) + cli_is_stdio(a->subvol_csv) + cli_is_stdio(a->json) > 1) {
		fprintf(stderr, "cowsim run: only one of --output, --subvolume-csv and --json can be stdout\n");
		return EXIT_BAD_INPUT;
	}
	g_autoptr(GError) error = NULL;
	if (!options_model_config(&a->model, config, &error)) {
		fprintf(stderr, "cowsim run: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	return EXIT_OK;
}

static void free_run_args(struct run_args *a)
{
	options_model_text_clear(&a->model);
	g_free(a->csv);
	g_free(a->subvol_csv);
	g_free(a->json);
	g_free(a->read_ahead);
	g_strfreev(a->rest);
	g_strfreev(a->given);
	if (a->entries)
		g_array_unref(a->entries);
}

static int exit_status_of(enum replay_status status)
{
	switch (status) {
	case REPLAY_DONE: return EXIT_OK;
	case REPLAY_CORRUPT: return EXIT_RUN_FAILED;
	/* A device too small for the trace is as much bad input as a
	 * malformed line: the trace cannot run with these parameters. */
	case REPLAY_ENOSPC:
	case REPLAY_BAD_INPUT: return EXIT_BAD_INPUT;
	/* An output that filled or failed mid-run: the run failed (CLI exit 1);
	 * one that cannot be created at all is refused before the run (2). */
	case REPLAY_SINK_FAILED: return EXIT_RUN_FAILED;
	case REPLAY_INTERRUPTED: return 128 + (interrupted ? interrupted : SIGINT);
	}
	return EXIT_RUN_FAILED;
}

/* Where the run first met ENOSPC and first lost an atime update, when it
 * did: the op's trace line and the simulated time (issue 17). */
static void print_events(FILE *out, const struct replay_outcome *outcome)
{
	const struct {
		const char *what;
		const struct replay_event *event;
	} events[] = {
		{ "first ENOSPC", &outcome->first_enospc },
		{ "first lost atime update", &outcome->first_atime_lost },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(events); i++) {
		char text[512];
		replay_format_event(events[i].event, text, sizeof(text));
		if (events[i].event->seen)
			fprintf(out, "%s: %s\n", events[i].what, text);
	}
}

/* The table of the marks, for people: on stderr when the CSV takes stdout
 * (CLI1), at most 100 columns wide unless --wide; a failed run that reached no
 * mark prints its error only, not an empty table. */
static void print_summary(const struct run_args *a, const ResultsTable *summary, enum replay_status status,
			  const struct replay_outcome *outcome)
{
	FILE *out = cli_is_stdio(a->csv) || cli_is_stdio(a->subvol_csv) || cli_is_stdio(a->json) ? stderr : stdout;
	if (status != REPLAY_DONE && results_table_n_rows(summary) == 0) {
		print_events(out, outcome);
		return;
	}
	g_autoptr(GError) print_error = NULL;
	results_table_print_width(summary, out, a->wide ? 0 : 100, &print_error);
	if (status == REPLAY_DONE)
		fprintf(out, "%" PRIu64 " ops, %" PRIu64 " commits, %" PRIu64 " blocks copied, final metadata %" PRIu64
			" bytes\n", outcome->ops, outcome->final.counters.commits, outcome->final.counters.blocks_cowed,
			outcome->final.space.metadata_used);
	print_events(out, outcome);
}

static bool probe_fills(const char *trace, const struct replay_options *base, uint64_t device,
			struct replay_outcome *outcome, enum replay_status *status, GError **error);

/* After ENOSPC: the device size that would have held the trace up to and
 * including the op that failed, by doubling --device-size (at most 16x, each
 * probe replays only that far), as a hint of --device-size. */
static void hint_device_size(const char *trace, const struct replay_options *options, uint64_t failed_ops)
{
	struct replay_options probe = *options;
	probe.keep_going = false;
	probe.stop_after_ops = failed_ops;
	uint64_t device = options->fs.device_size;
	for (int i = 0; i < 4; i++) {
		device *= 2;
		struct replay_outcome outcome;
		enum replay_status status;
		g_autoptr(GError) error = NULL;
		if (!probe_fills(trace, &probe, device, &outcome, &status, &error)) {
			if (status != REPLAY_DONE)
				return;
			char size[RESULTS_SIZE_BUF];
			fprintf(stderr, "cowsim run: hint: --device-size %" PRIu64 " (%s) holds the trace that far; "
				"--find-min-device finds the smallest device for the whole run\n", device,
				results_format_size(device, size));
			return;
		}
	}
	char size[RESULTS_SIZE_BUF];
	fprintf(stderr, "cowsim run: hint: even --device-size %" PRIu64 " (%s) meets ENOSPC there\n", device,
		results_format_size(device, size));
}

/* --json: the document up to the open "marks" array (provenance.h). */
static ResultsJson *json_begin(const struct run_args *a, const struct fs_config *config, GError **error)
{
	struct provenance p = { .command = "run", .argv = a->given, .entries = a->entries, .trace = a->rest[0] };
	ResultsJson *w = provenance_begin(&p, "cowsim-run-summary/1", error);
	if (!w)
		return NULL;
	provenance_model(w, "model", config, true);
	results_json_begin_array(w, "marks");
	return w;
}

static void json_event(ResultsJson *w, const char *key, const struct replay_event *event)
{
	if (!event->seen) {
		results_json_null(w, key);
		return;
	}
	results_json_begin_object(w, key);
	results_json_u64(w, "op_index", event->op_index);
	results_json_u64(w, "line", event->line);
	results_json_string(w, "op", event->op);
	results_json_double(w, "time_s", (double)event->clock_ns / 1e9);
	results_json_end(w);
}

/* Closes the "marks" array and adds how the run ended; writes the document. */
static bool json_finish(const struct run_args *a, ResultsJson *w, enum replay_status status, int exit_status,
			const struct replay_outcome *outcome)
{
	results_json_end(w);
	results_json_string(w, "status", rows_status_name(status));
	results_json_i64(w, "exit_status", exit_status);
	results_json_u64(w, "ops", outcome->ops);
	results_json_u64(w, "commits", outcome->final.counters.commits);
	results_json_u64(w, "blocks_cowed", outcome->final.counters.blocks_cowed);
	results_json_u64(w, "metadata_used", outcome->final.space.metadata_used);
	json_event(w, "first_enospc", &outcome->first_enospc);
	json_event(w, "first_atime_lost", &outcome->first_atime_lost);
	results_json_end(w);
	return provenance_write(w, "run", a->json);
}

/* What can be checked before any output is created: the trace opens (its
 * header line too) and the device holds mkfs. A pipe cannot be read twice. */
static bool run_can_start(const struct run_args *a, const struct replay_options *options)
{
	g_autoptr(GError) error = NULL;
	if (!cli_is_stdio(a->rest[0])) {
		struct trace_reader *reader = trace_reader_open(a->rest[0], &error);
		if (!reader) {
			fprintf(stderr, "cowsim run: %s\n", error->message);
			return false;
		}
		trace_reader_free(reader);
	}
	g_autoptr(Filesystem) fs = fs_new(&options->fs, &error);
	if (!fs)
		fprintf(stderr, "cowsim run: %s\n", error->message);
	return fs != NULL;
}

/* "FILE.partial" for an output that can keep a stopped run's rows (a file
 * written through a temporary one), else NULL (stdout, a device or a pipe is
 * written in place: its rows are already there). */
static char *partial_path(const char *path)
{
	if (!path || cli_is_stdio(path))
		return NULL;
	bool absent = !g_file_test(path, G_FILE_TEST_EXISTS);
	return absent || g_file_test(path, G_FILE_TEST_IS_REGULAR) ? g_strconcat(path, ".partial", NULL) : NULL;
}

/* RUN1: the outputs appear under their names only when the run is done. A
 * run stopped by bad input leaves them as they were and writes nothing; one
 * stopped later (a signal, ENOSPC, a broken invariant, a full disk) keeps its
 * whole rows in FILE.partial, FILE as it was. */
static bool close_outputs(const struct run_args *a, struct run_sink *sink, enum replay_status status,
			  GError **error)
{
	if (status == REPLAY_BAD_INPUT) {
		results_csv_discard(g_steal_pointer(&sink->csv));
		results_subvol_csv_discard(g_steal_pointer(&sink->subvol_csv));
		return true;
	}
	g_autofree char *csv_to = status == REPLAY_DONE ? NULL : partial_path(a->csv);
	g_autofree char *subvol_to = status == REPLAY_DONE ? NULL : partial_path(a->subvol_csv);
	bool csv_ok = results_csv_close_to(g_steal_pointer(&sink->csv), csv_to, error);
	bool subvol_ok = results_subvol_csv_close_to(g_steal_pointer(&sink->subvol_csv), subvol_to,
						     csv_ok ? error : NULL);
	return csv_ok && subvol_ok;
}

/* Where a stopped run's rows went, for its last message (RUN1). */
static void print_stopped(const struct run_args *a, enum replay_status status, uint64_t ops)
{
	g_autoptr(GString) kept = g_string_new(NULL);
	unsigned n = 0;
	const char *outputs[] = { a->csv, a->subvol_csv };
	for (unsigned i = 0; i < G_N_ELEMENTS(outputs); i++) {
		g_autofree char *partial = partial_path(outputs[i]);
		if (!partial)
			continue;
		if (status == REPLAY_BAD_INPUT)
			g_string_append_printf(kept, "%s'%s'", kept->len ? " and " : "", outputs[i]), n++;
		else if (g_file_test(partial, G_FILE_TEST_IS_REGULAR))
			g_string_append_printf(kept, "; '%s' is as it was, the rows are in '%s'", outputs[i], partial);
	}
	if (status == REPLAY_BAD_INPUT && kept->len)
		fprintf(stderr, "cowsim run: stopped after %" PRIu64 " ops; nothing written: %s %s\n", ops,
			kept->str, n > 1 ? "as they were" : "as it was");
	else
		fprintf(stderr, "cowsim run: stopped after %" PRIu64 " ops; the rows written so far are complete%s\n",
			ops, kept->str);
}

static int run_with_sink(struct run_args *a, struct replay_options *options, struct run_sink *sink)
{
	g_autoptr(GError) error = NULL;
	const char *outputs[] = { a->csv, a->subvol_csv, a->json };
	const char *inputs[] = { a->rest[0] };
	if (!output_file_refuse_aliases(outputs, G_N_ELEMENTS(outputs), inputs, G_N_ELEMENTS(inputs), &error)) {
		fprintf(stderr, "cowsim run: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	if (!run_can_start(a, options))
		return EXIT_BAD_INPUT;
	if ((a->csv && !(sink->csv = results_csv_open(a->csv, &error))) ||
	    (a->subvol_csv && !(sink->subvol_csv = results_subvol_csv_open(a->subvol_csv, &error)))) {
		fprintf(stderr, "cowsim run: %s\n", error->message);
		results_csv_discard(g_steal_pointer(&sink->csv));
		return EXIT_BAD_INPUT; /* an output the command line names that cannot be written (CLI2) */
	}
	g_autoptr(ResultsJson) json = a->json ? json_begin(a, &options->fs, &error) : NULL;
	if (a->json && !json) {
		fprintf(stderr, "cowsim run: %s\n", error->message);
		close_outputs(a, sink, REPLAY_BAD_INPUT, NULL);
		return EXIT_BAD_INPUT;
	}
	sink->json = json;
	struct replay_outcome outcome;
	enum replay_status status = replay_run(a->rest[0], options, sink_row, sink, &outcome, &error);
	if (status != REPLAY_DONE)
		fprintf(stderr, "cowsim run: %s\n", error ? error->message : "failed");
	g_autoptr(GError) close_error = NULL;
	if (!close_outputs(a, sink, status, &close_error)) {
		fprintf(stderr, "cowsim run: %s\n", close_error->message);
		if (status == REPLAY_DONE)
			status = REPLAY_SINK_FAILED;
	}
	if (status != REPLAY_DONE) {
		print_stopped(a, status, outcome.ops);
		if (status == REPLAY_ENOSPC && !cli_is_stdio(a->rest[0])) /* a pipe cannot be read again */
			hint_device_size(a->rest[0], options, outcome.ops);
	}
	if (!a->quiet)
		print_summary(a, sink->summary, status, &outcome);
	int exit_status = exit_status_of(status);
	if (json && !json_finish(a, g_steal_pointer(&json), status, exit_status, &outcome))
		return exit_status == EXIT_OK ? EXIT_RUN_FAILED : exit_status; /* the summary failed to write */
	return exit_status;
}

static bool ignore_row(void *opaque, const struct replay_row *row, GError **error)
{
	(void)opaque, (void)row, (void)error;
	return true;
}

/* One replay on a device of `device` bytes, stopped at the first ENOSPC: true
 * when it met ENOSPC or the device cannot even hold mkfs's chunks (the trace
 * ran whole on a larger one, so a refusal before the first op is fs_new's).
 * *status is REPLAY_DONE or REPLAY_ENOSPC, anything else an error to report. */
static bool probe_fills(const char *trace, const struct replay_options *base, uint64_t device,
			struct replay_outcome *outcome, enum replay_status *status, GError **error)
{
	struct replay_options options = *base;
	options.fs.device_size = device;
	options.stop_at_enospc = true;
	options.row_every = 0;
	options.progress = false;
	options.warn_snapshots = false;
	options.leave_model_to_exit = false; /* one probe of many */
	*status = replay_run(trace, &options, ignore_row, NULL, outcome, error);
	if (*status == REPLAY_BAD_INPUT && outcome->ops == 0 && device < base->fs.device_size) {
		g_clear_error(error);
		*status = REPLAY_ENOSPC;
	}
	return *status == REPLAY_ENOSPC;
}

#define MIN_DEVICE_STEP (1ull << 20)

static void print_min_device(uint64_t fits, uint64_t fills, const struct replay_outcome *at_fills, unsigned probes)
{
	printf("smallest device on which the run never meets ENOSPC: %" PRIu64 " bytes (%" PRIu64 " MiB; %u replays, "
	       "to 1 MiB)\n", fits, fits >> 20, probes);
	if (!fills) {
		printf("(no smaller device was tried: 1 MiB is the step)\n");
		return;
	}
	char text[512];
	replay_format_event(&at_fills->first_enospc, text, sizeof(text));
	printf("on %" PRIu64 " bytes (%" PRIu64 " MiB) it does: first ENOSPC: %s\n", fills, fills >> 20,
	       at_fills->first_enospc.seen ? text : "mkfs (the device cannot hold its first chunks)");
	if (at_fills->first_atime_lost.seen) {
		replay_format_event(&at_fills->first_atime_lost, text, sizeof(text));
		printf("  first lost atime update: %s\n", text);
	}
}

/* --find-min-device: bisection between a device that fills (0 bytes, at
 * first) and one that holds the run (--device-size, checked first). */
static int find_min_device(struct run_args *a, const struct replay_options *options)
{
	const char *trace = a->rest[0];
	g_autoptr(GError) error = NULL;
	struct replay_outcome outcome, at_fills = { 0 };
	enum replay_status status;
	uint64_t fits = options->fs.device_size, fills = 0;
	unsigned probes = 1;
	if (probe_fills(trace, options, fits, &outcome, &status, &error)) {
		char text[512];
		replay_format_event(&outcome.first_enospc, text, sizeof(text));
		fprintf(stderr, "cowsim run: --find-min-device: the run meets ENOSPC on the --device-size of %" PRIu64
			" bytes already (first ENOSPC: %s): give a larger --device-size\n", fits, text);
		return EXIT_BAD_INPUT;
	}
	while (status == REPLAY_DONE && fits - fills > MIN_DEVICE_STEP) {
		uint64_t mid = (fills + (fits - fills) / 2) & ~(MIN_DEVICE_STEP - 1);
		if (mid <= fills)
			mid = fills + MIN_DEVICE_STEP;
		g_clear_error(&error);
		bool full = probe_fills(trace, options, mid, &outcome, &status, &error);
		probes++;
		if (status != REPLAY_DONE && status != REPLAY_ENOSPC)
			break;
		if (!a->quiet)
			fprintf(stderr, "cowsim run: --find-min-device: %" PRIu64 " MiB %s\n", mid >> 20,
				full ? "meets ENOSPC" : "holds the run");
		if (full) {
			fills = mid;
			at_fills = outcome;
		} else {
			fits = mid;
		}
		status = REPLAY_DONE;
	}
	if (status != REPLAY_DONE) {
		fprintf(stderr, "cowsim run: --find-min-device: %s\n", error ? error->message : "failed");
		return exit_status_of(status);
	}
	print_min_device(fits, fills, &at_fills, probes);
	return EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
	struct run_args args = { 0 };
	struct replay_options options = { 0 };
	int status = parse_run_args(argc, argv, &args, &options.fs);
	if (status != EXIT_OK) {
		free_run_args(&args);
		return status;
	}
	options.row_every = (uint64_t)args.every;
	options.check_every = args.paranoid ? 1 : (uint64_t)args.check_every;
	options.keep_going = args.keep_going;
	options.progress = !args.quiet && isatty(STDERR_FILENO);
	options.warn_snapshots = !args.quiet;
	options.interrupted = &interrupted;
	options.no_read_ahead = args.read_ahead && !strcmp(args.read_ahead, "no");
	struct sigaction action = { .sa_handler = on_signal };
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);

	if (args.find_min_device) {
		status = find_min_device(&args, &options);
		free_run_args(&args);
		return status;
	}
	/* The process exits after this one run: its model is left to the exit (replay.c, RP11),
	 * unless COWSIM_FREE_AT_EXIT=1 asks for the teardown (the memcheck test checks it frees all). */
	const char *free_at_exit = getenv("COWSIM_FREE_AT_EXIT");
	options.leave_model_to_exit = !(free_at_exit && !strcmp(free_at_exit, "1"));
	g_autoptr(ResultsTable) summary = results_table_new();
	results_table_add_main_columns(summary, args.wide ? wide_columns : narrow_columns, G_N_ELEMENTS(wide_columns));
	struct run_sink sink = { .summary = summary, .config = &options.fs };
	rows_identity_init(&sink.identity, &options.fs);
	status = run_with_sink(&args, &options, &sink);
	free_run_args(&args);
	return status;
}
