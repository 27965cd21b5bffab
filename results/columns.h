/*
 * results/columns.h - the CSV column contract, in one place.
 *
 * How it works
 *   Each list below is an X-macro: one X(ID, name, kind, unit, doc) line per
 *   column, in file order.  results.h expands it into the enum of column ids
 *   (RESULTS_COL_<ID>, RESULTS_SUBVOL_COL_<ID>) and columns.c into the static
 *   table of ResultsColumnInfo that the writers, the table printer, the tests
 *   and the docs read.  Adding a column is one line here; nothing else lists
 *   the columns.
 *
 *   Two producers write rows of RESULTS_MAIN_COLUMNS and must agree on what
 *   every cell means: `cowsim run` (the model) and `tools/btrfs-replay` (a
 *   real btrfs on a loop device).  A producer that cannot measure a cell
 *   leaves it unset, which is written as an empty field, never as 0.
 *
 * Invariants
 *   CO1  Column names are unique, lower-case snake_case, and never renamed:
 *       plot.py, the fixtures under tests/traces/ and old CSVs use them.
 *   CO2  The order here is the file order of the header and of every row.
 *   CO3  Byte columns (unit BYTES) are logical bytes unless the doc says raw;
 *       counters (unit COUNT, except op_index) are cumulative since the start
 *       of the run, so a row can be read alone and deltas are differences.
 *   CO4  time_s is the simulated clock (the trace's clock ops) in seconds,
 *       never the wall clock, so that the same trace gives the same bytes.
 *   CO5  These lists are the only lists of columns: the writers, the table
 *       printer, `cowsim report`, plot.py (through `cowsim columns --json`)
 *       and docs/columns.md all read them.  A name that appears in two
 *       lists has the same unit in both.
 */
#ifndef COWSIM_RESULTS_COLUMNS_H
#define COWSIM_RESULTS_COLUMNS_H

/* X(ID, "name", kind, unit, "what it means") - kind and unit are the suffixes
 * of ResultsCellKind (RESULTS_CELL_*) and ResultsUnit (RESULTS_UNIT_*).
 * `cowsim columns [--json]` prints every list below, and docs/columns.md is
 * generated from them (CO5). */
