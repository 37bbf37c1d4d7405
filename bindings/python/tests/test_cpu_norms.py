"""Batch norm (training with running statistics, inference, backward), instance norm and
adaptive layer norm on the CPU reference against NumPy; cudnn-frontend's pass-by-value
epsilon / momentum tensors; bad inputs."""
import json

import numpy as np
import pytest

import cudnnfe
from cudnnfe import norm_forward_phase
from cpu_helpers import close, graph, run
import numpy_ref_ops as ref

N, C, H, W = 3, 4, 5, 2


@pytest.fixture
def bn_arrays(rng):
    x = rng.standard_normal((N, C, H, W)).astype(np.float32) * 2 + 0.5
    scale = rng.standard_normal((1, C, 1, 1)).astype(np.float32)
    bias = rng.standard_normal((1, C, 1, 1)).astype(np.float32)
    rmean = rng.standard_normal((1, C, 1, 1)).astype(np.float32)
    rvar = rng.uniform(0.5, 2, (1, C, 1, 1)).astype(np.float32)
    return x, scale, bias, rmean, rvar


@pytest.mark.parametrize("constants", ["floats", "host-tensors", "scalar-arrays"])
def test_batchnorm_training_with_running_stats(bn_arrays, constants):
    x, scale, bias, rmean, rvar = bn_arrays
    x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)  # channels-last
    eps_cpu = np.full((1, 1, 1, 1), 1e-3, np.float32)
    mom_cpu = np.full((1, 1, 1, 1), 0.2, np.float32)
    g = graph()
    tx, ts, tb, tm, tv = (g.tensor_like(a) for a in (x, scale, bias, rmean, rvar))
    inputs = {tx: x, ts: scale, tb: bias, tm: rmean, tv: rvar}
    if constants == "floats":
        eps, mom = 1e-3, 0.2
    elif constants == "host-tensors":  # cudnn-frontend's form
        eps, mom = g.tensor_like(eps_cpu), g.tensor_like(mom_cpu)
        inputs[eps], inputs[mom] = eps_cpu, mom_cpu  # given again at execute, as there
    else:
        eps, mom = eps_cpu, mom_cpu
    y, mean, inv, next_mean, next_var = g.batchnorm(
        input=tx, scale=ts, bias=tb, in_running_mean=tm, in_running_var=tv, epsilon=eps,
        momentum=mom, name="BN")
    assert y.get_dim() == [N, C, H, W] and y.get_stride() == list(tx.get_stride())
    outs = run(g, inputs, [t.set_output(True) for t in (y, mean, inv, next_mean, next_var)])
    want = ref.batchnorm(x.astype(np.float64), scale, bias, 1e-3, (rmean, rvar), 0.2)
    for got, expected in zip(outs, want):
        close(got, expected, rtol=1e-4, atol=1e-5)
    if constants == "host-tensors":
        # the tensors are graph inputs (epsilon_tensor, momentum_tensor), read at every
        # execute: new values need no new graph, as in cudnn-frontend
        assert len(g.get_bound_uids()) == 7 + 5
        again = dict(inputs)
        again[eps] = np.full((1, 1, 1, 1), 1e-1, np.float32)
        again[mom] = np.full((1, 1, 1, 1), 0.7, np.float32)
        fresh = [np.empty_like(o) for o in outs]
        again.update(zip((y, mean, inv, next_mean, next_var), fresh))
        g.execute(again)
        want = ref.batchnorm(x.astype(np.float64), scale, bias, 1e-1, (rmean, rvar), 0.7)
        for got, expected in zip(fresh, want):
            close(got, expected, rtol=1e-4, atol=1e-5)


