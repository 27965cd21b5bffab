/*
 * results/table.c - aligned summary tables for humans.
 *
 * How it works
 *   Cells are rendered to text when a row is added (so string cells may be
 *   freed right after), in one or two parts: a BYTES column has the exact
 *   count in part A and the IEC size in part B, every other column part A
 *   only.  Printing measures the widest part of each column and pads:
 *
 *     |<- wa ->| |<- wb ->|
 *      26132480   24.9 MiB      (BYTES: A right-aligned, B right-aligned)
 *     after_copy                (TEXT: left-aligned, A only)
 *
 *   Columns are separated by two spaces; trailing spaces are dropped.
 *
 * Invariants
 *   TB1  Every row has exactly one rendered cell per column (n_columns parts
 *       A and B, B NULL outside BYTES columns).
 *   TB2  Columns are fixed once a row exists.
 *   TB3  Output depends only on the cells (no locale: g_ascii_formatd).
 *   TB4  With a width limit, no line is longer than the limit unless its first
 *       column alone is; columns are left out whole, and the last line says so.
 */
#include <errno.h>
#include <string.h>

#include "results.h"

#define COLUMN_GAP "  "

struct table_column {
	char *title;
	ResultsUnit unit;
	ResultsColumn main_col; /* when added by results_table_add_main_columns() */
	gboolean has_main_col;
};

struct ResultsTable {
	GArray *columns;  /* of struct table_column */
	GPtrArray *rows;  /* of char ** with 2 * n_columns strings (TB1) */
};

static void column_clear(gpointer p)
{
	struct table_column *c = p;
	g_free(c->title);
}

static void row_free(gpointer p)
{
	char **parts = p;
	/* parts B may be NULL, so free by count rather than g_strfreev() */
	for (gsize i = 0; parts[i] != NULL || parts[i + 1] != NULL; i += 2) {
		g_free(parts[i]);
		g_free(parts[i + 1]);
	}
	g_free(parts);
}

ResultsTable *results_table_new(void)
{
	ResultsTable *t = g_new0(ResultsTable, 1);
	t->columns = g_array_new(FALSE, TRUE, sizeof(struct table_column));
	g_array_set_clear_func(t->columns, column_clear);
	t->rows = g_ptr_array_new_with_free_func(row_free);
	return t;
}

void results_table_free(ResultsTable *table)
{
	if (!table)
		return;
	g_ptr_array_unref(table->rows);
	g_array_unref(table->columns);
	g_free(table);
}

void results_table_add_column(ResultsTable *table, const char *title, ResultsUnit unit)
{
	g_return_if_fail(table->rows->len == 0); /* TB2 */
	struct table_column c = { .title = g_strdup(title), .unit = unit };
	g_array_append_val(table->columns, c);
}

void results_table_add_main_columns(ResultsTable *table, const ResultsColumn *cols, gsize n)
{
	const ResultsColumnInfo *info = results_columns();

	g_return_if_fail(table->rows->len == 0); /* TB2 */
	for (gsize i = 0; i < n; i++) {
		g_return_if_fail(cols[i] < RESULTS_N_COLUMNS);
		struct table_column c = { .title = g_strdup(info[cols[i]].name),
					  .unit = info[cols[i]].unit,
					  .main_col = cols[i],
					  .has_main_col = TRUE };
		g_array_append_val(table->columns, c);
	}
}

char *results_format_size(guint64 bytes, char buf[RESULTS_SIZE_BUF])
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	char num[G_ASCII_DTOSTR_BUF_SIZE];

	if (bytes < 1024) {
		g_snprintf(buf, RESULTS_SIZE_BUF, "%u B", (unsigned)bytes);
		return buf;
	}
	double v = (double)bytes / 1024.0;
	gsize u = 0;
	/* move up while the one-decimal rendering would read 1024.0 or more */
	while (v >= 1023.95 && u + 1 < G_N_ELEMENTS(units)) {
		v /= 1024.0;
		u++;
	}
	g_snprintf(buf, RESULTS_SIZE_BUF, "%s %s", g_ascii_formatd(num, sizeof num, "%.1f", v),
		   units[u]);
	return buf;
}

