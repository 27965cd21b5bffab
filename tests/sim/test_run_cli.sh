#!/usr/bin/env bash
# tests/sim/test_run_cli.sh COWSIM - `cowsim run` as a user meets it (TAP).
#
# The contract of issue 3: gen seed-experiment | run gives rows labelled
# after_copy, after_snapshots, after_grep, after_grep2 with a metadata_used
# column; a malformed trace gets FILE:LINE and exit 2, and writes no CSV
# (sim/cmd_run.c RUN1; the rows before the bad line were kept before).
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"

# --- the contract -----------------------------------------------------------
"$cowsim" gen seed-experiment --files 400 --seed 7 --snapshots 2 -o "$work/seed.trace"
"$cowsim" run "$work/seed.trace" --nodesize 16384 --mount relatime --csv "$work/out.csv" >"$work/summary" 2>&1
status=$?
check "seed-experiment run exits 0" "[ $status = 0 ]" "$(cat "$work/summary")"
# colnum NAME FILE: the 1-based position of column NAME in FILE's header
colnum() { head -1 "$2" | tr , '\n' | grep -n "^$1\$" | cut -d: -f1; }
lab=$(colnum label "$work/out.csv")
labels=$(awk -F, -v l="$lab" 'NR > 1 && $l != "" {printf "%s ", $l}' "$work/out.csv")
check "rows are labelled after_copy after_snapshots after_grep after_grep2" \
  "[ \"$labels\" = 'after_copy after_snapshots after_grep after_grep2 ' ]" "labels: $labels"
