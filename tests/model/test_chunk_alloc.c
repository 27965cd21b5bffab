/*
 * tests/model/test_chunk_alloc.c - chunk sizes (model/chunk_alloc.h) as
 * mkfs.btrfs 6.2 and kernel 6.18 chose them on loop devices, and what an
 * atime update does when the device has no room left (issue 14): the read
 * succeeds and the update is lost, or, as the what-if, the read fails.
 * The expected sizes are the measured ones (docs/btrfs-ground-truth.md,
 * "Chunk sizes": `btrfs fi df -b` after mkfs and after cp -a /usr/include).
 */
#include "model_fixture.h"

#include "blockstore.h"
#include "chunk_alloc.h"
#include "constants.h"
#include "delayed_items.h"
#include "fs_internal.h"

#include <inttypes.h>

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void test_chunk_alloc_mkfs_metadata_is_half_a_tenth_of_the_device_between_32_mib_and_the_maximum(
	void **state)
{
	(void)state;
	static const struct { uint64_t device, metadata; } measured[] = {
		{ 256 * MiB, 33554432 }, { 512 * MiB, 33554432 }, { 600 * MiB, 33554432 },
		{ 800 * MiB, 41943040 }, { 1 * GiB, 53673984 }, { 1500 * MiB, 78643200 },
		{ 2 * GiB, 107347968 }, { 3 * GiB, 268435456 }, { 4 * GiB, 268435456 },
		{ 40 * GiB, 268435456 }, { 51 * GiB, 1073741824 }, { 64 * GiB, 1073741824 },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(measured); i++)
		assert_int_equal(chunk_alloc_mkfs_metadata(measured[i].device), measured[i].metadata);
}

static void test_chunk_alloc_kernel_chunks_are_a_tenth_of_the_device_rounded_up_to_16_mib_and_capped(
	void **state)
{
	(void)state;
	/* 512 MiB: cp -a of 256 MiB of data took 8 MiB (mkfs) + 5 x 64 MiB = 343932928. */
	assert_int_equal(chunk_alloc_size(512 * MiB, true, false, UINT64_MAX), 64 * MiB);
	assert_int_equal(chunk_alloc_size(512 * MiB, false, true, UINT64_MAX), 64 * MiB);
	assert_int_equal(chunk_alloc_size(1 * GiB, true, false, UINT64_MAX), 112 * MiB);
	/* 4 GiB: data 416 MiB, metadata at its 256 MiB maximum. */
	assert_int_equal(chunk_alloc_size(4 * GiB, true, false, UINT64_MAX), 416 * MiB);
	assert_int_equal(chunk_alloc_size(4 * GiB, false, true, UINT64_MAX), 256 * MiB);
	/* Above 50 GiB metadata chunks are 1 GiB; data stripes never exceed 1 GiB. */
	assert_int_equal(chunk_alloc_size(64 * GiB, false, true, UINT64_MAX), 1 * GiB);
	assert_int_equal(chunk_alloc_size(64 * GiB, true, false, UINT64_MAX), 1 * GiB);
}

static void test_chunk_alloc_last_chunk_shrinks_to_what_the_device_has_left(void **state)
{
	(void)state;
	/* DUP: 10 MiB of raw space holds a 5 MiB chunk; CA1 rounds to 64 KiB. */
	assert_int_equal(chunk_alloc_size(512 * MiB, false, true, 10 * MiB), 5 * MiB);
	assert_int_equal(chunk_alloc_size(512 * MiB, false, true, 10 * MiB + 100000), 5 * MiB);
	assert_int_equal(chunk_alloc_size(512 * MiB, true, false, 3 * MiB), 3 * MiB);
	/* CA2: less than a 64 KiB stripe per copy: no chunk. */
	assert_int_equal(chunk_alloc_size(512 * MiB, false, true, 2 * BTRFS_STRIPE_LEN - 1), 0);
	assert_int_equal(chunk_alloc_size(512 * MiB, false, true, 2 * BTRFS_STRIPE_LEN), BTRFS_STRIPE_LEN);
	assert_int_equal(chunk_alloc_allocatable(true, 10 * MiB), 5 * MiB);
	assert_int_equal(chunk_alloc_allocatable(false, 10 * MiB), 10 * MiB);
}

