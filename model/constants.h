/*
 * model/constants.h - every number that mirrors btrfs, in one place.
 *
 * Sizes are those of the packed on-disk structures; each cites the struct in
 * btrfs-progs kernel-shared/uapi/btrfs_tree.h (the kernel's
 * include/uapi/linux/btrfs_tree.h is the same file) or the function in
 * kernel-shared/ctree.h, ctree.c, extent-tree.c that uses it. Numbers that were
 * measured rather than read say so, with the command in docs/.
 */
#ifndef COWSIM_MODEL_CONSTANTS_H
#define COWSIM_MODEL_CONSTANTS_H

#include <stdint.h>

/* --- block geometry ---------------------------------------------------- */

/* struct btrfs_header: csum 32, fsid 16, bytenr 8, flags 8, chunk_tree_uuid 16,
 * generation 8, owner 8, nritems 4, level 1 = 101 bytes. */
#define BTRFS_HEADER_SIZE 101u
/* struct btrfs_item: btrfs_disk_key 17 + offset 4 + size 4 = 25 bytes. */
#define BTRFS_ITEM_HEADER_SIZE 25u
/* struct btrfs_key_ptr: btrfs_disk_key 17 + blockptr 8 + generation 8 = 33. */
#define BTRFS_KEY_PTR_SIZE 33u
/* struct btrfs_disk_key: objectid 8, type 1, offset 8. */
#define BTRFS_DISK_KEY_SIZE 17u

/* mkfs.btrfs: -n accepts 4096..65536, powers of two; default 16384
 * (btrfs-progs mkfs/main.c, BTRFS_MKFS_DEFAULT_NODE_SIZE). */
#define BTRFS_MIN_NODESIZE 4096u
#define BTRFS_MAX_NODESIZE 65536u
#define BTRFS_DEFAULT_NODESIZE 16384u
#define BTRFS_SECTORSIZE 4096u

/* ctree.h BTRFS_MAX_LEVEL: a tree has at most 8 levels. */
#define BTRFS_MAX_LEVEL 8u

/* BTRFS_LEAF_DATA_SIZE(fs_info) = nodesize - sizeof(struct btrfs_header). */
static inline uint32_t btrfs_leaf_data_size(uint32_t nodesize)
{
	return nodesize - BTRFS_HEADER_SIZE;
}

/* BTRFS_NODEPTRS_PER_BLOCK = (nodesize - header) / sizeof(btrfs_key_ptr):
 * 493 at 16 KiB. */
static inline uint32_t btrfs_nodeptrs_per_block(uint32_t nodesize)
{
	return btrfs_leaf_data_size(nodesize) / BTRFS_KEY_PTR_SIZE;
}

/* BTRFS_MAX_EXTENT_ITEM_SIZE = (BTRFS_LEAF_DATA_SIZE >> 4) - sizeof(btrfs_item):
 * the largest an extent/metadata item grows with inline backrefs before
 * further refs become keyed items (extent-tree.c, setup_inline_extent_backref
 * callers; 992 bytes at 16 KiB). */
static inline uint32_t btrfs_max_extent_item_size(uint32_t nodesize)
{
	return (btrfs_leaf_data_size(nodesize) >> 4) - BTRFS_ITEM_HEADER_SIZE;
}

/* --- B-tree balancing (fs/btrfs/ctree.c) ---------------------------------- */

/* push_node_left(): a node that is not being emptied keeps at least 8
 * pointers ("push_items = min(src_nritems - 8, push_items)"). */
#define BTRFS_PUSH_NODE_KEEP 8u
/* balance_node_right(): a node with fewer than 4 pointers gives none to its
 * right sibling ("if (src_nritems < 4) return 1"), and at most half + 1. */
#define BTRFS_PUSH_NODE_RIGHT_MIN 4u
/* setup_nodes_for_search(): an insert splits (or pushes) a node on its way
 * down once it has BTRFS_NODEPTRS_PER_BLOCK - 3 pointers, so the leaf split
 * below always finds room in its parent. */
