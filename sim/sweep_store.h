/*
 * sim/sweep_store.h - a sweep's folder on disk: its plan and its finished
 * points, each written as it finishes, so that an interrupted sweep keeps
 * them and a rerun, a job array or a merge finds them.
 *
 * How it works
 *   DIR/sweep-plan.ini     the grid: title, parameter columns, one key per
 *                          point in grid order (written before any point runs)
 *   DIR/points/KEY.point   a finished point: its index and every cell of its
 *                          sweep.csv line, one "column=text" a line
 *   DIR/points/KEY.csv     the point's rows (the main schema, as cowsim run
 *                          writes them)
 *   DIR/sweep.csv          the finished points' lines in grid order, rebuilt
 *                          from the point files (sweep_store_table)
 *
 *   A point's KEY is the sha256 of the text that decides its result
 *   (sweep_store_key): cowsim's version, every model option, the run
 *   options, and the trace's sha256 (or, with --gen, the generator's filled
 *   command line, the generators being deterministic from their arguments).
 *   Changing any of them gives a new key, so a rerun never trusts a point
 *   computed under other inputs; the same sweep run again finds every key.
 *
 *     sweep / sweep -j N / sweep --point K  --> DIR/points/KEY.point
 *     sweep merge DIR1 DIR2 ...             --> the lines of every plan key
 *                                               found in any DIR
 *
 * Invariants
 *   SS1  Every file is written whole or not at all (a temporary file renamed
 *       onto it); the .point file is renamed last, so a point file means its
 *       .csv is complete. A killed sweep leaves finished points and nothing
 *       half-written under their names.
 *   SS2  A point file is written only for a run that ended done or enospc
 *       (a result); a failed or interrupted point leaves none, and a rerun
 *       runs it again.
 *   SS3  A point file is used only if its key and index are the plan's.
 *   SS4  Errors are values naming the file; nothing here prints.
 */
#ifndef COWSIM_SIM_SWEEP_STORE_H
#define COWSIM_SIM_SWEEP_STORE_H

#include <stdbool.h>
#include <glib.h>

#include "rows.h"

#define SWEEP_STORE_PLAN "sweep-plan.ini"
#define SWEEP_STORE_POINTS "points"

struct sweep_plan {
	char *title;                  /* the plot's title */
	GPtrArray *param_names;       /* of char *: the parameter columns, in --vary order */
	GArray *param_kinds;          /* of ResultsCellKind, one per parameter */
	GPtrArray *keys;              /* of char *: one key per point, in grid order */
};

/* An empty plan, to be filled. Cannot fail. */
void sweep_plan_init(struct sweep_plan *plan);
void sweep_plan_clear(struct sweep_plan *plan);
/* DIR/sweep-plan.ini, rewritten only when it differs (SS1). */
bool sweep_plan_write(const char *dir, const struct sweep_plan *plan, GError **error);
/* Reads DIR/sweep-plan.ini into an initialised *plan; false and *error
 * naming the file and key when it is missing or malformed. */
bool sweep_plan_read(const char *dir, struct sweep_plan *plan, GError **error);
/* Same parameter columns and same keys: the same sweep. */
bool sweep_plan_same(const struct sweep_plan *a, const struct sweep_plan *b);
/* An empty table with the plan's columns. */
RowsTable *sweep_plan_table(const struct sweep_plan *plan);

/* The lowercase hex sha256 of `identity` (see "How it works"). */
char *sweep_store_key(const char *identity);
/* The lowercase hex sha256 of a file's bytes; NULL and *error on a read error. */
char *sweep_store_file_sha256(const char *path, GError **error);

/* DIR/points/KEY.SUFFIX ("point", "csv", ...). */
char *sweep_store_point_path(const char *dir, const char *key, const char *suffix);
/* Creates DIR/points. */
bool sweep_store_make_dirs(const char *dir, GError **error);
bool sweep_store_has_point(const char *dir, const char *key);
/* Writes DIR/points/KEY.point from the single line of `line` (SS1). */
bool sweep_store_write_point(const char *dir, const char *key, unsigned index, const RowsTable *line,
			     GError **error);
/* The texts of point `index` (key `key`) read from DIR, one per column of
 * `columns` (NULL for unset), checked against the columns' kinds (SS3). NULL
 * and *error naming the file otherwise. */
GPtrArray *sweep_store_read_point(const char *dir, const char *key, unsigned index, const RowsTable *columns,
				  GError **error);

/* A table of every point of `plan` found in any of dirs[0..n_dirs) (the
 * first that has it), in grid order; the indexes of the points found in none
 * are appended to `missing` (of unsigned). NULL and *error on a point file
 * that cannot be read. */
RowsTable *sweep_store_table(const char *const *dirs, unsigned n_dirs, const struct sweep_plan *plan,
			     GArray *missing, GError **error);

#endif
