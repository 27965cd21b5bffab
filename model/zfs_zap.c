/*
 * model/zfs_zap.c - directories as ZAP objects: a micro-ZAP while it fits,
 * a fat ZAP after (zap_micro.c, zap_fat.c, zap_leaf.c in OpenZFS).
 *
 *   micro-ZAP  one block: a 64-byte header, then 64-byte entries (name up
 *              to 49 bytes, one 8-byte value); starts at 512 bytes and
 *              grows by 512 when full, up to 128 KiB.
 *   fat ZAP    block 0: the header with the embedded pointer table;
 *              blocks 1..: 16 KiB leaves of 638 24-byte chunks; the leaf
 *              for a name is the one whose prefix the name's hash starts
 *              with; a full leaf splits by the next hash bit.
 *
 * A micro-ZAP becomes fat when it is full at 128 KiB or takes a name of
 * 50 bytes or more; a ZAP never shrinks back (zap_remove frees no block).
 * What each change dirties: micro, block 0; fat, the entry's leaf and the
 * header (zap_num_entries lives there), both leaves at a split.
 *
 * Invariant (zfs_zap_check, from zfs_pool_check for every live object that
 * is a ZAP):
 *  ZZ1 the count of entries is the names the ZAP holds; micro: entries <=
 *      datablksz / 64 - 1; fat: each leaf's chunks equal the sum of its
 *      entries' and every name hashes into its leaf's prefix.
 */
#include "zfs_internal.h"

struct zfs_zap *zfs_zap_new(void)
{
	struct zfs_zap *z = g_new0(struct zfs_zap, 1);

	z->micro = g_array_new(FALSE, FALSE, sizeof(struct zfs_zap_entry));
	return z;
}

static void leaf_free(gpointer p)
{
	struct zfs_zap_leaf *l = p;

	g_array_unref(l->entries);
	g_free(l);
}

static struct zfs_zap_leaf *leaf_copy(const struct zfs_zap_leaf *l)
{
	struct zfs_zap_leaf *c = g_memdup2(l, sizeof(*l));

	c->entries = g_array_copy(l->entries);
	return c;
}

struct zfs_zap *zfs_zap_copy(const struct zfs_zap *zap)
{
	struct zfs_zap *c = g_memdup2(zap, sizeof(*zap));

	c->micro = zap->micro ? g_array_copy(zap->micro) : NULL;
	if (zap->leaves) {
		c->leaves = g_ptr_array_new_with_free_func(leaf_free);
		for (guint i = 0; i < zap->leaves->len; i++)
			g_ptr_array_add(c->leaves, leaf_copy(zap->leaves->pdata[i]));
	}
	return c;
}

void zfs_zap_free(struct zfs_zap *zap)
{
	if (!zap)
		return;
	if (zap->micro)
		g_array_unref(zap->micro);
	if (zap->leaves)
		g_ptr_array_unref(zap->leaves);
	g_free(zap);
}

/* zap_entry_create: one entry chunk, the name with its NUL in 21-byte
 * array chunks, one chunk for the 8-byte value. */
static uint16_t entry_chunks(uint32_t name_len)
{
	return (uint16_t)(1 + (name_len + 1 + ZFS_ZAP_LEAF_ARRAY_BYTES - 1) / ZFS_ZAP_LEAF_ARRAY_BYTES + 1);
}

static bool leaf_holds(const struct zfs_zap_leaf *l, uint32_t hash)
{
	return l->prefix_len == 0 || (hash >> (32 - l->prefix_len)) == l->prefix;
}

static struct zfs_zap_leaf *leaf_for(const struct zfs_zap *z, uint32_t hash)
{
	for (guint i = 0; i < z->leaves->len; i++)
		if (leaf_holds(z->leaves->pdata[i], hash))
			return z->leaves->pdata[i];
	g_assert_not_reached();
}

static struct zfs_zap_leaf *leaf_new(struct zfs_zap *z, uint32_t prefix, uint8_t prefix_len, uint64_t blkid)
{
	struct zfs_zap_leaf *l = g_new0(struct zfs_zap_leaf, 1);

	l->prefix = prefix;
	l->prefix_len = prefix_len;
	l->blkid = blkid;
	l->entries = g_array_new(FALSE, FALSE, sizeof(struct zfs_zap_entry));
	g_ptr_array_add(z->leaves, l);
	return l;
}

/* zap_expand_leaf: the entries whose next hash bit is 1 move to a new leaf. */
static void leaf_split(struct zfs_objset *os, struct zfs_object *o, struct zfs_zap_leaf *l)
{
	struct zfs_zap *z = o->zap;
	struct zfs_zap_leaf *right = leaf_new(z, (l->prefix << 1) | 1, (uint8_t)(l->prefix_len + 1), z->next_blkid++);
	guint kept = 0;

	l->prefix <<= 1;
	l->prefix_len++;
	l->chunks = 0;
	for (guint i = 0; i < l->entries->len; i++) {
		struct zfs_zap_entry e = g_array_index(l->entries, struct zfs_zap_entry, i);
		struct zfs_zap_leaf *to = leaf_holds(l, e.hash) ? l : right;

		if (to == l)
			g_array_index(l->entries, struct zfs_zap_entry, kept++) = e;
		else
			g_array_append_val(right->entries, e);
		to->chunks += e.chunks;
	}
	g_array_set_size(l->entries, kept);
	o->nblocks = z->next_blkid;
	zfs_objset_dirty_block(os, o->number, l->blkid);
	zfs_objset_dirty_block(os, o->number, right->blkid);
}

