/*
 * workloads/gen_mutt.c - mail delivery and mutt's "new mail" check by atime.
 *
 * Why atime matters here: for an mbox, mutt reports new mail when the file's
 * mtime is newer than its atime (delivery appends, so mtime moves; reading
 * the mailbox moves atime).  When mutt closes a mailbox that still holds
 * unread mail it calls utime() with atime = mtime - 1 (mbox_reset_atime) so
 * the next check still sees new mail; that utime changes the inode whatever
 * the mount's atime option.
 *
 *   clock @START; mkdir PREFIX (parents too), PREFIX/Mail;
 *   create PREFIX/Mail/inbox, box02.. (mode 0600, atime > mtime: nothing new)
 *   sync, mark after_setup, [snapshots, sync, mark after_snapshots]
 *   each day, events in time order (ties: deliveries first, then by mailbox):
 *     delivery   write BOX SIZE LEN; fsync BOX        (the MDA appends, fsyncs)
 *     check      09:00..18:00 every --check-interval: stat every mailbox; a
 *                mailbox with new mail is opened with probability 1/4:
 *                read BOX; with probability 1/5 mail is left unread:
 *                settime BOX atime=MTIME-1 mtime=MTIME (whole seconds, utime(2))
 *   end of day: sync, mark day_N
 *
 * Message lengths: lognormal, median 4 KiB (our choice).  The generator knows
 * each mailbox's mtime because it issued every write at a known clock value.
 */
#include "tracegen_private.h"

#include <math.h>
#include <string.h>

#define HOUR_NS (INT64_C(3600) * TRACE_NS_PER_SEC)
#define SESSION_FROM (9 * HOUR_NS)
#define SESSION_TO (18 * HOUR_NS)

struct mailbox {
	char *path;
	uint64_t size;       /* bytes */
	int64_t mtime_ns;    /* of the last write the trace issued */
	bool has_new;
	struct fstree_node *node; /* the mailbox in the session's tree (scenarios), or NULL */
};

enum event_kind { EVENT_DELIVERY, EVENT_CHECK };

struct event {
	int64_t t_ns;
	enum event_kind kind;
	guint box;
};

struct tracegen_mutt {
	struct tracegen_session *s;
	struct mailbox *boxes;
	guint n_boxes;
	struct tracegen_rng rng;
};

/* What the trace did to a mailbox, told to the tree that walks see (scenarios). */
static void mirror(struct mailbox *box, int64_t atime_ns)
{
	if (!box->node)
		return;
	box->node->size = box->size;
	box->node->mtime_ns = box->mtime_ns;
	if (atime_ns != INT64_MIN)
		box->node->atime_ns = atime_ns;
}

static gint compare_events(gconstpointer a, gconstpointer b)
{
	const struct event *x = a, *y = b;
	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->box < y->box ? -1 : x->box > y->box;
}

static GArray *day_events(struct tracegen_mutt *m, const struct tracegen_params *p, int64_t day_start)
{
	GArray *events = g_array_new(FALSE, FALSE, sizeof(struct event));
	for (guint b = 0; b < m->n_boxes; b++) {
		uint64_t n = tracegen_rng_poisson(&m->rng, p->mails_per_day);
		for (uint64_t i = 0; i < n; i++) {
			struct event e = { day_start + (int64_t)tracegen_rng_below(&m->rng, (uint64_t)TRACE_NS_PER_DAY),
					   EVENT_DELIVERY, b };
			g_array_append_val(events, e);
		}
	}
	int64_t step = (int64_t)p->check_interval * TRACE_NS_PER_SEC;
	for (int64_t t = day_start + SESSION_FROM; t < day_start + SESSION_TO; t += step) {
		struct event e = { t, EVENT_CHECK, 0 };
		g_array_append_val(events, e);
	}
	g_array_sort(events, compare_events);
	return events;
}

