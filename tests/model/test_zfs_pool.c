/*
 * tests/model/test_zfs_pool.c - the ZFS-like pool (model/zfs_pool.h): what a
 * txg writes, the birth-time rules of snapshots and their destroy, ZAP
 * growth, and zfs_pool_check() failing on pools broken on purpose.
 *
 * zfs_pool_check() runs after every step (pool_ok). Sizes in comments are
 * one copy, 4 KiB allocation units (ashift 12).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "zfs_internal.h"

enum { ROOT_DIR = 256 };

/* The dataset part of one txg that changes one dnode: its dnode block, the
 * meta-dnode's five levels of indirect blocks, the objset block. */
#define ONE_DNODE_PATH_BLOCKS 7u
#define ONE_DNODE_PATH_BYTES (ZFS_DNODE_BLOCK_SIZE + 5u * ZFS_INDIRECT_BLOCK_SIZE + ZFS_OBJSET_PHYS_SIZE)

static void pool_ok(const struct zfs_pool *pool, const char *when)
{
	g_autoptr(GError) error = NULL;

	if (!zfs_pool_check(pool, &error)) {
		zfs_pool_dump(pool, stderr);
		fail_msg("%s: %s", when, error->message);
	}
}

static struct zfs_pool *new_pool(void)
{
	struct zfs_pool_config config;

	zfs_pool_config_init(&config);
	return zfs_pool_new(&config);
}

/* A filesystem with its root directory, synced. */
static uint64_t new_filesystem(struct zfs_pool *pool)
{
	uint64_t fs;

	assert_int_equal(zfs_filesystem_create(pool, "tank/fs", &fs), 0);
	assert_int_equal(zfs_object_claim(pool, fs, ROOT_DIR, ZFS_OBJECT_DIRECTORY), 0);
	zfs_pool_sync(pool);
	pool_ok(pool, "new filesystem");
	return fs;
}

static struct zfs_pool_usage usage(const struct zfs_pool *pool)
{
	struct zfs_pool_usage u;

	zfs_pool_usage(pool, &u);
	return u;
}

static struct zfs_dataset_usage dataset_usage(const struct zfs_pool *pool, uint64_t id)
{
	g_autoptr(GArray) all = zfs_pool_datasets(pool);

	for (guint i = 0; i < all->len; i++)
		if (g_array_index(all, struct zfs_dataset_usage, i).id == id)
			return g_array_index(all, struct zfs_dataset_usage, i);
	fail_msg("no dataset %" G_GUINT64_FORMAT, id);
	return (struct zfs_dataset_usage){ 0 };
}

static struct zfs_dataset *ds_of(struct zfs_pool *pool, uint64_t id)
{
	return pool->datasets->pdata[id - 1];
}

static void test_every_block_of_a_new_filesystem_is_born_in_the_first_txg(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool);
	GHashTableIter it;
	gpointer value;

	(void)state;
	(void)fs;
	assert_int_equal(zfs_pool_synced_txg(pool), 1);
	g_hash_table_iter_init(&it, pool->blocks);
	while (g_hash_table_iter_next(&it, NULL, &value))
		assert_int_equal(((struct zfs_block *)value)->birth, 1);
	assert_int_equal(usage(pool).data_used, 0);
}

static void test_atime_update_rewrites_the_dnode_block_and_its_indirect_path(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool);
	struct zfs_pool_usage before = usage(pool), after;

	(void)state;
	assert_int_equal(zfs_object_touch(pool, fs, ROOT_DIR), 0);
	zfs_pool_sync(pool);
	pool_ok(pool, "after the touch");
	after = usage(pool);
	/* 7 dataset blocks; in the MOS the dataset's dnode block and the MOS
	 * objset block (the MOS meta-dnode has one level: no indirect). */
	assert_int_equal(after.blocks_written - before.blocks_written, ONE_DNODE_PATH_BLOCKS + 2);
	/* No snapshot: every block replaced was born after it, freed at once. */
	assert_int_equal(after.metadata_used, before.metadata_used);
	assert_int_equal(after.deadlist_bytes, 0);
}

static void test_after_a_snapshot_an_atime_update_keeps_the_old_path_on_the_deadlist(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool), snap;
	struct zfs_pool_usage before, after;

	(void)state;
	assert_int_equal(zfs_snapshot_create(pool, fs, "tank/fs@1", &snap), 0);
	pool_ok(pool, "after the snapshot");
	before = usage(pool);
	assert_int_equal(zfs_object_touch(pool, fs, ROOT_DIR), 0);
	zfs_pool_sync(pool);
	pool_ok(pool, "after the touch");
	after = usage(pool);
	assert_int_equal(ds_of(pool, fs)->deadlist->len, ONE_DNODE_PATH_BLOCKS);
	assert_int_equal(after.deadlist_bytes, ONE_DNODE_PATH_BYTES);
	/* The old path stays; in the MOS the deadlist's bpobj gets its first
	 * 128 KiB block. */
	assert_int_equal(after.metadata_used - after.mos_used, before.metadata_used - before.mos_used + ONE_DNODE_PATH_BYTES);
	assert_int_equal(after.mos_used, before.mos_used + ZFS_BPOBJ_BLOCK_SIZE);
	/* What destroying the snapshot would reclaim is exactly that path. */
	assert_int_equal(dataset_usage(pool, snap).exclusive, ONE_DNODE_PATH_BYTES);
}