#define BTRFS_NODE_SPLIT_SLACK 3u
/* setup_nodes_for_search(): a delete balances a node on its way down when it
 * is under half full (BTRFS_NODEPTRS_PER_BLOCK / 2) ... */
#define BTRFS_NODE_BALANCE_DIVISOR 2u
/* ... and balance_level() merges it only when at most a quarter full
 * (returns early when nritems > BTRFS_NODEPTRS_PER_BLOCK / 4; the model
 * merges under a quarter, nritems < capacity / 4). */
#define BTRFS_NODE_MERGE_DIVISOR 4u
/* btrfs_del_items(): a leaf left less than a third full after a delete is
 * pushed into its siblings ("used < BTRFS_LEAF_DATA_SIZE / 3"). */
#define BTRFS_LEAF_MERGE_DIVISOR 3u
/* __push_leaf_right() and __push_leaf_left(): past the slot being inserted,
 * items move only while the receiving leaf's free space stays above twice
 * the bytes pushed ("space + push_space * 2 > free_space" stops), so a push
 * does not leave the pair less balanced. */
#define BTRFS_PUSH_LEAF_BALANCE_FACTOR 2u

/* --- delayed items (fs/btrfs/delayed-inode.c) ---------------------------- */

/* btrfs_balance_delayed_items(): from 128 waiting items an operation sends
 * the worker to write BTRFS_DELAYED_BATCH delayed nodes; from 512 it writes
 * up to 512 nodes (and waits). The worker stops under 128 / 2 items. */
#define BTRFS_DELAYED_BACKGROUND 128u
#define BTRFS_DELAYED_WRITEBACK 512u
#define BTRFS_DELAYED_BATCH 16u

/* --- item sizes (bytes of item data, without the 25-byte item header) -- */

/* struct btrfs_inode_item: generation, transid, size, nbytes, block_group,
 * nlink, uid, gid, mode, rdev, flags, sequence, reserved[4], and four
 * btrfs_timespec (atime, ctime, mtime, otime; 12 bytes each) = 160. */
#define BTRFS_INODE_ITEM_SIZE 160u
/* struct btrfs_inode_ref: index 8 + name_len 2, then the name. */
#define BTRFS_INODE_REF_SIZE 10u
/* struct btrfs_inode_extref: parent 8 + index 8 + name_len 2, then the name. */
#define BTRFS_INODE_EXTREF_SIZE 18u
/* struct btrfs_dir_item: location key 17 + transid 8 + data_len 2 +
 * name_len 2 + type 1 = 30, then the name (DIR_ITEM and DIR_INDEX alike). */
#define BTRFS_DIR_ITEM_SIZE 30u
/* struct btrfs_file_extent_item: 53 bytes for a regular extent; an inline
 * extent stores its data from offsetof(disk_bytenr) = 21 on. */
#define BTRFS_FILE_EXTENT_REGULAR_SIZE 53u
#define BTRFS_FILE_EXTENT_INLINE_HEADER 21u
/* struct btrfs_extent_item: refs 8 + generation 8 + flags 8. */
#define BTRFS_EXTENT_ITEM_SIZE 24u
/* struct btrfs_extent_inline_ref: type 1 + offset 8. TREE_BLOCK_REF and
 * SHARED_BLOCK_REF are exactly this. */
#define BTRFS_INLINE_REF_SIZE 9u
/* inline EXTENT_DATA_REF: type 1 + struct btrfs_extent_data_ref (root 8,
 * objectid 8, offset 8, count 4) = 29. */
#define BTRFS_INLINE_DATA_REF_SIZE 29u
/* inline SHARED_DATA_REF: type 1 + parent 8 + struct btrfs_shared_data_ref
 * (count 4) = 13. */
#define BTRFS_INLINE_SHARED_DATA_REF_SIZE 13u
/* keyed backrefs: TREE_BLOCK_REF and SHARED_BLOCK_REF carry no data,
 * EXTENT_DATA_REF the 28-byte btrfs_extent_data_ref, SHARED_DATA_REF the
 * 4-byte count. */
