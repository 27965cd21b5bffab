/*
 * sim/provenance.c - parameters.json and the head of every --json summary
 * (provenance.h, PV1-PV2).
 */
#include "provenance.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sweep_store.h"
#include "trace.h"

void provenance_cowsim(ResultsJson *w)
{
	results_json_begin_object(w, "cowsim");
	results_json_string(w, "version", COWSIM_VERSION);
	results_json_string(w, "commit", cli_commit());
	results_json_end(w);
}

static void option_value(ResultsJson *w, const GOptionEntry *e)
{
	switch (e->arg) {
	case G_OPTION_ARG_NONE:
		results_json_bool(w, e->long_name, *(gboolean *)e->arg_data);
		return;
	case G_OPTION_ARG_STRING:
	case G_OPTION_ARG_FILENAME:
		results_json_string(w, e->long_name, *(char **)e->arg_data);
		return;
	case G_OPTION_ARG_INT:
		results_json_i64(w, e->long_name, *(gint *)e->arg_data);
		return;
	case G_OPTION_ARG_INT64:
		results_json_i64(w, e->long_name, *(gint64 *)e->arg_data);
		return;
	case G_OPTION_ARG_DOUBLE:
		results_json_double(w, e->long_name, *(double *)e->arg_data);
		return;
	case G_OPTION_ARG_STRING_ARRAY:
	case G_OPTION_ARG_FILENAME_ARRAY: {
		char **values = *(char ***)e->arg_data;
		if (!values) {
			results_json_null(w, e->long_name);
			return;
		}
		results_json_begin_array(w, e->long_name);
		for (char **v = values; *v; v++)
			results_json_string(w, NULL, *v);
		results_json_end(w);
		return;
	}
	case G_OPTION_ARG_CALLBACK:
		return;
	}
}

/* PV1: every entry but the positional arguments and the hidden old spellings
 * (their target is a listed option's). */
static void options(ResultsJson *w, const GArray *entries)
{
	results_json_begin_object(w, "options");
	for (unsigned i = 0; entries && i < entries->len; i++) {
		const GOptionEntry *e = &g_array_index(entries, GOptionEntry, i);
		if (!*e->long_name || (e->flags & G_OPTION_FLAG_HIDDEN) || e->arg == G_OPTION_ARG_CALLBACK)
			continue;
		option_value(w, e);
	}
	results_json_end(w);
}

static bool trace(ResultsJson *w, const struct provenance *p, GError **error)
{
	if (cli_is_stdio(p->trace)) { /* standard input: read once, by the run */
		results_json_begin_object(w, "trace");
		results_json_string(w, "path", p->trace);
		results_json_null(w, "sha256");
		results_json_string(w, "gen_command", p->gen_command);
		results_json_end(w);
		return true;
	}
	g_autofree char *sha256 = p->trace && !p->trace_sha256 ? sweep_store_file_sha256(p->trace, error) : NULL;
	if (p->trace && !p->trace_sha256 && !sha256)
		return false;
	g_autofree char *recorded = p->trace && !p->gen_command ? trace_gen_command(p->trace, error) : NULL;
	if (error && *error)
		return false;
	results_json_begin_object(w, "trace");
	results_json_string(w, "path", p->trace);
	results_json_string(w, "sha256", p->trace_sha256 ? p->trace_sha256 : sha256);
	results_json_string(w, "gen_command", p->gen_command ? p->gen_command : recorded);
	results_json_end(w);
	return true;
}

ResultsJson *provenance_begin(const struct provenance *p, const char *schema, GError **error)
{
	g_autoptr(ResultsJson) w = results_json_new();
	results_json_begin_object(w, NULL);
	results_json_string(w, "schema", schema);
	provenance_cowsim(w);
	results_json_string(w, "command", p->command);
	results_json_begin_array(w, "argv");
	results_json_string(w, NULL, "cowsim");
	results_json_string(w, NULL, p->command);
	for (char **a = p->argv; a && *a; a++)
		results_json_string(w, NULL, *a);
	results_json_end(w);
	if ((p->trace || p->gen_command) && !trace(w, p, error))
		return NULL;
	options(w, p->entries);
	return g_steal_pointer(&w);
}

ResultsJson *provenance_summary_begin(const struct provenance *p, const char *schema, const char *output,
				      int exit_status)
{
	g_autoptr(GError) error = NULL;
	ResultsJson *w = provenance_begin(p, schema, &error);
	if (!w) {
		fprintf(stderr, "cowsim %s: %s\n", p->command, error->message);
		return NULL;
	}
	results_json_string(w, "output", output);
	results_json_i64(w, "exit_status", exit_status);
	return w;
}

void provenance_model(ResultsJson *w, const char *key, const struct fs_config *config, bool with_mount_policy)
{
	char text[64];
	results_json_begin_object(w, key);
	results_json_string(w, "design", fs_design_name(config->design));
	results_json_u64(w, "nodesize", config->nodesize);
	results_json_u64(w, "device_size", config->device_size);
	results_json_string(w, "metadata", config->metadata_single ? "single" : "dup");
	if (with_mount_policy) {
		atime_format_options(&config->atime, text, sizeof(text));
		results_json_string(w, "mount", text);
		fs_policy_describe(config, text, sizeof(text));
		results_json_string(w, "policy", text);
	}
	results_json_string(w, "lazytime", config->lazytime == FS_LAZYTIME_VFS ? "vfs" : "btrfs");
	results_json_string(w, "enospc_read", config->enospc_read == FS_ENOSPC_READ_FAIL ? "fail" : "lose");
	results_json_u64(w, "max_inline", config->max_inline);
	results_json_double(w, "commit_interval_s", (double)config->commit_interval_ns / 1e9);
	results_json_bool(w, "immediate_writeback", !config->delayed_writeback);
	results_json_bool(w, "zfs_clones", config->snapshot_clones);
	results_json_end(w);
}

bool provenance_write(ResultsJson *w, const char *command, const char *path)
{
	gsize length;
	g_autofree char *text = results_json_finish(w, &length);
	return cli_write_text(command, path, text, length);
}
