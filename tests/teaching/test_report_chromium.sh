#!/usr/bin/env bash
# tests/teaching/test_report_chromium.sh COWSIM TUTORIAL_DIR - the report page
# opens in headless Chromium with every image loaded (TAP).
#
# Issue 8, item 3, "done when": the report of a compare folder and of a sweep
# folder, as those commands write them, renders without errors and every
# <img> decodes (naturalWidth > 0). The page's own inline script writes
# data-images-loaded / data-images-total on <body> at the load event; this
# test reads them back from --dump-dom and takes a screenshot.
# Skips (77) when Chromium is not installed: `apt-get install -y chromium`
# (Debian bookworm; tools/setup.sh installs it).
set -u
. "$(dirname "$0")/../tap.sh"
cowsim=$1
traces=$2
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "1..0 # SKIP chromium is not installed (apt-get install -y chromium)"
  exit 77
fi
headless() {
  timeout 90 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d -p "$work")" --enable-logging=stderr --v=0 "$@"
}

# open_page NAME PAGE: loads PAGE, checks that every image decoded and that
# the console is clean, and takes a screenshot.
open_page() {
  local name=$1 page=$2 images body
  images=$(grep -o '<img ' "$page" | wc -l)
  check "$name: the page has images to load" "[ $images -ge 1 ]"
  headless --virtual-time-budget=10000 --dump-dom "file://$page" >"$work/$name.dom" 2>"$work/$name.err"
  body=$(grep -o '<body[^>]*>' "$work/$name.dom" | head -1)
  note "$name: $images images; Chromium's <body>: $body"
  check "$name: Chromium loads the page and runs its script" "echo '$body' | grep -q 'data-images-total=\"$images\"'" "$body"
  check "$name: every image loaded (naturalWidth > 0)" "echo '$body' | grep -q 'data-images-loaded=\"$images\"'" "$body"
  check "$name: no script error or blocked resource in the console" \
    "! grep -Ei 'Uncaught|Refused to|Failed to load resource|net::ERR' '$work/$name.err'" \
    "$(grep -Ei 'Uncaught|Refused to|Failed to load resource|net::ERR' "$work/$name.err")"
  headless --screenshot="$work/$name.png" --window-size=1200,2000 "file://$page" >/dev/null 2>&1
  check "$name: a screenshot of the page is taken" \
    "[ -s '$work/$name.png' ] && [ \"\$(head -c 8 '$work/$name.png' | od -An -tx1 | tr -d ' ')\" = 89504e470d0a1a0a ]"
  if [ -n "${COWSIM_REPORT_SCREENSHOT:-}" ] && [ -s "$work/$name.png" ]; then
    cp "$work/$name.png" "${COWSIM_REPORT_SCREENSHOT%.png}-$name.png"
  fi
}

# A compare folder as `cowsim compare` writes it (with the plot), and a
# drawing's SVG added beside it.
"$cowsim" compare "$traces/grep-all.trace" --nodesize 4K --mounts relatime,noatime --policies inline,side-table \
  --out "$work/compare" --quiet 2>"$work/compare.err" || note "cowsim compare: $(tail -3 "$work/compare.err")"
"$cowsim" draw "$traces/ten-files.trace" --nodesize 4K --at after_read --trees fs --max-items 2 \
  --format svg -o "$work/compare/after_read.svg" 2>/dev/null || true
rm -f "$work/compare/after_read.txt"
"$cowsim" report "$work/compare" -o "$work/compare.html"
check "compare: the report is written, with the calibration error that applies at 4K" \
  "[ -s '$work/compare.html' ] && grep -q 'The error that applies here, nodesize 4096' '$work/compare.html'"
open_page compare "$work/compare.html"

# A sweep folder as `cowsim sweep` writes it: the seed experiment over
# snapshots and nodesize, one CSV and its plot.
"$cowsim" sweep --gen 'seed-experiment --files 200 --snapshots {snapshots}' --vary snapshots=0..3 \
  --vary nodesize=4K,16K --out "$work/sweep" --quiet 2>"$work/sweep.err" || note "cowsim sweep: $(tail -3 "$work/sweep.err")"
"$cowsim" report "$work/sweep" -o "$work/sweep.html"
check "sweep: the report is written, with the calibration errors that apply at 4K and 16K" \
  "[ -s '$work/sweep.html' ] && [ \$(grep -c 'The error that applies here, nodesize' '$work/sweep.html') = 2 ]"
open_page sweep "$work/sweep.html"

tap_done
