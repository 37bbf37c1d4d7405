#!/usr/bin/env python3
"""Draws the benchmark charts of the documentation site from result JSON files.

Reads every docs/benchmarks/results/*.json (the files bench_same_code.py and
bench_attention.py write with --json PATH) and writes, under docs/benchmarks/:

  * one SVG chart per group of rows (attention forward and backward are two,
    and a group with several units gets one chart per unit): grouped bars, the
    implementations side by side, titled with the GPU, cuDNN, cudnn-frontend
    and PyTorch versions and the date;
  * results.md, the page that shows each chart above a table of its numbers.

Both are committed; tests/docs_site/test_generated_docs.py runs this with
--check and fails when they are stale. They are committed, not drawn while
mkdocs builds, so that the site build needs no matplotlib, a chart can be
read (and diffed) in the repository, and a stale chart is a test failure
rather than a silent redraw. The SVGs are byte-for-byte reproducible with the
pinned matplotlib (.ci/requirements.txt): no dates, fixed element ids.

A result file (one run of one benchmark):
  {"benchmark": "bench_same_code" | "bench_attention", "gpu": "NVIDIA H200",
   "cudnn_version": "9.19.0", "cudnn_frontend_version": "1.32.0",
   "torch_version": "2.11", "date": "YYYY-MM-DD", "commit": "<git sha>",
   "rows": [{"name": "sdpa_fwd_s8k_causal", "group": "gpu" | "host" | "build" | "attention",
             "unit": "TFLOP/s" | "us/call" | "ms" | "GB/s", "higher_is_better": true,
             "values": {"cudnnfe": 642.1, "cudnn-frontend": 630.2, "pytorch": 600.0,
                        "jax": 413.0}}]}
Any implementation may be missing from a row's values. Rows of the same
group and name in several files are one row: each implementation's value
comes from the newest file (by date, then file name) that has it.

Usage: python3 bench/plot_results.py [--check] [--results DIR] [--out DIR]
"""
import argparse
import glob
import io
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_RESULTS = os.path.join(REPO, "docs", "benchmarks", "results")
DEFAULT_OUT = os.path.join(REPO, "docs", "benchmarks")
# The matplotlib the committed charts were drawn with; other releases draw
# other bytes (the staleness test then skips, or fails under CI=true).
PINNED_MATPLOTLIB = "3.10.9"

# Implementations in the order and colours every chart uses.
IMPLS = [
    ("cudnnfe", "cudnnfe", "#2e7d32"),
    ("cudnn-frontend", "cudnn-frontend", "#1565c0"),
    ("pytorch", "PyTorch", "#ef6c00"),
    ("jax", "JAX", "#6a1b9a"),
]
GROUP_TITLES = {
    "attention": "Attention",
    "gpu": "GPU time",
    "host": "Host time per execute call",
    "build": "Build time",
}
UNIT_LABELS = {"us/call": "µs per call", "TFLOP/s": "TFLOP/s", "ms": "ms", "GB/s": "GB/s"}
REQUIRED = ("benchmark", "gpu", "cudnn_version", "cudnn_frontend_version", "date", "rows")


class ResultError(Exception):
    pass


def load_results(results_dir):
    """[(path, document)], oldest first (date, then file name)."""
    docs = []
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        with open(path, encoding="utf-8") as f:
            try:
                doc = json.load(f)
            except json.JSONDecodeError as e:
                raise ResultError("%s: %s" % (path, e))
        missing = [k for k in REQUIRED if k not in doc]
        if missing:
            raise ResultError("%s: missing %s" % (path, ", ".join(missing)))
        for i, row in enumerate(doc["rows"]):
            for key in ("name", "group", "unit", "higher_is_better", "values"):
                if key not in row:
                    raise ResultError("%s: rows[%d] has no %r" % (path, i, key))
            unknown = set(row["values"]) - {k for k, _, _ in IMPLS}
            if unknown:
                raise ResultError("%s: rows[%d] (%s): unknown implementation %s"
                                  % (path, i, row["name"], ", ".join(sorted(unknown))))
        docs.append((path, doc))
    if not docs:
        raise ResultError("no result files in %s" % results_dir)
    docs.sort(key=lambda pd: (pd[1]["date"], os.path.basename(pd[0])))
    return docs


