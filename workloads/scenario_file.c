/*
 * workloads/scenario_file.c - parse and check a scenario file (scenario_file.h).
 *
 * GLib's GKeyFile parses the text but keeps no line numbers, so a first pass
 * over the lines (map_lines) records where each group and key is, rejects
 * what GKeyFile would reject (with the line), and keys given twice (GKeyFile
 * would keep the last silently).  Then every group and key is checked
 * against the tables below (SF1) and read into the spec.
 */
#include "scenario_file.h"

#include <stdarg.h>
#include <string.h>

#include "trace_syntax.h"

#define DAY_NS TRACE_NS_PER_DAY
#define MINUTE_NS (INT64_C(60) * TRACE_NS_PER_SEC)

struct reader {
	const char *path;
	GKeyFile *kf;
	GHashTable *lines;       /* "group\nkey" or "group" -> line number (GINT_TO_POINTER) */
	GHashTable *set;         /* "group\nkey" given with --set */
	GError **error;
};

static const char *const job_types[] = {
	[SCENARIO_SNAPSHOT] = "snapshot", [SCENARIO_READ_ALL] = "read-all", [SCENARIO_BACKUP] = "backup",
	[SCENARIO_FIND] = "find", [SCENARIO_TAR] = "tar", [SCENARIO_MUTT] = "mutt",
	[SCENARIO_TMPWATCH] = "tmpwatch", [SCENARIO_HSM_SCAN] = "hsm-scan", [SCENARIO_CHURN] = "churn",
	[SCENARIO_MARK] = "mark",
};

/* The keys each group takes, besides a job's type, schedule and mark. */
static const char *const scenario_keys[] = { "start", "days", "seed", NULL };
static const char *const tree_keys[] = { "files", "from-dir", "prefix", "order", "files-per-dir",
					 "depth-mean", "max-file-size", NULL };
static const char *const job_keys[SCENARIO_MARK + 1][8] = {
	[SCENARIO_SNAPSHOT] = { "keep", "readonly", "dir", "name", NULL },
	[SCENARIO_MUTT] = { "mailboxes", "mails-per-day", "dir", NULL },
	[SCENARIO_TMPWATCH] = { "days", "dir", NULL },
	[SCENARIO_HSM_SCAN] = { "cold-days", "read-fraction", NULL },
	[SCENARIO_CHURN] = { "appends", "overwrites", "creates", "deletes", "write-size", "size-dist", "dir", NULL },
};

/* --- where a value came from ---------------------------------------------------- */

static char *key_id(const char *group, const char *key)
{
	return key ? g_strdup_printf("%s\n%s", group, key) : g_strdup(group);
}

/* "FILE:LINE: [group] key" or "--set group.key". */
static char *where(const struct reader *r, const char *group, const char *key)
{
	g_autofree char *id = key_id(group, key);
	if (key && g_hash_table_contains(r->set, id))
		return g_strdup_printf("--set %s.%s", group, key);
	int line = GPOINTER_TO_INT(g_hash_table_lookup(r->lines, id));
	if (!line) /* a missing key: the group's header */
		line = GPOINTER_TO_INT(g_hash_table_lookup(r->lines, group));
	if (!key)
		return g_strdup_printf("%s:%d: [%s]", r->path, line, group);
	return g_strdup_printf("%s:%d: [%s] %s", r->path, line, group, key);
}

static bool fail(const struct reader *r, const char *group, const char *key, const char *format, ...)
	G_GNUC_PRINTF(4, 5);
static bool fail(const struct reader *r, const char *group, const char *key, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	g_autofree char *reason = g_strdup_vprintf(format, args);
	va_end(args);
	g_autofree char *place = where(r, group, key);
	g_set_error(r->error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS, "%s: %s", place, reason);
	return false;
}

/* --- the first pass: lines ----------------------------------------------------- */

