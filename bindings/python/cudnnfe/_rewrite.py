"""Graph edits the C ABI has no call for, made on the graph description.

cudnn-frontend's Python API lets code do things the C ABI cannot do
in place:

* create a graph input that no op reads (``epsilon_bwd = graph.tensor_like(eps)``
  next to a backward that takes no epsilon) and bind it at execute: cudnn-frontend's
  graph holds only the tensors its nodes use, so such an input is not part of it.
  Here it leaves the C graph before validation (the C library would keep it as an
  input that takes no buffer; leaving matches cudnn-frontend's graph, which never had
  it) and its binding is accepted and ignored, as a folded constant's.

(A tensor the user created given as an op's *output*, e.g. ``sdpa_backward(...,
dBias=t)``, and a reshape whose dims are set on its output later, ``y =
graph.reshape(x); y.set_dim(dims)``, are the C library's own:
``cudnnfe_graph_set_next_output``, and a reshape takes its output's dims.)

Each is done here by editing the graph description (``docs/graph-json.md``:
:meth:`pygraph.serialize_description`), loading it into a fresh C graph and adopting
that graph. UIDs, names, shapes, types, scalars and attributes survive the
round trip, so every :class:`Tensor` of the graph stays valid.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List

from . import _constants

if TYPE_CHECKING:  # pragma: no cover
    from ._graph import pygraph

__all__ = ["finalize"]


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


def finalize(g: "pygraph") -> None:
    """Apply the pending edits before the graph is validated, built or serialized.

    Inputs folded into an op as a number (:mod:`cudnnfe._constants`) that no op
    reads leave the graph, as do other graph inputs no op reads. A no-op (no C
    call) when nothing is pending.
    """
    if all(f.dropped for f in g._folded.values()) and not _may_have_unread_inputs(g):
        return
    doc = _load(g)
    entries = {t["uid"]: t for t in doc["tensors"]}
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
        _store(g, doc)
    for uid in dropped:
        g._folded[uid].drop(g)


def _may_have_unread_inputs(g: "pygraph") -> bool:
    """False when every tensor the Python side made as an input is known to be read: an
    op took it as an operand (the cheap test that spares a graph description round trip;
    an input read some other way takes the round trip, as before)."""
    return any(t._role == "input" and t._uid > 0 and t._uid not in g._operand_uids
               for t in g._tensors.values())
