/*
 * results/draw_svg.c - the key-ordered picture of a drawing (draw_svg.h).
 *
 * Why stacks. A snapshot's root points at the same leaves as tree 5's root;
 * after the grep, tree 5's new root points at its copy of one leaf and at
 * the snapshot's other leaves. Drawn as rows of blocks with one line per
 * pointer, the two roots' lines to the first and the last leaf cross
 * whatever the order, and three trees sharing three leaves are K(3,3): no
 * drawing of them is free of crossings. So the versions of one key range are
 * stacked and one line stands for every pointer between two stacks:
 *
 *            +-------------------------+
 *            | node A' gen 9, root of 5|     the roots' stack
 *            | node A  gen 7, root of 256|
 *            +-------------------------+
 *              /        |           \
 *     +--------+   +-----------+   +--------+
 *     | leaf B |   | leaf C' 5 |   | leaf D |   B, D: one card, refs 2
 *     | 5 256  |   | leaf C 256|   | 5 256  |   C: one card per version
 *     +--------+   +-----------+   +--------+
 *
 * Stacks (the intervals of overlapping key ranges, per level and per kind of
 * tree) nest: a parent's range holds its children's, so the stacks form a
 * forest (DS1). Laid out as a tidy tree, each stack's subtree owns an x
 * interval, its lines stay inside it (DS2), and the leaves' stacks come in
 * key order from left to right.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "draw_svg.h"

/* ---- geometry (px) ------------------------------------------------------------ */

#define FONT_PX 11
#define CHAR_TENTHS 67                /* DejaVu Sans Mono's advance at 11 px: 6.6 px */
#define LINE_PX 14
#define CARD_PAD 5
#define CARD_GAP 4                    /* between the cards of a stack */
#define STACK_PAD 3                   /* the stack's frame around its cards */
#define SIBLING_GAP 22                /* between the subtrees of siblings */
#define FAMILY_GAP 56                 /* between the fs trees and the extent tree ... */
#define ROW_GAP 64                    /* between two rows of stacks: room for the lines */
#define MARGIN 14
#define WRAP_CHARS 110                /* the header's lines */

static int text_px(size_t chars)
{
	return (int)((chars * CHAR_TENTHS + 9) / 10);
}

/* ---- stacks ---------------------------------------------------------------------- */

struct card {
	const struct drawn_block *block;
	GPtrArray *lines;             /* char *; the first is the block's name */
	int y;                        /* top, relative to its stack's */
	int h;
};

struct stack {
	unsigned family;              /* index into layout.families */
	unsigned level;
	bool empty;                   /* an empty leaf: no key range, a stack of its own */
	const struct drawn_entry *lo, *hi;   /* the key range of its cards */
	GPtrArray *cards;             /* struct card *, by first key, then tree, then generation */
	int parent;                   /* stack index, -1 for the top of a tree */
	GArray *children;             /* unsigned stack indices, in key order */
	int w, h;
	double x, y, span;            /* span: the width its subtree owns */
};

struct layout {
	const struct drawing *d;
	const struct draw_header *h;
	GArray *families;             /* uint64: kind << 48 | tree id for the trees of one key space */
	GPtrArray *stacks;            /* struct stack * */
	GHashTable *stack_of;         /* bytenr (uint64 *) -> 1 + stack index */
	unsigned levels;              /* 1 + the highest level drawn */
	int row_top[256];
	double width;
	int height;
	GPtrArray *header;            /* char *: title and note lines */
	unsigned ds1_broken;          /* blocks whose parents lie in two stacks (DS1) */
};

static void card_free(gpointer data)
{
	struct card *c = data;
	g_ptr_array_free(c->lines, true);
	g_free(c);
}

static void stack_free(gpointer data)
{
	struct stack *s = data;
	g_ptr_array_free(s->cards, true);
	g_array_free(s->children, true);
	g_free(s);
}

