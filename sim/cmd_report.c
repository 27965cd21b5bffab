/*
 * sim/cmd_report.c - `cowsim report DIR [-o FILE.html]`: a folder of results
 * (what `cowsim compare` or `cowsim sweep` writes, or any folder of CSV, PNG,
 * SVG, Markdown and text files) as one self-contained HTML page.
 *
 * How it works
 *   The folder's files are read in name order and sorted into sections,
 *   shown in this order:
 *
 *     parameters (see below)      --> the title, and a short block under it
 *     DIR/NAME.png, NAME.svg      --> "Plots": <img src="data:image/...;base64,...">
 *                                     (a PNG hides the SVG of the same name;
 *                                     the summary's own, compare.png, first),
 *                                     each captioned with the command that drew
 *                                     it: the PNG's Comment text or the SVG's
 *                                     <dc:description>, where plot.py keeps it
 *     DIR/compare.csv, sweep.csv  --> "Summary": the one table of results; its
 *                                     parameter columns (those before "status")
 *                                     are the parameters varied
 *     DIR/compare.md, sweep.md    --> not shown: the summary again, in Markdown
 *     DIR/NAME.md, NAME.txt       --> "Notes": Markdown tables, headings and
 *                                     paragraphs; text as it is
 *     DIR/other .csv files        --> "Runs", last: one table each (the first
 *                                     --max-rows rows), folded in <details>
 *     results/calibration.csv     --> "Calibration": the worst error of the
 *                                     model against real btrfs, by nodesize, and
 *                                     the one that applies at the runs' nodesize
 *                                     (--nodesize, the folder's nodesize column
 *                                     or parameter file, else inferred from the
 *                                     per-run CSVs' tree sizes)
 *
 *   Options held fixed are shown when DIR/parameters.json (compare and sweep
 *   write it, provenance.h: its trace and model members) or a key=value .txt
 *   file records them. The title is made from them: the trace (parameters.json,
 *   or a sweep plan's trace or --gen template), the values of each parameter
 *   varied, the design and nodesize held fixed. Beside a page written to
 *   FILE.html goes FILE.parameters.json: the report's own options, the
 *   calibration file's sha256 and the folder's parameters.json. Nothing outside
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
 *   RP3 Exit status: 0 written; 1 the disk filled under the page; 2 DIR
 *      unreadable, empty of results, a CSV malformed (file, line and field
 *      named) or an output path that cannot be created (CLI2).
 *   RP4 Plots before tables, and the summary once: no <table> precedes the
 *      first figure; the summary's Markdown twin is listed, not rendered.
 *   RP5 A figure that records the command that drew it shows it, as text the
 *      shell can run in the folder (plot.py makes its paths relative to it).
 *   RP6 A compare's folder is shown only if its files belong together: the
 *      runs parameters.json lists are compare.csv's lines, in order, each
 *      listed CSV is there, and every sha256 it records (compare.csv's, each
 *      run CSV's: cmd_compare.c CM5) is that file's. Otherwise exit 2 naming
 *      the file and the field that disagree, never a page that mixes two
 *      compares (the trace parameters.json names is not the one the tables
 *      came from).
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
#include "multirun.h"
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

/* A row has exactly the header's fields: a short or long row is a malformed
 * CSV (exit 2), named by file, line and the first field that is off. */
static bool csv_row_fits(const CsvTable *t, const GPtrArray *row, const char *path, unsigned line, GError **error)
{
	if (row->len == t->header->len)
		return true;
	if (row->len < t->header->len)
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s:%u: field %u (%s): missing: %u fields, the header has %u",
			    path, line, row->len + 1, (const char *)t->header->pdata[row->len], row->len, t->header->len);
	else
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s:%u: field %u: no such column: %u fields, the header has %u",
			    path, line, t->header->len + 1, row->len, t->header->len);
	return false;
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
		unsigned first = ++line;
		GPtrArray *row = csv_record(&p, path, &line, error);
		if (!row)
			return NULL;
		g_ptr_array_add(t->rows, row);
		if (!csv_row_fits(t, row, path, first, error))
			return NULL;
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
	GPtrArray *twins;             /* char * file names: the summary again (compare.md) */
	GPtrArray *svg_twins;         /* char * file names: the SVG of a PNG shown */
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
	g_ptr_array_unref(f->twins);
	g_ptr_array_unref(f->svg_twins);
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

/* compare.md beside compare.csv (sweep.md beside sweep.csv): the summary
 * table again, in Markdown for a terminal or a pull request; the page shows
 * the summary once, from the CSV (RP4). */
