/*
 * model/blockstore.h - tree blocks, their addresses, and the space they take.
 *
 * The block store is the model's allocator and its "btrfs fi df". It hands
 * out tree blocks of nodesize bytes at logical addresses inside metadata
 * chunks, data extents inside data chunks, and keeps the totals that btrfs
 * reports. It does not know what a block holds (model/btree.h does) nor who
 * references it (model/refs.h counts that); it only counts bytes.
 *
 * Contract:
 *  - A block freed in transaction T keeps its address pinned until T commits
 *    (blockstore_commit); only then can the address be handed out again. This
 *    is btrfs's pinned-extent rule: the committed tree may still point at it.
 *  - Space for an operation is reserved up front (blockstore_reserve); when no
 *    chunk can be had the reservation fails with -ENOSPC and nothing changed.
 *  - Allocation after a successful reservation does not fail; if the estimate
 *    was too small it may eat into the global reserve, and past that the store
 *    records an overcommit (btrfs would abort the transaction).
 *
 * Units: bytes unless a name says otherwise.
 */
#ifndef COWSIM_MODEL_BLOCKSTORE_H
#define COWSIM_MODEL_BLOCKSTORE_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

struct tree_block;

/* Which report line a tree's blocks count under. */
enum tree_category {
	TREE_CATEGORY_FS,         /* subvolume and snapshot trees */
	TREE_CATEGORY_EXTENT,
	TREE_CATEGORY_CSUM,
	TREE_CATEGORY_ROOT,
	TREE_CATEGORY_FREE_SPACE,
	TREE_CATEGORY_OTHER,      /* dev, uuid, data reloc, side tables */
	TREE_CATEGORY_COUNT
};

enum tree_category tree_category_of(uint64_t tree_id);
const char *tree_category_name(enum tree_category category);

/*
 * Why a tree block exists: the kind of operation that allocated it
 * (docs/model.md, "Attribution"). The store charges every block to the cause
 * in force when it was allocated (blockstore_set_cause), for as long as it
 * lives: a copy made by an atime update stays an atime block until it is
 * itself copied or freed. The callers decide what an operation is; the store
 * only keeps the books.
 */
enum space_cause {
	SPACE_CAUSE_MKFS,         /* the trees mkfs creates */
	SPACE_CAUSE_WRITE,        /* namespace and data changes */
	SPACE_CAUSE_ATIME,        /* access-time updates of reads */
	SPACE_CAUSE_SNAPSHOT,     /* snapshot creation */
	SPACE_CAUSE_DELETE,       /* snapshot deletion */
	SPACE_CAUSE_COUNT
};
/* "mkfs", "write", "atime", "snapshot", "delete": for messages, not formats. */
const char *space_cause_name(enum space_cause cause);

struct blockstore_config {
	uint32_t nodesize;        /* 4096..65536, a power of two */
	uint64_t device_size;     /* bytes of the one device */
	bool metadata_dup;        /* profile DUP: every metadata byte costs two raw */
};

struct space_report {
	uint64_t metadata_used;   /* logical bytes of live tree blocks (fi df "used") */
	uint64_t metadata_total;  /* logical bytes of metadata chunks */
	uint64_t metadata_raw;    /* device bytes of metadata_used (2x with DUP) */
	uint64_t data_used;
	uint64_t data_total;
	uint64_t system_used;
	uint64_t global_reserve;
	uint64_t device_allocated; /* raw bytes of all chunks */
	uint64_t tree_bytes[TREE_CATEGORY_COUNT];
	uint64_t cause_bytes[SPACE_CAUSE_COUNT]; /* live tree blocks by cause; they sum to metadata_used (BS4) */
};

struct blockstore;

/* Returns NULL and sets *error when the configuration is impossible (nodesize
 * not a power of two in range, a device too small for mkfs's chunks). */
struct blockstore *blockstore_new(const struct blockstore_config *config, GError **error);
void blockstore_free(struct blockstore *store);
typedef struct blockstore BlockStore;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(BlockStore, blockstore_free)

uint32_t blockstore_nodesize(const struct blockstore *store);

/* Reserve room for an operation that will change `items` items (btrfs's
 * calc_insert_metadata_size). 0, or -ENOSPC when neither free metadata nor a
 * new chunk can cover it. The reservation lasts until blockstore_release(). */
int blockstore_reserve(struct blockstore *store, unsigned items);
/* Would kernel 6.18 grant start_transaction()'s reservation of `items` at
 * once, with `held` bytes reserved by queued work (the delayed-refs
 * reserve) besides what blockstore_reserve() counts? False: the reservation
 * waits on a ticket for the flusher (space-info.c __reserve_bytes). */
bool blockstore_reserve_fits(const struct blockstore *store, unsigned items, uint64_t held);
/* The common case of the two: when blockstore_reserve_fits(items, held) and
 * blockstore_reserve(items) needs no new chunk, reserves as it does and
 * returns true; otherwise changes nothing and returns false. */
bool blockstore_reserve_at_once(struct blockstore *store, unsigned items, uint64_t held);
/* The flusher's ALLOC_CHUNK_FORCE (space-info.c flush_space): a metadata chunk
 * whatever the metadata chunks still hold, sized from the device's largest
 * free hole. False when the device has no room for one. */
bool blockstore_force_metadata_chunk(struct blockstore *store);
/* should_alloc_chunk() (block-group.c) for an unforced metadata chunk
 * (the flusher's ALLOC_CHUNK state): the space used by live and pinned
 * blocks, plus 2 MiB, reaches 80 % of the metadata total. */
