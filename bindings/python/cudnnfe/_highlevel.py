"""The high-level API: the :class:`Graph` context manager, :func:`graph`, :func:`jit`
and :func:`graph_cache`."""
from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from contextlib import contextmanager
from typing import (Any, Callable, Dict, Hashable, Iterator, List, Mapping, Optional, Sequence,
                    Tuple, TypeVar)

from . import _arrays, _constants
from ._enums import data_type, heur_mode, target
from ._graph import DType, Tensor, _ExecInfo, _heur_modes, _Spec, pygraph
from ._handle import Handle

__all__ = ["Graph", "graph", "jit", "graph_cache"]

F = TypeVar("F", bound=Callable[..., Any])


def _span(dims: Sequence[int], strides: Sequence[int]) -> int:
    if any(d == 0 for d in dims):
        return 0
    return 1 + sum((d - 1) * s for d, s in zip(dims, strides))


def _allocate(spec: _Spec, like: Any, tgt: target) -> Any:
    """An uninitialised array for a bound tensor, from the library of ``like``."""
    torch_cls = _arrays._torch_tensor_class()
    if torch_cls is not None and isinstance(like, torch_cls):
        import torch

        return torch.empty_strided(spec.dims, spec.strides, dtype=_arrays.torch_dtype(spec.dtype),
                                   device=like.device)
    if tgt == target.GPU:
        try:
            import torch

            return torch.empty_strided(spec.dims, spec.strides,
                                       dtype=_arrays.torch_dtype(spec.dtype), device="cuda")
        except ImportError:
            pass
        try:
            import cupy
        except ImportError:
            raise RuntimeError("allocating GPU outputs needs torch or cupy") from None
        dt = _arrays.numpy_dtype(spec.dtype)
        buf = cupy.empty(_span(spec.dims, spec.strides), dtype=dt)
        return cupy.lib.stride_tricks.as_strided(
            buf, spec.dims, tuple(s * dt.itemsize for s in spec.strides))
    import numpy as np

    dt = _arrays.numpy_dtype(spec.dtype)
    buf = np.empty(_span(spec.dims, spec.strides), dtype=dt)
    return np.lib.stride_tricks.as_strided(buf, spec.dims,
                                           tuple(s * dt.itemsize for s in spec.strides))


