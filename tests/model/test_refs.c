/*
 * tests/model/test_refs.c - reference counting (model/refs.h): snapshot-like
 * copies of a root, the update_ref_for_cow table, and extent item sizes.
 *
 * The trees are built through the public API: tree 5 holds "files" (an
 * INODE_ITEM and one EXTENT_DATA pointing at a data extent each); a clone of
 * its root plays the snapshot (tree 256). refs_check runs after every step.
 */
#include "model_fixture.h"

#include "constants.h"

#define SNAPSHOT_ID 256u

/* File `ino` in tree 5: (ino, INODE_ITEM) 160 bytes and (ino, EXTENT_DATA, 0) 53 bytes
 * mapping a new 64 KiB data extent at `bytenr`. */
static void add_file_at(struct tree_fixture *f, uint64_t ino, uint64_t bytenr)
{
	struct btree_key inode = BTRFS_KEY(ino, BTRFS_INODE_ITEM_KEY, 0);
	btree_insert_item(&f->tree, &f->txn, &inode, BTRFS_INODE_ITEM_SIZE, NULL);
	struct data_extent *extent = refs_data_extent_new(&f->txn, bytenr, 65536);
	union item_payload payload = { .file_extent = { .extent = extent, .num_bytes = 65536 } };
	struct btree_key data = BTRFS_KEY(ino, BTRFS_EXTENT_DATA_KEY, 0);
	btree_insert_item(&f->tree, &f->txn, &data, BTRFS_FILE_EXTENT_REGULAR_SIZE, &payload);
}

/* n files in tree 5, file 256 + i mapping data extent i at 1 GiB + i * 64 KiB. */
static void add_files(struct tree_fixture *f, uint64_t n)
{
	for (uint64_t i = 1; i <= n; i++)
		add_file_at(f, 256 + i, (1ull << 30) + i * 65536);
}

static struct data_extent *extent_of(const struct tree_block *leaf, uint32_t slot)
{
	assert_int_equal(btree_item_key(btree_leaf_item(leaf, slot))->type, BTRFS_EXTENT_DATA_KEY);
	return btree_item_file_extent(btree_leaf_item(leaf, slot))->extent;
}

/* The data extent of the leaf's first EXTENT_DATA item. */
static struct data_extent *first_extent(const struct tree_block *leaf)
{
	for (uint32_t i = 0; i < leaf->nritems; i++)
		if (btree_item_key(btree_leaf_item(leaf, i))->type == BTRFS_EXTENT_DATA_KEY)
			return extent_of(leaf, i);
	fail_msg("leaf %" G_GUINT64_FORMAT " maps no data", leaf->bytenr);
	return NULL;
}

/* Tree 5 of height 3 at 4 KiB, committed. */
static struct tree_fixture *tall_file_tree(void)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	add_files(f, 4000);
	assert_int_equal(f->tree.root->level, 2);
	tree_fixture_commit(f);
	tree_fixture_assert_ok(f, "building tree 5");
	return f;
}

/* The key of the first file item under root slot 0, child slot 1: the path
 * root -> node N -> leaf L that the COW tests follow. */
static struct btree_key key_under_first_node(const struct btree *tree, struct tree_block **node,
					     struct tree_block **leaf)
{
	*node = tree->root->children[0].block;
	*leaf = (*node)->children[1].block;
	return *btree_item_key(btree_leaf_item(*leaf, 0));
}

/* --- snapshot-like copies -------------------------------------------------- */

static void test_refs_clone_of_a_root_gives_each_child_block_two_references(void **state)
{
	struct tree_fixture *f = tall_file_tree();
	tree_fixture_clone_root(f, SNAPSHOT_ID);
	tree_fixture_assert_ok(f, "cloning the root");
	const struct tree_block *root = f->tree.root;
	for (uint32_t i = 0; i < root->nritems; i++) {
		const struct tree_block *child = root->children[i].block;
		assert_int_equal(child->tree_refs, 2);
		assert_int_equal(child->shared_refs, 0);
		/* Below the children nothing changed. */
		assert_int_equal(tree_block_refs(child->children[0].block), 1);
	}
	assert_int_equal(tree_block_refs(root), 1);
	tree_fixture_free(f);
}

