/*
 * model/refs.h - reference counts and the extent tree's backrefs.
 *
 * btrfs counts references to every tree block and data extent in the extent
 * tree, lazily (Rodeh, "B-trees, Shadowing, and Clones", ACM TOS 2008): a
 * snapshot only adds one reference to each child of the copied root; the
 * counts move down the tree when shared blocks are copied. This module keeps
 * the counts on the blocks and extents themselves (the truth the checker
 * audits) and writes them into the extent tree as btrfs's delayed refs are
 * run: in batches during the transaction once enough are pending
 * (refs_throttle) and the rest at commit, so that the extent tree grows and
 * is copied like any other tree.
 *
 * Backrefs, and the bytes each costs in an extent item (constants.h):
 *
 *   tree block  METADATA_ITEM (bytenr, 169, level) 24 + 9 per inline ref
 *               TREE_BLOCK_REF(root)    a parent owned by `root`, or the root item
 *               SHARED_BLOCK_REF(parent) a FULL_BACKREF parent
 *   data extent EXTENT_ITEM (bytenr, 168, bytes) 24 + per inline ref:
 *               EXTENT_DATA_REF(root, inode, offset) 29, SHARED_DATA_REF(parent) 13
 *
 * Refs past BTRFS_MAX_EXTENT_ITEM_SIZE become keyed items of their own.
 *
 * Invariants (refs_check):
 *  RF1 a block's tree_refs equals the roots plus non-FULL_BACKREF parents that
 *     point at it; its shared_refs equals the FULL_BACKREF parents;
 *  RF2 a data extent's data_refs and shared_refs equal the file extent items in
 *     non-FULL and FULL leaves that point at it;
 *  RF3 no reachable block or extent is freed; every freed one has zero refs.
 *
 * Approximations (docs/model.md): each reference is its own backref (btrfs
 * merges EXTENT_DATA_REFs of one inode and offset into one with a count);
 * when refs overflow an item, data refs are kept inline before shared ones.
 */
#ifndef COWSIM_MODEL_REFS_H
#define COWSIM_MODEL_REFS_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

#include "btree.h"

#include "transaction.h"

enum {
	DATA_EXTENT_FREED = 1u << 0,
	DATA_EXTENT_DIRTY = 1u << 1,
};

struct data_extent {
	uint64_t bytenr;
	uint64_t num_bytes;           /* on disk, a multiple of the sector size */
	uint32_t data_refs;           /* EXTENT_DATA_REF backrefs */
	uint32_t shared_refs;         /* SHARED_DATA_REF backrefs */
	uint32_t item_refs;           /* refs in the extent tree as last written */
	uint32_t keyed_items;         /* keyed backref items as last written */
	uint8_t flags;
	uint8_t refs_cause;           /* enum space_cause its pending extent-tree record is charged to */
	struct data_extent *live_prev, *live_next; /* refs' list of live extents (refs.c) */
};

static inline uint32_t data_extent_refs(const struct data_extent *extent)
{
	return extent->data_refs + extent->shared_refs;
}

/* Called when a data extent's last reference goes, before its item is
 * deleted: the filesystem drops its checksums and frees its space. */
typedef void (*refs_data_freed_fn)(void *opaque, struct transaction *txn, struct data_extent *extent);

struct refs;

struct refs *refs_new(struct btree *extent_tree, refs_data_freed_fn on_data_freed, void *opaque);
void refs_free(struct refs *refs);

/* The transaction's accounting in the designs that count references
 * (transaction.h): block_allocated is refs_block_created, block_cowed
 * refs_update_for_cow, block_unlinked refs_drop_block(, false), throttle
 * refs_throttle (that may stop), run_queued refs_commit, pending refs_pending. Set
 * txn->ops to it and txn->accounting to the struct refs. */
extern const struct transaction_ops refs_transaction_ops;

/* The delayed-refs reserve: what the pending heads hold reserved,
 * btrfs_calc_delayed_ref_bytes(1) each (space-info.h may_use). */
uint64_t refs_reserved_bytes(const struct refs *refs, uint32_t nodesize);

/* A block just allocated for `tree_id`: one TREE_BLOCK_REF from its parent or
 * root item. */
void refs_block_created(struct transaction *txn, struct tree_block *block);

/* update_ref_for_cow(): `buf` is being copied to `cow` by tree `root_id`.
 * Moves references of their children as btrfs does, then drops the path's
 * reference to `buf` (freeing it when that was the last). */
void refs_update_for_cow(struct transaction *txn, uint64_t root_id,
			 struct tree_block *buf, struct tree_block *cow);

/* The children of `block` gain (or lose) one reference each: SHARED by
 * `block`'s address when full_backref, TREE_BLOCK_REF by owner otherwise.
 * For a leaf the children are the data extents its file extent items map. */
void refs_inc_children(struct transaction *txn, struct tree_block *block, bool full_backref);
void refs_dec_children(struct transaction *txn, struct tree_block *block, bool full_backref);

/* Drop one reference to a block, from a root or a non-FULL parent when
 * !shared, from a FULL_BACKREF parent when shared. At zero the block is freed
 * and, when it still had children (a tree being dropped), they lose the
 * references it held. */
