/*
 * model/fs_namespace.c - paths, directory entries and the name operations.
 *
 * A directory's entries live in its own key range of its subvolume's tree:
 *
 *   (dir, DIR_ITEM 84, crc32c(name))   30 + name   found by name
 *   (dir, DIR_INDEX 96, index)         30 + name   readdir order
 *
 * and each inode names its parents with (inode, INODE_REF 12, parent),
 * 10 + name per name held. An entry whose location is a subvolume leads
 * into that subvolume's root directory (inode 256).
 *
 * Hash collisions: btrfs packs colliding names into one DIR_ITEM; the model
 * moves the colliding entry to the next free hash value instead (a 2^-32
 * event per pair of names in one directory; docs/model.md), at most
 * FS_DIR_HASH_PROBE past its hash, where lookups look. A new name whose
 * window is full is refused with -EOVERFLOW before anything changes, as
 * btrfs_check_dir_item_collision() refuses a DIR_ITEM that would overflow.
 *
 * A walk resolves each component with two lookups (the directory's inode
 * item, then the name's DIR_ITEM). Replays read a directory's files one after
 * another, then go on to a sibling directory or another snapshot's copy, so
 * the walk keeps a memo of the directories of the last path it resolved, in
 * bytes ("/", "/usr/", "/usr/include/", "/usr/include/linux/": its levels,
 * fs_internal.h), and the next walk starts from the deepest level its path
 * begins with (a byte comparison, no hashing):
 *  NS1 the memo is used only while fs->names_removed is what it was when its
 *     levels were made. A resolution can change only when a name goes away
 *     (an entry removed, which rename and unlink do, an inode deleted, a
 *     subvolume deleted); every such change counts in names_removed
 *     (fs_remove_dir_entry, fs_delete_inode_items, fs_delete_snapshot). New
 *     names change no existing resolution, and a walk has no side effects,
 *     so the memo gives exactly what a full walk would;
 *  NS2 when a level says checked, the step out of its directory does not
 *     look the directory's inode item up again: the memo was made by a walk
 *     whose step out of that directory found it a directory, an inode goes
 *     away only with a name (NS1), and a directory's S_IFDIR never changes.
 *     That lookup was a third of a read's walk (a descent from the root).
 *  NS3 an access's (a read's, a readdir's) inode lookup may start from the
 *     path the last access's left (fs->read_cursor, fs_internal.h) only when
 *     btree_path_is_current() says its blocks still hang from the tree's
 *     current root, slot by slot; btree_lookup_near() then finds from it
 *     exactly what a descent from the root finds. A grep's readdir of a
 *     directory and the reads of its files, in creation order, find
 *     neighbouring inode items, usually in the same leaf. Likewise a new
 *     name's lookup of its directory's inode item starts from the path the
 *     last new name's left at its directory's (fs->dir_cursor): a copy's
 *     next file is mostly in the same directory, whose lookup from the root
 *     was a twentieth of a create. The directory cursor and a new name's
 *     path are kept paths (btree.h BT18): stamped with the tree's links
 *     when found linked, they are linked while the links have not changed,
 *     and btree_path_is_current() is asked only after a change (it was
 *     1.5 % of a create, docs/performance.md round 20a).
 *  NS4 every DIR_ITEM sits at most FS_DIR_HASH_PROBE past its name's hash
 *     (see Hash collisions above), where lookups look for it.
 *  NS5 a read's path that is the memo's deepest level and one more name
 *     (another file of the last directory) takes just that step
 *     (walk_one_step()): the general walk would keep every level and take
 *     the same one step. A path whose last name leads to a directory (a
 *     readdir's) leaves that directory as the deepest level, checked by its
 *     entry's FT_DIR (NS6), as if the path went on into it: the reads of its
 *     names that follow take one step each (memo_push_into()).
 *  NS6 a DIR_ITEM's file_type is FT_DIR exactly when it leads to a
 *     directory (a subvolume's root, or an inode whose mode is S_IFDIR):
 *     mkdir and snapshots make such entries, link refuses directories and
 *     rename keeps the type. So the walk marks a level checked (NS2) when the
 *     entry that led into it says FT_DIR, not only once a step out of it
 *     found its inode item: a grep entering a directory made that lookup
 *     (a tenth of the seed's walk, round 15a).
 *  NS7 the memo's prefix[0, read_prefix) is also the last measured path's
 *     (fs_path, which only fs_read_path() takes): NS5's step of a measured
 *     path sets it to the prefix it found the path starts with, and every
 *     other walk clears it (walk()). So a measured path whose caller says it
 *     shares those bytes with the last one (fs_path.shared) takes NS5's step
 *     without comparing them: the reads of a grep in one directory compared
 *     its ~35 bytes each, where the replay's reader had compared each path
 *     with the last one already.
 * A step out of a directory the walks kept stepping out of asks that
 * directory's table of entries instead of the tree, a table a snapshot and
 * its source share while neither changed the directory (fs_dir_cache.c,
 * DC1-DC5).
 * fs_namespace_check() re-walks each level's prefix in full and checks NS1-NS2,
 * checks that a cursor that passes as linked is the root's path and that one
 * stamped with its tree's links is linked (BT18), and
 * reads every DIR_ITEM of every live subvolume for NS4 and NS6.
 */
#include "design.h"
#include "model_error.h"

#include <errno.h>
#include <string.h>

/* crc32c (Castagnoli), as btrfs_name_hash() = crc32c(~1, name). */
static uint32_t crc32c_table[256];

static void crc32c_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc32c_table[i] = c;
	}
}

