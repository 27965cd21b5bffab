/*
 * sim/cmd_report.c - `cowsim report DIR [-o FILE.html]`: a folder of results
 * (what `cowsim compare` or `cowsim sweep` writes, or any folder of CSV, PNG,
 * SVG, Markdown and text files) as one self-contained HTML page.
 *
 * How it works
 *   The folder's files are read in name order and sorted into sections:
 *
 *     DIR/compare.csv, sweep.csv  --> "Summary": the table, and its parameter
 *                                     columns (those before "status") as the
 *                                     parameters varied, with their values
 *     DIR/NAME.png, NAME.svg      --> "Plots": <img src="data:image/...;base64,...">
 *                                     (a PNG hides the SVG of the same name)
 *     DIR/NAME.md, NAME.txt       --> "Notes": Markdown tables, headings and
 *                                     paragraphs; text as it is
 *     DIR/other .csv files        --> "Runs", last: one table each (the first
 *                                     --max-rows rows)
 *     results/calibration.csv     --> "Calibration": the worst error of the
 *                                     model against real btrfs, by nodesize, and
 *                                     the one that applies at the runs' nodesize
 *                                     (--nodesize, the folder's nodesize column
 *                                     or parameter file, else inferred from the
 *                                     per-run CSVs' tree sizes)
 *
 *   Options held fixed are shown from DIR/parameters.json (compare and sweep
 *   write it, provenance.h) and from any key=value .txt file. Beside a page
 *   written to FILE.html goes FILE.parameters.json: the report's own options,
 *   the calibration file's sha256 and the folder's parameters.json. Nothing outside
 *   the page is referenced: images are data URIs, the style is inline, and a
 *   Content-Security-Policy forbids any other source. A short inline script
 *   writes data-images-loaded="N" data-images-total="M" on <body> once the
 *   page has loaded, so a headless browser can tell that every image decoded.
 *
 * Invariants
 *   RP1 Same folder (and calibration file), same bytes: files in name order,
 *      no dates or host names in the page.
 *   RP2 Every file of DIR is either shown or listed under "Files";
 *      nothing is dropped silently (hidden files and *.tmp are left out,
 *      and the page says how many; the page itself is skipped, so a
 *      report made again over its own output is the same bytes).
 *   RP3 Exit status: 0 written; 1 the page cannot be written; 2 DIR unreadable,
 *      empty of results, or a CSV malformed (file, line and field named).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "cli.h"
#include "commands.h"
#include "options.h"
#include "provenance.h"
#include "results.h"
#include "sweep_store.h"

/* ---- CSV ------------------------------------------------------------------- */

/* One CSV file: a header and rows of strings (RFC 4180 quoting). */
struct csv_table {
	char *name;                   /* file name within DIR */
	GPtrArray *header;            /* char * */
	GPtrArray *rows;              /* GPtrArray * of char * */
};

static void csv_table_free(struct csv_table *t)
{
	if (!t)
		return;
	g_free(t->name);
	g_ptr_array_unref(t->header);
	g_ptr_array_unref(t->rows);
	g_free(t);
}
typedef struct csv_table CsvTable;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsvTable, csv_table_free)

/* Splits one record starting at *p; advances *p past its line end. Quoted
 * fields may hold commas, doubled quotes and line breaks (*line counts them). */
static GPtrArray *csv_record(const char **p, const char *path, unsigned *line, GError **error)
{
	g_autoptr(GPtrArray) fields = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) field = g_string_new(NULL);
	const char *s = *p;
	for (;;) {
		if (*s == '"') {
			unsigned opened = *line;
			for (s++;; s++) {
				if (!*s) {
					g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
						    "%s:%u: field %u: unterminated quoted field", path, opened,
						    fields->len + 1);
					return NULL;
				}
				if (*s == '"' && s[1] == '"')
					s++;
				else if (*s == '"')
					break;
				else if (*s == '\n')
					(*line)++;
				g_string_append_c(field, *s);
			}
			s++;
		}
		while (*s && *s != ',' && *s != '\n' && *s != '\r')
			g_string_append_c(field, *s++);
		g_ptr_array_add(fields, g_string_free(g_steal_pointer(&field), false));
		field = g_string_new(NULL);
		if (*s != ',')
			break;
		s++;
	}
	if (*s == '\r')
		s++;
	if (*s == '\n')
		s++;
	*p = s;
	return g_steal_pointer(&fields);
}

static CsvTable *csv_read(const char *path, const char *name, GError **error)
{
	g_autofree char *text = NULL;
	if (!g_file_get_contents(path, &text, NULL, error))
		return NULL;
	g_autoptr(CsvTable) t = g_new0(CsvTable, 1);
	t->name = g_strdup(name);
	t->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	const char *p = text;
	unsigned line = 1;
	if (!*p) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s:1: field header: the file is empty", path);
		return NULL;
	}
	if (!(t->header = csv_record(&p, path, &line, error)))
		return NULL;
	while (*p) {
		line++;
		GPtrArray *row = csv_record(&p, path, &line, error);
		if (!row)
			return NULL;
		g_ptr_array_add(t->rows, row);
	}
	return g_steal_pointer(&t);
}

static const char *csv_cell(const GPtrArray *row, unsigned column)
{
	return column < row->len ? row->pdata[column] : "";
}

static int csv_column(const CsvTable *t, const char *name)
{
	for (unsigned i = 0; i < t->header->len; i++)
		if (!strcmp(t->header->pdata[i], name))
			return (int)i;
	return -1;
}

/* ---- HTML helpers ------------------------------------------------------------ */

static void html_text(GString *out, const char *text)
{
	g_autofree char *escaped = g_markup_escape_text(text, -1);
	g_string_append(out, escaped);
}

