/*
 * model/blockstore.c - chunks, block addresses and space accounting.
 *
 * Layout of the modeled device (DUP metadata: each metadata chunk takes two
 * stripes of raw space, data and system chunks as mkfs makes them):
 *
 *   raw:  | 1 MiB reserved | hole 12M | data 8M | system 2x8M | meta 2xM0 | ... later chunks
 *   logical: chunks laid end to end from CHUNK_LOGICAL_START up
 *   (M0 as mkfs sizes it, 32 MiB to 1 GiB; later chunks as the kernel sizes
 *   them, the last one shrunk to fit: model/chunk_alloc.h)
 *
 * Metadata addresses come from the lowest free slot of an existing chunk,
 * else from the bump pointer of the newest metadata chunk, else a new chunk.
 * Freed addresses wait in `pinned` until blockstore_commit() (BS2).
 *
 * Invariants (blockstore_check):
 *  BS1 metadata_used == live_blocks * nodesize == sum of tree_bytes;
 *  BS2 an address is in at most one of: live, pinned, free (a reachable block
 *     freed is refs.h RF3's);
 *  BS3 every chunk's used is within its length; raw allocated <= device size;
 *  BS4 cause_bytes[c] == nodesize * live blocks whose cause is c, so the
 *     causes sum to metadata_used.
 *  BS5 chunk_bytes[0] and [1] are the lengths of the metadata and of the data
 *     chunks, summed (kept as chunks are added: every reservation asks for
 *     the metadata total, and a sum over the chunks cost 1 % of a run).
 *  BS6 front_hole_free == front_hole_size (BTRFS_MKFS_FRONT_HOLE, less on a
 *     device mkfs barely fits) less the raw bytes of the chunks placed in
 *     that hole, and never more than the raw unallocated.
 *  BS7 overcommit == overcommit_of() the raw unallocated space: it is kept as
 *     chunks are added, the only change of its inputs (every reservation
 *     asks for it, and recomputing it was a tenth of a read's reservation).
 *  BS8 held == held_of(): the bytes of the live and the pinned blocks plus the
 *     global reserve, what metadata_free() takes off the chunks besides the
 *     reservations. It is kept as blocks are allocated, freed and unpinned,
 *     the only changes of its inputs (every reservation asks for it: a read's
 *     was 25 instructions of metadata_free(), 7.5 M of the seed run).
 *
 * A new chunk goes where the kernel's find_free_dev_extent() puts it: in the
 * first hole (in device order) its whole raw size fits, else in the largest
 * hole, shrunk to it. The holes are mkfs's front hole and the tail.
 */
#include "model_error.h"
#include "blockstore.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "chunk_alloc.h"
#include "constants.h"

#define CHUNK_LOGICAL_START (22ull << 20)

struct data_hole {
	uint64_t start, length;
};

struct blockstore {
	struct blockstore_config config;
	uint64_t metadata_chunk_size;
	uint64_t data_chunk_size;
	GArray *chunks;            /* struct chunk, in logical order */
	unsigned chunk_hint;       /* chunk_of()'s last answer, asked first */
	uint64_t chunk_bytes[2];   /* BS5: lengths of the metadata [0] and data [1] chunks */
	uint64_t next_logical;
	uint64_t raw_allocated;
	uint64_t front_hole_size;  /* raw bytes mkfs left free after the reserved MiB */
	uint64_t front_hole_free;  /* BS6: what no chunk took of it yet */

	/* metadata */
	int meta_bump_chunk;       /* index of the chunk the bump pointer is in */
	uint64_t meta_bump;        /* next never-used address in it */
	GArray *free_slots;        /* uint64 addresses, sorted high to low */
	GArray *pinned_slots;      /* uint64 addresses freed this transaction */
	GPtrArray *freed_blocks;   /* tree_block structs to release at commit */
	uint64_t live_blocks;
	uint64_t tree_bytes[TREE_CATEGORY_COUNT];
	uint64_t cause_bytes[SPACE_CAUSE_COUNT]; /* BS4 */
	enum space_cause cause;    /* charged to the blocks allocated now */
	uint64_t txn_cause_blocks[SPACE_CAUSE_COUNT]; /* allocated + freed this transaction, by cause */
	uint64_t reserved;         /* bytes held by blockstore_reserve */
	uint64_t overcommit;       /* BS7: what a reservation may take beyond the chunks */
	uint64_t held;             /* BS8: live and pinned blocks' bytes and the global reserve */
	bool overcommitted;

