/*
 * tests/workloads/test_tracegen.c - the generators: determinism, cp -a
 * fidelity on a real temporary tree, the seed experiment's phases, walkers,
 * and the decisions tmpwatch makes from the atimes it assigned.
 */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "scenario_file.h"
#include "tracegen.h"

/* --- fixtures ----------------------------------------------------------------- */

struct tree_fixture {
	char *dir;
};

static void write_file(const char *path, const char *content, time_t mtime)
{
	g_autoptr(GError) error = NULL;
	assert_true(g_file_set_contents(path, content, -1, &error));
	struct timespec times[2] = { { mtime + 100, 0 }, { mtime, 500 } };
	assert_int_equal(utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW), 0);
}

/* DIR/a (hard-linked as DIR/h), DIR/l -> a, DIR/sub/b, DIR/fifo. */
static int setup_tree(void **state)
{
	struct tree_fixture *f = g_new0(struct tree_fixture, 1);
	g_autoptr(GError) error = NULL;
	f->dir = g_dir_make_tmp("cowsim-tracegen-XXXXXX", &error);
	assert_non_null(f->dir);
	g_autofree char *a = g_build_filename(f->dir, "a", NULL);
	g_autofree char *h = g_build_filename(f->dir, "h", NULL);
	g_autofree char *l = g_build_filename(f->dir, "l", NULL);
	g_autofree char *sub = g_build_filename(f->dir, "sub", NULL);
	g_autofree char *b = g_build_filename(f->dir, "sub", "b", NULL);
	g_autofree char *fifo = g_build_filename(f->dir, "fifo", NULL);
	write_file(a, "hello world\n", 1300000000);
	assert_int_equal(link(a, h), 0);
	assert_int_equal(symlink("a", l), 0);
	assert_int_equal(mkdir(sub, 0750), 0);
	write_file(b, "b", 1300000001);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	*state = f;
	return 0;
}

static int teardown_tree(void **state)
{
	struct tree_fixture *f = *state;
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	g_free(f->dir);
	g_free(f);
	return 0;
}

/* The op lines of TEXT (no header, no comments), as a NULL-terminated vector. */
static GStrv op_lines(const char *text)
{
	/* Split by hand: g_strsplit() rescans the rest of the text for every
	 * line under ASan's strstr interceptor, which makes it quadratic. */
	g_autoptr(GStrvBuilder) ops = g_strv_builder_new();
	const char *line = strchr(text, '\n');
	line = line ? line + 1 : text + strlen(text);   /* skip the header */
	while (*line) {
		const char *end = strchr(line, '\n');
		size_t length = end ? (size_t)(end - line) : strlen(line);
		if (length && line[0] != '#') {
			g_autofree char *copy = g_strndup(line, length);
			g_strv_builder_add(ops, copy);
		}
		line += length + (end != NULL);
	}
	return g_strv_builder_end(ops);
}

static int index_of(GStrv lines, const char *line)
{
	for (int i = 0; lines[i]; i++)
		if (!strcmp(lines[i], line))
			return i;
	return -1;
}

static char *generate_or_fail(const char *name, const char *const *args)
{
	g_autoptr(GError) error = NULL;
	char *text = helper_generate(name, args, &error);
	if (!text)
		fail_msg("cowsim gen %s: %s", name, error->message);
	return text;
}

static char *write_temp_trace(const char *text)
{
	g_autoptr(GError) error = NULL;
	char *path = NULL;
	int fd = g_file_open_tmp("cowsim-merge-XXXXXX.trace", &path, &error);
	assert_true(fd >= 0);
	close(fd);
	assert_true(g_file_set_contents(path, text, -1, &error));
	return path;
}

/* Every job type of a scenario file, small enough for a unit test. */
#define SMALL_SCENARIO \
	"[scenario]\nstart = 2012-06-01\ndays = 3\n[tree]\nfiles = 60\nprefix = /home/u\n" \
	"[job c]\ntype = churn\nschedule = every 1h\n[job m]\ntype = mutt\nschedule = every 30m from 09:00 to 12:00\n" \
	"mailboxes = 2\n[job b]\ntype = backup\nschedule = daily 02:00\n[job s]\ntype = snapshot\n" \
	"schedule = daily 23:00\nkeep = 2\n[job r]\ntype = read-all\nschedule = once 12:00\n" \
	"[job f]\ntype = find\nschedule = once 13:00\n[job t]\ntype = tar\nschedule = once 14:00\n" \
	"[job w]\ntype = tmpwatch\nschedule = daily 04:00\ndir = tmp\n[job h]\ntype = hsm-scan\n" \
	"schedule = once 15:00\n[job d]\ntype = mark\nschedule = daily 23:30\nmark = day_{n}\n"

