/*
 * model/design_zfs.c - the ZFS-like design (`--design zfs`): datasets,
 * read-only snapshots kept by birth time, deadlists; the pool is
 * model/zfs_pool.h, every size and rule cited in model/zfs_constants.h.
 *
 * The model's namespace speaks btrfs items (model/design.h). This design
 * keeps those items where the btrfs design keeps them, a tree per subvolume
 * (its item view is the btrfs design's own methods): that is the ZPL's
 * in-memory view of its znodes, not what ZFS writes. What ZFS writes is
 * the pool, which every item change is told about, and the space reports
 * are the pool's:
 *
 *   item change (design.h)             the pool (model/zfs_pool.h)
 *   insert INODE_ITEM                  zfs_object_claim (file, dir, symlink)
 *   write an INODE_ITEM (atime, size,  zfs_object_touch: its dnode block is
 *     links, times)                      rewritten at the next txg; a file
 *                                        shorter than the pool's object is
 *                                        truncated to it at that txg
 *   delete INODE_ITEM                  zfs_object_free
 *   insert / delete DIR_ITEM           zfs_zap_add / zfs_zap_remove in the
 *                                        directory's ZAP (DIR_INDEX and
 *                                        INODE_REF have no ZFS counterpart:
 *                                        the ZAP is the only index, the
 *                                        parent lives in the dnode's SAs)
 *   insert / resize EXTENT_DATA        zfs_object_write of the range it maps
 *   other items of an inode (xattrs)   zfs_object_touch (xattr=sa)
 *   snapshot (read-only)               zfs_snapshot_create
 *   snapshot (writable, --zfs-clones)  zfs_snapshot_create + zfs_clone_create
 *   delete a snapshot or clone         zfs_dataset_destroy (a clone's origin
 *                                        snapshot with it)
 *   the clock, fs commits              zfs_pool_set_clock (a txg every 5 s
 *                                        when dirty), zfs_pool_sync
 *
 * A snapshot's link in its parent directory is no ZAP entry, and the
 * write of the directory's inode item (size, mtime) that goes with it is
 * not mirrored: ZFS shows snapshots under .zfs/snapshot and mounts a
 * clone, it does not link them, and `zfs snapshot` changes no directory.
 *
 * A writable snapshot is refused with -EOPNOTSUPP unless
 * fs_config.snapshot_clones; a filesystem that still has snapshots cannot
 * be destroyed (zfs destroy without -r: -EBUSY).
 *
 * The item trees' blocks stay in the block store (fs_check audits them as
 * for btrfs) but are not reported: fs_report's metadata and data bytes,
 * its split by tree (datasets: fs, the MOS: root) and by cause (the pool's
 * labels, set from fs_set_cause before each call), blocks_cowed (metadata
 * blocks a txg wrote in place of a live one), blocks and bytes written are
 * the pool's (zfs_pool_usage), and usage() and reclaim() are the pool's
 * datasets' (exclusive = what `zfs destroy -nv` would reclaim).
 *
 * Invariants (dz_design_check), on top of zfs_pool_check's Z1-Z5:
 * DZ1 every live subvolume has a dataset, a snapshot exactly when the
 * subvolume is read-only; DZ2 every call the design made to the pool
 * succeeded (the pool mirrors the items exactly).
 */
#include "model_error.h"
#include "design.h"

#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "zfs_constants.h"
#include "zfs_pool.h"

extern const struct fs_design_ops fs_design_btrfs;
#define ITEMS (&fs_design_btrfs) /* the item view: a tree per subvolume */

struct zfs_design {
	struct zfs_pool *pool;
	/* Inodes whose item was written since the last txg: their sizes are
	 * brought to the pool before it syncs (settle_sizes). */
	GArray *written_inodes;
	/* DZ2: the first pool call that failed, or NULL. */
	char *mirror_error;
	/* The directory whose subvolume link was just added or removed: the
	 * write of its inode item that follows (size, mtime) is the link's,
	 * and ZFS has no link (.zfs/snapshot is virtual): not mirrored. */
	const struct subvolume *link_sv;
	uint64_t link_dir;
};

