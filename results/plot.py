#!/usr/bin/python3
"""results/plot.py - draw space-amplification curves from cowsim CSV files.

How it works
    Each CSV given (written by `cowsim run --csv` or `tools/btrfs-replay
    --csv`, columns in results/columns.h) becomes one curve of the --y column
    against the --x column.  Byte columns are drawn in MiB; --ratio divides
    every value by the curve's first one (space amplification: 1.0 at the
    start).  --x mark keeps only the rows with a label and places them at
    categorical positions, in the order the labels first appear (all curves
    share the positions, so after_copy of every file lines up).  --measured
    files are drawn the same way but as markers only, to overlay real btrfs
    numbers on simulated curves.

Invariants
    PY1  Same inputs and arguments give the same SVG bytes (svg.hashsalt fixed,
        no date in the metadata, Agg backend, no randomness).
    PY2  Bad input never gives a partial picture: a missing file, a missing
        column or a cell that is not a number is reported on stderr as
        "plot.py: FILE: reason" and the exit status is 2, before any output.
    PY3  Empty cells (unmeasured values) are skipped, never drawn as 0.
    PY4  OUT.png and OUT.svg are each written beside their name and renamed
        onto it (save_whole): a full disk gives exit 2 and leaves the old
        pictures, never a truncated one.

Debian's /usr/bin/python3 with python3-matplotlib; stdlib only otherwise.
"""

import argparse
import csv
import os
import sys
import tempfile

# Columns that are counts, not bytes (everything else except these and the
# text columns is drawn in MiB).  Mirrors the COUNT/SECONDS units of
# results/columns.h.
NOT_BYTES = {
    "op_index", "time_s", "elapsed_s", "blocks_cowed", "atime_updates", "atime_skipped",
    "enospc_events", "failed_reads", "subvolume_id",
}
MIB = 1024.0 * 1024.0
X_CHOICES = ("op_index", "time_s", "elapsed_s", "mark")
PROG = os.environ.get("COWSIM_PLOT_PROG", "plot.py")


class InputError(Exception):
    """Bad input (PY2): the message names the file and the reason."""


def fail(message):
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Draw one curve per CSV of a results column against op_index, "
        "time_s or the marks; writes OUT.png and OUT.svg.")
    p.add_argument("csv", nargs="+", metavar="CSV", help="CSV files of cowsim run or btrfs-replay")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output path without extension: OUT.png and OUT.svg are written")
    p.add_argument("--x", default="op_index", choices=X_CHOICES,
                   help="x axis: op_index (default), time_s, elapsed_s, or mark (the rows' labels)")
    p.add_argument("--y", default="metadata_used", metavar="COLUMN",
                   help="column to draw (default metadata_used); byte columns in MiB")
    p.add_argument("--labels", metavar="A,B,...",
                   help="legend labels, one per CSV (default: the file names)")
    p.add_argument("--title", metavar="T", help="title of the plot")
    p.add_argument("--ratio", action="store_true",
                   help="divide each curve by its first value (space amplification)")
    p.add_argument("--measured", action="append", default=[], metavar="CSV",
                   help="overlay measured points (btrfs-replay CSV) as markers; repeatable")
    args = p.parse_args(argv)
    if args.labels is not None:
        args.labels = args.labels.split(",")
        if len(args.labels) != len(args.csv):
            p.error(f"--labels has {len(args.labels)} labels for {len(args.csv)} CSV files")
    out = args.output
    for ext in (".png", ".svg"):
        if out.endswith(ext):
            out = out[: -len(ext)]
    args.output = out
    return args


def number(path, line, column, text):
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{path}:{line}: column {column}: '{text}' is not a number") from None


