/*
 * workloads/tracegen.h - trace generators: `cowsim gen NAME [options]`.
 *
 * A scenario is a function that writes ops through a trace_writer from a
 * struct tracegen_params.  Most scenarios start from a tree (fstree.h): a
 * real directory (--from-dir) or a synthetic one (--files N --seed S), copy
 * it into the filesystem as cp -a would (tracegen_copy), then act on it:
 * snapshots, grep -R / find / tar walks (tracegen_walk), daily cycles.
 *
 * Simulated time: each scenario emits "clock @START" first and then moves the
 * clock with "clock +..." ops as work is done (tracegen_clock: a rough cost
 * per op, so a 25k-file copy takes a few seconds).  Decisions that depend on
 * time (mutt, tmpwatch, hsm-scan) use the generator's own clock and the times
 * the generator itself assigned, never the simulator's state: a trace is a
 * fixed script.
 *
 * Invariants:
 *   TG1 deterministic: the same params give the same bytes (no time(), no
 *      unseeded randomness, no hash-table iteration order in the output);
 *   TG2 every trace written is accepted by trace_reader (all ops go through
 *      trace_writer_op, which checks them);
 *   TG3 library code never prints or exits: errors are GErrors.
 */
#ifndef COWSIM_WORKLOADS_TRACEGEN_H
#define COWSIM_WORKLOADS_TRACEGEN_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "fstree.h"
#include "trace.h"
#include "tracegen_rng.h"

#define TRACEGEN_ERROR (tracegen_error_quark())
GQuark tracegen_error_quark(void);

enum tracegen_error_code {
	TRACEGEN_ERROR_ARGS,     /* bad or missing option */
	TRACEGEN_ERROR_SOURCE,   /* the --from-dir tree could not be read */
};

/* The order a from-dir walk copies a directory's entries in. */
enum fstree_order {
	FSTREE_ORDER_INODE,      /* what GNU cp -a does (savedir SAVEDIR_SORT_FASTREAD) */
	FSTREE_ORDER_READDIR,    /* the source filesystem's readdir order */
	FSTREE_ORDER_NAME,       /* strcmp order */
};

struct fstree *fstree_from_dir(const char *path, enum fstree_order order, GError **error);

/* The most files --files (or a scenario's tree.files) may ask for: a synthetic
 * tree is built whole in memory, about 300 bytes a file (10^6 files: 287 MB
 * RSS measured), so this is about 6 GB, twice the 10^7 of `cowsim bench`. */
#define TRACEGEN_FILES_MAX 20000000

/* Parameters of the synthetic tree (gen_synthetic.c explains each and cites its source). */
struct fstree_synthetic_params {
	uint64_t files;
	uint64_t seed;
	double files_per_dir;
	double depth_mean;
	uint64_t max_file_size;
	int64_t now_ns;          /* ages are measured back from here */
};
void fstree_synthetic_params_init(struct fstree_synthetic_params *params);
struct fstree *fstree_synthetic(const struct fstree_synthetic_params *params, GError **error);

/* --- options of `cowsim gen` ------------------------------------------------ */

/* Every option any scenario takes; a scenario lists the ones it uses. */
struct tracegen_params {
	char *output;            /* -o: handled by the command, not the scenario */
	char *from_dir;
	gint64 files;
	gint64 seed;
	char *prefix;            /* where the tree goes: default /tree */
	char *order;             /* inode | readdir | name */
	char *start;             /* simulated start time, seconds since the epoch */
	gint snapshots;
	gboolean readonly;
	char *grep;              /* all | trunk: what seed-experiment's grep -R reads */
	char *scope;             /* all | trunk: what find, tar, hsm-scan walk */
	gint greps;
	gboolean no_follow;      /* walk like grep -r (symlinks not followed) instead of grep -R */
	gint days;
	gint keep;
	gint run_days;
	gint mailboxes;
	gint mails_per_day;
	gint check_interval;     /* seconds between mutt's mailbox checks */
	gint cold_days;
	gint new_per_day;
	gdouble read_fraction;
	gdouble appends;         /* churn: mean ops per day; -1 = the scenario's default */
	gdouble overwrites;
	gdouble creates;
	gdouble deletes;
	gint64 write_size;       /* churn: median bytes of an append, overwrite or new file */
	char *size_dist;         /* churn: lognormal | pareto | fixed */
	gdouble files_per_dir;
	gdouble depth_mean;
	gint64 max_file_size;
	char *root;              /* from-strace: the real directory the program worked on */
	gboolean strict;         /* from-strace: a malformed log line is an error */
	gboolean prelude;        /* from-strace: start with the from-dir copy of --root */
	char *strace_log;        /* from-strace's LOG (the positional) */
	char *scenario_file;     /* scenario: FILE (the positional) */
	char **sets;             /* scenario: --set GROUP.KEY=VALUE overrides */
	gint64 scenario_seed;    /* scenario: --seed, -1 when not given (the file's seed holds) */
	GPtrArray *notes;        /* char *: report lines a scenario leaves for stderr (from-strace) */
	char **remaining;        /* G_OPTION_REMAINING: from-dir's DIR, from-strace's LOG */
	char *command;           /* the command line that regenerates the trace, for its
				    second line (TRACE_GEN_COMMAND_TAG); NULL: not recorded */
};

