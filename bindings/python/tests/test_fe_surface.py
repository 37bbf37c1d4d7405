"""cudnn-frontend's module functions, enums, keywords and Tensor methods that cudnnfe offers
for its code (issue 15), on the CPU reference: what is served computes the right numbers,
what is not offered raises NotOfferedError naming the feature."""
import sys

import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type, heur_mode
from cpu_helpers import CPU, graph, run


def test_backend_version_string_format(monkeypatch):
    from cudnnfe import _handle

    monkeypatch.setattr(_handle, "backend_version", lambda: 91900)
    assert _handle.backend_version_string() == "9.19.0"
    monkeypatch.setattr(_handle, "backend_version", lambda: 8907)
    assert _handle.backend_version_string() == "8.9.7"


def test_last_error_string_is_the_last_exception_message():
    g = graph()
    with pytest.raises(cudnnfe.Error) as info:
        g.get_tensor("no such tensor")
    assert cudnnfe.get_last_error_string() == info.value.message
    assert "no such tensor" in cudnnfe.get_last_error_string()


def test_fe_only_enum_members_are_refused():
    g = graph()
    with pytest.raises(cudnnfe.NotOfferedError, match="INT8x4"):
        g.tensor(dim=[4], data_type=data_type.INT8x4)
    assert cudnnfe.convolution_mode is cudnnfe.conv_mode
    with pytest.raises(cudnnfe.NotOfferedError, match="OPENSOURCE"):
        g.create_execution_plans([heur_mode.OPENSOURCE])
    with pytest.raises(ValueError, match="NOT_SET"):
        g.reduction(g.tensor(dim=[2, 2]), cudnnfe.reduction_mode.NOT_SET)


def test_opensource_is_dropped_from_a_list_with_other_modes():
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    g = graph()
    t = g.tensor_like(x)
    y = g.abs(t).set_output(True)
    g.build([heur_mode.OPENSOURCE, heur_mode.A], target=CPU)
    (out,) = run(g, {t: x}, [y])
    np.testing.assert_array_equal(out, x)


def test_kernel_cache_round_trip_and_causal_conv1d_refused():
    cache = cudnnfe.create_kernel_cache()
    with pytest.raises(cudnnfe.WrongStateError, match="empty"):
        cache.serialize()  # no GPU build has filled it (cudnn-frontend refuses this too)
    with pytest.raises(cudnnfe.BadSerializedDataError, match="kernel cache"):
        cache.deserialize("not json")
    cache.deserialize('{"kernels": []}')
    assert cache.serialize() == '{"kernels": []}'
    with pytest.raises(cudnnfe.WrongStateError, match="freshly created"):
        cache.deserialize('{"kernels": []}')  # onto a cache that holds something
    with pytest.raises(cudnnfe.NotOfferedError, match="causal"):
        cudnnfe.causal_conv1d_forward()


def test_tensor_attribute_methods():
    g = graph()
    t = g.tensor(dim=[2, 3])
    assert t.set_alignment(32) is t and t.get_alignment() == 32
    assert t.get_reordering_type() == cudnnfe.tensor_reordering.NONE
    assert t.set_reordering_type(cudnnfe.tensor_reordering.NONE) is t
    with pytest.raises(cudnnfe.NotOfferedError, match="F8_128x4"):
        t.set_reordering_type(cudnnfe.tensor_reordering.F8_128x4)
    assert (t.get_vector_count(), t.get_vector_dimension()) == (1, -1)
    with pytest.raises(cudnnfe.NotOfferedError, match="vector count 4"):
        t.set_vector_count_and_dimension(4, 1)
    assert not t.get_is_pass_by_value() and not t.get_has_compile_time_constant()
    with pytest.raises(cudnnfe.InvalidArgumentError, match="6 elements"):
        t.set_is_pass_by_value(True)  # a pass-by-value input holds one element
    one = g.tensor(dim=[1, 1, 1, 1])
    assert one.set_is_pass_by_value(True).get_is_pass_by_value()
    assert not one.set_is_pass_by_value(False).get_is_pass_by_value()
    s = g.tensor_scalar(2.5, cudnnfe.scalar_type.COMPILE_TIME_CONST)
    assert s.get_is_pass_by_value() and s.get_has_compile_time_constant()
    assert s.get_data_type() == data_type.FLOAT
    assert g.tensor_scalar(3, cudnnfe.scalar_type.RUNTIME_PARAM).get_data_type() == data_type.INT32
    assert g.query_tensor_attributes_of_uid(t.get_uid()) is t
    with pytest.raises(ValueError, match="no tensor with UID 999"):
        g.query_tensor_attributes_of_uid(999)


