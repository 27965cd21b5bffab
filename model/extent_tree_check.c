/*
 * model/extent_tree_check.c - the extent tree against the blocks, data
 * extents and chunks it describes (btrfs check's extent-tree pass).
 *
 * refs.c writes, per block, a METADATA_ITEM (bytenr, 169, level) whose size
 * holds its inline backrefs and keyed TREE_BLOCK_REF items (bytenr, 176, 1..k)
 * for the rest; per data extent, an EXTENT_ITEM (bytenr, 168, bytes) sized by
 * its inline EXTENT_DATA_REFs and SHARED_DATA_REFs and keyed EXTENT_DATA_REF
 * items (bytenr, 178, 1..k); per chunk, a BLOCK_GROUP_ITEM. The model keeps
 * no payload for a backref: an inline ref is its bytes in the item, a keyed
 * one an item numbered from 1, and a keyed SHARED_* ref is written with the
 * TREE_BLOCK_REF or EXTENT_DATA_REF type (refs.c). That is what is checked.
 *
 * Invariants:
 *  ET1 every item is a METADATA_ITEM or TREE_BLOCK_REF of a tree block, an
 *      EXTENT_ITEM or EXTENT_DATA_REF of a data extent (live, or freed in the
 *      running transaction), or a chunk's BLOCK_GROUP_ITEM;
 *  ET2 a block or extent has its item exactly when refs were last written for
 *      it (extent_item_refs, item_refs), at the size those refs take inline,
 *      followed by one keyed item for each ref past the inline room;
 *  ET3 a block or extent whose head is not pending (no REFS_DIRTY) was last
 *      written with its present counts, 0 when freed; so after a commit,
 *      when no head is pending, the extent tree is what the references imply;
 *  ET4 every chunk has one BLOCK_GROUP_ITEM (start, length), but one made
 *      in the running transaction, which gets it at the commit; one not
 *      changed since the last commit says its used bytes.
 */
#include "derived_check.h"

#include "blockstore.h"
#include "constants.h"
#include "fs_internal.h"

/* What the extent tree should say about one address. */
struct described {
	const struct tree_block *block;     /* one of the two */
	const struct data_extent *extent;
	bool item_seen;
	uint32_t keyed_seen;
};

struct extent_walk {
	uint32_t nodesize;
	GHashTable *by_address;             /* bytenr -> struct described * */
	GHashTable *chunk_by_start;         /* start -> index + 1 */
	const struct chunk *chunks;
	unsigned nchunks;
	GArray *chunk_seen;                 /* bool per chunk */
	GError **error;
	bool ok;
};

static void describe_block(struct extent_walk *w, const struct tree_block *block)
{
	struct described *d = g_new0(struct described, 1);
	d->block = block;
	g_hash_table_insert(w->by_address, (gpointer)&block->bytenr, d);
}

static void describe_extent(struct extent_walk *w, const struct data_extent *extent)
{
	struct described *d = g_new0(struct described, 1);
	d->extent = extent;
	g_hash_table_insert(w->by_address, (gpointer)&extent->bytenr, d);
}

/* The keyed refs the refs last written take beyond the inline room. */
static uint32_t block_keyed(const struct extent_walk *w, const struct tree_block *block, uint32_t *size)
{
	uint32_t keyed;
	*size = refs_metadata_item_size(w->nodesize, block->extent_item_refs, &keyed);
	return keyed;
}

static bool check_metadata_item(struct extent_walk *w, const struct btree_item *item, struct described *d)
{
	const struct tree_block *block = d->block;
	uint32_t size;
	block_keyed(w, block, &size);
	if (btree_item_key(item)->offset != block->level)
		return derived_corrupt(w->error, "metadata item", block->bytenr, "ET1 level, %" G_GUINT64_FORMAT
				       " (the block's is %u)", btree_item_key(item)->offset, block->level);
	if (!block->extent_item_refs)
		return derived_corrupt(w->error, "metadata item", block->bytenr, "ET2 present with no refs written");
	if (btree_item_size(item) != size)
		return derived_corrupt(w->error, "metadata item", block->bytenr, "ET2 size, %u (its %u refs take %u)",
				       btree_item_size(item), block->extent_item_refs, size);
	d->item_seen = true;
	return true;
}

