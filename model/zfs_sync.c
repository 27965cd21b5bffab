/*
 * model/zfs_sync.c - writing an objset's dirty state in a txg
 * (dmu_objset_sync, dnode_sync, dbuf_sync_indirect in OpenZFS).
 *
 * For each object, in object order:
 *   1. kill the blocks a free or truncate gave up (every level);
 *   2. grow nlevels if the level-0 blocks no longer fit under the dnode;
 *   3. write each dirty level-0 block anew, then at each level above the
 *      indirect blocks over the ones just written, up to the dnode:
 *
 *        level 2          [I]                   [I']      new, birth txg
 *                        /   \                 /   \
 *        level 1      [I]     [I]   ==>     [I']    [I]   only the path
 *                    / | \   / | \         / | \   / | \  above a change
 *        level 0    a  b  c d  e  f       a  b' c d  e  f
 *
 *   4. the object's dnode block (meta-dnode level 0) is dirty.
 * Then the meta-dnode's dirty dnode blocks and their indirect path, then
 * a new objset block. Every block replaced is handed to `kill` (the
 * birth-time rule lives in zfs_pool.c).
 *
 * Invariant ZS1 (checked as Z1): a block's birth is at most its parent's;
 * the objset block is the newest of its objset.
 */
#include "zfs_internal.h"

struct sync_ctx {
	struct zfs_pool *pool;
	struct zfs_objset *os;
	uint64_t txg;
	uint8_t cause;                /* the label of what is being written */
	zfs_kill_fn kill;
	void *opaque;
};

struct zfs_block *zfs_block_alloc(struct zfs_pool *pool, uint64_t txg, uint32_t lsize, uint8_t level,
				  enum zfs_block_kind kind, uint8_t cause)
{
	static const uint8_t copies[] = { ZFS_DATA_COPIES, ZFS_METADATA_COPIES, ZFS_MOS_COPIES };
	struct zfs_block *b = g_new0(struct zfs_block, 1);
	uint64_t unit = 1ull << pool->config.ashift;

	b->id = ++pool->next_block_id;
	b->birth = txg;
	b->lsize = lsize;
	b->level = level;
	b->kind = (uint8_t)kind;
	b->copies = copies[kind];
	b->cause = cause;
	b->asize = (lsize + unit - 1) / unit * unit;
	pool->used[kind] += b->asize;
	if (kind != ZFS_BLOCK_DATA)
		pool->cause_used[cause] += b->asize;
	pool->raw[kind] += b->asize * b->copies;
	pool->blocks_written++;
	pool->bytes_written += b->asize * b->copies;
	g_hash_table_insert(pool->blocks, &b->id, b);
	return b;
}

void zfs_block_free(struct zfs_pool *pool, struct zfs_block *block)
{
	pool->used[block->kind] -= block->asize;
	pool->raw[block->kind] -= block->asize * block->copies;
	if (block->kind != ZFS_BLOCK_DATA)
		pool->cause_used[block->cause] -= block->asize;
	g_hash_table_remove(pool->blocks, &block->id);   /* the table owns it */
}

/* 1 if the dnode's pointers reach every level-0 block, else the fewest
 * levels of 1024-pointer indirect blocks that do (dnode_increase_indirection). */
static uint8_t levels_needed(const struct zfs_object *o)
{
	uint8_t levels = 1;
	uint64_t reach = o->nblkptr;

	while (reach < o->nblocks && levels < ZFS_MAX_LEVELS) {
		reach <<= ZFS_INDIRECT_SHIFT;
		levels++;
	}
	return levels;
}

static uint8_t kind_at(const struct sync_ctx *c, const struct zfs_object *o, unsigned level)
{
	if (level == 0)
		return o->kind;
	return c->os->mos ? ZFS_BLOCK_MOS : ZFS_BLOCK_METADATA;
}

