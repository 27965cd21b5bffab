#!/usr/bin/env bash
# tests/install/test_install.sh BUILD_DIR SOURCE_DIR - `meson install` gives a
# cowsim that works without its source tree (TAP).
#
# Installs BUILD_DIR with DESTDIR into a scratch folder, copies the installed
# prefix elsewhere, then, in a private mount namespace where SOURCE_DIR (and
# the build inside it) is hidden under an empty tmpfs - as if the tree had
# been moved away - runs the seed experiment, compare, plot and report from
# the copy. Skipped (77) where mount namespaces are not allowed (not root).
set -u
build=$(realpath "$1") source=$(realpath "$2")
. "$(dirname "$0")/../tap.sh"

if ! unshare --mount true 2>/dev/null; then
  echo "1..0 # SKIP no mount namespaces here (run as root)"
  exit 77
fi
DESTDIR=$work/stage meson install -C "$build" --no-rebuild --quiet >"$work/install.log" 2>&1
check "meson install with DESTDIR succeeds" "[ $? = 0 ]" "$(tail -20 "$work/install.log")"
bin=$(find "$work/stage" -path '*/bin/cowsim' -type f | head -1)
prefix=${bin%/bin/cowsim}
mkdir -p "$work/elsewhere" && cp -a "$prefix/." "$work/elsewhere/"
p=$work/elsewhere
for f in bin/cowsim bin/btrfs-replay share/cowsim/plot.py share/cowsim/plot_calibration.py \
         share/cowsim/calibration.csv share/man/man1/cowsim.1 share/man/man1/cowsim-run.1 \
         share/man/man1/cowsim-compare.1 share/man/man1/btrfs-replay.1 \
         share/bash-completion/completions/cowsim share/bash-completion/completions/btrfs-replay; do
  check "the install has $f" "[ -s \"$p/$f\" ]"
done
check "the man pages are roff with a NAME section" \
  "head -1 \"$p/share/man/man1/cowsim-run.1\" | grep -q '^\\.TH COWSIM-RUN 1' && grep -q '^\\.SH NAME' \"$p/share/man/man1/cowsim-run.1\""

# Everything below runs with the source tree out of sight.
cat >"$work/inner.sh" <<INNER
set -u
mount -t tmpfs cowsim-hidden "$source" || exit 90
cd "$work"
[ -z "\$(ls -A "$source")" ] || exit 91
"$p/bin/cowsim" --version >version.out 2>&1 || exit 10
"$p/bin/btrfs-replay" --help >replay-help.out 2>&1 || exit 11
"$p/bin/cowsim" gen seed-experiment --files 300 --snapshots 2 --seed 5 -o seed.trace 2>gen.err || exit 12
"$p/bin/cowsim" run seed.trace -o seed.csv --quiet 2>run.err || exit 13
"$p/bin/cowsim" compare seed.trace --mounts relatime,noatime -o cmp --quiet >/dev/null 2>compare.err || exit 14
"$p/bin/cowsim" report cmp -o page.html 2>report.err || exit 15
"$p/bin/cowsim" plot seed.csv --x mark -o seed-plot >/dev/null 2>plot.err || exit 16
exit 0
INNER
unshare --mount bash "$work/inner.sh"
status=$?
check "in a namespace without the source tree, the installed cowsim runs the seed experiment, compare, report and plot" \
  "[ $status = 0 ]" "step $status: $(cat "$work"/*.err 2>/dev/null | tail -10)"
check "the installed cowsim names its version" "grep -q '^cowsim [0-9]' \"$work/version.out\""
check "the seed experiment's CSV has the four marks" "[ \$(grep -c ',after_' \"$work/seed.csv\") = 4 ]"
check "compare drew its plot with the installed plot.py" "[ -s \"$work/cmp/compare.png\" ] && [ -s \"$work/cmp/compare.svg\" ]"
check "report found the installed calibration.csv: an error applies" \
  "grep -q 'id=\"calibration\"' \"$work/page.html\" && ! grep -q 'No calibration error applies' \"$work/page.html\""
check "cowsim plot drew with the installed plot.py" "[ -s \"$work/seed-plot.png\" ]"
tap_done
