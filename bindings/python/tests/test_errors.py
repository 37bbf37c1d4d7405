"""Bad input to every public entry point gives a clear Python exception.

C failures keep the C library's message and status; mistakes caught in Python
(wrong Python types) raise TypeError or ValueError before any C call.
"""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type

F32 = dict(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT)


@pytest.fixture
def g():
    return cudnnfe.pygraph(**F32)


@pytest.fixture
def x(g):
    return g.tensor(name="x", dim=[2, 3, 8, 8])


# ---- exception classes ----

def test_exception_hierarchy():
    assert issubclass(cudnnfe.InvalidArgumentError, ValueError)
    assert issubclass(cudnnfe.InvalidGraphError, ValueError)
    assert issubclass(cudnnfe.BadSerializedDataError, ValueError)
    assert issubclass(cudnnfe.WrongStateError, ValueError)
    assert issubclass(cudnnfe.CudnnUnavailableError, cudnnfe.GraphNotSupportedError)
    assert not issubclass(cudnnfe.GraphNotSupportedError, (ValueError, RuntimeError))
    for cls in (cudnnfe.CudaError, cudnnfe.CudnnError, cudnnfe.InternalError):
        assert issubclass(cls, RuntimeError)
    assert issubclass(cudnnfe.OutOfMemoryError, MemoryError)
    for cls in (cudnnfe.InvalidArgumentError, cudnnfe.GraphNotSupportedError, cudnnfe.CudaError):
        assert issubclass(cls, cudnnfe.Error)


def test_error_carries_the_full_c_message(g, x):
    w = g.tensor(name="w", dim=[4, 5, 3, 3])
    with pytest.raises(cudnnfe.InvalidGraphError) as info:
        g.conv_fprop(image=x, weight=w, name="c1")
    err = info.value
    assert err.status == cudnnfe.lib.CUDNNFE_STATUS_INVALID_GRAPH
    assert err.status_name == "CUDNNFE_STATUS_INVALID_GRAPH"
    assert "c1" in err.message and "w" in err.message
    text = cudnnfe.ffi.string(cudnnfe.lib.cudnnfe_graph_last_error(g._ptr)).decode()
    assert err.message == text
    assert str(err).endswith("[CUDNNFE_STATUS_INVALID_GRAPH]")


# ---- library and handles ----

def test_library_version_and_check():
    assert cudnnfe.version() >= cudnnfe.HEADER_VERSION if hasattr(cudnnfe, "HEADER_VERSION") \
        else cudnnfe.version() > 0
    lib = cudnnfe.lib
    assert lib.cudnnfe_check_version(lib.CUDNNFE_VERSION, lib.CUDNNFE_ABI_VERSION) == 0
    assert lib.cudnnfe_check_version(lib.CUDNNFE_VERSION + 10000, lib.CUDNNFE_ABI_VERSION) == \
        lib.CUDNNFE_STATUS_NOT_SUPPORTED
    assert lib.cudnnfe_check_version(lib.CUDNNFE_VERSION, lib.CUDNNFE_ABI_VERSION + 1) == \
        lib.CUDNNFE_STATUS_NOT_SUPPORTED
    assert isinstance(cudnnfe.device_count(), int)


def test_backend_version_is_an_int_or_a_clear_unavailable_error():
    try:
        v = cudnnfe.backend_version()
    except cudnnfe.CudnnUnavailableError as exc:
        assert isinstance(exc, cudnnfe.GraphNotSupportedError)
        assert exc.message
    else:
        assert v >= 90000


def test_bad_library_path_is_an_import_error(tmp_path):
    code = textwrap.dedent("""
        import sys
        try:
            import cudnnfe
        except ImportError as exc:
            print("IMPORT-ERROR", exc)
            sys.exit(0)
        sys.exit(1)
    """)
    import os
    env = dict(os.environ, CUDNNFE_LIBRARY=str(tmp_path / "missing.so"))
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p])
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "CUDNNFE_LIBRARY" in r.stdout and "missing.so" in r.stdout