static void test_refs_clone_of_a_leaf_root_gives_each_data_extent_two_references(void **state)
{
	struct tree_fixture *f = tree_fixture_new(16384);
	add_files(f, 20);
	assert_int_equal(f->tree.root->level, 0);
	tree_fixture_commit(f);
	tree_fixture_clone_root(f, SNAPSHOT_ID);
	tree_fixture_assert_ok(f, "cloning a leaf root");
	const struct tree_block *leaf = f->tree.root;
	for (uint32_t i = 0; i < leaf->nritems; i++) {
		if (btree_item_key(btree_leaf_item(leaf, i))->type != BTRFS_EXTENT_DATA_KEY)
			continue;
		assert_int_equal(extent_of(leaf, i)->data_refs, 2);
		assert_int_equal(extent_of(leaf, i)->shared_refs, 0);
	}
	tree_fixture_free(f);
}

/* --- update_ref_for_cow ------------------------------------------------------ */

static void test_refs_owner_cowing_a_shared_node_sets_full_backref_and_gives_its_children_shared_refs(void **state)
{
	struct tree_fixture *f = tall_file_tree();
	tree_fixture_clone_root(f, SNAPSHOT_ID);
	tree_fixture_commit(f);
	struct tree_block *node, *leaf;
	struct btree_key key = key_under_first_node(&f->tree, &node, &leaf);
	assert_int_equal(tree_block_refs(node), 2);

	/* Tree 5 (the owner) writes under N: refs > 1, owner, no FULL_BACKREF. */
	assert_non_null(btree_lookup_for_write(&f->tree, &f->txn, &key));
	tree_fixture_assert_ok(f, "the owner's first write under a shared node");
	assert_true(node->flags & TREE_BLOCK_FULL_BACKREF);
	assert_int_equal(node->tree_refs, 1);  /* the clone's root */
	assert_int_equal(node->shared_refs, 0);
	for (uint32_t i = 0; i < node->nritems; i++) {
		const struct tree_block *child = node->children[i].block;
		if (child == leaf)
			continue;
		/* One TREE_BLOCK_REF through tree 5's copy of N, one SHARED by old N. */
		assert_int_equal(child->tree_refs, 1);
		assert_int_equal(child->shared_refs, 1);
		assert_false(child->flags & TREE_BLOCK_FULL_BACKREF);
	}
	/* The leaf on the path was shared (refs 2) in turn and copied the same way. */
	assert_true(leaf->flags & TREE_BLOCK_FULL_BACKREF);
	assert_int_equal(leaf->tree_refs, 0);
	assert_int_equal(leaf->shared_refs, 1);
	for (uint32_t i = 0; i < leaf->nritems; i++) {
		if (btree_item_key(btree_leaf_item(leaf, i))->type != BTRFS_EXTENT_DATA_KEY)
			continue;
		assert_int_equal(extent_of(leaf, i)->data_refs, 1);
		assert_int_equal(extent_of(leaf, i)->shared_refs, 1);
	}
	tree_fixture_free(f);
}