/* --- determinism ----------------------------------------------------------------- */

static void test_synthetic_same_seed_gives_the_same_bytes(void **state)
{
	const char *const args[] = { "--files", "3000", "--seed", "42", NULL };
	g_autofree char *one = generate_or_fail("synthetic", args);
	g_autofree char *two = generate_or_fail("synthetic", args);
	assert_string_equal(one, two);
}

static void test_synthetic_different_seeds_give_different_trees(void **state)
{
	const char *const a[] = { "--files", "3000", "--seed", "42", NULL };
	const char *const b[] = { "--files", "3000", "--seed", "43", NULL };
	g_autofree char *one = generate_or_fail("synthetic", a);
	g_autofree char *two = generate_or_fail("synthetic", b);
	assert_string_not_equal(one, two);
}

static void test_every_scenario_is_deterministic(void **state)
{
	const char *const args[] = { "--seed", "7", NULL };
	const char *const tree_args[] = { "--files", "300", "--seed", "7", NULL };
	for (const struct tracegen_scenario *s = tracegen_scenarios; s->name; s++) {
		if (!strcmp(s->name, "from-dir") || !strcmp(s->name, "from-strace") || /* from-strace: tests/strace/ */
		    !strcmp(s->name, "merge")) /* no seed: its own tests below */
			continue;
		g_autofree char *file = write_temp_trace(SMALL_SCENARIO);
		const char *const scenario_args[] = { file, NULL };
		const char *const *use = !strcmp(s->name, "mutt") ? args
				       : !strcmp(s->name, "scenario") ? scenario_args : tree_args;
		g_autofree char *one = generate_or_fail(s->name, use);
		g_autofree char *two = generate_or_fail(s->name, use);
		g_unlink(file);
		if (strcmp(one, two))
			fail_msg("%s is not deterministic", s->name);
	}
}

static void test_synthetic_tree_has_the_requested_file_count_and_depths(void **state)
{
	const char *const args[] = { "--files", "5000", NULL };
	g_autofree char *text = generate_or_fail("synthetic", args);
	g_auto(GStrv) lines = op_lines(text);
	int creates = 0, mkdirs = 0, deep = 0;
	for (int i = 0; lines[i]; i++) {
		if (g_str_has_prefix(lines[i], "create ")) {
			creates++;
			int slashes = 0;
			for (const char *c = strchr(lines[i], '/'); c && *c != ' '; c++)
				slashes += *c == '/';
			deep += slashes >= 4; /* /tree/x/y/file: depth >= 3 below the tree */
		}
		mkdirs += g_str_has_prefix(lines[i], "mkdir ");
	}
	assert_int_equal(creates, 5000);
	assert_int_equal(mkdirs, 1000); /* 5 files per directory, the root included */
	assert_true(deep > 5000 / 2);   /* Poisson(6.49) depth: most files are deep */
}

/* --- from-dir -------------------------------------------------------------------- */

static void test_from_dir_copies_files_links_and_symlinks_like_cp_a(void **state)
{
	struct tree_fixture *f = *state;
	const char *const args[] = { f->dir, "--order", "name", NULL };
	g_autofree char *text = generate_or_fail("from-dir", args);
	g_auto(GStrv) lines = op_lines(text);
	struct stat st;
	assert_int_equal(lstat(f->dir, &st), 0);

	assert_true(g_str_has_prefix(lines[1], "mkdir /tree"));
	g_autofree char *uid = st.st_uid ? g_strdup_printf(" uid=%u", st.st_uid) : g_strdup("");
	g_autofree char *gid = st.st_gid ? g_strdup_printf(" gid=%u", st.st_gid) : g_strdup("");
	g_autofree char *create_a = g_strdup_printf("create /tree/a size=12%s%s atime=1300000100 mtime=1300000000.0000005",
						    uid, gid);
	int create = index_of(lines, create_a);
	int hard = index_of(lines, "link /tree/a /tree/h");
	int sym = index_of(lines, "symlink a /tree/l");
	int sub = -1, settime_root = -1;
	for (int i = 0; lines[i]; i++) {
		if (g_str_has_prefix(lines[i], "mkdir /tree/sub mode=0750"))
			sub = i;
		if (g_str_has_prefix(lines[i], "settime /tree atime="))
			settime_root = i;
	}
	if (create < 0)
		fail_msg("no '%s' in\n%s", create_a, text);
	assert_true(create < hard && hard < sym && sym < sub && sub < settime_root);
	assert_true(g_str_has_prefix(lines[sym + 1], "settime /tree/l atime="));
	assert_non_null(strstr(text, "# cp -a (from-dir"));
	assert_non_null(strstr(text, "1 sockets/devices/fifos skipped"));
	assert_null(strstr(text, "/tree/fifo"));
	assert_null(strstr(text, "ctime="));
}