#define BTRFS_KEYED_DATA_REF_SIZE 28u
#define BTRFS_KEYED_SHARED_DATA_REF_SIZE 4u
/* struct btrfs_root_item, including the v2 fields (uuid, otime, ...). */
#define BTRFS_ROOT_ITEM_SIZE 439u
/* struct btrfs_root_ref: dirid 8 + sequence 8 + name_len 2, then the name. */
#define BTRFS_ROOT_REF_SIZE 18u
/* UUID tree item: one u64 subvolume id per uuid key (uuid-tree.c). */
#define BTRFS_UUID_ITEM_SIZE 8u
/* struct btrfs_free_space_info: extent_count 4 + flags 4. */
#define BTRFS_FREE_SPACE_INFO_SIZE 8u
/* struct btrfs_dev_extent: chunk_tree 8, chunk_objectid 8, chunk_offset 8,
 * length 8, chunk_tree_uuid 16. */
#define BTRFS_DEV_EXTENT_SIZE 48u
/* struct btrfs_block_group_item (in the extent tree without the
 * block-group-tree feature): used 8, chunk_objectid 8, flags 8. */
#define BTRFS_BLOCK_GROUP_ITEM_SIZE 24u
/* crc32c: 4 bytes of checksum per data sector (btrfs_super_csum_size). */
#define BTRFS_CSUM_SIZE 4u

/* BTRFS_NAME_LEN: a name is at most 255 bytes. */
#define BTRFS_NAME_LEN 255u
/* BTRFS_MAX_INLINE_DATA_SIZE is leaf data size minus the item header and the
 * inline header; the mount option max_inline defaults to 2048
 * (BTRFS_DEFAULT_MAX_INLINE) and inline data is also below one sector. */
#define BTRFS_DEFAULT_MAX_INLINE 2048u
/* BTRFS_MAX_EXTENT_SIZE: an uncompressed data extent is at most 128 MiB. */
#define BTRFS_MAX_EXTENT_SIZE (128ull << 20)

/* --- key types (btrfs_tree.h), in their sort order --------------------- */
enum btrfs_key_type {
	BTRFS_INODE_ITEM_KEY = 1,
	BTRFS_INODE_REF_KEY = 12,
	BTRFS_INODE_EXTREF_KEY = 13,
	BTRFS_XATTR_ITEM_KEY = 24,
	BTRFS_ORPHAN_ITEM_KEY = 48,
	BTRFS_DIR_ITEM_KEY = 84,
	BTRFS_DIR_INDEX_KEY = 96,
	BTRFS_EXTENT_DATA_KEY = 108,
	BTRFS_EXTENT_CSUM_KEY = 128,
	BTRFS_ROOT_ITEM_KEY = 132,
	BTRFS_ROOT_BACKREF_KEY = 144,
	BTRFS_ROOT_REF_KEY = 156,
	BTRFS_EXTENT_ITEM_KEY = 168,
	BTRFS_METADATA_ITEM_KEY = 169,
	BTRFS_TREE_BLOCK_REF_KEY = 176,
	BTRFS_EXTENT_DATA_REF_KEY = 178,
	BTRFS_SHARED_BLOCK_REF_KEY = 182,
	BTRFS_SHARED_DATA_REF_KEY = 184,
	BTRFS_BLOCK_GROUP_ITEM_KEY = 192,
	BTRFS_FREE_SPACE_INFO_KEY = 198,
	BTRFS_FREE_SPACE_EXTENT_KEY = 199,
	BTRFS_DEV_EXTENT_KEY = 204,
	BTRFS_DEV_ITEM_KEY = 216,
	BTRFS_UUID_KEY_SUBVOL = 251,
};

/* --- tree ids (btrfs_tree.h *_OBJECTID) --------------------------------- */
#define BTRFS_ROOT_TREE_OBJECTID 1ull
#define BTRFS_EXTENT_TREE_OBJECTID 2ull
#define BTRFS_DEV_TREE_OBJECTID 4ull
#define BTRFS_FS_TREE_OBJECTID 5ull
#define BTRFS_ROOT_TREE_DIR_OBJECTID 6ull
#define BTRFS_CSUM_TREE_OBJECTID 7ull
#define BTRFS_UUID_TREE_OBJECTID 9ull
#define BTRFS_FREE_SPACE_TREE_OBJECTID 10ull
#define BTRFS_FIRST_FREE_OBJECTID 256ull
/* The inode number of the empty directory btrfs shows where a directory
 * entry names a subvolume that is not linked there (a snapshot's copy of a
 * nested subvolume's entry): fs/btrfs/inode.c new_simple_dir(). */
