/*
 * workloads/tracegen_private.h - what the scenario files share; private to workloads/.
 *
 * A session is the common skeleton of the tree scenarios:
 *     clock @START, cp -a TREE PREFIX, sync, mark after_copy,
 *     [N snapshots of / at /snap1../snapN, sync, mark after_snapshots], ...
 * Each measurement point is "sync, mark LABEL" followed by one second of
 * clock, the time `sync; btrfs fi sync; btrfs fi df` takes in the
 * calibration script.
 */
#ifndef COWSIM_WORKLOADS_TRACEGEN_PRIVATE_H
#define COWSIM_WORKLOADS_TRACEGEN_PRIVATE_H

#include "tracegen.h"

struct tracegen_session {
	struct trace_writer *w;
	struct tracegen_clock clock;
	int64_t start_ns;          /* the clock's first value (clock @START) */
	struct fstree *tree;
	const char *prefix;        /* where the tree is: params->prefix or "/tree" */
	GPtrArray *snapshot_dirs;  /* char *: "/snap1", ... in creation order */
	GError **error;
};

/* Load the tree, start the clock, copy the tree to PREFIX, measure "after_copy". */
bool tracegen_session_begin(struct tracegen_session *s, const struct tracegen_params *params,
			    const char *prefix, struct trace_writer *w, GError **error);
/* N snapshots of / as /snap1../snapN; measure "after_snapshots" if ALWAYS_MARK or N > 0. */
bool tracegen_session_snapshots(struct tracegen_session *s, const struct tracegen_params *params,
				bool always_mark);
/* sync, mark LABEL, one second. */
bool tracegen_session_measure(struct tracegen_session *s, const char *label);
void tracegen_session_end(struct tracegen_session *s);

/* The scenarios (gen_scenarios.c, gen_backup.c, gen_mutt.c, gen_tmpwatch.c). */
bool tracegen_run_from_dir(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_synthetic(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_seed_experiment(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_find(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_tar(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_hsm_scan(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_backup_rotation(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_mutt(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_churn(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_merge(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_tmpwatch(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_from_strace(const struct tracegen_params *p, struct trace_writer *w, GError **error);

/* A UTC date "YYYY-MM-DD" for a time in ns (backup-rotation's snapshot names). */
char *tracegen_format_date(int64_t ns);

#endif
