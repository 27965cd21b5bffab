#!/usr/bin/env bash
# tests/sim/test_compare_designs.sh COWSIM - `cowsim compare --designs` (TAP).
#
# Issue 16: every snapshot design (btrfs, keyed, zfs) runs the same trace, a
# CSV per design x mount x policy, a design column first in compare.csv, a
# panel per design in each figure; a per-run CSV is what `cowsim run
# --design` writes; relatime's greps cost more than noatime under each
# design; bad lists are exit 2 with a message and nothing run.
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"

# Read-only snapshots, which every design takes. A per-design cell: dcell FILE COLUMN DESIGN MOUNT POLICY.
dcell() { awk -F, -v name="$2" -v d="$3" -v m="$4" -v p="$5" 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next}
                                                             $1 == d && $2 == m && $3 == p {print $c[name]}' "$1"; }
"$cowsim" gen seed-experiment --files 300 --snapshots 3 --readonly -o "$work/ro.trace"
"$cowsim" compare "$work/ro.trace" --designs btrfs,keyed,zfs --mounts relatime,noatime --base after_snapshots \
  --out "$work/d" >"$work/stdout" 2>"$work/stderr"
check "compare --designs btrfs,keyed,zfs exits 0" "[ $? = 0 ]" "$(cat "$work/stderr")"
csvs=$(cd "$work/d" && ls ./*-*-*.csv 2>/dev/null | wc -l)
check "--designs: one CSV per design x mount, policy inline by default (6)" \
  "[ $csvs = 6 ] && [ -s \"$work/d/zfs-noatime-inline.csv\" ] && [ -s \"$work/d/keyed-relatime-inline.csv\" ]" \
  "found $csvs"
check "--designs: compare.csv starts with a design column, a line per run" \
  "head -1 '$work/d/compare.csv' | grep -q '^design,mount,policy,status' && [ \$(wc -l <'$work/d/compare.csv') = 7 ]"
check "--designs: parameters.json records the designs" "grep -q '\"designs\": \"btrfs,keyed,zfs\"' '$work/d/parameters.json'"
check "--designs: progress names the design" "grep -q 'run 6 of 6: design zfs, mount noatime, policy inline' '$work/stderr'"
check "--designs: the curves have a panel per design" \
  "grep -q '<!-- design btrfs -->' '$work/d/compare.svg' && grep -q '<!-- design zfs -->' '$work/d/compare.svg'"
for fig in compare compare-bars compare-ratio compare-attribution compare-free; do
  check "--designs: the figure $fig is written" "[ -s \"$work/d/$fig.png\" ] && [ -s \"$work/d/$fig.svg\" ]"
done
"$cowsim" run "$work/ro.trace" --design zfs --mount relatime -o "$work/zfs.csv" -q 2>/dev/null
check "--designs: a per-run CSV is byte for byte what cowsim run --design writes" \
  "cmp -s '$work/zfs.csv' '$work/d/zfs-relatime-inline.csv'"
for d in btrfs keyed zfs; do
  check "--designs: under $d the greps grow metadata more with relatime than with noatime" \
    "[ \"$(dcell "$work/d/compare.csv" metadata_final $d relatime inline)\" -gt \"$(dcell "$work/d/compare.csv" metadata_final $d noatime inline)\" ]"
done
for args in "--designs btrfs,nope" "--designs btrfs --design zfs" "--designs btrfs,btrfs" \
            "--designs btrfs,keyed --policies side-table"; do
  # shellcheck disable=SC2086
  "$cowsim" compare "$work/ro.trace" $args --out "$work/bad" >/dev/null 2>"$work/err"
  status=$?
  check "compare $args exits 2 with a message and runs nothing" \
    "[ $status = 2 ] && [ -s \"$work/err\" ] && ! ls \"$work\"/bad/*.csv >/dev/null 2>&1" \
    "status $status: $(cat "$work/err")"
done

echo "1..$n"
[ $failed = 0 ]