static void fat_add(struct zfs_objset *os, struct zfs_object *o, struct zfs_zap_entry e)
{
	struct zfs_zap_leaf *l = leaf_for(o->zap, e.hash);

	while (l->chunks + e.chunks > ZFS_ZAP_LEAF_CHUNKS && l->prefix_len < 32) {
		leaf_split(os, o, l);
		l = leaf_for(o->zap, e.hash);
	}
	g_array_append_val(l->entries, e);
	l->chunks += e.chunks;
	zfs_objset_dirty_block(os, o->number, l->blkid);
	zfs_objset_dirty_block(os, o->number, 0);
}

/* mzap_upgrade: 16 KiB blocks, a header and one leaf, every entry re-added. */
static void upgrade(struct zfs_objset *os, struct zfs_object *o)
{
	struct zfs_zap *z = o->zap;
	g_autoptr(GArray) micro = z->micro;

	z->micro = NULL;
	z->fat = true;
	z->leaves = g_ptr_array_new_with_free_func(leaf_free);
	leaf_new(z, 0, 0, 1);
	z->next_blkid = 2;
	o->datablksz = ZFS_FZAP_BLOCK_SIZE;
	o->nblocks = 2;
	zfs_objset_dirty(os, o->number)->dnode = true;
	zfs_objset_dirty_block(os, o->number, 0);
	zfs_objset_dirty_block(os, o->number, 1);
	for (guint i = 0; i < micro->len; i++)
		fat_add(os, o, g_array_index(micro, struct zfs_zap_entry, i));
}

static uint32_t micro_capacity(const struct zfs_object *o)
{
	return o->datablksz / ZFS_MZAP_ENT_LEN - 1;
}

void zfs_zap_apply_add(struct zfs_objset *os, struct zfs_object *o, uint32_t hash, uint32_t name_len)
{
	struct zfs_zap *z = o->zap;
	struct zfs_zap_entry e = { hash, entry_chunks(name_len) };

	z->entries++;
	if (!z->fat && name_len >= ZFS_MZAP_NAME_LEN)
		upgrade(os, o);
	if (!z->fat && z->micro->len == micro_capacity(o)) {
		if (o->datablksz + ZFS_MINBLOCKSIZE > ZFS_MZAP_MAX_SIZE) {
			upgrade(os, o);
		} else {
			o->datablksz += ZFS_MINBLOCKSIZE;
			zfs_objset_dirty(os, o->number)->dnode = true;
		}
	}
	if (z->fat) {
		fat_add(os, o, e);
		return;
	}
	g_array_append_val(z->micro, e);
	zfs_objset_dirty_block(os, o->number, 0);
}

static bool remove_entry(GArray *entries, struct zfs_zap_entry e)
{
	for (guint i = 0; i < entries->len; i++) {
		struct zfs_zap_entry *x = &g_array_index(entries, struct zfs_zap_entry, i);

		if (x->hash == e.hash && x->chunks == e.chunks) {
			g_array_remove_index_fast(entries, i);
			return true;
		}
	}
	return false;
}

bool zfs_zap_apply_remove(struct zfs_objset *os, struct zfs_object *o, uint32_t hash, uint32_t name_len)
{
	struct zfs_zap *z = o->zap;
	struct zfs_zap_entry e = { hash, entry_chunks(name_len) };

	if (!z->fat) {
		if (!remove_entry(z->micro, e))
			return false;
		zfs_objset_dirty_block(os, o->number, 0);
	} else {
		struct zfs_zap_leaf *l = leaf_for(z, hash);

		if (!remove_entry(l->entries, e))
			return false;
		l->chunks -= e.chunks;
		zfs_objset_dirty_block(os, o->number, l->blkid);
		zfs_objset_dirty_block(os, o->number, 0);
	}
	z->entries--;
	return true;
}

bool zfs_zap_check(const struct zfs_object *o, GString *why)
{
	const struct zfs_zap *z = o->zap;
	uint64_t names = 0;

	if (!z->fat) {
		if (z->micro->len > micro_capacity(o) || z->micro->len != z->entries) {
			g_string_printf(why, "micro-ZAP holds %u entries in %u bytes (count %" G_GUINT64_FORMAT ")",
					z->micro->len, o->datablksz, z->entries);
			return false;
		}
		return true;
	}
	for (guint i = 0; i < z->leaves->len; i++) {
		const struct zfs_zap_leaf *l = z->leaves->pdata[i];
		uint32_t chunks = 0;

		names += l->entries->len;

		for (guint k = 0; k < l->entries->len; k++) {
			struct zfs_zap_entry e = g_array_index(l->entries, struct zfs_zap_entry, k);

			chunks += e.chunks;
			if (!leaf_holds(l, e.hash)) {
				g_string_printf(why, "leaf %" G_GUINT64_FORMAT " holds hash %08x outside its prefix",
						l->blkid, e.hash);
				return false;
			}
		}
		if (chunks != l->chunks) {
			g_string_printf(why, "leaf %" G_GUINT64_FORMAT " counts %u chunks, holds %u", l->blkid,
					l->chunks, chunks);
			return false;
		}
	}
	if (names != z->entries) {
		g_string_printf(why, "fat ZAP counts %" G_GUINT64_FORMAT " entries, its leaves hold %" G_GUINT64_FORMAT,
				z->entries, names);
		return false;
	}
	return true;
}
