/*
 * sim/provenance.h - what produced a folder of results, written beside it
 * for programs: DIR/parameters.json (cowsim compare, cowsim sweep) and
 * FILE.parameters.json beside a report page; the same head starts every
 * --json summary (docs/json.md).
 *
 * How it works
 *   A command keeps its arguments as given and the option entries it parsed
 *   (cli_add_entries, cli_take_entries), so the document can name every
 *   option with its value without a list kept by hand beside --help:
 *
 *     { "schema": "cowsim-parameters/1",
 *       "cowsim": { "version": "0.1.0", "commit": "abc123..." },
 *       "command": "compare", "argv": [ "cowsim", "compare", ... ],
 *       "trace": { "path": ..., "sha256": ..., "gen_command": ... },
 *       "options": { "output": "cmp", "nodesize": null, ... every option },
 *       "model": { "nodesize": 16384, ... the values the runs used },
 *       ... what the command adds }
 *
 * Invariants
 *   PV1  "options" holds every option the command's --help lists (but -h,
 *       -V and --json), by its long name, with its value: what was given, the
 *       default the command filled in, or null for "not given" (the model
 *       options; "model" has the values used).
 *   PV2  Same command, same trace, same cowsim: same bytes.
 */
#ifndef COWSIM_SIM_PROVENANCE_H
#define COWSIM_SIM_PROVENANCE_H

#include <stdbool.h>
#include <glib.h>

#include "fs.h"
#include "json.h"

#define PROVENANCE_PARAMETERS_SCHEMA "cowsim-parameters/1"
#define PROVENANCE_PARAMETERS_FILE "parameters.json"

struct provenance {
	const char *command;          /* "compare", "sweep", "report", "run" */
	char **argv;                  /* as given, from after "cowsim CMD" on; NULL-terminated */
	GArray *entries;              /* of GOptionEntry: cli_take_entries() */
	const char *trace;            /* TRACE, NULL for none (sweep --gen, report) */
	const char *trace_sha256;     /* when the caller has it already; else computed */
	const char *gen_command;      /* the generator's command; NULL: read from the trace */
};

/* A writer holding the open document: schema, cowsim, command, argv, trace
 * (when p->trace or p->gen_command) and options; the caller adds its own
 * members, then results_json_end() and results_json_finish(). NULL and
 * *error when the trace cannot be read. */
ResultsJson *provenance_begin(const struct provenance *p, const char *schema, GError **error);

/* The head of a compare or sweep --json summary: provenance_begin(), then
 * "output" (the folder) and "exit_status". NULL with the message printed as
 * "cowsim CMD: ...". */
ResultsJson *provenance_summary_begin(const struct provenance *p, const char *schema, const char *output,
				      int exit_status);

/* "cowsim": { "version", "commit" }. */
void provenance_cowsim(ResultsJson *w);

/* The values a configuration runs with, as an object named `key`: design,
 * nodesize, device_size, metadata, mount, policy (unless !with_mount_policy:
 * compare varies them), lazytime, enospc_read, max_inline,
 * commit_interval_s, immediate_writeback, zfs_clones. */
void provenance_model(ResultsJson *w, const char *key, const struct fs_config *config, bool with_mount_policy);

/* Writes the document `w` (finished here) to PATH atomically; false with the
 * message printed as "cowsim CMD: ...". */
bool provenance_write(ResultsJson *w, const char *command, const char *path);

#endif
