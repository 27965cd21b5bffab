#!/usr/bin/python3
"""tests/results/test_plot.py - results/plot.py end to end, as TAP.

How it works: each test_* function runs plot.py (argv[1]) on the fixture CSVs
of tests/results/data/ (argv[2]) in a fresh temporary folder and checks the
exit status, the files written and, for determinism, the SVG bytes.
matplotlib writes each text as an SVG comment, which the tests look for.
"""

import os
import subprocess
import sys
import tempfile
import traceback

PLOT = sys.argv[1]
DATA = sys.argv[2]
COWSIM = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None  # for the units
STRICT = os.path.join(DATA, "seed-strictatime.csv")
NOATIME = os.path.join(DATA, "seed-noatime.csv")


def run(tmp, *args, cowsim=None):
    env = dict(os.environ, MPLCONFIGDIR=os.path.join(tmp, "mpl"),
               COWSIM_BIN=cowsim or COWSIM or "/nonexistent/cowsim")
    return subprocess.run(["/usr/bin/python3", PLOT, *args], cwd=tmp, env=env,
                          capture_output=True, text=True)


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def svg(tmp, out):
    with open(os.path.join(tmp, out + ".svg"), "rb") as f:
        return f.read()


def test_writes_png_and_svg(tmp):
    r = run(tmp, STRICT, "-o", "out")
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(os.path.join(tmp, "out.png")) > 0
    assert svg(tmp, "out").startswith(b"<?xml")


def test_same_inputs_give_same_svg_bytes(tmp):
    args = [STRICT, NOATIME, "--x", "mark", "--labels", "strict,noatime", "--title", "t"]
    os.mkdir(os.path.join(tmp, "a"))
    os.mkdir(os.path.join(tmp, "b"))
    assert run(tmp, *args, "-o", "a/out").returncode == 0
    assert run(tmp, *args, "-o", os.path.join(tmp, "b", "out")).returncode == 0
    assert svg(tmp, "a/out") == svg(tmp, "b/out")
    with open(os.path.join(tmp, "a/out.png"), "rb") as fa, open(os.path.join(tmp, "b/out.png"), "rb") as fb:
        assert fa.read() == fb.read()


def test_the_figure_keeps_the_command_that_made_it(tmp):
    os.mkdir(os.path.join(tmp, "d"))
    assert run(tmp, STRICT, "--x", "mark", "-o", os.path.join(tmp, "d", "out")).returncode == 0
    text = svg(tmp, "d/out")
    rel = os.path.relpath(STRICT, os.path.join(tmp, "d")).encode()
    assert b"<dc:description>cowsim plot " + rel + b" --x mark -o out</dc:description>" in text, text[:2000]
    with open(os.path.join(tmp, "d/out.png"), "rb") as f:
        assert b"tEXtComment\x00cowsim plot " in f.read()


def test_the_command_keeps_option_values_that_name_existing_files(tmp):
    # A folder named "sweep" (or "bars") beside the run must not turn
    # --kind sweep into --kind . in the command the report shows.
    os.mkdir(os.path.join(tmp, "mark"))
    os.mkdir(os.path.join(tmp, "d"))
    r = run(tmp, STRICT, "--x", "mark", "--title=mark", "--measured", STRICT, "-o", "d/out")
    assert r.returncode == 0, r.stderr
    rel = os.path.relpath(STRICT, os.path.join(tmp, "d")).encode()
    text = svg(tmp, "d/out")
    assert (b"<dc:description>cowsim plot " + rel + b" --x mark --title=mark --measured " + rel
            + b" -o out</dc:description>") in text, text[:2000]


def test_svg_has_no_date(tmp):
    assert run(tmp, STRICT, "-o", "out").returncode == 0
    assert b"<dc:date>" not in svg(tmp, "out")


def test_mark_axis_uses_row_labels(tmp):
    r = run(tmp, STRICT, "--x", "mark", "-o", "out")
    assert r.returncode == 0, r.stderr
    text = svg(tmp, "out")
    for label in (b"after_copy", b"after_snapshots", b"after_grep", b"after_grep2"):
        assert b"<!-- " + label + b" -->" in text, label


def test_labels_name_the_curves(tmp):
    r = run(tmp, STRICT, NOATIME, "--labels", "strictatime,noatime", "-o", "out")
    assert r.returncode == 0, r.stderr
    assert b"<!-- strictatime -->" in svg(tmp, "out")


def test_ratio_labels_the_axis(tmp):
    r = run(tmp, STRICT, "--x", "mark", "--ratio", "-o", "out")
    assert r.returncode == 0, r.stderr
    assert b"metadata_used / first value" in svg(tmp, "out")


