/*
 * sim/cmd_draw.c - `cowsim draw TRACE [--at LABEL] [--format text|dot|svg]`:
 * the trees of a small modeled filesystem, block by block.
 *
 * How it works
 *   The trace is replayed (replay.h) up to the mark LABEL, or to its end
 *   (then synced, as a mark is). At that point the sink walks every tree
 *   (fs_walk, model/fs.h) and keeps one record per block, in first-visit
 *   order, then the drawing is made from the records:
 *
 *     fs tree 5  (/)          snapshot tree 256 (/snap1)
 *       node A  refs 1          node A'  refs 1
 *        |     \                  |    \
 *       leaf B  leaf C  <---------+-----+      B and C: refs 2, '*'
 *
 *   A block is drawn once, in the cluster of the first tree that reaches it;
 *   every other tree or parent that points at it adds only an edge. Marks:
 *     '*'  shared: the extent tree counts more than one reference (refs > 1);
 *     '+'  shared through a parent: refs 1, but reachable from more than one
 *          tree because an ancestor is shared (btrfs copies it on the first
 *          write from any of them, as it does a '*' block);
 *     '^'  written by the newest generation among the drawn blocks: after a
 *          mark, the blocks the last commit wrote.
 *   DOT colours: '*' orange, '+' light orange, '^' a blue border. svg runs
 *   Graphviz `dot -Tsvg`; without dot, svg falls back to text (a warning
 *   says so, and -o X.svg becomes X.txt).
 *
 *   A large filesystem is summarized rather than drawn whole (the seed
 *   experiment on /usr/include ends with 15,627 blocks in the fs and extent
 *   trees: 53 MB of text; a DOT file of 11 MB already after the snapshots,
 *   more than Graphviz lays out in reasonable time). When the trees hold more
 *   than --max-blocks blocks, the drawing keeps the blocks of level >= L,
 *   for the lowest L that fits, and every tree's root; a kept block of
 *   level <= L is "cut": it is drawn with counts of the blocks below it
 *   instead of its children or items:
 *
 *     node A level 1 ... refs 2 *, 312 children; below: 312 blocks (312 leaves),
 *         290 shared *, 0 through a parent +, 22 new ^
 *
 *   A stderr line and the drawing's header say so; --max-blocks 0 draws all.
 *
 * Invariants
 *   DR1 Same trace, options and arguments: same bytes (text and dot; svg as
 *      the installed Graphviz makes it).
 *   DR2 Every block of the selected trees appears exactly once; every
 *      parent->child pointer and every root pointer is one edge. Summarized:
 *      every block is drawn once, or counted under each cut block that
 *      points at it (a leaf shared by two trees' own level-1 nodes counts
 *      under both); the header gives the blocks in all, each once.
 *   DR3 Exit status: 0 drawn; 1 the run failed (a model invariant, dot
 *      failed); 2 bad arguments, a malformed trace, the modeled device full
 *      (as cowsim run), or no mark LABEL.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "cli.h"
#include "commands.h"
#include "options.h"
#include "replay.h"

/* ---- which trees ----------------------------------------------------------- */

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

static const struct {
	const char *name;
	unsigned kind;
} kind_names[] = {
	{ "fs", KIND_FS }, { "atime", KIND_ATIME }, { "extent", KIND_EXTENT }, { "root", KIND_ROOT },
	{ "csum", KIND_CSUM }, { "free-space", KIND_FREE_SPACE }, { "dev", KIND_DEV }, { "uuid", KIND_UUID },
	{ "data-reloc", KIND_DATA_RELOC },
};

static unsigned tree_kind(const struct fs_walk_block *b)
{
	if (b->category == TREE_CATEGORY_FS)
		return KIND_FS;
	const char *name = fs_tree_name(b->tree_id);
	for (size_t i = 0; name && i < G_N_ELEMENTS(kind_names); i++)
		if (!strcmp(name, kind_names[i].name))
			return kind_names[i].kind;
	return KIND_DATA_RELOC;
}

