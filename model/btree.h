/*
 * model/btree.h - the copy-on-write B-tree, as btrfs's ctree.c runs it.
 *
 * A tree is a root pointer to a tree_block. Leaves hold items, internal nodes
 * hold (key, child) pointers. Items have a key and a byte size but no payload
 * bytes: only the few fields the model reads (timestamps, extent references)
 * are kept, beside the key or in the leaf's payload heap (struct btree_item
 * below, btree.c BT10).
 *
 *   leaf (nodesize bytes, as on disk)
 *   +--------+--------+--------+--     --+---------+---------+--------+
 *   | header | item 0 | item 1 |  free   | data 1  | data 0  |        |
 *   |  101   |   25   |   25   |  space  | size 1  | size 0  |        |
 *   +--------+--------+--------+--     --+---------+---------+--------+
 *   a leaf fits while 101 + sum(25 + size) <= nodesize
 *
 *   node:  | header 101 | key ptr 33 | key ptr 33 | ... |   (nodesize-101)/33 slots
 *
 * Invariants (btree_check names them):
 *  BT1 keys strictly increase within a block and across the whole tree;
 *  BT2 a parent's key for a child equals the child's first key;
 *  BT3 all leaves are at the same depth; a node at level L points at level L-1;
 *  BT4 leaf bytes never exceed nodesize - 101; node slots never exceed
 *     (nodesize - 101) / 33; only a root leaf may be empty, and a node holds
 *     at least one child. A node below the root may hold just one: a
 *     delete's descent merges a node under a quarter full only into a
 *     sibling that can take it all (balance_node, docs/model.md
 *     simplification 5), where btrfs's balance_level pulls pointers from
 *     the left so that no node but the root keeps one;
 *  BT5 a block's generation is at most its parent's (COW writes child first).
 *  BT18 tree->links counts the changes to the tree's links: its root pointer,
 *     and any node's child pointers or count. A path whose `links` equals
 *     its tree's (btree_lookup_kept() stamps it so after it found the path
 *     linked from the root) is still linked: every block on it hangs from
 *     the root slot by slot. btree_kept_path_check() checks it.
 *
 * Copy-on-write: every function that changes a tree takes the running
 * transaction, walks down from the root and makes each block on the path
 * writable with cow_block(): a block the transaction already wrote changes in
 * place (should_cow_block), any other is copied to a new address, its parent
 * is pointed at the copy, and the transaction's accounting is told
 * (txn->ops, transaction.h) so it can move references (btrfs:
 * update_ref_for_cow). The old block loses the path's reference.
 */
#ifndef COWSIM_MODEL_BTREE_H
#define COWSIM_MODEL_BTREE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <glib.h>

#include "constants.h"

struct transaction;
struct data_extent;

/* btrfs_disk_key, in CPU order; compared objectid, type, offset, then
 * snapshot. The snapshot id is always 0 in the btrfs design; the keyed
 * design (model/design_keyed.c) versions keys by it, as bcachefs's bpos does.
 * Packed to 21 bytes, so that an item's size and whiteout flag fill the rest
 * of its first 24 bytes and an item is 64 bytes, one cache line (btree_item
 * below). Every field keeps its natural alignment inside an item; never take
 * a field's address (it may be unaligned in other arrays), copy it out. */
struct __attribute__((packed)) btree_key {
	uint64_t objectid;
	uint64_t offset;
	uint32_t snapshot;
	uint8_t type;
};

/* Keys are built in btrfs's order, (objectid, type, offset) as print-tree
 * shows them, whatever the struct's layout; every field is named, so no key
 * is left half-initialized. BTRFS_KEY has snapshot id 0 (every key outside
 * the keyed design); BTREE_VERSIONED_KEY is the keyed design's. */
#define BTREE_VERSIONED_KEY(objectid_, type_, offset_, snapshot_)                              \
	((struct btree_key){ .objectid = (objectid_), .type = (type_), .offset = (offset_), \
			     .snapshot = (snapshot_) })
#define BTRFS_KEY(objectid_, type_, offset_) BTREE_VERSIONED_KEY(objectid_, type_, offset_, 0)
/* The first and the last key of any tree, snapshot ids included. */
#define BTREE_KEY_MIN BTREE_VERSIONED_KEY(0, 0, 0, 0)
#define BTREE_KEY_MAX BTREE_VERSIONED_KEY(UINT64_MAX, UINT8_MAX, UINT64_MAX, UINT32_MAX)

static inline int btree_key_compare(const struct btree_key *a, const struct btree_key *b)
{
	if (a->objectid != b->objectid)
		return a->objectid < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	if (a->snapshot != b->snapshot)
		return a->snapshot < b->snapshot ? -1 : 1;
	return 0;
}

/* The fields of an item the model reads, one struct per kind of item; which
 * one an item has follows from its key type (btree_payload_kind()). Times
 * are simulated nanoseconds since the epoch. */
