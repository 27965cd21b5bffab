/*
 * workloads/gen_scenario.c - `cowsim gen scenario FILE`: the jobs of a scenario
 * file on one simulated timeline (the format: scenario_file.h, docs/scenarios.md).
 *
 *   clock @START, cp -a TREE PREFIX, sync, mark after_copy, jobs' setup (mutt's mailboxes)
 *   then, until START + days, the earliest pending event, ties in the order
 *   they were queued (file order of the jobs first):
 *
 *      event             what it does                          queues
 *      run of job J      J's work at that time (table below),   J's next run; for churn and
 *                        then sync + mark if J has a mark       mutt, the ops drawn until
 *                                                               that next run
 *      churn op          one append/overwrite/create/unlink     -
 *      delivery          one mail appended to a mailbox         -
 *
 *   job        its work (each op costs simulated time, gen_clock.c)
 *   snapshot   snapshot / DIR/NAME [ro]; delete the oldest of J's beyond keep
 *   read-all   grep -R over the tree (gen_walk.c)
 *   find, tar  the walks of gen find and gen tar over the tree
 *   backup     rsync -a: lstat every entry, readdir every directory, read the
 *              files whose mtime is at or after J's previous run (all, the
 *              first time; symlinks are read the first time only)
 *   mutt       gen mutt's check: stat every mailbox, read those with new mail
 *   tmpwatch   readdir, lstat every file, unlink those not read for `days`
 *   hsm-scan   find, then read a fraction of the files cold for cold-days
 *   churn      nothing at the run itself: its ops are drawn (Poisson, the
 *              per-day rates scaled to the time until the next run)
 *   mark       only the mark
 *
 * One tree is shared by all jobs and lives (tracegen_private.h engines):
 * churn's creates and unlinks, tmpwatch's unlinks and mutt's mailboxes are in
 * it, so a later walk or backup sees what changed.  A job that starts while
 * an earlier one is still working (the clock is past its time) starts late,
 * as if run one after the other: the trace is one process's view.
 *
 * Determinism (TG1): every job draws from its own stream of the seed, chosen
 * by its name, so adding a job does not change the draws of the others.
 */
#include "tracegen_private.h"

#include <string.h>

#include "scenario_file.h"

enum event_kind { EVENT_RUN, EVENT_CHURN, EVENT_DELIVERY };

struct event {
	int64_t t_ns;
	uint64_t seq;            /* queue order: breaks ties */
	guint job;
	enum event_kind kind;
	guint what;              /* EVENT_CHURN: enum tracegen_churn_kind; EVENT_DELIVERY: the mailbox */
};

struct job_state {
	const struct scenario_job *spec;
	struct fstree_node *top;  /* what it acts on: the tree's root or its dir = NAME */
	guint runs;
	bool has_run;
	int64_t last_run_ns;     /* backup: the previous run's time */
	GQueue kept;             /* snapshot: char *, oldest first */
	struct tracegen_churn *churn;
	struct tracegen_mutt *mutt;
	struct tracegen_rng rng; /* hsm-scan; mutt's and churn's are the engines' */
	struct tracegen_params churn_params;
};

struct timeline {
	struct tracegen_session s;
	const struct scenario_spec *spec;
	struct job_state *jobs;
	GSequence *queue;        /* struct event *, by (t_ns, seq) */
	uint64_t next_seq;
	int64_t end_ns;
	GHashTable *made_dirs;   /* snapshot directories already created */
	GString *path;
};

static uint64_t name_stream(const char *name)
{
	uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a */
	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * UINT64_C(1099511628211);
	return h;
}

static bool job_fail(struct timeline *x, const struct job_state *j, const char *reason)
{
	g_set_error(x->s.error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS, "%s: [job %s]: %s", j->spec->where,
		    j->spec->name, reason);
	return false;
}

/* --- the queue ------------------------------------------------------------------------ */

