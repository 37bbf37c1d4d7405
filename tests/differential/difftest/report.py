"""The per-family table, the list of findings (each with its one-line reproduction) and the
JSON of all results."""
import json
from collections import Counter, defaultdict

from .impls import CUDNNFE, FRONTEND

COLUMNS = ("graphs", "agree", "mismatch", "explained", "refused: cudnnfe only",
           "refused: cudnn-frontend only", "refused: both", "errors (cudnnfe/fe/other)",
           "user-layout", "ms/graph")


def _errors(results):
    c = Counter()
    for r in results:
        for name, rec in r["records"].items():
            if rec["status"] == "error":
                c[name] += 1
    return f"{c[CUDNNFE]}/{c[FRONTEND]}/{c['worker']}"


def _user_layout(results):
    """Graphs whose user-allocated outputs (no set_stride) mismatched, by implementation."""
    c = Counter()
    for r in results:
        for impl in {f["impl"] for f in r["findings"] if f.get("variant") == "user-layout"}:
            c[impl] += 1
    return " ".join(f"{k}:{v}" for k, v in sorted(c.items())) or "0"


def row(family, results):
    v = Counter(r["verdict"] for r in results)
    ms = sum(r["ms"]["total"] for r in results) / max(len(results), 1)
    return [family, len(results), v["agree"], v["mismatch"], v["explained"],
            v["refused-cudnnfe"], v["refused-frontend"], v["refused-both"], _errors(results),
            _user_layout(results), f"{ms:.0f}"]


def table(results):
    by_family = defaultdict(list)
    for r in results:
        by_family[r["family"]].append(r)
    rows = [row(f, rs) for f, rs in sorted(by_family.items())]
    if len(rows) > 1:
        rows.append(row("all", results))
    head = ["family"] + list(COLUMNS)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    lines = [" | ".join(str(x).rjust(w) for x, w in zip(head, widths))]
    lines.append("-+-".join("-" * w for w in widths))
    lines += [" | ".join(str(x).rjust(w) for x, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def _params(p):
    keep = {k: v for k, v in p.items() if v not in (None, False, [], "none")}
    return json.dumps(keep, separators=(",", ":"))[:400]


def _finding(f):
    if f.get("why") != "values":
        return f"{f['impl']} {f['output']} ({f['variant']}): {f['why']}"
    return (f"{f['impl']} {f['output']} ({f['variant']}): {f['bad']}/{f['compared']} elements "
            f"off, max |err| {f['max_abs_err']:.3g} > atol {f['atol']:.3g} + rtol "
            f"{f['rtol']:.3g}*|want|; at {f['at']} got {f['got']} want {f['want']}"
            if isinstance(f["max_abs_err"], float) else
            f"{f['impl']} {f['output']} ({f['variant']}): {f['bad']}/{f['compared']} off "
            f"(non-finite); at {f['at']} got {f['got']} want {f['want']}")


def findings(results, limit):
    """Lines describing every mismatch, error and one-sided refusal (``limit`` per kind)."""
    out = []
    for title, verdicts in (("mismatches", ("mismatch",)), ("explained", ("explained",)),
                            ("errors", ("error",)),
                            ("refused by one implementation only",
                             ("refused-cudnnfe", "refused-frontend"))):
        chosen = [r for r in results if r["verdict"] in verdicts]
        if not chosen:
            continue
        if title.startswith("refused") and all(
                r["records"].get(FRONTEND, {}).get("status") == "skipped" for r in chosen):
            title = "refused by cudnnfe"
        out.append(f"\n{title} ({len(chosen)}):")
        for r in chosen[:limit]:
            out.append(f"- [{r['family']} seed {r['seed']}] {_params(r['params'])}")
            for f in r["findings"]:
                note = f"  (explained: {f['explained']})" if f.get("explained") else ""
                out.append(f"    {_finding(f)}{note}")
            for name, rec in r["records"].items():
                if rec["status"] in ("error", "refused"):
                    out.append(f"    {name} {rec['status']} at {rec.get('stage')}: "
                               f"{rec['message'][:300]}")
            if r.get("repro"):
                out.append(f"    reproduce: {r['repro']}")
        if len(chosen) > limit:
            out.append(f"  ... and {len(chosen) - limit} more (all in --out)")
    return "\n".join(out)


def timing(results, wall, jobs):
    """Per family: mean build / execute ms per implementation and the reference's ms."""
    lines = [f"\nwall time {wall:.1f} s for {len(results)} graphs with {jobs} job(s): "
             f"{1e3 * wall / max(len(results), 1):.0f} ms/graph wall, "
             f"{sum(r['ms']['total'] for r in results) / 1e3:.1f} s of worker time"]
    by_family = defaultdict(list)
    for r in results:
        by_family[r["family"]].append(r)
    for fam, rs in sorted(by_family.items()):
        parts = []
        for impl in (CUDNNFE, FRONTEND):
            for key in ("build", "execute"):
                ts = [r["records"][impl]["times"].get(key) for r in rs
                      if r["records"].get(impl, {}).get("times", {}).get(key) is not None]
                if ts:
                    parts.append(f"{impl} {key} {sum(ts) / len(ts):.0f}")
        ref = [r["ms"].get("reference", 0.0) for r in rs]
        parts.append(f"reference {sum(ref) / len(ref):.0f}")
        lines.append(f"  {fam}: mean ms " + ", ".join(parts))
    return "\n".join(lines)


def write_json(path, results, meta):
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": results}, f, separators=(",", ":"), default=str)


def layout_notes(results):
    """Outputs whose get_stride() changed between validate and build, and outputs the two
    implementations lay out differently (dims of size 1 aside)."""
    drift, differ = Counter(), []
    for r in results:
        recs = r["records"]
        for name, rec in recs.items():
            if rec.get("stride_drift"):
                drift[name] += 1
        a, b = recs.get(CUDNNFE, {}), recs.get(FRONTEND, {})
        if a.get("status") == "ok" and b.get("status") == "ok":
            for out, s in a.get("strides", {}).items():
                t = b["strides"].get(out)
                if t is not None and s != t and _differs(r, out, s, t):
                    differ.append(f"  [{r['family']} seed {r['seed']}] {out}: cudnnfe {s}, "
                                  f"cudnn-frontend {t}")
    lines = ["\noutputs whose get_stride() changed between validate and build (allocating "
             "after validate would misplace them): " +
             (", ".join(f"{k} {v} graphs" for k, v in sorted(drift.items())) or "none")]
    lines.append(f"outputs laid out differently by the two implementations: {len(differ)}")
    lines += differ[:20]
    return "\n".join(lines)


def _differs(result, out, s, t):
    dims = result["records"][CUDNNFE].get("dims", {}).get(out)
    if dims is None:
        return True
    return any(d != 1 and x != y for d, x, y in zip(dims, s, t))
