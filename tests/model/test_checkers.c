/*
 * tests/model/test_checkers.c - the checkers of the derived trees
 * (model/derived_check.h), of the trees themselves (BT1-BT18), the
 * reference counts (RF1-RF11), the block store (BS1-BS3), the directory
 * tables (DC), the writeback queue (WB1), lost atimes (LA1) and the designs'
 * own (DB2, DK1, DK4-DK6) pass on a healthy filesystem and fail, with the report
 * "corrupt <type>: <id>, <reason>[, <value>]", when one invariant is broken
 * on purpose: an item deleted, a refcount bumped, a backref dropped.
 * (BS4: test_attribution.c; DB1, DB3, DK3: test_design.c.)
 *
 * Each test builds a small filesystem (files with data and inline files, a
 * snapshot, writes on both sides, a sync), sees fs_check() pass, breaks one
 * thing through the model's internals as a bug would, and sees fs_check()
 * fail with the expected checker's label.
 */
#include "model_fixture.h"

#include <errno.h>
#include <string.h>

#include "constants.h"
#include "design.h"
#include "fs_internal.h"

#define FILES 40u

static struct fs *populated(const char *design)
{
	struct fs_config config;
	fs_config_init(&config);
	config.nodesize = 4096;
	config.design = fs_design_find(design);
	assert_non_null(config.design);
	struct fs *fs = fixture_fs_new_config(&config);
	fixture_make_files(fs, FILES);
	assert_int_equal(fs_snapshot(fs, "/", "/snap", false), 0);
	for (unsigned i = 0; i < FILES; i += 4) {
		g_autofree char *path = g_strdup_printf("/snap/d/file-%03u", i);
		assert_int_equal(fs_write(fs, path, 0, 20000), 0);
		g_autofree char *top = g_strdup_printf("/d/file-%03u", i + 1);
		assert_int_equal(fs_read(fs, top, NULL), 0);
	}
	assert_int_equal(fs_sync(fs), 0);
	fixture_assert_fs_ok(fs, "building the test filesystem");
	return fs;
}

static char *expected(const char *type, uint64_t id, const char *reason)
{
	return g_strdup_printf("corrupt %s: %" G_GUINT64_FORMAT ", %s", type, id, reason);
}

struct first_extent {
	struct data_extent *extent;
};

static bool find_extent(const struct btree_item *item, void *opaque)
{
	struct first_extent *f = opaque;
	if (btree_item_key(item)->type == BTRFS_EXTENT_DATA_KEY && btree_item_file_extent(item)->extent)
		f->extent = btree_item_file_extent(item)->extent;
	return !f->extent;
}

/* A data extent the top subvolume maps. */
static struct data_extent *some_data_extent(struct fs *fs)
{
	struct first_extent f = { NULL };
	struct btree_key first = BTREE_KEY_MIN, last = BTREE_KEY_MAX;
	btree_visit_range(fs_subvolume(fs, FS_TOP_SUBVOLUME)->tree, &first, &last, find_extent, &f);
	assert_non_null(f.extent);
	return f.extent;
}

static struct btree_key metadata_key(const struct tree_block *block)
{
	return BTRFS_KEY(block->bytenr, BTRFS_METADATA_ITEM_KEY, block->level);
}

/* --- the trees themselves (btree_check, btree.h BT1-BT5) ----------------------- */

/* A tree of two levels: a root node over full 4 KiB leaves. */
static struct tree_fixture *two_level_tree(void)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	for (uint64_t i = 0; i < 400; i++) {
		struct btree_key key = fixture_key(i, 0);
		btree_insert_item(&f->tree, &f->txn, &key, 60, NULL);
	}
	tree_fixture_commit(f);
	tree_fixture_assert_ok(f, "building a two-level tree");
	assert_int_equal(f->tree.root->level, 1);
	assert_true(f->tree.root->nritems >= 3);
	return f;
}

static void assert_tree_corrupt(struct tree_fixture *f, const char *want)
{
	g_autoptr(GError) error = NULL;
	assert_false(btree_check(&f->tree, f->nodesize, &error));
	print_message("# %s\n", error->message);
	if (!strstr(error->message, want))
		fail_msg("btree_check reported \"%s\"; want \"%s\"", error->message, want);
}

static void test_btree_check_fails_when_two_keys_of_a_leaf_are_out_of_order(void **state)
{
	struct tree_fixture *f = two_level_tree();
	struct tree_block *leaf = f->tree.root->children[1].block;
	struct btree_item second = leaf->items[1];
	leaf->items[1] = leaf->items[2];
	leaf->items[2] = second;
	g_autofree char *want = g_strdup_printf("corrupt leaf: tree %" G_GUINT64_FORMAT " block %" G_GUINT64_FORMAT ", BT1 key (",
						(uint64_t)BTRFS_FS_TREE_OBJECTID, leaf->bytenr);
	assert_tree_corrupt(f, want);
	leaf->items[2] = leaf->items[1];
	leaf->items[1] = second;
	tree_fixture_free(f);
}

static void test_btree_check_fails_when_a_pointer_key_is_not_its_childs_first_key(void **state)
{
	struct tree_fixture *f = two_level_tree();
	struct btree_child *child = &f->tree.root->children[1];
	child->key.offset++; /* still between its neighbours: only BT2 breaks */
	assert_tree_corrupt(f, "BT2 key at slot 1 is not the child's first key");
	child->key.offset--;
	tree_fixture_free(f);
}

static void test_btree_check_fails_when_a_node_skips_a_level(void **state)
{
	struct tree_fixture *f = two_level_tree();
	f->tree.root->level = 2;
	assert_tree_corrupt(f, "BT3 child at level 0 under level 2");
	f->tree.root->level = 1;
	tree_fixture_free(f);
}

/* Breaks BT4 the way no btree.c function can: the one place outside the btree
 * module that writes an item's size, so it names the layout on purpose. */
static void grow_first_item_behind_btree(struct tree_block *leaf, int bytes)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	leaf->items[0].size = (uint16_t)(leaf->items[0].size + bytes);
#pragma GCC diagnostic pop
}

static void test_btree_check_fails_when_a_leaf_holds_more_than_fits(void **state)
{
	struct tree_fixture *f = two_level_tree();
	struct tree_block *leaf = f->tree.root->children[0].block;
	grow_first_item_behind_btree(leaf, 4096);
	leaf->leaf_bytes += 4096;
	g_autofree char *want = g_strdup_printf("BT4 %u bytes of items in a %u-byte leaf", leaf->leaf_bytes,
						4096 - BTRFS_HEADER_SIZE);
	assert_tree_corrupt(f, want);
	leaf->leaf_bytes -= 4096;
	grow_first_item_behind_btree(leaf, -4096);
	tree_fixture_free(f);
}

static void test_btree_check_fails_when_a_child_is_younger_than_its_parent(void **state)
{
	struct tree_fixture *f = two_level_tree();
	struct tree_block *leaf = f->tree.root->children[0].block;
	uint64_t generation = leaf->generation;
	leaf->generation = f->tree.root->generation + 1;
	assert_tree_corrupt(f, "BT5 child generation");
	leaf->generation = generation;
	tree_fixture_free(f);
}

/* A committed tree of 4 KiB blocks holding inode items 1..200, each with
 * an INODE_REF when `refs`. */
static struct tree_fixture *committed_tree_of_inodes(bool refs)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	for (uint64_t i = 1; i <= 200; i++) {
		struct btree_key inode = BTRFS_KEY(i, BTRFS_INODE_ITEM_KEY, 0);
		struct btree_key ref = BTRFS_KEY(i, BTRFS_INODE_REF_KEY, 256);
		btree_insert_item(&f->tree, &f->txn, &inode, BTRFS_INODE_ITEM_SIZE, NULL);
		if (refs)
			btree_insert_item(&f->tree, &f->txn, &ref, 20, NULL);
	}
	tree_fixture_commit(f);
	return f;
}

static void test_btree_check_fails_on_an_owner_that_is_no_tree_ids_image(void **state)
{
	struct tree_fixture *f = two_level_tree();
	struct tree_block *leaf = f->tree.root->children[0].block;
	uint32_t owner = leaf->packed_owner;
	/* Between the atime trees' range and btrfs's ids below 2^64. */
	leaf->packed_owner = BTREE_OWNER_ATIME_PACKED + (1u << 30);
	assert_false(btree_owner_is_packed(leaf->packed_owner));
	assert_tree_corrupt(f, "BT11 owner 0xc0000000 is no tree id's 32-bit image");
	leaf->packed_owner = owner;
	tree_fixture_free(f);
}

static void test_btree_check_fails_on_an_atime_marked_at_an_item_that_is_no_inode(void **state)
{
	/* An atime write to a snapshotted leaf gives the copy a marked overlay
	 * (BT7): the atime written, and a bit per item of the leaf. A write
	 * through a path at an INODE_REF marks a slot that holds no atime. */
	struct tree_fixture *f = committed_tree_of_inodes(true);
	tree_fixture_clone_root(f, 256);
	tree_fixture_commit(f);
	struct btree_key inode = BTRFS_KEY(100, BTRFS_INODE_ITEM_KEY, 0);
	struct btree_key ref = BTRFS_KEY(100, BTRFS_INODE_REF_KEY, 256);
	struct btree_path path;
	assert_true(btree_lookup(&f->tree, &inode, &path));
	btree_path_write_inode_atime(&f->tree, &f->txn, &path, 7);
	g_autoptr(GError) error = NULL;
	assert_true(btree_check(&f->tree, f->nodesize, &error));
	assert_true(btree_lookup(&f->tree, &ref, &path));
	btree_path_write_inode_atime(&f->tree, &f->txn, &path, 7);
	g_autofree char *want = g_strdup_printf("corrupt leaf: block %" G_GUINT64_FORMAT
						", BT7 a marked slot that is no inode item (slot %u)",
						path.nodes[0]->bytenr, path.slots[0]);
	assert_tree_corrupt(f, want);
	tree_fixture_free(f);
}

static void test_btree_check_fails_on_an_overlay_in_the_block_that_is_not_a_small_marked_one(void **state)
{
	/* Two distinct atimes in a snapshotted leaf: its overlay moves from the
	 * block (the marked form, BT14) to a chunk of its own (the shared
	 * form). The shared form's first 24 bytes put back in the block read
	 * as an overlay of the wrong form there. */
	struct tree_fixture *f = committed_tree_of_inodes(true);
	tree_fixture_clone_root(f, 256);
	tree_fixture_commit(f);
	struct btree_path path;
	struct btree_key inode = BTRFS_KEY(100, BTRFS_INODE_ITEM_KEY, 0);
	assert_true(btree_lookup(&f->tree, &inode, &path));
	btree_path_write_inode_atime(&f->tree, &f->txn, &path, 7);
	struct tree_block *leaf = path.nodes[0];
	assert_true(leaf->flags & TREE_BLOCK_OVERLAY_HERE);
	uint32_t other = 0;
	while (btree_item_key(btree_leaf_item(leaf, other))->type != BTRFS_INODE_ITEM_KEY ||
	       btree_item_key(btree_leaf_item(leaf, other))->objectid == 100)
		other++;
	inode = BTRFS_KEY(btree_item_key(btree_leaf_item(leaf, other))->objectid, BTRFS_INODE_ITEM_KEY, 0);
	assert_true(btree_lookup(&f->tree, &inode, &path));
	assert_ptr_equal(path.nodes[0], leaf);
	btree_path_write_inode_atime(&f->tree, &f->txn, &path, 8);
	assert_false(leaf->flags & TREE_BLOCK_OVERLAY_HERE);
	g_autoptr(GError) error = NULL;
	assert_true(btree_check(&f->tree, f->nodesize, &error));
	struct atime_overlay *apart = leaf->atimes;
	memcpy(&leaf->overlay_here, apart, sizeof(leaf->overlay_here));
	leaf->flags |= TREE_BLOCK_OVERLAY_HERE;
	g_autofree char *want = g_strdup_printf("corrupt leaf: block %" G_GUINT64_FORMAT
						", BT14 an overlay in the block that is not the marked form",
						leaf->bytenr);
	assert_tree_corrupt(f, want);
	leaf->flags &= ~TREE_BLOCK_OVERLAY_HERE;
	memset(&leaf->overlay_here, 0, sizeof(leaf->overlay_here));
	leaf->atimes = apart;
	tree_fixture_free(f);
}

static void test_item_sharing_check_fails_on_an_atime_overlay_on_a_node(void **state)
{
	struct tree_fixture *f = two_level_tree();
	g_autoptr(GHashTable) live = g_hash_table_new(NULL, NULL);
	btree_collect_blocks(f->tree.root, live);
	g_autoptr(GError) error = NULL;
	assert_true(btree_check_item_sharing(live, blockstore_unreleased_blocks(f->store), &error));
	/* Never read through: the checker only asks whether there is one. */
	f->tree.root->atimes = (struct atime_overlay *)f->tree.root;
	assert_false(btree_check_item_sharing(live, blockstore_unreleased_blocks(f->store), &error));
	g_autofree char *want = g_strdup_printf("corrupt node: block %" G_GUINT64_FORMAT ", BT7 an atime overlay on a node",
						f->tree.root->bytenr);
	assert_string_equal(error->message, want);
	f->tree.root->atimes = NULL;
	tree_fixture_free(f);
}

static void test_item_sharing_check_fails_when_a_leaf_lets_go_of_a_shared_array_uncounted(void **state)
{
	/* An atime write to a snapshotted leaf copies the block, and the copy
	 * shares the item array with the snapshot's leaf (BT6: refs 2). A
	 * leaf that drops its pointer without its reference going leaves the
	 * count above the leaves that use the array. */
	struct tree_fixture *f = committed_tree_of_inodes(false);
	struct btree *snapshot = tree_fixture_clone_root(f, 256);
	tree_fixture_commit(f);
	struct btree_key key = BTRFS_KEY(100, BTRFS_INODE_ITEM_KEY, 0);
	struct btree_path path, snapshot_path;
	assert_true(btree_lookup(&f->tree, &key, &path));
	btree_path_write_inode_atime(&f->tree, &f->txn, &path, 7);
	assert_true(btree_lookup(&f->tree, &key, &path));
	assert_true(btree_lookup(snapshot, &key, &snapshot_path));
	struct tree_block *copy = path.nodes[0];
	assert_ptr_not_equal(copy, snapshot_path.nodes[0]);
	assert_ptr_equal(copy->items, snapshot_path.nodes[0]->items);
	g_autoptr(GHashTable) live = g_hash_table_new(NULL, NULL);
	btree_collect_blocks(f->tree.root, live);
	btree_collect_blocks(snapshot->root, live);
	g_autoptr(GError) error = NULL;
	assert_true(btree_check_item_sharing(live, blockstore_unreleased_blocks(f->store), &error));
	struct btree_item *items = copy->items;
	copy->items = NULL;
	assert_false(btree_check_item_sharing(live, blockstore_unreleased_blocks(f->store), &error));
	assert_string_equal(error->message, "corrupt item array: BT6 2 references counted, 1 leaves use it");
	copy->items = items;
	tree_fixture_free(f);
}

static void test_item_sharing_check_fails_when_a_freed_leaf_still_shares_its_array(void **state)
{
	/* Without a snapshot an atime write frees the old leaf, which gives its
	 * array to the copy (BT8). */
	struct tree_fixture *f = committed_tree_of_inodes(false);
	struct btree_key key = BTRFS_KEY(100, BTRFS_INODE_ITEM_KEY, 0);
	struct btree_path path;
	assert_true(btree_lookup(&f->tree, &key, &path));
	struct tree_block *old = path.nodes[0];
	btree_path_write_inode_atime(&f->tree, &f->txn, &path, 7);
	assert_true(btree_lookup(&f->tree, &key, &path));
	struct tree_block *copy = path.nodes[0];
	assert_ptr_not_equal(copy, old);
	assert_null(old->items);
	g_autoptr(GHashTable) live = g_hash_table_new(NULL, NULL);
	btree_collect_blocks(f->tree.root, live);
	g_autoptr(GError) error = NULL;
	assert_true(btree_check_item_sharing(live, blockstore_unreleased_blocks(f->store), &error));
	/* The freed leaf pointing at the copy's array again: BT8 is checked
	 * before the count of users (BT6). */
	old->items = copy->items;
	assert_false(btree_check_item_sharing(live, blockstore_unreleased_blocks(f->store), &error));
	g_autofree char *want = g_strdup_printf("corrupt leaf: block %" G_GUINT64_FORMAT
						", BT8 freed but still sharing its item array", old->bytenr);
	assert_string_equal(error->message, want);
	old->items = NULL;
	tree_fixture_free(f);
}

/* --- chk-btree: what a state shows of BT7's and BT8's overlays (btree.c) ------------------ */

static void test_btree_check_fails_on_an_overlay_over_no_item_array(void **state)
{
	/* An overlay is made over an array the leaf shares and goes with it
	 * (BT7): an empty tree's root leaf, which has no array, has none. The
	 * checker only asks whether there is one: never read through. */
	struct tree_fixture *f = tree_fixture_new(4096);
	struct tree_block *root = f->tree.root;
	assert_null(root->items);
	g_autoptr(GError) error = NULL;
	assert_true(btree_check(&f->tree, f->nodesize, &error));
	root->atimes = (struct atime_overlay *)root;
	g_autofree char *want = g_strdup_printf("corrupt leaf: block %" G_GUINT64_FORMAT ", BT7 an overlay over no item array",
						root->bytenr);
	assert_tree_corrupt(f, want);
	root->atimes = NULL;
	tree_fixture_free(f);
	(void)state;
}

/* btree_check_item_sharing over the fixture's trees and its freed blocks: its report, or NULL. */
static char *item_sharing_error(const struct tree_fixture *f)
{
	g_autoptr(GHashTable) live = g_hash_table_new(NULL, NULL);
	btree_collect_blocks(f->tree.root, live);
	for (unsigned i = 0; i < f->nextra; i++)
		btree_collect_blocks(f->extra[i]->root, live);
	g_autoptr(GError) error = NULL;
	if (btree_check_item_sharing(live, blockstore_unreleased_blocks(f->store), &error))
		return NULL;
	print_message("# %s\n", error->message);
	return g_strdup(error->message);
}

static void test_item_sharing_check_fails_when_a_freed_leaf_keeps_its_overlay_without_its_array(void **state)
{
	/* An atime write to a snapshotted leaf gives the copy an overlay over
	 * the array it shares with the snapshot's leaf. Written again in the
	 * next transaction, the copy is copied (the overlay with it) and
	 * freed: it gives its array and its overlay up (BT8). */
	struct tree_fixture *f = committed_tree_of_inodes(false);
	tree_fixture_clone_root(f, 256);
	tree_fixture_commit(f);
	struct btree_key key = BTRFS_KEY(100, BTRFS_INODE_ITEM_KEY, 0);
	struct btree_path path;
	assert_true(btree_lookup(&f->tree, &key, &path));
	btree_path_write_inode_atime(&f->tree, &f->txn, &path, 7);
	tree_fixture_commit(f);
	assert_true(btree_lookup(&f->tree, &key, &path));
	struct tree_block *old = path.nodes[0];
	assert_true(btree_leaf_has_overlay(old));
	btree_path_write_inode_atime(&f->tree, &f->txn, &path, 8);
	assert_true(btree_lookup(&f->tree, &key, &path));
	assert_ptr_not_equal(path.nodes[0], old);
	assert_true(old->flags & TREE_BLOCK_FREED);
	assert_null(old->items);
	assert_false(btree_leaf_has_overlay(old));
	tree_fixture_assert_ok(f, "the copy's copy");
	assert_null(item_sharing_error(f));
	old->atimes = (struct atime_overlay *)old; /* never read through: the checker asks whether there is one */
	g_autofree char *got = item_sharing_error(f);
	assert_non_null(got);
	g_autofree char *want = g_strdup_printf("corrupt leaf: block %" G_GUINT64_FORMAT
						", BT8 freed, its item array given up, but holding an overlay", old->bytenr);
	assert_string_equal(got, want);
	old->atimes = NULL;
	tree_fixture_free(f);
	(void)state;
}

