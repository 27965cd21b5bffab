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

struct delayed_node {
	struct subvolume *sv;
	uint64_t inode;
	bool inode_dirty;
	GArray *indexes;              /* struct delayed_index, ascending; NULL until the first (a
				       * file's node never has one: most nodes) */
	GList link;                   /* in delayed_items.queue */
};

struct delayed_items {
	GHashTable *nodes;            /* struct delayed_node * (its own key) */
	struct delayed_node *last;    /* the node last found or made, or NULL (DI4) */
	struct delayed_node *stray;   /* delayed_items_break_memo_for_test()'s node, owned */
	GQueue queue;                 /* the nodes, least recently touched first */
	uint64_t items;               /* waiting indexes + dirty inodes (DI1) */
	uint64_t dirty_inodes;        /* nodes whose inode is dirty (DI1) */
	uint64_t index_dirs;          /* nodes with waiting indexes (DI1) */
	bool worker_running;           /* from the background mark until under half of it */
};

static guint node_hash(gconstpointer p)
{
	const struct delayed_node *n = p;
	return (guint)(n->inode * 0x9E3779B97F4A7C15ull ^ n->sv->id * 0xC2B2AE3D27D4EB4Full) ^
	       (guint)(n->inode >> 32);
}

static gboolean node_equal(gconstpointer a, gconstpointer b)
{
	const struct delayed_node *x = a, *y = b;
	return x->sv == y->sv && x->inode == y->inode;
}

static void node_free(struct delayed_node *node)
{
	if (node->indexes)
		g_array_unref(node->indexes);
	g_free(node);
}

static guint index_count(const struct delayed_node *node)
{
	return node->indexes ? node->indexes->len : 0;
}

struct delayed_items *delayed_items_new(void)
{
	struct delayed_items *delayed = g_new0(struct delayed_items, 1);
	delayed->nodes = g_hash_table_new(node_hash, node_equal);
	g_queue_init(&delayed->queue);
	return delayed;
}

