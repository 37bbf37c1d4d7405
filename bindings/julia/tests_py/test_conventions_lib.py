"""The Julia-order conventions of CuDNNFE.jl, and the values its tests
expect, checked against the real library without Julia.

CuDNNFE.jl describes a column-major Julia array of size (s1, ..., sn) and
strides (t1, ..., tn) to the C library as dims [sn, ..., s1] and strides
[tn, ..., t1]; computes `a * b` as the C matmul of (b, a); maps Julia
reduction dims d to mask bits n - d, and so on. Here numpy arrays in Fortran
order stand in for Julia arrays (same memory layout), the C calls the Julia
layer makes are made through ctypes (with struct layouts from the manifest),
and the results are compared with what test/runtests.jl expects: shapes,
strides, names, error kinds and messages, and, where the library's CPU
reference can execute, numerics.

This does not execute any Julia code: it checks the conventions and the
expected values that the Julia code and its tests are written against.
Skipped when no built library is found (build*/libcudnnfe.so or
$CUDNNFE_LIBRARY).
"""
import ctypes
import json
import os

import pytest

import jlcheck

np = jlcheck.require("numpy", "pip install numpy")

LIB_PATH = jlcheck.find_library()
if LIB_PATH is None and os.environ.get("CUDNNFE_LIBRARY"):
    pytest.fail("CUDNNFE_LIBRARY=%s is not a file" % os.environ["CUDNNFE_LIBRARY"], pytrace=False)
pytestmark = pytest.mark.skipif(LIB_PATH is None, reason="no built libcudnnfe.so (build*/ or $CUDNNFE_LIBRARY)")

with open(jlcheck.MANIFEST, encoding="utf-8") as _f:
    MANIFEST = json.load(_f)
CONST = {c["name"]: c["value"] for c in MANIFEST["constants"]}
ALIASES = {t["name"]: t["julia_type"] for t in MANIFEST["typedefs"]}

_CTYPES = {"Csize_t": ctypes.c_size_t, "Int32": ctypes.c_int32, "UInt32": ctypes.c_uint32,
           "Int64": ctypes.c_int64, "Cdouble": ctypes.c_double}


def _ctype(julia_type):
    t = ALIASES.get(julia_type, julia_type)
    if t in _CTYPES:
        return _CTYPES[t]
    if t.startswith("Ptr{") or t == "Cstring":
        return ctypes.c_void_p
    if t.startswith("NTuple{"):
        n, inner = t[len("NTuple{"):-1].split(",", 1)
        return _ctype(inner.strip()) * int(n)
    raise AssertionError(t)


# The options structs, from the manifest (itself checked against the C compiler).
STRUCTS = {}
for _s in MANIFEST["structs"]:
    STRUCTS[_s["typedef"]] = type(_s["name"], (ctypes.Structure,),
                                  {"_fields_": [(f["name"], _ctype(f["julia_type"]))
                                                for f in _s["fields"]]})

NP_DTYPE = {np.float32: CONST["CUDNNFE_DTYPE_FLOAT"], np.float64: CONST["CUDNNFE_DTYPE_DOUBLE"],
            np.int32: CONST["CUDNNFE_DTYPE_INT32"], np.bool_: CONST["CUDNNFE_DTYPE_BOOLEAN"]}


class CudnnfeError(Exception):
    def __init__(self, status, message):
        super().__init__("%d: %s" % (status, message))
        self.status, self.message = status, message


@pytest.fixture(scope="module")
def lib():
    L = ctypes.CDLL(LIB_PATH)
    L.cudnnfe_graph_last_error.restype = ctypes.c_char_p
    L.cudnnfe_handle_last_error.restype = ctypes.c_char_p
    L.cudnnfe_last_error.restype = ctypes.c_char_p
    L.cudnnfe_graph_add_scalar.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32,
                                           ctypes.c_double, ctypes.c_void_p]
    return L


