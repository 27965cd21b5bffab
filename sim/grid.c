/*
 * sim/grid.c - grids of configurations (see grid.h for the syntax and the
 * invariants GR1-GR4).
 */
#include "grid.h"

#include <stddef.h>
#include <string.h>

G_DEFINE_QUARK(cowsim-grid-error-quark, grid_error)

/* The model options a grid can vary, and where their text lives. */
static const struct {
	const char *name;
	size_t offset;
} model_params[] = {
	{ "nodesize", offsetof(struct model_option_text, nodesize) },
	{ "device-size", offsetof(struct model_option_text, device_size) },
	{ "metadata", offsetof(struct model_option_text, metadata_profile) },
	{ "mount", offsetof(struct model_option_text, mount) },
	{ "policy", offsetof(struct model_option_text, policy) },
	{ "mkfs-atime", offsetof(struct model_option_text, mkfs_atime) },
	{ "design", offsetof(struct model_option_text, design) },
	{ "max-inline", offsetof(struct model_option_text, max_inline) },
	{ "commit-interval", offsetof(struct model_option_text, commit_interval) },
};

static char **model_field(struct model_option_text *text, const char *name)
{
	for (unsigned i = 0; i < G_N_ELEMENTS(model_params); i++)
		if (!strcmp(name, model_params[i].name))
			return (char **)(void *)((char *)text + model_params[i].offset);
	return NULL;
}

bool grid_is_model_param(const char *name)
{
	struct model_option_text scratch = { 0 };
	return model_field(&scratch, name) != NULL;
}

bool grid_borrow_model_text(struct model_option_text *text, const char *name, const char *value)
{
	char **field = model_field(text, name);
	if (!field)
		return false;
	*field = (char *)value;
	return true;
}

const char *grid_model_text(const struct model_option_text *text, const char *name)
{
	char **field = model_field((struct model_option_text *)text, name);
	return field ? *field : NULL;
}

char *grid_model_identity(const struct model_option_text *text)
{
	GString *out = g_string_new(NULL);
	for (unsigned i = 0; i < G_N_ELEMENTS(model_params); i++) {
		const char *value = grid_model_text(text, model_params[i].name);
		g_string_append_printf(out, "%s=%s\n", model_params[i].name, value ? value : "");
	}
	g_string_append_printf(out, "lazytime=%s\nimmediate-writeback=%d\n", text->lazytime ? text->lazytime : "",
			       text->immediate_writeback ? 1 : 0);
	if (text->enospc_read) /* only when given: the keys of sweeps made before it stay */
		g_string_append_printf(out, "enospc-read=%s\n", text->enospc_read);
	return g_string_free(out, FALSE);
}

/* ---- lists and ranges ------------------------------------------------------ */

/* mount's words that set the mode; the others modify the mode before them. */
static bool is_mount_mode(const char *word)
{
	return !strcmp(word, "relatime") || !strcmp(word, "strictatime") || !strcmp(word, "noatime") ||
	       !strcmp(word, "atime");
}

static bool add_value(GPtrArray *values, const char *name, char *value, GError **error)
{
	g_autofree char *owned = value;
	if (!*value) {
		g_set_error(error, GRID_ERROR, 0, "%s: an empty value in the list", name);
		return false;
	}
	for (unsigned i = 0; i < values->len; i++) {
		if (!strcmp(values->pdata[i], value)) {
			g_set_error(error, GRID_ERROR, 0, "%s: value '%s' given twice", name, value);
			return false;
		}
	}
	if (values->len >= GRID_MAX_POINTS) {
		g_set_error(error, GRID_ERROR, 0, "%s: more than %d values", name, GRID_MAX_POINTS);
		return false;
	}
	g_ptr_array_add(values, g_steal_pointer(&owned));
	return true;
}

