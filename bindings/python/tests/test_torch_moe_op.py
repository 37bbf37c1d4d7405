"""cudnnfe.experimental.ops.moe_grouped_matmul, the PyTorch custom operator: on CPU tensors
(the CPU reference) against the loop of cudnn-frontend's test_moe_grouped_matmul_op.py, with
its layouts (weight [E, N, K] transposed to [E, K, N]). Skipped where torch is not installed
(the GPU side runs cudnn-frontend's own test)."""
import pytest

torch = pytest.importorskip("torch", reason="the moe_grouped_matmul operator needs torch")


def _reference(token, weight, offsets, experts):
    _, m, _ = token.shape
    out = torch.zeros(1, m, weight.shape[2], dtype=torch.float64)
    for e in range(experts):
        start = int(offsets[e, 0, 0])
        end = int(offsets[e + 1, 0, 0]) if e + 1 < experts else m
        out[0, start:end] = token[0, start:end].double() @ weight[e].double()
    return out


def test_none_mode_on_the_cpu_reference():
    from cudnnfe.experimental.ops import moe_grouped_matmul

    gen = torch.Generator().manual_seed(42)
    experts, per, k, n = 4, 8, 16, 12
    token = torch.randn(1, experts * per, k, generator=gen).half()
    weight = torch.randn(experts, n, k, generator=gen).half().transpose(1, 2)
    offsets = (torch.arange(experts, dtype=torch.int32) * per).reshape(-1, 1, 1)
    got = moe_grouped_matmul(token, weight, offsets, mode="none", top_k=1)
    assert got.shape == (1, experts * per, n) and got.dtype == torch.float16
    torch.testing.assert_close(got.double(), _reference(token, weight, offsets, experts),
                               atol=2e-2, rtol=2e-2)


def test_modes_are_checked_before_building():
    from cudnnfe.experimental.ops import moe_grouped_matmul

    t = torch.zeros(1, 4, 2)
    with pytest.raises(ValueError, match="GATHER mode requires token_index"):
        moe_grouped_matmul(t, torch.zeros(1, 2, 3), torch.zeros(1, 1, 1, dtype=torch.int32),
                           mode="gather")
    with pytest.raises(ValueError, match="Invalid mode"):
        moe_grouped_matmul(t, torch.zeros(1, 2, 3), torch.zeros(1, 1, 1, dtype=torch.int32),
                           mode="combine")
