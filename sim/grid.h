/*
 * sim/grid.h - grids of configurations: value lists, ranges, the points of a
 * product, generator templates.
 *
 * How it works
 *   A parameter is a name and a list of values, from the command line:
 *
 *     nodesize=4K,16K,64K       a list (each value as given)
 *     snapshots=0..50           a range of integers, both ends included
 *     snapshots=0..50/10        with a step: 0 10 20 30 40 50
 *     snapshots=0..4,10,20      lists and ranges mixed
 *     mount=relatime,lazytime,noatime
 *                               mount's modifier words (nodiratime, diratime,
 *                               lazytime) join the mode before them: two
 *                               values, "relatime,lazytime" and "noatime"
 *
 *   The grid is the product of the parameters, in the order given, the last
 *   one changing fastest:
 *
 *     --vary snapshots=0..2 --vary nodesize=4K,16K
 *       point 0: snapshots=0 nodesize=4K    point 1: 0 16K
 *       point 2: 1 4K   point 3: 1 16K      point 4: 2 4K   point 5: 2 16K
 *
 *   A model parameter (nodesize, device-size, metadata, mount, policy,
 *   mkfs-atime, design, max-inline, commit-interval: the options of `cowsim
 *   run`) changes the model's configuration; any other name shapes the trace
 *   and so must be a {name} placeholder of a generator command line.
 *
 * Invariants
 *   GR1  Every value list is non-empty, has no empty value and no value twice.
 *   GR2  A parameter is numeric (kind U64) only when every value is a whole
 *       number or a size with a K/M/G/T suffix; its numbers are bytes or the
 *       plain count. Otherwise it is text (kind STRING).
 *   GR3  A grid has at most GRID_MAX_POINTS points; a range at most
 *       GRID_MAX_POINTS values.
 *   GR4  Errors name the parameter and the bad text; nothing here prints.
 */
#ifndef COWSIM_SIM_GRID_H
#define COWSIM_SIM_GRID_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

#include "options.h"
#include "results.h"

#define GRID_MAX_POINTS 10000

#define GRID_ERROR (grid_error_quark())
GQuark grid_error_quark(void);

struct grid_param {
	char *name;
	GPtrArray *values;            /* of char *: the text each point uses */
	bool model;                   /* a model option rather than a trace parameter */
	ResultsCellKind kind;         /* RESULTS_CELL_U64 or RESULTS_CELL_STRING (GR2) */
	GArray *numbers;              /* of uint64_t, one per value, when kind is U64 */
};

/* Splits a comma-separated list of values of parameter `name` (GR1; mount
 * values keep their modifiers). A GPtrArray of strings, or NULL and *error. */
GPtrArray *grid_split_list(const char *name, const char *text, GError **error);

/* Parses "NAME=VALUES" (see above). NULL and *error on a bad spec. */
struct grid_param *grid_param_parse(const char *spec, GError **error);
/* A parameter from a name and a list already split (for --policies). */
struct grid_param *grid_param_new(const char *name, GPtrArray *values);
void grid_param_free(struct grid_param *param);
typedef struct grid_param GridParam;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GridParam, grid_param_free)

/* True when `name` is one of the model options listed above. */
bool grid_is_model_param(const char *name);
/* Points model option `name` of *text at `value`, which is borrowed, not
 * copied: for a shallow copy of options whose strings live elsewhere (never
 * options_model_text_clear() it). False if `name` is not a model option. */
bool grid_borrow_model_text(struct model_option_text *text, const char *name, const char *value);
/* The option text of `name` in *text, NULL when unset or not a model option. */
const char *grid_model_text(const struct model_option_text *text, const char *name);
/* Every model option of *text as "name=value" lines (empty when unset), in
 * one fixed order: the part of a sweep point's identity the model decides. */
char *grid_model_identity(const struct model_option_text *text);

/* Points in the product of params[0..n) (GR3 checked: false and *error). */
bool grid_count_points(struct grid_param *const *params, unsigned n, unsigned *points, GError **error);
/* The value index of every parameter at point `index` (choice[n]). */
void grid_point(struct grid_param *const *params, unsigned n, unsigned index, unsigned *choice);

/* Checks a generator template against the parameters: every {name} in it is
 * a parameter, and every trace parameter (not a model option) appears. */
bool grid_template_check(const char *template_text, struct grid_param *const *params, unsigned n,
			 GError **error);
/* The template with each {name} replaced by the point's value. */
char *grid_template_fill(const char *template_text, struct grid_param *const *params, unsigned n,
			 const unsigned *choice);

/* `text` as part of a file name: letters, digits, '.', '_' and '-' kept,
 * ':' and '=' become '-', '%' "pct", ',' '+', anything else '_'. */
char *grid_safe_name(const char *text);

#endif
