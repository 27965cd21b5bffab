/*
 * sim/cli.h - the conventions every cowsim command follows on its command
 * line, in one place.
 *
 * How it works
 *   A command describes itself once, in a struct cli_doc: its arguments, a
 *   summary, examples and exit statuses.  cli_context_new() turns that into
 *   the GOptionContext the command adds its entries to, so that --help,
 *   the man page (generated from --help at build time, tools/mkman.py) and
 *   the bash completion (which reads --help) all say the same thing:
 *
 *     Usage:
 *       cowsim run [OPTION…] TRACE
 *     <summary>
 *     <options, model options included>
 *     <notes>
 *     Examples:
 *       cowsim run t.trace -o out.csv
 *     Exit status:
 *       0  done ...
 *
 * Invariants
 *   CLI1  One meaning per flag across commands: -o/--output is the output,
 *       -m/--mount the mount options, -q/--quiet, -k/--keep-going, -e/--every,
 *       -V/--version and -h/--help mean the same thing everywhere; '-' is
 *       standard input or output wherever a file is read or written.
 *   CLI2  A spelling whose meaning changed (-o for mount options, -m for the
 *       metadata profile, -V for sweep's --vary) is refused with a message
 *       naming the new spelling, exit 2: never silently taken the new way.
 *   CLI3  Every message starts "cowsim CMD: " and goes to stderr; help goes to
 *       stdout with exit 0.
 */
#ifndef COWSIM_SIM_CLI_H
#define COWSIM_SIM_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

struct cli_doc {
	const char *program;          /* NULL: "cowsim"; "btrfs-replay" for a program of its own */
	const char *command;          /* "run", "gen seed-experiment"; NULL with a program */
	const char *args;             /* "TRACE", "[TRACE]", "DIR", NULL for none */
	const char *summary;          /* what the command does, a paragraph */
	const char *notes;            /* more to know (formats, files written), or NULL */
	const char *examples;         /* two or three "  cowsim ..." lines */
	const char *exits;            /* "  0  done\n  2  bad arguments..." */
	bool model_options;           /* takes options_add_model_entries(): CLI2's -o and -m */
};

/* A context whose usage line is "cowsim CMD [OPTION…] ARGS", with the summary,
 * the notes, the examples and the exit statuses, and -V/--version. */
GOptionContext *cli_context_new(const struct cli_doc *doc);

/* Parses; on an error prints "cowsim CMD: MESSAGE (see 'cowsim CMD --help')"
 * and returns false (the caller exits 2).  Refuses the renamed spellings (CLI2)
 * before GOption sees them. */
bool cli_parse(GOptionContext *context, const struct cli_doc *doc, int *argc, char ***argv);

/* "cowsim 0.1.0 (commit abc1234)", no newline. Static storage. */
const char *cli_version(void);
/* The commit alone ("abc1234", "abc1234-dirty"), NULL when built outside git. */
const char *cli_commit(void);

/* Adds `entries` to the context's main group, as g_option_context_add_main_entries()
 * does, and keeps a copy so that the command can record every option with its
 * value (parameters.json): cli_take_entries() after cli_parse(). The entries'
 * names must be static and their targets outlive the copy. */
void cli_add_entries(GOptionContext *context, const GOptionEntry *entries);
/* The entries cli_add_entries() gave `context`, in order (a GArray of
 * GOptionEntry, owned by the caller); an empty array when none. */
GArray *cli_take_entries(GOptionContext *context);

/* --json[=FILE]: a summary for programs (docs/json.md) to FILE, or to stdout
 * with no FILE or '-'. *target gets the FILE, "-" for stdout. `help` says
 * what the summary holds. */
void cli_add_json_entry(GOptionContext *context, char **target, const char *help);

/* Writes `text` whole to `path`: "-" is stdout; a file is replaced atomically
 * (a temporary file renamed onto it). False with the message printed as
 * "cowsim CMD: ..." (CLI3). */
bool cli_write_text(const char *command, const char *path, const char *text, gsize length);

/* The path of a data file cowsim installs (plot.py, calibration.csv), or
 * NULL.  Looked for, in order: $ENV (when `env` is not NULL and the variable
 * is set: that path or nothing); beside the running binary; ../share/cowsim/
 * from it (where meson installs them); the source tree's results/ (a binary
 * in the build tree). */
char *cli_find_data(const char *name, const char *env);

/* True for "-": standard input or output (CLI1). */
bool cli_is_stdio(const char *path);

/* CLI2: the exit status of an output that failed with `error` (a
 * G_FILE_ERROR): EXIT_RUN_FAILED (1) when the disk filled or failed under a
 * write (ENOSPC, EFBIG, EIO), EXIT_BAD_INPUT (2) when the path the command
 * line gave cannot hold the output at all (a missing folder, no permission, a
 * read-only filesystem, a directory). */
int cli_output_error_status(const GError *error);

/* CLI2: whether an output PATH the command line names can be created: its
 * folder exists and is writable ("-" and NULL always can). False with a
 * message "cowsim COMMAND: cannot create 'PATH': REASON" printed; checked
 * before the work, so an unusable path costs nothing. */
bool cli_output_creatable(const char *command, const char *path);

/* "16384", "16K", "4G", "1.5M": bytes. False with *error naming `what`
 * (the size syntax of every cowsim command and of btrfs-replay). */
bool cli_parse_size(const char *what, const char *text, uint64_t *bytes, GError **error);

#endif
