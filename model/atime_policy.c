/*
 * model/atime_policy.c - what a read does to an access time: the flow every
 * policy shares (atime_policy.h draws it), lazytime as the VFS defines it,
 * and the snapshot-time warning. What differs per policy is in its own file
 * (model/policy_*.c), reached through fs->config.atime_policy.
 *
 *   access(inode) --mount rule (atime.h) says no--> skipped
 *        |                                      (nodiratime, relatime, noatime)
 *        +-- read-only subvolume --> skipped (atime_readonly)
 *        +-- policy->holds_back --> skipped (threshold: atime_threshold;
 *        |                          snapshot-aware: atime_stale, with its age)
 *        +-- lazytime vfs: kept in memory (atime_lazy), written later
 *        |                                      (see "lazytime as the VFS defines it")
 *        +-- reserve space: ENOSPC --> the flusher commits (up to 3 times), then
 *        |      still ENOSPC --> policy->drops_on_enospc: dropped, read goes on
 *        |                       others, as kernel 6.18: lost, read goes on (atime_lost)
 *        |                       --enospc-read fail (what-if): the read fails (failed_reads)
 *        |               EROFS (aborted transaction) --> skipped, read goes on
 *        +-- policy->write: inode item, side-table item, or either (hybrid)
 *
 * Invariants (fs_atime_check, from fs_check; never on an access's path):
 *   LZ1-LZ3 lazytime's table and queue (below, "lazytime as the VFS defines it");
 *   LA1 a lost atime (fs->lost_atimes, "an atime update that finds no space")
 *       stands only while the atime stored for its inode (the policy's
 *       side-table item, else the inode item) is the one its loss left in
 *       place: whatever writes that inode's atime later (an access, a
 *       lazytime write-out, an explicit settime) forgets it, for the
 *       kernel's in-memory inode then holds the written atime and nothing
 *       older may hide it (lost_atimes_check; an entry whose subvolume or
 *       inode is gone is not looked at: inode numbers are not reused).
 */
#include "atime_policy.h"

#include <errno.h>
#include <inttypes.h>

#include "blockstore.h"
#include "derived_check.h"
#include "model_error.h"

static const struct atime_policy_ops *policy_of(const struct fs *fs)
{
	return fs->config.atime_policy;
}

void fs_atime_subvolume_init(struct fs *fs, struct subvolume *sv)
{
	if (policy_of(fs)->subvolume_init)
		policy_of(fs)->subvolume_init(fs, sv);
}

void fs_atime_snapshot_create(struct fs *fs, struct subvolume *src, struct subvolume *snap)
{
	if (policy_of(fs)->snapshot_create)
		policy_of(fs)->snapshot_create(fs, src, snap);
}

void fs_atime_snapshot_delete(struct fs *fs, struct subvolume *snap)
{
	if (policy_of(fs)->snapshot_delete)
		policy_of(fs)->snapshot_delete(fs, snap);
}

bool fs_config_validate(const struct fs_config *config, GError **error)
{
	const struct fs_design_ops *design = config->design ? config->design : fs_designs[0];
	const struct atime_policy_ops *policy = config->atime_policy ? config->atime_policy : atime_policies[0];
	if (!policy->supports || policy->supports(design))
		return true;
	g_set_error(error, MODEL_ERROR, MODEL_ERROR_INVALID,
		    "atime policy %s does not work in the %s design (%s): it keeps atimes in a tree beside each "
		    "subvolume, which this design cannot snapshot", policy->name, design->name, design->summary);
	return false;
}

static const struct dirty_time *find_dirty_time(const struct fs *fs, uint64_t subvolume_id, uint64_t inode);
static const struct dirty_time *time_lookup(GHashTable *table, uint64_t subvolume_id, uint64_t inode);
static void forget_lost_atime(struct fs *fs, const struct inode_location *where);

/* An atime kept apart from the inode item: one kept in memory (lazytime
 * vfs), a lost update's, else the policy's own (a side-table item). */
static bool __attribute__((noinline)) atime_kept_apart(const struct subvolume *sv, uint64_t inode, int64_t *atime)
{
	const struct dirty_time *kept = find_dirty_time(sv->fs, sv->id, inode);
	if (!kept)
		kept = time_lookup(sv->fs->lost_atimes, sv->id, inode);
	if (kept) {
		*atime = kept->atime;
		return true;
	}
	return policy_of(sv->fs)->read && policy_of(sv->fs)->read(sv, inode, atime);
}

