/*
 * sim/cmd_plot.c - `cowsim plot`: every figure, drawn by results/plot.py.
 *
 * How it works
 *   The drawing is done by results/plot.py under Debian's /usr/bin/python3
 *   (python3-matplotlib).  This command only finds the script, runs it with
 *   the arguments passed through unchanged, and returns its exit status:
 *
 *     cowsim plot A.csv -o out --x mark
 *       -> /usr/bin/python3 .../plot.py A.csv -o out --x mark
 *          (COWSIM_PLOT_PROG="cowsim plot" so its messages name this command)
 *
 *   The script is looked for by cli_find_data(), in order: $COWSIM_PLOT_SCRIPT; next to the
 *   running binary (plot.py, then ../share/cowsim/plot.py, where meson
 *   installs it); COWSIM_SOURCE_ROOT/results/plot.py (the build defines the
 *   macro, so a binary in the build tree uses the source's script).
 *   $COWSIM_PYTHON replaces /usr/bin/python3.
 *
 * Invariants
 *   CP1  The arguments reach plot.py exactly as given (no re-parsing here,
 *       except a leading --help/-h, which works without Python).
 *   CP2  Exit status: plot.py's own (0; 1 the disk filled or failed under a
 *       picture, which is renamed into place whole or not at all; 2 bad input
 *       or an output that cannot be created, sim/cli.h CLI2); 77 when no
 *       Python or no script is found; 1 if Python died from a signal.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "cli.h"
#include "commands.h"

#define PLOT_PYTHON "/usr/bin/python3"

/* In the style of cli.h's --help (plot.py parses the options, CP1). */
static void plot_usage(FILE *out)
{
	fprintf(out,
		"Usage:\n  cowsim plot [OPTION…] CSV [CSV…]\n\n"
		"Draws cowsim CSV files (run, compare, sweep, merged sweeps, btrfs-replay) and\n"
		"writes OUT.png and OUT.svg (both byte-for-byte reproducible). Units come from\n"
		"'cowsim columns --json': byte columns are drawn in MiB.\n\n"
		"Kinds (--kind):\n"
		"  curves      one curve per CSV of --y against --x (default)\n"
		"  ratio       each curve divided by its --baseline, point by point\n"
		"  bars        compare.csv or sweep.csv: final metadata and growth per parameter\n"
		"  stack       a stacked area per CSV of the columns named --stack* (metadata_by_)\n"
		"  free        unallocated device space over time, first ENOSPC / lost atime marked\n"
		"  sweep       sweep.csv: amplification against the first parameter\n\n"
		"Options:\n"
		"  -h, --help                    show this help and exit\n"
		"  -o, --output=OUT              output path without extension (required)\n"
		"  --kind=KIND                   the figure (above)\n"
		"  --x=AXIS                      op_index (default), days or time_s since the first\n"
		"                                row, elapsed_s, or mark: the labelled rows as categories\n"
		"  --y=COLUMN                    any column of the CSV (default metadata_used)\n"
		"  --labels=A,B / --label=A      legend labels, one per CSV (default: file names)\n"
		"  --keys=K1,K2                  labels are K1/K2 values (e.g. mount,policy)\n"
		"  --panel-by=KEY                a panel per value of KEY\n"
		"  --colour-by=KEY --style-by=KEY  a colour / a line style per value of KEY\n"
		"  --baseline=KEY=VALUE|LABEL    ratio: what each curve is divided by\n"
		"  --title=T                     figure title\n"
		"  --ratio                       curves: divide each curve by its first value\n"
		"  --measured=CSV                curves: overlay measured points (btrfs-replay)\n"
		"  --stack=PREFIX                stack: metadata_by_ (default) or tree_\n"
		"  --device-size=BYTES           free: device size (default: parameters.json beside the CSV)\n\n"
		"Curves that coincide are drawn nested (every colour shows) and named together.\n"
		"Panels of one quantity share one y scale; each names its own range above it.\n"
		"Runs that lost atime updates to ENOSPC (atime_lost, atime_dropped, failed_reads)\n"
		"are flagged: a red halo on the curve, a hatched bar, a red ring on a sweep point,\n"
		"each with the count in the legend. Sweep byte axes are ticked in KiB/MiB/GiB.\n"
		"Needs %s with python3-matplotlib.\n\n"
		"Examples:\n"
		"  cowsim run t.trace -m strictatime -o strict.csv && cowsim run t.trace -m noatime -o noatime.csv\n"
		"  cowsim plot strict.csv noatime.csv --x mark --labels strictatime,noatime -o seed\n"
		"  cowsim plot cmp/relatime-inline.csv cmp/noatime-inline.csv --keys mount,policy \\\n"
		"      --labels relatime/inline,noatime/inline --panel-by mount --x mark -o cmp2\n"
		"  cowsim plot cmp/compare.csv --kind bars -o bars\n"
		"  cowsim plot out.csv --kind stack --stack tree_ --x days -o trees\n"
		"  cowsim plot sw/sweep.csv --kind sweep -o sw/sweep\n\n"
		"Exit status:\n"
		"  0  drawn\n"
		"  1  the disk filled or failed under the pictures (the old ones are kept), or\n"
		"     python died\n"
		"  2  bad arguments, a missing file or column, or an output that cannot be\n"
		"     created (a missing folder, no permission)\n"
		"  77  no Python with matplotlib, or no plot.py\n",
		PLOT_PYTHON);
}

