/*
 * workloads/gen_synthetic.c - a synthetic source tree drawn from published
 * file-system metadata distributions.
 *
 * Sources.  [A07] N. Agrawal, W. J. Bolosky, J. R. Douceur, J. R. Lorch,
 * "A Five-Year Study of File-System Metadata", FAST 2007 (and the longer
 * ACM TOS 3(3) 2007 version).  [A09] N. Agrawal, A. C. Arpaci-Dusseau,
 * R. H. Arpaci-Dusseau, "Generating Realistic Impressions for File-System
 * Benchmarking", FAST 2009, whose Table 2 gives the fitted parameters of
 * [A07]'s 2004 data set that Impressions uses.
 *
 * The steps, and what each takes from where:
 *   1. Directory count: files / files_per_dir (default 5, the ratio of
 *      Impressions' default image, 20 000 files in 4 000 directories [A09]).
 *   2. Namespace shape: [A07]'s generative model for directory structure
 *      ("directories by subdirectory count" and "directories by namespace
 *      depth"): each new directory's parent is drawn with probability
 *      proportional to (its subdirectory count + 2).
 *   3. File sizes: [A07]'s "files by size" histogram as fitted in [A09]: a
 *      lognormal body (mu 9.48, sigma 2.46, natural log of bytes: median
 *      about 13 KB) with probability 0.99994, else a Pareto tail (k 0.91,
 *      x_m 512 MB); capped at max_file_size (default 1 GiB) so one huge file
 *      cannot dominate a small tree.
 *   4. File depth: [A07]'s "files by namespace depth" as fitted in [A09]:
 *      Poisson with mean 6.49 (root = depth 0, so a file directly in the root
 *      has depth 1), clamped to the depths step 2 produced.
 *   5. Directory of a file, among those at its depth: [A09] fits
 *      "directories by file count" with an inverse polynomial of degree 2 and
 *      offset 2.36; we approximate it by preferential placement, weight
 *      (files already there + 2.36), which gives the same heavy tail of big
 *      directories and many nearly empty ones.  (Our approximation.)
 *   6. Names: lengths drawn from the name lengths of Debian 12's /usr/include
 *      (24 739 names, measured for this generator: mode 10 bytes, 90% under
 *      24), extensions from [A07]'s list of popular extensions; unique per
 *      directory (a numeric suffix on a clash).
 *   7. Times and owners (not from the papers; our choice, stated so):
 *      mtime age exponential with mean 180 days before now_ns; atime uniform
 *      between mtime and now_ns; directories 0755, files 0644 (10% 0755);
 *      uid = gid = 1000.
 *
 * Everything is drawn from tracegen_rng streams derived from the seed, one
 * stream per step, so changing how step 6 draws does not move steps 1-5 (TG1).
 */
#include "tracegen.h"

#include <math.h>
#include <string.h>

#define LOGNORMAL_MU 9.48
#define LOGNORMAL_SIGMA 2.46
#define LOGNORMAL_WEIGHT 0.99994
#define PARETO_K 0.91
#define PARETO_XM (512.0 * 1024 * 1024)
#define DIR_SUBDIR_OFFSET 2
#define DIR_FILE_OFFSET 2.36

enum { STREAM_SHAPE = 1, STREAM_SIZE, STREAM_DEPTH, STREAM_PLACE, STREAM_NAME, STREAM_TIME };

void fstree_synthetic_params_init(struct fstree_synthetic_params *params)
{
	memset(params, 0, sizeof(*params));
	params->seed = 1;
	params->files_per_dir = 5.0;
	params->depth_mean = 6.49;
	params->max_file_size = UINT64_C(1) << 30;
	params->now_ns = INT64_C(1338422400) * TRACE_NS_PER_SEC;
}

/* Name lengths 1..40 (40 = "40 or more") in /usr/include, Debian 12. */
static const unsigned name_length_counts[40] = {
	1, 33, 179, 403, 860, 1336, 1454, 1683, 1888, 1936, 1407, 1411, 1461, 1248, 1191, 1087, 1078, 929,
	808, 703, 621, 557, 500, 423, 346, 260, 247, 169, 147, 99, 70, 53, 37, 26, 22, 19, 12, 7, 2, 26,
};

/* Popular extensions in [A07] ("" = no extension), with rough relative weights. */
static const struct { const char *ext; unsigned weight; } extensions[] = {
	{ "", 10 }, { "h", 8 }, { "c", 5 }, { "cpp", 5 }, { "txt", 5 }, { "htm", 5 }, { "gif", 6 },
	{ "jpg", 5 }, { "dll", 6 }, { "exe", 3 }, { "xml", 3 }, { "pdf", 2 }, { "lib", 2 }, { "mp3", 2 },
};

