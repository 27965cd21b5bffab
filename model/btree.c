/*
 * model/btree.c - search, insert, delete and rebalance with copy-on-write.
 *
 * This follows btrfs's kernel-shared/ctree.c closely, because the shape of
 * the tree (how full leaves are) decides how many blocks an atime sweep
 * unshares:
 *  - btree_search() is btrfs_search_slot() with cow=1: every block on the path
 *    is made writable top-down; an internal node within 3 slots of full is
 *    split (after trying to push into its siblings) before descending into it
 *    for an insert, and one under half full is rebalanced for a delete.
 *  - A leaf without room for an insert first pushes items into its right
 *    sibling, then its left one (push_leaf_right/left, both within the same
 *    parent), and only then splits by item count at mid = (nritems + 1) / 2,
 *    moving mid to the insertion slot when the new item would not fit, or
 *    starting an empty leaf when it is appended (split_leaf).
 *  - After a delete, a leaf under a third full is emptied into its siblings
 *    where they have room; an empty leaf is removed from its parent.
 * When a split changes the path the search simply starts again from the
 * root: the second walk finds every block already copied, so it costs no
 * extra copies, only time.
 *
 * Speed (docs/performance.md) without changing any answer: read-only
 * lookups near an earlier answer (btree_lookup_near) start from the lowest
 * block of the old path that covers the key; a write after a lookup
 * (btree_path_for_write) COWs the path the lookup found instead of searching
 * again. Each gives exactly the blocks and slots a descent from the root gives.
 *
 * Simplification (docs/model.md): internal nodes under a quarter full merge
 * into a sibling when they fit; btrfs's balance_level also moves pointers
 * between two half-empty nodes. Deletes are rare in the workloads cowsim
 * replays, and internal nodes are a few percent of the blocks.
 */
#define BTREE_ITEM_LAYOUT /* the btree module: knows the item layout */
#include "btree.h"

#include <inttypes.h>
#include <string.h>

#include "blockstore.h"
#include "constants.h"
#include "model_error.h"
#include "transaction.h"

static uint32_t nodesize_of(const struct transaction *txn)
{
	return blockstore_nodesize(txn->store);
}

uint32_t btree_leaf_capacity(uint32_t nodesize)
{
	return btrfs_leaf_data_size(nodesize);
}

uint32_t btree_node_capacity(uint32_t nodesize)
{
	return btrfs_nodeptrs_per_block(nodesize);
}

/* --- payloads by kind ------------------------------------------------- */

/* The bytes of the leaf's payload heap (BT10) an item's payload takes, by
 * key type (one load: the heap's loops ask it of every item): a value is
 * kept in its item. */
static const uint8_t heap_bytes_by_type[UINT8_MAX + 1] = {
	[BTRFS_INODE_ITEM_KEY] = sizeof(struct item_inode),
	[BTRFS_DIR_ITEM_KEY] = sizeof(struct item_dir),
	[BTRFS_EXTENT_DATA_KEY] = sizeof(struct item_file_extent),
};
_Static_assert(sizeof(struct item_inode) % 8 == 0 && sizeof(struct item_dir) % 8 == 0 &&
	       sizeof(struct item_file_extent) % 8 == 0, "payloads in the heap stay 8-aligned");

/* Is a union item_payload handed to an insert zero beyond its kind's bytes?
 * (A DIR_INDEX's is dropped whole; an inode's fills the union.) The words
 * each kind leaves unused are named: a loop over a table of the kinds'
 * sizes was 20 instructions an insert (docs/performance.md, round 20a). */
static inline uint64_t payload_word(const union item_payload *payload, unsigned k)
{
	uint64_t w;
	memcpy(&w, (const char *)payload + k * sizeof(w), sizeof(w));
	return w;
}

static inline bool payload_fits_kind(uint8_t type, const union item_payload *payload)
{
	_Static_assert(sizeof(*payload) == 5 * sizeof(uint64_t), "the payload is five words");
	_Static_assert(sizeof(struct item_inode) == sizeof(*payload), "an inode's payload fills the union");
	_Static_assert(sizeof(struct item_dir) == 4 * sizeof(uint64_t) &&
		       sizeof(struct item_file_extent) == 2 * sizeof(uint64_t), "the kinds' words");
	/* Only the words a kind leaves unused are read: a copy of all five
	 * was 6 instructions an insert. */
	switch (btree_payload_kind(type)) {
	case BTREE_PAYLOAD_VALUE:
		return !(payload_word(payload, 1) | payload_word(payload, 2) | payload_word(payload, 3) |
			 payload_word(payload, 4));
	case BTREE_PAYLOAD_DIR:
		return !payload_word(payload, 4);
	case BTREE_PAYLOAD_FILE_EXTENT:
		return !(payload_word(payload, 2) | payload_word(payload, 3) | payload_word(payload, 4));
	default: /* BTREE_PAYLOAD_INODE, BTREE_PAYLOAD_NONE */
		return true;
	}
}

/* Is the payload at `at` of an item of `type` a file extent that maps a data
 * extent (BT13)? */
static inline uint32_t payload_maps_data(uint8_t type, const void *at)
{
	return type == BTRFS_EXTENT_DATA_KEY && ((const struct item_file_extent *)at)->extent;
}

/* The bytes an item's payload takes in the heap: 0 for a value. */
static inline uint32_t heap_bytes_of(const struct btree_item *item)
{
	return heap_bytes_by_type[item->key.type];
}

/* A payload's bytes: memcpy of a constant size, which the compiler makes a
 * few moves (a call to memcpy costs more than the copy). */
static inline void copy_payload(void *to, const void *from, uint32_t bytes)
{
	switch (bytes) {
	case sizeof(struct item_inode):
		memcpy(to, from, sizeof(struct item_inode));
		break;
	case sizeof(struct item_dir):
		memcpy(to, from, sizeof(struct item_dir));
		break;
	default:
		memcpy(to, from, sizeof(struct item_file_extent));
		break;
	}
}
_Static_assert(sizeof(struct item_file_extent) == 16 && sizeof(struct item_dir) == 32 &&
	       sizeof(struct item_inode) == 40, "copy_payload knows three sizes");

void btree_item_wrong_kind(const struct btree_item *item, enum btree_payload_kind kind)
{
	g_error("btree: item (%" PRIu64 " %u %" PRIu64 ") has a payload of kind %d, not %d", item->key.objectid,
		item->key.type, item->key.offset, btree_payload_kind(item->key.type), kind);
}

/* An inode item's payload, for the btree module's own reads and writes. */
static struct item_inode *item_inode(const struct btree_item *item)
{
	return item->payload.at;
}

union item_payload btree_item_payload_copy(const struct btree_item *item)
{
	union item_payload payload;
	memset(&payload, 0, sizeof(payload));
	uint32_t bytes = heap_bytes_of(item);
	if (bytes)
		memcpy(&payload, item->payload.at, bytes);
	else if (btree_payload_kind(item->key.type) == BTREE_PAYLOAD_VALUE)
		payload.value = item->payload.value;
	return payload;
}

static inline uint32_t item_bytes(const struct btree_item *item)
{
	return BTRFS_ITEM_HEADER_SIZE + item->size;
}

static uint32_t leaf_free_space(const struct transaction *txn, const struct tree_block *leaf)
{
	return btree_leaf_capacity(nodesize_of(txn)) - leaf->leaf_bytes;
}

static uint32_t leaf_space_used(const struct tree_block *leaf, uint32_t start, uint32_t count)
{
	uint32_t bytes = 0;
	for (uint32_t i = start; i < start + count; i++)
		bytes += item_bytes(&leaf->items[i]);
	return bytes;
}

static const struct btree_key *block_first_key(const struct tree_block *block)
{
	return block->level ? &block->children[0].key : &block->items[0].key;
}

/* --- item arrays shared between a leaf and its copies (btree.h) ---------
 *
 *   leaf A (source)      leaf A' (copy, atime written)
 *   items ----+          items ----+    atimes -> [n v c | t0 t1 | s0 s1 ... | w0 w1 ...]
 *             v                    |
 *     [refs 2 | item 0 | item 1 | ...]
 *
 * BT6 refs counts the blocks whose items point into the array, released or
 *    not; only an array with refs 1 is changed, and only by its leaf.
 * BT7 only a leaf has an overlay, over an item array: one is made only
 *    while the array is shared (refs > 1) and lasts until the leaf's next
 *    change (leaf_make_private folds it) or the commit of a transaction
 *    that listed the leaf (btree_commit_finish, BT12). A leaf whose array
 *    became its own while it was not listed (the leaf it shared it with
 *    was freed: copied by a write to its own tree, a snapshot's, or
 *    dropped with its tree) keeps it across commits until its next change
 *    (the model's tests show such leaves after commits). That time limit
 *    is the history's, not one state's: a private leaf with an overlay is
 *    right as one a commit will fold and as one no commit listed. So
 *    btree_check_overlay checks what a state shows: a leaf's, over an
 *    array, of its form's shape. The
 *    slots never move, because moving items needs a private array. In the
 *    marked form (a new overlay's) it holds the one atime t written since
 *    it was made and a bitmap of the slots that have it, n bits for the n
 *    items of the leaf, set only at inode items; any other inode's atime is
 *    its item's, in the array no leaf changes while it is shared (BT6). In
 *    the shared and plain forms it holds for every inode item of the leaf
 *    its slot s_i, slots increasing, and the index w_i of its atime among
 *    the overlay's v distinct values t_0..t_v-1 (room for c), or the atime
 *    itself. A leaf's atimes are mostly one or two: the old atime until each
 *    inode is read, then the read's (the kernel stamps atimes with a coarse
 *    clock). A grep's copy of a leaf of 11 inodes costs 24 bytes in the
 *    marked form (in the block, BT14, where a 32-byte malloc chunk before),
 *    46 in the shared (a 64-byte chunk), 88 in the plain.
 * BT8 a freed leaf (TREE_BLOCK_FREED) that shared its array holds no array
 *    and no overlay: it gave its reference up when it was freed
 *    (btree_block_freed), so the copy that replaced it does not copy the
 *    array on its first change, and the old version waiting for the commit
 *    costs the simulator a tree_block, not a second array. Nothing reads a
 *    freed block's items: it is in no tree (BS2). A state shows it as: no
 *    freed leaf shares an array, and none without one has an overlay
 *    (btree_check_item_sharing).
 */
struct leaf_items {
	uint32_t refs;
	uint32_t entries;                 /* BT9: entries in the array while the leaf has TREE_BLOCK_RUNS */
	struct payload_heap *heap;        /* BT10: the items' payloads that are not values, or NULL */
	struct btree_item item[];
};

/*
 * The payload heap: an item array's payloads that are not values, each at
 * its kind's size, handed out from the front; the array owns it and its
 * items point into it (btree.h draws an item):
 *
 *   leaf_items                                   payload_heap
 *   +------+---------+------+--------+--------+  +------+------+----------+-------+-----+------+------+
 *   | refs | entries | heap | item 0 | item 1 |  | used | live | capacity | inode | dir | hole | free |
 *   +------+---------+--+---+-----+--+-----+--+  +------+------+----------+-------+-----+------+------+
 *                       |         |        +--------------------------------------^
 *                       |         +-------------------------------------^
 *                       +----------> (the heap)
 *
 * BT10 an item whose payload is not a value points into its array's heap,
 *      8-aligned, within the first `used` bytes; no two items' payloads
 *      overlap; `live` is the sum of their sizes (used - live are holes that
 *      deletes and moves to other leaves left, given back when the heap is
 *      rebuilt); a heap belongs to one array (a copy of a leaf shares the
 *      array, heap and all, BT6).
 * BT13 `data_refs` is the number of its payloads that are file extents with
 *      a data extent (item_file_extent.extent set: the items refs.c counts,
 *      RF2). A leaf with none, or no heap, maps no data extent, and
 *      btree_leaf_maps_data() says so without reading its items: a copy of
 *      a leaf of inline files (the bench's, most of the seed's) changed
 *      no data reference, yet refs.c walked all its items to find that out
 *      (27 % of a bench read's simulated D1 misses, docs/performance.md
 *      round 13a).
 *
 * BT15 the heap's holes are on its hole lists, one list per payload size
 *      (16, 32, 40 bytes): each hole of its list's size, 8-aligned, within
 *      the first `used` words, apart from each other and from the items'
 *      payloads, and together used - live words. A hole's first two bytes
 *      hold the next hole's word + 1 (0 ends the list):
 *
 *        bytes  | inode | hole 40 -+ | dir | hole 40 -> 0 | extent | free |
 *                           ^      +-------------^
 *                           +-- holes[2] (the 40-byte list) points here first
 *
 *      The next payload of a size goes into a hole of that size before the
 *      free room, and a payload freed at the end of the used bytes gives
 *      them back instead of becoming a hole. The leaves beside a growing
 *      one trade items with it (pushes, splits): the holes the items left
 *      behind were each a rebuild of the heap (a new heap, the payloads
 *      copied) at the leaf's next insert, 40 000 per 100 000 creates
 *      (docs/performance.md, round 14a); the new items are mostly of the
 *      same sizes as the ones that left.
 *
 * Payloads are whole 8-byte words, so the heap counts words: 16 bits hold
 * a heap of 512 KiB, and the densest leaf (a side table's atime items, 40
 * bytes of payload for 37 of the leaf's) of the largest nodesize needs 70.
 * An inode item costs the simulator 32 + 40 bytes, a directory entry
 * 32 + 32, a file extent 32 + 16, any other item 32 (64 each before).
 */
#define HEAP_HOLE_SIZES 3
struct payload_heap {
	uint16_t used;                    /* words handed out, from the front */
	uint16_t live;                    /* of those, words an item points at */
	uint16_t capacity;                /* words */
	uint16_t data_refs;               /* BT13: file extents with a data extent */
	uint16_t holes[HEAP_HOLE_SIZES];  /* BT15: the first hole of each size, its word + 1, or 0 */
	uint16_t unused;
	uint64_t bytes[];                 /* the words */
};
_Static_assert(sizeof(struct payload_heap) == 16, "the heap's header is two words");

/*
 * An overlay comes in three forms (BT7 above). Marked, the form a new
 * overlay takes: the one atime written since, and a bitmap of the n slots
 * of the leaf, a bit set where the inode item has that atime,
 *   [n 1 1 marked | t | bits of slots 0..63 | 64..127 | ...]
 * A second atime turns it into the shared form, with every inode's atime as
 * the marked form gives it. Shared: each inode's atime is an index into a
 * few distinct values,
 *   [count values capacity shared | t_0 .. t_capacity-1 | s_0 .. s_count-1 | w_0 .. w_count-1]
 * with 8-bit indexes (at most 255 values). Plain, once the distinct values
 * would cost as much as one atime each (8 capacity >= 7 count): each inode
 * its own,
 *   [count count count plain | t_0 .. t_count-1 | s_0 .. s_count-1]
 */
/* struct atime_overlay: btree.h (the inline atime read reads the marked form). */

static void *overlay_slots(const struct atime_overlay *overlay)
{
	return (void *)&overlay->value[overlay->capacity];
}

static uint32_t overlay_slot(const struct atime_overlay *overlay, uint32_t i)
{
	const void *slots = overlay_slots(overlay);
	return overlay->slot_bytes == 1 ? ((const uint8_t *)slots)[i] : ((const uint16_t *)slots)[i];
}

static void overlay_set_slot(struct atime_overlay *overlay, uint32_t i, uint32_t slot)
{
	void *slots = overlay_slots(overlay);
	if (overlay->slot_bytes == 1)
		((uint8_t *)slots)[i] = (uint8_t)slot;
	else
		((uint16_t *)slots)[i] = (uint16_t)slot;
}

static uint8_t *overlay_which(const struct atime_overlay *overlay)
{
	return (uint8_t *)overlay_slots(overlay) + overlay->count * overlay->slot_bytes;
}

static size_t overlay_size(uint32_t count, uint32_t capacity, enum overlay_form form, uint32_t slot_bytes)
{
	if (form == OVERLAY_MARKED)
		return sizeof(struct atime_overlay) + sizeof(int64_t) + (count + 63) / 64 * sizeof(uint64_t);
	return sizeof(struct atime_overlay) + capacity * sizeof(int64_t) + count * slot_bytes +
	       (form == OVERLAY_PLAIN ? 0 : count * sizeof(uint8_t));
}

static size_t overlay_bytes(const struct atime_overlay *overlay)
{
	return overlay_size(overlay->count, overlay->capacity, overlay->form, overlay->slot_bytes);
}

/* The marked form's bitmap, and whether slot `slot`'s bit is set. */
static uint64_t *overlay_marks(const struct atime_overlay *overlay)
{
	return (uint64_t *)&overlay->value[1];
}

static bool overlay_marked(const struct atime_overlay *overlay, uint32_t slot)
{
	return overlay_marks(overlay)[slot / 64] >> (slot % 64) & 1;
}

/*
 * BT14 an overlay in the block (TREE_BLOCK_OVERLAY_HERE) is a leaf's, in the
 *      marked form, and fits the block's room (a leaf of at most 64 items):
 *
 *        tree_block ... | items | n 1 1 marked | t | bits of slots 0..63 |
 *                               +---- overlay_here, 24 bytes -----------+
 *
 *      Any other overlay is a malloc chunk of its own that `atimes` points
 *      at. A grep's copy of a leaf of 36 items costs an 80-byte chunk, not
 *      a 64-byte block and a 32-byte overlay; a block without an overlay
 *      costs 16 bytes more, a few percent of the blocks a grep leaves.
 */
_Static_assert(sizeof(struct atime_overlay) + 2 * sizeof(int64_t) == sizeof(struct atime_overlay_in_block),
	       "the block has room for the marked form of a leaf of 64 items");

/* The leaf's overlay, wherever it is, or NULL. */
static struct atime_overlay *leaf_overlay(const struct tree_block *leaf)
{
	if (leaf->flags & TREE_BLOCK_OVERLAY_HERE)
		return (struct atime_overlay *)&leaf->overlay_here;
	return leaf->atimes;
}

static void leaf_drop_overlay(struct tree_block *leaf)
{
	if (leaf->flags & TREE_BLOCK_OVERLAY_HERE)
		leaf->flags &= ~TREE_BLOCK_OVERLAY_HERE;
	else
		g_free(leaf->atimes);
	memset(&leaf->overlay_here, 0, sizeof(leaf->overlay_here));
}

