#!/usr/bin/env bash
# tests/sim/test_json.sh COWSIM - the files for programs (TAP): run's,
# compare's and sweep's --json summaries hold exactly the values of their
# CSVs, alone on stdout (the table goes to stderr); parameters.json beside
# compare's and sweep's folders and FILE.parameters.json beside a report name
# cowsim's version and commit, the trace's sha256, the command that generated
# it (which writes the same trace again) and every option --help lists.
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"

# same_values JSON_ARRAY_EXPR JSON CSV [FILTER]: every object of the JSON array
# equals the CSV line at its place, column by column (null is an empty field;
# numbers are compared as numbers); prints what differs.
same_values() {
  python3 - "$@" <<'PY'
import csv, json, sys
key, jpath, cpath = sys.argv[1], sys.argv[2], sys.argv[3]
only_marks = len(sys.argv) > 4
doc = json.load(open(jpath))
objects = doc[key]
lines = list(csv.DictReader(open(cpath, newline="")))
if only_marks:
    lines = [l for l in lines if l["label"]]
if len(objects) != len(lines) or not lines:
    sys.exit(f"{len(objects)} objects in {key}, {len(lines)} CSV lines")
for i, (o, l) in enumerate(zip(objects, lines)):
    for name, text in l.items():
        if name not in o:
            sys.exit(f"line {i}: column {name} missing from the JSON")
        v = o[name]
        if v is None:
            ok = text == ""
        elif isinstance(v, bool):
            ok = False
        elif isinstance(v, (int, float)):
            ok = text != "" and float(text) == v and (isinstance(v, float) or str(v) == text)
        else:
            ok = v == text
        if not ok:
            sys.exit(f"line {i}: column {name}: JSON {v!r}, CSV {text!r}")
PY
}
# check_same NAME KEY JSON CSV [marks]: a check that same_values finds nothing
check_same() { local d; d=$(same_values "${@:2}" 2>&1); check "$1" "[ -z \"\$d\" ]" "$d"; }
# json_get FILE EXPR: a Python expression over the document d
json_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# the long options a --help lists, but --help, --version and --json
help_options() { "$cowsim" "$@" --help | grep -o -- '^  \(-[a-zA-Z], \)\?--[a-z-]*' | sed 's/.*--//' |
                 grep -vx 'help\|version\|json' | sort; }
option_keys() { json_get "$1" "'\n'.join(sorted(d['options']))"; }

"$cowsim" gen seed-experiment --files 200 --snapshots 2 -o "$work/seed.trace"
sha=$(sha256sum "$work/seed.trace" | cut -d' ' -f1)
version=$("$cowsim" --version)

# --- the trace names its generator, on a line that moves no op ---------------
line2=$(sed -n 2p "$work/seed.trace")
check "a generated trace's second line is the generator's summary and its command" \
  "[[ \"\$line2\" == '# cowsim gen seed-experiment: '*'; command: cowsim gen seed-experiment --files 200 --snapshots 2' ]]" "$line2"
