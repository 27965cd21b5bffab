/*
 * sim/cmd_whatif.c - `cowsim whatif delete TRACE --after MARK SNAP...`: what
 * deleting a set of snapshots together would free, as `zfs destroy -nv`
 * answers it.
 *
 * How it works
 *   The trace is replayed up to the first mark labelled MARK (replay_options
 *   stop_at_mark); at that mark's row the sink asks the model
 *   (fs_delete_estimate) what the set would free: the tree blocks and data
 *   extents the set reaches and no other subvolume does, each once. That is
 *   not the sum of the snapshots' exclusive bytes (printed beside it, from
 *   fs_subvolume_usage): blocks shared only among the set are freed too.
 *   Then it deletes them in the model and commits, and prints what that did
 *   to metadata_used and data_used, the cost of the deletion (root and
 *   extent-tree copies, the parent's directory entries) included:
 *
 *     replay ... mark MARK --> estimate (changes nothing)
 *                          --> delete SNAP... ; sync --> used before -> after
 *
 * Invariants
 *   WI1 The estimate is computed before anything is deleted and changes
 *       nothing; tests/model/test_whatif.c checks it against the deletion,
 *       block by block, and tests/sim/test_whatif.sh against `cowsim run` of
 *       the trace with the deletions appended.
 *   WI2 Exit status: 0 answered; 2 bad arguments, a malformed trace, no such
 *       mark, or a SNAP the model would not delete (the message says why).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "options.h"
#include "replay.h"

struct whatif_args {
	struct model_option_text model;
	char *after;
	char **rest;                  /* "delete" TRACE SNAP... */
};

/* What the sink found at the mark. */
struct whatif_state {
	const char *const *snapshots;
	unsigned n;
	const char *after;
	int error;                    /* a negative errno from the model, 0 */
	const char *failed_path;      /* the SNAP it is about, NULL for the set */
	bool answered;
};

static const struct cli_doc whatif_doc = {
	.command = "whatif",
	.args = "delete TRACE SNAP...",
	.summary = "Replays TRACE up to the first mark labelled --after and says what deleting the\n"
		   "snapshots SNAP... (paths in the modeled filesystem) together would free, as\n"
		   "'zfs destroy -nv' does: the tree blocks and data that they hold and no other\n"
		   "subvolume does, counted once, which is more than the sum of their exclusive bytes\n"
		   "when they share blocks among themselves. Then it deletes them in the model,\n"
		   "commits, and prints what metadata_used and data_used became.",
	.notes = "The exclusive and shared bytes per subvolume are those of 'cowsim run\n"
		 "--subvolume-csv' at the same mark (qgroup-style: reachable from one subvolume only,\n"
		 "side tables not counted). The keyed design keeps every snapshot in one tree: it\n"
		 "cannot answer (exit 2). Under --design zfs the answer is the pool's: the blocks only\n"
		 "the set's datasets reach, as 'zfs destroy -nv fs@a,fs@b' counts them.",
	.examples = "  cowsim gen seed-experiment --files 2000 --snapshots 5 -o t.trace\n"
		    "  cowsim whatif delete t.trace --after after_grep /snap1 /snap2 -m strictatime\n"
		    "  cowsim gen backup-rotation --files 2000 --days 14 -o rotation.trace\n"
		    "  cowsim whatif delete rotation.trace --after day_12 /snapshots/2012-06-05 /snapshots/2012-06-06",
	.exits = "  0  answered\n"
		 "  1  a model invariant broke (a bug in cowsim)\n"
		 "  2  bad arguments, a malformed trace, no such mark, or a SNAP the model would not\n"
		 "     delete (not a snapshot, missing, holding another subvolume); the message says which",
	.model_options = true,
};

static double mib(uint64_t bytes)
{
	return bytes / 1048576.0;
}

static void print_usage_table(struct fs *fs, const struct whatif_state *st)
{
	GArray *usage = fs_subvolume_usage(fs);
	uint64_t exclusive = 0;
	printf("  %-32s %14s %14s\n", "subvolume", "exclusive", "shared");
	for (unsigned k = 0; k < st->n; k++) {
		for (unsigned i = 0; i < usage->len; i++) {
			const struct subvolume_usage *u = &g_array_index(usage, struct subvolume_usage, i);
			if (strcmp(u->path, st->snapshots[k]))
				continue;
			printf("  %-32s %10.1f MiB %10.1f MiB\n", u->path, mib(u->exclusive_bytes), mib(u->shared_bytes));
			exclusive += u->exclusive_bytes;
		}
	}
	fs_subvolume_usage_free(usage);
	printf("sum of their exclusive bytes: %" PRIu64 " (%.1f MiB)\n", exclusive, mib(exclusive));
}

/* Deletes the set, nested subvolumes before the ones holding them. */
static int delete_all(struct fs *fs, struct whatif_state *st)
{
	g_autofree bool *done = g_new0(bool, st->n);
	for (unsigned left = st->n; left;) {
		unsigned before = left;
		for (unsigned k = 0; k < st->n; k++) {
			if (done[k])
				continue;
			int ret = fs_delete_snapshot(fs, st->snapshots[k]);
			if (ret == -ENOTEMPTY)
				continue;
			if (ret) {
				st->failed_path = st->snapshots[k];
				return ret;
			}
			done[k] = true;
			left--;
		}
		if (left == before)
			return -ENOTEMPTY;
	}
	return fs_sync(fs);
}

