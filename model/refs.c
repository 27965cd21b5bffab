/*
 * model/refs.c - lazy reference counting and the extent tree it feeds.
 *
 * The counts live on the blocks and extents (tree_refs, shared_refs,
 * data_refs); every change queues the block or extent once per pass (one
 * "ref head", as btrfs keeps one delayed_ref_head per bytenr), and
 * refs_commit() writes the queued ones into the extent tree in address order,
 * as btrfs runs its delayed refs at commit. Writing them copies extent-tree
 * blocks, whose own records then change, so the commit repeats until a pass
 * queues nothing: by then every extent-tree block on a changed path belongs to
 * this transaction and changes in place.
 *
 * Between operations refs_throttle() also runs heads during the transaction,
 * as kernel 6.x's preemptive metadata flusher does (space-info.c:
 * need_preemptive_reclaim() flushes while the reservations other than the
 * global reserve exceed 128 MiB; btrfs_preempt_reclaim_metadata_space() then
 * picks FLUSH_DELAYED_REFS_NR when the delayed-refs reserve is the largest
 * pool and reclaims a quarter of it). Each pending head reserves
 * btrfs_calc_delayed_ref_bytes(1) = nodesize * 8 * 2 * 2 bytes (x2 for the
 * free-space tree; delayed-ref.h), so the rule is:
 *
 *   limit = 128 MiB / (32 * nodesize)      256 heads at 16 KiB, 1024 at 4 KiB
 *   while pending heads > limit: run limit / 4 heads in address order from
 *                                the cursor (btrfs_select_ref_head)
 *
 * Measured on kernel 6.18 with the btrfs:run_delayed_ref_head tracepoint
 * (docs/btrfs-ground-truth.md section 8): during the grep of the seed
 * experiment, 16 KiB, heads run in batches of median 56 (mostly 50-67) while
 * 215-1271 (median 421) distinct heads were pending; none of it waits for
 * the commit. So an extent item passes through the intermediate states the
 * snapshot's COWs give it (53 -> 66 -> 82 bytes), and a full leaf splits at
 * each growth, as in btrfs.
 *
 * update_ref_for_cow(), the rule that decides who pays when a shared block is
 * copied (ctree.c; "buf" is the block being copied, "cow" its copy):
 *
 *   buf refs | buf owner == copier, no FULL_BACKREF | otherwise
 *   ---------+--------------------------------------+--------------------------------
 *     > 1    | children +1 SHARED(buf); buf gets    | children +1 TREE_BLOCK_REF(copier)
 *            | FULL_BACKREF                         |   through cow
 *     == 1   | (children move to cow as they are)   | if buf has FULL_BACKREF: children
 *            |                                      |   +1 via cow, -1 SHARED(buf)
 *
 * then buf loses the reference the copier's path held; at zero it is freed.
 */
#include "model_error.h"
#include "refs.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "blockstore.h"
#include "constants.h"
#include "transaction.h"

/* space-info.c need_preemptive_reclaim(): "if (used - global_rsv_size <=
 * SZ_128M) return false", used being bytes_may_use + bytes_pinned. */
#define REFS_PREEMPT_FLOOR_BYTES (128ull << 20)
/* delayed-ref.h btrfs_calc_delayed_ref_bytes(): twice the insert reservation
 * when the free-space tree is on (the mkfs default, and the model's). */
#define REFS_FREE_SPACE_TREE_FACTOR 2u
/* Extent-tree leaves left stored item by item between ref heads (btree.c
 * BT9): enough that a leaf the next heads change again (heads run in
 * address order) is not compacted and expanded for each of them, few enough
 * to bound the memory (256 full 16 KiB leaves of keyed backrefs are about
 * 5 MB of items). 64 compacted the seed run's leaves 5.6 M instructions
 * more; 256 cost `cowsim bench --sizes 1000000` 128 KB of peak RSS, 1024
 * 6.2 MB (docs/performance.md round 15c). 512 leaves most of the seed
 * run's transactions to the commit's compaction: 4.1 M instructions fewer
 * than 256 (as many as 1024), the bench's peak RSS 413.7 -> 414.4 MiB
 * (one run each). */
#define REFS_EXPANDED_LEAVES 512u

/* One pending ref head: a block or a data extent with changed counts. */
struct pending_head {
	uint64_t bytenr;
	struct tree_block *block;     /* one of the two is set */
	struct data_extent *extent;
};

/* A pending head in a queue, a heap or an array: 16 bytes, the address and
 * the block or the extent, told apart by the pointer's low bit (both are
 * malloc'd, so aligned): a pop moves two words a level. */
struct heap_entry {
	uint64_t bytenr;
	uintptr_t head;               /* struct tree_block *, or struct data_extent * | 1 */
};

/* A queue of blocks or of extents whose counts changed (RF4), pushed
 * inline: g_ptr_array_add() was a call of about 41 instructions a head
 * (158 686 data heads in the seed run, a snapshot's shared leaves copied).
 * Each entry has its head's address, read when the head is queued (its
 * struct is in the cache then): the throttle sorts the queued heads
 * without touching them again (45 000 misses of the seed run's merges). */
struct head_queue {
	struct heap_entry *items;
	unsigned len, capacity;
};

/* A binary min-heap of heads by address, in an array of its own: a GArray
 * paid g_array_set_size() at every push and pop, 1 % of the seed run. */
struct head_heap {
	struct heap_entry *entries;
	unsigned len, capacity;
};

/* Heads in an array of their own, taken from `front` on: sorted by address
 * (ahead_run), in no order (heads_behind), or scratch. */
struct head_array {
	struct heap_entry *entries;
	unsigned front, len, capacity;
};

/*
 * A deleted subvolume's tree goes as btrfs_drop_snapshot() takes it down:
 * depth first, left to right. A block loses the reference its parent (or
 * the root item) held; at zero it is entered, its children lose theirs one
 * by one, then it is freed. A block still shared with another tree only
 * loses the one reference and is not entered.
 *
 *   drop_frames, a stack:  [root, next 3] [node, next 0] [node, next 7]
 *                           bottom: the dead tree's root      top: being walked
 *
 *   RF7 a frame's block is a node with no reference left, not freed yet; its
 *       children from `next` on still hold the references it gave them, and
 *       those before `next` no longer do.
 *
 * The walk can stop between two children (refs_drop_dead(), when the
 * transaction's stop hook asks): the frames keep the place, as the root
 * item's drop_progress and drop_level do on disk, and the next throttle or
 * commit goes on from there, as btrfs's cleaner resumes a dead root.
 */
struct drop_frame {
	struct tree_block *block;
	uint32_t next;
};

/*
 * The pending heads (RF4-RF6):
 *   RF4 outside run_batch(), the blocks and extents with their DIRTY flag set are exactly
 *       the heads of the entries in dirty_blocks, dirty_data, ahead_run (from its front),
 *       ahead_late and heads_behind, each head in one entry: a head queued twice would be
 *       counted twice (RF11), one not queued would never be written;
 *   RF5 addresses are unique among pending heads: a freed block's or extent's address is
 *       pinned until the commit, and data and metadata chunks do not overlap.  So the order
 *       of the queues never matters: every reader sorts them by address first;
 *   RF6 outside run_batch(), the heads refs_throttle() took in at or above run_cursor
 *       are in ahead_run, sorted by address from its front, or in ahead_late, a binary
 *       min-heap by address; those below it are in heads_behind, in no order.  Read from
 *       the cursor, wrapping at the end, ahead_run and ahead_late merged, then
 *       heads_behind sorted, is the address order btrfs_select_ref_head() walks.
 *   RF11 outside run_batch() and refs_commit(), `pending` is the number of entries in
 *       dirty_blocks, dirty_data, ahead_run from its front, ahead_late and heads_behind:
 *       the throttle's idle check and every reservation ask it (adding the five cost
 *       the seed run 3.3 M instructions), and a head is counted where it is queued
 *       and where it is taken to run, not as it moves between them.
 *   RF12 `idle_max` is -1 while drop_frames holds a frame (RF7), else throttle_limit: the
 *       throttle has nothing to do exactly when `pending` <= idle_max, one compare for
 *       each operation's call (the frames' count beside it cost the seed run 1.2 M
 *       instructions).
 * refs_throttle() keeps them between operations and takes in only what was queued since;
 * refs_commit() takes everything back into the queues first.
 *
 *   ahead_run    [ taken | a0 a1 a2 ... (sorted)        ]   next: the lower of ahead_run's
 *                          ^front                                front and ahead_late's top;
 *   ahead_late   heap { l0 l1 ... }                            both empty: heads_behind, sorted,
 *   heads_behind [ b5 b1 b9 ... (any order, < run_cursor) ]    becomes ahead_run (the wrap)
 *
 * A batch's newcomers at or above the cursor are sorted and merged into ahead_run (their
 * queue holds ascending stretches: a leaf's data extents in address order), or, when they
 * are few beside the run's rest (a dead tree's thousands of heads, a few newcomers a
 * batch), pushed into ahead_late until they are not.
 */
struct refs {
	struct btree *extent_tree;
	struct head_queue dirty_blocks; /* struct tree_block *, TREE_BLOCK_REFS_DIRTY set */
	struct head_queue dirty_data;  /* struct data_extent *, DATA_EXTENT_DIRTY set */
	struct head_array ahead_run;   /* taken in by refs_throttle(), at or above run_cursor,
					  sorted from the front (RF6) */
	struct head_heap ahead_late;   /* the same, not merged into ahead_run yet (RF6) */
	struct head_array heads_behind; /* taken in below run_cursor, in no order (RF6) */
	struct head_array incoming;    /* merge_queued()'s newcomers at or above run_cursor */
	struct head_array spare;       /* scratch for their sort and the wrap's */
	GPtrArray *freed_data;         /* extents to release after the commit */
	struct data_extent *live_data; /* the live extents, a list through live_prev/next (owns them) */
	uint64_t live_data_count;
	GArray *chunk_used_written;    /* uint64 per chunk: used as in its BLOCK_GROUP_ITEM */
	uint64_t run_cursor;           /* refs_throttle(): the next head to run is at or above it */
	unsigned pending;              /* RF11: the heads in the five above */
	int64_t idle_max;              /* RF12: throttle_limit, or -1 while a dead tree waits */
	GArray *drop_frames;           /* struct drop_frame: the dead trees' walk (RF7) */
	uint32_t throttle_limit;       /* refs_throttle_heads() of the store's nodesize; 0 until
					  the first throttle with heads pending */
	struct heap_entry *batch;      /* run_batch()'s heads (when not a slice of ahead_run),
					  and the keys and sizes of */
	struct btree_key *batch_keys;  /* their extent items (record_change()): kept */
	uint32_t *batch_sizes;         /* from batch to batch, */
	unsigned batch_room;           /* for this many */
	refs_data_freed_fn on_data_freed;
	void *opaque;
};

