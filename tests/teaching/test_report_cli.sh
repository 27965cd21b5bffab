#!/usr/bin/env bash
# tests/teaching/test_report_cli.sh COWSIM TUTORIAL_DIR - `cowsim report` (TAP).
#
# Issue 8, item 3, and issue 17, item 4: a results folder becomes one
# self-contained page: a title made from the parameters, the plots first,
# each with the command that made it (and that command makes the same
# bytes again), then the one summary table (compare.md, its Markdown twin,
# is not shown again), the per-run tables folded in <details>; every image
# a data URI (no other source anywhere), the summary's parameter columns as
# parameters, the calibration error computed
# from the calibration CSV (or said to be absent) and the one that applies
# at the runs' nodesize (named, inferred or given); same folder, same bytes;
# a malformed CSV or an empty folder is exit 2 naming the file.
set -u
. "$(dirname "$0")/../tap.sh"
cowsim=$1
traces=$2

# A folder shaped as compare writes it, made with run and plot so that this
# test does not depend on compare's options: a summary CSV whose columns
# before "status" are the parameters, per-run CSVs, a Markdown table, a PNG.
dir="$work/cmp"; mkdir "$dir"
for mount in relatime noatime; do
  "$cowsim" run "$traces/ten-files.trace" --nodesize 4K --mount $mount --quiet --csv "$dir/$mount-inline.csv"
done
printf 'mount,policy,status,metadata_final\nrelatime,inline,done,69632\nnoatime,inline,done,65536\n' > "$dir/compare.csv"
printf '| mount | policy | metadata_final (MiB) |\n|---|---|---:|\n| relatime | inline | 0.1 |\n' > "$dir/compare.md"
printf 'trace=ten-files.trace\nnodesize=4096\nmounts=relatime,noatime\npolicies=inline\n' > "$dir/params.txt"
plotted=0
if "$cowsim" plot "$dir/relatime-inline.csv" "$dir/noatime-inline.csv" -o "$dir/compare" --x mark >/dev/null 2>&1; then plotted=1; fi
[ $plotted = 1 ] || printf '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>' > "$dir/compare.svg"
printf '# Notes\n\n| run | remark |\n|---|---|\n| relatime | grows |\n' > "$dir/notes.md"
# an SVG alone, whose description has XML entities: they are undone, then escaped for HTML
printf '<svg xmlns="http://www.w3.org/2000/svg" xmlns:dc="http://purl.org/dc/elements/1.1/" width="10" height="10"><metadata><dc:description>cowsim plot x.csv -o drawing --title=&quot;a &amp; b&quot;</dc:description></metadata><rect width="10" height="10"/></svg>' > "$dir/drawing.svg"
touch "$dir/.hidden" "$dir/half-written.tmp"
printf 'case,nodesize,mark,error_pct\na-16k,16384,after_grep,-3.20\na-4k,4096,after_grep,1.50\nb-4k,4096,after_copy,-0.25\n' > "$work/cal.csv"

"$cowsim" report "$dir" --calibration "$work/cal.csv" -o "$work/page.html" 2>"$work/err"; s=$?
page="$work/page.html"
check "report exits 0 and writes the page" "[ $s = 0 ] && [ -s '$page' ]" "$(cat "$work/err")"
check "every CSV is a table (summary + 2 runs + notes.md's table + calibration); compare.md is not" \
  "[ \$(grep -c '<table' '$page') = 5 ]" "$(grep -c '<table' "$page")"
check "the title is made from the parameters: trace, the values varied, the nodesize held fixed" \
  "grep -q '<h1>ten-files.trace: mount relatime, noatime × policy inline (nodesize 4 KiB)</h1>' '$page'" \
  "$(grep -o '<h1>.*</h1>' "$page")"
check "--title replaces it" \
  "'$cowsim' report '$dir' --calibration '$work/cal.csv' --title 'my <review>' -o - | grep -q '<h1>my &lt;review&gt;</h1>'"
first_figure=$(grep -bo '<figure' "$page" | head -1 | cut -d: -f1)
first_table=$(grep -bo '<table' "$page" | head -1 | cut -d: -f1)
check "the plots come before any table" "[ -n '$first_figure' ] && [ -n '$first_table' ] && [ $first_figure -lt $first_table ]" \
  "first <figure> at byte $first_figure, first <table> at $first_table"
check "the summary is shown once: its table once, compare.md not rendered but listed" \
  "[ \$(grep -c '<th>metadata_final</th>' '$page') = 1 ] && ! grep -q 'metadata_final (MiB)' '$page' && grep -q 'not repeated here: compare.md' '$page'"
