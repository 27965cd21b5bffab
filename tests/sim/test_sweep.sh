#!/usr/bin/env bash
# tests/sim/test_sweep.sh COWSIM - `cowsim sweep` as a user meets it (TAP).
#
# The contract of issue 8 item 2: a grid over model parameters on a fixed
# trace, or over trace parameters through a --gen template; one CSV line per
# point in grid order, a plot; a bad --vary is exit 2 with a message and
# nothing run; the same inputs give the same bytes.
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"
column() { awk -F, -v name="$2" 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == name) c = i; next} {print $c}' "$1" | tr '\n' ' '; }

"$cowsim" gen seed-experiment --files 300 --snapshots 3 -o "$work/seed.trace"

# --- model parameters on a fixed trace ---------------------------------------------
"$cowsim" sweep "$work/seed.trace" --vary nodesize=4K,16K,64K --out "$work/a" >"$work/stdout" 2>"$work/stderr"
status=$?
check "a sweep over nodesize exits 0" "[ $status = 0 ]" "$(cat "$work/stderr")"
check "sweep.csv has a header and 3 lines" "[ \$(wc -l <\"$work/a/sweep.csv\") = 4 ]"
check "the nodesize column holds bytes, in the order given" "[ \"$(column "$work/a/sweep.csv" nodesize)\" = '4096 16384 65536 ' ]"
check "every point ran to the end" "[ \"$(column "$work/a/sweep.csv" status)\" = 'done done done ' ]"
check "each line has the final metadata and the amplification" \
  "! column \"$work/a/sweep.csv\" amplification | grep -q '  ' && [ -n \"$(column "$work/a/sweep.csv" metadata_final | tr -d ' ')\" ]"
check "progress on stderr counts the points" "grep -q 'point 3 of 3: nodesize=64K' \"$work/stderr\""
check "the printed table has a line per point" "[ \$(grep -cE '^ *(4096|16384|65536) ' \"$work/stdout\") = 3 ]"
check "the plot is written (PNG and SVG)" "[ -s \"$work/a/sweep.png\" ] && [ -s \"$work/a/sweep.svg\" ]"
"$cowsim" run "$work/seed.trace" --nodesize 64K --csv "$work/run.csv" --quiet 2>/dev/null
final=$(awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "metadata_used") c = i} END {print $c}' "$work/run.csv")
check "a point's final metadata is what cowsim run gives for it" \
  "[ \"$(column "$work/a/sweep.csv" metadata_final | cut -d' ' -f3)\" = '$final' ]"

"$cowsim" sweep "$work/seed.trace" --vary nodesize=4K,16K,64K --out "$work/b" >/dev/null 2>&1
check "the same sweep gives the same bytes (CSV, SVG and PNG)" \
  "cmp -s \"$work/a/sweep.csv\" \"$work/b/sweep.csv\" && cmp -s \"$work/a/sweep.svg\" \"$work/b/sweep.svg\" && cmp -s \"$work/a/sweep.png\" \"$work/b/sweep.png\""

"$cowsim" sweep "$work/seed.trace" --vary nodesize=4K..8K/4K --vary mount=strictatime,noatime \
  --policies inline,side-table -q --out "$work/c" 2>"$work/err"
check "a 2 x 2 x 2 grid has 8 lines, the last parameter changing fastest" \
  "[ \"$(column "$work/c/sweep.csv" mount)\" = 'strictatime strictatime noatime noatime strictatime strictatime noatime noatime ' ]" \
  "$(cat "$work/err") $(column "$work/c/sweep.csv" mount)"
check "a range of sizes steps in bytes" \
  "[ \"$(column "$work/c/sweep.csv" nodesize)\" = '4096 4096 4096 4096 8192 8192 8192 8192 ' ]"
check "--policies is a parameter like --vary policy=" \
  "[ \"$(column "$work/c/sweep.csv" policy)\" = 'inline side-table inline side-table inline side-table inline side-table ' ]"
"$cowsim" sweep "$work/seed.trace" --vary mount=relatime,lazytime,noatime -q --out "$work/d" 2>"$work/err"
check "a mount list keeps modifiers with their mode: relatime,lazytime,noatime is 2 points" \
  "[ \$(wc -l <\"$work/d/sweep.csv\") = 3 ] && grep -q '^\"relatime,lazytime\",' \"$work/d/sweep.csv\"" "$(cat "$work/err")"

# --- trace parameters through a generator ---------------------------------------------
"$cowsim" sweep --gen 'seed-experiment --files 200 --snapshots {snapshots}' --vary snapshots=0..4/2 \
  --vary nodesize=16K -q --out "$work/g" 2>"$work/err"
check "--gen runs the generator per value: 3 lines" "[ \$(wc -l <\"$work/g/sweep.csv\") = 4 ]" "$(cat "$work/err")"
amps=$(column "$work/g/sweep.csv" amplification)
check "more snapshots, more amplification after the greps" \
  "echo $amps | awk '{exit !(\$1 < \$2 && \$2 < \$3)}'" "amplification: $amps"