struct refs *refs_new(struct btree *extent_tree, refs_data_freed_fn on_data_freed, void *opaque)
{
	struct refs *refs = g_new0(struct refs, 1);
	refs->extent_tree = extent_tree;
	refs->freed_data = g_ptr_array_new_with_free_func(g_free);
	refs->chunk_used_written = g_array_new(FALSE, TRUE, sizeof(uint64_t));
	refs->drop_frames = g_array_new(FALSE, FALSE, sizeof(struct drop_frame));
	refs->on_data_freed = on_data_freed;
	refs->opaque = opaque;
	return refs;
}

void refs_free(struct refs *refs)
{
	if (!refs)
		return;
	g_free(refs->dirty_blocks.items);
	g_free(refs->dirty_data.items);
	g_free(refs->ahead_run.entries);
	g_free(refs->ahead_late.entries);
	g_free(refs->heads_behind.entries);
	g_free(refs->incoming.entries);
	g_free(refs->spare.entries);
	g_free(refs->batch);
	g_free(refs->batch_keys);
	g_free(refs->batch_sizes);
	g_ptr_array_unref(refs->freed_data);
	while (refs->live_data) {
		struct data_extent *next = refs->live_data->live_next;
		g_free(refs->live_data);
		refs->live_data = next;
	}
	g_array_unref(refs->chunk_used_written);
	g_array_unref(refs->drop_frames);
	g_free(refs);
}

static struct refs *refs_of(const struct transaction *txn)
{
	return txn->accounting;
}

/* RF12 after drop_frames or throttle_limit changed. */
static void note_idle_max(struct refs *refs)
{
	refs->idle_max = refs->drop_frames->len ? -1 : (int64_t)refs->throttle_limit;
}

static void __attribute__((noinline)) queue_grow(struct head_queue *queue)
{
	queue->capacity = MAX(2 * queue->capacity, 64u);
	queue->items = g_renew(struct heap_entry, queue->items, queue->capacity);
}

static inline void queue_push(struct head_queue *queue, struct heap_entry e)
{
	if (queue->len == queue->capacity)
		queue_grow(queue);
	queue->items[queue->len++] = e;
}

static inline struct heap_entry block_entry(struct tree_block *block)
{
	return (struct heap_entry){ block->bytenr, (uintptr_t)block };
}

static inline struct heap_entry data_entry(struct data_extent *extent)
{
	return (struct heap_entry){ extent->bytenr, (uintptr_t)extent | 1u };
}

/* A head is charged to the cause in force when it was queued (docs/model.md,
 * "Attribution"): the extent-tree blocks that writing it copies or splits are
 * that operation's, even when the commit writes it. */
static void queue_block(struct transaction *txn, struct tree_block *block)
{
	if (block->flags & TREE_BLOCK_REFS_DIRTY)
		return;
	block->flags |= TREE_BLOCK_REFS_DIRTY;
	block->refs_cause = (uint8_t)blockstore_cause(txn->store);
	struct refs *refs = refs_of(txn);
	queue_push(&refs->dirty_blocks, block_entry(block));
	refs->pending++; /* RF11 */
}

/* Inline in the leaf walks' loops (LTO kept it a call of its own: 173 k
 * calls in the seed run). */
static inline __attribute__((always_inline)) void queue_data(struct transaction *txn, struct data_extent *extent)
{
	if (extent->flags & DATA_EXTENT_DIRTY)
		return;
	extent->flags |= DATA_EXTENT_DIRTY;
	extent->refs_cause = (uint8_t)blockstore_cause(txn->store);
	struct refs *refs = refs_of(txn);
	queue_push(&refs->dirty_data, data_entry(extent));
	refs->pending++; /* RF11 */
}

void refs_block_created(struct transaction *txn, struct tree_block *block)
{
	block->tree_refs = 1;
	queue_block(txn, block);
}

void refs_add_block(struct transaction *txn, struct tree_block *block, bool shared)
{
	if (shared)
		block->shared_refs++;
	else
		block->tree_refs++;
	queue_block(txn, block);
}

/* One reference less (`shared`: the one a FULL_BACKREF parent held): true
 * when it was the last. */
static bool lose_reference(struct transaction *txn, struct tree_block *block, bool shared)
{
	uint32_t *count = shared ? &block->shared_refs : &block->tree_refs;
	g_assert(*count > 0);
	(*count)--;
	queue_block(txn, block);
	return !tree_block_refs(block);
}

static void free_unreferenced(struct transaction *txn, struct tree_block *block)
{
	blockstore_free_block(txn->store, block);
	txn->stats.blocks_freed++;
}

/* One reference less; at zero the block is freed. `release_children` says
 * whether the references the block itself held go with it (a dropped tree) or
 * were already moved to a copy (COW). */
static void drop_block_ref(struct transaction *txn, struct tree_block *block, bool shared, bool release_children)
{
	if (!lose_reference(txn, block, shared))
		return;
	if (release_children && block->nritems)
		refs_dec_children(txn, block, block->flags & TREE_BLOCK_FULL_BACKREF);
	free_unreferenced(txn, block);
}

/* A block of a dead tree loses the reference its parent held (RF7): at zero
 * a leaf goes with its data references at once, a node becomes a frame. */
static void release_dead_block(struct transaction *txn, struct tree_block *block, bool shared)
{
	if (!lose_reference(txn, block, shared))
		return;
	if (block->level && block->nritems) {
		struct drop_frame frame = { block, 0 };
		g_array_append_val(refs_of(txn)->drop_frames, frame);
		refs_of(txn)->idle_max = -1; /* RF12 */
		return;
	}
	if (block->nritems)
		refs_dec_children(txn, block, block->flags & TREE_BLOCK_FULL_BACKREF);
	free_unreferenced(txn, block);
}

void refs_drop_tree(struct transaction *txn, struct tree_block *root)
{
	release_dead_block(txn, root, false);
}

/* Walks the frames down (RF7) until none is left: 0, or -EINTR when
 * `stoppable` and the transaction's stop hook asked between two blocks. The
 * order is the one drop_block_ref()'s recursion would take. */
static int drop_dead(struct transaction *txn, bool stoppable)
{
	GArray *frames = refs_of(txn)->drop_frames;
	while (frames->len) {
		struct drop_frame *top = &g_array_index(frames, struct drop_frame, frames->len - 1);
		struct tree_block *block = top->block;
		if (top->next == block->nritems) {
			g_array_set_size(frames, frames->len - 1);
			free_unreferenced(txn, block);
			if (!frames->len)
				note_idle_max(refs_of(txn));
			continue;
		}
		if (stoppable && transaction_stop_requested(txn))
			return -EINTR;
		struct tree_block *child = block->children[top->next++].block;
		release_dead_block(txn, child, block->flags & TREE_BLOCK_FULL_BACKREF);
	}
	return 0;
}

void refs_drop_block(struct transaction *txn, struct tree_block *block, bool shared)
{
	drop_block_ref(txn, block, shared, true);
}

/* refs_data_add(), inline where a leaf's extents gain references. */
static inline void data_add(struct transaction *txn, struct data_extent *extent, bool shared)
{
	if (shared)
		extent->shared_refs++;
	else
		extent->data_refs++;
	queue_data(txn, extent);
}

/* A file extent item's data extent (NULL: inline data) gains or loses one. */
static inline void change_data(struct transaction *txn, struct data_extent *extent, bool full_backref, bool add)
{
	if (!extent)
		return;
	if (add)
		data_add(txn, extent, full_backref);
	else
		refs_data_drop(txn, extent, full_backref);
}

/* data_add() of each of n extents: the queue and the cause are read once (a
 * store to an extent could alias them for the compiler, which then reloads
 * them for every one: 173 k extents in the seed run, its snapshots' shared
 * leaves copied). */
static inline void add_gathered(struct transaction *txn, struct data_extent *const *gathered, unsigned n,
				bool shared)
{
	struct refs *refs = refs_of(txn);
	uint8_t cause = (uint8_t)blockstore_cause(txn->store);
	for (unsigned k = 0; k < n; k++) {
		struct data_extent *extent = gathered[k];
		if (shared)
			extent->shared_refs++;
		else
			extent->data_refs++;
		if (extent->flags & DATA_EXTENT_DIRTY) /* queue_data() */
			continue;
		extent->flags |= DATA_EXTENT_DIRTY;
		extent->refs_cause = cause;
		queue_push(&refs->dirty_data, data_entry(extent));
		refs->pending++; /* RF11 */
	}
}

/* A leaf's data extents are gathered this many at a time before their counts change. */
#define REFS_GATHER 32u

/*
 * The `left` data references of a leaf without runs, in slot order. Each is
 * three loads that miss when a snapshot's shared leaf is first copied: the
 * item's type, its payload in the leaf's heap, and the data extent (perf
 * annotate of the seed run: 37 % of change_children()'s samples on the
 * extent's count, 22 % on the payload, 18 % on the type). So the extents
 * are gathered first, a loop without calls whose loads overlap, each
 * prefetched for the write that follows; then their counts change, in the
 * same order as before.
 */