/* The leaf's overlay becomes `overlay`, a malloc chunk of its own. */
static void leaf_set_overlay_apart(struct tree_block *leaf, struct atime_overlay *overlay)
{
	leaf_drop_overlay(leaf);
	leaf->atimes = overlay;
}

/* A marked overlay for `leaf`, no slot marked yet: in the block when it
 * fits (BT14). */
static struct atime_overlay *leaf_new_marked_overlay(struct tree_block *leaf)
{
	size_t bytes = overlay_size(leaf->nritems, 1, OVERLAY_MARKED, 1);
	struct atime_overlay *overlay;
	if (bytes <= sizeof(leaf->overlay_here)) {
		leaf->flags |= TREE_BLOCK_OVERLAY_HERE;
		overlay = (struct atime_overlay *)&leaf->overlay_here;
		memset(overlay, 0, sizeof(leaf->overlay_here));
	} else {
		overlay = leaf->atimes = g_malloc0(bytes);
	}
	*overlay = (struct atime_overlay){ .count = leaf->nritems, .capacity = 1, .form = OVERLAY_MARKED,
					   .slot_bytes = 1 };
	return overlay;
}

/* Slot `slot` of a marked overlay gets `atime`: false, and nothing changed,
 * when the overlay holds another atime for some other slot (then it must
 * become the shared form). */
static bool overlay_mark(struct atime_overlay *overlay, uint32_t slot, int64_t atime)
{
	uint64_t *marks = overlay_marks(overlay);
	if (overlay->values && overlay->value[0] != atime) {
		for (uint32_t w = 0; w < (overlay->count + 63u) / 64; w++)
			if (marks[w] & ~(w == slot / 64 ? 1ull << (slot % 64) : 0))
				return false;
	}
	overlay->value[0] = atime;
	overlay->values = 1;
	marks[slot / 64] |= 1ull << (slot % 64);
	return true;
}

/* Is the shared form with `capacity` values no smaller than the plain one,
 * or beyond its 8-bit indexes? */
static bool overlay_plain_pays(uint32_t count, uint32_t capacity)
{
	return capacity > UINT8_MAX || 8 * capacity >= 7 * count;
}

/* The atime of the overlay's i-th inode. */
static int64_t overlay_atime(const struct atime_overlay *overlay, uint32_t i)
{
	return overlay->form == OVERLAY_PLAIN ? overlay->value[i] : overlay->value[overlay_which(overlay)[i]];
}

/* The index of `atime` among the shared form's values, or values when absent. */
static uint32_t overlay_value_index(const struct atime_overlay *overlay, int64_t atime)
{
	uint32_t v = 0;
	while (v < overlay->values && overlay->value[v] != atime)
		v++;
	return v;
}

/* Drop the values no inode uses any more (the indexes follow). */
static void overlay_forget_unused_values(struct atime_overlay *overlay)
{
	uint8_t *which = overlay_which(overlay);
	g_autofree uint8_t *renumber = g_new(uint8_t, overlay->values);
	g_autofree bool *used = g_new0(bool, overlay->values);
	for (uint32_t i = 0; i < overlay->count; i++)
		used[which[i]] = true;
	uint32_t kept = 0;
	for (uint32_t v = 0; v < overlay->values; v++) {
		if (!used[v])
			continue;
		overlay->value[kept] = overlay->value[v];
		renumber[v] = (uint8_t)kept++;
	}
	for (uint32_t i = 0; i < overlay->count; i++)
		which[i] = renumber[which[i]];
	overlay->values = (uint16_t)kept;
}

/* A new overlay in the plain form with the shared one's atimes. */
static struct atime_overlay *overlay_to_plain(struct atime_overlay *shared)
{
	uint32_t count = shared->count;
	struct atime_overlay *plain = g_malloc(overlay_size(count, count, OVERLAY_PLAIN, shared->slot_bytes));
	*plain = (struct atime_overlay){ .count = (uint16_t)count, .values = (uint16_t)count,
					 .capacity = (uint16_t)count, .form = OVERLAY_PLAIN,
					 .slot_bytes = shared->slot_bytes };
	for (uint32_t i = 0; i < count; i++)
		plain->value[i] = overlay_atime(shared, i);
	memcpy(overlay_slots(plain), overlay_slots(shared), count * shared->slot_bytes);
	g_free(shared);
	return plain;
}

/* The shared form with room for `capacity` values: a new allocation (a
 * shrink or a grow in place would leave the heap holes the next overlay
 * does not fit). */
static struct atime_overlay *overlay_regrow(struct atime_overlay *old, uint32_t capacity)
{
	struct atime_overlay *overlay = g_malloc(overlay_size(old->count, capacity, OVERLAY_SHARED, old->slot_bytes));
	*overlay = *old;
	overlay->capacity = (uint16_t)capacity;
	memcpy(overlay->value, old->value, old->values * sizeof(int64_t));
	memcpy(overlay_slots(overlay), overlay_slots(old), old->count * (old->slot_bytes + sizeof(uint8_t)));
	g_free(old);
	return overlay;
}

/* Inode i of the overlay gets `atime`; the overlay may be reallocated. */
static void overlay_set_atime(struct atime_overlay **overlayp, uint32_t i, int64_t atime)
{
	struct atime_overlay *o = *overlayp;
	if (o->form == OVERLAY_PLAIN) {
		o->value[i] = atime;
		return;
	}
	uint8_t *which = overlay_which(o);
	uint32_t v = overlay_value_index(o, atime);
	if (v == o->values) {
		/* A value only this inode used is rewritten where it is. */
		uint32_t users = 0;
		for (uint32_t j = 0; j < o->count && users < 2; j++)
			users += which[j] == which[i];
		if (users == 1) {
			o->value[which[i]] = atime;
			return;
		}
		if (o->values == o->capacity)
			overlay_forget_unused_values(o);
		if (o->values == o->capacity) {
			uint32_t capacity = MIN(2u * o->capacity, (uint32_t)o->count);
			if (overlay_plain_pays(o->count, capacity)) {
				*overlayp = o = overlay_to_plain(o);
				o->value[i] = atime;
				return;
			}
			*overlayp = o = overlay_regrow(o, capacity);
			which = overlay_which(o);
		}
		o->value[o->values] = atime;
		v = o->values++;
	}
	which[i] = (uint8_t)v;
}

/* The overlay entry of an inode item's slot (BT7: there is one). */
static uint32_t overlay_index(const struct atime_overlay *overlay, uint32_t slot)
{
	uint32_t low = 0, high = overlay->count;
	while (low < high) {
		uint32_t mid = low + (high - low) / 2;
		if (overlay_slot(overlay, mid) < slot)
			low = mid + 1;
		else
			high = mid;
	}
	g_assert(low < overlay->count && overlay_slot(overlay, low) == slot);
	return low;
}

/* Slot i's atime in a leaf whose overlay is marked, or that has none. */
static int64_t marked_or_item_atime(const struct tree_block *leaf, uint32_t i)
{
	const struct atime_overlay *marked = leaf_overlay(leaf);
	if (marked && overlay_marked(marked, i))
		return marked->value[0];
	return item_inode(&leaf->items[i])->atime;
}

/* The leaf's inode atimes (its marked overlay's where it has one) in the
 * shared or plain form, with room for one more value (the write that
 * needs the form brings it). The distinct values are counted first, so
 * that the overlay is allocated once, at its size. */
static struct atime_overlay *overlay_of_leaf(const struct tree_block *leaf)
{
	uint32_t count = 0, distinct = 0;
	int64_t seen[8];
	for (uint32_t i = 0; i < leaf->nritems; i++) {
		if (leaf->items[i].key.type != BTRFS_INODE_ITEM_KEY)
			continue;
		count++;
		int64_t atime = marked_or_item_atime(leaf, i);
		uint32_t v = 0;
		while (v < MIN(distinct, G_N_ELEMENTS(seen)) && seen[v] != atime)
			v++;
		if (v == distinct && distinct++ < G_N_ELEMENTS(seen))
			seen[v] = atime;
	}
	bool plain = distinct > G_N_ELEMENTS(seen) || overlay_plain_pays(count, distinct + 1);
	enum overlay_form form = plain ? OVERLAY_PLAIN : OVERLAY_SHARED;
	uint32_t capacity = plain ? count : distinct + 1;
	uint32_t slot_bytes = leaf->nritems <= UINT8_MAX + 1u ? 1 : 2;
	struct atime_overlay *overlay = g_malloc(overlay_size(count, capacity, form, slot_bytes));
	*overlay = (struct atime_overlay){ .count = (uint16_t)count, .capacity = (uint16_t)capacity,
					   .form = form, .values = (uint16_t)(plain ? count : 0),
					   .slot_bytes = (uint8_t)slot_bytes };
	uint8_t *which = plain ? NULL : overlay_which(overlay);
	for (uint32_t i = 0, n = 0; i < leaf->nritems; i++) {
		if (leaf->items[i].key.type != BTRFS_INODE_ITEM_KEY)
			continue;
		int64_t atime = marked_or_item_atime(leaf, i);
		overlay_set_slot(overlay, n, i);
		if (plain) {
			overlay->value[n++] = atime;
			continue;
		}
		uint32_t v = overlay_value_index(overlay, atime);
		if (v == overlay->values)
			overlay->value[overlay->values++] = atime;
		which[n++] = (uint8_t)v;
	}
	return overlay;
}

static struct leaf_items *leaf_items_of(const struct tree_block *leaf)
{
	return (struct leaf_items *)((char *)leaf->items - offsetof(struct leaf_items, item));
}

static bool leaf_items_shared(const struct tree_block *leaf)
{
	return leaf->items && leaf_items_of(leaf)->refs > 1;
}

/* Resize the leaf's private array (or give it its first one). */
static void leaf_items_resize(struct tree_block *leaf, uint32_t capacity)
{
	struct leaf_items *array = leaf->items ? leaf_items_of(leaf) : NULL;
	g_assert(capacity <= UINT16_MAX); /* BT11 */
	array = g_realloc(array, sizeof(*array) + (size_t)capacity * sizeof(struct btree_item));
	if (!leaf->items) {
		array->refs = 1;
		array->entries = 0;
		array->heap = NULL;
	}
	leaf->items = array->item;
	leaf->capacity = capacity;
}

static void leaf_items_free(struct leaf_items *array)
{
	g_free(array->heap);
	g_free(array);
}

static void leaf_items_unref(struct tree_block *leaf)
{
	if (leaf->items && --leaf_items_of(leaf)->refs == 0)
		leaf_items_free(leaf_items_of(leaf));
	leaf->items = NULL;
	leaf->flags &= ~TREE_BLOCK_RUNS;
	leaf_drop_overlay(leaf);
}

/* --- the payload heap (BT10) --------------------------------------------- */

#define HEAP_WORD sizeof(uint64_t)

/* The heap's counts in bytes. */
static inline uint32_t heap_used(const struct payload_heap *heap)
{
	return heap->used * HEAP_WORD;
}
static inline uint32_t heap_live(const struct payload_heap *heap)
{
	return heap->live * HEAP_WORD;
}
static inline uint32_t heap_capacity(const struct payload_heap *heap)
{
	return heap->capacity * HEAP_WORD;
}

/* Words holding `bytes`; a heap of them must fit its 16-bit counts. */
static uint16_t heap_words(uint32_t bytes)
{
	uint32_t words = (bytes + HEAP_WORD - 1) / HEAP_WORD;
	g_assert(words <= UINT16_MAX);
	return (uint16_t)words;
}

static size_t heap_size(uint16_t words)
{
	return sizeof(struct payload_heap) + words * HEAP_WORD;
}

/* The hole list of payloads of `bytes` bytes (16, 32, 40: BT15). */
static inline unsigned hole_list(uint32_t bytes)
{
	return (bytes - 16) / 12;
}
_Static_assert((sizeof(struct item_file_extent) - 16) / 12 == 0 && (sizeof(struct item_dir) - 16) / 12 == 1 &&
	       (sizeof(struct item_inode) - 16) / 12 == 2 && HEAP_HOLE_SIZES == 3, "one hole list per payload size");

/* Can the heap take a payload of `bytes` without growing? */
static inline bool heap_has_room(const struct payload_heap *heap, uint32_t bytes)
{
	return heap->holes[hole_list(bytes)] || heap_used(heap) + bytes <= heap_capacity(heap);
}

/* Room for `bytes` and their growth: a sixteenth. The slack of the heaps
 * of the leaves a transaction is writing sets the peak RSS (cowsim bench
 * --sizes 1000000: a quarter and 64 bytes 554.8 MiB, an eighth and 32
 * 528.6, a sixteenth and 16 505.9), for 2 % more instructions per create
 * than a quarter (more reallocs). */
static uint32_t heap_room_for(uint32_t bytes)
{
	return bytes + bytes / 16 + 16;
}

/*
 * A new heap for the first `count` items of `array`, their payloads packed
 * in slot order wherever they are now (this array's heap, or the one it
 * shares with copies, or another leaf's while items move), with `capacity`
 * bytes. Returns the array's old heap, for the caller to free if the array
 * owned it.
 */
static struct payload_heap *heap_rebuild(struct leaf_items *array, uint32_t count, uint32_t capacity)
{
	struct payload_heap *old = array->heap, *heap = NULL;
	if (capacity) {
		uint16_t words = heap_words(capacity);
		heap = g_malloc(heap_size(words));
		*heap = (struct payload_heap){ .capacity = words };
		char *at = (char *)heap->bytes;
		for (uint32_t i = 0; i < count; i++) {
			struct btree_item *item = &array->item[i];
			uint32_t bytes = heap_bytes_of(item);
			if (!bytes)
				continue;
			copy_payload(at, item->payload.at, bytes);
			item->payload.at = at;
			heap->data_refs += payload_maps_data(item->key.type, at);
			at += bytes;
		}
		heap->live = heap->used = (uint16_t)((at - (char *)heap->bytes) / HEAP_WORD);
		g_assert(heap->used <= words);
	}
	array->heap = heap;
	return old;
}

/* The array's own heap with `capacity` bytes and the same payloads: moved
 * whole by realloc when it has no holes (the items are repointed by their
 * offsets), rebuilt without the holes otherwise. */
static void heap_resize(struct leaf_items *array, uint32_t count, uint32_t capacity)
{
	struct payload_heap *heap = array->heap;
	if (!heap || heap->used != heap->live || !capacity) {
		g_free(heap_rebuild(array, count, capacity));
		return;
	}
	/* The items' pointers are moved as numbers (payload.value): once the
	 * old heap is freed, they are no pointers to follow. */
	uint64_t old_bytes = (uintptr_t)heap->bytes;
	uint16_t words = heap_words(capacity);
	heap = g_realloc(heap, heap_size(words));
	heap->capacity = words;
	array->heap = heap;
	uint64_t new_bytes = (uintptr_t)heap->bytes;
	if (new_bytes == old_bytes)
		return;
	for (uint32_t i = 0; i < count; i++)
		if (heap_bytes_of(&array->item[i]))
			array->item[i].payload.value = array->item[i].payload.value - old_bytes + new_bytes;
}

/* The private leaf's heap, grown to `bytes` more at its end (holes given
 * back) when it has not that room. */
static void heap_reserve_end(struct tree_block *leaf, uint32_t bytes)
{
	struct leaf_items *array = leaf_items_of(leaf);
	const struct payload_heap *heap = array->heap;
	if (heap && heap_used(heap) + bytes <= heap_capacity(heap))
		return;
	heap_resize(array, leaf->nritems, heap_room_for((heap ? heap_live(heap) : 0) + bytes));
}

/* Room for one payload of `bytes` in the private leaf's heap: a hole of its
 * size or the end's. */
static void heap_reserve(struct tree_block *leaf, uint32_t bytes)
{
	const struct payload_heap *heap = leaf_items_of(leaf)->heap;
	if (!heap || !heap_has_room(heap, bytes))
		heap_reserve_end(leaf, bytes);
}

/* Where the next payload of `bytes` goes in a heap with room for it: the
 * first hole of its size (BT15), else the end. */
static inline void *heap_take(struct payload_heap *heap, uint32_t bytes)
{
	uint16_t *hole = &heap->holes[hole_list(bytes)];
	void *at;
	if (*hole) {
		at = &heap->bytes[*hole - 1];
		memcpy(hole, at, sizeof(*hole)); /* the next hole */
	} else {
		at = &heap->bytes[heap->used];
		heap->used += bytes / HEAP_WORD;
	}
	heap->live += bytes / HEAP_WORD;
	return at;
}

/* `bytes` of the private leaf's heap, reserved before, holding a copy of
 * the payload at `from` (zeros when NULL) of an item of `type`. */
static void *heap_put(struct tree_block *leaf, uint8_t type, const void *from, uint32_t bytes)
{
	struct payload_heap *heap = leaf_items_of(leaf)->heap;
	void *at = heap_take(heap, bytes);
	if (from)
		copy_payload(at, from, bytes);
	else
		memset(at, 0, bytes);
	heap->data_refs += payload_maps_data(type, at); /* BT13 */
	return at;
}

/* The `bytes` at `at` are no payload's any more: the end's again when they
 * are last, else a hole on its list (BT15). live is the caller's. */
static inline void heap_free_bytes(struct payload_heap *heap, void *at, uint32_t bytes)
{
	uint16_t word = (uint16_t)((uint64_t *)at - heap->bytes), words = (uint16_t)(bytes / HEAP_WORD);
	if (word + words == heap->used) {
		heap->used = word;
		return;
	}
	uint16_t *hole = &heap->holes[hole_list(bytes)];
	memcpy(at, hole, sizeof(*hole));
	*hole = (uint16_t)(word + 1);
}

/* A leaf that will not change again (btree_commit_blocks) gives back its
 * heap's holes and room. */
static void heap_trim(struct tree_block *leaf)
{
	struct leaf_items *array = leaf_items_of(leaf);
	const struct payload_heap *heap = array->heap;
	if (heap && heap->capacity > heap->live)
		heap_resize(array, (leaf->flags & TREE_BLOCK_RUNS) ? array->entries : leaf->nritems, heap_live(heap));
}

/* The item no longer uses its payload's bytes (it is deleted or moved). */
static void heap_forget(struct tree_block *leaf, const struct btree_item *item)
{
	uint32_t bytes = heap_bytes_of(item);
	if (!bytes)
		return;
	struct payload_heap *heap = leaf_items_of(leaf)->heap;
	heap->live -= bytes / HEAP_WORD;
	heap->data_refs -= payload_maps_data(item->key.type, item->payload.at); /* BT13 */
	heap_free_bytes(heap, item->payload.at, bytes);
}

