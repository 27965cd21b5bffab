/*
 * results/output_file.c - an output file never half-written under its name,
 * and outputs that alias nothing (see the header for OF1, OF2).
 */
#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

static bool replaceable(const char *path)
{
	struct stat st;
	return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

bool output_file_open(struct output_file *out, const char *path, GError **error)
{
	*out = (struct output_file){ g_strdup(path), NULL, NULL };
	if (!replaceable(path)) {
		out->stream = fopen(path, "w");
		if (!out->stream) {
			g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot open '%s': %s", path,
				    g_strerror(errno));
			g_clear_pointer(&out->path, g_free);
		}
		return out->stream != NULL;
	}
	out->tmp = g_strdup_printf("%s.tmp-XXXXXX", path);
	int fd = g_mkstemp(out->tmp);
	if (fd < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot create '%s': %s", path,
			    g_strerror(errno));
		g_clear_pointer(&out->tmp, g_free);
		g_clear_pointer(&out->path, g_free);
		return false;
	}
	/* mkstemp makes 0600; give the file the mode a plain open would (a
	 * failure leaves it 0600, still ours and usable). */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	out->stream = fdopen(fd, "w");
	return true;
}

int output_file_fd(const struct output_file *out)
{
	return fileno(out->stream);
}

/* Names the path the user gave, not the temporary file (a user never typed it). */
static bool fail(struct output_file *out, GError **error, const char *what)
{
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot %s '%s': %s", what, out->path,
		    g_strerror(errno));
	return false;
}

bool output_file_commit(struct output_file *out, GError **error)
{
	return output_file_commit_to(out, NULL, error);
}

bool output_file_commit_to(struct output_file *out, const char *path, GError **error)
{
	bool ok = fflush(out->stream) == 0 && !ferror(out->stream);
	if (!ok)
		fail(out, error, "write");
	if (ok && out->tmp && fsync(fileno(out->stream)) != 0)
		ok = fail(out, error, "fsync");
	if (fclose(out->stream) != 0 && ok)
		ok = fail(out, error, "close");
	out->stream = NULL;
	if (ok && out->tmp && g_rename(out->tmp, path ? path : out->path) != 0)
		ok = fail(out, error, "rename onto the output");
	if (!ok && out->tmp)
		g_unlink(out->tmp);
	g_clear_pointer(&out->tmp, g_free);
	g_clear_pointer(&out->path, g_free);
	return ok;
}

void output_file_discard(struct output_file *out)
{
	if (out->stream)
		fclose(out->stream);
	if (out->tmp)
		g_unlink(out->tmp);
	g_clear_pointer(&out->tmp, g_free);
	g_clear_pointer(&out->path, g_free);
	out->stream = NULL;
}

/* ---- aliases (OF2) ------------------------------------------------------- */

struct file_name {
	const char *given;
	char *canonical;       /* the folder resolved (symlinks too, if it exists) + the last name */
	bool exists_regular;   /* then dev and ino say which file it is */
	dev_t dev;
	ino_t ino;
	bool special;          /* an existing device, pipe or socket: never an alias */
};

static void file_name_init(struct file_name *f, const char *path)
{
	struct stat st;
	*f = (struct file_name){ .given = path };
	if (stat(path, &st) == 0) {
		f->exists_regular = S_ISREG(st.st_mode);
		f->special = !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
		f->dev = st.st_dev;
		f->ino = st.st_ino;
	}
	g_autofree char *dir = g_path_get_dirname(path);
	g_autofree char *base = g_path_get_basename(path);
	char resolved[PATH_MAX];
	if (realpath(dir, resolved))
		f->canonical = g_build_filename(resolved, base, NULL);
	else
		f->canonical = g_canonicalize_filename(path, NULL);
}

static bool same_file(const struct file_name *a, const struct file_name *b)
{
	if (a->special || b->special)
		return false;
	if (a->exists_regular && b->exists_regular && a->dev == b->dev && a->ino == b->ino)
		return true;
	return strcmp(a->canonical, b->canonical) == 0;
}

static bool skipped(const char *path)
{
	return !path || !strcmp(path, "-");
}

bool output_file_refuse_aliases(const char *const *outputs, size_t n_outputs, const char *const *inputs,
				size_t n_inputs, GError **error)
{
	size_t n = n_outputs + n_inputs;
	g_autofree struct file_name *names = g_new0(struct file_name, n);
	for (size_t i = 0; i < n; i++)
		if (!skipped(i < n_outputs ? outputs[i] : inputs[i - n_outputs]))
			file_name_init(&names[i], i < n_outputs ? outputs[i] : inputs[i - n_outputs]);
	bool ok = true;
	for (size_t i = 0; ok && i < n_outputs; i++) {
		for (size_t j = i + 1; ok && j < n; j++) {
			if (!names[i].given || !names[j].given || !same_file(&names[i], &names[j]))
				continue;
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
				    "the output '%s' is the same file as the %s '%s': refused, nothing written",
				    names[i].given, j < n_outputs ? "output" : "input", names[j].given);
			ok = false;
		}
	}
	for (size_t i = 0; i < n; i++)
		g_free(names[i].canonical);
	return ok;
}
