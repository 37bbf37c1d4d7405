"""Verify mode (docs/verify.md) from Python: ``pygraph(verify=True)``, ``build(verify=...)`` and
the environment variable ``CUDNNFE_VERIFY=1``. The first execute of each plan is checked against
the CPU reference on a sample of output elements; a mismatch raises
:class:`cudnnfe.VerifyFailedError` naming the graph, node, plan and worst element.

On the CPU reference the check compares the executed graph with an independent sampled
evaluation, so a wrong element planted by the library's test hook (the environment variable
``CUDNNFE_VERIFY_TEST_CORRUPT=1``) is caught without a GPU. The ``gpu`` tests do the same on
cuDNN's results for conv, matmul, SDPA and layer norm, and skip without torch or a CUDA device.
"""
import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type

CPU = cudnnfe.target.CPU_REFERENCE


@pytest.fixture
def env(monkeypatch):
    """The environment, with verify mode's variables unset."""
    for name in ("CUDNNFE_VERIFY", "CUDNNFE_VERIFY_TEST_CORRUPT", "CUDNNFE_VERIFY_SAMPLES"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def verify_log():
    """verify's log lines of the test (the library's log callback at INFO)."""
    lines = []
    cudnnfe.set_log_callback(lambda level, message: lines.append(message), "info")
    yield lines
    cudnnfe.set_log_callback(None, "off")


def _alloc(t, xp=np):
    dims, strides = t.get_dim(), t.get_stride()
    dt = cudnnfe._arrays.numpy_dtype(t.get_data_type())
    span = 1 + sum((d - 1) * s for d, s in zip(dims, strides))
    buf = np.zeros(span, dtype=dt)
    return np.lib.stride_tricks.as_strided(buf, dims, [s * dt.itemsize for s in strides])


# Each family: builder(g, make) -> (inputs {tensor: array}, outputs), and the node a
# mismatch names. make(shape, param=False) gives an input array (NumPy on the CPU, torch on
# the GPU; params stay FLOAT).
def _conv_bias_relu(g, make):
    x, w, b = make((2, 8, 12, 12)), make((16, 8, 3, 3)), make((1, 16, 1, 1))
    tx, tw, tb = g.tensor_like(x), g.tensor_like(w), g.tensor_like(b)
    y = g.relu(g.bias(input=g.conv_fprop(image=tx, weight=tw, padding=[1, 1]), bias=tb),
               name="relu").set_output(True)
    return {tx: x, tw: w, tb: b}, [y]


def _matmul(g, make):
    a, b = make((2, 40, 48)), make((2, 48, 24))
    ta, tb = g.tensor_like(a), g.tensor_like(b)
    return {ta: a, tb: b}, [g.matmul(A=ta, B=tb, name="mm").set_output(True)]


def _sdpa(g, make):
    q, k, v = make((2, 4, 40, 16)), make((2, 2, 40, 16)), make((2, 2, 40, 16))
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    o, stats = g.sdpa(q=tq, k=tk, v=tv, attn_scale=0.25, use_causal_mask=True,
                      generate_stats=True, name="attn")
    return {tq: q, tk: k, tv: v}, [o.set_output(True), stats.set_output(True)]


def _layernorm(g, make):
    x, s, b = make((64, 96)), make((1, 96), param=True), make((1, 96), param=True)
    tx, ts, tb = g.tensor_like(x), g.tensor_like(s), g.tensor_like(b)
    y, mean, inv = g.layernorm(input=tx, scale=ts, bias=tb, epsilon=1e-5, name="ln")
    return {tx: x, ts: s, tb: b}, [y.set_output(True), mean.set_output(True),
                                   inv.set_output(True)]


FAMILIES = {
    "conv_bias_relu": (_conv_bias_relu, 'pointwise "relu"'),
    "matmul": (_matmul, 'matmul "mm"'),
    "sdpa": (_sdpa, 'sdpa "attn"'),
    "layernorm": (_layernorm, 'layernorm "ln"'),
}


def _numpy_maker(seed):
    rng = np.random.default_rng(seed)

    def make(shape, param=False):
        lo = 0.5 if param else -1.0
        return rng.uniform(lo, 1.0, shape).astype(np.float32)
    return make


def _run_cpu(family, name, **graph_kw):
    build, _ = FAMILIES[family]
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT, target=CPU, name=name, **graph_kw)
    inputs, outputs = build(g, _numpy_maker(5))
    g.build()
    pack = dict(inputs)
    pack.update((t, _alloc(t)) for t in outputs)
    g.execute(pack, None)
    return g, pack


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_cpu_family_passes_then_a_planted_error_is_caught(family, env, verify_log):
    _run_cpu(family, f"{family}_good", verify=True)
    assert any(f'"{family}_good"' in line and "passed" in line for line in verify_log), verify_log
    env.setenv("CUDNNFE_VERIFY_TEST_CORRUPT", "1")
    with pytest.raises(cudnnfe.VerifyFailedError) as info:
        _run_cpu(family, f"{family}_bad", verify=True)
    message = str(info.value)
    for part in (f'verify: graph "{family}_bad"', FAMILIES[family][1],
                 "differs from the CPU reference", "worst at index", "got", "expected",
                 "tolerance", "plan cpu_reference", "CUDNNFE_STATUS_VERIFY_FAILED"):
        assert part in message, message
    assert info.value.status == cudnnfe.lib.CUDNNFE_STATUS_VERIFY_FAILED
    assert isinstance(info.value, RuntimeError)


