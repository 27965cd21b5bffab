/*
 * model/delayed_items.c - btrfs's delayed items and delayed inodes; the
 * contract and the invariants are in delayed_items.h.
 *
 * One delayed node per (subvolume, inode) that has something waiting, in a
 * hash table and in one queue, least recently touched first (the kernel's
 * prepare_list: a node touched again moves to its tail):
 *
 *   queue head                                              tail
 *     [file 901: dirty] [file 902: dirty] [dir 900: idx 5..71, dirty] [file 903]
 *
 * While a copy fills directory 900, the directory is touched by every new
 * name and stays near the tail; the worker writes the files' nodes ahead of
 * it, and the directory's indexes go in only once the copy has moved on or
 * they alone pass half the background mark: in batches of up to a leaf.
 */
#include "delayed_items.h"

#include <inttypes.h>
#include <string.h>

#include "blockstore.h"
#include "constants.h"
#include "design.h"
#include "model_error.h"

/* How fast the worker writes nodes beside the writer, in nodes per
 * operation of the writer. The kernel's worker is a work queue that runs
 * on the same CPUs as the copy; on the 2-CPU machine of the measurements
 * (docs/btrfs-ground-truth.md, "Delayed items") a directory's indexes went
 * in a median 68 creates after its last name (p25 43, p90 159): the worker
 * keeps pace with the writer rather than draining at once. */
#define DELAYED_WORKER_NODES_PER_OP 1u

struct delayed_index {
	uint64_t index;
	uint32_t size;
	union item_payload payload;
	enum space_cause cause;       /* of the op that queued it: writing it is charged to it */
};

/* A directory's waiting indexes, ascending, in an array grown by doubling:
 * GArray's append was 160 instructions an index, a fortieth of a create
 * (docs/performance.md, round 20a). */
struct index_list {
	struct delayed_index *at;     /* NULL until the first (a file's node never has one) */
	uint32_t len, room;
};

struct delayed_node {
	struct subvolume *sv;
	uint64_t inode;
	bool inode_dirty;
	struct index_list indexes;
	struct delayed_node *prev, *next; /* in delayed_items' queue; a spare's next is the next spare */
};

/*
 * The nodes by (subvolume, inode), DI2: open addressing with linear probing
 * over 2^bits slots, at most half full. A node goes into the first empty
 * slot at or after its home; a removal moves later nodes of the same run
 * back into the hole where their homes allow (Knuth's Algorithm R), so that
 * every node stays reachable from its home with no tombstones:
 *
 *   home(a) = home(b) = 3, home(c) = 4
 *   slot:  0 1 2 3 4 5 6 7          remove a:  0 1 2 3 4 5 6 7
 *          . . . a b c . .                     . . . b c . . .
 *
 * A file's node lives for about a hundred operations (the worker writes it
 * behind the writer), so nodes are kept for reuse. GHashTable's lookup, add
 * and remove and a malloc and a free per node were 7 % of a create
 * (docs/performance.md, round 11c).
 */
struct node_table {
	struct delayed_node **slots;  /* NULL: empty */
	unsigned bits;
	unsigned count;
};

#define NODE_TABLE_MIN_BITS 6u
/* Spare nodes kept for reuse: more than the worker leaves waiting. */
#define DELAYED_SPARE_NODES 256u

struct delayed_items {
	struct node_table nodes;      /* DI2 */
	struct delayed_node *spare;   /* nodes for reuse, a list through next */
	unsigned spares;
	struct index_list spare_indexes; /* a written directory's emptied room, for the next (at NULL: none) */
	/* write_indexes()'s batch, as the insert takes it: its room is kept */
	struct btree_key *batch_keys;
	uint32_t *batch_sizes;
	union item_payload *batch_payloads;
	uint32_t batch_room;
	struct delayed_node *last;    /* the node last found or made, or NULL (DI4) */
	struct delayed_node *stray;   /* delayed_items_break_memo_for_test()'s node, owned */
	struct delayed_node *head, *tail; /* the queue: the nodes, least recently touched first */
	unsigned queued;              /* nodes in it */
	uint64_t items;               /* waiting indexes + dirty inodes (DI1) */
	uint64_t dirty_inodes;        /* nodes whose inode is dirty (DI1) */
	uint64_t index_dirs;          /* nodes with waiting indexes (DI1) */
	bool worker_running;           /* from the background mark until under half of it */
};