void delayed_items_free(struct delayed_items *delayed)
{
	if (!delayed)
		return;
	GList *l;
	while ((l = g_queue_pop_head_link(&delayed->queue)))
		node_free(l->data);
	g_hash_table_destroy(delayed->nodes);
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
static struct delayed_node *find_node(const struct fs *fs, const struct subvolume *sv, uint64_t inode)
{
	struct delayed_items *delayed = fs->delayed;
	if (delayed->last && delayed->last->inode == inode && delayed->last->sv == sv)
		return delayed->last;
	struct delayed_node probe = { .sv = (struct subvolume *)sv, .inode = inode };
	struct delayed_node *node = g_hash_table_lookup(delayed->nodes, &probe);
	if (node)
		delayed->last = node;
	return node;
}

/* The node of (sv, inode), made if there is none, moved to the queue's
 * tail: btrfs_release_delayed_node() requeues what it touched. */
static struct delayed_node *touch_node(struct fs *fs, struct subvolume *sv, uint64_t inode)
{
	struct delayed_items *delayed = fs->delayed;
	struct delayed_node *node = find_node(fs, sv, inode);
	if (node) {
		if (delayed->queue.tail == &node->link)
			return node; /* at the tail already */
		g_queue_unlink(&delayed->queue, &node->link);
	} else {
		node = g_new0(struct delayed_node, 1);
		node->sv = sv;
		node->inode = inode;
		node->link.data = node;
		g_hash_table_add(delayed->nodes, node);
		delayed->last = node;
	}
	g_queue_push_tail_link(&delayed->queue, &node->link);
	return node;
}

static void drop_node(struct fs *fs, struct delayed_node *node)
{
	struct delayed_items *delayed = fs->delayed;
	delayed->items -= index_count(node) + (node->inode_dirty ? 1u : 0u);
	delayed->dirty_inodes -= node->inode_dirty ? 1u : 0u;
	delayed->index_dirs -= index_count(node) ? 1u : 0u;
	g_queue_unlink(&delayed->queue, &node->link);
	g_hash_table_remove(delayed->nodes, node);
	if (delayed->last == node)
		delayed->last = NULL;
	node_free(node);
}

void delayed_items_insert_index(struct fs *fs, struct subvolume *sv, uint64_t dir, uint64_t index,
				uint32_t size, const union item_payload *payload)
{
	if (!enabled(fs)) {
		struct btree_key key = BTRFS_KEY(dir, BTRFS_DIR_INDEX_KEY, index);
		subvol_insert(fs, sv, &key, size, payload);
		return;
	}
	struct delayed_node *node = touch_node(fs, sv, dir);
	struct delayed_index pending = {
		.index = index, .size = size, .payload = *payload, .cause = blockstore_cause(fs->store)
	};
	g_assert(!index_count(node) ||
		 g_array_index(node->indexes, struct delayed_index, node->indexes->len - 1).index < index);
	if (!node->indexes)
		node->indexes = g_array_new(FALSE, FALSE, sizeof(struct delayed_index));
	if (!node->indexes->len)
		fs->delayed->index_dirs++;
	g_array_append_val(node->indexes, pending);
	fs->delayed->items++;
}

bool delayed_items_cancel_index(struct fs *fs, struct subvolume *sv, uint64_t dir, uint64_t index)
{
	if (!enabled(fs))
		return false;
	struct delayed_node *node = find_node(fs, sv, dir);
	if (!node)
		return false;
	for (guint i = 0; i < index_count(node); i++) {
		if (g_array_index(node->indexes, struct delayed_index, i).index != index)
			continue;
		g_array_remove_index(node->indexes, i);
		fs->delayed->items--;
		if (!node->indexes->len)
			fs->delayed->index_dirs--;
		if (!node->indexes->len && !node->inode_dirty)
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
	*index = g_array_index(node->indexes, struct delayed_index, node->indexes->len - 1).index;
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

/*
 * __btrfs_commit_inode_delayed_items(): the waiting indexes in batches of
 * as many as fit one leaf (btrfs_insert_delayed_item), then the inode
 * item, which the model wrote already. A batch also ends where the cause
 * that queued the indexes changes, so each is charged to its own op.
 */
static void write_indexes(struct fs *fs, struct delayed_node *node)
{
	uint32_t capacity = btree_leaf_capacity(fs->config.nodesize);
	GArray *indexes = node->indexes;
	g_autofree struct btree_key *keys = g_new(struct btree_key, indexes->len);
	g_autofree uint32_t *sizes = g_new(uint32_t, indexes->len);
	g_autofree union item_payload *payloads = g_new(union item_payload, indexes->len);
	for (guint first = 0; first < indexes->len;) {
		uint32_t count = 0, bytes = 0;
		while (first + count < indexes->len) {
			const struct delayed_index *d = &g_array_index(indexes, struct delayed_index, first + count);
			if (count && (bytes + BTRFS_ITEM_HEADER_SIZE + d->size > capacity ||
				      d->cause != g_array_index(indexes, struct delayed_index, first).cause))
				break;
			keys[count] = BTRFS_KEY(node->inode, BTRFS_DIR_INDEX_KEY, d->index);
			sizes[count] = d->size;
			payloads[count] = d->payload;
			bytes += BTRFS_ITEM_HEADER_SIZE + d->size;
			count++;
		}
		enum space_cause was = blockstore_set_cause(
			fs->store, g_array_index(indexes, struct delayed_index, first).cause);
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
	write_node(fs, g_queue_peek_head(&fs->delayed->queue));
}

/*
 * btrfs_balance_delayed_items() and its worker. The worker runs beside the
 * writer: from BTRFS_DELAYED_BACKGROUND items it writes one node per
 * operation of the writer (DELAYED_WORKER_NODES_PER_OP) until fewer than
 * half that wait. From BTRFS_DELAYED_WRITEBACK items the writer waits
 * until BTRFS_DELAYED_BATCH items were written or fewer than
 * BTRFS_DELAYED_BACKGROUND wait (could_end_wait).
 */
void delayed_items_balance(struct fs *fs)
{
	struct delayed_items *delayed = fs->delayed;
	if (!enabled(fs))
		return;
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

void delayed_items_run(struct fs *fs)
{
	GList *head;
	while ((head = g_queue_peek_head_link(&fs->delayed->queue)))
		write_node(fs, head->data);
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

uint64_t delayed_items_break_memo_for_test(struct fs *fs)
{
	struct delayed_items *delayed = fs->delayed;
	const struct delayed_node *head = g_queue_peek_head(&delayed->queue);
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
		const struct delayed_index *d = &g_array_index(node->indexes, struct delayed_index, i);
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
	if (g_queue_get_length((GQueue *)&delayed->queue) != g_hash_table_size(delayed->nodes)) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt delayed items: %u, DI2 nodes queued, %u known", delayed->queue.length,
			    g_hash_table_size(delayed->nodes));
		return false;
	}
	if (delayed->last && g_hash_table_lookup(delayed->nodes, delayed->last) != delayed->last)
		return corrupt(error, delayed->last, "DI4 the memo names a node the table does not hold");
	for (const GList *l = delayed->queue.head; l; l = l->next) {
		const struct delayed_node *node = l->data;
		if (g_hash_table_lookup(delayed->nodes, node) != node)
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
