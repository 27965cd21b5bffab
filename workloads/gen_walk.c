/*
 * workloads/gen_walk.c - the ops of tree walkers: grep -R, grep -r, find, tar.
 *
 * All four walk like gnulib fts without a sort function: a directory is read
 * whole (one readdir op), then its entries are visited in readdir order,
 * descending into a directory as soon as it is met.  On btrfs readdir order
 * is the order entries were created in (dir index), i.e. copy order.
 *
 *   walker        directory        regular file          symlink
 *   grep -R       readdir          read                  read LINK (the path walk
 *                                                        touches the link's atime),
 *                                                        then the target as if met
 *                                                        here: a file is read, a
 *                                                        directory walked, unless it is
 *                                                        being walked already (grep's
 *                                                        "recursive directory loop")
 *   grep -r       readdir          read                  skipped
 *   find          stat, readdir    stat                  stat (lstat: not followed)
 *   tar c         stat, readdir    stat, read (a later   stat, read (readlink)
 *                                  hard-link name: stat
 *                                  only, tar stores a link)
 *
 * Symlink targets are resolved inside the copied tree (fstree_resolve); an
 * absolute target names the host's files, not the copy, and is not followed,
 * nor is a dangling one.  Paths in the ops are always real paths (the trace
 * never asks the simulator to follow a symlink).
 *
 * Invariant: `active` holds exactly the directories on the current walk
 * stack, which is what the loop check compares against.
 */
#include "tracegen.h"

#include <string.h>

struct walk {
	struct trace_writer *w;
	struct tracegen_clock *clock;
	const char *base;
	enum tracegen_walker walker;
	GPtrArray *active;
	GString *path;
	GError **error;
};

static bool emit(struct walk *k, enum trace_op_kind kind, const struct fstree_node *node, int64_t cost_ns)
{
	fstree_path(node, k->base, k->path);
	return trace_writer_path_op(k->w, kind, k->path->str, k->error) &&
	       tracegen_clock_spend(k->clock, k->w, cost_ns, k->error);
}

static int64_t read_cost(const struct fstree_node *node)
{
	return TRACEGEN_COST_READ_FILE_NS + (int64_t)(node->size * TRACEGEN_COST_READ_BYTE_PS / 1000);
}

static bool walk_dir(struct walk *k, const struct fstree_node *dir);

static bool visit_file(struct walk *k, const struct fstree_node *node)
{
	switch (k->walker) {
	case TRACEGEN_WALK_GREP:
	case TRACEGEN_WALK_GREP_NOFOLLOW:
		return emit(k, TRACE_READ, node, read_cost(node));
	case TRACEGEN_WALK_FIND:
		return emit(k, TRACE_STAT, node, TRACEGEN_COST_STAT_NS);
	case TRACEGEN_WALK_TAR:
		if (!emit(k, TRACE_STAT, node, TRACEGEN_COST_STAT_NS))
			return false;
		return node->first_link ? true : emit(k, TRACE_READ, node, read_cost(node));
	}
	return false;
}

static bool is_active(struct walk *k, const struct fstree_node *dir)
{
	for (guint i = 0; i < k->active->len; i++)
		if (g_ptr_array_index(k->active, i) == dir)
			return true;
	return false;
}

static bool follow_symlink(struct walk *k, const struct fstree_node *link)
{
	if (!emit(k, TRACE_READ, link, TRACEGEN_COST_STAT_NS))
		return false;
	const struct fstree_node *target = fstree_resolve(link);
	if (!target)
		return true;
	if (target->kind == FSTREE_FILE)
		return emit(k, TRACE_READ, target, read_cost(target));
	if (target->kind == FSTREE_DIR && !is_active(k, target))
		return walk_dir(k, target);
	return true;
}