/* The home slot of (sv, inode): the top bits of a multiplicative hash. */
static unsigned node_home(unsigned bits, const struct subvolume *sv, uint64_t inode)
{
	uint64_t h = (inode ^ sv->id * 0xC2B2AE3D27D4EB4Full) * 0x9E3779B97F4A7C15ull;
	return (unsigned)(h >> (64 - bits));
}

static unsigned table_mask(const struct node_table *t)
{
	return (1u << t->bits) - 1;
}

/* The slot holding (sv, inode), or the empty slot that ends its run. */
static unsigned table_slot(const struct node_table *t, const struct subvolume *sv, uint64_t inode)
{
	unsigned i = node_home(t->bits, sv, inode);
	for (const struct delayed_node *n; (n = t->slots[i]); i = (i + 1) & table_mask(t))
		if (n->inode == inode && n->sv == sv)
			break;
	return i;
}

static struct delayed_node *table_find(const struct node_table *t, const struct subvolume *sv, uint64_t inode)
{
	return t->slots[table_slot(t, sv, inode)];
}

static void table_init(struct node_table *t, unsigned bits)
{
	t->bits = bits;
	t->count = 0;
	t->slots = g_new0(struct delayed_node *, 1u << bits);
}

/* Adds a node the table does not hold, doubling it past half full. */
static void table_add(struct node_table *t, struct delayed_node *node)
{
	if (2 * (t->count + 1) > (1u << t->bits)) {
		struct node_table old = *t;
		table_init(t, old.bits + 1);
		for (unsigned i = 0; i <= table_mask(&old); i++)
			if (old.slots[i])
				table_add(t, old.slots[i]);
		g_free(old.slots);
	}
	unsigned i = table_slot(t, node->sv, node->inode);
	g_assert(!t->slots[i]);
	t->slots[i] = node;
	t->count++;
}

/* table_add() at `slot`, the empty slot table_slot() just gave for the node
 * (no change to the table since): the probe is not made twice. */
static void table_add_at(struct node_table *t, unsigned slot, struct delayed_node *node)
{
	if (2 * (t->count + 1) > (1u << t->bits)) {
		table_add(t, node); /* it doubles: the slots move */
		return;
	}
	g_assert(!t->slots[slot]);
	t->slots[slot] = node;
	t->count++;
}

static void table_remove(struct node_table *t, const struct delayed_node *node)
{
	unsigned mask = table_mask(t), hole = table_slot(t, node->sv, node->inode);
	g_assert(t->slots[hole] == node);
	t->slots[hole] = NULL;
	t->count--;
	/* A later node of the run moves into the hole when the hole lies
	 * between its home and its slot (cyclically); the hole moves on. */
	for (unsigned j = (hole + 1) & mask; t->slots[j]; j = (j + 1) & mask) {
		unsigned home = node_home(t->bits, t->slots[j]->sv, t->slots[j]->inode);
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			t->slots[hole] = t->slots[j];
			t->slots[j] = NULL;
			hole = j;
		}
	}
}

static void node_free(struct delayed_node *node)
{
	g_free(node->indexes.at);
	g_free(node);
}

/* A zeroed node, a spare one if there is one. */
static struct delayed_node *node_new(struct delayed_items *delayed)
{
	struct delayed_node *node = delayed->spare;
	if (!node)
		return g_new0(struct delayed_node, 1);
	delayed->spare = node->next;
	delayed->spares--;
	memset(node, 0, sizeof(*node));
	return node;
}

/* A node out of the table and the queue: kept for reuse, or freed. */
static void node_release(struct delayed_items *delayed, struct delayed_node *node)
{
	if (delayed->spares >= DELAYED_SPARE_NODES) {
		node_free(node);
		return;
	}
	if (node->indexes.at && !delayed->spare_indexes.at) {
		/* Its room is the next directory's: grown by doubling from
		 * nothing, each directory's hundred names cost 120 instructions
		 * an append (docs/performance.md, round 14a). */
		delayed->spare_indexes = (struct index_list){ node->indexes.at, 0, node->indexes.room };
	} else {
		g_free(node->indexes.at);
	}
	node->indexes = (struct index_list){ NULL, 0, 0 };
	node->next = delayed->spare;
	delayed->spare = node;
	delayed->spares++;
}

static guint index_count(const struct delayed_node *node)
{
	return node->indexes.len;
}

static const struct delayed_index *index_at(const struct delayed_node *node, guint i)
{
	return &node->indexes.at[i];
}

