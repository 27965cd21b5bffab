/*
 * model/root_tree_check.c - the root and uuid trees against the trees and
 * subvolumes alive (btrfs check's root-tree and root-ref passes).
 *
 * Invariants:
 *  RT1 the root tree holds one ROOT_ITEM (id, 132, 0) of BTRFS_ROOT_ITEM_SIZE
 *      for each live tree but itself: the extent, dev, csum, uuid, free-space
 *      and data-reloc trees, each live subvolume (in the keyed design too,
 *      where they share one tree) and each live atime side table; no other;
 *  RT2 each live subvolume but the top one has one ROOT_BACKREF (id, 144,
 *      parent) and its pair ROOT_REF (parent, 156, id), both 18 bytes and the
 *      same name; every ROOT_REF and ROOT_BACKREF has its pair, names a live
 *      subvolume as the child and a subvolume as the parent;
 *  RT3 the root tree holds nothing else but its directory's items (objectid
 *      6: INODE_ITEM, INODE_REF, DIR_ITEM "default");
 *  RT4 the uuid tree holds one UUID_KEY_SUBVOL per live subvolume, naming it
 *      in its offset, and nothing else.
 */
#include "derived_check.h"

#include "constants.h"
#include "fs_internal.h"

struct root_walk {
	const struct fs *fs;
	GHashTable *root_items;       /* tree id (uint64 *) -> the item */
	GHashTable *backrefs;         /* child id -> the ROOT_BACKREF item */
	GHashTable *refs;             /* child id -> the ROOT_REF item */
	GError **error;
	bool ok;
};

static bool root_item(const struct btree_item *item, void *opaque)
{
	struct root_walk *w = opaque;
	const struct btree_key *k = btree_item_key(item);
	switch (k->type) {
	case BTRFS_ROOT_ITEM_KEY:
		if (k->offset || btree_item_size(item) != BTRFS_ROOT_ITEM_SIZE)
			return w->ok = derived_corrupt(w->error, "root item", k->objectid, "RT1 offset %" G_GUINT64_FORMAT
						       " size %u", k->offset, btree_item_size(item));
		g_hash_table_insert(w->root_items, (gpointer)&k->objectid, (gpointer)item);
		return true;
	case BTRFS_ROOT_BACKREF_KEY:
		if (g_hash_table_contains(w->backrefs, &k->objectid))
			return w->ok = derived_corrupt(w->error, "root backref", k->objectid, "RT2 a second parent, %"
						       G_GUINT64_FORMAT, k->offset);
		g_hash_table_insert(w->backrefs, (gpointer)&k->objectid, (gpointer)item);
		return true;
	case BTRFS_ROOT_REF_KEY:
		if (g_hash_table_contains(w->refs, &k->offset))
			return w->ok = derived_corrupt(w->error, "root ref", k->offset, "RT2 a second parent, %"
						       G_GUINT64_FORMAT, k->objectid);
		g_hash_table_insert(w->refs, (gpointer)&k->offset, (gpointer)item);
		return true;
	default:
		if (k->objectid == BTRFS_ROOT_TREE_DIR_OBJECTID &&
		    (k->type == BTRFS_INODE_ITEM_KEY || k->type == BTRFS_INODE_REF_KEY || k->type == BTRFS_DIR_ITEM_KEY))
			return true;
		return w->ok = derived_corrupt(w->error, "root tree item", k->objectid, "RT3 unexpected key type, %u",
					       k->type);
	}
}

/* RT1: the trees that should have a ROOT_ITEM, each taken out of root_items. */
static bool check_root_items(struct root_walk *w)
{
	static const uint64_t global[] = { BTRFS_EXTENT_TREE_OBJECTID, BTRFS_DEV_TREE_OBJECTID,
					   BTRFS_CSUM_TREE_OBJECTID, BTRFS_UUID_TREE_OBJECTID,
					   BTRFS_FREE_SPACE_TREE_OBJECTID, BTRFS_DATA_RELOC_TREE_OBJECTID };
	g_autoptr(GArray) want = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	g_array_append_vals(want, global, G_N_ELEMENTS(global));
	for (unsigned i = 0; i < w->fs->subvolumes->len; i++) {
		const struct subvolume *sv = w->fs->subvolumes->pdata[i];
		if (sv->deleted)
			continue;
		g_array_append_val(want, sv->id);
		if (sv->atime_tree.root)
			g_array_append_val(want, sv->atime_tree.id);
	}
	for (unsigned i = 0; i < want->len; i++) {
		uint64_t id = g_array_index(want, uint64_t, i);
		if (!g_hash_table_remove(w->root_items, &id))
			return derived_corrupt(w->error, "root item", id, "RT1 missing for a live tree");
	}
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, w->root_items);
	if (g_hash_table_iter_next(&iter, &key, NULL))
		return derived_corrupt(w->error, "root item", *(const uint64_t *)key, "RT1 no such live tree");
	return true;
}