static uint32_t crc32c_bytes(uint32_t crc, const char *name, size_t length)
{
	for (size_t i = 0; i < length; i++)
		crc = crc32c_table[(crc ^ (uint8_t)name[i]) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* SSE4.2's crc32 instruction is this same reflected Castagnoli step, eight
 * bytes at a time: every path component of every operation is hashed. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const char *name, size_t length)
{
	uint64_t c = crc;
	for (; length >= 8; name += 8, length -= 8) {
		uint64_t word;
		memcpy(&word, name, 8);
		c = __builtin_ia32_crc32di(c, word);
	}
	crc = (uint32_t)c;
	if (length & 4) { /* the rest, 4, 2 and 1 bytes at a time, in order */
		uint32_t word;
		memcpy(&word, name, 4);
		crc = __builtin_ia32_crc32si(crc, word);
		name += 4;
	}
	if (length & 2) {
		uint16_t half;
		memcpy(&half, name, 2);
		crc = __builtin_ia32_crc32hi(crc, half);
		name += 2;
	}
	if (length & 1)
		crc = __builtin_ia32_crc32qi(crc, (unsigned char)*name);
	return crc;
}
#endif

G_NO_INLINE static uint32_t crc32c_software(const char *name, size_t length)
{
	static gsize initialised;
	if (g_once_init_enter(&initialised)) {
		crc32c_init();
		g_once_init_leave(&initialised, 1);
	}
	return crc32c_bytes(~1u, name, length);
}

uint32_t fs_name_hash(const char *name, size_t length)
{
#if defined(__x86_64__) && defined(__GNUC__)
	/* One load and a test (libgcc set the CPU's features up before main):
	 * the once-check that came first was a quarter of a hash. */
	if (__builtin_cpu_supports("sse4.2"))
		return crc32c_sse42(~1u, name, length);
#endif
	return crc32c_software(name, length);
}

const struct btree_item *fs_inode_item(const struct subvolume *subvolume, uint64_t inode)
{
	struct btree_key key = BTRFS_KEY(inode, BTRFS_INODE_ITEM_KEY, 0);
	return subvol_lookup(subvolume, &key);
}

const struct btree_item *fs_inode_item_near(const struct subvolume *subvolume, uint64_t inode,
					    struct btree_path *near)
{
	struct btree_key key = BTRFS_KEY(inode, BTRFS_INODE_ITEM_KEY, 0);
	return subvol_lookup_near(subvolume, &key, near);
}

struct btree_item *fs_inode_item_for_write(struct fs *fs, const struct inode_location *where)
{
	struct btree_key key = BTRFS_KEY(where->inode, BTRFS_INODE_ITEM_KEY, 0);
	struct btree_item *item = subvol_lookup_for_write(fs, where->subvolume, &key);
	if (item) {
		fs_dirty_time_other_change(fs, where, item); /* lazytime vfs: the atime rides along */
		delayed_items_inode_dirty(fs, where->subvolume, where->inode); /* btrfs_delayed_update_inode */
	}
	return item;
}

struct btree_item *fs_inode_item_for_write_near(struct fs *fs, const struct inode_location *where,
						struct btree_path *near)
{
	struct btree_key key = BTRFS_KEY(where->inode, BTRFS_INODE_ITEM_KEY, 0);
	struct btree_item *item = subvol_lookup_for_write_near(fs, where->subvolume, &key, near);
	if (item)
		fs_dirty_time_other_change(fs, where, item); /* as fs_inode_item_for_write */
	return item;
}

struct dir_match {
	const char *name;
	uint16_t name_len;
	const struct btree_item *found;
	uint64_t unused_offset; /* the first offset from the hash on that no entry seen holds */
};

static bool entry_is_named(const struct btree_item *item, const char *name, uint16_t name_len)
{
	const struct item_dir *entry = btree_item_dir(item);
	return entry->name_len == name_len && !memcmp(entry->name, name, name_len);
}

static bool match_name(const struct btree_item *item, void *opaque)
{
	struct dir_match *m = opaque;
	if (entry_is_named(item, m->name, m->name_len)) {
		m->found = item;
		return false;
	}
	if (btree_item_key(item)->offset == m->unused_offset)
		m->unused_offset++;
	return true;
}

/* The DIR_ITEM for `name` (whose hash is `hash`) in `dir`: at its hash, or
 * a few slots past it when a collision moved it (see the top of the file).
 * When absent, *hash_slot (if given) is the offset its entry would take: the
 * visit saw every entry from the hash to hash + FS_DIR_HASH_PROBE, so the first
 * offset it did not see is free_hash_slot()'s answer, unless all were taken. */
static const struct btree_item *dir_lookup_hashed(const struct subvolume *subvolume, uint64_t dir, uint32_t hash,
						  const char *name, uint16_t name_len, struct btree_path *near,
						  uint64_t *hash_slot)
{
	struct btree_key first = BTRFS_KEY(dir, BTRFS_DIR_ITEM_KEY, hash);
	struct btree_key last = BTRFS_KEY(dir, BTRFS_DIR_ITEM_KEY, (uint64_t)hash + FS_DIR_HASH_PROBE);
	struct dir_match m = { name, name_len, NULL, hash };
	subvol_visit_range_near(subvolume, &first, &last, match_name, &m, near);
	if (hash_slot)
		*hash_slot = !m.found && m.unused_offset <= last.offset ? m.unused_offset : FS_HASH_SLOT_UNKNOWN;
	return m.found;
}

static const struct btree_item *dir_lookup_near(const struct subvolume *subvolume, uint64_t dir,
					       const char *name, uint16_t name_len, struct btree_path *near)
{
	return dir_lookup_hashed(subvolume, dir, fs_name_hash(name, name_len), name, name_len, near, NULL);
}

/* dir_lookup_near() for a name a walk expects to find: the entry at its own
 * hash, one lookup, is the common case; the visit of the hash's range finds
 * the rest (a collision's, and none). Both leave *near at the entry. */
static const struct btree_item *dir_find_near(const struct subvolume *subvolume, uint64_t dir, uint32_t hash,
					     const char *name, uint16_t name_len, struct btree_path *near)
{
	struct btree_key key = BTRFS_KEY(dir, BTRFS_DIR_ITEM_KEY, hash);
	const struct btree_item *entry = subvol_lookup_near(subvolume, &key, near);
	if (entry && entry_is_named(entry, name, name_len))
		return entry;
	return dir_lookup_hashed(subvolume, dir, hash, name, name_len, near, NULL);
}

const struct btree_item *fs_dir_lookup(const struct subvolume *subvolume, uint64_t dir, const char *name,
				       uint16_t name_len)
{
	struct btree_path near = { .levels = 0 };
	return dir_lookup_near(subvolume, dir, name, name_len, &near);
}

int fs_dir_name_room(const struct subvolume *subvolume, uint64_t dir, const char *name, uint16_t name_len)
{
	struct btree_path near = { .levels = 0 };
	uint64_t slot;
	if (dir_lookup_hashed(subvolume, dir, fs_name_hash(name, name_len), name, name_len, &near, &slot))
		return -EEXIST;
	return slot == FS_HASH_SLOT_UNKNOWN ? -EOVERFLOW : 0;
}

/* The live subvolume a directory entry of dir_sv links, or NULL: the entry
 * names no subvolume, or it is a placeholder (btrfs_lookup_dentry(): no
 * ROOT_BACKREF from dir_sv, or the subvolume is deleted). */
static struct subvolume *linked_subvolume_id(struct fs *fs, const struct subvolume *dir_sv, uint64_t id)
{
	struct subvolume *sv = fs_subvolume(fs, id);
	return sv && !sv->deleted && fs_is_subvolume_link(fs, dir_sv, sv) ? sv : NULL;
}

static struct subvolume *linked_subvolume(struct fs *fs, const struct subvolume *dir_sv,
					  const struct btree_item *entry)
{
	if (!btree_item_dir(entry)->location_is_root)
		return NULL;
	return linked_subvolume_id(fs, dir_sv, btree_item_dir(entry)->location);
}

/* One component: AT (a directory, already known to be one when AT_IS_DIR:
 * NS2) to its entry NAME, whose fs_name_hash() is HASH; *INTO_DIR: the
 * entry's type says a directory (NS6). A directory's inode item and its DIR_ITEMs share the objectid, so
 * both lookups usually land in one leaf: *near carries it. Inlined in both
 * of walk()'s steps: it is most of a walk. */
static inline __attribute__((always_inline)) int step_into(struct fs *fs, struct inode_location *at,
							   const char *name, size_t length, uint32_t hash,
							   struct btree_path *near, bool at_is_dir, bool *into_dir)
{
	if (length > BTRFS_NAME_LEN)
		return -ENAMETOOLONG;
	if (!at_is_dir) {
		const struct btree_item *inode = fs_inode_item_near(at->subvolume, at->inode, near);
		if (!inode)
			return -ENOENT;
		if (!fs_mode_is_dir(btree_item_inode(inode)->mode))
			return -ENOTDIR;
	}
	uint64_t location;
	bool location_is_root;
	const struct dir_cache_entry *cached;
	if (fs_dir_cache_find(fs, at->subvolume, at->inode, hash, name, (uint16_t)length, &cached)) { /* DC1 */
		if (!cached)
			return -ENOENT;
		location = cached->location;
		location_is_root = cached->location_is_root;
		*into_dir = cached->file_type == FT_DIR;
	} else {
		const struct btree_item *entry = dir_find_near(at->subvolume, at->inode, hash, name, (uint16_t)length, near);
		if (!entry)
			return -ENOENT;
		location = btree_item_dir(entry)->location;
		location_is_root = btree_item_dir(entry)->location_is_root;
		*into_dir = btree_item_dir(entry)->file_type == FT_DIR;
	}
	if (location_is_root) {
		struct subvolume *next = linked_subvolume_id(fs, at->subvolume, location);
		if (!next) {
			at->inode = FS_PLACEHOLDER_INODE;
			*into_dir = false; /* no inode item: the next step says -ENOENT, as before */
			return 0;
		}
		at->subvolume = next;
		at->inode = FS_ROOT_DIR_INODE;
	} else {
		at->inode = location;
	}
	return 0;
}

/* How many leading bytes a and b share, at most limit: a word at a time (a
 * walk that turns to another directory compared the memo's prefix byte by
 * byte, a fifth of its instructions). */
static size_t shared_bytes(const char *a, const char *b, size_t limit)
{
	size_t same = 0;
	for (; same + 8 <= limit; same += 8) {
		uint64_t differ = fs_load64(a + same) ^ fs_load64(b + same);
		if (differ) /* the first byte that differs: the lowest one in memory order */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			return same + (size_t)__builtin_clzll(differ) / 8;
#else
			return same + (size_t)__builtin_ctzll(differ) / 8;
#endif
	}
	while (same < limit && a[same] == b[same])
		same++;
	return same;
}

/* NS1: how many of the memo's levels path[0, end) starts with; the walk
 * resumes at the deepest of them. A memo older than the last name that
 * went away is forgotten. */
static unsigned memo_levels_matching(struct fs *fs, const char *path, size_t end)
{
	struct walk_memo *m = &fs->walk_memo;
	if (m->names_removed != fs->names_removed) {
		m->depth = 0;
		m->names_removed = fs->names_removed;
		return 0;
	}
	unsigned depth = m->depth;
	while (depth && m->levels[depth - 1].end > end)
		depth--;
	if (!depth || fs_bytes_equal(m->prefix, path, m->levels[depth - 1].end))
		return depth; /* the common case: another file of the last directory */
	size_t same = shared_bytes(m->prefix, path, m->levels[depth - 1].end);
	while (depth && m->levels[depth - 1].end > same)
		depth--;
	return depth;
}

/* path[0, end) ends with '/' and leads to dir: the memo's next level, whose
 * index is returned (-1: too long to keep). The memo's bytes are path's up
 * to its deepest level (the walk kept only levels path starts with). */
static int memo_push(struct fs *fs, const char *path, size_t end, const struct inode_location *dir)
{
	struct walk_memo *m = &fs->walk_memo;
	if (end >= sizeof(m->prefix))
		return -1;
	size_t have = m->depth ? m->levels[m->depth - 1].end : 0;
	if (m->depth == WALK_MEMO_LEVELS)
		m->depth--; /* the deepest level is the one the next walks want */
	memcpy(m->prefix + have, path + have, end - have);
	m->levels[m->depth] = (struct walk_memo_level){ .end = (uint16_t)end, .dir = *dir };
	return (int)m->depth++;
}

/* path[0, end) names a directory dir whose entry said FT_DIR (NS6), without
 * the '/' after it: its level, checked, as if the path went on into it. A
 * readdir is followed by reads of the directory's names (a grep), which then
 * take walk_one_step() instead of a walk from the level above (45 000 walks
 * of the seed run). */
static void memo_push_into(struct fs *fs, const char *path, size_t end, const struct inode_location *dir)
{
	struct walk_memo *m = &fs->walk_memo;
	if (end + 1 >= sizeof(m->prefix))
		return;
	int level = memo_push(fs, path, end, dir);
	m->prefix[end] = '/';
	m->levels[level].end = (uint16_t)(end + 1);
	m->levels[level].checked = true;
}

/* NS5: another name in the memo's deepest directory (most reads): path is
 * that level's prefix and one component, no '/', "." or ".." in it. The
 * general walk would keep every level (memo_levels_matching()), find that
 * one component and step once from the level's directory, checked (NS2),
 * pushing nothing: this does just the step. False: not such a path. A path
 * not measured yet (length FS_PATH_UNMEASURED) is measured on the way:
 * strncmp() of the prefix stops at a NUL, and the name ends at the first
 * '/' or NUL (strlen, the prefix compare and the search for '/' were a
 * quarter of a walk, round 15a). A measured one is compared a word at a
 * time, and its name_at says whether its last '/' ends the prefix (the
 * reader found it on its own thread: the seed's model thread saved about
 * 40 instructions a read, round 20c). */
static bool walk_one_step(struct fs *fs, const struct fs_path *p, struct inode_location *out,
			  struct btree_path *near, int *ret)
{
	const char *path = p->bytes;
	const struct walk_memo *m = &fs->walk_memo;
	if (!m->depth || m->names_removed != fs->names_removed)
		return false;
	const struct walk_memo_level *deepest = &m->levels[m->depth - 1];
	size_t end = deepest->end;
	if (!deepest->checked)
		return false;
	const char *name = path + end;
	size_t name_len;
	if (p->len == FS_PATH_UNMEASURED) {
		if (strncmp(m->prefix, path, end))
			return false;
		const char *stop = strchrnul(name, '/');
		if (*stop)
			return false;
		name_len = (size_t)(stop - name);
	} else {
		if (p->name_at != end)
			return false;
		if ((p->shared < end || m->read_prefix < end) && !fs_bytes_equal(m->prefix, path, end)) /* NS7 */
			return false;
		fs->walk_memo.read_prefix = (uint16_t)end; /* NS7: the path's, as the memo's */
		name_len = p->len - end;
	}
	if (!name_len || (name[0] == '.' && (name_len == 1 || (name_len == 2 && name[1] == '.'))))
		return false;
	*out = deepest->dir;
	bool into_dir;
	/* the reader's hash of the name, when it gave one: the name is path[name_at, len) */
	uint32_t hash = p->hashed ? p->name_hash : fs_name_hash(name, name_len);
	*ret = step_into(fs, out, name, name_len, hash, near, true, &into_dir);
	if (!*ret && into_dir) /* into_dir is set only by a step that found a directory (not a placeholder) */
		memo_push_into(fs, path, end + name_len, out);
	return true;
}

/* Walks the components of path[0, end), from the memo's deepest level that
 * path starts with, and records every directory it passes through: each
 * prefix that ends with '/' (the root's "/" too) becomes a level. */
static int walk(struct fs *fs, const char *path, size_t end, struct inode_location *out, struct btree_path *near)
{
	struct walk_memo *m = &fs->walk_memo;
	m->read_prefix = 0; /* NS7: the bytes may become another path's */
	if (path[0] != '/' || !end)
		return -EINVAL;
	m->depth = memo_levels_matching(fs, path, end);
	size_t i;
	int at_level; /* the memo's level for *out, -1 when it has none */
	if (m->depth) {
		at_level = (int)m->depth - 1;
		*out = m->levels[at_level].dir;
		i = m->levels[at_level].end;
	} else {
		out->subvolume = fs_subvolume(fs, FS_TOP_SUBVOLUME);
		out->inode = FS_ROOT_DIR_INODE;
		at_level = memo_push(fs, path, 1, out);
		i = 1;
	}
	while (i < end) {
		while (i < end && path[i] == '/')
			i++;
		size_t start = i;
		const char *slash = memchr(path + i, '/', end - i); /* a word at a time: a tenth of a walk */
		i = slash ? (size_t)(slash - path) : end;
		size_t length = i - start;
		if (!length || (length == 1 && path[start] == '.'))
			continue;
		if (length == 2 && path[start] == '.' && path[start + 1] == '.')
			return -EINVAL;
		bool out_is_dir = at_level >= 0 && m->levels[at_level].checked; /* NS2 */
		bool into_dir;
		int ret = step_into(fs, out, path + start, length, fs_name_hash(path + start, length), near, out_is_dir,
				    &into_dir);
		if (ret)
			return ret;
		if (at_level >= 0)
			m->levels[at_level].checked = true; /* the step out of it found a directory */
		if (i == end) {
			if (into_dir)
				memo_push_into(fs, path, end, out);
			break;
		}
		at_level = memo_push(fs, path, i + 1, out); /* path[i] is '/' */
		if (at_level >= 0)
			m->levels[at_level].checked = into_dir; /* NS6: its entry's type says so */
	}
	return 0;
}

/* NS3 for one kept path: when it passes btree_path_is_current(), it is the
 * path a descent from the root to its leaf's first key takes, block for block. */
static bool near_check(const struct subvolume *sv, const struct btree_path *near, const char *what,
		       GError **error)
{
	if (near->levels > G_N_ELEMENTS(near->nodes)) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT, "corrupt %s: NS3 %u levels", what,
			    near->levels);
		return false;
	}
	if (!sv || !btree_path_is_current(sv->tree, near) || !near->nodes[0]->nritems)
		return true; /* not used: a lookup starts from the root */
	struct btree_path from_root;
	btree_lookup(sv->tree, btree_item_key(btree_leaf_item(near->nodes[0], 0)), &from_root);
	for (unsigned level = 0; level < near->levels; level++)
		if (from_root.nodes[level] != near->nodes[level]) {
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt %s: NS3 linked but off the root's path at level %u", what, level);
			return false;
		}
	return true;
}

