/*
 * workloads/trace_syntax.c - numbers, times, durations and quoting of the
 * trace format (see trace_syntax.h and docs/trace-format.md).
 *
 * Every parser accumulates in a wider or checked type and rejects a value
 * the moment it would leave its range, so no field ever wraps around.
 * Times and durations are exact: a fraction is scaled with 128-bit
 * arithmetic and must land on a whole nanosecond.
 */
#include "trace_syntax.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define NS_PER_SEC UINT64_C(1000000000)
#define FRACTION_DIGITS_MAX 9

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parse the run of digits at s[*pos..len); fails on none or on overflow past MAX. */
static const char *parse_digits(const char *s, size_t len, size_t *pos, uint64_t max, uint64_t *out)
{
	uint64_t value = 0, limit = max / 10, last = max % 10; /* value * 10 + digit <= max */
	size_t start = *pos, i = start;

	for (; i < len && is_digit(s[i]); i++) {
		uint64_t digit = (uint64_t)(s[i] - '0');
		if (value > limit || (value == limit && digit > last)) {
			*pos = i;
			return "out of range";
		}
		value = value * 10 + digit;
	}
	*pos = i;
	if (i == start)
		return "not a number";
	*out = value;
	return NULL;
}

/* Parse ".DDD" at s[*pos..): at most 9 digits; returns the digits' value and count. */
static const char *parse_fraction(const char *s, size_t len, size_t *pos, uint64_t *value, int *digits)
{
	*value = 0;
	*digits = 0;
	if (*pos >= len || s[*pos] != '.')
		return NULL;
	(*pos)++;
	for (; *pos < len && is_digit(s[*pos]); (*pos)++) {
		if (++*digits > FRACTION_DIGITS_MAX)
			return "fraction longer than 9 digits";
		*value = *value * 10 + (uint64_t)(s[*pos] - '0');
	}
	return *digits == 0 ? "not a number" : NULL;
}

const char *trace_syntax_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	size_t pos = 0;
	const char *reason = parse_digits(s, len, &pos, max, out);

	if (reason)
		return reason;
	return pos == len ? NULL : "not a number";
}

static int size_shift(char suffix)
{
	switch (suffix) {
	case 'K': return 10;
	case 'M': return 20;
	case 'G': return 30;
	case 'T': return 40;
	default: return -1;
	}
}

const char *trace_syntax_parse_size(const char *s, size_t len, uint64_t *out)
{
	size_t pos = 0;
	uint64_t value;
	const char *reason = parse_digits(s, len, &pos, UINT64_MAX, &value);

	if (reason)
		return reason;
	if (pos == len) {
		*out = value;
		return NULL;
	}
	int shift = size_shift(s[pos]);
	if (shift < 0 || pos + 1 != len)
		return "not a number";
	if (value > (UINT64_MAX >> shift))
		return "out of range";
	*out = value << shift;
	return NULL;
}

const char *trace_syntax_parse_mode(const char *s, size_t len, uint32_t *out)
{
	uint32_t value = 0;

	if (len == 0)
		return "not an octal mode";
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '7')
			return "not an octal mode";
		value = value * 8 + (uint32_t)(s[i] - '0');
		if (value > 07777)
			return "out of range (mode is permission bits, at most 07777)";
	}
	*out = value;
	return NULL;
}

const char *trace_syntax_parse_time(const char *s, size_t len, int64_t *out_ns)
{
	bool negative = len > 0 && s[0] == '-';
	/* The magnitude may reach 2^63 only for a negative time (INT64_MIN). */
	uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	size_t pos = negative ? 1 : 0;
	uint64_t seconds, fraction;
	int digits;
	const char *reason = parse_digits(s, len, &pos, limit / NS_PER_SEC, &seconds);

	if (!reason)
		reason = parse_fraction(s, len, &pos, &fraction, &digits);
	if (reason)
		return reason;
	if (pos != len)
		return "not a number";
	for (int d = digits; d < FRACTION_DIGITS_MAX; d++)
		fraction *= 10;
	if (seconds * NS_PER_SEC > limit - fraction)
		return "out of range";
	uint64_t magnitude = seconds * NS_PER_SEC + fraction;
	*out_ns = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
	return NULL;
}