static void test_refs_cowing_a_full_backref_block_with_one_ref_turns_shared_refs_into_tree_refs(void **state)
{
	struct tree_fixture *f = tall_file_tree();
	struct btree *clone = tree_fixture_clone_root(f, SNAPSHOT_ID);
	tree_fixture_commit(f);
	struct tree_block *node, *leaf;
	struct btree_key key = key_under_first_node(&f->tree, &node, &leaf);
	assert_non_null(btree_lookup_for_write(&f->tree, &f->txn, &key));
	tree_fixture_commit(f);
	tree_fixture_assert_ok(f, "the owner's write, committed");
	struct tree_block *sibling = node->children[0].block;
	struct data_extent *extent = first_extent(leaf);
	assert_int_equal(sibling->shared_refs, 1);

	/* The clone now writes the same key: N has refs 1 and FULL_BACKREF. */
	uint64_t freed = f->txn.stats.blocks_freed;
	assert_non_null(btree_lookup_for_write(clone, &f->txn, &key));
	tree_fixture_assert_ok(f, "the clone's write under the FULL_BACKREF node");
	/* Old N and old L had their last reference: freed. The siblings hold two
	 * TREE_BLOCK_REFs now (tree 5's copy of N and the clone's), no shared one. */
	assert_int_equal(f->txn.stats.blocks_freed, freed + 3); /* with the clone's old root */
	assert_int_equal(sibling->tree_refs, 2);
	assert_int_equal(sibling->shared_refs, 0);
	assert_int_equal(extent->data_refs, 2);
	assert_int_equal(extent->shared_refs, 0);
	tree_fixture_free(f);
}

static void test_refs_non_owner_cowing_a_shared_block_adds_tree_refs_through_its_copy(void **state)
{
	struct tree_fixture *f = tall_file_tree();
	struct btree *clone = tree_fixture_clone_root(f, SNAPSHOT_ID);
	tree_fixture_commit(f);
	struct tree_block *node, *leaf;
	struct btree_key key = key_under_first_node(&f->tree, &node, &leaf);
	struct data_extent *extent = first_extent(leaf);

	/* The clone writes first: N is owned by tree 5, refs 2. */
	assert_non_null(btree_lookup_for_write(clone, &f->txn, &key));
	tree_fixture_assert_ok(f, "the clone's write under a shared node");
	assert_false(node->flags & TREE_BLOCK_FULL_BACKREF);
	assert_int_equal(tree_block_refs(node), 1);
	for (uint32_t i = 0; i < node->nritems; i++) {
		const struct tree_block *child = node->children[i].block;
		if (child == leaf)
			continue;
		assert_int_equal(child->tree_refs, 2);
		assert_int_equal(child->shared_refs, 0);
	}
	assert_false(leaf->flags & TREE_BLOCK_FULL_BACKREF);
	assert_int_equal(tree_block_refs(leaf), 1);
	assert_int_equal(extent->data_refs, 2);
	assert_int_equal(extent->shared_refs, 0);
	tree_fixture_free(f);
}

static void test_refs_dropping_a_clone_frees_its_root_and_returns_children_to_one_ref(void **state)
{
	struct tree_fixture *f = tall_file_tree();
	uint64_t live = blockstore_live_blocks(f->store);
	struct btree *clone = tree_fixture_clone_root(f, SNAPSHOT_ID);
	tree_fixture_commit(f);
	struct tree_block *node, *leaf;
	struct btree_key key = key_under_first_node(&f->tree, &node, &leaf);
	/* The clone makes some blocks of its own first. */
	assert_non_null(btree_lookup_for_write(clone, &f->txn, &key));
	tree_fixture_commit(f);
	tree_fixture_assert_ok(f, "the clone's write");

	refs_drop_block(&f->txn, clone->root, false);
	clone->root = NULL;
	g_free(clone);
	f->nextra--;
	tree_fixture_commit(f);
	tree_fixture_assert_ok(f, "dropping the clone");
	const struct tree_block *root = f->tree.root;
	for (uint32_t i = 0; i < root->nritems; i++)
		assert_int_equal(tree_block_refs(root->children[i].block), 1);
	/* Tree 5 is back to its own blocks; the extent tree may have moved by a few. */
	assert_in_range(blockstore_live_blocks(f->store), live - 3, live + 3);
	tree_fixture_free(f);
}

/* --- extent items -------------------------------------------------------------- */

