/*
 * results/draw_text.c - a drawing as indented text and as Graphviz DOT
 * (draw_text.h).
 */
#include <inttypes.h>
#include <stdio.h>

#include "draw_text.h"

/* ---- text ---------------------------------------------------------------------- */

static void text_block(GString *out, const struct drawing *d, const struct draw_header *h, unsigned tree,
		       const struct drawn_block *b, unsigned depth)
{
	g_string_append_printf(out, "%*s", 2 + 2 * depth, "");
	drawing_append_block_head(out, d, b);
	if (b->tree != tree) {
		g_string_append_printf(out, ", drawn under %s\n", drawing_tree(d, b->tree)->title);
		return;
	}
	if (drawing_cuts(d, b)) {
		g_string_append(out, ", ");
		drawing_append_cut(out, d, b);
		g_string_append_c(out, '\n');
		return;
	}
	g_string_append_printf(out, ", %u %s\n", b->nritems, b->level ? "children" : "items");
	for (uint32_t i = 0; i < b->nritems; i++) {
		const struct drawn_entry *e = &b->entries[i];
		if (b->level) {
			const struct drawn_block *child = drawing_block(d, e->child);
			if (child)
				text_block(out, d, h, tree, child, depth + 1);
			continue;
		}
		if (h->max_items && i >= h->max_items) {
			g_string_append_printf(out, "%*s... %u more items\n", 4 + 2 * depth, "", b->nritems - i);
			break;
		}
		g_string_append_printf(out, "%*s", 4 + 2 * depth, "");
		drawing_append_key(out, e);
		g_string_append_printf(out, " %u bytes\n", e->size);
	}
}

void draw_text(GString *out, const struct drawing *d, const struct draw_header *h)
{
	g_string_append(out, "# ");
	drawing_append_header(out, d, h, "\n# ", "* shared (refs > 1)   + shared through a shared parent   "
					 "^ written by the newest generation");
	g_string_append_c(out, '\n');
	for (unsigned t = 0; t < d->trees->len; t++) {
		const struct drawn_tree *tree = drawing_tree(d, t);
		g_string_append_printf(out, "\n%s\n", tree->title);
		text_block(out, d, h, t, drawing_block(d, tree->root), 0);
	}
}

/* ---- dot ------------------------------------------------------------------------ */

static void dot_block_label(GString *out, const struct drawing *d, const struct draw_header *h,
			    const struct drawn_block *b)
{
	bool newest = block_new(d, b);
	g_string_append_printf(out, "<<table border=\"%d\" cellborder=\"0\" cellspacing=\"0\" color=\"%s\" "
			       "bgcolor=\"%s\">", newest ? 3 : 1,
			       newest ? DRAWING_COLOUR_NEW_BORDER : DRAWING_COLOUR_BORDER, drawing_fill_colour(b));
	g_autoptr(GString) head = g_string_new(NULL);
	drawing_append_block_head(head, d, b);
	g_string_append(out, "<tr><td><b>");
	drawing_append_escaped(out, head->str);
	g_string_append(out, "</b></td></tr>");
	if (drawing_cuts(d, b)) {
		g_autoptr(GString) cut = g_string_new(NULL);
		drawing_append_cut(cut, d, b);
		g_string_append(out, "<tr><td align=\"left\">");
		drawing_append_escaped(out, cut->str);
		g_string_append(out, "</td></tr></table>>");
		return;
	}
	for (uint32_t i = 0; i < b->nritems; i++) {
		if (!b->level && h->max_items && i >= h->max_items) {
			g_string_append_printf(out, "<tr><td>... %u more items</td></tr>", b->nritems - i);
			break;
		}
		g_autoptr(GString) key = g_string_new(NULL);
		drawing_append_key(key, &b->entries[i]);
		if (!b->level)
			g_string_append_printf(key, " %u bytes", b->entries[i].size);
		g_string_append_printf(out, "<tr><td align=\"left\" port=\"p%u\">", i);
		drawing_append_escaped(out, key->str);
		g_string_append(out, "</td></tr>");
	}
	g_string_append(out, "</table>>");
}

static void dot_edges(GString *out, const struct drawing *d)
{
	for (unsigned t = 0; t < d->trees->len; t++)
		g_string_append_printf(out, "  t%u -> b%" PRIu64 ";\n", t, drawing_tree(d, t)->root);
	for (unsigned i = 0; i < d->blocks->len; i++) {
		const struct drawn_block *b = d->blocks->pdata[i];
		if (!drawing_shows(d, b) || drawing_cuts(d, b))
			continue;
		for (uint32_t s = 0; b->level && s < b->nritems; s++)
			g_string_append_printf(out, "  b%" PRIu64 ":p%u -> b%" PRIu64 ";\n", b->bytenr, s,
					       b->entries[s].child);
	}
}

void draw_dot(GString *out, const struct drawing *d, const struct draw_header *h)
{
	g_autoptr(GString) title = g_string_new(NULL);
	drawing_append_header(title, d, h, "\\n", " orange: shared (refs > 1); light orange: shared through a shared parent; "
					  "blue border: written by the newest generation");
	g_string_append_printf(out, "digraph cowsim {\n  graph [fontname=\"Helvetica\", fontsize=11, "
			       "labelloc=t, label=\"%s\"];\n  node [shape=plain, fontname=\"Helvetica\", "
			       "fontsize=10];\n  edge [arrowsize=0.6];\n", title->str);
	for (unsigned t = 0; t < d->trees->len; t++) {
		const struct drawn_tree *tree = drawing_tree(d, t);
		g_string_append_printf(out, "  subgraph cluster_%u {\n    label=\"%s\";\n    t%u [shape=box, "
				       "style=rounded, label=\"root of tree %" PRId64 "\"];\n", t, tree->title, t,
				       (int64_t)tree->id);
		for (unsigned i = 0; i < d->blocks->len; i++) {
			const struct drawn_block *b = d->blocks->pdata[i];
			if (b->tree != t || !drawing_shows(d, b))
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