/* Nanoseconds per duration unit; 0 for an unknown unit. */
static uint64_t duration_unit_ns(const char *unit, size_t len)
{
	static const struct { const char *name; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", NS_PER_SEC },
		{ "m", 60 * NS_PER_SEC }, { "h", 3600 * NS_PER_SEC }, { "d", 86400 * NS_PER_SEC },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(units); i++)
		if (strlen(units[i].name) == len && !memcmp(units[i].name, unit, len))
			return units[i].ns;
	return 0;
}

const char *trace_syntax_parse_duration(const char *s, size_t len, int64_t *out_ns)
{
	size_t pos = 0;
	uint64_t whole, fraction;
	int digits;
	const char *reason = parse_digits(s, len, &pos, UINT64_MAX, &whole);

	if (!reason)
		reason = parse_fraction(s, len, &pos, &fraction, &digits);
	if (reason)
		return reason;
	if (pos == len)
		return "missing unit (ns, us, ms, s, m, h or d)";
	uint64_t unit = duration_unit_ns(s + pos, len - pos);
	if (unit == 0)
		return "unknown unit (want ns, us, ms, s, m, h or d)";

	unsigned __int128 scale = 1;
	for (int d = 0; d < digits; d++)
		scale *= 10;
	unsigned __int128 fraction_ns = (unsigned __int128)fraction * unit;
	if (fraction_ns % scale != 0)
		return "not a whole number of nanoseconds";
	unsigned __int128 total = (unsigned __int128)whole * unit + fraction_ns / scale;
	if (total > INT64_MAX)
		return "out of range";
	*out_ns = (int64_t)total;
	return NULL;
}

void trace_syntax_format_time(char buf[TRACE_SYNTAX_NUMBER_MAX], int64_t ns)
{
	uint64_t magnitude = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	uint64_t seconds = magnitude / NS_PER_SEC, fraction = magnitude % NS_PER_SEC;
	const char *sign = ns < 0 ? "-" : "";

	if (fraction == 0) {
		snprintf(buf, TRACE_SYNTAX_NUMBER_MAX, "%s%" PRIu64, sign, seconds);
		return;
	}
	int n = snprintf(buf, TRACE_SYNTAX_NUMBER_MAX, "%s%" PRIu64 ".%09" PRIu64, sign, seconds, fraction);
	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = '\0';
}

void trace_syntax_format_duration(char buf[TRACE_SYNTAX_NUMBER_MAX], int64_t ns)
{
	/* The largest unit that divides exactly keeps the trace readable: +1d, +30s, +1500ms. */
	static const struct { const char *name; int64_t ns; } units[] = {
		{ "d", 86400 * (int64_t)NS_PER_SEC }, { "h", 3600 * (int64_t)NS_PER_SEC },
		{ "m", 60 * (int64_t)NS_PER_SEC }, { "s", (int64_t)NS_PER_SEC },
		{ "ms", 1000000 }, { "us", 1000 },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
		if (ns != 0 && ns % units[i].ns == 0) {
			snprintf(buf, TRACE_SYNTAX_NUMBER_MAX, "%" PRId64 "%s", ns / units[i].ns, units[i].name);
			return;
		}
	}
	snprintf(buf, TRACE_SYNTAX_NUMBER_MAX, "%" PRId64 "ns", ns);
}

/* Bytes a token may hold unquoted: printable ASCII except the ones the lexer gives meaning. */
static bool is_plain_byte(unsigned char c)
{
	return c > ' ' && c < 0x7f && c != '"' && c != '\\' && c != '#' && c != '=';
}

bool trace_syntax_needs_quotes(const char *s, size_t len)
{
	if (len == 0)
		return true;
	for (size_t i = 0; i < len; i++)
		if (!is_plain_byte((unsigned char)s[i]))
			return true;
	return false;
}

static void append_escaped(GString *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			g_string_append_printf(out, "\\%c", c);
		else if (c == '\n')
			g_string_append(out, "\\n");
		else if (c == '\t')
			g_string_append(out, "\\t");
		else if (c < ' ' || c >= 0x7f)
			g_string_append_printf(out, "\\x%02x", c);
		else
			g_string_append_c(out, (char)c);
	}
}

void trace_syntax_append_token(GString *out, const char *s)
{
	size_t len = strlen(s);

	if (!trace_syntax_needs_quotes(s, len)) {
		g_string_append_len(out, s, (gssize)len);
		return;
	}
	g_string_append_c(out, '"');
	append_escaped(out, s, len);
	g_string_append_c(out, '"');
}

