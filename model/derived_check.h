/*
 * model/derived_check.h - checkers for the trees derived from the model's
 * state, as `btrfs check` audits a filesystem's trees against each other.
 *
 * refs_check() and blockstore_check() audit the counts the model keeps on
 * blocks, extents and chunks. These audit what the model *wrote* from those
 * counts, item by item:
 *
 *   extent tree      extent_tree_check.c     ET1-ET4
 *   root, uuid trees root_tree_check.c       RT1-RT4
 *   csum tree        csum_tree_check.c       CS1-CS2
 *   free-space tree  free_space_tree_check.c FS1-FS2
 *
 * and each design's own checker (fs_design_ops.check: design_btrfs.c DB1-DB2,
 * design_keyed.c DK3-DK6, the keyed design's snapshot ids, visibility and
 * whiteouts) runs after them.
 *
 * The extent and free-space trees lag the counts during a transaction (the
 * delayed refs of refs.c, the commit of fs.c), so their checkers compare a
 * pending head or a changed chunk with what was last written for it, and
 * everything else with the present counts: right after a commit, when
 * nothing is pending, that is the whole tree against what the references
 * imply. The others are exact at every moment.
 *
 * Every checker reports the first violation in *error (MODEL_ERROR_CORRUPT)
 * in one format,
 *
 *   corrupt <type>: <id>, <reason>[, <value>]
 *
 * e.g. "corrupt metadata item: 30441472, size, 42 (its 2 refs take 33)".
 */
#ifndef COWSIM_MODEL_DERIVED_CHECK_H
#define COWSIM_MODEL_DERIVED_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

#include "btree.h"

struct fs;

/* `live`: every reachable tree block, as refs_check() fills it. */
bool extent_tree_check(const struct fs *fs, GHashTable *live, GError **error);
bool root_tree_check(const struct fs *fs, GError **error);
bool csum_tree_check(const struct fs *fs, GHashTable *live, GError **error);
bool free_space_tree_check(const struct fs *fs, GError **error);

/* All of the above, in that order (fs_check calls it last). */
bool derived_check(const struct fs *fs, GHashTable *live, GError **error);

/* Sets *error to "corrupt <type>: <id>, <reason>" (reason from fmt) and
 * returns false. */
bool derived_corrupt(GError **error, const char *type, uint64_t id, const char *fmt, ...) G_GNUC_PRINTF(4, 5);

/* Every item of a tree, in key order (every version, whiteouts included),
 * until `visit` returns false. */
void derived_visit_tree(const struct btree *tree, btree_visit_fn visit, void *opaque);

/* The live data extents (struct data_extent *, a set) the file extent items
 * of the `live` leaves map. */
GHashTable *derived_live_data(GHashTable *live);

#endif
