/*
 * model/fs_data.c - file data: extents, checksums and writeback.
 *
 * A file's data is mapped by EXTENT_DATA items keyed (inode, 108, file
 * offset). Small files keep their bytes inline in the item (21 + size bytes,
 * when the whole file is at most max_inline and below one sector, as
 * cow_file_range_inline decides); others point at data extents of at most
 * 128 MiB, each with an EXTENT_ITEM in the extent tree and 4 bytes of
 * checksum per 4 KiB sector in the csum tree:
 *
 *   csum tree: (EXTENT_CSUM_OBJECTID, 128, bytenr) -> 4 * sectors bytes;
 *   an item grows while its sectors are contiguous, up to a leaf's worth.
 *
 * Writes reach the trees at writeback, not at write(): btrfs's delalloc
 * inserts the file extent items when the dirty pages are written, which
 * during a long copy happens in batches as space reservations flush
 * delalloc (measured: items land ~110 inodes after their file was created,
 * docs/btrfs-ground-truth.md). The model queues writes and flushes the queue
 * every FS_WRITEBACK_BATCH files and at each commit.
 *
 * Until it is written back, a write holds a metadata reservation for the
 * items its writeback will insert (btrfs_delalloc_reserve_metadata() at
 * write(), released when the ordered extent completes; inode.c
 * calc_inode_reservations()): calc_insert_metadata_size() of its extents
 * plus its checksum leaves, and calc_metadata_size(1) for the inode update,
 *
 *   nodesize * (16 * (extents + csum leaves) + 8)     640 KiB for a small file at 16 KiB
 *
 * When a reservation waits on a ticket, the flusher writes delalloc back
 * after the delayed items and refs (FLUSH_DELALLOC, fs.c flush_for_ticket()).
 * On a small device that is what paces a copy's writeback: the file extent
 * items land soon after their inode, at the end of the tree, and the fs
 * tree's leaves fill (measured: 512 MiB, docs/btrfs-ground-truth.md).
 *
 * A flush submits its writes oldest first, but their items do not go in in
 * that order: an inline extent is inserted at submission (writepage:
 * cow_file_range_inline), a regular extent's file extent item and checksums
 * when its ordered extent completes, after the data I/O
 * (btrfs_finish_ordered_io), while later files are being submitted. So an
 * inline file's item overtakes the regular files before it, and the tree's
 * leaves take inserts behind their end (FS_ORDERED_COMPLETION_LAG):
 *
 *   submitted:   1R 2R 3I 4R 5I 6R ...        (R regular, I inline)
 *   inserted:    3I 5I ... 1R 2R 4R ...       lag 16 submissions, as traced
 *
 * WB1 fs->delalloc_reserved is the sum of the pending writes' `reserved`,
 *     each delalloc_metadata_bytes() of its length (fs_data_check).
 */
#include "design.h"

#include <errno.h>
#include <string.h>

#include "blockstore.h"
#include "model_error.h"

/* Files per writeback flush during a copy; with batches of 220 the mean lag
 * between a file's creation and its extent items is 110 files, as measured. */
#define FS_WRITEBACK_BATCH 220u

/* Submissions a regular write's items wait behind its own (its ordered
 * extent's completion). Traced on kernel 6.18 during `cp -a /usr/include`
 * on a loop device (docs/btrfs-ground-truth.md section 12): a regular
 * extent's item went in a mean 12.3 / 20.7 / 26.7 file submissions after
 * its own on 512 MiB / 800 MiB / 8 GiB (medians 9 / 17 / 18-20). It is a
 * timing, not a constant of btrfs; the model takes 16, inside that range
 * (docs/model.md, approximation 13, says what 12 and 20 would give). */
#define FS_ORDERED_COMPLETION_LAG 16u

static uint64_t round_up_sector(uint64_t bytes)
{
	return (bytes + BTRFS_SECTORSIZE - 1) & ~(uint64_t)(BTRFS_SECTORSIZE - 1);
}

