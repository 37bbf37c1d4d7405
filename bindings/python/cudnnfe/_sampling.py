"""Resampling and random numbers on :class:`pygraph`: ``resample`` and ``rng``.

cudnn-frontend's Python package has no binding for these; the keywords are
the attribute names of its C++ ``Resample_attributes`` and ``Rng_attributes``
(``resampling_mode``, ``padding_mode``, ``window``, ``stride``,
``pre_padding``, ``post_padding``, ``generate_index`` / ``is_inference``;
``distribution``, ``bernoulli_probability``, ``seed``, ``dim``, ``stride``),
and ``resample`` returns ``(Y, index)`` as its C++ ``resample`` does. The C
functions are ``cudnnfe_graph_add_resample`` and ``cudnnfe_graph_add_rng``
(``docs/layout-ops.md``).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, List, Optional, Sequence, Tuple

from . import _structs
from ._enums import data_type as _data_type
from ._enums import padding_mode as _padding_mode
from ._enums import resample_mode, rng_distribution
from ._lib import ffi, lib
from ._tensor import Tensor
from ._util import _MAX_DIMS, _MAX_SPATIAL, DType, Operand, _cstr, _dtype, _enum_value, _ints, \
    _number

__all__ = ["SamplingOps"]

_UPSAMPLING = (resample_mode.NEAREST, resample_mode.BILINEAR)


def _upsampling_scale(node: str, stride: Sequence[Any]) -> List[int]:
    """cudnn-frontend describes upsampling by x k as stride 1/k: the integer factors."""
    out = []
    for s in stride:
        f = Fraction(s).limit_denominator(1 << 20) if not isinstance(s, Fraction) else s
        if f <= 0 or f.numerator != 1:
            raise ValueError(f"{node}: an upsampling stride is 1/k for an integer factor k "
                             f"(or give scale=[k, ...]); got {s!r}")
        out.append(f.denominator)
    return out


class SamplingOps:
    """The resample and rng methods of :class:`pygraph` (a mixin; see :mod:`cudnnfe._sampling`)."""

    def resample(self, input: Operand, resampling_mode: Any = None, padding_mode: Any = None,
                 window: Optional[Sequence[int]] = None, stride: Optional[Sequence[Any]] = None,
                 pre_padding: Optional[Sequence[int]] = None,
                 post_padding: Optional[Sequence[int]] = None,
                 generate_index: Optional[bool] = None, is_inference: Optional[bool] = None,
                 compute_data_type: DType = None, name: Optional[str] = None, *,
                 padding: Optional[Sequence[int]] = None,
                 scale: Optional[Sequence[int]] = None) -> Tuple[Tensor, Optional[Tensor]]:
        """Pooling or upsampling of ``x[N, C, spatial...]`` (``cudnnfe_graph_add_resample``);
        returns ``(Y, index)``.

        Args:
            resampling_mode: :class:`resample_mode` (default MAXPOOL):
                MAXPOOL, AVGPOOL_INCLUDE_PADDING, AVGPOOL_EXCLUDE_PADDING
                (pooling), NEAREST, BILINEAR (upsampling).
            padding_mode: :class:`padding_mode` (default AUTO: NEG_INF for max
                pooling, ZERO for average pooling).
            window, stride, pre_padding, post_padding: pooling geometry, one
                entry per spatial dim (1 to 3); ``padding`` sets both paddings.
                Defaults: window 2, stride 2, padding 0.
            generate_index: MAXPOOL also writes ``index``, the position of each
                maximum in its window (INT8 unless set). Default: as
                cudnn-frontend, when ``is_inference`` is False.
            scale: the integer upsampling factor per spatial dim (default 2);
                a stride of 1/k (``fractions.Fraction(1, k)`` or 0.5) means the
                same, cudnn-frontend's way.

        Y (and index) are channels-last (NHWC) unless their strides are set, as in
        cudnn-frontend, whatever x's layout; index is None unless generated.
        """
        node = self._node_name("resample", name)
        mode = (resample_mode.MAXPOOL if resampling_mode is None
                else _enum_value(resample_mode, resampling_mode, "resampling_mode"))
        o = _structs.new("cudnnfe_resample_options_t")
        cname = _cstr(node, "name")
        o.name = cname
        o.mode = int(mode)
        if padding_mode is not None:
            o.padding_mode = int(_enum_value(_padding_mode, padding_mode, "padding_mode"))
        if stride is not None and mode in _UPSAMPLING and scale is None and \
                any(not isinstance(s, int) for s in stride):
            scale, stride = _upsampling_scale(node, stride), None
        spatial = 0
        for what, values, fields in (("padding", padding, ("pre_padding", "post_padding")),
                                     ("pre_padding", pre_padding, ("pre_padding",)),
                                     ("post_padding", post_padding, ("post_padding",)),
                                     ("window", window, ("window",)),
                                     ("stride", stride, ("stride",)),
                                     ("scale", scale, ("scale",))):
            if values is None:
                continue
            v = _ints(values, f"{node}: {what}", 1, _MAX_SPATIAL)
            if spatial and len(v) != spatial:
                raise ValueError(f"{node}: {what} has {len(v)} entries but another option has "
                                 f"{spatial}; give one per spatial dimension")
            spatial = len(v)
            for field in fields:
                arr = getattr(o, field)
                for i, x in enumerate(v):
                    arr[i] = x
        o.spatial_dims = spatial
        if generate_index is None:
            index = is_inference is not None and not is_inference and \
                mode == resample_mode.MAXPOOL
        else:
            index = bool(generate_index)
        o.generate_index = 1 if index else 0
        o.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        x = self._operand(input, node, "input")
        y, idx = ffi.new("int64_t *"), ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_resample(self._ptr, x, o, y, idx))
        out = self._added(node, int(y[0]))
        return out, (self._wrap(int(idx[0]), "virtual") if idx[0] else None)

    def rng(self, dim: Optional[Sequence[int]] = None, seed: Any = None, offset: Any = None,
            distribution: Any = None, bernoulli_probability: Optional[float] = None,
            uniform_min: Optional[float] = None, uniform_max: Optional[float] = None,
            normal_mean: Optional[float] = None, normal_stddev: Optional[float] = None,
            stride: Optional[Sequence[int]] = None, data_type: DType = None,
            compute_data_type: DType = None, name: Optional[str] = None) -> Tensor:
        """Random numbers of dims ``dim`` (``cudnnfe_graph_add_rng``).

        Args:
            dim: the output's dims (packed row-major unless ``stride`` is given).
            seed, offset: one-element INT64 (or INT32) tensors, graph inputs
                read at execute (or scalars), given together; a Python int
                ``seed`` without ``offset`` is the seed value with offset 0,
                and Python ints with both become scalars.
            distribution: :class:`rng_distribution` (default BERNOULLI).
            bernoulli_probability (default 0.5), uniform_min / uniform_max
                (0, 1), normal_mean / normal_stddev (0, 1): the distribution's
                parameters.
            data_type: the output's type (default FLOAT).

        The same seed and offset give the same numbers. The GPU draws with
        cuDNN's Philox; the CPU reference uses its own documented generator
        (``docs/layout-ops.md``), so the two differ in the values drawn.
        """
        node = self._node_name("rng", name)
        if dim is None:
            raise TypeError(f"{node}: dim is required (the output's dims)")
        dims = _ints(dim, f"{node}: dim", 1, _MAX_DIMS)
        o = _structs.new("cudnnfe_rng_options_t")
        cname = _cstr(node, "name")
        o.name = cname
        if distribution is not None:
            o.distribution = int(_enum_value(rng_distribution, distribution, "distribution"))
        for field, value in (("bernoulli_probability", bernoulli_probability),
                             ("uniform_min", uniform_min), ("uniform_max", uniform_max),
                             ("normal_mean", normal_mean), ("normal_stddev", normal_stddev)):
            if value is not None:
                setattr(o, field, _number(value, f"{node}: {field}"))
        o.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        seed_uid = offset_uid = 0
        if isinstance(seed, int) and not isinstance(seed, bool) and offset is None:
            o.seed = seed
        else:
            seed_uid = self._operand(seed, node, "seed", optional=True, scalar=True,
                                     scalar_dtype=_data_type.INT64)
            offset_uid = self._operand(offset, node, "offset", optional=True, scalar=True,
                                       scalar_dtype=_data_type.INT64)
        y = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_rng(self._ptr, len(dims), ffi.new("int64_t[]", dims),
                                              seed_uid, offset_uid, o, y))
        out = self._added(node, int(y[0]))
        if data_type is not None:
            out.set_data_type(data_type)
        if stride is not None:
            out.set_stride(stride)
        return out
