/*
 * model/design_keyed.c - the keyed design (`--design keyed`): one tree,
 * keys versioned by snapshot id.
 *
 * As bcachefs's snapshots (Kent Overstreet 2021): one tree holds
 * every subvolume's items, and a key's last component is the snapshot id that
 * wrote it. Snapshot ids form a tree; taking a snapshot of a subvolume at id P
 * gives the subvolume a new id C1 and the snapshot C2, both children of P, so
 * keys written at P stay shared by both:
 *
 *        P            key (inode 300, INODE_ITEM, 0) @P   seen by C1 and C2
 *       / \           key (inode 300, INODE_ITEM, 0) @C1  C1 changed it: seen by C1
 *     C1   C2
 *
 * A key is visible from S when its snapshot id is S or an ancestor of S; of
 * several visible versions the deepest wins. A change from S to a key it sees
 * at an ancestor writes a new version at S (a whole item: the cost of an
 * atime update after a snapshot is one inode item, not a copied path); a
 * delete of such a key writes a whiteout at S.
 *
 * Every subvolume's snapshot id is at least 1; id 0 is no snapshot's.
 *
 * Invariants: DK1 at most one version of a base key per snapshot id; DK2 the
 * keys of one base key are adjacent in the tree, so a version lookup is one
 * short range scan. Both hold by the key order, with no checker of their
 * own: the snapshot id is the last component btree_key_compare() compares,
 * so the versions of one base key sort together (DK2), and two versions at
 * one id are one key twice, which btree_check refuses as BT1 (DK1);
 * tests/model/test_checkers.c breaks DK1 and pins DK2's order.
 * (keyed_check) DK3 every live subvolume has its own snapshot id, at least 1
 * and known to the snapshot tree, and its items in the one shared tree;
 * DK4 the snapshot tree: id 1 its root, every other id's parent older and its
 * depth one more than the parent's, and no id a child of a live subvolume's
 * (a snapshot moves its source to a new id, so what a live subvolume writes
 * is never shared); DK5 every key of the shared tree carries a known id that
 * is a live subvolume's or an ancestor of one (deleting a snapshot drops
 * what no live subvolume can see), except while a stopped deletion is
 * pending, for base keys at or after the next one it prunes; DK6 a whiteout
 * is 0 bytes and hides something: from its id's parent, the key's visible
 * version is no whiteout.
 */
#include "model_error.h"
#include "design.h"
#include "derived_check.h"

#include <inttypes.h>
#include <string.h>

/* The snapshot tree: a snapshot id's parent and depth. */
struct snapshot_node {
	uint32_t parent;              /* 0 for the first */
	uint32_t depth;
};

/* fs->design_state */
struct keyed_state {
	struct btree tree;            /* every subvolume's items */
	GArray *nodes;                /* struct snapshot_node by snapshot id */
	struct keyed_deletion *pending; /* a deletion that was stopped; NULL: none */
};

/*
 * A snapshot deletion, in two passes over the shared tree: collect the base
 * keys with a version on the deleted id's chain, then prune each. Either
 * pass may stop between two keys when fs_config.cancelled asks; the next
 * deletion or commit goes on from here (DK5's exception covers the keys not
 * pruned yet).
 */
struct keyed_deletion {
	uint32_t snapshot;            /* the deleted subvolume's id */
	GArray *bases;                /* struct btree_key with snapshot 0, key order */
	bool collected;               /* the first pass is over */
	struct btree_key resume;      /* else: the key it goes on from */
	unsigned next;                /* the first base not pruned */
	GHashTable *chain;            /* the deleted id and its ancestors */
};

/* sv->design_private */
struct keyed_subvolume {
	uint32_t snapshot;            /* the snapshot id its writes carry */
};

static struct keyed_state *state_of(const struct fs *fs)
{
	return fs->design_state;
}

static uint32_t snapshot_of(const struct subvolume *sv)
{
	return ((const struct keyed_subvolume *)sv->design_private)->snapshot;
}

