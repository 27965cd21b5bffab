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
 * to bound the memory (64 full 16 KiB leaves of keyed backrefs are about
 * 1.3 MB of items). */
#define REFS_EXPANDED_LEAVES 64u

/* One pending ref head: a block or a data extent with changed counts. */
struct pending_head {
	uint64_t bytenr;
	struct tree_block *block;     /* one of the two is set */
	struct data_extent *extent;
};

/* A binary min-heap of heads by address, in an array of its own: a GArray
 * paid g_array_set_size() at every push and pop, 1 % of the seed run. */
struct head_heap {
	struct pending_head *heads;
	unsigned len, capacity;
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
 *   RF4 outside run_batch(), every block and extent with its DIRTY flag set is in exactly
 *       one of dirty_blocks, dirty_data, heads_ahead and heads_behind;
 *   RF5 addresses are unique among pending heads: a freed block's or extent's address is
 *       pinned until the commit, and data and metadata chunks do not overlap.  So the order
 *       of the queues never matters: every reader sorts them by address first;
 *   RF6 outside run_batch(), heads_ahead holds the heads refs_throttle() took in at or
 *       above run_cursor and heads_behind those below it, each a binary min-heap by
 *       address.  Read from the cursor, wrapping at the end, heads_ahead then
 *       heads_behind is the address order btrfs_select_ref_head() walks.
 * refs_throttle() keeps the heaps between operations and pushes in only what was queued
 * since; refs_commit() takes everything back into the queues first.
 */
struct refs {
	struct btree *extent_tree;
	GPtrArray *dirty_blocks;       /* struct tree_block *, TREE_BLOCK_REFS_DIRTY set */
	GPtrArray *dirty_data;         /* struct data_extent *, DATA_EXTENT_DIRTY set */
	struct head_heap heads_ahead;  /* taken in by refs_throttle(), at or above
					  run_cursor (RF6) */
	struct head_heap heads_behind; /* the same below run_cursor (RF6) */
	GPtrArray *freed_data;         /* extents to release after the commit */
	struct data_extent *live_data; /* the live extents, a list through live_prev/next (owns them) */
	uint64_t live_data_count;
	GArray *chunk_used_written;    /* uint64 per chunk: used as in its BLOCK_GROUP_ITEM */
	uint64_t run_cursor;           /* refs_throttle(): the next head to run is at or above it */
	GArray *drop_frames;           /* struct drop_frame: the dead trees' walk (RF7) */
	uint32_t throttle_limit;       /* refs_throttle_heads() of the store's nodesize; 0 until
					  the first throttle with heads pending */
	struct pending_head *batch;    /* run_batch()'s heads, and the keys and sizes of */
	struct btree_key *batch_keys;  /* its runs of records (write_lone_records(),
					  write_resized_records()): kept */
	uint32_t *batch_sizes;         /* from batch to batch, */
	unsigned batch_room;           /* for this many */
	refs_data_freed_fn on_data_freed;
	void *opaque;
};

struct refs *refs_new(struct btree *extent_tree, refs_data_freed_fn on_data_freed, void *opaque)
{
	struct refs *refs = g_new0(struct refs, 1);
	refs->extent_tree = extent_tree;
	refs->dirty_blocks = g_ptr_array_new();
	refs->dirty_data = g_ptr_array_new();
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
	g_ptr_array_unref(refs->dirty_blocks);
	g_ptr_array_unref(refs->dirty_data);
	g_free(refs->heads_ahead.heads);
	g_free(refs->heads_behind.heads);
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

/* A head is charged to the cause in force when it was queued (docs/model.md,
 * "Attribution"): the extent-tree blocks that writing it copies or splits are
 * that operation's, even when the commit writes it. */
static void queue_block(struct transaction *txn, struct tree_block *block)
{
	if (block->flags & TREE_BLOCK_REFS_DIRTY)
		return;
	block->flags |= TREE_BLOCK_REFS_DIRTY;
	block->refs_cause = (uint8_t)blockstore_cause(txn->store);
	g_ptr_array_add(refs_of(txn)->dirty_blocks, block);
}

static void queue_data(struct transaction *txn, struct data_extent *extent)
{
	if (extent->flags & DATA_EXTENT_DIRTY)
		return;
	extent->flags |= DATA_EXTENT_DIRTY;
	extent->refs_cause = (uint8_t)blockstore_cause(txn->store);
	g_ptr_array_add(refs_of(txn)->dirty_data, extent);
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
	if (!btree_leaf_maps_data(block))
		return;
	struct btree_leaf_cursor cursor;
	btree_leaf_cursor_init(&cursor, block, 0);
	for (const struct btree_item *item; (item = btree_leaf_cursor_next(&cursor));) {
		if (btree_item_key(item)->type != BTRFS_EXTENT_DATA_KEY ||
		    !btree_item_file_extent(item)->extent)
			continue;
		if (add)
			refs_data_add(txn, btree_item_file_extent(item)->extent, full_backref);
		else
			refs_data_drop(txn, btree_item_file_extent(item)->extent, full_backref);
	}
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

/* refs_pending_heads(), for the calls every operation makes. */
static inline unsigned pending_heads(const struct refs *refs)
{
	return refs->dirty_blocks->len + refs->dirty_data->len + refs->heads_ahead.len + refs->heads_behind.len;
}

/* Between most operations the throttle has nothing to run: no dead tree, no
 * more heads than the limit (a limit of 0, not known yet, says so only when
 * none are pending). */
static inline bool throttle_idle(const struct refs *refs)
{
	return !refs->drop_frames->len && pending_heads(refs) <= refs->throttle_limit;
}

/* Every operation's: the idle check before a call (the full path cost a read
 * about 85 instructions, docs/performance.md round 13a). */
static int throttle(struct transaction *txn, bool stoppable)
{
	uint64_t written = 0;
	struct refs *refs = refs_of(txn);
	if (throttle_idle(refs))
		return 0;
	return throttle_heads(refs, txn, stoppable, &written);
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
	if (shared)
		extent->shared_refs++;
	else
		extent->data_refs++;
	queue_data(txn, extent);
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

static int compare_block_address(gconstpointer a, gconstpointer b)
{
	const struct tree_block *x = *(struct tree_block *const *)a, *y = *(struct tree_block *const *)b;
	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

static int compare_data_address(gconstpointer a, gconstpointer b)
{
	const struct data_extent *x = *(struct data_extent *const *)a, *y = *(struct data_extent *const *)b;
	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

/* BLOCK_GROUP_ITEM (chunk start, 192, length) in the extent tree: written
 * whenever the chunk's used bytes changed. Returns true when it wrote any. */
static bool write_block_group_items(struct refs *refs, struct transaction *txn)
{
	unsigned count;
	const struct chunk *chunks = blockstore_chunks(txn->store, &count);
	bool wrote = false;
	for (unsigned i = 0; i < count; i++) {
		struct btree_key key = BTRFS_KEY(chunks[i].start, BTRFS_BLOCK_GROUP_ITEM_KEY, chunks[i].length);
		/* The item says the chunk's used bytes (extent_tree_check ET4). */
		union item_payload used_payload = { .value = chunks[i].used };
		if (i >= refs->chunk_used_written->len) {
			uint64_t used = chunks[i].used;
			btree_insert_item(refs->extent_tree, txn, &key, BTRFS_BLOCK_GROUP_ITEM_SIZE, &used_payload);
			g_array_append_val(refs->chunk_used_written, used);
			wrote = true;
			continue;
		}
		uint64_t *written = &g_array_index(refs->chunk_used_written, uint64_t, i);
		if (*written == chunks[i].used)
			continue;
		*btree_item_value_for_write(btree_lookup_for_write(refs->extent_tree, txn, &key)) = used_payload.value;
		*written = chunks[i].used;
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

/* Binary min-heaps by address (RF6): a batch costs its own heads and the ones queued since
 * the last, each O(log n), where a sorted array paid a memmove of the whole remainder. */
static void heap_push(struct head_heap *heap, struct pending_head h)
{
	if (heap->len == heap->capacity) {
		heap->capacity = MAX(2 * heap->capacity, 64u);
		heap->heads = g_renew(struct pending_head, heap->heads, heap->capacity);
	}
	struct pending_head *a = heap->heads;
	unsigned i = heap->len++;
	while (i > 0 && a[(i - 1) / 2].bytenr > h.bytenr) {
		a[i] = a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	a[i] = h;
}

/* The lowest head of a non-empty HEAP, taken out. */
static struct pending_head heap_pop(struct head_heap *heap)
{
	struct pending_head *a = heap->heads;
	struct pending_head top = a[0], last = a[heap->len - 1];
	unsigned n = heap->len - 1, i = 0;
	for (unsigned child = 1; child < n; child = 2 * i + 1) {
		if (child + 1 < n && a[child + 1].bytenr < a[child].bytenr)
			child++;
		if (a[child].bytenr > last.bytenr) /* never equal: RF5 */
			break;
		a[i] = a[child];
		i = child;
	}
	a[i] = last;
	heap->len = n;
	return top;
}

/* Push a head on the side of the cursor it sorts on (RF6). */
static void take_in(struct refs *refs, struct pending_head h)
{
	heap_push(h.bytenr >= refs->run_cursor ? &refs->heads_ahead : &refs->heads_behind, h);
}

/* Move the heads queued since the last call into the heaps, emptying the queues. */
static void merge_queued(struct refs *refs)
{
	for (unsigned i = 0; i < refs->dirty_blocks->len; i++) {
		struct tree_block *block = refs->dirty_blocks->pdata[i];
		take_in(refs, (struct pending_head){ block->bytenr, block, NULL });
	}
	for (unsigned i = 0; i < refs->dirty_data->len; i++) {
		struct data_extent *extent = refs->dirty_data->pdata[i];
		take_in(refs, (struct pending_head){ extent->bytenr, NULL, extent });
	}
	g_ptr_array_set_size(refs->dirty_blocks, 0);
	g_ptr_array_set_size(refs->dirty_data, 0);
}

/* The next head from the cursor, wrapping at the end, as btrfs_select_ref_head() walks
 * delayed_refs->run_delayed_start: the lowest ahead, else (everything ahead ran) the lowest
 * behind, which is then the lowest of all.  The caller keeps the cursor past what it takes,
 * so after a wrap the heads behind sort ahead of it and the swap keeps RF6. */
static struct pending_head next_head(struct refs *refs)
{
	if (!refs->heads_ahead.len) {
		struct head_heap behind = refs->heads_behind;
		refs->heads_behind = refs->heads_ahead;
		refs->heads_ahead = behind;
	}
	return heap_pop(&refs->heads_ahead);
}

/* How a head's record changes the extent tree. A *lone* insert or delete
 * is one METADATA_ITEM inserted (a block's first record) or deleted (a
 * freed block's last) with every reference inline, before and after; a
 * *resize* is one extent item changed in place, its keyed items as they
 * were (a snapshot's extra reference to a block or a data extent), of a
 * block outside the extent tree: the writes of a batch copy extent-tree
 * blocks, which may change the counts of the batch's later extent-tree
 * heads, never those of other blocks or of data extents. */
enum record_change { RECORD_OTHER, RECORD_LONE_INSERT, RECORD_LONE_DELETE, RECORD_RESIZE };

/* `inline_refs`: how many references a METADATA_ITEM holds inline, the
 * rest being keyed items (refs_metadata_item_size()). */
static inline enum record_change record_change(uint32_t inline_refs, uint32_t nodesize, const struct pending_head *h)
{
	if (!h->block) {
		const struct data_extent *extent = h->extent;
		uint32_t keyed;
		if (!extent->item_refs || !data_extent_refs(extent))
			return RECORD_OTHER;
		refs_data_item_size(nodesize, extent->data_refs, extent->shared_refs, &keyed);
		return keyed == extent->keyed_items ? RECORD_RESIZE : RECORD_OTHER;
	}
	uint32_t was = h->block->extent_item_refs, now = block_record_refs(h->block);
	if (was && now) /* the keyed items stay when both are inline, or the count does */
		return ((was <= inline_refs && now <= inline_refs) || was == now) &&
				       tree_block_owner(h->block) != BTRFS_EXTENT_TREE_OBJECTID
			       ? RECORD_RESIZE
			       : RECORD_OTHER;
	if (!was == !now || was + now > inline_refs) /* one of them is 0 */
		return RECORD_OTHER;
	return now ? RECORD_LONE_INSERT : RECORD_LONE_DELETE;
}

/* The key of a head's extent item and the size it is to have now. */
static uint32_t record_key_size(uint32_t nodesize, const struct pending_head *h, struct btree_key *key)
{
	uint32_t keyed;
	if (h->block) {
		*key = BTRFS_KEY(h->bytenr, BTRFS_METADATA_ITEM_KEY, h->block->level);
		return refs_metadata_item_size(nodesize, block_record_refs(h->block), &keyed);
	}
	*key = BTRFS_KEY(h->bytenr, BTRFS_EXTENT_ITEM_KEY, h->extent->num_bytes);
	return refs_data_item_size(nodesize, h->extent->data_refs, h->extent->shared_refs, &keyed);
}

/* A head whose item a run wrote (its keyed items as they were): as
 * write_block_record() or write_data_record() leave it. */
static void record_written(const struct pending_head *h)
{
	if (h->block) {
		h->block->flags &= ~TREE_BLOCK_REFS_DIRTY;
		h->block->extent_item_refs = block_record_refs(h->block);
	} else {
		h->extent->flags &= ~DATA_EXTENT_DIRTY;
		h->extent->item_refs = data_extent_refs(h->extent);
	}
}

/*
 * The records of `count` heads that are lone inserts, or lone deletes, in
 * address order: what write_block_record() would do for each, but a run of
 * them that are neighbours in an extent-tree leaf goes in one call of
 * btree_insert_items_near() or btree_delete_items_near(). A grep's freed
 * leaves were allocated one after the other, as are the copies that replace
 * them: 96 % of the deletes of `cowsim bench` follow the one before in its
 * leaf.
 */
static void write_lone_records(struct refs *refs, struct transaction *txn, enum record_change kind,
			       uint32_t nodesize, const struct pending_head *heads, unsigned count,
			       struct btree_path *cursor)
{
	struct btree_key *keys = refs->batch_keys;
	uint32_t *sizes = refs->batch_sizes;
	for (unsigned k = 0; k < count; k++)
		sizes[k] = record_key_size(nodesize, &heads[k], &keys[k]);
	for (unsigned k = 0; k < count;) {
		/* A run's first record may copy or split blocks: they are its head's. */
		enum space_cause was = blockstore_set_cause(txn->store, (enum space_cause)heads[k].block->refs_cause);
		uint32_t done = kind == RECORD_LONE_INSERT
					? btree_insert_items_near(refs->extent_tree, txn, &keys[k], &sizes[k], count - k, cursor)
					: btree_delete_items_near(refs->extent_tree, txn, &keys[k], count - k, cursor);
		blockstore_set_cause(txn->store, was);
		g_assert(done);
		for (unsigned end = k + done; k < end; k++)
			record_written(&heads[k]);
	}
}

static void write_record(struct refs *refs, struct transaction *txn, const struct pending_head *h,
			 struct btree_path *cursor)
{
	if (h->block)
		write_block_record(refs, txn, h->block, cursor);
	else
		write_data_record(refs, txn, h->extent, cursor);
}

/*
 * The records of `count` heads that are resizes, in address order: the
 * first as write_record() writes it, then as many of the next as
 * btree_resize_items_after() takes in the same leaf (no copy, no split:
 * nothing is allocated, so no cause is set), and so on. A snapshot's
 * copied leaf adds a reference to each data extent it maps, extents
 * written one after the other whose items are neighbours (the seed run's
 * 154 000 resizes came in stretches of about 60).
 */
static void write_resized_records(struct refs *refs, struct transaction *txn, uint32_t nodesize,
				  const struct pending_head *heads, unsigned count, struct btree_path *cursor)
{
	struct btree_key *keys = refs->batch_keys;
	uint32_t *sizes = refs->batch_sizes;
	for (unsigned k = 1; k < count; k++)
		sizes[k] = record_key_size(nodesize, &heads[k], &keys[k]);
	for (unsigned k = 0; k < count;) {
		write_record(refs, txn, &heads[k++], cursor);
		uint32_t done = btree_resize_items_after(refs->extent_tree, txn, &keys[k], &sizes[k], count - k, cursor);
		for (unsigned end = k + done; k < end; k++)
			record_written(&heads[k]);
	}
}

/* Room for a batch of `count` heads in the buffers kept for it. */
static struct pending_head *batch_room(struct refs *refs, unsigned count)
{
	if (count > refs->batch_room) {
		refs->batch_room = count;
		refs->batch = g_renew(struct pending_head, refs->batch, count);
		refs->batch_keys = g_renew(struct btree_key, refs->batch_keys, count);
		refs->batch_sizes = g_renew(uint32_t, refs->batch_sizes, count);
	}
	return refs->batch;
}

/* Run `count` heads from the cursor on, in address order.  They leave the heaps before any
 * runs; what running them queues waits in the queues for the next merge_queued(). */
static unsigned run_batch(struct refs *refs, struct transaction *txn, unsigned count)
{
	count = MIN(count, refs->heads_ahead.len + refs->heads_behind.len);
	struct pending_head *heads = batch_room(refs, count);
	for (unsigned k = 0; k < count; k++)
		heads[k] = next_head(refs);
	uint32_t nodesize = blockstore_nodesize(txn->store), keyed;
	refs_metadata_item_size(nodesize, UINT32_MAX, &keyed);
	uint32_t inline_refs = UINT32_MAX - keyed;
	struct btree_path cursor = { .levels = 0 }; /* write_extent_items() */
	for (unsigned k = 0; k < count;) {
		const struct pending_head *h = &heads[k];
		enum record_change kind = record_change(inline_refs, nodesize, h);
		unsigned alike = 1;
		while (kind != RECORD_OTHER && k + alike < count &&
		       record_change(inline_refs, nodesize, &heads[k + alike]) == kind)
			alike++;
		if (kind == RECORD_LONE_INSERT || kind == RECORD_LONE_DELETE)
			write_lone_records(refs, txn, kind, nodesize, h, alike, &cursor);
		else if (kind == RECORD_RESIZE)
			write_resized_records(refs, txn, nodesize, h, alike, &cursor);
		else
			write_record(refs, txn, h, &cursor);
		k += alike;
		refs->run_cursor = heads[k - 1].bytenr + 1;
	}
	btree_compact_runs(txn, REFS_EXPANDED_LEAVES);
	return count;
}

/* Give the heads in HEAP back to the queues (their order there does not matter, RF5). */
static void requeue(struct refs *refs, struct head_heap *heap)
{
	for (unsigned i = 0; i < heap->len; i++) {
		const struct pending_head *h = &heap->heads[i];
		if (h->block)
			g_ptr_array_add(refs->dirty_blocks, h->block);
		else
			g_ptr_array_add(refs->dirty_data, h->extent);
	}
	heap->len = 0;
}

/* The pending heads stay ordered across batches and across calls (RF6), and only the few each
 * batch or operation queues are pushed in.  Sorting all of them again per batch made a
 * snapshot deletion (tens of thousands of heads, run 64 at a time) quadratic; keeping them in
 * one sorted array still cost a memmove and a merge over all of them per batch.  Its callers
 * ask throttle_idle() first. */
static int throttle_heads(struct refs *refs, struct transaction *txn, bool stoppable, uint64_t *written)
{
	if (!refs->throttle_limit)
		refs->throttle_limit = refs_throttle_heads(blockstore_nodesize(txn->store));
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
	requeue(refs, &refs->heads_ahead);
	requeue(refs, &refs->heads_behind);
	for (;;) {
		if (!refs->dirty_blocks->len && !refs->dirty_data->len && !write_block_group_items(refs, txn))
			break;
		g_autoptr(GPtrArray) blocks = refs->dirty_blocks;
		g_autoptr(GPtrArray) data = refs->dirty_data;
		refs->dirty_blocks = g_ptr_array_new();
		refs->dirty_data = g_ptr_array_new();
		g_ptr_array_sort(blocks, compare_block_address);
		g_ptr_array_sort(data, compare_data_address);
		/* A compaction rewrites leaves: no cursor across it. */
		for (unsigned i = 0; i < blocks->len; i++) {
			struct btree_path cursor = { .levels = 0 };
			write_block_record(refs, txn, blocks->pdata[i], &cursor);
			btree_compact_runs(txn, REFS_EXPANDED_LEAVES);
		}
		for (unsigned i = 0; i < data->len; i++) {
			struct btree_path cursor = { .levels = 0 };
			write_data_record(refs, txn, data->pdata[i], &cursor);
			btree_compact_runs(txn, REFS_EXPANDED_LEAVES);
		}
		written += blocks->len + data->len;
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

bool refs_check(const struct refs *refs, struct btree *const *trees, unsigned ntrees, GHashTable *live,
		GError **error)
{
	g_autoptr(GHashTable) expected_blocks = g_hash_table_new_full(NULL, NULL, NULL, g_free);
	g_autoptr(GHashTable) expected_data = g_hash_table_new_full(NULL, NULL, NULL, g_free);
	for (unsigned t = 0; t < ntrees; t++) {
		/* The root item holds one TREE_BLOCK_REF on the root block. */
		expected_for(expected_blocks, trees[t]->root)->tree_refs++;
		count_references(trees[t]->root, live, expected_blocks, expected_data);
	}
	return count_drop_frames(refs, live, expected_blocks, expected_data, error) &&
	       check_blocks(live, expected_blocks, error) && check_data(refs, expected_data, error);
}
