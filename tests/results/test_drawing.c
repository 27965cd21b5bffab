/*
 * tests/results/test_drawing.c - a drawing (results/drawing.h) and its text
 * and DOT forms, built by hand as a collector would build it: no model.
 *
 * The filesystem drawn in every test: tree 5 and its snapshot 256 share
 * leaf B; each has its own root and its own copy of the second leaf.
 *
 *   tree 5:   node A (refs 1) -> leaf B (refs 2), leaf C (refs 1)
 *   tree 256: node S (refs 1) -> leaf B,          leaf D (refs 1, gen 9)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include "draw_text.h"
#include "drawing.h"

enum { A = 1000, B = 2000, C = 3000, S = 4000, D = 5000 };

static const struct drawn_entry node_a[] = {
	{ .objectid = 256, .type = 1, .type_name = "INODE_ITEM", .child = B },
	{ .objectid = 300, .type = 1, .type_name = "INODE_ITEM", .child = C },
};
static const struct drawn_entry node_s[] = {
	{ .objectid = 256, .type = 1, .type_name = "INODE_ITEM", .child = B },
	{ .objectid = 300, .type = 1, .type_name = "INODE_ITEM", .child = D },
};
static const struct drawn_entry leaf_items[] = {
	{ .objectid = 256, .type = 1, .type_name = "INODE_ITEM", .size = 160 },
	{ .objectid = 256, .type = 12, .type_name = "INODE_REF", .offset = 256, .size = 12 },
	{ .objectid = 257, .type = 200, .size = 8 },    /* a type with no name */
};

static void visit(struct drawing *d, uint64_t bytenr, uint8_t level, uint32_t refs, uint64_t gen,
		  const struct drawn_entry *entries, uint32_t n, bool root)
{
	struct drawing_visit v = { .bytenr = bytenr, .owner = 5, .generation = gen, .level = level,
				   .refs = refs, .nritems = n, .entries = entries, .root = root };
	drawing_add_block(d, &v);
}

/* The walk of both trees, in the order fs_walk visits them. */
static void draw_two_trees(struct drawing *d)
{
	drawing_init(d);
	drawing_begin_tree(d, g_strdup("fs tree 5 (/)"), 5, A, KIND_FS);
	visit(d, A, 1, 1, 8, node_a, 2, true);
	visit(d, B, 0, 2, 7, leaf_items, 3, false);
	visit(d, C, 0, 1, 8, leaf_items, 2, false);
	drawing_begin_tree(d, g_strdup("snapshot tree 256 (/snap)"), 256, S, KIND_FS);
	visit(d, S, 1, 1, 9, node_s, 2, true);
	visit(d, B, 0, 2, 7, leaf_items, 3, false);
	visit(d, D, 0, 1, 9, leaf_items, 1, false);
}

static void test_a_block_reached_from_two_trees_is_recorded_once(void **state)
{
	(void)state;
	struct drawing d;
	draw_two_trees(&d);
	assert_int_equal(d.blocks->len, 5);
	const struct drawn_block *b = drawing_block(&d, B);
	assert_int_equal(b->tree, 0);                 /* DW1: drawn under the first tree */
	assert_int_equal(b->trees_reaching, 2);
	assert_int_equal(b->reached_by->len, 2);
	assert_int_equal(g_array_index(b->reached_by, unsigned, 0), 0);
	assert_int_equal(g_array_index(b->reached_by, unsigned, 1), 1);
	assert_true(drawing_block(&d, S)->root);
	assert_false(drawing_block(&d, D)->root);
	drawing_clear(&d);
}

static void test_marks_come_from_refs_trees_and_generation(void **state)
{
	(void)state;
	struct drawing d;
	draw_two_trees(&d);
	assert_true(block_shared(drawing_block(&d, B)));       /* refs 2 */
	assert_false(block_shared_through_parent(drawing_block(&d, B)));
	assert_false(block_shared(drawing_block(&d, C)));
	assert_false(block_shared_through_parent(drawing_block(&d, C)));
	assert_true(block_new(&d, drawing_block(&d, D)));      /* gen 9, the newest */
	assert_false(block_new(&d, drawing_block(&d, A)));
	drawing_clear(&d);
}

static char *text_of(const struct drawing *d, unsigned max_items)
{
	struct draw_header h = { .trace = "t.trace", .at = "after_grep", .transid = 10, .nodesize = 4096,
				 .metadata_used = 20480, .max_items = max_items };
	GString *out = g_string_new(NULL);
	draw_text(out, d, &h);
	return g_string_free(out, false);
}