static void set_snapshot(struct subvolume *sv, uint32_t snapshot)
{
	if (!sv->design_private)
		sv->design_private = g_new0(struct keyed_subvolume, 1);
	((struct keyed_subvolume *)sv->design_private)->snapshot = snapshot;
}

static const struct snapshot_node *node_of(const struct fs *fs, uint32_t id)
{
	return &g_array_index(state_of(fs)->nodes, struct snapshot_node, id);
}

static uint32_t new_snapshot_id(struct fs *fs, uint32_t parent)
{
	GArray *nodes = state_of(fs)->nodes;
	struct snapshot_node node = { parent, parent ? node_of(fs, parent)->depth + 1 : 0 };
	if (!nodes->len) {
		struct snapshot_node unused = { 0, 0 };
		g_array_append_val(nodes, unused); /* id 0: no snapshot's */
	}
	g_array_append_val(nodes, node);
	return nodes->len - 1;
}

static bool is_visible(const struct fs *fs, uint32_t version, uint32_t from)
{
	for (uint32_t s = from; s; s = node_of(fs, s)->parent)
		if (s == version)
			return true;
	return false;
}

static struct btree_key with_snapshot(const struct btree_key *key, uint32_t snapshot)
{
	struct btree_key k = *key;
	k.snapshot = snapshot;
	return k;
}

struct version_pick {
	const struct fs *fs;
	uint32_t from;
	const struct btree_item *best;
	uint32_t best_depth;
};

static bool pick_version(const struct btree_item *item, void *opaque)
{
	struct version_pick *p = opaque;
	if (!is_visible(p->fs, btree_item_key(item)->snapshot, p->from))
		return true;
	uint32_t depth = node_of(p->fs, btree_item_key(item)->snapshot)->depth;
	if (!p->best || depth > p->best_depth) {
		p->best = item;
		p->best_depth = depth;
	}
	return true;
}

/* The visible version of a base key, whiteouts included. */
static const struct btree_item *visible_version(const struct fs *fs, const struct subvolume *sv,
						const struct btree_key *key)
{
	struct btree_key first = with_snapshot(key, 0), last = with_snapshot(key, UINT32_MAX);
	struct version_pick p = { fs, snapshot_of(sv), NULL, 0 };
	btree_visit_range(sv->tree, &first, &last, pick_version, &p);
	return p.best;
}

static const struct btree_item *keyed_lookup(const struct subvolume *sv, const struct btree_key *key)
{
	const struct btree_item *item = visible_version(sv->fs, sv, key);
	return item && !btree_item_is_whiteout(item) ? item : NULL;
}

/* A version lookup leaves no single path: the hints are ignored. */
static const struct btree_item *keyed_lookup_near(const struct subvolume *sv, const struct btree_key *key,
						  struct btree_path *near)
{
	near->levels = 0;
	return keyed_lookup(sv, key);
}

static const struct btree_item *keyed_lookup_le(const struct subvolume *sv, const struct btree_key *key)
{
	struct btree_key probe = with_snapshot(key, UINT32_MAX);
	for (;;) {
		const struct btree_item *raw = btree_lookup_le(sv->tree, &probe);
		if (!raw || btree_item_key(raw)->objectid != key->objectid || btree_item_key(raw)->type != key->type)
			return NULL;
		const struct btree_item *item = visible_version(sv->fs, sv, btree_item_key(raw));
		if (item && !btree_item_is_whiteout(item))
			return item;
		if (btree_item_key(raw)->offset == 0)
			return NULL;
		probe = with_snapshot(btree_item_key(raw), UINT32_MAX);
		probe.offset--;
	}
}

/* Visiting: the raw items of one base key arrive together (DK2); the
 * visible one of each group is handed on. */
struct group_visit {
	const struct fs *fs;
	uint32_t from;
	btree_visit_fn cb;
	void *opaque;
	struct version_pick pick;
	struct btree_key base;
	bool open, stopped;
	uint64_t visited;
};

static bool flush_group(struct group_visit *g)
{
	if (!g->open || !g->pick.best || btree_item_is_whiteout(g->pick.best))
		return true;
	g->visited++;
	return g->cb(g->pick.best, g->opaque);
}