static void test_from_dir_copies_in_inode_order_like_gnu_cp(void **state)
{
	struct tree_fixture *f = *state;
	const char *const args[] = { f->dir, NULL };
	g_autofree char *text = generate_or_fail("from-dir", args);
	g_auto(GStrv) lines = op_lines(text);
	ino_t last = 0;
	for (int i = 0; lines[i]; i++) {
		const char *name = NULL;
		if (g_str_has_prefix(lines[i], "create /tree/") && !strchr(lines[i] + 13, '/'))
			name = lines[i] + 13;
		else if (g_str_has_prefix(lines[i], "symlink a /tree/"))
			name = lines[i] + 16;
		else if (g_str_has_prefix(lines[i], "mkdir /tree/"))
			name = lines[i] + 12;
		if (!name)
			continue;
		g_autofree char *base = g_strndup(name, strcspn(name, " "));
		g_autofree char *path = g_build_filename(f->dir, base, NULL);
		struct stat st;
		assert_int_equal(lstat(path, &st), 0);
		assert_true(st.st_ino >= last);
		last = st.st_ino;
	}
	assert_true(last != 0);
}

static void test_from_dir_reports_an_unreadable_source(void **state)
{
	const char *const args[] = { "/nonexistent-cowsim-dir", NULL };
	g_autoptr(GError) error = NULL;
	g_autofree char *text = helper_generate("from-dir", args, &error);
	assert_null(text);
	assert_true(g_error_matches(error, TRACEGEN_ERROR, TRACEGEN_ERROR_SOURCE));
	assert_true(g_str_has_prefix(error->message, "/nonexistent-cowsim-dir: cannot open directory:"));
}

/* --- seed-experiment ----------------------------------------------------------- */

static void test_seed_experiment_emits_the_four_marks_in_order(void **state)
{
	struct tree_fixture *f = *state;
	const char *const args[] = { "--from-dir", f->dir, "--snapshots", "2", NULL };
	g_autofree char *text = generate_or_fail("seed-experiment", args);
	g_auto(GStrv) lines = op_lines(text);
	const char *marks[] = { "mark after_copy", "mark after_snapshots", "mark after_grep", "mark after_grep2" };
	int last = -1;
	for (size_t i = 0; i < G_N_ELEMENTS(marks); i++) {
		int at = index_of(lines, marks[i]);
		assert_true(at > last);
		assert_string_equal(lines[at - 1], "sync");
		last = at;
	}
	assert_true(index_of(lines, "snapshot / /snap1") < index_of(lines, "snapshot / /snap2"));
	assert_true(index_of(lines, "snapshot / /snap2") < index_of(lines, "mark after_snapshots"));
}

static void test_seed_experiment_greps_the_trunk_then_each_snapshot(void **state)
{
	struct tree_fixture *f = *state;
	const char *const args[] = { "--from-dir", f->dir, "--snapshots", "2", "--greps", "1", NULL };
	g_autofree char *text = generate_or_fail("seed-experiment", args);
	g_auto(GStrv) lines = op_lines(text);
	int root = index_of(lines, "readdir /");
	int trunk = index_of(lines, "read /tree/sub/b");
	int snap1 = index_of(lines, "readdir /snap1");
	int snap1_b = index_of(lines, "read /snap1/tree/sub/b");
	int snap2_b = index_of(lines, "read /snap2/tree/sub/b");
	assert_true(root > index_of(lines, "mark after_snapshots"));
	assert_true(root < trunk && trunk < snap1 && snap1 < snap1_b && snap1_b < snap2_b);
	assert_true(snap2_b < index_of(lines, "mark after_grep"));
}

static void test_seed_experiment_readonly_and_trunk_options(void **state)
{
	struct tree_fixture *f = *state;
	const char *const args[] = { "--from-dir", f->dir, "--snapshots", "1", "--readonly", "--grep", "trunk", NULL };
	g_autofree char *text = generate_or_fail("seed-experiment", args);
	g_auto(GStrv) lines = op_lines(text);
	assert_true(index_of(lines, "snapshot / /snap1 ro") >= 0);
	assert_int_equal(index_of(lines, "readdir /"), -1);
	assert_null(strstr(text, "read /snap1/"));
}

