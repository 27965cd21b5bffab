/*
 * model/zfs_check.c - zfs_pool_check(): invariants Z1-Z5 of
 * model/zfs_pool.c, recounted from the trees rather than trusted from the
 * counters, in the manner of zdb -b (every block reached once, space
 * leaked or double-freed), with ZO1-ZO2 of model/zfs_objset.c and ZZ1 of
 * model/zfs_zap.c. Errors read "corrupt <what>: <id>, <label> <reason>".
 */
#include <inttypes.h>

#include "zfs_internal.h"

/* Every block an objset reaches: block -> (gpointer)1. */
static void add_reached(const struct zfs_block *block, const struct zfs_object *o, uint64_t blkid, void *opaque)
{
	GHashTable *set = opaque;

	(void)o;
	(void)blkid;
	g_hash_table_add(set, (gpointer)block);
}

static GHashTable *reached(const struct zfs_objset *os)
{
	GHashTable *set = g_hash_table_new(g_direct_hash, g_direct_equal);

	if (os)
		zfs_objset_visit(os, add_reached, set);
	return set;
}

static bool fail(GError **error, const char *what, uint64_t id, const char *fmt, ...) G_GNUC_PRINTF(4, 5);

static bool fail(GError **error, const char *what, uint64_t id, const char *fmt, ...)
{
	va_list ap;
	g_autofree char *reason = NULL;

	va_start(ap, fmt);
	reason = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(error, ZFS_POOL_ERROR, 0, "corrupt %s: %" PRIu64 ", %s", what, id, reason);
	return false;
}

/* Z1: births against the objset's txg and the parent's birth. */
static const struct zfs_block *parent_of(const struct zfs_objset *os, const struct zfs_object *o, unsigned level,
					 uint64_t blkid)
{
	GPtrArray *up;

	if (level + 1 < o->nlevels) {
		up = o->levels[level + 1];
		blkid >>= ZFS_INDIRECT_SHIFT;
	} else if (o->number == 0) {
		return os->root;
	} else {
		up = os->meta_dnode->levels[0];
		blkid = o->number / ZFS_DNODES_PER_BLOCK;
	}
	return blkid < up->len ? up->pdata[blkid] : NULL;
}

static bool check_object_births(const struct zfs_objset *os, const struct zfs_object *o, uint64_t txg,
				bool pending, GError **error)
{
	for (unsigned l = 0; l < o->nlevels; l++)
		for (guint b = 0; b < o->levels[l]->len; b++) {
			const struct zfs_block *blk = o->levels[l]->pdata[b], *parent;

			if (!blk)
				continue;
			if (blk->birth > txg)
				return fail(error, "block", blk->id, "Z1 born in txg %" PRIu64 " after its objset's txg %" PRIu64,
					    blk->birth, txg);
			if (pending)
				continue;        /* freed in the open txg: its dnode may be gone */
			parent = parent_of(os, o, l, b);
			if (!parent)
				return fail(error, "block", blk->id, "Z1 object %" PRIu64 " level %u blkid %u has no parent",
					    o->number, l, b);
			if (parent->birth < blk->birth)
				return fail(error, "block", blk->id, "Z1 born in txg %" PRIu64 " after its parent %" PRIu64
					    " (txg %" PRIu64 ")", blk->birth, parent->id, parent->birth);
		}
	return true;
}

static bool check_births(const struct zfs_objset *os, uint64_t txg, GError **error)
{
	if (os->root && os->root->birth > txg)
		return fail(error, "objset block", os->root->id, "Z1 born in txg %" PRIu64 " after txg %" PRIu64,
			    os->root->birth, txg);
	if (!check_object_births(os, os->meta_dnode, txg, false, error))
		return false;
	for (guint i = 0; i < os->objects->len; i++) {
		const struct zfs_object *o = os->objects->pdata[i];
		g_autoptr(GString) why = g_string_new(NULL);

		if (!o)
			continue;
		if (!check_object_births(os, o, txg, false, error))
			return false;
		if (o->zap && !zfs_zap_check(o, why))
			return fail(error, "zap", o->number, "ZZ1 %s", why->str);
	}
	for (guint i = 0; i < os->freed->len; i++)
		if (!check_object_births(os, os->freed->pdata[i], txg, true, error))
			return false;
	return true;
}

struct lineage {
	const struct zfs_dataset *ds;
	GHashTable *reach;
};

