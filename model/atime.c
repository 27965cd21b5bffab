/*
 * model/atime.c - Linux's atime decision, see atime.h.
 */
#include "atime.h"

#include <stdio.h>
#include <string.h>

#include "constants.h"

static bool relatime_need_update(const struct atime_times *t, int64_t now)
{
	if (t->mtime >= t->atime)
		return true;
	if (t->ctime >= t->atime)
		return true;
	/* An atime may be as old as 1678: now - atime can pass INT64_MAX, and
	 * is then older than any limit. */
	int64_t age;
	if (__builtin_sub_overflow(now, t->atime, &age))
		return t->atime < 0;
	return age >= LINUX_RELATIME_MAX_AGE_NS;
}

bool atime_needs_update(const struct atime_options *options, bool is_directory,
			const struct atime_times *times, int64_t now)
{
	if (options->mode == ATIME_NOATIME)
		return false;
	if (options->nodiratime && is_directory)
		return false;
	if (options->mode == ATIME_RELATIME && !relatime_need_update(times, now))
		return false;
	/* touch_atime: nothing to write when the time would not change. */
	return times->atime != now;
}

static bool apply_word(const char *word, int length, struct atime_options *o)
{
#define IS(w) (length == (int)strlen(w) && !strncmp(word, w, (size_t)length))
	if (IS("relatime"))
		o->mode = ATIME_RELATIME;
	else if (IS("strictatime"))
		o->mode = ATIME_STRICT;
	else if (IS("noatime"))
		o->mode = ATIME_NOATIME;
	else if (IS("nodiratime"))
		o->nodiratime = true;
	else if (IS("diratime"))
		o->nodiratime = false;
	else if (IS("lazytime"))
		o->lazytime = true;
	else if (IS("nolazytime"))
		o->lazytime = false;
	else if (IS("atime"))
		o->mode = ATIME_RELATIME;
	else
		return false;
#undef IS
	return true;
}

bool atime_parse_options(const char *text, struct atime_options *options, const char **bad_word,
			 int *bad_length)
{
	const char *p = text;
	while (*p) {
		const char *end = strchr(p, ',');
		int length = end ? (int)(end - p) : (int)strlen(p);
		if (length && !apply_word(p, length, options)) {
			*bad_word = p;
			*bad_length = length;
			return false;
		}
		p += length;
		if (*p == ',')
			p++;
	}
	return true;
}

void atime_format_options(const struct atime_options *options, char *buffer, unsigned size)
{
	static const char *const modes[] = { "relatime", "strictatime", "noatime" };
	snprintf(buffer, size, "%s%s%s", modes[options->mode], options->nodiratime ? ",nodiratime" : "",
		 options->lazytime ? ",lazytime" : "");
}