def test_handles():
    with pytest.raises(TypeError):
        cudnnfe.create_handle("gpu0")
    with pytest.raises(cudnnfe.InvalidArgumentError):
        cudnnfe.create_handle(-7)
    h = cudnnfe.create_handle()
    assert "device=-1" in repr(h)
    cudnnfe.destroy_handle(h)
    cudnnfe.destroy_handle(h)  # a second destroy is a no-op
    with pytest.raises(ValueError, match="destroyed"):
        h.ptr
    with pytest.raises(TypeError):
        cudnnfe.destroy_handle(None)
    with cudnnfe.create_handle() as h2:
        cudnnfe.set_stream(h2, 0)
        assert cudnnfe.get_stream(h2) == 0
        with pytest.raises(TypeError):
            cudnnfe.set_stream(h2, "stream")
        with pytest.raises(TypeError):
            cudnnfe.set_stream("handle", 0)
    assert h2.closed


# ---- pygraph and tensors ----

def test_pygraph_arguments():
    with pytest.raises(TypeError):
        cudnnfe.pygraph(io_data_type="not a type")
    with pytest.raises(ValueError):
        cudnnfe.pygraph(io_data_type=99)
    with pytest.raises(TypeError):
        cudnnfe.pygraph(handle="h")
    with pytest.raises(ValueError):
        cudnnfe.pygraph(target="MARS")
    with pytest.raises(TypeError):
        cudnnfe.pygraph(name=3)
    with pytest.raises(TypeError):
        cudnnfe.pygraph(unknown_option=1)


def test_tensor_arguments(g):
    with pytest.raises(ValueError):
        g.tensor(dim=[])
    with pytest.raises(ValueError):
        g.tensor(dim=[1] * 9)
    with pytest.raises(cudnnfe.InvalidArgumentError):
        g.tensor(dim=[2, 0])
    with pytest.raises(cudnnfe.InvalidArgumentError):
        g.tensor(dim=[2, -3])
    with pytest.raises(TypeError):
        g.tensor(dim="abc")
    with pytest.raises(TypeError):
        g.tensor(dim=[2.5])
    with pytest.raises(ValueError):
        g.tensor(dim=[2, 3], stride=[1])
    with pytest.raises(TypeError):
        g.tensor(dim=[2], data_type=object())
    with pytest.raises(TypeError):
        g.tensor(dim=[2], name=5)
    with pytest.raises(ValueError):
        g.tensor(dim=[2], name="nul\0")
    with pytest.raises(ValueError):
        g.tensor(dim=[2], is_virtual=True)
    first = g.tensor(dim=[2], name="dup")
    # cudnn-frontend lets tensors share a name; the C library gets a unique one
    second = g.tensor(dim=[2], name="dup")
    assert second.get_name() == "dup" and second._c_name() == "dup#1"
    assert g.get_tensor("dup") is first


def test_tensor_like_arguments(g):
    with pytest.raises(TypeError, match="not an array"):
        g.tensor_like(object())
    with pytest.raises(ValueError, match="0-d"):
        g.tensor_like(np.zeros((), np.float32))
    with pytest.raises(TypeError, match="no cudnnfe data type"):
        g.tensor_like(np.zeros(3, np.complex64))
    # A Tensor is copied (dims, strides, type), as cudnn-frontend's tensor_like(tensor, name).
    copy = g.tensor_like(g.tensor(dim=[2, 3], stride=[1, 2]), "copy")
    assert (copy.get_dim(), copy.get_stride(), copy.get_name()) == ([2, 3], [1, 2], "copy")
    with pytest.raises(TypeError, match="input and array"):
        g.tensor_like(np.zeros(3, np.float32), array=np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="multiple of the element size"):
        g.tensor_like(np.zeros(8, np.uint8).view(np.float32)[:1].base[1:5].view(np.uint8)
                      if False else _misaligned_view())


def _misaligned_view():
    raw = np.zeros(64, np.uint8)
    return np.lib.stride_tricks.as_strided(raw[:4].view(np.float32), shape=(3,), strides=(6,))