uint32_t btree_leaf_data_refs(const struct tree_block *leaf)
{
	const struct payload_heap *heap = !leaf->level && leaf->items ? leaf_items_of(leaf)->heap : NULL;
	return heap ? heap->data_refs : 0;
}

bool btree_leaf_maps_data(const struct tree_block *leaf)
{
	return btree_leaf_data_refs(leaf) != 0;
}


static void leaf_fold_atimes(struct tree_block *leaf)
{
	const struct atime_overlay *overlay = leaf_overlay(leaf);
	if (overlay->form == OVERLAY_MARKED) {
		for (uint32_t i = 0; i < overlay->count; i++)
			if (overlay_marked(overlay, i))
				item_inode(&leaf->items[i])->atime = overlay->value[0];
	} else {
		for (uint32_t i = 0; i < overlay->count; i++)
			item_inode(&leaf->items[overlay_slot(overlay, i)])->atime = overlay_atime(overlay, i);
	}
	leaf_drop_overlay(leaf);
}

/* Before any change to a leaf's items: an array of its own (BT6), with the
 * overlay folded in (BT7). */
static void leaf_expand_runs(struct tree_block *leaf);

static void __attribute__((noinline)) leaf_make_private_now(struct tree_block *leaf)
{
	if (leaf->flags & TREE_BLOCK_RUNS)
		leaf_expand_runs(leaf);
	if (leaf_items_shared(leaf)) {
		struct leaf_items *shared = leaf_items_of(leaf);
		shared->refs--;
		leaf->items = NULL;
		leaf_items_resize(leaf, MAX(leaf->nritems, 1u));
		memcpy(leaf->items, shared->item, leaf->nritems * sizeof(struct btree_item));
		/* The payloads are copied too, the holes left behind. */
		uint32_t live = shared->heap ? heap_live(shared->heap) : 0;
		heap_rebuild(leaf_items_of(leaf), leaf->nritems, live);
	}
	if (btree_leaf_has_overlay(leaf))
		leaf_fold_atimes(leaf);
}

/* Most calls find the leaf private already (its path was made writable):
 * three tests inline. */
static inline void leaf_make_private(struct tree_block *leaf)
{
	if ((leaf->flags & (TREE_BLOCK_RUNS | TREE_BLOCK_OVERLAY_HERE)) || leaf->atimes || leaf_items_shared(leaf))
		leaf_make_private_now(leaf);
}

/* Slots for `slots` items and their growth. A quarter: leaves hold at most a
 * few hundred items, and the slack of doubling would cost the simulator a
 * third of its memory. */
static uint32_t with_room_to_grow(uint32_t slots)
{
	return slots + slots / 4 + 4;
}

/* The block's items or children, writable and with room for `slots`. */
static void grow_capacity(struct tree_block *block, uint32_t slots);

static inline void ensure_capacity(struct tree_block *block, uint32_t slots)
{
	if (!block->level)
		leaf_make_private(block);
	if (slots > block->capacity)
		grow_capacity(block, slots);
}

static void grow_capacity(struct tree_block *block, uint32_t slots)
{
	uint32_t capacity = MIN(MAX(slots, with_room_to_grow(block->capacity)), (uint32_t)UINT16_MAX);
	g_assert(slots <= capacity); /* BT11 */
	if (!block->level) {
		leaf_items_resize(block, capacity);
		return;
	}
	block->children = g_realloc(block->children, capacity * sizeof(struct btree_child));
	block->capacity = capacity;
}

/* --- counted runs of keyed backrefs (BT9) ------------------------------
 *
 * Past BTRFS_MAX_EXTENT_ITEM_SIZE's inline refs every further backref of an
 * extent is an item of its own, (bytenr, EXTENT_DATA_REF_KEY, 1..k) with no
 * payload (refs.c). The modeled leaf holds k items of 53 bytes; a leaf the
 * model is not changing stores them as one entry that counts them:
 *
 *   items (nritems 6)   (x 168 s) (x 178 1) (x 178 2) (x 178 3) (x 178 4) (y 169 0)
 *   stored (entries 3)  (x 168 s) (x 178 1)*4                            (y 169 0)
 *
 * Likewise the METADATA_ITEMs of blocks at consecutive addresses, (a,
 * 169, level), (a + nodesize, 169, level) ...: a grep's copies of leaves
 * are allocated one after the other, and their extent items are 11 x 10^6
 * of the 10^7 scenario's items.
 *
 * BT9 a leaf with TREE_BLOCK_RUNS has an array of `entries` entries, no
 *     overlay, and at least one run; an entry whose type is a keyed
 *     backref and whose payload.value is k >= 2 stands for k items with
 *     offsets offset..offset+k-1, the same size and no payload; a
 *     METADATA_ITEM entry whose payload.value is k | log2(nodesize) << 32,
 *     k >= 2, for k items at objectids objectid + i * nodesize, the same
 *     offset (level) and size and no payload; expanded,
 *     the entries are the leaf's nritems items (leaf_bytes, BT1, BT4 as
 *     before). nritems, leaf_bytes and the slots on paths always count
 *     items, so the modeled leaf is the same whichever way it is stored.
 *
 * A leaf is expanded when a change makes it writable (cow_path_block,
 * cow_sibling: every write path passes there), so the pushes, splits and
 * memmoves above never see a run; readers go through btree_leaf_item() or
 * a cursor. btree_compact_runs() stores the runs again: refs.c calls it
 * between ref heads, which bounds the leaves stored item by item
 * (REFS_EXPANDED_LEAVES), and the commit compacts what is left.
 */

static bool key_is_keyed_backref(uint8_t type)
{
	return type == BTRFS_EXTENT_DATA_REF_KEY || type == BTRFS_TREE_BLOCK_REF_KEY;
}

/* Can an item of this type be a member of a run? */
static bool key_runs(uint8_t type)
{
	return key_is_keyed_backref(type) || type == BTRFS_METADATA_ITEM_KEY;
}

/* The low half of a run's payload.value counts its items; a METADATA_ITEM
 * run's high half is log2 of the stride of its addresses (the nodesize). */
#define RUN_COUNT(value) ((uint32_t)(value))
#define RUN_SHIFT(value) ((uint32_t)((value) >> 32))

/* Items an entry of a leaf with runs stands for. */
static uint32_t entry_span(const struct btree_item *entry)
{
	if (!key_runs(entry->key.type) || RUN_COUNT(entry->payload.value) < 2)
		return 1;
	return RUN_COUNT(entry->payload.value);
}

/* The key of member k of a run whose first key is *key (its entry's value). */
static void run_member_key(struct btree_key *key, uint64_t value, uint32_t k)
{
	if (key->type == BTRFS_METADATA_ITEM_KEY)
		key->objectid += (uint64_t)k << RUN_SHIFT(value);
	else
		key->offset += k;
}

/* Member `k` of the run `entry`, or the entry itself when it is no run. */
static const struct btree_item *run_member(const struct btree_item *entry, uint32_t k, struct btree_item *made_up)
{
	if (entry_span(entry) == 1)
		return entry;
	*made_up = *entry;
	run_member_key(&made_up->key, entry->payload.value, k);
	made_up->payload.value = 0;
	return made_up;
}

static uint32_t leaf_entries(const struct tree_block *leaf)
{
	return (leaf->flags & TREE_BLOCK_RUNS) ? leaf_items_of(leaf)->entries : leaf->nritems;
}

/* Does `next` continue the run (or single item) that `entry` starts?
 * METADATA_ITEMs run at addresses 2^shift apart. */
static bool run_continues(const struct btree_item *entry, const struct btree_item *next, uint32_t shift)
{
	const struct btree_key *a = &entry->key, *b = &next->key;
	if (!key_runs(a->type) || a->type != b->type || a->snapshot != b->snapshot || entry->size != next->size ||
	    entry->whiteout || next->whiteout || next->payload.value)
		return false;
	uint32_t span = entry_span(entry);
	if (a->type == BTRFS_METADATA_ITEM_KEY)
		return a->offset == b->offset && b->objectid == a->objectid + ((uint64_t)span << shift);
	return a->objectid == b->objectid && b->offset == a->offset + span;
}

/* The items of a private, overlay-free leaf of a tree of 2^shift-byte
 * blocks stored as runs, in place. */
static void leaf_store_runs(struct tree_block *leaf, uint32_t shift)
{
	struct btree_item *items = leaf->items;
	uint32_t out = 0;
	for (uint32_t i = 0; i < leaf->nritems; i++) {
		if (out && run_continues(&items[out - 1], &items[i], shift)) {
			uint64_t stride = items[out - 1].key.type == BTRFS_METADATA_ITEM_KEY ? (uint64_t)shift << 32 : 0;
			items[out - 1].payload.value = (entry_span(&items[out - 1]) + 1) | stride;
			continue;
		}
		if (out != i)
			items[out] = items[i];
		if (key_runs(items[out].key.type) && items[out].payload.value)
			g_error("btree: keyed backref (%" PRIu64 " %u %" PRIu64 ") with a payload",
				items[out].key.objectid, items[out].key.type, items[out].key.offset);
		out++;
	}
	if (out == leaf->nritems)
		return;
	/* A new array rather than a shrink in place: the expanded one goes back
	 * whole, for the next leaf to expand into (a shrink leaves a hole too
	 * small for it, and the heap grows). */
	struct leaf_items *expanded = leaf_items_of(leaf);
	struct leaf_items *stored = g_malloc(sizeof(*stored) + (size_t)out * sizeof(struct btree_item));
	stored->refs = 1;
	stored->entries = out;
	stored->heap = expanded->heap; /* the payloads stay where they are */
	memcpy(stored->item, items, (size_t)out * sizeof(struct btree_item));
	g_free(expanded);
	leaf->items = stored->item;
	leaf->capacity = out;
	leaf->flags |= TREE_BLOCK_RUNS;
}

/* Back to one entry per item, in an array of the leaf's own. */
static void leaf_expand_runs(struct tree_block *leaf)
{
	struct leaf_items *stored = leaf_items_of(leaf);
	uint32_t entries = stored->entries;
	leaf->items = NULL;
	leaf->flags &= ~TREE_BLOCK_RUNS;
	leaf_items_resize(leaf, with_room_to_grow(leaf->nritems));
	struct btree_item *out = leaf->items;
	for (uint32_t e = 0; e < entries; e++) {
		const struct btree_item *entry = &stored->item[e];
		struct btree_item made_up;
		for (uint32_t k = 0, span = entry_span(entry); k < span; k++)
			*out++ = *run_member(entry, k, &made_up);
	}
	uint32_t n = (uint32_t)(out - leaf->items);
	g_assert(n == leaf->nritems);
	/* The payloads go with the array, or are copied when copies of the
	 * leaf still use it (BT10: a heap belongs to one array). */
	if (--stored->refs == 0) {
		leaf_items_of(leaf)->heap = stored->heap;
		stored->heap = NULL;
		leaf_items_free(stored);
	} else {
		heap_rebuild(leaf_items_of(leaf), n, stored->heap ? heap_live(stored->heap) : 0);
	}
}

/* The leaf became writable in `txn`: no runs while it changes, and a place
 * on the compaction list if it is a leaf of the extent tree. */
static void list_written(struct transaction *txn, struct tree_block *block);

static void __attribute__((noinline)) list_run_leaf(struct transaction *txn, struct tree_block *leaf)
{
	leaf->flags |= TREE_BLOCK_RUNS_LISTED;
	g_ptr_array_add(txn->run_leaves, leaf);
}

/* Inline: a grep's atime writes make this call on a leaf already listed, or
 * still sharing its array, of a tree that is not the extent tree (three
 * tests; its frame was a tenth of the write, docs/performance.md round 15d). */
static inline void leaf_prepare_write(struct transaction *txn, struct tree_block *leaf)
{
	if (__builtin_expect(leaf->flags & TREE_BLOCK_RUNS, 0))
		leaf_expand_runs(leaf);
	if (!(leaf->flags & TREE_BLOCK_WRITTEN_LISTED) && !leaf_items_shared(leaf))
		list_written(txn, leaf);
	_Static_assert(BTRFS_EXTENT_TREE_OBJECTID < BTREE_OWNER_ATIME_PACKED, "the extent tree's id packs as itself");
	if (leaf->packed_owner == BTRFS_EXTENT_TREE_OBJECTID && txn->run_leaves &&
	    !(leaf->flags & TREE_BLOCK_RUNS_LISTED))
		list_run_leaf(txn, leaf);
}

static void leaf_compact(struct tree_block *leaf, uint32_t shift)
{
	leaf->flags &= ~TREE_BLOCK_RUNS_LISTED;
	if (leaf->level || !leaf->items || (leaf->flags & (TREE_BLOCK_FREED | TREE_BLOCK_RUNS)) || btree_leaf_has_overlay(leaf) ||
	    leaf_items_shared(leaf))
		return;
	leaf_store_runs(leaf, shift);
}

void btree_compact_runs(struct transaction *txn, uint32_t keep)
{
	if (!txn->run_leaves || txn->run_leaves->len <= keep)
		return;
	uint32_t shift = (uint32_t)__builtin_ctz(nodesize_of(txn));
	for (guint i = 0; i < txn->run_leaves->len; i++)
		leaf_compact(txn->run_leaves->pdata[i], shift);
	g_ptr_array_set_size(txn->run_leaves, 0);
}

/* The entry holding item `slot` and the item's place in it. */
static uint32_t entry_of_slot(const struct tree_block *leaf, uint32_t slot, uint32_t *member)
{
	uint32_t first = 0, entries = leaf_entries(leaf);
	for (uint32_t e = 0; e < entries; e++) {
		uint32_t span = entry_span(&leaf->items[e]);
		if (slot < first + span) {
			*member = slot - first;
			return e;
		}
		first += span;
	}
	g_assert_not_reached();
}

struct btree_item *btree_leaf_run_item(const struct tree_block *leaf, uint32_t slot)
{
	static _Thread_local struct btree_item made_up;
	uint32_t member;
	uint32_t e = entry_of_slot(leaf, slot, &member);
	return (struct btree_item *)run_member(&leaf->items[e], member, &made_up);
}

void btree_leaf_cursor_init(struct btree_leaf_cursor *cursor, const struct tree_block *leaf, uint32_t slot)
{
	cursor->leaf = leaf;
	if (!(leaf->flags & TREE_BLOCK_RUNS) || slot >= leaf->nritems) {
		cursor->entry = MIN(slot, leaf_entries(leaf));
		cursor->member = 0;
		return;
	}
	cursor->entry = entry_of_slot(leaf, slot, &cursor->member);
}

const struct btree_item *btree_leaf_cursor_next_run(struct btree_leaf_cursor *cursor)
{
	const struct tree_block *leaf = cursor->leaf;
	if (cursor->entry >= leaf_entries(leaf))
		return NULL;
	const struct btree_item *entry = &leaf->items[cursor->entry];
	const struct btree_item *item = run_member(entry, cursor->member, &cursor->made_up);
	if (++cursor->member == entry_span(entry)) {
		cursor->entry++;
		cursor->member = 0;
	}
	return item;
}

/* leaf_find_slot() over a leaf with runs: a binary search of the entries'
 * first keys, then the items of the entries before the one found. */
static uint32_t runs_find_slot(const struct tree_block *leaf, const struct btree_key *key, bool *exact)
{
	uint32_t low = 0, high = leaf_entries(leaf);
	*exact = false;
	while (low < high) {
		uint32_t mid = low + (high - low) / 2;
		int cmp = btree_key_compare(&leaf->items[mid].key, key);
		if (!cmp) {
			low = mid;
			*exact = true;
			break;
		}
		if (cmp < 0)
			low = mid + 1;
		else
			high = mid;
	}
	/* Entry `low` is the first whose first key is >= key (or equal); the
	 * key may still lie inside the run just before it. */
	uint32_t first = 0;
	for (uint32_t e = 0; e + 1 < low; e++)
		first += entry_span(&leaf->items[e]);
	if (*exact || !low)
		return low ? first + entry_span(&leaf->items[low - 1]) : 0;
	const struct btree_item *before = &leaf->items[low - 1];
	uint32_t span = entry_span(before);
	struct btree_key last = before->key;
	run_member_key(&last, before->payload.value, span - 1);
	if (span == 1 || btree_key_compare(&last, key) < 0)
		return first + span;
	/* Inside the run: member k is the last at or below the key (keyed
	 * backrefs: same objectid and type, offset within; METADATA_ITEMs:
	 * an address within). */
	uint32_t k = before->key.type == BTRFS_METADATA_ITEM_KEY
			     ? (uint32_t)((key->objectid - before->key.objectid) >> RUN_SHIFT(before->payload.value))
			     : (uint32_t)(key->offset - before->key.offset);
	struct btree_key member = before->key;
	run_member_key(&member, before->payload.value, k);
	int cmp = btree_key_compare(&member, key);
	*exact = cmp == 0;
	return first + k + (cmp < 0);
}

bool btree_check_runs(const struct tree_block *leaf, uint32_t nodesize, GError **error)
{
	if (leaf->level || !(leaf->flags & TREE_BLOCK_RUNS))
		return true;
	const struct leaf_items *stored = leaf_items_of(leaf);
	uint32_t items = 0, runs = 0;
	const char *broken = NULL;
	if (btree_leaf_has_overlay(leaf))
		broken = "an overlay";
	for (uint32_t e = 0; !broken && e < stored->entries; e++) {
		const struct btree_item *entry = &stored->item[e];
		uint32_t span = entry_span(entry);
		bool metadata = entry->key.type == BTRFS_METADATA_ITEM_KEY;
		if (key_is_keyed_backref(entry->key.type) && entry->payload.value == 1)
			broken = "a keyed backref with a payload";
		else if (metadata && span == 1 && entry->payload.value)
			broken = "a metadata item with a payload";
		else if (metadata && span > 1 && RUN_SHIFT(entry->payload.value) != (uint32_t)__builtin_ctz(nodesize))
			broken = "a run of metadata items not a block apart";
		else if (span > 1 && entry->whiteout)
			broken = "a run of whiteouts";
		runs += span > 1;
		items += span;
	}
	if (!broken && !runs)
		broken = "no run";
	if (!broken && items != leaf->nritems)
		broken = "runs that do not add up to the leaf's items";
	if (!broken)
		return true;
	g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
		    "corrupt leaf: block %" PRIu64 ", BT9 %s (%u entries, %u items for %u)", leaf->bytenr, broken,
		    stored->entries, items, leaf->nritems);
	return false;
}

