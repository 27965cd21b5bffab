/*
 * model/atime_policy.c - what a read does to an access time, per policy.
 *
 *   access(inode) --mount rule (atime.h) says no--> skipped
 *        |                                      (nodiratime, relatime, noatime)
 *        +-- read-only subvolume --> skipped (atime_readonly)
 *        +-- threshold: free space < threshold --> held back (atime_threshold)
 *        +-- snapshot-aware: leaf shared and not yet copied --> held back
 *        |                                      (atime_stale, with its age)
 *        +-- reserve space: ENOSPC --> threshold: dropped, read goes on
 *        |                            others: the read fails (failed_reads)
 *        +-- write the new atime: inode item (inline) or side-table item
 *
 * The side table: per subvolume a tree keyed (inode, INODE_ITEM, 0) with a
 * 12-byte btrfs_timespec per item (37 bytes with the item header, ~440 per
 * 16 KiB leaf against ~45 inodes per fs-tree leaf). An item appears on the
 * first update; until then the inode item's atime is the atime. The tree is
 * snapshotted with its subvolume, so after a snapshot a read copies side-table
 * leaves instead of fs-tree leaves.
 */
#include "fs_internal.h"

#include <errno.h>

#include "blockstore.h"

const char *atime_policy_name(enum atime_policy policy)
{
	static const char *const names[] = { "inline", "side-table", "threshold", "snapshot-aware" };
	return (unsigned)policy < G_N_ELEMENTS(names) ? names[policy] : "?";
}

uint64_t fs_atime_tree_id(uint64_t subvolume_id)
{
	return COWSIM_ATIME_TREE_BASE + subvolume_id;
}

void fs_atime_tree_init(struct fs *fs, struct subvolume *sv)
{
	if (fs->config.atime_policy != ATIME_POLICY_SIDE_TABLE || fs_design_keyed(fs))
		return;
	btree_init(&sv->atime_tree, &fs->txn, fs_atime_tree_id(sv->id));
	struct btree_key key = { sv->atime_tree.id, 0, BTRFS_ROOT_ITEM_KEY };
	btree_insert_item(&fs->root_tree, &fs->txn, &key, BTRFS_ROOT_ITEM_SIZE, NULL);
}

static struct btree_key side_key(uint64_t inode)
{
	return (struct btree_key){ inode, 0, BTRFS_INODE_ITEM_KEY };
}

/* The atime in force: the side-table item's when there is one. */
static int64_t current_atime(const struct subvolume *sv, const struct btree_item *inode)
{
	if (sv->atime_tree.root) {
		struct btree_key key = side_key(inode->key.objectid);
		struct btree_path path;
		if (btree_lookup(&sv->atime_tree, &key, &path))
			return (int64_t)btree_path_item(&path)->payload.value;
	}
	return inode->payload.inode.atime;
}

static uint64_t free_bytes(const struct fs *fs)
{
	struct space_report r;
	blockstore_report(fs->store, &r);
	uint64_t used = r.metadata_raw + r.data_used + 2 * r.system_used;
	return used < fs->config.device_size ? fs->config.device_size - used : 0;
}

/* The leaf holding `key` will change in place: it was copied in this
 * transaction already, or nothing on its path is shared. */
static bool leaf_is_private(const struct fs *fs, const struct btree *tree, const struct btree_key *key)
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

static void count_staleness(struct fs *fs, int64_t atime)
{
	static const int64_t hour = 3600ll * 1000000000ll;
	static const int64_t limits[FS_STALENESS_BUCKETS - 1] = { hour, 24 * hour, 7 * 24 * hour, 30 * 24 * hour };
	int64_t age;
	if (__builtin_sub_overflow(fs->clock_ns, atime, &age))
		age = atime < 0 ? INT64_MAX : INT64_MIN; /* an atime of 1678 is older than any bucket */
	unsigned bucket = 0;
	while (bucket < FS_STALENESS_BUCKETS - 1 && age >= limits[bucket])
		bucket++;
	fs->counters.atime_stale++;
	fs->counters.staleness[bucket]++;
}

static void write_atime(struct fs *fs, const struct inode_location *where, struct btree_path *near)
{
	struct subvolume *sv = where->subvolume;
	if (!sv->atime_tree.root) {
		fs_inode_item_for_write_near(fs, where, near)->payload.inode.atime = fs->clock_ns;
		return;
	}
	struct btree_key key = side_key(where->inode);
	struct btree_item *item = btree_lookup_for_write(&sv->atime_tree, &fs->txn, &key);
	if (!item)
		item = btree_insert_item(&sv->atime_tree, &fs->txn, &key, COWSIM_ATIME_ITEM_SIZE, NULL);
	item->payload.value = (uint64_t)fs->clock_ns;
}

/* Would an access now write this inode's atime (mount rule and policy
 * gates that do not depend on space)? */
static bool wants_update(const struct fs *fs, const struct subvolume *sv, const struct btree_item *inode)
{
	struct atime_times times = { current_atime(sv, inode), inode->payload.inode.mtime,
				     inode->payload.inode.ctime };
	return atime_needs_update(&fs->config.atime, fs_mode_is_dir(inode->payload.inode.mode), &times,
				  fs->clock_ns);
}

