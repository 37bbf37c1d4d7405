"""Block-scale quantization on :class:`pygraph`: ``block_scale_quantize`` and
``block_scale_dequantize`` (MXFP8), with cudnn-frontend's arguments.

The C functions are ``cudnnfe_graph_add_block_scale_quantize`` /
``_dequantize``; ``docs/layout-ops.md`` ("Block scaling") has the exact rule.
cudnn-frontend gives dequantize's block as a list over the trailing dims
(``[1, 32]``: blocks of 32 along the last dim); the C ABI takes one blocked
axis, so a list must block exactly one dim.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

from . import _structs
from ._errors import NotOfferedError
from ._lib import ffi, lib
from ._tensor import Tensor
from ._util import DType, Operand, _cstr, _int, _ints

__all__ = ["QuantizeOps"]


def _axis_of_block_list(node: str, blocks: List[int], rank: int) -> Tuple[int, int]:
    """(axis, block size) for cudnn-frontend's per-trailing-dim block list."""
    if len(blocks) > rank:
        raise ValueError(f"{node}: block_size {blocks} has more entries than input's {rank} dims")
    blocked = [i for i, b in enumerate(blocks) if b != 1]
    if len(blocked) > 1:
        raise NotOfferedError(f"{node}: block_size {blocks} blocks {len(blocked)} dims; the "
                              "cudnnfe C ABI blocks one axis")
    if not blocked:
        return -1, 1
    return rank - len(blocks) + blocked[0], blocks[blocked[0]]


class QuantizeOps:
    """The block-scale methods of :class:`pygraph` (a mixin; see :mod:`cudnnfe._quantize`)."""

    def _block_options(self, node: str, block_size: int, axis: int,
                       transpose: bool = False) -> Tuple[Any, Any]:
        o = _structs.new("cudnnfe_block_scale_options_t")
        cname = _cstr(node, "name")
        o.name = cname
        o.block_size = _int(block_size, f"{node}: block_size")
        o.axis = _int(axis, f"{node}: axis")
        o.transpose = 1 if transpose else 0
        return o, cname

    def block_scale_quantize(self, input: Operand, block_size: int, axis: Optional[int] = None,
                             transpose: bool = False, compute_data_type: DType = None,
                             name: Optional[str] = None) -> List[Tensor]:
        """Quantize ``input`` in blocks of ``block_size`` along ``axis`` (default: the last dim);
        returns ``[y, scale]`` (FP8 values, FP8_E8M0 scales; set y's type with
        ``set_data_type``). ``transpose`` makes the blocked dim innermost in y and scale."""
        node = self._node_name("block_scale_quantize", name)
        o, cname = self._block_options(node, block_size, -1 if axis is None else axis, transpose)
        x = self._operand(input, node, "input")
        y, scale = ffi.new("int64_t *"), ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_block_scale_quantize(self._ptr, x, o, y, scale))
        return [self._added(node, int(y[0])), self._wrap(int(scale[0]), "virtual")]

    def block_scale_dequantize(self, input: Operand, descale: Operand,
                               block_size: Union[int, Sequence[int]],
                               is_negative_scale: bool = False, compute_data_type: DType = None,
                               name: Optional[str] = None) -> Tensor:
        """``y = input * descale`` per block; ``block_size`` is an int (blocks along the last
        dim) or cudnn-frontend's list over the trailing dims (``[1, 32]``, ``[32, 1]``)."""
        node = self._node_name("block_scale_dequantize", name)
        if is_negative_scale:
            raise NotOfferedError(f"{node}: is_negative_scale is not offered by the cudnnfe C ABI")
        x = self._operand(input, node, "input")
        s = self._operand(descale, node, "descale")
        if isinstance(block_size, int):
            axis, size = -1, block_size
        else:
            blocks = _ints(block_size, f"{node}: block_size")
            axis, size = _axis_of_block_list(node, blocks, len(self._wrap(x).get_dim()))
        o, cname = self._block_options(node, size, axis)
        y = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_block_scale_dequantize(self._ptr, x, s, o, y))
        return self._added(node, int(y[0]))