static bool check_keyed_ref(struct extent_walk *w, const struct btree_item *item, struct described *d,
			    uint32_t keyed, uint32_t size, const char *type)
{
	if (btree_item_key(item)->offset < 1 || btree_item_key(item)->offset > keyed)
		return derived_corrupt(w->error, type, btree_item_key(item)->objectid, "ET2 number %" G_GUINT64_FORMAT
				       " past the %u keyed refs written", btree_item_key(item)->offset, keyed);
	if (btree_item_size(item) != size)
		return derived_corrupt(w->error, type, btree_item_key(item)->objectid, "ET2 size, %u (expected %u)",
				       btree_item_size(item), size);
	d->keyed_seen++;
	return true;
}

static bool check_extent_item(struct extent_walk *w, const struct btree_item *item, struct described *d)
{
	const struct data_extent *extent = d->extent;
	if (btree_item_key(item)->offset != extent->num_bytes)
		return derived_corrupt(w->error, "extent item", extent->bytenr, "ET1 length, %" G_GUINT64_FORMAT
				       " (the extent's is %" G_GUINT64_FORMAT ")", btree_item_key(item)->offset,
				       extent->num_bytes);
	if (!extent->item_refs)
		return derived_corrupt(w->error, "extent item", extent->bytenr, "ET2 present with no refs written");
	/* A pending head's split between data and shared refs as written is
	 * not kept; a settled one's is the present one (ET3). */
	uint32_t keyed, size = refs_data_item_size(w->nodesize, extent->data_refs, extent->shared_refs, &keyed);
	if (!(extent->flags & DATA_EXTENT_DIRTY) && btree_item_size(item) != size)
		return derived_corrupt(w->error, "extent item", extent->bytenr,
				       "ET3 size, %u (its %u data and %u shared refs take %u)", btree_item_size(item),
				       extent->data_refs, extent->shared_refs, size);
	d->item_seen = true;
	return true;
}

static bool check_block_group_item(struct extent_walk *w, const struct btree_item *item)
{
	unsigned index = GPOINTER_TO_UINT(g_hash_table_lookup(w->chunk_by_start, &btree_item_key(item)->objectid));
	if (!index)
		return derived_corrupt(w->error, "block group item", btree_item_key(item)->objectid,
				       "ET1 no chunk starts there");
	const struct chunk *chunk = &w->chunks[index - 1];
	if (btree_item_key(item)->offset != chunk->length)
		return derived_corrupt(w->error, "block group item", chunk->start, "ET4 length, %" G_GUINT64_FORMAT
				       " (the chunk's is %" G_GUINT64_FORMAT ")", btree_item_key(item)->offset,
				       chunk->length);
	if (!chunk->changed && btree_item_value(item) != chunk->used)
		return derived_corrupt(w->error, "block group item", chunk->start, "ET4 used, %" G_GUINT64_FORMAT
				       " (the chunk's is %" G_GUINT64_FORMAT ")", btree_item_value(item),
				       chunk->used);
	g_array_index(w->chunk_seen, bool, index - 1) = true;
	return true;
}

static bool check_item(const struct btree_item *item, void *opaque)
{
	struct extent_walk *w = opaque;
	uint8_t type = btree_item_key(item)->type;
	if (type == BTRFS_BLOCK_GROUP_ITEM_KEY)
		return w->ok = check_block_group_item(w, item);
	struct described *d = g_hash_table_lookup(w->by_address, &btree_item_key(item)->objectid);
	bool of_block = type == BTRFS_METADATA_ITEM_KEY || type == BTRFS_TREE_BLOCK_REF_KEY;
	bool of_extent = type == BTRFS_EXTENT_ITEM_KEY || type == BTRFS_EXTENT_DATA_REF_KEY;
	if (!of_block && !of_extent)
		return w->ok = derived_corrupt(w->error, "extent tree item", btree_item_key(item)->objectid,
					       "ET1 unexpected key type, %u", type);
	if (!d || (of_block && !d->block) || (of_extent && !d->extent))
		return w->ok = derived_corrupt(w->error, of_block ? "metadata item" : "extent item",
					       btree_item_key(item)->objectid, "ET1 no %s at this address",
					       of_block ? "tree block" : "data extent");
	uint32_t size;
	switch (type) {
	case BTRFS_METADATA_ITEM_KEY:
		return w->ok = check_metadata_item(w, item, d);
	case BTRFS_TREE_BLOCK_REF_KEY:
		return w->ok = check_keyed_ref(w, item, d, block_keyed(w, d->block, &size), 0, "tree block ref");
	case BTRFS_EXTENT_ITEM_KEY:
		return w->ok = check_extent_item(w, item, d);
	default:
		return w->ok = check_keyed_ref(w, item, d, d->extent->keyed_items, BTRFS_KEYED_DATA_REF_SIZE,
					       "extent data ref");
	}
}

