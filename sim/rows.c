/*
 * sim/rows.c - replay rows into result cells, and one line per run
 * (see rows.h for the picture and the invariants RW1-RW4).
 */
#include "rows.h"

#include <math.h>

#include <string.h>

/* ---- rows of a run ------------------------------------------------------- */

uint64_t rows_free_bytes(const struct space_report *s, const struct fs_config *config)
{
	/* the measure model/policy_threshold.c free_bytes() tests, from the report */
	return space_report_metadata_free(s, config->device_size, !config->metadata_single);
}

/* The model's causes, in the order of RESULTS_ATTRIBUTION_COLUMNS. */
G_STATIC_ASSERT(RESULTS_COL_METADATA_BY_DELETE - RESULTS_COL_METADATA_BY_MKFS + 1 == SPACE_CAUSE_COUNT);
static void fill_attribution(const struct space_report *s, ResultsRow *row)
{
	static const struct {
		ResultsColumn column;
		enum space_cause cause;
	} map[] = {
		{ RESULTS_COL_METADATA_BY_MKFS, SPACE_CAUSE_MKFS },
		{ RESULTS_COL_METADATA_BY_WRITE, SPACE_CAUSE_WRITE },
		{ RESULTS_COL_METADATA_BY_ATIME, SPACE_CAUSE_ATIME },
		{ RESULTS_COL_METADATA_BY_SNAPSHOT, SPACE_CAUSE_SNAPSHOT },
		{ RESULTS_COL_METADATA_BY_DELETE, SPACE_CAUSE_DELETE },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(map); i++)
		row->cells[map[i].column] = results_cell_u64(s->cause_bytes[map[i].cause]);
}

/* The identity columns close both per-run schemas, in the parameters' order. */
G_STATIC_ASSERT((int)RESULTS_COL_DEVICE_SIZE - (int)RESULTS_COL_DESIGN == (int)RESULTS_PARAM_COL_DEVICE_SIZE &&
		(int)RESULTS_COL_DEVICE_SIZE == (int)RESULTS_N_COLUMNS - 1);
G_STATIC_ASSERT((int)RESULTS_SUBVOL_COL_DEVICE_SIZE - (int)RESULTS_SUBVOL_COL_DESIGN ==
		(int)RESULTS_PARAM_COL_DEVICE_SIZE &&
		(int)RESULTS_SUBVOL_COL_DEVICE_SIZE == (int)RESULTS_SUBVOL_N_COLUMNS - 1);

void rows_identity_init(struct rows_identity *identity, const struct fs_config *config)
{
	identity->design = fs_design_name(config->design);
	atime_format_options(&config->atime, identity->mount, sizeof(identity->mount));
	fs_policy_describe(config, identity->policy, sizeof(identity->policy));
	identity->nodesize = config->nodesize;
	identity->device_size = config->device_size;
}

void rows_identity_fill(const struct rows_identity *identity, ResultsCell *cells)
{
	cells[RESULTS_PARAM_COL_DESIGN] = results_cell_string(identity->design);
	cells[RESULTS_PARAM_COL_MOUNT] = results_cell_string(identity->mount);
	cells[RESULTS_PARAM_COL_POLICY] = results_cell_string(identity->policy);
	cells[RESULTS_PARAM_COL_NODESIZE] = results_cell_u64(identity->nodesize);
	cells[RESULTS_PARAM_COL_DEVICE_SIZE] = results_cell_u64(identity->device_size);
}