/* btrfs_csum_bytes_to_leaves(): the checksums of `bytes` (whole sectors)
 * over csums_per_leaf = BTRFS_MAX_ITEM_SIZE / csum size. */
static uint64_t csum_leaves(uint32_t nodesize, uint64_t bytes)
{
	uint64_t per_leaf = (btrfs_leaf_data_size(nodesize) - BTRFS_ITEM_HEADER_SIZE) / BTRFS_CSUM_SIZE;
	uint64_t csums = bytes / BTRFS_SECTORSIZE;
	return (csums + per_leaf - 1) / per_leaf;
}

/* calc_inode_reservations() for one write of `length` bytes (WB1). */
static uint64_t delalloc_metadata_bytes(uint32_t nodesize, uint64_t length)
{
	uint64_t bytes = round_up_sector(length);
	uint64_t extents = (bytes + BTRFS_MAX_EXTENT_SIZE - 1) / BTRFS_MAX_EXTENT_SIZE;
	uint64_t items = extents + csum_leaves(nodesize, bytes);
	return (uint64_t)nodesize * (BTRFS_RESERVE_NODES_PER_ITEM * items + BTRFS_MAX_LEVEL);
}

static void queue_write(struct fs *fs, struct pending_write w)
{
	fs->delalloc_reserved += w.reserved;
	g_array_append_val(fs->pending_writes, w);
}

static uint32_t max_csum_item_size(uint32_t nodesize)
{
	/* MAX_CSUM_ITEMS: (leaf data - 2 item headers) / csum size - 1. */
	return ((btrfs_leaf_data_size(nodesize) - 2 * BTRFS_ITEM_HEADER_SIZE) / BTRFS_CSUM_SIZE - 1) *
	       BTRFS_CSUM_SIZE;
}

static uint64_t csum_item_end(const struct btree_item *item)
{
	return btree_item_key(item)->offset + (uint64_t)(btree_item_size(item) / BTRFS_CSUM_SIZE) * BTRFS_SECTORSIZE;
}

/* The csum tree's last item at or below `key` (btree_lookup_le()), and
 * *path at it when the descent's leaf holds it (levels 0 otherwise). */
static const struct btree_item *csum_item_le(struct fs *fs, const struct btree_key *key, struct btree_path *path)
{
	if (btree_lookup(&fs->csum_tree, key, path))
		return btree_path_item(path);
	if (path->slots[0] > 0) {
		path->slots[0]--;
		return btree_path_item(path);
	}
	path->levels = 0;
	return btree_lookup_le(&fs->csum_tree, key);
}

static void csum_add(struct fs *fs, uint64_t bytenr, uint64_t bytes)
{
	uint32_t limit = max_csum_item_size(blockstore_nodesize(fs->store));
	while (bytes) {
		struct btree_key key = BTRFS_KEY(BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, bytenr);
		struct btree_path path;
		const struct btree_item *prev = csum_item_le(fs, &key, &path);
		if (prev && btree_item_key(prev)->objectid == BTRFS_EXTENT_CSUM_OBJECTID &&
		    csum_item_end(prev) == bytenr && btree_item_size(prev) < limit) {
			uint64_t room = (limit - btree_item_size(prev)) / BTRFS_CSUM_SIZE * BTRFS_SECTORSIZE;
			uint64_t take = MIN(room, bytes);
			struct btree_key prev_key = *btree_item_key(prev);
			uint32_t size = btree_item_size(prev) + (uint32_t)(take / BTRFS_SECTORSIZE * BTRFS_CSUM_SIZE);
			/* The item grows where the lookup found it: one descent, not two. */
			if (path.levels)
				btree_resize_item_at(&fs->csum_tree, &fs->txn, &prev_key, size, &path);
			else
				btree_resize_item(&fs->csum_tree, &fs->txn, &prev_key, size);
			bytenr += take;
			bytes -= take;
			continue;
		}
		uint64_t take = MIN(bytes, (uint64_t)limit / BTRFS_CSUM_SIZE * BTRFS_SECTORSIZE);
		btree_insert_item(&fs->csum_tree, &fs->txn, &key, (uint32_t)(take / BTRFS_SECTORSIZE * BTRFS_CSUM_SIZE),
				  NULL);
		bytenr += take;
		bytes -= take;
	}
}

