"""validate_for_build!, the build options sm_count / sm_version and the 0.4
options of sdpa! and sdpa_backward! as CuDNNFE.jl makes them
(src/graph.jl, src/ops.jl), checked without Julia: the C calls
test/attention_support.jl makes are replayed through ctypes with the Julia
layer's conversions (sizes reversed, `nothing` as 0, Bools as Int32), on the
CPU reference and for a GPU target through sm_version (no GPU needed), and
the messages the Julia test matches are checked against the library's. A
static part checks that the Julia test calls the new function with the new
keywords and that runtests.jl includes it.
"""
import ctypes
import math
import re

import pytest

import jlcheck
from test_conventions_lib import (  # noqa: F401 (lib and g are fixtures)
    CONST, F, LIB_PATH, STRUCTS, CudnnfeError, Graph, g, lib)

np = jlcheck.require("numpy", "pip install numpy")

pytestmark = pytest.mark.skipif(LIB_PATH is None, reason="no built libcudnnfe.so (build*/ or $CUDNNFE_LIBRARY)")

I64 = ctypes.c_int64
RNG = np.random.default_rng(31)
JULIA_TEST = jlcheck.julia_sources(jlcheck.TEST_DIR)["attention_support.jl"]
HALF, FLOAT = CONST["CUDNNFE_DTYPE_HALF"], CONST["CUDNNFE_DTYPE_FLOAT"]


def validate_for_build(g, handle=None, target="AUTO", **fields):
    """validate_for_build!(g, handle; target, fields...): the struct filled as
    _with_build_options fills it (the C defaults, then the keywords)."""
    o = g.opts("cudnnfe_build_options_t", target=CONST["CUDNNFE_TARGET_" + target], **fields)
    g.check(g.L.cudnnfe_graph_validate_for_build(g.p, handle, ctypes.byref(o)))


def half_sdpa(g, **fields):
    """half_sdpa!(g; kwargs...) of the Julia test: Float16 q (64, 16, 4, 2),
    k and v (64, 32, 2, 2), node "attn", o marked as an output."""
    q = g.tensor(HALF, (64, 16, 4, 2), name="q")
    k = g.tensor(HALF, (64, 32, 2, 2), name="k")
    v = g.tensor(HALF, (64, 32, 2, 2), name="v")
    o = g.opts("cudnnfe_sdpa_options_t", name="attn", **fields)
    out, st = I64(), I64()
    g.check(g.L.cudnnfe_graph_add_sdpa(g.p, I64(q), I64(k), I64(v), ctypes.byref(o), ctypes.byref(out),
                                       ctypes.byref(st)))
    return g.output(out.value)


def fails(kind, f, *args, **kw):
    with pytest.raises(CudnnfeError) as e:
        f(*args, **kw)
    assert e.value.status == CONST["CUDNNFE_STATUS_" + kind], e.value.message
    return e.value.message


def in_julia_test(fragment):
    """The Julia test matches `fragment` (as a Julia string literal)."""
    return fragment.replace('"', '\\"') in JULIA_TEST


def test_alibi_without_causal_is_refused_for_a_gpu_only(g, lib):
    half_sdpa(g, alibi_mask=1)  # sdpa!(...; alibi = true)
    msg = fails("NOT_SUPPORTED", validate_for_build, g, target="GPU", sm_version=90)
    for part in ('sdpa "attn"', "alibi_mask needs a right bound of 0"):
        assert part in msg and in_julia_test(part), part
    validate_for_build(g, target="CPU_REFERENCE")
    h = ctypes.c_void_p()
    assert lib.cudnnfe_handle_create(ctypes.byref(h), -1) == 0
    try:
        validate_for_build(g, h, target="CPU_REFERENCE")
        fails("NOT_SUPPORTED", validate_for_build, g, h, target="GPU", sm_version=90)
    finally:
        lib.cudnnfe_handle_destroy(h)
    # build!(g; target = CPU) succeeds: the CPU reference takes ALiBi alone.
    o = g.opts("cudnnfe_build_options_t", target=CONST["CUDNNFE_TARGET_CPU_REFERENCE"])
    g.check(lib.cudnnfe_graph_build(g.p, None, ctypes.byref(o)))
    fails("WRONG_STATE", validate_for_build, g, target="CPU_REFERENCE")


@pytest.mark.parametrize("fields, refused", [(dict(causal_mask=1), False),
                                             (dict(causal_mask_bottom_right=1), True)])
