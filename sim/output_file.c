/*
 * sim/output_file.c - an output file written whole or not at all (see the
 * header).
 *
 * Invariant: while open, out->stream writes to out->tmp when it is set, and
 * PATH is untouched until the rename in output_file_commit().
 */
#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
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
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot create '%s': %s", out->tmp,
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

static bool fail(struct output_file *out, GError **error, const char *what)
{
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot %s '%s': %s", what,
		    out->tmp ? out->tmp : out->path, g_strerror(errno));
	return false;
}

bool output_file_commit(struct output_file *out, GError **error)
{
	bool ok = fflush(out->stream) == 0 && !ferror(out->stream);
	if (!ok)
		fail(out, error, "write");
	if (ok && out->tmp && fsync(fileno(out->stream)) != 0)
		ok = fail(out, error, "fsync");
	if (fclose(out->stream) != 0 && ok)
		ok = fail(out, error, "close");
	out->stream = NULL;
	if (ok && out->tmp && g_rename(out->tmp, out->path) != 0)
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
