/*
 * results/drawing.c - the blocks to draw and the words for them (drawing.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "drawing.h"

/* ---- which trees ----------------------------------------------------------- */

static const struct {
	const char *name;
	unsigned kind;
} kind_names[] = {
	{ "fs", KIND_FS }, { "atime", KIND_ATIME }, { "extent", KIND_EXTENT }, { "root", KIND_ROOT },
	{ "csum", KIND_CSUM }, { "free-space", KIND_FREE_SPACE }, { "dev", KIND_DEV }, { "uuid", KIND_UUID },
	{ "data-reloc", KIND_DATA_RELOC },
};

unsigned drawing_kind_by_name(const char *name)
{
	for (size_t i = 0; name && i < G_N_ELEMENTS(kind_names); i++)
		if (!strcmp(name, kind_names[i].name))
			return kind_names[i].kind;
	return 0;
}

const char *drawing_kind_name(unsigned kind)
{
	for (size_t i = 0; i < G_N_ELEMENTS(kind_names); i++)
		if (kind_names[i].kind == kind)
			return kind_names[i].name;
	return NULL;
}

bool drawing_parse_trees(const char *text, unsigned *mask, GError **error)
{
	*mask = 0;
	g_auto(GStrv) names = g_strsplit(text, ",", -1);
	for (char **n = names; *n; n++) {
		unsigned found = 0;
		if (!strcmp(*n, "all"))
			found = ~0u;
		if (!found)
			found = drawing_kind_by_name(*n);
		if (!found) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "--trees: unknown tree '%s' (fs, atime, extent, root, csum, free-space, dev, "
				    "uuid, data-reloc, all)", *n);
			return false;
		}
		*mask |= found;
	}
	return true;
}

/* ---- the records ----------------------------------------------------------- */

static void drawn_block_free(gpointer data)
{
	struct drawn_block *b = data;
	g_free(b->entries);
	g_array_free(b->reached_by, true);
	g_free(b);
}

static void drawn_tree_clear(gpointer data)
{
	g_free(((struct drawn_tree *)data)->title);
}

void drawing_init(struct drawing *d)
{
	*d = (struct drawing){ 0 };
	d->trees = g_array_new(false, true, sizeof(struct drawn_tree));
	g_array_set_clear_func(d->trees, drawn_tree_clear);
	d->blocks = g_ptr_array_new_with_free_func(drawn_block_free);
	d->by_bytenr = g_hash_table_new(g_int64_hash, g_int64_equal);
}

void drawing_clear(struct drawing *d)
{
	g_hash_table_destroy(d->by_bytenr);
	g_ptr_array_free(d->blocks, true);
	g_array_free(d->trees, true);
}

void drawing_begin_tree(struct drawing *d, char *title, uint64_t id, uint64_t root, unsigned kind)
{
	struct drawn_tree t = { .title = title, .id = id, .root = root, .kind = kind };
	g_array_append_val(d->trees, t);
}

static struct drawn_block *record_block(struct drawing *d, const struct drawing_visit *v)
{
	struct drawn_block *r = g_new0(struct drawn_block, 1);
	*r = (struct drawn_block){ .bytenr = v->bytenr, .owner = v->owner, .generation = v->generation,
				   .level = v->level, .refs = v->refs, .nritems = v->nritems,
				   .tree = d->trees->len - 1 };
	r->reached_by = g_array_new(false, false, sizeof(unsigned));
	r->entries = g_memdup2(v->entries, sizeof(*v->entries) * v->nritems);
	g_ptr_array_add(d->blocks, r);
	g_hash_table_insert(d->by_bytenr, &r->bytenr, r);
	if (v->generation > d->newest)
		d->newest = v->generation;
	return r;
}

/* Every tree is walked whole, so a block's count of trees reaching it is
 * exact; it is recorded on its first visit only. */
void drawing_add_block(struct drawing *d, const struct drawing_visit *v)
{
	struct drawn_block *r = g_hash_table_lookup(d->by_bytenr, &v->bytenr);
	if (!r)
		r = record_block(d, v);
	r->root |= v->root;
	if (r->last_tree != d->trees->len) {
		r->last_tree = d->trees->len;
		r->trees_reaching++;
		unsigned t = d->trees->len - 1;
		g_array_append_val(r->reached_by, t);
	}
}

struct drawn_block *drawing_block(const struct drawing *d, uint64_t bytenr)
{
	return g_hash_table_lookup(d->by_bytenr, &bytenr);
}

const struct drawn_tree *drawing_tree(const struct drawing *d, unsigned i)
{
	return &g_array_index(d->trees, struct drawn_tree, i);
}

/* ---- summarizing a large drawing ------------------------------------------------ */

bool drawing_shows(const struct drawing *d, const struct drawn_block *b)
{
	return !d->summarized || b->level >= d->cut || b->root;
}

/* Drawn with the counts of the blocks below it instead of its children or items. */
bool drawing_cuts(const struct drawing *d, const struct drawn_block *b)
{
	return d->summarized && b->level <= d->cut;
}

static unsigned count_drawn(const struct drawing *d)
{
	unsigned n = 0;
	for (unsigned i = 0; i < d->blocks->len; i++)
		n += drawing_shows(d, d->blocks->pdata[i]);
	return n;
}

/* With more than MAX blocks (0: no limit), cut at the lowest level at which
 * at most MAX are drawn, or at the highest level when none is that low. */