static bool shares_summary_stem(const GPtrArray *names, const char *name, const char *suffix)
{
	if (!has_suffix_ci(name, suffix))
		return false;
	g_autofree char *csv = g_strdup_printf("%.*s.csv", (int)(strlen(name) - strlen(suffix)), name);
	return is_summary_name(csv) && g_ptr_array_find_with_equal_func((GPtrArray *)names, csv, g_str_equal, NULL);
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
	f->twins = g_ptr_array_new_with_free_func(g_free);
	f->svg_twins = g_ptr_array_new_with_free_func(g_free);
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
			/* the summary's own figure (compare.png, sweep.png) leads */
			bool lead = shares_summary_stem(names, name, ".png") || shares_summary_stem(names, name, ".svg");
			g_ptr_array_insert(f->images, lead ? 0 : -1, g_strdup(name));
		} else if (has_suffix_ci(name, ".svg")) {
			g_ptr_array_add(f->svg_twins, g_strdup(name));
		} else if (shares_summary_stem(names, name, ".md")) {
			g_ptr_array_add(f->twins, g_strdup(name));
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

/* ---- RP6: a compare's files belong together -------------------------------------- */

/* "design zfs, mount relatime, policy inline" (design only when given). */
static char *run_text(const char *design, const char *mount, const char *policy)
{
	return g_strdup_printf("%s%s%smount %s, policy %s", design ? "design " : "", design ? design : "",
			       design ? ", " : "", mount ? mount : "?", policy ? policy : "?");
}

/* compare.csv's line `row` as run_text(). */
static char *summary_run_text(const CsvTable *summary, unsigned row)
{
	const GPtrArray *cells = summary->rows->pdata[row];
	int design = csv_column(summary, "design"), mount = csv_column(summary, "mount");
	int policy = csv_column(summary, "policy");
	return run_text(design < 0 ? NULL : csv_cell(cells, (unsigned)design),
			mount < 0 ? NULL : csv_cell(cells, (unsigned)mount),
			policy < 0 ? NULL : csv_cell(cells, (unsigned)policy));
}

/* The field `field` of parameters.json records `expected` as the sha256 of
 * DIR/NAME (when it records one). */
static bool sha256_matches(const struct folder *f, const char *name, const char *field, const char *expected,
			   GError **error)
{
	g_autofree char *path = g_build_filename(f->dir, name, NULL);
	g_autofree char *parameters = g_build_filename(f->dir, PROVENANCE_PARAMETERS_FILE, NULL);
	g_autofree char *actual = expected ? sweep_store_file_sha256(path, NULL) : NULL;
	if (!expected || (actual && !strcmp(actual, expected)))
		return true;
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
		    "%s: field %s: %s is not the file it records (sha256 %.12s..., the file's %.12s...): the folder "
		    "mixes two compares; run the compare again", parameters, field, path, expected,
		    actual ? actual : "unreadable");
	return false;
}

/* One run of parameters.json against compare.csv's line `i` and its CSV. */
static bool run_matches(const struct folder *f, const CsvTable *summary, GHashTable *run, unsigned i, GError **error)
{
	g_autofree char *parameters = g_build_filename(f->dir, PROVENANCE_PARAMETERS_FILE, NULL);
	g_autofree char *listed = run_text(g_hash_table_lookup(run, "design"), g_hash_table_lookup(run, "mount"),
					   g_hash_table_lookup(run, "policy"));
	g_autofree char *line = i < summary->rows->len ? summary_run_text(summary, i) : NULL;
	if (!line || strcmp(listed, line)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "%s: field runs[%u]: lists %s, but %s/compare.csv line %u %s%s: the folder mixes two "
			    "compares; run the compare again", parameters, i, listed, f->dir, i + 2,
			    line ? "has " : "is not there", line ? line : "");
		return false;
	}
	const char *csv = g_hash_table_lookup(run, "csv");
	g_autofree char *path = csv ? g_build_filename(f->dir, csv, NULL) : NULL;
	if (csv && !g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s: field runs[%u].csv: %s is not there",
			    parameters, i, path);
		return false;
	}
	g_autofree char *field = g_strdup_printf("runs[%u].sha256", i);
	return !csv || sha256_matches(f, csv, field, g_hash_table_lookup(run, "sha256"), error);
}

