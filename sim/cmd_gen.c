/*
 * sim/cmd_gen.c - `cowsim gen NAME [options]`: write a generated trace.
 *
 * How it works: look the scenario up in workloads' table (tracegen.h), build
 * a GOptionContext (cli.h) from exactly the options that scenario takes plus
 * -o, parse, check, and run the scenario through a trace_writer over
 * stdout or over a temporary file next to -o FILE.  The temporary file is
 * renamed onto FILE only after the whole trace was written, flushed and
 * fsynced, so a failed generation leaves FILE as it was (nothing half-written).
 *
 * Exit status (sim/commands.h): 0 written; 1 the trace could not be written
 * whole (a full disk); 2 bad arguments, an unreadable input tree or an
 * output that cannot be created (a message on stderr); 130/143 interrupted.
 *
 * Invariants
 *   GN1  A signal (SIGINT, SIGTERM) or a failure leaves -o FILE as it was
 *       and no FILE.tmp-XXXXXX behind.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "cli.h"
#include "commands.h"
#include "options.h"
#include "output_file.h"
#include "trace.h"
#include "tracegen.h"

#define GEN_EXITS "  0  written\n" \
		  "  1  the trace could not be written whole (a full disk): FILE is as it was\n" \
		  "  2  bad arguments, an unreadable input tree or an output that cannot be created\n" \
		  "  130/143  interrupted (SIGINT/SIGTERM): FILE is as it was, no temporary file left"

static void print_scenarios(FILE *out)
{
	fprintf(out, "Usage:\n  cowsim gen [OPTION…] NAME\n\n"
		     "Writes a cowsim trace (docs/trace-format.md) of scenario NAME to stdout or FILE.\n\n"
		     "Scenarios:\n");
	for (const struct tracegen_scenario *s = tracegen_scenarios; s->name; s++)
		fprintf(out, "  %-16s %s\n", s->name, s->summary);
	fprintf(out, "\nOptions:\n"
		     "  -h, --help                    show this help, or with NAME the options of NAME\n"
		     "  -V, --version                 print cowsim's version and commit, and exit\n"
		     "  -o, --output=FILE             write the trace to FILE (default and '-': stdout)\n\n"
		     "Examples:\n"
		     "  cowsim gen seed-experiment --help\n"
		     "  cowsim gen seed-experiment --from-dir /usr/include --snapshots 10 -o t.trace\n"
		     "  cowsim gen synthetic --files 1000 | cowsim run - -o out.csv\n\n"
		     "Exit status:\n" GEN_EXITS "\n");
}

/* Bounds on the trace written (trace_writer_set_limits): a walker over a
 * tree of nested symlinks (grep -R) would otherwise write without end. The
 * defaults are far above every scenario's real size (the 10^5-file year
 * trace is about 50 MB). */
struct gen_limits {
	gint64 max_ops;
	char *max_bytes_text;
	uint64_t max_bytes;
};
#define GEN_MAX_OPS_DEFAULT 100000000
#define GEN_MAX_BYTES_DEFAULT "4G"

/* "cowsim gen NAME ARGS..." as given, shell-quoted, without -o/--output
 * FILE: the command that writes the same trace again (TRACE_GEN_COMMAND_TAG). */
