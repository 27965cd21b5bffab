/*
 * model/fs_dir_cache.c - the entries of the directories the walks stepped
 * out of, a hash table each (the walk's name -> inode cache), shared by a
 * snapshot and its source while neither has changed the directory's names.
 *
 * A walk's last step, a name's DIR_ITEM looked up from the root, was a
 * third of a read (docs/performance.md round 12b): a grep or the bench
 * reads a directory's files one after another, and each looked its entry
 * up with a descent and a binary search of the directory's leaf. After
 * DIR_CACHE_AFTER steps in a row out of one directory the walk copies that
 * directory's DIR_ITEMs into a table keyed by their key offsets (the names'
 * hashes, or a few past them after a collision), one visit of the range,
 * and answers further steps out of it with a probe. A table is one block
 * (fs_internal.h draws it): an index of 2^k u32 slots, at most half used,
 * then the entries end to end, each with its name:
 *
 *   index[offset & mask]: the byte position of the entry at offset (linear
 *                         probing; 0: free)
 *   entry:                offset | location | name_len | is_root | type | name
 *
 * A probe asks what dir_lookup_hashed() asks of the tree: the entry with the
 * name among the offsets hash .. hash + 8. A table holds entries, not the
 * answers a step makes of them (a subvolume link is still checked as the
 * walk checks it, from the subvolume the walk is in).
 *
 * Name lineages (round 15a). The seed experiment greps a tree and its ten
 * snapshots twice: 22 copies of each directory, one fill each, a quarter of
 * the walk. A snapshot starts with its source's entries, inode numbers
 * and all, so one table can answer both while neither changes the
 * directory. A subvolume holds a lineage, one state of its names:
 *
 *   snapshot / /snap1     /  and /snap1 hold lineage 1, now frozen
 *   "snap1" added to /    /  branches: lineage 2, parent 1, changed {256}
 *   snapshot / /snap2     /  and /snap2 hold 2, frozen; / branches to 3,
 *                         parent 1 (2 differs from 1 in 256 alone), {256}
 *
 *   top(sv, dir): from sv's lineage up its parents, the first that changed
 *   dir or has no parent. A table is keyed by (top, dir): /tree/GL's table
 *   is (1, GL) for / and every snapshot, / 's root's is (3, 256) for /.
 *
 * The tables live within DIR_CACHE_BYTES (their blocks), found by (lineage,
 * dir) in DIR_CACHE_BUCKETS chains, and listed by fill: the oldest goes
 * first unless a step turned to it since it was listed, which puts it at the
 * newest end instead (a second chance: a grep comes back to the directories
 * above, and moving a table on each turn touched its neighbours' headers,
 * two misses a turn).
 *
 *  DC1 every DIR_ITEM goes in and out through fs_add_dir_entry() and
 *     fs_remove_dir_entry() (or with its subvolume's deletion), and each
 *     tells fs_dir_cache_names_changed(); payload copies of a COW keep the
 *     same entry, and names are interned, never freed before the fs;
 *  DC2 a table (lineage, dir) holds every DIR_ITEM of dir that each live
 *     subvolume sv with top(sv, dir) == lineage has, each at a slot its
 *     offset's probe reaches, with the tree's location, name, is_root and
 *     file_type, and count says how many;
 *  DC3 no two tables hold one (lineage, dir); each is in its key's chain
 *     and once in the list; bytes is what they take, at most
 *     DIR_CACHE_BYTES unless one table is listed: make_room() empties the
 *     cache for a table larger than the rest's room, and that one alone
 *     may take more (a directory of up to DIR_CACHE_MAX long names);
 *  DC4 the lineages: a parent is older (a smaller id) and frozen, depth is
 *     the parent's + 1 (at most LINEAGE_DEPTH; 0 without one), changed
 *     holds changed_count directories; a lineage not frozen is held by one
 *     live subvolume at most and is nobody's parent. A frozen lineage's
 *     names never change: fs_dir_cache_snapshot() freezes the source's
 *     when the snapshot takes it, and a holder that changes a name first
 *     branches (fs_dir_cache_names_changed()). So a subvolume's directory
 *     holds what the directory held in its top, which is DC2's ground;
 *  DC5 last, when set, is the table top(last.subvolume, last.dir) finds:
 *     a step out of that directory probes it without walking the lineage
 *     (every change of names or lineages clears it, and its eviction).
 *  DC7 a table's block is its header, its index and count entries end to
 *     end, each padded to 8 bytes, up to bytes; each entry is at exactly
 *     one index slot, the one its offset's probe reaches, and no slot
 *     points elsewhere. A step after a turn to a table it had left finds
 *     the whole block in cache or on its way: the turn prefetches it (a
 *     grep comes back to a directory after a whole tree, and the slot of
 *     each read, far from the last one's, was a miss per read: round 16b).
 * fs_dir_cache_check() checks each lineage (DC4), each table's block (DC7)
 * and its entries against every subvolume whose top it is (DC2), the chains,
 * the list and the bytes (DC3) and last (DC5).
 */