/* RP6 for a folder whose parameters.json a compare wrote; any other passes. */
static bool compare_folder_whole(const struct folder *f, GError **error)
{
	if (!f->parameters || !strstr(f->parameters, "\n  \"command\": \"compare\",\n"))
		return true;
	g_autoptr(GPtrArray) runs = multirun_parameters_objects(f->parameters, "runs");
	g_autoptr(GPtrArray) summary_member = multirun_parameters_objects(f->parameters, "summary");
	const CsvTable *summary = f->csvs->len ? f->csvs->pdata[0] : NULL;
	if (!summary || strcmp(summary->name, "compare.csv")) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "%s/%s: field command: a compare's, but %s/compare.csv is not there", f->dir,
			    PROVENANCE_PARAMETERS_FILE, f->dir);
		return false;
	}
	for (unsigned i = 0; runs && i < runs->len; i++)
		if (!run_matches(f, summary, runs->pdata[i], i, error))
			return false;
	if (runs && runs->len != summary->rows->len) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "%s/%s: field runs: lists %u runs, but %s/compare.csv has %u lines: the folder mixes two "
			    "compares; run the compare again", f->dir, PROVENANCE_PARAMETERS_FILE, runs->len, f->dir,
			    summary->rows->len);
		return false;
	}
	return !summary_member || !summary_member->len ||
	       sha256_matches(f, "compare.csv", "summary.sha256",
			      g_hash_table_lookup(summary_member->pdata[0], "sha256"), error);
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

/* What the folder says about its runs: the parameters varied (the summary's
 * columns before "status"), those held fixed (the parameter files' pairs),
 * and a sweep plan's title (its trace or --gen template). */
struct parameters {
	const CsvTable *summary;      /* compare.csv or sweep.csv; NULL: none */
	int varied;                   /* its parameter columns */
	GPtrArray *fixed;             /* char *: "key=value" lines of the parameter files */
	GPtrArray *files;             /* char *: those files' names */
	char *plan_title;             /* sweep-plan.ini's title; NULL: no plan */
};

/* The members of parameters.json's "trace" and "model" objects as
 * "key=value" pairs (the trace's path as trace=, its sha256 as trace_sha256=,
 * its generator as gen_command=; null members left out). provenance.h writes
 * one member a line, so the lines are read, not the JSON parsed. */
static void parameters_json_pairs(const char *json, GPtrArray *pairs)
{
	g_auto(GStrv) lines = g_strsplit(json ? json : "", "\n", -1);
	const char *object = NULL;
	for (char **l = lines; *l; l++) {
		if (!strcmp(*l, "  \"trace\": {") || !strcmp(*l, "  \"model\": {")) {
			object = (*l)[3] == 't' ? "trace" : "model";
			continue;
		}
		if (!object)
			continue;
		if (g_str_has_prefix(*l, "  }")) { /* the object's end */
			object = NULL;
			continue;
		}
		if (!g_str_has_prefix(*l, "    \""))
			continue;
		g_autofree char *key = g_strndup(*l + 5, strcspn(*l + 5, "\""));
		const char *value = *l + 5 + strlen(key) + strlen("\": ");
		g_autofree char *text = g_strndup(value, strlen(value) - g_str_has_suffix(value, ","));
		if (!strcmp(text, "null"))
			continue;
		if (*text == '"') { /* "..." with JSON's escapes: \" \\ \n as C's */
			text[strlen(text) - 1] = '\0';
			char *plain = g_strcompress(text + 1);
			g_free(text);
			text = plain;
		}
		if (!strcmp(object, "trace"))
			g_ptr_array_add(pairs, g_strdup_printf("%s=%s", !strcmp(key, "path") ? "trace" :
							       !strcmp(key, "sha256") ? "trace_sha256" : key, text));
		else
			g_ptr_array_add(pairs, g_strdup_printf("%s=%s", key, text));
	}
}

static bool is_varied(const struct parameters *p, const char *column);