static void test_a_second_update_in_a_later_txg_frees_the_first_update_blocks(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool), snap;

	(void)state;
	assert_int_equal(zfs_snapshot_create(pool, fs, "tank/fs@1", &snap), 0);
	zfs_object_touch(pool, fs, ROOT_DIR);
	zfs_pool_sync(pool);
	zfs_object_touch(pool, fs, ROOT_DIR);
	zfs_pool_sync(pool);
	pool_ok(pool, "after two touches");
	/* The second txg's victims were born after the snapshot: freed. */
	assert_int_equal(ds_of(pool, fs)->deadlist->len, ONE_DNODE_PATH_BLOCKS);
}

static void test_destroying_the_only_snapshot_reclaims_its_deadlist(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool), snap;
	uint64_t dataset_before;

	(void)state;
	dataset_before = usage(pool).metadata_used - usage(pool).mos_used;
	assert_int_equal(zfs_snapshot_create(pool, fs, "tank/fs@1", &snap), 0);
	zfs_object_touch(pool, fs, ROOT_DIR);
	zfs_pool_sync(pool);
	assert_int_equal(zfs_dataset_destroy(pool, snap), 0);
	pool_ok(pool, "after the destroy");
	assert_int_equal(usage(pool).deadlist_bytes, 0);
	assert_int_equal(usage(pool).metadata_used - usage(pool).mos_used, dataset_before);
	assert_int_equal(ds_of(pool, fs)->prev_snap_txg, 0);
}

/* @1 holds file A's first version, @2 its second, the filesystem a third:
 * destroying @2 frees only the second version (born after @1, dead before
 * the filesystem). */
static void test_destroying_a_middle_snapshot_frees_only_what_it_alone_held(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool), s1, s2, reclaim;
	struct zfs_pool_usage before;

	(void)state;
	assert_int_equal(zfs_object_claim(pool, fs, 257, ZFS_OBJECT_FILE), 0);
	assert_int_equal(zfs_object_write(pool, fs, 257, 0, 1 << 20), 0);
	assert_int_equal(zfs_snapshot_create(pool, fs, "tank/fs@1", &s1), 0);
	assert_int_equal(zfs_object_write(pool, fs, 257, 0, 1 << 20), 0);
	assert_int_equal(zfs_snapshot_create(pool, fs, "tank/fs@2", &s2), 0);
	assert_int_equal(zfs_object_write(pool, fs, 257, 0, 1 << 20), 0);
	zfs_pool_sync(pool);
	pool_ok(pool, "three versions");
	assert_int_equal(usage(pool).data_used, 3u << 20);
	reclaim = dataset_usage(pool, s2).exclusive;
	before = usage(pool);
	assert_int_equal(zfs_dataset_destroy(pool, s2), 0);
	pool_ok(pool, "after destroying @2");
	assert_int_equal(usage(pool).data_used, 2u << 20);
	/* `zfs destroy -nv` said what the destroy freed in the dataset. */
	assert_int_equal((before.metadata_used - before.mos_used) + before.data_used -
			 (usage(pool).metadata_used - usage(pool).mos_used) - usage(pool).data_used, reclaim);
	/* @1's version is now on the filesystem's deadlist, held by @1. */
	assert_int_equal(ds_of(pool, fs)->prev, ds_of(pool, s1));
	assert_true(dataset_usage(pool, s1).exclusive >= (1u << 20));
}

static void test_a_snapshot_is_read_only(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool), snap;

	(void)state;
	assert_int_equal(zfs_snapshot_create(pool, fs, "tank/fs@1", &snap), 0);
	assert_int_equal(zfs_object_touch(pool, snap, ROOT_DIR), -EROFS);
	assert_int_equal(zfs_object_claim(pool, snap, 300, ZFS_OBJECT_FILE), -EROFS);
	assert_int_equal(zfs_zap_add(pool, snap, ROOT_DIR, 1, 3), -EROFS);
	assert_int_equal(zfs_snapshot_create(pool, snap, "tank/fs@1@2", &fs), -EINVAL);
}

static void test_a_clone_writes_its_own_blocks_and_pins_its_origin(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool), snap, clone;

	(void)state;
	assert_int_equal(zfs_snapshot_create(pool, fs, "tank/fs@1", &snap), 0);
	assert_int_equal(zfs_clone_create(pool, snap, "tank/clone", &clone), 0);
	assert_int_equal(zfs_object_touch(pool, clone, ROOT_DIR), 0);
	zfs_pool_sync(pool);
	pool_ok(pool, "clone touched");
	/* The clone's replaced path was born before its origin: deadlist. */
	assert_int_equal(ds_of(pool, clone)->deadlist->len, ONE_DNODE_PATH_BLOCKS);
	assert_int_equal(zfs_dataset_destroy(pool, snap), -EBUSY);
	assert_int_equal(zfs_dataset_destroy(pool, clone), 0);
	pool_ok(pool, "clone destroyed");
	assert_int_equal(zfs_dataset_destroy(pool, snap), 0);
	pool_ok(pool, "origin destroyed");
}

