/*
 * sim/draw_collect.c - fs_walk into a drawing (draw_collect.h).
 */
#include <inttypes.h>

#include "draw_collect.h"

struct collector {
	struct drawing *drawing;
	unsigned mask;
	GArray *entries;              /* struct drawn_entry: the block being visited's, reused */
};

static unsigned tree_kind(const struct fs_walk_block *b)
{
	if (b->category == TREE_CATEGORY_FS)
		return KIND_FS;
	unsigned kind = drawing_kind_by_name(fs_tree_name(b->tree_id));
	return kind ? kind : KIND_DATA_RELOC;
}

static char *tree_title(const struct fs_walk_block *b, unsigned kind)
{
	const char *ro = b->tree_readonly ? ", read-only" : "";
	if (kind == KIND_FS && b->tree_path)
		return g_strdup_printf("%s tree %" PRIu64 " (%s%s)",
				       b->tree_id == FS_TOP_SUBVOLUME_ID ? "fs" : "snapshot", b->tree_id,
				       b->tree_path, ro);
	if (kind == KIND_FS)
		return g_strdup_printf("shared fs tree %" PRIu64 " (every subvolume)", b->tree_id);
	if (kind == KIND_ATIME)
		return g_strdup_printf("atime side table %" PRIu64 " (%s%s)", b->tree_id, b->tree_path, ro);
	const char *name = drawing_kind_name(kind);
	if (name)
		return g_strdup_printf("%s tree %" PRId64, name, (int64_t)b->tree_id);
	return g_strdup("tree");
}

static const struct drawn_entry *drawn_entries(struct collector *c, const struct fs_walk_block *b)
{
	g_array_set_size(c->entries, b->nritems);
	for (uint32_t i = 0; i < b->nritems; i++) {
		const struct fs_walk_entry *e = &b->entries[i];
		g_array_index(c->entries, struct drawn_entry, i) = (struct drawn_entry){
			.objectid = e->objectid, .offset = e->offset, .type = e->type,
			.type_name = fs_key_type_name(e->type), .snapshot = e->snapshot, .size = e->size,
			.child = e->child };
	}
	return (const struct drawn_entry *)c->entries->data;
}

static enum fs_walk_answer collect_block(const struct fs_walk_block *b, void *opaque)
{
	struct collector *c = opaque;
	if (b->depth == 0) {
		unsigned kind = tree_kind(b);
		if (!(c->mask & kind))
			return FS_WALK_SKIP_CHILDREN;   /* DCL1: none of its blocks */
		drawing_begin_tree(c->drawing, tree_title(b, kind), b->tree_id, b->bytenr, kind);
	}
	struct drawing_visit v = { .bytenr = b->bytenr, .owner = b->owner, .generation = b->generation,
				   .level = b->level, .refs = b->refs, .nritems = b->nritems,
				   .entries = drawn_entries(c, b), .root = b->depth == 0 };
	drawing_add_block(c->drawing, &v);
	return FS_WALK_CONTINUE;
}

void draw_collect(struct drawing *d, const struct fs *fs, unsigned mask)
{
	struct collector c = { .drawing = d, .mask = mask,
			       .entries = g_array_new(false, false, sizeof(struct drawn_entry)) };
	fs_walk(fs, collect_block, &c);
	g_array_free(c.entries, true);
}