struct item_inode {                       /* INODE_ITEM */
	int64_t atime, mtime, ctime;
	uint64_t size;                    /* i_size, bytes */
	uint32_t nlink;
	uint32_t mode;
};
struct item_dir {                         /* DIR_ITEM (a DIR_INDEX's is not kept) */
	uint64_t location;                /* inode number, or subvolume id */
	uint64_t index;                   /* the entry's DIR_INDEX offset */
	const char *name;                 /* interned by the filesystem, not owned */
	uint16_t name_len;
	uint8_t file_type;                /* BTRFS_FT_*: 1 file, 2 dir, 7 symlink */
	bool location_is_root;            /* the entry is a subvolume */
};
struct item_file_extent {                 /* EXTENT_DATA */
	struct data_extent *extent;       /* NULL for inline data */
	uint64_t num_bytes;               /* bytes of the file this item maps */
};

/* Every other item has at most one number: an INODE_REF's count of names, a
 * block group's used bytes, a keyed backref run's length (BT9) ... */
enum btree_payload_kind {
	BTREE_PAYLOAD_VALUE,              /* one uint64_t: btree_item_value() */
	BTREE_PAYLOAD_INODE,
	BTREE_PAYLOAD_DIR,
	BTREE_PAYLOAD_FILE_EXTENT,
	/* A DIR_INDEX: its entry (name, location, type) is its DIR_ITEM's, which
	 * the model finds by name; an insert's payload is dropped and no
	 * accessor reads one (issue 20: not repeating DIR_ITEM's payload). */
	BTREE_PAYLOAD_NONE,
};
static inline enum btree_payload_kind btree_payload_kind(uint8_t type)
{
	switch (type) {
	case BTRFS_INODE_ITEM_KEY:
		return BTREE_PAYLOAD_INODE;
	case BTRFS_DIR_ITEM_KEY:
		return BTREE_PAYLOAD_DIR;
	case BTRFS_DIR_INDEX_KEY:
		return BTREE_PAYLOAD_NONE;
	case BTRFS_EXTENT_DATA_KEY:
		return BTREE_PAYLOAD_FILE_EXTENT;
	default:
		return BTREE_PAYLOAD_VALUE;
	}
}

/* A payload as callers hand it to an insert: the member the key's type
 * names is stored, the rest must be zero. */
union item_payload {
	struct item_inode inode;
	struct item_dir dir;
	struct item_file_extent file_extent;
	struct {
		uint64_t count;           /* names held by an INODE_REF item */
	} ref;
	uint64_t value;                   /* anything else a tree needs one number for */
};

/*
 * An item's layout is btree.c's business: every other module reads and
 * writes an item's key, size, whiteout flag and payload through the
 * btree_item_*() accessors below, so the layout can change (issue 20: keys
 * in a packed array apart from the payloads) without touching them. The
 * compiler holds everyone to it: outside the btree module (btree.c,
 * btree_check.c, which define BTREE_ITEM_LAYOUT before including this
 * header) naming a field of struct btree_item is a deprecation warning, an
 * error under -Werror.
 *
 * An item is 32 bytes, two to a cache line: its key, size and whiteout
 * flag, and one word that is the payload itself when the payload is a
 * value, or points at it in its leaf's payload heap (btree.c, BT10), where
 * it takes its kind's size (inode 40, dir 32, file extent 16 bytes; a
 * DIR_INDEX keeps none):
 *
 *   0            8            16       20   21  22   24           32
 *   +------------+------------+--------+----+---+----+------------+
 *   | objectid   | offset     |snapshot|type|wo |size| value / at |
 *   +------------+------------+--------+----+---+----+------------+
 */
#ifdef BTREE_ITEM_LAYOUT
#define BTREE_ITEM_PRIVATE
#else
#define BTREE_ITEM_PRIVATE \
	__attribute__((deprecated("the item layout is btree.c's: use the btree_item_*() accessors")))
#endif
struct btree_item {
	struct btree_key key BTREE_ITEM_PRIVATE;
	bool whiteout BTREE_ITEM_PRIVATE;   /* keyed design: the key is deleted in this snapshot */
	uint16_t size BTREE_ITEM_PRIVATE;   /* item data bytes, excluding the 25-byte header; a
					     * leaf of 64 KiB holds at most 65 410 (BT4) */
	union {
		uint64_t value;             /* BTREE_PAYLOAD_VALUE: the payload */
		void *at;                   /* any other kind: the payload, in the leaf's heap */
	} payload BTREE_ITEM_PRIVATE;
};
_Static_assert(sizeof(struct btree_key) == 21, "a packed key is 21 bytes");
_Static_assert(sizeof(struct btree_item) == 32, "an item is half a cache line");

/* The accessors: the only code outside btree.c that knows the layout. A key
 * pointer is valid as long as the item pointer it came from. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline const struct btree_key *btree_item_key(const struct btree_item *item)
{
	return &item->key;
}
static inline uint32_t btree_item_size(const struct btree_item *item)
{
	return item->size;
}
/* Keyed design: the key is deleted in the item's snapshot. */
static inline bool btree_item_is_whiteout(const struct btree_item *item)
{
	return item->whiteout;
}
static inline void btree_item_set_whiteout(struct btree_item *item, bool whiteout)
{
	item->whiteout = whiteout;
}
/* The payload of an item of its kind (btree_payload_kind() of its key's
 * type; asked of another kind, the accessor stops the program). Pointers
 * are valid as long as the item pointer they came from. The _for_write
 * forms are for an item a writable lookup, insert or resize returned; an
 * inode's atime goes through btree_path_write_inode_atime() instead (see
 * the overlay). */
