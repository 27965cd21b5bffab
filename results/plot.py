#!/usr/bin/python3
"""results/plot.py - every cowsim figure: run, compare, sweep and merged sweeps.

How it works
    One script, one kind of figure per --kind (cowsim plot passes its
    arguments through; compare and sweep call it the same way):

      curves   one curve per CSV of --y against --x (op_index, days since the
               start, seconds since the start, or the marks).  With --keys
               (e.g. mount,policy) each --labels entry is split on '/' into
               those keys: a panel per --panel-by value, a colour per
               --colour-by value and a line style per --style-by value, so
               every curve is told apart by colour and dash, and the legend
               has one entry per colour and one per dash.  Curves that
               coincide (same points) are drawn once and named together
               ("inline = threshold:5%") instead of hiding each other.
      ratio    as curves, each divided point by point by its baseline:
               --baseline KEY=VALUE (the curve with the same other keys and
               KEY=VALUE, e.g. mount=noatime) or --baseline LABEL.
      bars     compare.csv or sweep.csv: final metadata and growth
               (metadata_final - metadata_base) per --colour-by x --style-by.
      stack    per CSV a stacked area of the columns named PREFIX* (--stack,
               default metadata_by_: the attribution; tree_: the trees).
      free     unallocated device space over time (device size, from
               the device_size column, --device-size or parameters.json beside it, minus the data
               chunks and the metadata chunks times their copies), panels and
               styles as curves; the first ENOSPC and first lost or dropped
               atime update marked from the enospc_events, atime_lost and
               atime_dropped columns when the CSV has them, each marker named
               in the panel's legend (PY8).
      sweep    sweep.csv: amplification against the first parameter, a line
               per value of the other parameters (colour, then dash, and a
               hollow marker of its own; coinciding lines nested, PY5).

    Panels share one y scale and name their own range (PY6); runs that lost
    atime updates are flagged in curves, ratio, bars and sweep (PY7).

    Units come from `cowsim columns --json` (the COWSIM_BIN program, else
    `cowsim` on PATH): bytes are drawn in MiB, counts as they are; a column
    that schema does not know is drawn as it is, its axis saying "unit
    unknown".  Marks are thinned on the axis (every k-th label) once there
    are more than MAX_MARK_LABELS of them.

Invariants
    PY1  Same inputs and arguments give the same SVG and PNG bytes
        (svg.hashsalt fixed, no date in the metadata, Agg backend, no
        randomness, input order kept).
    PY2  Bad input never gives a partial picture: a missing file, a missing
        column or a cell that is not a number is reported on stderr as
        "plot.py: FILE[:LINE]: reason" and the exit status is 2, before any
        output.
    PY3  Empty cells (unmeasured values) are skipped, never drawn as 0.
    PY4  OUT.png and OUT.svg are each written beside their name and renamed
        onto it (save_whole): a full disk leaves the old pictures, never a
        truncated one. Exit status as sim/cli.h CLI2 says: 1 when the disk
        fills or fails under the write (ENOSPC, EFBIG, EIO, EDQUOT), 2 when
        OUT cannot be created at all (a missing folder, no permission).
    PY5  Every curve is distinguishable: no two curves of a figure share
        both colour and line style unless they coincide, and coinciding
        curves are named together in the legend (sweep lines too: each
        line has its own marker, nested lines where they coincide).
    PY6  Panels that show the same quantity share one y scale (curves,
        ratio, free, stack), and each panel names its own range above it,
        so a 0.5 MiB step never looks like a 230 MiB one.
    PY7  A run that lost atime updates to ENOSPC (atime_lost, atime_dropped,
        failed_reads) is flagged wherever it is drawn: a red halo on its
        curve, a hatched bar, a ringed sweep point, each with a legend entry
        "N atime updates lost (ENOSPC)", so it never just looks cheaper.
    PY8  Event labels never overprint: the free figure's first-ENOSPC and
        first-lost-atime markers are named in the panel's legend, one entry
        per marker, not by labels at the marker.
    PY9  Byte parameters on a sweep's x axis are ticked in KiB/MiB/GiB at
        the swept values, and the axis names its unit.

Debian's /usr/bin/python3 with python3-matplotlib; stdlib only otherwise.
"""

import argparse
import csv
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile

MIB = 1024.0 * 1024.0
DAY = 86400.0
MAX_MARK_LABELS = 14
PROG = os.environ.get("COWSIM_PLOT_PROG", "plot.py")
KINDS = ("curves", "ratio", "bars", "stack", "free", "sweep")
X_CHOICES = ("op_index", "days", "time_s", "elapsed_s", "mark")
# Colour-blind-safe (Okabe-Ito) first, then more: up to 12 colours before a repeat.
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9",
           "#000000", "#F0E442", "#7F3C8D", "#11A579", "#3969AC", "#E73F74"]
DASHES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3))]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
# PY7: the columns that count atime updates ENOSPC kept off the disk, and how they are drawn.
LOST_COLUMNS = ("atime_lost", "atime_dropped", "failed_reads")
LOST_COLOUR = "#E8000B"
LOST_TEXT = "atime updates lost (ENOSPC)"
# PY4, CLI2: the errors of a disk that filled or failed under a write (exit 1, not 2).
DISK_FAILED = (errno.ENOSPC, errno.EFBIG, errno.EIO, errno.EDQUOT)


