/*
 * tests/model/test_cancel.c - a long op asked to stop (fs_config.cancelled,
 * model/fs.h) stops after a bounded piece of work, returns -EINTR, and
 * leaves the model consistent: fs_check passes, and the run can go on.
 *
 * The hook counts its calls and says "stop" from the Nth on, so a test
 * knows how much work the op did after the request: one extent (128 MiB),
 * or one tree block of a deleted snapshot.
 */
#include "model_fixture.h"

#include <errno.h>
#include <inttypes.h>

#include "fs_internal.h"

#define GIB (1ull << 30)

struct stopper {
	unsigned calls;
	unsigned stop_from;   /* 0: never */
};

static bool stop_when_told(void *opaque)
{
	struct stopper *s = opaque;
	s->calls++;
	return s->stop_from && s->calls >= s->stop_from;
}

static struct fs *new_fs(struct stopper *s, bool delayed)
{
	struct fs_config config;
	fs_config_init(&config);
	config.device_size = 64 * GIB;
	config.delayed_writeback = delayed;
	config.cancelled = stop_when_told;
	config.cancelled_opaque = s;
	return fixture_fs_new_config(&config);
}

static struct fs_attributes regular(void)
{
	struct fs_attributes a;
	fs_attributes_init(&a);
	a.mode = 0644;
	return a;
}

/* Immediate writeback: the create writes as it goes; stopped after 3 asks
 * (3 extents of 128 MiB), the rest of the 40 GiB file is a hole. */
static void test_cancel_stops_a_direct_40g_create_after_three_extents(void **state)
{
	struct stopper s = { 0, 3 };
	struct fs *fs = new_fs(&s, false);
	struct fs_attributes a = regular();
	assert_int_equal(fs_create(fs, "/big", 40 * GIB, &a), -EINTR);
	assert_int_equal(s.calls, 3);
	assert_int_equal(fixture_data_used(fs), 3 * 128ull << 20);
	fixture_assert_fs_ok(fs, "after the stopped create");
	s.stop_from = 0;
	assert_int_equal(fs_sync(fs), 0);
	fixture_assert_fs_ok(fs, "after a sync that follows it");
	assert_int_equal(fs_create(fs, "/after", 1 * GIB, &a), 0);
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(fixture_data_used(fs), (3 * 128ull << 20) + 1 * GIB);
	fixture_assert_fs_ok(fs, "after more work");
	fs_free(fs);
}

/* Delayed writeback: the create only reserves; the commit's writeback is
 * the long part. Stopped, it commits what it wrote and keeps the rest queued;
 * the next commit finishes the file. */
static void test_cancel_stops_a_commit_writeback_and_the_next_commit_finishes_it(void **state)
{
	struct stopper s = { 0, 0 };
	struct fs *fs = new_fs(&s, true);
	struct fs_attributes a = regular();
	assert_int_equal(fs_create(fs, "/big", 40 * GIB, &a), 0);
	s.stop_from = s.calls + 2;
	assert_int_equal(fs_sync(fs), -EINTR);
	assert_int_equal(fixture_data_used(fs), 2 * 128ull << 20);
	fixture_assert_fs_ok(fs, "after the stopped commit");
	s.stop_from = 0;
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(fixture_data_used(fs), 40 * GIB);
	fixture_assert_fs_ok(fs, "after the commit that finished the writeback");
	fs_free(fs);
}

/* A hook that never says stop changes nothing: the same create, whole. */
static void test_cancel_hook_that_never_stops_changes_nothing(void **state)
{
	struct stopper s = { 0, 0 };
	struct fs *fs = new_fs(&s, false);
	struct fs_attributes a = regular();
	assert_int_equal(fs_create(fs, "/big", 40 * GIB, &a), 0);
	assert_int_equal(fixture_data_used(fs), 40 * GIB);
	assert_int_equal(s.calls, 40 * 8 - 1); /* asked before every extent but the first */
	fixture_assert_fs_ok(fs, "after the whole create");
	fs_free(fs);
}

/* --- snapshot deletion (refs.c RF7) -------------------------------------- */

#define SNAPSHOT_FILES 3000
#define SNAPSHOT_ID BTRFS_FIRST_FREE_OBJECTID /* the first subvolume made */

/* 4 KiB nodes and /s holding 3000 files nothing else sees: in the btrfs
 * design its tree has three levels, so a stopped drop leaves frames on two
 * of them; in the keyed design the one shared tree holds them; the zfs
 * design's /s is a clone. */
static struct fs *fs_with_an_exclusive_snapshot_in(struct stopper *s, const char *design)
{
	struct fs_config config;
	fs_config_init(&config);
	config.device_size = 64 * GIB;
	config.nodesize = 4096;
	config.design = fs_design_find(design);
	config.snapshot_clones = true;
	config.cancelled = stop_when_told;
	config.cancelled_opaque = s;
	struct fs *fs = fixture_fs_new_config(&config);
	assert_int_equal(fs_snapshot(fs, "/", "/s", false), 0);
	fixture_make_files_in(fs, "/s/d", SNAPSHOT_FILES);
	assert_int_equal(fs_sync(fs), 0);
	assert_int_equal(fs_subvolume(fs, SNAPSHOT_ID)->tree->root->level, 2);
	return fs;
}

static struct fs *fs_with_an_exclusive_snapshot(struct stopper *s)
{
	return fs_with_an_exclusive_snapshot_in(s, "btrfs");
}

/* Stopped after `asks` asks of the hook: -EINTR, whatever is left of the tree
 * still allocated and consistent. Returns the dead tree's root. */
