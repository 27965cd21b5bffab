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
STRICT = os.path.join(DATA, "seed-strictatime.csv")
NOATIME = os.path.join(DATA, "seed-noatime.csv")


def run(tmp, *args):
    env = dict(os.environ, MPLCONFIGDIR=os.path.join(tmp, "mpl"))
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
    assert run(tmp, *args, "-o", "a").returncode == 0
    assert run(tmp, *args, "-o", "b").returncode == 0
    assert svg(tmp, "a") == svg(tmp, "b")


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
