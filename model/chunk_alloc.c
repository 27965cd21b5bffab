/*
 * model/chunk_alloc.c - chunk sizes as mkfs.btrfs and the kernel choose them.
 * See chunk_alloc.h for the rules and where they come from (CA1, CA2).
 */
#include "chunk_alloc.h"

#include "constants.h"

#define ROUND_DOWN(x, a) ((x) / (a) * (a))
#define ROUND_UP(x, a) (((x) + (a) - 1) / (a) * (a))

static uint64_t metadata_max(uint64_t device_size)
{
	/* calc_chunk_size(): "total_rw_bytes > 50 GiB" gets 1 GiB metadata chunks. */
	return device_size > BTRFS_METADATA_CHUNK_THRESHOLD ? BTRFS_METADATA_CHUNK_LARGE
							   : BTRFS_METADATA_CHUNK_SMALL;
}

uint64_t chunk_alloc_mkfs_metadata(uint64_t device_size)
{
	uint64_t max = metadata_max(device_size);
	uint64_t tenth = device_size / 10;
	if (tenth >= max)
		return max;
	uint64_t half_tenth = ROUND_DOWN(tenth / 2, BTRFS_STRIPE_LEN);
	return half_tenth > BTRFS_MKFS_METADATA_MIN ? half_tenth : BTRFS_MKFS_METADATA_MIN;
}

uint64_t chunk_alloc_size(uint64_t device_size, bool data, bool dup, uint64_t unallocated)
{
	unsigned stripes = dup ? 2 : 1;
	uint64_t max_stripe = data ? BTRFS_DATA_CHUNK_SIZE : metadata_max(device_size);
	uint64_t stripe = ROUND_DOWN(unallocated / stripes, BTRFS_STRIPE_LEN);
	if (stripe < BTRFS_STRIPE_LEN)
		return 0; /* CA2 */
	if (stripe > max_stripe)
		stripe = max_stripe;
	/* No chunk larger than 10 % of the writable space, rounded up to 16 MiB
	 * unless that is more than the device still has. */
	uint64_t percent_max = ROUND_UP(device_size / 10, BTRFS_CHUNK_ROUND);
	return stripe < percent_max ? stripe : percent_max;
}

uint64_t chunk_alloc_allocatable(bool dup, uint64_t unallocated)
{
	return ROUND_DOWN(dup ? unallocated / 2 : unallocated, BTRFS_STRIPE_LEN);
}
