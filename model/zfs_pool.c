/*
 * model/zfs_pool.c - the pool: datasets, txgs, and the birth-time rules
 * that decide when a block is freed (model/zfs_constants.h cites them).
 *
 * Datasets of one filesystem, oldest first, and where a killed block goes:
 *
 *   snap@1 (txg 10) <- snap@2 (txg 20) <- filesystem (prev_snap_txg 20)
 *                       deadlist:          deadlist:
 *                       born <= 10,        born <= 20,
 *                       died before @2     died since @2
 *
 * A block the filesystem replaces is freed at once if born after 20, and
 * goes on the filesystem's deadlist otherwise. Destroying @2 frees those
 * blocks of the filesystem's deadlist born after 10 (only @2 held them)
 * and hands it @2's deadlist. A clone's first "previous snapshot" is its
 * origin.
 *
 * Invariants (zfs_pool_check, model/zfs_check.c):
 *  Z1 every block pointer's birth is at most the txg its objset was last
 *     written in (a filesystem: the last synced txg; a snapshot: the txg it
 *     was taken in), and at most its parent's birth;
 *  Z2 every allocated block is reached from a live dataset or the MOS, and
 *     every block reached is allocated and reached once per objset;
 *  Z3 a dataset's deadlist is exactly the blocks its previous snapshot
 *     reaches and it does not (so a dead block is on exactly one deadlist
 *     of its lineage), without duplicates; none without a previous snapshot;
 *  Z4 the space counted (used and raw, by kind) equals the blocks allocated;
 *  Z5 what zfs_pool_datasets() says destroying a snapshot reclaims equals
 *     the blocks no other dataset reaches.
 */
#include <errno.h>
#include <string.h>

#include "zfs_internal.h"

G_DEFINE_QUARK(zfs-pool-error-quark, zfs_pool_error)

void zfs_pool_config_init(struct zfs_pool_config *config)
{
	memset(config, 0, sizeof(*config));
	config->ashift = ZFS_DEFAULT_ASHIFT;
	config->recordsize = ZFS_RECORDSIZE;
	config->txg_timeout_ns = ZFS_TXG_TIMEOUT_NS;
}

static void dataset_free(gpointer p)
{
	struct zfs_dataset *ds = p;

	zfs_objset_free(ds->os);
	if (ds->deadlist)
		g_ptr_array_unref(ds->deadlist);
	if (ds->snapshots)
		g_ptr_array_unref(ds->snapshots);
	g_free(ds->name);
	g_free(ds);
}

struct zfs_pool *zfs_pool_new(const struct zfs_pool_config *config)
{
	struct zfs_pool *pool = g_new0(struct zfs_pool, 1);

	pool->config = *config;
	pool->mos = zfs_objset_new(true);
	pool->datasets = g_ptr_array_new_with_free_func(dataset_free);
	pool->blocks = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
	pool->next_mos_object = 1;
	pool->clock_ns = config->start_time_ns;
	pool->last_sync_ns = config->start_time_ns;
	return pool;
}

void zfs_pool_free(struct zfs_pool *pool)
{
	if (!pool)
		return;
	g_ptr_array_unref(pool->datasets);
	zfs_objset_free(pool->mos);
	g_hash_table_unref(pool->blocks);
	g_free(pool);
}

static struct zfs_dataset *dataset(const struct zfs_pool *pool, uint64_t id)
{
	struct zfs_dataset *ds;

	if (id == 0 || id > pool->datasets->len)
		return NULL;
	ds = pool->datasets->pdata[id - 1];
	return ds->destroyed ? NULL : ds;
}

bool zfs_dataset_is_snapshot(const struct zfs_pool *pool, uint64_t id)
{
	const struct zfs_dataset *ds = dataset(pool, id);

	return ds && ds->snapshot;
}

/* ---- the MOS: a dnode per dataset, a bpobj per deadlist ---- */

