#!/usr/bin/env bash
# workloads/recorded/record.sh COWSIM [WORK] - re-record the fixtures of this
# folder: build the small trees below in WORK (default a temporary folder),
# record each program with `cowsim record --prelude` and write NAME.trace here.
# The exact command line of each fixture is in README.md.  Every file of the
# trees gets the same fixed times, so that the prelude does not depend on when
# the script runs; the recorded calls keep the real times of the run.
set -eu
cowsim=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
cd "$work"

# The tree: 3 directories of sources, an empty file, a symlink to a file and one to a directory.
make_tree() {
  rm -rf "$1"
  mkdir -p "$1/src/lib" "$1/doc" "$1/empty-dir"
  for i in 1 2 3 4 5 6 7 8; do printf 'int f%d(void) { return %d; } /* x */\n' "$i" "$i" >"$1/src/f$i.c"; done
  for i in 1 2 3 4; do seq 1 $((i * 200)) >"$1/src/lib/table$i.txt"; done
  printf 'cowsim fixture tree\n' >"$1/doc/README"
  : >"$1/doc/empty"
  ln -s ../src/f1.c "$1/doc/main.c"
  ln -s ../src/lib "$1/doc/lib"
  find "$1" -exec touch -h -d '2024-01-02 03:04:05 UTC' {} +
}

record() { # NAME ROOT COMMAND...
  local name=$1 root=$2
  shift 2
  "$cowsim" record --root "$root" --prelude --out "$here/$name.trace" -- "$@" >/dev/null
}

make_tree tree
record grep-R tree grep -R x tree
make_tree tree
record find tree find tree -type f
make_tree tree
record tar tree tar cf /dev/null tree
make_tree tree
record du tree du -s tree
rm -rf rsync && mkdir rsync && make_tree rsync/tree
record rsync rsync rsync -a rsync/tree/ rsync/copy/
rm -rf checkout && make_tree checkout
(cd checkout && git init -q && git add -A && git -c user.name=cowsim -c user.email=cowsim@example.org \
  commit -q -m fixture && echo '/* changed */' >>src/f2.c &&
  find . -path ./.git -prune -o -exec touch -h -d '2024-01-02 03:04:05 UTC' {} + &&
  record git-status . git status)
