#!/bin/bash
# copy.sh SRC DST MODE - copy SRC to DST top-down, one directory at a time
# (each directory's symlinks and files, then its subdirectories, as a
# preorder walk lists them), in one of three modes:
#   plain  write each file
#   fsync  write each file and fsync it (dd conv=fsync)
#   empty  create each file with no data
# The investigation of docs/btrfs-ground-truth.md section 6 uses it to see
# whether the order and timing of inserts change leaf fill.
set -euo pipefail
src=$1 dst=$2 mode=$3
case $mode in plain|fsync|empty) ;; *) echo "copy.sh: MODE must be plain, fsync or empty" >&2; exit 2;; esac
cd "$src"
find . -type d -print0 | while IFS= read -r -d '' dir; do
  mkdir -p "$dst/$dir"
  find "$dir" -mindepth 1 -maxdepth 1 ! -type d -print0 | while IFS= read -r -d '' entry; do
    if [[ -L $entry ]]; then
      ln -s "$(readlink "$entry")" "$dst/$entry"
    elif [[ $mode == empty ]]; then
      : >"$dst/$entry"
    elif [[ $mode == fsync ]]; then
      dd if="$entry" of="$dst/$entry" conv=fsync status=none
    else
      cat "$entry" >"$dst/$entry"
    fi
  done
done
