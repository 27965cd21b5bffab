/*
 * tests/sim/colliding_names_trace.c - print a trace whose last line adds a
 * name to a full DIR_ITEM hash window (model/fs.h FS_DIR_HASH_PROBE).
 *
 *   colliding-names-trace OP     OP: create, mkdir, symlink, link, rename, snapshot
 *
 * The trace makes /h and /elsewhere, fills /h with FS_DIR_HASH_PROBE + 1
 * names of one hash, then adds one more of that hash with OP: the line
 * `cowsim run` must refuse with the hash-window message, as the last line.
 */
#include <stdio.h>
#include <string.h>

#include "fs.h"
#include "fs_internal.h"
#include "name_forge.h"

/* A path quoted with every byte of its name escaped: any byte is valid so. */
static void print_path(const char *dir, const char *name)
{
	printf("\"%s/", dir);
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		printf("\\x%02x", *c);
	printf("\"");
}

int main(int argc, char **argv)
{
	enum { CREATE, MKDIR, SYMLINK, LINK, RENAME, SNAPSHOT };
	static const char *const ops[] = { [CREATE] = "create", [MKDIR] = "mkdir", [SYMLINK] = "symlink",
					   [LINK] = "link", [RENAME] = "rename", [SNAPSHOT] = "snapshot" };
	const char *op = argc == 2 ? argv[1] : "";
	size_t known = 0;
	while (known < G_N_ELEMENTS(ops) && strcmp(op, ops[known]))
		known++;
	if (known == G_N_ELEMENTS(ops)) {
		fprintf(stderr, "usage: colliding-names-trace create|mkdir|symlink|link|rename|snapshot\n");
		return 2;
	}
	enum { TAKEN = FS_DIR_HASH_PROBE + 1, NAMES = TAKEN + 1 };
	char names[NAMES][16];
	names_of_hash(names, NAMES, 'w', fs_name_hash("window", 6));
	printf("cowsim-trace 1\nmkdir /h\ncreate /elsewhere size=10\n");
	for (int i = 0; i < TAKEN; i++) {
		printf("create ");
		print_path("/h", names[i]);
		printf(" size=10\n");
	}
	const char *full = names[TAKEN];
	fputs(ops[known], stdout); /* the op that adds the name full */
	switch (known) {
	case CREATE:
	case MKDIR:
		putchar(' ');
		print_path("/h", full);
		fputs(known == CREATE ? " size=10\n" : "\n", stdout);
		break;
	case SYMLINK: /* TARGET PATH */
		fputs(" /elsewhere ", stdout);
		print_path("/h", full);
		putchar('\n');
		break;
	default: /* link and rename EXISTING NEW, snapshot SRC DST */
		fputs(known == SNAPSHOT ? " / " : " /elsewhere ", stdout);
		print_path("/h", full);
		putchar('\n');
		break;
	}
	return 0;
}
