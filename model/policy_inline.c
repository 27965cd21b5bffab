/*
 * model/policy_inline.c - the inline policy (`--policy inline`, the
 * default): btrfs today. The atime is in the inode item; every update the
 * mount's rule allows is written, and one that meets ENOSPC fails the read
 * (the 2012 behaviour the seed mails describe).
 */
#include "atime_policy.h"

const struct atime_policy_ops atime_policy_inline = {
	.name = "inline",
	.syntax = "inline",
	.write = atime_write_inline,
	.drops_on_enospc = false,
	.unshare_estimate = atime_estimate_inline,
};
