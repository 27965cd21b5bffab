#!/usr/bin/env bash
# Builds cowsim with -Werror and runs the test suite: the command README.md gives.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d build ]; then meson setup build -Dwerror=true --reconfigure >/dev/null; else meson setup build -Dwerror=true >/dev/null; fi
ninja -C build
meson test -C build --print-errorlogs
