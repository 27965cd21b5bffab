/*
 * workloads/gen_churn.c - churn: a tree that lives, day after day.
 *
 *   clock @START, cp -a TREE PREFIX, sync, mark after_copy, [snapshots]
 *   day d = 1..D, day start T = START + (d-1) days:
 *     between T+00:00 and T+22:00, at times drawn uniformly and in time order:
 *       append     write at the end of a live file (a log, a mailbox)
 *       overwrite  write a range inside a live file (a database page, an edited file)
 *       create     a new file of a drawn size in a drawn directory of the tree
 *       delete     unlink a live file
 *     T+23:00  sync, mark day_d
 *
 * How many of each a day brings is Poisson with the mean the options give
 * (--appends, --overwrites, --creates, --deletes per day); the bytes of an
 * append, an overwrite and a new file are drawn from --size-dist with median
 * --write-size.  Which file each op touches is drawn when the op happens,
 * among the files live then (copied or created, not yet deleted), so a file
 * created in the morning may be appended to in the afternoon.  Every draw
 * comes from one stream of the seed, in op order: the same options give the
 * same bytes (G1).
 *
 * Invariants: CH1 no op names a file the trace already unlinked; CH2 an
 * overwrite stays within the file's size as the generator knows it (appends
 * and creates grow it, nothing else changes it).
 */
#include "tracegen_private.h"

#include <math.h>
#include <string.h>

#define HOUR_NS (INT64_C(3600) * TRACE_NS_PER_SEC)
#define CHURN_HOURS 22
#define MARK_HOUR 23
#define COST_WRITE_NS 20000       /* open + write + close, page cache */

enum churn_kind { CHURN_APPEND, CHURN_OVERWRITE, CHURN_CREATE, CHURN_DELETE };

struct churn_event {
	int64_t t_ns;
	enum churn_kind kind;
	guint seq;               /* draw order: ties at one nanosecond keep it */
};

struct live_file {
	char *path;
	uint64_t size;
};

struct churn {
	struct tracegen_session s;
	const struct tracegen_params *p;
	GArray *live;            /* struct live_file, order changes by swap-removal (deterministic) */
	GPtrArray *dirs;         /* char *: the tree's directories, pre-order */
	struct tracegen_rng rng;
	uint64_t created;
	double rate[4];
};

static void live_file_clear(gpointer data)
{
	g_free(((struct live_file *)data)->path);
}

static void collect_dirs(const struct fstree_node *node, const char *prefix, GPtrArray *dirs)
{
	if (node->kind != FSTREE_DIR)
		return;
	GString *path = g_string_new(NULL);
	fstree_path(node, prefix, path);
	g_ptr_array_add(dirs, g_string_free(path, FALSE));
	for (guint i = 0; i < node->children->len; i++)
		collect_dirs(g_ptr_array_index(node->children, i), prefix, dirs);
}

/* One size from --size-dist with median --write-size, at least 1 byte, at most --max-file-size. */
static uint64_t draw_size(struct churn *c)
{
	double median = (double)(c->p->write_size ? c->p->write_size : 4096);
	const char *dist = c->p->size_dist ? c->p->size_dist : "lognormal";
	double x = median;
	if (!strcmp(dist, "lognormal"))
		x = tracegen_rng_lognormal(&c->rng, log(median), 1.5);
	else if (!strcmp(dist, "pareto"))          /* shape 1.5: the median is xm * 2^(1/1.5) */
		x = tracegen_rng_pareto(&c->rng, 1.5, median / pow(2.0, 1.0 / 1.5));
	double most = (double)(c->p->max_file_size > 0 ? c->p->max_file_size : 1);
	return (uint64_t)CLAMP(x, 1.0, most);
}

static GArray *day_events(struct churn *c, int64_t day_start)
{
	GArray *events = g_array_new(FALSE, FALSE, sizeof(struct churn_event));
	guint seq = 0;
	for (int kind = CHURN_APPEND; kind <= CHURN_DELETE; kind++) {
		uint64_t n = tracegen_rng_poisson(&c->rng, c->rate[kind]);
		for (uint64_t i = 0; i < n; i++) {
			struct churn_event e = {
				day_start + (int64_t)tracegen_rng_below(&c->rng, (uint64_t)(CHURN_HOURS * HOUR_NS)),
				(enum churn_kind)kind, seq++ };
			g_array_append_val(events, e);
		}
	}
	return events;
}