static struct stack *stack_at(const struct layout *l, unsigned i)
{
	return l->stacks->pdata[i];
}

static int key_cmp(const struct drawn_entry *a, const struct drawn_entry *b)
{
	if (a->objectid != b->objectid)
		return a->objectid < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	if (a->snapshot != b->snapshot)
		return a->snapshot < b->snapshot ? -1 : 1;
	return 0;
}

/* The last key below B: the last item of its last leaf (or, when that leaf
 * is not recorded, the last key B itself holds). */
static const struct drawn_entry *last_key(const struct drawing *d, const struct drawn_block *b)
{
	while (b->level) {
		const struct drawn_block *c = drawing_block(d, b->entries[b->nritems - 1].child);
		if (!c || !c->nritems)
			break;
		b = c;
	}
	return &b->entries[b->nritems - 1];
}

/* The fs trees of every subvolume share one key space, and so do the atime
 * side tables; every other tree is a key space of its own. */
static unsigned family_of(struct layout *l, const struct drawn_block *b)
{
	const struct drawn_tree *t = drawing_tree(l->d, b->tree);
	uint64_t key = (uint64_t)t->kind << 48;
	if (t->kind != KIND_FS && t->kind != KIND_ATIME)
		key |= t->id & ((1ull << 48) - 1);
	for (unsigned i = 0; i < l->families->len; i++)
		if (g_array_index(l->families, uint64_t, i) == key)
			return i;
	g_array_append_val(l->families, key);
	return l->families->len - 1;
}

struct placed_block {
	const struct drawn_block *block;
	unsigned family;
	const struct drawn_entry *lo, *hi;   /* NULL for an empty leaf */
};

static int placed_cmp(const void *pa, const void *pb)
{
	const struct placed_block *a = pa, *b = pb;
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	if (a->block->level != b->block->level)
		return a->block->level > b->block->level ? -1 : 1;
	if (!a->lo != !b->lo)
		return a->lo ? 1 : -1;            /* empty leaves first */
	int k = a->lo ? key_cmp(a->lo, b->lo) : 0;
	if (k)
		return k;
	if (a->block->tree != b->block->tree)
		return a->block->tree < b->block->tree ? -1 : 1;
	if (a->block->generation != b->block->generation)
		return a->block->generation > b->block->generation ? -1 : 1;
	return a->block->bytenr < b->block->bytenr ? -1 : a->block->bytenr > b->block->bytenr;
}

/* "5, 256-258" */
static void append_tree_ids(GString *out, const struct drawing *d, const struct drawn_block *b)
{
	g_autoptr(GArray) ids = g_array_new(false, false, sizeof(uint64_t));
	for (unsigned i = 0; i < b->reached_by->len; i++) {
		uint64_t id = drawing_tree(d, g_array_index(b->reached_by, unsigned, i))->id;
		g_array_append_val(ids, id);
	}
	for (unsigned i = 1; i < ids->len; i++)              /* few trees: insertion sort */
		for (unsigned j = i; j && g_array_index(ids, uint64_t, j - 1) > g_array_index(ids, uint64_t, j); j--) {
			uint64_t t = g_array_index(ids, uint64_t, j);
			g_array_index(ids, uint64_t, j) = g_array_index(ids, uint64_t, j - 1);
			g_array_index(ids, uint64_t, j - 1) = t;
		}
	for (unsigned i = 0; i < ids->len;) {
		unsigned j = i;
		while (j + 1 < ids->len && g_array_index(ids, uint64_t, j + 1) == g_array_index(ids, uint64_t, j) + 1)
			j++;
		g_string_append_printf(out, "%s%" PRId64, i ? ", " : "", (int64_t)g_array_index(ids, uint64_t, i));
		if (j > i)
			g_string_append_printf(out, "%s%" PRId64, j > i + 1 ? "-" : ", ",
					       (int64_t)g_array_index(ids, uint64_t, j));
		i = j + 1;
	}
}

