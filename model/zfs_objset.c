/*
 * model/zfs_objset.c - an objset's objects and what is dirty in the open txg.
 *
 * An objset is its objset block, the meta-dnode (object 0, whose level-0
 * blocks are the 16 KiB dnode blocks) and the objects those dnodes
 * describe. Each object keeps, per level, the blocks its block pointers
 * lead to:
 *
 *   dnode (nblkptr pointers) --> level nlevels-1 --> ... --> level 0
 *                                128 KiB indirect blocks, 1024 pointers each
 *
 * Nothing here writes a block: changes are recorded as dirty level-0 blkids
 * and dirty dnodes (struct zfs_dirty_object), and zfs_sync.c writes them
 * when the txg syncs.
 *
 * Invariants (zfs_objset_check, from zfs_pool_check):
 *  ZO1 an object's level-l array holds blkids below ceil(nblocks / 1024^l)
 *      (at levels under nlevels), and nothing above; except an object with
 *      a truncate pending in the open txg (free_from), whose blocks past
 *      its new end stay until the txg syncs and kills them (objects freed
 *      in the open txg are not checked: their dirty record went with them);
 *  ZO2 an object struct shared by several objsets (shares > 1) is never
 *      changed: zfs_objset_object_for_write() copies it first, so no
 *      objset records a change (a dirty record) to a shared struct, and
 *      shares counts the objsets' slots holding it (objects, freed and the
 *      meta-dnode; zfs_pool_check counts them across the pool).
 */
#include <inttypes.h>
#include <string.h>

#include "zfs_internal.h"

static struct zfs_object *object_new(uint64_t number, int type, uint8_t kind)
{
	struct zfs_object *o = g_new0(struct zfs_object, 1);

	o->number = number;
	o->type = type;
	o->shares = 1;
	o->kind = kind;
	o->datablksz = ZFS_MINBLOCKSIZE;
	o->indblksz = ZFS_INDIRECT_BLOCK_SIZE;
	o->nblkptr = ZFS_ZPL_NBLKPTR;
	o->nlevels = 1;
	for (unsigned l = 0; l < ZFS_MAX_LEVELS; l++)
		o->levels[l] = g_ptr_array_new();
	return o;
}

static void object_unref(struct zfs_object *o)
{
	if (!o || --o->shares > 0)
		return;
	for (unsigned l = 0; l < ZFS_MAX_LEVELS; l++)
		g_ptr_array_unref(o->levels[l]);
	zfs_zap_free(o->zap);
	g_free(o);
}

static struct zfs_object *object_copy(const struct zfs_object *o)
{
	struct zfs_object *c = g_memdup2(o, sizeof(*o));

	c->shares = 1;
	for (unsigned l = 0; l < ZFS_MAX_LEVELS; l++)
		c->levels[l] = g_ptr_array_copy(o->levels[l], NULL, NULL);
	c->zap = o->zap ? zfs_zap_copy(o->zap) : NULL;
	return c;
}

static void dirty_object_free(gpointer p)
{
	struct zfs_dirty_object *d = p;

	g_hash_table_unref(d->blkids);
	g_free(d);
}

static void objset_init_state(struct zfs_objset *os)
{
	os->dirty = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, dirty_object_free);
	os->freed = g_ptr_array_new_with_free_func((GDestroyNotify)object_unref);
}

struct zfs_objset *zfs_objset_new(bool mos)
{
	struct zfs_objset *os = g_new0(struct zfs_objset, 1);

	os->mos = mos;
	os->objects = g_ptr_array_new_with_free_func((GDestroyNotify)object_unref);
	os->meta_dnode = object_new(0, ZFS_OBJECT_ZAP, mos ? ZFS_BLOCK_MOS : ZFS_BLOCK_METADATA);
	os->meta_dnode->datablksz = ZFS_DNODE_BLOCK_SIZE;
	os->meta_dnode->nblkptr = ZFS_META_DNODE_NBLKPTR;
	if (!mos)
		os->meta_dnode->nlevels = ZFS_DATASET_META_DNODE_LEVELS;
	objset_init_state(os);
	return os;
}

