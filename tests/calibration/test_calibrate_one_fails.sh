#!/usr/bin/env bash
# tests/calibration/test_calibrate_one_fails.sh CALIBRATE COWSIM BTRFS_REPLAY MATRIX (TAP)
#
# K4 of tools/calibrate: one case that fails costs only its own rows.  MATRIX
# has three cases, the middle one cannot run.  The run must go on to the
# third case, name the failed case with its error, keep the two finished
# cases' rows whole in calibration.csv, and exit 1 at the end.
# Skipped (77) without root or loop mounts.
set -u
calibrate=$1 cowsim=$2 replay=$3 matrix=$4
if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root for loop mounts"; exit 77; fi
. "$(dirname "$0")/../tap.sh"

bash "$calibrate" --matrix "$matrix" --out "$work/out" --work "$work/work" --no-plot \
	--cowsim "$cowsim" --replay "$replay" >"$work/report" 2>&1
status=$?
if [ $status = 77 ]; then echo "1..0 # SKIP $(tail -n 1 "$work/report")"; exit 77; fi
csv=$work/out/calibration.csv
check "a run with a failed case exits 1" "[ $status = 1 ]" "status $status; $(tail -n 5 "$work/report")"
check "the failed case is named with its error at the end" \
	"tail -n 3 '$work/report' | grep -q '^  broken-gen (status 1): .*no-such-workload'" "$(tail -n 5 "$work/report")"
check "the case after the failed one ran" "grep -q '^calibrate: small-rel-4k-ro done' '$work/report'" \
	"$(grep '^calibrate:' "$work/report")"
cases=$(awk -F, 'NR > 1 { print $1 }' "$csv" 2>/dev/null | sort -u | tr '\n' ' ')
check "calibration.csv holds the two finished cases and not the failed one" \
	"[ \"$cases\" = 'small-rel-4k-ro small-strict-4k-rw ' ]" "cases: $cases"
rows=$(awk 'END {print NR - 1}' "$csv" 2>/dev/null)
check "each finished case keeps its 4 marks" "[ \"$rows\" = 8 ]" "rows: $rows"
check "calibration-run.txt names the failed case" \
	"grep -q '^failed case: broken-gen' '$work/out/calibration-run.txt'" "$(cat "$work/out/calibration-run.txt" 2>&1 | tail -n 3)"
check "no temporary file is left in the output directory" \
	"[ -z \"\$(ls -A '$work/out' | grep '\\.tmp\$')\" ]" "$(ls -A "$work/out")"
echo "1..$n"
[ $failed = 0 ]