static void test_chunk_alloc_fresh_filesystem_totals_are_what_mkfs_made(void **state)
{
	(void)state;
	static const uint64_t devices[] = { 512 * MiB, 1 * GiB, 4 * GiB, 64 * GiB };
	for (size_t i = 0; i < G_N_ELEMENTS(devices); i++) {
		struct fs *fs = fixture_fs_new(16384, devices[i]);
		struct fs_report report;
		fs_report(fs, &report);
		assert_int_equal(report.space.metadata_total, chunk_alloc_mkfs_metadata(devices[i]));
		assert_int_equal(report.space.data_total, BTRFS_MKFS_DATA_CHUNK);
		fs_free(fs);
	}
}

/* A 128 MiB strictatime filesystem with `files` empty files in /d and four
 * rw snapshots of the top level: each read after a clock tick unshares. */
static struct fs *small_fs_with_snapshots(enum fs_enospc_read enospc_read, unsigned files)
{
	struct fs_config config;
	fs_config_init(&config);
	config.device_size = 128 * MiB;
	config.atime.mode = ATIME_STRICT;
	config.enospc_read = enospc_read;
	struct fs *fs = fixture_fs_new_config(&config);
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	assert_int_equal(fs_mkdir(fs, "/d", &attributes), 0);
	for (unsigned i = 0; i < files; i++) {
		char path[64];
		g_snprintf(path, sizeof(path), "/d/file-with-a-longish-name-%05u", i);
		assert_int_equal(fs_create(fs, path, 0, &attributes), 0);
	}
	for (unsigned s = 1; s <= 4; s++) {
		char path[32];
		g_snprintf(path, sizeof(path), "/snap%u", s);
		assert_int_equal(fs_snapshot(fs, "/", path, false), 0);
	}
	return fs;
}

/* Reads every file of every subvolume once per clock tick until `stop`
 * says so or `rounds` ran out; returns the first read error (0: none). */
static int read_everything(struct fs *fs, unsigned files, unsigned rounds)
{
	static const char *const roots[] = { "", "/snap1", "/snap2", "/snap3", "/snap4" };
	for (unsigned r = 1; r <= rounds; r++) {
		assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 1000000000ll), 0);
		for (size_t s = 0; s < G_N_ELEMENTS(roots); s++)
			for (unsigned i = 0; i < files; i++) {
				char path[96];
				g_snprintf(path, sizeof(path), "%s/d/file-with-a-longish-name-%05u", roots[s], i);
				int rc = fs_read(fs, path, NULL);
				if (rc)
					return rc;
			}
	}
	return 0;
}

static void test_enospc_in_an_atime_update_loses_the_update_and_the_read_succeeds(void **state)
{
	(void)state;
	enum { FILES = 40000 };
	struct fs *fs = small_fs_with_snapshots(FS_ENOSPC_READ_LOSE, FILES);
	assert_int_equal(read_everything(fs, FILES, 2), 0);
	struct fs_report report;
	fs_report(fs, &report);
	assert_true(report.counters.atime_lost > 0);
	assert_int_equal(report.counters.failed_reads, 0);
	/* Each lost update first waited for the flusher's commits. */
	assert_true(report.counters.enospc_commits >= report.counters.atime_lost);
	fixture_assert_fs_ok(fs, "after lost atime updates");
	/* The full filesystem refuses new files; deletes still work. */
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	int created = 0;
	for (unsigned i = 0; i < 64 && !created; i++) {
		char path[32];
		g_snprintf(path, sizeof(path), "/new-%u", i);
		created = fs_create(fs, path, 0, &attributes);
	}
	assert_int_equal(created, -ENOSPC);
	assert_int_equal(fs_unlink(fs, "/d/file-with-a-longish-name-00000"), 0);
	fixture_assert_fs_ok(fs, "after the delete");
	fs_free(fs);
}

static void test_enospc_read_fail_what_if_fails_the_read_and_loses_nothing(void **state)
{
	(void)state;
	enum { FILES = 40000 };
	struct fs *fs = small_fs_with_snapshots(FS_ENOSPC_READ_FAIL, FILES);
	assert_int_equal(read_everything(fs, FILES, 2), -ENOSPC);
	struct fs_report report;
	fs_report(fs, &report);
	assert_int_equal(report.counters.failed_reads, 1);
	assert_int_equal(report.counters.atime_lost, 0);
	fixture_assert_fs_ok(fs, "after a failed read");
	fs_free(fs);
}