static bool bad_line(struct reader *r, const char *line, int number)
{
	g_set_error(r->error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS,
		    "%s:%d: '%s' is not a [group], a key = value or a # comment", r->path, number, line);
	return false;
}

static bool map_line(struct reader *r, char *line, int number, char **group)
{
	g_strstrip(line);
	if (!*line || *line == '#')
		return true;
	if (*line == '[') {
		size_t n = strlen(line);
		if (line[n - 1] != ']' || n < 3)
			return bad_line(r, line, number);
		g_free(*group);
		*group = g_strndup(line + 1, n - 2);
		if (g_hash_table_contains(r->lines, *group))
			return fail(r, *group, NULL, "group given twice (GKeyFile would merge them)");
		g_hash_table_insert(r->lines, g_strdup(*group), GINT_TO_POINTER(number));
		return true;
	}
	char *equals = strchr(line, '=');
	if (!equals || equals == line)
		return bad_line(r, line, number);
	if (!*group) {
		g_set_error(r->error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS, "%s:%d: a key before any [group]",
			    r->path, number);
		return false;
	}
	*equals = '\0';
	g_autofree char *id = key_id(*group, g_strstrip(line));
	int first = GPOINTER_TO_INT(g_hash_table_lookup(r->lines, id));
	if (first) {
		g_set_error(r->error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS, "%s:%d: [%s] %s: given twice (first on line %d)",
			    r->path, number, *group, line, first);
		return false;
	}
	g_hash_table_insert(r->lines, g_steal_pointer(&id), GINT_TO_POINTER(number));
	return true;
}

static bool map_lines(struct reader *r, const char *text)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autofree char *group = NULL;
	for (int i = 0; lines[i]; i++)
		if (!map_line(r, lines[i], i + 1, &group))
			return false;
	return true;
}

/* "group.key=value": the key is what follows the last '.' before '='. */
static bool apply_sets(struct reader *r, char **sets)
{
	for (int i = 0; sets && sets[i]; i++) {
		const char *equals = strchr(sets[i], '=');
		const char *dot = equals ? g_strrstr_len(sets[i], equals - sets[i], ".") : NULL;
		if (!dot || dot == sets[i] || dot + 1 == equals) {
			g_set_error(r->error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS,
				    "--set '%s': expected GROUP.KEY=VALUE, e.g. --set tree.files=500", sets[i]);
			return false;
		}
		g_autofree char *group = g_strndup(sets[i], (gsize)(dot - sets[i]));
		g_autofree char *key = g_strndup(dot + 1, (gsize)(equals - dot - 1));
		if (!g_key_file_has_group(r->kf, group)) {
			g_set_error(r->error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS, "--set '%s': %s has no [%s]",
				    sets[i], r->path, group);
			return false;
		}
		g_key_file_set_string(r->kf, group, key, equals + 1);
		g_hash_table_add(r->set, key_id(group, key));
	}
	return true;
}

/* --- typed values ----------------------------------------------------------------- */

static char *get(const struct reader *r, const char *group, const char *key)
{
	return g_key_file_get_string(r->kf, group, key, NULL);
}

static bool get_int(const struct reader *r, const char *group, const char *key, int64_t min, int64_t max,
		    int64_t *out)
{
	g_autofree char *text = get(r, group, key);
	if (!text)
		return true;
	char *end;
	gint64 v = g_ascii_strtoll(text, &end, 10);
	if (end == text || *end || v < min || v > max)
		return fail(r, group, key, "'%s': expected a whole number from %" G_GINT64_FORMAT " to %"
			    G_GINT64_FORMAT, text, min, max);
	*out = v;
	return true;
}

static bool get_int32(const struct reader *r, const char *group, const char *key, int min, int max, int *out)
{
	int64_t v = *out;
	bool ok = get_int(r, group, key, min, max, &v);
	*out = (int)v;
	return ok;
}

