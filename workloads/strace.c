/*
 * workloads/strace.c - the strace-log-to-trace converter (see strace.h).
 *
 * State, and who shares it:
 *
 *     pid 100 --fds--> fd table { 3 -> fd_entry{cloexec} --> open_file{real, offset, read_done, ...} }
 *        \---cwd--> open_file{real}      ^ a dup()ed fd points to the same open_file
 *                    (a cwd is held as an open file of its directory, as fchdir(2) takes one)
 *     pid 101 (thread, CLONE_FILES|CLONE_FS) shares both; a fork copies the table
 *     (the copies point to the same open_files, as after fork(2)).
 *
 *     nodes: "" -> DIR, "a" -> DIR, "a/x" -> FILE{size}, "b/lnk" -> SYMLINK{"../a/x"}
 *     (paths relative to ROOT; from options.tree, then updated by every op emitted)
 *
 * A line goes: strace_line_parse -> (join an unfinished call with its
 * resumption) -> strace_call_parse -> the handler of the call's name, which
 * resolves paths (resolve_path), checks them against the map, emits ops and
 * updates the state.  Only calls that succeeded are replayed: a failed call
 * changed nothing.
 *
 * Invariants (besides ST1-ST5 of strace.h):
 *   SC1 an open_file lives while an fd_entry or a process's cwd points to it (refcount);
 *   SC2 nodes holds "" (ROOT) when options.tree was given; a node's parent
 *      is a DIR node;
 *   SC3 the clock never goes back: "clock +D" only with D > 0.
 */
#include "strace.h"

#include <string.h>

#include "strace_line.h"

G_DEFINE_QUARK(cowsim-strace-error-quark, strace_error)

#define MAX_SYMLINKS 40        /* Linux MAXSYMLINKS */
#define REPORT_MALFORMED_MAX 20
#define NS_PER_DAY (INT64_C(86400) * 1000000000)

enum node_kind { NODE_DIR, NODE_FILE, NODE_SYMLINK };

struct node {
	enum node_kind kind;
	uint64_t size;           /* bytes, FILE */
	char *target;            /* SYMLINK */
};

struct open_file {
	int refs;
	char *real;              /* absolute, normalized real path at open (kept up to date on renames) */
	bool append;
	bool unlinked;           /* its name was removed: ops on it cannot be expressed */
	bool read_done;          /* a read op was written for this open */
	bool readdir_done;
	uint64_t offset;         /* bytes: the file position */
};

struct fd_entry {
	struct open_file *file;
	bool cloexec;
};

struct proc {
	int64_t pid;
	GHashTable *fds;         /* the fd table: GINT_TO_POINTER(fd) -> struct fd_entry *; refcounted */
	struct open_file *cwd;   /* the working directory */
	GString *pending;        /* the text of an unfinished call, or NULL */
	char pending_name[64];
	uint64_t pending_line;
};

enum outcome {
	OUT_CONVERTED, OUT_NO_EFFECT, OUT_OTHER, OUT_OUTSIDE, OUT_FAILED, OUT_UNKNOWN_FD, OUT_INCONSISTENT,
	OUT_UNSUPPORTED, OUT_MALFORMED, OUT_ERROR,
};

struct strace_converter {
	struct strace_options opt;
	const char *prefix;
	size_t root_len;
	struct trace_writer *w;
	GHashTable *nodes;       /* rel path -> struct node * */
	bool tree_known;
	GHashTable *procs;       /* pid (int64 key) -> struct proc * */
	struct strace_stats stats;
	GTree *unsupported;      /* call name -> count, sorted for the report */
	GPtrArray *malformed;    /* "LOG:LINE: reason" of the first few */
	uint64_t ops_at_start;
	/* clock (SC3) */
	enum strace_time_kind time_kind;
	bool time_kind_set;      /* by the first line */
	bool clock_started;
	bool sim_known;          /* sim_now is an absolute time */
	int64_t last_log_ns;     /* the log time of the last clock step */
	int64_t line_ns;         /* the time of the line being converted */
	int64_t sim_now;         /* the simulated time after the steps written */
	/* the current call, for messages */
	const char *log_name;
	uint64_t lineno;
	const char *why;         /* OUT_MALFORMED / OUT_UNSUPPORTED: the reason */
	GError **error;
	GString *scratch, *path_a, *path_b;
};

/* --- state: nodes, open files, fd tables, processes --------------------------------- */

static void node_free(gpointer data)
{
	struct node *n = data;
	g_free(n->target);
	g_free(n);
}

static struct node *node_set(struct strace_converter *c, const char *rel, enum node_kind kind, uint64_t size,
			     const char *target)
{
	struct node *n = g_new0(struct node, 1);
	n->kind = kind;
	n->size = size;
	n->target = g_strdup(target);
	g_hash_table_replace(c->nodes, g_strdup(rel), n);
	return n;
}

static struct node *node_get(struct strace_converter *c, const char *rel)
{
	return g_hash_table_lookup(c->nodes, rel);
}

static void load_tree_node(struct strace_converter *c, const struct fstree_node *fn, GString *rel)
{
	const struct fstree_node *first = fn->first_link ? fn->first_link : fn;
	enum node_kind kind = fn->kind == FSTREE_DIR ? NODE_DIR : fn->kind == FSTREE_FILE ? NODE_FILE : NODE_SYMLINK;
	node_set(c, rel->str, kind, first->size, fn->target);
	if (fn->kind != FSTREE_DIR)
		return;
	for (guint i = 0; i < fn->children->len; i++) {
		const struct fstree_node *child = g_ptr_array_index(fn->children, i);
		size_t saved = rel->len;
		if (rel->len)
			g_string_append_c(rel, '/');
		g_string_append(rel, child->name);
		load_tree_node(c, child, rel);
		g_string_truncate(rel, saved);
	}
}

static bool is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && path[n] == '/';
}

/* Move every node at OLD or below it to NEW (a rename). */
static void nodes_move(struct strace_converter *c, const char *old, const char *new)
{
	g_autoptr(GPtrArray) keys = g_ptr_array_new();
	GHashTableIter it;
	gpointer key;
	g_hash_table_iter_init(&it, c->nodes);
	while (g_hash_table_iter_next(&it, &key, NULL))
		if (!strcmp(key, old) || is_under(key, old))
			g_ptr_array_add(keys, key);
	for (guint i = 0; i < keys->len; i++) {
		const char *k = g_ptr_array_index(keys, i);
		gpointer orig_key, value;
		g_hash_table_steal_extended(c->nodes, k, &orig_key, &value);
		char *moved = g_strconcat(new, (char *)orig_key + strlen(old), NULL);
		g_hash_table_replace(c->nodes, moved, value);
		g_free(orig_key);
	}
}

static void nodes_remove_below(struct strace_converter *c, const char *rel)
{
	GHashTableIter it;
	gpointer key;
	g_hash_table_remove(c->nodes, rel);
	g_hash_table_iter_init(&it, c->nodes);
	while (g_hash_table_iter_next(&it, &key, NULL))
		if (is_under(key, rel))
			g_hash_table_iter_remove(&it);
}

/* A new open file of REAL with no reference yet: fd_install and proc_add take them. */
static struct open_file *open_file_new(const char *real)
{
	struct open_file *f = g_new0(struct open_file, 1);
	f->real = g_strdup(real);
	return f;
}

static void open_file_unref(struct open_file *f)
{
	if (--f->refs > 0)
		return;
	g_free(f->real);
	g_free(f);
}

static void fd_entry_free(gpointer data)
{
	struct fd_entry *e = data;
	open_file_unref(e->file);
	g_free(e);
}

/* A new, empty fd table: its own reference is the caller's (g_hash_table_ref/unref). */
static GHashTable *fd_table_new(void)
{
	return g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, fd_entry_free);
}

static void fd_install(GHashTable *t, int64_t fd, struct open_file *f, bool cloexec)
{
	struct fd_entry *e = g_new0(struct fd_entry, 1);
	e->file = f;
	f->refs++;
	e->cloexec = cloexec;
	g_hash_table_replace(t, GINT_TO_POINTER((int)fd), e);
}

/* A copy of T (fork without CLONE_FILES); SKIP_CLOEXEC drops the O_CLOEXEC fds (exec). */
static GHashTable *fd_table_copy(GHashTable *t, bool skip_cloexec)
{
	GHashTable *copy = fd_table_new();
	GHashTableIter it;
	gpointer key, value;
	g_hash_table_iter_init(&it, t);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		struct fd_entry *e = value;
		if (!skip_cloexec || !e->cloexec)
			fd_install(copy, GPOINTER_TO_INT(key), e->file, e->cloexec);
	}
	return copy;
}

static void proc_free(gpointer data)
{
	struct proc *p = data;
	g_hash_table_unref(p->fds);
	open_file_unref(p->cwd);
	if (p->pending)
		g_string_free(p->pending, TRUE);
	g_free(p);
}

