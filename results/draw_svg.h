/*
 * results/draw_svg.h - `cowsim draw --format svg` and `cowsim draw --steps`:
 * a drawing laid out in key order with no crossing lines, as SVG, and a
 * self-contained HTML page that steps through several drawings with a slider.
 *
 * The layout (the picture in draw_svg.c): the blocks of one level that cover
 * overlapping key ranges (the versions of one part of the tree: tree 5's
 * copy of a leaf and the snapshot's original) are stacked in one column, one
 * card per block; the stacks of a level form a row, in key order; a line joins
 * a stack to the stack below it when a block of the first points at a block
 * of the second. Every block is drawn once; each card names the trees that
 * reach it.
 *
 * Invariants
 *   DS1 The stacks form a forest: the parents of every block of a stack lie
 *       in one stack (a parent's key range holds its child's, so parents of
 *       overlapping children overlap).
 *   DS2 No two lines cross and no line passes through a stack: a stack's
 *       subtree owns an x interval of its own, disjoint from its siblings',
 *       its lines stay inside it, and the lines of one stack leave it in the
 *       order of the stacks they reach.
 *   DS3 Same drawing, same bytes (coordinates are printed to 0.1 px from
 *       integer arithmetic on text lengths).
 */
#ifndef COWSIM_RESULTS_DRAW_SVG_H
#define COWSIM_RESULTS_DRAW_SVG_H

#include <glib.h>

#include "drawing.h"

/* Appends one <svg> element (no XML prolog): the drawing D with its title,
 * legend and, when summarized, the note. */
void draw_svg(GString *out, const struct drawing *d, const struct draw_header *h);

/* Appends an HTML page titled TITLE showing SVGS (GString *) one at a time,
 * CAPTIONS (char *) naming each; a slider, buttons and the arrow keys step
 * through them, and "#step=N" in the address opens step N (0-based). The page
 * needs no network and no file beside it. */
void draw_steps_page(GString *out, const char *title, const GPtrArray *captions, const GPtrArray *svgs);

#endif