/* --- lostatime: what stands after an atime update lost to ENOSPC ----------
 * The kernel keeps a lost update's atime in the in-memory inode; whatever
 * writes the inode's atime later puts its own there and on disk, and the
 * lost one is gone (measured on kernel 6.18: a utimes, and a read once there
 * was room again, each reached the disk and survived eviction). So the
 * atime the mount's rule sees is the newest written, never the lost one. */

static struct fs *lost_atime_with_room(void)
{
	struct fs_config config;
	fs_config_init(&config);
	struct fs *fs = fixture_fs_with_a_lost_atime(&config);
	fixture_make_metadata_room(fs);
	return fs;
}

static void remount_relatime(struct fs *fs)
{
	struct atime_options relatime = *fs_atime_options(fs);
	relatime.mode = ATIME_RELATIME;
	fs_set_atime_options(fs, &relatime);
}

/* Reads FIXTURE_LOST_PATH at `when`: did the mount's rule write its atime? */
static bool read_at_writes_atime(struct fs *fs, int64_t when)
{
	assert_int_equal(fs_set_clock(fs, when), 0);
	bool updated = false;
	assert_int_equal(fs_read(fs, FIXTURE_LOST_PATH, &updated), 0);
	return updated;
}

static void test_a_settime_after_a_lost_atime_update_sets_the_atime_in_force(void **state)
{
	(void)state;
	struct fs *fs = lost_atime_with_room();
	/* A day ahead: newer than the ctime the settime sets, so relatime leaves
	 * it; the lost atime, older than that ctime, it would update. */
	assert_int_equal(fs_settime(fs, FIXTURE_LOST_PATH, fs_clock(fs) + DAY_NS, INT64_MIN), 0);
	remount_relatime(fs);
	assert_false(read_at_writes_atime(fs, fs_clock(fs) + SECOND_NS));
	fixture_assert_fs_ok(fs, "a settime after a lost atime update");
	fs_free(fs);
}

static void test_an_atime_written_after_a_lost_update_is_the_atime_in_force(void **state)
{
	(void)state;
	struct fs *fs = lost_atime_with_room();
	int64_t lost = fs_clock(fs); /* the lost update's atime */
	/* 23 h later there is room: a strictatime read writes its atime. */
	assert_true(read_at_writes_atime(fs, lost + 23 * HOUR_NS));
	/* A day and a second after the lost update relatime sees the written
	 * atime, an hour old, and leaves it (the lost one it would update). */
	remount_relatime(fs);
	assert_false(read_at_writes_atime(fs, lost + DAY_NS + SECOND_NS));
	fixture_assert_fs_ok(fs, "an atime written after a lost update");
	fs_free(fs);
}

/* A read whose atime reservation waits on a ticket: the flusher's delayed
 * items go into the leaf the read's lookup found (a large directory's last
 * DIR_INDEX items share it with its first file's inode item), copying it
 * when the transaction had not yet. The atime write must not follow the
 * path the lookup left (its blocks are freed copies); it lands in the tree,
 * so a second read at the same time has nothing to update. */
static void test_a_read_whose_reservation_waits_on_a_ticket_writes_the_atime_into_the_current_tree(void **state)
{
	(void)state;
	static const char first[] = "/d/file-with-a-longish-name-00000";
	struct fs_config config;
	fs_config_init(&config);
	config.device_size = 128 * MiB;
	config.atime.mode = ATIME_STRICT;
	struct fs *fs = fixture_fs_new_config(&config);
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	assert_int_equal(fs_mkdir(fs, "/d", &attributes), 0);
	char path[64];
	for (unsigned i = 0; i < 3000; i++) {
		g_snprintf(path, sizeof(path), "/d/file-with-a-longish-name-%05u", i);
		assert_int_equal(fs_create(fs, path, 0, &attributes), 0);
	}
	struct fs_counters before, after;
	bool updated = false;
	for (unsigned i = 3000; i < 60000; i++) {
		/* A clean tree, then a create: the root is copied, the directory's index waits. */
		assert_int_equal(fs_commit(fs), 0);
		g_snprintf(path, sizeof(path), "/d/file-with-a-longish-name-%05u", i);
		assert_int_equal(fs_create(fs, path, 0, &attributes), 0);
		assert_int_equal(fs_set_clock(fs, fs_clock(fs) + 1000000000ll), 0);
		fs_counters(fs, &before);
		assert_int_equal(fs_read(fs, first, &updated), 0);
		fs_counters(fs, &after);
		if (after.reserve_tickets > before.reserve_tickets)
			break;
	}
	assert_true(after.reserve_tickets > before.reserve_tickets); /* the read waited */
	assert_true(updated);
	fixture_assert_fs_ok(fs, "after the ticketed read");
	assert_int_equal(fs_read(fs, first, &updated), 0);
	assert_false(updated);
	fs_free(fs);
}