/* Takes the reference FDS holds and adds one to CWD. */
static struct proc *proc_add(struct strace_converter *c, int64_t pid, GHashTable *fds, struct open_file *cwd)
{
	struct proc *p = g_new0(struct proc, 1);
	p->pid = pid;
	p->fds = fds;
	p->cwd = cwd;
	cwd->refs++;
	g_hash_table_replace(c->procs, g_memdup2(&pid, sizeof(pid)), p);
	return p;
}

static bool is_clone_name(const char *name)
{
	return !strcmp(name, "clone") || !strcmp(name, "clone3") || !strcmp(name, "fork") || !strcmp(name, "vfork");
}

/* A child made by PARENT's clone whose flags text is FLAGS (NULL: fork). */
static struct proc *proc_clone(struct strace_converter *c, struct proc *parent, int64_t pid, const char *flags)
{
	bool files = flags && strace_arg_has_flag(flags, "CLONE_FILES");
	bool fs = flags && strace_arg_has_flag(flags, "CLONE_FS");
	GHashTable *fds = files ? g_hash_table_ref(parent->fds) : fd_table_copy(parent->fds, false);
	return proc_add(c, pid, fds, fs ? parent->cwd : open_file_new(parent->cwd->real));
}

/* The process PID; a new one inherits from the process with an unfinished
 * clone (strace -f can show the child's first call before the clone returns). */
static struct proc *proc_get(struct strace_converter *c, int64_t pid)
{
	struct proc *p = g_hash_table_lookup(c->procs, &pid);
	if (p)
		return p;
	struct proc *parent = NULL;
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, c->procs);
	while (g_hash_table_iter_next(&it, NULL, &value)) {
		struct proc *q = value;
		if (q->pending && is_clone_name(q->pending_name) &&
		    (!parent || q->pending_line > parent->pending_line))
			parent = q;
	}
	if (parent)
		return proc_clone(c, parent, pid, strcmp(parent->pending_name, "clone") &&
					  strcmp(parent->pending_name, "clone3") ? NULL : parent->pending->str);
	return proc_add(c, pid, fd_table_new(), open_file_new(c->opt.cwd));
}

/* F's path after a rename of OLD to NEW, when F is OLD or below it. */
static void open_file_follow(struct open_file *f, const char *old, const char *new)
{
	if (!strcmp(f->real, old) || is_under(f->real, old)) {
		char *moved = g_strconcat(new, f->real + strlen(old), NULL);
		g_free(f->real);
		f->real = moved;
	}
}

/* After a rename of OLD to NEW (real paths): open files and cwds follow. */
static void follow_rename(struct strace_converter *c, const char *old, const char *new)
{
	GHashTableIter pit, fit;
	gpointer value;
	g_hash_table_iter_init(&pit, c->procs);
	while (g_hash_table_iter_next(&pit, NULL, &value)) {
		struct proc *p = value;
		open_file_follow(p->cwd, old, new);
		g_hash_table_iter_init(&fit, p->fds);
		while (g_hash_table_iter_next(&fit, NULL, &value))
			open_file_follow(((struct fd_entry *)value)->file, old, new);
	}
}

/* After an unlink or rmdir of REAL: open files of that name can no longer be named. */
static void mark_unlinked(struct strace_converter *c, const char *real)
{
	GHashTableIter pit, fit;
	gpointer value;
	g_hash_table_iter_init(&pit, c->procs);
	while (g_hash_table_iter_next(&pit, NULL, &value)) {
		g_hash_table_iter_init(&fit, ((struct proc *)value)->fds);
		while (g_hash_table_iter_next(&fit, NULL, &value)) {
			struct open_file *f = ((struct fd_entry *)value)->file;
			if (!strcmp(f->real, real))
				f->unlinked = true;
		}
	}
}

/* --- converter life ------------------------------------------------------------------- */

static gint compare_names(gconstpointer a, gconstpointer b, gpointer data)
{
	(void)data;
	return strcmp(a, b);
}

struct strace_converter *strace_converter_new(const struct strace_options *options, struct trace_writer *w)
{
	struct strace_converter *c = g_new0(struct strace_converter, 1);
	c->opt = *options;
	c->prefix = options->prefix ? options->prefix : "/tree";
	c->root_len = strlen(options->root);
	c->w = w;
	c->nodes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, node_free);
	c->procs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, proc_free);
	c->unsupported = g_tree_new_full(compare_names, NULL, g_free, NULL);
	c->malformed = g_ptr_array_new_with_free_func(g_free);
	c->scratch = g_string_new(NULL);
	c->path_a = g_string_new(NULL);
	c->path_b = g_string_new(NULL);
	c->ops_at_start = trace_writer_op_count(w);
	if (options->tree) {
		g_autoptr(GString) rel = g_string_new("");
		load_tree_node(c, options->tree->root, rel);
		c->tree_known = true;
	}
	if (options->clock_set) {
		c->sim_known = true;
		c->sim_now = options->now_ns;
	}
	return c;
}

void strace_converter_free(struct strace_converter *c)
{
	if (!c)
		return;
	g_hash_table_unref(c->procs);
	g_hash_table_unref(c->nodes);
	g_tree_unref(c->unsupported);
	g_ptr_array_unref(c->malformed);
	g_string_free(c->scratch, TRUE);
	g_string_free(c->path_a, TRUE);
	g_string_free(c->path_b, TRUE);
	g_free(c);
}

const struct strace_stats *strace_converter_stats(const struct strace_converter *c)
{
	return &c->stats;
}

/* --- paths -------------------------------------------------------------------------------- */

/* REAL relative to ROOT ("" for ROOT itself), or NULL when outside. */
static const char *rel_of(const struct strace_converter *c, const char *real)
{
	if (!strcmp(real, c->opt.root))
		return "";
	if (!strcmp(c->opt.root, "/"))
		return real + 1;
	return is_under(real, c->opt.root) ? real + c->root_len + 1 : NULL;
}

/* The trace path of REL: PREFIX or PREFIX/REL. */
static const char *trace_path(const struct strace_converter *c, const char *rel, GString *out)
{
	g_string_assign(out, c->prefix);
	if (*rel)
		g_string_append_printf(out, "/%s", rel);
	return out->str;
}

static bool clock_step(struct strace_converter *c);

static bool emit(struct strace_converter *c, const struct trace_op *op)
{
	return clock_step(c) && trace_writer_op(c->w, op, c->error);
}

static bool emit_path_op(struct strace_converter *c, enum trace_op_kind kind, const char *rel)
{
	g_autoptr(GString) path = g_string_new(NULL);
	struct trace_op op;
	trace_op_init(&op, kind);
	op.path = trace_path(c, rel, path);
	return emit(c, &op);
}

/* The symlink node at CUR (real), if CUR is inside ROOT and the map says so. */
static const struct node *symlink_at(struct strace_converter *c, const char *cur)
{
	const char *rel = rel_of(c, cur);
	const struct node *n = rel ? node_get(c, rel) : NULL;
	return n && n->kind == NODE_SYMLINK ? n : NULL;
}

static bool rest_is_empty(const char *p)
{
	while (*p == '/')
		p++;
	return !*p;
}

/* Walk PATH from BASE (both real) as the kernel does, into OUT: "." and ".."
 * and, through the map, symlinks (every one followed is a `read LINK` when
 * EMIT, its atime touched by the walk).  FOLLOW: follow a final symlink
 * (a trailing '/' always does).  False on a writer error or a loop. */
static bool walk_path(struct strace_converter *c, const char *base, const char *path, bool follow, bool emit_links,
		      GString *out, bool *loop)
{
	g_autoptr(GString) todo = g_string_new(path);
	size_t pos = 0;
	int links = 0;
	*loop = false;
	g_string_assign(out, *path == '/' ? "" : (strcmp(base, "/") ? base : ""));
	while (pos < todo->len) {
		size_t end = pos;
		while (end < todo->len && todo->str[end] != '/')
			end++;
		size_t len = end - pos;
		const char *comp = todo->str + pos;
		bool last = rest_is_empty(todo->str + end);
		bool trailing_slash = last && end < todo->len;
		pos = end + 1;
		if (len == 0 || (len == 1 && comp[0] == '.'))
			continue;
		if (len == 2 && comp[0] == '.' && comp[1] == '.') {
			char *slash = strrchr(out->str, '/');
			g_string_truncate(out, slash ? (size_t)(slash - out->str) : 0);
			continue;
		}
		size_t saved = out->len;
		g_string_append_c(out, '/');
		g_string_append_len(out, comp, (gssize)len);
		const struct node *link = (!last || follow || trailing_slash) ? symlink_at(c, out->str) : NULL;
		if (!link)
			continue;
		if (++links > MAX_SYMLINKS) {
			*loop = true;
			return true;
		}
		if (emit_links && !emit_path_op(c, TRACE_READ, rel_of(c, out->str)))
			return false;
		g_autofree char *rest = g_strdup(pos < todo->len ? todo->str + pos : "");
		g_string_printf(todo, "%s%s%s", link->target, *rest ? "/" : "", rest);
		pos = 0;
		if (link->target[0] == '/')
			g_string_truncate(out, 0);
		else
			g_string_truncate(out, saved);
	}
	if (!out->len)
		g_string_assign(out, "/");
	return true;
}

