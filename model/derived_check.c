/*
 * model/derived_check.c - what the derived-tree checkers share, and the one
 * call fs_check() makes (derived_check.h).
 */
#include "model_error.h"
#include "derived_check.h"

#include <inttypes.h>

#include "constants.h"
#include "refs.h"

bool derived_corrupt(GError **error, const char *type, uint64_t id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *reason = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT, "corrupt %s: %" PRIu64 ", %s", type, id, reason);
	return false;
}

void derived_visit_tree(const struct btree *tree, btree_visit_fn visit, void *opaque)
{
	struct btree_key first = BTREE_KEY_MIN, last = BTREE_KEY_MAX;
	btree_visit_range(tree, &first, &last, visit, opaque);
}

GHashTable *derived_live_data(GHashTable *live)
{
	GHashTable *data = g_hash_table_new(NULL, NULL);
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, live);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		const struct tree_block *block = key;
		struct btree_leaf_cursor cursor;
		btree_leaf_cursor_init(&cursor, block, 0);
		for (const struct btree_item *item; !block->level && (item = btree_leaf_cursor_next(&cursor));) {
			if (btree_item_key(item)->type == BTRFS_EXTENT_DATA_KEY && btree_item_file_extent(item)->extent)
				g_hash_table_add(data, btree_item_file_extent(item)->extent);
		}
	}
	return data;
}

bool derived_check(const struct fs *fs, GHashTable *live, GError **error)
{
	return extent_tree_check(fs, live, error) && root_tree_check(fs, error) && csum_tree_check(fs, live, error) &&
	       free_space_tree_check(fs, error);
}
