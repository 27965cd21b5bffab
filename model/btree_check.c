/*
 * model/btree_check.c - the tree checker, dump and statistics.
 *
 * In the manner of SQLite's checkTreePage and btrfs's tree-checker: walk the
 * whole tree once and report the first broken invariant (BT1-BT5 and BT11 in btree.h) as
 * "corrupt <what>: tree T block B, <reason>".
 */
#include "model_error.h"
#define BTREE_ITEM_LAYOUT /* the btree module: knows the item layout */
#include "btree.h"

#include <inttypes.h>

#include "constants.h"

struct check_state {
	const struct btree *tree;
	uint32_t nodesize;
	int leaf_depth;             /* -1 until the first leaf is seen */
	struct btree_key prev;      /* last leaf key seen, for BT1 across leaves (a run's member is made up) */
	bool have_prev;
	GError **error;
};

static bool corrupt(struct check_state *st, const struct tree_block *b, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static bool corrupt(struct check_state *st, const struct tree_block *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *reason = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(st->error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
		    "corrupt %s: tree %" PRIu64 " block %" PRIu64 ", %s", b->level ? "node" : "leaf",
		    st->tree->id, b->bytenr, reason);
	return false;
}

static bool check_leaf(struct check_state *st, const struct tree_block *b, int depth, bool is_root)
{
	uint32_t bytes = 0;
	if (st->leaf_depth < 0)
		st->leaf_depth = depth;
	else if (st->leaf_depth != depth)
		return corrupt(st, b, "BT3 leaf at depth %d, others at %d", depth, st->leaf_depth);
	if (!b->nritems && !is_root)
		return corrupt(st, b, "BT4 empty leaf below the root");
	if (!btree_check_runs(b, st->nodesize, st->error) || !btree_check_payloads(b, st->error) || !btree_check_overlay(b, st->error))
		return false;
	struct btree_leaf_cursor cursor;
	btree_leaf_cursor_init(&cursor, b, 0);
	for (uint32_t i = 0; i < b->nritems; i++) {
		const struct btree_item *item = btree_leaf_cursor_next(&cursor);
		if (st->have_prev && btree_key_compare(&st->prev, &item->key) >= 0)
			return corrupt(st, b, "BT1 key (%" PRIu64 " %u %" PRIu64 ") at slot %u not above the previous",
				       item->key.objectid, item->key.type, item->key.offset, i);
		st->prev = item->key;
		st->have_prev = true;
		bytes += BTRFS_ITEM_HEADER_SIZE + item->size;
	}
	if (bytes != b->leaf_bytes)
		return corrupt(st, b, "BT4 leaf bytes %u, items add up to %u", b->leaf_bytes, bytes);
	if (bytes > btrfs_leaf_data_size(st->nodesize))
		return corrupt(st, b, "BT4 %u bytes of items in a %u-byte leaf", bytes, btrfs_leaf_data_size(st->nodesize));
	return true;
}

static bool check_block(struct check_state *st, const struct tree_block *b, int depth, bool is_root)
{
	if (!btree_owner_is_packed(b->packed_owner))
		return corrupt(st, b, "BT11 owner %#x is no tree id's 32-bit image", b->packed_owner);
	if (!b->level)
		return check_leaf(st, b, depth, is_root);
	if (b->nritems > btrfs_nodeptrs_per_block(st->nodesize))
		return corrupt(st, b, "BT4 %u pointers, at most %u fit", b->nritems, btrfs_nodeptrs_per_block(st->nodesize));
	if (!b->nritems)
		return corrupt(st, b, "BT4 node without children");
	for (uint32_t i = 0; i < b->nritems; i++) {
		const struct tree_block *child = b->children[i].block;
		if (child->level + 1 != b->level)
			return corrupt(st, b, "BT3 child at level %u under level %u", child->level, b->level);
		if (child->generation > b->generation)
			return corrupt(st, b, "BT5 child generation %u above the node's %u",
				       child->generation, b->generation);
		if (i && btree_key_compare(&b->children[i - 1].key, &b->children[i].key) >= 0)
			return corrupt(st, b, "BT1 pointer keys out of order at slot %u", i);
		const struct btree_key *first = child->level ? &child->children[0].key
				       : (child->nritems ? &child->items[0].key : NULL);
		if (first && btree_key_compare(first, &b->children[i].key) != 0)
			return corrupt(st, b, "BT2 key at slot %u is not the child's first key", i);
		if (!check_block(st, child, depth + 1, false))
			return false;
	}
	return true;
}

bool btree_check(const struct btree *tree, uint32_t nodesize, GError **error)
{
	struct check_state st = { .tree = tree, .nodesize = nodesize, .leaf_depth = -1, .error = error };
	return check_block(&st, tree->root, 0, true);
}

static void dump_block(const struct tree_block *b, FILE *out, int indent)
{
	fprintf(out, "%*s%s %" PRIu64 " level %u items %u gen %u owner %" PRIu64
		" refs %u (tree %u shared %u)%s", indent, "", b->level ? "node" : "leaf", b->bytenr, b->level,
		b->nritems, b->generation, tree_block_owner(b), tree_block_refs(b), b->tree_refs, b->shared_refs,
		(b->flags & TREE_BLOCK_FULL_BACKREF) ? " FULL_BACKREF" : "");
	if (!b->level)
		fprintf(out, " used %u\n", b->leaf_bytes);
	else
		fputc('\n', out);
	struct btree_leaf_cursor cursor;
	btree_leaf_cursor_init(&cursor, b, 0);
	for (uint32_t i = 0; i < b->nritems; i++) {
		if (b->level) {
			const struct btree_key *k = &b->children[i].key;
			fprintf(out, "%*skey (%" PRIu64 " %u %" PRIu64 ") block %" PRIu64 "\n", indent + 2, "",
				k->objectid, k->type, k->offset, b->children[i].block->bytenr);
			dump_block(b->children[i].block, out, indent + 4);
		} else {
			const struct btree_item *it = btree_leaf_cursor_next(&cursor);
			fprintf(out, "%*sitem %u key (%" PRIu64 " %u %" PRIu64 ") size %u\n", indent + 2, "", i,
				it->key.objectid, it->key.type, it->key.offset, it->size);
		}
	}
}

void btree_dump(const struct btree *tree, FILE *out)
{
	fprintf(out, "tree %" PRIu64 "\n", tree->id);
	dump_block(tree->root, out, 0);
}

static void stats_block(const struct tree_block *b, struct btree_stats *stats)
{
	if (!b->level) {
		stats->leaves++;
		stats->items += b->nritems;
		stats->leaf_bytes += b->leaf_bytes;
		return;
	}
	stats->nodes++;
	for (uint32_t i = 0; i < b->nritems; i++)
		stats_block(b->children[i].block, stats);
}

void btree_stats(const struct btree *tree, struct btree_stats *stats)
{
	*stats = (struct btree_stats){ .height = (uint8_t)(tree->root->level + 1) };
	stats_block(tree->root, stats);
}