static bool get_double(const struct reader *r, const char *group, const char *key, double min, double max,
		       double *out)
{
	g_autofree char *text = get(r, group, key);
	if (!text)
		return true;
	char *end;
	double v = g_ascii_strtod(text, &end);
	if (end == text || *end || !(v >= min && v <= max))
		return fail(r, group, key, "'%s': expected a number from %g to %g", text, min, max);
	*out = v;
	return true;
}

static bool get_size(const struct reader *r, const char *group, const char *key, gint64 *out)
{
	g_autofree char *text = get(r, group, key);
	uint64_t v;
	if (!text)
		return true;
	const char *reason = trace_syntax_parse_size(text, strlen(text), &v);
	if (reason || v > G_MAXINT64)
		return fail(r, group, key, "'%s': %s", text, reason ? reason : "too large");
	*out = (gint64)v;
	return true;
}

static bool get_bool(const struct reader *r, const char *group, const char *key, bool *out)
{
	g_autofree char *text = get(r, group, key);
	if (!text)
		return true;
	if (strcmp(text, "true") && strcmp(text, "false"))
		return fail(r, group, key, "'%s': expected true or false", text);
	*out = !strcmp(text, "true");
	return true;
}

static bool get_choice(const struct reader *r, const char *group, const char *key, const char *const choices[],
		       char **out)
{
	g_autofree char *text = get(r, group, key);
	if (!text)
		return true;
	for (int i = 0; choices[i]; i++) {
		if (!strcmp(text, choices[i])) {
			g_free(*out);
			*out = g_steal_pointer(&text);
			return true;
		}
	}
	g_autofree char *list = g_strjoinv(", ", (char **)choices);
	return fail(r, group, key, "'%s': expected one of %s", text, list);
}

/* An absolute path the trace can name, not "/" (ALLOW_ROOT false), or a name relative to the tree. */
static bool get_path(const struct reader *r, const char *group, const char *key, bool absolute, char **out)
{
	g_autofree char *text = get(r, group, key);
	if (!text)
		return true;
	g_autofree char *full = absolute ? g_strdup(text) : g_strdup_printf("/%s", text);
	const char *reason = trace_syntax_path_problem(full, strlen(full));
	if (!reason && (absolute ? text[0] != '/' : text[0] == '/'))
		reason = absolute ? "expected an absolute path" : "expected a path relative to the tree";
	if (!reason && !strcmp(full, "/"))
		reason = "cannot be the mount root";
	if (reason)
		return fail(r, group, key, "'%s': %s", text, reason);
	g_free(*out);
	*out = g_steal_pointer(&text);
	return true;
}

/* dir = NAME: one directory name in the tree's top directory. */
static bool get_name(const struct reader *r, const char *group, char **out)
{
	if (!get_path(r, group, "dir", false, out))
		return false;
	if (*out && strchr(*out, '/'))
		return fail(r, group, "dir", "'%s': expected one name in the tree's top directory", *out);
	return true;
}

/* --- schedules -------------------------------------------------------------------- */

/* "HH:MM" -> ns since midnight. */
static bool parse_clock(const char *text, int64_t *out)
{
	int h, m, used = 0;
	if (sscanf(text, "%2d:%2d%n", &h, &m, &used) != 2 || text[used] || h < 0 || h > 23 || m < 0 || m > 59)
		return false;
	*out = (h * 60 + m) * MINUTE_NS;
	return true;
}

static int parse_weekday(const char *text)
{
	static const char *const days[] = { "mon", "tue", "wed", "thu", "fri", "sat", "sun" };
	for (int i = 0; i < 7; i++)
		if (!g_ascii_strcasecmp(text, days[i]))
			return i + 1;
	return 0;
}