/* Remove the checksums of [start, end): whole items go, items that stick out
 * are cut, an item covering both sides is split in two. */
static void csum_remove(struct fs *fs, uint64_t start, uint64_t end)
{
	for (;;) {
		struct btree_key probe = BTRFS_KEY(BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, end - 1);
		const struct btree_item *item = btree_lookup_le(&fs->csum_tree, &probe);
		if (!item || btree_item_key(item)->objectid != BTRFS_EXTENT_CSUM_OBJECTID ||
		    csum_item_end(item) <= start)
			return;
		struct btree_key key = *btree_item_key(item);
		uint64_t item_start = key.offset, item_end = csum_item_end(item);
		uint32_t per_sector = BTRFS_CSUM_SIZE;
		btree_delete_item(&fs->csum_tree, &fs->txn, &key);
		if (item_start < start) {
			key.offset = item_start;
			btree_insert_item(&fs->csum_tree, &fs->txn, &key,
					  (uint32_t)((start - item_start) / BTRFS_SECTORSIZE) * per_sector, NULL);
		}
		if (item_end > end) {
			key.offset = end;
			btree_insert_item(&fs->csum_tree, &fs->txn, &key,
					  (uint32_t)((item_end - end) / BTRFS_SECTORSIZE) * per_sector, NULL);
		}
		if (item_start <= start)
			return;
	}
}

void fs_data_extent_freed(void *opaque, struct transaction *txn, struct data_extent *extent)
{
	struct fs *fs = opaque;
	(void)txn;
	csum_remove(fs, extent->bytenr, extent->bytenr + extent->num_bytes);
	blockstore_free_data(fs->store, extent->bytenr, extent->num_bytes);
}

struct extent_span {
	struct btree_key key;
	struct data_extent *extent;
	uint64_t num_bytes;
	uint32_t size;
};

/*
 * A file's extent items in key order. Most files a writeback meets have
 * none or one (a new file, an inline one): those stay in `few`, and only a
 * file with more pays for an array (an array per write was 3 % of a create:
 * docs/performance.md, round 10b).
 */
#define FEW_EXTENT_SPANS 4

struct extent_spans {
	unsigned len;
	struct extent_span few[FEW_EXTENT_SPANS];
	GArray *more;                 /* all of them once there are more than FEW_EXTENT_SPANS */
};

static struct extent_span *span_at(struct extent_spans *spans, unsigned i)
{
	return spans->more ? &g_array_index(spans->more, struct extent_span, i) : &spans->few[i];
}

static bool collect_extent(const struct btree_item *item, void *opaque)
{
	struct extent_spans *spans = opaque;
	const struct item_file_extent *payload = btree_item_file_extent(item);
	struct extent_span span = { *btree_item_key(item), payload->extent, payload->num_bytes,
				    btree_item_size(item) };
	if (!spans->more && spans->len < FEW_EXTENT_SPANS) {
		spans->few[spans->len++] = span;
		return true;
	}
	if (!spans->more) {
		spans->more = g_array_sized_new(FALSE, FALSE, sizeof(struct extent_span), 2 * FEW_EXTENT_SPANS);
		g_array_append_vals(spans->more, spans->few, spans->len);
	}
	g_array_append_val(spans->more, span);
	spans->len++;
	return true;
}

/* The file extent items of `inode` that start below `before`, found near
 * *near (an earlier lookup in this tree, or levels 0), into *spans (to be
 * released with spans_clear()). */
