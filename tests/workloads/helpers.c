/*
 * tests/workloads/helpers.c - see helpers.h.
 */
#include "helpers.h"

#include <stdio.h>
#include <string.h>

#include "tracegen.h"

struct trace_reader *helper_reader(const char *text, GError **error)
{
	/* A tmpfile rather than fmemopen: no buffer to outlive the reader, and 0 bytes work. */
	FILE *stream = tmpfile();
	assert_non_null(stream);
	assert_int_equal(fwrite(text, 1, strlen(text), stream), strlen(text));
	rewind(stream);
	return trace_reader_new_from_stream(stream, "t.trace", true, error);
}

char *helper_write_op(const struct trace_op *op)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_writer) writer = trace_writer_new(out);
	assert_true(trace_writer_begin(writer, &error));
	if (!trace_writer_op(writer, op, &error))
		fail_msg("writer refused the op: %s", error->message);
	assert_true(trace_writer_finish(writer, &error));
	fclose(out);
	return text;
}

char *helper_first_error(const char *text)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(text, &error);
	struct trace_op op;
	int got = 1;
	while (reader && (got = trace_reader_next(reader, &op, &error)) == 1)
		;
	if (!error)
		fail_msg("expected an error for:\n%s", text);
	return g_strdup(error->message);
}

char *helper_generate(const char *name, const char *const *args, GError **error)
{
	const struct tracegen_scenario *scenario = tracegen_find(name);
	assert_non_null(scenario);
	struct tracegen_params params;
	tracegen_params_init(&params);

	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(argv, g_strdup(name));
	for (int i = 0; args[i]; i++)
		g_ptr_array_add(argv, g_strdup(args[i]));
	g_autofree char **argv_copy = g_memdup2(argv->pdata, argv->len * sizeof(char *));
	int argc = (int)argv->len;
	char **argv_p = argv_copy;
	g_autofree GOptionEntry *entries = tracegen_option_entries(scenario, &params);
	g_autoptr(GOptionContext) context = g_option_context_new(NULL);
	g_option_context_set_help_enabled(context, FALSE);
	g_option_context_add_main_entries(context, entries, NULL);

	char *text = NULL;
	size_t size = 0;
	bool ok = g_option_context_parse(context, &argc, &argv_p, error) &&
		  tracegen_params_check(scenario, &params, error);
	if (ok) {
		FILE *out = open_memstream(&text, &size);
		g_autoptr(trace_writer) writer = trace_writer_new(out);
		ok = tracegen_run(scenario, &params, writer, error);
		fclose(out);
	}
	tracegen_params_clear(&params);
	if (!ok) {
		free(text);
		return NULL;
	}
	return text;
}
