/*
 * tests/results/test_csv.c - the CSV column contract and the whole-line writers.
 *
 * How it works: each test writes rows into a file in a fresh temporary folder
 * (made by the group setup, removed by the teardown), reads the file back and
 * compares bytes.  Failures after open are provoked with RLIMIT_FSIZE (write
 * returns a short count, then EFBIG) and /dev/full (ENOSPC).
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "results.h"

static char *tmpdir;

static int group_setup(void **state)
{
	tmpdir = g_dir_make_tmp("cowsim-test-csv-XXXXXX", NULL);
	return tmpdir ? 0 : -1;
}

static int group_teardown(void **state)
{
	g_autoptr(GDir) dir = g_dir_open(tmpdir, 0, NULL);
	const char *name;
	while (dir && (name = g_dir_read_name(dir))) {
		g_autofree char *p = g_build_filename(tmpdir, name, NULL);
		g_unlink(p);
	}
	g_rmdir(tmpdir);
	g_clear_pointer(&tmpdir, g_free);
	return 0;
}

static char *tmp_path(const char *name)
{
	return g_build_filename(tmpdir, name, NULL);
}

static char *slurp(const char *path)
{
	char *text = NULL;
	g_autoptr(GError) error = NULL;
	if (!g_file_get_contents(path, &text, NULL, &error))
		fail_msg("reading %s: %s", path, error->message);
	return text;
}

/* The header line the column table implies, built here independently. */
static char *expected_header(const ResultsColumnInfo *cols, gsize n)
{
	GString *s = g_string_new(NULL);
	for (gsize i = 0; i < n; i++)
		g_string_append_printf(s, "%s%s", i ? "," : "", cols[i].name);
	g_string_append_c(s, '\n');
	return g_string_free(s, FALSE);
}

/* Writes `rows` main rows to a new file `name`; returns its contents. */
static char *write_rows(const char *name, const ResultsRow *rows, gsize n)
{
	g_autofree char *path = tmp_path(name);
	g_autoptr(GError) error = NULL;
	ResultsCsv *csv = results_csv_open(path, &error);
	assert_non_null(csv);
	for (gsize i = 0; i < n; i++)
		assert_true(results_csv_write_row(csv, &rows[i], &error));
	assert_true(results_csv_close(csv, &error));
	return slurp(path);
}

/* The line after the header of a file written with one row. */
static char *one_row_line(const ResultsRow *row)
{
	g_autofree char *text = write_rows("one.csv", row, 1);
	/* An offset, not a pointer into text: gcc -O3 takes a pointer used
	 * beside g_autofree's cleanup for a dangling one (-Wdangling-pointer). */
	size_t header = strcspn(text, "\n");
	assert_true(text[header] == '\n');
	return g_strdup(text + header + 1);
}

/* A label-only row, every other cell unset. */
static ResultsRow label_row(const char *label)
{
	ResultsRow row = { 0 };
	row.cells[RESULTS_COL_LABEL] = results_cell_string(label);
	return row;
}

/* ",,label,,,,...\n" for a row with only the label set, built independently. */
static char *line_with_label(const char *field)
{
	GString *s = g_string_new(NULL);
	for (int i = 0; i < RESULTS_N_COLUMNS; i++) {
		if (i > 0)
			g_string_append_c(s, ',');
		if (i == RESULTS_COL_LABEL)
			g_string_append(s, field);
	}
	g_string_append_c(s, '\n');
	return g_string_free(s, FALSE);
}

/* ---- the column table -------------------------------------------------- */

static void test_header_matches_column_table(void **state)
{
	g_autofree char *text = write_rows("header.csv", NULL, 0);
	g_autofree char *want = expected_header(results_columns(), RESULTS_N_COLUMNS);
	assert_string_equal(text, want);
}