void refs_drop_block(struct transaction *txn, struct tree_block *block, bool shared);
/* A deleted subvolume's tree: its root item's reference to `root` goes now;
 * the blocks only it held go later, a few at a time between stops
 * (btrfs_drop_snapshot(), model/refs.c RF7): in the next throttle, which may
 * stop when the transaction's stop hook asks, or at the latest in the next
 * refs_commit(). */
void refs_drop_tree(struct transaction *txn, struct tree_block *root);
void refs_add_block(struct transaction *txn, struct tree_block *block, bool shared);

/* Data extents. new: one EXTENT_DATA_REF, from the file extent item the
 * caller is inserting into a leaf of its own tree. */
struct data_extent *refs_data_extent_new(struct transaction *txn, uint64_t bytenr, uint64_t num_bytes);
void refs_data_add(struct transaction *txn, struct data_extent *extent, bool shared);
void refs_data_drop(struct transaction *txn, struct data_extent *extent, bool shared);

/* Write every changed count into the extent tree, repeating while the
 * extent tree's own copies change counts, as btrfs runs delayed refs at
 * commit. Returns the number of extent items written. */
uint64_t refs_commit(struct refs *refs, struct transaction *txn);

/* Run delayed refs during the transaction, as btrfs's preemptive flusher
 * does: first the dead trees' drops (refs_drop_tree), then, while more than
 * refs_throttle_heads() heads are pending, write the next quarter of that
 * many in address order from a cursor. Call it between operations (never
 * inside a tree change). Returns the heads written. */
uint64_t refs_throttle(struct refs *refs, struct transaction *txn);
/* 128 MiB / btrfs_calc_delayed_ref_bytes(1): 256 heads at 16 KiB nodes. */
uint32_t refs_throttle_heads(uint32_t nodesize);
/* Blocks and data extents whose counts changed since they were last written. */
unsigned refs_pending_heads(const struct refs *refs);

/* The data extents freed in the running transaction (struct data_extent *,
 * DATA_EXTENT_FREED set): their items leave the extent tree when their heads
 * run, and the commit frees them. For checkers. */
const GPtrArray *refs_freed_data(const struct refs *refs);

/* Adds to `seen` the blocks a stopped drop still holds (RF7): the frames
 * and what they reference, for freeing the model. */
void refs_collect_dead_blocks(const struct refs *refs, GHashTable *seen);
/* The same blocks for btree_count_holders() / btree_release_held() at the
 * end (fs_free): `release` false counts, true frees (a frame's own block,
 * which nothing else holds, directly). */
void refs_hold_dead_blocks(const struct refs *refs, bool release);

/* True while counts changed since the last refs_commit(). */
bool refs_pending(const struct refs *refs);

/* The extent item size for a count of refs (inline part) and how many keyed
 * items the rest takes: exposed for tests and docs. */
uint32_t refs_metadata_item_size(uint32_t nodesize, uint32_t refs, uint32_t *keyed);
uint32_t refs_data_item_size(uint32_t nodesize, uint32_t data_refs, uint32_t shared_refs, uint32_t *keyed);

/* RF1-RF3 over all `trees` (every live root, the extent tree included) and
 * `unreleased`, the blocks freed and not released yet
 * (blockstore_unreleased_blocks()); RF4-RF5, the pending heads are the
 * dirty blocks and extents, once each; RF6, the order of those the
 * throttle took in; RF7, the dead trees' frames; and RF11, their count.
 * `live` is filled with every reachable block (key and value the block). */
bool refs_check(const struct refs *refs, struct btree *const *trees, unsigned ntrees, const GPtrArray *unreleased,
		GHashTable *live, GError **error);

/* Breaks RF6 for test_checkers (a second call mends it): swaps the two
 * lowest heads of the sorted run ahead of the cursor and returns the
 * address of the lower, now out of order; 0 when the run holds fewer
 * than two. */
uint64_t refs_misorder_heads_for_test(struct refs *refs);

/* Breaks RF6 for test_checkers (a second call mends it): swaps ahead_late's
 * top with its first child and returns the lower address, now below its
 * parent; 0 when the heap holds fewer than two. */
uint64_t refs_misorder_late_heads_for_test(struct refs *refs);

/* For test_checkers' breaks of RF6: the head at ahead_run's front (one of
 * *block and *extent set), or false when the run is empty. */
bool refs_front_head_for_test(const struct refs *refs, struct tree_block **block, struct data_extent **extent);

/* For test_checkers' breaks of RF6: moves the throttle's cursor to `cursor`;
 * returns where it was. */
uint64_t refs_move_cursor_for_test(struct refs *refs, uint64_t cursor);

/* Breaks RF4 for test_checkers: queues `block`, already queued, a second
 * time (counted, RF11); !again takes that entry back. */
void refs_queue_again_for_test(struct refs *refs, struct tree_block *block, bool again);

/* Breaks RF11 for test_checkers: the count of pending heads moves `by`
 * (the opposite call mends it). */
void refs_miscount_pending_for_test(struct refs *refs, int by);

/* Breaks RF12 for test_checkers: sets the throttle's idle bound to
 * `idle_max`; returns the one it had (setting that back mends it). */
int64_t refs_move_idle_max_for_test(struct refs *refs, int64_t idle_max);

#endif
