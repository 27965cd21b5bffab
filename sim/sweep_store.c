/*
 * sim/sweep_store.c - a sweep's plan and finished points on disk (see
 * sweep_store.h, SS1-SS4).
 */
#include "sweep_store.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#define PLAN_GROUP "sweep"
#define POINT_GROUP "point"
#define CELLS_GROUP "cells"

void sweep_plan_init(struct sweep_plan *plan)
{
	*plan = (struct sweep_plan){
		.param_names = g_ptr_array_new_with_free_func(g_free),
		.param_kinds = g_array_new(FALSE, FALSE, sizeof(ResultsCellKind)),
		.keys = g_ptr_array_new_with_free_func(g_free),
	};
}

void sweep_plan_clear(struct sweep_plan *plan)
{
	g_clear_pointer(&plan->title, g_free);
	g_clear_pointer(&plan->param_names, g_ptr_array_unref);
	g_clear_pointer(&plan->param_kinds, g_array_unref);
	g_clear_pointer(&plan->keys, g_ptr_array_unref);
}

static const char *kind_name(ResultsCellKind kind)
{
	return kind == RESULTS_CELL_U64 ? "number" : "text";
}

static char *plan_text(const struct sweep_plan *plan)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GPtrArray) kinds = g_ptr_array_new();
	for (unsigned i = 0; i < plan->param_kinds->len; i++)
		g_ptr_array_add(kinds, (char *)kind_name(g_array_index(plan->param_kinds, ResultsCellKind, i)));
	g_key_file_set_string(kf, PLAN_GROUP, "title", plan->title);
	g_key_file_set_integer(kf, PLAN_GROUP, "points", (int)plan->keys->len);
	g_key_file_set_string_list(kf, PLAN_GROUP, "parameters", (const char *const *)plan->param_names->pdata,
				   plan->param_names->len);
	g_key_file_set_string_list(kf, PLAN_GROUP, "kinds", (const char *const *)kinds->pdata, kinds->len);
	g_key_file_set_string_list(kf, PLAN_GROUP, "keys", (const char *const *)plan->keys->pdata, plan->keys->len);
	g_autofree char *body = g_key_file_to_data(kf, NULL, NULL);
	return g_strconcat("# cowsim sweep: the grid of this folder; points/KEY.point are its finished points\n",
			   body, NULL);
}

bool sweep_plan_write(const char *dir, const struct sweep_plan *plan, GError **error)
{
	g_autofree char *path = g_build_filename(dir, SWEEP_STORE_PLAN, NULL);
	g_autofree char *text = plan_text(plan);
	g_autofree char *old = NULL;
	if (g_file_get_contents(path, &old, NULL, NULL) && !strcmp(old, text))
		return true;
	return g_file_set_contents(path, text, -1, error);
}

static bool plan_list(GKeyFile *kf, const char *path, const char *key, gsize want, char ***out, GError **error)
{
	gsize n = 0;
	g_autoptr(GError) local = NULL;
	*out = g_key_file_get_string_list(kf, PLAN_GROUP, key, &n, &local);
	if (!*out && g_error_matches(local, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND)) {
		*out = g_new0(char *, 1); /* an empty list is written as no key */
		n = 0;
	} else if (!*out) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: key '%s': %s", path, key, local->message);
		return false;
	}
	if (want != G_MAXSIZE && n != want) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: key '%s': %zu values, expected %zu", path,
			    key, (size_t)n, (size_t)want);
		return false;
	}
	return true;
}

bool sweep_plan_read(const char *dir, struct sweep_plan *plan, GError **error)
{
	g_autofree char *path = g_build_filename(dir, SWEEP_STORE_PLAN, NULL);
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) local = NULL;
	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &local)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s (not a sweep folder?)", path,
			    local->message);
		return false;
	}
	gint64 points = g_key_file_get_int64(kf, PLAN_GROUP, "points", &local);
	if (local || points < 0) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: key 'points': %s", path,
			    local ? local->message : "negative");
		return false;
	}
	plan->title = g_key_file_get_string(kf, PLAN_GROUP, "title", NULL);
	if (!plan->title)
		plan->title = g_strdup("sweep");
	g_auto(GStrv) names = NULL, kinds = NULL, keys = NULL;
	if (!plan_list(kf, path, "parameters", G_MAXSIZE, &names, error) ||
	    !plan_list(kf, path, "kinds", g_strv_length(names), &kinds, error) ||
	    !plan_list(kf, path, "keys", (gsize)points, &keys, error))
		return false;
	for (unsigned i = 0; names[i]; i++) {
		ResultsCellKind kind = !strcmp(kinds[i], "number") ? RESULTS_CELL_U64 : RESULTS_CELL_STRING;
		if (kind == RESULTS_CELL_STRING && strcmp(kinds[i], "text")) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: key 'kinds': '%s' is not number or text",
				    path, kinds[i]);
			return false;
		}
		g_ptr_array_add(plan->param_names, g_strdup(names[i]));
		g_array_append_val(plan->param_kinds, kind);
	}
	for (unsigned i = 0; keys[i]; i++)
		g_ptr_array_add(plan->keys, g_strdup(keys[i]));
	return true;
}

static bool same_strings(const GPtrArray *a, const GPtrArray *b)
{
	if (a->len != b->len)
		return false;
	for (unsigned i = 0; i < a->len; i++)
		if (strcmp(a->pdata[i], b->pdata[i]))
			return false;
	return true;
}

