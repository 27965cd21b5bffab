#!/usr/bin/env bash
# tests/strace/compare_grep.sh COWSIM DIR WORK - the recorded `grep -R x DIR`
# against `cowsim gen seed-experiment --from-dir DIR --snapshots 1`.
#
# 1. seed-experiment --snapshots 1 --grep trunk --greps 1 (the generator's grep
#    of /tree, after one snapshot of /), replayed;  run first, because the real
#    grep below moves DIR's atimes;
# 2. cowsim record --root DIR --prelude -- grep -R x DIR, with the same
#    snapshot spliced in after the prelude's "mark after_copy" and the final
#    "mark after_record" named after_grep, replayed;
# 3. for both: atime updates and metadata growth from after_snapshots to
#    after_grep (the default mount, relatime).
# Prints one line "name atime_updates metadata_growth_bytes" per run and
# "ratio R" (recorded growth / generated growth).  Exit 1 when anything fails.
set -eu
cowsim=$1 dir=$2 work=$3
mkdir -p "$work"
col() { head -1 "$1" | tr , '\n' | grep -n "^$2\$" | cut -d: -f1; }
delta() { # CSV COLUMN: value at after_grep minus value at after_snapshots
  local c; c=$(col "$1" "$2")
  awk -F, -v c="$c" '$3 == "after_snapshots" {a = $c} $3 == "after_grep" {g = $c} END {print g - a}' "$1"
}
"$cowsim" gen seed-experiment --from-dir "$dir" --snapshots 1 --grep trunk --greps 1 -o "$work/seed.trace"
"$cowsim" run "$work/seed.trace" --csv "$work/seed.csv" --quiet >/dev/null
"$cowsim" record --root "$dir" --prelude --out "$work/grep.trace" -- grep -R x "$dir" >/dev/null 2>"$work/record.err" ||
  { cat "$work/record.err" >&2; exit 1; }
awk '{print} /^mark after_copy$/ {print "snapshot / /snap1"; print "sync"; print "mark after_snapshots"}' \
  "$work/grep.trace" | sed 's/^mark after_record$/mark after_grep/' >"$work/recorded.trace"
"$cowsim" run "$work/recorded.trace" --csv "$work/recorded.csv" --quiet >/dev/null
for run in seed recorded; do
  echo "$run $(delta "$work/$run.csv" atime_updates) $(delta "$work/$run.csv" metadata_used)"
done
awk -v a="$(delta "$work/recorded.csv" metadata_used)" -v b="$(delta "$work/seed.csv" metadata_used)" \
  'BEGIN {printf "ratio %.4f\n", (b ? a / b : 0)}'
