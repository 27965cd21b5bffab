/*
 * tests/strace/test_strace.c - the strace-log converter (workloads/strace.h),
 * one behaviour per test: log lines in, trace ops out.
 *
 * The tree under the root /r used by most tests (as options.tree):
 *     /r        DIR
 *     /r/a      DIR
 *     /r/a/x    FILE 100 bytes
 *     /r/b      DIR
 *     /r/b/lnk  SYMLINK -> ../a/x
 * The first process's cwd is /r.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include "strace.h"
#include "fstree.h"

struct converted {
	char *ops;             /* the op lines, comments and the final sync/mark removed */
	struct strace_stats stats;
	GError *error;
	bool ok;
};

static struct fstree *small_tree(void)
{
	struct fstree *t = fstree_new("test");
	struct fstree_node *a = fstree_add(t, t->root, FSTREE_DIR, "a");
	struct fstree_node *x = fstree_add(t, a, FSTREE_FILE, "x");
	x->size = 100;
	struct fstree_node *b = fstree_add(t, t->root, FSTREE_DIR, "b");
	struct fstree_node *l = fstree_add(t, b, FSTREE_SYMLINK, "lnk");
	l->target = g_strdup("../a/x");
	return t;
}

/* Convert LOG (lines separated by \n) with root /r; STRICT as given. */
static struct converted convert(const char *log, bool strict, bool with_tree)
{
	struct converted out = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	struct fstree *tree = with_tree ? small_tree() : NULL;
	struct strace_options opt = { .root = "/r", .cwd = "/r", .tree = tree, .strict = strict };
	struct trace_writer *w = trace_writer_new(mem);
	assert_true(trace_writer_begin(w, NULL));
	struct strace_converter *c = strace_converter_new(&opt, w);
	FILE *in = fmemopen((void *)log, strlen(log), "r");
	out.ok = strace_converter_stream(c, in, "t.log", &out.error) && strace_converter_finish(c, &out.error) &&
		 trace_writer_finish(w, &out.error);
	out.stats = *strace_converter_stats(c);
	fclose(in);
	strace_converter_free(c);
	trace_writer_free(w);
	fclose(mem);
	GString *ops = g_string_new(NULL);
	gchar **lines = g_strsplit(buf, "\n", -1);
	for (gchar **l = lines; *l; l++)
		if (**l && **l != '#' && strcmp(*l, TRACE_HEADER) && strcmp(*l, "sync") && strcmp(*l, "mark " STRACE_MARK_LABEL))
			g_string_append_printf(ops, "%s\n", *l);
	g_strfreev(lines);
	free(buf);
	if (tree)
		fstree_free(tree);
	out.ops = g_string_free(ops, FALSE);
	return out;
}

static void converted_clear(struct converted *c)
{
	g_free(c->ops);
	g_clear_error(&c->error);
}

/* Converts LOG with the small tree and asserts that it gives the ops
 * EXPECTED; the caller checks the counts and clears the result. */
static struct converted expect_ops(const char *log, const char *expected)
{
	struct converted got = convert(log, false, true);
	assert_true(got.ok);
	assert_string_equal(got.ops, expected);
	return got;
}

#define EXPECT_OPS(log, expected)                                          \
	do {                                                               \
		struct converted got_ = expect_ops((log), (expected));     \
		converted_clear(&got_);                                    \
	} while (0)

/* EXPECT_OPS, and the count FIELD of struct strace_stats is COUNT. */
#define EXPECT_COUNTED(log, expected, field, count)                        \
	do {                                                               \
		struct converted got_ = expect_ops((log), (expected));     \
		assert_int_equal(got_.stats.field, (count));               \
		converted_clear(&got_);                                    \
	} while (0)

static void test_open_and_reads_become_one_read_per_open(void **state)
{
	(void)state;
	EXPECT_OPS("1 openat(AT_FDCWD, \"a/x\", O_RDONLY) = 3\n"
		   "1 read(3, \"abc\"..., 4096) = 100\n"
		   "1 read(3, \"\", 4096) = 0\n"
		   "1 close(3) = 0\n"
		   "1 openat(AT_FDCWD, \"/r/a/x\", O_RDONLY|O_CLOEXEC) = 3\n"
		   "1 close(3) = 0\n",
		   "read /tree/a/x\n");
}