#define RESULTS_MAIN_COLUMNS(X) \
	X(OP_INDEX, "op_index", U64, COUNT, \
	  "0-based index of the trace op after which the row was taken") \
	X(TIME_S, "time_s", DOUBLE, SECONDS, \
	  "simulated clock at the row, seconds, written %.6f (btrfs-replay: the trace's clock, not the kernel's)") \
	X(LABEL, "label", STRING, TEXT, \
	  "the mark's label (after_copy, after_grep, ...); unset for rows that are not marks") \
	X(METADATA_USED, "metadata_used", U64, BYTES, \
	  "logical bytes of metadata in use, as 'btrfs fi df -b' Metadata used") \
	X(METADATA_RAW, "metadata_raw", U64, BYTES, \
	  "raw bytes of metadata on the device: metadata_used times the profile's copies (DUP: 2)") \
	X(METADATA_TOTAL, "metadata_total", U64, BYTES, \
	  "logical bytes of metadata chunks allocated, as 'btrfs fi df -b' Metadata total") \
	X(DATA_USED, "data_used", U64, BYTES, \
	  "logical bytes of file data in use, as 'btrfs fi df -b' Data used") \
	X(DATA_TOTAL, "data_total", U64, BYTES, \
	  "logical bytes of data chunks allocated, as 'btrfs fi df -b' Data total") \
	X(GLOBAL_RESERVE, "global_reserve", U64, BYTES, \
	  "size of the global block reserve, as 'btrfs fi df -b' GlobalReserve total") \
	X(TREE_FS, "tree_fs", U64, BYTES, \
	  "bytes of tree blocks of all fs trees (subvolumes and snapshots), each block counted once; --design zfs: the datasets' metadata blocks (objsets, dnode, indirect and ZAP blocks)") \
	X(TREE_EXTENT, "tree_extent", U64, BYTES, \
	  "bytes of tree blocks of the extent tree") \
	X(TREE_CSUM, "tree_csum", U64, BYTES, \
	  "bytes of tree blocks of the checksum tree") \
	X(TREE_ROOT, "tree_root", U64, BYTES, \
	  "bytes of tree blocks of the root tree; --design zfs: the MOS") \
	X(TREE_FREE_SPACE, "tree_free_space", U64, BYTES, \
	  "bytes of tree blocks of the free-space tree") \
	X(TREE_OTHER, "tree_other", U64, BYTES, \
	  "bytes of tree blocks of all other trees (chunk, dev, uuid, ...)") \
	X(BLOCKS_COWED, "blocks_cowed", U64, COUNT, \
	  "tree blocks copied on write since the start of the run; --design zfs: metadata blocks a txg wrote in place of a live one") \
	X(BYTES_WRITTEN, "bytes_written", U64, BYTES, \
	  "bytes written to the device since the start of the run (btrfs-replay: the loop device's write sectors x 512; --design zfs: every block a txg wrote, every copy)") \
	X(ATIME_UPDATES, "atime_updates", U64, COUNT, \
	  "reads that updated an inode's atime since the start of the run") \
	X(ATIME_SKIPPED, "atime_skipped", U64, COUNT, \
	  "reads whose atime update the mount policy skipped since the start of the run") \
	X(ENOSPC_EVENTS, "enospc_events", U64, COUNT, \
	  "operations that failed with ENOSPC since the start of the run") \
	X(FAILED_READS, "failed_reads", U64, COUNT, \
	  "reads that failed (for example ENOSPC from the atime update) since the start of the run") \
	X(ATIME_DROPPED, "atime_dropped", U64, COUNT, \
	  "atime updates that met ENOSPC and were dropped without failing the read (threshold policy)") \
	X(ATIME_LOST, "atime_lost", U64, COUNT, \
	  "atime updates that found no metadata space even after the flusher's commits: the read went on, the atime changed in memory only and never reached the disk (kernel 6.18) since the start of the run") \
	X(COMMITS, "commits", U64, COUNT, \
	  "transaction commits since the start of the run, those forced by ENOSPC flushing included") \
	X(ATIME_STALE, "atime_stale", U64, COUNT, \
	  "atime updates the snapshot-aware policy held back because the inode's leaf was shared") \
	X(UNSHARE_ESTIMATE, "unshare_estimate", U64, BYTES, \
	  "the last snapshot's warning: metadata one full read of its source would unshare") \
	RESULTS_ATTRIBUTION_COLUMNS(X) \
	X(ELAPSED_S, "elapsed_s", DOUBLE, SECONDS, \
	  "simulated seconds since the trace's first clock op (clock @T counts from T, clock +D from the clock before it); 0 before that op") \
	RESULTS_PARAM_COLUMNS(X)

/* Attribution (docs/model.md): metadata_used split by the kind of op that
 * allocated each live tree block; the five sum to metadata_used on every
 * row.  A block stays charged to its op until it is copied or freed. */
#define RESULTS_ATTRIBUTION_COLUMNS(X) \
	X(METADATA_BY_MKFS, "metadata_by_mkfs", U64, BYTES, \
	  "bytes of live tree blocks mkfs made that nothing has copied since. The metadata_by_* columns split metadata_used (they sum to it on every row) by the kind of op that allocated each live tree block; a commit's work for an op (its delayed writeback, the extent-tree records of its reference changes) is the op's, and the root items, block-group and free-space-tree items a commit rewrites go to the kind of op that allocated and freed the most blocks in that transaction (docs/model.md, Attribution); --design zfs: an object's own blocks go to the op of its first change in the txg, the dnode blocks, objset and MOS blocks to the op that changed the most objects in it (model/zfs_pool.h)") \
	X(METADATA_BY_WRITE, "metadata_by_write", U64, BYTES, \
	  "bytes of live tree blocks allocated by namespace and data changes (create, write, truncate, rename, link, unlink, rmdir, settime, ...): the blocks they copied or split, their delayed writeback's, and the extent-tree blocks their reference changes copied") \
	X(METADATA_BY_ATIME, "metadata_by_atime", U64, BYTES, \
	  "bytes of live tree blocks allocated by the atime updates of reads (read, readdir; lazytime atimes when written out): leaves, the nodes above them, and the extent-tree blocks their reference changes copied") \
	X(METADATA_BY_SNAPSHOT, "metadata_by_snapshot", U64, BYTES, \
	  "bytes of live tree blocks allocated by snapshot creation: the copied root, root-tree items and their extent-tree records") \
	X(METADATA_BY_DELETE, "metadata_by_delete", U64, BYTES, \
	  "bytes of live tree blocks allocated by snapshot deletion: the extent-tree and root-tree blocks copied to drop its references and items")