struct zfs_subvolume {
	uint64_t dataset;             /* the filesystem, clone or snapshot */
	uint64_t origin;              /* a clone's own origin snapshot; else 0 */
	struct zfs_subvolume *source; /* the filesystem it was taken of; NULL for the top */
	uint64_t snapshots;           /* live snapshots (and clones' origins) taken of it */
};

struct written_inode {
	struct subvolume *sv;
	uint64_t inode;
};

static struct zfs_design *state(const struct fs *fs)
{
	return fs->design_state;
}

/* The pool, told the kind of op that the model's changes now are (its
 * attribution labels are enum space_cause: fs_set_cause). */
static struct zfs_pool *labelled_pool(struct fs *fs)
{
	G_STATIC_ASSERT(SPACE_CAUSE_COUNT <= ZFS_POOL_CAUSES);
	zfs_pool_set_cause(state(fs)->pool, blockstore_cause(fs->store));
	return state(fs)->pool;
}

static uint64_t dataset_of(const struct subvolume *sv)
{
	const struct zfs_subvolume *z = sv->design_private;
	return z ? z->dataset : 0;
}

/* DZ2: the pool refused what the items did; the check reports the first. */
static void mirrored(struct fs *fs, int ret, const char *call, const struct subvolume *sv, uint64_t object)
{
	struct zfs_design *z = state(fs);
	if (ret && !z->mirror_error)
		z->mirror_error = g_strdup_printf("DZ2 %s of object %" PRIu64 " in subvolume %" PRIu64 ": %s", call,
						  object, sv->id, g_strerror(-ret));
}

static enum zfs_object_type object_type(const union item_payload *payload)
{
	if (!payload || S_ISREG(payload->inode.mode))
		return ZFS_OBJECT_FILE;
	if (S_ISDIR(payload->inode.mode))
		return ZFS_OBJECT_DIRECTORY;
	if (S_ISLNK(payload->inode.mode))
		return ZFS_OBJECT_SYMLINK;
	return ZFS_OBJECT_FILE; /* devices, fifos, sockets: a dnode, no blocks */
}

/* ---- life ---- */

static void dz_init(struct fs *fs)
{
	struct zfs_design *z = g_new0(struct zfs_design, 1);
	struct zfs_pool_config config;
	zfs_pool_config_init(&config);
	config.start_time_ns = fs->config.start_time_ns;
	z->pool = zfs_pool_new(&config);
	z->written_inodes = g_array_new(FALSE, FALSE, sizeof(struct written_inode));
	fs->design_state = z;
}

static void dz_top_subvolume(struct fs *fs, struct subvolume *top)
{
	ITEMS->top_subvolume(fs, top);
	struct zfs_subvolume *zs = g_new0(struct zfs_subvolume, 1);
	mirrored(fs, zfs_filesystem_create(labelled_pool(fs), "pool", &zs->dataset), "create", top, 0);
	top->design_private = zs;
}

static void dz_free(struct fs *fs)
{
	struct zfs_design *z = state(fs);
	zfs_pool_free(z->pool);
	g_array_unref(z->written_inodes);
	g_free(z->mirror_error);
	g_free(z);
}

static void dz_subvolume_free(struct subvolume *sv)
{
	g_free(sv->design_private);
}

/* ---- the pool follows the items ---- */

static void note_inode_written(struct fs *fs, struct subvolume *sv, uint64_t inode)
{
	struct written_inode w = { sv, inode };
	mirrored(fs, zfs_object_touch(labelled_pool(fs), dataset_of(sv), inode), "touch", sv, inode);
	g_array_append_val(state(fs)->written_inodes, w);
}

/* Before a txg: a file whose inode item now says it is shorter than the
 * pool's object was truncated (its extent items went); the pool frees the
 * blocks past the end. A size beyond is a hole, which allocates nothing. */
