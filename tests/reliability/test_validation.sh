#!/usr/bin/env bash
# tests/reliability/test_validation.sh COWSIM - arguments and messages
# (issue 21.5): a size that is not a whole decimal number of bytes is
# refused; an op from one path to another names both paths (a snapshot onto
# an existing path names the destination); a malformed first op still ends
# with "stopped after 0 ops"; a missing header is refused before the run
# starts (RUN1: the trace is opened before any output is created), with its
# line and no "stopped after" noise; SIGPIPE's status is in the exit-status table.
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"
docs=$(dirname "$0")/../../docs/reliability.md

printf 'cowsim-trace 1\nmkdir /d\nmark m\n' >"$work/ok.trace"
for bad in 16384.5 0x4000 1e4 -16K inf nan 16K16 ''; do
  "$cowsim" run "$work/ok.trace" --quiet --nodesize "$bad" 2>"$work/err"
  status=$?
  check "--nodesize '$bad' is refused with exit 2 naming the option" \
    "[ $status = 2 ] && grep -q \"nodesize '$bad'\" '$work/err'" "status $status: $(cat "$work/err")"
done
"$cowsim" run "$work/ok.trace" --quiet --device-size 1.5G 2>"$work/err"
check "--device-size 1.5G (a whole number of bytes) is accepted" "[ $? = 0 ]" "$(cat "$work/err")"
"$cowsim" run "$work/ok.trace" --quiet --device-size 1000.5 2>"$work/err"
check "--device-size 1000.5 is refused" "[ $? = 2 ] && grep -q 'whole number of bytes' '$work/err'" "$(cat "$work/err")"
for good in 16K 16384 16KiB 4096 64K; do
  "$cowsim" run "$work/ok.trace" --quiet --nodesize "$good" 2>"$work/err"
  check "--nodesize $good is accepted" "[ $? = 0 ]" "$(cat "$work/err")"
done

printf 'cowsim-trace 1\nmkdir /s\nsnapshot / /s\n' >"$work/snap.trace"
"$cowsim" run "$work/snap.trace" --quiet 2>"$work/err"
status=$?
check "a snapshot onto an existing path exits 2 naming the destination" \
  "[ $status = 2 ] && grep -q 'snap.trace:3: snapshot / -> /s: File exists' '$work/err'" \
  "status $status: $(cat "$work/err")"
printf 'cowsim-trace 1\nmkdir /a\nrename /missing /a/b\n' >"$work/rename.trace"
"$cowsim" run "$work/rename.trace" --quiet 2>"$work/err"
check "a rename of a missing path names both paths" \
  "grep -q 'rename.trace:3: rename /missing -> /a/b: No such file or directory' '$work/err'" "$(cat "$work/err")"

printf 'cowsim-trace 1\nbogus /x\nmkdir /a\n' >"$work/first.trace"
"$cowsim" run "$work/first.trace" --quiet 2>"$work/err"
status=$?
check "a malformed first op exits 2" "[ $status = 2 ]" "status $status"
check "and stderr's last line is 'stopped after 0 ops; ...'" \
  "tail -n 1 '$work/err' | grep -q '^cowsim run: stopped after 0 ops; the rows written so far are complete\$'" \
  "$(cat "$work/err")"
printf 'not a header\n' >"$work/header.trace"
"$cowsim" run "$work/header.trace" --quiet 2>"$work/err"
# (This pinned "stopped after 0 ops" after the header error; the header is now
# read before any output is created, so the run never starts: exit 2 naming
# line 1, and nothing else.)
check "a missing header is refused before the run starts: exit 2 naming header.trace:1, nothing more" \
  "[ $? = 2 ] && grep -q 'header.trace:1:1: field header' '$work/err' && [ \$(wc -l <'$work/err') = 1 ]" \
  "$(cat "$work/err")"

# SIGPIPE: the reader of --csv - goes after one line.
"$cowsim" gen seed-experiment --files 2000 --snapshots 2 -o "$work/big.trace"
"$cowsim" run "$work/big.trace" --every 1 --quiet --csv - 2>"$work/err" | head -n 1 >/dev/null
status=${PIPESTATUS[0]}
check "cowsim run --csv - | head -1 ends with SIGPIPE's status 141" "[ $status = 141 ]" "status $status"
check "docs/reliability.md's exit-status table has 141 for SIGPIPE" "grep -Eq '^\\| 141 \\| killed by SIGPIPE' '$docs'"
finish
