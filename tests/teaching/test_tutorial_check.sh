#!/usr/bin/env bash
# tests/teaching/test_tutorial_check.sh TUTORIAL_CHECK COWSIM - the tutorial
# check can fail (TAP): a wrong output, a failing command and a changed DOT
# picture are each caught; a true tutorial passes; --update rewrites the
# outputs and pictures from the commands, keeps the prose and names the prose
# numbers gone stale, and the check still fails on an output that differs.
set -u
. "$(dirname "$0")/../tap.sh"
checker=$1
cowsim=$2
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
cp "$work/doc.md" "$work/failing.md"
bash "$checker" --update "$cowsim" "$work/doc.md" >/dev/null 2>&1
check "--update with a failing command exits 1 and leaves the tutorial as it was" "[ $? = 1 ] && cmp -s '$work/doc.md' '$work/failing.md'"
"$cowsim" draw "$work/tutorial/t.trace" --format dot -o "$work/tutorial/pic.dot"
sed -i 's/refs 1/refs 9/' "$work/tutorial/pic.dot"
printf '# t\n\n```sh\ncowsim draw t.trace --format dot -o pic.dot\n```\n' > "$work/doc.md"
bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>"$work/err"
check "a checked-in DOT picture that differs from today's drawing fails" "[ $? = 1 ] && grep -q 'pic.dot differs' '$work/err'" "$(cat "$work/err")"
bash "$checker" --update "$cowsim" "$work/doc.md" >/dev/null 2>"$work/err"; s=$?
if command -v dot >/dev/null; then
  check "--update rewrites a changed DOT picture from today's drawing, and renders its SVG" \
    "[ $s = 0 ] && ! grep -q 'refs 9' '$work/tutorial/pic.dot' && grep -q '<svg' '$work/tutorial/pic.svg'" "$(cat "$work/err")"
  bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>&1
  check "after --update the picture passes the check" "[ $? = 0 ]"
else
  skip "--update rewrites a changed DOT picture from today's drawing, and renders its SVG" "no Graphviz dot"
  skip "after --update the picture passes the check" "no Graphviz dot"
fi

"$cowsim" draw "$work/tutorial/t.trace" --format svg -o "$work/tutorial/pic.svg"
sed -i 's/refs 1/refs 9/' "$work/tutorial/pic.svg"
printf '# t\n\n```sh\ncowsim draw t.trace --format svg -o pic.svg\n```\n' > "$work/doc.md"
bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>"$work/err"
check "a checked-in SVG picture that differs from today's drawing fails" "[ $? = 1 ] && grep -q 'pic.svg differs' '$work/err'" "$(cat "$work/err")"
bash "$checker" --update "$cowsim" "$work/doc.md" >/dev/null 2>"$work/err"; s=$?
bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>&1; s2=$?
check "--update rewrites it from today's drawing, and then it passes" \
  "[ $s$s2 = 00 ] && ! grep -q 'refs 9' '$work/tutorial/pic.svg' && grep -q '<svg' '$work/tutorial/pic.svg'" "$(cat "$work/err")"

# --update: the outputs are rewritten from the commands, the prose is kept,
# and a prose number that the outputs no longer print is named.
printf '# t\n\nIt prints 12345.\n\n```sh\necho 54321\ncowsim --version\n```\n\n```text\n12345\nold\n```\n\nText.\n\n```sh\necho new block\n```\n\nEnd, 12345.\n' > "$work/doc.md"
bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>&1
check "before --update, the outdated tutorial fails" "[ $? = 1 ]"
bash "$checker" --update "$cowsim" "$work/doc.md" >/dev/null 2>"$work/err"; s=$?
check "--update exits 0 and rewrites the text block from the command" \
  "[ $s = 0 ] && grep -qx 54321 '$work/doc.md' && grep -qx \"\$('$cowsim' --version)\" '$work/doc.md' && ! grep -qx old '$work/doc.md'" \
  "$(cat "$work/doc.md" "$work/err")"
check "--update adds a text block where a command prints and had none" \
  "[ \$(grep -c '^\`\`\`text' '$work/doc.md') = 2 ] && grep -qx 'new block' '$work/doc.md'"
check "--update keeps the prose" "grep -qx 'It prints 12345.' '$work/doc.md' && grep -qx 'Text.' '$work/doc.md'"
check "--update names each prose line that quotes a number the outputs no longer print" \
  "grep -q 'doc.md:3: the prose quotes 12345' '$work/err' && grep -q 'doc.md:[0-9]*: the prose quotes 12345' '$work/err' && grep -q '2 prose numbers to review' '$work/err'" \
  "$(cat "$work/err")"
bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>&1
check "after --update the tutorial passes the check" "[ $? = 0 ]"
cp "$work/doc.md" "$work/doc1.md"
bash "$checker" --update "$cowsim" "$work/doc.md" >/dev/null 2>&1
check "a second --update changes nothing" "cmp -s '$work/doc.md' '$work/doc1.md'"
sed -i 's/^54321$/54320/' "$work/doc.md"
bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>"$work/err"
check "after --update, an output that differs still fails the check" "[ $? = 1 ] && grep -q '^+54321' '$work/err'"

printf '# t\n\n```text\norphan\n```\n' > "$work/doc.md"
bash "$checker" "$cowsim" "$work/doc.md" >/dev/null 2>&1
check "a text block with no command before it is an error" "[ $? != 0 ]"

tap_done