static void settle_sizes(struct fs *fs)
{
	struct zfs_design *z = state(fs);
	for (unsigned i = 0; i < z->written_inodes->len; i++) {
		const struct written_inode *w = &g_array_index(z->written_inodes, struct written_inode, i);
		if (w->sv->deleted)
			continue;
		struct btree_key key = BTRFS_KEY(w->inode, BTRFS_INODE_ITEM_KEY, 0);
		const struct btree_item *inode = ITEMS->lookup(w->sv, &key);
		const struct item_inode *payload = inode ? btree_item_inode(inode) : NULL;
		if (payload && S_ISREG(payload->mode))
			mirrored(fs, zfs_object_truncate(labelled_pool(fs), dataset_of(w->sv), w->inode, payload->size),
				 "truncate", w->sv, w->inode);
	}
	g_array_set_size(z->written_inodes, 0);
}

static bool is_regular_file(const struct subvolume *sv, uint64_t inode)
{
	struct btree_key key = BTRFS_KEY(inode, BTRFS_INODE_ITEM_KEY, 0);
	const struct btree_item *item = ITEMS->lookup(sv, &key);
	return item && S_ISREG(btree_item_inode(item)->mode);
}

static void item_inserted(struct fs *fs, struct subvolume *sv, const struct btree_key *key, uint32_t size,
			  const union item_payload *payload)
{
	struct zfs_pool *pool = labelled_pool(fs);
	uint64_t ds = dataset_of(sv), obj = key->objectid;
	switch (key->type) {
	case BTRFS_INODE_ITEM_KEY:
		mirrored(fs, zfs_object_claim(pool, ds, obj, object_type(payload)), "claim", sv, obj);
		break;
	case BTRFS_DIR_ITEM_KEY:
		if (payload && payload->dir.location_is_root) {
			state(fs)->link_sv = sv; /* a snapshot's link: no ZAP entry, no dnode change */
			state(fs)->link_dir = obj;
			break;
		}
		mirrored(fs, zfs_zap_add(pool, ds, obj, (uint32_t)key->offset, payload ? payload->dir.name_len : size),
			 "zap add", sv, obj);
		break;
	case BTRFS_EXTENT_DATA_KEY:
		/* A symlink's target is in its dnode's bonus buffer, no block. */
		if (payload && payload->file_extent.num_bytes && is_regular_file(sv, obj))
			mirrored(fs, zfs_object_write(pool, ds, obj, key->offset, payload->file_extent.num_bytes),
				 "write", sv, obj);
		break;
	case BTRFS_DIR_INDEX_KEY:
	case BTRFS_INODE_REF_KEY:
		break; /* the ZAP is ZFS's only index; the parent is an SA */
	default:
		if (obj >= BTRFS_FIRST_FREE_OBJECTID)
			note_inode_written(fs, sv, obj);
	}
}

/* ---- the item view: the btrfs design's, with the pool told ---- */

static const struct btree_item *dz_lookup(const struct subvolume *sv, const struct btree_key *key)
{
	return ITEMS->lookup(sv, key);
}

static const struct btree_item *dz_lookup_le(const struct subvolume *sv, const struct btree_key *key)
{
	return ITEMS->lookup_le(sv, key);
}

static uint64_t dz_visit_range(const struct subvolume *sv, const struct btree_key *first,
				const struct btree_key *last, btree_visit_fn cb, void *opaque)
{
	return ITEMS->visit_range(sv, first, last, cb, opaque);
}

static const struct btree_item *dz_lookup_near(const struct subvolume *sv, const struct btree_key *key,
						struct btree_path *near)
{
	return ITEMS->lookup_near(sv, key, near);
}

static uint64_t dz_visit_range_near(const struct subvolume *sv, const struct btree_key *first,
				     const struct btree_key *last, btree_visit_fn cb, void *opaque,
				     struct btree_path *near)
{
	return ITEMS->visit_range_near(sv, first, last, cb, opaque, near);
}

/* Whatever the caller changes in an inode's item lives in its dnode (the
 * bonus buffer's SAs): the dnode block is written at the next txg. */
static void item_written(struct fs *fs, struct subvolume *sv, const struct btree_item *item)
{
	struct zfs_design *z = state(fs);
	if (item && z->link_sv == sv && btree_item_key(item)->objectid == z->link_dir &&
	    btree_item_key(item)->type == BTRFS_INODE_ITEM_KEY) {
		z->link_sv = NULL; /* the subvolume link's size and mtime: nothing in ZFS */
		return;
	}
	if (item && btree_item_key(item)->objectid >= BTRFS_FIRST_FREE_OBJECTID)
		note_inode_written(fs, sv, btree_item_key(item)->objectid);
}

