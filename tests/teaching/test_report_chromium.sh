#!/usr/bin/env bash
# tests/teaching/test_report_chromium.sh COWSIM TUTORIAL_DIR - the report page
# opens in headless Chromium with every image loaded (TAP).
#
# Issue 8, item 3, "done when": the report of a compare folder and of a sweep
# folder, as those commands write them, renders without errors and every
# <img> decodes (naturalWidth > 0). The page's own inline script writes
# data-images-loaded / data-images-total on <body> at the load event; this
# test reads them back from --dump-dom and takes a screenshot.
# Issue 17, item 4, "done when": in the DOM Chromium built, the plots come
# before any table, the summary table appears once, the per-run tables are
# folded in <details>, and every figure's caption holds its command.
# Screenshots: the folder $COWSIM_REPORT_SCREENSHOTS (meson sets it to
# build/tests/teaching/report-screenshots), named in the output.
# Chromium: chromium.sh (installed when missing and run as root, else 77).
set -u
. "$(dirname "$0")/../tap.sh"
cowsim=$1
traces=$2
. "$(dirname "$0")/chromium.sh"

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
    "is_png '$work/$name.png'"
  if [ -n "${COWSIM_REPORT_SCREENSHOTS:-}" ] && [ -s "$work/$name.png" ] && mkdir -p "$COWSIM_REPORT_SCREENSHOTS"; then
    cp "$work/$name.png" "$COWSIM_REPORT_SCREENSHOTS/$name.png" && note "$name: screenshot $COWSIM_REPORT_SCREENSHOTS/$name.png"
  fi
}

# page_order NAME RUNS: reads the DOM Chromium built (NAME.dom) and checks
# the order a reviewer reads in: plots first, one summary table, RUNS per-run
# tables each folded in a closed <details>, a command under every PNG figure
# (cowsim plot writes one into each; the SVG of cowsim draw has none).
page_order() {
  local name=$1 runs=$2 facts
  facts=$(python3 - "$work/$name.dom" <<'PY'
import html.parser, sys

class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.order, self.open, self.stack = [], [], []
        self.summary_tables = self.folded = self.details_open = 0
        self.in_th = self.in_code = False
        self.captions, self.commands, self.th = 0, 0, ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("figure", "table"):
            self.order.append(tag)
        if tag == "table" and "details" in self.stack:
            self.folded += 1
        if tag == "details" and "open" in a:
            self.details_open += 1
        if tag == "img" and "figure" in self.stack and a.get("src", "").startswith("data:image/png"):
            self.captions += 1
        self.in_code = tag == "code" and "figcaption" in self.stack
        self.in_th = tag == "th"
        self.th = ""
        if tag not in ("img", "br", "meta", "input"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag == "th" and self.th == "amplification":
            self.summary_tables += 1
        self.in_th = self.in_code = False
        if tag in self.stack:
            while self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        if self.in_th:
            self.th += data
        if self.in_code and data.startswith("cowsim plot "):
            self.commands += 1

p = Page()
p.feed(open(sys.argv[1]).read())
first = lambda t: p.order.index(t) if t in p.order else -1
print(first("figure"), first("table"), p.summary_tables, p.folded, p.details_open, p.captions, p.commands)
PY
)
  set -- $facts
  note "$name: first <figure> is element $1 and first <table> $2 of the figures and tables; summary tables $3; folded tables $4; PNG figures $6, captions with a command $7"
  check "$name: the plots come before any table" "[ $1 = 0 ] && [ $2 -gt 0 ]"
  check "$name: the summary table appears once" "[ $3 = 1 ]"
  check "$name: the $runs per-run tables are folded in closed <details>" "[ $4 = $runs ] && [ $5 = 0 ]"
  check "$name: every PNG figure (cowsim plot's) has the command that drew it in its caption" "[ $6 -ge 1 ] && [ $6 = $7 ]"
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
page_order compare 4

# A sweep folder as `cowsim sweep` writes it: the seed experiment over
# snapshots and nodesize, one CSV and its plot.
"$cowsim" sweep --gen 'seed-experiment --files 200 --snapshots {snapshots}' --vary snapshots=0..3 \
  --vary nodesize=4K,16K --out "$work/sweep" --quiet 2>"$work/sweep.err" || note "cowsim sweep: $(tail -3 "$work/sweep.err")"
"$cowsim" report "$work/sweep" -o "$work/sweep.html"
check "sweep: the report is written, with the calibration errors that apply at 4K and 16K" \
  "[ -s '$work/sweep.html' ] && [ \$(grep -c 'The error that applies here, nodesize' '$work/sweep.html') = 2 ]"
open_page sweep "$work/sweep.html"
page_order sweep 0

tap_done
