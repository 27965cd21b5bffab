/*
 * model/atime.c - Linux's atime options, see atime.h (the decision itself is
 * inline there).
 *
 * Why lazytime does not change btrfs's space question (Linux source, read
 * for this model at torvalds/linux fs/inode.c and fs/btrfs/inode.c, 6.x):
 *   touch_atime() -> inode_update_time(inode, S_ATIME), which calls the
 *   filesystem's i_op->update_time when it has one and generic_update_time()
 *   only otherwise. generic_update_time() is where lazytime lives: it marks
 *   the inode I_DIRTY_TIME instead of I_DIRTY_SYNC when the superblock has
 *   SB_LAZYTIME, so the timestamp stays in memory. btrfs has its own
 *   btrfs_update_time(): inode_update_timestamps() then, when a time changed,
 *   btrfs_dirty_inode(), which joins the running transaction
 *   (btrfs_join_transaction) and calls btrfs_update_inode(): the inode item
 *   goes into the transaction at once, whatever SB_LAZYTIME says, and the
 *   next commit (every commit interval, 30 s) writes it. So on btrfs a
 *   lazytime mount copies the same leaves as a plain one; real btrfs agrees
 *   within its run-to-run spread of 2.5% (results/calibration.md: 252.67 MiB
 *   after the grep under lazytime, inc10-lazy-16k; 255.44 under relatime).
 *   (Newer kernels pass the dirty flag back from inode_update_timestamps and
 *   btrfs still dirties the inode whenever any flag is set.)
 * What the VFS does with an I_DIRTY_TIME inode (fs/fs-writeback.c, fs/sync.c,
 * fs/inode.c; modelled as FS_LAZYTIME_VFS in model/atime_policy.c):
 *   - __mark_inode_dirty() with I_DIRTY_INODE (any other change of the
 *     inode) clears I_DIRTY_TIME: the timestamp is written with that change;
 *   - vfs_fsync_range() (not fdatasync) turns it into I_DIRTY_SYNC;
 *   - sync(2)/syncfs(2): sync_filesystem() -> sync_inodes_sb(), a for_sync,
 *     WB_SYNC_ALL pass: queue_io() moves every b_dirty_time inode to b_io
 *     (no age limit when work->for_sync) and __writeback_single_inode()
 *     writes I_DIRTY_TIME under WB_SYNC_ALL;
 *   - otherwise the flusher writes it once dirtied_time_when is
 *     dirtytime_expire_interval old (12 h; queue_io() with time_expire_jif =
 *     jiffies - dirtytime_expire_interval * HZ).
 *   A filesystem commit alone (btrfs's 30 s one) does not write it: the
 *   timestamp never joined a transaction.
 */
#include "atime.h"

#include <stdio.h>
#include <string.h>

static bool apply_word(const char *word, int length, struct atime_options *o)
{
#define IS(w) (length == (int)strlen(w) && !strncmp(word, w, (size_t)length))
	if (IS("relatime"))
		o->mode = ATIME_RELATIME;
	else if (IS("strictatime"))
		o->mode = ATIME_STRICT;
	else if (IS("noatime"))
		o->mode = ATIME_NOATIME;
	else if (IS("nodiratime"))
		o->nodiratime = true;
	else if (IS("diratime"))
		o->nodiratime = false;
	else if (IS("lazytime"))
		o->lazytime = true;
	else if (IS("nolazytime"))
		o->lazytime = false;
	else if (IS("atime"))
		o->mode = ATIME_RELATIME;
	else
		return false;
#undef IS
	return true;
}

bool atime_parse_options(const char *text, struct atime_options *options, const char **bad_word,
			 int *bad_length)
{
	const char *p = text;
	while (*p) {
		const char *end = strchr(p, ',');
		int length = end ? (int)(end - p) : (int)strlen(p);
		if (length && !apply_word(p, length, options)) {
			*bad_word = p;
			*bad_length = length;
			return false;
		}
		p += length;
		if (*p == ',')
			p++;
	}
	return true;
}

void atime_format_options(const struct atime_options *options, char *buffer, unsigned size)
{
	static const char *const modes[] = { "relatime", "strictatime", "noatime" };
	snprintf(buffer, size, "%s%s%s", modes[options->mode], options->nodiratime ? ",nodiratime" : "",
		 options->lazytime ? ",lazytime" : "");
}
