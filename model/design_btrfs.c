/*
 * model/design_btrfs.c - the btrfs design (`--design btrfs`, the default):
 * a tree per subvolume, snapshots clone the root.
 *
 * Every item call is the btree call on the subvolume's own tree. A snapshot
 * is Rodeh's lazy clone, as btrfs's create_pending_snapshot() makes it:
 *
 *     before                     after snapshot S of tree A
 *     A:root(refs 1)             A:root        S:root'  (a copy, owner S)
 *       /     \                    /    \______/   \
 *     n1       n2               n1(refs 2)      n2(refs 2)
 *
 * Only the root is copied; its children gain one reference each. Nothing
 * below them changes until one side writes, and then cow_block() and
 * refs_update_for_cow() move the counts down one level per copy. Deleting
 * a snapshot is btrfs_drop_snapshot(): the root loses its root item's
 * reference; blocks only it held are freed top-down and release their
 * children, shared ones just lose one reference. The model drops at once
 * what btrfs's cleaner thread drops after the commit.
 *
 * Invariants (btrfs_check): DB1 every live subvolume's items are in a
 * tree of its own (own_tree) whose id is the subvolume's; DB2 every key of
 * those trees and of their atime side tables carries snapshot id 0, and no
 * item is a whiteout (those are the keyed design's); DB3 the snapshot-time
 * estimate's memo (below, "the snapshot-time estimate") holds for each node
 * it remembers the count a visit of the node's subtree gives now.
 */
#include "model_error.h"
#include "design.h"
#include "derived_check.h"

#include <inttypes.h>

#include "blockstore.h"

/* Keys of this design carry no snapshot id. */
static struct btree_key plain(const struct btree_key *key)
{
	struct btree_key k = *key;
	k.snapshot = 0;
	return k;
}

static void btrfs_top_subvolume(struct fs *fs, struct subvolume *top)
{
	btree_init(top->tree, &fs->txn, top->id);
}

static const struct btree_item *btrfs_lookup(const struct subvolume *sv, const struct btree_key *key)
{
	struct btree_key k = plain(key);
	struct btree_path path;
	return btree_lookup(sv->tree, &k, &path) ? btree_path_item(&path) : NULL;
}

static const struct btree_item *btrfs_lookup_near(const struct subvolume *sv, const struct btree_key *key,
						  struct btree_path *near)
{
	struct btree_key k = plain(key);
	return btree_lookup_near(sv->tree, &k, near) ? btree_path_item(near) : NULL;
}

/* btrfs_lookup_kept() past the hop (a key with a snapshot, a path not
 * stamped linked, a lookup the hop does not answer). */
static const struct btree_item *__attribute__((noinline))
lookup_kept_otherwise(const struct subvolume *sv, const struct btree_key *key, struct btree_path *kept)
{
	struct btree_key k;
	if (key->snapshot) { /* the model's keys have none: plain() is a copy of 21 packed bytes */
		k = plain(key);
		key = &k;
	}
	return btree_lookup_kept(sv->tree, key, kept) ? btree_path_item(kept) : NULL;
}

/* A read's lookup: the hop first, with no frame (most of a grep's reads). */
static const struct btree_item *btrfs_lookup_kept(const struct subvolume *sv, const struct btree_key *key,
						  struct btree_path *kept)
{
	const struct btree_item *hop;
	if (__builtin_expect(!key->snapshot, 1) && (hop = btree_lookup_kept_hop(sv->tree, key, kept)))
		return hop;
	return lookup_kept_otherwise(sv, key, kept);
}

static const struct btree_item *btrfs_lookup_le(const struct subvolume *sv, const struct btree_key *key)
{
	struct btree_key probe = plain(key);
	const struct btree_item *raw = btree_lookup_le(sv->tree, &probe);
	if (!raw || btree_item_key(raw)->objectid != key->objectid || btree_item_key(raw)->type != key->type)
		return NULL;
	return raw;
}