char *trace_syntax_display(const char *s, size_t len)
{
	GString *out = g_string_sized_new(len + 8);

	append_escaped(out, s, len);
	return g_string_free(out, FALSE);
}

/* --- grammar ---------------------------------------------------------------- */

#define TIMES (TRACE_KEY_ATIME | TRACE_KEY_MTIME | TRACE_KEY_CTIME)
#define OWNER (TRACE_KEY_MODE | TRACE_KEY_UID | TRACE_KEY_GID)
#define PATH_ARG(field) { field, TRACE_VALUE_PATH, TRACE_SLOT_PATH }

/* Indexed by enum trace_op_kind; the order of docs/trace-format.md. */
static const struct trace_grammar grammars[TRACE_OP_KIND_COUNT] = {
	[TRACE_MKDIR] = { "mkdir", { PATH_ARG("path") }, 1, 1, OWNER | TIMES, 0, false, false, 0755 },
	[TRACE_CREATE] = { "create", { PATH_ARG("path") }, 1, 1, TRACE_KEY_SIZE | OWNER | TIMES,
			   TRACE_KEY_SIZE, false, false, 0644 },
	[TRACE_WRITE] = { "write", { PATH_ARG("path"), { "offset", TRACE_VALUE_SIZE, TRACE_SLOT_OFFSET },
				     { "length", TRACE_VALUE_SIZE, TRACE_SLOT_LENGTH } }, 3, 3 },
	[TRACE_TRUNCATE] = { "truncate", { PATH_ARG("path"), { "size", TRACE_VALUE_SIZE, TRACE_SLOT_SIZE } }, 2, 2 },
	[TRACE_READ] = { "read", { PATH_ARG("path"), { "offset", TRACE_VALUE_SIZE, TRACE_SLOT_OFFSET },
				   { "length", TRACE_VALUE_SIZE, TRACE_SLOT_LENGTH } }, 1, 3 },
	[TRACE_STAT] = { "stat", { PATH_ARG("path") }, 1, 1 },
	[TRACE_READDIR] = { "readdir", { PATH_ARG("dir") }, 1, 1 },
	[TRACE_RENAME] = { "rename", { PATH_ARG("old"), { "new", TRACE_VALUE_PATH, TRACE_SLOT_PATH2 } }, 2, 2 },
	[TRACE_LINK] = { "link", { PATH_ARG("existing"), { "new", TRACE_VALUE_PATH, TRACE_SLOT_PATH2 } }, 2, 2 },
	[TRACE_SYMLINK] = { "symlink", { { "target", TRACE_VALUE_STRING, TRACE_SLOT_PATH2 }, PATH_ARG("path") }, 2, 2 },
	[TRACE_UNLINK] = { "unlink", { PATH_ARG("path") }, 1, 1 },
	[TRACE_RMDIR] = { "rmdir", { PATH_ARG("path") }, 1, 1 },
	[TRACE_SNAPSHOT] = { "snapshot", { PATH_ARG("src"), { "dst", TRACE_VALUE_PATH, TRACE_SLOT_PATH2 } }, 2, 2,
			     0, 0, false, true },
	[TRACE_DELETE_SNAPSHOT] = { "delete-snapshot", { PATH_ARG("path") }, 1, 1 },
	[TRACE_CLOCK] = { "clock", { { "time", TRACE_VALUE_CLOCK, TRACE_SLOT_CLOCK } }, 1, 1 },
	[TRACE_SYNC] = { "sync", { { 0 } }, 0, 0 },
	[TRACE_MARK] = { "mark", { { "label", TRACE_VALUE_STRING, TRACE_SLOT_PATH2 } }, 1, 1 },
	[TRACE_REMOUNT] = { "remount", { { "options", TRACE_VALUE_STRING, TRACE_SLOT_PATH2 } }, 1, 1 },
	[TRACE_SETTIME] = { "settime", { PATH_ARG("path") }, 1, 1, TRACE_KEY_ATIME | TRACE_KEY_MTIME, 0, true },
	[TRACE_FSYNC] = { "fsync", { PATH_ARG("path") }, 1, 1 },
};

const struct trace_grammar *trace_syntax_grammar(enum trace_op_kind kind)
{
	g_assert((int)kind >= 0 && (int)kind < TRACE_OP_KIND_COUNT);
	return &grammars[kind];
}

