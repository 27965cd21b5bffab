/*
 * sim/cmd_draw.c - `cowsim draw TRACE [--at LABEL] [--format text|dot|svg]`
 * and `cowsim draw TRACE --steps [--every N]`: the trees of a small modeled
 * filesystem, block by block.
 *
 * How it works
 *   The trace is replayed (replay.h) up to the mark LABEL, or to its end
 *   (then synced, as a mark is). At that point the sink walks every tree
 *   (draw_collect.h fills a results/drawing.h drawing) and keeps one record
 *   per block, in first-visit order, then results/ draws it
 *   (draw_text.h: text and dot). With --steps the sink draws at
 *   every mark (every N ops too with --every N) and at the end, as svg, and
 *   draw_svg.h puts the drawings on one HTML page with a slider. Text and
 *   DOT draw a block under the first tree that reaches it:
 *
 *     fs tree 5  (/)          snapshot tree 256 (/snap1)
 *       node A  refs 1          node A'  refs 1
 *        |     \                  |    \
 *       leaf B  leaf C  <---------+-----+      B and C: refs 2, '*'
 *
 *   A block is drawn once, in the cluster of the first tree that reaches it;
 *   every other tree or parent that points at it adds only an edge. Marks:
 *     '*'  shared: the extent tree counts more than one reference (refs > 1);
 *     '+'  shared through a parent: refs 1, but reachable from more than one
 *          tree because an ancestor is shared (btrfs copies it on the first
 *          write from any of them, as it does a '*' block);
 *     '^'  written by the newest generation among the drawn blocks: after a
 *          mark, the blocks the last commit wrote.
 *   DOT and svg colours: '*' orange, '+' light orange, '^' a blue border.
 *   svg is laid out here, not by Graphviz: the trees' versions of one key
 *   range stacked, the stacks in key order, no line crossing another
 *   (draw_svg.h says how and why).
 *
 *   A large filesystem is summarized rather than drawn whole (the seed
 *   experiment on /usr/include ends with 15,627 blocks in the fs and extent
 *   trees: 53 MB of text; a DOT file of 11 MB already after the snapshots,
 *   more than Graphviz lays out in reasonable time). When the trees hold more
 *   than --max-blocks blocks, the drawing keeps the blocks of level >= L,
 *   for the lowest L that fits, and every tree's root; a kept block of
 *   level <= L is "cut": it is drawn with counts of the blocks below it
 *   instead of its children or items:
 *
 *     node A level 1 ... refs 2 *, 312 children; below: 312 blocks (312 leaves),
 *         290 shared *, 0 through a parent +, 22 new ^
 *
 *   A stderr line and the drawing's header say so; --max-blocks 0 draws all.
 *
 * Invariants
 *   DR1 Same trace, options and arguments: same bytes (text, dot, svg and
 *      the --steps page).
 *   DR2 Every block of the selected trees appears exactly once; every
 *      parent->child pointer and every root pointer is one edge. Summarized:
 *      every block is drawn once, or counted under each cut block that
 *      points at it (a leaf shared by two trees' own level-1 nodes counts
 *      under both); the header gives the blocks in all, each once.
 *   DR3 Exit status: 0 drawn; 1 the run failed (a model invariant, dot
 *      failed); 2 bad arguments, a malformed trace, the modeled device full
 *      (as cowsim run), or no mark LABEL.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "cli.h"
#include "commands.h"
#include "draw_collect.h"
#include "draw_svg.h"
#include "draw_text.h"
#include "options.h"
#include "replay.h"

/* ---- the command ------------------------------------------------------------------ */

enum draw_format { FORMAT_TEXT, FORMAT_DOT, FORMAT_SVG };

/* The default --max-blocks: a few hundred blocks is what a reader can
 * follow (and what Graphviz lays out in a second or two from --format dot). */
#define DRAW_MAX_BLOCKS 300

struct draw_args {
	struct model_option_text model;
	char *at;
	char *format;
	char *output;
	char *trees;
	gint64 max_items;
	gint64 max_blocks;
	gboolean steps;
	gint64 every;
	char **rest;
};