	/* data */
	int data_bump_chunk;
	uint64_t data_bump;
	GArray *data_holes;        /* struct data_hole, reusable */
	GArray *pinned_data;       /* struct data_hole, freed this transaction */
	uint64_t data_used;
	uint64_t data_reserved;    /* promised to queued writes, not yet allocated */
	bool data_chunk_grown;     /* a data chunk was added since mkfs */
};

enum tree_category tree_category_of(uint64_t tree_id)
{
	/* Subvolume ids stay below 2^48 (BTRFS_LAST_FREE_OBJECTID is far
	 * higher, but qgroup ids use the top 16 bits); the side-table
	 * policy's atime trees live above. */
	if (tree_id == BTRFS_FS_TREE_OBJECTID ||
	    (tree_id >= BTRFS_FIRST_FREE_OBJECTID && tree_id < (1ull << 48)))
		return TREE_CATEGORY_FS;
	switch (tree_id) {
	case BTRFS_EXTENT_TREE_OBJECTID: return TREE_CATEGORY_EXTENT;
	case BTRFS_CSUM_TREE_OBJECTID: return TREE_CATEGORY_CSUM;
	case BTRFS_ROOT_TREE_OBJECTID: return TREE_CATEGORY_ROOT;
	case BTRFS_FREE_SPACE_TREE_OBJECTID: return TREE_CATEGORY_FREE_SPACE;
	default: return TREE_CATEGORY_OTHER;
	}
}

const char *tree_category_name(enum tree_category category)
{
	static const char *const names[TREE_CATEGORY_COUNT] = {
		"fs", "extent", "csum", "root", "free_space", "other",
	};
	return category < TREE_CATEGORY_COUNT ? names[category] : "?";
}

const char *space_cause_name(enum space_cause cause)
{
	static const char *const names[SPACE_CAUSE_COUNT] = {
		"mkfs", "write", "atime", "snapshot", "delete",
	};
	return cause < SPACE_CAUSE_COUNT ? names[cause] : "?";
}

static uint64_t raw_cost(const struct blockstore *store, bool data, uint64_t length)
{
	return (!data && store->config.metadata_dup) ? 2 * length : length;
}

static uint64_t raw_unallocated(const struct blockstore *store)
{
	return store->config.device_size > store->raw_allocated ? store->config.device_size - store->raw_allocated
								 : 0;
}

/* The kernel grants a reservation that fits the metadata chunks, or the
 * overcommit: the unallocated space the profile can use, less one data chunk
 * (a data allocation may take it first), an eighth of it for
 * BTRFS_RESERVE_FLUSH_ALL (space-info.c calc_available_free_space()). On a
 * small device the data chunks soon leave nothing to overcommit. */
static uint64_t overcommit_of(const struct blockstore *store)
{
	uint64_t usable = chunk_alloc_allocatable(store->config.metadata_dup, raw_unallocated(store));
	uint64_t data_chunk = MIN(store->data_chunk_size, store->config.device_size / 10);
	return usable > data_chunk ? (usable - data_chunk) >> 3 : 0;
}

/* Adds a chunk of `length` logical bytes, or of what the device still has
 * when that is less (the kernel shrinks the last chunk to fit, CA1).
 * Returns the new chunk's index, or -1 when the device has no room. */
static int add_chunk(struct blockstore *store, bool data, uint64_t length)
{
	bool dup = raw_cost(store, data, 1) == 2;
	uint64_t hole = store->front_hole_free;
	uint64_t tail = raw_unallocated(store) - hole;
	uint64_t fits_hole = chunk_alloc_allocatable(dup, hole), fits_tail = chunk_alloc_allocatable(dup, tail);
	bool in_hole = length <= fits_hole || (length > fits_tail && fits_hole > fits_tail);
	uint64_t fits = in_hole ? fits_hole : fits_tail;
	if (fits < BTRFS_STRIPE_LEN)
		return -1;
	length = MIN(length, fits);
	uint64_t raw = raw_cost(store, data, length);
	if (in_hole)
		store->front_hole_free -= raw;
	struct chunk chunk = { .start = store->next_logical, .length = length, .data = data, .changed = true,
			       .in_front_hole = in_hole };
	store->next_logical += length;
	store->raw_allocated += raw;
	store->overcommit = overcommit_of(store); /* BS7 */
	g_array_append_val(store->chunks, chunk);
	store->chunk_bytes[data] += length;
	return (int)store->chunks->len - 1;
}

static struct chunk *chunk_at(struct blockstore *store, int index)
{
	return &g_array_index(store->chunks, struct chunk, index);
}