static void test_mmap_of_a_file_is_a_read(void **state)
{
	(void)state;
	EXPECT_OPS("1 openat(AT_FDCWD, \"a/x\", O_RDONLY) = 3\n"
		   "1 mmap(NULL, 100, PROT_READ, MAP_PRIVATE, 3, 0) = 0x7f0000000000\n"
		   "1 mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000002000\n",
		   "read /tree/a/x\n");
}

static void test_getdents_becomes_one_readdir_per_open(void **state)
{
	(void)state;
	EXPECT_OPS("1 openat(AT_FDCWD, \"a\", O_RDONLY|O_DIRECTORY) = 4\n"
		   "1 getdents64(4, 0x5600 /* 3 entries */, 32768) = 72\n"
		   "1 getdents64(4, 0x5600 /* 0 entries */, 32768) = 0\n",
		   "readdir /tree/a\n");
}

static void test_stat_family_becomes_stat(void **state)
{
	(void)state;
	EXPECT_OPS("1 stat(\"a\", {st_mode=S_IFDIR|0755, ...}) = 0\n"
		   "1 lstat(\"/r/a/x\", {st_mode=S_IFREG|0644, ...}) = 0\n"
		   "1 newfstatat(AT_FDCWD, \"b\", {st_mode=S_IFDIR|0755, ...}, AT_SYMLINK_NOFOLLOW) = 0\n"
		   "1 statx(AT_FDCWD, \"a/x\", AT_STATX_SYNC_AS_STAT, STATX_ALL, {stx_mask=STATX_ALL}) = 0\n"
		   "1 access(\"a\", R_OK) = 0\n"
		   "1 openat(AT_FDCWD, \"a/x\", O_RDONLY) = 3\n"
		   "1 newfstatat(3, \"\", {st_mode=S_IFREG|0644, ...}, AT_EMPTY_PATH) = 0\n"
		   "1 fstat(3, {st_mode=S_IFREG|0644, ...}) = 0\n",
		   "stat /tree/a\nstat /tree/a/x\nstat /tree/b\nstat /tree/a/x\nstat /tree/a\nstat /tree/a/x\n"
		   "stat /tree/a/x\n");
}

static void test_unfinished_and_resumed_calls_are_joined(void **state)
{
	(void)state;
	EXPECT_OPS("1 openat(AT_FDCWD, \"a/x\", O_RDONLY <unfinished ...>\n"
		   "2 openat(AT_FDCWD, \"/etc/passwd\", O_RDONLY) = 3\n"
		   "1 <... openat resumed>) = 3\n"
		   "1 read(3,  <unfinished ...>\n"
		   "1 <... read resumed>\"abc\", 100) = 3\n",
		   "read /tree/a/x\n");
}

static void test_dirfd_relative_paths_resolve_through_the_fd_table(void **state)
{
	(void)state;
	EXPECT_OPS("1 openat(AT_FDCWD, \"/r/a\", O_RDONLY|O_DIRECTORY) = 5\n"
		   "1 newfstatat(5, \"x\", {st_mode=S_IFREG|0644, ...}, AT_SYMLINK_NOFOLLOW) = 0\n"
		   "1 openat(5, \"../b\", O_RDONLY|O_DIRECTORY) = 6\n"
		   "1 getdents64(6, 0x5600 /* 3 entries */, 32768) = 72\n",
		   "stat /tree/a/x\nreaddir /tree/b\n");
}

static void test_dup_and_fcntl_dupfd_share_the_open_file(void **state)
{
	(void)state;
	EXPECT_OPS("1 openat(AT_FDCWD, \"a/x\", O_WRONLY) = 3\n"
		   "1 dup(3) = 4\n"
		   "1 fcntl(3, F_DUPFD_CLOEXEC, 10) = 10\n"
		   "1 close(3) = 0\n"
		   "1 write(4, \"hello\", 5) = 5\n"
		   "1 write(10, \"world\", 5) = 5\n"
		   "1 lseek(4, 50, SEEK_SET) = 50\n"
		   "1 write(10, \"!\", 1) = 1\n",
		   "write /tree/a/x 0 5\nwrite /tree/a/x 5 5\nwrite /tree/a/x 50 1\n");
}

static void test_chdir_and_fchdir_move_relative_paths(void **state)
{
	(void)state;
	EXPECT_OPS("1 chdir(\"a\") = 0\n"
		   "1 stat(\"x\", {st_mode=S_IFREG|0644, ...}) = 0\n"
		   "1 openat(AT_FDCWD, \"/r/b\", O_RDONLY|O_DIRECTORY) = 3\n"
		   "1 fchdir(3) = 0\n"
		   "1 lstat(\"lnk\", {st_mode=S_IFLNK|0777, ...}) = 0\n",
		   "stat /tree/a/x\nstat /tree/b/lnk\n");
}