static bool is_number(const char *s)
{
	if (!*s)
		return false;
	char *end;
	g_ascii_strtod(s, &end);
	return *end == '\0';
}

/* A column's unit, from results/columns.h (CO5): the one list of columns. */
static bool is_bytes_column(const char *name)
{
	const ResultsColumnInfo *info = results_column_lookup(name);
	return info && info->unit == RESULTS_UNIT_BYTES;
}

static void html_cell(GString *out, const char *column, const char *value)
{
	if (!is_number(value)) {
		g_string_append(out, "<td>");
		html_text(out, value);
		g_string_append(out, "</td>");
		return;
	}
	g_string_append(out, "<td class=\"n\">");
	html_text(out, value);
	double v = g_ascii_strtod(value, NULL);
	if (is_bytes_column(column) && fabs(v) >= 1024 * 1024)
		g_string_append_printf(out, "<br><small>%.1f MiB</small>", v / 1048576.0);
	g_string_append(out, "</td>");
}

static void html_table(GString *out, const CsvTable *t, unsigned max_rows)
{
	g_string_append(out, "<div class=\"scroll\"><table><thead><tr>");
	for (unsigned i = 0; i < t->header->len; i++) {
		g_string_append(out, "<th>");
		html_text(out, t->header->pdata[i]);
		g_string_append(out, "</th>");
	}
	g_string_append(out, "</tr></thead><tbody>\n");
	unsigned shown = max_rows && t->rows->len > max_rows ? max_rows : t->rows->len;
	for (unsigned r = 0; r < shown; r++) {
		const GPtrArray *row = t->rows->pdata[r];
		g_string_append(out, "<tr>");
		for (unsigned c = 0; c < t->header->len; c++)
			html_cell(out, t->header->pdata[c], csv_cell(row, c));
		g_string_append(out, "</tr>\n");
	}
	g_string_append(out, "</tbody></table></div>\n");
	if (shown < t->rows->len)
		g_string_append_printf(out, "<p class=\"note\">The first %u of %u rows; the file has them all.</p>\n",
				       shown, t->rows->len);
}

/* ---- Markdown (the subset compare.md uses) ------------------------------------ */

static bool md_separator_row(const char *line)
{
	for (const char *s = line; *s; s++)
		if (!strchr("|-: \t", *s))
			return false;
	return true;
}

static void md_table_row(GString *out, const char *line, bool head)
{
	g_autofree char *inner = g_strdup(line);
	g_strstrip(inner);
	char *s = inner + (*inner == '|');
	size_t n = strlen(s);
	if (n && s[n - 1] == '|')
		s[n - 1] = '\0';
	g_auto(GStrv) cells = g_strsplit(s, "|", -1);
	g_string_append(out, "<tr>");
	for (char **c = cells; *c; c++) {
		g_strstrip(*c);
		g_string_append(out, head ? "<th>" : (is_number(*c) ? "<td class=\"n\">" : "<td>"));
		html_text(out, *c);
		g_string_append(out, head ? "</th>" : "</td>");
	}
	g_string_append(out, "</tr>\n");
}

static void md_render(GString *out, const char *text)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	bool in_table = false, in_code = false, in_para = false;
	for (char **l = lines; *l; l++) {
		const char *line = *l;
		bool table_line = !in_code && line[strspn(line, " \t")] == '|';
		if (in_para && (!*line || table_line || line[0] == '#' || g_str_has_prefix(line, "```"))) {
			g_string_append(out, "</p>\n");
			in_para = false;
		}
		if (in_table && !table_line) {
			g_string_append(out, "</tbody></table></div>\n");
			in_table = false;
		}
		if (g_str_has_prefix(line, "```")) {
			g_string_append(out, in_code ? "</pre>\n" : "<pre>");
			in_code = !in_code;
		} else if (in_code) {
			html_text(out, line);
			g_string_append_c(out, '\n');
		} else if (table_line && !in_table) {
			g_string_append(out, "<div class=\"scroll\"><table><thead>");
			md_table_row(out, line, true);
			g_string_append(out, "</thead><tbody>\n");
			in_table = true;
		} else if (table_line) {
			if (!md_separator_row(line))
				md_table_row(out, line, false);
		} else if (line[0] == '#') {
			const char *title = line + strspn(line, "#");
			g_string_append(out, "<h4>");
			html_text(out, g_strchug((char *)title));
			g_string_append(out, "</h4>\n");
		} else if (*line) {
			g_string_append(out, in_para ? "\n" : "<p>");
			html_text(out, line);
			in_para = true;
		}
	}
	if (in_para)
		g_string_append(out, "</p>\n");
	if (in_table)
		g_string_append(out, "</tbody></table></div>\n");
	if (in_code)
		g_string_append(out, "</pre>\n");
}

/* ---- the folder ------------------------------------------------------------------ */

struct folder {
	char *dir;
	GPtrArray *csvs;              /* CsvTable *, name order; the summary first */
	GPtrArray *images;            /* char * file names */
	GPtrArray *notes;             /* char * file names: .md, .txt */
	GPtrArray *others;            /* char * file names */
	char *parameters;             /* the text of DIR/parameters.json (compare, sweep), or NULL */
	unsigned left_out;            /* hidden files, *.tmp, the page itself */
};

static void folder_clear(struct folder *f)
{
	g_free(f->dir);
	g_ptr_array_unref(f->csvs);
	g_ptr_array_unref(f->images);
	g_ptr_array_unref(f->notes);
	g_ptr_array_unref(f->others);
	g_free(f->parameters);
}

static int compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_summary_name(const char *name)
{
	return !strcmp(name, "compare.csv") || !strcmp(name, "sweep.csv");
}