/* Chunks are appended in logical order and never move: binary search, after
 * the chunk of the last answer (a block's neighbours, the bump chunk, are
 * mostly in it). */
static struct chunk *chunk_of(struct blockstore *store, uint64_t bytenr)
{
	if (store->chunk_hint < store->chunks->len) {
		struct chunk *hint = chunk_at(store, (int)store->chunk_hint);
		if (bytenr - hint->start < hint->length) /* wraps below its start */
			return hint;
	}
	unsigned lo = 0, hi = store->chunks->len;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		struct chunk *chunk = chunk_at(store, (int)mid);
		if (bytenr < chunk->start)
			hi = mid;
		else if (bytenr >= chunk->start + chunk->length)
			lo = mid + 1;
		else {
			store->chunk_hint = mid;
			return chunk;
		}
	}
	return NULL;
}

static uint64_t metadata_total(const struct blockstore *store)
{
	return store->chunk_bytes[0];
}

static uint64_t data_total(const struct blockstore *store)
{
	return store->chunk_bytes[1];
}

static uint64_t global_reserve(const struct blockstore *store)
{
	uint64_t want = store->tree_bytes[TREE_CATEGORY_EXTENT] + store->tree_bytes[TREE_CATEGORY_CSUM] +
			store->tree_bytes[TREE_CATEGORY_FREE_SPACE];
	uint64_t floor = BTRFS_GLOBAL_RESERVE_FLOOR_NODES * store->config.nodesize;
	return MIN(MAX(want, floor), BTRFS_GLOBAL_RESERVE_MAX);
}

/* BS8: what the blocks and the global reserve hold of the metadata chunks. */
static uint64_t held_of(const struct blockstore *store)
{
	return (store->live_blocks + store->pinned_slots->len) * (uint64_t)store->config.nodesize +
	       global_reserve(store);
}

struct blockstore *blockstore_new(const struct blockstore_config *config, GError **error)
{
	uint32_t nodesize = config->nodesize;
	if (nodesize < BTRFS_MIN_NODESIZE || nodesize > BTRFS_MAX_NODESIZE || (nodesize & (nodesize - 1))) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_INVALID,
			    "nodesize %u: must be a power of two from %u to %u", nodesize,
			    BTRFS_MIN_NODESIZE, BTRFS_MAX_NODESIZE);
		return NULL;
	}
	struct blockstore *store = g_new0(struct blockstore, 1);
	store->config = *config;
	/* The kernel's chunk sizes on an empty device; add_chunk() shrinks the
	 * last ones to what is left. */
	store->metadata_chunk_size = chunk_alloc_size(config->device_size, false, config->metadata_dup, UINT64_MAX);
	store->data_chunk_size = chunk_alloc_size(config->device_size, true, false, UINT64_MAX);
	store->chunks = g_array_new(FALSE, TRUE, sizeof(struct chunk));
	store->free_slots = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	store->pinned_slots = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	store->freed_blocks = g_ptr_array_new();
	store->data_holes = g_array_new(FALSE, FALSE, sizeof(struct data_hole));
	store->pinned_data = g_array_new(FALSE, FALSE, sizeof(struct data_hole));
	store->next_logical = CHUNK_LOGICAL_START;
	store->raw_allocated = BTRFS_DEVICE_RANGE_RESERVED + 2 * BTRFS_MKFS_SYSTEM_CHUNK;

	store->meta_bump_chunk = add_chunk(store, false, chunk_alloc_mkfs_metadata(config->device_size));
	store->data_bump_chunk = add_chunk(store, true, BTRFS_MKFS_DATA_CHUNK);
	if (config->device_size < BTRFS_MKFS_MIN_DEVICE || store->meta_bump_chunk < 0 || store->data_bump_chunk < 0) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_NO_SPACE,
			    "device size %" G_GUINT64_FORMAT ": too small for mkfs's first chunks"
			    " (mkfs.btrfs needs %llu bytes)", config->device_size, BTRFS_MKFS_MIN_DEVICE);
		blockstore_free(store);
		return NULL;
	}
	store->meta_bump = chunk_at(store, store->meta_bump_chunk)->start;
	store->data_bump = chunk_at(store, store->data_bump_chunk)->start;
	/* mkfs's own chunks sit after the hole it leaves (BS6). */
	store->front_hole_size = MIN(BTRFS_MKFS_FRONT_HOLE, raw_unallocated(store));
	store->front_hole_free = store->front_hole_size;
	store->held = held_of(store);
	return store;
}

const GPtrArray *blockstore_unreleased_blocks(const struct blockstore *store)
{
	return store->freed_blocks;
}