static uint64_t btrfs_visit_range(const struct subvolume *sv, const struct btree_key *first,
				  const struct btree_key *last, btree_visit_fn cb, void *opaque)
{
	struct btree_key lo = plain(first), hi = plain(last);
	return btree_visit_range(sv->tree, &lo, &hi, cb, opaque);
}

static uint64_t btrfs_visit_range_items(const struct subvolume *sv, const struct btree_key *first,
					const struct btree_key *last, btree_visit_items_fn cb, void *opaque)
{
	struct btree_key lo = plain(first), hi = plain(last);
	return btree_visit_range_items(sv->tree, &lo, &hi, cb, opaque);
}

static uint64_t btrfs_visit_range_near(const struct subvolume *sv, const struct btree_key *first,
				       const struct btree_key *last, btree_visit_fn cb, void *opaque,
				       struct btree_path *near)
{
	struct btree_key lo = plain(first), hi = plain(last);
	return btree_visit_range_near(sv->tree, &lo, &hi, cb, opaque, near);
}

static struct btree_item *btrfs_lookup_for_write(struct fs *fs, struct subvolume *sv, const struct btree_key *key)
{
	struct btree_key k = plain(key);
	return btree_lookup_for_write(sv->tree, &fs->txn, &k);
}

/* The write COWs the path the lookup found without searching again. */
static struct btree_item *btrfs_lookup_for_write_near(struct fs *fs, struct subvolume *sv,
						      const struct btree_key *key, struct btree_path *near)
{
	if (!btrfs_lookup_near(sv, key, near))
		return btrfs_lookup_for_write(fs, sv, key);
	return btree_path_for_write(sv->tree, &fs->txn, near);
}

/* btrfs_write_inode_atime_near() without a path: a lookup first. */
static void __attribute__((noinline)) write_inode_atime_looked_up(struct fs *fs, struct subvolume *sv,
								  uint64_t inode, int64_t atime,
								  struct btree_path *near)
{
	struct btree_key key = BTRFS_KEY(inode, BTRFS_INODE_ITEM_KEY, 0);
	if (!btrfs_lookup_near(sv, &key, near)) {
		btree_item_inode_for_write(btrfs_lookup_for_write(fs, sv, &key))->atime = atime;
		return;
	}
	btree_path_write_inode_atime(sv->tree, &fs->txn, near, atime);
}

static void btrfs_write_inode_atime_near(struct fs *fs, struct subvolume *sv, uint64_t inode, int64_t atime,
					 struct btree_path *near)
{
	/* A path the access's lookup left is at the item (design.h): looking it
	 * up again was 68 instructions of a read (docs/performance.md round 13a);
	 * the key for one is built only without it. */
	if (__builtin_expect(!near->levels, 0))
		write_inode_atime_looked_up(fs, sv, inode, atime, near);
	else
		btree_path_write_inode_atime(sv->tree, &fs->txn, near, atime);
}

static struct btree_item *btrfs_insert(struct fs *fs, struct subvolume *sv, const struct btree_key *key,
				       uint32_t size, const union item_payload *payload)
{
	struct btree_key k = plain(key);
	return btree_insert_item(sv->tree, &fs->txn, &k, size, payload);
}

static struct btree_item *btrfs_insert_near(struct fs *fs, struct subvolume *sv, const struct btree_key *key,
					    uint32_t size, const union item_payload *payload, struct btree_path *near)
{
	struct btree_key k = plain(key);
	return btree_insert_item_near(sv->tree, &fs->txn, &k, size, payload, near);
}

static void btrfs_insert_batch(struct fs *fs, struct subvolume *sv, const struct btree_key *keys,
			       const uint32_t *sizes, const union item_payload *payloads, uint32_t count)
{
	struct btree_key few[4]; /* a new inode's items: no allocation per create */
	g_autofree struct btree_key *many = count > G_N_ELEMENTS(few) ? g_new(struct btree_key, count) : NULL;
	struct btree_key *plain_keys = many ? many : few;
	for (uint32_t i = 0; i < count; i++)
		plain_keys[i] = plain(&keys[i]);
	btree_insert_items(sv->tree, &fs->txn, plain_keys, sizes, payloads, count);
}