static void test_header_starts_with_the_documented_columns(void **state)
{
	g_autofree char *text = write_rows("header2.csv", NULL, 0);
	assert_true(g_str_has_prefix(text, "op_index,time_s,label,metadata_used,metadata_raw,"
					   "metadata_total,data_used,data_total,global_reserve,"
					   "tree_fs,tree_extent,tree_csum,tree_root,"
					   "tree_free_space,tree_other,blocks_cowed,"
					   "bytes_written,atime_updates,atime_skipped,"
					   "enospc_events,failed_reads,atime_dropped,atime_lost,commits,atime_stale,unshare_estimate,"
					   "metadata_by_mkfs,metadata_by_write,metadata_by_atime,"
					   "metadata_by_snapshot,metadata_by_delete,"
					   "elapsed_s,design,mount,policy,nodesize,device_size\n"));
}

static void test_every_column_has_a_name_and_doc(void **state)
{
	gsize n;
	const ResultsSchema *schemas = results_schemas(&n);
	for (gsize s = 0; s < n; s++) {
		for (gsize i = 0; i < schemas[s].n_columns; i++) {
			const ResultsColumnInfo *c = &schemas[s].columns[i];
			assert_non_null(c->name);
			assert_non_null(c->doc);
			assert_true(c->doc[0] != '\0');
			assert_true(c->kind != RESULTS_CELL_UNSET);
		}
	}
}

static void test_names_are_unique_within_every_schema(void **state)
{
	gsize n;
	const ResultsSchema *schemas = results_schemas(&n);
	assert_true(n >= 5);
	for (gsize s = 0; s < n; s++)
		for (gsize i = 0; i < schemas[s].n_columns; i++)
			for (gsize j = i + 1; j < schemas[s].n_columns; j++)
				assert_string_not_equal(schemas[s].columns[i].name, schemas[s].columns[j].name);
}

/* CO5: a reader that knows only a column's name (cowsim report, plot.py)
 * gets one unit for it, whichever file it came from. */
static void test_a_name_in_two_schemas_has_one_unit(void **state)
{
	gsize n;
	const ResultsSchema *schemas = results_schemas(&n);
	for (gsize s = 0; s < n; s++) {
		for (gsize i = 0; i < schemas[s].n_columns; i++) {
			const ResultsColumnInfo *c = &schemas[s].columns[i];
			const ResultsColumnInfo *found = results_column_lookup(c->name);
			assert_non_null(found);
			if (found->unit != c->unit)
				fail_msg("%s is %s in %s but %s elsewhere", c->name, results_unit_name(c->unit),
					 schemas[s].name, results_unit_name(found->unit));
		}
	}
	assert_null(results_column_lookup("no_such_column"));
	assert_int_equal(results_column_lookup("free_min")->unit, RESULTS_UNIT_BYTES);
	assert_int_equal(results_column_lookup("atime_dropped")->unit, RESULTS_UNIT_COUNT);
	assert_int_equal(results_column_lookup("amplification")->unit, RESULTS_UNIT_RATIO);
}

static void test_json_strings_escape_quotes_backslashes_and_controls(void **state)
{
	g_autoptr(GString) out = g_string_new(NULL);
	results_append_json_string(out, "a\"b\\c\nd\te");
	assert_string_equal(out->str, "\"a\\\"b\\\\c\\nd\\u0009e\"");
}

static void test_subvol_header_matches_subvol_table(void **state)
{
	g_autofree char *path = tmp_path("subvol-header.csv");
	g_autoptr(GError) error = NULL;
	ResultsSubvolCsv *csv = results_subvol_csv_open(path, &error);
	assert_non_null(csv);
	assert_true(results_subvol_csv_close(csv, &error));
	g_autofree char *text = slurp(path);
	g_autofree char *want = expected_header(results_subvol_columns(), RESULTS_SUBVOL_N_COLUMNS);
	assert_string_equal(text, want);
	assert_string_equal(text, "op_index,label,subvolume,subvolume_id,exclusive_bytes,"
				  "shared_bytes,design,mount,policy,nodesize,device_size\n");
}

/* ---- cells ------------------------------------------------------------- */