def test_alibi_with_a_causal_mask(g, fields, refused):
    half_sdpa(g, alibi_mask=1, **fields)
    if refused:
        assert "alibi_mask" in fails("NOT_SUPPORTED", validate_for_build, g, target="GPU", sm_version=90)
    else:
        validate_for_build(g, target="GPU", sm_version=90)
    validate_for_build(g, target="CPU_REFERENCE")


def test_negative_sm_targets_are_invalid_arguments(g):
    half_sdpa(g)
    validate_for_build(g, target="CPU_REFERENCE", sm_count=8, sm_version=90)
    for field, value in (("sm_count", -1), ("sm_version", -90)):
        part = "%s is %d" % (field, value)
        assert part in fails("INVALID_ARGUMENT", validate_for_build, g, target="CPU_REFERENCE", **{field: value})
        assert in_julia_test(part)
    o = g.opts("cudnnfe_build_options_t", target=CONST["CUDNNFE_TARGET_CPU_REFERENCE"], sm_count=-4)
    assert g.L.cudnnfe_graph_build(g.p, None, ctypes.byref(o)) == CONST["CUDNNFE_STATUS_INVALID_ARGUMENT"]
    assert "sm_count is -4" in g.L.cudnnfe_graph_last_error(g.p).decode() and in_julia_test("sm_count is -4")
    built = ctypes.c_int32()
    g.check(g.L.cudnnfe_graph_is_built(g.p, ctypes.byref(built)))
    assert built.value == 0  # !isbuilt(g)