struct synth {
	const struct fstree_synthetic_params *params;
	struct fstree *tree;
	struct tracegen_rng rng[STREAM_TIME + 1];
	GPtrArray *dirs;           /* all directories, creation order */
	GArray *dir_depth;         /* guint per directory */
	GPtrArray *by_depth;       /* per depth: GPtrArray of dirs */
	GPtrArray *files_at_depth; /* per depth: GPtrArray of files' dirs (one entry per file) */
	GHashTable *names;         /* "dir pointer/name" keys already used */
};

static unsigned draw_name_length(struct tracegen_rng *rng)
{
	unsigned total = 0;
	for (int i = 0; i < 40; i++)
		total += name_length_counts[i];
	uint64_t x = tracegen_rng_below(rng, total);
	for (unsigned i = 0; i < 40; i++) {
		if (x < name_length_counts[i])
			return i + 1;
		x -= name_length_counts[i];
	}
	return 10;
}

static const char *draw_extension(struct tracegen_rng *rng)
{
	unsigned total = 0;
	for (size_t i = 0; i < G_N_ELEMENTS(extensions); i++)
		total += extensions[i].weight;
	uint64_t x = tracegen_rng_below(rng, total);
	for (size_t i = 0; i < G_N_ELEMENTS(extensions); i++) {
		if (x < extensions[i].weight)
			return extensions[i].ext;
		x -= extensions[i].weight;
	}
	return "";
}

/* A fresh name in DIR: LENGTH bytes in total (stem + "." + ext), unique there (FT1). */
static char *draw_name(struct synth *s, const struct fstree_node *dir, bool is_file)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789_-";
	struct tracegen_rng *rng = &s->rng[STREAM_NAME];
	const char *ext = is_file ? draw_extension(rng) : "";
	unsigned length = draw_name_length(rng);
	unsigned stem = length > strlen(ext) + 1 ? length - (unsigned)strlen(ext) - (*ext ? 1 : 0) : 1;
	GString *name = g_string_new(NULL);

	g_string_append_c(name, alphabet[tracegen_rng_below(rng, 26)]);
	for (unsigned i = 1; i < stem; i++)
		g_string_append_c(name, alphabet[tracegen_rng_below(rng, sizeof(alphabet) - 1)]);
	if (*ext)
		g_string_append_printf(name, ".%s", ext);
	for (unsigned n = 2;; n++) {
		char *key = g_strdup_printf("%p/%s", (const void *)dir, name->str);
		if (g_hash_table_add(s->names, key))
			break;
		g_string_append_printf(name, "%u", n);
	}
	return g_string_free(name, FALSE);
}

static void draw_times(struct synth *s, struct fstree_node *node)
{
	struct tracegen_rng *rng = &s->rng[STREAM_TIME];
	double age = tracegen_rng_exponential(rng, 180.0 * 86400.0) * 1e9;
	int64_t now = s->params->now_ns;
	node->mtime_ns = now - (int64_t)age;
	node->atime_ns = node->mtime_ns + (int64_t)(tracegen_rng_unit(rng) * (double)(now - node->mtime_ns));
	fstree_account(s->tree, node);
}

static GPtrArray *level(GPtrArray *levels, guint depth)
{
	while (levels->len <= depth)
		g_ptr_array_add(levels, g_ptr_array_new());
	return g_ptr_array_index(levels, depth);
}

static void add_dir_record(struct synth *s, struct fstree_node *dir, guint depth)
{
	g_ptr_array_add(s->dirs, dir);
	g_array_append_val(s->dir_depth, depth);
	g_ptr_array_add(level(s->by_depth, depth), dir);
}

/* Step 2: grow the namespace; `tickets` holds each directory (subdirs + 2) times. */
static void grow_directories(struct synth *s, uint64_t n_dirs)
{
	g_autoptr(GArray) tickets = g_array_new(FALSE, FALSE, sizeof(guint));
	guint root = 0;
	for (int i = 0; i < DIR_SUBDIR_OFFSET; i++)
		g_array_append_val(tickets, root);
	add_dir_record(s, s->tree->root, 0);

	for (uint64_t d = 1; d < n_dirs; d++) {
		guint parent = g_array_index(tickets, guint, tracegen_rng_below(&s->rng[STREAM_SHAPE], tickets->len));
		struct fstree_node *parent_node = g_ptr_array_index(s->dirs, parent);
		g_autofree char *name = draw_name(s, parent_node, false);
		struct fstree_node *dir = fstree_add(s->tree, parent_node, FSTREE_DIR, name);
		dir->mode = 0755;
		dir->uid = dir->gid = 1000;
		draw_times(s, dir);
		guint index = s->dirs->len;
		add_dir_record(s, dir, g_array_index(s->dir_depth, guint, parent) + 1);
		g_array_append_val(tickets, parent);
		for (int i = 0; i < DIR_SUBDIR_OFFSET; i++)
			g_array_append_val(tickets, index);
	}
}