static void test_refs_metadata_item_is_33_bytes_for_one_ref_and_24_plus_9_per_ref(void **state)
{
	uint32_t keyed = 99;
	assert_int_equal(refs_metadata_item_size(16384, 1, &keyed), 33);
	assert_int_equal(keyed, 0);
	for (uint32_t n = 1; n <= 100; n++) {
		assert_int_equal(refs_metadata_item_size(16384, n, &keyed), 24 + 9 * n);
		assert_int_equal(keyed, 0);
	}
	/* Measured: a block shared by 11 roots has a 123-byte METADATA_ITEM. */
	assert_int_equal(refs_metadata_item_size(16384, 11, &keyed), 123);
}

static void test_refs_metadata_refs_past_the_max_extent_item_size_become_keyed(void **state)
{
	const uint32_t nodesizes[] = { 4096, 16384, 65536 };
	assert_int_equal(btrfs_max_extent_item_size(16384), 992);
	assert_int_equal(btrfs_max_extent_item_size(4096), 224);
	for (unsigned i = 0; i < G_N_ELEMENTS(nodesizes); i++) {
		uint32_t limit = btrfs_max_extent_item_size(nodesizes[i]), keyed, n = 1;
		while (refs_metadata_item_size(nodesizes[i], n, &keyed) && keyed == 0)
			n++;
		/* n is the first count that overflows: the inline part stays below
		 * the limit, one ref more would reach it (btrfs refuses at >=). */
		uint32_t size = refs_metadata_item_size(nodesizes[i], n, &keyed);
		assert_int_equal(keyed, 1);
		assert_true(size < limit);
		assert_true(size + BTRFS_INLINE_REF_SIZE >= limit);
		assert_int_equal(size, 24 + 9 * (n - 1));
		refs_metadata_item_size(nodesizes[i], n + 10, &keyed);
		assert_int_equal(keyed, 11);
	}
}

static void test_refs_data_item_is_24_plus_29_per_data_ref_and_13_per_shared_ref(void **state)
{
	uint32_t keyed;
	assert_int_equal(refs_data_item_size(16384, 1, 0, &keyed), 53);
	assert_int_equal(keyed, 0);
	assert_int_equal(refs_data_item_size(16384, 2, 0, &keyed), 82);
	/* Measured at 16 KiB: 11 roots, 343 bytes, all inline; 1 EDR + 1 SDR, 66. */
	assert_int_equal(refs_data_item_size(16384, 11, 0, &keyed), 343);
	assert_int_equal(keyed, 0);
	assert_int_equal(refs_data_item_size(16384, 1, 1, &keyed), 66);
	assert_int_equal(keyed, 0);
}

static void test_refs_data_refs_at_4k_keep_6_inline_and_key_the_rest(void **state)
{
	uint32_t keyed;
	/* Measured on real btrfs at 4 KiB: 198 bytes = 24 + 6 x 29, 5 keyed EDRs of 11. */
	assert_int_equal(refs_data_item_size(4096, 6, 0, &keyed), 198);
	assert_int_equal(keyed, 0);
	assert_int_equal(refs_data_item_size(4096, 7, 0, &keyed), 198);
	assert_int_equal(keyed, 1);
	assert_int_equal(refs_data_item_size(4096, 11, 0, &keyed), 198);
	assert_int_equal(keyed, 5);
	/* At 16 KiB the limit is 992: 33 EDRs inline (981 bytes), the 34th keyed. */
	assert_int_equal(refs_data_item_size(16384, 34, 0, &keyed), 981);
	assert_int_equal(keyed, 1);
}

/* The METADATA_ITEM of a block, as the last commit wrote it. */
static uint32_t metadata_item_size(struct tree_fixture *f, const struct tree_block *block)
{
	struct btree_key key = BTRFS_KEY(block->bytenr, BTRFS_METADATA_ITEM_KEY, block->level);
	struct btree_path path;
	if (!btree_lookup(&f->extent_tree, &key, &path))
		fail_msg("no METADATA_ITEM for block %" G_GUINT64_FORMAT, block->bytenr);
	return btree_item_size(btree_path_item(&path));
}

