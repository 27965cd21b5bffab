# tests/tap.sh - the TAP helpers every shell test sources:
#
#   . "$(dirname "$0")/../tap.sh"
#
# It makes $work, a scratch folder removed at exit, and counts tests in $n
# and failures in $failed.
#
#   ok NAME                       a passing test
#   not_ok NAME [DIAGNOSTIC]      a failing one; the diagnostic's first 20 lines as "# " lines
#   skip NAME REASON              a test that cannot run here
#   check NAME CONDITION [DIAG]   ok or not_ok as the eval'ed CONDITION says
#   check_todo NAME COND REASON   a known bug: TAP's "# TODO" makes meson count a
#                                 failure as expected and a pass as a failure,
#                                 so the TODO goes with the fix
#   note TEXT                     a "# TEXT" line: figures shown whether the test passes or not
#   csv_whole FILE                the file ends in a newline and every line has
#                                 the header's field count (labels here have no commas)
#   tap_done (or finish)          the plan line; returns 1 when a test failed
n=0 failed=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
  if [ $# -gt 1 ]; then printf '%s\n' "$2" | head -20 | sed 's/^/# /'; fi
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1" "${3:-}"; fi; }
check_todo() {
  n=$((n + 1))
  if eval "$2"; then echo "ok $n - $1 # TODO $3"; else echo "not ok $n - $1 # TODO $3"; fi
}
note() { printf '%s\n' "$1" | sed 's/^/# /'; }
csv_whole() {
  [ -s "$1" ] && [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] &&
    awk -F, 'NR == 1 {n = NF} NF != n {bad = 1} END {exit bad}' "$1"
}
tap_done() { echo "1..$n"; [ "$failed" = 0 ]; }
finish() { tap_done; }