static void test_micro_zap_grows_by_512_bytes_then_becomes_fat_at_128k(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool);
	const struct zfs_object *dir;

	(void)state;
	for (uint32_t i = 0; i < 7; i++)
		zfs_zap_add(pool, fs, ROOT_DIR, g_int_hash(&i), 10);
	dir = zfs_objset_object(ds_of(pool, fs)->os, ROOT_DIR);
	assert_int_equal(dir->datablksz, 512);           /* 512 / 64 - 1 = 7 entries */
	zfs_zap_add(pool, fs, ROOT_DIR, 7, 10);
	dir = zfs_objset_object(ds_of(pool, fs)->os, ROOT_DIR);
	assert_int_equal(dir->datablksz, 1024);
	for (uint32_t i = 8; i < ZFS_MZAP_MAX_SIZE / ZFS_MZAP_ENT_LEN - 1; i++)
		zfs_zap_add(pool, fs, ROOT_DIR, i * 2654435761u, 10);
	dir = zfs_objset_object(ds_of(pool, fs)->os, ROOT_DIR);
	assert_false(dir->zap->fat);
	assert_int_equal(dir->datablksz, ZFS_MZAP_MAX_SIZE);
	zfs_zap_add(pool, fs, ROOT_DIR, 99, 10);          /* entry 2048 */
	dir = zfs_objset_object(ds_of(pool, fs)->os, ROOT_DIR);
	assert_true(dir->zap->fat);
	assert_int_equal(dir->datablksz, ZFS_FZAP_BLOCK_SIZE);
	/* 2048 entries of 4 chunks (10-byte names) need 13+ leaves of 638. */
	assert_true(dir->zap->leaves->len >= 2048 * 4 / ZFS_ZAP_LEAF_CHUNKS);
	zfs_pool_sync(pool);
	pool_ok(pool, "fat zap");
	assert_int_equal(dir->nlevels, 2);               /* header + leaves > 1 pointer */
}

static void test_a_long_name_makes_the_zap_fat_at_once(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool);

	(void)state;
	zfs_zap_add(pool, fs, ROOT_DIR, 1, ZFS_MZAP_NAME_LEN - 1);
	assert_false(zfs_objset_object(ds_of(pool, fs)->os, ROOT_DIR)->zap->fat);
	zfs_zap_add(pool, fs, ROOT_DIR, 2, ZFS_MZAP_NAME_LEN);
	assert_true(zfs_objset_object(ds_of(pool, fs)->os, ROOT_DIR)->zap->fat);
	assert_int_equal(zfs_zap_remove(pool, fs, ROOT_DIR, 1, ZFS_MZAP_NAME_LEN - 1), 0);
	assert_int_equal(zfs_zap_remove(pool, fs, ROOT_DIR, 1, ZFS_MZAP_NAME_LEN - 1), -ENOENT);
	zfs_pool_sync(pool);
	pool_ok(pool, "long name");
}

static void test_file_blocks_grow_to_the_recordsize_then_need_an_indirect_block(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool);
	const struct zfs_object *f;

	(void)state;
	zfs_object_claim(pool, fs, 257, ZFS_OBJECT_FILE);
	zfs_object_write(pool, fs, 257, 0, 1000);
	zfs_pool_sync(pool);
	f = zfs_objset_object(ds_of(pool, fs)->os, 257);
	assert_int_equal(f->datablksz, 1024);
	assert_int_equal(f->nlevels, 1);
	assert_int_equal(usage(pool).data_used, 4096);   /* one 4 KiB allocation unit */
	zfs_object_write(pool, fs, 257, 1000, 199000);   /* 200000 bytes */
	zfs_pool_sync(pool);
	f = zfs_objset_object(ds_of(pool, fs)->os, 257);
	assert_int_equal(f->datablksz, ZFS_RECORDSIZE);
	assert_int_equal(f->nblocks, 2);
	assert_int_equal(f->nlevels, 2);                 /* one pointer in a ZPL dnode */
	assert_int_equal(usage(pool).data_used, 2 * ZFS_RECORDSIZE);
	zfs_object_truncate(pool, fs, 257, 100);
	zfs_pool_sync(pool);
	pool_ok(pool, "truncated");
	assert_int_equal(usage(pool).data_used, ZFS_RECORDSIZE);
	assert_int_equal(zfs_object_free(pool, fs, 257), 0);
	zfs_pool_sync(pool);
	pool_ok(pool, "freed");
	assert_int_equal(usage(pool).data_used, 0);
}