static bool has_suffix_ci(const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix);
	return n > m && !g_ascii_strcasecmp(name + n - m, suffix);
}

/* The file names of DIR, sorted (RP1). */
static GPtrArray *list_dir(const char *dir, GError **error)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, error);
	if (!d)
		return NULL;
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	const char *name;
	while ((name = g_dir_read_name(d))) {
		g_autofree char *path = g_build_filename(dir, name, NULL);
		if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
			g_ptr_array_add(names, g_strdup(name));
	}
	g_ptr_array_sort(names, compare_names);
	return names;
}

/* A PNG hides the SVG of the same stem: the same plot, drawn twice. */
static bool svg_has_png(const GPtrArray *names, const char *svg)
{
	g_autofree char *png = g_strdup(svg);
	strcpy(png + strlen(png) - 3, "png");
	for (unsigned i = 0; i < names->len; i++)
		if (!strcmp(names->pdata[i], png))
			return true;
	return false;
}

/* FILE.parameters.json beside a page FILE.html (provenance.h). */
static char *page_parameters_path(const char *page)
{
	size_t stem = strlen(page);
	if (has_suffix_ci(page, ".html"))
		stem -= 5;
	else if (has_suffix_ci(page, ".htm"))
		stem -= 4;
	return g_strdup_printf("%.*s.%s", (int)stem, page, PROVENANCE_PARAMETERS_FILE);
}

static bool read_folder(struct folder *f, const char *dir, const char *output, GError **error)
{
	*f = (struct folder){ .dir = g_strdup(dir) };
	f->csvs = g_ptr_array_new_with_free_func((GDestroyNotify)csv_table_free);
	f->images = g_ptr_array_new_with_free_func(g_free);
	f->notes = g_ptr_array_new_with_free_func(g_free);
	f->others = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) names = list_dir(dir, error);
	if (!names)
		return false;
	g_autofree char *output_base = g_path_get_basename(output);
	g_autofree char *output_parameters = page_parameters_path(output_base);
	g_autofree char *output_dir = g_path_get_dirname(output);
	g_autofree char *output_real = g_canonicalize_filename(output_dir, NULL);
	g_autofree char *dir_real = g_canonicalize_filename(dir, NULL);
	bool output_here = !strcmp(output_real, dir_real);
	for (unsigned i = 0; i < names->len; i++) {
		const char *name = names->pdata[i];
		g_autofree char *path = g_build_filename(dir, name, NULL);
		if (output_here && (!strcmp(name, output_base) || !strcmp(name, output_parameters))) {
			continue; /* the page itself and its parameters, from an earlier report (RP1) */
		} else if (!strcmp(name, PROVENANCE_PARAMETERS_FILE)) {
			if (!g_file_get_contents(path, &f->parameters, NULL, error))
				return false;
		} else if (name[0] == '.' || g_str_has_suffix(name, ".tmp")) {
			f->left_out++;
		} else if (has_suffix_ci(name, ".csv")) {
			CsvTable *t = csv_read(path, name, error);
			if (!t)
				return false;
			g_ptr_array_insert(f->csvs, is_summary_name(name) ? 0 : -1, t);
		} else if (has_suffix_ci(name, ".png") || (has_suffix_ci(name, ".svg") && !svg_has_png(names, name))) {
			g_ptr_array_add(f->images, g_strdup(name));
		} else if (has_suffix_ci(name, ".md") || has_suffix_ci(name, ".txt")) {
			g_ptr_array_add(f->notes, g_strdup(name));
		} else {
			g_ptr_array_add(f->others, g_strdup(name));
		}
	}
	if (!f->csvs->len && !f->images->len && !f->notes->len && !f->parameters) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "%s: no results here (no .csv, .png, .svg, .md or .txt files); give the folder that "
			    "'cowsim compare' or 'cowsim sweep' wrote", dir);
		return false;
	}
	return true;
}

/* ---- parameters ----------------------------------------------------------------- */

/* The summary's parameter columns: those before "status" (sim/rows.h). */
static int summary_param_columns(const struct folder *f, const CsvTable **summary)
{
	*summary = NULL;
	if (!f->csvs->len || !is_summary_name(((CsvTable *)f->csvs->pdata[0])->name))
		return 0;
	*summary = f->csvs->pdata[0];
	int status = csv_column(*summary, "status");
	return status < 0 ? 0 : status;
}

/* The distinct values of a column, in order of appearance. */
static GPtrArray *distinct_values(const CsvTable *t, unsigned column)
{
	GPtrArray *values = g_ptr_array_new();
	for (unsigned r = 0; r < t->rows->len; r++) {
		const char *v = csv_cell(t->rows->pdata[r], column);
		bool seen = false;
		for (unsigned i = 0; !seen && i < values->len; i++)
			seen = !strcmp(values->pdata[i], v);
		if (!seen)
			g_ptr_array_add(values, (char *)v);
	}
	return values;
}

/* A text file whose every line is "key=value" or "key: value" (comments
 * '#' allowed) is a parameter file; its pairs go to *pairs. */
static bool read_parameter_file(const char *path, GPtrArray *pairs)
{
	g_autofree char *text = NULL;
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return false;
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func(g_free);
	for (char **l = lines; *l; l++) {
		g_strstrip(*l);
		if (!**l || **l == '#')
			continue;
		size_t key = strcspn(*l, "=:");
		if (!key || !(*l)[key] || strcspn(*l, " \t") < key)
			return false;
		g_ptr_array_add(found, g_strdup(*l));
	}
	if (!found->len)
		return false;
	for (unsigned i = 0; i < found->len; i++)
		g_ptr_array_add(pairs, g_strdup(found->pdata[i]));
	return true;
}

