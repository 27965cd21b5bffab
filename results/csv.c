/*
 * results/csv.c - CSV lines and the writers of whole lines.
 *
 * How it works
 *   results_format_line() renders a row into a GString (see results.h for the
 *   formatting rules).  A writer owns a file descriptor and a reusable line
 *   buffer; for each row it renders the line completely, then hands it to the
 *   kernel with one write(2):
 *
 *     base            good_end
 *      |  header\n row\n row\n | <- next line goes here in one write(2)
 *
 *   good_end is the offset just past the last whole line.  If a write fails
 *   or stops short (ENOSPC, EFBIG, EIO), the writer cuts a regular file back
 *   to good_end with ftruncate(2), so the file still ends with a whole line,
 *   and poisons itself: every later write fails with RESULTS_ERROR_POISONED.
 *   A partial write is continued (a signal may split one), so a process
 *   killed at any point leaves a torn line only if it dies between the two
 *   write(2) calls of such a rare split.
 *
 * Invariants
 *   CSV1  (RS1) a row with a bad cell writes nothing and does not poison.
 *   CSV2  (RS2) after every call, good_end - base is the number of bytes of whole
 *       lines written, and a regular file is never longer than good_end once
 *       a failure has been handled.
 *   CSV3  (RS3) poisoned implies every later write returns FALSE.
 *   CSV4  Output depends only on the cells: no locale, no clock, no address.
 *   CSV5  A file path is written through results/output_file.h: the lines go to
 *       a temporary file beside it, renamed onto the path at close, so the
 *       path shows the old file or the whole lines of a closed writer, never
 *       a file being written (a killed run leaves it as it was).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output_file.h"
#include "results.h"

/* ---- formatting -------------------------------------------------------- */

static gboolean field_needs_quotes(const char *s)
{
	if (s[0] == '\0')
		return TRUE; /* "" differs from an unset cell */
	if (strpbrk(s, ",\"\r\n"))
		return TRUE;
	size_t len = strlen(s);
	return s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t';
}

void results_append_csv_field(GString *out, const char *s)
{
	if (!field_needs_quotes(s)) {
		g_string_append(out, s);
		return;
	}
	g_string_append_c(out, '"');
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			g_string_append_c(out, '"');
		g_string_append_c(out, *p);
	}
	g_string_append_c(out, '"');
}

/* Checks CSV1/RS1 for one cell: FALSE and an error naming the column if bad. */
static gboolean cell_check(const ResultsColumnInfo *col, const ResultsCell *cell, GError **error)
{
	if (cell->kind == RESULTS_CELL_UNSET)
		return TRUE;
	if (cell->kind != col->kind) {
		g_set_error(error, RESULTS_ERROR, RESULTS_ERROR_INVALID_CELL,
			    "column '%s' holds %s values, the cell is %s", col->name,
			    results_kind_name(col->kind), results_kind_name(cell->kind));
		return FALSE;
	}
	if (cell->kind == RESULTS_CELL_DOUBLE && !isfinite(cell->v.d)) {
		g_set_error(error, RESULTS_ERROR, RESULTS_ERROR_INVALID_CELL,
			    "column '%s': %s is not a finite number", col->name,
			    isnan(cell->v.d) ? "NaN" : "infinity");
		return FALSE;
	}
	if (cell->kind == RESULTS_CELL_STRING && cell->v.str == NULL) {
		g_set_error(error, RESULTS_ERROR, RESULTS_ERROR_INVALID_CELL,
			    "column '%s': string cell with a NULL pointer", col->name);
		return FALSE;
	}
	return TRUE;
}

void results_append_cell_text(GString *out, const ResultsCell *cell)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	switch (cell->kind) {
	case RESULTS_CELL_UNSET:
		break;
	case RESULTS_CELL_U64:
		g_string_append_printf(out, "%" G_GUINT64_FORMAT, cell->v.u64);
		break;
	case RESULTS_CELL_I64:
		g_string_append_printf(out, "%" G_GINT64_FORMAT, cell->v.i64);
		break;
	case RESULTS_CELL_DOUBLE:
		/* + 0.0 turns -0.0 into 0.0, so zero always reads "0.000000" */
		g_string_append(out, g_ascii_formatd(buf, sizeof buf, "%.6f", cell->v.d + 0.0));
		break;
	case RESULTS_CELL_STRING:
		g_string_append(out, cell->v.str);
		break;
	}
}