class Graph(pygraph):
    """A graph built in a ``with`` block and called like a function.

    ::

        with cudnnfe.Graph(io_data_type=cudnnfe.data_type.HALF,
                           compute_data_type=cudnnfe.data_type.FLOAT) as graph:
            y = graph.conv_fprop(image=x, weight=w, padding=[1, 1])
            y.set_output(True)
        result = graph(x, w, handle=handle)

    Arrays passed to operations become graph inputs named ``"<node>::<port>"``
    (``"attn::q"``); outputs are named ``"<node>::<port>"`` (``"attn::O"``)
    unless renamed. The graph is built when the block exits without an
    exception (or at the first call).

    Calling the graph:

    * positionally, ``graph(x, w)``: arrays for the inputs named by
      ``inputs=`` (default: every input, in creation order); returns the
      output named by ``outputs=`` (default: every output), or a tuple when
      there are several;
    * with a dict of names, ``graph({"attn::q": q, ...})``: returns a dict from
      output name to array. Outputs given in the dict are written in place.

    Outputs and the workspace are allocated with the library of the first
    input array: torch (same device) for torch tensors, NumPy for NumPy arrays
    (CPU reference), CuPy for other CUDA arrays. The workspace is kept for
    later calls (so a Graph object should be called from one thread at a time).

    Args:
        heuristics: heuristic modes tried at build (default ``[A, FALLBACK]``).
        inputs: input tensor names, in the order of positional calls.
        outputs: output tensor names, in the order of the returned tuple.
        target: where to build (default: inferred from the arrays: NumPy ->
            ``CPU_REFERENCE``, CUDA -> ``GPU``).
        Others as :class:`pygraph`.
    """

    def __init__(self, name: Optional[str] = None, io_data_type: DType = None,
                 intermediate_data_type: DType = None, compute_data_type: DType = None,
                 handle: Optional[Handle] = None, heuristics: Any = None,
                 inputs: Optional[Sequence[str]] = None, outputs: Optional[Sequence[str]] = None,
                 target: Optional[target] = None) -> None:
        super().__init__(io_data_type=io_data_type,
                         intermediate_data_type=intermediate_data_type,
                         compute_data_type=compute_data_type, handle=handle, name=name,
                         target=target)
        self._heuristics = _heur_modes(heuristics)
        for what, names in (("inputs", inputs), ("outputs", outputs)):
            if names is not None and (isinstance(names, str) or
                                      not all(isinstance(n, str) for n in names)):
                raise TypeError(f"{what} must be a list of tensor names")
        self._input_names = list(inputs) if inputs is not None else None
        self._output_names = list(outputs) if outputs is not None else None
        self._ws_cache: Dict[Any, Any] = {}

    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None and not self.is_built():
            self.build(self._heuristics)

    def _names(self, role: str) -> List[str]:
        return [t.get_name() for t in self.get_tensors() if self._role(t) == role]

    def input_names(self) -> List[str]:
        """Names of the inputs, in the order of positional calls."""
        return list(self._input_names) if self._input_names is not None else self._names("input")

    def output_names(self) -> List[str]:
        """Names of the outputs, in the order results are returned."""
        return (list(self._output_names) if self._output_names is not None
                else self._names("output"))

    def _spec(self, info: _ExecInfo, name: str) -> _Spec:
        uid = info.by_name.get(name)
        if uid is None:
            t = self.get_tensor(name)  # raises for unknown names
            raise ValueError(f"tensor {name!r} takes no buffer: it is virtual or a scalar "
                             f"(role {self._role(t)})")
        return info.specs[info.position[uid]]

    def _get_workspace(self, info: _ExecInfo, like: Any, workspace: Any) -> Any:
        if workspace is not None or info.workspace_size == 0:
            return workspace
        device = getattr(like, "device", None)
        key = str(device)
        ws = self._ws_cache.get(key)
        # Selecting or autotuning plans can make the workspace grow.
        if ws is None or _arrays.nbytes(_arrays.describe(ws), 1) < info.workspace_size:
            spec = _Spec(0, "workspace", (info.workspace_size,), (1,), data_type.UINT8)
            ws = self._ws_cache[key] = _allocate(spec, like, info.target)
        return ws

    def __call__(self, *args: Any, handle: Optional[Handle] = None, stream: Any = None,
                 workspace: Any = None) -> Any:
        if not self.is_built():
            self.build(self._heuristics)
        info = self._exec_info()
        named = len(args) == 1 and isinstance(args[0], Mapping)
        pack: Dict[Any, Any] = {}
        if named:
            given: Mapping[Any, Any] = args[0]
            for key, value in given.items():
                if self._folded and _constants.is_folded_binding(self, key, value):
                    continue  # folded into an op as a number (_constants.py)
                name = key if isinstance(key, str) else (
                    key.get_name() if isinstance(key, Tensor) else
                    self._tensors[self._key_uid(key)].get_name()
                    if self._key_uid(key) in self._tensors else str(key))
                pack[name] = value
            out_names = [n for n in self.output_names()]
        else:
            in_names = self.input_names()
            if len(args) != len(in_names):
                raise TypeError(f"the graph takes {len(in_names)} input array(s) {in_names}, "
                                f"got {len(args)}")
            pack = dict(zip(in_names, args))
            out_names = self.output_names()
        like = next(iter(pack.values()), None)
        results: Dict[str, Any] = {}
        for name in out_names:
            if name in pack:
                results[name] = pack[name]
                continue
            results[name] = pack[name] = _allocate(self._spec(info, name), like, info.target)
        ws = self._get_workspace(info, like, workspace)
        self.execute(pack, ws, handle=handle, stream=stream)
        if named:
            return results
        values = tuple(results[n] for n in out_names)
        return values[0] if len(values) == 1 else values


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
