/*
 * model/design.h - the seam between the filesystem and a snapshot design.
 *
 * A design decides where a subvolume's items live and how a snapshot shares
 * them. The rest of the model (namespace, data, atime policies, commits)
 * sees a subvolume only through the item view below (the subvol_* calls)
 * and the few snapshot and report hooks, and never asks which design runs.
 *
 *   design        file                 items of a subvolume          a snapshot
 *   btrfs         model/design_btrfs.c a tree of its own (own_tree)  copies the root, +1 ref per child
 *   keyed         model/design_keyed.c one shared tree, keys carry   new snapshot ids for both sides
 *                                      the writer's snapshot id
 *
 * A new design is its own file(s) with one `const struct fs_design_ops`,
 * and one line in model/design_registry.c. If it counts space otherwise
 * than by references it also brings a `struct transaction_ops`
 * (transaction.h) and sets it in init(); btree.c and refs.c need no edit.
 *
 * Common rules for every method:
 *  - Keys passed in are base keys: key->snapshot is ignored, and the
 *    design may give items keys of its own (the keyed design does).
 *  - Writes happen inside an operation that reserved space (fs_reserve) in
 *    the running transaction fs->txn; a method never fails for lack of
 *    space and never commits.
 *  - An item pointer returned is valid until the next change to any tree.
 *  - A design keeps per-filesystem state in fs->design_state and
 *    per-subvolume state in sv->design_private; sv->tree must always point
 *    at the tree holding the subvolume's items (walks, checks, usage and
 *    commits read it), and sv->tree == &sv->own_tree says that the tree is
 *    the subvolume's alone.
 */
#ifndef COWSIM_MODEL_DESIGN_H
#define COWSIM_MODEL_DESIGN_H

#include "fs_internal.h"

/* Would an access write this inode item's atime now (the mount's rule and
 * the policy's gates that do not depend on space)? `stored` is the atime
 * the leaf keeps for it (btree_leaf_inode_atime). */
typedef bool (*fs_atime_wanted_fn)(const struct fs *fs, const struct subvolume *sv, const struct btree_item *inode,
				   int64_t stored);

enum subvol_delete_result { SUBVOL_ABSENT, SUBVOL_DELETED, SUBVOL_WHITED_OUT };

struct fs_design_ops {
	const char *name;             /* as --design names it */
	const char *summary;          /* one line: how it shares metadata */

	/* --- life ---------------------------------------------------------- */

	/* fs_new(), before any tree exists: set up fs->design_state, and
	 * fs->txn.ops and fs->txn.accounting if the design does not count
	 * references (they are refs_transaction_ops and fs->refs on entry).
	 * May be NULL. */
	void (*init)(struct fs *fs);
	/* mkfs, once the global trees exist: give the top-level subvolume
	 * `top` (id 5, no items yet) its tree, set up with btree_init(). */
	void (*top_subvolume)(struct fs *fs, struct subvolume *top);
	/* fs_free(), after every tree block was released: free
	 * fs->design_state. May be NULL. */
	void (*free)(struct fs *fs);
	/* A subvolume is freed (fs_free): free sv->design_private. May be NULL. */
	void (*subvolume_free)(struct subvolume *sv);

	/* --- the item view: a subvolume's items as it sees them ------------- */

