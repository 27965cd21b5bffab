/*
 * model/fs.c - the filesystem's trees, transactions, clock and reports.
 *
 * What mkfs.btrfs leaves (measured: docs/btrfs-ground-truth.md) and the
 * model builds in fs_new(): one leaf each for the root, extent, dev, fs (5),
 * csum, uuid, free-space and data-reloc trees: 8 blocks, 131072 bytes of
 * Metadata used at 16 KiB; the chunk tree lives in the system chunk.
 *
 * A commit (btrfs_commit_transaction) here writes back queued file data
 * (delalloc), then hands transaction_commit() (model/transaction.c, where
 * the order is) the two steps only the filesystem knows: rewriting the
 * ROOT_ITEM of every tree whose root block moved, and the free-space and
 * dev items of changed chunks.
 *
 * Attribution (docs/model.md): blocks are charged to the cause the caller
 * set (fs_set_cause); work deferred to a commit carries the cause of the op
 * that queued it (a delayed write, a lazytime atime, an extent-tree record),
 * and the root items and chunk trees go to the transaction's busiest cause.
 */
#include "model_error.h"
#include "design.h"

#include <errno.h>
#include <string.h>

#include "blockstore.h"
#include "derived_check.h"

void fs_config_init(struct fs_config *config)
{
	*config = (struct fs_config){
		.nodesize = BTRFS_DEFAULT_NODESIZE,
		.device_size = 4ull << 30,
		.max_inline = BTRFS_DEFAULT_MAX_INLINE,
		.commit_interval_ns = BTRFS_DEFAULT_COMMIT_INTERVAL_NS,
		.start_time_ns = 1354320000ll * 1000000000ll, /* 2012-12-01, the seed mails' month */
		.atime = { .mode = ATIME_RELATIME },
		.delayed_writeback = true,
	};
}

void fs_attributes_init(struct fs_attributes *attributes)
{
	*attributes = (struct fs_attributes){ .mode = 0644, .atime = INT64_MIN, .mtime = INT64_MIN,
					      .ctime = INT64_MIN };
}

struct subvolume *fs_subvolume(const struct fs *fs, uint64_t id)
{
	return g_hash_table_lookup(fs->subvolume_by_id, &id);
}

struct subvolume *fs_add_subvolume(struct fs *fs, uint64_t id, const char *path)
{
	struct subvolume *sv = g_new0(struct subvolume, 1);
	sv->fs = fs;
	sv->id = id;
	sv->tree = &sv->own_tree;
	sv->path = g_strdup(path);
	g_ptr_array_add(fs->subvolumes, sv);
	g_hash_table_insert(fs->subvolume_by_id, &sv->id, sv);
	return sv;
}

static void free_subvolume(gpointer data)
{
	struct subvolume *sv = data;
	if (sv->fs->design->subvolume_free)
		sv->fs->design->subvolume_free(sv);
	g_free(sv->path);
	g_free(sv);
}

/* What the queued work holds reserved: the delayed-refs reserve and the
 * delayed items' (space_info bytes_may_use besides the operations'). */
static uint64_t held_by_queued_work(const struct fs *fs)
{
	uint32_t nodesize = fs->config.nodesize; /* the store's */
	return refs_reserved_bytes(fs->refs, nodesize) + delayed_items_reserved_bytes(fs, nodesize) +
	       fs->delalloc_reserved;
}

/* Would the reservation of `items` be granted now, beside the queued work? */
static bool ticket_fits(const struct fs *fs, unsigned items)
{
	return blockstore_reserve_fits(fs->store, items, held_by_queued_work(fs));
}

/* A reservation the kernel would not grant at once waits on a ticket while
 * the flusher works through its states (space-info.c flush_space()); the
 * first two are the ones that free reservations without a commit:
 * FLUSH_DELAYED_ITEMS (the waiting DIR_INDEX items and inode items go in
 * now, while their directory is still the end of the tree) and
 * FLUSH_DELAYED_REFS (the pending heads go into the extent tree). On a
 * small device, with nothing left to overcommit, this runs through most of
 * a copy (measured: 10951 tickets in 26800 operations on 512 MiB,
 * docs/btrfs-ground-truth.md section 11) and fills the fs tree's leaves. */
