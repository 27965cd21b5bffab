/*
 * sim/options.h - command-line options shared by the commands that run the
 * model: sizes with K/M/G suffixes, mount options, the model configuration.
 */
#ifndef COWSIM_SIM_OPTIONS_H
#define COWSIM_SIM_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

#include "fs.h"

/* "16384", "16K", "4G", "1.5M": bytes. False with *error naming `what`. */
bool options_parse_size(const char *what, const char *text, uint64_t *bytes, GError **error);

/* The model options as strings, as GOptionEntry fills them. */
struct model_option_text {
	char *nodesize;
	char *device_size;
	char *metadata_profile;
	char *mount;
	char *policy;
	char *mkfs_atime;
	char *design;
	char *lazytime;
	char *enospc_read;
	char *max_inline;
	char *commit_interval;
	gboolean immediate_writeback;
	gboolean zfs_clones;
};

/* GOptionEntry rows for struct model_option_text, for a command's group. */
void options_add_model_entries(GOptionContext *context, struct model_option_text *text);
/* Fills *config from the text (defaults where a field is NULL). */
bool options_model_config(const struct model_option_text *text, struct fs_config *config, GError **error);
/* A --policy word ("inline", "threshold:5%", ...: model/atime_policy_registry.c) into *config. */
bool options_parse_policy(const char *text, struct fs_config *config, GError **error);
void options_model_text_clear(struct model_option_text *text);

#endif
