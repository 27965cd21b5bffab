/*
 * tests/model/test_btree.c - the copy-on-write B-tree (model/btree.h), driven
 * through its public API with a real block store, extent tree and refs.
 *
 * Every test that changes a tree runs btree_check (BT1-BT5), refs_check and
 * blockstore_check after each operation (tree_fixture_assert_ok).
 */
#include "model_fixture.h"

#include <string.h>

#include "constants.h"

#define SEED 0x5eed0001ull

static uint32_t leaf_capacity(uint32_t nodesize)
{
	return nodesize - BTRFS_HEADER_SIZE;
}

static void insert(struct tree_fixture *f, uint64_t objectid, uint64_t offset, uint32_t size)
{
	struct btree_key key = fixture_key(objectid, offset);
	union item_payload payload = { .inode = { .size = objectid * 1000003u + offset } };
	struct btree_item *item = btree_insert_item(&f->tree, &f->txn, &key, size, &payload);
	assert_non_null(item);
	assert_int_equal(btree_item_size(item), size);
}

/* Every leaf of the subtree, left to right. */
static void collect_leaves(struct tree_block *block, GPtrArray *leaves)
{
	if (!block->level) {
		g_ptr_array_add(leaves, block);
		return;
	}
	for (uint32_t i = 0; i < block->nritems; i++)
		collect_leaves(block->children[i].block, leaves);
}

static uint32_t max_node_fanout(const struct tree_block *block)
{
	if (!block->level)
		return 0;
	uint32_t most = block->nritems;
	for (uint32_t i = 0; i < block->nritems; i++)
		most = MAX(most, max_node_fanout(block->children[i].block));
	return most;
}

static struct btree_stats stats_of(const struct btree *tree)
{
	struct btree_stats stats;
	btree_stats(tree, &stats);
	return stats;
}

/* Fisher-Yates over [0, n). */
static uint64_t *shuffled(uint64_t n, uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed);
	uint64_t *order = g_new(uint64_t, n);
	for (uint64_t i = 0; i < n; i++)
		order[i] = i;
	for (uint64_t i = n; i > 1; i--) {
		uint64_t j = rng_below(&r, i);
		uint64_t t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
	return order;
}

/* Insert n keys in `order` with item sizes from the generator, committing
 * every `commit_every` inserts (0: never), checking after each. */
static void insert_checked(struct tree_fixture *f, const uint64_t *order, uint64_t n, unsigned commit_every,
			   uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed);
	for (uint64_t i = 0; i < n; i++) {
		uint32_t size = (uint32_t)rng_below(&r, 400);
		insert(f, 1 + order[i] / 64, order[i] % 64, size);
		char what[96];
		g_snprintf(what, sizeof(what), "insert %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
			   " (seed %#" G_GINT64_MODIFIER "x)", i, n, seed);
		tree_fixture_assert_ok(f, what);
		if (commit_every && i % commit_every == commit_every - 1)
			tree_fixture_commit(f);
	}
	assert_int_equal(tree_fixture_items(&f->tree), n);
}

/* --- inserts ---------------------------------------------------------------- */

/* BT11: every tree id the model makes comes back from its 32-bit owner, and
 * the ids between the ranges do not pack. */
static void test_btree_owner_packs_every_kind_of_tree_id_and_only_those(void **state)
{
	const uint64_t ids[] = { BTRFS_ROOT_TREE_OBJECTID, BTRFS_EXTENT_TREE_OBJECTID, BTRFS_FS_TREE_OBJECTID,
				 BTRFS_FREE_SPACE_TREE_OBJECTID, BTRFS_FIRST_FREE_OBJECTID, (1ull << 31) - 1,
				 COWSIM_ATIME_TREE_BASE + BTRFS_FS_TREE_OBJECTID,
				 COWSIM_ATIME_TREE_BASE + (1ull << 30) - 1, BTRFS_DATA_RELOC_TREE_OBJECTID,
				 BTRFS_EXTENT_CSUM_OBJECTID, UINT64_MAX, (uint64_t)0 - (1ull << 16) };
	for (size_t i = 0; i < G_N_ELEMENTS(ids); i++) {
		assert_true(btree_owner_packs(ids[i]));
		assert_true(btree_owner_is_packed(btree_owner_pack(ids[i])));
		assert_int_equal(btree_owner_unpack(btree_owner_pack(ids[i])), ids[i]);
		for (size_t j = 0; j < i; j++)
			assert_int_not_equal(btree_owner_pack(ids[i]), btree_owner_pack(ids[j]));
	}
	const uint64_t outside[] = { 1ull << 31, 1ull << 40, COWSIM_ATIME_TREE_BASE - 1,
				     COWSIM_ATIME_TREE_BASE + (1ull << 30), (uint64_t)0 - (1ull << 16) - 1 };
	for (size_t i = 0; i < G_N_ELEMENTS(outside); i++)
		assert_false(btree_owner_packs(outside[i]));
}

static void test_btree_insert_in_order_keeps_b1_to_b5_after_every_insert(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	g_autofree uint64_t *order = g_new(uint64_t, 3000);
	for (uint64_t i = 0; i < 3000; i++)
		order[i] = i;
	insert_checked(f, order, 3000, 0, SEED);
	assert_true(stats_of(&f->tree).height >= 3);
	tree_fixture_free(f);
}

static void test_btree_insert_in_reverse_order_keeps_b1_to_b5_after_every_insert(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	g_autofree uint64_t *order = g_new(uint64_t, 3000);
	for (uint64_t i = 0; i < 3000; i++)
		order[i] = 2999 - i;
	insert_checked(f, order, 3000, 0, SEED + 1);
	assert_true(stats_of(&f->tree).height >= 3);
	tree_fixture_free(f);
}

static void test_btree_insert_in_random_order_with_commits_keeps_b1_to_b5_after_every_insert(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	g_autofree uint64_t *order = shuffled(3000, SEED + 2);
	insert_checked(f, order, 3000, 97, SEED + 3);
	assert_true(stats_of(&f->tree).height >= 3);
	/* Every key is found again, with its payload. */
	for (uint64_t i = 0; i < 3000; i++) {
		struct btree_key key = fixture_key(1 + i / 64, i % 64);
		struct btree_path path;
		assert_true(btree_lookup(&f->tree, &key, &path));
		assert_int_equal(btree_item_inode(btree_path_item(&path))->size,
				 key.objectid * 1000003u + key.offset);
	}
	tree_fixture_free(f);
}

/* --- leaf and node capacity ------------------------------------------------- */

static void test_btree_leaf_holds_items_while_header_plus_items_fit_in_nodesize(void **state)
{
	const uint32_t nodesizes[] = { 4096, 16384, 65536 };
	for (unsigned n = 0; n < G_N_ELEMENTS(nodesizes); n++) {
		struct tree_fixture *f = tree_fixture_new(nodesizes[n]);
		uint32_t capacity = leaf_capacity(nodesizes[n]);
		/* Items of 25 + 100 bytes, the last one sized to fill the leaf to the byte. */
		uint32_t count = capacity / 125 - 1;
		for (uint32_t i = 0; i < count; i++)
			insert(f, 1, i, 100);
		uint32_t rest = capacity - count * 125;
		insert(f, 1, count, rest - BTRFS_ITEM_HEADER_SIZE);
		tree_fixture_assert_ok(f, "filling one leaf");
		struct btree_stats stats = stats_of(&f->tree);
		assert_int_equal(stats.leaves, 1);
		assert_int_equal(stats.height, 1);
		assert_int_equal(BTRFS_HEADER_SIZE + stats.leaf_bytes, nodesizes[n]);
		tree_fixture_free(f);
	}
}

static void test_btree_leaf_splits_when_the_next_item_does_not_fit(void **state)
{
	const uint32_t nodesizes[] = { 4096, 16384, 65536 };
	for (unsigned n = 0; n < G_N_ELEMENTS(nodesizes); n++) {
		struct tree_fixture *f = tree_fixture_new(nodesizes[n]);
		uint32_t capacity = leaf_capacity(nodesizes[n]);
		uint32_t count = capacity / 125 - 1;
		for (uint32_t i = 0; i < count; i++)
			insert(f, 1, i, 100);
		insert(f, 1, count, capacity - count * 125 - BTRFS_ITEM_HEADER_SIZE);
		/* A header-only item (25 bytes) no longer fits. */
		insert(f, 1, count + 1, 0);
		tree_fixture_assert_ok(f, "the insert that splits");
		struct btree_stats stats = stats_of(&f->tree);
		assert_int_equal(stats.leaves, 2);
		assert_int_equal(stats.height, 2);
		assert_int_equal(stats.items, count + 2);
		tree_fixture_free(f);
	}
}

static void test_btree_largest_item_fits_alone_in_a_leaf(void **state)
{
	const uint32_t nodesizes[] = { 4096, 16384, 65536 };
	for (unsigned n = 0; n < G_N_ELEMENTS(nodesizes); n++) {
		uint32_t nodesize = nodesizes[n];
		uint32_t largest = nodesize - BTRFS_HEADER_SIZE - BTRFS_ITEM_HEADER_SIZE;
		struct tree_fixture *f = tree_fixture_new(nodesize);
		insert(f, 5, 0, largest);
		tree_fixture_assert_ok(f, "the largest item into an empty tree");
		assert_int_equal(stats_of(&f->tree).leaf_bytes, leaf_capacity(nodesize));
		/* Between smaller neighbours it still gets a leaf of its own. */
		for (uint32_t i = 0; i < 40; i++) {
			insert(f, 4, i, 50);
			insert(f, 6, i, 50);
		}
		insert(f, 5, 1, largest);
		tree_fixture_assert_ok(f, "a second largest item between neighbours");
		for (uint64_t offset = 0; offset < 2; offset++) {
			struct btree_key key = fixture_key(5, offset);
			struct btree_path path;
			assert_true(btree_lookup(&f->tree, &key, &path));
			assert_int_equal(path.nodes[0]->nritems, 1);
			assert_int_equal(path.nodes[0]->leaf_bytes, leaf_capacity(nodesize));
		}
		tree_fixture_free(f);
	}
}

