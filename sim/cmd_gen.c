/*
 * sim/cmd_gen.c - `cowsim gen NAME [options]`: write a generated trace.
 *
 * How it works: look the scenario up in workloads' table (tracegen.h), build
 * a GOptionContext from exactly the options that scenario takes plus -o and
 * --help, parse, check, and run the scenario through a trace_writer over
 * stdout or over a temporary file next to -o FILE.  The temporary file is
 * renamed onto FILE only after the whole trace was written, flushed and
 * fsynced, so a failed generation leaves FILE as it was (nothing half-written).
 *
 * Exit status (sim/commands.h): 0 written; 2 bad arguments, an unreadable
 * input tree or an output that cannot be written (a message on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "commands.h"
#include "output_file.h"
#include "trace.h"
#include "tracegen.h"

static void print_scenarios(FILE *out)
{
	fprintf(out, "usage: cowsim gen NAME [OPTIONS] [-o FILE]\n\n"
		     "Write a cowsim trace (docs/trace-format.md) to stdout or FILE.\n\nscenarios:\n");
	for (const struct tracegen_scenario *s = tracegen_scenarios; s->name; s++)
		fprintf(out, "  %-16s %s\n", s->name, s->summary);
	fprintf(out, "\n'cowsim gen NAME --help' lists the options of NAME.\n");
}

/* Parse argv (argv[0] = NAME) into params; *help set when --help was given. */
static bool parse_options(const struct tracegen_scenario *scenario, struct tracegen_params *params,
			  int argc, char **argv, gboolean *help, char **help_text, GError **error)
{
	GOptionEntry common[] = {
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &params->output,
		  "Write the trace to FILE (atomically) instead of stdout", "FILE" },
		{ "help", 'h', 0, G_OPTION_ARG_NONE, help, "Show the options of this scenario", NULL },
		G_OPTION_ENTRY_NULL,
	};
	g_autofree GOptionEntry *entries = tracegen_option_entries(scenario, params);
	g_autofree char *prgname = g_strdup_printf("cowsim gen %s", scenario->name);
	g_autoptr(GOptionContext) context = g_option_context_new(NULL);

	g_set_prgname(prgname); /* the "Usage:" line of --help */
	g_option_context_set_summary(context, scenario->summary);
	g_option_context_set_help_enabled(context, FALSE);
	g_option_context_set_description(context, scenario->description);
	g_option_context_add_main_entries(context, common, NULL);
	g_option_context_add_main_entries(context, entries, NULL);
	bool ok = g_option_context_parse(context, &argc, &argv, error);
	*help_text = g_option_context_get_help(context, TRUE, NULL);
	return ok;
}

/* Write the trace to PATH whole or not at all (results/output_file.h). */
static int write_atomically(const struct tracegen_scenario *scenario, const struct tracegen_params *params,
			    GError **error)
{
	struct output_file out;
	const char *outputs[] = { params->output }, *inputs[] = { params->strace_log };
	if (!output_file_refuse_aliases(outputs, 1, inputs, 1, error) ||
	    !output_file_open(&out, params->output, error))
		return -1;
	bool ok;
	{
		g_autoptr(trace_writer) writer = trace_writer_new(out.stream);
		ok = tracegen_run(scenario, params, writer, error);
	}
	if (!ok) {
		output_file_discard(&out);
		return -1;
	}
	return output_file_commit(&out, error) ? EXIT_OK : -1;
}

static int write_stdout(const struct tracegen_scenario *scenario, const struct tracegen_params *params,
			GError **error)
{
	g_autoptr(trace_writer) writer = trace_writer_new(stdout);
	return tracegen_run(scenario, params, writer, error) ? EXIT_OK : -1;
}


static int run_scenario(const struct tracegen_scenario *scenario, int argc, char **argv)
{
	struct tracegen_params params;
	g_autoptr(GError) error = NULL;
	g_autofree char *help_text = NULL;
	gboolean help = FALSE;
	int status;

	tracegen_params_init(&params);
	if (!parse_options(scenario, &params, argc, argv, &help, &help_text, &error) ||
	    (!help && !tracegen_params_check(scenario, &params, &error))) {
		fprintf(stderr, "cowsim gen %s: %s\n(see 'cowsim gen %s --help')\n", scenario->name,
			error->message, scenario->name);
		tracegen_params_clear(&params);
		return EXIT_BAD_INPUT;
	}
	if (help) {
		fputs(help_text, stdout);
		tracegen_params_clear(&params);
		return EXIT_OK;
	}
	status = params.output ? write_atomically(scenario, &params, &error) : write_stdout(scenario, &params, &error);
	for (guint i = 0; params.notes && i < params.notes->len; i++) /* e.g. from-strace's counts */
		fprintf(stderr, "cowsim gen %s: %s\n", scenario->name, (const char *)g_ptr_array_index(params.notes, i));
	if (status != EXIT_OK) {
		fprintf(stderr, "cowsim gen %s: %s\n", scenario->name, error ? error->message : "failed");
		status = EXIT_BAD_INPUT;
	}
	tracegen_params_clear(&params);
	return status;
}

int cmd_gen(int argc, char **argv)
{
	if (argc < 2) {
		print_scenarios(stderr);
		return EXIT_BAD_INPUT;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		print_scenarios(stdout);
		return EXIT_OK;
	}
	const struct tracegen_scenario *scenario = tracegen_find(argv[1]);
	if (!scenario) {
		fprintf(stderr, "cowsim gen: unknown scenario '%s'\n\n", argv[1]);
		print_scenarios(stderr);
		return EXIT_BAD_INPUT;
	}
	return run_scenario(scenario, argc - 1, argv + 1);
}