static uint64_t mos_claim(struct zfs_pool *pool, int type)
{
	uint64_t n = pool->next_mos_object++;

	zfs_objset_claim(pool->mos, n, type);
	return n;
}

static void mos_touch(struct zfs_pool *pool, uint64_t object)
{
	zfs_objset_dirty(pool->mos, object)->dnode = true;
}

static uint64_t bpobj_blocks(guint entries)
{
	return ((uint64_t)entries * ZFS_BLKPTR_SIZE + ZFS_BPOBJ_BLOCK_SIZE - 1) / ZFS_BPOBJ_BLOCK_SIZE;
}

/* The deadlist's bpobj after entries [from, len) were appended. */
static void bpobj_appended(struct zfs_pool *pool, const struct zfs_dataset *ds, guint from)
{
	struct zfs_object *o = zfs_objset_object_for_write(pool->mos, ds->deadlist_object);
	uint64_t per_block = ZFS_BPOBJ_BLOCK_SIZE / ZFS_BLKPTR_SIZE;

	o->nblocks = bpobj_blocks(ds->deadlist->len);
	for (uint64_t b = from / per_block; b < o->nblocks; b++)
		zfs_objset_dirty_block(pool->mos, ds->deadlist_object, b);
	mos_touch(pool, ds->deadlist_object);
}

/* The deadlist was rebuilt: every block of its bpobj is rewritten. */
static void bpobj_rewritten(struct zfs_pool *pool, const struct zfs_dataset *ds)
{
	struct zfs_object *o = zfs_objset_object_for_write(pool->mos, ds->deadlist_object);
	uint64_t blocks = bpobj_blocks(ds->deadlist->len);

	if (blocks < o->nblocks)
		zfs_objset_dirty(pool->mos, ds->deadlist_object)->free_from = blocks;
	o->nblocks = blocks;
	bpobj_appended(pool, ds, 0);
}

/* ---- the birth-time rule ---- */

/* dsl_dataset_block_kill. */
static void kill_in_dataset(struct zfs_pool *pool, struct zfs_block *block, void *opaque)
{
	struct zfs_dataset *ds = opaque;

	if (block->birth > ds->prev_snap_txg) {
		zfs_block_free(pool, block);
		return;
	}
	g_ptr_array_add(ds->deadlist, block);
}

static void kill_in_mos(struct zfs_pool *pool, struct zfs_block *block, void *opaque)
{
	(void)opaque;
	zfs_block_free(pool, block);
}

/* ---- txgs ---- */

typedef void (*sync_task_fn)(struct zfs_pool *pool, uint64_t txg, void *arg);

static void sync_dataset(struct zfs_pool *pool, struct zfs_dataset *ds, uint64_t txg, uint8_t cause)
{
	guint before = ds->deadlist->len;

	zfs_objset_sync(pool, ds->os, txg, cause, kill_in_dataset, ds);
	mos_touch(pool, ds->mos_object);     /* ds_bp: the new objset block */
	if (ds->deadlist->len > before)
		bpobj_appended(pool, ds, before);
}

/* The label of what a txg writes beyond objects' own blocks: the one
 * that changed the most objects of the datasets, the lowest on a tie; the
 * label in force when none changed (zfs_pool.h, "why"). */
static uint8_t txg_cause(const struct zfs_pool *pool)
{
	uint64_t objects[ZFS_POOL_CAUSES] = { 0 }, most = 0;
	uint8_t cause = pool->cause;

	for (guint i = 0; i < pool->datasets->len; i++) {
		const struct zfs_dataset *ds = pool->datasets->pdata[i];
		GHashTableIter it;
		gpointer value;

		if (ds->destroyed || ds->snapshot || !ds->os)
			continue;
		g_hash_table_iter_init(&it, ds->os->dirty);
		while (g_hash_table_iter_next(&it, NULL, &value))
			objects[((const struct zfs_dirty_object *)value)->cause]++;
	}
	for (uint8_t k = 0; k < ZFS_POOL_CAUSES; k++)
		if (objects[k] > most) {
			most = objects[k];
			cause = k;
		}
	return cause;
}