bool sweep_plan_same(const struct sweep_plan *a, const struct sweep_plan *b)
{
	return same_strings(a->param_names, b->param_names) && same_strings(a->keys, b->keys) &&
	       a->param_kinds->len == b->param_kinds->len &&
	       !memcmp(a->param_kinds->data, b->param_kinds->data, a->param_kinds->len * sizeof(ResultsCellKind));
}

RowsTable *sweep_plan_table(const struct sweep_plan *plan)
{
	unsigned n = plan->param_names->len;
	g_autofree struct rows_param *columns = g_new0(struct rows_param, n);
	for (unsigned i = 0; i < n; i++) {
		ResultsCellKind kind = g_array_index(plan->param_kinds, ResultsCellKind, i);
		columns[i] = (struct rows_param){ plan->param_names->pdata[i], kind,
						  kind == RESULTS_CELL_U64 ? RESULTS_UNIT_COUNT : RESULTS_UNIT_TEXT };
	}
	return rows_table_new(columns, n);
}

/* ---- keys ------------------------------------------------------------------------ */

char *sweep_store_key(const char *identity)
{
	return g_compute_checksum_for_string(G_CHECKSUM_SHA256, identity, -1);
}

char *sweep_store_file_sha256(const char *path, GError **error)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", path, g_strerror(errno));
		return NULL;
	}
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	guchar buf[1 << 16];
	size_t got;
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		g_checksum_update(sum, buf, (gssize)got);
	bool failed = ferror(f);
	int saved = errno;
	fclose(f);
	if (failed) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), "%s: %s", path, g_strerror(saved));
		return NULL;
	}
	return g_strdup(g_checksum_get_string(sum));
}

/* ---- points ---------------------------------------------------------------------- */

char *sweep_store_point_path(const char *dir, const char *key, const char *suffix)
{
	g_autofree char *name = g_strconcat(key, ".", suffix, NULL);
	return g_build_filename(dir, SWEEP_STORE_POINTS, name, NULL);
}

bool sweep_store_make_dirs(const char *dir, GError **error)
{
	g_autofree char *points = g_build_filename(dir, SWEEP_STORE_POINTS, NULL);
	if (g_mkdir_with_parents(points, 0777) != 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot create '%s': %s", points,
			    g_strerror(errno));
		return false;
	}
	return true;
}

bool sweep_store_has_point(const char *dir, const char *key)
{
	g_autofree char *path = sweep_store_point_path(dir, key, "point");
	return g_file_test(path, G_FILE_TEST_IS_REGULAR);
}

bool sweep_store_write_point(const char *dir, const char *key, unsigned index, const RowsTable *line,
			     GError **error)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_key_file_set_integer(kf, POINT_GROUP, "index", (int)index);
	g_key_file_set_string(kf, POINT_GROUP, "key", key);
	g_autoptr(GPtrArray) texts = rows_table_line_texts(line, 0);
	for (unsigned i = 0; i < texts->len; i++)
		if (texts->pdata[i])
			g_key_file_set_string(kf, CELLS_GROUP, rows_table_column_name(line, i), texts->pdata[i]);
	g_autofree char *text = g_key_file_to_data(kf, NULL, NULL);
	g_autofree char *path = sweep_store_point_path(dir, key, "point");
	return g_file_set_contents(path, text, -1, error); /* SS1: a temporary file renamed */
}

GPtrArray *sweep_store_read_point(const char *dir, const char *key, unsigned index, const RowsTable *columns,
				  GError **error)
{
	g_autofree char *path = sweep_store_point_path(dir, key, "point");
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) local = NULL;
	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &local)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s", path, local->message);
		return NULL;
	}
	g_autofree char *file_key = g_key_file_get_string(kf, POINT_GROUP, "key", NULL);
	gint64 file_index = g_key_file_get_int64(kf, POINT_GROUP, "index", &local);
	if (local || !file_key || strcmp(file_key, key) || file_index != (gint64)index) { /* SS3 */
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "%s: key 'index' or 'key': not point %u of this sweep's plan", path, index);
		return NULL;
	}
	unsigned n = rows_table_n_columns(columns);
	g_autoptr(GPtrArray) texts = g_ptr_array_new_full(n, g_free);
	for (unsigned i = 0; i < n; i++)
		g_ptr_array_add(texts, g_key_file_get_string(kf, CELLS_GROUP, rows_table_column_name(columns, i), NULL));
	/* checked now, so that a bad file is named here and not when the table is built */
	g_autoptr(RowsTable) scratch = rows_table_copy_columns(columns);
	if (!rows_table_add_texts(scratch, (const char *const *)texts->pdata, &local)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s", path, local->message);
		return NULL;
	}
	return g_steal_pointer(&texts);
}

RowsTable *sweep_store_table(const char *const *dirs, unsigned n_dirs, const struct sweep_plan *plan,
			     GArray *missing, GError **error)
{
	g_autoptr(RowsTable) table = sweep_plan_table(plan);
	for (unsigned k = 0; k < plan->keys->len; k++) {
		const char *key = plan->keys->pdata[k];
		unsigned d = 0;
		while (d < n_dirs && !sweep_store_has_point(dirs[d], key))
			d++;
		if (d == n_dirs) {
			g_array_append_val(missing, k);
			continue;
		}
		g_autoptr(GPtrArray) texts = sweep_store_read_point(dirs[d], key, k, table, error);
		if (!texts || !rows_table_add_texts(table, (const char *const *)texts->pdata, error))
			return NULL;
	}
	return g_steal_pointer(&table);
}
