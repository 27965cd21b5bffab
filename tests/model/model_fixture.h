/*
 * tests/model/model_fixture.h - what the model tests share.
 *
 * Two fixtures:
 *  - struct tree_fixture: a block store, an extent tree, the reference
 *    bookkeeping that feeds it, a running transaction and one tree under
 *    test, built from the public btree/refs/blockstore API the way fs.c
 *    builds its trees. tree_fixture_commit() ends the transaction as
 *    fs_commit() does (refs into the extent tree, unpin, transid + 1), so a
 *    test can make "the next transaction" and watch copy-on-write start.
 *  - fs helpers over model/fs.h only: a filesystem of a given nodesize and
 *    device, its space numbers, and a check that dumps every tree to stderr
 *    when an invariant breaks.
 * And a seeded xorshift generator: every randomized test starts from a
 * constant seed and prints it when it fails, never from the time.
 */
#ifndef COWSIM_TESTS_MODEL_FIXTURE_H
#define COWSIM_TESTS_MODEL_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <glib.h>

#include "blockstore.h"
#include "btree.h"
#include "fs.h"
#include "refs.h"
#include "transaction.h"

/* --- the tree fixture ------------------------------------------------------ */

struct tree_fixture {
	uint32_t nodesize;
	struct blockstore *store;
	struct refs *refs;
	struct btree extent_tree;
	struct btree tree;                /* the tree under test, id 5 (a subvolume) */
	struct btree *extra[4];           /* further roots (snapshot-like copies), owned */
	unsigned nextra;
	struct transaction txn;
};

/* A 4 GiB store of `nodesize`, an empty extent tree and an empty tree 5. */
struct tree_fixture *tree_fixture_new(uint32_t nodesize);
void tree_fixture_free(struct tree_fixture *f);

/* End the running transaction as fs_commit() does. */
void tree_fixture_commit(struct tree_fixture *f);

/* A snapshot-like copy of tree 5's root as tree `id` (what fs_snapshot()
 * does): a new root block owned by `id` with the same children, each child
 * gaining one reference. Returns the new tree, owned by the fixture. */
struct btree *tree_fixture_clone_root(struct tree_fixture *f, uint64_t id);

/* btree_check on every tree, then refs_check and blockstore_check. Fails
 * the test (with `what` and a dump of the trees on stderr) on a violation. */
void tree_fixture_assert_ok(struct tree_fixture *f, const char *what);

static inline struct btree_key fixture_key(uint64_t objectid, uint64_t offset)
{
	return BTRFS_KEY(objectid, 1, offset);
}

/* Items of tree 5, counted by walking it. */
uint64_t tree_fixture_items(const struct btree *tree);

/* The subtrees are the same block for block: addresses, levels,
 * generations, keys, item sizes and, with `payloads`, the payloads' bytes
 * (not across filesystems: names and extents are pointers). Two fixtures or
 * filesystems that made the same changes in the same order allocate the
 * same addresses. */
void fixture_assert_same_blocks(const struct tree_block *a, const struct tree_block *b, bool payloads);

/* --- filesystem helpers ---------------------------------------------------- */

/* fs_new with fs_config_init defaults and this nodesize and device size;
 * fails the test when fs_new refuses. */
struct fs *fixture_fs_new(uint32_t nodesize, uint64_t device_size);
/* The same from a caller's config. */
struct fs *fixture_fs_new_config(const struct fs_config *config);

uint64_t fixture_metadata_used(const struct fs *fs);
uint64_t fixture_data_used(const struct fs *fs);
void fixture_counters(const struct fs *fs, struct fs_counters *counters);

/* fs_check; on failure prints `what`, the error and fs_dump to stderr and
 * fails the test. */
void fixture_assert_fs_ok(struct fs *fs, const char *what);
/* fs_check fails and its report starts with `want` ("corrupt <type>: ..."),
 * printed as a TAP comment; for the tests that break an invariant. */
void fixture_assert_fs_corrupt(struct fs *fs, const char *want);

/* /d and in it `files` files /d/file-000...: two of three with 9000+ bytes of
 * data in an extent, one of three 100 bytes inline. */
void fixture_make_files(struct fs *fs, unsigned files);
/* The same in the directory DIR_PATH (made here). */
void fixture_make_files_in(struct fs *fs, const char *dir_path, unsigned files);

/* Attributes with fixed atime and mtime (ctime "now"). */
struct fs_attributes fixture_attributes(uint32_t mode, int64_t atime, int64_t mtime);

/* An atime update lost to ENOSPC (model/atime_policy.c): a 128 MiB
 * strictatime filesystem, `config`'s design and policy, whose metadata ran
 * out. /d holds FIXTURE_LOST_FILES empty files (atime and mtime an hour
 * before the clock), snapshots /s1, /s2, ... of / were read one by one until
 * an atime update found no space (the inline policy's after about 7, the
 * side table's after about 50), then one second later the read of
 * FIXTURE_LOST_PATH (in /, its leaf still shared) lost its update too. */
#define FIXTURE_LOST_FILES 20000u
#define FIXTURE_LOST_SNAPSHOTS 64u
#define FIXTURE_LOST_PATH "/d/f19999"
struct fs *fixture_fs_with_a_lost_atime(const struct fs_config *config);
/* Unlinks half of /s1's files, whose leaves its read made private (with the
 * inline policy: the side table's keeps them shared): room again for a
 * settime and an atime update. */
void fixture_make_metadata_room(struct fs *fs);

#define SECOND_NS (1000000000ll)
#define HOUR_NS (3600ll * SECOND_NS)
#define DAY_NS (24ll * HOUR_NS)
#define MIB (1ull << 20)

/* --- a seeded generator ----------------------------------------------------- */

/* xorshift64*: small, fast, the same numbers on every machine. */
struct rng {
	uint64_t state;
};

static inline void rng_seed(struct rng *r, uint64_t seed)
{
	r->state = seed ? seed : 0x9e3779b97f4a7c15ull;
}

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t x = r->state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, n), n > 0. */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	return rng_next(r) % n;
}

/* Uniform in (0, 1). */
static inline double rng_unit(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal, Box-Muller. */
double rng_normal(struct rng *r);

#endif