/* dsl_pool_sync: the datasets, then the sync tasks, then the MOS. */
static void txg_sync(struct zfs_pool *pool, sync_task_fn task, void *arg)
{
	uint64_t txg = pool->synced_txg + 1;
	uint8_t cause = txg_cause(pool);

	for (guint i = 0; i < pool->datasets->len; i++) {
		struct zfs_dataset *ds = pool->datasets->pdata[i];

		if (!ds->destroyed && !ds->snapshot && ds->os && zfs_objset_is_dirty(ds->os))
			sync_dataset(pool, ds, txg, cause);
	}
	if (task)
		task(pool, txg, arg);
	zfs_objset_sync(pool, pool->mos, txg, cause, kill_in_mos, NULL);
	pool->synced_txg = txg;
	pool->txgs++;
	pool->last_sync_ns = pool->clock_ns;
}

static bool pool_dirty(const struct zfs_pool *pool)
{
	if (zfs_objset_is_dirty(pool->mos))
		return true;
	for (guint i = 0; i < pool->datasets->len; i++) {
		const struct zfs_dataset *ds = pool->datasets->pdata[i];

		if (!ds->destroyed && !ds->snapshot && ds->os && zfs_objset_is_dirty(ds->os))
			return true;
	}
	return false;
}

void zfs_pool_sync(struct zfs_pool *pool)
{
	if (pool_dirty(pool))
		txg_sync(pool, NULL, NULL);
}

void zfs_pool_set_clock(struct zfs_pool *pool, int64_t now_ns)
{
	if (now_ns <= pool->clock_ns)
		return;
	pool->clock_ns = now_ns;
	if (now_ns - pool->last_sync_ns >= pool->config.txg_timeout_ns)
		zfs_pool_sync(pool);
}

uint64_t zfs_pool_synced_txg(const struct zfs_pool *pool)
{
	return pool->synced_txg;
}

void zfs_pool_set_cause(struct zfs_pool *pool, unsigned cause)
{
	g_return_if_fail(cause < ZFS_POOL_CAUSES);
	pool->cause = (uint8_t)cause;
}

/* ---- datasets ---- */

static struct zfs_dataset *dataset_add(struct zfs_pool *pool, const char *name, bool snapshot)
{
	struct zfs_dataset *ds = g_new0(struct zfs_dataset, 1);

	g_ptr_array_add(pool->datasets, ds);
	ds->id = pool->datasets->len;
	ds->name = g_strdup(name);
	ds->snapshot = snapshot;
	ds->deadlist = g_ptr_array_new();
	ds->mos_object = mos_claim(pool, ZFS_OBJECT_DSL_DATASET);
	if (!snapshot) {
		ds->snapshots = g_ptr_array_new();
		ds->deadlist_object = mos_claim(pool, ZFS_OBJECT_BPOBJ);
	}
	return ds;
}

/* zfs_create_fs: the master node, the SA registry and layouts, the
 * unlinked set; the caller adds the root directory. */
enum { ZPL_SYSTEM_OBJECTS = 4 };

int zfs_filesystem_create(struct zfs_pool *pool, const char *name, uint64_t *id)
{
	struct zfs_dataset *ds = dataset_add(pool, name, false);

	ds->os = zfs_objset_new(false);
	for (uint64_t n = 1; n <= ZPL_SYSTEM_OBJECTS; n++)
		zfs_objset_claim(ds->os, n, ZFS_OBJECT_ZAP);
	*id = ds->id;
	return 0;
}

struct snapshot_task {
	struct zfs_dataset *filesystem;
	struct zfs_dataset *snapshot;
};

/* dsl_dataset_snapshot_sync_impl: the snapshot takes the filesystem's
 * deadlist and becomes its previous snapshot. */
