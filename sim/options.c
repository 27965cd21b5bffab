/*
 * sim/options.c - parsing the model's command-line options.
 */
#include "options.h"

#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define OPTIONS_ERROR (options_error_quark())
static G_DEFINE_QUARK(cowsim-options-error-quark, options_error)

bool options_parse_size(const char *what, const char *text, uint64_t *bytes, GError **error)
{
	return cli_parse_size(what, text, bytes, error);
}

/* The --policy and --design help, listed from the model's registries so that
 * a new policy or design shows up without an edit here. Static: GOption
 * keeps the pointers, and --help exits from inside the parse. */
static const char *policy_help(void)
{
	static char help[512];
	if (help[0])
		return help;
	int n = snprintf(help, sizeof(help), "where atime lives and when it is written (default %s; docs/policies.md): ",
			 fs_policy_syntax(NULL));
	for (unsigned i = 0; fs_policy_at(i) && n > 0 && (size_t)n < sizeof(help); i++)
		n += snprintf(help + n, sizeof(help) - (size_t)n, "%s%s", i ? ", " : "", fs_policy_syntax(fs_policy_at(i)));
	return help;
}

static const char *design_help(void)
{
	static char help[512];
	if (help[0])
		return help;
	int n = snprintf(help, sizeof(help), "how snapshots share metadata (default %s; docs/model.md): ",
			 fs_design_name(NULL));
	for (unsigned i = 0; fs_design_at(i) && n > 0 && (size_t)n < sizeof(help); i++)
		n += snprintf(help + n, sizeof(help) - (size_t)n, "%s%s, %s", i ? "; " : "", fs_design_name(fs_design_at(i)),
			      fs_design_summary(fs_design_at(i)));
	return help;
}

void options_add_model_entries(GOptionContext *context, struct model_option_text *t)
{
	const GOptionEntry entries[] = {
		{ "nodesize", 'n', 0, G_OPTION_ARG_STRING, &t->nodesize,
		  "tree block size: 4K, 8K, 16K (default), 32K or 64K", "BYTES" },
		{ "device-size", 's', 0, G_OPTION_ARG_STRING, &t->device_size,
		  "size of the modeled device (default 4G)", "BYTES" },
		{ "metadata", 0, 0, G_OPTION_ARG_STRING, &t->metadata_profile,
		  "metadata profile: dup (default on one device) or single", "PROFILE" },
		{ "mount", 'm', 0, G_OPTION_ARG_STRING, &t->mount,
		  "mount options: strictatime|relatime|noatime, [,nodiratime][,lazytime] (default relatime)", "OPTS" },
		{ "policy", 'p', 0, G_OPTION_ARG_STRING, &t->policy, policy_help(), "NAME" },
		{ "design", 0, 0, G_OPTION_ARG_STRING, &t->design, design_help(), "NAME" },
		{ "lazytime", 0, 0, G_OPTION_ARG_STRING, &t->lazytime,
		  "what a lazytime mount does: btrfs (written into the transaction at once, as btrfs "
		  "does; default) or vfs (kept in memory until the inode's next change, fsync, sync or "
		  "12 h, as the VFS defines lazytime)", "MODEL" },
		{ "enospc-read", 0, 0, G_OPTION_ARG_STRING, &t->enospc_read,
		  "what a read does when its atime update finds no metadata space after the flusher's "
		  "commits: lose (the read succeeds and the update is lost, counted in atime_lost, as "
		  "kernel 6.18 does; default) or fail (what-if: the read fails, counted in failed_reads)",
		  "WHAT" },
		{ "mkfs-atime", 0, 0, G_OPTION_ARG_STRING, &t->mkfs_atime,
		  "the filesystem's persistent atime default, used when --mount names no atime mode "
		  "(a proposed remedy; btrfs has none)", "MODE" },
		{ "max-inline", 0, 0, G_OPTION_ARG_STRING, &t->max_inline,
		  "largest file kept inline in the tree (default 2048)", "BYTES" },
		{ "commit-interval", 0, 0, G_OPTION_ARG_STRING, &t->commit_interval,
		  "seconds of simulated time between commits (default 30)", "SECONDS" },
		{ "immediate-writeback", 0, 0, G_OPTION_ARG_NONE, &t->immediate_writeback,
		  "insert file data at write() instead of at writeback (btrfs delalloc)", NULL },
		{ "zfs-clones", 0, 0, G_OPTION_ARG_NONE, &t->zfs_clones,
		  "--design zfs: a writable snapshot becomes a clone of a read-only one (zfs snapshot + "
		  "zfs clone) instead of an error", NULL },
		{ NULL },
	};
	/* In the main group: --help shows them with the command's own (cli.h);
	 * recorded for parameters.json. */
	cli_add_entries(context, entries);
}

static bool parse_nodesize(const char *text, struct fs_config *config, GError **error)
{
	uint64_t bytes;
	if (!options_parse_size("--nodesize", text, &bytes, error))
		return false;
	if (!fs_nodesize_valid(bytes)) {
		g_set_error(error, OPTIONS_ERROR, 0,
			    "--nodesize %s: must be a power of two from 4K to 64K, as mkfs.btrfs -n accepts", text);
		return false;
	}
	config->nodesize = (uint32_t)bytes;
	return true;
}