def test_batchnorm_updates_running_stats_in_place(bn_arrays):
    x, scale, bias, rmean, rvar = bn_arrays
    g = graph()
    tx, ts, tb, tm, tv = (g.tensor_like(a) for a in (x, scale, bias, rmean, rvar))
    y, mean, inv, nm, nv = g.batchnorm(tx, ts, tb, tm, tv, 1e-5, 0.5)
    for t in (y, mean, inv, nm, nv):
        t.set_output(True)
    g.build()
    running_mean, running_var = rmean.copy(), rvar.copy()
    out = [np.empty(t.get_dim(), np.float32) for t in (y, mean, inv)]
    g.execute({tx: x, ts: scale, tb: bias, tm: running_mean, tv: running_var, y: out[0],
               mean: out[1], inv: out[2], nm: running_mean, nv: running_var})
    want = ref.batchnorm(x.astype(np.float64), scale, bias, 1e-5, (rmean, rvar), 0.5)
    close(running_mean, want[3], rtol=1e-5)
    close(running_var, want[4], rtol=1e-5)


def test_batchnorm_without_running_stats(bn_arrays):
    x, scale, bias, _, _ = bn_arrays
    g = graph()
    tx, ts, tb = (g.tensor_like(a) for a in (x, scale, bias))
    y, mean, inv, nm, nv = g.batchnorm(tx, ts, tb, epsilon=1e-4)
    assert nm is None and nv is None
    outs = run(g, {tx: x, ts: scale, tb: bias}, [y.set_output(True), mean.set_output(True),
                                                 inv.set_output(True)])
    for got, expected in zip(outs, ref.batchnorm(x.astype(np.float64), scale, bias, 1e-4)):
        close(got, expected, rtol=1e-4, atol=1e-5)


def test_batchnorm_inference(bn_arrays, rng):
    x, scale, bias, rmean, rvar = bn_arrays
    inv = (1 / np.sqrt(rvar + 1e-5)).astype(np.float32)
    g = graph()
    tx, ts, tb, tm, ti = (g.tensor_like(a) for a in (x, scale, bias, rmean, inv))
    y = g.batchnorm_inference(input=tx, mean=tm, inv_variance=ti, scale=ts, bias=tb)
    (out,) = run(g, {tx: x, ts: scale, tb: bias, tm: rmean, ti: inv}, [y.set_output(True)])
    close(out, (x - rmean.astype(np.float64)) * inv * scale + bias, rtol=1e-5, atol=1e-5)