static void test_a_txg_syncs_after_five_seconds_of_clock(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool);
	uint64_t txg = zfs_pool_synced_txg(pool);

	(void)state;
	zfs_object_touch(pool, fs, ROOT_DIR);
	zfs_pool_set_clock(pool, 4ll * 1000000000ll);
	assert_int_equal(zfs_pool_synced_txg(pool), txg);
	zfs_pool_set_clock(pool, 5ll * 1000000000ll);
	assert_int_equal(zfs_pool_synced_txg(pool), txg + 1);
	zfs_pool_set_clock(pool, 60ll * 1000000000ll);   /* nothing dirty: no txg */
	assert_int_equal(zfs_pool_synced_txg(pool), txg + 1);
}

/* ---- the checker fails on pools broken on purpose ---- */

static struct zfs_pool *pool_with_deadlist(uint64_t *fs)
{
	struct zfs_pool *pool = new_pool();
	uint64_t snap;

	*fs = new_filesystem(pool);
	zfs_snapshot_create(pool, *fs, "tank/fs@1", &snap);
	zfs_object_touch(pool, *fs, ROOT_DIR);
	zfs_pool_sync(pool);
	pool_ok(pool, "before breaking it");
	return pool;
}

static void assert_check_fails(const struct zfs_pool *pool, const char *expect)
{
	g_autoptr(GError) error = NULL;

	assert_false(zfs_pool_check(pool, &error));
	if (!strstr(error->message, expect))
		fail_msg("checker said \"%s\", expected \"%s\"", error->message, expect);
}

static void test_check_fails_on_a_block_born_after_its_txg(void **state)
{
	uint64_t fs;
	g_autoptr(ZfsPool) pool = pool_with_deadlist(&fs);
	struct zfs_object *dir = zfs_objset_object(ds_of(pool, fs)->os, ROOT_DIR);

	(void)state;
	((struct zfs_block *)dir->levels[0]->pdata[0])->birth = pool->synced_txg + 1;
	assert_check_fails(pool, "after its objset's txg");
}

static void test_check_fails_on_a_child_born_after_its_parent(void **state)
{
	uint64_t fs;
	g_autoptr(ZfsPool) pool = pool_with_deadlist(&fs);
	struct zfs_object *dir = zfs_objset_object(ds_of(pool, fs)->os, ROOT_DIR);

	(void)state;
	/* The directory's block claims a txg later than its dnode block's. */
	((struct zfs_block *)dir->levels[0]->pdata[0])->birth = pool->synced_txg;
	((struct zfs_block *)ds_of(pool, fs)->os->meta_dnode->levels[0]->pdata[ROOT_DIR / 32])->birth =
		pool->synced_txg - 1;
	assert_check_fails(pool, "after its parent");
}

static void test_check_fails_when_a_deadlist_loses_a_block(void **state)
{
	uint64_t fs;
	g_autoptr(ZfsPool) pool = pool_with_deadlist(&fs);

	(void)state;
	g_ptr_array_remove_index(ds_of(pool, fs)->deadlist, 0);
	assert_check_fails(pool, "on no deadlist");
}

static void test_check_fails_when_a_block_is_on_a_deadlist_twice(void **state)
{
	uint64_t fs;
	g_autoptr(ZfsPool) pool = pool_with_deadlist(&fs);
	GPtrArray *dl = ds_of(pool, fs)->deadlist;

	(void)state;
	g_ptr_array_add(dl, dl->pdata[0]);
	assert_check_fails(pool, "twice");
}

static void test_check_fails_on_a_leaked_block(void **state)
{
	uint64_t fs;
	g_autoptr(ZfsPool) pool = pool_with_deadlist(&fs);

	(void)state;
	zfs_block_alloc(pool, pool->synced_txg, 4096, 0, ZFS_BLOCK_METADATA, 0);
	assert_check_fails(pool, "leaked");
}

static void test_check_fails_when_space_is_miscounted(void **state)
{
	uint64_t fs;
	g_autoptr(ZfsPool) pool = pool_with_deadlist(&fs);

	(void)state;
	pool->used[ZFS_BLOCK_METADATA] += 4096;
	assert_check_fails(pool, "corrupt space");
}

/* Z4 by label: a block charged to one label and counted under another. */
static void test_check_fails_when_a_label_is_miscounted(void **state)
{
	uint64_t fs;
	g_autoptr(ZfsPool) pool = pool_with_deadlist(&fs);

	(void)state;
	pool->cause_used[0] -= 4096;
	pool->cause_used[1] += 4096;
	assert_check_fails(pool, "label 0 counts");
}

static void test_check_fails_when_a_freed_block_is_still_reached(void **state)
{
	uint64_t fs;
	g_autoptr(ZfsPool) pool = pool_with_deadlist(&fs);
	struct zfs_block *b = ds_of(pool, fs)->deadlist->pdata[0];

	(void)state;
	/* Forget the block without freeing it: the snapshot still reaches it. */
	pool->used[b->kind] -= b->asize;
	pool->raw[b->kind] -= b->asize * b->copies;
	pool->cause_used[b->cause] -= b->kind != ZFS_BLOCK_DATA ? b->asize : 0;
	g_hash_table_steal(pool->blocks, &b->id);
	assert_check_fails(pool, "reached but not allocated");
	g_hash_table_insert(pool->blocks, &b->id, b);
	pool->used[b->kind] += b->asize;
	pool->raw[b->kind] += b->asize * b->copies;
	pool->cause_used[b->cause] += b->kind != ZFS_BLOCK_DATA ? b->asize : 0;
}

