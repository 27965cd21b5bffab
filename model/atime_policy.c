/*
 * model/atime_policy.c - what a read does to an access time, per policy.
 *
 *   access(inode) --mount rule (atime.h) says no--> skipped
 *        |                                      (nodiratime, relatime, noatime)
 *        +-- read-only subvolume --> skipped (atime_readonly)
 *        +-- threshold: free space < threshold --> held back (atime_threshold)
 *        +-- snapshot-aware: leaf shared and not yet copied --> held back
 *        |                                      (atime_stale, with its age)
 *        +-- lazytime vfs: kept in memory (atime_lazy), written later
 *        |                                      (see "lazytime as the VFS defines it")
 *        +-- reserve space: ENOSPC --> threshold: dropped, read goes on
 *        |                            others: the read fails (failed_reads)
 *        |               EROFS (aborted transaction) --> skipped, read goes on
 *        +-- write the new atime: inode item (inline) or side-table item
 *
 * The side table: per subvolume a tree keyed (inode, INODE_ITEM, 0) with a
 * 12-byte btrfs_timespec per item (37 bytes with the item header, ~440 per
 * 16 KiB leaf against ~45 inodes per fs-tree leaf). An item appears on the
 * first update; until then the inode item's atime is the atime. The tree is
 * snapshotted with its subvolume, so after a snapshot a read copies side-table
 * leaves instead of fs-tree leaves.
 */
#include "design.h"

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
	if (fs->config.atime_policy != ATIME_POLICY_SIDE_TABLE || !fs->design->side_trees)
		return;
	btree_init(&sv->atime_tree, &fs->txn, fs_atime_tree_id(sv->id));
	struct btree_key key = { sv->atime_tree.id, 0, BTRFS_ROOT_ITEM_KEY };
	btree_insert_item(&fs->root_tree, &fs->txn, &key, BTRFS_ROOT_ITEM_SIZE, NULL);
}

static struct btree_key side_key(uint64_t inode)
{
	return (struct btree_key){ inode, 0, BTRFS_INODE_ITEM_KEY };
}

static const struct dirty_time *find_dirty_time(const struct fs *fs, uint64_t subvolume_id, uint64_t inode);

/* The atime in force: one kept in memory (lazytime vfs), else the
 * side-table item's when there is one, else the inode item's, `stored`
 * (which its leaf may keep beside the item: btree_leaf_inode_atime). */
static int64_t current_atime(const struct subvolume *sv, const struct btree_item *inode, int64_t stored)
{
	const struct dirty_time *kept = find_dirty_time(sv->fs, sv->id, inode->key.objectid);
	if (kept)
		return kept->atime;
	if (sv->atime_tree.root) {
		struct btree_key key = side_key(inode->key.objectid);
		struct btree_path path;
		if (btree_lookup(&sv->atime_tree, &key, &path))
			return (int64_t)btree_path_item(&path)->payload.value;
	}
	return stored;
}

/* The atime stored for the inode item a lookup near *near found. In the
 * keyed design the lookup leaves no path, and its leaves have no overlay:
 * every atime write there goes through a writable item. */
static int64_t stored_atime(const struct btree_item *inode, const struct btree_path *near)
{
	if (near && near->levels && btree_path_item(near) == inode)
		return btree_path_inode_atime(near);
	return inode->payload.inode.atime;
}

/* Free space as the threshold policy measures it: what metadata can still
 * grow into (space_report_metadata_free: free inside the metadata chunks
 * less the global reserve, plus the metadata chunks the unallocated device
 * space can still hold, two raw bytes a byte with DUP). */
static uint64_t free_bytes(const struct fs *fs)
{
	struct space_report r;
	blockstore_report(fs->store, &r);
	return space_report_metadata_free(&r, fs->config.device_size, !fs->config.metadata_single);
}

/* What the running transaction's commit will still add to metadata: the
 * delayed references of every block it dirtied become extent-tree items at
 * the commit, and the global reserve grows with the extent tree (btrfs holds
 * them in the delayed_refs_rsv, out of free space, until they run). Forecast
 * at COWSIM_COMMIT_FORECAST_BYTES per dirty block: an empirical bound
 * (docs/policies.md), above the 424-1802 bytes of room the greps' commits
 * took per copied block on the seed experiment and a synthetic 25000-file
 * tree at 4, 16 and 64 KiB nodes. */
