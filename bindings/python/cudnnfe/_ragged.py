"""cudnn-frontend's ``Tensor.set_ragged_offset`` on attention tensors, mapped onto the C ABI's
``ragged_offset_q`` ... ``ragged_offset_o`` options (``docs/attention.md``, ragged layout).

cudnn-frontend attaches offsets to tensors, outputs included, after the op is made; the C
ABI takes them when the op is added, and gives each output its input's layout (O follows q,
dQ q, dK k, dV v). So offsets set on q, k, v (and o, dO for the backward) before the op are
passed to it; an output whose input is ragged is ragged with the same offsets and must be
given them with ``set_ragged_offset`` (as cudnn-frontend code does) before the graph is
validated; any other use raises :class:`NotOfferedError` naming the tensor, never a silent
change of layout.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional

from ._errors import NotOfferedError

if TYPE_CHECKING:  # pragma: no cover
    from ._graph import pygraph
    from ._tensor import Tensor

__all__ = ["offset_of", "mark_read", "take_input_offsets", "expect_output_offset", "on_set",
           "check"]


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
                  o="ragged_offset_o")
    found = {}
    for role, value in operands.items():
        offset = offset_of(value)
        found[role] = offset
        if offset is not None:
            setattr(opts, fields[role], offset._uid)
            g._ragged_taken.add(value)
    return found


def expect_output_offset(g: "pygraph", output: "Tensor", offset: Optional["Tensor"]) -> None:
    """``output`` is written ragged with ``offset``: its set_ragged_offset must say so."""
    if offset is not None:
        g._ragged_expected[output] = offset


def on_set(t: "Tensor", offset: "Tensor") -> None:
    """Check a set_ragged_offset call against what the C ABI does with the tensor."""
    g = t._graph
    expected = g._ragged_expected.get(t)
    if expected is not None:
        if expected is not offset:
            raise NotOfferedError(
                f"tensor {t.get_name()!r}: its op writes it with the ragged offsets "
                f"{expected.get_name()!r} of its input; other offsets are not offered by the "
                "cudnnfe C ABI")
        g._ragged_confirmed.add(t)
        return
    if t in g._ragged_taken:
        raise NotOfferedError(f"tensor {t.get_name()!r}: its op has already read its ragged "
                              "offsets; set them before the op is added")
    if t._role in ("virtual", "output"):
        raise NotOfferedError(f"tensor {t.get_name()!r}: ragged offsets on an output are "
                              "offered only for attention outputs whose input is ragged")


def check(g: "pygraph") -> None:
    """Before validation: every offset set was used, every ragged output was given its
    offsets (otherwise cudnn-frontend would write it padded)."""
    for t in g._tensors.values():
        if t._ragged_offset is not None and t not in g._ragged_taken and \
                t not in g._ragged_expected:
            raise NotOfferedError(f"tensor {t.get_name()!r} has ragged offsets but no attention "
                                  "op read them: ragged layouts are offered for sdpa and "
                                  "sdpa_backward operands (set the offsets before the op)")
    for t, offset in g._ragged_expected.items():
        if t not in g._ragged_confirmed:
            raise NotOfferedError(
                f"tensor {t.get_name()!r} is written ragged with the offsets "
                f"{offset.get_name()!r} (its input's layout, as the cudnnfe C ABI gives it); "
                f"call set_ragged_offset({offset.get_name()!r}) on it, since a padded output "
                "of a ragged input is not offered")