/* The filesystem around one create: its report, its waiting delayed items
 * and its writes waiting for writeback just before and just after. */
struct around_create {
	struct fs_report before, now;
	uint64_t waiting_before, waiting_after;
	unsigned writes_before, writes_after;
};

typedef bool (*create_stop_fn)(const struct around_create *last);

/* Creates files of `size` bytes in /d until STOP holds for a create, or
 * `files` were made; returns the files made, and in *last what surrounded
 * the last create. */
static unsigned create_until(struct fs *fs, unsigned files, uint64_t size, create_stop_fn stop,
			     struct around_create *last)
{
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	assert_int_equal(fs_mkdir(fs, "/d", &attributes), 0);
	for (unsigned i = 0; i < files; i++) {
		fs_report(fs, &last->before);
		last->waiting_before = delayed_items_count(fs);
		last->writes_before = fs->pending_writes->len;
		char path[64];
		g_snprintf(path, sizeof(path), "/d/file-with-a-longish-name-%05u", i);
		assert_int_equal(fs_create(fs, path, size, &attributes), 0);
		fs_report(fs, &last->now);
		last->waiting_after = delayed_items_count(fs);
		last->writes_after = fs->pending_writes->len;
		if (stop(last))
			return i + 1;
	}
	return files;
}

/* The create's reservation waited for the flusher. */
static bool a_ticket(const struct around_create *last)
{
	return last->now.counters.reserve_tickets > last->before.counters.reserve_tickets;
}

/* The create's own reservation wrote back the writes queued before it:
 * more waited before it, only its own after. */
static bool a_delalloc_flush(const struct around_create *last)
{
	return last->writes_before > 1 && last->writes_after == 1;
}

/* The flusher forced a metadata chunk during the create. */
static bool a_forced_chunk(const struct around_create *last)
{
	return last->now.counters.forced_chunks > last->before.counters.forced_chunks;
}

static void test_a_reservation_the_kernel_would_ticket_runs_the_delayed_items_first(void **state)
{
	(void)state;
	enum { FILES = 60000 };
	struct around_create last;
	/* 128 MiB: the metadata chunk fills and there is nothing to overcommit. */
	struct fs *small = fixture_fs_new(16384, 128 * MiB);
	unsigned made = create_until(small, FILES, 0, a_ticket, &last);
	assert_true(made < FILES);
	assert_true(last.waiting_before > 3);
	assert_true(last.waiting_after <= 3); /* only what that create queued itself */
	fixture_assert_fs_ok(small, "after a ticket");
	fs_free(small);
	/* 8 GiB: the same creates never wait; their items keep waiting. */
	struct fs *large = fixture_fs_new(16384, 8 * GiB);
	assert_int_equal(create_until(large, made, 0, a_ticket, &last), made);
	struct fs_counters counters;
	fs_counters(large, &counters);
	assert_int_equal(counters.reserve_tickets, 0);
	assert_true(last.waiting_after > 3);
	fs_free(large);
}

static void test_a_ticket_the_flush_cannot_satisfy_forces_a_metadata_chunk(void **state)
{
	(void)state;
	enum { FILES = 60000 };
	struct around_create last;
	/* 256 MiB, 4 KiB files: delayed items, refs and delalloc run, the
	 * flusher commits, and still nothing fits. */
	struct fs *small = fixture_fs_new(16384, 256 * MiB);
	unsigned made = create_until(small, FILES, 4096, a_forced_chunk, &last);
	assert_true(made < FILES);
	/* that very create's reservation added it */
	assert_true(last.now.space.metadata_total > last.before.space.metadata_total);
	struct fs_counters counters;
	fs_counters(small, &counters);
	assert_true(counters.reserve_tickets > 0);
	fixture_assert_fs_ok(small, "after a forced chunk");
	fs_free(small);
	/* 8 GiB: the same creates never force a chunk. */
	struct fs *large = fixture_fs_new(16384, 8 * GiB);
	assert_int_equal(create_until(large, made, 4096, a_forced_chunk, &last), made);
	fs_counters(large, &counters);
	assert_int_equal(counters.forced_chunks, 0);
	fs_free(large);
}

