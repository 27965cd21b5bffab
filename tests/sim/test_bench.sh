#!/usr/bin/env bash
# tests/sim/test_bench.sh COWSIM - `cowsim bench` prints what issue 6 asks (TAP).
#
# Small sizes only: the figures themselves are measured by hand
# (docs/performance.md); this checks that every one is printed, that the
# model's numbers in them (metadata before and after) do not depend on the
# run, and that bad arguments are exit 2.
set -u
cowsim=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && echo "# $2"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1" "${3:-}"; fi; }

"$cowsim" bench --sizes 300,3000 --snapshots 2 >"$work/a" 2>"$work/err"
status=$?
check "bench of two sizes exits 0" "[ $status = 0 ]" "$(cat "$work/err")"
for column in populate/s atime-excl/s atime-unshr/s ns/unshr B/item B/block B/blk-aft 'total s' 'RSS MiB'; do
  check "bench prints the column $column" "head -1 \"$work/a\" | grep -qF '$column'"
done
check "one row per size" "[ \$(grep -cE '^ +(300|3000) +2 ' \"$work/a\") = 2 ]"
check "peak RSS, then the heap's pages, are printed last" \
  "tail -2 \"$work/a\" | head -1 | grep -q '^peak RSS [0-9.]* MiB$' && tail -1 \"$work/a\" | grep -q '^heap pages: '"
"$cowsim" bench --sizes 300,3000 --snapshots 2 >"$work/b" 2>/dev/null
meta() { awk 'NR > 1 && NF > 5 {print $1, $2, $(NF-3), $(NF-2)}' "$1"; }
check "metadata before and after are the same in a second run" "[ \"\$(meta \"$work/a\")\" = \"\$(meta \"$work/b\")\" ]" \
  "$(meta "$work/a") / $(meta "$work/b")"

"$cowsim" bench --year 200 --keep 5 >"$work/year" 2>"$work/err"
status=$?
check "a year of daily snapshots exits 0" "[ $status = 0 ]" "$(cat "$work/err")"
check "the year line names days, reads, total and peak RSS" \
  "grep -qE '^year: 200 files, 365 days, keep 5: .*days .*reads.*total .* s, metadata .*peak RSS' \"$work/year\""

"$cowsim" bench --big-files 16 >"$work/big" 2>"$work/err"
status=$?
check "the cost-against-size scenario exits 0" "[ $status = 0 ]" "$(cat "$work/err")"
check "it gives both lines with three points and an exponent" \
  "[ \$(grep -cE '^(files of 1 GiB|one file of N GiB) +4: .* 8: .* 16: .*exponent [0-9.-]+$' \"$work/big\") = 2 ]" \
  "$(cat "$work/big")"
"$cowsim" bench --big-files 40000 >/dev/null 2>"$work/err"
check "--big-files beyond a 64 TiB device is exit 2 with a message" "[ $? = 2 ] && grep -q big-files \"$work/err\""

"$cowsim" bench --snapshot-curve 200 >"$work/curve" 2>"$work/err"
status=$?
check "the memory-against-snapshots curve exits 0" "[ $status = 0 ]" "$(cat "$work/err")"
check "it prints a row for 0, 10, 30 and 100 snapshots with reads, heap, B/read and B/more" \
  "[ \"\$(awk '\$1 ~ /^[0-9]+\$/ && NF == 10 {print \$1, \$2}' \"$work/curve\" | tr '\n' ' ')\" = '0 200 10 2400 30 6400 100 20400 ' ] &&
   head -2 \"$work/curve\" | grep -qF 'B/more'" "$(cat "$work/curve")"
check "it ends with the linearity ratio, a number" \
  "grep -qE '^linearity: .*: [0-9]+\.[0-9]{2} \(1.00 is linear\)\$' \"$work/curve\"" "$(cat "$work/curve")"
"$cowsim" bench --snapshot-curve 20000000 >/dev/null 2>"$work/err"
check "--snapshot-curve beyond 10^7 is exit 2 with a message" "[ $? = 2 ] && grep -q snapshot-curve \"$work/err\""

"$cowsim" bench --sizes 0 >/dev/null 2>"$work/err"
check "--sizes 0 is exit 2" "[ $? = 2 ]"
"$cowsim" bench --year 10 --keep 0 >/dev/null 2>"$work/err"
check "--keep 0 is exit 2 with a message" "[ $? = 2 ] && grep -q keep \"$work/err\""

echo "1..$n"
[ $failed = 0 ]
