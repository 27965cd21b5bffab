#!/usr/bin/env bash
# tests/teaching/test_draw_cli.sh COWSIM TUTORIAL_DIR - `cowsim draw` as a teacher meets it (TAP).
#
# The contract of issue 8, item 1: on ten files, one snapshot and one atime
# update, the drawing shows the snapshot sharing the leaves and the update
# copying exactly the leaf and the path; every live block is drawn once
# (DR2: blocks drawn with --trees all = metadata_used / nodesize); the same
# inputs give the same bytes; svg comes from Graphviz or falls back to text;
# bad arguments and a missing mark are exit 2 with a message; a filesystem
# of more than --max-blocks blocks is summarized (its upper levels drawn,
# the blocks below counted), not drawn whole.
set -u
. "$(dirname "$0")/../tap.sh"
cowsim=$1
traces=$2
draw() { "$cowsim" draw "$traces/ten-files.trace" --nodesize 4K "$@"; }
# Addresses of the blocks drawn in tree T's section of a text drawing.
blocks_of() { awk -v t="$2" '/^[a-z]/ {cur = ($0 ~ "^" t " ")} cur && /^ +(leaf|node) / {print $2}' "$1" | sort; }
# Blocks drawn once (not "drawn under"), of any tree.
drawn_count() { grep -E '^ +(leaf|node) ' "$1" | grep -vc 'drawn under'; }

# --- the tutorial's example: snapshot shares, one atime update copies leaf + path ---
draw --at after_copy --trees fs > "$work/copy.txt"; s1=$?
draw --at after_snapshot --trees fs > "$work/snap.txt"; s2=$?
draw --at after_read --trees fs > "$work/read.txt"; s3=$?
check "draw at each mark exits 0" "[ $s1$s2$s3 = 000 ]"
check "after the copy the fs tree is a node over leaves, none shared" \
  "grep -q '^  node .* level 1 ' '$work/copy.txt' && ! grep -v '^#' '$work/copy.txt' | grep -q ' [*+]'"
check "after the snapshot there is a snapshot tree 256 (/snap1)" "grep -q '^snapshot tree 256 (/snap1)' '$work/snap.txt'"
check "the snapshot shares tree 5's leaves: they are refs 2 and marked '*'" \
  "[ \$(grep -c 'refs 2 \*, [0-9]* items' '$work/snap.txt') -ge 2 ]"
check "a shared leaf is drawn once and referred to from the other tree" "grep -q 'drawn under fs tree 5' '$work/snap.txt'"
before=$(blocks_of "$work/snap.txt" "fs tree 5"); after=$(blocks_of "$work/read.txt" "fs tree 5")
gone=$(comm -23 <(echo "$before") <(echo "$after") | wc -l); new=$(comm -13 <(echo "$before") <(echo "$after") | wc -l)
check "one atime update replaces exactly two blocks of tree 5: the leaf and the root above it" \
  "[ $gone = 2 ] && [ $new = 2 ]" "gone $gone new $new"
check "the snapshot's tree keeps all its blocks" \
  "[ \"\$(blocks_of '$work/snap.txt' 'snapshot tree 256')\" = \"\$(blocks_of '$work/read.txt' 'snapshot tree 256')\" ]"
check "the copied leaf is new (^) and the original is left to the snapshot with refs 1" \
  "[ \$(grep -c '^    leaf .*refs 1 \^' '$work/read.txt') = 1 ] && [ \$(grep -c 'refs 2 \*, [0-9]* items' '$work/read.txt') = \$((\$(grep -c 'refs 2 \*, [0-9]* items' '$work/snap.txt') - 1)) ]"

# --- DR2: every live block once ------------------------------------------------
"$cowsim" gen seed-experiment --files 300 --snapshots 3 -o "$work/seed.trace"
"$cowsim" run "$work/seed.trace" --quiet --csv "$work/seed.csv"
for mark in after_copy after_snapshots after_grep2; do
  "$cowsim" draw "$work/seed.trace" --at $mark --trees all --max-blocks 0 > "$work/all.txt"
  used=$(awk -F, -v m=$mark '$3 == m {print $4}' "$work/seed.csv")
  check "seed experiment at $mark: blocks drawn x 16384 = metadata_used ($used)" \
    "[ \$((\$(drawn_count '$work/all.txt') * 16384)) = '$used' ]" "drawn $(drawn_count "$work/all.txt")"
done
"$cowsim" draw "$work/seed.trace" --policy side-table --at after_grep --trees atime > "$work/side.txt"
check "--policy side-table draws the atime side tables" "grep -q '^atime side table' '$work/side.txt'"
"$cowsim" draw "$work/seed.trace" --design keyed --trees fs > "$work/keyed.txt"
check "the keyed design draws its one shared fs tree" "[ \$(grep -c '^shared fs tree' '$work/keyed.txt') = 1 ]"
"$cowsim" draw "$work/seed.trace" --trees fs > "$work/end.txt"
check "without --at it draws the end of the trace" "grep -q '^# .* at the end: ' '$work/end.txt'"