def test_tensor_setters(g, x):
    y = g.relu(x)
    with pytest.raises(ValueError):
        y.set_dim([])
    with pytest.raises(cudnnfe.InvalidArgumentError):
        y.set_dim([2, -1, 8, 8])
    with pytest.raises(cudnnfe.InvalidArgumentError):
        y.set_stride([1, 2])
    with pytest.raises(cudnnfe.InvalidArgumentError):
        y.set_stride([1, 2, -3, 4])
    with pytest.raises(TypeError):
        y.set_data_type("no-such-type")
    with pytest.raises(ValueError):
        y.set_data_type(1234)
    with pytest.raises(cudnnfe.InvalidArgumentError):
        y.set_name("")
    with pytest.raises(TypeError):
        y.set_name(None)
    x.set_output(True)  # an input stays one; an op may take it as its output later
    with pytest.raises(cudnnfe.InvalidArgumentError, match="graph input"):
        x.set_output(False)
    with pytest.raises(ValueError):
        y.set_uid(-1)
    with pytest.raises(TypeError):
        y.set_uid("7")
    with pytest.raises(ValueError, match="reserved"):
        y.set_uid(cudnnfe.UID_ZERO_ALIAS)
    with pytest.raises(cudnnfe.InvalidArgumentError):
        g.get_tensor("no such tensor")


# ---- operations ----

def test_conv_arguments(g, x):
    w = g.tensor(name="w", dim=[4, 3, 3, 3])
    with pytest.raises(ValueError, match="entries"):
        g.conv_fprop(image=x, weight=w, padding=[1, 1, 1, 1])
    with pytest.raises(ValueError, match="another option"):
        g.conv_fprop(image=x, weight=w, padding=[1, 1], stride=[1, 1, 1])
    with pytest.raises(cudnnfe.InvalidGraphError):
        g.conv_fprop(image=x, weight=w, stride=[0, 1])
    with pytest.raises(ValueError, match="convolution_mode"):
        g.conv_fprop(image=x, weight=w, convolution_mode="sideways")
    with pytest.raises(TypeError):
        g.conv_fprop(image=x, weight="w")
    with pytest.raises(TypeError):
        g.conv_fprop(image=x, weight=None)
    other = cudnnfe.pygraph()
    with pytest.raises(ValueError, match="another graph"):
        g.conv_fprop(image=x, weight=other.tensor(dim=[4, 3, 3, 3]))
    with pytest.raises(cudnnfe.InvalidGraphError, match="dgrad"):
        g.conv_dgrad(weight=w, loss=g.tensor(dim=[2, 5, 8, 8]), name="dgrad")
    with pytest.raises(cudnnfe.InvalidGraphError, match="wg"):
        g.conv_wgrad(image=x, loss=g.tensor(dim=[3, 4, 8, 8]), name="wg")
    g.conv_fprop(image=x, weight=w, name="same")
    with pytest.raises(cudnnfe.InvalidArgumentError, match="same"):
        g.conv_fprop(image=x, weight=w, name="same")


def test_matmul_arguments(g):
    a = g.tensor(dim=[2, 3, 4])
    with pytest.raises(cudnnfe.InvalidGraphError, match="mm"):
        g.matmul(A=a, B=g.tensor(dim=[2, 5, 6]), name="mm")
    with pytest.raises(cudnnfe.InvalidGraphError):
        g.matmul(A=a, B=g.tensor(dim=[4, 6]))
    with pytest.raises(ValueError):
        g.matmul(A=a, B=a, compute_data_type=99)


def test_pointwise_arguments(g, x):
    with pytest.raises(ValueError, match="pointwise mode"):
        g.pointwise(mode=999, input0=x)
    with pytest.raises(ValueError, match="pointwise mode"):
        g.pointwise(mode="nope", input0=x)
    with pytest.raises(cudnnfe.InvalidGraphError, match="missing"):
        g.pointwise(mode=cudnnfe.pointwise_mode.ADD, input0=x)
    with pytest.raises(cudnnfe.InvalidGraphError, match="was given"):
        g.pointwise(mode="exp", input0=x, input1=x)
    with pytest.raises(cudnnfe.InvalidGraphError, match="broadcast"):
        g.add(a=x, b=g.tensor(dim=[2, 2, 8, 8]))
    with pytest.raises(TypeError):
        g.relu(x, negative_slope="steep")
    with pytest.raises(TypeError):
        g.gen_index(x, axis=1.5)
    with pytest.raises(cudnnfe.InvalidGraphError, match="axis"):
        g.gen_index(x, axis=7)
    with pytest.raises(TypeError, match="number"):
        g.matmul(A=x, B=3.0)