bool tracegen_mutt_deliver(struct tracegen_mutt *m, guint index)
{
	struct mailbox *box = &m->boxes[index];
	struct trace_op op;
	double len = tracegen_rng_lognormal(&m->rng, log(4096.0), 1.0);
	trace_op_init(&op, TRACE_WRITE);
	op.path = box->path;
	op.offset = box->size;
	op.length = (uint64_t)CLAMP(len, 300.0, 10.0 * 1024 * 1024);
	box->size += op.length;
	box->mtime_ns = m->s->clock.now_ns;
	box->has_new = true;
	mirror(box, INT64_MIN);
	return trace_writer_op(m->s->w, &op, m->s->error) &&
	       trace_writer_path_op(m->s->w, TRACE_FSYNC, box->path, m->s->error);
}

/* mbox_reset_atime: utime(path, atime = mtime - 1, mtime) in whole seconds. */
static bool reset_atime(struct tracegen_mutt *m, struct mailbox *box)
{
	struct trace_op op;
	int64_t mtime_s = box->mtime_ns / TRACE_NS_PER_SEC;
	trace_op_init(&op, TRACE_SETTIME);
	op.path = box->path;
	op.times_given = TRACE_TIME_ATIME | TRACE_TIME_MTIME;
	op.atime_ns = (mtime_s - 1) * TRACE_NS_PER_SEC;
	op.mtime_ns = mtime_s * TRACE_NS_PER_SEC;
	box->mtime_ns = op.mtime_ns;
	mirror(box, op.atime_ns);
	return trace_writer_op(m->s->w, &op, m->s->error);
}

static bool open_mailbox(struct tracegen_mutt *m, struct mailbox *box)
{
	int64_t cost = TRACEGEN_COST_READ_FILE_NS + (int64_t)(box->size * TRACEGEN_COST_READ_BYTE_PS / 1000);
	mirror(box, m->s->clock.now_ns);
	if (!trace_writer_path_op(m->s->w, TRACE_READ, box->path, m->s->error) ||
	    !tracegen_clock_spend(&m->s->clock, m->s->w, cost, m->s->error))
		return false;
	if (tracegen_rng_below(&m->rng, 5) == 0)
		return reset_atime(m, box);
	box->has_new = false;
	return true;
}

bool tracegen_mutt_check(struct tracegen_mutt *m)
{
	for (guint b = 0; b < m->n_boxes; b++)
		if (!trace_writer_path_op(m->s->w, TRACE_STAT, m->boxes[b].path, m->s->error))
			return false;
	for (guint b = 0; b < m->n_boxes; b++) {
		struct mailbox *box = &m->boxes[b];
		if (box->has_new && tracegen_rng_below(&m->rng, 4) == 0 && !open_mailbox(m, box))
			return false;
	}
	return true;
}

static bool run_day(struct tracegen_mutt *m, const struct tracegen_params *p, int day, int64_t day_start)
{
	g_autoptr(GArray) events = day_events(m, p, day_start);
	g_autofree char *label = g_strdup_printf("day_%d", day);
	for (guint i = 0; i < events->len; i++) {
		const struct event *e = &g_array_index(events, struct event, i);
		if (!tracegen_clock_advance_to(&m->s->clock, m->s->w, e->t_ns, m->s->error))
			return false;
		bool ok = e->kind == EVENT_DELIVERY ? tracegen_mutt_deliver(m, e->box) : tracegen_mutt_check(m);
		if (!ok)
			return false;
	}
	return tracegen_clock_advance_to(&m->s->clock, m->s->w, day_start + TRACE_NS_PER_DAY - TRACE_NS_PER_SEC,
					 m->s->error) && tracegen_session_measure(m->s, label);
}

