#!/usr/bin/env bash
# tests/reliability/test_determinism.sh COWSIM - same inputs, same bytes (issue 7.5).
#
# `cowsim gen` with the same arguments and seed writes the same trace, and
# `cowsim run` with the same trace and options writes the same CSV, per-
# subvolume CSV and summary, for the btrfs-like and the keyed design, each
# atime policy, with periodic rows, also when the second run has another
# environment (time zone, locale, malloc perturbation, working directory). A
# different seed must give a different trace, so the comparison is not vacuous.
set -u
cowsim=$(realpath "$1")  # absolute: one run below changes directory
. "$(dirname "$0")/../tap.sh"

gen() { "$cowsim" gen seed-experiment --files 300 --snapshots 3 --seed "$1" -o "$2"; }
gen 11 "$work/a.trace"; gen 11 "$work/b.trace"; gen 12 "$work/c.trace"
check "gen with the same seed writes the same bytes" "cmp -s '$work/a.trace' '$work/b.trace'"
check "gen with another seed writes another trace" "! cmp -s '$work/a.trace' '$work/c.trace'"
"$cowsim" gen backup-rotation --files 100 --days 5 --keep 2 --seed 3 >"$work/r1.trace"
"$cowsim" gen backup-rotation --files 100 --days 5 --keep 2 --seed 3 >"$work/r2.trace"
check "gen to stdout writes the same bytes as well" "cmp -s '$work/r1.trace' '$work/r2.trace'"

# run_twice NAME ARGS...: two runs, compare CSV, subvolume CSV and summary.
# The second run has another environment: another time zone and locale,
# malloc filling fresh and freed blocks with a pattern (so a value read from
# uninitialized or freed memory changes the output), another working
# directory. Addresses differ between the runs anyway (ASLR).
run_twice() {
  local name=$1; shift
  "$cowsim" run "$work/a.trace" "$@" --csv "$work/1.csv" --subvolume-csv "$work/1.sub.csv" \
    >"$work/1.summary" 2>"$work/1.err"
  echo $? >"$work/1.status"
  (cd / && TZ=Pacific/Chatham LC_ALL=C.UTF-8 MALLOC_PERTURB_=165 \
    "$cowsim" run "$work/a.trace" "$@" --csv "$work/2.csv" --subvolume-csv "$work/2.sub.csv" \
    >"$work/2.summary" 2>"$work/2.err")
  check "$name: exits 0" "[ \"\$(cat '$work/1.status')\" = 0 ]" "$(cat "$work/1.err")"
  check "$name: the CSV is byte-identical across runs" "cmp -s '$work/1.csv' '$work/2.csv'"
  check "$name: the per-subvolume CSV is byte-identical across runs" "cmp -s '$work/1.sub.csv' '$work/2.sub.csv'"
  check "$name: the summary is byte-identical across runs" \
    "[ -s '$work/1.summary' ] && cmp -s '$work/1.summary' '$work/2.summary'"
  check "$name: stderr is byte-identical across runs" "cmp -s '$work/1.err' '$work/2.err'"
}
run_twice "btrfs design" --every 97
run_twice "keyed design" --design keyed --every 97
run_twice "side-table policy" --policy side-table
run_twice "threshold policy" --policy threshold:5% --mount strictatime
run_twice "snapshot-aware policy, 4K nodes" --policy snapshot-aware --nodesize 4096
"$cowsim" run "$work/a.trace" --csv "$work/x.csv" --quiet
"$cowsim" run - --csv "$work/y.csv" --quiet <"$work/a.trace"
check "a trace read from stdin gives the same CSV as from its file" "cmp -s '$work/x.csv' '$work/y.csv'"
"$cowsim" run "$work/c.trace" --csv "$work/z.csv" --quiet
check "another trace gives another CSV" "! cmp -s '$work/x.csv' '$work/z.csv'"
finish
