#!/usr/bin/env bash
# tests/reliability/test_memcheck.sh COWSIM - valgrind memcheck on short runs
# (issue 7.2): 0 errors and 0 definitely lost bytes, on a run that ends well,
# one that fills the device, one that meets a malformed line, and on gen.
# Skips when valgrind is not installed or cowsim is built with ASan.
set -u
cowsim=$1
# (meson reads a TAP skip from the plan "1..0 # SKIP", with exit status 0.)
command -v valgrind >/dev/null || { echo "1..0 # SKIP valgrind is not installed"; exit 0; }
# An ASan build (CI's build-asan) cannot run under valgrind; ASan checks it there.
if ldd "$cowsim" 2>/dev/null | grep -q libasan; then echo "1..0 # SKIP cowsim is built with ASan"; exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/tap.sh"

# memcheck NAME WANT ARGS...: cowsim ARGS under memcheck must exit WANT (its
# own status; 99 means memcheck found an error) with a clean summary.
memcheck() {
  local name=$1 want=$2; shift 2
  G_SLICE=always-malloc G_DEBUG=gc-friendly valgrind --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite --log-file="$work/vg.log" "$cowsim" "$@" >/dev/null 2>"$work/err"
  local status=$?
  check "$name: exits $want under memcheck" "[ $status = $want ]" \
    "status $status: $(cat "$work/err"; grep -A20 -E 'Invalid|uninitialised|definitely' "$work/vg.log" | head -40)"
  check "$name: memcheck reports 0 errors" "grep -q 'ERROR SUMMARY: 0 errors' '$work/vg.log'"
  check "$name: memcheck reports no definitely lost bytes" \
    "! grep -Eq 'definitely lost: [1-9]' '$work/vg.log'" "$(grep 'definitely lost' "$work/vg.log")"
}

"$cowsim" gen seed-experiment --files 60 --snapshots 2 --seed 5 -o "$work/t.trace"
memcheck "gen seed-experiment" 0 gen seed-experiment --files 60 --snapshots 2 --seed 5 -o "$work/t2.trace"
memcheck "run with --paranoid" 0 run "$work/t.trace" --paranoid --every 10 --csv "$work/out.csv" \
  --subvolume-csv "$work/sub.csv"
memcheck "run of the keyed design" 0 run "$work/t.trace" --design keyed --csv "$work/k.csv"
printf 'cowsim-trace 1\ncreate /f size=1\ncreate /g size=1G\n' >"$work/full.trace"
memcheck "run that fills the device" 1 run "$work/full.trace" --device-size 700M --csv "$work/full.csv"
printf 'cowsim-trace 1\ncreate /f size=1\ncreate /g size=12x\n' >"$work/bad.trace"
memcheck "run of a malformed trace" 2 run "$work/bad.trace" --csv "$work/bad.csv"
finish
