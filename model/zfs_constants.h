/*
 * model/zfs_constants.h - every number and rule of the ZFS-like design, with
 * its source.
 *
 * Sources: the ZFS On-Disk Specification (Sun, 2006; "spec" below) and the
 * OpenZFS source, read at openzfs/zfs be7657e3 (2026-08-21). Read to learn,
 * never copied. Where the model simplifies a rule it says so here and in
 * docs/designs.md.
 */
#ifndef COWSIM_MODEL_ZFS_CONSTANTS_H
#define COWSIM_MODEL_ZFS_CONSTANTS_H

#include <stdint.h>

/* --- blocks -------------------------------------------------------------- */

/* include/sys/fs/zfs.h SPA_MINBLOCKSHIFT 9: sizes are multiples of 512 B. */
#define ZFS_MINBLOCKSIZE 512u
/* SPA_OLD_MAXBLOCKSHIFT 17: the default recordsize and the largest block
 * without the large_blocks feature, 128 KiB. */
#define ZFS_RECORDSIZE (128u << 10)
/* include/sys/spa.h SPA_BLKPTRSHIFT 7: a block pointer (blkptr_t) is 128 B. */
#define ZFS_BLKPTR_SIZE 128u
/* include/sys/dnode.h DN_MAX_INDBLKSHIFT 17, module/zfs/dnode.c
 * zfs_default_ibs = DN_MAX_INDBLKSHIFT: indirect blocks are 128 KiB, so one
 * holds 1024 block pointers. */
#define ZFS_INDIRECT_BLOCK_SIZE (128u << 10)
#define ZFS_INDIRECT_SHIFT 10u /* log2(128 KiB / 128 B) */
/* The model's bound on indirection (DN_MAX_LEVELS is larger; 8 levels of
 * 1024-way fan-out address more than any trace writes). */
#define ZFS_MAX_LEVELS 8u

/* --- dnodes ---------------------------------------------------------------- */

/* dnode.h DNODE_SHIFT 9 (DNODE_MIN_SIZE, the legacy dnodesize): 512-byte
 * dnodes; DNODE_BLOCK_SHIFT 14: the meta-dnode's data blocks are 16 KiB, so
 * a dnode block holds 32 dnodes. */
#define ZFS_DNODE_SIZE 512u
#define ZFS_DNODE_BLOCK_SIZE (16u << 10)
#define ZFS_DNODES_PER_BLOCK (ZFS_DNODE_BLOCK_SIZE / ZFS_DNODE_SIZE)
/* dnode.h: 64-byte core, then 448 bytes of block pointers and bonus. A ZPL
 * file or directory keeps its attributes (SA) in the bonus buffer, which
 * leaves it one block pointer (zfs_mknode: bonuslen DN_BONUS_SIZE(dnodesize),
 * so dn_nblkptr = 1); the meta-dnode has three (DN_MAX_NBLKPTR). */
#define ZFS_ZPL_NBLKPTR 1u
#define ZFS_META_DNODE_NBLKPTR 3u
/* module/zfs/dmu_objset.c dmu_objset_create_impl_dnstats: a dataset's
 * meta-dnode gets, at creation, the levels that address DN_MAX_OBJECT = 2^48
 * dnodes (3 << (14 - 9 + (levels - 1) * 10) >= 2^48 gives 6), so it never
 * grows in open context; the MOS (no dataset) keeps the fewest levels. */
#define ZFS_DATASET_META_DNODE_LEVELS 6u
/* include/sys/dmu_objset.h OBJSET_PHYS_SIZE_V3: the objset block (meta-dnode,
 * user/group/project used dnodes) is 4 KiB. */
#define ZFS_OBJSET_PHYS_SIZE 4096u

/* --- ZAP (directories) ------------------------------------------------------ */

/* include/sys/zap_impl.h MZAP_ENT_LEN 64, MZAP_NAME_LEN 50: a micro-ZAP
 * entry is 64 bytes and holds a name of at most 49 bytes and one 8-byte
 * value; the first 64 bytes of the block are its header, so a block of S
 * bytes holds S / 64 - 1 entries. */
#define ZFS_MZAP_ENT_LEN 64u
#define ZFS_MZAP_NAME_LEN 50u
/* module/zfs/dnode.c zfs_default_bs = SPA_MINBLOCKSHIFT: a new ZAP object's
 * block is 512 bytes. zap_impl.c zap_lockdir_impl: a full micro-ZAP grows by
 * SPA_MINBLOCKSIZE up to zap_micro_max_size (zap_micro.c, default
 * SPA_OLD_MAXBLOCKSIZE = 128 KiB), then becomes a fat ZAP (mzap_upgrade);
 * zap.c zap_add_impl: so does a name of MZAP_NAME_LEN bytes or more. */