/* ---- attribution: what each label's changes hold ---- */

enum { LABEL_WRITE = 1, LABEL_ATIME = 2, LABEL_SNAPSHOT = 3 };

static uint64_t sum_labels(const struct zfs_pool_usage *u)
{
	uint64_t sum = 0;

	for (unsigned k = 0; k < ZFS_POOL_CAUSES; k++)
		sum += u->metadata_by_cause[k];
	return sum;
}

static void test_an_atime_txg_after_a_snapshot_charges_its_dnode_blocks_to_atime(void **state)
{
	struct zfs_pool_usage before, after;
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs, snap;

	(void)state;
	zfs_pool_set_cause(pool, LABEL_WRITE);
	fs = new_filesystem(pool);
	for (uint64_t o = ROOT_DIR + 1; o < ROOT_DIR + 200; o++)
		assert_int_equal(zfs_object_claim(pool, fs, o, ZFS_OBJECT_FILE), 0);
	zfs_pool_sync(pool);
	zfs_pool_set_cause(pool, LABEL_SNAPSHOT);
	assert_int_equal(zfs_snapshot_create(pool, fs, "tank/fs@1", &snap), 0);
	zfs_pool_usage(pool, &before);
	assert_true(before.metadata_by_cause[LABEL_WRITE] > 0);
	assert_true(before.metadata_by_cause[LABEL_SNAPSHOT] > 0);   /* the snapshot's txg: MOS blocks */
	assert_int_equal(before.metadata_by_cause[LABEL_ATIME], 0);
	zfs_pool_set_cause(pool, LABEL_ATIME);
	for (uint64_t o = ROOT_DIR + 1; o < ROOT_DIR + 200; o++)
		assert_int_equal(zfs_object_touch(pool, fs, o), 0);
	zfs_pool_sync(pool);
	zfs_pool_usage(pool, &after);
	pool_ok(pool, "after the atime txg");
	/* 199 dnodes in 7 dnode blocks, rewritten with the meta-dnode's path
	 * and the objset block; the snapshot keeps the old ones, still write's. */
	assert_true(after.metadata_by_cause[LABEL_ATIME] >= 7 * ZFS_DNODE_BLOCK_SIZE);
	assert_int_equal(after.metadata_by_cause[LABEL_WRITE], before.metadata_by_cause[LABEL_WRITE]);
	assert_true(after.metadata_cowed > before.metadata_cowed);
	assert_int_equal(sum_labels(&after), after.metadata_used);
}

static void test_a_txg_of_mixed_changes_charges_each_object_its_own_label(void **state)
{
	struct zfs_pool_usage u;
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs;

	(void)state;
	zfs_pool_set_cause(pool, LABEL_WRITE);
	fs = new_filesystem(pool);
	zfs_pool_sync(pool);
	/* Four atime touches and one directory change (under a label of its
	 * own): the directory's micro-ZAP block is that label's, and only it;
	 * the dnode blocks, the meta-dnode and the objset go to atime. */
	zfs_pool_set_cause(pool, LABEL_ATIME);
	for (uint64_t n = 1; n <= 4; n++)
		assert_int_equal(zfs_object_touch(pool, fs, n), 0);
	zfs_pool_set_cause(pool, LABEL_SNAPSHOT);
	assert_int_equal(zfs_zap_add(pool, fs, ROOT_DIR, 0x1234u, 8), 0);
	zfs_pool_sync(pool);
	zfs_pool_usage(pool, &u);
	pool_ok(pool, "after a mixed txg");
	assert_true(u.metadata_by_cause[LABEL_ATIME] >= ZFS_DNODE_BLOCK_SIZE);
	assert_true(u.metadata_by_cause[LABEL_SNAPSHOT] > 0);
	assert_true(u.metadata_by_cause[LABEL_SNAPSHOT] < ZFS_DNODE_BLOCK_SIZE); /* one small block */
	assert_int_equal(sum_labels(&u), u.metadata_used);
}

/* ---- randomized: filesystems, snapshots, clones, destroys ---- */