void blockstore_release_block(struct tree_block *block)
{
	btree_release_block(block);
}

void blockstore_free(struct blockstore *store)
{
	if (!store)
		return;
	for (unsigned i = 0; i < store->freed_blocks->len; i++)
		blockstore_release_block(store->freed_blocks->pdata[i]);
	g_ptr_array_unref(store->freed_blocks);
	g_array_unref(store->chunks);
	g_array_unref(store->free_slots);
	g_array_unref(store->pinned_slots);
	g_array_unref(store->data_holes);
	g_array_unref(store->pinned_data);
	g_free(store);
}

uint32_t blockstore_nodesize(const struct blockstore *store)
{
	return store->config.nodesize;
}

static uint64_t metadata_free(const struct blockstore *store)
{
	uint64_t committed = store->held + store->reserved; /* BS8 */
	uint64_t total = metadata_total(store);
	return total > committed ? total - committed : 0;
}

/* btrfs_start_transaction_fallback_global_rsv(): an unlink or rmdir that
 * finds no free metadata may take its reservation out of the global
 * reserve, so deletes still work on a full filesystem. */
int blockstore_reserve_fallback(struct blockstore *store, unsigned items)
{
	if (!blockstore_reserve(store, items))
		return 0;
	uint64_t need = (uint64_t)items * BTRFS_RESERVE_NODES_PER_ITEM * store->config.nodesize;
	if (metadata_free(store) + global_reserve(store) < need)
		return -ENOSPC;
	store->reserved += need;
	return 0;
}

/* A reservation fits the metadata chunks or the overcommit (overcommit_of()). */
bool blockstore_reserve_fits(const struct blockstore *store, unsigned items, uint64_t held)
{
	uint64_t need = (uint64_t)items * BTRFS_TICKET_NODES_PER_ITEM * store->config.nodesize + held;
	return metadata_free(store) + store->overcommit >= need;
}

bool blockstore_reserve_at_once(struct blockstore *store, unsigned items, uint64_t held)
{
	uint64_t unit = (uint64_t)items * store->config.nodesize, free = metadata_free(store);
	uint64_t need = unit * BTRFS_RESERVE_NODES_PER_ITEM;
	if (free + store->overcommit < unit * BTRFS_TICKET_NODES_PER_ITEM + held || free < need)
		return false;
	store->reserved += need;
	return true;
}

int blockstore_reserve(struct blockstore *store, unsigned items)
{
	uint64_t need = (uint64_t)items * BTRFS_RESERVE_NODES_PER_ITEM * store->config.nodesize;
	while (metadata_free(store) < need) {
		if (add_chunk(store, false, store->metadata_chunk_size) < 0)
			return -ENOSPC;
	}
	store->reserved += need;
	return 0;
}

bool blockstore_metadata_wants_chunk(const struct blockstore *store)
{
	uint64_t used = (store->live_blocks + store->pinned_slots->len) * (uint64_t)store->config.nodesize;
	return (used + BTRFS_CHUNK_ALLOC_SLACK) * 100 >= metadata_total(store) * BTRFS_CHUNK_ALLOC_PERCENT;
}

bool blockstore_force_metadata_chunk(struct blockstore *store)
{
	return add_chunk(store, false, store->metadata_chunk_size) >= 0;
}

void blockstore_release(struct blockstore *store)
{
	store->reserved = 0;
}

/* The lowest reusable address, else the bump pointer, else a new chunk; past
 * all of them, an address beyond the device marks the overcommit. */
static uint64_t take_metadata_address(struct blockstore *store)
{
	uint32_t nodesize = store->config.nodesize;
	if (store->free_slots->len) {
		uint64_t bytenr = g_array_index(store->free_slots, uint64_t, store->free_slots->len - 1);
		g_array_set_size(store->free_slots, store->free_slots->len - 1);
		return bytenr;
	}
	struct chunk *chunk = chunk_at(store, store->meta_bump_chunk);
	if (store->meta_bump + nodesize > chunk->start + chunk->length) {
		/* A metadata chunk that blockstore_reserve() added is still
		 * untouched past the bump chunk: use it before adding another. */
		int index = -1;
		for (unsigned i = (unsigned)store->meta_bump_chunk + 1; i < store->chunks->len && index < 0; i++)
			if (!chunk_at(store, (int)i)->data)
				index = (int)i;
		if (index < 0)
			index = add_chunk(store, false, store->metadata_chunk_size);
		if (index < 0) {
			store->overcommitted = true;
			uint64_t bytenr = store->next_logical;
			store->next_logical += nodesize;
			return bytenr;
		}
		store->meta_bump_chunk = index;
		store->meta_bump = chunk_at(store, index)->start;
	}
	uint64_t bytenr = store->meta_bump;
	store->meta_bump += nodesize;
	return bytenr;
}

