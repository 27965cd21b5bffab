/*
 * results/columns.c - the static column tables behind results.h's enums.
 *
 * How it works
 *   The X-macro lists of columns.h expand here into designated initialisers,
 *   so entry RESULTS_COL_<ID> of the table is the line X(<ID>, ...) of the
 *   list whatever the order of edits.  Nothing else in the project spells a
 *   column name; it asks these tables.
 *
 * Invariants
 *   CT1  Every entry is filled: the tables are sized by the enums' counts,
 *       which the same lists generate.
 *   CT2  (CO1 of columns.h) names are unique within a schema, and (CO5) a name
 *       has one unit across schemas; tests/results/test_csv.c checks both.
 */
#include <string.h>

#include "results.h"

#define RESULTS_X_INFO_MAIN(id, name_, kind_, unit_, doc_) \
	[RESULTS_COL_##id] = { .name = name_, .kind = RESULTS_CELL_##kind_, \
			       .unit = RESULTS_UNIT_##unit_, .doc = doc_ },
static const ResultsColumnInfo main_columns[RESULTS_N_COLUMNS] = {
	RESULTS_MAIN_COLUMNS(RESULTS_X_INFO_MAIN)
};
#undef RESULTS_X_INFO_MAIN

#define RESULTS_X_INFO_SUBVOL(id, name_, kind_, unit_, doc_) \
	[RESULTS_SUBVOL_COL_##id] = { .name = name_, .kind = RESULTS_CELL_##kind_, \
				      .unit = RESULTS_UNIT_##unit_, .doc = doc_ },
static const ResultsColumnInfo subvol_columns[RESULTS_SUBVOL_N_COLUMNS] = {
	RESULTS_SUBVOL_COLUMNS(RESULTS_X_INFO_SUBVOL)
};
#undef RESULTS_X_INFO_SUBVOL

#define RESULTS_X_INFO_SUMMARY(id, name_, kind_, unit_, doc_) \
	[RESULTS_SUMMARY_COL_##id] = { .name = name_, .kind = RESULTS_CELL_##kind_, \
				       .unit = RESULTS_UNIT_##unit_, .doc = doc_ },
static const ResultsColumnInfo summary_columns[RESULTS_SUMMARY_N_COLUMNS] = {
	RESULTS_SUMMARY_COLUMNS(RESULTS_X_INFO_SUMMARY)
};
#undef RESULTS_X_INFO_SUMMARY

#define RESULTS_X_INFO_PARAM(id, name_, kind_, unit_, doc_) \
	[RESULTS_PARAM_COL_##id] = { .name = name_, .kind = RESULTS_CELL_##kind_, \
				     .unit = RESULTS_UNIT_##unit_, .doc = doc_ },
static const ResultsColumnInfo param_columns[RESULTS_PARAM_N_COLUMNS] = {
	RESULTS_PARAM_COLUMNS(RESULTS_X_INFO_PARAM)
};
#undef RESULTS_X_INFO_PARAM

/* Nothing in C writes calibration.csv (tools/calibrate does), so its list has
 * no enum: the table is in file order. */
#define RESULTS_X_INFO_CALIBRATION(id, name_, kind_, unit_, doc_) \
	{ .name = name_, .kind = RESULTS_CELL_##kind_, .unit = RESULTS_UNIT_##unit_, .doc = doc_ },
static const ResultsColumnInfo calibration_columns[] = {
	RESULTS_CALIBRATION_COLUMNS(RESULTS_X_INFO_CALIBRATION)
};
#undef RESULTS_X_INFO_CALIBRATION

static const ResultsSchema schemas[] = {
	{ "run", "cowsim run --csv; the per-run CSVs of compare and sweep; tools/btrfs-replay",
	  main_columns, G_N_ELEMENTS(main_columns) },
	{ "subvolume", "cowsim run --subvolume-csv: one row per subvolume per mark",
	  subvol_columns, G_N_ELEMENTS(subvol_columns) },
	{ "parameter", "compare.csv and sweep.csv: the parameters of each run, before the summary",
	  param_columns, G_N_ELEMENTS(param_columns) },
	{ "summary", "compare.csv and sweep.csv: one line per run",
	  summary_columns, G_N_ELEMENTS(summary_columns) },
	{ "calibration", "results/calibration.csv (tools/calibrate): model against a real btrfs",
	  calibration_columns, G_N_ELEMENTS(calibration_columns) },
};

const ResultsSchema *results_schemas(gsize *n)
{
	*n = G_N_ELEMENTS(schemas);
	return schemas;
}

const ResultsColumnInfo *results_column_lookup(const char *name)
{
	for (gsize s = 0; s < G_N_ELEMENTS(schemas); s++)
		for (gsize c = 0; c < schemas[s].n_columns; c++)
			if (!strcmp(schemas[s].columns[c].name, name))
				return &schemas[s].columns[c];
	return NULL;
}

const char *results_unit_name(ResultsUnit unit)
{
	switch (unit) {
	case RESULTS_UNIT_TEXT: return "text";
	case RESULTS_UNIT_COUNT: return "count";
	case RESULTS_UNIT_BYTES: return "bytes";
	case RESULTS_UNIT_SECONDS: return "seconds";
	case RESULTS_UNIT_RATIO: return "ratio";
	case RESULTS_UNIT_PERCENT: return "percent";
	}
	return "?";
}

const char *results_kind_name(ResultsCellKind kind)
{
	switch (kind) {
	case RESULTS_CELL_UNSET: return "unset";
	case RESULTS_CELL_U64: return "u64";
	case RESULTS_CELL_I64: return "i64";
	case RESULTS_CELL_DOUBLE: return "double";
	case RESULTS_CELL_STRING: return "string";
	}
	return "?";
}

void results_append_json_string(GString *out, const char *s)
{
	g_string_append_c(out, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			g_string_append_printf(out, "\\%c", *p);
		else if (*p == '\n')
			g_string_append(out, "\\n");
		else if (*p < 0x20)
			g_string_append_printf(out, "\\u%04x", *p);
		else
			g_string_append_c(out, (char)*p);
	}
	g_string_append_c(out, '"');
}

const ResultsColumnInfo *results_summary_columns(void)
{
	return summary_columns;
}

const ResultsColumnInfo *results_param_columns(void)
{
	return param_columns;
}

const ResultsColumnInfo *results_columns(void)
{
	return main_columns;
}

const ResultsColumnInfo *results_subvol_columns(void)
{
	return subvol_columns;
}

G_DEFINE_QUARK(results-error-quark, results_error)
