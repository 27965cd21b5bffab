/*
 * model/policy_snapshot_aware.c - the snapshot-aware policy
 * (`--policy snapshot-aware`): the atime is in the inode item and is written
 * only when that write changes blocks in place (the inode's leaf is
 * exclusive, or already copied in the running transaction). A skipped
 * update is counted (atime_stale) with the age of the atime it left behind.
 */
#include "atime_policy.h"

/* Ages of the atimes left behind: < 1 h, < 1 d, < 7 d, < 30 d, older
 * (FS_STALENESS_BUCKETS). */
static void count_staleness(struct fs *fs, int64_t atime)
{
	static const int64_t hour = 3600ll * 1000000000ll;
	static const int64_t limits[FS_STALENESS_BUCKETS - 1] = { hour, 24 * hour, 7 * 24 * hour, 30 * 24 * hour };
	int64_t age;
	if (__builtin_sub_overflow(fs->clock_ns, atime, &age))
		age = atime < 0 ? INT64_MAX : INT64_MIN; /* an atime of 1678 is older than any bucket */
	unsigned bucket = 0;
	while (bucket < FS_STALENESS_BUCKETS - 1 && age >= limits[bucket])
		bucket++;
	fs->counters.atime_stale++;
	fs->counters.staleness[bucket]++;
}

static bool snapshot_aware_holds_back(struct fs *fs, const struct subvolume *sv, const struct btree_item *inode,
				      int64_t current)
{
	if (fs->design->item_write_is_private(fs, sv, inode))
		return false;
	count_staleness(fs, current);
	return true;
}

/* Right after a snapshot it writes only what the design leaves private. */
static uint64_t snapshot_aware_unshare_estimate(struct fs *fs, const struct subvolume *sv, fs_atime_wanted_fn wanted)
{
	return fs->design->inline_atime_estimate(fs, sv, wanted, true, false);
}

const struct atime_policy_ops atime_policy_snapshot_aware = {
	.name = "snapshot-aware",
	.syntax = "snapshot-aware",
	.write = atime_write_inline,
	.holds_back = snapshot_aware_holds_back,
	.drops_on_enospc = false,
	.unshare_estimate = snapshot_aware_unshare_estimate,
};
