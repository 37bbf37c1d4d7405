"""Graph construction through the low-level API (nothing is executed here)."""
import json

import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type


def _graph(**kw):
    kw.setdefault("io_data_type", data_type.FLOAT)
    kw.setdefault("compute_data_type", data_type.FLOAT)
    return cudnnfe.pygraph(**kw)


def test_tensor_getters_and_chainable_setters():
    g = _graph(name="api")
    assert g.get_name() == "api"
    x = g.tensor(name="x", dim=[2, 3, 4], stride=[12, 4, 1], data_type=data_type.HALF)
    assert x.get_name() == "x"
    assert x.get_dim() == [2, 3, 4] and x.shape == (2, 3, 4)
    assert x.get_stride() == [12, 4, 1]
    assert x.get_data_type() == data_type.HALF
    assert x.get_uid() > 0
    assert x.is_bound() and not x.get_is_output()
    w = g.tensor(dim=[2, 4, 5])
    assert w.get_stride() == [20, 5, 1]  # packed row-major by default
    assert w.get_data_type() == data_type.NOT_SET  # resolved from io_data_type at validation
    y = g.matmul(A=x, B=w, name="mm")
    assert y.get_name() == "mm::C"
    assert y.get_dim() == [2, 3, 5]
    assert not y.is_bound() and y.get_is_virtual()
    same = y.set_output(True).set_data_type(data_type.FLOAT).set_name("out").set_uid(42)
    assert same is y
    assert y.get_is_output() and y.is_bound()
    assert y.get_name() == "out" and y.get_uid() == 42 and y.get_data_type() == data_type.FLOAT
    y.set_dim([2, 3, 5]).set_stride([1, 10, 2])
    assert y.get_stride() == [1, 10, 2]
    assert g.get_tensor("out") is y
    assert g.get_tensor_count() == 3 and g.get_node_count() == 1
    assert [t.get_name() for t in g.get_tensors()] == ["x", "tensor2" if w.get_uid() == 2
                                                        else w.get_name(), "out"]
    assert "out" in repr(y) and "FLOAT" in repr(y)
    assert "tensors=3" in repr(g)


def test_numpy_dtypes_map_to_data_types():
    g = _graph()
    for np_dtype, expected in [(np.float32, data_type.FLOAT), (np.float16, data_type.HALF),
                               (np.float64, data_type.DOUBLE), (np.int8, data_type.INT8),
                               (np.int32, data_type.INT32), (np.int64, data_type.INT64),
                               (np.uint8, data_type.UINT8),
                               # a tensor's BOOLEAN is cuDNN's bit-packed one
                               (np.bool_, data_type.BOOLEAN_PACKED)]:
        t = g.tensor_like(np.zeros((2, 2), np_dtype))
        assert t.get_data_type() == expected, np_dtype
        # a numpy dtype is accepted wherever a data_type is
        t2 = g.tensor(dim=[1], data_type=np_dtype)
        assert t2.get_data_type() == expected


def test_ml_dtypes_bfloat16_and_fp8():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    g = _graph()
    assert g.tensor_like(np.zeros(3, ml_dtypes.bfloat16)).get_data_type() == data_type.BFLOAT16
    assert g.tensor_like(np.zeros(3, ml_dtypes.float8_e4m3fn)).get_data_type() == \
        data_type.FP8_E4M3
    assert g.tensor_like(np.zeros(3, ml_dtypes.float8_e5m2)).get_data_type() == \
        data_type.FP8_E5M2


def test_tensor_like_reads_layout_nhwc():
    g = _graph()
    nhwc = np.zeros((8, 5, 6, 3), np.float32).transpose(0, 3, 1, 2)  # logical NCHW
    x = g.tensor_like(nhwc, name="img")
    assert x.get_dim() == [8, 3, 5, 6]
    assert x.get_stride() == [90, 1, 18, 3]


def test_tensor_like_through_dlpack_only():
    class OnlyDLPack:
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, **kw):
            return self._a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    a = np.zeros((4, 6), np.float32)[:, ::2]
    g = _graph()
    t = g.tensor_like(OnlyDLPack(a))
    assert t.get_dim() == [4, 3] and t.get_stride() == [6, 2]
    assert t.get_data_type() == data_type.FLOAT


