#!/usr/bin/env bash
# Installs the Debian packages cowsim needs to build, test and plot.
# As root it runs apt-get; otherwise it says what to install.
set -euo pipefail
packages=(meson ninja-build pkg-config gcc libc6-dev libglib2.0-dev libcmocka-dev
          python3 python3-matplotlib btrfs-progs
          valgrind  # tests/reliability/test_memcheck.sh (.ci/run requires it)
          graphviz chromium  # cowsim draw --format svg; the report page test (about 20 s to install)
          parallel  # tests/sim/test_sweep_resume.sh runs a sweep plan's jobs through GNU parallel
          slurmctld slurmd slurm-client munge)  # tests/sim/test_sweep_slurm.sh: a one-node cluster on localhost
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "cowsim setup: run as root, or install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
