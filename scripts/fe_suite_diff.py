#!/usr/bin/env python3
"""Compares two runs of cudnn-frontend's test files, one per implementation, from pytest's
JUnit XML (scripts/fe_attention_suites.sh writes them): per file passed / failed / skipped for
each, and every test whose outcome differs, grouped by the cudnnfe message's first line.

usage: fe_suite_diff.py OUTDIR    (reads OUTDIR/<impl>/<piece>.xml for impl in cudnnfe, fe)
A piece whose XML is missing or was cut off by a timeout (OUTDIR/<impl>/<piece>.rc holds 124)
is NOT MEASURED, for both implementations.
"""
import collections
import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

IMPLS = ("cudnnfe", "fe")


def outcomes(path):
    """{test id: (outcome, message)} of one JUnit file."""
    result = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = "skipped" if tag == "skipped" else "failed"
                message = (node.get("message") or node.text or "").strip()
                break
        result[name] = (outcome, message)
    return result


def first_line(message):
    line = message.splitlines()[0] if message else ""
    line = re.sub(r"\d+", "N", line)  # group messages that differ only in numbers
    return line[:200]


def main(outdir):
    pieces = sorted({os.path.basename(p)[:-4] for p in glob.glob(f"{outdir}/*/*.xml")})
    differences = collections.Counter()
    examples = {}
    print(f"{'piece':<28} " + "  ".join(f"{i + ' pass/fail/skip':>26}" for i in IMPLS))
    for piece in pieces:
        runs = {}
        cells = []
        for impl in IMPLS:
            rc_path = f"{outdir}/{impl}/{piece}.rc"
            rc = open(rc_path).read().strip() if os.path.exists(rc_path) else "?"
            xml = f"{outdir}/{impl}/{piece}.xml"
            if rc == "124" or not os.path.exists(xml):
                cells.append(f"{'NOT MEASURED (rc ' + rc + ')':>26}")
                continue
            runs[impl] = outcomes(xml)
            count = collections.Counter(o for o, _ in runs[impl].values())
            cells.append(f"{count['passed']:>10}/{count['failed']:>6}/{count['skipped']:>8}")
        print(f"{piece:<28} " + "  ".join(cells))
        if len(runs) != 2:
            continue
        mine, theirs = runs["cudnnfe"], runs["fe"]
        for test, (outcome, message) in mine.items():
            other = theirs.get(test, ("missing", ""))[0]
            if outcome == other or outcome == "passed":
                continue  # a pass where cudnn-frontend skips or fails is no regression
            key = (f"cudnnfe {outcome}, cudnn-frontend {other}", first_line(message))
            differences[key] += 1
            examples.setdefault(key, f"{piece}: {test}")
    print("\nTests where cudnnfe does worse than cudnn-frontend, by cause:")
    if not differences:
        print("  none")
    for (kind, cause), n in differences.most_common():
        print(f"  {n:5d}  {kind}: {cause}\n         e.g. {examples[(kind, cause)]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