static void change_leaf_data(struct transaction *txn, const struct tree_block *leaf, uint32_t left,
			     bool full_backref, bool add)
{
	const struct btree_item *item = btree_leaf_item(leaf, 0), *end = item + leaf->nritems;
	struct data_extent *gathered[REFS_GATHER];
	while (left && item < end) {
		unsigned n = 0, want = MIN(left, REFS_GATHER);
		for (; item < end; item++) {
			if (btree_item_key(item)->type != BTRFS_EXTENT_DATA_KEY)
				continue;
			struct data_extent *extent = btree_item_file_extent(item)->extent;
			if (!extent)
				continue;
			__builtin_prefetch(extent, 1);
			gathered[n++] = extent;
			if (n == want) {
				item++;
				break;
			}
		}
		if (add)
			add_gathered(txn, gathered, n, full_backref);
		else
			for (unsigned k = 0; k < n; k++)
				refs_data_drop(txn, gathered[k], full_backref);
		left -= n;
	}
}

static void change_children(struct transaction *txn, struct tree_block *block, bool full_backref, bool add)
{
	if (block->level) {
		for (uint32_t i = 0; i < block->nritems; i++) {
			struct tree_block *child = block->children[i].block;
			if (add)
				refs_add_block(txn, child, full_backref);
			else
				refs_drop_block(txn, child, full_backref);
		}
		return;
	}
	/* A leaf of inline files, directories and inodes holds no data reference:
	 * its items are not read at all (btree.c BT13). */
	uint32_t left = btree_leaf_data_refs(block);
	if (!left)
		return;
	/* A snapshot's shared leaf is copied at each first write: most of its
	 * items (inodes, refs) are read for their type alone, so the loop is
	 * the array's own where the leaf has no runs (btree.c BT9; every leaf
	 * that maps data), and it stops at the last item that maps data (BT13
	 * counts them): the items after it, a cache line each two, are not
	 * read. */
	if (!(block->flags & TREE_BLOCK_RUNS)) {
		change_leaf_data(txn, block, left, full_backref, add);
		return;
	}
	struct btree_leaf_cursor cursor;
	btree_leaf_cursor_init(&cursor, block, 0);
	for (const struct btree_item *item; (item = btree_leaf_cursor_next(&cursor));)
		if (btree_item_key(item)->type == BTRFS_EXTENT_DATA_KEY)
			change_data(txn, btree_item_file_extent(item)->extent, full_backref, add);
}

void refs_inc_children(struct transaction *txn, struct tree_block *block, bool full_backref)
{
	change_children(txn, block, full_backref, true);
}

void refs_dec_children(struct transaction *txn, struct tree_block *block, bool full_backref)
{
	change_children(txn, block, full_backref, false);
}

void refs_update_for_cow(struct transaction *txn, uint64_t root_id, struct tree_block *buf, struct tree_block *cow)
{
	bool full = buf->flags & TREE_BLOCK_FULL_BACKREF;
	if (tree_block_refs(buf) > 1) {
		if (tree_block_owner(buf) == root_id && !full) {
			refs_inc_children(txn, buf, true);
			buf->flags |= TREE_BLOCK_FULL_BACKREF;
			queue_block(txn, buf);
		} else {
			refs_inc_children(txn, cow, false);
		}
	} else if (full) {
		refs_inc_children(txn, cow, false);
		refs_dec_children(txn, buf, true);
	}
	drop_block_ref(txn, buf, false, false);
}

/* The tree dropped an emptied block: its reference from the parent goes. */
static void unlink_block(struct transaction *txn, struct tree_block *block)
{
	refs_drop_block(txn, block, false);
}

static int throttle_heads(struct refs *refs, struct transaction *txn, bool stoppable, uint64_t *written);

/* The heads refs_throttle() took in (RF6). */
static inline unsigned heads_taken_in(const struct refs *refs)
{
	return refs->ahead_run.len - refs->ahead_run.front + refs->ahead_late.len + refs->heads_behind.len;
}

/* refs_pending_heads(), for the calls every operation makes (RF11). */
static inline unsigned pending_heads(const struct refs *refs)
{
	return refs->pending;
}

/* Between most operations the throttle has nothing to run: no dead tree, no
 * more heads than the limit (a limit of 0, not known yet, says so only when
 * none are pending). */
static inline bool throttle_idle(const struct refs *refs)
{
	return (int64_t)pending_heads(refs) <= refs->idle_max; /* RF12 */
}

/* throttle() when there is work: a call of its own, so that the idle check
 * saves and restores no registers (inlined, the run's prologue and epilogue
 * cost each idle call 11 instructions, 5.4 M of the seed run). */
static int __attribute__((noinline)) throttle_busy(struct refs *refs, struct transaction *txn, bool stoppable)
{
	uint64_t written = 0;
	return throttle_heads(refs, txn, stoppable, &written);
}

/* Every operation's: the idle check before a call (the full path cost a read
 * about 85 instructions, docs/performance.md round 13a). */
static int throttle(struct transaction *txn, bool stoppable)
{
	struct refs *refs = refs_of(txn);
	if (throttle_idle(refs))
		return 0;
	return throttle_busy(refs, txn, stoppable);
}

static void run_queued(struct transaction *txn)
{
	refs_commit(refs_of(txn), txn);
}

static bool pending(const struct transaction *txn)
{
	return refs_pending(refs_of(txn));
}

const struct transaction_ops refs_transaction_ops = {
	.block_allocated = refs_block_created,
	.block_cowed = refs_update_for_cow,
	.block_unlinked = unlink_block,
	.throttle = throttle,
	.run_queued = run_queued,
	.pending = pending,
};

/* The live extents are only owned and counted, never looked up by address,
 * so a list does: O(1) per extent whatever the addresses. (A GHashTable
 * keyed by g_int64_hash() went quadratic on extent addresses, which fold
 * onto few hash values: 32,000 files of 1 GiB took 89 s, 59 % of it in
 * the table's probes.) */
static void live_data_add(struct refs *refs, struct data_extent *extent)
{
	extent->live_prev = NULL;
	extent->live_next = refs->live_data;
	if (refs->live_data)
		refs->live_data->live_prev = extent;
	refs->live_data = extent;
	refs->live_data_count++;
}

static void live_data_remove(struct refs *refs, struct data_extent *extent)
{
	if (extent->live_prev)
		extent->live_prev->live_next = extent->live_next;
	else
		refs->live_data = extent->live_next;
	if (extent->live_next)
		extent->live_next->live_prev = extent->live_prev;
	extent->live_prev = extent->live_next = NULL;
	refs->live_data_count--;
}

struct data_extent *refs_data_extent_new(struct transaction *txn, uint64_t bytenr, uint64_t num_bytes)
{
	struct data_extent *extent = g_new0(struct data_extent, 1);
	extent->bytenr = bytenr;
	extent->num_bytes = num_bytes;
	extent->data_refs = 1;
	live_data_add(refs_of(txn), extent);
	queue_data(txn, extent);
	return extent;
}

void refs_data_add(struct transaction *txn, struct data_extent *extent, bool shared)
{
	data_add(txn, extent, shared);
}

void refs_data_drop(struct transaction *txn, struct data_extent *extent, bool shared)
{
	uint32_t *count = shared ? &extent->shared_refs : &extent->data_refs;
	g_assert(*count > 0);
	(*count)--;
	queue_data(txn, extent);
	if (data_extent_refs(extent))
		return;
	extent->flags |= DATA_EXTENT_FREED;
	live_data_remove(refs_of(txn), extent);
	g_ptr_array_add(refs_of(txn)->freed_data, extent);
	if (refs_of(txn)->on_data_freed)
		refs_of(txn)->on_data_freed(refs_of(txn)->opaque, txn, extent);
}

/* --- extent item sizes --------------------------------------------------- */

uint32_t refs_metadata_item_size(uint32_t nodesize, uint32_t refs, uint32_t *keyed)
{
	uint32_t room = (btrfs_max_extent_item_size(nodesize) - BTRFS_EXTENT_ITEM_SIZE) / BTRFS_INLINE_REF_SIZE;
	uint32_t inline_refs = MIN(refs, room);
	*keyed = refs - inline_refs;
	return BTRFS_EXTENT_ITEM_SIZE + inline_refs * BTRFS_INLINE_REF_SIZE;
}

uint32_t refs_data_item_size(uint32_t nodesize, uint32_t data_refs, uint32_t shared_refs, uint32_t *keyed)
{
	uint32_t room = btrfs_max_extent_item_size(nodesize) - BTRFS_EXTENT_ITEM_SIZE;
	uint32_t inline_data = MIN(data_refs, room / BTRFS_INLINE_DATA_REF_SIZE);
	room -= inline_data * BTRFS_INLINE_DATA_REF_SIZE;
	uint32_t inline_shared = MIN(shared_refs, room / BTRFS_INLINE_SHARED_DATA_REF_SIZE);
	*keyed = (data_refs - inline_data) + (shared_refs - inline_shared);
	return BTRFS_EXTENT_ITEM_SIZE + inline_data * BTRFS_INLINE_DATA_REF_SIZE +
	       inline_shared * BTRFS_INLINE_SHARED_DATA_REF_SIZE;
}

/* --- writing the extent tree -------------------------------------------- */

/*
 * Bring one extent's items to `refs` references of `size` bytes inline and
 * `keyed` keyed items, from `old_refs` and `old_keyed`.
 *
 * *cursor is the path the last record left in the extent tree, or levels 0.
 * The cursor rule: when levels is not 0, it is what a lookup of that
 * record's key finds in the tree as it is now. An insert, a resize, a
 * rewrite in place or a delete leaves their item's path so or levels 0
 * (btree.h); the keyed items may move leaves, and those records leave
 * levels 0; nothing
 * else changes the extent tree between two records of a batch, and a
 * compaction (btree_compact_runs) ends the cursor's life. The heads of a
 * batch run in address order, so the next record's item is usually a few
 * slots on in the same leaf (btree_lookup_ahead): a descent from the root
 * per record was about a sixth of the throttle (docs/performance.md, round
 * 11c). test_btree's records along a cursor check the rule after each.
 */