/* NS3 for a kept cursor (the read cursor, the directory cursor). */
static bool cursor_check(struct fs *fs, const struct read_cursor *c, const char *what, GError **error)
{
	if (!c->inode_near.levels)
		return true;
	bool known = false;
	for (unsigned i = 0; i < fs->subvolumes->len && !known; i++)
		known = fs->subvolumes->pdata[i] == c->subvolume;
	if (!known) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt %s: NS3 a path in no subvolume of this filesystem", what);
		return false;
	}
	if (c->subvolume->deleted)
		return true; /* taken only for the subvolume of the lookup */
	if (!near_check(c->subvolume, &c->inode_near, what, error))
		return false;
	if (!btree_kept_path_check(c->subvolume->tree, &c->inode_near, error)) {
		g_prefix_error(error, "corrupt %s: ", what);
		return false;
	}
	return true;
}

/* NS1-NS2 for one level: a full walk of its prefix leads to its directory,
 * which is one when the level is marked checked. */
static bool memo_level_check(struct fs *fs, const struct walk_memo *memo, unsigned k, GError **error)
{
	const struct walk_memo_level *l = &memo->levels[k];
	if (!l->end || l->end >= sizeof(memo->prefix) || memo->prefix[l->end - 1] != '/' ||
	    (k && l->end <= memo->levels[k - 1].end)) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt walk memo: level %u, NS1 its prefix does not end with '/' past the level above", k);
		return false;
	}
	struct inode_location full;
	struct btree_path near = { .levels = 0 };
	fs->walk_memo.depth = 0; /* a full walk: the memo itself must not answer */
	int ret = walk(fs, memo->prefix, l->end, &full, &near);
	if (ret || full.subvolume != l->dir.subvolume || full.inode != l->dir.inode) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt walk memo: %" G_GUINT64_FORMAT ", NS1 the prefix '%.*s' leads elsewhere",
			    l->dir.inode, (int)l->end, memo->prefix);
		return false;
	}
	if (!l->checked || fs_is_placeholder(&l->dir))
		return true;
	const struct btree_item *inode = fs_inode_item_near(l->dir.subvolume, l->dir.inode, &near);
	if (!inode || !fs_mode_is_dir(btree_item_inode(inode)->mode)) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt walk memo: %" G_GUINT64_FORMAT ", NS2 marked checked but not a directory",
			    l->dir.inode);
		return false;
	}
	return true;
}

