/*
 * results/results.h - rows of values in, CSV files and readable tables out.
 *
 * How it works
 *   results/ knows nothing of the model or of traces.  A producer fills a row
 *   (an array of cells, one per column of a schema, see columns.h), and a
 *   writer turns it into one CSV line:
 *
 *     ResultsRow  [ u64 12 | 3.000000 | "after_copy" | u64 26132480 | unset | ... ]
 *        |
 *        v  results_csv_write_row(): format the whole line, then one write(2)
 *     out.csv  "12,3.000000,after_copy,26132480,,...\n"
 *
 *   Two schemas exist: the main one (RESULTS_MAIN_COLUMNS, `cowsim run` and
 *   `btrfs-replay`) and the long per-subvolume one (RESULTS_SUBVOL_COLUMNS).
 *   ResultsTable prints any rows as an aligned summary for humans.
 *
 * Formatting (deterministic: same rows, same bytes, in any locale)
 *   unset   -> empty field
 *   u64/i64 -> decimal, no grouping
 *   double  -> %.6f with '.' as the decimal point; NaN and infinities refused
 *   string  -> as is, or in double quotes with '"' doubled (RFC 4180) when it
 *              holds ',', '"', CR, LF, or starts or ends with a space; the
 *              empty string is written "" so that it differs from unset
 *   lines end with "\n"; the header is the column names, never quoted.
 *
 * Invariants
 *   RS1  A cell's kind is RESULTS_CELL_UNSET or its column's kind (columns.h);
 *       a row that breaks this is refused with RESULTS_ERROR_INVALID_CELL and
 *       nothing is written.
 *   RS2  A CSV file holds only whole lines: each line goes out in one write(2);
 *       if the kernel takes only part of it, the file is cut back to the last
 *       whole line (regular files) and the writer is poisoned.
 *   RS3  After the first failed write every later write fails too (the file
 *       would otherwise have a hole in its sequence of rows).
 *
 * Errors: I/O failures are G_FILE_ERROR errors whose message names the file
 * ("cannot write 'out.csv': No space left on device"); bad cells are
 * RESULTS_ERROR errors naming the column.  Nothing here exits or aborts.
 */
#ifndef COWSIM_RESULTS_RESULTS_H
#define COWSIM_RESULTS_RESULTS_H

#include <stdio.h>

#include <glib.h>

#include "columns.h"

G_BEGIN_DECLS

/* ---- cells and columns ------------------------------------------------- */

typedef enum {
	RESULTS_CELL_UNSET = 0, /* written as an empty field; a zeroed cell is unset */
	RESULTS_CELL_U64,
	RESULTS_CELL_I64,
	RESULTS_CELL_DOUBLE,
	RESULTS_CELL_STRING,
} ResultsCellKind;

/* What a column's numbers are; the table shows BYTES also as "25.0 MiB". */
typedef enum {
	RESULTS_UNIT_TEXT,
	RESULTS_UNIT_COUNT,
	RESULTS_UNIT_BYTES,
	RESULTS_UNIT_SECONDS,
	RESULTS_UNIT_RATIO,   /* a quotient of two like quantities (amplification) */
	RESULTS_UNIT_PERCENT,
} ResultsUnit;

/* One value.  A string cell borrows its text: it must live until the row has
 * been written or added to a table (tables copy it). */
typedef struct {
	ResultsCellKind kind;
	union {
		guint64 u64;
		gint64 i64;
		double d;
		const char *str;
	} v;
} ResultsCell;

typedef struct {
	const char *name;    /* the header's field, see columns.h (CO1) */
	ResultsCellKind kind;
	ResultsUnit unit;
	const char *doc;     /* one sentence, for --help and docs */
} ResultsColumnInfo;

/* The schemas, as enums of column ids in file order (CO2). */
#define RESULTS_X_ENUM_MAIN(id, name, kind, unit, doc) RESULTS_COL_##id,
typedef enum { RESULTS_MAIN_COLUMNS(RESULTS_X_ENUM_MAIN) RESULTS_N_COLUMNS } ResultsColumn;
#undef RESULTS_X_ENUM_MAIN

#define RESULTS_X_ENUM_SUBVOL(id, name, kind, unit, doc) RESULTS_SUBVOL_COL_##id,
typedef enum {
	RESULTS_SUBVOL_COLUMNS(RESULTS_X_ENUM_SUBVOL) RESULTS_SUBVOL_N_COLUMNS
} ResultsSubvolColumn;
#undef RESULTS_X_ENUM_SUBVOL

#define RESULTS_X_ENUM_SUMMARY(id, name, kind, unit, doc) RESULTS_SUMMARY_COL_##id,
typedef enum {
	RESULTS_SUMMARY_COLUMNS(RESULTS_X_ENUM_SUMMARY) RESULTS_SUMMARY_N_COLUMNS
} ResultsSummaryColumn;
#undef RESULTS_X_ENUM_SUMMARY