	/* The item with this base key, or NULL. */
	const struct btree_item *(*lookup)(const struct subvolume *sv, const struct btree_key *key);
	/* The item with the greatest key <= key among those of key's objectid
	 * and type, or NULL. */
	const struct btree_item *(*lookup_le)(const struct subvolume *sv, const struct btree_key *key);
	/* Calls cb on every item with first <= key <= last in key order until
	 * it returns false; returns how many it was handed. */
	uint64_t (*visit_range)(const struct subvolume *sv, const struct btree_key *first,
				const struct btree_key *last, btree_visit_fn cb, void *opaque);
	/* The same, a run of consecutive items a call (btree_visit_range_items);
	 * a run is items as visit_range() would hand them, one after another.
	 * May be NULL: visit_range(), one item a run. */
	uint64_t (*visit_range_items)(const struct subvolume *sv, const struct btree_key *first,
				      const struct btree_key *last, btree_visit_items_fn cb, void *opaque);
	/* The item, made writable in this transaction (the design copies what
	 * it must), or NULL when absent. Its size does not change. */
	struct btree_item *(*lookup_for_write)(struct fs *fs, struct subvolume *sv, const struct btree_key *key);
	/* The same three near an earlier answer: *near holds the path a
	 * lookup in the same subvolume left, with no change since, or has
	 * levels 0. A design may use it to search less, or ignore it and leave
	 * levels 0; answers equal those of the plain calls. */
	const struct btree_item *(*lookup_near)(const struct subvolume *sv, const struct btree_key *key,
						struct btree_path *near);
	/* lookup_near() from a path kept across changes to the subvolume (a
	 * read cursor): the design checks that *kept is still a path of its
	 * tree before it starts from it (btree_lookup_kept), and leaves there
	 * what lookup_near() leaves. May be NULL: btree_path_is_current() of
	 * sv->tree, then lookup_near(). */
	const struct btree_item *(*lookup_kept)(const struct subvolume *sv, const struct btree_key *key,
						struct btree_path *kept);
	uint64_t (*visit_range_near)(const struct subvolume *sv, const struct btree_key *first,
				     const struct btree_key *last, btree_visit_fn cb, void *opaque,
				     struct btree_path *near);
	struct btree_item *(*lookup_for_write_near)(struct fs *fs, struct subvolume *sv, const struct btree_key *key,
						    struct btree_path *near);
	/* Sets an existing inode item's atime as lookup_for_write_near() and a
	 * store would; a design may keep it beside the item so that the leaf
	 * keeps sharing its item array (btree_path_write_inode_atime). *near is
	 * where lookup_near() of this inode item left it, with no change to the
	 * subvolume since, or has levels 0 (an access's read then write,
	 * atime_policy.c). */
	void (*write_inode_atime_near)(struct fs *fs, struct subvolume *sv, uint64_t inode, int64_t atime,
				       struct btree_path *near);
	/* Inserts an item that the subvolume does not see (the caller looked);
	 * payload may be NULL. Returns it. */
	struct btree_item *(*insert)(struct fs *fs, struct subvolume *sv, const struct btree_key *key, uint32_t size,
				     const union item_payload *payload);
	/* The same near *near (as lookup_near takes it); leaves *near the path
	 * a lookup of the new item's key finds (a near for the next call, until
	 * the next change), or levels 0. May be NULL: insert, levels 0. */
	struct btree_item *(*insert_near)(struct fs *fs, struct subvolume *sv, const struct btree_key *key,
					  uint32_t size, const union item_payload *payload, struct btree_path *near);
	/* Inserts `count` items with sorted base keys, none of which the
	 * subvolume sees and with nothing it sees between them, together: one
	 * batch of btrfs_insert_empty_items, which needs room in one leaf.
	 * May be NULL: the model then inserts them one at a time, and writes
	 * directory indexes at once instead of as btrfs's delayed items
	 * (model/delayed_items.h), which batch them. */
	void (*insert_batch)(struct fs *fs, struct subvolume *sv, const struct btree_key *keys, const uint32_t *sizes,
			     const union item_payload *payloads, uint32_t count);
	/* Changes the size of an item the subvolume sees; NULL when absent. */
	struct btree_item *(*resize)(struct fs *fs, struct subvolume *sv, const struct btree_key *key, uint32_t size);
	/* Removes the item from the subvolume's view: deleted, or hidden from it
	 * (SUBVOL_WHITED_OUT) while others still see it. A file extent item's
	 * data reference is the caller's to drop, as for insert. */
	enum subvol_delete_result (*delete)(struct fs *fs, struct subvolume *sv, const struct btree_key *key);

	/* --- snapshots ------------------------------------------------------ */

	/* fs_snapshot(), at a commit boundary: `snap` is new (id, path, no
	 * tree); make it see exactly the items `src` sees, sharing them as the
	 * design shares. Cannot fail (space was reserved). */
	void (*snapshot_create)(struct fs *fs, struct subvolume *src, struct subvolume *snap);
	/* fs_delete_snapshot(): `snap` is marked deleted and out of the
	 * namespace; free what only it held (blocks, item versions, data
	 * references), or hand it to the accounting to free after the
	 * operation (refs_drop_tree). Afterwards no live subvolume's view has
	 * changed. 0, or -EINTR when fs_cancelled() asked it to stop: the
	 * model is consistent, and finish_deletes() frees the rest. */
	int (*snapshot_delete)(struct fs *fs, struct subvolume *snap);
	/* At each commit, first: finish what a stopped snapshot_delete left.
	 * May be NULL (nothing is ever left). */
	void (*finish_deletes)(struct fs *fs);
	/* Before anything changes: may this design take a snapshot of `src`
	 * (read-only or not), or delete `snap` (src NULL)? 0, or the -errno
	 * fs_snapshot() / fs_delete_snapshot() return (a design whose
	 * snapshots are read-only refuses a writable one with -EOPNOTSUPP).
	 * May be NULL: always allowed. */
	int (*snapshot_allowed)(const struct fs *fs, const struct subvolume *src, const struct subvolume *snap,
				bool readonly);

