#!/usr/bin/env bash
# tests/sim/test_whatif.sh COWSIM - `cowsim whatif delete` (issue 17.3): what
# deleting a set of snapshots together would free agrees with the deletion
# replayed by `cowsim run` (the trace cut at the mark, the deletions
# appended), and is more than the sum of their exclusive bytes when they
# share blocks among themselves (TAP).
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"

# field TEXT REGEX: the first number after REGEX in TEXT.
field() { sed -n "s/.*$2 \\([0-9]*\\).*/\\1/p" <<<"$1" | head -1; }
# csv_at CSV LABEL COLUMN: the column's value at the row of that mark.
csv_at() {
  awk -F, -v label="$2" -v col="$3" 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == col) c = i; next}
    $3 == label {print $c; exit}' "$1"
}

# A trace whose snapshots share data only with each other: /s1 holds the
# first version of 100 files, /s2 the second of half of them and the first
# of the rest, / a third of all.
{
  echo "cowsim-trace 1"
  echo "mkdir /d"
  for i in $(seq 100); do echo "create /d/f$i size=20000"; done
  echo "sync"; echo "snapshot / /s1"
  for i in $(seq 50); do echo "write /d/f$i 0 20000"; done
  echo "sync"; echo "snapshot / /s2"
  for i in $(seq 100); do echo "write /d/f$i 0 20000"; done
  echo "mark before_delete"
} >"$work/shared.trace"

# whatif_vs_run NAME TRACE MARK SNAP...: runs the what-if, then the trace cut
# at the mark with the deletions appended; sets $out, $run_csv.
whatif_vs_run() {
  local name=$1 trace=$2 mark=$3; shift 3
  out=$("$cowsim" whatif delete "$trace" --after "$mark" "$@" -m strictatime 2>&1)
  check "$name: whatif exits 0" "[ \$? = 0 ]" "$out"
  note "$out"
  local line
  line=$(grep -n "^mark $mark\$" "$trace" | head -1 | cut -d: -f1)
  { head -n "$line" "$trace"; for s in "$@"; do echo "delete-snapshot $s"; done; echo "mark after_delete"; } \
    >"$work/$name-deleted.trace"
  run_csv=$work/$name.csv
  "$cowsim" run "$work/$name-deleted.trace" -q -m strictatime --csv "$run_csv"
  local would_meta would_data exclusive
  would_meta=$(field "$out" "would free: [0-9]* bytes ([0-9.]* MiB):")
  would_data=$(field "$out" "of tree blocks,")
  exclusive=$(field "$out" "sum of their exclusive bytes:")
  local data_drop=$(( $(csv_at "$run_csv" "$mark" data_used) - $(csv_at "$run_csv" after_delete data_used) ))
  local fs_drop=$(( $(csv_at "$run_csv" "$mark" tree_fs) - $(csv_at "$run_csv" after_delete tree_fs) ))
  note "replayed: data_used -$data_drop, tree_fs -$fs_drop; exclusive $exclusive"
  check "$name: the data it would free is what the replayed deletion frees" \
    "[ -n \"$would_data\" ] && [ \"$would_data\" = $data_drop ]" "$would_data vs $data_drop"
  # The parent's path, copied to drop the directory entries, replaces blocks
  # only the set and the parent held: the subvolume trees shrink by exactly
  # the blocks the estimate named.
  check "$name: the tree blocks it would free are what the subvolume trees lose" \
    "[ -n \"$would_meta\" ] && [ \"$would_meta\" = $fs_drop ]" "$would_meta vs $fs_drop"
  local after
  after=$(sed -n 's/.*metadata_used [0-9]* -> \([0-9]*\), data_used [0-9]* -> \([0-9]*\)$/\1 \2/p' <<<"$out")
  check "$name: its own deletion leaves what cowsim run's does" \
    "[ \"$after\" = \"$(csv_at "$run_csv" after_delete metadata_used) $(csv_at "$run_csv" after_delete data_used)\" ]" \
    "$after"
  check "$name: together they free more than the sum of their exclusive bytes" \
    "[ -n \"$exclusive\" ] && [ \$((would_meta + would_data)) -gt $exclusive ]" \
    "$((would_meta + would_data)) vs $exclusive"
}

