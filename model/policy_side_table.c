/*
 * model/policy_side_table.c - the side-table policy (`--policy side-table`):
 * atimes in a tree of their own beside each subvolume.
 *
 * Per subvolume a tree keyed (inode, INODE_ITEM, 0) with a 12-byte
 * btrfs_timespec per item (37 bytes with the item header, ~440 per 16 KiB
 * leaf against ~45 inodes per fs-tree leaf). An item appears on the first
 * update; until then the inode item's atime is the atime. The tree is
 * snapshotted with its subvolume (a clone of its root, as the btrfs design
 * clones a subvolume's), so after a snapshot a read copies side-table
 * leaves instead of fs-tree leaves. The storage functions here serve the
 * hybrid policy too (atime_policy.h).
 */
#include "atime_policy.h"

#include "blockstore.h"

uint64_t fs_atime_tree_id(uint64_t subvolume_id)
{
	return COWSIM_ATIME_TREE_BASE + subvolume_id;
}

/* Keyed as the inode item is: the atime is the item's inode payload's. */
static struct btree_key side_key(uint64_t inode)
{
	return BTRFS_KEY(inode, BTRFS_INODE_ITEM_KEY, 0);
}

static void insert_root_item(struct fs *fs, uint64_t tree_id)
{
	struct btree_key key = BTRFS_KEY(tree_id, BTRFS_ROOT_ITEM_KEY, 0);
	btree_insert_item(&fs->root_tree, &fs->txn, &key, BTRFS_ROOT_ITEM_SIZE, NULL);
}

void atime_side_table_init(struct fs *fs, struct subvolume *sv)
{
	btree_init(&sv->atime_tree, &fs->txn, fs_atime_tree_id(sv->id));
	insert_root_item(fs, sv->atime_tree.id);
}

void atime_side_table_snapshot(struct fs *fs, struct subvolume *src, struct subvolume *snap)
{
	if (!src->atime_tree.root)
		return;
	snap->atime_tree.id = fs_atime_tree_id(snap->id);
	snap->atime_tree.root = fs_clone_root(fs, src->atime_tree.root, snap->atime_tree.id);
	snap->atime_tree.root_dirty = true;
	insert_root_item(fs, snap->atime_tree.id);
}

void atime_side_table_drop(struct fs *fs, struct subvolume *snap)
{
	if (!snap->atime_tree.root)
		return;
	struct btree_key key = BTRFS_KEY(snap->atime_tree.id, BTRFS_ROOT_ITEM_KEY, 0);
	btree_delete_item(&fs->root_tree, &fs->txn, &key);
	refs_drop_tree(&fs->txn, snap->atime_tree.root);
	snap->atime_tree.root = NULL;
}

bool atime_side_table_read(const struct subvolume *sv, uint64_t inode, int64_t *atime)
{
	if (!sv->atime_tree.root)
		return false;
	struct btree_key key = side_key(inode);
	struct btree_path path;
	if (!btree_lookup(&sv->atime_tree, &key, &path))
		return false;
	*atime = btree_item_inode(btree_path_item(&path))->atime;
	return true;
}

void atime_side_table_write(struct fs *fs, struct subvolume *sv, uint64_t inode, int64_t atime)
{
	struct btree_key key = side_key(inode);
	struct btree_item *item = btree_lookup_for_write(&sv->atime_tree, &fs->txn, &key);
	if (!item)
		item = btree_insert_item(&sv->atime_tree, &fs->txn, &key, COWSIM_ATIME_ITEM_SIZE, NULL);
	btree_item_inode_for_write(item)->atime = atime;
}

void atime_side_table_forget(struct fs *fs, struct subvolume *sv, uint64_t inode)
{
	struct btree_key key = side_key(inode);
	struct btree_path path;
	if (sv->atime_tree.root && btree_lookup(&sv->atime_tree, &key, &path))
		btree_delete_item(&sv->atime_tree, &fs->txn, &key);
}

/* The leaves of atime items that would change (the items that exist) and
 * the items still to be inserted, at the tree's own fill, and the nodes
 * above them. */
uint64_t atime_side_table_estimate(const struct fs *fs, uint64_t count)
{
	uint32_t nodesize = blockstore_nodesize(fs->store);
	uint64_t per_leaf = (btrfs_leaf_data_size(nodesize) / (BTRFS_ITEM_HEADER_SIZE + COWSIM_ATIME_ITEM_SIZE));
	uint64_t leaves = (count + per_leaf - 1) / per_leaf;
	return (leaves + leaves / btrfs_nodeptrs_per_block(nodesize) + (leaves > 1)) * nodesize;
}

/* The side tree is snapshotted by cloning its root: the design must let a
 * tree beside its own be cloned by references. */
bool atime_side_table_supports(const struct fs_design_ops *design)
{
	return design->side_trees;
}

static void side_table_write(struct fs *fs, const struct inode_location *where, int64_t atime,
			     struct btree_path *near, struct btree_item *inode)
{
	(void)near;
	(void)inode;
	atime_side_table_write(fs, where->subvolume, where->inode, atime);
}

static uint64_t side_table_unshare_estimate(struct fs *fs, const struct subvolume *sv, fs_atime_wanted_fn wanted)
{
	return atime_side_table_estimate(fs, fs_count_wanted_inodes(fs, sv, wanted));
}

const struct atime_policy_ops atime_policy_side_table = {
	.name = "side-table",
	.syntax = "side-table",
	.supports = atime_side_table_supports,
	.subvolume_init = atime_side_table_init,
	.snapshot_create = atime_side_table_snapshot,
	.snapshot_delete = atime_side_table_drop,
	.read = atime_side_table_read,
	.write = side_table_write,
	.drops_on_enospc = false,
	.unshare_estimate = side_table_unshare_estimate,
};
