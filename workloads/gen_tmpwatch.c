/*
 * workloads/gen_tmpwatch.c - tmpwatch: delete what has not been accessed.
 *
 *   clock @START, cp -a TREE PREFIX/tmp (default /tree/tmp), sync, mark after_copy,
 *   [snapshots, sync, mark after_snapshots]
 *   day d = 1..R, day start T = START + (d-1) days:
 *     T+03:00  tmpwatch --atime D*24 PREFIX/tmp: readdir every directory, lstat every
 *              file, unlink the files whose atime is more than D days before now
 *     T+10:00  use: create --new-per-day files in PREFIX/tmp (atime = mtime = now),
 *              read --read-fraction of the live files
 *     sync, mark day_d
 *
 * The unlink decision is the generator's, made from the atimes it assigned
 * (G-rule of tracegen.h: a trace is a fixed script):
 *   - a copied file's atime is the atime cp -a preserved (the source's);
 *   - a created file's atime is its creation time (given explicitly);
 *   - a read the trace issues sets the file's atime to the read's time.
 * That is what a strictatime mount records, and a relatime one to within a
 * day (relatime updates when atime is older than a day or not newer than
 * mtime/ctime; the first read after the copy always updates, since cp set
 * ctime to the copy time).  Under noatime the simulated fs would keep older
 * atimes than the generator's; the trace still deletes what an atime-keeping
 * system would, which is the point the LWN article makes about tmpwatch.
 * Directories and symlinks are never removed (tmpwatch's empty-directory
 * pruning is left out).  Hard-linked names share their inode's atime.
 */
#include "tracegen_private.h"

#include <math.h>
#include <string.h>

#define HOUR_NS (INT64_C(3600) * TRACE_NS_PER_SEC)
#define SCAN_HOUR 3
#define USE_HOUR 10

/* What the generator believes of one inode. */
struct inode_state {
	int64_t atime_ns;
	bool removed;
};

struct created {
	char *path;
	uint64_t size;
	struct inode_state state;
};

struct tmpwatch {
	struct tracegen_session s;
	const struct tracegen_params *p;
	GHashTable *states;       /* first-name fstree_node * -> struct inode_state * */
	GPtrArray *created;       /* struct created *, creation order (readdir order of tmp) */
	struct tracegen_rng rng;
	GString *path;
	uint64_t removed;
};

static void created_free(gpointer data)
{
	struct created *c = data;
	g_free(c->path);
	g_free(c);
}

static struct inode_state *state_of(struct tmpwatch *t, const struct fstree_node *file)
{
	const struct fstree_node *inode = file->first_link ? file->first_link : file;
	struct inode_state *state = g_hash_table_lookup(t->states, inode);
	if (!state) {
		state = g_new0(struct inode_state, 1);
		state->atime_ns = inode->atime_ns;
		g_hash_table_insert(t->states, (gpointer)inode, state);
	}
	return state;
}

static bool is_old(struct tmpwatch *t, const struct inode_state *state)
{
	return t->s.clock.now_ns - state->atime_ns > (int64_t)t->p->days * TRACE_NS_PER_DAY;
}

/* lstat PATH, and unlink it when old. */
static bool scan_name(struct tmpwatch *t, const char *path, struct inode_state *state, bool last_name)
{
	if (!trace_writer_path_op(t->s.w, TRACE_STAT, path, t->s.error) ||
	    !tracegen_clock_spend(&t->s.clock, t->s.w, TRACEGEN_COST_STAT_NS, t->s.error))
		return false;
	if (!is_old(t, state))
		return true;
	t->removed++;
	if (last_name)
		state->removed = true;
	return trace_writer_path_op(t->s.w, TRACE_UNLINK, path, t->s.error);
}

static bool scan_dir(struct tmpwatch *t, const struct fstree_node *dir, bool is_top);

static bool scan_created(struct tmpwatch *t)
{
	for (guint i = 0; i < t->created->len; i++) {
		struct created *c = g_ptr_array_index(t->created, i);
		if (!c->state.removed && !scan_name(t, c->path, &c->state, true))
			return false;
	}
	return true;
}

static bool scan_dir(struct tmpwatch *t, const struct fstree_node *dir, bool is_top)
{
	fstree_path(dir, t->s.prefix, t->path);
	if (!trace_writer_path_op(t->s.w, TRACE_READDIR, t->path->str, t->s.error))
		return false;
	for (guint i = 0; i < dir->children->len; i++) {
		const struct fstree_node *child = g_ptr_array_index(dir->children, i);
		if (child->kind == FSTREE_DIR && !scan_dir(t, child, false))
			return false;
		if (child->kind != FSTREE_FILE)
			continue;
		struct inode_state *state = state_of(t, child);
		if (state->removed)
			continue;
		fstree_path(child, t->s.prefix, t->path);
		/* Later names are unlinked in the same pass, so any name marks the inode gone. */
		if (!scan_name(t, t->path->str, state, true))
			return false;
	}
	return is_top ? scan_created(t) : true;
}

