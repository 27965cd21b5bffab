/*
 * model/fs.h - the filesystem: subvolumes, inodes, directories, files,
 * snapshots, transactions and the space report.
 *
 * This is the model's front door. Paths are absolute within the mounted
 * filesystem ("/" is the top-level subvolume, id 5); a snapshot is a
 * directory entry that leads into another subvolume. Every call returns 0 or
 * a negative errno (-ENOENT, -EEXIST, -ENOTDIR, -EISDIR, -ENOTEMPTY,
 * -ENOSPC, -EROFS, -EINVAL, -ENAMETOOLONG, -EXDEV, -EMLINK, -EFBIG, and
 * -EOVERFLOW from an op that adds a name whose DIR_ITEM hash window is full:
 * FS_DIR_HASH_PROBE below) and changes nothing when it fails, except -ENOSPC
 * met by an atime update inside a read, which fs_read reports through its
 * result.
 *
 * Which items each operation writes, as btrfs does (see docs/model.md):
 *   create: INODE_ITEM, INODE_REF; DIR_ITEM + DIR_INDEX in the parent; the
 *           data as one inline EXTENT_DATA (small files) or regular extents,
 *           an EXTENT_ITEM each in the extent tree and checksums in the csum
 *           tree; the parent's inode item (size, times).
 *   read:   the inode item's atime, when the mount's rule says so.
 *   snapshot: a copy of the source root, one reference more on each of its
 *           children; ROOT_ITEM, ROOT_REF, ROOT_BACKREF in the root tree; the
 *           directory entry in the destination's parent; a commit on each side.
 * Time only moves with fs_set_clock(); a commit happens every commit_interval
 * of simulated time and on fs_sync().
 */
#ifndef COWSIM_MODEL_FS_H
#define COWSIM_MODEL_FS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <glib.h>

#include "atime.h"
#include "blockstore.h"

/*
 * Atime policies: where an access time lives and when a read writes it,
 * one file each (model/policy_*.c) in one registry
 * (model/atime_policy_registry.c; docs/policies.md compares them).
 *   inline          btrfs today: in the inode item; an update that meets
 *                   ENOSPC fails the read (the 2012 behaviour the seed mails
 *                   describe).
 *   side-table      in a separate per-subvolume tree of 12-byte items keyed
 *                   by inode number; a read copies only that tree's blocks.
 *   threshold       inline, but no updates while free space is under
 *                   threshold_fraction of the device, and an update that
 *                   meets ENOSPC is dropped: a read never fails for atime.
 *   snapshot-aware  inline, but only when the inode's leaf is exclusive or
 *                   already copied in the running transaction; skipped
 *                   updates are counted with the age of the atime they left.
 *   hybrid          inline when the inode's leaf is exclusive or already
 *                   copied, in the side table when the update would unshare
 *                   a leaf.
 * side-table and hybrid need a design that can snapshot a tree beside the
 * subvolume's (btrfs, not keyed): fs_new() refuses the others.
 */
struct atime_policy_ops;
struct fs_config;
/* Parses a --policy word, NAME or NAME:ARG ("inline", "threshold:5%"), into
 * config->atime_policy and the policy's parameters; false with *error
 * (MODEL_ERROR_INVALID) naming what is wrong. */
bool fs_policy_parse(const char *word, struct fs_config *config, GError **error);
/* The word fs_policy_parse() takes back for config's policy. */
void fs_policy_describe(const struct fs_config *config, char *out, size_t size);
/* The i-th policy of the registry, from 0; NULL past the last. Its name, and
 * how a --policy word writes it ("threshold:PCT%"); NULL is the default. */
const struct atime_policy_ops *fs_policy_at(unsigned i);
const char *fs_policy_name(const struct atime_policy_ops *policy);
const char *fs_policy_syntax(const struct atime_policy_ops *policy);

/* Ages of the atimes that snapshot-aware skips leave behind: < 1 h, < 1 d,
 * < 7 d, < 30 d, older. */
enum { FS_STALENESS_BUCKETS = 5 };

/* How snapshots share metadata: a design (model/design.h), by name from
 * the registry (model/design_registry.c): "btrfs", a tree per subvolume,
 * snapshots clone the root (Rodeh), the default; "keyed", one tree, keys
 * versioned by snapshot id (bcachefs). */
