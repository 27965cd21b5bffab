/*
 * model/fs_dir_cache.c - the entries of the directory the walks keep
 * stepping out of, in a hash table (the walk's name -> inode cache).
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
 * name among the offsets hash .. hash + 8. The table holds entries, not the
 * answers a step makes of them (a subvolume link is still checked as the
 * walk checks it), so it stays what the tree says while no entry is added
 * or removed:
 *  DC1 the table is used only while fs->names_added and fs->names_removed
 *     are what they were when it was filled. Every DIR_ITEM goes in and out
 *     through fs_add_dir_entry() and fs_remove_dir_entry() (or with its
 *     subvolume's deletion), and each counts; payload copies of a COW keep
 *     the same entry, and names are interned, never freed before the fs;
 *  DC2 while it is used, it holds every DIR_ITEM of (subvolume, dir), each
 *     at a slot its offset's probe reaches, with the tree's location, name
 *     and is_root, and count says how many.
 * fs_dir_cache_check() visits the directory again and checks DC2.
 */
#include "design.h"
#include "model_error.h"

#include <string.h>

enum {
	DIR_CACHE_AFTER = 4,          /* steps in a row out of a directory before its table is made */
	DIR_CACHE_MAX = 1u << 16,     /* entries at most: a larger directory keeps its lookups */
	DIR_CACHE_MIN_SLOTS = 64,
	DIR_CACHE_KEEP_SLOTS = 4096,  /* a larger table is not cleared for the next directory but freed */
};

static bool dir_cache_current(const struct fs *fs, const struct dir_cache *c)
{
	return c->subvolume && c->names_added == fs->names_added && c->names_removed == fs->names_removed;
}

static bool in_use(const struct dir_cache *c, const struct dir_cache_entry *e)
{
	return e->fill == c->fill;
}

/* The slot of the entry at offset, or the free slot where it would go. */
static struct dir_cache_entry *slot_of(const struct dir_cache *c, uint64_t offset)
{
	for (uint32_t i = (uint32_t)offset & c->mask;; i = (i + 1) & c->mask) {
		struct dir_cache_entry *e = &c->slots[i];
		if (!in_use(c, e) || e->offset == offset)
			return e;
	}
}

static void put(struct dir_cache *c, const struct dir_cache_entry *entry)
{
	struct dir_cache_entry *e = slot_of(c, entry->offset);
	*e = *entry;
	e->fill = c->fill;
	c->count++;
}

/* Twice the slots, the entries probed in again. */
static void grow(struct dir_cache *c)
{
	struct dir_cache_entry *old = c->slots;
	uint32_t old_slots = c->mask + 1;
	c->mask = 2 * old_slots - 1;
	c->slots = g_new0(struct dir_cache_entry, c->mask + 1);
	c->count = 0;
	for (uint32_t i = 0; i < old_slots; i++)
		if (in_use(c, &old[i]))
			put(c, &old[i]);
	g_free(old);
}

static bool fill_one(const struct btree_item *item, void *opaque)
{
	struct dir_cache *c = opaque;
	if (c->count == DIR_CACHE_MAX) {
		c->subvolume = NULL; /* too large: not made */
		return false;
	}
	if (2 * (c->count + 1) > c->mask + 1)
		grow(c);
	const struct item_dir *d = btree_item_dir(item);
	put(c, &(struct dir_cache_entry){ .offset = btree_item_key(item)->offset, .location = d->location,
					  .name = d->name, .name_len = d->name_len,
					  .location_is_root = d->location_is_root });
	return true;
}

/* The table of (sv, dir) from the tree; false when the directory is too large. */
static bool fill(struct fs *fs, struct subvolume *sv, uint64_t dir)
{
	struct dir_cache *c = &fs->dir_cache;
	if (c->mask + 1 > DIR_CACHE_KEEP_SLOTS) { /* the last was large: start small again */
		g_free(c->slots);
		c->slots = NULL;
	}
	if (!c->slots) {
		c->mask = DIR_CACHE_MIN_SLOTS - 1;
		c->slots = g_new0(struct dir_cache_entry, DIR_CACHE_MIN_SLOTS);
	}
	if (!++c->fill) { /* every stamp used: clear them */
		memset(c->slots, 0, (c->mask + 1) * sizeof(*c->slots));
		c->fill = 1;
	}
	c->subvolume = sv;
	c->dir = dir;
	c->names_added = fs->names_added;
	c->names_removed = fs->names_removed;
	c->count = 0;
	struct btree_key first = BTRFS_KEY(dir, BTRFS_DIR_ITEM_KEY, 0);
	struct btree_key last = BTRFS_KEY(dir, BTRFS_DIR_ITEM_KEY, UINT64_MAX);
	subvol_visit_range(sv, &first, &last, fill_one, c);
	return c->subvolume != NULL;
}