static struct card *make_card(const struct layout *l, const struct drawn_block *b)
{
	const struct drawing *d = l->d;
	struct card *c = g_new0(struct card, 1);
	c->block = b;
	c->lines = g_ptr_array_new_with_free_func(g_free);
	if (b->level)
		g_ptr_array_add(c->lines, g_strdup_printf("node %" PRIu64 " level %u", b->bytenr, b->level));
	else
		g_ptr_array_add(c->lines, g_strdup_printf("leaf %" PRIu64, b->bytenr));
	g_ptr_array_add(c->lines, g_strdup_printf("gen %" PRIu64 " owner %" PRId64 " refs %u", b->generation,
						  (int64_t)b->owner, b->refs));
	for (unsigned t = 0; b->root && t < d->trees->len; t++)
		if (drawing_tree(d, t)->root == b->bytenr)
			g_ptr_array_add(c->lines, g_strdup_printf("root of %s", drawing_tree(d, t)->title));
	if (!b->root || b->reached_by->len > 1) {          /* a root's own tree is named above */
		g_autoptr(GString) trees = g_string_new(b->reached_by->len > 1 ? "trees " : "tree ");
		append_tree_ids(trees, d, b);
		g_ptr_array_add(c->lines, g_strdup(trees->str));
	}
	if (drawing_cuts(d, b)) {
		g_autoptr(GString) cut = g_string_new(NULL);
		drawing_append_cut(cut, d, b);
		g_auto(GStrv) parts = g_strsplit(cut->str, "; ", -1);
		for (char **p = parts; *p; p++)
			g_ptr_array_add(c->lines, g_strdup(*p));
	} else {
		for (uint32_t i = 0; i < b->nritems; i++) {
			if (l->h->max_items && i >= l->h->max_items) {
				g_ptr_array_add(c->lines, g_strdup_printf("... %u more %s", b->nritems - i,
									  b->level ? "keys" : "items"));
				break;
			}
			g_autoptr(GString) key = g_string_new(NULL);
			drawing_append_key(key, &b->entries[i]);
			if (!b->level)
				g_string_append_printf(key, " %u B", b->entries[i].size);
			g_ptr_array_add(c->lines, g_strdup(key->str));
		}
	}
	c->h = 2 * CARD_PAD + (int)c->lines->len * LINE_PX;
	return c;
}

static int card_width(const struct card *c)
{
	size_t chars = 0;
	for (unsigned i = 0; i < c->lines->len; i++)
		chars = MAX(chars, strlen(c->lines->pdata[i]));
	return text_px(chars) + 2 * CARD_PAD;
}

/* The intervals of overlapping key ranges, per kind of tree and level. */
static void build_stacks(struct layout *l)
{
	const struct drawing *d = l->d;
	g_autoptr(GArray) placed = g_array_new(false, false, sizeof(struct placed_block));
	for (unsigned i = 0; i < d->blocks->len; i++) {
		const struct drawn_block *b = d->blocks->pdata[i];
		if (!drawing_shows(d, b))
			continue;
		struct placed_block p = { .block = b, .family = family_of(l, b) };
		if (b->nritems) {
			p.lo = &b->entries[0];
			p.hi = last_key(d, b);
		}
		g_array_append_val(placed, p);
	}
	g_array_sort(placed, placed_cmp);
	struct stack *s = NULL;
	for (unsigned i = 0; i < placed->len; i++) {
		const struct placed_block *p = &g_array_index(placed, struct placed_block, i);
		bool joins = s && s->family == p->family && s->level == p->block->level && !s->empty && p->lo &&
			     key_cmp(p->lo, s->hi) <= 0;
		if (!joins) {
			s = g_new0(struct stack, 1);
			*s = (struct stack){ .family = p->family, .level = p->block->level, .empty = !p->lo,
					     .lo = p->lo, .hi = p->hi, .parent = -1 };
			s->cards = g_ptr_array_new_with_free_func(card_free);
			s->children = g_array_new(false, false, sizeof(unsigned));
			g_ptr_array_add(l->stacks, s);
		} else if (key_cmp(p->hi, s->hi) > 0) {
			s->hi = p->hi;
		}
		g_ptr_array_add(s->cards, make_card(l, p->block));
		g_hash_table_insert(l->stack_of, (gpointer)&p->block->bytenr, GUINT_TO_POINTER(l->stacks->len));
		l->levels = MAX(l->levels, p->block->level + 1u);
	}
}

