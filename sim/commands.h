/*
 * sim/commands.h - the cowsim subcommands.
 *
 * Each command is one function with main()'s contract: it receives argv with
 * argv[0] the command name ("run", "gen", ...), and returns the process exit
 * status: 0 success, 1 the run itself failed (for example ENOSPC ended it), 2 bad
 * input or bad arguments (a clear message naming file, line and field has been
 * printed on stderr), 77 not possible here (for example no root for a replay).
 */
#ifndef COWSIM_SIM_COMMANDS_H
#define COWSIM_SIM_COMMANDS_H

enum {
	EXIT_OK = 0,
	EXIT_RUN_FAILED = 1,
	EXIT_BAD_INPUT = 2,
	EXIT_SKIPPED = 77,
};

int cmd_run(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_draw(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_columns(int argc, char **argv);
int cmd_whatif(int argc, char **argv);

#endif