class InputError(Exception):
    """Bad input (PY2): the message names the file and the reason."""


def fail(message):
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(2)


# ---- units ---------------------------------------------------------------------------

def load_units():
    """{column: unit} from `cowsim columns --json`; {} when no cowsim is found."""
    exe = os.environ.get("COWSIM_BIN") or shutil.which("cowsim")
    if not exe:
        return {}
    try:
        out = subprocess.run([exe, "columns", "--json"], capture_output=True, text=True,
                             check=True, timeout=60).stdout
        schemas = json.loads(out)["schemas"]
    except (OSError, subprocess.SubprocessError, ValueError, KeyError):
        return {}
    units = {}
    for schema in schemas:
        for col in schema["columns"]:
            units.setdefault(col["name"], col["unit"])
    return units


UNITS = {}


def is_bytes(column):
    return UNITS.get(column) == "bytes"


def axis_title(column):
    unit = UNITS.get(column)
    if unit == "bytes":
        return f"{column} (MiB)"
    if unit is None:
        return f"{column} (unit unknown)"
    if unit in ("count", "text"):
        return column
    return f"{column} ({unit})"


def scaled(column, value):
    return value / MIB if is_bytes(column) else value


# ---- input ---------------------------------------------------------------------------

def number(path, line, column, text):
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{path}:{line}: column {column}: '{text}' is not a number") from None


def read_table(path):
    """(header, [(line, {column: text})]) of one CSV, rows checked for width."""
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
        rows = []
        try:
            for row in reader:
                if len(row) != len(header):
                    raise InputError(f"{path}:{reader.line_num}: {len(row)} fields, "
                                     f"header has {len(header)}")
                rows.append((reader.line_num, dict(zip(header, row))))
        except csv.Error as e:
            raise InputError(f"{path}:{reader.line_num}: {e}") from None
    return header, rows


def need(path, header, *columns):
    for col in columns:
        if col not in header:
            raise InputError(f"{path}: no column '{col}' (columns: {','.join(header)})")


def x_value(path, line, row, x, t0):
    """The row's x, or None when it has none (not a mark, empty cell)."""
    if x == "mark":
        return row["label"] or None
    col = x_column(x)
    if row[col] == "":
        return None
    v = number(path, line, col, row[col])
    if x in ("op_index", "elapsed_s"):
        return v
    return (v - t0) / (DAY if x == "days" else 1.0)


def x_column(x):
    """The column --x reads."""
    return {"mark": "label", "op_index": "op_index", "elapsed_s": "elapsed_s"}.get(x, "time_s")


def read_series(path, x, y, lost=None):
    """[(x, y)] for the rows where y is set; x a label for --x mark.  With
    a list `lost`, appends the rows' lost atime updates (PY7) to it, one
    count per point (0 when the CSV has no such column)."""
    header, rows = read_table(path)
    need(path, header, x_column(x), y)
    lost_cols = [c for c in LOST_COLUMNS if c in header]
    t0 = None
    points = []
    for line, row in rows:
        if x in ("days", "time_s") and t0 is None and row["time_s"] != "":
            t0 = number(path, line, "time_s", row["time_s"])
        xv = x_value(path, line, row, x, t0)
        if xv is None or row[y] == "":
            continue  # PY3
        points.append((xv, number(path, line, y, row[y])))
        if lost is not None:
            lost.append(lost_count(path, line, row, lost_cols))
    return points


def lost_count(path, line, row, columns):
    """The atime updates a row says ENOSPC kept off the disk (PY7)."""
    return sum(number(path, line, c, row[c]) for c in columns if row[c] != "")


# ---- curves: keys, colours, dashes ----------------------------------------------------

class Curve:
    def __init__(self, label, keys, points, lost=None):
        self.label = label
        self.keys = keys            # {key: value}
        self.points = points
        self.lost = lost or [0] * len(points)   # lost atime updates so far, per point (PY7)


def split_label(label, keys):
    if not keys:
        return {"curve": label}
    parts = label.split("/")
    if len(parts) != len(keys):
        raise InputError(f"label '{label}': {len(parts)} parts, --keys has {len(keys)}")
    return dict(zip(keys, parts))


def ordered(values):
    seen = {}
    for v in values:
        seen.setdefault(v, len(seen))
    return list(seen)


class Styling:
    """Colour by one key, dash by another, panel by a third (PY5)."""

    def __init__(self, curves, keys, colour_by, style_by, panel_by):
        keys = keys or ["curve"]
        self.colour_by = colour_by or keys[-1]
        self.style_by = style_by or (keys[0] if len(keys) > 1 else None)
        self.panel_by = panel_by
        for k in (self.colour_by, self.style_by, self.panel_by):
            if k is not None and k not in keys:
                raise InputError(f"'{k}' is not one of --keys {','.join(keys)}")
        self.colours = ordered(c.keys[self.colour_by] for c in curves)
        self.styles = ordered(c.keys[self.style_by] for c in curves) if self.style_by else []
        self.panels = ordered(c.keys[self.panel_by] for c in curves) if self.panel_by else [None]

    def colour(self, curve):
        return COLOURS[self.colours.index(curve.keys[self.colour_by]) % len(COLOURS)]

    def dash(self, curve):
        if not self.style_by:
            return "-"
        return DASHES[self.styles.index(curve.keys[self.style_by]) % len(DASHES)]

    def marker(self, curve):
        return MARKERS[self.colours.index(curve.keys[self.colour_by]) % len(MARKERS)]

    def name(self, curve):
        """What tells this curve apart inside its panel."""
        shown = [k for k in curve.keys if k != self.panel_by]
        return "/".join(curve.keys[k] for k in shown) or curve.label