static void test_btree_node_capacity_is_nodesize_minus_header_over_33(void **state)
{
	assert_int_equal(btree_node_capacity(4096), (4096 - 101) / 33);
	assert_int_equal(btree_node_capacity(16384), 493);
	assert_int_equal(btree_node_capacity(65536), (65536 - 101) / 33);
	assert_int_equal(btree_leaf_capacity(16384), 16384 - 101);
	/* One largest item per leaf: each insert adds a pointer. Nodes fill up to
	 * their capacity (pushes may fill a sibling to the last slot) and never past it. */
	struct tree_fixture *f = tree_fixture_new(4096);
	uint32_t capacity = btree_node_capacity(4096), most = 0;
	for (uint32_t i = 0; i < 3 * capacity; i++) {
		insert(f, 1, i, 4096 - 101 - 25);
		tree_fixture_assert_ok(f, "a leaf-sized insert");
		most = MAX(most, max_node_fanout(f->tree.root));
	}
	assert_true(stats_of(&f->tree).height >= 3);
	assert_in_range(most, capacity - 3, capacity);
	tree_fixture_free(f);
}

/* --- deletes ---------------------------------------------------------------- */

static void test_btree_delete_everything_in_random_order_collapses_to_one_empty_leaf(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	g_autofree uint64_t *order = shuffled(3000, SEED + 4);
	insert_checked(f, order, 3000, 500, SEED + 5);
	tree_fixture_commit(f);
	assert_true(stats_of(&f->tree).height >= 3);
	g_autofree uint64_t *deletes = shuffled(3000, SEED + 6);
	for (uint64_t i = 0; i < 3000; i++) {
		struct btree_key key = fixture_key(1 + deletes[i] / 64, deletes[i] % 64);
		assert_true(btree_delete_item(&f->tree, &f->txn, &key));
		char what[64];
		g_snprintf(what, sizeof(what), "delete %" G_GUINT64_FORMAT " (seed %#x)", i, (unsigned)(SEED + 6));
		tree_fixture_assert_ok(f, what);
		if (i % 211 == 210)
			tree_fixture_commit(f);
	}
	struct btree_stats stats = stats_of(&f->tree);
	assert_int_equal(stats.height, 1);
	assert_int_equal(stats.leaves, 1);
	assert_int_equal(stats.items, 0);
	assert_int_equal(stats.nodes, 0);
	/* Only the empty leaf and the extent tree are left. */
	tree_fixture_commit(f);
	struct btree_stats extent = stats_of(&f->extent_tree);
	assert_int_equal(blockstore_live_blocks(f->store), 1 + extent.leaves + extent.nodes);
	tree_fixture_assert_ok(f, "the final commit");
	tree_fixture_free(f);
}

static void test_btree_delete_of_a_missing_key_returns_false_and_changes_nothing(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	for (uint32_t i = 0; i < 100; i++)
		insert(f, 1, 2 * i, 100);
	tree_fixture_commit(f);
	struct btree_key key = fixture_key(1, 7);
	/* The search copies the path (btrfs_search_slot with cow), but no item goes. */
	assert_false(btree_delete_item(&f->tree, &f->txn, &key));
	assert_int_equal(tree_fixture_items(&f->tree), 100);
	assert_null(btree_lookup_for_write(&f->tree, &f->txn, &key));
	tree_fixture_assert_ok(f, "deleting a missing key");
	tree_fixture_free(f);
}

/* BT4: a node below the root may keep one child. Appends fill the level-1
 * nodes (121 pointers at 4 KiB); deleting the keys of the second one takes
 * its leaves away one by one, and with full siblings on both sides it cannot
 * merge (balance_node: only into a sibling that can take it all) until its
 * last leaf goes: on the way it holds one child, and the tree is sound. */
static void test_btree_a_node_below_the_root_keeps_one_child_while_its_siblings_are_full(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	for (uint64_t i = 0; i < 20000; i++)
		insert(f, i, 0, 60);
	tree_fixture_commit(f);
	struct tree_block *root = f->tree.root;
	assert_int_equal(root->level, 2);
	assert_true(root->nritems >= 3);
	uint32_t capacity = btree_node_capacity(4096);
	assert_int_equal(root->children[0].block->nritems, capacity);
	assert_int_equal(root->children[2].block->nritems, capacity);
	uint64_t first = root->children[1].key.objectid, end = root->children[2].key.objectid;
	bool one_child = false;
	for (uint64_t i = first; i < end; i++) {
		struct btree_key key = fixture_key(i, 0);
		assert_true(btree_delete_item(&f->tree, &f->txn, &key));
		const struct tree_block *node = f->tree.root->children[1].block;
		if (node->nritems == 1) {
			one_child = true;
			tree_fixture_assert_ok(f, "a node below the root with one child");
		}
	}
	assert_true(one_child);
	tree_fixture_assert_ok(f, "the node's keys deleted");
	tree_fixture_free(f);
	(void)state;
}

/* --- lookups ---------------------------------------------------------------- */

static void test_btree_lookup_le_finds_the_predecessor_across_leaves(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	for (uint64_t i = 0; i < 2000; i++)
		insert(f, 1, 2 * i, 100);
	tree_fixture_assert_ok(f, "2000 inserts");
	for (uint64_t i = 0; i < 2000; i++) {
		struct btree_key odd = fixture_key(1, 2 * i + 1), even = fixture_key(1, 2 * i);
		const struct btree_item *item = btree_lookup_le(&f->tree, &odd);
		assert_non_null(item);
		assert_int_equal(btree_item_key(item)->offset, 2 * i);
		item = btree_lookup_le(&f->tree, &even);
		assert_non_null(item);
		assert_int_equal(btree_item_key(item)->offset, 2 * i);
	}
	/* Just below each leaf's first key is the previous leaf's last item. */
	g_autoptr(GPtrArray) leaves = g_ptr_array_new();
	collect_leaves(f->tree.root, leaves);
	assert_true(leaves->len > 50);
	for (unsigned j = 1; j < leaves->len; j++) {
		const struct tree_block *leaf = leaves->pdata[j], *prev = leaves->pdata[j - 1];
		struct btree_key probe = *btree_item_key(btree_leaf_item(leaf, 0));
		probe.offset--;
		const struct btree_item *item = btree_lookup_le(&f->tree, &probe);
		assert_non_null(item);
		const struct btree_item *prev_last = btree_leaf_item(prev, prev->nritems - 1);
		assert_int_equal(btree_key_compare(btree_item_key(item), btree_item_key(prev_last)), 0);
	}
	tree_fixture_free(f);
}

static void test_btree_lookup_le_below_the_first_key_is_null(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	struct btree_key probe = fixture_key(1, 0);
	assert_null(btree_lookup_le(&f->tree, &probe));
	for (uint64_t i = 1; i <= 500; i++)
		insert(f, 1, 2 * i, 100);
	assert_null(btree_lookup_le(&f->tree, &probe));
	struct btree_key past = fixture_key(2, 0);
	const struct btree_item *last = btree_lookup_le(&f->tree, &past);
	assert_non_null(last);
	assert_int_equal(btree_item_key(last)->offset, 1000);
	tree_fixture_free(f);
}

/* --- copy-on-write ---------------------------------------------------------- */

/* A tree of height 3 at 4 KiB, built in the running transaction. */
static struct tree_fixture *tall_tree(void)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	for (uint64_t i = 0; i < 6000; i++)
		insert(f, 1 + i / 64, i % 64, 100);
	assert_int_equal(stats_of(&f->tree).height, 3);
	return f;
}

static void test_btree_change_to_a_block_of_the_running_transaction_is_in_place(void **state)
{
	struct tree_fixture *f = tall_tree();
	struct btree_key key = fixture_key(20, 5);
	struct btree_path before;
	assert_true(btree_lookup(&f->tree, &key, &before));
	struct tree_block *root = f->tree.root;
	uint64_t cowed = f->txn.stats.blocks_cowed, leaf_bytenr = before.nodes[0]->bytenr;
	struct btree_item *item = btree_lookup_for_write(&f->tree, &f->txn, &key);
	assert_non_null(item);
	btree_item_inode_for_write(item)->size = 42;
	assert_int_equal(f->txn.stats.blocks_cowed, cowed);
	assert_ptr_equal(f->tree.root, root);
	struct btree_path after;
	assert_true(btree_lookup(&f->tree, &key, &after));
	assert_ptr_equal(after.nodes[0], before.nodes[0]);
	assert_int_equal(after.nodes[0]->bytenr, leaf_bytenr);
	assert_int_equal(btree_item_inode(btree_path_item(&after))->size, 42);
	tree_fixture_assert_ok(f, "an in-place change");
	tree_fixture_free(f);
}