/* --- payloads in the leaf's heap (btree.c BT10) ------------------------------------- */

/* 400 inode items and their refs in 4 KiB leaves, committed: each leaf's
 * inode payloads are in its heap, its refs' counts in the items. */
static struct tree_fixture *inodes_and_refs(void)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	for (uint64_t i = 1; i <= 400; i++) {
		struct btree_key inode = BTRFS_KEY(i, BTRFS_INODE_ITEM_KEY, 0), ref = BTRFS_KEY(i, BTRFS_INODE_REF_KEY, 1);
		union item_payload payload = { .inode = { .size = i, .nlink = 1 } }, count = { .ref = { .count = 1 } };
		btree_insert_item(&f->tree, &f->txn, &inode, BTRFS_INODE_ITEM_SIZE, &payload);
		btree_insert_item(&f->tree, &f->txn, &ref, 12, &count);
	}
	tree_fixture_commit(f);
	tree_fixture_assert_ok(f, "inodes and refs");
	return f;
}

/* The leaf of an inode item and its slot, with its ref and the next inode after it. */
static struct tree_block *leaf_holding(struct tree_fixture *f, uint64_t inode, uint32_t *slot)
{
	struct btree_key key = BTRFS_KEY(inode, BTRFS_INODE_ITEM_KEY, 0);
	struct btree_path path;
	assert_true(btree_lookup(&f->tree, &key, &path));
	*slot = path.slots[0];
	assert_true(*slot + 2 < path.nodes[0]->nritems);
	return path.nodes[0];
}

/* btree_check_payloads() fails on the leaf for invariant `label`'s `reason`. */
static void assert_payloads_break(const struct tree_block *leaf, const char *label, const char *reason)
{
	g_autoptr(GError) error = NULL;
	assert_false(btree_check_payloads(leaf, &error));
	g_autofree char *want = g_strdup_printf("corrupt leaf: block %" G_GUINT64_FORMAT ", %s %s", leaf->bytenr, label,
						reason);
	assert_true(g_str_has_prefix(error->message, want));
}

static void assert_bt10(const struct tree_block *leaf, const char *reason)
{
	assert_payloads_break(leaf, "BT10", reason);
}

static void test_payload_check_fails_when_two_items_point_at_one_payload(void **state)
{
	struct tree_fixture *f = inodes_and_refs();
	uint32_t s;
	struct tree_block *leaf = leaf_holding(f, 200, &s);
	struct btree_item next = leaf->items[s + 2];
	leaf->items[s + 2] = leaf->items[s];
	assert_bt10(leaf, "two payloads overlapping");
	leaf->items[s + 2] = next;
	tree_fixture_free(f);
}

static void test_payload_check_fails_when_an_item_points_into_another_leafs_heap(void **state)
{
	struct tree_fixture *f = inodes_and_refs();
	uint32_t s, t;
	struct tree_block *leaf = leaf_holding(f, 200, &s), *other = leaf_holding(f, 1, &t);
	assert_ptr_not_equal(leaf, other);
	struct btree_item mine = leaf->items[s];
	leaf->items[s] = other->items[t];
	assert_bt10(leaf, "a payload outside its array's heap");
	leaf->items[s] = mine;
	tree_fixture_free(f);
}

static void test_payload_check_fails_when_the_heaps_live_bytes_are_not_the_payloads(void **state)
{
	/* An inode item overwritten by its ref: its payload's 40 bytes are no
	 * item's, yet the heap counts them live. */
	struct tree_fixture *f = inodes_and_refs();
	uint32_t s;
	struct tree_block *leaf = leaf_holding(f, 200, &s);
	struct btree_item inode = leaf->items[s];
	leaf->items[s] = leaf->items[s + 1];
	assert_bt10(leaf, "live bytes that are not the payloads'");
	leaf->items[s] = inode;
	tree_fixture_free(f);
}

/* BT13: the heap's count of file extents that map a data extent. An item's
 * extent set or cleared behind the heap's back (a write through
 * btree_item_file_extent_for_write(), which only num_bytes may take) makes
 * the count wrong either way. */
static void test_payload_check_fails_when_the_heap_miscounts_the_mapped_data_extents(void **state)
{
	struct tree_fixture *f = tree_fixture_new(4096);
	for (uint64_t ino = 1; ino <= 40; ino++) {
		struct btree_key data = BTRFS_KEY(ino, BTRFS_EXTENT_DATA_KEY, 0);
		struct data_extent *extent = ino % 2 ? refs_data_extent_new(&f->txn, (1ull << 30) + ino * 65536, 65536) : NULL;
		union item_payload payload = { .file_extent = { .extent = extent, .num_bytes = 65536 } };
		btree_insert_item(&f->tree, &f->txn, &data, BTRFS_FILE_EXTENT_REGULAR_SIZE, &payload);
	}
	tree_fixture_commit(f);
	tree_fixture_assert_ok(f, "mapped and inline extents");
	struct btree_key mapped_key = BTRFS_KEY(21, BTRFS_EXTENT_DATA_KEY, 0), inline_key = BTRFS_KEY(22, BTRFS_EXTENT_DATA_KEY, 0);
	struct btree_path mapped, inline_path;
	assert_true(btree_lookup(&f->tree, &mapped_key, &mapped));
	assert_true(btree_lookup(&f->tree, &inline_key, &inline_path));
	struct item_file_extent *m = btree_item_file_extent_for_write(btree_path_item(&mapped));
	struct item_file_extent *i = btree_item_file_extent_for_write(btree_path_item(&inline_path));
	struct data_extent *extent = m->extent;
	assert_non_null(extent);
	assert_null(i->extent);
	g_autoptr(GError) error = NULL;
	m->extent = NULL;
	assert_false(btree_check_payloads(mapped.nodes[0], &error));
	g_autofree char *fewer = g_strdup_printf("corrupt leaf: block %" G_GUINT64_FORMAT ", BT13 the heap counts ",
						 mapped.nodes[0]->bytenr);
	assert_true(g_str_has_prefix(error->message, fewer));
	g_clear_error(&error);
	m->extent = extent;
	assert_true(btree_check_payloads(mapped.nodes[0], &error));
	i->extent = extent;
	assert_false(btree_check_payloads(inline_path.nodes[0], &error));
	g_autofree char *more = g_strdup_printf("corrupt leaf: block %" G_GUINT64_FORMAT ", BT13 the heap counts ",
						inline_path.nodes[0]->bytenr);
	assert_true(g_str_has_prefix(error->message, more));
	i->extent = NULL;
	tree_fixture_assert_ok(f, "restored");
	tree_fixture_free(f);
}

/* BT15: the heap's holes on its lists. struct payload_heap (btree.c) is
 * four 16-bit counts (used, live and capacity in 8-byte words, data_refs),
 * then the first hole of each payload size (16, 32, 40 bytes) as its word
 * + 1, then the words; the heap pointer sits just before an array's items. */
static uint16_t *heap_header(const struct tree_block *leaf)
{
	return *(uint16_t **)((char *)leaf->items - sizeof(void *));
}

static void assert_bt15(const struct tree_block *leaf, const char *reason)
{
	assert_payloads_break(leaf, "BT15", reason);
}

static void test_payload_check_fails_when_the_heaps_holes_are_not_on_its_lists(void **state)
{
	/* Inode 200's item deleted in the next transaction: its 40 bytes are a
	 * hole on the 40-byte list (payloads after it in the heap). */
	struct tree_fixture *f = inodes_and_refs();
	uint32_t s;
	struct btree_key gone = BTRFS_KEY(200, BTRFS_INODE_ITEM_KEY, 0);
	assert_true(btree_delete_item(&f->tree, &f->txn, &gone));
	tree_fixture_assert_ok(f, "a hole");
	struct tree_block *leaf = leaf_holding(f, 201, &s);
	uint16_t *header = heap_header(leaf), *list = &header[4 + 2], first = *list;
	assert_int_not_equal(first, 0);
	assert_int_equal(header[0] - header[1], 5); /* used - live: the one hole's 40 bytes */
	uint64_t *words = (uint64_t *)(header + 8);
	uint16_t link;
	memcpy(&link, &words[first - 1], sizeof(link));
	assert_int_equal(link, 0);
	/* Off its list. */
	*list = 0;
	assert_bt15(leaf, "holes that are not the heap's used bytes beyond its live ones");
	/* A live payload on the list. */
	*list = (uint16_t)((const uint64_t *)btree_item_inode(btree_leaf_item(leaf, s)) - words + 1);
	assert_bt15(leaf, "a hole overlapping a payload or another hole");
	/* Beyond the used bytes. */
	*list = (uint16_t)(header[0] + 1);
	assert_bt15(leaf, "a hole outside the heap's used bytes");
	/* A list that comes back to its first hole. */
	*list = first;
	memcpy(&words[first - 1], &first, sizeof(first));
	assert_bt15(leaf, "a hole list that loops");
	memcpy(&words[first - 1], &link, sizeof(link));
	tree_fixture_assert_ok(f, "restored");
	/* The next inode item of the leaf goes into the hole. */
	union item_payload payload = { .inode = { .size = 200, .nlink = 1 } };
	uint16_t used = header[0];
	btree_insert_item(&f->tree, &f->txn, &gone, BTRFS_INODE_ITEM_SIZE, &payload);
	assert_ptr_equal(leaf_holding(f, 201, &s), leaf);
	assert_int_equal(header[0], used);
	assert_int_equal(header[1], used);
	assert_int_equal(*list, 0);
	tree_fixture_assert_ok(f, "the hole taken");
	tree_fixture_free(f);
}

static void test_item_sharing_check_fails_when_two_arrays_hold_one_payload_heap(void **state)
{
	/* The heap pointer sits just before an array's items (btree.c's struct
	 * leaf_items); two leaves' arrays made to hold the same heap. */
	struct tree_fixture *f = inodes_and_refs();
	uint32_t s, t;
	struct tree_block *leaf = leaf_holding(f, 200, &s), *other = leaf_holding(f, 1, &t);
	void **heap = (void **)((char *)leaf->items - sizeof(void *));
	void **other_heap = (void **)((char *)other->items - sizeof(void *));
	void *mine = *heap;
	assert_non_null(mine);
	g_autoptr(GHashTable) live = g_hash_table_new(NULL, NULL);
	btree_collect_blocks(f->tree.root, live);
	g_autoptr(GError) error = NULL;
	assert_true(btree_check_item_sharing(live, blockstore_unreleased_blocks(f->store), &error));
	*heap = *other_heap;
	assert_false(btree_check_item_sharing(live, blockstore_unreleased_blocks(f->store), &error));
	assert_string_equal(error->message, "corrupt item array: BT10 a payload heap that another array holds too");
	*heap = mine;
	tree_fixture_free(f);
}

/* --- reference counts (refs.h RF1-RF3) ------------------------------------------ */

static void test_refs_check_fails_when_a_block_counts_a_reference_too_many(void **state)
{
	struct fs *fs = populated("btrfs");
	struct tree_block *root = fs_subvolume(fs, FS_TOP_SUBVOLUME)->tree->root;
	root->tree_refs++;
	g_autofree char *want = g_strdup_printf("corrupt refs: block %" G_GUINT64_FORMAT " owner %" G_GUINT64_FORMAT ", RF1 counts tree %u",
						root->bytenr, (uint64_t)FS_TOP_SUBVOLUME, root->tree_refs);
	fixture_assert_fs_corrupt(fs, want);
	root->tree_refs--;
	fs_free(fs);
}

static void test_written_check_fails_on_a_node_the_transaction_wrote_and_did_not_list(void **state)
{
	struct fs *fs = populated("btrfs");
	/* A write after the sync: the transaction copies the path to the file. */
	assert_int_equal(fs_write(fs, "/d/file-001", 0, 20000), 0);
	struct tree_block *node = NULL;
	guint at = 0;
	for (guint i = 0; i < fs->txn.written->len && !node; i++) {
		struct tree_block *b = fs->txn.written->pdata[i];
		if (b->level && !(b->flags & TREE_BLOCK_FREED)) {
			node = b;
			at = i;
		}
	}
	assert_non_null(node);
	g_ptr_array_remove_index(fs->txn.written, at);
	node->flags &= ~TREE_BLOCK_WRITTEN_LISTED;
	g_autofree char *want = g_strdup_printf("corrupt written list: block %" G_GUINT64_FORMAT
						", BT12 a node the transaction wrote, not listed", node->bytenr);
	fixture_assert_fs_corrupt(fs, want);
	node->flags |= TREE_BLOCK_WRITTEN_LISTED;
	g_ptr_array_add(fs->txn.written, node);
	fixture_assert_fs_ok(fs, "after the repair");
	fs_free(fs);
}

static void test_refs_check_fails_when_a_data_extent_counts_a_reference_too_many(void **state)
{
	struct fs *fs = populated("btrfs");
	struct data_extent *extent = some_data_extent(fs);
	extent->data_refs++;
	g_autofree char *want = g_strdup_printf("corrupt refs: data extent %" G_GUINT64_FORMAT ", RF2 counts data %u",
						extent->bytenr, extent->data_refs);
	fixture_assert_fs_corrupt(fs, want);
	extent->data_refs--;
	fs_free(fs);
}

static void test_refs_check_fails_when_a_reachable_data_extent_is_freed(void **state)
{
	struct fs *fs = populated("btrfs");
	struct data_extent *extent = some_data_extent(fs);
	extent->flags |= DATA_EXTENT_FREED;
	g_autofree char *want = g_strdup_printf("corrupt refs: data extent %" G_GUINT64_FORMAT ", RF3 reachable but freed",
						extent->bytenr);
	fixture_assert_fs_corrupt(fs, want);
	extent->flags &= (uint8_t)~DATA_EXTENT_FREED;
	fs_free(fs);
}

/* --- the pending heads' order (refs.c RF6), perf15release ------------------------------ */

/* Files created until the throttle has run heads and left at least two in
 * the sorted run ahead of its cursor; then the two lowest swap places. */
static void test_refs_check_fails_when_the_pending_heads_leave_address_order(void **state)
{
	struct fs *fs = populated("btrfs");
	uint64_t misordered = 0;
	struct fs_attributes a = fixture_attributes(0644, INT64_MIN, INT64_MIN);
	for (unsigned i = 0; !(misordered = refs_misorder_heads_for_test(fs->refs)); i++) {
		assert_true(i < 4000);
		g_autofree char *path = g_strdup_printf("/d/new-%04u", i);
		assert_int_equal(fs_create(fs, path, 8192, &a), 0);
	}
	g_autofree char *want =
		g_strdup_printf("corrupt refs: pending head %" G_GUINT64_FORMAT ", RF6 below the one before it in ahead_run",
				misordered);
	fixture_assert_fs_corrupt(fs, want);
	assert_true(refs_misorder_heads_for_test(fs->refs));
	fixture_assert_fs_ok(fs, "after the repair");
	fs_free(fs);
}

/* --- the count of pending heads (refs.c RF11), perf18cow ------------------------------ */

/* A btrfs fs with 40 creates' ref heads pending. */
static struct fs *with_heads_pending(void)
{
	struct fs *fs = populated("btrfs");
	struct fs_attributes a = fixture_attributes(0644, INT64_MIN, INT64_MIN);
	for (unsigned i = 0; i < 40; i++) {
		g_autofree char *path = g_strdup_printf("/d/new-%04u", i);
		assert_int_equal(fs_create(fs, path, 8192, &a), 0);
	}
	return fs;
}

/* The throttle's idle check and the reservations read the count, not the
 * queues: one more or one less than they hold fails. */
static void test_refs_check_fails_when_the_pending_heads_are_miscounted(void **state)
{
	struct fs *fs = with_heads_pending();
	unsigned pending = refs_pending_heads(fs->refs);
	assert_true(pending > 0);
	fixture_assert_fs_ok(fs, "heads pending");
	refs_miscount_pending_for_test(fs->refs, 1);
	g_autofree char *more = g_strdup_printf("corrupt refs: RF11 %u pending heads counted, %u queued or taken in",
						pending + 1, pending);
	fixture_assert_fs_corrupt(fs, more);
	refs_miscount_pending_for_test(fs->refs, -2);
	g_autofree char *fewer = g_strdup_printf("corrupt refs: RF11 %u pending heads counted, %u queued or taken in",
						 pending - 1, pending);
	fixture_assert_fs_corrupt(fs, fewer);
	refs_miscount_pending_for_test(fs->refs, 1);
	fixture_assert_fs_ok(fs, "the count put right");
	fs_free(fs);
	(void)state;
}

/* --- the throttle's idle bound (refs.c RF12), perfrefs2 --------------------------------- */

/* Each operation's throttle compares the pending heads with one bound: the
 * limit while no dead tree waits, -1 (never idle) while one does. A bound
 * one above the limit, or -1 with no tree waiting, fails. */
static void test_refs_check_fails_when_the_throttle_idle_bound_is_not_its_limit(void **state)
{
	struct fs *fs = with_heads_pending();
	fixture_assert_fs_ok(fs, "heads pending");
	int64_t bound = refs_move_idle_max_for_test(fs->refs, 0);
	refs_move_idle_max_for_test(fs->refs, bound + 1);
	g_autofree char *above = g_strdup_printf("corrupt refs: RF12 the throttle's idle bound is %" G_GINT64_FORMAT
						 ", not %" G_GINT64_FORMAT,
						 bound + 1, bound);
	fixture_assert_fs_corrupt(fs, above);
	refs_move_idle_max_for_test(fs->refs, -1);
	g_autofree char *never = g_strdup_printf("corrupt refs: RF12 the throttle's idle bound is -1, not %" G_GINT64_FORMAT,
						 bound);
	fixture_assert_fs_corrupt(fs, never);
	refs_move_idle_max_for_test(fs->refs, bound);
	fixture_assert_fs_ok(fs, "the bound put right");
	fs_free(fs);
	(void)state;
}

/* --- chk-refs: freed means unreferenced, and the pending heads are the dirty ones --------- */
/* (refs.h RF3; refs.c RF4, RF5 and RF6's heap and entries) */

/* A healthy fs mid-transaction: a write after the sync copied the path to
 * its file, so blocks are freed (pinned) and new ones queued, and fewer are
 * queued than the throttle's limit: they wait in dirty_blocks. */
