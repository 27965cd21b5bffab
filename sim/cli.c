/*
 * sim/cli.c - the command-line conventions of every cowsim command (cli.h).
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "version.h"

const char *cli_version(void)
{
	if (!strcmp(COWSIM_COMMIT, COWSIM_VERSION))
		return "cowsim " COWSIM_VERSION;
	return "cowsim " COWSIM_VERSION " (commit " COWSIM_COMMIT ")";
}

const char *cli_commit(void)
{
	return strcmp(COWSIM_COMMIT, COWSIM_VERSION) ? COWSIM_COMMIT : NULL;
}

/* The entries of each live context, for cli_take_entries(): a context is
 * parsed and dropped within one command, and a new context at the address of
 * a freed one starts a new list (cli_context_new). */
static GHashTable *recorded_entries;

static GArray *entries_of(GOptionContext *context, bool fresh)
{
	if (!recorded_entries)
		recorded_entries = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
							 (GDestroyNotify)g_array_unref);
	GArray *list = fresh ? NULL : g_hash_table_lookup(recorded_entries, context);
	if (!list) {
		list = g_array_new(FALSE, FALSE, sizeof(GOptionEntry));
		g_hash_table_replace(recorded_entries, context, list);
	}
	return list;
}

void cli_add_entries(GOptionContext *context, const GOptionEntry *entries)
{
	g_option_context_add_main_entries(context, entries, NULL);
	GArray *list = entries_of(context, false);
	for (const GOptionEntry *e = entries; e->long_name; e++)
		g_array_append_val(list, *e);
}

GArray *cli_take_entries(GOptionContext *context)
{
	GArray *list = g_array_ref(entries_of(context, false));
	g_hash_table_remove(recorded_entries, context);
	return list;
}

/* --json's target while a context is parsed (GOption's callbacks get the
 * group's data, and the main group has none). */
static char **json_target;

static gboolean take_json(const char *name, const char *value, gpointer data, GError **error)
{
	(void)name, (void)data, (void)error;
	if (json_target) {
		g_free(*json_target);
		*json_target = g_strdup(value && *value ? value : "-");
	}
	return TRUE;
}

void cli_add_json_entry(GOptionContext *context, char **target, const char *help)
{
	const GOptionEntry entries[] = {
		{ "json", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, (void *)take_json, help, "FILE" },
		{ NULL },
	};
	json_target = target;
	g_option_context_add_main_entries(context, entries, NULL);
}

int cli_output_error_status(const GError *error)
{
	bool failed_under_write = error && error->domain == G_FILE_ERROR &&
				  (error->code == G_FILE_ERROR_NOSPC || error->code == G_FILE_ERROR_FAILED ||
				   error->code == G_FILE_ERROR_IO);
	return failed_under_write ? EXIT_RUN_FAILED : EXIT_BAD_INPUT;
}

bool cli_output_creatable(const char *command, const char *path)
{
	if (!path || cli_is_stdio(path))
		return true;
	g_autofree char *dir = g_path_get_dirname(path);
	const char *reason = NULL;
	if (g_file_test(path, G_FILE_TEST_IS_DIR))
		reason = g_strerror(EISDIR);
	else if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
		reason = g_strerror(g_file_test(dir, G_FILE_TEST_EXISTS) ? ENOTDIR : ENOENT);
	else if (access(dir, W_OK) != 0)
		reason = g_strerror(errno);
	if (reason)
		fprintf(stderr, "cowsim %s: cannot create '%s': %s\n", command, path, reason);
	return reason == NULL;
}

bool cli_write_text(const char *command, const char *path, const char *text, gsize length)
{
	g_autoptr(GError) error = NULL;
	if (cli_is_stdio(path)) {
		if (fwrite(text, 1, length, stdout) == length && fflush(stdout) == 0)
			return true;
		fprintf(stderr, "cowsim %s: cannot write to stdout: %s\n", command, g_strerror(errno));
		return false;
	}
	if (g_file_set_contents(path, text, (gssize)length, &error))
		return true;
	fprintf(stderr, "cowsim %s: %s\n", command, error->message);
	return false;
}