bool btree_check_overlay(const struct tree_block *leaf, GError **error)
{
	const struct atime_overlay *o = leaf_overlay(leaf);
	if (leaf->level || !o)
		return true;
	const char *broken = NULL;
	uint32_t bad = 0, inodes = 0;
	if (!leaf->items) {
		/* An overlay is made over an array it shares, and goes with it
		 * (leaf_items_unref): with none it overrides nothing. */
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt leaf: block %" PRIu64 ", BT7 an overlay over no item array", leaf->bytenr);
		return false;
	}
	for (uint32_t i = 0; i < leaf->nritems; i++)
		inodes += leaf->items[i].key.type == BTRFS_INODE_ITEM_KEY;
	if ((leaf->flags & TREE_BLOCK_OVERLAY_HERE) &&
	    (o->form != OVERLAY_MARKED || overlay_bytes(o) > sizeof(leaf->overlay_here))) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt leaf: block %" PRIu64 ", BT14 an overlay in the block that is not the marked form "
			    "of at most 64 items (form %u, %u items)", leaf->bytenr, o->form, o->count);
		return false;
	}
	if (o->form == OVERLAY_MARKED) {
		if (o->count != leaf->nritems)
			broken = "a marked overlay whose bits are not the leaf's items";
		for (uint32_t i = 0; !broken && i < (o->count + 63u) / 64 * 64; i++)
			if (overlay_marked(o, i) && (i >= o->count || leaf->items[i].key.type != BTRFS_INODE_ITEM_KEY)) {
				broken = "a marked slot that is no inode item";
				bad = i;
			}
		if (!broken && o->values != 1)
			broken = "a marked overlay without its atime";
	} else {
		if (o->count != inodes)
			broken = "an overlay that does not hold every inode item";
		for (uint32_t i = 0; !broken && i < o->count; i++) {
			uint32_t slot = overlay_slot(o, i);
			if (slot >= leaf->nritems || leaf->items[slot].key.type != BTRFS_INODE_ITEM_KEY ||
			    (i && slot <= overlay_slot(o, i - 1))) {
				broken = "a slot that is no inode item, or out of order";
				bad = slot;
			} else if (o->form == OVERLAY_SHARED && overlay_which(o)[i] >= o->values) {
				broken = "an index past the distinct atimes";
				bad = slot;
			}
		}
	}
	if (!broken)
		return true;
	g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT, "corrupt leaf: block %" PRIu64 ", BT7 %s (slot %u)",
		    leaf->bytenr, broken, bad);
	return false;
}

struct heap_span {
	uintptr_t start;
	uint32_t bytes;
};

static int compare_spans(const void *a, const void *b)
{
	uintptr_t x = ((const struct heap_span *)a)->start, y = ((const struct heap_span *)b)->start;
	return x < y ? -1 : x > y;
}

/* Do any two of the spans overlap? (Sorts them.) */
static bool spans_overlap(struct heap_span *spans, uint32_t count)
{
	qsort(spans, count, sizeof(*spans), compare_spans);
	for (uint32_t i = 1; i < count; i++)
		if (spans[i].start < spans[i - 1].start + spans[i - 1].bytes)
			return true;
	return false;
}

/* The heap's holes (BT15) as spans after the payloads' (spans[*found..]),
 * or why not; their bytes in *bytes. */
static const char *heap_hole_spans(const struct payload_heap *heap, struct heap_span *spans, uint32_t *found,
				   uint32_t *bytes)
{
	static const uint32_t list_bytes[HEAP_HOLE_SIZES] = { 16, 32, 40 };
	uint32_t most = *found + heap_used(heap) / 16; /* a list longer than that loops */
	*bytes = 0;
	for (unsigned l = 0; l < HEAP_HOLE_SIZES; l++) {
		for (uint16_t next = heap->holes[l]; next;) {
			uint32_t offset = (next - 1u) * HEAP_WORD;
			if (offset + list_bytes[l] > heap_used(heap))
				return "BT15 a hole outside the heap's used bytes";
			if (*found == most)
				return "BT15 a hole list that loops";
			spans[(*found)++] = (struct heap_span){ (uintptr_t)heap->bytes + offset, list_bytes[l] };
			*bytes += list_bytes[l];
			memcpy(&next, (const char *)heap->bytes + offset, sizeof(next));
		}
	}
	return NULL;
}

bool btree_check_payloads(const struct tree_block *leaf, GError **error)
{
	if (leaf->level || !leaf->items)
		return true;
	const struct leaf_items *array = leaf_items_of(leaf);
	const struct payload_heap *heap = array->heap;
	uint32_t count = leaf_entries(leaf), live = 0, found = 0, maps_data = 0, hole_bytes = 0;
	g_autofree struct heap_span *spans = g_new(struct heap_span, count + 1 + (heap ? heap_used(heap) / 16 : 0));
	const char *broken = NULL;
	for (uint32_t i = 0; !broken && i < count; i++) {
		const struct btree_item *item = &array->item[i];
		uint32_t bytes = heap_bytes_of(item);
		enum btree_payload_kind kind = btree_payload_kind(item->key.type);
		if ((bytes != 0) != (kind != BTREE_PAYLOAD_VALUE && kind != BTREE_PAYLOAD_NONE)) {
			broken = "a payload in the heap, or not, against its kind";
			break;
		}
		if (!bytes)
			continue;
		uintptr_t offset = (uintptr_t)item->payload.at - (uintptr_t)(heap ? heap->bytes : NULL);
		if (!heap || (uintptr_t)item->payload.at < (uintptr_t)heap->bytes || offset + bytes > heap_used(heap) ||
		    offset % sizeof(uint64_t))
			broken = "a payload outside its array's heap";
		live += bytes;
		maps_data += !broken && payload_maps_data(item->key.type, item->payload.at);
		spans[found++] = (struct heap_span){ (uintptr_t)item->payload.at, bytes };
	}
	if (!broken && spans_overlap(spans, found))
		broken = "two payloads overlapping";
	if (!broken && heap && heap_live(heap) != live)
		broken = "live bytes that are not the payloads'";
	const char *holes = !broken && heap ? heap_hole_spans(heap, spans, &found, &hole_bytes) : NULL;
	if (!broken && !holes && heap && spans_overlap(spans, found))
		holes = "BT15 a hole overlapping a payload or another hole";
	if (!broken && !holes && heap && hole_bytes != heap_used(heap) - heap_live(heap))
		holes = "BT15 holes that are not the heap's used bytes beyond its live ones";
	if (!broken && holes) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt leaf: block %" PRIu64 ", %s (%u bytes in holes, heap live %u used %u)", leaf->bytenr,
			    holes, hole_bytes, heap_live(heap), heap_used(heap));
		return false;
	}
	if (!broken && heap && heap->data_refs != maps_data) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt leaf: block %" PRIu64 ", BT13 the heap counts %u data extents mapped, its file "
			    "extents map %u", leaf->bytenr, heap->data_refs, maps_data);
		return false;
	}
	if (!broken)
		return true;
	g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
		    "corrupt leaf: block %" PRIu64 ", BT10 %s (%u payloads, %u bytes, heap live %u used %u)",
		    leaf->bytenr, broken, found, live, heap ? heap_live(heap) : 0, heap ? heap_used(heap) : 0);
	return false;
}

static void count_array_user(GHashTable *users, const struct tree_block *block)
{
	if (block->level || !block->items)
		return;
	gpointer array = leaf_items_of(block);
	g_hash_table_insert(users, array, GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(users, array)) + 1));
}

bool btree_check_item_sharing(GHashTable *live, const GPtrArray *unreleased, GError **error)
{
	g_autoptr(GHashTable) users = g_hash_table_new(NULL, NULL);
	GHashTableIter iter;
	gpointer key, value;
	g_hash_table_iter_init(&iter, live);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		const struct tree_block *block = key;
		if (block->level && btree_leaf_has_overlay(block)) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt node: block %" G_GUINT64_FORMAT ", BT7 an atime overlay on a node", block->bytenr);
			return false;
		}
		count_array_user(users, block);
	}
	for (guint i = 0; i < unreleased->len; i++)
		count_array_user(users, unreleased->pdata[i]);
	for (guint i = 0; i < unreleased->len; i++) {
		const struct tree_block *freed = unreleased->pdata[i];
		if (!freed->level && !freed->items && btree_leaf_has_overlay(freed)) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt leaf: block %" G_GUINT64_FORMAT ", BT8 freed, its item array given up, "
				    "but holding an overlay", freed->bytenr);
			return false;
		}
		if (freed->level || !freed->items ||
		    GPOINTER_TO_UINT(g_hash_table_lookup(users, leaf_items_of(freed))) < 2)
			continue;
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt leaf: block %" G_GUINT64_FORMAT ", BT8 freed but still sharing its item array",
			    freed->bytenr);
		return false;
	}
	g_autoptr(GHashTable) heaps = g_hash_table_new(NULL, NULL);
	g_hash_table_iter_init(&iter, users);
	while (g_hash_table_iter_next(&iter, &key, &value)) {
		const struct leaf_items *array = key;
		if (array->heap && !g_hash_table_add(heaps, array->heap)) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt item array: BT10 a payload heap that another array holds too");
			return false;
		}
		if (array->refs != GPOINTER_TO_UINT(value)) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt item array: BT6 %u references counted, %u leaves use it",
				    array->refs, GPOINTER_TO_UINT(value));
			return false;
		}
	}
	return true;
}

bool btree_check_written(const struct transaction *txn, GHashTable *live, GError **error)
{
	if (!txn->written)
		return true;
	g_autoptr(GHashTable) listed = g_hash_table_new(NULL, NULL);
	const struct tree_block *bad = NULL;
	const char *broken = NULL;
	for (guint i = 0; !broken && i < txn->written->len; i++) {
		bad = txn->written->pdata[i];
		if (!(bad->flags & TREE_BLOCK_WRITTEN_LISTED))
			broken = "listed without its flag";
		else if (!g_hash_table_add(listed, (gpointer)bad))
			broken = "listed twice";
	}
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, live);
	while (!broken && g_hash_table_iter_next(&iter, &key, NULL)) {
		bad = key;
		bool on_list = g_hash_table_contains(listed, bad);
		if ((bad->flags & TREE_BLOCK_WRITTEN_LISTED) && !on_list)
			broken = "flagged but not listed";
		else if (bad->level && bad->generation == txn->transid && !on_list)
			broken = "a node the transaction wrote, not listed";
	}
	if (!broken)
		return true;
	g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT, "corrupt written list: block %" PRIu64 ", BT12 %s",
		    bad->bytenr, broken);
	return false;
}

void btree_block_freed(struct tree_block *block)
{
	if (!block->level && leaf_items_shared(block))
		leaf_items_unref(block);
}

void btree_release_block(struct tree_block *block)
{
	if (block->level)
		g_free(block->children);
	else
		leaf_items_unref(block);
	g_free(block);
}

/* A block this transaction created or copied: the accounting counts its
 * first reference, the commit will write it, and btree_commit_blocks() trims
 * it. */
/*
 * BT12 txn->written lists, once each (TREE_BLOCK_WRITTEN_LISTED), the nodes
 *      the transaction wrote and the leaves it wrote that held an array of
 *      their own when a path made them writable: what the commit trims
 *      (capacity, payload heap) and whose overlay it folds. A copy of a
 *      leaf that still shares its array with a snapshot's is not listed:
 *      a commit has nothing to trim there, and a grep makes 1.1 x 10^7 of
 *      them at 10^7 (8 bytes each, in an array that doubles). A leaf that a
 *      change made private after its path was made writable is listed at
 *      its next write; until then its slack and its overlay wait.
 */
static void list_written(struct transaction *txn, struct tree_block *block)
{
	if (!txn->written || (block->flags & TREE_BLOCK_WRITTEN_LISTED))
		return;
	block->flags |= TREE_BLOCK_WRITTEN_LISTED;
	g_ptr_array_add(txn->written, block);
}

static void block_created(struct transaction *txn, struct tree_block *block)
{
	txn->stats.blocks_allocated++;
	txn->ops->block_allocated(txn, block);
	txn->blocks_dirty++;
	if (block->level)
		list_written(txn, block);
	else
		leaf_prepare_write(txn, block);
}

void btree_commit_blocks(struct transaction *txn)
{
	btree_compact_runs(txn, 0);
	if (!txn->written)
		return;
	guint kept = 0;
	for (guint i = 0; i < txn->written->len; i++) {
		struct tree_block *block = txn->written->pdata[i];
		/* Freed blocks are released by blockstore_commit(), next. */
		if (block->flags & TREE_BLOCK_FREED)
			continue;
		txn->written->pdata[kept++] = block;
		if (!block->level && block->items && !leaf_items_shared(block))
			heap_trim(block);
		if (block->capacity <= MAX(block->nritems, 1u) || (!block->level && leaf_items_shared(block)))
			continue;
		block->capacity = MAX(block->nritems, 1u);
		if (block->level)
			block->children = g_realloc(block->children, block->capacity * sizeof(struct btree_child));
		else
			leaf_items_resize(block, block->capacity);
	}
	g_ptr_array_set_size(txn->written, kept);
}

void btree_commit_finish(struct transaction *txn)
{
	if (!txn->written)
		return;
	for (guint i = 0; i < txn->written->len; i++) {
		struct tree_block *block = txn->written->pdata[i];
		block->flags &= ~TREE_BLOCK_WRITTEN_LISTED;
		if (!block->level && btree_leaf_has_overlay(block) && !leaf_items_shared(block))
			leaf_fold_atimes(block);
	}
	g_ptr_array_set_size(txn->written, 0);
}

/* --- searching within one block -------------------------------------- */

/* The first slot of [low, high) whose key is >= key, in a leaf without runs
 * whose items below `low` are below the key and from `high` on above it;
 * *exact when it is equal. */
static inline uint32_t bisect_items(const struct tree_block *leaf, uint32_t low, uint32_t high,
				    const struct btree_key *key, bool *exact)
{
	while (low < high) {
		uint32_t mid = low + (high - low) / 2;
		int cmp = btree_key_compare(&leaf->items[mid].key, key);
		if (cmp < 0)
			low = mid + 1;
		else if (cmp > 0)
			high = mid;
		else {
			*exact = true;
			return mid;
		}
	}
	*exact = false;
	return low;
}

/* The first slot whose key is >= key; *exact when it is equal. */
static uint32_t leaf_find_slot(const struct tree_block *leaf, const struct btree_key *key, bool *exact)
{
	if (leaf->flags & TREE_BLOCK_RUNS)
		return runs_find_slot(leaf, key, exact);
	return bisect_items(leaf, 0, leaf->nritems, key, exact);
}

/* The child whose range holds key: the last slot with key <= key, or 0. */
static uint32_t node_find_slot(const struct tree_block *node, const struct btree_key *key)
{
	uint32_t low = 0, high = node->nritems;
	while (low < high) {
		uint32_t mid = low + (high - low) / 2;
		if (btree_key_compare(&node->children[mid].key, key) <= 0)
			low = mid + 1;
		else
			high = mid;
	}
	return low ? low - 1 : 0;
}

/* --- copy-on-write ----------------------------------------------------- */

/*
 * should_cow_block(): a block the running transaction wrote is private to it
 * and changes in place; any older block may be on disk in the last committed
 * tree, or shared with a snapshot, and must be copied first.
 */
static bool should_cow_block(const struct transaction *txn, const struct tree_block *block)
{
	return block->generation != txn->transid;
}

struct tree_block *btree_copy_block(struct transaction *txn, uint64_t tree_id, const struct tree_block *buf)
{
	struct tree_block *cow = blockstore_alloc_block(txn->store, tree_id, buf->level, txn->transid);
	cow->nritems = buf->nritems;
	cow->leaf_bytes = buf->leaf_bytes;
	if (buf->level) {
		cow->capacity = MAX((uint32_t)buf->nritems, 1u);
		cow->children = g_malloc(cow->capacity * sizeof(struct btree_child));
		memcpy(cow->children, buf->children, buf->nritems * sizeof(struct btree_child));
	} else if (buf->items) {
		/* Share the array (BT6); the overlay's atimes are the copy's too. */
		leaf_items_of(buf)->refs++;
		cow->items = buf->items;
		cow->flags |= buf->flags & (TREE_BLOCK_RUNS | TREE_BLOCK_OVERLAY_HERE);
		cow->capacity = buf->capacity;
		if (buf->flags & TREE_BLOCK_OVERLAY_HERE)
			cow->overlay_here = buf->overlay_here;
		else if (buf->atimes)
			cow->atimes = g_memdup2(buf->atimes, overlay_bytes(buf->atimes));
	}
	block_created(txn, cow);
	return cow;
}

/* cow_path_block() of a block an earlier transaction wrote: the copy. */
static struct tree_block *__attribute__((noinline)) cow_path_block_copy(struct btree *tree, struct transaction *txn,
									 struct btree_path *path, unsigned level)
{
	struct tree_block *buf = path->nodes[level];
	struct tree_block *cow = btree_copy_block(txn, tree->id, buf);
	txn->stats.blocks_cowed++;
	if (level + 1 < path->levels) {
		struct tree_block *parent = path->nodes[level + 1];
		parent->children[path->slots[level + 1]].block = cow;
	} else {
		tree->root = cow;
		tree->root_dirty = true;
	}
	tree->links++; /* BT18 */
	path->nodes[level] = cow;
	txn->ops->block_cowed(txn, tree->id, buf, cow);
	if (!level)
		leaf_prepare_write(txn, cow);
	return cow;
}

/* Make path->nodes[level] writable, pointing its parent (or the root) at the
 * copy. The parent, if any, must already be writable. Inline: most calls
 * (btree_search()'s, 95 000 in the seed run) find a block this transaction
 * wrote, which changes in place. */
static inline struct tree_block *cow_path_block(struct btree *tree, struct transaction *txn,
						struct btree_path *path, unsigned level)
{
	struct tree_block *buf = path->nodes[level];
	if (should_cow_block(txn, buf))
		return cow_path_block_copy(tree, txn, path, level);
	if (!level)
		leaf_prepare_write(txn, buf);
	return buf;
}

/* COW a sibling of path->nodes[level] found at parent slot `slot`. */
static struct tree_block *cow_sibling(struct btree *tree, struct transaction *txn,
				      struct btree_path *path, unsigned level, uint32_t slot)
{
	struct tree_block *parent = path->nodes[level + 1];
	struct tree_block *buf = parent->children[slot].block;
	if (!should_cow_block(txn, buf)) {
		if (!level)
			leaf_prepare_write(txn, buf);
		return buf;
	}
	struct tree_block *cow = btree_copy_block(txn, tree->id, buf);
	txn->stats.blocks_cowed++;
	parent->children[slot].block = cow;
	tree->links++; /* BT18 */
	txn->ops->block_cowed(txn, tree->id, buf, cow);
	if (!level)
		leaf_prepare_write(txn, cow);
	return cow;
}

