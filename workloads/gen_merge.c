/*
 * workloads/gen_merge.c - `cowsim gen merge A B...`: traces on one timeline.
 *
 * How it works: each input is read by its own trace_reader, one op ahead.
 * An input's clock ops only move that input's clock (absolute, from its
 * "clock @T" and "clock +D" ops); every other op happens at that clock.  The
 * merge repeatedly writes the waiting op with the earliest clock (ties: the
 * input named first), moving the merged clock forward to it first: a
 * "clock @T" the first time, "clock +D" after.  So the merged trace is the
 * inputs' ops in time order, each input's own order kept.
 *
 *   A: clock @100  mkdir /a  clock +5  mark x
 *   B: clock @102  mkdir /b
 *   => clock @100  mkdir /a  clock +2s  mkdir /b  clock +3s  mark A:x
 *
 * Marks are kept distinct: each label becomes STEM:LABEL, STEM the input's
 * file name without its directory and ".trace" ("STEM-N" when two inputs
 * share a stem, N the input's place on the command line).
 *
 * Invariants: M1 the merged clock never goes back (an op whose input's clock
 * is behind it happens at the merged clock: only a later "clock @" in an
 * input can go back, and the merge cannot undo time); M2 each input's ops
 * keep their order; M3 the inputs are read as streams, one op each in memory.
 */
#include "tracegen_private.h"

#include <string.h>

struct merge_input {
	trace_reader *reader;
	char *stem;
	int64_t now_ns;          /* the input's clock; INT64_MIN before its first clock op */
	struct trace_op op;      /* the waiting op (valid until the next read of this reader) */
	bool waiting;
};

/* Read INPUT's next non-clock op, moving its clock over the clock ops on the way. */
static bool advance(struct merge_input *in, GError **error)
{
	int got;
	in->waiting = false;
	while ((got = trace_reader_next(in->reader, &in->op, error)) == 1) {
		if (in->op.kind != TRACE_CLOCK) {
			in->waiting = true;
			return true;
		}
		if (!in->op.clock_relative)
			in->now_ns = in->op.clock_ns;
		else if (in->now_ns != INT64_MIN)
			in->now_ns += in->op.clock_ns;
	}
	return got == 0;
}

static char *stem_of(const char *path)
{
	g_autofree char *base = g_path_get_basename(path);
	if (g_str_has_suffix(base, ".trace") && strlen(base) > strlen(".trace"))
		base[strlen(base) - strlen(".trace")] = '\0';
	return g_strdup(base);
}

static void name_inputs(struct merge_input *inputs, char **paths, guint n)
{
	g_autofree char **stems = g_new0(char *, n);
	for (guint i = 0; i < n; i++)
		stems[i] = stem_of(paths[i]);
	for (guint i = 0; i < n; i++) {
		bool shared = false;
		for (guint j = 0; j < n; j++)
			shared |= j != i && !strcmp(stems[j], stems[i]);
		inputs[i].stem = shared ? g_strdup_printf("%s-%u", stems[i], i + 1) : g_strdup(stems[i]);
	}
	for (guint i = 0; i < n; i++)
		g_free(stems[i]);
}

/* The input whose waiting op comes first (an input with no clock yet comes at once). */
static struct merge_input *earliest(struct merge_input *inputs, guint n)
{
	struct merge_input *best = NULL;
	for (guint i = 0; i < n; i++)
		if (inputs[i].waiting && (!best || inputs[i].now_ns < best->now_ns))
			best = &inputs[i];
	return best;
}

static bool write_op(struct trace_writer *w, struct merge_input *in, int64_t *now_ns, bool *clock_set,
		     GError **error)
{
	if (in->now_ns != INT64_MIN && (!*clock_set || in->now_ns > *now_ns)) {
		bool ok = *clock_set ? trace_writer_clock_advance(w, in->now_ns - *now_ns, error)
				     : trace_writer_clock_set(w, in->now_ns, error);
		if (!ok)
			return false;
		*now_ns = in->now_ns;
		*clock_set = true;
	}
	if (in->op.kind != TRACE_MARK)
		return trace_writer_op(w, &in->op, error);
	g_autofree char *label = g_strdup_printf("%s:%s", in->stem, in->op.path2);
	return trace_writer_mark(w, label, error);
}

bool tracegen_run_merge(const struct tracegen_params *p, struct trace_writer *w, GError **error)
{
	guint n = p->remaining ? g_strv_length(p->remaining) : 0;
	struct merge_input *inputs = g_new0(struct merge_input, n);
	int64_t now_ns = 0;
	bool clock_set = false, ok = true;

	name_inputs(inputs, p->remaining, n);
	for (guint i = 0; ok && i < n; i++) {
		inputs[i].now_ns = INT64_MIN;
		inputs[i].reader = trace_reader_open(p->remaining[i], error);
		ok = inputs[i].reader && trace_writer_comment(w, error, "input %u: %s (marks %s:LABEL)", i + 1,
							      p->remaining[i], inputs[i].stem) &&
		     advance(&inputs[i], error);
	}
	struct merge_input *next;
	while (ok && (next = earliest(inputs, n)))
		ok = write_op(w, next, &now_ns, &clock_set, error) && advance(next, error);

	for (guint i = 0; i < n; i++) {
		if (inputs[i].reader)
			trace_reader_free(inputs[i].reader);
		g_free(inputs[i].stem);
	}
	g_free(inputs);
	return ok;
}
