/*
 * model/policy_hybrid.c - the hybrid policy (`--policy hybrid`): each
 * update goes where it copies least. When the write to the inode item
 * changes blocks in place (its leaf is exclusive, or was already copied in
 * this transaction: the design's item_write_is_private) the atime goes
 * inline; when it would unshare a leaf (after a snapshot) it goes to the
 * side table instead (model/policy_side_table.c), whose 37-byte items pack
 * about ten times as many atimes per leaf.
 *
 * HY1 an inode's atime is in at most one place that overrides its inode
 *    item: an inline write removes the inode's side-table item, if any, so
 *    the side table never holds an atime older than the inode item's
 *    (hybrid_check; an item whose inode is gone is not looked at).
 *
 * The snapshot-time warning counts every update the warning expects as a
 * side-table write (right after a snapshot no leaf of the btrfs design is
 * private) plus what the design says stays private.
 */
#include "atime_policy.h"

#include <inttypes.h>

#include "derived_check.h"

static void hybrid_write(struct fs *fs, const struct inode_location *where, int64_t atime, struct btree_path *near,
			 struct btree_item *inode)
{
	struct subvolume *sv = where->subvolume;
	const struct btree_item *item = inode ? inode : near ? fs_inode_item_near(sv, where->inode, near)
							  : fs_inode_item(sv, where->inode);
	if (!inode && !fs->design->item_write_is_private(fs, sv, item)) {
		atime_side_table_write(fs, sv, where->inode, atime);
		return;
	}
	atime_write_inline(fs, where, atime, near, inode);
	atime_side_table_forget(fs, sv, where->inode); /* HY1 */
}

static uint64_t hybrid_unshare_estimate(struct fs *fs, const struct subvolume *sv, fs_atime_wanted_fn wanted)
{
	return fs->design->inline_atime_estimate(fs, sv, wanted, true, false) +
	       atime_side_table_estimate(fs, fs_count_wanted_inodes(fs, sv, wanted));
}

struct side_audit {
	const struct subvolume *sv;
	GError **error;
	bool ok;
};

/* HY1 for one side-table item. */
static bool audit_side_item(const struct btree_item *item, void *opaque)
{
	struct side_audit *a = opaque;
	uint64_t inode = btree_item_key(item)->objectid;
	int64_t side = btree_item_inode(item)->atime, inline_atime;
	if (!atime_inode_item_atime(a->sv, inode, &inline_atime) || side >= inline_atime)
		return true;
	return a->ok = derived_corrupt(a->error, "side-table item", inode,
				       "HY1 atime %" PRId64 " older than its inode item's %" PRId64 " in subvolume %" PRIu64,
				       side, inline_atime, a->sv->id);
}

static bool hybrid_check(const struct fs *fs, GError **error)
{
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		struct side_audit a = { sv, error, true };
		if (sv->deleted || !sv->atime_tree.root)
			continue;
		derived_visit_tree(&sv->atime_tree, audit_side_item, &a);
		if (!a.ok)
			return false;
	}
	return true;
}

const struct atime_policy_ops atime_policy_hybrid = {
	.name = "hybrid",
	.syntax = "hybrid",
	.supports = atime_side_table_supports,
	.subvolume_init = atime_side_table_init,
	.snapshot_create = atime_side_table_snapshot,
	.snapshot_delete = atime_side_table_drop,
	.read = atime_side_table_read,
	.write = hybrid_write,
	.drops_on_enospc = false,
	.unshare_estimate = hybrid_unshare_estimate,
	.check = hybrid_check,
};
