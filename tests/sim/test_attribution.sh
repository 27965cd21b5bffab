#!/usr/bin/env bash
# tests/sim/test_attribution.sh COWSIM - the metadata_by_* columns (issue 17.2):
# on every row of the seed experiment and of a backup rotation they sum to
# metadata_used, and after the seed experiment's grep atime accounts for at
# least 90 % of the growth (TAP).
set -u
cowsim=$1
. "$(dirname "$0")/../tap.sh"

# attribution.py CSV [SHARE_FROM SHARE_TO]: checks the sum on every row,
# prints "rows N"; with two labels, prints "share S" (the growth of
# metadata_by_atime between them over the growth of metadata_used) and
# "causes mkfs=... write=..." at the second label.
cat >"$work/attribution.py" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
causes = [c for c in rows[0] if c.startswith("metadata_by_")]
assert causes == ["metadata_by_" + c for c in ("mkfs", "write", "atime", "snapshot", "delete")], causes
for r in rows:
    total = sum(int(r[c]) for c in causes)
    if total != int(r["metadata_used"]):
        sys.exit(f"op_index {r['op_index']}: causes sum to {total}, metadata_used {r['metadata_used']}")
print("rows", len(rows))
if len(sys.argv) > 3:
    at = {r["label"]: r for r in rows if r["label"]}
    a, b = at[sys.argv[2]], at[sys.argv[3]]
    growth = int(b["metadata_used"]) - int(a["metadata_used"])
    atime = int(b["metadata_by_atime"]) - int(a["metadata_by_atime"])
    print("share %.3f" % (atime / growth), "growth", growth, "atime", atime)
    print("causes", " ".join(f"{c[12:]}={b[c]}" for c in causes))
PY
attribution() { /usr/bin/python3 "$work/attribution.py" "$@" 2>&1; }
share_at_least() { awk -v s="$(sed -n 's/^share \([0-9.]*\).*/\1/p' <<<"$1")" -v m="$2" 'BEGIN {exit !(s != "" && s >= m)}'; }

# The seed experiment: a copy, 10 snapshots, grep -R twice; rows every 2000 ops too.
"$cowsim" gen seed-experiment --files 3000 --snapshots 10 -o "$work/seed.trace" 2>/dev/null
for mount in strictatime relatime; do
  "$cowsim" run "$work/seed.trace" -q --mount "$mount" --every 2000 --csv "$work/seed-$mount.csv"
  out=$(attribution "$work/seed-$mount.csv" after_snapshots after_grep)
  check "seed experiment, $mount: the causes sum to metadata_used on every row" "[ \$? = 0 ]" "$out"
  note "$out"
  check "seed experiment, $mount: atime accounts for >= 90% of the growth after the grep" \
    "share_at_least \"\$out\" 0.9" "$out"
done
# The same on /usr/include, as tools/seed-experiment.sh runs it (marks only).
if [ "$(find /usr/include -type f 2>/dev/null | head -2000 | wc -l)" -ge 2000 ]; then
  "$cowsim" gen seed-experiment --from-dir /usr/include --snapshots 10 -o "$work/usr.trace" 2>/dev/null
  "$cowsim" run "$work/usr.trace" -q --mount strictatime --csv "$work/usr.csv"
  out=$(attribution "$work/usr.csv" after_snapshots after_grep)
  check "seed experiment on /usr/include: the causes sum to metadata_used on every row" "[ \$? = 0 ]" "$out"
  note "$out"
  check "seed experiment on /usr/include: atime accounts for >= 90% of the growth after the grep" \
    "share_at_least \"\$out\" 0.9" "$out"
else
  skip "seed experiment on /usr/include" "fewer than 2000 files in /usr/include"
  skip "seed experiment on /usr/include: atime share" "fewer than 2000 files in /usr/include"
fi

# A backup rotation (snapshots created and deleted daily), every 100 ops, in
# both designs and with the side table.
"$cowsim" gen backup-rotation --files 1500 --days 12 --keep 4 --read-fraction 0.2 -o "$work/rotation.trace" 2>/dev/null
for opts in "--mount strictatime" "--mount relatime" "--mount strictatime --design keyed" \
            "--mount strictatime --policy side-table"; do
  # shellcheck disable=SC2086
  "$cowsim" run "$work/rotation.trace" -q $opts --every 100 --csv "$work/rotation.csv"
  out=$(attribution "$work/rotation.csv")
  check "backup rotation ($opts): the causes sum to metadata_used on every row" "[ \$? = 0 ]" "$out"
done
# shellcheck disable=SC2016
check "backup rotation: snapshot deletion leaves blocks charged to delete" \
  "awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) if (\$i == \"metadata_by_delete\") c = i} NR > 1 && \$c > 0 {d = 1} END {exit !d}' \"$work/rotation.csv\""

# RP6 (sim/replay.c): cowsim run calls fs_set_cause() only when an op's cause
# is not the one in force; a checked run (--check-every, here never reached)
# calls it before every op. The rows must be the same.
# And a trace made for it: reads, then a clock whose commit charges the
# transaction to its busiest cause (atime), then writes, which must not be
# charged to atime because the cause was not set again.
{
  echo "cowsim-trace 1"
  echo "clock @1700000000"
  echo "mkdir /d"
  for i in $(seq 1 300); do echo "create /d/f$i size=4K"; done
  echo "sync"
  for r in 1 2; do
    echo "clock +1d"
    for i in $(seq 1 300); do echo "read /d/f$i"; done
    echo "clock +1d"
    for i in $(seq 1 300); do echo "create /d/g$r-$i size=4K"; done
    echo "mark round$r"
  done
} >"$work/causes.trace"
for trace in causes seed rotation; do
  for opts in "--mount relatime" "--mount strictatime --design keyed" "--mount strictatime --design zfs"; do
    # shellcheck disable=SC2086
    "$cowsim" run "$work/$trace.trace" -q $opts --csv "$work/rp6-once.csv" 2>/dev/null
    # shellcheck disable=SC2086
    "$cowsim" run "$work/$trace.trace" -q $opts --check-every 1000000000 --csv "$work/rp6-each.csv" 2>/dev/null
    check "RP6 $trace ($opts): the causes set only when they change give the rows of a cause set every op" \
      "[ -s \"$work/rp6-once.csv\" ] && cmp -s \"$work/rp6-once.csv\" \"$work/rp6-each.csv\""
  done
done

# The checker itself: a CSV whose causes do not sum is refused by the script.
awk -F, -v OFS=, 'NR == 2 {for (i = 1; i <= NF; i++) if (i == 4) $i = $i + 16384} {print}' \
  "$work/rotation.csv" >"$work/broken.csv"
attribution "$work/broken.csv" >/dev/null
check "a row whose causes do not sum to metadata_used is caught" "[ \$? != 0 ]"
tap_done