/* Maps a wait status to the command's exit status (CP2). */
static int exit_status_of(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		fprintf(stderr, "cowsim plot: python died from signal %d\n", WTERMSIG(wait_status));
	return EXIT_RUN_FAILED;
}

int cmd_plot(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		plot_usage(stdout);
		return EXIT_OK;
	}
	if (argc >= 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
		printf("%s\n", cli_version());
		return EXIT_OK;
	}
	const char *python = g_getenv("COWSIM_PYTHON");
	if (!python || !*python)
		python = PLOT_PYTHON;
	if (access(python, X_OK) != 0) {
		fprintf(stderr, "cowsim plot: cannot run %s: %s (install python3-matplotlib)\n",
			python, g_strerror(errno));
		return EXIT_SKIPPED;
	}
	g_autofree char *script = cli_find_data("plot.py", "COWSIM_PLOT_SCRIPT");
	if (!script) {
		fprintf(stderr, "cowsim plot: plot.py not found (looked at $COWSIM_PLOT_SCRIPT, "
				"next to the binary, ../share/cowsim/"
#ifdef COWSIM_SOURCE_ROOT
				", " COWSIM_SOURCE_ROOT "/results/"
#endif
				")\n");
		return EXIT_SKIPPED;
	}

	g_autoptr(GPtrArray) args = g_ptr_array_new();
	g_ptr_array_add(args, (char *)python);
	g_ptr_array_add(args, script);
	for (int i = 1; i < argc; i++)
		g_ptr_array_add(args, argv[i]); /* CP1 */
	g_ptr_array_add(args, NULL);

	g_auto(GStrv) envp = g_get_environ();
	envp = g_environ_setenv(envp, "COWSIM_PLOT_PROG", "cowsim plot", TRUE);
	g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
	if (self && !g_environ_getenv(envp, "COWSIM_BIN"))
		envp = g_environ_setenv(envp, "COWSIM_BIN", self, TRUE); /* plot.py reads the units from it */

	g_autoptr(GError) error = NULL;
	int wait_status = 0;
	fflush(stdout);
	fflush(stderr);
	if (!g_spawn_sync(NULL, (char **)args->pdata, envp, G_SPAWN_CHILD_INHERITS_STDIN, NULL,
			  NULL, NULL, NULL, &wait_status, &error)) {
		fprintf(stderr, "cowsim plot: cannot run %s: %s\n", python, error->message);
		return EXIT_SKIPPED;
	}
	return exit_status_of(wait_status);
}
