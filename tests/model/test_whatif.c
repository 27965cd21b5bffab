/*
 * tests/model/test_whatif.c - fs_delete_estimate(): what deleting a set of
 * snapshots together would free, checked against the deletion itself.
 *
 * The specification:
 *  - for every subset of three snapshots (sharing blocks with the top level
 *    and with each other, with data of their own, under a side-table policy
 *    too), the estimate equals what deleting them and committing frees: the
 *    data_used that goes, and the tree blocks of their trees that are no
 *    longer alive afterwards, block by block;
 *  - two snapshots that share blocks only with each other free more together
 *    than the sum of their exclusive bytes (zfs destroy -nv, not qgroups);
 *  - the estimate refuses what fs_delete_snapshot() refuses, and a design
 *    that cannot tell, and changes nothing.
 */
#include "model_fixture.h"

#include <errno.h>
#include <string.h>

#include "fs_internal.h"

#define FILES 60u

static void write_files(struct fs *fs, const char *top, unsigned first, unsigned step, uint64_t length)
{
	for (unsigned i = first; i < FILES; i += step) {
		g_autofree char *path = g_strdup_printf("%s/d/file-%03u", top, i);
		assert_int_equal(fs_write(fs, path, 0, length), 0);
	}
}

/* / with files; /s1 of it, then / and /s1 diverge; /s2 of /; /s3 of /s2,
 * then /s2 and /s3 change together less than / does. */
static struct fs *three_snapshots(const char *policy)
{
	struct fs_config config;
	fs_config_init(&config);
	config.nodesize = 4096;
	config.atime.mode = ATIME_STRICT;
	g_autoptr(GError) error = NULL;
	assert_true(fs_policy_parse(policy, &config, &error));
	struct fs *fs = fixture_fs_new_config(&config);
	fixture_make_files(fs, FILES);
	assert_int_equal(fs_snapshot(fs, "/", "/s1", false), 0);
	write_files(fs, "", 0, 5, 30000);
	write_files(fs, "/s1", 1, 7, 20000);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + DAY_NS), 0);
	for (unsigned i = 0; i < FILES; i += 3) {
		g_autofree char *path = g_strdup_printf("/s1/d/file-%03u", i);
		assert_int_equal(fs_read(fs, path, NULL), 0);
	}
	assert_int_equal(fs_snapshot(fs, "/", "/s2", false), 0);
	write_files(fs, "/s2", 2, 4, 50000);
	assert_int_equal(fs_snapshot(fs, "/s2", "/s3", false), 0);
	write_files(fs, "", 3, 2, 10000);
	write_files(fs, "/s3", 3, 11, 10000);
	assert_int_equal(fs_sync(fs), 0);
	fixture_assert_fs_ok(fs, "three snapshots");
	return fs;
}

/* A tree block alive now: its address and generation (an address freed and
 * handed out again has a newer generation). */
struct block_id {
	uint64_t bytenr, generation;
};

static guint block_id_hash(gconstpointer p)
{
	const struct block_id *b = p;
	return g_int64_hash(&b->bytenr) ^ (guint)b->generation;
}

static gboolean block_id_equal(gconstpointer a, gconstpointer b)
{
	return !memcmp(a, b, sizeof(struct block_id));
}

static void add_ids(GHashTable *ids, GHashTable *blocks)
{
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, blocks);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		const struct tree_block *block = key;
		struct block_id *id = g_new(struct block_id, 1);
		*id = (struct block_id){ block->bytenr, block->generation };
		g_hash_table_add(ids, id);
	}
}

/* The blocks of the trees (and side tables) of the subvolumes at `paths`. */
static GHashTable *set_block_ids(struct fs *fs, const char *const *paths, unsigned n)
{
	GHashTable *ids = g_hash_table_new_full(block_id_hash, block_id_equal, g_free, NULL);
	for (unsigned i = 0; i < n; i++) {
		struct inode_location where;
		assert_int_equal(fs_resolve(fs, paths[i], &where), 0);
		g_autoptr(GHashTable) blocks = g_hash_table_new(NULL, NULL);
		btree_collect_blocks(where.subvolume->tree->root, blocks);
		if (where.subvolume->atime_tree.root)
			btree_collect_blocks(where.subvolume->atime_tree.root, blocks);
		add_ids(ids, blocks);
	}
	return ids;
}

/* Every live subvolume's blocks and side tables'. */
static GHashTable *live_block_ids(struct fs *fs)
{
	GHashTable *ids = g_hash_table_new_full(block_id_hash, block_id_equal, g_free, NULL);
	g_autoptr(GHashTable) blocks = g_hash_table_new(NULL, NULL);
	fs_collect_subvolume_blocks(fs, blocks);
	add_ids(ids, blocks);
	return ids;
}

static uint64_t data_used(const struct fs *fs)
{
	struct fs_report report;
	fs_report(fs, &report);
	return report.space.data_used;
}

/* Deletes the set (on a filesystem of its own) and checks it freed what
 * the estimate said. */