static bool is_readable(const char *path)
{
	return access(path, R_OK) == 0;
}

char *cli_find_data(const char *name, const char *env)
{
	const char *given = env ? g_getenv(env) : NULL;
	if (given && *given)
		return is_readable(given) ? g_strdup(given) : NULL;
	g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
	if (exe) {
		g_autofree char *dir = g_path_get_dirname(exe);
		g_autofree char *beside = g_build_filename(dir, name, NULL);
		if (is_readable(beside))
			return g_steal_pointer(&beside);
		g_autofree char *shared = g_build_filename(dir, "..", "share", "cowsim", name, NULL);
		if (is_readable(shared))
			return g_steal_pointer(&shared);
	}
#ifdef COWSIM_SOURCE_ROOT
	g_autofree char *source = g_build_filename(COWSIM_SOURCE_ROOT, "results", name, NULL);
	if (is_readable(source))
		return g_steal_pointer(&source);
#endif
	return NULL;
}

bool cli_is_stdio(const char *path)
{
	return path && !strcmp(path, "-");
}

/* The context cli_parse() is parsing, for --help (GOption's callbacks get
 * no context). */
static GOptionContext *parsing;

/* -V/--version and -h/--help in every command, as GOption's own --help does
 * it: print on stdout and exit 0.  The help is written as is (GOption's own
 * would convert "…" to '?' in a C locale). */
static gboolean print_version(const char *name, const char *value, gpointer data, GError **error)
{
	printf("%s\n", cli_version());
	exit(fflush(stdout) == 0 ? EXIT_OK : EXIT_BAD_INPUT);
}

static gboolean print_help(const char *name, const char *value, gpointer data, GError **error)
{
	/* Freed by hand: exit() runs no g_autofree cleanup, and LeakSanitizer
	 * would report the text (the ASan build makes its man pages with it). */
	char *help = g_option_context_get_help(parsing, TRUE, NULL);
	/* GOption writes an optional argument as a required one: --json[=FILE],
	 * in the same width so that the column stays aligned. */
	char *json = strstr(help, "  --json=FILE  ");
	if (json)
		memcpy(json + 2, "--json[=FILE]", strlen("--json[=FILE]"));
	fputs(help, stdout);
	g_free(help);
	exit(fflush(stdout) == 0 ? EXIT_OK : EXIT_BAD_INPUT);
}

/* "cowsim run", or the program's own name: the start of usage and messages. */
static char *display_name(const struct cli_doc *doc)
{
	if (doc->program)
		return g_strdup(doc->program);
	return g_strdup_printf("cowsim %s", doc->command);
}

GOptionContext *cli_context_new(const struct cli_doc *doc)
{
	static const GOptionEntry common[] = {
		{ "help", 'h', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, (void *)print_help,
		  "show this help and exit", NULL },
		{ "version", 'V', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, (void *)print_version,
		  "print cowsim's version and commit, and exit", NULL },
		{ NULL },
	};
	g_autofree char *prgname = display_name(doc);
	g_set_prgname(prgname); /* the "Usage:" line: cowsim CMD [OPTION…] ARGS */
	GOptionContext *context = g_option_context_new(doc->args);
	g_option_context_set_help_enabled(context, FALSE);
	g_option_context_set_summary(context, doc->summary);
	g_autoptr(GString) text = g_string_new(NULL);
	if (doc->notes)
		g_string_append_printf(text, "%s\n\n", doc->notes);
	g_string_append_printf(text, "Examples:\n%s\n\nExit status:\n%s\n", doc->examples, doc->exits);
	g_option_context_set_description(context, text->str);
	g_option_context_add_main_entries(context, common, NULL);
	entries_of(context, true); /* a new list, whatever a freed context at this address left */
	return context;
}

/* True when every comma-separated word of `text` is an atime mount option:
 * what the old `-o relatime` meant. */
static bool looks_like_mount_options(const char *text)
{
	static const char *const words[] = { "strictatime", "relatime", "noatime", "nodiratime", "diratime",
					     "lazytime", "nolazytime", "norelatime", "nostrictatime", "atime" };
	g_auto(GStrv) parts = g_strsplit(text, ",", -1);
	if (!parts[0])
		return false;
	for (char **p = parts; *p; p++) {
		bool known = false;
		for (size_t i = 0; i < G_N_ELEMENTS(words); i++)
			known = known || !strcmp(*p, words[i]);
		if (!known)
			return false;
	}
	return true;
}