void rows_fill(const struct replay_row *r, const struct fs_config *config, ResultsRow *row)
{
	const struct space_report *s = &r->report.space;
	const struct fs_counters *c = &r->report.counters;
	memset(row, 0, sizeof(*row));
	row->cells[RESULTS_COL_OP_INDEX] = results_cell_u64(r->op_index);
	row->cells[RESULTS_COL_TIME_S] = results_cell_double(r->time_s);
	row->cells[RESULTS_COL_ELAPSED_S] = results_cell_double(r->elapsed_s);
	row->cells[RESULTS_COL_LABEL] = results_cell_string(r->label);
	row->cells[RESULTS_COL_METADATA_USED] = results_cell_u64(s->metadata_used);
	row->cells[RESULTS_COL_METADATA_RAW] = results_cell_u64(s->metadata_raw);
	row->cells[RESULTS_COL_METADATA_TOTAL] = results_cell_u64(s->metadata_total);
	row->cells[RESULTS_COL_DATA_USED] = results_cell_u64(s->data_used);
	row->cells[RESULTS_COL_DATA_TOTAL] = results_cell_u64(s->data_total);
	row->cells[RESULTS_COL_GLOBAL_RESERVE] = results_cell_u64(s->global_reserve);
	row->cells[RESULTS_COL_TREE_FS] = results_cell_u64(s->tree_bytes[TREE_CATEGORY_FS]);
	row->cells[RESULTS_COL_TREE_EXTENT] = results_cell_u64(s->tree_bytes[TREE_CATEGORY_EXTENT]);
	row->cells[RESULTS_COL_TREE_CSUM] = results_cell_u64(s->tree_bytes[TREE_CATEGORY_CSUM]);
	row->cells[RESULTS_COL_TREE_ROOT] = results_cell_u64(s->tree_bytes[TREE_CATEGORY_ROOT]);
	row->cells[RESULTS_COL_TREE_FREE_SPACE] = results_cell_u64(s->tree_bytes[TREE_CATEGORY_FREE_SPACE]);
	row->cells[RESULTS_COL_TREE_OTHER] = results_cell_u64(s->tree_bytes[TREE_CATEGORY_OTHER]);
	row->cells[RESULTS_COL_BLOCKS_COWED] = results_cell_u64(c->blocks_cowed);
	row->cells[RESULTS_COL_BYTES_WRITTEN] = results_cell_u64(c->bytes_written);
	row->cells[RESULTS_COL_ATIME_UPDATES] = results_cell_u64(c->atime_updates);
	row->cells[RESULTS_COL_ATIME_SKIPPED] = results_cell_u64(c->atime_skipped);
	row->cells[RESULTS_COL_ENOSPC_EVENTS] = results_cell_u64(c->enospc_events);
	row->cells[RESULTS_COL_FAILED_READS] = results_cell_u64(c->failed_reads);
	row->cells[RESULTS_COL_ATIME_DROPPED] = results_cell_u64(c->atime_dropped);
	row->cells[RESULTS_COL_ATIME_LOST] = results_cell_u64(c->atime_lost);
	row->cells[RESULTS_COL_COMMITS] = results_cell_u64(c->commits);
	row->cells[RESULTS_COL_ATIME_STALE] = results_cell_u64(c->atime_stale);
	row->cells[RESULTS_COL_UNSHARE_ESTIMATE] = results_cell_u64(c->unshare_estimate);
	fill_attribution(s, row);
}

struct run_sink {
	ResultsCsv *csv;
	const struct fs_config *config;
	struct rows_identity identity;
	struct rows_summary *summary;
	const char *base;
};

static void summary_note(struct run_sink *sink, const struct replay_row *r)
{
	struct rows_summary *s = sink->summary;
	if (r->label)
		s->marks++;
	if (r->label && !s->base_label && (!sink->base || !strcmp(sink->base, r->label))) {
		s->base_label = g_strdup(r->label);
		s->metadata_base = r->report.space.metadata_used;
	}
	uint64_t free_bytes = rows_free_bytes(&r->report.space, sink->config);
	if (free_bytes < s->free_min)
		s->free_min = free_bytes;
}

static bool run_sink_row(void *opaque, const struct replay_row *r, GError **error)
{
	struct run_sink *sink = opaque;
	summary_note(sink, r);
	if (!sink->csv)
		return true;
	ResultsRow row;
	rows_fill(r, sink->config, &row);
	rows_identity_fill(&sink->identity, &row.cells[RESULTS_COL_DESIGN]);
	return results_csv_write_row(sink->csv, &row, error);
}