static void snapshot_sync(struct zfs_pool *pool, uint64_t txg, void *arg)
{
	struct snapshot_task *t = arg;
	struct zfs_dataset *fs = t->filesystem, *snap = t->snapshot;

	snap->os = zfs_objset_share(fs->os);
	snap->creation_txg = txg;
	snap->filesystem = fs;
	snap->prev = fs->prev;
	snap->prev_snap_txg = fs->prev_snap_txg;
	g_ptr_array_unref(snap->deadlist);
	snap->deadlist = fs->deadlist;
	snap->deadlist_object = fs->deadlist_object;
	fs->deadlist = g_ptr_array_new();
	fs->deadlist_object = mos_claim(pool, ZFS_OBJECT_BPOBJ);
	fs->prev = snap;
	fs->prev_snap_txg = txg;
	g_ptr_array_add(fs->snapshots, snap);
	mos_touch(pool, fs->mos_object);
	mos_touch(pool, snap->mos_object);
}

int zfs_snapshot_create(struct zfs_pool *pool, uint64_t filesystem, const char *name, uint64_t *id)
{
	struct zfs_dataset *fs = dataset(pool, filesystem);
	struct snapshot_task t = { fs, NULL };

	if (!fs)
		return -ENOENT;
	if (fs->snapshot)
		return -EINVAL;
	zfs_pool_sync(pool);
	t.snapshot = dataset_add(pool, name, true);
	txg_sync(pool, snapshot_sync, &t);
	*id = t.snapshot->id;
	return 0;
}

static void clone_sync(struct zfs_pool *pool, uint64_t txg, void *arg)
{
	struct snapshot_task *t = arg;          /* filesystem: the clone; snapshot: its origin */
	struct zfs_dataset *clone = t->filesystem, *origin = t->snapshot;

	(void)txg;
	clone->os = zfs_objset_share(origin->os);
	clone->origin = origin;
	clone->prev = origin;
	clone->prev_snap_txg = origin->creation_txg;
	origin->clones++;
	mos_touch(pool, origin->mos_object);
}

int zfs_clone_create(struct zfs_pool *pool, uint64_t snapshot, const char *name, uint64_t *id)
{
	struct zfs_dataset *origin = dataset(pool, snapshot);
	struct snapshot_task t = { NULL, origin };

	if (!origin)
		return -ENOENT;
	if (!origin->snapshot)
		return -EINVAL;
	zfs_pool_sync(pool);
	t.filesystem = dataset_add(pool, name, false);
	txg_sync(pool, clone_sync, &t);
	*id = t.filesystem->id;
	return 0;
}

/* The dataset after `snap` in its lineage: the next snapshot or the
 * filesystem itself. */
struct zfs_dataset *zfs_dataset_next(const struct zfs_dataset *snap)
{
	GPtrArray *list = snap->filesystem->snapshots;

	for (guint i = 0; i + 1 < list->len; i++)
		if (list->pdata[i] == snap)
			return list->pdata[i + 1];
	return snap->filesystem;
}

static void mos_free(struct zfs_pool *pool, uint64_t object)
{
	zfs_objset_free_object(pool->mos, object);
}

/* dsl_destroy_snapshot_sync_impl and process_old_cb. */
static void destroy_snapshot_sync(struct zfs_pool *pool, uint64_t txg, void *arg)
{
	struct zfs_dataset *snap = arg, *next = zfs_dataset_next(snap);
	GPtrArray *kept = g_ptr_array_new();

	(void)txg;
	for (guint i = 0; i < next->deadlist->len; i++) {
		struct zfs_block *b = next->deadlist->pdata[i];

		if (b->birth <= snap->prev_snap_txg)
			g_ptr_array_add(kept, b);
		else
			zfs_block_free(pool, b);
	}
	g_ptr_array_extend_and_steal(kept, g_steal_pointer(&snap->deadlist));
	g_ptr_array_unref(next->deadlist);
	next->deadlist = kept;
	next->prev = snap->prev;
	next->prev_snap_txg = snap->prev_snap_txg;
	bpobj_rewritten(pool, next);
	mos_touch(pool, next->mos_object);
	g_ptr_array_remove(snap->filesystem->snapshots, snap);
	mos_free(pool, snap->deadlist_object);
	mos_free(pool, snap->mos_object);
	zfs_objset_free(g_steal_pointer(&snap->os));
	snap->destroyed = true;
}

