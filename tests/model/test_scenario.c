/*
 * tests/model/test_scenario.c - issue 2's acceptance scenario: a tree shaped
 * like /usr/include, copied in, snapshotted, then read in full.
 *
 * The shape (docs/btrfs-ground-truth.md section 5, measured with find on the
 * calibration machine): 24740 entries = 2024 directories (the top included),
 * 22685 regular files and 31 symlinks. Of the files, 8258 are 1..2048 bytes
 * (mean ~1117, inline), one is empty, and 14426 are larger (241215317 bytes
 * in all); names average 13.48 bytes; directories average 12.2 entries, a
 * few hold hundreds. The generator below draws such a tree from a fixed seed:
 * directory weights are lognormal, so a few directories are big and most are
 * small; each entry picks its directory by weight.
 *
 * The experiment, as tools/ground-truth-run ran it on real btrfs
 * (/work/shared/calibration/public.csv):
 *   cp -a /usr/include /mnt/tree       (atime and mtime from the source, ctime now)
 *   N x btrfs subvolume snapshot /mnt /mnt/snapI
 *   grep -R over everything            (read every file, list every directory)
 * with Metadata used after each step. Real btrfs, 16 KiB, relatime:
 * 25559040 after the copy; 10 snapshots: x10.4 after the grep; 1: x1.96;
 * 0: unchanged.
 */
#include "model_fixture.h"

#include <math.h>
#include <string.h>

#define SHAPE_SEED 0x05c1a55eull
#define DIRECTORIES 2024u          /* the top included */
#define SMALL_FILES 8258u          /* 1..2048 bytes */
#define LARGE_FILES 14426u         /* > 2048 bytes */
#define EMPTY_FILES 1u
#define SYMLINKS 31u
#define LARGE_BYTES ((uint64_t)241215317)
#define REAL_AFTER_COPY ((uint64_t)25559040) /* public.csv: relatime, 16 KiB */

enum kind { K_DIR, K_FILE, K_LINK };

struct node {
	char *name;
	enum kind kind;
	uint64_t size;
	int64_t atime, mtime;
	GPtrArray *children;       /* struct node *, directories only, readdir order */
	unsigned depth;
};

struct shape {
	struct node *top;
	GPtrArray *all;            /* every node, owns them */
	uint64_t name_bytes, small_bytes, large_bytes;
	unsigned max_entries;
};

/* Words of /usr/include names; names are words joined by '_' or '-' and
 * cut or padded to a drawn length. */
static const char *const words[] = {
	"linux", "asm", "generic", "sys", "socket", "stdio", "types", "bits", "net", "netinet", "arpa", "ioctl",
	"config", "kernel", "module", "fs", "xfs", "gtk", "glib", "private", "internal", "device", "driver", "ip",
	"tcp", "udp", "if", "ether", "video", "sound", "usb", "pci", "scsi", "mtd", "rdma", "uapi", "x86", "arm",
	"unistd", "string", "stdlib", "math", "time", "signal", "pthread", "sched", "limits", "errno", "fcntl",
	"stat", "mman", "wait", "poll", "select", "uio", "un", "in6", "route", "netlink", "filter", "bpf", "perf",
	"event", "trace", "atomic", "spinlock", "byteorder", "swab", "posix", "c++", "tr1", "ext", "debug", "impl",
};

static char *make_name(struct rng *r, GHashTable *taken, enum kind kind)
{
	/* Length: 2 + a sum of three exponentials, mean about 13.5. */
	double drawn = 2.0 - 3.83 * (log(rng_unit(r)) + log(rng_unit(r)) + log(rng_unit(r)));
	size_t length = (size_t)CLAMP(drawn, 1.0, 120.0);
	const char *ext = kind == K_FILE && rng_below(r, 10) < 8 ? ".h" : "";
	for (unsigned attempt = 0;; attempt++) {
		GString *s = g_string_new(NULL);
		while (s->len + strlen(ext) < length) {
			if (s->len)
				g_string_append_c(s, rng_below(r, 3) ? '_' : '-');
			g_string_append(s, words[rng_below(r, G_N_ELEMENTS(words))]);
		}
		g_string_truncate(s, length > strlen(ext) ? length - strlen(ext) : 1);
		if (attempt)
			g_string_append_printf(s, "%u", attempt);
		g_string_append(s, ext);
		if (g_hash_table_add(taken, s->str))
			return g_string_free(s, FALSE);
		g_string_free(s, TRUE);
	}
}

static struct node *node_new(struct shape *shape, enum kind kind)
{
	struct node *n = g_new0(struct node, 1);
	n->kind = kind;
	if (kind == K_DIR)
		n->children = g_ptr_array_new();
	g_ptr_array_add(shape->all, n);
	return n;
}