static void write_extent_items(struct refs *refs, struct transaction *txn, const struct btree_key *key,
			       uint32_t old_refs, uint32_t old_keyed, uint32_t new_refs, uint32_t size,
			       uint32_t keyed, uint8_t keyed_type, uint32_t keyed_size, struct btree_path *cursor)
{
	struct btree *tree = refs->extent_tree;
	if (!old_refs && new_refs) {
		btree_insert_item_near(tree, txn, key, size, NULL, cursor);
	} else if (old_refs && !new_refs) {
		btree_delete_item_near(tree, txn, key, cursor);
	} else if (new_refs) {
		/* One lookup serves the change: resize or rewrite in place. */
		if (!btree_lookup_ahead(tree, key, cursor)) {
			btree_lookup_for_write(tree, txn, key);
			cursor->levels = 0;
		} else if (btree_item_size(btree_path_item(cursor)) != size)
			btree_resize_item_at(tree, txn, key, size, cursor);
		else
			btree_path_for_write(tree, txn, cursor);
	}
	if (!new_refs)
		keyed = 0;
	if (keyed != old_keyed)
		cursor->levels = 0;
	for (uint32_t i = keyed; i < old_keyed; i++) {
		struct btree_key k = BTRFS_KEY(key->objectid, keyed_type, i + 1);
		btree_delete_item(tree, txn, &k);
	}
	for (uint32_t i = old_keyed; i < keyed; i++) {
		struct btree_key k = BTRFS_KEY(key->objectid, keyed_type, i + 1);
		btree_insert_item(tree, txn, &k, keyed_size, NULL);
	}
}

/* The references a block's METADATA_ITEM is to hold now. */
static uint32_t block_record_refs(const struct tree_block *block)
{
	return (block->flags & TREE_BLOCK_FREED) ? 0 : tree_block_refs(block);
}

static void write_block_record(struct refs *refs, struct transaction *txn, struct tree_block *block,
			       struct btree_path *cursor)
{
	uint32_t nodesize = blockstore_nodesize(txn->store);
	uint32_t new_refs = block_record_refs(block);
	uint32_t old_keyed, keyed;
	refs_metadata_item_size(nodesize, block->extent_item_refs, &old_keyed);
	uint32_t size = refs_metadata_item_size(nodesize, new_refs, &keyed);
	struct btree_key key = BTRFS_KEY(block->bytenr, BTRFS_METADATA_ITEM_KEY, block->level);
	block->flags &= ~TREE_BLOCK_REFS_DIRTY;
	if (!block->extent_item_refs && !new_refs)
		return;
	enum space_cause was = blockstore_set_cause(txn->store, (enum space_cause)block->refs_cause);
	write_extent_items(refs, txn, &key, block->extent_item_refs, old_keyed, new_refs, size, keyed,
			   BTRFS_TREE_BLOCK_REF_KEY, 0, cursor);
	block->extent_item_refs = new_refs;
	blockstore_set_cause(txn->store, was);
}

static void write_data_record(struct refs *refs, struct transaction *txn, struct data_extent *extent,
			      struct btree_path *cursor)
{
	uint32_t nodesize = blockstore_nodesize(txn->store);
	uint32_t new_refs = data_extent_refs(extent), keyed;
	uint32_t size = refs_data_item_size(nodesize, extent->data_refs, extent->shared_refs, &keyed);
	struct btree_key key = BTRFS_KEY(extent->bytenr, BTRFS_EXTENT_ITEM_KEY, extent->num_bytes);
	extent->flags &= ~DATA_EXTENT_DIRTY;
	if (!extent->item_refs && !new_refs)
		return;
	enum space_cause was = blockstore_set_cause(txn->store, (enum space_cause)extent->refs_cause);
	write_extent_items(refs, txn, &key, extent->item_refs, extent->keyed_items, new_refs, size, keyed,
			   BTRFS_EXTENT_DATA_REF_KEY, BTRFS_KEYED_DATA_REF_SIZE, cursor);
	extent->item_refs = new_refs;
	extent->keyed_items = new_refs ? keyed : 0;
	blockstore_set_cause(txn->store, was);
}