struct draw_sink {
	const struct draw_args *args;
	unsigned mask;
	uint32_t nodesize;
	GString *out;                 /* the drawing, once made */
	bool drawn;
	GPtrArray *step_svgs;         /* --steps: GString *, one drawing per step */
	GPtrArray *step_captions;     /* --steps: char *, what each step shows */
	uint64_t last_step_op;        /* --steps: op_index of the last step */
	unsigned summarized_steps;    /* --steps: steps drawn summarized */
	GPtrArray *marks_seen;        /* labels, for the "no such mark" message */
	enum draw_format format;
};

/* The drawing of the filesystem at row R, in the sink's format, appended to OUT. */
static void draw_row(struct draw_sink *s, const struct replay_row *r, GString *out)
{
	struct drawing d;
	drawing_init(&d);
	draw_collect(&d, r->fs, s->mask);
	struct draw_header h = { .trace = s->args->rest[0], .at = r->label, .transid = r->report.transid,
				 .nodesize = s->nodesize, .metadata_used = r->report.space.metadata_used,
				 .max_items = (unsigned)s->args->max_items,
				 .max_blocks = (unsigned)s->args->max_blocks,
				 .after_op = s->args->steps && !r->label ? r->op_index + 1 : 0 };
	drawing_summarize(&d, h.max_blocks);
	if (d.summarized && !s->args->steps) {
		g_autoptr(GString) note = g_string_new(NULL);
		drawing_append_summary_note(note, &d, &h);
		fprintf(stderr, "cowsim draw: %s: %s\n", h.trace, note->str);
	}
	if (s->format == FORMAT_TEXT)
		draw_text(out, &d, &h);
	else if (s->format == FORMAT_DOT)
		draw_dot(out, &d, &h);
	else
		draw_svg(out, &d, &h);
	if (s->args->steps)
		s->summarized_steps += d.summarized;
	drawing_clear(&d);
}

/* "mark after_snapshot: op 14, transaction 7, metadata used 65536 bytes" */
static char *step_caption(const struct replay_row *r)
{
	g_autofree char *what = r->label ? g_strdup_printf("mark %s", r->label) :
				g_strdup_printf("after op %" PRIu64, r->op_index + 1);
	return g_strdup_printf("%s: %" PRIu64 " ops done, transaction %" PRIu64 ", metadata used %" PRIu64 " bytes",
			       what, r->op_index + 1, r->report.transid, r->report.space.metadata_used);
}

static bool draw_now(struct draw_sink *s, const struct replay_row *r, GError **error)
{
	(void)error;
	if (s->args->steps) {
		/* the row at the end repeats a mark that ends the trace */
		if (s->step_svgs->len && r->op_index == s->last_step_op)
			return true;
		s->last_step_op = r->op_index;
		GString *svg = g_string_new(NULL);
		draw_row(s, r, svg);
		g_ptr_array_add(s->step_svgs, svg);
		g_ptr_array_add(s->step_captions, step_caption(r));
		return true;
	}
	draw_row(s, r, s->out);
	s->drawn = true;
	return true;
}

static bool draw_sink_row(void *opaque, const struct replay_row *r, GError **error)
{
	struct draw_sink *s = opaque;
	if (r->label)
		g_ptr_array_add(s->marks_seen, g_strdup(r->label));
	bool wanted = s->args->steps || (s->args->at ? (r->label && !strcmp(r->label, s->args->at)) : !r->label);
	return !wanted || s->drawn || draw_now(s, r, error);
}

static bool is_count(gint64 n)
{
	return n >= 0 && n <= UINT32_MAX;
}