class Graph:
    """The C calls CuDNNFE.jl makes, with Julia-order arguments."""

    def __init__(self, lib, name=None):
        self.L = lib
        self.p = ctypes.c_void_p()
        assert lib.cudnnfe_graph_create(ctypes.byref(self.p)) == 0
        if name:
            self.check(lib.cudnnfe_graph_set_name(self.p, name.encode()))

    def close(self):
        self.L.cudnnfe_graph_destroy(self.p)

    def check(self, status):
        if status != 0:
            raise CudnnfeError(status, self.L.cudnnfe_graph_last_error(self.p).decode())

    def opts(self, typedef, **fields):
        o = STRUCTS[typedef]()
        # cudnnfe_conv_options_init is a C macro: call the _sized function with
        # the struct's size, as CuDNNFE._default_options does with sizeof(T).
        getattr(self.L, typedef[: -len("_t")] + "_init_sized")(ctypes.byref(o), ctypes.c_size_t(ctypes.sizeof(o)))
        self._keep = []
        for k, v in fields.items():
            if k == "name":
                buf = ctypes.create_string_buffer(v.encode())
                self._keep.append(buf)
                v = ctypes.cast(buf, ctypes.c_void_p)
            setattr(o, k, v)
        return o

    # add_tensor!(g, dtype, size; strides, name) / add_tensor!(g, A)
    def tensor(self, dtype, jsize, jstrides=None, name=None):
        cd = (ctypes.c_int64 * len(jsize))(*reversed(jsize))
        cs = None if jstrides is None else (ctypes.c_int64 * len(jsize))(*reversed(jstrides))
        u = ctypes.c_int64()
        self.check(self.L.cudnnfe_graph_add_tensor(self.p, name.encode() if name else None, dtype,
                                                   len(jsize), cd, cs, ctypes.byref(u)))
        return u.value

    def array_tensor(self, a, name=None):
        return self.tensor(NP_DTYPE[a.dtype.type], a.shape, [s // a.itemsize for s in a.strides], name)

    def jsize(self, uid):
        d, s, n = (ctypes.c_int64 * 8)(), (ctypes.c_int64 * 8)(), ctypes.c_int32()
        self.check(self.L.cudnnfe_tensor_get_shape(self.p, ctypes.c_int64(uid), d, s, 8, ctypes.byref(n)))
        return tuple(reversed(d[:n.value])), tuple(reversed(s[:n.value]))

    def name(self, uid):
        p = ctypes.c_char_p()
        self.check(self.L.cudnnfe_tensor_get_name(self.p, ctypes.c_int64(uid), ctypes.byref(p)))
        return p.value.decode()

    def dtype(self, uid):
        d = ctypes.c_int32()
        self.check(self.L.cudnnfe_tensor_get_dtype(self.p, ctypes.c_int64(uid), ctypes.byref(d)))
        return d.value

    def output(self, uid):
        self.check(self.L.cudnnfe_tensor_set_output(self.p, ctypes.c_int64(uid), 1))
        return uid

    def pointwise(self, mode, *ins, **kw):
        u = [0, 0, 0]
        u[:len(ins)] = ins
        o = self.opts("cudnnfe_pointwise_options_t", **kw)
        out = ctypes.c_int64()
        self.check(self.L.cudnnfe_graph_add_pointwise(self.p, CONST["CUDNNFE_POINTWISE_" + mode.upper()],
                                                      *[ctypes.c_int64(x) for x in u], ctypes.byref(o),
                                                      ctypes.byref(out)))
        return out.value

    def conv(self, kind, a, b, pre, post, stride, dil, name=None):
        n = len(pre)
        pad3 = lambda v, d: (ctypes.c_int64 * 3)(*(list(reversed(v)) + [d] * (3 - n)))  # noqa: E731
        kw = dict(spatial_dims=n, pre_padding=pad3(pre, 0), post_padding=pad3(post, 0),
                  stride=pad3(stride, 1), dilation=pad3(dil, 1))
        if name:
            kw["name"] = name
        o = self.opts("cudnnfe_conv_options_t", **kw)
        out = ctypes.c_int64()
        self.check(getattr(self.L, "cudnnfe_graph_add_conv_" + kind)(
            self.p, ctypes.c_int64(a), ctypes.c_int64(b), ctypes.byref(o), ctypes.byref(out)))
        return out.value

    def matmul(self, a, b, name=None):
        # matmul!(g, a, b) == a * b in Julia: the C matmul of (b, a).
        o = self.opts("cudnnfe_matmul_options_t", **({"name": name} if name else {}))
        out = ctypes.c_int64()
        self.check(self.L.cudnnfe_graph_add_matmul(self.p, ctypes.c_int64(b), ctypes.c_int64(a),
                                                   ctypes.byref(o), ctypes.byref(out)))
        return out.value

    def reduction(self, mode, x, jdims, ndims):
        mask = 0
        for d in jdims:
            mask |= 1 << (ndims - d)
        o = self.opts("cudnnfe_reduction_options_t", axes_mask=mask)
        out = ctypes.c_int64()
        self.check(self.L.cudnnfe_graph_add_reduction(self.p, CONST["CUDNNFE_REDUCTION_" + mode.upper()],
                                                      ctypes.c_int64(x), ctypes.byref(o), ctypes.byref(out)))
        return out.value

    def run(self, inputs, outputs):
        """build!(g; target = :cpu_reference) and execute! with Fortran-order arrays."""
        o = self.opts("cudnnfe_build_options_t", target=CONST["CUDNNFE_TARGET_CPU_REFERENCE"])
        status = self.L.cudnnfe_graph_build(self.p, None, ctypes.byref(o))
        if status == CONST["CUDNNFE_STATUS_NOT_SUPPORTED"]:
            pytest.skip("the library's CPU reference cannot run this yet: %s"
                        % self.L.cudnnfe_graph_last_error(self.p).decode())
        self.check(status)
        outs = {}
        for uid in outputs:
            jsize, jstrides = self.jsize(uid)
            dt = {v: k for k, v in NP_DTYPE.items()}[self.dtype(uid)]
            # As allocate(t) does: an array packed in the tensor's dimension order (a
            # PermutedDimsArray over column-major storage when that is not column-major,
            # e.g. a channels-last convolution output).
            perm = sorted(range(len(jsize)), key=lambda i: jstrides[i])
            inverse = [perm.index(i) for i in range(len(perm))]
            a = np.zeros([jsize[i] for i in perm], dtype=dt, order="F").transpose(inverse)
            # As execute! checks: the strides of dims of size 1 do not matter.
            assert all(s // a.itemsize == js for s, js, n in zip(a.strides, jstrides, jsize) if n > 1)
            outs[uid] = a
        pairs = list(inputs.items()) + list(outs.items())
        B = STRUCTS["cudnnfe_binding_t"] * len(pairs)
        bindings = B(*[STRUCTS["cudnnfe_binding_t"](u, a.ctypes.data) for u, a in pairs])
        h = ctypes.c_void_p()
        assert self.L.cudnnfe_handle_create(ctypes.byref(h), -1) == 0
        try:
            status = self.L.cudnnfe_graph_execute(self.p, h, bindings, len(pairs), None, 0, None)
            if status == CONST["CUDNNFE_STATUS_NOT_SUPPORTED"]:
                pytest.skip("the library's CPU reference cannot run this yet: %s"
                            % self.L.cudnnfe_handle_last_error(h).decode())
            if status != 0:
                raise CudnnfeError(status, self.L.cudnnfe_handle_last_error(h).decode())
        finally:
            self.L.cudnnfe_handle_destroy(h)
        return [outs[u] for u in outputs]


@pytest.fixture
def g(lib):
    graph = Graph(lib)
    yield graph
    graph.close()


def F(a):
    return np.asfortranarray(a)


RNG = np.random.default_rng(7)


def test_julia_arrays_are_described_reversed(g):
    f32 = CONST["CUDNNFE_DTYPE_FLOAT"]
    t = g.tensor(f32, (4, 3, 2), name="x")
    # runtests.jl: size (4,3,2), strides (1,4,12), cdims [2,3,4], cstrides [12,4,1]
    assert g.jsize(t) == ((4, 3, 2), (1, 4, 12))
    a = F(np.zeros((4, 3, 2), np.float32))
    assert [s // 4 for s in a.strides] == [1, 4, 12]
    # A transposed view: PermutedDimsArray(rand(Float32, 3, 4), (2, 1)).
    p = F(np.zeros((3, 4), np.float32)).T
    tp = g.array_tensor(p, "P")
    assert g.jsize(tp) == ((4, 3), (3, 1))
    # A broadcast dimension.
    tb = g.tensor(f32, (4, 3), (1, 0), "bcast")
    assert g.jsize(tb) == ((4, 3), (1, 0))


def test_names_and_pointwise_shape(g):
    t = g.tensor(CONST["CUDNNFE_DTYPE_FLOAT"], (4, 3, 2), name="x2")
    y = g.pointwise("relu_fwd", t)
    assert g.name(y) == "pointwise_0::out"
    assert g.jsize(y) == ((4, 3, 2), (1, 4, 12))


def test_convolution_shapes_in_julia_order(g):
    f32 = CONST["CUDNNFE_DTYPE_FLOAT"]
    x, w = g.tensor(f32, (7, 6, 3, 2)), g.tensor(f32, (3, 2, 3, 4))
    args = ((1, 0), (1, 1), (2, 1), (1, 2))
    y = g.conv("fprop", x, w, *args, name="conv")
    assert g.jsize(y)[0] == (4, 5, 4, 2)
    assert g.name(y) == "conv::y"
    dy = g.tensor(f32, (4, 5, 4, 2))
    assert g.jsize(g.conv("dgrad", dy, w, *args))[0] == (7, 6, 3, 2)
    assert g.jsize(g.conv("wgrad", x, dy, *args))[0] == (3, 2, 3, 4)
    x1, w1 = g.tensor(f32, (9, 2, 3)), g.tensor(f32, (3, 2, 5))
    assert g.jsize(g.conv("fprop", x1, w1, (1,), (1,), (2,), (1,)))[0] == (5, 5, 3)


def test_matmul_is_a_times_b(g):
    A = F(RNG.random((3, 4), np.float32))
    B = F(RNG.random((4, 5), np.float32))
    ta, tb = g.array_tensor(A), g.array_tensor(B)
    tc = g.output(g.matmul(ta, tb, name="mm"))
    assert g.jsize(tc) == ((3, 5), (1, 3))
    (C,) = g.run({ta: A, tb: B}, [tc])
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-5)


def test_matmul_error_names_the_node_and_k(g):
    f32 = CONST["CUDNNFE_DTYPE_FLOAT"]
    a, b = g.tensor(f32, (3, 4), name="a"), g.tensor(f32, (5, 6), name="b")
    with pytest.raises(CudnnfeError) as e:
        g.matmul(a, b, name="mm")
    assert e.value.status == CONST["CUDNNFE_STATUS_INVALID_GRAPH"]
    assert "mm" in e.value.message and "K" in e.value.message


def test_reduction_dims_map_to_mask_bits(g):
    x = F(RNG.random((5, 4, 3), np.float32) + 0.1)
    tx = g.array_tensor(x)
    y = g.output(g.reduction("add", tx, (1, 3), 3))
    assert g.jsize(y)[0] == (1, 4, 1)
    (out,) = g.run({tx: x}, [y])
    np.testing.assert_allclose(out, x.astype(np.float64).sum(axis=(0, 2), keepdims=True), rtol=1e-5)


def test_gen_index_dim_and_broadcast(g):
    x = F(RNG.random((5, 4), np.float32))
    col = F(RNG.random((5, 1), np.float32))
    tx, tc = g.array_tensor(x), g.array_tensor(col)
    gi = g.output(g.pointwise("gen_index", tx, axis=2 - 1))  # dim = 1 in Julia
    s = g.output(g.pointwise("add", tx, tc))
    gi_out, s_out = g.run({tx: x, tc: col}, [gi, s])
    assert gi_out.dtype == np.int32
    assert (gi_out == np.arange(5)[:, None]).all()
    np.testing.assert_allclose(s_out, x + col, rtol=1e-6)


def test_normalization_and_softmax_shapes(g, lib):
    f32 = CONST["CUDNNFE_DTYPE_FLOAT"]
    x, scale = g.tensor(f32, (6, 4, 3)), g.tensor(f32, (6, 4, 1))
    bias = g.tensor(f32, (6, 4, 1))
    o = g.opts("cudnnfe_norm_options_t", name="ln")
    y, m, iv = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
    g.check(lib.cudnnfe_graph_add_layernorm(g.p, ctypes.c_int64(x), ctypes.c_int64(scale),
                                            ctypes.c_int64(bias), ctypes.byref(o), ctypes.byref(y),
                                            ctypes.byref(m), ctypes.byref(iv)))
    assert g.jsize(y.value)[0] == (6, 4, 3)
    assert g.jsize(m.value)[0] == (1, 1, 3) == g.jsize(iv.value)[0]
    assert g.dtype(m.value) == f32
    assert g.name(iv.value) == "ln::inv_variance"
    xs = g.tensor(f32, (5, 4, 2))
    so = g.opts("cudnnfe_softmax_options_t", generate_stats=1)
    sy, ss = ctypes.c_int64(), ctypes.c_int64()
    g.check(lib.cudnnfe_graph_add_softmax(g.p, ctypes.c_int64(xs), ctypes.byref(so), ctypes.byref(sy),
                                          ctypes.byref(ss)))
    assert g.jsize(ss.value)[0] == (1, 4, 2)


def test_attention_shapes(g, lib):
    f32 = CONST["CUDNNFE_DTYPE_FLOAT"]
    q, k, v = g.tensor(f32, (8, 5, 4, 2)), g.tensor(f32, (8, 7, 2, 2)), g.tensor(f32, (6, 7, 2, 2))
    o = g.opts("cudnnfe_sdpa_options_t", generate_stats=1)
    out, st = ctypes.c_int64(), ctypes.c_int64()
    g.check(lib.cudnnfe_graph_add_sdpa(g.p, ctypes.c_int64(q), ctypes.c_int64(k), ctypes.c_int64(v),
                                       ctypes.byref(o), ctypes.byref(out), ctypes.byref(st)))
    assert g.jsize(out.value)[0] == (6, 5, 4, 2)
    assert g.jsize(st.value)[0] == (1, 5, 4, 2)
    dO = g.tensor(f32, (6, 5, 4, 2))
    bo = g.opts("cudnnfe_sdpa_backward_options_t", name="attn_bwd")
    dq, dk, dv = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
    g.check(lib.cudnnfe_graph_add_sdpa_backward(
        g.p, *[ctypes.c_int64(u) for u in (q, k, v, out.value, dO, st.value)], ctypes.byref(bo),
        ctypes.byref(dq), ctypes.byref(dk), ctypes.byref(dv)))
    assert [g.jsize(t.value)[0] for t in (dq, dk, dv)] == [(8, 5, 4, 2), (8, 7, 2, 2), (6, 7, 2, 2)]
    assert g.name(dq.value) == "attn_bwd::dQ"


def test_error_messages_the_tests_match(lib):
    g = Graph(lib, "errs")
    try:
        with pytest.raises(CudnnfeError) as e:
            g.check(lib.cudnnfe_graph_validate(g.p))
        assert e.value.status == CONST["CUDNNFE_STATUS_INVALID_GRAPH"]
        assert "errs" in e.value.message and "no operations" in e.value.message
        with pytest.raises(CudnnfeError) as e:
            g.tensor(CONST["CUDNNFE_DTYPE_FLOAT"], (4, 0, 2), name="bad")
        assert e.value.status == CONST["CUDNNFE_STATUS_INVALID_ARGUMENT"]
        assert "bad" in e.value.message and "positive" in e.value.message
    finally:
        g.close()


def test_missing_binding_message(g, lib):
    x = F(RNG.random((4, 3), np.float32))
    tx = g.array_tensor(x, "x")
    ty = g.output(g.pointwise("neg", tx))
    (y,) = g.run({tx: x}, [ty])
    np.testing.assert_array_equal(y, -x)
    h = ctypes.c_void_p()
    assert lib.cudnnfe_handle_create(ctypes.byref(h), -1) == 0
    try:
        b = (STRUCTS["cudnnfe_binding_t"] * 1)(STRUCTS["cudnnfe_binding_t"](tx, x.ctypes.data))
        status = lib.cudnnfe_graph_execute(g.p, h, b, 1, None, 0, None)
        assert status == CONST["CUDNNFE_STATUS_INVALID_ARGUMENT"]
        assert "no binding" in lib.cudnnfe_handle_last_error(h).decode()
    finally:
        lib.cudnnfe_handle_destroy(h)


def test_convolution_numerics_in_whcn(g):
    x = F(RNG.random((7, 6, 3, 2), np.float32) - 0.5)
    w = F(RNG.random((3, 2, 3, 4), np.float32) - 0.5)
    tx, tw = g.array_tensor(x), g.array_tensor(w)
    pre, post, stride, dil = (1, 0), (1, 1), (2, 1), (1, 2)
    ty = g.output(g.conv("fprop", tx, tw, pre, post, stride, dil))
    (y,) = g.run({tx: x, tw: w}, [ty])
    # The reference of test/reference.jl, in Julia (W, H, C, N) indexing.
    ref = np.zeros((4, 5, 4, 2))
    for n in range(2):
        for k in range(4):
            for o0 in range(4):
                for o1 in range(5):
                    acc = 0.0
                    for c in range(3):
                        for f0 in range(3):
                            for f1 in range(2):
                                i0 = o0 * stride[0] + f0 * dil[0] - pre[0]
                                i1 = o1 * stride[1] + f1 * dil[1] - pre[1]
                                if 0 <= i0 < 7 and 0 <= i1 < 6:
                                    acc += float(x[i0, i1, c, n]) * float(w[f0, f1, c, k])
                    ref[o0, o1, k, n] = acc
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# Numerics of the newer operations, against numpy ports of test/reference.jl
# (same formulas, Julia-order indexing), so that the expectations of
# runtests.jl are checked against the library here.
# ---------------------------------------------------------------------------

def ref_sdpa(q, k, v, scale, causal=None):
    """reference.jl's ref_sdpa: q (d, s_q, h_q, b), k (d, s_kv, h_kv, b), v (d_v, s_kv, h_kv, b)."""
    d, sq, hq, B = q.shape
    skv, hkv = k.shape[1], k.shape[2]
    group = hq // hkv
    o = np.zeros((v.shape[0], sq, hq, B))
    stats = np.zeros((1, sq, hq, B))
    P_all = {}
    for b in range(B):
        for h in range(hq):
            hk = h // group
            S = scale * (k[:, :, hk, b].astype(np.float64).T @ q[:, :, h, b])  # S[j, i]
            for i in range(sq):
                for j in range(skv):
                    if (causal == "top_left" and j > i) or (causal == "bottom_right" and j > i + skv - sq):
                        S[j, i] = -np.inf
            m = S.max(axis=0, keepdims=True)
            P = np.exp(S - m)
            s = P.sum(axis=0, keepdims=True)
            P /= s
            stats[0, :, h, b] = (m + np.log(s))[0]
            o[:, :, h, b] = v[:, :, hk, b].astype(np.float64) @ P
            P_all[(h, b)] = P
    return o, stats, P_all


def ref_sdpa_backward(q, k, v, dO, scale, causal=None):
    _, _, P_all = ref_sdpa(q, k, v, scale, causal)
    hq, B = q.shape[2], q.shape[3]
    group = hq // k.shape[2]
    dq, dk, dv = np.zeros(q.shape), np.zeros(k.shape), np.zeros(v.shape)
    for b in range(B):
        for h in range(hq):
            hk = h // group
            P = P_all[(h, b)]
            Q, K, V, DO = (a.astype(np.float64) for a in (q[:, :, h, b], k[:, :, hk, b], v[:, :, hk, b],
                                                          dO[:, :, h, b]))
            dv[:, :, hk, b] += DO @ P.T
            dP = V.T @ DO
            dS = P * (dP - (P * dP).sum(axis=0, keepdims=True))
            dq[:, :, h, b] = scale * (K @ dS)
            dk[:, :, hk, b] += scale * (Q @ dS.T)
    return dq, dk, dv


def _sdpa_graph(g, lib, q, k, v, causal):
    tq, tk, tv = g.array_tensor(q), g.array_tensor(k), g.array_tensor(v)
    o = g.opts("cudnnfe_sdpa_options_t", generate_stats=1, causal_mask=int(causal == "top_left"),
               causal_mask_bottom_right=int(causal == "bottom_right"))
    out, st = ctypes.c_int64(), ctypes.c_int64()
    g.check(lib.cudnnfe_graph_add_sdpa(g.p, ctypes.c_int64(tq), ctypes.c_int64(tk), ctypes.c_int64(tv),
                                       ctypes.byref(o), ctypes.byref(out), ctypes.byref(st)))
    return tq, tk, tv, g.output(out.value), g.output(st.value)


@pytest.mark.parametrize("causal", [None, "top_left", "bottom_right"])
def test_attention_numerics_gqa(lib, causal):
    d, sq, skv, hq, hkv, B = 8, 5, 7, 4, 2, 2
    q = F(RNG.standard_normal((d, sq, hq, B)).astype(np.float32))
    k = F(RNG.standard_normal((d, skv, hkv, B)).astype(np.float32))
    v = F(RNG.standard_normal((6, skv, hkv, B)).astype(np.float32))
    g = Graph(lib)
    try:
        tq, tk, tv, to, ts = _sdpa_graph(g, lib, q, k, v, causal)
        o, st = g.run({tq: q, tk: k, tv: v}, [to, ts])
    finally:
        g.close()
    oref, sref, _ = ref_sdpa(q, k, v, 1 / np.sqrt(d), causal)
    np.testing.assert_allclose(o, oref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(st, sref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("causal", [None, "top_left", "bottom_right"])
def test_attention_backward_numerics(lib, causal):
    d, sq, skv, hq, hkv, B = 8, 5, 7, 4, 2, 2
    q = F(RNG.standard_normal((d, sq, hq, B)).astype(np.float32))
    k = F(RNG.standard_normal((d, skv, hkv, B)).astype(np.float32))
    v = F(RNG.standard_normal((6, skv, hkv, B)).astype(np.float32))
    dO = F(RNG.standard_normal((6, sq, hq, B)).astype(np.float32))
    scale = 1 / np.sqrt(d)
    oref, sref, _ = ref_sdpa(q, k, v, scale, causal)
    o32, s32 = F(oref.astype(np.float32)), F(sref.astype(np.float32))
    g = Graph(lib)
    try:
        ts = [g.array_tensor(a) for a in (q, k, v, o32, dO, s32)]
        bo = g.opts("cudnnfe_sdpa_backward_options_t", causal_mask=int(causal == "top_left"),
                    causal_mask_bottom_right=int(causal == "bottom_right"))
        outs = [ctypes.c_int64() for _ in range(3)]
        g.check(lib.cudnnfe_graph_add_sdpa_backward(g.p, *[ctypes.c_int64(u) for u in ts], ctypes.byref(bo),
                                                    *[ctypes.byref(u) for u in outs]))
        got = g.run(dict(zip(ts, (q, k, v, o32, dO, s32))), [g.output(u.value) for u in outs])
    finally:
        g.close()
    for a, b in zip(got, ref_sdpa_backward(q, k, v, dO, scale, causal)):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)


def _features(x):
    return x.astype(np.float64).reshape(-1, x.shape[-1], order="F")


def test_layernorm_statistics_per_last_julia_dim(lib):
    x = F(RNG.standard_normal((6, 4, 3)).astype(np.float32))
    scale = F((RNG.random((6, 4, 1)) + 0.5).astype(np.float32))
    bias = F(RNG.standard_normal((6, 4, 1)).astype(np.float32))
    g = Graph(lib)
    try:
        tx, ts, tb = g.array_tensor(x), g.array_tensor(scale), g.array_tensor(bias)
        o = g.opts("cudnnfe_norm_options_t", epsilon=1e-3)
        y, m, iv = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        g.check(lib.cudnnfe_graph_add_layernorm(g.p, ctypes.c_int64(tx), ctypes.c_int64(ts), ctypes.c_int64(tb),
                                                ctypes.byref(o), ctypes.byref(y), ctypes.byref(m), ctypes.byref(iv)))
        yo, mo, ivo = g.run({tx: x, ts: scale, tb: bias}, [g.output(u.value) for u in (y, m, iv)])
    finally:
        g.close()
    X = _features(x)
    mean = X.mean(axis=0, keepdims=True)
    ivar = 1 / np.sqrt(((X - mean) ** 2).mean(axis=0, keepdims=True) + 1e-3)
    yr = (X - mean) * ivar * scale.reshape(-1, 1, order="F") + bias.reshape(-1, 1, order="F")
    np.testing.assert_allclose(yo, yr.reshape(x.shape, order="F"), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mo.reshape(-1), mean.reshape(-1), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(ivo.reshape(-1), ivar.reshape(-1), rtol=1e-3)


def test_softmax_over_first_julia_dim(lib):
    x = F(RNG.standard_normal((5, 4, 2)).astype(np.float32))
    g = Graph(lib)
    try:
        tx = g.array_tensor(x)
        o = g.opts("cudnnfe_softmax_options_t", generate_stats=1)
        y, s = ctypes.c_int64(), ctypes.c_int64()
        g.check(lib.cudnnfe_graph_add_softmax(g.p, ctypes.c_int64(tx), ctypes.byref(o), ctypes.byref(y),
                                              ctypes.byref(s)))
        yo, so = g.run({tx: x}, [g.output(y.value), g.output(s.value)])
    finally:
        g.close()
    X = x.astype(np.float64)
    m = X.max(axis=0, keepdims=True)
    e = np.exp(X - m)
    np.testing.assert_allclose(yo, e / e.sum(axis=0, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(so, m + np.log(e.sum(axis=0, keepdims=True)), rtol=1e-5, atol=1e-6)


def test_transposed_output_layout(g):
    # set_strides!(ty, (3, 1)): a row-major output, bound as PermutedDimsArray(ybuf, (2, 1)).
    x = F(RNG.random((4, 3), np.float32))
    tx = g.array_tensor(x)
    ty = g.output(g.pointwise("identity", tx))
    s = (ctypes.c_int64 * 2)(1, 3)  # C order of Julia strides (3, 1)
    g.check(g.L.cudnnfe_tensor_set_strides(g.p, ctypes.c_int64(ty), 2, s))
    assert g.jsize(ty) == ((4, 3), (3, 1))
    ybuf = F(np.zeros((3, 4), np.float32))
    o = g.opts("cudnnfe_build_options_t", target=CONST["CUDNNFE_TARGET_CPU_REFERENCE"])
    g.check(g.L.cudnnfe_graph_build(g.p, None, ctypes.byref(o)))
    h = ctypes.c_void_p()
    assert g.L.cudnnfe_handle_create(ctypes.byref(h), -1) == 0
    try:
        B = STRUCTS["cudnnfe_binding_t"] * 2
        b = B(STRUCTS["cudnnfe_binding_t"](tx, x.ctypes.data), STRUCTS["cudnnfe_binding_t"](ty, ybuf.ctypes.data))
        assert g.L.cudnnfe_graph_execute(g.p, h, b, 2, None, 0, None) == 0
    finally:
        g.L.cudnnfe_handle_destroy(h)
    np.testing.assert_array_equal(ybuf.T, x)


def test_broadcast_input_takes_size_one_buffer(g):
    x = F(RNG.random((4, 3), np.float32))
    col = F(RNG.random((4, 1), np.float32))
    tx = g.array_tensor(x)
    tb = g.tensor(CONST["CUDNNFE_DTYPE_FLOAT"], (4, 3), (1, 0), "bcast")
    ty = g.output(g.pointwise("add", tx, tb))
    (y,) = g.run({tx: x, tb: col}, [ty])
    np.testing.assert_allclose(y, x + col, rtol=1e-6)


@pytest.mark.parametrize("mode,kw,fn", [
    ("relu_fwd", {"relu_lower_clip_slope": 0.1}, lambda v: np.where(v > 0, v, 0.1 * v)),
    ("relu_fwd", {"relu_upper_clip": 0.5}, lambda v: np.clip(v, 0, 0.5)),
    ("elu_fwd", {"elu_alpha": 2.0}, lambda v: np.where(v > 0, v, 2 * (np.exp(v) - 1))),
    ("softplus_fwd", {"softplus_beta": 2.0}, lambda v: np.log1p(np.exp(2 * v)) / 2),
    ("swish_fwd", {"swish_beta": 2.0}, lambda v: v / (1 + np.exp(-2 * v))),
    ("gelu_approx_tanh_fwd", {}, lambda v: 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))),
])
def test_pointwise_options(g, mode, kw, fn):
    x = F((RNG.random((5, 4)) * 2 - 1).astype(np.float32))
    tx = g.array_tensor(x)
    ty = g.output(g.pointwise(mode, tx, **kw))
    (y,) = g.run({tx: x}, [ty])
    np.testing.assert_allclose(y, fn(x.astype(np.float64)), rtol=1e-4, atol=1e-5)


def test_serialization_round_trip_is_stable(lib):
    # runtests.jl: serialize, deserialize, serialize again gives the same JSON,
    # which names the graph; garbage is BAD_SERIALIZED_DATA.
    g = Graph(lib, "saved")
    f32 = CONST["CUDNNFE_DTYPE_FLOAT"]
    try:
        tx, tw = g.tensor(f32, (5, 4), name="x"), g.tensor(f32, (4, 3), name="w")
        mm = g.matmul(tx, tw, name="mm")
        o = g.opts("cudnnfe_pointwise_options_t", name="act")
        out = ctypes.c_int64()
        g.check(lib.cudnnfe_graph_add_pointwise(g.p, CONST["CUDNNFE_POINTWISE_RELU_FWD"], ctypes.c_int64(mm),
                                                ctypes.c_int64(0), ctypes.c_int64(0), ctypes.byref(o),
                                                ctypes.byref(out)))
        g.output(out.value)

        def serialize(graph):
            n = ctypes.c_size_t()
            graph.check(lib.cudnnfe_graph_serialize(graph.p, None, 0, ctypes.byref(n)))
            buf = ctypes.create_string_buffer(n.value)
            graph.check(lib.cudnnfe_graph_serialize(graph.p, buf, n.value, ctypes.byref(n)))
            return buf.raw[:n.value]

        js = serialize(g)
    finally:
        g.close()
    assert js.lstrip().startswith(b"{") and b"saved" in js
    g2 = Graph(lib)
    try:
        g2.check(lib.cudnnfe_graph_deserialize(g2.p, js, len(js)))
        assert serialize(g2) == js
        u = ctypes.c_int64()
        g2.check(lib.cudnnfe_graph_find_tensor(g2.p, b"act::out", ctypes.byref(u)))
        assert g2.jsize(u.value)[0] == (5, 3)
        n = ctypes.c_size_t()
        g2.check(lib.cudnnfe_graph_get_node_count(g2.p, ctypes.byref(n)))
        assert n.value == 2
    finally:
        g2.close()
    g3 = Graph(lib)
    try:
        bad = b"{ this is not a graph"
        assert lib.cudnnfe_graph_deserialize(g3.p, bad, len(bad)) == CONST["CUDNNFE_STATUS_BAD_SERIALIZED_DATA"]
        assert lib.cudnnfe_graph_last_error(g3.p)
    finally:
        g3.close()