static void flush_for_ticket(struct fs *fs, unsigned items)
{
	if (ticket_fits(fs, items))
		return;
	fs->counters.reserve_tickets++;
	delayed_items_run(fs);
	if (!ticket_fits(fs, items))
		fs->txn.ops->run_queued(&fs->txn);
	/* FLUSH_DELALLOC: the pending writes go in, and their reservations
	 * with them (the kernel writes back what it needs; the model all). */
	if (!ticket_fits(fs, items))
		fs_flush_writeback(fs, NULL);
	/* ALLOC_CHUNK: a chunk the kernel would allocate unforced (80 % used). */
	if (!ticket_fits(fs, items) && blockstore_metadata_wants_chunk(fs->store))
		blockstore_force_metadata_chunk(fs->store);
	/* COMMIT_TRANS: the first cycle skips ALLOC_CHUNK_FORCE and commits
	 * (btrfs_async_reclaim_metadata_space() forces only once commit_cycles
	 * > 0), which returns the pinned blocks; a ticket that outlives that
	 * gets ALLOC_CHUNK_FORCE. Traced: docs/btrfs-ground-truth.md section 13. */
	if (!ticket_fits(fs, items)) {
		fs_commit(fs);
		fs->counters.ticket_commits++;
	}
	if (!ticket_fits(fs, items) && blockstore_force_metadata_chunk(fs->store))
		fs->counters.forced_chunks++;
}

/* A delete may fall back on the global reserve (blockstore_reserve_fallback).
 * Inline: each of its two callers is its own copy (a call less a reservation). */
static inline int reserve(struct fs *fs, unsigned items, bool is_delete)
{
	if (blockstore_overcommitted(fs->store))
		return -EROFS;
	/* Most reservations fit at once: no ticket, no new chunk (a read's
	 * reservation was 158 instructions, round 13a). */
	if (blockstore_reserve_at_once(fs->store, items, held_by_queued_work(fs)))
		return 0;
	flush_for_ticket(fs, items);
	int ret = is_delete ? blockstore_reserve_fallback(fs->store, items) : blockstore_reserve(fs->store, items);
	if (ret) {
		fs->counters.enospc_events++;
		return -ENOSPC;
	}
	return 0;
}

int fs_reserve(struct fs *fs, unsigned items)
{
	return reserve(fs, items, false);
}

int fs_reserve_delete(struct fs *fs, unsigned items)
{
	return reserve(fs, items, true);
}

static int release(struct fs *fs, bool stoppable)
{
	/* btrfs_btree_balance_dirty() at the end of the operation, inside its
	 * reservation. */
	delayed_items_balance(fs);
	blockstore_release(fs->store);
	fs->counters.operations++;
	/* btrfs's preemptive flusher runs delayed refs between operations
	 * (model/refs.c, refs_throttle), and its cleaner drops deleted trees. */
	return fs->txn.ops->throttle(&fs->txn, stoppable);
}

void fs_release(struct fs *fs)
{
	release(fs, false);
}

int fs_release_stoppable(struct fs *fs)
{
	return release(fs, true);
}

/* The trees btrfs keeps outside the subvolumes, for walking them all. */
static unsigned global_trees(struct fs *fs, struct btree **trees)
{
	unsigned n = 0;
	trees[n++] = &fs->root_tree;
	trees[n++] = &fs->extent_tree;
	trees[n++] = &fs->dev_tree;
	trees[n++] = &fs->csum_tree;
	trees[n++] = &fs->uuid_tree;
	trees[n++] = &fs->free_space_tree;
	trees[n++] = &fs->data_reloc_tree;
	return n;
}

static struct btree_item *insert_simple(struct fs *fs, struct btree *tree, uint64_t objectid, uint8_t type,
					uint64_t offset, uint32_t size)
{
	struct btree_key key = BTRFS_KEY(objectid, type, offset);
	return btree_insert_item(tree, &fs->txn, &key, size, NULL);
}

static void insert_root_item(struct fs *fs, uint64_t id)
{
	insert_simple(fs, &fs->root_tree, id, BTRFS_ROOT_ITEM_KEY, 0, BTRFS_ROOT_ITEM_SIZE);
}

/* The root directory of a new subvolume (inode 256, its ".." ref): in
 * `sv` through its design, or straight into `tree` when sv is NULL. */