static void test_calls_outside_the_root_are_dropped_and_counted(void **state)
{
	(void)state;
	struct converted got = expect_ops("1 openat(AT_FDCWD, \"/etc/ld.so.cache\", O_RDONLY|O_CLOEXEC) = 3\n"
					  "1 read(3, \"x\", 10) = 10\n"
					  "1 stat(\"/r/../etc\", {st_mode=S_IFDIR|0755, ...}) = 0\n"
					  "1 write(1, \"hi\\n\", 3) = 3\n",
					  "");
	assert_int_equal(got.stats.outside, 3);
	assert_int_equal(got.stats.unknown_fd, 1);
	converted_clear(&got);
}

static void test_failed_calls_are_dropped_and_counted(void **state)
{
	(void)state;
	EXPECT_COUNTED("1 openat(AT_FDCWD, \"a/nope\", O_RDONLY) = -1 ENOENT (No such file or directory)\n"
		       "1 mkdir(\"a\", 0777) = -1 EEXIST (File exists)\n",
		       "", failed, 2);
}

static void test_a_followed_symlink_is_read_first_even_when_the_call_fails(void **state)
{
	(void)state;
	EXPECT_OPS("1 newfstatat(AT_FDCWD, \"b/lnk\", {st_mode=S_IFREG|0644, ...}, 0) = 0\n"
		   "1 openat(AT_FDCWD, \"b/lnk/\", O_RDONLY|O_DIRECTORY) = -1 ENOTDIR (Not a directory)\n"
		   "1 readlink(\"b/lnk\", \"../a/x\", 4095) = 6\n",
		   "read /tree/b/lnk\nstat /tree/a/x\nread /tree/b/lnk\nread /tree/b/lnk\n");
}

static void test_o_creat_of_a_new_file_is_create_and_append_writes_at_the_end(void **state)
{
	(void)state;
	EXPECT_OPS("1 openat(AT_FDCWD, \"a/new\", O_WRONLY|O_CREAT|O_EXCL, 0600) = 3\n"
		   "1 write(3, \"0123456789\", 10) = 10\n"
		   "1 openat(AT_FDCWD, \"a/x\", O_WRONLY|O_APPEND|O_CREAT, 0666) = 4\n"
		   "1 write(4, \"tail\", 4) = 4\n"
		   "1 openat(AT_FDCWD, \"a/x\", O_WRONLY|O_TRUNC) = 5\n"
		   "1 pwrite64(5, \"z\", 1, 7) = 1\n"
		   "1 creat(\"b/c\", 0644) = 6\n",
		   "create /tree/a/new size=0 mode=0600\nwrite /tree/a/new 0 10\nwrite /tree/a/x 100 4\n"
		   "truncate /tree/a/x 0\nwrite /tree/a/x 7 1\ncreate /tree/b/c size=0\n");
}

static void test_namespace_calls_become_their_ops(void **state)
{
	(void)state;
	EXPECT_OPS("1 mkdirat(AT_FDCWD, \"d\", 0700) = 0\n"
		   "1 renameat2(AT_FDCWD, \"a/x\", AT_FDCWD, \"d/y\", RENAME_NOREPLACE) = 0\n"
		   "1 linkat(AT_FDCWD, \"d/y\", AT_FDCWD, \"d/z\", 0) = 0\n"
		   "1 symlinkat(\"y\", AT_FDCWD, \"d/s\") = 0\n"
		   "1 truncate(\"d/z\", 4096) = 0\n"
		   "1 unlinkat(AT_FDCWD, \"d/y\", 0) = 0\n"
		   "1 unlink(\"b/lnk\") = 0\n"
		   "1 unlinkat(AT_FDCWD, \"b\", AT_REMOVEDIR) = 0\n",
		   "mkdir /tree/d mode=0700\nrename /tree/a/x /tree/d/y\nlink /tree/d/y /tree/d/z\n"
		   "symlink y /tree/d/s\ntruncate /tree/d/z 4096\nunlink /tree/d/y\nunlink /tree/b/lnk\n"
		   "rmdir /tree/b\n");
}