static void write_block(struct sync_ctx *c, struct zfs_object *o, unsigned level, uint64_t blkid)
{
	GPtrArray *a = o->levels[level];
	uint32_t lsize = level ? o->indblksz : o->datablksz;
	struct zfs_block *old;

	if (blkid >= a->len)
		g_ptr_array_set_size(a, (guint)blkid + 1);
	old = a->pdata[blkid];
	a->pdata[blkid] = zfs_block_alloc(c->pool, c->txg, lsize, (uint8_t)level, kind_at(c, o, level), c->cause);
	if (old && old->kind != ZFS_BLOCK_DATA)
		c->pool->metadata_cowed++;
	if (old)
		c->kill(c->pool, old, c->opaque);
}

/* Kills the level's blocks from `first` on. */
static void kill_from(struct sync_ctx *c, struct zfs_object *o, unsigned level, uint64_t first)
{
	GPtrArray *a = o->levels[level];

	for (guint b = (guint)MIN(first, (uint64_t)a->len); b < a->len; b++)
		if (a->pdata[b])
			c->kill(c->pool, a->pdata[b], c->opaque);
	if (first < a->len)
		g_ptr_array_set_size(a, (guint)first);
}

static void kill_object(struct sync_ctx *c, struct zfs_object *o)
{
	for (unsigned l = 0; l < o->nlevels; l++)
		kill_from(c, o, l, 0);
}