#define BTREE_ITEM_OF_KIND(item, kind) \
	(__builtin_expect(btree_payload_kind((item)->key.type) == (kind), 1) ? (void)0 : btree_item_wrong_kind(item, kind))
G_NORETURN void btree_item_wrong_kind(const struct btree_item *item, enum btree_payload_kind kind);

static inline const struct item_inode *btree_item_inode(const struct btree_item *item)
{
	BTREE_ITEM_OF_KIND(item, BTREE_PAYLOAD_INODE);
	return item->payload.at;
}
static inline struct item_inode *btree_item_inode_for_write(struct btree_item *item)
{
	BTREE_ITEM_OF_KIND(item, BTREE_PAYLOAD_INODE);
	return item->payload.at;
}
static inline const struct item_dir *btree_item_dir(const struct btree_item *item)
{
	BTREE_ITEM_OF_KIND(item, BTREE_PAYLOAD_DIR);
	return item->payload.at;
}
static inline struct item_dir *btree_item_dir_for_write(struct btree_item *item)
{
	BTREE_ITEM_OF_KIND(item, BTREE_PAYLOAD_DIR);
	return item->payload.at;
}
static inline const struct item_file_extent *btree_item_file_extent(const struct btree_item *item)
{
	BTREE_ITEM_OF_KIND(item, BTREE_PAYLOAD_FILE_EXTENT);
	return item->payload.at;
}
static inline struct item_file_extent *btree_item_file_extent_for_write(struct btree_item *item)
{
	BTREE_ITEM_OF_KIND(item, BTREE_PAYLOAD_FILE_EXTENT);
	return item->payload.at;
}
static inline uint64_t btree_item_value(const struct btree_item *item)
{
	BTREE_ITEM_OF_KIND(item, BTREE_PAYLOAD_VALUE);
	return item->payload.value;
}
static inline uint64_t *btree_item_value_for_write(struct btree_item *item)
{
	BTREE_ITEM_OF_KIND(item, BTREE_PAYLOAD_VALUE);
	return &item->payload.value;
}
/* The whole payload, as an insert takes it (the keyed design's copy-up). */
union item_payload btree_item_payload_copy(const struct btree_item *item);
#pragma GCC diagnostic pop

struct btree_child {
	struct btree_key key;
	struct tree_block *block;
};

/* Flags on a tree block. */
enum {
	/* refs.c: the children of this block hold SHARED backrefs keyed by its
	 * address instead of TREE_BLOCK_REF by owner (BTRFS_BLOCK_FLAG_FULL_BACKREF). */
	TREE_BLOCK_FULL_BACKREF = 1u << 0,
	/* The block's refcount reached zero; it waits for the commit. */
	TREE_BLOCK_FREED = 1u << 1,
	/* refs.c has queued this block's extent-tree record for the commit. */
	TREE_BLOCK_REFS_DIRTY = 1u << 2,
	/* btree.c BT9: the leaf's array stores runs of keyed backrefs as counted
	 * entries; read its items through btree_leaf_item() or a cursor. */
	TREE_BLOCK_RUNS = 1u << 3,
	/* btree.c: the leaf is on txn->run_leaves, to be compacted. */
	TREE_BLOCK_RUNS_LISTED = 1u << 4,
	/* btree_count_holders() has counted the block's holders (teardown only). */
	TREE_BLOCK_HOLDERS_COUNTED = 1u << 5,
	/* btree.c BT12: the block is on txn->written, for the commit to trim. */
	TREE_BLOCK_WRITTEN_LISTED = 1u << 6,
	/* btree.c BT14: the leaf's atime overlay is in the block (overlay_here). */
	TREE_BLOCK_OVERLAY_HERE = 1u << 7,
};

/* Room in a tree block for a small atime overlay (btree.c BT14): the marked
 * form of a leaf of at most 64 items. Its layout is btree.c's. */
struct atime_overlay_in_block {
	uint64_t words[3];
};

/*
 * A tree block is 72 bytes, an 80-byte malloc chunk (56 bytes in a 64-byte
 * chunk before issue 20's round 13c, 72 and 80 before round 12c): the 10^7
 * scenario holds 1.2 x 10^7 of them, most of them the leaves a grep over 11
 * trees copies, and each of those has a marked atime overlay of 24 bytes,
 * which the block holds (BT14 in btree.c) instead of a 32-byte chunk of its
 * own: 80 bytes a copied leaf instead of 96.
 *
 *   0        8       12      16          20            24   26    28           32
 *   +--------+-------+-------+-----------+-------------+----+-----+------------+
 *   | bytenr | owner | gen   | tree_refs | shared_refs | nr | cap | leaf_bytes |
 *   +--------+-------+-------+-----------+-------------+----+-----+------------+
 *   32      33      34      35           36                 40        48                    72
 *   +-------+-------+-------+------------+------------------+---------+---------------------+
 *   | level | flags | cause | refs_cause | extent_item_refs | items   | atimes or the       |
 *   |       |       |       |            |                  |         | overlay itself      |
 *   +-------+-------+-------+------------+------------------+---------+---------------------+
 *
 * BT11 a block's owner is a tree id packed into 32 bits (btree_owner_pack()
 *      below): ids below 2^31 as they are, the side table's atime trees
 *      (COWSIM_ATIME_TREE_BASE + subvolume id) and btrfs's ids just below
 *      2^64 (the data reloc tree's -9 ...) each in a range of their own; the
 *      values between those ranges are never an owner. Its generation is a
 *      transaction id below 2^32 (a simulation commits far fewer). Its item
 *      count and capacity fit 16 bits: a 64 KiB leaf holds at most 2 617
 *      items (BT4), a node 1 982 pointers.
 */