/* Text for a terminal: control characters become \n, \t, \r or \xHH. */
static char *escape_text(const char *s)
{
	GString *out = g_string_new(NULL);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '\n': g_string_append(out, "\\n"); break;
		case '\t': g_string_append(out, "\\t"); break;
		case '\r': g_string_append(out, "\\r"); break;
		case '\\': g_string_append(out, "\\\\"); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				g_string_append_printf(out, "\\x%02x", *p);
			else
				g_string_append_c(out, (char)*p);
		}
	}
	return g_string_free(out, FALSE);
}

/* Renders one cell into parts *a and *b (b stays NULL outside BYTES). */
static void render_cell(const ResultsCell *cell, ResultsUnit unit, char **a, char **b)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	char size[RESULTS_SIZE_BUF];

	*b = NULL;
	switch (cell->kind) {
	case RESULTS_CELL_UNSET:
		*a = g_strdup("-");
		break;
	case RESULTS_CELL_U64:
		*a = g_strdup_printf("%" G_GUINT64_FORMAT, cell->v.u64);
		if (unit == RESULTS_UNIT_BYTES)
			*b = g_strdup(results_format_size(cell->v.u64, size));
		break;
	case RESULTS_CELL_I64:
		*a = g_strdup_printf("%" G_GINT64_FORMAT, cell->v.i64);
		if (unit == RESULTS_UNIT_BYTES && cell->v.i64 >= 0)
			*b = g_strdup(results_format_size((guint64)cell->v.i64, size));
		break;
	case RESULTS_CELL_DOUBLE:
		*a = g_strdup(g_ascii_formatd(buf, sizeof buf, "%.3f", cell->v.d + 0.0));
		break;
	case RESULTS_CELL_STRING:
		*a = escape_text(cell->v.str ? cell->v.str : "");
		break;
	}
	if (unit == RESULTS_UNIT_BYTES && *b == NULL)
		*b = g_strdup("");
}

gboolean results_table_add_row(ResultsTable *table, const ResultsCell *cells, gsize n_cells,
			       GError **error)
{
	guint n = table->columns->len;

	if (n_cells != n) {
		g_set_error(error, RESULTS_ERROR, RESULTS_ERROR_INVALID_CELL,
			    "table row has %" G_GSIZE_FORMAT " cells for %u columns", n_cells, n);
		return FALSE;
	}
	/* 2 parts per column, then two NULLs that end the array for row_free() */
	char **parts = g_new0(char *, 2 * (gsize)n + 2);
	for (guint i = 0; i < n; i++) {
		const struct table_column *c = &g_array_index(table->columns, struct table_column, i);
		render_cell(&cells[i], c->unit, &parts[2 * i], &parts[2 * i + 1]);
	}
	g_ptr_array_add(table->rows, parts);
	return TRUE;
}

gboolean results_table_add_results_row(ResultsTable *table, const ResultsRow *row,
				       GError **error)
{
	guint n = table->columns->len;
	g_autofree ResultsCell *cells = g_new0(ResultsCell, n > 0 ? n : 1);

	for (guint i = 0; i < n; i++) {
		const struct table_column *c = &g_array_index(table->columns, struct table_column, i);
		if (!c->has_main_col) {
			g_set_error(error, RESULTS_ERROR, RESULTS_ERROR_INVALID_CELL,
				    "table column '%s' is not a results column", c->title);
			return FALSE;
		}
		cells[i] = row->cells[c->main_col];
	}
	return results_table_add_row(table, cells, n, error);
}

/* Display width: characters of valid UTF-8, bytes otherwise. */
static gsize text_width(const char *s)
{
	return g_utf8_validate(s, -1, NULL) ? (gsize)g_utf8_strlen(s, -1) : strlen(s);
}

static void pad(GString *line, gsize n)
{
	while (n-- > 0)
		g_string_append_c(line, ' ');
}

/* Appends `s` padded to `width`, right- or left-aligned. */
static void append_aligned(GString *line, const char *s, gsize width, gboolean right)
{
	gsize w = text_width(s);
	if (right)
		pad(line, width > w ? width - w : 0);
	g_string_append(line, s);
	if (!right)
		pad(line, width > w ? width - w : 0);
}

static void end_line(GString *line, GString *out)
{
	gsize len = line->len;
	while (len > 0 && line->str[len - 1] == ' ')
		len--;
	g_string_append_len(out, line->str, (gssize)len);
	g_string_append_c(out, '\n');
	g_string_truncate(line, 0);
}