#define COWSIM_COMMIT_FORECAST_BYTES 2048u

static uint64_t commit_forecast(const struct fs *fs)
{
	return fs->txn.blocks_dirty * COWSIM_COMMIT_FORECAST_BYTES;
}

/* The threshold policy's limit, bytes: PCT of the device. */
static uint64_t threshold_bytes(const struct fs *fs)
{
	return (uint64_t)(fs->config.threshold_fraction * (double)fs->config.device_size);
}

/* Hold this update back: free space, less what the commit will still take
 * and two reservations (the update's own, and one for the commit's root,
 * free-space and extent-tree paths), would fall under the limit. */
static bool threshold_holds_back(const struct fs *fs)
{
	uint64_t need = commit_forecast(fs) +
			2ull * BTRFS_RESERVE_NODES_PER_ITEM * blockstore_nodesize(fs->store);
	uint64_t free = free_bytes(fs);
	return free < need || free - need < threshold_bytes(fs);
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

static void write_side_table(struct fs *fs, struct subvolume *sv, uint64_t inode, int64_t atime)
{
	struct btree_key key = side_key(inode);
	struct btree_item *item = btree_lookup_for_write(&sv->atime_tree, &fs->txn, &key);
	if (!item)
		item = btree_insert_item(&sv->atime_tree, &fs->txn, &key, COWSIM_ATIME_ITEM_SIZE, NULL);
	item->payload.value = (uint64_t)atime;
}

/* Writes `atime` where the policy keeps it: the inode item, or the side
 * table. */
static void write_atime(struct fs *fs, const struct inode_location *where, int64_t atime, struct btree_path *near)
{
	struct subvolume *sv = where->subvolume;
	if (sv->atime_tree.root) {
		write_side_table(fs, sv, where->inode, atime);
		return;
	}
	/* near: the path the access's own lookup left, so the write does not
	 * descend again (NULL when there is none, as at a lazytime write-out). */
	if (near && !find_dirty_time(fs, sv->id, where->inode)) {
		/* The common case: the leaf may keep sharing its item array. */
		subvol_write_inode_atime_near(fs, sv, where->inode, atime, near);
		return;
	}
	struct btree_item *inode = near ? fs_inode_item_for_write_near(fs, where, near) : fs_inode_item_for_write(fs, where);
	inode->payload.inode.atime = atime;
}

/* --- lazytime as the VFS defines it (FS_LAZYTIME_VFS) ----------------------
 *
 * On a lazytime mount with config.lazytime = FS_LAZYTIME_VFS an access the
 * mount rule and the policy let through changes only the in-memory atime
 * (the inode is I_DIRTY_TIME): no reservation, no block copied, the read
 * cannot fail. The atime reaches the tree (inode item or side table, per the
 * policy, with its own reservation) when
 *   W1. the inode changes otherwise (fs_inode_item_for_write): it rides along;
 *   W2. the inode is fsynced (fs_fsync);
 *   W3. the filesystem is synced (fs_sync, every trace `sync` and `mark`);
 *   W4. the clock reaches dirtied_ns + LINUX_DIRTYTIME_EXPIRE_NS (12 h after
 *       it was first kept; later accesses do not move dirtied_ns).
 * A commit alone (the commit interval, a snapshot) writes none of them:
 * model/atime.c gives the kernel's code for each rule. Invariants:
 *   L1. an entry is in dirty_times iff it is in the queue and !written;
 *   L2. the queue is in dirtied_ns order (the clock never goes back);
 *   L3. the atime of an entry is the one current_atime() returns.
 * An atime whose subvolume or inode is gone by write-out is forgotten. */

static bool lazytime_vfs(const struct fs *fs)
{
	return fs->config.lazytime == FS_LAZYTIME_VFS && fs->config.atime.lazytime;
}

static guint dirty_time_hash(gconstpointer p)
{
	const struct dirty_time *d = p;
	return (guint)(d->inode * 0x9e3779b97f4a7c15ull ^ d->subvolume_id);
}

static gboolean dirty_time_equal(gconstpointer a, gconstpointer b)
{
	const struct dirty_time *x = a, *y = b;
	return x->inode == y->inode && x->subvolume_id == y->subvolume_id;
}

static const struct dirty_time *find_dirty_time(const struct fs *fs, uint64_t subvolume_id, uint64_t inode)
{
	if (!fs->dirty_times)
		return NULL;
	struct dirty_time probe = { .subvolume_id = subvolume_id, .inode = inode };
	return g_hash_table_lookup(fs->dirty_times, &probe);
}

static void keep_dirty_time(struct fs *fs, const struct inode_location *where)
{
	if (!fs->dirty_times)
		fs->dirty_times = g_hash_table_new(dirty_time_hash, dirty_time_equal);
	struct dirty_time *d = (struct dirty_time *)find_dirty_time(fs, where->subvolume->id, where->inode);
	if (!d) {
		d = g_new0(struct dirty_time, 1);
		d->subvolume_id = where->subvolume->id;
		d->inode = where->inode;
		d->dirtied_ns = fs->clock_ns;
		g_hash_table_add(fs->dirty_times, d);
		g_queue_push_tail(&fs->dirty_time_queue, d);
	}
	d->atime = fs->clock_ns;
	fs->counters.atime_lazy++;
}

/* Writes one kept atime (W2-W4) with a reservation of its own; marks it
 * written. */
static void write_dirty_time(struct fs *fs, struct dirty_time *d)
{
	g_hash_table_remove(fs->dirty_times, d);
	d->written = true;
	struct subvolume *sv = fs_subvolume(fs, d->subvolume_id);
	if (!sv || sv->deleted || !fs_inode_item(sv, d->inode))
		return;
	int reserved = fs_reserve(fs, 1);
	if (reserved == -EROFS)
		return; /* aborted transaction: the read went on long ago */
	if (reserved) {
		fs->counters.atime_enospc++;
		fs->counters.atime_dropped++;
		return;
	}
	struct inode_location where = { sv, d->inode };
	write_atime(fs, &where, d->atime, NULL);
	fs->counters.atime_updates++;
	fs_release(fs);
}

/* Pops the queue from its head (only the expired ones when expired_only),
 * writing those not yet written. */
static void write_queue(struct fs *fs, bool expired_only)
{
	struct dirty_time *d;
	while ((d = g_queue_peek_head(&fs->dirty_time_queue))) {
		if (expired_only && fs->clock_ns - d->dirtied_ns < LINUX_DIRTYTIME_EXPIRE_NS)
			break;
		g_queue_pop_head(&fs->dirty_time_queue);
		if (!d->written)
			write_dirty_time(fs, d);
		g_free(d);
	}
}

void fs_dirty_time_write_all(struct fs *fs)
{
	write_queue(fs, false);
}

void fs_dirty_time_write_expired(struct fs *fs)
{
	write_queue(fs, true);
}

void fs_dirty_time_write_inode(struct fs *fs, const struct inode_location *where)
{
	struct dirty_time *d = (struct dirty_time *)find_dirty_time(fs, where->subvolume->id, where->inode);
	if (d)
		write_dirty_time(fs, d);
}

void fs_dirty_time_other_change(struct fs *fs, const struct inode_location *where, struct btree_item *inode)
{
	struct dirty_time *d = (struct dirty_time *)find_dirty_time(fs, where->subvolume->id, where->inode);
	if (!d)
		return;
	g_hash_table_remove(fs->dirty_times, d);
	d->written = true;
	/* The change reserved for the inode item; the atime rides in it. */
	if (where->subvolume->atime_tree.root)
		write_side_table(fs, where->subvolume, where->inode, d->atime);
	else
		inode->payload.inode.atime = d->atime;
	fs->counters.atime_updates++;
}

void fs_dirty_time_free(struct fs *fs)
{
	if (fs->dirty_times)
		g_hash_table_unref(fs->dirty_times);
	fs->dirty_times = NULL;
	g_queue_clear_full(&fs->dirty_time_queue, g_free);
}

/* Would an access now write this inode's atime (mount rule and policy
 * gates that do not depend on space)? */
static bool wants_update(const struct fs *fs, const struct subvolume *sv, const struct btree_item *inode,
			 int64_t stored)
{
	struct atime_times times = { current_atime(sv, inode, stored), inode->payload.inode.mtime,
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
	int64_t stored = stored_atime(inode, near);
	if (!wants_update(fs, sv, inode, stored)) {
		fs->counters.atime_skipped++;
		return 0;
	}
	if (sv->readonly) {
		fs->counters.atime_readonly++;
		fs->counters.atime_skipped++;
		return 0;
	}
	if (policy == ATIME_POLICY_THRESHOLD && threshold_holds_back(fs)) {
		fs->counters.atime_threshold++;
		fs->counters.atime_skipped++;
		return 0;
	}
	if (policy == ATIME_POLICY_SNAPSHOT_AWARE && !fs->design->item_write_is_private(fs, sv, inode)) {
		count_staleness(fs, current_atime(sv, inode, stored));
		fs->counters.atime_skipped++;
		return 0;
	}
	if (lazytime_vfs(fs)) {
		keep_dirty_time(fs, where);
		if (updated)
			*updated = true;
		return 0;
	}
	int reserved = fs_reserve(fs, 1);
	if (reserved == -EROFS) {
		/* The transaction aborted (the store overcommitted) and the
		 * filesystem is read-only: touch_atime() skips the update when
		 * mnt_want_write() fails, and the read goes on. Not a failed
		 * read: the one that met ENOSPC was counted when it happened. */
		fs->counters.atime_skipped++;
		return 0;
	}
	if (reserved) {
		fs->counters.atime_enospc++;
		if (policy == ATIME_POLICY_THRESHOLD) {
			fs->counters.atime_dropped++;
			fs->counters.atime_skipped++;
			return 0;
		}
		fs->counters.failed_reads++;
		return -ENOSPC;
	}
	write_atime(fs, where, fs->clock_ns, near);
	fs->counters.atime_updates++;
	fs_release(fs);
	if (updated)
		*updated = true;
	return 0;
}

/* --- the snapshot-time warning --------------------------------------------- */

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
	fs_atime_wanted_fn wanted;
	uint64_t count;
};

static bool count_wanted(const struct btree_item *item, void *opaque)
{
	struct inode_count *c = opaque;
	if (item->key.type == BTRFS_INODE_ITEM_KEY && c->wanted(c->fs, c->sv, item, item->payload.inode.atime))
		c->count++;
	return true;
}

/* Only where no leaf has an atime overlay (the keyed design, side tables):
 * the atime writes of both go through writable items. */
uint64_t fs_count_wanted_inodes(const struct fs *fs, const struct subvolume *sv, fs_atime_wanted_fn wanted)
{
	struct inode_count c = { fs, sv, wanted, 0 };
	struct btree_key first = { 0, 0, 0 }, last = { UINT64_MAX, UINT64_MAX, 255 };
	subvol_visit_range(sv, &first, &last, count_wanted, &c);
	return c.count;
}

int fs_unshare_estimate(struct fs *fs, const char *source, uint64_t *bytes)
{
	struct inode_location src;
	int ret = fs_resolve(fs, source, &src);
	if (ret)
		return ret;
	uint32_t nodesize = blockstore_nodesize(fs->store);
	enum atime_policy policy = fs->config.atime_policy;
	if (fs->config.atime.mode == ATIME_NOATIME || src.subvolume->readonly) {
		*bytes = 0;
	} else if (src.subvolume->atime_tree.root) {
		uint64_t count = fs_count_wanted_inodes(fs, src.subvolume, wants_update);
		*bytes = estimate_side_table(nodesize, count) * nodesize;
	} else {
		/* snapshot-aware updates only what stays private after it. */
		*bytes = fs->design->inline_atime_estimate(fs, src.subvolume, wants_update,
							  policy == ATIME_POLICY_SNAPSHOT_AWARE);
	}
	if (policy == ATIME_POLICY_THRESHOLD) {
		/* Updates stop once free space reaches the limit. */
		uint64_t free = free_bytes(fs), limit = threshold_bytes(fs);
		*bytes = MIN(*bytes, free > limit ? free - limit : 0);
	}
	return 0;
}
