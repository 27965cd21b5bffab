/*
 * workloads/trace_pipe.c - the read-ahead thread and its batches (contract:
 * trace_pipe.h, TP1-TP5).
 *
 * The batches go round two lists under one mutex:
 *
 *        +-- free[] <------------------------ consumer: a batch used up ---+
 *        |                                                                 |
 *        v                                                                 |
 *   producer: fills one batch ---> full[] (a FIFO ring) ---> consumer: cur, at
 *
 * A batch:
 *
 *   +-------+-----+------+------+--------+----------------------------+---------------------+
 *   | count | end | error| line | offset | ops[0 .. count)            | strings[0 .. used)  |
 *   +-------+-----+------+------+--------+----------------------------+---------------------+
 *                                          op.path, op.path2 point into strings (TP3)
 *
 * The producer closes a batch when its ops are full, when the next op's
 * strings would not fit (that op, already read, starts the next batch: the
 * reader keeps its strings until the next trace_reader_next()), or at the
 * reader's end: then end is 0, or -1 with the reader's error, and the
 * producer stops (TP1). TP_STRING_BYTES holds any one op's strings
 * (TRACE_LINE_MAX + 2), so every batch but the last holds at least one op.
 */
#include "trace_pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Ops a batch holds: 512 ops of 112 bytes and their paths are ~90 KiB, so a
 * batch is used up from the cache of the core that reads it, and a grep's
 * half a million reads are ~1 000 hand-overs (one lock each way; TP6 wakes
 * the producer for every fourth). */
#define TP_BATCH_OPS 512
#define TP_STRING_BYTES (64 * 1024)
G_STATIC_ASSERT(TP_STRING_BYTES >= TRACE_LINE_MAX + 2);
/* Batches in all: one being filled, one being used, six queued. */
#define TP_BATCHES 8
/* TP6: the producer, run ahead and waiting for a free batch, is woken only
 * when this many are free: a wake-up costs the consumer a futex call (and
 * the producer a trip through the scheduler), so it fills a run of batches
 * per wake-up rather than one. The seed run (issue 20, `perf stat -r 10`):
 * ~600 -> ~130 context switches, 8 % less CPU time. */
#define TP_REFILL 4
G_STATIC_ASSERT(TP_REFILL < TP_BATCHES);
/* TP5: how often a caller waiting for a batch looks at its interrupt flag. */
#define TP_WAIT_MS 50

G_DEFINE_QUARK(cowsim-trace-pipe-error-quark, trace_pipe_error)

struct tp_batch {
	unsigned count;                   /* ops[0 .. count) are filled */
	int end;                          /* 1: more batches follow; else the reader's 0 or -1 */
	GError *error;                    /* end -1: the reader's error */
	uint64_t line;                    /* the reader's line when the batch was closed */
	uint64_t offset;                  /* the reader's offset then (want_offset) */
	size_t used;                      /* strings[0 .. used) are taken */
	struct trace_op ops[TP_BATCH_OPS];
	char strings[TP_STRING_BYTES];
};

struct trace_pipe {
	struct trace_reader *reader;      /* the producer's (TP3); the caller's without read-ahead */
	char *name;
	int64_t size;
	bool want_offset;
	const volatile int *interrupted;

	/* The consumer's side. */
	struct tp_batch *cur;             /* the batch ops are taken from, NULL before the first */
	unsigned at;                      /* cur->ops[at] is the next op */
	int end;                          /* 1 until the end was returned; then 0 or -1 for ever */
	GError *end_error;                /* end -1: the error to return again */
	uint64_t end_line;
	struct trace_op direct_op;        /* without read-ahead: the op just read */

	/* Shared: under lock (TP2). pthread's mutex and condition variables rather than GLib's: GLib's
	 * are futexes inside an uninstrumented libglib, which ThreadSanitizer cannot see, so it would
	 * call every hand-over a race; pthread's it intercepts. */
	pthread_mutex_t lock;
	pthread_cond_t filled, freed;     /* filled waits on CLOCK_MONOTONIC (TP5) */
	struct tp_batch *full[TP_BATCHES]; /* a ring: full[full_head .. + full_count) */
	unsigned full_head, full_count;
	struct tp_batch *free[TP_BATCHES];
	unsigned free_count;
	bool stop;

	GThread *thread;                  /* NULL without read-ahead */
	int wake[2];                      /* TP4: a byte in wake[1] stops a blocked read; -1 if none */
	struct tp_batch *batches[TP_BATCHES]; /* all of them, to free */
};

/* --- the producer's side ---------------------------------------------------------- */

