/*
 * model/design_registry.c - every snapshot design the model knows.
 *
 * A design is a `const struct fs_design_ops fs_design_NAME` in its own file
 * (model/design.h says what each method must do). To add one, add NAME to
 * the list below: that line is the only edit outside the design's files.
 * The first is the default.
 */
#include "design.h"

#include <string.h>

#define FS_DESIGNS(X) X(btrfs) X(keyed) X(zfs)

#define DECLARE(name) extern const struct fs_design_ops fs_design_##name;
#define ENTRY(name) &fs_design_##name,
FS_DESIGNS(DECLARE)

const struct fs_design_ops *const fs_designs[] = { FS_DESIGNS(ENTRY) NULL };

const struct fs_design_ops *fs_design_find(const char *name)
{
	for (unsigned i = 0; fs_designs[i]; i++)
		if (!strcmp(fs_designs[i]->name, name))
			return fs_designs[i];
	return NULL;
}

const struct fs_design_ops *fs_design_at(unsigned i)
{
	return i < G_N_ELEMENTS(fs_designs) - 1 ? fs_designs[i] : NULL;
}

const char *fs_design_name(const struct fs_design_ops *design)
{
	return (design ? design : fs_designs[0])->name;
}

const char *fs_design_summary(const struct fs_design_ops *design)
{
	return (design ? design : fs_designs[0])->summary;
}