# --- a large filesystem is summarized, not drawn whole ---------------------------
"$cowsim" gen seed-experiment --files 3000 --snapshots 2 -o "$work/big.trace"
"$cowsim" run "$work/big.trace" --quiet --csv "$work/big.csv"
used=$(awk -F, '$3 == "after_grep" {print $4}' "$work/big.csv")
"$cowsim" draw "$work/big.trace" --at after_grep --trees all > "$work/big.txt" 2> "$work/big.err"; s=$?
total=$(sed -n 's/^# summarized: \([0-9]*\) blocks in all.*/\1/p' "$work/big.txt")
note "3000 files, 2 snapshots, after_grep: $total blocks, $(drawn_count "$work/big.txt") drawn, $(wc -c < "$work/big.txt") bytes of text"
check "more blocks than --max-blocks (default 300): a summary, said on stderr and in the header" \
  "[ $s = 0 ] && grep -q 'more than --max-blocks 300' '$work/big.err' && [ -n '$total' ]" "$(cat "$work/big.err")"
check "the summary draws at most 300 blocks, and every tree's root" \
  "[ \$(drawn_count '$work/big.txt') -le 300 ] && [ \$(grep -c '^[a-z].* tree ' '$work/big.txt') = \$(grep -c '^  [a-z]' '$work/big.txt') ]"
check "the summary's blocks in all x 16384 = metadata_used ($used)" "[ \$(( ${total:-0} * 16384 )) = '$used' ]"
check "a node at the cut counts the blocks below it: shared, through a parent, new" \
  "grep -Eq 'children; below: [0-9]+ blocks \\([0-9]+ leaves\\), [0-9]+ shared \\*, [0-9]+ through a parent \\+, [0-9]+ new \\^' '$work/big.txt'"
"$cowsim" draw "$work/big.trace" --at after_grep --trees all --max-blocks 0 > "$work/bigall.txt" 2> "$work/big.err"
check "--max-blocks 0 draws every block, with no message" \
  "[ \$(drawn_count '$work/bigall.txt') = '$total' ] && [ ! -s '$work/big.err' ]"
"$cowsim" draw "$work/big.trace" --at after_grep --format dot > "$work/big.dot" 2>/dev/null
check "the summarized DOT is small (under 100 KB) and says it is a summary" \
  "[ \$(wc -c < '$work/big.dot') -lt 100000 ] && grep -q 'summarized: ' '$work/big.dot'" "$(wc -c < "$work/big.dot") bytes"

# --- formats ------------------------------------------------------------------
draw --at after_read --format dot -o "$work/a.dot"; draw --at after_read --format dot -o "$work/b.dot"
check "the same trace and arguments give the same DOT bytes" "cmp -s '$work/a.dot' '$work/b.dot'"
draw --at after_read --format dot --trees fs,extent > "$work/c.dot"
check "DOT has one cluster per tree drawn (tree 5, snapshot 256, extent)" "[ \$(grep -c 'subgraph cluster_' '$work/c.dot') = 3 ]"
check "DOT fills shared blocks orange" "grep -q 'refs 2 \*' '$work/c.dot' && grep -q 'bgcolor=\"#f4a582\"' '$work/c.dot'"
draw --at after_read --format svg --trees fs -o "$work/a.svg"; draw --at after_read --format svg --trees fs -o "$work/b.svg"
check "svg is drawn by cowsim itself (no Graphviz), the same bytes twice" \
  "grep -q '<svg' '$work/a.svg' && ! grep -qi graphviz '$work/a.svg' && grep -q 'root of snapshot tree 256 (/snap1)' '$work/a.svg' && cmp -s '$work/a.svg' '$work/b.svg'"
mkdir "$work/nodot"; for tool in bash awk grep; do ln -s "$(command -v $tool)" "$work/nodot/$tool"; done
PATH="$work/nodot" "$cowsim" draw "$traces/ten-files.trace" --format svg -o "$work/nodot.svg" 2>"$work/nodot.err"; s=$?
check "svg needs no dot on the PATH" "[ $s = 0 ] && grep -q '<svg' '$work/nodot.svg' && [ ! -s '$work/nodot.err' ]" "$(cat "$work/nodot.err")"
check "svg has the legend: shared, shared through a parent, exclusive, new" \
  "grep -q 'shared: refs &gt; 1\\|shared: refs > 1' '$work/a.svg' && grep -q 'shared through a shared parent' '$work/a.svg' && grep -q 'exclusive: one tree' '$work/a.svg' && grep -q 'new: written by the newest generation (gen [0-9]*)' '$work/a.svg'"

# --- bad input ----------------------------------------------------------------
draw --at no_such_mark > /dev/null 2> "$work/err"; s=$?
check "a missing mark is exit 2 naming the marks the trace has" "[ $s = 2 ] && grep -q \"no mark 'no_such_mark' (its marks: after_copy, after_snapshot\" '$work/err'" "$(cat "$work/err")"
for args in "--format png" "--trees fs,nope" "--max-items -1" "--max-blocks -1" "--nodesize 3000" \
            "--steps --at after_read" "--steps --format dot" "--every 2" "--steps --every -1"; do
  # shellcheck disable=SC2086
  draw $args > /dev/null 2> "$work/err"; s=$?
  check "draw $args is exit 2 with a message" "[ $s = 2 ] && [ -s '$work/err' ]"
done
printf 'cowsim-trace 1\nmkdir /a\nfrobnicate /a\n' > "$work/bad.trace"
"$cowsim" draw "$work/bad.trace" > /dev/null 2> "$work/err"; s=$?
check "a malformed trace is exit 2 naming file and line" "[ $s = 2 ] && grep -q 'bad.trace:3' '$work/err'" "$(cat "$work/err")"

tap_done
