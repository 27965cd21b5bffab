#!/usr/bin/env bash
# tests/sim/test_input_checks.sh COWSIM BTRFS_REPLAY - bad input is refused
# up front with exit 2 and a message naming what is wrong, before memory,
# time or a long command is spent on it (TAP).  Needs no root: btrfs-replay's
# options are checked before it looks for root, loop devices or mkfs.btrfs.
set -u
cowsim=$(realpath "$1")
replay=$(realpath "$2")
. "$(dirname "$0")/../tap.sh"

refused() { # WANT_TEXT COMMAND ARGS...: exit 2 within 20 s, WANT_TEXT on stderr
  local want=$1; shift
  timeout 20 "$@" >"$work/out" 2>"$work/err"
  local status=$?
  [ $status = 2 ] && grep -qF -- "$want" "$work/err" || { echo "status $status: $(head -3 "$work/err")"; return 1; }
}

# --- gen: every count in a stated range; a tree too large for the limits is refused before it is built ---
check "gen synthetic --files -5 is refused, naming --files and its range" \
  "diag=\$(refused '--files -5: must be within 1..20000000' \"$cowsim\" gen synthetic --files -5 -o \"$work/g.trace\")" "\$diag"
check "gen seed-experiment --files 10000000000 is refused at once" \
  "diag=\$(refused '--files 10000000000: must be within 1..' \"$cowsim\" gen seed-experiment --files 10000000000 -o \"$work/g.trace\")" "\$diag"
check "gen synthetic without --files says it needs a tree" \
  "diag=\$(refused 'synthetic needs a tree: --files N' \"$cowsim\" gen synthetic -o \"$work/g.trace\")" "\$diag"
check "a tree whose copy alone passes --max-ops is refused before it is built" \
  "diag=\$(refused 'past --max-ops 1000' \"$cowsim\" gen synthetic --files 20000000 --max-ops 1000 -o \"$work/g.trace\")" "\$diag"
check "and a scenario file's tree.files is held to the same range" \
  "diag=\$(refused 'expected a whole number from 1 to 20000000' \"$cowsim\" gen scenario \"$(dirname "$0")/../../workloads/scenarios/build-server.ini\" --set tree.files=30000000 -o \"$work/g.trace\")" "\$diag"