enum replay_status rows_run(const char *trace, const struct replay_options *options, const char *csv_path,
			    const char *base, struct rows_summary *summary, GError **error)
{
	memset(summary, 0, sizeof(*summary));
	summary->free_min = UINT64_MAX;
	struct run_sink sink = { .config = &options->fs, .summary = summary, .base = base };
	rows_identity_init(&sink.identity, &options->fs);
	if (csv_path && !(sink.csv = results_csv_open(csv_path, error)))
		return summary->outcome.status = REPLAY_SINK_FAILED;
	enum replay_status status = replay_run(trace, options, run_sink_row, &sink, &summary->outcome, error);
	uint64_t end_free = rows_free_bytes(&summary->outcome.final.space, &options->fs);
	if (end_free < summary->free_min)
		summary->free_min = end_free;
	g_autoptr(GError) close_error = NULL;
	if (!results_csv_close(g_steal_pointer(&sink.csv), &close_error) && status == REPLAY_DONE) {
		g_propagate_error(error, g_steal_pointer(&close_error));
		status = summary->outcome.status = REPLAY_SINK_FAILED;
	}
	return status;
}

void rows_summary_clear(struct rows_summary *summary)
{
	g_clear_pointer(&summary->base_label, g_free);
}

const char *rows_status_name(enum replay_status status)
{
	switch (status) {
	case REPLAY_DONE: return "done";
	case REPLAY_ENOSPC: return "enospc";
	case REPLAY_BAD_INPUT: return "bad-input";
	case REPLAY_INTERRUPTED: return "interrupted";
	case REPLAY_CORRUPT: return "corrupt";
	case REPLAY_SINK_FAILED: return "sink-failed";
	}
	return "?";
}

/* ---- summary columns ------------------------------------------------------ */

/* The columns are results/columns.h's RESULTS_SUMMARY_COLUMNS. */
G_STATIC_ASSERT(FS_STALENESS_BUCKETS == RESULTS_SUMMARY_COL_STALE_GE_30D - RESULTS_SUMMARY_COL_STALE_LT_1H + 1);

/* Printed on the terminal; the files have every column. */
static const ResultsSummaryColumn printed_columns[] = {
	RESULTS_SUMMARY_COL_STATUS, RESULTS_SUMMARY_COL_METADATA_FINAL, RESULTS_SUMMARY_COL_AMPLIFICATION,
	RESULTS_SUMMARY_COL_ATIME_UPDATES, RESULTS_SUMMARY_COL_ATIME_SKIPPED, RESULTS_SUMMARY_COL_FAILED_READS,
	RESULTS_SUMMARY_COL_ATIME_DROPPED, RESULTS_SUMMARY_COL_ATIME_LOST, RESULTS_SUMMARY_COL_ATIME_STALE,
	RESULTS_SUMMARY_COL_BYTES_WRITTEN,
};