struct tree_block {
	uint64_t bytenr;                  /* logical address */
	uint32_t packed_owner;            /* the tree id that allocated it, packed (BT11): tree_block_owner() */
	uint32_t generation;              /* transaction that wrote it */
	uint32_t tree_refs;               /* TREE_BLOCK_REF backrefs: parents and roots owned by a tree */
	uint32_t shared_refs;             /* SHARED_BLOCK_REF backrefs: FULL_BACKREF parents */
	uint16_t nritems;
	uint16_t capacity;                /* slots allocated in items/children */
	uint32_t leaf_bytes;              /* leaf: sum of 25 + size over items */
	uint8_t level;                    /* 0 = leaf */
	uint8_t flags;
	uint8_t cause;                    /* enum space_cause: the kind of op that allocated it */
	uint8_t refs_cause;               /* refs.c: the cause its pending extent-tree record is charged to */
	uint32_t extent_item_refs;        /* refs.c: refs in the extent item as last written */
	union {
		struct btree_item *items;   /* level 0: shared with copies, see below */
		struct btree_child *children; /* level > 0 */
	};
	union {
		struct atime_overlay *atimes; /* level 0: the atime overlay, or NULL ... */
		struct atime_overlay_in_block overlay_here; /* ... or, TREE_BLOCK_OVERLAY_HERE, itself */
	};
};
_Static_assert(sizeof(struct tree_block) == 72, "a tree block is an 80-byte malloc chunk");

/* A leaf's atime overlay: its three forms and their layouts are btree.c's
 * (BT7); only the marked form's first atime and bitmap are read here, by the
 * access's inline read (btree_path_inode_atime_at_once()). */
enum overlay_form { OVERLAY_SHARED, OVERLAY_PLAIN, OVERLAY_MARKED };
struct atime_overlay {
	uint16_t count;                   /* inode items; marked: the leaf's items, one bit each */
	uint16_t values;                  /* distinct atimes in value[] (plain: count) */
	uint16_t capacity;                /* room in value[] (plain: count; marked: 1) */
	uint8_t form;                     /* enum overlay_form */
	uint8_t slot_bytes;               /* 1 when every slot is below 256 (the items do not move), else 2 */
	int64_t value[];                  /* then the marked form's bitmap, or count slots and
					   * (shared) count uint8_t indexes */
};

/* Does the leaf have an atime overlay (btree.c BT7), in the block or apart? */
static inline bool btree_leaf_has_overlay(const struct tree_block *leaf)
{
	return (leaf->flags & TREE_BLOCK_OVERLAY_HERE) || leaf->atimes;
}

/* BT11's packing. Tree ids in [0, 2^31) are themselves; the side table's
 * atime trees [2^48, 2^48 + 2^30) go to [2^31, 2^31 + 2^30); btrfs's ids in
 * [2^64 - 2^16, 2^64) (BTRFS_DATA_RELOC_TREE_OBJECTID is -9) to the top
 * 2^16 values. A tree id outside them is a programming error: btree_init()
 * stops the program rather than let two trees share an owner. */
#define BTREE_OWNER_ATIME_PACKED (1u << 31)
#define BTREE_OWNER_HIGH_IDS (1u << 16)
static inline bool btree_owner_packs(uint64_t id)
{
	return id < BTREE_OWNER_ATIME_PACKED ||
	       (id >= COWSIM_ATIME_TREE_BASE && id - COWSIM_ATIME_TREE_BASE < (1u << 30)) ||
	       id >= (uint64_t)0 - BTREE_OWNER_HIGH_IDS;
}
static inline uint32_t btree_owner_pack(uint64_t id)
{
	if (id < BTREE_OWNER_ATIME_PACKED)
		return (uint32_t)id;
	if (id >= (uint64_t)0 - BTREE_OWNER_HIGH_IDS)
		return (uint32_t)id;      /* the low 16 bits, above 2^32 - 2^16 */
	return BTREE_OWNER_ATIME_PACKED + (uint32_t)(id - COWSIM_ATIME_TREE_BASE);
}
/* Is `owner` the image of a tree id (BT11)? */
static inline bool btree_owner_is_packed(uint32_t owner)
{
	return owner < BTREE_OWNER_ATIME_PACKED + (1u << 30) || owner >= (uint32_t)0 - BTREE_OWNER_HIGH_IDS;
}
static inline uint64_t btree_owner_unpack(uint32_t owner)
{
	if (owner < BTREE_OWNER_ATIME_PACKED)
		return owner;
	if (owner >= (uint32_t)0 - BTREE_OWNER_HIGH_IDS)
		return (uint64_t)0 - ((uint32_t)0 - owner);
	return COWSIM_ATIME_TREE_BASE + (owner - BTREE_OWNER_ATIME_PACKED);
}
static inline uint64_t tree_block_owner(const struct tree_block *block)
{
	return btree_owner_unpack(block->packed_owner);
}

