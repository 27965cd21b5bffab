/*
 * tools/btrfs-replay/ops.c - one trace op as real system calls.
 *
 * How it works
 *   Each op resolves the parent folder of its path below the mount with
 *   openat2(RESOLVE_IN_ROOT) (BR1 of replay.h) and then acts on the last
 *   component with the *at() call a program would use:
 *
 *     create  openat(O_CREAT|O_TRUNC) + write SIZE bytes in 1 MiB chunks,
 *             fchown, fchmod, futimens (the order of cp -a: data, owner, mode,
 *             times; ctime cannot be set and is ignored)
 *     mkdir   mkdirat + fchownat (+ fchmodat for 07000 bits) + utimensat
 *     write   openat(O_WRONLY) + pwrite LENGTH bytes at OFFSET
 *     truncate openat(O_WRONLY) + ftruncate
 *     read    openat(O_RDONLY) + read to the end (or pread the range), like
 *             grep; on a symlink readlinkat
 *     stat    fstatat(AT_SYMLINK_NOFOLLOW), readdir  opendir + readdir all
 *     rename/link/symlink/unlink/rmdir  renameat/linkat/symlinkat/unlinkat
 *     snapshot  BTRFS_IOC_SNAP_CREATE_V2 (what `btrfs subvolume snapshot [-r]`
 *             calls), delete-snapshot  BTRFS_IOC_SNAP_DESTROY
 *     settime utimensat(AT_SYMLINK_NOFOLLOW), fsync  open + fsync
 *     sync    sync(2) + BTRFS_IOC_SYNC (`btrfs filesystem sync`)
 *     clock   only the simulated clock moves (BR4)
 *   mark and remount need the CSV and the mount options: main.c does them.
 *
 *   File data is pseudo-random and deterministic: byte i of a chunk written
 *   at offset o of path p depends only on (p, o, i), and is never 0 (so no
 *   extent is a hole and compression gains nothing).
 *
 * Invariants
 *   BRO1  Every fd an op opens is closed before it returns, on every path.
 *   BRO2  ENOSPC is counted in enospc_events and never ends the replay; a read
 *       that fails is counted in failed_reads.
 *   BRO3  Nothing is resolved outside the mount (RESOLVE_IN_ROOT).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "replay.h"

G_DEFINE_QUARK(btrfs-replay-error-quark, replay_error)

/* ---- paths ------------------------------------------------------------- */

/* Closes fd keeping errno (BRO1). */
static void close_keep_errno(int fd)
{
	int saved = errno;
	if (fd >= 0)
		close(fd);
	errno = saved;
}


/* Where openat2(2) is missing (kernels before 5.6, valgrind): walk the path
 * one component at a time without following any symlink, so a link in the
 * middle fails (ELOOP/ENOTDIR) instead of leading out of the mount (BRO3). */
static int open_beneath_nofollow(int root, const char *path, int flags)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);
	int fd = openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (char **p = parts; fd >= 0 && *p; p++) {
		if (**p == '\0')
			continue;
		bool last = true;
		for (char **q = p + 1; *q; q++)
			if (**q)
				last = false;
		int next = openat(fd, *p, (last ? flags : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
		close_keep_errno(fd);
		fd = next;
		if (last)
			return fd;
	}
	if (fd < 0)
		return -1;
	/* the path was "/": reopen the root with the flags asked for */
	int again = openat(fd, ".", flags | O_CLOEXEC);
	close_keep_errno(fd);
	return again;
}

static int openat2_in_root(int root, const char *path, int flags)
{
	static bool no_openat2;
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	if (!no_openat2) {
		int fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
		if (fd >= 0 || errno != ENOSYS)
			return fd;
		no_openat2 = true;
	}
	return open_beneath_nofollow(root, path, flags);
}

/* Opens the parent folder of the absolute trace path `path` (BRO3) with
 * `flags` (O_PATH, or O_RDONLY for ioctls) and points *leaf at the last
 * component ("." for "/").  Returns the fd, or -1 with errno set. */
static int open_parent(struct replay *r, const char *path, const char **leaf, int flags)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		errno = EINVAL;
		return -1;
	}
	if (slash[1] == '\0') { /* "/" itself */
		*leaf = ".";
		return openat2_in_root(r->mnt_fd, "/", flags | O_DIRECTORY);
	}
	*leaf = slash + 1;
	g_autofree char *parent = slash == path ? g_strdup("/") : g_strndup(path, (gsize)(slash - path));
	return openat2_in_root(r->mnt_fd, parent, flags | O_DIRECTORY);
}