static void test_grep_follows_a_symlink_to_a_file_like_grep_R(void **state)
{
	struct tree_fixture *f = *state;
	const char *const args[] = { "--from-dir", f->dir, "--grep", "trunk", "--greps", "1", NULL };
	g_autofree char *text = generate_or_fail("seed-experiment", args);
	g_auto(GStrv) lines = op_lines(text);
	int link = index_of(lines, "read /tree/l");
	assert_true(link > index_of(lines, "mark after_snapshots"));
	assert_string_equal(lines[link + 1], "read /tree/a");
	const char *const no_follow[] = { "--from-dir", f->dir, "--grep", "trunk", "--no-follow", NULL };
	g_autofree char *r = generate_or_fail("seed-experiment", no_follow);
	assert_null(strstr(r, "read /tree/l\n"));
}

static void test_seed_experiment_moves_the_clock_forward(void **state)
{
	const char *const args[] = { "--files", "25000", "--snapshots", "1", NULL };
	g_autofree char *text = generate_or_fail("seed-experiment", args);
	g_auto(GStrv) lines = op_lines(text);
	int seconds = 0;
	assert_string_equal(lines[0], "clock @1338422400");
	for (int i = 0; lines[i]; i++)
		seconds += !strcmp(lines[i], "clock +1s");
	assert_true(seconds >= 4); /* copying and grepping 25k files takes seconds */
}

/* A temporary file holding TEXT; the caller unlinks it. */

/* --- other scenarios ------------------------------------------------------------- */

static void test_every_scenario_writes_a_trace_the_reader_accepts(void **state)
{
	struct tree_fixture *f = *state;
	for (const struct tracegen_scenario *s = tracegen_scenarios; s->name; s++) {
		const char *const tree[] = { "--from-dir", f->dir, "--snapshots", "1", NULL };
		const char *const plain[] = { f->dir, NULL };
		const char *const mutt[] = { "--days", "2", NULL };
		const char *const backup[] = { "--from-dir", f->dir, "--days", "3", NULL };
		const char *const strace_log[] = { "/dev/null", "--root", f->dir, "--prelude", NULL };
		g_autofree char *input = write_temp_trace("cowsim-trace 1\nclock @100\nmark x\n");
		const char *const merge[] = { input, input, NULL };
		g_autofree char *scenario_file = write_temp_trace(SMALL_SCENARIO);
		const char *const scenario[] = { scenario_file, NULL };
		const char *const *args = !strcmp(s->name, "from-dir") ? plain
					: !strcmp(s->name, "from-strace") ? strace_log
					: !strcmp(s->name, "synthetic") ? (const char *const[]){ "--files", "50", NULL }
					: !strcmp(s->name, "mutt") ? mutt
					: !strcmp(s->name, "merge") ? merge
					: !strcmp(s->name, "scenario") ? scenario
					: !strcmp(s->name, "backup-rotation") ? backup : tree;
		g_autofree char *text = generate_or_fail(s->name, args);
		g_autoptr(GError) error = NULL;
		g_autoptr(trace_reader) reader = helper_reader(text, &error);
		struct trace_op op;
		int got;
		assert_non_null(reader);
		while ((got = trace_reader_next(reader, &op, &error)) == 1)
			;
		if (got < 0)
			fail_msg("%s: %s", s->name, error->message);
		g_unlink(input);
		g_unlink(scenario_file);
	}
}

static void test_gen_rejects_from_dir_and_files_together(void **state)
{
	const char *const args[] = { "--from-dir", "/tmp", "--files", "5", NULL };
	g_autoptr(GError) error = NULL;
	g_autofree char *text = helper_generate("seed-experiment", args, &error);
	assert_null(text);
	assert_true(g_error_matches(error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS));
}

static void test_gen_rejects_an_option_the_scenario_does_not_take(void **state)
{
	const char *const args[] = { "--files", "5", "--mailboxes", "3", NULL };
	g_autoptr(GError) error = NULL;
	g_autofree char *text = helper_generate("find", args, &error);
	assert_null(text);
	assert_true(g_error_matches(error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION));
}