/* Appends to the node's indexes, with the spare room if it has none. */
static void index_append(struct delayed_items *delayed, struct index_list *list, const struct delayed_index *d)
{
	if (!list->at && delayed->spare_indexes.at) {
		*list = delayed->spare_indexes;
		delayed->spare_indexes = (struct index_list){ NULL, 0, 0 };
	}
	if (list->len == list->room) {
		list->room = MAX(2 * list->room, 16u);
		list->at = g_renew(struct delayed_index, list->at, list->room);
	}
	list->at[list->len++] = *d;
}

struct delayed_items *delayed_items_new(void)
{
	struct delayed_items *delayed = g_new0(struct delayed_items, 1);
	table_init(&delayed->nodes, NODE_TABLE_MIN_BITS);
	return delayed;
}

void delayed_items_free(struct delayed_items *delayed)
{
	if (!delayed)
		return;
	for (struct delayed_node *node = delayed->head, *next; node; node = next) {
		next = node->next;
		node_free(node);
	}
	for (struct delayed_node *node = delayed->spare, *next; node; node = next) {
		next = node->next;
		g_free(node);
	}
	g_free(delayed->nodes.slots);
	g_free(delayed->spare_indexes.at);
	g_free(delayed->batch_keys);
	g_free(delayed->batch_sizes);
	g_free(delayed->batch_payloads);
	g_free(delayed->stray);
	g_free(delayed);
}

/* A design that batches inserts keeps delayed items (design.h). */
static bool enabled(const struct fs *fs)
{
	return fs->design->insert_batch != NULL;
}

/* A create asks for its directory's node three times in a row (the next
 * index, the index, the directory's inode): the memo answers the second
 * and third without the table. */
static struct delayed_node *find_node_or_slot(const struct fs *fs, const struct subvolume *sv, uint64_t inode,
					      unsigned *empty)
{
	struct delayed_items *delayed = fs->delayed;
	if (delayed->last && delayed->last->inode == inode && delayed->last->sv == sv)
		return delayed->last;
	unsigned slot = table_slot(&delayed->nodes, sv, inode);
	struct delayed_node *node = delayed->nodes.slots[slot];
	if (node)
		delayed->last = node;
	*empty = slot; /* when there is none: where table_add_at() puts it */
	return node;
}

static struct delayed_node *find_node(const struct fs *fs, const struct subvolume *sv, uint64_t inode)
{
	unsigned empty;
	return find_node_or_slot(fs, sv, inode, &empty);
}

/* The queue is a list through the nodes: a GQueue's GList calls were a
 * sixth of the delayed items' cost per create (docs/performance.md, round
 * 14a). */
static void queue_unlink(struct delayed_items *delayed, struct delayed_node *node)
{
	*(node->prev ? &node->prev->next : &delayed->head) = node->next;
	*(node->next ? &node->next->prev : &delayed->tail) = node->prev;
	delayed->queued--;
}

static void queue_push_tail(struct delayed_items *delayed, struct delayed_node *node)
{
	node->prev = delayed->tail;
	node->next = NULL;
	*(delayed->tail ? &delayed->tail->next : &delayed->head) = node;
	delayed->tail = node;
	delayed->queued++;
}

/* The node of (sv, inode), made if there is none, moved to the queue's
 * tail: btrfs_release_delayed_node() requeues what it touched. */
static struct delayed_node *touch_node(struct fs *fs, struct subvolume *sv, uint64_t inode)
{
	struct delayed_items *delayed = fs->delayed;
	unsigned empty;
	struct delayed_node *node = find_node_or_slot(fs, sv, inode, &empty);
	if (node) {
		if (delayed->tail == node)
			return node; /* at the tail already */
		queue_unlink(delayed, node);
	} else {
		node = node_new(delayed);
		node->sv = sv;
		node->inode = inode;
		table_add_at(&delayed->nodes, empty, node);
		delayed->last = node;
	}
	queue_push_tail(delayed, node);
	return node;
}

static void drop_node(struct fs *fs, struct delayed_node *node)
{
	struct delayed_items *delayed = fs->delayed;
	delayed->items -= index_count(node) + (node->inode_dirty ? 1u : 0u);
	delayed->dirty_inodes -= node->inode_dirty ? 1u : 0u;
	delayed->index_dirs -= index_count(node) ? 1u : 0u;
	queue_unlink(delayed, node);
	table_remove(&delayed->nodes, node);
	if (delayed->last == node)
		delayed->last = NULL;
	node_release(delayed, node);
}

