/*
 * model/free_space_tree_check.c - the free-space tree against the block
 * groups (btrfs check's free-space-tree pass).
 *
 * The model keeps, per block group, a FREE_SPACE_INFO and one
 * FREE_SPACE_EXTENT keyed (start, length) whose payload says the group's
 * free bytes (docs/model.md, approximation 4); fs.c rewrites them at the
 * commit for every chunk whose used bytes changed.
 *
 * Invariants:
 *  FS1 the tree holds one FREE_SPACE_INFO (start, 198, length) of
 *      BTRFS_FREE_SPACE_INFO_SIZE and one FREE_SPACE_EXTENT (start, 199,
 *      length) per chunk, and nothing else, but for chunks made in the
 *      running transaction, which get theirs at its commit;
 *  FS2 a chunk not changed since the last commit (every chunk, right after
 *      one) has length - used free bytes in its extent item.
 */
#include "derived_check.h"

#include "blockstore.h"
#include "constants.h"
#include "fs_internal.h"

struct free_space_walk {
	const struct chunk *chunks;
	unsigned nchunks, next;       /* items come in chunk order: info, extent, next chunk */
	bool info_seen;
	GError **error;
	bool ok;
};

static bool free_space_item(const struct btree_item *item, void *opaque)
{
	struct free_space_walk *w = opaque;
	const struct btree_key *k = btree_item_key(item);
	if (w->next >= w->nchunks)
		return w->ok = derived_corrupt(w->error, "free space item", k->objectid, "FS1 past the last chunk");
	const struct chunk *c = &w->chunks[w->next];
	uint8_t want = w->info_seen ? BTRFS_FREE_SPACE_EXTENT_KEY : BTRFS_FREE_SPACE_INFO_KEY;
	if (k->objectid != c->start || k->offset != c->length || k->type != want)
		return w->ok = derived_corrupt(w->error, "free space item", k->objectid,
					       "FS1 key (%u %" G_GUINT64_FORMAT "), expected (%u %" G_GUINT64_FORMAT
					       ") of chunk %" G_GUINT64_FORMAT, k->type, k->offset, want, c->length,
					       c->start);
	if (!w->info_seen) {
		if (btree_item_size(item) != BTRFS_FREE_SPACE_INFO_SIZE)
			return w->ok = derived_corrupt(w->error, "free space info", c->start, "FS1 size, %u",
						       btree_item_size(item));
		w->info_seen = true;
		return true;
	}
	if (!c->changed && btree_item_value(item) != c->length - c->used)
		return w->ok = derived_corrupt(w->error, "free space extent", c->start,
					       "FS2 free bytes, %" G_GUINT64_FORMAT " (the chunk has %" G_GUINT64_FORMAT ")",
					       btree_item_value(item), c->length - c->used);
	w->info_seen = false;
	w->next++;
	return true;
}

bool free_space_tree_check(const struct fs *fs, GError **error)
{
	struct free_space_walk w = { .error = error, .ok = true };
	w.chunks = blockstore_chunks(fs->store, &w.nchunks);
	derived_visit_tree(&fs->free_space_tree, free_space_item, &w);
	if (!w.ok)
		return false;
	for (unsigned i = w.next; i < w.nchunks; i++)
		if (!w.chunks[i].changed || w.info_seen)
			return derived_corrupt(error, "free space info", w.chunks[i].start, "FS1 %s for a chunk",
					       w.info_seen ? "no extent item" : "missing");
	return true;
}
