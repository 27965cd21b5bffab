/*
 * sim/cmd_bench.c - `cowsim bench`: how fast and how big the model is.
 *
 * Drives the model directly (no trace parsing) through the same fs_* calls a
 * replay makes, on a synthetic tree of N files in directories of 100:
 *   populate        mkdir + create of every file (1 KiB, inline), then sync
 *   atime-exclusive strictatime reads of every file, no snapshot: leaves
 *                   copied once per transaction, then changed in place
 *   atime-unshare   the same after S snapshots of /, then a read of every
 *                   file in every tree (one grep over all S + 1 trees): each
 *                   first update unshares a leaf
 * and reports ops/s for each, the wall time of the whole point, peak RSS so
 * far (sizes run in the order given: ascending, it is each point's peak), and
 * the simulator's heap bytes per modeled item and per modeled tree block
 * (glibc mallinfo2: heap in use after populate over the items and blocks it
 * holds, and after the unsharing reads over the blocks then live). Cost per
 * operation against N is the O(log n) curve: ns/op grows by a constant per
 * tenfold N when it is logarithmic.
 *
 * --year N runs the year scenario instead: N files, then 365 days of a read
 * of a twentieth of the files (the next consecutive twentieth each day, as a
 * working set moves through a tree), a snapshot of / into /snapshots, the
 * oldest deleted beyond --keep, and a sync.
 *
 * --big-files N measures cost against size (issue 21.3): N/4, N/2 and N
 * files of 1 GiB created and synced, then one file of N/4, N/2 and N GiB.
 * Each line gives CPU seconds per GiB and the growth exponent between
 * N/4 and N (log of the time ratio over log 4): 1.0 is linear, a little
 * above it is O(N log N), 2 is quadratic. A file's extents are the model's
 * work (BTRFS_MAX_EXTENT_SIZE each): a create of B bytes should cost
 * O(extents), N files O(N log N).
 *
 * --snapshot-curve N measures memory against snapshots (issue 20): the
 * same point for N files of 8 KiB (one data extent each, as the seed's
 * headers have) at 0, 10, 30 and 100 snapshots, printing the simulator's heap
 * against the work (reads) and against the modeled metadata. Memory linear in
 * the work is a constant B/read. Past about 33 snapshots a data extent's
 * backrefs no longer fit inline in its extent item (BTRFS_MAX_EXTENT_ITEM_SIZE)
 * and each further reference is an extent-tree item of its own, as in btrfs:
 * the extent tree grows faster than the reads. The simulator stores a run of
 * them as one counted entry (model/btree.c BT9), so B/read stays flat there
 * (docs/performance.md, rounds 5a and 6a).
 *
 * Heap is glibc's mallinfo2(): bytes in use in the arena plus mmapped blocks.
 *
 * Wall times are noisy on a shared machine; compare the ratios within one run.
 */
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "huge_pages.h"
#include "fs.h"

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Bytes the simulator's malloc holds: arena chunks in use and mmapped ones. */
static uint64_t heap_in_use(void)
{
	struct mallinfo2 info = mallinfo2();
	return info.uordblks + info.hblkhd;
}

static uint64_t peak_rss_bytes(void)
{
	struct rusage usage;
	getrusage(RUSAGE_SELF, &usage);
	return (uint64_t)usage.ru_maxrss * 1024;
}

struct bench_point {
	uint64_t files;
	unsigned snapshots;
	double populate_ops, exclusive_ops, unshare_ops, seconds;
	double cpu_seconds;               /* CPU (user and system) of the point */
	double probe_seconds;             /* wall spent in heap_probe(): not in seconds */
	double probe_cpu_seconds;         /* and its CPU: not in cpu_seconds */
	uint64_t items, blocks, heap_bytes, metadata_before, metadata_after;
	uint64_t blocks_after, heap_after, peak_rss;
	uint64_t extent_tree_after;       /* bytes of extent-tree blocks after the reads */
};

/* heap_in_use() for a point's B/item figures, its time kept apart: mallinfo2()
 * walks glibc's free lists, which populate leaves long (0.6 s for the probe
 * after populating 3 x 10^6 files, at a load of 6.7), and the instrument is
 * not the scenario it measures. */
