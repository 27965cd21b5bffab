#!/usr/bin/env bash
# tests/reliability/test_interrupt.sh COWSIM - SIGINT, SIGTERM and SIGKILL
# during `cowsim run` (issue 7.4).
#
# A run interrupted by SIGINT exits 130 and by SIGTERM 143; either way the
# CSV's own name is left as it was (RUN1, sim/cmd_run.c) and CSV.partial
# holds whole rows only (every line has the header's field count and the
# file ends in a newline), each of them byte-identical to the same row of an
# uninterrupted run, and stderr names the trace line where the run stopped
# and ends with a line giving the ops done.
# Even SIGKILL, which cowsim cannot catch, leaves whole rows (results/csv.c
# writes each line with one write(2)), in CSV.tmp-XXXXXX: the CSV's own name
# is renamed onto only when the run ends (CSV5). Running again with the same arguments
# restarts cleanly: the CSV is rewritten from the start and equals the
# uninterrupted run's.
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"
. "$(dirname "$0")/signal.sh"

trace=$work/big.trace
"$cowsim" gen seed-experiment --files 20000 --snapshots 5 --seed 1 -o "$trace"
# --check-every 1000 makes the run last seconds (about 4 s), so a signal sent
# once the first row is written (after 50 ops) lands mid-run.
args=(--every 50 --quiet --device-size 100G --check-every 1000)
"$cowsim" run "$trace" "${args[@]}" --csv "$work/full.csv" 2>/dev/null
check "the uninterrupted run exits 0" "[ $? = 0 ]"
full_rows=$(($(wc -l <"$work/full.csv") - 1))

# interrupt SIGNAL STATUS: run in the background, signal it once its CSV has
# a first row (polled every 20 ms, for at most 10 s), so the signal lands
# after the first 50 ops, long before the end.
interrupt() {
  local sig=$1 want=$2 csv=$work/$1.csv err=$work/$1.err
  "$cowsim" run "$trace" "${args[@]}" --csv "$csv" 2>"$err" &
  local pid=$!
  await_rows "$csv" 10 has_lines 2
  signal_and_time "$pid" "$sig"
  check "SIG$sig leaves nothing under the CSV's name (it did not exist before)" "[ ! -e '$csv' ]"
  if [ "$sig" = KILL ]; then # nothing renamed it: the rows are in the temporary file
    csv=$(tmp_csv "$csv")
  else # RUN1: an interrupted run keeps its rows in CSV.partial (they were under CSV's name before)
    csv=$csv.partial
  fi
  local rows=$(($(wc -l <"$csv") - 1))
  check "SIG$sig exits $want" "[ $status = $want ]" "status $status: $(cat "$err")"
  check "SIG$sig stopped the run before its end (rows $rows of $full_rows)" \
    "[ $rows -ge 0 ] && [ $rows -lt $full_rows ]"
  check "SIG$sig leaves whole CSV rows only" "csv_whole '$csv'"
  check "SIG$sig: each row written equals the uninterrupted run's row" \
    "cmp -s '$csv' <(head -n $((rows + 1)) '$work/full.csv')"
  if [ "$sig" != KILL ]; then
    check "SIG$sig: stderr names the trace line where the run stopped" \
      "grep -Eq '^cowsim run: .*big\\.trace:[0-9]+: interrupted' '$err'" "$(cat "$err")"
    check "SIG$sig: stderr's last line says how many ops were done, that the rows are complete and where" \
      "tail -n 1 '$err' | grep -Eq '^cowsim run: stopped after [1-9][0-9]* ops; the rows written so far are complete; .*$sig\\.csv. is as it was, the rows are in .*$sig\\.csv\\.partial.\$'" \
      "$(tail -n 2 "$err")"
  fi
}
interrupt INT 130
interrupt TERM 143
interrupt KILL 137

"$cowsim" run "$trace" "${args[@]}" --csv "$work/INT.csv" 2>/dev/null
check "a second run with the same arguments exits 0" "[ $? = 0 ]"
check "and rewrites the CSV from the start, equal to the uninterrupted run" \
  "cmp -s '$work/INT.csv' '$work/full.csv'"

# A signal during one long op (issue 21.2): the sync that writes back a
# 16 TiB file takes seconds (about 25 s here; longer under ASan), and the
# model asks between its 128 MiB extents whether to stop
# (fs_config.cancelled). The create before it is quick (delayed allocation)
# and --every 1 writes its row without a commit, so once that row is in the
# CSV the run is inside the sync: the signal goes 0.3 s later. (A fixed
# sleep failed both ways: a 4 TiB sync ended before it on a fast CI machine,
# and under ASan a 64 TiB create outlasted it.) The run must stop during the
# sync line, not after it, well within a second (the model's own stop is one
# extent; the rest is freeing the model and renaming the CSV).
printf 'cowsim-trace 1\ncreate /big size=16T\nsync\nmark done\n' >"$work/long.trace"
"$cowsim" run "$work/long.trace" --device-size 60T --every 1 --quiet --csv "$work/long.csv" 2>"$work/long.err" &
pid=$!
await_rows "$work/long.csv" 20 has_lines 2 # the create's row
sleep 0.3
signal_and_time "$pid" INT
note "SIGINT 0.3 s into the 16 TiB writeback: exit $status after $ms ms"
check "SIGINT during a long op exits 130" "[ $status = 130 ]" "status $status: $(cat "$work/long.err")"
check "stderr names the op's line: long.trace:3: sync: interrupted during this line" \
  "grep -q 'long.trace:3: sync .*interrupted during this line' '$work/long.err'" "$(cat "$work/long.err")"
check "the run ended within 2 s of the signal (took $ms ms)" "[ $ms -lt 2000 ]"
check "its rows are whole, in long.csv.partial (RUN1)" "[ ! -e '$work/long.csv' ] && csv_whole '$work/long.csv.partial'"
finish