static void make_root_dir(struct fs *fs, struct subvolume *sv, struct btree *tree)
{
	union item_payload payloads[] = {
		{ .inode = { .atime = fs->clock_ns, .mtime = fs->clock_ns, .ctime = fs->clock_ns, .nlink = 1,
			     .mode = S_IFDIR | 0755 } },
		{ .ref = { .count = 1 } },
	};
	struct btree_key keys[] = {
		BTRFS_KEY(FS_ROOT_DIR_INODE, BTRFS_INODE_ITEM_KEY, 0),
		BTRFS_KEY(FS_ROOT_DIR_INODE, BTRFS_INODE_REF_KEY, FS_ROOT_DIR_INODE),
	};
	uint32_t sizes[] = { BTRFS_INODE_ITEM_SIZE, BTRFS_INODE_REF_SIZE + 2 };
	for (unsigned i = 0; i < G_N_ELEMENTS(keys); i++) {
		if (sv)
			subvol_insert(fs, sv, &keys[i], sizes[i], &payloads[i]);
		else
			btree_insert_item(tree, &fs->txn, &keys[i], sizes[i], &payloads[i]);
	}
}

static void mkfs(struct fs *fs)
{
	btree_init(&fs->root_tree, &fs->txn, BTRFS_ROOT_TREE_OBJECTID);
	btree_init(&fs->extent_tree, &fs->txn, BTRFS_EXTENT_TREE_OBJECTID);
	btree_init(&fs->dev_tree, &fs->txn, BTRFS_DEV_TREE_OBJECTID);
	btree_init(&fs->csum_tree, &fs->txn, BTRFS_CSUM_TREE_OBJECTID);
	btree_init(&fs->uuid_tree, &fs->txn, BTRFS_UUID_TREE_OBJECTID);
	btree_init(&fs->free_space_tree, &fs->txn, BTRFS_FREE_SPACE_TREE_OBJECTID);
	btree_init(&fs->data_reloc_tree, &fs->txn, BTRFS_DATA_RELOC_TREE_OBJECTID);
	struct subvolume *top = fs_add_subvolume(fs, FS_TOP_SUBVOLUME, "/");
	fs->design->top_subvolume(fs, top);
	top->highest_inode = FS_ROOT_DIR_INODE;
	make_root_dir(fs, top, NULL);
	fs_atime_subvolume_init(fs, top);
	/* The data reloc tree has a root directory too, never snapshotted. */
	make_root_dir(fs, NULL, &fs->data_reloc_tree);

	uint64_t ids[] = { BTRFS_EXTENT_TREE_OBJECTID, BTRFS_DEV_TREE_OBJECTID, BTRFS_FS_TREE_OBJECTID,
			   BTRFS_CSUM_TREE_OBJECTID, BTRFS_UUID_TREE_OBJECTID, BTRFS_FREE_SPACE_TREE_OBJECTID,
			   BTRFS_DATA_RELOC_TREE_OBJECTID };
	for (unsigned i = 0; i < G_N_ELEMENTS(ids); i++)
		insert_root_item(fs, ids[i]);
	/* The root tree's directory (objectid 6) with its "default" entry. */
	insert_simple(fs, &fs->root_tree, BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_INODE_ITEM_KEY, 0, BTRFS_INODE_ITEM_SIZE);
	insert_simple(fs, &fs->root_tree, BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_INODE_REF_KEY,
		      BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_INODE_REF_SIZE + 2);
	insert_simple(fs, &fs->root_tree, BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_DIR_ITEM_KEY,
		      fs_name_hash("default", 7), BTRFS_DIR_ITEM_SIZE + 7);
	/* The dev tree's device stats item; DEV_EXTENTs come with the chunks. */
	insert_simple(fs, &fs->dev_tree, 0, 249 /* PERSISTENT_ITEM */, 1, 40);
	/* The uuid tree names the top-level subvolume. */
	insert_simple(fs, &fs->uuid_tree, 0x5eed, BTRFS_UUID_KEY_SUBVOL, FS_TOP_SUBVOLUME, BTRFS_UUID_ITEM_SIZE);
}