static int compare_entry_address(gconstpointer a, gconstpointer b)
{
	const struct heap_entry *x = a, *y = b;
	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

/* BLOCK_GROUP_ITEM (chunk start, 192, length) in the extent tree: written
 * whenever the chunk's used bytes changed. Returns true when it wrote any. */
static bool write_block_group_items(struct refs *refs, struct transaction *txn)
{
	unsigned count, now;
	blockstore_chunks(txn->store, &count); /* chunks made by this pass's inserts: the next pass */
	bool wrote = false;
	for (unsigned i = 0; i < count; i++) {
		/* A copy, and read again after a COW: the chunk array may grow under it. */
		const struct chunk c = blockstore_chunks(txn->store, &now)[i];
		struct btree_key key = BTRFS_KEY(c.start, BTRFS_BLOCK_GROUP_ITEM_KEY, c.length);
		if (i >= refs->chunk_used_written->len) {
			/* The item says the chunk's used bytes (extent_tree_check ET4); if
			 * the insert changes them, the next pass rewrites it. */
			union item_payload used_payload = { .value = c.used };
			btree_insert_item(refs->extent_tree, txn, &key, BTRFS_BLOCK_GROUP_ITEM_SIZE, &used_payload);
			g_array_append_val(refs->chunk_used_written, c.used);
			wrote = true;
			continue;
		}
		if (g_array_index(refs->chunk_used_written, uint64_t, i) == c.used)
			continue;
		struct btree_item *item = btree_lookup_for_write(refs->extent_tree, txn, &key);
		/* Read after the lookup's COW, which may free a block of this very
		 * chunk: else the item keeps the old used bytes while the record of
		 * what was written says the new, and no pass mends it. */
		uint64_t used = blockstore_chunks(txn->store, &now)[i].used;
		*btree_item_value_for_write(item) = used;
		g_array_index(refs->chunk_used_written, uint64_t, i) = used;
		wrote = true;
	}
	return wrote;
}

const GPtrArray *refs_freed_data(const struct refs *refs)
{
	return refs->freed_data;
}

void refs_collect_dead_blocks(const struct refs *refs, GHashTable *seen)
{
	for (unsigned f = 0; f < refs->drop_frames->len; f++) {
		const struct drop_frame *frame = &g_array_index(refs->drop_frames, struct drop_frame, f);
		g_hash_table_add(seen, frame->block);
		for (uint32_t i = frame->next; i < frame->block->nritems; i++) /* RF7: those still held */
			btree_collect_blocks(frame->block->children[i].block, seen);
	}
}

void refs_hold_dead_blocks(const struct refs *refs, bool release)
{
	for (unsigned f = 0; f < refs->drop_frames->len; f++) {
		const struct drop_frame *frame = &g_array_index(refs->drop_frames, struct drop_frame, f);
		for (uint32_t i = frame->next; i < frame->block->nritems; i++) { /* RF7: those still held */
			if (release)
				btree_release_held(frame->block->children[i].block);
			else
				btree_count_holders(frame->block->children[i].block);
		}
	}
	for (unsigned f = 0; release && f < refs->drop_frames->len; f++)
		btree_release_block(g_array_index(refs->drop_frames, struct drop_frame, f).block);
}

bool refs_pending(const struct refs *refs)
{
	return refs_pending_heads(refs) > 0 || refs->drop_frames->len;
}

unsigned refs_pending_heads(const struct refs *refs)
{
	return pending_heads(refs);
}

/* --- running delayed refs during the transaction ------------------------- */

static uint64_t bytes_per_head(uint32_t nodesize)
{
	return (uint64_t)nodesize * BTRFS_RESERVE_NODES_PER_ITEM * REFS_FREE_SPACE_TREE_FACTOR;
}

uint64_t refs_reserved_bytes(const struct refs *refs, uint32_t nodesize)
{
	return pending_heads(refs) * bytes_per_head(nodesize);
}

uint32_t refs_throttle_heads(uint32_t nodesize)
{
	uint64_t per_head = bytes_per_head(nodesize);
	return (uint32_t)MAX(REFS_PREEMPT_FLOOR_BYTES / per_head, 4u);
}

static inline struct pending_head head_of(struct heap_entry e)
{
	if (e.head & 1u)
		return (struct pending_head){ e.bytenr, NULL, (struct data_extent *)(e.head & ~(uintptr_t)1u) };
	return (struct pending_head){ e.bytenr, (struct tree_block *)e.head, NULL };
}

/* An entry's head, read where the batch's records are written. */
static inline bool entry_is_data(const struct heap_entry *e)
{
	return e->head & 1u;
}

static inline struct tree_block *entry_block(const struct heap_entry *e)
{
	return (struct tree_block *)e->head;
}

static inline struct data_extent *entry_extent(const struct heap_entry *e)
{
	return (struct data_extent *)(e->head & ~(uintptr_t)1u);
}

/* ahead_late (RF6): a push and a pop O(log n). */
static void heap_push(struct head_heap *heap, struct heap_entry e)
{
	if (heap->len == heap->capacity) {
		heap->capacity = MAX(2 * heap->capacity, 64u);
		heap->entries = g_renew(struct heap_entry, heap->entries, heap->capacity);
	}
	struct heap_entry *a = heap->entries;
	unsigned i = heap->len++;
	while (i > 0 && a[(i - 1) / 2].bytenr > e.bytenr) {
		a[i] = a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	a[i] = e;
}

/* The lowest head of a non-empty HEAP, taken out. Bottom-up (Floyd): the
 * hole at the top goes down by the lower child to the bottom, one compare
 * a level, and the last entry then climbs from there, rarely more than a
 * level (it came from the bottom). */
static struct heap_entry heap_pop(struct head_heap *heap)
{
	struct heap_entry *a = heap->entries;
	struct heap_entry top = a[0], last = a[--heap->len];
	unsigned n = heap->len, i = 0, child;
	while ((child = 2 * i + 1) + 1 < n) {
		child += a[child + 1].bytenr < a[child].bytenr; /* never equal: RF5 */
		a[i] = a[child];
		i = child;
	}
	if (child < n) {
		a[i] = a[child];
		i = child;
	}
	while (i > 0 && a[(i - 1) / 2].bytenr > last.bytenr) {
		a[i] = a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	a[i] = last;
	return top;
}

/* Room for `count` entries in ARRAY (its entries from `front` on move to
 * the start when it grows). */
static void array_reserve(struct head_array *array, unsigned count)
{
	if (count <= array->capacity)
		return;
	array->capacity = MAX(count, 2 * array->capacity);
	array->entries = g_renew(struct heap_entry, array->entries, array->capacity);
}

static void array_swap(struct head_array *a, struct head_array *b)
{
	struct head_array t = *a;
	*a = *b;
	*b = t;
}

/* x[0..nx) and y[0..ny), each sorted, into out (no two are equal, RF5). */
static void merge_entries(const struct heap_entry *x, unsigned nx, const struct heap_entry *y, unsigned ny,
			  struct heap_entry *out)
{
	const struct heap_entry *x_end = x + nx, *y_end = y + ny;
	while (x < x_end && y < y_end)
		*out++ = y->bytenr < x->bytenr ? *y++ : *x++;
	while (x < x_end)
		*out++ = *x++;
	while (y < y_end)
		*out++ = *y++;
}

/* Sorted blocks of this many entries are what the merges start from. */
#define REFS_SORT_BLOCK 32u

/* Insertion sort of a[0..n): linear for a queue's ascending stretches. */
static void insertion_sort(struct heap_entry *a, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		struct heap_entry e = a[i];
		unsigned j = i;
		for (; j > 0 && a[j - 1].bytenr > e.bytenr; j--)
			a[j] = a[j - 1];
		a[j] = e;
	}
}

/* Sorts the entries of A by address, with SCRATCH (as large) for the merges:
 * blocks of REFS_SORT_BLOCK by insertion (a queue holds a leaf's data extents
 * in address order: its stretches cost a compare an entry), then merges of
 * neighbours, each pass from one array into the other; the sorted entries
 * end in A (the arrays swapped when they are in SCRATCH). */
static void sort_array(struct head_array *a, struct head_array *scratch)
{
	unsigned n = a->len;
	for (unsigned i = 0; i < n; i += REFS_SORT_BLOCK)
		insertion_sort(&a->entries[i], MIN(REFS_SORT_BLOCK, n - i));
	if (n <= REFS_SORT_BLOCK)
		return;
	array_reserve(scratch, n);
	for (unsigned width = REFS_SORT_BLOCK; width < n; width *= 2) {
		for (unsigned i = 0; i < n; i += 2 * width) {
			unsigned mid = MIN(i + width, n), end = MIN(i + 2 * width, n);
			merge_entries(&a->entries[i], mid - i, &a->entries[mid], end - mid, &scratch->entries[i]);
		}
		scratch->len = n;
		scratch->front = 0;
		array_swap(a, scratch);
	}
}

/* Merge the sorted entries of INCOMING into ahead_run, from the back: the
 * run's entries above the lowest newcomer move once. Most batches' newcomers
 * all sort after the run's last entry (the grep reads on past the extents
 * pending: 2 071 of the seed run's 2 995 merges), and are copied as they are. */
static void run_merge(struct head_array *run, const struct head_array *incoming)
{
	unsigned n = incoming->len;
	if (run->len + n > run->capacity && run->front) {
		memmove(run->entries, &run->entries[run->front], (run->len - run->front) * sizeof(*run->entries));
		run->len -= run->front;
		run->front = 0;
	}
	array_reserve(run, run->len + n);
	struct heap_entry *a = run->entries;
	const struct heap_entry *x = incoming->entries;
	unsigned i = run->len, j = n;
	if (i > run->front) { /* the newcomers above the run's last entry go as they are */
		uint64_t last = a[i - 1].bytenr;
		unsigned low = 0, high = n;
		while (low < high) {
			unsigned mid = low + (high - low) / 2;
			if (x[mid].bytenr < last)
				low = mid + 1;
			else
				high = mid;
		}
		memcpy(&a[i + low], &x[low], (n - low) * sizeof(*x));
		j = low;
	}
	unsigned out = i + j;
	while (j > 0 && i > run->front) {
		if (a[i - 1].bytenr > x[j - 1].bytenr)
			a[--out] = a[--i];
		else
			a[--out] = x[--j];
	}
	memcpy(&a[out - j], x, j * sizeof(*x)); /* below the run's rest, or all of them */
	run->len += n;
}

/* Below this share of ahead_run's rest, newcomers wait in ahead_late: a merge moves the
 * whole rest, a heap push and pop are O(log n). */
#define REFS_LATE_SHARE 8u

/* Take incoming's newcomers at or above the cursor in (RF6); `sorted` says
 * they are in address order already (a leaf's data extents mostly are:
 * 2 524 of the seed run's 2 995 batches of newcomers). */
static void take_in_ahead(struct refs *refs, bool sorted)
{
	struct head_array *run = &refs->ahead_run, *incoming = &refs->incoming;
	struct head_heap *late = &refs->ahead_late;
	if (!incoming->len)
		return;
	if ((incoming->len + late->len) * REFS_LATE_SHARE < run->len - run->front) {
		for (unsigned i = 0; i < incoming->len; i++)
			heap_push(late, incoming->entries[i]);
		incoming->len = 0;
		return;
	}
	array_reserve(incoming, incoming->len + late->len);
	if (late->len) /* an empty heap may have no array: memcpy's source must not be NULL */
		memcpy(&incoming->entries[incoming->len], late->entries, late->len * sizeof(*late->entries));
	incoming->len += late->len;
	if (!sorted || late->len)
		sort_array(incoming, &refs->spare);
	late->len = 0;
	run_merge(run, incoming);
	incoming->len = 0;
}

/* Move the heads queued since the last call into ahead_run, ahead_late or heads_behind,
 * emptying the queues. */
static void merge_queued(struct refs *refs)
{
	unsigned queued = refs->dirty_blocks.len + refs->dirty_data.len;
	struct head_array *incoming = &refs->incoming, *behind = &refs->heads_behind;
	if (!queued)
		return;
	array_reserve(incoming, queued);
	array_reserve(behind, behind->len + queued);
	struct heap_entry *ahead = incoming->entries, *below = &behind->entries[behind->len];
	uint64_t cursor = refs->run_cursor, last = 0; /* the last address ahead: ascending so far? */
	bool sorted = true;
	const struct head_queue *queues[2] = { &refs->dirty_blocks, &refs->dirty_data };
	for (unsigned q = 0; q < 2; q++) {
		for (const struct heap_entry *e = queues[q]->items, *end = e + queues[q]->len; e < end; e++) {
			if (e->bytenr >= cursor) {
				sorted &= e->bytenr > last;
				last = e->bytenr;
				*ahead++ = *e;
			} else {
				*below++ = *e;
			}
		}
	}
	incoming->len = (unsigned)(ahead - incoming->entries);
	behind->len = (unsigned)(below - behind->entries);
	refs->dirty_blocks.len = refs->dirty_data.len = 0;
	take_in_ahead(refs, sorted);
}

/* The next head from the cursor, wrapping at the end, as btrfs_select_ref_head() walks
 * delayed_refs->run_delayed_start: the lowest ahead, else (everything ahead ran) the lowest
 * behind, which is then the lowest of all.  The caller keeps the cursor past what it takes,
 * so after a wrap the heads behind sort ahead of it and become ahead_run, keeping RF6. */
static struct heap_entry next_head(struct refs *refs)
{
	struct head_array *run = &refs->ahead_run;
	struct head_heap *late = &refs->ahead_late;
	if (run->front == run->len && !late->len) {
		run->front = run->len = 0;
		array_swap(run, &refs->heads_behind);
		sort_array(run, &refs->spare);
	}
	if (late->len && (run->front == run->len || late->entries[0].bytenr < run->entries[run->front].bytenr))
		return heap_pop(late);
	return run->entries[run->front++];
}

/* How a head's record changes the extent tree. A *lone* insert or delete
 * is one extent item inserted (a block's or an extent's first record) or
 * deleted (a freed one's last) with every reference inline, before and
 * after; a *resize* is one extent item changed in place, its keyed items
 * as they were (a snapshot's extra reference to a block or a data extent),
 * of a data extent or a block outside the extent tree: the writes of a
 * batch copy extent-tree blocks, which may change the counts of the
 * batch's later extent-tree heads, never those of other blocks or of data
 * extents. */
enum record_change { RECORD_OTHER, RECORD_LONE_INSERT, RECORD_LONE_DELETE, RECORD_RESIZE };

/* What run_batch() knows of the store's extent items: `inline_refs`, how
 * many references a METADATA_ITEM holds inline, the rest being keyed
 * items (refs_metadata_item_size()); `data_room`, the bytes a data
 * extent's item holds past its header (refs_data_item_size()). */
struct item_limits {
	uint32_t nodesize, inline_refs, data_room;
};

static struct item_limits item_limits(uint32_t nodesize)
{
	uint32_t keyed;
	refs_metadata_item_size(nodesize, UINT32_MAX, &keyed);
	return (struct item_limits){ nodesize, UINT32_MAX - keyed,
				     btrfs_max_extent_item_size(nodesize) - BTRFS_EXTENT_ITEM_SIZE };
}

/* refs_data_item_size() for an extent whose references all fit inline
 * (almost every one), without its divisions: in 64 bits the sum cannot
 * wrap, so one compare says they fit. */
static inline uint32_t data_item_size(const struct item_limits *limits, const struct data_extent *extent,
				      uint32_t *keyed)
{
	uint64_t bytes = (uint64_t)extent->data_refs * BTRFS_INLINE_DATA_REF_SIZE +
			 (uint64_t)extent->shared_refs * BTRFS_INLINE_SHARED_DATA_REF_SIZE;
	if (bytes > limits->data_room)
		return refs_data_item_size(limits->nodesize, extent->data_refs, extent->shared_refs, keyed);
	*keyed = 0;
	return BTRFS_EXTENT_ITEM_SIZE + (uint32_t)bytes;
}

/* The change a head's record makes, and the key of its extent item and the
 * size that item is to have (inline part). */
static inline __attribute__((always_inline)) enum record_change record_change(const struct item_limits *limits, const struct heap_entry *h,
					       struct btree_key *key, uint32_t *size)
{
	uint32_t keyed, inline_refs = limits->inline_refs;
	if (entry_is_data(h)) {
		const struct data_extent *extent = entry_extent(h);
		uint32_t was = extent->item_refs, now = data_extent_refs(extent);
		*key = BTRFS_KEY(h->bytenr, BTRFS_EXTENT_ITEM_KEY, extent->num_bytes);
		*size = data_item_size(limits, extent, &keyed);
		if (was && now)
			return keyed == extent->keyed_items ? RECORD_RESIZE : RECORD_OTHER;
		if (!was == !now || keyed || extent->keyed_items) /* one of them is 0 */
			return RECORD_OTHER;
		return now ? RECORD_LONE_INSERT : RECORD_LONE_DELETE;
	}
	const struct tree_block *block = entry_block(h);
	uint32_t was = block->extent_item_refs, now = block_record_refs(block);
	*key = BTRFS_KEY(h->bytenr, BTRFS_METADATA_ITEM_KEY, block->level);
	*size = refs_metadata_item_size(limits->nodesize, now, &keyed);
	if (was && now) /* the keyed items stay when both are inline, or the count does */
		return ((was <= inline_refs && now <= inline_refs) || was == now) &&
				       tree_block_owner(block) != BTRFS_EXTENT_TREE_OBJECTID
			       ? RECORD_RESIZE
			       : RECORD_OTHER;
	if (!was == !now || was + now > inline_refs) /* one of them is 0 */
		return RECORD_OTHER;
	return now ? RECORD_LONE_INSERT : RECORD_LONE_DELETE;
}

/* A head whose item a run wrote (its keyed items as they were): as
 * write_block_record() or write_data_record() leave it. */
static inline void record_written(const struct heap_entry *h)
{
	if (!entry_is_data(h)) {
		struct tree_block *block = entry_block(h);
		block->flags &= ~TREE_BLOCK_REFS_DIRTY;
		block->extent_item_refs = block_record_refs(block);
	} else {
		struct data_extent *extent = entry_extent(h);
		extent->flags &= ~DATA_EXTENT_DIRTY;
		extent->item_refs = data_extent_refs(extent);
	}
}

static inline uint8_t record_cause(const struct heap_entry *h)
{
	return entry_is_data(h) ? entry_extent(h)->refs_cause : entry_block(h)->refs_cause;
}

/*
 * The records of `count` heads that are lone inserts, or lone deletes, in
 * address order, their items' keys and sizes in keys[] and sizes[]: what
 * write_record() would do for each, but a run of them that are neighbours
 * in an extent-tree leaf goes in one call of btree_insert_items_near() or
 * btree_delete_items_near(). A grep's freed leaves were allocated one after
 * the other, as are the copies that replace them (96 % of the deletes of
 * `cowsim bench` follow the one before in its leaf), and so are a
 * writeback's new data extents.
 */
static void write_lone_records(struct refs *refs, struct transaction *txn, enum record_change kind,
			       const struct heap_entry *heads, const struct btree_key *keys, const uint32_t *sizes,
			       unsigned count, struct btree_path *cursor)
{
	for (unsigned k = 0; k < count;) {
		/* A run's first record may copy or split blocks: they are its head's. */
		enum space_cause was = blockstore_set_cause(txn->store, (enum space_cause)record_cause(&heads[k]));
		uint32_t done = kind == RECORD_LONE_INSERT
					? btree_insert_items_near(refs->extent_tree, txn, &keys[k], &sizes[k], count - k, cursor)
					: btree_delete_items_near(refs->extent_tree, txn, &keys[k], count - k, cursor);
		blockstore_set_cause(txn->store, was);
		g_assert(done);
		for (unsigned end = k + done; k < end; k++)
			record_written(&heads[k]);
	}
}

static void write_record(struct refs *refs, struct transaction *txn, const struct heap_entry *h,
			 struct btree_path *cursor)
{
	if (entry_is_data(h))
		write_data_record(refs, txn, entry_extent(h), cursor);
	else
		write_block_record(refs, txn, entry_block(h), cursor);
}

/*
 * The records of `count` heads that are resizes, in address order, keys
 * and sizes as for write_lone_records(): the first as write_record() writes
 * it, then as many of the next as btree_resize_items_after() takes in the
 * same leaf (no copy, no split: nothing is allocated, so no cause is set),
 * and so on. A snapshot's copied leaf adds a reference to each data extent
 * it maps, extents written one after the other whose items are neighbours
 * (the seed run's 154 000 resizes came in stretches of about 60).
 */
static void write_resized_records(struct refs *refs, struct transaction *txn, const struct heap_entry *heads,
				  const struct btree_key *keys, const uint32_t *sizes, unsigned count,
				  struct btree_path *cursor)
{
	for (unsigned k = 0; k < count;) {
		write_record(refs, txn, &heads[k++], cursor);
		uint32_t done = btree_resize_items_after(refs->extent_tree, txn, &keys[k], &sizes[k], count - k, cursor);
		for (unsigned end = k + done; k < end; k++)
			record_written(&heads[k]);
	}
}

/* Room for a batch of `count` heads in the buffers kept for it. */
static void batch_room(struct refs *refs, unsigned count)
{
	if (count > refs->batch_room) {
		refs->batch_room = count;
		refs->batch = g_renew(struct heap_entry, refs->batch, count);
		refs->batch_keys = g_renew(struct btree_key, refs->batch_keys, count);
		refs->batch_sizes = g_renew(uint32_t, refs->batch_sizes, count);
	}
}

/* The next `count` heads from the cursor (next_head()), each prefetched: its
 * counts are read below, many heads later, so their misses overlap. When
 * ahead_late is empty and ahead_run holds them all (most batches), they are
 * ahead_run's next entries, read where they are: nothing changes ahead_run
 * while the batch runs (what it queues waits in the queues). */
static const struct heap_entry *take_heads(struct refs *refs, unsigned count)
{
	struct head_array *run = &refs->ahead_run;
	const struct heap_entry *heads = refs->batch;
	if (!refs->ahead_late.len && run->len - run->front >= count) {
		heads = &run->entries[run->front];
		run->front += count;
	} else {
		for (unsigned k = 0; k < count; k++)
			refs->batch[k] = next_head(refs);
	}
	for (unsigned k = 0; k < count; k++) /* the tag bit cleared: the block or the extent */
		__builtin_prefetch(entry_extent(&heads[k]), 1);
	return heads;
}

/* Run `count` heads from the cursor on, in address order.  They leave the heaps before any
 * runs; what running them queues waits in the queues for the next merge_queued(). */
static unsigned run_batch(struct refs *refs, struct transaction *txn, unsigned count)
{
	count = MIN(count, heads_taken_in(refs));
	batch_room(refs, count);
	const struct heap_entry *heads = take_heads(refs, count);
	refs->pending -= count; /* RF11: taken to run; what running them queues counts anew */
	struct item_limits limits = item_limits(blockstore_nodesize(txn->store));
	struct btree_path cursor = { .levels = 0 }; /* write_extent_items() */
	struct btree_key *keys = refs->batch_keys;
	uint32_t *sizes = refs->batch_sizes;
	for (unsigned k = 0; k < count;) {
		/* A stretch's keys and sizes are taken just before it is written: the
		 * stretches before it may have changed extent-tree blocks' counts. */
		const struct heap_entry *h = &heads[k];
		enum record_change kind = record_change(&limits, h, &keys[k], &sizes[k]);
		unsigned alike = 1;
		while (kind != RECORD_OTHER && k + alike < count &&
		       record_change(&limits, &heads[k + alike], &keys[k + alike], &sizes[k + alike]) == kind)
			alike++;
		if (kind == RECORD_LONE_INSERT || kind == RECORD_LONE_DELETE)
			write_lone_records(refs, txn, kind, h, &keys[k], &sizes[k], alike, &cursor);
		else if (kind == RECORD_RESIZE)
			write_resized_records(refs, txn, h, &keys[k], &sizes[k], alike, &cursor);
		else
			write_record(refs, txn, h, &cursor);
		k += alike;
		refs->run_cursor = heads[k - 1].bytenr + 1;
	}
	btree_compact_runs(txn, REFS_EXPANDED_LEAVES);
	return count;
}

/* Give entries [from, to) back to the queues (their order there does not matter, RF5). */
static void requeue(struct refs *refs, const struct heap_entry *entries, unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i++)
		queue_push(entries[i].head & 1u ? &refs->dirty_data : &refs->dirty_blocks, entries[i]);
}

/* The pending heads stay ordered across batches and across calls (RF6), and only the few each
 * batch or operation queues are pushed in.  Sorting all of them again per batch made a
 * snapshot deletion (tens of thousands of heads, run 64 at a time) quadratic; keeping them in
 * one sorted array still cost a memmove and a merge over all of them per batch.  Its callers
 * ask throttle_idle() first. */
static int throttle_heads(struct refs *refs, struct transaction *txn, bool stoppable, uint64_t *written)
{
	if (!refs->throttle_limit) {
		refs->throttle_limit = refs_throttle_heads(blockstore_nodesize(txn->store));
		note_idle_max(refs);
	}
	uint32_t limit = refs->throttle_limit;
	if (drop_dead(txn, stoppable))
		return -EINTR;
	while (refs_pending_heads(refs) > limit) {
		if (stoppable && transaction_stop_requested(txn))
			return -EINTR;
		merge_queued(refs);
		*written += run_batch(refs, txn, limit / 4);
	}
	return 0;
}

uint64_t refs_throttle(struct refs *refs, struct transaction *txn)
{
	uint64_t written = 0;
	if (!throttle_idle(refs))
		throttle_heads(refs, txn, false, &written);
	return written;
}

uint64_t refs_commit(struct refs *refs, struct transaction *txn)
{
	uint64_t written = 0;
	drop_dead(txn, false); /* the commit writes the dead trees' last counts too */
	requeue(refs, refs->ahead_run.entries, refs->ahead_run.front, refs->ahead_run.len);
	requeue(refs, refs->ahead_late.entries, 0, refs->ahead_late.len);
	requeue(refs, refs->heads_behind.entries, 0, refs->heads_behind.len);
	refs->ahead_run.front = refs->ahead_run.len = refs->ahead_late.len = refs->heads_behind.len = 0;
	for (;;) {
		if (!refs->dirty_blocks.len && !refs->dirty_data.len && !write_block_group_items(refs, txn))
			break;
		/* What writing these queues goes to new queues, for the next pass. */
		struct head_queue blocks = refs->dirty_blocks, data = refs->dirty_data;
		refs->dirty_blocks = refs->dirty_data = (struct head_queue){ NULL, 0, 0 };
		refs->pending -= blocks.len + data.len; /* RF11 */
		if (blocks.len > 1)
			qsort(blocks.items, blocks.len, sizeof(*blocks.items), compare_entry_address);
		if (data.len > 1)
			qsort(data.items, data.len, sizeof(*data.items), compare_entry_address);
		/* A compaction rewrites leaves: no cursor across it. */
		for (unsigned i = 0; i < blocks.len + data.len; i++) {
			struct btree_path cursor = { .levels = 0 };
			write_record(refs, txn, i < blocks.len ? &blocks.items[i] : &data.items[i - blocks.len], &cursor);
			btree_compact_runs(txn, REFS_EXPANDED_LEAVES);
		}
		written += blocks.len + data.len;
		g_free(blocks.items);
		g_free(data.items);
	}
	g_ptr_array_set_size(refs->freed_data, 0);
	refs->run_cursor = 0; /* the next transaction's delayed_refs start empty */
	return written;
}

/* --- checking ------------------------------------------------------------ */

struct expected_refs {
	uint32_t tree_refs, shared_refs;
};

static bool check_fail(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool check_fail(GError **error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error_literal(error, MODEL_ERROR, MODEL_ERROR_CORRUPT, msg);
	return false;
}

static struct expected_refs *expected_for(GHashTable *expected, const void *key)
{
	struct expected_refs *e = g_hash_table_lookup(expected, key);
	if (!e) {
		e = g_new0(struct expected_refs, 1);
		g_hash_table_insert(expected, (gpointer)key, e);
	}
	return e;
}

static void count_children(struct tree_block *block, uint32_t from, GHashTable *live, GHashTable *expected_blocks,
			   GHashTable *expected_data);

/* Count, once per reachable block, the references it holds to its children. */
static void count_references(struct tree_block *block, GHashTable *live, GHashTable *expected_blocks,
			     GHashTable *expected_data)
{
	if (g_hash_table_contains(live, block))
		return;
	g_hash_table_add(live, block);
	count_children(block, 0, live, expected_blocks, expected_data);
}

/* The references `block` holds to its children from slot `from` on. */
static void count_children(struct tree_block *block, uint32_t from, GHashTable *live, GHashTable *expected_blocks,
			   GHashTable *expected_data)
{
	bool full = block->flags & TREE_BLOCK_FULL_BACKREF;
	for (uint32_t i = from; i < block->nritems; i++) {
		if (block->level) {
			struct tree_block *child = block->children[i].block;
			struct expected_refs *e = expected_for(expected_blocks, child);
			if (full)
				e->shared_refs++;
			else
				e->tree_refs++;
			count_references(child, live, expected_blocks, expected_data);
			continue;
		}
		const struct btree_item *item = btree_leaf_item(block, i);
		if (btree_item_key(item)->type != BTRFS_EXTENT_DATA_KEY ||
		    !btree_item_file_extent(item)->extent)
			continue;
		struct expected_refs *e = expected_for(expected_data, btree_item_file_extent(item)->extent);
		if (full)
			e->shared_refs++;
		else
			e->tree_refs++;
	}
}

/* RF7: the dead trees' frames are live blocks that nothing references, and
 * hold their references from `next` on. */
static bool count_drop_frames(const struct refs *refs, GHashTable *live, GHashTable *expected_blocks,
			      GHashTable *expected_data, GError **error)
{
	for (unsigned f = 0; f < refs->drop_frames->len; f++) {
		const struct drop_frame *frame = &g_array_index(refs->drop_frames, struct drop_frame, f);
		struct tree_block *block = frame->block;
		const char *wrong = (block->flags & TREE_BLOCK_FREED) ? "is freed"
				    : !block->level			  ? "is a leaf"
				    : frame->next > block->nritems	  ? "is past its last child"
				    : tree_block_refs(block)		  ? "is still referenced"
									  : NULL;
		if (wrong)
			return check_fail(error,
					  "corrupt refs: block %" G_GUINT64_FORMAT
					  ", RF7 a dead tree's frame %s (level %u, next %u of %u, refs %u)",
					  block->bytenr, wrong, block->level, frame->next, block->nritems,
					  tree_block_refs(block));
		expected_for(expected_blocks, block); /* no reference left */
		g_hash_table_add(live, block);
		count_children(block, frame->next, live, expected_blocks, expected_data);
	}
	return true;
}

static bool check_blocks(GHashTable *live, GHashTable *expected_blocks, GError **error)
{
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, live);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		const struct tree_block *block = key;
		const struct expected_refs *e = g_hash_table_lookup(expected_blocks, block);
		if (block->flags & TREE_BLOCK_FREED)
			return check_fail(error, "corrupt refs: block %" G_GUINT64_FORMAT ", RF3 reachable but freed",
					  block->bytenr);
		if (block->tree_refs != e->tree_refs || block->shared_refs != e->shared_refs)
			return check_fail(error,
					  "corrupt refs: block %" G_GUINT64_FORMAT " owner %" G_GUINT64_FORMAT
					  ", RF1 counts tree %u shared %u, references found tree %u shared %u",
					  block->bytenr, tree_block_owner(block), block->tree_refs, block->shared_refs,
					  e->tree_refs, e->shared_refs);
	}
	return true;
}