static void summary_cells(const struct rows_summary *s, const struct fs_config *config, ResultsCell *cells)
{
	const struct fs_counters *c = &s->outcome.final.counters;
	uint64_t final = s->outcome.final.space.metadata_used;
	cells[RESULTS_SUMMARY_COL_STATUS] = results_cell_string(rows_status_name(s->outcome.status));
	cells[RESULTS_SUMMARY_COL_OPS] = results_cell_u64(s->outcome.ops);
	cells[RESULTS_SUMMARY_COL_BASE_MARK] = results_cell_string(s->base_label);
	cells[RESULTS_SUMMARY_COL_METADATA_BASE] = s->base_label ? results_cell_u64(s->metadata_base)
								  : results_cell_unset();
	cells[RESULTS_SUMMARY_COL_METADATA_FINAL] = results_cell_u64(final);
	cells[RESULTS_SUMMARY_COL_AMPLIFICATION] = s->base_label && s->metadata_base ? /* RW2 */
		results_cell_double((double)final / (double)s->metadata_base) : results_cell_unset();
	cells[RESULTS_SUMMARY_COL_DATA_USED] = results_cell_u64(s->outcome.final.space.data_used);
	cells[RESULTS_SUMMARY_COL_BLOCKS_COWED] = results_cell_u64(c->blocks_cowed);
	cells[RESULTS_SUMMARY_COL_ATIME_UPDATES] = results_cell_u64(c->atime_updates);
	cells[RESULTS_SUMMARY_COL_ATIME_SKIPPED] = results_cell_u64(c->atime_skipped);
	cells[RESULTS_SUMMARY_COL_ATIME_READONLY] = results_cell_u64(c->atime_readonly);
	cells[RESULTS_SUMMARY_COL_ATIME_THRESHOLD] = results_cell_u64(c->atime_threshold);
	cells[RESULTS_SUMMARY_COL_ATIME_DROPPED] = results_cell_u64(c->atime_dropped);
	cells[RESULTS_SUMMARY_COL_ATIME_LOST] = results_cell_u64(c->atime_lost);
	cells[RESULTS_SUMMARY_COL_COMMITS] = results_cell_u64(c->commits);
	cells[RESULTS_SUMMARY_COL_ENOSPC_COMMITS] = results_cell_u64(c->enospc_commits);
	cells[RESULTS_SUMMARY_COL_ATIME_STALE] = results_cell_u64(c->atime_stale);
	for (unsigned i = 0; i < FS_STALENESS_BUCKETS; i++)
		cells[RESULTS_SUMMARY_COL_STALE_LT_1H + i] = results_cell_u64(c->staleness[i]);
	cells[RESULTS_SUMMARY_COL_FAILED_READS] = results_cell_u64(c->failed_reads);
	cells[RESULTS_SUMMARY_COL_ENOSPC_EVENTS] = results_cell_u64(c->enospc_events);
	cells[RESULTS_SUMMARY_COL_BYTES_WRITTEN] = results_cell_u64(c->bytes_written);
	cells[RESULTS_SUMMARY_COL_FREE_MIN] = results_cell_u64(s->free_min);
	cells[RESULTS_SUMMARY_COL_UNSHARE_ESTIMATE] = results_cell_u64(c->unshare_estimate);
}

/* ---- the table ------------------------------------------------------------ */

struct RowsTable {
	GArray *columns;              /* of ResultsColumnInfo: params, then summary_columns */
	unsigned n_params;
	GPtrArray *rows;              /* of ResultsCell[columns->len] */
	GStringChunk *strings;        /* the text of every string cell and parameter name */
};

RowsTable *rows_table_new(const struct rows_param *params, unsigned n_params)
{
	RowsTable *t = g_new0(RowsTable, 1);
	t->columns = g_array_new(FALSE, FALSE, sizeof(ResultsColumnInfo));
	t->rows = g_ptr_array_new_with_free_func(g_free);
	t->strings = g_string_chunk_new(4096);
	t->n_params = n_params;
	for (unsigned i = 0; i < n_params; i++) {
		ResultsColumnInfo info = { g_string_chunk_insert_const(t->strings, params[i].name), params[i].kind,
					   params[i].unit, "a parameter of the run" };
		g_array_append_val(t->columns, info);
	}
	g_array_append_vals(t->columns, results_summary_columns(), RESULTS_SUMMARY_N_COLUMNS);
	return t;
}

static const ResultsColumnInfo *column(const RowsTable *t, unsigned i);

RowsTable *rows_table_copy_columns(const RowsTable *t)
{
	RowsTable *copy = g_new0(RowsTable, 1);
	copy->columns = g_array_copy(t->columns);
	copy->rows = g_ptr_array_new_with_free_func(g_free);
	copy->strings = g_string_chunk_new(4096);
	copy->n_params = t->n_params;
	for (unsigned i = 0; i < copy->columns->len; i++) /* the names live in each table's own strings */
		g_array_index(copy->columns, ResultsColumnInfo, i).name =
			g_string_chunk_insert_const(copy->strings, column(t, i)->name);
	return copy;
}

void rows_table_free(RowsTable *t)
{
	if (!t)
		return;
	g_array_unref(t->columns);
	g_ptr_array_unref(t->rows);
	g_string_chunk_free(t->strings);
	g_free(t);
}