static void html_parameters(GString *out, const struct folder *f, GPtrArray *parameter_files)
{
	g_string_append(out, "<h2 id=\"parameters\">Parameters</h2>\n");
	const CsvTable *summary;
	int n = summary_param_columns(f, &summary);
	if (n) {
		g_string_append(out, "<p>Varied, from the columns of ");
		html_text(out, summary->name);
		g_string_append(out, " before <code>status</code>:</p>\n<table><tbody>\n");
		for (int c = 0; c < n; c++) {
			g_autoptr(GPtrArray) values = distinct_values(summary, (unsigned)c);
			g_string_append(out, "<tr><th>");
			html_text(out, summary->header->pdata[c]);
			g_string_append(out, "</th><td>");
			for (unsigned i = 0; i < values->len; i++) {
				g_string_append(out, i ? ", " : "");
				html_text(out, values->pdata[i]);
			}
			g_string_append(out, "</td></tr>\n");
		}
		g_string_append(out, "</tbody></table>\n");
	}
	g_autoptr(GPtrArray) pairs = g_ptr_array_new_with_free_func(g_free);
	for (unsigned i = 0; i < f->notes->len; i++) {
		g_autofree char *path = g_build_filename(f->dir, f->notes->pdata[i], NULL);
		if (has_suffix_ci(f->notes->pdata[i], ".txt") && read_parameter_file(path, pairs))
			g_ptr_array_add(parameter_files, g_strdup(f->notes->pdata[i]));
	}
	if (f->parameters) {
		g_string_append(out, "<p>Recorded in " PROVENANCE_PARAMETERS_FILE " (cowsim's version and commit, the "
				     "trace's sha256 and the command that generated it, every option; "
				     "docs/json.md):</p>\n<pre>");
		html_text(out, f->parameters);
		g_string_append(out, "</pre>\n");
	}
	if (pairs->len) {
		g_string_append(out, "<p>Recorded in the folder's parameter files:</p>\n<pre>");
		for (unsigned i = 0; i < pairs->len; i++) {
			html_text(out, pairs->pdata[i]);
			g_string_append_c(out, '\n');
		}
		g_string_append(out, "</pre>\n");
	}
	if (!n && !pairs->len && !f->parameters)
		g_string_append(out, "<p>The folder records no parameters: no compare.csv or sweep.csv with "
				     "parameter columns, no " PROVENANCE_PARAMETERS_FILE " and no key=value text file.</p>\n");
	else if (!pairs->len && !f->parameters)
		g_string_append(out, "<p class=\"note\">Options held fixed (trace, nodesize, device size, ...) are "
				     "not recorded in the folder unless a key=value .txt file names them.</p>\n");
}

/* ---- calibration ------------------------------------------------------------------ */

struct nodesize_error {
	char *nodesize;
	unsigned cases;
	double sum_abs, worst_abs, worst;
	char *worst_case;
};

static void nodesize_error_clear(gpointer p)
{
	struct nodesize_error *e = p;
	g_free(e->nodesize);
	g_free(e->worst_case);
}

static void add_unique(GPtrArray *list, const char *value)
{
	if (!g_ptr_array_find_with_equal_func(list, value, g_str_equal, NULL))
		g_ptr_array_add(list, g_strdup(value));
}

/* The "nodesize" of parameters.json's "model" object (provenance.h writes it
 * one member a line), or 0. */
static uint64_t parameters_nodesize(const char *json)
{
	const char *model = json ? strstr(json, "\n  \"model\": {") : NULL;
	const char *end = model ? strstr(model, "\n  }") : NULL;
	const char *member = model ? strstr(model, "\"nodesize\": ") : NULL;
	if (!member || member > end)
		return 0;
	return g_ascii_strtoull(member + strlen("\"nodesize\": "), NULL, 10);
}

/* "nodesize=16K" or "nodesize: 16384" lines of the parameter files, and the
 * model's nodesize in parameters.json, in bytes. */
static void parameter_nodesizes(const struct folder *f, GPtrArray *sizes)
{
	uint64_t recorded = parameters_nodesize(f->parameters);
	if (recorded) {
		g_autofree char *text = g_strdup_printf("%" PRIu64, recorded);
		add_unique(sizes, text);
	}
	g_autoptr(GPtrArray) pairs = g_ptr_array_new_with_free_func(g_free);
	for (unsigned i = 0; i < f->notes->len; i++) {
		g_autofree char *path = g_build_filename(f->dir, f->notes->pdata[i], NULL);
		if (has_suffix_ci(f->notes->pdata[i], ".txt"))
			read_parameter_file(path, pairs);
	}
	for (unsigned i = 0; i < pairs->len; i++) {
		const char *pair = pairs->pdata[i];
		if (!g_str_has_prefix(pair, "nodesize") || !strchr("=:", pair[8]))
			continue;
		g_autofree char *value = g_strstrip(g_strdup(pair + 9));
		uint64_t bytes;
		if (options_parse_size("nodesize", value, &bytes, NULL)) {
			g_autofree char *text = g_strdup_printf("%" PRIu64, bytes);
			add_unique(sizes, text);
		}
	}
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t r = a % b;
		a = b;
		b = r;
	}
	return a;
}

/* The columns of a per-run CSV that are whole blocks of metadata (rows.c). */
static bool is_block_column(const char *name)
{
	return !strcmp(name, "metadata_used") || (g_str_has_prefix(name, "tree_") && strcmp(name, "tree_other"));
}

