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
 * and answers further steps out of it with a probe:
 *
 *   slots[offset & mask]:  offset | location | name, name_len | is_root | fill
 *                          (linear probing; at most half the slots used; a
 *                          slot is in use when its fill is the table's)
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
 *   snapshot / /snap2     /  and /snap2 hold 2, frozen; / branches to 3 ...
 *
 *   top(sv, dir): from sv's lineage up its parents, the first that changed
 *   dir or has no parent. A table is keyed by (top, dir): /tree/GL's table
 *   is (1, GL) for / and every snapshot, / 's root's is (3, 256) for /.
 *
 * The tables live within DIR_CACHE_BYTES (their slots and headers), found
 * by (lineage, dir) in DIR_CACHE_BUCKETS chains; the one a step turned to
 * least recently goes first (a grep comes back to the directories above).
 *
 *  DC1 every DIR_ITEM goes in and out through fs_add_dir_entry() and
 *     fs_remove_dir_entry() (or with its subvolume's deletion), and each
 *     tells fs_dir_cache_names_changed(); payload copies of a COW keep the
 *     same entry, and names are interned, never freed before the fs;
 *  DC2 a table (lineage, dir) holds every DIR_ITEM of dir that each live
 *     subvolume sv with top(sv, dir) == lineage has, each at a slot its
 *     offset's probe reaches, with the tree's location, name and is_root,
 *     and count says how many;
 *  DC3 no two tables hold one (lineage, dir); each is in its key's chain
 *     and once in the recency list; bytes is what they take, at most
 *     DIR_CACHE_BYTES but for the one just filled;
 *  DC4 the lineages: a parent is older (a smaller id) and frozen, depth is
 *     the parent's + 1 (at most LINEAGE_DEPTH; 0 without one), changed
 *     holds changed_count directories; a lineage not frozen is held by one
 *     live subvolume at most and is nobody's parent. A frozen lineage's
 *     names never change: fs_dir_cache_snapshot() freezes the source's
 *     when the snapshot takes it, and a holder that changes a name first
 *     branches (fs_dir_cache_names_changed()). So a subvolume's directory
 *     holds what the directory held in its top, which is DC2's ground;
 *  DC5 last, when set, is the table top(last_subvolume, last_dir) finds:
 *     a step out of that directory probes it without walking the lineage
 *     (every change of names or lineages clears it).
 * fs_dir_cache_check() checks each lineage (DC4), each table against every
 * subvolume whose top it is (DC2), the chains, the list and the bytes (DC3)
 * and last (DC5).
 */
#include "design.h"
#include "model_error.h"

#include <stdarg.h>
#include <string.h>

enum {
	DIR_CACHE_AFTER = 2,          /* steps in a row out of a directory before its table is made */
	DIR_CACHE_MAX = 1u << 15,     /* entries at most (a power of two): a larger directory keeps its lookups */
	DIR_CACHE_MIN_SLOTS = 8,
	DIR_CACHE_KEEP_SLOTS = 4096,  /* a larger table is not cleared for the next directory but freed */
	/* /usr/include's 2 026 directories take 2.2 MiB (round 15a); a
	 * constant, so that 10^7 files cost no more than 10^3 */
	DIR_CACHE_BYTES = 4u << 20,
};

static size_t table_bytes(const struct dir_table *t)
{
	return sizeof(*t) + (t->mask + 1) * sizeof(*t->slots);
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

/* A new lineage: parent's names but dir's (parent 0: names of its own). */
static uint32_t lineage_new(struct dir_cache *c, uint32_t parent, uint64_t dir)
{
	if (!c->lineages) {
		c->lineages = g_array_new(FALSE, TRUE, sizeof(struct name_lineage));
		g_array_set_size(c->lineages, 1); /* id 0: none */
	}
	struct name_lineage l = { 0 };
	if (parent && lineage_of(c, parent)->depth < LINEAGE_DEPTH)
		l = (struct name_lineage){ .parent = parent, .depth = (uint16_t)(lineage_of(c, parent)->depth + 1),
					   .changed_count = 1, .changed = { dir } };
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
	c->bytes -= table_bytes(t);
	if (c->last == t)
		c->last = NULL;
}

static void table_free(struct dir_table *t)
{
	g_free(t->slots);
	g_free(t);
}

static bool in_use(const struct dir_table *t, const struct dir_cache_entry *e)
{
	return e->fill == t->fill;
}

/* The slot of the entry at offset, or the free slot where it would go. */
static struct dir_cache_entry *slot_of(const struct dir_table *t, uint64_t offset)
{
	for (uint32_t i = (uint32_t)offset & t->mask;; i = (i + 1) & t->mask) {
		struct dir_cache_entry *e = &t->slots[i];
		if (!in_use(t, e) || e->offset == offset)
			return e;
	}
}

static void put(struct dir_table *t, const struct dir_cache_entry *entry)
{
	struct dir_cache_entry *e = slot_of(t, entry->offset);
	*e = *entry;
	e->fill = t->fill;
	t->count++;
}

/* The entries probed again into `slots` new ones (a power of two). */
G_NO_INLINE static void resize(struct dir_table *t, uint32_t slots)
{
	struct dir_cache_entry *old = t->slots;
	uint32_t old_slots = t->mask + 1;
	t->mask = slots - 1;
	t->slots = g_new0(struct dir_cache_entry, slots);
	t->count = 0;
	for (uint32_t i = 0; i < old_slots; i++)
		if (old[i].fill == t->fill)
			put(t, &old[i]);
	g_free(old);
}

/* A leaf's run of the directory's DIR_ITEMs into the table; false: more
 * than DIR_CACHE_MAX, no table (t->count says so). */
static bool fill_items(const struct btree_item *items, uint32_t count, void *opaque)
{
	struct dir_table *t = opaque;
	for (const struct btree_item *item = items; item < items + count; item++) {
		if (2 * (t->count + 1) > t->mask + 1) { /* more than half the slots: grow, or give up */
			if (t->count == DIR_CACHE_MAX) {
				t->count++;
				return false;
			}
			resize(t, 2 * (t->mask + 1));
		}
		const struct item_dir *d = btree_item_dir(item);
		uint64_t offset = btree_item_key(item)->offset;
		*slot_of(t, offset) = (struct dir_cache_entry){ .offset = offset, .location = d->location,
								.name = d->name, .name_len = d->name_len,
								.location_is_root = d->location_is_root,
								.fill = t->fill };
		t->count++;
	}
	return true;
}

/* Room for a new table: the oldest go until a small one fits. The last
 * of them, when not large, is the new table's (its slots, uncleared: the
 * fill stamp tells its entries from the old ones'); else a new one as large
 * as the last fill's (a bench's directories are alike: no grows). */
static struct dir_table *take_table(struct dir_cache *c)
{
	size_t small = sizeof(struct dir_table) + DIR_CACHE_MIN_SLOTS * sizeof(struct dir_cache_entry);
	while (c->oldest && c->bytes + small > DIR_CACHE_BYTES) {
		struct dir_table *t = c->oldest;
		table_unlink(c, t);
		if (t->mask + 1 <= DIR_CACHE_KEEP_SLOTS && c->bytes + table_bytes(t) <= DIR_CACHE_BYTES)
			return t;
		table_free(t);
	}
	struct dir_table *t = g_new0(struct dir_table, 1);
	uint32_t slots = MAX(c->fill_slots, DIR_CACHE_MIN_SLOTS);
	t->mask = slots - 1;
	t->slots = g_new0(struct dir_cache_entry, slots);
	return t;
}

/* The filled table in the fewest slots that hold it (more than half free):
 * a small directory's table after a large one's takes its own size. */
static void fit(struct dir_table *t)
{
	uint32_t slots = DIR_CACHE_MIN_SLOTS;
	while (slots < 2 * t->count)
		slots *= 2;
	if (slots < t->mask + 1)
		resize(t, slots);
}

/* Back within DIR_CACHE_BYTES after t's fill (DC3): the oldest others go. */
static void make_room(struct dir_cache *c, const struct dir_table *t)
{
	while (c->bytes > DIR_CACHE_BYTES && c->oldest != t) {
		struct dir_table *old = c->oldest;
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
	struct dir_table *t = take_table(c);
	if (!++t->fill) { /* every stamp used: clear them */
		memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
		t->fill = 1;
	}
	t->lineage = top;
	t->dir = dir;
	t->count = 0;
	struct btree_key first = BTRFS_KEY(dir, BTRFS_DIR_ITEM_KEY, 0);
	struct btree_key last = BTRFS_KEY(dir, BTRFS_DIR_ITEM_KEY, UINT64_MAX);
	subvol_visit_range_items(sv, &first, &last, fill_items, t);
	if (t->count > DIR_CACHE_MAX) {
		table_free(t);
		return NULL;
	}
	fit(t);
	c->fill_slots = MIN(t->mask + 1, DIR_CACHE_KEEP_SLOTS);
	struct dir_table **chain = chain_of(c, top, dir);
	t->next = *chain;
	*chain = t;
	list_push_newest(c, t);
	c->bytes += table_bytes(t);
	make_room(c, t);
	return t;
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
G_NO_INLINE static struct dir_table *answers(struct fs *fs, struct subvolume *sv, uint64_t dir)
{
	struct dir_cache *c = &fs->dir_cache;
	if (c->off)
		return NULL;
	if (!sv->lineage)
		sv->lineage = lineage_new(c, 0, 0);
	uint32_t top = lineage_top(c, sv->lineage, dir);
	struct dir_table *t = table_find(c, top, dir);
	if (t) {
		list_unlink(c, t);
		list_push_newest(c, t);
	} else if (time_to_fill(c, sv, dir)) {
		t = fill(fs, sv, top, dir);
	}
	if (t) {
		c->last = t;
		c->last_subvolume = sv;
		c->last_dir = dir;
	}
	return t;
}

void fs_dir_cache_names_changed(struct fs *fs, struct subvolume *sv, uint64_t dir)
{
	struct dir_cache *c = &fs->dir_cache;
	c->last = NULL; /* DC5: the step may want another table now */
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
	c->last = NULL;
}

static bool entry_is(const struct dir_table *t, const struct dir_cache_entry *e, const char *name, uint16_t name_len)
{
	return in_use(t, e) && e->name_len == name_len && fs_bytes_equal(e->name, name, name_len);
}

/* The entry named `name` among the offsets hash .. hash + FS_DIR_HASH_PROBE,
 * or NULL. Mostly the one at the hash's own slot: its offset is the hash
 * and no other entry took that slot (round 14c: one check before the loop). */
static const struct dir_cache_entry *probe(const struct dir_table *t, uint32_t hash, const char *name,
					   uint16_t name_len)
{
	const struct dir_cache_entry *e = &t->slots[hash & t->mask];
	if (e->offset == hash && entry_is(t, e, name, name_len))
		return e;
	for (uint64_t offset = hash; offset <= (uint64_t)hash + FS_DIR_HASH_PROBE; offset++) {
		e = slot_of(t, offset);
		if (entry_is(t, e, name, name_len))
			return e;
	}
	return NULL;
}

bool fs_dir_cache_find(struct fs *fs, struct subvolume *sv, uint64_t dir, uint32_t hash, const char *name,
		       uint16_t name_len, const struct dir_cache_entry **found)
{
	const struct dir_cache *c = &fs->dir_cache;
	const struct dir_table *t = c->last;
	if (c->off || !t || c->last_subvolume != sv || c->last_dir != dir) {
		t = answers(fs, sv, dir);
		if (!t)
			return false;
	}
	*found = probe(t, hash, name, name_len);
	return true;
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
	const struct dir_cache_entry *e = slot_of(k->table, offset);
	if (!in_use(k->table, e) || e->location != d->location || e->location_is_root != d->location_is_root ||
	    e->name_len != d->name_len || memcmp(e->name, d->name, d->name_len)) {
		k->ok = corrupt(k->error,
				"%" G_GUINT64_FORMAT ", DC2 the entry at %" G_GUINT64_FORMAT
				" is not in the table as the tree has it",
				k->table->dir, offset);
		return false;
	}
	k->seen++;
	return true;
}

/* DC2 for t and one subvolume whose top it is. */
static bool table_check(const struct dir_table *t, const struct subvolume *sv, GError **error)
{
	uint32_t used = 0;
	for (uint32_t i = 0; i <= t->mask; i++)
		used += in_use(t, &t->slots[i]);
	struct dc_check k = { t, 0, true, error };
	struct btree_key first = BTRFS_KEY(t->dir, BTRFS_DIR_ITEM_KEY, 0);
	struct btree_key last = BTRFS_KEY(t->dir, BTRFS_DIR_ITEM_KEY, UINT64_MAX);
	subvol_visit_range(sv, &first, &last, check_one, &k);
	if (!k.ok)
		return false;
	if (k.seen != t->count || used != t->count)
		return corrupt(error,
			       "%" G_GUINT64_FORMAT ", DC2 %u entries in subvolume %" G_GUINT64_FORMAT
			       "'s tree, %u in the table (count %u)",
			       t->dir, k.seen, sv->id, used, t->count);
	return true;
}

/* DC2 against every live subvolume that asks t; DC3 for its key. */
static bool tables_check(const struct fs *fs, GError **error)
{
	const struct dir_cache *c = &fs->dir_cache;
	uint32_t n = c->lineages ? c->lineages->len : 0;
	size_t bytes = 0;
	for (const struct dir_table *t = c->newest; t; t = t->older) {
		bytes += table_bytes(t);
		if ((t->older ? t->older->newer : c->oldest) != t || !t->lineage || t->lineage >= n ||
		    table_find(c, t->lineage, t->dir) != t)
			return corrupt(error, "%" G_GUINT64_FORMAT ", DC3 lineage %u's table is not the one its chain finds",
				       t->dir, t->lineage);
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
	return true;
}

/* DC5: the last table is the one a step out of its directory would find. */
static bool last_check(const struct fs *fs, GError **error)
{
	const struct dir_cache *c = &fs->dir_cache;
	if (!c->last)
		return true;
	const struct subvolume *sv = c->last_subvolume;
	if (!live(fs, sv) || !sv->lineage || table_find(c, lineage_top(c, sv->lineage, c->last_dir), c->last_dir) != c->last)
		return corrupt(error, "%" G_GUINT64_FORMAT ", DC5 the last table is not the one its step finds",
			       c->last_dir);
	return true;
}

bool fs_dir_cache_check(const struct fs *fs, GError **error)
{
	return lineages_check(fs, error) && tables_check(fs, error) && last_check(fs, error);
}
