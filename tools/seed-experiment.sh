#!/usr/bin/env bash
# The main job: the seed experiment (LWN 2012-05-31) on the model.
# Copies a tree (default /usr/include), takes N read-write snapshots of the
# top level (default 10), greps everything twice, and writes
#   results/out/seed-experiment.trace, .csv and .png/.svg
# Usage: tools/seed-experiment.sh [TREE] [SNAPSHOTS] [MOUNT]
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${1:-/usr/include} snapshots=${2:-10} mount=${3:-relatime}
bash tools/setup.sh
if [ -d build ]; then meson setup build --reconfigure >/dev/null; else meson setup build >/dev/null; fi
ninja -C build >/dev/null
mkdir -p results/out
out=results/out/seed-experiment
./build/sim/cowsim gen seed-experiment --from-dir "$tree" --snapshots "$snapshots" -o "$out.trace"
./build/sim/cowsim run "$out.trace" --nodesize 16K --mount "$mount" --csv "$out.csv"
./build/sim/cowsim plot "$out.csv" --x mark --labels "model $mount" \
  --title "seed experiment: $tree, $snapshots snapshots, grep -R twice" -o "$out"
echo "wrote $out.csv, $out.png and $out.svg"
