/*
 * model/fs_internal.h - what the fs_*.c files share; not part of the contract.
 */
#ifndef COWSIM_MODEL_FS_INTERNAL_H
#define COWSIM_MODEL_FS_INTERNAL_H

#include <string.h>
#include <sys/stat.h>

#include "btree.h"
#include "delayed_items.h"
#include "constants.h"
#include "fs.h"
#include "refs.h"
#include "transaction.h"

#define FS_TOP_SUBVOLUME BTRFS_FS_TREE_OBJECTID
#define FS_ROOT_DIR_INODE BTRFS_FIRST_FREE_OBJECTID

/* A placeholder: the empty, read-only directory a snapshot shows where its
 * source held a nested subvolume (or where a deleted one was linked). It is
 * an inode_location {the subvolume holding the entry, FS_PLACEHOLDER_INODE}
 * with no item in any tree: btrfs makes it in memory only (new_simple_dir()
 * with simple_dir_inode_operations), so nothing done to it writes metadata
 * and nothing can be created in it. */
#define FS_PLACEHOLDER_INODE BTRFS_EMPTY_SUBVOL_DIR_OBJECTID

/* btrfs dir item file types (BTRFS_FT_*). */
enum { FT_REG_FILE = 1, FT_DIR = 2, FT_SYMLINK = 7 };

struct subvolume {
	const struct fs *fs;          /* the filesystem it belongs to */
	uint64_t id;
	struct btree *tree;           /* the tree its items are in (design.h) */
	struct btree own_tree;        /* a tree of its own, for a design that gives it one */
	void *design_private;         /* the design's state for it (keyed: its snapshot id) */
	struct btree atime_tree;      /* a policy's tree beside it (side-table, hybrid); root NULL otherwise */
	uint64_t highest_inode;       /* the last inode number handed out */
	bool readonly;
	bool deleted;
	uint32_t lineage;             /* its names' lineage (fs_dir_cache.c DC4); 0: none yet */
	char *path;                   /* where it was made, for reports */
};

/* Data waiting for writeback (delalloc): inserted at the next commit. */
struct pending_write {
	struct subvolume *subvolume;
	uint64_t inode;
	uint64_t offset, length;
	enum space_cause cause;       /* of the op that queued it: writeback is charged to it */
	uint64_t reserved;            /* its delalloc metadata reservation (fs_data.c WB1) */
};

/* An atime kept in memory, model/atime_policy.c: lazytime vfs's (I_DIRTY_TIME)
 * or a lost update's (fs->lost_atimes). */
struct dirty_time {
	uint64_t subvolume_id;
	uint64_t inode;
	int64_t atime;                /* the atime stat would show, ns */
	int64_t dirtied_ns;           /* when it was first kept (dirtied_time_when) */
	bool written;                 /* written with another change; waits in the queue to be freed */
	enum space_cause cause;       /* of the access that kept it: its write-out is charged to it */
	int64_t stored;               /* lost_atimes only: the atime stored for the inode when its
				       * update was lost, ns (LA1: it is still the stored one) */
};

/* An inode, wherever it lives. */
struct inode_location {
	struct subvolume *subvolume;
	uint64_t inode;
};

static inline bool fs_is_placeholder(const struct inode_location *where)
{
	return where->inode == FS_PLACEHOLDER_INODE;
}

/* The directories the last walks passed through (fs_namespace.c, NS1): a
 * walk of a path that starts with prefix[0, levels[k].end) resumes at
 * levels[k].dir, the deepest such k.
 *
 *   prefix  "/snap3/usr/include/linux/"
 *   levels   [0] end 7  -> /snap3's root  [1] end 11 -> usr  [2] end 19 -> include  [3] end 25 -> linux
 */
#define WALK_MEMO_LEVELS 16
struct walk_memo_level {
	uint16_t end;                 /* prefix[0, end) ends with '/' and leads to dir */
	bool checked;                 /* NS2: dir's inode item is a directory (a step from it passed) */
	struct inode_location dir;
};

struct walk_memo {
	uint64_t names_removed;       /* fs->names_removed when the levels were recorded */
	unsigned depth;               /* levels in use, by increasing end; 0: none */
	/* NS7: prefix[0, read_prefix) is the last measured path's too (fs_read_path()'s), at most the
	 * deepest level's end; 0: not known */
	uint16_t read_prefix;
	struct walk_memo_level levels[WALK_MEMO_LEVELS];
	char prefix[4096];            /* the bytes up to the deepest level's end */
};

/* NS3: the path the last access's (read, readdir) inode lookup and atime write left, in
 * subvolume's tree: the next read's inode lookup starts there when it is
 * still linked from that tree's root. A hint: never trusted unchecked. */