static bool whatif_row(void *opaque, const struct replay_row *r, GError **error)
{
	(void)error;
	struct whatif_state *st = opaque;
	if (!r->label || strcmp(r->label, st->after))
		return true;
	st->answered = true;
	struct fs_reclaim reclaim;
	if ((st->error = fs_delete_estimate(r->fs, st->snapshots, st->n, &reclaim))) {
		/* Which one: the first the model refuses alone (a snapshot
		 * holding another is refused alone, so not for ENOTEMPTY). */
		for (unsigned k = 0; k < st->n && st->error != -ENOTEMPTY && !st->failed_path; k++)
			if (fs_delete_estimate(r->fs, &st->snapshots[k], 1, &reclaim) == st->error)
				st->failed_path = st->snapshots[k];
		return true;
	}
	char when[64];
	replay_format_clock(fs_clock(r->fs), when, sizeof(when));
	printf("at mark %s (op %" PRIu64 ", simulated %s):\n", r->label, r->op_index, when);
	print_usage_table(r->fs, st);
	uint64_t total = reclaim.metadata_bytes + reclaim.data_bytes;
	printf("deleting them together would free: %" PRIu64 " bytes (%.1f MiB): %" PRIu64 " of tree blocks, %" PRIu64
	       " of data\n", total, mib(total), reclaim.metadata_bytes, reclaim.data_bytes);
	struct fs_report before, after;
	fs_report(r->fs, &before);
	if ((st->error = delete_all(r->fs, st)))
		return true;
	fs_report(r->fs, &after);
	printf("deleted in the model and committed: metadata_used %" PRIu64 " -> %" PRIu64 ", data_used %" PRIu64
	       " -> %" PRIu64 "\n", before.space.metadata_used, after.space.metadata_used, before.space.data_used,
	       after.space.data_used);
	return true;
}

static int parse_whatif_args(int argc, char **argv, struct whatif_args *a, struct fs_config *config)
{
	const GOptionEntry entries[] = {
		{ "after", 'a', 0, G_OPTION_ARG_STRING, &a->after,
		  "the mark (its label) after which the snapshots would be deleted; the first so labelled", "MARK" },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->rest, NULL, NULL },
		{ NULL },
	};
	g_autoptr(GOptionContext) context = cli_context_new(&whatif_doc);
	g_option_context_add_main_entries(context, entries, NULL);
	options_add_model_entries(context, &a->model);
	if (!cli_parse(context, &whatif_doc, &argc, &argv))
		return EXIT_BAD_INPUT;
	if (!a->rest || !a->rest[0] || strcmp(a->rest[0], "delete")) {
		fprintf(stderr, "cowsim whatif: the what-if comes first: 'delete' (see 'cowsim whatif --help')\n");
		return EXIT_BAD_INPUT;
	}
	if (!a->rest[1] || !a->rest[2]) {
		fprintf(stderr, "cowsim whatif: give a TRACE and at least one SNAP (see 'cowsim whatif --help')\n");
		return EXIT_BAD_INPUT;
	}
	if (!a->after || !*a->after) {
		fprintf(stderr, "cowsim whatif: --after MARK is required: the mark after which to delete\n");
		return EXIT_BAD_INPUT;
	}
	g_autoptr(GError) error = NULL;
	if (!options_model_config(&a->model, config, &error)) {
		fprintf(stderr, "cowsim whatif: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	return EXIT_OK;
}

static const char *model_error_text(int error)
{
	switch (error) {
	case -ENOENT: return "no such snapshot at that mark";
	case -EINVAL: return "not a snapshot or subvolume (a plain directory, or the top level)";
	case -EROFS: return "its parent is a read-only snapshot";
	case -ENOTEMPTY: return "it holds another subvolume that is not in the set";
	case -EOPNOTSUPP: return "the keyed design keeps every snapshot in one tree and cannot tell";
	case -EBUSY: return "a filesystem that has snapshots is not destroyed (zfs destroy without -r)";
	}
	return g_strerror(-error);
}

static int run_whatif(struct whatif_args *a, struct replay_options *options)
{
	const char *trace = a->rest[1];
	struct whatif_state st = { .snapshots = (const char *const *)&a->rest[2],
				   .n = g_strv_length(&a->rest[2]), .after = a->after };
	options->stop_at_mark = a->after;
	struct replay_outcome outcome;
	g_autoptr(GError) error = NULL;
	enum replay_status status = replay_run(trace, options, whatif_row, &st, &outcome, &error);
	if (status != REPLAY_DONE) {
		fprintf(stderr, "cowsim whatif: %s\n", error ? error->message : "failed");
		return status == REPLAY_CORRUPT ? EXIT_RUN_FAILED : EXIT_BAD_INPUT;
	}
	if (!st.answered) {
		fprintf(stderr, "cowsim whatif: %s: no mark labelled '%s' (--after)\n", trace, a->after);
		return EXIT_BAD_INPUT;
	}
	if (st.error) {
		g_autofree char *set = g_strjoinv(" ", &a->rest[2]);
		fprintf(stderr, "cowsim whatif: delete %s at mark %s: %s\n", st.failed_path ? st.failed_path : set,
			a->after, model_error_text(st.error));
		return EXIT_BAD_INPUT;
	}
	return EXIT_OK;
}

int cmd_whatif(int argc, char **argv)
{
	struct whatif_args args = { 0 };
	struct replay_options options = { 0 };
	int status = parse_whatif_args(argc, argv, &args, &options.fs);
	if (status == EXIT_OK)
		status = run_whatif(&args, &options);
	options_model_text_clear(&args.model);
	g_free(args.after);
	g_strfreev(args.rest);
	return status;
}
