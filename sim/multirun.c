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

/* ---- MR4: a staged folder ------------------------------------------------ */

int multirun_stage_open(const char *command, const struct multirun_args *a, struct multirun_stage *stage)
{
	*stage = (struct multirun_stage){ .dir = g_strdup(a->out), .made_dir = !g_file_test(a->out, G_FILE_TEST_EXISTS) };
	int status = multirun_make_out_dir(command, a);
	if (status != EXIT_OK)
		return status;
	g_autofree char *name = g_strdup_printf(".%s-tmp-XXXXXX", command);
	stage->path = g_build_filename(a->out, name, NULL);
	if (g_mkdtemp(stage->path))
		return EXIT_OK;
	int saved = errno;
	fprintf(stderr, "cowsim %s: cannot create a folder in '%s': %s\n", command, a->out, g_strerror(saved));
	g_clear_pointer(&stage->path, g_free);
	if (stage->made_dir)
		g_rmdir(stage->dir);
	return saved == ENOSPC || saved == EIO || saved == EDQUOT ? EXIT_RUN_FAILED : EXIT_BAD_INPUT; /* CLI2 */
}

char *multirun_stage_file(const struct multirun_stage *stage, const char *name)
{
	return g_build_filename(stage->path, name, NULL);
}

static bool listed(const char *const *names, const char *name)
{
	return names && g_strv_contains(names, name);
}

static int compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The plain files of the stage, sorted (so the renames happen in one order). */
static GPtrArray *stage_names(const struct multirun_stage *stage, GError **error)
{
	g_autoptr(GDir) d = g_dir_open(stage->path, 0, error);
	if (!d)
		return NULL;
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	for (const char *name; (name = g_dir_read_name(d));)
		g_ptr_array_add(names, g_strdup(name));
	g_ptr_array_sort(names, compare_names);
	return names;
}

static bool move_in(const struct multirun_stage *stage, const char *name, GError **error)
{
	g_autofree char *from = multirun_stage_file(stage, name);
	g_autofree char *to = g_build_filename(stage->dir, name, NULL);
	if (g_rename(from, to) == 0)
		return true;
	int saved = errno;
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), "cannot move '%s' onto '%s': %s", from, to,
		    g_strerror(saved));
	return false;
}

bool multirun_stage_commit(struct multirun_stage *stage, const char *const *last, const char *const *stale,
			   GError **error)
{
	g_autoptr(GPtrArray) names = stage_names(stage, error);
	if (!names)
		return false;
	for (int pass = 0; pass < 2; pass++) /* the `last` names in the second pass */
		for (unsigned i = 0; i < names->len; i++)
			if (listed(last, names->pdata[i]) == (pass == 1) && !move_in(stage, names->pdata[i], error))
				return false;
	for (size_t i = 0; stale && stale[i]; i++) {
		if (g_ptr_array_find_with_equal_func(names, stale[i], g_str_equal, NULL))
			continue;
		g_autofree char *path = g_build_filename(stage->dir, stale[i], NULL);
		g_unlink(path); /* ENOENT: the old folder did not have it */
	}
	g_rmdir(stage->path);
	g_clear_pointer(&stage->path, g_free);
	return true;
}

void multirun_stage_discard(struct multirun_stage *stage)
{
	if (!stage->path)
		return;
	g_autoptr(GPtrArray) names = stage_names(stage, NULL);
	for (unsigned i = 0; names && i < names->len; i++) {
		g_autofree char *path = multirun_stage_file(stage, names->pdata[i]);
		g_unlink(path);
	}
	g_rmdir(stage->path);
	if (stage->made_dir)
		g_rmdir(stage->dir); /* only if empty: nothing else was put there meanwhile */
	g_clear_pointer(&stage->path, g_free);
}

void multirun_stage_clear(struct multirun_stage *stage)
{
	g_clear_pointer(&stage->dir, g_free);
	g_clear_pointer(&stage->path, g_free);
}

GPtrArray *multirun_parameters_objects(const char *json, const char *member)
{
	g_auto(GStrv) lines = g_strsplit(json ? json : "", "\n", -1);
	g_autofree char *array = g_strdup_printf("  \"%s\": [", member);
	g_autofree char *object = g_strdup_printf("  \"%s\": {", member);
	char **l = lines;
	while (*l && strcmp(*l, array) && strcmp(*l, object))
		l++;
	if (!*l)
		return NULL;
	GPtrArray *objects = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);
	if (!strcmp(*l, object))
		g_ptr_array_add(objects, g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free));
	for (l++; *l && !g_str_has_prefix(*l, "  ]") && !g_str_has_prefix(*l, "  }"); l++) {
		const char *text = *l + strspn(*l, " ");
		if (*text == '{')
			g_ptr_array_add(objects, g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free));
		if (*text != '"' || !objects->len)
			continue;
		g_autofree char *key = g_strndup(text + 1, strcspn(text + 1, "\""));
		const char *start = text + 1 + strlen(key) + strlen("\": ");
		g_autofree char *value = g_strndup(start, strlen(start) - g_str_has_suffix(start, ","));
		if (!strcmp(value, "null"))
			continue;
		if (*value == '"' && strlen(value) >= 2) { /* JSON's escapes \" \\ \n are C's */
			value[strlen(value) - 1] = '\0';
			char *plain = g_strcompress(value + 1);
			g_free(value);
			value = plain;
		}
		g_hash_table_replace(objects->pdata[objects->len - 1], g_steal_pointer(&key), g_steal_pointer(&value));
	}
	return objects;
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