/* every D [from HH:MM to HH:MM] */
static bool parse_interval(char **w, int n, struct scenario_schedule *s)
{
	s->every = SCENARIO_INTERVAL;
	s->from_ns = 0;
	s->to_ns = DAY_NS;
	if (n < 2 || trace_syntax_parse_duration(w[1], strlen(w[1]), &s->interval_ns) || s->interval_ns < TRACE_NS_PER_SEC)
		return false;
	if (n == 2)
		return true;
	return n == 6 && s->interval_ns <= DAY_NS && !strcmp(w[2], "from") && parse_clock(w[3], &s->from_ns) &&
	       !strcmp(w[4], "to") && parse_clock(w[5], &s->to_ns) && s->from_ns < s->to_ns;
}

static bool parse_schedule_words(char **w, int n, struct scenario_schedule *s)
{
	int i = 1;
	if (n == 0)
		return false;
	if (!strcmp(w[0], "every"))
		return parse_interval(w, n, s);
	if (!strcmp(w[0], "once"))
		s->every = SCENARIO_ONCE;
	else if (!strcmp(w[0], "daily"))
		s->every = SCENARIO_DAILY;
	else if (!strcmp(w[0], "weekly")) {
		s->every = SCENARIO_WEEKLY;
		if (i < n && (s->weekday = parse_weekday(w[i])))
			i++;
	} else if (!strcmp(w[0], "monthly")) {
		s->every = SCENARIO_MONTHLY;
		s->day_of_month = 1;
		char *end;
		if (i < n && !strchr(w[i], ':')) {
			long d = strtol(w[i], &end, 10);
			if (*end || d < 1 || d > 28)
				return false;
			s->day_of_month = (int)d;
			i++;
		}
	} else
		return false;
	if (i < n && !parse_clock(w[i++], &s->at_ns))
		return false;
	return i == n;
}

static bool get_schedule(const struct reader *r, const char *group, struct scenario_schedule *s)
{
	g_autofree char *text = get(r, group, "schedule");
	if (!text)
		return fail(r, group, NULL, "no schedule (e.g. schedule = daily 02:00)");
	g_auto(GStrv) words = g_strsplit_set(g_strstrip(text), " \t", -1);
	g_autoptr(GPtrArray) w = g_ptr_array_new();
	for (int i = 0; words[i]; i++)
		if (*words[i])
			g_ptr_array_add(w, words[i]);
	if (!parse_schedule_words((char **)w->pdata, (int)w->len, s))
		return fail(r, group, "schedule", "'%s': expected once [HH:MM], daily HH:MM, every D [from HH:MM "
			    "to HH:MM] (D like 5m, 1h, 2d; from/to only when D <= 1d), weekly [mon..sun] [HH:MM] or "
			    "monthly [1..28] [HH:MM]", text);
	return true;
}

static int64_t midnight(int64_t t)
{
	int64_t d = t / DAY_NS;
	if (t < 0 && d * DAY_NS != t)
		d--;
	return d * DAY_NS;
}

/* 1 = Monday .. 7 = Sunday (1970-01-01 was a Thursday). */
static int weekday_of(int64_t t)
{
	int64_t days = midnight(t) / DAY_NS;
	return (int)(((days + 3) % 7 + 7) % 7) + 1;
}

static int64_t next_monthly(const struct scenario_schedule *s, int64_t t)
{
	g_autoptr(GDateTime) now = g_date_time_new_from_unix_utc(t / TRACE_NS_PER_SEC);
	int year = g_date_time_get_year(now), month = g_date_time_get_month(now);
	for (int tries = 0; tries < 2; tries++) {
		g_autoptr(GDateTime) day = g_date_time_new_utc(year, month, s->day_of_month, 0, 0, 0);
		int64_t c = g_date_time_to_unix(day) * TRACE_NS_PER_SEC + s->at_ns;
		if (c >= t)
			return c;
		if (++month > 12) {
			month = 1;
			year++;
		}
	}
	return INT64_MAX; /* not reached: next month's day is always later */
}