static void random_step(struct zfs_pool *pool, GRand *rng, GArray *filesystems, GArray *snapshots)
{
	uint64_t fs = g_array_index(filesystems, uint64_t, g_rand_int_range(rng, 0, (gint32)filesystems->len));
	uint64_t object = 256 + (uint64_t)g_rand_int_range(rng, 1, 200), id;
	int op = g_rand_int_range(rng, 0, 100);

	zfs_pool_set_cause(pool, (unsigned)g_rand_int_range(rng, 0, ZFS_POOL_CAUSES));
	if (op < 30) {
		zfs_object_claim(pool, fs, object, ZFS_OBJECT_FILE);
		zfs_object_write(pool, fs, object, (uint64_t)g_rand_int_range(rng, 0, 1 << 20),
				 (uint64_t)g_rand_int_range(rng, 1, 300000));
	} else if (op < 45) {
		zfs_object_touch(pool, fs, object);
	} else if (op < 55) {
		zfs_object_truncate(pool, fs, object, (uint64_t)g_rand_int_range(rng, 0, 400000));
	} else if (op < 62) {
		zfs_object_free(pool, fs, object);
	} else if (op < 80) {
		uint32_t h = g_rand_int(rng) & 0xffff;

		if (zfs_zap_remove(pool, fs, ROOT_DIR, h, 12) != 0)
			zfs_zap_add(pool, fs, ROOT_DIR, h, 12);
	} else if (op < 88) {
		zfs_pool_set_clock(pool, pool->clock_ns + g_rand_int_range(rng, 1, 8) * 1000000000ll);
	} else if (op < 93) {
		if (zfs_snapshot_create(pool, fs, "s", &id) == 0)
			g_array_append_val(snapshots, id);
	} else if (op < 95 && snapshots->len > 0) {
		id = g_array_index(snapshots, uint64_t, g_rand_int_range(rng, 0, (gint32)snapshots->len));
		if (filesystems->len < 4 && zfs_clone_create(pool, id, "c", &id) == 0) {
			zfs_object_claim(pool, id, ROOT_DIR, ZFS_OBJECT_DIRECTORY);
			g_array_append_val(filesystems, id);
		}
	} else if (snapshots->len > 0) {
		guint i = (guint)g_rand_int_range(rng, 0, (gint32)snapshots->len);

		if (zfs_dataset_destroy(pool, g_array_index(snapshots, uint64_t, i)) == 0)
			g_array_remove_index(snapshots, i);
	}
}

/* ---- ZO1, ZO2, ZZ1, Z5 broken on purpose (each test breaks one, and the
 * pool passes before and after) ---- */

enum { A_FILE = 300 };

/* A filesystem with a file of three recordsize blocks, a snapshot of it and
 * the root directory touched since: a deadlist, shared object structs. */
static struct zfs_pool *pool_with_snapshot(uint64_t *fs, uint64_t *snap)
{
	struct zfs_pool *pool = new_pool();

	*fs = new_filesystem(pool);
	assert_int_equal(zfs_object_claim(pool, *fs, A_FILE, ZFS_OBJECT_FILE), 0);
	assert_int_equal(zfs_object_write(pool, *fs, A_FILE, 0, 3 * (uint64_t)ZFS_RECORDSIZE), 0);
	zfs_pool_sync(pool);
	assert_int_equal(zfs_snapshot_create(pool, *fs, "tank/fs@1", snap), 0);
	assert_int_equal(zfs_object_touch(pool, *fs, ROOT_DIR), 0);
	zfs_pool_sync(pool);
	pool_ok(pool, "before breaking it");
	return pool;
}

static void test_check_fails_when_a_level_holds_a_blkid_past_the_object_end(void **state)
{
	uint64_t fs, snap;
	g_autoptr(ZfsPool) pool = pool_with_snapshot(&fs, &snap);
	struct zfs_object *file = zfs_objset_object_for_write(ds_of(pool, fs)->os, A_FILE);

	(void)state;
	pool_ok(pool, "the file's struct copied"); /* a copy is no change */
	assert_int_equal(file->levels[0]->len, 3);
	file->nblocks = 2;         /* as a truncate that forgot its free_from */
	assert_check_fails(pool, "corrupt objset: 1, ZO1 object 300 level 0 holds 3 blkids");
	zfs_objset_dirty(ds_of(pool, fs)->os, A_FILE)->free_from = 2;
	pool_ok(pool, "the truncate pending"); /* ZO1's exception */
}

static void test_check_fails_when_a_shared_object_is_changed(void **state)
{
	uint64_t fs, snap;
	g_autoptr(ZfsPool) pool = pool_with_snapshot(&fs, &snap);
	struct zfs_objset *os = ds_of(pool, fs)->os;

	(void)state;
	assert_int_equal(zfs_objset_object(os, A_FILE)->shares, 2);
	/* A change recorded without zfs_objset_object_for_write(): the
	 * snapshot's struct would be written at the next txg. */
	zfs_objset_dirty_block(os, A_FILE, 0);
	assert_check_fails(pool, "corrupt objset: 1, ZO2 object 300 changed in the open txg while 2 objsets share it");
	g_hash_table_remove(os->dirty, GSIZE_TO_POINTER(A_FILE));
	pool_ok(pool, "the change forgotten");
}

static void test_check_fails_when_shares_miscounts_the_objsets_holding_an_object(void **state)
{
	uint64_t fs, snap;
	g_autoptr(ZfsPool) pool = pool_with_snapshot(&fs, &snap);
	struct zfs_object *file = zfs_objset_object(ds_of(pool, snap)->os, A_FILE);

	(void)state;
	file->shares--;            /* the filesystem would think the struct its own */
	assert_check_fails(pool, "corrupt object: 300, ZO2 shares 1, held by 2 objsets");
	file->shares++;
	pool_ok(pool, "shares given back");
}

