/*
 * sim/drawing.h - the blocks `cowsim draw` shows, collected from one
 * fs_walk (model/fs.h), and the words every format uses for them.
 *
 * A drawing is made in three steps: drawing_init(); fs_walk(fs,
 * drawing_collect, &d) records each block once, in first-visit order, with
 * the trees that reach it; drawing_summarize() cuts a drawing of more than
 * --max-blocks blocks at the lowest level that fits. The formats (text and
 * dot in cmd_draw.c, svg and the step-through page in draw_svg.c) read it.
 *
 * Invariants
 *   DW1 Every block of the selected trees is recorded exactly once, however
 *       many trees reach it; reached_by lists each tree reaching it once, in
 *       walk order, and its first entry is `tree`.
 *   DW2 A block's marks come from its record alone: shared (refs > 1),
 *       shared through a parent (refs 1, reached by more than one tree), new
 *       (generation == the newest drawn).
 */
#ifndef COWSIM_SIM_DRAWING_H
#define COWSIM_SIM_DRAWING_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "fs.h"

enum draw_tree_kind {
	KIND_FS = 1u << 0,
	KIND_ATIME = 1u << 1,         /* side-table policy's per-subvolume trees */
	KIND_EXTENT = 1u << 2,
	KIND_ROOT = 1u << 3,
	KIND_CSUM = 1u << 4,
	KIND_FREE_SPACE = 1u << 5,
	KIND_DEV = 1u << 6,
	KIND_UUID = 1u << 7,
	KIND_DATA_RELOC = 1u << 8,
};

struct drawn_tree {
	char *title;                  /* "fs tree 5 (/)" */
	uint64_t id;
	uint64_t root;                /* the root block's address */
	unsigned kind;                /* enum draw_tree_kind */
};

struct drawn_block {
	uint64_t bytenr, owner, generation;
	uint8_t level;
	uint32_t refs;
	uint32_t nritems;
	struct fs_walk_entry *entries;
	unsigned tree;                /* index of the tree it is drawn in */
	unsigned trees_reaching;      /* distinct trees whose walk reached it */
	unsigned last_tree;           /* 1 + the last tree that reached it, for the count */
	bool root;                    /* the root of a tree drawn */
	GArray *reached_by;           /* unsigned: indices of the trees that reach it, in walk order */
};

struct drawing {
	unsigned mask;
	bool skipping;                /* the tree being walked is not selected */
	GArray *trees;                /* struct drawn_tree */
	GPtrArray *blocks;            /* struct drawn_block *, first-visit order; owns them */
	GHashTable *by_bytenr;        /* uint64 * -> struct drawn_block * */
	uint64_t newest;              /* the highest generation drawn */
	bool summarized;              /* more blocks than --max-blocks: cut at level `cut` */
	unsigned cut;                 /* summarized: blocks of a lower level are counted, not drawn */
	unsigned kept;                /* summarized: blocks drawn */
};

struct draw_header {
	const char *trace;
	const char *at;               /* the mark, or NULL for the end */
	uint64_t after_op;            /* no mark: drawn after this many ops (--steps), 0: at the end */
	uint64_t transid;
	uint32_t nodesize;
	uint64_t metadata_used;
	unsigned max_items;           /* 0: all */
	unsigned max_blocks;          /* 0: all */
};

/* "fs,extent" or "all" -> a mask of draw_tree_kind; false with *error for an unknown name. */
bool drawing_parse_trees(const char *text, unsigned *mask, GError **error);

void drawing_init(struct drawing *d, unsigned mask);
void drawing_clear(struct drawing *d);
/* The fs_walk visitor; opaque is the struct drawing. */
enum fs_walk_answer drawing_collect(const struct fs_walk_block *b, void *opaque);
/* With more than MAX blocks (0: no limit), keep the upper levels (see cmd_draw.c). */
void drawing_summarize(struct drawing *d, unsigned max);

struct drawn_block *drawing_block(const struct drawing *d, uint64_t bytenr);
const struct drawn_tree *drawing_tree(const struct drawing *d, unsigned i);
/* Drawn at all (not only counted under a cut block). */
bool drawing_shows(const struct drawing *d, const struct drawn_block *b);
/* Drawn with the counts of the blocks below it instead of its children or items. */
bool drawing_cuts(const struct drawing *d, const struct drawn_block *b);

bool block_shared(const struct drawn_block *b);
bool block_shared_through_parent(const struct drawn_block *b);
bool block_new(const struct drawing *d, const struct drawn_block *b);

/* "(256 INODE_ITEM 0)" as btrfs print-tree writes keys. */
void drawing_append_key(GString *out, const struct fs_walk_entry *e);
/* "312 children; below: 312 blocks (312 leaves), 290 shared *, ..." of a cut block. */
void drawing_append_cut(GString *out, const struct drawing *d, const struct drawn_block *b);
/* "leaf 23109632 gen 2 owner 5 refs 2 *" */
void drawing_append_block_head(GString *out, const struct drawing *d, const struct drawn_block *b);
void drawing_append_title(GString *out, const struct draw_header *h);
void drawing_append_summary_note(GString *out, const struct drawing *d, const struct draw_header *h);
/* The title, the LEGEND and, when summarized, the note, SEP between them. */
void drawing_append_header(GString *out, const struct drawing *d, const struct draw_header *h, const char *sep,
			   const char *legend);

#endif
