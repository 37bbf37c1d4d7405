"""A graph description in cudnn-frontend's serialized-graph JSON shape, made from cudnnfe's own
(``docs/graph-json.md``): the text cudnn-frontend logs when it validates a graph.

cudnn-frontend's shape (its ``Graph::serialize``): ``context`` (name, the three data types,
``sm_count``, the dynamic/override shape flags), ``json_version``, the backend and frontend
versions, ``nodes`` (each with its ``tag``, ``name``, attributes, and ``inputs`` / ``outputs``
as ``{port: tensor key}``) and ``tensors`` (``{key: {name, data_type, dim, stride, uid,
is_virtual, ...}}``), keys sorted as nlohmann's json sorts them. Ports and tags are
cudnn-frontend's names; attributes other than attention's keep cudnnfe's names.
This module only converts: it neither reads the graph from C nor writes any log
(:mod:`cudnnfe._fe_log` does).
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

__all__ = ["TAGS", "frontend_graph_json"]

# The cudnn-frontend API level cudnnfe follows (1.32), as its CUDNN_FRONTEND_VERSION number.
FRONTEND_VERSION = 13200

# cudnnfe op -> cudnn-frontend node tag (include/cudnn_frontend/node/*.h). cudnn-frontend's
# softmax node writes no tag; "SOFTMAX" is cudnnfe's.
TAGS = {
    "conv_fprop": "CONV_FPROP", "conv_dgrad": "CONV_DGRAD", "conv_wgrad": "CONV_WGRAD",
    "matmul": "MATMUL", "pointwise": "POINTWISE", "reduction": "REDUCTION",
    "sdpa": "SDPA", "sdpa_backward": "SDPA_BWD",
    "sdpa_fp8": "SDPA_FP8_FWD", "sdpa_fp8_backward": "SDPA_FP8_BWD",
    "layernorm": "LAYER_NORM", "layernorm_backward": "LAYER_NORM_BPROP",
    "rmsnorm": "RMS_NORM", "rmsnorm_backward": "RMS_NORM_BPROP",
    "batchnorm": "BATCHNORM", "batchnorm_inference": "BATCHNORM_INFERENCE",
    "batchnorm_backward": "DBN", "instancenorm": "INSTANCE_NORM",
    "instancenorm_backward": "INSTANCE_NORM_BPROP", "adalayernorm": "ADA_LAYER_NORM",
    "adalayernorm_backward": "ADA_LAYER_NORM_BPROP", "softmax": "SOFTMAX",
    "reshape": "RESHAPE", "transpose": "TRANSPOSE", "slice": "SLICE",
    "concatenate": "CONCATENATE", "resample": "RESAMPLE", "rng": "RNG",
    "block_scale_quantize": "BLOCK_SCALE_QUANTIZE",
    "block_scale_dequantize": "BLOCK_SCALE_DEQUANTIZE", "genstats": "GENSTATS",
    "bn_finalize": "BN_FINALIZE", "dbn_weight": "DBN_WEIGHT",
    "moe_grouped_matmul": "MOE_GROUPED_MATMUL",
    "moe_grouped_matmul_backward": "MOE_GROUPED_MATMUL_BWD",
    "paged_cache_load": "PAGED_CACHE_LOAD",
}

# Port names that are not cudnnfe's upper-cased (cudnn-frontend's utils/serialize.h enums).
_ATTENTION_PORTS = {
    "q": "Q", "k": "K", "v": "V", "o": "O", "O": "O", "dO": "dO", "stats": "Stats",
    "dQ": "dQ", "dK": "dK", "dV": "dV", "dBias": "dBias", "bias": "Bias",
    "attn_scale": "Attn_scale", "seq_len_q": "SEQ_LEN_Q", "seq_len_kv": "SEQ_LEN_KV",
    "dropout_seed": "Seed", "dropout_offset": "Offset", "dropout_mask": "Dropout_mask",
    "dropout_scale": "Dropout_scale", "dropout_scale_inv": "Dropout_scale_inv",
    "page_table_k": "Page_table_K", "page_table_v": "Page_table_V", "sink_token": "SINK_TOKEN",
    "dSink_token": "DSINK_TOKEN", "block_mask": "Block_mask",
}
_PORTS = {
    "conv_fprop": {"image": "X", "weight": "W"},
    "conv_dgrad": {"loss": "DY", "weight": "W"},
    "conv_wgrad": {"image": "X", "loss": "DY"},
    "pointwise": {"in0": "IN_0", "in1": "IN_1", "in2": "IN_2", "out": "OUT_0"},
    "resample": {"index": "Index"},
    "rng": {"seed": "Seed", "offset": "Offset"},
    "rmsnorm": {"inv_rms": "INV_VARIANCE"},
    "rmsnorm_backward": {"inv_rms": "INV_VARIANCE"},
    "block_scale_quantize": {"scale": "scale"},
    "block_scale_dequantize": {"scale": "scale"},
    "moe_grouped_matmul": {"token": "Token", "weight": "Weight",
                           "first_token_offset": "FirstTokenOffset",
                           "token_index": "TokenIndex", "token_ks": "TokenKs",
                           "output": "Output"},
    "moe_grouped_matmul_backward": {"doutput": "DOutput", "token": "Token",
                                    "first_token_offset": "FirstTokenOffset",
                                    "dweight": "DWeight"},
    "paged_cache_load": {"container": "container", "seq_len": "seqLen",
                         "page_table": "pageTable", "y": "yOut"},
}
_ATTENTION_OPS = ("sdpa", "sdpa_backward", "sdpa_fp8", "sdpa_fp8_backward")


def _port(op: str, port: str) -> str:
    if op in _ATTENTION_OPS:
        if port in _ATTENTION_PORTS:
            return _ATTENTION_PORTS[port]
        # descale_q -> Descale_Q, scale_dQ -> Scale_dQ, amax_s -> Amax_S (FP8 ports).
        head, _, tail = port.partition("_")
        if not tail:
            return port
        return f"{head.capitalize()}_{tail if tail[:1] == 'd' else tail.upper()}"
    return _PORTS.get(op, {}).get(port, port.upper())


def _data_type(name: Optional[str]) -> Optional[str]:
    return None if name in (None, "NOT_SET") else name


def _tensor(t: Dict[str, Any], key_is_uid: bool) -> Dict[str, Any]:
    scalar = t.get("kind") == "scalar"
    return {
        "name": t.get("name", ""), "data_type": _data_type(t.get("data_type")),
        "dim": t.get("dims", []), "stride": t.get("strides", []),
        "is_virtual": t.get("kind") == "virtual",
        "pass_by_value": t.get("value") if scalar else None, "is_pass_by_value": scalar,
        "reordering_type": "NONE", "uid": t["uid"], "uid_assigned": key_is_uid,
    }


def _tensor_keys(tensors: List[Dict[str, Any]]) -> Dict[int, str]:
    """cudnn-frontend keys a tensor by its name, or by its UID when the UID was assigned;
    cudnnfe uses the UID where a name is empty or shared."""
    counts: Dict[str, int] = {}
    for t in tensors:
        counts[t.get("name", "")] = counts.get(t.get("name", ""), 0) + 1
    return {t["uid"]: (t["name"] if t.get("name") and counts[t["name"]] == 1 else str(t["uid"]))
            for t in tensors}


def _attention_attributes(op: str, a: Dict[str, Any], q_type: Optional[str]) -> Dict[str, Any]:
    """cudnn-frontend's SDPA attribute names: a causal mask is a right bound of 0, and FP8
    attention's matmuls run in q's type (``mma_core_mode``)."""
    right = a.get("window_right", -1)
    if a.get("causal_mask") or a.get("causal_mask_bottom_right"):
        right = 0
    left = a.get("window_left", -1)
    alignment = "BOTTOM_RIGHT" if a.get("causal_mask_bottom_right") else a.get(
        "diagonal_alignment", "TOP_LEFT")
    scale = a.get("attn_scale")
    out = {
        "attn_scale_value": scale if isinstance(scale, (int, float)) and scale else None,
        "left_bound": left if left >= 0 else None, "right_bound": right if right >= 0 else None,
        "diagonal_alignment": alignment, "padding_mask": bool(a.get("padding_mask", False)),
        "dropout_probability": a.get("dropout_probability") or None,
    }
    if op in ("sdpa", "sdpa_fp8"):
        out.update(generate_stats=a.get("generate_stats"), alibi_mask=bool(a.get("alibi_mask")),
                   max_seq_len_kv=a.get("max_seq_len_kv") or None,
                   implementation=a.get("implementation", "AUTO"), is_mxfp8=False,
                   mma_core_mode=q_type if op == "sdpa_fp8" else None)
    else:
        out.update(is_deterministic_algorithm=bool(a.get("deterministic", False)))
    return out


def _node(n: Dict[str, Any], keys: Dict[int, str], types: Dict[int, Optional[str]],
          io_type: Optional[str]) -> Dict[str, Any]:
    op = n["op"]
    attrs = dict(n.get("attributes", {}))
    if op in _ATTENTION_OPS:  # before validation q's type may still be the graph's io type
        q_type = types.get(n.get("inputs", {}).get("q")) or io_type
        attrs = _attention_attributes(op, attrs, q_type)
    if op == "concatenate":  # cudnn-frontend numbers a concatenation's inputs 0, 1, ...
        inputs = {str(i): keys[uid] for i, uid in enumerate(n.get("inputs", {}).values())}
    else:
        inputs = {_port(op, p): keys[uid] for p, uid in n.get("inputs", {}).items()
                  if not p.startswith("ragged_offset_")}
    outputs = {_port(op, p): keys[uid] for p, uid in n.get("outputs", {}).items()}
    return dict(attrs, tag=TAGS.get(op, op.upper()), name=n.get("name", ""),
                compute_data_type=_data_type(n.get("compute_data_type")),
                inputs=inputs, outputs=outputs)


def _attach_ragged_offsets(nodes: List[Dict[str, Any]], tensors: Dict[int, Dict[str, Any]],
                           keys: Dict[int, str]) -> None:
    """cudnn-frontend holds a ragged offset on the tensor it describes, not as a port."""
    described = {"q": ("q", "dQ"), "k": ("k", "dK"), "v": ("v", "dV"), "o": ("o", "O", "dO")}
    for n in nodes:
        ports = dict(n.get("inputs", {}), **n.get("outputs", {}))
        for which, names in described.items():
            offset = n.get("inputs", {}).get(f"ragged_offset_{which}")
            if offset is None:
                continue
            for port in names:
                if port in ports and ports[port] in tensors:
                    tensors[ports[port]]["ragged_offset_uid"] = offset
                    tensors[ports[port]]["ragged_offset_name"] = keys[offset]


def frontend_graph_json(description: bytes, backend_version: str, sm_count: Optional[int] = None
                        ) -> Dict[str, Any]:
    """cudnnfe's graph description (``pygraph.serialize()``) as cudnn-frontend's JSON object."""
    d = json.loads(description)
    keys = _tensor_keys(d.get("tensors", []))
    tensors = {t["uid"]: _tensor(t, keys[t["uid"]] == str(t["uid"])) for t in d.get("tensors", [])}
    types = {uid: t["data_type"] for uid, t in tensors.items()}
    _attach_ragged_offsets(d.get("nodes", []), tensors, keys)
    return {
        "context": {
            "name": d.get("name", ""),
            "compute_data_type": _data_type(d.get("compute_data_type")),
            "intermediate_data_type": _data_type(d.get("intermediate_data_type")),
            "io_data_type": _data_type(d.get("io_data_type")),
            "sm_count": sm_count,
            "is_dynamic_shape_enabled": bool(d.get("dynamic_shape_enabled", False)),
            "is_override_shape_enabled": bool(d.get("override_shape_enabled", False)),
        },
        "json_version": "1.0",
        "cudnn_backend_version": backend_version,
        "cudnn_frontend_version": FRONTEND_VERSION,
        "nodes": [_node(n, keys, types, _data_type(d.get("io_data_type")))
                  for n in d.get("nodes", [])],
        "tensors": {keys[uid]: t for uid, t in tensors.items()},
    }


def dumps(obj: Dict[str, Any]) -> str:
    """One line, keys sorted and no spaces, as nlohmann's ``operator<<`` writes it."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False,
                      default=str)