static const struct cli_doc draw_doc = {
	.command = "draw",
	.args = "TRACE",
	.summary = "Replays TRACE up to the mark LABEL (or its end) and draws the trees: each block\n"
		   "with its address, generation, owner, references and keys (items: key and size).\n"
		   "With --steps, one HTML page with a slider through the drawings at every mark.",
	.notes = "Marks: '*' shared (refs > 1), '+' shared through a shared parent, '^' written by\n"
		 "the newest generation (svg and DOT: orange, light orange, a blue border).\n"
		 "svg lays the trees out in key order with no crossing lines: the blocks of one\n"
		 "level whose key ranges overlap (the trees' versions of one leaf) are stacked, one\n"
		 "card per block, each card naming the trees that reach it, and one line joins two\n"
		 "stacks when a block of one points at a block of the other. Every block is drawn\n"
		 "once. dot is for Graphviz ('dot -Tsvg'). --steps writes a self-contained HTML\n"
		 "page (no network) of svg drawings after every mark, every N ops with --every N,\n"
		 "and at the end; open it in a browser and move the slider (or the arrow keys;\n"
		 "page.html#step=N opens step N, from 0). With more blocks than --max-blocks (the\n"
		 "seed experiment on a real tree), the drawing keeps the upper levels and every\n"
		 "root, and counts the blocks below them.",
	.examples = "  cowsim draw docs/tutorial/ten-files.trace --nodesize 4K --at after_read\n"
		    "  cowsim draw docs/tutorial/ten-files.trace --nodesize 4K --at after_read --format svg -o a.svg\n"
		    "  cowsim draw docs/tutorial/ten-files.trace --nodesize 4K --trees fs --steps -o steps.html",
	.exits = "  0  drawn\n"
		 "  1  the run failed (a model invariant broke, the disk filled under the output)\n"
		 "  2  bad arguments, a malformed trace, no such mark or an output path that\n"
		 "     cannot be written",
	.model_options = true,
};

static int parse_draw_args(int argc, char **argv, struct draw_args *a, struct fs_config *config,
			   enum draw_format *format, unsigned *mask)
{
	const GOptionEntry entries[] = {
		{ "at", 'a', 0, G_OPTION_ARG_STRING, &a->at, "draw at the mark LABEL (default: the end, synced)",
		  "LABEL" },
		{ "format", 'f', 0, G_OPTION_ARG_STRING, &a->format, "text (default), dot or svg", "FORMAT" },
		{ "steps", 0, 0, G_OPTION_ARG_NONE, &a->steps,
		  "write one HTML page stepping through the drawings (svg) at every mark and the end", NULL },
		{ "every", 0, 0, G_OPTION_ARG_INT64, &a->every, "with --steps: a step every N ops too", "N" },
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output, "write to FILE (default and '-': stdout)", "FILE" },
		{ "trees", 't', 0, G_OPTION_ARG_STRING, &a->trees,
		  "trees to draw: fs, atime, extent, root, csum, free-space, dev, uuid, data-reloc, all "
		  "(default fs,atime,extent)", "LIST" },
		{ "max-items", 0, 0, G_OPTION_ARG_INT64, &a->max_items, "show at most N items per leaf (0: all)",
		  "N" },
		{ "max-blocks", 0, 0, G_OPTION_ARG_INT64, &a->max_blocks,
		  "with more blocks than N, draw the upper levels and count the blocks below them "
		  "(default " G_STRINGIFY(DRAW_MAX_BLOCKS) ", 0: draw all)", "N" },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->rest, NULL, NULL },
		{ NULL },
	};
	g_autoptr(GOptionContext) context = cli_context_new(&draw_doc);
	g_option_context_add_main_entries(context, entries, NULL);
	options_add_model_entries(context, &a->model);
	if (!cli_parse(context, &draw_doc, &argc, &argv))
		return EXIT_BAD_INPUT;
	g_autoptr(GError) error = NULL;
	if (!a->rest || !a->rest[0] || a->rest[1]) {
		fprintf(stderr, "cowsim draw: give exactly one TRACE (see 'cowsim draw --help')\n");
		return EXIT_BAD_INPUT;
	}
	const char *f = a->format ? a->format : "text";
	if (!strcmp(f, "text"))
		*format = FORMAT_TEXT;
	else if (!strcmp(f, "dot"))
		*format = FORMAT_DOT;
	else if (!strcmp(f, "svg"))
		*format = FORMAT_SVG;
	else {
		fprintf(stderr, "cowsim draw: --format: unknown format '%s' (text, dot, svg)\n", f);
		return EXIT_BAD_INPUT;
	}
	if (a->steps && (a->at || (a->format && strcmp(a->format, "svg")))) {
		fprintf(stderr, "cowsim draw: --steps draws every mark as svg: give no --at and no other --format\n");
		return EXIT_BAD_INPUT;
	}
	if (a->every && !a->steps) {
		fprintf(stderr, "cowsim draw: --every goes with --steps\n");
		return EXIT_BAD_INPUT;
	}
	if (a->steps)
		*format = FORMAT_SVG;
	const char *bad = !is_count(a->max_items) ? "max-items" : !is_count(a->max_blocks) ? "max-blocks" :
			  a->every < 0 ? "every" : NULL;
	if (bad) {
		fprintf(stderr, "cowsim draw: --%s takes a count, 0 or more\n", bad);
		return EXIT_BAD_INPUT;
	}
	if (!drawing_parse_trees(a->trees ? a->trees : "fs,atime,extent", mask, &error) ||
	    !options_model_config(&a->model, config, &error)) {
		fprintf(stderr, "cowsim draw: %s\n", error->message);
		return EXIT_BAD_INPUT;
	}
	return EXIT_OK;
}