static void test_refs_commit_writes_extent_items_sized_by_their_refs(void **state)
{
	struct tree_fixture *f = tall_file_tree();
	const struct tree_block *child = f->tree.root->children[0].block;
	assert_int_equal(metadata_item_size(f, child), 33);
	tree_fixture_clone_root(f, SNAPSHOT_ID);
	tree_fixture_commit(f);
	tree_fixture_assert_ok(f, "the clone, committed");
	assert_int_equal(metadata_item_size(f, child), 42);
	assert_int_equal(metadata_item_size(f, f->tree.root), 33);
	/* A data extent of a leaf root shared by a clone: 24 + 2 x 29. */
	struct tree_fixture *g = tree_fixture_new(16384);
	add_files(g, 5);
	tree_fixture_clone_root(g, SNAPSHOT_ID);
	tree_fixture_commit(g);
	const struct data_extent *extent = first_extent(g->tree.root);
	struct btree_key key = BTRFS_KEY(extent->bytenr, BTRFS_EXTENT_ITEM_KEY, extent->num_bytes);
	struct btree_path path;
	assert_true(btree_lookup(&g->extent_tree, &key, &path));
	assert_int_equal(btree_item_size(btree_path_item(&path)), 82);
	tree_fixture_assert_ok(g, "a shared leaf root, committed");
	tree_fixture_free(g);
	tree_fixture_free(f);
}

static void test_refs_throttle_limit_is_128_mib_of_delayed_ref_reservations(void **state)
{
	(void)state;
	/* 128 MiB / (nodesize * 8 levels * 2 * 2 for the free-space tree). */
	assert_int_equal(refs_throttle_heads(4096), 1024);
	assert_int_equal(refs_throttle_heads(16384), 256);
	assert_int_equal(refs_throttle_heads(65536), 64);
}

static bool extent_item_written(struct tree_fixture *f, uint64_t bytenr)
{
	struct btree_key key = BTRFS_KEY(bytenr, BTRFS_EXTENT_ITEM_KEY, 65536);
	struct btree_path path;
	return btree_lookup(&f->extent_tree, &key, &path);
}

static bool data_item_written(struct tree_fixture *f, uint64_t i)
{
	return extent_item_written(f, (1ull << 30) + i * 65536);
}

static void test_refs_throttle_runs_quarter_batches_in_address_order_down_to_the_limit(void **state)
{
	(void)state;
	struct tree_fixture *f = tree_fixture_new(16384);
	add_files(f, 600);
	unsigned before = refs_pending_heads(f->refs);
	assert_true(before > 600);
	uint64_t ran = refs_throttle(f->refs, &f->txn);
	/* Whole batches of 256 / 4, until at most 256 heads are left. */
	assert_int_equal(ran % 64, 0);
	assert_true(refs_pending_heads(f->refs) <= 256);
	assert_true(refs_pending_heads(f->refs) > 256 - 64);
	/* From address 0 upwards: the data extents written are a prefix. */
	uint64_t written = 0;
	while (written < 600 && data_item_written(f, written + 1))
		written++;
	assert_true(written > 0);
	for (uint64_t i = written + 1; i <= 600; i++)
		assert_false(data_item_written(f, i));
	/* Under the limit nothing runs; the commit writes the rest. */
	assert_int_equal(refs_throttle(f->refs, &f->txn), 0);
	tree_fixture_commit(f);
	assert_int_equal(refs_pending_heads(f->refs), 0);
	for (uint64_t i = 1; i <= 600; i++)
		assert_true(data_item_written(f, i));
	tree_fixture_assert_ok(f, "600 files, throttled then committed");
	tree_fixture_free(f);
}

/* The data extents of the test's files whose EXTENT_ITEM is not written yet, in address
 * order: the pending data heads.  Files 1..600 map 1 GiB + i * 64 KiB, the later ones
 * 32 KiB above each. */
static GArray *unwritten_data_heads(struct tree_fixture *f)
{
	GArray *heads = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	for (uint64_t i = 1; i <= 600; i++) {
		uint64_t bytenr = (1ull << 30) + i * 65536;
		if (!extent_item_written(f, bytenr))
			g_array_append_val(heads, bytenr);
		bytenr += 32768;
		if (!extent_item_written(f, bytenr))
			g_array_append_val(heads, bytenr);
	}
	return heads;
}

