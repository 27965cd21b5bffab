/*
 * tests/results/test_table.c - the readable summary table and size formatting.
 *
 * How it works: tables are printed into an open_memstream() buffer and
 * compared with the exact expected text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib.h>

#include "results.h"

/* Prints `t` at most `width` columns wide (0: all) and returns the text. */
static char *print_width_to_string(const ResultsTable *t, gsize width)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	g_autoptr(GError) error = NULL;
	assert_true(results_table_print_width(t, f, width, &error));
	fclose(f);
	char *copy = g_strdup(buf);
	free(buf);
	return copy;
}

static char *print_to_string(const ResultsTable *t)
{
	return print_width_to_string(t, 0);
}

static void test_format_size_below_one_kib_is_bytes(void **state)
{
	char buf[RESULTS_SIZE_BUF];
	assert_string_equal(results_format_size(0, buf), "0 B");
	assert_string_equal(results_format_size(1023, buf), "1023 B");
}

static void test_format_size_uses_iec_units_with_one_decimal(void **state)
{
	char buf[RESULTS_SIZE_BUF];
	assert_string_equal(results_format_size(1024, buf), "1.0 KiB");
	assert_string_equal(results_format_size(25 * 1024 * 1024, buf), "25.0 MiB");
	assert_string_equal(results_format_size(26132480, buf), "24.9 MiB");
	assert_string_equal(results_format_size(G_GUINT64_CONSTANT(3) << 40, buf), "3.0 TiB");
}

static void test_format_size_never_shows_1024_of_a_unit(void **state)
{
	char buf[RESULTS_SIZE_BUF];
	assert_string_equal(results_format_size(1024 * 1024 - 1, buf), "1.0 MiB");
}

static void test_numbers_are_right_aligned_and_text_left(void **state)
{
	g_autoptr(ResultsTable) t = results_table_new();
	results_table_add_column(t, "label", RESULTS_UNIT_TEXT);
	results_table_add_column(t, "ops", RESULTS_UNIT_COUNT);
	ResultsCell r1[] = { results_cell_string("a"), results_cell_u64(5) };
	ResultsCell r2[] = { results_cell_string("longer"), results_cell_u64(12345) };
	assert_true(results_table_add_row(t, r1, 2, NULL));
	assert_true(results_table_add_row(t, r2, 2, NULL));
	g_autofree char *text = print_to_string(t);
	assert_string_equal(text, "label     ops\n"
				  "a           5\n"
				  "longer  12345\n");
}

static void test_bytes_are_shown_exact_and_human_readable(void **state)
{
	g_autoptr(ResultsTable) t = results_table_new();
	results_table_add_column(t, "metadata_used", RESULTS_UNIT_BYTES);
	ResultsCell r1[] = { results_cell_u64(26132480) };
	ResultsCell r2[] = { results_cell_u64(272482304) };
	assert_true(results_table_add_row(t, r1, 1, NULL));
	assert_true(results_table_add_row(t, r2, 1, NULL));
	g_autofree char *text = print_to_string(t);
	assert_string_equal(text, "      metadata_used\n"
				  " 26132480  24.9 MiB\n"
				  "272482304 259.9 MiB\n");
}

static void test_a_width_limit_shows_sizes_alone_and_leaves_out_whole_columns(void **state)
{
	g_autoptr(ResultsTable) t = results_table_new();
	results_table_add_column(t, "label", RESULTS_UNIT_TEXT);
	results_table_add_column(t, "metadata_used", RESULTS_UNIT_BYTES);
	results_table_add_column(t, "blocks_cowed", RESULTS_UNIT_COUNT);
	results_table_add_column(t, "atime_updates", RESULTS_UNIT_COUNT);
	ResultsCell r[] = { results_cell_string("after_copy"), results_cell_u64(26132480), results_cell_u64(7),
			    results_cell_u64(9) };
	assert_true(results_table_add_row(t, r, 4, NULL));
	g_autofree char *narrow = print_width_to_string(t, 40);
	assert_string_equal(narrow, "label       metadata_used  blocks_cowed\n"
				    "after_copy       24.9 MiB             7\n"
				    "(1 more column with --wide)\n");
	g_autofree char *all = print_width_to_string(t, 0);
	assert_non_null(strstr(all, "26132480 24.9 MiB"));
	assert_non_null(strstr(all, "atime_updates"));
	assert_null(strstr(all, "--wide"));
}

static void test_unset_cell_is_a_dash(void **state)
{
	g_autoptr(ResultsTable) t = results_table_new();
	results_table_add_column(t, "n", RESULTS_UNIT_COUNT);
	ResultsCell r[] = { results_cell_unset() };
	assert_true(results_table_add_row(t, r, 1, NULL));
	g_autofree char *text = print_to_string(t);
	assert_string_equal(text, "n\n-\n");
}