def test_reduction_arguments(g, x):
    with pytest.raises(ValueError, match="reduction mode"):
        g.reduction(input=x, mode="median")
    with pytest.raises(ValueError, match="out of range"):
        g.reduction(input=x, mode="ADD", axes=[9])
    with pytest.raises(ValueError, match="axes_mask"):
        g.reduction(input=x, mode="ADD", axes_mask=1 << 12)
    with pytest.raises(cudnnfe.InvalidGraphError, match="axes_mask"):
        g.reduction(input=x, mode="ADD", axes=[5])


def test_sdpa_arguments(g):
    q = g.tensor(name="q", dim=[1, 4, 16, 8])
    k = g.tensor(name="k", dim=[1, 4, 16, 8])
    v = g.tensor(name="v", dim=[1, 4, 16, 8])
    with pytest.raises(cudnnfe.InvalidGraphError, match=r'sdpa "attn": k'):
        g.sdpa(q=q, k=g.tensor(dim=[1, 16, 8]), v=v, name="attn")
    with pytest.raises(cudnnfe.InvalidGraphError, match="exclusive"):
        g.sdpa(q=q, k=k, v=v, use_causal_mask=True, use_causal_mask_bottom_right=True)
    # cudnn-frontend's class for head counts that do not divide h_q.
    with pytest.raises(cudnnfe.GraphNotSupportedError, match="must each divide"):
        g.sdpa(q=q, k=g.tensor(dim=[1, 3, 16, 8]), v=g.tensor(dim=[1, 3, 16, 8]))
    with pytest.raises(cudnnfe.InvalidGraphError, match="dropout_seed and dropout_offset"):
        g.sdpa(q=q, k=k, v=v, dropout=0.1)
    g.sdpa(q=q, k=k, v=v, dropout=0.0)  # p = 0 needs no seed
    with pytest.raises(TypeError, match="score_mod must be a callable"):
        g.sdpa(q=q, k=k, v=v, score_mod="tanh")
    with pytest.raises(TypeError, match="unexpected"):
        g.sdpa(q=q, k=k, v=v, attn_scael=0.1)
    with pytest.raises(ValueError, match="attn_scale"):
        g.sdpa(q=q, k=k, v=v, attn_scale=0.0)
    with pytest.raises(cudnnfe.InvalidGraphError, match="attn_scale"):
        g.sdpa(q=q, k=k, v=v, attn_scale=g.tensor(dim=[2]))  # one element
    with pytest.raises(cudnnfe.InvalidGraphError, match="bias"):
        g.sdpa(q=q, k=k, v=v, attn_bias=g.tensor(dim=[1, 4, 16, 15]))


# ---- build, execute, serialization ----

def test_build_arguments(g, x):
    g.relu(x).set_output(True)
    with pytest.raises(ValueError):
        g.build(heur_modes=[])
    with pytest.raises(ValueError):
        g.build(heur_modes=[7])
    with pytest.raises(ValueError):
        g.build(heur_modes=[cudnnfe.heur_mode.A] * 5)
    with pytest.raises(ValueError):
        g.build(target=17)
    with pytest.raises(TypeError):
        g.build(handle="h")
    with pytest.raises(ValueError):
        g.create_execution_plans(["Z"])


def test_validate_reports_the_rule():
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT)
    g.tensor(dim=[2])
    with pytest.raises(cudnnfe.InvalidGraphError, match="no operations"):
        g.validate()
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT)
    g.relu(g.tensor(dim=[3]))
    with pytest.raises(cudnnfe.InvalidGraphError, match="set_output"):
        g.validate()


def test_queries_before_build_are_wrong_state(g, x):
    g.relu(x).set_output(True)
    for call in (g.get_workspace_size, g.get_plan_name, g.get_target, g.get_bound_uids):
        with pytest.raises(cudnnfe.WrongStateError):
            call()
    with pytest.raises(cudnnfe.WrongStateError):
        g.execute({}, None)
    with pytest.raises(cudnnfe.WrongStateError):
        g.bind({})


