#!/usr/bin/env bash
# The main job: the seed experiment (LWN 2012-05-31) on the model.
# Copies a tree (default /usr/include), takes N read-write snapshots of the
# top level (default 10), greps everything twice, replays that under
# strictatime, relatime and noatime, and writes
#   results/out/seed-experiment.trace
#   results/out/seed-experiment-MOUNT.csv     one per mount (cowsim run --csv)
#   results/out/btrfs-MOUNT.csv               the real marks drawn (see below)
#   results/out/seed-experiment.png/.svg      a curve per mount; with the default
#       tree and snapshot count, real btrfs's marks from results/calibration.csv
#       (tools/calibrate on this machine's /usr/include) as black markers
# Usage: tools/seed-experiment.sh [TREE] [SNAPSHOTS]
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${1:-/usr/include} snapshots=${2:-10}
mounts=(strictatime relatime noatime)
bash tools/setup.sh
if [ -d build ]; then meson setup build --reconfigure >/dev/null; else meson setup build >/dev/null; fi
ninja -C build >/dev/null
mkdir -p results/out
out=results/out/seed-experiment
./build/sim/cowsim gen seed-experiment --from-dir "$tree" --snapshots "$snapshots" -o "$out.trace"
csvs=() labels=() measured=()
for mount in "${mounts[@]}"; do
  echo "== model, $mount"
  ./build/sim/cowsim run "$out.trace" --nodesize 16K --mount "$mount" --csv "$out-$mount.csv" 2>/dev/null
  csvs+=("$out-$mount.csv") labels+=("model $mount")
  # Real btrfs, the same trace shape on this machine (results/calibration.md):
  # case inc10-<mount>-16k holds its four marks.
  short=${mount/strictatime/strict}; short=${short/relatime/rel}
  if [ "$tree" = /usr/include ] && [ "$snapshots" = 10 ] &&
     grep -q "^inc10-$short-16k," results/calibration.csv; then
    real="results/out/btrfs-$mount.csv"
    { echo "label,metadata_used"
      awk -F, -v c="inc10-$short-16k" '$1 == c && $9 == "metadata_used" {print $10 "," $12}' results/calibration.csv; } >"$real"
    measured+=(--measured "$real")
  fi
done
IFS=, eval 'label_list="${labels[*]}"'
./build/sim/cowsim plot "${csvs[@]}" --x mark --labels "$label_list" "${measured[@]}" \
  --title "seed experiment: $tree, $snapshots rw snapshots, grep -R twice (16 KiB nodes)" -o "$out"
echo "wrote $out.trace, $out-{$(IFS=,; echo "${mounts[*]}")}.csv, $out.png and $out.svg"