enum where { AT_INSIDE, AT_OUTSIDE, AT_UNKNOWN_FD, AT_LOOP, AT_FAIL, AT_TOO_LONG };

static struct open_file *fd_file(struct strace_converter *c, struct proc *p, const char *fd_arg);

/* Linux refuses a name past NAME_MAX (255 bytes) and a path past PATH_MAX
 * with ENAMETOOLONG, so a log line that shows one working is malformed, and
 * a trace could not hold it: false with c->why set. */
static bool within_name_limits(struct strace_converter *c, const char *real)
{
	if (strlen(real) > TRACE_PATH_MAX) {
		c->why = "a path of 4096 bytes or more (PATH_MAX), which Linux refuses";
		return false;
	}
	for (const char *p = real; *p;) {
		size_t len = strcspn(p, "/");
		if (len > TRACE_NAME_MAX) {
			c->why = "a name longer than 255 bytes (NAME_MAX), which Linux refuses";
			return false;
		}
		p += len + (p[len] == '/');
	}
	return true;
}

/* Resolve (DIRFD_ARG, PATH) for process P into OUT (real); DIRFD_ARG NULL is AT_FDCWD. */
static enum where resolve(struct strace_converter *c, struct proc *p, const char *dirfd_arg, const char *path,
			  bool follow, GString *out)
{
	const char *base = p->cwd->real;
	if (*path != '/' && dirfd_arg && strncmp(dirfd_arg, "AT_FDCWD", 8)) {
		struct open_file *f = fd_file(c, p, dirfd_arg);
		if (!f)
			return AT_UNKNOWN_FD;
		base = f->real;
	}
	bool loop;
	if (!walk_path(c, base, path, follow, true, out, &loop))
		return AT_FAIL;
	if (loop)
		return AT_LOOP;
	if (!within_name_limits(c, out->str))
		return AT_TOO_LONG;
	return rel_of(c, out->str) ? AT_INSIDE : AT_OUTSIDE;
}

/* --- the clock ------------------------------------------------------------------------------- */

/* Before the first op of a call: move the trace clock to the call's time (SC3). */
static bool clock_step(struct strace_converter *c)
{
	if (c->time_kind == STRACE_TIME_NONE)
		return true;
	if (!c->clock_started) {
		c->clock_started = true;
		c->last_log_ns = c->line_ns;
		if (c->opt.clock_set || c->time_kind != STRACE_TIME_EPOCH)
			return true;
		c->sim_known = true;
		c->sim_now = c->line_ns;
		return trace_writer_clock_set(c->w, c->line_ns, c->error);
	}
	int64_t d = c->line_ns - c->last_log_ns;
	if (c->time_kind == STRACE_TIME_OF_DAY && d < -NS_PER_DAY / 2)
		d += NS_PER_DAY; /* -tt crossed midnight */
	if (d <= 0)
		return true;
	c->last_log_ns = c->line_ns;
	c->sim_now += d;
	return trace_writer_clock_advance(c->w, d, c->error);
}

/* --- helpers for the handlers ------------------------------------------------------------------ */

static enum outcome malformed(struct strace_converter *c, const char *why)
{
	c->why = why;
	return OUT_MALFORMED;
}

static enum outcome unsupported(struct strace_converter *c, const char *what)
{
	c->why = what;
	return OUT_UNSUPPORTED;
}

static enum outcome from_where(enum where w)
{
	switch (w) {
	case AT_OUTSIDE: return OUT_OUTSIDE;
	case AT_UNKNOWN_FD: return OUT_UNKNOWN_FD;
	case AT_LOOP: return OUT_INCONSISTENT;
	case AT_FAIL: return OUT_ERROR;
	case AT_TOO_LONG: return OUT_MALFORMED; /* c->why says which limit */
	case AT_INSIDE: break;
	}
	return OUT_CONVERTED;
}

static const char *arg(const struct strace_call *call, size_t i)
{
	return i < call->argc ? call->args[i] : NULL;
}

/* The string argument I into OUT; NULL with c->why set when it is not one. */
static const char *string_arg(struct strace_converter *c, const struct strace_call *call, size_t i, GString *out)
{
	static const char *const reasons[] = { "argument 1 (path): ", "argument 2 (path): ", "argument 3 (path): ",
					       "argument 4 (path): ", "argument 5 (path): " };
	bool truncated = false;
	const char *a = arg(call, i);
	const char *why = a ? strace_arg_string(a, out, &truncated) : "missing";
	if (!why && truncated)
		why = "cut short by strace -s";
	if (!why)
		return out->str;
	g_string_printf(c->scratch, "%s%s", i < G_N_ELEMENTS(reasons) ? reasons[i] : "argument: ", why);
	c->why = c->scratch->str;
	return NULL;
}

static bool int_arg(const struct strace_call *call, size_t i, int64_t *out)
{
	const char *a = arg(call, i);
	return a && !strace_arg_int(a, out);
}

static struct open_file *fd_file(struct strace_converter *c, struct proc *p, const char *fd_arg)
{
	int64_t fd;
	if (!fd_arg || strace_arg_int(fd_arg, &fd))
		return NULL;
	struct fd_entry *e = g_hash_table_lookup(p->fds, GINT_TO_POINTER((int)fd));
	if (e)
		return e->file;
	/* strace -y names the file: take it as an fd opened before the log began. */
	g_autoptr(GString) decoration = g_string_new(NULL);
	if (!strace_arg_fd_path(fd_arg, decoration))
		return NULL;
	struct open_file *f = open_file_new(decoration->str);
	fd_install(p->fds, fd, f, false);
	return f;
}

/* The open file of the fd argument I, with its rel path (NULL when outside). */
static enum outcome fd_arg(struct strace_converter *c, struct proc *p, const struct strace_call *call, size_t i,
			   struct open_file **file, const char **rel)
{
	/* Both outputs are set on every path (gcc -O3 cannot tell otherwise). */
	*rel = NULL;
	*file = fd_file(c, p, arg(call, i));
	if (!*file)
		return arg(call, i) ? OUT_UNKNOWN_FD : malformed(c, "missing fd argument");
	*rel = rel_of(c, (*file)->real);
	if (!*rel)
		return OUT_OUTSIDE;
	return (*file)->unlinked ? unsupported(c, "(op on an unlinked file)") : OUT_CONVERTED;
}

/* ST3: a path the op needs to exist (or not) per the map. */
static bool exists(struct strace_converter *c, const char *rel)
{
	return !c->tree_known || node_get(c, rel);
}

static bool parent_is_dir(struct strace_converter *c, const char *rel)
{
	if (!c->tree_known)
		return true;
	const char *slash = strrchr(rel, '/');
	g_autofree char *parent = g_strndup(rel, slash ? (size_t)(slash - rel) : 0);
	const struct node *n = *rel ? node_get(c, parent) : NULL;
	return n && n->kind == NODE_DIR;
}

static bool fresh(struct strace_converter *c, const char *rel)
{
	return !node_get(c, rel) && parent_is_dir(c, rel);
}

/* Mode bits of a "0644" argument (0 when absent: the caller's default). */
static uint32_t mode_arg(const char *a, uint32_t fallback)
{
	int64_t m;
	return a && !strace_arg_int(a, &m) && m >= 0 ? (uint32_t)(m & 07777) : fallback;
}

/* --- handlers: open, close, dup ----------------------------------------------------------------- */

struct open_args {
	const char *dirfd;       /* NULL: AT_FDCWD */
	size_t path_index;
	const char *flags;
	uint32_t mode;
};

static bool write_create(struct strace_converter *c, const char *rel, uint32_t mode)
{
	g_autoptr(GString) path = g_string_new(NULL);
	struct trace_op op;
	trace_op_init(&op, TRACE_CREATE);
	op.path = trace_path(c, rel, path);
	op.size = 0;
	op.mode = mode & ~c->opt.umask;
	node_set(c, rel, NODE_FILE, 0, NULL);
	return emit(c, &op);
}

static bool write_truncate(struct strace_converter *c, const char *rel, uint64_t size)
{
	g_autoptr(GString) path = g_string_new(NULL);
	struct trace_op op;
	trace_op_init(&op, TRACE_TRUNCATE);
	op.path = trace_path(c, rel, path);
	op.size = size;
	struct node *n = node_get(c, rel);
	if (n)
		n->size = size;
	return emit(c, &op);
}

/* What O_CREAT / O_TRUNC did to REL; the open itself replays as nothing. */
static enum outcome open_effect(struct strace_converter *c, const char *rel, const struct open_args *a)
{
	bool creat = strace_arg_has_flag(a->flags, "O_CREAT");
	bool writes = strace_arg_has_flag(a->flags, "O_WRONLY") || strace_arg_has_flag(a->flags, "O_RDWR");
	const struct node *n = node_get(c, rel);
	if (creat && !n) {
		if (!parent_is_dir(c, rel))
			return OUT_INCONSISTENT;
		return write_create(c, rel, a->mode) ? OUT_CONVERTED : OUT_ERROR;
	}
	if (!exists(c, rel))
		return OUT_INCONSISTENT;
	if (strace_arg_has_flag(a->flags, "O_TRUNC") && writes && (!n || n->kind == NODE_FILE))
		return write_truncate(c, rel, 0) ? OUT_CONVERTED : OUT_ERROR;
	return OUT_NO_EFFECT;
}

