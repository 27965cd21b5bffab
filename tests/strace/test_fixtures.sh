#!/usr/bin/env bash
# tests/strace/test_fixtures.sh COWSIM RECORDED_DIR COMPARE_SCRIPT - recorded
# traces and the strace commands as a user meets them (TAP).
#
# 1. every fixture in workloads/recorded/ replays with `cowsim run` and ends
#    with the after_record row;
# 2. a malformed log line is named by the log's line number: skipped and
#    counted by default, exit 2 with --strict;
# 3. --prelude is exactly `cowsim gen from-dir ROOT`;
# 4. `cowsim record` of grep -R on a real tree made here (565 entries: 546
#    files, 17 directories, 2 symlinks) gives the atime updates (equal, one
#    per entry) and the metadata growth (within 2%, and at least 8 leaves so
#    that 2% means something) of `gen seed-experiment`, through
#    compare_grep.sh; the figures are printed as TAP comments (skipped
#    without ptrace).
set -u
. "$(dirname "$0")/../tap.sh"
cowsim=$1 recorded=$2 compare=$3

# --- 1. the fixtures replay --------------------------------------------------------
for trace in "$recorded"/*.trace; do
  name=$(basename "$trace" .trace)
  "$cowsim" run "$trace" --csv "$work/$name.csv" --paranoid --quiet >"$work/$name.out" 2>&1
  status=$?
  check "fixture $name replays (cowsim run --paranoid exits 0)" "[ $status = 0 ]" "$(head -5 "$work/$name.out")"
  check "fixture $name ends with the after_record row" "grep -q ',after_record,' \"$work/$name.csv\""
  check "fixture $name names its command in workloads/recorded/README.md" \
    "grep -q \"^- \\\`$name.trace\\\`\" \"$recorded/README.md\""
done

# --- 2. malformed lines ---------------------------------------------------------------
mkdir -p "$work/root/a" && echo hello >"$work/root/a/x"
root=$(cd "$work/root" && pwd -P)
cat >"$work/bad.log" <<LOG
100  1338422400.000001 openat(AT_FDCWD, "$root/a/x", O_RDONLY) = 3
100  1338422400.000002 read(3, "hello\n", 4096) = 6
100  1338422400.000003 read(3, "hello\n", 4096
100  1338422400.000004 close(3) = 0
garbage here
100  1338422400.000005 newfstatat(AT_FDCWD, "$root/a", {st_mode=S_IFDIR|0755, ...}, 0) = 0
LOG
"$cowsim" gen from-strace "$work/bad.log" --root "$root" -o "$work/bad.trace" 2>"$work/bad.err"
status=$?
check "a malformed line is skipped: exit 0" "[ $status = 0 ]" "$(cat "$work/bad.err")"
check "the skipped line is named by its line number in the log" "grep -q 'bad.log:3: ' \"$work/bad.err\""
check "the second malformed line too" "grep -q 'bad.log:5: ' \"$work/bad.err\""
check "the count is on stderr" "grep -q '2 malformed lines skipped, the first at line 3' \"$work/bad.err\""
check "the count is a comment in the trace" "grep -q '^# from-strace: 2 malformed lines skipped' \"$work/bad.trace\""
check "the lines around it are converted" \
  "grep -q '^read /tree/a/x\$' \"$work/bad.trace\" && grep -q '^stat /tree/a\$' \"$work/bad.trace\""
"$cowsim" gen from-strace "$work/bad.log" --root "$root" --strict -o "$work/strict.trace" 2>"$work/strict.err"
status=$?
check "--strict: a malformed line exits 2" "[ $status = 2 ]" "status $status"
check "--strict names the log's line" "grep -q 'bad.log:3: .*(--strict)' \"$work/strict.err\"" "$(cat "$work/strict.err")"
check "--strict writes no trace" "[ ! -e \"$work/strict.trace\" ]"
"$cowsim" gen from-strace "$work/nonexistent.log" --root "$root" >/dev/null 2>"$work/nolog.err"
check "a missing log exits 2 with its name" "[ $? = 2 ] && grep -q nonexistent.log \"$work/nolog.err\""
"$cowsim" gen from-strace "$work/bad.log" >/dev/null 2>&1
check "from-strace without --root exits 2" "[ $? = 2 ]"

# --- 3. the prelude -------------------------------------------------------------------
"$cowsim" gen from-strace "$work/bad.log" --root "$root" --prelude 2>/dev/null | grep -v '^#' >"$work/prelude.trace"
"$cowsim" gen from-dir "$root" | grep -v '^#' >"$work/from-dir.trace"
lines=$(wc -l <"$work/from-dir.trace")
check "--prelude starts with the lines of cowsim gen from-dir ROOT" \
  "head -n $lines \"$work/prelude.trace\" | cmp -s - \"$work/from-dir.trace\""
"$cowsim" run "$work/prelude.trace" --quiet >/dev/null 2>&1
check "prelude + converted calls replay" "[ $? = 0 ]"

# --- 4. record grep -R and compare with seed-experiment ------------------------------------
tree="$work/tree"
mkdir -p "$tree/src/lib" "$tree/doc" "$tree/empty-dir"
for i in $(seq 1 40); do printf 'line %d x\n' "$i" >"$tree/src/f$i.c"; done
for i in $(seq 1 25); do seq 1 $((i * 50)) >"$tree/src/lib/l$i.h"; done
for d in $(seq 1 12); do
  mkdir -p "$tree/pkg$d"
  for i in $(seq 1 40); do printf 'pkg %d file %d\n' "$d" "$i" >"$tree/pkg$d/m$i.txt"; done
done
: >"$tree/doc/empty"
ln -s ../src/f1.c "$tree/doc/link"
ln -s /nonexistent/target "$tree/doc/dangling"
if ! "$cowsim" record --root "$work" --out "$work/probe.trace" -- true >/dev/null 2>"$work/probe.err"; then
  skip "cowsim record grep -R: same atime updates as seed-experiment" "$(tail -1 "$work/probe.err")"
  skip "cowsim record grep -R: metadata growth within 2% of seed-experiment" "no ptrace"
else
  bash "$compare" "$cowsim" "$tree" "$work/compare" >"$work/compare.out" 2>&1
  read -r _ seed_updates seed_growth < <(awk '$1 == "seed"' "$work/compare.out")
  read -r _ rec_updates rec_growth < <(awk '$1 == "recorded"' "$work/compare.out")
  note "$(find "$tree" | wc -l) entries; atime updates: seed-experiment ${seed_updates:-?}, recorded ${rec_updates:-?};
metadata growth after_snapshots -> after_grep: seed-experiment ${seed_growth:-?} B, recorded ${rec_growth:-?} B; $(grep ratio "$work/compare.out")"
  check "cowsim record grep -R: same atime updates as seed-experiment, one per entry" \
    "[ -n '${seed_updates:-}' ] && [ '${seed_updates:-}' = '${rec_updates:-}' ] && [ '${seed_updates:-}' = \$(find '$tree' | wc -l) ]" \
    "$(cat "$work/compare.out")"
  check "cowsim record grep -R: metadata growth within 2% of seed-experiment, and at least 8 leaves" \
    "awk -v a='${rec_growth:-0}' -v b='${seed_growth:-0}' 'BEGIN {exit !(b >= 8 * 16384 && a >= 0.98 * b && a <= 1.02 * b)}'" \
    "$(cat "$work/compare.out")"
fi

tap_done
