/*
 * model/zfs_pool.h - a ZFS-like storage pool: datasets, read-only snapshots
 * kept by birth time, clones, transaction groups. The contract of the
 * zfs_*.c files; model/zfs_constants.h cites every size and rule.
 *
 * What is modelled, from the uberblock down (ZFS On-Disk Specification,
 * chapters 1-6):
 *
 *   uberblock -> MOS objset block -> MOS meta-dnode -> dnode blocks
 *                                       |  (dsl_dataset objects, deadlist bpobjs)
 *                                       v
 *   dataset:   objset block (4 KiB) -> meta-dnode (6 levels of 128 KiB
 *              indirect blocks) -> dnode blocks (16 KiB, 32 dnodes of 512 B)
 *              -> each object's indirect blocks (128 KiB) -> its data blocks
 *              (files: up to the 128 KiB recordsize; directories: a micro-ZAP
 *              block or a fat ZAP's 16 KiB header and leaves).
 *
 * Every block pointer carries the txg that wrote its block (its birth).
 * Changes wait in memory for the next txg; a txg sync writes every dirty
 * block anew, then every indirect block above it, the dnode block of each
 * changed object, the meta-dnode's indirect path, the objset block, and
 * in the MOS the dataset's dnode and deadlist: each new block born in that
 * txg. Each block it replaces is "killed": freed at once if born after the
 * dataset's newest snapshot, else put on the dataset's deadlist, where it
 * stays until the snapshots that hold it are destroyed.
 *
 * Objects are numbered by the caller (ZPL inode numbers). Calls that change
 * a dataset return 0 or a negative errno: -ENOENT (no such dataset or
 * object), -EEXIST, -EROFS (a snapshot), -EBUSY (a snapshot with clones),
 * -EINVAL. They change nothing when they fail.
 *
 * Sizes reported: *_used count one copy of each block rounded up to the
 * allocation unit (1 << ashift), as btrfs's *_used count one copy of a DUP
 * profile; metadata_raw counts every ditto copy. Nothing is compressed.
 */
#ifndef COWSIM_MODEL_ZFS_POOL_H
#define COWSIM_MODEL_ZFS_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <glib.h>

struct zfs_pool_config {
	uint32_t ashift;              /* allocation unit 1 << ashift bytes; default 12 */
	uint32_t recordsize;          /* largest file block, bytes; default 128 KiB */
	int64_t txg_timeout_ns;       /* default 5 s */
	int64_t start_time_ns;        /* the clock at zpool create */
};

void zfs_pool_config_init(struct zfs_pool_config *config);

enum zfs_object_type {
	ZFS_OBJECT_FILE = 1,          /* data blocks (ZPL plain file) */
	ZFS_OBJECT_DIRECTORY,         /* a ZAP of names (ZPL directory) */
	ZFS_OBJECT_SYMLINK,           /* target in the bonus buffer: no blocks */
	ZFS_OBJECT_ZAP,               /* other ZAP objects (master node, SA tables) */
};

struct zfs_pool;

struct zfs_pool *zfs_pool_new(const struct zfs_pool_config *config);
void zfs_pool_free(struct zfs_pool *pool);
typedef struct zfs_pool ZfsPool;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ZfsPool, zfs_pool_free)

/* ---- datasets ----
 * Ids are never reused; 0 is no dataset. A new filesystem gets the ZPL's
 * own objects (master node, SA registry and layouts, unlinked set: ZAPs
 * numbered 1-4, zfs_create_fs). A snapshot syncs the open txg and is taken
 * at the end of the next (a sync task: dsl_dataset_snapshot_sync runs
 * after the datasets' own sync), so it holds every change made before it. */
int zfs_filesystem_create(struct zfs_pool *pool, const char *name, uint64_t *id);
int zfs_snapshot_create(struct zfs_pool *pool, uint64_t filesystem, const char *name, uint64_t *id);
/* A writable filesystem that starts as the snapshot (zfs clone). */
int zfs_clone_create(struct zfs_pool *pool, uint64_t snapshot, const char *name, uint64_t *id);
/* A snapshot: the deadlist rule reclaims its blocks (-EBUSY if a clone
 * depends on it). A filesystem: only one without snapshots (zfs destroy
 * without -r); its blocks born after its origin are freed, in the next txg. */
int zfs_dataset_destroy(struct zfs_pool *pool, uint64_t id);
bool zfs_dataset_is_snapshot(const struct zfs_pool *pool, uint64_t id);

/* ---- objects of a filesystem (changes wait for the next txg) ---- */
int zfs_object_claim(struct zfs_pool *pool, uint64_t filesystem, uint64_t object, enum zfs_object_type type);
int zfs_object_free(struct zfs_pool *pool, uint64_t filesystem, uint64_t object);
/* The dnode changed (an attribute in its bonus buffer: atime, mtime, size,
 * mode, links): its dnode block is written at the next txg. */