static bool check_data(const struct refs *refs, GHashTable *expected_data, GError **error)
{
	if (g_hash_table_size(expected_data) != refs->live_data_count)
		return check_fail(error, "corrupt refs: RF2 %u data extents referenced, %" PRIu64 " live",
				  g_hash_table_size(expected_data), refs->live_data_count);
	GHashTableIter iter;
	gpointer key, value;
	g_hash_table_iter_init(&iter, expected_data);
	while (g_hash_table_iter_next(&iter, &key, &value)) {
		const struct data_extent *extent = key;
		const struct expected_refs *e = value;
		if (extent->flags & DATA_EXTENT_FREED)
			return check_fail(error, "corrupt refs: data extent %" G_GUINT64_FORMAT ", RF3 reachable but freed",
					  extent->bytenr);
		if (extent->data_refs != e->tree_refs || extent->shared_refs != e->shared_refs)
			return check_fail(error,
					  "corrupt refs: data extent %" G_GUINT64_FORMAT
					  ", RF2 counts data %u shared %u, references found data %u shared %u",
					  extent->bytenr, extent->data_refs, extent->shared_refs, e->tree_refs,
					  e->shared_refs);
	}
	return true;
}

/* RF3, the other half: what the transaction freed holds no reference (a
 * block is freed at zero, refs_drop_block(); an extent at zero,
 * refs_data_drop(); nothing may count one again). */