static int stack_index_of(const struct layout *l, uint64_t bytenr)
{
	return (int)GPOINTER_TO_UINT(g_hash_table_lookup(l->stack_of, &bytenr)) - 1;
}

/* Each stack's parent: the stack of the blocks pointing at its blocks. */
static void link_stacks(struct layout *l)
{
	const struct drawing *d = l->d;
	for (unsigned si = 0; si < l->stacks->len; si++) {
		const struct stack *s = stack_at(l, si);
		for (unsigned c = 0; c < s->cards->len; c++) {
			const struct drawn_block *b = ((const struct card *)s->cards->pdata[c])->block;
			if (!b->level || drawing_cuts(d, b))
				continue;
			for (uint32_t e = 0; e < b->nritems; e++) {
				int ci = stack_index_of(l, b->entries[e].child);
				if (ci < 0)
					continue;
				struct stack *child = stack_at(l, (unsigned)ci);
				if (child->parent < 0)
					child->parent = (int)si;
				else if (child->parent != (int)si)
					l->ds1_broken++;
			}
		}
	}
	/* stacks are in key order within a level, so children are appended in key order */
	for (unsigned si = 0; si < l->stacks->len; si++) {
		const struct stack *s = stack_at(l, si);
		if (s->parent >= 0)
			g_array_append_val(stack_at(l, (unsigned)s->parent)->children, si);
	}
}

static void measure(struct layout *l)
{
	for (unsigned si = 0; si < l->stacks->len; si++) {
		struct stack *s = stack_at(l, si);
		int w = 0, y = STACK_PAD;
		for (unsigned c = 0; c < s->cards->len; c++) {
			struct card *card = s->cards->pdata[c];
			w = MAX(w, card_width(card));
			card->y = y;
			y += card->h + CARD_GAP;
		}
		s->w = w + 2 * STACK_PAD;
		s->h = y - CARD_GAP + STACK_PAD;
	}
}

static double subtree_span(struct layout *l, unsigned si)
{
	struct stack *s = stack_at(l, si);
	double below = 0;
	for (unsigned i = 0; i < s->children->len; i++)
		below += (i ? SIBLING_GAP : 0) + subtree_span(l, g_array_index(s->children, unsigned, i));
	s->span = MAX((double)s->w, below);
	return s->span;
}

static void place(struct layout *l, unsigned si, double left)
{
	struct stack *s = stack_at(l, si);
	s->x = left + (s->span - s->w) / 2;
	s->y = l->row_top[l->levels - 1 - s->level];
	double below = -SIBLING_GAP;
	for (unsigned i = 0; i < s->children->len; i++)
		below += SIBLING_GAP + stack_at(l, g_array_index(s->children, unsigned, i))->span;
	double x = left + (s->span - MAX(below, 0)) / 2;
	for (unsigned i = 0; i < s->children->len; i++) {
		unsigned ci = g_array_index(s->children, unsigned, i);
		place(l, ci, x);
		x += stack_at(l, ci)->span + SIBLING_GAP;
	}
}

static void wrap_into(GPtrArray *lines, const char *text)
{
	const char *p = text;
	while (strlen(p) > WRAP_CHARS) {
		const char *cut = p + WRAP_CHARS;
		while (cut > p && *cut != ' ')
			cut--;
		if (cut == p)
			cut = p + WRAP_CHARS;
		g_ptr_array_add(lines, g_strndup(p, (gsize)(cut - p)));
		p = *cut == ' ' ? cut + 1 : cut;
	}
	g_ptr_array_add(lines, g_strdup(p));
}

