#!/bin/bash
# run.sh NAME MODE  (MODE: cp | plain | fsync | empty)
set -eu
name=$1 mode=$2 img=/tmp/fill-$1.img mnt=/mnt/fill-$1
truncate -s 4G $img; mkfs.btrfs -q -f -n 16384 $img >/dev/null; mkdir -p $mnt; mount -o loop,relatime $img $mnt
t0=$(date +%s.%N)
if [[ $mode == cp ]]; then cp -a /usr/include $mnt/tree; else "$(dirname "$0")"/copy.sh /usr/include $mnt/tree $mode; fi
t1=$(date +%s.%N)
sync; btrfs fi sync $mnt >/dev/null
echo "$name $mode copy_seconds $(echo "$t1 - $t0" | bc) meta $(btrfs fi df -b $mnt | sed -n 's/^Metadata, [A-Z]*: total=[0-9]*, used=\([0-9]*\)$/\1/p')"
umount $mnt
btrfs inspect-internal dump-tree -t fs $img > ${OUT:-/tmp}/$name.fsdump
"$(dirname "$0")"/../dump-tree-stats $img 16384 > ${OUT:-/tmp}/$name.stats
rm -f $img; rmdir $mnt
