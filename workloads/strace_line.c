/*
 * workloads/strace_line.c - split strace log lines (see strace_line.h).
 *
 * How a call is split: after "name(" a scanner walks the text keeping a depth
 * for ( [ { and skipping string literals ("..." with backslash escapes),
 * comments (slash-star ... star-slash) and -y fd decorations ("3</path>");
 * a comma at depth 0 ends an argument, the ')' at depth 0 ends the list.
 * What follows is " = RET" (strace pads with spaces to a column), then maybe
 * an errno name and its text in parentheses, or a decoded value.
 */
#include "strace_line.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* "[pid 123] " or "123 " (the -o LOG form); no pid leaves *pid 0. */
static const char *parse_pid(const char *p, int64_t *pid)
{
	*pid = 0;
	if (!strncmp(p, "[pid", 4)) {
		char *end;
		long long v = strtoll(p + 4, &end, 10);
		if (*end != ']' || v <= 0)
			return NULL;
		*pid = v;
		return skip_spaces(end + 1);
	}
	const char *q = p;
	while (isdigit((unsigned char)*q))
		q++;
	if (q == p || (*q != ' ' && *q != '\t'))
		return p; /* no pid column (the digits, if any, are a -ttt time) */
	*pid = strtoll(p, NULL, 10);
	return skip_spaces(q);
}

/* DIGITS[.FRACTION] into nanoseconds; the fraction has 1 to 9 digits. */
static const char *parse_seconds(const char *p, int64_t *ns)
{
	int64_t secs = 0, frac = 0;
	int digits = 0, frac_digits = 0;
	for (; isdigit((unsigned char)*p) && digits < 12; p++, digits++)
		secs = secs * 10 + (*p - '0');
	if (!digits || isdigit((unsigned char)*p))
		return NULL;
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p) && frac_digits < 9; p++, frac_digits++)
			frac = frac * 10 + (*p - '0');
		if (!frac_digits || isdigit((unsigned char)*p))
			return NULL;
		for (int i = frac_digits; i < 9; i++)
			frac *= 10;
	}
	/* 12 digits of seconds pass int64 nanoseconds (the year 2262): refused,
	 * never wrapped. */
	if (__builtin_mul_overflow(secs, INT64_C(1000000000), ns) || __builtin_add_overflow(*ns, frac, ns))
		return NULL;
	return p;
}

/* -ttt "1796298443.163614", -tt "12:34:56.123456", -t "12:34:56". */
static const char *parse_time(const char *p, struct strace_line *out)
{
	out->time_kind = STRACE_TIME_NONE;
	if (!isdigit((unsigned char)*p))
		return p;
	const char *space = p + strcspn(p, " \t");
	if (!memchr(p, ':', (size_t)(space - p)) && !memchr(p, '.', (size_t)(space - p)))
		return p; /* not a time: let the name check complain */
	if (memchr(p, ':', (size_t)(space - p))) {
		int h, m;
		int64_t s;
		if (sscanf(p, "%2d:%2d:", &h, &m) != 2 || h > 23 || m > 59 || p[2] != ':' || p[5] != ':')
			return NULL;
		const char *end = parse_seconds(p + 6, &s);
		if (!end || end != space || s >= INT64_C(60) * 1000000000)
			return NULL;
		out->time_kind = STRACE_TIME_OF_DAY;
		out->time_ns = ((int64_t)h * 3600 + m * 60) * INT64_C(1000000000) + s;
		return skip_spaces(end);
	}
	const char *end = parse_seconds(p, &out->time_ns);
	if (!end || end != space)
		return NULL;
	out->time_kind = STRACE_TIME_EPOCH;
	return skip_spaces(end);
}

static size_t name_length(const char *p)
{
	size_t n = 0;
	while (isalnum((unsigned char)p[n]) || p[n] == '_')
		n++;
	return n;
}

static const char *parse_resumed(const char *p, struct strace_line *out)
{
	static const char tag[] = " resumed>";
	const char *end = strstr(p, tag);
	if (!end)
		return "'<...' without 'resumed>'";
	p = skip_spaces(p + 4);
	out->kind = STRACE_LINE_RESUMED;
	out->name = p;
	out->name_len = end > p ? (size_t)(end - p) : 0;
	if (out->name_len != name_length(p) && out->name_len)
		return "bad system call name in '<... resumed>'";
	out->rest = end + strlen(tag);
	out->rest_len = strlen(out->rest);
	return NULL;
}