struct fs_design_ops;
/* The design called `name`, or NULL when there is none. */
const struct fs_design_ops *fs_design_find(const char *name);
/* The i-th design of the registry, from 0; NULL past the last. */
const struct fs_design_ops *fs_design_at(unsigned i);
/* Its name; NULL is the default design. */
const char *fs_design_name(const struct fs_design_ops *design);
/* One line: how it shares metadata ("a tree per subvolume, ..."). */
const char *fs_design_summary(const struct fs_design_ops *design);

/* What a lazytime mount does (model/atime.c says why btrfs ignores it). */
enum fs_lazytime {
	FS_LAZYTIME_BTRFS = 0,        /* as btrfs: written into the transaction at once */
	FS_LAZYTIME_VFS,              /* as the VFS defines it: kept in memory (I_DIRTY_TIME) */
};

/* What a read does when its atime update finds no metadata space, after
 * the flusher's commits (model/atime_policy.c). */
enum fs_enospc_read {
	FS_ENOSPC_READ_LOSE = 0,      /* kernel 6.18: the read succeeds, the update is lost (atime_lost) */
	FS_ENOSPC_READ_FAIL,          /* what-if (the 2012 fear): the read fails (failed_reads) */
};

struct fs_config {
	const struct fs_design_ops *design; /* fs_design_find(); NULL: the default (btrfs) */
	uint32_t nodesize;            /* bytes, default 16384 */
	uint64_t device_size;         /* bytes */
	bool metadata_single;         /* profile single instead of DUP */
	uint32_t max_inline;          /* bytes, default 2048 */
	int64_t commit_interval_ns;   /* default 30 s */
	int64_t start_time_ns;        /* the clock at mkfs */
	struct atime_options atime;
	const struct atime_policy_ops *atime_policy; /* fs_policy_parse(); NULL: the default (inline) */
	double threshold_fraction;    /* threshold policy: 0.05 for 5% */
	enum fs_lazytime lazytime;    /* only matters on a lazytime mount */
	enum fs_enospc_read enospc_read; /* an atime update that finds no space */
	/* Data reaches the trees at writeback (the next commit), as btrfs's
	 * delalloc does, rather than at write(): true by default. */
	bool delayed_writeback;
	/* A design whose snapshots are read-only (zfs) answers a writable
	 * snapshot with a clone of a read-only one (zfs snapshot + zfs clone)
	 * instead of refusing it: --zfs-clones. */
	bool snapshot_clones;
	/* Asked between the pieces of a long op (each data extent of a big
	 * write or create, at most 128 MiB): true stops the op, which returns
	 * -EINTR and leaves the model consistent (fs_check passes): a write
	 * stopped at writeback keeps the rest queued, a direct write leaves the
	 * rest a hole. NULL: never asked. The model knows nothing of signals;
	 * the caller's hook may read a flag a handler sets. */
	bool (*cancelled)(void *opaque);
	void *cancelled_opaque;
};

void fs_config_init(struct fs_config *config);
/* The design and the policy work together (fs_new() refuses them
 * otherwise): false with *error (MODEL_ERROR_INVALID) saying why. */
bool fs_config_validate(const struct fs_config *config, GError **error);

/* What a create or mkdir sets; a time of INT64_MIN means "now". */
struct fs_attributes {
	uint32_t mode;
	uint32_t uid, gid;
	int64_t atime, mtime, ctime;
};
void fs_attributes_init(struct fs_attributes *attributes);