static bool visit_version(const struct btree_item *item, void *opaque)
{
	struct group_visit *g = opaque;
	struct btree_key base = with_snapshot(btree_item_key(item), 0);
	if (!g->open || btree_key_compare(&base, &g->base)) {
		if (!flush_group(g)) {
			g->stopped = true;
			return false;
		}
		g->base = base;
		g->open = true;
		g->pick = (struct version_pick){ g->fs, g->from, NULL, 0 };
	}
	return pick_version(item, &g->pick);
}

static uint64_t keyed_visit_range(const struct subvolume *sv, const struct btree_key *first,
				  const struct btree_key *last, btree_visit_fn cb, void *opaque)
{
	struct btree_key lo = with_snapshot(first, 0), hi = with_snapshot(last, UINT32_MAX);
	struct group_visit g = { .fs = sv->fs, .from = snapshot_of(sv), .cb = cb, .opaque = opaque };
	btree_visit_range(sv->tree, &lo, &hi, visit_version, &g);
	if (!g.stopped)
		flush_group(&g);
	return g.visited;
}

static uint64_t keyed_visit_range_near(const struct subvolume *sv, const struct btree_key *first,
				       const struct btree_key *last, btree_visit_fn cb, void *opaque,
				       struct btree_path *near)
{
	near->levels = 0;
	return keyed_visit_range(sv, first, last, cb, opaque);
}

/* A new version at sv's snapshot, copying the visible one. A file extent
 * it copies is one more reference to its data extent. */
static struct btree_item *copy_up(struct fs *fs, struct subvolume *sv, const struct btree_item *from)
{
	struct btree_key key = with_snapshot(btree_item_key(from), snapshot_of(sv));
	union item_payload payload = btree_item_payload_copy(from);
	uint32_t size = btree_item_size(from);
	struct btree_item *item = btree_insert_item(sv->tree, &fs->txn, &key, size, &payload);
	if (key.type == BTRFS_EXTENT_DATA_KEY && payload.file_extent.extent)
		refs_data_add(&fs->txn, payload.file_extent.extent, false);
	return item;
}

static struct btree_item *keyed_lookup_for_write(struct fs *fs, struct subvolume *sv, const struct btree_key *key)
{
	struct btree_key own = with_snapshot(key, snapshot_of(sv));
	const struct btree_item *item = visible_version(fs, sv, key);
	if (!item || btree_item_is_whiteout(item))
		return NULL;
	if (btree_item_key(item)->snapshot == snapshot_of(sv))
		return btree_lookup_for_write(sv->tree, &fs->txn, &own);
	return copy_up(fs, sv, item);
}

static struct btree_item *keyed_lookup_for_write_near(struct fs *fs, struct subvolume *sv,
						      const struct btree_key *key, struct btree_path *near)
{
	(void)near;
	return keyed_lookup_for_write(fs, sv, key);
}

/* Items are copied by value (copy_up), so the leaves keep no overlay. */
static void keyed_write_inode_atime_near(struct fs *fs, struct subvolume *sv, uint64_t inode, int64_t atime,
					 struct btree_path *near)
{
	(void)near;
	struct btree_key key = BTRFS_KEY(inode, BTRFS_INODE_ITEM_KEY, 0);
	btree_item_inode_for_write(keyed_lookup_for_write(fs, sv, &key))->atime = atime;
}

static struct btree_item *keyed_insert(struct fs *fs, struct subvolume *sv, const struct btree_key *key,
				       uint32_t size, const union item_payload *payload)
{
	struct btree_key own = with_snapshot(key, snapshot_of(sv));
	struct btree_path path;
	if (btree_lookup(sv->tree, &own, &path) && btree_item_is_whiteout(btree_path_item(&path)))
		btree_delete_item(sv->tree, &fs->txn, &own);
	return btree_insert_item(sv->tree, &fs->txn, &own, size, payload);
}