/* A changed first key of path->nodes[level] propagates up (fixup_low_keys). */
static void fixup_low_keys(struct btree_path *path, unsigned level, const struct btree_key *key)
{
	for (unsigned l = level + 1; l < path->levels; l++) {
		path->nodes[l]->children[path->slots[l]].key = *key;
		if (path->slots[l] != 0)
			break;
	}
}

/* --- pointers in internal nodes ---------------------------------------
 *
 * Every change to a node's child pointers or count goes through the four
 * functions below, which count it in the tree's links (BT18); so do the
 * changes of a tree's root pointer and the copies a parent is pointed at.
 */

static void node_insert_ptr(struct btree *tree, struct tree_block *node, uint32_t slot, const struct btree_key *key,
			    struct tree_block *child)
{
	tree->links++;
	ensure_capacity(node, node->nritems + 1);
	memmove(&node->children[slot + 1], &node->children[slot],
		(node->nritems - slot) * sizeof(struct btree_child));
	node->children[slot].key = *key;
	node->children[slot].block = child;
	node->nritems++;
}

static void node_remove_ptr(struct btree *tree, struct tree_block *node, uint32_t slot)
{
	tree->links++;
	memmove(&node->children[slot], &node->children[slot + 1],
		(node->nritems - slot - 1) * sizeof(struct btree_child));
	node->nritems--;
}

/* Free a block that no longer holds anything (its items moved elsewhere). */
static void free_emptied_block(struct transaction *txn, struct tree_block *block)
{
	block->nritems = 0;
	block->leaf_bytes = 0;
	txn->ops->block_unlinked(txn, block);
}

/* insert_new_root(): the tree grows one level above path->nodes[level]. */
static void insert_new_root(struct btree *tree, struct transaction *txn, struct btree_path *path, unsigned level)
{
	struct tree_block *old = path->nodes[level];
	struct tree_block *root = blockstore_alloc_block(txn->store, tree->id, old->level + 1, txn->transid);
	block_created(txn, root);
	node_insert_ptr(tree, root, 0, block_first_key(old), old);
	tree->root = root;
	tree->root_dirty = true;
	path->nodes[level + 1] = root;
	path->slots[level + 1] = 0;
	path->levels = level + 2;
}

/* --- internal node split and balance ------------------------------------ */

/* Move `count` pointers from the front of src to the end of dst. */
static void node_move_front_to_left(struct btree *tree, struct tree_block *dst, struct tree_block *src, uint32_t count)
{
	tree->links++;
	ensure_capacity(dst, dst->nritems + count);
	memcpy(&dst->children[dst->nritems], src->children, count * sizeof(struct btree_child));
	dst->nritems += count;
	memmove(src->children, &src->children[count], (src->nritems - count) * sizeof(struct btree_child));
	src->nritems -= count;
}

/* Move `count` pointers from the end of src to the front of dst. */
static void node_move_back_to_right(struct btree *tree, struct tree_block *dst, struct tree_block *src, uint32_t count)
{
	tree->links++;
	ensure_capacity(dst, dst->nritems + count);
	memmove(&dst->children[count], dst->children, dst->nritems * sizeof(struct btree_child));
	memcpy(dst->children, &src->children[src->nritems - count], count * sizeof(struct btree_child));
	dst->nritems += count;
	src->nritems -= count;
}

/*
 * push_nodes_for_insert(): before splitting a nearly full node, give some of
 * its pointers to the left sibling (all it can take, leaving
 * BTRFS_PUSH_NODE_KEEP) or the right one (at most half). Returns true when
 * the node now has room.
 */
static bool push_nodes_for_insert(struct btree *tree, struct transaction *txn, struct btree_path *path,
				  unsigned level)
{
	uint32_t capacity = btree_node_capacity(nodesize_of(txn));
	struct tree_block *parent = path->nodes[level + 1];
	uint32_t pslot = path->slots[level + 1];
	struct tree_block *mid = path->nodes[level];

	if (pslot > 0 && parent->children[pslot - 1].block->nritems < capacity - 1 &&
	    mid->nritems > BTRFS_PUSH_NODE_KEEP) {
		struct tree_block *left = cow_sibling(tree, txn, path, level, pslot - 1);
		uint32_t push = MIN(capacity - left->nritems, mid->nritems - BTRFS_PUSH_NODE_KEEP);
		node_move_front_to_left(tree, left, mid, push);
		parent->children[pslot].key = *block_first_key(mid);
		if (path->slots[level] < push) {
			path->nodes[level] = left;
			path->slots[level] += left->nritems - push;
			path->slots[level + 1]--;
		} else {
			path->slots[level] -= push;
		}
		return true;
	}
	if (pslot + 1 < parent->nritems && parent->children[pslot + 1].block->nritems < capacity - 1 &&
	    mid->nritems >= BTRFS_PUSH_NODE_RIGHT_MIN) {
		struct tree_block *right = cow_sibling(tree, txn, path, level, pslot + 1);
		uint32_t push = MIN(capacity - right->nritems, (uint32_t)mid->nritems / 2 + 1);
		if (push >= mid->nritems)
			return false;
		node_move_back_to_right(tree, right, mid, push);
		parent->children[pslot + 1].key = *block_first_key(right);
		if (path->slots[level] >= mid->nritems) {
			path->slots[level] -= mid->nritems;
			path->nodes[level] = right;
			path->slots[level + 1]++;
		}
		return true;
	}
	return false;
}

/* split_node(): make room in path->nodes[level] for one more pointer; the
 * path follows the key into whichever node now holds it. */
static void split_node(struct btree *tree, struct transaction *txn, struct btree_path *path, unsigned level)
{
	uint32_t capacity = btree_node_capacity(nodesize_of(txn));
	if (level + 1 >= path->levels)
		insert_new_root(tree, txn, path, level);
	else if (push_nodes_for_insert(tree, txn, path, level) &&
		 path->nodes[level]->nritems < capacity - BTRFS_NODE_SPLIT_SLACK)
		return;
	/* The push may have left the path in a sibling it filled: that one
	 * splits then, as split_node() checks the node it ends up in. */
	struct tree_block *c = path->nodes[level];
	struct tree_block *parent = path->nodes[level + 1];
	uint32_t mid = (c->nritems + 1) / 2;
	struct tree_block *split = blockstore_alloc_block(txn->store, tree->id, c->level, txn->transid);
	block_created(txn, split);
	ensure_capacity(split, c->nritems - mid);
	memcpy(split->children, &c->children[mid], (c->nritems - mid) * sizeof(struct btree_child));
	split->nritems = c->nritems - mid;
	c->nritems = mid; /* counted in the tree's links by the insert below (BT18) */
	node_insert_ptr(tree, parent, path->slots[level + 1] + 1, block_first_key(split), split);
	if (path->slots[level] >= mid) {
		path->nodes[level] = split;
		path->slots[level] -= mid;
		path->slots[level + 1]++;
	}
}

/* Merge a node under a quarter full into a sibling that can take it all,
 * or collapse a root that has one child. Returns true when the tree changed. */
static bool balance_node(struct btree *tree, struct transaction *txn, struct btree_path *path, unsigned level)
{
	struct tree_block *mid = path->nodes[level];
	uint32_t capacity = btree_node_capacity(nodesize_of(txn));
	if (level + 1 >= path->levels) {
		if (mid->nritems != 1)
			return false;
		struct tree_block *child = mid->children[0].block;
		tree->root = child;
		tree->root_dirty = true;
		tree->links++; /* BT18 */
		free_emptied_block(txn, mid);
		return true;
	}
	if (mid->nritems >= capacity / BTRFS_NODE_MERGE_DIVISOR)
		return false;
	struct tree_block *parent = path->nodes[level + 1];
	uint32_t pslot = path->slots[level + 1];
	if (pslot > 0 && parent->children[pslot - 1].block->nritems + mid->nritems <= capacity) {
		struct tree_block *left = cow_sibling(tree, txn, path, level, pslot - 1);
		node_move_front_to_left(tree, left, mid, mid->nritems);
		node_remove_ptr(tree, parent, pslot);
		free_emptied_block(txn, mid);
		return true;
	}
	if (pslot + 1 < parent->nritems && parent->children[pslot + 1].block->nritems + mid->nritems <= capacity) {
		struct tree_block *right = cow_sibling(tree, txn, path, level, pslot + 1);
		node_move_back_to_right(tree, right, mid, mid->nritems);
		parent->children[pslot + 1].key = *block_first_key(right);
		node_remove_ptr(tree, parent, pslot);
		free_emptied_block(txn, mid);
		return true;
	}
	return false;
}

/* --- leaf push and split ---------------------------------------------- */

/*
 * A leaf that items left (a split, a push to a sibling) gives back the room
 * they took once it holds more than twice what it needs (and 32 slots or
 * bytes), keeping room for its own growth. Kept until the commit's trim,
 * that room was 40 % of populate's item arrays and payload heaps (cowsim
 * bench --sizes 1000000: 64 + 33 MiB when the sync trimmed them), and the
 * trims left it as holes between the arrays, which the grep's copies then
 * filled; given back while populate allocates, it goes to the next leaves'
 * arrays. Twice, not with_room_to_grow(): a leaf that a push takes a few
 * items from is not resized at each push (the heap is rebuilt when it has
 * holes); peak RSS is the same, a create costs 1 % more instructions
 * instead of 6 %.
 */
static bool room_to_give_back(uint32_t capacity, uint32_t needed)
{
	return capacity > 2 * needed + 32;
}

static void leaf_give_back_room(struct tree_block *leaf)
{
	if (room_to_give_back(leaf->capacity, leaf->nritems))
		leaf_items_resize(leaf, with_room_to_grow(leaf->nritems));
	struct leaf_items *array = leaf_items_of(leaf);
	const struct payload_heap *heap = array->heap;
	if (heap && room_to_give_back(heap_capacity(heap), heap_live(heap)))
		heap_resize(array, leaf->nritems, heap->live ? heap_room_for(heap_live(heap)) : 0);
}

/*
 * The payloads of dst's items [at, at + count), copied from src's items
 * [start, start + count) and still pointing into src's heap, go to dst's
 * heap (`heap_bytes` of them, reserved at its end), BT10. src then frees
 * them, last first: a split's and a push's items are mostly the last a
 * leaf was given, at the end of its heap, which then shrinks instead of
 * keeping holes (BT15). Returns the moved payloads that map data (BT13).
 */
static uint32_t move_payloads_through_holes(struct payload_heap *to, struct tree_block *dst, uint32_t at,
					    struct payload_heap *from, const struct tree_block *src, uint32_t start,
					    uint32_t count)
{
	uint32_t data_refs = 0;
	for (uint32_t i = at; i < at + count; i++) {
		struct btree_item *item = &dst->items[i];
		uint32_t bytes = heap_bytes_of(item);
		if (!bytes)
			continue;
		void *payload = heap_take(to, bytes);
		copy_payload(payload, item->payload.at, bytes);
		item->payload.at = payload;
		data_refs += payload_maps_data(item->key.type, payload);
	}
	for (uint32_t i = start + count; i-- > start;) {
		const struct btree_item *item = &src->items[i];
		uint32_t bytes = heap_bytes_of(item);
		if (bytes)
			heap_free_bytes(from, item->payload.at, bytes);
	}
	return data_refs;
}

/* The same when dst's heap has no hole, in one pass, last first: each
 * payload goes where heap_take() would put it in slot order, counted down
 * from the top of the room, as src frees it. The heaps end as they would
 * have: a push's or a split's items (a fifth of a create, their payloads
 * a third of that) were walked twice (docs/performance.md, round 16d). */
static uint32_t move_payloads_to_the_end(struct payload_heap *to, struct tree_block *dst, uint32_t at,
					 struct payload_heap *from, uint32_t count, uint32_t heap_bytes)
{
	uint32_t data_refs = 0;
	uint64_t *top = &to->bytes[to->used + heap_bytes / HEAP_WORD];
	to->used += (uint16_t)(heap_bytes / HEAP_WORD);
	to->live += (uint16_t)(heap_bytes / HEAP_WORD);
	for (uint32_t i = count; i-- > 0;) {
		struct btree_item *item = &dst->items[at + i];
		uint32_t bytes = heap_bytes_of(item);
		if (!bytes)
			continue;
		void *old = item->payload.at;
		top -= bytes / HEAP_WORD;
		copy_payload(top, old, bytes);
		item->payload.at = top;
		data_refs += payload_maps_data(item->key.type, top);
		heap_free_bytes(from, old, bytes);
	}
	return data_refs;
}

static void heap_move_payloads(struct tree_block *dst, uint32_t at, struct tree_block *src, uint32_t start,
			       uint32_t count, uint32_t heap_bytes)
{
	struct payload_heap *to = leaf_items_of(dst)->heap, *from = leaf_items_of(src)->heap;
	_Static_assert(HEAP_HOLE_SIZES == 3, "every hole list is asked");
	uint32_t data_refs = to->holes[0] || to->holes[1] || to->holes[2]
				     ? move_payloads_through_holes(to, dst, at, from, src, start, count)
				     : move_payloads_to_the_end(to, dst, at, from, count, heap_bytes);
	to->data_refs += data_refs; /* BT13 */
	from->data_refs -= data_refs;
	from->live -= (uint16_t)(heap_bytes / HEAP_WORD);
}

/* Move items [start, start+count) of src to dst at slot `at`. */
static void leaf_move_items(struct tree_block *dst, uint32_t at, struct tree_block *src, uint32_t start,
			    uint32_t count)
{
	leaf_make_private(src);
	ensure_capacity(dst, dst->nritems + count);
	uint32_t bytes = 0, heap_bytes = 0;
	for (uint32_t i = start; i < start + count; i++) {
		bytes += item_bytes(&src->items[i]);
		heap_bytes += heap_bytes_of(&src->items[i]);
	}
	if (heap_bytes)
		heap_reserve_end(dst, heap_bytes);
	memmove(&dst->items[at + count], &dst->items[at], (dst->nritems - at) * sizeof(struct btree_item));
	memcpy(&dst->items[at], &src->items[start], count * sizeof(struct btree_item));
	if (heap_bytes)
		heap_move_payloads(dst, at, src, start, count, heap_bytes);
	dst->nritems += count;
	dst->leaf_bytes += bytes;
	memmove(&src->items[start], &src->items[start + count],
		(src->nritems - start - count) * sizeof(struct btree_item));
	src->nritems -= count;
	src->leaf_bytes -= bytes;
	leaf_give_back_room(src);
}

/*
 * __push_leaf_right(): how many items from the end of `left` fit in
 * free_space of the right sibling. When not emptying, items before the
 * insertion slot stay, and the slot itself moves only if the leaves end up
 * no less balanced. data_size is the room the pending insert needs.
 */
static uint32_t count_push_right(const struct tree_block *left, uint32_t slot, uint32_t data_size,
				 uint32_t free_space, uint32_t left_free, bool empty, uint32_t min_slot)
{
	uint32_t nr = empty ? 0 : MAX(1u, min_slot);
	uint32_t push_items = 0, push_space = 0;
	if (slot >= left->nritems)
		push_space += data_size;
	for (int64_t i = (int64_t)left->nritems - 1; i >= (int64_t)nr; i--) {
		if (!empty && push_items > 0) {
			if (slot > i)
				break;
			if (slot == i && left_free + push_space * BTRFS_PUSH_LEAF_BALANCE_FACTOR > free_space)
				break;
		}
		if (slot == i)
			push_space += data_size;
		uint32_t bytes = item_bytes(&left->items[i]);
		if (bytes + push_space > free_space)
			break;
		push_items++;
		push_space += bytes;
	}
	return push_items;
}

/* push_leaf_right(): 0 when items moved (or the insert moved right), 1 when
 * nothing could move. */
static int push_leaf_right(struct btree *tree, struct transaction *txn, struct btree_path *path,
			   uint32_t min_data_size, uint32_t data_size, bool empty, uint32_t min_slot)
{
	if (path->levels < 2)
		return 1;
	struct tree_block *parent = path->nodes[1];
	uint32_t pslot = path->slots[1];
	if (pslot + 1 >= parent->nritems)
		return 1;
	if (leaf_free_space(txn, parent->children[pslot + 1].block) < data_size)
		return 1;
	struct tree_block *right = cow_sibling(tree, txn, path, 0, pslot + 1);
	struct tree_block *left = path->nodes[0];
	uint32_t free_space = leaf_free_space(txn, right);
	if (free_space < data_size)
		return 1;
	uint32_t slot = path->slots[0];
	if (slot == left->nritems && !empty) {
		/* The new key sorts after everything here and the right leaf has
		 * room: insert there and leave this leaf untouched. */
		path->nodes[0] = right;
		path->slots[0] = 0;
		path->slots[1]++;
		return 0;
	}
	uint32_t push = count_push_right(left, slot, min_data_size, free_space,
					 leaf_free_space(txn, left), empty, min_slot);
	if (!push)
		return 1;
	uint32_t remaining = left->nritems - push;
	leaf_move_items(right, 0, left, remaining, push);
	parent->children[pslot + 1].key = right->items[0].key;
	if (slot >= remaining) {
		path->nodes[0] = right;
		path->slots[0] = slot - remaining;
		path->slots[1]++;
	}
	return 0;
}

static uint32_t count_push_left(const struct tree_block *right, uint32_t slot, uint32_t data_size,
				uint32_t free_space, uint32_t right_free, bool empty, uint32_t max_slot)
{
	uint32_t nr = empty ? MIN(right->nritems, max_slot) : MIN((uint32_t)right->nritems - 1, max_slot);
	uint32_t push_items = 0, push_space = 0;
	for (uint32_t i = 0; i < nr; i++) {
		if (!empty && push_items > 0) {
			if (slot < i)
				break;
			if (slot == i && right_free + push_space * BTRFS_PUSH_LEAF_BALANCE_FACTOR > free_space)
				break;
		}
		if (slot == i)
			push_space += data_size;
		uint32_t bytes = item_bytes(&right->items[i]);
		if (bytes + push_space > free_space)
			break;
		push_items++;
		push_space += bytes;
	}
	return push_items;
}