static uint64_t heap_probe(struct bench_point *p)
{
	double start = now_seconds(), cpu_start = cpu_seconds();
	uint64_t bytes = heap_in_use();
	p->probe_seconds += now_seconds() - start;
	p->probe_cpu_seconds += cpu_seconds() - cpu_start;
	return bytes;
}

#define FILES_PER_DIR 100u
#define NS_PER_SECOND 1000000000ll

/* Decimal digits of v into buf, at least `width` of them; returns the end.
 * snprintf cost more than the model's own work per read. */
static char *put_decimal(char *buf, uint64_t v, unsigned width)
{
	char digits[24];
	unsigned n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n < width)
		digits[n++] = '0';
	while (n)
		*buf++ = digits[--n];
	return buf;
}

/* "<prefix>/d<i/100>/file-<i, 6 digits>.c"; buf holds strlen(prefix) + 48.
 * Returns the length up to ".c". */
static size_t file_path(char *buf, const char *prefix, uint64_t i)
{
	size_t len = strlen(prefix);
	memcpy(buf, prefix, len);
	char *p = buf + len;
	memcpy(p, "/d", 2);
	p = put_decimal(p + 2, i / FILES_PER_DIR, 1);
	memcpy(p, "/file-", 6);
	p = put_decimal(p + 6, i, 6);
	memcpy(p, ".c", 3);
	return (size_t)(p - buf);
}

/*
 * file_path() for files in order, each from the one before: within a
 * directory only the file number counts up, in place. A carry out of its
 * first digit would make it a power of ten, a multiple of FILES_PER_DIR,
 * which starts a new directory and is written whole. Formatting every path
 * cost about a tenth of a read (330 instructions).
 */
struct file_paths {
	const char *prefix;
	char buf[96];
	size_t number_end;                /* where ".c" starts */
	size_t name_at;                   /* where "file-" starts */
	uint64_t last;                    /* the file in buf; UINT64_MAX: none yet */
};

static void file_paths_init(struct file_paths *paths, const char *prefix)
{
	paths->prefix = prefix;
	paths->last = UINT64_MAX;
}

static const char *file_paths_get(struct file_paths *paths, uint64_t i)
{
	if (i % FILES_PER_DIR && i == paths->last + 1) {
		char *digit = paths->buf + paths->number_end - 1;
		while (*digit == '9')
			*digit-- = '0';
		(*digit)++;
	} else {
		paths->number_end = file_path(paths->buf, paths->prefix, i);
		paths->name_at = (size_t)(strrchr(paths->buf, '/') - paths->buf) + 1;
	}
	paths->last = i;
	return paths->buf;
}

/* The path file_paths_get() returned last, measured. */
static struct fs_path file_paths_measured(const struct file_paths *paths)
{
	return (struct fs_path){ .bytes = paths->buf, .len = paths->number_end + 2 /* ".c" */, .name_at = paths->name_at };
}

static int populate(struct fs *fs, uint64_t files, uint64_t file_bytes)
{
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	attributes.atime = attributes.mtime = fs_clock(fs) - 86400 * NS_PER_SECOND;
	char dir[32];
	struct file_paths paths;
	file_paths_init(&paths, "");
	for (uint64_t i = 0; i < files; i++) {
		if (i % FILES_PER_DIR == 0) {
			snprintf(dir, sizeof(dir), "/d%" PRIu64, i / FILES_PER_DIR);
			if (fs_mkdir(fs, dir, &attributes))
				return -1;
		}
		if (fs_create(fs, file_paths_get(&paths, i), file_bytes, &attributes))
			return -1;
	}
	return fs_sync(fs);
}

/* Reads every file under each prefix once into *per_second reads per second;
 * 0, or -1 when a read or the sync fails (said on stderr). */