/* ---- the legend -------------------------------------------------------------------- */

/* Two columns of two keys, then the note. */
static const char *const legend_note[] = {
	"A dashed frame stacks the versions of one key range, one card per block; each card names the",
	"trees that reach it. A line joins two stacks when a block of the upper one points at a block",
	"of the lower one.",
};

struct legend_key {
	const char *fill, *border;
	int width;
	char *text;
};

static void legend_keys(struct legend_key keys[4], const struct drawing *d)
{
	keys[0] = (struct legend_key){ DRAWING_COLOUR_SHARED, DRAWING_COLOUR_BORDER, 1,
				       g_strdup("shared: refs > 1") };
	keys[1] = (struct legend_key){ DRAWING_COLOUR_EXCLUSIVE, DRAWING_COLOUR_BORDER, 1,
				       g_strdup("exclusive: one tree reaches it") };
	keys[2] = (struct legend_key){ DRAWING_COLOUR_THROUGH_PARENT, DRAWING_COLOUR_BORDER, 1,
				       g_strdup("shared through a shared parent (refs 1)") };
	keys[3] = (struct legend_key){ DRAWING_COLOUR_EXCLUSIVE, DRAWING_COLOUR_NEW_BORDER, 3,
				       g_strdup_printf("new: written by the newest generation (gen %" PRIu64 ")",
						       d->newest) };
}

static void legend_keys_clear(struct legend_key keys[4])
{
	for (int i = 0; i < 4; i++)
		g_free(keys[i].text);
}

#define LEGEND_ROW_PX 18
#define LEGEND_SWATCH_PX 22           /* the swatch and the space after it */

static int legend_column_x(const struct legend_key keys[4])
{
	return MARGIN + LEGEND_SWATCH_PX + text_px(MAX(strlen(keys[0].text), strlen(keys[1].text))) + 28;
}

static int legend_height(void)
{
	return 2 * LEGEND_ROW_PX + (int)G_N_ELEMENTS(legend_note) * LINE_PX + 6;
}

static double legend_width(const struct drawing *d)
{
	struct legend_key keys[4];
	legend_keys(keys, d);
	size_t note = 0;
	for (size_t i = 0; i < G_N_ELEMENTS(legend_note); i++)
		note = MAX(note, strlen(legend_note[i]));
	int w = MAX(legend_column_x(keys) + LEGEND_SWATCH_PX + text_px(MAX(strlen(keys[2].text), strlen(keys[3].text))),
		    2 * MARGIN + text_px(note)) + MARGIN;
	legend_keys_clear(keys);
	return w;
}

static void layout_make(struct layout *l, const struct drawing *d, const struct draw_header *h)
{
	*l = (struct layout){ .d = d, .h = h };
	l->families = g_array_new(false, false, sizeof(uint64_t));
	l->stacks = g_ptr_array_new_with_free_func(stack_free);
	l->stack_of = g_hash_table_new(g_int64_hash, g_int64_equal);
	l->header = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) title = g_string_new(NULL);
	drawing_append_title(title, h);
	wrap_into(l->header, title->str);
	if (d->summarized) {
		g_autoptr(GString) note = g_string_new(NULL);
		drawing_append_summary_note(note, d, h);
		wrap_into(l->header, note->str);
	}
	build_stacks(l);
	link_stacks(l);
	measure(l);
	int y = MARGIN + (int)l->header->len * (LINE_PX + 2) + legend_height() + 16;
	for (unsigned row = 0; row < l->levels; row++) {
		l->row_top[row] = y;
		int tallest = 0;
		for (unsigned si = 0; si < l->stacks->len; si++)
			if (stack_at(l, si)->level == l->levels - 1 - row)
				tallest = MAX(tallest, stack_at(l, si)->h);
		y += tallest + ROW_GAP;
	}
	l->height = y - ROW_GAP + MARGIN;
	double x = MARGIN;
	int family = -1;
	for (unsigned si = 0; si < l->stacks->len; si++) {
		const struct stack *s = stack_at(l, si);
		if (s->parent >= 0)
			continue;
		double span = subtree_span(l, si);
		if (family >= 0 && (int)s->family != family)
			x += FAMILY_GAP - SIBLING_GAP;
		family = (int)s->family;
		place(l, si, x);
		x += span + SIBLING_GAP;
	}
	size_t widest = 0;
	for (unsigned i = 0; i < l->header->len; i++)
		widest = MAX(widest, strlen(l->header->pdata[i]));
	l->width = MAX(x - SIBLING_GAP + MARGIN, (double)(text_px(widest) + 2 * MARGIN));
	l->width = MAX(l->width, legend_width(d));
}

