"""cudnn-frontend's execute-time shapes (pygraph(is_override_shape_enabled=True),
execute(override_uids=, override_shapes=, override_strides=)) on the CPU reference, and the
execute checks that follow cudnn-frontend's pointer-only binding: packed ragged arrays and
arrays of another type of the same element size."""
import warnings

import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type
from cpu_helpers import CPU, graph


def _matmul_graph(m=4, k=8, n=6, **kw):
    g = graph(**kw)
    a = g.tensor(name="A", dim=[1, m, k], stride=[m * k, k, 1], uid=10)
    b = g.tensor(name="B", dim=[1, k, n], stride=[k * n, n, 1], uid=11)
    c = g.matmul(a, b, name="mm").set_output(True).set_uid(12)
    return g, a, b, c


def test_override_shapes_compute_at_the_given_shapes(rng):
    g, a, b, c = _matmul_graph(is_override_shape_enabled=True)
    g.build(target=CPU)
    m, k, n = 3, 5, 2
    x = rng.standard_normal((1, m, k)).astype(np.float32)
    y = rng.standard_normal((1, k, n)).astype(np.float32)
    out = np.full((1, m, n), np.nan, dtype=np.float32)
    g.execute({10: x, 11: y, 12: out}, None,
              override_uids=[10, 11, 12],
              override_shapes=[[1, m, k], [1, k, n], [1, m, n]],
              override_strides=[[m * k, k, 1], [k * n, n, 1], [m * n, n, 1]])
    want = np.einsum("bik,bkj->bij", x.astype(np.float64), y.astype(np.float64))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_override_shapes_through_execute_plan_at_index():
    g, a, b, c = _matmul_graph(is_override_shape_enabled=True)
    g.build(target=CPU)
    x = np.ones((1, 2, 3), np.float32)
    y = np.ones((1, 3, 2), np.float32)
    out = np.zeros((1, 2, 2), np.float32)
    g.execute_plan_at_index({a: x, b: y, c: out}, None, 0,
                            override_uids=[a, b, c],
                            override_shapes=[[1, 2, 3], [1, 3, 2], [1, 2, 2]],
                            override_strides=[[6, 3, 1], [6, 2, 1], [4, 2, 1]])
    np.testing.assert_array_equal(out, np.full((1, 2, 2), 3.0, np.float32))


def test_override_shapes_need_the_build_option():
    g, a, b, c = _matmul_graph()
    g.build(target=CPU)
    x, y, out = np.ones((1, 2, 3), np.float32), np.ones((1, 3, 2), np.float32), \
        np.zeros((1, 2, 2), np.float32)
    with pytest.raises(cudnnfe.WrongStateError, match="override_shape_enabled"):
        g.execute({a: x, b: y, c: out}, None, override_uids=[10, 11, 12],
                  override_shapes=[[1, 2, 3], [1, 3, 2], [1, 2, 2]],
                  override_strides=[[6, 3, 1], [6, 2, 1], [4, 2, 1]])


def test_override_arguments_are_checked():
    g, a, b, c = _matmul_graph(is_override_shape_enabled=True)
    g.build(target=CPU)
    pack = {a: np.ones((1, 4, 8), np.float32), b: np.ones((1, 8, 6), np.float32),
            c: np.zeros((1, 4, 6), np.float32)}
    with pytest.raises(TypeError, match="go together"):
        g.execute(pack, None, override_uids=[10])
    with pytest.raises(ValueError, match="same length"):
        g.execute(pack, None, override_uids=[10], override_shapes=[], override_strides=[])
    with pytest.raises(ValueError, match="3 dims and 2 strides"):
        g.execute(pack, None, override_uids=[10], override_shapes=[[1, 4, 8]],
                  override_strides=[[8, 1]])
    with pytest.raises(cudnnfe.InvalidArgumentError, match="give it an override too"):
        g.execute(pack, None, override_uids=[10, 11], override_shapes=[[1, 2, 3], [1, 3, 2]],
                  override_strides=[[6, 3, 1], [6, 2, 1]])


