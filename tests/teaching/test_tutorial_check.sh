#!/usr/bin/env bash
# tests/teaching/test_tutorial_check.sh TUTORIAL_CHECK COWSIM - the tutorial
# check can fail (TAP): a wrong output, a failing command and a changed DOT
# picture are each caught; a true tutorial passes.
set -u
checker=$1
cowsim=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && echo "# $2" | head -20; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1" "${3:-}"; fi; }
mkdir "$work/tutorial"
printf 'cowsim-trace 1\nmkdir /a\nsync\nmark m\n' > "$work/tutorial/t.trace"
write_doc() { printf '# t\n\n```sh\n%s\n```\n\n```text\n%s\n```\n' "$1" "$2" > "$work/doc.md"; }

write_doc 'cowsim --version' "$("$cowsim" --version)"
bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>&1
check "a tutorial whose outputs are true passes" "[ $? = 0 ]"
write_doc 'cowsim --version' 'cowsim 0.0.0-not-this-one'
bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>"$work/err"
check "a wrong output fails with a diff" "[ $? = 1 ] && grep -q '^+cowsim ' '$work/err'"
write_doc 'cowsim no-such-command' ''
bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>&1
check "a failing command fails the check" "[ $? = 1 ]"
"$cowsim" draw "$work/tutorial/t.trace" --format dot -o "$work/tutorial/pic.dot"
sed -i 's/refs 1/refs 9/' "$work/tutorial/pic.dot"
printf '# t\n\n```sh\ncowsim draw t.trace --format dot -o pic.dot\n```\n' > "$work/doc.md"
bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>"$work/err"
check "a checked-in DOT picture that differs from today's drawing fails" "[ $? = 1 ] && grep -q 'pic.dot differs' '$work/err'" "$(cat "$work/err")"
printf '# t\n\n```text\norphan\n```\n' > "$work/doc.md"
bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>&1
check "a text block with no command before it is an error" "[ $? != 0 ]"

echo "1..$n"
[ $failed = 0 ]