static void layout_clear(struct layout *l)
{
	g_ptr_array_free(l->header, true);
	g_hash_table_destroy(l->stack_of);
	g_ptr_array_free(l->stacks, true);
	g_array_free(l->families, true);
}

/* ---- SVG ------------------------------------------------------------------------ */

static void svg_card(GString *out, const struct layout *l, const struct stack *s, const struct card *c)
{
	const struct drawn_block *b = c->block;
	bool fresh = block_new(l->d, b);
	double x = s->x + STACK_PAD, y = s->y + c->y;
	g_string_append_printf(out, "<g class=\"block\" data-bytenr=\"%" PRIu64 "\" data-level=\"%u\" data-trees=\"",
			       b->bytenr, b->level);
	for (unsigned i = 0; i < b->reached_by->len; i++)
		g_string_append_printf(out, "%s%" PRId64, i ? " " : "",
				       (int64_t)drawing_tree(l->d, g_array_index(b->reached_by, unsigned, i))->id);
	g_string_append(out, "\" data-children=\"");
	for (uint32_t i = 0; b->level && !drawing_cuts(l->d, b) && i < b->nritems; i++)
		g_string_append_printf(out, "%s%" PRIu64, i ? " " : "", b->entries[i].child);
	g_string_append(out, "\" data-first-key=\"");
	if (b->nritems)
		g_string_append_printf(out, "%" PRIu64 " %u %" PRIu64 " %u", b->entries[0].objectid, b->entries[0].type,
				       b->entries[0].offset, b->entries[0].snapshot);
	g_string_append_printf(out, "\" data-state=\"%s%s\">\n", block_shared(b) ? "shared" :
			       block_shared_through_parent(b) ? "shared-through-parent" : "exclusive",
			       fresh ? " new" : "");
	g_string_append_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"3\" fill=\"%s\" "
			       "stroke=\"%s\" stroke-width=\"%d\"/>\n", x, y, s->w - 2 * STACK_PAD, c->h,
			       drawing_fill_colour(b), fresh ? DRAWING_COLOUR_NEW_BORDER : DRAWING_COLOUR_BORDER, fresh ? 3 : 1);
	for (unsigned i = 0; i < c->lines->len; i++) {
		g_string_append_printf(out, "<text x=\"%.1f\" y=\"%.1f\"%s>", x + CARD_PAD,
				       y + CARD_PAD + (i + 1) * LINE_PX - 3.0, i ? "" : " font-weight=\"bold\"");
		drawing_append_escaped(out, c->lines->pdata[i]);
		g_string_append(out, "</text>\n");
	}
	g_string_append(out, "</g>\n");
}