void rows_table_add(RowsTable *t, const ResultsCell *params, const struct rows_summary *summary,
		    const struct fs_config *config)
{
	ResultsCell *cells = g_new0(ResultsCell, t->columns->len);
	memcpy(cells, params, t->n_params * sizeof(*cells));
	summary_cells(summary, config, cells + t->n_params);
	for (unsigned i = 0; i < t->columns->len; i++)
		if (cells[i].kind == RESULTS_CELL_STRING)
			cells[i].v.str = g_string_chunk_insert_const(t->strings, cells[i].v.str);
	g_ptr_array_add(t->rows, cells);
}

unsigned rows_table_n_rows(const RowsTable *t)
{
	return t->rows->len;
}

static const ResultsColumnInfo *column(const RowsTable *t, unsigned i)
{
	return &g_array_index(t->columns, ResultsColumnInfo, i);
}

unsigned rows_table_n_columns(const RowsTable *t)
{
	return t->columns->len;
}

const char *rows_table_column_name(const RowsTable *t, unsigned i)
{
	return column(t, i)->name;
}

GPtrArray *rows_table_line_texts(const RowsTable *t, unsigned r)
{
	const ResultsCell *cells = t->rows->pdata[r];
	GPtrArray *texts = g_ptr_array_new_full(t->columns->len, g_free);
	g_autoptr(GString) text = g_string_new(NULL);
	for (unsigned i = 0; i < t->columns->len; i++) {
		g_string_truncate(text, 0);
		results_append_cell_text(text, &cells[i]);
		g_ptr_array_add(texts, cells[i].kind == RESULTS_CELL_UNSET ? NULL : g_strdup(text->str));
	}
	return texts;
}

void rows_table_json_line(const RowsTable *t, unsigned r, ResultsJson *w)
{
	const ResultsCell *cells = t->rows->pdata[r];
	for (unsigned i = 0; i < t->columns->len; i++)
		results_json_cell(w, column(t, i)->name, &cells[i]);
}

static gboolean cell_from_text(const ResultsColumnInfo *col, const char *text, ResultsCell *cell, GError **error)
{
	char *end = NULL;
	if (!text) {
		*cell = results_cell_unset();
		return TRUE;
	}
	switch (col->kind) {
	case RESULTS_CELL_STRING:
		*cell = results_cell_string(text);
		return TRUE;
	case RESULTS_CELL_U64:
		if (g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, &cell->v.u64, NULL)) {
			cell->kind = RESULTS_CELL_U64;
			return TRUE;
		}
		break;
	case RESULTS_CELL_I64:
		if (g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, &cell->v.i64, NULL)) {
			cell->kind = RESULTS_CELL_I64;
			return TRUE;
		}
		break;
	case RESULTS_CELL_DOUBLE:
		*cell = results_cell_double(g_ascii_strtod(text, &end));
		if (*text && end && !*end && isfinite(cell->v.d))
			return TRUE;
		break;
	case RESULTS_CELL_UNSET:
		break;
	}
	g_set_error(error, RESULTS_ERROR, RESULTS_ERROR_INVALID_CELL, "column '%s': '%s' is not a %s", col->name,
		    text, col->kind == RESULTS_CELL_DOUBLE ? "number" : "whole number");
	return FALSE;
}

gboolean rows_table_add_texts(RowsTable *t, const char *const *texts, GError **error)
{
	g_autofree ResultsCell *cells = g_new0(ResultsCell, t->columns->len);
	for (unsigned i = 0; i < t->columns->len; i++)
		if (!cell_from_text(column(t, i), texts[i], &cells[i], error))
			return FALSE;
	for (unsigned i = 0; i < t->columns->len; i++)
		if (cells[i].kind == RESULTS_CELL_STRING)
			cells[i].v.str = g_string_chunk_insert_const(t->strings, cells[i].v.str);
	g_ptr_array_add(t->rows, g_steal_pointer(&cells));
	return TRUE;
}