/*
 * Simulator memory, not modeled space: a leaf and its copies share one item
 * array until one of them changes an item, so a block the model copies costs
 * the simulator a tree_block, not a second array. An atime write to a leaf
 * whose array is shared (btree_path_write_inode_atime) does not unshare it:
 * it goes to the leaf's atime overlay, which, while it exists, holds the
 * atime of every inode item in the leaf (10 bytes each). Any other change
 * first gives the leaf an array of its own and folds the overlay into it.
 * Only btree_path_inode_atime() knows where an inode's atime is; an item's
 * btree_item_inode()->atime read through an item pointer may be stale.
 */


static inline uint32_t tree_block_refs(const struct tree_block *block)
{
	return block->tree_refs + block->shared_refs;
}

/* One tree: a root pointer and the facts btrfs keeps in its root item. */
struct btree {
	uint64_t id;                      /* tree objectid: 5, 256+, 2 for extent ... */
	struct tree_block *root;
	uint64_t last_snapshot;           /* transaction of the last snapshot of this tree */
	uint64_t links;                   /* BT18: changes to its links since btree_init(), from 1 */
	bool root_dirty;                  /* root item must be rewritten at commit */
};

/* A position found by btree_search: the leaf and the slot where the key is or
 * would be inserted. Valid until the tree changes. */
struct btree_path {
	struct tree_block *nodes[8];
	uint32_t slots[8];
	uint8_t levels;                   /* nodes[0] is the leaf, nodes[levels-1] the root */
	uint8_t hop;                      /* a kept path's guess (btree_lookup_kept): how many slots
					   * on in its leaf the next key is; compared, never trusted */
	uint64_t links;                   /* BT18: the tree's links when btree_lookup_kept() last
					   * found it linked; 0: never (a kept path starts so) */
};

/* An empty tree with one empty leaf owned by `id`. */
void btree_init(struct btree *tree, struct transaction *txn, uint64_t id);

/* Read-only lookup: true and *path at the item when the key exists, false
 * and *path at the insertion point otherwise. No block is copied. */
bool btree_lookup(const struct btree *tree, const struct btree_key *key, struct btree_path *path);

/*
 * Item `slot` of a leaf. A leaf the model has not changed since the last
 * compaction may store a run of keyed backrefs ((bytenr, type, 1..k), no
 * payload) as one counted entry (TREE_BLOCK_RUNS, btree.c BT9); a member of
 * a run is then made up in a buffer that the next call reuses, and must not
 * be written. A leaf on a path made writable never stores runs.
 */
struct btree_item *btree_leaf_run_item(const struct tree_block *leaf, uint32_t slot);
static inline const struct btree_item *btree_leaf_item(const struct tree_block *leaf, uint32_t slot)
{
	if (__builtin_expect(leaf->flags & TREE_BLOCK_RUNS, 0))
		return btree_leaf_run_item(leaf, slot);
	return &leaf->items[slot];
}
static inline struct btree_item *btree_path_item(const struct btree_path *path)
{
	const struct tree_block *leaf = path->nodes[0];
	if (__builtin_expect(leaf->flags & TREE_BLOCK_RUNS, 0))
		return btree_leaf_run_item(leaf, path->slots[0]);
	return &leaf->items[path->slots[0]];
}

/* Does any item of `leaf` map a data extent (an EXTENT_DATA item whose
 * item_file_extent.extent is set)? Answered from a count its payload heap
 * keeps (btree.c BT13), without reading the items. */
bool btree_leaf_maps_data(const struct tree_block *leaf);

/* How many items of `leaf` map a data extent: the same count (BT13), for a
 * walk of the items that may stop at the last of them. */
uint32_t btree_leaf_data_refs(const struct tree_block *leaf);

/* A leaf's items in order, runs included:
 *   struct btree_leaf_cursor c;
 *   btree_leaf_cursor_init(&c, leaf, 0);
 *   for (const struct btree_item *item; (item = btree_leaf_cursor_next(&c));) ... */
struct btree_leaf_cursor {
	const struct tree_block *leaf;
	uint32_t entry, member;           /* the next item: member `member` of entry `entry` */
	struct btree_item made_up;        /* a run's member */
};
void btree_leaf_cursor_init(struct btree_leaf_cursor *cursor, const struct tree_block *leaf, uint32_t slot);
const struct btree_item *btree_leaf_cursor_next_run(struct btree_leaf_cursor *cursor);
/* A leaf without runs is its item array: the next item in place, without
 * a call (1.3 M calls of the seed run's refs.c leaf scans, round 14c). */
static inline const struct btree_item *btree_leaf_cursor_next(struct btree_leaf_cursor *cursor)
{
	const struct tree_block *leaf = cursor->leaf;
	if (__builtin_expect(leaf->flags & TREE_BLOCK_RUNS, 0))
		return btree_leaf_cursor_next_run(cursor);
	return cursor->entry < leaf->nritems ? &leaf->items[cursor->entry++] : NULL;
}

/* Stores the runs of the leaves the transaction changed since the last
 * compaction as counted entries (BT9), when there are more than `keep` of
 * them (a bound on the leaves stored item by item; the commit passes 0).
 * Only between operations: it moves the items of extent-tree leaves, so no
 * path or item pointer into them survives it. */