static gint compare_events(gconstpointer a, gconstpointer b)
{
	const struct churn_event *x = a, *y = b;
	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool write_range(struct churn *c, struct live_file *f, uint64_t offset, uint64_t length)
{
	struct trace_op op;
	trace_op_init(&op, TRACE_WRITE);
	op.path = f->path;
	op.offset = offset;
	op.length = length;
	f->size = MAX(f->size, offset + length);
	return trace_writer_op(c->s.w, &op, c->s.error) &&
	       tracegen_clock_spend(&c->s.clock, c->s.w, COST_WRITE_NS, c->s.error);
}

static bool do_create(struct churn *c)
{
	struct trace_op op;
	const char *dir = g_ptr_array_index(c->dirs, tracegen_rng_below(&c->rng, c->dirs->len));
	struct live_file f = { g_strdup_printf("%s/churn-%06" G_GUINT64_FORMAT, dir, ++c->created),
			       draw_size(c) };
	trace_op_init(&op, TRACE_CREATE);
	op.path = f.path;
	op.size = f.size;
	op.times_given = TRACE_TIME_ATIME | TRACE_TIME_MTIME;
	op.atime_ns = op.mtime_ns = c->s.clock.now_ns;
	g_array_append_val(c->live, f);
	return trace_writer_op(c->s.w, &op, c->s.error) &&
	       tracegen_clock_spend(&c->s.clock, c->s.w, TRACEGEN_COST_COPY_INODE_NS, c->s.error);
}

/* Appends, overwrites and deletes of a day with no live file left do nothing. */
static bool do_event(struct churn *c, enum churn_kind kind)
{
	if (kind == CHURN_CREATE)
		return do_create(c);
	if (c->live->len == 0)
		return true;
	guint i = (guint)tracegen_rng_below(&c->rng, c->live->len);
	struct live_file *f = &g_array_index(c->live, struct live_file, i);
	if (kind == CHURN_APPEND)
		return write_range(c, f, f->size, draw_size(c));
	if (kind == CHURN_OVERWRITE) {
		uint64_t length = MIN(draw_size(c), f->size);
		if (length == 0)
			return true;
		uint64_t offset = tracegen_rng_below(&c->rng, f->size - length + 1);
		return write_range(c, f, offset, length);
	}
	bool ok = trace_writer_path_op(c->s.w, TRACE_UNLINK, f->path, c->s.error) &&
		  tracegen_clock_spend(&c->s.clock, c->s.w, TRACEGEN_COST_STAT_NS, c->s.error);
	g_array_remove_index_fast(c->live, i); /* CH1: never drawn again */
	return ok;
}

static bool run_day(struct churn *c, int day, int64_t day_start)
{
	g_autoptr(GArray) events = day_events(c, day_start);
	g_array_sort(events, compare_events);
	bool ok = true;
	for (guint i = 0; ok && i < events->len; i++) {
		const struct churn_event *e = &g_array_index(events, struct churn_event, i);
		ok = tracegen_clock_advance_to(&c->s.clock, c->s.w, e->t_ns, c->s.error) && do_event(c, e->kind);
	}
	g_autofree char *label = g_strdup_printf("day_%d", day);
	return ok && tracegen_clock_advance_to(&c->s.clock, c->s.w, day_start + MARK_HOUR * HOUR_NS, c->s.error) &&
	       tracegen_session_measure(&c->s, label);
}

static void set_rates(struct churn *c, uint64_t files)
{
	const struct tracegen_params *p = c->p;
	double one_percent = MAX(1.0, (double)files / 100.0);
	double half_percent = MAX(1.0, (double)files / 200.0);
	c->rate[CHURN_APPEND] = p->appends >= 0 ? p->appends : one_percent;
	c->rate[CHURN_OVERWRITE] = p->overwrites >= 0 ? p->overwrites : half_percent;
	c->rate[CHURN_CREATE] = p->creates >= 0 ? p->creates : half_percent;
	c->rate[CHURN_DELETE] = p->deletes >= 0 ? p->deletes : half_percent;
}

bool tracegen_run_churn(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	struct churn c = { .p = p };
	int days = p->days ? p->days : 30;
	bool ok = tracegen_session_begin(&c.s, p, p->prefix ? p->prefix : "/tree", w, error) &&
		  tracegen_session_snapshots(&c.s, p, false);

	c.live = g_array_new(FALSE, FALSE, sizeof(struct live_file));
	g_array_set_clear_func(c.live, live_file_clear);
	c.dirs = g_ptr_array_new_with_free_func(g_free);
	tracegen_rng_seed_stream(&c.rng, (uint64_t)p->seed, 0x4348); /* "CH" */
	if (ok) {
		g_autoptr(GPtrArray) files = fstree_files(c.s.tree);
		GString *path = g_string_new(NULL);
		for (guint i = 0; i < files->len; i++) {
			const struct fstree_node *node = g_ptr_array_index(files, i);
			fstree_path(node, c.s.prefix, path);
			struct live_file f = { g_strdup(path->str), node->size };
			g_array_append_val(c.live, f);
		}
		g_string_free(path, TRUE);
		collect_dirs(c.s.tree->root, c.s.prefix, c.dirs);
		set_rates(&c, files->len);
	}
	for (int day = 1; ok && day <= days; day++)
		ok = run_day(&c, day, c.s.start_ns + (int64_t)(day - 1) * TRACE_NS_PER_DAY);

	g_array_unref(c.live);
	g_ptr_array_unref(c.dirs);
	tracegen_session_end(&c.s);
	return ok;
}
