"""cudnn-frontend ``pygraph`` methods that cudnnfe serves by composing other ops, answers
from what it has, or refuses by name.

Composed: ``leaky_relu`` (ReLU with a slope), ``tensor_scalar`` (a
pass-by-value scalar). Answered:
``query_tensor_attributes_of_uid``, ``key``. Refused with
:class:`NotOfferedError` (the C ABI has no such feature): engine knobs
(``get_engine_count``, ``get_knobs_for_engine``, ``create_execution_plan``),
``select_numeric_notes`` and MXFP8 attention.
"""
from __future__ import annotations

from typing import Any, Optional

from ._enums import data_type, pointwise_mode
from ._enums import scalar_type as _scalar_type
from ._errors import NotOfferedError
from ._tensor import Tensor
from ._util import DType, Operand, _c_uid, _enum_value, _is_number

__all__ = ["FrontendOps"]


def _refuse(what: str, feature: str) -> NotOfferedError:
    return NotOfferedError(f"{what}: {feature} is not offered by the cudnnfe C ABI")


class FrontendOps:
    """The methods above, mixed into :class:`pygraph` (see :mod:`cudnnfe._frontend_ops`)."""

    # ---- composed ------------------------------------------------------------------

    def leaky_relu(self, input: Operand, negative_slope: float, compute_data_type: DType = None,
                   name: Optional[str] = None) -> Tensor:
        """``x`` where ``x > 0``, else ``negative_slope * x`` (RELU_FWD with a slope)."""
        return self._unary(pointwise_mode.RELU_FWD, "leaky_relu", input, compute_data_type, name,
                           relu_lower_clip_slope=negative_slope)

    def leaky_relu_backward(self, loss: Operand, input: Operand, negative_slope: float,
                            compute_data_type: DType = None,
                            name: Optional[str] = None) -> Tensor:
        """dx of :meth:`leaky_relu` from ``loss`` (dy) and ``input`` (x) (RELU_BWD)."""
        return self._bwd(pointwise_mode.RELU_BWD, "leaky_relu_backward", loss, input,
                         compute_data_type, name, relu_lower_clip_slope=negative_slope)

    def tensor_scalar(self, value: Any, scalar_type: Any = _scalar_type.COMPILE_TIME_CONST
                      ) -> Tensor:
        """A one-element pass-by-value tensor holding ``value`` (FLOAT for a float, INT32 for
        an int that fits, else INT64). Both scalar types keep the value in the graph."""
        _enum_value(_scalar_type, scalar_type, "scalar_type")
        if not _is_number(value):
            raise TypeError(f"tensor_scalar: value must be a number, not {type(value).__name__}")
        if isinstance(value, float) or not float(value).is_integer():
            dtype = data_type.FLOAT
        else:
            dtype = data_type.INT32 if -2**31 <= int(value) < 2**31 else data_type.INT64
        node = self._node_name("scalar", None)
        self._node_names.add(node)
        uid = self._operand(value, node, "value", scalar=True, scalar_dtype=dtype)
        return self._wrap(uid, "scalar")

    # ---- answered ------------------------------------------------------------------

    def query_tensor_attributes_of_uid(self, uid: int) -> Tensor:
        """The tensor whose UID is ``uid`` (ValueError if the graph has none)."""
        c_uid = _c_uid(uid)
        if c_uid not in self._all_c_uids():
            raise ValueError(f"graph {self.get_name()!r} has no tensor with UID {uid}")
        return self._wrap(c_uid)

    def key(self) -> int:
        """A 60-bit integer key of the graph's structure (from :meth:`get_fingerprint`)."""
        return int(self.get_fingerprint()[:15], 16)

    # ---- refused -------------------------------------------------------------------

    def get_engine_count(self) -> int:
        """Engine enumeration is not offered (cudnnfe picks engines by heuristics)."""
        raise _refuse("get_engine_count", "enumerating cuDNN engines")

    def get_knobs_for_engine(self, engine_id: int = 0) -> Any:
        """Engine knobs are not offered."""
        raise _refuse("get_knobs_for_engine", "engine knobs")

    def create_execution_plan(self, engine_id: int = 0, knobs: Any = None) -> None:
        """Building a plan from an engine id and knobs is not offered."""
        raise _refuse("create_execution_plan", "building a plan from an engine id and knobs "
                      "(use create_execution_plans with heuristic modes)")

    def select_numeric_notes(self, notes: Any = None) -> Any:
        """Keeping only engines with given numerical notes is not offered (deselect is)."""
        raise _refuse("select_numeric_notes", "keeping only engines that have numerical notes "
                      "(deselect_numeric_notes is offered)")

    def sdpa_mxfp8(self, q: Operand, k: Operand, v: Operand, descale_q: Operand,
                   descale_k: Operand, descale_v: Operand, generate_stats: bool = False,
                   **options: Any) -> Any:
        """MXFP8 (block-scaled) attention is not offered."""
        raise _refuse("sdpa_mxfp8", "MXFP8 (block-scaled) attention")

    def sdpa_mxfp8_backward(self, q: Operand, q_T: Operand, k: Operand, k_T: Operand,
                            v: Operand, o_f16: Operand, dO_f16: Operand, dO: Operand,
                            dO_T: Operand, stats: Operand, descale_q: Operand,
                            descale_q_T: Operand, descale_k: Operand, descale_k_T: Operand,
                            descale_v: Operand, descale_dO: Operand, descale_dO_T: Operand,
                            **options: Any) -> Any:
        """MXFP8 (block-scaled) attention backward is not offered."""
        raise _refuse("sdpa_mxfp8_backward", "MXFP8 (block-scaled) attention")