const char *strace_line_parse(const char *line, struct strace_line *out)
{
	static const char unfinished[] = "<unfinished ...>";
	memset(out, 0, sizeof(*out));
	const char *p = parse_pid(skip_spaces(line), &out->pid);
	if (!p)
		return "bad '[pid N]' prefix";
	if (!(p = parse_time(p, out)))
		return "bad timestamp (expected -ttt SECONDS.FRACTION or -tt HH:MM:SS.FRACTION)";
	if (!strncmp(p, "+++ ", 4)) {
		out->kind = STRACE_LINE_EXIT;
		return NULL;
	}
	if (!strncmp(p, "--- ", 4)) {
		out->kind = STRACE_LINE_SIGNAL;
		return NULL;
	}
	if (!strncmp(p, "<...", 4))
		return parse_resumed(p, out);
	out->name = p;
	out->name_len = name_length(p);
	if (!out->name_len || p[out->name_len] != '(')
		return "expected a system call 'name(' after the pid and time";
	out->rest = p;
	out->rest_len = strlen(p);
	while (out->rest_len && (p[out->rest_len - 1] == ' ' || p[out->rest_len - 1] == '\r'))
		out->rest_len--;
	size_t ul = strlen(unfinished);
	if (out->rest_len >= ul && !memcmp(p + out->rest_len - ul, unfinished, ul)) {
		out->kind = STRACE_LINE_UNFINISHED;
		out->rest_len -= ul;
		if (out->rest_len && p[out->rest_len - 1] == ' ')
			out->rest_len--; /* keep "read(3, " so that "read(3, " + "\"x\", 9) = 1" joins */
		return NULL;
	}
	out->kind = STRACE_LINE_CALL;
	return NULL;
}

/* --- calls ----------------------------------------------------------------------- */

void strace_call_init(struct strace_call *call)
{
	memset(call, 0, sizeof(*call));
	call->storage = g_string_new(NULL);
}

void strace_call_clear(struct strace_call *call)
{
	if (call->storage)
		g_string_free(call->storage, TRUE);
	memset(call, 0, sizeof(*call));
}

/* Skip a string literal starting at *p == '"'; NULL if it does not end. */
static const char *skip_string(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\' && p + 1 < end)
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* The end of the argument list: the ')' at depth 0; NULL with *reason on failure. */
static const char *split_args(const char *p, const char *end, size_t *offsets, size_t *lens, size_t *argc,
			      const char *base, const char **reason)
{
	int depth = 0;
	const char *start = p;
	*argc = 0;
	for (; p < end; p++) {
		if (*p == '"') {
			if (!(p = skip_string(p, end))) {
				*reason = "unterminated string";
				return NULL;
			}
			p--;
		} else if (*p == '/' && p + 1 < end && p[1] == '*') {
			const char *close = g_strstr_len(p + 2, end - p - 2, "*/");
			if (!close) {
				*reason = "unterminated comment";
				return NULL;
			}
			p = close + 1;
		} else if (*p == '<' && p > start && isdigit((unsigned char)p[-1])) {
			const char *close = memchr(p, '>', (size_t)(end - p));
			if (!close) {
				*reason = "unterminated fd decoration '<'";
				return NULL;
			}
			p = close;
		} else if (*p == '(' || *p == '[' || *p == '{') {
			depth++;
		} else if ((*p == ']' || *p == '}') && depth > 0) {
			depth--;
		} else if (*p == ')' && depth > 0) {
			depth--;
		} else if ((*p == ',' && depth == 0) || *p == ')') {
			const char *a = skip_spaces(start), *b = p;
			while (b > a && b[-1] == ' ')
				b--;
			if (b > a && *argc < STRACE_CALL_MAX_ARGS) {
				offsets[*argc] = (size_t)(a - base);
				lens[*argc] = (size_t)(b - a);
				(*argc)++;
			}
			if (*p == ')')
				return p + 1;
			start = p + 1;
		}
	}
	*reason = "no ')' closing the arguments";
	return NULL;
}

/* " = RET [ERRNO (text)]" after the arguments. */
static const char *parse_result(const char *p, const char *end, struct strace_call *call)
{
	p = skip_spaces(p);
	if (p >= end || *p != '=')
		return "no '= RESULT' after the arguments";
	p = skip_spaces(p + 1);
	if (p < end && *p == '?') {
		call->ret_unknown = call->failed = true;
		return NULL;
	}
	char buf[32];
	size_t n = strcspn(p, " \t");
	if (n == 0 || n >= sizeof(buf) || p + n > end)
		return "bad result value";
	memcpy(buf, p, n);
	buf[n] = '\0';
	char *stop;
	errno = 0;
	call->ret = strtoll(buf, &stop, 0);
	if (*stop || errno)
		return "bad result value";
	const char *after = skip_spaces(p + n);
	call->failed = call->ret == -1 && after < end && *after == 'E';
	return NULL;
}

const char *strace_call_parse(const char *text, size_t len, struct strace_call *call)
{
	size_t offsets[STRACE_CALL_MAX_ARGS], lens[STRACE_CALL_MAX_ARGS];
	const char *end = text + len, *reason = NULL;
	size_t n = name_length(text);
	if (!n || n >= sizeof(call->name) || n >= len || text[n] != '(')
		return "expected a system call 'name('";
	memcpy(call->name, text, n);
	call->name[n] = '\0';
	call->ret = 0;
	call->ret_unknown = call->failed = false;
	const char *after = split_args(text + n + 1, end, offsets, lens, &call->argc, text, &reason);
	if (!after)
		return reason;
	if ((reason = parse_result(after, end, call)))
		return reason;
	size_t at[STRACE_CALL_MAX_ARGS];
	g_string_truncate(call->storage, 0);
	for (size_t i = 0; i < call->argc; i++) {
		at[i] = call->storage->len;
		g_string_append_len(call->storage, text + offsets[i], (gssize)lens[i]);
		g_string_append_c(call->storage, '\0');
	}
	for (size_t i = 0; i < call->argc; i++)
		call->args[i] = call->storage->str + at[i];
	return NULL;
}

/* --- arguments --------------------------------------------------------------------- */

const char *strace_arg_int(const char *arg, int64_t *out)
{
	char *stop;
	errno = 0;
	long long v = strtoll(arg, &stop, 0);
	if (stop == arg || errno || (*stop && *stop != '<'))
		return "not a number";
	*out = v;
	return NULL;
}

static int hex_value(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10);
}