static gint compare_u64(gconstpointer a, gconstpointer b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void add_unique(GArray *set, uint64_t v)
{
	if (set->len == 0 || g_array_index(set, uint64_t, set->len - 1) != v)
		g_array_append_val(set, v);
}

/* Writes the sorted level-0 blkids in `dirty`, then every indirect block
 * above them; below `grown_from` (the old nlevels) only the path, at new
 * levels every block over an existing child. `dirty` is consumed. */
static void write_paths(struct sync_ctx *c, struct zfs_object *o, GArray *dirty, unsigned grown_from)
{
	for (guint i = 0; i < dirty->len; i++)
		write_block(c, o, 0, g_array_index(dirty, uint64_t, i));
	for (unsigned l = 1; l < o->nlevels; l++) {
		g_autoptr(GArray) up = g_array_new(FALSE, FALSE, sizeof(uint64_t));
		GPtrArray *below = o->levels[l - 1];

		if (l >= grown_from) {
			for (guint b = 0; b < below->len; b++)
				if (below->pdata[b])
					add_unique(up, (uint64_t)b >> ZFS_INDIRECT_SHIFT);
		} else {
			for (guint i = 0; i < dirty->len; i++)
				add_unique(up, g_array_index(dirty, uint64_t, i) >> ZFS_INDIRECT_SHIFT);
		}
		for (guint i = 0; i < up->len; i++)
			write_block(c, o, l, g_array_index(up, uint64_t, i));
		g_array_set_size(dirty, 0);
		g_array_append_vals(dirty, up->data, up->len);
	}
}

/* Step 1: a truncate's kills; the block that now ends the object has
 * changed pointers above it, so its path is dirty. */
static void apply_free(struct sync_ctx *c, struct zfs_object *o, uint64_t free_from, GArray *dirty)
{
	for (unsigned l = 0; l < o->nlevels; l++) {
		unsigned shift = ZFS_INDIRECT_SHIFT * l;
		uint64_t first = free_from == 0 ? 0 : ((free_from - 1) >> shift) + 1;

		kill_from(c, o, l, first);
	}
	if (free_from > 0 && o->nlevels > 1 && free_from - 1 < o->levels[0]->len && o->levels[0]->pdata[free_from - 1])
		g_array_append_val(dirty, (uint64_t){ free_from - 1 });
}

static void sync_object(struct sync_ctx *c, struct zfs_object *o, const struct zfs_dirty_object *d,
			bool fixed_levels)
{
	g_autoptr(GArray) dirty = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	unsigned grown_from = ZFS_MAX_LEVELS;
	GHashTableIter it;
	gpointer key;

	if (d->free_from != UINT64_MAX)
		apply_free(c, o, d->free_from, dirty);
	if (!fixed_levels && levels_needed(o) > o->nlevels) {
		grown_from = o->nlevels;
		o->nlevels = levels_needed(o);
	}
	g_hash_table_iter_init(&it, d->blkids);
	while (g_hash_table_iter_next(&it, &key, NULL))
		if (GPOINTER_TO_SIZE(key) < o->nblocks)
			g_array_append_val(dirty, (uint64_t){ GPOINTER_TO_SIZE(key) });
	g_array_sort(dirty, compare_u64);
	{	/* drop duplicates (a truncate's last block may also be dirty) */
		guint n = 0;

		for (guint i = 0; i < dirty->len; i++)
			if (n == 0 || g_array_index(dirty, uint64_t, n - 1) != g_array_index(dirty, uint64_t, i))
				g_array_index(dirty, uint64_t, n++) = g_array_index(dirty, uint64_t, i);
		g_array_set_size(dirty, n);
	}
	write_paths(c, o, dirty, grown_from);
}

static void dirty_dnode_block(struct zfs_objset *os, uint64_t number)
{
	struct zfs_object *mdn = zfs_objset_object_for_write(os, 0);
	uint64_t blkid = number / ZFS_DNODES_PER_BLOCK;

	if (mdn->nblocks < blkid + 1)
		mdn->nblocks = blkid + 1;
	zfs_objset_dirty_block(os, 0, blkid);
}

static GArray *sorted_dirty_objects(const struct zfs_objset *os)
{
	GArray *numbers = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	GHashTableIter it;
	gpointer key;

	g_hash_table_iter_init(&it, os->dirty);
	while (g_hash_table_iter_next(&it, &key, NULL))
		if (GPOINTER_TO_SIZE(key) != 0)
			g_array_append_val(numbers, (uint64_t){ GPOINTER_TO_SIZE(key) });
	g_array_sort(numbers, compare_u64);
	return numbers;
}

void zfs_objset_sync(struct zfs_pool *pool, struct zfs_objset *os, uint64_t txg, uint8_t cause, zfs_kill_fn kill,
		     void *opaque)
{
	struct sync_ctx c = { pool, os, txg, cause, kill, opaque };
	g_autoptr(GArray) numbers = sorted_dirty_objects(os);
	struct zfs_block *old_root = os->root;

	for (guint i = 0; i < os->freed->len; i++) {
		struct zfs_object *o = os->freed->pdata[i];

		/* A freed struct may still be a snapshot's: kill through a copy. */
		struct zfs_object tmp = *o;

		for (unsigned l = 0; l < ZFS_MAX_LEVELS; l++)
			tmp.levels[l] = g_ptr_array_copy(o->levels[l], NULL, NULL);
		kill_object(&c, &tmp);
		for (unsigned l = 0; l < ZFS_MAX_LEVELS; l++)
			g_ptr_array_unref(tmp.levels[l]);
		dirty_dnode_block(os, o->number);
	}
	g_ptr_array_set_size(os->freed, 0);
	for (guint i = 0; i < numbers->len; i++) {
		uint64_t n = g_array_index(numbers, uint64_t, i);
		struct zfs_object *o = zfs_objset_object_for_write(os, n);
		const struct zfs_dirty_object *d = g_hash_table_lookup(os->dirty, GSIZE_TO_POINTER(n));

		c.cause = os->mos ? cause : d->cause; /* the MOS is the txg's own */
		sync_object(&c, o, d, false);
		dirty_dnode_block(os, n);
	}
	c.cause = cause;
	sync_object(&c, zfs_objset_object_for_write(os, 0), zfs_objset_dirty(os, 0), !os->mos);
	g_hash_table_remove_all(os->dirty);
	os->root = zfs_block_alloc(pool, txg, ZFS_OBJSET_PHYS_SIZE, 0, os->mos ? ZFS_BLOCK_MOS : ZFS_BLOCK_METADATA,
				   cause);
	if (old_root) {
		pool->metadata_cowed++;
		kill(pool, old_root, opaque);
	}
}
