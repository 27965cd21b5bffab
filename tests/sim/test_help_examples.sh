#!/usr/bin/env bash
# tests/sim/test_help_examples.sh COWSIM SOURCE_ROOT - every example that
# `cowsim --help`, `cowsim COMMAND --help` and `cowsim gen NAME --help` prints
# runs as printed and exits 0 (TAP).  They run in one scratch folder, in the
# order a reader meets them (so `cowsim report cmp` finds the cmp that compare's
# example wrote), with small trees standing in for /usr/include and /tmp/tree
# and small sizes for bench.  A line that needs a tool this machine lacks (jq,
# strace that can trace, python3 with matplotlib: exit 77) is skipped, not failed.
set -u
cowsim=$(realpath "$1")
src=$(realpath "$2")
. "$(dirname "$0")/../tap.sh"
export PATH="$(dirname "$cowsim"):$PATH"

# --- the files the examples name ---------------------------------------------------
ex=$work/ex
mkdir -p "$ex/docs" "$ex/workloads" "$work/include/sys" "$work/tree"
cp -r "$src/docs/tutorial" "$ex/docs/"
cp -r "$src/workloads/scenarios" "$ex/workloads/"
for i in $(seq 1 30); do printf '#define X%d %d\n' "$i" "$i" >"$work/include/h$i.h"; done
for i in $(seq 1 10); do printf '#define Y%d %d\n' "$i" "$i" >"$work/include/sys/s$i.h"; done
for i in $(seq 1 10); do printf 'a needle %d\n' "$i" >"$work/tree/f$i.txt"; done
printf 'all:\n\techo built >built.txt\n' >"$ex/Makefile"

# small sizes where the example allows; the paths the examples name
small() {
  sed -e "s#/usr/include#$work/include#g" -e "s#/tmp/tree#$work/tree#g" \
      -e 's/--sizes 10000,100000/--sizes 1000/' -e 's/--year 100000/--year 1000/' \
      -e 's/--big-files 8000/--big-files 100/' -e 's/--snapshot-curve 20000/--snapshot-curve 1000/'
}
# The example lines of a help text on stdin, one a line ("\" continuations joined).
examples() {
  awk '/^Examples:/ {on = 1; next} on && /^$/ {exit} on {sub(/^ +/, ""); print}' |
    sed -e ':a' -e '/\\$/N; s/\\\n *//; ta'
}
can_trace=no
strace -f -qq -o /dev/null true >/dev/null 2>&1 && can_trace=yes
python3 -c 'import matplotlib' >/dev/null 2>&1 && have_mpl=yes || have_mpl=no
needs() { # LINE: why it cannot run here, or nothing
  case "$1" in
    *jq*) command -v jq >/dev/null || { echo "no jq"; return; } ;;
  esac
  case "$1" in
    *strace*|*'cowsim record'*) [ $can_trace = yes ] || { echo "strace cannot trace here"; return; } ;;
  esac
  case "$1" in
    *'cowsim plot'*) [ $have_mpl = yes ] || { echo "no python3 with matplotlib"; return; } ;;
  esac
}
run_examples() { # WHERE (the help's command line) HELP_FILE
  local where=$1 line why status
  while IFS= read -r line; do
    why=$(needs "$line")
    if [ -n "$why" ]; then
      skip "'$where' example runs: $line" "$why"
      continue
    fi
    (cd "$ex" && bash -o pipefail -c "$(printf '%s\n' "$line" | small)") >"$work/out" 2>"$work/err" </dev/null
    status=$?
    check "'$where' example exits 0: $line" "[ $status = 0 ]" "status $status: $(tail -5 "$work/err")"
  done < <(examples <"$2")
}

# --- in the order a reader meets them -------------------------------------------------
"$cowsim" --help >"$work/help.top"
run_examples "cowsim --help" "$work/help.top"
commands=$(awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}' "$work/help.top")
n_commands=$(echo $commands | wc -w)
check "cowsim --help lists the commands" "[ $n_commands -ge 10 ]" "$commands"
"$cowsim" gen --help >"$work/help.gen"
run_examples "cowsim gen --help" "$work/help.gen"
for s in $(awk '/^Scenarios:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}' "$work/help.gen"); do
  "$cowsim" gen "$s" --help >"$work/help.gen.$s"
  run_examples "cowsim gen $s --help" "$work/help.gen.$s"
done
# plot last: it draws what run, compare and sweep's examples wrote.
for c in $(echo $commands | tr ' ' '\n' | grep -v -x -e gen -e plot) plot; do
  "$cowsim" "$c" --help >"$work/help.$c"
  run_examples "cowsim $c --help" "$work/help.$c"
done
tap_done