static struct btree_item *btrfs_resize(struct fs *fs, struct subvolume *sv, const struct btree_key *key,
				       uint32_t size)
{
	struct btree_key k = plain(key);
	return btree_resize_item(sv->tree, &fs->txn, &k, size);
}

static enum subvol_delete_result btrfs_delete(struct fs *fs, struct subvolume *sv, const struct btree_key *key)
{
	struct btree_key k = plain(key);
	return btree_delete_item(sv->tree, &fs->txn, &k) ? SUBVOL_DELETED : SUBVOL_ABSENT;
}

static void btrfs_snapshot_create(struct fs *fs, struct subvolume *src, struct subvolume *snap)
{
	snap->tree->id = snap->id;
	btree_set_root(snap->tree, fs_clone_root(fs, src->tree->root, snap->id));
	snap->tree->root_dirty = true;
}

/* btrfs_drop_snapshot() runs in the cleaner after the deletion's commit;
 * the model drops the tree in the throttle after the operation, where it
 * may stop and go on later (refs_drop_tree). */
static int btrfs_snapshot_delete(struct fs *fs, struct subvolume *snap)
{
	refs_drop_tree(&fs->txn, snap->tree->root);
	btree_set_root(snap->tree, NULL);
	return 0;
}

static bool btrfs_item_write_is_private(const struct fs *fs, const struct subvolume *sv,
					const struct btree_item *item)
{
	return fs_leaf_is_private(fs, sv->tree, btree_item_key(item));
}

/* ---- the snapshot-time estimate ------------------------------------------
 *
 * A snapshot's warning counts the blocks of the source that an access of
 * every inode would copy: a visit of every inode item of the tree. Snapshots
 * taken one after another (a rotation, the bench's ten of one tree) find the
 * same tree but for the path to the root directory's new entry, so the
 * estimate remembers, for each node no transaction changes again (written by
 * an earlier one: should_cow_block()), what its subtree counted, and visits
 * again only below nodes written since:
 *
 *     estimate 1: root* -> n1* n2* ... n400*   every leaf visited, nodes kept
 *     estimate 2: root' -> n1  n2' ... n400    root' and n2' are new: only
 *                                              n2's leaves are visited again
 *
 * What a node counted holds while `wanted` answers from the items alone
 * (design.h from_items) under the same clock and mount options: the memo
 * empties when they move. An entry answers only for the node of its bytenr
 * and generation: a freed node's bytenr comes back with a later generation.
 * DB3 (btrfs_check) visits every remembered live node again.
 */
struct estimate_memo {
	GHashTable *nodes;               /* &entry->bytenr -> struct memo_entry * */
	int64_t clock_ns;                /* the clock and options its counts hold for */
	struct atime_options options;
};

struct memo_entry {
	uint64_t bytenr;
	uint64_t blocks;                 /* blocks of the subtree an access sweep copies */
	uint32_t generation;
};

static void btrfs_init(struct fs *fs)
{
	struct estimate_memo *memo = g_new0(struct estimate_memo, 1);
	memo->nodes = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
	fs->design_state = memo;
}

static void btrfs_free(struct fs *fs)
{
	struct estimate_memo *memo = fs->design_state;
	g_hash_table_destroy(memo->nodes);
	g_free(memo);
	fs->design_state = NULL;
}

static bool memo_holds_now(const struct estimate_memo *memo, const struct fs *fs)
{
	return memo->clock_ns == fs->clock_ns && memo->options.mode == fs->config.atime.mode &&
	       memo->options.nodiratime == fs->config.atime.nodiratime &&
	       memo->options.lazytime == fs->config.atime.lazytime;
}

/* The memo for an estimate now, emptied if the clock or options moved. */
static GHashTable *memo_for_now(const struct fs *fs)
{
	struct estimate_memo *memo = fs->design_state;
	if (!memo_holds_now(memo, fs)) {
		g_hash_table_remove_all(memo->nodes);
		memo->clock_ns = fs->clock_ns;
		memo->options = fs->config.atime;
	}
	return memo->nodes;
}