/* ---- data -------------------------------------------------------------- */

static uint64_t fnv1a(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
	return h;
}

/* Fills buf[0..len) with the bytes of the chunk at `offset` of `path`. */
static void fill_chunk(guint8 *buf, gsize len, const char *path, uint64_t offset)
{
	uint64_t x = fnv1a(path) ^ (offset * UINT64_C(0x9e3779b97f4a7c15));
	for (gsize i = 0; i < len; i += 8) {
		/* splitmix64 */
		uint64_t z = (x += UINT64_C(0x9e3779b97f4a7c15));
		z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
		z ^= z >> 31;
		gsize n = MIN(8, len - i);
		memcpy(buf + i, &z, n);
	}
	for (gsize i = 0; i < len; i++)
		if (buf[i] == 0)
			buf[i] = 0xa5;
}

/* Writes `length` bytes at `offset` of fd in REPLAY_CHUNK pieces.
 * Returns 0 or an errno (EINTR when a stop signal arrived). */
static int write_data(struct replay *r, int fd, const char *path, uint64_t offset,
		      uint64_t length)
{
	uint64_t done = 0;
	while (done < length) {
		if (replay_stop_signal)
			return EINTR;
		gsize n = (gsize)MIN((uint64_t)REPLAY_CHUNK, length - done);
		fill_chunk(r->buf, n, path, offset + done);
		gsize put = 0;
		while (put < n) {
			ssize_t w = pwrite(fd, r->buf + put, n - put, (off_t)(offset + done + put));
			if (w < 0 && errno == EINTR && !replay_stop_signal)
				continue;
			if (w < 0)
				return errno;
			put += (gsize)w;
		}
		done += n;
	}
	return 0;
}

/* ---- times ------------------------------------------------------------- */

static struct timespec ns_to_timespec(int64_t ns)
{
	int64_t sec = ns / TRACE_NS_PER_SEC, rem = ns % TRACE_NS_PER_SEC;
	if (rem < 0) {
		rem += TRACE_NS_PER_SEC;
		sec--;
	}
	return (struct timespec){ .tv_sec = (time_t)sec, .tv_nsec = (long)rem };
}

/* The atime/mtime pair for utimensat from op->times_given; FALSE if none. */
static bool op_times(const struct trace_op *op, struct timespec ts[2])
{
	ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
	ts[0].tv_sec = ts[1].tv_sec = 0;
	if (op->times_given & TRACE_TIME_ATIME)
		ts[0] = ns_to_timespec(op->atime_ns);
	if (op->times_given & TRACE_TIME_MTIME)
		ts[1] = ns_to_timespec(op->mtime_ns);
	return (op->times_given & (TRACE_TIME_ATIME | TRACE_TIME_MTIME)) != 0;
}

/* ---- the ops: each returns 0 or an errno ------------------------------- */

static int op_mkdir(struct replay *r, const struct trace_op *op)
{
	const char *leaf;
	struct timespec ts[2];
	int dfd = open_parent(r, op->path, &leaf, O_PATH);
	if (dfd < 0)
		return errno;
	int rc = mkdirat(dfd, leaf, op->mode);
	if (rc == 0)
		rc = fchownat(dfd, leaf, op->uid, op->gid, AT_SYMLINK_NOFOLLOW);
	if (rc == 0 && (op->mode & 07000))
		rc = fchmodat(dfd, leaf, op->mode, 0);
	if (rc == 0 && op_times(op, ts))
		rc = utimensat(dfd, leaf, ts, AT_SYMLINK_NOFOLLOW);
	close_keep_errno(dfd);
	return rc == 0 ? 0 : errno;
}