static void test_btree_change_after_a_commit_copies_the_leaf_and_its_path_to_the_root(void **state)
{
	struct tree_fixture *f = tall_tree();
	tree_fixture_commit(f);
	struct btree_key key = fixture_key(20, 5);
	struct btree_path before;
	assert_true(btree_lookup(&f->tree, &key, &before));
	uint8_t height = stats_of(&f->tree).height;
	uint64_t cowed = f->txn.stats.blocks_cowed, freed = f->txn.stats.blocks_freed;
	uint64_t live = blockstore_live_blocks(f->store);
	uint64_t old_bytenr[BTRFS_MAX_LEVEL];
	for (unsigned l = 0; l < height; l++)
		old_bytenr[l] = before.nodes[l]->bytenr;

	assert_non_null(btree_lookup_for_write(&f->tree, &f->txn, &key));
	assert_int_equal(f->txn.stats.blocks_cowed, cowed + height);
	/* The old copies had one reference each: they are freed, live stays. */
	assert_int_equal(f->txn.stats.blocks_freed, freed + height);
	assert_int_equal(blockstore_live_blocks(f->store), live);
	struct btree_path after;
	assert_true(btree_lookup(&f->tree, &key, &after));
	for (unsigned l = 0; l < height; l++) {
		assert_int_not_equal(after.nodes[l]->bytenr, old_bytenr[l]);
		assert_int_equal(after.nodes[l]->generation, f->txn.transid);
	}
	tree_fixture_assert_ok(f, "the first change after a commit");

	/* The same change again is in place: the path is this transaction's now. */
	assert_non_null(btree_lookup_for_write(&f->tree, &f->txn, &key));
	assert_int_equal(f->txn.stats.blocks_cowed, cowed + height);
	tree_fixture_free(f);
}

/* --- searching near an earlier answer ---------------------------------------- */

static void assert_same_path(const struct btree_path *a, const struct btree_path *b)
{
	assert_int_equal(a->levels, b->levels);
	for (unsigned l = 0; l < a->levels; l++) {
		assert_ptr_equal(a->nodes[l], b->nodes[l]);
		assert_int_equal(a->slots[l], b->slots[l]);
	}
}

/* Keys present, absent, before the first and after the last, each looked up
 * near the answer for a random other key or one a few keys on: same answer,
 * same path. */
static void test_btree_lookup_near_gives_the_answer_and_path_of_a_lookup_from_the_root(void **state)
{
	struct tree_fixture *f = tall_tree();
	struct rng r;
	rng_seed(&r, SEED);
	for (unsigned i = 0; i < 20000; i++) {
		struct btree_key from = fixture_key(rng_below(&r, 100), rng_below(&r, 70));
		struct btree_key key = fixture_key(rng_below(&r, 100), rng_below(&r, 70));
		if (i % 3 == 0) /* often a neighbour, as the namespace asks */
			key = fixture_key(from.objectid + rng_below(&r, 3), rng_below(&r, 70));
		else if (i % 3 == 1) /* or a few keys on, as a grep's reads ask */
			key = fixture_key(from.objectid, from.offset + 1 + rng_below(&r, 6));
		struct btree_path near, plain;
		btree_lookup(&f->tree, &from, &near);
		bool found_near = btree_lookup_near(&f->tree, &key, &near);
		bool found = btree_lookup(&f->tree, &key, &plain);
		if (found != found_near)
			fail_msg("seed %#llx, step %u: key (%llu, %llu)", (unsigned long long)SEED, i,
				 (unsigned long long)key.objectid, (unsigned long long)key.offset);
		assert_same_path(&near, &plain);
	}
	struct btree_path none = { .levels = 0 }, plain;
	struct btree_key key = fixture_key(7, 7);
	assert_true(btree_lookup_near(&f->tree, &key, &none));
	btree_lookup(&f->tree, &key, &plain);
	assert_same_path(&none, &plain);
	tree_fixture_free(f);
}

/* Lookups in key order, each near the last one's path, as a grep's reads
 * of one directory's inodes make them: every present key and absent ones
 * between and past them, in steps of one to seven. The steps cross from a
 * leaf into the next one (next_leaf_holds()) and across parents; each path
 * is the root's. */
static void test_btree_lookups_in_key_order_cross_into_the_next_leaf_as_a_descent_does(void **state)
{
	struct tree_fixture *f = tall_tree();
	const unsigned steps[] = { 1, 2, 3, 4, 7 };
	unsigned crossings = 0;
	for (unsigned s = 0; s < G_N_ELEMENTS(steps); s++) {
		struct btree_path near = { .levels = 0 };
		for (uint64_t i = 0; i < 96 * 70; i += steps[s]) {
			struct btree_key key = fixture_key(i / 70, i % 70); /* offsets 64-69 and objectid 95 absent */
			const struct tree_block *leaf_before = near.levels ? near.nodes[0] : NULL;
			struct btree_path plain;
			bool found_near = btree_lookup_near(&f->tree, &key, &near);
			bool found = btree_lookup(&f->tree, &key, &plain);
			if (found != found_near)
				fail_msg("step %u: key (%llu, %llu)", steps[s], (unsigned long long)key.objectid,
					 (unsigned long long)key.offset);
			assert_same_path(&near, &plain);
			crossings += leaf_before && near.nodes[0] != leaf_before;
		}
	}
	assert_true(crossings > 500); /* 200 leaves, five passes */
	tree_fixture_free(f);
}

/* btree_lookup_kept() from *kept finds what a lookup from the root finds,
 * answer and path. */
static unsigned inline_hops; /* lookups btree_lookup_kept_hop() answered */

static void assert_kept_lookup_is_the_roots(struct tree_fixture *f, const struct btree_key *key,
					    struct btree_path *kept)
{
	struct btree_path plain;
	/* The inline hop answers only with the root's item, and leaves a path
	 * it does not answer from as it was. */
	struct btree_path before = *kept;
	const struct btree_item *hop = btree_lookup_kept_hop(&f->tree, key, kept);
	if (hop) {
		inline_hops++;
		assert_true(btree_lookup(&f->tree, key, &plain));
		assert_ptr_equal(hop, btree_path_item(&plain));
		assert_same_path(kept, &plain);
	} else {
		assert_memory_equal(&before, kept, sizeof(before));
	}
	bool found_kept = btree_lookup_kept(&f->tree, key, kept);
	assert_int_equal(found_kept, btree_lookup(&f->tree, key, &plain));
	assert_same_path(kept, &plain);
}

/* btree_lookup_kept() from a path kept across changes: the path of a lookup
 * whose blocks a later change copied, or a split moved, is not used; the
 * answer and the path are the root's each time. */
static void test_btree_lookup_kept_gives_the_root_answer_after_changes_to_the_tree(void **state)
{
	struct tree_fixture *f = tall_tree();
	struct rng r;
	rng_seed(&r, SEED + 7);
	struct btree_path kept = { .levels = 0 };
	for (unsigned i = 0; i < 3000; i++) {
		struct btree_key key = fixture_key(1 + rng_below(&r, 95), rng_below(&r, 70));
		if (i % 4 == 0) /* a change: a new item, or a copy of the path after a commit */
			insert(f, 200 + i, 0, 100);
		if (i % 97 == 0)
			tree_fixture_commit(f);
		if (i % 5 == 1) {
			struct btree_key other = fixture_key(1 + rng_below(&r, 93), rng_below(&r, 64));
			assert_non_null(btree_lookup_for_write(&f->tree, &f->txn, &other));
		}
		assert_kept_lookup_is_the_roots(f, &key, &kept);
	}
	tree_fixture_free(f);
}

/* A kept path's hop (btree_lookup_kept): lookups in key order whose stride
 * changes (1 to 7 items, absent keys between them), with items inserted,
 * copies after commits and lookups of other paths for write among them,
 * each give the root's answer and path. A run of one stride leaves the hop
 * at it (so the hop is taken); the next stride's first lookup finds another
 * key at the hop and must not take it. */
static void test_btree_lookup_kept_hops_only_to_the_key(void **state)
{
	struct tree_fixture *f = tall_tree();
	struct rng r;
	rng_seed(&r, SEED + 17);
	static const unsigned strides[] = { 3, 1, 2, 3, 4, 7, 3, 2 };
	struct btree_path kept = { .levels = 0 };
	unsigned hops_held = 0, lookups = 0;
	inline_hops = 0;
	for (unsigned pass = 0; pass < 3; pass++) {
		uint64_t v = rng_below(&r, 64);
		for (unsigned run = 0; v < 5900; run++) {
			unsigned stride = strides[run % G_N_ELEMENTS(strides)];
			for (unsigned i = 0; i < 30 && v < 5900; i++, v += stride, lookups++) {
				bool absent = i % 11 == 10; /* past the last offset in use: not there */
				struct btree_key key = fixture_key(1 + v / 64, absent ? 64 + v % 64 : v % 64);
				if (lookups % 37 == 36) /* an item before the path's slot: the leaf's slots move */
					insert(f, 1 + v / 64, 100 + lookups, 25);
				if (lookups % 101 == 100)
					tree_fixture_commit(f);
				if (lookups % 53 == 52) {
					struct btree_key other = fixture_key(1 + rng_below(&r, 93), rng_below(&r, 64));
					assert_non_null(btree_lookup_for_write(&f->tree, &f->txn, &other));
				}
				assert_kept_lookup_is_the_roots(f, &key, &kept);
				hops_held += i >= 3 && stride < 5 && kept.hop == stride;
			}
		}
	}
	assert_true(hops_held > lookups / 3); /* the hop followed the strides it can name */
	assert_true(inline_hops > lookups / 3);  /* and btree_lookup_kept_hop() took it */
	tree_fixture_free(f);
}

/* BT18: paths that btree_lookup_kept() stamped stay linked while their
 * stamp is the tree's links, through every change that moves pointers:
 * leaf and node splits and new roots (inserts), pushes, merges and pruned
 * leaves (deletes), copies of paths after commits, the root collapsing
 * (every item deleted). Eight kept paths, each looked up again after every
 * change: the check passes, and the answer and path are the root's. */