struct fs_counters {
	uint64_t operations;
	uint64_t atime_updates;       /* inode items whose atime was written */
	uint64_t atime_skipped;       /* accesses the mount's rule did not record */
	uint64_t atime_readonly;      /* accesses in read-only snapshots (not recorded) */
	uint64_t atime_enospc;        /* atime updates that met ENOSPC */
	uint64_t failed_reads;        /* reads failed because their atime update met ENOSPC */
	uint64_t atime_dropped;       /* updates met ENOSPC and were dropped (the read went on) */
	uint64_t atime_lost;          /* updates met ENOSPC after the flusher's commits: the read went on,
				       * the atime changed in memory only and never reached the disk */
	uint64_t reserve_tickets;     /* reservations that waited for the flusher (flush_for_ticket) */
	uint64_t forced_chunks;       /* metadata chunks the flusher forced (ALLOC_CHUNK_FORCE) */
	uint64_t ticket_commits;      /* commits the flusher made for a waiting reservation (COMMIT_TRANS) */
	uint64_t enospc_commits;      /* commits forced by reservations that found no space */
	uint64_t atime_threshold;     /* updates held back by the threshold policy */
	uint64_t atime_stale;         /* updates held back by the snapshot-aware policy */
	uint64_t staleness[FS_STALENESS_BUCKETS]; /* their ages, see FS_STALENESS_BUCKETS */
	uint64_t unshare_estimate;    /* bytes the last snapshot's warning predicted */
	uint64_t atime_lazy;          /* lazytime vfs: accesses whose new atime was kept in memory */
	uint64_t enospc_events;       /* operations refused with ENOSPC */
	uint64_t commits;
	uint64_t blocks_cowed;
	uint64_t blocks_allocated;
	uint64_t blocks_freed;
	uint64_t blocks_written;      /* tree blocks written at commits */
	uint64_t data_bytes_written;
	uint64_t bytes_written;       /* to the device: tree blocks (every copy) and data */
};

struct fs_report {
	struct space_report space;
	struct fs_counters counters;
	int64_t clock_ns;
	uint64_t transid;
};

struct subvolume_usage {
	uint64_t id;
	char *path;                   /* where it was created, e.g. "/snap1" */
	bool readonly;
	uint64_t exclusive_bytes;     /* metadata + data reachable only from it */
	uint64_t shared_bytes;        /* reachable from it and another subvolume */
	uint64_t referenced_bytes;
};

struct fs;

struct fs *fs_new(const struct fs_config *config, GError **error);
void fs_free(struct fs *fs);
typedef struct fs Filesystem;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Filesystem, fs_free)

int fs_mkdir(struct fs *fs, const char *path, const struct fs_attributes *attributes);
int fs_create(struct fs *fs, const char *path, uint64_t size, const struct fs_attributes *attributes);
int fs_symlink(struct fs *fs, const char *target, const char *path, const struct fs_attributes *attributes);
int fs_link(struct fs *fs, const char *existing, const char *path);
int fs_write(struct fs *fs, const char *path, uint64_t offset, uint64_t length);
int fs_truncate(struct fs *fs, const char *path, uint64_t size);
int fs_unlink(struct fs *fs, const char *path);
int fs_rmdir(struct fs *fs, const char *path);
int fs_rename(struct fs *fs, const char *from, const char *to);
/* settime: utimensat() with explicit times; INT64_MIN leaves one as it is. */
int fs_settime(struct fs *fs, const char *path, int64_t atime, int64_t mtime);

/* A read or a directory listing: the access updates atime per the mount's
 * rule and the store. *atime_updated tells whether it did (may be NULL).
 * -ENOSPC means the read itself failed because its atime update could not
 * get space (btrfs of 2012); the counters say which. */
int fs_read(struct fs *fs, const char *path, bool *atime_updated);
/* A path its caller has measured (a replay's reader, the bench): len is
 * strlen(bytes) (bytes[len] is its NUL) and bytes[name_at - 1] its last '/',
 * which the walk then neither measures nor searches the last name for.
 * When hashed, name_hash is fs_name_hash() of the last name, bytes[name_at,
 * len) (a replay's reader hashes it on its own thread), which the walk then
 * does not hash again. bytes[0, shared) are those of the last measured path
 * given to fs_read_path() on this fs (0: not known), which the walk then
 * need not compare again (a replay's reader found them). */
struct fs_path {
	const char *bytes;
	size_t len;
	size_t name_at;
	uint32_t name_hash;
	bool hashed;
	size_t shared;
};
/* The hash a directory's entries are found by (btrfs_name_hash(): crc32c
 * from ~1) of the LENGTH bytes at NAME. */