#define ZFS_MZAP_MAX_SIZE (128u << 10)
/* zap_fat.c fzap_default_block_shift 14: fat ZAP header and leaves are
 * 16 KiB. include/sys/zap_leaf.h: a leaf has 2 bytes of hash table per
 * 32 bytes of block and 24-byte chunks after a two-chunk header:
 * (16384 - 2 * 512) / 24 - 2 = 638 chunks. An entry takes one chunk, its
 * name (with the NUL) ZAP_LEAF_ARRAY_NCHUNKS(len + 1) chunks of 21 bytes,
 * and its 8-byte value one more (zap_leaf.c zap_entry_create). A leaf that
 * cannot take an entry splits in two by the next hash bit (zap_fat.c
 * zap_expand_leaf). The pointer table embedded in the header addresses
 * 2^(14 - 3 - 1) = 1024 leaves; the model does not move it to its own
 * blocks beyond that (a directory of some 300 000 names). */
#define ZFS_FZAP_BLOCK_SIZE (16u << 10)
#define ZFS_ZAP_LEAF_CHUNKS 638u
#define ZFS_ZAP_LEAF_ARRAY_BYTES 21u

/* --- writing ------------------------------------------------------------- */

/* module/zfs/dmu.c dmu_write_policy: with redundant_metadata=all (the
 * default) metadata gets one copy more than the dataset's copies=1 (ditto
 * blocks), and dmu_objset.c sets the MOS's copies to spa_max_replication(),
 * 3 (SPA_DVAS_PER_BP). Data has copies=1. */
#define ZFS_DATA_COPIES 1u
#define ZFS_METADATA_COPIES 2u
#define ZFS_MOS_COPIES 3u
/* A vdev allocates in units of 1 << ashift; 12 (4 KiB sectors) is what
 * zpool create picks for today's disks. */
#define ZFS_DEFAULT_ASHIFT 12u
/* Compression: the model writes every block uncompressed. Real ZFS
 * compresses metadata whenever compression is available (dmu_write_policy:
 * metadata compress = zio_compress_select(ZIO_COMPRESS_ON)), which shrinks
 * indirect blocks that hold a few pointers to a sector or two; the model
 * therefore overstates indirect-block bytes. A compression ratio is a
 * parameter to add later (docs/designs.md). */

/* --- time ---------------------------------------------------------------- */

/* module/zfs/txg.c zfs_txg_timeout = 5: a transaction group syncs at most
 * 5 s after it opened. The model syncs a txg when 5 s of simulated time
 * have passed since the last one and something is dirty (an empty txg
 * would write only the uberblock, which allocates nothing). */
#define ZFS_TXG_TIMEOUT_NS (5ll * 1000000000ll)
/* module/os/linux/zfs/zfs_znode_os.c zfs_relatime_need_update (relatime=on,
 * the default on Linux, zcommon/zfs_prop.c): update when the atime is not
 * after the mtime or the ctime, or is at least a day old. */
#define ZFS_RELATIME_MAX_AGE_NS (24ll * 3600ll * 1000000000ll)

/* --- snapshots ------------------------------------------------------------ */

/* The birth-time rules (module/zfs/dsl_dataset.c dsl_dataset_block_kill,
 * module/zfs/dsl_destroy.c process_old_cb, dsl_destroy_snapshot_sync_impl;
 * spec chapter 5 "DSL"):
 *  - a block freed by a dataset whose newest snapshot was taken in txg P is
 *    freed at once if born after P, else put on the dataset's deadlist;
 *  - a snapshot takes the head's deadlist; the head starts an empty one;
 *  - destroying snapshot S (previous P, next N): each block on N's deadlist
 *    born after P is freed, the rest stay; S's deadlist joins N's.
 * Deadlists are kept in the MOS as bpobjs of 128-byte block pointers in
 * 128 KiB blocks (dsl_deadlist.c: bpobj_alloc(..., SPA_OLD_MAXBLOCKSIZE));
 * the model keeps one bpobj per deadlist (ZFS splits it by birth range into
 * sub-lists and merges them by reference). */
#define ZFS_BPOBJ_BLOCK_SIZE (128u << 10)

#endif