void btree_compact_runs(struct transaction *txn, uint32_t keep);
/* BT9 for one leaf: its runs expand to exactly its items. */
bool btree_check_runs(const struct tree_block *leaf, uint32_t nodesize, GError **error);
/* BT10, BT13 and BT15 for one leaf: its items' payloads lie in its array's
 * heap, apart, and add up to the heap's live bytes; the heap counts its
 * mapped data extents; its holes are on its hole lists, apart from the
 * payloads, and are the rest of its used bytes. */
bool btree_check_payloads(const struct tree_block *leaf, GError **error);
/* BT7 for one leaf: its overlay's slots are its inode items (the marked
 * form: a bit per item, set only at inode items). */
bool btree_check_overlay(const struct tree_block *leaf, GError **error);

/* btree_lookup() again, near an earlier answer: *path holds what a lookup or
 * visit of this tree left there, and the tree has not changed since (or
 * path->levels is 0: no earlier answer). Same answer and path as
 * btree_lookup(), but the search starts at the lowest block of the old path
 * that covers the key, so a key in the same leaf costs one leaf search. */
bool btree_lookup_near(const struct btree *tree, const struct btree_key *key, struct btree_path *path);
/* The same for a key above the item at *path, which it first looks for
 * among the next few items of the path's leaf (heads in address order). */
bool btree_lookup_ahead(const struct btree *tree, const struct btree_key *key, struct btree_path *path);

/* Is *path, found at some earlier time, still a path of the tree: from the
 * current root, each block the child its parent holds at the path's slot?
 * Then btree_lookup_near() may start from it whatever else changed since
 * (items in its leaf, other leaves, copies the path took part in). */
bool btree_path_is_current(const struct btree *tree, const struct btree_path *path);
/* btree_lookup() from a path kept across changes to the tree (a read
 * cursor): near it (btree_lookup_near) when it is still linked, else from
 * the root. Linked: stamped with the tree's links (BT18), else
 * btree_path_is_current(), after which it is stamped. A kept path starts
 * with links 0 (or levels 0) and hop 0. Its item `hop` slots on is
 * compared with the key first: lookups in key order land the same number
 * of items on each time (a grep's reads: a file's three items). */
bool btree_lookup_kept(const struct btree *tree, const struct btree_key *key, struct btree_path *path);
/* btree_lookup_kept()'s hop, inline and without a call: the item when the
 * path is stamped linked (BT18) and its item `hop` slots on (in a leaf
 * without runs) has the key, the path moved there; else NULL and the path
 * as it was, for btree_lookup_kept() to answer. Most of a grep's reads end
 * here (docs/performance.md round 18a). */
static inline const struct btree_item *btree_lookup_kept_hop(const struct btree *tree, const struct btree_key *key,
							     struct btree_path *path)
{
	const struct tree_block *leaf = path->nodes[0];
	uint32_t guess = path->slots[0] + path->hop;
	if (path->links != tree->links || !path->levels || !path->hop || guess >= leaf->nritems ||
	    (leaf->flags & TREE_BLOCK_RUNS) || btree_key_compare(btree_item_key(&leaf->items[guess]), key))
		return NULL;
	path->slots[0] = guess;
	return &leaf->items[guess];
}
/* Is a kept path still linked (BT18)? Stamped with the tree's links, it is;
 * else btree_path_is_current() says, and stamps it when it is. */
bool btree_path_kept_linked(const struct btree *tree, struct btree_path *path);
/* BT18 for a kept path: stamped with its tree's links, it is linked. */
bool btree_kept_path_check(const struct btree *tree, const struct btree_path *path, GError **error);
/* A tree's root pointer set from outside btree.c (a snapshot's clone, a
 * dropped tree), counted in its links (BT18). */
void btree_set_root(struct btree *tree, struct tree_block *root);

/* Moves *path to slot 0 of the next leaf; false (path unchanged) at the last. */
bool btree_path_next_leaf(struct btree_path *path);

/* btree_lookup_for_write() of the item that a lookup just found at *path
 * (exact match, no change to the tree since): COWs the same blocks in the
 * same order without searching again; *path then leads to the copies. */
struct btree_item *btree_path_for_write(struct btree *tree, struct transaction *txn, struct btree_path *path);

/* The atime of the inode item at `slot` of a leaf, or at *path. */
int64_t btree_leaf_inode_atime(const struct tree_block *leaf, uint32_t slot);
int64_t btree_path_inode_atime(const struct btree_path *path);

/*
 * btree_path_inode_atime() where it needs no call, for every access: the
 * atime of `inode`, an inode item, when it is the item at *path in a leaf
 * without runs, with no overlay or a marked one (a grep's). False for the
 * rest (another item, an overlay of another form, a leaf with runs), which
 * btree_path_inode_atime() answers. Inline and call-free so the access that
 * asks keeps no frame (docs/performance.md round 20b, "What is left").
 */