static struct zfs_zap *root_zap(struct zfs_pool *pool, uint64_t fs)
{
	return zfs_objset_object(ds_of(pool, fs)->os, ROOT_DIR)->zap;
}

static void test_check_fails_when_a_micro_zap_holds_more_than_its_block(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool);
	struct zfs_zap *zap = root_zap(pool, fs);
	struct zfs_zap_entry e = { 7, 3 };

	(void)state;
	for (uint32_t i = 0; i < ZFS_MINBLOCKSIZE / ZFS_MZAP_ENT_LEN - 1; i++)
		assert_int_equal(zfs_zap_add(pool, fs, ROOT_DIR, i, 8), 0);
	zfs_pool_sync(pool);
	pool_ok(pool, "a full 512-byte micro-ZAP");
	g_array_append_val(zap->micro, e); /* an eighth name without growing the block */
	zap->entries++;
	assert_check_fails(pool, "corrupt zap: 256, ZZ1 micro-ZAP holds 8 entries in 512 bytes");
}

static void test_check_fails_when_a_micro_zap_miscounts_its_entries(void **state)
{
	g_autoptr(ZfsPool) pool = new_pool();
	uint64_t fs = new_filesystem(pool);

	(void)state;
	assert_int_equal(zfs_zap_add(pool, fs, ROOT_DIR, 1, 8), 0);
	root_zap(pool, fs)->entries++;
	assert_check_fails(pool, "corrupt zap: 256, ZZ1 micro-ZAP holds 1 entries in 512 bytes (count 2)");
	root_zap(pool, fs)->entries--;
	pool_ok(pool, "the count given back");
}

/* A fat ZAP of one leaf (prefix length 0) holding hashes 0x00000001 and
 * 0x80000001. */
static struct zfs_pool *pool_with_fat_zap(uint64_t *fs)
{
	struct zfs_pool *pool = new_pool();

	*fs = new_filesystem(pool);
	assert_int_equal(zfs_zap_add(pool, *fs, ROOT_DIR, 0x00000001u, ZFS_MZAP_NAME_LEN), 0);
	assert_int_equal(zfs_zap_add(pool, *fs, ROOT_DIR, 0x80000001u, 8), 0);
	zfs_pool_sync(pool);
	assert_true(root_zap(pool, *fs)->fat);
	assert_int_equal(root_zap(pool, *fs)->leaves->len, 1);
	pool_ok(pool, "a fat ZAP");
	return pool;
}

/* A break of pool_with_fat_zap()'s ZAP that undoes itself when done again. */
typedef void (*zap_flip_fn)(struct zfs_zap *zap);

/* The check fails with `expect` once `flip` broke the ZAP, and passes once
 * `flip` undid it. */
static void assert_zap_flip_breaks(zap_flip_fn flip, const char *expect)
{
	uint64_t fs;
	g_autoptr(ZfsPool) pool = pool_with_fat_zap(&fs);

	flip(root_zap(pool, fs));
	assert_check_fails(pool, expect);
	flip(root_zap(pool, fs));
	pool_ok(pool, "the break undone");
}

static void flip_leaf_chunks(struct zfs_zap *zap)
{
	((struct zfs_zap_leaf *)zap->leaves->pdata[0])->chunks ^= 1;
}

/* Prefix length 1: the leaf of hashes 0..., which 0x80000001 is not. */
static void flip_leaf_prefix(struct zfs_zap *zap)
{
	((struct zfs_zap_leaf *)zap->leaves->pdata[0])->prefix_len ^= 1;
}

static void flip_entries(struct zfs_zap *zap)
{
	zap->entries ^= 1;
}

static void test_check_fails_when_a_fat_zap_leaf_miscounts_its_chunks(void **state)
{
	(void)state;
	assert_zap_flip_breaks(flip_leaf_chunks, "corrupt zap: 256, ZZ1 leaf 1 counts");
}

static void test_check_fails_when_a_name_is_outside_its_leafs_prefix(void **state)
{
	(void)state;
	assert_zap_flip_breaks(flip_leaf_prefix, "corrupt zap: 256, ZZ1 leaf 1 holds hash 80000001 outside its prefix");
}

static void test_check_fails_when_a_fat_zap_miscounts_its_entries(void **state)
{
	(void)state;
	assert_zap_flip_breaks(flip_entries, "corrupt zap: 256, ZZ1 fat ZAP counts 3 entries, its leaves hold 2");
}