static void file_extents(struct subvolume *sv, uint64_t inode, uint64_t before, struct btree_path *near,
			 struct extent_spans *spans)
{
	struct btree_key first = BTRFS_KEY(inode, BTRFS_EXTENT_DATA_KEY, 0);
	struct btree_key last = BTRFS_KEY(inode, BTRFS_EXTENT_DATA_KEY, before ? before - 1 : 0);
	spans->len = 0;
	spans->more = NULL;
	if (before)
		subvol_visit_range_near(sv, &first, &last, collect_extent, spans, near);
}

static void spans_clear(struct extent_spans *spans)
{
	if (spans->more)
		g_array_free(spans->more, TRUE);
	spans->more = NULL;
	spans->len = 0;
}

/* Is the file inline: is its extent at offset 0 an inline one (then its only
 * one)? `spans` start at offset 0. */
static bool spans_inline(struct extent_spans *spans)
{
	return spans->len && span_at(spans, 0)->key.offset == 0 && !span_at(spans, 0)->extent;
}

/* Inserts near *near (subvol_insert_near: a lookup's path with no change
 * since, or levels 0), and leaves it at the new item. */
static void insert_file_extent(struct fs *fs, struct subvolume *sv, uint64_t inode, uint64_t offset,
			       struct data_extent *extent, uint64_t num_bytes, uint32_t size, struct btree_path *near)
{
	struct btree_key key = BTRFS_KEY(inode, BTRFS_EXTENT_DATA_KEY, offset);
	union item_payload payload = { .file_extent = { .extent = extent, .num_bytes = num_bytes } };
	subvol_insert_near(fs, sv, &key, size, &payload, near);
}

/* btrfs_drop_extents(): no file extent item maps [start, end) afterwards.
 * Items inside go (dropping their extent's reference), items across an edge
 * are cut, an item across both edges becomes two, both referencing its
 * extent. `spans` hold (at least) the file's extent items below `end`. */
static void drop_spans(struct fs *fs, struct subvolume *sv, uint64_t inode, uint64_t start, uint64_t end,
		       struct extent_spans *spans)
{
	for (unsigned i = 0; i < spans->len; i++) {
		struct extent_span *s = span_at(spans, i);
		uint64_t s_start = s->key.offset, s_end = s->key.offset + s->num_bytes;
		if (s_end <= start || s_start >= end)
			continue;
		bool keep_head = s_start < start && s->extent, keep_tail = s_end > end && s->extent;
		if (keep_tail) {
			struct btree_path fresh = { .levels = 0 };
			insert_file_extent(fs, sv, inode, end, s->extent, s_end - end, s->size, &fresh);
			refs_data_add(&fs->txn, s->extent, false);
		}
		if (keep_head) {
			struct btree_item *item = subvol_lookup_for_write(fs, sv, &s->key);
			btree_item_file_extent_for_write(item)->num_bytes = start - s_start;
			continue;
		}
		/* A whiteout hides an ancestor's item, whose reference stays. */
		if (subvol_delete(fs, sv, &s->key) == SUBVOL_DELETED && s->extent)
			refs_data_drop(&fs->txn, s->extent, false);
	}
}

void fs_drop_extents(struct fs *fs, struct subvolume *sv, uint64_t inode, uint64_t start, uint64_t end)
{
	struct btree_path near = { .levels = 0 };
	struct extent_spans spans;
	file_extents(sv, inode, end, &near, &spans);
	drop_spans(fs, sv, inode, start, end, &spans);
	spans_clear(&spans);
}

static bool fits_inline(const struct fs *fs, uint64_t offset, uint64_t length, uint64_t file_size)
{
	return offset == 0 && length == file_size && file_size <= fs->config.max_inline &&
	       file_size < BTRFS_SECTORSIZE && file_size > 0;
}

/* Write [offset, offset + length) now: new extents replace what was there.
 * With `cancellable`, fs_config.cancelled is asked before each extent; when
 * it says stop, [*stopped_at, end) is left a hole, still reserved, and the
 * result is -EINTR. *near is a path kept in sv (subvol_lookup_kept()), or
 * levels 0, and is left so. */