static struct btree_item *keyed_resize(struct fs *fs, struct subvolume *sv, const struct btree_key *key,
				       uint32_t size)
{
	if (!keyed_lookup_for_write(fs, sv, key))
		return NULL;
	struct btree_key own = with_snapshot(key, snapshot_of(sv));
	return btree_resize_item(sv->tree, &fs->txn, &own, size);
}

static enum subvol_delete_result keyed_delete(struct fs *fs, struct subvolume *sv, const struct btree_key *key)
{
	struct btree_key own = with_snapshot(key, snapshot_of(sv));
	const struct btree_item *item = visible_version(fs, sv, key);
	if (!item || btree_item_is_whiteout(item))
		return SUBVOL_ABSENT;
	bool own_version = btree_item_key(item)->snapshot == snapshot_of(sv);
	if (own_version)
		btree_delete_item(sv->tree, &fs->txn, &own);
	/* An ancestor's version would show through: hide it. */
	const struct btree_item *below = visible_version(fs, sv, key);
	if (below && !btree_item_is_whiteout(below)) {
		struct btree_item *w = btree_insert_item(sv->tree, &fs->txn, &own, 0, NULL);
		btree_item_set_whiteout(w, true);
	}
	return own_version ? SUBVOL_DELETED : SUBVOL_WHITED_OUT;
}

/* Deletes one version of a key; a file extent it held is one reference
 * fewer to its data extent. */
static void drop_version(struct fs *fs, struct btree *tree, const struct btree_item *item)
{
	struct btree_key key = *btree_item_key(item);
	if (key.type == BTRFS_EXTENT_DATA_KEY && btree_item_file_extent(item)->extent &&
	    !btree_item_is_whiteout(item))
		refs_data_drop(&fs->txn, btree_item_file_extent(item)->extent, false);
	btree_delete_item(tree, &fs->txn, &key);
}

/* The version of base key `key` that `from` sees, whiteouts included. */
static const struct btree_item *version_seen_from(const struct fs *fs, struct btree *tree, uint32_t from,
						  const struct btree_key *key)
{
	struct btree_key first = with_snapshot(key, 0), last = with_snapshot(key, UINT32_MAX);
	struct version_pick p = { fs, from, NULL, 0 };
	btree_visit_range(tree, &first, &last, pick_version, &p);
	return p.best;
}

/* A version stays while a live subvolume sees it, and a whiteout while it
 * hides a version above it. */
static bool version_is_live(const struct fs *fs, struct btree *tree, const struct btree_item *version,
			    const GArray *live_ids)
{
	bool seen = false;
	for (unsigned i = 0; i < live_ids->len && !seen; i++) {
		uint32_t live = g_array_index(live_ids, uint32_t, i);
		seen = version_seen_from(fs, tree, live, btree_item_key(version)) == version;
	}
	if (!seen || !btree_item_is_whiteout(version))
		return seen;
	uint32_t above = node_of(fs, btree_item_key(version)->snapshot)->parent;
	const struct btree_item *hidden = above ? version_seen_from(fs, tree, above, btree_item_key(version)) : NULL;
	return hidden && !btree_item_is_whiteout(hidden);
}

struct key_group {
	GArray *snapshots;            /* the versions' ids, in key order */
};

static bool collect_group(const struct btree_item *item, void *opaque)
{
	g_array_append_val(((struct key_group *)opaque)->snapshots, btree_item_key(item)->snapshot);
	return true;
}

/* Drops the dead versions of one base key, until none is left: a whiteout
 * dies when what it hid has gone. */
static void prune_key_versions(struct fs *fs, struct btree *tree, const struct btree_key *base, const GArray *live_ids)
{
	struct btree_key first = with_snapshot(base, 0), last = with_snapshot(base, UINT32_MAX);
	for (bool dropped = true; dropped;) {
		dropped = false;
		g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
		struct key_group group = { ids };
		btree_visit_range(tree, &first, &last, collect_group, &group);
		for (unsigned i = 0; i < ids->len; i++) {
			struct btree_key key = with_snapshot(base, g_array_index(ids, uint32_t, i));
			struct btree_path path;
			if (!btree_lookup(tree, &key, &path) || version_is_live(fs, tree, btree_path_item(&path), live_ids))
				continue;
			drop_version(fs, tree, btree_path_item(&path));
			dropped = true;
		}
	}
}

