#!/usr/bin/python3
"""tests/results/test_btrfs_replay.py - tools/btrfs-replay on a tiny real trace.

How it works: runs btrfs-replay (argv[1]) once on the hand-written trace
(argv[2], tests/results/data/tiny-replay.trace: a few files, two snapshots,
reads, changes, five marks) with --csv into a temporary folder, then checks
the CSV as TAP cases.  Exit 77 (meson: skipped) when not root or when
btrfs-replay itself says the machine cannot mount a btrfs loop device.
"""

import csv
import glob
import os
import subprocess
import sys
import tempfile

REPLAY, TRACE = sys.argv[1], sys.argv[2]
MARKS = ["after_copy", "after_snapshots", "after_read", "after_changes",
         "after delete, snap1"]
NODESIZE = 16384


def main():
    if os.geteuid() != 0:
        print("1..0 # SKIP btrfs-replay needs root")
        return 77
    before = set(glob.glob("/tmp/btrfs-replay-*"))
    # Other replays may run on this machine at the same time: only mounts
    # that appeared during this test count against it.
    mounts_before = {l.split()[1] for l in open("/proc/self/mounts") if "btrfs-replay-" in l}
    with tempfile.TemporaryDirectory(prefix="cowsim-test-replay-") as tmp:
        out = os.path.join(tmp, "tiny.csv")
        env = dict(os.environ, TMPDIR="/tmp")
        r = subprocess.run([REPLAY, TRACE, "--nodesize", str(NODESIZE), "--mount", "relatime",
                            "--size", "1G", "--csv", out],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env)
        if r.returncode == 77:
            reason = r.stderr.strip().replace("\n", " ")
            print(f"1..0 # SKIP {reason}")
            return 77
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        header = open(out).readline().strip().split(",")
    checks = []

    def check(name, cond, detail=""):
        checks.append((name, bool(cond), detail))

    check("test_replay_exits_0", r.returncode == 0, r.stderr)
    check("test_header_has_the_cowsim_run_columns",
          header[:4] == ["op_index", "time_s", "label", "metadata_used"] and len(header) == 24
          and header[-1] == "unshare_estimate",
          header)
    check("test_every_mark_gives_one_row_in_order", [x["label"] for x in rows] == MARKS,
          [x["label"] for x in rows])
    used = [int(x["metadata_used"] or -1) for x in rows]
    check("test_metadata_used_is_whole_tree_blocks", all(u > 0 and u % NODESIZE == 0 for u in used),
          used)
    check("test_metadata_used_is_plausible_for_a_few_files",
          all(3 * NODESIZE <= u <= 64 * NODESIZE for u in used), used)
    check("test_metadata_raw_is_twice_used_with_dup",
          all(int(x["metadata_raw"]) == 2 * int(x["metadata_used"]) for x in rows))
    check("test_snapshots_do_not_shrink_metadata", used[1] >= used[0], used)
    check("test_deleting_a_snapshot_frees_metadata", used[4] < used[3], used)
    data = [int(x["data_used"]) for x in rows]
    check("test_data_used_holds_the_files_written", data[0] >= 3 * 1024 * 1024 + 200 * 1024, data)
    times = [float(x["time_s"]) for x in rows]
    check("test_time_s_follows_the_trace_clock",
          times == [1338422400.0, 1338422401.0, 1338422402.0, 1338508802.0, 1338508802.0], times)
    check("test_op_index_is_the_marks_index", [int(x["op_index"]) for x in rows] == [12, 16, 27, 38, 40],
          [x["op_index"] for x in rows])
    check("test_unmeasurable_cells_are_empty",
          all(x["tree_fs"] == "" and x["blocks_cowed"] == "" and x["atime_updates"] == "" for x in rows))
    check("test_no_enospc_on_a_roomy_image", all(x["enospc_events"] == "0" for x in rows))
    check("test_temporary_folder_is_removed", set(glob.glob("/tmp/btrfs-replay-*")) <= before,
          set(glob.glob("/tmp/btrfs-replay-*")) - before)
    mounts_after = {l.split()[1] for l in open("/proc/self/mounts") if "btrfs-replay-" in l}
    check("test_nothing_stays_mounted", mounts_after <= mounts_before, mounts_after - mounts_before)

    print(f"1..{len(checks)}")
    for i, (name, ok, detail) in enumerate(checks, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        if not ok:
            print(f"# {detail}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