static void test_utimensat_becomes_settime(void **state)
{
	(void)state;
	EXPECT_OPS("1 utimensat(AT_FDCWD, \"a/x\", [{tv_sec=1338422000, tv_nsec=5} /* 2012-05-30 */, "
		   "{tv_sec=1338421000, tv_nsec=0}], AT_SYMLINK_NOFOLLOW) = 0\n"
		   "1 utimensat(AT_FDCWD, \"a\", [UTIME_OMIT, {tv_sec=7, tv_nsec=0}], 0) = 0\n",
		   "settime /tree/a/x atime=1338422000.000000005 mtime=1338421000\n"
		   "settime /tree/a mtime=7\n");
}

static void test_ttt_times_become_clock_set_then_steps(void **state)
{
	(void)state;
	EXPECT_OPS("1  1338422400.000000 stat(\"a\", {st_mode=S_IFDIR|0755, ...}) = 0\n"
		   "1  1338422400.000010 openat(AT_FDCWD, \"/etc/x\", O_RDONLY) = 3\n"
		   "1  1338422400.500000 stat(\"a/x\", {st_mode=S_IFREG|0644, ...}) = 0\n"
		   "1  1338422400.500000 stat(\"b\", {st_mode=S_IFDIR|0755, ...}) = 0\n",
		   "clock @1338422400\nstat /tree/a\nclock +500ms\nstat /tree/a/x\nstat /tree/b\n");
}

static void test_tt_times_of_day_give_relative_steps_across_midnight(void **state)
{
	(void)state;
	EXPECT_OPS("1 23:59:59.900000 stat(\"a\", {st_mode=S_IFDIR|0755, ...}) = 0\n"
		   "1 00:00:00.100000 stat(\"b\", {st_mode=S_IFDIR|0755, ...}) = 0\n",
		   "stat /tree/a\nclock +200ms\nstat /tree/b\n");
}

static void test_fork_copies_the_fd_table_and_a_thread_shares_it(void **state)
{
	(void)state;
	EXPECT_OPS("1 openat(AT_FDCWD, \"a/x\", O_RDONLY) = 3\n"
		   "1 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD, child_tidptr=0x1) = 2\n"
		   "2 close(3) = 0\n"
		   "1 read(3, \"a\", 1) = 1\n"
		   "1 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_THREAD, exit_signal=0}, 88 <unfinished ...>\n"
		   "7 openat(AT_FDCWD, \"a\", O_RDONLY|O_DIRECTORY) = 9\n"
		   "1 <... clone3 resumed>) = 7\n"
		   "1 getdents64(9, 0x5600 /* 3 entries */, 32768) = 72\n",
		   "read /tree/a/x\nreaddir /tree/a\n");
}

static void test_cloexec_fds_are_closed_by_execve(void **state)
{
	(void)state;
	EXPECT_COUNTED("1 openat(AT_FDCWD, \"a/x\", O_RDONLY|O_CLOEXEC) = 3\n"
		       "1 openat(AT_FDCWD, \"a\", O_RDONLY|O_DIRECTORY) = 4\n"
		       "1 execve(\"/bin/cat\", [\"cat\"], 0x7ffd /* 3 vars */) = 0\n"
		       "1 read(3, \"a\", 1) = 1\n"
		       "1 getdents64(4, 0x5600 /* 3 entries */, 32768) = 72\n",
		       "readdir /tree/a\n", unknown_fd, 1);
}

static void test_calls_the_tree_contradicts_are_dropped_as_inconsistent(void **state)
{
	(void)state;
	EXPECT_COUNTED("1 stat(\"a/ghost\", {st_mode=S_IFREG|0644, ...}) = 0\n"
		       "1 mkdir(\"a\", 0755) = 0\n",
		       "", inconsistent, 2);
}

static void test_calls_the_format_cannot_express_are_counted_by_name(void **state)
{
	(void)state;
	EXPECT_COUNTED("1 chmod(\"a/x\", 0600) = 0\n"
		       "1 fchownat(AT_FDCWD, \"a\", 1000, 1000, 0) = 0\n",
		       "", unsupported, 2);
}

static void test_malformed_lines_are_skipped_and_counted_with_their_line_number(void **state)
{
	(void)state;
	struct converted got = expect_ops("1 stat(\"a\", {st_mode=S_IFDIR|0755, ...}) = 0\n"
					  "this is not strace\n"
					  "1 openat(AT_FDCWD, \"a/x\n"
					  "1 <... read resumed>\"\", 4) = 0\n"
					  "1 stat(\"b\", {st_mode=S_IFDIR|0755, ...}) = 0\n",
					  "stat /tree/a\nstat /tree/b\n");
	assert_int_equal(got.stats.malformed, 3);
	assert_int_equal(got.stats.first_malformed_line, 2);
	converted_clear(&got);
}