struct chain_keys {
	struct fs *fs;
	struct keyed_deletion *d;
	bool stoppable;
	bool stopped;
};

/* The first pass: a base key once when a version of it is on the chain. */
static bool collect_chain_key(const struct btree_item *item, void *opaque)
{
	struct chain_keys *c = opaque;
	struct keyed_deletion *d = c->d;
	if (c->stoppable && fs_cancelled(c->fs)) {
		d->resume = *btree_item_key(item);
		c->stopped = true;
		return false;
	}
	if (!g_hash_table_contains(d->chain, GUINT_TO_POINTER(btree_item_key(item)->snapshot)))
		return true;
	struct btree_key base = with_snapshot(btree_item_key(item), 0);
	const struct btree_key *previous = d->bases->len ? &g_array_index(d->bases, struct btree_key, d->bases->len - 1)
							 : NULL;
	if (!previous || btree_key_compare(previous, &base))
		g_array_append_val(d->bases, base);
	return true;
}

static GArray *live_snapshot_ids(const struct fs *fs)
{
	GArray *live_ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *other = fs->subvolumes->pdata[i];
		if (!other->deleted) {
			uint32_t id = snapshot_of(other);
			g_array_append_val(live_ids, id);
		}
	}
	return live_ids;
}

static void deletion_free(struct keyed_deletion *d)
{
	g_array_unref(d->bases);
	g_hash_table_unref(d->chain);
	g_free(d);
}

/* Both passes of the pending deletion, from where they are: 0 when it is
 * over, or -EINTR when `stoppable` and fs_config.cancelled asked. */
static int run_deletion(struct fs *fs, bool stoppable)
{
	struct keyed_state *state = state_of(fs);
	struct keyed_deletion *d = state->pending;
	if (!d)
		return 0;
	if (!d->collected) {
		struct chain_keys c = { fs, d, stoppable, false };
		struct btree_key last = BTREE_KEY_MAX;
		btree_visit_range(&state->tree, &d->resume, &last, collect_chain_key, &c);
		if (c.stopped)
			return -EINTR;
		d->collected = true;
	}
	g_autoptr(GArray) live_ids = live_snapshot_ids(fs);
	for (; d->next < d->bases->len; d->next++) {
		if (stoppable && fs_cancelled(fs))
			return -EINTR;
		prune_key_versions(fs, &state->tree, &g_array_index(d->bases, struct btree_key, d->next), live_ids);
	}
	deletion_free(d);
	state->pending = NULL;
	return 0;
}

/*
 * Deleting a snapshot in the keyed design: the versions its id wrote die,
 * and so may versions at its ancestors that only it still saw, and
 * whiteouts that hid only those (bcachefs's snapshot deletion, which merges
 * a node left with one child). Only base keys with a version on the deleted
 * id's chain can change; each is pruned whole. The cost is one pass over the
 * tree, as bcachefs's delete_dead_snapshots walks every key; it may stop
 * between two keys, as bcachefs's background deletion may.
 */
static int keyed_snapshot_delete(struct fs *fs, struct subvolume *sv)
{
	run_deletion(fs, false); /* an earlier deletion that was stopped goes first */
	struct keyed_deletion *d = g_new0(struct keyed_deletion, 1);
	d->snapshot = snapshot_of(sv);
	d->bases = g_array_new(FALSE, FALSE, sizeof(struct btree_key));
	d->resume = BTREE_KEY_MIN;
	d->chain = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (uint32_t id = d->snapshot; id; id = node_of(fs, id)->parent)
		g_hash_table_add(d->chain, GUINT_TO_POINTER(id));
	state_of(fs)->pending = d;
	return run_deletion(fs, true);
}

static void keyed_finish_deletes(struct fs *fs)
{
	run_deletion(fs, false);
}