uint32_t fs_name_hash(const char *name, size_t length);
/* fs_read() of a measured path. */
int fs_read_path(struct fs *fs, const struct fs_path *path, bool *atime_updated);
int fs_readdir(struct fs *fs, const char *path, bool *atime_updated);
int fs_stat(struct fs *fs, const char *path);
int fs_fsync(struct fs *fs, const char *path);

int fs_snapshot(struct fs *fs, const char *source, const char *dest, bool readonly);
/* The snapshot-time warning: bytes of tree blocks that one read of every
 * file and directory under `source` would copy, under the policy and mount
 * options in force, if it happened now after a snapshot of it (leaves whose
 * atime items would change, and the nodes above them). 0 or -errno. */
int fs_unshare_estimate(struct fs *fs, const char *source, uint64_t *bytes);
int fs_delete_snapshot(struct fs *fs, const char *path);
/* What deleting the subvolumes at `paths` (n of them) together would free,
 * as `zfs destroy -nv` reports it: the bytes of tree blocks (their trees and
 * side tables) and of data extents that they reach and no other live
 * subvolume does, each counted once, so not the sum of their exclusive
 * bytes. Blocks the deletion itself copies (the parent's directory entry,
 * the root and extent trees' items) are its cost, not counted. 0, or what
 * fs_delete_snapshot() would refuse with (-ENOENT, -EINVAL, -EROFS; -ENOTEMPTY
 * when one holds a subvolume outside the set; -EBUSY under zfs for a
 * filesystem that has snapshots), or -EOPNOTSUPP when the design cannot
 * tell (keyed: one tree for all). Changes nothing. */
struct fs_reclaim {
	uint64_t metadata_bytes;
	uint64_t data_bytes;
};
int fs_delete_estimate(struct fs *fs, const char *const *paths, unsigned n, struct fs_reclaim *out);

/* Attribution (issue 17; docs/model.md): the kind of operation the calls
 * that follow are, so that every tree block they allocate is charged to it
 * (space_report.cause_bytes). The caller knows what an op is: the model
 * charges writeback, lazytime atimes and extent-tree records it defers to a
 * commit to the cause in force when they were queued, and the root items,
 * block-group items, free-space and dev trees a commit rewrites to the cause
 * that allocated and freed the most blocks in the transaction. mkfs's blocks
 * are SPACE_CAUSE_MKFS; after fs_new() the cause is SPACE_CAUSE_WRITE. */
void fs_set_cause(struct fs *fs, enum space_cause cause);

/* Moves the clock (never back); commits when the interval has passed. */
int fs_set_clock(struct fs *fs, int64_t now_ns);
int64_t fs_clock(const struct fs *fs);
int fs_sync(struct fs *fs);
void fs_set_atime_options(struct fs *fs, const struct atime_options *options);
const struct atime_options *fs_atime_options(const struct fs *fs);

void fs_report(const struct fs *fs, struct fs_report *report);
/* fs_report()'s counters alone. */
void fs_counters(const struct fs *fs, struct fs_counters *counters);
/* The two counters a driver watches after every op (replay's first ENOSPC and
 * first lost atime update), without copying the other thirty. */
uint64_t fs_enospc_events(const struct fs *fs);
uint64_t fs_atime_enospc(const struct fs *fs);
/* The counters as the model keeps them, live: valid while FS lives, for a
 * driver that looks after every op without a call (replay's first ENOSPC and
 * first lost atime update). The four fs_counters() derives from elsewhere
 * (blocks_cowed, blocks_allocated, blocks_freed, bytes_written) are not kept
 * here: read them with fs_counters(). */
const struct fs_counters *fs_counters_live(const struct fs *fs);
/* Per subvolume exclusive and shared bytes, as qgroups count them. The caller
 * frees the array with fs_subvolume_usage_free(). */
GArray *fs_subvolume_usage(const struct fs *fs);
void fs_subvolume_usage_free(GArray *usage);

/* All invariants: every tree (btree_check), references (refs_check), space
 * (blockstore_check), then the trees derived from them, as btrfs check
 * audits them (model/derived_check.h: extent, root and uuid, csum and
 * free-space trees, keys and the keyed design's snapshots). Returns false
 * with the first violation in *error, "corrupt <type>: <id>, <reason>". */