static void test_btree_kept_paths_stay_linked_while_their_stamp_is_the_trees(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	struct rng r;
	rng_seed(&r, SEED + 11);
	enum { ITEMS = 12000 }; /* three levels: nodes push to and merge with their siblings */
	g_autofree uint64_t *order = shuffled(ITEMS, SEED + 12);
	g_autofree uint64_t *deletes = shuffled(ITEMS, SEED + 13);
	struct btree_path kept[8];
	memset(kept, 0, sizeof(kept)); /* links 0: never stamped */
	unsigned trusted = 0;
	unsigned tallest = 0;
	for (unsigned step = 0; step < 2 * ITEMS; step++) {
		uint64_t v = step < ITEMS ? order[step] : deletes[step - ITEMS];
		struct btree_key key = fixture_key(1 + v / 64, v % 64);
		if (step < ITEMS)
			insert(f, key.objectid, key.offset, 100);
		else
			assert_true(btree_delete_item(&f->tree, &f->txn, &key));
		if (step % 250 == 249)
			tree_fixture_commit(f);
		tallest = MAX(tallest, f->tree.root->level + 1u);
		for (unsigned k = 0; k < G_N_ELEMENTS(kept); k++) {
			GError *error = NULL;
			if (!btree_kept_path_check(&f->tree, &kept[k], &error))
				fail_msg("step %u, kept path %u: %s (seed %#x)", step, k, error->message, (unsigned)SEED + 11);
			trusted += kept[k].levels && kept[k].links == f->tree.links;
			struct btree_key probe = fixture_key(1 + rng_below(&r, ITEMS / 64 + 1), rng_below(&r, 64));
			assert_kept_lookup_is_the_roots(f, &probe, &kept[k]);
		}
	}
	assert_true(trusted > 10000); /* stamps were taken as they stood, not only checked again */
	assert_int_equal(tallest, 3);
	assert_int_equal(stats_of(&f->tree).height, 1);
	tree_fixture_free(f);
}

struct visit_log {
	GArray *keys;
	unsigned stop_after;
};

static bool log_key(const struct btree_item *item, void *opaque)
{
	struct visit_log *log = opaque;
	g_array_append_val(log->keys, *btree_item_key(item));
	return log->keys->len != log->stop_after;
}

static void test_btree_visit_range_near_visits_what_visit_range_visits_across_leaves(void **state)
{
	struct tree_fixture *f = tall_tree();
	struct rng r;
	rng_seed(&r, SEED + 1);
	for (unsigned i = 0; i < 2000; i++) {
		struct btree_key first = fixture_key(rng_below(&r, 100), rng_below(&r, 70));
		struct btree_key last = fixture_key(first.objectid + rng_below(&r, 4), rng_below(&r, 70));
		unsigned stop = (unsigned)rng_below(&r, 300);
		g_autoptr(GArray) a = g_array_new(FALSE, FALSE, sizeof(struct btree_key));
		g_autoptr(GArray) b = g_array_new(FALSE, FALSE, sizeof(struct btree_key));
		struct visit_log la = { a, stop }, lb = { b, stop };
		struct btree_path near;
		struct btree_key from = fixture_key(rng_below(&r, 100), 0);
		btree_lookup(&f->tree, &from, &near);
		uint64_t visited_near = btree_visit_range_near(&f->tree, &first, &last, log_key, &la, &near);
		uint64_t visited = btree_visit_range(&f->tree, &first, &last, log_key, &lb);
		assert_int_equal(visited_near, visited);
		assert_int_equal(a->len, b->len);
		assert_memory_equal(a->data, b->data, a->len * sizeof(struct btree_key));
	}
	tree_fixture_free(f);
}

/* A lookup then btree_path_for_write copies what btree_lookup_for_write
 * would: the whole path once after a commit, nothing the second time. */
static void test_btree_path_for_write_copies_the_path_a_lookup_found_once_per_transaction(void **state)
{
	struct tree_fixture *f = tall_tree();
	tree_fixture_commit(f);
	struct btree_key key = fixture_key(33, 9);
	uint8_t height = stats_of(&f->tree).height;
	uint64_t cowed = f->txn.stats.blocks_cowed;
	struct btree_path path;
	assert_true(btree_lookup(&f->tree, &key, &path));
	struct btree_item *item = btree_path_for_write(&f->tree, &f->txn, &path);
	assert_int_equal(btree_key_compare(btree_item_key(item), &key), 0);
	btree_item_inode_for_write(item)->size = 77;
	assert_int_equal(f->txn.stats.blocks_cowed, cowed + height);
	tree_fixture_assert_ok(f, "a path made writable after a lookup");
	struct btree_path again;
	assert_true(btree_lookup(&f->tree, &key, &again));
	assert_same_path(&again, &path);
	assert_int_equal(btree_item_inode(btree_path_item(&again))->size, 77);
	btree_path_for_write(&f->tree, &f->txn, &again);
	assert_int_equal(f->txn.stats.blocks_cowed, cowed + height);
	tree_fixture_free(f);
}

static bool all_blocks_hold_what_they_use(const struct tree_block *block)
{
	if (block->capacity > MAX(block->nritems, 1u))
		return false;
	if (block->level)
		for (uint32_t i = 0; i < block->nritems; i++)
			if (!all_blocks_hold_what_they_use(block->children[i].block))
				return false;
	return true;
}

/* Growth slack is for the running transaction only: a committed block is
 * copied before it changes again. */
static void test_btree_commit_gives_back_the_slots_kept_for_growth(void **state)
{
	struct tree_fixture *f = tall_tree();
	assert_false(all_blocks_hold_what_they_use(f->tree.root));
	tree_fixture_commit(f);
	assert_true(all_blocks_hold_what_they_use(f->tree.root));
	insert(f, 20, 1000, 100);
	tree_fixture_assert_ok(f, "an insert after the slack went back");
	tree_fixture_free(f);
}

/* --- simulator memory: item arrays shared with copies (btree.h, BT6-BT7) ----- */

static struct btree_key inode_key(uint64_t inode)
{
	return BTRFS_KEY(inode, BTRFS_INODE_ITEM_KEY, 0);
}

/* 2000 inode items, atime = 1000 + inode, committed: about 95 leaves of 4 KiB. */
static struct tree_fixture *inode_tree_of(uint32_t nodesize)
{
	struct tree_fixture *f = tree_fixture_new(nodesize);
	for (uint64_t i = 1; i <= 2000; i++) {
		struct btree_key key = inode_key(i);
		union item_payload payload = { .inode = { .atime = 1000 + (int64_t)i } };
		assert_non_null(btree_insert_item(&f->tree, &f->txn, &key, BTRFS_INODE_ITEM_SIZE, &payload));
	}
	tree_fixture_commit(f);
	return f;
}

static struct tree_fixture *inode_tree(void)
{
	return inode_tree_of(4096);
}

static int64_t atime_of(const struct btree *tree, uint64_t inode)
{
	struct btree_key key = inode_key(inode);
	struct btree_path path;
	assert_true(btree_lookup(tree, &key, &path));
	return btree_path_inode_atime(&path);
}

static void write_atime(struct tree_fixture *f, uint64_t inode, int64_t atime)
{
	struct btree_key key = inode_key(inode);
	struct btree_path path;
	assert_true(btree_lookup(&f->tree, &key, &path));
	btree_path_write_inode_atime(&f->tree, &f->txn, &path, atime);
}

static struct tree_block *leaf_of(const struct btree *tree, uint64_t inode)
{
	struct btree_key key = inode_key(inode);
	struct btree_path path;
	assert_true(btree_lookup(tree, &key, &path));
	return path.nodes[0];
}

static void test_btree_atime_write_to_a_snapshotted_leaf_copies_the_block_but_shares_its_items(void **state)
{
	struct tree_fixture *f = inode_tree();
	struct btree *snapshot = tree_fixture_clone_root(f, 256);
	tree_fixture_commit(f);
	struct tree_block *shared = leaf_of(&f->tree, 500);
	uint64_t cowed = f->txn.stats.blocks_cowed;

	write_atime(f, 500, 7);
	struct tree_block *copy = leaf_of(&f->tree, 500);
	assert_ptr_not_equal(copy, shared);
	assert_true(f->txn.stats.blocks_cowed > cowed);
	assert_ptr_equal(copy->items, shared->items);
	assert_int_equal(atime_of(&f->tree, 500), 7);
	assert_int_equal(atime_of(&f->tree, 501), 1501);
	assert_int_equal(atime_of(snapshot, 500), 1500);
	tree_fixture_assert_ok(f, "an atime write to a shared leaf");
	tree_fixture_free(f);
}

/* BT14: a marked overlay of a leaf of at most 64 items is in the block; a
 * second distinct atime (the shared form) or a bigger leaf's is apart. */
static void overlay_place(uint32_t nodesize, bool small)
{
	struct tree_fixture *f = inode_tree_of(nodesize);
	struct btree *snapshot = tree_fixture_clone_root(f, 256);
	tree_fixture_commit(f);
	write_atime(f, 500, 7);
	struct tree_block *copy = leaf_of(&f->tree, 500);
	assert_int_equal(copy->nritems <= 64, small);
	assert_true(btree_leaf_has_overlay(copy));
	assert_int_equal(!!(copy->flags & TREE_BLOCK_OVERLAY_HERE), small);
	write_atime(f, 501, 7);
	assert_int_equal(!!(copy->flags & TREE_BLOCK_OVERLAY_HERE), small);
	write_atime(f, 502, 8);
	assert_false(copy->flags & TREE_BLOCK_OVERLAY_HERE);
	assert_true(btree_leaf_has_overlay(copy));
	assert_int_equal(atime_of(&f->tree, 500), 7);
	assert_int_equal(atime_of(&f->tree, 501), 7);
	assert_int_equal(atime_of(&f->tree, 502), 8);
	assert_int_equal(atime_of(&f->tree, 503), 1503);
	assert_int_equal(atime_of(snapshot, 500), 1500);
	tree_fixture_assert_ok(f, "a marked overlay, then a shared one");
	tree_fixture_commit(f);
	tree_fixture_assert_ok(f, "a commit after the overlays");
	tree_fixture_free(f);
}