void drawing_summarize(struct drawing *d, unsigned max)
{
	if (!max || d->blocks->len <= max)
		return;
	unsigned top = 0;
	for (unsigned i = 0; i < d->blocks->len; i++)
		top = MAX(top, ((const struct drawn_block *)d->blocks->pdata[i])->level);
	d->summarized = true;
	for (d->cut = 1; d->cut < top; d->cut++)
		if (count_drawn(d) <= max)
			break;
	d->kept = count_drawn(d);
}

/* ---- formatting shared by text and dot -------------------------------------- */

/* "(256 INODE_ITEM 0)" as btrfs print-tree writes keys; ids above 2^63 are
 * the negative special objectids (-9 data reloc, -10 csum). */
void drawing_append_key(GString *out, const struct drawn_entry *e)
{
	if (e->objectid > INT64_MAX)
		g_string_append_printf(out, "(%" PRId64, (int64_t)e->objectid);
	else
		g_string_append_printf(out, "(%" PRIu64, e->objectid);
	if (e->type_name)
		g_string_append_printf(out, " %s %" PRIu64, e->type_name, e->offset);
	else
		g_string_append_printf(out, " type %u %" PRIu64, e->type, e->offset);
	if (e->snapshot)
		g_string_append_printf(out, " @%u", e->snapshot);
	g_string_append_c(out, ')');
}

const char *drawing_fill_colour(const struct drawn_block *b)
{
	if (block_shared(b))
		return DRAWING_COLOUR_SHARED;
	if (block_shared_through_parent(b))
		return DRAWING_COLOUR_THROUGH_PARENT;
	return DRAWING_COLOUR_EXCLUSIVE;
}

void drawing_append_escaped(GString *out, const char *text)
{
	g_autofree char *escaped = g_markup_escape_text(text, -1);
	g_string_append(out, escaped);
}

bool block_shared(const struct drawn_block *b)
{
	return b->refs > 1;
}

bool block_new(const struct drawing *d, const struct drawn_block *b)
{
	return b->generation == d->newest;
}

bool block_shared_through_parent(const struct drawn_block *b)
{
	return !block_shared(b) && b->trees_reaching > 1;
}

static const char *block_marks(const struct drawing *d, const struct drawn_block *b)
{
	bool newest = block_new(d, b);
	if (block_shared(b))
		return newest ? " *^" : " *";
	if (block_shared_through_parent(b))
		return newest ? " +^" : " +";
	return newest ? " ^" : "";
}

struct below {
	unsigned blocks, leaves, shared, through_parent, newest;
};

static void count_below(const struct drawing *d, const struct drawn_block *b, struct below *n)
{
	for (uint32_t i = 0; b->level && i < b->nritems; i++) {
		const struct drawn_block *child = drawing_block(d, b->entries[i].child);
		if (!child)
			continue;
		n->blocks++;
		n->leaves += !child->level;
		n->shared += block_shared(child);
		n->through_parent += block_shared_through_parent(child);
		n->newest += block_new(d, child);
		count_below(d, child, n);
	}
}

/* "312 children; below: 312 blocks (312 leaves), 290 shared *, ..." of a cut block. */
void drawing_append_cut(GString *out, const struct drawing *d, const struct drawn_block *b)
{
	g_string_append_printf(out, "%u %s", b->nritems, b->level ? "children" : "items");
	if (!b->level)
		return;
	struct below n = { 0 };
	count_below(d, b, &n);
	g_string_append_printf(out, "; below: %u blocks (%u leaves), %u shared *, %u through a parent +, %u new ^",
			       n.blocks, n.leaves, n.shared, n.through_parent, n.newest);
}

void drawing_append_block_head(GString *out, const struct drawing *d, const struct drawn_block *b)
{
	if (b->level)
		g_string_append_printf(out, "node %" PRIu64 " level %u", b->bytenr, b->level);
	else
		g_string_append_printf(out, "leaf %" PRIu64, b->bytenr);
	g_string_append_printf(out, " gen %" PRIu64 " owner %" PRId64 " refs %u%s", b->generation,
			       (int64_t)b->owner, b->refs, block_marks(d, b));
}

void drawing_append_title(GString *out, const struct draw_header *h)
{
	if (h->at)
		g_string_append_printf(out, "%s at mark %s", h->trace, h->at);
	else if (h->after_op)
		g_string_append_printf(out, "%s after op %" PRIu64, h->trace, h->after_op);
	else
		g_string_append_printf(out, "%s at the end", h->trace);
	g_string_append_printf(out, ": running transaction %" PRIu64 ", nodesize %u, metadata used %" PRIu64 " bytes",
			       h->transid, h->nodesize, h->metadata_used);
}

void drawing_append_summary_note(GString *out, const struct drawing *d, const struct draw_header *h)
{
	g_string_append_printf(out, "summarized: %u blocks in all, more than --max-blocks %u: drawn are the %u blocks "
			       "of level %u and up and the roots; the blocks below are counted under each node of "
			       "level %u that points at them (--max-blocks 0 draws every block)", d->blocks->len,
			       h->max_blocks, d->kept, d->cut, d->cut);
}

/* The title, the LEGEND and, when summarized, the note, SEP between them. */
void drawing_append_header(GString *out, const struct drawing *d, const struct draw_header *h, const char *sep,
			  const char *legend)
{
	drawing_append_title(out, h);
	g_string_append_printf(out, "%s%s", sep, legend);
	if (d->summarized) {
		g_string_append(out, sep);
		drawing_append_summary_note(out, d, h);
	}
}