def test_same_size_type_is_read_as_the_tensor_type_with_a_warning():
    # cudnn-frontend's test_kernel_cache binds BFLOAT16 arrays to HALF tensors; NumPy has no
    # bfloat16, so INT32 bits stand for FLOAT here.
    g = graph()
    x = g.tensor(name="x", dim=[1, 4], stride=[4, 1])
    y = g.abs(x).set_output(True)
    g.build(target=CPU)
    src = np.array([[-1, 2, -3, 4]], np.float32)
    out = np.zeros((1, 4), np.float32)
    with pytest.warns(UserWarning, match="read as FLOAT"):
        g.execute({x: src.view(np.int32), y: out}, None)
    np.testing.assert_array_equal(out, np.abs(src))
    with pytest.raises(ValueError, match="is FLOAT but its array is"):
        g.execute({x: np.zeros((1, 4), np.float64), y: out}, None)


def test_matching_types_do_not_warn():
    g = graph()
    x = g.tensor(name="x", dim=[1, 4], stride=[4, 1])
    y = g.abs(x).set_output(True)
    g.build(target=CPU)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g.execute({x: np.ones((1, 4), np.float32), y: np.zeros((1, 4), np.float32)}, None)


def test_ragged_tensors_take_packed_thd_arrays(rng):
    # cudnn-frontend's test_sdpa_with_caching binds q as a packed [total tokens, h, d] array
    # to a ragged [b, h, s, d] tensor: only the pointer matters (the offsets place each row).
    from test_fe_surface import _packed

    b, h, s, d = 2, 2, 4, 8
    lq = [3, 4]
    q, k, v = (rng.standard_normal((b, h, s, d)).astype(np.float32) for _ in range(3))
    sq = np.array(lq, np.int32).reshape(b, 1, 1, 1)
    skv = np.array([s, s], np.int32).reshape(b, 1, 1, 1)
    g = graph()
    tq, tk, tv, tsq, tskv = (g.tensor_like(a) for a in (q, k, v, sq, skv))
    o, _ = g.sdpa(tq, tk, tv, attn_scale=0.3, use_padding_mask=True, seq_len_q=tsq,
                  seq_len_kv=tskv)
    o.set_output(True)
    g.build(target=CPU)
    want = np.full((b, h, s, d), np.nan, np.float32)
    g.execute({tq: q, tk: k, tv: v, tsq: sq, tskv: skv, o: want}, None)

    fq, _, oq = _packed(q, lq)
    g2 = graph()
    rq = g2.tensor_like(oq)
    tq2 = g2.tensor(dim=[b, h, s, d], stride=[0, d, h * d, 1], data_type=data_type.FLOAT)
    tq2.set_ragged_offset(rq)
    tk2, tv2, tsq2, tskv2 = (g2.tensor_like(a) for a in (k, v, sq, skv))
    o2, _ = g2.sdpa(tq2, tk2, tv2, attn_scale=0.3, use_padding_mask=True, seq_len_q=tsq2,
                    seq_len_kv=tskv2)
    o2.set_output(True).set_stride([0, d, h * d, 1]).set_ragged_offset(rq)
    g2.build(target=CPU)
    packed_q = fq.reshape(-1, h, d)  # [tokens (+ padding), h, d], as torch code allocates it
    out = np.full_like(packed_q, np.nan)
    g2.execute({tq2: packed_q, rq: oq, tk2: k, tv2: v, tsq2: sq, tskv2: skv, o2: out}, None)
    flat = out.reshape(-1)
    for n in range(b):
        start = int(oq[n, 0, 0, 0])
        rows = flat[start:start + lq[n] * h * d].reshape(lq[n], h, d).transpose(1, 0, 2)
        np.testing.assert_allclose(rows, want[n, :, :lq[n], :], rtol=1e-5, atol=1e-6)


def test_kernel_cache_builds_a_dynamic_shape_graph_on_the_cpu():
    cache = cudnnfe.create_kernel_cache()
    for m in (2, 3):
        g, a, b, c = _matmul_graph(m=m, kernel_cache=cache)
        g.build(target=CPU)
        assert b'"dynamic_shape_enabled"' in g.serialize()
        x, y = np.ones((1, m, 8), np.float32), np.ones((1, 8, 6), np.float32)
        out = np.zeros((1, m, 6), np.float32)
        g.execute({a: x, b: y, c: out}, None)
        np.testing.assert_array_equal(out, np.full((1, m, 6), 8.0, np.float32))
    with pytest.raises(cudnnfe.WrongStateError, match="empty"):
        cache.serialize()  # the CPU reference leaves it empty
    with pytest.raises(TypeError, match="create_kernel_cache"):
        cudnnfe.pygraph(kernel_cache=object())
