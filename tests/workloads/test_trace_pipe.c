/*
 * tests/workloads/test_trace_pipe.c - the read-ahead pipe (workloads/trace_pipe.h)
 * hands over exactly what the reader reads: the same ops in the same order
 * across many batches (TP1), a parse error only after every op before it,
 * the end of an empty trace, a trace on a pipe; and it stops cleanly
 * wherever its producer waits (TP4, TP5).
 */
#include "helpers.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace_pipe.h"

/* --- traces ------------------------------------------------------------------------ */

/* The text of a trace of N ops that crosses many batch boundaries: runs of reads, stats and
 * readdirs as a grep writes them, creates with options, marks, names that must be quoted (blanks,
 * quotes, backslashes, raw bytes) and now and then a path of ~4 000 bytes, so that batches close
 * on their strings as well as on their op count. */
static char *varied_trace(int n)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_writer) writer = trace_writer_new(out);
	assert_true(trace_writer_begin(writer, &error));
	assert_true(trace_writer_clock_set(writer, 1354356000 * TRACE_NS_PER_SEC, &error));
	GString *path = g_string_new(NULL);
	for (int i = 0; i < n; i++) {
		static const enum trace_op_kind kinds[] = { TRACE_READ, TRACE_STAT, TRACE_READDIR, TRACE_CREATE };
		struct trace_op op;
		trace_op_init(&op, kinds[i / 50 % 4]);
		g_string_printf(path, "/tree/d%d/f%d", i % 13, i);
		if (i % 7 == 3)
			g_string_append(path, " with \"quotes\" \\ and \x01 bytes");
		if (i % 997 == 5) /* a long path: 19 components of 200 bytes */
			for (int k = 0; k < 19; k++)
				g_string_append_printf(path, "/%0200d", k);
		op.path = path->str;
		if (op.kind == TRACE_CREATE) {
			op.size = (uint64_t)i * 4096;
			op.times_given = TRACE_TIME_MTIME;
			op.mtime_ns = 1354356000 * TRACE_NS_PER_SEC + i;
		}
		assert_true(trace_writer_op(writer, &op, &error));
		if (i % 1000 == 999) {
			char label[32];
			snprintf(label, sizeof(label), "after %d", i);
			assert_true(trace_writer_mark(writer, label, &error));
		}
	}
	g_string_free(path, true);
	assert_true(trace_writer_finish(writer, &error));
	fclose(out);
	return text;
}

static struct trace_pipe *pipe_over(const char *text, bool read_ahead, const volatile int *interrupted)
{
	g_autoptr(GError) error = NULL;
	struct trace_reader *reader = helper_reader(text, &error);
	if (!reader)
		fail_msg("%s", error->message);
	return trace_pipe_start(reader, read_ahead, interrupted, true);
}

/* TP1: the pipe's ops are the reader's, one for one, then the reader's end: the same status, the
 * same message, the same line. */
static void assert_pipe_reads_as_the_reader(const char *text, bool read_ahead, uint64_t *ops)
{
	g_autoptr(GError) reader_error = NULL, pipe_error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(text, &reader_error);
	g_autoptr(trace_pipe) pipe = pipe_over(text, read_ahead, NULL);
	assert_non_null(reader);
	struct trace_op expected;
	const struct trace_op *got;
	int want, have;
	*ops = 0;
	do {
		want = trace_reader_next(reader, &expected, &reader_error);
		have = trace_pipe_next(pipe, &got, &pipe_error);
		assert_int_equal(have, want);
		if (want == 1) {
			if (!trace_op_equal(got, &expected) || got->line != expected.line)
				fail_msg("op %" G_GUINT64_FORMAT " (line %" G_GUINT64_FORMAT ") differs", *ops, expected.line);
			assert_int_equal(trace_pipe_line(pipe), expected.line);
			++*ops;
		}
	} while (want == 1);
	if (want < 0)
		assert_string_equal(pipe_error->message, reader_error->message);
	assert_int_equal(trace_pipe_line(pipe), trace_reader_line(reader));
	assert_false(trace_pipe_interrupted(pipe));
	/* and the end again, as the reader gives it again */
	g_clear_error(&pipe_error);
	assert_int_equal(trace_pipe_next(pipe, &got, &pipe_error), want);
	assert_true(want == 0 ? pipe_error == NULL : pipe_error != NULL);
}

/* --- the same ops in the same order ------------------------------------------------ */

