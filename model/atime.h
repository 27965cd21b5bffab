/*
 * model/atime.h - when a read updates the access time.
 *
 * The rules of Linux's fs/inode.c (atime_needs_update, relatime_need_update)
 * as pure functions, so the filesystem layer and the tests share one
 * definition:
 *   strictatime  every access, unless atime already equals now;
 *   relatime     only when atime <= mtime, atime <= ctime, or atime is at
 *                least 24 h old (LINUX_RELATIME_MAX_AGE_NS);
 *   noatime      never; nodiratime: never for directories.
 * lazytime changes when timestamps reach the disk, not whether they change.
 * btrfs in effect ignores it: its ->update_time writes the inode into the
 * running transaction at once (see atime.c), so under the default
 * (struct fs_config .lazytime = FS_LAZYTIME_BTRFS) a lazytime mount is a
 * plain one. FS_LAZYTIME_VFS models lazytime as the VFS defines it for
 * filesystems without ->update_time (ext4, XFS): the new atime stays in
 * memory (I_DIRTY_TIME) until the inode's next other change, an fsync of it,
 * a sync, or LINUX_DIRTYTIME_EXPIRE_NS after it was first kept
 * (model/atime_policy.c).
 */
#ifndef COWSIM_MODEL_ATIME_H
#define COWSIM_MODEL_ATIME_H

#include <stdbool.h>
#include <stdint.h>

enum atime_mode {
	ATIME_RELATIME = 0,   /* the Linux default */
	ATIME_STRICT,
	ATIME_NOATIME,
};

struct atime_options {
	enum atime_mode mode;
	bool nodiratime;
	bool lazytime;
};

/* fs/fs-writeback.c dirtytime_expire_interval: 12 h (a sysctl,
 * vm.dirtytime_expire_seconds). */
#define LINUX_DIRTYTIME_EXPIRE_NS (12ll * 3600ll * 1000000000ll)
/* fs/inode.c relatime_need_update: an atime a day old is refreshed (as in
 * constants.h, which this public header cannot include). */
#define LINUX_RELATIME_MAX_AGE_NS (24ll * 3600ll * 1000000000ll)

struct atime_times {
	int64_t atime, mtime, ctime;    /* nanoseconds since the epoch */
};

/* fs/inode.c relatime_need_update() and atime_needs_update(), inline: every
 * access asks them (a call and its frame were a fifth of a read that
 * writes nothing, docs/performance.md round 15d). */
static inline bool atime_relatime_need_update(const struct atime_times *t, int64_t now)
{
	if (t->mtime >= t->atime)
		return true;
	if (t->ctime >= t->atime)
		return true;
	/* An atime may be as old as 1678: now - atime can pass INT64_MAX, and
	 * is then older than any limit. */
	int64_t age;
	if (__builtin_sub_overflow(now, t->atime, &age))
		return t->atime < 0;
	return age >= LINUX_RELATIME_MAX_AGE_NS;
}

static inline bool atime_needs_update(const struct atime_options *options, bool is_directory,
				      const struct atime_times *times, int64_t now)
{
	if (options->mode == ATIME_NOATIME)
		return false;
	if (options->nodiratime && is_directory)
		return false;
	if (options->mode == ATIME_RELATIME && !atime_relatime_need_update(times, now))
		return false;
	/* touch_atime: nothing to write when the time would not change. */
	return times->atime != now;
}

/* Parses "relatime", "strictatime,nodiratime", "noatime,lazytime", ...:
 * mount's own option words. Returns false and names the bad word in
 * *bad_word (a pointer into `text`, with its length) when one is unknown. */
bool atime_parse_options(const char *text, struct atime_options *options,
			 const char **bad_word, int *bad_length);
/* "relatime,nodiratime" style, for reports; a static buffer per call site is
 * the caller's, of at least 64 bytes. */
void atime_format_options(const struct atime_options *options, char *buffer, unsigned size);

#endif
