/*
 * model/atime_policy.h - the seam between an access and an atime policy.
 *
 * A policy decides whether a read that the mount's rule lets through writes
 * the new atime now, where the atime is kept, what an update that meets
 * ENOSPC does, and what the snapshot-time warning predicts. The access flow
 * that calls it is model/atime_policy.c (fs_access_inode):
 *
 *   access --mount rule says no--> skipped
 *     +-- read-only subvolume --> skipped
 *     +-- ops->holds_back() --> skipped (the policy counts why)
 *     +-- lazytime vfs --> kept in memory, written later through ops->write
 *     +-- reserve: ENOSPC --> ops->drops_on_enospc ? dropped : the read fails
 *     +-- ops->write(): where the policy keeps the atime
 *
 *   policy          file                        holds back when               keeps the atime in
 *   inline          model/policy_inline.c       never                          the inode item
 *   side-table      model/policy_side_table.c   never                          a per-subvolume tree
 *   threshold       model/policy_threshold.c    free space under the limit     the inode item
 *   snapshot-aware  model/policy_snapshot_aware.c  the inode's leaf is shared  the inode item
 *   hybrid          model/policy_hybrid.c       never                          inode item if private, else side tree
 *
 * A new policy is one file with one `const struct atime_policy_ops` and one
 * line in model/atime_policy_registry.c; its invariants, if it keeps state
 * of its own, in its ops' check (fs_check() calls it). It never asks which design runs:
 * what it needs of a design it asks through design.h (item_write_is_private,
 * inline_atime_estimate, side_trees), and supports() refuses designs that
 * lack it, checked by fs_new().
 */
#ifndef COWSIM_MODEL_ATIME_POLICY_H
#define COWSIM_MODEL_ATIME_POLICY_H

#include "design.h"

struct atime_policy_ops {
	const char *name;             /* as --policy names it (without parameters) */
	const char *syntax;           /* how --policy writes it: "threshold:PCT%" */

	/* A --policy word is NAME or NAME:ARG; the registry finds the policy
	 * by NAME and hands ARG (NULL when absent) to parse(), which sets the
	 * policy's parameters in *config or returns false with *error saying
	 * what ARG should be. NULL: the policy takes no ARG. */
	bool (*parse)(const char *arg, struct fs_config *config, GError **error);
	/* The word parse() would take back for `config`: "threshold:5%". May
	 * be NULL: the name. */
	void (*describe)(const struct fs_config *config, char *out, size_t size);
	/* The policy works in this design. NULL: in every design. */
	bool (*supports)(const struct fs_design_ops *design);

	/* --- where the atime lives ------------------------------------------ */

	/* A new subvolume (the top one at mkfs): set up per-subvolume storage
	 * (sv->atime_tree, with btree_init() and its ROOT_ITEM). May be NULL. */
	void (*subvolume_init)(struct fs *fs, struct subvolume *sv);
	/* After the design's snapshot_create / before... snapshot_delete: the
	 * per-subvolume storage follows the subvolume. May be NULL. */
	void (*snapshot_create)(struct fs *fs, struct subvolume *src, struct subvolume *snap);
	void (*snapshot_delete)(struct fs *fs, struct subvolume *snap);
	/* The atime kept for `inode` outside its inode item, if any: true with
	 * *atime set. NULL: the inode item holds it. */
	bool (*read)(const struct subvolume *sv, uint64_t inode, int64_t *atime);
	/* Writes `atime` where the policy keeps it, inside a reserved
	 * operation. *near is the path the access's own lookup left (NULL at a
	 * lazytime write-out); `inode`, when not NULL, is the inode item made
	 * writable by another change of the same inode (lazytime vfs: the atime
	 * rides along). */
	void (*write)(struct fs *fs, const struct inode_location *where, int64_t atime, struct btree_path *near,
		      struct btree_item *inode);

	/* --- when ------------------------------------------------------------ */

	/* Hold this update back (counted by the policy in fs->counters), given
	 * the atime now in force. NULL: never. */
	bool (*holds_back)(struct fs *fs, const struct subvolume *sv, const struct btree_item *inode, int64_t current);
	/* An update that meets ENOSPC is dropped and the read goes on (true),
	 * or the read fails with it (false: btrfs of 2012). */
	bool drops_on_enospc;

	/* The snapshot-time warning: bytes of metadata one access of every
	 * inode of `sv` would copy or add right after a snapshot of it.
	 * `wanted` says which inodes an access would update. */
	uint64_t (*unshare_estimate)(struct fs *fs, const struct subvolume *sv, fs_atime_wanted_fn wanted);

	/* --- checks ------------------------------------------------------------ */

	/* The invariants of the policy's own state (its file's labels), for
	 * fs_check() through fs_atime_check(): false with *error naming the
	 * label. Never on a replay's path. NULL: the policy keeps none. */
	bool (*check)(const struct fs *fs, GError **error);
};

/* The registry (model/atime_policy_registry.c), NULL-terminated, inline
 * first (the default). */
extern const struct atime_policy_ops *const atime_policies[];

/* --- shared by the policies (model/atime_policy.c) ------------------------- */

/* Storage in the inode item: write (ops->write for inline policies). */
void atime_write_inline(struct fs *fs, const struct inode_location *where, int64_t atime, struct btree_path *near,
			struct btree_item *inode);
/* The atime the inode item holds, its leaf's overlay included, whatever is
 * kept apart from it: false when the subvolume has no such inode. For
 * checks: a lookup from the tree's root. */
bool atime_inode_item_atime(const struct subvolume *sv, uint64_t inode, int64_t *atime);
/* The design's estimate for inline storage (private_only as design.h). */
uint64_t atime_estimate_inline(struct fs *fs, const struct subvolume *sv, fs_atime_wanted_fn wanted);

/* The side table (model/policy_side_table.c), for policies that keep
 * atimes in it. */
void atime_side_table_init(struct fs *fs, struct subvolume *sv);
void atime_side_table_snapshot(struct fs *fs, struct subvolume *src, struct subvolume *snap);
void atime_side_table_drop(struct fs *fs, struct subvolume *snap);
bool atime_side_table_read(const struct subvolume *sv, uint64_t inode, int64_t *atime);
void atime_side_table_write(struct fs *fs, struct subvolume *sv, uint64_t inode, int64_t atime);
/* Removes the inode's side-table item, if it has one. */
void atime_side_table_forget(struct fs *fs, struct subvolume *sv, uint64_t inode);
/* Bytes of side-table blocks that `count` new or changed items copy. */
uint64_t atime_side_table_estimate(const struct fs *fs, uint64_t count);
bool atime_side_table_supports(const struct fs_design_ops *design);

#endif