/* The atime in force: one kept apart (above), else the inode item's,
 * `stored` (which its leaf may keep beside the item: btree_leaf_inode_atime).
 * Most runs keep none apart: three loads say so. */
static inline int64_t current_atime(const struct subvolume *sv, const struct btree_item *inode, int64_t stored)
{
	const struct fs *fs = sv->fs;
	int64_t atime;
	if (__builtin_expect(!fs->dirty_times && !fs->lost_atimes && !policy_of(fs)->read, 1) ||
	    !atime_kept_apart(sv, btree_item_key(inode)->objectid, &atime))
		return stored;
	return atime;
}

/* The atime stored for the inode item a lookup near *near found. In the
 * keyed design the lookup leaves no path, and its leaves have no overlay:
 * every atime write there goes through a writable item. */
static inline int64_t stored_atime(const struct btree_item *inode, const struct btree_path *near)
{
	if (near && near->levels && btree_path_item(near) == inode)
		return btree_path_inode_atime(near);
	return btree_item_inode(inode)->atime;
}

/* atime_write_inline() with an item that another change made writable, or
 * without a path, or for an inode with a lazytime atime in memory. */
static void __attribute__((noinline)) write_inline_otherwise(struct fs *fs, const struct inode_location *where,
							     int64_t atime, struct btree_path *near,
							     struct btree_item *inode)
{
	struct subvolume *sv = where->subvolume;
	if (inode) {
		btree_item_inode_for_write(inode)->atime = atime; /* riding along with another change */
		return;
	}
	/* near: the path the access's own lookup left, so the write does not
	 * descend again (NULL when there is none, as at a lazytime write-out). */
	if (near && !find_dirty_time(fs, sv->id, where->inode)) {
		/* No atime kept in memory for it: the leaf may keep sharing its item array. */
		subvol_write_inode_atime_near(fs, sv, where->inode, atime, near);
		return;
	}
	inode = near ? fs_inode_item_for_write_near(fs, where, near) : fs_inode_item_for_write(fs, where);
	btree_item_inode_for_write(inode)->atime = atime;
}

/* Storage in the inode item, for the policies that keep it there. An
 * access's write (a path, no lazytime table) goes straight to the design. */
void atime_write_inline(struct fs *fs, const struct inode_location *where, int64_t atime, struct btree_path *near,
			struct btree_item *inode)
{
	if (__builtin_expect(near && !inode && !fs->dirty_times, 1))
		subvol_write_inode_atime_near(fs, where->subvolume, where->inode, atime, near);
	else
		write_inline_otherwise(fs, where, atime, near, inode);
}

/* An explicit atime (utimensat: fs_settime) in the inode item made writable
 * for it: it is the inode's atime now, so no side-table item of an earlier
 * update may override it (HY1; the side-table policy's item comes back at
 * the next update), nor an earlier update's lost atime (LA1). */
void fs_atime_set(struct fs *fs, const struct inode_location *where, struct btree_item *inode, int64_t atime)
{
	btree_item_inode_for_write(inode)->atime = atime;
	atime_side_table_forget(fs, where->subvolume, where->inode);
	forget_lost_atime(fs, where);
}

/* --- lazytime as the VFS defines it (FS_LAZYTIME_VFS) ----------------------
 *
 * On a lazytime mount with config.lazytime = FS_LAZYTIME_VFS an access the
 * mount rule and the policy let through changes only the in-memory atime
 * (the inode is I_DIRTY_TIME): no reservation, no block copied, the read
 * cannot fail. The atime reaches the tree (inode item or side table, per the
 * policy, with its own reservation) when
 *   LW1. the inode changes otherwise (fs_inode_item_for_write): it rides along;
 *   LW2. the inode is fsynced (fs_fsync);
 *   LW3. the filesystem is synced (fs_sync, every trace `sync` and `mark`);
 *   LW4. the clock reaches dirtied_ns + LINUX_DIRTYTIME_EXPIRE_NS (12 h after
 *       it was first kept; later accesses do not move dirtied_ns).
 * A commit alone (the commit interval, a snapshot) writes none of them:
 * model/atime.c gives the kernel's code for each rule. Invariants
 * (dirty_times_check, from fs_check through fs_atime_check):
 *   LZ1. an entry is in dirty_times iff it is in the queue and !written;
 *        the queue holds each entry once (a written one stays until the
 *        queue pops it; a later access of its inode keeps a new one);
 *   LZ2. the queue is in dirtied_ns order (the clock never goes back);
 *   LZ3. the atime of an unwritten entry is the one current_atime() returns
 *        (it looks in dirty_times first, so this much is LZ1's), and it is
 *        the inode's latest access: dirtied_ns <= atime <= the clock.
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

/* An inode's entry in one of the (subvolume, inode) tables: dirty_times or
 * lost_atimes; NULL when the table does not exist yet. */
