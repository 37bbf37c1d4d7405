"""cudnn-frontend's ``Tensor.set_ragged_offset`` on attention tensors, mapped onto the C ABI's
``ragged_offset_*`` options and ``cudnnfe_graph_set_ragged_offset`` (``docs/attention.md``,
ragged layout).

cudnn-frontend attaches offsets to tensors, outputs included, at any time before the graph is
validated. Offsets set on an operand before its op is added are passed in the op's options
(q, k, v, o and the page tables); offsets set on a tensor that an attention op already reads
or writes go through ``cudnnfe_graph_set_ragged_offset``, which rewrites that op's option. So
each tensor has its own offsets or none: sdpa's O and stats are padded unless given their own. The one
limit is the backward's: the C ABI gives dQ, dK, dV and dO the offsets of q, k, v and o, so a
gradient of a ragged tensor must be given those very offsets (as cudnn-frontend code does)
and any other use raises :class:`NotOfferedError` naming the tensor, never a silent change of
layout. Offsets on a tensor that no attention op uses are refused when the graph is validated.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, Optional

from ._errors import NotOfferedError
from ._lib import lib

if TYPE_CHECKING:  # pragma: no cover
    from ._graph import pygraph
    from ._tensor import Tensor

__all__ = ["offset_of", "mark_read", "take_input_offsets", "attach", "expect_output_offset",
           "on_set", "check"]


def offset_of(value: Any) -> Optional["Tensor"]:
    """The ragged offsets set on ``value`` (None for no offsets, or not a Tensor)."""
    from ._tensor import Tensor

    return value._ragged_offset if isinstance(value, Tensor) else None


def mark_read(g: "pygraph", value: Any) -> None:
    """An op read ``value``'s offsets (through another operand's option field)."""
    if offset_of(value) is not None:
        g._ragged_taken.add(value)


def take_input_offsets(g: "pygraph", node: str, opts: Any,
                       operands: Dict[str, Any]) -> Dict[str, Optional["Tensor"]]:
    """Fill ``opts.ragged_offset_<role>`` from the operands' offsets; returns them by role."""
    fields = dict(q="ragged_offset_q", k="ragged_offset_k", v="ragged_offset_v",
                  o="ragged_offset_o", stats="ragged_offset_stats",
                  score_max="ragged_offset_score_max",
                  score_sum_exp="ragged_offset_score_sum_exp",
                  page_table_k="ragged_offset_page_table_k",
                  page_table_v="ragged_offset_page_table_v")
    found = {}
    for role, value in operands.items():
        offset = offset_of(value)
        found[role] = offset
        if offset is not None:
            setattr(opts, fields[role], offset._uid)
            g._ragged_taken.add(value)
    return found


def attach(g: "pygraph", tensors: Iterable[Any]) -> None:
    """These tensors are operands or outputs of an attention op now in the C graph: offsets
    set on them from now on go through ``cudnnfe_graph_set_ragged_offset``."""
    from ._tensor import Tensor

    g._ragged_attached.update(t for t in tensors if isinstance(t, Tensor))


def expect_output_offset(g: "pygraph", output: "Tensor", offset: Optional["Tensor"]) -> None:
    """``output`` (a backward gradient) is written ragged with ``offset``, its input's: its
    set_ragged_offset must say so."""
    if offset is not None:
        g._ragged_expected[output] = offset


def on_set(t: "Tensor", offset: "Tensor") -> None:
    """Check a set_ragged_offset call, and give it to the C graph when an op uses ``t``."""
    g = t._graph
    expected = g._ragged_expected.get(t)
    if expected is not None:
        if expected is not offset:
            raise NotOfferedError(
                f"tensor {t.get_name()!r}: the backward writes it with the ragged offsets "
                f"{expected.get_name()!r} of its input (the C ABI gives a gradient its "
                "tensor's layout); other offsets are not offered")
        g._ragged_confirmed.add(t)
        return
    if t in g._ragged_attached:
        g._check(lib.cudnnfe_graph_set_ragged_offset(g._ptr, t._uid, offset._uid),
                 f"set_ragged_offset on {t.get_name()!r}")
        g._ragged_taken.add(t)


def check(g: "pygraph") -> None:
    """Before validation: every offset set was used, every ragged gradient was given its
    offsets (otherwise cudnn-frontend would write it padded)."""
    for t in g._tensors.values():
        if t._ragged_offset is not None and t not in g._ragged_taken and \
                t not in g._ragged_expected:
            raise NotOfferedError(f"tensor {t.get_name()!r} has ragged offsets but no attention "
                                  "op uses it: ragged layouts are offered for sdpa and "
                                  "sdpa_backward operands and outputs, and page tables")
    for t, offset in g._ragged_expected.items():
        if t not in g._ragged_confirmed:
            raise NotOfferedError(
                f"tensor {t.get_name()!r} is written ragged with the offsets "
                f"{offset.get_name()!r} (its input's layout, as the cudnnfe C ABI gives a "
                f"gradient); call set_ragged_offset({offset.get_name()!r}) on it, since a "
                "padded gradient of a ragged input is not offered")