/* dsl_destroy_head: the blocks born after its origin are its own. */
static void destroy_filesystem_sync(struct zfs_pool *pool, uint64_t txg, void *arg);

struct collect {
	GPtrArray *blocks;
};

static void collect_block(const struct zfs_block *block, const struct zfs_object *o, uint64_t blkid, void *opaque)
{
	(void)o;
	(void)blkid;
	g_ptr_array_add(((struct collect *)opaque)->blocks, (gpointer)block);
}

static void destroy_filesystem_sync(struct zfs_pool *pool, uint64_t txg, void *arg)
{
	struct zfs_dataset *fs = arg;
	struct collect c = { g_ptr_array_new() };

	(void)txg;
	zfs_objset_visit(fs->os, collect_block, &c);
	for (guint i = 0; i < c.blocks->len; i++) {
		struct zfs_block *b = c.blocks->pdata[i];

		if (b->birth > fs->prev_snap_txg)
			zfs_block_free(pool, b);
	}
	g_ptr_array_unref(c.blocks);
	if (fs->origin) {
		fs->origin->clones--;
		mos_touch(pool, fs->origin->mos_object);
	}
	mos_free(pool, fs->deadlist_object);
	mos_free(pool, fs->mos_object);
	zfs_objset_free(g_steal_pointer(&fs->os));
	fs->destroyed = true;
}

int zfs_dataset_destroy(struct zfs_pool *pool, uint64_t id)
{
	struct zfs_dataset *ds = dataset(pool, id);

	if (!ds)
		return -ENOENT;
	if (ds->snapshot ? ds->clones > 0 : ds->snapshots->len > 0)
		return -EBUSY;
	zfs_pool_sync(pool);
	txg_sync(pool, ds->snapshot ? destroy_snapshot_sync : destroy_filesystem_sync, ds);
	return 0;
}

/* ---- objects ---- */

static int writable(struct zfs_pool *pool, uint64_t filesystem, struct zfs_dataset **out)
{
	struct zfs_dataset *ds = dataset(pool, filesystem);

	if (!ds)
		return -ENOENT;
	if (ds->snapshot)
		return -EROFS;
	ds->os->cause = pool->cause;        /* the label of the changes this call records */
	*out = ds;
	return 0;
}

static struct zfs_object *object_for_write(struct zfs_pool *pool, uint64_t filesystem, uint64_t object,
					   int *err)
{
	struct zfs_dataset *ds;
	struct zfs_object *o;

	*err = writable(pool, filesystem, &ds);
	if (*err)
		return NULL;
	o = object ? zfs_objset_object_for_write(ds->os, object) : NULL;
	if (!o)
		*err = -ENOENT;
	return o;
}

int zfs_object_claim(struct zfs_pool *pool, uint64_t filesystem, uint64_t object, enum zfs_object_type type)
{
	struct zfs_dataset *ds;
	int err = writable(pool, filesystem, &ds);

	if (err)
		return err;
	if (object == 0 || object >= (1ull << 48))
		return -EINVAL;
	if (zfs_objset_object(ds->os, object))
		return -EEXIST;
	zfs_objset_claim(ds->os, object, type);
	return 0;
}

int zfs_object_free(struct zfs_pool *pool, uint64_t filesystem, uint64_t object)
{
	struct zfs_dataset *ds;
	int err = writable(pool, filesystem, &ds);

	if (err)
		return err;
	if (object == 0 || !zfs_objset_object(ds->os, object))
		return -ENOENT;
	zfs_objset_free_object(ds->os, object);
	return 0;
}