static const struct dirty_time *time_lookup(GHashTable *table, uint64_t subvolume_id, uint64_t inode)
{
	if (!table)
		return NULL;
	struct dirty_time probe = { .subvolume_id = subvolume_id, .inode = inode };
	return g_hash_table_lookup(table, &probe);
}

static const struct dirty_time *find_dirty_time(const struct fs *fs, uint64_t subvolume_id, uint64_t inode)
{
	return time_lookup(fs->dirty_times, subvolume_id, inode);
}

static void forget_lost_atime(struct fs *fs, const struct inode_location *where)
{
	struct dirty_time probe = { .subvolume_id = where->subvolume->id, .inode = where->inode };
	if (fs->lost_atimes)
		g_hash_table_remove(fs->lost_atimes, &probe);
}

/* Every atime write of an access or a lazytime write-out: the policy's,
 * then (LA1) the inode's lost atime, if any, gives way to it. */
static inline void write_atime(struct fs *fs, const struct inode_location *where, int64_t atime,
			       struct btree_path *near, struct btree_item *inode)
{
	policy_of(fs)->write(fs, where, atime, near, inode);
	if (__builtin_expect(fs->lost_atimes != NULL, 0))
		forget_lost_atime(fs, where);
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
		d->cause = blockstore_cause(fs->store);
		g_hash_table_add(fs->dirty_times, d);
		g_queue_push_tail(&fs->dirty_time_queue, d);
	}
	d->atime = fs->clock_ns;
	fs->counters.atime_lazy++;
}

/* Writes one kept atime (LW2-LW4) with a reservation of its own; marks it
 * written. */
static void write_dirty_time(struct fs *fs, struct dirty_time *d)
{
	g_hash_table_remove(fs->dirty_times, d);
	d->written = true;
	struct subvolume *sv = fs_subvolume(fs, d->subvolume_id);
	if (!sv || sv->deleted || !fs_inode_item(sv, d->inode))
		return;
	int reserved = fs_reserve(fs, COWSIM_RESERVE_ATIME);
	if (reserved == -EROFS)
		return; /* aborted transaction: the read went on long ago */
	if (reserved) {
		fs->counters.atime_enospc++;
		fs->counters.atime_dropped++;
		return;
	}
	struct inode_location where = { sv, d->inode };
	enum space_cause was = blockstore_set_cause(fs->store, d->cause);
	write_atime(fs, &where, d->atime, NULL, NULL);
	blockstore_set_cause(fs->store, was);
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
	write_atime(fs, where, d->atime, NULL, inode);
	fs->counters.atime_updates++;
}

static bool entry_corrupt(GError **error, const struct dirty_time *d, const char *label, const char *why)
{
	return derived_corrupt(error, "lazytime entry", d->inode, "%s subvolume %" PRIu64 ", dirtied %" PRId64
			       ", atime %" PRId64 ", %s: %s", label, d->subvolume_id, d->dirtied_ns, d->atime,
			       d->written ? "written" : "unwritten", why);
}

/* LZ1-LZ3: one pass over the queue, then the table's size. */
static bool dirty_times_check(const struct fs *fs, GError **error)
{
	g_autoptr(GHashTable) queued = g_hash_table_new(NULL, NULL);
	guint unwritten = 0;
	int64_t last = INT64_MIN;
	for (const GList *l = fs->dirty_time_queue.head; l; l = l->next) {
		const struct dirty_time *d = l->data;
		if (!g_hash_table_add(queued, (gpointer)d))
			return entry_corrupt(error, d, "LZ1", "queued twice");
		if ((find_dirty_time(fs, d->subvolume_id, d->inode) == d) == d->written)
			return entry_corrupt(error, d, "LZ1", d->written ? "still in dirty_times" : "not in dirty_times");
		if (d->dirtied_ns < last)
			return entry_corrupt(error, d, "LZ2", "queued after a later one");
		last = d->dirtied_ns;
		if (!d->written && (d->atime < d->dirtied_ns || d->atime > fs->clock_ns))
			return entry_corrupt(error, d, "LZ3", "not an access between its dirtying and the clock");
		unwritten += !d->written;
	}
	guint held = fs->dirty_times ? g_hash_table_size(fs->dirty_times) : 0;
	if (held != unwritten)
		return derived_corrupt(error, "lazytime table", held, "LZ1 the queue holds %u unwritten entries", unwritten);
	return true;
}

