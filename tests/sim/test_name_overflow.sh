#!/usr/bin/env bash
# tests/sim/test_name_overflow.sh COWSIM FORGE - a trace line that adds a name
# to a directory where FS_DIR_HASH_PROBE + 1 names of its hash are already
# taken: `cowsim run` refuses it with exit 2, naming the file, the line, the
# op and the path (escaped as a trace writes it), and says why (the hash
# window), for every op that adds a name (TAP). FORGE is tests/sim/colliding_names_trace.c.
set -u
cowsim=$1
forge=$2
. "$(dirname "$0")/../tap.sh"

for op in create mkdir symlink link rename snapshot; do
	"$forge" "$op" >"$work/$op.trace"
	last=$(wc -l <"$work/$op.trace")
	err=$("$cowsim" run "$work/$op.trace" -q --csv "$work/$op.csv" 2>&1 >/dev/null)
	status=$?
	check "$op into a full hash window exits 2" "[ $status = 2 ]" "$err"
	check "$op: the error names the trace's last line and the op" \
		"grep -q \"$op.trace:$last: $op \" <<<\"\$err\"" "$err"
	check "$op: the error says the name's hash window is full (at most 8 past its hash)" \
		"grep -q \"share this name's hash (the model keeps a colliding name at most 8 past its hash\" <<<\"\$err\"" "$err"
	check "$op: the new name is shown escaped as in a trace, not as raw bytes" \
		"! LC_ALL=C grep -q '[^ -~]' <<<\"\$err\" && grep -q '\"/h/w[0-9]*.*\\\\x' <<<\"\$err\"" "$err"
done
# One line before the last, the same trace runs: the window held its 9 names.
head -n -1 "$work/create.trace" >"$work/fits.trace"
"$cowsim" run "$work/fits.trace" -q --csv "$work/fits.csv" >/dev/null 2>&1
check "the trace without its last line runs (9 names of one hash fit)" "[ $? = 0 ]"
tap_done