static enum outcome do_open(struct strace_converter *c, struct proc *p, const struct strace_call *call,
			    const struct open_args *a)
{
	const char *path = string_arg(c, call, a->path_index, c->path_a);
	if (!path)
		return OUT_MALFORMED;
	if (!a->flags)
		return malformed(c, "missing flags argument");
	bool follow = !strace_arg_has_flag(a->flags, "O_NOFOLLOW") &&
		      !(strace_arg_has_flag(a->flags, "O_CREAT") && strace_arg_has_flag(a->flags, "O_EXCL"));
	g_autoptr(GString) real = g_string_new(NULL);
	g_autofree char *path_copy = g_strdup(path);
	enum where w = resolve(c, p, a->dirfd, path_copy, follow, real);
	if (w == AT_FAIL || w == AT_UNKNOWN_FD || w == AT_LOOP)
		return from_where(w);
	struct open_file *f = open_file_new(real->str);
	f->append = strace_arg_has_flag(a->flags, "O_APPEND");
	fd_install(p->fds, call->ret, f, strace_arg_has_flag(a->flags, "O_CLOEXEC"));
	return w == AT_OUTSIDE ? OUT_OUTSIDE : open_effect(c, rel_of(c, f->real), a);
}

static enum outcome h_open(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	bool at = !strcmp(call->name, "openat");
	struct open_args a = { at ? arg(call, 0) : NULL, at ? 1 : 0, arg(call, at ? 2 : 1), 0644 };
	a.mode = mode_arg(arg(call, at ? 3 : 2), 0644);
	return do_open(c, p, call, &a);
}

static enum outcome h_creat(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	struct open_args a = { NULL, 0, "O_CREAT|O_WRONLY|O_TRUNC", mode_arg(arg(call, 1), 0644) };
	return do_open(c, p, call, &a);
}

/* openat2(dirfd, path, {flags=..., mode=..., resolve=...}, size) */
static enum outcome h_openat2(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	const char *how = arg(call, 2);
	const char *m = how ? strstr(how, "mode=") : NULL;
	struct open_args a = { arg(call, 0), 1, how, 0644 };
	if (m)
		a.mode = mode_arg(m + 5, 0644);
	return do_open(c, p, call, &a);
}

static enum outcome h_close(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	int64_t fd;
	if (!int_arg(call, 0, &fd))
		return malformed(c, "argument 1 (fd): not a number");
	return g_hash_table_remove(p->fds, GINT_TO_POINTER((int)fd)) ? OUT_NO_EFFECT : OUT_UNKNOWN_FD;
}

static enum outcome h_close_range(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	int64_t lo, hi;
	if (!int_arg(call, 0, &lo) || !int_arg(call, 1, &hi))
		return malformed(c, "close_range: bad fd range");
	bool cloexec = arg(call, 2) && strace_arg_has_flag(arg(call, 2), "CLOSE_RANGE_CLOEXEC");
	GHashTableIter it;
	gpointer key, value;
	g_hash_table_iter_init(&it, p->fds);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		int fd = GPOINTER_TO_INT(key);
		if (fd < lo || fd > hi)
			continue;
		if (cloexec)
			((struct fd_entry *)value)->cloexec = true;
		else
			g_hash_table_iter_remove(&it);
	}
	return OUT_NO_EFFECT;
}

static enum outcome dup_to(struct strace_converter *c, struct proc *p, const char *old, int64_t new_fd,
			   bool cloexec)
{
	struct open_file *f = fd_file(c, p, old);
	if (!f)
		return OUT_UNKNOWN_FD;
	fd_install(p->fds, new_fd, f, cloexec);
	return rel_of(c, f->real) ? OUT_NO_EFFECT : OUT_OUTSIDE;
}

static enum outcome h_dup(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	bool cloexec = !strcmp(call->name, "dup3") && arg(call, 2) && strace_arg_has_flag(arg(call, 2), "O_CLOEXEC");
	return dup_to(c, p, arg(call, 0), call->ret, cloexec);
}

static enum outcome h_fcntl(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	const char *cmd = arg(call, 1);
	int64_t fd;
	if (!cmd || !int_arg(call, 0, &fd))
		return malformed(c, "fcntl: missing fd or command");
	if (!strcmp(cmd, "F_DUPFD") || !strcmp(cmd, "F_DUPFD_CLOEXEC"))
		return dup_to(c, p, arg(call, 0), call->ret, !strcmp(cmd, "F_DUPFD_CLOEXEC"));
	struct fd_entry *e = g_hash_table_lookup(p->fds, GINT_TO_POINTER((int)fd));
	if (!e)
		return OUT_UNKNOWN_FD;
	if (!strcmp(cmd, "F_SETFD"))
		e->cloexec = arg(call, 2) && strace_arg_has_flag(arg(call, 2), "FD_CLOEXEC");
	else if (!strcmp(cmd, "F_SETFL"))
		e->file->append = arg(call, 2) && strace_arg_has_flag(arg(call, 2), "O_APPEND");
	return rel_of(c, e->file->real) ? OUT_NO_EFFECT : OUT_OUTSIDE;
}

/* --- handlers: reading ------------------------------------------------------------------------------ */

/* The first read (TRACE_READ) or listing (TRACE_READDIR) of an open file is
 * the atime update; later ones change nothing. */
static enum outcome touch_once(struct strace_converter *c, struct open_file *f, const char *rel,
			       enum trace_op_kind kind)
{
	bool *done = kind == TRACE_READDIR ? &f->readdir_done : &f->read_done;
	if (*done)
		return OUT_NO_EFFECT;
	*done = true;
	const struct node *n = node_get(c, rel);
	bool consistent = kind == TRACE_READDIR ? !c->tree_known || (n && n->kind == NODE_DIR) : exists(c, rel);
	if (!consistent)
		return OUT_INCONSISTENT;
	return emit_path_op(c, kind, rel) ? OUT_CONVERTED : OUT_ERROR;
}

static enum outcome read_once(struct strace_converter *c, struct open_file *f, const char *rel)
{
	return touch_once(c, f, rel, TRACE_READ);
}

/* read readv pread64 preadv preadv2 */
static enum outcome h_read(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	struct open_file *f;
	const char *rel;
	enum outcome o = fd_arg(c, p, call, 0, &f, &rel);
	if (o != OUT_CONVERTED)
		return o;
	if (!strcmp(call->name, "read") || !strcmp(call->name, "readv"))
		f->offset += (uint64_t)call->ret;
	return read_once(c, f, rel);
}

/* mmap(addr, len, prot, flags, fd, off): the kernel touches atime when a file is mapped. */
static enum outcome h_mmap(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	int64_t fd;
	if (!int_arg(call, 4, &fd) || fd < 0)
		return OUT_OTHER;
	struct open_file *f;
	const char *rel;
	enum outcome o = fd_arg(c, p, call, 4, &f, &rel);
	return o == OUT_CONVERTED ? read_once(c, f, rel) : o;
}

static enum outcome h_getdents(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	struct open_file *f;
	const char *rel;
	enum outcome o = fd_arg(c, p, call, 0, &f, &rel);
	return o == OUT_CONVERTED ? touch_once(c, f, rel, TRACE_READDIR) : o;
}

static enum outcome h_lseek(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	struct open_file *f;
	const char *rel;
	enum outcome o = fd_arg(c, p, call, 0, &f, &rel);
	if (f)
		f->offset = (uint64_t)call->ret;
	return o == OUT_CONVERTED ? OUT_NO_EFFECT : o;
}

/* --- handlers: writing ------------------------------------------------------------------------------ */

static enum outcome write_at(struct strace_converter *c, struct open_file *f, const char *rel, bool positioned,
			     int64_t pos, int64_t len)
{
	struct node *n = node_get(c, rel);
	if (c->tree_known && (!n || n->kind != NODE_FILE))
		return OUT_INCONSISTENT;
	uint64_t off = positioned ? (uint64_t)pos : f->append && n ? n->size : f->offset;
	/* Linux refuses a write whose end passes MAX_LFS_FILESIZE (EFBIG,
	 * generic_write_check_limits), so a log that shows one succeeding is
	 * not one a trace can replay. */
	if (len > 0 && (off > (uint64_t)INT64_MAX || (uint64_t)len > (uint64_t)INT64_MAX - off))
		return malformed(c, "a write past 2^63 - 1 bytes (MAX_LFS_FILESIZE), which Linux refuses");
	if (!positioned)
		f->offset = off + (uint64_t)len;
	if (len <= 0)
		return OUT_NO_EFFECT;
	if (n && off + (uint64_t)len > n->size)
		n->size = off + (uint64_t)len;
	g_autoptr(GString) path = g_string_new(NULL);
	struct trace_op op;
	trace_op_init(&op, TRACE_WRITE);
	op.path = trace_path(c, rel, path);
	op.offset = off;
	op.length = (uint64_t)len;
	return emit(c, &op) ? OUT_CONVERTED : OUT_ERROR;
}

