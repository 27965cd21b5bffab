/*
 * sim/rows.h - replay rows into result cells, and one line per run.
 *
 * How it works
 *   Every command that replays a trace turns the driver's rows (replay.h)
 *   into cells of the main CSV schema (results/columns.h) with rows_fill().
 *   The commands that run many configurations (compare, sweep) also keep a
 *   rows_summary per run, fed from the same rows, and collect one summary
 *   line per configuration in a RowsTable:
 *
 *     replay_run --row--> rows_fill --> DIR/<mount>-<policy>.csv  (per run)
 *                    \--> summary: the base mark's metadata, least free space
 *     outcome.final ----> rows_table_add: [params... | status | base_mark
 *                          | metadata_base | metadata_final | amplification
 *                          | counters ...]
 *                    --> compare.csv / sweep.csv, compare.md, stdout
 *
 *   The summary columns are results/columns.h's RESULTS_SUMMARY_COLUMNS: they
 *   describe a whole run, not a point in it.
 *
 * Invariants
 *   RW1  rows_fill() and rows_identity_fill() set every main-schema cell the
 *       model can measure, the same way for every command (cowsim run's CSV
 *       and compare's per-run CSVs agree byte for byte on the same trace and
 *       options).
 *   RW2  amplification is metadata_final / metadata_base, where metadata_base
 *       is metadata_used at the base mark: the trace's first mark, or the
 *       first mark labelled --base LABEL. It is unset (empty) when there is
 *       no such mark or its metadata is 0.
 *   RW3  free_min is the least free space at any row and at the end (finer
 *       with --every N): the room metadata can still grow into, as the
 *       threshold policy measures it (space_report_metadata_free: free in the
 *       metadata chunks less the global reserve, plus the metadata chunks the
 *       unallocated device space can hold).
 *   RW4  Output depends only on the cells: same runs, same bytes.
 */
#ifndef COWSIM_SIM_ROWS_H
#define COWSIM_SIM_ROWS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <glib.h>

#include "json.h"
#include "replay.h"
#include "results.h"


/* Free space as the threshold policy sees it (RW3). */
uint64_t rows_free_bytes(const struct space_report *space, const struct fs_config *config);

/* Fills all cells of `row` from `r` (RW1) but the identity cells. Cannot fail. */
void rows_fill(const struct replay_row *r, const struct fs_config *config, ResultsRow *row);

/* What produced a run, as the identity cells that close every row of a
 * per-run CSV (RESULTS_PARAM_COLUMNS, the last columns of the main and the
 * subvolume schema): design, mount, policy, nodesize, device_size. */
struct rows_identity {
	const char *design;
	char mount[64];
	char policy[64];
	uint64_t nodesize, device_size;
};
void rows_identity_init(struct rows_identity *identity, const struct fs_config *config);
/* Sets cells[0..RESULTS_PARAM_N_COLUMNS), from &row.cells[RESULTS_COL_DESIGN]
 * or &row.cells[RESULTS_SUBVOL_COL_DESIGN]; the strings are borrowed from
 * `identity`. Cannot fail. */
void rows_identity_fill(const struct rows_identity *identity, ResultsCell *cells);

/* What one run leaves for its summary line. */
struct rows_summary {
	char *base_label;             /* the base mark's label (RW2), NULL if none was seen */
	uint64_t metadata_base;       /* bytes, metadata_used at the base mark */
	uint64_t marks;               /* mark rows seen */
	uint64_t free_min;            /* bytes, RW3 */
	struct replay_outcome outcome;
};

/* Replays `trace` with `options`, writing every row to `csv_path` (NULL: no
 * CSV), and fills *summary (free it with rows_summary_clear()); `base` is
 * the base mark's label, NULL for the first mark (RW2). Returns the replay
 * status; *error explains any status but REPLAY_DONE. */
enum replay_status rows_run(const char *trace, const struct replay_options *options, const char *csv_path,
			    const char *base, struct rows_summary *summary, GError **error);
void rows_summary_clear(struct rows_summary *summary);

/* "done", "enospc", "bad-input", "interrupted", "corrupt", "sink-failed". */
const char *rows_status_name(enum replay_status status);

/* ---- the table of summary lines ------------------------------------------ */

/* A parameter column of a RowsTable: text (a mount, a policy) or a number
 * (a nodesize in bytes, a snapshot count). */
struct rows_param {
	const char *name;
	ResultsCellKind kind;         /* RESULTS_CELL_STRING, _U64 or _DOUBLE */
	ResultsUnit unit;
};

typedef struct RowsTable RowsTable;

/* A table whose lines are the parameters (copied) and then the summary
 * columns. Cannot fail. */
RowsTable *rows_table_new(const struct rows_param *params, unsigned n_params);
void rows_table_free(RowsTable *table);
/* A table with the columns of `table` and no lines. Cannot fail. */
RowsTable *rows_table_copy_columns(const RowsTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RowsTable, rows_table_free)

/* Adds one line: `params` (one cell per parameter column, strings copied)
 * and the summary of the run under `config`. Cannot fail. */
void rows_table_add(RowsTable *table, const ResultsCell *params, const struct rows_summary *summary,
		    const struct fs_config *config);

unsigned rows_table_n_rows(const RowsTable *table);
unsigned rows_table_n_columns(const RowsTable *table);
const char *rows_table_column_name(const RowsTable *table, unsigned column);

/* Line `row` as text, one string per column (NULL for an unset cell), as
 * results_append_cell_text() writes it: what a sweep keeps of a finished
 * point. A GPtrArray of char *, owned by the caller. */
GPtrArray *rows_table_line_texts(const RowsTable *table, unsigned row);
/* Adds a line read back from such texts (texts[i] for column i, NULL for
 * unset): numbers parsed by their column's kind, so the line formats to the
 * same bytes. FALSE with *error naming the column and the text. */
gboolean rows_table_add_texts(RowsTable *table, const char *const *texts, GError **error);

/* Line `row` as members of the open JSON object of `w`, a member per column,
 * named and valued as in the CSV (JS1; unset: null). Cannot fail. */
void rows_table_json_line(const RowsTable *table, unsigned row, ResultsJson *w);

/* The whole table as CSV (header, then one line per run), written to `path`
 * atomically. FALSE with a G_FILE_ERROR naming the path. */
gboolean rows_table_write_csv(const RowsTable *table, const char *path, GError **error);
/* The whole table as a Markdown table (sizes in MiB) to `path`. */
gboolean rows_table_write_markdown(const RowsTable *table, const char *path, GError **error);
/* The parameters and the main summary columns, aligned, to `out`. */
gboolean rows_table_print(const RowsTable *table, FILE *out, GError **error);

#endif
