/*
 * model/fs_dir_cache.c - the entries of the last directories the walks
 * stepped out of, a hash table each (the walk's name -> inode cache).
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
 * There are DIR_CACHE_TABLES tables, one directory each: a grep goes down
 * into a subdirectory and comes back to read the next name of the one above
 * (round 13b), which found that directory's table gone when there was one.
 * A new directory takes a table not in use, or the one the steps turned to
 * least recently among those the walk is not passing through (a grep comes
 * back to those); the last one asked is asked first, in line.
 *
 * A probe asks what dir_lookup_hashed() asks of the tree: the entry with the
 * name among the offsets hash .. hash + 8. A table holds entries, not the
 * answers a step makes of them (a subvolume link is still checked as the
 * walk checks it), so it stays what the tree says while no entry is added
 * or removed:
 *  DC1 a table is used only while fs->names_added and fs->names_removed
 *     are what they were when it was filled. Every DIR_ITEM goes in and out
 *     through fs_add_dir_entry() and fs_remove_dir_entry() (or with its
 *     subvolume's deletion), and each counts; payload copies of a COW keep
 *     the same entry, and names are interned, never freed before the fs;
 *  DC2 while it is used, it holds every DIR_ITEM of (subvolume, dir), each
 *     at a slot its offset's probe reaches, with the tree's location, name
 *     and is_root, and count says how many;
 *  DC3 no two tables in use hold one directory.
 * fs_dir_cache_check() visits each used table's directory again (DC2) and
 * compares the tables in use pairwise (DC3).
 */
#include "design.h"
#include "model_error.h"

#include <string.h>

enum {
	DIR_CACHE_AFTER = 2,          /* steps in a row out of a directory before its table is made */
	DIR_CACHE_MAX = 1u << 16,     /* entries at most (a power of two): a larger directory keeps its lookups */
	DIR_CACHE_MIN_SLOTS = 64,
	DIR_CACHE_KEEP_SLOTS = 4096,  /* a larger table is not cleared for the next directory but freed */
};

