#!/usr/bin/env bash
# tools/fuzz.sh [HARNESS...] [--time SECONDS] [--runs N] [--update-corpus]
#
# Builds the fuzz harnesses of tests/fuzz/ with clang and
# -fsanitize=fuzzer,address,undefined in build-fuzz/ (apart from the main
# build), then runs each HARNESS (trace, run; default both) one after the
# other, one process each, for SECONDS (default 600) with inputs up to 4096
# bytes and the trace-format dictionary tests/fuzz/trace.dict. The fuzzer
# starts from the hand-written tests/fuzz/seeds/ and the kept corpus
# tests/fuzz/corpus/HARNESS/, and writes new inputs to build-fuzz/work/HARNESS;
# crashers go to build-fuzz/crashes/HARNESS/. With --runs N a harness stops
# after N executions or SECONDS, whichever comes first. With --update-corpus the kept
# corpus is replaced by the minimized merge (libFuzzer -merge=1, by edges) of
# all three.
# The figures (executions, seconds, crashes) are printed at the end and kept
# in build-fuzz/HARNESS.log.
#
# A crasher, once fixed, belongs in tests/fuzz/crashers/HARNESS/ so that
# `meson test --suite fuzz` replays it forever.
set -euo pipefail
cd "$(dirname "$0")/.."
harnesses=() seconds=600 runs=-1 update=0
while [ $# -gt 0 ]; do
  case $1 in
    --time) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --update-corpus) update=1; shift ;;
    trace|run) harnesses+=("$1"); shift ;;
    *) echo "usage: tools/fuzz.sh [trace|run...] [--time SECONDS] [--runs N] [--update-corpus]" >&2; exit 2 ;;
  esac
done
[ ${#harnesses[@]} -gt 0 ] || harnesses=(trace run)
command -v clang >/dev/null || { echo "tools/fuzz.sh: clang is needed (apt-get install clang)" >&2; exit 77; }

if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang meson setup build-fuzz -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args='-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined' >/dev/null
fi
ninja -C build-fuzz "${harnesses[@]/#/tests/fuzz/fuzz-}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
for h in "${harnesses[@]}"; do
  work=build-fuzz/work/$h crashes=build-fuzz/crashes/$h
  mkdir -p "$work" "$crashes"
  log=build-fuzz/$h.log
  start=$(date +%s)
  set +e
  mkdir -p tests/fuzz/corpus/"$h"
  build-fuzz/tests/fuzz/fuzz-"$h" "$work" tests/fuzz/corpus/"$h" tests/fuzz/seeds \
    -dict=tests/fuzz/trace.dict -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -max_total_time="$seconds" -runs="$runs" -print_final_stats=1 -artifact_prefix="$crashes/" \
    >"$log" 2>&1
  rc=$?
  set -e
  elapsed=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  found=$(find "$crashes" -type f | wc -l)
  echo "fuzz-$h: ${execs:-?} executions in ${elapsed} s, exit $rc, $found crasher(s) in $crashes"
  [ "$rc" = 0 ] || status=1
  if [ "$update" = 1 ]; then
    merged=build-fuzz/merged-$h
    rm -rf "$merged" && mkdir -p "$merged"
    # -use_counters=0: keep an input for a new edge, not for a new hit count of
    # one, so the kept corpus stays a few hundred files with the same edges.
    build-fuzz/tests/fuzz/fuzz-"$h" -merge=1 -use_counters=0 -max_len=4096 -timeout=10 "$merged" \
      tests/fuzz/seeds tests/fuzz/corpus/"$h" "$work" >>"$log" 2>&1
    rm -rf tests/fuzz/corpus/"$h" && mv "$merged" tests/fuzz/corpus/"$h"
    echo "fuzz-$h: corpus minimized to $(find tests/fuzz/corpus/"$h" -type f | wc -l) inputs"
  fi
done
exit $status