static void test_a_ticket_the_delayed_items_and_refs_cannot_satisfy_writes_delalloc_back(void **state)
{
	(void)state;
	enum { FILES = 60000 };
	struct around_create last;
	/* 256 MiB: each waiting write holds 640 KiB (btrfs_delalloc_reserve_metadata) */
	struct fs *small = fixture_fs_new(16384, 256 * MiB);
	unsigned made = create_until(small, FILES, 1024, a_delalloc_flush, &last);
	assert_true(made < FILES);
	assert_true(a_ticket(&last)); /* FLUSH_DELALLOC is a state of the ticket's flush */
	assert_int_equal(small->delalloc_reserved, 40 * 16384); /* the create's own write */
	fixture_assert_fs_ok(small, "after the ticket");
	fs_free(small);
	/* 8 GiB: nothing waits on a ticket; writes go back in batches, all of them. */
	struct fs *large = fixture_fs_new(16384, 8 * GiB);
	assert_int_equal(create_until(large, made, 1024, a_delalloc_flush, &last), made);
	struct fs_counters counters;
	fs_counters(large, &counters);
	assert_int_equal(counters.reserve_tickets, 0);
	fs_free(large);
}

/* The flusher committed for the create's reservation. */
static bool a_ticket_commit(const struct around_create *last)
{
	return last->now.counters.ticket_commits > last->before.counters.ticket_commits;
}

/* A ticket still short after delalloc commits first (the pinned blocks come back); only one
 * the commit cannot satisfy gets a forced chunk (ALLOC_CHUNK_FORCE waits for commit_cycles). */
static void test_a_ticket_still_short_after_delalloc_commits_before_it_forces_a_chunk(void **state)
{
	(void)state;
	enum { FILES = 60000 };
	struct around_create last;
	struct fs *fs = fixture_fs_new(16384, 256 * MiB);
	unsigned made = create_until(fs, FILES, 4096, a_ticket_commit, &last);
	assert_true(made < FILES);
	assert_int_equal(last.now.counters.commits, last.before.counters.commits + 1);
	assert_int_equal(last.now.counters.forced_chunks, last.before.counters.forced_chunks);
	assert_int_equal(last.now.space.metadata_total, last.before.space.metadata_total); /* the commit sufficed */
	fixture_assert_fs_ok(fs, "after the ticket's commit");
	fs_free(fs);
	/* The first forced chunk comes after a commit that did not suffice. */
	fs = fixture_fs_new(16384, 256 * MiB);
	create_until(fs, FILES, 4096, a_forced_chunk, &last);
	assert_true(a_ticket_commit(&last));
	fs_free(fs);
}

/* should_alloc_chunk(): an unforced metadata chunk once used + 2 MiB reaches 80 % of the total. */
static void test_an_unforced_chunk_is_wanted_from_80_percent_used(void **state)
{
	(void)state;
	struct fs *fs = fixture_fs_new(16384, 512 * MiB); /* mkfs's 32 MiB metadata chunk */
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	assert_int_equal(fs_mkdir(fs, "/d", &attributes), 0);
	bool saw_wanted = false, saw_not_wanted = false;
	for (unsigned i = 0; i < 200000 && !saw_wanted; i++) {
		char path[64];
		g_snprintf(path, sizeof(path), "/d/file-with-a-longish-name-%06u", i);
		assert_int_equal(fs_create(fs, path, 0, &attributes), 0);
		if (i % 2000)
			continue;
		assert_int_equal(fs_sync(fs), 0); /* nothing pinned after a commit */
		struct fs_report r;
		fs_report(fs, &r);
		bool by_rule = (r.space.metadata_used + 2 * MiB) * 100 >= r.space.metadata_total * 80;
		assert_int_equal(blockstore_metadata_wants_chunk(fs->store), by_rule);
		saw_wanted |= by_rule;
		saw_not_wanted |= !by_rule;
	}
	assert_true(saw_not_wanted);
	assert_true(saw_wanted);
	fs_free(fs);
}

/* mkfs.btrfs 6.2 leaves 12 MiB free after the reserved MiB; a DUP chunk keeps
 * both stripes in one hole, so once the tail is gone the device's last
 * metadata chunk is the 6 MiB one of that hole (traced on 512 MiB). */
