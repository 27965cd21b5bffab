/*
 * model/fs_snapshot.c - snapshots, their deletion, and who owns which bytes.
 *
 * A snapshot is Rodeh's lazy clone, as btrfs's create_pending_snapshot()
 * makes it:
 *
 *     before                     after snapshot S of tree A
 *     A:root(refs 1)             A:root        S:root'  (a copy, owner S)
 *       /     \                    /    \______/   \
 *     n1       n2               n1(refs 2)      n2(refs 2)
 *
 * Only the root is copied; its children gain one reference each. Nothing
 * below them changes until one side writes, and then cow_block() and
 * refs_update_for_cow() move the counts down one level per copy.
 *
 * The snapshot is taken at a commit boundary (btrfs creates pending
 * snapshots inside the commit): the model commits, copies the root, adds the
 * directory entry and the root tree's items, and commits again.
 */
#include "fs_internal.h"

#include <errno.h>
#include <string.h>

#include "blockstore.h"

static struct tree_block *copy_root(struct fs *fs, struct tree_block *source, uint64_t new_id)
{
	struct tree_block *root = btree_copy_block(&fs->txn, new_id, source);
	refs_inc_children(&fs->txn, root, false);
	return root;
}

static void add_root_tree_items(struct fs *fs, uint64_t id, uint64_t parent_id, uint16_t name_len)
{
	struct btree_key key = { id, 0, BTRFS_ROOT_ITEM_KEY };
	btree_insert_item(&fs->root_tree, &fs->txn, &key, BTRFS_ROOT_ITEM_SIZE, NULL);
	key = (struct btree_key){ id, parent_id, BTRFS_ROOT_BACKREF_KEY };
	btree_insert_item(&fs->root_tree, &fs->txn, &key, BTRFS_ROOT_REF_SIZE + name_len, NULL);
	key = (struct btree_key){ parent_id, id, BTRFS_ROOT_REF_KEY };
	btree_insert_item(&fs->root_tree, &fs->txn, &key, BTRFS_ROOT_REF_SIZE + name_len, NULL);
	key = (struct btree_key){ 0x5eed + id, id, BTRFS_UUID_KEY_SUBVOL };
	btree_insert_item(&fs->uuid_tree, &fs->txn, &key, BTRFS_UUID_ITEM_SIZE, NULL);
}

static void remove_root_tree_items(struct fs *fs, uint64_t id, uint64_t parent_id)
{
	struct btree_key keys[] = {
		{ id, 0, BTRFS_ROOT_ITEM_KEY },
		{ id, parent_id, BTRFS_ROOT_BACKREF_KEY },
		{ parent_id, id, BTRFS_ROOT_REF_KEY },
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(keys); i++)
		btree_delete_item(&fs->root_tree, &fs->txn, &keys[i]);
	struct btree_key uuid = { 0x5eed + id, id, BTRFS_UUID_KEY_SUBVOL };
	btree_delete_item(&fs->uuid_tree, &fs->txn, &uuid);
}

int fs_snapshot(struct fs *fs, const char *source, const char *dest, bool readonly)
{
	struct inode_location src;
	struct name_location at;
	int ret = fs_resolve(fs, source, &src);
	if (ret)
		return ret;
	if (src.inode != FS_ROOT_DIR_INODE)
		return -EINVAL; /* only a subvolume can be snapshotted */
	if ((ret = fs_resolve_parent(fs, dest, &at)))
		return ret;
	if (at.dir.subvolume->readonly)
		return -EROFS;
	if (fs_dir_lookup(at.dir.subvolume, at.dir.inode, at.name, at.name_len))
		return -EEXIST;
	if ((ret = fs_reserve(fs, 8)))
		return ret;
	/* The source's queued data goes into the snapshot, as btrfs flushes
	 * delalloc first: not cancellable (fs_config.cancelled). */
	fs_flush_writeback(fs, NULL);
	fs_commit(fs);
	fs_unshare_estimate(fs, source, &fs->counters.unshare_estimate);
	uint64_t id = fs->next_subvolume_id++;
	g_autofree char *path = g_strndup(dest, strlen(dest));
	struct subvolume *snap = fs_add_subvolume(fs, id, path);
	if (fs_design_keyed(fs)) {
		/* No copy: both sides get a new snapshot id under the old one. */
		uint32_t parent = src.subvolume->snapshot;
		snap->tree = src.subvolume->tree;
		src.subvolume->snapshot = subvol_new_snapshot_id(fs, parent);
		snap->snapshot = subvol_new_snapshot_id(fs, parent);
	} else {
		snap->tree->id = id;
		snap->tree->root = copy_root(fs, src.subvolume->tree->root, id);
		snap->tree->root_dirty = true;
	}
	if (src.subvolume->atime_tree.root) {
		snap->atime_tree.id = fs_atime_tree_id(id);
		snap->atime_tree.root = copy_root(fs, src.subvolume->atime_tree.root, snap->atime_tree.id);
		snap->atime_tree.root_dirty = true;
		struct btree_key key = { snap->atime_tree.id, 0, BTRFS_ROOT_ITEM_KEY };
		btree_insert_item(&fs->root_tree, &fs->txn, &key, BTRFS_ROOT_ITEM_SIZE, NULL);
	}
	snap->highest_inode = src.subvolume->highest_inode;
	snap->readonly = readonly;
	src.subvolume->tree->last_snapshot = fs->txn.transid;
	fs_add_dir_entry(fs, &at, id, true, FT_DIR);
	add_root_tree_items(fs, id, at.dir.subvolume->id, at.name_len);
	fs_release(fs);
	return fs_commit(fs);
}

/* btrfs_drop_snapshot(): the tree's root loses its root item's reference;
 * blocks only it held are freed top-down and release their children, shared
 * ones just lose one reference. The model drops at once what btrfs's cleaner
 * thread drops after the commit. */
int fs_delete_snapshot(struct fs *fs, const char *path)
{
	struct name_location at;
	int ret = fs_resolve_parent(fs, path, &at);
	if (ret)
		return ret;
	const struct btree_item *entry = fs_dir_lookup(at.dir.subvolume, at.dir.inode, at.name, at.name_len);
	if (!entry)
		return -ENOENT;
	if (!entry->payload.dir.location_is_root)
		return -EINVAL;
	if (at.dir.subvolume->readonly)
		return -EROFS;
	struct subvolume *snap = fs_subvolume(fs, entry->payload.dir.location);
	if (!snap || snap->deleted)
		return -ENOENT;
	if ((ret = fs_reserve(fs, 8)))
		return ret;
	fs_remove_dir_entry(fs, &at);
	remove_root_tree_items(fs, snap->id, at.dir.subvolume->id);
	/* Queued data of the snapshot's inodes is dropped with it. */
	fs_flush_writeback(fs, NULL);
	snap->deleted = true;
	fs->names_removed++; /* fs_namespace.c N1 */
	if (fs_design_keyed(fs)) {
		subvol_drop_snapshot_keys(fs, snap);
	} else {
		refs_drop_block(&fs->txn, snap->tree->root, false);
		snap->tree->root = NULL;
	}
	if (snap->atime_tree.root) {
		struct btree_key key = { snap->atime_tree.id, 0, BTRFS_ROOT_ITEM_KEY };
		btree_delete_item(&fs->root_tree, &fs->txn, &key);
		refs_drop_block(&fs->txn, snap->atime_tree.root, false);
		snap->atime_tree.root = NULL;
	}
	fs_release(fs);
	return fs_commit(fs);
}

/* --- who owns what (qgroups) --------------------------------------------- */

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
	for (uint32_t i = 0; i < block->nritems; i++) {
		if (block->level) {
			walk_usage(w, block->children[i].block);
			continue;
		}
		const struct btree_item *item = &block->items[i];
		const struct data_extent *extent = item->payload.file_extent.extent;
		if (item->key.type == BTRFS_EXTENT_DATA_KEY && extent)
			visit_thing(w, extent, extent->num_bytes);
	}
}

GArray *fs_subvolume_usage(const struct fs *fs)
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

void fs_subvolume_usage_free(GArray *usage)
{
	if (!usage)
		return;
	for (unsigned i = 0; i < usage->len; i++)
		g_free(g_array_index(usage, struct subvolume_usage, i).path);
	g_array_unref(usage);
}