static void test_pipe_hands_over_the_readers_ops_in_order_across_many_batches(void **state)
{
	g_autofree char *text = varied_trace(40000);
	uint64_t ops;
	assert_pipe_reads_as_the_reader(text, true, &ops);
	assert_int_equal(ops, 40000 + 40 + 1); /* the ops, the marks, the clock */
}

static void test_pipe_without_read_ahead_hands_over_the_same_ops(void **state)
{
	g_autofree char *text = varied_trace(3000);
	uint64_t ops;
	assert_pipe_reads_as_the_reader(text, false, &ops);
	assert_int_equal(ops, 3000 + 3 + 1);
}

static void test_pipe_of_an_empty_trace_ends_at_once(void **state)
{
	uint64_t ops;
	assert_pipe_reads_as_the_reader("cowsim-trace 1\n", true, &ops);
	assert_int_equal(ops, 0);
	assert_pipe_reads_as_the_reader("cowsim-trace 1\n# only a comment\n\n", true, &ops);
	assert_int_equal(ops, 0);
}

/* --- errors and stops ---------------------------------------------------------------- */

/* A parse error in the middle of a batch, at the first op of one, and on the last line: the pipe
 * hands over every op before it, then -1 with the reader's own message and line. */
static void test_pipe_reports_a_parse_error_after_every_op_before_it(void **state)
{
	static const int bad_at[] = { 0, 1, 511, 512, 513, 1500, 2999 };
	for (size_t k = 0; k < G_N_ELEMENTS(bad_at); k++) {
		g_autofree char *good = varied_trace(3000);
		/* cut the trace after the op bad_at[k] + 2 lines (header, clock) and add a bad line */
		char *cut = good;
		for (int line = 0; line < bad_at[k] + 2 && cut; line++)
			cut = strchr(cut, '\n') + 1;
		*cut = '\0';
		g_autofree char *text = g_strconcat(good, "read /tree/x size=12\nread /after/the/error\n", NULL);
		uint64_t ops;
		assert_pipe_reads_as_the_reader(text, true, &ops);
		assert_true(ops >= (uint64_t)bad_at[k] + 1);
	}
}

/* TP4: a pipe freed early, wherever its producer is (waiting for a free batch, filling one, not
 * started yet), joins it and frees everything: ASan and TSan runs of this test see no leak and
 * no race. */
static void test_pipe_freed_early_joins_its_producer(void **state)
{
	g_autofree char *text = varied_trace(20000);
	for (int round = 0; round < 40; round++) {
		struct trace_pipe *pipe = pipe_over(text, true, NULL);
		const struct trace_op *op;
		g_autoptr(GError) error = NULL;
		for (int i = 0; i < round * 97; i++)
			assert_int_equal(trace_pipe_next(pipe, &op, &error), 1);
		if (round % 5 == 4)
			g_usleep(2000); /* the producer fills every batch and waits */
		trace_pipe_free(pipe);
	}
}

/* --- a trace on a pipe -------------------------------------------------------------- */

struct feeder {
	int fd;                 /* the pipe's write end */
	const char *text;
	bool stay_open;         /* after the text, keep the pipe open (a writer alive but silent)
				 * until release_feeder() */
};

static gpointer feed(gpointer data)
{
	struct feeder *f = data;
	size_t len = strlen(f->text);
	for (size_t done = 0; done < len;) {
		ssize_t n = write(f->fd, f->text + done, len - done);
		if (n <= 0)
			break; /* the reader is gone (SIGPIPE is ignored) */
		done += (size_t)n;
	}
	if (!f->stay_open)
		close(f->fd);
	return NULL;
}

/* A reader opened on the read end of a pipe (as `cowsim run -` on `cowsim gen ... |`) that a
 * thread feeds with TEXT; the header is read by the time it returns. */
static struct trace_reader *reader_on_a_pipe(struct feeder *f, GThread **thread)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	f->fd = fds[1];
	*thread = g_thread_new("feeder", feed, f);
	g_autofree char *path = g_strdup_printf("/dev/fd/%d", fds[0]);
	g_autoptr(GError) error = NULL;
	struct trace_reader *reader = trace_reader_open(path, &error);
	if (!reader)
		fail_msg("%s", error->message);
	close(fds[0]); /* the reader opened its own */
	assert_true(trace_reader_may_block(reader)); /* so the pipe can wake it (TR8, TR9) */
	return reader;
}

static void release_feeder(struct feeder *f, GThread *thread)
{
	g_thread_join(thread);
	if (f->stay_open)
		close(f->fd);
}