static uint64_t draw_size(struct synth *s)
{
	struct tracegen_rng *rng = &s->rng[STREAM_SIZE];
	double size = tracegen_rng_unit(rng) < LOGNORMAL_WEIGHT
		? tracegen_rng_lognormal(rng, LOGNORMAL_MU, LOGNORMAL_SIGMA)
		: tracegen_rng_pareto(rng, PARETO_K, PARETO_XM);
	if (!(size < (double)s->params->max_file_size))
		return s->params->max_file_size;
	return (uint64_t)size;
}

/* Steps 4-5: the directory a new file goes into. */
static struct fstree_node *place_file(struct synth *s)
{
	guint max_dir_depth = s->by_depth->len - 1;
	uint64_t depth = tracegen_rng_poisson(&s->rng[STREAM_DEPTH], s->params->depth_mean);
	guint dir_depth = depth == 0 ? 0 : (guint)MIN(depth - 1, (uint64_t)max_dir_depth);
	GPtrArray *dirs = g_ptr_array_index(s->by_depth, dir_depth);
	GPtrArray *files = level(s->files_at_depth, dir_depth);

	/* Weight of a directory = files in it + offset: pick "an existing file's
	 * directory" with probability files / total, else a directory uniformly. */
	struct tracegen_rng *rng = &s->rng[STREAM_PLACE];
	double total = files->len + DIR_FILE_OFFSET * dirs->len;
	struct fstree_node *dir = tracegen_rng_unit(rng) * total < files->len
		? g_ptr_array_index(files, tracegen_rng_below(rng, files->len))
		: g_ptr_array_index(dirs, tracegen_rng_below(rng, dirs->len));
	g_ptr_array_add(files, dir);
	return dir;
}

static void add_files(struct synth *s)
{
	for (uint64_t f = 0; f < s->params->files; f++) {
		struct fstree_node *dir = place_file(s);
		g_autofree char *name = draw_name(s, dir, true);
		struct fstree_node *file = fstree_add(s->tree, dir, FSTREE_FILE, name);
		file->size = draw_size(s);
		file->mode = tracegen_rng_below(&s->rng[STREAM_TIME], 10) == 0 ? 0755 : 0644;
		file->uid = file->gid = 1000;
		draw_times(s, file);
	}
}

static void free_levels(GPtrArray *levels)
{
	for (guint i = 0; i < levels->len; i++)
		g_ptr_array_unref(g_ptr_array_index(levels, i));
	g_ptr_array_unref(levels);
}

struct fstree *fstree_synthetic(const struct fstree_synthetic_params *params, GError **error)
{
	if (params->files == 0 || !(params->files_per_dir >= 1.0) || !(params->depth_mean >= 0.0)) {
		g_set_error(error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS,
			    "synthetic tree: need files > 0, files-per-dir >= 1, depth-mean >= 0");
		return NULL;
	}
	g_autofree char *origin = g_strdup_printf("synthetic --files %" G_GUINT64_FORMAT " --seed %" G_GUINT64_FORMAT,
						  params->files, params->seed);
	struct synth s = { .params = params, .tree = fstree_new(origin) };
	for (int i = 0; i <= STREAM_TIME; i++)
		tracegen_rng_seed_stream(&s.rng[i], params->seed, (uint64_t)i);
	s.dirs = g_ptr_array_new();
	s.dir_depth = g_array_new(FALSE, FALSE, sizeof(guint));
	s.by_depth = g_ptr_array_new();
	s.files_at_depth = g_ptr_array_new();
	s.names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	s.tree->root->uid = s.tree->root->gid = 1000;
	draw_times(&s, s.tree->root);
	uint64_t n_dirs = (uint64_t)ceil((double)params->files / params->files_per_dir);
	grow_directories(&s, MAX(n_dirs, 1));
	add_files(&s);

	g_ptr_array_unref(s.dirs);
	g_array_unref(s.dir_depth);
	free_levels(s.by_depth);
	free_levels(s.files_at_depth);
	g_hash_table_unref(s.names);
	return s.tree;
}
