#!/usr/bin/env bash
# tests/sim/test_whole_folders.sh COWSIM - a results folder holds one
# command's files, never a mix: as it was, or complete.
#
#   CM4  compare into an existing DIR changes it only when it ends: a signal
#        or a disk that fills leaves every file as it was (no new run CSV,
#        no new parameters.json beside the old compare.csv), and a finished
#        compare removes the earlier compare's files it did not write again
#        (its figures such as compare-ratio.*, the run CSVs its
#        parameters.json lists, report.html) (sim/cmd_compare.c, sim/multirun.h MR4).
#   SW5  sweep.png/.svg never show another sweep.csv than the one beside
#        them: an interrupted sweep that changed sweep.csv leaves no old
#        figure (sim/cmd_sweep.c).
#   RP6  report refuses, exit 2 naming the file and the field, a compare's
#        folder whose parameters.json does not match its compare.csv and run
#        CSVs (sim/cmd_report.c, cmd_compare.c CM5).
set -u
cowsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/../tap.sh"
export COWSIM_PYTHON=/nonexistent # no figures unless a test asks for them: the data files are what is checked

"$cowsim" gen seed-experiment --files 50 --snapshots 2 --seed 7 -o "$work/t.trace"
"$cowsim" gen seed-experiment --files 60 --snapshots 2 --seed 8 -o "$work/u.trace"
"$cowsim" gen seed-experiment --files 20000 --snapshots 5 --seed 1 -o "$work/big.trace"

# sums DIR: every file of DIR with its sha256 (hidden ones too), one a line
sums() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum); }
# names DIR: the names of DIR's entries, hidden ones too
names() { ls -A "$1" | LC_ALL=C sort | tr '\n' ' '; }

# interrupt SIG DIR: a 6-run compare of big.trace into DIR, signalled once its
# second run starts; sets $status and leaves stderr in $work/err
interrupt() {
  "$cowsim" compare "$work/big.trace" --device-size 100G --mounts relatime,strictatime,noatime \
    --policies inline,side-table -o "$2" 2>"$work/err" >/dev/null &
  local pid=$! k
  for k in $(seq 1500); do
    grep -q 'run 2 of 6' "$work/err" 2>/dev/null && break
    sleep 0.02
  done
  kill -s "$1" $pid
  wait $pid
  status=$?
}

# ---- CM4: an interrupted compare leaves an existing DIR as it was ----
"$cowsim" compare "$work/t.trace" --mounts relatime,noatime --policies inline,side-table -o "$work/cmp" -q 2>/dev/null
check "the reference compare (2 mounts x 2 policies) exits 0" "[ $? = 0 ] && [ -s '$work/cmp/compare.csv' ]"
# stand-ins for an earlier compare's figures (no Python here): a compare must treat them as its own
for f in compare compare-ratio compare-bars; do printf 'old %s\n' $f >"$work/cmp/$f.png"; done
printf 'my notes\n' >"$work/cmp/notes.txt"
sums "$work/cmp" >"$work/cmp.sums"
for sig in INT:130 TERM:143; do
  interrupt "${sig%:*}" "$work/cmp"
  check "SIG${sig%:*} after a compare's first run exits ${sig#*:}" "[ $status = ${sig#*:} ]" \
    "status $status: $(cat "$work/err")"
  check "and every file of the existing folder is as it was, byte for byte: no new run CSV or parameters.json" \
    "[ \"\$(sums '$work/cmp')\" = \"\$(cat '$work/cmp.sums')\" ]" \
    "$(diff <(sums "$work/cmp") "$work/cmp.sums")"
  check "and no staging folder or temporary file is left, and stderr says the folder is as it was" \
    "! ls -A '$work/cmp' | grep -q 'tmp' && grep -q 'interrupted: .*cmp as it was' '$work/err'" \
    "$(ls -A "$work/cmp"; tail -3 "$work/err")"
done
interrupt INT "$work/new/cmp"
check "an interrupted compare into a new folder leaves no folder" "[ $status = 130 ] && [ ! -e '$work/new/cmp' ]" \
  "status $status: $(ls -A "$work/new/cmp" 2>&1)"