struct estimate {
	const struct fs *fs;
	const struct subvolume *sv;
	fs_atime_wanted_fn wanted;
	GHashTable *memo;                /* NULL: remember nothing */
	uint64_t blocks;
};

/* Only a node no transaction changes again is remembered. */
static bool memo_may_hold(const struct estimate *e, const struct tree_block *block)
{
	return e->memo && block->level && block->generation != e->fs->txn.transid;
}

static const struct memo_entry *memo_find(GHashTable *memo, const struct tree_block *block)
{
	const struct memo_entry *known = g_hash_table_lookup(memo, &block->bytenr);
	return known && known->generation == block->generation ? known : NULL;
}

static void memo_keep(GHashTable *memo, const struct tree_block *block, uint64_t blocks)
{
	struct memo_entry *entry = g_new(struct memo_entry, 1);
	*entry = (struct memo_entry){ block->bytenr, blocks, block->generation };
	g_hash_table_replace(memo, &entry->bytenr, entry);
}

/* Would an access sweep copy `leaf`: does it hold an inode `wanted` wants? */
static bool leaf_wanted(const struct estimate *e, const struct tree_block *leaf)
{
	for (uint32_t i = 0; i < leaf->nritems; i++) {
		const struct btree_item *item = btree_leaf_item(leaf, i);
		if (btree_item_key(item)->type == BTRFS_INODE_ITEM_KEY &&
		    e->wanted(e->fs, e->sv, item, btree_leaf_inode_atime(leaf, i)))
			return true;
	}
	return false;
}

/* Counts the blocks of the subtree that an access sweep would copy;
 * returns whether any below `block` would. */
static bool estimate_block(struct estimate *e, const struct tree_block *block)
{
	if (!block->level) {
		bool any = leaf_wanted(e, block);
		e->blocks += any;
		return any;
	}
	bool remembered = memo_may_hold(e, block);
	const struct memo_entry *known = remembered ? memo_find(e->memo, block) : NULL;
	if (known) {
		e->blocks += known->blocks;
		return known->blocks > 0; /* a subtree with a block to copy copies its root too */
	}
	uint64_t before = e->blocks;
	bool any = false;
	for (uint32_t i = 0; i < block->nritems; i++)
		any |= estimate_block(e, block->children[i].block);
	e->blocks += any;
	if (remembered)
		memo_keep(e->memo, block, e->blocks - before);
	return any;
}

/* Right after a snapshot every leaf of the source is shared and none is
 * copied yet: a write copies each leaf it touches and the nodes above. */
static uint64_t btrfs_inline_atime_estimate(const struct fs *fs, const struct subvolume *sv,
					    fs_atime_wanted_fn wanted, bool private_only, bool from_items)
{
	if (private_only)
		return 0;
	struct estimate e = { fs, sv, wanted, from_items ? memo_for_now(fs) : NULL, 0 };
	estimate_block(&e, sv->tree->root);
	return e.blocks * blockstore_nodesize(fs->store);
}

struct memo_check {
	struct estimate fresh;           /* a count that remembers nothing */
	GHashTable *memo;
	const struct tree_block *wrong;  /* the first remembered node that disagrees */
	uint64_t remembered, counted;
};

/* estimate_block() without the memo, comparing each remembered node it
 * passes with what it counts below it (DB3). */
static bool recount(struct memo_check *c, const struct tree_block *block)
{
	if (!block->level) {
		bool any = leaf_wanted(&c->fresh, block);
		c->fresh.blocks += any;
		return any;
	}
	uint64_t before = c->fresh.blocks;
	bool any = false;
	for (uint32_t i = 0; i < block->nritems; i++)
		any |= recount(c, block->children[i].block);
	c->fresh.blocks += any;
	const struct memo_entry *known = memo_find(c->memo, block);
	uint64_t counted = c->fresh.blocks - before;
	if (known && !c->wrong && known->blocks != counted) {
		c->wrong = block;
		c->remembered = known->blocks;
		c->counted = counted;
	}
	return any;
}