struct hash_window_check {
	const struct subvolume *sv;
	const struct btree_item *misplaced, *mistyped;
};

/* NS6 for one entry: FT_DIR exactly when it leads to a directory. */
static bool entry_type_is_right(const struct subvolume *sv, const struct item_dir *entry)
{
	if (entry->location_is_root)
		return entry->file_type == FT_DIR;
	const struct btree_item *inode = fs_inode_item(sv, entry->location);
	return inode && (entry->file_type == FT_DIR) == fs_mode_is_dir(btree_item_inode(inode)->mode);
}

static bool entry_in_hash_window(const struct btree_item *item, void *opaque)
{
	struct hash_window_check *c = opaque;
	const struct btree_key *key = btree_item_key(item);
	if (key->type != BTRFS_DIR_ITEM_KEY)
		return true;
	const struct item_dir *entry = btree_item_dir(item);
	if (!entry_type_is_right(c->sv, entry)) {
		c->mistyped = item;
		return false;
	}
	uint64_t hash = fs_name_hash(entry->name, entry->name_len);
	if (key->offset >= hash && key->offset <= hash + FS_DIR_HASH_PROBE)
		return true;
	c->misplaced = item;
	return false;
}

/* NS4 and NS6 in every live subvolume. */
static bool hash_windows_check(const struct fs *fs, GError **error)
{
	const struct btree_key first = BTRFS_KEY(0, 0, 0), last = BTRFS_KEY(UINT64_MAX, UINT8_MAX, UINT64_MAX);
	for (unsigned i = 0; i < fs->subvolumes->len; i++) {
		struct hash_window_check c = { fs->subvolumes->pdata[i], NULL, NULL };
		if (c.sv->deleted)
			continue;
		subvol_visit_range(c.sv, &first, &last, entry_in_hash_window, &c);
		if (c.mistyped) {
			const struct item_dir *entry = btree_item_dir(c.mistyped);
			g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
				    "corrupt directory entry: %" G_GUINT64_FORMAT ", NS6 '%.*s' of type %u is not what it"
				    " leads to", btree_item_key(c.mistyped)->objectid, (int)entry->name_len, entry->name,
				    entry->file_type);
			return false;
		}
		if (!c.misplaced)
			continue;
		const struct item_dir *entry = btree_item_dir(c.misplaced);
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt directory entry: %" G_GUINT64_FORMAT ", NS4 '%.*s' at hash offset %" G_GUINT64_FORMAT
			    ", outside its window from %u", btree_item_key(c.misplaced)->objectid, (int)entry->name_len,
			    entry->name, btree_item_key(c.misplaced)->offset, fs_name_hash(entry->name, entry->name_len));
		return false;
	}
	return true;
}

bool fs_namespace_check(struct fs *fs, GError **error)
{
	if (!cursor_check(fs, &fs->read_cursor, "read cursor", error) ||
	    !cursor_check(fs, &fs->dir_cursor, "directory cursor", error) || !hash_windows_check(fs, error))
		return false;
	if (!fs->walk_memo.depth || fs->walk_memo.names_removed != fs->names_removed)
		return true; /* no memo in use */
	if (fs->walk_memo.depth > WALK_MEMO_LEVELS) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT, "corrupt walk memo: %u levels",
			    fs->walk_memo.depth);
		return false;
	}
	if (fs->walk_memo.read_prefix > fs->walk_memo.levels[fs->walk_memo.depth - 1].end) {
		g_set_error(error, MODEL_ERROR, MODEL_ERROR_CORRUPT,
			    "corrupt walk memo: NS7 the last read's %u bytes pass the deepest level's end %u",
			    fs->walk_memo.read_prefix, fs->walk_memo.levels[fs->walk_memo.depth - 1].end);
		return false;
	}
	g_autofree struct walk_memo *memo = g_memdup2(&fs->walk_memo, sizeof(fs->walk_memo));
	bool ok = true, cache_off = fs->dir_cache.off;
	fs->dir_cache.off = true; /* full walks, from the tree alone */
	for (unsigned k = 0; k < memo->depth && ok; k++)
		ok = memo_level_check(fs, memo, k, error);
	fs->dir_cache.off = cache_off;
	fs->walk_memo = *memo;
	return ok;
}