static void node_free(gpointer data)
{
	struct node *n = data;
	if (n->children)
		g_ptr_array_unref(n->children);
	g_free(n->name);
	g_free(n);
}

/* Index into cumulative weights `cum` (length n) for a uniform draw. */
static unsigned pick_weighted(struct rng *r, const double *cum, unsigned n)
{
	double x = rng_unit(r) * cum[n - 1];
	unsigned low = 0, high = n - 1;
	while (low < high) {
		unsigned mid = (low + high) / 2;
		if (cum[mid] < x)
			low = mid + 1;
		else
			high = mid;
	}
	return low;
}

/* The sizes of every regular file, in a shuffled order. */
static uint64_t *file_sizes(struct rng *r, unsigned *count, struct shape *shape)
{
	unsigned n = SMALL_FILES + LARGE_FILES + EMPTY_FILES;
	uint64_t *sizes = g_new0(uint64_t, n);
	double *large = g_new(double, LARGE_FILES), sum = 0;
	for (unsigned i = 0; i < SMALL_FILES; i++) {
		sizes[i] = 1 + (uint64_t)(2047.0 * pow(rng_unit(r), 0.85));
		shape->small_bytes += sizes[i];
	}
	for (unsigned i = 0; i < LARGE_FILES; i++) {
		large[i] = exp(8.874 + 1.2 * rng_normal(r));
		sum += large[i];
	}
	/* Scale the lognormal part so the large files add up to the measured total. */
	double scale = (double)(LARGE_BYTES - 2049ull * LARGE_FILES) / sum;
	for (unsigned i = 0; i < LARGE_FILES; i++) {
		sizes[SMALL_FILES + i] = 2049 + (uint64_t)(large[i] * scale);
		shape->large_bytes += sizes[SMALL_FILES + i];
	}
	g_free(large);
	for (unsigned i = n; i > 1; i--) {
		unsigned j = (unsigned)rng_below(r, i);
		uint64_t t = sizes[i - 1];
		sizes[i - 1] = sizes[j];
		sizes[j] = t;
	}
	*count = n;
	return sizes;
}

static void shuffle_children(struct rng *r, struct node *dir)
{
	GPtrArray *c = dir->children;
	for (unsigned i = c->len; i > 1; i--) {
		unsigned j = (unsigned)rng_below(r, i);
		gpointer t = c->pdata[i - 1];
		c->pdata[i - 1] = c->pdata[j];
		c->pdata[j] = t;
	}
}

static struct shape *shape_new(int64_t now)
{
	struct rng r;
	rng_seed(&r, SHAPE_SEED);
	struct shape *shape = g_new0(struct shape, 1);
	shape->all = g_ptr_array_new_with_free_func(node_free);
	struct node **dirs = g_new(struct node *, DIRECTORIES);
	double *weight = g_new(double, DIRECTORIES), *cum = g_new(double, DIRECTORIES);
	GHashTable **taken = g_new(GHashTable *, DIRECTORIES);
	for (unsigned i = 0; i < DIRECTORIES; i++) {
		dirs[i] = node_new(shape, K_DIR);
		weight[i] = exp(1.3 * rng_normal(&r));
		taken[i] = g_hash_table_new(g_str_hash, g_str_equal);
	}
	shape->top = dirs[0];
	shape->top->name = g_strdup("tree");
	/* Directories: each under an earlier one, by weight, at most 7 deep. */
	cum[0] = weight[0];
	for (unsigned i = 1; i < DIRECTORIES; i++) {
		unsigned parent;
		do
			parent = pick_weighted(&r, cum, i);
		while (dirs[parent]->depth >= 7);
		dirs[i]->depth = dirs[parent]->depth + 1;
		dirs[i]->name = make_name(&r, taken[parent], K_DIR);
		g_ptr_array_add(dirs[parent]->children, dirs[i]);
		cum[i] = cum[i - 1] + weight[i];
	}
	unsigned nfiles;
	g_autofree uint64_t *sizes = file_sizes(&r, &nfiles, shape);
	for (unsigned i = 0; i < nfiles + SYMLINKS; i++) {
		unsigned d = pick_weighted(&r, cum, DIRECTORIES);
		struct node *n = node_new(shape, i < nfiles ? K_FILE : K_LINK);
		n->size = i < nfiles ? sizes[i] : 8 + rng_below(&r, 17); /* a target of ~16 bytes */
		n->name = make_name(&r, taken[d], n->kind);
		g_ptr_array_add(dirs[d]->children, n);
	}
	for (unsigned i = 0; i < shape->all->len; i++) {
		struct node *n = shape->all->pdata[i];
		/* Source times: up to three years before now, atime == mtime. */
		n->mtime = n->atime = now - (int64_t)(1 + rng_below(&r, 3 * 365)) * DAY_NS;
		if (n != shape->top)
			shape->name_bytes += strlen(n->name);
		if (n->kind == K_DIR) {
			shuffle_children(&r, n);
			shape->max_entries = MAX(shape->max_entries, n->children->len);
		}
	}
	for (unsigned i = 0; i < DIRECTORIES; i++)
		g_hash_table_unref(taken[i]);
	g_free(taken);
	g_free(dirs);
	g_free(weight);
	g_free(cum);
	return shape;
}

