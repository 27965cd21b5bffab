/*
 * sim/main.c - the cowsim program: dispatch to a subcommand.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "huge_pages.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "run", cmd_run, "replay a trace on the model, write CSV rows and a summary" },
	{ "gen", cmd_gen, "generate a trace (from-dir, synthetic, seed-experiment, ...)" },
	{ "plot", cmd_plot, "draw space-amplification curves from CSV files" },
	{ "bench", cmd_bench, "measure the model's speed and memory (ops/s, bytes per item)" },
	{ "compare", cmd_compare, "run one trace under several policies/mounts; table and plot side by side" },
	{ "sweep", cmd_sweep, "run a trace over a grid of parameters (snapshots, nodesize, ...); one CSV and a plot" },
	{ "draw", cmd_draw, "draw the modeled trees block by block at a mark (text, dot, svg)" },
	{ "record", cmd_record, "run a command under strace and write the trace of what it did (docs/recording.md)" },
	{ "report", cmd_report, "turn a compare or sweep folder into one self-contained HTML page" },
	{ "whatif", cmd_whatif, "what deleting a set of snapshots together would free (as zfs destroy -nv)" },
	{ "columns", cmd_columns, "name, unit and meaning of every column of the CSV files (--json for programs)" },
};

static void print_usage(FILE *out)
{
	fprintf(out, "Usage:\n  cowsim COMMAND [OPTION…] ARGS\n\n"
		     "cowsim simulates a copy-on-write B-tree filesystem (btrfs-like) with\n"
		     "snapshots and refcounted blocks, and shows how much metadata a workload\n"
		     "unshares under each atime policy.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nOptions:\n"
		     "  -h, --help                    show this help and exit\n"
		     "  -V, --version                 print cowsim's version and commit, and exit\n\n"
		     "'cowsim COMMAND --help' describes each command; 'man cowsim-COMMAND' too.\n\n"
		     "Examples:\n"
		     "  cowsim gen seed-experiment --from-dir /usr/include --snapshots 10 -o t.trace\n"
		     "  cowsim run t.trace -m relatime -o out.csv\n"
		     "  cowsim compare t.trace --mounts relatime,noatime -o cmp && cowsim report cmp\n\n"
		     "Exit status:\n"
		     "  0  done\n"
		     "  1  the run itself failed: a model invariant broke, or the disk filled (or failed)\n"
		     "     under an output while it was written\n"
		     "  2  bad input: arguments, a malformed trace, a device too small for the trace,\n"
		     "     an output path that cannot be created or written at all\n"
		     "  77  not possible here (no root, no strace, no Python)\n");
}

/* A command's tables and traces on stdout may still sit in its buffer: a
 * full disk or a closed pipe shows only at this flush, and must not pass
 * for a run that wrote everything. */
static int finish_stdout(int status)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	fprintf(stderr, "cowsim: cannot write standard output: %s\n", strerror(errno));
	return status == EXIT_OK ? EXIT_BAD_INPUT : status;
}

int main(int argc, char **argv)
{
	huge_pages_start(argv); /* the model's heap on huge pages (huge_pages.h) */
	/* A file-size limit (ulimit -f) would kill us with SIGXFSZ between two
	 * rows; ignored, write(2) fails with EFBIG instead, and every writer
	 * reports that as an output the disk filled under: exit 1, whole rows kept. */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2) {
		print_usage(stderr);
		return EXIT_BAD_INPUT;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		print_usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("%s\n", cli_version());
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return finish_stdout(commands[i].run(argc - 1, argv + 1));
	fprintf(stderr, "cowsim: unknown command '%s'\n\n", argv[1]);
	print_usage(stderr);
	return EXIT_BAD_INPUT;
}