struct fs *fs_new(const struct fs_config *config, GError **error)
{
	if (config->max_inline > btrfs_leaf_data_size(config->nodesize) - BTRFS_ITEM_HEADER_SIZE -
				     BTRFS_FILE_EXTENT_INLINE_HEADER) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_INVALID,
			    "max_inline %u: larger than an item can be at nodesize %u", config->max_inline,
			    config->nodesize);
		return NULL;
	}
	if (!fs_config_validate(config, error))
		return NULL;
	struct blockstore_config store_config = { .nodesize = config->nodesize,
						  .device_size = config->device_size,
						  .metadata_dup = !config->metadata_single };
	struct blockstore *store = blockstore_new(&store_config, error);
	if (!store)
		return NULL;
	struct fs *fs = g_new0(struct fs, 1);
	fs->config = *config;
	fs->design = config->design ? config->design : fs_designs[0];
	fs->config.design = fs->design;
	if (!fs->config.atime_policy)
		fs->config.atime_policy = fs_policy_at(0);
	fs->store = store;
	fs->refs = refs_new(&fs->extent_tree, fs_data_extent_freed, fs);
	fs->txn = (struct transaction){ .transid = 1, .store = store, .ops = &refs_transaction_ops,
					.accounting = fs->refs, .written = g_ptr_array_new(), .run_leaves = g_ptr_array_new(),
					.stop = config->cancelled, .stop_opaque = config->cancelled_opaque };
	fs->subvolumes = g_ptr_array_new_with_free_func(free_subvolume);
	fs->subvolume_by_id = g_hash_table_new(g_int64_hash, g_int64_equal);
	fs->names = g_string_chunk_new(1 << 16);
	fs->pending_writes = g_array_new(FALSE, FALSE, sizeof(struct pending_write));
	fs->delayed = delayed_items_new();
	fs->free_space_written = g_array_new(FALSE, TRUE, sizeof(uint64_t));
	fs->clock_ns = fs->last_commit_ns = config->start_time_ns;
	fs->next_subvolume_id = BTRFS_FIRST_FREE_OBJECTID;
	if (fs->design->init)
		fs->design->init(fs);
	mkfs(fs);
	fs_commit(fs);
	blockstore_set_cause(fs->store, SPACE_CAUSE_WRITE);
	fs->counters = (struct fs_counters){ 0 };
	return fs;
}

void fs_collect_subvolume_blocks(const struct fs *fs, GHashTable *seen)
{
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted)
			continue;
		btree_collect_blocks(sv->tree->root, seen);
		if (sv->atime_tree.root)
			btree_collect_blocks(sv->atime_tree.root, seen);
	}
}

/* Every pointer that holds blocks from outside the trees, counted
 * (release false) or let go (true): btree_count_holders(). */
static void hold_all_blocks(struct fs *fs, bool release)
{
	void (*hold)(struct tree_block *) = release ? btree_release_held : btree_count_holders;
	struct btree *trees[8];
	unsigned n = global_trees(fs, trees);
	for (unsigned i = 0; i < n; i++)
		hold(trees[i]->root);
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted)
			continue;
		hold(sv->tree->root);
		if (sv->atime_tree.root)
			hold(sv->atime_tree.root);
	}
	refs_hold_dead_blocks(fs->refs, release); /* a deletion that was stopped */
}

void fs_free(struct fs *fs)
{
	if (!fs)
		return;
	hold_all_blocks(fs, false);
	hold_all_blocks(fs, true);
	g_ptr_array_unref(fs->subvolumes);
	if (fs->design->free)
		fs->design->free(fs);
	refs_free(fs->refs);
	blockstore_free(fs->store);
	g_hash_table_unref(fs->subvolume_by_id);
	g_string_chunk_free(fs->names);
	g_array_unref(fs->pending_writes);
	delayed_items_free(fs->delayed);
	g_array_unref(fs->free_space_written);
	fs_dirty_time_free(fs);
	fs_dir_cache_free(fs);
	g_ptr_array_unref(fs->txn.written);
	if (fs->txn.run_leaves)
		g_ptr_array_unref(fs->txn.run_leaves);
	g_free(fs);
}

/* --- commit ---------------------------------------------------------- */

static bool update_root_item(struct fs *fs, struct btree *tree)
{
	if (!tree->root_dirty)
		return false;
	tree->root_dirty = false;
	struct btree_key key = BTRFS_KEY(tree->id, BTRFS_ROOT_ITEM_KEY, 0);
	btree_lookup_for_write(&fs->root_tree, &fs->txn, &key);
	return true;
}

