/*
 * model/key_check.c - the snapshot field of every key, and the keyed
 * design's snapshot ids, visibility and whiteouts (model/subvol.c).
 *
 * In the btrfs design every key's snapshot field is 0 and nothing is a
 * whiteout. In the keyed design one tree (id 5) holds every subvolume's
 * items, each key carrying the snapshot id that wrote it; ids form a tree in
 * fs->snapshot_nodes, and a subvolume sees the versions at its id and its
 * ancestors, the deepest winning.
 *
 * Invariants:
 *  KY1 keys of the keyed tree carry a snapshot id the snapshot tree has (not
 *      0), a whiteout has 0 bytes; every other key carries 0 and is no
 *      whiteout;
 *  KY2 the snapshot tree: id 0 unused, id 1 its root, every other id's
 *      parent is an older id and its depth one more than the parent's; live
 *      subvolumes have distinct ids, and no id has a live subvolume's id as
 *      its parent (a snapshot moves its source to a new id, so what a live
 *      subvolume writes is never shared); in the btrfs design there are none;
 *  KY3 every version's id is a live subvolume's or an ancestor of one:
 *      deleting a snapshot drops what no live subvolume can see;
 *  KY4 a whiteout hides something: from its id's parent, the key's visible
 *      version exists and is no whiteout.
 */
#include "derived_check.h"

#include "constants.h"
#include "fs_internal.h"

static const struct snapshot_node *node(const struct fs *fs, uint32_t id)
{
	return &g_array_index(fs->snapshot_nodes, struct snapshot_node, id);
}

static bool keyed(const struct fs *fs)
{
	return fs->config.design == FS_DESIGN_KEYED;
}

/* KY1 over one leaf. */
static bool check_leaf_keys(const struct fs *fs, const struct tree_block *leaf, GError **error)
{
	bool in_keyed_tree = keyed(fs) && leaf->owner == FS_TOP_SUBVOLUME;
	for (uint32_t i = 0; i < leaf->nritems; i++) {
		const struct btree_item *item = &leaf->items[i];
		uint32_t id = item->key.snapshot;
		if (!in_keyed_tree && (id || item->whiteout))
			return derived_corrupt(error, "key", item->key.objectid, "KY1 snapshot %u%s in tree %" G_GUINT64_FORMAT,
					       id, item->whiteout ? ", a whiteout," : "", leaf->owner);
		if (in_keyed_tree && (!id || id >= fs->snapshot_nodes->len))
			return derived_corrupt(error, "key", item->key.objectid, "KY1 unknown snapshot, %u", id);
		if (item->whiteout && item->size)
			return derived_corrupt(error, "whiteout", item->key.objectid, "KY1 size, %u", item->size);
	}
	return true;
}

/* KY2; fills `alive` with the live ids and their ancestors (KY3). */
static bool check_snapshot_tree(const struct fs *fs, GHashTable *alive, GError **error)
{
	if (!keyed(fs)) {
		for (unsigned i = 0; i < fs->subvolumes->len; i++) {
			const struct subvolume *sv = fs->subvolumes->pdata[i];
			if (sv->snapshot)
				return derived_corrupt(error, "snapshot", sv->snapshot, "KY2 subvolume %" G_GUINT64_FORMAT
						       " has one in the btrfs design", sv->id);
		}
		return fs->snapshot_nodes->len ? derived_corrupt(error, "snapshot", 0, "KY2 ids in the btrfs design, %u",
								 fs->snapshot_nodes->len)
					       : true;
	}
	g_autoptr(GHashTable) parents = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (uint32_t id = 1; id < fs->snapshot_nodes->len; id++) {
		const struct snapshot_node *n = node(fs, id);
		uint32_t depth = n->parent ? node(fs, n->parent)->depth + 1 : 0;
		if ((id == 1) != (n->parent == 0) || n->parent >= id || n->depth != depth)
			return derived_corrupt(error, "snapshot", id, "KY2 parent %u depth %u", n->parent, n->depth);
		g_hash_table_add(parents, GUINT_TO_POINTER(n->parent));
	}
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted)
			continue;
		if (!sv->snapshot || sv->snapshot >= fs->snapshot_nodes->len)
			return derived_corrupt(error, "snapshot", sv->snapshot, "KY2 not an id, of subvolume %" G_GUINT64_FORMAT,
					       sv->id);
		if (g_hash_table_contains(parents, GUINT_TO_POINTER(sv->snapshot)))
			return derived_corrupt(error, "snapshot", sv->snapshot, "KY2 a parent, the id of live subvolume %"
					       G_GUINT64_FORMAT, sv->id);
		if (g_hash_table_contains(alive, GUINT_TO_POINTER(sv->snapshot)))
			return derived_corrupt(error, "snapshot", sv->snapshot, "KY2 shared by live subvolume %"
					       G_GUINT64_FORMAT, sv->id);
		for (uint32_t id = sv->snapshot; id; id = node(fs, id)->parent)
			g_hash_table_add(alive, GUINT_TO_POINTER(id));
	}
	return true;
}

/* The version of a base key `from` sees, whiteouts included (as subvol.c picks it). */
struct version_seen {
	const struct fs *fs;
	uint32_t from;
	const struct btree_item *best;
};

static bool pick(const struct btree_item *item, void *opaque)
{
	struct version_seen *v = opaque;
	for (uint32_t s = v->from; s; s = node(v->fs, s)->parent) {
		if (s != item->key.snapshot)
			continue;
		if (!v->best || node(v->fs, s)->depth > node(v->fs, v->best->key.snapshot)->depth)
			v->best = item;
		break;
	}
	return true;
}

struct keyed_walk {
	const struct fs *fs;
	GHashTable *alive;
	GError **error;
	bool ok;
};

static bool keyed_item(const struct btree_item *item, void *opaque)
{
	struct keyed_walk *w = opaque;
	uint32_t id = item->key.snapshot;
	if (!g_hash_table_contains(w->alive, GUINT_TO_POINTER(id)))
		return w->ok = derived_corrupt(w->error, "key", item->key.objectid,
					       "KY3 a version no live subvolume can see, at snapshot %u", id);
	if (!item->whiteout)
		return true;
	struct btree_key first = item->key, last = item->key;
	first.snapshot = 0;
	last.snapshot = UINT32_MAX;
	struct version_seen v = { w->fs, node(w->fs, id)->parent, NULL };
	btree_visit_range(&w->fs->keyed_tree, &first, &last, pick, &v);
	if (!v.best || v.best->whiteout)
		return w->ok = derived_corrupt(w->error, "whiteout", item->key.objectid,
					       "KY4 hides nothing, at snapshot %u", id);
	return true;
}

bool key_check(const struct fs *fs, GHashTable *live, GError **error)
{
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, live);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		const struct tree_block *block = key;
		if (!block->level && !check_leaf_keys(fs, block, error))
			return false;
	}
	g_autoptr(GHashTable) alive = g_hash_table_new(g_direct_hash, g_direct_equal);
	if (!check_snapshot_tree(fs, alive, error))
		return false;
	if (!keyed(fs))
		return true;
	struct keyed_walk w = { fs, alive, error, true };
	derived_visit_tree(&fs->keyed_tree, keyed_item, &w);
	return w.ok;
}