static void test_btree_marked_overlay_of_a_small_leaf_is_in_the_block(void **state)
{
	overlay_place(4096, true);
}

static void test_btree_marked_overlay_of_a_leaf_of_hundreds_of_items_is_apart(void **state)
{
	overlay_place(65536, false);
}

static void test_btree_other_change_to_a_leaf_with_overlay_gives_it_own_items_with_the_atimes(void **state)
{
	struct tree_fixture *f = inode_tree();
	struct btree *snapshot = tree_fixture_clone_root(f, 256);
	tree_fixture_commit(f);
	write_atime(f, 500, 7);
	struct btree_key key = inode_key(501);
	struct btree_item *item = btree_lookup_for_write(&f->tree, &f->txn, &key);
	btree_item_inode_for_write(item)->mtime = 99;

	struct tree_block *leaf = leaf_of(&f->tree, 500);
	assert_ptr_not_equal(leaf->items, leaf_of(snapshot, 500)->items);
	assert_false(btree_leaf_has_overlay(leaf));
	struct btree_path path;
	key = inode_key(500);
	assert_true(btree_lookup(&f->tree, &key, &path));
	assert_int_equal(btree_item_inode(btree_path_item(&path))->atime, 7);
	assert_int_equal(atime_of(snapshot, 500), 1500);
	tree_fixture_assert_ok(f, "a change after an atime write to a shared leaf");
	tree_fixture_free(f);
}

/* Without a snapshot the COW frees the old leaf, which gives its array to
 * the copy (BT8): the atime goes straight into the copy's item, with no
 * overlay and no copy of the array, and stays there through the commit. */
static void test_btree_atime_write_without_a_snapshot_changes_the_copy_in_place(void **state)
{
	struct tree_fixture *f = inode_tree();
	struct tree_block *old = leaf_of(&f->tree, 500);
	struct btree_item *old_items = old->items;
	write_atime(f, 500, 7);
	assert_ptr_not_equal(leaf_of(&f->tree, 500), old);
	assert_ptr_equal(leaf_of(&f->tree, 500)->items, old_items);
	assert_false(btree_leaf_has_overlay(leaf_of(&f->tree, 500)));
	assert_null(old->items);
	tree_fixture_assert_ok(f, "an atime write that freed the old leaf");
	tree_fixture_commit(f);
	struct tree_block *leaf = leaf_of(&f->tree, 500);
	assert_false(btree_leaf_has_overlay(leaf));
	struct btree_key key = inode_key(500);
	struct btree_path path;
	assert_true(btree_lookup(&f->tree, &key, &path));
	assert_int_equal(btree_item_inode(btree_path_item(&path))->atime, 7);
	tree_fixture_assert_ok(f, "a commit after an atime write");
	tree_fixture_free(f);
}

/* The atimes that rounds of writes leave: the same for all, two values,
 * one per inode, the same again (the overlay's shared form, its growth and
 * its plain form, BT7). */
static int64_t round_atime(unsigned round, uint64_t inode)
{
	static const int64_t same[] = { 5000, 0, 0, 8000 };
	if (round == 1)
		return inode % 2 ? 6000 : 7000;
	if (round == 2)
		return 10000 + (int64_t)inode;
	return same[round];
}

static void overlay_rounds(uint32_t nodesize)
{
	/* Every inode's atime 1000 first: the overlay starts in its shared form. */
	struct tree_fixture *f = inode_tree_of(nodesize);
	for (uint64_t k = 1; k <= 2000; k++) {
		struct btree_key key = inode_key(k);
		btree_item_inode_for_write(btree_lookup_for_write(&f->tree, &f->txn, &key))->atime = 1000;
	}
	tree_fixture_commit(f);
	struct btree *snapshot = tree_fixture_clone_root(f, 256);
	tree_fixture_commit(f);
	const struct tree_block *shared = leaf_of(snapshot, 500);
	uint64_t first = btree_item_key(btree_leaf_item(shared, 0))->objectid;
	uint64_t last = btree_item_key(btree_leaf_item(shared, shared->nritems - 1))->objectid;
	int64_t expected[2001];
	for (uint64_t k = first; k <= last; k++)
		expected[k] = 1000;
	struct btree *second = NULL;
	for (unsigned round = 0; round < 4; round++) {
		for (uint64_t k = first; k <= last; k++) {
			expected[k] = round_atime(round, k);
			write_atime(f, k, expected[k]);
			for (uint64_t j = first; j <= last; j++) {
				assert_int_equal(atime_of(&f->tree, j), expected[j]);
				assert_int_equal(atime_of(snapshot, j), 1000);
			}
		}
		assert_true(btree_leaf_has_overlay(leaf_of(&f->tree, 500)));
		if (round == 1) {
			/* An atime only one inode has is rewritten in place. */
			write_atime(f, first, 12345);
			write_atime(f, first, 12346);
			assert_int_equal(atime_of(&f->tree, first), 12346);
			write_atime(f, first, round_atime(1, first));
			for (uint64_t j = first; j <= last; j++)
				assert_int_equal(atime_of(&f->tree, j), expected[j]);
			/* A second snapshot's leaf copies the overlay at the next write. */
			second = tree_fixture_clone_root(f, 257);
			tree_fixture_commit(f);
		}
		if (second) {
			for (uint64_t j = first; j <= last; j++)
				assert_int_equal(atime_of(second, j), round_atime(1, j));
		}
	}
	tree_fixture_assert_ok(f, "rounds of atime writes to a shared leaf");
	tree_fixture_free(f);
}

/* The inline read of an access, btree_path_inode_atime_at_once(): at the
 * inode item of its path, in a leaf with no overlay or a marked one, it
 * answers what btree_path_inode_atime() answers; an overlay of another form,
 * or an item not the path's, it leaves to btree_path_inode_atime(). */
static void assert_inline_atime_read(const struct btree *tree, bool answers)
{
	const struct tree_block *leaf = leaf_of(tree, 500);
	for (uint32_t slot = 0; slot < leaf->nritems; slot++) {
		struct btree_path path;
		assert_true(btree_lookup(tree, btree_item_key(btree_leaf_item(leaf, slot)), &path));
		int64_t at = -1;
		assert_int_equal(btree_path_inode_atime_at_once(&path, btree_path_item(&path), &at), answers);
		if (answers)
			assert_int_equal(at, btree_path_inode_atime(&path));
		uint32_t other = slot ? slot - 1 : slot + 1;
		assert_false(btree_path_inode_atime_at_once(&path, btree_leaf_item(leaf, other), &at));
	}
}

static void test_btree_inline_atime_read_answers_without_an_overlay_or_with_a_marked_one(void **state)
{
	struct tree_fixture *f = inode_tree();
	struct btree *snapshot = tree_fixture_clone_root(f, 256);
	tree_fixture_commit(f);
	assert_inline_atime_read(&f->tree, true); /* no overlay */
	write_atime(f, 500, 7);
	assert_true(btree_leaf_has_overlay(leaf_of(&f->tree, 500)));
	assert_inline_atime_read(&f->tree, true); /* marked: 500 at 7, the rest their items' */
	assert_int_equal(atime_of(&f->tree, 500), 7);
	write_atime(f, 501, 8);
	assert_inline_atime_read(&f->tree, false); /* shared: two atimes written */
	assert_int_equal(atime_of(&f->tree, 501), 8);
	assert_inline_atime_read(snapshot, true);  /* the snapshot's leaf has none */
	tree_fixture_free(f);
}

static void test_btree_overlay_keeps_every_atime_of_its_leaf_whatever_their_values(void **state)
{
	overlay_rounds(4096);
}

/* 64 KiB leaves of 353 inode items: slots of two bytes, and more inodes than
 * the shared form's 255 values. */
static void test_btree_overlay_of_a_leaf_of_hundreds_of_inodes_keeps_every_atime(void **state)
{
	overlay_rounds(65536);
}

/* --- inserts near an earlier answer ----------------------------------------- */

/*
 * btree_insert_item_near() leaves the tree btree_insert_item() leaves, from
 * a path near the key or far from it, whether the insert only copies the
 * path (the fast path) or splits and pushes (the search): two fixtures make
 * the same inserts, one each way, across commits and a snapshot (so paths
 * are copied), and stay the same block for block, extent tree included.
 * The path it leaves is the one a lookup of the new key finds. A fifth
 * start from the lookup of the absent key itself, which leaves the slot
 * between its neighbours (the insert takes it without a lookup).
 */