static char *regenerating_command(int argc, char **argv)
{
	GString *out = g_string_new("cowsim gen");
	bool options = true;
	for (int i = 0; i < argc; i++) {
		if (options && !strcmp(argv[i], "--"))
			options = false;
		if (options && (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output"))) {
			i++; /* and its FILE */
			continue;
		}
		if (options && ((argv[i][0] == '-' && argv[i][1] == 'o') || g_str_has_prefix(argv[i], "--output=")))
			continue;
		/* Quoted only where a shell needs it, so that the usual command reads as typed. */
		bool plain = *argv[i] && !strpbrk(argv[i], " \t\n'\"\\$`*?[]{}()<>|&;#~!");
		g_autofree char *word = plain ? g_strdup(argv[i]) : g_shell_quote(argv[i]);
		g_string_append_printf(out, " %s", word);
	}
	return g_string_free(out, FALSE);
}

/* Parse argv (argv[0] = NAME) into params: false on an error (printed). */
static bool parse_options(const struct tracegen_scenario *scenario, struct tracegen_params *params,
			  struct gen_limits *limits, int argc, char **argv)
{
	GOptionEntry common[] = {
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &params->output,
		  "write the trace to FILE (atomically; default and '-': stdout)", "FILE" },
		{ "max-ops", 0, 0, G_OPTION_ARG_INT64, &limits->max_ops,
		  "stop with an error past N ops (default 100000000; 0: no bound)", "N" },
		{ "max-bytes", 0, 0, G_OPTION_ARG_STRING, &limits->max_bytes_text,
		  "stop with an error past SIZE bytes of trace (default " GEN_MAX_BYTES_DEFAULT "; 0: no bound)", "SIZE" },
		G_OPTION_ENTRY_NULL,
	};
	g_autofree GOptionEntry *entries = tracegen_option_entries(scenario, params);
	g_autofree char *command = g_strdup_printf("gen %s", scenario->name);
	const struct cli_doc doc = {
		.command = command,
		.summary = scenario->summary,
		.notes = scenario->description,
		.examples = scenario->examples,
		.exits = GEN_EXITS,
	};
	params->command = regenerating_command(argc, argv);
	g_autoptr(GOptionContext) context = cli_context_new(&doc);
	g_option_context_add_main_entries(context, common, NULL);
	g_option_context_add_main_entries(context, entries, NULL);
	if (!cli_parse(context, &doc, &argc, &argv))
		return false;
	g_autoptr(GError) error = NULL;
	if (limits->max_ops < 0 ||
	    !options_parse_size("--max-bytes", limits->max_bytes_text ? limits->max_bytes_text : GEN_MAX_BYTES_DEFAULT,
				&limits->max_bytes, &error)) {
		fprintf(stderr, "cowsim gen %s: %s\n", scenario->name,
			error ? error->message : "--max-ops takes a count of ops, 0 or more");
		return false;
	}
	if (cli_is_stdio(params->output))
		g_clear_pointer(&params->output, g_free);
	return true;
}

/* GN1: SIGINT or SIGTERM while the trace is written removes its temporary
 * file, then ends the process by the same signal (exit 130/143): a generator
 * has no loop to check a flag in, and nothing of it is worth keeping. The
 * handler is installed only where the signal would kill us anyway (a caller
 * such as sweep, which catches the signals, keeps its own). */
static char gen_tmp[PATH_MAX];

static void remove_tmp_and_die(int signo)
{
	if (gen_tmp[0])
		unlink(gen_tmp);
	signal(signo, SIG_DFL);
	raise(signo);
}

struct gen_signals {
	struct sigaction before[2];
	bool installed[2];
	sigset_t mask, old_mask;
};

static const int gen_signal_numbers[] = { SIGINT, SIGTERM };

/* Installs remove_tmp_and_die and blocks the signals until gen_signals_armed(). */
static void gen_signals_catch(struct gen_signals *g)
{
	sigemptyset(&g->mask);
	for (unsigned i = 0; i < G_N_ELEMENTS(gen_signal_numbers); i++) {
		sigaction(gen_signal_numbers[i], NULL, &g->before[i]);
		g->installed[i] = g->before[i].sa_handler == SIG_DFL;
		if (g->installed[i]) {
			struct sigaction action = { .sa_handler = remove_tmp_and_die };
			sigaction(gen_signal_numbers[i], &action, NULL);
		}
		sigaddset(&g->mask, gen_signal_numbers[i]);
	}
	sigprocmask(SIG_BLOCK, &g->mask, &g->old_mask);
}

/* The temporary file is known (NULL: none): a signal may come now. */
static void gen_signals_armed(struct gen_signals *g, const char *tmp)
{
	g_strlcpy(gen_tmp, tmp && strlen(tmp) < sizeof(gen_tmp) ? tmp : "", sizeof(gen_tmp));
	sigprocmask(SIG_SETMASK, &g->old_mask, NULL);
}