/* --- life, snapshots, policies' questions, check ----------------------- */

static void keyed_init(struct fs *fs)
{
	struct keyed_state *state = g_new0(struct keyed_state, 1);
	state->nodes = g_array_new(FALSE, TRUE, sizeof(struct snapshot_node));
	fs->design_state = state;
}

static void keyed_top_subvolume(struct fs *fs, struct subvolume *top)
{
	top->tree = &state_of(fs)->tree;
	set_snapshot(top, new_snapshot_id(fs, 0));
	btree_init(top->tree, &fs->txn, top->id);
}

static void keyed_free(struct fs *fs)
{
	struct keyed_state *state = state_of(fs);
	g_array_unref(state->nodes);
	if (state->pending)
		deletion_free(state->pending);
	g_free(state);
	fs->design_state = NULL;
}

static void keyed_subvolume_free(struct subvolume *sv)
{
	g_free(sv->design_private);
	sv->design_private = NULL;
}

/* No copy: both sides get a new snapshot id under the old one. */
static void keyed_snapshot_create(struct fs *fs, struct subvolume *src, struct subvolume *snap)
{
	uint32_t parent = snapshot_of(src);
	snap->tree = src->tree;
	set_snapshot(src, new_snapshot_id(fs, parent));
	set_snapshot(snap, new_snapshot_id(fs, parent));
}

static bool keyed_item_write_is_private(const struct fs *fs, const struct subvolume *sv,
					const struct btree_item *item)
{
	return fs_leaf_is_private(fs, sv->tree, btree_item_key(item));
}

/* Each update writes one new version of the inode item, wherever it is:
 * a snapshot shares no leaf, so private_only changes nothing. The leaves
 * keep no atime overlay (keyed_write_inode_atime_near). */
static uint64_t keyed_inline_atime_estimate(const struct fs *fs, const struct subvolume *sv,
					    fs_atime_wanted_fn wanted, bool private_only, bool from_items)
{
	(void)private_only;
	(void)from_items; /* nothing remembered: one count of the inode items */
	return fs_count_wanted_inodes(fs, sv, wanted) * (BTRFS_ITEM_HEADER_SIZE + BTRFS_INODE_ITEM_SIZE);
}

/* DK4; fills `alive` with the live subvolumes' ids and their ancestors. */
static bool check_snapshot_tree(const struct fs *fs, GHashTable *alive, GError **error)
{
	const GArray *nodes = state_of(fs)->nodes;
	g_autoptr(GHashTable) parents = g_hash_table_new(NULL, NULL);
	for (uint32_t id = 1; id < nodes->len; id++) {
		const struct snapshot_node *n = node_of(fs, id);
		uint32_t depth = n->parent ? node_of(fs, n->parent)->depth + 1 : 0;
		if ((id == 1) != (n->parent == 0) || n->parent >= id || n->depth != depth)
			return derived_corrupt(error, "snapshot", id, "DK4 parent %u depth %u", n->parent, n->depth);
		g_hash_table_add(parents, GUINT_TO_POINTER(n->parent));
	}
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted)
			continue;
		if (g_hash_table_contains(parents, GUINT_TO_POINTER(snapshot_of(sv))))
			return derived_corrupt(error, "snapshot", snapshot_of(sv),
					       "DK4 a parent, the id of live subvolume %" PRIu64, sv->id);
		for (uint32_t id = snapshot_of(sv); id; id = node_of(fs, id)->parent)
			g_hash_table_add(alive, GUINT_TO_POINTER(id));
	}
	return true;
}

struct version_audit {
	const struct fs *fs;
	GHashTable *alive;
	GError **error;
	bool ok;
};

/* DK5's exception: a stopped deletion has yet to prune this key's versions
 * (its base is at or after the first one not pruned, or not visited yet). */
static bool awaits_pruning(const struct fs *fs, const struct btree_key *key)
{
	const struct keyed_deletion *d = state_of(fs)->pending;
	if (!d)
		return false;
	struct btree_key base = with_snapshot(key, 0);
	if (d->next < d->bases->len)
		return btree_key_compare(&base, &g_array_index(d->bases, struct btree_key, d->next)) >= 0;
	return !d->collected && btree_key_compare(key, &d->resume) >= 0;
}