static int op_create(struct replay *r, const struct trace_op *op)
{
	const char *leaf;
	struct timespec ts[2];
	int dfd = open_parent(r, op->path, &leaf, O_PATH);
	if (dfd < 0)
		return errno;
	int fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, op->mode);
	close_keep_errno(dfd);
	if (fd < 0)
		return errno;
	int err = write_data(r, fd, op->path, 0, op->size);
	if (!err && fchown(fd, op->uid, op->gid) < 0)
		err = errno;
	if (!err && fchmod(fd, op->mode) < 0)
		err = errno;
	if (!err && op_times(op, ts) && futimens(fd, ts) < 0)
		err = errno;
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

/* Opens the trace path itself with `flags` (O_NOFOLLOW added). */
static int open_path(struct replay *r, const char *path, int flags)
{
	const char *leaf;
	int dfd = open_parent(r, path, &leaf, O_PATH);
	if (dfd < 0)
		return -1;
	int fd = openat(dfd, leaf, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	close_keep_errno(dfd);
	return fd;
}

static int op_write(struct replay *r, const struct trace_op *op)
{
	int fd = open_path(r, op->path, O_WRONLY);
	if (fd < 0)
		return errno;
	int err = write_data(r, fd, op->path, op->offset, op->length);
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

static int op_truncate(struct replay *r, const struct trace_op *op)
{
	int fd = open_path(r, op->path, O_WRONLY);
	if (fd < 0)
		return errno;
	int err = ftruncate(fd, (off_t)op->size) < 0 ? errno : 0;
	close_keep_errno(fd);
	return err;
}

static int read_symlink(struct replay *r, const char *path)
{
	const char *leaf;
	int dfd = open_parent(r, path, &leaf, O_PATH);
	if (dfd < 0)
		return errno;
	ssize_t n = readlinkat(dfd, leaf, (char *)r->buf, REPLAY_CHUNK);
	close_keep_errno(dfd);
	return n < 0 ? errno : 0;
}

static int op_read(struct replay *r, const struct trace_op *op)
{
	int fd = open_path(r, op->path, O_RDONLY);
	if (fd < 0)
		return errno == ELOOP ? read_symlink(r, op->path) : errno;
	uint64_t pos = op->has_range ? op->offset : 0;
	uint64_t left = op->has_range ? op->length : UINT64_MAX;
	int err = 0;
	while (left > 0) {
		if (replay_stop_signal) {
			err = EINTR;
			break;
		}
		gsize want = (gsize)MIN((uint64_t)REPLAY_CHUNK, left);
		ssize_t n = pread(fd, r->buf, want, (off_t)pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			break;
		}
		if (n == 0)
			break;
		pos += (uint64_t)n;
		left -= (uint64_t)n;
	}
	close_keep_errno(fd);
	return err;
}

static int op_stat(struct replay *r, const struct trace_op *op)
{
	const char *leaf;
	struct stat st;
	int dfd = open_parent(r, op->path, &leaf, O_PATH);
	if (dfd < 0)
		return errno;
	int rc = fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW);
	close_keep_errno(dfd);
	return rc < 0 ? errno : 0;
}

static int op_readdir(struct replay *r, const struct trace_op *op)
{
	int fd = open_path(r, op->path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		close_keep_errno(fd);
		return errno;
	}
	errno = 0;
	while (readdir(d) != NULL)
		;
	int err = errno;
	closedir(d);
	return err;
}

/* rename and link: two parents. */
static int op_two_paths(struct replay *r, const struct trace_op *op)
{
	const char *l1, *l2;
	int d1 = open_parent(r, op->path, &l1, O_PATH);
	if (d1 < 0)
		return errno;
	int d2 = open_parent(r, op->path2, &l2, O_PATH);
	if (d2 < 0) {
		close_keep_errno(d1);
		return errno;
	}
	int rc = op->kind == TRACE_RENAME ? renameat(d1, l1, d2, l2) : linkat(d1, l1, d2, l2, 0);
	close_keep_errno(d1);
	close_keep_errno(d2);
	return rc < 0 ? errno : 0;
}

/* symlink, unlink, rmdir, settime: one *at call on the leaf. */
static int op_leaf(struct replay *r, const struct trace_op *op)
{
	const char *leaf;
	struct timespec ts[2];
	int dfd = open_parent(r, op->path, &leaf, O_PATH);
	if (dfd < 0)
		return errno;
	int rc = 0;
	switch (op->kind) {
	case TRACE_SYMLINK: rc = symlinkat(op->path2, dfd, leaf); break;
	case TRACE_UNLINK: rc = unlinkat(dfd, leaf, 0); break;
	case TRACE_RMDIR: rc = unlinkat(dfd, leaf, AT_REMOVEDIR); break;
	default:
		if (op_times(op, ts))
			rc = utimensat(dfd, leaf, ts, AT_SYMLINK_NOFOLLOW);
		break;
	}
	close_keep_errno(dfd);
	return rc < 0 ? errno : 0;
}

static int op_snapshot(struct replay *r, const struct trace_op *op)
{
	const char *leaf;
	struct btrfs_ioctl_vol_args_v2 args;

	int src = openat2_in_root(r->mnt_fd, op->path, O_RDONLY | O_DIRECTORY);
	if (src < 0)
		return errno;
	int dfd = open_parent(r, op->path2, &leaf, O_RDONLY);
	if (dfd < 0) {
		close_keep_errno(src);
		return errno;
	}
	if (strlen(leaf) > BTRFS_SUBVOL_NAME_MAX) {
		close(src);
		close(dfd);
		return ENAMETOOLONG;
	}
	memset(&args, 0, sizeof(args));
	args.fd = src;
	args.flags = op->readonly ? BTRFS_SUBVOL_RDONLY : 0;
	g_strlcpy(args.name, leaf, sizeof(args.name));
	int rc = ioctl(dfd, BTRFS_IOC_SNAP_CREATE_V2, &args);
	close_keep_errno(src);
	close_keep_errno(dfd);
	return rc < 0 ? errno : 0;
}

static int op_delete_snapshot(struct replay *r, const struct trace_op *op)
{
	const char *leaf;
	struct btrfs_ioctl_vol_args args;

	int dfd = open_parent(r, op->path, &leaf, O_RDONLY);
	if (dfd < 0)
		return errno;
	memset(&args, 0, sizeof(args));
	g_strlcpy(args.name, leaf, sizeof(args.name));
	int rc = ioctl(dfd, BTRFS_IOC_SNAP_DESTROY, &args);
	close_keep_errno(dfd);
	if (rc == 0)
		r->deleted_subvols = true;
	return rc < 0 ? errno : 0;
}

static int op_fsync(struct replay *r, const struct trace_op *op)
{
	int fd = open_path(r, op->path, O_RDONLY);
	if (fd < 0)
		return errno;
	int err = fsync(fd) < 0 ? errno : 0;
	close_keep_errno(fd);
	return err;
}

bool replay_sync(struct replay *r, bool wait_for_cleaner, GError **error)
{
	sync();
	if (ioctl(r->mnt_fd, BTRFS_IOC_SYNC) < 0) {
		int saved = errno;
		g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_OP, "BTRFS_IOC_SYNC on %s: %s", r->mnt,
			    g_strerror(saved));
		return false;
	}
	if (wait_for_cleaner && r->deleted_subvols) {
		const char *argv[] = { "btrfs", "subvolume", "sync", r->mnt, NULL };
		if (!replay_command(argv, error))
			return false;
		r->deleted_subvols = false;
		sync();
		if (ioctl(r->mnt_fd, BTRFS_IOC_SYNC) < 0) {
			int saved = errno;
			g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_OP, "BTRFS_IOC_SYNC on %s: %s",
				    r->mnt, g_strerror(saved));
			return false;
		}
	}
	return true;
}

