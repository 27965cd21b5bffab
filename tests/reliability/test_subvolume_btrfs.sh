#!/usr/bin/env bash
# tests/reliability/test_subvolume_btrfs.sh COWSIM - subvolume deletion on the
# model and on a real, loop-mounted btrfs (issue 21.3): each step's outcome
# (ok, or the errno's name) must be the same on both. Needs root, mkfs.btrfs
# and loop devices; exits 77 (meson's skip) where any is missing.
#
# Steps: /a a subvolume, /a/b one inside it; deleting /a is ENOTEMPTY; a
# snapshot /c of /a shows b as an empty placeholder: deleting it as a
# subvolume fails (EINVAL on the model; btrfs says "Not a Btrfs subvolume"),
# rmdir removes it, and /a/b stays; rmdir of an empty subvolume deletes it,
# of a full one is ENOTEMPTY; a subvolume renamed into a folder of its parent
# subvolume keeps its files.
set -u
cowsim=$1
if [ "$(id -u)" != 0 ] || ! command -v mkfs.btrfs >/dev/null || ! command -v btrfs >/dev/null; then
  echo "1..0 # SKIP needs root, mkfs.btrfs and btrfs"
  exit 77
fi
. "$(dirname "$0")/../tap.sh"
img=$work/img mnt=$work/mnt
mkdir "$mnt"
truncate -s 512M "$img"
if ! mkfs.btrfs -q "$img" >/dev/null 2>&1 || ! mount -o loop "$img" "$mnt" 2>/dev/null; then
  echo "1..0 # SKIP cannot loop-mount a btrfs here"
  exit 77
fi
trap 'umount "$mnt" 2>/dev/null; rm -rf "$work"' EXIT

# The real side: each step prints ok or the errno's name.
real_step() {
  local out
  if out=$("$@" 2>&1); then echo ok; return; fi
  case $out in
    *"Directory not empty"*) echo ENOTEMPTY ;;
    *"Not a Btrfs subvolume"*|*"Invalid argument"*) echo EINVAL ;;
    *"No such file"*) echo ENOENT ;;
    *"Operation not permitted"*) echo EPERM ;;
    *) echo "other: $out" ;;
  esac
}
m=$mnt
real=(
  "$(real_step btrfs subvolume create "$m/a")"
  "$(real_step btrfs subvolume create "$m/a/b")"
  "$(real_step mkdir "$m/a/b/d")"
  "$(real_step btrfs subvolume delete "$m/a")"
  "$(real_step btrfs subvolume snapshot "$m/a" "$m/c")"
  "$(real_step btrfs subvolume delete "$m/c/b")"
  "$(real_step rmdir "$m/c/b")"
  "$(real_step stat "$m/a/b/d")"
  "$(real_step rmdir "$m/a/b")"
  "$(real_step rmdir "$m/a/b/d")"
  "$(real_step rmdir "$m/a/b")"
  "$(real_step rmdir "$m/a")"
  "$(real_step stat "$m/a")"
  "$(real_step btrfs subvolume create "$m/s")"
  "$(real_step mkdir "$m/s/d")"
  "$(real_step mkdir "$m/x")"
  "$(real_step mv -T "$m/s" "$m/x/s2")"
  "$(real_step stat "$m/x/s2/d")"
  "$(real_step stat "$m/s")"
)

# The model's side: the same steps as a trace, one run per step with
# --keep-going off, so the step's outcome is the run's message. A subvolume
# is made as a snapshot of an empty subvolume (/e), the model having no
# "subvolume create".
steps=(
  "snapshot /e /a" "snapshot /e /a/b" "mkdir /a/b/d" "delete-snapshot /a" "snapshot /a /c"
  "delete-snapshot /c/b" "rmdir /c/b" "stat /a/b/d" "rmdir /a/b" "rmdir /a/b/d" "rmdir /a/b" "rmdir /a"
  "stat /a" "snapshot /e /s" "mkdir /s/d" "mkdir /x" "rename /s /x/s2" "stat /x/s2/d" "stat /s"
)
model=()
prefix='cowsim-trace 1
snapshot / /e'
for s in "${steps[@]}"; do
  printf '%s\n%s\n' "$prefix" "$s" >"$work/step.trace"
  "$cowsim" run "$work/step.trace" --quiet 2>"$work/err"
  case $? in
    0) model+=(ok) ;;
    *) err=$(head -n 1 "$work/err")
       case $err in
         *"Directory not empty"*) model+=(ENOTEMPTY) ;;
         *"Invalid argument"*) model+=(EINVAL) ;;
         *"No such file"*) model+=(ENOENT) ;;
         *"Operation not permitted"*) model+=(EPERM) ;;
         *) model+=("other: $err") ;;
       esac ;;
  esac
  # a step that failed changes nothing: only the ones that worked carry on
  [ "${model[-1]}" = ok ] && prefix=$(printf '%s\n%s' "$prefix" "$s")
done

for i in "${!steps[@]}"; do
  check "${steps[$i]}: the model says ${model[$i]}, btrfs says ${real[$i]}" "[ '${model[$i]}' = '${real[$i]}' ]"
done
finish