static bool update_root_items(void *opaque)
{
	struct fs *fs = opaque;
	bool changed = false;
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted)
			continue;
		changed |= update_root_item(fs, sv->tree);
		if (sv->atime_tree.root)
			changed |= update_root_item(fs, &sv->atime_tree);
	}
	struct btree *trees[8];
	unsigned n = global_trees(fs, trees);
	for (unsigned i = 1; i < n; i++) /* the root tree's root is in the superblock */
		changed |= update_root_item(fs, trees[i]);
	fs->root_tree.root_dirty = false;
	return changed;
}

/*
 * The free-space tree keeps, per block group, a FREE_SPACE_INFO and its free
 * extents; the model keeps the info item and one extent item per block group
 * and rewrites them whenever the group's usage changed (docs/model.md: an
 * approximation that undercounts items on a fragmented group). New chunks
 * also get their DEV_EXTENT items (two for DUP metadata).
 */
/* Chunk i's used bytes now: a COW in the free-space tree may have moved a
 * block into or out of it, or grown the chunk array, since the caller looked. */
static uint64_t chunk_used_now(const struct fs *fs, unsigned i)
{
	unsigned count;
	return blockstore_chunks(fs->store, &count)[i].used;
}

static bool update_chunk_trees(void *opaque)
{
	struct fs *fs = opaque;
	unsigned count;
	blockstore_chunks(fs->store, &count); /* chunks made by this pass's inserts: the next pass */
	bool changed = false;
	for (unsigned i = 0; i < count; i++) {
		unsigned now;
		const struct chunk c = blockstore_chunks(fs->store, &now)[i]; /* a copy: the array may grow */
		struct btree_key info = BTRFS_KEY(c.start, BTRFS_FREE_SPACE_INFO_KEY, c.length);
		struct btree_key extent = BTRFS_KEY(c.start, BTRFS_FREE_SPACE_EXTENT_KEY, c.length);
		if (i >= fs->free_space_written->len) {
			/* The extent item says the group's free bytes (free_space_tree_check
			 * FS2); if the inserts change them, the next pass rewrites it. */
			union item_payload free_bytes = { .value = c.length - c.used };
			btree_insert_item(&fs->free_space_tree, &fs->txn, &info, BTRFS_FREE_SPACE_INFO_SIZE, NULL);
			btree_insert_item(&fs->free_space_tree, &fs->txn, &extent, 0, &free_bytes);
			g_array_append_val(fs->free_space_written, c.used);
			for (unsigned copy = 0; copy < (c.data || fs->config.metadata_single ? 1u : 2u); copy++)
				insert_simple(fs, &fs->dev_tree, 1, BTRFS_DEV_EXTENT_KEY,
					      c.start * 2 + copy * c.length, BTRFS_DEV_EXTENT_SIZE);
			changed = true;
			continue;
		}
		if (g_array_index(fs->free_space_written, uint64_t, i) != c.used) {
			btree_lookup_for_write(&fs->free_space_tree, &fs->txn, &info);
			struct btree_item *item = btree_lookup_for_write(&fs->free_space_tree, &fs->txn, &extent);
			/* Read after the lookups' COW, which may free a block of this very
			 * chunk: else the item keeps the old free bytes while the record
			 * of what was written says the new, and no pass mends it. */
			uint64_t used = chunk_used_now(fs, i);
			*btree_item_value_for_write(item) = c.length - used;
			g_array_index(fs->free_space_written, uint64_t, i) = used;
			changed = true;
		}
	}
	return changed;
}