def coinciding(curves):
    """Groups of curves with the same points, in input order."""
    groups = []
    for c in curves:
        for g in groups:
            if g[0].points == c.points:
                g.append(c)
                break
        else:
            groups.append([c])
    return groups


def panel_grid(n):
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    return rows, cols


def figure(n_panels, width=5.0, height=3.8, sharey=True):
    import matplotlib.pyplot as plt
    rows, cols = panel_grid(n_panels)
    fig, axes = plt.subplots(rows, cols, figsize=(max(8.0, width * cols), height * rows + 0.9),
                             dpi=100, squeeze=False, sharey=sharey)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n_panels:]:
        ax.set_visible(False)
    return fig, flat[:n_panels]


def mark_axis(ax, positions, rotate=True):
    """Category ticks at the marks, every k-th labelled once there are many."""
    names = list(positions)
    step = max(1, (len(names) + MAX_MARK_LABELS - 1) // MAX_MARK_LABELS)
    ticks = list(range(0, len(names), step))
    ax.set_xticks(ticks)
    ax.set_xticklabels([names[i] for i in ticks], rotation=30 if rotate and len(ticks) > 3 else 0,
                       ha="right" if rotate and len(ticks) > 3 else "center", fontsize=8)
    ax.set_xlabel("mark" if step == 1 else f"mark (every {ordinal(step)} labelled)")


def ordinal(n):
    """2 -> "2nd", 3 -> "3rd", 11 -> "11th": the axis label's English."""
    if n % 100 in (11, 12, 13):
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def x_title(x):
    return {"op_index": "trace op", "days": "days since the start", "elapsed_s": "elapsed_s (seconds)",
            "time_s": "seconds since the start", "mark": "mark"}[x]


def draw_curves(ax, groups, style, positions, x):
    """One panel.  A group of coinciding curves is drawn as nested lines: the
    first widest, each next one narrower on top, so every colour of the group
    shows along the shared line (PY5).  Returns the groups' names and ends,
    annotated by name_groups once every panel is drawn (the shared y scale
    is known only then)."""
    named = []
    for group in groups:
        first = group[0]
        xs = [positions[p[0]] if positions is not None else p[0] for p in first.points]
        ys = [p[1] for p in first.points]
        n = len(group)
        for i, c in enumerate(group):
            ax.plot(xs, ys, color=style.colour(c), linestyle=style.dash(c) if i == n - 1 else "-",
                    linewidth=2.0 + 3.0 * (n - 1 - i), solid_capstyle="butt",
                    marker=style.marker(c) if x == "mark" and i == n - 1 else None, markersize=4)
        if n > 1 and xs:
            named.append((" = ".join(style.name(c) for c in group), xs[-1], ys[-1]))
    return named


def name_groups(ax, named):
    """Names each group of coinciding curves at its end, above the line in
    the lower half of the panel and below it in the upper half."""
    low, high = ax.get_ylim()
    for text, xv, yv in named:
        above = yv < (low + high) / 2
        ax.annotate(text, (xv, yv), xytext=(-4, 6 if above else -8), textcoords="offset points",
                    ha="right", va="bottom" if above else "top", fontsize=7, color="0.15")


def draw_lost(ax, curve, style, positions):
    """PY7: a red halo along the part of the curve after its first lost atime
    update, and the legend handle naming the count."""
    from matplotlib.lines import Line2D
    pts = [(p, n) for p, n in zip(curve.points, curve.lost) if n > 0]
    if not pts:
        return None
    xs = [positions[p[0]] if positions is not None else p[0] for p, _ in pts]
    halo = dict(color=LOST_COLOUR, alpha=0.3, linewidth=9, marker="o", markersize=12,
                solid_capstyle="round")
    ax.plot(xs, [p[1] for p, _ in pts], zorder=1, **halo)
    return Line2D([], [], label=f"{max(n for _, n in pts):g} {LOST_TEXT}: {style.name(curve)}", **halo)


def range_note(ax, values, unit):
    """PY6: the panel's own range above it (the y scale is shared)."""
    if not values:
        return
    low, high = min(values), max(values)
    shown = f"{low:.4g} {unit}" if low == high else f"{low:.4g} to {high:.4g} {unit}"
    ax.annotate(f"this panel: {shown.strip()} (y scale shared)", xy=(0.5, 1.0), xycoords="axes fraction",
                xytext=(0, 3), textcoords="offset points", ha="center", va="bottom", fontsize=7,
                color="0.3")


def legend(fig, style, curves):
    from matplotlib.lines import Line2D
    handles = []
    for value in style.colours:
        handles.append(Line2D([], [], color=COLOURS[style.colours.index(value) % len(COLOURS)],
                              linewidth=2.5, label=f"{style.colour_by}: {value}"
                              if style.colour_by != "curve" else value))
    for value in style.styles:
        handles.append(Line2D([], [], color="0.3", linewidth=1.8,
                              linestyle=DASHES[style.styles.index(value) % len(DASHES)],
                              label=f"{style.style_by}: {value}"))
    ncol = min(len(handles), 4)
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    return (len(handles) + ncol - 1) // ncol


def plot_curves(args, curves, measured, style, ylabel, unit="", decorate=None):
    """The panels of curves; decorate(ax, panel) may draw more and return
    legend handles for the panel's legend."""
    fig, axes = figure(len(style.panels))
    positions = None
    if args.x == "mark":
        positions = {}
        for c in curves + measured:
            for p in c.points:
                positions.setdefault(p[0], len(positions))
    named = []
    for column, (ax, panel) in enumerate(zip(axes, style.panels)):
        mine = [c for c in curves if panel is None or c.keys[style.panel_by] == panel]
        named.append(draw_curves(ax, coinciding(mine), style, positions, args.x))
        handles = [h for h in (draw_lost(ax, c, style, positions) for c in mine) if h is not None]
        if decorate:
            handles += decorate(ax, panel)
        for i, m in enumerate(measured):
            xs = [positions[p[0]] if positions is not None else p[0] for p in m.points]
            handles += ax.plot(xs, [p[1] for p in m.points], linestyle="none", marker=["x", "+", "D"][i % 3],
                               markersize=8, color="black", label=m.label)
        if handles:
            ax.legend(handles=handles, fontsize=8)
        if panel is not None:
            ax.set_title(f"{style.panel_by} {panel}", fontsize=10, pad=14 if len(axes) > 1 else 6)
        if len(axes) > 1:
            range_note(ax, [p[1] for c in mine for p in c.points], unit)
        if positions is not None:
            mark_axis(ax, positions)
        else:
            ax.set_xlabel(x_title(args.x))
        if column % panel_grid(len(axes))[1] == 0:
            ax.set_ylabel(ylabel)
        ax.grid(True, linewidth=0.3)
    for ax, names in zip(axes, named):
        name_groups(ax, names)
    return finish(fig, args, legend(fig, style, curves))


def finish(fig, args, legend_rows):
    if args.title:
        fig.suptitle(args.title, fontsize=11)
    bottom = 0.04 + 0.035 * legend_rows * (4.7 / fig.get_figheight())
    fig.tight_layout(rect=(0, min(bottom, 0.4), 1, 1))
    return fig


# ---- the kinds ------------------------------------------------------------------------

def label_of(args, i, path):
    return args.labels[i] if args.labels else os.path.splitext(os.path.basename(path))[0]


def load_curves(args, y):
    curves = []
    for i, path in enumerate(args.csv):
        label = label_of(args, i, path)
        lost = []
        points = read_series(path, args.x, y, lost)
        points = [(xv, scaled(y, v)) for xv, v in points]
        curves.append(Curve(label, split_label(label, args.keys), points, lost))
    return curves


def kind_curves(args):
    curves = load_curves(args, args.y)
    measured = []
    for path in args.measured:
        name = "measured: " + os.path.splitext(os.path.basename(path))[0]
        points = [(xv, scaled(args.y, v)) for xv, v in read_series(path, args.x, args.y)]
        measured.append(Curve(name, {}, points))
    if all(not c.points for c in curves + measured):
        raise InputError(f"no values of {args.y} in any file")
    ylabel = axis_title(args.y)
    if args.ratio:
        for c in curves + measured:
            if c.points:
                first = c.points[0][1]
                if first == 0:
                    raise InputError(f"{c.label}: first value of {args.y} is 0, --ratio is undefined")
                c.points = [(xv, v / first) for xv, v in c.points]
        ylabel = f"{args.y} / first value"
    style = Styling(curves, args.keys, args.colour_by, args.style_by, args.panel_by)
    return plot_curves(args, curves, measured, style, ylabel,
                       "MiB" if is_bytes(args.y) and not args.ratio else "")


def baseline_of(curve, curves, baseline):
    if "=" in baseline:
        key, value = baseline.split("=", 1)
        want = dict(curve.keys, **{key: value})
        return next((c for c in curves if c.keys == want), None)
    return next((c for c in curves if c.label == baseline), None)


def kind_ratio(args):
    curves = load_curves(args, args.y)
    baseline = args.baseline or curves[0].label
    if "=" in baseline and baseline.split("=", 1)[0] not in (args.keys or []):
        raise InputError(f"--baseline {baseline}: '{baseline.split('=', 1)[0]}' is not one of --keys")
    shown = []
    for c in curves:
        base = baseline_of(c, curves, baseline)
        if base is None:
            raise InputError(f"--baseline {baseline}: no baseline curve for '{c.label}'")
        if base is c:
            continue
        ref = dict(base.points)
        kept = [(xv, v / ref[xv], n) for (xv, v), n in zip(c.points, c.lost) if ref.get(xv)]
        shown.append(Curve(c.label, c.keys, [(xv, r) for xv, r, _ in kept], [n for _, _, n in kept]))
    if not shown:
        raise InputError(f"--baseline {baseline}: every curve is a baseline, nothing to divide")
    style = Styling(shown, args.keys, args.colour_by, args.style_by, args.panel_by)
    fig = plot_curves(args, shown, [], style, f"{args.y} / baseline ({baseline})")
    for ax in fig.axes:
        if ax.get_visible():
            ax.axhline(1.0, color="0.5", linewidth=0.8)
    return fig


def summary_lines(path):
    header, rows = read_table(path)
    need(path, header, "status", "metadata_final", "metadata_base")
    params = header[:header.index("status")]
    return params, rows


def kind_bars(args):
    import matplotlib.pyplot as plt
    path = args.csv[0]
    params, rows = summary_lines(path)
    if not params:
        raise InputError(f"{path}: no parameter columns before 'status'")
    colour_by = args.colour_by or params[-1]
    group_by = args.style_by or (params[0] if len(params) > 1 else params[-1])
    for k in (colour_by, group_by):
        if k not in params:
            raise InputError(f"{path}: '{k}' is not a parameter column ({','.join(params)})")
    colours = ordered(r[colour_by] for _, r in rows)
    groups = ordered(r[group_by] for _, r in rows)
    final, growth, lost = {}, {}, {}
    lost_cols = [c for c in LOST_COLUMNS if c in rows[0][1]] if rows else []
    for line, r in rows:
        key = (r[group_by], r[colour_by])
        if r["metadata_final"] == "" or r["metadata_base"] == "":
            continue
        f = number(path, line, "metadata_final", r["metadata_final"]) / MIB
        b = number(path, line, "metadata_base", r["metadata_base"]) / MIB
        final[key], growth[key] = f, f - b
        lost[key] = lost_count(path, line, r, lost_cols)
    if not final:
        raise InputError(f"{path}: no line with metadata_final and metadata_base")
    base_marks = ordered(r["base_mark"] for _, r in rows if r.get("base_mark"))
    fig, axes = plt.subplots(1, 2, figsize=(max(9.0, 1.1 * len(groups) * len(colours) + 3), 4.6), dpi=100)
    width = 0.8 / max(1, len(colours))
    for ax, values, title in ((axes[0], final, "final metadata_used (MiB)"),
                              (axes[1], growth, "growth since " + (", ".join(base_marks) or "the base")
                               + " (MiB)")):
        for ci, cv in enumerate(colours):
            keys = [(gv, cv) for gv in groups if (gv, cv) in values]
            xs = [groups.index(k[0]) - 0.4 + width * (ci + 0.5) for k in keys]
            bars = ax.bar(xs, [values[k] for k in keys], width * 0.92, color=COLOURS[ci % len(COLOURS)],
                          label=cv, hatch=["////" if lost[k] else None for k in keys],
                          edgecolor=[LOST_COLOUR if lost[k] else COLOURS[ci % len(COLOURS)] for k in keys])
            ax.bar_label(bars, labels=[f"{values[k]:.1f}" + (f" ({lost[k]:g} lost)" if lost[k] else "")
                                       for k in keys], fontsize=6, rotation=90, padding=2)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups)
        ax.set_xlabel(group_by)
        ax.set_title(title, fontsize=10)
        ax.margins(y=0.35 if any(lost.values()) else 0.18)
        ax.grid(True, axis="y", linewidth=0.3)
    from matplotlib.patches import Patch
    handles = [Patch(color=COLOURS[i % len(COLOURS)], label=f"{colour_by}: {v}") for i, v in enumerate(colours)]
    if any(lost.values()):  # PY7
        handles.append(Patch(facecolor="white", edgecolor=LOST_COLOUR, hatch="////",
                             label=f"hatched: {LOST_TEXT}, the count on the bar"))
    ncol = min(len(handles), 4)
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    return finish(fig, args, (len(handles) + ncol - 1) // ncol)


def stacked_columns(path, header, prefix):
    cols = [c for c in header if c.startswith(prefix)]
    if not cols:
        raise InputError(f"{path}: no column named {prefix}*")
    return cols


def kind_stack(args):
    tables = [(label_of(args, i, p), p, *read_table(p)) for i, p in enumerate(args.csv)]
    fig, axes = figure(len(tables), width=4.2, height=3.4)
    all_cols = []
    for ax, (label, path, header, rows) in zip(axes, tables):
        cols = stacked_columns(path, header, args.stack)
        for c in cols:
            if c not in all_cols:
                all_cols.append(c)
        need(path, header, x_column(args.x))
        xs, layers, t0 = [], [[] for _ in cols], None
        for line, r in rows:
            if args.x in ("days", "time_s") and t0 is None and r["time_s"] != "":
                t0 = number(path, line, "time_s", r["time_s"])
            xv = x_value(path, line, r, args.x, t0)
            if xv is None or any(r[c] == "" for c in cols):
                continue
            xs.append(xv)
            for i, c in enumerate(cols):
                layers[i].append(scaled(c, number(path, line, c, r[c])))
        positions = None
        if args.x == "mark":
            positions = {name: i for i, name in enumerate(ordered(xs))}
            xs = [positions[v] for v in xs]
        ax.stackplot(xs, layers, colors=[COLOURS[all_cols.index(c) % len(COLOURS)] for c in cols],
                     linewidth=0.3, edgecolor="white")
        ax.set_title(label, fontsize=9, pad=14 if len(tables) > 1 else 6)
        if len(tables) > 1:
            range_note(ax, [sum(layer) for layer in zip(*layers)], "MiB" if all(is_bytes(c) for c in cols) else "")
        if positions is not None:
            mark_axis(ax, positions)
        else:
            ax.set_xlabel(x_title(args.x))
        if len(tables) == 1 or axes.index(ax) % panel_grid(len(tables))[1] == 0:
            ax.set_ylabel("MiB" if all(is_bytes(c) for c in cols) else "value")
        ax.grid(True, linewidth=0.3)
    from matplotlib.patches import Patch
    handles = [Patch(color=COLOURS[i % len(COLOURS)], label=c[len(args.stack):] or c)
               for i, c in enumerate(all_cols)]
    ncol = min(len(handles), 6)
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=8, frameon=False,
               title=f"{args.stack}*", title_fontsize=8)
    return finish(fig, args, (len(handles) + ncol - 1) // ncol + 1)


def device_size(args, path):
    if args.device_size:
        return args.device_size
    params = os.path.join(os.path.dirname(path) or ".", "parameters.json")
    try:
        with open(params, encoding="utf-8") as f:
            return int(json.load(f)["model"]["device_size"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    raise InputError(f"{path}: no device size: give --device-size or keep parameters.json beside it")


def free_curve(args, i, path):
    """A Curve of unallocated device MiB (device size minus the data chunks and
    the metadata chunks times their copies) and the x of the first rise of
    each event column the CSV has."""
    header, rows = read_table(path)
    need(path, header, "metadata_total", "data_total", "metadata_raw", "metadata_used", "time_s", x_column(
        "op_index" if args.x == "mark" else args.x))
    size = None if "device_size" in header and not args.device_size else device_size(args, path)
    x = "op_index" if args.x == "mark" else args.x
    t0 = next((float(r["time_s"]) for _, r in rows if r["time_s"] != ""), 0.0)
    points = []
    for line, r in rows:
        if size is None or "device_size" in header and not args.device_size:
            size = number(path, line, "device_size", r["device_size"])  # the run's own identity column
        used = number(path, line, "metadata_used", r["metadata_used"])
        raw = number(path, line, "metadata_raw", r["metadata_raw"])
        copies = raw / used if used else 1
        chunks = number(path, line, "data_total", r["data_total"]) + \
            copies * number(path, line, "metadata_total", r["metadata_total"])
        points.append((x_value(path, line, r, x, t0), (size - chunks) / MIB))
    events = []
    for column, what, marker in (("enospc_events", "first ENOSPC", "X"),
                                 ("atime_lost", "first lost atime", "v"),
                                 ("atime_dropped", "first dropped atime", "v")):
        if column not in header:
            continue
        for line, r in rows:
            if r[column] != "" and number(path, line, column, r[column]) > 0:
                events.append((what, marker, x_value(path, line, r, x, t0)))
                break
    label = label_of(args, i, path)
    return Curve(label, split_label(label, args.keys), points), events


def kind_free(args):
    pairs = [free_curve(args, i, p) for i, p in enumerate(args.csv)]
    curves = [c for c, _ in pairs]
    style = Styling(curves, args.keys, args.colour_by, args.style_by, args.panel_by)
    shown_x = args.x
    args.x = "op_index" if args.x == "mark" else args.x

    def events_of(ax, panel):
        handles = []
        for curve, events in pairs:
            if panel is not None and curve.keys[style.panel_by] != panel:
                continue
            ys = dict(curve.points)
            for order, (what, marker, at) in enumerate(events):
                # the first event biggest and under the next, so two at one point both show (PY8)
                handles += ax.plot([at], [ys[at]], marker=marker, color=style.colour(curve),
                                   markersize=13 - 4 * min(order, 1), markeredgecolor="black",
                                   linestyle="none", zorder=4 + order,
                                   label=f"{what}: {style.name(curve)} at {x_title(args.x)} {at:.6g}")
        return handles

    fig = plot_curves(args, curves, [], style, "unallocated device space (MiB)", "MiB", events_of)
    args.x = shown_x
    return fig


def sweep_title(args, params, rows):
    """"amplification by X" over the trace or --gen template, each {name}
    of the template replaced by the values it took (not left raw)."""
    title = "amplification by " + (params[0] if params else "point")
    if not args.title:
        return title
    text = args.title
    for p in params:
        values = ordered(r[p] for _, r in rows)
        shown = ",".join(values) if len(values) <= 4 else f"{values[0]}..{values[-1]}"
        text = text.replace("{" + p + "}", shown)
    return f"{title}\n{text}"


def kind_sweep(args):
    import matplotlib.pyplot as plt
    path = args.csv[0]
    params, rows = summary_lines(path)
    need(path, list(rows[0][1]) if rows else [], "amplification")
    if not params:
        raise InputError(f"{path}: no parameter columns before 'status'")
    x, others = params[0], params[1:]
    numeric = all(_is_number(r[x]) for _, r in rows)
    cats = {v: i for i, v in enumerate(ordered(r[x] for _, r in rows))}
    lost_cols = [c for c in LOST_COLUMNS if c in rows[0][1]] if rows else []
    lines = {}
    for line, r in rows:
        key = tuple(r[p] for p in others)
        pts = lines.setdefault(key, [])
        if r["amplification"] != "":
            xv = float(r[x]) if numeric else cats[r[x]]
            pts.append((xv, number(path, line, "amplification", r["amplification"]),
                        lost_count(path, line, r, lost_cols)))
    colour_values = ordered(k[-1] for k in lines) if others else []
    dash_values = ordered(k[:-1] for k in lines) if others[:-1] else []
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    names = {key: ", ".join(f"{p}={v}" for p, v in zip(others, key)) or "amplification" for key in lines}
    for pts in lines.values():
        pts.sort()
    line_handles = draw_sweep_lines(ax, lines, names, colour_values, dash_values, others)
    lost_handles = ring_lost(ax, lines, names, x, numeric, cats)
    sweep_x_axis(ax, x, numeric, cats, [float(r[x]) for _, r in rows] if numeric else [])
    bases = ordered(r["base_mark"] for _, r in rows if r.get("base_mark"))
    ax.set_ylabel("amplification (final metadata / metadata at " + (", ".join(bases) or "-") + ")")
    ax.set_title(sweep_title(args, params, rows), fontsize=10)
    ax.grid(True, linewidth=0.3)
    if others or lost_handles:
        ax.legend(handles=(line_handles if others else []) + lost_handles, fontsize=8)
    fig.tight_layout()
    return fig


def draw_sweep_lines(ax, lines, names, colour_values, dash_values, others):
    """A line per key, each with its own colour, dash and hollow marker (PY5);
    lines with the same points drawn nested (the first widest, its markers
    biggest) and named together with "curves coincide"."""
    groups = []
    for key, pts in lines.items():
        for g in groups:
            if [p[:2] for p in lines[g[0]]] == [p[:2] for p in pts]:
                g.append(key)
                break
        else:
            groups.append([key])
    index = {key: i for i, key in enumerate(lines)}
    handles, named = {}, []
    for group in groups:
        n = len(group)
        for i, key in enumerate(group):
            pts = lines[key]
            colour = COLOURS[colour_values.index(key[-1]) % len(COLOURS)] if others else COLOURS[0]
            dash = DASHES[dash_values.index(key[:-1]) % len(DASHES)] if dash_values else "-"
            handles[key], = ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colour,
                    linestyle=dash if i == n - 1 else "-", linewidth=1.8 + 3.0 * (n - 1 - i),
                    marker=MARKERS[index[key] % len(MARKERS)], markersize=7 + 4 * (n - 1 - i),
                    markerfacecolor="none", markeredgewidth=1.5,  # hollow: a point two lines share shows both
                    solid_capstyle="butt", label=names[key])
        if n > 1 and lines[group[0]]:
            last = lines[group[0]][-1]
            named.append((" = ".join(names[k] for k in group) + " (curves coincide)", last[0], last[1]))
    name_groups(ax, named)
    return [handles[key] for key in lines]  # the legend in input order


def ring_lost(ax, lines, names, x, numeric, cats):
    """PY7: a red ring around each point whose run lost atime updates, and
    a legend entry per point (the first four, then how many more)."""
    from matplotlib.lines import Line2D
    ring = dict(marker="o", markersize=16, markerfacecolor="none", markeredgecolor=LOST_COLOUR,
                markeredgewidth=2, linestyle="none")
    shown = {v: k for k, v in cats.items()}
    handles = []
    for key, pts in lines.items():
        for xv, yv, n in pts:
            if n:
                ax.plot([xv], [yv], zorder=5, **ring)
                at = human_bytes(xv) if numeric and is_bytes(x.replace("-", "_")) else \
                    (f"{xv:g}" if numeric else shown[xv])
                handles.append(Line2D([], [], label=f"{n:g} {LOST_TEXT}: {names[key]}, {x}={at}", **ring))
    if len(handles) > 4:
        handles = handles[:4] + [Line2D([], [], label=f"... and {len(handles) - 4} more ringed points", **ring)]
    return handles


def human_bytes(v):
    """4096 -> "4 KiB", 115343360 -> "110 MiB" (PY9)."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(v) >= size:
            return f"{v / size:.4g} {unit}"
    return f"{v:g} B"


def sweep_x_axis(ax, x, numeric, cats, xs):
    """Categories as marks; numbers ticked at the swept values when they
    are few, bytes in KiB/MiB/GiB (PY9), a log2 scale over a 16x span, and
    never an offset such as "1e9" away from the ticks."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    if not numeric:
        mark_axis(ax, cats)
        ax.set_xlabel(x)
        return
    column = x.replace("-", "_")
    if xs and min(xs) > 0 and max(xs) >= 16 * min(xs):
        ax.set_xscale("log", base=2)
    values = sorted(set(xs))
    if len(values) <= 12:
        ax.xaxis.set_major_locator(FixedLocator(values))
        ax.xaxis.set_minor_locator(NullLocator())
    if is_bytes(column):
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: human_bytes(v)))
        ax.set_xlabel(f"{x} (bytes)")
    else:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        unit = UNITS.get(column)  # a parameter that is no column (snapshots) is a count
        ax.set_xlabel(x if unit in (None, "count", "text") else f"{x} ({unit})")


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


