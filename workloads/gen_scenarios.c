/*
 * workloads/gen_scenarios.c - the tree scenarios: from-dir, synthetic,
 * seed-experiment, find, tar, hsm-scan, and the session skeleton they share
 * (tracegen_private.h).
 *
 * seed-experiment, step by step, against shared/calibration/btrfs-seed-experiment.sh:
 *
 *   script                                   trace
 *   cp -a SRC MNT/tree; meta                 cp -a ops (gen_copy.c), sync, mark after_copy
 *   btrfs subvolume snapshot [-r] MNT        snapshot / /snapI [ro], I = 1..N
 *     MNT/snapI; meta                        sync, mark after_snapshots
 *   grep -R x MNT (GREP=all)                 readdir /, walk /tree, then for each I:
 *     or MNT/tree (GREP=trunk); meta         readdir /snapI, walk /snapI/tree; sync, mark after_grep
 *   grep again; meta                         the same walk; sync, mark after_grep2
 *
 * "readdir /" lists tree, snap1..snapN in creation order (btrfs dir index),
 * hence that order.  Inside /snapJ, btrfs shows each older /snapI (I < J) as
 * an empty placeholder directory (nested subvolumes are not part of a
 * snapshot); grep enters it, but it is an in-memory stub with no on-disk
 * inode, so the trace leaves those visits out.
 */
#include "tracegen_private.h"

#include <string.h>

#define MEASURE_NS TRACE_NS_PER_SEC

static const char *prefix_of(const struct tracegen_params *p, const char *fallback)
{
	return p->prefix ? p->prefix : fallback;
}

bool tracegen_session_begin(struct tracegen_session *s, const struct tracegen_params *params,
			    const char *prefix, struct trace_writer *w, GError **error)
{
	int64_t start;
	memset(s, 0, sizeof(*s));
	s->w = w;
	s->error = error;
	s->prefix = prefix;
	s->snapshot_dirs = g_ptr_array_new_with_free_func(g_free);
	s->tree = tracegen_check_tree_budget(params, trace_writer_max_ops(w), error) ? tracegen_load_tree(params, error)
										      : NULL;
	if (!s->tree || !tracegen_start_time(params, s->tree, &start, error))
		return false;
	s->start_ns = start;
	return tracegen_clock_start(&s->clock, w, start, error) &&
	       tracegen_copy(w, &s->clock, s->tree, prefix, error) && tracegen_session_measure(s, "after_copy");
}

bool tracegen_session_measure(struct tracegen_session *s, const char *label)
{
	return trace_writer_sync(s->w, s->error) && trace_writer_mark(s->w, label, s->error) &&
	       tracegen_clock_spend(&s->clock, s->w, MEASURE_NS, s->error);
}

bool tracegen_session_snapshots(struct tracegen_session *s, const struct tracegen_params *params,
				bool always_mark)
{
	for (gint i = 1; i <= params->snapshots; i++) {
		struct trace_op op;
		char *dst = g_strdup_printf("/snap%d", i);
		g_ptr_array_add(s->snapshot_dirs, dst);
		trace_op_init(&op, TRACE_SNAPSHOT);
		op.path = "/";
		op.path2 = dst;
		op.readonly = params->readonly;
		if (!trace_writer_op(s->w, &op, s->error) ||
		    !tracegen_clock_spend(&s->clock, s->w, TRACEGEN_COST_SNAPSHOT_NS, s->error))
			return false;
	}
	if (params->snapshots == 0 && !always_mark)
		return true;
	return tracegen_session_measure(s, "after_snapshots");
}

void tracegen_session_end(struct tracegen_session *s)
{
	fstree_free(s->tree);
	if (s->snapshot_dirs)
		g_ptr_array_unref(s->snapshot_dirs);
	memset(s, 0, sizeof(*s));
}

static bool copy_only(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	struct tracegen_session s;
	bool ok = tracegen_session_begin(&s, p, prefix_of(p, "/tree"), w, error);
	tracegen_session_end(&s);
	return ok;
}

bool tracegen_run_from_dir(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	return copy_only(p, w, error);
}

bool tracegen_run_synthetic(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	return copy_only(p, w, error);
}

/* One walk over the whole mount (scope "all") or the tree only. */
static bool walk_scope(struct tracegen_session *s, bool whole_mount, enum tracegen_walker walker)
{
	if (whole_mount)
		return tracegen_walk_mount(s->w, &s->clock, s->tree, s->prefix, s->snapshot_dirs, walker, s->error);
	return tracegen_walk(s->w, &s->clock, s->tree, s->prefix, walker, s->error);
}