int fs_commit(struct fs *fs)
{
	if (fs->design->finish_deletes)
		fs->design->finish_deletes(fs);
	/* A cancelled writeback returns at once: what it wrote stays in the
	 * running transaction and the rest queued, both for the next commit
	 * (committing now would cost as much as the writeback did). */
	int stopped = fs_flush_writeback_cancellable(fs, NULL);
	if (stopped)
		return stopped;
	delayed_items_run(fs); /* btrfs_run_delayed_items */
	/* What no one operation asked for goes to the busiest cause of the
	 * transaction; each extent-tree record to its own (refs.c). */
	enum space_cause op_cause = blockstore_set_cause(fs->store, blockstore_busiest_cause(fs->store));
	const struct transaction_commit_steps steps = { .update_root_items = update_root_items,
							.update_chunk_trees = update_chunk_trees,
							.opaque = fs };
	fs->counters.blocks_written += transaction_commit(&fs->txn, &steps);
	blockstore_set_cause(fs->store, op_cause);
	fs->counters.commits++;
	fs->last_commit_ns = fs->clock_ns;
	if (fs->design->clock)
		fs->design->clock(fs, true);
	return blockstore_overcommitted(fs->store) ? -ENOSPC : 0;
}

int fs_sync(struct fs *fs)
{
	fs_dirty_time_write_all(fs); /* sync_filesystem writes I_DIRTY_TIME inodes */
	return fs_commit(fs);
}

int fs_set_clock(struct fs *fs, int64_t now_ns)
{
	if (now_ns < fs->clock_ns)
		return -EINVAL;
	fs->clock_ns = now_ns;
	fs_dirty_time_write_expired(fs);
	if (fs->design->clock)
		fs->design->clock(fs, false);
	bool dirty = fs->txn.blocks_dirty || fs->pending_writes->len;
	if (dirty && now_ns - fs->last_commit_ns >= fs->config.commit_interval_ns)
		return fs_commit(fs);
	if (!dirty)
		fs->last_commit_ns = MAX(fs->last_commit_ns, now_ns - fs->config.commit_interval_ns);
	return 0;
}

void fs_set_cause(struct fs *fs, enum space_cause cause)
{
	blockstore_set_cause(fs->store, cause);
}

int64_t fs_clock(const struct fs *fs)
{
	return fs->clock_ns;
}

void fs_set_atime_options(struct fs *fs, const struct atime_options *options)
{
	fs->config.atime = *options;
}

const struct atime_options *fs_atime_options(const struct fs *fs)
{
	return &fs->config.atime;
}

/* --- access time --------------------------------------------------------- */

int fs_read(struct fs *fs, const char *path, bool *atime_updated)
{
	return fs_read_path(fs, &(struct fs_path){ .bytes = path, .len = FS_PATH_UNMEASURED }, atime_updated);
}

/* NS3 (fs_namespace.c): the inode item of `where`, looked up from the path
 * the last access's lookup left (fs->read_cursor), which it leaves at the
 * item for the access's atime write. A grep reads a directory (its inode
 * item just after the last file read: the tree's keys are in creation
 * order, which is the grep's), then its files, each the next inode item;
 * `near` is the walk's path, the cursor's start in another subvolume. */
static inline __attribute__((always_inline)) const struct btree_item *
cursor_inode_item(struct fs *fs, const struct inode_location *where, const struct btree_path *near,
		  struct btree_path **path)
{
	struct read_cursor *cursor = &fs->read_cursor;
	if (cursor->subvolume != where->subvolume) {
		*cursor = (struct read_cursor){ .subvolume = where->subvolume, .inode_near = *near };
		cursor->inode_near.hop = 0; /* the walk's path has none */
	}
	*path = &cursor->inode_near;
	struct btree_key key = BTRFS_KEY(where->inode, BTRFS_INODE_ITEM_KEY, 0);
	return subvol_lookup_kept(where->subvolume, &key, &cursor->inode_near);
}

int fs_read_path(struct fs *fs, const struct fs_path *path, bool *atime_updated)
{
	struct inode_location where;
	struct btree_path near;
	near.levels = 0; /* empty: only its levels are read (zeroing all of it was 17 instructions a read) */
	near.links = 0;  /* never stamped (BT18): the cursor may take it */
	int ret = fs_resolve_near(fs, path, &where, &near);
	if (ret)
		return ret;
	if (fs_is_placeholder(&where))
		return -EISDIR;
	struct btree_path *at;
	const struct btree_item *item = cursor_inode_item(fs, &where, &near, &at);
	if (fs_mode_is_dir(btree_item_inode(item)->mode))
		return -EISDIR;
	return fs_access_inode(fs, &where, item, at, atime_updated);
}

