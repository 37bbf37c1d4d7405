"""Train a small attention block with cudnnfe's attention operator, checked against PyTorch's.

Shows ``cudnnfe.experimental.ops.sdpa`` (cudnn-frontend's ``cudnn.experimental.ops.sdpa``)
as a differentiable PyTorch operator inside an ordinary training step:

1. Two copies of a bf16 attention block (q/k/v/out projections, causal attention; see
   ``attention_block.py``), one attending with cudnnfe's operator and one with
   ``torch.nn.functional.scaled_dot_product_attention``, start from the same weights and
   train for ``--steps`` AdamW steps, fitting one batch. Every step compares the losses
   (relative tolerance 1e-2) and every parameter's gradient (relative Frobenius error 5e-2),
   and the loss must fall from the first step to the last.
2. ``torch.compile(fullgraph=True)`` of the cudnnfe block (the operator has fake
   implementations, so it traces without a graph break), compared with the same block run
   eagerly, forward and backward, to the same tolerances.

Run: ``python examples/python/sdpa_training.py`` (a CUDA GPU; without one it prints SKIP and
exits 0). Prints one PASS or FAIL line with the numbers; exits 1 on FAIL.
``--device cpu`` runs the same on cudnnfe's CPU reference, slowly: a smoke test of the
example itself (use ``--compile-backend aot_eager`` there, which needs no compiler).
"""
import sys

import torch

from attention_block import (GRAD_RTOL, LOSS_RTOL, AttentionBlock, batch, common_parser,
                             grad_errors, loss_fn, make_pair, skip_without_cuda)


def train_and_compare(device: torch.device, steps: int) -> dict:
    """Trains both blocks; the worst loss and gradient errors over the steps."""
    ours, theirs = make_pair(device)
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-3) for m in (ours, theirs)]
    worst = {"loss": 0.0, "grad": 0.0, "grad_param": "", "first_loss": None, "last_loss": None}
    x, y = batch(0, device)  # one batch, fitted step after step: the loss must fall
    for step in range(steps):
        losses = []
        for model, opt in zip((ours, theirs), opts):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model, x, y)
            loss.backward()
            losses.append(loss.item())
        errors = grad_errors(ours, theirs)
        name = max(errors, key=errors.get)
        loss_err = abs(losses[0] - losses[1]) / abs(losses[1])
        print(f"step {step}: loss cudnnfe {losses[0]:.6f} torch {losses[1]:.6f} "
              f"(rel {loss_err:.2e}); worst gradient rel error {errors[name]:.2e} ({name})")
        worst["loss"] = max(worst["loss"], loss_err)
        if errors[name] >= worst["grad"]:
            worst["grad"], worst["grad_param"] = errors[name], name
        worst["first_loss"] = worst["first_loss"] if step else losses[0]
        worst["last_loss"] = losses[0]
        for opt in opts:
            opt.step()
    return worst


def compile_and_compare(device: torch.device, backend: str) -> dict:
    """torch.compile(fullgraph=True) of the cudnnfe block against the same block run eagerly."""
    torch.manual_seed(1)
    eager = AttentionBlock(attention="cudnnfe").to(device=device, dtype=torch.bfloat16)
    twin = AttentionBlock(attention="cudnnfe").to(device=device, dtype=torch.bfloat16)
    twin.load_state_dict(eager.state_dict())
    compiled = torch.compile(twin, fullgraph=True, backend=backend)
    x, y = batch(100, device)
    losses = []
    for model in (compiled, eager):
        loss = loss_fn(model, x, y)
        loss.backward()
        losses.append(loss.item())
    errors = grad_errors(twin, eager)
    name = max(errors, key=errors.get)
    loss_err = abs(losses[0] - losses[1]) / abs(losses[1])
    print(f"torch.compile(backend={backend!r}, fullgraph=True): loss compiled {losses[0]:.6f} "
          f"eager {losses[1]:.6f} (rel {loss_err:.2e}); worst gradient rel error "
          f"{errors[name]:.2e} ({name})")
    return {"loss": loss_err, "grad": errors[name]}


def main(argv=None) -> int:
    parser = common_parser(__doc__.splitlines()[0])
    parser.add_argument("--compile-backend", default="inductor",
                        help="torch.compile backend (default inductor; aot_eager needs no "
                             "compiler)")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile part")
    args = parser.parse_args(argv)
    skip_without_cuda(args.device)
    device = torch.device(args.device)
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU reference"
    print(f"sdpa_training on {where}, torch {torch.__version__}")
    trained = train_and_compare(device, args.steps)
    compiled = None if args.no_compile else compile_and_compare(device, args.compile_backend)
    ok = (trained["loss"] <= LOSS_RTOL and trained["grad"] <= GRAD_RTOL
          and (args.steps < 2 or trained["last_loss"] < trained["first_loss"]))
    summary = (f"{args.steps} AdamW steps vs torch SDPA: loss {trained['first_loss']:.4f} -> "
               f"{trained['last_loss']:.4f}, worst loss rel error {trained['loss']:.2e} "
               f"(tol {LOSS_RTOL:g}), worst gradient rel error {trained['grad']:.2e} "
               f"({trained['grad_param']}, tol {GRAD_RTOL:g})")
    if compiled is not None:
        ok = ok and compiled["loss"] <= LOSS_RTOL and compiled["grad"] <= GRAD_RTOL
        summary += (f"; torch.compile vs eager: loss rel error {compiled['loss']:.2e}, "
                    f"gradient rel error {compiled['grad']:.2e}")
    else:
        summary += "; torch.compile not run (--no-compile)"
    print(f"{'PASS' if ok else 'FAIL'}: sdpa_training: {summary}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
