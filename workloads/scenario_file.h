/*
 * workloads/scenario_file.h - the scenario file: what `cowsim gen scenario FILE`
 * reads (docs/scenarios.md is the user's description).
 *
 * A GKeyFile (INI) file: [scenario] (start, days, seed), [tree] (the tree the
 * jobs act on, copied first) and one [job NAME] group per job (a type, a
 * schedule, an optional mark and the type's keys).  This module turns the
 * text into a struct scenario_spec and nothing else: every value is checked
 * here, so that the generator (gen_scenario.c) meets no bad input.
 *
 * Errors name the place: "FILE:LINE: [group] key: reason" (LINE of the key,
 * or of the group header for a missing key); a value given with --set names
 * "--set group.key" instead.  They are TRACEGEN_ERROR_ARGS (exit 2).
 *
 * Invariants:
 *   SF1 a parsed spec holds only known groups and keys, each value in range;
 *   SF2 jobs are in file order (which also breaks ties on the timeline).
 */
#ifndef COWSIM_WORKLOADS_SCENARIO_FILE_H
#define COWSIM_WORKLOADS_SCENARIO_FILE_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "tracegen.h"

enum scenario_job_type {
	SCENARIO_SNAPSHOT, SCENARIO_READ_ALL, SCENARIO_BACKUP, SCENARIO_FIND, SCENARIO_TAR,
	SCENARIO_MUTT, SCENARIO_TMPWATCH, SCENARIO_HSM_SCAN, SCENARIO_CHURN, SCENARIO_MARK,
};

/* When a job runs, as offsets from a UTC midnight (see scenario_next_run). */
enum scenario_every {
	SCENARIO_ONCE,     /* once HH:MM: on the first day */
	SCENARIO_INTERVAL, /* every D [from HH:MM to HH:MM] */
	SCENARIO_DAILY,    /* daily HH:MM */
	SCENARIO_WEEKLY,   /* weekly [mon..sun] [HH:MM]: default the start's weekday, 00:00 */
	SCENARIO_MONTHLY,  /* monthly [1..28] [HH:MM]: default day 1, 00:00 */
};

struct scenario_schedule {
	enum scenario_every every;
	int64_t at_ns;        /* time of day (ONCE, DAILY, WEEKLY, MONTHLY) */
	int64_t interval_ns;  /* INTERVAL */
	int64_t from_ns, to_ns; /* INTERVAL: runs at from, from + D, ... before to (0, 1 day by default) */
	int weekday;          /* WEEKLY: 1 = Monday .. 7 = Sunday, 0 = the start's */
	int day_of_month;     /* MONTHLY */
};

struct scenario_job {
	char *name;               /* NAME of [job NAME] */
	char *where;              /* "FILE:LINE" of its header, for run-time errors */
	enum scenario_job_type type;
	struct scenario_schedule schedule;
	char *mark;               /* sync + mark after each run: label with {n} {date} {time} {job}, or NULL */
	/* snapshot */
	int keep;                 /* 0: keep all */
	bool readonly;
	char *dir;                /* where snapshots go (default /snapshots) */
	char *snapshot_name;      /* default {job}-{date}-{time} */
	/* mutt */
	int mailboxes;
	double mails_per_day;
	/* mutt, churn, tmpwatch */
	char *subdir;             /* dir = NAME in the tree's top directory (mutt: default Mail, a new
				     one; churn, tmpwatch: created when missing; default the whole tree) */
	/* tmpwatch, hsm-scan */
	int age_days;             /* tmpwatch: unlink what was not read for this many days; hsm-scan: cold-days */
	double read_fraction;     /* hsm-scan */
	/* churn: the gen churn options (appends, overwrites, creates, deletes, write-size, size-dist) */
	struct tracegen_params churn;
};

struct scenario_spec {
	char *path;
	int64_t start_ns;         /* INT64_MIN: the tree's default (tracegen_start_time) */
	int days;
	struct tracegen_params tree;  /* from-dir or files, prefix, seed, ... as for gen synthetic */
	GPtrArray *jobs;          /* struct scenario_job *, file order (SF2) */
};

/* Parse PATH; SETS are "group.key=value" overrides (may be NULL); SEED >= 0 overrides [scenario] seed. */
struct scenario_spec *scenario_file_load(const char *path, char **sets, gint64 seed, GError **error);
void scenario_spec_free(struct scenario_spec *spec);

/* The first run of SCHEDULE at or after T_NS (START_NS is the timeline's first instant). */
int64_t scenario_next_run(const struct scenario_schedule *schedule, int64_t start_ns, int64_t t_ns);

#endif