int fs_readdir(struct fs *fs, const char *path, bool *atime_updated)
{
	struct inode_location where;
	struct btree_path near;
	near.levels = 0;
	near.links = 0;
	int ret = fs_resolve_near(fs, &(struct fs_path){ .bytes = path, .len = FS_PATH_UNMEASURED }, &where, &near);
	if (ret)
		return ret;
	if (fs_is_placeholder(&where)) { /* listed empty; its atime lives in memory only */
		if (atime_updated)
			*atime_updated = false;
		fs->counters.atime_skipped++;
		return 0;
	}
	struct btree_path *at;
	const struct btree_item *item = cursor_inode_item(fs, &where, &near, &at);
	if (!fs_mode_is_dir(btree_item_inode(item)->mode))
		return -ENOTDIR;
	return fs_access_inode(fs, &where, item, at, atime_updated);
}

/* --- reports and checks -------------------------------------------------- */

void fs_counters(const struct fs *fs, struct fs_counters *counters)
{
	*counters = fs->counters;
	counters->blocks_cowed = fs->txn.stats.blocks_cowed;
	counters->blocks_allocated = fs->txn.stats.blocks_allocated;
	counters->blocks_freed = fs->txn.stats.blocks_freed;
	counters->bytes_written = counters->blocks_written * fs->config.nodesize * (fs->config.metadata_single ? 1 : 2) +
				  counters->data_bytes_written;
}

uint64_t fs_enospc_events(const struct fs *fs)
{
	return fs->counters.enospc_events;
}

uint64_t fs_atime_enospc(const struct fs *fs)
{
	return fs->counters.atime_enospc;
}

const struct fs_counters *fs_counters_live(const struct fs *fs)
{
	return &fs->counters;
}

void fs_report(const struct fs *fs, struct fs_report *report)
{
	blockstore_report(fs->store, &report->space);
	fs_counters(fs, &report->counters);
	report->clock_ns = fs->clock_ns;
	report->transid = fs->txn.transid;
	if (fs->design->report)
		fs->design->report(fs, report);
}

static unsigned all_trees(struct fs *fs, struct btree ***out)
{
	struct btree **trees = g_new(struct btree *, 8 + 2 * fs->subvolumes->len);
	unsigned n = global_trees(fs, trees);
	g_autoptr(GHashTable) listed = g_hash_table_new(NULL, NULL);
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted)
			continue;
		if (g_hash_table_add(listed, sv->tree)) /* a tree shared by subvolumes, once */
			trees[n++] = sv->tree;
		if (sv->atime_tree.root)
			trees[n++] = &sv->atime_tree;
	}
	*out = trees;
	return n;
}

/* BT18 for the read cursor (fs_read): stamped with its tree's links, it is
 * linked from that tree's root. */
static bool read_cursor_check(const struct fs *fs, GError **error)
{
	const struct read_cursor *c = &fs->read_cursor;
	return !c->subvolume || c->subvolume->deleted || btree_kept_path_check(c->subvolume->tree, &c->inode_near, error);
}

bool fs_check(struct fs *fs, GError **error)
{
	g_autofree struct btree **trees = NULL;
	unsigned n = all_trees(fs, &trees);
	uint32_t nodesize = blockstore_nodesize(fs->store);
	for (unsigned i = 0; i < n; i++)
		if (!btree_check(trees[i], nodesize, error))
			return false;
	g_autoptr(GHashTable) live = g_hash_table_new(NULL, NULL);
	if (!refs_check(fs->refs, trees, n, blockstore_unreleased_blocks(fs->store), live, error))
		return false;
	if (!btree_check_item_sharing(live, blockstore_unreleased_blocks(fs->store), error) ||
	    !btree_check_written(&fs->txn, live, error))
		return false;
	if (!blockstore_check(fs->store, live, error))
		return false;
	return derived_check(fs, live, error) && fs->design->check(fs, error) && read_cursor_check(fs, error) &&
	       fs_namespace_check(fs, error) &&
	       fs_dir_cache_check(fs, error) &&
	       delayed_items_check(fs, error) && fs_data_check(fs, error) && fs_atime_check(fs, error);
}

void fs_dump(const struct fs *fs, FILE *out)
{
	g_autofree struct btree **trees = NULL;
	unsigned n = all_trees((struct fs *)fs, &trees);
	for (unsigned i = 0; i < n; i++)
		btree_dump(trees[i], out);
}