static void test_unset_cells_are_written_empty(void **state)
{
	ResultsRow row = { 0 };
	g_autofree char *line = one_row_line(&row);
	g_autofree char *want = g_strnfill(RESULTS_N_COLUMNS - 1, ',');
	g_autofree char *want_nl = g_strconcat(want, "\n", NULL);
	assert_string_equal(line, want_nl);
}

static void test_numbers_are_plain_decimal(void **state)
{
	ResultsRow row = { 0 };
	row.cells[RESULTS_COL_OP_INDEX] = results_cell_u64(G_MAXUINT64);
	row.cells[RESULTS_COL_METADATA_USED] = results_cell_u64(26132480);
	g_autofree char *line = one_row_line(&row);
	assert_true(g_str_has_prefix(line, "18446744073709551615,,,26132480,"));
}

static void test_time_is_fixed_six_decimals(void **state)
{
	ResultsRow row = { 0 };
	row.cells[RESULTS_COL_TIME_S] = results_cell_double(1338422400.5);
	g_autofree char *line = one_row_line(&row);
	assert_true(g_str_has_prefix(line, ",1338422400.500000,"));
}

static void test_negative_zero_time_is_written_as_zero(void **state)
{
	ResultsRow row = { 0 };
	row.cells[RESULTS_COL_TIME_S] = results_cell_double(-0.0);
	g_autofree char *line = one_row_line(&row);
	assert_true(g_str_has_prefix(line, ",0.000000,"));
}

static void test_time_ignores_a_comma_decimal_locale(void **state)
{
	const char *locales[] = { "de_DE.UTF-8", "fr_FR.UTF-8", "C.UTF-8" };
	const char *set = NULL;
	for (gsize i = 0; i < G_N_ELEMENTS(locales) && !set; i++)
		set = setlocale(LC_NUMERIC, locales[i]);
	ResultsRow row = { 0 };
	row.cells[RESULTS_COL_TIME_S] = results_cell_double(2.25);
	g_autofree char *line = one_row_line(&row);
	setlocale(LC_NUMERIC, "C");
	assert_true(g_str_has_prefix(line, ",2.250000,"));
}

static void test_plain_label_is_not_quoted(void **state)
{
	ResultsRow row = label_row("after_copy");
	g_autofree char *line = one_row_line(&row);
	g_autofree char *want = line_with_label("after_copy");
	assert_string_equal(line, want);
}

static void test_label_with_comma_is_quoted(void **state)
{
	ResultsRow row = label_row("a,b");
	g_autofree char *line = one_row_line(&row);
	g_autofree char *want = line_with_label("\"a,b\"");
	assert_string_equal(line, want);
}

static void test_label_with_quote_doubles_it(void **state)
{
	ResultsRow row = label_row("say \"hi\"");
	g_autofree char *line = one_row_line(&row);
	g_autofree char *want = line_with_label("\"say \"\"hi\"\"\"");
	assert_string_equal(line, want);
}

static void test_label_with_newline_is_quoted(void **state)
{
	ResultsRow row = label_row("two\nlines\r\n");
	g_autofree char *line = one_row_line(&row);
	g_autofree char *want = line_with_label("\"two\nlines\r\n\"");
	assert_string_equal(line, want);
}

static void test_label_with_edge_space_is_quoted(void **state)
{
	ResultsRow row = label_row(" padded ");
	g_autofree char *line = one_row_line(&row);
	g_autofree char *want = line_with_label("\" padded \"");
	assert_string_equal(line, want);
}

static void test_empty_label_differs_from_unset(void **state)
{
	ResultsRow row = label_row("");
	g_autofree char *line = one_row_line(&row);
	g_autofree char *want = line_with_label("\"\"");
	assert_string_equal(line, want);
}

