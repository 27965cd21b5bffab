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
    *"Permission denied"*) echo EACCES ;;
    *"Is a directory"*) echo EISDIR ;;
    *"Inappropriate ioctl"*) echo ENOTTY ;;
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
  # A placeholder (issue 21.4): /r/q where /p held the nested subvolume /p/q
  # is an empty directory of the snapshot, no alias of /p/q.
  "$(real_step btrfs subvolume create "$m/p")"
  "$(real_step btrfs subvolume create "$m/p/q")"
  "$(real_step touch "$m/p/q/g")"
  "$(real_step touch "$m/p/f")"
  "$(real_step btrfs subvolume snapshot "$m/p" "$m/r")"
  "$(real_step stat "$m/r/q")"
  "$(real_step ls "$m/r/q")"
  "$(real_step stat "$m/r/q/g")"
  "$(real_step touch "$m/r/q/n")"
  "$(real_step mkdir "$m/r/q/n")"
  "$(real_step ln "$m/r/f" "$m/r/q/f2")"
  "$(real_step ln -s x "$m/r/q/l")"
  "$(real_step python3 -c "import os; os.rename('$m/r/f', '$m/r/q/f3')")"
  "$(real_step btrfs subvolume snapshot "$m/p" "$m/r/q/s")"
  "$(real_step sh -c "echo x >'$m/r/q'")"
  "$(real_step btrfs subvolume snapshot "$m/r/q" "$m/s3")"
  "$(real_step python3 -c "import os; os.rename('$m/r/q', '$m/r/q2')")"
  "$(real_step touch -a -d @1000000000 "$m/r/q")"
  "$(real_step mkdir "$m/r/dd")"
  "$(real_step python3 -c "import os; os.rename('$m/r/dd', '$m/r/q')")"
  "$(real_step stat "$m/r/q")"
  "$(real_step mkdir "$m/p/nd")"
  "$(real_step python3 -c "import os; os.rename('$m/p/nd', '$m/p/q')")"
  "$(real_step python3 -c "import os; os.rename('$m/p/q', '$m/p/nd')")"
  "$(real_step stat "$m/p/nd/g")"
  "$(real_step btrfs subvolume snapshot "$m/p" "$m/t")"
  "$(real_step rm "$m/p/nd/g")"
  "$(real_step btrfs subvolume delete "$m/p/nd")"
  "$(real_step stat "$m/t/nd")"
  "$(real_step rmdir "$m/t/nd")"
)

# The model's side: the same steps as a trace, one run per step with
# --keep-going off, so the step's outcome is the run's message. A subvolume
# is made as a snapshot of an empty subvolume (/e), the model having no
# "subvolume create".
steps=(
  "snapshot /e /a" "snapshot /e /a/b" "mkdir /a/b/d" "delete-snapshot /a" "snapshot /a /c"
  "delete-snapshot /c/b" "rmdir /c/b" "stat /a/b/d" "rmdir /a/b" "rmdir /a/b/d" "rmdir /a/b" "rmdir /a"
  "stat /a" "snapshot /e /s" "mkdir /s/d" "mkdir /x" "rename /s /x/s2" "stat /x/s2/d" "stat /s"
  "snapshot /e /p" "snapshot /e /p/q" "create /p/q/g size=0" "create /p/f size=0" "snapshot /p /r"
  "stat /r/q" "readdir /r/q" "stat /r/q/g" "create /r/q/n size=0" "mkdir /r/q/n" "link /r/f /r/q/f2"
  "symlink x /r/q/l" "rename /r/f /r/q/f3" "snapshot /p /r/q/s" "write /r/q 0 2" "snapshot /r/q /s3"
  "rename /r/q /r/q2" "settime /r/q atime=1000000000" "mkdir /r/dd" "rename /r/dd /r/q" "stat /r/q"
  "mkdir /p/nd" "rename /p/nd /p/q" "rename /p/q /p/nd" "stat /p/nd/g" "snapshot /p /t" "unlink /p/nd/g"
  "delete-snapshot /p/nd" "stat /t/nd" "rmdir /t/nd"
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
         *"Permission denied"*) model+=(EACCES) ;;
         *"Is a directory"*) model+=(EISDIR) ;;
         *"Inappropriate ioctl"*) model+=(ENOTTY) ;;
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