static int fs_write_range_now(struct fs *fs, struct subvolume *sv, uint64_t inode, uint64_t offset, uint64_t length,
			      bool cancellable, uint64_t *stopped_at, struct btree_path *near)
{
	/* The inode item and the file's extent items are neighbours in the
	 * tree: one lookup finds the leaf for the reads that follow, until the
	 * first change, and the inserts that follow that. */
	struct btree_key key = BTRFS_KEY(inode, BTRFS_INODE_ITEM_KEY, 0);
	const struct btree_item *item = subvol_lookup_kept(sv, &key, near);
	if (!item)
		return 0; /* unlinked before writeback */
	uint64_t file_size = btree_item_inode(item)->size;
	if (offset >= file_size)
		return 0;
	length = MIN(length, file_size - offset);
	/* A write to the end of a file small enough to be inline may leave it
	 * inline, and then every extent goes: read them all. Otherwise those
	 * below the write's end are the ones to drop. One visit answers both
	 * that and whether the file is inline now. */
	bool may_go_inline = offset + length == file_size && fits_inline(fs, 0, file_size, file_size);
	uint64_t end = round_up_sector(offset + length);
	struct extent_spans spans;
	file_extents(sv, inode, may_go_inline ? UINT64_MAX : end, near, &spans);
	/* The new extents go in beside what the lookup found, unless the drop
	 * below changes the tree first (a new file has nothing to drop). */
	if (spans.len)
		near->levels = 0;
	if (spans_inline(&spans)) {
		/* An inline file that changes is rewritten whole. */
		length = offset + length;
		offset = 0;
	}
	if (fits_inline(fs, offset, length, file_size)) {
		drop_spans(fs, sv, inode, 0, UINT64_MAX, &spans);
		spans_clear(&spans);
		insert_file_extent(fs, sv, inode, 0, NULL, file_size,
				   BTRFS_FILE_EXTENT_INLINE_HEADER + (uint32_t)file_size, near);
		fs->counters.data_bytes_written += file_size;
		return 0;
	}
	uint64_t start = offset & ~(uint64_t)(BTRFS_SECTORSIZE - 1);
	drop_spans(fs, sv, inode, start, end, &spans);
	spans_clear(&spans);
	for (uint64_t at = start; at < end;) {
		uint64_t bytes, bytenr;
		if (cancellable && at > start && fs_cancelled(fs)) {
			*stopped_at = at;
			return -EINTR;
		}
		if (blockstore_alloc_data(fs->store, MIN(end - at, BTRFS_MAX_EXTENT_SIZE), &bytenr, &bytes))
			return -ENOSPC;
		struct data_extent *extent = refs_data_extent_new(&fs->txn, bytenr, bytes);
		insert_file_extent(fs, sv, inode, at, extent, bytes, BTRFS_FILE_EXTENT_REGULAR_SIZE, near);
		csum_add(fs, bytenr, bytes);
		fs->counters.data_bytes_written += bytes;
		at += bytes;
	}
	return 0;
}

int fs_reserve_write(struct fs *fs, uint64_t offset, uint64_t length)
{
	uint64_t start = offset & ~(uint64_t)(BTRFS_SECTORSIZE - 1);
	if (blockstore_reserve_data(fs->store, round_up_sector(offset + length) - start)) {
		fs->counters.enospc_events++;
		return -ENOSPC;
	}
	return 0;
}

