/*
 * workloads/fstree.c - the generators' in-memory tree (see fstree.h for the
 * picture and invariants FT1-FT4).
 *
 * Nodes are plain heap objects; a directory owns its children through a
 * GPtrArray with a free function, so freeing the root frees the tree.
 * Symlink resolution works on names only, component by component, the way
 * the kernel's path walk would inside the copied tree.
 */
#include "fstree.h"

#include <string.h>

#define FSTREE_SYMLINK_HOPS_MAX 40

static void node_free(gpointer data)
{
	struct fstree_node *node = data;
	if (node->children)
		g_ptr_array_unref(node->children);
	g_free(node->name);
	g_free(node->target);
	g_free(node);
}

static struct fstree_node *node_new(enum fstree_kind kind, const char *name)
{
	struct fstree_node *node = g_new0(struct fstree_node, 1);
	node->kind = kind;
	node->name = g_strdup(name);
	if (kind == FSTREE_DIR)
		node->children = g_ptr_array_new_with_free_func(node_free);
	return node;
}

struct fstree *fstree_new(const char *origin)
{
	struct fstree *tree = g_new0(struct fstree, 1);
	tree->root = node_new(FSTREE_DIR, "");
	tree->root->mode = 0755;
	tree->dirs = 1;
	tree->newest_ns = INT64_MIN;
	tree->origin = g_strdup(origin);
	tree->detached = g_ptr_array_new_with_free_func(node_free);
	return tree;
}

void fstree_free(struct fstree *tree)
{
	if (!tree)
		return;
	node_free(tree->root);
	g_ptr_array_unref(tree->detached);
	g_free(tree->origin);
	g_free(tree);
}

struct fstree_node *fstree_add(struct fstree *tree, struct fstree_node *parent, enum fstree_kind kind,
			       const char *name)
{
	g_assert(parent->kind == FSTREE_DIR);
	struct fstree_node *node = node_new(kind, name);
	node->parent = parent;
	g_ptr_array_add(parent->children, node);
	if (kind == FSTREE_DIR)
		tree->dirs++;
	else if (kind == FSTREE_FILE)
		tree->files++;
	else
		tree->symlinks++;
	return node;
}

void fstree_make_hardlink(struct fstree *tree, struct fstree_node *node, struct fstree_node *first)
{
	g_assert(node->kind == FSTREE_FILE && first->kind == FSTREE_FILE && !first->first_link);
	node->first_link = first;
	node->size = first->size;
	node->mode = first->mode;
	node->uid = first->uid;
	node->gid = first->gid;
	node->atime_ns = first->atime_ns;
	node->mtime_ns = first->mtime_ns;
	tree->files--;
	tree->hardlinks++;
}

void fstree_detach(struct fstree *tree, struct fstree_node *node)
{
	g_assert(node->parent && node->kind != FSTREE_DIR);
	GPtrArray *siblings = node->parent->children;
	guint index;
	gboolean found = g_ptr_array_find(siblings, node, &index);
	g_assert(found);
	g_ptr_array_add(tree->detached, g_ptr_array_steal_index(siblings, index));
	node->unlinked = true;
	if (node->kind == FSTREE_SYMLINK)
		tree->symlinks--;
	else if (node->first_link)
		tree->hardlinks--;
	else
		tree->files--;
}

void fstree_account(struct fstree *tree, const struct fstree_node *node)
{
	if (node->kind == FSTREE_FILE && !node->first_link)
		tree->bytes += node->size;
	tree->newest_ns = MAX(tree->newest_ns, MAX(node->atime_ns, node->mtime_ns));
}

static void append_path(const struct fstree_node *node, GString *out)
{
	if (!node->parent)
		return;
	append_path(node->parent, out);
	g_string_append_c(out, '/');
	g_string_append(out, node->name);
}

void fstree_path(const struct fstree_node *node, const char *prefix, GString *out)
{
	g_string_assign(out, prefix);
	/* The mount root "/" as prefix: avoid "//a". */
	if (out->len == 1 && out->str[0] == '/' && node->parent)
		g_string_truncate(out, 0);
	append_path(node, out);
}

struct fstree_node *fstree_child(const struct fstree_node *dir, const char *name)
{
	if (dir->kind != FSTREE_DIR)
		return NULL;
	for (guint i = 0; i < dir->children->len; i++) {
		struct fstree_node *child = g_ptr_array_index(dir->children, i);
		if (!strcmp(child->name, name))
			return child;
	}
	return NULL;
}

static struct fstree_node *resolve_from(const struct fstree_node *dir, const char *target, int *hops);

/* Step from DIR through one component; follows a symlink found on the way. */
static struct fstree_node *step(const struct fstree_node *dir, const char *name, int *hops)
{
	if (!strcmp(name, "") || !strcmp(name, "."))
		return (struct fstree_node *)dir;
	if (!strcmp(name, ".."))
		return dir->parent; /* NULL: the walk left the copied tree */
	struct fstree_node *child = fstree_child(dir, name);
	if (child && child->kind == FSTREE_SYMLINK) {
		if (++*hops > FSTREE_SYMLINK_HOPS_MAX)
			return NULL;
		return resolve_from(child->parent, child->target, hops);
	}
	return child;
}

static struct fstree_node *resolve_from(const struct fstree_node *dir, const char *target, int *hops)
{
	if (target[0] == '/')
		return NULL; /* absolute: names the host's tree, not the copy */
	g_auto(GStrv) parts = g_strsplit(target, "/", -1);
	struct fstree_node *node = (struct fstree_node *)dir;
	for (int i = 0; node && parts[i]; i++) {
		if (node->kind != FSTREE_DIR)
			return NULL;
		node = step(node, parts[i], hops);
	}
	return node;
}

struct fstree_node *fstree_resolve(const struct fstree_node *link)
{
	int hops = 1;
	g_assert(link->kind == FSTREE_SYMLINK);
	return resolve_from(link->parent, link->target, &hops);
}

static void collect_files(const struct fstree_node *dir, GPtrArray *out)
{
	for (guint i = 0; i < dir->children->len; i++) {
		struct fstree_node *child = g_ptr_array_index(dir->children, i);
		if (child->kind == FSTREE_DIR)
			collect_files(child, out);
		else if (child->kind == FSTREE_FILE && !child->first_link)
			g_ptr_array_add(out, child);
	}
}

GPtrArray *fstree_files(const struct fstree *tree)
{
	return fstree_files_below(tree->root);
}

GPtrArray *fstree_files_below(const struct fstree_node *dir)
{
	GPtrArray *out = g_ptr_array_new();
	collect_files(dir, out);
	return out;
}