#define RESULTS_X_ENUM_PARAM(id, name, kind, unit, doc) RESULTS_PARAM_COL_##id,
typedef enum { RESULTS_PARAM_COLUMNS(RESULTS_X_ENUM_PARAM) RESULTS_PARAM_N_COLUMNS } ResultsParamColumn;
#undef RESULTS_X_ENUM_PARAM

/* The static tables behind the enums; entry i describes column i.  Cannot
 * fail; the pointers are to static storage. */
const ResultsColumnInfo *results_columns(void);        /* RESULTS_N_COLUMNS entries */
const ResultsColumnInfo *results_subvol_columns(void); /* RESULTS_SUBVOL_N_COLUMNS entries */
const ResultsColumnInfo *results_summary_columns(void); /* RESULTS_SUMMARY_N_COLUMNS entries */
const ResultsColumnInfo *results_param_columns(void);  /* RESULTS_PARAM_N_COLUMNS entries */

/* Every list of columns.h, for `cowsim columns` and docs/columns.md. */
typedef struct {
	const char *name;     /* "run", "subvolume", "summary", "parameter", "calibration" */
	const char *files;    /* which files hold it, one line */
	const ResultsColumnInfo *columns;
	gsize n_columns;
} ResultsSchema;

/* The schemas in a fixed order; *n gets their count.  Cannot fail. */
const ResultsSchema *results_schemas(gsize *n);

/* The first column of that name in any schema (CO5: a name has one unit), or
 * NULL.  For readers of CSV files: `cowsim report`. */
const ResultsColumnInfo *results_column_lookup(const char *name);

/* "text", "count", "bytes", "seconds", "ratio", "percent". */
const char *results_unit_name(ResultsUnit unit);
/* "u64", "i64", "double", "string" ("unset" for RESULTS_CELL_UNSET). */
const char *results_kind_name(ResultsCellKind kind);

/* Appends `s` to `out` as a JSON string, quotes included.  Cannot fail. */
void results_append_json_string(GString *out, const char *s);

/* Cell constructors, for building rows by value. */
static inline ResultsCell results_cell_unset(void)
{
	return (ResultsCell){ .kind = RESULTS_CELL_UNSET };
}
static inline ResultsCell results_cell_u64(guint64 v)
{
	return (ResultsCell){ .kind = RESULTS_CELL_U64, .v.u64 = v };
}
static inline ResultsCell results_cell_i64(gint64 v)
{
	return (ResultsCell){ .kind = RESULTS_CELL_I64, .v.i64 = v };
}
static inline ResultsCell results_cell_double(double v)
{
	return (ResultsCell){ .kind = RESULTS_CELL_DOUBLE, .v.d = v };
}
static inline ResultsCell results_cell_string(const char *s) /* NULL: unset */
{
	return s ? (ResultsCell){ .kind = RESULTS_CELL_STRING, .v.str = s }
		 : results_cell_unset();
}

/* A row of each schema.  `ResultsRow row = { 0 };` is a row of unset cells;
 * then `row.cells[RESULTS_COL_METADATA_USED] = results_cell_u64(n);`. */
typedef struct {
	ResultsCell cells[RESULTS_N_COLUMNS];
} ResultsRow;

typedef struct {
	ResultsCell cells[RESULTS_SUBVOL_N_COLUMNS];
} ResultsSubvolRow;

#define RESULTS_ERROR (results_error_quark())
GQuark results_error_quark(void);

typedef enum {
	RESULTS_ERROR_INVALID_CELL, /* RS1: wrong kind for the column, or NaN/inf */
	RESULTS_ERROR_POISONED,     /* RS3: an earlier write to this file failed */
} ResultsError;

/* Appends one CSV line (with "\n") for `n_cells` cells described by
 * `columns` to `out`.  On a bad cell returns FALSE, sets RESULTS_ERROR_INVALID_CELL
 * and leaves `out` as it was.  The writers use it; tests may too. */
gboolean results_format_line(GString *out, const ResultsColumnInfo *columns,
			     const ResultsCell *cells, gsize n_cells, GError **error);

/* Appends `s` to `out` as one CSV field, quoted when it must be.  Cannot fail. */
void results_append_csv_field(GString *out, const char *s);

/* Appends the cell's text as a CSV line shows it, but unquoted: numbers as
 * results_format_line() writes them, a string as it is, nothing when unset.
 * A U64, I64 or DOUBLE cell read back from this text formats the same.
 * Cannot fail. */
void results_append_cell_text(GString *out, const ResultsCell *cell);

/* ---- CSV writers ------------------------------------------------------- */

typedef struct ResultsCsv ResultsCsv;             /* main schema */
typedef struct ResultsSubvolCsv ResultsSubvolCsv; /* per-subvolume schema */

