"""The :class:`Graph` context manager: cudnn-frontend's ``cudnn.Graph`` wrapper
(``python/cudnn/wrapper.py`` there) on :class:`pygraph`.

Inside the ``with`` block every op call is recorded the way cudnn-frontend
records it: the node is named ``name=`` or ``"<method>.<i>"``; each operand is
known by the key ``"<node>::<keyword>"`` or, for a positional operand,
``"<node>::<position>"`` (tuple members add ``"::<j>"``); each output by its
name (``"ln::Y"``). Arrays become graph inputs (one per array object). Those
keys, tensor names, tensors, UIDs and the arrays themselves select the
tensors of ``inputs=`` / ``outputs=`` / :meth:`Graph.set_io_tuples` and of a
dict call. This module does not build or execute beyond what
:class:`pygraph` does; it only maps names to tensors and allocates outputs.
"""
from __future__ import annotations

import functools
import inspect
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _arrays
from ._enums import data_type, target
from ._graph import DType, Tensor, _ExecInfo, _heur_modes, _Spec, pygraph

__all__ = ["Graph"]


def _span(dims: Sequence[int], strides: Sequence[int]) -> int:
    if any(d == 0 for d in dims):
        return 0
    return 1 + sum((d - 1) * s for d, s in zip(dims, strides))


def _allocate(spec: _Spec, like: Any, tgt: target) -> Any:
    """An uninitialised array for a bound tensor, from the library of ``like``."""
    if spec.dtype == data_type.BOOLEAN_PACKED:
        # One byte per element, the tensor's shape (as a torch.bool buffer in cudnn-frontend's
        # samples): more than the ceil(span / 8) bytes the packed bits fill.
        spec = spec._replace(dtype=data_type.BOOLEAN)
    torch_cls = _arrays._torch_tensor_class()
    if torch_cls is not None and isinstance(like, torch_cls):
        import torch

        return torch.empty_strided(spec.dims, spec.strides, dtype=_arrays.torch_dtype(spec.dtype),
                                   device="cuda" if tgt == target.GPU else like.device)
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


def _check_selector_list(what: str, items: Any) -> Optional[List[Any]]:
    if items is None:
        return None
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"{what} must be a list or tuple of tensor names, tensors, UIDs or "
                        f"arrays, not {type(items).__name__}")
    for item in items:
        if not (isinstance(item, (str, Tensor)) or _arrays.is_array(item) or (
                isinstance(item, int) and not isinstance(item, bool))):
            raise TypeError(f"{what}: {item!r} is not a tensor name, tensor, UID or array")
    return list(items)