int fs_resolve(struct fs *fs, const char *path, struct inode_location *out)
{
	struct btree_path near = { .levels = 0 };
	return walk(fs, path, strlen(path), out, &near);
}

int fs_resolve_near(struct fs *fs, const struct fs_path *path, struct inode_location *out, struct btree_path *near)
{
	int ret;
	if (walk_one_step(fs, path, out, near, &ret))
		return ret;
	return walk(fs, path->bytes, path->len == FS_PATH_UNMEASURED ? strlen(path->bytes) : path->len, out, near);
}

int fs_resolve_parent(struct fs *fs, const char *path, struct name_location *out)
{
	size_t end = strlen(path);
	while (end > 1 && path[end - 1] == '/')
		end--;
	const char *last = memrchr(path, '/', end); /* a word at a time: the byte loop was 80 a create */
	size_t slash = last ? (size_t)(last - path) + 1 : 0;
	size_t length = end - slash;
	if (!length || (length == 1 && path[slash] == '.') || (length == 2 && !strncmp(path + slash, "..", 2)))
		return -EINVAL;
	if (length > BTRFS_NAME_LEN)
		return -ENAMETOOLONG;
	out->near.levels = 0;
	out->near.links = 0; /* a kept path (BT18), stamped once found linked */
	out->near.hop = 0;
	out->dir_leaf = NULL;
	int ret = walk(fs, path, slash, &out->dir, &out->near);
	if (ret)
		return ret;
	if (!fs_is_placeholder(&out->dir)) {
		/* NS3: most new names go to the directory the last one went to. */
		struct read_cursor *c = &fs->dir_cursor;
		if (c->subvolume == out->dir.subvolume && btree_path_kept_linked(c->subvolume->tree, &c->inode_near))
			out->near = c->inode_near;
		const struct btree_item *dir = fs_inode_item_near(out->dir.subvolume, out->dir.inode, &out->near);
		if (!dir)
			return -ENOENT;
		if (!fs_mode_is_dir(btree_item_inode(dir)->mode))
			return -ENOTDIR;
		if (out->near.levels) {
			out->dir_leaf = out->near.nodes[0];
			out->dir_slot = out->near.slots[0];
		}
	}
	out->name = path + slash;
	out->name_len = (uint16_t)length;
	out->hash_slot = FS_HASH_SLOT_UNKNOWN;
	return 0;
}

/* The next DIR_INDEX of a directory: one past the largest in use, as btrfs
 * recomputes index_cnt (btrfs_set_inode_index_count); 2 in an empty one. */
static uint64_t next_dir_index(const struct subvolume *subvolume, uint64_t dir)
{
	uint64_t waiting;
	if (delayed_items_last_index(subvolume->fs, subvolume, dir, &waiting))
		return waiting + 1; /* the delayed node's index_cnt */
	struct btree_key key = BTRFS_KEY(dir, BTRFS_DIR_INDEX_KEY, UINT64_MAX);
	const struct btree_item *last = subvol_lookup_le(subvolume, &key);
	if (last && btree_item_key(last)->objectid == dir && btree_item_key(last)->type == BTRFS_DIR_INDEX_KEY)
		return btree_item_key(last)->offset + 1;
	return 2;
}

/* The first free offset of the hash's window: every caller of
 * fs_add_dir_entry() checked that there is one (prepare_new_name(),
 * fs_dir_name_room()) and removed nothing from the window since, or removed
 * the replaced name's own entry, which was in it. */
static uint64_t free_hash_slot(const struct subvolume *subvolume, uint64_t dir, uint32_t hash)
{
	for (uint64_t offset = hash; offset <= (uint64_t)hash + FS_DIR_HASH_PROBE; offset++) {
		struct btree_key key = BTRFS_KEY(dir, BTRFS_DIR_ITEM_KEY, offset);
		if (!subvol_lookup(subvolume, &key))
			return offset;
	}
	g_assert_not_reached(); /* an entry past the window would be unfindable */
}

/* The directory's size and times after an entry came or went. *near: a
 * path into its subvolume left by the entry's change (or levels 0); the
 * directory's inode item sorts just before its entries, usually in the
 * same leaf. */
static void touch_dir(struct fs *fs, const struct inode_location *dir, int64_t size_change, struct btree_path *near)
{
	struct item_inode *inode = btree_item_inode_for_write(fs_inode_item_for_write_near(fs, dir, near));
	delayed_items_inode_dirty(fs, dir->subvolume, dir->inode); /* as fs_inode_item_for_write() */
	inode->size = (uint64_t)((int64_t)inode->size + size_change);
	inode->mtime = inode->ctime = fs->clock_ns;
}

int fs_add_dir_entry(struct fs *fs, const struct name_location *at, uint64_t location, bool location_is_root,
		     uint8_t file_type)
{
	struct subvolume *sv = at->dir.subvolume;
	union item_payload payload = { .dir = {
		.location = location,
		.index = next_dir_index(sv, at->dir.inode),
		.name = g_string_chunk_insert_len(fs->names, at->name, at->name_len),
		.name_len = at->name_len,
		.file_type = file_type,
		.location_is_root = location_is_root,
	} };
	uint32_t size = BTRFS_DIR_ITEM_SIZE + at->name_len;
	uint64_t slot = at->hash_slot != FS_HASH_SLOT_UNKNOWN
				? at->hash_slot
				: free_hash_slot(sv, at->dir.inode, fs_name_hash(at->name, at->name_len));
	struct btree_key item_key = BTRFS_KEY(at->dir.inode, BTRFS_DIR_ITEM_KEY, slot);
	/* The name check's path, if the new inode's items (at the tree's right
	 * edge) left it linked: usually the entry's own leaf (NS3). */
	struct btree_path near = at->near;
	if (!btree_path_kept_linked(sv->tree, &near))
		near.levels = 0;
	subvol_insert_near(fs, sv, &item_key, size, &payload, &near);
	fs_dir_cache_names_changed(fs, sv, at->dir.inode); /* DC1 (fs_dir_cache.c) */
	/* btrfs_insert_delayed_dir_index(): the index waits (delayed_items.h). */
	if (delayed_items_insert_index(fs, sv, at->dir.inode, payload.dir.index, size, &payload))
		near.levels = 0;
	/* The directory's inode item sorts before the entry: from where the
	 * parent's lookup found it, if the entry went in after it in that leaf,
	 * the item is one compare away, not a search of the leaf (a tenth of
	 * fs_add_dir_entry(), docs/performance.md round 17). */
	if (near.levels && near.nodes[0] == at->dir_leaf && at->dir_slot < near.slots[0])
		near.slots[0] = at->dir_slot;
	touch_dir(fs, &at->dir, 2 * (int64_t)at->name_len, &near);
	if (near.levels) /* at the directory's inode item (NS3) */
		fs->dir_cursor = (struct read_cursor){ .subvolume = sv, .inode_near = near };
	return 0;
}