static struct fs *written_after_the_sync(void)
{
	struct fs *fs = populated("btrfs");
	assert_int_equal(fs_write(fs, "/d/file-001", 0, 20000), 0);
	assert_true(blockstore_unreleased_blocks(fs->store)->len > 0);
	assert_true(refs_pending_heads(fs->refs) < refs_throttle_heads(blockstore_nodesize(fs->store)));
	fixture_assert_fs_ok(fs, "a write after the sync");
	return fs;
}

/* A block the write copied and queued, below the top subvolume's new root. */
static struct tree_block *queued_child(struct fs *fs)
{
	struct tree_block *root = fs_subvolume(fs, FS_TOP_SUBVOLUME)->tree->root;
	assert_true(root->level > 0);
	for (uint32_t i = 0; i < root->nritems; i++)
		if (root->children[i].block->flags & TREE_BLOCK_REFS_DIRTY)
			return root->children[i].block;
	fail_msg("no child of the root %" G_GUINT64_FORMAT " is queued", root->bytenr);
	return NULL;
}

/* fs_check() fails with "corrupt refs: <what> <the block's address>, <reason>" while
 * `flag` of `block` is flipped, and passes once it is flipped back. */
static void assert_flipped_flag_breaks(struct fs *fs, struct tree_block *block, unsigned flag, const char *what,
				       const char *reason)
{
	block->flags ^= flag;
	g_autofree char *want = g_strdup_printf("corrupt refs: %s %" G_GUINT64_FORMAT ", %s", what, block->bytenr, reason);
	fixture_assert_fs_corrupt(fs, want);
	block->flags ^= flag;
	fixture_assert_fs_ok(fs, "the flag flipped back");
}

static void test_refs_check_fails_when_a_reachable_block_is_freed(void **state)
{
	struct fs *fs = populated("btrfs");
	assert_flipped_flag_breaks(fs, fs->uuid_tree.root, TREE_BLOCK_FREED, "block", "RF3 reachable but freed");
	fs_free(fs);
	(void)state;
}

/* fs_check() fails with `want` while `*count` is one more, and passes once it is put back. */
static void assert_one_more_breaks(struct fs *fs, uint32_t *count, const char *want)
{
	(*count)++;
	fixture_assert_fs_corrupt(fs, want);
	(*count)--;
	fixture_assert_fs_ok(fs, "the count put back");
}

static void test_refs_check_fails_when_a_freed_block_still_counts_a_reference(void **state)
{
	struct fs *fs = written_after_the_sync();
	struct tree_block *freed = blockstore_unreleased_blocks(fs->store)->pdata[0];
	g_autofree char *want = g_strdup_printf("corrupt refs: block %" G_GUINT64_FORMAT
						", RF3 freed but counts tree 1 shared 0", freed->bytenr);
	assert_one_more_breaks(fs, &freed->tree_refs, want);
	fs_free(fs);
	(void)state;
}

static void test_refs_check_fails_when_a_freed_data_extent_still_counts_a_reference(void **state)
{
	struct fs *fs = populated("btrfs");
	/* The snapshot's own copy of file-004 (populated() wrote it there): its last reference goes. */
	assert_int_equal(fs_unlink(fs, "/snap/d/file-004"), 0);
	const GPtrArray *freed = refs_freed_data(fs->refs);
	assert_true(freed->len > 0);
	fixture_assert_fs_ok(fs, "an unlink after the sync");
	struct data_extent *extent = freed->pdata[0];
	g_autofree char *want = g_strdup_printf("corrupt refs: data extent %" G_GUINT64_FORMAT
						", RF3 freed but counts data 0 shared 1", extent->bytenr);
	assert_one_more_breaks(fs, &extent->shared_refs, want);
	fs_free(fs);
	(void)state;
}

static void test_refs_check_fails_on_a_dirty_block_in_no_queue(void **state)
{
	struct fs *fs = populated("btrfs");
	assert_flipped_flag_breaks(fs, fs->uuid_tree.root, TREE_BLOCK_REFS_DIRTY, "block", "RF4 dirty but in no queue");
	fs_free(fs);
	(void)state;
}

static void test_refs_check_fails_on_a_queued_block_not_dirty(void **state)
{
	struct fs *fs = written_after_the_sync();
	assert_flipped_flag_breaks(fs, queued_child(fs), TREE_BLOCK_REFS_DIRTY, "pending head",
				   "RF4 in dirty_blocks not dirty");
	fs_free(fs);
	(void)state;
}

static void test_refs_check_fails_when_a_block_is_queued_twice(void **state)
{
	struct fs *fs = written_after_the_sync();
	struct tree_block *block = queued_child(fs);
	refs_queue_again_for_test(fs->refs, block, true);
	g_autofree char *want =
		g_strdup_printf("corrupt refs: pending head %" G_GUINT64_FORMAT ", RF4 queued twice", block->bytenr);
	fixture_assert_fs_corrupt(fs, want);
	refs_queue_again_for_test(fs->refs, block, false);
	fixture_assert_fs_ok(fs, "queued once again");
	fs_free(fs);
	(void)state;
}

static void test_refs_check_fails_when_two_pending_heads_share_an_address(void **state)
{
	struct fs *fs = written_after_the_sync();
	struct tree_block *root = fs_subvolume(fs, FS_TOP_SUBVOLUME)->tree->root, *child = queued_child(fs);
	assert_true(root->flags & TREE_BLOCK_REFS_DIRTY);
	uint64_t bytenr = child->bytenr;
	child->bytenr = root->bytenr;
	g_autofree char *want = g_strdup_printf("corrupt refs: pending head %" G_GUINT64_FORMAT
						", RF5 the address of two heads", root->bytenr);
	fixture_assert_fs_corrupt(fs, want);
	child->bytenr = bytenr;
	fixture_assert_fs_ok(fs, "the address put back");
	fs_free(fs);
	(void)state;
}

/* Files created until the throttle has run heads and left some in the sorted run ahead of
 * its cursor (as in the RF6 test above); its front head in *block or *extent. */
static struct fs *heads_ahead_of_the_cursor(struct tree_block **block, struct data_extent **extent)
{
	struct fs *fs = populated("btrfs");
	struct fs_attributes a = fixture_attributes(0644, INT64_MIN, INT64_MIN);
	for (unsigned i = 0; !refs_front_head_for_test(fs->refs, block, extent); i++) {
		assert_true(i < 4000);
		g_autofree char *path = g_strdup_printf("/d/new-%04u", i);
		assert_int_equal(fs_create(fs, path, 8192, &a), 0);
	}
	fixture_assert_fs_ok(fs, "heads ahead of the cursor");
	return fs;
}

/* fs_check() fails on the entry at ahead_run's front, of the head at `bytenr`, for `reason`. */
static void assert_front_entry_corrupt(struct fs *fs, uint64_t bytenr, const char *reason)
{
	g_autofree char *want =
		g_strdup_printf("corrupt refs: pending head %" G_GUINT64_FORMAT ", RF6 in ahead_run %s", bytenr, reason);
	fixture_assert_fs_corrupt(fs, want);
}

static void test_refs_check_fails_on_an_entry_ahead_not_at_its_heads_address(void **state)
{
	struct tree_block *block;
	struct data_extent *extent;
	struct fs *fs = heads_ahead_of_the_cursor(&block, &extent);
	uint64_t *bytenr = block ? &block->bytenr : &extent->bytenr;
	(*bytenr)++;
	assert_front_entry_corrupt(fs, *bytenr - 1, "is not its head's address");
	(*bytenr)--;
	fixture_assert_fs_ok(fs, "the address put back");
	fs_free(fs);
	(void)state;
}

static void test_refs_check_fails_on_an_entry_ahead_of_a_head_not_queued(void **state)
{
	struct tree_block *block;
	struct data_extent *extent;
	struct fs *fs = heads_ahead_of_the_cursor(&block, &extent);
	uint8_t *flags = block ? &block->flags : &extent->flags;
	uint8_t dirty = block ? TREE_BLOCK_REFS_DIRTY : DATA_EXTENT_DIRTY;
	*flags ^= dirty;
	assert_front_entry_corrupt(fs, block ? block->bytenr : extent->bytenr, "is of a head not queued");
	*flags ^= dirty;
	fixture_assert_fs_ok(fs, "the head queued again");
	fs_free(fs);
	(void)state;
}

static void test_refs_check_fails_on_an_entry_ahead_below_the_cursor(void **state)
{
	struct tree_block *block;
	struct data_extent *extent;
	struct fs *fs = heads_ahead_of_the_cursor(&block, &extent);
	uint64_t bytenr = block ? block->bytenr : extent->bytenr;
	uint64_t cursor = refs_move_cursor_for_test(fs->refs, bytenr + 1);
	assert_true(cursor <= bytenr);
	assert_front_entry_corrupt(fs, bytenr, "is on the wrong side of the cursor");
	refs_move_cursor_for_test(fs->refs, cursor);
	fixture_assert_fs_ok(fs, "the cursor put back");
	fs_free(fs);
	(void)state;
}

/* ahead_late holds the heads taken in while few beside ahead_run's rest: after a snapshot,
 * the first writes to each shared leaf of many files queue them in bursts. */
static void test_refs_check_fails_when_ahead_late_leaves_heap_order(void **state)
{
	struct fs *fs = populated("btrfs");
	fixture_make_files_in(fs, "/big", 1500);
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(fs_snapshot(fs, "/", "/snap-big", false), 0);
	assert_int_equal(fs_sync(fs), 0);
	uint64_t misordered = 0;
	for (unsigned i = 0; !(misordered = refs_misorder_late_heads_for_test(fs->refs)); i++) {
		assert_true(i < 1500);
		g_autofree char *path = g_strdup_printf("/big/file-%03u", i);
		assert_int_equal(fs_write(fs, path, 0, 5000), 0);
	}
	g_autofree char *want = g_strdup_printf("corrupt refs: pending head %" G_GUINT64_FORMAT
						", RF6 below its parent in ahead_late (entry 1)", misordered);
	fixture_assert_fs_corrupt(fs, want);
	assert_true(refs_misorder_late_heads_for_test(fs->refs));
	fixture_assert_fs_ok(fs, "after the repair");
	fs_free(fs);
	(void)state;
}

/* --- the walk memo (fs_namespace.c NS1-NS2) ------------------------------------------ */

/* Makes the memo one level: PREFIX, leading to the inode at TARGET, marked checked as a directory. */
static void set_memo(struct fs *fs, const char *prefix, const char *target)
{
	struct inode_location where;
	assert_int_equal(fs_resolve(fs, target, &where), 0);
	struct walk_memo *m = &fs->walk_memo;
	memcpy(m->prefix, prefix, strlen(prefix));
	m->levels[0] = (struct walk_memo_level){ .end = (uint16_t)strlen(prefix), .checked = true, .dir = where };
	m->depth = 1;
	m->names_removed = fs->names_removed;
}

static void test_namespace_check_fails_on_a_memo_that_leads_elsewhere(void **state)
{
	struct fs *fs = populated("btrfs");
	assert_int_equal(fs_read(fs, "/d/file-001", NULL), 0); /* the memo: "/d/" */
	fixture_assert_fs_ok(fs, "after a read");
	set_memo(fs, "/d/", "/snap/d");
	fixture_assert_fs_corrupt(fs, "corrupt walk memo: 257, NS1 the prefix '/d/' leads elsewhere");
	set_memo(fs, "/d/", "/d");
	fixture_assert_fs_ok(fs, "the memo put right");
	fs_free(fs);
	(void)state;
}

static void test_namespace_check_fails_on_a_memo_marked_checked_that_holds_a_file(void **state)
{
	struct fs *fs = populated("btrfs");
	set_memo(fs, "/d/file-001/", "/d/file-001"); /* where a full walk of the prefix leads: NS1 holds */
	struct inode_location file = fs->walk_memo.levels[0].dir;
	g_autofree char *want = g_strdup_printf("corrupt walk memo: %" G_GUINT64_FORMAT
						", NS2 marked checked but not a directory", file.inode);
	fixture_assert_fs_corrupt(fs, want);
	/* What the mark would break: a path through the file must not resolve. */
	fs->walk_memo.levels[0].checked = false;
	fixture_assert_fs_ok(fs, "unmarked");
	assert_int_equal(fs_read(fs, "/d/file-001/x", NULL), -ENOTDIR);
	fs_free(fs);
	(void)state;
}

/* Two populated("btrfs") filesystems mounted strictatime; returns their clock. */
static int64_t two_populated_strictatime(struct fs **a, struct fs **b)
{
	const struct atime_options strict = { .mode = ATIME_STRICT };
	*a = populated("btrfs");
	*b = populated("btrfs");
	fs_set_atime_options(*a, &strict);
	fs_set_atime_options(*b, &strict);
	return fs_clock(*a);
}

/* Two filesystems that did the same operations, one by a shortcut (memo, cursor) and one
 * without it, end byte for byte the same in every counter and space figure; then both go. */
static void assert_same_reports_and_free(struct fs *shortcut, struct fs *plain, uint64_t min_updates)
{
	struct fs_report a, b;
	fs_report(shortcut, &a);
	fs_report(plain, &b);
	assert_true(a.counters.atime_updates > min_updates);
	assert_memory_equal(&a, &b, sizeof(a));
	fs_free(shortcut);
	fs_free(plain);
}

/* One operation on both: `memo` walks as cowsim does, `fresh` forgets its walk memo first
 * (every walk from the root). Both must answer alike. */
static int op_both(struct fs *memo, struct fs *fresh, int (*op)(struct fs *, const char *), const char *path)
{
	fresh->walk_memo.depth = 0;
	int ret = op(memo, path);
	assert_int_equal(op(fresh, path), ret);
	return ret;
}

static int read_op(struct fs *fs, const char *path)
{
	return fs_read(fs, path, NULL);
}

static int readdir_op(struct fs *fs, const char *path)
{
	return fs_readdir(fs, path, NULL);
}

static int create_op(struct fs *fs, const char *path)
{
	struct fs_attributes a;
	fs_attributes_init(&a);
	return fs_create(fs, path, 100, &a);
}

static int mkdir_op(struct fs *fs, const char *path)
{
	struct fs_attributes a;
	fs_attributes_init(&a);
	return fs_mkdir(fs, path, &a);
}

static void rename_both(struct fs *memo, struct fs *fresh, const char *from, const char *to)
{
	fresh->walk_memo.depth = 0;
	assert_int_equal(fs_rename(memo, from, to), 0);
	assert_int_equal(fs_rename(fresh, from, to), 0);
}

/* The chain /c0/c1/.../c19 (deeper than WALK_MEMO_LEVELS), a file in each, read from the
 * bottom up and back, through "//" and "/./", into files (ENOTDIR) and missing names, across a
 * snapshot with a nested subvolume's placeholder, and again after a rename in the middle. */
static void test_a_walk_from_the_memos_levels_finds_what_a_walk_from_the_root_finds(void **state)
{
	struct fs *memo, *fresh;
	int64_t now = two_populated_strictatime(&memo, &fresh);
	GString *dir = g_string_new("");
	for (unsigned depth = 0; depth < 20; depth++) {
		g_string_append_printf(dir, "/c%u", depth);
		assert_int_equal(op_both(memo, fresh, mkdir_op, dir->str), 0);
		g_autofree char *file = g_strdup_printf("%s/f%u", dir->str, depth);
		assert_int_equal(op_both(memo, fresh, create_op, file), 0);
	}
	assert_int_equal(fs_snapshot(memo, "/", "/sub", false), 0);
	assert_int_equal(fs_snapshot(fresh, "/", "/sub", false), 0);
	assert_int_equal(fs_snapshot(memo, "/", "/s", false), 0); /* /s/sub is a placeholder */
	assert_int_equal(fs_snapshot(fresh, "/", "/s", false), 0);
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned pass = 0; pass < 2; pass++) {
			now += 1000000000;
			assert_int_equal(fs_set_clock(memo, now), 0);
			assert_int_equal(fs_set_clock(fresh, now), 0);
			for (unsigned k = 0; k < 20; k++) {
				unsigned depth = pass ? k : 19 - k;
				GString *path = g_string_new(round ? "/s" : "");
				for (unsigned d = 0; d <= depth; d++)
					g_string_append_printf(path, d == depth / 2 ? "//c%u" : d == 3 ? "/./c%u" : "/c%u", d);
				assert_int_equal(op_both(memo, fresh, readdir_op, path->str), 0);
				g_string_append_printf(path, "/f%u", depth);
				assert_int_equal(op_both(memo, fresh, read_op, path->str), 0);
				g_string_append(path, "/x"); /* through a file */
				assert_int_equal(op_both(memo, fresh, read_op, path->str), -ENOTDIR);
				g_string_free(path, TRUE);
			}
			assert_int_equal(op_both(memo, fresh, read_op, "/c0/c1/missing/f2"), -ENOENT);
			assert_int_equal(op_both(memo, fresh, readdir_op, "/s/sub/"), 0);
			assert_int_equal(op_both(memo, fresh, read_op, "/s/sub/c0/f0"), -ENOENT);
			assert_int_equal(op_both(memo, fresh, read_op, "/sub/c0/f0"), 0);
			fixture_assert_fs_ok(memo, "every level of the memo");
		}
		rename_both(memo, fresh, "/c0/c1/c2", "/c0/c1/moved");
		assert_int_equal(op_both(memo, fresh, read_op, "/c0/c1/c2/c3/f3"), -ENOENT);
		assert_int_equal(op_both(memo, fresh, read_op, "/c0/c1/moved/c3/f3"), 0);
		rename_both(memo, fresh, "/c0/c1/moved", "/c0/c1/c2");
	}
	g_string_free(dir, TRUE);
	assert_same_reports_and_free(memo, fresh, 40);
	(void)state;
}

/* A level whose prefix does not end with '/', or is not past the level above, is not a level. */
static void test_namespace_check_fails_on_memo_levels_out_of_order(void **state)
{
	struct fs *fs = populated("btrfs");
	assert_int_equal(fs_read(fs, "/d/file-001", NULL), 0); /* the levels: "/" and "/d/" */
	assert_int_equal(fs->walk_memo.depth, 2u);
	struct walk_memo_level *d = &fs->walk_memo.levels[1];
	d->end--;
	fixture_assert_fs_corrupt(fs, "corrupt walk memo: level 1, NS1 its prefix does not end with '/'");
	d->end++;
	fixture_assert_fs_ok(fs, "the level put right");
	fs->walk_memo.levels[0] = *d;
	fixture_assert_fs_corrupt(fs, "corrupt walk memo: level 1, NS1 its prefix does not end with '/' past the level above");
	fs_free(fs);
	(void)state;
}

/* --- perfwalk: the last measured path's bytes in the memo (fs_namespace.c NS7) ---------------- */

/* A measured read leaves read_prefix at its directory's level: bytes past the deepest level's end
 * would let a later read skip comparing bytes the memo does not hold. */