# ---- CM4: a finished compare leaves no file of the earlier one behind ----
printf 'old report\n' >"$work/cmp/report.html" # cowsim report's page of the earlier compare
"$cowsim" compare "$work/t.trace" --mounts relatime --policies inline -o "$work/cmp" -q 2>"$work/err"
check "a compare with no noatime run into that folder exits 0" "[ $? = 0 ]" "$(cat "$work/err")"
"$cowsim" compare "$work/t.trace" --mounts relatime --policies inline -o "$work/fresh" -q 2>/dev/null
check "and the folder then holds that compare's files and the user's notes.txt: the earlier figures, run CSVs and report.html are gone" \
  "[ \"\$(names '$work/cmp' | sed 's/notes.txt //')\" = \"\$(names '$work/fresh')\" ] && [ -e '$work/cmp/notes.txt' ]" \
  "cmp: $(names "$work/cmp"); fresh: $(names "$work/fresh")"
check "and each file is the bytes a compare into a new folder writes (parameters.json: but for the folder's name)" \
  "diff <(sums '$work/cmp' | grep -v 'parameters.json\|notes.txt') <(sums '$work/fresh' | grep -v parameters.json) >/dev/null &&
   diff <(sed 's|$work/cmp|DIR|' '$work/cmp/parameters.json') <(sed 's|$work/fresh|DIR|' '$work/fresh/parameters.json') >/dev/null" \
  "$(diff <(sums "$work/cmp") <(sums "$work/fresh"))"
"$cowsim" compare "$work/t.trace" --mounts relatime --policies inline -o "$work/cmpj" -q --json 2>/dev/null >"$work/j.json"
check "--json names each run's CSV in the folder, not in the staging folder" \
  "grep -q '\"csv\": \"$work/cmpj/relatime-inline.csv\"' '$work/j.json' && ! grep -q 'compare-tmp' '$work/j.json'" \
  "$(grep csv "$work/j.json")"

if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  (unset COWSIM_PYTHON
   "$cowsim" compare "$work/t.trace" --mounts relatime,noatime --policies inline -o "$work/fig" -q 2>/dev/null &&
   [ -s "$work/fig/compare-ratio.png" ] &&
   "$cowsim" compare "$work/t.trace" --mounts relatime --policies inline -o "$work/fig" -q 2>/dev/null)
  check "with figures: a compare with no noatime run removes the earlier compare-ratio.png/.svg, draws compare.png" \
    "[ $? = 0 ] && [ ! -e '$work/fig/compare-ratio.png' ] && [ ! -e '$work/fig/compare-ratio.svg' ] &&
     [ ! -e '$work/fig/noatime-inline.csv' ] && [ -s '$work/fig/compare.png' ]" "$(names "$work/fig")"
else
  skip "with figures: a compare with no noatime run removes the earlier compare-ratio.png/.svg" "no python3-matplotlib"
fi

# ---- CM4: a disk that fills under a compare leaves the folder as it was ----
mnt=$work/mnt
mkdir "$mnt"
if mount -t tmpfs -o size=256k tmpfs "$mnt" 2>/dev/null; then
  "$cowsim" compare "$work/t.trace" --mounts relatime --policies inline -o "$mnt/cmp" -q 2>/dev/null
  sums "$mnt/cmp" >"$work/mnt.sums"
  "$cowsim" compare "$work/big.trace" --device-size 100G --every 1 --mounts relatime --policies inline \
    -o "$mnt/cmp" -q 2>"$work/err"
  status=$?
  check "a compare whose run CSV fills the disk (256 KiB tmpfs) exits 1" "[ $status = 1 ]" \
    "status $status: $(cat "$work/err")"
  check "and leaves the folder as it was, with no staging folder" \
    "[ \"\$(sums '$mnt/cmp')\" = \"\$(cat '$work/mnt.sums')\" ] && ! ls -A '$mnt/cmp' | grep -q tmp" \
    "$(ls -A "$mnt/cmp"; cat "$work/err")"
  umount "$mnt"
else
  skip "a compare that fills its disk (256 KiB tmpfs)" "cannot mount a tmpfs here (not root?)"
fi

# ---- SW5: an interrupted sweep leaves no figure of the earlier sweep.csv ----
"$cowsim" sweep "$work/t.trace" --vary nodesize=4K,16K -o "$work/sw" -q 2>/dev/null
printf 'old png\n' >"$work/sw/sweep.png" # a stand-in for the figure of that sweep.csv (no Python here)
printf 'old svg\n' >"$work/sw/sweep.svg"
"$cowsim" sweep "$work/t.trace" --vary nodesize=4K,16K -o "$work/sw" -q 2>/dev/null
check "the same sweep again (sweep.csv unchanged) keeps its figures" \
  "[ $? = 0 ] && [ \"\$(cat '$work/sw/sweep.png')\" = 'old png' ]"
