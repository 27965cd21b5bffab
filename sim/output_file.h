/*
 * sim/output_file.h - an output file written whole or not at all.
 *
 * A regular file, or a path that does not exist yet, is written to
 * PATH.tmp-XXXXXX beside it and renamed onto PATH by output_file_commit()
 * once everything is written, flushed and fsynced: a failure leaves PATH as
 * it was. A path that is not a regular file (a pipe, a terminal, /dev/null,
 * /dev/full) cannot be replaced and is written in place; its write errors
 * are still reported.
 *
 * Ownership: output_file_open() fills *out; exactly one of commit or discard
 * releases it.
 */
#ifndef COWSIM_OUTPUT_FILE_H
#define COWSIM_OUTPUT_FILE_H

#include <stdbool.h>
#include <stdio.h>

#include <glib.h>

struct output_file {
	char *path;
	char *tmp;                    /* NULL when written in place */
	FILE *stream;
};

bool output_file_open(struct output_file *out, const char *path, GError **error);
/* Flush, fsync, close and rename; false with *error set (and PATH as it was). */
bool output_file_commit(struct output_file *out, GError **error);
/* Close and remove the temporary file: PATH stays as it was. */
void output_file_discard(struct output_file *out);

#endif