def test_operation_output_names_and_shapes():
    g = _graph()
    x = g.tensor(name="x", dim=[2, 3, 9, 9])
    w = g.tensor(name="w", dim=[4, 3, 3, 3])
    y = g.conv_fprop(image=x, weight=w, padding=[1, 1], stride=[2, 2], dilation=[1, 1])
    assert y.get_name() == "conv_fprop_0::Y" and y.get_dim() == [2, 4, 5, 5]
    y2 = g.conv_fprop(image=x, weight=w, pre_padding=[0, 1], post_padding=[2, 1])
    assert y2.get_name() == "conv_fprop_1::Y" and y2.get_dim() == [2, 4, 9, 9]
    dx = g.conv_dgrad(weight=w, loss=y2, padding=[0, 0])
    assert dx.get_dim() == [2, 3, 11, 11]
    dw = g.conv_wgrad(image=x, loss=g.tensor(dim=[2, 4, 7, 7]), padding=[0, 0])
    assert dw.get_dim() == [4, 3, 3, 3]
    r = g.reduction(input=x, mode=cudnnfe.reduction_mode.ADD, axes=[1])
    assert r.get_dim() == [2, 1, 9, 9] and r.get_name() == "reduction_0::Y"
    r2 = g.reduction(input=x, mode="max", axes_mask=0b1100)
    assert r2.get_dim() == [2, 3, 1, 1]
    a = g.add(a=x, b=g.tensor(dim=[1, 3, 1, 1]))
    assert a.get_name() == "add_0::OUT_0" and a.get_dim() == [2, 3, 9, 9]
    c = g.cmp_gt(input=x, comparison=g.tensor(dim=[1, 3, 1, 1]))
    v = g.tensor(dim=[5], name="vec")
    scaled = g.scale(input=v, scale=0.5)  # a Python number becomes a pass-by-value scalar
    assert scaled.get_dim() == [5]
    assert not g.get_tensor("scale_0::scale").is_bound()
    c.set_output(True)
    g.validate()
    assert c.get_data_type() == data_type.BOOLEAN
    idx = g.gen_index(input=x, axis=2).set_output(True)
    g.validate()
    assert idx.get_data_type() == data_type.INT32


def test_sdpa_outputs():
    g = _graph(io_data_type=data_type.HALF)
    q = g.tensor(name="q", dim=[2, 8, 64, 32])
    k = g.tensor(name="k", dim=[2, 2, 48, 32])
    v = g.tensor(name="v", dim=[2, 2, 48, 16])
    o, stats = g.sdpa(q=q, k=k, v=v, attn_scale=0.125, use_causal_mask=True, name="attn")
    assert stats is None
    assert o.get_name() == "attn::O" and o.get_dim() == [2, 8, 64, 16]
    o2, stats2 = g.sdpa(q=q, k=k, v=v, is_inference=False)
    assert stats2.get_dim() == [2, 8, 64, 1] and stats2.get_name() == "sdpa_0::Stats"
    # (A bottom-right diagonal needs s_q <= s_kv, as cudnn-frontend checks: top-left here.)
    o3, stats3 = g.sdpa(q=q, k=k, v=v, generate_stats=True, use_causal_mask=True,
                        attn_bias=g.tensor(dim=[1, 8, 64, 48], name="bias"))
    assert stats3 is not None
    o.set_output(True)
    g.validate()
    assert stats2.get_data_type() == data_type.FLOAT


def test_uid_zero_and_reassignment_in_any_order():
    g = _graph()
    a = g.tensor(dim=[2, 2], name="a")
    b = g.tensor(dim=[2, 2], name="b")
    c = g.add(a, b, name="sum").set_output(True)
    # take b's automatic UID for c, then number everything from 0 as cudnn-frontend users do
    c.set_uid(b.get_uid())
    assert c.get_uid() == 2 and b.get_uid() not in (0, 1, 2)
    a.set_uid(0)
    b.set_uid(1)
    c.set_uid(2)
    assert [a.get_uid(), b.get_uid(), c.get_uid()] == [0, 1, 2]
    assert str(cudnnfe.UID_ZERO_ALIAS) in g.serialize().decode()  # UID 0 as stored in C
    # a UID set by the user is not moved: taking it is an error
    with pytest.raises(ValueError, match="already used"):
        a.set_uid(1)