class Graph(pygraph):
    """A graph built in a ``with`` block and called like a function (cudnn-frontend's
    ``cudnn.Graph``)::

        with cudnnfe.Graph(io_data_type=cudnnfe.data_type.HALF,
                           compute_data_type=cudnnfe.data_type.FLOAT,
                           inputs=["conv::image", "conv::weight"], outputs=["conv::Y"]) as graph:
            y = graph.conv_fprop(image=x, weight=w, padding=[1, 1], name="conv")
            y.set_output(True)
        result = graph(x, w, handle=handle)

    The graph is built when the block exits without an exception (or at the
    first call). Calling it:

    * positionally, ``graph(x, w)``: arrays for the inputs chosen by
      ``inputs=`` / :meth:`set_io_tuples` (default: every graph input, in
      creation order); returns the output(s) chosen by ``outputs=`` (default:
      every graph output), one array or a tuple;
    * with a dict, ``graph({"conv::image": x, ...})``: keys are operand keys,
      tensor names, tensors or UIDs; outputs missing from the dict are
      allocated and added to it, and the dict is returned (as cudnn-frontend).

    Outputs and the workspace are allocated with the library of the first
    input array (torch, NumPy for the CPU reference, CuPy); the workspace is
    kept for later calls unless ``workspace_alloc=False``, which makes every
    call pass ``workspace=``.

    Args:
        heuristics: heuristic modes tried at build (default ``[A, FALLBACK]``).
        inputs, outputs: the positional call's inputs and results.
        workspace_alloc: keep an allocated workspace (default True).
        target: where to build (default: inferred from the arrays).
        Others as :class:`pygraph` (``handle="auto"`` is the thread's default handle).
    """

    def __init__(self, name: Optional[str] = None, io_data_type: DType = None,
                 intermediate_data_type: DType = None, compute_data_type: DType = None,
                 handle: Any = None, heuristics: Any = None, inputs: Any = None,
                 outputs: Any = None, target: Optional[target] = None, *,
                 workspace_alloc: bool = True, **graph_options: Any) -> None:
        super().__init__(io_data_type=io_data_type,
                         intermediate_data_type=intermediate_data_type,
                         compute_data_type=compute_data_type,
                         handle=None if handle == "auto" else handle, name=name, target=target,
                         **graph_options)
        self._heuristics = _heur_modes(heuristics)
        self._requested_io = (_check_selector_list("inputs", inputs),
                              _check_selector_list("outputs", outputs))
        self._io: Optional[Tuple[List[Tensor], List[Tensor]]] = None
        self._in_keys: "OrderedDict[str, Tensor]" = OrderedDict()
        self._out_keys: "OrderedDict[str, Tensor]" = OrderedDict()
        self._op_counts: Dict[str, int] = {}
        self._op_depth = 0
        self._workspace_alloc = bool(workspace_alloc)
        self._ws_cache: Dict[Any, Any] = {}

    # ---- the with block --------------------------------------------------------------

    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None and not self.is_built():
            self.build(self._heuristics)
            self._apply_requested_io()

    def _apply_requested_io(self) -> None:
        ins, outs = self._requested_io
        if self._io is None and (ins is not None or outs is not None):
            self.set_io_tuples(ins or [], outs or [])

    def _record_op(self, method: str, fn: Callable[..., Any], args: Tuple[Any, ...],
                   kwargs: Dict[str, Any]) -> Any:
        """Run op ``method`` and record its operand and output keys (the module doc)."""
        count = self._op_counts.get(method, 0)
        self._op_counts[method] = count + 1
        params = list(inspect.signature(fn).parameters)[1:]  # without self
        named = dict(zip(params, args))
        node = kwargs.get("name", named.get("name"))
        if node is None and "name" in params:
            node = kwargs["name"] = f"{method}.{count}"
        node = node or method
        args = tuple(self._operand_key(f"{node}::{i}", f"{node}::{param}", value)
                     for i, (param, value) in enumerate(zip(params, args)))
        for key in list(kwargs):
            if key != "name":
                kwargs[key] = self._operand_key(f"{node}::{key}", f"{node}::{key}", kwargs[key])
        self._op_depth += 1
        try:
            result = fn(self, *args, **kwargs)
        finally:
            self._op_depth -= 1
        outputs = result if isinstance(result, (list, tuple)) else [result]
        for i, t in enumerate(outputs):
            if isinstance(t, Tensor):
                self._out_keys[t.get_name() or f"{node}::{i}"] = t
        return result

    def _operand_key(self, key: str, input_name: str, value: Any) -> Any:
        """Record operand ``value`` under ``key``; an array becomes a graph input named
        ``input_name`` ("<node>::<parameter>", the name cudnnfe gives operands)."""
        if isinstance(value, tuple):
            return tuple(self._operand_key(f"{key}::{j}", f"{input_name}::{j}", v)
                         for j, v in enumerate(value))
        if _arrays.is_array(value):
            known = self._implicit.get(id(value))
            if known is not None and known[0] is value:
                value = known[1]
            else:
                t = self.tensor_like(value, name=self._free_name(input_name))
                self._implicit[id(value)] = (value, t)
                value = t
        if isinstance(value, Tensor):
            self._in_keys[key] = value
        return value

    def _free_name(self, name: str) -> str:
        taken = {t.get_name() for t in self.get_tensors()}
        if name not in taken:
            return name
        i = 1
        while f"{name}.{i}" in taken:
            i += 1
        return f"{name}.{i}"

    # ---- choosing tensors --------------------------------------------------------------

    def _find(self, item: Any, keys: Mapping[str, Tensor], what: str) -> Tensor:
        """The tensor for an ``inputs``/``outputs``/dict entry (ValueError naming it)."""
        if isinstance(item, Tensor):
            if item._graph is not self:
                raise ValueError(f"{what}: tensor {item.get_name()!r} belongs to another graph")
            return item
        if isinstance(item, str):
            if item in keys:
                return keys[item]
            for t in keys.values():
                if t._uid > 0 and t.get_name() == item:
                    return t
            return self.get_tensor(item)  # raises InvalidArgumentError for an unknown name
        if isinstance(item, int) and not isinstance(item, bool):
            return self.query_tensor_attributes_of_uid(item)
        known = self._implicit.get(id(item))
        if known is not None and known[0] is item:
            return known[1]
        raise ValueError(f"{what}: {type(item).__name__} object is not an array this graph "
                         "was given")

    def set_io_tuples(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        """Choose the positional call's inputs and results (by key, name, tensor, UID or the
        array given to an op). Before the graph is built this is remembered until the
        ``with`` block exits."""
        ins = _check_selector_list("inputs", inputs) or []
        outs = _check_selector_list("outputs", outputs) or []
        if not self.is_built():
            self._requested_io = (ins, outs)
            return
        chosen_in = [self._find(x, self._in_keys, f"inputs[{i}]") for i, x in enumerate(ins)]
        chosen_out = [self._find(x, self._out_keys, f"outputs[{i}]") for i, x in enumerate(outs)]
        seen: set = set()
        for i, t in enumerate(chosen_in + chosen_out):
            if id(t) in seen:
                raise ValueError(f"set_io_tuples: {t.get_name()!r} is given twice")
            seen.add(id(t))
        for i, t in enumerate(chosen_in):
            if t._uid > 0 and self._role(t) in ("virtual", "output"):
                raise ValueError(f"inputs[{i}]: {t.get_name()!r} is computed by the graph")
        self._check_covered(chosen_in, chosen_out)
        self._io = (chosen_in, chosen_out)

    def _check_covered(self, chosen_in: List[Tensor], chosen_out: List[Tensor]) -> None:
        """Every recorded input and output that needs an array must be chosen (as
        cudnn-frontend checks); folded constants need none."""
        bound = set(self._exec_info().position)
        for keys, chosen, what in ((self._in_keys, chosen_in + chosen_out, "input"),
                                   (self._out_keys, chosen_out, "output")):
            for key, t in keys.items():
                if t._uid in bound and not any(t is c for c in chosen):
                    raise ValueError(f"set_io_tuples: node {what} {key!r} needs an array but "
                                     f"is not among the {what}s given")

    def __getitem__(self, name: str) -> Tensor:
        """The tensor recorded under ``name`` (an operand key or output name), else the
        graph's tensor of that name."""
        return self._find(name, {**self._in_keys, **self._out_keys}, "graph[...]")

    def input_names(self) -> List[str]:
        """Names of the positional call's inputs."""
        return [t.get_name() for t in self._call_inputs()]

    def output_names(self) -> List[str]:
        """Names of the positional call's results."""
        return [t.get_name() for t in self._call_outputs()]

    def _call_inputs(self) -> List[Tensor]:
        if self._io is not None:
            return list(self._io[0])
        return [t for t in self.get_tensors() if self._role(t) == "input"]

    def _call_outputs(self) -> List[Tensor]:
        if self._io is not None:
            return list(self._io[1])
        return [t for t in self.get_tensors() if self._role(t) == "output"]

    # ---- calling ------------------------------------------------------------------------

    def _spec(self, info: _ExecInfo, t: Tensor) -> _Spec:
        pos = info.position.get(t._uid)
        if pos is None:
            raise ValueError(f"tensor {t.get_name()!r} takes no buffer: it is virtual or a "
                             f"scalar (role {self._role(t)})")
        return info.specs[pos]

    def _get_workspace(self, info: _ExecInfo, like: Any, workspace: Any) -> Any:
        if workspace is not None or info.workspace_size == 0:
            return workspace
        if not self._workspace_alloc:
            raise RuntimeError(f"the graph needs a workspace of {info.workspace_size} bytes: "
                               "pass workspace= (the Graph was made with workspace_alloc=False)")
        key = str(getattr(like, "device", None))
        ws = self._ws_cache.get(key)
        # Selecting or autotuning plans can make the workspace grow.
        if ws is None or _arrays.nbytes(_arrays.describe(ws), 1) < info.workspace_size:
            spec = _Spec(0, "workspace", (info.workspace_size,), (1,), data_type.UINT8)
            ws = self._ws_cache[key] = _allocate(spec, like, info.target)
        return ws

    def _dict_pack(self, given: Mapping[Any, Any]) -> Dict[Tensor, Any]:
        keys = {**self._in_keys, **self._out_keys}
        pack: Dict[Tensor, Any] = {}
        for key, value in given.items():
            if key is None or (self._pruned and self._is_pruned_key(key)):
                continue  # no tensor, or an input that left the graph (no op read it)
            pack[self._find(key, keys, "graph call")] = value
        return pack

    def __call__(self, *args: Any, handle: Any = None, stream: Any = None,
                 workspace: Any = None) -> Any:
        if not self.is_built():
            self.build(self._heuristics)
            self._apply_requested_io()
        if handle == "auto":
            handle = None
        info = self._exec_info()
        named = len(args) == 1 and isinstance(args[0], Mapping)
        if named:
            pack = self._dict_pack(args[0])
            out_tensors = [t for t in self.get_tensors()
                           if self._role(t) == "output" and t not in pack]
        else:
            ins = self._call_inputs()
            if len(args) != len(ins):
                raise TypeError(f"the graph takes {len(ins)} input array(s) "
                                f"{[t.get_name() for t in ins]}, got {len(args)}")
            pack = dict(zip(ins, args))
            out_tensors = self._call_outputs()
        like = next(iter(pack.values()), None)
        results = []
        for t in out_tensors:
            if t not in pack:
                pack[t] = _allocate(self._spec(info, t), like, info.target)
            results.append(pack[t])
        self.execute(pack, self._get_workspace(info, like, workspace), handle=handle,
                     stream=stream)
        if named:
            return self._named_results(args[0], out_tensors, results)
        return results[0] if len(results) == 1 else tuple(results)

    def _named_results(self, given: Mapping[Any, Any], outs: List[Tensor],
                       arrays: List[Any]) -> Mapping[Any, Any]:
        """The caller's dict with the allocated outputs added under their names."""
        target_dict = given if isinstance(given, dict) else dict(given)
        out_key = {id(t): k for k, t in self._out_keys.items()}
        for t, array in zip(outs, arrays):
            target_dict[out_key.get(id(t), t.get_name())] = array
        return target_dict


def _recording(method: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def op(self: Graph, *args: Any, **kwargs: Any) -> Any:
        if self._op_depth:  # an op made of other ops records once, as itself
            return fn(self, *args, **kwargs)
        return self._record_op(method, fn, args, kwargs)

    return op


# Every op method of pygraph (those that take a node name) records its operands in a Graph.
for _name, _fn in inspect.getmembers(pygraph, inspect.isfunction):
    if (not _name.startswith("_") and _name not in ("tensor", "tensor_like", "get_tensor")
            and "name" in inspect.signature(_fn).parameters):
        setattr(Graph, _name, _recording(_name, _fn))
