/*
 * sim/cmd_bench.c - `cowsim bench`: how fast and how big the model is.
 *
 * Drives the model directly (no trace parsing) through the same fs_* calls a
 * replay makes, on a synthetic tree of N files in directories of 100:
 *   populate        mkdir + create of every file (1 KiB, inline), then sync
 *   atime-exclusive strictatime reads of every file, no snapshot: leaves
 *                   copied once per transaction, then changed in place
 *   atime-unshare   the same after S snapshots of /, then a read of every
 *                   file in every tree: each first update unshares a leaf
 * and reports ops/s for each, peak RSS, and the simulator's heap bytes per
 * modeled item and per modeled tree block (glibc mallinfo2, heap in use
 * after populate divided by the items and blocks it holds). Wall times are
 * noisy on a shared machine; compare the ratios within one run.
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "commands.h"
#include "fs.h"

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
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
	double populate_ops, exclusive_ops, unshare_ops;
	uint64_t items, blocks, heap_bytes, metadata_before, metadata_after;
};

#define FILES_PER_DIR 100u
#define NS_PER_SECOND 1000000000ll

static void file_path(char *buf, size_t size, const char *prefix, uint64_t i)
{
	snprintf(buf, size, "%s/d%" PRIu64 "/file-%06" PRIu64 ".c", prefix, i / FILES_PER_DIR, i);
}

static int populate(struct fs *fs, uint64_t files)
{
	struct fs_attributes attributes;
	fs_attributes_init(&attributes);
	attributes.atime = attributes.mtime = fs_clock(fs) - 86400 * NS_PER_SECOND;
	char path[64];
	for (uint64_t i = 0; i < files; i++) {
		if (i % FILES_PER_DIR == 0) {
			snprintf(path, sizeof(path), "/d%" PRIu64, i / FILES_PER_DIR);
			if (fs_mkdir(fs, path, &attributes))
				return -1;
		}
		file_path(path, sizeof(path), "", i);
		if (fs_create(fs, path, 1024, &attributes))
			return -1;
	}
	return fs_sync(fs);
}

/* Reads every file under each prefix once; returns reads per second. */
static double read_all(struct fs *fs, uint64_t files, unsigned trees)
{
	char path[96], prefix[32];
	fs_set_clock(fs, fs_clock(fs) + NS_PER_SECOND);
	double start = now_seconds();
	for (unsigned t = 0; t <= trees; t++) {
		if (t)
			snprintf(prefix, sizeof(prefix), "/snap%u", t);
		else
			prefix[0] = 0;
		for (uint64_t i = 0; i < files; i++) {
			file_path(path, sizeof(path), prefix, i);
			fs_read(fs, path, NULL);
		}
	}
	double elapsed = now_seconds() - start;
	fs_sync(fs);
	return (double)files * (trees + 1) / elapsed;
}

static int bench_one(uint64_t files, unsigned snapshots, uint32_t nodesize, struct bench_point *p)
{
	struct fs_config config;
	fs_config_init(&config);
	config.nodesize = nodesize;
	config.device_size = 64ull << 40; /* room for any scale: space is not what is measured */
	config.atime.mode = ATIME_STRICT;
	config.start_time_ns = 1354320000ll * NS_PER_SECOND;
	g_autoptr(GError) error = NULL;
	g_autoptr(Filesystem) fs = fs_new(&config, &error);
	if (!fs) {
		fprintf(stderr, "cowsim bench: %s\n", error->message);
		return -1;
	}
	memset(p, 0, sizeof(*p));
	p->files = files;
	p->snapshots = snapshots;
	size_t heap_before = mallinfo2().uordblks;
	double start = now_seconds();
	if (populate(fs, files)) {
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
	p->heap_bytes = mallinfo2().uordblks - heap_before;
	p->metadata_before = report.space.metadata_used;
	p->exclusive_ops = read_all(fs, files, 0);
	for (unsigned s = 1; s <= snapshots; s++) {
		char dest[32];
		snprintf(dest, sizeof(dest), "/snap%u", s);
		if (fs_snapshot(fs, "/", dest, false))
			return -1;
	}
	p->unshare_ops = snapshots ? read_all(fs, files, snapshots) : 0;
	fs_report(fs, &report);
	p->metadata_after = report.space.metadata_used;
	return 0;
}

static void print_point(FILE *out, const struct bench_point *p)
{
	fprintf(out, "%10" PRIu64 " %5u %12.0f %14.0f %14.0f %9.1f %9.1f %10.1f %10.1f\n", p->files,
		p->snapshots, p->populate_ops, p->exclusive_ops, p->unshare_ops,
		(double)p->heap_bytes / (double)p->items, (double)p->heap_bytes / (double)p->blocks,
		p->metadata_before / 1048576.0, p->metadata_after / 1048576.0);
}

int cmd_bench(int argc, char **argv)
{
	g_autofree char *sizes_text = NULL;
	gint snapshots = 10, nodesize = 16384;
	const GOptionEntry entries[] = {
		{ "sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_text,
		  "file counts to measure, comma-separated (default 10000,100000,1000000)", "N,N,..." },
		{ "snapshots", 0, 0, G_OPTION_ARG_INT, &snapshots, "snapshots before the unsharing reads (default 10)",
		  "S" },
		{ "nodesize", 0, 0, G_OPTION_ARG_INT, &nodesize, "tree block size (default 16384)", "BYTES" },
		{ NULL },
	};
	g_autoptr(GOptionContext) context = g_option_context_new("- measure the model's speed and memory");
	g_option_context_set_description(context,
		"Columns: files, snapshots, populate ops/s, atime updates/s on exclusive leaves,\n"
		"atime updates/s that unshare (reads of every file in every tree), heap bytes per\n"
		"modeled item and per modeled block after populate, metadata MiB before and after.\n"
		"Peak RSS of the whole run is printed last.");
	g_option_context_add_main_entries(context, entries, NULL);
	g_autoptr(GError) error = NULL;
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "cowsim bench: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	if (snapshots < 0 || snapshots > 1000 || nodesize < 4096 || nodesize > 65536 || (nodesize & (nodesize - 1))) {
		fprintf(stderr, "cowsim bench: --snapshots 0..1000, --nodesize a power of two from 4096 to 65536\n");
		return EXIT_BAD_INPUT;
	}
	g_auto(GStrv) sizes = g_strsplit(sizes_text ? sizes_text : "10000,100000,1000000", ",", -1);
	printf("%10s %5s %12s %14s %14s %9s %9s %10s %10s\n", "files", "snaps", "populate/s", "atime-excl/s",
	       "atime-unshr/s", "B/item", "B/block", "meta MiB", "after MiB");
	for (unsigned i = 0; sizes[i]; i++) {
		char *end;
		uint64_t files = g_ascii_strtoull(sizes[i], &end, 10);
		if (end == sizes[i] || *end || !files || files > 100000000) {
			fprintf(stderr, "cowsim bench: --sizes: '%s' is not a file count from 1 to 10^8\n", sizes[i]);
			return EXIT_BAD_INPUT;
		}
		struct bench_point p;
		if (bench_one(files, (unsigned)snapshots, (uint32_t)nodesize, &p))
			return EXIT_RUN_FAILED;
		print_point(stdout, &p);
		fflush(stdout);
	}
	printf("peak RSS %.1f MiB\n", peak_rss_bytes() / 1048576.0);
	return EXIT_OK;
}