static int read_all(struct fs *fs, uint64_t files, unsigned trees, double *per_second)
{
	char prefix[32];
	fs_set_clock(fs, fs_clock(fs) + NS_PER_SECOND);
	double start = now_seconds();
	for (unsigned t = 0; t <= trees; t++) {
		if (t)
			snprintf(prefix, sizeof(prefix), "/snap%u", t);
		else
			prefix[0] = 0;
		struct file_paths paths;
		file_paths_init(&paths, prefix);
		for (uint64_t i = 0; i < files; i++) {
			/* Every file exists: a failed read is a broken path or model. */
			file_paths_get(&paths, i);
			struct fs_path path = file_paths_measured(&paths);
			int ret = fs_read_path(fs, &path, NULL);
			if (ret) {
				fprintf(stderr, "cowsim bench: reading %s failed: %s\n", paths.buf, g_strerror(-ret));
				return -1;
			}
		}
	}
	double elapsed = now_seconds() - start;
	*per_second = (double)files * (trees + 1) / elapsed;
	return fs_sync(fs);
}

static struct fs *bench_fs(uint32_t nodesize)
{
	struct fs_config config;
	fs_config_init(&config);
	config.nodesize = nodesize;
	config.device_size = 64ull << 40; /* room for any scale: space is not what is measured */
	config.atime.mode = ATIME_STRICT;
	config.start_time_ns = 1354320000ll * NS_PER_SECOND;
	g_autoptr(GError) error = NULL;
	struct fs *fs = fs_new(&config, &error);
	if (!fs)
		fprintf(stderr, "cowsim bench: %s\n", error->message);
	return fs;
}

static int bench_one(uint64_t files, uint64_t file_bytes, unsigned snapshots, uint32_t nodesize,
		     struct bench_point *p)
{
	double begin = now_seconds(), cpu_begin = cpu_seconds();
	g_autoptr(Filesystem) fs = bench_fs(nodesize);
	if (!fs)
		return -1;
	memset(p, 0, sizeof(*p));
	p->files = files;
	p->snapshots = snapshots;
	uint64_t heap_before = heap_probe(p);
	double start = now_seconds();
	if (populate(fs, files, file_bytes)) {
		fprintf(stderr, "cowsim bench: populating %" PRIu64 " files failed\n", files);
		return -1;
	}
	uint64_t dirs = (files + FILES_PER_DIR - 1) / FILES_PER_DIR;
	p->populate_ops = (double)(files + dirs) / (now_seconds() - start);
	struct fs_report report;
	fs_report(fs, &report);
	p->blocks = report.space.metadata_used / nodesize;
	/* Per file: inode item, inode ref, dir item, dir index, inline extent. */
	p->items = 5 * (files + dirs);
	p->heap_bytes = heap_probe(p) - heap_before;
	p->metadata_before = report.space.metadata_used;
	if (read_all(fs, files, 0, &p->exclusive_ops))
		return -1;
	for (unsigned s = 1; s <= snapshots; s++) {
		char dest[32];
		snprintf(dest, sizeof(dest), "/snap%u", s);
		if (fs_snapshot(fs, "/", dest, false))
			return -1;
	}
	if (snapshots && read_all(fs, files, snapshots, &p->unshare_ops))
		return -1;
	fs_report(fs, &report);
	p->metadata_after = report.space.metadata_used;
	p->blocks_after = report.space.metadata_used / nodesize;
	p->heap_after = heap_probe(p) - heap_before;
	p->extent_tree_after = report.space.tree_bytes[TREE_CATEGORY_EXTENT];
	p->seconds = now_seconds() - begin - p->probe_seconds;
	p->cpu_seconds = cpu_seconds() - cpu_begin - p->probe_cpu_seconds;
	p->peak_rss = peak_rss_bytes();
	return 0;
}

/* Issue 20's Done-when, for the points it names: atime updates per second at
 * 10^6 files, and the 10^7 scenario's time and peak RSS (the point's own when
 * it is the first or only size). */
#define GOAL_UPDATES_PER_SECOND 5e6
#define GOAL_SCENARIO_SECONDS 60.0
#define GOAL_SCENARIO_RSS_BYTES (4ull << 30)

