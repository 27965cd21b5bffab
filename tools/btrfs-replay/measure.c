/*
 * tools/btrfs-replay/measure.c - what a mark reads from the kernel.
 *
 * How it works
 *   BTRFS_IOC_SPACE_INFO returns one entry per (type, profile) pair with
 *   logical total and used bytes - the numbers `btrfs fi df -b` prints:
 *
 *     flags                         total_bytes  used_bytes
 *     DATA|single                   1082130432   120733696   -> data_*
 *     METADATA|DUP                   268435456    26132480   -> metadata_*
 *     SYSTEM|DUP                       8388608       16384   (not a column)
 *     GLOBAL_RSV                       3670016           0   -> global_reserve
 *
 *   The entries of a type are summed over profiles; metadata_raw weights
 *   each entry's used bytes by its profile's copies.  A mixed DATA|METADATA
 *   group counts as both.  The loop device's own counters in
 *   /sys/block/loopN/stat give the bytes btrfs wrote (field 7, 512-byte
 *   sectors), whatever the block size of the device.
 *
 * Invariants
 *   BRS1  Nothing here changes the filesystem: only ioctls and files that read.
 */
#include <errno.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "replay.h"

/* Copies of each block a profile keeps on the device. */
static uint64_t profile_copies(uint64_t flags)
{
	if (flags & (BTRFS_BLOCK_GROUP_DUP | BTRFS_BLOCK_GROUP_RAID1 | BTRFS_BLOCK_GROUP_RAID10))
		return 2;
	if (flags & BTRFS_BLOCK_GROUP_RAID1C3)
		return 3;
	if (flags & BTRFS_BLOCK_GROUP_RAID1C4)
		return 4;
	return 1;
}

static bool space_ioctl(int fd, struct btrfs_ioctl_space_args *args, GError **error)
{
	if (ioctl(fd, BTRFS_IOC_SPACE_INFO, args) == 0)
		return true;
	int saved = errno;
	g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_OP, "BTRFS_IOC_SPACE_INFO: %s",
		    g_strerror(saved));
	return false;
}

bool replay_space_info(int fd, struct replay_space *out, GError **error)
{
	struct btrfs_ioctl_space_args probe = { 0 };

	memset(out, 0, sizeof(*out));
	if (!space_ioctl(fd, &probe, error)) /* space_slots 0: only counts */
		return false;
	uint64_t slots = probe.total_spaces + 1;
	g_autofree struct btrfs_ioctl_space_args *args =
		g_malloc0(sizeof(*args) + slots * sizeof(struct btrfs_ioctl_space_info));
	args->space_slots = slots;
	if (!space_ioctl(fd, args, error))
		return false;
	for (uint64_t i = 0; i < args->total_spaces && i < args->space_slots; i++) {
		const struct btrfs_ioctl_space_info *s = &args->spaces[i];
		if (s->flags & BTRFS_SPACE_INFO_GLOBAL_RSV) {
			out->global_reserve += s->total_bytes;
			continue;
		}
		if (s->flags & BTRFS_BLOCK_GROUP_METADATA) {
			out->metadata_used += s->used_bytes;
			out->metadata_total += s->total_bytes;
			out->metadata_raw += s->used_bytes * profile_copies(s->flags);
		}
		if (s->flags & BTRFS_BLOCK_GROUP_DATA) {
			out->data_used += s->used_bytes;
			out->data_total += s->total_bytes;
		}
	}
	return true;
}

/* Undoes the octal escapes of /proc/self/mountinfo ("\040" is a space). */
static char *mountinfo_unescape(const char *s)
{
	GString *out = g_string_new(NULL);
	for (; *s; s++) {
		if (s[0] == '\\' && g_ascii_isdigit(s[1]) && g_ascii_isdigit(s[2]) &&
		    g_ascii_isdigit(s[3])) {
			g_string_append_c(out, (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0')));
			s += 3;
		} else {
			g_string_append_c(out, *s);
		}
	}
	return g_string_free(out, FALSE);
}

char *replay_mount_source(const char *mnt)
{
	g_autofree char *text = NULL;
	if (!g_file_get_contents("/proc/self/mountinfo", &text, NULL, NULL))
		return NULL;
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	char *found = NULL;
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
	for (char **l = lines; *l; l++) {
		g_auto(GStrv) f = g_strsplit(*l, " ", -1);
		if (g_strv_length(f) < 10)
			continue;
		g_autofree char *point = mountinfo_unescape(f[4]);
		if (strcmp(point, mnt) != 0)
			continue;
		for (guint i = 6; f[i] && f[i + 1] && f[i + 2]; i++)
			if (strcmp(f[i], "-") == 0) {
				g_free(found); /* the last mount over mnt wins */
				found = mountinfo_unescape(f[i + 2]);
				break;
			}
	}
	return found;
}

bool replay_device_bytes_written(const char *dev, uint64_t *out)
{
	g_autofree char *name = g_path_get_basename(dev);
	g_autofree char *path = g_strdup_printf("/sys/block/%s/stat", name);
	g_autofree char *text = NULL;
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return false;
	/* reads merges sectors ticks writes merges SECTORS ticks ... */
	unsigned long long f[7];
	if (sscanf(text, "%llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3], &f[4],
		   &f[5], &f[6]) != 7)
		return false;
	*out = (uint64_t)f[6] * 512;
	return true;
}
