#!/usr/bin/env bash
# tests/teaching/test_draw_layout.sh COWSIM TUTORIAL_DIR CHECKER - the svg layout
# of `cowsim draw`, checked on the geometry of its output (TAP).
#
# Issue 17, item 5: leaves in key order from left to right, no crossing
# lines, every block once with a line for each pointer (DS1, DS2 in
# results/draw_svg.h). CHECKER (check_draw_layout.py) reads the coordinates
# back from the SVG and tests them; it is shown to fail on drawings broken
# three ways. The drawings: every step of the tutorial traces, of the seed
# experiment (summarized, and whole) and of a backup rotation whose
# snapshots are deleted while the tree grows, under the side-table policy and
# the keyed and zfs designs too.
set -u
. "$(dirname "$0")/../tap.sh"
cowsim=$1
traces=$2
checker=$3

# layout_ok NAME PAGE: every drawing on PAGE passes the checker.
layout_ok() {
  python3 "$checker" "$2" > "$work/$1.check" 2>&1; local s=$?
  note "$1: $(grep -c . "$work/$1.check") drawings, $(awk '{l += $2; b += $6} END {print l " lines, " b " blocks"}' "$work/$1.check") in all"
  check "$1: no line crosses another or a stack, stacks in key order, every pointer drawn" \
    "[ $s = 0 ] && ! grep -q FAULT '$work/$1.check' && [ \$(awk '{l += \$2} END {print l}' '$work/$1.check') -gt 0 ]" \
    "$(grep FAULT "$work/$1.check" | head -5)"
}

"$cowsim" draw "$traces/ten-files.trace" --nodesize 4K --steps --trees all -o "$work/ten.html"
layout_ok ten-files "$work/ten.html"
"$cowsim" draw "$traces/grep-all.trace" --nodesize 4K --steps --trees all -o "$work/grep.html"
layout_ok grep-all "$work/grep.html"
"$cowsim" draw "$traces/cow-path.trace" --nodesize 4K --steps --every 1 --trees all -o "$work/cow.html"
layout_ok "cow-path, every op" "$work/cow.html"
"$cowsim" gen seed-experiment --files 300 --snapshots 3 -o "$work/seed.trace"
"$cowsim" draw "$work/seed.trace" --steps --trees fs --max-blocks 0 -o "$work/seed.html"
layout_ok "seed experiment, fs trees whole" "$work/seed.html"
"$cowsim" draw "$work/seed.trace" --steps --trees fs,atime --policy side-table -o "$work/side.html"
layout_ok "seed experiment, side-table policy: fs trees and atime side tables" "$work/side.html"
"$cowsim" draw "$work/seed.trace" --steps --trees all --design keyed -o "$work/keyed.html"
layout_ok "seed experiment, keyed design (one fs tree)" "$work/keyed.html"
"$cowsim" draw "$traces/grep-all-ro.trace" --nodesize 4K --steps --trees all --design zfs -o "$work/zfs.html"
layout_ok "grep-all-ro, zfs design" "$work/zfs.html"
"$cowsim" gen seed-experiment --files 3000 --snapshots 2 -o "$work/big.trace"
"$cowsim" draw "$work/big.trace" --steps --trees all -o "$work/big.html" 2>/dev/null
layout_ok "seed experiment of 3000 files, summarized" "$work/big.html"
"$cowsim" gen backup-rotation --files 400 --days 8 --keep 3 --read-fraction 0.2 -o "$work/rot.trace"
"$cowsim" draw "$work/rot.trace" --nodesize 4K --steps --trees fs,extent -o "$work/rot.html"
layout_ok "backup rotation at 4K (snapshots made and deleted)" "$work/rot.html"

# --- what the pictures show -----------------------------------------------------
"$cowsim" draw "$traces/ten-files.trace" --nodesize 4K --at after_read --trees fs --format svg -o "$work/read.svg"
roots=$(grep -o 'data-stack="[0-9]*" data-level="1"' "$work/read.svg" | wc -l)
check "after the read, the roots of tree 5 and of the snapshot are stacked: one stack at level 1" "[ $roots = 1 ]"
check "the leaves the snapshot shares are drawn once, as 'trees 5, 256', refs 2, orange" \
  "[ \$(grep -c '>trees 5, 256<' '$work/read.svg') -ge 2 ] && [ \$(grep -c 'data-state=\"shared\"' '$work/read.svg') = \$(grep -c '>trees 5, 256<' '$work/read.svg') ]"
check "the copied leaf and the new root have the blue border of the newest generation" \
  "[ \$(grep -c 'data-state=\"exclusive new\"' '$work/read.svg') = 2 ]"

# --- the checker can fail ---------------------------------------------------------
"$cowsim" draw "$traces/ten-files.trace" --nodesize 4K --at after_snapshot --trees fs --format svg -o "$work/snap.svg"
python3 "$checker" "$work/snap.svg" > /dev/null; s0=$?
# the first and the last line of the root stack swap their ends: they cross
python3 - "$work/snap.svg" "$work/crossed.svg" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
lines = re.findall(r'<line class="edge"[^>]*>', text)
ends = [re.search(r'x2="[^"]*"', l).group(0) for l in lines]
swapped = [lines[0].replace(ends[0], ends[-1]), lines[-1].replace(ends[-1], ends[0])]
text = text.replace(lines[0], "FIRST").replace(lines[-1], swapped[1]).replace("FIRST", swapped[0])
open(sys.argv[2], "w").write(text)
EOF
python3 "$checker" "$work/crossed.svg" > "$work/crossed.out"; s1=$?
grep -v 'class="edge"' "$work/snap.svg" > "$work/nolines.svg"
python3 "$checker" "$work/nolines.svg" > "$work/nolines.out"; s2=$?
# two leaves' first keys swapped: the row is out of key order
python3 - "$work/snap.svg" "$work/unordered.svg" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
keys = re.findall(r'data-level="0"[^>]*data-first-key="([^"]*)"', text)
text = text.replace(keys[0], "K0").replace(keys[-1], keys[0]).replace("K0", keys[-1])
open(sys.argv[2], "w").write(text)
EOF
python3 "$checker" "$work/unordered.svg" > "$work/unordered.out"; s3=$?
check "the checker passes the drawing and fails it with two lines crossed, without its lines, out of key order" \
  "[ $s0$s1$s2$s3 = 0111 ] && grep -q 'crosses' '$work/crossed.out' && grep -q 'no line joins' '$work/nolines.out' && grep -q 'right of' '$work/unordered.out'" \
  "exits $s0$s1$s2$s3; $(grep FAULT "$work"/*.out | head -3)"

tap_done
