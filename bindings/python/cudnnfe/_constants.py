"""Values folded into an op as a number (``epsilon``, ``momentum`` given as a Python number,
a scalar or a host array; graph input tensors go to the C options' ``epsilon_tensor`` /
``momentum_tensor`` instead, :mod:`cudnnfe._norms`), and inputs no op reads.

Where the number route is taken (:func:`constant_value`):

* a Python number is used as is;
* a scalar tensor (kind SCALAR) gives its value;
* a one-element host array (NumPy, a CPU torch tensor) gives its value at
  that moment;
* a graph input made by :meth:`pygraph.tensor_like` from such an array gives
  that array's value (the norms pass graph inputs as tensors instead);
* anything else (a device array, an op output) raises :class:`NotOfferedError`.

An input folded this way, or any input no op reads, leaves the graph before
it is validated (:func:`cudnnfe._rewrite.finalize`). Its entry in a later
variant pack is accepted; a folded host array must still hold the folded
value (``ValueError`` otherwise, since the graph cannot see a new value).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Optional

from . import _arrays
from ._enums import tensor_kind
from ._errors import NotOfferedError
from ._lib import ffi, lib
from ._util import _is_number

if TYPE_CHECKING:  # pragma: no cover
    from ._graph import pygraph
    from ._tensor import Tensor

__all__ = ["constant_value", "host_scalar", "is_folded_binding"]


def host_scalar(array: Any) -> Optional[float]:
    """The value of a one-element array in host memory, else None."""
    try:
        info = _arrays.describe(array)
    except (TypeError, ValueError):
        return None
    if info.device != _arrays.CPU or info.dtype is None or math.prod(info.shape) != 1:
        return None
    import numpy as np

    dt = _arrays.numpy_dtype(info.dtype)
    raw = ffi.buffer(ffi.cast("char *", info.ptr), dt.itemsize)
    return float(np.frombuffer(bytes(raw), dtype=dt)[0])


class FoldedConstant:
    """A graph input whose value an op took as a number."""

    __slots__ = ("tensor", "name", "value", "dropped")

    def __init__(self, tensor: "Tensor", name: str, value: Optional[float]) -> None:
        self.tensor = tensor
        self.name = name
        self.value = value
        self.dropped = False

    def drop(self, g: "pygraph") -> None:
        """The input left the C graph: its Tensor keeps no UID that another tensor may get."""
        if g._tensors.get(self.tensor._uid) is self.tensor:
            del g._tensors[self.tensor._uid]
        self.tensor._uid = -abs(self.tensor._uid)
        self.dropped = True


def _known_value(folded: FoldedConstant, node: str, port: str) -> float:
    if folded.value is None:
        raise ValueError(f"{node}: {port} is tensor {folded.name!r}, an input no op read when "
                         "the graph was validated, so it left the graph; make a new tensor")
    return folded.value


def record_unread(g: "pygraph", tensor: "Tensor") -> None:
    """``tensor``, a graph input no op reads, leaves the graph (:func:`cudnnfe._rewrite.finalize`);
    its binding at execute is then accepted and ignored."""
    g._folded[tensor._uid] = FoldedConstant(tensor, tensor.get_name(), None)


def _not_offered(node: str, port: str, why: str) -> NotOfferedError:
    return NotOfferedError(
        f"{node}: {port} {why}; the cudnnfe C ABI takes {port} as a number when the op is "
        f"added. Pass a Python float, a one-element host array, or tensor_like(one-element "
        f"host array)")


def constant_value(g: "pygraph", value: Any, node: str, port: str) -> Optional[float]:
    """The number an op option takes for ``value`` (None: not given, the C default)."""
    from ._tensor import Tensor

    if value is None:
        return None
    if isinstance(value, (bool, str)):
        raise TypeError(f"{node}: {port} must be a number or a one-element tensor, not "
                        f"{type(value).__name__}")
    if _is_number(value):
        return float(value)
    if isinstance(value, Tensor):
        if value._graph is not g:
            raise ValueError(f"{node}: {port} is a tensor of another graph")
        known = g._folded.get(value._uid) if value._uid > 0 else None
        if known is not None:
            return _known_value(known, node, port)
        if value._uid < 0:  # folded and dropped earlier (keyed by its old UID)
            for folded in g._folded.values():
                if folded.tensor is value:
                    return _known_value(folded, node, port)
        kind = value.get_kind()
        if kind == tensor_kind.SCALAR:
            out = ffi.new("double *")
            g._check(lib.cudnnfe_tensor_get_scalar_value(g._ptr, value._uid, out))
            return float(out[0])
        if kind != tensor_kind.INPUT:
            raise _not_offered(node, port, f"is tensor {value.get_name()!r}, computed by the "
                               "graph")
        source = g._host_scalars.get(value._uid)
        number = host_scalar(source) if source is not None else None
        if number is None:
            raise _not_offered(node, port, f"is tensor {value.get_name()!r}, whose value is "
                               "given only at execute (a pass-by-value tensor made with "
                               "graph.tensor)")
        g._folded[value._uid] = FoldedConstant(value, value.get_name(), number)
        return number
    if _arrays.is_array(value):
        number = host_scalar(value)
        if number is None:
            raise _not_offered(node, port, "is an array that is not one element in host memory")
        return number
    raise TypeError(f"{node}: {port} must be a number or a one-element tensor, not "
                    f"{type(value).__name__}")


def is_folded_binding(g: "pygraph", key: Any, array: Any) -> bool:
    """True when ``key`` names a folded input that left the graph (its binding is ignored).

    Raises ``ValueError`` when ``array`` is a host array holding another value.
    """
    from ._tensor import Tensor

    from ._util import UID_ZERO_ALIAS

    if isinstance(key, int) and not isinstance(key, bool) and key == 0:
        key = UID_ZERO_ALIAS
    found = None
    for folded in g._folded.values():
        if not folded.dropped:
            continue
        if (folded.tensor is key or (isinstance(key, str) and key == folded.name)
                or (isinstance(key, int) and not isinstance(key, (bool, Tensor))
                    and key == abs(folded.tensor._uid))):
            found = folded
            break
    if found is None:
        return False
    if found.value is None:  # an input no op read (_rewrite.finalize): nothing to check
        return True
    number = host_scalar(array)
    if number is not None and number != found.value and not (
            math.isnan(number) and math.isnan(found.value)):
        raise ValueError(
            f"variant_pack: tensor {found.name!r} was folded into the graph as {found.value!r} "
            f"when its op was added (the C ABI takes it as a number), but the array now holds "
            f"{number!r}; build a new graph for a new value")
    return True
