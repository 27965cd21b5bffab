/*
 * workloads/gen_from_dir.c - build an fstree from a real directory, in the
 * order GNU cp -a would copy it.
 *
 * How cp -a walks (coreutils copy.c, copy_dir): it reads a whole directory
 * with savedir(dir, SAVEDIR_SORT_FASTREAD), which on Linux (gnulib: d_ino in
 * struct dirent) sorts the names by inode number, then copies each entry in
 * that order, descending into a subdirectory before going on.  So the
 * default order here is FSTREE_ORDER_INODE; "readdir" (the raw order of the
 * source fs) and "name" are there to study the effect of the order.
 *
 * What is recorded per entry: lstat(2) of the source: size, permission
 * bits, uid, gid, atime, mtime (ctime is not: cp cannot set it, the copy
 * gets the copy time).  A regular file whose (st_dev, st_ino) was already
 * seen becomes a hard-link name of the first one, as cp -a preserves links.
 * Sockets, devices and fifos are counted and skipped.  Nothing is read from
 * file contents.
 *
 * Errors (unreadable directory, failed lstat) stop the walk with a GError;
 * the library never prints.
 */
#include "tracegen.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct dir_entry {
	char *name;
	ino_t ino;
	uint64_t readdir_index;
};

/* Everything the walk needs besides the current directory. */
struct from_dir {
	struct fstree *tree;
	enum fstree_order order;
	GHashTable *inodes;     /* "dev:ino" -> struct fstree_node * (first names of multi-link files) */
	GString *source_path;   /* the directory being read, for messages */
};

static void dir_entry_clear(gpointer data)
{
	g_free(((struct dir_entry *)data)->name);
}

static gint compare_inode(gconstpointer a, gconstpointer b)
{
	const struct dir_entry *x = a, *y = b;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->readdir_index < y->readdir_index ? -1 : 1;
}

static gint compare_name(gconstpointer a, gconstpointer b)
{
	return strcmp(((const struct dir_entry *)a)->name, ((const struct dir_entry *)b)->name);
}

static bool io_fail(struct from_dir *walk, GError **error, const char *what, const char *name)
{
	int saved = errno;
	g_set_error(error, TRACEGEN_ERROR, TRACEGEN_ERROR_SOURCE, "%s%s%s: %s: %s", walk->source_path->str,
		    name ? "/" : "", name ? name : "", what, g_strerror(saved));
	return false;
}

/* All names of the open directory FD, in the walk's order. */
static GArray *read_entries(struct from_dir *walk, int fd, GError **error)
{
	int dup_fd = dup(fd);
	DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!dir) {
		if (dup_fd >= 0)
			close(dup_fd);
		io_fail(walk, error, "cannot read directory", NULL);
		return NULL;
	}
	GArray *entries = g_array_new(FALSE, FALSE, sizeof(struct dir_entry));
	g_array_set_clear_func(entries, dir_entry_clear);
	struct dirent *d;
	errno = 0;
	while ((d = readdir(dir)) != NULL) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		struct dir_entry e = { g_strdup(d->d_name), d->d_ino, entries->len };
		g_array_append_val(entries, e);
	}
	bool failed = errno != 0;
	closedir(dir);
	if (failed) {
		g_array_unref(entries);
		io_fail(walk, error, "cannot read directory", NULL);
		return NULL;
	}
	if (walk->order == FSTREE_ORDER_INODE)
		g_array_sort(entries, compare_inode);
	else if (walk->order == FSTREE_ORDER_NAME)
		g_array_sort(entries, compare_name);
	return entries;
}

static void copy_attributes(struct fstree_node *node, const struct stat *st)
{
	node->mode = st->st_mode & 07777;
	node->uid = st->st_uid;
	node->gid = st->st_gid;
	node->atime_ns = (int64_t)st->st_atim.tv_sec * G_GINT64_CONSTANT(1000000000) + st->st_atim.tv_nsec;
	node->mtime_ns = (int64_t)st->st_mtim.tv_sec * G_GINT64_CONSTANT(1000000000) + st->st_mtim.tv_nsec;
}

