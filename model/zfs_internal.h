/*
 * model/zfs_internal.h - what the zfs_*.c files share; not part of the
 * contract (model/zfs_pool.h is).
 *
 * In memory, a snapshot and its filesystem share the structs of the objects
 * neither has changed since (zfs_object.shares counts them); a filesystem
 * copies an object's struct before it changes one that is shared. This is
 * the model's bookkeeping, not ZFS's: on disk both reach the same blocks
 * through the block pointers, which is what the blocks' births describe.
 */
#ifndef COWSIM_MODEL_ZFS_INTERNAL_H
#define COWSIM_MODEL_ZFS_INTERNAL_H

#include "zfs_constants.h"
#include "zfs_pool.h"

enum zfs_block_kind {
	ZFS_BLOCK_DATA = 0,           /* a file's level-0 block: copies=1 */
	ZFS_BLOCK_METADATA,           /* every other block of a dataset: ditto */
	ZFS_BLOCK_MOS,                /* a block of the MOS: three copies */
};

/* One allocated block: what a block pointer points at. */
struct zfs_block {
	uint64_t id;                  /* allocation order; the model's DVA */
	uint64_t birth;               /* the txg that wrote it (blk_birth) */
	uint64_t asize;               /* bytes allocated for one copy */
	uint32_t lsize;               /* logical bytes */
	uint8_t level;                /* 0: data or dnode block; > 0: indirect */
	uint8_t kind;                 /* enum zfs_block_kind */
	uint8_t copies;
	uint8_t cause;                /* the label it is charged to (zfs_pool_set_cause) */
};

/* A fat ZAP leaf: the names whose hash starts with `prefix`. */
struct zfs_zap_leaf {
	uint32_t prefix;              /* the top prefix_len bits of the hash */
	uint8_t prefix_len;
	uint32_t chunks;              /* 24-byte chunks in use */
	uint64_t blkid;               /* its block in the ZAP object */
	GArray *entries;              /* struct zfs_zap_entry */
};

struct zfs_zap_entry {
	uint32_t hash;
	uint16_t chunks;
};

struct zfs_zap {
	bool fat;
	uint64_t entries;
	GArray *micro;                /* micro: struct zfs_zap_entry (kept for the upgrade) */
	GPtrArray *leaves;            /* fat: struct zfs_zap_leaf *, owned */
	uint64_t next_blkid;          /* fat: the next leaf's block */
};

/* MOS objects, besides enum zfs_object_type's. */
enum {
	ZFS_OBJECT_BPOBJ = 100,       /* a deadlist's block pointers, 128 KiB blocks */
	ZFS_OBJECT_DSL_DATASET,       /* a dataset's dsl_dataset_phys: a dnode, no blocks */
};

struct zfs_object {
	uint64_t number;
	int type;                     /* enum zfs_object_type or ZFS_OBJECT_BPOBJ ... */
	uint32_t shares;              /* objsets holding this struct (in memory) */
	uint32_t datablksz;           /* bytes of each level-0 block */
	uint32_t indblksz;            /* bytes of each indirect block */
	uint8_t nblkptr;              /* block pointers in the dnode */
	uint8_t nlevels;              /* 1: the dnode points at level-0 blocks */
	uint8_t kind;                 /* enum zfs_block_kind of its level-0 blocks */
	uint64_t size;                /* file: bytes */
	uint64_t nblocks;             /* level-0 blocks in use (dn_maxblkid + 1) */
	GPtrArray *levels[ZFS_MAX_LEVELS]; /* struct zfs_block * by blkid; NULL: a hole */
	struct zfs_zap *zap;          /* directories and ZAP objects */
};

/* What an objset must do at the next txg for one object. */
struct zfs_dirty_object {
	GHashTable *blkids;           /* level-0 blkids to write (direct keys) */
	uint64_t free_from;           /* kill level-0 blocks from here; UINT64_MAX: none */
	bool dnode;                   /* the dnode itself changed */
	uint8_t cause;                /* the label of its first change in the txg */
};

struct zfs_objset {
	bool mos;                     /* the pool's meta objset: never snapshotted */
	struct zfs_object *meta_dnode;/* object 0: its level-0 blocks are dnode blocks */
	GPtrArray *objects;           /* struct zfs_object * by number; NULL: free */
	struct zfs_block *root;       /* the objset block; NULL before the first sync */
	GHashTable *dirty;            /* object number -> struct zfs_dirty_object * */
	GPtrArray *freed;             /* struct zfs_object * freed in the open txg */
	uint8_t cause;                /* the label new dirty records take (the pool's, set per call) */
};