static void test_control_characters_in_text_are_escaped(void **state)
{
	g_autoptr(ResultsTable) t = results_table_new();
	results_table_add_column(t, "label", RESULTS_UNIT_TEXT);
	ResultsCell r[] = { results_cell_string("a\nb\x01") };
	assert_true(results_table_add_row(t, r, 1, NULL));
	g_autofree char *text = print_to_string(t);
	assert_string_equal(text, "label\na\\nb\\x01\n");
}

static void test_doubles_have_three_decimals(void **state)
{
	g_autoptr(ResultsTable) t = results_table_new();
	results_table_add_column(t, "time_s", RESULTS_UNIT_SECONDS);
	ResultsCell r[] = { results_cell_double(1.5) };
	assert_true(results_table_add_row(t, r, 1, NULL));
	g_autofree char *text = print_to_string(t);
	assert_string_equal(text, "time_s\n 1.500\n");
}

static void test_row_with_wrong_cell_count_is_refused(void **state)
{
	g_autoptr(ResultsTable) t = results_table_new();
	results_table_add_column(t, "a", RESULTS_UNIT_COUNT);
	results_table_add_column(t, "b", RESULTS_UNIT_COUNT);
	ResultsCell r[] = { results_cell_u64(1) };
	g_autoptr(GError) error = NULL;
	assert_false(results_table_add_row(t, r, 1, &error));
	assert_true(g_error_matches(error, RESULTS_ERROR, RESULTS_ERROR_INVALID_CELL));
}

static void test_main_columns_take_titles_and_cells_from_results_rows(void **state)
{
	g_autoptr(ResultsTable) t = results_table_new();
	const ResultsColumn cols[] = { RESULTS_COL_LABEL, RESULTS_COL_METADATA_USED };
	results_table_add_main_columns(t, cols, G_N_ELEMENTS(cols));
	ResultsRow row = { 0 };
	row.cells[RESULTS_COL_LABEL] = results_cell_string("after_copy");
	row.cells[RESULTS_COL_METADATA_USED] = results_cell_u64(1024);
	row.cells[RESULTS_COL_DATA_USED] = results_cell_u64(99); /* not a table column */
	assert_true(results_table_add_results_row(t, &row, NULL));
	g_autofree char *text = print_to_string(t);
	assert_string_equal(text, "label       metadata_used\n"
				  "after_copy   1024 1.0 KiB\n");
}

static void test_results_row_into_free_columns_is_refused(void **state)
{
	g_autoptr(ResultsTable) t = results_table_new();
	results_table_add_column(t, "x", RESULTS_UNIT_COUNT);
	ResultsRow row = { 0 };
	g_autoptr(GError) error = NULL;
	assert_false(results_table_add_results_row(t, &row, &error));
	assert_true(g_error_matches(error, RESULTS_ERROR, RESULTS_ERROR_INVALID_CELL));
}

static void test_string_cells_are_copied(void **state)
{
	g_autoptr(ResultsTable) t = results_table_new();
	results_table_add_column(t, "label", RESULTS_UNIT_TEXT);
	char label[] = "first";
	ResultsCell r[] = { results_cell_string(label) };
	assert_true(results_table_add_row(t, r, 1, NULL));
	strcpy(label, "xxxxx");
	g_autofree char *text = print_to_string(t);
	assert_string_equal(text, "label\nfirst\n");
}

static void test_write_error_gives_gerror(void **state)
{
	FILE *f = fopen("/dev/full", "w");
	if (!f)
		skip();
	g_autoptr(ResultsTable) t = results_table_new();
	results_table_add_column(t, "x", RESULTS_UNIT_COUNT);
	g_autoptr(GError) error = NULL;
	assert_false(results_table_print(t, f, &error));
	assert_true(g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOSPC));
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_size_below_one_kib_is_bytes),
		cmocka_unit_test(test_format_size_uses_iec_units_with_one_decimal),
		cmocka_unit_test(test_format_size_never_shows_1024_of_a_unit),
		cmocka_unit_test(test_numbers_are_right_aligned_and_text_left),
		cmocka_unit_test(test_bytes_are_shown_exact_and_human_readable),
		cmocka_unit_test(test_a_width_limit_shows_sizes_alone_and_leaves_out_whole_columns),
		cmocka_unit_test(test_unset_cell_is_a_dash),
		cmocka_unit_test(test_control_characters_in_text_are_escaped),
		cmocka_unit_test(test_doubles_have_three_decimals),
		cmocka_unit_test(test_row_with_wrong_cell_count_is_refused),
		cmocka_unit_test(test_main_columns_take_titles_and_cells_from_results_rows),
		cmocka_unit_test(test_results_row_into_free_columns_is_refused),
		cmocka_unit_test(test_string_cells_are_copied),
		cmocka_unit_test(test_write_error_gives_gerror),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