static bool check_freed(const struct refs *refs, const GPtrArray *unreleased, GError **error)
{
	for (unsigned i = 0; i < unreleased->len; i++) {
		const struct tree_block *block = unreleased->pdata[i];
		if (tree_block_refs(block))
			return check_fail(error,
					  "corrupt refs: block %" G_GUINT64_FORMAT
					  ", RF3 freed but counts tree %u shared %u",
					  block->bytenr, block->tree_refs, block->shared_refs);
	}
	for (unsigned i = 0; i < refs->freed_data->len; i++) {
		const struct data_extent *extent = refs->freed_data->pdata[i];
		if (data_extent_refs(extent))
			return check_fail(error,
					  "corrupt refs: data extent %" G_GUINT64_FORMAT
					  ", RF3 freed but counts data %u shared %u",
					  extent->bytenr, extent->data_refs, extent->shared_refs);
	}
	return true;
}

static uint64_t head_address(struct pending_head h)
{
	return h.block ? h.block->bytenr : h.extent->bytenr;
}

static bool head_dirty(struct pending_head h)
{
	return h.block ? h.block->flags & TREE_BLOCK_REFS_DIRTY : h.extent->flags & DATA_EXTENT_DIRTY;
}

/* RF6 for one entry: its address is its head's, the head is queued (its
 * DIRTY flag), and it lies on its side of the cursor. */
static bool check_entry(const struct refs *refs, struct heap_entry e, bool ahead, const char *where, unsigned at,
			GError **error)
{
	struct pending_head h = head_of(e);
	const char *wrong = head_address(h) != e.bytenr		 ? "is not its head's address"
			    : !head_dirty(h)				 ? "is of a head not queued"
			    : ahead != (e.bytenr >= refs->run_cursor) ? "is on the wrong side of the cursor"
								 : NULL;
	if (wrong)
		return check_fail(error,
				  "corrupt refs: pending head %" G_GUINT64_FORMAT ", RF6 in %s %s (entry %u, cursor %" G_GUINT64_FORMAT ")",
				  e.bytenr, where, wrong, at, refs->run_cursor);
	return true;
}

/* RF6: ahead_run sorted from its front, ahead_late a min-heap, each entry on
 * its side of the cursor. */