static void account_block(struct blockstore *store, const struct tree_block *block, bool add)
{
	struct chunk *chunk = chunk_of(store, block->bytenr);
	uint32_t nodesize = store->config.nodesize;
	enum tree_category category = tree_category_of(tree_block_owner(block));
	if (add) {
		store->live_blocks++;
		store->tree_bytes[category] += nodesize;
		store->cause_bytes[block->cause] += nodesize;
	} else {
		store->live_blocks--;
		store->tree_bytes[category] -= nodesize;
		store->cause_bytes[block->cause] -= nodesize;
	}
	store->txn_cause_blocks[store->cause]++;
	if (chunk) {
		chunk->used = add ? chunk->used + nodesize : chunk->used - nodesize;
		chunk->changed = true;
	}
}

struct tree_block *blockstore_alloc_block(struct blockstore *store, uint64_t owner, uint8_t level,
					  uint64_t generation)
{
	/* Not g_new0(): calloc() skips malloc's per-thread cache (a copied
	 * leaf's block was about 195 instructions, docs/performance.md 14b). */
	struct tree_block *block = g_new(struct tree_block, 1);
	memset(block, 0, sizeof(*block));
	block->bytenr = take_metadata_address(store);
	block->packed_owner = btree_owner_pack(owner);  /* btree_init() refused an id that does not pack */
	block->level = level;
	block->generation = (uint32_t)generation; /* BT11: transaction ids stay below 2^32 */
	block->cause = (uint8_t)store->cause;
	account_block(store, block, true);
	store->held = held_of(store); /* BS8 */
	uint64_t nodesize = store->config.nodesize;
	store->reserved = store->reserved > nodesize ? store->reserved - nodesize : 0;
	return block;
}

void blockstore_free_block(struct blockstore *store, struct tree_block *block)
{
	g_assert(!(block->flags & TREE_BLOCK_FREED));
	block->flags |= TREE_BLOCK_FREED;
	account_block(store, block, false);
	g_array_append_val(store->pinned_slots, block->bytenr);
	store->held = held_of(store); /* BS8 */
	g_ptr_array_add(store->freed_blocks, block);
	btree_block_freed(block);
}

static bool take_data_hole(struct blockstore *store, uint64_t bytes, uint64_t *bytenr)
{
	for (unsigned i = 0; i < store->data_holes->len; i++) {
		struct data_hole *hole = &g_array_index(store->data_holes, struct data_hole, i);
		if (hole->length < bytes)
			continue;
		*bytenr = hole->start;
		hole->start += bytes;
		hole->length -= bytes;
		if (!hole->length)
			g_array_remove_index(store->data_holes, i);
		return true;
	}
	return false;
}

/* A data chunk more, listed as a hole: blockstore_alloc_data takes holes
 * or the bump chunk, so space reserved in it could never be used otherwise. */
static int add_data_chunk(struct blockstore *store)
{
	int index = add_chunk(store, true, store->data_chunk_size);
	if (index < 0)
		return index;
	struct data_hole hole = { chunk_at(store, index)->start, chunk_at(store, index)->length };
	g_array_append_val(store->data_holes, hole);
	return index;
}

int blockstore_reserve_data(struct blockstore *store, uint64_t bytes)
{
	while (data_total(store) < store->data_used + store->data_reserved + bytes) {
		if (add_data_chunk(store) < 0)
			return -ENOSPC;
		/* The first data chunk after mkfs comes with a second one: the
		 * data reclaim worker (do_async_reclaim_data_space) allocates with
		 * ALLOC_CHUNK_FORCE again while the writers' tickets still wait,
		 * measured on 1 GiB and 4 GiB (two DATA chunk_alloc events 0.17 s
		 * apart at the start of a copy; docs/btrfs-ground-truth.md). Where
		 * it does not fit, the one chunk is all. */
		if (!store->data_chunk_grown) {
			store->data_chunk_grown = true;
			add_data_chunk(store);
		}
	}
	store->data_reserved += bytes;
	return 0;
}

void blockstore_unreserve_data(struct blockstore *store, uint64_t bytes)
{
	store->data_reserved -= MIN(bytes, store->data_reserved);
}

/* The bump chunk, or a new chunk when it is full; false when the device has
 * no room for another. */