static void append_cell(GString *out, const ResultsCell *cell)
{
	if (cell->kind == RESULTS_CELL_STRING)
		results_append_csv_field(out, cell->v.str);
	else
		results_append_cell_text(out, cell);
}

gboolean results_format_line(GString *out, const ResultsColumnInfo *columns,
			     const ResultsCell *cells, gsize n_cells, GError **error)
{
	for (gsize i = 0; i < n_cells; i++)
		if (!cell_check(&columns[i], &cells[i], error))
			return FALSE;
	for (gsize i = 0; i < n_cells; i++) {
		if (i > 0)
			g_string_append_c(out, ',');
		append_cell(out, &cells[i]);
	}
	g_string_append_c(out, '\n');
	return TRUE;
}

/* ---- the writer shared by both schemas --------------------------------- */

struct results_writer {
	char *path;                       /* as given, for messages */
	int fd;
	gboolean owns_fd;                 /* FALSE for "-" (standard output) */
	struct output_file out;           /* CSV5: when owns_fd, the file renamed onto path at close */
	const ResultsColumnInfo *columns;
	gsize n_columns;
	off_t base;                       /* offset of the header; -1: not seekable */
	off_t good_end;                   /* CSV2: just past the last whole line */
	GString *line;                    /* reused for every row */
	char *poison;                     /* CSV3: the first failure's message, or NULL */
};

struct ResultsCsv {
	struct results_writer w;
};

struct ResultsSubvolCsv {
	struct results_writer w;
};

/* Cuts a regular file back to its last whole line (CSV2).  Best effort: if it
 * fails the error already being reported is the one that matters. */