/* The long format: one row per subvolume per mark, like 'btrfs qgroup show'. */
#define RESULTS_SUBVOL_COLUMNS(X) \
	X(OP_INDEX, "op_index", U64, COUNT, \
	  "0-based index of the trace op after which the row was taken") \
	X(LABEL, "label", STRING, TEXT, \
	  "the mark's label") \
	X(SUBVOLUME, "subvolume", STRING, TEXT, \
	  "the subvolume's path within the filesystem, '/' for the top level") \
	X(SUBVOLUME_ID, "subvolume_id", U64, COUNT, \
	  "the subvolume's id (btrfs: 5 for the top level, 256 and up for the others)") \
	X(EXCLUSIVE_BYTES, "exclusive_bytes", U64, BYTES, \
	  "bytes of blocks referenced by this subvolume only (qgroup excl)") \
	X(SHARED_BYTES, "shared_bytes", U64, BYTES, \
	  "bytes of blocks this subvolume shares with at least one other (qgroup rfer - excl)") \
	RESULTS_PARAM_COLUMNS(X)

/* One line per run of compare.csv and sweep.csv (sim/rows.c): what a whole
 * run left, not a point in it.  The parameter columns (RESULTS_PARAM_COLUMNS
 * or a sweep's own --vary names) come first. */
#define RESULTS_SUMMARY_COLUMNS(X) \
	X(STATUS, "status", STRING, TEXT, \
	  "how the run ended: done, enospc (the device filled), bad-input, interrupted, corrupt, sink-failed") \
	X(OPS, "ops", U64, COUNT, \
	  "trace ops applied") \
	X(BASE_MARK, "base_mark", STRING, TEXT, \
	  "the mark amplification is measured from: the first mark, or the first labelled --base") \
	X(METADATA_BASE, "metadata_base", U64, BYTES, \
	  "metadata_used at the base mark") \
	X(METADATA_FINAL, "metadata_final", U64, BYTES, \
	  "metadata_used at the end of the run") \
	X(AMPLIFICATION, "amplification", DOUBLE, RATIO, \
	  "metadata_final / metadata_base; unset without a base mark or when its metadata is 0") \
	X(DATA_USED, "data_used", U64, BYTES, \
	  "file data in use at the end") \
	X(BLOCKS_COWED, "blocks_cowed", U64, COUNT, \
	  "tree blocks copied on write") \
	X(ATIME_UPDATES, "atime_updates", U64, COUNT, \
	  "atimes written") \
	X(ATIME_SKIPPED, "atime_skipped", U64, COUNT, \
	  "accesses the mount's rule did not record") \
	X(ATIME_READONLY, "atime_readonly", U64, COUNT, \
	  "accesses in read-only snapshots") \
	X(ATIME_THRESHOLD, "atime_threshold", U64, COUNT, \
	  "updates the threshold policy held back") \
	X(ATIME_DROPPED, "atime_dropped", U64, COUNT, \
	  "updates that met ENOSPC and were dropped") \
	X(ATIME_LOST, "atime_lost", U64, COUNT, \
	  "updates that found no space after the flusher's commits: kept in memory only, never written") \
	X(COMMITS, "commits", U64, COUNT, \
	  "transaction commits, those forced by ENOSPC flushing included") \
	X(ENOSPC_COMMITS, "enospc_commits", U64, COUNT, \
	  "commits forced by atime updates that found no metadata space") \
	X(ATIME_STALE, "atime_stale", U64, COUNT, \
	  "updates the snapshot-aware policy held back") \
	X(STALE_LT_1H, "stale_lt_1h", U64, COUNT, \
	  "held-back updates whose atime was under 1 h old") \
	X(STALE_LT_1D, "stale_lt_1d", U64, COUNT, \
	  "held-back updates whose atime was 1 h to 1 day old") \
	X(STALE_LT_7D, "stale_lt_7d", U64, COUNT, \
	  "held-back updates whose atime was 1 to 7 days old") \
	X(STALE_LT_30D, "stale_lt_30d", U64, COUNT, \
	  "held-back updates whose atime was 7 to 30 days old") \
	X(STALE_GE_30D, "stale_ge_30d", U64, COUNT, \
	  "held-back updates whose atime was 30 days old or older") \
	X(FAILED_READS, "failed_reads", U64, COUNT, \
	  "reads failed by their atime update's ENOSPC") \
	X(ENOSPC_EVENTS, "enospc_events", U64, COUNT, \
	  "operations refused with ENOSPC") \
	X(BYTES_WRITTEN, "bytes_written", U64, BYTES, \
	  "tree blocks (x2 with DUP) and data written") \
	X(FREE_MIN, "free_min", U64, BYTES, \
	  "least room for metadata seen at a row or at the end (finer with --every N)") \
	X(UNSHARE_ESTIMATE, "unshare_estimate", U64, BYTES, \
	  "the last snapshot's warning: metadata one full read of its source would unshare")

