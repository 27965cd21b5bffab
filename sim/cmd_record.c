/*
 * sim/cmd_record.c - `cowsim record [-o TRACE] [--root DIR] [--prelude]
 * [--strict] [--log LOG] -- COMMAND [ARGS...]`: run COMMAND under strace and
 * write the trace of what it did to the files under DIR.
 *
 * How it works:
 *   1. read DIR's tree (before the command runs: its atimes, its files), for
 *      the converter's map and the --prelude copy;
 *   2. run `strace -f -ttt -qq -e trace=%file,%desc,%process -o LOG -- COMMAND ARGS`
 *      (STRACE_ARGV below; docs/recording.md), the command's stdout going to
 *      our stderr when the trace goes to stdout;
 *   3. convert LOG with strace_write_trace (workloads/strace.h) into TRACE,
 *      through a temporary file renamed onto TRACE once complete.
 * The command's own exit status is reported, not returned: grep exits 1 when
 * nothing matched, and that is still a recording.
 *
 * -o FILE is opened before the command runs (and discarded if it fails).
 *
 * Exit status (sim/commands.h, sim/cli.h CLI2): 0 recorded; 1 the disk
 * filled or failed under -o FILE while the trace was written (FILE as it
 * was); 2 bad arguments, an unreadable DIR, a malformed log line with
 * --strict, or an -o FILE that cannot be created (checked before the
 * command runs); 77 strace is missing or cannot trace here (no ptrace).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "cli.h"
#include "commands.h"
#include "output_file.h"
#include "strace.h"
#include "trace.h"
#include "tracegen.h"

#define STRACE_TRACE_SET "%file,%desc,%process"

struct record_args {
	char *out;
	char *root;
	char *log;
	gboolean prelude;
	gboolean strict;
	char **command;
};

static void record_args_clear(struct record_args *a)
{
	g_free(a->out);
	g_free(a->root);
	g_free(a->log);
	g_strfreev(a->command);
}

static const struct cli_doc record_doc = {
	.command = "record",
	.args = "-- COMMAND [ARG…]",
	.summary = "Runs COMMAND under strace and writes the cowsim trace of its file-system calls\n"
		   "under DIR (docs/recording.md). The command's own exit status is reported on\n"
		   "stderr, not returned: grep exits 1 when nothing matched, and that is a recording.",
	.notes = "Without --prelude the trace holds only what COMMAND did: it starts with no\n"
		 "tree, so 'cowsim run' cannot replay it on its own (it stops at the first path\n"
		 "with \"No such file or directory\"). Give --prelude to start the trace with\n"
		 "the copy of DIR as it was before COMMAND ran.",
	.examples = "  cowsim record --root /tmp/tree --prelude -o grep.trace -- grep -R needle /tmp/tree\n"
		    "  cowsim run grep.trace -m relatime -o grep.csv\n"
		    "  cowsim record --root . --prelude -- make | cowsim run - -o make.csv",
	.exits = "  0  recorded\n"
		 "  1  the disk filled or failed under -o FILE while the trace was written (FILE\n"
		 "     as it was)\n"
		 "  2  bad arguments, an unreadable DIR, a malformed log line with --strict, or an\n"
		 "     -o FILE that cannot be created (checked before the command runs)\n"
		 "  77  strace is missing or cannot trace here (no ptrace)",
};

/* False with the message printed. */
static bool parse_args(struct record_args *a, int argc, char **argv)
{
	GOptionEntry entries[] = {
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->out, "write the trace to FILE (default and '-': stdout)",
		  "FILE" },
		{ "out", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &a->out, "the same as --output", "FILE" },
		{ "root", 0, 0, G_OPTION_ARG_FILENAME, &a->root,
		  "the tree the command works on; it is /tree in the trace (default .)", "DIR" },
		{ "prelude", 0, 0, G_OPTION_ARG_NONE, &a->prelude,
		  "start the trace with `cowsim gen from-dir DIR` of the tree as it was before the command", NULL },
		{ "strict", 0, 0, G_OPTION_ARG_NONE, &a->strict, "a malformed strace line is an error (exit 2)", NULL },
		{ "log", 0, 0, G_OPTION_ARG_FILENAME, &a->log, "keep the strace log in LOG", "LOG" },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->command, NULL, NULL },
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) context = cli_context_new(&record_doc);
	g_option_context_add_main_entries(context, entries, NULL);
	if (!cli_parse(context, &record_doc, &argc, &argv))
		return false;
	if (!a->command || !a->command[0]) {
		fprintf(stderr, "cowsim record: no command: cowsim record [OPTION…] -- COMMAND\n");
		return false;
	}
	if (cli_is_stdio(a->out))
		g_clear_pointer(&a->out, g_free);
	return true;
}

/* The command's stdout goes to stderr: stdout carries the trace. */
static void stdout_to_stderr(gpointer data)
{
	(void)data;
	dup2(2, 1);
}

/* Run COMMAND under strace into LOG; the command's wait status in *status. */
static int run_strace(const struct record_args *a, const char *strace, const char *log, int *status)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	const char *fixed[] = { strace, "-f", "-ttt", "-qq", "-e", "trace=" STRACE_TRACE_SET, "-o", log, "--" };
	for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
		g_ptr_array_add(argv, (char *)fixed[i]);
	for (char **c = a->command; *c; c++)
		g_ptr_array_add(argv, *c);
	g_ptr_array_add(argv, NULL);
	g_autoptr(GError) error = NULL;
	bool to_stderr = !a->out;
	if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_CHILD_INHERITS_STDIN,
			  to_stderr ? stdout_to_stderr : NULL, NULL, NULL, NULL, status, &error)) {
		fprintf(stderr, "cowsim record: cannot run strace: %s\n", error->message);
		return EXIT_SKIPPED;
	}
	return EXIT_OK;
}

