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
bool tracegen_run_scenario(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_tmpwatch(const struct tracegen_params *p, struct trace_writer *w, GError **error);
bool tracegen_run_from_strace(const struct tracegen_params *p, struct trace_writer *w, GError **error);

/* --- engines the generators share with scenario files (gen_scenario.c) ---------
 * Each acts on a session's tree as it lives: files created are added to it,
 * files unlinked are detached (fstree_detach), writes move size and mtime, and
 * reads move atime (the generator's belief: what strictatime would record). */

/* churn (gen_churn.c): appends, overwrites, creates (DIR/STEM-NNNNNN in a
 * directory below BELOW) and unlinks of the files below BELOW, one op at a time. */
enum tracegen_churn_kind {
	TRACEGEN_CHURN_APPEND, TRACEGEN_CHURN_OVERWRITE, TRACEGEN_CHURN_CREATE, TRACEGEN_CHURN_DELETE,
	TRACEGEN_CHURN_KINDS
};
struct tracegen_churn;
struct tracegen_churn *tracegen_churn_new(struct tracegen_session *s, const struct tracegen_params *p,
					  struct fstree_node *below, const char *stem, uint64_t stream);
/* The mean ops of KIND per day: the params' rate or its default from the tree's size. */
double tracegen_churn_rate(const struct tracegen_churn *c, enum tracegen_churn_kind kind);
struct tracegen_rng *tracegen_churn_rng(struct tracegen_churn *c);
/* One op of KIND at the clock's time, on a file drawn among the live ones. */
bool tracegen_churn_do(struct tracegen_churn *c, enum tracegen_churn_kind kind);
void tracegen_churn_free(struct tracegen_churn *c);

/* mutt (gen_mutt.c): MAILDIR/inbox, box02.. get deliveries; a check stats them
 * all and reads (or resets the atime of) those with new mail. */
struct tracegen_mutt;
struct tracegen_mutt *tracegen_mutt_new(struct tracegen_session *s, guint mailboxes, uint64_t seed);
/* Create the mailboxes in MAILDIR (which exists); with MAILDIR_NODE, also as
 * files of the session's tree, kept up to date, so that walks see them. */
bool tracegen_mutt_create(struct tracegen_mutt *m, const char *maildir, struct fstree_node *maildir_node);
bool tracegen_mutt_deliver(struct tracegen_mutt *m, guint mailbox);
bool tracegen_mutt_check(struct tracegen_mutt *m);
guint tracegen_mutt_mailboxes(const struct tracegen_mutt *m);
struct tracegen_rng *tracegen_mutt_rng(struct tracegen_mutt *m);
void tracegen_mutt_free(struct tracegen_mutt *m);

/* hsm-scan's migration (gen_scenarios.c): read FRACTION of the files whose atime is before COLD_BEFORE. */
bool tracegen_migrate_cold(struct tracegen_session *s, double fraction, int64_t cold_before,
			   struct tracegen_rng *rng);

/* A UTC date "YYYY-MM-DD" for a time in ns (backup-rotation's snapshot names). */
char *tracegen_format_date(int64_t ns);

#endif