/* Z3 for one dataset: deadlist == reach(prev) \ reach(ds), no duplicates. */
static bool check_deadlist(const struct zfs_dataset *ds, GHashTable *reach, GHashTable *prev_reach,
			   GError **error)
{
	g_autoptr(GHashTable) on = g_hash_table_new(g_direct_hash, g_direct_equal);
	GHashTableIter it;
	gpointer key;

	for (guint i = 0; i < ds->deadlist->len; i++) {
		const struct zfs_block *b = ds->deadlist->pdata[i];

		if (!g_hash_table_add(on, (gpointer)b))
			return fail(error, "deadlist", ds->id, "Z3 block %" PRIu64 " twice", b->id);
		if (!prev_reach || !g_hash_table_contains(prev_reach, b))
			return fail(error, "deadlist", ds->id, "Z3 block %" PRIu64 " (born %" PRIu64
				    ") is not its previous snapshot's", b->id, b->birth);
		if (g_hash_table_contains(reach, b))
			return fail(error, "deadlist", ds->id, "Z3 block %" PRIu64 " is still reached", b->id);
	}
	if (!prev_reach)
		return true;
	g_hash_table_iter_init(&it, prev_reach);
	while (g_hash_table_iter_next(&it, &key, NULL))
		if (!g_hash_table_contains(reach, key) && !g_hash_table_contains(on, key))
			return fail(error, "deadlist", ds->id, "Z3 block %" PRIu64 " died after snapshot %" PRIu64
				    " but is on no deadlist", ((const struct zfs_block *)key)->id, ds->prev->id);
	return true;
}

/* Z2: every allocated block reached, every reached block allocated. */
static bool check_reached(const struct zfs_pool *pool, GPtrArray *sets, GError **error)
{
	g_autoptr(GHashTable) all = reached(pool->mos);
	GHashTableIter it;
	gpointer key, value;

	for (guint i = 0; i < sets->len; i++) {
		g_hash_table_iter_init(&it, ((struct lineage *)sets->pdata[i])->reach);
		while (g_hash_table_iter_next(&it, &key, NULL))
			g_hash_table_add(all, key);
	}
	g_hash_table_iter_init(&it, all);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		const struct zfs_block *b = key;

		if (g_hash_table_lookup(pool->blocks, &b->id) != b)
			return fail(error, "block", b->id, "Z2 reached but not allocated");
	}
	g_hash_table_iter_init(&it, pool->blocks);
	while (g_hash_table_iter_next(&it, &key, &value))
		if (!g_hash_table_contains(all, value))
			return fail(error, "block", ((struct zfs_block *)value)->id,
				    "Z2 allocated (born %" PRIu64 ") but reached from no dataset: leaked",
				    ((struct zfs_block *)value)->birth);
	return true;
}

/* Z4: the counters against the blocks, by kind and by label. */
static bool check_space(const struct zfs_pool *pool, GError **error)
{
	uint64_t used[3] = { 0 }, raw[3] = { 0 }, by_cause[ZFS_POOL_CAUSES] = { 0 };
	GHashTableIter it;
	gpointer value;

	g_hash_table_iter_init(&it, pool->blocks);
	while (g_hash_table_iter_next(&it, NULL, &value)) {
		const struct zfs_block *b = value;

		used[b->kind] += b->asize;
		raw[b->kind] += b->asize * b->copies;
		if (b->kind != ZFS_BLOCK_DATA)
			by_cause[b->cause] += b->asize;
	}
	for (unsigned k = 0; k < 3; k++)
		if (used[k] != pool->used[k] || raw[k] != pool->raw[k])
			return fail(error, "space", k, "Z4 kind %u counts %" PRIu64 " bytes (raw %" PRIu64 "), blocks hold %"
				    PRIu64 " (raw %" PRIu64 ")", k, pool->used[k], pool->raw[k], used[k], raw[k]);
	for (unsigned k = 0; k < ZFS_POOL_CAUSES; k++)
		if (by_cause[k] != pool->cause_used[k])
			return fail(error, "space", k, "Z4 label %u counts %" PRIu64 " metadata bytes, its blocks hold %"
				    PRIu64, k, pool->cause_used[k], by_cause[k]);
	return true;
}