bool atime_inode_item_atime(const struct subvolume *sv, uint64_t inode, int64_t *atime)
{
	struct btree_path near = { 0 };
	const struct btree_item *item = fs_inode_item_near(sv, inode, &near);
	if (!item)
		return false;
	*atime = stored_atime(item, &near);
	return true;
}

void fs_dirty_time_free(struct fs *fs)
{
	if (fs->dirty_times)
		g_hash_table_unref(fs->dirty_times);
	fs->dirty_times = NULL;
	if (fs->lost_atimes)
		g_hash_table_unref(fs->lost_atimes);
	fs->lost_atimes = NULL;
	g_queue_clear_full(&fs->dirty_time_queue, g_free);
}

/* --- an atime update that finds no space, as kernel 6.18 handles it --------
 *
 * touch_atime() -> btrfs_update_time() sets the in-memory atime, then
 * btrfs_dirty_inode() starts a transaction for the inode item. Its
 * reservation (start_transaction -> __reserve_bytes, BTRFS_RESERVE_FLUSH_ALL)
 * waits while the flusher commits; when even that frees nothing the error
 * goes back to touch_atime(), which drops it: the read succeeds, the inode
 * stays clean, and the new atime lives in memory only until the inode is
 * evicted or the filesystem unmounted (measured: docs/btrfs-ground-truth.md).
 * fs->lost_atimes keeps those in-memory atimes, and current_atime() returns
 * them, so the mount's rule (relatime) sees what the kernel sees. The next
 * write of the inode's atime (an access that finds space, a lazytime
 * write-out, a settime: utimensat's setattr_copy() then btrfs_dirty_inode())
 * puts the in-memory atime on disk, and the model forgets the lost one (LA1):
 * an older lost atime must not hide the newer one written. Other changes of
 * the inode do not write a lost atime back (the kernel's inode update would
 * carry it; the model leaves that out: only a later snapshot would see it).
 * The commits the flusher forced are counted (enospc_commits, and commits). */

/* The atime stored for an inode: the policy's own (a side-table item), else
 * its inode item's; false when the inode is gone. */
static bool atime_stored(const struct subvolume *sv, uint64_t inode, int64_t *atime)
{
	if (!atime_inode_item_atime(sv, inode, atime))
		return false;
	if (policy_of(sv->fs)->read)
		policy_of(sv->fs)->read(sv, inode, atime);
	return true;
}

static void keep_lost_atime(struct fs *fs, const struct inode_location *where)
{
	if (!fs->lost_atimes)
		fs->lost_atimes = g_hash_table_new_full(dirty_time_hash, dirty_time_equal, g_free, NULL);
	struct dirty_time *d = (struct dirty_time *)time_lookup(fs->lost_atimes, where->subvolume->id, where->inode);
	if (!d) {
		d = g_new0(struct dirty_time, 1);
		d->subvolume_id = where->subvolume->id;
		d->inode = where->inode;
		atime_stored(where->subvolume, where->inode, &d->stored); /* the access found the inode */
		g_hash_table_add(fs->lost_atimes, d);
	}
	d->atime = fs->clock_ns;
}

/* LA1: each lost atime's inode, if still there, stores what it did when the
 * update was lost. */
static bool lost_atimes_check(const struct fs *fs, GError **error)
{
	if (!fs->lost_atimes)
		return true;
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, fs->lost_atimes);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		const struct dirty_time *d = key;
		const struct subvolume *sv = fs_subvolume(fs, d->subvolume_id);
		int64_t stored;
		if (!sv || sv->deleted || !atime_stored(sv, d->inode, &stored) || stored == d->stored)
			continue;
		return derived_corrupt(error, "lost atime", d->inode,
				       "LA1 subvolume %" PRIu64 ", atime %" PRId64 " lost over %" PRId64
				       ", but %" PRId64 " written since: the lost one hides it",
				       d->subvolume_id, d->atime, d->stored, stored);
	}
	return true;
}

