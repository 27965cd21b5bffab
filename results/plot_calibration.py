#!/usr/bin/python3
"""results/plot_calibration.py - predicted against measured metadata, log-log.

How it works
    Reads results/calibration.csv (written by tools/calibrate) and draws one
    point per case and mark: x = measured metadata_used on a real btrfs,
    y = the model's prediction, both in MiB on log axes.  The line y = x and
    the band of +-10% around it show the fidelity target; colour is the
    nodesize, the marker the mark.  Writes OUT.png and OUT.svg.

    Rows of a "figure" other than metadata_used (a run-out case of
    tools/calibrate: metadata_total, data_total, commits, atime_lost) are not
    bytes of metadata: they go to a second panel beside the first, the error
    of every figure of every run-out case at every mark as a bar, with the
    issue's bound for that figure (metadata_used 3 %, totals 5 %,
    atime_lost 20 %; commits has none).  A CSV without a figure column is all
    metadata_used.

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
BOUNDS = {"metadata_used": 3.0, "metadata_total": 5.0, "data_total": 5.0, "atime_lost": 20.0}
FIGURE_COLOURS = {"metadata_used": "tab:orange", "metadata_total": "tab:purple", "data_total": "tab:brown",
                  "commits": "tab:gray", "atime_lost": "tab:red"}


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
            rows, others = [], []
            for n, row in enumerate(reader, start=2):
                try:
                    figure = row.get("figure") or "metadata_used"
                    predicted, measured = int(row["predicted"]), int(row["measured"])
                    if figure == "metadata_used":
                        rows.append((row["case"], int(row["nodesize"]), row["mark"],
                                     predicted / MIB, measured / MIB))
                    if figure != "metadata_used" or row.get("grep") == "runout":
                        others.append((row["case"], row["mark"], figure, predicted, measured))
                except ValueError as e:
                    fail(f"{path}:{n}: {e}")
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    if not rows:
        fail(f"{path}: no rows")
    return rows, others


def error_pct(predicted, measured):
    if measured == 0:
        return 0.0 if predicted == 0 else None
    return 100.0 * (predicted - measured) / measured


def draw_runout(ax, others):
    """One bar per run-out case, mark and figure: its error, and its bound."""
    labels, errors, colours, bounds = [], [], [], []
    for case, mark, figure, predicted, measured in others:
        e = error_pct(predicted, measured)
        labels.append(f"{case} {mark.replace('after_', '')} {figure}"
                      + (" (n/a)" if e is None else ""))
        errors.append(0.0 if e is None else e)
        colours.append(FIGURE_COLOURS.get(figure, "black"))
        bounds.append(BOUNDS.get(figure))
    ys = list(range(len(labels)))[::-1]
    ax.barh(ys, errors, color=colours, height=0.7)
    for y, b in zip(ys, bounds):
        if b is not None:
            ax.plot([-b, -b], [y - 0.4, y + 0.4], color="black", linewidth=1)
            ax.plot([b, b], [y - 0.4, y + 0.4], color="black", linewidth=1)
    for y, e in zip(ys, errors):
        ax.annotate(f"{e:+.1f}%", (e, y), xytext=(3 if e >= 0 else -3, 0), textcoords="offset points",
                    ha="left" if e >= 0 else "right", va="center", fontsize=6)
    ax.axvline(0, color="0.4", linewidth=1)
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=6)
    reach = max([abs(e) for e in errors] + [b for b in bounds if b is not None] + [5.0]) * 1.35
    ax.set_xlim(-reach, reach)
    ax.set_xlabel("error of the model, % (| |: the issue's bound)")
    ax.set_title("run-out cases: every figure", fontsize=9)
    ax.grid(True, axis="x", linewidth=0.3)


def draw(rows, others, out):
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "cowsim"
    import matplotlib.pyplot as plt

    lo = min(min(r[3], r[4]) for r in rows) / 1.5
    hi = max(max(r[3], r[4]) for r in rows) * 1.5
    if others:
        fig, (ax, ax_out) = plt.subplots(1, 2, figsize=(13, 6), gridspec_kw={"width_ratios": [7, 6]})
        draw_runout(ax_out, others)
    else:
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
    ax.set_title(f"cowsim vs btrfs metadata_used: {len({r[0] for r in rows})} cases, "
                 f"{len(rows)} marks, worst |error| {worst:.1f}%", fontsize=10)
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
    draw(*read_rows(args.csv), args.output)


if __name__ == "__main__":
    main(sys.argv[1:])