def direction(name):
    tokens = name.split("_")
    return "bwd" if "bwd" in tokens else "fwd" if "fwd" in tokens else None


def chart_key(row):
    return (row["group"], direction(row["name"]), row["unit"])


def chart_id(key):
    group, d, unit = key
    parts = [group] + ([d] if d else []) + [re.sub(r"[^a-z0-9]+", "", unit.lower())]
    return "-".join(parts)


def collect(docs):
    """{chart key: {"rows": [merged row], "sources": [(path, doc)]}}, in first-seen order."""
    charts = {}
    for path, doc in docs:
        for row in doc["rows"]:
            chart = charts.setdefault(chart_key(row), {"rows": {}, "sources": []})
            merged = chart["rows"].setdefault(row["name"], {
                "name": row["name"], "unit": row["unit"],
                "higher_is_better": row["higher_is_better"], "values": {}})
            merged["values"].update(row["values"])  # newer files come later
            if not chart["sources"] or chart["sources"][-1][0] != path:
                chart["sources"].append((path, doc))
    for chart in charts.values():
        chart["rows"] = list(chart["rows"].values())
    # Groups in a fixed order, then forward before backward.
    order = {g: i for i, g in enumerate(GROUP_TITLES)}
    return dict(sorted(charts.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][0],
                                                       {"fwd": 0, "bwd": 1}.get(kv[0][1], 2),
                                                       kv[0][2])))


def labels(rows):
    """Row labels: the names without the tokens every row of the chart shares at the start."""
    split = [r["name"].split("_") for r in rows]
    common = 0
    if len(split) > 1:
        while all(len(s) > common + 1 and s[common] == split[0][common] for s in split):
            common += 1
    return [" ".join(s[common:]) for s in split]


def title(key, chart):
    group, d, unit = key
    what = GROUP_TITLES.get(group, group)
    if d:
        what += {"fwd": ", forward", "bwd": ", backward"}[d]
    better = "higher is better" if chart["rows"][0]["higher_is_better"] else "lower is better"
    return "%s: %s (%s)" % (what, UNIT_LABELS.get(unit, unit), better)


def setup_line(sources):
    """GPU, versions and dates of the files a chart draws from."""
    def uniq(key, fmt):
        vals = []
        for _, doc in sources:
            v = doc.get(key)
            if v and v not in vals:
                vals.append(v)
        return fmt % " / ".join(vals) if vals else None

    parts = [uniq("gpu", "%s"), uniq("cudnn_version", "cuDNN %s"),
             uniq("cudnn_frontend_version", "cudnn-frontend %s"),
             uniq("torch_version", "PyTorch %s"), uniq("date", "%s")]
    return ", ".join(p for p in parts if p)


def fmt(v):
    return ("%.1f" % v) if abs(v) < 100 else ("%.0f" % v)