/* Creates or truncates `path` ("-" is standard output, not closed at the end)
 * and writes the header line.  Returns NULL and sets a G_FILE_ERROR naming the
 * path if it cannot be opened or the header cannot be written. */
ResultsCsv *results_csv_open(const char *path, GError **error);

/* Writes one row as one whole line (RS1-RS3).  FALSE with an error on failure. */
gboolean results_csv_write_row(ResultsCsv *csv, const ResultsRow *row, GError **error);

/* The path given to open, for messages.  Owned by the writer. */
const char *results_csv_path(const ResultsCsv *csv);

/* Closes and frees `csv` (NULL is fine).  Returns FALSE and sets an error if
 * close(2) reports one, for example a delayed ENOSPC; `csv` is freed anyway. */
gboolean results_csv_close(ResultsCsv *csv, GError **error);

/* The same, but the lines go to `to` (NULL: the path given to open), and the
 * path given to open stays as it was: a run that stopped early keeps its
 * rows in PATH.partial. A path written in place (a device, a pipe) is closed. */
gboolean results_csv_close_to(ResultsCsv *csv, const char *to, GError **error);
/* Closes `csv` (NULL is fine) and removes its lines: the path given to open
 * stays as it was. */
void results_csv_discard(ResultsCsv *csv);

/* results_csv_close() for cleanup paths: the error is dropped. */
void results_csv_free(ResultsCsv *csv);

ResultsSubvolCsv *results_subvol_csv_open(const char *path, GError **error);
gboolean results_subvol_csv_write_row(ResultsSubvolCsv *csv, const ResultsSubvolRow *row,
				      GError **error);
const char *results_subvol_csv_path(const ResultsSubvolCsv *csv);
gboolean results_subvol_csv_close(ResultsSubvolCsv *csv, GError **error);
gboolean results_subvol_csv_close_to(ResultsSubvolCsv *csv, const char *to, GError **error);
void results_subvol_csv_discard(ResultsSubvolCsv *csv);
void results_subvol_csv_free(ResultsSubvolCsv *csv);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ResultsCsv, results_csv_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ResultsSubvolCsv, results_subvol_csv_free)

/* ---- readable tables --------------------------------------------------- */

/*
 * A summary for a terminal:
 *
 *   label            op_index   metadata_used              data_used
 *   after_copy           9880   26132480  24.9 MiB   120733696 115.1 MiB
 *   after_grep          10112  272482304 259.9 MiB   120733696 115.1 MiB
 *
 * Text is left-aligned, numbers right-aligned, BYTES columns show the exact
 * count and then the IEC size with one decimal (B, KiB, MiB, GiB, TiB, PiB),
 * doubles %.3f, unset cells "-".  Control characters in text are escaped.
 */
typedef struct ResultsTable ResultsTable;

ResultsTable *results_table_new(void); /* no columns yet; cannot fail */
void results_table_free(ResultsTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ResultsTable, results_table_free)

/* Adds a column; only before the first row.  `title` is copied. */
void results_table_add_column(ResultsTable *table, const char *title, ResultsUnit unit);

/* Adds the main-schema columns `cols[0..n)` with their names as titles; rows
 * can then be added with results_table_add_results_row(). */
void results_table_add_main_columns(ResultsTable *table, const ResultsColumn *cols, gsize n);

/* Adds a row of `n_cells` cells, one per column (strings copied).  FALSE and
 * RESULTS_ERROR_INVALID_CELL if n_cells differs from the number of columns. */
gboolean results_table_add_row(ResultsTable *table, const ResultsCell *cells, gsize n_cells,
			       GError **error);

/* Adds the cells of `row` for the columns given to results_table_add_main_columns()
 * (only those columns may be in the table).  FALSE and an error otherwise. */
gboolean results_table_add_results_row(ResultsTable *table, const ResultsRow *row,
				       GError **error);

/* Prints the titles and the rows.  FALSE and a G_FILE_ERROR if `out` reports
 * a write error. */
gboolean results_table_print(const ResultsTable *table, FILE *out, GError **error);

/* As results_table_print(), but with `max_width` > 0 the table fits that many
 * columns of text: BYTES columns show the IEC size alone, and the columns
 * that do not fit (from the right) are left out with a last line saying how
 * many ("(3 more columns with --wide)").  0: every column, as above. */
gboolean results_table_print_width(const ResultsTable *table, FILE *out, gsize max_width, GError **error);

/* Rows added so far. */
guint results_table_n_rows(const ResultsTable *table);

/* Writes `bytes` as an IEC size with one decimal ("25.0 MiB", "512 B") into
 * `buf`, locale-independent.  Returns buf.  Cannot fail. */
#define RESULTS_SIZE_BUF 32
char *results_format_size(guint64 bytes, char buf[RESULTS_SIZE_BUF]);

G_END_DECLS

#endif