static void svg_stack(GString *out, const struct layout *l, unsigned si)
{
	const struct stack *s = stack_at(l, si);
	g_string_append_printf(out, "<g class=\"stack\" data-stack=\"%u\" data-level=\"%u\" data-family=\"%u\" "
			       "data-box=\"%.1f %.1f %d %d\">\n", si, s->level, s->family, s->x, s->y, s->w, s->h);
	if (s->cards->len > 1)
		g_string_append_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"5\" "
				       "fill=\"#f0f0f0\" stroke=\"#909090\" stroke-dasharray=\"4 3\"/>\n",
				       s->x, s->y, s->w, s->h);
	for (unsigned c = 0; c < s->cards->len; c++)
		svg_card(out, l, s, s->cards->pdata[c]);
	g_string_append(out, "</g>\n");
}

/* One line per (stack, child stack), leaving the stack's bottom in the order
 * of the children it reaches (DS2). */
static void svg_lines(GString *out, const struct layout *l)
{
	for (unsigned si = 0; si < l->stacks->len; si++) {
		const struct stack *s = stack_at(l, si);
		unsigned n = s->children->len;
		for (unsigned i = 0; i < n; i++) {
			unsigned ci = g_array_index(s->children, unsigned, i);
			const struct stack *c = stack_at(l, ci);
			g_string_append_printf(out, "<line class=\"edge\" data-from=\"%u\" data-to=\"%u\" x1=\"%.1f\" "
					       "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", si, ci,
					       s->x + s->w * (i + 1.0) / (n + 1.0), s->y + s->h, c->x + c->w / 2.0, c->y);
		}
	}
}

static void svg_legend(GString *out, const struct drawing *d, double y)
{
	struct legend_key keys[4];
	legend_keys(keys, d);
	g_string_append(out, "<g class=\"legend\">\n");
	for (int i = 0; i < 4; i++) {
		double x = i < 2 ? MARGIN : legend_column_x(keys), top = y + (i % 2) * LEGEND_ROW_PX;
		g_string_append_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"12\" fill=\"%s\" "
				       "stroke=\"%s\" stroke-width=\"%d\"/><text x=\"%.1f\" y=\"%.1f\">", x, top,
				       keys[i].fill, keys[i].border, keys[i].width, x + LEGEND_SWATCH_PX, top + 10);
		drawing_append_escaped(out, keys[i].text);
		g_string_append(out, "</text>\n");
	}
	for (size_t i = 0; i < G_N_ELEMENTS(legend_note); i++)
		g_string_append_printf(out, "<text x=\"%d\" y=\"%.1f\">%s</text>\n", MARGIN,
				       y + 2 * LEGEND_ROW_PX + (double)(i + 1) * LINE_PX - 2, legend_note[i]);
	g_string_append(out, "</g>\n");
	legend_keys_clear(keys);
}

void draw_svg(GString *out, const struct drawing *d, const struct draw_header *h)
{
	struct layout l;
	layout_make(&l, d, h);
	if (l.ds1_broken)
		fprintf(stderr, "cowsim draw: %u blocks have parents in two stacks: their lines may cross\n",
			l.ds1_broken);
	g_string_append_printf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"cowsim-draw\" width=\"%.0f\" "
			       "height=\"%d\" viewBox=\"0 0 %.0f %d\" font-family=\"DejaVu Sans Mono, monospace\" "
			       "font-size=\"%d\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
			       l.width, l.height, l.width, l.height, FONT_PX);
	for (unsigned i = 0; i < l.header->len; i++) {
		g_string_append_printf(out, "<text class=\"title\" x=\"%d\" y=\"%d\"%s>", MARGIN,
				       MARGIN + (int)i * (LINE_PX + 2) + 10, i ? "" : " font-weight=\"bold\"");
		drawing_append_escaped(out, l.header->pdata[i]);
		g_string_append(out, "</text>\n");
	}
	svg_legend(out, d, MARGIN + (double)l.header->len * (LINE_PX + 2));
	g_string_append(out, "<g class=\"edges\" stroke=\"#606060\" stroke-width=\"1.2\">\n");
	svg_lines(out, &l);
	g_string_append(out, "</g>\n");
	for (unsigned si = 0; si < l.stacks->len; si++)
		svg_stack(out, &l, si);
	g_string_append(out, "</svg>\n");
	layout_clear(&l);
}