/* ET2 (the item and its keyed refs are all there) and ET3 for a block. */
static bool check_block_described(struct extent_walk *w, const struct described *d)
{
	const struct tree_block *block = d->block;
	uint32_t size, keyed = block_keyed(w, block, &size);
	if (block->extent_item_refs && !d->item_seen)
		return derived_corrupt(w->error, "metadata item", block->bytenr, "ET2 missing, %u refs written",
				       block->extent_item_refs);
	if (d->keyed_seen != keyed)
		return derived_corrupt(w->error, "tree block ref", block->bytenr, "ET2 keyed refs, %u (its %u refs need %u)",
				       d->keyed_seen, block->extent_item_refs, keyed);
	uint32_t refs = (block->flags & TREE_BLOCK_FREED) ? 0 : tree_block_refs(block);
	if (!(block->flags & TREE_BLOCK_REFS_DIRTY) && block->extent_item_refs != refs)
		return derived_corrupt(w->error, "metadata item", block->bytenr,
				       "ET3 refs written with no head pending, %u (the block has %u)",
				       block->extent_item_refs, refs);
	return true;
}

static bool check_extent_described(struct extent_walk *w, const struct described *d)
{
	const struct data_extent *extent = d->extent;
	if (extent->item_refs && !d->item_seen)
		return derived_corrupt(w->error, "extent item", extent->bytenr, "ET2 missing, %u refs written",
				       extent->item_refs);
	if (d->keyed_seen != extent->keyed_items)
		return derived_corrupt(w->error, "extent data ref", extent->bytenr, "ET2 keyed refs, %u (%u written)",
				       d->keyed_seen, extent->keyed_items);
	if (extent->flags & DATA_EXTENT_DIRTY)
		return true;
	uint32_t keyed;
	refs_data_item_size(w->nodesize, extent->data_refs, extent->shared_refs, &keyed);
	if (extent->item_refs != data_extent_refs(extent) || (extent->item_refs && extent->keyed_items != keyed))
		return derived_corrupt(w->error, "extent item", extent->bytenr,
				       "ET3 refs written with no head pending, %u (the extent has %u)", extent->item_refs,
				       data_extent_refs(extent));
	return true;
}

static bool check_everything_described(struct extent_walk *w)
{
	GHashTableIter iter;
	gpointer value;
	g_hash_table_iter_init(&iter, w->by_address);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		const struct described *d = value;
		if (!(d->block ? check_block_described(w, d) : check_extent_described(w, d)))
			return false;
	}
	for (unsigned i = 0; i < w->nchunks; i++)
		if (!g_array_index(w->chunk_seen, bool, i) && !w->chunks[i].changed)
			return derived_corrupt(w->error, "block group item", w->chunks[i].start, "ET4 missing");
	return true;
}

bool extent_tree_check(const struct fs *fs, GHashTable *live, GError **error)
{
	struct extent_walk w = { .nodesize = blockstore_nodesize(fs->store), .error = error, .ok = true };
	w.by_address = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
	w.chunk_by_start = g_hash_table_new(g_int64_hash, g_int64_equal);
	w.chunks = blockstore_chunks(fs->store, &w.nchunks);
	w.chunk_seen = g_array_new(FALSE, TRUE, sizeof(bool));
	g_array_set_size(w.chunk_seen, w.nchunks);
	for (unsigned i = 0; i < w.nchunks; i++)
		g_hash_table_insert(w.chunk_by_start, (gpointer)&w.chunks[i].start, GUINT_TO_POINTER(i + 1));

	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, live);
	while (g_hash_table_iter_next(&iter, &key, NULL))
		describe_block(&w, key);
	const GPtrArray *freed = blockstore_unreleased_blocks(fs->store);
	for (unsigned i = 0; i < freed->len; i++)
		describe_block(&w, freed->pdata[i]);
	g_autoptr(GHashTable) data = derived_live_data(live);
	g_hash_table_iter_init(&iter, data);
	while (g_hash_table_iter_next(&iter, &key, NULL))
		describe_extent(&w, key);
	const GPtrArray *freed_data = refs_freed_data(fs->refs);
	for (unsigned i = 0; i < freed_data->len; i++)
		describe_extent(&w, freed_data->pdata[i]);

	derived_visit_tree(&fs->extent_tree, check_item, &w);
	bool ok = w.ok && check_everything_described(&w);
	g_hash_table_unref(w.by_address);
	g_hash_table_unref(w.chunk_by_start);
	g_array_unref(w.chunk_seen);
	return ok;
}
