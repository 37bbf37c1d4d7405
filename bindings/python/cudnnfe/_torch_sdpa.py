"""Attention as a PyTorch custom operator with autograd (cudnn-frontend's
``cudnn.experimental.ops.sdpa``): ``scaled_dot_product_attention(q, k, v, ...)``.

The operators ``cudnnfe::sdpa`` and ``cudnnfe::sdpa_bwd`` run a cudnnfe
attention graph on the GPU (CPU tensors: on the CPU reference), built once per configuration (shapes, strides,
dtype, device, scale, masks) and kept in ``_fprop_cache`` / ``_bprop_cache``.
Both have fake implementations, so ``torch.compile(fullgraph=True)`` traces
them, and the forward registers the backward with ``register_autograd``.
Importing this module imports torch; ``cudnnfe`` itself never does.
Not offered (NotImplementedError or NotOfferedError naming it): ``attn_mask``,
dropout, ragged (cumulative) sequence offsets.
"""
# No `from __future__ import annotations`: torch.library.custom_op reads the annotations.
import math
import threading
from typing import Any, Dict, Optional, Tuple

import torch

import cudnnfe
from cudnnfe._errors import NotOfferedError

__all__ = ["scaled_dot_product_attention"]

# Built graphs by configuration: (graph, {role: Tensor}, workspace size).
_fprop_cache: Dict[Tuple[Any, ...], Tuple[Any, Dict[str, Any], int]] = {}
_bprop_cache: Dict[Tuple[Any, ...], Tuple[Any, Dict[str, Any], int]] = {}
_lock = threading.Lock()
_handles: Dict[int, Any] = {}

_IO_TYPES = {torch.float16: cudnnfe.data_type.HALF, torch.bfloat16: cudnnfe.data_type.BFLOAT16}


def _io_type(t: torch.Tensor) -> Any:
    found = _IO_TYPES.get(t.dtype)
    if found is None:
        raise TypeError(f"cudnnfe sdpa: q, k and v must be float16 or bfloat16, not {t.dtype}")
    return found


def _handle(device: torch.device) -> Any:
    index = device.index if device.index is not None else torch.cuda.current_device()
    with _lock:
        if index not in _handles:
            _handles[index] = cudnnfe.create_handle(index)
        return _handles[index]


def _layout(t: Optional[torch.Tensor]) -> Any:
    return None if t is None else (tuple(t.shape), tuple(t.stride()), t.dtype, str(t.device))