bool delayed_items_insert_index(struct fs *fs, struct subvolume *sv, uint64_t dir, uint64_t index,
				uint32_t size, const union item_payload *payload)
{
	if (!enabled(fs)) {
		struct btree_key key = BTRFS_KEY(dir, BTRFS_DIR_INDEX_KEY, index);
		subvol_insert(fs, sv, &key, size, payload);
		return true;
	}
	struct delayed_node *node = touch_node(fs, sv, dir);
	struct delayed_index pending = {
		.index = index, .size = size, .payload = *payload, .cause = blockstore_cause(fs->store)
	};
	g_assert(!index_count(node) || index_at(node, index_count(node) - 1)->index < index);
	if (!index_count(node))
		fs->delayed->index_dirs++;
	index_append(fs->delayed, &node->indexes, &pending);
	fs->delayed->items++;
	return false;
}

bool delayed_items_cancel_index(struct fs *fs, struct subvolume *sv, uint64_t dir, uint64_t index)
{
	if (!enabled(fs))
		return false;
	struct delayed_node *node = find_node(fs, sv, dir);
	if (!node)
		return false;
	for (guint i = 0; i < index_count(node); i++) {
		if (index_at(node, i)->index != index)
			continue;
		struct index_list *list = &node->indexes;
		memmove(&list->at[i], &list->at[i + 1], (list->len - i - 1) * sizeof(*list->at));
		list->len--;
		fs->delayed->items--;
		if (!list->len)
			fs->delayed->index_dirs--;
		if (!list->len && !node->inode_dirty)
			drop_node(fs, node);
		return true;
	}
	return false;
}

bool delayed_items_last_index(const struct fs *fs, const struct subvolume *sv, uint64_t dir, uint64_t *index)
{
	if (!enabled(fs))
		return false;
	const struct delayed_node *node = find_node(fs, sv, dir);
	if (!node || !index_count(node))
		return false;
	*index = index_at(node, index_count(node) - 1)->index;
	return true;
}

void delayed_items_inode_dirty(struct fs *fs, struct subvolume *sv, uint64_t inode)
{
	if (!enabled(fs))
		return;
	struct delayed_node *node = touch_node(fs, sv, inode);
	if (!node->inode_dirty) {
		node->inode_dirty = true;
		fs->delayed->items++;
		fs->delayed->dirty_inodes++;
	}
}

void delayed_items_forget_inode(struct fs *fs, struct subvolume *sv, uint64_t inode)
{
	if (!enabled(fs))
		return;
	struct delayed_node *node = find_node(fs, sv, inode);
	if (node) {
		g_assert(!index_count(node));
		drop_node(fs, node);
	}
}

/* Room in the batch arrays for `count` items: kept from one directory to
 * the next (three allocations a directory were 2 % of its indexes' cost). */
static void batch_reserve(struct delayed_items *delayed, uint32_t count)
{
	if (count <= delayed->batch_room)
		return;
	delayed->batch_room = MAX(count, 2 * delayed->batch_room);
	delayed->batch_keys = g_renew(struct btree_key, delayed->batch_keys, delayed->batch_room);
	delayed->batch_sizes = g_renew(uint32_t, delayed->batch_sizes, delayed->batch_room);
	delayed->batch_payloads = g_renew(union item_payload, delayed->batch_payloads, delayed->batch_room);
}

/*
 * __btrfs_commit_inode_delayed_items(): the waiting indexes in batches of
 * as many as fit one leaf (btrfs_insert_delayed_item), then the inode
 * item, which the model wrote already. A batch also ends where the cause
 * that queued the indexes changes, so each is charged to its own op.
 */
static void write_indexes(struct fs *fs, struct delayed_node *node)
{
	uint32_t capacity = btree_leaf_capacity(fs->config.nodesize);
	struct delayed_items *delayed = fs->delayed;
	batch_reserve(delayed, index_count(node));
	struct btree_key *keys = delayed->batch_keys;
	uint32_t *sizes = delayed->batch_sizes;
	union item_payload *payloads = delayed->batch_payloads;
	for (guint first = 0; first < index_count(node);) {
		uint32_t count = 0, bytes = 0;
		enum space_cause cause = index_at(node, first)->cause;
		while (first + count < index_count(node)) {
			const struct delayed_index *d = index_at(node, first + count);
			if (count && (bytes + BTRFS_ITEM_HEADER_SIZE + d->size > capacity || d->cause != cause))
				break;
			keys[count] = BTRFS_KEY(node->inode, BTRFS_DIR_INDEX_KEY, d->index);
			sizes[count] = d->size;
			payloads[count] = d->payload;
			bytes += BTRFS_ITEM_HEADER_SIZE + d->size;
			count++;
		}
		enum space_cause was = blockstore_set_cause(fs->store, cause);
		subvol_insert_batch(fs, node->sv, keys, sizes, payloads, count);
		blockstore_set_cause(fs->store, was);
		first += count;
	}
}