#include "design.h"
#include "model_error.h"

#include <stdarg.h>
#include <string.h>

enum {
	DIR_CACHE_AFTER = 2,          /* steps in a row out of a directory before its table is made */
	DIR_CACHE_MAX = 1u << 15,     /* entries at most (a power of two): a larger directory keeps its lookups */
	DIR_CACHE_MIN_SLOTS = 8,
	DIR_CACHE_PREFETCH_BYTES = 2048, /* of a table turned to: all of most (the seed's average 0.6 KiB) */
	DIR_CACHE_FILL_KEEP = 64u << 10, /* a fill's scratch larger than this is freed, not kept */
	CACHE_LINE = 64,
};

/* An entry's bytes in its block: the name's end rounded up to 8. */
static uint32_t entry_bytes(uint8_t name_len)
{
	return ((uint32_t)offsetof(struct dir_cache_entry, name) + name_len + 7u) & ~7u;
}

/* The index slots of a table of `count` entries: the fewest that leave half
 * of them free. */
static uint32_t index_slots(uint32_t count)
{
	uint32_t slots = DIR_CACHE_MIN_SLOTS;
	while (slots < 2 * count)
		slots *= 2;
	return slots;
}

/* Where a table of `slots` index slots keeps its first entry. */
static uint32_t entries_at(uint32_t slots)
{
	return (uint32_t)sizeof(struct dir_table) + slots * (uint32_t)sizeof(uint32_t);
}

/* --- lineages (DC4) --------------------------------------------------- */

static struct name_lineage *lineage_of(const struct dir_cache *c, uint32_t id)
{
	return &g_array_index(c->lineages, struct name_lineage, id);
}

static bool lineage_changed(const struct name_lineage *l, uint64_t dir)
{
	for (unsigned i = 0; i < l->changed_count; i++)
		if (l->changed[i] == dir)
			return true;
	return false;
}

/* A new lineage: parent's names but dir's (parent 0: names of its own).
 * A parent that differs from its own parent in few directories is skipped:
 * the new lineage hangs from the grandparent with those and dir changed (its
 * names are the grandparent's but theirs). So / branching for its root at
 * each of ten snapshots keeps a chain of one, not ten: a step into a new
 * directory walked the chain (round 15a). */
static uint32_t lineage_new(struct dir_cache *c, uint32_t parent, uint64_t dir)
{
	if (!c->lineages) {
		c->lineages = g_array_new(FALSE, TRUE, sizeof(struct name_lineage));
		g_array_set_size(c->lineages, 1); /* id 0: none */
	}
	struct name_lineage l = { 0 };
	const struct name_lineage *p = parent ? lineage_of(c, parent) : NULL;
	if (p && p->parent && p->changed_count + !lineage_changed(p, dir) <= LINEAGE_CHANGED) {
		l = *p; /* the grandparent, p's changed directories */
		l.frozen = false;
		if (!lineage_changed(p, dir))
			l.changed[l.changed_count++] = dir;
	} else if (p && p->depth < LINEAGE_DEPTH) {
		l = (struct name_lineage){ .parent = parent, .depth = (uint16_t)(p->depth + 1), .changed_count = 1,
					   .changed = { dir } };
	}
	g_array_append_val(c->lineages, l);
	return c->lineages->len - 1;
}

/* The lineage whose table of dir answers for a holder of `id` (top, above). */
static uint32_t lineage_top(const struct dir_cache *c, uint32_t id, uint64_t dir)
{
	for (const struct name_lineage *l = lineage_of(c, id); l->parent && !lineage_changed(l, dir);
	     l = lineage_of(c, id))
		id = l->parent;
	return id;
}