static struct tree_block *delete_stopped_after(struct fs *fs, struct stopper *s, unsigned asks)
{
	struct tree_block *root = fs_subvolume(fs, SNAPSHOT_ID)->tree->root;
	s->stop_from = s->calls + asks;
	assert_int_equal(fs_delete_snapshot(fs, "/s"), -EINTR);
	s->stop_from = 0;
	return root;
}

/* Wherever the deletion stops (the first block or key, between leaves,
 * between nodes, near the end), fs_check passes, the snapshot is gone from
 * the namespace, and the next commit frees what it held: the same space as
 * an uninterrupted deletion leaves. In every design. */
static void stops_anywhere(const char *design)
{
	struct stopper whole = { 0, 0 };
	struct fs *reference = fs_with_an_exclusive_snapshot_in(&whole, design);
	uint64_t with_snapshot = fixture_metadata_used(reference);
	unsigned calls = whole.calls;
	assert_int_equal(fs_delete_snapshot(reference, "/s"), 0);
	unsigned asks = whole.calls - calls;
	uint64_t metadata_after = fixture_metadata_used(reference), data_after = fixture_data_used(reference);
	assert_true(metadata_after < with_snapshot / 2);
	print_message("# %s: %u asks; metadata %" PRIu64 " KiB with the snapshot, %" PRIu64 " KiB after its deletion\n",
		      design, asks, with_snapshot >> 10, metadata_after >> 10);

	const unsigned stops[] = { 1, 2, 3, asks / 10, asks / 3, asks / 2, asks - 20 };
	for (unsigned i = 0; i < G_N_ELEMENTS(stops); i++) {
		struct stopper s = { 0, 0 };
		struct fs *fs = fs_with_an_exclusive_snapshot_in(&s, design);
		delete_stopped_after(fs, &s, stops[i]);
		g_autofree char *what = g_strdup_printf("%s: after a deletion stopped at ask %u of %u", design, stops[i], asks);
		fixture_assert_fs_ok(fs, what);
		struct fs_attributes a = fixture_attributes(0644, INT64_MIN, INT64_MIN);
		assert_int_equal(fs_create(fs, "/s/again", 1, &a), -ENOENT);
		assert_int_equal(fs_sync(fs), 0);
		fixture_assert_fs_ok(fs, "after the commit that finished it");
		assert_int_equal(fixture_data_used(fs), data_after);
		assert_int_equal(fixture_metadata_used(fs), metadata_after);
		fs_free(fs);
	}
	fs_free(reference);
}

static void test_cancel_stops_a_snapshot_deletion_anywhere_and_the_next_commit_finishes_it(void **state)
{
	for (unsigned d = 0; fs_design_at(d); d++)
		stops_anywhere(fs_design_name(fs_design_at(d)));
}

static unsigned count_blocks(const struct tree_block *block)
{
	unsigned n = 1;
	for (uint32_t i = 0; block->level && i < block->nritems; i++)
		n += count_blocks(block->children[i].block);
	return n;
}

/* The hook is asked before each block of the snapshot's tree but the root
 * is taken down (then before each batch of the throttle): a stop comes
 * within one leaf's work. */
static void test_cancel_snapshot_deletion_asks_before_every_block(void **state)
{
	struct stopper s = { 0, 0 };
	struct fs *fs = fs_with_an_exclusive_snapshot(&s);
	unsigned blocks = count_blocks(fs_subvolume(fs, SNAPSHOT_ID)->tree->root);
	unsigned calls = s.calls;
	assert_int_equal(fs_delete_snapshot(fs, "/s"), 0);
	unsigned asks = s.calls - calls;
	print_message("# %u blocks in the snapshot's tree, %u asks\n", blocks, asks);
	assert_true(blocks > SNAPSHOT_FILES / 10);
	assert_in_range(asks, blocks - 1, blocks + 64);
	fs_free(fs);
}

/* RF7 broken on purpose: the dead tree's root, the bottom frame of a
 * stopped drop, must hold no reference and must not be freed. */
static void test_refs_check_fails_when_a_dead_trees_frame_is_referenced_or_freed(void **state)
{
	struct stopper s = { 0, 0 };
	struct fs *fs = fs_with_an_exclusive_snapshot(&s);
	struct tree_block *root = delete_stopped_after(fs, &s, 2);
	fixture_assert_fs_ok(fs, "before breaking RF7");
	root->tree_refs++;
	g_autofree char *referenced = g_strdup_printf("corrupt refs: block %" G_GUINT64_FORMAT
						      ", RF7 a dead tree's frame is still referenced", root->bytenr);
	fixture_assert_fs_corrupt(fs, referenced);
	root->tree_refs--;
	root->flags |= TREE_BLOCK_FREED;
	g_autofree char *freed = g_strdup_printf("corrupt refs: block %" G_GUINT64_FORMAT
						 ", RF7 a dead tree's frame is freed", root->bytenr);
	fixture_assert_fs_corrupt(fs, freed);
	root->flags &= (uint8_t)~TREE_BLOCK_FREED;
	fixture_assert_fs_ok(fs, "after mending RF7");
	fs_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_stops_a_direct_40g_create_after_three_extents),
		cmocka_unit_test(test_cancel_stops_a_commit_writeback_and_the_next_commit_finishes_it),
		cmocka_unit_test(test_cancel_hook_that_never_stops_changes_nothing),
		cmocka_unit_test(test_cancel_stops_a_snapshot_deletion_anywhere_and_the_next_commit_finishes_it),
		cmocka_unit_test(test_cancel_snapshot_deletion_asks_before_every_block),
		cmocka_unit_test(test_refs_check_fails_when_a_dead_trees_frame_is_referenced_or_freed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