int fs_access_inode(struct fs *fs, const struct inode_location *where, struct btree_path *near, bool *updated)
{
	struct subvolume *sv = where->subvolume;
	const struct btree_item *inode = fs_inode_item_near(sv, where->inode, near);
	enum atime_policy policy = fs->config.atime_policy;
	if (updated)
		*updated = false;
	if (!wants_update(fs, sv, inode)) {
		fs->counters.atime_skipped++;
		return 0;
	}
	if (sv->readonly) {
		fs->counters.atime_readonly++;
		fs->counters.atime_skipped++;
		return 0;
	}
	if (policy == ATIME_POLICY_THRESHOLD &&
	    free_bytes(fs) < (uint64_t)(fs->config.threshold_fraction * (double)fs->config.device_size)) {
		fs->counters.atime_threshold++;
		fs->counters.atime_skipped++;
		return 0;
	}
	if (policy == ATIME_POLICY_SNAPSHOT_AWARE && !leaf_is_private(fs, sv->tree, &inode->key)) {
		count_staleness(fs, current_atime(sv, inode));
		fs->counters.atime_skipped++;
		return 0;
	}
	if (fs_reserve(fs, 1)) {
		fs->counters.atime_enospc++;
		if (policy == ATIME_POLICY_THRESHOLD) {
			fs->counters.atime_dropped++;
			fs->counters.atime_skipped++;
			return 0;
		}
		fs->counters.failed_reads++;
		return -ENOSPC;
	}
	write_atime(fs, where, near);
	fs->counters.atime_updates++;
	fs_release(fs);
	if (updated)
		*updated = true;
	return 0;
}

/* --- the snapshot-time warning --------------------------------------------- */

struct estimate {
	const struct fs *fs;
	const struct subvolume *sv;
	uint64_t blocks;
};

/* Counts the blocks of the subtree that an access sweep would copy;
 * returns whether any below `block` would. */
static bool estimate_block(struct estimate *e, const struct tree_block *block)
{
	bool any = false;
	if (block->level) {
		for (uint32_t i = 0; i < block->nritems; i++)
			any |= estimate_block(e, block->children[i].block);
	} else {
		for (uint32_t i = 0; i < block->nritems && !any; i++) {
			const struct btree_item *item = &block->items[i];
			any = item->key.type == BTRFS_INODE_ITEM_KEY && wants_update(e->fs, e->sv, item);
		}
	}
	e->blocks += any;
	return any;
}

/* Side table: the leaves of atime items that would change (the items that
 * exist) and the items still to be inserted, at the tree's own fill. */
static uint64_t estimate_side_table(uint32_t nodesize, uint64_t inodes_to_update)
{
	uint64_t per_leaf = (btrfs_leaf_data_size(nodesize) / (BTRFS_ITEM_HEADER_SIZE + COWSIM_ATIME_ITEM_SIZE));
	uint64_t leaves = (inodes_to_update + per_leaf - 1) / per_leaf;
	return leaves + leaves / btrfs_nodeptrs_per_block(nodesize) + (leaves > 1);
}

struct inode_count {
	const struct fs *fs;
	const struct subvolume *sv;
	uint64_t count;
};

static bool count_updatable(const struct btree_item *item, void *opaque)
{
	struct inode_count *c = opaque;
	if (item->key.type == BTRFS_INODE_ITEM_KEY && wants_update(c->fs, c->sv, item))
		c->count++;
	return true;
}

int fs_unshare_estimate(struct fs *fs, const char *source, uint64_t *bytes)
{
	struct inode_location src;
	int ret = fs_resolve(fs, source, &src);
	if (ret)
		return ret;
	struct estimate e = { fs, src.subvolume, 0 };
	uint32_t nodesize = blockstore_nodesize(fs->store);
	if (fs->config.atime.mode == ATIME_NOATIME) {
		*bytes = 0;
	} else if (fs_design_keyed(fs)) {
		/* Keyed: each update writes one new inode item version. */
		struct inode_count c = { fs, src.subvolume, 0 };
		struct btree_key first = { 0, 0, 0 }, last = { UINT64_MAX, UINT64_MAX, 255 };
		subvol_visit_range(src.subvolume, &first, &last, count_updatable, &c);
		*bytes = c.count * (BTRFS_ITEM_HEADER_SIZE + BTRFS_INODE_ITEM_SIZE);
	} else if (src.subvolume->atime_tree.root) {
		struct inode_count c = { fs, src.subvolume, 0 };
		struct btree_key first = { 0, 0, 0 }, last = { UINT64_MAX, UINT64_MAX, 255 };
		subvol_visit_range(src.subvolume, &first, &last, count_updatable, &c);
		*bytes = estimate_side_table(nodesize, c.count) * nodesize;
	} else {
		estimate_block(&e, src.subvolume->tree->root);
		*bytes = e.blocks * nodesize;
	}
	return 0;
}