/* --- the tables' index and recency list (DC3) --------------------------- */

static struct dir_table **chain_of(const struct dir_cache *c, uint32_t lineage, uint64_t dir)
{
	uint64_t h = (dir ^ ((uint64_t)lineage << 40)) * 0x9E3779B97F4A7C15ull;
	return &c->buckets[h >> 52]; /* 4096 buckets: the top 12 bits */
}

static struct dir_table *table_find(const struct dir_cache *c, uint32_t lineage, uint64_t dir)
{
	if (!c->buckets)
		return NULL;
	for (struct dir_table *t = *chain_of(c, lineage, dir); t; t = t->next)
		if (t->lineage == lineage && t->dir == dir)
			return t;
	return NULL;
}

static void list_unlink(struct dir_cache *c, struct dir_table *t)
{
	*(t->newer ? &t->newer->older : &c->newest) = t->older;
	*(t->older ? &t->older->newer : &c->oldest) = t->newer;
	t->newer = t->older = NULL;
}

static void list_push_newest(struct dir_cache *c, struct dir_table *t)
{
	t->older = c->newest;
	*(c->newest ? &c->newest->newer : &c->oldest) = t;
	c->newest = t;
}

/* t leaves the index and the list (its memory stays t's owner's). */
static void table_unlink(struct dir_cache *c, struct dir_table *t)
{
	struct dir_table **p = chain_of(c, t->lineage, t->dir);
	while (*p != t)
		p = &(*p)->next;
	*p = t->next;
	list_unlink(c, t);
	c->bytes -= t->bytes;
	if (c->last.table == t)
		c->last.table = NULL;
}

/* --- a table's block (DC7) ------------------------------------------------ */

static void table_free(struct dir_table *t)
{
	g_free(t);
}

/* The index slot of the entry at offset, or the free one where it would go. */
static const uint32_t *slot_of(const struct dir_table *t, uint64_t offset)
{
	for (uint32_t i = (uint32_t)offset & t->mask;; i = (i + 1) & t->mask) {
		uint32_t at = t->index[i];
		if (!at || fs_dir_table_entry(t, at)->offset == offset)
			return &t->index[i];
	}
}

/* memcpy(dst, src, n) of a name into an entry, without the call (a tenth of
 * a fill): words, the last one overlapping, as fs_bytes_equal() reads them,
 * so nothing past src + n is read. */
static void copy_name(char *dst, const char *src, size_t n)
{
	if (n >= 8) {
		uint64_t first = fs_load64(src), last = fs_load64(src + n - 8);
		memcpy(dst, &first, 8);
		for (size_t i = 8; i + 8 < n; i += 8) { /* past 16 bytes */
			uint64_t word = fs_load64(src + i);
			memcpy(dst + i, &word, 8);
		}
		memcpy(dst + n - 8, &last, 8);
	} else if (n >= 4) {
		uint32_t first = fs_load32(src), last = fs_load32(src + n - 4);
		memcpy(dst, &first, 4);
		memcpy(dst + n - 4, &last, 4);
	} else {
		for (size_t i = 0; i < n; i++)
			dst[i] = src[i];
	}
}

struct table_fill {
	struct dir_cache *cache;      /* its fill buffer holds the entries, as in the block */
	uint32_t bytes, count;
};

/* A leaf's run of the directory's DIR_ITEMs, appended; false: more than
 * DIR_CACHE_MAX, no table (count says so). */
static bool fill_items(const struct btree_item *items, uint32_t count, void *opaque)
{
	struct table_fill *f = opaque;
	struct dir_cache *c = f->cache;
	uint32_t at = f->bytes, entries = f->count; /* in registers: the stores below may alias f */
	bool all = true;
	for (const struct btree_item *item = items; item < items + count; item++) {
		if (entries++ == DIR_CACHE_MAX) {
			all = false;
			break;
		}
		const struct item_dir *d = btree_item_dir(item);
		uint32_t bytes = entry_bytes((uint8_t)d->name_len);
		if (at + bytes > c->fill_size) {
			c->fill_size = MAX(2 * c->fill_size, 4096u);
			c->fill = g_realloc(c->fill, c->fill_size);
		}
		struct dir_cache_entry *e = (struct dir_cache_entry *)(c->fill + at);
		memset((char *)e + bytes - 8, 0, 8); /* the padding */
		*e = (struct dir_cache_entry){ .offset = btree_item_key(item)->offset, .location = d->location,
					       .name_len = (uint8_t)d->name_len,
					       .location_is_root = d->location_is_root, .file_type = d->file_type };
		copy_name(e->name, d->name, d->name_len);
		at += bytes;
	}
	f->bytes = at;
	f->count = entries;
	return all;
}