bool fs_check(struct fs *fs, GError **error);
/* Print every tree, for failing tests. */
void fs_dump(const struct fs *fs, FILE *out);

/* ---- names and limits for the programs (model/fs_names.c) ----
 * What sim/ needs of the model's btrfs constants without including them. */
#define FS_TOP_SUBVOLUME_ID 5u        /* "/" (BTRFS_FS_TREE_OBJECTID) */
/* How far past its name hash a colliding name's DIR_ITEM may sit: lookups
 * look at offsets hash .. hash + FS_DIR_HASH_PROBE, and a new name with all
 * of them taken is refused with -EOVERFLOW (fs_namespace.c). */
#define FS_DIR_HASH_PROBE 8 /* no suffix: sim/replay.c writes it into a message */
/* A key type's name as btrfs print-tree writes it ("INODE_ITEM"), or NULL. */
const char *fs_key_type_name(uint8_t type);
/* What a tree id is: "fs" (a subvolume), "atime" (a side table), "root",
 * "extent", "dev", "csum", "uuid", "free-space", "data-reloc"; NULL if none. */
const char *fs_tree_name(uint64_t tree_id);
/* A node size mkfs.btrfs -n accepts: a power of two from 4 KiB to 64 KiB. */
bool fs_nodesize_valid(uint64_t nodesize);
/* The largest max_inline: one sector less one byte. */
uint32_t fs_max_inline_limit(void);

/* ---- walking every tree block (model/fs_walk.c; issue 8, `cowsim draw`) ----
 * fs_walk() hands each tree's blocks to a visitor, root first, depth first,
 * children in key order, with the facts a picture of the trees needs. The
 * model says nothing of how they are drawn: sim/draw_collect.c hands it to results/drawing.h.
 * Trees come in this order: each live subvolume's tree by creation (the
 * keyed design's one shared tree once) followed by its atime side-table if
 * it has one, then root, extent, dev, csum, uuid, free-space, data-reloc.
 * A block reachable from several trees (or parents) is visited from each,
 * unless the visitor answers FS_WALK_SKIP_CHILDREN for it. */
struct fs_walk_entry {
	uint64_t objectid;            /* the key (btrfs_disk_key order: objectid, type, offset) */
	uint64_t offset;
	uint8_t type;                 /* BTRFS_*_KEY */
	uint32_t snapshot;            /* keyed design: the key's snapshot id; 0 in btrfs */
	uint32_t size;                /* leaf: item data bytes (without the 25-byte header); node: 0 */
	uint64_t child;               /* node: the child block's address; leaf: 0 */
};

struct fs_walk_block {
	uint64_t tree_id;             /* the tree being walked: 5, 256+, 2 (extent) ... */
	enum tree_category category;  /* which report line the tree counts under */
	const char *tree_path;        /* subvolume trees and side tables: where it was made; else NULL */
	bool tree_readonly;           /* a read-only snapshot's tree */
	uint64_t parent;              /* address of the node that points here, 0 at the root */
	uint32_t depth;               /* 0 at the root */
	uint64_t bytenr;              /* logical address */
	uint64_t owner;               /* tree id that allocated it */
	uint64_t generation;          /* transaction that wrote it */
	uint8_t level;                /* 0 = leaf */
	uint32_t refs;                /* references the extent tree counts for it (tree + shared backrefs) */
	bool full_backref;            /* its children are referenced by its address (FULL_BACKREF) */
	uint32_t nritems;
	const struct fs_walk_entry *entries; /* nritems entries, valid during the call */
};

enum fs_walk_answer {
	FS_WALK_CONTINUE = 0,
	FS_WALK_SKIP_CHILDREN,        /* do not descend below this block */
	FS_WALK_STOP,                 /* end the walk now */
};

typedef enum fs_walk_answer (*fs_walk_fn)(const struct fs_walk_block *block, void *opaque);

/* Visits every block of every tree; the visitor must not change the
 * filesystem. Returns false when the visitor stopped the walk. Cannot fail. */
bool fs_walk(const struct fs *fs, fs_walk_fn visit, void *opaque);
/* ---- end of fs_walk ---- */

#endif