/* strace that cannot trace (no ptrace in a container) leaves no execve in the log. */
static bool log_has_execve(const char *log)
{
	g_autofree char *text = NULL;
	gsize len = 0;
	return g_file_get_contents(log, &text, &len, NULL) && strstr(text, "execve(");
}

static bool write_trace(const struct record_args *a, const struct strace_options *opt, const char *log,
			FILE *out, GError **error)
{
	g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *command = g_strjoinv(" ", a->command);
	g_autoptr(trace_writer) w = trace_writer_new(out);
	bool ok = trace_writer_begin(w, error) &&
		  trace_writer_comment(w, error, "cowsim record --root %s%s -- %s", opt->root,
				       a->prelude ? " --prelude" : "", command) &&
		  strace_write_trace(opt, a->prelude, log, w, notes, error) && trace_writer_finish(w, error);
	for (guint i = 0; i < notes->len; i++)
		fprintf(stderr, "cowsim record: %s\n", (const char *)g_ptr_array_index(notes, i));
	return ok;
}

/* The trace goes to OUT (-o FILE, opened before the command ran) whole or
 * not at all (results/output_file.h), or to stdout when OUT is NULL. */
static int convert(const struct record_args *a, const struct strace_options *opt, const char *log,
		   struct output_file *out)
{
	g_autoptr(GError) error = NULL;
	bool ok = write_trace(a, opt, log, out ? out->stream : stdout, &error);
	bool write_failed = !ok && out && ferror(out->stream); /* -o FILE opened, then the disk failed under it */
	if (out && !ok)
		output_file_discard(out);
	else if (out && !output_file_commit(out, &error))
		ok = false, write_failed = true;
	if (ok)
		return EXIT_OK;
	if (write_failed && !g_str_has_prefix(error->message, "cannot "))
		g_prefix_error(&error, "cannot write '%s': ", a->out);
	fprintf(stderr, "cowsim record: %s\n", error->message);
	return write_failed ? EXIT_RUN_FAILED : EXIT_BAD_INPUT; /* CLI2: a disk failing mid-write is 1 */
}

/* -o FILE is opened before the command runs: a long build is not run only to
 * find the output unwritable.  False with the message printed. */
static bool open_output(const struct record_args *a, const char *log, struct output_file *out)
{
	g_autoptr(GError) error = NULL;
	const char *outputs[] = { a->out }, *inputs[] = { log };
	if (output_file_refuse_aliases(outputs, 1, inputs, 1, &error) && output_file_open(out, a->out, &error))
		return true;
	fprintf(stderr, "cowsim record: %s\n", error->message);
	return false;
}

static int record(const struct record_args *a)
{
	g_autofree char *strace = g_find_program_in_path("strace");
	if (!strace) {
		fprintf(stderr, "cowsim record: strace is not installed (Debian: apt-get install strace)\n");
		return EXIT_SKIPPED;
	}
	char *real = realpath(a->root ? a->root : ".", NULL);
	if (!real) {
		fprintf(stderr, "cowsim record: --root %s: %s\n", a->root ? a->root : ".", g_strerror(errno));
		return EXIT_BAD_INPUT;
	}
	g_autofree char *root = g_strdup(real);
	free(real);
	g_autoptr(GError) error = NULL;
	g_autoptr(fstree) tree = fstree_from_dir(root, FSTREE_ORDER_INODE, &error); /* before the command runs */
	if (!tree) {
		fprintf(stderr, "cowsim record: --root: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	g_autofree char *log = g_strdup(a->log);
	if (!log) {
		int fd = g_file_open_tmp("cowsim-record-XXXXXX.strace", &log, &error);
		if (fd < 0) {
			fprintf(stderr, "cowsim record: %s\n", error->message);
			return EXIT_RUN_FAILED;
		}
		close(fd);
	}
	struct output_file out = { 0 };
	if (a->out && !open_output(a, log, &out)) {
		if (!a->log)
			g_unlink(log);
		return EXIT_BAD_INPUT;
	}
	int status = 0, ret = run_strace(a, strace, log, &status);
	if (ret == EXIT_OK && !log_has_execve(log)) {
		fprintf(stderr, "cowsim record: strace could not trace the command here (is ptrace allowed?)\n");
		ret = EXIT_SKIPPED;
	}
	if (ret == EXIT_OK) {
		g_autofree char *cwd = g_get_current_dir();
		mode_t mask = umask(0); /* the command ran with ours */
		umask(mask);
		struct strace_options opt = { .root = root, .cwd = cwd, .tree = tree, .strict = a->strict,
					      .umask = (uint32_t)mask };
		fprintf(stderr, "cowsim record: %s exited with status %d\n", a->command[0],
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		ret = convert(a, &opt, log, a->out ? &out : NULL);
	} else if (a->out) {
		output_file_discard(&out);
	}
	if (!a->log)
		g_unlink(log);
	return ret;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { 0 };
	int ret;
	if (!parse_args(&a, argc, argv)) {
		ret = EXIT_BAD_INPUT;
	} else {
		ret = record(&a);
	}
	record_args_clear(&a);
	return ret;
}