static bool check_pending_order(const struct refs *refs, GError **error)
{
	const struct head_array *run = &refs->ahead_run, *behind = &refs->heads_behind;
	const struct head_heap *late = &refs->ahead_late;
	for (unsigned i = run->front; i < run->len; i++) {
		if (!check_entry(refs, run->entries[i], true, "ahead_run", i, error))
			return false;
		if (i > run->front && run->entries[i - 1].bytenr >= run->entries[i].bytenr)
			return check_fail(error,
					  "corrupt refs: pending head %" G_GUINT64_FORMAT
					  ", RF6 below the one before it in ahead_run (entry %u)",
					  run->entries[i].bytenr, i);
	}
	for (unsigned i = 0; i < late->len; i++) {
		if (!check_entry(refs, late->entries[i], true, "ahead_late", i, error))
			return false;
		if (i > 0 && late->entries[(i - 1) / 2].bytenr >= late->entries[i].bytenr)
			return check_fail(error,
					  "corrupt refs: pending head %" G_GUINT64_FORMAT
					  ", RF6 below its parent in ahead_late (entry %u)",
					  late->entries[i].bytenr, i);
	}
	for (unsigned i = 0; i < behind->len; i++)
		if (!check_entry(refs, behind->entries[i], false, "heads_behind", i, error))
			return false;
	return true;
}

/* RF11: the count of pending heads is the queues' and the taken-in arrays'. */
static bool check_pending_count(const struct refs *refs, GError **error)
{
	unsigned held = refs->dirty_blocks.len + refs->dirty_data.len + heads_taken_in(refs);
	if (refs->pending != held)
		return check_fail(error, "corrupt refs: RF11 %u pending heads counted, %u queued or taken in",
				  refs->pending, held);
	return true;
}

/* RF12: the throttle's idle bound is the one drop_frames and throttle_limit say. */
static bool check_idle_max(const struct refs *refs, GError **error)
{
	int64_t want = refs->drop_frames->len ? -1 : (int64_t)refs->throttle_limit;
	if (refs->idle_max != want)
		return check_fail(error,
				  "corrupt refs: RF12 the throttle's idle bound is %" G_GINT64_FORMAT ", not %" G_GINT64_FORMAT
				  " (limit %u, %u dead-tree frames)",
				  refs->idle_max, want, refs->throttle_limit, refs->drop_frames->len);
	return true;
}

/* Entries by their head's own address, then by head: a head queued twice
 * sorts next to itself (RF4), two heads at one address next to each
 * other (RF5). */
static int compare_entry_head(gconstpointer a, gconstpointer b)
{
	const struct heap_entry *x = a, *y = b;
	if (x->bytenr != y->bytenr)
		return x->bytenr < y->bytenr ? -1 : 1;
	return x->head < y->head ? -1 : x->head > y->head;
}

/* RF4: a queue's entries are of dirty heads (those taken in, RF6's check_entry). */
static bool check_queue_dirty(const struct head_queue *queue, const char *where, GError **error)
{
	for (unsigned i = 0; i < queue->len; i++)
		if (!head_dirty(head_of(queue->items[i])))
			return check_fail(error,
					  "corrupt refs: pending head %" G_GUINT64_FORMAT ", RF4 in %s not dirty (entry %u)",
					  queue->items[i].bytenr, where, i);
	return true;
}

/* Every pending head's entry, at its head's own address, sorted by compare_entry_head(). */
static struct heap_entry *sorted_heads(const struct refs *refs, unsigned *count)
{
	const struct {
		const struct heap_entry *entries;
		unsigned from, to;
	} held[] = {
		{ refs->dirty_blocks.items, 0, refs->dirty_blocks.len },
		{ refs->dirty_data.items, 0, refs->dirty_data.len },
		{ refs->ahead_run.entries, refs->ahead_run.front, refs->ahead_run.len },
		{ refs->ahead_late.entries, 0, refs->ahead_late.len },
		{ refs->heads_behind.entries, 0, refs->heads_behind.len },
	};
	unsigned n = refs->dirty_blocks.len + refs->dirty_data.len + heads_taken_in(refs), k = 0;
	struct heap_entry *heads = g_new(struct heap_entry, MAX(n, 1u));
	for (unsigned h = 0; h < G_N_ELEMENTS(held); h++)
		for (unsigned i = held[h].from; i < held[h].to; i++)
			heads[k++] = (struct heap_entry){ head_address(head_of(held[h].entries[i])), held[h].entries[i].head };
	qsort(heads, n, sizeof(*heads), compare_entry_head);
	*count = n;
	return heads;
}

/* RF4, each head in one entry, and RF5, each address of one head, over the sorted heads. */
static bool check_heads_apart(const struct heap_entry *heads, unsigned n, GError **error)
{
	for (unsigned i = 1; i < n; i++)
		if (heads[i].bytenr == heads[i - 1].bytenr)
			return check_fail(error, "corrupt refs: pending head %" G_GUINT64_FORMAT ", %s", heads[i].bytenr,
					  heads[i].head == heads[i - 1].head ? "RF4 queued twice"
									     : "RF5 the address of two heads");
	return true;
}

/* RF4: the dirty head of `want` has an entry among the sorted heads. */
static bool check_dirty_queued(const struct heap_entry *heads, unsigned n, struct heap_entry want, unsigned *dirty,
			       GError **error)
{
	(*dirty)++;
	if (bsearch(&want, heads, n, sizeof(*heads), compare_entry_head))
		return true;
	return check_fail(error, "corrupt refs: %s %" G_GUINT64_FORMAT ", RF4 dirty but in no queue",
			  (want.head & 1u) ? "data extent" : "block", want.bytenr);
}

/* RF4 and RF5: the dirty blocks (reachable, or freed and not released yet)
 * and data extents (live or freed) are the heads of the entries, one each,
 * at addresses of their own. O(n log n) in the pending heads. */
static bool check_pending_heads(const struct refs *refs, GHashTable *live, const GPtrArray *unreleased,
				GError **error)
{
	if (!check_queue_dirty(&refs->dirty_blocks, "dirty_blocks", error) ||
	    !check_queue_dirty(&refs->dirty_data, "dirty_data", error))
		return false;
	unsigned n, dirty = 0;
	g_autofree struct heap_entry *heads = sorted_heads(refs, &n);
	if (!check_heads_apart(heads, n, error))
		return false;
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, live);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		struct tree_block *block = key;
		if ((block->flags & TREE_BLOCK_REFS_DIRTY) && !check_dirty_queued(heads, n, block_entry(block), &dirty, error))
			return false;
	}
	for (unsigned i = 0; i < unreleased->len; i++) {
		struct tree_block *block = unreleased->pdata[i];
		if ((block->flags & TREE_BLOCK_REFS_DIRTY) && !check_dirty_queued(heads, n, block_entry(block), &dirty, error))
			return false;
	}
	for (struct data_extent *extent = refs->live_data; extent; extent = extent->live_next)
		if ((extent->flags & DATA_EXTENT_DIRTY) && !check_dirty_queued(heads, n, data_entry(extent), &dirty, error))
			return false;
	for (unsigned i = 0; i < refs->freed_data->len; i++) {
		struct data_extent *extent = refs->freed_data->pdata[i];
		if ((extent->flags & DATA_EXTENT_DIRTY) && !check_dirty_queued(heads, n, data_entry(extent), &dirty, error))
			return false;
	}
	if (dirty != n)
		return check_fail(error, "corrupt refs: RF4 %u heads queued, %u blocks and data extents dirty", n, dirty);
	return true;
}

void refs_miscount_pending_for_test(struct refs *refs, int by)
{
	refs->pending += (unsigned)by;
}

int64_t refs_move_idle_max_for_test(struct refs *refs, int64_t idle_max)
{
	int64_t was = refs->idle_max;
	refs->idle_max = idle_max;
	return was;
}

uint64_t refs_misorder_heads_for_test(struct refs *refs)
{
	struct head_array *run = &refs->ahead_run;
	if (run->len - run->front < 2)
		return 0;
	struct heap_entry first = run->entries[run->front];
	run->entries[run->front] = run->entries[run->front + 1];
	run->entries[run->front + 1] = first;
	return first.bytenr;
}

uint64_t refs_misorder_late_heads_for_test(struct refs *refs)
{
	struct head_heap *late = &refs->ahead_late;
	if (late->len < 2)
		return 0;
	struct heap_entry top = late->entries[0];
	late->entries[0] = late->entries[1];
	late->entries[1] = top;
	return MIN(top.bytenr, late->entries[0].bytenr);
}

bool refs_front_head_for_test(const struct refs *refs, struct tree_block **block, struct data_extent **extent)
{
	const struct head_array *run = &refs->ahead_run;
	if (run->front == run->len)
		return false;
	struct pending_head h = head_of(run->entries[run->front]);
	*block = h.block;
	*extent = h.extent;
	return true;
}

uint64_t refs_move_cursor_for_test(struct refs *refs, uint64_t cursor)
{
	uint64_t was = refs->run_cursor;
	refs->run_cursor = cursor;
	return was;
}

void refs_queue_again_for_test(struct refs *refs, struct tree_block *block, bool again)
{
	g_assert(block->flags & TREE_BLOCK_REFS_DIRTY);
	if (again) {
		queue_push(&refs->dirty_blocks, block_entry(block));
		refs->pending++; /* RF11 */
		return;
	}
	g_assert(refs->dirty_blocks.len && refs->dirty_blocks.items[refs->dirty_blocks.len - 1].head == (uintptr_t)block);
	refs->dirty_blocks.len--;
	refs->pending--;
}

bool refs_check(const struct refs *refs, struct btree *const *trees, unsigned ntrees, const GPtrArray *unreleased,
		GHashTable *live, GError **error)
{
	if (!check_pending_count(refs, error) || !check_idle_max(refs, error) || !check_pending_order(refs, error))
		return false;
	g_autoptr(GHashTable) expected_blocks = g_hash_table_new_full(NULL, NULL, NULL, g_free);
	g_autoptr(GHashTable) expected_data = g_hash_table_new_full(NULL, NULL, NULL, g_free);
	for (unsigned t = 0; t < ntrees; t++) {
		/* The root item holds one TREE_BLOCK_REF on the root block. */
		expected_for(expected_blocks, trees[t]->root)->tree_refs++;
		count_references(trees[t]->root, live, expected_blocks, expected_data);
	}
	return count_drop_frames(refs, live, expected_blocks, expected_data, error) &&
	       check_blocks(live, expected_blocks, error) && check_data(refs, expected_data, error) &&
	       check_freed(refs, unreleased, error) && check_pending_heads(refs, live, unreleased, error);
}