GPtrArray *grid_split_list(const char *name, const char *text, GError **error)
{
	g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
	g_auto(GStrv) words = g_strsplit(text, ",", -1);
	bool mount = !strcmp(name, "mount");
	for (unsigned i = 0; words[i]; i++) {
		g_autoptr(GString) value = g_string_new(words[i]);
		while (mount && words[i + 1] && *words[i + 1] && !is_mount_mode(words[i + 1]))
			g_string_append_printf(value, ",%s", words[++i]);
		if (!add_value(values, name, g_string_free(g_steal_pointer(&value), FALSE), error))
			return NULL;
	}
	return g_steal_pointer(&values);
}

/* A whole number or a size with a suffix (GR2): bytes or the count. */
static bool parse_number(const char *text, uint64_t *number)
{
	if (!*text || !g_ascii_isdigit(*text))
		return false;
	bool suffixed = strpbrk(text, "KkMmGgTt") != NULL;
	if (!suffixed && strspn(text, "0123456789") != strlen(text))
		return false;
	return options_parse_size("value", text, number, NULL);
}

static bool expand_range(GPtrArray *values, const char *name, const char *item, GError **error)
{
	const char *dots = strstr(item, "..");
	g_autofree char *low_text = g_strndup(item, (gsize)(dots - item));
	const char *slash = strchr(dots + 2, '/');
	g_autofree char *high_text = slash ? g_strndup(dots + 2, (gsize)(slash - dots - 2)) : g_strdup(dots + 2);
	uint64_t low, high, step = 1;
	if (!parse_number(low_text, &low) || !parse_number(high_text, &high) ||
	    (slash && !parse_number(slash + 1, &step))) {
		g_set_error(error, GRID_ERROR, 0,
			    "%s=%s: a range is A..B or A..B/STEP with whole numbers (sizes may take K, M, G)", name,
			    item);
		return false;
	}
	if (high < low || step == 0 || (high - low) / step >= GRID_MAX_POINTS) {
		g_set_error(error, GRID_ERROR, 0, "%s=%s: needs A <= B, a step above 0 and at most %d values", name,
			    item, GRID_MAX_POINTS);
		return false;
	}
	for (uint64_t v = low; v <= high; v += step) {
		if (!add_value(values, name, g_strdup_printf("%" G_GUINT64_FORMAT, v), error))
			return false;
		if (high - v < step)
			break;
	}
	return true;
}

static void settle_kind(struct grid_param *p)
{
	p->kind = RESULTS_CELL_U64;
	p->numbers = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), p->values->len);
	for (unsigned i = 0; i < p->values->len; i++) {
		uint64_t number;
		if (!parse_number(p->values->pdata[i], &number)) {
			p->kind = RESULTS_CELL_STRING;
			g_clear_pointer(&p->numbers, g_array_unref);
			return;
		}
		g_array_append_val(p->numbers, number);
	}
}

struct grid_param *grid_param_new(const char *name, GPtrArray *values)
{
	struct grid_param *p = g_new0(struct grid_param, 1);
	p->name = g_strdup(name);
	p->values = g_ptr_array_ref(values);
	p->model = grid_is_model_param(name);
	settle_kind(p);
	return p;
}

static bool valid_name(const char *name)
{
	if (!*name)
		return false;
	for (const char *c = name; *c; c++)
		if (!g_ascii_isalnum(*c) && *c != '-' && *c != '_')
			return false;
	return true;
}

struct grid_param *grid_param_parse(const char *spec, GError **error)
{
	const char *equals = strchr(spec, '=');
	g_autofree char *name = equals ? g_strndup(spec, (gsize)(equals - spec)) : NULL;
	if (!name || !valid_name(name) || !equals[1]) {
		g_set_error(error, GRID_ERROR, 0,
			    "--vary '%s': expected NAME=VALUES, as nodesize=4K,16K,64K or snapshots=0..50/5", spec);
		return NULL;
	}
	g_autoptr(GPtrArray) items = grid_split_list(name, equals + 1, error);
	if (!items)
		return NULL;
	g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
	for (unsigned i = 0; i < items->len; i++) {
		const char *item = items->pdata[i];
		bool ok = strstr(item, "..") ? expand_range(values, name, item, error)
					     : add_value(values, name, g_strdup(item), error);
		if (!ok)
			return NULL;
	}
	return grid_param_new(name, values);
}