#define BTRFS_EMPTY_SUBVOL_DIR_OBJECTID 2ull
#define BTRFS_DATA_RELOC_TREE_OBJECTID ((uint64_t)-9)
#define BTRFS_EXTENT_CSUM_OBJECTID ((uint64_t)-10)
/* The side-table policy's atime trees (not in btrfs): one per subvolume,
 * tree id COWSIM_ATIME_TREE_BASE + subvolume id, above any subvolume id. */
#define COWSIM_ATIME_TREE_BASE (1ull << 48)
/* A side-table item holds one btrfs_timespec (sec u64 + nsec u32): the
 * smallest item that keeps btrfs's on-disk time format. */
#define COWSIM_ATIME_ITEM_SIZE 12u

/* --- space -------------------------------------------------------------- */

/* Chunk sizes (volumes.c, btrfs_create_chunk / calc_chunk_size): metadata
 * block groups are 256 MiB on a filesystem up to 50 GiB, 1 GiB above; data
 * stripes 1 GiB; all capped at 10% of the device (model/chunk_alloc.c).
 * mkfs makes an 8 MiB data chunk, an 8 MiB system chunk and a metadata chunk
 * sized by chunk_alloc_mkfs_metadata() (measured: fi df on fresh images of
 * 256 MiB to 64 GiB, docs/btrfs-ground-truth.md). */
#define BTRFS_METADATA_CHUNK_SMALL (256ull << 20)
#define BTRFS_METADATA_CHUNK_LARGE (1ull << 30)
#define BTRFS_METADATA_CHUNK_THRESHOLD (50ull << 30)
#define BTRFS_DATA_CHUNK_SIZE (1ull << 30)
#define BTRFS_MKFS_DATA_CHUNK (8ull << 20)
#define BTRFS_MKFS_SYSTEM_CHUNK (8ull << 20)
/* mkfs's metadata chunk is never below 32 MiB (measured: 256 MiB to 600 MiB
 * devices all get 32 MiB; 800 MiB gets 40 MiB = 5 % of the device). */
#define BTRFS_MKFS_METADATA_MIN (32ull << 20)
/* BTRFS_STRIPE_LEN: chunk stripes are multiples of 64 KiB (volumes.h). */
#define BTRFS_STRIPE_LEN (64ull << 10)
/* decide_stripe_size_regular() rounds the 10 % cap up to 16 MiB. */
#define BTRFS_CHUNK_ROUND (16ull << 20)
/* mkfs.btrfs 6.2 refuses smaller devices ("minimum size for each btrfs
 * device is 114294784", measured with metadata DUP). */
#define BTRFS_MKFS_MIN_DEVICE 114294784ull
/* The first 1 MiB of every device is never allocated (BTRFS_DEVICE_RANGE_RESERVED). */
#define BTRFS_DEVICE_RANGE_RESERVED (1ull << 20)
/* mkfs.btrfs 6.2 leaves the 12 MiB after the reserved MiB free (its
 * temporary chunks were there): the first DEV_EXTENT of a fresh image starts
 * at 13 MiB on 512 MiB, 1 GiB and 4 GiB devices (`btrfs inspect-internal
 * dump-tree -t dev`). A DUP chunk keeps both stripes in one hole, so that
 * hole holds a 6 MiB metadata chunk at most (measured: the 6291456-byte
 * chunks of docs/btrfs-ground-truth.md section 11). */
#define BTRFS_MKFS_FRONT_HOLE (12ull << 20)

/* Global reserve (block-rsv.c, btrfs_update_global_block_rsv): the bytes used
 * by the extent, csum and free-space trees, at least a floor, at most
 * 512 MiB. The floor comes from btrfs_calc_insert_metadata_size() over a few
 * items and scales with nodesize; measured as 5767168 bytes = 352 nodes at
 * 16 KiB on a fresh filesystem (`btrfs fi df -b`, GlobalReserve). */
