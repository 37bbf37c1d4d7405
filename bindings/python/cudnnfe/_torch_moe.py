"""MoE grouped matmul as a PyTorch custom operator (cudnn-frontend's
``cudnn.experimental.ops.moe_grouped_matmul``): ``moe_grouped_matmul(token, weight,
first_token_offset, token_index=None, token_ks=None, mode="none", top_k=1)``.

The operator ``cudnnfe::moe_grouped_matmul`` runs a cudnnfe graph (GPU for CUDA
tensors, the CPU reference for CPU tensors), built once per configuration
(shapes, strides, dtypes, device, mode, top_k) and kept in ``_cache``. It has a
fake implementation, so ``torch.compile`` traces it. There is no autograd: the
weight gradient is :meth:`pygraph.moe_grouped_matmul_bwd`. Importing this
module imports torch; ``cudnnfe`` itself never does.
"""
# No `from __future__ import annotations`: torch.library.custom_op reads the annotations.
import threading
from typing import Any, Dict, Optional, Tuple

import torch

import cudnnfe

__all__ = ["moe_grouped_matmul"]

_cache: Dict[Tuple[Any, ...], Tuple[Any, Dict[str, Any], int]] = {}
_lock = threading.Lock()
_handles: Dict[int, Any] = {}

_IO_TYPES = {torch.float16: cudnnfe.data_type.HALF, torch.bfloat16: cudnnfe.data_type.BFLOAT16,
             torch.float32: cudnnfe.data_type.FLOAT}
_MODES = {"none": cudnnfe.moe_grouped_matmul_mode.NONE,
          "gather": cudnnfe.moe_grouped_matmul_mode.GATHER,
          "scatter": cudnnfe.moe_grouped_matmul_mode.SCATTER}


def _io_type(t: torch.Tensor) -> Any:
    found = _IO_TYPES.get(t.dtype)
    if found is None:
        raise TypeError(f"cudnnfe moe_grouped_matmul: token must be float16, bfloat16 or "
                        f"float32, not {t.dtype}")
    return found


def _handle(device: torch.device) -> Any:
    index = device.index if device.index is not None else torch.cuda.current_device()
    with _lock:
        if index not in _handles:
            _handles[index] = cudnnfe.create_handle(index)
        return _handles[index]


def _layout(t: Optional[torch.Tensor]) -> Any:
    return None if t is None else (tuple(t.shape), tuple(t.stride()), t.dtype, str(t.device))


def _rows(token: torch.Tensor, token_index: Optional[torch.Tensor], mode: str) -> int:
    """Output rows: token_index's for GATHER, token's otherwise (cudnn-frontend's rule)."""
    return token_index.shape[1] if mode == "gather" and token_index is not None else token.shape[1]


def _graph(token, weight, offsets, token_index, token_ks, mode, top_k):
    io = _io_type(token)
    target = cudnnfe.target.GPU if token.is_cuda else cudnnfe.target.CPU_REFERENCE
    g = cudnnfe.pygraph(io_data_type=io, intermediate_data_type=cudnnfe.data_type.FLOAT,
                        compute_data_type=cudnnfe.data_type.FLOAT, name="moe_op", target=target)

    def add(name, t, dtype):
        if t is None:
            return None
        return g.tensor(name=name, dim=list(t.shape), stride=list(t.stride()), data_type=dtype)

    i32 = cudnnfe.data_type.INT32
    roles = {"token": add("token", token, io), "weight": add("weight", weight, io),
             "first_token_offset": add("first_token_offset", offsets, i32),
             "token_index": add("token_index", token_index, i32),
             "token_ks": add("token_ks", token_ks, i32)}
    out = g.moe_grouped_matmul(roles["token"], roles["weight"], roles["first_token_offset"],
                               token_index=roles["token_index"], token_ks=roles["token_ks"],
                               mode=_MODES[mode], compute_data_type=cudnnfe.data_type.FLOAT,
                               top_k=top_k, name="moe")
    rows, n = _rows(token, token_index, mode), weight.shape[2]
    out.set_output(True).set_data_type(io).set_dim([1, rows, n]).set_stride([rows * n, n, 1])
    roles["output"] = out
    g.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    return g, {k: v for k, v in roles.items() if v is not None}, g.get_workspace_size()


def _entry(key: Any, build: Any) -> Tuple[Any, Dict[str, Any], int]:
    with _lock:
        entry = _cache.get(key)
    if entry is None:
        entry = build()
        with _lock:
            entry = _cache.setdefault(key, entry)
    return entry


@torch.library.custom_op("cudnnfe::moe_grouped_matmul", mutates_args=())
def _moe(token: torch.Tensor, weight: torch.Tensor, first_token_offset: torch.Tensor,
         token_index: Optional[torch.Tensor] = None, token_ks: Optional[torch.Tensor] = None,
         mode: str = "none", top_k: int = 1) -> torch.Tensor:
    key = (_layout(token), _layout(weight), _layout(first_token_offset), _layout(token_index),
           _layout(token_ks), mode, top_k)
    g, roles, ws_size = _entry(key, lambda: _graph(token, weight, first_token_offset,
                                                   token_index, token_ks, mode, top_k))
    output = torch.empty(1, _rows(token, token_index, mode), weight.shape[2], dtype=token.dtype,
                         device=token.device)
    arrays = dict(token=token, weight=weight, first_token_offset=first_token_offset,
                  token_index=token_index, token_ks=token_ks, output=output)
    pack = {roles[name]: t for name, t in arrays.items() if name in roles}
    if not token.is_cuda:
        g.execute(pack, None)  # the CPU reference needs no workspace
        return output
    workspace = torch.empty(max(ws_size, 1), dtype=torch.uint8, device=token.device)
    g.execute(pack, workspace, handle=_handle(token.device),
              stream=torch.cuda.current_stream(token.device).cuda_stream)
    return output


@_moe.register_fake
def _moe_fake(token, weight, first_token_offset, token_index=None, token_ks=None, mode="none",
              top_k=1):
    return token.new_empty(1, _rows(token, token_index, mode), weight.shape[2])


def moe_grouped_matmul(token: torch.Tensor, weight: torch.Tensor,
                       first_token_offset: torch.Tensor,
                       token_index: Optional[torch.Tensor] = None,
                       token_ks: Optional[torch.Tensor] = None, mode: str = "none",
                       top_k: int = 1) -> torch.Tensor:
    """``output[1, R, N]`` of cuDNN's MoE grouped matmul (docs/moe.md): token ``[1, T, K]``,
    weight ``[E, K, N]``, first_token_offset INT32 ``[G, 1, 1]`` starts or ``[G + 1, 1, 1]``
    boundaries; ``mode`` "none", "gather" (needs token_index) or "scatter" (needs token_index
    and token_ks, and top_k)."""
    if mode not in _MODES:
        raise ValueError(f"Invalid mode '{mode}'. Must be one of: none, gather, scatter")
    if mode == "scatter" and (token_index is None or token_ks is None):
        raise ValueError("SCATTER mode requires both token_index and token_ks")
    if mode == "gather" and token_index is None:
        raise ValueError("GATHER mode requires token_index")
    return _moe(token, weight, first_token_offset, token_index, token_ks, mode, int(top_k))