static gint compare_events(gconstpointer a, gconstpointer b, gpointer unused)
{
	const struct event *x = a, *y = b;
	(void)unused;
	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void queue(struct timeline *x, int64_t t_ns, guint job, enum event_kind kind, guint what)
{
	if (t_ns >= x->end_ns)
		return;
	struct event *e = g_new(struct event, 1);
	*e = (struct event){ t_ns, x->next_seq++, job, kind, what };
	g_sequence_insert_sorted(x->queue, e, compare_events, NULL);
}

static int64_t next_run(const struct timeline *x, const struct job_state *j, int64_t after_ns)
{
	return scenario_next_run(&j->spec->schedule, x->s.start_ns, after_ns + 1);
}

/* Ops of a per-day MEAN over [T, NEXT), at uniform times. */
static void draw_ops(struct timeline *x, guint job, struct tracegen_rng *rng, double per_day, int64_t t,
		     int64_t next, enum event_kind kind, guint what)
{
	int64_t span = MIN(next, x->end_ns) - t;
	if (span <= 0)
		return;
	uint64_t n = tracegen_rng_poisson(rng, per_day * (double)span / (double)TRACE_NS_PER_DAY);
	for (uint64_t i = 0; i < n; i++)
		queue(x, t + (int64_t)tracegen_rng_below(rng, (uint64_t)span), job, kind, what);
}

/* --- what the tree believes ----------------------------------------------------------- */

static void touch_files(struct fstree_node *node, int64_t t_ns)
{
	if (node->kind == FSTREE_FILE && !node->first_link)
		node->atime_ns = t_ns;
	for (guint i = 0; node->kind == FSTREE_DIR && i < node->children->len; i++)
		touch_files(g_ptr_array_index(node->children, i), t_ns);
}

static struct fstree_node *inode_of(struct fstree_node *node)
{
	return node->first_link ? node->first_link : node;
}

static bool op_on(struct timeline *x, enum trace_op_kind kind, const struct fstree_node *node, int64_t cost_ns)
{
	fstree_path(node, x->s.prefix, x->path);
	return trace_writer_path_op(x->s.w, kind, x->path->str, x->s.error) &&
	       tracegen_clock_spend(&x->s.clock, x->s.w, cost_ns, x->s.error);
}

static int64_t read_cost(const struct fstree_node *node)
{
	return TRACEGEN_COST_READ_FILE_NS + (int64_t)(node->size * TRACEGEN_COST_READ_BYTE_PS / 1000);
}

/* --- the jobs -------------------------------------------------------------------------- */

/* {n} {date} {time} {job} in TEMPLATE. */
static char *expand(const struct timeline *x, const struct job_state *j, const char *template)
{
	g_autofree char *date = tracegen_format_date(x->s.clock.now_ns);
	int64_t minutes = (x->s.clock.now_ns % TRACE_NS_PER_DAY) / (60 * TRACE_NS_PER_SEC);
	g_autofree char *time = g_strdup_printf("%02d%02d", (int)(minutes / 60), (int)(minutes % 60));
	g_autofree char *n = g_strdup_printf("%u", j->runs);
	GString *out = g_string_new(template);
	g_string_replace(out, "{n}", n, 0);
	g_string_replace(out, "{date}", date, 0);
	g_string_replace(out, "{time}", time, 0);
	g_string_replace(out, "{job}", j->spec->name, 0);
	return g_string_free(out, FALSE);
}

static bool make_snapshot_dir(struct timeline *x, const char *dir)
{
	if (g_hash_table_contains(x->made_dirs, dir))
		return true;
	g_hash_table_add(x->made_dirs, g_strdup(dir));
	return trace_writer_path_op(x->s.w, TRACE_MKDIR, dir, x->s.error);
}

static bool run_snapshot(struct timeline *x, struct job_state *j)
{
	const struct scenario_job *spec = j->spec;
	const char *dir = spec->dir ? spec->dir : "/snapshots";
	g_autofree char *name = expand(x, j, spec->snapshot_name ? spec->snapshot_name : "{job}-{date}-{time}");
	char *dst = g_strdup_printf("%s/%s", dir, name);
	for (GList *l = j->kept.head; l; l = l->next) {
		if (!strcmp(l->data, dst)) {
			g_free(dst);
			return job_fail(x, j, "a snapshot name repeats: put {n} or {time} in name");
		}
	}
	struct trace_op op;
	trace_op_init(&op, TRACE_SNAPSHOT);
	op.path = "/";
	op.path2 = dst;
	op.readonly = spec->readonly;
	g_queue_push_tail(&j->kept, dst);
	if (!make_snapshot_dir(x, dir) || !trace_writer_op(x->s.w, &op, x->s.error))
		return false;
	while (spec->keep > 0 && g_queue_get_length(&j->kept) > (guint)spec->keep) {
		g_autofree char *oldest = g_queue_pop_head(&j->kept);
		if (!trace_writer_path_op(x->s.w, TRACE_DELETE_SNAPSHOT, oldest, x->s.error))
			return false;
	}
	return tracegen_clock_spend(&x->s.clock, x->s.w, TRACEGEN_COST_SNAPSHOT_NS, x->s.error);
}

/* rsync -a's pass over one directory (quick check: mtime since the last run). */
static bool backup_dir(struct timeline *x, const struct job_state *j, struct fstree_node *dir)
{
	if (!op_on(x, TRACE_STAT, dir, TRACEGEN_COST_STAT_NS) ||
	    !op_on(x, TRACE_READDIR, dir, TRACEGEN_COST_READDIR_NS))
		return false;
	for (guint i = 0; i < dir->children->len; i++) {
		struct fstree_node *node = g_ptr_array_index(dir->children, i);
		if (node->kind == FSTREE_DIR) {
			if (!backup_dir(x, j, node))
				return false;
			continue;
		}
		if (!op_on(x, TRACE_STAT, node, TRACEGEN_COST_STAT_NS))
			return false;
		bool changed = !j->has_run || inode_of(node)->mtime_ns >= j->last_run_ns;
		if (node->kind == FSTREE_SYMLINK ? !j->has_run : (changed && !node->first_link)) {
			if (node->kind == FSTREE_FILE)
				node->atime_ns = x->s.clock.now_ns;
			if (!op_on(x, TRACE_READ, node, read_cost(node)))
				return false;
		}
	}
	return true;
}

/* tmpwatch --atime: unlink the files not read for DAYS days. */
static bool tmpwatch_dir(struct timeline *x, const struct job_state *j, struct fstree_node *dir)
{
	int days = j->spec->age_days >= 0 ? j->spec->age_days : 10;
	g_autoptr(GPtrArray) old = g_ptr_array_new();
	if (!op_on(x, TRACE_READDIR, dir, TRACEGEN_COST_READDIR_NS))
		return false;
	for (guint i = 0; i < dir->children->len; i++) {
		struct fstree_node *node = g_ptr_array_index(dir->children, i);
		if (node->kind == FSTREE_DIR && !tmpwatch_dir(x, j, node))
			return false;
		if (node->kind != FSTREE_FILE)
			continue;
		if (!op_on(x, TRACE_STAT, node, TRACEGEN_COST_STAT_NS))
			return false;
		if (x->s.clock.now_ns - inode_of(node)->atime_ns <= (int64_t)days * TRACE_NS_PER_DAY)
			continue;
		if (!op_on(x, TRACE_UNLINK, node, TRACEGEN_COST_STAT_NS))
			return false;
		g_ptr_array_add(old, node);
	}
	for (guint i = 0; i < old->len; i++)
		fstree_detach(x->s.tree, g_ptr_array_index(old, i));
	return true;
}

static bool run_hsm_scan(struct timeline *x, struct job_state *j)
{
	int cold_days = j->spec->age_days >= 0 ? j->spec->age_days : 90;
	return tracegen_walk(x->s.w, &x->s.clock, x->s.tree, x->s.prefix, TRACEGEN_WALK_FIND, x->s.error) &&
	       tracegen_migrate_cold(&x->s, j->spec->read_fraction,
				     x->s.clock.now_ns - (int64_t)cold_days * TRACE_NS_PER_DAY, &j->rng);
}

static bool walk_and_touch(struct timeline *x, enum tracegen_walker walker)
{
	int64_t t = x->s.clock.now_ns;
	bool ok = tracegen_walk(x->s.w, &x->s.clock, x->s.tree, x->s.prefix, walker, x->s.error);
	if (walker != TRACEGEN_WALK_FIND)
		touch_files(x->s.tree->root, t);
	return ok;
}

static bool do_run(struct timeline *x, guint index, int64_t t, int64_t next)
{
	struct job_state *j = &x->jobs[index];
	switch (j->spec->type) {
	case SCENARIO_SNAPSHOT:
		return run_snapshot(x, j);
	case SCENARIO_READ_ALL:
		return walk_and_touch(x, TRACEGEN_WALK_GREP);
	case SCENARIO_FIND:
		return walk_and_touch(x, TRACEGEN_WALK_FIND);
	case SCENARIO_TAR:
		return walk_and_touch(x, TRACEGEN_WALK_TAR);
	case SCENARIO_BACKUP:
		return backup_dir(x, j, x->s.tree->root);
	case SCENARIO_TMPWATCH:
		return tmpwatch_dir(x, j, j->top);
	case SCENARIO_HSM_SCAN:
		return run_hsm_scan(x, j);
	case SCENARIO_MUTT:
		for (guint b = 0; b < tracegen_mutt_mailboxes(j->mutt); b++)
			draw_ops(x, index, tracegen_mutt_rng(j->mutt), j->spec->mails_per_day, t, next, EVENT_DELIVERY, b);
		return tracegen_mutt_check(j->mutt);
	case SCENARIO_CHURN:
		for (guint k = 0; k < TRACEGEN_CHURN_KINDS; k++)
			draw_ops(x, index, tracegen_churn_rng(j->churn), tracegen_churn_rate(j->churn, k), t, next,
				 EVENT_CHURN, k);
		return true;
	case SCENARIO_MARK:
		return true;
	}
	return false;
}

static bool run_job(struct timeline *x, guint index, int64_t t)
{
	struct job_state *j = &x->jobs[index];
	int64_t next = next_run(x, j, t);
	queue(x, next, index, EVENT_RUN, 0);
	j->runs++;
	if (!tracegen_clock_advance_to(&x->s.clock, x->s.w, t, x->s.error))
		return false;
	int64_t started = x->s.clock.now_ns;
	if (!do_run(x, index, t, next))
		return false;
	j->has_run = true;
	j->last_run_ns = started;
	if (!j->spec->mark)
		return true;
	g_autofree char *label = expand(x, j, j->spec->mark);
	return tracegen_session_measure(&x->s, label);
}

static bool run_event(struct timeline *x, const struct event *e)
{
	struct job_state *j = &x->jobs[e->job];
	if (e->kind == EVENT_RUN)
		return run_job(x, e->job, e->t_ns);
	if (!tracegen_clock_advance_to(&x->s.clock, x->s.w, e->t_ns, x->s.error))
		return false;
	if (e->kind == EVENT_CHURN)
		return tracegen_churn_do(j->churn, (enum tracegen_churn_kind)e->what);
	return tracegen_mutt_deliver(j->mutt, e->what);
}

/* --- setup ------------------------------------------------------------------------------ */

/* dir = NAME in the tree's top directory: made (mkdir) when missing. */
static bool setup_dir(struct timeline *x, struct job_state *j, const char *name, bool must_be_new)
{
	struct fstree_node *found = fstree_child(x->s.tree->root, name);
	if (found && (must_be_new || found->kind != FSTREE_DIR))
		return job_fail(x, j, must_be_new ? "dir: already in the tree" : "dir: in the tree, not a directory");
	if (found) {
		j->top = found;
		return true;
	}
	j->top = fstree_add(x->s.tree, x->s.tree->root, FSTREE_DIR, name);
	j->top->mode = 0755;
	j->top->mtime_ns = j->top->atime_ns = x->s.clock.now_ns;
	fstree_path(j->top, x->s.prefix, x->path);
	return trace_writer_path_op(x->s.w, TRACE_MKDIR, x->path->str, x->s.error);
}

static bool setup_mutt(struct timeline *x, struct job_state *j)
{
	if (!setup_dir(x, j, j->spec->subdir ? j->spec->subdir : "Mail", true))
		return false;
	j->top->mode = 0700;
	fstree_path(j->top, x->s.prefix, x->path);
	g_autofree char *path = g_strdup(x->path->str);
	j->mutt = tracegen_mutt_new(&x->s, (guint)j->spec->mailboxes,
				    (uint64_t)x->spec->tree.seed ^ name_stream(j->spec->name));
	return tracegen_mutt_create(j->mutt, path, j->top);
}

static bool setup_job(struct timeline *x, guint index)
{
	struct job_state *j = &x->jobs[index];
	const struct scenario_job *spec = j->spec;
	g_queue_init(&j->kept);
	if (!trace_writer_comment(x->s.w, x->s.error, "job %s (%s)", spec->name, spec->where))
		return false;
	j->top = x->s.tree->root;
	if (spec->subdir && spec->type != SCENARIO_MUTT && !setup_dir(x, j, spec->subdir, false))
		return false;
	tracegen_rng_seed_stream(&j->rng, (uint64_t)x->spec->tree.seed, name_stream(spec->name));
	if (spec->type == SCENARIO_CHURN) {
		j->churn_params = spec->churn;
		j->churn_params.seed = x->spec->tree.seed;
		j->churn_params.max_file_size = x->spec->tree.max_file_size;
		j->churn = tracegen_churn_new(&x->s, &j->churn_params, j->top, spec->name, name_stream(spec->name));
	}
	if (spec->type == SCENARIO_SNAPSHOT && spec->dir) {
		const char *top = x->s.prefix;
		size_t n = strlen(spec->dir);
		if (strchr(spec->dir + 1, '/') || (!strncmp(top, spec->dir, n) && (top[n] == '/' || !top[n])))
			return job_fail(x, j, "dir must be a new directory at the mount's top, e.g. /snapshots");
	}
	if (spec->type == SCENARIO_MUTT && !setup_mutt(x, j))
		return false;
	queue(x, scenario_next_run(&spec->schedule, x->s.start_ns, x->s.start_ns), index, EVENT_RUN, 0);
	return true;
}

static void clear_job(struct job_state *j)
{
	g_queue_clear_full(&j->kept, g_free);
	tracegen_churn_free(j->churn);
	tracegen_mutt_free(j->mutt);
}

bool tracegen_run_scenario(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	struct scenario_spec *spec = scenario_file_load(p->scenario_file, p->sets, p->scenario_seed, error);
	if (!spec)
		return false;
	struct timeline x = { .spec = spec, .queue = g_sequence_new(g_free), .path = g_string_new(NULL),
			      .made_dirs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL) };
	x.jobs = g_new0(struct job_state, spec->jobs->len);
	for (guint i = 0; i < spec->jobs->len; i++)
		x.jobs[i].spec = g_ptr_array_index(spec->jobs, i);
	bool ok = trace_writer_comment(w, error, "scenario %s: %d days, seed %" G_GINT64_FORMAT, spec->path,
				       spec->days, spec->tree.seed) &&
		  tracegen_session_begin(&x.s, &spec->tree, spec->tree.prefix ? spec->tree.prefix : "/tree", w, error);
	x.end_ns = x.s.start_ns + (int64_t)spec->days * TRACE_NS_PER_DAY;
	for (guint i = 0; ok && i < spec->jobs->len; i++)
		ok = setup_job(&x, i);
	while (ok && g_sequence_get_length(x.queue) > 0) {
		GSequenceIter *first = g_sequence_get_begin_iter(x.queue);
		struct event e = *(struct event *)g_sequence_get(first);
		g_sequence_remove(first);
		ok = run_event(&x, &e);
	}
	for (guint i = 0; i < spec->jobs->len; i++)
		clear_job(&x.jobs[i]);
	g_free(x.jobs);
	g_sequence_free(x.queue);
	g_hash_table_unref(x.made_dirs);
	g_string_free(x.path, TRUE);
	tracegen_session_end(&x.s);
	scenario_spec_free(spec);
	return ok;
}
