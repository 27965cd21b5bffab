# tests/reliability/tap.sh - the TAP helpers the reliability scripts source.
# ok/not_ok/check as in tests/sim/test_run_cli.sh; finish prints the plan.
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && printf '# %s\n' "$2"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1" "${3:-}"; fi; }
finish() { echo "1..$n"; [ "$failed" = 0 ]; }

# csv_whole FILE: every line has the header's field count and the file ends
# in a newline. The CSV quotes no field of cowsim's columns with a comma in
# it except labels, and the traces here use plain labels, so a split on ','
# counts fields.
csv_whole() {
  [ -s "$1" ] && [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] &&
    awk -F, 'NR == 1 {n = NF} NF != n {bad = 1} END {exit bad}' "$1"
}

# check_todo NAME TEST REASON: a known bug, reported but not fixed yet. TAP's
# "# TODO" makes meson count a failure as expected; once the bug is fixed the
# test passes, meson reports an unexpected pass (a failure), and the TODO
# must go.
check_todo() {
  n=$((n + 1))
  if eval "$2"; then echo "ok $n - $1 # TODO $3"; else echo "not ok $n - $1 # TODO $3"; fi
}