def test_fe_keywords_compute_the_same(rng):
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3)).astype(np.float32)
    g = graph()
    ta, tb = g.tensor_like(input=a), g.tensor_like(b)
    outs = [g.max(input0=ta, input1=tb), g.min(ta, tb), g.max(a=ta, b=tb),
            g.pow(input0=g.abs(ta), input1=tb), g.leaky_relu(ta, negative_slope=0.1),
            g.leaky_relu_backward(loss=tb, input=ta, negative_slope=0.1)]
    for t in outs:
        t.set_output(True)
    got = run(g, {ta: a, tb: b}, outs)
    expected = [np.maximum(a, b), np.minimum(a, b), np.maximum(a, b), np.abs(a) ** b,
                np.where(a > 0, a, 0.1 * a), np.where(a > 0, b, 0.1 * b)]
    for out, want in zip(got, expected):
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="input0 and a are the same"):
        g.max(ta, tb, a=ta)


def test_conv_dgrad_takes_loss_and_filter_positionally(rng):
    dy = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    results = []
    for call in (lambda g, l, f: g.conv_dgrad(l, f, padding=[1, 1]),
                 lambda g, l, f: g.conv_dgrad(loss=l, weight=f, padding=[1, 1])):
        g = graph()
        tl, tf = g.tensor_like(dy), g.tensor_like(w)
        dx = call(g, tl, tf).set_output(True)
        assert dx.get_dim() == [1, 3, 4, 4]
        results.append(run(g, {tl: dy, tf: w}, [dx])[0])
    np.testing.assert_array_equal(results[0], results[1])


def test_rmsnorm_backward_inv_variance_keyword(rng):
    x = rng.standard_normal((4, 8)).astype(np.float32)
    dy = rng.standard_normal((4, 8)).astype(np.float32)
    scale = rng.standard_normal((1, 8)).astype(np.float32)
    inv = (1 / np.sqrt((x.astype(np.float64) ** 2).mean(1, keepdims=True) + 1e-5)).astype(
        np.float32)
    outs = []
    for kw in ("inv_variance", "inv_rms"):
        g = graph()
        tdy, tx, ts, ti = (g.tensor_like(v) for v in (dy, x, scale, inv))
        dx, _, _ = g.rmsnorm_backward(grad=tdy, input=tx, scale=ts, has_dbias=False,
                                      **{kw: ti})
        outs.append(run(g, {tdy: dy, tx: x, ts: scale, ti: inv}, [dx.set_output(True)])[0])
    np.testing.assert_array_equal(outs[0], outs[1])


def test_genstats_sums_per_channel(rng):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    g = graph()
    tx = g.tensor_like(x)
    total, sq = g.genstats(tx, name="gs")
    assert (total.get_name(), sq.get_name()) == ("gs::SUM", "gs::SQ_SUM")
    assert g.get_node_count() == 1  # the genstats op itself, not composed reductions
    assert total.get_data_type() == data_type.FLOAT
    assert total.get_dim() == [1, 3, 1, 1]
    got_sum, got_sq = run(g, {tx: x}, [total.set_output(True), sq.set_output(True)])
    np.testing.assert_allclose(got_sum, x.sum((0, 2, 3), keepdims=True), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_sq, (x * x).sum((0, 2, 3), keepdims=True), rtol=1e-4)


def test_block_scale_dequantize_takes_fe_block_lists():
    from cudnnfe._quantize import _axis_of_block_list

    assert _axis_of_block_list("dq", [1, 32], 3) == (2, 32)
    assert _axis_of_block_list("dq", [32, 1], 3) == (1, 32)
    with pytest.raises(cudnnfe.NotOfferedError, match="blocks 2 dims"):
        _axis_of_block_list("dq", [32, 32], 2)
    g = graph()
    x = g.tensor(dim=[4, 64], data_type=data_type.FLOAT)
    y, scale = g.block_scale_quantize(x, block_size=32, name="q")
    assert scale.get_dim() == [4, 2]
    y.set_data_type(data_type.FP8_E4M3)
    z = g.block_scale_dequantize(y, scale, block_size=[1, 32], name="dq")
    assert z.get_dim() == [4, 64]


