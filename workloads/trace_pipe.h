/*
 * workloads/trace_pipe.h - a trace read ahead on a second thread.
 *
 * Reading and parsing a trace does not depend on what the ops do, so a
 * second thread can do it while the caller applies the ops it already has:
 *
 *   producer thread                                  the caller (consumer)
 *   trace_reader_next() --op--> batch being filled
 *                               |  full or the end
 *                               v
 *                         [ full queue ] ---------> trace_pipe_next(): one op
 *                         [ free list  ] <--------- a batch used up
 *
 * A batch holds up to a few hundred ops with their strings copied into it;
 * a fixed number of batches go round (TP_BATCHES in trace_pipe.c), so the
 * steady state allocates nothing and the producer runs at most that many
 * batches ahead. Without read-ahead (trace_pipe_start(..., false)) there is
 * no thread: trace_pipe_next() calls trace_reader_next() itself, so the
 * caller has one loop for both.
 *
 * The contract:
 *   TP1 ordering: trace_pipe_next() returns the reader's ops, each once, in
 *       the reader's order, then what the reader returned at its end: 0, or
 *       -1 with the reader's own error (the same message, FILE:LINE:COLUMN:
 *       field ...), only once every op before it was returned;
 *   TP2 ownership: a batch belongs either to the producer (being filled or
 *       free) or to the consumer (queued or being used), never both; the
 *       queue's mutex hands it over, so neither side ever touches a batch
 *       the other holds;
 *   TP3 the op trace_pipe_next() returns, and the strings it points to, stay
 *       valid until the next trace_pipe_next() or trace_pipe_free(); the
 *       caller may read them only (they sit in the batch, TP2); the reader
 *       itself is the producer's until trace_pipe_free(): the caller asks the
 *       pipe (name, line, offset, size), never the reader;
 *   TP4 a stop travels back by trace_pipe_free(): it raises the stop flag,
 *       wakes a producer waiting for a free batch and one blocked reading a
 *       pipe or a terminal (trace_reader_watch_cancel), joins it and frees
 *       every batch and the reader; it may be called at any point, the trace
 *       read or not;
 *   TP5 an interrupt (the flag given to trace_pipe_start, set by a signal
 *       handler) reaches a caller waiting for a batch within TP_WAIT_MS: it
 *       then gets -1 with TRACE_PIPE_ERROR_INTERRUPTED; signals are blocked
 *       on the producer thread, so they keep going to the caller's thread
 *       as they did without the pipe;
 *   TP6 wake-ups come in runs: a producer waiting for a free batch is woken
 *       when TP_REFILL of them are free (or at a stop, TP4), not at each
 *       one; TP_REFILL < TP_BATCHES, so a consumer frees that many before it
 *       can run out of full batches, and no wake-up is lost.
 */
#ifndef COWSIM_WORKLOADS_TRACE_PIPE_H
#define COWSIM_WORKLOADS_TRACE_PIPE_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "trace.h"

#define TRACE_PIPE_ERROR (trace_pipe_error_quark())
GQuark trace_pipe_error_quark(void);

enum trace_pipe_error_code {
	TRACE_PIPE_ERROR_INTERRUPTED, /* TP5: *interrupted was set while waiting for ops */
};

struct trace_pipe;

/* A pipe over READER (opened, its header read), which it owns from now on
 * (TP3). With READ_AHEAD a producer thread reads ahead; without, the pipe
 * reads on the caller's thread. INTERRUPTED (may be NULL) is polled while
 * waiting (TP5). WANT_OFFSET: trace_pipe_offset() is asked (progress), so
 * the producer notes the reader's offset at each batch. */
struct trace_pipe *trace_pipe_start(struct trace_reader *reader, bool read_ahead,
				    const volatile int *interrupted, bool want_offset);

/* The next op in *OP (TP1, TP3): 1 with an op, 0 at the end of the trace, -1
 * with *error set; after 0 or -1 every call returns the same again. */
int trace_pipe_next(struct trace_pipe *pipe, const struct trace_op **op, GError **error);

/* After trace_pipe_next() returned -1 or 0: the reader's line there (as
 * trace_reader_line()). Before: the line of the last op returned. */
uint64_t trace_pipe_line(const struct trace_pipe *pipe);
/* True when trace_pipe_next() returned -1 for *interrupted (TP5), not for the reader. */
bool trace_pipe_interrupted(const struct trace_pipe *pipe);
/* The reader's name ("<stdin>" for "-"). */
const char *trace_pipe_name(const struct trace_pipe *pipe);
/* For progress: the bytes read when the last op returned was parsed (as
 * trace_reader_offset(); 0 unless want_offset), and the stream's size (as
 * trace_reader_size()). */
uint64_t trace_pipe_offset(const struct trace_pipe *pipe);
int64_t trace_pipe_size(const struct trace_pipe *pipe);

/* TP4: stop the producer, join it, free the batches and the reader. */
void trace_pipe_free(struct trace_pipe *pipe);
typedef struct trace_pipe trace_pipe;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(trace_pipe, trace_pipe_free)

#endif