/* The nodesize of runs that do not record it (compare's per-run CSVs): every
 * tree's size is a whole number of blocks, so the largest power of two from
 * 4K to 64K dividing every metadata_used and tree_* value is taken as the
 * nodesize. It is too large only if every tree held an even number of blocks
 * at every row; the root tree, one block in most runs, makes that unlikely,
 * and the page says how it was found. 0 when no CSV has these columns. */
static uint64_t inferred_nodesize(const struct folder *f, uint64_t *values)
{
	uint64_t g = 0;
	*values = 0;
	for (unsigned i = 0; i < f->csvs->len; i++) {
		const CsvTable *t = f->csvs->pdata[i];
		for (unsigned c = 0; c < t->header->len; c++) {
			if (!is_block_column(t->header->pdata[c]))
				continue;
			for (unsigned r = 0; r < t->rows->len; r++) {
				uint64_t v = g_ascii_strtoull(csv_cell(t->rows->pdata[r], c), NULL, 10);
				g = v ? gcd64(g, v) : g;
				*values += v != 0;
			}
		}
	}
	if (!g || g % 4096)
		return 0;
	uint64_t size = 4096;
	while (size < 65536 && g % (size * 2) == 0)
		size *= 2;
	return size;
}

/* The nodesizes the folder names: a "nodesize" column of its CSVs, or a
 * nodesize line of a parameter file; else the one its per-run CSVs show.
 * *source says which, for the page. */
static GPtrArray *folder_nodesizes(const struct folder *f, const char *given, char **source)
{
	GPtrArray *sizes = g_ptr_array_new_with_free_func(g_free);
	if (given) {
		add_unique(sizes, given);
		*source = g_strdup("given with --nodesize");
		return sizes;
	}
	parameter_nodesizes(f, sizes);
	for (unsigned i = 0; i < f->csvs->len; i++) {
		const CsvTable *t = f->csvs->pdata[i];
		int c = csv_column(t, "nodesize");
		if (c < 0)
			continue;
		g_autoptr(GPtrArray) values = distinct_values(t, (unsigned)c);
		for (unsigned v = 0; v < values->len; v++)
			add_unique(sizes, values->pdata[v]);
	}
	uint64_t values = 0, inferred = sizes->len ? 0 : inferred_nodesize(f, &values);
	if (inferred) {
		g_autofree char *text = g_strdup_printf("%" PRIu64, inferred);
		add_unique(sizes, text);
		*source = g_strdup_printf("inferred: the folder does not record its nodesize, and all %" PRIu64
					  " metadata_used and tree_* values of its per-run CSVs are whole blocks of "
					  "%" PRIu64 " bytes%s", values, inferred,
					  inferred < 65536 ? ", not all of twice that" : "");
	} else {
		*source = g_strdup("named by the folder (a nodesize column or a parameter file)");
	}
	return sizes;
}

static GArray *errors_by_nodesize(const CsvTable *cal, int ns, int err, int name, int mark)
{
	GArray *errors = g_array_new(false, true, sizeof(struct nodesize_error));
	g_array_set_clear_func(errors, nodesize_error_clear);
	for (unsigned r = 0; r < cal->rows->len; r++) {
		const GPtrArray *row = cal->rows->pdata[r];
		if (!is_number(csv_cell(row, (unsigned)err)))
			continue;
		double e = g_ascii_strtod(csv_cell(row, (unsigned)err), NULL);
		const char *size = ns >= 0 ? csv_cell(row, (unsigned)ns) : "all";
		struct nodesize_error *slot = NULL;
		for (unsigned i = 0; !slot && i < errors->len; i++)
			if (!strcmp(g_array_index(errors, struct nodesize_error, i).nodesize, size))
				slot = &g_array_index(errors, struct nodesize_error, i);
		if (!slot) {
			struct nodesize_error fresh = { .nodesize = g_strdup(size), .worst_abs = -1 };
			g_array_append_val(errors, fresh);
			slot = &g_array_index(errors, struct nodesize_error, errors->len - 1);
		}
		slot->cases++;
		slot->sum_abs += fabs(e);
		if (fabs(e) > slot->worst_abs) {
			slot->worst_abs = fabs(e);
			slot->worst = e;
			g_free(slot->worst_case);
			slot->worst_case = g_strdup_printf("%s at %s", name >= 0 ? csv_cell(row, (unsigned)name) : "?",
							   mark >= 0 ? csv_cell(row, (unsigned)mark) : "?");
		}
	}
	return errors;
}

static void html_calibration_table(GString *out, GArray *errors, const GPtrArray *applies)
{
	g_string_append(out, "<table><thead><tr><th>nodesize</th><th>rows</th><th>mean |error| %</th>"
			     "<th>worst error %</th><th>worst at</th><th>applies here</th></tr></thead><tbody>\n");
	for (unsigned i = 0; i < errors->len; i++) {
		const struct nodesize_error *e = &g_array_index(errors, struct nodesize_error, i);
		bool applies_here = g_ptr_array_find_with_equal_func((GPtrArray *)applies, e->nodesize, g_str_equal, NULL);
		g_string_append_printf(out, "<tr%s><td class=\"n\">", applies_here ? " class=\"applies\"" : "");
		html_text(out, e->nodesize);
		g_string_append_printf(out, "</td><td class=\"n\">%u</td><td class=\"n\">%.2f</td><td class=\"n\">%+.2f"
				       "</td><td>", e->cases, e->sum_abs / e->cases, e->worst);
		html_text(out, e->worst_case);
		g_string_append_printf(out, "</td><td>%s</td></tr>\n", applies_here ? "yes" : "");
	}
	g_string_append(out, "</tbody></table>\n");
}