#define BTRFS_GLOBAL_RESERVE_FLOOR_NODES 352ull
#define BTRFS_GLOBAL_RESERVE_MAX (512ull << 20)
/* should_alloc_chunk() (block-group.c): an unforced chunk only once
 * bytes_used + SZ_2M reaches 80 % of the space info's total. */
#define BTRFS_CHUNK_ALLOC_SLACK (2ull << 20)
#define BTRFS_CHUNK_ALLOC_PERCENT 80u
/* A transaction handle reserves calc_insert_metadata_size(n) =
 * nodesize * BTRFS_MAX_LEVEL * 2 per item it will change (ctree.h). */
#define BTRFS_RESERVE_NODES_PER_ITEM (BTRFS_MAX_LEVEL * 2u)
/* Since kernel 6.7 start_transaction() reserves, besides, the delayed-ref
 * bytes its items will queue: btrfs_calc_delayed_ref_bytes(n), the insert
 * size doubled for the free-space tree (delayed-ref.h). 48 nodes per item:
 * measured as tickets of 3932160 bytes = 5 items x 768 KiB at 16 KiB
 * (docs/btrfs-ground-truth.md section 11). */
#define BTRFS_TICKET_NODES_PER_ITEM (BTRFS_RESERVE_NODES_PER_ITEM * 3u)

/*
 * Items each operation reserves for before it changes anything (fs_reserve,
 * as btrfs_start_transaction(root, N) hands N to calc_insert_metadata_size).
 * These are cowsim's counts, kept as calibrated; the kernel's own counts
 * vary by version and by mount (ACLs, SELinux, compression property), e.g.
 * btrfs_mkdir() of 3.x reserves 5, btrfs_rename() up to 5.18 reserves 11 and
 * since then 6-12 by case (btrfs_new_inode_prepare() and btrfs_rename() in
 * fs/btrfs/inode.c). A reservation the operation cannot get is its ENOSPC.
 */
#define COWSIM_RESERVE_MKDIR 5u
#define COWSIM_RESERVE_CREATE 6u
#define COWSIM_RESERVE_SYMLINK 6u
#define COWSIM_RESERVE_LINK 4u
#define COWSIM_RESERVE_UNLINK 6u
#define COWSIM_RESERVE_RMDIR 6u           /* a directory, or an empty subvolume's link */
#define COWSIM_RESERVE_RENAME 10u
#define COWSIM_RESERVE_RENAME_SUBVOLUME 6u
#define COWSIM_RESERVE_SETTIME 1u         /* the inode item (btrfs_setattr -> btrfs_dirty_inode: 1) */
#define COWSIM_RESERVE_ATIME 1u           /* the inode item, or its side-table item */
#define COWSIM_RESERVE_SNAPSHOT 8u        /* create or delete */
#define COWSIM_RESERVE_WRITE 4u           /* write or truncate */

/* A reservation that finds no metadata space waits on a ticket while the
 * async flusher walks its states up to COMMIT_TRANS; with the ticket
 * unserved after a commit it starts over, and after the third commit cycle
 * it fails the tickets (fs/btrfs/space-info.c,
 * btrfs_async_reclaim_metadata_space(): commit_cycles > 2 ->
 * maybe_fail_all_tickets()). The model's flusher is that many commits. */
#define BTRFS_ENOSPC_FLUSH_COMMITS 3u

/* --- time --------------------------------------------------------------- */
/* fs/btrfs/disk-io.c BTRFS_DEFAULT_COMMIT_INTERVAL: 30 s. */
#define BTRFS_DEFAULT_COMMIT_INTERVAL_NS (30ll * 1000000000ll)
/* fs/fs-writeback.c dirtytime_expire_interval: 12 h. */
#define LINUX_DIRTYTIME_EXPIRE_NS (12ll * 3600ll * 1000000000ll)
/* fs/inode.c relatime_need_update: an atime a day old is refreshed. */
#define LINUX_RELATIME_MAX_AGE_NS (24ll * 3600ll * 1000000000ll)

#endif