static void test_cell_of_wrong_kind_is_refused_and_writes_nothing(void **state)
{
	g_autofree char *path = tmp_path("wrong-kind.csv");
	g_autoptr(GError) error = NULL;
	ResultsCsv *csv = results_csv_open(path, &error);
	ResultsRow row = { 0 };
	row.cells[RESULTS_COL_METADATA_USED] = results_cell_string("12");
	assert_false(results_csv_write_row(csv, &row, &error));
	assert_true(g_error_matches(error, RESULTS_ERROR, RESULTS_ERROR_INVALID_CELL));
	assert_non_null(strstr(error->message, "metadata_used"));
	g_clear_error(&error);
	assert_true(results_csv_close(csv, &error));
	g_autofree char *text = slurp(path);
	g_autofree char *want = expected_header(results_columns(), RESULTS_N_COLUMNS);
	assert_string_equal(text, want);
}

static void test_nan_time_is_refused(void **state)
{
	g_autofree char *path = tmp_path("nan.csv");
	g_autoptr(GError) error = NULL;
	g_autoptr(ResultsCsv) csv = results_csv_open(path, &error);
	ResultsRow row = { 0 };
	row.cells[RESULTS_COL_TIME_S] = results_cell_double(NAN);
	assert_false(results_csv_write_row(csv, &row, &error));
	assert_true(g_error_matches(error, RESULTS_ERROR, RESULTS_ERROR_INVALID_CELL));
}

static void test_refused_row_does_not_poison_the_writer(void **state)
{
	g_autofree char *path = tmp_path("not-poisoned.csv");
	g_autoptr(GError) error = NULL;
	g_autoptr(ResultsCsv) csv = results_csv_open(path, &error);
	ResultsRow bad = { 0 };
	bad.cells[RESULTS_COL_LABEL] = results_cell_u64(1);
	assert_false(results_csv_write_row(csv, &bad, &error));
	g_clear_error(&error);
	ResultsRow good = label_row("ok");
	assert_true(results_csv_write_row(csv, &good, &error));
}

/* ---- whole rows, determinism ------------------------------------------- */

static ResultsRow sample_row(guint64 i)
{
	static const char *const labels[] = { "after_copy", "with, comma", "quo\"te", "nl\nx" };
	ResultsRow row = { 0 };
	row.cells[RESULTS_COL_OP_INDEX] = results_cell_u64(i);
	row.cells[RESULTS_COL_TIME_S] = results_cell_double((double)i / 3.0);
	row.cells[RESULTS_COL_LABEL] = results_cell_string(labels[i % G_N_ELEMENTS(labels)]);
	row.cells[RESULTS_COL_METADATA_USED] = results_cell_u64(16384 * (i + 1));
	if (i % 2)
		row.cells[RESULTS_COL_DATA_USED] = results_cell_u64(i * 4096);
	return row;
}

/* Counts the CSV records of `text` (quoted newlines do not end one) and
 * checks each has RESULTS_N_COLUMNS fields and ends with "\n". */
static gsize count_whole_records(const char *text)
{
	gsize records = 0, fields = 1;
	gboolean quoted = FALSE;
	for (const char *p = text; *p; p++) {
		if (*p == '"')
			quoted = !quoted;
		else if (!quoted && *p == ',')
			fields++;
		else if (!quoted && *p == '\n') {
			assert_int_equal(fields, RESULTS_N_COLUMNS);
			records++;
			fields = 1;
		}
	}
	assert_false(quoted);
	assert_true(text[0] == '\0' || text[strlen(text) - 1] == '\n');
	return records;
}

static void test_rows_are_whole_records(void **state)
{
	ResultsRow rows[40];
	for (guint64 i = 0; i < G_N_ELEMENTS(rows); i++)
		rows[i] = sample_row(i);
	g_autofree char *text = write_rows("whole.csv", rows, G_N_ELEMENTS(rows));
	assert_int_equal(count_whole_records(text), 1 + G_N_ELEMENTS(rows));
}

static void test_same_rows_give_same_bytes(void **state)
{
	ResultsRow rows[25];
	for (guint64 i = 0; i < G_N_ELEMENTS(rows); i++)
		rows[i] = sample_row(i);
	g_autofree char *a = write_rows("same-a.csv", rows, G_N_ELEMENTS(rows));
	g_autofree char *b = write_rows("same-b.csv", rows, G_N_ELEMENTS(rows));
	assert_string_equal(a, b);
}

