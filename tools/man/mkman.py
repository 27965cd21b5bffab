#!/usr/bin/env python3
"""tools/man/mkman.py PROGRAM [COMMAND] OUTPUT - a man page from --help.

The page is made from what `PROGRAM [COMMAND] --help` prints (sim/cli.h's one
help style), so --help and the man page cannot say different things:

    Usage:                      -> NAME and SYNOPSIS
      cowsim run [OPTION…] TRACE
    <summary paragraph>         -> DESCRIPTION
    Options:                    -> OPTIONS, one .TP per option
      -o, --output=FILE  text
    <notes>                     -> DESCRIPTION, continued
    Examples: / Exit status:    -> EXAMPLES / EXIT STATUS
    (cowsim --help's Commands:  -> COMMANDS; gen's Scenarios: -> SCENARIOS)

`PROGRAM --version` gives the footer. No date is written: the same build
gives the same bytes. Exit status: 0 written, 1 PROGRAM failed, 2 usage.
"""
import re
import subprocess
import sys


def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in (".", "'") else text


def sections(lines):
    """Splits --help into (title, [lines]) by the 'Title:' lines at column 0."""
    out, title, body = [], "", []
    for line in lines:
        if re.match(r"^[A-Z][A-Za-z ]*:$", line):
            out.append((title, body))
            title, body = line[:-1], []
        else:
            body.append(line)
    out.append((title, body))
    return out


def paragraphs(body):
    text, para = [], []
    for line in body + [""]:
        if line.strip():
            para.append(roff(line.strip()))
        elif para:
            text.append("\n".join(para))
            para = []
    return "\n.PP\n".join(text)


def items(body):
    """'  -o, --output=FILE   text' lines (with indented continuations) -> .TP."""
    out = []
    for line in body:
        if not line.strip():
            continue
        m = re.match(r"^  (\S.*?)(?:\s{2,}(.*))?$", line)
        if m and not line.startswith("   "):
            out.append(".TP\n.B %s\n%s" % (roff(m.group(1)), roff(m.group(2) or "")))
        elif out:
            out[-1] += "\n" + roff(line.strip())
    return "\n".join(out)


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    program, output = argv[1], argv[-1]
    command = argv[2] if len(argv) == 4 else None
    args = [program] + ([command] if command else [])
    try:
        help_text = subprocess.run(args + ["--help"], check=True, capture_output=True, text=True).stdout
        version = subprocess.run([program, "--version"], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print("mkman.py: %s --help: %s" % (" ".join(args), e), file=sys.stderr)
        return 1
    base = re.sub(r".*/", "", program)
    name = base + ("-" + command if command else "")
    parts = sections(help_text.rstrip("\n").split("\n"))
    body = dict(parts).get("Usage", [])
    usage, pre = [], []
    for i, line in enumerate(body):
        if not line.strip() and usage:
            pre = body[i + 1:]
            break
        if line.strip():
            usage.append(line.strip())
    first = " ".join(l.strip() for l in pre).split(". ")[0].split(": ")[0].split(" (")[0].rstrip(".")
    page = ['.TH %s 1 "" "%s" "User Commands"' % (name.upper(), roff(version.strip())),
            ".SH NAME", "%s \\- %s" % (roff(name), roff(first[:1].lower() + first[1:] or name)),
            ".SH SYNOPSIS"] + [".B %s" % roff(u) for u in usage]
    page += [".SH DESCRIPTION", paragraphs(pre)]
    titles = {"Options": "OPTIONS", "Commands": "COMMANDS", "Scenarios": "SCENARIOS",
              "Examples": "EXAMPLES", "Exit status": "EXIT STATUS"}
    for title, body in parts:
        if title in ("", "Usage"):
            continue
        # the notes between the options and the examples belong to the description
        opts, notes = body, []
        if title in ("Options", "Commands", "Scenarios"):
            for i, line in enumerate(body):
                if line and not line.startswith(" "):
                    opts, notes = body[:i], body[i:]
                    break
        if title == "Examples":
            page += [".SH EXAMPLES", ".nf"] + [roff(l.strip()) for l in body if l.strip()] + [".fi"]
        elif title in titles:
            page += [".SH " + titles[title], items(opts)]
        else:
            page += [".SH " + title.upper(), paragraphs(body)]
        if notes:
            page += [".PP", paragraphs(notes)]
    page += [".SH SEE ALSO", "cowsim(1), the cowsim columns command, docs/ of the source tree"]
    with open(output, "w") as f:
        f.write("\n".join(p for p in page if p) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