struct zfs_dataset {
	uint64_t id;
	char *name;
	bool snapshot;
	bool destroyed;
	struct zfs_objset *os;        /* filesystem: its head; snapshot: frozen */
	uint64_t creation_txg;        /* snapshot: the txg it was taken in */
	struct zfs_dataset *filesystem; /* snapshot: whose it is */
	struct zfs_dataset *prev;     /* the previous snapshot (a clone's first: its origin) */
	uint64_t prev_snap_txg;       /* prev's creation txg; 0 without one */
	struct zfs_dataset *origin;   /* clone: the snapshot it started from */
	GPtrArray *snapshots;         /* filesystem: its snapshots, oldest first */
	uint32_t clones;              /* snapshot: filesystems cloned from it */
	GPtrArray *deadlist;          /* struct zfs_block * killed here, held by prev */
	uint64_t mos_object;          /* its dsl_dataset dnode in the MOS */
	uint64_t deadlist_object;     /* its deadlist's bpobj in the MOS */
};

struct zfs_pool {
	struct zfs_pool_config config;
	struct zfs_objset *mos;
	GPtrArray *datasets;          /* struct zfs_dataset * by id - 1; owned */
	GHashTable *blocks;           /* every allocated block: id -> struct zfs_block * (owned) */
	uint64_t next_block_id;
	uint64_t next_mos_object;
	uint64_t synced_txg;
	int64_t clock_ns;
	int64_t last_sync_ns;
	uint64_t used[3];             /* one copy, by enum zfs_block_kind */
	uint64_t raw[3];              /* every copy, by kind */
	uint64_t txgs, blocks_written, bytes_written, metadata_cowed;
	uint8_t cause;                /* the label in force (zfs_pool_set_cause) */
	uint64_t cause_used[ZFS_POOL_CAUSES]; /* metadata (dataset and MOS), one copy, by label */
};

/* zfs_objset.c */
struct zfs_objset *zfs_objset_new(bool mos);
/* A frozen copy sharing every object struct (a snapshot's view). */
struct zfs_objset *zfs_objset_share(const struct zfs_objset *os);
void zfs_objset_free(struct zfs_objset *os);
struct zfs_object *zfs_objset_object(const struct zfs_objset *os, uint64_t number);
struct zfs_object *zfs_objset_object_for_write(struct zfs_objset *os, uint64_t number);
struct zfs_object *zfs_objset_claim(struct zfs_objset *os, uint64_t number, int type);
void zfs_objset_free_object(struct zfs_objset *os, uint64_t number);
struct zfs_dirty_object *zfs_objset_dirty(struct zfs_objset *os, uint64_t number);
void zfs_objset_dirty_block(struct zfs_objset *os, uint64_t number, uint64_t blkid);
bool zfs_objset_is_dirty(const struct zfs_objset *os);
/* Visits every block the objset reaches (the root, the meta-dnode's tree,
 * each object's tree, and the objects freed in the open txg, whose blocks
 * the on-disk tree still reaches until it syncs). */
typedef void (*zfs_block_visit_fn)(const struct zfs_block *block, const struct zfs_object *object,
				   uint64_t blkid, void *opaque);
void zfs_objset_visit(const struct zfs_objset *os, zfs_block_visit_fn visit, void *opaque);
/* ZO1 and ZO2's per-objset part (zfs_objset.c); false with the reason in
 * `why`. */
bool zfs_objset_check(const struct zfs_objset *os, GString *why);

/* zfs_sync.c: the txg sync of one objset; kills go through `kill`. What
 * the txg writes beyond each object's own blocks is charged to `cause`. */
typedef void (*zfs_kill_fn)(struct zfs_pool *pool, struct zfs_block *block, void *opaque);
void zfs_objset_sync(struct zfs_pool *pool, struct zfs_objset *os, uint64_t txg, uint8_t cause, zfs_kill_fn kill,
		     void *opaque);
struct zfs_block *zfs_block_alloc(struct zfs_pool *pool, uint64_t txg, uint32_t lsize, uint8_t level,
				  enum zfs_block_kind kind, uint8_t cause);
void zfs_block_free(struct zfs_pool *pool, struct zfs_block *block);

/* zfs_pool.c */
/* The dataset after a snapshot in its lineage: its next snapshot or its
 * filesystem. */
struct zfs_dataset *zfs_dataset_next(const struct zfs_dataset *snapshot);
uint64_t zfs_dataset_exclusive(const struct zfs_dataset *ds);

/* zfs_zap.c: a name's add or remove, and the blocks it dirties. */
struct zfs_zap *zfs_zap_new(void);
struct zfs_zap *zfs_zap_copy(const struct zfs_zap *zap);
void zfs_zap_free(struct zfs_zap *zap);
void zfs_zap_apply_add(struct zfs_objset *os, struct zfs_object *object, uint32_t hash, uint32_t name_len);
bool zfs_zap_apply_remove(struct zfs_objset *os, struct zfs_object *object, uint32_t hash, uint32_t name_len);
/* ZZ1; false with the reason in `why`. */
bool zfs_zap_check(const struct zfs_object *object, GString *why);

#endif
