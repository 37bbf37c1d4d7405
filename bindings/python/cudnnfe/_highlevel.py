"""The high-level API: :func:`graph`, :func:`jit` and :func:`graph_cache` (the
:class:`Graph` context manager is in :mod:`cudnnfe._wrapper`)."""
from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Callable, Hashable, Iterator, List, Optional, Tuple, TypeVar

from . import _arrays
from ._enums import data_type, heur_mode, target
from ._graph import DType, Tensor, _heur_modes, pygraph
from ._handle import Handle
from ._wrapper import Graph

__all__ = ["Graph", "graph", "jit", "graph_cache"]

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def graph(handle: Optional[Handle] = None, name: str = "cudnnfe_graph",
          io_data_type: DType = data_type.HALF,
          intermediate_data_type: DType = data_type.FLOAT,
          compute_data_type: DType = data_type.FLOAT,
          target: Optional[target] = None) -> Iterator[Tuple[pygraph, List[Any]]]:
    """Context manager yielding ``(pygraph, [])`` with cudnn-frontend's default types.

    Used with :func:`jit` and :func:`graph_cache`::

        @cudnnfe.jit(heur_modes=[cudnnfe.heur_mode.A])
        @cudnnfe.graph_cache(key_fn=my_key)
        def make(handle, a, b):
            with cudnnfe.graph(handle) as (g, _):
                ...
            return g, [a_t, b_t, out]
    """
    g = pygraph(handle=handle, name=name, io_data_type=io_data_type,
                intermediate_data_type=intermediate_data_type,
                compute_data_type=compute_data_type, target=target)
    yield g, []


def jit(heur_modes: Any = heur_mode.A, **build_kwargs: Any) -> Callable[[F], F]:
    """Decorator: build the graph a function returns, and turn its tensors into UIDs.

    The decorated function returns ``(graph, [tensors...])``; the wrapper
    builds the graph with ``heur_modes`` if it is not built yet (a cached graph
    is built once) and returns ``(graph, [uids...])``. ``build_kwargs`` go to
    :meth:`pygraph.build` (e.g. ``target=cudnnfe.target.CPU_REFERENCE``).
    """
    modes = _heur_modes(heur_modes)

    def decorator(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            try:
                g, tensors = result
            except (TypeError, ValueError):
                raise TypeError(f"@jit: {fn.__name__} must return (graph, [tensors]), not "
                                f"{type(result).__name__}") from None
            if not isinstance(g, pygraph):
                raise TypeError(f"@jit: {fn.__name__} returned {type(g).__name__} where a "
                                "cudnnfe graph was expected")
            if not g.is_built():
                g.build(modes, **build_kwargs)
            return g, [t.get_uid() if isinstance(t, Tensor) else t for t in tensors]

        return wrapper  # type: ignore[return-value]

    return decorator


def _default_key_part(value: Any) -> Hashable:
    if isinstance(value, Handle):
        return "handle"
    if isinstance(value, Tensor):
        return ("tensor", id(value))
    if _arrays.is_array(value):
        info = _arrays.describe(value)
        return ("array", info.shape, info.strides, info.dtype, info.device, info.device_id)
    try:
        hash(value)
        return value
    except TypeError:
        return ("id", id(value))


def graph_cache(key_fn: Optional[Callable[..., Hashable]] = None,
                maxsize: int = 256) -> Callable[[F], F]:
    """Decorator: cache what a graph-making function returns, by ``key_fn(*args, **kwargs)``.

    The default key is made of the arrays' shapes, strides, dtypes and
    devices and the other arguments' values (handles are ignored). The cache
    keeps the ``maxsize`` most recently used entries; the wrapper has
    ``cache_clear()`` and ``cache_size()``.
    """
    if not isinstance(maxsize, int) or maxsize < 1:
        raise ValueError(f"maxsize must be a positive int, not {maxsize!r}")
    if key_fn is not None and not callable(key_fn):
        raise TypeError("key_fn must be callable")

    def default_key(*args: Any, **kwargs: Any) -> Hashable:
        return (tuple(_default_key_part(a) for a in args),
                tuple(sorted((k, _default_key_part(v)) for k, v in kwargs.items())))

    make_key = key_fn or default_key

    def decorator(fn: F) -> F:
        cache: "OrderedDict[Hashable, Any]" = OrderedDict()
        lock = threading.Lock()

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = make_key(*args, **kwargs)
            with lock:
                if key in cache:
                    cache.move_to_end(key)
                    return cache[key]
            result = fn(*args, **kwargs)
            with lock:
                cache[key] = result
                while len(cache) > maxsize:
                    cache.popitem(last=False)
            return result

        def cache_clear() -> None:
            with lock:
                cache.clear()

        wrapper.cache_clear = cache_clear  # type: ignore[attr-defined]
        wrapper.cache_size = lambda: len(cache)  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorator
