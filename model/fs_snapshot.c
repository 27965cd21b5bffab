/*
 * model/fs_snapshot.c - snapshots, their deletion, and who owns which bytes.
 *
 * How a snapshot shares its source's items is the design's
 * (fs->design->snapshot_create, model/design.h: the btrfs design clones the
 * root, the keyed one hands out snapshot ids); this file does what every
 * design shares. The snapshot is taken at a commit boundary (btrfs creates
 * pending snapshots inside the commit): the model commits, lets the design
 * share the items, adds the directory entry and the root tree's items, and
 * commits again.
 */
#include "design.h"

#include <errno.h>
#include <string.h>

#include "blockstore.h"

static void add_root_tree_items(struct fs *fs, uint64_t id, uint64_t parent_id, uint16_t name_len)
{
	struct btree_key key = BTRFS_KEY(id, BTRFS_ROOT_ITEM_KEY, 0);
	btree_insert_item(&fs->root_tree, &fs->txn, &key, BTRFS_ROOT_ITEM_SIZE, NULL);
	key = BTRFS_KEY(id, BTRFS_ROOT_BACKREF_KEY, parent_id);
	btree_insert_item(&fs->root_tree, &fs->txn, &key, BTRFS_ROOT_REF_SIZE + name_len, NULL);
	key = BTRFS_KEY(parent_id, BTRFS_ROOT_REF_KEY, id);
	btree_insert_item(&fs->root_tree, &fs->txn, &key, BTRFS_ROOT_REF_SIZE + name_len, NULL);
	key = BTRFS_KEY(0x5eed + id, BTRFS_UUID_KEY_SUBVOL, id);
	btree_insert_item(&fs->uuid_tree, &fs->txn, &key, BTRFS_UUID_ITEM_SIZE, NULL);
}

static void remove_root_tree_items(struct fs *fs, uint64_t id, uint64_t parent_id)
{
	struct btree_key keys[] = {
		BTRFS_KEY(id, BTRFS_ROOT_ITEM_KEY, 0),
		BTRFS_KEY(id, BTRFS_ROOT_BACKREF_KEY, parent_id),
		BTRFS_KEY(parent_id, BTRFS_ROOT_REF_KEY, id),
	};
	for (unsigned i = 0; i < G_N_ELEMENTS(keys); i++)
		btree_delete_item(&fs->root_tree, &fs->txn, &keys[i]);
	struct btree_key uuid = BTRFS_KEY(0x5eed + id, BTRFS_UUID_KEY_SUBVOL, id);
	btree_delete_item(&fs->uuid_tree, &fs->txn, &uuid);
}

bool fs_is_subvolume_link(const struct fs *fs, const struct subvolume *parent, const struct subvolume *sv)
{
	struct btree_key backref = BTRFS_KEY(sv->id, BTRFS_ROOT_BACKREF_KEY, parent->id);
	struct btree_path path;
	return btree_lookup(&fs->root_tree, &backref, &path);
}

void fs_subvolume_link_renamed(struct fs *fs, const struct subvolume *parent, const struct subvolume *sv,
				uint16_t name_len)
{
	struct btree_key backref = BTRFS_KEY(sv->id, BTRFS_ROOT_BACKREF_KEY, parent->id);
	struct btree_key ref = BTRFS_KEY(parent->id, BTRFS_ROOT_REF_KEY, sv->id);
	btree_resize_item(&fs->root_tree, &fs->txn, &backref, BTRFS_ROOT_REF_SIZE + name_len);
	btree_resize_item(&fs->root_tree, &fs->txn, &ref, BTRFS_ROOT_REF_SIZE + name_len);
}

bool fs_holds_a_subvolume(const struct fs *fs, const struct subvolume *sv)
{
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *other = fs->subvolumes->pdata[i];
		if (other != sv && !other->deleted && fs_is_subvolume_link(fs, sv, other))
			return true;
	}
	return false;
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
	if (fs_is_placeholder(&at.dir))
		return -ENOTTY; /* the snapshot ioctl on a placeholder: simple_dir_operations has none */
	if (at.dir.subvolume->readonly)
		return -EROFS;
	if ((ret = fs_dir_name_room(at.dir.subvolume, at.dir.inode, at.name, at.name_len)))
		return ret; /* btrfs_mksnapshot(): btrfs_check_dir_item_collision() */
	if (fs->design->snapshot_allowed && (ret = fs->design->snapshot_allowed(fs, src.subvolume, NULL, readonly)))
		return ret;
	if ((ret = fs_reserve(fs, COWSIM_RESERVE_SNAPSHOT)))
		return ret;
	/* The source's queued data goes into the snapshot, as btrfs flushes
	 * delalloc first: not cancellable (fs_config.cancelled). */
	fs_flush_writeback(fs, NULL);
	fs_commit(fs);
	fs_unshare_estimate(fs, source, &fs->counters.unshare_estimate);
	uint64_t id = fs->next_subvolume_id++;
	g_autofree char *path = g_strndup(dest, strlen(dest));
	struct subvolume *snap = fs_add_subvolume(fs, id, path);
	snap->readonly = readonly; /* before the design shares: it may look */
	fs->design->snapshot_create(fs, src.subvolume, snap);
	fs_dir_cache_snapshot(fs, src.subvolume, snap); /* its directories' tables are the source's */
	fs_atime_snapshot_create(fs, src.subvolume, snap);
	snap->highest_inode = src.subvolume->highest_inode;
	src.subvolume->tree->last_snapshot = fs->txn.transid;
	fs_add_dir_entry(fs, &at, id, true, FT_DIR);
	add_root_tree_items(fs, id, at.dir.subvolume->id, at.name_len);
	fs_release(fs);
	return fs_commit(fs);
}

/* The subvolume whose link `path` is, and that link's place, as
 * fs_delete_snapshot() takes it: 0 or -ENOENT, -EINVAL (not a subvolume's
 * link), -EROFS (in a read-only one). */
static int resolve_subvolume_link(struct fs *fs, const char *path, struct name_location *at,
				  struct subvolume **out)
{
	int ret = fs_resolve_parent(fs, path, at);
	if (ret)
		return ret;
	const struct btree_item *entry = fs_dir_lookup(at->dir.subvolume, at->dir.inode, at->name, at->name_len);
	if (!entry)
		return -ENOENT;
	if (!btree_item_dir(entry)->location_is_root)
		return -EINVAL;
	if (at->dir.subvolume->readonly)
		return -EROFS;
	struct subvolume *snap = fs_subvolume(fs, btree_item_dir(entry)->location);
	if (!snap || snap->deleted)
		return -ENOENT;
	/* A snapshot's placeholder where a nested subvolume was is no link to
	 * it: "not a subvolume", as btrfs says of its empty directory. */
	if (!fs_is_subvolume_link(fs, at->dir.subvolume, snap))
		return -EINVAL;
	*out = snap;
	return 0;
}

/*
 * btrfs_drop_snapshot(): the tree's root loses its root item's reference;
 * blocks only it held are freed top-down and release their children, shared
 * ones just lose one reference. btrfs's cleaner thread does it after the
 * commit, a few blocks per transaction; the model does it in the throttle
 * after the operation (refs_drop_tree), the long part of a deletion with the
 * commit: seconds for a million files only the snapshot held. When
 * fs_config.cancelled asks, the walk stops between two blocks and the result
 * is -EINTR: the subvolume is gone from the namespace, and what is left of
 * its tree is taken down by the next commit, as btrfs's cleaner resumes a
 * dead root from its drop_progress.
 */
int fs_delete_snapshot(struct fs *fs, const char *path)
{
	struct name_location at;
	struct subvolume *snap;
	int ret = resolve_subvolume_link(fs, path, &at, &snap);
	if (ret)
		return ret;
	/* btrfs's may_destroy_subvol(): a subvolume holding another is not
	 * deleted (its tree would go, the nested one's link with it). */
	if (fs_holds_a_subvolume(fs, snap))
		return -ENOTEMPTY;
	if (fs->design->snapshot_allowed && (ret = fs->design->snapshot_allowed(fs, NULL, snap, snap->readonly)))
		return ret;
	if ((ret = fs_reserve(fs, COWSIM_RESERVE_SNAPSHOT)))
		return ret;
	fs_remove_dir_entry(fs, &at);
	remove_root_tree_items(fs, snap->id, at.dir.subvolume->id);
	/* Queued data of the snapshot's inodes is dropped with it. */
	fs_flush_writeback(fs, NULL);
	delayed_items_run(fs); /* its inodes' nodes go in before its tree goes */
	snap->deleted = true;
	fs->names_removed++; /* fs_namespace.c NS1 */
	int stopped = fs->design->snapshot_delete(fs, snap);
	fs_atime_snapshot_delete(fs, snap);
	if (fs_release_stoppable(fs) || stopped)
		return -EINTR;
	return fs_commit(fs);
}

/* --- who owns what (qgroups): the design says --------------------------- */

/* Does a member of SET hold the link of a live subvolume outside it? */
static bool set_holds_an_outsider(const struct fs *fs, struct subvolume *const *set, unsigned n)
{
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *other = fs->subvolumes->pdata[i];
		bool inside = false, held = false;
		for (unsigned k = 0; k < n && !other->deleted; k++) {
			inside |= set[k] == other;
			held |= set[k] != other && fs_is_subvolume_link(fs, set[k], other);
		}
		if (held && !inside)
			return true;
	}
	return false;
}

int fs_delete_estimate(struct fs *fs, const char *const *paths, unsigned n, struct fs_reclaim *out)
{
	*out = (struct fs_reclaim){ 0 };
	g_autoptr(GPtrArray) set = g_ptr_array_new();
	for (unsigned i = 0; i < n; i++) {
		struct name_location at;
		struct subvolume *sv;
		int ret = resolve_subvolume_link(fs, paths[i], &at, &sv);
		if (ret)
			return ret;
		if (!g_ptr_array_find(set, sv, NULL))
			g_ptr_array_add(set, sv);
	}
	struct subvolume *const *members = (struct subvolume *const *)set->pdata;
	if (set_holds_an_outsider(fs, members, set->len))
		return -ENOTEMPTY;
	if (!fs->design->reclaim)
		return -EOPNOTSUPP;
	for (unsigned i = 0; fs->design->snapshot_allowed && i < set->len; i++) {
		int ret = fs->design->snapshot_allowed(fs, NULL, members[i], false);
		if (ret)
			return ret; /* zfs: a filesystem that has snapshots (-EBUSY) */
	}
	fs->design->reclaim(fs, members, set->len, out);
	return 0;
}

GArray *fs_subvolume_usage(const struct fs *fs)
{
	return fs->design->usage(fs);
}

void fs_subvolume_usage_free(GArray *usage)
{
	if (!usage)
		return;
	for (unsigned i = 0; i < usage->len; i++)
		g_free(g_array_index(usage, struct subvolume_usage, i).path);
	g_array_unref(usage);
}