void grid_param_free(struct grid_param *p)
{
	if (!p)
		return;
	g_free(p->name);
	g_ptr_array_unref(p->values);
	if (p->numbers)
		g_array_unref(p->numbers);
	g_free(p);
}

/* ---- points ----------------------------------------------------------------- */

bool grid_count_points(struct grid_param *const *params, unsigned n, unsigned *points, GError **error)
{
	uint64_t total = 1;
	for (unsigned i = 0; i < n; i++) {
		total *= params[i]->values->len;
		if (total > GRID_MAX_POINTS) {
			g_set_error(error, GRID_ERROR, 0, "the grid has more than %d points", GRID_MAX_POINTS);
			return false;
		}
	}
	*points = (unsigned)total;
	return true;
}

void grid_point(struct grid_param *const *params, unsigned n, unsigned index, unsigned *choice)
{
	for (unsigned i = n; i-- > 0;) {
		choice[i] = index % params[i]->values->len;
		index /= params[i]->values->len;
	}
}

/* ---- generator templates ------------------------------------------------------ */

static int find_param(struct grid_param *const *params, unsigned n, const char *name, gsize length)
{
	for (unsigned i = 0; i < n; i++)
		if (strlen(params[i]->name) == length && !strncmp(params[i]->name, name, length))
			return (int)i;
	return -1;
}

bool grid_template_check(const char *t, struct grid_param *const *params, unsigned n, GError **error)
{
	g_autofree bool *used = g_new0(bool, n + 1);
	for (const char *open = strchr(t, '{'); open; open = strchr(open + 1, '{')) {
		const char *close = strchr(open, '}');
		int i = close ? find_param(params, n, open + 1, (gsize)(close - open - 1)) : -1;
		if (i < 0) {
			g_set_error(error, GRID_ERROR, 0, "--gen: '%.*s' is not a {name} of a --vary parameter",
				    close ? (int)(close - open + 1) : (int)strlen(open), open);
			return false;
		}
		used[i] = true;
	}
	for (unsigned i = 0; i < n; i++) {
		if (!params[i]->model && !used[i]) {
			g_set_error(error, GRID_ERROR, 0,
				    "--vary %s: not a model option, and --gen has no {%s} for it (model options: "
				    "nodesize, device-size, metadata, mount, policy, mkfs-atime, design, max-inline, "
				    "commit-interval)", params[i]->name, params[i]->name);
			return false;
		}
	}
	return true;
}

char *grid_template_fill(const char *t, struct grid_param *const *params, unsigned n, const unsigned *choice)
{
	GString *out = g_string_new(NULL);
	const char *p = t;
	for (const char *open; (open = strchr(p, '{'));) {
		const char *close = strchr(open, '}');
		int i = close ? find_param(params, n, open + 1, (gsize)(close - open - 1)) : -1;
		g_string_append_len(out, p, i < 0 ? open - p + 1 : open - p);
		if (i >= 0)
			g_string_append(out, params[i]->values->pdata[choice[i]]);
		p = i < 0 ? open + 1 : close + 1;
	}
	g_string_append(out, p);
	return g_string_free(out, FALSE);
}

char *grid_safe_name(const char *text)
{
	GString *out = g_string_new(NULL);
	for (const char *c = text; *c; c++) {
		if (g_ascii_isalnum(*c) || *c == '.' || *c == '_' || *c == '-')
			g_string_append_c(out, *c);
		else if (*c == ':' || *c == '=')
			g_string_append_c(out, '-');
		else if (*c == '%')
			g_string_append(out, "pct");
		else if (*c == ',')
			g_string_append_c(out, '+');
		else
			g_string_append_c(out, '_');
	}
	return g_string_free(out, FALSE);
}