/* Blocks the signals for the commit or discard, then restores the handlers. */
static void gen_signals_block(struct gen_signals *g)
{
	sigprocmask(SIG_BLOCK, &g->mask, NULL);
}

static void gen_signals_restore(struct gen_signals *g)
{
	gen_tmp[0] = 0;
	for (unsigned i = 0; i < G_N_ELEMENTS(gen_signal_numbers); i++)
		if (g->installed[i])
			sigaction(gen_signal_numbers[i], &g->before[i], NULL);
	sigprocmask(SIG_SETMASK, &g->old_mask, NULL);
}

/* Write the trace to PATH whole or not at all (results/output_file.h, GN1). */
static int write_atomically(const struct tracegen_scenario *scenario, const struct tracegen_params *params,
			    const struct gen_limits *limits, GError **error)
{
	struct output_file out;
	const char *outputs[] = { params->output }, *inputs[] = { params->strace_log };
	if (!output_file_refuse_aliases(outputs, 1, inputs, 1, error))
		return EXIT_BAD_INPUT;
	struct gen_signals signals;
	gen_signals_catch(&signals);
	if (!output_file_open(&out, params->output, error)) {
		gen_signals_restore(&signals);
		return EXIT_BAD_INPUT; /* an output the command line names that cannot be created */
	}
	gen_signals_armed(&signals, out.tmp);
	bool ok, write_failed;
	{
		g_autoptr(trace_writer) writer = trace_writer_new(out.stream);
		trace_writer_set_limits(writer, (uint64_t)limits->max_ops, limits->max_bytes);
		ok = tracegen_run(scenario, params, writer, error);
		write_failed = !ok && ferror(out.stream);
	}
	gen_signals_block(&signals);
	if (!ok)
		output_file_discard(&out);
	else if (!output_file_commit(&out, error))
		write_failed = true;
	gen_signals_restore(&signals);
	if (!write_failed)
		return ok ? EXIT_OK : EXIT_BAD_INPUT;
	/* A write that failed mid-way (a full disk, a file-size limit) is the run failing (1). */
	if (!g_str_has_prefix((*error)->message, "cannot "))
		g_prefix_error(error, "cannot write '%s': ", params->output);
	return EXIT_RUN_FAILED;
}

static int write_stdout(const struct tracegen_scenario *scenario, const struct tracegen_params *params,
			const struct gen_limits *limits, GError **error)
{
	g_autoptr(trace_writer) writer = trace_writer_new(stdout);
	trace_writer_set_limits(writer, (uint64_t)limits->max_ops, limits->max_bytes);
	return tracegen_run(scenario, params, writer, error) ? EXIT_OK : EXIT_BAD_INPUT;
}


static int run_scenario(const struct tracegen_scenario *scenario, int argc, char **argv)
{
	struct tracegen_params params;
	struct gen_limits limits = { .max_ops = GEN_MAX_OPS_DEFAULT };
	g_autoptr(GError) error = NULL;
	int status;

	tracegen_params_init(&params);
	if (!parse_options(scenario, &params, &limits, argc, argv)) {
		g_free(limits.max_bytes_text);
		tracegen_params_clear(&params);
		return EXIT_BAD_INPUT;
	}
	g_free(limits.max_bytes_text);
	if (!tracegen_params_check(scenario, &params, &error)) {
		fprintf(stderr, "cowsim gen %s: %s (see 'cowsim gen %s --help')\n", scenario->name,
			error->message, scenario->name);
		tracegen_params_clear(&params);
		return EXIT_BAD_INPUT;
	}
	status = params.output ? write_atomically(scenario, &params, &limits, &error)
			       : write_stdout(scenario, &params, &limits, &error);
	for (guint i = 0; params.notes && i < params.notes->len; i++) /* e.g. from-strace's counts */
		fprintf(stderr, "cowsim gen %s: %s\n", scenario->name, (const char *)g_ptr_array_index(params.notes, i));
	if (status != EXIT_OK)
		fprintf(stderr, "cowsim gen %s: %s\n", scenario->name, error ? error->message : "failed");
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
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("%s\n", cli_version());
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
