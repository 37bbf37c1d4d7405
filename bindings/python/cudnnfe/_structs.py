"""Options and output structs of the C ABI, allocated and initialized at this package's size.

Every ``cudnnfe_X_t`` struct that starts with ``size_t struct_size`` is filled
by ``cudnnfe_X_init_sized(ptr, struct_size)``: the library writes the
defaults of the first ``struct_size`` bytes only, the struct these bindings
were generated with (``_cdef.py``). The header's ``cudnnfe_X_init(ptr)`` is a
C macro, invisible to cffi; :func:`new` is its Python form, passing
``ffi.sizeof("cudnnfe_X_t")``. A library newer than the header therefore
never writes past the struct Python allocated, and reads the fields
appended after it as their defaults.
"""
from __future__ import annotations

from typing import Any, Callable, Dict

from ._lib import ffi, lib

__all__ = ["new", "init_function"]

_INIT: Dict[str, Callable[[Any, int], None]] = {}


def init_function(ctype: str) -> Callable[[Any, int], None]:
    """The ``cudnnfe_X_init_sized`` function of struct type ``cudnnfe_X_t``."""
    fn = _INIT.get(ctype)
    if fn is None:
        if not (ctype.startswith("cudnnfe_") and ctype.endswith("_t")):
            raise ValueError(f"{ctype!r} is not a cudnnfe struct type")
        fn = getattr(lib, ctype[:-2] + "_init_sized")
        _INIT[ctype] = fn
    return fn


def new(ctype: str) -> Any:
    """A new ``ctype *`` (owned by Python), initialized with the library's defaults.

    ``new("cudnnfe_sdpa_options_t")`` is the Python form of C's
    ``cudnnfe_sdpa_options_t o; cudnnfe_sdpa_options_init(&o);``.
    """
    obj = ffi.new(ctype + " *")
    init_function(ctype)(obj, ffi.sizeof(ctype))
    return obj
