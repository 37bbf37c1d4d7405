"""Mixture-of-experts grouped matmul on :class:`pygraph`: ``moe_grouped_matmul`` and
``moe_grouped_matmul_bwd``, with cudnn-frontend's arguments.

The C functions are ``cudnnfe_graph_add_moe_grouped_matmul`` / ``_backward``;
``docs/moe.md`` has the exact rule (groups, routing modes, what cuDNN runs).
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

from . import _structs
from ._enums import data_type, moe_grouped_matmul_mode
from ._lib import ffi, lib
from ._tensor import Tensor
from ._util import DType, Operand, _cstr, _dtype, _enum_value, _int

__all__ = ["MoeOps"]


class MoeOps:
    """The MoE methods of :class:`pygraph` (a mixin; see :mod:`cudnnfe._moe`)."""

    def _moe_options(self, node: str, mode: Any, compute_data_type: DType,
                     top_k: int) -> Tuple[Any, Any]:
        o = _structs.new("cudnnfe_moe_grouped_matmul_options_t")
        cname = _cstr(node, "name")
        o.name = cname
        m = _enum_value(moe_grouped_matmul_mode, mode, f"{node}: mode")
        o.mode = int(m)
        # cudnn-frontend's top_k defaults to 0 and is read by SCATTER only; the C
        # option is at least 1, so an unread 0 becomes the C default.
        k = _int(top_k, f"{node}: top_k")
        o.top_k = 1 if k == 0 and m != moe_grouped_matmul_mode.SCATTER else k
        o.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        return o, cname

    def moe_grouped_matmul(self, token: Operand, weight: Operand, first_token_offset: Operand,
                           token_index: Optional[Operand] = None,
                           token_ks: Optional[Operand] = None,
                           mode: Any = moe_grouped_matmul_mode.NONE,
                           compute_data_type: DType = data_type.FLOAT, top_k: int = 0,
                           name: Optional[str] = None) -> Tensor:
        """``output[1, R, N]``: each expert group's routed rows of ``token[1, T, K]`` times
        ``weight[g % E]`` (``[E, K, N]``). ``mode`` NONE, GATHER (rows read through
        ``token_index``) or SCATTER (results written to ``token_index * top_k + token_ks``)."""
        node = self._node_name("moe_grouped_matmul", name)
        o, cname = self._moe_options(node, mode, compute_data_type, top_k)
        t = self._operand(token, node, "token")
        w = self._operand(weight, node, "weight")
        f = self._operand(first_token_offset, node, "first_token_offset")
        x = self._operand(token_index, node, "token_index", optional=True)
        k = self._operand(token_ks, node, "token_ks", optional=True)
        out = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_moe_grouped_matmul(self._ptr, t, w, f, x, k, o, out))
        return self._added(node, int(out[0]))

    def moe_grouped_matmul_bwd(self, doutput: Operand, token: Operand,
                               first_token_offset: Operand,
                               compute_data_type: DType = data_type.FLOAT,
                               name: Optional[str] = None) -> Tensor:
        """``dweight[E, K, N]`` (column-major in K and N): per expert, the sum over its groups
        of ``token[rows]ᵀ @ doutput[rows]``. E is ``first_token_offset``'s dim 0 unless
        dweight's dims are set."""
        node = self._node_name("moe_grouped_matmul_bwd", name)
        o, cname = self._moe_options(node, moe_grouped_matmul_mode.NONE, compute_data_type, 1)
        d = self._operand(doutput, node, "doutput")
        t = self._operand(token, node, "token")
        f = self._operand(first_token_offset, node, "first_token_offset")
        out = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_moe_grouped_matmul_backward(self._ptr, d, t, f, o, out))
        return self._added(node, int(out[0]))