static void assert_estimate_is_what_deletion_frees(const char *policy, const char *const *paths, unsigned n)
{
	struct fs *fs = three_snapshots(policy);
	struct fs_reclaim estimate;
	assert_int_equal(fs_delete_estimate(fs, paths, n, &estimate), 0);
	g_autoptr(GHashTable) before = set_block_ids(fs, paths, n);
	uint64_t data_before = data_used(fs);
	uint32_t nodesize = blockstore_nodesize(fs->store);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(fs_delete_snapshot(fs, paths[i]), 0);
	assert_int_equal(fs_sync(fs), 0);
	fixture_assert_fs_ok(fs, "the deletion");
	g_autoptr(GHashTable) after = live_block_ids(fs);
	uint64_t freed = 0;
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, before);
	while (g_hash_table_iter_next(&iter, &key, NULL))
		if (!g_hash_table_contains(after, key))
			freed += nodesize;
	g_autofree char *set = g_strjoinv(" ", (char **)paths);
	print_message("# %s, delete %s: estimate %" G_GUINT64_FORMAT " + %" G_GUINT64_FORMAT
		      " data; freed %" G_GUINT64_FORMAT " + %" G_GUINT64_FORMAT " data\n", policy, set,
		      estimate.metadata_bytes, estimate.data_bytes, freed, data_before - data_used(fs));
	assert_int_equal(estimate.metadata_bytes, freed);
	assert_int_equal(estimate.data_bytes, data_before - data_used(fs));
	fs_free(fs);
}

static void test_every_subset_frees_what_the_estimate_says(void **state)
{
	static const char *const policies[] = { "inline", "side-table" };
	static const char *const all[] = { "/s1", "/s2", "/s3" };
	for (unsigned p = 0; p < G_N_ELEMENTS(policies); p++) {
		for (unsigned mask = 1; mask < 8; mask++) {
			const char *paths[4] = { NULL };
			unsigned n = 0;
			/* /s3 is in /'s namespace, not /s2's: any order deletes. */
			for (unsigned i = 0; i < 3; i++)
				if (mask & (1u << i))
					paths[n++] = all[i];
			assert_estimate_is_what_deletion_frees(policies[p], paths, n);
		}
	}
}

static uint64_t exclusive_bytes(const struct fs *fs, const char *path)
{
	GArray *usage = fs_subvolume_usage(fs);
	uint64_t bytes = UINT64_MAX;
	for (unsigned i = 0; i < usage->len; i++) {
		const struct subvolume_usage *u = &g_array_index(usage, struct subvolume_usage, i);
		if (!strcmp(u->path, path))
			bytes = u->exclusive_bytes;
	}
	fs_subvolume_usage_free(usage);
	assert_true(bytes != UINT64_MAX);
	return bytes;
}

static void test_two_snapshots_together_free_more_than_their_exclusive_bytes(void **state)
{
	struct fs *fs = three_snapshots("inline");
	const char *const paths[] = { "/s2", "/s3" };
	struct fs_reclaim estimate;
	assert_int_equal(fs_delete_estimate(fs, paths, 2, &estimate), 0);
	uint64_t together = estimate.metadata_bytes + estimate.data_bytes;
	uint64_t sum = exclusive_bytes(fs, "/s2") + exclusive_bytes(fs, "/s3");
	print_message("# /s2 and /s3: %" G_GUINT64_FORMAT " together, %" G_GUINT64_FORMAT " exclusive\n", together,
		      sum);
	assert_true(together > sum);
	/* One alone frees its exclusive bytes (qgroups count no side tables;
	 * inline has none). */
	struct fs_reclaim alone;
	assert_int_equal(fs_delete_estimate(fs, paths, 1, &alone), 0);
	assert_int_equal(alone.metadata_bytes + alone.data_bytes, exclusive_bytes(fs, "/s2"));
	fs_free(fs);
}

static void test_the_estimate_refuses_what_deletion_refuses_and_changes_nothing(void **state)
{
	struct fs *fs = three_snapshots("inline");
	struct fs_attributes dir = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_mkdir(fs, "/s1/box", &dir), 0);
	assert_int_equal(fs_snapshot(fs, "/s2", "/s1/box/nested", false), 0);
	assert_int_equal(fs_sync(fs), 0);
	struct fs_report before, after;
	fs_report(fs, &before);
	struct fs_reclaim out;
	const char *missing[] = { "/nothing" }, *dir_only[] = { "/d" }, *holder[] = { "/s1" },
		   *holder_and_nested[] = { "/s1", "/s1/box/nested" };
	assert_int_equal(fs_delete_estimate(fs, missing, 1, &out), -ENOENT);
	assert_int_equal(fs_delete_estimate(fs, dir_only, 1, &out), -EINVAL);
	assert_int_equal(fs_delete_estimate(fs, holder, 1, &out), -ENOTEMPTY);
	assert_int_equal(fs_delete_snapshot(fs, "/s1"), -ENOTEMPTY);
	assert_int_equal(fs_delete_estimate(fs, holder_and_nested, 2, &out), 0);
	assert_true(out.metadata_bytes > 0);
	fs_report(fs, &after);
	assert_int_equal(after.space.metadata_used, before.space.metadata_used);
	assert_int_equal(after.transid, before.transid);
	fixture_assert_fs_ok(fs, "the estimates");
	fs_free(fs);

	struct fs_config config;
	fs_config_init(&config);
	config.design = fs_design_find("keyed");
	fs = fixture_fs_new_config(&config);
	fixture_make_files(fs, 4);
	assert_int_equal(fs_snapshot(fs, "/", "/s1", false), 0);
	const char *s1[] = { "/s1" };
	assert_int_equal(fs_delete_estimate(fs, s1, 1, &out), -EOPNOTSUPP);
	fs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_subset_frees_what_the_estimate_says),
		cmocka_unit_test(test_two_snapshots_together_free_more_than_their_exclusive_bytes),
		cmocka_unit_test(test_the_estimate_refuses_what_deletion_refuses_and_changes_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
