#!/usr/bin/env bash
# tests/reliability/test_strace_import.sh COWSIM - strace logs at the limits
# (issue 21.4). Each bad line is skipped with a LOG:LINE message and the rest
# of the log converts into a trace that replays:
#   - a -ttt time past int64 nanoseconds (12 digits of seconds);
#   - utimensat times of +-2^63 seconds (tv_sec as strace prints it);
#   - a 300-byte name (Linux says ENAMETOOLONG, so a log showing it work is
#     malformed, and a trace cannot hold it);
#   - a pwrite at offset 2^63 - 1 (Linux says EFBIG).
# Under UBSan (CI's build-asan) the overflows were reports; in a plain build
# they wrapped silently.
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"

root=$work/r
mkdir "$root"
long=$(head -c 300 /dev/zero | tr '\0' n)
# convert NAME LOG-LINES...: converts, keeps status, stderr and the trace
convert() {
  local name=$1
  shift
  printf '%s\n' "$@" >"$work/$name.log"
  "$cowsim" gen from-strace "$work/$name.log" --root "$root" --prelude -o "$work/$name.trace" 2>"$work/$name.err"
  echo $? >"$work/$name.status"
}
# replays NAME: the trace converted replays on the model
replays() { "$cowsim" run "$work/$1.trace" --quiet 2>"$work/$1.run.err"; }

convert ttt "1 1700000000.000001 mkdir(\"$root/a\", 0755) = 0" \
  "1 999999999999.5 mkdir(\"$root/b\", 0755) = 0" \
  "1 1700000001.000001 mkdir(\"$root/c\", 0755) = 0"
check "a -ttt time of 12 digits of seconds: converted (exit 0)" "[ \$(cat '$work/ttt.status') = 0 ]" \
  "$(cat "$work/ttt.err")"
check "and named as ttt.log:2 with a timestamp error" "grep -q 'ttt.log:2: .*timestamp' '$work/ttt.err'" \
  "$(cat "$work/ttt.err")"
check "the other two mkdirs are in the trace, and it replays" \
  "grep -q 'mkdir /tree/a' '$work/ttt.trace' && grep -q 'mkdir /tree/c' '$work/ttt.trace' && ! grep -q 'mkdir /tree/b' '$work/ttt.trace' && replays ttt" \
  "$(cat "$work/ttt.trace" "$work/ttt.run.err" 2>&1)"

for sec in 9223372036854775807 -9223372036854775808; do
  convert utime "1 1700000000.000001 openat(AT_FDCWD, \"$root/f\", O_WRONLY|O_CREAT, 0644) = 3" \
    "1 1700000000.000002 utimensat(AT_FDCWD, \"$root/f\", [{tv_sec=$sec, tv_nsec=0}, {tv_sec=$sec, tv_nsec=0}], 0) = 0" \
    "1 1700000000.000003 mkdir(\"$root/after\", 0755) = 0"
  check "utimensat with tv_sec=$sec: named as utime.log:2, the time out of range" \
    "[ \$(cat '$work/utime.status') = 0 ] && grep -q 'utime.log:2: .*outside int64 nanoseconds' '$work/utime.err'" \
    "$(cat "$work/utime.err")"
  check "utimensat with tv_sec=$sec: no settime in the trace, the rest replays" \
    "! grep -q '^settime /tree/f' '$work/utime.trace' && grep -q 'mkdir /tree/after' '$work/utime.trace' && replays utime" \
    "$(cat "$work/utime.trace" "$work/utime.run.err" 2>&1)"
done

convert name "1 1700000000.000001 mkdir(\"$root/$long\", 0755) = 0" \
  "1 1700000000.000002 mkdir(\"$root/short\", 0755) = 0"
check "a 300-byte name: the conversion goes on (exit 0)" "[ \$(cat '$work/name.status') = 0 ]" "$(cat "$work/name.err")"
check "and names name.log:1 and NAME_MAX" "grep -q 'name.log:1: .*NAME_MAX' '$work/name.err'" "$(cat "$work/name.err")"
check "the next mkdir is in the trace, and it replays" "grep -q 'mkdir /tree/short' '$work/name.trace' && replays name" \
  "$(cat "$work/name.trace" 2>&1)"

convert pwrite "1 1700000000.000001 openat(AT_FDCWD, \"$root/g\", O_WRONLY|O_CREAT, 0644) = 3" \
  "1 1700000000.000002 pwrite64(3, \"x\", 1, 9223372036854775807) = 1" \
  "1 1700000000.000003 pwrite64(3, \"x\", 1, 4096) = 1"
check "a pwrite at 2^63 - 1: named as pwrite.log:2 (MAX_LFS_FILESIZE)" \
  "[ \$(cat '$work/pwrite.status') = 0 ] && grep -q 'pwrite.log:2: .*MAX_LFS_FILESIZE' '$work/pwrite.err'" \
  "$(cat "$work/pwrite.err")"
check "the trace holds the other pwrite and replays" \
  "grep -q '^write /tree/g 4096 1' '$work/pwrite.trace' && replays pwrite" "$(cat "$work/pwrite.trace" "$work/pwrite.run.err" 2>&1)"
finish