check "per-run tables are folded, one <details> each" \
  "[ \$(grep -c '<details><summary>' '$page') = 2 ] && grep -q '<details><summary>noatime-inline.csv <small>4 rows' '$page'"
check "the parameter columns before status are listed with their values" \
  "grep -q '<b>Varied</b> (the columns of compare.csv before <code>status</code>): mount relatime, noatime; policy inline.' '$page'"
check "a key=value text file is shown as parameters" "grep -q '<code>nodesize=4096</code>' '$page'"
check "its lists of the values varied (mounts=, policies=) are not called held fixed" \
  "! grep -q '<code>mounts=\|<code>policies=' '$page'"
check "the SVG of a PNG shown is listed as such" "grep -q 'the same figures as SVG, for print: compare.svg' '$page' || [ $plotted = 0 ]"
check "an SVG's description is its command: XML entities undone, HTML-escaped once" \
  "grep -q 'drawing.svg, drawn in the folder by:<code>cowsim plot x.csv -o drawing --title=&quot;a &amp; b&quot;</code>' '$page'"
if [ $plotted = 1 ]; then
  check "a figure made by cowsim plot shows its command" \
    "grep -q 'compare.png, drawn in the folder by:<code>cowsim plot relatime-inline.csv noatime-inline.csv -o compare --x mark</code>' '$page'"
  # The caption's command, run in a copy of the folder, draws the same bytes.
  command=$(python3 -c 'import html, re, sys
print(html.unescape(re.search(r"compare.png, drawn in the folder by:<code>(.*?)</code>", open(sys.argv[1]).read()).group(1)))' "$page")
  mkdir "$work/again" && cp "$dir"/*.csv "$work/again/"
  cowsim_abs=$(realpath "$cowsim")
  (cd "$work/again" && eval "\"\$cowsim_abs\" ${command#cowsim }" >/dev/null 2>&1)
  check "the caption's command, run in the folder, makes the same PNG" "cmp -s '$dir/compare.png' '$work/again/compare.png'" "$command"
else
  skip "a figure made by cowsim plot shows its command" "cowsim plot cannot draw here"
  skip "the caption's command, run in the folder, makes the same PNG" "cowsim plot cannot draw here"
fi
imgs=$(grep -o '<img [^>]*>' "$page" | wc -l); data=$(grep -o '<img [^>]*src="data:image/[a-z+]*;base64,' "$page" | wc -l)
check "every image is inlined as a base64 data URI" "[ $imgs -ge 1 ] && [ $imgs = $data ]" "imgs $imgs data $data"
check "a PNG hides the SVG of the same plot" "[ $plotted = 0 ] || ! grep -q 'alt=\"compare.svg\"' '$page'"
check "no external resource: no src or href outside data: and #anchors" \
  "! grep -Eo '(src|href)=\"[^\"]*\"' '$page' | grep -Ev '(src|href)=\"(data:|#)'"
check "a Content-Security-Policy forbids any other source" "grep -q \"default-src 'none'\" '$page'"
check "the worst calibration error is computed from the file" "grep -q 'Worst error: -3.20%</b> (a-16k at after_grep)' '$page'"
check "the per-nodesize errors are shown and 4096 (named by params) is marked as applying" \
  "grep -q '<tr class=\"applies\"><td class=\"n\">4096</td><td class=\"n\">2</td><td class=\"n\">0.88</td><td class=\"n\">+1.50</td>' '$page'" \
  "$(grep -o '<tr[^>]*><td class="n">4096</td>.\{0,120\}' "$page")"
check "the error that applies is stated for the nodesize the folder names" \
  "grep -q 'The error that applies here, nodesize 4096: worst +1.50%</b> (a-4k at after_grep), mean |error| 0.88% over 2 calibration marks. Nodesize named by the folder' '$page'"
# A run-out case's other figures (commits, atime_lost) have bounds of their own: only metadata_used counts
printf 'case,nodesize,figure,mark,error_pct\na-16k,16384,metadata_used,after_grep,-3.20\nout-16k,16384,atime_lost,after_grep,45.00\nout-16k,16384,metadata_used,after_grep,1.00\n' > "$work/cal-fig.csv"
"$cowsim" report "$dir" --calibration "$work/cal-fig.csv" -o "$work/fig.html" 2>/dev/null
check "with a figure column, the worst error is metadata_used's, not a run-out case's atime_lost" \
  "grep -q 'Worst error: -3.20%</b> (a-16k at after_grep), over 2 rows' '$work/fig.html'" "$(grep -o 'Worst error.\{0,80\}' "$work/fig.html")"
mkdir "$work/named" && cp "$dir"/*-inline.csv "$work/named/"
"$cowsim" report "$work/named" --calibration "$work/cal.csv" -o "$work/named.html"
check "per-run CSVs name their nodesize (their identity columns), and the report reads it there" \
  "grep -q 'nodesize 4096: worst +1.50%.*Nodesize named by the folder' '$work/named.html'"
# CSVs written before the identity columns (design ... device_size) existed
mkdir "$work/noparams" && cp "$dir"/compare.csv "$work/noparams/"
for f in "$dir"/*-inline.csv; do
  python3 -c 'import csv, sys
identity = {"design", "mount", "policy", "nodesize", "device_size"}
rows = list(csv.reader(open(sys.argv[1])))
keep = [i for i, name in enumerate(rows[0]) if name not in identity]
csv.writer(sys.stdout, lineterminator="\n").writerows([[r[i] for i in keep] for r in rows])' "$f" >"$work/noparams/$(basename "$f")"
done
"$cowsim" report "$work/noparams" --calibration "$work/cal.csv" -o "$work/inferred.html"
check "a folder that does not name its nodesize (older CSVs) has it inferred from the per-run CSVs, and says so" \
  "grep -q 'nodesize 4096: worst +1.50%.*Nodesize inferred: .* whole blocks of 4096 bytes' '$work/inferred.html'"
"$cowsim" report "$work/noparams" --calibration "$work/cal.csv" --nodesize 16K -o "$work/given.html"
check "--nodesize names the nodesize that applies" \
  "grep -q 'nodesize 16384: worst -3.20%.*given with --nodesize' '$work/given.html' && ! grep -q 'nodesize 4096: worst' '$work/given.html'"
"$cowsim" report "$work/noparams" --calibration "$work/cal.csv" --nodesize 32K -o "$work/none32.html"
check "a nodesize with no calibration case is said to have none" "grep -q 'No calibration case at nodesize 32768' '$work/none32.html'"
check "hidden and temporary files are left out and counted" "grep -q '2 hidden or temporary files left out' '$page'"
check "Markdown tables become HTML tables" "grep -q '<th>remark</th>' '$page'"
"$cowsim" report "$dir" --calibration "$work/cal.csv" -o "$work/again.html"
check "the same folder gives the same bytes" "cmp -s '$page' '$work/again.html'"
"$cowsim" report "$dir" --calibration "$work/none.csv" -o "$work/nocal.html"
check "an absent calibration file is said to be absent" "grep -q 'No calibration error applies: the file is absent' '$work/nocal.html'"
"$cowsim" report "$dir" --calibration "$work/cal.csv" && cp "$dir/report.html" "$work/first.html"
"$cowsim" report "$dir" --calibration "$work/cal.csv"
check "without -o the page is DIR/report.html, and the next report leaves the last one out" \
  "[ -s '$work/first.html' ] && cmp -s '$dir/report.html' '$work/first.html' && ! grep -q 'not shown: report.html' '$dir/report.html'"
rm "$dir/report.html"
"$cowsim" report "$dir" --calibration "$work/cal.csv" --max-rows 2 -o "$work/short.html"
check "--max-rows cuts per-run tables and says so" "grep -q 'The first 2 of 4 rows' '$work/short.html'"

# --- bad input ----------------------------------------------------------------
mkdir "$work/empty"
"$cowsim" report "$work/empty" 2>"$work/err"; s=$?
check "a folder without results is exit 2 with a message" "[ $s = 2 ] && grep -q 'no results here' '$work/err'"
"$cowsim" report "$work/missing" 2>"$work/err"; s=$?
check "a missing folder is exit 2 naming it" "[ $s = 2 ] && grep -q 'missing' '$work/err'"
mkdir "$work/bad"; printf 'a,b\n1,2\n3,"unterminated\n' > "$work/bad/x.csv"
"$cowsim" report "$work/bad" 2>"$work/err"; s=$?
check "a malformed CSV is exit 2 naming file, line and field" "[ $s = 2 ] && grep -q 'x.csv:3: field 2: unterminated quoted field' '$work/err'" "$(cat "$work/err")"
"$cowsim" report "$dir" --nodesize 3000 -o "$work/x.html" 2>"$work/err"; s=$?
check "--nodesize that is not a btrfs nodesize is exit 2" "[ $s = 2 ] && grep -q 'not a btrfs nodesize' '$work/err'"
"$cowsim" report 2>/dev/null; s=$?
check "no DIR is exit 2" "[ $s = 2 ]"

tap_done
