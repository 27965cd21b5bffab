/*
 * tests/fuzz/replay_corpus.c - main() for a fuzz harness built without
 * libFuzzer: feeds every file named on the command line (a directory means
 * every file in it, in name order) to LLVMFuzzerTestOneInput().
 *
 * The harness aborts on a broken contract, so a failing input ends the
 * process with SIGABRT; the name of the file being replayed is printed
 * first. Prints one TAP line per directory and per file argument.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "fuzz.h"

static void replay_file(const char *path)
{
	g_autofree char *contents = NULL;
	gsize length = 0;
	g_autoptr(GError) error = NULL;
	if (!g_file_get_contents(path, &contents, &length, &error)) {
		fprintf(stderr, "replay_corpus: %s\n", error->message);
		exit(99);
	}
	fprintf(stderr, "replay_corpus: %s (%zu bytes)\n", path, (size_t)length);
	/* A copy of exactly `length` bytes, so ASan sees any read past the end. */
	g_autofree uint8_t *copy = g_memdup2(contents, length ? length : 1);
	LLVMFuzzerTestOneInput(copy, length);
}

static gint compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of DIR, sorted, skipping README files. */
static GPtrArray *list_dir(const char *dir)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GDir) d = g_dir_open(dir, 0, &error);
	if (!d) {
		fprintf(stderr, "replay_corpus: %s\n", error->message);
		exit(99);
	}
	GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
	const char *name;
	while ((name = g_dir_read_name(d)))
		if (!g_str_has_prefix(name, "README"))
			g_ptr_array_add(files, g_build_filename(dir, name, NULL));
	g_ptr_array_sort(files, compare_names);
	return files;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 99;
	}
	for (int i = 1; i < argc; i++) {
		if (!g_file_test(argv[i], G_FILE_TEST_IS_DIR)) {
			replay_file(argv[i]);
			printf("ok %d - %s\n", i, argv[i]);
			continue;
		}
		g_autoptr(GPtrArray) files = list_dir(argv[i]);
		for (unsigned j = 0; j < files->len; j++)
			replay_file(files->pdata[j]);
		printf("ok %d - %s: %u inputs replayed\n", i, argv[i], files->len);
	}
	printf("1..%d\n", argc - 1);
	return 0;
}