static void test_btree_insert_near_leaves_the_tree_an_insert_from_the_root_leaves(void **state)
{
	struct tree_fixture *plain = tree_fixture_new(4096), *near = tree_fixture_new(4096);
	g_autofree uint64_t *order = shuffled(5000, SEED + 7);
	struct rng r;
	rng_seed(&r, SEED + 8);
	uint64_t splits = 0;
	for (uint64_t i = 0; i < 5000; i++) {
		struct btree_key key = fixture_key(1 + order[i] / 64, order[i] % 64);
		uint32_t size = (uint32_t)rng_below(&r, i < 1000 ? 400 : 120);
		union item_payload payload = { .value = order[i] };
		btree_insert_item(&plain->tree, &plain->txn, &key, size, &payload);
		struct btree_path path = { .levels = 0 };
		if (i % 5 == 4) { /* from the lookup of the absent key itself: its neighbours either side */
			btree_lookup(&near->tree, &key, &path);
		} else if (i % 5) { /* most from a lookup near the key, some from far away */
			uint64_t from = i % 5 == 1 ? rng_below(&r, 80) : key.objectid + rng_below(&r, 2);
			struct btree_key from_key = fixture_key(from, rng_below(&r, 64));
			btree_lookup(&near->tree, &from_key, &path);
		}
		uint64_t leaves = stats_of(&near->tree).leaves;
		struct btree_item *item = btree_insert_item_near(&near->tree, &near->txn, &key, size, &payload, &path);
		assert_int_equal(btree_key_compare(btree_item_key(item), &key), 0);
		splits += stats_of(&near->tree).leaves != leaves;
		struct btree_path again;
		assert_true(btree_lookup(&near->tree, &key, &again));
		assert_same_path(&path, &again);
		fixture_assert_same_blocks(plain->tree.root, near->tree.root, true);
		if (i % 211 == 210) {
			tree_fixture_commit(plain);
			tree_fixture_commit(near);
			fixture_assert_same_blocks(plain->extent_tree.root, near->extent_tree.root, true);
		}
		if (i == 2500) { /* at a commit boundary, as fs_snapshot() */
			tree_fixture_commit(plain);
			tree_fixture_commit(near);
			tree_fixture_clone_root(plain, 300);
			tree_fixture_clone_root(near, 300);
		}
		if (i % 500 == 0) {
			tree_fixture_assert_ok(plain, "an insert from the root");
			tree_fixture_assert_ok(near, "an insert near an earlier answer");
		}
	}
	tree_fixture_commit(plain);
	tree_fixture_commit(near);
	fixture_assert_same_blocks(plain->tree.root, near->tree.root, true);
	fixture_assert_same_blocks(plain->extent_tree.root, near->extent_tree.root, true);
	tree_fixture_assert_ok(near, "inserts near earlier answers");
	assert_true(splits > 100 && splits < 2500); /* both ways, many times */
	tree_fixture_free(plain);
	tree_fixture_free(near);
}

/* Both fixtures commit; their extent trees are the same block for block and
 * both pass their checks. */
static void commit_both_and_compare(struct tree_fixture *plain, struct tree_fixture *along)
{
	tree_fixture_commit(plain);
	tree_fixture_commit(along);
	fixture_assert_same_blocks(plain->extent_tree.root, along->extent_tree.root, true);
	tree_fixture_assert_ok(plain, "changes from the root");
	tree_fixture_assert_ok(along, "changes along a cursor");
}

/*
 * The extent tree's records along one cursor (refs.c write_extent_items):
 * keys mostly ascending, as heads run in address order, with jumps back as
 * after a wrap; each record an insert, a grow or shrink, a rewrite in place
 * or a delete. One fixture writes them along a cursor (btree_lookup_ahead,
 * btree_insert_item_near, btree_resize_item_at, btree_path_for_write; a
 * delete leaves levels 0), the other from the root (btree_lookup,
 * btree_insert_item, btree_resize_item, btree_lookup_for_write,
 * btree_delete_item). They stay the same block for block, and after every
 * record but a delete the cursor is the path a lookup of its key finds.
 */
static void test_btree_records_along_a_cursor_leave_the_tree_records_from_the_root_leave(void **state)
{
	struct tree_fixture *plain = tree_fixture_new(4096), *along = tree_fixture_new(4096);
	struct rng r;
	rng_seed(&r, SEED + 9);
	enum { KEYS = 4000 };
	g_autofree uint32_t *sizes = g_new0(uint32_t, KEYS); /* 0: absent */
	unsigned kinds[5] = { 0 };
	for (unsigned batch = 0; batch < 400; batch++) {
		struct btree_path cursor = { .levels = 0 };
		uint64_t k = rng_below(&r, KEYS);
		for (unsigned n = 0; n < 64; n++) {
			k = rng_below(&r, 16) ? k + 1 + rng_below(&r, 4) : rng_below(&r, KEYS);
			if (k >= KEYS)
				break;
			struct btree_key key = fixture_key(1 + k / 64, k % 64);
			union item_payload payload = { .inode = { .size = batch * 64u + n } };
			unsigned kind = sizes[k] ? 1 + (unsigned)rng_below(&r, 4) : 0;
			kinds[kind]++;
			if (kind == 0) {
				sizes[k] = 1 + (uint32_t)rng_below(&r, 200);
				btree_insert_item(&plain->tree, &plain->txn, &key, sizes[k], &payload);
				btree_insert_item_near(&along->tree, &along->txn, &key, sizes[k], &payload, &cursor);
			} else if (kind == 1) {
				assert_true(btree_delete_item(&plain->tree, &plain->txn, &key));
				assert_true(btree_delete_item_near(&along->tree, &along->txn, &key, &cursor));
				sizes[k] = 0;
			} else if (kind == 2 || kind == 3) {
				sizes[k] = kind == 2 ? sizes[k] + 1 + (uint32_t)rng_below(&r, 300) : 1 + sizes[k] / 2;
				sizes[k] = MIN(sizes[k], 1000u);
				assert_non_null(btree_resize_item(&plain->tree, &plain->txn, &key, sizes[k]));
				assert_true(btree_lookup_ahead(&along->tree, &key, &cursor));
				assert_non_null(btree_resize_item_at(&along->tree, &along->txn, &key, sizes[k], &cursor));
			} else {
				btree_item_inode_for_write(btree_lookup_for_write(&plain->tree, &plain->txn, &key))->size =
					payload.inode.size;
				assert_true(btree_lookup_ahead(&along->tree, &key, &cursor));
				btree_item_inode_for_write(btree_path_for_write(&along->tree, &along->txn, &cursor))->size =
					payload.inode.size;
			}
			if (cursor.levels) {
				struct btree_path again;
				assert_int_equal(btree_lookup(&along->tree, &key, &again), kind != 1);
				assert_same_path(&cursor, &again);
			}
			fixture_assert_same_blocks(plain->tree.root, along->tree.root, true);
		}
		if (batch % 23 == 22)
			commit_both_and_compare(plain, along);
	}
	for (unsigned kind = 0; kind < 5; kind++)
		assert_true(kinds[kind] > 500);
	tree_fixture_free(plain);
	tree_fixture_free(along);
}

/* The same `keys` items of 20 bytes in two trees, committed: three levels
 * at 24 000 in 4 KiB blocks. */
static void insert_twins_and_commit(struct tree_fixture *plain, struct tree_fixture *along, uint64_t keys)
{
	for (uint64_t k = 0; k < keys; k++) {
		struct btree_key key = fixture_key(1 + k / 64, k % 64);
		union item_payload payload = { .inode = { .size = k } };
		btree_insert_item(&plain->tree, &plain->txn, &key, 20, &payload);
		btree_insert_item(&along->tree, &along->txn, &key, 20, &payload);
	}
	tree_fixture_commit(plain);
	tree_fixture_commit(along);
}

/* Deletes along a cursor (btree_delete_item_near) against deletes from the
 * root, down to a few items: the leaves empty, the nodes thin out and merge
 * (balance_node), the root loses its levels. Both stay the same block for
 * block. */
static void test_btree_deletes_along_a_cursor_leave_the_tree_deletes_from_the_root_leave(void **state)
{
	struct tree_fixture *plain = tree_fixture_new(4096), *along = tree_fixture_new(4096);
	enum { KEYS = 24000 };
	insert_twins_and_commit(plain, along, KEYS);
	assert_int_equal(along->tree.root->level, 2);
	struct rng r;
	rng_seed(&r, SEED + 13);
	g_autofree bool *gone = g_new0(bool, KEYS);
	unsigned left = KEYS;
	for (unsigned batch = 0; left > 16; batch++) {
		/* Runs in address order from a random start, as a batch of heads. */
		struct btree_path cursor = { .levels = 0 };
		for (uint64_t k = rng_below(&r, KEYS), n = 0; k < KEYS && n < 64 && left > 16; k++) {
			if (gone[k] || rng_below(&r, 4) == 0)
				continue;
			struct btree_key key = fixture_key(1 + k / 64, k % 64);
			assert_true(btree_delete_item(&plain->tree, &plain->txn, &key));
			assert_true(btree_delete_item_near(&along->tree, &along->txn, &key, &cursor));
			if (cursor.levels) {
				struct btree_path again;
				assert_false(btree_lookup(&along->tree, &key, &again));
				assert_same_path(&cursor, &again);
			}
			gone[k] = true;
			left--;
			n++;
		}
		fixture_assert_same_blocks(plain->tree.root, along->tree.root, true);
		if (batch % 50 == 49)
			commit_both_and_compare(plain, along);
	}
	assert_int_equal(along->tree.root->level, 0);
	tree_fixture_assert_ok(plain, "deletes from the root");
	tree_fixture_assert_ok(along, "deletes along a cursor");
	tree_fixture_free(plain);
	tree_fixture_free(along);
}

/* Runs of deletes along a cursor (btree_delete_items_near, refs.c's freed
 * blocks) against one delete at a time from the root: keys mostly
 * neighbours, so runs go in one move until a leaf would fall under a third
 * full; then one delete rebalances, as from the root. Both stay the same
 * block for block, and after each call the cursor is the path a lookup of
 * the last key deleted finds. */