static void parameters_read(struct parameters *p, const struct folder *f)
{
	*p = (struct parameters){ .fixed = g_ptr_array_new_with_free_func(g_free),
				  .files = g_ptr_array_new_with_free_func(g_free) };
	p->varied = summary_param_columns(f, &p->summary);
	if (f->parameters) { /* less what a sweep varies: the model has its first point's */
		g_autoptr(GPtrArray) pairs = g_ptr_array_new_with_free_func(g_free);
		parameters_json_pairs(f->parameters, pairs);
		for (unsigned i = 0; i < pairs->len; i++) {
			g_autofree char *key = g_strndup(pairs->pdata[i], strcspn(pairs->pdata[i], "="));
			g_autofree char *option = g_strdelimit(g_strdup(key), "_", '-');
			if (!is_varied(p, key) && !is_varied(p, option))
				g_ptr_array_add(p->fixed, g_strdup(pairs->pdata[i]));
		}
		g_ptr_array_add(p->files, g_strdup(PROVENANCE_PARAMETERS_FILE));
	}
	for (unsigned i = 0; i < f->notes->len; i++) {
		g_autofree char *path = g_build_filename(f->dir, f->notes->pdata[i], NULL);
		if (has_suffix_ci(f->notes->pdata[i], ".txt") && read_parameter_file(path, p->fixed))
			g_ptr_array_add(p->files, g_strdup(f->notes->pdata[i]));
	}
	g_autofree char *plan_path = g_build_filename(f->dir, SWEEP_STORE_PLAN, NULL);
	struct sweep_plan plan;
	sweep_plan_init(&plan);
	if (g_file_test(plan_path, G_FILE_TEST_IS_REGULAR) && sweep_plan_read(f->dir, &plan, NULL))
		p->plan_title = g_strdup(plan.title);
	sweep_plan_clear(&plan);
}

static void parameters_clear(struct parameters *p)
{
	g_ptr_array_unref(p->fixed);
	g_ptr_array_unref(p->files);
	g_free(p->plan_title);
}

static bool is_parameter_file(const struct parameters *p, const char *name)
{
	return g_ptr_array_find_with_equal_func(p->files, name, g_str_equal, NULL);
}

/* The value of KEY in the parameter files ("key=value" or "key: value"), or NULL. */
static const char *fixed_value(const struct parameters *p, const char *key)
{
	size_t n = strlen(key);
	for (unsigned i = 0; i < p->fixed->len; i++) {
		const char *pair = p->fixed->pdata[i];
		if (!strncmp(pair, key, n) && (pair[n] == '=' || pair[n] == ':'))
			return pair + n + 1 + strspn(pair + n + 1, " \t");
	}
	return NULL;
}

static bool is_varied(const struct parameters *p, const char *column)
{
	for (int c = 0; c < p->varied; c++)
		if (!strcmp(p->summary->header->pdata[c], column))
			return true;
	return false;
}

/* "mounts=relatime,noatime" in parameters.txt lists the values of the
 * varied column "mount" (policies: policy): not an option held fixed. */
static bool names_varied_list(const struct parameters *p, const char *pair)
{
	for (int c = 0; c < p->varied; c++) {
		const char *column = p->summary->header->pdata[c];
		size_t n = strlen(column);
		g_autofree char *plural = n && column[n - 1] == 'y' ? g_strdup_printf("%.*sies", (int)n - 1, column)
								    : g_strdup_printf("%ss", column);
		size_t key = strcspn(pair, "=:");
		if ((key == n && !strncmp(pair, column, n)) || (key == strlen(plural) && !strncmp(pair, plural, key)))
			return true;
	}
	return false;
}

/* A parameter's value for a reader: sizes in KiB/MiB/GiB. */
static void append_value(GString *out, const char *column, const char *value)
{
	char size[RESULTS_SIZE_BUF];
	char *end;
	guint64 bytes = g_ascii_strtoull(value, &end, 10);
	if (is_bytes_column(column) && *value && !*end) {
		char *text = results_format_size(bytes, size), *zero = strstr(text, ".0 ");
		if (zero) /* "4 KiB", not "4.0 KiB" */
			memmove(zero, zero + 2, strlen(zero + 2) + 1);
		g_string_append(out, text);
	}
	else
		g_string_append(out, value);
}

/* "mount relatime, noatime": a varied column and its values, in order of
 * appearance; a long list keeps its ends and says how many. */
static void append_varied(GString *out, const struct parameters *p, int column)
{
	enum { SHOWN = 6 };
	const char *name = p->summary->header->pdata[column];
	g_autoptr(GPtrArray) values = distinct_values(p->summary, (unsigned)column);
	g_string_append_printf(out, "%s ", name);
	for (unsigned i = 0; i < values->len; i++) {
		if (values->len > SHOWN && i == SHOWN - 1) {
			g_string_append_printf(out, "…, ");
			append_value(out, name, values->pdata[values->len - 1]);
			g_string_append_printf(out, " (%u values)", values->len);
			break;
		}
		g_string_append(out, i ? ", " : "");
		append_value(out, name, values->pdata[i]);
	}
}

