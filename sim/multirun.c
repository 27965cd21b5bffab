/*
 * sim/multirun.c - the run options, checks, signals and runs that cowsim
 * compare and cowsim sweep share (see multirun.h, MR1-MR2).
 */
#include "multirun.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "cli.h"
#include "commands.h"
#include "trace.h"

volatile int multirun_interrupted;

void multirun_add_entries(GOptionContext *context, struct multirun_args *a, const char *out_help)
{
	const GOptionEntry entries[] = {
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->out, out_help, "DIR" },
		{ "out", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &a->out, "the same as --output", "DIR" },
		{ "base", 'b', 0, G_OPTION_ARG_STRING, &a->base,
		  "amplification is final metadata over metadata at this mark (default: the first mark)", "LABEL" },
		{ "every", 'e', 0, G_OPTION_ARG_INT64, &a->every, "also a row every N ops (finer free_min)", "N" },
		{ "keep-going", 'k', 0, G_OPTION_ARG_NONE, &a->keep_going,
		  "count ops the model refuses (ENOSPC, ...) and finish the trace", NULL },
		{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &a->quiet, "no table on stdout, no progress", NULL },
		{ NULL },
	};
	/* GOption copies the entries; the strings and the targets must outlive it. */
	cli_add_entries(context, entries);
}

void multirun_args_clear(struct multirun_args *a)
{
	g_clear_pointer(&a->out, g_free);
	g_clear_pointer(&a->base, g_free);
}

int multirun_check(const char *command, struct multirun_args *a, const char *trace, const char *default_out)
{
	if (trace && (!strcmp(trace, "-") || access(trace, R_OK) != 0)) {
		fprintf(stderr, "cowsim %s: %s: %s\n", command, trace,
			strcmp(trace, "-") ? g_strerror(errno) : "every run reads the trace again: give a file");
		return EXIT_BAD_INPUT;
	}
	if (a->every < 0) {
		fprintf(stderr, "cowsim %s: --every takes a count of ops, 0 or more\n", command);
		return EXIT_BAD_INPUT;
	}
	if (!a->out)
		a->out = g_strdup(default_out);
	return EXIT_OK;
}

int multirun_make_out_dir(const char *command, const struct multirun_args *a)
{
	if (g_mkdir_with_parents(a->out, 0777) != 0) {
		fprintf(stderr, "cowsim %s: cannot create '%s': %s\n", command, a->out, g_strerror(errno));
		return errno == ENOSPC || errno == EIO ? EXIT_RUN_FAILED : EXIT_BAD_INPUT; /* CLI2 */
	}
	return EXIT_OK;
}

/* The labels of TRACE's marks, in order, each once, as "a, b, c"; NULL
 * with *error at the first malformed line. */
static char *trace_marks(const char *trace, GHashTable *labels, GError **error)
{
	g_autoptr(trace_reader) reader = trace_reader_open(trace, error);
	if (!reader)
		return NULL;
	g_autoptr(GString) list = g_string_new(NULL);
	struct trace_op op;
	int got;
	while ((got = trace_reader_next(reader, &op, error)) > 0) {
		if (op.kind != TRACE_MARK || g_hash_table_contains(labels, op.path2))
			continue;
		g_hash_table_add(labels, g_strdup(op.path2));
		g_string_append_printf(list, "%s%s", list->len ? ", " : "", op.path2);
	}
	return got < 0 ? NULL : g_strdup(list->len ? list->str : "none");
}

int multirun_check_trace(const char *command, const char *trace, const char *base)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GHashTable) labels = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree char *marks = trace_marks(trace, labels, &error);
	if (!marks) {
		fprintf(stderr, "cowsim %s: %s\n", command, error->message);
		return EXIT_BAD_INPUT;
	}
	if (!base || g_hash_table_contains(labels, base))
		return EXIT_OK;
	fprintf(stderr, "cowsim %s: --base %s: no mark '%s' in %s (its marks: %s)\n", command, base, base, trace,
		marks);
	return EXIT_BAD_INPUT;
}

static void on_signal(int signo)
{
	multirun_interrupted = signo;
}

void multirun_catch_signals(void)
{
	struct sigaction action = { .sa_handler = on_signal };
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
}

int multirun_interrupted_status(void)
{
	return 128 + (multirun_interrupted ? multirun_interrupted : SIGINT);
}

double multirun_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int multirun_run(const char *trace, const struct fs_config *config, const struct multirun_args *a,
		 const char *csv_path, struct rows_summary *summary, GError **error)
{
	struct replay_options options = { .fs = *config, .row_every = (uint64_t)a->every,
					  .keep_going = a->keep_going, .interrupted = &multirun_interrupted };
	switch (rows_run(trace, &options, csv_path, a->base, summary, error)) {
	case REPLAY_DONE:
		if (a->base && !summary->base_label) { /* MR3: a trace made by --gen, not checked before */
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--base %s: no mark '%s' in %s",
				    a->base, a->base, trace);
			return EXIT_BAD_INPUT;
		}
		return EXIT_OK;
	case REPLAY_ENOSPC:
		return EXIT_OK;
	case REPLAY_BAD_INPUT:
		return EXIT_BAD_INPUT;
	case REPLAY_INTERRUPTED:
		return multirun_interrupted_status();
	case REPLAY_CORRUPT:
	case REPLAY_SINK_FAILED:
		break;
	}
	return EXIT_RUN_FAILED;
}
