"""Data-parallel training (torch.distributed, DDP) of a block that attends with cudnnfe's operator.

One process per GPU (``torchrun``, NCCL) wraps the bf16 attention block of
``attention_block.py`` (attention: ``cudnnfe.experimental.ops.sdpa``) in
``DistributedDataParallel`` and trains it for ``--steps`` AdamW steps, each rank on its
shard of the same global batch. Every step checks:

1. all-reduced gradients are identical on every rank (gathered, compared bit for bit:
   an all-reduce leaves every rank the same bytes), and so are the parameters after the step;
2. the global loss (the mean of the ranks' losses) matches a single-process reference -- the
   same block, same weights, trained without DDP on the whole global batch in each rank's
   process -- to a relative 1e-2, and the DDP gradients match the reference's to a relative
   Frobenius error of 5e-2 (bf16; the batch is summed in a different order).

Two GPUs:  ``torchrun --standalone --nproc_per_node=2 examples/python/sdpa_ddp.py``
One GPU:   ``torchrun --standalone --nproc_per_node=1 examples/python/sdpa_ddp.py``
           (or ``python examples/python/sdpa_ddp.py``: a world of one process; the
           all-reduce is then trivial, and the line says so).
Without a CUDA GPU it prints SKIP and exits 0. Every rank prints its PASS or FAIL line with the
numbers; a rank exits 1 on FAIL. ``--device cpu`` runs on cudnnfe's CPU reference over gloo
(a smoke test of the example: ``torchrun --standalone --nproc_per_node=2 ... --device cpu``).
"""
import os
import socket
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from attention_block import (BATCH, GRAD_RTOL, LOSS_RTOL, AttentionBlock, batch,
                             common_parser, loss_fn, rel_error, skip_without_cuda)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def init_distributed(device_kind: str) -> torch.device:
    """Joins torchrun's group, or makes a world of one when started without torchrun."""
    if "RANK" not in os.environ:
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=str(_free_port()))
    local_rank = int(os.environ["LOCAL_RANK"])
    if device_kind.startswith("cuda"):
        if local_rank >= torch.cuda.device_count():
            sys.exit(f"FAIL: rank {os.environ['RANK']} has local rank {local_rank} but only "
                     f"{torch.cuda.device_count()} GPU(s) are visible: use "
                     f"--nproc_per_node={torch.cuda.device_count()}")
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        try:
            dist.init_process_group("nccl", device_id=device)
        except TypeError:  # torch before 2.3 has no device_id
            dist.init_process_group("nccl")
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo")
    return device


def flat_grads(model: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.grad.reshape(-1) for p in model.parameters()])


def flat_params(model: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def max_diff_across_ranks(t: torch.Tensor) -> float:
    """The largest |t_rank - t_rank0| over all ranks (0.0: identical everywhere)."""
    gathered = [torch.empty_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, t.contiguous())
    return max(float((g.float() - gathered[0].float()).abs().max()) for g in gathered)


def make_models(device: torch.device):
    """(DDP-wrapped block, reference block): the same weights on every rank."""
    torch.manual_seed(0)  # every rank builds the same weights; DDP also broadcasts rank 0's
    local = AttentionBlock(attention="cudnnfe").to(device=device, dtype=torch.bfloat16)
    reference = AttentionBlock(attention="cudnnfe").to(device=device, dtype=torch.bfloat16)
    reference.load_state_dict(local.state_dict())
    ddp = DistributedDataParallel(local, device_ids=[device.index] if device.type == "cuda"
                                  else None)
    return ddp, reference


def train_step(step, ddp, reference, opts, device):
    """One step of both; (global DDP loss, reference loss, grad diff across ranks,
    DDP-vs-reference gradient error, parameter diff across ranks after the step)."""
    rank, world = dist.get_rank(), dist.get_world_size()
    x, y = batch(step, device, size=BATCH * world)  # the global batch, the same on every rank
    shard = slice(rank * BATCH, (rank + 1) * BATCH)
    for opt in opts:
        opt.zero_grad(set_to_none=True)
    loss = loss_fn(ddp, x[shard], y[shard])
    loss.backward()  # DDP all-reduces (averages) the gradients here
    ref_loss = loss_fn(reference, x, y)
    ref_loss.backward()
    global_loss = loss.detach().clone()
    dist.all_reduce(global_loss)
    grads = flat_grads(ddp.module)
    rank_diff = max_diff_across_ranks(grads)
    grad_err = rel_error(grads, flat_grads(reference))
    for opt in opts:
        opt.step()
    param_diff = max_diff_across_ranks(flat_params(ddp.module))
    return (float(global_loss) / world, float(ref_loss.detach()), rank_diff, grad_err,
            param_diff)


def report(worst: dict, steps: int, device: torch.device) -> bool:
    """Prints every rank's PASS or FAIL line, rank by rank; whether this rank passed."""
    rank, world = dist.get_rank(), dist.get_world_size()
    ok = (worst["loss"] <= LOSS_RTOL and worst["grad"] <= GRAD_RTOL and worst["rank_grad"] == 0
          and worst["rank_param"] == 0)
    where = (torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU reference")
    world_note = ("" if world > 1 else
                  " (a world of 1 process: the all-reduce is trivial; run with 2 GPUs to "
                  "exercise it)")
    line = (f"{'PASS' if ok else 'FAIL'}: sdpa_ddp rank {rank}/{world} on {where}{world_note}: "
            f"{steps} steps; gradients across ranks max difference {worst['rank_grad']:g}, "
            f"parameters {worst['rank_param']:g} (must be 0); loss vs single-process reference "
            f"worst rel error {worst['loss']:.2e} (tol {LOSS_RTOL:g}); gradients worst rel "
            f"error {worst['grad']:.2e} (tol {GRAD_RTOL:g})")
    for turn in range(world):  # one rank at a time, so that the lines do not interleave
        if turn == rank:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        dist.barrier()
    return ok


def main(argv=None) -> int:
    args = common_parser(__doc__.splitlines()[0]).parse_args(argv)
    skip_without_cuda(args.device)
    device = init_distributed(args.device)
    rank = dist.get_rank()
    ddp, reference = make_models(device)
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-3) for m in (ddp, reference)]
    worst = {"loss": 0.0, "grad": 0.0, "rank_grad": 0.0, "rank_param": 0.0}
    for step in range(args.steps):
        loss, ref_loss, rank_diff, grad_err, param_diff = train_step(step, ddp, reference, opts,
                                                                     device)
        loss_err = abs(loss - ref_loss) / abs(ref_loss)
        if rank == 0:
            print(f"step {step}: global loss {loss:.6f} reference {ref_loss:.6f} "
                  f"(rel {loss_err:.2e}); gradient rel error vs reference {grad_err:.2e}; "
                  f"max gradient difference across ranks {rank_diff:g}")
        for key, value in (("loss", loss_err), ("grad", grad_err), ("rank_grad", rank_diff),
                           ("rank_param", param_diff)):
            worst[key] = max(worst[key], value)
    ok = report(worst, args.steps, device)
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
