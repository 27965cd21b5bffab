/*
 * model/fs_names.c - the names and limits sim/ needs from the model's
 * constants, so that constants.h stays private (fs.h declares them).
 */
#include "fs_internal.h"

const char *fs_key_type_name(uint8_t type)
{
	switch (type) {
	case BTRFS_INODE_ITEM_KEY: return "INODE_ITEM";
	case BTRFS_INODE_REF_KEY: return "INODE_REF";
	case BTRFS_INODE_EXTREF_KEY: return "INODE_EXTREF";
	case BTRFS_XATTR_ITEM_KEY: return "XATTR_ITEM";
	case BTRFS_ORPHAN_ITEM_KEY: return "ORPHAN_ITEM";
	case BTRFS_DIR_ITEM_KEY: return "DIR_ITEM";
	case BTRFS_DIR_INDEX_KEY: return "DIR_INDEX";
	case BTRFS_EXTENT_DATA_KEY: return "EXTENT_DATA";
	case BTRFS_EXTENT_CSUM_KEY: return "EXTENT_CSUM";
	case BTRFS_ROOT_ITEM_KEY: return "ROOT_ITEM";
	case BTRFS_ROOT_BACKREF_KEY: return "ROOT_BACKREF";
	case BTRFS_ROOT_REF_KEY: return "ROOT_REF";
	case BTRFS_EXTENT_ITEM_KEY: return "EXTENT_ITEM";
	case BTRFS_METADATA_ITEM_KEY: return "METADATA_ITEM";
	case BTRFS_TREE_BLOCK_REF_KEY: return "TREE_BLOCK_REF";
	case BTRFS_EXTENT_DATA_REF_KEY: return "EXTENT_DATA_REF";
	case BTRFS_SHARED_BLOCK_REF_KEY: return "SHARED_BLOCK_REF";
	case BTRFS_SHARED_DATA_REF_KEY: return "SHARED_DATA_REF";
	case BTRFS_BLOCK_GROUP_ITEM_KEY: return "BLOCK_GROUP_ITEM";
	case BTRFS_FREE_SPACE_INFO_KEY: return "FREE_SPACE_INFO";
	case BTRFS_FREE_SPACE_EXTENT_KEY: return "FREE_SPACE_EXTENT";
	case BTRFS_DEV_EXTENT_KEY: return "DEV_EXTENT";
	case BTRFS_DEV_ITEM_KEY: return "DEV_ITEM";
	case BTRFS_UUID_KEY_SUBVOL: return "UUID_KEY_SUBVOL";
	default: return NULL;
	}
}

const char *fs_tree_name(uint64_t tree_id)
{
	if (tree_id >= COWSIM_ATIME_TREE_BASE && tree_id < BTRFS_DATA_RELOC_TREE_OBJECTID)
		return "atime";
	if (tree_category_of(tree_id) == TREE_CATEGORY_FS)
		return "fs";
	switch (tree_id) {
	case BTRFS_ROOT_TREE_OBJECTID: return "root";
	case BTRFS_EXTENT_TREE_OBJECTID: return "extent";
	case BTRFS_DEV_TREE_OBJECTID: return "dev";
	case BTRFS_CSUM_TREE_OBJECTID: return "csum";
	case BTRFS_UUID_TREE_OBJECTID: return "uuid";
	case BTRFS_FREE_SPACE_TREE_OBJECTID: return "free-space";
	case BTRFS_DATA_RELOC_TREE_OBJECTID: return "data-reloc";
	default: return NULL;
	}
}

bool fs_nodesize_valid(uint64_t nodesize)
{
	return nodesize >= BTRFS_MIN_NODESIZE && nodesize <= BTRFS_MAX_NODESIZE && !(nodesize & (nodesize - 1));
}

uint32_t fs_max_inline_limit(void)
{
	return BTRFS_SECTORSIZE - 1;
}