static void test_subvol_rows_are_long_format(void **state)
{
	g_autofree char *path = tmp_path("subvol.csv");
	g_autoptr(GError) error = NULL;
	ResultsSubvolCsv *csv = results_subvol_csv_open(path, &error);
	ResultsSubvolRow row = { 0 };
	row.cells[RESULTS_SUBVOL_COL_OP_INDEX] = results_cell_u64(7);
	row.cells[RESULTS_SUBVOL_COL_LABEL] = results_cell_string("after_grep");
	row.cells[RESULTS_SUBVOL_COL_SUBVOLUME] = results_cell_string("/snap,1");
	row.cells[RESULTS_SUBVOL_COL_SUBVOLUME_ID] = results_cell_u64(257);
	row.cells[RESULTS_SUBVOL_COL_EXCLUSIVE_BYTES] = results_cell_u64(16384);
	assert_true(results_subvol_csv_write_row(csv, &row, &error));
	assert_true(results_subvol_csv_close(csv, &error));
	g_autofree char *text = slurp(path);
	size_t header = strcspn(text, "\n"); /* an offset: see one_row_line() */
	assert_string_equal(text + header + 1, "7,after_grep,\"/snap,1\",257,16384,,,,,,\n");
}

/* ---- errors ------------------------------------------------------------ */

static void test_unwritable_path_gives_gerror_naming_it(void **state)
{
	g_autofree char *path = tmp_path("no-such-dir/out.csv");
	g_autoptr(GError) error = NULL;
	ResultsCsv *csv = results_csv_open(path, &error);
	assert_null(csv);
	assert_true(g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT));
	assert_non_null(strstr(error->message, path));
}

static void test_path_under_a_file_gives_gerror(void **state)
{
	g_autofree char *file = tmp_path("plain-file");
	assert_true(g_file_set_contents(file, "x", 1, NULL));
	g_autofree char *path = g_build_filename(file, "out.csv", NULL);
	g_autoptr(GError) error = NULL;
	assert_null(results_csv_open(path, &error));
	assert_true(g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOTDIR));
}

static void test_full_device_gives_enospc_naming_file(void **state)
{
	if (access("/dev/full", W_OK) != 0)
		skip();
	g_autoptr(GError) error = NULL;
	assert_null(results_csv_open("/dev/full", &error));
	assert_true(g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOSPC));
	assert_non_null(strstr(error->message, "'/dev/full'"));
}

/* Opens `name`, limits the file size to the header plus 1.5 rows, and tries
 * to write 3 rows; returns the writer (still open) and the rows' results. */
static ResultsCsv *write_past_size_limit(const char *name, gboolean ok[3], GError **errors)
{
	g_autofree char *path = tmp_path(name);
	ResultsCsv *csv = results_csv_open(path, NULL);
	assert_non_null(csv);
	ResultsRow row = sample_row(0);
	g_autoptr(GString) line = g_string_new(NULL);
	assert_true(results_format_line(line, results_columns(), row.cells, RESULTS_N_COLUMNS, NULL));
	g_autofree char *header = expected_header(results_columns(), RESULTS_N_COLUMNS);

	struct rlimit old, small;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = strlen(header) + line->len + line->len / 2;
	void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	for (int i = 0; i < 3; i++)
		ok[i] = results_csv_write_row(csv, &row, &errors[i]);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, prev);
	return csv;
}

static void test_partial_write_is_cut_back_to_whole_rows(void **state)
{
	gboolean ok[3];
	GError *errors[3] = { NULL, NULL, NULL };
	ResultsCsv *csv = write_past_size_limit("limit.csv", ok, errors);
	assert_true(ok[0]);
	assert_false(ok[1]);
	assert_true(errors[1]->domain == G_FILE_ERROR); /* EFBIG has no code of its own */
	assert_non_null(strstr(errors[1]->message, "limit.csv"));
	g_autofree char *path = g_strdup(results_csv_path(csv));
	for (int i = 0; i < 3; i++)
		g_clear_error(&errors[i]);
	g_autoptr(GError) error = NULL;
	assert_true(results_csv_close(csv, &error)); /* the whole rows are kept */
	g_autofree char *text = slurp(path);
	assert_int_equal(count_whole_records(text), 2);
}