static void print_goals(FILE *out, const struct bench_point *p)
{
	if (p->files == 1000000 && p->snapshots) {
		bool met = p->exclusive_ops >= GOAL_UPDATES_PER_SECOND && p->unshare_ops >= GOAL_UPDATES_PER_SECOND;
		fprintf(out, "goal: >= 5 M atime updates/s at 10^6 files, exclusive and unsharing: %.2f M and %.2f M/s: %s\n",
			p->exclusive_ops / 1e6, p->unshare_ops / 1e6, met ? "met" : "not met");
	}
	if (p->files == 10000000 && p->snapshots == 10) {
		bool met = p->seconds < GOAL_SCENARIO_SECONDS && p->peak_rss < GOAL_SCENARIO_RSS_BYTES;
		fprintf(out, "goal: the 10^7 scenario in under 60 s and 4 GiB peak RSS: %.1f s wall, %.1f s CPU (and %.1f s "
			"of the bench's heap probes), %.2f GiB: %s\n", p->seconds, p->cpu_seconds, p->probe_seconds,
			p->peak_rss / 1073741824.0, met ? "met" : "not met");
	}
}

static void print_header(FILE *out)
{
	fprintf(out, "%10s %5s %11s %12s %13s %9s %9s %9s %9s %9s %9s %8s %9s\n", "files", "snaps",
		"populate/s", "atime-excl/s", "atime-unshr/s", "ns/unshr", "B/item", "B/block", "B/blk-aft",
		"meta MiB", "after MiB", "total s", "RSS MiB");
}

static void print_point(FILE *out, const struct bench_point *p)
{
	fprintf(out, "%10" PRIu64 " %5u %11.0f %12.0f %13.0f %9.0f %9.1f %9.1f %9.1f %9.1f %9.1f %8.1f %9.1f\n",
		p->files, p->snapshots, p->populate_ops, p->exclusive_ops, p->unshare_ops,
		p->unshare_ops ? 1e9 / p->unshare_ops : 0.0, (double)p->heap_bytes / (double)p->items,
		(double)p->heap_bytes / (double)p->blocks, (double)p->heap_after / (double)p->blocks_after,
		p->metadata_before / 1048576.0, p->metadata_after / 1048576.0, p->seconds,
		p->peak_rss / 1048576.0);
}

/* --- memory against snapshots ---------------------------------------------- */

#define CURVE_FILE_BYTES 8192u /* a data extent each: no inline file */

static int bench_snapshot_curve(uint64_t files, uint32_t nodesize)
{
	static const unsigned snapshots[] = { 0, 10, 30, 100 };
	printf("snapshot curve: %" PRIu64 " files of %u bytes, a read of every file in every tree\n", files,
	       CURVE_FILE_BYTES);
	printf("%5s %11s %9s %11s %9s %9s %9s %9s %8s %9s\n", "snaps", "reads", "meta MiB", "extent MiB", "heap MiB",
	       "B/read", "B/more", "B/block", "total s", "RSS MiB");
	double more[G_N_ELEMENTS(snapshots)] = { 0 };
	uint64_t last_reads = 0, last_heap = 0;
	for (unsigned i = 0; i < G_N_ELEMENTS(snapshots); i++) {
		struct bench_point p;
		if (bench_one(files, CURVE_FILE_BYTES, snapshots[i], nodesize, &p))
			return -1;
		uint64_t reads = files * (2 + snapshots[i]); /* the exclusive pass, then every tree */
		if (!snapshots[i])
			reads = files;
		/* Heap per read beyond the previous point's: flat when memory is
		 * linear in the work. */
		more[i] = i ? ((double)p.heap_after - (double)last_heap) / (double)(reads - last_reads) : 0.0;
		printf("%5u %11" PRIu64 " %9.1f %11.1f %9.1f %9.1f %9.1f %9.1f %8.1f %9.1f\n", snapshots[i], reads,
		       p.metadata_after / 1048576.0, p.extent_tree_after / 1048576.0, p.heap_after / 1048576.0,
		       (double)p.heap_after / (double)reads, more[i], (double)p.heap_after / (double)p.blocks_after,
		       p.seconds, p.peak_rss / 1048576.0);
		fflush(stdout);
		last_reads = reads;
		last_heap = p.heap_after;
	}
	printf("linearity: heap per further read from 30 to 100 snapshots over that from 10 to 30: %.2f"
	       " (1.00 is linear)\n", more[2] > 0 ? more[3] / more[2] : 0.0);
	printf("peak RSS %.1f MiB\nheap pages: %s\n", peak_rss_bytes() / 1048576.0, huge_pages_state());
	return 0;
}