	/* --- what atime policies ask ---------------------------------------- */

	/* A write to `item` of `sv` now would unshare nothing: no block on its
	 * path is referenced from another tree (or the leaf was already copied
	 * in this transaction). A block of its own tree last written by an
	 * earlier transaction is still copied, as any change copies it. The
	 * snapshot-aware and hybrid policies' test. */
	bool (*item_write_is_private)(const struct fs *fs, const struct subvolume *sv, const struct btree_item *item);
	/* The snapshot-time warning: bytes of metadata that writing the atime
	 * into every inode item of `sv` that `wanted` accepts would copy or
	 * add, if done right after a snapshot of `sv`. private_only: count only
	 * the writes item_write_is_private() would then allow. from_items:
	 * `wanted` is fs_atime_wanted() and answers from the item alone
	 * (fs_atime_wanted_from_items()), so the design may remember what it
	 * found in blocks no transaction changes again, while the clock and
	 * the mount options stay (a memo needs its own checker). */
	uint64_t (*inline_atime_estimate)(const struct fs *fs, const struct subvolume *sv, fs_atime_wanted_fn wanted,
					  bool private_only, bool from_items);
	/* The side-table policy may keep a tree per subvolume beside this
	 * design's items, snapshotted by cloning its root (references). */
	bool side_trees;

	/* --- reports and checks --------------------------------------------- */

	/* Per live subvolume exclusive and shared bytes (fs_subvolume_usage). */
	GArray *(*usage)(const struct fs *fs);
	/* What deleting the live subvolumes `set` together would free
	 * (fs_delete_estimate). NULL: the design cannot tell. */
	void (*reclaim)(const struct fs *fs, struct subvolume *const *set, unsigned n, struct fs_reclaim *out);
	/* The design's own invariants (its file's header lists them), on top
	 * of what fs_check() checks for every tree. false with *error set at
	 * the first violation. */
	bool (*check)(const struct fs *fs, GError **error);

	/* --- a design that keeps space its own way (all may be NULL) -------- */

	/* The clock moved to fs->clock_ns (fs_set_clock), or the model
	 * committed (`sync`: fs_commit, fs_sync): a design with a transaction
	 * clock of its own follows it. */
	void (*clock)(struct fs *fs, bool sync);
	/* fs_report(): the space this design holds, over what the block store
	 * counted for the tree blocks the item view lives in. */
	void (*report)(const struct fs *fs, struct fs_report *report);
};

/* The registry (model/design_registry.c): NULL-terminated, the default
 * first. Each design's table is in its own file. */
extern const struct fs_design_ops *const fs_designs[];

/* What the designs that share blocks by reference counts have in common
 * (model/design_refs.c). */
/* A clone of a tree's root for `new_id`, one reference more on each child:
 * a Rodeh snapshot of the tree. */
struct tree_block *fs_clone_root(struct fs *fs, struct tree_block *source, uint64_t new_id);
/* The leaf holding `key` will change in place: it was copied in this
 * transaction already, or nothing on its path is shared. */
bool fs_leaf_is_private(const struct fs *fs, const struct btree *tree, const struct btree_key *key);
/* Usage by reachability, as qgroups count it: a block or data extent
 * reached from one subvolume's tree only is exclusive to it. */
GArray *fs_usage_by_reachability(const struct fs *fs);
/* Reclaim by reachability: the blocks of the set's trees and side tables and
 * the data extents they map that no tree outside the set reaches. */
void fs_reclaim_by_reachability(const struct fs *fs, struct subvolume *const *set, unsigned n,
				struct fs_reclaim *out);

/* The inode items of `sv` that `wanted` accepts, as stored in their items
 * (model/atime_policy.c). */
uint64_t fs_count_wanted_inodes(const struct fs *fs, const struct subvolume *sv, fs_atime_wanted_fn wanted);
/* Would an access of `inode` of `sv` now write its atime (the mount
 * options, the clock, the atime in force)? stored: the atime its leaf
 * keeps (btree_leaf_inode_atime). The `wanted` of every estimate. */
bool fs_atime_wanted(const struct fs *fs, const struct subvolume *sv, const struct btree_item *inode, int64_t stored);
/* Does fs_atime_wanted() answer from the item alone, given the clock and
 * the mount options: no atime kept apart from the inode items (a lazytime
 * atime in memory, a lost update's, a policy's side table)? */
bool fs_atime_wanted_from_items(const struct fs *fs);

/* The item view as the model calls it: the running design's methods. */
static inline const struct fs_design_ops *design_of(const struct subvolume *sv)
{
	return sv->fs->design;
}