static void test_strict_stops_at_the_first_malformed_line_naming_it(void **state)
{
	(void)state;
	struct converted got = convert("1 stat(\"a\", {st_mode=S_IFDIR|0755, ...}) = 0\n"
				       "1 stat(\"a\", {st_mode=S_IFDIR|0755, ...}) = 0\n"
				       "1 openat(AT_FDCWD, 42, O_RDONLY) = 3\n",
				       true, true);
	assert_false(got.ok);
	assert_non_null(got.error);
	assert_true(g_error_matches(got.error, STRACE_ERROR, STRACE_ERROR_MALFORMED));
	assert_non_null(strstr(got.error->message, "t.log:3: openat: argument 2 (path)"));
	converted_clear(&got);
}

static void test_without_a_tree_existing_files_are_assumed(void **state)
{
	(void)state;
	struct converted got = convert("1 stat(\"a/ghost\", {st_mode=S_IFREG|0644, ...}) = 0\n", false, false);
	assert_true(got.ok);
	assert_string_equal(got.ops, "stat /tree/a/ghost\n");
	converted_clear(&got);
}

static void test_the_same_log_gives_the_same_ops(void **state)
{
	(void)state;
	const char *log = "1 openat(AT_FDCWD, \"a\", O_RDONLY|O_DIRECTORY) = 3\n"
			  "1 clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>\n"
			  "2 getdents64(3, 0x5600 /* 3 entries */, 32768) = 72\n"
			  "1 <... clone resumed>) = 2\n"
			  "2 openat(3, \"x\", O_WRONLY|O_APPEND) = 4\n"
			  "2 write(4, \"abc\", 3) = 3\n";
	struct converted one = convert(log, false, true), two = convert(log, false, true);
	assert_true(one.ok && two.ok);
	assert_string_equal(one.ops, "readdir /tree/a\nwrite /tree/a/x 100 3\n");
	assert_string_equal(one.ops, two.ops);
	assert_memory_equal(&one.stats, &two.stats, sizeof(one.stats));
	converted_clear(&one);
	converted_clear(&two);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_and_reads_become_one_read_per_open),
		cmocka_unit_test(test_mmap_of_a_file_is_a_read),
		cmocka_unit_test(test_getdents_becomes_one_readdir_per_open),
		cmocka_unit_test(test_stat_family_becomes_stat),
		cmocka_unit_test(test_unfinished_and_resumed_calls_are_joined),
		cmocka_unit_test(test_dirfd_relative_paths_resolve_through_the_fd_table),
		cmocka_unit_test(test_dup_and_fcntl_dupfd_share_the_open_file),
		cmocka_unit_test(test_chdir_and_fchdir_move_relative_paths),
		cmocka_unit_test(test_calls_outside_the_root_are_dropped_and_counted),
		cmocka_unit_test(test_failed_calls_are_dropped_and_counted),
		cmocka_unit_test(test_a_followed_symlink_is_read_first_even_when_the_call_fails),
		cmocka_unit_test(test_o_creat_of_a_new_file_is_create_and_append_writes_at_the_end),
		cmocka_unit_test(test_namespace_calls_become_their_ops),
		cmocka_unit_test(test_utimensat_becomes_settime),
		cmocka_unit_test(test_ttt_times_become_clock_set_then_steps),
		cmocka_unit_test(test_tt_times_of_day_give_relative_steps_across_midnight),
		cmocka_unit_test(test_fork_copies_the_fd_table_and_a_thread_shares_it),
		cmocka_unit_test(test_cloexec_fds_are_closed_by_execve),
		cmocka_unit_test(test_calls_the_tree_contradicts_are_dropped_as_inconsistent),
		cmocka_unit_test(test_calls_the_format_cannot_express_are_counted_by_name),
		cmocka_unit_test(test_malformed_lines_are_skipped_and_counted_with_their_line_number),
		cmocka_unit_test(test_strict_stops_at_the_first_malformed_line_naming_it),
		cmocka_unit_test(test_without_a_tree_existing_files_are_assumed),
		cmocka_unit_test(test_the_same_log_gives_the_same_ops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
