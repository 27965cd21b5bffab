/*
 * model/policy_threshold.c - the threshold policy (`--policy threshold:PCT%`):
 * the atime is in the inode item, but no update is written while free
 * metadata space, less what the running commit will still take, is under
 * PCT of the device (fs_config.threshold_fraction), and an update that meets
 * ENOSPC is dropped: a read never fails for its atime.
 */
#include "atime_policy.h"

#include <stdio.h>
#include <string.h>

#include "blockstore.h"
#include "model_error.h"

/* Free space as the policy measures it: what metadata can still grow into
 * (space_report_metadata_free: free inside the metadata chunks less the
 * global reserve, plus the metadata chunks the unallocated device space can
 * still hold, two raw bytes a byte with DUP). */
static uint64_t free_bytes(const struct fs *fs)
{
	struct space_report r;
	blockstore_report(fs->store, &r);
	return space_report_metadata_free(&r, fs->config.device_size, !fs->config.metadata_single);
}

/* What the running transaction's commit will still add to metadata: the
 * delayed references of every block it dirtied become extent-tree items at
 * the commit, and the global reserve grows with the extent tree (btrfs holds
 * them in the delayed_refs_rsv, out of free space, until they run). Forecast
 * at COWSIM_COMMIT_FORECAST_BYTES per dirty block: an empirical bound
 * (docs/policies.md), above the 424-1802 bytes of room the greps' commits
 * took per copied block on the seed experiment and a synthetic 25000-file
 * tree at 4, 16 and 64 KiB nodes. */
#define COWSIM_COMMIT_FORECAST_BYTES 2048u

static uint64_t commit_forecast(const struct fs *fs)
{
	return fs->txn.blocks_dirty * COWSIM_COMMIT_FORECAST_BYTES;
}

/* The limit, bytes: PCT of the device. */
static uint64_t threshold_bytes(const struct fs *fs)
{
	return (uint64_t)(fs->config.threshold_fraction * (double)fs->config.device_size);
}

/* Hold this update back: free space, less what the commit will still take
 * and two reservations (the update's own, and one for the commit's root,
 * free-space and extent-tree paths), would fall under the limit. */
static bool threshold_holds_back(struct fs *fs, const struct subvolume *sv, const struct btree_item *inode,
				 int64_t current)
{
	(void)sv;
	(void)inode;
	(void)current;
	uint64_t need = commit_forecast(fs) +
			2ull * BTRFS_RESERVE_NODES_PER_ITEM * blockstore_nodesize(fs->store);
	uint64_t free = free_bytes(fs);
	if (free >= need && free - need >= threshold_bytes(fs))
		return false;
	fs->counters.atime_threshold++;
	return true;
}

/* Updates stop once free space reaches the limit. */
static uint64_t threshold_unshare_estimate(struct fs *fs, const struct subvolume *sv, fs_atime_wanted_fn wanted)
{
	uint64_t bytes = atime_estimate_inline(fs, sv, wanted);
	uint64_t free = free_bytes(fs), limit = threshold_bytes(fs);
	return MIN(bytes, free > limit ? free - limit : 0);
}

static bool threshold_parse(const char *arg, struct fs_config *config, GError **error)
{
	char *end = NULL;
	double percent = arg ? g_ascii_strtod(arg, &end) : 0;
	if (arg && end != arg && (!strcmp(end, "%") || !*end) && percent > 0 && percent < 100) {
		config->threshold_fraction = percent / 100.0;
		return true;
	}
	g_set_error(error, MODEL_ERROR, MODEL_ERROR_INVALID,
		    "threshold takes a percentage above 0 and below 100, as threshold:5%%");
	return false;
}

static void threshold_describe(const struct fs_config *config, char *out, size_t size)
{
	snprintf(out, size, "threshold:%g%%", config->threshold_fraction * 100.0);
}

const struct atime_policy_ops atime_policy_threshold = {
	.name = "threshold",
	.syntax = "threshold:PCT%",
	.parse = threshold_parse,
	.describe = threshold_describe,
	.write = atime_write_inline,
	.holds_back = threshold_holds_back,
	.drops_on_enospc = true,
	.unshare_estimate = threshold_unshare_estimate,
};