struct read_cursor {
	const struct subvolume *subvolume;
	struct btree_path inode_near;
};

/* DC1-DC7 (fs_dir_cache.c): the DIR_ITEMs of directories the walks stepped
 * out of, one table each, keyed by (name lineage, directory): a snapshot and
 * its source share a directory's table while neither has changed its names.
 * A table is one block, its names beside its entries (DC7): a step after a
 * turn to another directory finds them in the lines the turn prefetched.
 *
 *   | struct dir_table | index[mask + 1] | entry | entry | ... |   (bytes)
 *                        u32: 0 free,      offset location len
 *                        else an entry's   root type name..., each
 *                        byte position     padded to 8 bytes
 */
struct dir_cache_entry {
	uint64_t offset;              /* the DIR_ITEM's key offset */
	uint64_t location;
	uint8_t name_len;             /* at most BTRFS_NAME_LEN */
	bool location_is_root;
	uint8_t file_type;            /* FT_*: FT_DIR leads to a directory (fs_namespace.c NS6) */
	char name[];                  /* name_len bytes, no NUL */
};

struct dir_table {
	struct dir_table *next;       /* the next table of its index bucket */
	struct dir_table *newer, *older; /* the list: by fill, or the last second chance (DC3) */
	uint64_t dir;
	uint32_t lineage;             /* whose names (DC2): the lineage where dir's last changed */
	uint32_t count, mask;         /* entries; slots - 1 (slots a power of two) */
	uint32_t bytes;               /* the block's, header to the last entry's end */
	/* The block the walk turned to after this one last time, and its size: a
	 * hint, prefetched when the walk turns to this one, never read (it may
	 * have been freed since). */
	uintptr_t next_turn;
	uint32_t next_turn_bytes;
	bool asked;                   /* a step turned to it since it was last put at the newest end */
	uint32_t index[];             /* mask + 1 slots: an entry's byte position in the block, 0 free */
};

static inline const struct dir_cache_entry *fs_dir_table_entry(const struct dir_table *t, uint32_t at)
{
	return (const struct dir_cache_entry *)((const char *)t + at);
}

/* A lineage: one state of a subvolume's names that a snapshot and its source
 * share (DC4). Its holders' directories hold what its parent's did, but for
 * the `changed` ones; a frozen lineage changes no more (a holder that changes
 * a name first branches into a new lineage of its own). */
#define LINEAGE_CHANGED 4             /* directories a lineage tells apart from its parent's */
#define LINEAGE_DEPTH 32              /* parents at most: a step looks up that many */
struct name_lineage {
	uint32_t parent;              /* 0: none, the names are its own */
	uint16_t depth;               /* parents up the chain */
	uint8_t changed_count;
	bool frozen;                  /* a snapshot took it: held by two or more */
	uint64_t changed[LINEAGE_CHANGED];
};

struct dir_cache_asked {
	struct dir_table *table;
	const struct subvolume *subvolume;
	uint64_t dir;
};

#define DIR_CACHE_BUCKETS 4096
/* The tables' bytes at most (fs_dir_cache.c DC3): the seed's /usr/include
 * (2 026 directories) fits; a constant, so that 10^7 files cost no more
 * than 10^3. */
#define DIR_CACHE_BYTES (4u << 20)
struct dir_cache {
	GArray *lineages;             /* struct name_lineage by id (0: none); NULL until the first */
	struct dir_table **buckets;   /* DIR_CACHE_BUCKETS chains by (lineage, dir); NULL until the first */
	struct dir_table *newest, *oldest;
	size_t bytes;                 /* the tables' headers and slots (DC3) */
	char *fill;                   /* a fill's entries, laid out as in its block (fill_size bytes) */
	uint32_t fill_size;
	struct dir_cache_asked last;  /* DC5: the table the last step asked; table NULL: none */
	/* the directory of the last steps, and how many in a row without a name added or removed */
	const struct subvolume *streak_subvolume;
	uint64_t streak_dir;
	unsigned streak;
	bool off;                     /* checks and tests: every step looks its entry up in the tree */
};