/* ---- the step-through page ---------------------------------------------------------- */

static const char steps_style[] =
	"body { font-family: sans-serif; margin: 0 16px 16px; }\n"
	"h1 { font-size: 1.3em; }\n"
	".controls { position: sticky; top: 0; background: #ffffff; padding: 8px 0; border-bottom: 1px solid #c0c0c0; "
	"z-index: 1; }\n"
	".controls input { width: 50%; vertical-align: middle; }\n"
	".controls output { margin-left: 1em; font-weight: bold; }\n"
	"section.step { overflow-x: auto; }\n";

static const char steps_script[] =
	"(function () {\n"
	"  var slider = document.getElementById('slider');\n"
	"  var caption = document.getElementById('caption');\n"
	"  var steps = document.querySelectorAll('section.step');\n"
	"  function show(i) {\n"
	"    for (var k = 0; k < steps.length; k++) steps[k].hidden = k !== i;\n"
	"    caption.textContent = 'step ' + (i + 1) + ' of ' + steps.length + ': ' + steps[i].dataset.caption;\n"
	"    document.body.dataset.step = i;\n"
	"  }\n"
	"  function go(i) {\n"
	"    slider.value = Math.max(0, Math.min(steps.length - 1, i));\n"
	"    slider.dispatchEvent(new Event('input'));\n"
	"  }\n"
	"  slider.addEventListener('input', function () { show(Number(slider.value)); });\n"
	"  document.getElementById('prev').addEventListener('click', function () { go(Number(slider.value) - 1); });\n"
	"  document.getElementById('next').addEventListener('click', function () { go(Number(slider.value) + 1); });\n"
	"  document.addEventListener('keydown', function (e) {\n"
	"    if (e.target === slider) return;\n"
	"    if (e.key === 'ArrowLeft') go(Number(slider.value) - 1);\n"
	"    if (e.key === 'ArrowRight') go(Number(slider.value) + 1);\n"
	"  });\n"
	"  function fromHash() {\n"
	"    var m = /^#step=(\\d+)$/.exec(location.hash);\n"
	"    if (m) go(Number(m[1]));\n"
	"  }\n"
	"  window.addEventListener('hashchange', fromHash);\n"
	"  show(0);\n"
	"  fromHash();\n"
	"})();\n";

void draw_steps_page(GString *out, const char *title, const GPtrArray *captions, const GPtrArray *svgs)
{
	g_string_append(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
	drawing_append_escaped(out, title);
	g_string_append_printf(out, "</title>\n<style>\n%s</style>\n</head>\n<body data-step=\"0\" data-steps=\"%u\">\n"
			       "<h1>", steps_style, svgs->len);
	drawing_append_escaped(out, title);
	g_string_append_printf(out, "</h1>\n<div class=\"controls\"><button id=\"prev\" type=\"button\">&#9664;</button> "
			       "<input type=\"range\" id=\"slider\" min=\"0\" max=\"%u\" value=\"0\" step=\"1\" "
			       "aria-label=\"step\"> <button id=\"next\" type=\"button\">&#9654;</button>"
			       "<output id=\"caption\"></output></div>\n", svgs->len ? svgs->len - 1 : 0);
	for (unsigned i = 0; i < svgs->len; i++) {
		g_string_append_printf(out, "<section class=\"step\" data-step=\"%u\" data-caption=\"", i);
		drawing_append_escaped(out, captions->pdata[i]);
		g_string_append_printf(out, "\"%s>\n", i ? " hidden" : "");
		const GString *svg = svgs->pdata[i];
		g_string_append_len(out, svg->str, (gssize)svg->len);
		g_string_append(out, "</section>\n");
	}
	g_string_append_printf(out, "<script>\n%s</script>\n</body>\n</html>\n", steps_script);
}