/* The value of short option `opt` at argv[i] ("-o X" or "-oX"), or NULL. */
static const char *short_value(int argc, char **argv, int i, char opt)
{
	if (argv[i][0] != '-' || argv[i][1] != opt)
		return NULL;
	if (argv[i][2])
		return argv[i] + 2;
	return i + 1 < argc ? argv[i + 1] : NULL;
}

/* CLI2: the spellings whose meaning changed. */
static bool refuse_renamed(const struct cli_doc *doc, int argc, char **argv)
{
	g_autofree char *me = display_name(doc);
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *v;
		if (doc->model_options && (v = short_value(argc, argv, i, 'o')) && looks_like_mount_options(v)) {
			fprintf(stderr, "%s: -o %s: -o is the output now; give mount options with "
					"-m/--mount (-m %s)\n", me, v, v);
			return true;
		}
		if (doc->model_options && (v = short_value(argc, argv, i, 'm')) &&
		    (!strcmp(v, "dup") || !strcmp(v, "single"))) {
			fprintf(stderr, "%s: -m %s: -m is --mount now; the metadata profile is "
					"--metadata %s\n", me, v, v);
			return true;
		}
		if ((v = short_value(argc, argv, i, 'V')) && strchr(v, '=')) {
			fprintf(stderr, "%s: -V %s: -V is --version now; write --vary %s\n", me, v, v);
			return true;
		}
		if (!strcmp(argv[i], "-O")) {
			fprintf(stderr, "%s: -O: the output is -o/--output now\n", me);
			return true;
		}
	}
	return false;
}

bool cli_parse(GOptionContext *context, const struct cli_doc *doc, int *argc, char ***argv)
{
	if (refuse_renamed(doc, *argc, *argv))
		return false;
	g_autoptr(GError) error = NULL;
	g_autofree char *me = display_name(doc);
	parsing = context;
	gboolean ok = g_option_context_parse(context, argc, argv, &error);
	parsing = NULL;
	if (!ok) {
		fprintf(stderr, "%s: %s (see '%s --help')\n", me, error->message, me);
		return false;
	}
	return true;
}

#define CLI_ERROR (cli_error_quark())
static G_DEFINE_QUARK(cowsim-cli-error-quark, cli_error)

/* A size is decimal digits with an optional fraction ("1.5G"), then an
 * optional K, M, G or T (powers of 1024), i or iB, B: "16K", "1.5GiB".
 * Hex, exponents, signs, "inf" and a value that is not a whole number of
 * bytes ("16384.5") are refused, so no typo passes for a size.  Here, not in
 * options.c, so that tools/ (btrfs-replay) reads sizes as cowsim does. */
bool cli_parse_size(const char *what, const char *text, uint64_t *bytes, GError **error)
{
	const char *end = text;
	unsigned digits = 0, dots = 0;
	for (; g_ascii_isdigit(*end) || (*end == '.' && !dots); end++)
		*end == '.' ? dots++ : digits++;
	double value = digits ? g_ascii_strtod(text, NULL) : 0;
	double scale = 1;
	switch (g_ascii_toupper(*end)) {
	case 'K': scale = 1024.0; end++; break;
	case 'M': scale = 1024.0 * 1024; end++; break;
	case 'G': scale = 1024.0 * 1024 * 1024; end++; break;
	case 'T': scale = 1024.0 * 1024 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'B')
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
	double result = value * scale;
	if (!digits || *end || !isfinite(result) || result >= 18446744073709551616.0) {
		g_set_error(error, CLI_ERROR, 0, "%s '%s': not a size (decimal bytes, or a number with K, M, G or T)",
			    what, text);
		return false;
	}
	if (result != floor(result)) {
		g_set_error(error, CLI_ERROR, 0, "%s '%s': not a whole number of bytes", what, text);
		return false;
	}
	*bytes = (uint64_t)result;
	return true;
}