/* "The error that applies here": the calibration's worst error at the nodesize of the runs. */
static void html_applying_error(GString *out, GArray *errors, const char *nodesize, const char *source)
{
	for (unsigned i = 0; i < errors->len; i++) {
		const struct nodesize_error *e = &g_array_index(errors, struct nodesize_error, i);
		if (strcmp(e->nodesize, nodesize))
			continue;
		g_string_append_printf(out, "<p class=\"applies\"><b>The error that applies here, nodesize %s: worst "
				       "%+.2f%%</b> (", nodesize, e->worst);
		html_text(out, e->worst_case);
		g_string_append_printf(out, "), mean |error| %.2f%% over %u calibration marks. Nodesize ",
				       e->sum_abs / e->cases, e->cases);
		html_text(out, source);
		g_string_append(out, ".</p>\n");
		return;
	}
	g_string_append_printf(out, "<p class=\"warn\"><b>No calibration case at nodesize %s</b> (", nodesize);
	html_text(out, source);
	g_string_append(out, "): the model has not been compared with real btrfs at that size.</p>\n");
}

static void html_calibration(GString *out, const struct folder *f, const char *path, const char *nodesize)
{
	g_string_append(out, "<h2 id=\"calibration\">Calibration</h2>\n<p>How far the model's metadata_used is from "
			     "real btrfs on the calibration runs (<code>tools/calibrate</code>): error_pct = "
			     "(predicted &minus; measured) / measured, from ");
	html_text(out, path ? path : "results/calibration.csv");
	g_string_append(out, ".</p>\n");
	g_autoptr(GError) error = NULL;
	g_autoptr(CsvTable) cal = path && g_file_test(path, G_FILE_TEST_EXISTS) ? csv_read(path, "calibration.csv", &error)
										 : NULL;
	int err = cal ? csv_column(cal, "error_pct") : -1;
	if (!cal || err < 0) {
		g_string_append(out, "<p class=\"warn\">No calibration error applies: ");
		html_text(out, error ? error->message : cal ? "the file has no error_pct column" : "the file is absent");
		g_string_append(out, ". The numbers above have not been compared with real btrfs here.</p>\n");
		return;
	}
	g_autoptr(GArray) all = errors_by_nodesize(cal, -1, err, csv_column(cal, "case"), csv_column(cal, "mark"));
	g_autoptr(GArray) by_size = errors_by_nodesize(cal, csv_column(cal, "nodesize"), err, csv_column(cal, "case"),
						       csv_column(cal, "mark"));
	if (!all->len) {
		g_string_append(out, "<p class=\"warn\">The calibration file has no numeric error_pct.</p>\n");
		return;
	}
	const struct nodesize_error *w = &g_array_index(all, struct nodesize_error, 0);
	g_string_append_printf(out, "<p><b>Worst error: %+.2f%%</b> (", w->worst);
	html_text(out, w->worst_case);
	g_string_append_printf(out, "), over %u rows; mean |error| %.2f%%.</p>\n", w->cases, w->sum_abs / w->cases);
	g_autofree char *source = NULL;
	g_autoptr(GPtrArray) applies = folder_nodesizes(f, nodesize, &source);
	if (!applies->len)
		g_string_append(out, "<p class=\"note\">The folder does not name its nodesize, so no row is marked as "
				     "applying; cowsim's default nodesize is 16384.</p>\n");
	for (unsigned i = 0; i < applies->len; i++)
		html_applying_error(out, by_size, applies->pdata[i], source);
	html_calibration_table(out, by_size, applies);
}

/* ---- the page ----------------------------------------------------------------------- */

static const char page_style[] =
	"body{font-family:Helvetica,Arial,sans-serif;margin:2em auto;max-width:75em;padding:0 1em;color:#222}"
	"h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}"
	"table{border-collapse:collapse;margin:.5em 0;font-size:.85em}"
	"th,td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top}th{background:#f0f0f0;text-align:left}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}td small{color:#666}"
	"tr.applies td{background:#e6f0fa}p.applies{background:#e6f0fa;padding:.4em}.scroll{overflow-x:auto}"
	"figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}figcaption{font-size:.85em;color:#555}"
	".note{color:#555;font-size:.9em}.warn{color:#8a3b00}pre{background:#f6f6f6;padding:.5em;overflow-x:auto}"
	"nav a{margin-right:1em}";

/* Sets data-images-loaded/-total on <body> once every image has had its
 * chance to load; a headless browser reads it back from the DOM. */
static const char page_script[] =
	"window.addEventListener('load',function(){var im=document.images,ok=0;"
	"for(var i=0;i<im.length;i++){if(im[i].complete&&im[i].naturalWidth>0)ok++;}"
	"document.body.setAttribute('data-images-loaded',String(ok));"
	"document.body.setAttribute('data-images-total',String(im.length));});";

static bool html_image(GString *out, const char *dir, const char *name, GError **error)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);
	g_autofree char *bytes = NULL;
	gsize length = 0;
	if (!g_file_get_contents(path, &bytes, &length, error))
		return false;
	g_autofree char *base64 = g_base64_encode((const guchar *)bytes, length);
	g_string_append_printf(out, "<figure><img alt=\"");
	html_text(out, name);
	g_string_append_printf(out, "\" src=\"data:%s;base64,%s\"><figcaption>", has_suffix_ci(name, ".png") ?
			       "image/png" : "image/svg+xml", base64);
	html_text(out, name);
	g_string_append(out, "</figcaption></figure>\n");
	return true;
}

