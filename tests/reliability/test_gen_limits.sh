#!/usr/bin/env bash
# tests/reliability/test_gen_limits.sh COWSIM - `cowsim gen` has bounds
# (issue 21.6): a tree of 41 folders where each holds two symlinks to the
# next makes grep -R walk 2^40 paths; gen stops at --max-ops or --max-bytes
# with exit 2 and a message naming the bound, and leaves no -o file. The
# defaults (10^8 ops, 4G) are in --help.
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"

t=$work/nest
mkdir "$t"
for i in $(seq 0 40); do mkdir "$t/x$i"; echo hi >"$t/x$i/f"; done
for i in $(seq 0 39); do ln -s "../x$((i + 1))" "$t/x$i/y1"; ln -s "../x$((i + 1))" "$t/x$i/y2"; done

timeout 60 "$cowsim" gen seed-experiment --from-dir "$t" --snapshots 1 --max-ops 100000 -o "$work/n.trace" 2>"$work/err"
status=$?
check "nested symlinks with --max-ops 100000: exit 2" "[ $status = 2 ]" "status $status: $(cat "$work/err")"
check "the message names the bound" "grep -q 'would pass 100000 ops (--max-ops)' '$work/err'" "$(cat "$work/err")"
check "and no trace is left under -o's name" "[ ! -e '$work/n.trace' ]"
timeout 60 "$cowsim" gen seed-experiment --from-dir "$t" --snapshots 1 --max-bytes 1M >"$work/out" 2>"$work/err"
status=$?
bytes=$(wc -c <"$work/out")
check "with --max-bytes 1M to stdout: exit 2 naming the bound" \
  "[ $status = 2 ] && grep -q 'would pass 1048576 bytes (--max-bytes)' '$work/err'" "status $status: $(cat "$work/err")"
check "and at most 1 MiB written ($bytes bytes), whole lines" \
  "[ $bytes -le 1048576 ] && [ \"\$(tail -c 1 '$work/out' | od -An -c | tr -d ' ')\" = '\\n' ]"
"$cowsim" gen seed-experiment --help >"$work/help"
check "--help gives the default bounds" "grep -q 'max-ops.*100000000' '$work/help' && grep -q 'max-bytes.*4G' '$work/help'" \
  "$(grep max- "$work/help")"
"$cowsim" gen seed-experiment --files 50 --snapshots 1 --max-ops 0 --max-bytes 0 -o "$work/ok.trace" 2>"$work/err"
check "0 means no bound" "[ $? = 0 ] && [ -s '$work/ok.trace' ]" "$(cat "$work/err")"
"$cowsim" gen seed-experiment --files 50 --max-bytes 1.5 2>"$work/err" >/dev/null
check "--max-bytes 1.5 is refused" "[ $? = 2 ] && grep -q 'whole number' '$work/err'" "$(cat "$work/err")"
finish