/* The block of f's entries: the index, then the entries as filled (DC7). */
static struct dir_table *table_new(uint32_t lineage, uint64_t dir, const struct table_fill *f)
{
	uint32_t slots = index_slots(f->count);
	uint32_t first = entries_at(slots);
	struct dir_table *t = g_malloc(first + f->bytes);
	*t = (struct dir_table){ .lineage = lineage, .dir = dir, .count = f->count, .mask = slots - 1,
				 .bytes = first + f->bytes };
	memset(t->index, 0, slots * sizeof(*t->index));
	if (f->bytes)
		memcpy((char *)t + first, f->cache->fill, f->bytes);
	for (uint32_t at = first; at < t->bytes;) {
		const struct dir_cache_entry *e = fs_dir_table_entry(t, at);
		uint32_t i = (uint32_t)e->offset & t->mask;
		while (t->index[i]) /* another offset's: offsets are keys, each the first free slot is its */
			i = (i + 1) & t->mask;
		t->index[i] = at;
		at += entry_bytes(e->name_len);
	}
	return t;
}

/* Room for a table of `bytes`: the oldest go until it fits, or none is
 * left, but for those a step turned to since they were listed, which are
 * listed again (DC3). */
static void make_room(struct dir_cache *c, size_t bytes)
{
	while (c->oldest && c->bytes + bytes > DIR_CACHE_BYTES) {
		struct dir_table *old = c->oldest;
		if (old->asked) {
			old->asked = false;
			list_unlink(c, old);
			list_push_newest(c, old);
			continue;
		}
		table_unlink(c, old);
		table_free(old);
	}
}

/* The table (top, dir) from sv's tree (DC2: sv's directory is top's);
 * NULL when the directory is too large. */
static struct dir_table *fill(struct fs *fs, struct subvolume *sv, uint32_t top, uint64_t dir)
{
	struct dir_cache *c = &fs->dir_cache;
	if (!c->buckets)
		c->buckets = g_new0(struct dir_table *, DIR_CACHE_BUCKETS);
	struct table_fill f = { c, 0, 0 };
	struct btree_key first = BTRFS_KEY(dir, BTRFS_DIR_ITEM_KEY, 0);
	struct btree_key last = BTRFS_KEY(dir, BTRFS_DIR_ITEM_KEY, UINT64_MAX);
	subvol_visit_range_items(sv, &first, &last, fill_items, &f);
	struct dir_table *t = NULL;
	if (f.count <= DIR_CACHE_MAX) {
		make_room(c, entries_at(index_slots(f.count)) + f.bytes);
		t = table_new(top, dir, &f);
		struct dir_table **chain = chain_of(c, top, dir);
		t->next = *chain;
		*chain = t;
		list_push_newest(c, t);
		c->bytes += t->bytes;
	}
	if (c->fill_size > DIR_CACHE_FILL_KEEP) { /* a large directory's: not kept for the next */
		g_free(c->fill);
		c->fill = NULL;
		c->fill_size = 0;
	}
	return t;
}

/* The lines of a block from its second on its way to the cache (DC7): the
 * steps after a turn to a table probe it at their names' hashes, each a line
 * of its own, which would be a miss each. Only prefetched: `block` need
 * not be live (a hint's). */
static void prefetch(uintptr_t block, uint32_t bytes)
{
	uintptr_t p = block + CACHE_LINE, end = block + MIN(bytes, (uint32_t)DIR_CACHE_PREFETCH_BYTES);
	for (; p + 3 * CACHE_LINE < end; p += 4 * CACHE_LINE) { /* four a turn: the loop's own steps were most of it */
		__builtin_prefetch((const void *)p);
		__builtin_prefetch((const void *)(p + CACHE_LINE));
		__builtin_prefetch((const void *)(p + 2 * CACHE_LINE));
		__builtin_prefetch((const void *)(p + 3 * CACHE_LINE));
	}
	for (; p < end; p += CACHE_LINE)
		__builtin_prefetch((const void *)p);
}

