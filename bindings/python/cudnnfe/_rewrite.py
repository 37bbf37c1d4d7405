"""Graph edits the C ABI has no call for, made on the graph description.

cudnn-frontend's Python API lets code do things the C ABI cannot do
in place:

* pass a tensor the user created (``graph.tensor(...)``) as an op's
  *output*, e.g. ``sdpa_backward(..., dBias=t)``: the C op creates its own
  output, and a graph input cannot be removed or turned into an output;
* create a reshape without its new dims and set them on the output later
  (``y = graph.reshape(x); y.set_dim(dims)``);
* create a graph input that no op reads (``epsilon_bwd = graph.tensor_like(eps)``
  next to a backward that takes no epsilon) and bind it at execute: cudnn-frontend's
  graph holds only the tensors its nodes use, so such an input is not part of it.
  Here it leaves the C graph before validation (the C library would keep it as an
  input that takes no buffer; leaving matches cudnn-frontend's graph, which never had
  it) and its binding is accepted and ignored, as a folded constant's.

Each is done here by editing the graph description (``docs/graph-json.md``:
:meth:`pygraph.serialize`), loading it into a fresh C graph and adopting
that graph. UIDs, names, shapes, types, scalars and attributes survive the
round trip, so every :class:`Tensor` of the graph stays valid.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List

from . import _constants

if TYPE_CHECKING:  # pragma: no cover
    from ._graph import pygraph
    from ._tensor import Tensor

__all__ = ["adopt_output", "check_placeholder", "finalize"]


def _load(g: "pygraph") -> Dict[str, Any]:
    return json.loads(g._serialize_raw().decode("utf-8"))


def _store(g: "pygraph", doc: Dict[str, Any]) -> None:
    g._replace_c_graph(json.dumps(doc).encode("utf-8"))


def _all_nodes(nodes: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The nodes with those of their score modifiers (nested under "score_mod" and
    "score_mod_bprop", docs/graph-json.md)."""
    out = []
    for node in nodes:
        out.append(node)
        for key in ("score_mod", "score_mod_bprop"):
            if key in node:
                out.extend(_all_nodes(node[key]["nodes"]))
    return out


def _read_uids(doc: Dict[str, Any]) -> set:
    return {uid for node in _all_nodes(doc["nodes"]) for uid in node["inputs"].values()}


def _placeholder_entry(doc: Dict[str, Any], placeholder: "Tensor", node: str,
                       port: str) -> Dict[str, Any]:
    p = next((t for t in doc["tensors"] if t["uid"] == placeholder._uid), None)
    if p is None or p["kind"] != "input":
        raise ValueError(f"{node}: {port} must be a tensor made with graph.tensor() or "
                         f"tensor_like() (it becomes the op's output); "
                         f"{placeholder.get_name()!r} is an operation output or a scalar")
    if placeholder._uid in _read_uids(doc):
        raise ValueError(f"{node}: {port} tensor {p['name']!r} is read by another operation; "
                         "an op output must be a tensor no operation reads yet")
    return p


def check_placeholder(g: "pygraph", placeholder: "Tensor", node: str, port: str) -> None:
    """Raise ValueError unless ``placeholder`` can become an op output (:func:`adopt_output`)."""
    _placeholder_entry(_load(g), placeholder, node, port)


def adopt_output(g: "pygraph", placeholder: "Tensor", produced: int, node: str,
                 port: str) -> None:
    """Make ``placeholder`` (a graph input no op reads) the op output ``produced``.

    The output takes the placeholder's UID, name, dims and strides (as user
    overrides), its data type when set, and becomes a graph output; the
    placeholder input leaves the graph. Afterwards the placeholder
    :class:`Tensor` is that output.
    """
    doc = _load(g)
    p = _placeholder_entry(doc, placeholder, node, port)
    entries = {t["uid"]: t for t in doc["tensors"]}
    out = entries[produced]
    out["uid"] = p["uid"]
    out["name"] = p["name"]
    out["kind"] = "output"
    if p["data_type"] != "NOT_SET":
        out["data_type"] = p["data_type"]
    out["dims"], out["strides"] = p["dims"], p["strides"]
    out["dims_set_by_user"] = out["strides_set_by_user"] = True
    doc["tensors"] = [t for t in doc["tensors"] if t is not p]
    for n in doc["nodes"]:
        for name, uid in n["outputs"].items():
            if uid == produced:
                n["outputs"][name] = p["uid"]
    _store(g, doc)
    g._tensors.pop(produced, None)
    placeholder._role = "output"


def finalize(g: "pygraph") -> None:
    """Apply the pending edits before the graph is validated, built or serialized.

    Reshapes created without dims take the dims set on their output, and
    inputs folded into an op as a number (:mod:`cudnnfe._constants`) that no
    op reads leave the graph. A no-op (no C call) when nothing is pending.
    """
    if not g._pending_reshapes and all(f.dropped for f in g._folded.values()) and \
            not _may_have_unread_inputs(g):
        return
    doc = _load(g)
    entries = {t["uid"]: t for t in doc["tensors"]}
    changed = False
    for n in doc["nodes"]:
        if n["op"] != "reshape" or n["name"] not in g._pending_reshapes:
            continue
        y = entries[n["outputs"]["y"]]
        if y.get("dims_set_by_user") and y["dims"] != n["attributes"]["dims"]:
            n["attributes"]["dims"] = list(y["dims"])
            changed = True
    read = _read_uids(doc)
    dropped: List[int] = []
    for uid, folded in g._folded.items():
        entry = entries.get(uid)
        if folded.dropped:
            continue
        if entry is not None and entry["kind"] == "input" and uid not in read:
            dropped.append(uid)
    if doc["nodes"]:  # a graph without ops keeps its inputs (validation names them)
        for entry in doc["tensors"]:
            uid = entry["uid"]
            if entry["kind"] == "input" and uid not in read and uid not in g._folded:
                _constants.record_unread(g, g._wrap(uid))
                dropped.append(uid)
    if dropped:
        doc["tensors"] = [t for t in doc["tensors"] if t["uid"] not in dropped]
        changed = True
    if changed:
        _store(g, doc)
    for uid in dropped:
        g._folded[uid].drop(g)


def _may_have_unread_inputs(g: "pygraph") -> bool:
    """False when every tensor the Python side made as an input is known to be read: an
    op took it as an operand (the cheap test that spares a graph description round trip;
    an input read some other way takes the round trip, as before)."""
    return any(t._role == "input" and t._uid > 0 and t._uid not in g._operand_uids
               for t in g._tensors.values())


def scalar_value(g: "pygraph", uid: int) -> float:
    """The value of scalar tensor ``uid`` (from the graph description)."""
    for t in _load(g)["tensors"]:
        if t["uid"] == uid:
            value = t["value"]
            return float(value) if not isinstance(value, str) else float(value.replace(
                "Infinity", "inf"))
    raise KeyError(uid)