static int push_leaf_left(struct btree *tree, struct transaction *txn, struct btree_path *path,
			  uint32_t min_data_size, uint32_t data_size, bool empty, uint32_t max_slot)
{
	if (path->levels < 2)
		return 1;
	struct tree_block *parent = path->nodes[1];
	uint32_t pslot = path->slots[1];
	struct tree_block *right = path->nodes[0];
	if (pslot == 0 || right->nritems == 0)
		return 1;
	if (leaf_free_space(txn, parent->children[pslot - 1].block) < data_size)
		return 1;
	struct tree_block *left = cow_sibling(tree, txn, path, 0, pslot - 1);
	uint32_t free_space = leaf_free_space(txn, left);
	if (free_space < data_size)
		return 1;
	uint32_t slot = path->slots[0];
	uint32_t push = count_push_left(right, slot, min_data_size, free_space,
					leaf_free_space(txn, right), empty, max_slot);
	if (!push)
		return 1;
	uint32_t left_before = left->nritems;
	leaf_move_items(left, left->nritems, right, 0, push);
	if (right->nritems) {
		struct btree_key first = right->items[0].key;
		fixup_low_keys(path, 0, &first);
	}
	if (slot < push) {
		path->nodes[0] = left;
		path->slots[0] = left_before + slot;
		path->slots[1]--;
	} else {
		path->slots[0] = slot - push;
	}
	return 0;
}

/* A new empty leaf at parent slot `at`, becoming the path's leaf. */
static struct tree_block *insert_empty_leaf(struct btree *tree, struct transaction *txn,
					    struct btree_path *path, uint32_t at, const struct btree_key *key)
{
	struct tree_block *leaf = blockstore_alloc_block(txn->store, tree->id, 0, txn->transid);
	block_created(txn, leaf);
	node_insert_ptr(tree, path->nodes[1], at, key, leaf);
	path->nodes[0] = leaf;
	path->slots[0] = 0;
	path->slots[1] = at;
	return leaf;
}

/* copy_for_split(): items [mid, nritems) go to a new right leaf. */
static void split_leaf_at(struct btree *tree, struct transaction *txn, struct btree_path *path, uint32_t mid)
{
	struct tree_block *left = path->nodes[0];
	uint32_t slot = path->slots[0];
	struct tree_block *right = blockstore_alloc_block(txn->store, tree->id, 0, txn->transid);
	block_created(txn, right);
	/* The half the insert goes to gets at once the slots the insert's
	 * growth would give it (grow_capacity() from its exact count), without
	 * a realloc that moves the array it just filled. */
	if (slot >= mid)
		grow_capacity(right, with_room_to_grow(left->nritems - mid));
	leaf_move_items(right, 0, left, mid, left->nritems - mid);
	node_insert_ptr(tree, path->nodes[1], path->slots[1] + 1, &right->items[0].key, right);
	if (slot >= mid) {
		path->nodes[0] = right;
		path->slots[0] = slot - mid;
		path->slots[1]++;
	}
}

/*
 * split_leaf(): make room for data_size bytes (item header included) at
 * path->slots[0]. The leaf and its parent are writable; the parent has a
 * free slot (the search split it on the way down).
 */
static void split_leaf(struct btree *tree, struct transaction *txn, const struct btree_key *key,
		       struct btree_path *path, uint32_t data_size, bool extend)
{
	uint32_t capacity = btree_leaf_capacity(nodesize_of(txn));
	if (path->levels < 2)
		insert_new_root(tree, txn, path, 0);
	else if (data_size) {
		struct tree_block *l = path->nodes[0];
		uint32_t slot = path->slots[0];
		uint32_t needed = data_size;
		if (slot < l->nritems)
			needed -= MIN(needed, leaf_free_space(txn, l));
		if (push_leaf_right(tree, txn, path, needed, needed, false, 0)) {
			needed = data_size;
			if (slot > 0)
				needed -= MIN(needed, leaf_free_space(txn, path->nodes[0]));
			push_leaf_left(tree, txn, path, needed, needed, false, UINT32_MAX);
		}
		if (leaf_free_space(txn, path->nodes[0]) >= data_size)
			return;
	}
	for (int round = 0; round < 2; round++) {
		struct tree_block *l = path->nodes[0];
		uint32_t slot = path->slots[0], nritems = l->nritems;
		uint32_t mid = (nritems + 1) / 2;
		bool empty_leaf = false, again = false;
		if (mid <= slot) {
			if (nritems == 1 || leaf_space_used(l, mid, nritems - mid) + data_size > capacity) {
				if (slot >= nritems)
					empty_leaf = true;
				else {
					mid = slot;
					again = mid != nritems &&
						leaf_space_used(l, mid, nritems - mid) + data_size > capacity;
				}
			}
		} else if (leaf_space_used(l, 0, mid) + data_size > capacity) {
			if (!extend && data_size && slot == 0)
				empty_leaf = true;
			else if ((extend || !data_size) && slot == 0)
				mid = 1;
			else {
				mid = slot;
				again = mid != nritems && leaf_space_used(l, mid, nritems - mid) + data_size > capacity;
			}
		}
		if (empty_leaf) {
			uint32_t at = mid <= slot ? path->slots[1] + 1 : path->slots[1];
			insert_empty_leaf(tree, txn, path, at, key);
			if (at == 0)
				fixup_low_keys(path, 0, key);
			return;
		}
		split_leaf_at(tree, txn, path, mid);
		if (!again || leaf_free_space(txn, path->nodes[0]) >= data_size)
			return;
	}
}

/* --- the search ------------------------------------------------------- */

/*
 * node_find_slot() and leaf_find_slot() for an insert, which mostly goes
 * after every key of the tree: a new inode's items (the highest inode
 * number) at the right edge. One compare with the block's last key answers
 * those without the binary search: a third of an inode's insert
 * (docs/performance.md, round 14a).
 */
static uint32_t node_insert_slot(const struct tree_block *node, const struct btree_key *key)
{
	if (btree_key_compare(key, &node->children[node->nritems - 1].key) >= 0)
		return node->nritems - 1u;
	return node_find_slot(node, key);
}

static uint32_t leaf_insert_slot(const struct tree_block *leaf, const struct btree_key *key, bool *exact)
{
	if (leaf->nritems && !(leaf->flags & TREE_BLOCK_RUNS) &&
	    btree_key_compare(key, &leaf->items[leaf->nritems - 1].key) > 0) {
		*exact = false;
		return leaf->nritems;
	}
	return leaf_find_slot(leaf, key, exact);
}

enum search_intent { SEARCH_CHANGE = 0, SEARCH_INSERT = 1, SEARCH_DELETE = -1 };

/*
 * btrfs_search_slot(cow=1): returns true when the key exists. On return
 * every block on the path is writable and, for SEARCH_INSERT, the leaf has
 * ins_len bytes free.
 */
static bool btree_search(struct btree *tree, struct transaction *txn, const struct btree_key *key,
			 enum search_intent intent, uint32_t ins_len, struct btree_path *path)
{
	uint32_t node_capacity = btree_node_capacity(nodesize_of(txn));
again:
	path->levels = tree->root->level + 1;
	path->nodes[path->levels - 1] = tree->root;
	for (int level = path->levels - 1; level >= 0; level--) {
		struct tree_block *b = cow_path_block(tree, txn, path, (unsigned)level);
		if (level > 0) {
			path->slots[level] = intent == SEARCH_INSERT ? node_insert_slot(b, key) : node_find_slot(b, key);
			if (intent == SEARCH_INSERT && b->nritems >= node_capacity - BTRFS_NODE_SPLIT_SLACK) {
				/* As setup_nodes_for_search: split (or push) once and go on
				 * down whichever half now holds the key. */
				split_node(tree, txn, path, (unsigned)level);
				b = path->nodes[level];
			}
			uint32_t slot = path->slots[level];
			if (intent == SEARCH_DELETE && b->nritems < node_capacity / BTRFS_NODE_BALANCE_DIVISOR &&
			    balance_node(tree, txn, path, (unsigned)level))
				goto again;
			path->nodes[level - 1] = b->children[slot].block;
			continue;
		}
		bool exact;
		path->slots[0] = intent == SEARCH_INSERT ? leaf_insert_slot(b, key, &exact) : leaf_find_slot(b, key, &exact);
		if (intent == SEARCH_INSERT && leaf_free_space(txn, b) < ins_len) {
			split_leaf(tree, txn, key, path, ins_len, exact);
			/* The split may have moved the slot; find it again in the new leaf. */
			path->slots[0] = leaf_find_slot(path->nodes[0], key, &exact);
			if (leaf_free_space(txn, path->nodes[0]) < ins_len)
				goto again;
		}
		return exact;
	}
	g_assert_not_reached();
}

/* --- public operations -------------------------------------------------- */

void btree_init(struct btree *tree, struct transaction *txn, uint64_t id)
{
	memset(tree, 0, sizeof(*tree));
	if (!btree_owner_packs(id))
		g_error("btree: tree id %" PRIu64 " has no 32-bit owner (BT11)", id);
	tree->id = id;
	tree->links = 1; /* BT18: a path stamped 0 was never found linked */
	tree->root = blockstore_alloc_block(txn->store, id, 0, txn->transid);
	block_created(txn, tree->root);
	tree->root_dirty = true;
}

/* The read-only descent from block `b` (on path, or the root) to the key. */
static bool descend(struct tree_block *b, const struct btree_key *key, struct btree_path *path)
{
	for (;;) {
		path->nodes[b->level] = b;
		if (!b->level) {
			bool exact;
			path->slots[0] = leaf_find_slot(b, key, &exact);
			return exact;
		}
		uint32_t slot = node_find_slot(b, key);
		path->slots[b->level] = slot;
		b = b->children[slot].block;
	}
}

void btree_set_root(struct btree *tree, struct tree_block *root)
{
	tree->root = root;
	tree->links++; /* BT18 */
}

bool btree_lookup(const struct btree *tree, const struct btree_key *key, struct btree_path *path)
{
	path->levels = tree->root->level + 1;
	return descend(tree->root, key, path);
}

/*
 * Would a descent from the root pass through path->nodes[level]? Certainly
 * when the key lies between the block's first and last keys: by BT1 and BT2
 * every separator above it that is <= its first key leads to it, and its
 * last key is below the next sibling's first key. The root covers every key.
 */
static bool path_block_covers(const struct btree_path *path, unsigned level, const struct btree_key *key)
{
	const struct tree_block *b = path->nodes[level];
	if (level + 1 == path->levels)
		return true;
	if (!b->nritems || btree_key_compare(key, block_first_key(b)) < 0)
		return false;
	const struct btree_key *last = b->level ? &b->children[b->nritems - 1].key
						: &btree_leaf_item(b, b->nritems - 1)->key;
	return btree_key_compare(key, last) <= 0;
}

static inline bool path_is_current(const struct btree *tree, const struct btree_path *path)
{
	const struct tree_block *root = tree->root;
	unsigned levels = path->levels;
	if (levels - 1u >= G_N_ELEMENTS(path->nodes) || !root || path->nodes[levels - 1] != root ||
	    root->level + 1u != levels)
		return false; /* levels 0 wraps to above the array */
	/* Only pointers already proven linked are read: a path to blocks since
	 * freed is compared, never followed. */
	for (unsigned level = levels - 1; level > 0; level--) {
		const struct tree_block *node = path->nodes[level];
		uint32_t slot = path->slots[level];
		if (slot >= node->nritems || node->children[slot].block != path->nodes[level - 1])
			return false;
	}
	return true;
}

bool btree_path_is_current(const struct btree *tree, const struct btree_path *path)
{
	return path_is_current(tree, path);
}

/* An absent key that leaf_key_just_after() found below the item at `slot`:
 * when the item before that is below the key too, leaf_find_slot() of the
 * leaf answers `slot`, and the leaf is the one a descent reaches (as
 * key_goes_at_slot() says of an insert). A create asks for absent keys
 * just after an item it found: a new file's extents after its inode item
 * at writeback, whose search of the leaf was a tenth of the writeback
 * (docs/performance.md, round 17, creates). */
static int __attribute__((noinline)) leaf_key_absent_at(struct btree_path *path, const struct btree_key *key,
							uint32_t slot)
{
	const struct tree_block *leaf = path->nodes[0];
	if (slot == path->slots[0] + 1 && btree_key_compare(&leaf->items[slot - 1].key, key) > 0)
		return -1; /* the key may be before the path's slot */
	path->slots[0] = slot;
	return 0;
}

/* Is `key` one of the few items after the path's slot in its leaf (1), or
 * absent between two of them (0)? Then the path moves to it (or to the
 * item above it): what descend() from the leaf finds, for a few key
 * compares instead of a binary search of the leaf; -1 when the leaf's
 * next few items do not say. Lookups in key order (a grep's reads of
 * inodes made one after another) land here. */
static int leaf_key_just_after(struct btree_path *path, const struct btree_key *key)
{
	const struct tree_block *leaf = path->nodes[0];
	if (leaf->flags & TREE_BLOCK_RUNS)
		return -1; /* a run's members are made up one at a time */
	uint32_t end = MIN(leaf->nritems, path->slots[0] + 5u);
	for (uint32_t slot = path->slots[0] + 1; slot < end; slot++) {
		int cmp = btree_key_compare(&leaf->items[slot].key, key);
		if (cmp >= 0) {
			if (cmp)
				return leaf_key_absent_at(path, key, slot);
			path->slots[0] = slot;
			return 1;
		}
	}
	return -1;
}

/*
 * Is `key` in the leaf after the path's, under the same parent, among its
 * first few items? Then the path moves there: what descend() from the
 * parent finds. Reads in key order cross into the next leaf once a leaf
 * (a twelfth of the bench's reads): the parent's next two separators say
 * which child descend() would take, and a scan of the child's first items
 * reads one or two of its cache lines where a binary search of a leaf not
 * yet in the cache read six (docs/performance.md round 14c).
 *
 *   parent: ... | sep[s] | sep[s+1] <= key < sep[s+2] | ...
 *                  |          |
 *              path's leaf   next leaf: items 0 .. 4 scanned
 */
static bool next_leaf_holds(struct btree_path *path, const struct btree_key *key, bool *exact)
{
	const struct tree_block *parent = path->nodes[1];
	uint32_t slot = path->slots[1] + 1;
	if (slot >= parent->nritems || btree_key_compare(&parent->children[slot].key, key) > 0 ||
	    (slot + 1 < parent->nritems && btree_key_compare(&parent->children[slot + 1].key, key) <= 0))
		return false; /* descend() would take another child */
	struct tree_block *leaf = parent->children[slot].block;
	if (leaf->flags & TREE_BLOCK_RUNS)
		return false;
	uint32_t end = MIN(leaf->nritems, 5u);
	for (uint32_t i = 0; i < end; i++) {
		int cmp = btree_key_compare(&leaf->items[i].key, key);
		if (cmp >= 0) { /* the first slot >= key: leaf_find_slot()'s answer */
			path->nodes[0] = leaf;
			path->slots[0] = i;
			path->slots[1] = slot;
			*exact = !cmp;
			return true;
		}
	}
	return false;
}

/* lookup_from_linked() for a key not at or just after the path's slot:
 * from the lowest block of the path that covers it. */
static bool __attribute__((noinline)) lookup_climbing(const struct btree_key *key, struct btree_path *path)
{
	unsigned level = 0;
	while (!path_block_covers(path, level, key))
		level++;
	bool exact;
	if (level == 1 && next_leaf_holds(path, key, &exact))
		return exact;
	return descend(path->nodes[level], key, path);
}

/* btree_lookup_near() from a path known to be linked from the current root.
 * Nine in ten of a grep's lookups end in the path's leaf (docs/performance.md
 * round 15d): the climb is a call of its own, off their frame. */
static bool lookup_from_linked(const struct btree_key *key, struct btree_path *path)
{
	const struct tree_block *leaf = path->nodes[0];
	if (path->slots[0] < leaf->nritems && !btree_key_compare(&btree_leaf_item(leaf, path->slots[0])->key, key))
		return true; /* the same key again: the path is the answer */
	int found = leaf_key_just_after(path, key);
	if (found >= 0)
		return found; /* in the path's leaf, so on the one path from the root to it */
	return lookup_climbing(key, path);
}

bool btree_lookup_near(const struct btree *tree, const struct btree_key *key, struct btree_path *path)
{
	if (!path->levels || path->levels != tree->root->level + 1 || path->nodes[path->levels - 1] != tree->root)
		return btree_lookup(tree, key, path);
	return lookup_from_linked(key, path);
}

/* BT18: a path stamped with the tree's links is linked, and a check from
 * the root (54 instructions of a read at three levels, docs/performance.md
 * round 14c) is made only after a change of links. */
static inline bool kept_path_linked(const struct btree *tree, struct btree_path *path)
{
	if (__builtin_expect(path->links != tree->links || !path->levels, 0)) {
		if (!path_is_current(tree, path))
			return false;
		path->links = tree->links;
	}
	return true;
}

bool btree_path_kept_linked(const struct btree *tree, struct btree_path *path)
{
	return kept_path_linked(tree, path);
}

bool btree_lookup_kept(const struct btree *tree, const struct btree_key *key, struct btree_path *path)
{
	if (!kept_path_linked(tree, path)) {
		path->links = tree->links; /* the descent leaves it linked */
		return btree_lookup(tree, key, path);
	}
	/* The hop: one key compare on the line of the item it names, where the
	 * scan of leaf_key_just_after() read every item between (the lines of a
	 * file's other items a read never looks at). A key is in one leaf
	 * (BT1), so the linked path's leaf holding it is the descent's. */
	const struct tree_block *leaf = path->nodes[0];
	uint32_t from = path->slots[0], guess = from + path->hop;
	if (path->hop && guess < leaf->nritems && !(leaf->flags & TREE_BLOCK_RUNS) &&
	    !btree_key_compare(&leaf->items[guess].key, key)) {
		path->slots[0] = guess;
		return true;
	}
	bool found = lookup_from_linked(key, path);
	if (found && path->nodes[0] == leaf && path->slots[0] > from && path->slots[0] - from < 5u)
		path->hop = (uint8_t)(path->slots[0] - from); /* what the scan found; a climb's jump is no stride */
	return found;
}

bool btree_kept_path_check(const struct btree *tree, const struct btree_path *path, GError **error)
{
	if (!path->levels || path->links != tree->links || path_is_current(tree, path))
		return true;
	g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
		    "BT18 a kept path stamped with tree %" PRIu64 "'s links (%" PRIu64 ") but not linked from its root",
		    tree->id, tree->links);
	return false;
}