void fs_remove_dir_entry(struct fs *fs, const struct name_location *at)
{
	fs->names_removed++; /* NS1 */
	struct subvolume *sv = at->dir.subvolume;
	fs_dir_cache_names_changed(fs, sv, at->dir.inode); /* DC1 (fs_dir_cache.c) */
	const struct btree_item *entry = fs_dir_lookup(sv, at->dir.inode, at->name, at->name_len);
	g_assert(entry);
	struct btree_key item_key = *btree_item_key(entry);
	struct btree_key index_key =
		BTRFS_KEY(at->dir.inode, BTRFS_DIR_INDEX_KEY, btree_item_dir(entry)->index);
	subvol_delete(fs, sv, &item_key);
	if (!delayed_items_cancel_index(fs, sv, at->dir.inode, index_key.offset))
		subvol_delete(fs, sv, &index_key);
	struct btree_path near = { .levels = 0 };
	touch_dir(fs, &at->dir, -2 * (int64_t)at->name_len, &near);
}

/* INODE_REF (inode, 12, parent): one item per parent, 10 + name per name. */
static void add_inode_ref(struct fs *fs, struct subvolume *sv, uint64_t inode, uint64_t parent, uint16_t name_len)
{
	struct btree_key key = BTRFS_KEY(inode, BTRFS_INODE_REF_KEY, parent);
	uint32_t bytes = BTRFS_INODE_REF_SIZE + name_len;
	const struct btree_item *ref = subvol_lookup(sv, &key);
	if (ref) {
		uint32_t size = btree_item_size(ref) + bytes;
		(*btree_item_value_for_write(subvol_resize(fs, sv, &key, size)))++;
		return;
	}
	union item_payload payload = { .ref = { .count = 1 } };
	subvol_insert(fs, sv, &key, bytes, &payload);
}

/*
 * Whether a name of name_len bytes still fits the inode's INODE_REF item in
 * `parent` once a name of freed_len bytes (0: none) has left it. The item
 * holds every name of the inode in that directory and cannot outgrow a leaf:
 * btrfs then writes INODE_EXTREF items (the extref mkfs feature); the model
 * refuses the name with -EMLINK, as btrfs without extref does
 * (btrfs_insert_inode_ref turns split_leaf's -EOVERFLOW into -EMLINK).
 */
static bool inode_ref_has_room(struct fs *fs, struct subvolume *sv, uint64_t inode, uint64_t parent,
			       uint16_t name_len, uint16_t freed_len)
{
	struct btree_key key = BTRFS_KEY(inode, BTRFS_INODE_REF_KEY, parent);
	const struct btree_item *ref = subvol_lookup(sv, &key);
	uint32_t size = ref ? btree_item_size(ref) : 0;
	if (ref && freed_len)
		size -= BTRFS_INODE_REF_SIZE + freed_len;
	size += BTRFS_INODE_REF_SIZE + name_len;
	return BTRFS_ITEM_HEADER_SIZE + size <= btree_leaf_capacity(fs->config.nodesize);
}

static void remove_inode_ref(struct fs *fs, struct subvolume *sv, uint64_t inode, uint64_t parent,
			     uint16_t name_len)
{
	struct btree_key key = BTRFS_KEY(inode, BTRFS_INODE_REF_KEY, parent);
	const struct btree_item *ref = subvol_lookup(sv, &key);
	if (!ref)
		return;
	if (btree_item_value(ref) <= 1) {
		subvol_delete(fs, sv, &key);
		return;
	}
	uint32_t size = btree_item_size(ref) - (BTRFS_INODE_REF_SIZE + name_len);
	(*btree_item_value_for_write(subvol_resize(fs, sv, &key, size)))--;
}

static int64_t time_or_now(int64_t t, int64_t now)
{
	return t == INT64_MIN ? now : t;
}

/* Common checks for a new name: the parent exists, is writable, and the
 * name is free. A placeholder takes no names: the VFS finds no mkdir,
 * symlink, link or rename in simple_dir_inode_operations (EPERM; a create
 * is EACCES, see fs_create()). */
static int prepare_new_name(struct fs *fs, const char *path, struct name_location *at)
{
	int ret = fs_resolve_parent(fs, path, at);
	if (ret)
		return ret;
	if (fs_is_placeholder(&at->dir))
		return -EPERM;
	if (at->dir.subvolume->readonly)
		return -EROFS;
	/* The check's visit also finds the new entry's hash slot: nothing
	 * adds a DIR_ITEM to the directory before fs_add_dir_entry(). It
	 * starts where the directory's inode item was found: its entries sort
	 * just after it. */
	if (dir_lookup_hashed(at->dir.subvolume, at->dir.inode, fs_name_hash(at->name, at->name_len), at->name,
			      at->name_len, &at->near, &at->hash_slot))
		return -EEXIST;
	/* The visit saw the whole window taken (see the top of the file). */
	return at->hash_slot == FS_HASH_SLOT_UNKNOWN ? -EOVERFLOW : 0;
}

/* A new inode with its INODE_ITEM, INODE_REF and directory entry. */
static uint64_t new_inode(struct fs *fs, const struct name_location *at, uint32_t mode, uint64_t size,
			  const struct fs_attributes *attributes, uint8_t file_type)
{
	struct subvolume *sv = at->dir.subvolume;
	uint64_t inode = ++sv->highest_inode;
	int64_t now = fs->clock_ns;
	union item_payload payloads[] = {
		{ .inode = {
			.atime = time_or_now(attributes->atime, now),
			.mtime = time_or_now(attributes->mtime, now),
			.ctime = time_or_now(attributes->ctime, now),
			.size = size,
			.nlink = 1,
			.mode = mode,
		} },
		{ .ref = { .count = 1 } },
	};
	/* btrfs_create_new_inode(): the inode item and its ref in one batch. */
	struct btree_key keys[] = {
		BTRFS_KEY(inode, BTRFS_INODE_ITEM_KEY, 0),
		BTRFS_KEY(inode, BTRFS_INODE_REF_KEY, at->dir.inode),
	};
	uint32_t sizes[] = { BTRFS_INODE_ITEM_SIZE, BTRFS_INODE_REF_SIZE + at->name_len };
	subvol_insert_batch(fs, sv, keys, sizes, payloads, G_N_ELEMENTS(keys));
	fs_add_dir_entry(fs, at, inode, false, file_type);
	return inode;
}

int fs_mkdir(struct fs *fs, const char *path, const struct fs_attributes *attributes)
{
	struct name_location at;
	int ret = prepare_new_name(fs, path, &at);
	if (ret || (ret = fs_reserve(fs, COWSIM_RESERVE_MKDIR)))
		return ret;
	new_inode(fs, &at, S_IFDIR | (attributes->mode & 07777), 0, attributes, FT_DIR);
	fs_release(fs);
	return 0;
}

int fs_create(struct fs *fs, const char *path, uint64_t size, const struct fs_attributes *attributes)
{
	if (size > (UINT64_MAX >> 1))
		return -EFBIG; /* MAX_LFS_FILESIZE, as fs_write() and fs_truncate() */
	struct name_location at;
	int ret = prepare_new_name(fs, path, &at);
	if (ret == -EPERM && fs_is_placeholder(&at.dir))
		return -EACCES; /* open(O_CREAT): lookup_open() finds no ->create */
	if (ret || (ret = fs_reserve(fs, COWSIM_RESERVE_CREATE)))
		return ret;
	/* The data's room first: a create that fails leaves no inode behind. */
	if (size && (ret = fs_reserve_write(fs, 0, size))) {
		fs_release(fs);
		return ret;
	}
	uint64_t inode = new_inode(fs, &at, S_IFREG | (attributes->mode & 07777), size, attributes, FT_REG_FILE);
	/* Its data and attributes (cp -a: write, fchown, utimensat) change the
	 * inode item again: btrfs keeps that in its delayed inode. */
	delayed_items_inode_dirty(fs, at.dir.subvolume, inode);
	if (size)
		ret = fs_write_reserved(fs, at.dir.subvolume, inode, 0, size);
	fs_release(fs);
	return ret;
}

