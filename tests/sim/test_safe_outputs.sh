#!/usr/bin/env bash
# tests/sim/test_safe_outputs.sh COWSIM - nothing already written is lost,
# clobbered or left half-written, whatever the input, signal or output path
# (the user review's findings 2, 3, 6, 9 and 14).
#
#   RUN1  run's outputs appear under their names only when the run is done:
#         bad input (a missing trace, a malformed line, a device too small
#         for mkfs) leaves them as they were; a run stopped later keeps its
#         whole rows in FILE.partial (sim/cmd_run.c).
#   GN1   gen -o on SIGINT/SIGTERM leaves FILE as it was and no FILE.tmp-XXXXXX
#         (sim/cmd_gen.c).
#   MR3   compare and sweep read TRACE through before they touch DIR: a
#         malformed trace or a --base that is no mark of it is exit 2 naming
#         it, with DIR as it was (sim/multirun.h).
#   CLI2  an output path the command line gives that cannot be created is
#         bad input, exit 2, in every command, and the message names that
#         path, not a temporary file (sim/cli.h); the top-level help and the
#         README say the same.
set -u
cowsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/../tap.sh"
. "$(dirname "$0")/../reliability/signal.sh"
readme=$(dirname "$0")/../../README.md
export COWSIM_PYTHON=/nonexistent # no figures: the folders' data files are what is checked

"$cowsim" gen seed-experiment --files 50 --snapshots 2 --seed 7 -o "$work/t.trace"
sed '9s|.*|create /tree/bad size=43x01|' "$work/t.trace" >"$work/bad.trace"
"$cowsim" run "$work/t.trace" --quiet -o "$work/good.csv" --subvolume-csv "$work/good-sv.csv"
check "the reference run exits 0" "[ $? = 0 ] && csv_whole '$work/good.csv'"

# same_as_before NAME: NAME equals its reference copy and no NAME.partial or temporary file is beside it
same_as_before() {
  cmp -s "$work/$1" "$work/good.csv" && [ ! -e "$work/$1.partial" ] && ! ls "$work/$1".tmp-* >/dev/null 2>&1
}

# ---- RUN1: a failed run leaves an existing CSV as it was ----
for case in "bad.trace|a malformed line 9|bad.trace:9:" "missing.trace|a missing trace|missing.trace" \
            "t.trace -s 100M|a device too small for mkfs|too small for mkfs"; do
  IFS='|' read -r args what message <<<"$case"
  cp "$work/good.csv" "$work/keep.csv"
  # shellcheck disable=SC2086
  (cd "$work" && "$cowsim" run $args --quiet -o keep.csv) 2>"$work/err"
  status=$?
  check "run on $what exits 2 naming it" "[ $status = 2 ] && grep -q '$message' '$work/err'" \
    "status $status: $(cat "$work/err")"
  check "run on $what leaves the existing CSV byte for byte, and writes no .partial" "same_as_before keep.csv" \
    "$(ls "$work"; head -c 200 "$work/keep.csv")"
done
cp "$work/good.csv" "$work/keep.csv"
cp "$work/good-sv.csv" "$work/keep-sv.csv"
"$cowsim" run "$work/bad.trace" --quiet -o "$work/keep.csv" --subvolume-csv "$work/keep-sv.csv" 2>"$work/err"
check "a malformed line leaves --subvolume-csv as it was too, and says nothing was written" \
  "cmp -s '$work/keep-sv.csv' '$work/good-sv.csv' && same_as_before keep.csv &&
   grep -q \"nothing written: '$work/keep.csv' and '$work/keep-sv.csv' as they were\" '$work/err'" "$(cat "$work/err")"

# ---- RUN1: an interrupted re-run keeps the old CSV and its rows in CSV.partial ----
"$cowsim" gen seed-experiment --files 20000 --snapshots 5 --seed 1 -o "$work/big.trace"
cp "$work/good.csv" "$work/keep.csv"
"$cowsim" run "$work/big.trace" --every 50 --quiet --device-size 100G --check-every 1000 -o "$work/keep.csv" \
  2>"$work/err" &
