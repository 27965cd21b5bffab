# tests/teaching/tap.sh - the TAP helpers of the shell tests (source it; also
# used by tests/strace/). It makes $work, a scratch folder removed at exit.
#
#   ok NAME                       a passing test
#   not_ok NAME [DIAGNOSTIC]      a failing one; the diagnostic's first 20 lines as "# " lines
#   skip NAME REASON              a test that cannot run here
#   check NAME CONDITION [DIAG]   ok or not_ok as the eval'ed CONDITION says
#   note TEXT                     a "# TEXT" line: figures shown whether the test passes or not
#   tap_done                      the plan line; returns 1 when a test failed
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
note() { printf '%s\n' "$1" | sed 's/^/# /'; }
tap_done() { echo "1..$n"; [ "$failed" = 0 ]; }
