/*
 * model/design_refs.c - what the designs that share tree blocks by
 * reference counts (btrfs, keyed) have in common: cloning a root, telling
 * whether a leaf is private, and who owns which bytes.
 */
#include "design.h"

#include "blockstore.h"

struct tree_block *fs_clone_root(struct fs *fs, struct tree_block *source, uint64_t new_id)
{
	struct tree_block *root = btree_copy_block(&fs->txn, new_id, source);
	refs_inc_children(&fs->txn, root, false);
	return root;
}

bool fs_leaf_is_private(const struct fs *fs, const struct btree *tree, const struct btree_key *key)
{
	struct btree_path path;
	btree_lookup(tree, key, &path);
	if (path.nodes[0]->generation == fs->txn.transid)
		return true;
	for (unsigned level = 0; level < path.levels; level++)
		if (tree_block_refs(path.nodes[level]) > 1)
			return false;
	return true;
}

/*
 * Exclusive and shared bytes per subvolume, as qgroups report them: a tree
 * block or data extent reached from one subvolume only is exclusive to it,
 * one reached from several is shared by each. Two walks: the first counts the
 * subvolumes reaching each thing, the second sums per subvolume.
 */
struct usage_walk {
	GHashTable *reachers;         /* block or extent -> number of subvolumes reaching it */
	GHashTable *seen;             /* this subvolume's walk */
	struct subvolume_usage *sum;  /* NULL in the counting walk */
	uint32_t nodesize;
};

static void visit_thing(struct usage_walk *w, const void *thing, uint64_t bytes)
{
	if (!g_hash_table_add(w->seen, (gpointer)thing))
		return;
	uintptr_t count = GPOINTER_TO_SIZE(g_hash_table_lookup(w->reachers, thing));
	if (!w->sum) {
		g_hash_table_insert(w->reachers, (gpointer)thing, GSIZE_TO_POINTER(count + 1));
		return;
	}
	if (count > 1)
		w->sum->shared_bytes += bytes;
	else
		w->sum->exclusive_bytes += bytes;
}

static void walk_usage(struct usage_walk *w, const struct tree_block *block)
{
	if (g_hash_table_contains(w->seen, block))
		return;
	visit_thing(w, block, w->nodesize);
	struct btree_leaf_cursor cursor;
	if (!block->level)
		btree_leaf_cursor_init(&cursor, block, 0);
	for (uint32_t i = 0; i < block->nritems; i++) {
		if (block->level) {
			walk_usage(w, block->children[i].block);
			continue;
		}
		const struct btree_item *item = btree_leaf_cursor_next(&cursor);
		if (btree_item_key(item)->type != BTRFS_EXTENT_DATA_KEY || !btree_item_file_extent(item)->extent)
			continue;
		const struct data_extent *extent = btree_item_file_extent(item)->extent;
		visit_thing(w, extent, extent->num_bytes);
	}
}

GArray *fs_usage_by_reachability(const struct fs *fs)
{
	g_autoptr(GHashTable) reachers = g_hash_table_new(NULL, NULL);
	struct usage_walk w = { .reachers = reachers, .nodesize = blockstore_nodesize(fs->store) };
	GArray *usage = g_array_new(FALSE, TRUE, sizeof(struct subvolume_usage));
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < fs->subvolumes->len; i++) {
			const struct subvolume *sv = fs->subvolumes->pdata[i];
			if (sv->deleted)
				continue;
			struct subvolume_usage u = { .id = sv->id, .path = g_strdup(sv->path), .readonly = sv->readonly };
			if (pass == 1) {
				g_array_append_val(usage, u);
				w.sum = &g_array_index(usage, struct subvolume_usage, usage->len - 1);
			} else {
				g_free(u.path);
			}
			w.seen = g_hash_table_new(NULL, NULL);
			walk_usage(&w, sv->tree->root);
			g_hash_table_unref(w.seen);
			if (w.sum)
				w.sum->referenced_bytes = w.sum->exclusive_bytes + w.sum->shared_bytes;
		}
	}
	return usage;
}


/*
 * Reclaim of a set of subvolumes: first every block and data extent reachable
 * from a live subvolume outside the set (or its side table) is marked; then
 * the set's trees are walked and what is unmarked is summed once. Below a
 * marked block everything is marked, so the walk stops there.
 */
struct reclaim_walk {
	GHashTable *outside;          /* blocks and extents reached from outside the set */
	GHashTable *counted;          /* those summed already */
	struct fs_reclaim *out;       /* NULL while marking */
	uint32_t nodesize;
};

/* True the first time `thing` is met in this pass: while marking, not marked
 * yet; while summing, neither marked nor summed yet. */
static bool reclaim_first_visit(struct reclaim_walk *w, const void *thing)
{
	if (!w->out)
		return g_hash_table_add(w->outside, (gpointer)thing);
	return !g_hash_table_contains(w->outside, thing) && g_hash_table_add(w->counted, (gpointer)thing);
}

static void reclaim_walk_tree(struct reclaim_walk *w, const struct tree_block *block)
{
	if (!block || !reclaim_first_visit(w, block))
		return;
	if (w->out)
		w->out->metadata_bytes += w->nodesize;
	struct btree_leaf_cursor cursor;
	if (!block->level)
		btree_leaf_cursor_init(&cursor, block, 0);
	for (uint32_t i = 0; i < block->nritems; i++) {
		if (block->level) {
			reclaim_walk_tree(w, block->children[i].block);
			continue;
		}
		const struct btree_item *item = btree_leaf_cursor_next(&cursor);
		if (btree_item_key(item)->type != BTRFS_EXTENT_DATA_KEY)
			continue;
		const struct data_extent *extent = btree_item_file_extent(item)->extent;
		if (extent && reclaim_first_visit(w, extent) && w->out)
			w->out->data_bytes += extent->num_bytes;
	}
}

static bool in_set(struct subvolume *const *set, unsigned n, const struct subvolume *sv)
{
	for (unsigned i = 0; i < n; i++)
		if (set[i] == sv)
			return true;
	return false;
}

void fs_reclaim_by_reachability(const struct fs *fs, struct subvolume *const *set, unsigned n,
				struct fs_reclaim *out)
{
	g_autoptr(GHashTable) outside = g_hash_table_new(NULL, NULL);
	g_autoptr(GHashTable) counted = g_hash_table_new(NULL, NULL);
	struct reclaim_walk w = { .outside = outside, .counted = counted,
				  .nodesize = blockstore_nodesize(fs->store) };
	*out = (struct fs_reclaim){ 0 };
	for (int pass = 0; pass < 2; pass++) {
		w.out = pass ? out : NULL;
		for (unsigned i = 0; i < fs->subvolumes->len; i++) {
			const struct subvolume *sv = fs->subvolumes->pdata[i];
			if (sv->deleted || in_set(set, n, sv) != (pass == 1))
				continue;
			reclaim_walk_tree(&w, sv->tree->root);
			reclaim_walk_tree(&w, sv->atime_tree.root);
		}
	}
}