static void write_node(struct fs *fs, struct delayed_node *node)
{
	if (index_count(node))
		write_indexes(fs, node);
	drop_node(fs, node);
}

static void write_oldest(struct fs *fs)
{
	write_node(fs, fs->delayed->head);
}

/*
 * btrfs_balance_delayed_items() and its worker. The worker runs beside the
 * writer: from BTRFS_DELAYED_BACKGROUND items it writes one node per
 * operation of the writer (DELAYED_WORKER_NODES_PER_OP) until fewer than
 * half that wait. From BTRFS_DELAYED_WRITEBACK items the writer waits
 * until BTRFS_DELAYED_BATCH items were written or fewer than
 * BTRFS_DELAYED_BACKGROUND wait (could_end_wait).
 */
static void __attribute__((noinline)) balance_now(struct fs *fs)
{
	struct delayed_items *delayed = fs->delayed;
	if (delayed->items >= BTRFS_DELAYED_BACKGROUND)
		delayed->worker_running = true;
	if (delayed->worker_running) {
		for (unsigned i = 0; i < DELAYED_WORKER_NODES_PER_OP; i++)
			if (delayed->items >= BTRFS_DELAYED_BACKGROUND / 2)
				write_oldest(fs);
		if (delayed->items < BTRFS_DELAYED_BACKGROUND / 2)
			delayed->worker_running = false;
	}
	if (delayed->items >= BTRFS_DELAYED_WRITEBACK) {
		uint64_t before = delayed->items;
		while (before - delayed->items < BTRFS_DELAYED_BATCH && delayed->items >= BTRFS_DELAYED_BACKGROUND)
			write_oldest(fs);
	}
}

/* Every operation asks (a read's atime update too, 272 k in the seed run),
 * mostly with nothing to do: two tests, small enough to inline, and the
 * work out of line (the call and its frame were 19 instructions an
 * operation). WRITEBACK is above BACKGROUND, so below BACKGROUND with the
 * worker stopped there is nothing to do. */
_Static_assert(BTRFS_DELAYED_WRITEBACK >= BTRFS_DELAYED_BACKGROUND, "the writer waits only above the worker's start");
void delayed_items_balance(struct fs *fs)
{
	if (enabled(fs) && (fs->delayed->worker_running || fs->delayed->items >= BTRFS_DELAYED_BACKGROUND))
		balance_now(fs);
}

void delayed_items_run(struct fs *fs)
{
	while (fs->delayed->head)
		write_node(fs, fs->delayed->head);
}

uint64_t delayed_items_count(const struct fs *fs)
{
	return fs->delayed->items;
}

/* What the waiting items hold reserved (delayed-inode.c): a dirty delayed
 * inode btrfs_calc_metadata_size(1), BTRFS_MAX_LEVEL nodes
 * (btrfs_delayed_inode_reserve_metadata); a directory's waiting indexes
 * btrfs_calc_insert_metadata_size(1) per leaf they fill
 * (index_item_leaves), one leaf here: the worker writes a directory's
 * node long before it holds a leaf's worth. */
uint64_t delayed_items_reserved_bytes(const struct fs *fs, uint32_t nodesize)
{
	const struct delayed_items *delayed = fs->delayed;
	return (delayed->dirty_inodes * BTRFS_MAX_LEVEL + delayed->index_dirs * BTRFS_RESERVE_NODES_PER_ITEM) *
	       (uint64_t)nodesize;
}

void delayed_items_miscount_for_test(struct fs *fs, int64_t delta)
{
	fs->delayed->items = (uint64_t)((int64_t)fs->delayed->items + delta);
}

void delayed_items_miscount_dirty_for_test(struct fs *fs, int64_t delta)
{
	fs->delayed->dirty_inodes = (uint64_t)((int64_t)fs->delayed->dirty_inodes + delta);
}

