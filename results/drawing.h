/*
 * results/drawing.h - the blocks `cowsim draw` shows and the words every
 * format uses for them. Knows nothing of the model: a collector (sim/
 * draw_collect.h) fills a drawing from one walk of the modeled trees.
 *
 * A drawing is made in three steps: drawing_init(); for each tree
 * drawing_begin_tree(), then drawing_add_block() for each block the walk
 * visits, every visit (a block reached from several trees is recorded once);
 * drawing_summarize() cuts a drawing of more than --max-blocks blocks at the
 * lowest level that fits. The formats (text and dot in draw_text.h, svg and
 * the step-through page in draw_svg.h) read it.
 *
 * Invariants
 *   DW1 Every block added is recorded exactly once, however many trees
 *       reach it; reached_by lists each tree reaching it once, in walk order,
 *       and its first entry is `tree`.
 *   DW2 A block's marks come from its record alone: shared (refs > 1),
 *       shared through a parent (refs 1, reached by more than one tree), new
 *       (generation == the newest drawn).
 */
#ifndef COWSIM_RESULTS_DRAWING_H
#define COWSIM_RESULTS_DRAWING_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

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

/* One key of a block: an item of a leaf, or a child pointer of a node. */
struct drawn_entry {
	uint64_t objectid;            /* the key (btrfs_disk_key order: objectid, type, offset) */
	uint64_t offset;
	uint8_t type;
	const char *type_name;        /* "INODE_ITEM", static; NULL: printed as "type N" */
	uint32_t snapshot;            /* keyed design: the key's snapshot id; 0 in btrfs */
	uint32_t size;                /* leaf: item data bytes; node: 0 */
	uint64_t child;               /* node: the child block's address; leaf: 0 */
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
	struct drawn_entry *entries;  /* nritems, owned */
	unsigned tree;                /* index of the tree it is drawn in */
	unsigned trees_reaching;      /* distinct trees whose walk reached it */
	unsigned last_tree;           /* 1 + the last tree that reached it, for the count */
	bool root;                    /* the root of a tree drawn */
	GArray *reached_by;           /* unsigned: indices of the trees that reach it, in walk order */
};

struct drawing {
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

/* A block as a walk visits it; drawing_add_block() copies what it keeps. */
struct drawing_visit {
	uint64_t bytenr, owner, generation;
	uint8_t level;
	uint32_t refs;
	uint32_t nritems;
	const struct drawn_entry *entries;
	bool root;                    /* the walk starts its tree here */
};

/* "fs,extent" or "all" -> a mask of draw_tree_kind; false with *error for an unknown name. */
bool drawing_parse_trees(const char *text, unsigned *mask, GError **error);
/* "free-space" -> KIND_FREE_SPACE; 0 for a name that is no kind. */
unsigned drawing_kind_by_name(const char *name);
/* KIND_EXTENT -> "extent"; NULL for no single kind. */
const char *drawing_kind_name(unsigned kind);

void drawing_init(struct drawing *d);
void drawing_clear(struct drawing *d);
/* A new tree; the drawing takes TITLE (g_free'd with it). The blocks added
 * next are reached from it. */
void drawing_begin_tree(struct drawing *d, char *title, uint64_t id, uint64_t root, unsigned kind);
/* A visit of a block from the current tree (DW1). */
void drawing_add_block(struct drawing *d, const struct drawing_visit *v);
/* With more than MAX blocks (0: no limit), keep the upper levels (see sim/cmd_draw.c). */
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

/* The colours DOT and svg give the marks: a block's fill says how it is
 * shared, a thick blue border that the newest generation wrote it. */
#define DRAWING_COLOUR_SHARED "#f4a582"
#define DRAWING_COLOUR_THROUGH_PARENT "#fddbc7"
#define DRAWING_COLOUR_EXCLUSIVE "#ffffff"
#define DRAWING_COLOUR_NEW_BORDER "#2166ac"
#define DRAWING_COLOUR_BORDER "#404040"

/* DRAWING_COLOUR_SHARED, _THROUGH_PARENT or _EXCLUSIVE, as the block is. */
const char *drawing_fill_colour(const struct drawn_block *b);
/* TEXT with <, >, &, ' and " escaped for XML and HTML-like DOT labels. */
void drawing_append_escaped(GString *out, const char *text);

/* "(256 INODE_ITEM 0)" as btrfs print-tree writes keys. */
void drawing_append_key(GString *out, const struct drawn_entry *e);
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