whatif_vs_run shared "$work/shared.trace" before_delete /s1 /s2
"$cowsim" gen backup-rotation --files 1500 --days 12 --keep 4 --read-fraction 0.2 -o "$work/rotation.trace" 2>/dev/null
# The two middle ones of the four kept at day 10: each shares blocks with
# the other that / has copied since.
snaps=$(awk '/^mark day_10$/ {exit} /^snapshot \/ / {print $3}' "$work/rotation.trace" | tail -3 | head -2)
# shellcheck disable=SC2086
whatif_vs_run rotation "$work/rotation.trace" day_10 $snaps

# The zfs design (issue 16): the same trace with read-only snapshots; the
# answer is the pool's (zfs destroy -nv fs@s1,fs@s2), checked against the
# deletion replayed: data_used and the datasets' metadata (tree_fs; the MOS
# is tree_root) drop by exactly what it names.
sed 's|^snapshot / \(/s[12]\)$|snapshot / \1 ro|' "$work/shared.trace" >"$work/shared-ro.trace"
out=$("$cowsim" whatif delete "$work/shared-ro.trace" --after before_delete /s1 /s2 --design zfs -m strictatime 2>&1)
check "zfs: whatif of two snapshots exits 0" "[ \$? = 0 ]" "$out"
note "$out"
{ cat "$work/shared-ro.trace"; echo "delete-snapshot /s1"; echo "delete-snapshot /s2"; echo "mark after_delete"; } \
  >"$work/zfs-deleted.trace"
"$cowsim" run "$work/zfs-deleted.trace" -q -m strictatime --design zfs --csv "$work/zfs.csv"
zmeta=$(field "$out" "would free: [0-9]* bytes ([0-9.]* MiB):")
zdata=$(field "$out" "of tree blocks,")
zexcl=$(field "$out" "sum of their exclusive bytes:")
zfs_data_drop=$(( $(csv_at "$work/zfs.csv" before_delete data_used) - $(csv_at "$work/zfs.csv" after_delete data_used) ))
zfs_meta_drop=$(( $(csv_at "$work/zfs.csv" before_delete tree_fs) - $(csv_at "$work/zfs.csv" after_delete tree_fs) ))
check "zfs: the data it would free is what the replayed destroy frees" \
  "[ -n \"$zdata\" ] && [ \"$zdata\" -gt 0 ] && [ \"$zdata\" = $zfs_data_drop ]" "$zdata vs $zfs_data_drop"
check "zfs: the metadata it would free is what the datasets lose" \
  "[ -n \"$zmeta\" ] && [ \"$zmeta\" = $zfs_meta_drop ]" "$zmeta vs $zfs_meta_drop"
check "zfs: together they free more than the sum of their exclusive bytes" \
  "[ -n \"$zexcl\" ] && [ \$((zmeta + zdata)) -gt $zexcl ]" "$((zmeta + zdata)) vs $zexcl"

# Errors name the snapshot and the reason, exit 2.
refused() { # WANT_TEXT ARGS...
  local want=$1; shift
  "$cowsim" whatif "$@" >/dev/null 2>"$work/err"
  local status=$?
  [ $status = 2 ] && grep -q -- "$want" "$work/err" || { echo "status $status: $(cat "$work/err")"; return 1; }
}
check "a directory that is no snapshot is refused, named" \
  "diag=\$(refused 'delete /d at mark before_delete: not a snapshot' delete \"$work/shared.trace\" --after before_delete /s1 /d)" "\$diag"
check "a mark the trace does not have is refused, named" \
  "diag=\$(refused \"no mark labelled 'nothing'\" delete \"$work/shared.trace\" --after nothing /s1)" "\$diag"
check "--after is required" "diag=\$(refused '--after MARK is required' delete \"$work/shared.trace\" /s1)" "\$diag"
check "a what-if other than delete is refused" "diag=\$(refused \"'delete'\" create \"$work/shared.trace\" --after before_delete /s1)" "\$diag"
check "the keyed design says it cannot tell" \
  "diag=\$(refused 'keyed design' delete \"$work/shared.trace\" --after before_delete /s1 --design keyed)" "\$diag"
tap_done