int64_t scenario_next_run(const struct scenario_schedule *s, int64_t start_ns, int64_t t)
{
	int64_t day = midnight(t), c;
	switch (s->every) {
	case SCENARIO_ONCE:
		c = midnight(start_ns) + s->at_ns;
		if (c < start_ns)
			c += DAY_NS;
		return c >= t ? c : INT64_MAX;
	case SCENARIO_DAILY:
		c = day + s->at_ns;
		return c >= t ? c : c + DAY_NS;
	case SCENARIO_WEEKLY: {
		int target = s->weekday ? s->weekday : weekday_of(start_ns);
		c = day + ((target - weekday_of(t) + 7) % 7) * DAY_NS + s->at_ns;
		return c >= t ? c : c + 7 * DAY_NS;
	}
	case SCENARIO_MONTHLY:
		return next_monthly(s, t);
	case SCENARIO_INTERVAL:
		break;
	}
	if (s->interval_ns > DAY_NS) { /* counted from the start */
		int64_t k = t <= start_ns ? 0 : (t - start_ns + s->interval_ns - 1) / s->interval_ns;
		return start_ns + k * s->interval_ns;
	}
	/* Within each day's window, counted from its `from`. */
	int64_t from = day + s->from_ns;
	int64_t k = t <= from ? 0 : (t - from + s->interval_ns - 1) / s->interval_ns;
	c = from + k * s->interval_ns;
	return c < day + s->to_ns ? c : day + DAY_NS + s->from_ns;
}

/* --- groups ------------------------------------------------------------------------- */

static bool check_keys(const struct reader *r, const char *group, const char *const common[],
		       const char *const extra[])
{
	g_auto(GStrv) keys = g_key_file_get_keys(r->kf, group, NULL, NULL);
	for (int i = 0; keys && keys[i]; i++) {
		bool known = false;
		for (int j = 0; common && common[j] && !known; j++)
			known = !strcmp(keys[i], common[j]);
		for (int j = 0; extra && extra[j] && !known; j++)
			known = !strcmp(keys[i], extra[j]);
		if (!known)
			return fail(r, group, keys[i], "unknown key here (see docs/scenarios.md)");
	}
	return true;
}