static bool visit_symlink(struct walk *k, const struct fstree_node *link)
{
	switch (k->walker) {
	case TRACEGEN_WALK_GREP:
		return follow_symlink(k, link);
	case TRACEGEN_WALK_GREP_NOFOLLOW:
		return true;
	case TRACEGEN_WALK_FIND:
		return emit(k, TRACE_STAT, link, TRACEGEN_COST_STAT_NS);
	case TRACEGEN_WALK_TAR:
		return emit(k, TRACE_STAT, link, TRACEGEN_COST_STAT_NS) &&
		       emit(k, TRACE_READ, link, TRACEGEN_COST_STAT_NS);
	}
	return false;
}

static bool stats_dirs(const struct walk *k)
{
	return k->walker == TRACEGEN_WALK_FIND || k->walker == TRACEGEN_WALK_TAR;
}

static bool visit(struct walk *k, const struct fstree_node *node)
{
	switch (node->kind) {
	case FSTREE_DIR:
		if (stats_dirs(k) && !emit(k, TRACE_STAT, node, TRACEGEN_COST_STAT_NS))
			return false;
		return walk_dir(k, node);
	case FSTREE_FILE:
		return visit_file(k, node);
	case FSTREE_SYMLINK:
		return visit_symlink(k, node);
	}
	return false;
}

static bool walk_dir(struct walk *k, const struct fstree_node *dir)
{
	if (!emit(k, TRACE_READDIR, dir, TRACEGEN_COST_READDIR_NS))
		return false;
	g_ptr_array_add(k->active, (gpointer)dir);
	bool ok = true;
	for (guint i = 0; ok && i < dir->children->len; i++)
		ok = visit(k, g_ptr_array_index(dir->children, i));
	g_ptr_array_remove_index(k->active, k->active->len - 1);
	return ok;
}

bool tracegen_walk(struct trace_writer *w, struct tracegen_clock *clock, const struct fstree *tree,
		   const char *base, enum tracegen_walker walker, GError **error)
{
	g_autoptr(GPtrArray) active = g_ptr_array_new();
	g_autoptr(GString) path = g_string_new(NULL);
	struct walk k = { w, clock, base, walker, active, path, error };
	return visit(&k, tree->root);
}

/* readdir of each directory strictly above PREFIX under ROOT ("" = the mount root). */
static bool read_parents(struct trace_writer *w, struct tracegen_clock *clock, const char *root,
			 const char *prefix, GError **error)
{
	g_autoptr(GString) path = g_string_new(NULL);
	for (const char *slash = strchr(prefix + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		g_string_printf(path, "%s%.*s", root, (int)(slash - prefix), prefix);
		if (!trace_writer_path_op(w, TRACE_READDIR, path->str, error) ||
		    !tracegen_clock_spend(clock, w, TRACEGEN_COST_READDIR_NS, error))
			return false;
	}
	return true;
}

bool tracegen_walk_mount(struct trace_writer *w, struct tracegen_clock *clock, const struct fstree *tree,
			 const char *prefix, GPtrArray *snapshot_dirs, enum tracegen_walker walker,
			 GError **error)
{
	g_autoptr(GString) base = g_string_new(NULL);
	bool stats = walker == TRACEGEN_WALK_FIND || walker == TRACEGEN_WALK_TAR;

	if ((stats && !trace_writer_path_op(w, TRACE_STAT, "/", error)) ||
	    !trace_writer_path_op(w, TRACE_READDIR, "/", error) ||
	    !read_parents(w, clock, "", prefix, error) || !tracegen_walk(w, clock, tree, prefix, walker, error))
		return false;
	for (guint i = 0; snapshot_dirs && i < snapshot_dirs->len; i++) {
		const char *snap = g_ptr_array_index(snapshot_dirs, i);
		g_string_printf(base, "%s%s", snap, prefix);
		if ((stats && !trace_writer_path_op(w, TRACE_STAT, snap, error)) ||
		    !trace_writer_path_op(w, TRACE_READDIR, snap, error) ||
		    !read_parents(w, clock, snap, prefix, error) ||
		    !tracegen_walk(w, clock, tree, base->str, walker, error))
			return false;
	}
	return true;
}
