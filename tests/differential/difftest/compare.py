"""Dtype-aware comparison of an output with the reference or with the other implementation.

An element passes when |got - want| <= atol * scale + rtol * |want|, scale being the largest
|want| compared (at least 1), with (rtol, atol) from the output's data type times the
reference's factor (Expected.tolerance: a family's allowance for longer accumulations, e.g.
attention's backward). Non-finite expected values must be matched exactly (NaN by NaN)."""
import numpy as np

# data type -> (rtol, atol relative to the output's scale)
TOLERANCE = {
    "FLOAT": (1e-4, 1e-4),     # integer-valued conv / matmul data are exact; fp32 norms ~1e-6
    "HALF": (4e-3, 4e-3),      # 2^-11 rounding of the output plus fp32 accumulation order
    "BFLOAT16": (2e-2, 2e-2),  # 2^-8 rounding; attention rounds P to bf16 before P @ V
    "INT32": (0.0, 0.0),
    "INT64": (0.0, 0.0),
    "BOOLEAN": (0.0, 0.0),
}
# Between two implementations each within the reference's tolerance.
PAIR_FACTOR = 2.0


def check(got, want, dtype, mask=None, factor=1.0):
    """None when got matches want; else a dict describing the worst element."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return {"why": f"shape {list(got.shape)} != expected {list(want.shape)}"}
    sel = np.ones(want.shape, bool) if mask is None else np.broadcast_to(mask, want.shape)
    if not sel.any():
        return None
    g, w = got[sel], want[sel]
    finite = np.isfinite(w)
    bad_special = ~finite & ~((np.isnan(w) & np.isnan(g)) | (w == g))
    rtol, atol = (x * factor for x in TOLERANCE[dtype])
    scale = max(1.0, float(np.abs(w[finite]).max()) if finite.any() else 1.0)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(finite, np.abs(g - w), 0.0)
        err = np.where(finite & ~np.isfinite(g), np.inf, err)
        limit = atol * scale + rtol * np.abs(np.where(finite, w, 0.0))
        bad = bad_special | (err > limit)
    if not bad.any():
        return None
    where = np.argwhere(sel)[int(np.argmax(np.where(bad, err - limit, -np.inf)))]
    return {"why": "values", "bad": int(bad.sum()), "compared": int(sel.sum()),
            "max_abs_err": float(err[bad].max()) if np.isfinite(err[bad]).any() else "inf",
            "nan": int(np.isnan(g[finite]).sum()), "scale": scale, "rtol": rtol,
            "atol": atol * scale, "at": [int(i) for i in where],
            "got": _num(got[tuple(where)]), "want": _num(want[tuple(where)])}


def _num(x):
    x = float(x)
    return x if np.isfinite(x) else str(x)


def compare_case(expected, records, target):
    """Findings of one graph: a list of dicts (kind, impl, output, detail).

    ``expected``: {name: builder.Expected} or None when no implementation ran; ``records``:
    runner results by implementation name."""
    findings = []
    ran = [r for r in records.values() if r["status"] == "ok"]
    for rec in ran:
        for name, exp in (expected or {}).items():
            if exp.exact_reference:
                for variant in ("outputs", "user_outputs"):
                    got = rec[variant].get(name)
                    if got is None:
                        continue
                    bad = check(got, exp.values, rec["dtypes"][name], exp.mask,
                                exp.tolerance)
                    if bad:
                        findings.append({"kind": "reference", "impl": rec["impl"],
                                         "output": name,
                                         "variant": "own" if variant == "outputs"
                                         else "user-layout", **bad})
    if len(ran) == 2:
        a, b = ran
        for name, exp in (expected or {}).items():
            bad = check(a["outputs"][name], b["outputs"][name], a["dtypes"][name], exp.mask,
                        exp.tolerance * PAIR_FACTOR)
            if bad:
                findings.append({"kind": "between", "impl": f"{a['impl']} vs {b['impl']}",
                                 "output": name, "variant": "own", **bad})
    return findings
