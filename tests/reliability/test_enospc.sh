#!/usr/bin/env bash
# tests/reliability/test_enospc.sh COWSIM - a run that fills the modeled
# device (issue 7.3).
#
# The run stops with exit 2 and a message naming the trace file and line and
# saying that the modeled device is full; the CSV rows before that line are
# whole and byte-identical to a run of the trace cut just before the line.
# stderr gives the ops done (and a --device-size that holds them). Exit 1 is what --help and
# docs/reliability.md say; the keyed design stops the same way. With
# --keep-going the refused op is counted and the run goes on (exit 0).
# A CSV that cannot be written (/dev/full) is exit 2 with a message too; a CSV
# whose disk fills mid-run is the run failing, exit 1 (CLI2, sim/cli.h).
# The rows of a run stopped by ENOSPC go to CSV.partial, CSV's own name as it
# was (RUN1, sim/cmd_run.c; they were under CSV's name before).
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"

head='cowsim-trace 1
clock @1354320000
mkdir /d
create /d/small size=1M
sync
mark before
snapshot / /s
clock +1s
read /d/small
mark after_snapshot'
printf '%s\ncreate /d/big size=1G\ncreate /d/later size=1\nmark never\n' "$head" >"$work/fill.trace"
printf '%s\n' "$head" >"$work/prefix.trace"
opts=(--device-size 700M --every 1 --quiet)
"$cowsim" run "$work/fill.trace" "${opts[@]}" --csv "$work/fill.csv" 2>"$work/err"
status=$?
check "a create of 1G on a 700M device exits 2" "[ $status = 2 ]" "status $status: $(cat "$work/err")"
check "the message names the trace line of the create (fill.trace:11)" \
  "grep -q 'fill.trace:11: create /d/big: no space left on the modeled device' '$work/err'" "$(cat "$work/err")"
check "fill.csv is not created, fill.csv.partial holds whole rows only" \
  "[ ! -e '$work/fill.csv' ] && csv_whole '$work/fill.csv.partial'"
check "stderr says where the run stopped, that the rows are complete and where (then the --device-size hint)" \
  "tail -n 2 '$work/err' | head -n 1 | grep -q '^cowsim run: stopped after 10 ops; the rows written so far are complete; .* the rows are in .*fill.csv.partial.\$'" \
  "$(cat "$work/err")"
"$cowsim" run "$work/prefix.trace" "${opts[@]}" --csv "$work/prefix.csv" 2>/dev/null
check "every row before the full device equals a run of the trace cut there" \
  "cmp -s '$work/fill.csv.partial' '$work/prefix.csv'" "$(diff "$work/fill.csv.partial" "$work/prefix.csv" | head -5)"
check "both marks before it are in the CSV" \
  "[ \"\$(awk -F, '\$3 != \"\" && NR > 1 {printf \"%s \", \$3}' '$work/fill.csv.partial')\" = 'before after_snapshot ' ]"

# The status is the documented one: --help and docs/reliability.md give 2 for a
# full device.
docs=$(dirname "$0")/../../docs/reliability.md
check "cowsim run --help documents exit 2 for a full device" \
  "\"$cowsim\" run --help | tr '\\n' ' ' | grep -Eq '2 +bad arguments, a malformed trace, the modeled device full'"
check "docs/reliability.md documents exit 2 for a full device (ENOSPC)" \
  "grep -Eq '^\\| 2 \\| the modeled device full \\(ENOSPC\\)' '$docs'"

# The keyed design stops the same way, at the same line, with the same rows.
"$cowsim" run "$work/fill.trace" "${opts[@]}" --design keyed --csv "$work/kfill.csv" 2>"$work/err"
status=$?
check "keyed design: the same create exits 2 naming fill.trace:11" \
  "[ $status = 2 ] && grep -q 'fill.trace:11: create /d/big: no space left on the modeled device' '$work/err'" \
  "status $status: $(cat "$work/err")"
"$cowsim" run "$work/prefix.trace" "${opts[@]}" --design keyed --csv "$work/kprefix.csv" 2>/dev/null
check "keyed design: every row before the full device equals a run of the trace cut there" \
  "csv_whole '$work/kfill.csv.partial' && cmp -s '$work/kfill.csv.partial' '$work/kprefix.csv'"