def test_score_max_and_score_sum_exp_in_julia_order(g, lib):
    d, sq, skv, hq, B = 4, 3, 5, 2, 1
    q = F(RNG.standard_normal((d, sq, hq, B)).astype(np.float32))
    k = F(RNG.standard_normal((d, skv, hq, B)).astype(np.float32))
    v = F(RNG.standard_normal((d, skv, hq, B)).astype(np.float32))
    tq, tk, tv = g.array_tensor(q), g.array_tensor(k), g.array_tensor(v)
    tmax = g.output(g.tensor(FLOAT, (1, sq, hq, B), name="score_max"))  # set_output!(input): a no-op
    tsum = g.output(g.tensor(FLOAT, (1, sq, hq, B), name="score_sum_exp"))
    kind = ctypes.c_int32()
    g.check(lib.cudnnfe_tensor_get_kind(g.p, I64(tmax), ctypes.byref(kind)))
    assert kind.value == CONST["CUDNNFE_TENSOR_KIND_INPUT"]
    o = g.opts("cudnnfe_sdpa_options_t", generate_stats=1, score_max=tmax, score_sum_exp=tsum)
    out, st = I64(), I64()
    g.check(lib.cudnnfe_graph_add_sdpa(g.p, I64(tq), I64(tk), I64(tv), ctypes.byref(o), ctypes.byref(out),
                                       ctypes.byref(st)))
    for t in (tmax, tsum):  # tensor_kind(t) === :output
        g.check(lib.cudnnfe_tensor_get_kind(g.p, I64(t), ctypes.byref(kind)))
        assert kind.value == CONST["CUDNNFE_TENSOR_KIND_OUTPUT"]
    got_o, got_st, m, z = g.run({tq: q, tk: k, tv: v}, [g.output(out.value), g.output(st.value), tmax, tsum])
    assert m.shape == z.shape == got_st.shape == (1, sq, hq, B)
    s = np.einsum("tih,tjh->jih", q[..., 0].astype(np.float64), k[..., 0].astype(np.float64)) / math.sqrt(d)
    want_m = s.max(axis=0)
    want_z = np.exp(s - want_m).sum(axis=0)
    np.testing.assert_allclose(m[0, :, :, 0], want_m, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(z[0, :, :, 0], want_z, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_st, m.astype(np.float64) + np.log(z), rtol=1e-5, atol=1e-5)
    p = np.exp(s - want_m) / want_z                                     # [j, i, h]
    want_o = np.einsum("jih,tjh->tih", p, v[..., 0].astype(np.float64))
    np.testing.assert_allclose(got_o[..., 0], want_o, rtol=1e-4, atol=1e-5)


def test_rng_dump_is_the_mask_o_used(g, lib):
    d, sq, skv, hq, B, prob = 4, 3, 5, 2, 1, 0.25
    q = F(RNG.standard_normal((d, sq, hq, B)).astype(np.float32))
    k = F(RNG.standard_normal((d, skv, hq, B)).astype(np.float32))
    v = F(RNG.standard_normal((d, skv, hq, B)).astype(np.float32))
    tq, tk, tv = g.array_tensor(q), g.array_tensor(k), g.array_tensor(v)
    seed, offset = I64(), I64()  # add_scalar!(g, 99; dtype = Int64), add_scalar!(g, 7; dtype = Int64)
    g.check(lib.cudnnfe_graph_add_scalar(g.p, None, CONST["CUDNNFE_DTYPE_INT64"], 99.0, ctypes.byref(seed)))
    g.check(lib.cudnnfe_graph_add_scalar(g.p, None, CONST["CUDNNFE_DTYPE_INT64"], 7.0, ctypes.byref(offset)))
    dump = g.tensor(FLOAT, (skv, sq, hq, B), name="rng_dump")
    o = g.opts("cudnnfe_sdpa_options_t", dropout_probability=prob, dropout_seed=seed.value,
               dropout_offset=offset.value, rng_dump=dump, unfuse_fma=1)
    out, st = I64(), I64()
    g.check(lib.cudnnfe_graph_add_sdpa(g.p, I64(tq), I64(tk), I64(tv), ctypes.byref(o), ctypes.byref(out),
                                       ctypes.byref(st)))
    got_o, mask = g.run({tq: q, tk: k, tv: v}, [g.output(out.value), dump])
    assert set(np.unique(mask)) <= {0.0, 1.0} and 0 < mask.mean() < 1
    s = np.einsum("tih,tjh->jih", q[..., 0].astype(np.float64), k[..., 0].astype(np.float64)) / math.sqrt(d)
    p = np.exp(s - s.max(axis=0)) / np.exp(s - s.max(axis=0)).sum(axis=0)
    want_o = np.einsum("jih,tjh->tih", p * mask[..., 0] / (1 - prob), v[..., 0].astype(np.float64))
    np.testing.assert_allclose(got_o[..., 0], want_o, rtol=1e-4, atol=1e-5)


def test_max_total_seq_lens(g, lib):
    x = g.tensor(HALF, (64, 8, 2, 1), name="x")
    st = g.tensor(FLOAT, (1, 8, 2, 1), name="stats")
    grads = [I64() for _ in range(3)]

    def backward(**fields):
        o = g.opts("cudnnfe_sdpa_backward_options_t", **fields)
        g.check(lib.cudnnfe_graph_add_sdpa_backward(g.p, *[I64(u) for u in (x, x, x, x, x, st)],
                                                    ctypes.byref(o), *[ctypes.byref(d) for d in grads]))

    part = "max_total_seq_len_kv is -1"
    assert part in fails("INVALID_ARGUMENT", backward, max_total_seq_len_kv=-1) and in_julia_test(part)
    backward(name="bwd", max_total_seq_len_q=64, max_total_seq_len_kv=96)
    for d in grads:
        g.output(d.value)
    assert "max_total_seq_len" in fails("NOT_SUPPORTED", validate_for_build, g, target="GPU", sm_version=90)
    validate_for_build(g, target="CPU_REFERENCE")


# ------------------------------------------------------------- static part

def test_the_julia_test_calls_the_new_function_with_the_new_keywords():
    code = jlcheck.strip_julia_comments(JULIA_TEST)
    assert re.search(r"validate_for_build!\(", code)
    for keyword in ("sm_version", "sm_count", "handle", "score_max", "score_sum_exp", "rng_dump",
                    "unfuse_fma", "max_total_seq_len_q", "max_total_seq_len_kv"):
        assert re.search(r"\b%s\s*=" % keyword, code), keyword
    runtests = jlcheck.julia_sources(jlcheck.TEST_DIR)["runtests.jl"]
    assert 'include("attention_support.jl")' in runtests


def test_build_and_validate_for_build_share_the_build_keywords():
    src = jlcheck.strip_julia_comments(jlcheck.julia_sources(jlcheck.SRC_DIR)["graph.jl"])
    for fn in ("build!", "validate_for_build!"):
        body = re.search(r"^function %s\(.*?^end$" % re.escape(fn), src, re.M | re.S).group(0)
        assert "_with_build_options(" in body, fn
    helper = re.search(r"^function _with_build_options\(.*?^end$", src, re.M | re.S).group(0)
    for field in ("sm_count", "sm_version"):
        assert re.search(r"\b%s::Integer = 0" % field, helper) and re.search(r"\b%s = Int32\(%s\)" % (field, field),
                                                                              helper), field
