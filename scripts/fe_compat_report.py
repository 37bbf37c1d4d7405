#!/usr/bin/env python3
"""Helpers of scripts/fe_compat.sh: turn cudnn-frontend's sample notebooks into scripts, and
print the side-by-side table of a run. It runs nothing itself.

usage: fe_compat_report.py notebooks NOTEBOOK_DIR SCRIPT_DIR
       fe_compat_report.py table OUTDIR LABEL [LABEL...]
"""
import glob
import json
import os
import re
import sys


def notebooks(src, dest):
    """Each notebook's code cells as one script; shell escapes and magics are commented out."""
    os.makedirs(dest, exist_ok=True)
    for nb in sorted(glob.glob(os.path.join(src, "*.ipynb"))):
        with open(nb) as f:
            cells = [c for c in json.load(f)["cells"] if c["cell_type"] == "code"]
        parts = []
        for cell in cells:
            lines = "".join(cell["source"]).splitlines()
            parts.append("\n".join("# " + line if line.strip().startswith(("!", "%"))
                                   or "get_ipython" in line else line for line in lines))
        name = os.path.splitext(os.path.basename(nb))[0] + ".py"
        with open(os.path.join(dest, name), "w") as f:
            f.write("\n\n".join(parts) + "\n")


def _rc_table(path):
    """{file: exit status} from an rc.txt of "name status" lines."""
    result = {}
    if os.path.isfile(path):
        with open(path) as f:
            for line in f:
                name, _, rc = line.strip().rpartition(" ")
                if name:
                    result[name] = int(rc)
    return result


def _pytest_counts(log):
    """(passed, total run) from a pytest log's summary line; None when there is none."""
    if not os.path.isfile(log):
        return None
    with open(log, errors="replace") as f:
        text = f.read()
    summary = [l for l in text.splitlines() if re.search(r"\d+ (passed|failed|error)", l)]
    if not summary:
        return (0, 0) if "no tests ran" in text else None
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|errors?|skipped)",
                                                 summary[-1])}
    passed = counts.get("passed", 0)
    run = passed + counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    return passed, run


def _suite_cell(out, label, name):
    counts = _pytest_counts(os.path.join(out, f"suite_{label}", name + ".log"))
    rc = _rc_table(os.path.join(out, f"suite_{label}", "rc.txt")).get(name)
    if counts is None:
        return "-" if rc is None else f"rc={rc}"
    return f"{counts[0]}/{counts[1]}"


def _sample_cell(out, label, name):
    rc = _rc_table(os.path.join(out, f"samples_{label}", "rc.txt")).get(name)
    return "-" if rc is None else ("ok" if rc == 0 else f"rc={rc}")


def table(out, labels):
    """Per file, each label's result; '<' marks a file that does worse with cudnnfe."""
    rows, worse = [], 0
    for kind, cell in (("suite", _suite_cell), ("samples", _sample_cell)):
        names = set()
        for label in labels:
            names |= set(_rc_table(os.path.join(out, f"{kind}_{label}", "rc.txt")))
        for name in sorted(names):
            cells = [cell(out, label, name) for label in labels]
            flag = ""
            if len(cells) > 1 and _score(cells[0]) < _score(cells[1]):
                flag, worse = "<", worse + 1
            rows.append((kind, name, *cells, flag))
    header = ("kind", "file", *labels, "")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip())
    for kind, cell in (("suite", _suite_cell), ("samples", _sample_cell)):
        for i, label in enumerate(labels):
            cells = [r[2 + i] for r in rows if r[0] == kind]
            print(f"{kind} {label}: " + _total(kind, cells))
    if len(labels) > 1:
        print(f"files where cudnnfe does worse than cudnn-frontend: {worse}")


def _score(cell):
    if cell == "ok":
        return 1.0
    match = re.fullmatch(r"(\d+)/(\d+)", cell)
    return int(match.group(1)) if match else -1.0


def _total(kind, cells):
    if kind == "samples":
        return f"{sum(c == 'ok' for c in cells)} of {len(cells)} samples run"
    pairs = [re.fullmatch(r"(\d+)/(\d+)", c) for c in cells]
    passed = sum(int(m.group(1)) for m in pairs if m)
    run = sum(int(m.group(2)) for m in pairs if m)
    return f"{passed} of {run} L0 tests passed in {len(cells)} files"


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "notebooks":
        notebooks(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "table":
        table(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
