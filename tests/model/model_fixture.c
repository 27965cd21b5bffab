/*
 * tests/model/model_fixture.c - the fixtures of model_fixture.h.
 */
#include "model_fixture.h"

#include <math.h>
#include <string.h>

#include "constants.h"

struct tree_fixture *tree_fixture_new(uint32_t nodesize)
{
	struct tree_fixture *f = g_new0(struct tree_fixture, 1);
	struct blockstore_config config = { .nodesize = nodesize, .device_size = 4ull << 30, .metadata_dup = true };
	g_autoptr(GError) error = NULL;
	f->nodesize = nodesize;
	f->store = blockstore_new(&config, &error);
	if (!f->store)
		fail_msg("blockstore_new(%u): %s", nodesize, error->message);
	f->refs = refs_new(&f->extent_tree, NULL, NULL);
	f->txn = (struct transaction){ .transid = 1, .store = f->store, .ops = &refs_transaction_ops,
				       .accounting = f->refs, .written = g_ptr_array_new(),
				       .run_leaves = g_ptr_array_new() };
	btree_init(&f->extent_tree, &f->txn, BTRFS_EXTENT_TREE_OBJECTID);
	btree_init(&f->tree, &f->txn, BTRFS_FS_TREE_OBJECTID);
	return f;
}

static unsigned fixture_trees(struct tree_fixture *f, struct btree **trees)
{
	unsigned n = 0;
	trees[n++] = &f->extent_tree;
	trees[n++] = &f->tree;
	for (unsigned i = 0; i < f->nextra; i++)
		trees[n++] = f->extra[i];
	return n;
}

void tree_fixture_free(struct tree_fixture *f)
{
	if (!f)
		return;
	/* Reachable blocks belong to the trees; freed ones to the store. */
	g_autoptr(GHashTable) seen = g_hash_table_new(NULL, NULL);
	struct btree *trees[8];
	unsigned n = fixture_trees(f, trees);
	for (unsigned i = 0; i < n; i++)
		btree_collect_blocks(trees[i]->root, seen);
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, seen);
	while (g_hash_table_iter_next(&iter, &key, NULL))
		blockstore_release_block(key);
	for (unsigned i = 0; i < f->nextra; i++)
		g_free(f->extra[i]);
	refs_free(f->refs);
	blockstore_free(f->store);
	g_ptr_array_unref(f->txn.written);
	g_ptr_array_unref(f->txn.run_leaves);
	g_free(f);
}

void tree_fixture_commit(struct tree_fixture *f)
{
	transaction_commit(&f->txn, NULL); /* no root tree, no chunk trees */
}

struct btree *tree_fixture_clone_root(struct tree_fixture *f, uint64_t id)
{
	g_assert(f->nextra < G_N_ELEMENTS(f->extra));
	struct tree_block *root = btree_copy_block(&f->txn, id, f->tree.root);
	refs_inc_children(&f->txn, root, false);
	struct btree *tree = g_new0(struct btree, 1);
	tree->id = id;
	tree->root = root;
	tree->root_dirty = true;
	f->tree.last_snapshot = f->txn.transid;
	f->extra[f->nextra++] = tree;
	return tree;
}

void tree_fixture_assert_ok(struct tree_fixture *f, const char *what)
{
	g_autoptr(GError) error = NULL;
	struct btree *trees[8];
	unsigned n = fixture_trees(f, trees);
	bool ok = true;
	for (unsigned i = 0; i < n && ok; i++)
		ok = btree_check(trees[i], f->nodesize, &error);
	g_autoptr(GHashTable) live = g_hash_table_new(NULL, NULL);
	ok = ok && refs_check(f->refs, trees, n, blockstore_unreleased_blocks(f->store), live, &error) &&
	     btree_check_item_sharing(live, blockstore_unreleased_blocks(f->store), &error) &&
	     blockstore_check(f->store, live, &error);
	if (ok)
		return;
	fprintf(stderr, "check failed after %s: %s\n", what, error->message);
	for (unsigned i = 0; i < n; i++)
		btree_dump(trees[i], stderr);
	fail_msg("check failed after %s: %s", what, error->message);
}

static bool count_item(const struct btree_item *item, void *opaque)
{
	(void)item;
	(*(uint64_t *)opaque)++;
	return true;
}

uint64_t tree_fixture_items(const struct btree *tree)
{
	struct btree_key first = BTRFS_KEY(0, 0, 0), last = BTREE_KEY_MAX;
	uint64_t count = 0;
	btree_visit_range(tree, &first, &last, count_item, &count);
	return count;
}

/* --- filesystem helpers ---------------------------------------------------- */

struct fs *fixture_fs_new_config(const struct fs_config *config)
{
	g_autoptr(GError) error = NULL;
	struct fs *fs = fs_new(config, &error);
	if (!fs)
		fail_msg("fs_new(nodesize %u, device %" G_GUINT64_FORMAT "): %s", config->nodesize,
			 config->device_size, error->message);
	return fs;
}

struct fs *fixture_fs_new(uint32_t nodesize, uint64_t device_size)
{
	struct fs_config config;
	fs_config_init(&config);
	config.nodesize = nodesize;
	config.device_size = device_size;
	return fixture_fs_new_config(&config);
}

uint64_t fixture_metadata_used(const struct fs *fs)
{
	struct fs_report report;
	fs_report(fs, &report);
	return report.space.metadata_used;
}

uint64_t fixture_data_used(const struct fs *fs)
{
	struct fs_report report;
	fs_report(fs, &report);
	return report.space.data_used;
}