static struct btree_item *dz_lookup_for_write(struct fs *fs, struct subvolume *sv, const struct btree_key *key)
{
	struct btree_item *item = ITEMS->lookup_for_write(fs, sv, key);
	item_written(fs, sv, item);
	return item;
}

static struct btree_item *dz_lookup_for_write_near(struct fs *fs, struct subvolume *sv,
						    const struct btree_key *key, struct btree_path *near)
{
	struct btree_item *item = ITEMS->lookup_for_write_near(fs, sv, key, near);
	item_written(fs, sv, item);
	return item;
}

/* An atime update: the dnode's SA changes, its dnode block and the
 * indirect blocks above it up to the uberblock are written at the next txg. */
static void dz_write_inode_atime_near(struct fs *fs, struct subvolume *sv, uint64_t inode, int64_t atime,
				       struct btree_path *near)
{
	ITEMS->write_inode_atime_near(fs, sv, inode, atime, near);
	mirrored(fs, zfs_object_touch(labelled_pool(fs), dataset_of(sv), inode), "touch", sv, inode);
}

static struct btree_item *dz_insert(struct fs *fs, struct subvolume *sv, const struct btree_key *key,
				     uint32_t size, const union item_payload *payload)
{
	struct btree_item *item = ITEMS->insert(fs, sv, key, size, payload);
	item_inserted(fs, sv, key, size, payload);
	return item;
}

static struct btree_item *dz_resize(struct fs *fs, struct subvolume *sv, const struct btree_key *key,
				     uint32_t size)
{
	struct btree_item *item = ITEMS->resize(fs, sv, key, size);
	if (item && key->type == BTRFS_EXTENT_DATA_KEY && btree_item_file_extent(item)->num_bytes &&
	    is_regular_file(sv, key->objectid))
		mirrored(fs, zfs_object_write(labelled_pool(fs), dataset_of(sv), key->objectid, key->offset,
					      btree_item_file_extent(item)->num_bytes),
			 "write", sv, key->objectid);
	else
		item_written(fs, sv, item);
	return item;
}

static enum subvol_delete_result dz_delete(struct fs *fs, struct subvolume *sv, const struct btree_key *key)
{
	struct zfs_pool *pool = labelled_pool(fs);
	const struct btree_item *item = ITEMS->lookup(sv, key);
	bool zap_entry = item && key->type == BTRFS_DIR_ITEM_KEY && !btree_item_dir(item)->location_is_root;
	uint16_t name_len = zap_entry ? btree_item_dir(item)->name_len : 0;
	enum subvol_delete_result ret = ITEMS->delete(fs, sv, key);
	if (ret != SUBVOL_DELETED)
		return ret;
	uint64_t ds = dataset_of(sv), obj = key->objectid;
	if (key->type == BTRFS_INODE_ITEM_KEY)
		mirrored(fs, zfs_object_free(pool, ds, obj), "free", sv, obj);
	else if (key->type == BTRFS_DIR_ITEM_KEY && !zap_entry) {
		state(fs)->link_sv = sv; /* a snapshot's link goes: its directory is not changed */
		state(fs)->link_dir = obj;
	} else if (zap_entry)
		mirrored(fs, zfs_zap_remove(pool, ds, obj, (uint32_t)key->offset, name_len), "zap remove", sv, obj);
	/* An extent item's blocks go when the inode's size says so
	 * (settle_sizes) or with the object. */
	return ret;
}

/* ---- snapshots ---- */

static int dz_snapshot_allowed(const struct fs *fs, const struct subvolume *src, const struct subvolume *snap,
				bool readonly)
{
	if (src)
		return readonly || fs->config.snapshot_clones ? 0 : -EOPNOTSUPP;
	/* zfs destroy of a filesystem with snapshots (a clone's origin among
	 * them) needs -r, which would take the model's snapshots with it. */
	const struct zfs_subvolume *zs = snap->design_private;
	return zs->snapshots ? -EBUSY : 0;
}

