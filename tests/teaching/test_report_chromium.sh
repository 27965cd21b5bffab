#!/usr/bin/env bash
# tests/teaching/test_report_chromium.sh COWSIM TUTORIAL_DIR - the report page
# opens in headless Chromium with every image loaded (TAP).
#
# Issue 8, item 3, "done when": the page renders without errors and every
# <img> decodes (naturalWidth > 0). The page's own inline script writes
# data-images-loaded / data-images-total on <body> at the load event; this
# test reads them back from --dump-dom and takes a screenshot.
# Skips (77) when Chromium is not installed: `apt-get install -y chromium`
# (Debian bookworm; tools/setup.sh installs it).
set -u
cowsim=$1
traces=$2
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "1..0 # SKIP chromium is not installed (apt-get install -y chromium)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && echo "# $2" | head -20; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1" "${3:-}"; fi; }
headless() {
  timeout 90 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d -p "$work")" --enable-logging=stderr --v=0 "$@"
}

dir="$work/cmp"; mkdir "$dir"
for mount in relatime noatime; do
  "$cowsim" run "$traces/ten-files.trace" --nodesize 4K --mount $mount --quiet --csv "$dir/$mount-inline.csv"
done
"$cowsim" plot "$dir/relatime-inline.csv" "$dir/noatime-inline.csv" -o "$dir/plot" --x mark >/dev/null 2>&1 ||
  echo "# cowsim plot failed: the page is tested with the drawing's SVG only"
"$cowsim" draw "$traces/ten-files.trace" --nodesize 4K --at after_read --trees fs --max-items 2 \
  --format svg -o "$dir/after_read.svg" 2>/dev/null || true
rm -f "$dir/after_read.txt"
"$cowsim" report "$dir" -o "$work/page.html"
check "the report is written" "[ -s '$work/page.html' ]"
images=$(grep -o '<img ' "$work/page.html" | wc -l)
check "the page has images to load" "[ $images -ge 1 ]"

headless --virtual-time-budget=10000 --dump-dom "file://$work/page.html" >"$work/dom.html" 2>"$work/dom.err"
body=$(grep -o '<body[^>]*>' "$work/dom.html" | head -1)
check "Chromium loads the page and runs its script" "echo '$body' | grep -q 'data-images-total=\"$images\"'" "$body"
check "every image loaded (naturalWidth > 0)" "echo '$body' | grep -q 'data-images-loaded=\"$images\"'" "$body"
check "no script error or blocked resource in the console" \
  "! grep -Ei 'Uncaught|Refused to|Failed to load resource|net::ERR' '$work/dom.err'" \
  "$(grep -Ei 'Uncaught|Refused to|Failed to load resource|net::ERR' "$work/dom.err")"
headless --screenshot="$work/shot.png" --window-size=1200,2000 "file://$work/page.html" >/dev/null 2>&1
check "a screenshot of the page is taken" "[ -s '$work/shot.png' ] && [ \"\$(head -c 8 '$work/shot.png' | od -An -tx1 | tr -d ' ')\" = 89504e470d0a1a0a ]"
if [ -n "${COWSIM_REPORT_SCREENSHOT:-}" ] && [ -s "$work/shot.png" ]; then cp "$work/shot.png" "$COWSIM_REPORT_SCREENSHOT"; fi

echo "1..$n"
[ $failed = 0 ]