static bool parse_trees(const char *text, unsigned *mask, GError **error)
{
	*mask = 0;
	g_auto(GStrv) names = g_strsplit(text, ",", -1);
	for (char **n = names; *n; n++) {
		unsigned found = 0;
		if (!strcmp(*n, "all"))
			found = ~0u;
		for (size_t i = 0; !found && i < G_N_ELEMENTS(kind_names); i++)
			if (!strcmp(*n, kind_names[i].name))
				found = kind_names[i].kind;
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

struct drawn_tree {
	char *title;                  /* "fs tree 5 (/)" */
	uint64_t id;
	uint64_t root;                /* the root block's address */
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

static void drawn_block_free(gpointer data)
{
	struct drawn_block *b = data;
	g_free(b->entries);
	g_free(b);
}

static void drawn_tree_clear(gpointer data)
{
	g_free(((struct drawn_tree *)data)->title);
}

static void drawing_init(struct drawing *d, unsigned mask)
{
	*d = (struct drawing){ .mask = mask };
	d->trees = g_array_new(false, true, sizeof(struct drawn_tree));
	g_array_set_clear_func(d->trees, drawn_tree_clear);
	d->blocks = g_ptr_array_new_with_free_func(drawn_block_free);
	d->by_bytenr = g_hash_table_new(g_int64_hash, g_int64_equal);
}

static void drawing_clear(struct drawing *d)
{
	g_hash_table_destroy(d->by_bytenr);
	g_ptr_array_free(d->blocks, true);
	g_array_free(d->trees, true);
}

static char *tree_title(const struct fs_walk_block *b, unsigned kind)
{
	const char *ro = b->tree_readonly ? ", read-only" : "";
	if (kind == KIND_FS && b->tree_path)
		return g_strdup_printf("%s tree %" PRIu64 " (%s%s)",
				       b->tree_id == FS_TOP_SUBVOLUME_ID ? "fs" : "snapshot", b->tree_id,
				       b->tree_path, ro);
	if (kind == KIND_FS)
		return g_strdup_printf("shared fs tree %" PRIu64 " (every subvolume)", b->tree_id);
	if (kind == KIND_ATIME)
		return g_strdup_printf("atime side table %" PRIu64 " (%s%s)", b->tree_id, b->tree_path, ro);
	for (size_t i = 0; i < G_N_ELEMENTS(kind_names); i++)
		if (kind_names[i].kind == kind)
			return g_strdup_printf("%s tree %" PRId64, kind_names[i].name, (int64_t)b->tree_id);
	return g_strdup("tree");
}

static struct drawn_block *record_block(struct drawing *d, const struct fs_walk_block *b)
{
	struct drawn_block *r = g_new0(struct drawn_block, 1);
	*r = (struct drawn_block){ .bytenr = b->bytenr, .owner = b->owner, .generation = b->generation,
				   .level = b->level, .refs = b->refs, .nritems = b->nritems,
				   .tree = d->trees->len - 1 };
	r->entries = g_memdup2(b->entries, sizeof(*b->entries) * b->nritems);
	g_ptr_array_add(d->blocks, r);
	g_hash_table_insert(d->by_bytenr, &r->bytenr, r);
	if (b->generation > d->newest)
		d->newest = b->generation;
	return r;
}

/* The walk visitor: every tree is walked whole, so a block's count of
 * trees reaching it is exact; it is recorded on its first visit only. */
static enum fs_walk_answer collect_block(const struct fs_walk_block *b, void *opaque)
{
	struct drawing *d = opaque;
	if (b->depth == 0) {
		unsigned kind = tree_kind(b);
		d->skipping = !(d->mask & kind);
		if (d->skipping)
			return FS_WALK_SKIP_CHILDREN;
		struct drawn_tree t = { .title = tree_title(b, kind), .id = b->tree_id, .root = b->bytenr };
		g_array_append_val(d->trees, t);
	}
	struct drawn_block *r = g_hash_table_lookup(d->by_bytenr, &b->bytenr);
	if (!r)
		r = record_block(d, b);
	r->root |= b->depth == 0;
	if (r->last_tree != d->trees->len) {
		r->last_tree = d->trees->len;
		r->trees_reaching++;
	}
	return FS_WALK_CONTINUE;
}

static struct drawn_block *find_block(const struct drawing *d, uint64_t bytenr)
{
	return g_hash_table_lookup(d->by_bytenr, &bytenr);
}

static const struct drawn_tree *tree_at(const struct drawing *d, unsigned i)
{
	return &g_array_index(d->trees, struct drawn_tree, i);
}

/* ---- summarizing a large drawing ------------------------------------------------ */

static bool is_drawn(const struct drawing *d, const struct drawn_block *b)
{
	return !d->summarized || b->level >= d->cut || b->root;
}

/* Drawn with the counts of the blocks below it instead of its children or items. */
static bool is_cut(const struct drawing *d, const struct drawn_block *b)
{
	return d->summarized && b->level <= d->cut;
}

static unsigned count_drawn(const struct drawing *d)
{
	unsigned n = 0;
	for (unsigned i = 0; i < d->blocks->len; i++)
		n += is_drawn(d, d->blocks->pdata[i]);
	return n;
}

/* With more than MAX blocks (0: no limit), cut at the lowest level at which
 * at most MAX are drawn, or at the highest level when none is that low. */
static void summarize(struct drawing *d, unsigned max)
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
static void append_key(GString *out, const struct fs_walk_entry *e)
{
	if (e->objectid > INT64_MAX)
		g_string_append_printf(out, "(%" PRId64, (int64_t)e->objectid);
	else
		g_string_append_printf(out, "(%" PRIu64, e->objectid);
	const char *name = fs_key_type_name(e->type);
	if (name)
		g_string_append_printf(out, " %s %" PRIu64, name, e->offset);
	else
		g_string_append_printf(out, " type %u %" PRIu64, e->type, e->offset);
	if (e->snapshot)
		g_string_append_printf(out, " @%u", e->snapshot);
	g_string_append_c(out, ')');
}

static bool shared(const struct drawn_block *b)
{
	return b->refs > 1;
}

static bool shared_through_parent(const struct drawn_block *b)
{
	return !shared(b) && b->trees_reaching > 1;
}

static const char *block_marks(const struct drawing *d, const struct drawn_block *b)
{
	bool newest = b->generation == d->newest;
	if (shared(b))
		return newest ? " *^" : " *";
	if (shared_through_parent(b))
		return newest ? " +^" : " +";
	return newest ? " ^" : "";
}

struct below {
	unsigned blocks, leaves, shared, through_parent, newest;
};

static void count_below(const struct drawing *d, const struct drawn_block *b, struct below *n)
{
	for (uint32_t i = 0; b->level && i < b->nritems; i++) {
		const struct drawn_block *child = find_block(d, b->entries[i].child);
		if (!child)
			continue;
		n->blocks++;
		n->leaves += !child->level;
		n->shared += shared(child);
		n->through_parent += shared_through_parent(child);
		n->newest += child->generation == d->newest;
		count_below(d, child, n);
	}
}

/* "312 children; below: 312 blocks (312 leaves), 290 shared *, ..." of a cut block. */
static void append_cut(GString *out, const struct drawing *d, const struct drawn_block *b)
{
	g_string_append_printf(out, "%u %s", b->nritems, b->level ? "children" : "items");
	if (!b->level)
		return;
	struct below n = { 0 };
	count_below(d, b, &n);
	g_string_append_printf(out, "; below: %u blocks (%u leaves), %u shared *, %u through a parent +, %u new ^",
			       n.blocks, n.leaves, n.shared, n.through_parent, n.newest);
}

static void append_block_head(GString *out, const struct drawing *d, const struct drawn_block *b)
{
	if (b->level)
		g_string_append_printf(out, "node %" PRIu64 " level %u", b->bytenr, b->level);
	else
		g_string_append_printf(out, "leaf %" PRIu64, b->bytenr);
	g_string_append_printf(out, " gen %" PRIu64 " owner %" PRId64 " refs %u%s", b->generation,
			       (int64_t)b->owner, b->refs, block_marks(d, b));
}

struct draw_header {
	const char *trace;
	const char *at;               /* the mark, or NULL for the end */
	uint64_t transid;
	uint32_t nodesize;
	uint64_t metadata_used;
	unsigned max_items;           /* 0: all */
	unsigned max_blocks;          /* 0: all */
};

static void append_title(GString *out, const struct draw_header *h)
{
	g_string_append_printf(out, "%s at %s%s: running transaction %" PRIu64 ", nodesize %u, metadata used %" PRIu64 " bytes",
			       h->trace, h->at ? "mark " : "the end", h->at ? h->at : "", h->transid, h->nodesize,
			       h->metadata_used);
}

static void append_summary_note(GString *out, const struct drawing *d, const struct draw_header *h)
{
	g_string_append_printf(out, "summarized: %u blocks in all, more than --max-blocks %u: drawn are the %u blocks "
			       "of level %u and up and the roots; the blocks below are counted under each node of "
			       "level %u that points at them (--max-blocks 0 draws every block)", d->blocks->len,
			       h->max_blocks, d->kept, d->cut, d->cut);
}

/* The title, the LEGEND and, when summarized, the note, SEP between them. */
static void append_header(GString *out, const struct drawing *d, const struct draw_header *h, const char *sep,
			  const char *legend)
{
	append_title(out, h);
	g_string_append_printf(out, "%s%s", sep, legend);
	if (d->summarized) {
		g_string_append(out, sep);
		append_summary_note(out, d, h);
	}
}

/* ---- text ---------------------------------------------------------------------- */

static void text_block(GString *out, const struct drawing *d, const struct draw_header *h, unsigned tree,
		       const struct drawn_block *b, unsigned depth)
{
	g_string_append_printf(out, "%*s", 2 + 2 * depth, "");
	append_block_head(out, d, b);
	if (b->tree != tree) {
		g_string_append_printf(out, ", drawn under %s\n", tree_at(d, b->tree)->title);
		return;
	}
	if (is_cut(d, b)) {
		g_string_append(out, ", ");
		append_cut(out, d, b);
		g_string_append_c(out, '\n');
		return;
	}
	g_string_append_printf(out, ", %u %s\n", b->nritems, b->level ? "children" : "items");
	for (uint32_t i = 0; i < b->nritems; i++) {
		const struct fs_walk_entry *e = &b->entries[i];
		if (b->level) {
			const struct drawn_block *child = find_block(d, e->child);
			if (child)
				text_block(out, d, h, tree, child, depth + 1);
			continue;
		}
		if (h->max_items && i >= h->max_items) {
			g_string_append_printf(out, "%*s... %u more items\n", 4 + 2 * depth, "", b->nritems - i);
			break;
		}
		g_string_append_printf(out, "%*s", 4 + 2 * depth, "");
		append_key(out, e);
		g_string_append_printf(out, " %u bytes\n", e->size);
	}
}

static void draw_text(GString *out, const struct drawing *d, const struct draw_header *h)
{
	g_string_append(out, "# ");
	append_header(out, d, h, "\n# ", "* shared (refs > 1)   + shared through a shared parent   "
					 "^ written by the newest generation");
	g_string_append_c(out, '\n');
	for (unsigned t = 0; t < d->trees->len; t++) {
		const struct drawn_tree *tree = tree_at(d, t);
		g_string_append_printf(out, "\n%s\n", tree->title);
		text_block(out, d, h, t, find_block(d, tree->root), 0);
	}
}

/* ---- dot ------------------------------------------------------------------------ */

static void append_html_escaped(GString *out, const char *text)
{
	g_autofree char *escaped = g_markup_escape_text(text, -1);
	g_string_append(out, escaped);
}

static const char *fill_colour(const struct drawn_block *b)
{
	if (shared(b))
		return "#f4a582";
	if (shared_through_parent(b))
		return "#fddbc7";
	return "#ffffff";
}

static void dot_block_label(GString *out, const struct drawing *d, const struct draw_header *h,
			    const struct drawn_block *b)
{
	bool newest = b->generation == d->newest;
	g_string_append_printf(out, "<<table border=\"%d\" cellborder=\"0\" cellspacing=\"0\" color=\"%s\" "
			       "bgcolor=\"%s\">", newest ? 3 : 1, newest ? "#2166ac" : "#404040", fill_colour(b));
	g_autoptr(GString) head = g_string_new(NULL);
	append_block_head(head, d, b);
	g_string_append(out, "<tr><td><b>");
	append_html_escaped(out, head->str);
	g_string_append(out, "</b></td></tr>");
	if (is_cut(d, b)) {
		g_autoptr(GString) cut = g_string_new(NULL);
		append_cut(cut, d, b);
		g_string_append(out, "<tr><td align=\"left\">");
		append_html_escaped(out, cut->str);
		g_string_append(out, "</td></tr></table>>");
		return;
	}
	for (uint32_t i = 0; i < b->nritems; i++) {
		if (!b->level && h->max_items && i >= h->max_items) {
			g_string_append_printf(out, "<tr><td>... %u more items</td></tr>", b->nritems - i);
			break;
		}
		g_autoptr(GString) key = g_string_new(NULL);
		append_key(key, &b->entries[i]);
		if (!b->level)
			g_string_append_printf(key, " %u bytes", b->entries[i].size);
		g_string_append_printf(out, "<tr><td align=\"left\" port=\"p%u\">", i);
		append_html_escaped(out, key->str);
		g_string_append(out, "</td></tr>");
	}
	g_string_append(out, "</table>>");
}

static void dot_edges(GString *out, const struct drawing *d)
{
	for (unsigned t = 0; t < d->trees->len; t++)
		g_string_append_printf(out, "  t%u -> b%" PRIu64 ";\n", t, tree_at(d, t)->root);
	for (unsigned i = 0; i < d->blocks->len; i++) {
		const struct drawn_block *b = d->blocks->pdata[i];
		if (!is_drawn(d, b) || is_cut(d, b))
			continue;
		for (uint32_t s = 0; b->level && s < b->nritems; s++)
			g_string_append_printf(out, "  b%" PRIu64 ":p%u -> b%" PRIu64 ";\n", b->bytenr, s,
					       b->entries[s].child);
	}
}

static void draw_dot(GString *out, const struct drawing *d, const struct draw_header *h)
{
	g_autoptr(GString) title = g_string_new(NULL);
	append_header(title, d, h, "\\n", " orange: shared (refs > 1); light orange: shared through a shared parent; "
					  "blue border: written by the newest generation");
	g_string_append_printf(out, "digraph cowsim {\n  graph [fontname=\"Helvetica\", fontsize=11, "
			       "labelloc=t, label=\"%s\"];\n  node [shape=plain, fontname=\"Helvetica\", "
			       "fontsize=10];\n  edge [arrowsize=0.6];\n", title->str);
	for (unsigned t = 0; t < d->trees->len; t++) {
		const struct drawn_tree *tree = tree_at(d, t);
		g_string_append_printf(out, "  subgraph cluster_%u {\n    label=\"%s\";\n    t%u [shape=box, "
				       "style=rounded, label=\"root of tree %" PRId64 "\"];\n", t, tree->title, t,
				       (int64_t)tree->id);
		for (unsigned i = 0; i < d->blocks->len; i++) {
			const struct drawn_block *b = d->blocks->pdata[i];
			if (b->tree != t || !is_drawn(d, b))
				continue;
			g_string_append_printf(out, "    b%" PRIu64 " [label=", b->bytenr);
			dot_block_label(out, d, h, b);
			g_string_append(out, "];\n");
		}
		g_string_append(out, "  }\n");
	}
	dot_edges(out, d);
	g_string_append(out, "}\n");
}

/* ---- svg through Graphviz --------------------------------------------------------- */

/* Runs `dot -Tsvg` on the DOT text; false with *error when it fails. */
static bool render_svg(const char *dot_program, const GString *dot, GString *svg, GError **error)
{
	g_autofree char *tmp = NULL;
	int fd = g_file_open_tmp("cowsim-draw-XXXXXX.dot", &tmp, error);
	if (fd < 0)
		return false;
	close(fd);
	if (!g_file_set_contents(tmp, dot->str, (gssize)dot->len, error)) {
		g_unlink(tmp);
		return false;
	}
	const char *argv[] = { dot_program, "-Tsvg", tmp, NULL };
	g_autofree char *out = NULL, *err = NULL;
	int wait_status = 0;
	bool ok = g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &wait_status,
			       error);
	g_unlink(tmp);
	if (ok && !g_spawn_check_wait_status(wait_status, NULL)) {
		g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, "%s -Tsvg failed: %s", dot_program,
			    err && *err ? g_strstrip(err) : "no message");
		return false;
	}
	if (ok)
		g_string_append(svg, out);
	return ok;
}

/* ---- the command ------------------------------------------------------------------ */

enum draw_format { FORMAT_TEXT, FORMAT_DOT, FORMAT_SVG };

/* The default --max-blocks: a few hundred blocks is what a reader can
 * follow and what Graphviz lays out in a second or two. */
#define DRAW_MAX_BLOCKS 300

struct draw_args {
	struct model_option_text model;
	char *at;
	char *format;
	char *output;
	char *trees;
	gint64 max_items;
	gint64 max_blocks;
	char **rest;
};

struct draw_sink {
	const struct draw_args *args;
	unsigned mask;
	uint32_t nodesize;
	GString *out;                 /* the drawing, once made */
	bool drawn;
	bool fell_back;               /* svg asked, dot missing: text instead */
	GPtrArray *marks_seen;        /* labels, for the "no such mark" message */
	enum draw_format format;
};

static bool draw_now(struct draw_sink *s, const struct replay_row *r, GError **error)
{
	struct drawing d;
	drawing_init(&d, s->mask);
	fs_walk(r->fs, collect_block, &d);
	struct draw_header h = { .trace = s->args->rest[0], .at = r->label, .transid = r->report.transid,
				 .nodesize = s->nodesize, .metadata_used = r->report.space.metadata_used,
				 .max_items = (unsigned)s->args->max_items,
				 .max_blocks = (unsigned)s->args->max_blocks };
	summarize(&d, h.max_blocks);
	if (d.summarized) {
		g_autoptr(GString) note = g_string_new(NULL);
		append_summary_note(note, &d, &h);
		fprintf(stderr, "cowsim draw: %s: %s\n", h.trace, note->str);
	}
	g_autofree char *dot_program = g_find_program_in_path("dot");
	bool ok = true;
	if (s->format == FORMAT_TEXT || (s->format == FORMAT_SVG && !dot_program)) {
		s->fell_back = s->format == FORMAT_SVG;
		draw_text(s->out, &d, &h);
	} else if (s->format == FORMAT_DOT) {
		draw_dot(s->out, &d, &h);
	} else {
		g_autoptr(GString) dot = g_string_new(NULL);
		draw_dot(dot, &d, &h);
		ok = render_svg(dot_program, dot, s->out, error);
	}
	drawing_clear(&d);
	s->drawn = ok;
	return ok;
}

static bool draw_sink_row(void *opaque, const struct replay_row *r, GError **error)
{
	struct draw_sink *s = opaque;
	if (r->label)
		g_ptr_array_add(s->marks_seen, g_strdup(r->label));
	bool wanted = s->args->at ? (r->label && !strcmp(r->label, s->args->at)) : !r->label;
	return !wanted || s->drawn || draw_now(s, r, error);
}

static bool is_count(gint64 n)
{
	return n >= 0 && n <= UINT32_MAX;
}

static const struct cli_doc draw_doc = {
	.command = "draw",
	.args = "TRACE",
	.summary = "Replays TRACE up to the mark LABEL (or its end) and draws the trees: each block\n"
		   "with its address, generation, owner, references and keys (items: key and size).",
	.notes = "Marks: '*' shared (refs > 1), '+' shared through a shared parent, '^' written by\n"
		 "the newest generation (DOT: orange, light orange, a blue border). A block is drawn\n"
		 "once, under the first tree that reaches it. svg needs Graphviz 'dot' (Debian\n"
		 "package graphviz); without it svg falls back to text. With more blocks than\n"
		 "--max-blocks (the seed experiment on a real tree), the drawing keeps the upper\n"
		 "levels and every root, and counts the blocks below them.",
	.examples = "  cowsim draw docs/tutorial/ten-files.trace --nodesize 4K --at after_read\n"
		    "  cowsim draw docs/tutorial/ten-files.trace --nodesize 4K --at after_read --format svg -o a.svg",
	.exits = "  0  drawn\n"
		 "  1  the run failed\n"
		 "  2  bad arguments, a malformed trace or no such mark",
	.model_options = true,
};

static int parse_draw_args(int argc, char **argv, struct draw_args *a, struct fs_config *config,
			   enum draw_format *format, unsigned *mask)
{
	const GOptionEntry entries[] = {
		{ "at", 'a', 0, G_OPTION_ARG_STRING, &a->at, "draw at the mark LABEL (default: the end, synced)",
		  "LABEL" },
		{ "format", 'f', 0, G_OPTION_ARG_STRING, &a->format, "text (default), dot or svg", "FORMAT" },
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output, "write to FILE (default and '-': stdout)", "FILE" },
		{ "trees", 't', 0, G_OPTION_ARG_STRING, &a->trees,
		  "trees to draw: fs, atime, extent, root, csum, free-space, dev, uuid, data-reloc, all "
		  "(default fs,atime,extent)", "LIST" },
		{ "max-items", 0, 0, G_OPTION_ARG_INT64, &a->max_items, "show at most N items per leaf (0: all)",
		  "N" },
		{ "max-blocks", 0, 0, G_OPTION_ARG_INT64, &a->max_blocks,
		  "with more blocks than N, draw the upper levels and count the blocks below them "
		  "(default " G_STRINGIFY(DRAW_MAX_BLOCKS) ", 0: draw all)", "N" },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->rest, NULL, NULL },
		{ NULL },
	};
	g_autoptr(GOptionContext) context = cli_context_new(&draw_doc);
	g_option_context_add_main_entries(context, entries, NULL);
	options_add_model_entries(context, &a->model);
	if (!cli_parse(context, &draw_doc, &argc, &argv))
		return EXIT_BAD_INPUT;
	g_autoptr(GError) error = NULL;
	if (!a->rest || !a->rest[0] || a->rest[1]) {
		fprintf(stderr, "cowsim draw: give exactly one TRACE (see 'cowsim draw --help')\n");
		return EXIT_BAD_INPUT;
	}
	const char *f = a->format ? a->format : "text";
	if (!strcmp(f, "text"))
		*format = FORMAT_TEXT;
	else if (!strcmp(f, "dot"))
		*format = FORMAT_DOT;
	else if (!strcmp(f, "svg"))
		*format = FORMAT_SVG;
	else {
		fprintf(stderr, "cowsim draw: --format: unknown format '%s' (text, dot, svg)\n", f);
		return EXIT_BAD_INPUT;
	}
	const char *bad = !is_count(a->max_items) ? "max-items" : !is_count(a->max_blocks) ? "max-blocks" : NULL;
	if (bad) {
		fprintf(stderr, "cowsim draw: --%s takes a count, 0 or more\n", bad);
		return EXIT_BAD_INPUT;
	}
	if (!parse_trees(a->trees ? a->trees : "fs,atime,extent", mask, &error) ||
	    !options_model_config(&a->model, config, &error)) {
		fprintf(stderr, "cowsim draw: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	return EXIT_OK;
}

static void free_draw_args(struct draw_args *a)
{
	options_model_text_clear(&a->model);
	g_free(a->at);
	g_free(a->format);
	g_free(a->output);
	g_free(a->trees);
	g_strfreev(a->rest);
}

static int write_drawing(const struct draw_args *a, const struct draw_sink *s)
{
	g_autofree char *path = g_strdup(a->output);
	if (s->fell_back) {
		fprintf(stderr, "cowsim draw: Graphviz 'dot' is not installed (Debian package graphviz): "
				"drawing as text instead\n");
		if (path && g_str_has_suffix(path, ".svg"))
			strcpy(path + strlen(path) - 3, "txt");
	}
	if (!path || !strcmp(path, "-")) {
		fwrite(s->out->str, 1, s->out->len, stdout);
		return fflush(stdout) ? EXIT_RUN_FAILED : EXIT_OK;
	}
	g_autoptr(GError) error = NULL;
	if (!g_file_set_contents(path, s->out->str, (gssize)s->out->len, &error)) {
		fprintf(stderr, "cowsim draw: %s\n", error->message);
		return EXIT_RUN_FAILED;
	}
	return EXIT_OK;
}

static void print_no_mark(const struct draw_args *a, const struct draw_sink *s)
{
	g_autoptr(GString) seen = g_string_new(NULL);
	for (unsigned i = 0; i < s->marks_seen->len; i++)
		g_string_append_printf(seen, "%s%s", i ? ", " : "", (char *)s->marks_seen->pdata[i]);
	fprintf(stderr, "cowsim draw: %s: no mark '%s' (its marks: %s)\n", a->rest[0], a->at,
		seen->len ? seen->str : "none");
}

static int run_draw(struct draw_args *a, struct replay_options *options, struct draw_sink *s)
{
	g_autoptr(GError) error = NULL;
	struct replay_outcome outcome;
	enum replay_status status = replay_run(a->rest[0], options, draw_sink_row, s, &outcome, &error);
	if (status != REPLAY_DONE) {
		fprintf(stderr, "cowsim draw: %s\n", error ? error->message : "failed");
		return status == REPLAY_BAD_INPUT || status == REPLAY_ENOSPC ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
	}
	if (!s->drawn) {
		print_no_mark(a, s);
		return EXIT_BAD_INPUT;
	}
	return write_drawing(a, s);
}

int cmd_draw(int argc, char **argv)
{
	struct draw_args args = { .max_blocks = DRAW_MAX_BLOCKS };
	struct replay_options options = { 0 };
	enum draw_format format = FORMAT_TEXT;
	unsigned mask = 0;
	int status = parse_draw_args(argc, argv, &args, &options.fs, &format, &mask);
	if (status != EXIT_OK) {
		free_draw_args(&args);
		return status;
	}
	options.stop_at_mark = args.at;
	options.row_at_end = !args.at;
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GPtrArray) marks = g_ptr_array_new_with_free_func(g_free);
	struct draw_sink sink = { .args = &args, .mask = mask, .nodesize = options.fs.nodesize, .out = out,
				  .marks_seen = marks, .format = format };
	status = run_draw(&args, &options, &sink);
	free_draw_args(&args);
	return status;
}