struct fs {
	struct fs_config config;
	const struct fs_design_ops *design; /* model/design.h; never NULL */
	void *design_state;           /* the design's own */
	struct blockstore *store;
	struct refs *refs;
	struct transaction txn;
	struct btree root_tree, extent_tree, csum_tree, free_space_tree, dev_tree, uuid_tree, data_reloc_tree;
	GPtrArray *subvolumes;        /* struct subvolume *, by creation; owns them */
	GHashTable *subvolume_by_id;  /* id -> struct subvolume * */
	GStringChunk *names;          /* every name a directory entry points at */
	GArray *pending_writes;       /* struct pending_write */
	uint64_t delalloc_reserved;   /* bytes the pending writes hold for their metadata (WB1) */
	struct delayed_items *delayed; /* directory indexes and inode updates not yet in the trees */
	GHashTable *dirty_times;      /* lazytime vfs: (subvolume, inode) -> struct dirty_time * in dirty_time_queue */
	GQueue dirty_time_queue;      /* the same, oldest first; owns them */
	/* Lost atime updates (atime_policy.c, keep_lost_atime()): (subvolume, inode) -> the
	 * in-memory atime a read set although its update never reached the
	 * disk, until a later write of that inode's atime (LA1); owns its
	 * struct dirty_time keys. NULL until the first. */
	GHashTable *lost_atimes;
	GArray *free_space_written;   /* uint64 per chunk: used, as the free-space tree last said */
	unsigned dev_extents_written; /* chunks with DEV_EXTENT items */
	uint64_t names_removed;       /* directory entries, inodes and subvolumes removed so far */
	struct walk_memo walk_memo;
	struct dir_cache dir_cache;
	struct read_cursor read_cursor;
	struct read_cursor dir_cursor; /* NS3: where the last new name left its directory's inode item */
	bool writeback_without_cursor; /* tests: each write's inode lookup starts at the root (fs_data.c) */
	int64_t clock_ns;
	int64_t last_commit_ns;
	uint64_t next_subvolume_id;
	struct fs_counters counters;
};

/* NS1 and NS2 (fs_namespace.c): each level of the walk memo leads where a full walk of its
 * prefix does, and a level marked checked holds a directory. */
bool fs_namespace_check(struct fs *fs, GError **error);

bool fs_dir_cache_check(const struct fs *fs, GError **error);
void fs_dir_cache_free(struct fs *fs);
/* DC1: a DIR_ITEM of (sv, dir) was added or removed. */
void fs_dir_cache_names_changed(struct fs *fs, struct subvolume *sv, uint64_t dir);
/* DC4: snap's items are src's, just shared by the design. */
void fs_dir_cache_snapshot(struct fs *fs, struct subvolume *src, struct subvolume *snap);

/* A path's last component and the directory that holds it. */
struct name_location {
	struct inode_location dir;
	const char *name;
	uint16_t name_len;
	/* The DIR_ITEM offset a new entry for name takes (the first free one
	 * from its hash on), when the name check that found it absent saw it;
	 * FS_HASH_SLOT_UNKNOWN otherwise (fs_resolve_parent leaves it so). */
	uint64_t hash_slot;
	/* The path the lookups that found the directory (and the name check)
	 * left in its subvolume, or levels 0: a later change to the directory
	 * starts from it while btree_path_is_current() says so (NS3). */
	struct btree_path near;
	/* Where fs_resolve_parent() found the directory's inode item: the leaf
	 * of `near` then (or NULL) and the slot. Only where touch_dir()'s
	 * lookup of the item starts when the entry's insert left `near` in that
	 * leaf after it: the lookup compares the item there first, so nothing
	 * relies on the item still being there (a push may have moved it). */
	const struct tree_block *dir_leaf;
	uint32_t dir_slot;
};
#define FS_HASH_SLOT_UNKNOWN UINT64_MAX

/* fs_namespace.c */
int fs_resolve(struct fs *fs, const char *path, struct inode_location *out);
/* fs_resolve() leaving *near (levels 0 on entry) at the last lookup it
 * made, the final name's directory entry: the inode item is usually close
 * by. A path of len FS_PATH_UNMEASURED is measured by the walk. */
#define FS_PATH_UNMEASURED SIZE_MAX
int fs_resolve_near(struct fs *fs, const struct fs_path *path, struct inode_location *out, struct btree_path *near);
int fs_resolve_parent(struct fs *fs, const char *path, struct name_location *out);
const struct btree_item *fs_inode_item(const struct subvolume *subvolume, uint64_t inode);
struct btree_item *fs_inode_item_for_write(struct fs *fs, const struct inode_location *where);
const struct btree_item *fs_dir_lookup(const struct subvolume *subvolume, uint64_t dir, const char *name,
				       uint16_t name_len);
/* Can `name` be added to `dir`? 0; -EEXIST when it is there; -EOVERFLOW when
 * the names of its hash's window fill it (fs_namespace.c, the top). */