static bool table_current(const struct fs *fs, const struct dir_table *t)
{
	return t->subvolume && t->names_added == fs->names_added && t->names_removed == fs->names_removed;
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

/* Twice the slots, the entries probed in again. */
G_NO_INLINE static void grow(struct dir_table *t)
{
	struct dir_cache_entry *old = t->slots;
	uint32_t old_slots = t->mask + 1;
	t->mask = 2 * old_slots - 1;
	t->slots = g_new0(struct dir_cache_entry, t->mask + 1);
	t->count = 0;
	for (uint32_t i = 0; i < old_slots; i++)
		if (old[i].fill == t->fill)
			put(t, &old[i]);
	g_free(old);
}

/* A leaf's run of the directory's DIR_ITEMs into the table. */
static bool fill_items(const struct btree_item *items, uint32_t count, void *opaque)
{
	struct dir_table *t = opaque;
	for (const struct btree_item *item = items; item < items + count; item++) {
		if (2 * (t->count + 1) > t->mask + 1) { /* more than half the slots: grow, or give up */
			if (t->count == DIR_CACHE_MAX) {
				t->subvolume = NULL; /* too large: not made */
				return false;
			}
			grow(t);
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

/* Is t's directory one the walk is passing through? A grep goes depth
 * first: it comes back to each of those, and to no other. */
static bool on_the_walk(const struct fs *fs, const struct dir_table *t)
{
	const struct walk_memo *m = &fs->walk_memo;
	for (unsigned k = 0; k < m->depth; k++)
		if (m->levels[k].dir.inode == t->dir && m->levels[k].dir.subvolume == t->subvolume)
			return true;
	return false;
}

/* The table a new directory takes: one not current (DC1) if any, else the
 * one the steps turned to least recently among those not on the walk's
 * path (the memo's levels), else among all. */
static struct dir_table *victim(struct fs *fs)
{
	struct dir_cache *c = &fs->dir_cache;
	struct dir_table *oldest = NULL, *oldest_on_path = NULL;
	for (unsigned i = 0; i < DIR_CACHE_TABLES; i++) {
		struct dir_table *t = &c->tables[i];
		if (!table_current(fs, t))
			return t;
		struct dir_table **slot = on_the_walk(fs, t) ? &oldest_on_path : &oldest;
		if (!*slot || t->used < (*slot)->used)
			*slot = t;
	}
	return oldest ? oldest : oldest_on_path;
}

/* The table of (sv, dir) from the tree; NULL when the directory is too large. */
static struct dir_table *fill(struct fs *fs, struct subvolume *sv, uint64_t dir)
{
	struct dir_cache *c = &fs->dir_cache;
	struct dir_table *t = victim(fs);
	if (t->mask + 1 > DIR_CACHE_KEEP_SLOTS) { /* the last was large: start small again */
		g_free(t->slots);
		t->slots = NULL;
	}
	if (!t->slots) {
		t->mask = DIR_CACHE_MIN_SLOTS - 1;
		t->slots = g_new0(struct dir_cache_entry, DIR_CACHE_MIN_SLOTS);
	}
	if (!++t->fill) { /* every stamp used: clear them */
		memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
		t->fill = 1;
	}
	t->subvolume = sv;
	t->dir = dir;
	t->names_added = fs->names_added;
	t->names_removed = fs->names_removed;
	t->used = ++c->clock;
	t->count = 0;
	c->last = (unsigned)(t - c->tables);
	struct btree_key first = BTRFS_KEY(dir, BTRFS_DIR_ITEM_KEY, 0);
	struct btree_key last = BTRFS_KEY(dir, BTRFS_DIR_ITEM_KEY, UINT64_MAX);
	subvol_visit_range_items(sv, &first, &last, fill_items, t);
	return t->subvolume ? t : NULL;
}

/* The current table of (sv, dir), or NULL. */
static struct dir_table *table_of(struct fs *fs, const struct subvolume *sv, uint64_t dir)
{
	struct dir_cache *c = &fs->dir_cache;
	for (unsigned i = 0; i < DIR_CACHE_TABLES; i++) {
		struct dir_table *t = &c->tables[i];
		if (t->subvolume == sv && t->dir == dir && table_current(fs, t)) {
			c->tables[c->last].used = t->used = ++c->clock; /* both just used */
			c->last = i;
			return t;
		}
	}
	return NULL;
}

/* The table that answers the walk's step out of (sv, dir), now or once made,
 * when it is not the last one asked; NULL: none. */
G_NO_INLINE static struct dir_table *answers(struct fs *fs, struct subvolume *sv, uint64_t dir)
{
	struct dir_cache *c = &fs->dir_cache;
	if (c->off)
		return NULL;
	struct dir_table *t = table_of(fs, sv, dir);
	if (t)
		return t;
	if (c->last_subvolume != sv || c->last_dir != dir || c->last_names_added != fs->names_added ||
	    c->last_names_removed != fs->names_removed) {
		c->last_subvolume = sv;
		c->last_dir = dir;
		c->last_names_added = fs->names_added;
		c->last_names_removed = fs->names_removed;
		c->streak = 0;
	}
	if (c->streak >= DIR_CACHE_AFTER)
		return NULL; /* this directory was too large */
	if (++c->streak < DIR_CACHE_AFTER)
		return NULL; /* not yet */
	return fill(fs, sv, dir);
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
	const struct dir_table *t = &c->tables[c->last];
	if (c->off || t->subvolume != sv || t->dir != dir || !table_current(fs, t)) {
		t = answers(fs, sv, dir);
		if (!t)
			return false;
	}
	*found = probe(t, hash, name, name_len);
	return true;
}

void fs_dir_cache_free(struct fs *fs)
{
	for (unsigned i = 0; i < DIR_CACHE_TABLES; i++)
		g_free(fs->dir_cache.tables[i].slots);
	fs->dir_cache = (struct dir_cache){ 0 };
}

/* --- DC2 -------------------------------------------------------------- */

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
		g_set_error(k->error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt directory cache: %" G_GUINT64_FORMAT ", DC2 the entry at %" G_GUINT64_FORMAT
			    " is not in the table as the tree has it",
			    k->table->dir, offset);
		return k->ok = false;
	}
	k->seen++;
	return true;
}

static bool table_check(const struct fs *fs, const struct dir_table *t, GError **error)
{
	bool known = false;
	for (unsigned i = 0; i < fs->subvolumes->len && !known; i++)
		known = fs->subvolumes->pdata[i] == t->subvolume && !t->subvolume->deleted;
	if (!known) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt directory cache: DC1 a table for no live subvolume");
		return false;
	}
	uint32_t used = 0;
	for (uint32_t i = 0; i <= t->mask; i++)
		used += in_use(t, &t->slots[i]);
	struct dc_check k = { t, 0, true, error };
	struct btree_key first = BTRFS_KEY(t->dir, BTRFS_DIR_ITEM_KEY, 0);
	struct btree_key last = BTRFS_KEY(t->dir, BTRFS_DIR_ITEM_KEY, UINT64_MAX);
	subvol_visit_range(t->subvolume, &first, &last, check_one, &k);
	if (!k.ok)
		return false;
	if (k.seen != t->count || used != t->count) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt directory cache: %" G_GUINT64_FORMAT ", DC2 %u entries in the tree, %u in the table"
			    " (count %u)",
			    t->dir, k.seen, used, t->count);
		return false;
	}
	return true;
}

bool fs_dir_cache_check(const struct fs *fs, GError **error)
{
	const struct dir_cache *c = &fs->dir_cache;
	for (unsigned i = 0; i < DIR_CACHE_TABLES; i++) {
		const struct dir_table *t = &c->tables[i];
		if (!table_current(fs, t))
			continue; /* DC1: not used */
		for (unsigned j = 0; j < i; j++)
			if (table_current(fs, &c->tables[j]) && c->tables[j].subvolume == t->subvolume &&
			    c->tables[j].dir == t->dir) {
				g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
					    "corrupt directory cache: %" G_GUINT64_FORMAT ", DC3 in two tables", t->dir);
				return false;
			}
		if (!table_check(fs, t, error))
			return false;
	}
	return true;
}