check "the first op is still on line 3 (error positions do not move)" "sed -n 3p '$work/seed.trace' | grep -q '^clock @'"
command=${line2#*; command: cowsim }
eval "\"\$cowsim\" $command" >"$work/again.trace"
check "the recorded command writes the same trace again" "cmp -s '$work/seed.trace' '$work/again.trace'"

# --- run --json ------------------------------------------------------------------
"$cowsim" run "$work/seed.trace" --nodesize 16K -o "$work/run.csv" --json >"$work/run.json" 2>"$work/run.err"
status=$?
check "run --json exits 0 and its stdout is one JSON document" \
  "[ $status = 0 ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$work/run.json'" "$(head -c 600 "$work/run.json")"
check "run --json: the table goes to stderr" "grep -q '^label ' '$work/run.err'" "$(cat "$work/run.err")"
check_same "run --json: every mark's row, every column, equals the CSV's" marks "$work/run.json" "$work/run.csv" marks
last_meta=$(python3 -c 'import csv,sys; print(list(csv.DictReader(open(sys.argv[1])))[-1]["metadata_used"])' "$work/run.csv")
check "run --json: status, exit status and final metadata" \
  "[ \"\$(json_get '$work/run.json' 'd[\"status\"], d[\"exit_status\"], d[\"metadata_used\"]')\" = \"done 0 $last_meta\" ]" \
  "$(json_get "$work/run.json" 'd["status"], d["exit_status"], d["metadata_used"]')"
check "run --json: the trace's sha256 and generator, cowsim's version and commit" \
  "[ \"\$(json_get '$work/run.json' 'd[\"trace\"][\"sha256\"]')\" = $sha ] &&
   [ \"\$(json_get '$work/run.json' 'd[\"trace\"][\"gen_command\"]')\" = 'cowsim gen seed-experiment --files 200 --snapshots 2' ] &&
   [[ \"\$version\" == *\"\$(json_get '$work/run.json' 'd[\"cowsim\"][\"version\"]')\"* ]] &&
   [[ \"\$version\" == *\"\$(json_get '$work/run.json' 'd[\"cowsim\"][\"commit\"] or \"\"')\"* ]]"
check "run --json: options holds every option of run --help, and the model the values used" \
  "[ \"\$(option_keys '$work/run.json')\" = \"\$(help_options run)\" ] &&
   [ \"\$(json_get '$work/run.json' 'd[\"options\"][\"nodesize\"], d[\"model\"][\"nodesize\"], d[\"model\"][\"mount\"]')\" = '16K 16384 relatime' ]" \
  "$(diff <(option_keys "$work/run.json") <(help_options run))"
"$cowsim" run "$work/seed.trace" -o - --json="$work/run2.json" >"$work/stdout.csv" 2>/dev/null
check "run -o - --json=FILE: the CSV alone on stdout, the JSON in FILE" \
  "cmp -s '$work/stdout.csv' '$work/run.csv' && [ \"\$(json_get '$work/run2.json' 'len(d[\"marks\"])')\" = 4 ]"
"$cowsim" run "$work/seed.trace" -o - --json >/dev/null 2>"$work/err"
check "run -o - --json: two outputs on stdout are refused, exit 2" "[ $? = 2 ] && grep -q 'stdout' '$work/err'"
"$cowsim" run "$work/seed.trace" --find-min-device --json >/dev/null 2>&1
check "run --find-min-device --json is refused, exit 2" "[ $? = 2 ]"
printf 'cowsim-trace 1\nmkdir /a\nmark before\ncreate /a/big size=1G\nmark after\n' >"$work/big.trace"
"$cowsim" run "$work/big.trace" --device-size 700M --json >"$work/full.json" 2>/dev/null; status=$?
check "run --json on a device too small: exit 2 and a summary saying enospc where it was met" \
  "[ $status = 2 ] && [ \"\$(json_get '$work/full.json' 'd[\"status\"], d[\"exit_status\"], d[\"first_enospc\"][\"line\"], len(d[\"marks\"])')\" = 'enospc 2 4 1' ]" \
  "status $status; $(head -c 300 "$work/full.json")"

# --- compare --json and parameters.json --------------------------------------------
"$cowsim" compare "$work/seed.trace" --policies inline,side-table --mounts relatime,noatime -o "$work/cmp" \
  --nodesize 16K --json >"$work/cmp.json" 2>"$work/cmp.err"
status=$?
check "compare --json exits 0, its stdout one JSON document, the table on stderr" \
  "[ $status = 0 ] && json_get '$work/cmp.json' 1 >/dev/null && grep -q '^mount ' '$work/cmp.err'" "$(tail -5 "$work/cmp.err")"
check_same "compare --json: every run, every column, equals compare.csv" runs "$work/cmp.json" "$work/cmp/compare.csv"
check "compare --json: each run names its CSV, which exists" \
  "json_get '$work/cmp.json' '\"\n\".join(r[\"csv\"] for r in d[\"runs\"])' | while read -r f; do [ -s \"\$f\" ] || exit 1; done"
p=$work/cmp/parameters.json
check "compare's parameters.json: schema, cowsim's version, the trace's sha256 and generator" \
  "[ \"\$(json_get '$p' 'd[\"schema\"], d[\"trace\"][\"sha256\"], d[\"trace\"][\"gen_command\"]')\" = \"cowsim-parameters/1 $sha cowsim gen seed-experiment --files 200 --snapshots 2\" ] &&
   [[ \"\$version\" == *\"\$(json_get '$p' 'd[\"cowsim\"][\"version\"]')\"* ]]" "$(head -c 800 "$p")"
check "compare's parameters.json: every option of compare --help with its value, the defaults filled" \
  "[ \"\$(option_keys '$p')\" = \"\$(help_options compare)\" ] &&
   [ \"\$(json_get '$p' 'd[\"options\"][\"mounts\"], d[\"options\"][\"nodesize\"], d[\"options\"][\"every\"], d[\"model\"][\"nodesize\"], d[\"model\"][\"device_size\"]')\" = 'relatime,noatime 16K 0 16384 4294967296' ]" \
  "$(diff <(option_keys "$p") <(help_options compare))"
check "compare's parameters.json names each run's CSV" "[ \"\$(json_get '$p' 'len(d[\"runs\"]), d[\"runs\"][3][\"csv\"]')\" = '4 noatime-side-table.csv' ]"
check "no parameters.txt any more" "[ ! -e '$work/cmp/parameters.txt' ]"

# --- report: FILE.parameters.json beside the page --------------------------------
"$cowsim" report "$work/cmp" -o "$work/page.html" 2>/dev/null
check "report -o page.html writes page.parameters.json with the folder's parameters embedded" \
  "[ \"\$(json_get '$work/page.parameters.json' 'd[\"command\"], d[\"options\"][\"output\"], d[\"folder_parameters\"][\"trace\"][\"sha256\"], len(d[\"calibration\"][\"sha256\"] or \"\")')\" = \"report $work/page.html $sha 64\" ]" \
  "$(head -c 600 "$work/page.parameters.json" 2>&1)"
check "report: its options are every option of report --help" \
  "[ \"\$(option_keys '$work/page.parameters.json')\" = \"\$(help_options report)\" ]"
check "the page shows the folder's parameters.json: the trace's sha256 and generator held fixed" "grep -q 'parameters.json' '$work/page.html' && grep -q 'trace_sha256=$sha' '$work/page.html' && grep -q 'gen_command=cowsim gen seed-experiment' '$work/page.html'"
"$cowsim" report "$work/cmp" 2>/dev/null && cp "$work/cmp/report.html" "$work/first.html" &&
  "$cowsim" report "$work/cmp" 2>/dev/null
check "a report made again over its own output (and its parameters file) is the same bytes" \
  "cmp -s '$work/first.html' '$work/cmp/report.html' && [ -s '$work/cmp/report.parameters.json' ]"

# --- sweep --json and parameters.json ------------------------------------------------
template='seed-experiment --files 100 --snapshots {snapshots}'
"$cowsim" sweep --gen "$template" --vary snapshots=0,2 --vary nodesize=4K,16K -o "$work/sw" --json \
  >"$work/sw.json" 2>"$work/sw.err"
status=$?
check "sweep --json exits 0, its stdout one JSON document" "[ $status = 0 ] && json_get '$work/sw.json' 1 >/dev/null" \
  "$(tail -5 "$work/sw.err")"
check_same "sweep --json: every point, every column, equals sweep.csv" points "$work/sw.json" "$work/sw/sweep.csv"
check "sweep --json: points in grid order, with their CSV" \
  "[ \"\$(json_get '$work/sw.json' '[p[\"index\"] for p in d[\"points\"]], d[\"points_total\"], all(__import__(\"os\").path.getsize(p[\"csv\"]) for p in d[\"points\"])')\" = '[0, 1, 2, 3] 4 True' ]"
p=$work/sw/parameters.json
check "sweep's parameters.json: the --gen command, the values varied, every option of sweep --help" \
  "[ \"\$(json_get '$p' 'd[\"trace\"][\"gen_command\"], d[\"vary\"][\"nodesize\"], d[\"points\"]')\" = \"$template ['4K', '16K'] 4\" ] &&
   [ \"\$(option_keys '$p')\" = \"\$(help_options sweep)\" ]" "$(diff <(option_keys "$p") <(help_options sweep))"
"$cowsim" sweep "$work/seed.trace" --vary nodesize=4K,16K -o "$work/sw2" -q 2>/dev/null
check "sweep TRACE's parameters.json: the trace's sha256 and generator" \
  "[ \"\$(json_get '$work/sw2/parameters.json' 'd[\"trace\"][\"sha256\"], d[\"trace\"][\"gen_command\"]')\" = \"$sha cowsim gen seed-experiment --files 200 --snapshots 2\" ]"
tap_done
