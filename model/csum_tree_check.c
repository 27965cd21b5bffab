/*
 * model/csum_tree_check.c - the csum tree against the data extents alive
 * (btrfs check --check-data-csum's coverage, without the bytes).
 *
 * fs_data.c writes 4 bytes per 4 KiB sector of every data extent it
 * allocates, in EXTENT_CSUM items that grow while their sectors are
 * contiguous, and removes them when the extent is freed, at once (not at the
 * commit), so the tree is exact at every moment.
 *
 * Invariants:
 *  CS1 every item is (EXTENT_CSUM_OBJECTID, EXTENT_CSUM, bytenr) with bytenr
 *      sector-aligned and a size of a whole, positive number of checksums;
 *      items do not overlap;
 *  CS2 the sectors they cover are exactly the sectors of the live data
 *      extents: every extent's, and no other.
 */
#include "derived_check.h"

#include "constants.h"
#include "fs_internal.h"

/* A run of sectors, [start, end). */
struct span {
	uint64_t start, end;
};

struct csum_walk {
	GArray *runs;                 /* struct span, merged, in address order */
	GError **error;
	bool ok;
};

static void add_span(GArray *runs, uint64_t start, uint64_t end)
{
	struct span *last = runs->len ? &g_array_index(runs, struct span, runs->len - 1) : NULL;
	if (last && last->end == start) {
		last->end = end;
		return;
	}
	struct span s = { start, end };
	g_array_append_val(runs, s);
}

static bool csum_item(const struct btree_item *item, void *opaque)
{
	struct csum_walk *w = opaque;
	const struct btree_key *k = btree_item_key(item);
	if (k->objectid != BTRFS_EXTENT_CSUM_OBJECTID || k->type != BTRFS_EXTENT_CSUM_KEY)
		return w->ok = derived_corrupt(w->error, "csum item", k->offset, "CS1 key (%" G_GUINT64_FORMAT " %u)",
					       k->objectid, k->type);
	if (k->offset % BTRFS_SECTORSIZE || !btree_item_size(item) || btree_item_size(item) % BTRFS_CSUM_SIZE)
		return w->ok = derived_corrupt(w->error, "csum item", k->offset, "CS1 misaligned or sized, %u",
					       btree_item_size(item));
	const struct span *last = w->runs->len ? &g_array_index(w->runs, struct span, w->runs->len - 1) : NULL;
	if (last && k->offset < last->end)
		return w->ok = derived_corrupt(w->error, "csum item", k->offset, "CS1 overlaps the sectors before, to %"
					       G_GUINT64_FORMAT, last->end);
	uint64_t sectors = btree_item_size(item) / BTRFS_CSUM_SIZE;
	add_span(w->runs, k->offset, k->offset + sectors * BTRFS_SECTORSIZE);
	return true;
}

static int compare_extent_address(gconstpointer a, gconstpointer b)
{
	const struct data_extent *x = *(struct data_extent *const *)a, *y = *(struct data_extent *const *)b;
	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

/* The runs of sectors the live data extents hold. */
static GArray *data_runs(GHashTable *live)
{
	g_autoptr(GHashTable) data = derived_live_data(live);
	g_autoptr(GPtrArray) extents = g_ptr_array_new();
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, data);
	while (g_hash_table_iter_next(&iter, &key, NULL))
		g_ptr_array_add(extents, key);
	g_ptr_array_sort(extents, compare_extent_address);
	GArray *runs = g_array_new(FALSE, FALSE, sizeof(struct span));
	for (unsigned i = 0; i < extents->len; i++) {
		const struct data_extent *e = extents->pdata[i];
		add_span(runs, e->bytenr, e->bytenr + e->num_bytes);
	}
	return runs;
}

bool csum_tree_check(const struct fs *fs, GHashTable *live, GError **error)
{
	g_autoptr(GArray) csum_runs = g_array_new(FALSE, FALSE, sizeof(struct span));
	struct csum_walk w = { csum_runs, error, true };
	derived_visit_tree(&fs->csum_tree, csum_item, &w);
	if (!w.ok)
		return false;
	g_autoptr(GArray) want = data_runs(live);
	for (unsigned i = 0; i < MAX(want->len, csum_runs->len); i++) {
		const struct span *d = i < want->len ? &g_array_index(want, struct span, i) : NULL;
		const struct span *c = i < csum_runs->len ? &g_array_index(csum_runs, struct span, i) : NULL;
		if (d && c && d->start == c->start && d->end == c->end)
			continue;
		if (!c || (d && d->start < c->start) || (d && d->start == c->start && d->end > c->end))
			return derived_corrupt(error, "csum item", c && d->start == c->start ? c->end : d->start,
					       "CS2 data sectors without checksums, to %" G_GUINT64_FORMAT, d->end);
		return derived_corrupt(error, "csum item", d && d->start == c->start ? d->end : c->start,
				       "CS2 checksums of no live data extent, to %" G_GUINT64_FORMAT, c->end);
	}
	return true;
}
