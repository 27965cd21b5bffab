#!/usr/bin/env bash
# tests/reliability/test_limits.sh COWSIM - what btrfs does not allow gets a
# clear error (issue 7.6).
#
# At the limit the op runs; one byte or one unit beyond, `cowsim run` exits 2
# with FILE:LINE on stderr: a name of 255 bytes (BTRFS_NAME_LEN) is fine and
# 256 is not; a path of 4095 bytes (PATH_MAX - 1) is fine and 4096 is not;
# 2046 nested directories (the deepest a 4095-byte path allows) work; sizes,
# offsets, times and durations that overflow 64 bits, and file sizes
# above 2^63 - 1 (MAX_LFS_FILESIZE), are refused; an inode has at most 65535
# links (BTRFS_LINK_MAX).
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"

name() { head -c "$1" /dev/zero | tr '\0' "${2:-n}"; }
i=0
# run_lines NAME WANT LINES...: a trace of the header, clock and LINES; the
# run must exit WANT, and for WANT 2 name the last line.
run_lines() {
  local what=$1 want=$2; shift 2
  i=$((i + 1))
  local t=$work/limit$i.trace
  { echo 'cowsim-trace 1'; echo 'clock @1354320000'; printf '%s\n' "$@"; } >"$t"
  local last=$(($# + 2))
  "$cowsim" run "$t" --quiet 2>"$work/err"
  local status=$?
  if [ "$want" = 2 ]; then
    check "$what: exit 2 naming limit$i.trace:$last" \
      "[ $status = 2 ] && grep -q 'limit$i.trace:$last[:]' '$work/err'" "status $status: $(head -c 300 "$work/err")"
  else
    check "$what: exit $want" "[ $status = $want ]" "status $status: $(head -c 300 "$work/err")"
  fi
}

run_lines "a 255-byte name" 0 "create /$(name 255) size=1"
run_lines "a 256-byte name" 2 "create /$(name 256) size=1"
run_lines "a 256-byte directory name inside a path" 2 "mkdir /d" "create /d/$(name 256)/f size=1"
run_lines "a 256-byte snapshot name" 2 "snapshot / /$(name 256)"
run_lines "a 256-byte rename target" 2 "create /f size=1" "rename /f /$(name 256)"

deep=() p=''
for c in a b c d e f g h i j k l m n o; do p="$p/$(name 255 "$c")"; deep+=("mkdir $p"); done
# 15 components of 1 + 255 bytes are 3840 bytes; a final "/" and 254 bytes make 4095.
run_lines "a path of 4095 bytes" 0 "${deep[@]}" "create $p/$(name 254 z) size=1"
run_lines "a path of 4096 bytes" 2 "${deep[@]}" "create $p/$(name 255 z) size=1"
# Depth: btrfs has no limit of its own, so the deepest tree a path allows,
# 2046 directories of 1-byte names and a file at 4094 bytes, must work end to
# end with every checker after every op (recursive walks over 2046 levels),
# snapshotted, read through the snapshot, and taken down again, in both designs.
i=$((i + 1))
deepest=$work/limit$i.trace p=''
{
  echo 'cowsim-trace 1'; echo 'clock @1354320000'
  for k in $(seq 2046); do p="$p/a"; echo "mkdir $p"; done
  echo "create $p/f size=1"; echo 'snapshot / /s'; echo "readdir /s${p:0:4000}"; echo "read $p/f"
  echo 'mark deepest'; echo "unlink $p/f"
  while [ -n "$p" ]; do echo "rmdir $p"; p=${p%/a}; done
  echo 'delete-snapshot /s'; echo 'mark empty'
} >"$deepest"
for design in btrfs keyed; do
  "$cowsim" run "$deepest" --quiet --paranoid --design $design --csv "$work/deep.csv" 2>"$work/err"
  status=$?
  check "$design design: 2046 levels of directories (a 4094-byte path), snapshot, read, remove, --paranoid: exit 0" \
    "[ $status = 0 ] && [ \$(wc -l <'$work/deep.csv') = 3 ]" "status $status: $(head -c 300 "$work/err")"
done
run_lines "a symlink target of 4096 bytes" 2 "symlink $(name 4096 t) /l"
run_lines "a label of 4096 bytes" 2 "mark $(name 4096 l)"

run_lines "a size above 2^64" 2 "create /f size=18446744073709551616"
run_lines "a size with a suffix above 2^64" 2 "create /f size=16777216T"
run_lines "a write whose end passes 2^64" 2 "create /f size=1" "write /f 18446744073709551615 1"
run_lines "a write whose end passes 2^63 - 1" 2 "create /f size=1" "write /f 9223372036854775807 1"
run_lines "a truncate above 2^63 - 1" 2 "create /f size=1" "truncate /f 9223372036854775808"
run_lines "a time past 2262" 2 "create /f size=1 atime=9300000000"
run_lines "a clock duration that overflows int64" 2 "clock +106752d"
run_lines "a uid above 2^32 - 1" 2 "create /f size=1 uid=4294967296"
run_lines "a mode above 07777" 2 "create /f size=1 mode=017777"

# 256 directories of 256 names each: BTRFS_LINK_MAX counts links, wherever they are.
links=("create /f size=1")
for k in $(seq 2 65535); do
  d=$(((k - 2) / 256))
  [ $(((k - 2) % 256)) = 0 ] && links+=("mkdir /d$d")
  links+=("link /f /d$d/l$k")
done
run_lines "65535 links to one inode" 0 "${links[@]}"
run_lines "a 65536th link" 2 "${links[@]}" "link /f /one-too-many"

# Bugs the fuzzer and this test found, now fixed (docs/reliability.md):
# 66 links with 250-byte names to one file in one directory outgrow its
# INODE_REF item (one item holds every name of an inode in a directory).
# btrfs without extref says EMLINK, and so does the model.
same_dir=("create /f size=1")
for k in $(seq 10 75); do same_dir+=("link /f /$(name 250)$k"); done
i=$((i + 1))
{ echo 'cowsim-trace 1'; printf '%s\n' "${same_dir[@]}"; } >"$work/limit$i.trace"
"$cowsim" run "$work/limit$i.trace" --quiet 2>"$work/err"
status=$?
check "66 long-named links in one directory: exit 2 naming the link's line, EMLINK" \
  "[ $status = 2 ] && grep -Eq 'limit$i.trace:[0-9]+: link /f -> /n+[0-9]+: Too many links' '$work/err'" \
  "model: the INODE_REF item outgrows a leaf (status $status)"
# Linux refuses a read whose offset + length pass 2^63 - 1 (rw_verify_area:
# EINVAL), and so does replay.
i=$((i + 1))
printf 'cowsim-trace 1\ncreate /f size=1\nread /f 18446744073709551615 2\n' >"$work/limit$i.trace"
"$cowsim" run "$work/limit$i.trace" --quiet 2>"$work/err"
status=$?
check "a read range whose end passes 2^63 - 1: exit 2 naming limit$i.trace:3" \
  "[ $status = 2 ] && grep -q 'limit$i.trace:3:' '$work/err'" "replay: a read's range is not checked (status $status)"
# A file above MAX_LFS_FILESIZE cannot exist (write(2) says EFBIG); the model
# says so too.
i=$((i + 1))
printf 'cowsim-trace 1\ncreate /f size=9223372036854775808\n' >"$work/limit$i.trace"
"$cowsim" run "$work/limit$i.trace" --quiet 2>"$work/err"
status=$?
check "a create above 2^63 - 1: exit 2 naming limit$i.trace:2" \
  "[ $status = 2 ] && grep -q 'limit$i.trace:2: create /f: File too large' '$work/err'" \
  "model: fs_create does not check MAX_LFS_FILESIZE (status $status)"
# A relative clock that passes 2262 is refused (it was a signed overflow).
i=$((i + 1))
printf 'cowsim-trace 1\nclock @9000000000\nclock +10000d\n' >"$work/limit$i.trace"
"$cowsim" run "$work/limit$i.trace" --quiet 2>"$work/err"
status=$?
check "a clock that overflows when added: exit 2 naming limit$i.trace:3 and 2262" \
  "[ $status = 2 ] && grep -q 'limit$i.trace:3: clock.*2262' '$work/err'" \
  "replay: clock + duration is not checked (status $status)"
finish
