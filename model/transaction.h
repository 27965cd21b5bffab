/*
 * model/transaction.h - the running transaction every tree change belongs to.
 *
 * btrfs batches changes into transactions; a block written by the running
 * transaction changes in place, anything older is copied first. The model
 * keeps the transaction id, the store to allocate from, the reference
 * bookkeeping to tell, and counters that the reports read.
 */
#ifndef COWSIM_MODEL_TRANSACTION_H
#define COWSIM_MODEL_TRANSACTION_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

struct blockstore;
struct refs;

struct transaction_stats {
	uint64_t blocks_cowed;        /* copies made by cow_block() */
	uint64_t blocks_allocated;    /* every new tree block, copies included */
	uint64_t blocks_freed;
	uint64_t blocks_written;      /* blocks dirty at a commit (each written once) */
	uint64_t data_bytes_written;
	uint64_t commits;
};

struct transaction {
	uint64_t transid;             /* generation of blocks written now */
	struct blockstore *store;
	struct refs *refs;
	struct transaction_stats stats;
	uint64_t blocks_dirty;        /* blocks with generation == transid */
	GPtrArray *written;           /* those blocks, for btree_commit_blocks(); NULL: not kept */
};

#endif