uint64_t delayed_items_misplace_for_test(struct fs *fs)
{
	struct node_table *t = &fs->delayed->nodes;
	const struct delayed_node *head = fs->delayed->head;
	g_assert(head);
	unsigned mask = table_mask(t), at = table_slot(t, head->sv, head->inode);
	unsigned to = (node_home(t->bits, head->sv, head->inode) - 1) & mask;
	while (t->slots[to]) /* the table is at most half full: an empty slot before its home */
		to = (to - 1) & mask;
	t->slots[to] = t->slots[at];
	t->slots[at] = NULL;
	return head->inode;
}

uint64_t delayed_items_break_memo_for_test(struct fs *fs)
{
	struct delayed_items *delayed = fs->delayed;
	const struct delayed_node *head = delayed->head;
	g_assert(head && !delayed->stray);
	delayed->stray = g_new0(struct delayed_node, 1);
	delayed->stray->sv = head->sv;
	delayed->stray->inode = head->inode;
	delayed->stray->inode_dirty = head->inode_dirty;
	delayed->last = delayed->stray;
	return head->inode;
}

static bool corrupt(GError **error, const struct delayed_node *node, const char *what)
{
	g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
		    "corrupt delayed node: %" G_GUINT64_FORMAT ", %s in subvolume %" G_GUINT64_FORMAT, node->inode,
		    what, node->sv->id);
	return false;
}

/* DI3 for one node. */
static bool check_indexes(const struct delayed_node *node, GError **error)
{
	struct btree_key last = BTRFS_KEY(node->inode, BTRFS_DIR_INDEX_KEY, UINT64_MAX);
	const struct btree_item *stored = subvol_lookup_le(node->sv, &last);
	const struct btree_key *stored_key = stored ? btree_item_key(stored) : NULL;
	uint64_t floor = stored_key && stored_key->objectid == node->inode && stored_key->type == BTRFS_DIR_INDEX_KEY
				 ? stored_key->offset
				 : 0;
	for (guint i = 0; i < index_count(node); i++) {
		const struct delayed_index *d = index_at(node, i);
		if (d->index <= floor)
			return corrupt(error, node, "DI3 an index not above the last one before it");
		floor = d->index;
		const struct btree_item *entry =
			fs_dir_lookup(node->sv, node->inode, d->payload.dir.name, d->payload.dir.name_len);
		if (!entry || btree_item_dir(entry)->index != d->index)
			return corrupt(error, node, "DI3 an index without its DIR_ITEM");
	}
	return true;
}

bool delayed_items_check(const struct fs *fs, GError **error)
{
	const struct delayed_items *delayed = fs->delayed;
	uint64_t items = 0, dirty = 0, dirs = 0;
	unsigned linked = 0;
	for (const struct delayed_node *node = delayed->head; node && linked <= delayed->queued; node = node->next)
		linked++;
	if (linked != delayed->queued || delayed->queued != delayed->nodes.count ||
	    2 * delayed->nodes.count > (1u << delayed->nodes.bits)) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt delayed items: %u, DI2 nodes queued, %u known in %u slots", linked,
			    delayed->nodes.count, 1u << delayed->nodes.bits);
		return false;
	}
	if (delayed->last && table_find(&delayed->nodes, delayed->last->sv, delayed->last->inode) != delayed->last)
		return corrupt(error, delayed->last, "DI4 the memo names a node the table does not hold");
	for (const struct delayed_node *node = delayed->head; node; node = node->next) {
		if (table_find(&delayed->nodes, node->sv, node->inode) != node)
			return corrupt(error, node, "DI2 a queued node the table does not know");
		if (!index_count(node) && !node->inode_dirty)
			return corrupt(error, node, "DI2 a node that holds nothing");
		if (!check_indexes(node, error))
			return false;
		items += index_count(node) + (node->inode_dirty ? 1u : 0u);
		dirty += node->inode_dirty ? 1u : 0u;
		dirs += index_count(node) ? 1u : 0u;
	}
	if (dirty != delayed->dirty_inodes || dirs != delayed->index_dirs) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt delayed items: %" G_GUINT64_FORMAT " dirty inodes and %" G_GUINT64_FORMAT
			    " directories with indexes, DI1 counted, %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT " waiting",
			    delayed->dirty_inodes, delayed->index_dirs, dirty, dirs);
		return false;
	}
	if (items != delayed->items) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt delayed items: %" G_GUINT64_FORMAT ", DI1 counted, %" G_GUINT64_FORMAT " waiting",
			    delayed->items, items);
		return false;
	}
	return true;
}
