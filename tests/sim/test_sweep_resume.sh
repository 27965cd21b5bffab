#!/usr/bin/env bash
# tests/sim/test_sweep_resume.sh COWSIM - sweeps that keep their results (TAP).
#
# The contract of issue 19 items 3 to 5: every finished point is kept in
# DIR/points as it finishes; an interrupted sweep keeps them; the same
# command run again runs only the others; -j N gives the bytes of -j 1;
# `sweep plan` writes jobs GNU parallel runs; `sweep --point K` and
# `sweep merge DIR...` gather points run anywhere; a failing point does not
# stop the others.
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"
lines() { wc -l <"$1" | tr -d ' '; }
points() { find "$1/points" -name '*.point' 2>/dev/null | wc -l | tr -d ' '; }

"$cowsim" gen seed-experiment --files 6000 --snapshots 3 -o "$work/seed.trace"
grid=(--vary nodesize=4K,16K,64K --vary mount=relatime,strictatime --policies inline,side-table --device-size 16G)

# --- the reference: -j 1, uninterrupted -------------------------------------------
"$cowsim" sweep "$work/seed.trace" "${grid[@]}" -q -o "$work/ref" 2>"$work/err"
check "an uninterrupted -j 1 sweep of 12 points exits 0" "[ $? = 0 ] && [ $(lines "$work/ref/sweep.csv") = 13 ]" \
  "$(cat "$work/err")"
check "it keeps one point file per point" "[ $(points "$work/ref") = 12 ]"
check "and each point's rows beside it" "[ \$(ls \"$work/ref/points\"/*.csv | wc -l) = 12 ]"

# --- -j 2 gives the same bytes ------------------------------------------------------
"$cowsim" sweep "$work/seed.trace" "${grid[@]}" -j 2 -o "$work/j2" >"$work/j2.out" 2>"$work/err"
check "-j 2 exits 0" "[ $? = 0 ]" "$(cat "$work/err")"
check "-j 2 writes the sweep.csv and sweep.svg of -j 1, byte for byte" \
  "cmp -s \"$work/ref/sweep.csv\" \"$work/j2/sweep.csv\" && cmp -s \"$work/ref/sweep.svg\" \"$work/j2/sweep.svg\""
check "-j 2 shows progress with an ETA" "grep -q 'point 12 of 12: .*eta [0-9]' \"$work/err\"" "$(cat "$work/err")"

# --- interrupted, then completed ------------------------------------------------------
"$cowsim" sweep "$work/seed.trace" "${grid[@]}" -j 2 -q -o "$work/int" 2>"$work/int.err" &
pid=$!
for _ in $(seq 1 1000); do
  [ "$(points "$work/int")" -ge 1 ] && break
  sleep 0.01
done
kill -INT $pid
wait $pid
status=$?
kept=$(points "$work/int")
check "SIGINT stops a -j 2 sweep with status 130" "[ $status = 130 ]" "status $status: $(cat "$work/int.err")"
check "the interrupted sweep kept its finished points (some, not all: $kept)" "[ $kept -ge 1 ] && [ $kept -lt 12 ]"
check "its sweep.csv holds a line per finished point" "[ $(lines "$work/int/sweep.csv") = $((kept + 1)) ]"
check "nothing half-written is left (no temporary files)" \
  "[ -z \"\$(find \"$work/int\" -name '*tmp*')\" ]" "$(find "$work/int" -name '*tmp*')"
check "the message says how to finish" "grep -q 'the same command runs the others' \"$work/int.err\""
"$cowsim" sweep "$work/seed.trace" "${grid[@]}" -j 2 -o "$work/int" >/dev/null 2>"$work/err"
check "the same command run again exits 0" "[ $? = 0 ]" "$(cat "$work/err")"
check "it runs only the points not finished" \
  "grep -q \"^cowsim sweep: $kept of 12 points already finished\" \"$work/err\"" "$(head -3 "$work/err")"
check "the completed sweep.csv and sweep.svg are those of an uninterrupted -j 1 run" \
  "cmp -s \"$work/ref/sweep.csv\" \"$work/int/sweep.csv\" && cmp -s \"$work/ref/sweep.svg\" \"$work/int/sweep.svg\""
COWSIM_PYTHON=/nonexistent "$cowsim" sweep "$work/seed.trace" --vary nodesize=4K,16K,64K --vary mount=relatime,strictatime \
  --policies inline,side-table --device-size 32G -q -o "$work/int" 2>"$work/err"
check "another device size is another sweep: no point is reused" \
  "! grep -q 'already finished' \"$work/err\" && [ $(points "$work/int") = 24 ]" "$(cat "$work/err")"