/* The walk turns to t, found: t's lines, and those of the table it turned
 * to after t last time (a grep goes through the snapshots' copies of a tree
 * in one order: that table is likely the next turn's, and its lines are
 * far), on their way. */
static void prefetch_turn(const struct dir_table *t)
{
	prefetch((uintptr_t)t, t->bytes);
	if (t->next_turn) {
		__builtin_prefetch((const void *)t->next_turn); /* its header: the next turn's chain walk */
		prefetch(t->next_turn, t->next_turn_bytes);
	}
}

/* The walk turns from the last table asked, if any, to t: that one's hint. */
static void note_turn(struct dir_cache *c, const struct dir_table *t)
{
	struct dir_table *from = c->last.table;
	if (from && from != t) {
		from->next_turn = (uintptr_t)t;
		from->next_turn_bytes = t->bytes;
	}
}

/* Is this step out of (sv, dir) the DIR_CACHE_AFTER'th in a row? Later
 * ones are not: the table was made, or refused as too large. */
static bool time_to_fill(struct dir_cache *c, const struct subvolume *sv, uint64_t dir)
{
	if (c->streak_subvolume != sv || c->streak_dir != dir) {
		c->streak_subvolume = sv;
		c->streak_dir = dir;
		c->streak = 0;
	}
	return c->streak < DIR_CACHE_AFTER && ++c->streak == DIR_CACHE_AFTER;
}

/* The table that answers the walk's step out of (sv, dir), now or once
 * made, when it is not the last one asked (DC5); NULL: none. */
const struct dir_table *fs_dir_cache_answers(struct fs *fs, struct subvolume *sv, uint64_t dir)
{
	struct dir_cache *c = &fs->dir_cache;
	if (c->off)
		return NULL;
	if (!sv->lineage)
		sv->lineage = lineage_new(c, 0, 0);
	uint32_t top = lineage_top(c, sv->lineage, dir);
	struct dir_table *t = table_find(c, top, dir);
	if (t) {
		t->asked = true; /* DC3: a second chance */
		prefetch_turn(t);
	} else if (time_to_fill(c, sv, dir)) {
		t = fill(fs, sv, top, dir);
	}
	if (t) {
		note_turn(c, t);
		c->last = (struct dir_cache_asked){ t, sv, dir };
	}
	return t;
}

void fs_dir_cache_names_changed(struct fs *fs, struct subvolume *sv, uint64_t dir)
{
	struct dir_cache *c = &fs->dir_cache;
	c->last.table = NULL; /* DC5: the step may want another table now */
	c->streak = 0;
	if (!sv->lineage)
		return; /* no table holds its names */
	struct name_lineage *l = lineage_of(c, sv->lineage);
	if (l->frozen) { /* DC4: the other holders keep the names as they are */
		sv->lineage = lineage_new(c, sv->lineage, dir);
		return;
	}
	if (l->parent && !lineage_changed(l, dir)) {
		if (l->changed_count == LINEAGE_CHANGED)
			*l = (struct name_lineage){ 0 }; /* too many to tell apart: its names are its own */
		else
			l->changed[l->changed_count++] = dir;
	}
	struct dir_table *t = table_find(c, sv->lineage, dir); /* sv's alone: not frozen */
	if (t) {
		table_unlink(c, t);
		table_free(t);
	}
}

void fs_dir_cache_snapshot(struct fs *fs, struct subvolume *src, struct subvolume *snap)
{
	struct dir_cache *c = &fs->dir_cache;
	if (!src->lineage)
		src->lineage = lineage_new(c, 0, 0);
	lineage_of(c, src->lineage)->frozen = true;
	snap->lineage = src->lineage;
	c->last.table = NULL;
}

const struct dir_cache_entry *fs_dir_cache_probe_on(const struct dir_table *t, uint32_t hash, const char *name,
						    uint16_t name_len)
{
	for (uint64_t offset = hash; offset <= (uint64_t)hash + FS_DIR_HASH_PROBE; offset++) {
		uint32_t at = *slot_of(t, offset);
		if (at && fs_dir_cache_entry_is(fs_dir_table_entry(t, at), name, name_len))
			return fs_dir_table_entry(t, at);
	}
	return NULL;
}

