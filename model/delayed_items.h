/*
 * model/delayed_items.h - btrfs's delayed items and delayed inodes
 * (fs/btrfs/delayed-inode.c): what a directory operation leaves in memory
 * for a while instead of writing into the subvolume's tree at once.
 *
 * A create, mkdir, symlink, link or rename inserts the new name's DIR_ITEM
 * at once, but its DIR_INDEX waits in the directory's delayed node; the
 * node is written later in batches of as many items as fit one leaf
 * (btrfs_insert_delayed_item), which splits the leaf at the insertion point
 * where one-at-a-time inserts would have split it in the middle. An inode
 * item that changes (size, times, a chown) marks its inode's delayed node
 * dirty. Every pending DIR_INDEX and every dirty inode counts one item.
 *
 * When the nodes are written (a design without insert_batch keeps none:
 * its indexes go in at once):
 *  - by the worker, the node least recently touched first: from
 *    BTRFS_DELAYED_BACKGROUND (128) waiting items it runs beside the
 *    writer, one node per operation, until fewer than half that wait
 *    (btrfs_balance_delayed_items queues btrfs_async_run_delayed_root);
 *    from BTRFS_DELAYED_WRITEBACK (512) the writer itself waits until
 *    BTRFS_DELAYED_BATCH (16) items more were written;
 *  - every node at a commit, after writeback (btrfs_run_delayed_items), and
 *    before a snapshot is deleted.
 * A name removed while its DIR_INDEX still waits takes it out of the node
 * (btrfs_delete_delayed_insertion_item); an inode deleted takes its node.
 *
 * Simplifications (docs/model.md): the model writes an inode item at once
 * (its leaf is copied when btrfs's delayed inode would copy it: once per
 * transaction either way), so a dirty inode only counts toward the marks
 * above; DIR_INDEX deletions of names already in the tree go at once rather
 * than batched; atime updates, which btrfs also turns into dirty delayed
 * inodes, do not count (no directory waits during a read-only sweep).
 *
 * Invariants (delayed_items_check):
 *  DI1 the item count is the pending indexes plus the dirty inodes, and the
 *      counts of dirty inodes and of directories with pending indexes (what
 *      delayed_items_reserved_bytes() is taken from) are right;
 *  DI2 every node holds something, is in the queue once and in the table
 *      once, where a probe from its home finds it;
 *  DI3 a node's pending indexes ascend, above every DIR_INDEX its
 *      directory already has in the tree, each with its DIR_ITEM there;
 *  DI4 the memo of the last node found is NULL or a node of the table (a
 *      node written or forgotten leaves it).
 */
#ifndef COWSIM_MODEL_DELAYED_ITEMS_H
#define COWSIM_MODEL_DELAYED_ITEMS_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

struct fs;
struct subvolume;
union item_payload;
struct delayed_items;

struct delayed_items *delayed_items_new(void);
void delayed_items_free(struct delayed_items *delayed);

/* The DIR_INDEX (dir, index) of `size` bytes: waits in dir's node, or goes
 * into the tree at once when the design has no batches. Returns whether it
 * changed sv's items (the second case): paths kept into them are stale. */
bool delayed_items_insert_index(struct fs *fs, struct subvolume *sv, uint64_t dir, uint64_t index,
				uint32_t size, const union item_payload *payload);
/* Takes a waiting DIR_INDEX out; false when it was not waiting (it is in
 * the tree). */
bool delayed_items_cancel_index(struct fs *fs, struct subvolume *sv, uint64_t dir, uint64_t index);
/* The highest waiting index of dir in *index; false when none waits. */
bool delayed_items_last_index(const struct fs *fs, const struct subvolume *sv, uint64_t dir, uint64_t *index);
/* The inode item of `inode` changed (btrfs_delayed_update_inode). */
void delayed_items_inode_dirty(struct fs *fs, struct subvolume *sv, uint64_t inode);
/* The inode is gone: its node too (btrfs_kill_delayed_inode_items). Its
 * directory indexes, if it was a directory, were removed before. */
void delayed_items_forget_inode(struct fs *fs, struct subvolume *sv, uint64_t inode);

/* After an operation: write the oldest nodes when too many items wait. */
void delayed_items_balance(struct fs *fs);
/* Write every node (a commit). */
void delayed_items_run(struct fs *fs);
/* Items waiting now (pending indexes and dirty inodes). */
uint64_t delayed_items_count(const struct fs *fs);
/* The bytes the waiting items hold reserved (space-info may_use). */
uint64_t delayed_items_reserved_bytes(const struct fs *fs, uint32_t nodesize);

/* DI1-DI4; false with *error (MODEL_ERROR_CORRUPT) at the first broken. */
bool delayed_items_check(const struct fs *fs, GError **error);

/* For tests that break DI1 on purpose. */
void delayed_items_miscount_for_test(struct fs *fs, int64_t delta);
/* The same for the count of dirty inodes the reservation is taken from. */
void delayed_items_miscount_dirty_for_test(struct fs *fs, int64_t delta);
/* For the test that breaks DI2: the oldest node moves to a slot of the
 * table before its home, where no probe finds it. Returns its inode. */
uint64_t delayed_items_misplace_for_test(struct fs *fs);
/* For the test that breaks DI4: the memo names a copy of the oldest node
 * that the table does not hold (freed with the delayed items). Returns
 * the copy's inode. */
uint64_t delayed_items_break_memo_for_test(struct fs *fs);

#endif