def test_measured_points_are_overlaid(tmp):
    r = run(tmp, STRICT, "--x", "mark", "--measured", NOATIME, "-o", "out")
    assert r.returncode == 0, r.stderr
    assert b"measured: seed-noatime" in svg(tmp, "out")


def test_output_extension_is_stripped(tmp):
    assert run(tmp, STRICT, "-o", "out.png").returncode == 0
    assert os.path.exists(os.path.join(tmp, "out.png"))
    assert os.path.exists(os.path.join(tmp, "out.svg"))


def test_missing_file_exits_2_naming_it(tmp):
    r = run(tmp, "no-such.csv", "-o", "out")
    assert r.returncode == 2
    assert "no-such.csv" in r.stderr
    assert not os.path.exists(os.path.join(tmp, "out.svg"))


def test_missing_column_exits_2_naming_it(tmp):
    r = run(tmp, STRICT, "--y", "no_such_column", "-o", "out")
    assert r.returncode == 2
    assert "no_such_column" in r.stderr


def test_non_number_cell_exits_2_with_line(tmp):
    bad = write(tmp, "bad.csv", "op_index,label,metadata_used\n0,,12\n1,,twelve\n")
    r = run(tmp, bad, "-o", "out")
    assert r.returncode == 2
    assert "bad.csv:3" in r.stderr, r.stderr


def test_empty_cells_are_skipped(tmp):
    sparse = write(tmp, "sparse.csv", "op_index,label,metadata_used\n0,,\n1,,16384\n2,,\n")
    assert run(tmp, sparse, "-o", "out").returncode == 0


def test_ratio_with_zero_first_value_exits_2(tmp):
    zero = write(tmp, "zero.csv", "op_index,label,metadata_used\n0,,0\n1,,16384\n")
    assert run(tmp, zero, "--ratio", "-o", "out").returncode == 2


def test_label_count_mismatch_exits_2(tmp):
    assert run(tmp, STRICT, "--labels", "a,b", "-o", "out").returncode == 2


def test_missing_output_directory_exits_2(tmp):
    assert run(tmp, STRICT, "-o", "no/such/dir/out").returncode == 2


def run_csv(tmp, name, rows, extra=""):
    """A small run CSV: rows of (op_index, time_s, label, metadata_used, by_write, by_atime)."""
    lines = ["op_index,time_s,label,metadata_used,metadata_raw,metadata_total,data_total,"
             "enospc_events,metadata_by_write,metadata_by_atime"]
    for i, (op, t, label, used, by_write, by_atime) in enumerate(rows):
        enospc = 1 if extra == "enospc" and i >= 2 else 0
        lines.append(f"{op},{t},{label},{used},{2 * used},{4 * used},{8 << 20},{enospc},{by_write},{by_atime}")
    return write(tmp, name, "\n".join(lines) + "\n")


def four_marks(tmp, name, grow):
    mib = 1 << 20
    return run_csv(tmp, name, [(0, 1e9, "after_copy", 10 * mib, 10 * mib, 0),
                               (5, 1e9 + 86400, "after_snapshots", 10 * mib, 10 * mib, 0),
                               (9, 1e9 + 2 * 86400, "after_grep", (10 + grow) * mib, 10 * mib, grow * mib),
                               (12, 1e9 + 3 * 86400, "after_grep2", (10 + grow) * mib, 10 * mib, grow * mib)])


def test_units_come_from_cowsim_columns(tmp):
    if not COWSIM:
        return
    assert run(tmp, STRICT, "-o", "out").returncode == 0
    assert b"metadata_used (MiB)" in svg(tmp, "out")


def test_without_cowsim_the_unit_is_unknown_not_guessed(tmp):
    r = run(tmp, STRICT, "-o", "out", cowsim="/nonexistent/cowsim")
    assert r.returncode == 0, r.stderr
    assert b"metadata_used (unit unknown)" in svg(tmp, "out")


def test_a_panel_per_mount_a_colour_per_policy_a_style_per_mount(tmp):
    files = [four_marks(tmp, f"{m}-{p}.csv", g) for m, p, g in
             (("relatime", "inline", 200), ("relatime", "side", 20), ("noatime", "inline", 0), ("noatime", "side", 1))]
    r = run(tmp, *files, "--labels", "relatime/inline,relatime/side,noatime/inline,noatime/side",
            "--keys", "mount,policy", "--panel-by", "mount", "--x", "mark", "-o", "out")
    assert r.returncode == 0, r.stderr
    text = svg(tmp, "out")
    for title in (b"mount relatime", b"mount noatime", b"policy: inline", b"policy: side",
                  b"mount: relatime", b"mount: noatime"):
        assert b"<!-- " + title + b" -->" in text, title