static bool html_notes(GString *out, const struct folder *f, const GPtrArray *parameter_files, GError **error)
{
	for (unsigned i = 0; i < f->notes->len; i++) {
		const char *name = f->notes->pdata[i];
		if (g_ptr_array_find_with_equal_func((GPtrArray *)parameter_files, name, g_str_equal, NULL))
			continue;
		g_autofree char *path = g_build_filename(f->dir, name, NULL);
		g_autofree char *text = NULL;
		if (!g_file_get_contents(path, &text, NULL, error))
			return false;
		g_string_append(out, "<h3>");
		html_text(out, name);
		g_string_append(out, "</h3>\n");
		if (has_suffix_ci(name, ".md")) {
			md_render(out, text);
		} else {
			g_string_append(out, "<pre>");
			html_text(out, text);
			g_string_append(out, "</pre>\n");
		}
	}
	return true;
}

static void html_files(GString *out, const struct folder *f)
{
	g_string_append(out, "<h2 id=\"files\">Files</h2>\n<p class=\"note\">");
	g_string_append_printf(out, "%u CSV, %u images, %u notes", f->csvs->len, f->images->len, f->notes->len);
	if (f->others->len) {
		g_string_append(out, "; not shown: ");
		for (unsigned i = 0; i < f->others->len; i++) {
			g_string_append(out, i ? ", " : "");
			html_text(out, f->others->pdata[i]);
		}
	}
	if (f->left_out)
		g_string_append_printf(out, "; %u hidden or temporary files left out", f->left_out);
	g_string_append(out, ".</p>\n");
}

struct report_args {
	char *output;
	char *calibration;
	char *nodesize;               /* --nodesize, in bytes as text; NULL: from the folder */
	char *title;
	gint64 max_rows;
	char **rest;
	char **given;                 /* the arguments as given, for FILE.parameters.json */
	GArray *entries;              /* every option (cli_take_entries) */
};

static void html_csv_section(GString *out, const CsvTable *t, unsigned max_rows)
{
	g_string_append(out, "<h3>");
	html_text(out, t->name);
	g_string_append(out, "</h3>\n");
	html_table(out, t, max_rows);
}

static bool html_page(GString *out, const struct folder *f, const struct report_args *a, GError **error)
{
	g_autofree char *title = a->title ? g_strdup(a->title) : g_strdup_printf("cowsim report: %s", f->dir);
	g_string_append_printf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			       "img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n<title>");
	html_text(out, title);
	g_string_append_printf(out, "</title>\n<style>%s</style></head>\n<body>\n<h1>", page_style);
	html_text(out, title);
	g_string_append_printf(out, "</h1>\n<p class=\"note\">Made by cowsim %s from the files of the folder; "
			       "the page is self-contained.</p>\n<nav><a href=\"#parameters\">Parameters</a>"
			       "<a href=\"#summary\">Summary</a><a href=\"#plots\">Plots</a><a href=\"#calibration\">"
			       "Calibration</a><a href=\"#runs\">Runs</a><a href=\"#files\">Files</a></nav>\n", COWSIM_VERSION);
	g_autoptr(GPtrArray) parameter_files = g_ptr_array_new_with_free_func(g_free);
	html_parameters(out, f, parameter_files);
	/* Summary, plots, calibration and notes first: what a reviewer reads;
	 * then the per-run tables. */
	unsigned first = f->csvs->len && is_summary_name(((CsvTable *)f->csvs->pdata[0])->name) ? 1 : 0;
	g_string_append(out, "<h2 id=\"summary\">Summary</h2>\n");
	if (first)
		html_csv_section(out, f->csvs->pdata[0], 0);
	else
		g_string_append(out, "<p>No compare.csv or sweep.csv: the folder's tables are under Runs.</p>\n");
	g_string_append(out, "<h2 id=\"plots\">Plots</h2>\n");
	if (!f->images->len)
		g_string_append(out, "<p>No PNG or SVG files.</p>\n");
	for (unsigned m = 0; m < f->images->len; m++)
		if (!html_image(out, f->dir, f->images->pdata[m], error))
			return false;
	html_calibration(out, f, a->calibration, a->nodesize);
	if (f->notes->len > parameter_files->len)
		g_string_append(out, "<h2 id=\"notes\">Notes</h2>\n");
	if (!html_notes(out, f, parameter_files, error))
		return false;
	if (f->csvs->len > first)
		g_string_append(out, "<h2 id=\"runs\">Runs</h2>\n");
	for (unsigned i = first; i < f->csvs->len; i++)
		html_csv_section(out, f->csvs->pdata[i], (unsigned)a->max_rows);
	html_files(out, f);
	g_string_append_printf(out, "<script>%s</script>\n</body></html>\n", page_script);
	return true;
}

/* ---- the command ----------------------------------------------------------------------- */

/* results/calibration.csv, installed or in the source tree (cli_find_data). */
static char *default_calibration(void)
{
	return cli_find_data("calibration.csv", NULL);
}

/* --nodesize 16K becomes "16384"; false unless it is a btrfs nodesize. */
static bool nodesize_in_bytes(char **text, GError **error)
{
	uint64_t bytes = 0;
	if (!options_parse_size("--nodesize", *text, &bytes, error))
		return false;
	if (bytes < 4096 || bytes > 65536 || (bytes & (bytes - 1))) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--nodesize: %s is not a btrfs nodesize (4K, 8K, 16K, 32K, 64K)", *text);
		return false;
	}
	g_free(*text);
	*text = g_strdup_printf("%" PRIu64, bytes);
	return true;
}