def test_deserialize_takes_fe_keywords():
    g = graph()
    g.abs(g.tensor(dim=[2], name="x")).set_output(True)
    data = g.serialize()
    loaded = cudnnfe.pygraph.deserialize(pyobj=data, build=False)
    assert loaded.get_tensor("x").get_dim() == [2]
    into = cudnnfe.pygraph()
    into.deserialize(handle_=None, pyobj=data, build=False)
    assert into.get_tensor_count() == g.get_tensor_count()


@pytest.mark.parametrize("call", [
    lambda g: g.get_engine_count(),
    lambda g: g.get_knobs_for_engine(0),
    lambda g: g.create_execution_plan(0, {}),
    lambda g: g.select_numeric_notes([]),
    lambda g: g.sdpa_mxfp8(*[None] * 6),
])
def test_features_not_offered_are_refused_by_name(call):
    with pytest.raises(cudnnfe.NotOfferedError, match="not offered by the cudnnfe C ABI"):
        call(graph())


def test_key_is_an_int_of_the_structure():
    keys = []
    for _ in range(2):
        g = graph()
        g.abs(g.tensor(dim=[2, 3], uid=1)).set_output(True).set_uid(2)
        keys.append(g.key())
    assert isinstance(keys[0], int) and keys[0] == keys[1]


def test_outputs_get_cudnn_frontend_names():
    g = graph()
    x = g.tensor(dim=[4, 8, 1, 1], name="x")
    s = g.tensor(dim=[1, 8, 1, 1], name="s")
    y, mean, inv = g.layernorm(x, s, s, epsilon=1e-5, name="ln")
    assert [t.get_name() for t in (y, mean, inv)] == ["ln::Y", "ln::MEAN", "ln::INV_VARIANCE"]
    b = g.bias(y, s, name="bias")
    assert b.get_name() == "bias::OUT_0" and g.get_tensor("bias::OUT_0") is b
    r, rinv = g.rmsnorm(x, s, name="rms")
    assert (r.get_name(), rinv.get_name()) == ("rms::Y", "rms::INV_VARIANCE")
    dx, ds, db = g.rmsnorm_backward(x, x, s, rinv, has_dbias=True, name="rms_bwd")
    assert [t.get_name() for t in (dx, ds, db)] == ["rms_bwd::DX", "rms_bwd::Dscale",
                                                    "rms_bwd::Dbias"]
    m = g.matmul(g.tensor(dim=[1, 2, 3]), g.tensor(dim=[1, 3, 4]), name="mm")
    assert m.get_name() == "mm::C"
    # inputs made from arrays keep cudnn-frontend's Graph-wrapper names "<node>::<keyword>"
    g.layernorm(np.ones((4, 8, 1, 1), np.float32), s, s, epsilon=1e-5, name="ln2")
    assert g.get_tensor("ln2::input").get_dim() == [4, 8, 1, 1]
    # a renamed output keeps its new name
    z = g.abs(x, name="a")
    z.set_name("mine")
    g.abs(z, name="a2")
    assert z.get_name() == "mine"


