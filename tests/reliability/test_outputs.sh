#!/usr/bin/env bash
# tests/reliability/test_outputs.sh COWSIM - no result is destroyed (issue 21.1).
#
# An output is written to PATH.tmp-XXXXXX beside it and renamed onto PATH at
# the end (results/output_file.h OF1, results/csv.c CSV5), so:
#   - an output naming the input trace, or another output (by path, through
#     "..", or as a hard link), is refused before anything is opened: exit 2,
#     every file as it was;
#   - a run killed mid-way (SIGKILL) leaves the previous result under PATH;
#   - two runs writing one CSV at once leave one run's whole CSV, not a mix;
#   - a file-size limit (ulimit -f, SIGXFSZ not ignored by the caller) and a
#     full disk (a 64 KiB tmpfs) end the run with exit 1 (CLI2: the disk
#     failed under a write; it was 2), a message naming the file, PATH as it
#     was and the whole rows written so far in PATH.partial (RUN1; they were
#     under PATH before); plot and record onto the full disk exit 1 too (they
#     were 2) and leave the old picture or trace.
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"

"$cowsim" gen seed-experiment --files 200 --snapshots 2 --seed 3 -o "$work/t.trace"
cp "$work/t.trace" "$work/t.orig"
"$cowsim" run "$work/t.trace" --every 1 --quiet --csv "$work/full.csv" 2>/dev/null
check "the reference run exits 0" "[ $? = 0 ] && csv_whole '$work/full.csv'"

# ---- aliases, refused before anything is opened ----
"$cowsim" run "$work/t.trace" --quiet --csv "$work/t.trace" 2>"$work/err"
status=$?
check "--csv naming the input trace is refused (exit 2)" "[ $status = 2 ]" "status $status: $(cat "$work/err")"
check "and the trace is left as it was" "cmp -s '$work/t.trace' '$work/t.orig'"
restore() { cp "$work/t.orig" "$work/t.trace"; } # so that one failure does not hide the next
restore
check "the message names both" "grep -q \"output '$work/t.trace' is the same file as the input\" '$work/err'" \
  "$(cat "$work/err")"
mkdir "$work/sub"
"$cowsim" run "$work/t.trace" --quiet --csv "$work/sub/../t.trace" 2>"$work/err"
check "--csv naming the trace through 'sub/..' is refused" "[ $? = 2 ] && cmp -s '$work/t.trace' '$work/t.orig'"
restore
ln "$work/t.trace" "$work/hardlink.csv"
"$cowsim" run "$work/t.trace" --quiet --csv "$work/hardlink.csv" 2>"$work/err"
check "--csv naming a hard link of the trace is refused (same device and inode)" \
  "[ $? = 2 ] && cmp -s '$work/t.trace' '$work/t.orig'" "$(cat "$work/err")"
restore
ln -s t.trace "$work/symlink.csv"
"$cowsim" run "$work/t.trace" --quiet --csv "$work/symlink.csv" 2>"$work/err"
check "--csv naming a symlink to the trace is refused" \
  "[ $? = 2 ] && cmp -s '$work/t.trace' '$work/t.orig' && [ -L '$work/symlink.csv' ]" "$(cat "$work/err")"
rm -f "$work/symlink.csv" "$work/hardlink.csv"
restore
printf 'previous\n' >"$work/both.csv"
"$cowsim" run "$work/t.trace" --quiet --csv "$work/both.csv" --subvolume-csv "$work/./both.csv" 2>"$work/err"
status=$?
check "--csv and --subvolume-csv naming one file are refused (exit 2)" "[ $status = 2 ]" \
  "status $status: $(cat "$work/err")"
check "and that file is left as it was" "[ \"\$(cat '$work/both.csv')\" = previous ]" "$(od -c "$work/both.csv" | head)"
"$cowsim" run "$work/t.trace" --quiet --csv /dev/null --subvolume-csv /dev/null 2>"$work/err"
check "two outputs to /dev/null are fine (a device is never an alias)" "[ $? = 0 ]" "$(cat "$work/err")"
cp "$work/t.trace" "$work/log.trace"
"$cowsim" gen from-strace "$work/log.trace" --root "$work/sub" -o "$work/log.trace" 2>"$work/err"
check "gen from-strace -o naming its own log is refused, the log as it was" \
  "[ $? = 2 ] && cmp -s '$work/log.trace' '$work/t.orig' && grep -q 'same file' '$work/err'" "$(cat "$work/err")"