static const struct cli_doc report_doc = {
	.command = "report",
	.args = "DIR",
	.summary = "Turns the folder that 'cowsim compare' or 'cowsim sweep' wrote (or any folder of\n"
		   "CSV, PNG, SVG, Markdown and text files) into one HTML page: the parameters, the\n"
		   "tables, the plots inlined as data URIs, and the calibration error that applies.",
	.examples = "  cowsim compare t.trace -o cmp && cowsim report cmp\n"
		    "  cowsim report cmp -o cmp.html --title 'seed experiment'\n"
		    "  cowsim report cmp -o - > page.html",
	.notes = "Beside a page written to FILE.html goes FILE.parameters.json (docs/json.md): cowsim's\n"
		 "version and commit, every option, the calibration file's sha256 and the folder's\n"
		 "parameters.json (the trace's sha256 and generator); none with -o -.",
	.exits = "  0  written\n"
		 "  1  the page or its parameters.json could not be written\n"
		 "  2  bad arguments, an unreadable folder or a malformed CSV",
};

static int parse_report_args(int argc, char **argv, struct report_args *a)
{
	a->max_rows = 50;
	const GOptionEntry entries[] = {
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output, "write the page to FILE (default DIR/report.html; '-': stdout)",
		  "FILE" },
		{ "calibration", 0, 0, G_OPTION_ARG_FILENAME, &a->calibration,
		  "the calibration errors (default: the calibration.csv installed with cowsim, or results/ of the source tree)", "CSV" },
		{ "title", 0, 0, G_OPTION_ARG_STRING, &a->title, "the page's title", "TEXT" },
		{ "nodesize", 0, 0, G_OPTION_ARG_STRING, &a->nodesize,
		  "the runs' nodesize, for the calibration error that applies (default: what the folder "
		  "records, else what its per-run CSVs show)", "SIZE" },
		{ "max-rows", 0, 0, G_OPTION_ARG_INT64, &a->max_rows,
		  "rows shown of each per-run CSV (default 50, 0: all; summaries are shown whole)", "N" },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->rest, NULL, NULL },
		{ NULL },
	};
	a->given = g_strdupv(argv + 1);
	g_autoptr(GOptionContext) context = cli_context_new(&report_doc);
	cli_add_entries(context, entries);
	bool parsed = cli_parse(context, &report_doc, &argc, &argv);
	a->entries = cli_take_entries(context);
	if (!parsed)
		return EXIT_BAD_INPUT;
	g_autoptr(GError) error = NULL;
	if (!a->rest || !a->rest[0] || a->rest[1]) {
		fprintf(stderr, "cowsim report: give exactly one DIR (see 'cowsim report --help')\n");
		return EXIT_BAD_INPUT;
	}
	if (a->max_rows < 0 || a->max_rows > UINT32_MAX) {
		fprintf(stderr, "cowsim report: --max-rows takes a count, 0 or more\n");
		return EXIT_BAD_INPUT;
	}
	if (a->nodesize && !nodesize_in_bytes(&a->nodesize, &error)) {
		fprintf(stderr, "cowsim report: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	if (!a->output)
		a->output = g_build_filename(a->rest[0], "report.html", NULL);
	if (!a->calibration)
		a->calibration = default_calibration();
	return EXIT_OK;
}

static void free_report_args(struct report_args *a)
{
	g_free(a->output);
	g_free(a->calibration);
	g_free(a->nodesize);
	g_free(a->title);
	g_strfreev(a->rest);
	g_strfreev(a->given);
	if (a->entries)
		g_array_unref(a->entries);
}

/* FILE.parameters.json beside the page: the report's options, the
 * calibration it read and the folder's own parameters.json, embedded when it
 * is one cowsim wrote (provenance.h). */
static int write_parameters(const struct report_args *a, const char *folder_parameters)
{
	g_autoptr(GError) error = NULL;
	struct provenance p = { .command = "report", .argv = a->given, .entries = a->entries };
	ResultsJson *w = provenance_begin(&p, PROVENANCE_PARAMETERS_SCHEMA, &error);
	g_autofree char *calibration_sha256 = a->calibration ? sweep_store_file_sha256(a->calibration, NULL) : NULL;
	results_json_begin_object(w, "calibration");
	results_json_string(w, "path", a->calibration);
	results_json_string(w, "sha256", calibration_sha256);
	results_json_end(w);
	results_json_string(w, "folder", a->rest[0]);
	if (folder_parameters && g_str_has_prefix(folder_parameters, "{\n  \"schema\": \"" PROVENANCE_PARAMETERS_SCHEMA "\""))
		results_json_raw(w, "folder_parameters", folder_parameters);
	else
		results_json_null(w, "folder_parameters");
	results_json_end(w);
	g_autofree char *path = page_parameters_path(a->output);
	return provenance_write(w, "report", path) ? EXIT_OK : EXIT_RUN_FAILED;
}

static int write_report(const struct report_args *a)
{
	g_autoptr(GError) error = NULL;
	struct folder f;
	bool ok = read_folder(&f, a->rest[0], a->output, &error);
	g_autoptr(GString) page = g_string_new(NULL);
	ok = ok && html_page(page, &f, a, &error);
	g_autofree char *folder_parameters = g_steal_pointer(&f.parameters);
	folder_clear(&f);
	if (!ok) {
		fprintf(stderr, "cowsim report: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	if (cli_is_stdio(a->output)) {
		fwrite(page->str, 1, page->len, stdout);
		return EXIT_OK; /* main() reports a failed flush of stdout */
	}
	if (!g_file_set_contents(a->output, page->str, (gssize)page->len, &error)) {
		fprintf(stderr, "cowsim report: %s\n", error->message);
		return EXIT_RUN_FAILED;
	}
	return write_parameters(a, folder_parameters);
}

int cmd_report(int argc, char **argv)
{
	struct report_args args = { 0 };
	int status = parse_report_args(argc, argv, &args);
	if (status == EXIT_OK)
		status = write_report(&args);
	free_report_args(&args);
	return status;
}