static void dz_snapshot_create(struct fs *fs, struct subvolume *src, struct subvolume *snap)
{
	ITEMS->snapshot_create(fs, src, snap);
	settle_sizes(fs);
	struct zfs_subvolume *zs = g_new0(struct zfs_subvolume, 1);
	snap->design_private = zs;
	zs->source = src->design_private;
	zs->source->snapshots++;
	g_autofree char *name = g_strdup_printf("pool@%" PRIu64, snap->id);
	mirrored(fs, zfs_snapshot_create(labelled_pool(fs), dataset_of(src), name, &zs->dataset), "snapshot", src, 0);
	if (snap->readonly)
		return;
	g_autofree char *clone = g_strdup_printf("pool/clone%" PRIu64, snap->id);
	zs->origin = zs->dataset;
	mirrored(fs, zfs_clone_create(labelled_pool(fs), zs->origin, clone, &zs->dataset), "clone", src, 0);
}

static int dz_snapshot_delete(struct fs *fs, struct subvolume *snap)
{
	struct zfs_subvolume *zs = snap->design_private;
	int ret = ITEMS->snapshot_delete(fs, snap);
	mirrored(fs, zfs_dataset_destroy(labelled_pool(fs), zs->dataset), "destroy", snap, 0);
	if (zs->origin)
		mirrored(fs, zfs_dataset_destroy(labelled_pool(fs), zs->origin), "destroy origin", snap, 0);
	zs->source->snapshots--;
	return ret;
}

/* ---- what atime policies ask ---- */

/* A dnode's change costs a snapshot nothing when its dnode block is
 * written in this txg already or was born after the newest snapshot;
 * otherwise the snapshot keeps the old block (the deadlist). */
static bool dz_item_write_is_private(const struct fs *fs, const struct subvolume *sv,
				      const struct btree_item *item)
{
	return zfs_object_change_is_private(state(fs)->pool, dataset_of(sv), btree_item_key(item)->objectid);
}

/* The snapshot-time warning: a read of everything right after a snapshot
 * rewrites each dnode block holding a wanted inode once (16 KiB for 32
 * dnodes) and keeps the old one for the snapshot. Upper bound: one block
 * per wanted inode, at most as many as the inode numbers span. Indirect
 * blocks above them are not counted. */
static uint64_t dz_inline_atime_estimate(const struct fs *fs, const struct subvolume *sv,
					  fs_atime_wanted_fn wanted, bool private_only, bool from_items)
{
	(void)from_items; /* nothing remembered: one count of the inode items */
	if (private_only)
		return 0; /* right after a snapshot every dnode block is the snapshot's too */
	uint64_t inodes = fs_count_wanted_inodes(fs, sv, wanted);
	uint64_t span = sv->highest_inode / ZFS_DNODES_PER_BLOCK + 1;
	return MIN(inodes, span) * ZFS_DNODE_BLOCK_SIZE;
}

/* ---- clock ---- */

static void dz_clock(struct fs *fs, bool sync)
{
	settle_sizes(fs);
	zfs_pool_set_clock(labelled_pool(fs), fs->clock_ns);
	if (sync)
		zfs_pool_sync(labelled_pool(fs));
}

/* ---- reports and checks ---- */

static void dz_report(const struct fs *fs, struct fs_report *report)
{
	struct zfs_pool_usage u;
	zfs_pool_usage(state(fs)->pool, &u);
	struct space_report *s = &report->space;
	s->metadata_used = u.metadata_used;
	s->metadata_raw = u.metadata_raw;
	s->data_used = u.data_used;
	/* By tree: the datasets' objsets are the fs trees, the MOS plays the
	 * root tree's part; ZFS has no extent, csum or free-space tree (block
	 * pointers carry checksums; space maps are not modelled). */
	memset(s->tree_bytes, 0, sizeof(s->tree_bytes));
	s->tree_bytes[TREE_CATEGORY_FS] = u.metadata_used - u.mos_used;
	s->tree_bytes[TREE_CATEGORY_ROOT] = u.mos_used;
	for (unsigned k = 0; k < SPACE_CAUSE_COUNT; k++)
		s->cause_bytes[k] = u.metadata_by_cause[k];
	report->counters.blocks_cowed = u.metadata_cowed;
	report->counters.blocks_written = u.blocks_written;
	report->counters.bytes_written = u.bytes_written;
}

