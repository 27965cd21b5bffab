/*
 * results/output_file.h - an output file that never shows half-written
 * under its name, and outputs that cannot overwrite an input or each other.
 *
 * How it works
 *   A regular file, or a path that does not exist yet, is written to
 *   PATH.tmp-XXXXXX beside it (same folder, so same filesystem) and renamed
 *   onto PATH by output_file_commit() once everything is written, flushed and
 *   fsynced. Until then PATH is as it was: a run killed (SIGKILL, a crash, a
 *   power cut) leaves PATH untouched and at most a PATH.tmp-XXXXXX behind.
 *   Two writers of one PATH each write their own temporary file, so PATH ends
 *   as one writer's whole file, never a mix. A path that is not a regular
 *   file (a pipe, a terminal, /dev/null, /dev/full) cannot be replaced and is
 *   written in place; its write errors are still reported.
 *
 *   Rows can be streamed to the file (output_file_fd(), or out->stream for
 *   stdio users): the rename happens once, at commit.
 *
 * Invariants
 *   OF1  While open, out->stream writes to out->tmp when it is set, and PATH is
 *       untouched until the rename in output_file_commit().
 *   OF2  output_file_refuse_aliases() opens nothing: it only stats and compares,
 *       so a refused command has changed no file.
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
/* The file descriptor behind out->stream, for writers of whole lines. */
int output_file_fd(const struct output_file *out);
/* Flush, fsync, close and rename; false with *error set (and PATH as it was). */
bool output_file_commit(struct output_file *out, GError **error);
/* The same, renamed onto `path` instead of PATH (NULL: PATH), which stays as
 * it was: where a run that stopped early keeps the lines it wrote (PATH.partial).
 * A file written in place (not replaceable) is only closed. */
bool output_file_commit_to(struct output_file *out, const char *path, GError **error);
/* Close and remove the temporary file: PATH stays as it was. */
void output_file_discard(struct output_file *out);

/*
 * Refuses, before anything is opened (OF2), an output that names an input or
 * another output: the same path once "." , ".." and symlinked folders are
 * resolved, or an existing file with the same device and inode (a hard link,
 * a symlink). NULL entries and "-" (standard input or output) are skipped, and
 * so are devices and pipes (two outputs to /dev/null are fine). False with a
 * G_FILE_ERROR naming both paths.
 */
bool output_file_refuse_aliases(const char *const *outputs, size_t n_outputs, const char *const *inputs,
				size_t n_inputs, GError **error);

#endif