/* A free batch (TP2), or NULL once the pipe is stopping. */
static struct tp_batch *take_free(struct trace_pipe *p)
{
	pthread_mutex_lock(&p->lock);
	while (!p->free_count && !p->stop)
		pthread_cond_wait(&p->freed, &p->lock);
	struct tp_batch *b = p->stop ? NULL : p->free[--p->free_count];
	pthread_mutex_unlock(&p->lock);
	return b;
}

static void put_full(struct trace_pipe *p, struct tp_batch *b)
{
	pthread_mutex_lock(&p->lock);
	p->full[(p->full_head + p->full_count++) % TP_BATCHES] = b;
	pthread_cond_signal(&p->filled);
	pthread_mutex_unlock(&p->lock);
}

/* OP (strings in the reader's buffer) into B with its strings copied; false when they do not fit. */
static bool copy_op(struct tp_batch *b, const struct trace_op *op)
{
	size_t n1 = op->path ? strlen(op->path) + 1 : 0, n2 = op->path2 ? strlen(op->path2) + 1 : 0;
	if (n1 + n2 > TP_STRING_BYTES - b->used)
		return false;
	struct trace_op *to = &b->ops[b->count++];
	*to = *op;
	if (n1) {
		to->path = memcpy(b->strings + b->used, op->path, n1);
		b->used += n1;
	}
	if (n2) {
		to->path2 = memcpy(b->strings + b->used, op->path2, n2);
		b->used += n2;
	}
	return true;
}

/* Fill B from the reader. *OP, when *PENDING, is an op read that did not fit the batch before. */
static void fill(struct trace_pipe *p, struct tp_batch *b, struct trace_op *op, bool *pending)
{
	b->count = 0;
	b->used = 0;
	b->end = 1;
	for (;;) {
		if (!*pending) {
			int got = trace_reader_next(p->reader, op, &b->error);
			if (got <= 0) {
				b->end = got;
				break;
			}
			*pending = true;
		}
		if (b->count == TP_BATCH_OPS || !copy_op(b, op))
			break;
		*pending = false;
	}
	b->line = trace_reader_line(p->reader);
	b->offset = p->want_offset ? trace_reader_offset(p->reader) : 0;
}

static gpointer produce(gpointer data)
{
	struct trace_pipe *p = data;
	struct trace_op op;
	bool pending = false;
	struct tp_batch *b;
	while ((b = take_free(p))) {
		fill(p, b, &op, &pending);
		bool last = b->end != 1;
		put_full(p, b);
		if (last)
			break;
	}
	return NULL;
}

/* --- the consumer's side ---------------------------------------------------------- */

/* The next full batch in order (TP1), or NULL when *interrupted was set while waiting (TP5). */
static struct tp_batch *take_full(struct trace_pipe *p)
{
	pthread_mutex_lock(&p->lock);
	while (!p->full_count) {
		if (!p->interrupted) {
			pthread_cond_wait(&p->filled, &p->lock);
			continue;
		}
		if (*p->interrupted) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += TP_WAIT_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->filled, &p->lock, &until);
	}
	struct tp_batch *b = p->full[p->full_head];
	p->full_head = (p->full_head + 1) % TP_BATCHES;
	p->full_count--;
	pthread_mutex_unlock(&p->lock);
	return b;
}

static void give_back(struct trace_pipe *p, struct tp_batch *b)
{
	pthread_mutex_lock(&p->lock);
	p->free[p->free_count++] = b;
	if (p->free_count == TP_REFILL) /* TP6 */
		pthread_cond_signal(&p->freed);
	pthread_mutex_unlock(&p->lock);
}

/* The end, once and again (trace_pipe_next's "after 0 or -1"). */
static int ended(struct trace_pipe *p, GError **error)
{
	if (p->end < 0)
		g_propagate_error(error, g_error_copy(p->end_error));
	return p->end;
}

static int end_with(struct trace_pipe *p, int end, GError *end_error, uint64_t line, GError **error)
{
	p->end = end;
	p->end_error = end_error;
	p->end_line = line;
	return ended(p, error);
}

/* Without read-ahead: the reader on the caller's thread. */
static int next_direct(struct trace_pipe *p, const struct trace_op **op, GError **error)
{
	GError *reader_error = NULL;
	int got = trace_reader_next(p->reader, &p->direct_op, &reader_error);
	if (got == 1) {
		*op = &p->direct_op;
		return 1;
	}
	return end_with(p, got, reader_error, trace_reader_line(p->reader), error);
}