/* Is the walk's step out of (sv, dir) one the table answers, now or once made? */
static bool answers(struct fs *fs, struct subvolume *sv, uint64_t dir)
{
	struct dir_cache *c = &fs->dir_cache;
	if (c->off)
		return false;
	if (c->subvolume == sv && c->dir == dir && dir_cache_current(fs, c))
		return true;
	if (c->last_subvolume != sv || c->last_dir != dir || c->last_names_added != fs->names_added ||
	    c->last_names_removed != fs->names_removed) {
		c->last_subvolume = sv;
		c->last_dir = dir;
		c->last_names_added = fs->names_added;
		c->last_names_removed = fs->names_removed;
		c->streak = 0;
	}
	if (c->streak >= DIR_CACHE_AFTER)
		return false; /* this directory was too large */
	if (++c->streak < DIR_CACHE_AFTER)
		return false; /* not yet */
	return fill(fs, sv, dir);
}

bool fs_dir_cache_find(struct fs *fs, struct subvolume *sv, uint64_t dir, uint32_t hash, const char *name,
		       uint16_t name_len, const struct dir_cache_entry **found)
{
	if (!answers(fs, sv, dir))
		return false;
	const struct dir_cache *c = &fs->dir_cache;
	*found = NULL;
	for (uint64_t offset = hash; offset <= (uint64_t)hash + FS_DIR_HASH_PROBE; offset++) {
		const struct dir_cache_entry *e = slot_of(c, offset);
		if (in_use(c, e) && e->name_len == name_len && !memcmp(e->name, name, name_len)) {
			*found = e;
			break;
		}
	}
	return true;
}

void fs_dir_cache_free(struct fs *fs)
{
	g_free(fs->dir_cache.slots);
	fs->dir_cache = (struct dir_cache){ 0 };
}

/* --- DC2 -------------------------------------------------------------- */

struct dc_check {
	const struct dir_cache *cache;
	uint32_t seen;
	bool ok;
	GError **error;
};

static bool check_one(const struct btree_item *item, void *opaque)
{
	struct dc_check *k = opaque;
	const struct item_dir *d = btree_item_dir(item);
	uint64_t offset = btree_item_key(item)->offset;
	const struct dir_cache_entry *e = slot_of(k->cache, offset);
	if (!in_use(k->cache, e) || e->location != d->location || e->location_is_root != d->location_is_root ||
	    e->name_len != d->name_len || memcmp(e->name, d->name, d->name_len)) {
		g_set_error(k->error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt directory cache: %" G_GUINT64_FORMAT ", DC2 the entry at %" G_GUINT64_FORMAT
			    " is not in the table as the tree has it",
			    k->cache->dir, offset);
		return k->ok = false;
	}
	k->seen++;
	return true;
}

bool fs_dir_cache_check(const struct fs *fs, GError **error)
{
	const struct dir_cache *c = &fs->dir_cache;
	if (!dir_cache_current(fs, c))
		return true; /* DC1: not used */
	bool known = false;
	for (unsigned i = 0; i < fs->subvolumes->len && !known; i++)
		known = fs->subvolumes->pdata[i] == c->subvolume && !c->subvolume->deleted;
	if (!known) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt directory cache: DC1 a table for no live subvolume");
		return false;
	}
	uint32_t used = 0;
	for (uint32_t i = 0; i <= c->mask; i++)
		used += in_use(c, &c->slots[i]);
	struct dc_check k = { c, 0, true, error };
	struct btree_key first = BTRFS_KEY(c->dir, BTRFS_DIR_ITEM_KEY, 0);
	struct btree_key last = BTRFS_KEY(c->dir, BTRFS_DIR_ITEM_KEY, UINT64_MAX);
	subvol_visit_range(c->subvolume, &first, &last, check_one, &k);
	if (!k.ok)
		return false;
	if (k.seen != c->count || used != c->count) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt directory cache: %" G_GUINT64_FORMAT ", DC2 %u entries in the tree, %u in the table"
			    " (count %u)",
			    c->dir, k.seen, used, c->count);
		return false;
	}
	return true;
}