/* DK5 and DK6 for one version. */
static bool audit_version(const struct btree_item *item, void *opaque)
{
	struct version_audit *a = opaque;
	uint32_t id = btree_item_key(item)->snapshot;
	if (!id || id >= state_of(a->fs)->nodes->len)
		return a->ok = derived_corrupt(a->error, "key", btree_item_key(item)->objectid,
					       "DK5 unknown snapshot, %u", id);
	if (!g_hash_table_contains(a->alive, GUINT_TO_POINTER(id)) && !awaits_pruning(a->fs, btree_item_key(item)))
		return a->ok = derived_corrupt(a->error, "key", btree_item_key(item)->objectid,
					       "DK5 a version no live subvolume can see, at snapshot %u", id);
	if (!btree_item_is_whiteout(item))
		return true;
	if (btree_item_size(item))
		return a->ok = derived_corrupt(a->error, "whiteout", btree_item_key(item)->objectid, "DK6 size, %u",
					       btree_item_size(item));
	const struct btree_item *hidden =
		version_seen_from(a->fs, &state_of(a->fs)->tree, node_of(a->fs, id)->parent, btree_item_key(item));
	if (!hidden || btree_item_is_whiteout(hidden))
		return a->ok = derived_corrupt(a->error, "whiteout", btree_item_key(item)->objectid,
					       "DK6 hides nothing, at snapshot %u", id);
	return true;
}

/* DK4-DK6, once DK3 holds. */
static bool check_versions(const struct fs *fs, GError **error)
{
	g_autoptr(GHashTable) alive = g_hash_table_new(NULL, NULL);
	if (!check_snapshot_tree(fs, alive, error))
		return false;
	struct version_audit a = { fs, alive, error, true };
	derived_visit_tree(&state_of(fs)->tree, audit_version, &a);
	return a.ok;
}

static bool keyed_check(const struct fs *fs, GError **error)
{
	const struct keyed_state *state = state_of(fs);
	g_autoptr(GHashTable) ids = g_hash_table_new(NULL, NULL);
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted)
			continue;
		uint32_t id = sv->design_private ? snapshot_of(sv) : 0;
		if (!id || id >= state->nodes->len || sv->tree != &state->tree ||
		    !g_hash_table_add(ids, GUINT_TO_POINTER(id))) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "DK3: subvolume %" PRIu64 " has snapshot id %u (%u known), %s tree, %s", sv->id,
				    id, state->nodes->len, sv->tree == &state->tree ? "the shared" : "another",
				    "each live subvolume needs an id of its own in the shared tree");
			return false;
		}
	}
	return check_versions(fs, error);
}

const struct fs_design_ops fs_design_keyed = {
	.name = "keyed",
	.summary = "one tree, keys versioned by snapshot id (bcachefs)",
	.init = keyed_init,
	.top_subvolume = keyed_top_subvolume,
	.free = keyed_free,
	.subvolume_free = keyed_subvolume_free,
	.lookup = keyed_lookup,
	.lookup_le = keyed_lookup_le,
	.visit_range = keyed_visit_range,
	.lookup_for_write = keyed_lookup_for_write,
	.lookup_near = keyed_lookup_near,
	.visit_range_near = keyed_visit_range_near,
	.lookup_for_write_near = keyed_lookup_for_write_near,
	.write_inode_atime_near = keyed_write_inode_atime_near,
	.insert = keyed_insert,
	.resize = keyed_resize,
	.delete = keyed_delete,
	.snapshot_create = keyed_snapshot_create,
	.snapshot_delete = keyed_snapshot_delete,
	.finish_deletes = keyed_finish_deletes,
	.item_write_is_private = keyed_item_write_is_private,
	.inline_atime_estimate = keyed_inline_atime_estimate,
	.side_trees = false,
	.usage = fs_usage_by_reachability,
	.check = keyed_check,
};