int fs_symlink(struct fs *fs, const char *target, const char *path, const struct fs_attributes *attributes)
{
	struct name_location at;
	size_t length = strlen(target);
	if (!length || length >= BTRFS_SECTORSIZE)
		return -ENAMETOOLONG;
	int ret = prepare_new_name(fs, path, &at);
	if (ret || (ret = fs_reserve(fs, COWSIM_RESERVE_SYMLINK)))
		return ret;
	uint64_t inode = new_inode(fs, &at, S_IFLNK | 0777, length, attributes, FT_SYMLINK);
	delayed_items_inode_dirty(fs, at.dir.subvolume, inode); /* as fs_create */
	/* btrfs_symlink() writes the target as an inline extent at once. */
	struct btree_key key = BTRFS_KEY(inode, BTRFS_EXTENT_DATA_KEY, 0);
	union item_payload payload = { .file_extent = { .extent = NULL, .num_bytes = length } };
	subvol_insert(fs, at.dir.subvolume, &key,
			  BTRFS_FILE_EXTENT_INLINE_HEADER + (uint32_t)length, &payload);
	fs_release(fs);
	return 0;
}

int fs_link(struct fs *fs, const char *existing, const char *path)
{
	struct inode_location target;
	struct name_location at;
	int ret = fs_resolve(fs, existing, &target);
	if (ret || (ret = prepare_new_name(fs, path, &at)))
		return ret;
	if (fs_is_placeholder(&target))
		return -EPERM; /* a directory */
	const struct btree_item *inode = fs_inode_item(target.subvolume, target.inode);
	if (fs_mode_is_dir(btree_item_inode(inode)->mode))
		return -EPERM;
	if (target.subvolume != at.dir.subvolume)
		return -EXDEV;
	if (btree_item_inode(inode)->nlink >= 65535 ||
	    !inode_ref_has_room(fs, at.dir.subvolume, target.inode, at.dir.inode, at.name_len, 0))
		return -EMLINK;
	uint8_t type = S_ISLNK(btree_item_inode(inode)->mode) ? FT_SYMLINK : FT_REG_FILE;
	if ((ret = fs_reserve(fs, COWSIM_RESERVE_LINK)))
		return ret;
	add_inode_ref(fs, at.dir.subvolume, target.inode, at.dir.inode, at.name_len);
	fs_add_dir_entry(fs, &at, target.inode, false, type);
	struct btree_item *item = fs_inode_item_for_write(fs, &target);
	btree_item_inode_for_write(item)->nlink++;
	btree_item_inode_for_write(item)->ctime = fs->clock_ns;
	fs_release(fs);
	return 0;
}

/* Resolve an existing name for removal or rename. */
static int resolve_existing(struct fs *fs, const char *path, struct name_location *at,
			    const struct btree_item **entry)
{
	int ret = fs_resolve_parent(fs, path, at);
	if (ret)
		return ret;
	*entry = fs_dir_lookup(at->dir.subvolume, at->dir.inode, at->name, at->name_len);
	if (!*entry)
		return -ENOENT;
	if (at->dir.subvolume->readonly)
		return -EROFS;
	return 0;
}

/* Drop one name of a non-directory inode; the inode goes with its last. */
static void unlink_name(struct fs *fs, const struct name_location *at, uint64_t inode)
{
	struct subvolume *sv = at->dir.subvolume;
	fs_remove_dir_entry(fs, at);
	remove_inode_ref(fs, sv, inode, at->dir.inode, at->name_len);
	struct inode_location where = { sv, inode };
	struct btree_item *item = fs_inode_item_for_write(fs, &where);
	btree_item_inode_for_write(item)->ctime = fs->clock_ns;
	if (--btree_item_inode_for_write(item)->nlink == 0)
		fs_delete_inode_items(fs, sv, inode);
}

int fs_unlink(struct fs *fs, const char *path)
{
	struct name_location at;
	const struct btree_item *entry;
	int ret = resolve_existing(fs, path, &at, &entry);
	if (ret)
		return ret;
	if (btree_item_dir(entry)->file_type == FT_DIR || btree_item_dir(entry)->location_is_root)
		return -EISDIR;
	/* Read before the reservation: a ticket's flush may commit, and the
	 * commit moves the entry's leaf items (ASan: a use after free). */
	uint64_t inode = btree_item_dir(entry)->location;
	if ((ret = fs_reserve_delete(fs, COWSIM_RESERVE_UNLINK)))
		return ret;
	unlink_name(fs, &at, inode);
	fs_release(fs);
	return 0;
}

static bool dir_is_empty(const struct subvolume *sv, uint64_t dir)
{
	struct btree_key first = BTRFS_KEY(dir, BTRFS_DIR_INDEX_KEY, 0);
	struct btree_key after = BTRFS_KEY(dir, BTRFS_DIR_INDEX_KEY, UINT64_MAX);
	const struct btree_item *last = subvol_lookup_le(sv, &after);
	uint64_t waiting;
	if (delayed_items_last_index(sv->fs, sv, dir, &waiting))
		return false;
	return !(last && btree_key_compare(btree_item_key(last), &first) >= 0);
}

/* rmdir of a subvolume's link (Linux 4.18, btrfs_rmdir): an empty
 * subvolume is deleted, as `subvolume delete` does; a full one is
 * ENOTEMPTY. A snapshot's placeholder where a nested subvolume was is an
 * empty directory: only its entry goes. */
static int rmdir_subvolume(struct fs *fs, const char *path, const struct name_location *at,
			   const struct btree_item *entry)
{
	struct subvolume *sv = linked_subvolume(fs, at->dir.subvolume, entry);
	if (sv) {
		if (!dir_is_empty(sv, FS_ROOT_DIR_INODE))
			return -ENOTEMPTY;
		return fs_delete_snapshot(fs, path);
	}
	if (at->dir.subvolume->readonly)
		return -EROFS;
	int ret = fs_reserve_delete(fs, COWSIM_RESERVE_RMDIR);
	if (ret)
		return ret;
	fs_remove_dir_entry(fs, at);
	fs_release(fs);
	return 0;
}

int fs_rmdir(struct fs *fs, const char *path)
{
	struct name_location at;
	const struct btree_item *entry;
	int ret = resolve_existing(fs, path, &at, &entry);
	if (ret)
		return ret;
	if (btree_item_dir(entry)->location_is_root)
		return rmdir_subvolume(fs, path, &at, entry);
	if (btree_item_dir(entry)->file_type != FT_DIR)
		return -ENOTDIR;
	uint64_t inode = btree_item_dir(entry)->location;
	if (!dir_is_empty(at.dir.subvolume, inode))
		return -ENOTEMPTY;
	if ((ret = fs_reserve_delete(fs, COWSIM_RESERVE_RMDIR)))
		return ret;
	fs_remove_dir_entry(fs, &at);
	fs_delete_inode_items(fs, at.dir.subvolume, inode);
	fs_release(fs);
	return 0;
}

struct parent_find {
	uint64_t parent;
};

static bool take_parent(const struct btree_item *item, void *opaque)
{
	((struct parent_find *)opaque)->parent = btree_item_key(item)->offset;
	return false;
}