static inline bool btree_path_inode_atime_at_once(const struct btree_path *path, const struct btree_item *inode,
						  int64_t *atime)
{
	const struct tree_block *leaf = path->nodes[0];
	uint32_t slot = path->slots[0];
	if (__builtin_expect((leaf->flags & TREE_BLOCK_RUNS) || &leaf->items[slot] != inode, 0))
		return false;
	const struct atime_overlay *overlay = leaf->flags & TREE_BLOCK_OVERLAY_HERE
						      ? (const struct atime_overlay *)&leaf->overlay_here
						      : leaf->atimes;
	if (overlay) {
		if (__builtin_expect(overlay->form != OVERLAY_MARKED, 0))
			return false;
		const uint64_t *marks = (const uint64_t *)&overlay->value[1];
		if (marks[slot / 64] >> (slot % 64) & 1) {
			*atime = overlay->value[0];
			return true;
		}
	}
	*atime = btree_item_inode(inode)->atime;
	return true;
}

/* Set it: btree_path_for_write(), but the leaf keeps sharing its item array
 * with the block it was copied from (the overlay above takes the atime). */
void btree_path_write_inode_atime(struct btree *tree, struct transaction *txn, struct btree_path *path,
				  int64_t atime);

/* The item with the largest key <= key, or NULL. Read-only. */
const struct btree_item *btree_lookup_le(const struct btree *tree, const struct btree_key *key);

/* Writable lookup: COWs the path to the item and returns it for change in
 * place (same size), or NULL when the key is absent (the path is still
 * COWed, as btrfs_search_slot with cow=1 does). */
struct btree_item *btree_lookup_for_write(struct btree *tree, struct transaction *txn,
					  const struct btree_key *key);

/* Insert an item; the key must not exist. Splits or pushes leaves as
 * btrfs's split_leaf does. Returns the stored item, valid until the next
 * change to the tree. */
struct btree_item *btree_insert_item(struct btree *tree, struct transaction *txn,
				     const struct btree_key *key, uint32_t size,
				     const union item_payload *payload);

/* Inserts `count` items with sorted keys that no item of the tree sorts
 * between, together (btrfs_insert_empty_items with a batch): they need
 * room in one leaf. payloads may be NULL. */
void btree_insert_items(struct btree *tree, struct transaction *txn, const struct btree_key *keys,
			const uint32_t *sizes, const union item_payload *payloads, uint32_t count);
/* btree_insert_item() near *path: a path a lookup in this tree left with no
 * change since, or levels 0. The tree afterwards is the one
 * btree_insert_item() leaves; *path is the path to the new item. */
struct btree_item *btree_insert_item_near(struct btree *tree, struct transaction *txn, const struct btree_key *key,
					  uint32_t size, const union item_payload *payload, struct btree_path *path);
/* The same for keys[0] (of sizes[0], no payload); then, while keys[1],
 * keys[2] ... would each be looked up one slot on in its leaf and fit there
 * with no split, those too, without the lookups (a batch's new blocks are
 * mostly neighbours, docs/performance.md round 14b). Returns how many were
 * inserted (at least 1); *path is left as that many btree_insert_item_near()
 * calls leave it, at the last. */
uint32_t btree_insert_items_near(struct btree *tree, struct transaction *txn, const struct btree_key *keys,
				 const uint32_t *sizes, uint32_t count, struct btree_path *path);

/* Change an existing item's size in place (btrfs_extend_item /
 * btrfs_truncate_item); grows by splitting the leaf when it must. */
struct btree_item *btree_resize_item(struct btree *tree, struct transaction *txn,
				     const struct btree_key *key, uint32_t new_size);
/* The same for the item a lookup just found at *path (no change since),
 * without looking it up again. *path is left what a lookup of the key
 * finds afterwards, as btree_path_for_write() and btree_insert_item_near()
 * leave it. */
struct btree_item *btree_resize_item_at(struct btree *tree, struct transaction *txn, const struct btree_key *key,
					uint32_t new_size, struct btree_path *path);

/* After a write of the item at *path (btree_resize_item_at(),
 * btree_path_for_write() or an insert left it there): while keys[0],
 * keys[1] ... (sorted, above that item) are items further on in the same
 * leaf and each resize to sizes[n] needs no split and no push, they are
 * resized there without their lookups (a snapshot's references to
 * neighbouring data extents grow their items one after another,
 * docs/performance.md round 15c). Returns how many (0 when keys[0] is not
 * such an item); *path is left as that many btree_lookup_ahead() and
 * btree_resize_item_at() calls leave it, at the last. */
uint32_t btree_resize_items_after(struct btree *tree, struct transaction *txn, const struct btree_key *keys,
				  const uint32_t *sizes, uint32_t count, struct btree_path *path);

/* Delete an existing item; rebalances a leaf that falls under a third full
 * and frees empty blocks. Returns false when the key is absent. */
bool btree_delete_item(struct btree *tree, struct transaction *txn, const struct btree_key *key);
/* The same from a path a lookup in this tree left (btree_lookup_ahead()
 * takes it from there), as btree_insert_item_near(): the delete copies the
 * path the lookup found when btree_search(SEARCH_DELETE) would only copy it
 * (refs.c deletes the record of a freed block this way, with the cursor of
 * the batch's records). Leaves *path what a lookup of the deleted key
 * finds afterwards (the slot of the next item), or levels 0 when the
 * delete searched from the root or emptied or thinned a leaf. */
bool btree_delete_item_near(struct btree *tree, struct transaction *txn, const struct btree_key *key,
			    struct btree_path *path);