int fs_write_reserved(struct fs *fs, struct subvolume *sv, uint64_t inode, uint64_t offset, uint64_t length)
{
	if (!fs->config.delayed_writeback) {
		uint64_t stopped_at = 0;
		struct btree_path near = { .levels = 0 };
		int ret = fs_write_range_now(fs, sv, inode, offset, length, true, &stopped_at, &near);
		fs->counters.enospc_events += ret == -ENOSPC;
		if (ret == -EINTR) /* the rest stays a hole: no write will take its room */
			blockstore_unreserve_data(fs->store, round_up_sector(offset + length) - stopped_at);
		return ret;
	}
	struct pending_write w = { sv, inode, offset, length, blockstore_cause(fs->store),
				   delalloc_metadata_bytes(fs->config.nodesize, length) };
	queue_write(fs, w);
	if (fs->pending_writes->len >= FS_WRITEBACK_BATCH)
		return fs_flush_writeback_cancellable(fs, NULL);
	return 0;
}

int fs_write_range(struct fs *fs, struct subvolume *sv, uint64_t inode, uint64_t offset, uint64_t length)
{
	int ret = fs_reserve_write(fs, offset, length);
	return ret ? ret : fs_write_reserved(fs, sv, inode, offset, length);
}

void fs_writeback_order(const bool *is_inline, unsigned n, unsigned lag, unsigned *order)
{
	unsigned done = 0, oldest_regular = 0;
	/* Regular writes wait in submission order: [oldest_regular, i) holds
	 * the ones submitted and not yet inserted, among inline ones already
	 * taken. */
	for (unsigned i = 0; i < n; i++) {
		if (is_inline[i])
			order[done++] = i;
		for (; oldest_regular <= i; oldest_regular++) {
			if (is_inline[oldest_regular])
				continue;
			if (i - oldest_regular < lag)
				break;
			order[done++] = oldest_regular;
		}
	}
	for (; oldest_regular < n; oldest_regular++)
		if (!is_inline[oldest_regular])
			order[done++] = oldest_regular;
}

/* Would the write go inline by itself? (fits_inline() of the write alone;
 * the writeback decides with the file's size, which a copy's one write is.) */
static bool write_looks_inline(const struct fs *fs, const struct pending_write *w)
{
	return fits_inline(fs, w->offset, w->length, w->length);
}

/* The order the queued writes reach the trees: a whole flush as
 * fs_writeback_order(); one inode's (fsync, truncate: it waits for its
 * ordered extents) in submission order, lag 0. */
static unsigned *flush_order(const struct fs *fs, const GArray *queue, bool whole)
{
	unsigned *order = g_new(unsigned, queue->len);
	g_autofree bool *is_inline = g_new(bool, queue->len);
	for (unsigned i = 0; i < queue->len; i++)
		is_inline[i] = write_looks_inline(fs, &g_array_index(queue, struct pending_write, i));
	fs_writeback_order(is_inline, queue->len, whole ? FS_ORDERED_COMPLETION_LAG : 0, order);
	return order;
}

/* Write back the queued data, all of it or one inode's. A write that meets
 * ENOSPC at writeback is lost, as a writeback error is, and counted. A
 * cancelled flush keeps what it did not write queued, in submission order. */