/* trace_pipe_next() when the batch in hand is used up: hand it back, take the next (TP1, TP2). */
static G_GNUC_NO_INLINE int next_batch(struct trace_pipe *p, const struct trace_op **op, GError **error)
{
	if (p->end != 1)
		return ended(p, error);
	if (!p->thread)
		return next_direct(p, op, error);
	struct tp_batch *b = p->cur;
	if (b && b->end != 1)
		return end_with(p, b->end, g_steal_pointer(&b->error), b->line, error);
	if (b)
		give_back(p, b);
	p->cur = NULL;
	if (!(b = take_full(p)))
		return end_with(p, -1,
				g_error_new(TRACE_PIPE_ERROR, TRACE_PIPE_ERROR_INTERRUPTED,
					    "%s: interrupted while waiting for the trace", p->name),
				trace_pipe_line(p), error);
	p->cur = b;
	p->at = 0;
	return trace_pipe_next(p, op, error);
}

int trace_pipe_next(struct trace_pipe *p, const struct trace_op **op, GError **error)
{
	struct tp_batch *b = p->cur;
	if (G_LIKELY(b && p->at < b->count)) {
		*op = &b->ops[p->at++];
		return 1;
	}
	return next_batch(p, op, error);
}

/* --- start, questions, stop ------------------------------------------------------- */

/* TP5: the producer with every signal blocked (it inherits the mask of the thread that starts it). */
static GThread *start_producer(struct trace_pipe *p)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	GThread *thread = g_thread_new("trace-pipe", produce, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return thread;
}

/* TP4: a pipe whose read end the reader polls, when its stream can block (a pipe, a terminal). */
static void watch_for_stop(struct trace_pipe *p)
{
	if (!trace_reader_may_block(p->reader) || pipe2(p->wake, O_CLOEXEC) != 0) {
		p->wake[0] = p->wake[1] = -1;
		return;
	}
	if (!trace_reader_watch_cancel(p->reader, p->wake[0])) {
		close(p->wake[0]);
		close(p->wake[1]);
		p->wake[0] = p->wake[1] = -1;
	}
}

struct trace_pipe *trace_pipe_start(struct trace_reader *reader, bool read_ahead, const volatile int *interrupted,
				    bool want_offset)
{
	struct trace_pipe *p = g_new0(struct trace_pipe, 1);
	p->reader = reader;
	p->name = g_strdup(trace_reader_name(reader));
	p->size = trace_reader_size(reader);
	p->want_offset = want_offset;
	p->interrupted = interrupted;
	p->end = 1;
	p->wake[0] = p->wake[1] = -1;
	if (!read_ahead)
		return p;
	pthread_condattr_t monotonic;
	pthread_condattr_init(&monotonic);
	pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->filled, &monotonic);
	pthread_cond_init(&p->freed, NULL);
	pthread_condattr_destroy(&monotonic);
	for (unsigned i = 0; i < TP_BATCHES; i++)
		p->free[p->free_count++] = p->batches[i] = g_new(struct tp_batch, 1);
	for (unsigned i = 0; i < TP_BATCHES; i++)
		p->batches[i]->error = NULL;
	watch_for_stop(p);
	p->thread = start_producer(p);
	return p;
}

uint64_t trace_pipe_line(const struct trace_pipe *p)
{
	if (p->end != 1)
		return p->end_line;
	if (!p->thread)
		return trace_reader_line(p->reader);
	return p->cur && p->at ? p->cur->ops[p->at - 1].line : 0;
}

bool trace_pipe_interrupted(const struct trace_pipe *p)
{
	return p->end < 0 && g_error_matches(p->end_error, TRACE_PIPE_ERROR, TRACE_PIPE_ERROR_INTERRUPTED);
}

const char *trace_pipe_name(const struct trace_pipe *p)
{
	return p->name;
}

uint64_t trace_pipe_offset(const struct trace_pipe *p)
{
	if (!p->thread)
		return p->want_offset ? trace_reader_offset(p->reader) : 0;
	return p->cur ? p->cur->offset : 0;
}

int64_t trace_pipe_size(const struct trace_pipe *p)
{
	return p->size;
}

/* TP4: stop the producer wherever it is and join it. */
static void stop_producer(struct trace_pipe *p)
{
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->freed);
	pthread_mutex_unlock(&p->lock);
	if (p->wake[1] >= 0) {
		ssize_t n;
		do
			n = write(p->wake[1], "", 1);
		while (n < 0 && errno == EINTR);
	}
	g_thread_join(p->thread);
}

void trace_pipe_free(struct trace_pipe *p)
{
	if (!p)
		return;
	if (p->thread) {
		stop_producer(p);
		for (unsigned i = 0; i < TP_BATCHES; i++) {
			g_clear_error(&p->batches[i]->error);
			g_free(p->batches[i]);
		}
		pthread_cond_destroy(&p->filled);
		pthread_cond_destroy(&p->freed);
		pthread_mutex_destroy(&p->lock);
	}
	for (int i = 0; i < 2; i++)
		if (p->wake[i] >= 0)
			close(p->wake[i]);
	g_clear_error(&p->end_error);
	trace_reader_free(p->reader);
	g_free(p->name);
	g_free(p);
}