void tracegen_params_init(struct tracegen_params *params);
void tracegen_params_clear(struct tracegen_params *params);

struct tracegen_scenario {
	const char *name;
	const char *summary;                  /* one line, for `cowsim gen --help` */
	const char *description;              /* for `cowsim gen NAME --help` */
	uint64_t options;                     /* TRACEGEN_OPT_* bits (gen_registry.c) */
	bool (*run)(const struct tracegen_params *params, struct trace_writer *writer, GError **error);
	const char *examples;                 /* for `cowsim gen NAME --help`: lines that run as printed */
};

/* All scenarios, NULL-terminated by name. */
extern const struct tracegen_scenario tracegen_scenarios[];
const struct tracegen_scenario *tracegen_find(const char *name);

/* The GOptionEntry array (terminated) for SCENARIO, bound to PARAMS; free with g_free. */
GOptionEntry *tracegen_option_entries(const struct tracegen_scenario *scenario,
				      struct tracegen_params *params);
/* Check the parsed params (ranges, exclusive options; TRACEGEN_ERROR_ARGS) and
 * settle them (from-dir's positional DIR becomes --from-dir). */
bool tracegen_params_check(const struct tracegen_scenario *scenario, struct tracegen_params *params,
			   GError **error);
/* Write the whole trace (header included) for SCENARIO. */
bool tracegen_run(const struct tracegen_scenario *scenario, const struct tracegen_params *params,
		  struct trace_writer *writer, GError **error);

/* --- building blocks shared by the scenarios --------------------------------- */

/* The simulated clock as the trace has set it, plus work not yet turned into
 * "clock +1s" ops. */
struct tracegen_clock {
	int64_t now_ns;          /* what the simulator's clock reads after the ops written so far */
	int64_t pending_ns;      /* work done but not yet a whole second */
};

bool tracegen_clock_start(struct tracegen_clock *clock, struct trace_writer *w, int64_t start_ns,
			  GError **error);
/* Account NS of work; writes "clock +Ns" each time whole seconds accumulate. */
bool tracegen_clock_spend(struct tracegen_clock *clock, struct trace_writer *w, int64_t ns, GError **error);
/* Move the clock to T (no-op if already there or past it); drops pending work. */
bool tracegen_clock_advance_to(struct tracegen_clock *clock, struct trace_writer *w, int64_t t_ns,
			       GError **error);

/* Rough costs of the tools' work, page cache warm (gen_clock.c). */
#define TRACEGEN_COST_COPY_INODE_NS    100000   /* cp -a: create + chown + chmod + utimens */
#define TRACEGEN_COST_COPY_BYTE_PS     1000     /* cp: 1 GB/s (picoseconds per byte) */
#define TRACEGEN_COST_READ_FILE_NS     25000    /* open + read + close */
#define TRACEGEN_COST_READ_BYTE_PS     500      /* 2 GB/s from the page cache */
#define TRACEGEN_COST_READDIR_NS       10000
#define TRACEGEN_COST_STAT_NS          3000
#define TRACEGEN_COST_SNAPSHOT_NS      200000000 /* btrfs subvolume snapshot commits a transaction */

/* The tree the params name: --from-dir or --files (synthetic), or an error. */
struct fstree *tracegen_load_tree(const struct tracegen_params *params, GError **error);
/* False (TRACEGEN_ERROR_ARGS) when PARAMS' synthetic tree is so large that its
 * copy alone passes MAX_OPS (0: no bound): checked before the tree is built. */
bool tracegen_check_tree_budget(const struct tracegen_params *params, uint64_t max_ops, GError **error);
/* The start time: --start, else just after the tree's newest timestamp
 * (whole day, UTC), else 1338422400 (2012-05-31, the LWN article's date). */
bool tracegen_start_time(const struct tracegen_params *params, const struct fstree *tree, int64_t *start_ns,
			 GError **error);

/* Emit the ops of `cp -a SOURCE PREFIX` (parents of PREFIX are created with mkdir). */
bool tracegen_copy(struct trace_writer *w, struct tracegen_clock *clock, const struct fstree *tree,
		   const char *prefix, GError **error);

enum tracegen_walker {
	TRACEGEN_WALK_GREP,         /* grep -R: readdir dirs, read files, follow symlinks */
	TRACEGEN_WALK_GREP_NOFOLLOW,/* grep -r: symlinks below the top are skipped */
	TRACEGEN_WALK_FIND,         /* find: readdir dirs, lstat every entry */
	TRACEGEN_WALK_TAR,          /* tar c: lstat + read files (hard links once) + readlink symlinks */
};

/* Walk the copy of TREE that lives at BASE (e.g. "/tree", "/snap3/tree"). */
bool tracegen_walk(struct trace_writer *w, struct tracegen_clock *clock, const struct fstree *tree,
		   const char *base, enum tracegen_walker walker, GError **error);

/* The mount-wide walk: readdir "/", then PREFIX, then SNAPSHOT_DIRS[i] + PREFIX in order. */
bool tracegen_walk_mount(struct trace_writer *w, struct tracegen_clock *clock, const struct fstree *tree,
			 const char *prefix, GPtrArray *snapshot_dirs, enum tracegen_walker walker,
			 GError **error);

#endif