static void writer_cut_back(struct results_writer *w)
{
	struct stat st;

	if (w->base < 0 || fstat(w->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	if (ftruncate(w->fd, w->good_end) == 0)
		(void)lseek(w->fd, w->good_end, SEEK_SET);
}

/* Writes buf[0..len) with one write(2); a partial write (a signal, a full
 * device) is continued once more to learn its reason.  On failure handles
 * CSV2/CSV3 and sets a G_FILE_ERROR naming the file. */
static gboolean writer_emit(struct results_writer *w, const char *buf, gsize len, GError **error)
{
	gsize done = 0;
	int saved = 0;

	if (w->poison) {
		g_set_error(error, RESULTS_ERROR, RESULTS_ERROR_POISONED,
			    "cannot write '%s': an earlier write failed (%s)", w->path, w->poison);
		return FALSE;
	}
	while (done < len) {
		ssize_t n = write(w->fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			saved = errno;
			break;
		}
		if (n == 0) {
			saved = EIO;
			break;
		}
		done += (gsize)n; /* short: the next write(2) says why, or ends it */
	}
	if (done == len) {
		w->good_end += (off_t)len;
		return TRUE;
	}
	if (done > 0)
		writer_cut_back(w);
	w->poison = g_strdup(g_strerror(saved));
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
		    "cannot write '%s': %s", w->path, g_strerror(saved));
	return FALSE;
}

static gboolean writer_open(struct results_writer *w, const char *path,
			    const ResultsColumnInfo *columns, gsize n_columns, GError **error)
{
	memset(w, 0, sizeof(*w));
	w->path = g_strdup(path);
	w->columns = columns;
	w->n_columns = n_columns;
	w->line = g_string_sized_new(512);
	if (strcmp(path, "-") == 0) {
		w->fd = STDOUT_FILENO;
		w->owns_fd = FALSE;
	} else {
		if (!output_file_open(&w->out, path, error))
			return FALSE;
		w->fd = output_file_fd(&w->out);
		w->owns_fd = TRUE;
	}
	w->base = lseek(w->fd, 0, SEEK_CUR);
	w->good_end = w->base < 0 ? 0 : w->base;

	for (gsize i = 0; i < n_columns; i++) {
		if (i > 0)
			g_string_append_c(w->line, ',');
		g_string_append(w->line, columns[i].name);
	}
	g_string_append_c(w->line, '\n');
	return writer_emit(w, w->line->str, w->line->len, error);
}

static gboolean writer_write(struct results_writer *w, const ResultsCell *cells, GError **error)
{
	g_string_truncate(w->line, 0);
	if (!results_format_line(w->line, w->columns, cells, w->n_columns, error))
		return FALSE;
	return writer_emit(w, w->line->str, w->line->len, error);
}

/* Renames the whole lines written onto the path (CSV5), or onto `to` when
 * set, and releases everything; FALSE with an error if fsync, close or
 * rename failed. */
static gboolean writer_close_to(struct results_writer *w, const char *to, GError **error)
{
	gboolean ok = TRUE;

	if (w->owns_fd && w->fd >= 0)
		ok = output_file_commit_to(&w->out, to, error);
	w->fd = -1;
	g_free(w->path);
	g_free(w->poison);
	if (w->line)
		g_string_free(w->line, TRUE);
	return ok;
}

/* A writer whose header could not be written: PATH stays as it was. */
static void writer_discard(struct results_writer *w)
{
	if (w->owns_fd)
		output_file_discard(&w->out);
	w->owns_fd = FALSE;
	writer_close_to(w, NULL, NULL);
}

/* ---- the two schemas' public faces ------------------------------------- */

ResultsCsv *results_csv_open(const char *path, GError **error)
{
	g_return_val_if_fail(path != NULL, NULL);
	ResultsCsv *csv = g_new0(ResultsCsv, 1);
	if (!writer_open(&csv->w, path, results_columns(), RESULTS_N_COLUMNS, error)) {
		writer_discard(&csv->w);
		g_free(csv);
		return NULL;
	}
	return csv;
}

gboolean results_csv_write_row(ResultsCsv *csv, const ResultsRow *row, GError **error)
{
	g_return_val_if_fail(csv != NULL && row != NULL, FALSE);
	return writer_write(&csv->w, row->cells, error);
}

const char *results_csv_path(const ResultsCsv *csv)
{
	return csv->w.path;
}

gboolean results_csv_close(ResultsCsv *csv, GError **error)
{
	return results_csv_close_to(csv, NULL, error);
}

gboolean results_csv_close_to(ResultsCsv *csv, const char *to, GError **error)
{
	if (!csv)
		return TRUE;
	gboolean ok = writer_close_to(&csv->w, to, error);
	g_free(csv);
	return ok;
}

void results_csv_discard(ResultsCsv *csv)
{
	if (!csv)
		return;
	writer_discard(&csv->w);
	g_free(csv);
}

void results_csv_free(ResultsCsv *csv)
{
	results_csv_close(csv, NULL);
}

ResultsSubvolCsv *results_subvol_csv_open(const char *path, GError **error)
{
	g_return_val_if_fail(path != NULL, NULL);
	ResultsSubvolCsv *csv = g_new0(ResultsSubvolCsv, 1);
	if (!writer_open(&csv->w, path, results_subvol_columns(), RESULTS_SUBVOL_N_COLUMNS,
			 error)) {
		writer_discard(&csv->w);
		g_free(csv);
		return NULL;
	}
	return csv;
}

gboolean results_subvol_csv_write_row(ResultsSubvolCsv *csv, const ResultsSubvolRow *row,
				      GError **error)
{
	g_return_val_if_fail(csv != NULL && row != NULL, FALSE);
	return writer_write(&csv->w, row->cells, error);
}

const char *results_subvol_csv_path(const ResultsSubvolCsv *csv)
{
	return csv->w.path;
}

gboolean results_subvol_csv_close(ResultsSubvolCsv *csv, GError **error)
{
	return results_subvol_csv_close_to(csv, NULL, error);
}

gboolean results_subvol_csv_close_to(ResultsSubvolCsv *csv, const char *to, GError **error)
{
	if (!csv)
		return TRUE;
	gboolean ok = writer_close_to(&csv->w, to, error);
	g_free(csv);
	return ok;
}

void results_subvol_csv_discard(ResultsSubvolCsv *csv)
{
	if (!csv)
		return;
	writer_discard(&csv->w);
	g_free(csv);
}

void results_subvol_csv_free(ResultsSubvolCsv *csv)
{
	results_subvol_csv_close(csv, NULL);
}
