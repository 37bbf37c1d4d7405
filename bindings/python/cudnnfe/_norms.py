"""Normalizations on :class:`pygraph`: layer, RMS, batch, instance and adaptive layer norm.

Method names, argument names and results are cudnn-frontend's (the C
functions are ``cudnnfe_graph_add_<method>``; all take
``cudnnfe_norm_options_t``). ``epsilon`` and batch norm's ``momentum`` are
numbers, or cudnn-frontend's one-element pass-by-value tensors, which the C
options take as ``epsilon_tensor`` / ``momentum_tensor`` and read when the
graph runs; a scalar (``tensor_scalar``) is passed the same way and the C
library folds its value into the number when the graph is validated. A
one-element host array given directly is taken as a number.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

from . import _arrays, _naming, _structs
from ._enums import data_type, norm_forward_phase, tensor_kind
from ._errors import NotOfferedError
from ._lib import ffi, lib
from ._tensor import Tensor
from ._util import DType, Operand, _cstr, _dtype, _enum_value, _is_number

__all__ = ["NormOps"]


def _refuse_peer_stats(node: str, peer_stats: Optional[Sequence[Any]]) -> None:
    if peer_stats:
        raise NotOfferedError(f"{node}: peer_stats (batch statistics shared across GPUs) is not "
                              "offered by the cudnnfe C ABI")


class NormOps:
    """The normalization methods of :class:`pygraph` (a mixin; see :mod:`cudnnfe._norms`)."""

    def _norm_options(self, node: str, epsilon: Any, zero_centered_gamma: bool, phase: Any,
                      compute_data_type: DType, momentum: Any = None) -> Tuple[Any, Any]:
        """(filled cudnnfe_norm_options_t *, its name buffer to keep alive)."""
        opts = _structs.new("cudnnfe_norm_options_t")
        cname = _cstr(node, "name")
        opts.name = cname
        self._scalar_option(opts, node, "epsilon", epsilon)
        self._scalar_option(opts, node, "momentum", momentum)
        if not isinstance(zero_centered_gamma, (bool, int)):
            raise TypeError(f"{node}: zero_centered_gamma must be a bool")
        opts.zero_centered_gamma = 1 if zero_centered_gamma else 0
        if phase is not None:
            member = _enum_value(norm_forward_phase, phase, "norm_forward_phase")
            if member is not norm_forward_phase.NOT_SET:  # NOT_SET: the C default
                opts.phase = int(member)
        opts.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        return opts, cname

    def _scalar_option(self, opts: Any, node: str, port: str, value: Any) -> None:
        """``epsilon`` / ``momentum``: a graph input tensor is read when the graph runs
        (``epsilon_tensor`` / ``momentum_tensor``, as cudnn-frontend reads its
        pass-by-value tensor); a scalar goes the same way and the C library folds it into
        the number at validation; a number or a one-element host array is the number."""
        fields = {"epsilon": "epsilon_tensor", "momentum": "momentum_tensor"}
        if value is None:
            return
        if isinstance(value, (bool, str)):
            raise TypeError(f"{node}: {port} must be a number or a one-element tensor, not "
                            f"{type(value).__name__}")
        if _is_number(value):
            setattr(opts, port, float(value))
            return
        if isinstance(value, Tensor):
            if value._graph is not self:
                raise ValueError(f"{node}: {port} is a tensor of another graph")
            if value.get_kind() not in (tensor_kind.INPUT, tensor_kind.SCALAR):
                raise NotOfferedError(
                    f"{node}: {port} is tensor {value.get_name()!r}, computed by the graph; the "
                    f"cudnnfe C ABI takes {port} as a number, a graph input or a scalar")
            self._operand_uids.add(value._uid)
            setattr(opts, fields[port], value._uid)
            return
        number = _arrays.host_scalar(value) if _arrays.is_array(value) else None
        if number is None:
            if _arrays.is_array(value):
                raise NotOfferedError(
                    f"{node}: {port} is an array that is not one element in host memory; pass "
                    f"a Python float, a one-element host array, or tensor_like(one-element "
                    f"host array)")
            raise TypeError(f"{node}: {port} must be a number or a one-element tensor, not "
                            f"{type(value).__name__}")
        setattr(opts, port, number)

    def _stats_outputs(self, node: str, y: Any, *stats: Any) -> Tuple[Any, ...]:
        out = self._added(node, int(y[0]))
        return (out,) + tuple(self._wrap(int(s[0]), "virtual") if s[0] else None
                              for s in stats)

    def _backward(self, kind: str, fn: Any, grad: Operand, input: Operand, scale: Operand,
                  mean: Operand, inv_variance: Operand, zero_centered_gamma: bool,
                  compute_data_type: DType, name: Optional[str]) -> Tuple[Tensor, Tensor, Tensor]:
        node = self._node_name(kind, name)
        opts, cname = self._norm_options(node, None, zero_centered_gamma, None,
                                         compute_data_type)
        args = [self._operand(t, node, port) for t, port in
                ((grad, "grad"), (input, "input"), (scale, "scale"), (mean, "mean"),
                 (inv_variance, "inv_variance"))]
        dx, ds, db = ffi.new("int64_t *"), ffi.new("int64_t *"), ffi.new("int64_t *")
        self._check(fn(self._ptr, *args, opts, dx, ds, db))
        return (self._added(node, int(dx[0])), self._wrap(int(ds[0]), "virtual"),
                self._wrap(int(db[0]), "virtual"))

    # ---- layer norm and RMS norm ------------------------------------------------------

    def layernorm(self, input: Operand, scale: Operand, bias: Operand, epsilon: Any = None,
                  zero_centered_gamma: bool = False, norm_forward_phase: Any = None,
                  compute_data_type: DType = None,
                  name: Optional[str] = None) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
        """Layer norm ``y = (x - mean) * inv_variance * scale + bias``; returns ``(y, mean, inv_variance)``.

        Scale and bias have x's rank, each dim x's or 1: the statistics are
        taken over the dims where the scale is not 1, per index of the others
        (cudnn-frontend's rule): ``[N, C, H, W]`` with ``[1, C, H, W]`` per
        sample, a transformer's ``[b, s, d]`` with ``[1, 1, d]`` per token. In
        the TRAINING phase (default) mean and inv_variance (x's dims with 1
        where the scale is not, FLOAT) are outputs too; in INFERENCE they are
        None. ``epsilon`` (default 1e-5): a float
        or a one-element pass-by-value tensor.
        """
        node = self._node_name("layernorm", name)
        opts, cname = self._norm_options(node, epsilon, zero_centered_gamma, norm_forward_phase,
                                         compute_data_type)
        x = self._operand(input, node, "input")
        s = self._operand(scale, node, "scale")
        b = self._operand(bias, node, "bias")
        y, mean, inv = ffi.new("int64_t *"), ffi.new("int64_t *"), ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_layernorm(self._ptr, x, s, b, opts, y, mean, inv))
        return self._stats_outputs(node, y, mean, inv)

    def rmsnorm(self, input: Operand, scale: Operand, bias: Optional[Operand] = None,
                epsilon: Any = None, zero_centered_gamma: bool = False,
                norm_forward_phase: Any = None, compute_data_type: DType = None,
                name: Optional[str] = None) -> Tuple[Tensor, Optional[Tensor]]:
        """RMS norm ``y = x * inv_rms * scale (+ bias)``; returns ``(y, inv_rms)``.

        ``inv_rms = 1/sqrt(mean(x**2) + epsilon)`` over the dims where the
        scale is not 1 (as :meth:`layernorm`); it is an output in the TRAINING
        phase (default), None in INFERENCE.
        """
        node = self._node_name("rmsnorm", name)
        opts, cname = self._norm_options(node, epsilon, zero_centered_gamma, norm_forward_phase,
                                         compute_data_type)
        x = self._operand(input, node, "input")
        s = self._operand(scale, node, "scale")
        b = self._operand(bias, node, "bias", optional=True)
        y, inv = ffi.new("int64_t *"), ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_rmsnorm(self._ptr, x, s, b, opts, y, inv))
        return self._stats_outputs(node, y, inv)

    def layernorm_backward(self, grad: Operand, input: Operand, scale: Operand, mean: Operand,
                           inv_variance: Operand, zero_centered_gamma: bool = False,
                           compute_data_type: DType = None,
                           name: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor]:
        """Layer norm backward; returns ``(dx, dscale, dbias)`` from dy (``grad``), x, scale
        and the forward's mean and inv_variance."""
        return self._backward("layernorm_backward", lib.cudnnfe_graph_add_layernorm_backward,
                              grad, input, scale, mean, inv_variance, zero_centered_gamma,
                              compute_data_type, name)

    def rmsnorm_backward(self, grad: Operand, input: Operand, scale: Operand,
                         inv_variance: Operand = None, has_dbias: bool = False,
                         zero_centered_gamma: bool = False, compute_data_type: DType = None,
                         name: Optional[str] = None, *,
                         inv_rms: Operand = None) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
        """RMS norm backward; returns ``(dx, dscale, dbias)`` (dbias None unless ``has_dbias``).

        ``inv_variance`` (cudnn-frontend's keyword) is the forward's inv_rms
        output; ``inv_rms=`` is the same.
        """
        from ._graph import _one_of

        inv_rms = _one_of("rmsnorm_backward", "inv_variance", inv_variance, "inv_rms", inv_rms)
        node = self._node_name("rmsnorm_backward", name)
        opts, cname = self._norm_options(node, None, zero_centered_gamma, None,
                                         compute_data_type)
        args = [self._operand(t, node, port) for t, port in
                ((grad, "grad"), (input, "input"), (scale, "scale"), (inv_rms, "inv_variance"))]
        dx, ds = ffi.new("int64_t *"), ffi.new("int64_t *")
        db = ffi.new("int64_t *") if has_dbias else ffi.NULL
        self._check(lib.cudnnfe_graph_add_rmsnorm_backward(self._ptr, *args, opts, dx, ds, db))
        return (self._added(node, int(dx[0]), _naming.RMSNORM_BACKWARD_PORTS), self._wrap(int(ds[0]), "virtual"),
                self._wrap(int(db[0]), "virtual") if has_dbias and db[0] else None)

    # ---- batch norm -----------------------------------------------------------------

    def batchnorm(self, input: Operand, scale: Operand, bias: Operand,
                  in_running_mean: Optional[Operand] = None,
                  in_running_var: Optional[Operand] = None, epsilon: Any = None,
                  momentum: Any = None, peer_stats: Optional[Sequence[Any]] = None,
                  compute_data_type: DType = None, name: Optional[str] = None, *,
                  norm_forward_phase: Any = None
                  ) -> Tuple[Tensor, Tensor, Tensor, Optional[Tensor], Optional[Tensor]]:
        """Batch norm, training (``cudnnfe_graph_add_batchnorm``); returns
        ``(y, mean, inv_variance, next_running_mean, next_running_var)``.

        x is ``[N, C, spatial...]`` in any layout (channels-last is what
        cuDNN's engines take); statistics are per channel over N and the
        spatial dims; scale, bias and statistics are ``[1, C, 1, ...]``,
        statistics FLOAT. With ``in_running_mean`` and ``in_running_var`` the
        running statistics are updated (``next_* = (1 - momentum) * in_* +
        momentum * batch statistic``, the variance unbiased); without them
        the ``next_*`` results are None. Bind ``next_running_mean`` to the same
        buffer as ``in_running_mean`` to update in place.

        ``epsilon`` (default 1e-5) and ``momentum`` (default 0.1): floats or
        one-element pass-by-value tensors (cudnn-frontend's form).
        ``norm_forward_phase`` (a cudnnfe extension) must be TRAINING if given:
        inference is :meth:`batchnorm_inference`. ``peer_stats`` is not offered.
        """
        node = self._node_name("batchnorm", name)
        _refuse_peer_stats(node, peer_stats)
        opts, cname = self._norm_options(node, epsilon, False, norm_forward_phase,
                                         compute_data_type, momentum=momentum)
        args = [self._operand(t, node, port, optional=optional) for t, port, optional in
                ((input, "input", False), (scale, "scale", False), (bias, "bias", False),
                 (in_running_mean, "in_running_mean", True),
                 (in_running_var, "in_running_var", True))]
        outs = [ffi.new("int64_t *") for _ in range(5)]
        self._check(lib.cudnnfe_graph_add_batchnorm(self._ptr, *args, opts, *outs))
        return self._stats_outputs(node, *outs)

    def genstats(self, input: Operand, compute_data_type: DType = None,
                 name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
        """Per-channel ``(SUM, SQ_SUM)`` of ``input[N, C, *]`` over every dim but C
        (``cudnnfe_graph_add_genstats``), each ``[1, C, 1, ...]``, FLOAT unless set.

        The first piece of cudnn-frontend's split batch-norm training graph; cuDNN
        runs it fused behind a convolution.
        """
        node = self._node_name("genstats", name)
        opts = _structs.new("cudnnfe_genstats_options_t")
        cname = _cstr(node, "name")
        opts.name = cname
        opts.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        x = self._operand(input, node, "input")
        total, sq = ffi.new("int64_t *"), ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_genstats(self._ptr, x, opts, total, sq))
        return self._added(node, int(total[0])), self._wrap(int(sq[0]), "virtual")

    def bn_finalize(self, sum: Operand, sq_sum: Operand, scale: Operand, bias: Operand,
                    epsilon: Any, accum_count: Any, prev_running_mean: Optional[Operand] = None,
                    prev_running_var: Optional[Operand] = None, momentum: Any = None,
                    compute_data_type: DType = None, name: Optional[str] = None
                    ) -> Tuple[Tensor, Tensor, Tensor, Tensor, Optional[Tensor],
                               Optional[Tensor]]:
        """Batch-norm statistics from :meth:`genstats`' sums (``cudnnfe_graph_add_bn_finalize``;
        cudnn-frontend's C++ ``bn_finalize``, whose running statistics are
        ``set_previous_running_stats(prev_running_mean, prev_running_var, momentum)``).

        ``epsilon``, ``momentum`` (FLOAT) and ``accum_count`` (INT64, the elements summed per
        channel) are one-element tensors or numbers. Returns ``(EQ_SCALE, EQ_BIAS, MEAN,
        INV_VARIANCE, NEXT_RUNNING_MEAN, NEXT_RUNNING_VAR)``, the last two None without
        running statistics.
        """
        node = self._node_name("bn_finalize", name)
        opts = _structs.new("cudnnfe_bn_finalize_options_t")
        cname = _cstr(node, "name")
        opts.name = cname
        opts.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        args = [self._operand(t, node, port) for t, port in
                ((sum, "sum"), (sq_sum, "sq_sum"), (scale, "scale"), (bias, "bias"))]
        args.append(self._operand(epsilon, node, "epsilon", scalar=True))
        args.append(self._operand(accum_count, node, "accum_count", scalar=True,
                                  scalar_dtype=data_type.INT64))
        args += [self._operand(prev_running_mean, node, "prev_running_mean", optional=True),
                 self._operand(prev_running_var, node, "prev_running_var", optional=True),
                 self._operand(momentum, node, "momentum", optional=True, scalar=True)]
        outs = [ffi.new("int64_t *") for _ in range(6)]
        self._check(lib.cudnnfe_graph_add_bn_finalize(self._ptr, *args, opts, *outs))
        first = self._added(node, int(outs[0][0]))
        return (first,) + tuple(self._wrap(int(o[0]), "virtual") if o[0] else None
                                for o in outs[1:])

    def dbn_weight(self, grad: Operand, input: Operand, mean: Operand, inv_variance: Operand,
                   scale: Operand, compute_data_type: DType = None, name: Optional[str] = None
                   ) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        """Batch-norm backward, weights part (``cudnnfe_graph_add_dbn_weight``; cudnn-frontend's
        C++ ``dbn_weight(dy, x, mean, inv_variance, scale)``; ``grad`` is dy, ``input`` x, as
        :meth:`batchnorm_backward` names them).

        Returns ``(DSCALE, DBIAS, EQ_SCALE_DY, EQ_SCALE_X, EQ_BIAS)``, each ``[1, C, 1, ...]``:
        ``dx = EQ_SCALE_DY * dy + EQ_SCALE_X * x + EQ_BIAS`` is batch norm's data gradient.
        """
        node = self._node_name("dbn_weight", name)
        opts = _structs.new("cudnnfe_dbn_weight_options_t")
        cname = _cstr(node, "name")
        opts.name = cname
        opts.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        args = [self._operand(t, node, port) for t, port in
                ((grad, "grad"), (input, "input"), (mean, "mean"),
                 (inv_variance, "inv_variance"), (scale, "scale"))]
        outs = [ffi.new("int64_t *") for _ in range(5)]
        self._check(lib.cudnnfe_graph_add_dbn_weight(self._ptr, *args, opts, *outs))
        first = self._added(node, int(outs[0][0]))
        return (first,) + tuple(self._wrap(int(o[0]), "virtual") for o in outs[1:])

    def batchnorm_inference(self, input: Operand, mean: Operand, inv_variance: Operand,
                            scale: Operand, bias: Operand, compute_data_type: DType = None,
                            name: Optional[str] = None) -> Tensor:
        """Batch norm, inference (``cudnnfe_graph_add_batchnorm_inference``):
        ``y = (x - mean) * inv_variance * scale + bias`` per channel.

        mean and inv_variance are given (``[1, C, 1, ...]``): from running
        statistics, ``inv_variance = 1 / sqrt(running_var + epsilon)``.
        """
        node = self._node_name("batchnorm_inference", name)
        opts, cname = self._norm_options(node, None, False, None, compute_data_type)
        args = [self._operand(t, node, port) for t, port in
                ((input, "input"), (scale, "scale"), (bias, "bias"), (mean, "mean"),
                 (inv_variance, "inv_variance"))]
        y = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_batchnorm_inference(self._ptr, *args, opts, y))
        return self._added(node, int(y[0]))

    def batchnorm_backward(self, grad: Operand, input: Operand, scale: Operand, mean: Operand,
                           inv_variance: Operand, peer_stats: Optional[Sequence[Any]] = None,
                           compute_data_type: DType = None,
                           name: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor]:
        """Batch norm backward (``cudnnfe_graph_add_batchnorm_backward``); returns
        ``(dx, dscale, dbias)`` from dy (``grad``), x, scale and the forward's mean and
        inv_variance. dscale and dbias are ``[1, C, 1, ...]`` in scale's type."""
        node = self._node_name("batchnorm_backward", name)
        _refuse_peer_stats(node, peer_stats)
        return self._backward("batchnorm_backward", lib.cudnnfe_graph_add_batchnorm_backward,
                              grad, input, scale, mean, inv_variance, False, compute_data_type,
                              node)

    # ---- instance norm and adaptive layer norm ---------------------------------------------

    def instancenorm(self, norm_forward_phase: Any, input: Operand, scale: Operand,
                     bias: Operand, epsilon: Any = None, compute_data_type: DType = None,
                     name: Optional[str] = None
                     ) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
        """Instance norm (``cudnnfe_graph_add_instancenorm``); returns ``(y, mean, inv_variance)``.

        x is ``[N, C, spatial...]``; statistics are per (n, c) over the
        spatial dims (``[N, C, 1, ...]`` FLOAT, outputs in TRAINING, None in
        INFERENCE); scale and bias are ``[1, C, 1, ...]``.
        """
        node = self._node_name("instancenorm", name)
        opts, cname = self._norm_options(node, epsilon, False, norm_forward_phase,
                                         compute_data_type)
        args = [self._operand(t, node, port) for t, port in
                ((input, "input"), (scale, "scale"), (bias, "bias"))]
        y, mean, inv = ffi.new("int64_t *"), ffi.new("int64_t *"), ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_instancenorm(self._ptr, *args, opts, y, mean, inv))
        return self._stats_outputs(node, y, mean, inv)

    def instancenorm_backward(self, grad: Operand, input: Operand, scale: Operand,
                              mean: Optional[Operand] = None,
                              inv_variance: Optional[Operand] = None,
                              compute_data_type: DType = None,
                              name: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor]:
        """Instance norm backward (``cudnnfe_graph_add_instancenorm_backward``); returns
        ``(dx, dscale, dbias)``. Needs the forward's mean and inv_variance (cudnn-frontend
        can recompute them; the C ABI cannot: :class:`NotOfferedError`)."""
        node = self._node_name("instancenorm_backward", name)
        if mean is None or inv_variance is None:
            raise NotOfferedError(f"{node}: recomputing the statistics (mean or inv_variance "
                                  "None) is not offered by the cudnnfe C ABI; pass the "
                                  "forward's mean and inv_variance")
        return self._backward("instancenorm_backward",
                              lib.cudnnfe_graph_add_instancenorm_backward, grad, input, scale,
                              mean, inv_variance, False, compute_data_type, node)

    def adalayernorm(self, norm_forward_phase: Any, input: Operand, scale: Operand,
                     bias: Optional[Operand] = None, epsilon: Any = None,
                     compute_data_type: DType = None, name: Optional[str] = None, *,
                     zero_centered_gamma: bool = False
                     ) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
        """Adaptive layer norm (``cudnnfe_graph_add_adalayernorm``); returns
        ``(y, mean, inv_variance)``.

        x is ``[B, S, features...]``; statistics per (b, s) over the features
        (``[B, S, 1, ...]`` FLOAT; None in INFERENCE); scale and bias are per
        sample, ``[B, 1, features...]``, or shared, ``[1, 1, features...]``
        (each dim x's or 1; the dims after the first where the scale is not 1
        are normalized). ``zero_centered_gamma`` (a cudnnfe
        extension) uses ``1 + scale``.
        """
        node = self._node_name("adalayernorm", name)
        opts, cname = self._norm_options(node, epsilon, zero_centered_gamma, norm_forward_phase,
                                         compute_data_type)
        args = [self._operand(t, node, port, optional=optional) for t, port, optional in
                ((input, "input", False), (scale, "scale", False), (bias, "bias", True))]
        y, mean, inv = ffi.new("int64_t *"), ffi.new("int64_t *"), ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_adalayernorm(self._ptr, *args, opts, y, mean, inv))
        return self._stats_outputs(node, y, mean, inv)

    def adalayernorm_backward(self, grad: Operand, input: Operand, scale: Operand,
                              mean: Operand, inv_variance: Operand,
                              compute_data_type: DType = None, name: Optional[str] = None, *,
                              zero_centered_gamma: bool = False
                              ) -> Tuple[Tensor, Tensor, Tensor]:
        """Adaptive layer norm backward (``cudnnfe_graph_add_adalayernorm_backward``); returns
        ``(dx, dscale, dbias)`` with dscale and dbias per sample, ``[B, 1, features...]``."""
        return self._backward("adalayernorm_backward",
                              lib.cudnnfe_graph_add_adalayernorm_backward, grad, input, scale,
                              mean, inv_variance, zero_centered_gamma, compute_data_type, name)