static void test_btree_runs_of_deletes_along_a_cursor_leave_the_tree_deletes_from_the_root_leave(void **state)
{
	struct tree_fixture *plain = tree_fixture_new(4096), *along = tree_fixture_new(4096);
	enum { KEYS = 24000, BATCH = 64 };
	insert_twins_and_commit(plain, along, KEYS);
	struct rng r;
	rng_seed(&r, SEED + 14);
	g_autofree bool *gone = g_new0(bool, KEYS);
	unsigned left = KEYS, in_runs = 0, alone = 0;
	for (unsigned batch = 0; left > 16; batch++) {
		struct btree_key keys[BATCH];
		unsigned n = 0;
		for (uint64_t k = rng_below(&r, KEYS); k < KEYS && n < BATCH && left - n > 16; k++) {
			if (gone[k] || rng_below(&r, 10) == 0)
				continue;
			keys[n++] = fixture_key(1 + k / 64, k % 64);
			gone[k] = true;
		}
		for (unsigned i = 0; i < n; i++)
			assert_true(btree_delete_item(&plain->tree, &plain->txn, &keys[i]));
		struct btree_path cursor = { .levels = 0 };
		for (unsigned i = 0; i < n;) {
			uint32_t deleted = btree_delete_items_near(&along->tree, &along->txn, &keys[i], n - i, &cursor);
			assert_true(deleted >= 1 && deleted <= n - i);
			i += deleted;
			if (deleted > 1)
				in_runs += deleted;
			else
				alone++;
			if (cursor.levels) {
				struct btree_path again;
				assert_false(btree_lookup(&along->tree, &keys[i - 1], &again));
				assert_same_path(&cursor, &again);
			}
		}
		left -= n;
		fixture_assert_same_blocks(plain->tree.root, along->tree.root, true);
		if (batch % 50 == 49)
			commit_both_and_compare(plain, along);
	}
	assert_true(in_runs > KEYS / 2);
	assert_true(alone > 200);
	assert_int_equal(along->tree.root->level, 0);
	tree_fixture_assert_ok(plain, "deletes from the root");
	tree_fixture_assert_ok(along, "runs of deletes along a cursor");
	tree_fixture_free(plain);
	tree_fixture_free(along);
}

/* After a call that wrote `run` keys along the cursor, the last one `last`
 * (still in the tree): counted as a run or alone, and the cursor is the
 * path a lookup of `last` finds. */
static void check_run(struct tree_fixture *along, const struct btree_path *cursor, const struct btree_key *last,
		      unsigned run, unsigned *in_runs, unsigned *alone)
{
	if (run > 1)
		*in_runs += run;
	else
		(*alone)++;
	struct btree_path again;
	assert_true(btree_lookup(&along->tree, last, &again));
	assert_same_path(cursor, &again);
}

/* After a batch: the two trees the same block for block; every 50th, both
 * committed and compared again. */
static void compare_after_batch(struct tree_fixture *plain, struct tree_fixture *along, unsigned batch)
{
	fixture_assert_same_blocks(plain->tree.root, along->tree.root, true);
	if (batch % 50 == 49)
		commit_both_and_compare(plain, along);
}

/* A METADATA_ITEM's key: an item with no heap payload, as refs.c inserts. */
static struct btree_key value_key(uint64_t k)
{
	return BTRFS_KEY(1 + k / 64, BTRFS_METADATA_ITEM_KEY, k % 64);
}

/* Runs of inserts along a cursor (btree_insert_items_near, refs.c's new
 * blocks) against one insert at a time from the root: ascending keys into a
 * tree that holds every third key, so a run stops at an item between its
 * keys, at a leaf's end below its right neighbour's first key, or where the
 * leaf is full (then one insert splits, as from the root). Both stay the
 * same block for block, and after each call the cursor is the path a lookup
 * of the last key inserted finds. */
static void test_btree_runs_of_inserts_along_a_cursor_leave_the_tree_inserts_from_the_root_leave(void **state)
{
	struct tree_fixture *plain = tree_fixture_new(4096), *along = tree_fixture_new(4096);
	enum { KEYS = 30000, BATCH = 64 };
	g_autofree bool *present = g_new0(bool, KEYS);
	for (uint64_t k = 0; k < KEYS; k += 3) {
		struct btree_key key = value_key(k);
		btree_insert_item(&plain->tree, &plain->txn, &key, 20, NULL);
		btree_insert_item(&along->tree, &along->txn, &key, 20, NULL);
		present[k] = true;
	}
	tree_fixture_commit(plain);
	tree_fixture_commit(along);
	struct rng r;
	rng_seed(&r, SEED + 15);
	unsigned in_runs = 0, alone = 0;
	for (unsigned batch = 0; batch < 300; batch++) {
		struct btree_key keys[BATCH];
		uint32_t sizes[BATCH];
		unsigned n = 0;
		for (uint64_t k = rng_below(&r, KEYS); k < KEYS && n < BATCH; k++) {
			if (present[k] || rng_below(&r, 8) == 0)
				continue;
			keys[n] = value_key(k);
			sizes[n++] = 33 + (uint32_t)rng_below(&r, 2) * 20;
			present[k] = true;
		}
		for (unsigned i = 0; i < n; i++)
			btree_insert_item(&plain->tree, &plain->txn, &keys[i], sizes[i], NULL);
		struct btree_path cursor = { .levels = 0 };
		for (unsigned i = 0; i < n;) {
			uint32_t done = btree_insert_items_near(&along->tree, &along->txn, &keys[i], &sizes[i], n - i, &cursor);
			assert_true(done >= 1 && done <= n - i);
			i += done;
			check_run(along, &cursor, &keys[i - 1], done, &in_runs, &alone);
		}
		compare_after_batch(plain, along, batch);
	}
	assert_true(in_runs > 5000);
	assert_true(alone > 300);
	tree_fixture_assert_ok(plain, "inserts from the root");
	tree_fixture_assert_ok(along, "runs of inserts along a cursor");
	tree_fixture_free(plain);
	tree_fixture_free(along);
}

/* Runs of resizes along a cursor (btree_resize_items_after, refs.c's
 * extent items that each gain or lose references) against one resize at a
 * time from the root: ascending keys, most of them neighbours, each grown,
 * shrunk or kept; a run goes on along the leaf and stops at its end, at a
 * growth the leaf has no room for (then one resize splits, as from the
 * root) and at a growth whose search would split a node. Both stay the same
 * block for block, and after each call the cursor is the path a lookup of
 * the last key resized finds. */
static void test_btree_runs_of_resizes_along_a_cursor_leave_the_tree_resizes_from_the_root_leave(void **state)
{
	struct tree_fixture *plain = tree_fixture_new(4096), *along = tree_fixture_new(4096);
	enum { KEYS = 24000, BATCH = 64 };
	g_autofree uint32_t *sizes = g_new(uint32_t, KEYS);
	for (uint64_t k = 0; k < KEYS; k++) {
		struct btree_key key = value_key(k);
		sizes[k] = 20;
		btree_insert_item(&plain->tree, &plain->txn, &key, sizes[k], NULL);
		btree_insert_item(&along->tree, &along->txn, &key, sizes[k], NULL);
	}
	tree_fixture_commit(plain);
	tree_fixture_commit(along);
	struct rng r;
	rng_seed(&r, SEED + 16);
	unsigned in_runs = 0, alone = 0, leaves_before = (unsigned)stats_of(&along->tree).leaves;
	for (unsigned batch = 0; batch < 600; batch++) {
		struct btree_key keys[BATCH];
		uint32_t new_sizes[BATCH];
		unsigned n = 0;
		for (uint64_t k = rng_below(&r, KEYS); k < KEYS && n < BATCH; k += 1 + (rng_below(&r, 4) == 0)) {
			unsigned how = (unsigned)rng_below(&r, 8); /* mostly growth by a reference */
			sizes[k] = how < 6 ? MIN(sizes[k] + 9 + 20 * (how == 5), 400u) : how == 6 ? MAX(sizes[k] - 9, 20u) : sizes[k];
			keys[n] = value_key(k);
			new_sizes[n++] = sizes[k];
		}
		for (unsigned i = 0; i < n; i++)
			assert_non_null(btree_resize_item(&plain->tree, &plain->txn, &keys[i], new_sizes[i]));
		struct btree_path cursor = { .levels = 0 };
		for (unsigned i = 0; i < n;) {
			assert_true(btree_lookup_ahead(&along->tree, &keys[i], &cursor));
			assert_non_null(btree_resize_item_at(&along->tree, &along->txn, &keys[i], new_sizes[i], &cursor));
			i++;
			uint32_t done = btree_resize_items_after(&along->tree, &along->txn, &keys[i], &new_sizes[i], n - i,
								 &cursor);
			assert_true(done <= n - i);
			i += done;
			check_run(along, &cursor, &keys[i - 1], 1 + done, &in_runs, &alone);
		}
		compare_after_batch(plain, along, batch);
	}
	assert_true(in_runs > 30000);
	assert_true(alone > 300);
	assert_true(stats_of(&along->tree).leaves > leaves_before * 3 / 2); /* growths split leaves */
	tree_fixture_assert_ok(plain, "resizes from the root");
	tree_fixture_assert_ok(along, "runs of resizes along a cursor");
	tree_fixture_free(plain);
	tree_fixture_free(along);
}

/* --- resize ----------------------------------------------------------------- */

static void test_btree_resize_grows_an_item_and_splits_its_full_leaf(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	uint32_t capacity = leaf_capacity(4096), count = capacity / 125 - 1;
	for (uint32_t i = 0; i < count; i++)
		insert(f, 1, i, 100);
	insert(f, 1, count, capacity - count * 125 - BTRFS_ITEM_HEADER_SIZE);
	assert_int_equal(stats_of(&f->tree).leaves, 1);
	struct btree_key key = fixture_key(1, count / 2);
	struct btree_item *item = btree_resize_item(&f->tree, &f->txn, &key, 1000);
	assert_non_null(item);
	assert_int_equal(btree_item_size(item), 1000);
	tree_fixture_assert_ok(f, "growing an item of a full leaf");
	struct btree_stats stats = stats_of(&f->tree);
	assert_int_equal(stats.leaves, 2);
	assert_int_equal(stats.items, count + 1);
	struct btree_path path;
	assert_true(btree_lookup(&f->tree, &key, &path));
	assert_int_equal(btree_item_size(btree_path_item(&path)), 1000);
	assert_int_equal(btree_item_inode(btree_path_item(&path))->size, key.objectid * 1000003u + key.offset);
	tree_fixture_free(f);
}