/* RT2 for one live subvolume: its backref and ref, paired. */
static bool check_subvolume_refs(struct root_walk *w, const struct subvolume *sv)
{
	const struct btree_item *back = g_hash_table_lookup(w->backrefs, &sv->id);
	const struct btree_item *ref = g_hash_table_lookup(w->refs, &sv->id);
	if (sv->id == FS_TOP_SUBVOLUME)
		return back || ref ? derived_corrupt(w->error, "root backref", sv->id, "RT2 the top subvolume has a parent")
				   : true;
	if (!back)
		return derived_corrupt(w->error, "root backref", sv->id, "RT2 missing for a live subvolume");
	if (!ref)
		return derived_corrupt(w->error, "root ref", sv->id, "RT2 missing, its backref names parent %"
				       G_GUINT64_FORMAT, btree_item_key(back)->offset);
	if (btree_item_key(ref)->objectid != btree_item_key(back)->offset)
		return derived_corrupt(w->error, "root ref", sv->id, "RT2 parent %" G_GUINT64_FORMAT
				       ", its backref names %" G_GUINT64_FORMAT, btree_item_key(ref)->objectid,
				       btree_item_key(back)->offset);
	if (btree_item_size(ref) != btree_item_size(back) || btree_item_size(ref) <= BTRFS_ROOT_REF_SIZE)
		return derived_corrupt(w->error, "root ref", sv->id, "RT2 size %u, its backref's %u",
				       btree_item_size(ref), btree_item_size(back));
	if (!fs_subvolume(w->fs, btree_item_key(back)->offset))
		return derived_corrupt(w->error, "root backref", sv->id, "RT2 no such parent, %" G_GUINT64_FORMAT,
				       btree_item_key(back)->offset);
	g_hash_table_remove(w->backrefs, &sv->id);
	g_hash_table_remove(w->refs, &sv->id);
	return true;
}

static bool check_root_refs(struct root_walk *w)
{
	for (unsigned i = 0; i < w->fs->subvolumes->len; i++) {
		const struct subvolume *sv = w->fs->subvolumes->pdata[i];
		if (!sv->deleted && !check_subvolume_refs(w, sv))
			return false;
	}
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, w->backrefs);
	if (g_hash_table_iter_next(&iter, &key, NULL))
		return derived_corrupt(w->error, "root backref", *(const uint64_t *)key, "RT2 no such live subvolume");
	g_hash_table_iter_init(&iter, w->refs);
	if (g_hash_table_iter_next(&iter, &key, NULL))
		return derived_corrupt(w->error, "root ref", *(const uint64_t *)key, "RT2 no such live subvolume");
	return true;
}

struct uuid_walk {
	GHashTable *named;            /* subvolume ids the uuid tree names */
	GError **error;
	bool ok;
};

static bool uuid_item(const struct btree_item *item, void *opaque)
{
	struct uuid_walk *w = opaque;
	if (btree_item_key(item)->type != BTRFS_UUID_KEY_SUBVOL || btree_item_size(item) != BTRFS_UUID_ITEM_SIZE)
		return w->ok = derived_corrupt(w->error, "uuid item", btree_item_key(item)->objectid,
					       "RT4 type %u size %u", btree_item_key(item)->type,
					       btree_item_size(item));
	if (!g_hash_table_add(w->named, (gpointer)&btree_item_key(item)->offset))
		return w->ok = derived_corrupt(w->error, "uuid item", btree_item_key(item)->offset, "RT4 a second one");
	return true;
}

static bool check_uuid_tree(const struct fs *fs, GError **error)
{
	g_autoptr(GHashTable) named = g_hash_table_new(g_int64_hash, g_int64_equal);
	struct uuid_walk w = { named, error, true };
	derived_visit_tree(&fs->uuid_tree, uuid_item, &w);
	if (!w.ok)
		return false;
	unsigned live = 0;
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted)
			continue;
		live++;
		if (!g_hash_table_contains(named, &sv->id))
			return derived_corrupt(error, "uuid item", sv->id, "RT4 missing for a live subvolume");
	}
	if (g_hash_table_size(named) != live)
		return derived_corrupt(error, "uuid item", 0, "RT4 items for subvolumes not alive, %u",
				       g_hash_table_size(named) - live);
	return true;
}

bool root_tree_check(const struct fs *fs, GError **error)
{
	struct root_walk w = { .fs = fs, .error = error, .ok = true };
	w.root_items = g_hash_table_new(g_int64_hash, g_int64_equal);
	w.backrefs = g_hash_table_new(g_int64_hash, g_int64_equal);
	w.refs = g_hash_table_new(g_int64_hash, g_int64_equal);
	derived_visit_tree(&fs->root_tree, root_item, &w);
	bool ok = w.ok && check_root_items(&w) && check_root_refs(&w) && check_uuid_tree(fs, error);
	g_hash_table_unref(w.root_items);
	g_hash_table_unref(w.backrefs);
	g_hash_table_unref(w.refs);
	return ok;
}