/* Z5: a clone-free snapshot's destroy estimate against a recount. */
static bool check_exclusive(GPtrArray *sets, const struct lineage *l, GError **error)
{
	uint64_t alone = 0;
	GHashTableIter it;
	gpointer key;

	g_hash_table_iter_init(&it, l->reach);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		bool shared = false;

		for (guint i = 0; i < sets->len && !shared; i++) {
			const struct lineage *o = sets->pdata[i];

			shared = o != l && g_hash_table_contains(o->reach, key);
		}
		if (!shared)
			alone += ((const struct zfs_block *)key)->asize;
	}
	if (alone != zfs_dataset_exclusive(l->ds))
		return fail(error, "snapshot", l->ds->id, "Z5 destroy would reclaim %" PRIu64 " by the deadlists, %" PRIu64
			    " by a recount", zfs_dataset_exclusive(l->ds), alone);
	return true;
}

static void lineage_free(gpointer p)
{
	struct lineage *l = p;

	g_hash_table_unref(l->reach);
	g_free(l);
}

static GHashTable *reach_of(GPtrArray *sets, const struct zfs_dataset *ds)
{
	for (guint i = 0; i < sets->len; i++) {
		const struct lineage *l = sets->pdata[i];

		if (l->ds == ds)
			return l->reach;
	}
	return NULL;
}

/* ZO1 and ZO2's per-objset part; `id` is the dataset's, 0 for the MOS. */
static bool check_objset(const struct zfs_objset *os, uint64_t id, GError **error)
{
	g_autoptr(GString) why = g_string_new(NULL);

	if (!zfs_objset_check(os, why))
		return fail(error, "objset", id, "%s", why->str);
	return true;
}

static void count_holder(GHashTable *holders, const struct zfs_object *o)
{
	if (o)
		g_hash_table_insert(holders, (gpointer)o,
				    GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(holders, o)) + 1));
}

static void count_holders(GHashTable *holders, const struct zfs_objset *os)
{
	count_holder(holders, os->meta_dnode);
	for (guint i = 0; i < os->objects->len; i++)
		count_holder(holders, os->objects->pdata[i]);
	for (guint i = 0; i < os->freed->len; i++)
		count_holder(holders, os->freed->pdata[i]);
}

/* ZO2: each object struct's shares is the slots of live objsets holding it. */
static bool check_shares(const struct zfs_pool *pool, GError **error)
{
	g_autoptr(GHashTable) holders = g_hash_table_new(g_direct_hash, g_direct_equal);
	GHashTableIter it;
	gpointer key, value;

	count_holders(holders, pool->mos);
	for (guint i = 0; i < pool->datasets->len; i++) {
		const struct zfs_dataset *ds = pool->datasets->pdata[i];

		if (!ds->destroyed && ds->os)
			count_holders(holders, ds->os);
	}
	g_hash_table_iter_init(&it, holders);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		const struct zfs_object *o = key;

		if (o->shares != GPOINTER_TO_UINT(value))
			return fail(error, "object", o->number, "ZO2 shares %u, held by %u objsets", o->shares,
				    GPOINTER_TO_UINT(value));
	}
	return true;
}

bool zfs_pool_check(const struct zfs_pool *pool, GError **error)
{
	g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func(lineage_free);

	if (!check_births(pool->mos, pool->synced_txg, error) || !check_objset(pool->mos, 0, error))
		return false;
	for (guint i = 0; i < pool->datasets->len; i++) {
		const struct zfs_dataset *ds = pool->datasets->pdata[i];
		struct lineage *l;

		if (ds->destroyed)
			continue;
		if (!check_births(ds->os, ds->snapshot ? ds->creation_txg : pool->synced_txg, error) ||
		    !check_objset(ds->os, ds->id, error))
			return false;
		l = g_new0(struct lineage, 1);
		l->ds = ds;
		l->reach = reached(ds->os);
		g_ptr_array_add(sets, l);
	}
	if (!check_shares(pool, error) || !check_reached(pool, sets, error) || !check_space(pool, error))
		return false;
	for (guint i = 0; i < sets->len; i++) {
		const struct lineage *l = sets->pdata[i];
		GHashTable *prev = l->ds->prev ? reach_of(sets, l->ds->prev) : NULL;

		if (l->ds->prev && !prev)
			return fail(error, "dataset", l->ds->id, "Z3 previous snapshot %" PRIu64 " is gone", l->ds->prev->id);
		if (!check_deadlist(l->ds, l->reach, prev, error))
			return false;
		if (l->ds->snapshot && l->ds->clones == 0 && !check_exclusive(sets, l, error))
			return false;
	}
	return true;
}