int zfs_object_touch(struct zfs_pool *pool, uint64_t filesystem, uint64_t object)
{
	int err;
	struct zfs_object *o = object_for_write(pool, filesystem, object, &err);

	if (!o)
		return err;
	zfs_objset_dirty(((struct zfs_dataset *)pool->datasets->pdata[filesystem - 1])->os, object)->dnode = true;
	return 0;
}

bool zfs_object_change_is_private(const struct zfs_pool *pool, uint64_t filesystem, uint64_t object)
{
	const struct zfs_dataset *ds = dataset(pool, filesystem);
	uint64_t blkid = object / ZFS_DNODES_PER_BLOCK;
	const GPtrArray *dnode_blocks;
	const struct zfs_block *block;

	if (!ds || ds->snapshot)
		return true;
	for (uint64_t n = blkid * ZFS_DNODES_PER_BLOCK; n < (blkid + 1) * ZFS_DNODES_PER_BLOCK; n++)
		if (g_hash_table_contains(ds->os->dirty, GSIZE_TO_POINTER(n)))
			return true;
	dnode_blocks = ds->os->meta_dnode->levels[0];
	block = blkid < dnode_blocks->len ? dnode_blocks->pdata[blkid] : NULL;
	return !block || block->birth > ds->prev_snap_txg;
}

/* zfs_write: a file of one block grows that block (to the next 512 bytes)
 * up to the recordsize; past it the file is made of recordsize blocks. */
int zfs_object_write(struct zfs_pool *pool, uint64_t filesystem, uint64_t object, uint64_t offset,
		     uint64_t length)
{
	int err;
	struct zfs_object *o = object_for_write(pool, filesystem, object, &err);
	struct zfs_objset *os;
	uint64_t end = offset + length;

	if (!o)
		return err;
	if (o->type != ZFS_OBJECT_FILE)
		return -EINVAL;
	os = ((struct zfs_dataset *)pool->datasets->pdata[filesystem - 1])->os;
	zfs_objset_dirty(os, object)->dnode = true;
	if (length == 0)
		return 0;
	if (end > o->size)
		o->size = end;
	if (o->nblocks <= 1 && o->size <= pool->config.recordsize) {
		uint32_t bs = (uint32_t)((o->size + ZFS_MINBLOCKSIZE - 1) / ZFS_MINBLOCKSIZE * ZFS_MINBLOCKSIZE);

		o->datablksz = MAX(o->datablksz, bs);
		o->nblocks = 1;
		zfs_objset_dirty_block(os, object, 0);
		return 0;
	}
	if (o->datablksz != pool->config.recordsize) {
		o->datablksz = pool->config.recordsize;
		zfs_objset_dirty_block(os, object, 0);   /* the one block grows */
	}
	o->nblocks = MAX(o->nblocks, (o->size + o->datablksz - 1) / o->datablksz);
	for (uint64_t b = offset / o->datablksz; b <= (end - 1) / o->datablksz; b++)
		zfs_objset_dirty_block(os, object, b);
	return 0;
}

int zfs_object_truncate(struct zfs_pool *pool, uint64_t filesystem, uint64_t object, uint64_t size)
{
	int err;
	struct zfs_object *o = object_for_write(pool, filesystem, object, &err);
	struct zfs_objset *os;
	struct zfs_dirty_object *d;
	uint64_t blocks;

	if (!o)
		return err;
	if (o->type != ZFS_OBJECT_FILE)
		return -EINVAL;
	os = ((struct zfs_dataset *)pool->datasets->pdata[filesystem - 1])->os;
	d = zfs_objset_dirty(os, object);
	d->dnode = true;
	if (size >= o->size) {
		o->size = size;                  /* a hole: no block */
		return 0;
	}
	o->size = size;
	blocks = (size + o->datablksz - 1) / o->datablksz;
	if (blocks < o->nblocks) {
		d->free_from = MIN(d->free_from, blocks);
		o->nblocks = blocks;
	}
	if (size % o->datablksz)
		zfs_objset_dirty_block(os, object, size / o->datablksz); /* the tail is zeroed */
	return 0;
}

