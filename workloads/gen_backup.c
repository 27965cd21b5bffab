/*
 * workloads/gen_backup.c - backup-rotation: daily snapshots of / kept K days.
 *
 *   clock @START, cp -a TREE PREFIX, sync, mark after_copy, mkdir /snapshots
 *   day d = 1..D, day start T = START + (d-1) days:
 *     T+09:00  read a fraction of the files (users at work)
 *     T+23:00  snapshot / /snapshots/YYYY-MM-DD [ro]
 *              delete-snapshot the oldest while more than K are kept
 *              sync, mark day_d
 *
 * Each snapshot of / contains the earlier ones only as empty placeholders
 * (btrfs does not nest subvolumes in a snapshot); the simulator handles that.
 * Which files are read is drawn per day from the seed (TG1).
 */
#include "tracegen_private.h"

#define READ_HOUR 9
#define SNAPSHOT_HOUR 23
#define HOUR_NS (INT64_C(3600) * TRACE_NS_PER_SEC)

struct rotation {
	struct tracegen_session *s;
	const struct tracegen_params *p;
	GPtrArray *files;        /* the tree's files, pre-order */
	GQueue kept;             /* char *: live snapshot paths, oldest first */
	struct tracegen_rng rng;
	GString *path;
};

static bool read_some(struct rotation *r, double fraction)
{
	for (guint i = 0; i < r->files->len; i++) {
		if (tracegen_rng_unit(&r->rng) >= fraction)
			continue;
		const struct fstree_node *file = g_ptr_array_index(r->files, i);
		fstree_path(file, r->s->prefix, r->path);
		if (!trace_writer_path_op(r->s->w, TRACE_READ, r->path->str, r->s->error) ||
		    !tracegen_clock_spend(&r->s->clock, r->s->w, TRACEGEN_COST_READ_FILE_NS, r->s->error))
			return false;
	}
	return true;
}

static bool take_snapshot(struct rotation *r, int64_t day_start)
{
	struct trace_op op;
	g_autofree char *date = tracegen_format_date(day_start);
	char *dst = g_strdup_printf("/snapshots/%s", date);

	g_queue_push_tail(&r->kept, dst);
	trace_op_init(&op, TRACE_SNAPSHOT);
	op.path = "/";
	op.path2 = dst;
	op.readonly = r->p->readonly;
	if (!trace_writer_op(r->s->w, &op, r->s->error))
		return false;
	while (g_queue_get_length(&r->kept) > (guint)r->p->keep) {
		g_autofree char *oldest = g_queue_pop_head(&r->kept);
		if (!trace_writer_path_op(r->s->w, TRACE_DELETE_SNAPSHOT, oldest, r->s->error))
			return false;
	}
	return tracegen_clock_spend(&r->s->clock, r->s->w, TRACEGEN_COST_SNAPSHOT_NS, r->s->error);
}

static bool run_day(struct rotation *r, int day, int64_t day_start)
{
	double fraction = r->p->read_fraction >= 0 ? r->p->read_fraction : 0.05;
	g_autofree char *label = g_strdup_printf("day_%d", day);
	struct tracegen_clock *clock = &r->s->clock;
	return tracegen_clock_advance_to(clock, r->s->w, day_start + READ_HOUR * HOUR_NS, r->s->error) &&
	       read_some(r, fraction) &&
	       tracegen_clock_advance_to(clock, r->s->w, day_start + SNAPSHOT_HOUR * HOUR_NS, r->s->error) &&
	       take_snapshot(r, day_start) && tracegen_session_measure(r->s, label);
}

bool tracegen_run_backup_rotation(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	struct tracegen_session s;
	struct rotation r = { .s = &s, .p = p };
	int days = p->days ? p->days : 30;
	bool ok = tracegen_session_begin(&s, p, p->prefix ? p->prefix : "/tree", w, error);

	g_queue_init(&r.kept);
	r.path = g_string_new(NULL);
	tracegen_rng_seed_stream(&r.rng, (uint64_t)p->seed, 0x4241); /* "BA" */
	if (ok) {
		r.files = fstree_files(s.tree);
		ok = trace_writer_path_op(w, TRACE_MKDIR, "/snapshots", error);
	}
	for (int day = 1; ok && day <= days; day++)
		ok = run_day(&r, day, s.start_ns + (int64_t)(day - 1) * TRACE_NS_PER_DAY);

	g_queue_clear_full(&r.kept, g_free);
	g_string_free(r.path, TRUE);
	if (r.files)
		g_ptr_array_unref(r.files);
	tracegen_session_end(&s);
	return ok;
}