static bool parse_mount(const char *text, struct fs_config *config, GError **error)
{
	const char *bad;
	int bad_length;
	if (!atime_parse_options(text, &config->atime, &bad, &bad_length)) {
		g_set_error(error, OPTIONS_ERROR, 0,
			    "--mount %s: unknown option '%.*s' (known: strictatime, relatime, noatime, "
			    "nodiratime, diratime, lazytime)", text, bad_length, bad);
		return false;
	}
	return true;
}

bool options_parse_policy(const char *text, struct fs_config *config, GError **error)
{
	g_autoptr(GError) why = NULL;
	if (fs_policy_parse(text, config, &why))
		return true;
	g_set_error(error, OPTIONS_ERROR, 0, "--policy %s: %s", text, why->message);
	return false;
}

static bool parse_commit_interval(const char *text, struct fs_config *config, GError **error)
{
	char *end;
	double seconds = g_ascii_strtod(text, &end);
	if (end == text || *end || !(seconds > 0) || seconds > 1e6) {
		g_set_error(error, OPTIONS_ERROR, 0, "--commit-interval %s: seconds, above 0", text);
		return false;
	}
	config->commit_interval_ns = (int64_t)(seconds * 1e9);
	return true;
}

bool options_model_config(const struct model_option_text *t, struct fs_config *config, GError **error)
{
	fs_config_init(config);
	config->start_time_ns = 0; /* traces set the clock with `clock @TIME` */
	if (t->nodesize && !parse_nodesize(t->nodesize, config, error))
		return false;
	if (t->device_size && !options_parse_size("--device-size", t->device_size, &config->device_size, error))
		return false;
	if (t->metadata_profile) {
		if (!strcmp(t->metadata_profile, "single"))
			config->metadata_single = true;
		else if (strcmp(t->metadata_profile, "dup")) {
			g_set_error(error, OPTIONS_ERROR, 0, "--metadata %s: dup or single", t->metadata_profile);
			return false;
		}
	}
	if (t->mkfs_atime) {
		struct atime_options persistent = { .mode = ATIME_RELATIME };
		const char *bad;
		int bad_length;
		if (!atime_parse_options(t->mkfs_atime, &persistent, &bad, &bad_length)) {
			g_set_error(error, OPTIONS_ERROR, 0, "--mkfs-atime %s: unknown option '%.*s'", t->mkfs_atime,
				    bad_length, bad);
			return false;
		}
		config->atime = persistent;
	}
	if (t->mount && !parse_mount(t->mount, config, error))
		return false;
	if (t->policy && !options_parse_policy(t->policy, config, error))
		return false;
	if (t->design && !(config->design = fs_design_find(t->design))) {
		g_autoptr(GString) known = g_string_new(NULL);
		for (unsigned i = 0; fs_design_at(i); i++)
			g_string_append_printf(known, "%s%s", i ? ", " : "", fs_design_name(fs_design_at(i)));
		g_set_error(error, OPTIONS_ERROR, 0, "--design %s: unknown design (known: %s)", t->design, known->str);
		return false;
	}
	if (t->lazytime) {
		if (!strcmp(t->lazytime, "vfs"))
			config->lazytime = FS_LAZYTIME_VFS;
		else if (strcmp(t->lazytime, "btrfs")) {
			g_set_error(error, OPTIONS_ERROR, 0, "--lazytime %s: btrfs or vfs", t->lazytime);
			return false;
		}
	}
	if (t->enospc_read) {
		if (!strcmp(t->enospc_read, "fail"))
			config->enospc_read = FS_ENOSPC_READ_FAIL;
		else if (strcmp(t->enospc_read, "lose")) {
			g_set_error(error, OPTIONS_ERROR, 0, "--enospc-read %s: lose or fail", t->enospc_read);
			return false;
		}
	}
	g_autoptr(GError) invalid = NULL;
	if (!fs_config_validate(config, &invalid)) {
		g_set_error(error, OPTIONS_ERROR, 0, "--design %s --policy %s: %s", fs_design_name(config->design),
			    fs_policy_name(config->atime_policy), invalid->message);
		return false;
	}
	if (t->max_inline) {
		uint64_t bytes;
		if (!options_parse_size("--max-inline", t->max_inline, &bytes, error))
			return false;
		if (bytes > fs_max_inline_limit()) {
			g_set_error(error, OPTIONS_ERROR, 0, "--max-inline %s: at most %u (one sector less one byte)",
				    t->max_inline, fs_max_inline_limit());
			return false;
		}
		config->max_inline = (uint32_t)bytes;
	}
	if (t->commit_interval && !parse_commit_interval(t->commit_interval, config, error))
		return false;
	config->delayed_writeback = !t->immediate_writeback;
	config->snapshot_clones = t->zfs_clones;
	return true;
}

void options_model_text_clear(struct model_option_text *t)
{
	g_free(t->nodesize);
	g_free(t->device_size);
	g_free(t->metadata_profile);
	g_free(t->mount);
	g_free(t->policy);
	g_free(t->mkfs_atime);
	g_free(t->design);
	g_free(t->lazytime);
	g_free(t->enospc_read);
	g_free(t->max_inline);
	g_free(t->commit_interval);
	memset(t, 0, sizeof(*t));
}