gboolean rows_table_write_csv(const RowsTable *t, const char *path, GError **error)
{
	g_autoptr(GString) out = g_string_new(NULL);
	for (unsigned i = 0; i < t->columns->len; i++)
		g_string_append_printf(out, "%s%s", i ? "," : "", column(t, i)->name);
	g_string_append_c(out, '\n');
	for (unsigned r = 0; r < t->rows->len; r++)
		if (!results_format_line(out, (const ResultsColumnInfo *)(void *)t->columns->data, t->rows->pdata[r],
					 t->columns->len, error))
			return FALSE;
	return g_file_set_contents(path, out->str, (gssize)out->len, error);
}

static void markdown_cell(GString *out, const ResultsColumnInfo *col, const ResultsCell *cell)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	switch (cell->kind) {
	case RESULTS_CELL_UNSET:
		g_string_append(out, "-");
		break;
	case RESULTS_CELL_U64:
		if (col->unit == RESULTS_UNIT_BYTES)
			g_string_append(out, g_ascii_formatd(buf, sizeof(buf), "%.1f", cell->v.u64 / 1048576.0));
		else
			g_string_append_printf(out, "%" G_GUINT64_FORMAT, cell->v.u64);
		break;
	case RESULTS_CELL_I64:
		g_string_append_printf(out, "%" G_GINT64_FORMAT, cell->v.i64);
		break;
	case RESULTS_CELL_DOUBLE:
		g_string_append(out, g_ascii_formatd(buf, sizeof(buf), "%.3f", cell->v.d));
		break;
	case RESULTS_CELL_STRING:
		for (const char *p = cell->v.str; *p; p++) {
			if (*p == '|')
				g_string_append_c(out, '\\');
			g_string_append_c(out, *p == '\n' ? ' ' : *p);
		}
		break;
	}
}

gboolean rows_table_write_markdown(const RowsTable *t, const char *path, GError **error)
{
	g_autoptr(GString) out = g_string_new("|");
	for (unsigned i = 0; i < t->columns->len; i++)
		g_string_append_printf(out, " %s%s |", column(t, i)->name,
				       column(t, i)->unit == RESULTS_UNIT_BYTES ? " (MiB)" : "");
	g_string_append(out, "\n|");
	for (unsigned i = 0; i < t->columns->len; i++)
		g_string_append(out, column(t, i)->kind == RESULTS_CELL_STRING ? "---|" : "---:|");
	g_string_append_c(out, '\n');
	for (unsigned r = 0; r < t->rows->len; r++) {
		const ResultsCell *cells = t->rows->pdata[r];
		g_string_append_c(out, '|');
		for (unsigned i = 0; i < t->columns->len; i++) {
			g_string_append_c(out, ' ');
			markdown_cell(out, column(t, i), &cells[i]);
			g_string_append(out, " |");
		}
		g_string_append_c(out, '\n');
	}
	return g_file_set_contents(path, out->str, (gssize)out->len, error);
}

gboolean rows_table_print(const RowsTable *t, FILE *out, GError **error)
{
	g_autoptr(ResultsTable) table = results_table_new();
	for (unsigned i = 0; i < t->n_params; i++)
		results_table_add_column(table, column(t, i)->name, column(t, i)->unit);
	for (unsigned j = 0; j < G_N_ELEMENTS(printed_columns); j++)
		results_table_add_column(table, results_summary_columns()[printed_columns[j]].name,
					 results_summary_columns()[printed_columns[j]].unit);
	unsigned n = t->n_params + G_N_ELEMENTS(printed_columns);
	g_autofree ResultsCell *cells = g_new0(ResultsCell, n);
	for (unsigned r = 0; r < t->rows->len; r++) {
		const ResultsCell *row = t->rows->pdata[r];
		memcpy(cells, row, t->n_params * sizeof(*cells));
		for (unsigned j = 0; j < G_N_ELEMENTS(printed_columns); j++)
			cells[t->n_params + j] = row[t->n_params + printed_columns[j]];
		if (!results_table_add_row(table, cells, n, error))
			return FALSE;
	}
	return results_table_print(table, out, error);
}