/* write writev pwrite64 pwritev pwritev2 */
static enum outcome h_write(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	struct open_file *f;
	const char *rel;
	int64_t pos = 0;
	bool positioned = call->name[0] == 'p';
	enum outcome o = fd_arg(c, p, call, 0, &f, &rel);
	if (o != OUT_CONVERTED)
		return o;
	if (positioned && (!int_arg(call, 3, &pos) || pos < 0))
		return malformed(c, "argument 4 (offset): not a number");
	return write_at(c, f, rel, positioned, pos, call->ret);
}

/* sendfile(out, in, offset, count) and copy_file_range(in, off_in, out, off_out, len, flags):
 * a read of IN and a write at OUT's position. */
static enum outcome h_copy(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	bool sendfile = !strncmp(call->name, "sendfile", 8);
	struct open_file *in, *out;
	const char *in_rel, *out_rel;
	enum outcome r_in = fd_arg(c, p, call, sendfile ? 1 : 0, &in, &in_rel);
	if (r_in == OUT_CONVERTED)
		r_in = read_once(c, in, in_rel);
	if (r_in == OUT_ERROR || r_in == OUT_MALFORMED)
		return r_in;
	enum outcome r_out = fd_arg(c, p, call, sendfile ? 0 : 2, &out, &out_rel);
	if (r_out == OUT_CONVERTED)
		r_out = write_at(c, out, out_rel, false, 0, call->ret);
	if (r_out == OUT_ERROR || r_out == OUT_MALFORMED)
		return r_out;
	/* converted if either side was; else what the input side was */
	return r_in == OUT_CONVERTED || r_out == OUT_CONVERTED ? OUT_CONVERTED : r_in;
}

/* truncate(path, length) and ftruncate(fd, length) once the file is known:
 * argument 2 is the new size of a regular file. */
static enum outcome truncate_to(struct strace_converter *c, const struct strace_call *call, const char *rel)
{
	int64_t size;
	if (!int_arg(call, 1, &size) || size < 0)
		return malformed(c, "argument 2 (length): not a number");
	const struct node *n = node_get(c, rel);
	if (c->tree_known && (!n || n->kind != NODE_FILE))
		return OUT_INCONSISTENT;
	return write_truncate(c, rel, (uint64_t)size) ? OUT_CONVERTED : OUT_ERROR;
}

static enum outcome h_ftruncate(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	struct open_file *f;
	const char *rel;
	enum outcome o = fd_arg(c, p, call, 0, &f, &rel);
	if (o != OUT_CONVERTED)
		return o;
	return truncate_to(c, call, rel);
}

static enum outcome h_fsync(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	struct open_file *f;
	const char *rel;
	enum outcome o = fd_arg(c, p, call, 0, &f, &rel);
	if (o != OUT_CONVERTED)
		return o;
	if (!exists(c, rel))
		return OUT_INCONSISTENT;
	return emit_path_op(c, TRACE_FSYNC, rel) ? OUT_CONVERTED : OUT_ERROR;
}

/* --- handlers: stat family ------------------------------------------------------------------------------ */

static enum outcome stat_rel(struct strace_converter *c, const char *rel)
{
	if (!exists(c, rel))
		return OUT_INCONSISTENT;
	return emit_path_op(c, TRACE_STAT, rel) ? OUT_CONVERTED : OUT_ERROR;
}

/* A path call: (dirfd index or -1, path index, flags index or -1, follow by default). */
struct path_call {
	int dirfd;
	int path;
	int flags;
	bool follow;
};

/* Resolve the call's path (an empty path with AT_EMPTY_PATH, or NULL, is the
 * dirfd itself) into c->path_b and its rel into *rel. */
static enum outcome call_path(struct strace_converter *c, struct proc *p, const struct strace_call *call,
			      const struct path_call *pc, const char **rel)
{
	*rel = NULL; /* set on every path, as fd_arg() does */
	const char *dirfd = pc->dirfd >= 0 ? arg(call, (size_t)pc->dirfd) : NULL;
	const char *flags = pc->flags >= 0 ? arg(call, (size_t)pc->flags) : NULL;
	bool follow = pc->follow && !(flags && strace_arg_has_flag(flags, "AT_SYMLINK_NOFOLLOW"));
	if (flags && strace_arg_has_flag(flags, "AT_SYMLINK_FOLLOW"))
		follow = true;
	const char *a = arg(call, (size_t)pc->path);
	if (dirfd && a && (!strcmp(a, "NULL") || (!strcmp(a, "\"\"") && flags &&
						   strace_arg_has_flag(flags, "AT_EMPTY_PATH")))) {
		struct open_file *f;
		enum outcome o = fd_arg(c, p, call, (size_t)pc->dirfd, &f, rel);
		if (o == OUT_CONVERTED)
			g_string_assign(c->path_b, f->real);
		return o;
	}
	const char *path = string_arg(c, call, (size_t)pc->path, c->path_a);
	if (!path)
		return OUT_MALFORMED;
	g_autofree char *copy = g_strdup(path);
	enum where w = resolve(c, p, dirfd, copy, follow, c->path_b);
	if (w != AT_INSIDE)
		return from_where(w);
	*rel = rel_of(c, c->path_b->str);
	return OUT_CONVERTED;
}

static const struct path_call *stat_shape(const char *name)
{
	static const struct path_call follow1 = { -1, 0, -1, true }, nofollow1 = { -1, 0, -1, false },
				      at = { 0, 1, 3, true }, statx = { 0, 1, 2, true }, faccessat = { 0, 1, 3, true };
	if (!strcmp(name, "stat") || !strcmp(name, "stat64") || !strcmp(name, "access"))
		return &follow1;
	if (!strcmp(name, "lstat") || !strcmp(name, "lstat64"))
		return &nofollow1;
	if (!strcmp(name, "statx"))
		return &statx;
	if (!strcmp(name, "faccessat") || !strcmp(name, "faccessat2"))
		return &faccessat;
	return &at; /* newfstatat, fstatat64 */
}

static const char *const handlers_of_stat[] = {
	"stat", "stat64", "lstat", "lstat64", "newfstatat", "fstatat64", "statx", "access", "faccessat", "faccessat2",
};

static enum outcome h_stat(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	const char *rel;
	enum outcome o = call_path(c, p, call, stat_shape(call->name), &rel);
	return o == OUT_CONVERTED ? stat_rel(c, rel) : o;
}

static enum outcome h_fstat(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	struct open_file *f;
	const char *rel;
	enum outcome o = fd_arg(c, p, call, 0, &f, &rel);
	return o == OUT_CONVERTED ? stat_rel(c, rel) : o;
}

/* readlink(path, buf, size), readlinkat(dirfd, path, buf, size): a read of the link. */
static enum outcome h_readlink(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	static const struct path_call plain = { -1, 0, -1, false }, at = { 0, 1, -1, false };
	const char *rel;
	enum outcome o = call_path(c, p, call, !strcmp(call->name, "readlink") ? &plain : &at, &rel);
	if (o != OUT_CONVERTED)
		return o;
	const struct node *n = node_get(c, rel);
	if (c->tree_known && (!n || n->kind != NODE_SYMLINK))
		return OUT_INCONSISTENT;
	return emit_path_op(c, TRACE_READ, rel) ? OUT_CONVERTED : OUT_ERROR;
}

/* --- handlers: namespace changes --------------------------------------------------------------------------- */

static enum outcome h_mkdir(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	static const struct path_call plain = { -1, 0, -1, false }, at = { 0, 1, -1, false };
	bool is_at = !strcmp(call->name, "mkdirat");
	const char *rel;
	enum outcome o = call_path(c, p, call, is_at ? &at : &plain, &rel);
	if (o != OUT_CONVERTED)
		return o;
	if (!fresh(c, rel))
		return OUT_INCONSISTENT;
	g_autoptr(GString) path = g_string_new(NULL);
	struct trace_op op;
	trace_op_init(&op, TRACE_MKDIR);
	op.path = trace_path(c, rel, path);
	op.mode = mode_arg(arg(call, is_at ? 2 : 1), 0755) & ~c->opt.umask;
	node_set(c, rel, NODE_DIR, 0, NULL);
	return emit(c, &op) ? OUT_CONVERTED : OUT_ERROR;
}

static enum outcome h_unlink(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	static const struct path_call plain = { -1, 0, -1, false }, at = { 0, 1, -1, false };
	bool is_at = !strcmp(call->name, "unlinkat");
	bool dir = !strcmp(call->name, "rmdir") ||
		   (is_at && arg(call, 2) && strace_arg_has_flag(arg(call, 2), "AT_REMOVEDIR"));
	const char *rel;
	enum outcome o = call_path(c, p, call, is_at ? &at : &plain, &rel);
	if (o != OUT_CONVERTED)
		return o;
	g_autofree char *r = g_strdup(rel);
	const struct node *n = node_get(c, r);
	if (c->tree_known && (!n || (n->kind == NODE_DIR) != dir || !*r))
		return OUT_INCONSISTENT;
	if (!emit_path_op(c, dir ? TRACE_RMDIR : TRACE_UNLINK, r))
		return OUT_ERROR;
	nodes_remove_below(c, r);
	mark_unlinked(c, c->path_b->str);
	return OUT_CONVERTED;
}

