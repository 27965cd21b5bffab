/*
 * model/transaction.h - the running transaction every tree change belongs to.
 *
 * btrfs batches changes into transactions; a block written by the running
 * transaction changes in place, anything older is copied first. The model
 * keeps the transaction id, the store to allocate from, the space
 * accounting to tell, and counters that the reports read.
 *
 * The accounting is a table of hooks (struct transaction_ops): btree.c
 * reports what it does to blocks through them and knows nothing else about
 * how space is counted, and transaction_commit() runs what the accounting
 * queued through them. The btrfs-like and keyed designs use refcounts and
 * the extent tree (refs_transaction_ops, model/refs.c); a design that counts
 * space otherwise (birth times, dead lists) brings its own table and needs
 * no edit to btree.c or refs.c.
 */
#ifndef COWSIM_MODEL_TRANSACTION_H
#define COWSIM_MODEL_TRANSACTION_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

struct blockstore;
struct transaction;
struct tree_block;

/*
 * What btree.c tells the accounting. Every hook is called inside a tree
 * change, with the tree half-way through it: a hook may allocate or free
 * blocks through txn->store but must not change any tree.
 */
struct transaction_ops {
	/* `block` was just allocated by this transaction for the tree
	 * `block->owner`, new (a root, a split, an empty leaf) or as a copy
	 * (btree_copy_block): the one reference that tree's parent pointer or
	 * root item will hold. Called once per block, before it is linked. */
	void (*block_allocated)(struct transaction *txn, struct tree_block *block);
	/* Tree `tree_id` copied `buf` to `cow` on its path (cow_block): `cow`
	 * took `buf`'s place and holds the same children. The hook moves the
	 * children's references as the accounting needs (btrfs:
	 * update_ref_for_cow) and drops the path's reference to `buf`, freeing
	 * it (blockstore_free_block) when that was the last. */
	void (*block_cowed)(struct transaction *txn, uint64_t tree_id, struct tree_block *buf,
			    struct tree_block *cow);
	/* The tree no longer points at `block`, which holds nothing any more
	 * (its items or pointers moved into a sibling): its reference from the
	 * tree goes; the hook frees it when that was the last. */
	void (*block_unlinked)(struct transaction *txn, struct tree_block *block);

	/* Between two operations: write some of the queued changes into the
	 * accounting's trees now, as btrfs's preemptive flusher runs delayed
	 * refs during the transaction, and take down the trees deleted
	 * subvolumes left (btrfs's cleaner). 0, or -EINTR when `stoppable` and
	 * txn->stop asked: the rest waits for the next throttle or commit. */
	int (*throttle)(struct transaction *txn, bool stoppable);
	/* At a commit: write everything queued (btrfs_run_delayed_refs with
	 * count 0). Writing copies blocks, which the hooks above queue again:
	 * it repeats until nothing is queued. */
	void (*run_queued)(struct transaction *txn);
	/* Something is queued that run_queued() would write or drop. */
	bool (*pending)(const struct transaction *txn);
};

struct transaction_stats {
	uint64_t blocks_cowed;        /* copies made by cow_block() */
	uint64_t blocks_allocated;    /* every new tree block, copies included */
	uint64_t blocks_freed;
};

struct transaction {
	uint64_t transid;             /* generation of blocks written now */
	struct blockstore *store;
	const struct transaction_ops *ops; /* space accounting; never NULL */
	void *accounting;             /* the ops' own state (struct refs * for refs_transaction_ops) */
	struct transaction_stats stats;
	uint64_t blocks_dirty;        /* blocks with generation == transid */
	GPtrArray *written;           /* those blocks, for btree_commit_blocks(); NULL: not kept */
	/* Asked between the steps of long work that may stop early (a dead
	 * tree's drop, a stoppable throttle): true to stop. NULL: never. */
	bool (*stop)(void *opaque);
	void *stop_opaque;
};

/* txn->stop asked: true when the long work should stop. */
static inline bool transaction_stop_requested(const struct transaction *txn)
{
	return txn->stop && txn->stop(txn->stop_opaque);
}

/*
 * The trees a commit rewrites above the accounting (fs.c: ROOT_ITEMs, the
 * free-space and dev trees). Each returns whether it changed a tree, which
 * may have queued accounting changes. A NULL step, or NULL steps, do
 * nothing (the test fixture has no root tree).
 */
struct transaction_commit_steps {
	bool (*update_root_items)(void *opaque);
	bool (*update_chunk_trees)(void *opaque);
	void *opaque;
};

/*
 * Commits the running transaction, in the order of
 * btrfs_commit_transaction():
 *
 *   +-> 1. update_root_items   a root that moved gets its ROOT_ITEM rewritten
 *   |   2. ops->run_queued     the accounting's queue into its trees
 *   |   3. update_chunk_trees  free-space and dev items of changed chunks
 *   +-- until 1 and 3 changed nothing and ops->pending() is false (each step
 *       copies blocks of trees the others write)
 *       4. the blocks written are trimmed (btree_commit_blocks), the freed
 *          addresses unpinned (blockstore_commit), inline atimes folded
 *          (btree_commit_finish)
 *       5. transaction transid + 1 starts.
 *
 * Returns the tree blocks the transaction wrote. Cannot fail; the caller
 * asks the store whether it overcommitted.
 */
uint64_t transaction_commit(struct transaction *txn, const struct transaction_commit_steps *steps);

#endif
