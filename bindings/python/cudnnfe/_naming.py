"""cudnn-frontend's names for operation outputs: ``<node name>::<PORT>`` (``ln::Y``,
``bias::OUT_0``, ``mm::C``), given when an op is added.

The C library names an output ``<node>::<port>`` with its own port names
(``ln::y``, ``bias::out``; ``src/graph/node.cpp``), which graph JSON also
uses. cudnn-frontend's code looks tensors up by its own spelling
(``graph["ln::Y"]``, ``Graph(outputs=["ln::Y"])``), so the Python layer
renames each new output once, right after its op is added. Graph inputs made
from arrays keep their ``<node>::<keyword>`` names (``ln::epsilon``), as
cudnn-frontend's ``Graph`` wrapper calls them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional

from ._enums import tensor_kind
from ._lib import ffi, lib
from ._util import _cstr, _string

if TYPE_CHECKING:  # pragma: no cover
    from ._graph import pygraph

__all__ = ["FE_PORTS", "RMSNORM_BACKWARD_PORTS", "name_outputs"]

#: C output port -> cudnn-frontend's (include/cudnn_frontend/graph_interface.h and node/*.h
#: name outputs ``attributes.name + "::<PORT>"``).
FE_PORTS: Mapping[str, str] = {
    "y": "Y", "dx": "DX", "dw": "DW", "c": "C", "out": "OUT_0",
    "mean": "MEAN", "inv_variance": "INV_VARIANCE", "inv_rms": "INV_VARIANCE",
    "dscale": "DSCALE", "dbias": "DBIAS",
    "next_running_mean": "NEXT_RUNNING_MEAN", "next_running_var": "NEXT_RUNNING_VAR",
    "index": "Index", "stats": "Stats", "sum": "SUM", "sq_sum": "SQ_SUM",
    "eq_scale": "EQ_SCALE", "eq_bias": "EQ_BIAS", "eq_scale_dy": "EQ_SCALE_DY",
    "eq_scale_x": "EQ_SCALE_X",
    "amax_s": "Amax_S", "amax_o": "Amax_O", "amax_dQ": "Amax_dQ", "amax_dK": "Amax_dK",
    "amax_dV": "Amax_dV", "amax_dP": "Amax_dP",
}

#: rmsnorm_backward spells its gradients differently in cudnn-frontend.
RMSNORM_BACKWARD_PORTS: Mapping[str, str] = {"dscale": "Dscale", "dbias": "Dbias"}

_OP_OUTPUT_KINDS = (int(tensor_kind.VIRTUAL), int(tensor_kind.OUTPUT))


def name_outputs(g: "pygraph", node: str, overrides: Optional[Mapping[str, str]] = None,
                 first: Optional[int] = None) -> None:
    """Rename the outputs of node ``node`` added since the last call to cudnn-frontend's names.

    ``first``: the node's first output. When it is the one tensor made since the last call
    (the common case: one output, no implicit scalar or input), only it is looked at;
    otherwise every tensor of the graph is, so that adding nodes stays linear in their count.
    """
    prefix = node + "::"
    name_out, kind_out = g._scratch.name, g._scratch.kind
    count = g._c_tensor_count()
    fresh = count - g._c_tensors_seen
    g._c_tensors_seen = count
    # A tensor Python has not wrapped yet was made by the C op just added (inputs,
    # scalars and caller-made outputs are wrapped when Python makes them).
    if first is not None and fresh == 1 and first not in g._tensors:
        uids = [first]
    else:
        uids = g._all_c_uids()
    for uid in uids:
        if uid in g._named_uids:
            continue
        g._named_uids.add(uid)
        g._check(lib.cudnnfe_tensor_get_name(g._ptr, uid, name_out))
        name = _string(name_out[0])
        if not name.startswith(prefix):
            continue
        port = name[len(prefix):]
        fe = (overrides or {}).get(port) or FE_PORTS.get(port)
        if fe is None or fe == port:
            continue
        g._check(lib.cudnnfe_tensor_get_kind(g._ptr, uid, kind_out))
        if kind_out[0] in _OP_OUTPUT_KINDS:
            g._check(lib.cudnnfe_tensor_set_name(g._ptr, uid, _cstr(prefix + fe, "name")))