# ---- a killed run leaves the previous result ----
big=$work/big.trace
"$cowsim" gen seed-experiment --files 20000 --snapshots 5 --seed 1 -o "$big"
printf 'the previous result\n' >"$work/kill.csv"
"$cowsim" run "$big" --every 50 --quiet --check-every 1000 --csv "$work/kill.csv" 2>/dev/null &
pid=$!
for k in $(seq 200); do
  tmp=$(ls "$work"/kill.csv.tmp-* 2>/dev/null | head -n 1)
  [ -n "$tmp" ] && [ "$(wc -l <"$tmp")" -ge 2 ] && break
  sleep 0.05
done
kill -s KILL "$pid"
wait "$pid" 2>/dev/null
check "SIGKILL mid-run leaves the previous CSV under its name, byte for byte" \
  "[ \"\$(cat '$work/kill.csv')\" = 'the previous result' ]" "$(head -c 300 "$work/kill.csv")"
tmp=$(ls "$work"/kill.csv.tmp-* 2>/dev/null | head -n 1)
check "the rows it wrote are whole, in kill.csv.tmp-XXXXXX beside it" "[ -n '$tmp' ] && csv_whole '$tmp'"
rm -f "$work"/kill.csv.tmp-*

# ---- two writers of one CSV at once ----
# Two different runs (every 1 and every 2 ops) race to one CSV, eight times;
# the CSV must be one of the two whole results each time.
"$cowsim" run "$work/t.trace" --every 2 --quiet --csv "$work/half.csv" 2>/dev/null
mixed=0
for k in 1 2 3 4 5 6 7 8; do
  "$cowsim" run "$work/t.trace" --every 1 --quiet --csv "$work/race.csv" 2>/dev/null &
  a=$!
  "$cowsim" run "$work/t.trace" --every 2 --quiet --csv "$work/race.csv" 2>/dev/null &
  b=$!
  wait $a; sa=$?
  wait $b; sb=$?
  if ! { [ $sa = 0 ] && [ $sb = 0 ]; } ||
     ! { cmp -s "$work/race.csv" "$work/full.csv" || cmp -s "$work/race.csv" "$work/half.csv"; }; then
    mixed=$((mixed + 1))
  fi
done
check "two runs writing one CSV at once leave one run's whole CSV (8 races)" "[ $mixed = 0 ]" \
  "$mixed of 8 races left a mix: $(wc -l <"$work/race.csv") lines"
check "and no temporary file is left behind" "[ -z \"\$(ls '$work' | grep tmp-)\" ]" "$(ls "$work")"

# ---- a file-size limit: SIGXFSZ is not fatal ----
# The caller does not ignore SIGXFSZ here: cowsim must, so that write(2) fails
# with EFBIG and the run ends with exit 2 and whole rows.
(ulimit -f 4; exec "$cowsim" run "$work/t.trace" --every 1 --quiet --csv "$work/fsize.csv") 2>"$work/err"
status=$?
check "a CSV past ulimit -f ends the run with exit 1, not SIGXFSZ" "[ $status = 1 ]" \
  "status $status: $(cat "$work/err")"
check "the message names the CSV" "grep -q \"fsize.csv\" '$work/err'" "$(cat "$work/err")"
check "fsize.csv.partial holds the whole rows written, the first rows of the full CSV; fsize.csv not created" \
  "[ ! -e '$work/fsize.csv' ] && csv_whole '$work/fsize.csv.partial' && [ \$(wc -l <'$work/fsize.csv.partial') -gt 1 ] &&
   cmp -s '$work/fsize.csv.partial' <(head -n \$(wc -l <'$work/fsize.csv.partial') '$work/full.csv')"