bool blockstore_metadata_wants_chunk(const struct blockstore *store);
/* blockstore_reserve(), falling back on the global reserve when that fails (unlink
 * and rmdir, as btrfs_start_transaction_fallback_global_rsv()). */
int blockstore_reserve_fallback(struct blockstore *store, unsigned items);
void blockstore_release(struct blockstore *store);

/* The cause the next allocations are charged to (SPACE_CAUSE_MKFS in a new
 * store); returns the one it replaces, so a caller can put it back. */
enum space_cause blockstore_set_cause(struct blockstore *store, enum space_cause cause);
enum space_cause blockstore_cause(const struct blockstore *store);
/* The cause that allocated and freed the most tree blocks in the running
 * transaction (the lowest on a tie; the current cause when none did): what
 * a commit charges the writes no single operation asked for (root items,
 * block-group items, the free-space and dev trees). */
enum space_cause blockstore_busiest_cause(const struct blockstore *store);

/* A new, empty tree block at a fresh address; cannot fail (see the contract).
 * The store owns the memory until blockstore_commit() after its free. */
struct tree_block *blockstore_alloc_block(struct blockstore *store, uint64_t owner,
					  uint8_t level, uint64_t generation);
/* The block's refcount reached zero: its bytes leave metadata_used now, its
 * address stays pinned until the commit. */
void blockstore_free_block(struct blockstore *store, struct tree_block *block);
/* The memory of a block no tree and no pinned list holds any more: used by
 * blockstore_commit() for freed blocks and at teardown for the blocks the
 * trees still reach (fs_free). */
void blockstore_release_block(struct tree_block *block);
/* The freed blocks the next commit will release (for checkers). */
const GPtrArray *blockstore_unreleased_blocks(const struct blockstore *store);

/* Room for `bytes` of data that writeback will allocate later (btrfs's
 * data space reservation at write()): 0 or -ENOSPC. */
int blockstore_reserve_data(struct blockstore *store, uint64_t bytes);
/* Gives back reserved room that no write will use (a write stopped early). */
void blockstore_unreserve_data(struct blockstore *store, uint64_t bytes);

/* A data extent: a run of sectors in a data chunk, `bytes` long where a free
 * run or a new chunk holds it whole, else the largest free run there is
 * (*allocated says how much; the caller asks again for the rest, as btrfs
 * splits an extent on a fragmented device). 0, or -ENOSPC when no sector
 * is free. */
int blockstore_alloc_data(struct blockstore *store, uint64_t bytes, uint64_t *bytenr, uint64_t *allocated);
void blockstore_free_data(struct blockstore *store, uint64_t bytenr, uint64_t bytes);

/* A chunk (block group) of the device, as the extent and free-space trees see it. */
struct chunk {
	uint64_t start;           /* logical address */
	uint64_t length;
	uint64_t used;
	bool data;
	bool changed;             /* used changed since the last commit */
	bool in_front_hole;       /* its raw stripes are in the hole mkfs left (BS6) */
};
const struct chunk *blockstore_chunks(const struct blockstore *store, unsigned *count);

/* Transaction end: pinned addresses become free, freed blocks are released. */
void blockstore_commit(struct blockstore *store);

void blockstore_report(const struct blockstore *store, struct space_report *report);
/* Room metadata can still grow into, in logical bytes, from a report: free
 * inside the metadata chunks (metadata_total - metadata_used - global_reserve,
 * as btrfs's space_info keeps the global reserve out of reach of ordinary
 * operations) plus the metadata chunks the device's unallocated raw bytes
 * can still hold (2 raw bytes per byte with DUP, `metadata_dup`; whole
 * chunks, as the store allocates them). The threshold atime policy and the
 * free_min column both read this. Cannot fail; 0 when nothing is left. */
uint64_t space_report_metadata_free(const struct space_report *report, uint64_t device_size, bool metadata_dup);
/* Bytes of blocks each tree category holds, kept by the store for the global
 * reserve and the report. */
uint64_t blockstore_live_blocks(const struct blockstore *store);
/* True once an allocation went past every reserve (btrfs: transaction abort). */
bool blockstore_overcommitted(const struct blockstore *store);
/* Count of metadata and data chunks the store allocated after mkfs. */
unsigned blockstore_chunk_count(const struct blockstore *store, bool data);

/* S-checks: bytes accounted equal the live blocks, by tree and by cause; live, pinned and free
 * addresses are disjoint; the chunks fit the device. `live` maps every reachable block (found by
 * walking the trees) to itself. Returns false and fills *error on corruption. */
bool blockstore_check(const struct blockstore *store, GHashTable *live, GError **error);
/* Tests: moves the kept overcommit off what BS7 says it is. */
void blockstore_skew_overcommit_for_test(struct blockstore *store, int64_t delta);
/* Tests: moves the kept bytes held off what BS8 says they are. */
void blockstore_skew_held_for_test(struct blockstore *store, int64_t delta);
/* Tests: moves the raw bytes allocated (BS3) by `delta`. */
void blockstore_skew_raw_allocated_for_test(struct blockstore *store, int64_t delta);
/* Tests: pins `bytenr` as a freed block's address is pinned (BS8's held
 * kept); !pin takes it, the last pinned, back. */
void blockstore_pin_for_test(struct blockstore *store, uint64_t bytenr, bool pin);

#endif
