/*
 * results/draw_text.h - `cowsim draw --format text` and `--format dot`.
 *
 * Text draws each tree as an indented outline, a block under the first tree
 * that reaches it ("drawn under ..." where another tree reaches it again);
 * DOT draws one cluster per tree with the same rule, every other pointer an
 * edge, for Graphviz to lay out. Both print the header of drawing.h first.
 *
 * Invariant
 *   DT1 Same drawing, same bytes.
 */
#ifndef COWSIM_RESULTS_DRAW_TEXT_H
#define COWSIM_RESULTS_DRAW_TEXT_H

#include <glib.h>

#include "drawing.h"

/* Appends the drawing D as text: a '#' header, then each tree's outline. */
void draw_text(GString *out, const struct drawing *d, const struct draw_header *h);
/* Appends the drawing D as one DOT digraph. */
void draw_dot(GString *out, const struct drawing *d, const struct draw_header *h);

#endif