static bool take_data_bump(struct blockstore *store, uint64_t bytes, uint64_t *bytenr)
{
	struct chunk *chunk = chunk_at(store, store->data_bump_chunk);
	if (store->data_bump + bytes > chunk->start + chunk->length) {
		uint64_t tail = chunk->start + chunk->length - store->data_bump;
		int index = add_chunk(store, true, MAX(store->data_chunk_size, bytes));
		if (index < 0)
			return false;
		/* The tail of the old chunk stays usable for smaller extents. */
		if (tail) {
			struct data_hole hole = { store->data_bump, tail };
			g_array_append_val(store->data_holes, hole);
		}
		store->data_bump_chunk = index;
		store->data_bump = chunk_at(store, index)->start;
	}
	*bytenr = store->data_bump;
	store->data_bump += bytes;
	return true;
}

/* No free run holds `bytes` whole and the device is full: the largest run
 * there is, up to `bytes` (0 when there is none). */
static uint64_t take_largest_data_piece(struct blockstore *store, uint64_t bytes, uint64_t *bytenr)
{
	const struct chunk *bump = chunk_at(store, store->data_bump_chunk);
	uint64_t best = bump->start + bump->length - store->data_bump;
	int best_hole = -1;
	for (unsigned i = 0; i < store->data_holes->len; i++) {
		const struct data_hole *hole = &g_array_index(store->data_holes, struct data_hole, i);
		if (hole->length > best) {
			best = hole->length;
			best_hole = (int)i;
		}
	}
	uint64_t taken = MIN(best, bytes);
	if (!taken)
		return 0;
	if (best_hole < 0) {
		*bytenr = store->data_bump;
		store->data_bump += taken;
		return taken;
	}
	struct data_hole *hole = &g_array_index(store->data_holes, struct data_hole, best_hole);
	*bytenr = hole->start;
	hole->start += taken;
	hole->length -= taken;
	if (!hole->length)
		g_array_remove_index(store->data_holes, (unsigned)best_hole);
	return taken;
}

int blockstore_alloc_data(struct blockstore *store, uint64_t bytes, uint64_t *bytenr, uint64_t *allocated)
{
	uint64_t taken = bytes;
	if (!take_data_hole(store, bytes, bytenr) && !take_data_bump(store, bytes, bytenr)) {
		/* btrfs's cow_file_range() asks find_free_extent() for the whole
		 * range but accepts down to one sector, and asks again for the
		 * rest: on a full, fragmented device an extent is split. */
		taken = take_largest_data_piece(store, bytes, bytenr);
		if (!taken)
			return -ENOSPC;
	}
	*allocated = taken;
	store->data_reserved -= MIN(taken, store->data_reserved);
	store->data_used += taken;
	struct chunk *chunk = chunk_of(store, *bytenr);
	if (chunk) {
		chunk->used += taken;
		chunk->changed = true;
	}
	return 0;
}

void blockstore_free_data(struct blockstore *store, uint64_t bytenr, uint64_t bytes)
{
	struct data_hole hole = { bytenr, bytes };
	g_array_append_val(store->pinned_data, hole);
	store->data_used -= bytes;
	struct chunk *chunk = chunk_of(store, bytenr);
	if (chunk) {
		chunk->used -= bytes;
		chunk->changed = true;
	}
}

static int compare_u64_descending(gconstpointer a, gconstpointer b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x > y ? -1 : x < y;
}

void blockstore_commit(struct blockstore *store)
{
	g_array_append_vals(store->free_slots, store->pinned_slots->data, store->pinned_slots->len);
	g_array_set_size(store->pinned_slots, 0);
	store->held = held_of(store); /* BS8 */
	g_array_sort(store->free_slots, compare_u64_descending);
	for (unsigned i = 0; i < store->freed_blocks->len; i++)
		blockstore_release_block(store->freed_blocks->pdata[i]);
	g_ptr_array_set_size(store->freed_blocks, 0);
	g_array_append_vals(store->data_holes, store->pinned_data->data, store->pinned_data->len);
	g_array_set_size(store->pinned_data, 0);
	for (unsigned i = 0; i < store->chunks->len; i++)
		chunk_at(store, (int)i)->changed = false;
	memset(store->txn_cause_blocks, 0, sizeof(store->txn_cause_blocks));
}

enum space_cause blockstore_set_cause(struct blockstore *store, enum space_cause cause)
{
	g_assert(cause < SPACE_CAUSE_COUNT);
	enum space_cause was = store->cause;
	store->cause = cause;
	return was;
}

enum space_cause blockstore_cause(const struct blockstore *store)
{
	return store->cause;
}