static inline const struct btree_item *subvol_lookup(const struct subvolume *sv, const struct btree_key *key)
{
	return design_of(sv)->lookup(sv, key);
}

static inline const struct btree_item *subvol_lookup_le(const struct subvolume *sv, const struct btree_key *key)
{
	return design_of(sv)->lookup_le(sv, key);
}

static inline uint64_t subvol_visit_range(const struct subvolume *sv, const struct btree_key *first,
					  const struct btree_key *last, btree_visit_fn cb, void *opaque)
{
	return design_of(sv)->visit_range(sv, first, last, cb, opaque);
}

struct subvol_items_adapter {
	btree_visit_items_fn cb;
	void *opaque;
};

static inline bool subvol_one_item(const struct btree_item *item, void *opaque)
{
	const struct subvol_items_adapter *a = opaque;
	return a->cb(item, 1, a->opaque);
}

static inline uint64_t subvol_visit_range_items(const struct subvolume *sv, const struct btree_key *first,
						const struct btree_key *last, btree_visit_items_fn cb, void *opaque)
{
	if (design_of(sv)->visit_range_items)
		return design_of(sv)->visit_range_items(sv, first, last, cb, opaque);
	struct subvol_items_adapter a = { cb, opaque };
	return design_of(sv)->visit_range(sv, first, last, subvol_one_item, &a);
}

static inline struct btree_item *subvol_lookup_for_write(struct fs *fs, struct subvolume *sv,
							 const struct btree_key *key)
{
	return design_of(sv)->lookup_for_write(fs, sv, key);
}

static inline const struct btree_item *subvol_lookup_near(const struct subvolume *sv, const struct btree_key *key,
							  struct btree_path *near)
{
	return design_of(sv)->lookup_near(sv, key, near);
}

static inline const struct btree_item *subvol_lookup_kept(const struct subvolume *sv, const struct btree_key *key,
							  struct btree_path *kept)
{
	if (design_of(sv)->lookup_kept)
		return design_of(sv)->lookup_kept(sv, key, kept);
	if (!btree_path_is_current(sv->tree, kept))
		kept->levels = 0;
	return design_of(sv)->lookup_near(sv, key, kept);
}

static inline uint64_t subvol_visit_range_near(const struct subvolume *sv, const struct btree_key *first,
					       const struct btree_key *last, btree_visit_fn cb, void *opaque,
					       struct btree_path *near)
{
	return design_of(sv)->visit_range_near(sv, first, last, cb, opaque, near);
}

static inline struct btree_item *subvol_lookup_for_write_near(struct fs *fs, struct subvolume *sv,
							      const struct btree_key *key, struct btree_path *near)
{
	return design_of(sv)->lookup_for_write_near(fs, sv, key, near);
}

static inline void subvol_write_inode_atime_near(struct fs *fs, struct subvolume *sv, uint64_t inode, int64_t atime,
						 struct btree_path *near)
{
	design_of(sv)->write_inode_atime_near(fs, sv, inode, atime, near);
}

static inline struct btree_item *subvol_insert(struct fs *fs, struct subvolume *sv, const struct btree_key *key,
					       uint32_t size, const union item_payload *payload)
{
	return design_of(sv)->insert(fs, sv, key, size, payload);
}

/* insert_near, or insert where the design has none. */
static inline struct btree_item *subvol_insert_near(struct fs *fs, struct subvolume *sv, const struct btree_key *key,
						    uint32_t size, const union item_payload *payload,
						    struct btree_path *near)
{
	if (design_of(sv)->insert_near)
		return design_of(sv)->insert_near(fs, sv, key, size, payload, near);
	near->levels = 0;
	return design_of(sv)->insert(fs, sv, key, size, payload);
}

/* insert_batch, or one insert after another where the design has none. */
static inline void subvol_insert_batch(struct fs *fs, struct subvolume *sv, const struct btree_key *keys,
				       const uint32_t *sizes, const union item_payload *payloads, uint32_t count)
{
	if (design_of(sv)->insert_batch) {
		design_of(sv)->insert_batch(fs, sv, keys, sizes, payloads, count);
		return;
	}
	for (uint32_t i = 0; i < count; i++)
		design_of(sv)->insert(fs, sv, &keys[i], sizes[i], payloads ? &payloads[i] : NULL);
}

static inline struct btree_item *subvol_resize(struct fs *fs, struct subvolume *sv, const struct btree_key *key,
					       uint32_t size)
{
	return design_of(sv)->resize(fs, sv, key, size);
}

static inline enum subvol_delete_result subvol_delete(struct fs *fs, struct subvolume *sv,
						      const struct btree_key *key)
{
	return design_of(sv)->delete(fs, sv, key);
}

#endif