static void test_the_last_metadata_chunk_of_a_small_device_is_the_6_mib_one_in_mkfs_front_hole(void **state)
{
	(void)state;
	struct blockstore_config config = { .nodesize = 16384, .device_size = 512 * MiB, .metadata_dup = true };
	struct blockstore *store = blockstore_new(&config, NULL);
	assert_non_null(store);
	unsigned forced = 0;
	while (blockstore_force_metadata_chunk(store))
		forced++;
	unsigned count;
	const struct chunk *chunks = blockstore_chunks(store, &count);
	assert_true(forced >= 2);
	assert_int_equal(chunks[count - 1].length, (BTRFS_MKFS_FRONT_HOLE / 2));
	assert_true(chunks[count - 1].in_front_hole);
	for (unsigned i = 0; i + 1 < count; i++)
		assert_false(chunks[i].in_front_hole); /* every larger one went to the tail */
	assert_true(chunks[count - 2].length > BTRFS_MKFS_FRONT_HOLE / 2);
	blockstore_free(store);
}

/* blockstore_reserve_at_once() is blockstore_reserve_fits() and then a
 * blockstore_reserve() that adds no chunk, or nothing: on twin filesystems,
 * reservations of 3 items without a release until the metadata chunks are
 * full, beside held bytes that fit and bytes that do not. */
static void test_a_reservation_at_once_is_the_ticket_check_and_a_reserve_that_adds_no_chunk(void **state)
{
	(void)state;
	struct fs *at_once = fixture_fs_new(16384, 2 * GiB), *twin = fixture_fs_new(16384, 2 * GiB);
	struct blockstore *s1 = at_once->store, *s2 = twin->store;
	unsigned chunks = blockstore_chunk_count(s1, false);
	assert_false(blockstore_reserve_at_once(s1, 3, UINT64_MAX / 4)); /* the ticket check fails */
	unsigned granted = 0;
	for (bool reserved = true; reserved; granted++) {
		uint64_t held = granted % 2 ? 0 : 64 * MiB;
		bool fits = blockstore_reserve_fits(s2, 3, held);
		reserved = fits && !blockstore_reserve(s2, 3) && blockstore_chunk_count(s2, false) == chunks;
		assert_int_equal(blockstore_reserve_at_once(s1, 3, held), reserved);
	}
	/* The metadata chunks filled (blockstore_reserve() then adds one), and
	 * the reservations at once added none. */
	assert_true(granted > 100);
	assert_int_equal(blockstore_chunk_count(s1, false), chunks);
	fs_free(at_once);
	fs_free(twin);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunk_alloc_mkfs_metadata_is_half_a_tenth_of_the_device_between_32_mib_and_the_maximum),
		cmocka_unit_test(test_chunk_alloc_kernel_chunks_are_a_tenth_of_the_device_rounded_up_to_16_mib_and_capped),
		cmocka_unit_test(test_chunk_alloc_last_chunk_shrinks_to_what_the_device_has_left),
		cmocka_unit_test(test_chunk_alloc_fresh_filesystem_totals_are_what_mkfs_made),
		cmocka_unit_test(test_enospc_in_an_atime_update_loses_the_update_and_the_read_succeeds),
		cmocka_unit_test(test_enospc_read_fail_what_if_fails_the_read_and_loses_nothing),
		cmocka_unit_test(test_a_settime_after_a_lost_atime_update_sets_the_atime_in_force),
		cmocka_unit_test(test_an_atime_written_after_a_lost_update_is_the_atime_in_force),
		cmocka_unit_test(test_a_read_whose_reservation_waits_on_a_ticket_writes_the_atime_into_the_current_tree),
		cmocka_unit_test(test_a_reservation_the_kernel_would_ticket_runs_the_delayed_items_first),
		cmocka_unit_test(test_a_reservation_at_once_is_the_ticket_check_and_a_reserve_that_adds_no_chunk),
		cmocka_unit_test(test_a_ticket_the_flush_cannot_satisfy_forces_a_metadata_chunk),
		cmocka_unit_test(test_a_ticket_the_delayed_items_and_refs_cannot_satisfy_writes_delalloc_back),
		cmocka_unit_test(test_a_ticket_still_short_after_delalloc_commits_before_it_forces_a_chunk),
		cmocka_unit_test(test_an_unforced_chunk_is_wanted_from_80_percent_used),
		cmocka_unit_test(test_the_last_metadata_chunk_of_a_small_device_is_the_6_mib_one_in_mkfs_front_hole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