static int flush_writeback(struct fs *fs, const struct inode_location *only, bool cancellable)
{
	g_autoptr(GArray) queue = fs->pending_writes;
	/* Room for a batch at once: grown by doubling, a queue's appends cost
	 * 130 instructions each (docs/performance.md, round 14a). */
	fs->pending_writes = g_array_sized_new(FALSE, FALSE, sizeof(struct pending_write), FS_WRITEBACK_BATCH);
	fs->delalloc_reserved = 0;
	g_autofree unsigned *order = flush_order(fs, queue, only == NULL);
	g_autofree bool *written = g_new0(bool, queue->len);
	struct pending_write rest = { 0 };
	unsigned rest_at = queue->len;
	/* Files written in creation order are neighbours in their tree, but
	 * the writes reach it as two streams (fs_writeback_order()): the inline
	 * ones at submission, the regular ones FS_ORDERED_COMPLETION_LAG
	 * submissions behind. Each stream's inode lookup starts where its last
	 * write's insert left, a path kept across the other stream's inserts
	 * (subvol_lookup_kept() checks it is still linked, BT18): one cursor
	 * for both sent two thirds of the lookups up the tree
	 * (docs/performance.md, round 20a). */
	struct btree_path near[2] = { { .levels = 0 }, { .levels = 0 } };
	const struct subvolume *near_sv = NULL;
	for (unsigned k = 0; k < queue->len && rest_at == queue->len; k++) {
		unsigned i = order[k];
		struct pending_write *w = &g_array_index(queue, struct pending_write, i);
		if (only && (w->subvolume != only->subvolume || w->inode != only->inode))
			continue;
		written[i] = true;
		if (w->subvolume->deleted)
			continue;
		uint64_t stopped_at = 0;
		if (w->subvolume != near_sv || fs->writeback_without_cursor)
			near[0].levels = near[1].levels = 0;
		near_sv = w->subvolume;
		struct btree_path *cursor = &near[write_looks_inline(fs, w)];
		enum space_cause was = blockstore_set_cause(fs->store, w->cause);
		int ret = fs_write_range_now(fs, w->subvolume, w->inode, w->offset, w->length, cancellable,
					     &stopped_at, cursor);
		blockstore_set_cause(fs->store, was);
		if (ret == -EINTR) {
			uint64_t left = w->offset + w->length - stopped_at;
			rest = (struct pending_write){ w->subvolume, w->inode, stopped_at, left, w->cause,
						       delalloc_metadata_bytes(fs->config.nodesize, left) };
			rest_at = i;
		} else if (ret) {
			fs->counters.enospc_events++;
		}
	}
	for (unsigned i = 0; i < queue->len; i++) {
		if (i == rest_at)
			queue_write(fs, rest);
		else if (!written[i])
			queue_write(fs, g_array_index(queue, struct pending_write, i));
	}
	return rest_at == queue->len ? 0 : -EINTR;
}

void fs_flush_writeback(struct fs *fs, const struct inode_location *only)
{
	flush_writeback(fs, only, false);
}

int fs_flush_writeback_cancellable(struct fs *fs, const struct inode_location *only)
{
	return flush_writeback(fs, only, true);
}

bool fs_data_check(const struct fs *fs, GError **error)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < fs->pending_writes->len; i++) {
		const struct pending_write *w = &g_array_index(fs->pending_writes, struct pending_write, i);
		if (w->reserved != delalloc_metadata_bytes(fs->config.nodesize, w->length)) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt writeback queue: inode %" G_GUINT64_FORMAT ", WB1 reserved %" G_GUINT64_FORMAT
				    " bytes, %" G_GUINT64_FORMAT " expected for a write of %" G_GUINT64_FORMAT,
				    w->inode, w->reserved, delalloc_metadata_bytes(fs->config.nodesize, w->length),
				    w->length);
			return false;
		}
		sum += w->reserved;
	}
	if (sum != fs->delalloc_reserved) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt writeback queue: delalloc_reserved %" G_GUINT64_FORMAT
			    ", WB1 the pending writes sum to %" G_GUINT64_FORMAT,
			    fs->delalloc_reserved, sum);
		return false;
	}
	return true;
}

void fs_data_miscount_for_test(struct fs *fs, int64_t delta)
{
	fs->delalloc_reserved = (uint64_t)((int64_t)fs->delalloc_reserved + delta);
}

static bool collect_key(const struct btree_item *item, void *opaque)
{
	g_array_append_val((GArray *)opaque, *btree_item_key(item));
	return true;
}

/* Every item of an inode goes; its extents lose their references. */
void fs_delete_inode_items(struct fs *fs, struct subvolume *sv, uint64_t inode)
{
	fs->names_removed++; /* fs_namespace.c NS1 */
	fs_drop_extents(fs, sv, inode, 0, UINT64_MAX);
	g_autoptr(GArray) keys = g_array_new(FALSE, FALSE, sizeof(struct btree_key));
	struct btree_key first = BTRFS_KEY(inode, 0, 0);
	struct btree_key last = BTRFS_KEY(inode, UINT8_MAX, UINT64_MAX);
	subvol_visit_range(sv, &first, &last, collect_key, keys);
	for (unsigned i = 0; i < keys->len; i++)
		subvol_delete(fs, sv, &g_array_index(keys, struct btree_key, i));
	delayed_items_forget_inode(fs, sv, inode);
}