static void shape_free(struct shape *shape)
{
	g_ptr_array_unref(shape->all);
	g_free(shape);
}

/* --- the experiment ------------------------------------------------------------ */

static void expect_ok(int ret, const char *what, const char *path)
{
	if (ret)
		fail_msg("%s %s: %d (%s)", what, path, ret, g_strerror(-ret));
}

/* cp -a: depth first in readdir order; a directory gets its source times
 * back after its contents are in. */
static void copy_in(struct fs *fs, const struct node *dir, GString *path)
{
	size_t len = path->len;
	struct fs_attributes a = fixture_attributes(0755, dir->atime, dir->mtime);
	expect_ok(fs_mkdir(fs, path->str, &a), "mkdir", path->str);
	for (unsigned i = 0; i < dir->children->len; i++) {
		const struct node *n = dir->children->pdata[i];
		g_string_append_c(path, '/');
		g_string_append(path, n->name);
		if (n->kind == K_DIR) {
			copy_in(fs, n, path);
		} else if (n->kind == K_FILE) {
			struct fs_attributes f = fixture_attributes(0644, n->atime, n->mtime);
			expect_ok(fs_create(fs, path->str, n->size, &f), "create", path->str);
		} else {
			struct fs_attributes l = fixture_attributes(0777, n->atime, n->mtime);
			g_autofree char *target = g_strnfill(n->size, 't');
			expect_ok(fs_symlink(fs, target, path->str, &l), "symlink", path->str);
		}
		g_string_truncate(path, len);
	}
	expect_ok(fs_settime(fs, path->str, dir->atime, dir->mtime), "settime", path->str);
}

/* grep -R: list every directory, read every regular file. */
static void sweep(struct fs *fs, const struct node *dir, GString *path, uint64_t *updates)
{
	size_t len = path->len;
	bool updated;
	expect_ok(fs_readdir(fs, path->str, &updated), "readdir", path->str);
	*updates += updated;
	for (unsigned i = 0; i < dir->children->len; i++) {
		const struct node *n = dir->children->pdata[i];
		g_string_append_c(path, '/');
		g_string_append(path, n->name);
		if (n->kind == K_DIR) {
			sweep(fs, n, path, updates);
		} else if (n->kind == K_FILE) {
			expect_ok(fs_read(fs, path->str, &updated), "read", path->str);
			*updates += updated;
		}
		g_string_truncate(path, len);
	}
}

struct measurement {
	uint64_t after_copy, after_snapshots, after_sweep;
	uint64_t atime_updates;
	double seconds;
};

static void run_experiment(unsigned snapshots, struct measurement *m)
{
	g_autoptr(GTimer) timer = g_timer_new();
	struct fs *fs = fixture_fs_new(16384, 4ull << 30);
	int64_t start = fs_clock(fs);
	struct shape *shape = shape_new(start);
	/* The copy runs at start + 1 min: after every source time, so ctime > atime. */
	expect_ok(fs_set_clock(fs, start + 60 * SECOND_NS), "clock", "");
	g_autoptr(GString) path = g_string_new("/tree");
	copy_in(fs, shape->top, path);
	expect_ok(fs_sync(fs), "sync", "after the copy");
	fixture_assert_fs_ok(fs, "the copy");
	m->after_copy = fixture_metadata_used(fs);

	for (unsigned i = 1; i <= snapshots; i++) {
		g_autofree char *dest = g_strdup_printf("/snap%u", i);
		expect_ok(fs_snapshot(fs, "/", dest, false), "snapshot", dest);
	}
	expect_ok(fs_sync(fs), "sync", "after the snapshots");
	fixture_assert_fs_ok(fs, "the snapshots");
	m->after_snapshots = fixture_metadata_used(fs);

	expect_ok(fs_set_clock(fs, start + 120 * SECOND_NS), "clock", "");
	m->atime_updates = 0;
	g_string_assign(path, "/tree");
	sweep(fs, shape->top, path, &m->atime_updates);
	for (unsigned i = 1; i <= snapshots; i++) {
		g_string_printf(path, "/snap%u/tree", i);
		sweep(fs, shape->top, path, &m->atime_updates);
	}
	expect_ok(fs_sync(fs), "sync", "after the sweep");
	fixture_assert_fs_ok(fs, "the sweep");
	m->after_sweep = fixture_metadata_used(fs);
	m->seconds = g_timer_elapsed(timer, NULL);
	print_message("# usr-include, 16 KiB, relatime, %u snapshots: after copy %" G_GUINT64_FORMAT
		      " (real %" G_GUINT64_FORMAT ", %+.1f%%), after snapshots %" G_GUINT64_FORMAT
		      ", after sweep %" G_GUINT64_FORMAT " (x%.2f of the copy), %" G_GUINT64_FORMAT
		      " atime updates, %.1f s\n", snapshots, m->after_copy, REAL_AFTER_COPY,
		      100.0 * ((double)m->after_copy / (double)REAL_AFTER_COPY - 1.0), m->after_snapshots,
		      m->after_sweep, (double)m->after_sweep / (double)m->after_copy, m->atime_updates, m->seconds);
	shape_free(shape);
	fs_free(fs);
}

