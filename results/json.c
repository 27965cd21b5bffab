/*
 * results/json.c - a JSON document written member by member (json.h, JS1-JS2).
 */
#include "json.h"

#include <math.h>
#include <string.h>

struct ResultsJson {
	GString *out;
	unsigned depth;
	char open[RESULTS_JSON_MAX_DEPTH]; /* '{' or '[' per open level */
	bool first;                   /* no member yet at this depth: no comma before the next */
};

ResultsJson *results_json_new(void)
{
	ResultsJson *w = g_new0(ResultsJson, 1);
	w->out = g_string_new(NULL);
	w->first = true;
	return w;
}

void results_json_free(ResultsJson *w)
{
	if (!w)
		return;
	g_string_free(w->out, TRUE);
	g_free(w);
}

static void indent(ResultsJson *w)
{
	for (unsigned i = 0; i < w->depth; i++)
		g_string_append(w->out, "  ");
}

/* The comma, the line break and the key before a value. */
static void member(ResultsJson *w, const char *key)
{
	if (w->depth) {
		g_string_append(w->out, w->first ? "\n" : ",\n");
		indent(w);
	}
	w->first = false;
	if (key) {
		results_append_json_string(w->out, key);
		g_string_append(w->out, ": ");
	}
}

static void begin(ResultsJson *w, const char *key, char bracket)
{
	g_return_if_fail(w->depth < RESULTS_JSON_MAX_DEPTH);
	member(w, key);
	g_string_append_c(w->out, bracket);
	w->open[w->depth++] = bracket;
	w->first = true;
}

void results_json_begin_object(ResultsJson *w, const char *key)
{
	begin(w, key, '{');
}

void results_json_begin_array(ResultsJson *w, const char *key)
{
	begin(w, key, '[');
}

void results_json_end(ResultsJson *w)
{
	g_return_if_fail(w->depth > 0);
	bool empty = w->first;
	char open = w->open[--w->depth];
	if (!empty) {
		g_string_append_c(w->out, '\n');
		indent(w);
	}
	g_string_append_c(w->out, open == '{' ? '}' : ']');
	w->first = false;
}

void results_json_string(ResultsJson *w, const char *key, const char *value)
{
	member(w, key);
	if (value)
		results_append_json_string(w->out, value);
	else
		g_string_append(w->out, "null");
}

void results_json_u64(ResultsJson *w, const char *key, uint64_t value)
{
	member(w, key);
	g_string_append_printf(w->out, "%" G_GUINT64_FORMAT, value);
}

void results_json_i64(ResultsJson *w, const char *key, int64_t value)
{
	member(w, key);
	g_string_append_printf(w->out, "%" G_GINT64_FORMAT, value);
}

void results_json_double(ResultsJson *w, const char *key, double value)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	member(w, key);
	if (isfinite(value))
		g_string_append(w->out, g_ascii_formatd(buf, sizeof(buf), "%.15g", value + 0.0));
	else
		g_string_append(w->out, "null"); /* JS2 */
}

void results_json_bool(ResultsJson *w, const char *key, bool value)
{
	member(w, key);
	g_string_append(w->out, value ? "true" : "false");
}

void results_json_null(ResultsJson *w, const char *key)
{
	member(w, key);
	g_string_append(w->out, "null");
}

void results_json_cell(ResultsJson *w, const char *key, const ResultsCell *cell)
{
	switch (cell->kind) {
	case RESULTS_CELL_UNSET:
		results_json_null(w, key);
		return;
	case RESULTS_CELL_STRING:
		results_json_string(w, key, cell->v.str);
		return;
	case RESULTS_CELL_DOUBLE:
		if (!isfinite(cell->v.d)) {
			results_json_null(w, key);
			return;
		}
		break;
	case RESULTS_CELL_U64:
	case RESULTS_CELL_I64:
		break;
	}
	member(w, key);
	results_append_cell_text(w->out, cell); /* JS1: the CSV's text */
}

void results_json_raw(ResultsJson *w, const char *key, const char *json)
{
	member(w, key);
	gsize end = strlen(json);
	while (end && g_ascii_isspace(json[end - 1]))
		end--;
	for (gsize i = 0; i < end; i++) {
		g_string_append_c(w->out, json[i]);
		if (json[i] == '\n') /* JSON strings hold no raw line break: this is layout */
			indent(w);
	}
}

char *results_json_finish(ResultsJson *w, gsize *length)
{
	g_string_append_c(w->out, '\n');
	if (length)
		*length = w->out->len;
	char *text = g_string_free(w->out, FALSE);
	g_free(w);
	return text;
}