for bad in "--snapshots -1:--snapshots -1: must be within 0..100000" \
           "--greps 5000:--greps 5000: must be within 0..1000" \
           "--files-per-dir 0:--files-per-dir 0: must be within 1..1000000"; do
  args=${bad%%:*} want=${bad#*:}
  check "gen seed-experiment $args is refused, naming the option and its range" \
    "diag=\$(refused '$want' \"$cowsim\" gen seed-experiment --files 10 $args -o \"$work/g.trace\")" "\$diag"
done
check "gen backup-rotation --keep 0 is refused, naming its range" \
  "diag=\$(refused '--keep 0: must be within 1..1000000' \"$cowsim\" gen backup-rotation --files 10 --keep 0)" "\$diag"
check "gen churn --appends -3 is refused, naming its range" \
  "diag=\$(refused '--appends -3: must be within 0..' \"$cowsim\" gen churn --files 10 --appends -3)" "\$diag"
check "gen mutt --check-interval 0 is refused, naming its range" \
  "diag=\$(refused '--check-interval 0: must be within 1..86400' \"$cowsim\" gen mutt --check-interval 0)" "\$diag"
check "a refused gen leaves no file" "[ ! -e \"$work/g.trace\" ] && ! ls \"$work\"/g.trace.tmp-* >/dev/null 2>&1"
"$cowsim" gen synthetic --files 50 --max-ops 1000 -o "$work/ok.trace" 2>"$work/err"
check "a tree whose copy fits --max-ops is still written" "[ $? = 0 ] && [ -s \"$work/ok.trace\" ]" "$(cat "$work/err")"

# --- record: the output is checked before the command runs; run says what --prelude is for ---
if strace -f -qq -o /dev/null true >/dev/null 2>&1; then
  mkdir -p "$work/tree" && echo needle >"$work/tree/a"
  check "record -o into a missing folder is refused before the command runs" \
    "diag=\$(refused 'cannot create' \"$cowsim\" record --root \"$work/tree\" -o \"$work/no/such/x.trace\" -- touch \"$work/ran\") && [ ! -e \"$work/ran\" ]" "\$diag"
  "$cowsim" record --root "$work/tree" -o "$work/bare.trace" -- grep -R needle "$work/tree" >/dev/null 2>&1
  check "run of a trace recorded without --prelude points at --prelude" \
    "diag=\$(refused 'recorded without --prelude' \"$cowsim\" run \"$work/bare.trace\" -q -o \"$work/bare.csv\")" "\$diag"
  "$cowsim" record --root "$work/tree" --prelude -o "$work/full.trace" -- grep -R needle "$work/tree" >/dev/null 2>&1
  "$cowsim" run "$work/full.trace" -q -o "$work/full.csv" 2>"$work/err"
  check "and with --prelude the recording replays" "[ $? = 0 ]" "$(cat "$work/err")"
else
  skip "record checks its output before the command runs" "strace cannot trace here"
fi
"$cowsim" gen synthetic --files 20 -o "$work/s.trace"
printf 'cowsim-trace 1\nunlink /nothing\n' >"$work/unlink.trace"
"$cowsim" run "$work/unlink.trace" -q -o "$work/u.csv" >/dev/null 2>"$work/err"
check "a missing path in a trace not recorded gets no --prelude hint" \
  "[ $? = 2 ] && grep -q 'No such file' \"$work/err\" && ! grep -q prelude \"$work/err\"" "$(cat "$work/err")"

# --- report: a malformed CSV is exit 2 with file, line and field -------------------------
mkdir -p "$work/short" "$work/long"
printf 'mount,policy\nrelatime\n' >"$work/short/compare.csv"
printf 'mount,policy\nrelatime,inline,extra\n' >"$work/long/compare.csv"
check "report refuses a row shorter than its header, naming file, line and field" \
  "diag=\$(refused 'compare.csv:2: field 2 (policy): missing' \"$cowsim\" report \"$work/short\" -o \"$work/p.html\")" "\$diag"
check "report refuses a row longer than its header" \
  "diag=\$(refused 'compare.csv:2: field 3: no such column' \"$cowsim\" report \"$work/long\" -o \"$work/p.html\")" "\$diag"

# --- btrfs-replay: cowsim's sizes; a bad mount option is bad input (2), not "not possible here" (77) ---
check "btrfs-replay -n 16K is accepted (the error is about the missing trace, not -n)" \
  "diag=\$(refused 'nosuch.trace' \"$replay\" \"$work/nosuch.trace\" -n 16K -m relatime) && ! grep -q nodesize \"$work/err\"" "\$diag"
check "btrfs-replay -n 3K is refused, naming --nodesize" \
  "diag=\$(refused '--nodesize 3K: must be a power of two' \"$replay\" \"$work/s.trace\" -n 3K)" "\$diag"
check "btrfs-replay -n 16x is refused as not a size" \
  "diag=\$(refused \"--nodesize '16x': not a size\" \"$replay\" \"$work/s.trace\" -n 16x)" "\$diag"
check "btrfs-replay -m foo is exit 2 naming the option, before it looks for root" \
  "diag=\$(refused \"unknown mount option 'foo'\" \"$replay\" \"$work/s.trace\" -m foo -o /dev/null)" "\$diag"
check "btrfs-replay -m noatime,compress=zstd,bogus=1 names the bad word" \
  "diag=\$(refused \"unknown mount option 'bogus'\" \"$replay\" \"$work/s.trace\" -m noatime,compress=zstd,bogus=1)" "\$diag"
check "btrfs-replay -s 100M is refused as too small" \
  "diag=\$(refused '--size 100M: must be at least 128M' \"$replay\" \"$work/s.trace\" -s 100M)" "\$diag"
tap_done