/* rename(old, new), renameat(od, old, nd, new), renameat2(od, old, nd, new, flags) */
static enum outcome h_rename(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	static const struct path_call old_plain = { -1, 0, -1, false }, new_plain = { -1, 1, -1, false },
				      old_at = { 0, 1, -1, false }, new_at = { 2, 3, -1, false };
	bool is_at = strcmp(call->name, "rename") != 0;
	if (arg(call, 4) && strace_arg_has_flag(arg(call, 4), "RENAME_EXCHANGE"))
		return unsupported(c, "renameat2 RENAME_EXCHANGE");
	const char *old_rel, *new_rel;
	enum outcome o = call_path(c, p, call, is_at ? &old_at : &old_plain, &old_rel);
	if (o == OUT_MALFORMED || o == OUT_ERROR)
		return o;
	g_autofree char *old_real = g_strdup(c->path_b->str);
	g_autofree char *old_r = o == OUT_CONVERTED ? g_strdup(old_rel) : NULL;
	enum outcome n = call_path(c, p, call, is_at ? &new_at : &new_plain, &new_rel);
	if (n == OUT_MALFORMED || n == OUT_ERROR)
		return n;
	if (o != OUT_CONVERTED && n != OUT_CONVERTED)
		return o;
	if (o != OUT_CONVERTED || n != OUT_CONVERTED)
		return unsupported(c, o == OUT_CONVERTED ? "rename out of the root" : "rename into the root");
	g_autofree char *new_r = g_strdup(new_rel);
	const struct node *src = node_get(c, old_r), *dst = node_get(c, new_r);
	if (c->tree_known && (!src || !*old_r || !*new_r || !parent_is_dir(c, new_r) ||
			      (dst && (dst->kind == NODE_DIR) != (src->kind == NODE_DIR))))
		return OUT_INCONSISTENT;
	if (!strcmp(old_r, new_r))
		return OUT_NO_EFFECT;
	g_autoptr(GString) a = g_string_new(NULL), b = g_string_new(NULL);
	struct trace_op op;
	trace_op_init(&op, TRACE_RENAME);
	op.path = trace_path(c, old_r, a);
	op.path2 = trace_path(c, new_r, b);
	if (!emit(c, &op))
		return OUT_ERROR;
	if (dst) {
		nodes_remove_below(c, new_r);
		mark_unlinked(c, c->path_b->str);
	}
	nodes_move(c, old_r, new_r);
	follow_rename(c, old_real, c->path_b->str);
	return OUT_CONVERTED;
}

/* link(old, new), linkat(od, old, nd, new, flags) */
static enum outcome h_link(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	static const struct path_call old_plain = { -1, 0, -1, false }, new_plain = { -1, 1, -1, false },
				      old_at = { 0, 1, 4, false }, new_at = { 2, 3, -1, false };
	bool is_at = !strcmp(call->name, "linkat");
	const char *old_rel, *new_rel;
	enum outcome o = call_path(c, p, call, is_at ? &old_at : &old_plain, &old_rel);
	if (o != OUT_CONVERTED)
		return o;
	g_autofree char *old_r = g_strdup(old_rel);
	enum outcome n = call_path(c, p, call, is_at ? &new_at : &new_plain, &new_rel);
	if (n != OUT_CONVERTED)
		return n == OUT_OUTSIDE ? unsupported(c, "link out of the root") : n;
	const struct node *src = node_get(c, old_r);
	if (c->tree_known && (!src || src->kind == NODE_DIR || !fresh(c, new_rel)))
		return OUT_INCONSISTENT;
	g_autoptr(GString) a = g_string_new(NULL), b = g_string_new(NULL);
	struct trace_op op;
	trace_op_init(&op, TRACE_LINK);
	op.path = trace_path(c, old_r, a);
	op.path2 = trace_path(c, new_rel, b);
	if (src)
		node_set(c, new_rel, src->kind, src->size, src->target);
	else
		node_set(c, new_rel, NODE_FILE, 0, NULL);
	return emit(c, &op) ? OUT_CONVERTED : OUT_ERROR;
}

/* symlink(target, path), symlinkat(target, dirfd, path) */
static enum outcome h_symlink(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	static const struct path_call plain = { -1, 1, -1, false }, at = { 1, 2, -1, false };
	g_autoptr(GString) target = g_string_new(NULL);
	bool truncated = false;
	if (!arg(call, 0) || strace_arg_string(arg(call, 0), target, &truncated) || truncated || !target->len)
		return malformed(c, "argument 1 (target): not a string");
	const char *rel;
	enum outcome o = call_path(c, p, call, !strcmp(call->name, "symlink") ? &plain : &at, &rel);
	if (o != OUT_CONVERTED)
		return o;
	if (!fresh(c, rel))
		return OUT_INCONSISTENT;
	g_autoptr(GString) path = g_string_new(NULL);
	struct trace_op op;
	trace_op_init(&op, TRACE_SYMLINK);
	op.path = trace_path(c, rel, path);
	op.path2 = target->str;
	node_set(c, rel, NODE_SYMLINK, 0, target->str);
	return emit(c, &op) ? OUT_CONVERTED : OUT_ERROR;
}

static enum outcome h_truncate(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	static const struct path_call shape = { -1, 0, -1, true };
	const char *rel;
	enum outcome o = call_path(c, p, call, &shape, &rel);
	if (o != OUT_CONVERTED)
		return o;
	return truncate_to(c, call, rel);
}

/* --- handlers: times ----------------------------------------------------------------------------------- */

static const char TIME_OUT_OF_RANGE[] = "a time outside int64 nanoseconds (1677 to 2262), which a trace cannot hold";

/* S seconds and NS nanoseconds as int64 nanoseconds; false when they do not
 * fit (strace prints any tv_sec a program passed, up to +-2^63). */
static bool seconds_to_ns(int64_t s, int64_t ns, int64_t *out)
{
	return !__builtin_mul_overflow(s, INT64_C(1000000000), out) && !__builtin_add_overflow(*out, ns, out);
}

/* One time of a utimensat/utimes array: "UTIME_NOW", "UTIME_OMIT", "{tv_sec=S, tv_nsec=N}". */
static const char *parse_one_time(const char *p, bool *given, bool *now, int64_t *ns, const char **next)
{
	const char *omit = strstr(p, "UTIME_OMIT"), *now_at = strstr(p, "UTIME_NOW"), *sec = strstr(p, "tv_sec=");
	const char *first = NULL;
	const char *cands[] = { omit, now_at, sec };
	for (int i = 0; i < 3; i++)
		if (cands[i] && (!first || cands[i] < first))
			first = cands[i];
	if (!first)
		return "no time";
	*given = first != omit;
	*now = first == now_at;
	*next = first + 9;
	if (first != sec)
		return NULL;
	char *stop;
	int64_t s = g_ascii_strtoll(sec + 7, &stop, 10), frac = 0;
	const char *nsec = strstr(stop, "tv_nsec="), *usec = strstr(stop, "tv_usec=");
	const char *close = strchr(stop, '}');
	if (nsec && (!close || nsec < close))
		frac = g_ascii_strtoll(nsec + 8, NULL, 10);
	else if (usec && (!close || usec < close) && __builtin_mul_overflow(g_ascii_strtoll(usec + 8, NULL, 10), 1000, &frac))
		return TIME_OUT_OF_RANGE;
	if (!seconds_to_ns(s, frac, ns))
		return TIME_OUT_OF_RANGE;
	*next = close ? close + 1 : stop;
	return NULL;
}

/* TIMES is "NULL" (both now), "[A, B]" (utimensat, utimes) or "{actime=S, modtime=S}" (utime). */
static enum outcome settime(struct strace_converter *c, const char *rel, const char *times)
{
	bool given[2] = { true, true }, now[2] = { true, true };
	int64_t ns[2] = { 0, 0 };
	if (!times)
		return malformed(c, "missing times argument");
	if (strstr(times, "actime=")) {
		now[0] = now[1] = false;
		const char *m = strstr(times, "modtime=");
		if (!m)
			return malformed(c, "utime: no modtime");
		if (!seconds_to_ns(g_ascii_strtoll(strstr(times, "actime=") + 7, NULL, 10), 0, &ns[0]) ||
		    !seconds_to_ns(g_ascii_strtoll(m + 8, NULL, 10), 0, &ns[1]))
			return malformed(c, TIME_OUT_OF_RANGE);
	} else if (strcmp(times, "NULL")) {
		const char *p = times;
		for (int i = 0; i < 2; i++) {
			const char *why = parse_one_time(p, &given[i], &now[i], &ns[i], &p);
			if (why == TIME_OUT_OF_RANGE)
				return malformed(c, why);
			if (why)
				return malformed(c, "times: expected two of UTIME_NOW, UTIME_OMIT, {tv_sec=...}");
		}
	}
	if ((now[0] && given[0]) || (now[1] && given[1])) {
		if (!c->sim_known && c->time_kind != STRACE_TIME_EPOCH)
			return unsupported(c, "utimensat UTIME_NOW without an absolute clock");
		if (!clock_step(c))
			return OUT_ERROR;
	}
	if (!given[0] && !given[1])
		return OUT_NO_EFFECT;
	if (!exists(c, rel))
		return OUT_INCONSISTENT;
	g_autoptr(GString) path = g_string_new(NULL);
	struct trace_op op;
	trace_op_init(&op, TRACE_SETTIME);
	op.path = trace_path(c, rel, path);
	op.times_given = (given[0] ? TRACE_TIME_ATIME : 0) | (given[1] ? TRACE_TIME_MTIME : 0);
	op.atime_ns = now[0] ? c->sim_now : ns[0];
	op.mtime_ns = now[1] ? c->sim_now : ns[1];
	return emit(c, &op) ? OUT_CONVERTED : OUT_ERROR;
}