enum space_cause blockstore_busiest_cause(const struct blockstore *store)
{
	enum space_cause busiest = store->cause;
	uint64_t most = 0;
	for (int c = 0; c < SPACE_CAUSE_COUNT; c++) {
		if (store->txn_cause_blocks[c] > most) {
			most = store->txn_cause_blocks[c];
			busiest = (enum space_cause)c;
		}
	}
	return busiest;
}

const struct chunk *blockstore_chunks(const struct blockstore *store, unsigned *count)
{
	*count = store->chunks->len;
	return (const struct chunk *)store->chunks->data;
}

void blockstore_report(const struct blockstore *store, struct space_report *report)
{
	memset(report, 0, sizeof(*report));
	report->metadata_used = store->live_blocks * store->config.nodesize;
	report->metadata_total = metadata_total(store);
	report->metadata_raw = raw_cost(store, false, report->metadata_used);
	report->data_used = store->data_used;
	report->data_total = data_total(store);
	/* The chunk tree lives in the system chunk: one leaf on a one-device fs. */
	report->system_used = store->config.nodesize;
	report->global_reserve = global_reserve(store);
	report->device_allocated = store->raw_allocated;
	memcpy(report->tree_bytes, store->tree_bytes, sizeof(report->tree_bytes));
	memcpy(report->cause_bytes, store->cause_bytes, sizeof(report->cause_bytes));
}

uint64_t space_report_metadata_free(const struct space_report *r, uint64_t device_size, bool metadata_dup)
{
	uint64_t committed = r->metadata_used + r->global_reserve;
	uint64_t in_chunks = r->metadata_total > committed ? r->metadata_total - committed : 0;
	/* Chunks shrink to fit the device's end: all unallocated space counts. */
	uint64_t unallocated = device_size > r->device_allocated ? device_size - r->device_allocated : 0;
	return in_chunks + chunk_alloc_allocatable(metadata_dup, unallocated);
}

uint64_t blockstore_live_blocks(const struct blockstore *store)
{
	return store->live_blocks;
}

bool blockstore_overcommitted(const struct blockstore *store)
{
	return store->overcommitted;
}

unsigned blockstore_chunk_count(const struct blockstore *store, bool data)
{
	unsigned count = 0;
	for (unsigned i = 0; i < store->chunks->len; i++)
		count += g_array_index(store->chunks, struct chunk, i).data == data;
	return count;
}

/* BS2: true, with the error, when one of `addresses` is a key of `by_address`
 * (`what` says which two sets share it). */
static bool address_listed(GArray *addresses, GHashTable *by_address, const char *what, GError **error)
{
	for (unsigned i = 0; i < addresses->len; i++) {
		uint64_t bytenr = g_array_index(addresses, uint64_t, i);
		if (g_hash_table_contains(by_address, &g_array_index(addresses, uint64_t, i))) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt blockstore: block %" G_GUINT64_FORMAT ", BS2 %s", bytenr, what);
			return true;
		}
	}
	return false;
}

/* BS2 for the addresses no live block has: none both pinned and free (the
 * commit moves the pinned ones to the free list; one on both would be
 * handed out while the committed tree may still point at it). */
static bool pinned_listed_free(const struct blockstore *store, GError **error)
{
	g_autoptr(GHashTable) pinned = g_hash_table_new(g_int64_hash, g_int64_equal);
	for (unsigned i = 0; i < store->pinned_slots->len; i++)
		g_hash_table_add(pinned, &g_array_index(store->pinned_slots, uint64_t, i));
	return address_listed(store->free_slots, pinned, "pinned and on the free list", error);
}