static void test_namespace_check_fails_on_a_read_prefix_past_the_deepest_level(void **state)
{
	struct fs *fs = populated("btrfs");
	const char *path = "/d/file-001";
	assert_int_equal(fs_read(fs, path, NULL), 0); /* the levels: "/" and "/d/" */
	struct fs_path measured = { .bytes = path, .len = strlen(path), .name_at = 3 };
	assert_int_equal(fs_read_path(fs, &measured, NULL), 0); /* NS5's step: read_prefix 3 */
	struct walk_memo *m = &fs->walk_memo;
	assert_int_equal(m->read_prefix, 3);
	fixture_assert_fs_ok(fs, "after a measured read");
	m->read_prefix = (uint16_t)(m->levels[m->depth - 1].end + 1);
	fixture_assert_fs_corrupt(fs, "corrupt walk memo: NS7 the last read's 4 bytes pass the deepest level's end 3");
	m->read_prefix = 3;
	fixture_assert_fs_ok(fs, "put right");
	fs_free(fs);
	(void)state;
}

/* --- the read cursor (fs_namespace.c NS3) ------------------------------------------------- */

static void assert_namespace_corrupt(struct fs *fs, const char *want)
{
	g_autoptr(GError) error = NULL;
	assert_false(fs_namespace_check(fs, &error));
	assert_non_null(error);
	if (!strstr(error->message, want))
		fail_msg("expected '%s' in '%s'", want, error->message);
}

/* NS4: a directory entry whose name no longer hashes near its DIR_ITEM offset is one no lookup
 * finds (as a bug that renamed an entry in place would leave it). */
static void test_namespace_check_fails_on_an_entry_outside_its_hash_window(void **state)
{
	struct fs *fs = populated("btrfs");
	struct inode_location dir;
	assert_int_equal(fs_resolve(fs, "/d", &dir), 0);
	const struct btree_item *entry = fs_dir_lookup(dir.subvolume, dir.inode, "file-001", 8);
	assert_non_null(entry);
	struct btree_key key = *btree_item_key(entry);
	struct btree_item *item = subvol_lookup_for_write(fs, dir.subvolume, &key);
	btree_item_dir_for_write(item)->name = "elsewhere-001" + 5; /* "here-001": 8 bytes, another hash */
	assert_namespace_corrupt(fs, "NS4 'here-001' at hash offset");
	fixture_assert_fs_corrupt(fs, "corrupt directory entry");
	btree_item_dir_for_write(item)->name = "file-001";
	fixture_assert_fs_ok(fs, "the name put back");
	fs_free(fs);
	(void)state;
}

/* A read leaves the cursor at its inode item; the next read starts there only while the path's
 * blocks hang from the root slot by slot. */
static void test_read_cursor_is_taken_only_while_linked_from_the_root(void **state)
{
	struct fs *fs = populated("btrfs");
	assert_int_equal(fs_read(fs, "/d/file-002", NULL), 0);
	struct btree_path *near = &fs->read_cursor.inode_near;
	unsigned top = near->levels - 1u;
	assert_true(top >= 1); /* a root node above the leaves */
	assert_true(btree_path_is_current(fs->read_cursor.subvolume->tree, near));
	uint32_t slot = near->slots[top];
	near->slots[top] = slot ? slot - 1 : slot + 1; /* the slot of the leaf's neighbour */
	near->links = 0; /* a change that moved it would have counted in the tree's links (BT18) */
	assert_false(btree_path_is_current(fs->read_cursor.subvolume->tree, near));
	fixture_assert_fs_ok(fs, "a stale cursor is not used: nothing to check");
	assert_int_equal(fs_read(fs, "/d/file-003", NULL), 0); /* from the root, and the cursor reset */
	assert_true(btree_path_is_current(fs->read_cursor.subvolume->tree, near));
	/* A snapshot's first write copies the path: the old one is no longer the root's. */
	struct btree_path before = *near;
	assert_int_equal(fs_snapshot(fs, "/", "/snap2", false), 0);
	assert_int_equal(fs_write(fs, "/d/file-005", 0, 100), 0);
	assert_false(btree_path_is_current(fs->read_cursor.subvolume->tree, &before));
	fixture_assert_fs_ok(fs, "after the snapshot and the write");
	fs_free(fs);
	(void)state;
}

/* Reads in the order a grep makes them, with writes and a snapshot between that leave the cursor
 * stale: `cursored` reads as cowsim does, `fresh` forgets the cursor before every read (a lookup
 * from the root). Both must see the same files, write the same atimes and end byte for byte the
 * same in every counter and space figure. */
static int read_both(struct fs *cursored, struct fs *fresh, const char *path)
{
	bool updated_c = false, updated_f = false;
	fresh->read_cursor = (struct read_cursor){ 0 };
	int ret = fs_read(cursored, path, &updated_c);
	assert_int_equal(fs_read(fresh, path, &updated_f), ret);
	assert_int_equal(updated_c, updated_f);
	return ret;
}

static void test_a_read_through_the_cursor_finds_what_a_lookup_from_the_root_finds(void **state)
{
	struct fs *cursored, *fresh;
	int64_t now = two_populated_strictatime(&cursored, &fresh);
	for (unsigned round = 0; round < 3; round++) {
		now += 1000000000;
		assert_int_equal(fs_set_clock(cursored, now), 0);
		assert_int_equal(fs_set_clock(fresh, now), 0);
		for (unsigned i = 0; i < FILES; i++) {
			g_autofree char *path = g_strdup_printf("%s/d/file-%03u", i % 2 ? "/snap" : "", i);
			assert_int_equal(read_both(cursored, fresh, path), 0);
			if (i % 7 == 3) { /* a write between reads moves the path the cursor holds */
				g_autofree char *other = g_strdup_printf("/d/file-%03u", (i * 5 + round) % FILES);
				assert_int_equal(fs_write(cursored, other, 0, 5000), 0);
				assert_int_equal(fs_write(fresh, other, 0, 5000), 0);
			}
		}
		g_autofree char *snap = g_strdup_printf("/round%u", round);
		assert_int_equal(fs_snapshot(cursored, "/", snap, false), 0);
		assert_int_equal(fs_snapshot(fresh, "/", snap, false), 0);
		assert_int_equal(read_both(cursored, fresh, "/d/file-000"), 0);
		fixture_assert_fs_ok(cursored, "reads through the cursor");
	}
	assert_int_equal(read_both(cursored, fresh, "/d/no-such-file"), -ENOENT);
	assert_same_reports_and_free(cursored, fresh, FILES);
	(void)state;
}

/* Creates into a few directories, with reads, unlinks and a snapshot between that move or stale
 * the directory cursor: `cursored` creates as cowsim does, `fresh` forgets the cursor before
 * every create (its directory's lookup from the root). Both end byte for byte the same. */
static void test_a_create_through_the_directory_cursor_does_what_one_from_the_root_does(void **state)
{
	struct fs *cursored, *fresh;
	int64_t now = two_populated_strictatime(&cursored, &fresh) + 1000000000;
	assert_int_equal(fs_set_clock(cursored, now), 0);
	assert_int_equal(fs_set_clock(fresh, now), 0);
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	assert_int_equal(fs_mkdir(cursored, "/e", &attributes), 0);
	assert_int_equal(fs_mkdir(fresh, "/e", &attributes), 0);
	for (unsigned i = 0; i < 300; i++) {
		g_autofree char *path = g_strdup_printf("%s/new-%03u", i % 3 ? "/d" : (i % 2 ? "/e" : "/snap/d"), i);
		fresh->dir_cursor = (struct read_cursor){ 0 };
		int ret = fs_create(cursored, path, i % 5 ? 700 : 9000, &attributes);
		assert_int_equal(fs_create(fresh, path, i % 5 ? 700 : 9000, &attributes), ret);
		assert_int_equal(ret, 0);
		if (i % 11 == 4) {
			g_autofree char *other = g_strdup_printf("/d/file-%03u", i % FILES);
			assert_int_equal(read_both(cursored, fresh, other), 0);
			g_autofree char *gone = g_strdup_printf("/d/new-%03u", i - 1);
			assert_int_equal(fs_unlink(cursored, gone), fs_unlink(fresh, gone));
		}
		if (i == 150) {
			assert_int_equal(fs_snapshot(cursored, "/", "/later", false), 0);
			assert_int_equal(fs_snapshot(fresh, "/", "/later", false), 0);
		}
	}
	fixture_assert_fs_ok(cursored, "creates through the cursor");
	assert_same_reports_and_free(cursored, fresh, 0);
	(void)state;
}

/* The cursor's own leaf copied under it while the root stays: in one transaction a write
 * elsewhere copies the root, a read that updates nothing leaves the cursor in the file's leaf of
 * the last generation, and a write to the file copies that leaf. Under relatime the next read
 * must see the new mtime (an atime not after it is updated); the old leaf, where the cursor still
 * points and which the root no longer holds, has the old one. */
static void test_a_read_after_its_leaf_was_copied_sees_the_copy_not_the_cursors_leaf(void **state)
{
	struct fs *fs = populated("btrfs");
	int64_t now = fs_clock(fs) + 1000000000;
	bool updated = false;
	assert_int_equal(fs_set_clock(fs, now), 0);
	assert_int_equal(fs_read(fs, "/d/file-010", &updated), 0);
	assert_true(updated); /* the atime moves past the mtime */
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(fs_set_clock(fs, now + 1000000000), 0);
	assert_int_equal(fs_write(fs, "/d/file-039", 0, 3000), 0); /* copies the root */
	assert_int_equal(fs_read(fs, "/d/file-010", &updated), 0);
	assert_false(updated); /* relatime: the atime is after the mtime and recent */
	struct btree_path cursor = fs->read_cursor.inode_near;
	assert_int_equal(fs_write(fs, "/d/file-010", 0, 3000), 0); /* copies the file's leaf */
	assert_ptr_equal(cursor.nodes[cursor.levels - 1], fs->read_cursor.subvolume->tree->root);
	assert_false(btree_path_is_current(fs->read_cursor.subvolume->tree, &cursor));
	assert_int_equal(fs_read(fs, "/d/file-010", &updated), 0);
	assert_true(updated); /* the atime is not after the new mtime */
	fixture_assert_fs_ok(fs, "after the read");
	fs_free(fs);
	(void)state;
}

/* NS3 broken three ways for a kept cursor (`what` in the messages). */
static void assert_cursor_check_breaks(struct fs *fs, struct read_cursor *cursor, const char *what)
{
	struct btree_path *near = &cursor->inode_near;
	unsigned top = near->levels - 1u;
	struct tree_block *root = near->nodes[top];
	uint32_t s = near->slots[top], t = s ? s - 1 : s + 1;
	/* The root's child pointers swapped under their keys: the cursor's slot t is linked to its
	 * leaf, but a descent by key to that leaf's first key goes through slot s. */
	struct tree_block *child = root->children[s].block;
	root->children[s].block = root->children[t].block;
	root->children[t].block = child;
	near->slots[top] = t;
	assert_true(btree_path_is_current(cursor->subvolume->tree, near));
	g_autofree char *off = g_strdup_printf("corrupt %s: NS3 linked but off the root's path at level", what);
	assert_namespace_corrupt(fs, off);
	root->children[t].block = root->children[s].block;
	root->children[s].block = child;
	near->slots[top] = s;
	fixture_assert_fs_ok(fs, "the root put right");
	const struct subvolume *kept = cursor->subvolume;
	struct subvolume stranger = { 0 };
	cursor->subvolume = &stranger;
	g_autofree char *nowhere = g_strdup_printf("corrupt %s: NS3 a path in no subvolume of this filesystem", what);
	assert_namespace_corrupt(fs, nowhere);
	cursor->subvolume = kept;
	near->levels = G_N_ELEMENTS(near->nodes) + 1;
	g_autofree char *levels = g_strdup_printf("corrupt %s: NS3 9 levels", what);
	assert_namespace_corrupt(fs, levels);
	near->levels = (uint8_t)(top + 1);
	fixture_assert_fs_ok(fs, "the cursor put right");
}

static void test_namespace_check_fails_on_a_read_cursor_off_the_roots_path(void **state)
{
	struct fs *fs = populated("btrfs");
	assert_int_equal(fs_read(fs, "/d/file-002", NULL), 0);
	assert_cursor_check_breaks(fs, &fs->read_cursor, "read cursor");
	fs_free(fs);
	(void)state;
}

/* A new name leaves the directory cursor at its directory's inode item; the next new name's
 * lookup of the directory starts there only while it is linked from the root. */
static void test_namespace_check_fails_on_a_directory_cursor_off_the_roots_path(void **state)
{
	struct fs *fs = populated("btrfs");
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	assert_int_equal(fs_create(fs, "/d/new-000", 100, &attributes), 0);
	struct read_cursor *cursor = &fs->dir_cursor;
	struct inode_location dir;
	assert_int_equal(fs_resolve(fs, "/d", &dir), 0);
	assert_ptr_equal(cursor->subvolume, dir.subvolume);
	assert_true(btree_path_is_current(cursor->subvolume->tree, &cursor->inode_near));
	const struct btree_item *item = btree_path_item(&cursor->inode_near);
	assert_int_equal(btree_item_key(item)->objectid, dir.inode);
	assert_int_equal(btree_item_key(item)->type, BTRFS_INODE_ITEM_KEY);
	assert_cursor_check_breaks(fs, cursor, "directory cursor");
	/* A stale cursor is not taken: the next create looks from the root and moves it. (Stale:
	 * its stamp is not the tree's links, BT18, the test below.) */
	unsigned top = cursor->inode_near.levels - 1u;
	cursor->inode_near.slots[top] = cursor->inode_near.slots[top] ? 0 : 1;
	cursor->inode_near.links = 0;
	assert_false(btree_path_is_current(cursor->subvolume->tree, &cursor->inode_near));
	assert_int_equal(fs_create(fs, "/d/new-001", 100, &attributes), 0);
	assert_true(btree_path_is_current(cursor->subvolume->tree, &cursor->inode_near));
	assert_non_null(fs_dir_lookup(dir.subvolume, dir.inode, "new-001", 7));
	fixture_assert_fs_ok(fs, "after the creates");
	fs_free(fs);
	(void)state;
}

/* --- perfcreate: the directory cursor is a kept path (fs_namespace.c NS3, btree.h BT18) ------ */

/* The directory cursor stamped with its tree's links is linked: a create takes it without asking
 * btree_path_is_current(). Off the root's path with the stamp current (as a change to the tree
 * that did not count in its links would leave it), the namespace check names BT18. */
static void test_namespace_check_fails_on_a_stamped_directory_cursor_off_the_root(void **state)
{
	struct fs *fs = populated("btrfs");
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	assert_int_equal(fs_create(fs, "/d/new-000", 100, &attributes), 0);
	assert_int_equal(fs_create(fs, "/d/new-001", 100, &attributes), 0);
	struct read_cursor *cursor = &fs->dir_cursor;
	const struct btree *tree = cursor->subvolume->tree;
	assert_true(btree_path_kept_linked(tree, &cursor->inode_near));
	assert_int_equal(cursor->inode_near.links, tree->links); /* found linked: stamped */
	fixture_assert_fs_ok(fs, "a stamped cursor");
	unsigned top = cursor->inode_near.levels - 1u;
	uint32_t slot = cursor->inode_near.slots[top];
	assert_true(cursor->inode_near.levels > 1 && cursor->subvolume->tree->root->nritems > 1);
	cursor->inode_near.slots[top] = slot ? 0 : 1;
	assert_false(btree_path_is_current(tree, &cursor->inode_near));
	assert_namespace_corrupt(fs, "corrupt directory cursor: BT18 a kept path stamped with tree");
	cursor->inode_near.slots[top] = slot;
	fixture_assert_fs_ok(fs, "the cursor put right");
	fs_free(fs);
	(void)state;
}

/* --- the directory cache (fs_dir_cache.c DC1-DC2) ---------------------------------------- */

static int unlink_op(struct fs *fs, const char *path)
{
	return fs_unlink(fs, path);
}

static int rename_to_renamed_op(struct fs *fs, const char *path)
{
	return fs_rename(fs, path, "/d/renamed");
}

/* One operation on both: `cached` walks as cowsim does, `plain` never asks its directory cache. */
static int cache_op_both(struct fs *cached, struct fs *plain, int (*op)(struct fs *, const char *), const char *path)
{
	plain->dir_cache.off = true;
	int ret = op(cached, path);
	assert_int_equal(op(plain, path), ret);
	return ret;
}

/* /d's files read in order (the table is made after a few steps and answers the rest), with
 * between them: the two names of one hash (test_fs.c), the second's entry past the first's; a
 * missing name; a subvolume linked in /d and, in a snapshot, its placeholder; and in each round
 * one change of /d's names (a create, an unlink, a rename), each followed at once by reads of the
 * names it changed, which a table older than the change would answer wrongly (DC1). */
static void test_a_step_through_the_dir_cache_finds_what_a_lookup_in_the_tree_finds(void **state)
{
	struct fs *cached, *plain;
	int64_t now = two_populated_strictatime(&cached, &plain);
	assert_int_equal(cache_op_both(cached, plain, create_op, "/d/n1441e896"), 0);
	assert_int_equal(cache_op_both(cached, plain, create_op, "/d/nfca1a963"), 0);
	assert_int_equal(fs_name_hash("n1441e896", 9), fs_name_hash("nfca1a963", 9));
	assert_int_equal(fs_snapshot(cached, "/", "/d/sub", false), 0);
	assert_int_equal(fs_snapshot(plain, "/", "/d/sub", false), 0);
	assert_int_equal(fs_snapshot(cached, "/", "/s2", false), 0); /* /s2/d/sub is a placeholder */
	assert_int_equal(fs_snapshot(plain, "/", "/s2", false), 0);
	static const char *const changed[][2] = { { "/d/new-0", NULL }, { "/d/n1441e896", "/d/nfca1a963" },
						  { "/d/file-007", "/d/renamed" } };
	for (unsigned round = 0; round < 3; round++) {
		now += 1000000000;
		assert_int_equal(fs_set_clock(cached, now), 0);
		assert_int_equal(fs_set_clock(plain, now), 0);
		for (unsigned i = 0; i < FILES; i++) {
			g_autofree char *path = g_strdup_printf("/d/file-%03u", i);
			assert_int_equal(cache_op_both(cached, plain, read_op, path), 0);
			if (i == 10) {
				assert_int_equal(cache_op_both(cached, plain, read_op, "/d/nfca1a963"), 0);
				assert_int_equal(cache_op_both(cached, plain, read_op, "/d/n1441e896"), round == 2 ? -ENOENT : 0);
				assert_int_equal(cache_op_both(cached, plain, read_op, "/d/no-such-file"), -ENOENT);
				assert_int_equal(cache_op_both(cached, plain, readdir_op, "/d/sub"), 0);
				assert_non_null(cached->dir_cache.last.table); /* a table answered */
				fixture_assert_fs_ok(cached, "the table of /d");
			}
			if (i == 20) {
				int (*change)(struct fs *, const char *) =
					round == 0 ? create_op : round == 1 ? unlink_op : rename_to_renamed_op;
				assert_int_equal(cache_op_both(cached, plain, read_op, changed[round][0]), round ? 0 : -ENOENT);
				assert_int_equal(cache_op_both(cached, plain, change, changed[round][0]), 0);
				assert_int_equal(cache_op_both(cached, plain, read_op, changed[round][0]), round ? -ENOENT : 0);
				if (changed[round][1])
					assert_int_equal(cache_op_both(cached, plain, read_op, changed[round][1]), 0);
			}
		}
		assert_int_equal(cache_op_both(cached, plain, read_op, "/d/sub/d/file-005"), 0);
		assert_int_equal(cache_op_both(cached, plain, readdir_op, "/s2/d/sub"), 0);
		assert_int_equal(cache_op_both(cached, plain, read_op, "/s2/d/sub/d/file-005"), -ENOENT);
		for (unsigned i = 0; i < FILES; i += 3) {
			g_autofree char *path = g_strdup_printf("/s2/d/file-%03u", i);
			assert_int_equal(cache_op_both(cached, plain, read_op, path), 0);
		}
		fixture_assert_fs_ok(cached, "every round");
	}
	assert_same_reports_and_free(cached, plain, 3 * FILES);
	(void)state;
}

