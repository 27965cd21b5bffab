#!/usr/bin/env bash
# tests/sim/test_first_enospc.sh COWSIM - when a run runs out of space (issue
# 17.3): the run summary names the trace line and simulated time of the first
# ENOSPC and of the first lost atime update, and --find-min-device finds by
# bisection the smallest device on which a run never meets ENOSPC (TAP).
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"

# event_line TEXT WHAT: the trace line of "WHAT: trace line N (op), ..." in TEXT.
event_line() { sed -n "s/^$2: trace line \\([0-9]*\\) .*/\\1/p" <<<"$1" | head -1; }
event_op() { sed -n "s/^$2: trace line [0-9]* (\\([a-z-]*\\)), op_index \\([0-9]*\\), time_s \\([0-9.]*\\) .*/\\1 \\2 \\3/p" <<<"$1" | head -1; }

# --- the summary's first ENOSPC and first lost atime update ------------------------
# The synthetic seed experiment of tests/sim/test_compare.sh (20 snapshots) on
# 900 MiB at 64 KiB nodes: the copy fits, the grep's unsharing does not, and
# the flusher's commits cannot make room for every update.
"$cowsim" gen seed-experiment --files 25000 --max-file-size 8192 --snapshots 20 -o "$work/big.trace" 2>/dev/null
out=$("$cowsim" run "$work/big.trace" --nodesize 64K --device-size 900M --every 100 --csv "$work/big.csv" 2>/dev/null)
status=$?
check "a run whose reads run out of space exits 0" "[ $status = 0 ]"
note "$(grep '^first ' <<<"$out")"
lost=$(event_line "$out" "first lost atime update")
check "the summary names the first lost atime update's trace line, an access (read or readdir)" \
  "[ -n \"$lost\" ] && sed -n \"${lost}p\" \"$work/big.trace\" | grep -Eq '^read(dir)? '" "$(grep '^first' <<<"$out")"
read -r op index time_s <<<"$(event_op "$out" "first lost atime update")"
# The CSV (a row every 100 ops) brackets it: the last row without a failed read
# is before that op, the first with one at or after it.
bracket=$(awk -F, -v i="$index" 'NR == 1 {for (c = 1; c <= NF; c++) h[$c] = c; next}
  $h["atime_lost"] == 0 {before = $h["op_index"]; tb = $h["time_s"]}
  $h["atime_lost"] > 0 && !after {after = $h["op_index"]; ta = $h["time_s"]}
  END {print (before < i && after >= i) ? "ok" : "bad", tb, ta}' "$work/big.csv")
check "the CSV's rows bracket that op: no lost atime update before it, one from it on" "[ \"\${bracket%% *}\" = ok ]" \
  "op_index $index time_s $time_s; rows: $bracket"
check "its simulated time lies between those rows' time_s" \
  "awk -v t=\"$time_s\" -v b=\"\$(cut -d' ' -f2 <<<\"$bracket\")\" -v a=\"\$(cut -d' ' -f3 <<<\"$bracket\")\" 'BEGIN {exit !(t >= b && t <= a)}'" \
  "$time_s in $bracket"
first=$(event_line "$out" 'first ENOSPC')
check "the first ENOSPC is an access at or before it (the copy and the snapshots fitted; the flusher's commits may make room for the first ones)" \
  "[ -n \"$first\" ] && [ \"$first\" -le \"$lost\" ] && sed -n \"${first}p\" \"$work/big.trace\" | grep -Eq '^read(dir)? '"
# The 2012 what-if: the update's read fails instead; the first failed read is
# the first lost update.
out=$("$cowsim" run "$work/big.trace" --nodesize 64K --device-size 900M --enospc-read fail --every 100 \
  --csv "$work/fail.csv" 2>/dev/null)
read -r op index time_s <<<"$(event_op "$out" "first lost atime update")"
bracket=$(awk -F, -v i="$index" 'NR == 1 {for (c = 1; c <= NF; c++) h[$c] = c; next}
  $h["failed_reads"] == 0 {before = $h["op_index"]} $h["failed_reads"] > 0 && !after {after = $h["op_index"]}
  END {print (i != "" && before < i && after >= i) ? "ok" : "bad", before, after}' "$work/fail.csv")
check "--enospc-read fail: the first lost update is the first failed read, an access" \
  "[ \"\${bracket%% *}\" = ok ] && { [ \"$op\" = read ] || [ \"$op\" = readdir ]; }" "op $op op_index $index; rows: $bracket"
out=$("$cowsim" run "$work/big.trace" --nodesize 64K --device-size 4G 2>/dev/null)
check "a run that never runs out names neither" "! grep -q '^first ' <<<\"\$out\"" "$out"

# --- --find-min-device on a small trace --------------------------------------------
"$cowsim" gen seed-experiment --files 300 --snapshots 3 -o "$work/small.trace" 2>/dev/null
out=$("$cowsim" run "$work/small.trace" -m strictatime --device-size 2G --find-min-device 2>"$work/err")
status=$?
check "--find-min-device exits 0" "[ $status = 0 ]" "$(cat "$work/err")"
note "$out"
min=$(sed -n 's/^smallest device on which the run never meets ENOSPC: \([0-9]*\) bytes.*/\1/p' <<<"$out")
check "it names a size in whole MiB, under --device-size" \
  "[ -n \"$min\" ] && [ \$((min % 1048576)) = 0 ] && [ \"$min\" -lt $((2 << 30)) ]" "$out"
check "it replayed at most log2(2 GiB / 1 MiB) + 1 times" \
  "grep -Eq '; (1[0-2]|[1-9]) replays' <<<\"\$out\"" "$out"
at_min=$("$cowsim" run "$work/small.trace" -m strictatime --device-size "$min" 2>&1)
status=$?
check "on that size the run finishes and meets no ENOSPC" "[ $status = 0 ] && ! grep -q '^first ENOSPC' <<<\"\$at_min\"" \
  "$(tail -3 <<<"$at_min")"
below=$("$cowsim" run "$work/small.trace" -m strictatime --device-size $((min - 1048576)) 2>&1)
check "1 MiB less meets ENOSPC, at the trace line the search named" \
  "[ -n \"\$(event_line \"\$below\" 'first ENOSPC')\" ] && grep -q \"it does: first ENOSPC: trace line \$(event_line \"\$below\" 'first ENOSPC') \" <<<\"\$out\"" \
  "$(grep 'first ENOSPC' <<<"$below"; grep 'it does' <<<"$out")"
"$cowsim" run "$work/small.trace" -m strictatime --device-size "$((min - 1048576))" --find-min-device >/dev/null 2>"$work/err"
status=$?
check "a run that already meets ENOSPC on --device-size is refused, exit 2" \
  "[ $status = 2 ] && grep -q 'meets ENOSPC on the --device-size' \"$work/err\"" "$(cat "$work/err")"
"$cowsim" run "$work/small.trace" --find-min-device -o "$work/x.csv" >/dev/null 2>"$work/err"
status=$?
check "--find-min-device with --output is refused, exit 2" "[ $status = 2 ] && [ ! -e \"$work/x.csv\" ]" "$(cat "$work/err")"
tap_done