/* --- a year of daily snapshots --------------------------------------------- */

#define YEAR_DAYS 365u
#define YEAR_READ_SHARE 20u /* a twentieth of the files is read each day */

static int year_day(struct fs *fs, uint64_t files, unsigned day, unsigned keep, uint64_t *reads)
{
	char path[96];
	int64_t midnight = fs_clock(fs) - fs_clock(fs) % (86400 * NS_PER_SECOND) + 86400 * NS_PER_SECOND;
	fs_set_clock(fs, midnight + 9 * 3600 * NS_PER_SECOND);
	uint64_t share = (files + YEAR_READ_SHARE - 1) / YEAR_READ_SHARE;
	uint64_t first = day % YEAR_READ_SHARE * share;
	struct file_paths paths;
	file_paths_init(&paths, "");
	for (uint64_t i = first; i < MIN(files, first + share); i++) {
		file_paths_get(&paths, i);
		struct fs_path path = file_paths_measured(&paths);
		if (fs_read_path(fs, &path, NULL))
			return -1;
		(*reads)++;
	}
	fs_set_clock(fs, midnight + 23 * 3600 * NS_PER_SECOND);
	snprintf(path, sizeof(path), "/snapshots/day%03u", day);
	if (fs_snapshot(fs, "/", path, false))
		return -1;
	if (day >= keep) {
		snprintf(path, sizeof(path), "/snapshots/day%03u", day - keep);
		if (fs_delete_snapshot(fs, path))
			return -1;
	}
	return fs_sync(fs);
}

static int bench_year(uint64_t files, unsigned keep, uint32_t nodesize)
{
	double begin = now_seconds();
	g_autoptr(Filesystem) fs = bench_fs(nodesize);
	if (!fs)
		return -1;
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	if (populate(fs, files, 1024) || fs_mkdir(fs, "/snapshots", &attributes))
		return -1;
	double populated = now_seconds();
	uint64_t reads = 0;
	for (unsigned day = 0; day < YEAR_DAYS; day++) {
		if (year_day(fs, files, day, keep, &reads)) {
			fprintf(stderr, "cowsim bench: --year: day %u failed\n", day);
			return -1;
		}
	}
	double end = now_seconds();
	struct fs_report report;
	fs_report(fs, &report);
	printf("year: %" PRIu64 " files, %u days, keep %u: populate %.1f s, days %.1f s "
	       "(%" PRIu64 " reads, %.0f/s, %u snapshots made), total %.1f s, metadata %.1f MiB, "
	       "peak RSS %.1f MiB\n",
	       files, YEAR_DAYS, keep, populated - begin, end - populated, reads, reads / (end - populated),
	       YEAR_DAYS, end - begin, report.space.metadata_used / 1048576.0, peak_rss_bytes() / 1048576.0);
	return 0;
}

/* --- cost against size (issue 21.3) --------------------------------------- */

#define GIB (1ull << 30)

/* `files` files of `gib_each` GiB created and synced on a fresh filesystem:
 * CPU seconds (the model's; a fresh fs per point, freed outside the timing). */
static int big_point(uint32_t nodesize, uint64_t files, uint64_t gib_each, double *cpu)
{
	g_autoptr(Filesystem) fs = bench_fs(nodesize);
	if (!fs)
		return -1;
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	char path[48];
	double start = cpu_seconds();
	for (uint64_t i = 0; i < files; i++) {
		memcpy(path, "/big-", 5);
		*put_decimal(path + 5, i, 1) = '\0';
		if (fs_create(fs, path, gib_each * GIB, &attributes)) {
			fprintf(stderr, "cowsim bench: --big-files: creating %s failed\n", path);
			return -1;
		}
	}
	if (fs_sync(fs))
		return -1;
	*cpu = cpu_seconds() - start;
	return 0;
}

