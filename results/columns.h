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
 *   C1  Column names are unique, lower-case snake_case, and never renamed:
 *       plot.py, the fixtures under tests/traces/ and old CSVs use them.
 *   C2  The order here is the file order of the header and of every row.
 *   C3  Byte columns (unit BYTES) are logical bytes unless the doc says raw;
 *       counters (unit COUNT, except op_index) are cumulative since the start
 *       of the run, so a row can be read alone and deltas are differences.
 *   C4  time_s is the simulated clock (the trace's clock ops) in seconds,
 *       never the wall clock, so that the same trace gives the same bytes.
 */
#ifndef COWSIM_RESULTS_COLUMNS_H
#define COWSIM_RESULTS_COLUMNS_H

/* X(ID, "name", kind, unit, "what it means") - kind and unit are the suffixes
 * of ResultsCellKind (RESULTS_CELL_*) and ResultsUnit (RESULTS_UNIT_*). */
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
	  "bytes of tree blocks of all fs trees (subvolumes and snapshots), each block counted once") \
	X(TREE_EXTENT, "tree_extent", U64, BYTES, \
	  "bytes of tree blocks of the extent tree") \
	X(TREE_CSUM, "tree_csum", U64, BYTES, \
	  "bytes of tree blocks of the checksum tree") \
	X(TREE_ROOT, "tree_root", U64, BYTES, \
	  "bytes of tree blocks of the root tree") \
	X(TREE_FREE_SPACE, "tree_free_space", U64, BYTES, \
	  "bytes of tree blocks of the free-space tree") \
	X(TREE_OTHER, "tree_other", U64, BYTES, \
	  "bytes of tree blocks of all other trees (chunk, dev, uuid, ...)") \
	X(BLOCKS_COWED, "blocks_cowed", U64, COUNT, \
	  "tree blocks copied on write since the start of the run") \
	X(BYTES_WRITTEN, "bytes_written", U64, BYTES, \
	  "bytes written to the device since the start of the run (btrfs-replay: the loop device's write sectors x 512)") \
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
	X(ATIME_STALE, "atime_stale", U64, COUNT, \
	  "atime updates the snapshot-aware policy held back because the inode's leaf was shared") \
	X(UNSHARE_ESTIMATE, "unshare_estimate", U64, BYTES, \
	  "the last snapshot's warning: metadata one full read of its source would unshare")

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
	  "bytes of blocks this subvolume shares with at least one other (qgroup rfer - excl)")

#endif
