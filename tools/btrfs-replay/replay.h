/*
 * tools/btrfs-replay/replay.h - replay a cowsim trace on a real btrfs.
 *
 * How it works
 *   main.c owns the lifecycle: options, the temporary folder, the image, the
 *   mount, the signals and the cleanup.  ops.c performs one trace op with
 *   real system calls under the mount point.  measure.c reads what a mark
 *   records: BTRFS_IOC_SPACE_INFO (what `btrfs fi df -b` prints) and the
 *   loop device's write sectors.
 *
 *     /tmp/btrfs-replay-XXXXXX/          mkdtemp
 *       image         sparse file, mkfs.btrfs -q -f -n NODESIZE
 *       mnt/          mount -o loop,OPTS image mnt   ("/" of the trace)
 *
 *   Every path of the trace is resolved below mnt with openat2(2) and
 *   RESOLVE_IN_ROOT, so a symlink inside the image can never lead a replay
 *   running as root out of it (an absolute link target means the image's "/").
 *
 * Invariants
 *   BR1  Nothing outside the temporary folder is created, changed or removed.
 *   BR2  Whatever happens (error, SIGINT, SIGTERM) main() unmounts, then
 *       removes the image (unless --keep-image) and the folder before exiting.
 *   BR3  The CSV rows have the columns of `cowsim run` (results/columns.h);
 *       cells btrfs cannot show (tree_*, blocks_cowed, atime_*) stay empty.
 *   BR4  The simulated clock (clock ops) only feeds time_s: the kernel clock
 *       cannot be moved, so atimes written by reads are the real time.
 */
#ifndef COWSIM_TOOLS_BTRFS_REPLAY_H
#define COWSIM_TOOLS_BTRFS_REPLAY_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "results.h"
#include "trace.h"

/* Set by the SIGINT/SIGTERM handler (the signal number); polled by the ops. */
extern volatile sig_atomic_t replay_stop_signal;

/* Counters and clock of one replay (the CSV's cumulative counters, CO3). */
struct replay_counters {
	uint64_t enospc_events;  /* ops that failed with ENOSPC */
	uint64_t failed_reads;   /* read ops that failed */
	int64_t clock_ns;        /* the simulated clock, nanoseconds (BR4) */
	bool clock_seen;         /* the trace's first clock op has run */
	int64_t clock_origin_ns; /* where elapsed_s counts from: that op's time, or the clock before it */
};

struct replay {
	const char *trace_name;  /* for messages: "NAME:LINE: op path: reason" */
	const char *mnt;         /* the mount point, absolute */
	int mnt_fd;              /* O_DIRECTORY fd of the mount point */
	bool keep_going;         /* an op's failure other than ENOSPC is only a warning */
	bool deleted_subvols;    /* a subvolume was deleted since the last mark */
	guint8 *buf;             /* REPLAY_CHUNK bytes for data */
	struct replay_counters n;
};

/* Data is written and read in chunks of this many bytes (1 MiB). */
#define REPLAY_CHUNK (1024 * 1024)

/* Errors of the replay itself; the domain of the GErrors below. */
#define REPLAY_ERROR (replay_error_quark())
GQuark replay_error_quark(void);
enum replay_error_code {
	REPLAY_ERROR_OP,          /* an op's system call failed */
	REPLAY_ERROR_INTERRUPTED, /* replay_stop_signal was set */
	REPLAY_ERROR_COMMAND,     /* a helper program (btrfs, mount) failed */
};

/* ---- ops.c ------------------------------------------------------------- */

/* Performs `op` under r->mnt.  Returns FALSE with an error naming the trace
 * line, the op and the path when it failed and the failure ends the replay.
 * ENOSPC is counted and does not end it; a failed read is counted too. */
bool replay_op(struct replay *r, const struct trace_op *op, GError **error);

/* sync(2), then BTRFS_IOC_SYNC on the mount (what `btrfs filesystem sync`
 * does); with deleted subvolumes also waits for the cleaner
 * (`btrfs subvolume sync`). */
bool replay_sync(struct replay *r, bool wait_for_cleaner, GError **error);

/* Runs argv (searched in PATH) with stdout to /dev/null; FALSE with an error
 * quoting the program's stderr if it could not run or exited non-zero. */
bool replay_command(const char *const *argv, GError **error);

/* ---- measure.c --------------------------------------------------------- */

struct replay_space {
	uint64_t metadata_used, metadata_raw, metadata_total;
	uint64_t data_used, data_total;
	uint64_t global_reserve;
};

/* BTRFS_IOC_SPACE_INFO on `fd` (any fd in the filesystem), summed per type
 * over the profiles; raw counts copies (DUP, RAID1: 2).  FALSE with an error
 * if the ioctl fails. */
bool replay_space_info(int fd, struct replay_space *out, GError **error);

/* The block device mounted at `mnt` ("/dev/loop3"), from /proc/self/mountinfo;
 * NULL if not found. */
char *replay_mount_source(const char *mnt);

/* Bytes written to the block device `dev` since boot (/sys/block/NAME/stat
 * write sectors x 512); FALSE if it cannot be read. */
bool replay_device_bytes_written(const char *dev, uint64_t *out);

#endif