static void print_growth(const char *what, const uint64_t n[3], const double cpu[3], uint64_t gib_per_n)
{
	printf("%-22s", what);
	for (int k = 0; k < 3; k++)
		printf(" %8" PRIu64 ": %7.2f s (%6.1f us/GiB)", n[k], cpu[k], 1e6 * cpu[k] / (double)(n[k] * gib_per_n));
	printf("  exponent %.2f\n", log(MAX(cpu[2], 1e-6) / MAX(cpu[0], 1e-6)) / log(4.0));
}

static int bench_big(uint64_t files, uint32_t nodesize)
{
	const uint64_t n[3] = { MAX(files / 4, 1), MAX(files / 2, 1), files };
	double many[3], one[3];
	for (int k = 0; k < 3; k++)
		if (big_point(nodesize, n[k], 1, &many[k]) || big_point(nodesize, 1, n[k], &one[k]))
			return -1;
	printf("cost against size: CPU seconds to create and sync, exponent = log(t(N) / t(N/4)) / log 4\n");
	print_growth("files of 1 GiB", n, many, 1);
	print_growth("one file of N GiB", n, one, 1);
	printf("peak RSS %.1f MiB\nheap pages: %s\n", peak_rss_bytes() / 1048576.0, huge_pages_state());
	return 0;
}

static const struct cli_doc bench_doc = {
	.command = "bench",
	.summary = "Measures the model's speed and memory on synthetic trees of growing size.",
	.notes = "Columns: files, snapshots, populate ops/s, atime updates/s on exclusive leaves,\n"
		 "atime updates/s that unshare (reads of every file in every tree) and ns per such\n"
		 "read, heap bytes per modeled item and per modeled block after populate, heap bytes\n"
		 "per block after the unsharing reads, metadata MiB before and after, wall seconds\n"
		 "of the point (not counting the bench's three heap probes, mallinfo2, whose time\n"
		 "the 10^7 goal line gives), peak RSS so far. A point of 10^6 files, or of 10^7 with 10\n"
		 "snapshots, adds a goal line (issue 20: 5 M updates/s; 60 s and 4 GiB). Peak RSS\n"
		 "of the whole run is printed last, then what the heap runs on: cowsim restarts\n"
		 "itself with glibc.malloc.hugetlb=1 where the kernel gives transparent huge pages\n"
		 "to those who ask (COWSIM_HUGEPAGES=0: not).\n"
		 "--year N: a year of daily snapshots (keep K) with daily reads on N files.\n"
		 "--big-files N: CPU seconds to create and sync N/4, N/2 and N files of 1 GiB,\n"
		 "then one file of N/4, N/2 and N GiB, with the growth exponent (1 linear, 2\n"
		 "quadratic): the cost of a create against its size and its count.\n"
		 "--snapshot-curve N: memory against snapshots: N files of 8 KiB read in 0, 10, 30\n"
		 "and 100 snapshots; reads, metadata and extent-tree MiB, heap MiB, heap bytes per\n"
		 "read, per further read since the previous row (B/more: flat when memory is linear\n"
		 "in the work) and per modeled block; then B/more from 30 to 100 snapshots over\n"
		 "B/more from 10 to 30 (1.00 is linear).",
	.examples = "  cowsim bench --sizes 10000,100000\n"
		    "  cowsim bench --year 100000 --keep 30\n"
		    "  cowsim bench --big-files 8000\n"
		    "  cowsim bench --snapshot-curve 20000",
	.exits = "  0  measured\n"
		 "  1  the model failed\n"
		 "  2  bad arguments",
};