# ---- output ---------------------------------------------------------------------------

def save_whole(fig, path, fmt, metadata):
    """Writes the figure beside PATH and renames it onto PATH: a full disk
    or a killed run never leaves a truncated picture under PATH (PY4)."""
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


# The options whose value is a file (made relative to the figure's folder) and
# those that take no value; every other option takes the next word as a value.
PATH_OPTIONS = ("-o", "--output", "--measured")
FLAG_OPTIONS = ("--ratio", "-h", "--help")


def command_line(argv, output):
    """The command that made the figure, run from the figure's folder: file
    arguments relative to it, so the text (kept in the PNG's Comment and the
    SVG's description, shown by cowsim report) is the same wherever the
    folder is (PY1). Only the CSVs and the values of PATH_OPTIONS are files:
    a value such as --kind sweep stays as it is even beside a folder named
    sweep."""
    import shlex
    folder = os.path.dirname(os.path.abspath(output + ".png"))
    words = ["cowsim", "plot"]

    def rel(path):
        return os.path.relpath(os.path.abspath(path), folder) if path else path

    value_of = None
    for a in argv:
        if value_of is not None:
            words.append(rel(a) if value_of in PATH_OPTIONS else a)
            value_of = None
        elif a.startswith("--") and "=" in a:
            key, value = a.split("=", 1)
            words.append(key + "=" + (rel(value) if key in PATH_OPTIONS else value))
        elif a.startswith("-") and a != "-":
            words.append(a)
            value_of = None if a in FLAG_OPTIONS else a
        else:
            words.append(rel(a))
    return " ".join(shlex.quote(w) for w in words)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Draws cowsim CSV files; writes OUT.png and OUT.svg. Kinds: curves (default), "
        "ratio, bars, stack, free, sweep (see the module's docstring or docs/columns.md).")
    p.add_argument("csv", nargs="+", metavar="CSV",
                   help="per-run CSVs (curves, ratio, stack, free) or one compare.csv/sweep.csv (bars, sweep)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output path without extension: OUT.png and OUT.svg are written")
    p.add_argument("--kind", default="curves", choices=KINDS, help="the figure (default curves)")
    p.add_argument("--x", default="op_index", choices=X_CHOICES,
                   help="x axis: op_index (default), days or time_s since the first row, or mark")
    p.add_argument("--y", default="metadata_used", metavar="COLUMN",
                   help="column to draw (default metadata_used); byte columns in MiB")
    p.add_argument("--labels", metavar="A,B,...", help="one per CSV (default: the file names)")
    p.add_argument("--label", action="append", metavar="A",
                   help="the next CSV's label (repeatable; for labels with commas)")
    p.add_argument("--keys", metavar="K1,K2", help="the labels are K1/K2 values (e.g. mount,policy)")
    p.add_argument("--panel-by", metavar="KEY", help="a panel per value of KEY")
    p.add_argument("--colour-by", "--color-by", metavar="KEY", help="a colour per value of KEY (default: the last key)")
    p.add_argument("--style-by", metavar="KEY", help="a line style per value of KEY (default: the first key)")
    p.add_argument("--title", metavar="T", help="title of the figure")
    p.add_argument("--ratio", action="store_true", help="curves: divide each curve by its first value")
    p.add_argument("--baseline", metavar="KEY=VALUE|LABEL", help="ratio: the curve each is divided by")
    p.add_argument("--measured", action="append", default=[], metavar="CSV",
                   help="curves: overlay measured points (btrfs-replay CSV) as markers; repeatable")
    p.add_argument("--stack", default="metadata_by_", metavar="PREFIX",
                   help="stack: the columns to stack (default metadata_by_; tree_ for the trees)")
    p.add_argument("--device-size", type=int, metavar="BYTES",
                   help="free: the device size (default: the CSV's device_size column, else parameters.json beside it)")
    args = p.parse_intermixed_args(argv)
    if args.keys is not None:
        args.keys = args.keys.split(",")
    if args.label is not None:
        if args.labels is not None:
            p.error("--label and --labels together")
        args.labels = ",".join(args.label)
    if args.labels is not None:
        args.labels = args.label or args.labels.split(",")
        if len(args.labels) != len(args.csv):
            p.error(f"--labels has {len(args.labels)} labels for {len(args.csv)} CSV files")
    if args.kind in ("bars", "sweep") and len(args.csv) != 1:
        p.error(f"--kind {args.kind} takes one compare.csv or sweep.csv")
    out = args.output
    for ext in (".png", ".svg"):
        if out.endswith(ext):
            out = out[: -len(ext)]
    args.output = out
    return args


def draw(args):
    """The figure of parsed arguments, not yet saved (tests/results/test_plot.py
    imports this to measure a figure's axes and texts); InputError on bad input."""
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "cowsim"  # PY1
    UNITS.update(load_units())
    outdir = os.path.dirname(args.output) or "."
    if not os.path.isdir(outdir):
        raise InputError(f"{args.output}: no such directory '{outdir}'")
    return {"curves": kind_curves, "ratio": kind_ratio, "bars": kind_bars, "stack": kind_stack,
            "free": kind_free, "sweep": kind_sweep}[args.kind](args)


def main(argv):
    args = parse_args(argv)
    try:
        fig = draw(args)
    except InputError as e:
        fail(str(e))
    import matplotlib.pyplot as plt
    command = command_line(argv, args.output)
    try:
        save_whole(fig, args.output + ".png", "png", {"Software": None, "Comment": command})
        save_whole(fig, args.output + ".svg", "svg", {"Date": None, "Description": command})
    except OSError as e:
        print(f"{PROG}: {args.output}: cannot write: {e.strerror}", file=sys.stderr)
        return 1 if e.errno in DISK_FAILED else 2
    finally:
        plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