pid=$!
await_rows "$work/keep.csv" 10 has_lines 2 # the first row is in the temporary file
signal_and_time "$pid" INT
check "SIGINT on a re-run exits 130" "[ $status = 130 ]" "status $status: $(cat "$work/err")"
check "and the complete old CSV is still under its name, byte for byte" "cmp -s '$work/keep.csv' '$work/good.csv'"
check "and the rows written so far are whole, in keep.csv.partial, named on stderr" \
  "csv_whole '$work/keep.csv.partial' && grep -q 'the rows are in .*keep.csv.partial' '$work/err'" "$(cat "$work/err")"
check "and no temporary file is left" "! ls '$work'/keep.csv.tmp-* >/dev/null 2>&1"
rm -f "$work/keep.csv.partial"

# ---- GN1: gen interrupted leaves FILE as it was and no temporary file ----
for sig in INT:130 TERM:143; do
  cp "$work/t.trace" "$work/gy.trace"
  env --default-signal=INT "$cowsim" gen seed-experiment --files 400000 --snapshots 3 -o "$work/gy.trace" &
  pid=$!
  for k in $(seq 500); do
    ls "$work"/gy.trace.tmp-* >/dev/null 2>&1 && break
    sleep 0.02
  done
  kill -s "${sig%:*}" $pid
  wait $pid
  status=$?
  check "gen -o on SIG${sig%:*} exits ${sig#*:}" "[ $status = ${sig#*:} ]" "status $status"
  check "gen -o on SIG${sig%:*} leaves no gy.trace.tmp-XXXXXX and the old trace as it was" \
    "! ls '$work'/gy.trace.tmp-* >/dev/null 2>&1 && cmp -s '$work/gy.trace' '$work/t.trace'" "$(ls "$work")"
done

# ---- MR3: compare and sweep read the trace before touching DIR ----
"$cowsim" compare "$work/t.trace" --mounts relatime,noatime --policies inline -o "$work/cmp" -q 2>/dev/null
check "the reference compare exits 0" "[ $? = 0 ] && [ -s '$work/cmp/compare.csv' ]"
cp -r "$work/cmp" "$work/cmp.orig"
"$cowsim" compare "$work/bad.trace" -o "$work/cmp" -q 2>"$work/err"
status=$?
check "compare on a malformed trace into an existing folder exits 2 naming the line" \
  "[ $status = 2 ] && grep -q 'bad.trace:9:' '$work/err'" "status $status: $(cat "$work/err")"
check "and leaves every file of the folder as it was" "diff -r '$work/cmp' '$work/cmp.orig' >/dev/null" \
  "$(diff -r "$work/cmp" "$work/cmp.orig" | head -5)"
"$cowsim" compare "$work/t.trace" --base nosuchmark -o "$work/cmp" -q 2>"$work/err"
status=$?
check "compare --base with a typo exits 2 naming the option and the trace's marks" \
  "[ $status = 2 ] && grep -q \"cowsim compare: --base nosuchmark: no mark 'nosuchmark' in .*t.trace (its marks: after_copy, after_snapshots, after_grep, after_grep2)\" '$work/err'" \
  "status $status: $(cat "$work/err")"
check "and leaves the folder as it was" "diff -r '$work/cmp' '$work/cmp.orig' >/dev/null"
"$cowsim" sweep "$work/t.trace" --vary nodesize=4K,16K --base nosuchmark -o "$work/sw" -q 2>"$work/err"
status=$?
check "sweep --base with a typo exits 2 naming the option and the marks, before making DIR" \
  "[ $status = 2 ] && grep -q \"cowsim sweep: --base nosuchmark: no mark 'nosuchmark'.*(its marks: after_copy\" '$work/err' &&
   [ ! -e '$work/sw' ]" "status $status: $(cat "$work/err")"
