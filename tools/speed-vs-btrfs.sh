#!/usr/bin/env bash
# Times the model against real btrfs on the same trace, side by side in one
# run (issue 6's first goal): `cowsim run` RUNS times, then tools/btrfs-replay
# once on a loop-mounted btrfs, then the ratio of wall times (the replay over
# the median model run). Needs root for the replay (it exits 77 without).
# Usage: tools/speed-vs-btrfs.sh [TRACE] [RUNS]
#   TRACE defaults to the seed experiment of /usr/include with 10 snapshots,
#   generated into results/out/speed-seed.trace.
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:-} runs=${2:-3}
[ -n "${EPOCHREALTIME:-}" ] || { echo "speed-vs-btrfs: needs bash 5 (its EPOCHREALTIME clock)" >&2; exit 2; }
ninja -C build >/dev/null
mkdir -p results/out
if [ -z "$trace" ]; then
  trace=results/out/speed-seed.trace
  ./build/sim/cowsim gen seed-experiment --from-dir /usr/include --snapshots 10 -o "$trace"
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# bash's clock, not date(1)'s: two $(date) around a command added 8.5-10.7 ms of date's own
# start and exit to each time (measured with nothing between them; issue 20, round 18d), ~7 % of a
# cowsim run. $EPOCHREALTIME's decimal point is the locale's: made a '.' for awk.
wall() { # prints the wall seconds of "$@"; its output goes to the scratch folder
  local t0 t1
  t0=$EPOCHREALTIME
  if ! "$@" >"$scratch/out" 2>&1; then
    echo "speed-vs-btrfs: failed: $*" >&2; cat "$scratch/out" >&2; return 2
  fi
  t1=$EPOCHREALTIME
  awk -v a="${t0/[^0-9]/.}" -v b="${t1/[^0-9]/.}" 'BEGIN {printf "%.3f", b - a}'
}
model=()
for _ in $(seq "$runs"); do
  model+=("$(wall ./build/sim/cowsim run "$trace" --nodesize 16K --mount relatime -q --csv "$scratch/model.csv")")
done
median=$(printf '%s\n' "${model[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
real=$(wall ./build/tools/btrfs-replay "$trace" --nodesize 16384 --mount relatime --csv "$scratch/btrfs.csv")
printf 'trace %s: %s lines, load average %s\n' "$trace" "$(wc -l <"$trace")" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'cowsim run (16K, relatime), %s runs: %s s wall; median %.3f s\n' "$runs" "${model[*]}" "$median"
printf 'btrfs-replay (loop-mounted btrfs, same options): %.2f s wall\n' "$real"
awk -v r="$real" -v m="$median" 'BEGIN {printf "ratio: %.1fx\n", r / m}'
