/*
 * model/fs_walk.c - every tree block handed to a visitor, for drawings.
 *
 * How it works
 *   The walk goes through the trees in the order fs.h gives and, in each,
 *   down from the root, depth first, children in key order:
 *
 *     tree 5   root(L1) --> leaf A, leaf B        visits: root, A, B
 *     tree 256 root'(L1) --> leaf A, leaf B       visits: root', A, B (again)
 *
 *   Each visit describes one block (struct fs_walk_block) with its items'
 *   keys and sizes, or its children's keys and addresses, copied into a
 *   buffer reused from block to block. The visitor decides what a second
 *   visit means: a drawing answers FS_WALK_SKIP_CHILDREN to draw a shared
 *   subtree once and only add the edge.
 *
 * Invariants
 *   FW1 the walk reads the trees and changes nothing (the fs is const);
 *   FW2 a block's entries are in its key order, nritems of them;
 *   FW3 parent is 0 exactly at a tree's root, and depth counts the edges from it;
 *   FW4 a deleted snapshot's tree is not walked, and the keyed design's
 *      shared tree is walked once.
 */
#include "fs_internal.h"

struct walk_state {
	fs_walk_fn visit;
	void *opaque;
	GArray *entries;              /* struct fs_walk_entry, reused per block */
	const struct btree *tree;
	const char *tree_path;
	bool tree_readonly;
};

static void fill_entries(struct walk_state *st, const struct tree_block *b)
{
	g_array_set_size(st->entries, b->nritems);
	struct btree_leaf_cursor cursor;
	if (!b->level)
		btree_leaf_cursor_init(&cursor, b, 0);
	for (uint32_t i = 0; i < b->nritems; i++) {
		struct fs_walk_entry *e = &g_array_index(st->entries, struct fs_walk_entry, i);
		const struct btree_item *item = b->level ? NULL : btree_leaf_cursor_next(&cursor);
		const struct btree_key *key = b->level ? &b->children[i].key : btree_item_key(item);
		*e = (struct fs_walk_entry){ .objectid = key->objectid, .offset = key->offset, .type = key->type,
					     .snapshot = key->snapshot };
		if (b->level)
			e->child = b->children[i].block->bytenr;
		else
			e->size = btree_item_size(item);
	}
}

/* Visits `b` and, unless told otherwise, its children. False: stop. */
static bool walk_block(struct walk_state *st, const struct tree_block *b, uint64_t parent, uint32_t depth)
{
	fill_entries(st, b);
	struct fs_walk_block info = {
		.tree_id = st->tree->id,
		.category = tree_category_of(st->tree->id),
		.tree_path = st->tree_path,
		.tree_readonly = st->tree_readonly,
		.parent = parent,
		.depth = depth,
		.bytenr = b->bytenr,
		.owner = tree_block_owner(b),
		.generation = b->generation,
		.level = b->level,
		.refs = tree_block_refs(b),
		.full_backref = b->flags & TREE_BLOCK_FULL_BACKREF,
		.nritems = b->nritems,
		.entries = (const struct fs_walk_entry *)(void *)st->entries->data,
	};
	enum fs_walk_answer answer = st->visit(&info, st->opaque);
	if (answer == FS_WALK_STOP)
		return false;
	if (answer == FS_WALK_SKIP_CHILDREN || !b->level)
		return true;
	for (uint32_t i = 0; i < b->nritems; i++)
		if (!walk_block(st, b->children[i].block, b->bytenr, depth + 1))
			return false;
	return true;
}

static bool walk_tree(struct walk_state *st, const struct btree *tree, const char *path, bool readonly)
{
	if (!tree->root)
		return true;
	st->tree = tree;
	st->tree_path = path;
	st->tree_readonly = readonly;
	return walk_block(st, tree->root, 0, 0);
}

static bool walk_subvolumes(struct walk_state *st, const struct fs *fs)
{
	g_autoptr(GHashTable) walked = g_hash_table_new(NULL, NULL);
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted)
			continue;
		/* A tree the design shares between subvolumes is walked once,
		 * under no subvolume's path. */
		bool own = sv->tree == &sv->own_tree;
		if (g_hash_table_add(walked, sv->tree) && !walk_tree(st, sv->tree, own ? sv->path : NULL, sv->readonly))
			return false;
		if (!walk_tree(st, &sv->atime_tree, sv->path, sv->readonly))
			return false;
	}
	return true;
}

bool fs_walk(const struct fs *fs, fs_walk_fn visit, void *opaque)
{
	g_autoptr(GArray) entries = g_array_new(false, false, sizeof(struct fs_walk_entry));
	struct walk_state st = { .visit = visit, .opaque = opaque, .entries = entries };
	if (!walk_subvolumes(&st, fs))
		return false;
	const struct btree *globals[] = { &fs->root_tree, &fs->extent_tree, &fs->dev_tree, &fs->csum_tree,
					  &fs->uuid_tree, &fs->free_space_tree, &fs->data_reloc_tree };
	for (size_t i = 0; i < G_N_ELEMENTS(globals); i++)
		if (!walk_tree(&st, globals[i], NULL, false))
			return false;
	return true;
}