static void test_backup_rotation_keeps_k_snapshots(void **state)
{
	const char *const args[] = { "--files", "100", "--days", "5", "--keep", "2", NULL };
	g_autofree char *text = generate_or_fail("backup-rotation", args);
	g_auto(GStrv) lines = op_lines(text);
	int live = 0, most = 0, days = 0;
	for (int i = 0; lines[i]; i++) {
		live += g_str_has_prefix(lines[i], "snapshot / /snapshots/");
		live -= g_str_has_prefix(lines[i], "delete-snapshot /snapshots/");
		most = MAX(most, live);
		days += g_str_has_prefix(lines[i], "mark day_");
	}
	assert_int_equal(most, 3); /* a new one exists briefly before the oldest goes */
	assert_int_equal(live, 2);
	assert_int_equal(days, 5);
	assert_true(index_of(lines, "delete-snapshot /snapshots/2012-05-31") >
		    index_of(lines, "snapshot / /snapshots/2012-06-02"));
}

/* --- churn ---------------------------------------------------------------------- */

static void test_churn_same_seed_gives_the_same_bytes(void **state)
{
	const char *const args[] = { "--files", "300", "--days", "4", "--seed", "9", "--size-dist", "pareto", NULL };
	const char *const other[] = { "--files", "300", "--days", "4", "--seed", "10", "--size-dist", "pareto", NULL };
	g_autofree char *one = generate_or_fail("churn", args);
	g_autofree char *two = generate_or_fail("churn", args);
	g_autofree char *three = generate_or_fail("churn", other);
	assert_string_equal(one, two);
	assert_string_not_equal(one, three);
}

/* CH1: nothing touches a name after its unlink; the counts follow the rates. */
static void test_churn_never_touches_a_deleted_file_and_follows_its_rates(void **state)
{
	const char *const args[] = { "--files", "200", "--days", "10", "--appends", "0", "--overwrites", "30",
				     "--creates", "8", "--deletes", "20", "--write-size", "1000",
				     "--size-dist", "fixed", NULL };
	g_autofree char *text = generate_or_fail("churn", args);
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(text, &error);
	g_autoptr(GHashTable) gone = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	struct trace_op op;
	int got, creates = 0, unlinks = 0, writes = 0, days = 0;
	bool after_copy = false;
	while ((got = trace_reader_next(reader, &op, &error)) == 1) {
		if (op.kind == TRACE_MARK) {
			after_copy = true;
			days += g_str_has_prefix(op.path2, "day_");
			continue;
		}
		if (!after_copy)
			continue;
		if (op.path && g_hash_table_contains(gone, op.path))
			fail_msg("line %" G_GUINT64_FORMAT ": %s names an unlinked file", op.line, op.path);
		creates += op.kind == TRACE_CREATE;
		if (op.kind == TRACE_CREATE)
			assert_int_equal(op.size, 1000);
		if (op.kind == TRACE_WRITE) {
			writes++;
			assert_true(op.length <= 1000); /* CH2: an overwrite stays within the file */
		}
		if (op.kind == TRACE_UNLINK) {
			unlinks++;
			g_hash_table_add(gone, g_strdup(op.path));
		}
	}
	assert_int_equal(got, 0);
	assert_int_equal(days, 10);
	/* Poisson means 80, 200 over ten days: well inside +-40% (sd 9 and 14). */
	assert_in_range(creates, 48, 112);
	assert_in_range(unlinks, 120, 280);
	assert_in_range(writes, 180, 420);
}

/* CH2 under the default lognormal sizes: every write starts within the file
 * as the trace made it (an overwrite's size was once drawn twice, and its
 * offset wrapped below zero). */
static void test_churn_writes_start_inside_the_file_with_lognormal_sizes(void **state)
{
	const char *const args[] = { "--files", "300", "--days", "10", "--overwrites", "50", NULL };
	g_autofree char *text = generate_or_fail("churn", args);
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(text, &error);
	g_autoptr(GHashTable) sizes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	struct trace_op op;
	int got, writes = 0;
	while ((got = trace_reader_next(reader, &op, &error)) == 1) {
		if (op.kind == TRACE_CREATE) {
			uint64_t *size = g_new(uint64_t, 1);
			*size = op.size;
			g_hash_table_insert(sizes, g_strdup(op.path), size);
		} else if (op.kind == TRACE_WRITE) {
			uint64_t *size = g_hash_table_lookup(sizes, op.path);
			assert_non_null(size);
			if (op.offset > *size)
				fail_msg("line %" G_GUINT64_FORMAT ": write at %" G_GUINT64_FORMAT " past the end %"
					 G_GUINT64_FORMAT, op.line, op.offset, *size);
			*size = MAX(*size, op.offset + op.length);
			writes++;
		}
	}
	assert_int_equal(got, 0);
	assert_true(writes > 400);
}