/* Tables the directory cache holds (DC3). */
static unsigned tables_held(const struct fs *fs)
{
	unsigned n = 0;
	for (const struct dir_table *t = fs->dir_cache.newest; t; t = t->older)
		n++;
	return n;
}

/* Twelve directories (more than the cache had tables before round 15a) read in turn and back, in and out of
 * order, with missing names, a snapshot's copy of each, and in each round a create and an
 * unlink read back at once: the answers, and at the end every counter and space figure, are
 * those of a filesystem that looks every entry up in the tree. */
static void test_steps_among_more_directories_than_tables_find_what_the_tree_finds(void **state)
{
	enum { DIRS = 12, PER_DIR = 6 };
	struct fs *cached, *plain;
	int64_t now = two_populated_strictatime(&cached, &plain);
	for (unsigned d = 0; d < DIRS; d++) {
		g_autofree char *dir = g_strdup_printf("/t%u", d);
		assert_int_equal(cache_op_both(cached, plain, mkdir_op, dir), 0);
		for (unsigned f = 0; f < PER_DIR; f++) {
			g_autofree char *path = g_strdup_printf("/t%u/file-%u", d, f);
			assert_int_equal(cache_op_both(cached, plain, create_op, path), 0);
		}
	}
	assert_int_equal(fs_snapshot(cached, "/", "/s", false), 0);
	assert_int_equal(fs_snapshot(plain, "/", "/s", false), 0);
	unsigned most_tables = 0;
	bool gone[DIRS][PER_DIR + 1] = { { false } };
	for (unsigned d = 0; d < DIRS; d++)
		gone[d][PER_DIR] = true; /* file-6: no such name */
	for (unsigned round = 0; round < 4; round++) {
		now += 1000000000;
		assert_int_equal(fs_set_clock(cached, now), 0);
		assert_int_equal(fs_set_clock(plain, now), 0);
		for (unsigned step = 0; step < 4 * DIRS * PER_DIR; step++) {
			unsigned d = step / 3 % (round % 2 ? DIRS : 9), f = (step * 3 + round) % (PER_DIR + 1);
			bool in_snapshot = step % 5 == 4;
			g_autofree char *path = g_strdup_printf("%s/t%u/file-%u", in_snapshot ? "/s" : "", d, f);
			int ret = cache_op_both(cached, plain, read_op, path);
			if (!in_snapshot)
				assert_int_equal(ret, gone[d][f] ? -ENOENT : 0);
			most_tables = MAX(most_tables, tables_held(cached));
			if (step == DIRS * PER_DIR) { /* a name in, a name out, each read back at once */
				g_autofree char *made = g_strdup_printf("/t%u/new-%u", (round * 5) % DIRS, round);
				g_autofree char *out = g_strdup_printf("/t3/file-%u", round);
				assert_int_equal(cache_op_both(cached, plain, read_op, made), -ENOENT);
				assert_int_equal(cache_op_both(cached, plain, create_op, made), 0);
				assert_int_equal(cache_op_both(cached, plain, read_op, made), 0);
				assert_int_equal(cache_op_both(cached, plain, unlink_op, out), 0);
				assert_int_equal(cache_op_both(cached, plain, read_op, out), -ENOENT);
				gone[3][round] = true;
			}
		}
		fixture_assert_fs_ok(cached, "every round");
	}
	assert_true(most_tables >= 9); /* the steps made a table of each directory they read */
	assert_same_reports_and_free(cached, plain, 3 * FILES);
	(void)state;
}

/* --- name lineages and the shared tables (fs_dir_cache.c DC2-DC5, round 15a) ---------------- */

static int snapshot_root_op(struct fs *fs, const char *path)
{
	return fs_snapshot(fs, "/", path, false);
}

static int snapshot_snap_op(struct fs *fs, const char *path)
{
	return fs_snapshot(fs, "/snap", path, false);
}

static int rename_in_place_op(struct fs *fs, const char *path)
{
	g_autofree char *to = g_strdup_printf("%s-renamed", path);
	return fs_rename(fs, path, to);
}

/* Reads of every third of /d's files under `prefix` on both (cache_op_both compares the answers). */
static void read_d_both(struct fs *cached, struct fs *plain, const char *prefix)
{
	for (unsigned i = 0; i < FILES; i += 3) {
		g_autofree char *path = g_strdup_printf("%s/d/file-%03u", prefix, i);
		cache_op_both(cached, plain, read_op, path);
	}
}

/* Snapshots of snapshots, each changing four directories its source did not (of /snap/g0-g7),
 * so that each lineage hangs from its source's: a chain deeper than LINEAGE_DEPTH. Each level's
 * new names read back in it and in its source. */
static void snapshot_chain_both(struct fs *cached, struct fs *plain)
{
	for (unsigned g = 0; g < 8; g++) {
		g_autofree char *dir = g_strdup_printf("/snap/g%u", g);
		assert_int_equal(cache_op_both(cached, plain, mkdir_op, dir), 0);
	}
	g_autofree char *source = g_strdup("/snap");
	for (unsigned k = 1; k <= LINEAGE_DEPTH + 3; k++) {
		g_autofree char *snap = g_strdup_printf("/n%u", k);
		assert_int_equal(fs_snapshot(cached, source, snap, false), 0);
		assert_int_equal(fs_snapshot(plain, source, snap, false), 0);
		for (unsigned j = 0; j < 4; j++) {
			g_autofree char *made = g_strdup_printf("%s/g%u/f%u", snap, k % 2 * 4 + j, k);
			g_autofree char *in_source = g_strdup_printf("%s/g%u/f%u", source, k % 2 * 4 + j, k);
			g_autofree char *older = g_strdup_printf("%s/g%u/f%u", snap, (k + 1) % 2 * 4 + j, k - 1);
			assert_int_equal(cache_op_both(cached, plain, create_op, made), 0);
			assert_int_equal(cache_op_both(cached, plain, read_op, made), 0);
			assert_int_equal(cache_op_both(cached, plain, read_op, in_source), -ENOENT);
			assert_int_equal(cache_op_both(cached, plain, read_op, older), k > 1 ? 0 : -ENOENT);
		}
		read_d_both(cached, plain, snap);
		g_free(source);
		source = g_steal_pointer(&snap);
	}
	uint16_t deepest = 0;
	for (unsigned id = 1; id < cached->dir_cache.lineages->len; id++)
		deepest = MAX(deepest, g_array_index(cached->dir_cache.lineages, struct name_lineage, id).depth);
	assert_int_equal(deepest, LINEAGE_DEPTH);
	fixture_assert_fs_ok(cached, "a chain of snapshots of snapshots");
}

/* A directory's table shared by / and its snapshots (and a snapshot's snapshot) while neither
 * changes it: each change of names in the source, in a snapshot, in more directories than a
 * lineage tells apart, and down a chain of snapshots deeper than LINEAGE_DEPTH, read back at
 * once on every side, as a filesystem that looks every entry up in the tree reads it. */
static void test_a_table_shared_by_a_snapshot_and_its_source_finds_what_the_tree_finds(void **state)
{
	struct fs *cached, *plain;
	int64_t now = two_populated_strictatime(&cached, &plain);
	/* A snapshot's first change in a directory its source's lineage did not change: the new
	 * lineage skips the frozen one, and must tell /m apart (the table of /m below it is empty). */
	assert_int_equal(cache_op_both(cached, plain, mkdir_op, "/m"), 0);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(cache_op_both(cached, plain, read_op, "/m/x"), -ENOENT);
	assert_int_equal(cache_op_both(cached, plain, snapshot_root_op, "/t"), 0);
	assert_int_equal(cache_op_both(cached, plain, create_op, "/t/m/x"), 0);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(cache_op_both(cached, plain, read_op, "/t/m/x"), 0);
		assert_int_equal(cache_op_both(cached, plain, read_op, "/m/x"), -ENOENT);
	}
	read_d_both(cached, plain, "");
	unsigned held = tables_held(cached);
	read_d_both(cached, plain, "/snap");
	assert_int_equal(tables_held(cached), held); /* /snap/d asked /d's table */
	assert_int_equal(cache_op_both(cached, plain, create_op, "/d/new-a"), 0); /* in the source */
	assert_int_equal(cache_op_both(cached, plain, read_op, "/snap/d/new-a"), -ENOENT);
	read_d_both(cached, plain, "");
	assert_int_equal(cache_op_both(cached, plain, read_op, "/d/new-a"), 0);
	assert_int_equal(cache_op_both(cached, plain, unlink_op, "/snap/d/file-003"), 0); /* in the snapshot */
	assert_int_equal(cache_op_both(cached, plain, read_op, "/d/file-003"), 0);
	assert_int_equal(cache_op_both(cached, plain, read_op, "/snap/d/file-003"), -ENOENT);
	assert_int_equal(cache_op_both(cached, plain, snapshot_snap_op, "/s3"), 0); /* a snapshot's snapshot */
	read_d_both(cached, plain, "/s3");
	assert_int_equal(cache_op_both(cached, plain, rename_in_place_op, "/s3/d/file-006"), 0);
	read_d_both(cached, plain, "/snap");
	assert_int_equal(cache_op_both(cached, plain, read_op, "/s3/d/file-006"), -ENOENT);
	assert_int_equal(cache_op_both(cached, plain, read_op, "/s3/d/file-006-renamed"), 0);
	assert_int_equal(cache_op_both(cached, plain, read_op, "/snap/d/file-006"), 0);
	fixture_assert_fs_ok(cached, "three sides of /d");
	for (unsigned k = 0; k < LINEAGE_DEPTH + 3; k++) { /* / branches at each: past LINEAGE_DEPTH */
		now += 1000000000;
		assert_int_equal(fs_set_clock(cached, now), 0);
		assert_int_equal(fs_set_clock(plain, now), 0);
		g_autofree char *snap = g_strdup_printf("/k%u", k);
		g_autofree char *file = g_strdup_printf("/d/k%u", k);
		assert_int_equal(cache_op_both(cached, plain, snapshot_root_op, snap), 0);
		if (k % 2) /* a change of /d after the snapshot, every other time */
			assert_int_equal(cache_op_both(cached, plain, create_op, file), 0);
		read_d_both(cached, plain, snap);
		read_d_both(cached, plain, "");
		g_autofree char *made = g_strdup_printf("%s/d/k%u", snap, k);
		assert_int_equal(cache_op_both(cached, plain, read_op, made), -ENOENT);
		assert_int_equal(cache_op_both(cached, plain, read_op, file), k % 2 ? 0 : -ENOENT);
	}
	fixture_assert_fs_ok(cached, "a chain of snapshots");
	assert_int_equal(cache_op_both(cached, plain, snapshot_root_op, "/wide"), 0);
	for (unsigned e = 0; e < LINEAGE_CHANGED + 2; e++) { /* more changed directories than a lineage keeps */
		g_autofree char *dir = g_strdup_printf("/e%u", e);
		g_autofree char *file = g_strdup_printf("/e%u/f", e);
		assert_int_equal(cache_op_both(cached, plain, mkdir_op, dir), 0);
		assert_int_equal(cache_op_both(cached, plain, create_op, file), 0);
		read_d_both(cached, plain, "/wide");
		read_d_both(cached, plain, "");
		assert_int_equal(cache_op_both(cached, plain, unlink_op, "/d/file-000"), e ? -ENOENT : 0);
		assert_int_equal(cache_op_both(cached, plain, read_op, "/wide/d/file-000"), 0);
	}
	read_d_both(cached, plain, "/snap");
	fixture_assert_fs_ok(cached, "many directories changed");
	snapshot_chain_both(cached, plain);
	assert_same_reports_and_free(cached, plain, 3 * FILES);
	(void)state;
}

/* NS5: after a read of /d's file (the memo's deepest level /d/), names past that level that are
 * not one more name ("." and "..", a trailing '/', a file taken for a directory, deeper paths)
 * answer as walks from the root do. */
static void test_a_walk_of_one_step_past_the_memo_finds_what_a_walk_from_the_root_finds(void **state)
{
	struct fs *memo, *fresh;
	int64_t now = two_populated_strictatime(&memo, &fresh);
	static const char *const paths[] = { "/d/.", "/d/..", "/d/file-001/", "/d/file-001/x", "/d/file-001/.",
					     "/d/missing", "/d//file-002", "/d/file-003", "/snap/d/file-004" };
	for (unsigned i = 0; i < G_N_ELEMENTS(paths); i++) {
		now += 1000000000;
		assert_int_equal(fs_set_clock(memo, now), 0);
		assert_int_equal(fs_set_clock(fresh, now), 0);
		assert_int_equal(op_both(memo, fresh, read_op, "/d/file-000"), 0);
		op_both(memo, fresh, read_op, paths[i]); /* op_both compares the answers */
		op_both(memo, fresh, readdir_op, paths[i]);
	}
	fixture_assert_fs_ok(memo, "after the one-step walks");
	assert_same_reports_and_free(memo, fresh, G_N_ELEMENTS(paths));
	(void)state;
}

/* NS6: an entry whose type says a directory but leads to a file, or the other way round (a walk
 * would take the file for a directory without looking at its inode item). */
static void test_namespace_check_fails_on_an_entry_of_the_wrong_type(void **state)
{
	struct fs *fs = populated("btrfs");
	struct inode_location root = { fs_subvolume(fs, FS_TOP_SUBVOLUME), FS_ROOT_DIR_INODE }, dir;
	assert_int_equal(fs_resolve(fs, "/d", &dir), 0);
	const struct btree_item *found[] = { fs_dir_lookup(root.subvolume, root.inode, "d", 1),
					     fs_dir_lookup(dir.subvolume, dir.inode, "file-001", 8) };
	for (unsigned i = 0; i < G_N_ELEMENTS(found); i++) {
		assert_non_null(found[i]);
		struct btree_key key = *btree_item_key(found[i]);
		struct btree_item *item = subvol_lookup_for_write(fs, root.subvolume, &key);
		uint8_t type = btree_item_dir(item)->file_type;
		btree_item_dir_for_write(item)->file_type = type == FT_DIR ? FT_REG_FILE : FT_DIR;
		g_autofree char *want = g_strdup_printf("corrupt directory entry: %" G_GUINT64_FORMAT ", NS6 '%s' of type %u",
							key.objectid, i ? "file-001" : "d",
							type == FT_DIR ? FT_REG_FILE : FT_DIR);
		fixture_assert_fs_corrupt(fs, want);
		btree_item_dir_for_write(item)->file_type = type;
		fixture_assert_fs_ok(fs, "the type put back");
	}
	fs_free(fs);
	(void)state;
}

/* /d's table, made by reads of its first files: the last table asked. */
static struct dir_table *table_of_d(struct fs *fs)
{
	for (unsigned i = 0; i < 8; i++) {
		g_autofree char *path = g_strdup_printf("/d/file-%03u", i);
		assert_int_equal(fs_read(fs, path, NULL), 0);
	}
	struct dir_table *t = fs->dir_cache.last.table;
	assert_non_null(t);
	assert_int_equal(t->count, FILES);
	fixture_assert_fs_ok(fs, "the table as the tree has it");
	return t;
}

/* The entry at t's first used index slot, and that slot. */
static struct dir_cache_entry *first_entry(struct dir_table *t, uint32_t **slot)
{
	for (uint32_t i = 0; i <= t->mask; i++)
		if (t->index[i]) {
			*slot = &t->index[i];
			return (struct dir_cache_entry *)fs_dir_table_entry(t, t->index[i]);
		}
	fail();
	return NULL;
}

/* A table whose entry says another inode or name than the tree's, or misses an entry (moved to
 * an offset the tree does not hold, at the same index slot), or is keyed by no lineage (DC2,
 * DC3); an entry the tree does not hold is test_dir_cache_check_fails_on_a_broken_lineage's. */
static void test_dir_cache_check_fails_on_a_table_unlike_the_tree(void **state)
{
	struct fs *fs = populated("btrfs");
	struct dir_table *c = table_of_d(fs);
	uint32_t *slot = NULL;
	struct dir_cache_entry *used = first_entry(c, &slot);
	g_autofree char *wrong = g_strdup_printf("corrupt directory cache: %" G_GUINT64_FORMAT
						 ", DC2 the entry at %" G_GUINT64_FORMAT
						 " is not in the table as the tree has it",
						 c->dir, used->offset);
	used->location++;
	fixture_assert_fs_corrupt(fs, wrong);
	used->location--;
	used->name[0] ^= 1;
	fixture_assert_fs_corrupt(fs, wrong);
	used->name[0] ^= 1;
	used->offset += c->mask + 1; /* the same home slot: the block is right (DC7), the entry missing */
	fixture_assert_fs_corrupt(fs, wrong);
	used->offset -= c->mask + 1;
	fixture_assert_fs_ok(fs, "the entry put back");
	uint32_t lineage = c->lineage;
	c->lineage = 999;
	g_autofree char *nowhere = g_strdup_printf("corrupt directory cache: %" G_GUINT64_FORMAT
						   ", DC3 lineage 999's table is not the one its chain finds", c->dir);
	fixture_assert_fs_corrupt(fs, nowhere);
	c->lineage = lineage;
	fixture_assert_fs_ok(fs, "the table put right");
	fs_free(fs);
	(void)state;
}

/* A table's block broken (DC7): an index slot that points outside the entries or into one, an
 * entry at two slots, an entry away from its offset's probe, a count or a size unlike the
 * entries, an index not a power of two. */
