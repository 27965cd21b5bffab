/*
 * model/transaction.c - the commit order, in one place (transaction.h).
 */
#include "transaction.h"

#include <inttypes.h>

#include "blockstore.h"
#include "btree.h"

static bool run_step(bool (*step)(void *opaque), const struct transaction_commit_steps *steps)
{
	return step ? step(steps->opaque) : false;
}

uint64_t transaction_commit(struct transaction *txn, const struct transaction_commit_steps *steps)
{
	static const struct transaction_commit_steps none = { 0 };
	if (!steps)
		steps = &none;
	bool changed;
	do {
		changed = run_step(steps->update_root_items, steps);
		txn->ops->run_queued(txn);
		changed |= run_step(steps->update_chunk_trees, steps);
		changed |= txn->ops->pending(txn);
	} while (changed);
	uint64_t written = txn->blocks_dirty;
	txn->blocks_dirty = 0;
	btree_commit_blocks(txn);
	blockstore_commit(txn->store);
	btree_commit_finish(txn);
	if (txn->transid >= UINT32_MAX)
		g_error("transaction: %" PRIu64 " commits, past a tree block's 32-bit generation (btree.h BT11)",
			txn->transid);
	txn->transid++;
	return written;
}