"$cowsim" sweep "$work/bad.trace" --vary nodesize=4K,16K -o "$work/sw" -q 2>"$work/err"
status=$?
check "sweep on a malformed trace exits 2 naming the line, before making DIR" \
  "[ $status = 2 ] && grep -q 'bad.trace:9:' '$work/err' && [ ! -e '$work/sw' ]" "status $status: $(cat "$work/err")"
"$cowsim" sweep --gen 'seed-experiment --files 50 --snapshots {s}' --vary s=1,2 --base nosuchmark -o "$work/swg" -q \
  2>"$work/err"
status=$?
check "sweep --gen: a --base no generated trace has is exit 2 for each point, not empty columns" \
  "[ $status = 2 ] && [ \$(grep -c \"no mark 'nosuchmark'\" '$work/err') = 2 ]" "status $status: $(cat "$work/err")"
"$cowsim" compare "$work/t.trace" --mounts relatime --policies inline --base after_snapshots -o "$work/cmpb" -q 2>"$work/err"
check "a --base that is a mark runs as before" "[ $? = 0 ] && grep -q after_snapshots '$work/cmpb/compare.csv'" \
  "$(cat "$work/err")"

# ---- CLI2: an output path that cannot be created is bad input, exit 2, in every command ----
for cmd in "run $work/t.trace -q -o /nonexistent/dir/out.csv" \
           "run $work/t.trace -q --subvolume-csv /nonexistent/dir/out.csv" \
           "gen synthetic --files 10 -o /nonexistent/dir/out.csv" \
           "draw $work/t.trace --at after_copy -o /nonexistent/dir/out.csv" \
           "report $work/cmp -o /nonexistent/dir/out.csv" \
           "compare $work/t.trace -q -o /proc/nonexistent/dir/out.csv" \
           "sweep $work/t.trace --vary nodesize=4K,16K -q -o /proc/nonexistent/dir/out.csv"; do
  # shellcheck disable=SC2086
  "$cowsim" $cmd >/dev/null 2>"$work/err"
  status=$?
  check "cowsim ${cmd%% *} to an output path in a missing folder exits 2 naming that path, not a temporary file" \
    "[ $status = 2 ] && grep -q 'nonexistent/dir/out.csv' '$work/err' && ! grep -q 'tmp-\\|out.csv\\.[A-Z0-9]\\{6\\}' '$work/err'" \
    "status $status: $(cat "$work/err")"
done
"$cowsim" whatif delete "$work/t.trace" --after after_snapshots /snap1 >/dev/full 2>"$work/err"
check "whatif to a full stdout exits 2, as run does" "[ $? = 2 ]" "$(cat "$work/err")"
"$cowsim" --help >"$work/help"
check "cowsim --help: 2 is an output path that cannot be created, 1 the disk filling under an output" \
  "grep -q '^  2  bad input: .*' '$work/help' && grep -q 'an output path that cannot be created' '$work/help' &&
   grep -q '^  1  the run itself failed: .*disk filled' '$work/help'" "$(cat "$work/help")"
check "the README says the same" \
  "tr '\\n' ' ' <'$readme' | grep -q '1 the run failed: a model invariant broke (a bug in cowsim), or the disk filled under an output' &&
   tr '\\n' ' ' <'$readme' | grep -q 'an output path on the command line that cannot be created'"
for c in run gen draw report compare sweep; do
  if [ $c = gen ]; then "$cowsim" gen synthetic --help >"$work/help"; else "$cowsim" $c --help >"$work/help"; fi
  check "cowsim $c --help gives exit 2 for an output that cannot be created or written" \
    "tr '\\n' ' ' <'$work/help' | grep -Eq '2 +bad arguments.*(output +path|cannot +be +created|cannot +be +made)'" \
    "$(sed -n '/Exit status/,$p' "$work/help")"
done
finish