static void test_pipe_reads_a_trace_from_a_pipe(void **state)
{
	g_autofree char *text = varied_trace(20000);
	struct feeder f = { .text = text };
	GThread *thread;
	g_autoptr(trace_pipe) pipe = trace_pipe_start(reader_on_a_pipe(&f, &thread), true, NULL, false);
	g_autoptr(trace_reader) reader = helper_reader(text, NULL);
	struct trace_op expected;
	const struct trace_op *got;
	g_autoptr(GError) error = NULL;
	uint64_t ops = 0;
	while (trace_reader_next(reader, &expected, &error) == 1) {
		assert_int_equal(trace_pipe_next(pipe, &got, &error), 1);
		assert_true(trace_op_equal(got, &expected));
		ops++;
	}
	assert_int_equal(trace_pipe_next(pipe, &got, &error), 0);
	assert_int_equal(ops, 20000 + 20 + 1);
	assert_int_equal(trace_pipe_size(pipe), -1);
	release_feeder(&f, thread);
}

/* A trace of whole lines a little longer than the reader's first chunk (256 KiB, read with the
 * header by trace_reader_open): the producer reads the rest, then waits in read() for more. */
static char *trace_past_the_first_chunk(void)
{
	char *text = varied_trace(20000);
	assert_true(strlen(text) > 330 * 1024);
	strchr(text + 320 * 1024, '\n')[1] = '\0';
	return text;
}

/* The flag a signal handler sets, as cowsim run's does; the signal comes to the thread that waits,
 * from a thread that sleeps first (the producer blocks every signal: TP5). */
static volatile int interrupted;

static void on_signal(int signo)
{
	interrupted = signo;
}

static gpointer send_signal_later(gpointer target)
{
	g_usleep(300 * 1000);
	pthread_kill(*(pthread_t *)target, SIGUSR1);
	return NULL;
}

/* TP5, TP4: a signal's flag reaches a caller that waits for ops a silent writer (alive, not
 * writing) never sends: every op written comes first, then -1 with an "interrupted" error (not the
 * reader's); then freeing the pipe wakes the producer blocked in read() and joins it at once (no
 * hang: the test's timeout would show one). */
static void test_pipe_waiting_on_a_silent_pipe_stops_on_interrupt_and_frees_at_once(void **state)
{
	g_autofree char *text = trace_past_the_first_chunk();
	g_autoptr(trace_reader) all = helper_reader(text, NULL);
	struct trace_op op_read;
	uint64_t written = 0;
	while (trace_reader_next(all, &op_read, NULL) == 1)
		written++;

	struct feeder f = { .text = text, .stay_open = true };
	GThread *thread;
	interrupted = 0;
	struct sigaction action = { .sa_handler = on_signal };
	sigaction(SIGUSR1, &action, NULL);
	pthread_t self = pthread_self();
	GThread *alarm_thread = g_thread_new("alarm", send_signal_later, &self);
	struct trace_pipe *pipe = trace_pipe_start(reader_on_a_pipe(&f, &thread), true, &interrupted, false);
	const struct trace_op *op;
	g_autoptr(GError) error = NULL;
	uint64_t ops = 0;
	int got;
	while ((got = trace_pipe_next(pipe, &op, &error)) == 1)
		ops++;
	g_thread_join(alarm_thread);
	assert_int_equal(got, -1);
	assert_true(trace_pipe_interrupted(pipe));
	assert_true(g_error_matches(error, TRACE_PIPE_ERROR, TRACE_PIPE_ERROR_INTERRUPTED));
	/* the ops of the first chunk; the rest wait in the reader until a chunk is full (or the end) */
	assert_true(ops > 1000 && ops < written);
	gint64 before = g_get_monotonic_time();
	trace_pipe_free(pipe);
	assert_true(g_get_monotonic_time() - before < G_TIME_SPAN_SECOND / 2);
	release_feeder(&f, thread);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* a feeder that outlives its reader gets EPIPE, not the signal */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipe_hands_over_the_readers_ops_in_order_across_many_batches),
		cmocka_unit_test(test_pipe_without_read_ahead_hands_over_the_same_ops),
		cmocka_unit_test(test_pipe_of_an_empty_trace_ends_at_once),
		cmocka_unit_test(test_pipe_reports_a_parse_error_after_every_op_before_it),
		cmocka_unit_test(test_pipe_freed_early_joins_its_producer),
		cmocka_unit_test(test_pipe_reads_a_trace_from_a_pipe),
		cmocka_unit_test(test_pipe_waiting_on_a_silent_pipe_stops_on_interrupt_and_frees_at_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