(ulimit -f 4; exec "$cowsim" gen seed-experiment --files 2000 --snapshots 1 -o "$work/fsize.trace") 2>"$work/err"
status=$?
check "gen -o past ulimit -f exits 1 (CLI2) naming the trace, and leaves no trace under its name" \
  "[ $status = 1 ] && grep -q \"cannot write '$work/fsize.trace'\" '$work/err' && [ ! -e '$work/fsize.trace' ]" \
  "status $status: $(cat "$work/err")"

# ---- a full disk (a small tmpfs) ----
mnt=$work/mnt
mkdir "$mnt"
if mount -t tmpfs -o size=64k tmpfs "$mnt" 2>/dev/null; then
  "$cowsim" run "$work/t.trace" --every 1 --quiet --csv "$mnt/enospc.csv" 2>"$work/err"
  status=$?
  check "a CSV that fills its disk (64 KiB tmpfs) ends the run with exit 1" "[ $status = 1 ]" \
    "status $status: $(cat "$work/err")"
  check "the message names the CSV and says the disk is full" \
    "grep -q 'enospc.csv.*No space left on device' '$work/err'" "$(cat "$work/err")"
  check "enospc.csv.partial holds whole rows, the first rows of the full CSV; enospc.csv not created" \
    "[ ! -e '$mnt/enospc.csv' ] && csv_whole '$mnt/enospc.csv.partial' &&
     cmp -s '$mnt/enospc.csv.partial' <(head -n \$(wc -l <'$mnt/enospc.csv.partial') '$work/full.csv')" \
    "$(ls -la "$mnt")"
  check "no temporary file is left on the full disk" "[ -z \"\$(ls '$mnt' | grep tmp-)\" ]" "$(ls "$mnt")"
  # A plot onto a full disk: the old pictures stay, whole.
  rm -f "$mnt/enospc.csv" "$mnt/enospc.csv.partial"
  printf 'old png\n' >"$mnt/p.png"
  printf 'old svg\n' >"$mnt/p.svg"
  head -c 60k /dev/zero >"$mnt/filler" 2>/dev/null
  "$cowsim" plot "$work/full.csv" -o "$mnt/p" 2>"$work/err"
  status=$?
  if [ $status = 77 ]; then
    skip "a plot onto a full disk" "no python3-matplotlib"
  else
    # CLI2: the disk failing under a write is 1 (the run failed); 2 is for a path that cannot be created
    check "a plot onto a full disk exits 1 (CLI2) naming the output" "[ $status = 1 ] && grep -q 'cannot write' '$work/err'" \
      "status $status: $(cat "$work/err")"
    check "and leaves the old pictures as they were, and no temporary file" \
      "[ \"\$(cat '$mnt/p.png' '$mnt/p.svg')\" = 'old png
old svg' ] && [ -z \"\$(ls '$mnt' | grep tmp-)\" ]" "$(ls -la "$mnt")"
  fi
  # record -o onto the full disk: the trace (a --prelude of 300 files, ~30 KiB) does not fit.
  mkdir "$work/tree"
  for i in $(seq 300); do echo x >"$work/tree/a-file-with-a-long-name-$i"; done
  rm -f "$mnt/p.png" "$mnt/p.svg" # room for the old trace, not for the new one
  printf 'old trace\n' >"$mnt/rec.trace"
  "$cowsim" record --root "$work/tree" --prelude -o "$mnt/rec.trace" -- ls "$work/tree" >/dev/null 2>"$work/err"
  status=$?
  if [ $status = 77 ]; then
    skip "record onto a full disk" "no strace, or no ptrace here"
  else
    check "record -o onto a full disk exits 1 (CLI2) naming the trace, the old trace as it was" \
      "[ $status = 1 ] && grep -q \"cannot write '$mnt/rec.trace'.*No space left\" '$work/err' &&
       [ \"\$(cat '$mnt/rec.trace')\" = 'old trace' ] && [ -z \"\$(ls '$mnt' | grep tmp-)\" ]" \
      "status $status: $(cat "$work/err"); $(ls -la "$mnt")"
  fi
  umount "$mnt"
else
  skip "a CSV that fills its disk (64 KiB tmpfs)" "cannot mount a tmpfs here (not root?)"
fi
finish