static bool read_link(struct from_dir *walk, int dir_fd, const char *name, const struct stat *st,
		      struct fstree_node *node, GError **error)
{
	size_t size = st->st_size > 0 ? (size_t)st->st_size + 1 : 4096;
	g_autofree char *target = g_malloc(size);
	ssize_t got = readlinkat(dir_fd, name, target, size);
	if (got < 0)
		return io_fail(walk, error, "cannot read symlink", name);
	if ((size_t)got >= size) {
		errno = ENAMETOOLONG;
		return io_fail(walk, error, "symlink changed while read", name);
	}
	target[got] = '\0';
	node->target = g_steal_pointer(&target);
	return true;
}

/* A regular file: a first name, or a later name of an inode already seen. */
static void add_file(struct from_dir *walk, struct fstree_node *dir, const char *name, const struct stat *st)
{
	struct fstree_node *node = fstree_add(walk->tree, dir, FSTREE_FILE, name);
	g_autofree char *key = st->st_nlink > 1 ? g_strdup_printf("%ju:%ju", (uintmax_t)st->st_dev,
								  (uintmax_t)st->st_ino) : NULL;
	struct fstree_node *first = key ? g_hash_table_lookup(walk->inodes, key) : NULL;

	if (first) {
		fstree_make_hardlink(walk->tree, node, first);
		return;
	}
	copy_attributes(node, st);
	node->size = (uint64_t)st->st_size;
	fstree_account(walk->tree, node);
	if (key)
		g_hash_table_insert(walk->inodes, g_steal_pointer(&key), node);
}

static bool walk_dir(struct from_dir *walk, int fd, struct fstree_node *dir, GError **error);

static bool add_entry(struct from_dir *walk, int dir_fd, struct fstree_node *dir, const char *name,
		      GError **error)
{
	struct stat st;
	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return io_fail(walk, error, "cannot lstat", name);

	if (S_ISREG(st.st_mode)) {
		add_file(walk, dir, name, &st);
		return true;
	}
	if (S_ISLNK(st.st_mode)) {
		struct fstree_node *node = fstree_add(walk->tree, dir, FSTREE_SYMLINK, name);
		copy_attributes(node, &st);
		fstree_account(walk->tree, node);
		return read_link(walk, dir_fd, name, &st, node, error);
	}
	if (!S_ISDIR(st.st_mode)) {
		walk->tree->specials_skipped++;
		return true;
	}
	int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return io_fail(walk, error, "cannot open directory", name);
	struct fstree_node *node = fstree_add(walk->tree, dir, FSTREE_DIR, name);
	copy_attributes(node, &st);
	fstree_account(walk->tree, node);
	size_t saved_len = walk->source_path->len;
	g_string_append_printf(walk->source_path, "/%s", name);
	bool ok = walk_dir(walk, fd, node, error);
	g_string_truncate(walk->source_path, saved_len);
	close(fd);
	return ok;
}

static bool walk_dir(struct from_dir *walk, int fd, struct fstree_node *dir, GError **error)
{
	g_autoptr(GArray) entries = read_entries(walk, fd, error);
	if (!entries)
		return false;
	for (guint i = 0; i < entries->len; i++)
		if (!add_entry(walk, fd, dir, g_array_index(entries, struct dir_entry, i).name, error))
			return false;
	return true;
}

struct fstree *fstree_from_dir(const char *path, enum fstree_order order, GError **error)
{
	g_autofree char *origin = g_strdup_printf("from-dir %s", path);
	g_autoptr(fstree) tree = fstree_new(origin);
	g_autoptr(GHashTable) inodes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GString) source_path = g_string_new(path);
	struct from_dir walk = { tree, order, inodes, source_path };
	struct stat st;

	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		io_fail(&walk, error, "cannot open directory", NULL);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	copy_attributes(tree->root, &st);
	fstree_account(tree, tree->root);
	bool ok = walk_dir(&walk, fd, tree->root, error);
	close(fd);
	return ok ? g_steal_pointer(&tree) : NULL;
}