def draw(key, chart):
    """The chart as SVG text."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams.update({
        "svg.hashsalt": "cudnnfe-benchmarks",  # fixed element ids
        "svg.fonttype": "path",  # text as paths: looks the same without the font
        "font.family": "DejaVu Sans",
        "font.size": 10,
    })
    rows = chart["rows"]
    impls = [(k, label, color) for k, label, color in IMPLS if any(k in r["values"] for r in rows)]
    width = 0.8 / len(impls)
    fig, ax = plt.subplots(figsize=(max(6.4, 1.5 * len(rows) + 2.4), 4.2))
    top = max(v for r in rows for v in r["values"].values())
    for j, (k, label, color) in enumerate(impls):
        xs, ys = [], []
        for i, r in enumerate(rows):
            if k in r["values"]:
                xs.append(i + (j - (len(impls) - 1) / 2) * width)
                ys.append(r["values"][k])
        bars = ax.bar(xs, ys, width * 0.92, label=label, color=color)
        for b, y in zip(bars, ys):
            ax.text(b.get_x() + b.get_width() / 2, y + top * 0.01, fmt(y), ha="center",
                    va="bottom", fontsize=7.5)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels(rows))
    ax.set_ylabel(UNIT_LABELS.get(key[2], key[2]))
    ax.set_ylim(0, top * 1.15)
    ax.set_title(title(key, chart) + "\n" + setup_line(chart["sources"]), fontsize=10)
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.grid(axis="y", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.legend(ncol=len(impls), loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "bench/plot_results.py"})
    plt.close(fig)
    return buf.getvalue()


def page(charts, results_dir, out_dir):
    """results.md: each chart above the table of its numbers."""
    rel_results = os.path.relpath(results_dir, out_dir).replace(os.sep, "/")
    out = [
        "<!-- Generated by bench/plot_results.py from docs/benchmarks/results/*.json: do not",
        "     edit (tests/docs_site/test_generated_docs.py fails when it is stale). -->",
        "# Benchmark results",
        "",
        "Every chart and table below is drawn from the result files in",
        "`docs/benchmarks/results/` by `bench/plot_results.py`; [Benchmarks](index.md) says how",
        "they are measured. Missing bars are implementations a benchmark did not run.",
        "",
    ]
    for key, chart in charts.items():
        cid = chart_id(key)
        rows = chart["rows"]
        impls = [(k, label) for k, label, _ in IMPLS if any(k in r["values"] for r in rows)]
        out += ["## %s" % title(key, chart), "", "![%s](%s.svg)" % (title(key, chart), cid), ""]
        head = "| case |" + "".join(" %s |" % label for _, label in impls)
        if "cudnnfe" in dict(impls) and len(impls) > 1:
            head += " cudnnfe / cudnn-frontend |"
        out += [head, "|" + " --- |" * (head.count("|") - 1)]
        for label, r in zip(labels(rows), rows):
            line = "| %s |" % label + "".join(
                " %s |" % (fmt(r["values"][k]) if k in r["values"] else "") for k, _ in impls)
            if head.endswith("cudnn-frontend |"):
                v = r["values"]
                ratio = ("%.2f" % (v["cudnnfe"] / v["cudnn-frontend"])
                         if "cudnnfe" in v and v.get("cudnn-frontend") else "")
                line += " %s |" % ratio
            out.append(line)
        out += ["", "Setup: %s. Unit: %s, %s. Source: %s." % (
            setup_line(chart["sources"]), UNIT_LABELS.get(key[2], key[2]),
            "higher is better" if rows[0]["higher_is_better"] else "lower is better",
            ", ".join("[`%s`](%s/%s) (%s, commit %s)" % (
                os.path.basename(p), rel_results, os.path.basename(p), d["benchmark"],
                d.get("commit", "?")) for p, d in chart["sources"])), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def outputs(results_dir, out_dir):
    """{path: text} of everything this script writes."""
    charts = collect(load_results(results_dir))
    files = {os.path.join(out_dir, chart_id(k) + ".svg"): draw(k, c) for k, c in charts.items()}
    files[os.path.join(out_dir, "results.md")] = page(charts, results_dir, out_dir)
    return files


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=DEFAULT_RESULTS)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if an output is missing, stale or left over")
    args = ap.parse_args(argv)
    try:
        files = outputs(args.results, args.out)
    except ResultError as e:
        print("plot_results.py: %s" % e, file=sys.stderr)
        return 2
    stale = []
    for path, text in files.items():
        try:
            with open(path, encoding="utf-8", newline="") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current == text:
            continue
        if args.check:
            stale.append(path)
            continue
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        print("wrote %s" % os.path.relpath(path, REPO))
    # A chart no result draws any more is removed (reported by --check).
    for path in glob.glob(os.path.join(args.out, "*.svg")):
        if path not in files:
            if args.check:
                stale.append(path + " (left over)")
            else:
                os.remove(path)
                print("removed %s" % os.path.relpath(path, REPO))
    if stale:
        print("stale: %s (run python3 bench/plot_results.py)" % ", ".join(
            os.path.relpath(p, REPO) for p in stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