static bool read_scenario(const struct reader *r, struct scenario_spec *spec, gint64 seed)
{
	const char *g = "scenario";
	int64_t days = 30;
	if (!g_key_file_has_group(r->kf, g))
		return check_keys(r, g, NULL, NULL);
	g_autofree char *start = get(r, g, "start");
	if (start) {
		int y, mo, d, used = 0;
		if (sscanf(start, "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 && !start[used] &&
		    g_date_valid_dmy((GDateDay)d, (GDateMonth)mo, (GDateYear)y)) {
			g_autoptr(GDateTime) t = g_date_time_new_utc(y, mo, d, 0, 0, 0);
			spec->start_ns = g_date_time_to_unix(t) * TRACE_NS_PER_SEC;
		} else if (trace_syntax_parse_time(start, strlen(start), &spec->start_ns))
			return fail(r, g, "start", "'%s': expected YYYY-MM-DD (UTC) or seconds since the epoch", start);
		g_free(spec->tree.start);
		spec->tree.start = g_strdup_printf("%" G_GINT64_FORMAT, spec->start_ns / TRACE_NS_PER_SEC);
	}
	if (!check_keys(r, g, scenario_keys, NULL) || !get_int(r, g, "days", 1, 36600, &days) ||
	    (seed < 0 && !get_int(r, g, "seed", 0, G_MAXINT64, &spec->tree.seed)))
		return false;
	spec->days = (int)days;
	return true;
}

static bool read_tree(const struct reader *r, struct scenario_spec *spec)
{
	static const char *const orders[] = { "inode", "readdir", "name", NULL };
	const char *g = "tree";
	struct tracegen_params *t = &spec->tree;
	if (!g_key_file_has_group(r->kf, g)) {
		g_set_error(r->error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS,
			    "%s: no [tree] group (files = N or from-dir = DIR)", r->path);
		return false;
	}
	if (!check_keys(r, g, tree_keys, NULL) || !get_int(r, g, "files", 1, TRACEGEN_FILES_MAX, &t->files) ||
	    !get_path(r, g, "from-dir", true, &t->from_dir) || !get_path(r, g, "prefix", true, &t->prefix) ||
	    !get_choice(r, g, "order", orders, &t->order) ||
	    !get_double(r, g, "files-per-dir", 1, 1e6, &t->files_per_dir) ||
	    !get_double(r, g, "depth-mean", 1, 100, &t->depth_mean) ||
	    !get_size(r, g, "max-file-size", &t->max_file_size))
		return false;
	if (t->files && t->from_dir)
		return fail(r, g, "from-dir", "files and from-dir are exclusive");
	if (!t->files && !t->from_dir)
		return fail(r, g, NULL, "a tree needs files = N (synthetic) or from-dir = DIR");
	return true;
}

static bool read_type(const struct reader *r, const char *group, struct scenario_job *job)
{
	g_autofree char *type = get(r, group, "type");
	if (!type)
		return fail(r, group, NULL, "no type (snapshot, read-all, backup, find, tar, mutt, tmpwatch, "
			    "hsm-scan, churn or mark)");
	for (size_t i = 0; i < G_N_ELEMENTS(job_types); i++) {
		if (!strcmp(type, job_types[i])) {
			job->type = (enum scenario_job_type)i;
			return true;
		}
	}
	return fail(r, group, "type", "'%s': expected snapshot, read-all, backup, find, tar, mutt, tmpwatch, "
		    "hsm-scan, churn or mark", type);
}

static bool read_job_keys(const struct reader *r, const char *g, struct scenario_job *job)
{
	static const char *const dists[] = { "lognormal", "pareto", "fixed", NULL };
	struct tracegen_params *c = &job->churn;
	switch (job->type) {
	case SCENARIO_SNAPSHOT:
		return get_int32(r, g, "keep", 0, 1000000, &job->keep) && get_bool(r, g, "readonly", &job->readonly) &&
		       get_path(r, g, "dir", true, &job->dir) && get_path(r, g, "name", false, &job->snapshot_name);
	case SCENARIO_MUTT:
		return get_int32(r, g, "mailboxes", 1, 100000, &job->mailboxes) &&
		       get_double(r, g, "mails-per-day", 0, 1e6, &job->mails_per_day) &&
		       get_name(r, g, &job->subdir);
	case SCENARIO_TMPWATCH:
		return get_int32(r, g, "days", 0, 100000, &job->age_days) && get_name(r, g, &job->subdir);
	case SCENARIO_HSM_SCAN:
		return get_int32(r, g, "cold-days", 0, 100000, &job->age_days) &&
		       get_double(r, g, "read-fraction", 0, 1, &job->read_fraction);
	case SCENARIO_CHURN:
		return get_double(r, g, "appends", 0, 1e9, &c->appends) &&
		       get_double(r, g, "overwrites", 0, 1e9, &c->overwrites) &&
		       get_double(r, g, "creates", 0, 1e9, &c->creates) &&
		       get_double(r, g, "deletes", 0, 1e9, &c->deletes) && get_size(r, g, "write-size", &c->write_size) &&
		       get_choice(r, g, "size-dist", dists, &c->size_dist) && get_name(r, g, &job->subdir);
	default:
		return true;
	}
}

static void job_free(gpointer data)
{
	struct scenario_job *job = data;
	g_free(job->name);
	g_free(job->where);
	g_free(job->mark);
	g_free(job->dir);
	g_free(job->snapshot_name);
	g_free(job->subdir);
	tracegen_params_clear(&job->churn);
	g_free(job);
}

static struct scenario_job *job_new(const struct reader *r, const char *group)
{
	struct scenario_job *job = g_new0(struct scenario_job, 1);
	job->name = g_strdup(group + strlen("job "));
	job->where = g_strdup_printf("%s:%d", r->path, GPOINTER_TO_INT(g_hash_table_lookup(r->lines, group)));
	job->keep = 0;
	job->mailboxes = 10;
	job->mails_per_day = 20;
	job->age_days = -1;
	job->read_fraction = 0.1;
	tracegen_params_init(&job->churn);
	return job;
}

static bool read_job(const struct reader *r, const char *group, struct scenario_spec *spec)
{
	static const char *const common[] = { "type", "schedule", "mark", NULL };
	struct scenario_job *job = job_new(r, group);
	g_ptr_array_add(spec->jobs, job);
	if (!*job->name || strchr(job->name, '/') || strchr(job->name, ' '))
		return fail(r, group, NULL, "a job name is one word without '/': [job NAME]");
	if (!read_type(r, group, job) || !check_keys(r, group, common, job_keys[job->type]) ||
	    !get_schedule(r, group, &job->schedule) || !read_job_keys(r, group, job))
		return false;
	job->mark = get(r, group, "mark");
	if (job->mark && trace_syntax_string_problem(job->mark, strlen(job->mark)))
		return fail(r, group, "mark", "'%s': %s", job->mark,
			    trace_syntax_string_problem(job->mark, strlen(job->mark)));
	if (job->type == SCENARIO_MARK && !job->mark)
		return fail(r, group, NULL, "a mark job needs mark = LABEL");
	return true;
}

static bool read_groups(const struct reader *r, struct scenario_spec *spec, gint64 seed)
{
	g_auto(GStrv) groups = g_key_file_get_groups(r->kf, NULL);
	for (int i = 0; groups[i]; i++) {
		const char *g = groups[i];
		if (!strcmp(g, "scenario") || !strcmp(g, "tree"))
			continue;
		if (!g_str_has_prefix(g, "job "))
			return fail(r, g, NULL, "unknown group (expected [scenario], [tree] or [job NAME])");
		if (!read_job(r, g, spec))
			return false;
	}
	if (seed >= 0)
		spec->tree.seed = seed;
	return read_scenario(r, spec, seed) && read_tree(r, spec);
}

/* --- the whole file ------------------------------------------------------------------ */

void scenario_spec_free(struct scenario_spec *spec)
{
	if (!spec)
		return;
	g_free(spec->path);
	tracegen_params_clear(&spec->tree);
	if (spec->jobs)
		g_ptr_array_unref(spec->jobs);
	g_free(spec);
}

struct scenario_spec *scenario_file_load(const char *path, char **sets, gint64 seed, GError **error)
{
	g_autofree char *text = NULL;
	g_autoptr(GError) local = NULL;
	if (!g_file_get_contents(path, &text, NULL, &local)) {
		g_set_error(error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS, "%s: %s", path, local->message);
		return NULL;
	}
	struct reader r = { path, g_key_file_new(), g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
			    g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL), error };
	struct scenario_spec *spec = g_new0(struct scenario_spec, 1);
	spec->path = g_strdup(path);
	spec->start_ns = INT64_MIN;
	spec->days = 30;
	spec->jobs = g_ptr_array_new_with_free_func(job_free);
	tracegen_params_init(&spec->tree);
	bool ok = map_lines(&r, text);
	if (ok && !g_key_file_load_from_data(r.kf, text, (gsize)-1, G_KEY_FILE_NONE, &local)) {
		g_set_error(error, TRACEGEN_ERROR, TRACEGEN_ERROR_ARGS, "%s: %s", path, local->message);
		ok = false;
	}
	ok = ok && apply_sets(&r, sets) && read_groups(&r, spec, seed);
	g_key_file_unref(r.kf);
	g_hash_table_unref(r.lines);
	g_hash_table_unref(r.set);
	if (!ok) {
		scenario_spec_free(spec);
		return NULL;
	}
	return spec;
}
