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
 *   T1  Every entry is filled: the tables are sized by the enums' counts,
 *       which the same lists generate.
 *   T2  (C1 of columns.h) names are unique within a schema;
 *       tests/results/test_csv.c checks it.
 */
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

const ResultsColumnInfo *results_columns(void)
{
	return main_columns;
}

const ResultsColumnInfo *results_subvol_columns(void)
{
	return subvol_columns;
}

G_DEFINE_QUARK(results-error-quark, results_error)