static bool create_files(struct tmpwatch *t, int day)
{
	int n = t->p->new_per_day ? t->p->new_per_day : (int)MAX(1, t->s.tree->files / 100);
	for (int i = 0; i < n; i++) {
		struct created *c = g_new0(struct created, 1);
		struct trace_op op;
		c->path = g_strdup_printf("%s/new-d%03d-%05d.tmp", t->s.prefix, day, i);
		c->size = (uint64_t)tracegen_rng_lognormal(&t->rng, 9.48, 2.46);
		c->size = MIN(c->size, (uint64_t)t->p->max_file_size);
		c->state.atime_ns = t->s.clock.now_ns;
		g_ptr_array_add(t->created, c);
		trace_op_init(&op, TRACE_CREATE);
		op.path = c->path;
		op.size = c->size;
		op.times_given = TRACE_TIME_ATIME | TRACE_TIME_MTIME;
		op.atime_ns = op.mtime_ns = t->s.clock.now_ns;
		if (!trace_writer_op(t->s.w, &op, t->s.error) ||
		    !tracegen_clock_spend(&t->s.clock, t->s.w, TRACEGEN_COST_COPY_INODE_NS, t->s.error))
			return false;
	}
	return true;
}

static bool read_live(struct tmpwatch *t, const char *path, struct inode_state *state, double fraction)
{
	if (state->removed || tracegen_rng_unit(&t->rng) >= fraction)
		return true;
	state->atime_ns = t->s.clock.now_ns;
	return trace_writer_path_op(t->s.w, TRACE_READ, path, t->s.error) &&
	       tracegen_clock_spend(&t->s.clock, t->s.w, TRACEGEN_COST_READ_FILE_NS, t->s.error);
}

static bool use_files(struct tmpwatch *t)
{
	double fraction = t->p->read_fraction >= 0 ? t->p->read_fraction : 0.02;
	g_autoptr(GPtrArray) files = fstree_files(t->s.tree);
	for (guint i = 0; i < files->len; i++) {
		const struct fstree_node *file = g_ptr_array_index(files, i);
		fstree_path(file, t->s.prefix, t->path);
		if (!read_live(t, t->path->str, state_of(t, file), fraction))
			return false;
	}
	for (guint i = 0; i < t->created->len; i++) {
		struct created *c = g_ptr_array_index(t->created, i);
		if (!read_live(t, c->path, &c->state, fraction))
			return false;
	}
	return true;
}

static bool run_day(struct tmpwatch *t, int day, int64_t day_start)
{
	g_autofree char *label = g_strdup_printf("day_%d", day);
	uint64_t removed_before = t->removed;
	return tracegen_clock_advance_to(&t->s.clock, t->s.w, day_start + SCAN_HOUR * HOUR_NS, t->s.error) &&
	       scan_dir(t, t->s.tree->root, true) &&
	       trace_writer_comment(t->s.w, t->s.error, "tmpwatch day %d: %" G_GUINT64_FORMAT " names removed",
				    day, t->removed - removed_before) &&
	       tracegen_clock_advance_to(&t->s.clock, t->s.w, day_start + USE_HOUR * HOUR_NS, t->s.error) &&
	       create_files(t, day) && use_files(t) && tracegen_session_measure(&t->s, label);
}

bool tracegen_run_tmpwatch(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	struct tmpwatch t = { .p = p };
	g_autofree char *prefix = g_strdup_printf("%s/tmp", p->prefix ? p->prefix : "/tree");
	struct tracegen_params adjusted = *p;

	adjusted.days = p->days ? p->days : 10;
	t.p = &adjusted;
	t.states = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	t.created = g_ptr_array_new_with_free_func(created_free);
	t.path = g_string_new(NULL);
	tracegen_rng_seed_stream(&t.rng, (uint64_t)p->seed, 0x544d); /* "TM" */
	bool ok = tracegen_session_begin(&t.s, p, prefix, w, error) && tracegen_session_snapshots(&t.s, p, false);
	for (int day = 1; ok && day <= p->run_days; day++)
		ok = run_day(&t, day, t.s.start_ns + (int64_t)(day - 1) * TRACE_NS_PER_DAY);

	g_hash_table_unref(t.states);
	g_ptr_array_unref(t.created);
	g_string_free(t.path, TRUE);
	tracegen_session_end(&t.s);
	return ok;
}
