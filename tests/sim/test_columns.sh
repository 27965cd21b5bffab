#!/usr/bin/env bash
# tests/sim/test_columns.sh COWSIM DOCS_COLUMNS_MD - `cowsim columns`: the one
# list of columns (results/columns.h) as people, programs and docs read it (TAP).
set -u
cowsim=$1 doc=$2
. "$(dirname "$0")/../tap.sh"

"$cowsim" columns --json >"$work/columns.json"
check "columns --json exits 0" "[ $? = 0 ]"
/usr/bin/python3 - "$work/columns.json" >"$work/json.out" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
units = {"text", "count", "bytes", "seconds", "ratio", "percent"}
seen = {}
for s in d["schemas"]:
    for c in s["columns"]:
        assert c["unit"] in units, c
        assert c["doc"], c
        assert seen.setdefault(c["name"], c["unit"]) == c["unit"], c["name"]
print("schemas", " ".join(s["name"] for s in d["schemas"]))
for s in d["schemas"]:
    print(s["name"], ",".join(c["name"] for c in s["columns"]))
PY
check "the JSON parses, every unit is known and a name has one unit" "[ $? = 0 ]" "$(cat "$work/json.out")"
check "the JSON lists the run, subvolume, parameter, summary and calibration schemas" \
  "grep -qx 'schemas run subvolume parameter summary calibration' \"$work/json.out\""

"$cowsim" gen synthetic --files 30 --seed 1 -o "$work/t.trace" 2>/dev/null
"$cowsim" run "$work/t.trace" --csv "$work/run.csv" --subvolume-csv "$work/sub.csv" --quiet
check "the run schema is the header of 'run --csv', in order" \
  "[ \"run \$(head -1 \"$work/run.csv\")\" = \"\$(grep '^run ' \"$work/json.out\")\" ]"
check "the subvolume schema is the header of 'run --subvolume-csv'" \
  "[ \"subvolume \$(head -1 \"$work/sub.csv\")\" = \"\$(grep '^subvolume ' \"$work/json.out\")\" ]"
calibration=$(dirname "$0")/../../results/calibration.csv
check "the calibration schema is the header of results/calibration.csv" \
  "[ \"calibration \$(head -1 \"$calibration\")\" = \"\$(grep '^calibration ' \"$work/json.out\")\" ]"
want="mount,policy,$(grep '^summary ' "$work/json.out" | cut -d' ' -f2)"
got=$(head -1 "$(dirname "$0")/../../results/compare-seed.csv")
check "compare-seed.csv is mount, policy, then the summary schema" "[ \"$got\" = \"$want\" ]" "$got"

"$cowsim" columns --markdown >"$work/columns.md"
check "docs/columns.md is what 'cowsim columns --markdown' prints (regenerate it after editing columns.h)" \
  "cmp -s \"$work/columns.md\" \"$doc\"" "$(diff "$doc" "$work/columns.md" | head -20)"
"$cowsim" columns >"$work/columns.txt"
check "the plain listing names every column with its unit" \
  "grep -Eq '^  free_min +bytes ' \"$work/columns.txt\" && grep -Eq '^  atime_dropped +count ' \"$work/columns.txt\""
"$cowsim" columns extra >/dev/null 2>"$work/err"
check "an argument is refused with exit 2" "[ $? = 2 ] && [ -s \"$work/err\" ]"
tap_done