def test_environment_variable_turns_verify_on_and_keywords_win(env):
    env.setenv("CUDNNFE_VERIFY_TEST_CORRUPT", "1")
    _run_cpu("matmul", "off_by_default")  # no verify keyword, no CUDNNFE_VERIFY: not checked
    env.setenv("CUDNNFE_VERIFY", "1")
    with pytest.raises(cudnnfe.VerifyFailedError):
        _run_cpu("matmul", "from_env")
    _run_cpu("matmul", "keyword_off", verify=False)
    env.delenv("CUDNNFE_VERIFY")
    # build()'s keyword overrides the graph's.
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT,
                        target=CPU, name="build_keyword", verify=False)
    inputs, outputs = _matmul(g, _numpy_maker(1))
    g.build(verify=True, verify_samples=3, verify_rtol=0.5)
    pack = dict(inputs)
    pack.update((t, _alloc(t)) for t in outputs)
    with pytest.raises(cudnnfe.VerifyFailedError, match=r"rtol 0\.5 of"):
        g.execute(pack, None)


def test_samples_option_and_not_verified_log(env, verify_log):
    _run_cpu("matmul", "three_samples", verify=True, verify_samples=3)
    assert any('"mm::C" 3 elements' in line for line in verify_log), verify_log
    # Random numbers: passed through, with the reason in the log.
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT,
                        target=CPU, name="noisy", verify=True)
    x = np.ones((4, 8), np.float32)
    tx = g.tensor_like(x)
    noise = g.rng(dim=[4, 8], distribution=cudnnfe.rng_distribution.UNIFORM, name="noise")
    y = g.add(tx, noise).set_output(True)
    g.build()
    env.setenv("CUDNNFE_VERIFY_TEST_CORRUPT", "1")
    g.execute({tx: x, y: _alloc(y)}, None)
    assert any("not verified" in line and 'rng "noise"' in line for line in verify_log), verify_log


def test_bad_verify_keywords(env):
    with pytest.raises(TypeError, match="verify must be"):
        _run_cpu("matmul", "bad_type", verify="yes")
    with pytest.raises(cudnnfe.InvalidArgumentError, match="verify_rtol is -1"):
        _run_cpu("matmul", "bad_rtol", verify=True, verify_rtol=-1.0)
    with pytest.raises(cudnnfe.InvalidArgumentError, match="verify_samples is -2"):
        _run_cpu("matmul", "bad_samples", verify=True, verify_samples=-2)
    env.setenv("CUDNNFE_VERIFY", "maybe")
    with pytest.raises(cudnnfe.InvalidArgumentError, match="CUDNNFE_VERIFY"):
        _run_cpu("matmul", "bad_env")


# ---------------------------------------------------------------------------
# GPU: cuDNN's results pass, a planted wrong element is caught.


def _torch_cuda():
    torch = pytest.importorskip("torch", reason="GPU tests need torch, which is not installed")
    if not torch.cuda.is_available():
        pytest.skip("GPU tests need a CUDA device; torch sees none")
    return torch


def _run_gpu(torch, family, name, dtype, **graph_kw):
    io = data_type.BFLOAT16 if dtype == torch.bfloat16 else data_type.HALF
    g = cudnnfe.pygraph(io_data_type=io, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT, name=name, **graph_kw)
    gen = torch.Generator(device="cuda").manual_seed(7)

    def make(shape, param=False):
        if param:
            return torch.rand(shape, device="cuda", generator=gen) + 0.5
        a = (torch.rand(shape, device="cuda", generator=gen) * 2 - 1).to(dtype)
        # Convolutions run channels-last (NHWC), as cuDNN's fused engines want.
        return a.contiguous(memory_format=torch.channels_last) if len(shape) == 4 and \
            family == "conv_bias_relu" else a

    build, _ = FAMILIES[family]
    inputs, outputs = build(g, make)
    g.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    from cudnnfe import _arrays
    pack = dict(inputs)
    for t in outputs:
        pack[t] = torch.empty_strided(t.get_dim(), t.get_stride(), device="cuda",
                                      dtype=_arrays.torch_dtype(t.get_data_type()))
    ws = torch.empty(g.get_workspace_size(), device="cuda", dtype=torch.uint8)
    g.execute(pack, ws)
    torch.cuda.synchronize()
    return g


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_gpu_family_passes_then_a_planted_error_is_caught(family, env, verify_log):
    torch = _torch_cuda()
    dtype = torch.float16 if family == "conv_bias_relu" else torch.bfloat16
    try:
        g = _run_gpu(torch, family, f"gpu_{family}", dtype, verify=True)
    except cudnnfe.GraphNotSupportedError as e:
        pytest.skip(f"cuDNN offers no plan: {e}")
    assert g.get_target() == cudnnfe.target.GPU
    assert any(f'"gpu_{family}"' in line and "passed" in line for line in verify_log), verify_log
    env.setenv("CUDNNFE_VERIFY_TEST_CORRUPT", "1")
    with pytest.raises(cudnnfe.VerifyFailedError) as info:
        _run_gpu(torch, family, f"gpu_{family}_bad", dtype, verify=True)
    message = str(info.value)
    print(message)
    for part in (FAMILIES[family][1], "worst at index", "plan eng", "cuDNN 9.", "GPU "):
        assert part in message, message