/* The same for keys[0]; then, while keys[1], keys[2] ... are the next items
 * of its leaf and their deletes would rebalance nothing, those too, with one
 * move of the items after them (a batch's freed blocks are mostly such runs,
 * docs/performance.md round 14b). Returns how many were deleted (0: keys[0]
 * is absent); *path is left as that many btree_delete_item_near() calls
 * leave it. */
uint32_t btree_delete_items_near(struct btree *tree, struct transaction *txn, const struct btree_key *keys,
				 uint32_t count, struct btree_path *path);

/* Iterate items with keys in [first, last]; the callback must not change the
 * tree. Returns the number of items visited; stops early when cb returns false. */
typedef bool (*btree_visit_fn)(const struct btree_item *item, void *opaque);
uint64_t btree_visit_range(const struct btree *tree, const struct btree_key *first,
			   const struct btree_key *last, btree_visit_fn cb, void *opaque);

/* btree_visit_range() a run of items at a time: cb gets each array of
 * consecutive items in [first, last] that one leaf holds (a leaf with runs:
 * one made-up item a call), in key order, until it returns false; the count
 * is of the items handed over. A caller that reads many items makes no call
 * per item (a directory table's fill, docs/performance.md round 14c). */
typedef bool (*btree_visit_items_fn)(const struct btree_item *items, uint32_t count, void *opaque);
uint64_t btree_visit_range_items(const struct btree *tree, const struct btree_key *first,
				 const struct btree_key *last, btree_visit_items_fn cb, void *opaque);

/* btree_visit_range() starting near *path (as btree_lookup_near), leaving
 * *path at the last item the callback saw or the first key past `last`. */
uint64_t btree_visit_range_near(const struct btree *tree, const struct btree_key *first,
				const struct btree_key *last, btree_visit_fn cb, void *opaque,
				struct btree_path *path);

/* A copy of `buf` at a new address, owned by `tree_id` and written by the
 * running transaction, with the first reference the accounting gives a new
 * block (txn->ops->block_allocated). The children's references are the
 * caller's business: cow_block() moves them through txn->ops->block_cowed, a
 * snapshot adds one to each. */
struct tree_block *btree_copy_block(struct transaction *txn, uint64_t tree_id, const struct tree_block *buf);

/* Adds `block` and every block below it to `seen` (a set of struct
 * tree_block *), each once: a block shared by several parents or trees is
 * entered once. For freeing every tree at the end. Cannot fail. */
void btree_collect_blocks(struct tree_block *block, GHashTable *seen);

/* Freeing every tree at the end without a set of every block (which costs
 * 12-24 bytes per block, 190-290 MB at the end of the 10^7 scenario): call
 * btree_count_holders() once for each pointer that holds a block from
 * outside the trees (a root, a stopped drop's children), then
 * btree_release_held() once for each of the same pointers; a block is freed
 * when its last holder lets it go, its children first. It overwrites
 * tree_refs: nothing reads the model after. */
void btree_count_holders(struct tree_block *block);
void btree_release_held(struct tree_block *block);

/* At a commit, before blockstore_commit(): the blocks the transaction wrote
 * never change again (the next change copies them, should_cow_block), so the
 * slots ensure_capacity() kept for their growth are given back (the blocks
 * txn->written lists, btree.c BT12). */
void btree_commit_blocks(struct transaction *txn);
/* After blockstore_commit() released the blocks the commit freed: a listed
 * leaf that is now its array's only user folds its overlay. */
void btree_commit_finish(struct transaction *txn);
/* BT12 over `live` (as refs_check() fills it): the written list holds each
 * block once, flagged, every flagged live block, and every live node the
 * running transaction wrote. */
bool btree_check_written(const struct transaction *txn, GHashTable *live, GError **error);

/* The sharing invariants BT6-BT8 (btree.c) over every tree_block in memory:
 * `live` (a set, as refs_check() fills it) and `unreleased`, the freed
 * blocks the commit has not released yet (blockstore_unreleased_blocks()). */
bool btree_check_item_sharing(GHashTable *live, const GPtrArray *unreleased, GError **error);

/* A block's last reference went (blockstore_free_block()): nothing reads its
 * items again, so a leaf that shares its item array with its copy (the COW
 * that freed it) gives the array to the copy, which then changes it in place
 * instead of copying it (BT8, btree.c). */
void btree_block_freed(struct tree_block *block);

/* Frees a block's arrays and the block (blockstore_release_block()). */
void btree_release_block(struct tree_block *block);

/* Block capacity rules, in bytes/slots. */
uint32_t btree_leaf_capacity(uint32_t nodesize);
uint32_t btree_node_capacity(uint32_t nodesize);

/* BT1-BT5 for one tree. Fills *error with the first violation in the form
 * "corrupt <what>: tree N block B, <reason>". */
bool btree_check(const struct btree *tree, uint32_t nodesize, GError **error);
/* Print the tree as btrfs print-tree does, for failing tests. */
void btree_dump(const struct btree *tree, FILE *out);

/* Counts for reports and tests. */
struct btree_stats {
	uint64_t leaves, nodes, items, leaf_bytes;
	uint8_t height;
};
void btree_stats(const struct btree *tree, struct btree_stats *stats);

#endif