/* --- scenario files ------------------------------------------------------------------ */

static struct scenario_schedule schedule_of(const char *text)
{
	g_autofree char *file_text = g_strdup_printf("[tree]\nfiles = 5\n[job j]\ntype = find\nschedule = %s\n", text);
	g_autofree char *path = write_temp_trace(file_text);
	g_autoptr(GError) error = NULL;
	struct scenario_spec *spec = scenario_file_load(path, NULL, -1, &error);
	g_unlink(path);
	if (!spec)
		fail_msg("%s: %s", text, error->message);
	struct scenario_schedule s = ((struct scenario_job *)g_ptr_array_index(spec->jobs, 0))->schedule;
	scenario_spec_free(spec);
	return s;
}

#define H(h, m) ((int64_t)((h) * 60 + (m)) * 60 * TRACE_NS_PER_SEC)

static void test_schedules_run_at_the_times_they_say(void **state)
{
	const int64_t fri = INT64_C(1338508800) * TRACE_NS_PER_SEC; /* Friday 2012-06-01 00:00 UTC */
	const int64_t day = TRACE_NS_PER_DAY;
	struct scenario_schedule daily = schedule_of("daily 02:30");
	assert_int_equal(scenario_next_run(&daily, fri, fri), fri + H(2, 30));
	assert_int_equal(scenario_next_run(&daily, fri, fri + H(2, 31)), fri + day + H(2, 30));
	struct scenario_schedule every = schedule_of("every 5m from 09:00 to 18:00");
	assert_int_equal(scenario_next_run(&every, fri, fri), fri + H(9, 0));
	assert_int_equal(scenario_next_run(&every, fri, fri + H(9, 1)), fri + H(9, 5));
	assert_int_equal(scenario_next_run(&every, fri, fri + H(17, 56)), fri + day + H(9, 0)); /* 18:00 excluded */
	struct scenario_schedule hourly = schedule_of("every 1h");
	assert_int_equal(scenario_next_run(&hourly, fri, fri + H(23, 1)), fri + day);
	struct scenario_schedule weekly = schedule_of("weekly sun 03:00");
	assert_int_equal(scenario_next_run(&weekly, fri, fri), fri + 2 * day + H(3, 0));
	assert_int_equal(scenario_next_run(&weekly, fri, fri + 2 * day + H(3, 1)), fri + 9 * day + H(3, 0));
	struct scenario_schedule weekly_default = schedule_of("weekly"); /* the start's weekday, 00:00 */
	assert_int_equal(scenario_next_run(&weekly_default, fri, fri + 1), fri + 7 * day);
	struct scenario_schedule monthly = schedule_of("monthly 15 01:00");
	assert_int_equal(scenario_next_run(&monthly, fri, fri), fri + 14 * day + H(1, 0));
	assert_int_equal(scenario_next_run(&monthly, fri, fri + 15 * day), fri + 44 * day + H(1, 0)); /* July 15 */
	struct scenario_schedule once = schedule_of("once 12:00");
	assert_int_equal(scenario_next_run(&once, fri, fri), fri + H(12, 0));
	assert_int_equal(scenario_next_run(&once, fri, fri + H(12, 0) + 1), INT64_MAX);
	struct scenario_schedule long_interval = schedule_of("every 3d"); /* counted from the start */
	assert_int_equal(scenario_next_run(&long_interval, fri, fri + 1), fri + 3 * day);
}

/* The rsync-style backup: every entry lstat'ed each run, every file read the
 * first time, afterwards only the files written since the previous run. */