def test_serialize_deserialize_round_trip_without_build():
    g = _graph(name="round")
    x = g.tensor(name="x", dim=[2, 3], data_type=data_type.FLOAT).set_uid(0)
    y = g.relu(x, name="act").set_output(True).set_uid(7)
    data = g.serialize()
    assert isinstance(data, bytes)
    doc = json.loads(data)
    assert isinstance(doc, dict)
    g2 = cudnnfe.pygraph()
    g2.deserialize(data, build=False)
    assert g2.get_name() == "round"
    assert g2.get_tensor_count() == 2 and g2.get_node_count() == 1
    assert g2.get_tensor("x").get_uid() == 0
    out = g2.get_tensor("act::OUT_0")
    assert out.get_uid() == 7 and out.get_is_output()
    assert g2.get_tensor("x").get_is_output() is False
    assert g2.serialize() == data
    # the class form returns a new graph; list-of-ints and str forms are accepted
    g3 = cudnnfe.Graph.deserialize(list(data), build=False)
    assert isinstance(g3, cudnnfe.Graph) and g3.get_node_count() == 1
    g4 = cudnnfe.pygraph.deserialize(data.decode(), build=False)
    assert g4.get_tensor("act::OUT_0").get_dim() == [2, 3]


def test_high_level_graph_names_implicit_inputs():
    x = np.zeros((2, 3), np.float32)
    w = np.zeros((3, 4), np.float32)
    g = cudnnfe.Graph(io_data_type=data_type.FLOAT)
    y = g.matmul(x, w, name="mm")
    z = g.relu(y)
    z2 = g.add(z, x @ w)  # a new array becomes another input
    z2.set_output(True)
    assert [t.get_name() for t in g.get_tensors()][:2] == ["mm::A", "mm::B"]
    # in a Graph, unnamed nodes are "<method>.<i>", as cudnn-frontend's wrapper names them
    assert g.input_names() == ["mm::A", "mm::B", "add.0::b"]
    assert g.output_names() == ["add.0::OUT_0"]
    # the same array object passed twice is one input
    g2 = cudnnfe.Graph(io_data_type=data_type.FLOAT)
    s = g2.add(a=x, b=x)
    assert g2.get_tensor_count() == 2 and s.get_dim() == [2, 3]


def test_five_step_build_maps_onto_validate_and_build(monkeypatch):
    calls = []
    g = _graph()
    x = g.tensor(dim=[2, 2])
    g.relu(x).set_output(True)
    real_build = g._build
    monkeypatch.setattr(g, "_build", lambda *a: (calls.append(a), real_build(*a))[1])
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    assert calls == []
    try:
        g.check_support()
    except cudnnfe.GraphNotSupportedError:
        pytest.skip("this libcudnnfe has no CPU reference or GPU backend yet")
    # As cudnn-frontend's: check_support builds nothing; it counts the configurations.
    assert calls == [] and not g.is_built()
    found = g.get_execution_plan_count()  # the GPU's configurations, or the CPU reference
    assert found >= 1 and g.get_plan_name_at_index(0)
    assert calls == [] and not g.is_built()
    g.build_plans()
    assert len(calls) == 1 and calls[0][0] == [0, 2]  # one build, with the recorded modes
    g.build_plans()
    assert len(calls) == 1  # already built
    assert g.is_built() and g.get_execution_plan_count() == 1


def test_build_plan_at_index_before_build_plans_builds_that_configuration():
    g = _graph()
    x = g.tensor(dim=[2, 2])
    g.relu(x).set_output(True)
    g.validate()
    g.create_execution_plans([cudnnfe.heur_mode.A])
    g.check_support()
    names = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    for i in range(len(names)):
        try:
            g.build_plan_at_index(i)
        except cudnnfe.GraphNotSupportedError as e:  # on a GPU, a configuration may not build
            assert "did not build" in str(e)
            continue
        selected = [p for p in g.get_plan_infos() if p.selected]
        assert g.is_built() and [p.name for p in selected] == [names[i]]


def test_tensor_kinds():
    g = _graph()
    x = g.tensor(dim=[4], name="x")
    v = g.exp(x)
    y = g.scale(v, 2.0).set_output(True)
    assert x.get_kind() == cudnnfe.tensor_kind.INPUT
    assert v.get_kind() == cudnnfe.tensor_kind.VIRTUAL
    assert y.get_kind() == cudnnfe.tensor_kind.OUTPUT
    assert g.get_tensor("scale_0::scale").get_kind() == cudnnfe.tensor_kind.SCALAR


def test_plan_queries_before_build_check_support_once_until_the_graph_changes(monkeypatch):
    g = _graph()
    x = g.tensor(dim=[2, 2])
    g.relu(x).set_output(True)
    g.create_execution_plans([cudnnfe.heur_mode.A])
    checks = []
    real_check = g.check_support
    monkeypatch.setattr(g, "check_support", lambda **k: (checks.append(k), real_check(**k))[1])
    names = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    assert names and len(checks) == 1  # one check serves the whole loop
    g.exp(x).set_output(True)  # the graph changed: the next query checks it again
    g.get_execution_plan_count()
    assert len(checks) == 2