bool tracegen_run_seed_experiment(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	struct tracegen_session s;
	bool whole_mount = !p->grep || !strcmp(p->grep, "all");
	enum tracegen_walker walker = p->no_follow ? TRACEGEN_WALK_GREP_NOFOLLOW : TRACEGEN_WALK_GREP;
	bool ok = tracegen_session_begin(&s, p, prefix_of(p, "/tree"), w, error) &&
		  tracegen_session_snapshots(&s, p, true);

	for (gint pass = 1; ok && pass <= p->greps; pass++) {
		g_autofree char *label = pass == 1 ? g_strdup("after_grep") : g_strdup_printf("after_grep%d", pass);
		ok = trace_writer_comment(w, error, "grep -R pass %d over %s", pass,
					  whole_mount ? "the whole mount" : s.prefix) &&
		     walk_scope(&s, whole_mount, walker) && tracegen_session_measure(&s, label);
	}
	tracegen_session_end(&s);
	return ok;
}

static bool copy_snapshot_walk(const struct tracegen_params *p, struct trace_writer *w,
			       enum tracegen_walker walker, const char *label, GError **error)
{
	struct tracegen_session s;
	bool whole_mount = p->scope && !strcmp(p->scope, "all");
	bool ok = tracegen_session_begin(&s, p, prefix_of(p, "/tree"), w, error) &&
		  tracegen_session_snapshots(&s, p, false) && walk_scope(&s, whole_mount, walker) &&
		  tracegen_session_measure(&s, label);
	tracegen_session_end(&s);
	return ok;
}

bool tracegen_run_find(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	return copy_snapshot_walk(p, w, TRACEGEN_WALK_FIND, "after_find", error);
}

bool tracegen_run_tar(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	return copy_snapshot_walk(p, w, TRACEGEN_WALK_TAR, "after_tar", error);
}

/* hsm-scan's second phase: read FRACTION of the files whose atime (as the
 * generator knows it) is before COLD_BEFORE; a read makes the file warm. */
bool tracegen_migrate_cold(struct tracegen_session *s, double fraction, int64_t cold_before,
			   struct tracegen_rng *rng)
{
	g_autoptr(GPtrArray) files = fstree_files(s->tree);
	g_autoptr(GString) path = g_string_new(NULL);
	uint64_t cold = 0, read = 0;
	for (guint i = 0; i < files->len; i++) {
		struct fstree_node *file = g_ptr_array_index(files, i);
		if (file->atime_ns >= cold_before)
			continue;
		cold++;
		if (tracegen_rng_unit(rng) >= fraction)
			continue;
		read++;
		file->atime_ns = s->clock.now_ns;
		fstree_path(file, s->prefix, path);
		if (!trace_writer_path_op(s->w, TRACE_READ, path->str, s->error) ||
		    !tracegen_clock_spend(&s->clock, s->w, TRACEGEN_COST_READ_FILE_NS +
					  (int64_t)(file->size * TRACEGEN_COST_READ_BYTE_PS / 1000), s->error))
			return false;
	}
	return trace_writer_comment(s->w, s->error, "hsm-scan: %" G_GUINT64_FORMAT " of %u files cold, %"
				    G_GUINT64_FORMAT " migrated (read)", cold, files->len, read);
}

static bool migrate_cold(struct tracegen_session *s, const struct tracegen_params *p, int64_t start_ns)
{
	struct tracegen_rng rng;
	double fraction = p->read_fraction >= 0 ? p->read_fraction : 0.1;
	tracegen_rng_seed_stream(&rng, (uint64_t)p->seed, 0x4853); /* "HS" */
	return tracegen_migrate_cold(s, fraction, start_ns - (int64_t)p->cold_days * TRACE_NS_PER_DAY, &rng);
}

bool tracegen_run_hsm_scan(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	struct tracegen_session s;
	bool whole_mount = p->scope && !strcmp(p->scope, "all");
	bool ok = tracegen_session_begin(&s, p, prefix_of(p, "/tree"), w, error);
	ok = ok && tracegen_session_snapshots(&s, p, false) &&
	     walk_scope(&s, whole_mount, TRACEGEN_WALK_FIND) && tracegen_session_measure(&s, "after_scan") &&
	     migrate_cold(&s, p, s.start_ns) && tracegen_session_measure(&s, "after_migrate");
	tracegen_session_end(&s);
	return ok;
}

char *tracegen_format_date(int64_t ns)
{
	g_autoptr(GDateTime) t = g_date_time_new_from_unix_utc(ns / TRACE_NS_PER_SEC);
	return t ? g_date_time_format(t, "%Y-%m-%d") : g_strdup("invalid-date");
}