void fs_dir_cache_free(struct fs *fs)
{
	struct dir_cache *c = &fs->dir_cache;
	while (c->oldest) {
		struct dir_table *t = c->oldest;
		table_unlink(c, t);
		table_free(t);
	}
	g_free(c->buckets);
	g_free(c->fill);
	if (c->lineages)
		g_array_free(c->lineages, TRUE);
	*c = (struct dir_cache){ 0 };
}

/* --- the checks ------------------------------------------------------ */

static bool corrupt(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);
static bool corrupt(GError **error, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	g_autofree char *reason = g_strdup_vprintf(format, args);
	va_end(args);
	g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT, "corrupt directory cache: %s", reason);
	return false;
}

static bool live(const struct fs *fs, const struct subvolume *sv)
{
	for (unsigned i = 0; i < fs->subvolumes->len; i++)
		if (fs->subvolumes->pdata[i] == sv)
			return !sv->deleted;
	return false;
}

/* DC4 for every lineage and every live subvolume's. */
static bool lineages_check(const struct fs *fs, GError **error)
{
	const struct dir_cache *c = &fs->dir_cache;
	uint32_t n = c->lineages ? c->lineages->len : 0;
	for (uint32_t id = 1; id < n; id++) {
		const struct name_lineage *l = lineage_of(c, id);
		const struct name_lineage *p = l->parent ? lineage_of(c, l->parent) : NULL;
		if (l->parent >= id || (p && !p->frozen) || l->depth != (p ? p->depth + 1 : 0) ||
		    l->depth > LINEAGE_DEPTH || l->changed_count > LINEAGE_CHANGED || (!p && l->changed_count))
			return corrupt(error, "lineage %u, DC4 its parent %u is not an older frozen one at depth %u"
					      " with at most %u changed",
				       id, l->parent, l->depth ? l->depth - 1 : 0, LINEAGE_CHANGED);
	}
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted || !sv->lineage)
			continue;
		if (sv->lineage >= n)
			return corrupt(error, "subvolume %" G_GUINT64_FORMAT ", DC4 no lineage %u", sv->id, sv->lineage);
		for (unsigned j = 0; j < i && !lineage_of(c, sv->lineage)->frozen; j++) {
			const struct subvolume *other = fs->subvolumes->pdata[j];
			if (!other->deleted && other->lineage == sv->lineage)
				return corrupt(error, "lineage %u, DC4 held by subvolumes %" G_GUINT64_FORMAT
						      " and %" G_GUINT64_FORMAT " but not frozen",
					       sv->lineage, other->id, sv->id);
		}
	}
	return true;
}

struct dc_check {
	const struct dir_table *table;
	uint32_t seen;
	bool ok;
	GError **error;
};

static bool check_one(const struct btree_item *item, void *opaque)
{
	struct dc_check *k = opaque;
	const struct item_dir *d = btree_item_dir(item);
	uint64_t offset = btree_item_key(item)->offset;
	uint32_t at = *slot_of(k->table, offset);
	const struct dir_cache_entry *e = fs_dir_table_entry(k->table, at);
	if (!at || e->location != d->location || e->location_is_root != d->location_is_root ||
	    e->file_type != d->file_type || e->name_len != d->name_len || memcmp(e->name, d->name, d->name_len)) {
		k->ok = corrupt(k->error,
				"%" G_GUINT64_FORMAT ", DC2 the entry at %" G_GUINT64_FORMAT
				" is not in the table as the tree has it",
				k->table->dir, offset);
		return false;
	}
	k->seen++;
	return true;
}

/* DC2 for t (its block checked: DC7) and one subvolume whose top it is. */
static bool table_check(const struct dir_table *t, const struct subvolume *sv, GError **error)
{
	struct dc_check k = { t, 0, true, error };
	struct btree_key first = BTRFS_KEY(t->dir, BTRFS_DIR_ITEM_KEY, 0);
	struct btree_key last = BTRFS_KEY(t->dir, BTRFS_DIR_ITEM_KEY, UINT64_MAX);
	subvol_visit_range(sv, &first, &last, check_one, &k);
	if (!k.ok)
		return false;
	if (k.seen != t->count)
		return corrupt(error,
			       "%" G_GUINT64_FORMAT ", DC2 %u entries in subvolume %" G_GUINT64_FORMAT
			       "'s tree, %u in the table",
			       t->dir, k.seen, sv->id, t->count);
	return true;
}

