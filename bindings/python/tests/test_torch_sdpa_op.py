"""cudnnfe.experimental.ops.sdpa, the PyTorch custom operator with autograd: on CPU tensors
(the CPU reference) against a float64 PyTorch reference, and its refusals. Skipped where torch
is not installed (the GPU side runs cudnn-frontend's own test_cudnn_sdpa_op.py)."""
import math

import pytest

import cudnnfe


torch = pytest.importorskip("torch", reason="the sdpa operator needs torch")


def _reference(q, k, v, scale, causal):
    q64, k64, v64 = (t.detach().double().requires_grad_(True) for t in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    kk, vv = k64.repeat_interleave(rep, 1), v64.repeat_interleave(rep, 1)
    s = q64 @ kk.transpose(-1, -2) * scale
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
    o = torch.softmax(s, -1) @ vv
    o.sum().backward()
    return o, q64.grad, k64.grad, v64.grad


@pytest.mark.parametrize("causal,heads_kv", [(False, 2), (True, 1)])
def test_forward_and_backward_on_the_cpu_reference(causal, heads_kv):
    from cudnnfe.experimental.ops.sdpa import _fprop_cache, scaled_dot_product_attention

    gen = torch.Generator().manual_seed(0)
    q = torch.randn(1, 2, 8, 16, generator=gen).half().requires_grad_(True)
    k = torch.randn(1, heads_kv, 8, 16, generator=gen).half().requires_grad_(True)
    v = torch.randn(1, heads_kv, 8, 16, generator=gen).half().requires_grad_(True)
    before = len(_fprop_cache)
    o = scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    o.sum().backward()
    ro, rq, rk, rv = _reference(q, k, v, 1 / math.sqrt(16), causal)
    for got, want in ((o, ro), (q.grad, rq), (k.grad, rk), (v.grad, rv)):
        torch.testing.assert_close(got.double(), want, atol=2e-2, rtol=2e-2)
    scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    assert len(_fprop_cache) == before + 1  # one graph per configuration


def test_refusals():
    from cudnnfe.experimental.ops.sdpa import scaled_dot_product_attention

    q = torch.zeros(1, 4, 8, 16, dtype=torch.float16)
    k = torch.zeros(1, 2, 8, 16, dtype=torch.float16)
    with pytest.raises(NotImplementedError, match="attn_mask"):
        scaled_dot_product_attention(q, q, q, attn_mask=q)
    with pytest.raises(NotImplementedError, match="dropout"):
        scaled_dot_product_attention(q, q, q, dropout_p=0.1)
    with pytest.raises(ValueError, match="enable_gqa"):
        scaled_dot_product_attention(q, k, k)
    with pytest.raises(cudnnfe.NotOfferedError, match="cumulative"):
        scaled_dot_product_attention(q, q, q, cumulative_seq_len_q=torch.zeros(2))


def test_opcheck_schema_fake_autograd_and_aot_dispatch():
    """torch.library.opcheck on both operators (CPU tensors): the fake implementations agree
    with the real ones, so torch.compile traces them (examples/python/sdpa_training.py)."""
    from cudnnfe.experimental.ops import sdpa  # noqa: F401  (registers the operators)

    gen = torch.Generator().manual_seed(3)
    q, k, v, dO = (torch.randn(1, 2, 8, 16, generator=gen).bfloat16() for _ in range(4))
    args = (0.25, True, 0, -1, -1, None, None)
    fwd = torch.library.opcheck(torch.ops.cudnnfe.sdpa.default,
                                (q.requires_grad_(), k.requires_grad_(), v.requires_grad_(),
                                 *args))
    o, stats = torch.ops.cudnnfe.sdpa(q.detach(), k.detach(), v.detach(), *args)
    bwd = torch.library.opcheck(torch.ops.cudnnfe.sdpa_bwd.default,
                                (dO, q.detach(), k.detach(), v.detach(), o, stats, *args, False))
    for result in (fwd, bwd):
        assert set(result.values()) == {"SUCCESS"}, result