/* The page's title, made from the parameters (--title replaces it):
 *
 *   grep-all.trace: mount relatime, noatime × policy inline, side-table (btrfs, nodesize 4 KiB)
 *   seed-experiment --snapshots {snapshots}: snapshots 0, 1, 2, 3 × nodesize 4 KiB, 16 KiB
 *
 * the trace (parameters.json) or the sweep plan's trace or template, the
 * parameters varied with their values, then the design and nodesize when
 * they were held fixed. A folder that records nothing is named by its path. */
static char *page_title(const struct parameters *p, const char *dir)
{
	GString *title = g_string_new(NULL);
	const char *trace = fixed_value(p, "trace");
	if (trace)
		g_string_append(title, strrchr(trace, '/') ? strrchr(trace, '/') + 1 : trace);
	else if (p->plan_title)
		g_string_append(title, g_str_has_prefix(p->plan_title, "sweep: ") ? p->plan_title + 7 : p->plan_title);
	if (!title->len && !p->varied) {
		g_string_printf(title, "cowsim report: %s", dir);
		return g_string_free(title, false);
	}
	for (int c = 0; c < p->varied; c++) {
		g_string_append(title, c ? " × " : title->len ? ": " : "");
		append_varied(title, p, c);
	}
	const char *design = is_varied(p, "design") ? NULL : fixed_value(p, "design");
	const char *nodesize = is_varied(p, "nodesize") ? NULL : fixed_value(p, "nodesize");
	if (design || nodesize) {
		g_string_append(title, " (");
		g_string_append(title, design ? design : "");
		g_string_append(title, design && nodesize ? ", " : "");
		if (nodesize) {
			g_string_append(title, "nodesize ");
			append_value(title, "nodesize", nodesize);
		}
		g_string_append(title, ")");
	}
	return g_string_free(title, false);
}

/* The parameters, short, above the plots: varied with their values, and
 * the options held fixed as the parameter files record them. No table: the
 * summary is the page's one table of results. */