static struct zfs_object *zap_for_write(struct zfs_pool *pool, uint64_t filesystem, uint64_t directory, int *err,
					struct zfs_objset **os)
{
	struct zfs_object *o = object_for_write(pool, filesystem, directory, err);

	if (o && !o->zap) {
		*err = -EINVAL;
		return NULL;
	}
	if (o)
		*os = ((struct zfs_dataset *)pool->datasets->pdata[filesystem - 1])->os;
	return o;
}

int zfs_zap_add(struct zfs_pool *pool, uint64_t filesystem, uint64_t directory, uint32_t hash, uint32_t name_len)
{
	int err;
	struct zfs_objset *os;
	struct zfs_object *o = zap_for_write(pool, filesystem, directory, &err, &os);

	if (!o)
		return err;
	zfs_zap_apply_add(os, o, hash, name_len);
	return 0;
}

int zfs_zap_remove(struct zfs_pool *pool, uint64_t filesystem, uint64_t directory, uint32_t hash,
		   uint32_t name_len)
{
	int err;
	struct zfs_objset *os;
	struct zfs_object *o = zap_for_write(pool, filesystem, directory, &err, &os);

	if (!o)
		return err;
	return zfs_zap_apply_remove(os, o, hash, name_len) ? 0 : -ENOENT;
}

/* ---- reports ---- */

void zfs_pool_usage(const struct zfs_pool *pool, struct zfs_pool_usage *u)
{
	memset(u, 0, sizeof(*u));
	u->metadata_used = pool->used[ZFS_BLOCK_METADATA] + pool->used[ZFS_BLOCK_MOS];
	u->metadata_raw = pool->raw[ZFS_BLOCK_METADATA] + pool->raw[ZFS_BLOCK_MOS];
	u->mos_used = pool->used[ZFS_BLOCK_MOS];
	u->data_used = pool->used[ZFS_BLOCK_DATA];
	u->blocks = g_hash_table_size(pool->blocks);
	u->txgs = pool->txgs;
	u->blocks_written = pool->blocks_written;
	u->bytes_written = pool->bytes_written;
	u->metadata_cowed = pool->metadata_cowed;
	memcpy(u->metadata_by_cause, pool->cause_used, sizeof(u->metadata_by_cause));
	for (guint i = 0; i < pool->datasets->len; i++) {
		const struct zfs_dataset *ds = pool->datasets->pdata[i];

		if (ds->destroyed)
			continue;
		for (guint k = 0; k < ds->deadlist->len; k++)
			u->deadlist_bytes += ((const struct zfs_block *)ds->deadlist->pdata[k])->asize;
	}
}

static void add_asize(const struct zfs_block *block, const struct zfs_object *o, uint64_t blkid, void *opaque)
{
	(void)o;
	(void)blkid;
	*(uint64_t *)opaque += block->asize;
}

struct born_after {
	uint64_t txg;
	uint64_t bytes;
};

static void add_born_after(const struct zfs_block *block, const struct zfs_object *o, uint64_t blkid, void *opaque)
{
	struct born_after *a = opaque;

	(void)o;
	(void)blkid;
	if (block->birth > a->txg)
		a->bytes += block->asize;
}

/* What destroying it would free: for a snapshot, its next's deadlist born
 * after its previous snapshot (process_old_cb's free branch); for a
 * filesystem, its blocks born after its newest snapshot. */
uint64_t zfs_dataset_exclusive(const struct zfs_dataset *ds)
{
	struct born_after a = { ds->prev_snap_txg, 0 };

	if (!ds->snapshot) {
		zfs_objset_visit(ds->os, add_born_after, &a);
		return a.bytes;
	}
	{
		const struct zfs_dataset *next = zfs_dataset_next(ds);

		for (guint i = 0; i < next->deadlist->len; i++) {
			const struct zfs_block *b = next->deadlist->pdata[i];

			if (b->birth > ds->prev_snap_txg)
				a.bytes += b->asize;
		}
	}
	return a.bytes;
}