static void free_draw_args(struct draw_args *a)
{
	options_model_text_clear(&a->model);
	g_free(a->at);
	g_free(a->format);
	g_free(a->output);
	g_free(a->trees);
	g_strfreev(a->rest);
}

static int write_drawing(const struct draw_args *a, const struct draw_sink *s)
{
	const char *path = a->output;
	if (!path || !strcmp(path, "-")) {
		fwrite(s->out->str, 1, s->out->len, stdout);
		return EXIT_OK; /* main() reports a failed flush of stdout (exit 2, CLI2) */
	}
	g_autoptr(GError) error = NULL;
	if (!g_file_set_contents(path, s->out->str, (gssize)s->out->len, &error)) {
		fprintf(stderr, "cowsim draw: %s\n", error->message);
		return cli_output_error_status(error);
	}
	return EXIT_OK;
}

static void print_no_mark(const struct draw_args *a, const struct draw_sink *s)
{
	g_autoptr(GString) seen = g_string_new(NULL);
	for (unsigned i = 0; i < s->marks_seen->len; i++)
		g_string_append_printf(seen, "%s%s", i ? ", " : "", (char *)s->marks_seen->pdata[i]);
	fprintf(stderr, "cowsim draw: %s: no mark '%s' (its marks: %s)\n", a->rest[0], a->at,
		seen->len ? seen->str : "none");
}

static int run_draw(struct draw_args *a, struct replay_options *options, struct draw_sink *s)
{
	g_autoptr(GError) error = NULL;
	struct replay_outcome outcome;
	enum replay_status status = replay_run(a->rest[0], options, draw_sink_row, s, &outcome, &error);
	if (status != REPLAY_DONE) {
		fprintf(stderr, "cowsim draw: %s\n", error ? error->message : "failed");
		return status == REPLAY_BAD_INPUT || status == REPLAY_ENOSPC ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
	}
	if (a->steps) {
		g_autofree char *title = g_strdup_printf("cowsim draw --steps %s", a->rest[0]);
		draw_steps_page(s->out, title, s->step_captions, s->step_svgs);
		if (s->summarized_steps)
			fprintf(stderr, "cowsim draw: %s: %u of %u steps have more blocks than --max-blocks %u: "
				"their upper levels are drawn, the blocks below counted\n", a->rest[0],
				s->summarized_steps, s->step_svgs->len, (unsigned)a->max_blocks);
	} else if (!s->drawn) {
		print_no_mark(a, s);
		return EXIT_BAD_INPUT;
	}
	return write_drawing(a, s);
}

static void free_gstring(gpointer data)
{
	g_string_free(data, true);
}

int cmd_draw(int argc, char **argv)
{
	struct draw_args args = { .max_blocks = DRAW_MAX_BLOCKS };
	struct replay_options options = { 0 };
	enum draw_format format = FORMAT_TEXT;
	unsigned mask = 0;
	int status = parse_draw_args(argc, argv, &args, &options.fs, &format, &mask);
	if (status == EXIT_OK && !cli_output_creatable("draw", args.output))
		status = EXIT_BAD_INPUT; /* CLI2, before the replay */
	if (status != EXIT_OK) {
		free_draw_args(&args);
		return status;
	}
	options.stop_at_mark = args.at;
	options.row_at_end = !args.at;
	options.row_every = (uint64_t)args.every;
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GPtrArray) marks = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) svgs = g_ptr_array_new_with_free_func(free_gstring);
	g_autoptr(GPtrArray) captions = g_ptr_array_new_with_free_func(g_free);
	struct draw_sink sink = { .args = &args, .mask = mask, .nodesize = options.fs.nodesize, .out = out,
				  .marks_seen = marks, .format = format, .step_svgs = svgs, .step_captions = captions };
	status = run_draw(&args, &options, &sink);
	free_draw_args(&args);
	return status;
}