check "the temporary trace is removed" "[ ! -e \"$work/g/sweep-trace.tmp\" ]"
"$cowsim" sweep --gen 'seed-experiment --files 30 --snapshots {snapshots}' --vary snapshots=0..11 \
  --out "$work/order" >/dev/null 2>"$work/err"
order=$(sed -n 's/.*point [0-9]* of 12: snapshots=\([0-9]*\) .*/\1/p' "$work/err" | paste -sd' ')
check "--gen points run in grid order (0 1 2 ... 11, not 0 1 10 11 2 ...)" \
  "[ '$order' = '0 1 2 3 4 5 6 7 8 9 10 11' ]" "$order"

# --- bad arguments: exit 2, a message, nothing run --------------------------------------------
bad=(
  "--vary snapshots=0..50"                # a trace parameter on a fixed trace
  "--vary nodesize=3000"                  # not a nodesize
  "--vary nodesize"                       # no values
  "--vary nodesize=4K,4K"                 # a value twice
  "--vary nodesize=64K..4K"               # an empty range
  "--vary nodesize=4K..64K/0"             # a zero step
  "--vary snapshots=a..b"                 # not numbers
  "--vary policy=inline,nope"             # an unknown policy
  "--vary nodesize=4K --vary nodesize=16K" # a parameter twice
  "--vary nodesize=4K --nodesize 16K"     # varied and fixed
  "--vary =4K"                            # no name
  ""                                      # nothing to vary
)
for args in "${bad[@]}"; do
  # shellcheck disable=SC2086
  "$cowsim" sweep "$work/seed.trace" $args --out "$work/bad" >/dev/null 2>"$work/err"
  status=$?
  check "sweep ${args:-(nothing)} exits 2 with a message and runs nothing" \
    "[ $status = 2 ] && [ -s \"$work/err\" ] && [ ! -e \"$work/bad/sweep.csv\" ]" "status $status: $(cat "$work/err")"
done
"$cowsim" sweep --gen 'seed-experiment --files 50 --snapshots {snaps}' --vary snapshots=1 --out "$work/bad" \
  >/dev/null 2>"$work/err"
check "a --gen placeholder that is not a --vary parameter exits 2" "[ $? = 2 ] && grep -q snaps \"$work/err\""
"$cowsim" sweep --gen 'seed-experiment --files 50 --frobnicate {snapshots}' --vary snapshots=1 --out "$work/bad" \
  >/dev/null 2>"$work/err"
check "a generator that refuses its options exits 2 and says so" "[ $? = 2 ] && grep -q 'generator failed' \"$work/err\""
"$cowsim" sweep "$work/seed.trace" --gen 'seed-experiment --files 50' --vary nodesize=4K --out "$work/bad" \
  >/dev/null 2>"$work/err"
check "TRACE and --gen together exit 2" "[ $? = 2 ] && [ -s \"$work/err\" ]"

# -j N children get the parent's hash of TRACE (--trace-sha256, hidden) instead of hashing it again.
hash=$(sha256sum "$work/seed.trace" | cut -c1-64)
"$cowsim" sweep "$work/seed.trace" --vary nodesize=4K,16K -q --out "$work/h1" --point 1 2>/dev/null
"$cowsim" sweep "$work/seed.trace" --vary nodesize=4K,16K -q --out "$work/h2" --point 1 --trace-sha256 "$hash" 2>/dev/null
check "a point run with the trace's hash given is the point run without it (same key, same bytes)" \
  "[ \"\$(ls \"$work/h1/points\")\" = \"\$(ls \"$work/h2/points\")\" ] && cmp -s \"\$(ls \"$work/h1\"/points/*.csv)\" \"\$(ls \"$work/h2\"/points/*.csv)\""
"$cowsim" sweep "$work/seed.trace" --vary nodesize=4K,16K -q --out "$work/h3" --point 1 --trace-sha256 xyz 2>"$work/err"
check "a malformed --trace-sha256 exits 2 and says why" "[ $? = 2 ] && grep -q 'trace-sha256' \"$work/err\""

# A point that ends in ENOSPC is a result (SS2): kept, its line says enospc, the sweep exits 0.
"$cowsim" sweep "$work/seed.trace" --vary device-size=160M,4G -q --out "$work/full" >/dev/null 2>"$work/err"
status=$?
check "a point ended by ENOSPC is kept as a result: exit 0, status enospc then done, no GLib warning" \
  "[ $status = 0 ] && [ \"$(column "$work/full/sweep.csv" status 2>/dev/null)\" = 'enospc done ' ] && ! grep -q CRITICAL \"$work/err\"" \
  "status $status: $(cat "$work/err"; cat "$work/full/sweep.csv" 2>/dev/null | cut -c1-80)"

echo "1..$n"
[ $failed = 0 ]