static const struct zfs_dataset_usage *find_dataset(GArray *datasets, uint64_t id)
{
	for (unsigned i = 0; i < datasets->len; i++)
		if (g_array_index(datasets, struct zfs_dataset_usage, i).id == id)
			return &g_array_index(datasets, struct zfs_dataset_usage, i);
	return NULL;
}

static GArray *dz_usage(const struct fs *fs)
{
	g_autoptr(GArray) datasets = zfs_pool_datasets(state(fs)->pool);
	GArray *usage = g_array_new(FALSE, TRUE, sizeof(struct subvolume_usage));
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		const struct zfs_dataset_usage *d = sv->deleted ? NULL : find_dataset(datasets, dataset_of(sv));
		if (!d)
			continue;
		struct subvolume_usage u = { .id = sv->id, .path = g_strdup(sv->path), .readonly = sv->readonly,
					     .exclusive_bytes = d->exclusive, .referenced_bytes = d->referenced,
					     .shared_bytes = d->referenced - MIN(d->exclusive, d->referenced) };
		g_array_append_val(usage, u);
	}
	return usage;
}

/* `zfs destroy -nv` of the set: the pool's blocks only its datasets reach
 * (a clone's origin snapshot goes with the clone). */
static void dz_reclaim(const struct fs *fs, struct subvolume *const *set, unsigned n, struct fs_reclaim *out)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	for (unsigned i = 0; i < n; i++) {
		const struct zfs_subvolume *zs = set[i]->design_private;
		g_array_append_val(ids, zs->dataset);
		if (zs->origin)
			g_array_append_val(ids, zs->origin);
	}
	int ret = zfs_pool_destroy_estimate(state(fs)->pool, (const uint64_t *)(void *)ids->data, ids->len,
					    &out->metadata_bytes, &out->data_bytes);
	g_warn_if_fail(ret == 0); /* DZ1: every live subvolume has its dataset */
}

static bool dz_design_check(const struct fs *fs, GError **error)
{
	struct zfs_design *z = state(fs);
	if (z->mirror_error) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT, "%s", z->mirror_error);
		return false;
	}
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		const struct subvolume *sv = fs->subvolumes->pdata[i];
		if (sv->deleted)
			continue;
		uint64_t ds = dataset_of(sv);
		g_autoptr(GArray) datasets = zfs_pool_datasets(z->pool);
		if (!ds || !find_dataset(datasets, ds) || zfs_dataset_is_snapshot(z->pool, ds) != sv->readonly) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "DZ1: subvolume %" PRIu64 " (%s) has %s dataset %" PRIu64, sv->id,
				    sv->readonly ? "read-only" : "writable", ds ? "the wrong" : "no", ds);
			return false;
		}
	}
	return ITEMS->check(fs, error) && zfs_pool_check(z->pool, error);
}

const struct fs_design_ops fs_design_zfs = {
	.name = "zfs",
	.summary = "datasets, read-only snapshots kept by birth time and deadlists (ZFS-like, from the spec)",
	.init = dz_init,
	.top_subvolume = dz_top_subvolume,
	.free = dz_free,
	.subvolume_free = dz_subvolume_free,
	.lookup = dz_lookup,
	.lookup_le = dz_lookup_le,
	.visit_range = dz_visit_range,
	.lookup_for_write = dz_lookup_for_write,
	.lookup_near = dz_lookup_near,
	.visit_range_near = dz_visit_range_near,
	.lookup_for_write_near = dz_lookup_for_write_near,
	.write_inode_atime_near = dz_write_inode_atime_near,
	.insert = dz_insert,
	.resize = dz_resize,
	.delete = dz_delete,
	.snapshot_create = dz_snapshot_create,
	.snapshot_delete = dz_snapshot_delete,
	.snapshot_allowed = dz_snapshot_allowed,
	.item_write_is_private = dz_item_write_is_private,
	.inline_atime_estimate = dz_inline_atime_estimate,
	.side_trees = false,
	.usage = dz_usage,
	.reclaim = dz_reclaim,
	.check = dz_design_check,
	.clock = dz_clock,
	.report = dz_report,
};