/* utimensat(dirfd, path|NULL, times, flags), utimes(path, times), utime(path, times), futimesat(dirfd, path, times) */
static enum outcome h_utime(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	static const struct path_call at = { 0, 1, 3, true }, plain = { -1, 0, -1, true }, fat = { 0, 1, -1, true };
	bool is_utimensat = !strcmp(call->name, "utimensat"), is_futimesat = !strcmp(call->name, "futimesat");
	const char *rel;
	enum outcome o = call_path(c, p, call, is_utimensat ? &at : is_futimesat ? &fat : &plain, &rel);
	if (o != OUT_CONVERTED)
		return o;
	g_autofree char *r = g_strdup(rel);
	return settime(c, r, arg(call, is_utimensat || is_futimesat ? 2 : 1));
}

/* --- handlers: processes ---------------------------------------------------------------------------------- */

/* The cwd is changed in place: a CLONE_FS sibling sharing it moves too. */
static void set_cwd(struct proc *p, const char *real)
{
	g_free(p->cwd->real);
	p->cwd->real = g_strdup(real);
}

static enum outcome h_chdir(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	static const struct path_call shape = { -1, 0, -1, true };
	const char *rel;
	enum outcome o = call_path(c, p, call, &shape, &rel);
	if (o == OUT_CONVERTED || o == OUT_OUTSIDE)
		set_cwd(p, c->path_b->str);
	return o == OUT_CONVERTED ? OUT_NO_EFFECT : o;
}

static enum outcome h_fchdir(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	struct open_file *f = fd_file(c, p, arg(call, 0));
	if (!f)
		return OUT_UNKNOWN_FD;
	set_cwd(p, f->real);
	return rel_of(c, f->real) ? OUT_NO_EFFECT : OUT_OUTSIDE;
}

static enum outcome h_clone(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	int64_t child = call->ret;
	if (child > 0 && !g_hash_table_contains(c->procs, &child)) {
		/* clone(child_stack=..., flags=CLONE_..., ...) or clone3({flags=CLONE_..., ...}, size) */
		const char *flags = NULL;
		for (size_t i = 0; i < call->argc && !flags; i++)
			if (strstr(call->args[i], "flags="))
				flags = call->args[i];
		proc_clone(c, p, child, flags);
	}
	return OUT_OTHER;
}

static enum outcome h_execve(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	(void)c;
	(void)call;
	GHashTable *kept = fd_table_copy(p->fds, true);
	g_hash_table_unref(p->fds);
	p->fds = kept;
	return OUT_OTHER;
}

/* A call that failed still walked its path: the symlinks it followed had their
 * atimes touched before the walk failed (fs/namei.c pick_link calls
 * touch_atime).  Only those link reads are replayed; everything else the call
 * would have done did not happen. */
static enum outcome failed_walk(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	static const struct path_call plain = { -1, 0, -1, true }, chdir_shape = { -1, 0, -1, true };
	const struct path_call *shape = NULL;
	struct path_call open_shape = { -1, 0, -1, true };
	const char *flags = NULL;
	if (!strcmp(call->name, "open") || !strcmp(call->name, "openat")) {
		bool at = call->name[4] == 'a';
		open_shape = (struct path_call){ at ? 0 : -1, at ? 1 : 0, -1, true };
		flags = arg(call, at ? 2 : 1);
		open_shape.follow = flags && !strace_arg_has_flag(flags, "O_NOFOLLOW") &&
				    !(strace_arg_has_flag(flags, "O_CREAT") && strace_arg_has_flag(flags, "O_EXCL"));
		shape = &open_shape;
	} else if (!strcmp(call->name, "chdir")) {
		shape = &chdir_shape;
	} else if (!strcmp(call->name, "creat")) {
		shape = &plain;
	} else {
		for (size_t i = 0; i < G_N_ELEMENTS(handlers_of_stat); i++)
			if (!strcmp(call->name, handlers_of_stat[i]))
				shape = stat_shape(call->name);
	}
	if (!shape)
		return OUT_FAILED;
	uint64_t before = trace_writer_op_count(c->w);
	const char *rel;
	enum outcome o = call_path(c, p, call, shape, &rel);
	if (o == OUT_ERROR)
		return o;
	return trace_writer_op_count(c->w) > before ? OUT_CONVERTED : OUT_FAILED;
}

/* Calls on files that the trace format cannot express (chmod, chown, xattrs, mknod). */
static enum outcome h_unsupported(struct strace_converter *c, struct proc *p, const struct strace_call *call)
{
	static const struct path_call plain = { -1, 0, -1, true }, at = { 0, 1, -1, true };
	const char *rel;
	enum outcome o;
	size_t n = strlen(call->name);
	bool is_at = n > 2 && !strcmp(call->name + n - 2, "at");
	if (call->name[0] == 'f' && !is_at) {
		struct open_file *f;
		o = fd_arg(c, p, call, 0, &f, &rel);
	} else {
		o = call_path(c, p, call, is_at ? &at : &plain, &rel);
	}
	return o == OUT_CONVERTED ? unsupported(c, call->name) : o;
}

/* --- dispatch --------------------------------------------------------------------------------------------- */

typedef enum outcome (*handler)(struct strace_converter *, struct proc *, const struct strace_call *);

static const struct {
	const char *name;
	handler fn;
} handlers[] = {
	{ "open", h_open }, { "openat", h_open }, { "openat2", h_openat2 }, { "creat", h_creat },
	{ "close", h_close }, { "close_range", h_close_range },
	{ "dup", h_dup }, { "dup2", h_dup }, { "dup3", h_dup }, { "fcntl", h_fcntl }, { "fcntl64", h_fcntl },
	{ "read", h_read }, { "readv", h_read }, { "pread64", h_read }, { "preadv", h_read }, { "preadv2", h_read },
	{ "mmap", h_mmap }, { "mmap2", h_mmap },
	{ "getdents", h_getdents }, { "getdents64", h_getdents }, { "lseek", h_lseek },
	{ "write", h_write }, { "writev", h_write }, { "pwrite64", h_write }, { "pwritev", h_write },
	{ "pwritev2", h_write }, { "sendfile", h_copy }, { "sendfile64", h_copy }, { "copy_file_range", h_copy },
	{ "ftruncate", h_ftruncate }, { "fsync", h_fsync }, { "fdatasync", h_fsync },
	{ "stat", h_stat }, { "stat64", h_stat }, { "lstat", h_stat }, { "lstat64", h_stat },
	{ "newfstatat", h_stat }, { "fstatat64", h_stat }, { "statx", h_stat }, { "access", h_stat },
	{ "faccessat", h_stat }, { "faccessat2", h_stat }, { "fstat", h_fstat }, { "fstat64", h_fstat },
	{ "readlink", h_readlink }, { "readlinkat", h_readlink },
	{ "mkdir", h_mkdir }, { "mkdirat", h_mkdir }, { "unlink", h_unlink }, { "unlinkat", h_unlink },
	{ "rmdir", h_unlink }, { "rename", h_rename }, { "renameat", h_rename }, { "renameat2", h_rename },
	{ "link", h_link }, { "linkat", h_link }, { "symlink", h_symlink }, { "symlinkat", h_symlink },
	{ "truncate", h_truncate }, { "utimensat", h_utime }, { "utimes", h_utime }, { "utime", h_utime },
	{ "futimesat", h_utime }, { "chdir", h_chdir }, { "fchdir", h_fchdir },
	{ "clone", h_clone }, { "clone3", h_clone }, { "fork", h_clone }, { "vfork", h_clone },
	{ "execve", h_execve }, { "execveat", h_execve },
	{ "chmod", h_unsupported }, { "fchmod", h_unsupported }, { "fchmodat", h_unsupported },
	{ "chown", h_unsupported }, { "lchown", h_unsupported }, { "fchown", h_unsupported },
	{ "fchownat", h_unsupported }, { "setxattr", h_unsupported }, { "lsetxattr", h_unsupported },
	{ "fsetxattr", h_unsupported }, { "removexattr", h_unsupported }, { "lremovexattr", h_unsupported },
	{ "fremovexattr", h_unsupported }, { "mknod", h_unsupported }, { "mknodat", h_unsupported },
	{ "fallocate", h_unsupported },
};