int cmd_bench(int argc, char **argv)
{
	g_autofree char *sizes_text = NULL;
	gint snapshots = 10, nodesize = 16384, keep = 30;
	gint64 year = 0, big_files = 0, curve = 0;
	const GOptionEntry entries[] = {
		{ "sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_text,
		  "file counts to measure, comma-separated (default 10000,100000,1000000)", "N,N,..." },
		{ "snapshots", 0, 0, G_OPTION_ARG_INT, &snapshots, "snapshots before the unsharing reads (default 10)",
		  "S" },
		{ "nodesize", 0, 0, G_OPTION_ARG_INT, &nodesize, "tree block size (default 16384)", "BYTES" },
		{ "year", 0, 0, G_OPTION_ARG_INT64, &year,
		  "instead: a year of daily snapshots of a tree of N files, daily reads of a twentieth", "N" },
		{ "keep", 0, 0, G_OPTION_ARG_INT, &keep, "--year: snapshots kept (default 30)", "K" },
		{ "big-files", 0, 0, G_OPTION_ARG_INT64, &big_files,
		  "instead: cost of N/4, N/2, N files of 1 GiB and of one file of as many GiB", "N" },
		{ "snapshot-curve", 0, 0, G_OPTION_ARG_INT64, &curve,
		  "instead: memory against snapshots (0, 10, 30, 100) for N files of 8 KiB", "N" },
		{ NULL },
	};
	g_autoptr(GOptionContext) context = cli_context_new(&bench_doc);
	g_option_context_add_main_entries(context, entries, NULL);
	if (!cli_parse(context, &bench_doc, &argc, &argv))
		return EXIT_BAD_INPUT;
	if (snapshots < 0 || snapshots > 1000 || nodesize < 4096 || nodesize > 65536 || (nodesize & (nodesize - 1))) {
		fprintf(stderr, "cowsim bench: --snapshots 0..1000, --nodesize a power of two from 4096 to 65536\n");
		return EXIT_BAD_INPUT;
	}
	if (year < 0 || year > 100000000 || keep < 1 || keep > 365) {
		fprintf(stderr, "cowsim bench: --year 1..10^8 files, --keep 1..365\n");
		return EXIT_BAD_INPUT;
	}
	if (big_files < 0 || big_files > 32768) {
		fprintf(stderr, "cowsim bench: --big-files 1..32768 (GiB on a 64 TiB device)\n");
		return EXIT_BAD_INPUT;
	}
	if (curve < 0 || curve > 10000000) {
		fprintf(stderr, "cowsim bench: --snapshot-curve 1..10^7 files\n");
		return EXIT_BAD_INPUT;
	}
	if (curve)
		return bench_snapshot_curve((uint64_t)curve, (uint32_t)nodesize) ? EXIT_RUN_FAILED : EXIT_OK;
	if (big_files)
		return bench_big((uint64_t)big_files, (uint32_t)nodesize) ? EXIT_RUN_FAILED : EXIT_OK;
	if (year)
		return bench_year((uint64_t)year, (unsigned)keep, (uint32_t)nodesize) ? EXIT_RUN_FAILED : EXIT_OK;
	g_auto(GStrv) sizes = g_strsplit(sizes_text ? sizes_text : "10000,100000,1000000", ",", -1);
	print_header(stdout);
	g_autofree struct bench_point *goals = g_new0(struct bench_point, g_strv_length(sizes));
	unsigned ngoals = 0;
	for (unsigned i = 0; sizes[i]; i++) {
		char *end;
		uint64_t files = g_ascii_strtoull(sizes[i], &end, 10);
		if (end == sizes[i] || *end || !files || files > 100000000) {
			fprintf(stderr, "cowsim bench: --sizes: '%s' is not a file count from 1 to 10^8\n", sizes[i]);
			return EXIT_BAD_INPUT;
		}
		struct bench_point p;
		if (bench_one(files, 1024, (unsigned)snapshots, (uint32_t)nodesize, &p))
			return EXIT_RUN_FAILED;
		print_point(stdout, &p);
		fflush(stdout);
		goals[ngoals++] = p;
	}
	for (unsigned i = 0; i < ngoals; i++)
		print_goals(stdout, &goals[i]);
	printf("peak RSS %.1f MiB\nheap pages: %s\n", peak_rss_bytes() / 1048576.0, huge_pages_state());
	return EXIT_OK;
}