/* Computes the widths of parts A and B of every column (B 0 outside BYTES,
 * and A 0 for BYTES when `compact`: the size alone), widening the body so
 * that the title fits over A + " " + B. */
static void measure(const ResultsTable *t, gboolean compact, gsize *wa, gsize *wb)
{
	guint n = t->columns->len;

	for (guint i = 0; i < n; i++) {
		const struct table_column *c = &g_array_index(t->columns, struct table_column, i);
		gboolean bytes = c->unit == RESULTS_UNIT_BYTES;
		wa[i] = wb[i] = 0;
		for (guint r = 0; r < t->rows->len; r++) {
			char **parts = g_ptr_array_index(t->rows, r);
			if (!(bytes && compact))
				wa[i] = MAX(wa[i], text_width(parts[2 * i]));
			if (parts[2 * i + 1])
				wb[i] = MAX(wb[i], text_width(parts[2 * i + 1]));
		}
		gsize body = bytes ? (compact ? wb[i] : wa[i] + 1 + wb[i]) : wa[i];
		gsize title = text_width(c->title);
		if (title > body) {
			if (bytes && compact)
				wb[i] += title - body;
			else
				wa[i] += title - body;
		}
	}
}

static gsize column_width(const ResultsTable *t, guint i, gboolean compact, const gsize *wa, const gsize *wb)
{
	const struct table_column *c = &g_array_index(t->columns, struct table_column, i);
	if (c->unit != RESULTS_UNIT_BYTES)
		return wa[i];
	return compact ? wb[i] : wa[i] + 1 + wb[i];
}

gboolean results_table_print(const ResultsTable *table, FILE *out, GError **error)
{
	return results_table_print_width(table, out, 0, error);
}

gboolean results_table_print_width(const ResultsTable *table, FILE *out, gsize max_width, GError **error)
{
	guint n = table->columns->len;
	gboolean compact = max_width > 0;
	g_autofree gsize *wa = g_new0(gsize, n + 1);
	g_autofree gsize *wb = g_new0(gsize, n + 1);
	g_autoptr(GString) text = g_string_new(NULL);
	g_autoptr(GString) line = g_string_new(NULL);

	measure(table, compact, wa, wb);
	guint shown = n;
	if (compact) { /* TB4: whole columns, from the left, while they fit */
		gsize width = 0;
		for (shown = 0; shown < n; shown++) {
			gsize w = width + (shown ? strlen(COLUMN_GAP) : 0) + column_width(table, shown, compact, wa, wb);
			if (w > max_width && shown > 0)
				break;
			width = w;
		}
	}
	for (guint i = 0; i < shown; i++) {
		const struct table_column *c = &g_array_index(table->columns, struct table_column, i);
		if (i > 0)
			g_string_append(line, COLUMN_GAP);
		append_aligned(line, c->title, column_width(table, i, compact, wa, wb), c->unit != RESULTS_UNIT_TEXT);
	}
	end_line(line, text);
	for (guint r = 0; r < table->rows->len; r++) {
		char **parts = g_ptr_array_index(table->rows, r);
		for (guint i = 0; i < shown; i++) {
			const struct table_column *c =
				&g_array_index(table->columns, struct table_column, i);
			if (i > 0)
				g_string_append(line, COLUMN_GAP);
			if (!(compact && c->unit == RESULTS_UNIT_BYTES))
				append_aligned(line, parts[2 * i], wa[i], c->unit != RESULTS_UNIT_TEXT);
			if (c->unit == RESULTS_UNIT_BYTES) {
				if (!compact)
					g_string_append_c(line, ' ');
				append_aligned(line, parts[2 * i + 1], wb[i], TRUE);
			}
		}
		end_line(line, text);
	}
	if (shown < n)
		g_string_append_printf(text, "(%u more column%s with --wide)\n", n - shown, n - shown == 1 ? "" : "s");
	errno = 0;
	if (fwrite(text->str, 1, text->len, out) != text->len || fflush(out) != 0) {
		int saved = errno ? errno : EIO;
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
			    "cannot write the summary table: %s", g_strerror(saved));
		return FALSE;
	}
	return TRUE;
}

guint results_table_n_rows(const ResultsTable *table)
{
	return table->rows->len;
}