static void test_dir_cache_check_fails_on_a_broken_block(void **state)
{
	struct fs *fs = populated("btrfs");
	struct dir_table *c = table_of_d(fs);
	uint32_t *slot = NULL, first = (uint32_t)sizeof(*c) + (c->mask + 1) * (uint32_t)sizeof(uint32_t);
	struct dir_cache_entry *used = first_entry(c, &slot);
	uint32_t at = *slot, *free_slot = NULL;
	for (uint32_t i = 0; i <= c->mask && !free_slot; i++)
		if (!c->index[i])
			free_slot = &c->index[i];
	assert_non_null(free_slot);
	g_autofree char *outside = g_strdup_printf("corrupt directory cache: %" G_GUINT64_FORMAT
						   ", DC7 index slot %u points at %u, outside the entries [%u, %u)",
						   c->dir, (unsigned)(slot - c->index), c->bytes, first, c->bytes);
	*slot = c->bytes;
	fixture_assert_fs_corrupt(fs, outside);
	*slot = at + 4; /* not an entry's start */
	g_autofree char *inside = g_strdup_printf("corrupt directory cache: %" G_GUINT64_FORMAT ", DC7 index slot %u points at %u",
						  c->dir, (unsigned)(slot - c->index), at + 4);
	fixture_assert_fs_corrupt(fs, inside);
	*slot = at;
	fixture_assert_fs_ok(fs, "the slot put back");
	g_autofree char *misplaced = g_strdup_printf("corrupt directory cache: %" G_GUINT64_FORMAT ", DC7 ", c->dir);
	*free_slot = at; /* twice */
	fixture_assert_fs_corrupt(fs, misplaced);
	*free_slot = 0;
	uint64_t offset = used->offset;
	used->offset += ((uint32_t)(slot - c->index) + 1 - offset) & c->mask; /* its home the next slot on */
	fixture_assert_fs_corrupt(fs, misplaced);
	used->offset = offset;
	c->count++;
	fixture_assert_fs_corrupt(fs, misplaced);
	c->count--;
	c->bytes -= 8;
	fixture_assert_fs_corrupt(fs, misplaced);
	c->bytes += 8;
	c->mask--;
	fixture_assert_fs_corrupt(fs, misplaced);
	c->mask++;
	fixture_assert_fs_ok(fs, "the block put right");
	fs_free(fs);
	(void)state;
}

/* Two tables of one (lineage, directory), and bytes miscounted (DC3); the last table not the
 * one its step would find (DC5). */
static void test_dir_cache_check_fails_on_two_tables_of_one_directory(void **state)
{
	struct fs *fs = populated("btrfs");
	for (unsigned i = 0; i < 8; i++) {
		g_autofree char *path = g_strdup_printf("/d/file-%03u", i);
		assert_int_equal(fs_read(fs, path, NULL), 0);
	}
	unsigned held = tables_held(fs);
	for (unsigned i = 0; i < 8; i++) { /* /d's table answers /snap/d */
		g_autofree char *snap = g_strdup_printf("/snap/d/file-%03u", i);
		assert_int_equal(fs_read(fs, snap, NULL), 0);
	}
	assert_int_equal(tables_held(fs), held);
	fixture_assert_fs_ok(fs, "one table for both");
	struct dir_cache *c = &fs->dir_cache;
	struct dir_table *t = c->last.table, *twin = g_memdup2(t, t->bytes);
	struct dir_table **chain = NULL;
	for (unsigned b = 0; b < DIR_CACHE_BUCKETS && !chain; b++)
		for (struct dir_table *in = c->buckets[b]; in; in = in->next)
			if (in == t)
				chain = &c->buckets[b];
	assert_non_null(chain);
	size_t bytes = t->bytes;
	twin->next = *chain;
	*chain = twin;
	twin->newer = NULL;
	twin->older = t;
	t->newer = twin;
	c->newest = twin;
	c->bytes += bytes;
	g_autofree char *twice = g_strdup_printf("corrupt directory cache: %" G_GUINT64_FORMAT
						 ", DC3 lineage %u's table is not the one its chain finds",
						 t->dir, t->lineage);
	fixture_assert_fs_corrupt(fs, twice);
	*chain = twin->next;
	g_free(twin);
	t->newer = NULL;
	c->newest = t;
	c->bytes -= bytes;
	fixture_assert_fs_ok(fs, "one table again");
	c->bytes++;
	g_autofree char *miscounted = g_strdup_printf("corrupt directory cache: DC3 %u tables of ", held);
	fixture_assert_fs_corrupt(fs, miscounted);
	c->bytes--;
	uint64_t dir = c->last.dir;
	c->last.dir = FS_ROOT_DIR_INODE;
	fixture_assert_fs_corrupt(fs, "corrupt directory cache: 256, DC5 the last table is not the one its step finds");
	c->last.dir = dir;
	fixture_assert_fs_ok(fs, "the last table put right");
	fs_free(fs);
	(void)state;
}

/* --- chk-btree: the directory cache's bytes (fs_dir_cache.c DC3) ----------------------------- */

enum { LONG_NAMES = DIR_CACHE_BYTES / 2 / 280 + 64 }; /* 280 bytes an entry of 255: two tables overflow */

/* A directory `dir` of `files` files of 255-byte names. */
static void make_dir_of_long_names(struct fs *fs, const char *dir, unsigned files)
{
	struct fs_attributes attributes = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_mkdir(fs, dir, &attributes), 0);
	char name[256];
	memset(name, 'x', 255);
	name[255] = 0;
	for (unsigned i = 0; i < files; i++) {
		char digits[8];
		g_snprintf(digits, sizeof(digits), "%05u", i);
		memcpy(name, digits, 5);
		g_autofree char *path = g_strdup_printf("%s/%s", dir, name);
		assert_int_equal(fs_create(fs, path, 0, &attributes), 0);
	}
}

/* The table of `files` entries a few reads in `dir` make, and the index of its chain. */
static struct dir_table *table_of(struct fs *fs, const char *dir, unsigned files, unsigned *bucket)
{
	char name[256];
	memset(name, 'x', 255);
	name[255] = 0;
	for (unsigned i = 0; i < 4; i++) {
		char digits[8];
		g_snprintf(digits, sizeof(digits), "%05u", i);
		memcpy(name, digits, 5);
		g_autofree char *path = g_strdup_printf("%s/%s", dir, name);
		assert_int_equal(fs_read(fs, path, NULL), 0);
	}
	struct dir_cache *c = &fs->dir_cache;
	struct dir_table *t = c->last.table;
	assert_non_null(t);
	assert_int_equal(t->count, files);
	for (unsigned b = 0; b < DIR_CACHE_BUCKETS; b++)
		for (struct dir_table *in = c->buckets[b]; in; in = in->next)
			if (in == t)
				*bucket = b;
	return t;
}

/* Two directories each of more than half DIR_CACHE_BYTES of names: the second's table pushes
 * the first's out (make_room). The first's put back, as a fill that made no room would leave
 * it, is a cache over its bytes (DC3). */
static void test_dir_cache_check_fails_when_its_tables_take_more_than_dir_cache_bytes(void **state)
{
	struct fs *fs = fixture_fs_new(16384, 8ull << 30);
	make_dir_of_long_names(fs, "/a", LONG_NAMES);
	make_dir_of_long_names(fs, "/b", LONG_NAMES);
	unsigned bucket = 0, unused = 0;
	struct dir_table *first = table_of(fs, "/a", LONG_NAMES, &bucket);
	struct dir_table *twin = g_memdup2(first, first->bytes);
	uint32_t bytes = first->bytes;
	assert_true(bytes < DIR_CACHE_BYTES && 2 * bytes > DIR_CACHE_BYTES);
	struct dir_table *second = table_of(fs, "/b", LONG_NAMES, &unused);
	struct dir_cache *c = &fs->dir_cache;
	for (struct dir_table *t = c->newest; t; t = t->older)
		assert_int_not_equal(t->dir, twin->dir); /* /a's went */
	assert_true(c->bytes >= second->bytes && c->bytes <= DIR_CACHE_BYTES);
	fixture_assert_fs_ok(fs, "/b's table");
	unsigned held = tables_held(fs);
	twin->next = c->buckets[bucket];
	c->buckets[bucket] = twin;
	twin->newer = NULL;
	twin->older = c->newest;
	twin->next_turn = 0;
	twin->asked = false;
	c->newest->newer = twin;
	c->newest = twin;
	c->bytes += bytes;
	g_autofree char *over = g_strdup_printf("corrupt directory cache: DC3 %u tables of %zu bytes, over "
						"DIR_CACHE_BYTES (%u)", held + 1, c->bytes, DIR_CACHE_BYTES);
	fixture_assert_fs_corrupt(fs, over);
	c->buckets[bucket] = twin->next;
	c->newest = twin->older;
	c->newest->newer = NULL;
	c->bytes -= bytes;
	g_free(twin);
	fixture_assert_fs_ok(fs, "/a's table gone again");
	fs_free(fs);
	(void)state;
}

/* The one exception to DC3's bound: a directory whose table alone takes more than
 * DIR_CACHE_BYTES empties the cache for it (make_room), and is held. */
static void test_dir_cache_holds_one_table_larger_than_dir_cache_bytes_alone(void **state)
{
	struct fs *fs = fixture_fs_new(16384, 8ull << 30);
	make_dir_of_long_names(fs, "/a", 8);
	make_dir_of_long_names(fs, "/huge", 2 * LONG_NAMES);
	unsigned bucket = 0;
	table_of(fs, "/a", 8, &bucket);
	assert_true(tables_held(fs) >= 1);
	struct dir_table *huge = table_of(fs, "/huge", 2 * LONG_NAMES, &bucket);
	assert_true(huge->bytes > DIR_CACHE_BYTES);
	assert_int_equal(tables_held(fs), 1);
	fixture_assert_fs_ok(fs, "one table over DIR_CACHE_BYTES, alone");
	fs_free(fs);
	(void)state;
}

/* A lineage whose parent is not frozen, one not frozen held by two subvolumes, and one that
 * forgot a directory it changed: its holder then asks its parent's table, which no longer
 * holds its names (DC4, found through DC2). */
static void test_dir_cache_check_fails_on_a_broken_lineage(void **state)
{
	struct fs *fs = populated("btrfs"); /* /snap holds lineage 1, / branched to 2 adding "snap" */
	struct dir_cache *c = &fs->dir_cache;
	struct subvolume *top = fs_subvolume(fs, FS_TOP_SUBVOLUME), *snap = NULL;
	for (unsigned i = 0; i < fs->subvolumes->len; i++)
		if (fs->subvolumes->pdata[i] != top)
			snap = fs->subvolumes->pdata[i];
	assert_int_equal(top->lineage, 2u);
	assert_int_equal(snap->lineage, 1u);
	struct name_lineage *one = &g_array_index(c->lineages, struct name_lineage, 1);
	struct name_lineage *two = &g_array_index(c->lineages, struct name_lineage, 2);
	assert_true(one->frozen && !two->frozen && two->parent == 1);
	one->frozen = false;
	fixture_assert_fs_corrupt(fs, "corrupt directory cache: lineage 2, DC4 its parent 1 is not an older frozen one");
	one->frozen = true;
	snap->lineage = 2;
	g_autofree char *two_holders = g_strdup_printf("corrupt directory cache: lineage 2, DC4 held by subvolumes 5 and %"
						       G_GUINT64_FORMAT " but not frozen", snap->id);
	fixture_assert_fs_corrupt(fs, two_holders);
	snap->lineage = 1;
	fixture_assert_fs_ok(fs, "the lineages put right");
	for (unsigned i = 0; i < 8; i++) { /* the table (1, /d) for both */
		g_autofree char *path = g_strdup_printf("/d/file-%03u", i);
		assert_int_equal(fs_read(fs, path, NULL), 0);
	}
	struct fs_attributes a;
	fs_attributes_init(&a);
	assert_int_equal(fs_create(fs, "/d/new", 0, &a), 0); /* / tells /d apart from 1's */
	assert_int_equal(two->changed_count, 2u);
	fixture_assert_fs_ok(fs, "/d changed in /");
	two->changed_count--; /* as if the change had not been told */
	const struct btree_item *made = fs_dir_lookup(top, c->newest->dir, "new", 3);
	assert_non_null(made);
	g_autofree char *missed = g_strdup_printf("corrupt directory cache: %" G_GUINT64_FORMAT
						  ", DC2 the entry at %" G_GUINT64_FORMAT
						  " is not in the table as the tree has it",
						  c->newest->dir, btree_item_key(made)->offset);
	fixture_assert_fs_corrupt(fs, missed);
	two->changed_count++;
	fixture_assert_fs_ok(fs, "told again");
	fs_free(fs);
	fs = populated("btrfs"); /* and an entry the table holds but /'s tree no longer does */
	c = &fs->dir_cache;
	struct dir_table *d = table_of_d(fs);
	assert_int_equal(fs_unlink(fs, "/d/file-000"), 0);
	two = &g_array_index(c->lineages, struct name_lineage, 2);
	assert_int_equal(two->changed_count, 2u);
	two->changed_count--;
	g_autofree char *extra = g_strdup_printf("corrupt directory cache: %" G_GUINT64_FORMAT
						 ", DC2 %u entries in subvolume 5's tree, %u in the table",
						 d->dir, FILES - 1, FILES);
	fixture_assert_fs_corrupt(fs, extra);
	two->changed_count++;
	fixture_assert_fs_ok(fs, "told again");
	fs_free(fs);
	(void)state;
}

/* --- the block store (blockstore.c BS1-BS3, BS5, BS6) -------------------------------------- */

static void test_blockstore_check_fails_on_a_live_block_no_tree_reaches(void **state)
{
	struct fs *fs = populated("btrfs");
	struct tree_block *stray = blockstore_alloc_block(fs->store, BTRFS_FS_TREE_OBJECTID, 0, fs->txn.transid);
	fixture_assert_fs_corrupt(fs, "corrupt blockstore: BS1 ");
	blockstore_free_block(fs->store, stray);
	fixture_assert_fs_ok(fs, "the stray block freed");
	fs_free(fs);
}

static void test_blockstore_check_fails_when_two_live_blocks_share_an_address(void **state)
{
	struct fs *fs = populated("btrfs");
	struct tree_block *a = fs->csum_tree.root, *b = fs->uuid_tree.root;
	uint64_t bytenr = a->bytenr;
	a->bytenr = b->bytenr;
	g_autofree char *want = g_strdup_printf("corrupt blockstore: block %" G_GUINT64_FORMAT ", BS2 address used twice",
						b->bytenr);
	fixture_assert_fs_corrupt(fs, want);
	a->bytenr = bytenr;
	fs_free(fs);
}

static void test_blockstore_check_fails_when_a_chunk_is_used_past_its_length(void **state)
{
	struct fs *fs = populated("btrfs");
	unsigned count;
	struct chunk *chunk = (struct chunk *)&blockstore_chunks(fs->store, &count)[0];
	uint64_t used = chunk->used;
	chunk->used = chunk->length + 4096;
	g_autofree char *want = g_strdup_printf("corrupt blockstore: chunk %" G_GUINT64_FORMAT ", BS3 used %" G_GUINT64_FORMAT,
						chunk->start, chunk->used);
	fixture_assert_fs_corrupt(fs, want);
	chunk->used = used;
	fs_free(fs);
}

static void test_blockstore_check_fails_when_a_chunk_grows_behind_the_totals(void **state)
{
	struct fs *fs = populated("btrfs");
	unsigned count;
	struct chunk *chunk = (struct chunk *)&blockstore_chunks(fs->store, &count)[count - 1];
	chunk->length += 1u << 20;
	fixture_assert_fs_corrupt(fs, chunk->data ? "corrupt blockstore: BS5 data chunks " :
						    "corrupt blockstore: BS5 metadata chunks ");
	chunk->length -= 1u << 20;
	fixture_assert_fs_ok(fs, "the chunk's length restored");
	fs_free(fs);
}

static void test_blockstore_check_fails_when_a_chunk_claims_mkfs_front_hole_behind_its_back(void **state)
{
	struct fs *fs = populated("btrfs");
	unsigned count;
	struct chunk *chunk = (struct chunk *)&blockstore_chunks(fs->store, &count)[count - 1];
	chunk->in_front_hole = !chunk->in_front_hole;
	fixture_assert_fs_corrupt(fs, "corrupt blockstore: BS6 ");
	chunk->in_front_hole = !chunk->in_front_hole;
	fixture_assert_fs_ok(fs, "the chunk's place restored");
	fs_free(fs);
}

/* BS7: the overcommit a reservation may take, kept as chunks are added, is what the unallocated
 * space gives; off by one stripe either way, the check says so. */
static void test_blockstore_check_fails_on_an_overcommit_unlike_the_unallocated_space(void **state)
{
	struct fs *fs = populated("btrfs");
	blockstore_skew_overcommit_for_test(fs->store, BTRFS_STRIPE_LEN);
	fixture_assert_fs_corrupt(fs, "corrupt blockstore: BS7 overcommit ");
	blockstore_skew_overcommit_for_test(fs->store, -2 * (int64_t)BTRFS_STRIPE_LEN);
	fixture_assert_fs_corrupt(fs, "corrupt blockstore: BS7 overcommit ");
	blockstore_skew_overcommit_for_test(fs->store, BTRFS_STRIPE_LEN);
	fixture_assert_fs_ok(fs, "the overcommit put right");
	fs_free(fs);
	(void)state;
}

/* BS8: the bytes the blocks and the global reserve hold, kept as blocks come and go, are what the
 * live and pinned blocks and the reserve add up to; off by a block either way, the check says so. */
static void test_blockstore_check_fails_on_held_bytes_unlike_the_blocks(void **state)
{
	struct fs *fs = populated("btrfs");
	int64_t nodesize = blockstore_nodesize(fs->store);
	blockstore_skew_held_for_test(fs->store, nodesize);
	fixture_assert_fs_corrupt(fs, "corrupt blockstore: BS8 ");
	blockstore_skew_held_for_test(fs->store, -2 * nodesize);
	fixture_assert_fs_corrupt(fs, "corrupt blockstore: BS8 ");
	blockstore_skew_held_for_test(fs->store, nodesize);
	fixture_assert_fs_ok(fs, "the bytes held put right");
	fs_free(fs);
	(void)state;
}

/* --- chk-refs: live, pinned and free apart (BS2); the chunks within the device (BS3) ----- */

/* An address a block freed in the transaction holds pinned. */
static uint64_t a_pinned_address(struct fs *fs)
{
	assert_int_equal(fs_write(fs, "/d/file-001", 0, 20000), 0);
	const GPtrArray *freed = blockstore_unreleased_blocks(fs->store);
	assert_true(freed->len > 0);
	return ((const struct tree_block *)freed->pdata[0])->bytenr;
}

/* An address on the free list: pinned until the sync's commit freed it (nothing allocates
 * after the commit). */
static uint64_t a_free_address(struct fs *fs)
{
	uint64_t bytenr = a_pinned_address(fs);
	assert_int_equal(fs_sync(fs), 0);
	fixture_assert_fs_ok(fs, "the pinned address freed");
	return bytenr;
}

/* fs_check() fails with "corrupt blockstore: block <address>, BS2 <reason>" while a live
 * block (the uuid tree's root, which no operation here changes) stands at `address`, and
 * passes once it is back at its own. */
static void assert_live_block_at_breaks(struct fs *fs, uint64_t address, const char *reason)
{
	struct tree_block *block = fs->uuid_tree.root;
	uint64_t own = block->bytenr;
	block->bytenr = address;
	g_autofree char *want = g_strdup_printf("corrupt blockstore: block %" G_GUINT64_FORMAT ", BS2 %s", address, reason);
	fixture_assert_fs_corrupt(fs, want);
	block->bytenr = own;
	fixture_assert_fs_ok(fs, "the block back at its address");
}

static void test_blockstore_check_fails_on_a_live_block_at_a_pinned_address(void **state)
{
	struct fs *fs = populated("btrfs");
	uint64_t pinned = a_pinned_address(fs);
	fixture_assert_fs_ok(fs, "a block freed and pinned");
	assert_live_block_at_breaks(fs, pinned, "reachable but pinned");
	fs_free(fs);
	(void)state;
}