# --- a failing point does not stop the others ---------------------------------------------
COWSIM_PYTHON=/nonexistent "$cowsim" sweep --gen 'seed-experiment --files 50 {extra}' --vary extra=--snapshots=1,--bogus=1,--snapshots=2 \
  -q -o "$work/fail" 2>"$work/err"
status=$?
check "a point whose generator fails: exit 2, and the others are in sweep.csv" \
  "[ $status = 2 ] && [ $(lines "$work/fail/sweep.csv") = 3 ]" "status $status: $(cat "$work/err")"
check "the failure names the point and the sweep says which failed" \
  "grep -q 'bogus' \"$work/err\" && grep -q '1 of 3 points failed (1)' \"$work/err\"" "$(cat "$work/err")"

# (no plot below where none is compared: COWSIM_PYTHON=/nonexistent, to keep the test short)
# --- plan, GNU parallel, --point, merge -------------------------------------------------
"$cowsim" sweep plan "$work/seed.trace" "${grid[@]}" -o "$work/plan" >"$work/plan.out" 2>"$work/err"
check "sweep plan exits 0 and runs nothing" "[ $? = 0 ] && [ $(points "$work/plan") = 0 ]" "$(cat "$work/err")"
check "its job list has one command per point" "[ $(lines "$work/plan/jobs.txt") = 12 ]"
check "its Slurm script is an array of 12 tasks" "grep -qx '#SBATCH --array=0-11' \"$work/plan/sweep.sbatch\""
if command -v parallel >/dev/null; then
  parallel --will-cite --jobs 2 --halt never <"$work/plan/jobs.txt" 2>"$work/err"
  check "GNU parallel runs the job list" "[ $? = 0 ] && [ $(points "$work/plan") = 12 ]" "$(cat "$work/err")"
else
  check "GNU parallel is installed (tools/setup.sh)" false
fi
"$cowsim" sweep merge "$work/plan" -q 2>"$work/err"
check "merge exits 0 once every point is finished" "[ $? = 0 ]" "$(cat "$work/err")"
check "the merged sweep.csv and sweep.svg are those of -j 1" \
  "cmp -s \"$work/ref/sweep.csv\" \"$work/plan/sweep.csv\" && cmp -s \"$work/ref/sweep.svg\" \"$work/plan/sweep.svg\""
check "merge writes the report page" "grep -q '<html' \"$work/plan/report.html\""

for k in 0 1 2 3 4 5; do "$cowsim" sweep "$work/seed.trace" "${grid[@]}" --point $k -q -o "$work/m1"; done
for k in 6 7 8 9 10 11; do "$cowsim" sweep "$work/seed.trace" "${grid[@]}" --point $k -q -o "$work/m2"; done
COWSIM_PYTHON=/nonexistent "$cowsim" sweep merge "$work/m1" -q -o "$work/half" 2>"$work/err"
check "merging half the points exits 1 and names the missing ones" \
  "[ $? = 1 ] && grep -q '6 of 12 points are finished in none' \"$work/err\" && [ $(lines "$work/half/sweep.csv") = 7 ]" \
  "$(cat "$work/err")"
COWSIM_PYTHON=/nonexistent "$cowsim" sweep merge "$work/m1" "$work/m2" -q -o "$work/both" 2>"$work/err"
check "merging two folders of --point runs gives the bytes of -j 1" \
  "[ $? = 0 ] && cmp -s \"$work/ref/sweep.csv\" \"$work/both/sweep.csv\"" "$(cat "$work/err")"
check "the merged folder holds every point (a rerun there runs nothing)" "[ $(points "$work/both") = 12 ]"
"$cowsim" sweep merge "$work/m1" "$work/fail" -q -o "$work/mix" 2>"$work/err"
check "merging folders of two different sweeps exits 2" "[ $? = 2 ] && grep -q 'another sweep' \"$work/err\"" \
  "$(cat "$work/err")"
"$cowsim" sweep merge "$work/nowhere" -q 2>"$work/err"
check "merging a folder that is not a sweep exits 2 and names the file" \
  "[ $? = 2 ] && grep -q 'nowhere/sweep-plan.ini' \"$work/err\"" "$(cat "$work/err")"
"$cowsim" sweep "$work/seed.trace" "${grid[@]}" --point 12 -q -o "$work/m1" 2>"$work/err"
check "--point past the grid exits 2" "[ $? = 2 ] && grep -q 'points 0 to 11' \"$work/err\"" "$(cat "$work/err")"

echo "1..$n"
[ $failed = 0 ]
