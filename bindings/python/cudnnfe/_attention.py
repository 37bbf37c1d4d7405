"""Attention on :class:`pygraph`: ``sdpa``, ``sdpa_backward``, ``sdpa_fp8``, ``sdpa_fp8_backward``
and ``paged_cache_load`` (the gather of a paged K/V cache).

Method names and keywords are cudnn-frontend's, so its attention code runs
unchanged; ``docs/attention.md`` defines every option exactly. The C
functions are ``cudnnfe_graph_add_sdpa``, ``cudnnfe_graph_add_sdpa_backward_ex``
(which adds dBias), ``cudnnfe_graph_add_sdpa_fp8`` and
``cudnnfe_graph_add_sdpa_fp8_backward``. cudnn-frontend features the C ABI
lacks raise :class:`NotOfferedError` naming them.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple, Union

from . import _arrays, _ragged, _structs
from ._enums import attention_implementation, data_type, diagonal_alignment
from ._errors import NotOfferedError
from ._lib import ffi, lib
from ._tensor import Tensor
from ._util import DType, Operand, _cstr, _dtype, _enum_value, _int, _is_number, _number

__all__ = ["AttentionOps"]

# cudnn-frontend keywords that the C ABI lacks for some attention op, with what they are.
_FEATURES = {
    "rng_dump": "dumping the dropout mask",
    "fn": "score modification callbacks",
    "score_max": "the score-max output",
    "score_sum_exp": "the score sum-of-exponents output",
    "sink_token": "attention sinks",
    "dSink_token": "attention sinks",
    "use_deterministic_algorithm": "a deterministic algorithm",
}

# Keywords whose 0 cudnn-frontend treats as unset, like None (a length or bound).
_ZERO_IS_UNSET = {"max_total_seq_len_q", "max_total_seq_len_kv"}


def _is_unset(key: str, value: Any) -> bool:
    """Whether cudnn-frontend treats ``value`` of keyword ``key`` as not given."""
    if value is None or value is False:
        return True
    if key in _ZERO_IS_UNSET and _is_number(value) and value == 0:
        return True
    return key == "implementation" and str(getattr(value, "name", value)).upper() == "AUTO"


def _refuse(node: str, given: Dict[str, Any]) -> Optional[NotOfferedError]:
    """The NotOfferedError for the cudnn-frontend features given a non-default value (None
    when none is). Every key has an entry in ``_FEATURES``
    (bindings/python/tests/test_attention_refusals.py checks every caller). The attention
    methods raise it at validation, where cudnn-frontend refuses a graph, through
    ``pygraph._defer``."""
    active = []
    for key, value in given.items():
        if _is_unset(key, value):
            continue
        active.append(f"{key} ({_FEATURES.get(key, 'a cudnn-frontend option')})")
    if not active:
        return None
    return NotOfferedError(f"{node}: {', '.join(active)} "
                           f"{'is' if len(active) == 1 else 'are'} not offered by the "
                           "cudnnfe C ABI")


def _bound(node: str, key: str, value: Any) -> int:
    """A max_total_seq_len_* bound: 0 when unset (None, or cudnn-frontend's 0)."""
    return 0 if _is_unset(key, value) else _int(value, f"{node}: {key}")


def _flag(value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return 1 if value else 0
    raise TypeError(f"{what} must be a bool, not {value!r}")


def _attn_scale_value(node: str, value: Any) -> float:
    v = _number(value, f"{node}: attn_scale")
    if v == 0 or not math.isfinite(v):
        raise ValueError(f"{node}: attn_scale is {value}; expected a finite, non-zero number "
                         "(None: 1/sqrt(d))")
    return v


class AttentionOps:
    """The attention methods of :class:`pygraph` (a mixin; see :mod:`cudnnfe._attention`)."""

    # ---- shared option handling --------------------------------------------------

    def _attn_scale_option(self, o: Any, node: str, attn_scale: Any) -> None:
        if attn_scale is None:
            return
        if not _is_number(attn_scale) and (isinstance(attn_scale, Tensor)
                                           or _arrays.is_array(attn_scale)):
            o.attn_scale_tensor = self._operand(attn_scale, node, "attn_scale")
        else:
            o.attn_scale = _attn_scale_value(node, attn_scale)

    @staticmethod
    def _band_options(o: Any, node: str, *, window: Any, left_bound: Any, right_bound: Any,
                      alignment: Any, names: Tuple[str, str, str]) -> None:
        """The diagonal band fields (window_left, window_right, diagonal_alignment) of sdpa's
        and sdpa_fp8's options; ``names`` are the keywords of the window, left and right bound."""
        window_name, left_name, right_name = names
        if window is not None and left_bound is not None:
            raise ValueError(f"{node}: {window_name} and {left_name} are the same bound; give one")
        left = window if window is not None else left_bound
        if left is not None:
            o.window_left = _int(left, f"{node}: {left_name}")
        if right_bound is not None:
            o.window_right = _int(right_bound, f"{node}: {right_name}")
        if alignment is not None:
            o.diagonal_alignment = int(_enum_value(diagonal_alignment, alignment,
                                                   "diagonal_alignment"))

    def _mask_options(self, o: Any, node: str, *, use_causal_mask: Any,
                      use_causal_mask_bottom_right: Any, use_padding_mask: Any,
                      seq_len_q: Any, seq_len_kv: Any, sliding_window_length: Any,
                      left_bound: Any, right_bound: Any, alignment: Any,
                      use_alibi_mask: Any, left_name: str) -> None:
        o.causal_mask = _flag(use_causal_mask, f"{node}: use_causal_mask")
        o.causal_mask_bottom_right = _flag(use_causal_mask_bottom_right,
                                           f"{node}: use_causal_mask_bottom_right")
        self._band_options(o, node, window=sliding_window_length, left_bound=left_bound,
                           right_bound=right_bound, alignment=alignment,
                           names=("sliding_window_length", left_name,
                                  "diagonal_band_right_bound"))
        o.alibi_mask = _flag(use_alibi_mask, f"{node}: use_alibi_mask")
        self._padding_options(o, node, use_padding_mask, seq_len_q, seq_len_kv)

    def _padding_options(self, o: Any, node: str, use_padding_mask: Any, seq_len_q: Any,
                         seq_len_kv: Any) -> None:
        """The padding fields every attention options struct has (padding_mask, seq_len_q,
        seq_len_kv)."""
        o.padding_mask = _flag(use_padding_mask, f"{node}: use_padding_mask")
        o.seq_len_q = self._operand(seq_len_q, node, "seq_len_q", optional=True)
        o.seq_len_kv = self._operand(seq_len_kv, node, "seq_len_kv", optional=True)

    def _dropout_options(self, o: Any, node: str, dropout: Any, seed: Any, offset: Any,
                         backward: bool) -> None:
        """Fill the dropout fields from cudnn-frontend's tuple or the (p, seed=, offset=) form."""
        forms = ("(probability, seed, offset) or (mask, scale, scale_inv)" if backward
                 else "(probability, seed, offset) or (mask, scale)")
        if dropout is None:
            if seed is not None or offset is not None:
                raise ValueError(f"{node}: dropout_seed / dropout_offset given without dropout")
            return
        mask = scale = scale_inv = None
        if _is_number(dropout):
            p = dropout
        elif isinstance(dropout, (tuple, list)):
            items = tuple(dropout)
            if len(items) == 3 and _is_number(items[0]):
                if seed is not None or offset is not None:
                    raise ValueError(f"{node}: the dropout tuple gives the seed and offset; "
                                     "dropout_seed / dropout_offset must then be None")
                p, seed, offset = items
            elif len(items) in (2, 3) and not _is_number(items[0]) and items[0] is not None:
                mask, scale = items[0], items[1]
                scale_inv = items[2] if len(items) == 3 else None
                p = None
            else:
                raise TypeError(f"{node}: dropout must be a tuple {forms}, not {dropout!r}")
        else:
            raise TypeError(f"{node}: dropout must be a tuple {forms} (or a probability with "
                            f"dropout_seed and dropout_offset), not {type(dropout).__name__}")
        if p is not None:
            o.dropout_probability = _number(p, f"{node}: dropout probability")
            o.dropout_seed = self._operand(seed, node, "dropout_seed", optional=True,
                                           scalar=True, scalar_dtype=data_type.INT64)
            o.dropout_offset = self._operand(offset, node, "dropout_offset", optional=True,
                                             scalar=True, scalar_dtype=data_type.INT64)
            return
        if seed is not None or offset is not None:
            raise ValueError(f"{node}: dropout_seed / dropout_offset apply to the drawn form, "
                             "not to a given mask")
        o.dropout_mask = self._operand(mask, node, "dropout_mask")
        o.dropout_scale = self._operand(scale, node, "dropout_scale", optional=True, scalar=True)
        if backward:
            o.dropout_scale_inv = self._operand(scale_inv, node, "dropout_scale_inv",
                                                optional=True, scalar=True)
        # A forward's (mask, scale, scale_inv) tuple may be shared with the backward:
        # the forward does not use scale_inv (as cudnn-frontend).

    def _backward_offsets(self, node: str, opts: Any, q: Any, k: Any, v: Any, o: Any,
                          dO: Any, stats: Any) -> Dict[str, Any]:
        """Ragged offsets of the backward's operands; dO must have o's (one C field)."""
        offsets = _ragged.take_input_offsets(self, node, opts,
                                             dict(q=q, k=k, v=v, o=o, stats=stats))
        if _ragged.offset_of(dO) is not offsets["o"]:
            self._defer(NotOfferedError(f"{node}: dO's ragged offsets must be o's (the C ABI "
                                        "gives dO the layout of o)"))
        _ragged.mark_read(self, dO)
        return offsets

    def _paged_options(self, o: Any, node: str, k_table: Any, v_table: Any,
                       max_seq_len_kv: Any) -> None:
        """Paged K/V caches: k or v is a page container read through its page table
        (``page_table_k``/``page_table_v``, ``max_seq_len_kv``; docs/attention.md)."""
        # A packed page table's offsets (set_ragged_offset on the table) place each
        # batch's entries: ragged_offset_page_table_k / _v (FP8 attention has none: its
        # caller defers that refusal to validation).
        if hasattr(o, "ragged_offset_page_table_k"):
            _ragged.take_input_offsets(self, node, o, dict(page_table_k=k_table,
                                                           page_table_v=v_table))
        o.page_table_k = self._operand(k_table, node, "paged_attention_k_table", optional=True)
        o.page_table_v = self._operand(v_table, node, "paged_attention_v_table", optional=True)
        if max_seq_len_kv is not None:
            o.max_seq_len_kv = _int(max_seq_len_kv, f"{node}: paged_attention_max_seq_len_kv")

    def _uid_dims(self, uid: int) -> list:
        return self._wrap(uid).get_dim()

    def _score_dims(self, qu: int, ku: int, vu: int, o: Any) -> list:
        """The scores' ``[b, h_q, s_q, s_kv]``; a paged cache's s_kv as
        docs/attention.md infers it (max_seq_len_kv, the unpaged tensor's, or pages
        times the page size)."""
        q_dims = self._uid_dims(qu)
        s_kv = self._uid_dims(ku)[2]
        k_table = getattr(o, "page_table_k", 0)
        v_table = getattr(o, "page_table_v", 0)
        if k_table or v_table:
            if getattr(o, "max_seq_len_kv", 0) > 0:
                s_kv = o.max_seq_len_kv
            elif not k_table:
                s_kv = self._uid_dims(ku)[2]
            elif not v_table:
                s_kv = self._uid_dims(vu)[2]
            else:
                s_kv = self._uid_dims(k_table)[2] * self._uid_dims(ku)[2]
        return [q_dims[0], q_dims[1], q_dims[2], s_kv]

    def _score_mod(self, node: str, keyword: str, fn: Any, dims: list) -> int:
        """Builds a score modifier: opens its scope (``cudnnfe_graph_begin_score_mod``),
        calls ``fn(self, placeholder)`` so that its pointwise ops land in the scope,
        and closes it with the tensor ``fn`` returns. Returns the placeholder's UID
        for the options' ``score_mod`` field (0 without ``fn``)."""
        if fn is None:
            return 0
        if not callable(fn):
            raise TypeError(f"{node}: {keyword} must be a callable f(graph, score) -> Tensor, "
                            f"not {type(fn).__name__}")
        c_dims = ffi.new("int64_t[]", [int(d) for d in dims])
        out = ffi.new("int64_t *")
        cname = _cstr(f"{node}::{keyword}", keyword)
        self._check(lib.cudnnfe_graph_begin_score_mod(self._ptr, cname, 4, c_dims, out))
        score = int(out[0])
        placeholder = self._wrap(score, "virtual")
        result = fn(self, placeholder)
        if not isinstance(result, Tensor) or result._graph is not self:
            raise TypeError(f"{node}: {keyword} must return a tensor of this graph (the modified "
                            f"scores), not {type(result).__name__}")
        self._check(lib.cudnnfe_graph_end_score_mod(self._ptr, score, result._uid))
        return score

    @staticmethod
    def _bias_argument(node: str, bias: Any, attn_bias: Any) -> Any:
        if bias is not None and attn_bias is not None:
            raise ValueError(f"{node}: bias and attn_bias are the same tensor; give one")
        return bias if bias is not None else attn_bias

    # ---- sdpa ---------------------------------------------------------------------

    def sdpa(self, q: Operand, k: Operand, v: Operand, attn_scale: Any = None,
             is_inference: Optional[bool] = None, use_causal_mask: bool = False,
             use_causal_mask_bottom_right: bool = False, generate_stats: Optional[bool] = None,
             attn_bias: Optional[Operand] = None, compute_data_type: DType = None,
             name: Optional[str] = None, *, bias: Optional[Operand] = None,
             use_alibi_mask: bool = False, use_padding_mask: bool = False,
             seq_len_q: Optional[Operand] = None, seq_len_kv: Optional[Operand] = None,
             sliding_window_length: Optional[int] = None, diagonal_alignment: Any = None,
             diagonal_band_left_bound: Optional[int] = None,
             diagonal_band_right_bound: Optional[int] = None, dropout: Any = None,
             dropout_seed: Any = None, dropout_offset: Any = None, rng_dump: Any = None,
             block_mask: Any = None, paged_attention_k_table: Any = None,
             paged_attention_v_table: Any = None, paged_attention_max_seq_len_kv: Any = None,
             score_mod: Any = None, implementation: Any = None, score_max: Any = None,
             score_sum_exp: Any = None, sink_token: Any = None,
             unfuse_fma: bool = False) -> Tuple[Tensor, Optional[Tensor]]:
        """Scaled dot-product attention forward (``cudnnfe_graph_add_sdpa``); returns ``(O, stats)``.

        q ``[b, h_q, s_q, d]``, k ``[b, h_kv, s_kv, d]``, v ``[b, h_kv, s_kv, d_v]``
        in logical BHSD order with any strides (BSHD storage included);
        ``h_q`` is a multiple of ``h_kv`` (GQA, MQA). O is ``[b, h_q, s_q, d_v]``.
        ``docs/attention.md`` defines every option.

        Args:
            attn_scale: softmax scale on Q·Kᵀ: a float (None: ``1/sqrt(d)``) or
                a one-element FLOAT tensor (a graph input read at every execute).
            is_inference, generate_stats: stats ``[b, h_q, s_q, 1]`` FLOAT
                (log-sum-exp) are written when ``generate_stats`` is true or
                ``is_inference`` is False.
            use_causal_mask, use_causal_mask_bottom_right: causal masks aligned
                at the top-left / bottom-right corner.
            bias (or attn_bias): additive bias broadcastable to ``[b, h_q, s_q, s_kv]``.
            use_padding_mask, seq_len_q, seq_len_kv: variable sequence lengths
                (INT32 ``[b, 1, 1, 1]`` tensors).
            diagonal_band_left_bound (or sliding_window_length),
                diagonal_band_right_bound, diagonal_alignment: the diagonal band
                (sliding window) around each row's diagonal.
            use_alibi_mask: ALiBi with cudnn-frontend's slopes (needs a causal
                top-left mask).
            paged_attention_k_table, paged_attention_v_table: page tables
                (INT32 ``[b, 1, pages, 1]``) making k / v page containers
                ``[num_pages, h_kv, page_size, d]``; need use_padding_mask.
                A table with ``set_ragged_offset`` is packed: batch n's entries
                start at its offset (cudnn-frontend's sample 53).
                paged_attention_max_seq_len_kv: the logical s_kv.
            dropout: ``(probability, seed, offset)`` with one-element INT64
                seed and offset tensors (or Python ints: scalars), or
                ``(mask, scale)``; or a probability with ``dropout_seed=`` and
                ``dropout_offset=``.

            implementation: :class:`attention_implementation` (or its name);
                None is ``AUTO``.
            sink_token: a FLOAT ``[1, h_q, 1, 1]`` sink logit per head, added
                to each row's softmax denominator.
            block_mask: a UINT8 bit-packed ``[b, h_q, ceil(s_q/128),
                ceil(ceil(s_kv/128)/8)]`` mask of 128x128 score tiles
                (``UNIFIED`` only, cuDNN 9.14 and newer).

            score_mod: cudnn-frontend's score modifier, ``score_mod(graph, score)``:
                it adds pointwise ops (``gen_index``, ``cmp_*``,
                ``binary_select``, ``tanh``...) to this graph on ``score`` (the
                scores after ``attn_scale``, ``[b, h_q, s_q, s_kv]`` FLOAT) and
                returns the tensor the softmax reads (docs/attention.md, "Score
                modifiers"). With it, ``seq_len_q``/``seq_len_kv`` may be given
                without ``use_padding_mask`` (the modifier reads them).

            score_max, score_sum_exp: tensors made with ``graph.tensor(...)``
                (FLOAT ``[b, h_q, s_q, 1]``) that receive the softmax's row max
                and its sum of exponentials (with a sink both include it).
            rng_dump: a tensor made with ``graph.tensor(...)`` (FLOAT ``[b, h_q,
                s_q, s_kv]``) that receives the drawn dropout mask (0 or 1).
                Each of the three becomes the op's output, a graph output.
            unfuse_fma: the unified implementation's softmax with unfused
                multiply-adds (cuDNN 9.21; ignored by the composite graph, as in
                cudnn-frontend).
        """
        node = self._node_name("sdpa", name)
        bias = self._bias_argument(node, bias, attn_bias)
        o = _structs.new("cudnnfe_sdpa_options_t")
        cname = _cstr(node, "name")
        o.name = cname
        stats = bool(generate_stats) or (is_inference is not None and not is_inference)
        o.generate_stats = 1 if stats else 0
        o.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        qu = self._operand(q, node, "q")
        ku = self._operand(k, node, "k")
        vu = self._operand(v, node, "v")
        # O is padded unless given its own offsets (O.set_ragged_offset after this call).
        _ragged.take_input_offsets(self, node, o, dict(q=q, k=k, v=v))
        o.bias = self._operand(bias, node, "bias", optional=True)
        self._attn_scale_option(o, node, attn_scale)
        self._mask_options(o, node, use_causal_mask=use_causal_mask,
                           use_causal_mask_bottom_right=use_causal_mask_bottom_right,
                           use_padding_mask=use_padding_mask, seq_len_q=seq_len_q,
                           seq_len_kv=seq_len_kv, sliding_window_length=sliding_window_length,
                           left_bound=diagonal_band_left_bound,
                           right_bound=diagonal_band_right_bound,
                           alignment=diagonal_alignment, use_alibi_mask=use_alibi_mask,
                           left_name="diagonal_band_left_bound")
        self._dropout_options(o, node, dropout, dropout_seed, dropout_offset, backward=False)
        self._paged_options(o, node, paged_attention_k_table, paged_attention_v_table,
                            paged_attention_max_seq_len_kv)
        if implementation is not None:
            o.implementation = int(_enum_value(attention_implementation, implementation,
                                               "implementation"))
        o.sink_token = self._operand(sink_token, node, "sink_token", optional=True)
        o.block_mask = self._operand(block_mask, node, "block_mask", optional=True)
        o.score_max = self._caller_output(node, "score_max", score_max)
        o.score_sum_exp = self._caller_output(node, "score_sum_exp", score_sum_exp)
        o.rng_dump = self._caller_output(node, "rng_dump", rng_dump)
        # Offsets set on score_max / score_sum_exp before this call (later ones go to the C
        # graph through cudnnfe_graph_set_ragged_offset, as for O and stats).
        _ragged.take_input_offsets(self, node, o, dict(score_max=score_max,
                                                       score_sum_exp=score_sum_exp))
        o.unfuse_fma = _flag(unfuse_fma, f"{node}: unfuse_fma")
        dims = self._score_dims(qu, ku, vu, o)
        o.score_mod = self._score_mod(node, "score_mod", score_mod, dims)
        out_o = ffi.new("int64_t *")
        out_s = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_sdpa(self._ptr, qu, ku, vu, o, out_o, out_s))
        result = self._added(node, int(out_o[0]))
        st = self._wrap(int(out_s[0]), "virtual") if stats and out_s[0] else None
        for given in (score_max, score_sum_exp, rng_dump):
            if given is not None:
                given._role = "output"
        _ragged.attach(self, (q, k, v, paged_attention_k_table, paged_attention_v_table,
                              result, st, score_max, score_sum_exp))
        return result, st

    def sdpa_backward(self, q: Operand, k: Operand, v: Operand, o: Operand, dO: Operand,
                      stats: Operand, attn_scale: Any = None, use_causal_mask: bool = False,
                      use_causal_mask_bottom_right: bool = False,
                      attn_bias: Optional[Operand] = None,
                      use_deterministic_algorithm: bool = False,
                      compute_data_type: DType = None, name: Optional[str] = None, *,
                      bias: Optional[Operand] = None, dBias: Any = None,
                      use_alibi_mask: bool = False, use_padding_mask: bool = False,
                      seq_len_q: Optional[Operand] = None, seq_len_kv: Optional[Operand] = None,
                      max_total_seq_len_q: Any = None, max_total_seq_len_kv: Any = None,
                      sliding_window_length: Optional[int] = None,
                      diagonal_alignment: Any = None,
                      diagonal_band_left_bound: Optional[int] = None,
                      diagonal_band_right_bound: Optional[int] = None, dropout: Any = None,
                      dropout_seed: Any = None, dropout_offset: Any = None,
                      rng_dump: Any = None, score_mod: Any = None, score_mod_bprop: Any = None,
                      sink_token: Any = None, dSink_token: Any = None
                      ) -> Union[Tuple[Tensor, Tensor, Tensor],
                                 Tuple[Tensor, Tensor, Tensor, Tensor]]:
        """Scaled dot-product attention backward (``cudnnfe_graph_add_sdpa_backward_ex``);
        returns ``(dQ, dK, dV)``.

        ``q, k, v, o`` and ``stats`` are the forward's (stats from
        ``sdpa(..., generate_stats=True)``, ``[b, h_q, s_q, 1]`` FLOAT); ``dO``
        is the gradient of O. Scale, masks, bias and dropout must be the
        forward's (``dropout=(probability, seed, offset)`` with the same seed
        and offset, or ``(mask, scale, scale_inv)``). dQ, dK, dV take the
        shapes and dimension orders of q, k, v.

        ``dBias``: the bias gradient, as cudnn-frontend takes it: a tensor
        made with ``graph.tensor(...)`` / ``tensor_like`` (dims ``[1, h_q, s_q,
        s_kv]``, the bias's) that becomes the op's dBias output, a graph
        output, keeping its UID, name, strides and data type. ``dBias=True``
        (a cudnnfe extension) instead returns ``(dQ, dK, dV, dBias)``.

        ``score_mod``: the forward's score modifier again (the scores are
        recomputed through it); ``score_mod_bprop(graph, dS')``: the modifier of
        the gradient, mapping dS' (at score_mod's output) to dS (at its input) with
        pointwise ops; it may read tensors that ``score_mod`` made (softcap's
        tanh). Without it dS = dS' (right for masks). docs/attention.md.

        ``sink_token``: the forward's sink logits (FLOAT ``[1, h_q, 1, 1]``);
        ``dSink_token``: their gradient, as cudnn-frontend takes it: a tensor
        made with ``graph.tensor(...)`` (FLOAT ``[1, h_q, 1, 1]``) that becomes
        the op's output, keeping its UID and name (docs/attention.md, "Its
        gradient").
        """
        node = self._node_name("sdpa_backward", name)
        self._defer(_refuse(node, dict(rng_dump=rng_dump)))
        placeholder: Optional[Tensor] = None
        if isinstance(dBias, Tensor):
            if dBias._graph is not self:
                raise ValueError(f"{node}: dBias is a tensor of another graph")
            placeholder = dBias
        elif dBias is not None and not isinstance(dBias, bool):
            raise TypeError(f"{node}: dBias must be a cudnnfe.Tensor made with graph.tensor() "
                            f"or tensor_like() (it becomes the output), or True; not "
                            f"{type(dBias).__name__}")
        want_dbias = placeholder is not None or dBias is True
        bias = self._bias_argument(node, bias, attn_bias)
        opts = _structs.new("cudnnfe_sdpa_backward_options_t")
        cname = _cstr(node, "name")
        opts.name = cname
        opts.deterministic = _flag(use_deterministic_algorithm,
                                   f"{node}: use_deterministic_algorithm")
        opts.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        uids = [self._operand(t, node, port) for t, port in
                ((q, "q"), (k, "k"), (v, "v"), (o, "o"), (dO, "dO"), (stats, "stats"))]
        offsets = self._backward_offsets(node, opts, q, k, v, o, dO, stats)
        # cudnn-frontend's bounds on a ragged layout's total tokens: the C library checks
        # them at validation, once every ragged offset is set (docs/attention.md).
        opts.max_total_seq_len_q = _bound(node, "max_total_seq_len_q", max_total_seq_len_q)
        opts.max_total_seq_len_kv = _bound(node, "max_total_seq_len_kv", max_total_seq_len_kv)
        opts.bias = self._operand(bias, node, "bias", optional=True)
        self._attn_scale_option(opts, node, attn_scale)
        self._mask_options(opts, node, use_causal_mask=use_causal_mask,
                           use_causal_mask_bottom_right=use_causal_mask_bottom_right,
                           use_padding_mask=use_padding_mask, seq_len_q=seq_len_q,
                           seq_len_kv=seq_len_kv, sliding_window_length=sliding_window_length,
                           left_bound=diagonal_band_left_bound,
                           right_bound=diagonal_band_right_bound,
                           alignment=diagonal_alignment, use_alibi_mask=use_alibi_mask,
                           left_name="diagonal_band_left_bound")
        self._dropout_options(opts, node, dropout, dropout_seed, dropout_offset, backward=True)
        dims = self._score_dims(uids[0], uids[1], uids[2], opts)
        opts.score_mod = self._score_mod(node, "score_mod", score_mod, dims)
        opts.score_mod_bprop = self._score_mod(node, "score_mod_bprop", score_mod_bprop, dims)
        opts.sink_token = self._operand(sink_token, node, "sink_token", optional=True)
        opts.dsink_token = self._dsink_operand(node, dSink_token)
        dq, dk, dv = ffi.new("int64_t *"), ffi.new("int64_t *"), ffi.new("int64_t *")
        db = ffi.new("int64_t *") if want_dbias else ffi.NULL
        if placeholder is not None:  # the op writes dBias into the caller's tensor
            self._check(lib.cudnnfe_graph_set_next_output(self._ptr, b"dBias",
                                                          placeholder._uid))
        self._check(lib.cudnnfe_graph_add_sdpa_backward_ex(self._ptr, *uids, opts, dq, dk, dv,
                                                           db))
        first = self._added(node, int(dq[0]))
        result = (first, self._wrap(int(dk[0]), "virtual"), self._wrap(int(dv[0]), "virtual"))
        for grad, role in zip(result, ("q", "k", "v")):  # a gradient has its tensor's layout
            _ragged.expect_output_offset(self, grad, offsets[role])
        _ragged.attach(self, (q, k, v, o, dO, stats) + result)
        if dSink_token is not None:
            dSink_token._role = "output"
        if placeholder is not None:
            placeholder._role = "output"
            return result
        if want_dbias:
            return result + (self._wrap(int(db[0]), "virtual"),)
        return result

    def _dsink_operand(self, node: str, dSink_token: Any) -> int:
        """The UID of ``dSink_token``, a tensor of this graph that the op will write (0: none)."""
        return self._caller_output(node, "dSink_token", dSink_token)

    def _caller_output(self, node: str, keyword: str, tensor: Any) -> int:
        """The UID of a tensor of this graph that the op will write as its output ``keyword``
        (cudnn-frontend's dSink_token, score_max, rng_dump, ...); 0 for None."""
        if tensor is None:
            return 0
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{node}: {keyword} must be a cudnnfe.Tensor made with "
                            f"graph.tensor() (it becomes the output), not "
                            f"{type(tensor).__name__}")
        if tensor._graph is not self:
            raise ValueError(f"{node}: {keyword} is a tensor of another graph")
        return tensor._uid

    # ---- FP8 attention --------------------------------------------------------------

    def _fp8_mask_options(self, o: Any, node: str, use_causal_mask: Any,
                          use_causal_mask_bottom_right: Any, alignment: Any, sliding_window: Any,
                          left_bound: Any, right_bound: Any) -> None:
        """The C ABI's FP8 causal flag and diagonal band from cudnn-frontend's mask keywords.

        As cudnn-frontend maps them: ``use_causal_mask`` is the causal flag (a
        right bound of 0, TOP_LEFT), ``use_causal_mask_bottom_right`` a right
        bound of 0 with BOTTOM_RIGHT alignment, ``sliding_window`` another
        name of ``left_bound``.
        """
        causal = _flag(use_causal_mask, f"{node}: use_causal_mask")
        bottom_right = _flag(use_causal_mask_bottom_right, f"{node}: use_causal_mask_bottom_right")
        if causal and bottom_right:
            raise ValueError(f"{node}: use_causal_mask and use_causal_mask_bottom_right cannot "
                             "both be set")
        if (causal or bottom_right) and right_bound is not None:
            flag = "use_causal_mask" if causal else "use_causal_mask_bottom_right"
            raise ValueError(f"{node}: {flag} and right_bound cannot both be set")
        o.causal_mask = causal
        self._band_options(o, node, window=sliding_window, left_bound=left_bound,
                           right_bound=right_bound, alignment=alignment,
                           names=("sliding_window", "left_bound", "right_bound"))
        if bottom_right:
            o.window_right = 0
            o.diagonal_alignment = int(diagonal_alignment.BOTTOM_RIGHT)

    def _fp8_compute(self, node: str, compute_data_type: DType) -> None:
        if _dtype(compute_data_type, "compute_data_type") not in (int(data_type.NOT_SET),
                                                                   int(data_type.FLOAT)):
            self._defer(NotOfferedError(f"{node}: FP8 attention computes in FLOAT; "
                                        f"compute_data_type {compute_data_type!r} is not "
                                        "offered"))

    def _fp8_attn_scale(self, o: Any, node: str, attn_scale: Any) -> None:
        if attn_scale is None:
            return
        if isinstance(attn_scale, Tensor) or _arrays.is_array(attn_scale):
            self._defer(NotOfferedError(f"{node}: attn_scale as a tensor is not offered by the "
                                        "cudnnfe C ABI for FP8 attention; pass a float"))
            return
        o.attn_scale = _attn_scale_value(node, attn_scale)

    def sdpa_fp8(self, q: Operand, k: Operand, v: Operand, descale_q: Operand,
                 descale_k: Operand, descale_v: Operand, descale_s: Operand, scale_s: Operand,
                 scale_o: Operand, is_inference: Optional[bool] = None, attn_scale: Any = None,
                 bias: Any = None, use_alibi_mask: bool = False, use_padding_mask: bool = False,
                 seq_len_q: Any = None, seq_len_kv: Any = None, use_causal_mask: bool = False,
                 use_causal_mask_bottom_right: bool = False, sliding_window: Any = None,
                 diagonal_alignment: Any = None, left_bound: Any = None,
                 right_bound: Any = None, dropout: Any = None, rng_dump: Any = None,
                 paged_attention_k_table: Any = None, paged_attention_v_table: Any = None,
                 paged_attention_max_seq_len_kv: Any = None, compute_data_type: DType = None,
                 name: Optional[str] = None, fn: Any = None,
                 generate_stats: Optional[bool] = None, score_max: Any = None,
                 score_sum_exp: Any = None, sink_token: Any = None
                 ) -> Tuple[Tensor, Optional[Tensor], Tensor, Tensor]:
        """FP8 attention forward (``cudnnfe_graph_add_sdpa_fp8``); returns
        ``(O, stats, amax_s, amax_o)``.

        q, k, v are one FP8 type (FP8_E4M3 or FP8_E5M2). The descales and
        scales are one-element FLOAT tensors (or Python floats: scalars). The
        amax outputs are ``[1, 1, 1, 1]`` FLOAT and must be marked with
        ``set_output(True)``. Stats are written when ``generate_stats`` is
        true or ``is_inference`` is False (else None).

        The C ABI's FP8 attention has a float ``attn_scale``, the causal
        masks (``use_causal_mask``, ``use_causal_mask_bottom_right``), the
        diagonal band (``left_bound`` or ``sliding_window``, ``right_bound``,
        ``diagonal_alignment``: sdpa's window_left, window_right and
        alignment), padding (``use_padding_mask``, ``seq_len_q``,
        ``seq_len_kv``), ``use_alibi_mask``, ``dropout`` (``(probability,
        seed, offset)`` or ``(mask, scale)``) and paged K/V
        (``paged_attention_k_table``, ``paged_attention_v_table``,
        ``paged_attention_max_seq_len_kv``) and ``sink_token``, as :meth:`sdpa`
        defines them.
        ``bias`` raises :class:`NotOfferedError` (cudnn-frontend refuses it
        too), as do a tensor attn_scale and the other cudnn-frontend options.
        """
        node = self._node_name("sdpa_fp8", name)
        self._defer(_refuse(node, dict(rng_dump=rng_dump, fn=fn, score_max=score_max,
                                       score_sum_exp=score_sum_exp)))
        if bias is not None:
            self._defer(NotOfferedError(
                f"{node}: bias (an attention bias) is not offered for FP8 attention "
                "(sdpa_fp8): cudnn-frontend refuses it too (\"SDPA FP8 does not support "
                "bias\"; cuDNN's FP8 attention engines lack it)"))
        self._fp8_compute(node, compute_data_type)
        o = _structs.new("cudnnfe_sdpa_fp8_options_t")
        cname = _cstr(node, "name")
        o.name = cname
        self._fp8_attn_scale(o, node, attn_scale)
        stats = bool(generate_stats) or (is_inference is not None and not is_inference)
        o.generate_stats = 1 if stats else 0
        self._fp8_mask_options(o, node, use_causal_mask, use_causal_mask_bottom_right,
                               diagonal_alignment, sliding_window, left_bound, right_bound)
        self._padding_options(o, node, use_padding_mask, seq_len_q, seq_len_kv)
        o.alibi_mask = _flag(use_alibi_mask, f"{node}: use_alibi_mask")
        self._dropout_options(o, node, dropout, None, None, backward=False)
        # paged_attention_max_seq_len_kv only sizes a paged cache: without a page table
        # cudnn-frontend's FP8 tests pass s_kv there, and it means nothing.
        if paged_attention_k_table is None and paged_attention_v_table is None:
            paged_attention_max_seq_len_kv = None
        for key, table in (("paged_attention_k_table", paged_attention_k_table),
                           ("paged_attention_v_table", paged_attention_v_table)):
            if _ragged.offset_of(table) is not None:
                self._defer(NotOfferedError(f"{node}: {key} has ragged offsets (a packed page "
                                            "table), which the C ABI's FP8 attention does not "
                                            "offer"))
        self._paged_options(o, node, paged_attention_k_table, paged_attention_v_table,
                            paged_attention_max_seq_len_kv)
        o.sink_token = self._operand(sink_token, node, "sink_token", optional=True)
        uids = [self._operand(t, node, port) for t, port in ((q, "q"), (k, "k"), (v, "v"))]
        uids += [self._operand(t, node, port, scalar=True) for t, port in
                 ((descale_q, "descale_q"), (descale_k, "descale_k"),
                  (descale_v, "descale_v"), (descale_s, "descale_s"), (scale_s, "scale_s"),
                  (scale_o, "scale_o"))]
        outs = [ffi.new("int64_t *") for _ in range(4)]
        self._check(lib.cudnnfe_graph_add_sdpa_fp8(self._ptr, *uids, o, *outs))
        result = self._added(node, int(outs[0][0]))
        st = self._wrap(int(outs[1][0]), "virtual") if stats and outs[1][0] else None
        return (result, st, self._wrap(int(outs[2][0]), "virtual"),
                self._wrap(int(outs[3][0]), "virtual"))

    def sdpa_fp8_backward(self, q: Operand, k: Operand, v: Operand, o: Operand, dO: Operand,
                          stats: Operand, descale_q: Operand, descale_k: Operand,
                          descale_v: Operand, descale_o: Operand, descale_dO: Operand,
                          descale_s: Operand, descale_dP: Operand, scale_s: Operand,
                          scale_dQ: Operand, scale_dK: Operand, scale_dV: Operand,
                          scale_dP: Operand, attn_scale: Any = None,
                          use_padding_mask: bool = False, seq_len_q: Any = None,
                          seq_len_kv: Any = None, use_causal_mask: bool = False,
                          use_causal_mask_bottom_right: bool = False,
                          diagonal_alignment: Any = None, left_bound: Any = None,
                          right_bound: Any = None, use_deterministic_algorithm: bool = False,
                          dropout: Any = None, compute_data_type: DType = None,
                          name: Optional[str] = None, sink_token: Any = None,
                          dSink_token: Any = None) -> Tuple[Tensor, ...]:
        """FP8 attention backward (``cudnnfe_graph_add_sdpa_fp8_backward``); returns
        ``(dQ, dK, dV, amax_dQ, amax_dK, amax_dV, amax_dP)``.

        Inputs as cudnn-frontend's; the amax outputs must be marked with
        ``set_output(True)``. Options as :meth:`sdpa_fp8` (they must match the
        forward), padding and dropout included (``dropout``: ``(probability,
        seed, offset)`` or ``(mask, scale, scale_inv)``);
        ``use_deterministic_algorithm`` raises :class:`NotOfferedError`.
        """
        node = self._node_name("sdpa_fp8_backward", name)
        self._defer(_refuse(node, dict(sink_token=sink_token, dSink_token=dSink_token,
                                       use_deterministic_algorithm=use_deterministic_algorithm)))
        self._fp8_compute(node, compute_data_type)
        opts = _structs.new("cudnnfe_sdpa_fp8_backward_options_t")
        cname = _cstr(node, "name")
        opts.name = cname
        self._fp8_attn_scale(opts, node, attn_scale)
        self._fp8_mask_options(opts, node, use_causal_mask, use_causal_mask_bottom_right,
                               diagonal_alignment, None, left_bound, right_bound)
        self._padding_options(opts, node, use_padding_mask, seq_len_q, seq_len_kv)
        self._dropout_options(opts, node, dropout, None, None, backward=True)
        uids = [self._operand(t, node, port) for t, port in
                ((q, "q"), (k, "k"), (v, "v"), (o, "o"), (dO, "dO"), (stats, "stats"))]
        uids += [self._operand(t, node, port, scalar=True) for t, port in
                 ((descale_q, "descale_q"), (descale_k, "descale_k"), (descale_v, "descale_v"),
                  (descale_o, "descale_o"), (descale_dO, "descale_dO"),
                  (descale_s, "descale_s"), (descale_dP, "descale_dP"), (scale_s, "scale_s"),
                  (scale_dQ, "scale_dQ"), (scale_dK, "scale_dK"), (scale_dV, "scale_dV"),
                  (scale_dP, "scale_dP"))]
        outs = [ffi.new("int64_t *") for _ in range(7)]
        self._check(lib.cudnnfe_graph_add_sdpa_fp8_backward(self._ptr, *uids, opts, *outs))
        first = self._added(node, int(outs[0][0]))
        return (first,) + tuple(self._wrap(int(x[0]), "virtual") for x in outs[1:])

    def paged_cache_load(self, container: Operand, seq_len: Operand, page_table: Operand,
                         compute_data_type: DType = None,
                         name: Optional[str] = None) -> Tensor:
        """A paged K or V cache gathered to ``[b, h, s, d]``
        (``cudnnfe_graph_add_paged_cache_load``; cudnn-frontend's C++
        ``paged_cache_load(container, seqLen, pageTable, attributes, yOut)``, whose
        Python binding has no such method: its arguments here in snake case).

        ``container`` is ``[num_pages, h, page_size, d]``, ``page_table``
        ``[b, 1, pages, 1]`` and ``seq_len`` ``[b, 1, 1, 1]``, integers (INT32 as in
        cudnn-frontend). Row ``j`` of
        sequence ``n`` is row ``j % page_size`` of page ``page_table[n, 0, j // page_size,
        0]``; rows ``j >= seq_len[n]`` are unspecified (0 on the CPU reference). The
        result, named ``<name>::yOut``, is ``[b, h, pages * page_size, d]`` unless its dims
        are set (``ceil(s / page_size)`` must stay ``pages``). Needs cuDNN 9.5 on the GPU.
        """
        node = self._node_name("paged_cache_load", name)
        opts = _structs.new("cudnnfe_paged_cache_load_options_t")
        cname = _cstr(node, "name")
        opts.name = cname
        opts.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        uids = [self._operand(t, node, port) for t, port in
                ((container, "container"), (seq_len, "seq_len"), (page_table, "page_table"))]
        y = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_paged_cache_load(self._ptr, *uids, opts, y))
        return self._added(node, int(y[0]), {"y": "yOut"})