def test_execute_arguments(g, x):
    y = g.relu(x).set_output(True)
    g.build(target=cudnnfe.target.CPU_REFERENCE)
    good = {x: np.zeros((2, 3, 8, 8), np.float32), y: np.zeros((2, 3, 8, 8), np.float32)}
    with pytest.raises(TypeError, match="dict"):
        g.execute([1, 2], None)
    with pytest.raises(TypeError):
        g.execute(good, None, handle="h")
    with pytest.raises(TypeError, match="stream"):
        g.execute(good, None, stream="s")
    with pytest.raises(TypeError):
        g.execute({3.5: good[x]})
    with pytest.raises(ValueError, match="negative"):
        g.execute({-1: good[x]})
    with pytest.raises(cudnnfe.InvalidArgumentError):
        g.execute({"no such tensor": good[x]})
    with pytest.raises(TypeError, match="not an array"):
        g.execute(good, workspace="workspace")
    h = cudnnfe.create_handle()
    cudnnfe.destroy_handle(h)
    with pytest.raises(ValueError, match="destroyed"):
        g.execute(good, None, handle=h)
    g.execute(good, None)  # still fine


def test_serialization_arguments(g, x):
    g.relu(x).set_output(True)
    data = g.serialize()
    with pytest.raises(cudnnfe.BadSerializedDataError):
        cudnnfe.pygraph().deserialize(b"\x00garbage", build=False)
    with pytest.raises(cudnnfe.BadSerializedDataError):
        cudnnfe.pygraph().deserialize(data[: len(data) // 2], build=False)
    with pytest.raises(TypeError):
        cudnnfe.pygraph().deserialize(12345)
    with pytest.raises(TypeError):
        cudnnfe.pygraph().deserialize([300, 1])
    with pytest.raises(cudnnfe.InvalidArgumentError, match="not empty"):
        g.deserialize(data, build=False)
    bad = cudnnfe.pygraph()
    try:
        bad.deserialize(b"{}", build=False)
    except cudnnfe.BadSerializedDataError as exc:
        assert isinstance(exc, ValueError) and exc.message


# ---- high level ----

def test_high_level_arguments():
    with pytest.raises(TypeError):
        cudnnfe.Graph(inputs="x")
    with pytest.raises(TypeError):
        cudnnfe.Graph(outputs=[1.5])  # names, tensors, UIDs and arrays select tensors
    with pytest.raises(ValueError):
        cudnnfe.Graph(heuristics=[42])
    with pytest.raises(ValueError):
        cudnnfe.graph_cache(maxsize=0)
    with pytest.raises(TypeError):
        cudnnfe.graph_cache(key_fn=5)
    with pytest.raises(ValueError):
        cudnnfe.jit(heur_modes=["fast"])

    @cudnnfe.jit()
    def not_a_pair():
        return 3

    with pytest.raises(TypeError, match="must return"):
        not_a_pair()

    @cudnnfe.jit()
    def not_a_graph():
        return "g", []

    with pytest.raises(TypeError, match="graph was expected"):
        not_a_graph()

    x = np.zeros((2, 2), np.float32)
    with cudnnfe.Graph(io_data_type=data_type.FLOAT) as g:
        g.relu(x, name="r").set_output(True)
    with pytest.raises(cudnnfe.InvalidArgumentError):
        g({"nope": x})
    # As cudnn-frontend's wrapper binds pointers only: a larger input is read from its
    # start with a warning, a too-small one is refused.
    with pytest.warns(cudnnfe.LargerBufferWarning, match=r"'r::input'.*\[3, 3\]"):
        g(np.zeros((3, 3), np.float32))
    with pytest.raises(ValueError, match=r"'r::input'.*spans only 1: the array is too small"):
        g(np.zeros((1, 1), np.float32))
    g2 = cudnnfe.Graph(io_data_type=data_type.FLOAT, outputs=["missing"])
    g2.relu(x).set_output(True)
    with pytest.raises(cudnnfe.InvalidArgumentError, match="missing"):
        g2(x)


def test_execute_failures_read_the_handle_message(g, x):
    y = g.relu(x).set_output(True)
    g.build(target=cudnnfe.target.CPU_REFERENCE)
    h = cudnnfe.create_handle()
    with pytest.raises(cudnnfe.InvalidArgumentError) as info:
        g.execute_ordered([0, 0], handle=h)  # NULL pointers reach the C library
    assert info.value.message == cudnnfe.ffi.string(
        cudnnfe.lib.cudnnfe_handle_last_error(h.ptr)).decode()
    assert "NULL" in info.value.message
    with pytest.raises(cudnnfe.InvalidArgumentError, match="pointers given"):
        g.execute_ordered([1], handle=h)
    cudnnfe.destroy_handle(h)