def test_batchnorm_backward(bn_arrays, rng):
    x, scale, _, _, _ = bn_arrays
    dy = rng.standard_normal(x.shape).astype(np.float32)
    _, mean, inv, _, _ = ref.batchnorm(x.astype(np.float64), scale, 0, 1e-5)
    mean, inv = mean.astype(np.float32), inv.astype(np.float32)
    g = graph()
    tdy, tx, ts, tm, ti = (g.tensor_like(a) for a in (dy, x, scale, mean, inv))
    dx, dscale, dbias = g.batchnorm_backward(grad=tdy, input=tx, scale=ts, mean=tm,
                                             inv_variance=ti, name="DBN")
    assert dscale.get_dim() == [1, C, 1, 1]
    outs = run(g, {tdy: dy, tx: x, ts: scale, tm: mean, ti: inv},
               [dx.set_output(True), dscale.set_output(True), dbias.set_output(True)])
    want = ref.norm_backward(dy.astype(np.float64), x.astype(np.float64), scale, mean, inv,
                             (0, 2, 3), (0, 2, 3))
    for got, expected in zip(outs, want):
        close(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("phase", [norm_forward_phase.TRAINING, norm_forward_phase.INFERENCE])
def test_instancenorm_and_backward(rng, phase):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    scale = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    bias = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    g = graph()
    tx, ts, tb = (g.tensor_like(a) for a in (x, scale, bias))
    y, mean, inv = g.instancenorm(phase, tx, ts, tb, 1e-3)
    want = ref.instancenorm(x.astype(np.float64), scale, bias, 1e-3)
    if phase == norm_forward_phase.INFERENCE:
        assert mean is None and inv is None
        (out,) = run(g, {tx: x, ts: scale, tb: bias}, [y.set_output(True)])
        close(out, want[0], rtol=1e-4, atol=1e-5)
        return
    outs = run(g, {tx: x, ts: scale, tb: bias},
               [y.set_output(True), mean.set_output(True), inv.set_output(True)])
    for got, expected in zip(outs, want):
        close(got, expected, rtol=1e-4, atol=1e-5)
    assert outs[1].shape == (2, 3, 1, 1)

    dy = rng.standard_normal(x.shape).astype(np.float32)
    gb = graph()
    tdy, tx, ts, tm, ti = (gb.tensor_like(a) for a in (dy, x, scale, outs[1], outs[2]))
    grads = gb.instancenorm_backward(tdy, tx, ts, mean=tm, inv_variance=ti)
    got = run(gb, {tdy: dy, tx: x, ts: scale, tm: outs[1], ti: outs[2]},
              [t.set_output(True) for t in grads])
    want = ref.norm_backward(dy.astype(np.float64), x.astype(np.float64), scale, outs[1],
                             outs[2], (2, 3), (0, 2, 3))
    for a, b in zip(got, want):
        close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("zero_centered", [False, True])
def test_adalayernorm_and_backward(rng, zero_centered):
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    scale = rng.standard_normal((2, 1, 8)).astype(np.float32) * 0.5
    bias = rng.standard_normal((2, 1, 8)).astype(np.float32)
    g = graph()
    tx, ts, tb = (g.tensor_like(a) for a in (x, scale, bias))
    y, mean, inv = g.adalayernorm(norm_forward_phase=norm_forward_phase.TRAINING, input=tx,
                                  scale=ts, bias=tb, epsilon=1e-5,
                                  zero_centered_gamma=zero_centered)
    outs = run(g, {tx: x, ts: scale, tb: bias},
               [y.set_output(True), mean.set_output(True), inv.set_output(True)])
    want = ref.adalayernorm(x.astype(np.float64), scale, bias, 1e-5, zero_centered)
    for a, b in zip(outs, want):
        close(a, b, rtol=1e-4, atol=1e-5)

    dy = rng.standard_normal(x.shape).astype(np.float32)
    gb = graph()
    tdy, tx, ts, tm, ti = (gb.tensor_like(a) for a in (dy, x, scale, outs[1], outs[2]))
    grads = gb.adalayernorm_backward(tdy, tx, ts, tm, ti, zero_centered_gamma=zero_centered)
    assert grads[1].get_dim() == [2, 1, 8]
    got = run(gb, {tdy: dy, tx: x, ts: scale, tm: outs[1], ti: outs[2]},
              [t.set_output(True) for t in grads])
    want = ref.norm_backward(dy.astype(np.float64), x.astype(np.float64), scale, outs[1],
                             outs[2], (2,), (1,), zero_centered)
    for a, b in zip(got, want):
        close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("make", ["tensor_like", "pass_by_value"])
def test_layernorm_reads_its_epsilon_tensor_at_execute(rng, make):
    x = rng.standard_normal((4, 16)).astype(np.float32)
    s = rng.standard_normal((1, 16)).astype(np.float32)
    b = rng.standard_normal((1, 16)).astype(np.float32)
    g = graph()
    tx, ts, tb = (g.tensor_like(a) for a in (x, s, b))
    if make == "tensor_like":
        eps = g.tensor_like(np.full((1, 1), 0.5, np.float32))
    else:  # cudnn-frontend's test_layernorm: the value exists only at execute
        eps = g.tensor(dim=[1, 1], is_pass_by_value=True, name="epsilon")
    y, _, _ = g.layernorm(tx, ts, tb, epsilon=eps, norm_forward_phase="inference")
    y.set_output(True)
    mean = x.mean(axis=1, keepdims=True)
    for value in (0.25, 2.0):
        (out,) = run(g, {tx: x, ts: s, tb: b, eps: np.full((1, 1), value, np.float32)}, [y])
        close(out, (x - mean) / np.sqrt(x.var(axis=1, keepdims=True) + value) * s + b,
              rtol=1e-4, atol=1e-5)


def test_a_folded_input_that_an_op_also_reads_stays_an_input(rng):
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    s = np.ones((1, 3, 1, 1), np.float32)
    eps_cpu = np.full((1, 1, 1, 1), 0.5, np.float32)
    g = graph()
    tx, ts, tb = (g.tensor_like(a) for a in (x, s, s * 0))
    eps = g.tensor_like(eps_cpu)
    y, _, _ = g.instancenorm("inference", tx, ts, tb, epsilon=eps)
    z = g.add(y, eps).set_output(True)  # eps also read as an operand
    (out,) = run(g, {tx: x, ts: s, tb: s * 0, eps: eps_cpu}, [z])
    close(out, ref.instancenorm(x.astype(np.float64), s, 0, 0.5)[0] + 0.5, rtol=1e-4, atol=1e-5)


def test_norm_bad_inputs(bn_arrays):
    x, scale, bias, rmean, rvar = bn_arrays
    g = graph()
    tx, ts, tb, tm, tv = (g.tensor_like(a) for a in (x, scale, bias, rmean, rvar))
    with pytest.raises(cudnnfe.NotOfferedError, match="peer_stats"):
        g.batchnorm(tx, ts, tb, tm, tv, 1e-5, 0.1, peer_stats=[tm])
    with pytest.raises(cudnnfe.NotOfferedError, match="peer_stats"):
        g.batchnorm_backward(tx, tx, ts, tm, tv, peer_stats=[tm])
    with pytest.raises(cudnnfe.InvalidGraphError, match="epsilon") as info:
        g.batchnorm(tx, ts, tb, epsilon=g.tensor(dim=[1, 2], name="eps2"), name="bn2")
    assert 'batchnorm "bn2"' in info.value.message and "eps2" in info.value.message
    with pytest.raises(cudnnfe.NotOfferedError, match="computed by the graph"):
        g.batchnorm(tx, ts, tb, epsilon=g.relu(tm))
    with pytest.raises(TypeError, match="momentum"):
        g.batchnorm(tx, ts, tb, tm, tv, momentum="fast")
    with pytest.raises(cudnnfe.InvalidGraphError, match="momentum") as info:
        g.batchnorm(tx, ts, tb, tm, tv, momentum=2.0, name="bn")
    assert 'batchnorm "bn"' in info.value.message
    with pytest.raises(cudnnfe.InvalidGraphError, match="batchnorm_inference"):
        g.batchnorm(tx, ts, tb, norm_forward_phase="INFERENCE")
    with pytest.raises(cudnnfe.InvalidGraphError, match="scale"):
        g.batchnorm(tx, g.tensor(dim=[1, C + 1, 1, 1]), tb)
    with pytest.raises(cudnnfe.InvalidGraphError, match="both"):
        g.batchnorm(tx, ts, tb, in_running_mean=tm)
    with pytest.raises(cudnnfe.NotOfferedError, match="recomputing"):
        g.instancenorm_backward(tx, tx, ts)
    with pytest.raises(ValueError, match="norm_forward_phase"):
        g.instancenorm("testing", tx, ts, tb)
    with pytest.raises(cudnnfe.InvalidGraphError, match="at least 2"):
        g.instancenorm("training", g.tensor(dim=[4]), ts, tb)  # x needs [N, C, ...]


def test_high_level_graph_with_an_epsilon_tensor(bn_arrays):
    x, scale, bias, _, _ = bn_arrays
    eps_cpu = np.full((1, 1, 1, 1), 1e-3, np.float32)
    from cpu_helpers import CPU, F32
    with cudnnfe.Graph(target=CPU, **F32) as g:
        eps = g.tensor_like(eps_cpu)
        y, _, _, _, _ = g.batchnorm(x, scale, bias, epsilon=eps, name="bn")
        y.set_output(True)
    # a graph input of the op (read at execute), in creation order
    assert g.input_names() == [eps.get_name(), "bn::input", "bn::scale", "bn::bias"]
    want = ref.batchnorm(x.astype(np.float64), scale, bias, 1e-3)[0]
    close(g(eps_cpu, x, scale, bias), want, rtol=1e-4, atol=1e-5)
    result = g({"bn::input": x, "bn::scale": scale, "bn::bias": bias, eps: eps_cpu})
    close(result["bn::Y"], want, rtol=1e-4, atol=1e-5)


def test_epsilon_tensor_survives_graph_json(rng):
    x = rng.standard_normal((4, 8)).astype(np.float32)
    s = np.ones((1, 8), np.float32)
    g = graph()
    tx, ts, tb = (g.tensor_like(a, name=n) for a, n in ((x, "x"), (s, "s"), (s * 0, "b")))
    eps = g.tensor(dim=[1, 1], is_pass_by_value=True, name="eps")
    g.layernorm(tx, ts, tb, epsilon=eps, norm_forward_phase="inference", name="ln")
    doc = json.loads(g.serialize())
    (node,) = doc["nodes"]
    assert node["inputs"]["epsilon"] == eps.get_uid()
    g2 = cudnnfe.pygraph.deserialize(g.serialize(), build=False)
    y = g2.get_tensor("ln::Y").set_output(True)
    inputs = {g2.get_tensor(n): a for n, a in (("x", x), ("s", s), ("b", s * 0))}
    inputs[g2.get_tensor("eps")] = np.full((1, 1), 3.0, np.float32)
    (out,) = run(g2, inputs, [y], target=cudnnfe.target.CPU_REFERENCE)
    close(out, (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 3.0),
          rtol=1e-4, atol=1e-5)


# ---- scale and bias that broadcast (issue 23) -------------------------------------------


@pytest.mark.parametrize("rms", [False, True])
def test_transformer_norm_with_a_shared_scale_matches_numpy(rng, rms):
    """A transformer's LayerNorm / RMSNorm: x [b, s, d] normalized per token over d with scale
    and bias [1, 1, d] (cudnn-frontend infers the statistics as x's dims with 1 where the scale
    is not 1: [b, s, 1]). Was refused with "expected [1,s,d]"."""
    b, sq, d = 2, 3, 8
    x = rng.standard_normal((b, sq, d)).astype(np.float32) * 2 + 0.5
    scale = rng.standard_normal((1, 1, d)).astype(np.float32)
    bias = rng.standard_normal((1, 1, d)).astype(np.float32)
    g = graph()
    tx, ts, tb = (g.tensor_like(a) for a in (x, scale, bias))
    if rms:
        y, inv = g.rmsnorm(tx, ts, tb, epsilon=1e-5)
        stats = [inv]
    else:
        y, mean, inv = g.layernorm(tx, ts, tb, epsilon=1e-5)
        stats = [mean, inv]
    assert all(t.get_dim() == [b, sq, 1] for t in stats)
    outs = run(g, {tx: x, ts: scale, tb: bias}, [t.set_output(True) for t in [y] + stats])
    x64 = x.astype(np.float64)
    mu = np.zeros((b, sq, 1)) if rms else x64.mean(axis=2, keepdims=True)
    iv = 1 / np.sqrt(((x64 - mu) ** 2).mean(axis=2, keepdims=True) + 1e-5)
    close(outs[0], (x64 - mu) * iv * scale + bias, rtol=1e-4, atol=1e-5)
    close(outs[-1], iv, rtol=1e-4, atol=1e-5)
    if not rms:
        close(outs[1], mu, rtol=1e-4, atol=1e-5)

    # The backward: dscale and dbias take the scale's shape, [1, 1, d].
    dy = rng.standard_normal(x.shape).astype(np.float32)
    gb = graph()
    tdy, tx, ts, ti = (gb.tensor_like(a) for a in (dy, x, scale, outs[-1]))
    if rms:
        dx, ds, db = gb.rmsnorm_backward(tdy, tx, ts, ti, has_dbias=True)
        inputs = {tdy: dy, tx: x, ts: scale, ti: outs[-1]}
    else:
        tm = gb.tensor_like(outs[1])
        dx, ds, db = gb.layernorm_backward(tdy, tx, ts, tm, ti)
        inputs = {tdy: dy, tx: x, ts: scale, tm: outs[1], ti: outs[-1]}
    assert ds.get_dim() == [1, 1, d] and db.get_dim() == [1, 1, d]
    got = run(gb, inputs, [t.set_output(True) for t in (dx, ds, db)])
    want = ref.norm_backward(dy.astype(np.float64), x64, scale, 0.0 if rms else outs[1],
                             outs[-1], (2,), (0, 1))
    if rms:  # no mean term: dx = inv * (dy*g - xhat * mean(dy*g * xhat))
        xhat = x64 * outs[-1]
        dyg = dy * scale
        want = (outs[-1] * (dyg - xhat * (dyg * xhat).mean(axis=2, keepdims=True)),) + want[1:]
    for a, w in zip(got, want):
        close(a, w, rtol=1e-4, atol=1e-4)


def test_norm_parameters_broadcast_over_any_dims_and_bad_shapes_are_malformed(rng):
    """Scale and bias: each dim x's or 1 (the scale's non-1 dims are normalized). A [1, s, d]
    scale normalizes per sample; a shared [1, 1, D] adalayernorm scale works as [B, 1, D] does;
    a dim that is neither x's nor 1 is a malformed graph (InvalidGraphError)."""
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    scale = rng.standard_normal((1, 3, 4)).astype(np.float32)
    bias = rng.standard_normal((1, 1, 4)).astype(np.float32)
    g = graph()
    tx, ts, tb = (g.tensor_like(a) for a in (x, scale, bias))
    y, mean, inv = g.layernorm(tx, ts, tb, epsilon=1e-5)
    assert mean.get_dim() == [2, 1, 1]
    (out,) = run(g, {tx: x, ts: scale, tb: bias}, [y.set_output(True)])
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=(1, 2), keepdims=True)
    iv = 1 / np.sqrt(((x64 - mu) ** 2).mean(axis=(1, 2), keepdims=True) + 1e-5)
    close(out, (x64 - mu) * iv * scale + bias, rtol=1e-4, atol=1e-5)

    shared = rng.standard_normal((1, 1, 4)).astype(np.float32)
    ga = graph()
    tx, ts, tb = (ga.tensor_like(a) for a in (x, shared, shared))
    y, mean, inv = ga.adalayernorm(norm_forward_phase=norm_forward_phase.TRAINING, input=tx,
                                   scale=ts, bias=tb, epsilon=1e-5)
    assert mean.get_dim() == [2, 3, 1]
    (out,) = run(ga, {tx: x, ts: shared, tb: shared}, [y.set_output(True)])
    want = ref.adalayernorm(x64, np.repeat(shared, 2, axis=0), np.repeat(shared, 2, axis=0),
                            1e-5)
    close(out, want[0], rtol=1e-4, atol=1e-5)

    gbad = graph()
    tx = gbad.tensor_like(x)
    with pytest.raises(cudnnfe.InvalidGraphError, match="x's or 1") as info:
        gbad.layernorm(tx, gbad.tensor(dim=[1, 1, 2], name="s2"), gbad.tensor(dim=[1, 1, 4]))
    assert "s2" in info.value.message


def test_a_scalar_tensor_given_as_epsilon_is_folded_by_the_c_library(rng):
    # A pass-by-value scalar of the graph (what cudnnfe makes for a number operand)
    # given where an op takes a number: the C library folds its value into the op's
    # epsilon at validation (cudnnfe_norm_options_t.epsilon_tensor), so nothing is
    # bound for it.
    x = rng.standard_normal((4, 16)).astype(np.float32)
    s = rng.standard_normal((1, 16)).astype(np.float32)
    b = rng.standard_normal((1, 16)).astype(np.float32)
    g = graph()
    tx, ts, tb = (g.tensor_like(a) for a in (x, s, b))
    scalar = g._wrap(g._scalar(0.5, "n", "eps"))
    assert scalar.get_kind() == cudnnfe.tensor_kind.SCALAR
    y, _, _ = g.layernorm(tx, ts, tb, epsilon=scalar, norm_forward_phase="inference")
    y.set_output(True)
    (out,) = run(g, {tx: x, ts: s, tb: b}, [y])
    mean = x.mean(axis=1, keepdims=True)
    close(out, (x - mean) / np.sqrt(x.var(axis=1, keepdims=True) + 0.5) * s + b,
          rtol=1e-4, atol=1e-5)