def test_coinciding_curves_are_named_together(tmp):
    a = four_marks(tmp, "a.csv", 200)
    b = four_marks(tmp, "b.csv", 200)
    c = four_marks(tmp, "c.csv", 20)
    r = run(tmp, a, b, c, "--labels", "m/inline,m/threshold,m/side", "--keys", "mount,policy",
            "--panel-by", "mount", "--x", "mark", "-o", "out")
    assert r.returncode == 0, r.stderr
    text = svg(tmp, "out")
    assert b"<!-- inline = threshold -->" in text
    assert b"side = " not in text and b"= side" not in text


def test_a_label_that_does_not_fit_the_keys_exits_2(tmp):
    a = four_marks(tmp, "a.csv", 1)
    r = run(tmp, a, "--labels", "only-one-part", "--keys", "mount,policy", "-o", "out")
    assert r.returncode == 2 and "only-one-part" in r.stderr, r.stderr


def test_ratio_divides_by_the_baseline_curve(tmp):
    files = [four_marks(tmp, f"{m}.csv", g) for m, g in (("relatime", 200), ("noatime", 0))]
    r = run(tmp, *files, "--kind", "ratio", "--labels", "relatime/inline,noatime/inline",
            "--keys", "mount,policy", "--baseline", "mount=noatime", "--x", "mark", "-o", "out")
    assert r.returncode == 0, r.stderr
    assert b"metadata_used / baseline (mount=noatime)" in svg(tmp, "out")
    r = run(tmp, *files, "--kind", "ratio", "--labels", "relatime/inline,noatime/inline",
            "--keys", "mount,policy", "--baseline", "mount=lazytime", "-o", "out2")
    assert r.returncode == 2 and "no baseline curve" in r.stderr, r.stderr


def test_bars_draw_final_and_growth_per_parameter(tmp):
    table = write(tmp, "compare.csv", "mount,policy,status,base_mark,metadata_base,metadata_final\n"
                  "relatime,inline,done,after_copy,10485760,262144000\n"
                  "noatime,inline,done,after_copy,10485760,10485760\n")
    r = run(tmp, table, "--kind", "bars", "-o", "out")
    assert r.returncode == 0, r.stderr
    text = svg(tmp, "out")
    assert b"growth since after_copy (MiB)" in text and b"<!-- 240.0 -->" in text


def test_stack_draws_every_metadata_by_column(tmp):
    a = four_marks(tmp, "a.csv", 200)
    r = run(tmp, a, "--kind", "stack", "--x", "mark", "-o", "out")
    assert r.returncode == 0, r.stderr
    text = svg(tmp, "out")
    assert b"<!-- write -->" in text and b"<!-- atime -->" in text
    assert run(tmp, a, "--kind", "stack", "--stack", "tree_", "-o", "out2").returncode == 2


def test_free_marks_the_first_enospc(tmp):
    mib = 1 << 20
    a = run_csv(tmp, "a.csv", [(i, i, "", (10 + 50 * i) * mib, 0, 0) for i in range(5)], extra="enospc")
    r = run(tmp, a, "--kind", "free", "--device-size", str(2048 * mib), "-o", "out")
    assert r.returncode == 0, r.stderr
    assert b"first ENOSPC" in svg(tmp, "out")
    r = run(tmp, a, "--kind", "free", "-o", "out2")
    assert r.returncode == 2 and "device size" in r.stderr, r.stderr


def test_days_axis_counts_from_the_first_row(tmp):
    a = four_marks(tmp, "a.csv", 1)
    assert run(tmp, a, "--x", "days", "-o", "out").returncode == 0
    assert b"days since the start" in svg(tmp, "out")


def test_many_marks_are_thinned(tmp):
    rows = [(i, i, f"mark_{i:02}", 1 << 20, 1 << 20, 0) for i in range(60)]
    a = run_csv(tmp, "a.csv", rows)
    assert run(tmp, a, "--x", "mark", "-o", "out").returncode == 0
    text = svg(tmp, "out")
    assert b"every 5th labelled" in text and b"<!-- mark_05 -->" in text and b"<!-- mark_03 -->" not in text


