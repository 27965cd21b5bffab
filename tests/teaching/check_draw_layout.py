#!/usr/bin/python3
"""tests/teaching/check_draw_layout.py FILE... - checks the geometry of
`cowsim draw --format svg` drawings (an .svg file, or a `--steps` .html page
holding one <svg> per step) from the coordinates in the output alone:

  1. no two lines cross or touch (each leaves its stack at a point of its own);
  2. no line passes through a stack other than the two it joins;
  3. no two stacks overlap;
  4. every block is drawn once, and every pointer from a drawn block to a
     drawn block is a line from the parent's stack to the child's stack;
  5. along each row (level) of one kind of tree, the stacks come in key
     order from left to right: every first key of a stack is above every
     first key of the stack to its left.

Prints one line per drawing ("FILE#N: L lines, S stacks, B blocks") and one
line per fault; exits 1 when a drawing has a fault, 2 on unreadable input.
"""
import re
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def svgs_of(path):
    text = open(path, encoding="utf-8").read()
    if path.endswith(".svg"):
        return [text]
    return re.findall(r"<svg\b.*?</svg>", text, flags=re.S)


def orient(a, b, c):
    v = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    return 0 if abs(v) < 1e-9 else (1 if v > 0 else -1)


def on_segment(a, b, p):
    return min(a[0], b[0]) - 1e-9 <= p[0] <= max(a[0], b[0]) + 1e-9 and \
        min(a[1], b[1]) - 1e-9 <= p[1] <= max(a[1], b[1]) + 1e-9


def segments_meet(p1, p2, q1, q2):
    """True when the closed segments p1p2 and q1q2 share a point."""
    o1, o2, o3, o4 = orient(p1, p2, q1), orient(p1, p2, q2), orient(q1, q2, p1), orient(q1, q2, p2)
    if o1 != o2 and o3 != o4:
        return True
    return (o1 == 0 and on_segment(p1, p2, q1)) or (o2 == 0 and on_segment(p1, p2, q2)) or \
        (o3 == 0 and on_segment(q1, q2, p1)) or (o4 == 0 and on_segment(q1, q2, p2))


def segment_enters_box(a, b, box):
    """True when the segment ab passes through the inside of box (x, y, w, h)."""
    x, y, w, h = box
    x0, y0, x1, y1 = x + 0.5, y + 0.5, x + w - 0.5, y + h - 0.5
    if x0 >= x1 or y0 >= y1:
        return False
    # Liang-Barsky clipping against the shrunk box.
    t0, t1 = 0.0, 1.0
    dx, dy = b[0] - a[0], b[1] - a[1]
    for p, q in ((-dx, a[0] - x0), (dx, x1 - a[0]), (-dy, a[1] - y0), (dy, y1 - a[1])):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return t1 - t0 > 1e-9


def key(text):
    return tuple(int(v) for v in text.split())


def check_svg(name, text):
    faults = []
    root = ET.fromstring(text)
    lines, stacks, blocks = [], {}, {}
    for el in root.iter(SVG + "line"):
        if el.get("class") != "edge":
            continue
        lines.append(((float(el.get("x1")), float(el.get("y1"))), (float(el.get("x2")), float(el.get("y2"))),
                      el.get("data-from"), el.get("data-to")))
    for g in root.iter(SVG + "g"):
        if g.get("class") != "stack":
            continue
        sid = g.get("data-stack")
        box = tuple(float(v) for v in g.get("data-box").split())
        keys = []
        for b in g.iter(SVG + "g"):
            if b.get("class") != "block":
                continue
            bytenr = b.get("data-bytenr")
            if bytenr in blocks:
                faults.append(f"block {bytenr} drawn twice")
            blocks[bytenr] = (sid, b.get("data-children").split())
            if b.get("data-first-key"):
                keys.append(key(b.get("data-first-key")))
        stacks[sid] = (box, g.get("data-level"), g.get("data-family"), keys)

    for i, (a1, a2, f1, t1) in enumerate(lines):
        for b1, b2, f2, t2 in lines[i + 1:]:
            if segments_meet(a1, a2, b1, b2):
                faults.append(f"line {f1}->{t1} {a1}-{a2} crosses or touches line {f2}->{t2} {b1}-{b2}")
        for sid, (box, _, _, _) in stacks.items():
            if sid not in (f1, t1) and segment_enters_box(a1, a2, box):
                faults.append(f"line {f1}->{t1} passes through stack {sid}")
    ids = sorted(stacks)
    for i, s in enumerate(ids):
        for t in ids[i + 1:]:
            (x, y, w, h), (u, v, p, q) = stacks[s][0], stacks[t][0]
            if x < u + p and u < x + w and y < v + q and v < y + h:
                faults.append(f"stacks {s} and {t} overlap")
    joined = {(f, t) for _, _, f, t in lines}
    for bytenr, (sid, children) in blocks.items():
        for child in children:
            if child in blocks and (sid, blocks[child][0]) not in joined:
                faults.append(f"block {bytenr} points at {child}, but no line joins stack {sid} to stack "
                              f"{blocks[child][0]}")
    rows = {}
    for sid, (box, level, family, keys) in stacks.items():
        if keys:
            rows.setdefault((family, level), []).append((box[0], sid, keys))
    for (family, level), row in rows.items():
        row.sort()
        for (_, left, lkeys), (_, right, rkeys) in zip(row, row[1:]):
            if max(lkeys) >= min(rkeys):
                faults.append(f"family {family} level {level}: stack {right} (keys from {min(rkeys)}) is right of "
                              f"stack {left} (keys up to {max(lkeys)})")
    print(f"{name}: {len(lines)} lines, {len(stacks)} stacks, {len(blocks)} blocks")
    for f in faults:
        print(f"{name}: FAULT {f}")
    return not faults, len(lines)


def main(paths):
    good = True
    for path in paths:
        try:
            svgs = svgs_of(path)
        except OSError as e:
            print(f"check_draw_layout: {e}", file=sys.stderr)
            return 2
        if not svgs:
            print(f"{path}: no <svg> in it")
            good = False
        for i, text in enumerate(svgs):
            ok, _ = check_svg(f"{path}#{i}", text)
            good &= ok
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