struct zfs_objset *zfs_objset_share(const struct zfs_objset *os)
{
	struct zfs_objset *c = g_new0(struct zfs_objset, 1);

	c->mos = os->mos;
	c->objects = g_ptr_array_new_full(os->objects->len, (GDestroyNotify)object_unref);
	for (guint i = 0; i < os->objects->len; i++) {
		struct zfs_object *o = os->objects->pdata[i];

		if (o)
			o->shares++;
		g_ptr_array_add(c->objects, o);
	}
	c->meta_dnode = os->meta_dnode;
	c->meta_dnode->shares++;
	c->root = os->root;
	objset_init_state(c);
	return c;
}

void zfs_objset_free(struct zfs_objset *os)
{
	if (!os)
		return;
	g_hash_table_unref(os->dirty);
	g_ptr_array_unref(os->freed);
	g_ptr_array_unref(os->objects);
	object_unref(os->meta_dnode);
	g_free(os);
}

struct zfs_object *zfs_objset_object(const struct zfs_objset *os, uint64_t number)
{
	if (number == 0)
		return os->meta_dnode;
	return number < os->objects->len ? os->objects->pdata[number] : NULL;
}

/* ZO2: the objset's own copy of the object, made on first write. */
struct zfs_object *zfs_objset_object_for_write(struct zfs_objset *os, uint64_t number)
{
	struct zfs_object **slot = number == 0 ? &os->meta_dnode
			       : number < os->objects->len ? (struct zfs_object **)&os->objects->pdata[number]
							   : NULL;

	if (!slot || !*slot)
		return NULL;
	if ((*slot)->shares > 1) {
		(*slot)->shares--;
		*slot = object_copy(*slot);
	}
	return *slot;
}

struct zfs_dirty_object *zfs_objset_dirty(struct zfs_objset *os, uint64_t number)
{
	struct zfs_dirty_object *d = g_hash_table_lookup(os->dirty, GSIZE_TO_POINTER(number));

	if (!d) {
		d = g_new0(struct zfs_dirty_object, 1);
		d->blkids = g_hash_table_new(g_direct_hash, g_direct_equal);
		d->free_from = UINT64_MAX;
		d->cause = os->cause;
		g_hash_table_insert(os->dirty, GSIZE_TO_POINTER(number), d);
	}
	return d;
}

void zfs_objset_dirty_block(struct zfs_objset *os, uint64_t number, uint64_t blkid)
{
	g_hash_table_add(zfs_objset_dirty(os, number)->blkids, GSIZE_TO_POINTER(blkid));
}

bool zfs_objset_is_dirty(const struct zfs_objset *os)
{
	return g_hash_table_size(os->dirty) > 0 || os->freed->len > 0;
}

static uint8_t kind_for(const struct zfs_objset *os, int type)
{
	if (os->mos)
		return ZFS_BLOCK_MOS;
	return type == ZFS_OBJECT_FILE ? ZFS_BLOCK_DATA : ZFS_BLOCK_METADATA;
}

/* A new object's dnode, and for a ZAP its first (micro) block: the caller
 * has checked that `number` is free. */
struct zfs_object *zfs_objset_claim(struct zfs_objset *os, uint64_t number, int type)
{
	struct zfs_object *o = object_new(number, type, kind_for(os, type));

	if (number >= os->objects->len)
		g_ptr_array_set_size(os->objects, (guint)number + 1);
	os->objects->pdata[number] = o;
	zfs_objset_dirty(os, number)->dnode = true;
	switch (type) {
	case ZFS_OBJECT_DIRECTORY:
	case ZFS_OBJECT_ZAP:
		/* mzap_create_impl: the micro-ZAP's one block, at zfs_default_bs. */
		o->zap = zfs_zap_new();
		o->nblocks = 1;
		zfs_objset_dirty_block(os, number, 0);
		break;
	case ZFS_OBJECT_BPOBJ:
		/* bpobj_alloc: 128 KiB blocks; bonus bpobj_phys leaves 3 pointers. */
		o->datablksz = ZFS_BPOBJ_BLOCK_SIZE;
		o->nblkptr = ZFS_META_DNODE_NBLKPTR;
		break;
	default:
		break;
	}
	return o;
}