static void test_blockstore_check_fails_on_a_live_block_at_a_free_address(void **state)
{
	struct fs *fs = populated("btrfs");
	assert_live_block_at_breaks(fs, a_free_address(fs), "reachable but on the free list");
	fs_free(fs);
	(void)state;
}

static void test_blockstore_check_fails_on_an_address_both_pinned_and_free(void **state)
{
	struct fs *fs = populated("btrfs");
	uint64_t free = a_free_address(fs);
	blockstore_pin_for_test(fs->store, free, true);
	g_autofree char *want = g_strdup_printf("corrupt blockstore: block %" G_GUINT64_FORMAT
						", BS2 pinned and on the free list", free);
	fixture_assert_fs_corrupt(fs, want);
	blockstore_pin_for_test(fs->store, free, false);
	fixture_assert_fs_ok(fs, "unpinned");
	fs_free(fs);
	(void)state;
}

static void test_blockstore_check_fails_when_the_chunks_take_more_than_the_device(void **state)
{
	struct fs *fs = populated("btrfs");
	struct space_report report;
	blockstore_report(fs->store, &report);
	int64_t beyond = (int64_t)(fs->config.device_size - report.device_allocated) + BTRFS_STRIPE_LEN;
	blockstore_skew_raw_allocated_for_test(fs->store, beyond);
	g_autofree char *want = g_strdup_printf("corrupt blockstore: BS3 %" G_GUINT64_FORMAT
						" raw bytes allocated, beyond the device's %" G_GUINT64_FORMAT,
						fs->config.device_size + (uint64_t)BTRFS_STRIPE_LEN, fs->config.device_size);
	fixture_assert_fs_corrupt(fs, want);
	blockstore_skew_raw_allocated_for_test(fs->store, -beyond);
	fixture_assert_fs_ok(fs, "the raw bytes put back");
	fs_free(fs);
	(void)state;
}

/* --- extent tree ------------------------------------------------------------ */

