/*
 * results/json.h - JSON documents for programs: the --json summaries of
 * run, compare and sweep, and the parameters.json beside their folders
 * (docs/json.md describes both schemas).
 *
 * How it works
 *   A writer appends members to one document in the order they are given,
 *   two spaces of indent a level, one member a line:
 *
 *     w = results_json_new();
 *     results_json_begin_object(w, NULL);          {
 *     results_json_string(w, "schema", "x/1");       "schema": "x/1",
 *     results_json_begin_array(w, "runs");           "runs": [
 *     ...                                            ]
 *     results_json_end(w);                         }
 *     text = results_json_finish(w);
 *
 *   Inside an object every value has a key; inside an array (and at the top)
 *   the key is NULL.
 *
 * Invariants
 *   JS1  Same calls, same bytes: no locale, no hash order; numbers as
 *       results_append_cell_text() writes them in the CSV, so a program can
 *       check one against the other.
 *   JS2  A finished document is valid JSON (RFC 8259) when every begin has
 *       its end; unset cells and NULL strings are null; NaN and infinities,
 *       which JSON cannot hold, are written as null.
 */
#ifndef COWSIM_RESULTS_JSON_H
#define COWSIM_RESULTS_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "results.h"

/* Objects and arrays nest at most this deep. */
#define RESULTS_JSON_MAX_DEPTH 16

typedef struct ResultsJson ResultsJson;

ResultsJson *results_json_new(void);
void results_json_free(ResultsJson *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ResultsJson, results_json_free)

void results_json_begin_object(ResultsJson *w, const char *key);
void results_json_begin_array(ResultsJson *w, const char *key);
/* Closes the innermost object or array. */
void results_json_end(ResultsJson *w);

void results_json_string(ResultsJson *w, const char *key, const char *value); /* NULL: null */
void results_json_u64(ResultsJson *w, const char *key, uint64_t value);
void results_json_i64(ResultsJson *w, const char *key, int64_t value);
void results_json_double(ResultsJson *w, const char *key, double value);     /* %.15g */
void results_json_bool(ResultsJson *w, const char *key, bool value);
void results_json_null(ResultsJson *w, const char *key);
/* A cell as its CSV text would read (JS1): a number, a string or null. */
void results_json_cell(ResultsJson *w, const char *key, const ResultsCell *cell);
/* `json`, a whole JSON value (an object another writer made), re-indented
 * one level per depth; the caller vouches that it is valid JSON. */
void results_json_raw(ResultsJson *w, const char *key, const char *json);

/* The document, ending with a newline; frees the writer. */
char *results_json_finish(ResultsJson *w, gsize *length);

#endif
