"""Normalizations: layernorm and rmsnorm (training and inference phases), batchnorm training
(with running statistics) and inference, instancenorm; NHWC and NCHW inputs.

epsilon and momentum are pass-by-value FLOAT tensors [1,1,1,1], as in cudnn-frontend's
samples. Outputs: y allocated like x by user code (``empty_like``), statistics contiguous."""
import numpy as np

from .. import layout, refs
from ..builder import Data, Expected
from . import common

NAME = "norms"
KINDS = ("layernorm", "rmsnorm", "batchnorm", "batchnorm_inference", "instancenorm")


def generate(rng, degenerate):
    p = {"kind": rng.choice(KINDS), "dtype": common.io_dtype(rng)}
    dims = {"N": rng.randint(1, 8), "C": rng.choice([rng.randint(1, 16), 32, 64]),
            "H": rng.randint(1, 8), "W": rng.randint(1, 8)}
    forced = common.degenerate_dims(rng, ("N", "C", "H", "W"), 1, 3) if degenerate else set()
    for d in forced:
        dims[d] = 1
    if p["kind"] == "batchnorm" and dims["N"] * dims["H"] * dims["W"] < 2:
        dims["W"] = 2  # the unbiased running variance needs two values per channel
    p["dims"] = [dims[d] for d in "NCHW"]
    p["layout"] = "NHWC" if rng.random() < 0.6 else "NCHW"
    p["phase"] = "TRAINING" if rng.random() < 0.7 else "INFERENCE"
    p["param_dtype"] = "FLOAT" if p["kind"] in ("batchnorm", "batchnorm_inference",
                                               "instancenorm") or rng.random() < 0.5 \
        else p["dtype"]
    p["rms_bias"] = rng.random() < 0.5
    p["epsilon"] = rng.choice([1e-5, 1e-3])
    p["momentum"] = rng.choice([0.1, 0.25])
    p["explicit"] = common.explicit(rng)
    p["forced"] = sorted(forced)
    return p


def graph_types(p):
    return common.types(p["dtype"])


def _order(p):
    return layout.channels_last_order(4) if p["layout"] == "NHWC" else [0, 1, 2, 3]


def _param_dims(p):
    n, c, h, w = p["dims"]
    if p["kind"] in ("layernorm", "rmsnorm"):
        return [1, c, h, w]
    return [1, c, 1, 1]


def make_inputs(p, nrng):
    data = Data()
    dims = p["dims"]
    x = layout.rounded(3 * layout.normals(nrng, dims) - 0.5, p["dtype"])
    data.add("X", layout.stored(x, _order(p), p["dtype"]), x)
    pd = _param_dims(p)
    for name, mean, std in (("scale", 1.0, 0.5), ("bias", 0.0, 1.0)):
        v = layout.rounded(layout.normals(nrng, pd, std, mean), p["param_dtype"])
        data.add(name, layout.stored(v, _order(p), p["param_dtype"]), v)
    if p["kind"] in ("batchnorm", "batchnorm_inference"):
        mean = layout.rounded(layout.normals(nrng, pd), "FLOAT")
        var = layout.rounded(nrng.uniform(0.5, 2.0, pd), "FLOAT")
        data.add("mean", layout.stored(mean, _order(p), "FLOAT"), mean)
        data.add("var", layout.stored(var, _order(p), "FLOAT"), var)
    one = [1, 1, 1, 1]
    data.add("epsilon", np.full(one, p["epsilon"], np.float32))
    data.add("momentum", np.full(one, p["momentum"], np.float32))
    return data


def _stats(b, p, outs, names, dims):
    for t, name in zip(outs, names):
        if t is not None:
            b.output(t, name, dims, "FLOAT", layout.contiguous(dims))