printf '%s\ncreate /d/f size=1\nwrite /d/f 0 800M\nmark never\n' "$head" >"$work/write.trace"
"$cowsim" run "$work/write.trace" "${opts[@]}" --csv "$work/write.csv" 2>"$work/err"
status=$?
check "a write of 800M exits 2 naming write.trace:12" \
  "[ $status = 2 ] && grep -q 'write.trace:12: write /d/f: no space left' '$work/err'" "status $status: $(cat "$work/err")"
check "the 10 rows before the write are intact, in write.csv.partial" \
  "csv_whole '$work/write.csv.partial' && [ \$(wc -l <'$work/write.csv.partial') = 11 ]"

"$cowsim" run "$work/fill.trace" "${opts[@]}" --keep-going --csv "$work/keep.csv" 2>"$work/err"
status=$?
check "with --keep-going the refused create is counted and the run ends (exit 0)" "[ $status = 0 ]" \
  "status $status: $(cat "$work/err")"
check "with --keep-going the mark after the full device is written" "grep -q ',never,' '$work/keep.csv'"

"$cowsim" run "$work/prefix.trace" --quiet --csv /dev/full 2>"$work/err"
status=$?
check "a CSV that cannot be written at all (/dev/full) is a bad argument: exit 2 naming it" \
  "[ $status = 2 ] && grep -q /dev/full '$work/err'" "status $status: $(cat "$work/err")"
# A disk that fills during the run: RLIMIT_FSIZE of 1 KiB (SIGXFSZ ignored, so
# write(2) fails with EFBIG) stops the CSV after a few rows.
(trap '' XFSZ; ulimit -f 1; exec "$cowsim" run "$work/prefix.trace" "${opts[@]}" --csv "$work/limited.csv") \
  2>"$work/err"
status=$?
check "a CSV whose disk fills mid-run is the run failing: exit 1 with a message" "[ $status = 1 ] && [ -s '$work/err' ]" \
  "status $status: $(cat "$work/err")"
check "the CSV cut by the full disk ends with a whole row, in limited.csv.partial" \
  "[ ! -e '$work/limited.csv' ] && csv_whole '$work/limited.csv.partial'"
check "the rows it kept equal the first rows of the full CSV" \
  "cmp -s '$work/limited.csv.partial' <(head -n \$(wc -l <'$work/limited.csv.partial') '$work/prefix.csv')"
# Output on a full disk: the summary table on stdout and a trace from gen.
"$cowsim" run "$work/prefix.trace" >/dev/full 2>"$work/err"
status=$?
check "cowsim run whose stdout is a full disk exits 2 and says so" \
  "[ $status = 2 ] && grep -q 'cannot write standard output' '$work/err'" "status $status: $(cat "$work/err")"
"$cowsim" gen seed-experiment --files 50 --snapshots 1 >/dev/full 2>"$work/err"
status=$?
check "cowsim gen whose stdout is a full disk exits 2 and says so" "[ $status = 2 ] && [ -s '$work/err' ]" \
  "status $status: $(cat "$work/err")"
# gen -o writes a regular file through a temporary file renamed onto it; a
# FIFO (or a device) cannot be replaced and is written in place.
mkfifo "$work/fifo"
cat "$work/fifo" >"$work/from-fifo" &
reader=$!
"$cowsim" gen seed-experiment --files 50 --snapshots 1 -o "$work/fifo" 2>"$work/err"
status=$?
wait $reader
"$cowsim" gen seed-experiment --files 50 --snapshots 1 -o "$work/regular.trace"
check "gen -o FIFO writes through the FIFO and leaves it a FIFO" \
  "[ $status = 0 ] && [ -p '$work/fifo' ] && cmp -s '$work/from-fifo' '$work/regular.trace'" \
  "status $status: $(cat "$work/err")"
check "gen -o leaves no temporary file behind" "[ -z \"\$(ls '$work' | grep tmp-)\" ]" "$(ls "$work")"
finish