GArray *zfs_pool_datasets(const struct zfs_pool *pool)
{
	GArray *out = g_array_new(FALSE, TRUE, sizeof(struct zfs_dataset_usage));

	for (guint i = 0; i < pool->datasets->len; i++) {
		const struct zfs_dataset *ds = pool->datasets->pdata[i];
		struct zfs_dataset_usage u = { 0 };

		if (ds->destroyed)
			continue;
		u.id = ds->id;
		u.name = ds->name;
		u.snapshot = ds->snapshot;
		u.origin = ds->origin ? ds->origin->id : 0;
		zfs_objset_visit(ds->os, add_asize, &u.referenced);
		u.exclusive = zfs_dataset_exclusive(ds);
		for (guint k = 0; k < ds->deadlist->len; k++)
			u.deadlist += ((const struct zfs_block *)ds->deadlist->pdata[k])->asize;
		g_array_append_val(out, u);
	}
	return out;
}

static void reach_block(const struct zfs_block *block, const struct zfs_object *o, uint64_t blkid, void *opaque)
{
	(void)o;
	(void)blkid;
	g_hash_table_add(opaque, (gpointer)block);
}

static bool in_ids(const uint64_t *ids, unsigned n, uint64_t id)
{
	for (unsigned i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

int zfs_pool_destroy_estimate(const struct zfs_pool *pool, const uint64_t *ids, unsigned n, uint64_t *metadata,
			      uint64_t *data)
{
	g_autoptr(GHashTable) outside = g_hash_table_new(NULL, NULL);
	g_autoptr(GHashTable) inside = g_hash_table_new(NULL, NULL);
	GHashTableIter it;
	gpointer key;

	*metadata = *data = 0;
	for (unsigned i = 0; i < n; i++)
		if (!dataset(pool, ids[i]))
			return -ENOENT;
	zfs_objset_visit(pool->mos, reach_block, outside);
	for (guint i = 0; i < pool->datasets->len; i++) {
		const struct zfs_dataset *ds = pool->datasets->pdata[i];

		if (!ds->destroyed && ds->os)
			zfs_objset_visit(ds->os, reach_block, in_ids(ids, n, ds->id) ? inside : outside);
	}
	g_hash_table_iter_init(&it, inside);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		const struct zfs_block *b = key;

		if (!g_hash_table_contains(outside, b))
			*(b->kind == ZFS_BLOCK_DATA ? data : metadata) += b->asize;
	}
	return 0;
}

void zfs_pool_dump(const struct zfs_pool *pool, FILE *out)
{
	g_autoptr(GArray) usage = zfs_pool_datasets(pool);
	struct zfs_pool_usage u;

	zfs_pool_usage(pool, &u);
	fprintf(out, "pool: txg %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " blocks, metadata %" G_GUINT64_FORMAT
		     " (MOS %" G_GUINT64_FORMAT "), data %" G_GUINT64_FORMAT "\n",
		pool->synced_txg, u.blocks, u.metadata_used, u.mos_used, u.data_used);
	for (guint i = 0; i < usage->len; i++) {
		const struct zfs_dataset_usage *d = &g_array_index(usage, struct zfs_dataset_usage, i);
		const struct zfs_dataset *ds = pool->datasets->pdata[d->id - 1];

		fprintf(out, "  %s %" G_GUINT64_FORMAT " %s: txg %" G_GUINT64_FORMAT ", prev_snap_txg %" G_GUINT64_FORMAT
			     ", referenced %" G_GUINT64_FORMAT ", exclusive %" G_GUINT64_FORMAT
			     ", deadlist %u blocks\n",
			d->snapshot ? "snapshot" : "filesystem", d->id, d->name,
			ds->snapshot ? ds->creation_txg : pool->synced_txg, ds->prev_snap_txg, d->referenced,
			d->exclusive, ds->deadlist->len);
	}
}
