/*
 * workloads/fstree.h - an in-memory directory tree that generators copy,
 * walk and age: the "source tree" of cp -a, built from a real directory
 * (gen_from_dir.c) or drawn from published distributions (gen_synthetic.c).
 *
 *            root (DIR, name "")          children[] are in COPY ORDER: the
 *           /        \                     order cp -a creates them, which is
 *        "a" DIR    "b" FILE               also the order btrfs readdir
 *        /    \                            returns them in the copy.
 *   "x" FILE  "y" FILE first_link -> b     a second hard-link name
 *
 * Invariants:
 *   FT1 names are non-empty, contain no '/' or NUL, and are unique in a directory;
 *   FT2 a node with first_link != NULL is a FILE whose first name (first_link)
 *      comes earlier in a pre-order walk of copy order, and first_link itself
 *      has first_link == NULL;
 *   FT3 only DIR nodes have children; only SYMLINK nodes have a target;
 *   FT4 counts in struct fstree match the nodes (dirs include the root);
 *   FT5 a detached node (fstree_detach: the file was unlinked) is in no
 *      children[] and in `detached`, so walks no longer meet it while a later
 *      hard-link name's first_link may still point to it.
 */
#ifndef COWSIM_WORKLOADS_FSTREE_H
#define COWSIM_WORKLOADS_FSTREE_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

enum fstree_kind {
	FSTREE_DIR,
	FSTREE_FILE,
	FSTREE_SYMLINK,
};

struct fstree_node {
	enum fstree_kind kind;
	char *name;                      /* "" for the root */
	struct fstree_node *parent;      /* NULL for the root */
	GPtrArray *children;             /* DIR only: struct fstree_node *, copy order (FT3) */
	uint64_t size;                   /* bytes (FILE); 0 otherwise */
	uint32_t mode;                   /* permission bits */
	uint32_t uid, gid;
	int64_t atime_ns, mtime_ns;      /* nanoseconds since the epoch */
	char *target;                    /* SYMLINK only */
	struct fstree_node *first_link;  /* FILE: the inode's first name, if this is a later one (FT2) */
	bool unlinked;                   /* detached by fstree_detach (FT5) */
};

struct fstree {
	struct fstree_node *root;
	uint64_t dirs, files, symlinks, hardlinks;  /* FT4; files excludes later hard-link names */
	uint64_t specials_skipped;                  /* sockets, devices, fifos (from-dir) */
	uint64_t bytes;                             /* sum of file sizes (first names only) */
	int64_t newest_ns;                          /* the newest atime or mtime in the tree */
	char *origin;                               /* "from-dir /usr/include" etc., for comments */
	GPtrArray *detached;                        /* unlinked nodes, freed with the tree (FT5) */
};

struct fstree *fstree_new(const char *origin);
void fstree_free(struct fstree *tree);
typedef struct fstree fstree;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fstree, fstree_free)

/* Add a node under PARENT (a DIR) at the end of its copy order; NAME is copied.
 * Keeps the counts (FT4). */
struct fstree_node *fstree_add(struct fstree *tree, struct fstree_node *parent, enum fstree_kind kind,
			       const char *name);
/* Make NODE a later hard-link name of FIRST (copies its attributes). */
void fstree_make_hardlink(struct fstree *tree, struct fstree_node *node, struct fstree_node *first);
/* Unlink NODE (a FILE or SYMLINK) from its directory: walks no longer see it (FT5). */
void fstree_detach(struct fstree *tree, struct fstree_node *node);
/* Record the node's times and size in the tree totals (call once the node is filled). */
void fstree_account(struct fstree *tree, const struct fstree_node *node);

/* PREFIX + "/" + the node's path from the root ("PREFIX" for the root) into OUT. */
void fstree_path(const struct fstree_node *node, const char *prefix, GString *out);

/* The child of DIR named NAME, or NULL (linear: used for symlink resolution only). */
struct fstree_node *fstree_child(const struct fstree_node *dir, const char *name);

/* What a symlink finally points to inside the tree, following further symlinks
 * (at most 40, like Linux's MAXSYMLINKS); NULL when the target is absolute
 * (outside the copied tree), leaves the tree through "..", does not exist, or loops. */
struct fstree_node *fstree_resolve(const struct fstree_node *link);

/* Regular files (first names only) in pre-order copy order; the array is owned by the caller. */
GPtrArray *fstree_files(const struct fstree *tree);
/* The same below DIR only. */
GPtrArray *fstree_files_below(const struct fstree_node *dir);

#endif