/* Runs the op; 0 or an errno. */
static int op_dispatch(struct replay *r, const struct trace_op *op)
{
	switch (op->kind) {
	case TRACE_MKDIR: return op_mkdir(r, op);
	case TRACE_CREATE: return op_create(r, op);
	case TRACE_WRITE: return op_write(r, op);
	case TRACE_TRUNCATE: return op_truncate(r, op);
	case TRACE_READ: return op_read(r, op);
	case TRACE_STAT: return op_stat(r, op);
	case TRACE_READDIR: return op_readdir(r, op);
	case TRACE_RENAME:
	case TRACE_LINK: return op_two_paths(r, op);
	case TRACE_SYMLINK:
	case TRACE_UNLINK:
	case TRACE_RMDIR:
	case TRACE_SETTIME: return op_leaf(r, op);
	case TRACE_SNAPSHOT: return op_snapshot(r, op);
	case TRACE_DELETE_SNAPSHOT: return op_delete_snapshot(r, op);
	case TRACE_FSYNC: return op_fsync(r, op);
	case TRACE_CLOCK:
		if (!r->n.clock_seen) { /* elapsed_s, as cowsim run counts it */
			r->n.clock_seen = true;
			r->n.clock_origin_ns = op->clock_relative ? r->n.clock_ns : op->clock_ns;
		}
		r->n.clock_ns = op->clock_relative ? r->n.clock_ns + op->clock_ns : op->clock_ns;
		return 0;
	case TRACE_SYNC: /* replay_op() does it, for its error message */
	case TRACE_MARK:
	case TRACE_REMOUNT:
		return ENOTSUP; /* main.c handles them */
	}
	return ENOTSUP;
}