bool btree_path_next_leaf(struct btree_path *path)
{
	unsigned level = 1;
	while (level < path->levels && path->slots[level] + 1 >= path->nodes[level]->nritems)
		level++;
	if (level >= path->levels)
		return false;
	path->slots[level]++;
	for (; level > 0; level--) {
		path->nodes[level - 1] = path->nodes[level]->children[path->slots[level]].block;
		path->slots[level - 1] = 0;
	}
	return true;
}

uint64_t btree_visit_range_near(const struct btree *tree, const struct btree_key *first,
				const struct btree_key *last, btree_visit_fn cb, void *opaque,
				struct btree_path *path)
{
	uint64_t visited = 0;
	btree_lookup_near(tree, first, path);
	for (;;) {
		const struct tree_block *leaf = path->nodes[0];
		struct btree_leaf_cursor cursor;
		btree_leaf_cursor_init(&cursor, leaf, path->slots[0]);
		for (uint32_t i = path->slots[0]; i < leaf->nritems; i++) {
			const struct btree_item *item = btree_leaf_cursor_next(&cursor);
			path->slots[0] = i;
			if (btree_key_compare(&item->key, last) > 0)
				return visited;
			visited++;
			if (!cb(item, opaque))
				return visited;
		}
		if (!btree_path_next_leaf(path))
			return visited;
	}
}

/* The item at path, in a leaf the running transaction wrote, for change. */
static struct btree_item *writable_item(const struct btree_path *path)
{
	leaf_make_private(path->nodes[0]);
	return btree_path_item(path);
}

/* cow_found_path() for a leaf an earlier transaction wrote: the path's
 * blocks from the root down, each copied unless this transaction wrote it. */
static void __attribute__((noinline)) cow_found_path_down(struct btree *tree, struct transaction *txn,
							  struct btree_path *path)
{
	for (int level = path->levels - 1; level >= 0; level--) {
		struct tree_block *b = path->nodes[level];
		if (!level || should_cow_block(txn, b)) /* a node this transaction wrote stays */
			b = cow_path_block(tree, txn, path, (unsigned)level);
		if (level > 0)
			path->nodes[level - 1] = b->children[path->slots[level]].block;
	}
}

/* COW the path a lookup found, top-down; the leaf may still share its items. */
static inline void cow_found_path(struct btree *tree, struct transaction *txn, struct btree_path *path)
{
	/* btree_search(SEARCH_CHANGE) without the searching: a copy has its
	 * source's keys, so every slot on the path stays what it was. By BT5 a
	 * leaf this transaction wrote hangs from nodes it wrote: then nothing on
	 * the path is copied (most of a grep's atime writes, docs/performance.md
	 * round 13a). */
	if (!should_cow_block(txn, path->nodes[0]))
		leaf_prepare_write(txn, path->nodes[0]);
	else
		cow_found_path_down(tree, txn, path);
}

struct btree_item *btree_path_for_write(struct btree *tree, struct transaction *txn, struct btree_path *path)
{
	cow_found_path(tree, txn, path);
	return writable_item(path);
}

/* The inode's atime in an overlay of the shared or the plain form (BT7). */
static int64_t __attribute__((noinline)) unmarked_overlay_atime(const struct atime_overlay *overlay, uint32_t slot)
{
	return overlay_atime(overlay, overlay_index(overlay, slot));
}

/* Every access asks it: no overlay, or a marked one (a grep's), is answered
 * here. */
static inline int64_t leaf_inode_atime(const struct tree_block *leaf, uint32_t slot)
{
	const struct atime_overlay *overlay = leaf_overlay(leaf);
	if (overlay) {
		if (__builtin_expect(overlay->form != OVERLAY_MARKED, 0))
			return unmarked_overlay_atime(overlay, slot);
		if (overlay_marked(overlay, slot))
			return overlay->value[0];
	}
	return item_inode(btree_leaf_item(leaf, slot))->atime;
}

int64_t btree_leaf_inode_atime(const struct tree_block *leaf, uint32_t slot)
{
	return leaf_inode_atime(leaf, slot);
}

int64_t btree_path_inode_atime(const struct btree_path *path)
{
	return leaf_inode_atime(path->nodes[0], path->slots[0]);
}

/* btree_path_write_inode_atime() where the overlay must change form or
 * comes into being. */
static void __attribute__((noinline)) write_atime_reshaping(struct tree_block *leaf, uint32_t slot, int64_t atime)
{
	struct atime_overlay *overlay = leaf_overlay(leaf);
	if (!overlay && leaf_items_shared(leaf))
		overlay = leaf_new_marked_overlay(leaf);
	if (!overlay) {
		item_inode(btree_leaf_item(leaf, slot))->atime = atime;
		return;
	}
	if (overlay->form == OVERLAY_MARKED) {
		if (overlay_mark(overlay, slot, atime))
			return;
		leaf_set_overlay_apart(leaf, overlay_of_leaf(leaf));
	}
	overlay_set_atime(&leaf->atimes, overlay_index(leaf->atimes, slot), atime);
}

/* The atime write's bit in a marked overlay that holds `atime` already
 * (overlay_mark()'s answer, at once): false when the overlay is not so. */
static inline bool write_atime_marked(struct tree_block *leaf, uint32_t slot, int64_t atime)
{
	struct atime_overlay *overlay = leaf_overlay(leaf);
	if (!overlay || overlay->form != OVERLAY_MARKED || !overlay->values || overlay->value[0] != atime)
		return false;
	overlay_marks(overlay)[slot / 64] |= 1ull << (slot % 64);
	return true;
}

/* leaf_prepare_write() would change nothing: no runs, listed for the commit
 * or still sharing its array, not an extent-tree leaf (those it may list for
 * compaction: they take the general way). */
static inline bool leaf_ready_for_write(const struct tree_block *leaf)
{
	return !(leaf->flags & TREE_BLOCK_RUNS) &&
	       ((leaf->flags & TREE_BLOCK_WRITTEN_LISTED) || leaf_items_shared(leaf)) &&
	       leaf->packed_owner != BTRFS_EXTENT_TREE_OBJECTID;
}

/* btree_path_write_inode_atime() the general way: the path made writable
 * (a shared leaf copied, its references changed), then the overlay. */
static void __attribute__((noinline)) write_inode_atime_otherwise(struct btree *tree, struct transaction *txn,
								   struct btree_path *path, int64_t atime)
{
	cow_found_path(tree, txn, path);
	if (!write_atime_marked(path->nodes[0], path->slots[0], atime))
		write_atime_reshaping(path->nodes[0], path->slots[0], atime);
}

/*
 * Most of a grep's atime writes go to a leaf this transaction copied
 * already, whose marked overlay holds the one atime its reads wrote (the
 * kernel's coarse clock): a bit to set, answered here without a call (and
 * so without a frame). Anything else copies the path first
 * (cow_found_path()) or reshapes.
 */
void btree_path_write_inode_atime(struct btree *tree, struct transaction *txn, struct btree_path *path,
				  int64_t atime)
{
	struct tree_block *leaf = path->nodes[0];
	if (__builtin_expect(!should_cow_block(txn, leaf) && leaf_ready_for_write(leaf), 1) &&
	    write_atime_marked(leaf, path->slots[0], atime))
		return;
	write_inode_atime_otherwise(tree, txn, path, atime);
}

/* The rightmost item of the subtree under `b`. */
static const struct btree_item *last_item_below(const struct tree_block *b)
{
	while (b->level)
		b = b->children[b->nritems - 1].block;
	return b->nritems ? btree_leaf_item(b, b->nritems - 1) : NULL;
}

const struct btree_item *btree_lookup_le(const struct btree *tree, const struct btree_key *key)
{
	struct btree_path path;
	if (btree_lookup(tree, key, &path))
		return btree_path_item(&path);
	if (path.slots[0] > 0)
		return btree_leaf_item(path.nodes[0], path.slots[0] - 1);
	/* The predecessor is the last item of the nearest subtree to the left. */
	for (unsigned level = 1; level < path.levels; level++) {
		const struct tree_block *node = path.nodes[level];
		uint32_t slot = path.slots[level];
		if (slot > 0)
			return last_item_below(node->children[slot - 1].block);
	}
	return NULL;
}

struct btree_item *btree_lookup_for_write(struct btree *tree, struct transaction *txn,
					  const struct btree_key *key)
{
	struct btree_path path;
	if (!btree_search(tree, txn, key, SEARCH_CHANGE, 0, &path))
		return NULL;
	return writable_item(&path);
}

/* A new item of the private leaf in slot *item, its payload in the leaf's
 * heap (room reserved) or in the item. Always inline: LTO kept it a call
 * (8 of its ~70 instructions an item the frame's). */
static inline __attribute__((always_inline)) void leaf_new_item(struct tree_block *leaf, struct btree_item *item, const struct btree_key *key,
				 uint32_t size, const union item_payload *payload)
{
	if (payload && !payload_fits_kind(key->type, payload))
		g_error("btree: item (%" PRIu64 " %u %" PRIu64 ") inserted with bytes beyond its payload's kind",
			key->objectid, key->type, key->offset);
	*item = (struct btree_item){ .key = *key, .size = (uint16_t)size /* fits: BT4, checked by the caller */ };
	uint32_t heap_bytes = heap_bytes_of(item);
	if (heap_bytes)
		item->payload.at = heap_put(leaf, key->type, payload, heap_bytes);
	else if (btree_payload_kind(key->type) == BTREE_PAYLOAD_VALUE)
		item->payload.value = payload ? payload->value : 0;
	leaf->leaf_bytes += item_bytes(item);
}

static void leaf_insert_at(struct btree_path *path, const struct btree_key *key, uint32_t size,
			   const union item_payload *payload)
{
	struct tree_block *leaf = path->nodes[0];
	uint32_t slot = path->slots[0];
	ensure_capacity(leaf, leaf->nritems + 1);
	uint32_t heap_bytes = heap_bytes_by_type[key->type];
	if (heap_bytes)
		heap_reserve(leaf, heap_bytes);
	memmove(&leaf->items[slot + 1], &leaf->items[slot], (leaf->nritems - slot) * sizeof(struct btree_item));
	leaf_new_item(leaf, &leaf->items[slot], key, size, payload);
	leaf->nritems++;
	if (slot == 0)
		fixup_low_keys(path, 0, key);
}

/* leaf_insert_at() for `count` sorted keys at the path's slot, with one
 * move of the items after them: a directory's batch of DIR_INDEX items
 * went in item by item, each moving the leaf's later items again. */
static void leaf_insert_run(struct btree_path *path, const struct btree_key *keys, const uint32_t *sizes,
			    const union item_payload *payloads, uint32_t count)
{
	struct tree_block *leaf = path->nodes[0];
	uint32_t slot = path->slots[0], heap_bytes = 0;
	ensure_capacity(leaf, leaf->nritems + count);
	for (uint32_t i = 0; i < count; i++) {
		g_assert(i == 0 || btree_key_compare(&keys[i - 1], &keys[i]) < 0);
		heap_bytes += heap_bytes_by_type[keys[i].type];
	}
	g_assert(slot == leaf->nritems || btree_key_compare(&keys[count - 1], &leaf->items[slot].key) < 0);
	if (heap_bytes)
		heap_reserve_end(leaf, heap_bytes);
	memmove(&leaf->items[slot + count], &leaf->items[slot], (leaf->nritems - slot) * sizeof(struct btree_item));
	for (uint32_t i = 0; i < count; i++)
		leaf_new_item(leaf, &leaf->items[slot + i], &keys[i], sizes[i], payloads ? &payloads[i] : NULL);
	leaf->nritems += count;
	if (slot == 0)
		fixup_low_keys(path, 0, &keys[0]);
}

struct btree_item *btree_insert_item(struct btree *tree, struct transaction *txn, const struct btree_key *key,
				     uint32_t size, const union item_payload *payload)
{
	struct btree_path path;
	uint32_t need = BTRFS_ITEM_HEADER_SIZE + size;
	g_assert(need <= btree_leaf_capacity(nodesize_of(txn)));
	bool exists = btree_search(tree, txn, key, SEARCH_INSERT, need, &path);
	g_assert(!exists);
	leaf_insert_at(&path, key, size, payload);
	return btree_path_item(&path);
}

/*
 * btrfs_insert_empty_items() with a batch: one search makes room for all
 * of them, so a leaf that cannot take the batch is split (at the insertion
 * slot when the batch would not fit beside the right half) rather than once
 * per item. The keys are sorted and no item of the tree sorts between them.
 */
void btree_insert_items(struct btree *tree, struct transaction *txn, const struct btree_key *keys,
			const uint32_t *sizes, const union item_payload *payloads, uint32_t count)
{
	struct btree_path path;
	uint32_t need = 0;
	for (uint32_t i = 0; i < count; i++)
		need += BTRFS_ITEM_HEADER_SIZE + sizes[i];
	g_assert(count > 0 && need <= btree_leaf_capacity(nodesize_of(txn)));
	bool exists = btree_search(tree, txn, &keys[0], SEARCH_INSERT, need, &path);
	g_assert(!exists);
	leaf_insert_run(&path, keys, sizes, payloads, count);
}

struct btree_item *btree_resize_item(struct btree *tree, struct transaction *txn, const struct btree_key *key,
				     uint32_t new_size)
{
	struct btree_path path;
	if (!btree_lookup(tree, key, &path))
		return NULL;
	return btree_resize_item_at(tree, txn, key, new_size, &path);
}

/*
 * Would btree_search(SEARCH_INSERT, ins_len) on the path a lookup just found
 * only copy it? Yes when no node on it is within BTRFS_NODE_SPLIT_SLACK of
 * full (the search would split it) and the leaf has ins_len bytes free (it
 * would push or split): the search then visits the same blocks and slots,
 * copying them top-down as cow_found_path() does. An extent item grows this
 * way at almost every ref head (refs.c), and a second descent from the root
 * was a third of the cost of the throttle's records (docs/performance.md,
 * round 9).
 */
static inline bool search_splits_no_node(const struct transaction *txn, const struct btree_path *path)
{
	uint32_t node_capacity = btree_node_capacity(nodesize_of(txn));
	for (unsigned level = 1; level < path->levels; level++)
		if (path->nodes[level]->nritems >= node_capacity - BTRFS_NODE_SPLIT_SLACK)
			return false;
	return true;
}

static inline bool search_insert_only_copies(const struct transaction *txn, const struct btree_path *path, uint32_t ins_len)
{
	return search_splits_no_node(txn, path) && leaf_free_space(txn, path->nodes[0]) >= ins_len;
}

struct btree_item *btree_resize_item_at(struct btree *tree, struct transaction *txn, const struct btree_key *key,
					uint32_t new_size, struct btree_path *path)
{
	uint32_t old_size = btree_path_item(path)->size;
	/* As btree_insert_item: an item never outgrows an empty leaf (callers check). */
	g_assert(BTRFS_ITEM_HEADER_SIZE + new_size <= btree_leaf_capacity(nodesize_of(txn)));
	if (new_size > old_size) {
		if (search_insert_only_copies(txn, path, new_size - old_size))
			cow_found_path(tree, txn, path);
		else if (!btree_search(tree, txn, key, SEARCH_INSERT, new_size - old_size, path))
			return NULL;
	} else {
		/* A shrink needs no room: btree_search(SEARCH_CHANGE) would copy
		 * exactly this path. */
		btree_path_for_write(tree, txn, path);
	}
	struct btree_item *item = writable_item(path);
	path->nodes[0]->leaf_bytes = path->nodes[0]->leaf_bytes - item->size + new_size;
	item->size = (uint16_t)new_size;
	return item;
}

/*
 * btree_insert_item() from a path a lookup in this tree left: the key is
 * looked up near it (btree_lookup_near finds the path a descent from the
 * root finds), and when search_insert_only_copies() says btree_search(
 * SEARCH_INSERT) would only copy that path, it is copied as the search
 * would. A writeback inserts a file's extent beside the inode item it just
 * looked up; the second descent was a sixth of a create (docs/performance.md,
 * round 11c).
 */
/*
 * Does the key go between the two items on either side of the slot of a
 * path linked from the root? Then btree_lookup_near() would leave the path
 * as it is: a key between two items of a leaf is in the leaf's range, which
 * a descent from the root reaches (BT1, BT2), and the slot is the first
 * whose key is above it. A writeback's file extent goes just before where
 * the visit of the file's extents stopped (its next inode's item), a new
 * directory entry just before where the name check's visit of its hash
 * window stopped: two compares instead of a lookup (docs/performance.md,
 * round 14a).
 */
static bool key_goes_at_slot(const struct btree *tree, const struct btree_path *path, const struct btree_key *key)
{
	if (!path->levels || path->levels != tree->root->level + 1 || path->nodes[path->levels - 1] != tree->root)
		return false;
	const struct tree_block *leaf = path->nodes[0];
	uint32_t slot = path->slots[0];
	return slot > 0 && slot < leaf->nritems && !(leaf->flags & TREE_BLOCK_RUNS) &&
	       btree_key_compare(&leaf->items[slot - 1].key, key) < 0 &&
	       btree_key_compare(key, &leaf->items[slot].key) < 0;
}

struct btree_item *btree_insert_item_near(struct btree *tree, struct transaction *txn, const struct btree_key *key,
					  uint32_t size, const union item_payload *payload, struct btree_path *path)
{
	uint32_t need = BTRFS_ITEM_HEADER_SIZE + size;
	g_assert(need <= btree_leaf_capacity(nodesize_of(txn)));
	bool exists = !key_goes_at_slot(tree, path, key) && btree_lookup_near(tree, key, path);
	if (search_insert_only_copies(txn, path, need))
		cow_found_path(tree, txn, path);
	else
		exists = btree_search(tree, txn, key, SEARCH_INSERT, need, path);
	g_assert(!exists);
	leaf_insert_at(path, key, size, payload);
	return btree_path_item(path);
}

/* The key below which a lookup finds its place after the item at the path
 * in the same leaf: the next item's, or, at the leaf's end, the first key of
 * the leaf's right neighbour (the next child's at the lowest node on the
 * path that has one: every node on the path sends a key below it the same
 * way); NULL for the rightmost leaf's end. */
static const struct btree_key *leaf_bound_after(const struct btree_path *path)
{
	const struct tree_block *leaf = path->nodes[0];
	if (path->slots[0] + 1 < leaf->nritems)
		return &leaf->items[path->slots[0] + 1].key;
	for (unsigned level = 1; level < path->levels; level++) {
		const struct tree_block *node = path->nodes[level];
		if (path->slots[level] + 1 < node->nritems)
			return &node->children[path->slots[level] + 1].key;
	}
	return NULL;
}

