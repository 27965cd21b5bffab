/*
 * workloads/gen_copy.c - the ops of `cp -a SOURCE PREFIX` for an fstree.
 *
 * What GNU cp -a does per entry, in copy order (fstree.h), and what we emit:
 *
 *   directory  mkdir, copy the entries, then set mode/owner and utimensat the
 *              times last (so creating the entries does not disturb them):
 *                  mkdir P mode= uid= gid=  ...entries...  settime P atime= mtime=
 *   file       open(O_CREAT), write the data, fchown, fchmod, utimensat:
 *                  create P size= mode= uid= gid= atime= mtime=
 *   hard link  a later name of an inode already copied: link(2):
 *                  link FIRST P
 *   symlink    symlink(2), lchown, utimensat(AT_SYMLINK_NOFOLLOW):
 *                  symlink TARGET P  settime P atime= mtime=
 *              (the trace's symlink op has no owner: the link's uid/gid is lost)
 *
 * ctime is never given: the simulator stamps the copy time, as the kernel
 * does for cp.  Parents of PREFIX that are not the mount root are created
 * first with plain mkdir (cp needs the destination's parent to exist).
 */
#include "tracegen.h"

#include <string.h>

struct copy {
	struct trace_writer *w;
	struct tracegen_clock *clock;
	const char *prefix;
	GString *path;
	GString *path2;
	GError **error;
};

static void set_owner(struct trace_op *op, const struct fstree_node *node)
{
	op->mode = node->mode;
	op->uid = node->uid;
	op->gid = node->gid;
}

static void set_times(struct trace_op *op, const struct fstree_node *node)
{
	op->times_given = TRACE_TIME_ATIME | TRACE_TIME_MTIME;
	op->atime_ns = node->atime_ns;
	op->mtime_ns = node->mtime_ns;
}

static bool spend(struct copy *c, uint64_t bytes)
{
	int64_t ns = TRACEGEN_COST_COPY_INODE_NS + (int64_t)(bytes * TRACEGEN_COST_COPY_BYTE_PS / 1000);
	return tracegen_clock_spend(c->clock, c->w, ns, c->error);
}

static bool emit_settime(struct copy *c, const struct fstree_node *node)
{
	struct trace_op op;
	trace_op_init(&op, TRACE_SETTIME);
	op.path = c->path->str;
	set_times(&op, node);
	return trace_writer_op(c->w, &op, c->error);
}

static bool copy_file(struct copy *c, const struct fstree_node *node)
{
	struct trace_op op;
	fstree_path(node, c->prefix, c->path);
	if (node->first_link) {
		fstree_path(node->first_link, c->prefix, c->path2);
		trace_op_init(&op, TRACE_LINK);
		op.path = c->path2->str;
		op.path2 = c->path->str;
		return trace_writer_op(c->w, &op, c->error) && spend(c, 0);
	}
	trace_op_init(&op, TRACE_CREATE);
	op.path = c->path->str;
	op.size = node->size;
	set_owner(&op, node);
	set_times(&op, node);
	return trace_writer_op(c->w, &op, c->error) && spend(c, node->size);
}

static bool copy_symlink(struct copy *c, const struct fstree_node *node)
{
	struct trace_op op;
	fstree_path(node, c->prefix, c->path);
	trace_op_init(&op, TRACE_SYMLINK);
	op.path = c->path->str;
	op.path2 = node->target;
	return trace_writer_op(c->w, &op, c->error) && emit_settime(c, node) && spend(c, 0);
}

static bool copy_dir(struct copy *c, const struct fstree_node *dir)
{
	struct trace_op op;
	fstree_path(dir, c->prefix, c->path);
	trace_op_init(&op, TRACE_MKDIR);
	op.path = c->path->str;
	set_owner(&op, dir);
	if (!trace_writer_op(c->w, &op, c->error) || !spend(c, 0))
		return false;
	for (guint i = 0; i < dir->children->len; i++) {
		const struct fstree_node *child = g_ptr_array_index(dir->children, i);
		bool ok = child->kind == FSTREE_DIR ? copy_dir(c, child)
			: child->kind == FSTREE_FILE ? copy_file(c, child) : copy_symlink(c, child);
		if (!ok)
			return false;
	}
	fstree_path(dir, c->prefix, c->path);
	return emit_settime(c, dir);
}

/* mkdir -p for the components of PREFIX above its last one. */
static bool make_parents(struct copy *c)
{
	for (const char *slash = strchr(c->prefix + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		g_string_assign(c->path, "");
		g_string_append_len(c->path, c->prefix, slash - c->prefix);
		if (!trace_writer_path_op(c->w, TRACE_MKDIR, c->path->str, c->error))
			return false;
	}
	return true;
}

bool tracegen_copy(struct trace_writer *w, struct tracegen_clock *clock, const struct fstree *tree,
		   const char *prefix, GError **error)
{
	g_autoptr(GString) path = g_string_new(NULL);
	g_autoptr(GString) path2 = g_string_new(NULL);
	struct copy c = { w, clock, prefix, path, path2, error };

	if (!trace_writer_comment(w, error, "cp -a (%s) %s: %" G_GUINT64_FORMAT " dirs, %" G_GUINT64_FORMAT
				  " files, %" G_GUINT64_FORMAT " symlinks, %" G_GUINT64_FORMAT
				  " hard links, %" G_GUINT64_FORMAT " bytes; %" G_GUINT64_FORMAT
				  " sockets/devices/fifos skipped",
				  tree->origin, prefix, tree->dirs, tree->files, tree->symlinks, tree->hardlinks,
				  tree->bytes, tree->specials_skipped))
		return false;
	return make_parents(&c) && copy_dir(&c, tree->root);
}