/* DB3, while the memo's clock and options are the fs's and `wanted`
 * answers from the items (else the next estimate empties it unread). */
static bool check_estimate_memo(const struct fs *fs, GError **error)
{
	const struct estimate_memo *memo = fs->design_state;
	if (!g_hash_table_size(memo->nodes) || !memo_holds_now(memo, fs) || !fs_atime_wanted_from_items(fs))
		return true;
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted || !sv->tree->root)
			continue;
		struct memo_check c = { { fs, sv, fs_atime_wanted, NULL, 0 }, memo->nodes, NULL, 0, 0 };
		recount(&c, sv->tree->root);
		if (c.wrong)
			return derived_corrupt(error, "block", c.wrong->bytenr,
					       "DB3 the estimate remembers %" PRIu64 " blocks to copy below it, a visit counts %" PRIu64,
					       c.remembered, c.counted);
	}
	return true;
}

/* DB2 over every block of the live subvolumes' trees, each once. */
static bool check_plain_keys(const struct fs *fs, GError **error)
{
	g_autoptr(GHashTable) blocks = g_hash_table_new(NULL, NULL);
	fs_collect_subvolume_blocks(fs, blocks);
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, blocks);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		const struct tree_block *leaf = key;
		struct btree_leaf_cursor cursor;
		btree_leaf_cursor_init(&cursor, leaf, 0);
		for (const struct btree_item *item; !leaf->level && (item = btree_leaf_cursor_next(&cursor));) {
			const struct btree_key *k = btree_item_key(item);
			bool whiteout = btree_item_is_whiteout(item);
			if (k->snapshot || whiteout)
				return derived_corrupt(error, "key", k->objectid, "DB2 snapshot %u%s in tree %" PRIu64,
						       k->snapshot, whiteout ? ", a whiteout," : "", tree_block_owner(leaf));
		}
	}
	return true;
}

static bool btrfs_check(const struct fs *fs, GError **error)
{
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted || (sv->tree == &sv->own_tree && sv->tree->id == sv->id))
			continue;
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "DB1: subvolume %" PRIu64 " has its items in %s tree %" PRIu64, sv->id,
			    sv->tree == &sv->own_tree ? "its own" : "another", sv->tree->id);
		return false;
	}
	return check_plain_keys(fs, error) && check_estimate_memo(fs, error);
}

const struct fs_design_ops fs_design_btrfs = {
	.name = "btrfs",
	.summary = "a tree per subvolume, snapshots clone the root (Rodeh)",
	.init = btrfs_init,
	.free = btrfs_free,
	.top_subvolume = btrfs_top_subvolume,
	.lookup = btrfs_lookup,
	.lookup_le = btrfs_lookup_le,
	.visit_range = btrfs_visit_range,
	.lookup_for_write = btrfs_lookup_for_write,
	.lookup_near = btrfs_lookup_near,
	.lookup_kept = btrfs_lookup_kept,
	.visit_range_items = btrfs_visit_range_items,
	.visit_range_near = btrfs_visit_range_near,
	.lookup_for_write_near = btrfs_lookup_for_write_near,
	.write_inode_atime_near = btrfs_write_inode_atime_near,
	.insert = btrfs_insert,
	.insert_near = btrfs_insert_near,
	.insert_batch = btrfs_insert_batch,
	.resize = btrfs_resize,
	.delete = btrfs_delete,
	.snapshot_create = btrfs_snapshot_create,
	.snapshot_delete = btrfs_snapshot_delete,
	.item_write_is_private = btrfs_item_write_is_private,
	.inline_atime_estimate = btrfs_inline_atime_estimate,
	.side_trees = true,
	.usage = fs_usage_by_reachability,
	.reclaim = fs_reclaim_by_reachability,
	.check = btrfs_check,
};