static void test_check_fails_when_a_destroy_estimate_is_not_what_only_the_snapshot_holds(void **state)
{
	uint64_t fs, snap;
	g_autoptr(ZfsPool) pool = pool_with_snapshot(&fs, &snap);
	struct zfs_dataset *s = ds_of(pool, snap);

	(void)state;
	/* The filesystem's deadlist (the old path above the root directory) is
	 * the snapshot's alone; with its previous snapshot's txg moved to its
	 * own, the estimate (born after prev_snap_txg) counts none of it. */
	assert_int_equal(s->prev_snap_txg, 0);
	s->prev_snap_txg = s->creation_txg;
	assert_check_fails(pool, "corrupt snapshot: 2, Z5 destroy would reclaim 0 by the deadlists");
	s->prev_snap_txg = 0;
	pool_ok(pool, "prev_snap_txg given back");
}

static void test_random_sequences_keep_every_invariant(void **state)
{
	(void)state;
	for (uint32_t seed = 1; seed <= 6; seed++) {
		g_autoptr(ZfsPool) pool = new_pool();
		g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
		g_autoptr(GArray) filesystems = g_array_new(FALSE, FALSE, sizeof(uint64_t));
		g_autoptr(GArray) snapshots = g_array_new(FALSE, FALSE, sizeof(uint64_t));
		uint64_t fs = new_filesystem(pool);

		g_array_append_val(filesystems, fs);
		for (unsigned step = 0; step < 400; step++) {
			char when[64];

			random_step(pool, rng, filesystems, snapshots);
			g_snprintf(when, sizeof(when), "seed %u step %u", seed, step);
			pool_ok(pool, when);
		}
		/* Destroying every snapshot and clone, each when nothing depends on
		 * it any more, leaves the filesystem alone. */
		g_array_remove_index(filesystems, 0);
		g_array_append_vals(snapshots, filesystems->data, filesystems->len);
		while (snapshots->len > 0) {
			guint before = snapshots->len;

			for (guint i = snapshots->len; i-- > 0;)
				if (zfs_dataset_destroy(pool, g_array_index(snapshots, uint64_t, i)) == 0)
					g_array_remove_index(snapshots, i);
			assert_true(snapshots->len < before);
		}
		pool_ok(pool, "all destroyed");
		assert_int_equal(usage(pool).deadlist_bytes, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_block_of_a_new_filesystem_is_born_in_the_first_txg),
		cmocka_unit_test(test_atime_update_rewrites_the_dnode_block_and_its_indirect_path),
		cmocka_unit_test(test_after_a_snapshot_an_atime_update_keeps_the_old_path_on_the_deadlist),
		cmocka_unit_test(test_a_second_update_in_a_later_txg_frees_the_first_update_blocks),
		cmocka_unit_test(test_destroying_the_only_snapshot_reclaims_its_deadlist),
		cmocka_unit_test(test_destroying_a_middle_snapshot_frees_only_what_it_alone_held),
		cmocka_unit_test(test_a_snapshot_is_read_only),
		cmocka_unit_test(test_a_clone_writes_its_own_blocks_and_pins_its_origin),
		cmocka_unit_test(test_micro_zap_grows_by_512_bytes_then_becomes_fat_at_128k),
		cmocka_unit_test(test_a_long_name_makes_the_zap_fat_at_once),
		cmocka_unit_test(test_file_blocks_grow_to_the_recordsize_then_need_an_indirect_block),
		cmocka_unit_test(test_a_txg_syncs_after_five_seconds_of_clock),
		cmocka_unit_test(test_check_fails_on_a_block_born_after_its_txg),
		cmocka_unit_test(test_check_fails_on_a_child_born_after_its_parent),
		cmocka_unit_test(test_check_fails_when_a_deadlist_loses_a_block),
		cmocka_unit_test(test_check_fails_when_a_block_is_on_a_deadlist_twice),
		cmocka_unit_test(test_check_fails_on_a_leaked_block),
		cmocka_unit_test(test_check_fails_when_space_is_miscounted),
		cmocka_unit_test(test_check_fails_when_a_label_is_miscounted),
		cmocka_unit_test(test_an_atime_txg_after_a_snapshot_charges_its_dnode_blocks_to_atime),
		cmocka_unit_test(test_a_txg_of_mixed_changes_charges_each_object_its_own_label),
		cmocka_unit_test(test_check_fails_when_a_freed_block_is_still_reached),
		cmocka_unit_test(test_check_fails_when_a_level_holds_a_blkid_past_the_object_end),
		cmocka_unit_test(test_check_fails_when_a_shared_object_is_changed),
		cmocka_unit_test(test_check_fails_when_shares_miscounts_the_objsets_holding_an_object),
		cmocka_unit_test(test_check_fails_when_a_micro_zap_holds_more_than_its_block),
		cmocka_unit_test(test_check_fails_when_a_micro_zap_miscounts_its_entries),
		cmocka_unit_test(test_check_fails_when_a_fat_zap_leaf_miscounts_its_chunks),
		cmocka_unit_test(test_check_fails_when_a_name_is_outside_its_leafs_prefix),
		cmocka_unit_test(test_check_fails_when_a_fat_zap_miscounts_its_entries),
		cmocka_unit_test(test_check_fails_when_a_destroy_estimate_is_not_what_only_the_snapshot_holds),
		cmocka_unit_test(test_random_sequences_keep_every_invariant),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
