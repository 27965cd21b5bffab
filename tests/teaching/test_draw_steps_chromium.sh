#!/usr/bin/env bash
# tests/teaching/test_draw_steps_chromium.sh COWSIM TUTORIAL_DIR - the page of
# `cowsim draw --steps` in headless Chromium: it loads, and moving its slider
# changes the drawing (TAP).
#
# Issue 17, "done when": the step-through page loads in headless Chromium
# and its slider changes the drawing. The page's script opens "#step=N" by
# setting the slider to N and firing the slider's input event, whose handler
# shows step N and writes data-step on <body>; --dump-dom after that script
# shows which <section> is visible. Screenshots of two steps must differ.
# Chromium: chromium.sh (installed when missing and run as root, else 77).
set -u
. "$(dirname "$0")/../tap.sh"
cowsim=$1
traces=$2
. "$(dirname "$0")/chromium.sh"

page=$work/steps.html
"$cowsim" draw "$traces/ten-files.trace" --nodesize 4K --trees fs --max-items 2 --steps -o "$page"
steps=$(grep -c '<section class="step"' "$page")
check "the page has a step per mark of ten-files.trace (4) and a slider over them" \
  "[ $steps = 4 ] && grep -q '<input type=\"range\" id=\"slider\" min=\"0\" max=\"3\"' '$page'"
check "the page is self-contained: no src=, href= or url( to fetch" "! grep -Eq 'src=|href=|url\\(' '$page'"

# visible_step DOM: the data-step of the one <section> without "hidden".
visible_step() { grep -o '<section class="step" data-step="[0-9]*" data-caption="[^"]*"[^>]*>' "$1" | grep -v hidden | grep -o 'data-step="[0-9]*"' | tr -dc 0-9; }
# visible_svg DOM: that section's drawing.
visible_svg() { awk '/<section class="step"/ {on = ($0 !~ /hidden/)} on' "$1" | sed -n '/<svg/,/<\/svg>/p'; }

headless --virtual-time-budget=5000 --dump-dom "file://$page" > "$work/0.dom" 2> "$work/0.err"
headless --virtual-time-budget=5000 --dump-dom "file://$page#step=2" > "$work/2.dom" 2> "$work/2.err"
body0=$(grep -o '<body[^>]*>' "$work/0.dom" | head -1); body2=$(grep -o '<body[^>]*>' "$work/2.dom" | head -1)
note "opened: $body0; at #step=2: $body2"
check "Chromium runs the page's script: step 1 of 4 is shown, its caption names the first mark" \
  "echo '$body0' | grep -q 'data-step=\"0\"' && [ \"\$(visible_step '$work/0.dom')\" = 0 ] && grep -q 'step 1 of 4: mark after_copy' '$work/0.dom'"
check "moving the slider to 2 shows step 3 (after_read) and hides the others" \
  "echo '$body2' | grep -q 'data-step=\"2\"' && [ \"\$(visible_step '$work/2.dom')\" = 2 ] && grep -q 'step 3 of 4: mark after_read' '$work/2.dom'"
visible_svg "$work/0.dom" > "$work/0.svg"; visible_svg "$work/2.dom" > "$work/2.svg"
check "the drawing shown changes: after_copy has no shared leaf, after_read shares leaves and has a new copy" \
  "[ -s '$work/0.svg' ] && ! cmp -s '$work/0.svg' '$work/2.svg' && ! grep -q 'data-state=\"shared' '$work/0.svg' && grep -q 'data-state=\"shared\"' '$work/2.svg' && grep -q 'root of snapshot tree 256' '$work/2.svg'"
check "no script error in the console" "! grep -Ei 'Uncaught|Refused to|net::ERR' '$work/0.err' '$work/2.err'" \
  "$(grep -Ei 'Uncaught|Refused to|net::ERR' "$work/0.err" "$work/2.err")"

headless --screenshot="$work/step0.png" --window-size=1000,800 "file://$page" > /dev/null 2>&1
headless --screenshot="$work/step2.png" --window-size=1000,800 "file://$page#step=2" > /dev/null 2>&1
check "screenshots of step 1 and step 3 are taken and differ" \
  "is_png '$work/step0.png' && is_png '$work/step2.png' && ! cmp -s '$work/step0.png' '$work/step2.png'"
if [ -n "${COWSIM_STEPS_SCREENSHOT:-}" ]; then
  cp "$work/step0.png" "${COWSIM_STEPS_SCREENSHOT%.png}-0.png"; cp "$work/step2.png" "${COWSIM_STEPS_SCREENSHOT%.png}-2.png"
fi

tap_done