def test_thinned_axis_says_3rd_not_3th(tmp):
    # 31 marks (a 30-day rotation): every third is labelled, and the axis says so in English
    rows = [(i, i, f"day_{i:02}", 1 << 20, 1 << 20, 0) for i in range(31)]
    a = run_csv(tmp, "a.csv", rows)
    assert run(tmp, a, "--x", "mark", "-o", "out").returncode == 0
    text = svg(tmp, "out")
    assert b"every 3rd labelled" in text and b"3th" not in text


def test_sweep_title_fills_the_template(tmp):
    table = write(tmp, "sweep.csv", "snapshots,nodesize,status,base_mark,metadata_base,metadata_final,"
                  "amplification\n0,16384,done,after_copy,1,1,1.0\n2,16384,done,after_copy,1,3,3.0\n"
                  "4,16384,done,after_copy,1,5,5.0\n")
    r = run(tmp, table, "--kind", "sweep", "--title", "sweep: seed-experiment --snapshots {snapshots}", "-o", "out")
    assert r.returncode == 0, r.stderr
    text = svg(tmp, "out")
    assert b"{snapshots} -->" not in text and b"snapshots 0,2,4 -->" in text


# ---- figures that do not mislead (PY6-PY9) ---------------------------------------------

def figure_of(tmp, *args):
    """plot.py's figure for ARGS (-o out in TMP), drawn but not saved, so a
    test can measure its axes and where its texts landed."""
    import importlib.util
    os.environ["MPLCONFIGDIR"] = os.path.join(tmp, "mpl")
    os.environ["COWSIM_BIN"] = COWSIM or "/nonexistent/cowsim"
    spec = importlib.util.spec_from_file_location("cowsim_plot", PLOT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    here = os.getcwd()
    os.chdir(tmp)
    try:
        fig = module.draw(module.parse_args([*args, "-o", "out"]))
        fig.canvas.draw()
    finally:
        os.chdir(here)
    return fig


def panels(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


def texts_of(fig):
    """Every visible, non-empty text inside the panels: annotations and legends."""
    found = []
    for ax in panels(fig):
        found += [t for t in ax.texts if t.get_visible() and t.get_text()]
        if ax.get_legend():
            found += [t for t in ax.get_legend().get_texts() if t.get_text()]
    return found


def overlapping(texts, renderer):
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    return [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1:] if ba.overlaps(bb)]


def test_panels_of_one_quantity_share_one_y_scale_and_name_their_range(tmp):
    files = [four_marks(tmp, f"{m}-inline.csv", g) for m, g in (("relatime", 200), ("noatime", 0))]
    args = [*files, "--labels", "relatime/inline,noatime/inline", "--keys", "mount,policy",
            "--panel-by", "mount", "--x", "mark"]
    for kind in ("curves", "stack"):
        fig = figure_of(tmp, *args, "--kind", kind)
        limits = {ax.get_ylim() for ax in panels(fig)}
        assert len(panels(fig)) == 2 and len(limits) == 1, (kind, limits)
    r = run(tmp, *args, "-o", "out")
    assert r.returncode == 0, r.stderr
    text = svg(tmp, "out")
    assert b"<!-- mount noatime -->" in text and text.count(b"(y scale shared) -->") == 2, text[-3000:]
    if COWSIM:
        assert b"<!-- this panel: 10 MiB (y scale shared) -->" in text
        assert b"<!-- this panel: 10 to 210 MiB (y scale shared) -->" in text


def enospc_csv(tmp, name):
    """A run whose first ENOSPC and first lost atime update are on the same row."""
    mib = 1 << 20
    lines = ["op_index,time_s,label,metadata_used,metadata_raw,metadata_total,data_total,"
             "enospc_events,atime_lost"]
    for i in range(5):
        lines.append(f"{i},{i},,{(10 + i) * mib},{2 * (10 + i) * mib},{64 * mib},{8 * mib},"
                     f"{max(0, i - 1)},{max(0, 3 * (i - 1))}")
    return write(tmp, name, "\n".join(lines) + "\n")


def test_free_event_labels_never_overprint(tmp):
    a = enospc_csv(tmp, "a.csv")
    fig = figure_of(tmp, a, "--kind", "free", "--device-size", str(512 << 20))
    texts = texts_of(fig)
    events = [t.get_text() for t in texts if t.get_text().startswith("first ")]
    assert len(events) == 2, events
    clashes = overlapping(texts, fig.canvas.get_renderer())
    assert not clashes, clashes
    assert events == ["first ENOSPC: a at trace op 2", "first lost atime: a at trace op 2"], events


def test_lost_atime_updates_are_flagged_on_curves_bars_and_sweeps(tmp):
    a = enospc_csv(tmp, "a.csv")
    r = run(tmp, a, "-o", "curves")
    assert r.returncode == 0, r.stderr
    assert b"<!-- 9 atime updates lost (ENOSPC): a -->" in svg(tmp, "curves")
    table = "mount,policy,status,base_mark,metadata_base,metadata_final,amplification,atime_lost\n" \
            "relatime,inline,done,after_copy,1048576,8388608,8.0,8503\n" \
            "relatime,side-table,done,after_copy,1048576,2097152,2.0,0\n" \
            "noatime,inline,done,after_copy,1048576,1048576,1.0,0\n" \
            "noatime,side-table,done,after_copy,1048576,1048576,1.0,0\n"
    write(tmp, "compare.csv", table)
    r = run(tmp, "compare.csv", "--kind", "bars", "-o", "bars")
    assert r.returncode == 0, r.stderr
    text = svg(tmp, "bars")
    assert b"<!-- 8.0 (8503 lost) -->" in text and b"<!-- 2.0 -->" in text
    assert b"hatched: atime updates lost (ENOSPC), the count on the bar" in text
    r = run(tmp, "compare.csv", "--kind", "sweep", "-o", "sweep")
    assert r.returncode == 0, r.stderr
    assert b"<!-- 8503 atime updates lost (ENOSPC): policy=inline, mount=relatime -->" in svg(tmp, "sweep")
    write(tmp, "clean.csv", table.replace(",8503\n", ",0\n"))
    for kind in ("bars", "sweep"):
        r = run(tmp, "clean.csv", "--kind", kind, "-o", "clean-" + kind)
        assert r.returncode == 0 and b"atime updates lost" not in svg(tmp, "clean-" + kind), kind


def sweep_table(tmp, name, param, values, amplification):
    lines = [f"{param},policy,status,base_mark,metadata_base,metadata_final,amplification"]
    for v in values:
        for policy in ("inline", "threshold:5%", "side-table"):
            lines.append(f"{v},{policy},done,after_copy,1,1,{amplification(v, policy)}")
    return write(tmp, name, "\n".join(lines) + "\n")


def test_sweep_byte_axes_are_ticked_in_kib_mib_with_no_offset(tmp):
    if not COWSIM:
        return
    nodes = sweep_table(tmp, "nodes.csv", "nodesize", (4096, 16384, 65536), lambda v, p: v / 4096)
    r = run(tmp, nodes, "--kind", "sweep", "-o", "nodes")
    assert r.returncode == 0, r.stderr
    text = svg(tmp, "nodes")
    assert b"<!-- 4 KiB -->" in text and b"<!-- 64 KiB -->" in text and b"<!-- nodesize (bytes) -->" in text
    assert b"2^{" not in text
    sizes = (600 << 20, 900 << 20, 1200 << 20)
    dev = sweep_table(tmp, "dev.csv", "device-size", sizes, lambda v, p: v / (600 << 20))
    fig = figure_of(tmp, dev, "--kind", "sweep")
    ax = panels(fig)[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["600 MiB", "900 MiB", "1.172 GiB"]
    assert ax.xaxis.get_offset_text().get_text() == ""


def test_coinciding_sweep_lines_are_nested_and_named(tmp):
    table = sweep_table(tmp, "s.csv", "snapshots", (0, 2, 4),
                        lambda v, p: 1.0 if p == "side-table" else 1.0 + v)
    r = run(tmp, table, "--kind", "sweep", "-o", "out")
    assert r.returncode == 0, r.stderr
    assert b"<!-- policy=inline = policy=threshold:5% (curves coincide) -->" in svg(tmp, "out")
    fig = figure_of(tmp, table, "--kind", "sweep")
    lines = {line.get_label(): line for line in panels(fig)[0].lines}
    inline, threshold = lines["policy=inline"], lines["policy=threshold:5%"]
    assert inline.get_linewidth() > threshold.get_linewidth()
    assert inline.get_marker() != threshold.get_marker() != lines["policy=side-table"].get_marker()
    assert inline.get_markersize() > threshold.get_markersize()


def main():
    tests = [(n, f) for n, f in globals().items() if n.startswith("test_") and callable(f)]
    print(f"1..{len(tests)}")
    failed = 0
    for i, (name, fn) in enumerate(tests, 1):
        with tempfile.TemporaryDirectory(prefix="cowsim-test-plot-") as tmp:
            try:
                fn(tmp)
                print(f"ok {i} - {name}")
            except Exception:
                failed += 1
                print(f"not ok {i} - {name}")
                for line in traceback.format_exc().splitlines():
                    print(f"# {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