/* The object's blocks are killed at the next txg; its number is free now. */
void zfs_objset_free_object(struct zfs_objset *os, uint64_t number)
{
	struct zfs_object *o = os->objects->pdata[number];

	g_ptr_array_add(os->freed, o);
	os->objects->pdata[number] = NULL;
	g_hash_table_remove(os->dirty, GSIZE_TO_POINTER(number));
}

static void visit_object(const struct zfs_object *o, zfs_block_visit_fn visit, void *opaque)
{
	for (unsigned l = 0; l < o->nlevels; l++)
		for (guint b = 0; b < o->levels[l]->len; b++)
			if (o->levels[l]->pdata[b])
				visit(o->levels[l]->pdata[b], o, b, opaque);
}

void zfs_objset_visit(const struct zfs_objset *os, zfs_block_visit_fn visit, void *opaque)
{
	if (os->root)
		visit(os->root, NULL, 0, opaque);
	visit_object(os->meta_dnode, visit, opaque);
	for (guint i = 0; i < os->objects->len; i++)
		if (os->objects->pdata[i])
			visit_object(os->objects->pdata[i], visit, opaque);
	for (guint i = 0; i < os->freed->len; i++)
		visit_object(os->freed->pdata[i], visit, opaque);
}

/* ZO1 for one object: each level's array against the blocks in use; the
 * ceiling at level l is the ceiling of level l-1's over 1024. */
static bool object_levels_ok(const struct zfs_object *o, GString *why)
{
	uint64_t bound = o->nblocks;

	for (unsigned l = 0; l < ZFS_MAX_LEVELS; l++) {
		uint64_t allowed = l < o->nlevels ? bound : 0;

		if (o->levels[l]->len > allowed) {
			g_string_printf(why, "ZO1 object %" PRIu64 " level %u holds %u blkids, %" PRIu64
					" blocks in %u levels allow %" PRIu64, o->number, l, o->levels[l]->len,
					o->nblocks, o->nlevels, allowed);
			return false;
		}
		bound = (bound + (1u << ZFS_INDIRECT_SHIFT) - 1) >> ZFS_INDIRECT_SHIFT;
	}
	return true;
}

static bool truncate_pending(const struct zfs_objset *os, uint64_t number)
{
	const struct zfs_dirty_object *d = g_hash_table_lookup(os->dirty, GSIZE_TO_POINTER(number));

	return d && d->free_from != UINT64_MAX;
}

/* ZO2's own part: a change recorded in the open txg is to the objset's own
 * struct. (The shares count needs every objset: zfs_pool_check.) */
static bool dirty_objects_private(const struct zfs_objset *os, GString *why)
{
	GHashTableIter it;
	gpointer key;

	g_hash_table_iter_init(&it, os->dirty);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		const struct zfs_object *o = zfs_objset_object(os, GPOINTER_TO_SIZE(key));

		if (o && o->shares > 1) {
			g_string_printf(why, "ZO2 object %" PRIu64 " changed in the open txg while %u objsets share it",
					o->number, o->shares);
			return false;
		}
	}
	return true;
}

bool zfs_objset_check(const struct zfs_objset *os, GString *why)
{
	if (!truncate_pending(os, 0) && !object_levels_ok(os->meta_dnode, why))
		return false;
	for (guint i = 0; i < os->objects->len; i++) {
		const struct zfs_object *o = os->objects->pdata[i];

		if (o && !truncate_pending(os, i) && !object_levels_ok(o, why))
			return false;
	}
	return dirty_objects_private(os, why);
}