static int resolve_regular(struct fs *fs, const char *path, struct inode_location *where)
{
	int ret = fs_resolve(fs, path, where);
	if (ret)
		return ret;
	if (fs_is_placeholder(where))
		return -EISDIR;
	const struct btree_item *item = fs_inode_item(where->subvolume, where->inode);
	if (fs_mode_is_dir(btree_item_inode(item)->mode))
		return -EISDIR;
	if (!S_ISREG(btree_item_inode(item)->mode))
		return -EINVAL;
	return where->subvolume->readonly ? -EROFS : 0;
}

int fs_write(struct fs *fs, const char *path, uint64_t offset, uint64_t length)
{
	struct inode_location where;
	int ret = resolve_regular(fs, path, &where);
	if (ret)
		return ret;
	if (offset > UINT64_MAX - length || offset + length > (UINT64_MAX >> 1))
		return -EFBIG;
	if (!length)
		return 0;
	if ((ret = fs_reserve(fs, COWSIM_RESERVE_WRITE)))
		return ret;
	struct item_inode *inode = btree_item_inode_for_write(fs_inode_item_for_write(fs, &where));
	inode->size = MAX(inode->size, offset + length);
	inode->mtime = inode->ctime = fs->clock_ns;
	ret = fs_write_range(fs, where.subvolume, where.inode, offset, length);
	fs_release(fs);
	return ret;
}

int fs_truncate(struct fs *fs, const char *path, uint64_t size)
{
	struct inode_location where;
	int ret = resolve_regular(fs, path, &where);
	if (ret)
		return ret;
	if (size > (UINT64_MAX >> 1))
		return -EFBIG;
	if ((ret = fs_reserve(fs, COWSIM_RESERVE_WRITE)))
		return ret;
	fs_flush_writeback(fs, &where);
	struct item_inode *inode = btree_item_inode_for_write(fs_inode_item_for_write(fs, &where));
	uint64_t old_size = inode->size;
	inode->size = size;
	inode->mtime = inode->ctime = fs->clock_ns;
	if (size < old_size) {
		struct btree_path near = { .levels = 0 };
		struct extent_spans spans;
		file_extents(where.subvolume, where.inode, 1, &near, &spans);
		bool is_inline = spans_inline(&spans);
		if (is_inline && size) {
			/* A cut inside the inline bytes shrinks the item; a cut past them
			 * (the file grew sparse after them) leaves it whole, as
			 * btrfs_truncate_inode_items does. */
			struct extent_span *s = span_at(&spans, 0);
			if (size < s->num_bytes) {
				uint32_t bytes = BTRFS_FILE_EXTENT_INLINE_HEADER + (uint32_t)size;
				struct btree_item *item = subvol_resize(fs, where.subvolume, &s->key, bytes);
				btree_item_file_extent_for_write(item)->num_bytes = size;
			}
		} else {
			fs_drop_extents(fs, where.subvolume, where.inode, round_up_sector(size), UINT64_MAX);
		}
		spans_clear(&spans);
	}
	fs_release(fs);
	return 0;
}

int fs_fsync(struct fs *fs, const char *path)
{
	struct inode_location where;
	int ret = fs_resolve(fs, path, &where);
	if (ret || fs_is_placeholder(&where)) /* simple_dir_operations: noop_fsync */
		return ret;
	ret = fs_flush_writeback_cancellable(fs, &where);
	fs_dirty_time_write_inode(fs, &where); /* vfs_fsync_range: I_DIRTY_TIME -> I_DIRTY_SYNC */
	return ret;
}