def _packed(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def _input(g: Any, name: str, t: torch.Tensor, dtype: Any) -> Any:
    return g.tensor(name=name, dim=list(t.shape), stride=list(t.stride()), data_type=dtype)


def _mask_options(is_causal: bool, diagonal_alignment: int, left_bound: int, right_bound: int,
                  seq_len_q: Any, seq_len_kv: Any) -> Dict[str, Any]:
    """cudnn-frontend's mapping: a causal mask is a diagonal band with right bound 0."""
    rb = right_bound if right_bound >= 0 else (0 if is_causal else None)
    return dict(use_padding_mask=seq_len_q is not None or seq_len_kv is not None,
                diagonal_alignment=(cudnnfe.diagonal_alignment.BOTTOM_RIGHT if diagonal_alignment
                                    else cudnnfe.diagonal_alignment.TOP_LEFT),
                diagonal_band_left_bound=left_bound if left_bound >= 0 else None,
                diagonal_band_right_bound=rb)


def _lengths(g: Any, roles: Dict[str, Any], seq_len_q: Any, seq_len_kv: Any) -> Dict[str, Any]:
    out = {}
    for name, t in (("seq_len_q", seq_len_q), ("seq_len_kv", seq_len_kv)):
        if t is not None:
            out[name] = roles[name] = _input(g, name, t, cudnnfe.data_type.INT32)
    return out


def _target(t: torch.Tensor) -> Any:
    """CUDA tensors run on the GPU; CPU tensors on the CPU reference (slow, exact)."""
    return cudnnfe.target.GPU if t.is_cuda else cudnnfe.target.CPU_REFERENCE


def _forward_graph(q, k, v, attn_scale, masks, seq_len_q, seq_len_kv):
    io = _io_type(q)
    g = cudnnfe.pygraph(io_data_type=io, intermediate_data_type=cudnnfe.data_type.FLOAT,
                        compute_data_type=cudnnfe.data_type.FLOAT, name="sdpa_op",
                        target=_target(q))
    roles = {n: _input(g, n, t, io) for n, t in (("q", q), ("k", k), ("v", v))}
    lengths = _lengths(g, roles, seq_len_q, seq_len_kv)
    o, stats = g.sdpa(q=roles["q"], k=roles["k"], v=roles["v"], attn_scale=attn_scale,
                      generate_stats=True, compute_data_type=cudnnfe.data_type.FLOAT,
                      name="sdpa", **lengths, **masks)
    o_shape = (q.shape[0], q.shape[1], q.shape[2], v.shape[3])
    roles["o"] = o.set_output(True).set_dim(list(o_shape)).set_stride(list(_packed(o_shape)))
    o.set_data_type(io)
    stats_shape = (q.shape[0], q.shape[1], q.shape[2], 1)  # allocated contiguous
    roles["stats"] = stats.set_output(True).set_data_type(cudnnfe.data_type.FLOAT)
    stats.set_dim(list(stats_shape)).set_stride(list(_packed(stats_shape)))
    g.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    return g, roles, g.get_workspace_size()


def _backward_graph(dO, q, k, v, o, stats, attn_scale, masks, seq_len_q, seq_len_kv,
                    deterministic):
    io = _io_type(q)
    g = cudnnfe.pygraph(io_data_type=io, intermediate_data_type=cudnnfe.data_type.FLOAT,
                        compute_data_type=cudnnfe.data_type.FLOAT, name="sdpa_bwd_op",
                        target=_target(q))
    roles = {n: _input(g, n, t, io) for n, t in
             (("q", q), ("k", k), ("v", v), ("o", o), ("dO", dO))}
    roles["stats"] = _input(g, "stats", stats, cudnnfe.data_type.FLOAT)
    lengths = _lengths(g, roles, seq_len_q, seq_len_kv)
    grads = g.sdpa_backward(q=roles["q"], k=roles["k"], v=roles["v"], o=roles["o"],
                            dO=roles["dO"], stats=roles["stats"], attn_scale=attn_scale,
                            use_deterministic_algorithm=deterministic,
                            compute_data_type=cudnnfe.data_type.FLOAT, name="sdpa_bwd",
                            **lengths, **masks)
    for name, grad, like in zip(("dq", "dk", "dv"), grads[:3], (q, k, v)):
        shape = tuple(like.shape)
        grad.set_output(True).set_dim(list(shape)).set_stride(list(_packed(shape)))
        grad.set_data_type(io)
        roles[name] = grad
    g.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    return g, roles, g.get_workspace_size()


def _cached(cache: Dict[Any, Any], key: Any, build: Any) -> Tuple[Any, Dict[str, Any], int]:
    with _lock:
        entry = cache.get(key)
    if entry is None:
        entry = build()
        with _lock:
            entry = cache.setdefault(key, entry)
    return entry


def _run(entry: Tuple[Any, Dict[str, Any], int], arrays: Dict[str, torch.Tensor],
         device: torch.device) -> None:
    g, roles, ws_size = entry
    pack = {roles[name]: t for name, t in arrays.items() if name in roles}
    if device.type != "cuda":
        g.execute(pack, None)  # the CPU reference needs no workspace
        return
    workspace = torch.empty(max(ws_size, 1), dtype=torch.uint8, device=device)
    g.execute(pack, workspace, handle=_handle(device),
              stream=torch.cuda.current_stream(device).cuda_stream)


@torch.library.custom_op("cudnnfe::sdpa", mutates_args=())
def _sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, attn_scale: float,
          is_causal: bool = False, diagonal_alignment: int = 0, left_bound: int = -1,
          right_bound: int = -1, seq_len_q: Optional[torch.Tensor] = None,
          seq_len_kv: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    masks = _mask_options(is_causal, diagonal_alignment, left_bound, right_bound, seq_len_q,
                          seq_len_kv)
    key = ("fwd", _layout(q), _layout(k), _layout(v), float(attn_scale), is_causal,
           diagonal_alignment, left_bound, right_bound, _layout(seq_len_q), _layout(seq_len_kv))
    entry = _cached(_fprop_cache, key, lambda: _forward_graph(
        q, k, v, attn_scale, masks, seq_len_q, seq_len_kv))
    o_shape = (q.shape[0], q.shape[1], q.shape[2], v.shape[3])
    o = torch.empty(o_shape, dtype=q.dtype, device=q.device)
    stats = torch.empty((q.shape[0], q.shape[1], q.shape[2], 1), dtype=torch.float32,
                        device=q.device)
    _run(entry, dict(q=q, k=k, v=v, o=o, stats=stats, seq_len_q=seq_len_q,
                     seq_len_kv=seq_len_kv), q.device)
    return o, stats


@_sdpa.register_fake
def _sdpa_fake(q, k, v, attn_scale, is_causal=False, diagonal_alignment=0, left_bound=-1,
               right_bound=-1, seq_len_q=None, seq_len_kv=None):
    o = q.new_empty((q.shape[0], q.shape[1], q.shape[2], v.shape[3]))
    return o, q.new_empty((q.shape[0], q.shape[1], q.shape[2], 1), dtype=torch.float32)


@torch.library.custom_op("cudnnfe::sdpa_bwd", mutates_args=())
def _sdpa_bwd(dO: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              o: torch.Tensor, stats: torch.Tensor, attn_scale: float, is_causal: bool = False,
              diagonal_alignment: int = 0, left_bound: int = -1, right_bound: int = -1,
              seq_len_q: Optional[torch.Tensor] = None, seq_len_kv: Optional[torch.Tensor] = None,
              is_deterministic: bool = False
              ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    dO = dO.contiguous()  # autograd's dO may be a broadcast view (stride 0)
    masks = _mask_options(is_causal, diagonal_alignment, left_bound, right_bound, seq_len_q,
                          seq_len_kv)
    key = ("bwd", _layout(dO), _layout(q), _layout(k), _layout(v), _layout(o), _layout(stats),
           float(attn_scale), is_causal, diagonal_alignment, left_bound, right_bound,
           _layout(seq_len_q), _layout(seq_len_kv), is_deterministic)
    entry = _cached(_bprop_cache, key, lambda: _backward_graph(
        dO, q, k, v, o, stats, attn_scale, masks, seq_len_q, seq_len_kv, is_deterministic))
    dq, dk, dv = (torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in (q, k, v))
    _run(entry, dict(dO=dO, q=q, k=k, v=v, o=o, stats=stats, dq=dq, dk=dk, dv=dv,
                     seq_len_q=seq_len_q, seq_len_kv=seq_len_kv), q.device)
    return dq, dk, dv


@_sdpa_bwd.register_fake
def _sdpa_bwd_fake(dO, q, k, v, o, stats, attn_scale, is_causal=False, diagonal_alignment=0,
                   left_bound=-1, right_bound=-1, seq_len_q=None, seq_len_kv=None,
                   is_deterministic=False):
    return (q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape))


def _setup_context(ctx: Any, inputs: Tuple[Any, ...], output: Any) -> None:
    q, k, v, attn_scale, is_causal, alignment, left, right, seq_len_q, seq_len_kv = inputs
    o, stats = output
    ctx.save_for_backward(q, k, v, o, stats, seq_len_q, seq_len_kv)
    ctx.options = (attn_scale, is_causal, alignment, left, right)


def _backward(ctx: Any, dO: torch.Tensor, dstats: Any) -> Tuple[Any, ...]:
    q, k, v, o, stats, seq_len_q, seq_len_kv = ctx.saved_tensors
    attn_scale, is_causal, alignment, left, right = ctx.options
    dq, dk, dv = torch.ops.cudnnfe.sdpa_bwd(dO, q, k, v, o, stats, attn_scale, is_causal,
                                            alignment, left, right, seq_len_q, seq_len_kv)
    return dq, dk, dv, None, None, None, None, None, None, None


_sdpa.register_autograd(_backward, setup_context=_setup_context)


def scaled_dot_product_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                                 attn_mask: Optional[torch.Tensor] = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: Optional[float] = None,
                                 enable_gqa: bool = False, *, diagonal_alignment: int = 0,
                                 left_bound: int = -1, right_bound: int = -1,
                                 seq_len_q: Optional[torch.Tensor] = None,
                                 seq_len_kv: Optional[torch.Tensor] = None,
                                 cumulative_seq_len_q: Optional[torch.Tensor] = None,
                                 cumulative_seq_len_kv: Optional[torch.Tensor] = None
                                 ) -> torch.Tensor:
    """Attention like ``torch.nn.functional.scaled_dot_product_attention`` on BHSD tensors
    ``(batch, heads, seq, dim)``, differentiable (cudnn-frontend's signature).

    ``is_causal`` masks above the diagonal (``diagonal_alignment`` 0: top-left,
    1: bottom-right); ``left_bound`` / ``right_bound`` (>= 0) give a sliding
    window; ``seq_len_q`` / ``seq_len_kv`` (``(B, 1, 1, 1)`` INT32) give actual
    sequence lengths. ``scale`` defaults to ``1/sqrt(D)``; ``enable_gqa``
    allows fewer key/value heads than query heads.
    """
    if attn_mask is not None:
        raise NotImplementedError("attn_mask is not supported by cudnnfe's sdpa operator")
    if dropout_p != 0.0:
        raise NotImplementedError("dropout is not supported by cudnnfe's sdpa operator")
    if cumulative_seq_len_q is not None or cumulative_seq_len_kv is not None:
        raise NotOfferedError("cudnnfe sdpa operator: cumulative_seq_len_q / _kv (ragged, "
                              "packed sequences) are not offered by this operator")
    if not enable_gqa and query.shape[1] != key.shape[1]:
        raise ValueError(f"query has {query.shape[1]} heads but key has {key.shape[1]}; set "
                         "enable_gqa=True for grouped-query attention")
    attn_scale = scale if scale is not None else 1.0 / math.sqrt(query.shape[-1])
    o, _ = torch.ops.cudnnfe.sdpa(query, key, value, attn_scale, is_causal, diagonal_alignment,
                                  left_bound, right_bound, seq_len_q, seq_len_kv)
    return o
