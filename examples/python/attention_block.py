"""The attention block both examples train, and their shared helpers.

A tiny transformer-style self-attention block: q/k/v projections, causal multi-head attention,
an output projection and a residual. Attention is either cudnnfe's PyTorch operator
(``cudnnfe.experimental.ops.sdpa``, cudnn-frontend's ``cudnn.experimental.ops.sdpa``) or
``torch.nn.functional.scaled_dot_product_attention``; everything else is the same code, so
the two blocks differ only in the attention kernel. Not a model of anything: the sizes are
small enough for the CPU reference (``--device cpu``, for smoke tests).
"""
import argparse
import sys

import torch
import torch.nn.functional as F
from cudnnfe.experimental.ops import sdpa  # cudnn-frontend: cudnn.experimental.ops

# Relative tolerances, |got - want| / |want| (Frobenius norms): bf16 keeps 8 significant
# bits (relative rounding 2**-9 = 0.002) and the two attention kernels round in different
# places, so a loss agrees to about 1e-3 and a weight gradient (a sum over the batch of
# products of rounded values) to about 1e-2.
LOSS_RTOL = 1e-2
GRAD_RTOL = 5e-2

BATCH, SEQ, EMBED, HEADS = 4, 64, 128, 4


class AttentionBlock(torch.nn.Module):
    """x + out(attention(q(x), k(x), v(x))) on (batch, seq, embed) inputs."""

    def __init__(self, embed: int = EMBED, heads: int = HEADS, attention: str = "cudnnfe"):
        super().__init__()
        if attention not in ("cudnnfe", "torch"):
            raise ValueError(f"attention must be 'cudnnfe' or 'torch', not {attention!r}")
        self.heads, self.attention = heads, attention
        self.q, self.k, self.v, self.out = (torch.nn.Linear(embed, embed, bias=False)
                                            for _ in range(4))

    def _split(self, t: torch.Tensor) -> torch.Tensor:
        b, s, e = t.shape
        return t.view(b, s, self.heads, e // self.heads).transpose(1, 2)  # (B, H, S, D) view

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (self._split(proj(x)) for proj in (self.q, self.k, self.v))
        if self.attention == "cudnnfe":
            o = sdpa.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        b, h, s, d = o.shape
        return x + self.out(o.transpose(1, 2).reshape(b, s, h * d))


def make_pair(device: torch.device, seed: int = 0):
    """(cudnnfe block, torch block) with the same bf16 weights."""
    torch.manual_seed(seed)
    ours = AttentionBlock(attention="cudnnfe").to(device=device, dtype=torch.bfloat16)
    theirs = AttentionBlock(attention="torch").to(device=device, dtype=torch.bfloat16)
    theirs.load_state_dict(ours.state_dict())
    return ours, theirs


def batch(step: int, device: torch.device, size: int = BATCH):
    """Step ``step``'s (input, target), the same on every process."""
    gen = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(size, SEQ, EMBED, generator=gen)
    y = torch.randn(size, SEQ, EMBED, generator=gen)
    return (x.to(device=device, dtype=torch.bfloat16), y.to(device=device, dtype=torch.bfloat16))


def loss_fn(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.mse_loss(model(x).float(), y.float())


def rel_error(got: torch.Tensor, want: torch.Tensor) -> float:
    """Frobenius-norm relative error, computed in float64."""
    got, want = got.double(), want.double()
    return float((got - want).norm() / want.norm().clamp_min(1e-30))


def grad_errors(ours: torch.nn.Module, theirs: torch.nn.Module) -> dict:
    """{parameter name: relative error of its gradient}."""
    want = dict(theirs.named_parameters())
    return {name: rel_error(p.grad, want[name].grad) for name, p in ours.named_parameters()}


def common_parser(description: str) -> argparse.ArgumentParser:
    """The arguments both examples take."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--device", default="cuda",
                        help="cuda (default), or cpu: cudnnfe's CPU reference (slow; a smoke "
                             "test of the example itself)")
    parser.add_argument("--steps", type=int, default=5, help="training steps (default 5)")
    return parser


def skip_without_cuda(device: str) -> None:
    """Exits 0 with a visible SKIP line when CUDA is asked for but there is none."""
    if device.startswith("cuda") and not torch.cuda.is_available():
        print("SKIP: no CUDA GPU is available (torch.cuda.is_available() is False); "
              "nothing was checked")
        sys.exit(0)
