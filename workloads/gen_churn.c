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
 * same bytes (TG1, tracegen.h).
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

struct churn_event {
	int64_t t_ns;
	enum tracegen_churn_kind kind;
	guint seq;               /* draw order: ties at one nanosecond keep it */
};

/* The engine: the live files of the session's tree and the draws. */
struct tracegen_churn {
	struct tracegen_session *s;
	const struct tracegen_params *p;
	char *stem;              /* new files are DIR/STEM-NNNNNN */
	GPtrArray *live;         /* struct fstree_node *, order changes by swap-removal (deterministic) */
	GPtrArray *dirs;         /* struct fstree_node *: the tree's directories, pre-order, at the start */
	struct tracegen_rng rng;
	uint64_t created;
	double rate[TRACEGEN_CHURN_KINDS];
};

static void collect_dirs(struct fstree_node *node, GPtrArray *dirs)
{
	if (node->kind != FSTREE_DIR)
		return;
	g_ptr_array_add(dirs, node);
	for (guint i = 0; i < node->children->len; i++)
		collect_dirs(g_ptr_array_index(node->children, i), dirs);
}

/* One size from --size-dist with median --write-size, at least 1 byte, at most --max-file-size. */
static uint64_t draw_size(struct tracegen_churn *c)
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

static GArray *day_events(struct tracegen_churn *c, int64_t day_start)
{
	GArray *events = g_array_new(FALSE, FALSE, sizeof(struct churn_event));
	guint seq = 0;
	for (int kind = TRACEGEN_CHURN_APPEND; kind <= TRACEGEN_CHURN_DELETE; kind++) {
		uint64_t n = tracegen_rng_poisson(&c->rng, c->rate[kind]);
		for (uint64_t i = 0; i < n; i++) {
			struct churn_event e = {
				day_start + (int64_t)tracegen_rng_below(&c->rng, (uint64_t)(CHURN_HOURS * HOUR_NS)),
				(enum tracegen_churn_kind)kind, seq++ };
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

static bool write_range(struct tracegen_churn *c, struct fstree_node *f, uint64_t offset, uint64_t length)
{
	struct trace_op op;
	g_autoptr(GString) path = g_string_new(NULL);
	fstree_path(f, c->s->prefix, path);
	trace_op_init(&op, TRACE_WRITE);
	op.path = path->str;
	op.offset = offset;
	op.length = length;
	f->size = MAX(f->size, offset + length);
	f->mtime_ns = c->s->clock.now_ns;
	return trace_writer_op(c->s->w, &op, c->s->error) &&
	       tracegen_clock_spend(&c->s->clock, c->s->w, COST_WRITE_NS, c->s->error);
}

static bool do_create(struct tracegen_churn *c)
{
	struct trace_op op;
	struct fstree_node *dir = g_ptr_array_index(c->dirs, tracegen_rng_below(&c->rng, c->dirs->len));
	g_autofree char *name = g_strdup_printf("%s-%06" G_GUINT64_FORMAT, c->stem, ++c->created);
	struct fstree_node *f = fstree_add(c->s->tree, dir, FSTREE_FILE, name);
	g_autoptr(GString) path = g_string_new(NULL);
	f->size = draw_size(c);
	f->mode = 0644;
	f->atime_ns = f->mtime_ns = c->s->clock.now_ns;
	fstree_path(f, c->s->prefix, path);
	trace_op_init(&op, TRACE_CREATE);
	op.path = path->str;
	op.size = f->size;
	op.times_given = TRACE_TIME_ATIME | TRACE_TIME_MTIME;
	op.atime_ns = op.mtime_ns = f->mtime_ns;
	g_ptr_array_add(c->live, f);
	return trace_writer_op(c->s->w, &op, c->s->error) &&
	       tracegen_clock_spend(&c->s->clock, c->s->w, TRACEGEN_COST_COPY_INODE_NS, c->s->error);
}

/* A live file drawn at random, or NULL when none is left.  Files another job
 * unlinked (a scenario's tmpwatch) leave the list when drawn. */
static struct fstree_node *draw_live(struct tracegen_churn *c, guint *index)
{
	while (c->live->len > 0) {
		*index = (guint)tracegen_rng_below(&c->rng, c->live->len);
		struct fstree_node *f = g_ptr_array_index(c->live, *index);
		if (!f->unlinked)
			return f;
		g_ptr_array_remove_index_fast(c->live, *index);
	}
	return NULL;
}

/* Appends, overwrites and deletes with no live file left do nothing. */
bool tracegen_churn_do(struct tracegen_churn *c, enum tracegen_churn_kind kind)
{
	if (kind == TRACEGEN_CHURN_CREATE)
		return do_create(c);
	guint i;
	struct fstree_node *f = draw_live(c, &i);
	if (!f)
		return true;
	if (kind == TRACEGEN_CHURN_APPEND)
		return write_range(c, f, f->size, draw_size(c));
	if (kind == TRACEGEN_CHURN_OVERWRITE) {
		uint64_t drawn = draw_size(c); /* once: MIN() evaluates its arguments twice (CH2) */
		uint64_t length = MIN(drawn, f->size);
		if (length == 0)
			return true;
		uint64_t offset = tracegen_rng_below(&c->rng, f->size - length + 1);
		return write_range(c, f, offset, length);
	}
	g_autoptr(GString) path = g_string_new(NULL);
	fstree_path(f, c->s->prefix, path);
	bool ok = trace_writer_path_op(c->s->w, TRACE_UNLINK, path->str, c->s->error) &&
		  tracegen_clock_spend(&c->s->clock, c->s->w, TRACEGEN_COST_STAT_NS, c->s->error);
	g_ptr_array_remove_index_fast(c->live, i); /* CH1: never drawn again */
	fstree_detach(c->s->tree, f);
	return ok;
}

static bool run_day(struct tracegen_churn *c, int day, int64_t day_start)
{
	g_autoptr(GArray) events = day_events(c, day_start);
	g_array_sort(events, compare_events);
	bool ok = true;
	for (guint i = 0; ok && i < events->len; i++) {
		const struct churn_event *e = &g_array_index(events, struct churn_event, i);
		ok = tracegen_clock_advance_to(&c->s->clock, c->s->w, e->t_ns, c->s->error) &&
		     tracegen_churn_do(c, e->kind);
	}
	g_autofree char *label = g_strdup_printf("day_%d", day);
	return ok && tracegen_clock_advance_to(&c->s->clock, c->s->w, day_start + MARK_HOUR * HOUR_NS, c->s->error) &&
	       tracegen_session_measure(c->s, label);
}

struct tracegen_churn *tracegen_churn_new(struct tracegen_session *s, const struct tracegen_params *p,
					  struct fstree_node *below, const char *stem, uint64_t stream)
{
	struct tracegen_churn *c = g_new0(struct tracegen_churn, 1);
	c->s = s;
	c->p = p;
	c->stem = g_strdup(stem);
	c->live = fstree_files_below(below);
	c->dirs = g_ptr_array_new();
	collect_dirs(below, c->dirs);
	tracegen_rng_seed_stream(&c->rng, (uint64_t)p->seed, stream);
	double one_percent = MAX(1.0, (double)c->live->len / 100.0);
	double half_percent = MAX(1.0, (double)c->live->len / 200.0);
	c->rate[TRACEGEN_CHURN_APPEND] = p->appends >= 0 ? p->appends : one_percent;
	c->rate[TRACEGEN_CHURN_OVERWRITE] = p->overwrites >= 0 ? p->overwrites : half_percent;
	c->rate[TRACEGEN_CHURN_CREATE] = p->creates >= 0 ? p->creates : half_percent;
	c->rate[TRACEGEN_CHURN_DELETE] = p->deletes >= 0 ? p->deletes : half_percent;
	return c;
}

double tracegen_churn_rate(const struct tracegen_churn *c, enum tracegen_churn_kind kind)
{
	return c->rate[kind];
}

struct tracegen_rng *tracegen_churn_rng(struct tracegen_churn *c)
{
	return &c->rng;
}

void tracegen_churn_free(struct tracegen_churn *c)
{
	if (!c)
		return;
	g_free(c->stem);
	g_ptr_array_unref(c->live);
	g_ptr_array_unref(c->dirs);
	g_free(c);
}

bool tracegen_run_churn(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	struct tracegen_session s;
	int days = p->days ? p->days : 30;
	bool ok = tracegen_session_begin(&s, p, p->prefix ? p->prefix : "/tree", w, error) &&
		  tracegen_session_snapshots(&s, p, false);
	struct tracegen_churn *c = ok ? tracegen_churn_new(&s, p, s.tree->root, "churn", 0x4348) : NULL; /* "CH" */
	for (int day = 1; ok && day <= days; day++)
		ok = run_day(c, day, s.start_ns + (int64_t)(day - 1) * TRACE_NS_PER_DAY);
	tracegen_churn_free(c);
	tracegen_session_end(&s);
	return ok;
}
