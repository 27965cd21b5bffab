/*
 * sim/draw_collect.h - a drawing (results/drawing.h) of the modeled trees:
 * the bridge between the model's fs_walk and the drawing, so results/ never
 * sees a model type.
 *
 * Invariant
 *   DCL1 The drawing holds the trees of the selected kinds, in walk order,
 *       and every block fs_walk visits in them (DW1 then holds as for any
 *       collector); the trees of other kinds are not descended.
 */
#ifndef COWSIM_SIM_DRAW_COLLECT_H
#define COWSIM_SIM_DRAW_COLLECT_H

#include "drawing.h"
#include "fs.h"

/* Fills D, fresh from drawing_init(), with the trees of FS whose kind is in
 * MASK (enum draw_tree_kind). */
void draw_collect(struct drawing *d, const struct fs *fs, unsigned mask);

#endif