static void test_scenario_shape_matches_usr_include(void **state)
{
	struct shape *shape = shape_new(0);
	unsigned dirs = 0, files = 0, links = 0, small = 0, empty = 0, large = 0;
	for (unsigned i = 0; i < shape->all->len; i++) {
		const struct node *n = shape->all->pdata[i];
		dirs += n->kind == K_DIR;
		links += n->kind == K_LINK;
		if (n->kind != K_FILE)
			continue;
		files++;
		empty += n->size == 0;
		small += n->size >= 1 && n->size <= 2048;
		large += n->size > 2048;
	}
	double mean_name = (double)shape->name_bytes / (shape->all->len - 1);
	double mean_small = (double)shape->small_bytes / SMALL_FILES;
	print_message("# shape: %u entries, %u dirs (max %u entries), %u files (%u small, mean %.0f B; %u large, %"
		      G_GUINT64_FORMAT " B), %u symlinks, mean name %.2f B\n", shape->all->len, dirs,
		      shape->max_entries, files, small, mean_small, large, shape->large_bytes, links, mean_name);
	assert_int_equal(shape->all->len, 24740);
	assert_int_equal(dirs, DIRECTORIES);
	assert_int_equal(files, 22685);
	assert_int_equal(small, SMALL_FILES);
	assert_int_equal(large, LARGE_FILES);
	assert_int_equal(empty, EMPTY_FILES);
	assert_int_equal(links, SYMLINKS);
	assert_in_range(shape->large_bytes, LARGE_BYTES - LARGE_BYTES / 100, LARGE_BYTES);
	assert_true(mean_small > 1000 && mean_small < 1200);
	assert_true(mean_name > 12.0 && mean_name < 15.0);
	/* A few big directories, many small: the biggest holds hundreds. */
	assert_in_range(shape->max_entries, 150, 800);
	shape_free(shape);
}

static void test_scenario_copy_is_within_10_percent_of_real_btrfs(void **state)
{
	struct measurement m;
	run_experiment(0, &m);
	assert_in_range(m.after_copy, REAL_AFTER_COPY * 9 / 10, REAL_AFTER_COPY * 11 / 10);
}

static void test_scenario_sweep_without_snapshots_changes_metadata_by_under_2_percent(void **state)
{
	struct measurement m;
	run_experiment(0, &m);
	assert_true(m.atime_updates > 24000); /* relatime: every first read after cp -a updates */
	double change = fabs((double)m.after_sweep - (double)m.after_copy) / (double)m.after_copy;
	assert_true(change < 0.02);
}

static void test_scenario_sweep_after_1_snapshot_grows_metadata_1_7_to_2_3_times(void **state)
{
	struct measurement m;
	run_experiment(1, &m);
	double ratio = (double)m.after_sweep / (double)m.after_copy;
	assert_true(ratio >= 1.7 && ratio <= 2.3);
}

static void test_scenario_sweep_after_10_snapshots_grows_metadata_at_least_8_times(void **state)
{
	struct measurement m;
	run_experiment(10, &m);
	assert_true((double)m.after_sweep >= 8.0 * (double)m.after_copy);
	assert_in_range(m.after_copy, REAL_AFTER_COPY * 9 / 10, REAL_AFTER_COPY * 11 / 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scenario_shape_matches_usr_include),
		cmocka_unit_test(test_scenario_copy_is_within_10_percent_of_real_btrfs),
		cmocka_unit_test(test_scenario_sweep_without_snapshots_changes_metadata_by_under_2_percent),
		cmocka_unit_test(test_scenario_sweep_after_1_snapshot_grows_metadata_1_7_to_2_3_times),
		cmocka_unit_test(test_scenario_sweep_after_10_snapshots_grows_metadata_at_least_8_times),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