/* The parameters a run is made of, as compare.csv and sweep.csv name them
 * before the summary columns (a sweep's other --vary names, such as
 * snapshots, shape the trace and are counts).  They also close every row of
 * the main and the subvolume schema (last, so that the numbers keep their
 * places for awk -F,), so that a per-run CSV says what produced it;
 * btrfs-replay (a real kernel) leaves design and policy unset. */
#define RESULTS_PARAM_COLUMNS(X) \
	X(DESIGN, "design", STRING, TEXT, \
	  "how snapshots share metadata: btrfs, keyed or zfs (--design)") \
	X(MOUNT, "mount", STRING, TEXT, \
	  "the mount options the run started with, as --mount takes them (strictatime, relatime, noatime, ...,lazytime)") \
	X(POLICY, "policy", STRING, TEXT, \
	  "the atime policy (--policy): inline, side-table, threshold:PCT%, snapshot-aware") \
	X(NODESIZE, "nodesize", U64, BYTES, \
	  "tree block size (--nodesize)") \
	X(DEVICE_SIZE, "device_size", U64, BYTES, \
	  "size of the modeled device (--device-size)")

/* results/calibration.csv (tools/calibrate): the model's prediction next to
 * a real btrfs's measurement, one line per case and mark. */
#define RESULTS_CALIBRATION_COLUMNS(X) \
	X(CASE, "case", STRING, TEXT, \
	  "the case's name: tree, mount and nodesize in short") \
	X(TREE, "tree", STRING, TEXT, \
	  "the directory tree copied") \
	X(ENTRIES, "entries", U64, COUNT, \
	  "files and directories in the tree") \
	X(SNAPSHOTS, "snapshots", U64, COUNT, \
	  "snapshots taken of the copy") \
	X(MOUNT, "mount", STRING, TEXT, \
	  "the mount's atime option") \
	X(NODESIZE, "nodesize", U64, BYTES, \
	  "tree block size") \
	X(RO, "ro", STRING, TEXT, \
	  "rw or ro: whether the snapshots were read-only") \
	X(GREP, "grep", STRING, TEXT, \
	  "what the read pass read (all: grep -R over the copy)") \
	X(FIGURE, "figure", STRING, TEXT, \
	  "what is compared: metadata_used; a run-out case also metadata_total, data_total, commits, atime_lost") \
	X(MARK, "mark", STRING, TEXT, \
	  "the mark's label the two numbers are taken at") \
	X(PREDICTED, "predicted", U64, COUNT, \
	  "the figure as the model predicts it (bytes, or a count for commits and atime_lost)") \
	X(MEASURED, "measured", U64, COUNT, \
	  "the figure on a real btrfs ('btrfs fi df -b', sysfs commit_stats, a remount's atimes)") \
	X(ERROR_PCT, "error_pct", DOUBLE, PERCENT, \
	  "(predicted - measured) / measured, in percent")

#endif
