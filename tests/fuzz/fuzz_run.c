/*
 * tests/fuzz/fuzz_run.c - fuzz `cowsim run`: a trace replayed on the model
 * with every invariant checker after every op.
 *
 * The input is a trace. It goes into a memfd and replay_run() (sim/replay.h)
 * replays /proc/self/fd/N on a small device (700 MiB, nodesize 4096, so
 * trees grow several levels and the device fills within a few ops) with
 * check_every = 1 and keep_going, so a refused op is counted and the next op
 * still runs. An optional first line "#! WORD..." chooses the configuration,
 * so the fuzzer reaches every design and policy (the reader skips it as a
 * comment): keyed, single (metadata profile), nodelay (immediate writeback),
 * 16k (nodesize 16384), inline, side-table, snapshot-aware, threshold:N%,
 * and any mount option word (noatime, strictatime, lazytime, nodiratime...).
 * Unknown words are ignored.
 *
 * The harness aborts when:
 *   FZR1 a checker fails (REPLAY_CORRUPT): a model bug;
 *   FZR2 a run that did not finish has no message naming the trace file;
 *   FZR3 a row's space report is impossible: used above total, or more
 *      allocated than the device holds.
 * Any sanitizer report is a crash too (tools/fuzz.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "options.h"
#include "replay.h"

/* One word of the "#!" line. */
static void apply_word(const char *word, struct fs_config *config)
{
	if (!strcmp(word, "keyed"))
		config->design = fs_design_find("keyed");
	else if (!strcmp(word, "single"))
		config->metadata_single = true;
	else if (!strcmp(word, "nodelay"))
		config->delayed_writeback = false;
	else if (!strcmp(word, "16k"))
		config->nodesize = 16384;
	else if (!options_parse_policy(word, config, NULL)) {
		struct atime_options atime = config->atime;
		const char *bad;
		int bad_length;
		if (atime_parse_options(word, &atime, &bad, &bad_length))
			config->atime = atime;
	}
}

static void configure(const uint8_t *data, size_t size, struct replay_options *options)
{
	memset(options, 0, sizeof(*options));
	fs_config_init(&options->fs);
	options->fs.device_size = 700ull << 20;
	options->fs.nodesize = 4096;
	options->check_every = 1;
	options->keep_going = true;
	if (size < 2 || data[0] != '#' || data[1] != '!')
		return;
	const uint8_t *end = memchr(data, '\n', size);
	g_autofree char *line = g_strndup((const char *)data + 2, (end ? (size_t)(end - data) : size) - 2);
	g_auto(GStrv) words = g_strsplit_set(line, " \t", -1);
	for (char **w = words; *w; w++)
		if (**w)
			apply_word(*w, &options->fs);
	/* A design and policy that do not work together (keyed side-table):
	 * the CLI refuses them, so the fuzzer runs the design's default. */
	if (!fs_config_validate(&options->fs, NULL))
		options->fs.atime_policy = NULL;
}

/* FZR3, and the per-subvolume walk `cowsim run --subvolume-csv` does at marks. */
static bool sink(void *opaque, const struct replay_row *row, GError **error)
{
	const struct fs_config *config = opaque;
	const struct space_report *space = &row->report.space;
	FUZZ_REQUIRE(space->metadata_used <= space->metadata_total,
		     "row %" G_GUINT64_FORMAT ": metadata used %" G_GUINT64_FORMAT " above its total %"
		     G_GUINT64_FORMAT, row->op_index, space->metadata_used, space->metadata_total);
	FUZZ_REQUIRE(space->data_used <= space->data_total,
		     "row %" G_GUINT64_FORMAT ": data used %" G_GUINT64_FORMAT " above its total %" G_GUINT64_FORMAT,
		     row->op_index, space->data_used, space->data_total);
	FUZZ_REQUIRE(space->device_allocated <= config->device_size,
		     "row %" G_GUINT64_FORMAT ": %" G_GUINT64_FORMAT " bytes allocated on a %" G_GUINT64_FORMAT
		     "-byte device", row->op_index, space->device_allocated, config->device_size);
	if (row->label)
		fs_subvolume_usage_free(fs_subvolume_usage(row->fs));
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct replay_options options;
	configure(data, size, &options);
	int fd = memfd_create("fuzz-run-trace", MFD_CLOEXEC);
	FUZZ_REQUIRE(fd >= 0, "memfd_create failed");
	FUZZ_REQUIRE(write(fd, data, size) == (ssize_t)size, "short write to the memfd");
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	struct replay_outcome outcome;
	g_autoptr(GError) error = NULL;
	enum replay_status status = replay_run(path, &options, sink, &options.fs, &outcome, &error);
	close(fd);
	FUZZ_REQUIRE(status != REPLAY_CORRUPT, "%s", error->message);
	if (status != REPLAY_DONE)
		FUZZ_REQUIRE(error && g_str_has_prefix(error->message, path),
			     "status %d without a message naming the trace: %s", status,
			     error ? error->message : "(none)");
	return 0;
}
