/*
 * workloads/strace_gen.c - `cowsim gen from-strace LOG --root DIR`, and the
 * whole conversion that `cowsim record` shares with it (strace_write_trace).
 *
 * The trace, in order:
 *     [prelude: the ops of `cowsim gen from-dir ROOT`, byte for byte:
 *      clock @START, cp -a ROOT PREFIX, sync, mark after_copy, clock +1s]
 *     # from-strace LOG: root ROOT is PREFIX
 *     [clock @T0 when there is no prelude and the log has -ttt times]
 *     the converted calls, with clock +D before each call that is D later
 *     sync, mark after_record, and the counts as comment lines
 *
 * With a prelude the recorded calls keep their spacing but start right
 * after the copy, at the simulated time the prelude's clock reads.
 */
#include "strace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracegen_private.h"

/* The ops of `cowsim gen from-dir` for TREE (gen_scenarios.c copy_only, on a tree already read). */
static bool write_prelude(const struct fstree *tree, const char *prefix, const char *start, struct trace_writer *w,
			  int64_t *now_ns, GError **error)
{
	struct tracegen_params params;
	struct tracegen_clock clock;
	int64_t start_ns;
	tracegen_params_init(&params);
	params.start = (char *)start;
	bool ok = tracegen_start_time(&params, tree, &start_ns, error);
	params.start = NULL;
	tracegen_params_clear(&params);
	ok = ok && tracegen_clock_start(&clock, w, start_ns, error) && tracegen_copy(w, &clock, tree, prefix, error) &&
	     trace_writer_sync(w, error) && trace_writer_mark(w, "after_copy", error) &&
	     tracegen_clock_spend(&clock, w, TRACE_NS_PER_SEC, error);
	*now_ns = clock.now_ns;
	return ok;
}

static bool convert_log(struct strace_converter *conv, const char *log_path, GError **error)
{
	bool is_stdin = !strcmp(log_path, "-");
	FILE *log = is_stdin ? stdin : fopen(log_path, "r");
	if (!log) {
		g_set_error(error, STRACE_ERROR, STRACE_ERROR_IO, "%s: cannot open: %s", log_path, g_strerror(errno));
		return false;
	}
	bool ok = strace_converter_stream(conv, log, is_stdin ? "<stdin>" : log_path, error);
	if (!is_stdin)
		fclose(log);
	return ok;
}

bool strace_write_trace(const struct strace_options *options, bool prelude, const char *log_path,
			struct trace_writer *w, GPtrArray *notes, GError **error)
{
	struct strace_options opt = *options;
	const char *prefix = opt.prefix ? opt.prefix : "/tree";
	if (prelude && !opt.tree) {
		g_set_error(error, STRACE_ERROR, STRACE_ERROR_ARGS, "--prelude needs the root's tree (%s)", opt.root);
		return false;
	}
	if (prelude) {
		if (!write_prelude(opt.tree, prefix, NULL, w, &opt.now_ns, error))
			return false;
		opt.clock_set = true;
	}
	if (!trace_writer_comment(w, error, "from-strace %s: root %s is %s", log_path, opt.root, prefix))
		return false;
	g_autoptr(strace_converter) conv = strace_converter_new(&opt, w);
	if (!convert_log(conv, log_path, error) || !strace_converter_finish(conv, error))
		return false;
	if (notes) {
		g_autoptr(GPtrArray) report = strace_converter_report(conv);
		for (guint i = 0; i < report->len; i++)
			g_ptr_array_add(notes, g_strdup(g_ptr_array_index(report, i)));
	}
	return true;
}

/* ROOT made absolute and canonical; the directory need not exist (then only lexically). */
static char *canonical_root(const char *root)
{
	char *real = realpath(root, NULL);
	if (real) {
		char *copy = g_strdup(real);
		free(real);
		return copy;
	}
	return g_canonicalize_filename(root, NULL);
}

bool tracegen_run_from_strace(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	g_autofree char *root = canonical_root(p->root);
	g_autofree char *cwd = g_get_current_dir();
	g_autoptr(GError) tree_error = NULL;
	g_autoptr(fstree) tree = fstree_from_dir(root, FSTREE_ORDER_INODE, &tree_error);
	if (!tree && p->prelude) {
		g_set_error(error, TRACEGEN_ERROR, TRACEGEN_ERROR_SOURCE, "--prelude: %s", tree_error->message);
		return false;
	}
	if (!tree && p->notes)
		g_ptr_array_add(p->notes, g_strdup_printf("%s; its symlinks and files are unknown, so the "
							  "trace may not replay", tree_error->message));
	if (p->start && !p->prelude)
		return g_set_error(error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS, "--start needs --prelude"), false;
	struct strace_options opt = { .root = root, .prefix = p->prefix, .cwd = cwd, .tree = tree, .strict = p->strict,
				      .umask = 022 /* the usual default: the log does not show it */ };
	if (p->prelude && p->start) {
		/* --start moves the prelude; strace_write_trace takes the default, so write it here. */
		if (!write_prelude(tree, p->prefix ? p->prefix : "/tree", p->start, w, &opt.now_ns, error))
			return false;
		opt.clock_set = true;
		return strace_write_trace(&opt, false, p->strace_log, w, p->notes, error);
	}
	return strace_write_trace(&opt, p->prelude, p->strace_log, w, p->notes, error);
}