static void test_backup_stats_everything_and_reads_only_what_changed(void **state)
{
	const char *text = "[scenario]\nstart = 2012-06-01\ndays = 2\n[tree]\nfiles = 200\nprefix = /h\n"
			   "[job c]\ntype = churn\nschedule = daily 10:00\nappends = 20\noverwrites = 0\n"
			   "creates = 0\ndeletes = 0\n[job b]\ntype = backup\nschedule = daily 02:00\nmark = b{n}\n";
	g_autofree char *path = write_temp_trace(text);
	const char *const args[] = { path, NULL };
	g_autofree char *trace = generate_or_fail("scenario", args);
	g_unlink(path);
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(trace, &error);
	g_autoptr(GHashTable) written = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	struct trace_op op;
	int got, run = 0, stats[3] = { 0 }, reads[3] = { 0 };
	bool copying = true, second_started = false; /* writes after it began are for the next one */
	while ((got = trace_reader_next(reader, &op, &error)) == 1) {
		if (op.kind == TRACE_MARK) {
			copying = false;
			run += g_str_has_prefix(op.path2, "b");
			if (run == 1)
				g_hash_table_remove_all(written);
			continue;
		}
		if (copying)
			continue;
		if (op.kind == TRACE_WRITE && !second_started)
			g_hash_table_add(written, g_strdup(op.path));
		if (op.kind == TRACE_STAT) {
			stats[MIN(run, 2)]++;
			second_started |= run == 1;
		}
		if (op.kind == TRACE_READ) {
			reads[MIN(run, 2)]++;
			if (run == 1 && !g_hash_table_contains(written, op.path))
				fail_msg("the second backup reads %s, which did not change", op.path);
		}
	}
	assert_int_equal(got, 0);
	assert_int_equal(run, 2);
	/* run 0 = the first backup (before mark b1), run 1 = the second. */
	assert_true(reads[0] >= 200);
	assert_int_equal(reads[1], (int)g_hash_table_size(written));
	assert_true(reads[1] > 0 && reads[1] <= 20 + 10);
	assert_int_equal(stats[0], stats[1]); /* nothing created or deleted: the same entries */
}

/* --- merge ------------------------------------------------------------------------ */

static void test_merge_orders_ops_by_clock_and_keeps_marks_distinct(void **state)
{
	g_autofree char *a = write_temp_trace("cowsim-trace 1\nclock @100\nmkdir /a\nclock +5s\nmark x\n");
	g_autofree char *b = write_temp_trace("cowsim-trace 1\nclock @102\nmkdir /b\nmark x\nclock @104\nmkdir /b/c\n");
	const char *const args[] = { a, b, NULL };
	g_autofree char *text = generate_or_fail("merge", args);
	g_auto(GStrv) lines = op_lines(text);
	g_autofree char *stem_a = g_path_get_basename(a), *stem_b = g_path_get_basename(b);
	stem_a[strlen(stem_a) - strlen(".trace")] = stem_b[strlen(stem_b) - strlen(".trace")] = '\0';
	g_autofree char *mark_a = g_strdup_printf("mark %s:x", stem_a);
	g_autofree char *mark_b = g_strdup_printf("mark %s:x", stem_b);
	const char *const want[] = { "clock @100", "mkdir /a", "clock +2s", "mkdir /b", mark_b, "clock +2s",
				     "mkdir /b/c", "clock +1s", mark_a, NULL };
	for (int i = 0; want[i]; i++) {
		assert_non_null(lines[i]);
		assert_string_equal(lines[i], want[i]);
	}
	assert_null(lines[G_N_ELEMENTS(want) - 1]);
	g_unlink(a);
	g_unlink(b);
}

static void test_merge_names_the_file_and_line_of_a_bad_input(void **state)
{
	g_autofree char *good = write_temp_trace("cowsim-trace 1\nclock @100\nmkdir /a\n");
	g_autofree char *bad = write_temp_trace("cowsim-trace 1\nclock @100\nmkdir relative\n");
	const char *const args[] = { good, bad, NULL };
	g_autoptr(GError) error = NULL;
	g_autofree char *text = helper_generate("merge", args, &error);
	g_autofree char *where = g_strdup_printf("%s:3:", bad);
	assert_null(text);
	assert_non_null(error);
	assert_non_null(strstr(error->message, where));
	g_unlink(good);
	g_unlink(bad);
}

static void test_mutt_resets_atime_below_mtime_when_mail_is_left_unread(void **state)
{
	const char *const args[] = { "--mailboxes", "4", "--days", "3", NULL };
	g_autofree char *text = generate_or_fail("mutt", args);
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(text, &error);
	struct trace_op op;
	int settimes = 0, writes = 0;
	while (trace_reader_next(reader, &op, &error) == 1) {
		writes += op.kind == TRACE_WRITE;
		if (op.kind == TRACE_SETTIME) {
			settimes++;
			assert_int_equal(op.atime_ns, op.mtime_ns - TRACE_NS_PER_SEC);
		}
	}
	assert_true(writes > 0 && settimes > 0);
}

/* tmpwatch: every stat of a file whose atime (as the trace assigned it) is
 * more than D days old is followed by its unlink, and no other file is unlinked. */