col=$(colnum metadata_used "$work/out.csv")
check "the CSV has a metadata_used column" "[ -n \"$col\" ]"
grew=$(awk -F, -v c="$col" -v l="$lab" '$l == "after_copy" {a = $c} $l == "after_grep" {g = $c} END {print (g > 1.5 * a)}' "$work/out.csv")
check "two rw snapshots and a grep grow metadata by more than half" "[ \"$grew\" = 1 ]"
check "the summary table names the marks" "grep -q after_grep2 \"$work/summary\""
identity=$(python3 -c 'import csv, sys
print(sorted({"|".join(r[c] for c in ("design", "mount", "policy", "nodesize", "device_size"))
              for r in csv.DictReader(open(sys.argv[1]))}))' "$work/out.csv")
check "every row names its design, mount, policy, nodesize and device size" \
  "[ \"$identity\" = \"['btrfs|relatime|inline|16384|4294967296']\" ]" "$identity"
# elapsed_s is time_s less the first clock op's time (the trace's 'clock @1338422400')
first_clock=$(sed -n 's/^clock @\([0-9]*\)$/\1/p' "$work/seed.trace" | head -1)
elapsed_ok=$(python3 -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(all(abs(float(r["elapsed_s"]) - (float(r["time_s"]) - float(sys.argv[2]))) < 1e-6 for r in rows)
      and float(rows[-1]["elapsed_s"]) > 0)' "$work/out.csv" "$first_clock")
check "elapsed_s counts from the trace's first clock (clock @$first_clock)" "[ \"$elapsed_ok\" = True ]" "$elapsed_ok"
"$cowsim" run "$work/seed.trace" --nodesize 16384 --mount relatime --csv "$work/again.csv" >/dev/null 2>&1
check "the same trace and options give the same CSV bytes" "cmp -s \"$work/out.csv\" \"$work/again.csv\""
"$cowsim" run "$work/seed.trace" --mount noatime --csv "$work/noatime.csv" >/dev/null 2>&1
flat=$(awk -F, -v c="$col" -v l="$lab" '$l == "after_snapshots" {a = $c} $l == "after_grep2" {g = $c} END {print (g <= a * 1.02)}' "$work/noatime.csv")
check "under noatime the greps leave metadata within 2%" "[ \"$flat\" = 1 ]"
"$cowsim" run "$work/seed.trace" --paranoid --quiet >/dev/null 2>&1
check "--paranoid runs every checker after every op and passes" "[ $? = 0 ]"

# --- designs and policies -------------------------------------------------------
final() { awk -F, -v c="$col" 'END {print $c}' "$1"; }
"$cowsim" run "$work/seed.trace" --design keyed --paranoid --csv "$work/keyed.csv" --quiet >/dev/null 2>&1
check "the keyed design passes every checker after every op" "[ $? = 0 ]"
check "the keyed design unshares less than the btrfs design after the greps" \
  "[ $(final "$work/keyed.csv") -lt $(final "$work/out.csv") ]"
for policy in side-table threshold:5% snapshot-aware; do
  "$cowsim" run "$work/seed.trace" --policy "$policy" --paranoid --csv "$work/policy.csv" --quiet >/dev/null 2>&1
  check "policy $policy passes every checker after every op" "[ $? = 0 ]"
done
"$cowsim" run "$work/seed.trace" --policy side-table --csv "$work/side.csv" --quiet >/dev/null 2>&1
check "side-table grows metadata less than inline" "[ $(final "$work/side.csv") -lt $(final "$work/out.csv") ]"
"$cowsim" run "$work/seed.trace" --mkfs-atime noatime --csv "$work/mkfs.csv" --quiet >/dev/null 2>&1
check "a persistent noatime default applies when --mount names no mode" \
  "[ \"\$(awk -F, -v c=$(colnum atime_updates "$work/out.csv") 'NR > 1 {print \$c}' \"$work/mkfs.csv\" | sort -u)\" = 0 ]"
"$cowsim" run "$work/seed.trace" 2>"$work/warn" >/dev/null
check "a snapshot prints the unshare warning" "grep -q 'would unshare about' \"$work/warn\""

"$cowsim" gen backup-rotation --files 200 --days 30 --keep 7 -o "$work/rotation.trace"
"$cowsim" run "$work/rotation.trace" 2>"$work/warn" >/dev/null
check "30 snapshots: the first warning in full, then one line counting the other 29" \
  "[ \$(grep -c 'would unshare about' '$work/warn') = 1 ] && grep -q '^cowsim: warning: 29 more snapshots gave the same warning' '$work/warn'" \
  "$(cat "$work/warn")"

# --- a device too small: the error names a --device-size that holds the trace ---
printf 'cowsim-trace 1\nclock @1338422400\nmkdir /d\ncreate /d/big size=1G\nmark after_copy\n' >"$work/big.trace"
"$cowsim" run "$work/big.trace" --device-size 700M --quiet 2>"$work/err"
status=$?
hint=$(sed -n 's/^cowsim run: hint: --device-size \([0-9]*\) .*/\1/p' "$work/err")
check "ENOSPC in a copy exits 2 and names a --device-size that holds it" \
  "[ $status = 2 ] && [ -n '$hint' ] && \"$cowsim\" run \"$work/big.trace\" --device-size '$hint' --quiet" \
  "status $status: $(cat "$work/err")"

# --- bad arguments ------------------------------------------------------------
for args in "--nodesize 3000" "--nodesize 128K" "--device-size 1M" "--mount fastatime" "--policy nope" \
            "--metadata raid7" "--every -1" "--max-inline 9000" "--design zfs" "--policy threshold:0%" \
            "--design keyed --policy side-table" "--mkfs-atime sometimes"; do
  # shellcheck disable=SC2086
  "$cowsim" run "$work/seed.trace" $args --quiet >/dev/null 2>"$work/err"
  status=$?
  check "run $args exits 2 with a message" "[ $status = 2 ] && [ -s \"$work/err\" ]" "status $status: $(cat "$work/err")"
done
"$cowsim" run "$work/missing.trace" --quiet 2>"$work/err"
check "a missing trace exits 2 and names the file" "[ $? = 2 ] && grep -q missing.trace \"$work/err\""

# --- malformed traces: FILE:LINE, exit 2, earlier rows intact ----------------------
prefix='cowsim-trace 1
clock @1354320000
mkdir /d
create /d/f size=10
sync
mark first'
bad_lines=(
  'frobnicate /d'                      # unknown op
  'create /d/g size=12x'               # bad number
  'create /d/g'                        # missing size
  'create d/g size=1'                  # relative path
  'read "/d/f'                         # unterminated quote
  'create /d/g size=1 size=2'          # duplicate key
  'create /d/g size=1 colour=red'      # unknown key
  'write /d/f 1'                       # missing length
  'write /d/f -1 5'                    # negative offset
  'clock +5 parsecs'                   # bad duration
  'clock tomorrow'                     # bad clock
  'snapshot / /s maybe'                # bad flag
  'mark'                               # missing label
  'sync now'                           # trailing garbage
  'create /d/g size=99999999999999999999999' # overflow
  'mkdir /d/x mode=99999'              # bad mode
  'read "/d/\q"'                       # bad escape
  'create /d/g size=1 atime=yesterday' # bad time
  'read /d/missing'                    # no such file (model refuses)
  'mkdir /d'                           # exists already
  'rmdir /d'                           # not empty
  'unlink /d'                          # is a directory
  'clock @1000'                        # clock backwards
  'remount noatime,fast'               # unknown mount option
  'delete-snapshot /d'                 # not a subvolume
)
i=0
for bad in "${bad_lines[@]}"; do
  i=$((i + 1))
  t="$work/bad$i.trace"
  printf '%s\n%s\nmark never\n' "$prefix" "$bad" >"$t"
  "$cowsim" run "$t" --csv "$work/bad$i.csv" --quiet 2>"$work/err"
  status=$?
  # RUN1: bad input writes nothing (this checked the earlier row in the CSV
  # before; a failed run no longer replaces the CSV's old contents)
  check "malformed line '$bad' gives exit 2 at $t:7 and creates no CSV, no .partial" \
    "[ $status = 2 ] && grep -q \"bad$i.trace:7\" \"$work/err\" && [ ! -e \"$work/bad$i.csv\" ] &&
     [ ! -e \"$work/bad$i.csv.partial\" ]" "status $status: $(cat "$work/err")"
done

echo "1..$n"
[ $failed = 0 ]
