"""Argument conversion shared by the graph modules: UIDs, data types, ints, strings, enums.

Every function here turns a Python value into what a C call takes, raising
``TypeError`` for a value of the wrong Python type and ``ValueError`` for a
bad value, before any C call is made.
"""
from __future__ import annotations

import numbers
import operator
from typing import Any, List, Optional, Union

from . import _arrays
from ._enums import FE_ONLY, data_type
from ._lib import ffi, lib

__all__ = ["UID_ZERO_ALIAS"]

#: The C ABI reserves UID 0 for "no tensor"; code written for cudnn-frontend
#: numbers tensors from 0. A Python UID of 0 is therefore stored in C (and in
#: serialized graphs) as this value, and read back as 0. Every other UID is the
#: same in Python and in C.
UID_ZERO_ALIAS = 2**31 - 1

_MAX_DIMS = lib.CUDNNFE_MAX_DIMS
_MAX_SPATIAL = lib.CUDNNFE_MAX_SPATIAL_DIMS

Number = Union[int, float]
Operand = Any  # a Tensor, an array (made a graph input), or for some ports a number
DType = Union[data_type, int, None]


def _c_uid(uid: int) -> int:
    if not isinstance(uid, int) or isinstance(uid, bool):
        raise TypeError(f"a UID is an int, not {type(uid).__name__}")
    if uid < 0:
        raise ValueError(f"UID {uid} is negative; UIDs are >= 0")
    if uid == UID_ZERO_ALIAS:
        raise ValueError(f"UID {UID_ZERO_ALIAS} is reserved (it stands for UID 0 in C)")
    return UID_ZERO_ALIAS if uid == 0 else uid


def _py_uid(c_uid: int) -> int:
    return 0 if c_uid == UID_ZERO_ALIAS else c_uid


def _dtype(value: DType, what: str) -> int:
    if value is None:
        return int(data_type.NOT_SET)
    if isinstance(value, int) and not isinstance(value, bool):
        value = data_type(value)
        if value.name in FE_ONLY[data_type]:
            from ._errors import NotOfferedError

            raise NotOfferedError(f"{what}: data type {value.name} is not offered by the cudnnfe "
                                  "C ABI")
        return int(value)
    found = _arrays.dtype_of(value)
    if found is None:
        raise TypeError(f"{what}: {value!r} is not a cudnnfe.data_type")
    return int(found)


def _tensor_dtype(value: DType, what: str) -> int:
    """A tensor's C data type for ``value``: as :func:`_dtype`, except that BOOLEAN is
    cuDNN's bit-packed boolean (``CUDNNFE_DTYPE_BOOLEAN_PACKED``), the layout that
    cudnn-frontend's BOOLEAN tensors have in memory. A comparison's output whose type is
    not set stays the C library's one-byte BOOLEAN (CPU reference only)."""
    dtype = _dtype(value, what)
    return int(data_type.BOOLEAN_PACKED) if dtype == int(data_type.BOOLEAN) else dtype


def _ints(values: Any, what: str, min_len: int = 1, max_len: int = _MAX_DIMS) -> List[int]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{what} must be a sequence of ints, not {type(values).__name__}")
    items = list(values)
    for v in items:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            if not (isinstance(v, float) and v.is_integer()):
                raise TypeError(f"{what} must hold integers, not {v!r}")
    out = [int(v) for v in items]
    if not min_len <= len(out) <= max_len:
        raise ValueError(f"{what} has {len(out)} entries; expected {min_len} to {max_len}")
    return out


def _int(value: Any, what: str) -> int:
    """A Python int (not a bool) for an integer option."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    return operator.index(value)


def _is_number(value: Any) -> bool:
    """An int or float, NumPy scalars included (not a bool)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _number(value: Any, what: str) -> float:
    """A Python float from an int or float (not a bool)."""
    if not _is_number(value):
        raise TypeError(f"{what} must be a number, not {type(value).__name__}")
    return float(value)


def _cstr(value: Optional[str], what: str) -> Any:
    if value is None:
        return ffi.NULL
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if "\0" in value:
        raise ValueError(f"{what} contains a NUL character")
    return ffi.new("char[]", value.encode("utf-8"))


def _string(ptr: Any) -> str:
    return "" if ptr == ffi.NULL else ffi.string(ptr).decode("utf-8", "replace")


def _enum_value(enum: Any, value: Any, what: str) -> Any:
    """An enum member from a member, an int, a (case-insensitive) name, or an object whose
    ``name`` is one (another library's enum of the same spelling, e.g. cudnn-frontend's)."""
    try:
        if isinstance(value, str):
            return enum[value.upper()]
        if isinstance(value, bool):
            raise ValueError(value)
        if not isinstance(value, (int, enum)) and isinstance(getattr(value, "name", None), str):
            return enum[value.name.upper()]
        return enum(value)
    except (KeyError, ValueError, TypeError):
        raise ValueError(f"unknown {what} {value!r}; expected one of "
                         f"{', '.join(m.name for m in enum)}") from None


def _int_option(value: Any, what: str, bits: int = 64) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    v = operator.index(value)
    limit = 1 << (bits - 1)
    if not -limit <= v < limit:
        raise ValueError(f"{what} is {v}; it does not fit in int{bits}")
    return v