static void test_tmpwatch_unlinks_exactly_the_files_older_than_the_limit(void **state)
{
	const char *const args[] = { "--files", "300", "--days", "10", "--run-days", "15", NULL };
	g_autofree char *text = generate_or_fail("tmpwatch", args);
	g_autoptr(GError) error = NULL;
	g_autoptr(trace_reader) reader = helper_reader(text, &error);
	g_autoptr(GHashTable) atimes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	struct trace_op op;
	int64_t now = 0, limit = 10 * TRACE_NS_PER_DAY;
	g_autofree char *must_unlink = NULL;
	int unlinks = 0;

	while (trace_reader_next(reader, &op, &error) == 1) {
		if (must_unlink) {
			assert_int_equal(op.kind, TRACE_UNLINK);
			assert_string_equal(op.path, must_unlink);
			g_clear_pointer(&must_unlink, g_free);
			unlinks++;
			continue;
		}
		if (op.kind == TRACE_CLOCK)
			now = op.clock_relative ? now + op.clock_ns : op.clock_ns;
		else if (op.kind == TRACE_CREATE)
			g_hash_table_insert(atimes, g_strdup(op.path), g_memdup2(&op.atime_ns, sizeof(int64_t)));
		else if (op.kind == TRACE_LINK)
			g_hash_table_insert(atimes, g_strdup(op.path2),
					    g_memdup2(g_hash_table_lookup(atimes, op.path), sizeof(int64_t)));
		else if (op.kind == TRACE_READ && g_hash_table_contains(atimes, op.path))
			*(int64_t *)g_hash_table_lookup(atimes, op.path) = now;
		else if (op.kind == TRACE_STAT && g_hash_table_contains(atimes, op.path) &&
			 now - *(int64_t *)g_hash_table_lookup(atimes, op.path) > limit)
			must_unlink = g_strdup(op.path);
		else if (op.kind == TRACE_UNLINK)
			fail_msg("line %" G_GUINT64_FORMAT ": unlink of a file that is not old: %s", op.line, op.path);
	}
	assert_null(error);
	assert_true(unlinks > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthetic_same_seed_gives_the_same_bytes),
		cmocka_unit_test(test_synthetic_different_seeds_give_different_trees),
		cmocka_unit_test(test_every_scenario_is_deterministic),
		cmocka_unit_test(test_synthetic_tree_has_the_requested_file_count_and_depths),
		cmocka_unit_test_setup_teardown(test_from_dir_copies_files_links_and_symlinks_like_cp_a, setup_tree,
						teardown_tree),
		cmocka_unit_test_setup_teardown(test_from_dir_copies_in_inode_order_like_gnu_cp, setup_tree,
						teardown_tree),
		cmocka_unit_test(test_from_dir_reports_an_unreadable_source),
		cmocka_unit_test_setup_teardown(test_seed_experiment_emits_the_four_marks_in_order, setup_tree,
						teardown_tree),
		cmocka_unit_test_setup_teardown(test_seed_experiment_greps_the_trunk_then_each_snapshot, setup_tree,
						teardown_tree),
		cmocka_unit_test_setup_teardown(test_seed_experiment_readonly_and_trunk_options, setup_tree,
						teardown_tree),
		cmocka_unit_test_setup_teardown(test_grep_follows_a_symlink_to_a_file_like_grep_R, setup_tree,
						teardown_tree),
		cmocka_unit_test(test_seed_experiment_moves_the_clock_forward),
		cmocka_unit_test_setup_teardown(test_every_scenario_writes_a_trace_the_reader_accepts, setup_tree,
						teardown_tree),
		cmocka_unit_test(test_gen_rejects_from_dir_and_files_together),
		cmocka_unit_test(test_gen_rejects_an_option_the_scenario_does_not_take),
		cmocka_unit_test(test_backup_rotation_keeps_k_snapshots),
		cmocka_unit_test(test_churn_same_seed_gives_the_same_bytes),
		cmocka_unit_test(test_merge_orders_ops_by_clock_and_keeps_marks_distinct),
		cmocka_unit_test(test_merge_names_the_file_and_line_of_a_bad_input),
		cmocka_unit_test(test_churn_never_touches_a_deleted_file_and_follows_its_rates),
		cmocka_unit_test(test_mutt_resets_atime_below_mtime_when_mail_is_left_unread),
		cmocka_unit_test(test_tmpwatch_unlinks_exactly_the_files_older_than_the_limit),
		cmocka_unit_test(test_churn_writes_start_inside_the_file_with_lognormal_sizes),
		cmocka_unit_test(test_schedules_run_at_the_times_they_say),
		cmocka_unit_test(test_backup_stats_everything_and_reads_only_what_changed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