bool fs_atime_check(const struct fs *fs, GError **error)
{
	return dirty_times_check(fs, error) && lost_atimes_check(fs, error) &&
	       (!policy_of(fs)->check || policy_of(fs)->check(fs, error));
}

/* The reservation again after each of the flusher's commits: 0 once one
 * frees enough, else the last error. */
static int reserve_after_flushing(struct fs *fs, unsigned items)
{
	uint64_t events = fs->counters.enospc_events;
	int reserved = -ENOSPC;
	for (unsigned i = 0; i < BTRFS_ENOSPC_FLUSH_COMMITS && reserved == -ENOSPC; i++) {
		fs_commit(fs);
		fs->counters.enospc_commits++;
		reserved = fs_reserve(fs, items);
	}
	fs->counters.enospc_events = events; /* one event per access, not per try */
	return reserved;
}

/* Would an access now write this inode's atime (mount rule and policy
 * gates that do not depend on space)? */
static inline bool atime_wanted(const struct fs *fs, const struct subvolume *sv, const struct btree_item *inode,
				int64_t stored)
{
	const struct item_inode *times = btree_item_inode(inode);
	struct atime_times t = { current_atime(sv, inode, stored), times->mtime, times->ctime };
	return atime_needs_update(&fs->config.atime, fs_mode_is_dir(times->mode), &t, fs->clock_ns);
}

bool fs_atime_wanted(const struct fs *fs, const struct subvolume *sv, const struct btree_item *inode,
		     int64_t stored)
{
	return atime_wanted(fs, sv, inode, stored);
}

/* access_update() when its reservation failed (out of line: the usual
 * update's frame stays small). 0: reserved after all (the flusher's commits
 * made room), the write goes ahead; 1: the access goes on without its
 * write; -ENOSPC: the read fails. */
static int __attribute__((noinline)) access_unreserved(struct fs *fs, const struct inode_location *where,
							struct btree_path **near, int reserved)
{
	const struct atime_policy_ops *policy = policy_of(fs);
	if (reserved == -ENOSPC && !policy->drops_on_enospc) {
		reserved = reserve_after_flushing(fs, COWSIM_RESERVE_ATIME);
		*near = NULL; /* the commits may have moved the path the lookup left */
	}
	if (reserved == -EROFS) {
		/* The transaction aborted (the store overcommitted) and the
		 * filesystem is read-only: touch_atime() skips the update when
		 * mnt_want_write() fails, and the read goes on. Not a failed
		 * read: the one that met ENOSPC was counted when it happened. */
		fs->counters.atime_skipped++;
		return 1;
	}
	if (!reserved)
		return 0;
	fs->counters.atime_enospc++;
	if (policy->drops_on_enospc) {
		fs->counters.atime_dropped++;
		fs->counters.atime_skipped++;
		return 1;
	}
	if (fs->config.enospc_read == FS_ENOSPC_READ_FAIL) {
		fs->counters.failed_reads++;
		return -ENOSPC;
	}
	fs->counters.atime_lost++;
	keep_lost_atime(fs, where);
	return 1;
}

/* An access the mount rule wants written: the policy's gates, the
 * reservation and the write. */
static int __attribute__((noinline)) access_update(struct fs *fs, const struct inode_location *where,
						   const struct btree_item *inode, int64_t stored,
						   struct btree_path *near, bool *updated)
{
	struct subvolume *sv = where->subvolume;
	const struct atime_policy_ops *policy = policy_of(fs);
	if (sv->readonly) {
		fs->counters.atime_readonly++;
		fs->counters.atime_skipped++;
		return 0;
	}
	if (policy->holds_back && policy->holds_back(fs, sv, inode, current_atime(sv, inode, stored))) {
		fs->counters.atime_skipped++;
		return 0;
	}
	if (lazytime_vfs(fs)) {
		keep_dirty_time(fs, where);
		if (updated)
			*updated = true;
		return 0;
	}
	uint64_t tickets = fs->counters.reserve_tickets;
	int reserved = fs_reserve(fs, COWSIM_RESERVE_ATIME);
	/* A ticket's flusher wrote the trees: its delayed items may have copied
	 * the leaf the lookup found and freed it, and btree_lookup_near() needs
	 * a path with no change since (a read then followed freed blocks). */
	if (near && fs->counters.reserve_tickets != tickets)
		near->levels = 0;
	if (__builtin_expect(reserved, 0)) {
		int unreserved = access_unreserved(fs, where, &near, reserved);
		if (unreserved)
			return unreserved < 0 ? unreserved : 0;
	}
	write_atime(fs, where, fs->clock_ns, near, NULL);
	fs->counters.atime_updates++;
	fs_release(fs);
	if (updated)
		*updated = true;
	return 0;
}