/* One escape after a backslash at *p; returns the byte and advances *p. */
static int decode_escape(const char **p)
{
	static const char from[] = "nrtvfab\\\"'?", to[] = "\n\r\t\v\f\a\b\\\"'?";
	const char *s = *p;
	const char *hit = strchr(from, *s);
	if (*s && hit) {
		*p = s + 1;
		return (unsigned char)to[hit - from];
	}
	if (*s == 'x' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
		*p = s + 3;
		return hex_value(s[1]) * 16 + hex_value(s[2]);
	}
	if (*s >= '0' && *s <= '7') {
		int v = 0, i = 0;
		for (; i < 3 && s[i] >= '0' && s[i] <= '7'; i++)
			v = v * 8 + (s[i] - '0');
		*p = s + i;
		return v > 255 ? -1 : v;
	}
	return -1;
}

const char *strace_arg_string(const char *arg, GString *out, bool *truncated)
{
	g_string_truncate(out, 0);
	if (*arg != '"')
		return "not a string";
	const char *p = arg + 1;
	while (*p && *p != '"') {
		if (*p != '\\') {
			g_string_append_c(out, *p++);
			continue;
		}
		p++;
		int c = decode_escape(&p);
		if (c <= 0)
			return "bad escape in string";
		g_string_append_c(out, (char)c);
	}
	if (*p != '"')
		return "unterminated string";
	*truncated = !strcmp(p + 1, "...");
	if (p[1] && !*truncated)
		return "text after the string";
	return NULL;
}

bool strace_arg_has_flag(const char *arg, const char *flag)
{
	size_t n = strlen(flag);
	for (const char *p = arg; (p = strstr(p, flag)); p += n) {
		bool starts = p == arg || p[-1] == '|' || p[-1] == '{' || p[-1] == '=' || p[-1] == ' ';
		bool ends = !isalnum((unsigned char)p[n]) && p[n] != '_';
		if (starts && ends)
			return true;
	}
	return false;
}

bool strace_arg_fd_path(const char *arg, GString *out)
{
	const char *open = strchr(arg, '<');
	size_t len = strlen(arg);
	if (!open || open == arg || !isdigit((unsigned char)open[-1]) || len < 2 || arg[len - 1] != '>')
		return false;
	g_string_truncate(out, 0);
	g_string_append_len(out, open + 1, (gssize)(arg + len - 1 - open - 1));
	return out->len > 0 && out->str[0] == '/';
}