def read_series(path, x, y):
    """Returns [(x, y)] for the rows where y is set; x is a label for --x mark."""
    xcol = "label" if x == "mark" else x
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    with f:
        reader = csv.reader(f)
        try:
            header = next(reader)
        except StopIteration:
            raise InputError(f"{path}: empty file, no header") from None
        except csv.Error as e:
            raise InputError(f"{path}: {e}") from None
        for col in (xcol, y):
            if col not in header:
                raise InputError(f"{path}: no column '{col}' (columns: {','.join(header)})")
        xi, yi = header.index(xcol), header.index(y)
        points = []
        try:
            for row in reader:
                line = reader.line_num
                if len(row) != len(header):
                    raise InputError(f"{path}:{line}: {len(row)} fields, header has {len(header)}")
                if row[yi] == "":
                    continue  # PY3
                if x == "mark":
                    if row[xi] == "":
                        continue
                    xv = row[xi]
                else:
                    if row[xi] == "":
                        continue
                    xv = number(path, line, xcol, row[xi])
                points.append((xv, number(path, line, y, row[yi])))
        except csv.Error as e:
            raise InputError(f"{path}:{reader.line_num}: {e}") from None
    return points


def scale(path, points, y, ratio):
    if not points:
        return points
    if ratio:
        first = points[0][1]
        if first == 0:
            raise InputError(f"{path}: first value of {y} is 0, --ratio is undefined")
        return [(xv, v / first) for xv, v in points]
    if y not in NOT_BYTES:
        return [(xv, v / MIB) for xv, v in points]
    return points


def y_title(y, ratio):
    if ratio:
        return f"{y} / first value"
    return y if y in NOT_BYTES else f"{y} (MiB)"


def categories(series):
    """Labels in order of first appearance over all series (--x mark)."""
    seen = {}
    for _, points in series:
        for xv, _ in points:
            seen.setdefault(xv, len(seen))
    return seen


def draw(args, curves, measured):
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "cowsim"  # PY1
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    positions = categories(curves + measured) if args.x == "mark" else None

    def xs(points):
        return [positions[xv] if positions is not None else xv for xv, _ in points]

    for name, points in curves:
        ax.plot(xs(points), [v for _, v in points], label=name,
                marker="o" if args.x == "mark" else None, markersize=4, linewidth=1.5)
    markers = ["x", "+", "D", "s", "^", "v"]
    for i, (name, points) in enumerate(measured):
        ax.plot(xs(points), [v for _, v in points], label=name, linestyle="none",
                marker=markers[i % len(markers)], markersize=8, color="black")
    if positions is not None:
        ax.set_xticks(range(len(positions)))
        ax.set_xticklabels(list(positions), rotation=20 if len(positions) > 4 else 0)
        ax.set_xlabel("mark")
    else:
        ax.set_xlabel(args.x)
    ax.set_ylabel(y_title(args.y, args.ratio))
    if args.title:
        ax.set_title(args.title)
    ax.grid(True, linewidth=0.3)
    ax.legend()
    fig.tight_layout()
    try:
        save_whole(fig, args.output + ".png", "png", {"Software": None})
        save_whole(fig, args.output + ".svg", "svg", {"Date": None})
    finally:
        plt.close(fig)


def save_whole(fig, path, fmt, metadata):
    """Writes the figure beside PATH and renames it onto PATH: a full disk
    or a killed run never leaves a truncated picture under PATH."""
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format=fmt, metadata=metadata)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def main(argv):
    args = parse_args(argv)
    try:
        curves = []
        for i, path in enumerate(args.csv):
            name = args.labels[i] if args.labels else os.path.basename(path)
            curves.append((name, scale(path, read_series(path, args.x, args.y), args.y, args.ratio)))
        measured = []
        for path in args.measured:
            name = "measured: " + os.path.splitext(os.path.basename(path))[0]
            measured.append((name, scale(path, read_series(path, args.x, args.y), args.y, args.ratio)))
        outdir = os.path.dirname(args.output) or "."
        if not os.path.isdir(outdir):
            raise InputError(f"{args.output}: no such directory '{outdir}'")
    except InputError as e:
        fail(str(e))
    if all(not points for _, points in curves + measured):
        fail(f"no values of {args.y} in any file")
    try:
        draw(args, curves, measured)
    except OSError as e:
        print(f"{PROG}: {args.output}: cannot write: {e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