def build(b, p):
    g, cudnn = b.g, b.cudnn
    dims = p["dims"]
    x = b.tensor("X")
    y_strides = layout.elem_strides(b.data.bind["X"])
    phase = getattr(cudnn.norm_forward_phase, p["phase"])
    kind = p["kind"]
    if kind == "layernorm":
        y, mean, inv = g.layernorm(input=x, scale=b.tensor("scale"), bias=b.tensor("bias"),
                                   epsilon=b.tensor("epsilon", by_value=True),
                                   norm_forward_phase=phase)
        _stats(b, p, (mean, inv), ("mean", "inv_var"), [dims[0], 1, 1, 1])
    elif kind == "rmsnorm":
        y, inv = g.rmsnorm(input=x, scale=b.tensor("scale"),
                           bias=b.tensor("bias") if p["rms_bias"] else None,
                           epsilon=b.tensor("epsilon", by_value=True), norm_forward_phase=phase)
        _stats(b, p, (inv,), ("inv_var",), [dims[0], 1, 1, 1])
    elif kind == "instancenorm":
        y, mean, inv = g.instancenorm(input=x, scale=b.tensor("scale"), bias=b.tensor("bias"),
                                      epsilon=b.tensor("epsilon", by_value=True),
                                      norm_forward_phase=phase)
        _stats(b, p, (mean, inv), ("mean", "inv_var"), [dims[0], dims[1], 1, 1])
    elif kind == "batchnorm":
        y, mean, inv, next_mean, next_var = g.batchnorm(
            input=x, scale=b.tensor("scale"), bias=b.tensor("bias"),
            in_running_mean=b.tensor("mean"), in_running_var=b.tensor("var"),
            epsilon=b.tensor("epsilon", by_value=True),
            momentum=b.tensor("momentum", by_value=True))
        _stats(b, p, (mean, inv, next_mean, next_var),
               ("mean", "inv_var", "next_running_mean", "next_running_var"),
               [1, dims[1], 1, 1])
    else:
        y = g.batchnorm_inference(input=x, mean=b.tensor("mean"), inv_variance=b.tensor("var"),
                                  scale=b.tensor("scale"), bias=b.tensor("bias"))
    b.output(y, "Y", dims, p["dtype"], y_strides)


def reference(p, data, target):
    v = data.values
    x, scale, bias, eps = v["X"], v["scale"], v["bias"], p["epsilon"]
    train = p["phase"] == "TRAINING"
    out = {}
    if p["kind"] == "layernorm":
        y, mean, inv = refs.layernorm(x, scale, bias, eps)
        out = {"mean": mean, "inv_var": inv} if train else {}
    elif p["kind"] == "rmsnorm":
        y, inv = refs.rmsnorm(x, scale, bias if p["rms_bias"] else None, eps)
        out = {"inv_var": inv} if train else {}
    elif p["kind"] == "instancenorm":
        y, mean, inv = refs.instancenorm(x, scale, bias, eps)
        out = {"mean": mean, "inv_var": inv} if train else {}
    elif p["kind"] == "batchnorm":
        y, mean, inv, nm, nv = refs.batchnorm(x, scale, bias, eps, (v["mean"], v["var"]),
                                              p["momentum"])
        out = {"mean": mean, "inv_var": inv, "next_running_mean": nm, "next_running_var": nv}
    else:  # the "var" input is inv_variance itself
        y = (x - v["mean"]) * v["var"] * scale + bias
    result = {name: Expected(val) for name, val in out.items()}
    if "inv_var" in result and p["kind"] != "rmsnorm":
        result["inv_var"].tolerance = _inv_var_conditioning(p, x, eps)
    result["Y"] = Expected(y)
    return result


def _inv_var_conditioning(p, x, eps):
    """The tolerance factor of inv_var = 1/sqrt(var + eps): a variance computed in fp32 as
    E[x^2] - E[x]^2 is off by about 6e-8 * E[x^2], which 1/sqrt magnifies by E[x^2] / (var +
    eps) (groups of one element have var 0: inv_var = 1/sqrt(eps) is then ill-conditioned)."""
    axes = {"layernorm": (1, 2, 3), "instancenorm": (2, 3), "batchnorm": (0, 2, 3)}[p["kind"]]
    mean_sq = (x * x).mean(axis=axes)
    var = x.var(axis=axes)
    cond = float((mean_sq / (var + eps)).max())
    return max(1.0, cond * 6e-8 / 1e-4)