static void test_refs_throttle_runs_heads_in_address_order_across_batches_with_new_heads_queued_between(void **state)
{
	(void)state;
	struct tree_fixture *f = tree_fixture_new(16384);
	add_files(f, 600);
	refs_throttle(f->refs, &f->txn);
	uint64_t written = 0;
	while (data_item_written(f, written + 1))
		written++;
	/* The tree and extent-tree blocks sit below 1 GiB, so the last head run was data
	 * extent `written` and the cursor is just above it. */
	assert_true(f->tree.root->bytenr < (1ull << 30) && f->extent_tree.root->bytenr < (1ull << 30));
	assert_true(written > 0 && written < 600);
	uint64_t cursor = (1ull << 30) + written * 65536 + 1;

	/* New heads between the old ones, below and above the cursor: the first batch merges
	 * them in, and each batch's extent-tree copies queue more for the next. */
	for (uint64_t i = 1; i <= 600; i++)
		add_file_at(f, 10000 + i, (1ull << 30) + i * 65536 + 32768);
	g_autoptr(GArray) pending = unwritten_data_heads(f);
	assert_int_equal(pending->len, 600 - written + 600);
	uint64_t ran = refs_throttle(f->refs, &f->txn);
	assert_true(ran > 0);
	assert_int_equal(ran % 64, 0);

	/* Read circularly from the first pending head at or above the cursor, the ones written
	 * are a run from there: everything above the cursor first, then from the lowest up. */
	unsigned first = 0;
	while (first < pending->len && g_array_index(pending, uint64_t, first) < cursor)
		first++;
	assert_true(first > 0 && first < pending->len);
	unsigned run = 0;
	while (run < pending->len &&
	       extent_item_written(f, g_array_index(pending, uint64_t, (first + run) % pending->len)))
		run++;
	assert_true(run > pending->len - first); /* it wrapped */
	for (unsigned k = run; k < pending->len; k++)
		assert_false(extent_item_written(f, g_array_index(pending, uint64_t, (first + k) % pending->len)));
	tree_fixture_commit(f);
	tree_fixture_assert_ok(f, "throttled across batches with new heads, then committed");
	tree_fixture_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refs_clone_of_a_root_gives_each_child_block_two_references),
		cmocka_unit_test(test_refs_clone_of_a_leaf_root_gives_each_data_extent_two_references),
		cmocka_unit_test(test_refs_owner_cowing_a_shared_node_sets_full_backref_and_gives_its_children_shared_refs),
		cmocka_unit_test(test_refs_cowing_a_full_backref_block_with_one_ref_turns_shared_refs_into_tree_refs),
		cmocka_unit_test(test_refs_non_owner_cowing_a_shared_block_adds_tree_refs_through_its_copy),
		cmocka_unit_test(test_refs_dropping_a_clone_frees_its_root_and_returns_children_to_one_ref),
		cmocka_unit_test(test_refs_metadata_item_is_33_bytes_for_one_ref_and_24_plus_9_per_ref),
		cmocka_unit_test(test_refs_metadata_refs_past_the_max_extent_item_size_become_keyed),
		cmocka_unit_test(test_refs_data_item_is_24_plus_29_per_data_ref_and_13_per_shared_ref),
		cmocka_unit_test(test_refs_data_refs_at_4k_keep_6_inline_and_key_the_rest),
		cmocka_unit_test(test_refs_commit_writes_extent_items_sized_by_their_refs),
		cmocka_unit_test(test_refs_throttle_limit_is_128_mib_of_delayed_ref_reservations),
		cmocka_unit_test(test_refs_throttle_runs_quarter_batches_in_address_order_down_to_the_limit),
		cmocka_unit_test(test_refs_throttle_runs_heads_in_address_order_across_batches_with_new_heads_queued_between),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