/* Is directory `dir` the inode `ancestor` or below it? Walks INODE_REFs up. */
static bool is_inside(const struct subvolume *sv, uint64_t dir, uint64_t ancestor)
{
	for (unsigned depth = 0; depth < 4096; depth++) {
		if (dir == ancestor)
			return true;
		if (dir == FS_ROOT_DIR_INODE)
			return false;
		struct btree_key first = BTRFS_KEY(dir, BTRFS_INODE_REF_KEY, 0), last = BTRFS_KEY(dir, BTRFS_INODE_REF_KEY, UINT64_MAX);
		struct parent_find p = { FS_ROOT_DIR_INODE };
		subvol_visit_range(sv, &first, &last, take_parent, &p);
		dir = p.parent;
	}
	return false;
}

static bool entry_is_dir(const struct btree_item *entry)
{
	return btree_item_dir(entry)->file_type == FT_DIR || btree_item_dir(entry)->location_is_root;
}

/* rename(2)'s refusals, in the order the VFS and btrfs_rename() make them:
 * into a placeholder (no ->rename: EPERM), a directory over a non-directory
 * and back, across subvolumes (EXDEV), a placeholder moved or a subvolume
 * replaced (ENOTEMPTY, btrfs_rename()), a full directory replaced, a
 * directory moved below itself. */
static int rename_refused(struct fs *fs, const struct name_location *src, const struct name_location *dst,
			  const struct btree_item *entry, const struct btree_item *existing)
{
	if (fs_is_placeholder(&dst->dir))
		return -EPERM;
	bool is_dir = entry_is_dir(entry);
	if (existing && entry_is_dir(existing) != is_dir)
		return is_dir ? -ENOTDIR : -EISDIR;
	if (src->dir.subvolume != dst->dir.subvolume)
		return -EXDEV;
	bool is_link = linked_subvolume(fs, src->dir.subvolume, entry) != NULL;
	if (btree_item_dir(entry)->location_is_root && !is_link)
		return -ENOTEMPTY; /* the placeholder itself */
	if (existing && btree_item_dir(existing)->location_is_root)
		return linked_subvolume(fs, dst->dir.subvolume, existing) ? -ENOTEMPTY : 0;
	if (existing && btree_item_dir(existing)->file_type == FT_DIR &&
	    !dir_is_empty(dst->dir.subvolume, btree_item_dir(existing)->location))
		return -ENOTEMPTY; /* rename(2) replaces an empty directory only */
	if (!is_link && is_dir &&
	    is_inside(dst->dir.subvolume, dst->dir.inode, btree_item_dir(entry)->location))
		return -EINVAL; /* a directory cannot move below itself */
	return 0;
}

/* The name a rename replaces goes: a placeholder's entry only, an empty
 * directory with its inode, a file's name as unlink(2) drops it. */
static void drop_replaced(struct fs *fs, const struct name_location *dst, const struct btree_item *existing)
{
	uint64_t replaced = btree_item_dir(existing)->location;
	if (btree_item_dir(existing)->location_is_root) {
		fs_remove_dir_entry(fs, dst);
	} else if (btree_item_dir(existing)->file_type == FT_DIR) {
		fs_remove_dir_entry(fs, dst);
		fs_delete_inode_items(fs, dst->dir.subvolume, replaced);
	} else {
		unlink_name(fs, dst, replaced);
	}
}

/* A subvolume's link moves within its parent subvolume, as btrfs_rename()
 * allows, into another directory of it too, and over an empty directory:
 * the directory entry moves, and the root tree's ROOT_REF and ROOT_BACKREF
 * take the new name. */
static int rename_subvolume(struct fs *fs, const struct name_location *src, const struct name_location *dst,
			    const struct btree_item *entry, const struct btree_item *existing)
{
	struct subvolume *sv = fs_subvolume(fs, btree_item_dir(entry)->location);
	int ret = fs_reserve(fs, COWSIM_RESERVE_RENAME_SUBVOLUME);
	if (ret)
		return ret;
	if (existing)
		drop_replaced(fs, dst, existing);
	fs_remove_dir_entry(fs, src);
	fs_add_dir_entry(fs, dst, sv->id, true, FT_DIR);
	fs_subvolume_link_renamed(fs, dst->dir.subvolume, sv, dst->name_len);
	fs_release(fs);
	return 0;
}

int fs_rename(struct fs *fs, const char *from, const char *to)
{
	struct name_location src, dst;
	const struct btree_item *entry;
	int ret = resolve_existing(fs, from, &src, &entry);
	if (ret || (ret = fs_resolve_parent(fs, to, &dst)))
		return ret;
	/* One visit of the destination's hash window answers both questions:
	 * is the name there, and is there room for it if not. Its slot is not
	 * kept in dst.hash_slot: removing the source's entry may free an
	 * earlier one in the same window (see free_hash_slot()). */
	uint64_t dst_slot = 0;
	struct btree_path near = { .levels = 0 };
	const struct btree_item *existing =
		fs_is_placeholder(&dst.dir)
			? NULL
			: dir_lookup_hashed(dst.dir.subvolume, dst.dir.inode, fs_name_hash(dst.name, dst.name_len),
					    dst.name, dst.name_len, &near, &dst_slot);
	if (existing && btree_item_dir(existing)->location == btree_item_dir(entry)->location &&
	    btree_item_dir(existing)->location_is_root == btree_item_dir(entry)->location_is_root)
		return 0; /* two names of one inode: rename(2) does nothing */
	if ((ret = rename_refused(fs, &src, &dst, entry, existing)))
		return ret;
	/* A replaced name frees its own slot; a new one needs room (checked
	 * before anything changes, as btrfs_rename() does). */
	if (!existing && dst_slot == FS_HASH_SLOT_UNKNOWN)
		return -EOVERFLOW;
	if (btree_item_dir(entry)->location_is_root)
		return rename_subvolume(fs, &src, &dst, entry, existing);
	uint64_t inode = btree_item_dir(entry)->location;
	uint8_t type = btree_item_dir(entry)->file_type;
	if (!inode_ref_has_room(fs, dst.dir.subvolume, inode, dst.dir.inode, dst.name_len,
				src.dir.inode == dst.dir.inode ? src.name_len : 0))
		return -EMLINK;
	if ((ret = fs_reserve(fs, COWSIM_RESERVE_RENAME)))
		return ret;
	if (existing)
		drop_replaced(fs, &dst, existing);
	fs_remove_dir_entry(fs, &src);
	remove_inode_ref(fs, src.dir.subvolume, inode, src.dir.inode, src.name_len);
	add_inode_ref(fs, dst.dir.subvolume, inode, dst.dir.inode, dst.name_len);
	fs_add_dir_entry(fs, &dst, inode, false, type);
	struct inode_location where = { src.dir.subvolume, inode };
	btree_item_inode_for_write(fs_inode_item_for_write(fs, &where))->ctime = fs->clock_ns;
	fs_release(fs);
	return 0;
}

int fs_stat(struct fs *fs, const char *path)
{
	struct inode_location where;
	return fs_resolve(fs, path, &where);
}

int fs_settime(struct fs *fs, const char *path, int64_t atime, int64_t mtime)
{
	struct inode_location where;
	int ret = fs_resolve(fs, path, &where);
	if (ret)
		return ret;
	if (fs_is_placeholder(&where))
		return 0; /* simple_setattr(): the times change in memory only */
	if (where.subvolume->readonly)
		return -EROFS;
	if ((ret = fs_reserve(fs, COWSIM_RESERVE_SETTIME)))
		return ret;
	struct btree_item *inode = fs_inode_item_for_write(fs, &where);
	if (atime != INT64_MIN)
		fs_atime_set(fs, &where, inode, atime);
	if (mtime != INT64_MIN)
		btree_item_inode_for_write(inode)->mtime = mtime;
	btree_item_inode_for_write(inode)->ctime = fs->clock_ns;
	fs_release(fs);
	return 0;
}