static void html_parameters(GString *out, const struct parameters *p)
{
	g_string_append(out, "<section id=\"parameters\" class=\"params\">\n");
	if (p->varied) {
		g_string_append(out, "<p><b>Varied</b> (the columns of ");
		html_text(out, p->summary->name);
		g_string_append(out, " before <code>status</code>): ");
		for (int c = 0; c < p->varied; c++) {
			g_autoptr(GString) varied = g_string_new(NULL);
			append_varied(varied, p, c);
			g_string_append(out, c ? "; " : "");
			html_text(out, varied->str);
		}
		g_string_append(out, ".</p>\n");
	}
	if (p->fixed->len) {
		g_string_append(out, "<p><b>Held fixed</b> (");
		for (unsigned i = 0; i < p->files->len; i++) {
			g_string_append(out, i ? ", " : "");
			html_text(out, p->files->pdata[i]);
		}
		g_string_append(out, "):");
		for (unsigned i = 0; i < p->fixed->len; i++) {
			if (names_varied_list(p, p->fixed->pdata[i]))
				continue;
			g_string_append(out, " <code>");
			html_text(out, p->fixed->pdata[i]);
			g_string_append(out, "</code>");
		}
		g_string_append(out, "</p>\n");
	}
	if (!p->varied && !p->fixed->len)
		g_string_append(out, "<p>The folder records no parameters: no compare.csv or sweep.csv with "
				     "parameter columns, and no key=value text file.</p>\n");
	else if (!p->fixed->len)
		g_string_append(out, "<p class=\"note\">Options held fixed (trace, nodesize, device size, ...) are "
				     "not recorded in the folder unless a key=value .txt file names them.</p>\n");
	g_string_append(out, "</section>\n");
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

/* "nodesize=16K" or "nodesize: 16384" lines of the parameter files, and
 * the model's nodesize in parameters.json, in bytes. */
static void parameter_nodesizes(const struct folder *f, GPtrArray *sizes)
{
	g_autoptr(GPtrArray) pairs = g_ptr_array_new_with_free_func(g_free);
	parameters_json_pairs(f->parameters, pairs);
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

/* metadata_used's errors only: a run-out case's other figures (commits,
 * atime_lost, the totals; a "figure" column) have bounds of their own. */
static GArray *errors_by_nodesize(const CsvTable *cal, int ns, int err, int name, int mark)
{
	int figure = csv_column(cal, "figure");
	GArray *errors = g_array_new(false, true, sizeof(struct nodesize_error));
	g_array_set_clear_func(errors, nodesize_error_clear);
	for (unsigned r = 0; r < cal->rows->len; r++) {
		const GPtrArray *row = cal->rows->pdata[r];
		if (!is_number(csv_cell(row, (unsigned)err)))
			continue;
		if (figure >= 0 && strcmp(csv_cell(row, (unsigned)figure), "metadata_used"))
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

/* ---- the command that made a figure ------------------------------------------------ */

static guint32 be32(const guchar *p)
{
	return (guint32)p[0] << 24 | (guint32)p[1] << 16 | (guint32)p[2] << 8 | p[3];
}

/* A PNG's "Comment" text (plot.py keeps its command there): a tEXt chunk,
 * Latin-1, or an uncompressed iTXt chunk, UTF-8 (PNG spec 11.3.4). NULL
 * when there is none or the file is not a PNG. */
static char *png_comment(const guchar *png, gsize length)
{
	static const guchar signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	static const char keyword[8] = "Comment"; /* with its NUL separator */
	if (length < 8 || memcmp(png, signature, 8))
		return NULL;
	for (gsize at = 8; at + 12 <= length;) {
		/* a chunk: length (4, big-endian), type (4), data, CRC (4) */
		guint32 size = be32(png + at);
		const guchar *type = png + at + 4, *data = png + at + 8, *end = data + size;
		if (size > length - at - 12 || !memcmp(type, "IEND", 4))
			return NULL;
		if (!memcmp(type, "tEXt", 4) && size > 8 && !memcmp(data, keyword, 8))
			return g_convert((const char *)data + 8, size - 8, "UTF-8", "ISO-8859-1", NULL, NULL, NULL);
		if (!memcmp(type, "iTXt", 4) && size > 10 && !memcmp(data, keyword, 8) && data[8] == 0) {
			/* then compression method, language tag NUL, translated keyword NUL, text */
			const guchar *p = memchr(data + 10, 0, (size_t)(end - data - 10));
			p = p ? memchr(p + 1, 0, (size_t)(end - p - 1)) : NULL;
			if (!p || !g_utf8_validate_len((const char *)p + 1, (gsize)(end - p - 1), NULL))
				return NULL;
			return g_strndup((const char *)p + 1, (gsize)(end - p - 1));
		}
		at += 12 + (gsize)size;
	}
	return NULL;
}

/* An SVG's <dc:description> (matplotlib's "Description" metadata), its
 * five XML entities undone. NULL when there is none. */
static char *svg_description(const char *svg, gsize length)
{
	static const char open[] = "<dc:description>", close[] = "</dc:description>";
	g_autofree char *text = g_strndup(svg, length);
	char *from = strstr(text, open);
	char *to = from ? strstr(from, close) : NULL;
	if (!to)
		return NULL;
	static const char *const entities[][2] = { { "&lt;", "<" }, { "&gt;", ">" }, { "&quot;", "\"" },
						   { "&apos;", "'" }, { "&amp;", "&" } };
	GString *out = g_string_new(NULL);
	for (const char *p = from + strlen(open); p < to;) {
		unsigned e = 0;
		while (e < G_N_ELEMENTS(entities) && strncmp(p, entities[e][0], strlen(entities[e][0])))
			e++;
		if (e < G_N_ELEMENTS(entities)) {
			g_string_append(out, entities[e][1]);
			p += strlen(entities[e][0]);
		} else {
			g_string_append_c(out, *p++);
		}
	}
	return g_string_free(out, false);
}

/* ---- the page ----------------------------------------------------------------------- */

static const char page_style[] =
	"body{font-family:Helvetica,Arial,sans-serif;margin:2em auto;max-width:75em;padding:0 1em;color:#222}"
	"h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}"
	"table{border-collapse:collapse;margin:.5em 0;font-size:.85em}"
	"th,td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top}th{background:#f0f0f0;text-align:left}"
	"td{white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}td small{color:#666}"
	"tr.applies td{background:#e6f0fa}p.applies{background:#e6f0fa;padding:.4em}.scroll{overflow-x:auto}"
	"figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #ddd}"
	"figcaption{font-size:.85em;color:#555;margin-top:.3em}"
	"figcaption code{display:block;background:#f6f6f6;color:#222;padding:.3em .5em;margin-top:.2em;"
	"white-space:pre-wrap;overflow-wrap:anywhere}"
	".params{background:#fafafa;border:1px solid #eee;padding:.2em .6em;margin-top:.8em}.params p{margin:.3em 0}.params code{background:#f3f3f3;padding:0 .25em;margin-right:.2em}"
	"details{margin:.4em 0}details summary{cursor:pointer;font-weight:bold}details summary small{font-weight:normal;color:#666}"
	".note{color:#555;font-size:.9em}.warn{color:#8a3b00}pre{background:#f6f6f6;padding:.5em;overflow-x:auto}"
	"nav a{margin-right:1em}";

/* Sets data-images-loaded/-total on <body> once every image has had its
 * chance to load; a headless browser reads it back from the DOM. */
static const char page_script[] =
	"window.addEventListener('load',function(){var im=document.images,ok=0;"
	"for(var i=0;i<im.length;i++){if(im[i].complete&&im[i].naturalWidth>0)ok++;}"
	"document.body.setAttribute('data-images-loaded',String(ok));"
	"document.body.setAttribute('data-images-total',String(im.length));});";

/* One figure, inlined, and under it the command that made it (RP5). */
static bool html_image(GString *out, const char *dir, const char *name, GError **error)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);
	g_autofree char *bytes = NULL;
	gsize length = 0;
	if (!g_file_get_contents(path, &bytes, &length, error))
		return false;
	bool png = has_suffix_ci(name, ".png");
	g_autofree char *command = png ? png_comment((const guchar *)bytes, length) : svg_description(bytes, length);
	g_autofree char *base64 = g_base64_encode((const guchar *)bytes, length);
	g_string_append(out, "<figure><img alt=\"");
	html_text(out, name);
	g_string_append_printf(out, "\" src=\"data:%s;base64,%s\"><figcaption>", png ? "image/png" : "image/svg+xml",
			       base64);
	html_text(out, name);
	if (command) {
		g_string_append(out, ", drawn in the folder by:<code>");
		html_text(out, command);
		g_string_append(out, "</code>");
	} else {
		g_string_append(out, " (the file records no command: not drawn by cowsim plot)");
	}
	g_string_append(out, "</figcaption></figure>\n");
	return true;
}

static bool html_notes(GString *out, const struct folder *f, const struct parameters *p, GError **error)
{
	bool heading = false;
	for (unsigned i = 0; i < f->notes->len; i++) {
		const char *name = f->notes->pdata[i];
		if (is_parameter_file(p, name))
			continue;
		g_autofree char *path = g_build_filename(f->dir, name, NULL);
		g_autofree char *text = NULL;
		if (!g_file_get_contents(path, &text, NULL, error))
			return false;
		if (!heading)
			g_string_append(out, "<h2 id=\"notes\">Notes</h2>\n");
		heading = true;
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

static void html_file_list(GString *out, const GPtrArray *names)
{
	for (unsigned i = 0; i < names->len; i++) {
		g_string_append(out, i ? ", " : "");
		html_text(out, names->pdata[i]);
	}
}

static void html_files(GString *out, const struct folder *f)
{
	g_string_append(out, "<h2 id=\"files\">Files</h2>\n<p class=\"note\">");
	g_string_append_printf(out, "%u CSV, %u images, %u notes", f->csvs->len, f->images->len, f->notes->len);
	if (f->twins->len) {
		g_string_append(out, "; the summary again, in Markdown, not repeated here: ");
		html_file_list(out, f->twins);
	}
	if (f->svg_twins->len) {
		g_string_append(out, "; the same figures as SVG, for print: ");
		html_file_list(out, f->svg_twins);
	}
	if (f->others->len) {
		g_string_append(out, "; not shown: ");
		html_file_list(out, f->others);
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

/* A per-run table, folded: its name and size show, the rows on a click. */
static void html_run_table(GString *out, const CsvTable *t, unsigned max_rows)
{
	g_string_append(out, "<details><summary>");
	html_text(out, t->name);
	g_string_append_printf(out, " <small>%u rows, %u columns</small></summary>\n", t->rows->len, t->header->len);
	html_table(out, t, max_rows);
	g_string_append(out, "</details>\n");
}

static void html_nav(GString *out, const struct folder *f, const struct parameters *p, bool summary)
{
	g_string_append(out, "<nav><a href=\"#plots\">Plots</a>");
	if (summary)
		g_string_append(out, "<a href=\"#summary\">Summary</a>");
	g_string_append(out, "<a href=\"#calibration\">Calibration</a>");
	if (f->notes->len > p->files->len)
		g_string_append(out, "<a href=\"#notes\">Notes</a>");
	if (f->csvs->len > (summary ? 1u : 0u))
		g_string_append(out, "<a href=\"#runs\">Runs</a>");
	g_string_append(out, "<a href=\"#files\">Files</a></nav>\n");
}

/* The page, in the order a reviewer reads it (RP4):
 *
 *   title (from the parameters)    parameters varied and held fixed
 *   Plots        every figure, the summary's own first, each with its command
 *   Summary      compare.csv or sweep.csv: the one table of results
 *   Calibration  the error that applies
 *   Notes        Markdown and text files (not the summary's Markdown twin)
 *   Runs         each per-run CSV folded in <details>
 *   Files        what is not shown, and why
 */
static bool html_page(GString *out, const struct folder *f, const struct report_args *a, GError **error)
{
	struct parameters p;
	parameters_read(&p, f);
	g_autofree char *title = a->title ? g_strdup(a->title) : page_title(&p, f->dir);
	g_string_append(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			     "img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n<title>");
	html_text(out, title);
	g_string_append_printf(out, "</title>\n<style>%s</style></head>\n<body>\n<h1>", page_style);
	html_text(out, title);
	g_string_append_printf(out, "</h1>\n<p class=\"note\">Made by cowsim %s from the files of the folder; "
			       "the page is self-contained.</p>\n", COWSIM_VERSION);
	bool summary = p.summary != NULL;
	html_nav(out, f, &p, summary);
	html_parameters(out, &p);
	g_string_append(out, "<h2 id=\"plots\">Plots</h2>\n");
	if (!f->images->len)
		g_string_append(out, "<p>No PNG or SVG files.</p>\n");
	bool ok = true;
	for (unsigned m = 0; ok && m < f->images->len; m++)
		ok = html_image(out, f->dir, f->images->pdata[m], error);
	if (ok && summary) {
		g_string_append(out, "<h2 id=\"summary\">Summary</h2>\n<p class=\"note\">");
		html_text(out, p.summary->name);
		g_string_append(out, ": one line per run; byte columns also in MiB.</p>\n");
		html_table(out, p.summary, 0);
	}
	if (ok)
		html_calibration(out, f, a->calibration, a->nodesize);
	ok = ok && html_notes(out, f, &p, error);
	if (ok && f->csvs->len > (summary ? 1u : 0u))
		g_string_append(out, "<h2 id=\"runs\">Runs</h2>\n<p class=\"note\">The per-run CSVs, folded: "
				     "click a name to open its table.</p>\n");
	for (unsigned i = summary ? 1 : 0; ok && i < f->csvs->len; i++)
		html_run_table(out, f->csvs->pdata[i], (unsigned)a->max_rows);
	if (ok) {
		html_files(out, f);
		g_string_append_printf(out, "<script>%s</script>\n</body></html>\n", page_script);
	}
	parameters_clear(&p);
	return ok;
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
		   "CSV, PNG, SVG, Markdown and text files) into one HTML page: a title made from the\n"
		   "parameters, the plots first (inlined as data URIs, each with the command that drew\n"
		   "it), the summary table, the calibration error that applies, and the per-run\n"
		   "tables folded.",
	.examples = "  cowsim compare t.trace --mounts relatime,noatime -o cmp && cowsim report cmp\n"
		    "  cowsim report cmp -o cmp.html --title 'seed experiment'\n"
		    "  cowsim report cmp -o - > page.html",
	.notes = "Beside a page written to FILE.html goes FILE.parameters.json (docs/json.md): cowsim's\n"
		 "version and commit, every option, the calibration file's sha256 and the folder's\n"
		 "parameters.json (the trace's sha256 and generator); none with -o -.",
	.exits = "  0  written\n"
		 "  1  the disk filled under the page or its parameters.json\n"
		 "  2  bad arguments, an unreadable folder, a malformed CSV, a compare's folder\n"
		 "     whose parameters.json does not match its compare.csv and run CSVs (a mix of\n"
		 "     two compares: the file and the field are named), or an output path that\n"
		 "     cannot be written",
};

static int parse_report_args(int argc, char **argv, struct report_args *a)
{
	a->max_rows = 50;
	const GOptionEntry entries[] = {
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output, "write the page to FILE (default DIR/report.html; '-': stdout)",
		  "FILE" },
		{ "calibration", 0, 0, G_OPTION_ARG_FILENAME, &a->calibration,
		  "the calibration errors (default: the calibration.csv installed with cowsim, or results/ of the source tree)", "CSV" },
		{ "title", 0, 0, G_OPTION_ARG_STRING, &a->title,
		  "the page's title (default: made from the trace and the parameters varied)", "TEXT" },
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
	if (!cli_output_creatable("report", a->output))
		return EXIT_BAD_INPUT; /* CLI2 */
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
	bool ok = read_folder(&f, a->rest[0], a->output, &error) && compare_folder_whole(&f, &error);
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
		return cli_output_error_status(error);
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
