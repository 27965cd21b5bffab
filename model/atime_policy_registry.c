/*
 * model/atime_policy_registry.c - every atime policy the model knows.
 *
 * A policy is a `const struct atime_policy_ops atime_policy_NAME` in its own
 * file, model/policy_NAME.c (model/atime_policy.h says what each method
 * must do). To add one, add NAME to the list below: that line is the only
 * edit outside the policy's file. The first is the default.
 */
#include "atime_policy.h"

#include <stdio.h>
#include <string.h>

#include "model_error.h"

#define ATIME_POLICIES(X) X(inline) X(side_table) X(threshold) X(snapshot_aware) X(hybrid)

#define DECLARE(name) extern const struct atime_policy_ops atime_policy_##name;
#define ENTRY(name) &atime_policy_##name,
ATIME_POLICIES(DECLARE)

const struct atime_policy_ops *const atime_policies[] = { ATIME_POLICIES(ENTRY) NULL };

const struct atime_policy_ops *fs_policy_at(unsigned i)
{
	return i < G_N_ELEMENTS(atime_policies) - 1 ? atime_policies[i] : NULL;
}

const char *fs_policy_syntax(const struct atime_policy_ops *policy)
{
	return (policy ? policy : atime_policies[0])->syntax;
}

const char *fs_policy_name(const struct atime_policy_ops *policy)
{
	return (policy ? policy : atime_policies[0])->name;
}

static GString *known_policies(void)
{
	GString *known = g_string_new(NULL);
	for (unsigned i = 0; atime_policies[i]; i++)
		g_string_append_printf(known, "%s%s", i ? ", " : "", atime_policies[i]->syntax);
	return known;
}

bool fs_policy_parse(const char *word, struct fs_config *config, GError **error)
{
	const char *colon = strchr(word, ':');
	size_t name_len = colon ? (size_t)(colon - word) : strlen(word);
	for (unsigned i = 0; atime_policies[i]; i++) {
		const struct atime_policy_ops *policy = atime_policies[i];
		if (strlen(policy->name) != name_len || strncmp(policy->name, word, name_len))
			continue;
		const char *arg = colon ? colon + 1 : NULL;
		if (!policy->parse && arg) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_INVALID, "%s takes no argument", policy->name);
			return false;
		}
		if (policy->parse && !policy->parse(arg, config, error))
			return false;
		config->atime_policy = policy;
		return true;
	}
	g_autoptr(GString) known = known_policies();
	g_set_error(error, MODEL_ERROR, MODEL_ERROR_INVALID, "unknown policy (known: %s)", known->str);
	return false;
}

void fs_policy_describe(const struct fs_config *config, char *out, size_t size)
{
	const struct atime_policy_ops *policy = config->atime_policy ? config->atime_policy : atime_policies[0];
	if (policy->describe)
		policy->describe(config, out, size);
	else
		snprintf(out, size, "%s", policy->name);
}
