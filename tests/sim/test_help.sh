#!/usr/bin/env bash
# tests/sim/test_help.sh COWSIM - the command line's conventions (sim/cli.h) as
# a user meets them: every command's --help, one meaning per flag, '-' for
# stdin/stdout, and a CSV on stdout that nothing else shares (TAP).
set -u
cowsim=$(realpath "$1")
. "$(dirname "$0")/../tap.sh"

# --- every command's --help ------------------------------------------------------
"$cowsim" --help >"$work/top" 2>&1
check "cowsim --help exits 0" "[ $? = 0 ]"
commands=$(awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}' "$work/top")
n_commands=$(echo $commands | wc -w)
check "cowsim --help lists the commands" "[ $n_commands -ge 10 ]" "$commands"
help_ok() { # FILE WHAT: usage line, examples and exit statuses
  local f=$1 what=$2
  [ "$(sed -n 1p "$f")" = "Usage:" ] || { echo "first line: $(sed -n 1p "$f")"; return 1; }
  grep -Eq "^  cowsim $what \[OPTION…\]" "$f" || { echo "no 'cowsim $what [OPTION…]' usage"; return 1; }
  [ "$(awk '/^Examples:/ {on = 1; next} on && /^  cowsim / {n++} on && /^$/ {exit} END {print n + 0}' "$f")" -ge 2 ] ||
    { echo "fewer than 2 examples"; return 1; }
  awk '/^Exit status:/ {on = 1; next} on && /^  0  / {z = 1} on && /^  2  / {t = 1} END {exit !(z && t)}' "$f" ||
    { echo "no exit statuses 0 and 2"; return 1; }
}
for c in $commands; do
  "$cowsim" "$c" --help >"$work/help.$c" 2>&1
  status=$?
  check "cowsim $c --help exits 0 and shows usage, examples and exit statuses" \
    "[ $status = 0 ] && diag=\$(help_ok \"$work/help.$c\" $c)" "\$diag"
done
help_ok "$work/top" COMMAND >/dev/null
check "cowsim --help itself has usage, examples and exit statuses" "[ $? = 0 ]"
for s in $(awk '/^Scenarios:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}' "$work/help.gen"); do
  "$cowsim" gen "$s" --help >"$work/help.gen.$s" 2>&1
  check "cowsim gen $s --help exits 0 and shows usage, examples and exit statuses" \
    "[ $? = 0 ] && help_ok \"$work/help.gen.$s\" 'gen $s' >/dev/null"
done
for c in run compare sweep draw; do
  check "cowsim $c --help shows the model options" \
    "grep -q -- '-m, --mount=' \"$work/help.$c\" && grep -q -- '--policy=' \"$work/help.$c\" && grep -q -- '--nodesize=' \"$work/help.$c\""
done
version=$("$cowsim" -V)
check "cowsim -V prints the version" "[[ \"$version\" == 'cowsim '[0-9]* ]]" "$version"
check "cowsim run --version prints the same" "[ \"\$(\"$cowsim\" run --version)\" = \"$version\" ]"
if git -C "$(dirname "$0")" rev-parse --short HEAD >/dev/null 2>&1; then
  check "the version names the commit it was built from" "[[ \"$version\" == *'(commit '*')' ]]" "$version"
fi

# --- one meaning per flag, and the old spellings ----------------------------------
"$cowsim" gen seed-experiment --files 60 --snapshots 2 --seed 3 -o "$work/t.trace"
refused() { # WANT_TEXT ARGS...: exit 2 and a message naming the new spelling
  local want=$1; shift
  "$cowsim" "$@" >"$work/out" 2>"$work/err"
  local status=$?
  [ $status = 2 ] && grep -q -- "$want" "$work/err" || { echo "status $status: $(cat "$work/err")"; return 1; }
}
check "run -o relatime (the old mount flag) is refused, naming -m/--mount" \
  "diag=\$(refused -m/--mount run \"$work/t.trace\" -o relatime)" "\$diag"
check "run -o noatime,lazytime is refused too" \
  "diag=\$(refused -m/--mount run \"$work/t.trace\" -o noatime,lazytime)" "\$diag"
check "run -m single (the old metadata flag) is refused, naming --metadata" \
  "diag=\$(refused -- --metadata run \"$work/t.trace\" -m single)" "\$diag"
check "sweep -V nodesize=... (the old --vary) is refused, naming --vary" \
  "diag=\$(refused -- --vary sweep \"$work/t.trace\" -V nodesize=4K,16K)" "\$diag"
check "compare -O DIR (the old output flag) is refused, naming -o/--output" \
  "diag=\$(refused -o/--output compare \"$work/t.trace\" -O \"$work/cmp\")" "\$diag"
"$cowsim" run "$work/t.trace" -m noatime -o "$work/o.csv" --quiet
check "run -m sets the mount and -o the CSV" "[ $? = 0 ] && [ \"\$(head -c 9 \"$work/o.csv\")\" = op_index, ]"
"$cowsim" run "$work/t.trace" -m noatime --csv "$work/c.csv" --quiet
check "--csv is the same as --output" "cmp -s \"$work/o.csv\" \"$work/c.csv\""
"$cowsim" compare "$work/t.trace" --policies inline -o "$work/cmp" --quiet >/dev/null 2>&1
check "compare -o DIR writes the folder" "[ -s \"$work/cmp/compare.csv\" ]"

# --- '-' is stdin or stdout everywhere ---------------------------------------------
(cd "$work" && "$cowsim" gen synthetic --files 20 -o - >"$work/gen.out")
check "gen -o - writes the trace to stdout and no file named '-'" \
  "head -1 \"$work/gen.out\" | grep -q cowsim-trace && [ ! -e \"$work/-\" ]"
(cd "$work" && "$cowsim" report "$work/cmp" -o - >"$work/page.html")
check "report -o - writes the page to stdout and no file named '-'" \
  "grep -q '<html' \"$work/page.html\" && [ ! -e \"$work/-\" ]"
"$cowsim" draw "$work/t.trace" -o - >"$work/draw.out"
check "draw -o - draws on stdout" "[ -s \"$work/draw.out\" ]"

# --- a CSV on stdout is only the CSV ---------------------------------------------------
"$cowsim" run "$work/t.trace" -o "$work/file.csv" >/dev/null 2>&1
"$cowsim" run "$work/t.trace" --csv - 2>"$work/people" | /usr/bin/python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
want = list(csv.reader(open(sys.argv[1])))
assert rows == want, "stdout is not exactly the CSV: %d rows against %d" % (len(rows), len(want))
assert len(rows) > 2 and len(set(map(len, rows))) == 1
print(len(rows) - 1)' "$work/file.csv" >"$work/nrows" 2>"$work/pyerr"
check "run --csv - piped into Python's csv reader gives exactly the rows of the file" "[ -s \"$work/nrows\" ]" \
  "$(cat "$work/pyerr")"
check "and the table for people went to stderr" "grep -q after_grep \"$work/people\""
tap_done