"$cowsim" sweep "$work/big.trace" --device-size 100G --vary nodesize=4K,8K,16K,32K -o "$work/sw" -q \
  2>"$work/err" &
pid=$!
for k in $(seq 1500); do
  [ "$(ls "$work/sw/points" | wc -l)" -ge 6 ] && break # one more point: .point and .csv
  sleep 0.02
done
kill -INT $pid
wait $pid
status=$?
check "an interrupted sweep of another grid exits 130" "[ $status = 130 ]" "status $status: $(cat "$work/err")"
check "and its sweep.csv is the new grid's, with no sweep.png/.svg of the earlier sweep.csv beside it" \
  "grep -q ',316071,' '$work/sw/sweep.csv' && [ ! -e '$work/sw/sweep.png' ] && [ ! -e '$work/sw/sweep.svg' ]" \
  "$(ls -A "$work/sw"; cat "$work/sw/sweep.csv" | cut -c1-40)"

# ---- RP6: report refuses a folder that mixes two compares ----
"$cowsim" compare "$work/t.trace" --mounts relatime,noatime --policies inline,side-table -o "$work/a" -q 2>/dev/null
"$cowsim" compare "$work/u.trace" --mounts relatime,noatime --policies inline,side-table -o "$work/b" -q 2>/dev/null
"$cowsim" report "$work/a" -o "$work/a.html" 2>"$work/err"
check "report on a compare's own folder exits 0" "[ $? = 0 ] && [ -s '$work/a.html' ]" "$(cat "$work/err")"
# mixed CASE: a copy of a/ with one file of b/ (the case a compare killed mid-way left, or a hand copy)
mixed() { rm -rf "$work/m" && cp -r "$work/a" "$work/m" && cp "$work/b/$1" "$work/m/$1"; }
mixed parameters.json
"$cowsim" report "$work/m" -o "$work/m.html" 2>"$work/err"
status=$?
check "parameters.json of a compare of another trace: exit 2 naming parameters.json and the field, no page" \
  "[ $status = 2 ] && grep -q \"cowsim report: $work/m/parameters.json: field runs\\[0\\].sha256: \" '$work/err' &&
   [ ! -e '$work/m.html' ]" "status $status: $(cat "$work/err")"
mixed compare.csv
"$cowsim" report "$work/m" -o "$work/m.html" 2>"$work/err"
status=$?
check "compare.csv of a compare of another trace: exit 2 naming the field summary.sha256" \
  "[ $status = 2 ] && grep -q \"m/parameters.json: field summary.sha256: .*m/compare.csv is not the file it records\" '$work/err'" \
  "status $status: $(cat "$work/err")"
mixed noatime-inline.csv
"$cowsim" report "$work/m" -o "$work/m.html" 2>"$work/err"
check "one run's CSV of another trace: exit 2 naming the field runs[2].sha256 and the CSV" \
  "[ $? = 2 ] && grep -q 'field runs\[2\].sha256: .*m/noatime-inline.csv is not the file' '$work/err'" "$(cat "$work/err")"
# a parameters.json written before the sha256 members: the runs are still checked against compare.csv
"$cowsim" compare "$work/t.trace" --mounts relatime --policies inline -o "$work/one" -q 2>/dev/null
rm -rf "$work/m" && cp -r "$work/a" "$work/m"
sed '/"sha256": "[0-9a-f]*"$/d; s/"csv": "\(.*\)",$/"csv": "\1"/' "$work/one/parameters.json" >"$work/m/parameters.json"
"$cowsim" report "$work/m" -o "$work/m.html" 2>"$work/err"
check "an older parameters.json listing other runs than compare.csv: exit 2 naming the field runs" \
  "[ $? = 2 ] && grep -q 'm/parameters.json: field runs: lists 1 runs, but .*m/compare.csv has 4 lines' '$work/err'" \
  "$(cat "$work/err")"
sed 's/"policy": "side-table"/"policy": "threshold:5%"/' "$work/a/parameters.json" >"$work/m/parameters.json"
"$cowsim" report "$work/m" -o "$work/m.html" 2>"$work/err"
check "a run listed that compare.csv does not have at that line: exit 2 naming runs[1] and the line" \
  "[ $? = 2 ] && grep -q 'field runs\[1\]: lists mount relatime, policy threshold:5%, but .*compare.csv line 3 has mount relatime, policy side-table' '$work/err'" \
  "$(cat "$work/err")"
finish