static bool make_dirs(struct tracegen_mutt *m, const char *prefix)
{
	g_autofree char *mail = g_strdup_printf("%s/Mail", prefix);
	for (const char *slash = strchr(prefix + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		g_autofree char *parent = g_strndup(prefix, (gsize)(slash - prefix));
		if (!trace_writer_path_op(m->s->w, TRACE_MKDIR, parent, m->s->error))
			return false;
	}
	return trace_writer_path_op(m->s->w, TRACE_MKDIR, prefix, m->s->error) &&
	       trace_writer_path_op(m->s->w, TRACE_MKDIR, mail, m->s->error);
}

bool tracegen_mutt_create(struct tracegen_mutt *m, const char *maildir, struct fstree_node *maildir_node)
{
	int64_t start = m->s->start_ns;
	for (guint b = 0; b < m->n_boxes; b++) {
		struct mailbox *box = &m->boxes[b];
		struct trace_op op;
		box->path = b == 0 ? g_strdup_printf("%s/inbox", maildir) : g_strdup_printf("%s/box%02u", maildir, b + 1);
		box->size = (uint64_t)tracegen_rng_lognormal(&m->rng, log(1024.0 * 1024), 1.0);
		box->mtime_ns = start - 2 * TRACE_NS_PER_DAY;
		trace_op_init(&op, TRACE_CREATE);
		op.path = box->path;
		op.size = box->size;
		op.mode = 0600;
		op.uid = op.gid = 1000;
		op.times_given = TRACE_TIME_ATIME | TRACE_TIME_MTIME;
		op.atime_ns = start - TRACE_NS_PER_DAY;
		op.mtime_ns = box->mtime_ns;
		if (maildir_node) {
			box->node = fstree_add(m->s->tree, maildir_node, FSTREE_FILE, strrchr(box->path, '/') + 1);
			box->node->mode = op.mode;
			box->node->uid = box->node->gid = op.uid;
			mirror(box, op.atime_ns);
		}
		if (!trace_writer_op(m->s->w, &op, m->s->error))
			return false;
	}
	return true;
}

struct tracegen_mutt *tracegen_mutt_new(struct tracegen_session *s, guint mailboxes, uint64_t seed)
{
	struct tracegen_mutt *m = g_new0(struct tracegen_mutt, 1);
	m->s = s;
	m->boxes = g_new0(struct mailbox, mailboxes);
	m->n_boxes = mailboxes;
	tracegen_rng_seed_stream(&m->rng, seed, 0x4d55); /* "MU" */
	return m;
}

guint tracegen_mutt_mailboxes(const struct tracegen_mutt *m)
{
	return m->n_boxes;
}

struct tracegen_rng *tracegen_mutt_rng(struct tracegen_mutt *m)
{
	return &m->rng;
}

void tracegen_mutt_free(struct tracegen_mutt *m)
{
	if (!m)
		return;
	for (guint b = 0; b < m->n_boxes; b++)
		g_free(m->boxes[b].path);
	g_free(m->boxes);
	g_free(m);
}

bool tracegen_run_mutt(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	struct tracegen_session s = { .w = w, .prefix = p->prefix ? p->prefix : "/home/user", .error = error };
	struct tracegen_mutt *m = tracegen_mutt_new(&s, (guint)p->mailboxes, (uint64_t)p->seed);
	g_autofree char *maildir = g_strdup_printf("%s/Mail", s.prefix);
	int days = p->days ? p->days : 7;
	bool ok = tracegen_start_time(p, NULL, &s.start_ns, error);

	s.snapshot_dirs = g_ptr_array_new_with_free_func(g_free);
	ok = ok && tracegen_clock_start(&s.clock, w, s.start_ns, error) && make_dirs(m, s.prefix) &&
	     tracegen_mutt_create(m, maildir, NULL) && tracegen_session_measure(&s, "after_setup") &&
	     tracegen_session_snapshots(&s, p, false);
	for (int day = 1; ok && day <= days; day++)
		ok = run_day(m, p, day, s.start_ns + (int64_t)(day - 1) * TRACE_NS_PER_DAY);

	tracegen_mutt_free(m);
	tracegen_session_end(&s);
	return ok;
}
