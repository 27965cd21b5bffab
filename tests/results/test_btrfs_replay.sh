#!/bin/bash
# tests/results/test_btrfs_replay.sh - tools/btrfs-replay on a tiny real trace.
#
# usage: test_btrfs_replay.sh BTRFS_REPLAY TRACE COWSIM
#
# Runs btrfs-replay once on the hand-written trace (tests/results/data/
# tiny-replay.trace: a few files, two snapshots, reads, changes, five marks)
# with --csv into a temporary folder, then checks the CSV as TAP cases.
# Exit 77 (meson: skipped) when not root or when btrfs-replay itself says the
# machine cannot mount a btrfs loop device.
set -u
replay=$1 trace=$2 cowsim=$3
nodesize=16384
if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP btrfs-replay needs root"; exit 77; fi

n=0 failed=0
check() {
  n=$((n + 1))
  if eval "$2"; then echo "ok $n - $1"; else failed=$((failed + 1)); echo "not ok $n - $1"; echo "# ${3:-}"; fi
}

# column NAME: the named column of the CSV, one value per row. Fields may be
# quoted ("after delete, snap1"); quotes are dropped.
column() {
  awk -v want="$1" '
    function split_csv(line, out,   i, c, field, quoted, count) {
      count = 0; field = ""; quoted = 0
      for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (quoted && c == "\"" && substr(line, i + 1, 1) == "\"") { field = field c; i++ }
        else if (c == "\"") quoted = !quoted
        else if (c == "," && !quoted) { out[++count] = field; field = "" }
        else field = field c
      }
      out[++count] = field
      return count
    }
    NR == 1 { count = split_csv($0, names); for (i = 1; i <= count; i++) if (names[i] == want) at = i; next }
    { split_csv($0, cells); print cells[at] }' "$work/tiny.csv"
}
# joined NAME: the column on one line, values separated by spaces.
joined() { column "$1" | paste -sd' '; }
# all VALUES_CMD TEST: TEST (with $v) holds for every value VALUES_CMD prints.
all() { local v; while IFS= read -r v; do eval "$2" || return 1; done < <(eval "$1"); }

replays_before=$(ls -d /tmp/btrfs-replay-* 2>/dev/null | sort)
# Other replays may run on this machine at the same time: only mounts that
# appear during this test count against it.
mounts_before=$(awk '$2 ~ /btrfs-replay-/ {print $2}' /proc/self/mounts | sort)
work=$(mktemp -d /tmp/cowsim-test-replay-XXXXXX)
trap 'rm -rf "$work"' EXIT

TMPDIR=/tmp "$replay" "$trace" --nodesize $nodesize --mount relatime --size 1G --csv "$work/tiny.csv" \
  </dev/null >/dev/null 2>"$work/err"
status=$?
if [ $status = 77 ]; then echo "1..0 # SKIP $(tr '\n' ' ' <"$work/err")"; exit 77; fi

check "test_replay_exits_0" "[ $status = 0 ]" "$(cat "$work/err")"
header=$(head -1 "$work/tiny.csv")
# The two producers of the run schema write the same header (columns.h).
"$cowsim" run "$trace" -q --csv "$work/model.csv" 2>/dev/null
check "test_header_has_the_cowsim_run_columns" \
  "[[ '$header' == op_index,time_s,label,metadata_used,* ]] && [ '$header' = \"\$(head -1 \"\$work/model.csv\")\" ]" \
  "$header"
labels=$(column label | paste -sd'|')
check "test_every_mark_gives_one_row_in_order" \
  "[ '$labels' = 'after_copy|after_snapshots|after_read|after_changes|after delete, snap1' ]" "$labels"
used=($(column metadata_used))
check "test_metadata_used_is_whole_tree_blocks" "all 'column metadata_used' '[ \"\$v\" -gt 0 ] && [ \$((v % nodesize)) = 0 ]'" "${used[*]}"
check "test_metadata_used_is_plausible_for_a_few_files" \
  "all 'column metadata_used' '[ \$v -ge $((3 * nodesize)) ] && [ \$v -le $((64 * nodesize)) ]'" "${used[*]}"
raw=$(joined metadata_raw)
doubled=$(for u in "${used[@]}"; do echo $((2 * u)); done | paste -sd' ')
check "test_metadata_raw_is_twice_used_with_dup" "[ '$raw' = '$doubled' ]" "raw $raw, used ${used[*]}"
check "test_snapshots_do_not_shrink_metadata" "[ ${used[1]:-0} -ge ${used[0]:-1} ]" "${used[*]}"
check "test_deleting_a_snapshot_frees_metadata" "[ ${used[4]:-1} -lt ${used[3]:-0} ]" "${used[*]}"
data=($(column data_used))
check "test_data_used_holds_the_files_written" "[ ${data[0]:-0} -ge $((3 * 1024 * 1024 + 200 * 1024)) ]" "${data[*]}"
times=$(column time_s | awk '{printf "%.1f\n", $1}' | paste -sd' ')
check "test_time_s_follows_the_trace_clock" \
  "[ '$times' = '1338422400.0 1338422401.0 1338422402.0 1338508802.0 1338508802.0' ]" "$times"
elapsed=$(column elapsed_s | awk '{printf "%.1f\n", $1}' | paste -sd' ')
check "test_elapsed_s_counts_from_the_first_clock" "[ '$elapsed' = '0.0 1.0 2.0 86402.0 86402.0' ]" "$elapsed"
identity=$(paste -d'|' <(column design) <(column mount) <(column policy) <(column nodesize) <(column device_size) | sort -u)
check "test_identity_names_mount_nodesize_and_size_not_the_models_words" \
  "[ '$identity' = '|relatime||$nodesize|1073741824' ]" "$identity"
ops=$(joined op_index)
check "test_op_index_is_the_marks_index" "[ '$ops' = '12 16 27 38 40' ]" "$ops"
unmeasured=$({ column tree_fs; column blocks_cowed; column atime_updates; } | tr -d '\n')
check "test_unmeasurable_cells_are_empty" "[ -z '$unmeasured' ]" "tree_fs, blocks_cowed, atime_updates: $unmeasured"
check "test_no_enospc_on_a_roomy_image" "[ '$(joined enospc_events)' = '0 0 0 0 0' ]" "$(joined enospc_events)"
replays_after=$(ls -d /tmp/btrfs-replay-* 2>/dev/null | sort)
check "test_temporary_folder_is_removed" \
  "[ -z \"\$(comm -13 <(echo '$replays_before') <(echo '$replays_after') | grep .)\" ]" "$replays_after"
mounts_after=$(awk '$2 ~ /btrfs-replay-/ {print $2}' /proc/self/mounts | sort)
check "test_nothing_stays_mounted" \
  "[ -z \"\$(comm -13 <(echo '$mounts_before') <(echo '$mounts_after') | grep .)\" ]" "$mounts_after"
echo "1..$n"
[ $failed = 0 ]