static void test_text_draws_a_shared_block_once_and_points_back_to_it(void **state)
{
	(void)state;
	struct drawing d;
	draw_two_trees(&d);
	g_autofree char *text = text_of(&d, 0);
	assert_non_null(strstr(text, "# t.trace at mark after_grep: running transaction 10, nodesize 4096, "
				     "metadata used 20480 bytes\n"));
	assert_non_null(strstr(text, "    leaf 2000 gen 7 owner 5 refs 2 *, 3 items\n"
				     "      (256 INODE_ITEM 0) 160 bytes\n"
				     "      (256 INODE_REF 256) 12 bytes\n"
				     "      (257 type 200 0) 8 bytes\n"));
	assert_non_null(strstr(text, "leaf 2000 gen 7 owner 5 refs 2 *, drawn under fs tree 5 (/)\n"));
	assert_non_null(strstr(text, "leaf 5000 gen 9 owner 5 refs 1 ^, 1 items\n"));
	drawing_clear(&d);
}

static void test_text_stops_a_leaf_at_max_items(void **state)
{
	(void)state;
	struct drawing d;
	draw_two_trees(&d);
	g_autofree char *text = text_of(&d, 1);
	assert_non_null(strstr(text, "      (256 INODE_ITEM 0) 160 bytes\n      ... 2 more items\n"));
	drawing_clear(&d);
}

static void test_summarized_drawing_counts_the_blocks_below_its_cut(void **state)
{
	(void)state;
	struct drawing d;
	draw_two_trees(&d);
	drawing_summarize(&d, 2);
	assert_true(d.summarized);
	assert_int_equal(d.cut, 1);
	assert_int_equal(d.kept, 2);                  /* the two roots */
	assert_false(drawing_shows(&d, drawing_block(&d, B)));
	g_autofree char *text = text_of(&d, 0);
	assert_non_null(strstr(text, "node 1000 level 1 gen 8 owner 5 refs 1, 2 children; below: 2 blocks "
				     "(2 leaves), 1 shared *, 0 through a parent +, 0 new ^\n"));
	drawing_clear(&d);
}

static void test_dot_has_one_edge_per_pointer(void **state)
{
	(void)state;
	struct drawing d;
	draw_two_trees(&d);
	struct draw_header h = { .trace = "t.trace" };
	g_autoptr(GString) dot = g_string_new(NULL);
	draw_dot(dot, &d, &h);
	assert_non_null(strstr(dot->str, "  t0 -> b1000;\n  t1 -> b4000;\n"));
	assert_non_null(strstr(dot->str, "  b1000:p0 -> b2000;\n  b1000:p1 -> b3000;\n"));
	assert_non_null(strstr(dot->str, "  b4000:p0 -> b2000;\n  b4000:p1 -> b5000;\n"));
	assert_null(strstr(dot->str, "    b2000 [label=<<table border=\"1\" cellborder=\"0\" cellspacing=\"0\" "
				     "color=\"#404040\" bgcolor=\"#ffffff\">"));   /* B is orange */
	drawing_clear(&d);
}

static void test_tree_names_parse_into_a_mask(void **state)
{
	(void)state;
	unsigned mask = 0;
	assert_true(drawing_parse_trees("fs,free-space", &mask, NULL));
	assert_int_equal(mask, KIND_FS | KIND_FREE_SPACE);
	g_autoptr(GError) error = NULL;
	assert_false(drawing_parse_trees("fs,bogus", &mask, &error));
	assert_non_null(strstr(error->message, "unknown tree 'bogus'"));
	assert_string_equal(drawing_kind_name(KIND_EXTENT), "extent");
	assert_int_equal(drawing_kind_by_name("no-such-tree"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_block_reached_from_two_trees_is_recorded_once),
		cmocka_unit_test(test_marks_come_from_refs_trees_and_generation),
		cmocka_unit_test(test_text_draws_a_shared_block_once_and_points_back_to_it),
		cmocka_unit_test(test_text_stops_a_leaf_at_max_items),
		cmocka_unit_test(test_summarized_drawing_counts_the_blocks_below_its_cut),
		cmocka_unit_test(test_dot_has_one_edge_per_pointer),
		cmocka_unit_test(test_tree_names_parse_into_a_mask),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