void fixture_counters(const struct fs *fs, struct fs_counters *counters)
{
	struct fs_report report;
	fs_report(fs, &report);
	*counters = report.counters;
}

void fixture_assert_fs_ok(struct fs *fs, const char *what)
{
	g_autoptr(GError) error = NULL;
	if (fs_check(fs, &error))
		return;
	fprintf(stderr, "fs_check failed after %s: %s\n", what, error->message);
	fs_dump(fs, stderr);
	fail_msg("fs_check failed after %s: %s", what, error->message);
}

void fixture_assert_fs_corrupt(struct fs *fs, const char *want)
{
	g_autoptr(GError) error = NULL;
	if (fs_check(fs, &error))
		fail_msg("fs_check passed; want \"%s...\"", want);
	print_message("# %s\n", error->message);
	if (!g_str_has_prefix(error->message, want))
		fail_msg("fs_check reported \"%s\"; want \"%s...\"", error->message, want);
}

void fixture_make_files(struct fs *fs, unsigned files)
{
	fixture_make_files_in(fs, "/d", files);
}

void fixture_make_files_in(struct fs *fs, const char *dir_path, unsigned files)
{
	struct fs_attributes dir = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_mkdir(fs, dir_path, &dir), 0);
	for (unsigned i = 0; i < files; i++) {
		g_autofree char *path = g_strdup_printf("%s/file-%03u", dir_path, i);
		struct fs_attributes a = fixture_attributes(0644, INT64_MIN, INT64_MIN);
		assert_int_equal(fs_create(fs, path, i % 3 ? 9000 + i : 100, &a), 0);
	}
}

struct fs_attributes fixture_attributes(uint32_t mode, int64_t atime, int64_t mtime)
{
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	attributes.mode = mode;
	attributes.atime = atime;
	attributes.mtime = mtime;
	return attributes;
}

struct fs *fixture_fs_with_a_lost_atime(const struct fs_config *config)
{
	struct fs_config c = *config;
	c.device_size = 128 * MIB;
	c.atime.mode = ATIME_STRICT;
	struct fs *fs = fixture_fs_new_config(&c);
	struct fs_attributes dir = fixture_attributes(0755, INT64_MIN, INT64_MIN);
	assert_int_equal(fs_mkdir(fs, "/d", &dir), 0);
	for (unsigned i = 0; i < FIXTURE_LOST_FILES; i++) {
		g_autofree char *path = g_strdup_printf("/d/f%05u", i);
		struct fs_attributes a = fixture_attributes(0644, fs_clock(fs) - HOUR_NS, fs_clock(fs) - HOUR_NS);
		assert_int_equal(fs_create(fs, path, 0, &a), 0);
	}
	for (unsigned s = 1; s <= FIXTURE_LOST_SNAPSHOTS; s++) {
		g_autofree char *path = g_strdup_printf("/s%u", s);
		assert_int_equal(fs_snapshot(fs, "/", path, false), 0);
	}
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + SECOND_NS), 0);
	const struct fs_counters *live = fs_counters_live(fs);
	for (unsigned s = 1; s <= FIXTURE_LOST_SNAPSHOTS && !live->atime_lost; s++)
		for (unsigned i = 0; i < FIXTURE_LOST_FILES && !live->atime_lost; i++) {
			g_autofree char *path = g_strdup_printf("/s%u/d/f%05u", s, i);
			assert_int_equal(fs_read(fs, path, NULL), 0);
		}
	assert_true(live->atime_lost > 0);
	assert_int_equal(fs_set_clock(fs, fs_clock(fs) + SECOND_NS), 0);
	uint64_t lost = live->atime_lost;
	bool updated = true;
	assert_int_equal(fs_read(fs, FIXTURE_LOST_PATH, &updated), 0);
	assert_false(updated);
	assert_int_equal(live->atime_lost, lost + 1);
	return fs;
}

void fixture_make_metadata_room(struct fs *fs)
{
	for (unsigned i = 0; i < FIXTURE_LOST_FILES / 2; i++) {
		g_autofree char *path = g_strdup_printf("/s1/d/f%05u", i);
		assert_int_equal(fs_unlink(fs, path), 0);
	}
	assert_int_equal(fs_sync(fs), 0);
}

double rng_normal(struct rng *r)
{
	double u1 = rng_unit(r), u2 = rng_unit(r);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * G_PI * u2);
}

void fixture_assert_same_blocks(const struct tree_block *a, const struct tree_block *b, bool payloads)
{
	assert_int_equal(a->bytenr, b->bytenr);
	assert_int_equal(a->level, b->level);
	assert_int_equal(a->generation, b->generation);
	assert_int_equal(a->nritems, b->nritems);
	assert_int_equal(a->leaf_bytes, b->leaf_bytes);
	for (uint32_t i = 0; i < a->nritems; i++) {
		if (a->level) {
			assert_int_equal(btree_key_compare(&a->children[i].key, &b->children[i].key), 0);
			fixture_assert_same_blocks(a->children[i].block, b->children[i].block, payloads);
			continue;
		}
		const struct btree_item *x = btree_leaf_item(a, i), *y = btree_leaf_item(b, i);
		assert_int_equal(btree_key_compare(btree_item_key(x), btree_item_key(y)), 0);
		assert_int_equal(btree_item_size(x), btree_item_size(y));
		if (!payloads)
			continue;
		union item_payload px = btree_item_payload_copy(x), py = btree_item_payload_copy(y);
		assert_memory_equal(&px, &py, sizeof(px));
	}
}