/* CSV5: while a writer is open, its path shows the file it replaces. */
static void test_path_keeps_the_old_file_until_close(void **state)
{
	g_autofree char *path = tmp_path("replaced.csv");
	assert_true(g_file_set_contents(path, "old result\n", -1, NULL));
	g_autoptr(GError) error = NULL;
	ResultsCsv *csv = results_csv_open(path, &error);
	assert_non_null(csv);
	ResultsRow row = sample_row(0);
	assert_true(results_csv_write_row(csv, &row, &error));
	g_autofree char *during = slurp(path);
	assert_string_equal(during, "old result\n");
	assert_true(results_csv_close(csv, &error));
	g_autofree char *after = slurp(path);
	assert_int_equal(count_whole_records(after), 2);
}

static void test_writes_after_a_failure_are_refused(void **state)
{
	gboolean ok[3];
	GError *errors[3] = { NULL, NULL, NULL };
	ResultsCsv *csv = write_past_size_limit("poison.csv", ok, errors);
	assert_false(ok[2]);
	assert_true(g_error_matches(errors[2], RESULTS_ERROR, RESULTS_ERROR_POISONED));
	ResultsRow row = sample_row(1);
	g_autoptr(GError) later = NULL;
	assert_false(results_csv_write_row(csv, &row, &later));
	for (int i = 0; i < 3; i++)
		g_clear_error(&errors[i]);
	results_csv_free(csv);
}

static void test_close_of_null_succeeds(void **state)
{
	assert_true(results_csv_close(NULL, NULL));
	assert_true(results_subvol_csv_close(NULL, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_matches_column_table),
		cmocka_unit_test(test_header_starts_with_the_documented_columns),
		cmocka_unit_test(test_every_column_has_a_name_and_doc),
		cmocka_unit_test(test_names_are_unique_within_every_schema),
		cmocka_unit_test(test_a_name_in_two_schemas_has_one_unit),
		cmocka_unit_test(test_json_strings_escape_quotes_backslashes_and_controls),
		cmocka_unit_test(test_subvol_header_matches_subvol_table),
		cmocka_unit_test(test_unset_cells_are_written_empty),
		cmocka_unit_test(test_numbers_are_plain_decimal),
		cmocka_unit_test(test_time_is_fixed_six_decimals),
		cmocka_unit_test(test_negative_zero_time_is_written_as_zero),
		cmocka_unit_test(test_time_ignores_a_comma_decimal_locale),
		cmocka_unit_test(test_plain_label_is_not_quoted),
		cmocka_unit_test(test_label_with_comma_is_quoted),
		cmocka_unit_test(test_label_with_quote_doubles_it),
		cmocka_unit_test(test_label_with_newline_is_quoted),
		cmocka_unit_test(test_label_with_edge_space_is_quoted),
		cmocka_unit_test(test_empty_label_differs_from_unset),
		cmocka_unit_test(test_cell_of_wrong_kind_is_refused_and_writes_nothing),
		cmocka_unit_test(test_nan_time_is_refused),
		cmocka_unit_test(test_refused_row_does_not_poison_the_writer),
		cmocka_unit_test(test_rows_are_whole_records),
		cmocka_unit_test(test_same_rows_give_same_bytes),
		cmocka_unit_test(test_subvol_rows_are_long_format),
		cmocka_unit_test(test_unwritable_path_gives_gerror_naming_it),
		cmocka_unit_test(test_path_under_a_file_gives_gerror),
		cmocka_unit_test(test_full_device_gives_enospc_naming_file),
		cmocka_unit_test(test_partial_write_is_cut_back_to_whole_rows),
		cmocka_unit_test(test_path_keeps_the_old_file_until_close),
		cmocka_unit_test(test_writes_after_a_failure_are_refused),
		cmocka_unit_test(test_close_of_null_succeeds),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