static handler find_handler(const char *name)
{
	for (size_t i = 0; i < G_N_ELEMENTS(handlers); i++)
		if (!strcmp(handlers[i].name, name))
			return handlers[i].fn;
	return NULL;
}

/* Count OUTCOME; a malformed call is reported (and is an error when strict). */
static bool account(struct strace_converter *c, enum outcome o, const char *why)
{
	struct strace_stats *s = &c->stats;
	switch (o) {
	case OUT_CONVERTED: s->converted++; return true;
	case OUT_NO_EFFECT: s->no_effect++; return true;
	case OUT_OTHER: s->other++; return true;
	case OUT_OUTSIDE: s->outside++; return true;
	case OUT_FAILED: s->failed++; return true;
	case OUT_UNKNOWN_FD: s->unknown_fd++; return true;
	case OUT_INCONSISTENT: s->inconsistent++; return true;
	case OUT_UNSUPPORTED: {
		s->unsupported++;
		gpointer count = g_tree_lookup(c->unsupported, why);
		g_tree_replace(c->unsupported, g_strdup(why), GSIZE_TO_POINTER(GPOINTER_TO_SIZE(count) + 1));
		return true;
	}
	case OUT_ERROR: return false;
	case OUT_MALFORMED: break;
	}
	g_autofree char *msg = g_strdup_printf("%s:%" G_GUINT64_FORMAT ": %s", c->log_name, c->lineno, why);
	if (c->opt.strict) {
		g_set_error(c->error, STRACE_ERROR, STRACE_ERROR_MALFORMED, "%s (--strict)", msg);
		return false;
	}
	if (!s->malformed++)
		s->first_malformed_line = c->lineno;
	if (c->malformed->len < REPORT_MALFORMED_MAX)
		g_ptr_array_add(c->malformed, g_steal_pointer(&msg));
	return true;
}

static bool convert_call(struct strace_converter *c, struct proc *p, const char *text, size_t len)
{
	struct strace_call call;
	strace_call_init(&call);
	const char *why = strace_call_parse(text, len, &call);
	enum outcome o;
	c->stats.calls++;
	if (why) {
		g_string_printf(c->scratch, "%s", why);
		c->why = c->scratch->str;
		o = OUT_MALFORMED;
	} else {
		handler fn = find_handler(call.name);
		o = call.failed ? failed_walk(c, p, &call) : call.ret_unknown || !fn ? OUT_OTHER : fn(c, p, &call);
		if (o == OUT_CONVERTED && call.failed)
			c->stats.failed_walks++;
		if (o == OUT_MALFORMED) {
			g_autofree char *with_name = g_strdup_printf("%s: %s", call.name, c->why);
			g_string_assign(c->path_a, with_name);
			c->why = c->path_a->str;
		}
	}
	bool ok = account(c, o, c->why);
	strace_call_clear(&call);
	return ok;
}

static bool line_malformed(struct strace_converter *c, const char *why)
{
	c->why = why;
	return account(c, OUT_MALFORMED, why);
}

/* Join an unfinished call with its resumption, or keep it for later. */
static bool convert_pieces(struct strace_converter *c, struct proc *p, const struct strace_line *l)
{
	if (l->kind == STRACE_LINE_UNFINISHED) {
		if (p->pending)
			return line_malformed(c, "a second unfinished call in the same pid");
		p->pending = g_string_new_len(l->rest, (gssize)l->rest_len);
		g_strlcpy(p->pending_name, l->name, MIN(sizeof(p->pending_name), l->name_len + 1));
		p->pending_line = c->lineno;
		return true;
	}
	if (!p->pending)
		return line_malformed(c, "'<... resumed>' without an unfinished call in this pid");
	if (l->name_len && (strlen(p->pending_name) != l->name_len ||
			    strncmp(p->pending_name, l->name, l->name_len)))
		return line_malformed(c, "'<... resumed>' names another call than the unfinished one");
	g_string_append_len(p->pending, l->rest, (gssize)l->rest_len);
	GString *text = p->pending;
	p->pending = NULL;
	bool ok = convert_call(c, p, text->str, text->len);
	g_string_free(text, TRUE);
	return ok;
}

/* The first line fixes the timestamp format; 1 ok, 0 skip this line, -1 error. */
static int check_time(struct strace_converter *c, const struct strace_line *l)
{
	if (!c->time_kind_set) {
		c->time_kind_set = true;
		c->time_kind = l->time_kind;
	}
	if (l->time_kind != c->time_kind)
		return line_malformed(c, "the timestamp format changed (use one of -t, -tt, -ttt throughout)") ? 0 : -1;
	c->line_ns = l->time_ns;
	return 1;
}

bool strace_converter_line(struct strace_converter *c, const char *name, const char *line, uint64_t lineno,
			   GError **error)
{
	struct strace_line l;
	c->log_name = name;
	c->lineno = lineno;
	c->error = error;
	c->stats.lines++;
	const char *p = line;
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	if (!*p)
		return true;
	const char *why = strace_line_parse(line, &l);
	if (why)
		return line_malformed(c, why);
	int t = check_time(c, &l);
	if (t <= 0)
		return t == 0;
	struct proc *proc = proc_get(c, l.pid);
	switch (l.kind) {
	case STRACE_LINE_SIGNAL:
		return true;
	case STRACE_LINE_EXIT: {
		int64_t pid = l.pid;
		g_hash_table_remove(c->procs, &pid);
		return true;
	}
	case STRACE_LINE_UNFINISHED:
	case STRACE_LINE_RESUMED:
		return convert_pieces(c, proc, &l);
	case STRACE_LINE_CALL:
		break;
	}
	return convert_call(c, proc, l.rest, l.rest_len);
}

bool strace_converter_stream(struct strace_converter *c, FILE *log, const char *name, GError **error)
{
	g_autofree char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	uint64_t lineno = 0;
	while ((got = getline(&line, &cap, log)) >= 0) {
		lineno++;
		if (got > 0 && line[got - 1] == '\n')
			line[got - 1] = '\0';
		if ((ssize_t)strlen(line) < got - 1) {
			c->log_name = name;
			c->lineno = lineno;
			c->error = error;
			if (!line_malformed(c, "NUL byte in the line"))
				return false;
			continue;
		}
		if (!strace_converter_line(c, name, line, lineno, error))
			return false;
	}
	if (ferror(log)) {
		g_set_error(error, STRACE_ERROR, STRACE_ERROR_IO, "%s: read error", name);
		return false;
	}
	return true;
}

/* --- the end: measurement and report --------------------------------------------------------------------------- */

static gboolean append_unsupported(gpointer key, gpointer value, gpointer data)
{
	g_string_append_printf(data, "%s%s %zu", ((GString *)data)->len ? ", " : "", (const char *)key,
			       GPOINTER_TO_SIZE(value));
	return FALSE;
}

GPtrArray *strace_converter_report(const struct strace_converter *c)
{
	const struct strace_stats *s = &c->stats;
	GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) names = g_string_new(NULL);
	g_tree_foreach(c->unsupported, append_unsupported, names);
	g_ptr_array_add(lines, g_strdup_printf("%" G_GUINT64_FORMAT " lines, %" G_GUINT64_FORMAT " calls: %"
					       G_GUINT64_FORMAT " converted into %" G_GUINT64_FORMAT " ops with the clock "
					       "steps (%" G_GUINT64_FORMAT " of them failed calls that followed symlinks), %"
					       G_GUINT64_FORMAT " with no effect to replay, %" G_GUINT64_FORMAT
					       " on no file",
					       s->lines, s->calls, s->converted, s->ops, s->failed_walks, s->no_effect,
					       s->other));
	g_ptr_array_add(lines, g_strdup_printf("dropped: %" G_GUINT64_FORMAT " outside %s, %" G_GUINT64_FORMAT
					       " failed, %" G_GUINT64_FORMAT " on fds not opened in the log, %"
					       G_GUINT64_FORMAT " inconsistent with the root's tree, %"
					       G_GUINT64_FORMAT " not expressible%s%s%s",
					       s->outside, c->opt.root, s->failed, s->unknown_fd, s->inconsistent,
					       s->unsupported, names->len ? " (" : "", names->str,
					       names->len ? ")" : ""));
	if (s->malformed)
		g_ptr_array_add(lines, g_strdup_printf("%" G_GUINT64_FORMAT " malformed lines skipped, the first at line %"
						       G_GUINT64_FORMAT, s->malformed, s->first_malformed_line));
	for (guint i = 0; i < c->malformed->len; i++)
		g_ptr_array_add(lines, g_strdup(g_ptr_array_index(c->malformed, i)));
	return lines;
}

bool strace_converter_finish(struct strace_converter *c, GError **error)
{
	c->stats.ops = trace_writer_op_count(c->w) - c->ops_at_start;
	if (!trace_writer_sync(c->w, error) || !trace_writer_mark(c->w, STRACE_MARK_LABEL, error))
		return false;
	g_autoptr(GPtrArray) report = strace_converter_report(c);
	for (guint i = 0; i < report->len; i++)
		if (!trace_writer_comment(c->w, error, "from-strace: %s", (const char *)g_ptr_array_index(report, i)))
			return false;
	return true;
}