def test_plan_queries_between_create_execution_plans_and_build_plans(rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    g = graph()
    t = g.tensor_like(x)
    y = g.relu(t).set_output(True)
    g.validate()
    g.build_operation_graph()
    with pytest.raises(cudnnfe.WrongStateError):
        g.get_behavior_notes_for_plan_at_index(0)  # no create_execution_plans yet
    g.create_execution_plans([heur_mode.A, heur_mode.FALLBACK])
    assert g.get_behavior_notes_for_plan_at_index(0) == []
    assert g.get_plan_name_at_index(0) == "cpu_reference"
    g.check_support()
    g.build_plans()
    (out,) = run(g, {t: x}, [y])
    np.testing.assert_array_equal(out, np.maximum(x, 0))


def test_none_keys_of_a_variant_pack_are_ignored(rng):
    x = rng.standard_normal((4, 8)).astype(np.float32)
    g = graph()
    t, scale = g.tensor_like(x), g.tensor_like(np.ones((1, 8), np.float32))
    y, inv = g.rmsnorm(t, scale, epsilon=1e-5,
                       norm_forward_phase=cudnnfe.norm_forward_phase.INFERENCE)
    assert inv is None
    y.set_output(True)
    g.build()
    out = np.empty_like(x)
    g.execute({t: x, scale: np.ones((1, 8), np.float32), y: out, inv: np.empty(4)}, None)
    want = x / np.sqrt((x.astype(np.float64) ** 2).mean(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


def test_pointwise_outputs_take_their_operands_strides_for_in_place_views(rng):
    # cudnn-frontend's test_apply_rope: results written in place into slices of x.
    x = rng.standard_normal((4, 8, 16)).astype(np.float32)
    cos = rng.standard_normal((1, 8, 8)).astype(np.float32)
    sin = rng.standard_normal((1, 8, 8)).astype(np.float32)
    x1, x2 = x[..., :4], x[..., 4:8]
    c1, c2, s1, s2 = cos[..., :4], cos[..., 4:], sin[..., :4], sin[..., 4:]
    want1 = x1 * c1 - x2 * s1
    want2 = x2 * c2 + x1 * s2
    g = graph()
    t1, t2, tc1, tc2, ts1, ts2 = (g.tensor_like(a) for a in (x1, x2, c1, c2, s1, s2))
    # every read of x comes before the first write (the CPU reference runs node by node)
    m1, m2, m3, m4 = g.mul(a=t1, b=tc1), g.mul(a=t2, b=ts1), g.mul(a=t2, b=tc2), g.mul(a=t1, b=ts2)
    y1 = g.sub(a=m1, b=m2).set_output(True)
    y2 = g.add(a=m3, b=m4).set_output(True)
    g.validate()
    assert y1.get_stride() == t1.get_stride() == [128, 16, 1]
    g.build()
    g.execute({t1: x1, t2: x2, tc1: c1, tc2: c2, ts1: s1, ts2: s2, y1: x1, y2: x2}, None)
    np.testing.assert_allclose(x[..., :4], want1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x[..., 4:8], want2, rtol=1e-5, atol=1e-6)
    # a broadcast (stride 0) operand gives no strides: the output stays packed
    g2 = graph()
    wide = np.broadcast_to(np.float32(1), (2, 3))
    y = g2.abs(g2.tensor_like(wide)).set_output(True)
    g2.validate()
    assert y.get_stride() == [3, 1]


def test_buffers_may_drop_the_tensors_unit_dims(rng):
    x = rng.standard_normal((4, 1, 8, 8)).astype(np.float32)
    g = graph()
    t = g.tensor_like(x)
    y = g.neg(t).set_output(True)
    g.build()
    out = np.empty((4, 8, 8), np.float32)  # the same elements at the same strides
    g.execute({t: x.reshape(4, 8, 8), y: out}, None)
    np.testing.assert_array_equal(out, -x.reshape(4, 8, 8))
    # Other shapes spanning the memory are written at the tensor's strides, with a warning
    # (cudnn-frontend binds the pointer only); a too-small one is refused.
    other = np.full((4, 64), np.nan, np.float32)
    with pytest.warns(cudnnfe.LargerBufferWarning, match=r"\[4, 1, 8, 8\].*shape \[4, 64\]"):
        g.execute({t: x, y: other}, None)
    np.testing.assert_array_equal(other, -x.reshape(4, 64))
    with pytest.warns(cudnnfe.LargerBufferWarning):  # same shape, other layout
        g.execute({t: x, y: np.empty((8, 4, 8), np.float32).transpose(1, 0, 2)}, None)
    with pytest.raises(ValueError, match=r"\[4, 1, 8, 8\].*spans only 128: the array is "
                                         r"too small"):
        g.execute({t: x, y: np.empty((2, 64), np.float32)}, None)
    # a flat buffer of exactly its elements is the dense tensor's memory (test_moe_grouped_matmul)
    flat = np.empty(4 * 8 * 8, np.float32)
    g.execute({t: x.reshape(-1), y: flat}, None)
    np.testing.assert_array_equal(flat, -x.reshape(-1))
    # a strided flat view is not its elements, but spans enough memory: warned
    with pytest.warns(cudnnfe.LargerBufferWarning):
        g.execute({t: x, y: np.empty(2 * 4 * 8 * 8, np.float32)[::2]}, None)


def test_pass_by_value_inputs_are_read_at_execute(rng):
    # cudnn-frontend's test_silu_and_mul: dequantization scales as CPU pass-by-value tensors
    x = rng.standard_normal((2, 3)).astype(np.float32)
    g = graph()
    tx = g.tensor_like(x)
    s = g.tensor(dim=[1, 1], data_type=data_type.FLOAT, is_pass_by_value=True, name="s")
    y = g.mul(tx, s).set_output(True)
    g.build()
    assert s.get_is_pass_by_value() and s.get_kind() == cudnnfe.tensor_kind.INPUT
    for value in (2.0, -0.5):  # the value is read at every execute
        (out,) = run(g, {tx: x, s: np.full((1, 1), value, np.float32)}, [y])
        np.testing.assert_allclose(out, x * value, rtol=1e-6)
    # the flag survives serialization (graph JSON "pass_by_value")
    loaded = cudnnfe.pygraph.deserialize(g.serialize(), build=False)
    assert loaded.get_tensor("s").get_is_pass_by_value()
    assert '"pass_by_value": true' in g.serialize().decode()
    with pytest.raises(cudnnfe.InvalidArgumentError, match="only graph inputs"):
        loaded.get_tensor(y.get_name()).set_is_pass_by_value(True)
    # a one-element host array given to tensor_like is pass-by-value, as in cudnn-frontend
    g2 = graph()
    assert g2.tensor_like(np.ones((1, 1, 1, 1), np.float32)).get_is_pass_by_value()
    assert not g2.tensor_like(np.ones((2, 1), np.float32)).get_is_pass_by_value()


def test_pass_by_value_arrays_must_be_host_memory():
    from cudnnfe._graph import _Spec, pygraph
    from cudnnfe._arrays import ArrayInfo

    spec = _Spec(1, "s", (1,), (1,), data_type.FLOAT, True)
    info = cudnnfe._arrays.describe(np.ones(1, np.float32))
    pygraph._check_device(spec, info, cudnnfe.target.GPU)  # host memory on a GPU graph: fine
    on_device = info._replace(device=cudnnfe._arrays.CUDA, type_name="a CUDA array")
    assert isinstance(on_device, ArrayInfo)
    with pytest.raises(ValueError, match="pass-by-value: its array must be in host memory"):
        pygraph._check_device(spec, on_device, cudnnfe.target.GPU)


def test_experimental_namespace_needs_no_torch():
    had_torch = "torch" in sys.modules
    from cudnnfe.experimental.ops import moe_grouped_matmul  # the function, as cudnn-frontend

    assert callable(moe_grouped_matmul)  # torch is imported by its first call only
    import cudnnfe.experimental.ops.moe_grouped_matmul as moe  # importable by name too
    assert moe.moe_grouped_matmul is moe_grouped_matmul
    assert ("torch" in sys.modules) == had_torch


def test_swish_takes_cudnn_frontends_swish_beta(rng):
    x = rng.standard_normal((2, 5)).astype(np.float32)
    g = graph()
    t = g.tensor_like(x)
    ys = [g.swish(t, swish_beta=2.0).set_output(True), g.swish(t, beta=2.0).set_output(True)]
    a, b = run(g, {t: x}, ys)
    np.testing.assert_allclose(a, x / (1 + np.exp(-2.0 * x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="beta and swish_beta"):
        g.swish(t, beta=1.0, swish_beta=2.0)


def _packed(padded, lengths):
    """THD storage of padded [b, h, s, d]: the valid tokens of each batch one after another."""
    b, h, s, d = padded.shape
    rows = [padded[n, :, :lengths[n], :].transpose(1, 0, 2) for n in range(b)]  # [s_n, h, d]
    flat = np.concatenate([r.reshape(-1) for r in rows] + [np.zeros(h * d * s, padded.dtype)])
    offsets = np.array([0] + list(np.cumsum(lengths) * h * d), np.int32).reshape(b + 1, 1, 1, 1)
    view = np.lib.stride_tricks.as_strided(
        flat, (b, h, s, d), [0, d * flat.itemsize, h * d * flat.itemsize, flat.itemsize])
    return flat, view, offsets


def test_set_ragged_offset_drives_the_attention_ragged_options(rng):
    b, h, s, d = 2, 2, 4, 8
    lq, lkv = [3, 4], [4, 2]
    q, k, v = (rng.standard_normal((b, h, s, d)).astype(np.float32) for _ in range(3))
    sq = np.array(lq, np.int32).reshape(b, 1, 1, 1)
    skv = np.array(lkv, np.int32).reshape(b, 1, 1, 1)
    # padded reference
    g = graph()
    tq, tk, tv, tsq, tskv = (g.tensor_like(a) for a in (q, k, v, sq, skv))
    o, _ = g.sdpa(tq, tk, tv, attn_scale=0.3, use_padding_mask=True, seq_len_q=tsq,
                  seq_len_kv=tskv)
    (want,) = run(g, {tq: q, tk: k, tv: v, tsq: sq, tskv: skv}, [o.set_output(True)])
    # ragged (THD) q, k, v and O
    (fq, pq, oq), (fk, pk, ok), (fv, pv, _) = (_packed(a, n) for a, n in
                                               ((q, lq), (k, lkv), (v, lkv)))
    g2 = graph()
    rq, rkv = g2.tensor_like(oq), g2.tensor_like(ok)
    tq, tk, tv = (g2.tensor(dim=[b, h, s, d], stride=[0, d, h * d, 1], data_type=data_type.FLOAT)
                  for _ in range(3))
    tq.set_ragged_offset(rq)
    tk.set_ragged_offset(rkv)
    tv.set_ragged_offset(rkv)
    tsq, tskv = g2.tensor_like(sq), g2.tensor_like(skv)
    o2, _ = g2.sdpa(tq, tk, tv, attn_scale=0.3, use_padding_mask=True, seq_len_q=tsq,
                    seq_len_kv=tskv)
    # O is padded unless given offsets (cudnn-frontend's rule); here it takes q's, set after
    # the op as cudnn-frontend code does (test_cpu_ragged_outputs.py gives it its own).
    o2.set_output(True).set_stride([0, d, h * d, 1])
    o2.set_ragged_offset(rq)
    g2.build()
    out_flat = np.full_like(fq, np.nan)
    out = np.lib.stride_tricks.as_strided(out_flat, pq.shape, pq.strides)
    g2.execute({tq: pq, tk: pk, tv: pv, rq: oq, rkv: ok, tsq: sq, tskv: skv, o2: out}, None)
    for n in range(b):
        start = int(oq[n, 0, 0, 0])
        rows = out_flat[start:start + lq[n] * h * d].reshape(lq[n], h, d).transpose(1, 0, 2)
        np.testing.assert_allclose(rows, want[n, :, :lq[n], :], rtol=1e-5, atol=1e-6)


def test_ragged_offsets_no_op_reads_are_refused():
    g = graph()
    x = g.tensor(dim=[2, 3])
    x.set_ragged_offset(g.tensor(dim=[3, 1, 1, 1], data_type=data_type.INT32))
    g.abs(x).set_output(True)
    with pytest.raises(cudnnfe.NotOfferedError, match="no attention op uses it"):
        g.validate()


def test_execute_takes_raw_data_pointers(rng):
    # cudnn-frontend's test_conv_genstats binds X and Y as tensor.data_ptr() ints.
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    g = graph()
    tx = g.tensor_like(x)
    total, sq = g.genstats(tx, name="gs")
    total.set_output(True)
    sq.set_output(True)
    g.build()
    out_sum = np.zeros((1, 3, 1, 1), np.float32)
    out_sq = np.zeros((1, 3, 1, 1), np.float32)
    workspace = np.zeros(max(g.get_workspace_size(), 1), np.uint8)
    g.execute({tx: x.ctypes.data, total: out_sum.ctypes.data, sq: out_sq},
              workspace.ctypes.data)
    np.testing.assert_allclose(out_sum, x.sum((0, 2, 3), keepdims=True), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out_sq, (x * x).sum((0, 2, 3), keepdims=True), rtol=1e-4)
    with pytest.raises(ValueError, match="address 0; expected a positive data pointer"):
        g.execute({tx: 0, total: out_sum, sq: out_sq})


def test_genstats_then_bn_finalize_matches_batchnorm_statistics(rng):
    x = rng.standard_normal((4, 3, 5, 6)).astype(np.float32)
    scale = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    bias = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    g = graph()
    tx, ts, tb = g.tensor_like(x), g.tensor_like(scale), g.tensor_like(bias)
    total, sq = g.genstats(tx, name="gs")
    eq_scale, eq_bias, mean, inv_var, next_mean, next_var = g.bn_finalize(
        total, sq, ts, tb, epsilon=1e-3, accum_count=4 * 5 * 6, name="fin")
    assert (next_mean, next_var) == (None, None)
    assert eq_scale.get_name() == "fin::EQ_SCALE" and inv_var.get_name() == "fin::INV_VARIANCE"
    outs = run(g, {tx: x, ts: scale, tb: bias},
               [t.set_output(True) for t in (eq_scale, eq_bias, mean, inv_var)])
    xd = x.astype(np.float64)
    m = xd.mean((0, 2, 3), keepdims=True)
    inv = 1 / np.sqrt(xd.var((0, 2, 3), keepdims=True) + 1e-3)
    np.testing.assert_allclose(outs[2], m, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(outs[3], inv, rtol=1e-4)
    np.testing.assert_allclose(outs[0], scale * inv, rtol=1e-4)
    np.testing.assert_allclose(outs[1], bias - m * scale * inv, rtol=1e-4, atol=1e-5)


def test_dbn_weight_rebuilds_batchnorm_backward(rng):
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    dy = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    mean = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    inv = rng.uniform(0.5, 2, (1, 3, 1, 1)).astype(np.float32)
    scale = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    g = graph()
    tdy, tx, tm, ti, ts = (g.tensor_like(a) for a in (dy, x, mean, inv, scale))
    outs = g.dbn_weight(tdy, tx, tm, ti, ts, name="w")
    assert [t.get_name() for t in outs] == ["w::DSCALE", "w::DBIAS", "w::EQ_SCALE_DY",
                                            "w::EQ_SCALE_X", "w::EQ_BIAS"]
    dscale, dbias, eq_dy, eq_x, eq_b = run(g, {tdy: dy, tx: x, tm: mean, ti: inv, ts: scale},
                                           [t.set_output(True) for t in outs])
    xd, dyd = x.astype(np.float64), dy.astype(np.float64)
    xhat = (xd - mean) * inv
    np.testing.assert_allclose(dbias, dyd.sum((0, 2, 3), keepdims=True), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dscale, (dyd * xhat).sum((0, 2, 3), keepdims=True), rtol=1e-4,
                               atol=1e-5)
    m = 2 * 4 * 4
    dx = scale * inv / m * (m * dyd - dbias - xhat * dscale)
    np.testing.assert_allclose(eq_dy * dyd + eq_x * xd + eq_b, dx, rtol=1e-4, atol=1e-5)


def test_two_tensors_may_share_a_name(rng):
    """cudnn-frontend lets two tensors share a name (its sample 32 names both the add and
    the relu output "sum"); the C library keeps names unique, so the second one's C name is
    "sum#1" while get_name(), get_tensor and the Graph wrapper's lookups see "sum"."""
    g = graph()
    x = g.tensor(name="x", dim=[2, 3])
    a = g.tensor(name="a", dim=[2, 3])
    s = g.add(x, a, name="add").set_name("sum")
    r = g.relu(s, name="relu").set_name("sum").set_output(True)
    assert s.get_name() == "sum" and r.get_name() == "sum"
    assert r._c_name() == "sum#1"
    assert g.get_tensor("sum") is s  # the first of that name, as cudnn-frontend's lookups
    r.set_name("out")  # a free name goes to C as is
    assert r.get_name() == "out" and r._c_name() == "out"
    xa, aa = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2))
    out = np.empty((2, 3), np.float32)
    g.build()
    g.execute({x: xa, a: aa, r: out})
    np.testing.assert_allclose(out, np.maximum(xa + aa, 0), rtol=1e-6)
    g2 = graph()
    first = g2.tensor(name="x", dim=[2])
    second = g2.tensor(name="x", dim=[2])  # graph inputs too
    assert second.get_name() == "x" and second._c_name() == "x#1"
    assert g2.get_tensor("x") is first


def test_an_input_no_op_reads_leaves_the_graph(rng):
    """cudnn-frontend's graph holds only the tensors its nodes use: its instance-norm test
    makes ``epsilon_bwd = tensor_like(eps)`` next to a backward that takes no epsilon and
    binds it at execute. The input leaves the C graph at validation; its binding is
    ignored."""
    g = graph()
    x = g.tensor(name="x", dim=[2, 3])
    unused = g.tensor_like(np.full((1, 1), 1e-5, np.float32), name="epsilon_bwd")
    y = g.relu(x, name="relu").set_output(True)
    g.validate()
    assert g.get_tensor_count() == 2
    g.build()
    xa = rng.standard_normal((2, 3)).astype(np.float32)
    out = np.empty((2, 3), np.float32)
    g.execute({x: xa, unused: np.full((1, 1), 7.0, np.float32), y: out})
    np.testing.assert_allclose(out, np.maximum(xa, 0))
    with pytest.raises(ValueError, match='"epsilon_bwd" left the graph'):
        g.layernorm(x, x, x, epsilon=unused)