static void test_extent_tree_check_fails_when_a_live_block_loses_its_metadata_item(void **state)
{
	struct fs *fs = populated("btrfs");
	const struct tree_block *block = fs->csum_tree.root;
	struct btree_key key = metadata_key(block);
	assert_true(btree_delete_item(&fs->extent_tree, &fs->txn, &key));
	g_autofree char *want = expected("metadata item", block->bytenr, "ET2 missing, 1 refs written");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_extent_tree_check_fails_when_a_metadata_item_counts_one_ref_too_many(void **state)
{
	struct fs *fs = populated("btrfs");
	const struct tree_block *block = fs->csum_tree.root;
	struct btree_key key = metadata_key(block);
	assert_non_null(btree_resize_item(&fs->extent_tree, &fs->txn, &key,
					  BTRFS_EXTENT_ITEM_SIZE + 2 * BTRFS_INLINE_REF_SIZE));
	g_autofree char *want = expected("metadata item", block->bytenr, "ET2 size, 42 (its 1 refs take 33)");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_extent_tree_check_fails_when_a_written_ref_count_is_not_the_blocks(void **state)
{
	/* The item and the record agree on 2 refs, but the block has 1 and no
	 * head is pending: a delayed ref was lost. */
	struct fs *fs = populated("btrfs");
	struct tree_block *block = fs->csum_tree.root;
	struct btree_key key = metadata_key(block);
	assert_non_null(btree_resize_item(&fs->extent_tree, &fs->txn, &key,
					  BTRFS_EXTENT_ITEM_SIZE + 2 * BTRFS_INLINE_REF_SIZE));
	block->extent_item_refs = 2;
	g_autofree char *want = expected("metadata item", block->bytenr,
					 "ET3 refs written with no head pending, 2 (the block has 1)");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_extent_tree_check_fails_on_a_keyed_tree_block_ref_past_the_inline_room(void **state)
{
	struct fs *fs = populated("btrfs");
	const struct tree_block *block = fs->csum_tree.root;
	struct btree_key key = BTRFS_KEY(block->bytenr, BTRFS_TREE_BLOCK_REF_KEY, 1);
	btree_insert_item(&fs->extent_tree, &fs->txn, &key, 0, NULL);
	g_autofree char *want = expected("tree block ref", block->bytenr, "ET2 number 1 past the 0 keyed refs written");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_extent_tree_check_fails_when_a_data_extent_loses_its_extent_item(void **state)
{
	struct fs *fs = populated("btrfs");
	const struct data_extent *extent = some_data_extent(fs);
	struct btree_key key = BTRFS_KEY(extent->bytenr, BTRFS_EXTENT_ITEM_KEY, extent->num_bytes);
	assert_true(btree_delete_item(&fs->extent_tree, &fs->txn, &key));
	g_autofree char *want = expected("extent item", extent->bytenr, "ET2 missing");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_extent_tree_check_fails_when_an_extent_item_has_a_data_ref_too_many(void **state)
{
	struct fs *fs = populated("btrfs");
	const struct data_extent *extent = some_data_extent(fs);
	struct btree_key key = BTRFS_KEY(extent->bytenr, BTRFS_EXTENT_ITEM_KEY, extent->num_bytes);
	struct btree_path path;
	assert_true(btree_lookup(&fs->extent_tree, &key, &path));
	uint32_t size = btree_item_size(btree_path_item(&path));
	assert_non_null(btree_resize_item(&fs->extent_tree, &fs->txn, &key, size + BTRFS_INLINE_DATA_REF_SIZE));
	g_autofree char *want = expected("extent item", extent->bytenr, "ET3 size");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_extent_tree_check_fails_on_an_item_of_no_block_or_extent(void **state)
{
	struct fs *fs = populated("btrfs");
	struct btree_key key = BTRFS_KEY(4096, BTRFS_METADATA_ITEM_KEY, 0);
	btree_insert_item(&fs->extent_tree, &fs->txn, &key, BTRFS_EXTENT_ITEM_SIZE + BTRFS_INLINE_REF_SIZE, NULL);
	g_autofree char *want = expected("metadata item", 4096, "ET1 no tree block at this address");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_extent_tree_check_fails_when_a_block_group_item_says_other_used_bytes(void **state)
{
	/* The data chunk: a change to the extent tree changes the metadata
	 * chunk's used bytes, and ET4 waits for the commit of a changed one. */
	struct fs *fs = populated("btrfs");
	unsigned count;
	const struct chunk *chunk = &blockstore_chunks(fs->store, &count)[1];
	assert_true(chunk->data);
	struct btree_key key = BTRFS_KEY(chunk->start, BTRFS_BLOCK_GROUP_ITEM_KEY, chunk->length);
	*btree_item_value_for_write(btree_lookup_for_write(&fs->extent_tree, &fs->txn, &key)) += 4096;
	g_autofree char *want = expected("block group item", chunk->start, "ET4 used");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

/* --- root and uuid trees ---------------------------------------------------- */

static void test_root_tree_check_fails_when_a_snapshot_loses_its_root_backref(void **state)
{
	struct fs *fs = populated("btrfs");
	struct btree_key key = BTRFS_KEY(BTRFS_FIRST_FREE_OBJECTID, BTRFS_ROOT_BACKREF_KEY, FS_TOP_SUBVOLUME);
	assert_true(btree_delete_item(&fs->root_tree, &fs->txn, &key));
	g_autofree char *want = expected("root backref", BTRFS_FIRST_FREE_OBJECTID, "RT2 missing for a live subvolume");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_root_tree_check_fails_when_a_root_ref_and_its_backref_differ(void **state)
{
	struct fs *fs = populated("btrfs");
	struct btree_key key = BTRFS_KEY(FS_TOP_SUBVOLUME, BTRFS_ROOT_REF_KEY, BTRFS_FIRST_FREE_OBJECTID);
	assert_non_null(btree_resize_item(&fs->root_tree, &fs->txn, &key, BTRFS_ROOT_REF_SIZE + 9));
	g_autofree char *want = expected("root ref", BTRFS_FIRST_FREE_OBJECTID, "RT2 size 27, its backref's 22");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_root_tree_check_fails_when_a_live_tree_has_no_root_item(void **state)
{
	struct fs *fs = populated("btrfs");
	struct btree_key key = BTRFS_KEY(BTRFS_CSUM_TREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, 0);
	assert_true(btree_delete_item(&fs->root_tree, &fs->txn, &key));
	g_autofree char *want = expected("root item", BTRFS_CSUM_TREE_OBJECTID, "RT1 missing for a live tree");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_root_tree_check_fails_on_a_root_item_of_a_deleted_snapshot(void **state)
{
	struct fs *fs = populated("btrfs");
	assert_int_equal(fs_delete_snapshot(fs, "/snap"), 0);
	fixture_assert_fs_ok(fs, "snapshot deleted");
	struct btree_key key = BTRFS_KEY(BTRFS_FIRST_FREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, 0);
	btree_insert_item(&fs->root_tree, &fs->txn, &key, BTRFS_ROOT_ITEM_SIZE, NULL);
	g_autofree char *want = expected("root item", BTRFS_FIRST_FREE_OBJECTID, "RT1 no such live tree");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_root_tree_check_fails_when_the_uuid_tree_forgets_a_snapshot(void **state)
{
	struct fs *fs = populated("btrfs");
	struct btree_key key = BTRFS_KEY(0x5eed + BTRFS_FIRST_FREE_OBJECTID, BTRFS_UUID_KEY_SUBVOL, BTRFS_FIRST_FREE_OBJECTID);
	assert_true(btree_delete_item(&fs->uuid_tree, &fs->txn, &key));
	g_autofree char *want = expected("uuid item", BTRFS_FIRST_FREE_OBJECTID, "RT4 missing for a live subvolume");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_root_tree_check_fails_on_an_item_of_a_type_it_never_holds(void **state)
{
	struct fs *fs = populated("btrfs");
	struct btree_key key = BTRFS_KEY(300, BTRFS_EXTENT_DATA_KEY, 0);
	btree_insert_item(&fs->root_tree, &fs->txn, &key, 53, NULL);
	g_autofree char *want = expected("root tree item", 300, "RT3 unexpected key type, 108");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

/* --- csum tree -------------------------------------------------------------- */

static bool first_csum(const struct btree_item *item, void *opaque)
{
	*(struct btree_key *)opaque = *btree_item_key(item);
	return false;
}

static void test_csum_tree_check_fails_when_data_loses_its_checksums(void **state)
{
	struct fs *fs = populated("btrfs");
	struct btree_key first = BTREE_KEY_MIN, last = BTREE_KEY_MAX, key;
	assert_int_equal(btree_visit_range(&fs->csum_tree, &first, &last, first_csum, &key), 1);
	assert_true(btree_delete_item(&fs->csum_tree, &fs->txn, &key));
	g_autofree char *want = expected("csum item", key.offset, "CS2 data sectors without checksums");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_csum_tree_check_fails_on_checksums_of_no_data_extent(void **state)
{
	struct fs *fs = populated("btrfs");
	uint64_t far = 3ull << 30;
	struct btree_key key = BTRFS_KEY(BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, far);
	btree_insert_item(&fs->csum_tree, &fs->txn, &key, 2 * BTRFS_CSUM_SIZE, NULL);
	g_autofree char *want = expected("csum item", far, "CS2 checksums of no live data extent, to 3221233664");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_csum_tree_check_fails_on_checksums_not_at_a_sector(void **state)
{
	struct fs *fs = populated("btrfs");
	uint64_t odd = (3ull << 30) + 1;
	struct btree_key key = BTRFS_KEY(BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, odd);
	btree_insert_item(&fs->csum_tree, &fs->txn, &key, 2 * BTRFS_CSUM_SIZE, NULL);
	g_autofree char *reason = g_strdup_printf("CS1 misaligned or sized, %u", 2 * BTRFS_CSUM_SIZE);
	g_autofree char *want = expected("csum item", odd, reason);
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

/* --- free-space tree --------------------------------------------------------- */

static void test_free_space_tree_check_fails_when_a_group_says_other_free_bytes(void **state)
{
	struct fs *fs = populated("btrfs");
	unsigned count;
	const struct chunk *chunk = &blockstore_chunks(fs->store, &count)[1];
	assert_true(chunk->data); /* unchanged by the change to the free-space tree (FS2) */
	struct btree_key key = BTRFS_KEY(chunk->start, BTRFS_FREE_SPACE_EXTENT_KEY, chunk->length);
	*btree_item_value_for_write(btree_lookup_for_write(&fs->free_space_tree, &fs->txn, &key)) -= 4096;
	g_autofree char *want = expected("free space extent", chunk->start, "FS2 free bytes");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_free_space_tree_check_fails_when_a_group_loses_its_info(void **state)
{
	struct fs *fs = populated("btrfs");
	unsigned count;
	const struct chunk *chunk = &blockstore_chunks(fs->store, &count)[0];
	struct btree_key key = BTRFS_KEY(chunk->start, BTRFS_FREE_SPACE_INFO_KEY, chunk->length);
	assert_true(btree_delete_item(&fs->free_space_tree, &fs->txn, &key));
	g_autofree char *want = expected("free space item", chunk->start, "FS1 key (199");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

/* --- keys and the keyed design ------------------------------------------------ */

static void test_btrfs_design_check_fails_on_a_snapshot_id_in_a_subvolume_tree(void **state)
{
	struct fs *fs = populated("btrfs");
	struct btree_key key = BTREE_VERSIONED_KEY(100000, BTRFS_INODE_ITEM_KEY, 0, 3);
	btree_insert_item(fs_subvolume(fs, FS_TOP_SUBVOLUME)->tree, &fs->txn, &key, BTRFS_INODE_ITEM_SIZE, NULL);
	g_autofree char *want = expected("key", 100000, "DB2 snapshot 3 in tree 5");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

/* design_keyed.c numbers snapshot ids in order: 1 for the top at mkfs; the
 * snapshot in populated() moves the top to 2 and gives the snapshot 3. */
enum { KEYED_TOP_ID = 2, KEYED_SNAPSHOT_ID = 3 };

static void test_keyed_design_check_fails_when_a_live_subvolume_holds_a_parent_id(void **state)
{
	/* Snapshot id 1 is the parent of the top's (2) and the snapshot's (3):
	 * a live subvolume back on it would see versions its children wrote
	 * over. DK3 still holds (the ids stay distinct); DK4 does not. */
	struct fs *fs = populated("keyed");
	uint32_t *top_id = fs_subvolume(fs, FS_TOP_SUBVOLUME)->design_private; /* begins with the id */
	assert_int_equal(*top_id, KEYED_TOP_ID);
	*top_id = 1;
	g_autofree char *want = expected("snapshot", 1, "DK4 a parent, the id of live subvolume 5");
	fixture_assert_fs_corrupt(fs, want);
	*top_id = KEYED_TOP_ID;
	fixture_assert_fs_ok(fs, "the id given back");
	fs_free(fs);
}

static void test_keyed_design_check_fails_on_a_version_at_an_unknown_snapshot(void **state)
{
	struct fs *fs = populated("keyed");
	struct btree_key key = BTREE_VERSIONED_KEY(100000, BTRFS_INODE_ITEM_KEY, 0, 99);
	btree_insert_item(fs_subvolume(fs, FS_TOP_SUBVOLUME)->tree, &fs->txn, &key, BTRFS_INODE_ITEM_SIZE, NULL);
	g_autofree char *want = expected("key", 100000, "DK5 unknown snapshot, 99");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_keyed_design_check_fails_on_a_version_no_live_subvolume_can_see(void **state)
{
	struct fs *fs = populated("keyed");
	assert_int_equal(fs_delete_snapshot(fs, "/snap"), 0);
	fixture_assert_fs_ok(fs, "keyed snapshot deleted");
	struct btree_key key = BTREE_VERSIONED_KEY(100000, BTRFS_INODE_ITEM_KEY, 0, KEYED_SNAPSHOT_ID);
	btree_insert_item(fs_subvolume(fs, FS_TOP_SUBVOLUME)->tree, &fs->txn, &key, BTRFS_INODE_ITEM_SIZE, NULL);
	g_autofree char *want = expected("key", 100000, "DK5 a version no live subvolume can see, at snapshot 3");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_keyed_design_check_fails_on_a_whiteout_that_hides_nothing(void **state)
{
	struct fs *fs = populated("keyed");
	struct btree_key key = BTREE_VERSIONED_KEY(100000, BTRFS_INODE_ITEM_KEY, 0, KEYED_TOP_ID);
	struct btree *tree = fs_subvolume(fs, FS_TOP_SUBVOLUME)->tree;
	btree_item_set_whiteout(btree_insert_item(tree, &fs->txn, &key, 0, NULL), true);
	g_autofree char *want = expected("whiteout", 100000, "DK6 hides nothing, at snapshot 2");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

static void test_keyed_design_check_fails_on_a_whiteout_with_bytes(void **state)
{
	/* A whiteout over the root directory's INODE_REF, which only id 1
	 * wrote (at mkfs): it hides something, but carries bytes. */
	struct fs *fs = populated("keyed");
	struct btree_key key = BTREE_VERSIONED_KEY(FS_ROOT_DIR_INODE, BTRFS_INODE_REF_KEY, FS_ROOT_DIR_INODE, KEYED_TOP_ID);
	struct btree_path path;
	assert_false(btree_lookup(fs_subvolume(fs, FS_TOP_SUBVOLUME)->tree, &key, &path));
	struct btree *tree = fs_subvolume(fs, FS_TOP_SUBVOLUME)->tree;
	btree_item_set_whiteout(btree_insert_item(tree, &fs->txn, &key, 8, NULL), true);
	g_autofree char *want = expected("whiteout", FS_ROOT_DIR_INODE, "DK6 size, 8");
	fixture_assert_fs_corrupt(fs, want);
	fs_free(fs);
}

/* --- chk-designs: DK1 and DK2 hold by the key order (design_keyed.c) ----------- */

/* Breaks DK1 the way no design function can: writes a key's snapshot id
 * behind the btree module (as grow_first_item_behind_btree writes a size). */
static void set_snapshot_behind_btree(struct tree_block *leaf, uint32_t slot, uint32_t snapshot)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	leaf->items[slot].key.snapshot = snapshot;
#pragma GCC diagnostic pop
}

/* DK1 has no checker of its own: two versions of a base key at one
 * snapshot id are one key twice, which BT1 refuses. /snap/d/file-000 was
 * created at id 1 (mkfs) and written at the snapshot's id 3. */
static void test_keyed_design_two_versions_at_one_snapshot_id_fail_as_bt1(void **state)
{
	struct fs *fs = populated("keyed");
	struct inode_location where;
	assert_int_equal(fs_resolve(fs, "/snap/d/file-000", &where), 0);
	struct btree *tree = where.subvolume->tree;
	struct btree_key key = BTREE_VERSIONED_KEY(where.inode, BTRFS_INODE_ITEM_KEY, 0, KEYED_SNAPSHOT_ID);
	struct btree_path path;
	assert_true(btree_lookup(tree, &key, &path));
	struct tree_block *leaf = path.nodes[0];
	uint32_t slot = path.slots[0];
	assert_true(slot > 0);
	struct btree_key older = BTREE_VERSIONED_KEY(where.inode, BTRFS_INODE_ITEM_KEY, 0, 1);
	assert_int_equal(btree_key_compare(btree_item_key(&leaf->items[slot - 1]), &older), 0);
	set_snapshot_behind_btree(leaf, slot, 1); /* the snapshot's version now at id 1 too */
	g_autofree char *want = g_strdup_printf("corrupt leaf: tree %" G_GUINT64_FORMAT " block %" G_GUINT64_FORMAT
						", BT1 key (%" G_GUINT64_FORMAT " %u 0) at slot %u not above the previous",
						tree->id, leaf->bytenr, where.inode, BTRFS_INODE_ITEM_KEY, slot);
	fixture_assert_fs_corrupt(fs, want);
	set_snapshot_behind_btree(leaf, slot, KEYED_SNAPSHOT_ID);
	fixture_assert_fs_ok(fs, "the snapshot's version given back");
	fs_free(fs);
}

/* DK2 is the key order's: every version of a base key sorts after every
 * version of a smaller base key, whichever component differs. */
static void test_keyed_versions_of_one_base_key_sort_together(void **state)
{
	const struct btree_key base = BTREE_VERSIONED_KEY(300, BTRFS_INODE_ITEM_KEY, 7, 0);
	const struct btree_key above[] = {
		BTREE_VERSIONED_KEY(300, BTRFS_INODE_ITEM_KEY, 8, 0),
		BTREE_VERSIONED_KEY(300, BTRFS_INODE_REF_KEY, 0, 0),
		BTREE_VERSIONED_KEY(301, 0, 0, 0),
	};
	struct btree_key last = base;
	last.snapshot = UINT32_MAX;
	for (unsigned i = 0; i < G_N_ELEMENTS(above); i++)
		assert_true(btree_key_compare(&last, &above[i]) < 0);
	assert_true(btree_key_compare(&base, &last) < 0);
}

/* --- perf15access: a kept path's stamp (btree.h BT18) ------------------------------ */

/* BT18: a change to a tree's links that is not counted leaves the read
 * cursor stamped with the tree's links but off the root's path. */
static void test_read_cursor_stamped_but_off_the_root_fails_bt18(void **state)
{
	struct fs *fs = populated("btrfs");
	assert_int_equal(fs_read(fs, "/d/file-002", NULL), 0);
	struct btree_path *near = &fs->read_cursor.inode_near;
	struct btree *tree = fs->read_cursor.subvolume->tree;
	struct btree_key key = *btree_item_key(btree_path_item(near));
	assert_true(btree_lookup_kept(tree, &key, near)); /* stamped with the links as they are now */
	assert_true(near->links == tree->links);
	fixture_assert_fs_ok(fs, "a stamped cursor on the root's path");
	/* The next transaction's change of the inode copies the cursor's path
	 * and counts the copies: the stamp is no longer the tree's. */
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(fs_write(fs, "/d/file-002", 0, 100), 0);
	assert_false(btree_path_is_current(tree, near));
	assert_true(near->links != tree->links);
	fixture_assert_fs_ok(fs, "a stale stamp is not trusted");
	uint64_t counted = tree->links;
	tree->links = near->links; /* as if the copies had not been counted */
	fixture_assert_fs_corrupt(fs, "BT18");
	tree->links = counted;
	fixture_assert_fs_ok(fs, "the count back");
	fs_free(fs);
	(void)state;
}

/* --- lostatime: a lost atime gives way to a later write (atime_policy.c LA1) ------- */

/* LA1: an atime written after an update was lost to ENOSPC is the inode's;
 * a write that keeps the lost atime (fs_settime before LA1) leaves that
 * older atime hiding it from the mount's rule. */
static void test_lost_atime_check_fails_when_a_later_atime_write_leaves_it_in_force(void **state)
{
	struct fs_config config;
	fs_config_init(&config);
	struct fs *fs = fixture_fs_with_a_lost_atime(&config);
	fixture_make_metadata_room(fs);
	fixture_assert_fs_ok(fs, "a lost atime over its inode's unchanged one");
	struct inode_location where;
	assert_int_equal(fs_resolve(fs, FIXTURE_LOST_PATH, &where), 0);
	struct dirty_time probe = { .subvolume_id = where.subvolume->id, .inode = where.inode };
	const struct dirty_time *lost = g_hash_table_lookup(fs->lost_atimes, &probe);
	assert_non_null(lost);
	int64_t written = lost->atime + SECOND_NS;
	assert_int_equal(fs_reserve(fs, COWSIM_RESERVE_SETTIME), 0);
	btree_item_inode_for_write(fs_inode_item_for_write(fs, &where))->atime = written; /* no forgetting */
	fs_release(fs);
	g_autofree char *reason = g_strdup_printf("LA1 subvolume %" G_GUINT64_FORMAT ", atime %" G_GINT64_FORMAT
						  " lost over %" G_GINT64_FORMAT ", but %" G_GINT64_FORMAT
						  " written since: the lost one hides it",
						  where.subvolume->id, lost->atime, lost->stored, written);
	g_autofree char *want = expected("lost atime", where.inode, reason);
	fixture_assert_fs_corrupt(fs, want);
	g_hash_table_remove(fs->lost_atimes, &probe); /* what the write forgets */
	fixture_assert_fs_ok(fs, "the lost atime forgotten");
	fs_free(fs);
	(void)state;
}

/* --- healthy filesystems ------------------------------------------------------ */

static void test_derived_checkers_pass_mid_transaction_and_after_commits_in_both_designs(void **state)
{
	static const char *const designs[] = { "btrfs", "keyed" };
	for (unsigned d = 0; d < G_N_ELEMENTS(designs); d++) {
		struct fs *fs = populated(designs[d]);
		/* Changes without a commit: pending heads, changed chunks. */
		for (unsigned i = 0; i < FILES; i += 3) {
			g_autofree char *path = g_strdup_printf("/d/file-%03u", i);
			assert_int_equal(fs_write(fs, path, 4096, 70000), 0);
			fixture_assert_fs_ok(fs, "a write in the running transaction");
		}
		assert_int_equal(fs_unlink(fs, "/snap/d/file-004"), 0);
		fixture_assert_fs_ok(fs, "an unlink in the snapshot");
		assert_int_equal(fs_sync(fs), 0);
		fixture_assert_fs_ok(fs, "the commit");
		fs_free(fs);
	}
}

/* WB1: what the writeback queue holds for its metadata is the sum over its
 * writes, each as calc_inode_reservations() gives it: the sum miscounted,
 * and (chk-btree) one write's reservation unlike its length's with the sum
 * kept, each fails with its own half of WB1. */
static void test_fs_data_check_fails_when_the_delalloc_reservations_are_miscounted(void **state)
{
	(void)state;
	struct fs *fs = fixture_fs_new(16384, 8ull << 30);
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	assert_int_equal(fs_create(fs, "/a", 1024, &attributes), 0);
	assert_int_equal(fs_create(fs, "/b", 1 << 20, &attributes), 0);
	assert_int_equal(fs->pending_writes->len, 2);
	/* a small file: one extent and one csum leaf at 16 nodes, the inode's 8 */
	struct pending_write *small = &g_array_index(fs->pending_writes, struct pending_write, 0);
	assert_int_equal(small->reserved, 40 * 16384);
	fixture_assert_fs_ok(fs, "two writes queued");
	uint64_t reserved = fs->delalloc_reserved;
	fs_data_miscount_for_test(fs, 16384);
	g_autofree char *sum = g_strdup_printf("corrupt writeback queue: delalloc_reserved %" G_GUINT64_FORMAT
					       ", WB1 the pending writes sum to %" G_GUINT64_FORMAT,
					       reserved + 16384, reserved);
	fixture_assert_fs_corrupt(fs, sum);
	fs_data_miscount_for_test(fs, -16384);
	fixture_assert_fs_ok(fs, "the sum put back");
	small->reserved += 16384; /* and the sum with it: only the write is wrong */
	fs_data_miscount_for_test(fs, 16384);
	g_autofree char *one = g_strdup_printf("corrupt writeback queue: inode %" G_GUINT64_FORMAT
					       ", WB1 reserved %u bytes, %u expected for a write of 1024",
					       small->inode, 41 * 16384, 40 * 16384);
	fixture_assert_fs_corrupt(fs, one);
	small->reserved -= 16384;
	fs_data_miscount_for_test(fs, -16384);
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(fs->delalloc_reserved, 0);
	fixture_assert_fs_ok(fs, "written back");
	fs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_btree_check_fails_when_two_keys_of_a_leaf_are_out_of_order),
		cmocka_unit_test(test_btree_check_fails_when_a_pointer_key_is_not_its_childs_first_key),
		cmocka_unit_test(test_btree_check_fails_when_a_node_skips_a_level),
		cmocka_unit_test(test_btree_check_fails_when_a_leaf_holds_more_than_fits),
		cmocka_unit_test(test_btree_check_fails_when_a_child_is_younger_than_its_parent),
		cmocka_unit_test(test_btree_check_fails_on_an_owner_that_is_no_tree_ids_image),
		cmocka_unit_test(test_btree_check_fails_on_an_atime_marked_at_an_item_that_is_no_inode),
		cmocka_unit_test(test_btree_check_fails_on_an_overlay_in_the_block_that_is_not_a_small_marked_one),
		cmocka_unit_test(test_item_sharing_check_fails_on_an_atime_overlay_on_a_node),
		cmocka_unit_test(test_item_sharing_check_fails_when_a_leaf_lets_go_of_a_shared_array_uncounted),
		cmocka_unit_test(test_item_sharing_check_fails_when_a_freed_leaf_still_shares_its_array),
		cmocka_unit_test(test_btree_check_fails_on_an_overlay_over_no_item_array),
		cmocka_unit_test(test_item_sharing_check_fails_when_a_freed_leaf_keeps_its_overlay_without_its_array),
		cmocka_unit_test(test_payload_check_fails_when_two_items_point_at_one_payload),
		cmocka_unit_test(test_payload_check_fails_when_an_item_points_into_another_leafs_heap),
		cmocka_unit_test(test_payload_check_fails_when_the_heaps_live_bytes_are_not_the_payloads),
		cmocka_unit_test(test_payload_check_fails_when_the_heap_miscounts_the_mapped_data_extents),
		cmocka_unit_test(test_payload_check_fails_when_the_heaps_holes_are_not_on_its_lists),
		cmocka_unit_test(test_item_sharing_check_fails_when_two_arrays_hold_one_payload_heap),
		cmocka_unit_test(test_refs_check_fails_when_a_block_counts_a_reference_too_many),
		cmocka_unit_test(test_written_check_fails_on_a_node_the_transaction_wrote_and_did_not_list),
		cmocka_unit_test(test_refs_check_fails_when_a_data_extent_counts_a_reference_too_many),
		cmocka_unit_test(test_refs_check_fails_when_a_reachable_data_extent_is_freed),
		cmocka_unit_test(test_refs_check_fails_when_the_pending_heads_leave_address_order),
		cmocka_unit_test(test_refs_check_fails_when_the_pending_heads_are_miscounted),
		cmocka_unit_test(test_refs_check_fails_when_the_throttle_idle_bound_is_not_its_limit),
		cmocka_unit_test(test_refs_check_fails_when_a_reachable_block_is_freed),
		cmocka_unit_test(test_refs_check_fails_when_a_freed_block_still_counts_a_reference),
		cmocka_unit_test(test_refs_check_fails_when_a_freed_data_extent_still_counts_a_reference),
		cmocka_unit_test(test_refs_check_fails_on_a_dirty_block_in_no_queue),
		cmocka_unit_test(test_refs_check_fails_on_a_queued_block_not_dirty),
		cmocka_unit_test(test_refs_check_fails_when_a_block_is_queued_twice),
		cmocka_unit_test(test_refs_check_fails_when_two_pending_heads_share_an_address),
		cmocka_unit_test(test_refs_check_fails_on_an_entry_ahead_not_at_its_heads_address),
		cmocka_unit_test(test_refs_check_fails_on_an_entry_ahead_of_a_head_not_queued),
		cmocka_unit_test(test_refs_check_fails_on_an_entry_ahead_below_the_cursor),
		cmocka_unit_test(test_refs_check_fails_when_ahead_late_leaves_heap_order),
		cmocka_unit_test(test_namespace_check_fails_on_a_memo_that_leads_elsewhere),
		cmocka_unit_test(test_namespace_check_fails_on_a_memo_marked_checked_that_holds_a_file),
		cmocka_unit_test(test_a_walk_from_the_memos_levels_finds_what_a_walk_from_the_root_finds),
		cmocka_unit_test(test_namespace_check_fails_on_memo_levels_out_of_order),
		cmocka_unit_test(test_namespace_check_fails_on_a_read_prefix_past_the_deepest_level),
		cmocka_unit_test(test_namespace_check_fails_on_an_entry_outside_its_hash_window),
		cmocka_unit_test(test_read_cursor_is_taken_only_while_linked_from_the_root),
		cmocka_unit_test(test_a_read_through_the_cursor_finds_what_a_lookup_from_the_root_finds),
		cmocka_unit_test(test_a_read_after_its_leaf_was_copied_sees_the_copy_not_the_cursors_leaf),
		cmocka_unit_test(test_namespace_check_fails_on_a_read_cursor_off_the_roots_path),
		cmocka_unit_test(test_namespace_check_fails_on_a_directory_cursor_off_the_roots_path),
		cmocka_unit_test(test_a_create_through_the_directory_cursor_does_what_one_from_the_root_does),
		cmocka_unit_test(test_namespace_check_fails_on_a_stamped_directory_cursor_off_the_root),
		cmocka_unit_test(test_a_step_through_the_dir_cache_finds_what_a_lookup_in_the_tree_finds),
		cmocka_unit_test(test_dir_cache_check_fails_on_a_table_unlike_the_tree),
		cmocka_unit_test(test_dir_cache_check_fails_on_a_broken_block),
		cmocka_unit_test(test_steps_among_more_directories_than_tables_find_what_the_tree_finds),
		cmocka_unit_test(test_dir_cache_check_fails_on_two_tables_of_one_directory),
		cmocka_unit_test(test_dir_cache_check_fails_when_its_tables_take_more_than_dir_cache_bytes),
		cmocka_unit_test(test_dir_cache_holds_one_table_larger_than_dir_cache_bytes_alone),
		cmocka_unit_test(test_a_table_shared_by_a_snapshot_and_its_source_finds_what_the_tree_finds),
		cmocka_unit_test(test_dir_cache_check_fails_on_a_broken_lineage),
		cmocka_unit_test(test_namespace_check_fails_on_an_entry_of_the_wrong_type),
		cmocka_unit_test(test_a_walk_of_one_step_past_the_memo_finds_what_a_walk_from_the_root_finds),
		cmocka_unit_test(test_blockstore_check_fails_on_a_live_block_no_tree_reaches),
		cmocka_unit_test(test_blockstore_check_fails_when_two_live_blocks_share_an_address),
		cmocka_unit_test(test_blockstore_check_fails_when_a_chunk_is_used_past_its_length),
		cmocka_unit_test(test_blockstore_check_fails_when_a_chunk_grows_behind_the_totals),
		cmocka_unit_test(test_blockstore_check_fails_when_a_chunk_claims_mkfs_front_hole_behind_its_back),
		cmocka_unit_test(test_blockstore_check_fails_on_an_overcommit_unlike_the_unallocated_space),
		cmocka_unit_test(test_blockstore_check_fails_on_held_bytes_unlike_the_blocks),
		cmocka_unit_test(test_blockstore_check_fails_on_a_live_block_at_a_pinned_address),
		cmocka_unit_test(test_blockstore_check_fails_on_a_live_block_at_a_free_address),
		cmocka_unit_test(test_blockstore_check_fails_on_an_address_both_pinned_and_free),
		cmocka_unit_test(test_blockstore_check_fails_when_the_chunks_take_more_than_the_device),
		cmocka_unit_test(test_extent_tree_check_fails_when_a_live_block_loses_its_metadata_item),
		cmocka_unit_test(test_extent_tree_check_fails_when_a_metadata_item_counts_one_ref_too_many),
		cmocka_unit_test(test_extent_tree_check_fails_when_a_written_ref_count_is_not_the_blocks),
		cmocka_unit_test(test_extent_tree_check_fails_on_a_keyed_tree_block_ref_past_the_inline_room),
		cmocka_unit_test(test_extent_tree_check_fails_when_a_data_extent_loses_its_extent_item),
		cmocka_unit_test(test_extent_tree_check_fails_when_an_extent_item_has_a_data_ref_too_many),
		cmocka_unit_test(test_extent_tree_check_fails_on_an_item_of_no_block_or_extent),
		cmocka_unit_test(test_extent_tree_check_fails_when_a_block_group_item_says_other_used_bytes),
		cmocka_unit_test(test_root_tree_check_fails_when_a_snapshot_loses_its_root_backref),
		cmocka_unit_test(test_root_tree_check_fails_when_a_root_ref_and_its_backref_differ),
		cmocka_unit_test(test_root_tree_check_fails_when_a_live_tree_has_no_root_item),
		cmocka_unit_test(test_root_tree_check_fails_on_a_root_item_of_a_deleted_snapshot),
		cmocka_unit_test(test_root_tree_check_fails_when_the_uuid_tree_forgets_a_snapshot),
		cmocka_unit_test(test_root_tree_check_fails_on_an_item_of_a_type_it_never_holds),
		cmocka_unit_test(test_csum_tree_check_fails_when_data_loses_its_checksums),
		cmocka_unit_test(test_csum_tree_check_fails_on_checksums_of_no_data_extent),
		cmocka_unit_test(test_csum_tree_check_fails_on_checksums_not_at_a_sector),
		cmocka_unit_test(test_free_space_tree_check_fails_when_a_group_says_other_free_bytes),
		cmocka_unit_test(test_free_space_tree_check_fails_when_a_group_loses_its_info),
		cmocka_unit_test(test_btrfs_design_check_fails_on_a_snapshot_id_in_a_subvolume_tree),
		cmocka_unit_test(test_keyed_design_check_fails_when_a_live_subvolume_holds_a_parent_id),
		cmocka_unit_test(test_keyed_design_check_fails_on_a_version_at_an_unknown_snapshot),
		cmocka_unit_test(test_keyed_design_check_fails_on_a_version_no_live_subvolume_can_see),
		cmocka_unit_test(test_keyed_design_check_fails_on_a_whiteout_that_hides_nothing),
		cmocka_unit_test(test_keyed_design_check_fails_on_a_whiteout_with_bytes),
		cmocka_unit_test(test_keyed_design_two_versions_at_one_snapshot_id_fail_as_bt1),
		cmocka_unit_test(test_keyed_versions_of_one_base_key_sort_together),
		cmocka_unit_test(test_derived_checkers_pass_mid_transaction_and_after_commits_in_both_designs),
		cmocka_unit_test(test_fs_data_check_fails_when_the_delalloc_reservations_are_miscounted),
		cmocka_unit_test(test_read_cursor_stamped_but_off_the_root_fails_bt18),
		cmocka_unit_test(test_lost_atime_check_fails_when_a_later_atime_write_leaves_it_in_force),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