bool blockstore_check(const struct blockstore *store, GHashTable *live, GError **error)
{
	uint64_t bytes[TREE_CATEGORY_COUNT] = { 0 }, cause_bytes[SPACE_CAUSE_COUNT] = { 0 };
	g_autoptr(GHashTable) by_address = g_hash_table_new(g_int64_hash, g_int64_equal);
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, live);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		struct tree_block *block = key;
		if (!g_hash_table_insert(by_address, &block->bytenr, block)) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt blockstore: block %" G_GUINT64_FORMAT ", BS2 address used twice", block->bytenr);
			return false;
		}
		if (block->cause >= SPACE_CAUSE_COUNT) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt blockstore: block %" G_GUINT64_FORMAT ", BS4 cause %u unknown", block->bytenr,
				    block->cause);
			return false;
		}
		bytes[tree_category_of(tree_block_owner(block))] += store->config.nodesize;
		cause_bytes[block->cause] += store->config.nodesize;
	}
	if ((uint64_t)g_hash_table_size(live) != store->live_blocks) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt blockstore: BS1 %u blocks reachable, %" G_GUINT64_FORMAT " accounted live",
			    g_hash_table_size(live), store->live_blocks);
		return false;
	}
	for (int c = 0; c < TREE_CATEGORY_COUNT; c++) {
		if (bytes[c] != store->tree_bytes[c]) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt blockstore: tree %s, BS1 %" G_GUINT64_FORMAT " bytes reachable, %"
				    G_GUINT64_FORMAT " accounted", tree_category_name(c), bytes[c], store->tree_bytes[c]);
			return false;
		}
	}
	for (int c = 0; c < SPACE_CAUSE_COUNT; c++) {
		if (cause_bytes[c] != store->cause_bytes[c]) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt blockstore: cause %s, BS4 %" G_GUINT64_FORMAT " bytes reachable, %"
				    G_GUINT64_FORMAT " accounted", space_cause_name((enum space_cause)c), cause_bytes[c],
				    store->cause_bytes[c]);
			return false;
		}
	}
	if (address_listed(store->free_slots, by_address, "reachable but on the free list", error) ||
	    address_listed(store->pinned_slots, by_address, "reachable but pinned", error) ||
	    pinned_listed_free(store, error))
		return false;
	uint64_t chunk_bytes[2] = { 0 }, hole_raw = 0;
	for (unsigned i = 0; i < store->chunks->len; i++) {
		const struct chunk *chunk = &g_array_index(store->chunks, struct chunk, i);
		if (chunk->used > chunk->length) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt blockstore: chunk %" G_GUINT64_FORMAT ", BS3 used %" G_GUINT64_FORMAT
				    " beyond its length", chunk->start, chunk->used);
			return false;
		}
		chunk_bytes[chunk->data] += chunk->length;
		if (chunk->in_front_hole)
			hole_raw += raw_cost(store, chunk->data, chunk->length);
	}
	if (store->raw_allocated > store->config.device_size) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt blockstore: BS3 %" G_GUINT64_FORMAT " raw bytes allocated, beyond the device's %"
			    G_GUINT64_FORMAT, store->raw_allocated, store->config.device_size);
		return false;
	}
	if (hole_raw + store->front_hole_free != store->front_hole_size ||
	    store->front_hole_free > raw_unallocated(store)) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt blockstore: BS6 %" G_GUINT64_FORMAT " raw bytes of chunks in mkfs's front hole, %"
			    G_GUINT64_FORMAT " free in it", hole_raw, store->front_hole_free);
		return false;
	}
	for (int data = 0; data < 2; data++) {
		if (chunk_bytes[data] != store->chunk_bytes[data]) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt blockstore: BS5 %s chunks %" G_GUINT64_FORMAT " bytes long, %" G_GUINT64_FORMAT
				    " accounted", data ? "data" : "metadata", chunk_bytes[data], store->chunk_bytes[data]);
			return false;
		}
	}
	if (store->overcommit != overcommit_of(store)) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt blockstore: BS7 overcommit %" G_GUINT64_FORMAT " kept, %" G_GUINT64_FORMAT
			    " from the unallocated space", store->overcommit, overcommit_of(store));
		return false;
	}
	if (store->held != held_of(store)) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt blockstore: BS8 %" G_GUINT64_FORMAT " bytes held kept, %" G_GUINT64_FORMAT
			    " by the live and pinned blocks and the global reserve", store->held, held_of(store));
		return false;
	}
	return true;
}

void blockstore_skew_overcommit_for_test(struct blockstore *store, int64_t delta)
{
	store->overcommit = (uint64_t)((int64_t)store->overcommit + delta);
}

void blockstore_skew_held_for_test(struct blockstore *store, int64_t delta)
{
	store->held = (uint64_t)((int64_t)store->held + delta);
}

void blockstore_skew_raw_allocated_for_test(struct blockstore *store, int64_t delta)
{
	store->raw_allocated = (uint64_t)((int64_t)store->raw_allocated + delta);
}

void blockstore_pin_for_test(struct blockstore *store, uint64_t bytenr, bool pin)
{
	if (pin) {
		g_array_append_val(store->pinned_slots, bytenr);
	} else {
		g_assert(store->pinned_slots->len &&
			 g_array_index(store->pinned_slots, uint64_t, store->pinned_slots->len - 1) == bytenr);
		g_array_set_size(store->pinned_slots, store->pinned_slots->len - 1);
	}
	store->held = held_of(store); /* BS8 */
}

G_DEFINE_QUARK(cowsim-model-error-quark, model_error)