static void test_btree_resize_shrinks_an_item_in_its_leaf(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	for (uint32_t i = 0; i < 10; i++)
		insert(f, 1, i, 300);
	uint32_t bytes = stats_of(&f->tree).leaf_bytes;
	uint64_t cowed = f->txn.stats.blocks_cowed;
	struct btree_key key = fixture_key(1, 4);
	struct btree_item *item = btree_resize_item(&f->tree, &f->txn, &key, 10);
	assert_non_null(item);
	assert_int_equal(btree_item_size(item), 10);
	assert_int_equal(stats_of(&f->tree).leaf_bytes, bytes - 290);
	assert_int_equal(f->txn.stats.blocks_cowed, cowed);
	tree_fixture_assert_ok(f, "shrinking an item");
	/* After a commit the same shrink copies the (one-block) path. */
	tree_fixture_commit(f);
	assert_non_null(btree_resize_item(&f->tree, &f->txn, &key, 0));
	assert_int_equal(f->txn.stats.blocks_cowed, cowed + 1);
	assert_int_equal(stats_of(&f->tree).leaf_bytes, bytes - 300);
	tree_fixture_assert_ok(f, "shrinking after a commit");
	tree_fixture_free(f);
}

static void test_btree_resize_of_a_missing_key_returns_null(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	insert(f, 1, 1, 10);
	struct btree_key key = fixture_key(1, 2);
	assert_null(btree_resize_item(&f->tree, &f->txn, &key, 20));
	assert_int_equal(tree_fixture_items(&f->tree), 1);
	tree_fixture_assert_ok(f, "resizing a missing key");
	tree_fixture_free(f);
}

/* --- which leaves map data extents (BT13) ----------------------------------- */

/* File `ino`: an inode item and an EXTENT_DATA item, mapping a new data
 * extent when `mapped`, inline otherwise. */
static void add_extent_file(struct tree_fixture *f, uint64_t ino, bool mapped)
{
	struct btree_key inode = BTRFS_KEY(ino, BTRFS_INODE_ITEM_KEY, 0), data = BTRFS_KEY(ino, BTRFS_EXTENT_DATA_KEY, 0);
	btree_insert_item(&f->tree, &f->txn, &inode, BTRFS_INODE_ITEM_SIZE, NULL);
	struct data_extent *extent = mapped ? refs_data_extent_new(&f->txn, (1ull << 30) + ino * 65536, 65536) : NULL;
	union item_payload payload = { .file_extent = { .extent = extent, .num_bytes = 65536 } };
	btree_insert_item(&f->tree, &f->txn, &data, mapped ? BTRFS_FILE_EXTENT_REGULAR_SIZE : 1045, &payload);
}

/* Does a leaf's own walk of its items find a mapped data extent? */
static bool leaf_walk_finds_data(const struct tree_block *leaf)
{
	for (uint32_t i = 0; i < leaf->nritems; i++) {
		const struct btree_item *item = btree_leaf_item(leaf, i);
		if (btree_item_key(item)->type == BTRFS_EXTENT_DATA_KEY && btree_item_file_extent(item)->extent)
			return true;
	}
	return false;
}

static void assert_maps_data_as_the_items_say(struct tree_fixture *f, unsigned *mapping, unsigned *not_mapping)
{
	g_autoptr(GPtrArray) leaves = g_ptr_array_new();
	collect_leaves(f->tree.root, leaves);
	for (guint i = 0; i < leaves->len; i++) {
		const struct tree_block *leaf = leaves->pdata[i];
		bool maps = leaf_walk_finds_data(leaf);
		assert_int_equal(btree_leaf_maps_data(leaf), maps);
		(*(maps ? mapping : not_mapping))++;
	}
}

/* btree_leaf_maps_data() answers what a walk of the leaf's items answers,
 * through inserts that split and push leaves, a snapshot's copies sharing
 * arrays, their first changes and deletes that empty leaves into their
 * siblings; leaves of inline files alone answer false. */
static void test_btree_a_leaf_maps_data_exactly_while_a_file_extent_holds_a_data_extent(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	unsigned mapping = 0, not_mapping = 0;
	/* Files 1-300 inline, 301-600 one in seven mapped: leaves of both kinds. */
	for (uint64_t ino = 1; ino <= 600; ino++)
		add_extent_file(f, ino, ino > 300 && ino % 7 == 0);
	tree_fixture_assert_ok(f, "inline and mapped files");
	assert_maps_data_as_the_items_say(f, &mapping, &not_mapping);
	tree_fixture_commit(f);
	tree_fixture_clone_root(f, 256);
	/* The copies share arrays, then change: every third file's extent item goes. */
	for (uint64_t ino = 3; ino <= 600; ino += 3) {
		struct btree_key data = BTRFS_KEY(ino, BTRFS_EXTENT_DATA_KEY, 0);
		struct btree_path path;
		assert_true(btree_lookup(&f->tree, &data, &path));
		struct data_extent *extent = btree_item_file_extent(btree_path_item(&path))->extent;
		assert_true(btree_delete_item(&f->tree, &f->txn, &data));
		if (extent)
			refs_data_drop(&f->txn, extent, false);
		assert_maps_data_as_the_items_say(f, &mapping, &not_mapping);
	}
	tree_fixture_commit(f);
	tree_fixture_assert_ok(f, "after the deletes");
	assert_true(mapping > 0 && not_mapping > 0);
	tree_fixture_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_btree_owner_packs_every_kind_of_tree_id_and_only_those),
		cmocka_unit_test(test_btree_insert_in_order_keeps_b1_to_b5_after_every_insert),
		cmocka_unit_test(test_btree_insert_in_reverse_order_keeps_b1_to_b5_after_every_insert),
		cmocka_unit_test(test_btree_insert_in_random_order_with_commits_keeps_b1_to_b5_after_every_insert),
		cmocka_unit_test(test_btree_leaf_holds_items_while_header_plus_items_fit_in_nodesize),
		cmocka_unit_test(test_btree_leaf_splits_when_the_next_item_does_not_fit),
		cmocka_unit_test(test_btree_largest_item_fits_alone_in_a_leaf),
		cmocka_unit_test(test_btree_node_capacity_is_nodesize_minus_header_over_33),
		cmocka_unit_test(test_btree_delete_everything_in_random_order_collapses_to_one_empty_leaf),
		cmocka_unit_test(test_btree_delete_of_a_missing_key_returns_false_and_changes_nothing),
		cmocka_unit_test(test_btree_a_node_below_the_root_keeps_one_child_while_its_siblings_are_full),
		cmocka_unit_test(test_btree_lookup_le_finds_the_predecessor_across_leaves),
		cmocka_unit_test(test_btree_lookup_le_below_the_first_key_is_null),
		cmocka_unit_test(test_btree_change_to_a_block_of_the_running_transaction_is_in_place),
		cmocka_unit_test(test_btree_change_after_a_commit_copies_the_leaf_and_its_path_to_the_root),
		cmocka_unit_test(test_btree_lookup_near_gives_the_answer_and_path_of_a_lookup_from_the_root),
		cmocka_unit_test(test_btree_lookups_in_key_order_cross_into_the_next_leaf_as_a_descent_does),
		cmocka_unit_test(test_btree_lookup_kept_gives_the_root_answer_after_changes_to_the_tree),
		cmocka_unit_test(test_btree_lookup_kept_hops_only_to_the_key),
		cmocka_unit_test(test_btree_kept_paths_stay_linked_while_their_stamp_is_the_trees),
		cmocka_unit_test(test_btree_visit_range_near_visits_what_visit_range_visits_across_leaves),
		cmocka_unit_test(test_btree_path_for_write_copies_the_path_a_lookup_found_once_per_transaction),
		cmocka_unit_test(test_btree_commit_gives_back_the_slots_kept_for_growth),
		cmocka_unit_test(test_btree_atime_write_to_a_snapshotted_leaf_copies_the_block_but_shares_its_items),
		cmocka_unit_test(test_btree_marked_overlay_of_a_small_leaf_is_in_the_block),
		cmocka_unit_test(test_btree_marked_overlay_of_a_leaf_of_hundreds_of_items_is_apart),
		cmocka_unit_test(test_btree_other_change_to_a_leaf_with_overlay_gives_it_own_items_with_the_atimes),
		cmocka_unit_test(test_btree_atime_write_without_a_snapshot_changes_the_copy_in_place),
		cmocka_unit_test(test_btree_inline_atime_read_answers_without_an_overlay_or_with_a_marked_one),
		cmocka_unit_test(test_btree_overlay_keeps_every_atime_of_its_leaf_whatever_their_values),
		cmocka_unit_test(test_btree_overlay_of_a_leaf_of_hundreds_of_inodes_keeps_every_atime),
		cmocka_unit_test(test_btree_insert_near_leaves_the_tree_an_insert_from_the_root_leaves),
		cmocka_unit_test(test_btree_records_along_a_cursor_leave_the_tree_records_from_the_root_leave),
		cmocka_unit_test(test_btree_deletes_along_a_cursor_leave_the_tree_deletes_from_the_root_leave),
		cmocka_unit_test(test_btree_runs_of_deletes_along_a_cursor_leave_the_tree_deletes_from_the_root_leave),
		cmocka_unit_test(test_btree_runs_of_inserts_along_a_cursor_leave_the_tree_inserts_from_the_root_leave),
		cmocka_unit_test(test_btree_runs_of_resizes_along_a_cursor_leave_the_tree_resizes_from_the_root_leave),
		cmocka_unit_test(test_btree_resize_grows_an_item_and_splits_its_full_leaf),
		cmocka_unit_test(test_btree_resize_shrinks_an_item_in_its_leaf),
		cmocka_unit_test(test_btree_resize_of_a_missing_key_returns_null),
		cmocka_unit_test(test_btree_a_leaf_maps_data_exactly_while_a_file_extent_holds_a_data_extent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