/*
 * How many of keys[0..count) (sizes[]) the inserts of keys[1] ... after
 * keys[0], just inserted at the path, would place one slot on each in the
 * same leaf with no split: ascending keys below leaf_bound_after() and room
 * for each in turn (search_insert_only_copies(); the nodes on the path do
 * not change meanwhile). Only items without a heap payload: they go in as
 * leaf_insert_at() puts an item with no payload. At least 1.
 */
static uint32_t insert_run_length(const struct transaction *txn, const struct btree_path *path,
				  const struct btree_key *keys, const uint32_t *sizes, uint32_t count)
{
	const struct btree_key *bound = leaf_bound_after(path);
	uint32_t free = leaf_free_space(txn, path->nodes[0]), n = 1;
	for (; n < count; n++) {
		struct btree_item made = { .key = keys[n], .size = (uint16_t)sizes[n] };
		uint32_t need = BTRFS_ITEM_HEADER_SIZE + sizes[n];
		if (btree_key_compare(&keys[n - 1], &keys[n]) >= 0 || (bound && btree_key_compare(&keys[n], bound) >= 0) ||
		    heap_bytes_of(&made) || free < need || !search_insert_only_copies(txn, path, need))
			break;
		free -= need;
	}
	return n;
}

uint32_t btree_insert_items_near(struct btree *tree, struct transaction *txn, const struct btree_key *keys,
				 const uint32_t *sizes, uint32_t count, struct btree_path *path)
{
	btree_insert_item_near(tree, txn, &keys[0], sizes[0], NULL, path);
	uint32_t run = insert_run_length(txn, path, keys, sizes, count);
	if (run == 1)
		return 1;
	/* As the run's single inserts would: the second's cow_found_path()
	 * lists the leaf the first made private for the commit (BT12), and each
	 * leaf_insert_at() grows the array by ensure_capacity() a slot at a
	 * time. Then one memmove. */
	struct tree_block *leaf = path->nodes[0];
	leaf_prepare_write(txn, leaf);
	for (uint32_t n = 1; n < run; n++)
		ensure_capacity(leaf, leaf->nritems + n);
	uint32_t slot = path->slots[0] + 1;
	memmove(&leaf->items[slot + run - 1], &leaf->items[slot], (leaf->nritems - slot) * sizeof(struct btree_item));
	for (uint32_t n = 1; n < run; n++) {
		struct btree_item *item = &leaf->items[slot + n - 1];
		*item = (struct btree_item){ .key = keys[n], .size = (uint16_t)sizes[n] };
		leaf->leaf_bytes += item_bytes(item);
	}
	leaf->nritems += run - 1;
	path->slots[0] += run - 1;
	return run;
}

/* How far btree_lookup_ahead() looks along the leaf before it searches. */
#define LOOKUP_AHEAD_SLOTS 8u

/*
 * btree_lookup_near() for a key above the item at *path: the extent tree's
 * ref heads run in address order (refs.c), so the next head's item is
 * usually one of the next few of the same leaf. When one of them is >= key
 * and the one before it is < key, the key lies between two items of the
 * leaf: btree_lookup_near() would descend from this leaf (path_block_covers)
 * and its leaf_find_slot() find that slot.
 */
bool btree_lookup_ahead(const struct btree *tree, const struct btree_key *key, struct btree_path *path)
{
	if (!path->levels || path->nodes[path->levels - 1] != tree->root)
		return btree_lookup_near(tree, key, path);
	const struct tree_block *leaf = path->nodes[0];
	uint32_t slot = path->slots[0];
	if ((leaf->flags & TREE_BLOCK_RUNS) || slot >= leaf->nritems ||
	    btree_key_compare(btree_item_key(btree_leaf_item(leaf, slot)), key) >= 0)
		return btree_lookup_near(tree, key, path);
	uint32_t end = MIN(leaf->nritems, slot + 1 + LOOKUP_AHEAD_SLOTS);
	for (uint32_t s = slot + 1; s < end; s++) {
		int cmp = btree_key_compare(btree_item_key(btree_leaf_item(leaf, s)), key);
		if (cmp >= 0) {
			path->slots[0] = s;
			return cmp == 0;
		}
	}
	return btree_lookup_near(tree, key, path);
}

/* leaf_find_slot() for a key known to be above the item at slot `from` - 1
 * of a leaf without runs: the next few items one by one (a batch's records
 * are mostly neighbours), the rest by bisection. */
static uint32_t leaf_find_slot_from(const struct tree_block *leaf, uint32_t from, const struct btree_key *key,
				    bool *exact)
{
	uint32_t end = MIN(leaf->nritems, from + LOOKUP_AHEAD_SLOTS);
	for (; from < end; from++) {
		int cmp = btree_key_compare(&leaf->items[from].key, key);
		if (cmp >= 0) {
			*exact = !cmp;
			return from;
		}
	}
	return bisect_items(leaf, from, leaf->nritems, key, exact);
}

/*
 * The resizes of keys[0], keys[1] ... after a write at *path, while each is
 * an item further on in the same leaf and fits there: what btree_lookup_ahead()
 * and btree_resize_item_at() do for each, without the lookups and the calls.
 * The path's leaf is the running transaction's (so is every node above it,
 * BT5) and private: each of those calls would find the same path, copy
 * nothing and only list the leaf (leaf_prepare_write(), the same for all);
 * a growth that needs a split or a push (no room in the leaf, a node the
 * search would split) ends the run, before it.
 */
uint32_t btree_resize_items_after(struct btree *tree, struct transaction *txn, const struct btree_key *keys,
				  const uint32_t *sizes, uint32_t count, struct btree_path *path)
{
	if (!count || !path->levels || path->nodes[path->levels - 1] != tree->root)
		return 0;
	struct tree_block *leaf = path->nodes[0];
	if (should_cow_block(txn, leaf) || (leaf->flags & (TREE_BLOCK_RUNS | TREE_BLOCK_OVERLAY_HERE)) || leaf->atimes ||
	    leaf_items_shared(leaf))
		return 0;
	bool nodes_stay = search_splits_no_node(txn, path);
	uint32_t capacity = btree_leaf_capacity(nodesize_of(txn)), slot = path->slots[0], n = 0;
	for (; n < count; n++) {
		bool exact;
		uint32_t at = leaf_find_slot_from(leaf, slot + 1, &keys[n], &exact);
		if (!exact)
			break;
		struct btree_item *item = &leaf->items[at];
		uint32_t bytes = leaf->leaf_bytes - item->size + sizes[n];
		if (sizes[n] > item->size && (!nodes_stay || bytes > capacity))
			break;
		leaf->leaf_bytes = bytes;
		item->size = (uint16_t)sizes[n];
		slot = at;
	}
	if (n) {
		leaf_prepare_write(txn, leaf);
		path->slots[0] = slot;
	}
	return n;
}

/* Remove the pointer at path->nodes[level] slot `slot`; a node left empty
 * (never the root) leaves its own parent the same way (btrfs del_ptr). */
static void remove_ptr_and_prune(struct btree *tree, struct transaction *txn, struct btree_path *path, unsigned level,
				 uint32_t slot)
{
	for (;;) {
		struct tree_block *node = path->nodes[level];
		node_remove_ptr(tree, node, slot);
		if (node->nritems == 0 && level + 1 < path->levels) {
			free_emptied_block(txn, node);
			slot = path->slots[++level];
			continue;
		}
		if (slot == 0 && node->nritems)
			fixup_low_keys(path, level, &node->children[0].key);
		return;
	}
}

/* btrfs_del_items() tail: empty leaves leave the tree, thin ones are
 * emptied into their siblings where they fit. False when it did either. */
static bool rebalance_after_delete(struct btree *tree, struct transaction *txn, struct btree_path *path)
{
	struct tree_block *leaf = path->nodes[0];
	if (path->levels < 2)
		return true;
	if (leaf->nritems == 0) {
		remove_ptr_and_prune(tree, txn, path, 1, path->slots[1]);
		free_emptied_block(txn, leaf);
		return false;
	}
	if (leaf->leaf_bytes >= btree_leaf_capacity(nodesize_of(txn)) / BTRFS_LEAF_MERGE_DIVISOR)
		return true;
	push_leaf_left(tree, txn, path, 1, 1, true, UINT32_MAX);
	if (path->nodes[0] == leaf && leaf->nritems)
		push_leaf_right(tree, txn, path, 1, 1, true, 0);
	if (leaf->nritems == 0) {
		struct tree_block *parent = path->nodes[1];
		for (uint32_t s = 0; s < parent->nritems; s++) {
			if (parent->children[s].block == leaf) {
				path->slots[1] = s;
				remove_ptr_and_prune(tree, txn, path, 1, s);
				break;
			}
		}
		free_emptied_block(txn, leaf);
	}
	return false;
}

/* btrfs_del_items() of the item at a path btree_search(SEARCH_DELETE) made
 * writable: true when the path is the one a lookup of the deleted key finds
 * now, false when a leaf was emptied or thinned into its siblings, or the
 * leaf's first item went (its new first key sends that lookup to the left). */
static bool delete_at(struct btree *tree, struct transaction *txn, struct btree_path *path)
{
	struct tree_block *leaf = path->nodes[0];
	uint32_t slot = path->slots[0];
	struct btree_item *item = writable_item(path);
	leaf->leaf_bytes -= item_bytes(item);
	heap_forget(leaf, item);
	memmove(item, item + 1, (leaf->nritems - slot - 1) * sizeof(struct btree_item));
	leaf->nritems--;
	if (slot == 0 && leaf->nritems)
		fixup_low_keys(path, 0, &leaf->items[0].key);
	return rebalance_after_delete(tree, txn, path) && slot > 0;
}

bool btree_delete_item(struct btree *tree, struct transaction *txn, const struct btree_key *key)
{
	struct btree_path path;
	if (!btree_search(tree, txn, key, SEARCH_DELETE, 0, &path))
		return false;
	delete_at(tree, txn, &path);
	return true;
}

/*
 * Would btree_search(SEARCH_DELETE) on the path a lookup just found only
 * copy it? Yes when balance_node() would leave every node on it as it is:
 * the search balances only a node under half full, and then changes only a
 * root of one child or a node under a quarter full (BTRFS_NODE_MERGE_DIVISOR).
 */
static bool search_delete_only_copies(const struct transaction *txn, const struct btree_path *path)
{
	uint32_t capacity = btree_node_capacity(nodesize_of(txn));
	for (unsigned level = 1; level < path->levels; level++) {
		uint32_t n = path->nodes[level]->nritems;
		if (n >= capacity / BTRFS_NODE_BALANCE_DIVISOR)
			continue;
		if (level + 1 == path->levels ? n != 1 : n >= capacity / BTRFS_NODE_MERGE_DIVISOR)
			continue;
		return false;
	}
	return true;
}

/*
 * How many of keys[0..count) delete_at() would take one after the other from
 * the path's slot, each then the next item of the same leaf, with nothing to
 * rebalance: the leaf stays at least a third full (a root leaf at any fill).
 * rebalance_after_delete() asks only about what is left, which shrinks
 * delete by delete, so the last of the run answers for all of them. (From
 * slot 0 each delete fixes the parents' keys up and the next one finds the
 * leaf again from the root, by its new first key.) At least 1.
 */
static uint32_t delete_run_length(const struct transaction *txn, const struct btree_path *path,
				  const struct btree_key *keys, uint32_t count)
{
	const struct tree_block *leaf = path->nodes[0];
	uint32_t slot = path->slots[0];
	uint32_t floor = path->levels < 2 ? 0 : btree_leaf_capacity(nodesize_of(txn)) / BTRFS_LEAF_MERGE_DIVISOR;
	uint32_t left = leaf->leaf_bytes, n = 0;
	while (n < count && slot + n < leaf->nritems) {
		const struct btree_item *item = &leaf->items[slot + n];
		if (btree_key_compare(&item->key, &keys[n]) || left - item_bytes(item) < floor)
			break;
		left -= item_bytes(item);
		n++;
	}
	return MAX(n, 1u);
}

/* `run` delete_at()s from the path's slot as delete_run_length() allowed
 * them, with one memmove of the items after them and, from slot 0, one fixup
 * of the parents' keys (each delete's would overwrite the one before, on the
 * same parents): the leaf and the path end as that many calls leave them,
 * the path at the slot of the next item. True when that path is the one a
 * lookup of the last key finds (not from slot 0, as delete_at()). */
static bool delete_run_at(struct transaction *txn, struct btree_path *path, uint32_t run)
{
	struct tree_block *leaf = path->nodes[0];
	uint32_t slot = path->slots[0];
	struct btree_item *first = writable_item(path);
	/* What the second delete's cow_found_path() does to a leaf the first
	 * made private: it is listed for the commit now (BT12). */
	leaf_prepare_write(txn, leaf);
	for (uint32_t i = 0; i < run; i++) {
		leaf->leaf_bytes -= item_bytes(&first[i]);
		heap_forget(leaf, &first[i]);
	}
	memmove(first, first + run, (leaf->nritems - slot - run) * sizeof(struct btree_item));
	leaf->nritems -= run;
	if (slot == 0 && leaf->nritems)
		fixup_low_keys(path, 0, &leaf->items[0].key);
	return slot > 0;
}

uint32_t btree_delete_items_near(struct btree *tree, struct transaction *txn, const struct btree_key *keys,
				 uint32_t count, struct btree_path *path)
{
	if (!btree_lookup_ahead(tree, &keys[0], path) || !search_delete_only_copies(txn, path)) {
		path->levels = 0;
		return btree_delete_item(tree, txn, &keys[0]); /* the search's copies and rebalancing */
	}
	cow_found_path(tree, txn, path);
	uint32_t run = count > 1 ? delete_run_length(txn, path, keys, count) : 1;
	if (!(run > 1 ? delete_run_at(txn, path, run) : delete_at(tree, txn, path)))
		path->levels = 0;
	return run;
}

bool btree_delete_item_near(struct btree *tree, struct transaction *txn, const struct btree_key *key,
			    struct btree_path *path)
{
	return btree_delete_items_near(tree, txn, key, 1, path);
}

/* What a visit hands its items to: one at a time, or a leaf's run of
 * consecutive items at a time (a leaf with runs: one made-up item a call). */
struct visitor {
	btree_visit_fn item;
	btree_visit_items_fn items;
	void *opaque;
	uint64_t visited;
	bool stop;
};

/* The first slot at or after `from` whose key is > last: a binary search,
 * as leaf_find_slot() with "<= last" for "< key". */
static uint32_t leaf_slot_past(const struct tree_block *leaf, uint32_t from, const struct btree_key *last)
{
	uint32_t low = from, high = leaf->nritems;
	while (low < high) {
		uint32_t mid = low + (high - low) / 2;
		if (btree_key_compare(&leaf->items[mid].key, last) <= 0)
			low = mid + 1;
		else
			high = mid;
	}
	return low;
}

/* A leaf without runs, from slot i: its items read in place, without the
 * cursor's call per item, and to a run visitor in one call (a directory
 * table's fill, docs/performance.md round 14c). */
static void visit_plain_leaf(const struct tree_block *b, uint32_t i, const struct btree_key *last,
			     struct visitor *v)
{
	if (v->items) {
		uint32_t end = leaf_slot_past(b, i, last);
		if (end > i) {
			v->visited += end - i;
			v->stop = !v->items(&b->items[i], end - i, v->opaque);
		}
		v->stop |= end < b->nritems; /* the next key is past last */
		return;
	}
	for (const struct btree_item *item = &b->items[i], *end = &b->items[b->nritems]; item < end; item++) {
		if (btree_key_compare(&item->key, last) > 0) {
			v->stop = true;
			return;
		}
		v->visited++;
		if (!v->item(item, v->opaque)) {
			v->stop = true;
			return;
		}
	}
}

static void visit_block(const struct tree_block *b, const struct btree_key *first, const struct btree_key *last,
			struct visitor *v)
{
	if (!b->level) {
		bool exact;
		uint32_t i = leaf_find_slot(b, first, &exact);
		if (!(b->flags & TREE_BLOCK_RUNS)) {
			visit_plain_leaf(b, i, last, v);
			return;
		}
		struct btree_leaf_cursor cursor;
		btree_leaf_cursor_init(&cursor, b, i);
		for (; i < b->nritems && !v->stop; i++) {
			const struct btree_item *item = btree_leaf_cursor_next(&cursor);
			if (btree_key_compare(&item->key, last) > 0) {
				v->stop = true;
				break;
			}
			v->visited++;
			if (!(v->items ? v->items(item, 1, v->opaque) : v->item(item, v->opaque)))
				v->stop = true;
		}
		return;
	}
	for (uint32_t s = node_find_slot(b, first); s < b->nritems && !v->stop; s++) {
		if (btree_key_compare(&b->children[s].key, last) > 0)
			break;
		visit_block(b->children[s].block, first, last, v);
	}
}

uint64_t btree_visit_range(const struct btree *tree, const struct btree_key *first, const struct btree_key *last,
			   btree_visit_fn cb, void *opaque)
{
	struct visitor v = { .item = cb, .opaque = opaque };
	visit_block(tree->root, first, last, &v);
	return v.visited;
}

uint64_t btree_visit_range_items(const struct btree *tree, const struct btree_key *first,
				 const struct btree_key *last, btree_visit_items_fn cb, void *opaque)
{
	struct visitor v = { .items = cb, .opaque = opaque };
	visit_block(tree->root, first, last, &v);
	return v.visited;
}

void btree_count_holders(struct tree_block *block)
{
	if (!block)
		return;
	if (!(block->flags & TREE_BLOCK_HOLDERS_COUNTED)) {
		block->flags |= TREE_BLOCK_HOLDERS_COUNTED;
		block->tree_refs = 0;
		for (uint32_t i = 0; block->level && i < block->nritems; i++)
			btree_count_holders(block->children[i].block);
	}
	block->tree_refs++;
}

void btree_release_held(struct tree_block *block)
{
	if (!block)
		return;
	g_assert(block->flags & TREE_BLOCK_HOLDERS_COUNTED && block->tree_refs);
	if (--block->tree_refs)
		return;
	for (uint32_t i = 0; block->level && i < block->nritems; i++)
		btree_release_held(block->children[i].block);
	btree_release_block(block);
}

void btree_collect_blocks(struct tree_block *block, GHashTable *seen)
{
	if (!block || !g_hash_table_add(seen, block))
		return;
	if (block->level)
		for (uint32_t i = 0; i < block->nritems; i++)
			btree_collect_blocks(block->children[i].block, seen);
}