int fs_dir_name_room(const struct subvolume *subvolume, uint64_t dir, const char *name, uint16_t name_len);
/* The same near an earlier lookup (subvol_lookup_near). */
const struct btree_item *fs_inode_item_near(const struct subvolume *subvolume, uint64_t inode,
					    struct btree_path *near);
struct btree_item *fs_inode_item_for_write_near(struct fs *fs, const struct inode_location *where,
						struct btree_path *near);
int fs_add_dir_entry(struct fs *fs, const struct name_location *at, uint64_t location, bool location_is_root,
		     uint8_t file_type);
void fs_remove_dir_entry(struct fs *fs, const struct name_location *at);

/* fs_config.cancelled asked: true when the caller wants the op to stop
 * (the transaction's stop hook is that hook, fs_new()). */
static inline bool fs_cancelled(const struct fs *fs)
{
	return transaction_stop_requested(&fs->txn);
}

/* fs_data.c */
int fs_write_range(struct fs *fs, struct subvolume *subvolume, uint64_t inode, uint64_t offset, uint64_t length);
/* fs_write_range() in two steps, for a caller that must know there is room
 * before it changes anything: the data reservation (0 or -ENOSPC, counted),
 * then the write itself. */
int fs_reserve_write(struct fs *fs, uint64_t offset, uint64_t length);
int fs_write_reserved(struct fs *fs, struct subvolume *subvolume, uint64_t inode, uint64_t offset, uint64_t length);
void fs_drop_extents(struct fs *fs, struct subvolume *subvolume, uint64_t inode, uint64_t start, uint64_t end);
void fs_flush_writeback(struct fs *fs, const struct inode_location *only);
/* The same, stopping when fs_config.cancelled says so: 0, or -EINTR with
 * the writes not done still queued (and still reserved). */
int fs_flush_writeback_cancellable(struct fs *fs, const struct inode_location *only);
/* The order in which a flush's n writes reach the trees: an inline one as
 * it is submitted, a regular one `lag` submissions after its own (its
 * ordered extent completes behind the writeback), every one by the end.
 * order[] receives the n indexes. */
void fs_writeback_order(const bool *is_inline, unsigned n, unsigned lag, unsigned *order);
/* WB1 (fs_data.c): delalloc_reserved is what the pending writes hold. */
bool fs_data_check(const struct fs *fs, GError **error);
void fs_data_miscount_for_test(struct fs *fs, int64_t delta);
void fs_data_extent_freed(void *opaque, struct transaction *txn, struct data_extent *extent);
void fs_delete_inode_items(struct fs *fs, struct subvolume *subvolume, uint64_t inode);

/* The subvol_* calls, a subvolume's items as it sees them, are the
 * design's item view: model/design.h. */

/* atime_policy.c */
/* An access (read, readdir) of an existing inode whose item `inode` the
 * caller's lookup near *near (as subvol_lookup_near) has just found. */
int fs_access_inode(struct fs *fs, const struct inode_location *where, const struct btree_item *inode,
		    struct btree_path *near, bool *updated);
/* The policy's per-subvolume storage (atime_policy.h): at mkfs, and
 * following a snapshot's creation and deletion. */
void fs_atime_subvolume_init(struct fs *fs, struct subvolume *sv);
void fs_atime_snapshot_create(struct fs *fs, struct subvolume *src, struct subvolume *snap);
void fs_atime_snapshot_delete(struct fs *fs, struct subvolume *snap);
/* lazytime vfs: write the atimes kept in memory. _all at a sync, _expired
 * when the clock moves (those first kept LINUX_DIRTYTIME_EXPIRE_NS ago),
 * _inode at an fsync; fs_dirty_time_other_change() from
 * fs_inode_item_for_write(): the inode's other change carries its atime.
 * fs_dirty_time_free() at fs_free(). None of them fails: an atime that meets
 * ENOSPC at write-out is dropped and counted (atime_enospc, atime_dropped). */
void fs_dirty_time_write_all(struct fs *fs);
void fs_dirty_time_write_expired(struct fs *fs);
void fs_dirty_time_write_inode(struct fs *fs, const struct inode_location *where);
void fs_dirty_time_other_change(struct fs *fs, const struct inode_location *where, struct btree_item *inode);
void fs_dirty_time_free(struct fs *fs);
/* fs_settime's explicit atime, into `inode` (made writable for `where`). */
void fs_atime_set(struct fs *fs, const struct inode_location *where, struct btree_item *inode, int64_t atime);
/* fs_check(): lazytime's LZ1-LZ3, then the policy's own check (if any). */
bool fs_atime_check(const struct fs *fs, GError **error);
uint64_t fs_atime_tree_id(uint64_t subvolume_id);