bool replay_op(struct replay *r, const struct trace_op *op, GError **error)
{
	if (op->kind == TRACE_SYNC)
		return replay_sync(r, false, error);
	int err = op_dispatch(r, op);
	if (err == 0)
		return true;
	if (op->kind == TRACE_READ)
		r->n.failed_reads++;
	if (err == EINTR && replay_stop_signal) {
		g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_INTERRUPTED, "interrupted by signal %d",
			    (int)replay_stop_signal);
		return false;
	}
	g_autofree char *what = g_strdup_printf("%s:%" G_GUINT64_FORMAT ": %s %s%s%s: %s",
						r->trace_name, op->line, trace_op_kind_name(op->kind),
						op->path ? op->path : "", op->path2 ? " " : "",
						op->path2 ? op->path2 : "", g_strerror(err));
	if (err == ENOSPC) { /* BRO2 */
		r->n.enospc_events++;
		if (r->n.enospc_events <= 10)
			g_printerr("btrfs-replay: %s (counted)\n", what);
		return true;
	}
	if (r->keep_going) {
		g_printerr("btrfs-replay: warning: %s\n", what);
		return true;
	}
	g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_OP, "%s", what);
	return false;
}

bool replay_command(const char *const *argv, GError **error)
{
	g_autofree char *err_text = NULL;
	int status = 0;
	g_autoptr(GError) spawn_error = NULL;

	if (!g_spawn_sync(NULL, (char **)argv, NULL,
			  G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
			  &err_text, &status, &spawn_error)) {
		g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_COMMAND, "cannot run %s: %s", argv[0],
			    spawn_error->message);
		return false;
	}
	if (!g_spawn_check_wait_status(status, NULL)) {
		g_autofree char *cmd = g_strjoinv(" ", (char **)argv);
		g_strstrip(err_text);
		g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_COMMAND, "'%s' failed%s%s", cmd,
			    *err_text ? ": " : "", err_text);
		return false;
	}
	return true;
}