int zfs_object_touch(struct zfs_pool *pool, uint64_t filesystem, uint64_t object);
/* Would a change to the object's dnode now cost nothing a snapshot keeps?
 * True when its dnode block is written in the open txg already (another of
 * its 32 dnodes changed) or was born after the filesystem's newest snapshot
 * (the old one is freed, not kept); false when a snapshot would keep the
 * old block. The indirect path above, written by every txg, is not asked. */
bool zfs_object_change_is_private(const struct zfs_pool *pool, uint64_t filesystem, uint64_t object);
/* File data: the blocks covering [offset, offset + length) are written. */
int zfs_object_write(struct zfs_pool *pool, uint64_t filesystem, uint64_t object, uint64_t offset,
		     uint64_t length);
int zfs_object_truncate(struct zfs_pool *pool, uint64_t filesystem, uint64_t object, uint64_t size);
/* A name in a directory's ZAP: `hash` places it (any uniform 32-bit hash of
 * the name), `name_len` sizes it (bytes, without the NUL). */
int zfs_zap_add(struct zfs_pool *pool, uint64_t filesystem, uint64_t directory, uint32_t hash, uint32_t name_len);
int zfs_zap_remove(struct zfs_pool *pool, uint64_t filesystem, uint64_t directory, uint32_t hash,
		   uint32_t name_len);

/* ---- why: attribution ----
 * The caller's label for the changes that follow (the model's enum
 * space_cause: write, atime, snapshot, ...), below ZFS_POOL_CAUSES; 0 in a
 * new pool. Every metadata block a txg writes is charged to one label for
 * as long as it lives (zfs_pool_usage's metadata_by_cause):
 *  - an object's own blocks (a ZAP's, an indirect block of a file) to the
 *    label of the object's first change in the txg;
 *  - everything else the txg writes (dnode blocks, the meta-dnode's tree,
 *    objset blocks, the MOS) to the label that changed the most objects in
 *    it, the lowest on a tie; a txg that changed no object (a snapshot's,
 *    a destroy's) to the label in force. */
#define ZFS_POOL_CAUSES 8
void zfs_pool_set_cause(struct zfs_pool *pool, unsigned cause);

/* ---- time ---- */
/* Moves the clock (never back); syncs a txg when txg_timeout has passed
 * since the last and something is dirty. */
void zfs_pool_set_clock(struct zfs_pool *pool, int64_t now_ns);
/* Syncs the open txg now if anything is dirty (txg_wait_synced). */
void zfs_pool_sync(struct zfs_pool *pool);
uint64_t zfs_pool_synced_txg(const struct zfs_pool *pool);

/* ---- reports ---- */
struct zfs_pool_usage {
	uint64_t metadata_used;       /* bytes, one copy: dataset metadata + MOS */
	uint64_t metadata_raw;        /* bytes, every ditto copy */
	uint64_t mos_used;            /* the MOS's part of metadata_used */
	uint64_t data_used;           /* bytes of file data blocks */
	uint64_t deadlist_bytes;      /* blocks waiting on deadlists (one copy) */
	uint64_t blocks;              /* allocated blocks */
	uint64_t txgs;                /* txgs synced */
	uint64_t blocks_written;      /* blocks written by all txgs */
	uint64_t bytes_written;       /* bytes written by all txgs, every copy */
	uint64_t metadata_cowed;      /* metadata blocks written in place of a live one (copy-on-write) */
	uint64_t metadata_by_cause[ZFS_POOL_CAUSES]; /* metadata_used by label; they sum to it */
};
void zfs_pool_usage(const struct zfs_pool *pool, struct zfs_pool_usage *usage);

struct zfs_dataset_usage {
	uint64_t id;
	const char *name;             /* owned by the pool */
	bool snapshot;
	uint64_t origin;              /* a clone's origin snapshot; else 0 */
	uint64_t referenced;          /* bytes of every block it reaches (one copy) */
	/* What `zfs destroy -nv` would reclaim: a snapshot's blocks born after
	 * its previous snapshot that died before its next (on the next's
	 * deadlist); a filesystem's blocks born after its newest snapshot. */
	uint64_t exclusive;
	uint64_t deadlist;            /* bytes on its deadlist */
};
/* Every live dataset by id; free with g_array_unref(). */
GArray *zfs_pool_datasets(const struct zfs_pool *pool);

/* What destroying the datasets `ids` together would free (`zfs destroy -nv
 * fs@a,fs@b`): bytes (one copy) of the blocks they reach and no other live
 * dataset or the MOS reaches, metadata and file data apart. The MOS blocks
 * the destroy itself rewrites are not counted. 0, or -ENOENT (no such
 * dataset); changes nothing. */
int zfs_pool_destroy_estimate(const struct zfs_pool *pool, const uint64_t *ids, unsigned n, uint64_t *metadata,
			      uint64_t *data);

/* The invariants of model/zfs_pool.c (Z1-Z5); false with the first
 * violation in *error, as "corrupt <what>: <id>, <reason>". */
bool zfs_pool_check(const struct zfs_pool *pool, GError **error);
void zfs_pool_dump(const struct zfs_pool *pool, FILE *out);

#define ZFS_POOL_ERROR zfs_pool_error_quark()
GQuark zfs_pool_error_quark(void);

#endif
