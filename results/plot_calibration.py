#!/usr/bin/python3
"""results/plot_calibration.py - predicted against measured metadata, log-log.

How it works
    Reads results/calibration.csv (written by tools/calibrate) and draws one
    point per case and mark: x = measured metadata_used on a real btrfs,
    y = the model's prediction, both in MiB on log axes.  The line y = x and
    the band of +-10% around it show the fidelity target; colour is the
    nodesize, the marker the mark.  Writes OUT.png and OUT.svg.

Invariants
    PC1  Same CSV, same SVG bytes (svg.hashsalt fixed, no date, Agg backend).
    PC2  Bad input is reported as "plot_calibration.py: FILE: reason" with exit
        status 2 before anything is written.

Debian's /usr/bin/python3 with python3-matplotlib; stdlib otherwise.
"""

import argparse
import csv
import sys

MIB = 1024.0 * 1024.0
COLUMNS = ("case", "nodesize", "mark", "predicted", "measured")
MARKERS = {"after_copy": "o", "after_snapshots": "s", "after_grep": "^", "after_grep2": "v"}
COLOURS = {4096: "tab:blue", 16384: "tab:orange", 65536: "tab:green"}
BAND = 0.10


def fail(message):
    print(f"plot_calibration.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_rows(path):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                fail(f"{path}: missing column(s) {', '.join(missing)}")
            rows = []
            for n, row in enumerate(reader, start=2):
                try:
                    rows.append((row["case"], int(row["nodesize"]), row["mark"],
                                 int(row["predicted"]) / MIB, int(row["measured"]) / MIB))
                except ValueError as e:
                    fail(f"{path}:{n}: {e}")
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    if not rows:
        fail(f"{path}: no rows")
    return rows


def draw(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "cowsim"
    import matplotlib.pyplot as plt

    lo = min(min(r[3], r[4]) for r in rows) / 1.5
    hi = max(max(r[3], r[4]) for r in rows) * 1.5
    fig, ax = plt.subplots(figsize=(7, 6))
    xs = [lo, hi]
    ax.fill_between(xs, [x * (1 - BAND) for x in xs], [x * (1 + BAND) for x in xs],
                    color="0.9", label="±10%")
    ax.plot(xs, xs, color="0.4", linewidth=1, label="predicted = measured")
    for ns in sorted({r[1] for r in rows}):
        for mark, marker in MARKERS.items():
            pts = [r for r in rows if r[1] == ns and r[2] == mark]
            if pts:
                ax.scatter([r[4] for r in pts], [r[3] for r in pts], marker=marker,
                           color=COLOURS.get(ns, "black"), s=28, alpha=0.85,
                           label=f"{ns // 1024}K {mark}")
        others = [r for r in rows if r[1] == ns and r[2] not in MARKERS]
        if others:  # the workloads beyond the seed experiment: rotation days, after_find, ...
            ax.scatter([r[4] for r in others], [r[3] for r in others], marker="D",
                       color=COLOURS.get(ns, "black"), s=20, alpha=0.85,
                       label=f"{ns // 1024}K other marks")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured metadata_used on btrfs (MiB)")
    ax.set_ylabel("predicted by cowsim (MiB)")
    worst = max(abs(r[3] - r[4]) / r[4] for r in rows) * 100
    ax.set_title(f"cowsim vs btrfs: {len({r[0] for r in rows})} cases, "
                 f"{len(rows)} marks, worst |error| {worst:.1f}%")
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=110)
    fig.savefig(out + ".svg", metadata={"Date": None})
    plt.close(fig)


def main(argv):
    p = argparse.ArgumentParser(prog="plot_calibration.py",
                                description="Scatter of predicted against measured metadata_used.")
    p.add_argument("csv", help="results/calibration.csv")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output path without extension: OUT.png and OUT.svg")
    args = p.parse_args(argv)
    draw(read_rows(args.csv), args.output)


if __name__ == "__main__":
    main(sys.argv[1:])