/* fs.c */
int fs_commit(struct fs *fs);
int fs_reserve(struct fs *fs, unsigned items);
/* fs_reserve() for unlink and rmdir: may use the global reserve. */
int fs_reserve_delete(struct fs *fs, unsigned items);
void fs_release(struct fs *fs);
/* fs_release() whose throttle stops when fs_config.cancelled asks: 0, or
 * -EINTR with the rest of its work left to the next throttle or commit. */
int fs_release_stoppable(struct fs *fs);
struct subvolume *fs_subvolume(const struct fs *fs, uint64_t id);
/* fs_snapshot.c: is PARENT's directory entry to SV the link btrfs keeps
 * (a ROOT_BACKREF), not a snapshot's placeholder of it? */
bool fs_is_subvolume_link(const struct fs *fs, const struct subvolume *parent, const struct subvolume *sv);
/* SV's link in PARENT now has a name of NAME_LEN bytes: its ROOT_REF and
 * ROOT_BACKREF items, which hold the name, are resized. */
void fs_subvolume_link_renamed(struct fs *fs, const struct subvolume *parent, const struct subvolume *sv,
				uint16_t name_len);
/* Does SV hold the link of another live subvolume? */
bool fs_holds_a_subvolume(const struct fs *fs, const struct subvolume *sv);
struct subvolume *fs_add_subvolume(struct fs *fs, uint64_t id, const char *path);
/* Adds every block of the live subvolumes' trees and their side tables to
 * `seen` (a set), each once. */
void fs_collect_subvolume_blocks(const struct fs *fs, GHashTable *seen);

static inline bool fs_mode_is_dir(uint32_t mode)
{
	return S_ISDIR(mode);
}

/* memcmp(a, b, n) == 0 for the short strings a walk compares (a path's
 * prefix against the memo's, a name against a table's entry): words in
 * place, the last one overlapping, where the library's call cost about 18
 * instructions a compare (docs/performance.md round 14c). */
static inline uint64_t fs_load64(const char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}
static inline uint32_t fs_load32(const char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}
static inline bool fs_bytes_equal(const char *a, const char *b, size_t n)
{
	if (n >= 8) {
		const char *a_last = a + n - 8, *b_last = b + n - 8;
		for (; a < a_last; a += 8, b += 8)
			if (fs_load64(a) != fs_load64(b))
				return false;
		return fs_load64(a_last) == fs_load64(b_last);
	}
	if (n >= 4)
		return fs_load32(a) == fs_load32(b) && fs_load32(a + n - 4) == fs_load32(b + n - 4);
	for (; n; n--)
		if (*a++ != *b++)
			return false;
	return true;
}

/* fs_dir_cache.c: the table that answers the step out of (sv, dir) when it
 * is not the last one asked (DC5); NULL: none, look the name up in the tree. */
const struct dir_table *fs_dir_cache_answers(struct fs *fs, struct subvolume *sv, uint64_t dir);
/* The entry named `name` among the offsets hash .. hash + FS_DIR_HASH_PROBE
 * of t, past the one at the hash's own slot; NULL: none. */
const struct dir_cache_entry *fs_dir_cache_probe_on(const struct dir_table *t, uint32_t hash, const char *name,
						    uint16_t name_len);

static inline bool fs_dir_cache_entry_is(const struct dir_cache_entry *e, const char *name, uint16_t name_len)
{
	return e->name_len == name_len && fs_bytes_equal(e->name, name, name_len);
}

/* True when a table answers the step out of (sv, dir) to the name whose
 * hash is `hash`; *found is its entry, NULL when there is none (what
 * dir_lookup_hashed() would find). False: look it up in the tree. Inline:
 * the last table asked, and the entry at the hash's own slot, are most
 * steps (a call was a tenth of a step, round 15a). */
static inline bool fs_dir_cache_find(struct fs *fs, struct subvolume *sv, uint64_t dir, uint32_t hash,
				     const char *name, uint16_t name_len, const struct dir_cache_entry **found)
{
	const struct dir_cache *c = &fs->dir_cache;
	const struct dir_table *t = c->last.table;
	if (c->off || !t || c->last.subvolume != sv || c->last.dir != dir) {
		t = fs_dir_cache_answers(fs, sv, dir);
		if (!t)
			return false;
	}
	uint32_t at = t->index[hash & t->mask];
	const struct dir_cache_entry *e = fs_dir_table_entry(t, at);
	*found = at && e->offset == hash && fs_dir_cache_entry_is(e, name, name_len)
			 ? e
			 : fs_dir_cache_probe_on(t, hash, name, name_len);
	return true;
}

#endif