/* DC7: t's block is its header, index and count entries end to end, each
 * at the one slot its offset's probe reaches. Every used slot is checked to
 * point at an entry inside the block before a probe reads it. */
static bool block_check(const struct dir_table *t, GError **error)
{
	uint32_t first = entries_at(t->mask + 1), used = 0, entries = 0, at;
	bool power_of_two = t->mask + 1 >= DIR_CACHE_MIN_SLOTS && !(t->mask & (t->mask + 1));
	for (uint32_t i = 0; power_of_two && i <= t->mask; i++) {
		at = t->index[i];
		if (at && (at < first || at % 8 || at > t->bytes - offsetof(struct dir_cache_entry, name) ||
			   at + entry_bytes(fs_dir_table_entry(t, at)->name_len) > t->bytes))
			return corrupt(error, "%" G_GUINT64_FORMAT ", DC7 index slot %u points at %u, outside the entries"
					      " [%u, %u)", t->dir, i, at, first, t->bytes);
		used += !!at;
	}
	for (at = first; power_of_two && at < t->bytes && entries <= t->count;
	     at += entry_bytes(fs_dir_table_entry(t, at)->name_len), entries++)
		if (*slot_of(t, fs_dir_table_entry(t, at)->offset) != at)
			break;
	if (!power_of_two || at != t->bytes || entries != t->count || used != t->count || 2 * used > t->mask + 1)
		return corrupt(error, "%" G_GUINT64_FORMAT ", DC7 the entries end to end stop at byte %u of %u after %u"
				      " at their slots (count %u), %u of %u slots used", t->dir, at, t->bytes, entries,
			       t->count, used, t->mask + 1);
	return true;
}

/* DC2 against every live subvolume that asks t; DC3 for its key. */
static bool tables_check(const struct fs *fs, GError **error)
{
	const struct dir_cache *c = &fs->dir_cache;
	uint32_t n = c->lineages ? c->lineages->len : 0;
	size_t bytes = 0;
	for (const struct dir_table *t = c->newest; t; t = t->older) {
		bytes += t->bytes;
		if ((t->older ? t->older->newer : c->oldest) != t || !t->lineage || t->lineage >= n ||
		    table_find(c, t->lineage, t->dir) != t)
			return corrupt(error, "%" G_GUINT64_FORMAT ", DC3 lineage %u's table is not the one its chain finds",
				       t->dir, t->lineage);
		if (!block_check(t, error))
			return false;
		for (unsigned i = 0; i < fs->subvolumes->len; i++) {
			const struct subvolume *sv = fs->subvolumes->pdata[i];
			if (!sv->deleted && sv->lineage && lineage_top(c, sv->lineage, t->dir) == t->lineage &&
			    !table_check(t, sv, error))
				return false;
		}
	}
	unsigned chained = 0;
	for (unsigned b = 0; c->buckets && b < DIR_CACHE_BUCKETS; b++)
		for (const struct dir_table *t = c->buckets[b]; t; t = t->next)
			chained++;
	unsigned listed = 0;
	for (const struct dir_table *t = c->newest; t; t = t->older)
		listed++;
	if (bytes != c->bytes || chained != listed || (c->newest && c->newest->newer))
		return corrupt(error, "DC3 %u tables of %zu bytes listed, %u chained, %zu bytes counted", listed, bytes,
			       chained, c->bytes);
	if (listed > 1 && bytes > DIR_CACHE_BYTES)
		return corrupt(error, "DC3 %u tables of %zu bytes, over DIR_CACHE_BYTES (%u)", listed, bytes,
			       DIR_CACHE_BYTES);
	return true;
}

/* DC5: the last table is the one a step out of its directory would find. */
static bool last_check(const struct fs *fs, GError **error)
{
	const struct dir_cache *c = &fs->dir_cache;
	const struct subvolume *sv = c->last.subvolume;
	if (c->last.table && (!live(fs, sv) || !sv->lineage ||
			      table_find(c, lineage_top(c, sv->lineage, c->last.dir), c->last.dir) != c->last.table))
		return corrupt(error, "%" G_GUINT64_FORMAT ", DC5 the last table is not the one its step finds",
			       c->last.dir);
	return true;
}

bool fs_dir_cache_check(const struct fs *fs, GError **error)
{
	return lineages_check(fs, error) && tables_check(fs, error) && last_check(fs, error);
}