/* fs_access_inode() when the atime is not at once where the path says
 * (no path, an overlay of another form, runs) or may be kept apart (a
 * lazytime or lost atime, a policy's own). */
static int __attribute__((noinline)) access_otherwise(struct fs *fs, const struct inode_location *where,
						      const struct btree_item *inode, struct btree_path *near,
						      bool *updated)
{
	int64_t stored = stored_atime(inode, near);
	if (!atime_wanted(fs, where->subvolume, inode, stored)) {
		fs->counters.atime_skipped++;
		return 0;
	}
	return access_update(fs, where, inode, stored, near, updated);
}

/* Most accesses of a relatime mount write nothing (a second grep's every
 * read): that answer comes first, from the leaf the lookup left, with no
 * call but the one that updates (so no frame: the rest is access_otherwise()). */
int fs_access_inode(struct fs *fs, const struct inode_location *where, const struct btree_item *inode,
		    struct btree_path *near, bool *updated)
{
	if (updated)
		*updated = false;
	int64_t stored;
	if (__builtin_expect(!near || !near->levels || fs->dirty_times || fs->lost_atimes || policy_of(fs)->read ||
				     !btree_path_inode_atime_at_once(near, inode, &stored),
			     0))
		return access_otherwise(fs, where, inode, near, updated);
	const struct item_inode *times = btree_item_inode(inode);
	struct atime_times t = { stored, times->mtime, times->ctime };
	if (!atime_needs_update(&fs->config.atime, fs_mode_is_dir(times->mode), &t, fs->clock_ns)) {
		fs->counters.atime_skipped++;
		return 0;
	}
	return access_update(fs, where, inode, stored, near, updated);
}

/* --- the snapshot-time warning --------------------------------------------- */

struct inode_count {
	const struct fs *fs;
	const struct subvolume *sv;
	fs_atime_wanted_fn wanted;
	uint64_t count;
};

static bool count_wanted(const struct btree_item *item, void *opaque)
{
	struct inode_count *c = opaque;
	if (btree_item_key(item)->type == BTRFS_INODE_ITEM_KEY &&
	    c->wanted(c->fs, c->sv, item, btree_item_inode(item)->atime))
		c->count++;
	return true;
}

/* Only where no leaf has an atime overlay (the keyed design, side tables):
 * the atime writes of both go through writable items. */
uint64_t fs_count_wanted_inodes(const struct fs *fs, const struct subvolume *sv, fs_atime_wanted_fn wanted)
{
	struct inode_count c = { fs, sv, wanted, 0 };
	struct btree_key first = BTRFS_KEY(0, 0, 0), last = BTRFS_KEY(UINT64_MAX, UINT8_MAX, UINT64_MAX);
	subvol_visit_range(sv, &first, &last, count_wanted, &c);
	return c.count;
}

uint64_t atime_estimate_inline(struct fs *fs, const struct subvolume *sv, fs_atime_wanted_fn wanted)
{
	bool from_items = wanted == fs_atime_wanted && fs_atime_wanted_from_items(fs);
	return fs->design->inline_atime_estimate(fs, sv, wanted, false, from_items);
}

/* current_atime() finds nothing apart from the item to answer with. */
bool fs_atime_wanted_from_items(const struct fs *fs)
{
	return (!fs->dirty_times || !g_hash_table_size(fs->dirty_times)) &&
	       (!fs->lost_atimes || !g_hash_table_size(fs->lost_atimes)) && !policy_of(fs)->read;
}

int fs_unshare_estimate(struct fs *fs, const char *source, uint64_t *bytes)
{
	struct inode_location src;
	int ret = fs_resolve(fs, source, &src);
	if (ret)
		return ret;
	if (fs->config.atime.mode == ATIME_NOATIME || src.subvolume->readonly)
		*bytes = 0;
	else
		*bytes = policy_of(fs)->unshare_estimate(fs, src.subvolume, fs_atime_wanted);
	return 0;
}