/* Each name with its length, so the reader's lookup needs no strlen. */
#define KEY_NAME(s) { s, sizeof(s) - 1 }
static const struct { const char *name; size_t len; } key_names[TRACE_KEY_COUNT] = {
	KEY_NAME("size"), KEY_NAME("mode"), KEY_NAME("uid"), KEY_NAME("gid"),
	KEY_NAME("atime"), KEY_NAME("mtime"), KEY_NAME("ctime"),
};

bool trace_syntax_kind_from_token(const char *s, size_t len, enum trace_op_kind *kind)
{
	for (int k = 0; k < TRACE_OP_KIND_COUNT; k++) {
		const char *name = grammars[k].name;
		/* The first byte tells most keywords apart; the NUL after a match rules out a prefix. */
		if (len > 0 && name[0] == s[0] && !strncmp(name, s, len) && name[len] == '\0') {
			*kind = (enum trace_op_kind)k;
			return true;
		}
	}
	return false;
}

const char *trace_syntax_key_name(unsigned key)
{
	for (int i = 0; i < TRACE_KEY_COUNT; i++)
		if (key == 1u << i)
			return key_names[i].name;
	return "?";
}

unsigned trace_syntax_key_from_name(const char *name, size_t len)
{
	for (int i = 0; i < TRACE_KEY_COUNT; i++)
		if (key_names[i].len == len && !memcmp(key_names[i].name, name, len))
			return 1u << i;
	return 0;
}

/* Why the component s[0..len) cannot be part of a path, or NULL. */
static const char *component_problem(const char *s, size_t len)
{
	if (len == 0)
		return "empty path component (\"//\" or a trailing '/')";
	if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
		return "'.' and '..' components are not allowed";
	if (len > TRACE_NAME_MAX)
		return "path component longer than 255 bytes";
	return NULL;
}

/* True when the component after the '/' at S[I] is empty, "." or "..". */
static bool component_is_special(const char *s, size_t len, size_t i)
{
	char next = i + 1 < len ? s[i + 1] : '/';
	if (next == '/')
		return true;
	if (next != '.')
		return false;
	char after = i + 2 < len ? s[i + 2] : '/';
	return after == '/' || (after == '.' && (i + 3 >= len || s[i + 3] == '/'));
}

/* True when S is certainly a good path: an absolute path of at most 256 bytes (so no component can
 * pass 255), no NUL, no empty, "." or ".." component.  Eight bytes at a time; false sends the path
 * to the exact check, which names the first problem. */
static bool path_is_plainly_good(const char *s, size_t len)
{
	if (G_BYTE_ORDER != G_LITTLE_ENDIAN || len < 2 || len > TRACE_NAME_MAX + 1 || s[0] != '/')
		return false;
	for (size_t base = 0; base < len; base += 8) {
		uint64_t word = TRACE_BYTES_01; /* bytes past the end read as 0x01: neither NUL nor '/' */
		if (base + 8 <= len)
			memcpy(&word, s + base, 8); /* a constant size: one load, no call */
		else
			for (size_t i = base; i < len; i++)
				word = (word & ~(UINT64_C(0xff) << 8 * (i - base))) |
				       (uint64_t)(unsigned char)s[i] << 8 * (i - base);
		if (trace_bytes_below(word, 1))
			return false;
		for (uint64_t slashes = trace_bytes_equal(word, '/'); slashes; slashes &= slashes - 1)
			if (component_is_special(s, len, base + (size_t)__builtin_ctzll(slashes) / 8))
				return false;
	}
	return true;
}

const char *trace_syntax_path_problem(const char *s, size_t len)
{
	if (path_is_plainly_good(s, len))
		return NULL;
	const char *reason = trace_syntax_string_problem(s, len);

	if (reason)
		return reason;
	if (s[0] != '/')
		return "not an absolute path";
	if (len == 1)
		return NULL; /* the mount root */
	/* Component by component, memchr finding each '/': the first problem in path order. */
	const char *end = s + len;
	for (const char *c = s + 1;;) {
		const char *slash = memchr(c, '/', (size_t)(end - c));
		const char *stop = slash ? slash : end;
		reason = component_problem(c, (size_t)(stop - c));
		if (reason || !slash)
			return reason;
		c = slash + 1;
	}
}

const char *trace_syntax_string_problem(const char *s, size_t len)
{
	if (len == 0)
		return "empty";
	if (memchr(s, '\0', len))
		return "contains a NUL byte";
	if (len > TRACE_PATH_MAX)
		return "longer than 4095 bytes";
	return NULL;
}
