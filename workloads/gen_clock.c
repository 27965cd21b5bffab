/*
 * workloads/gen_clock.c - simulated time in generated traces.
 *
 * The trace carries time only through clock ops, so the generator keeps the
 * value the simulator's clock will have (now_ns) and turns the estimated
 * cost of the work it emits into "clock +Ns" ops, whole seconds at a time.
 * Whole seconds keep traces short and readable and still let timestamps
 * move between the phases of a scenario, which is what atime policies see
 * (relatime compares against a day; strictatime against "not equal").
 *
 * Invariants: GC1 now_ns only grows; GC2 0 <= pending_ns < 1 s after each call.
 */
#include "tracegen.h"

bool tracegen_clock_start(struct tracegen_clock *clock, struct trace_writer *w, int64_t start_ns,
			  GError **error)
{
	clock->now_ns = start_ns;
	clock->pending_ns = 0;
	return trace_writer_clock_set(w, start_ns, error);
}

bool tracegen_clock_spend(struct tracegen_clock *clock, struct trace_writer *w, int64_t ns, GError **error)
{
	clock->pending_ns += ns;
	if (clock->pending_ns < TRACE_NS_PER_SEC)
		return true;
	int64_t whole = clock->pending_ns - clock->pending_ns % TRACE_NS_PER_SEC;
	clock->pending_ns -= whole;
	clock->now_ns += whole;
	return trace_writer_clock_advance(w, whole, error);
}

bool tracegen_clock_advance_to(struct tracegen_clock *clock, struct trace_writer *w, int64_t t_ns,
			       GError **error)
{
	clock->pending_ns = 0;
	if (t_ns <= clock->now_ns)
		return true;
	int64_t step = t_ns - clock->now_ns;
	clock->now_ns = t_ns;
	return trace_writer_clock_advance(w, step, error);
}
