"""cudnn-frontend module objects that cudnnfe keeps so its code runs: the kernel cache,
device properties, engine knobs and the causal_conv1d entry points.

None of them adds a feature: the kernel cache is an empty token (cudnnfe's
plan cache does that job, ``docs/plans.md``), and what needs a C ABI feature
cudnnfe lacks (deviceless builds, engine knobs, causal_conv1d) raises
:class:`NotOfferedError` naming it when used.
"""
from __future__ import annotations

import json
from typing import Any

from ._enums import knob_type
from ._errors import NotOfferedError

__all__ = ["KernelCache", "create_kernel_cache", "create_device_properties", "knob",
           "causal_conv1d_forward", "causal_conv1d_backward"]

_CACHE_FORMAT = "cudnnfe-kernel-cache"


class KernelCache:
    """What ``pygraph(kernel_cache=...)`` takes: accepted, and empty.

    cudnn-frontend shares compiled kernels between graphs of different shapes
    through it. cudnnfe reuses built plans by itself (the in-process plan
    cache, and ``CUDNNFE_PLAN_CACHE_DIR``), so this object carries nothing;
    :meth:`serialize` and :meth:`deserialize` round-trip that emptiness.
    """

    def serialize(self) -> str:
        """A JSON string that :meth:`deserialize` accepts."""
        return json.dumps({"format": _CACHE_FORMAT, "version": 1})

    def deserialize(self, data: Any) -> None:
        """Accept what :meth:`serialize` wrote (ValueError for anything else)."""
        try:
            parsed = json.loads(data)
        except (TypeError, ValueError):
            raise ValueError("kernel_cache.deserialize: not a JSON string written by "
                             "cudnnfe's kernel_cache.serialize()") from None
        if not isinstance(parsed, dict) or parsed.get("format") != _CACHE_FORMAT:
            raise ValueError("kernel_cache.deserialize: not a cudnnfe kernel cache (a cuDNN "
                             "frontend kernel cache cannot be loaded by cudnnfe)")

    def __repr__(self) -> str:
        return "<cudnnfe.KernelCache (plans are cached by cudnnfe's plan cache)>"


def create_kernel_cache() -> KernelCache:
    """A kernel cache for ``pygraph(kernel_cache=...)`` (see :class:`KernelCache`)."""
    return KernelCache()


def create_device_properties(*args: Any, **kwargs: Any) -> Any:
    """cudnn-frontend's device properties, for building without a GPU: not offered."""
    raise NotOfferedError("create_device_properties: deviceless (ahead-of-time) builds are not "
                          "offered by the cudnnfe C ABI; build on the GPU that runs the graph")


class knob:
    """An engine knob (cudnn-frontend's ``cudnn.knob``); engine knobs are not offered by the
    C ABI, so a knob can be described but not applied (``create_execution_plan`` refuses)."""

    def __init__(self, knob_type: Any = knob_type.NOT_SET, max_value: Any = None,
                 min_value: Any = None, stride: Any = None) -> None:
        self.knob_type = knob_type
        self.max_value = max_value
        self.min_value = min_value
        self.stride = stride

    def __repr__(self) -> str:
        return (f"<cudnnfe.knob {getattr(self.knob_type, 'name', self.knob_type)} "
                f"min={self.min_value} max={self.max_value} stride={self.stride}>")


def causal_conv1d_forward(*args: Any, **kwargs: Any) -> Any:
    """cudnn-frontend's causal 1-D convolution kernel: not offered by cudnnfe."""
    raise NotOfferedError("causal_conv1d_forward (cudnn-frontend's causal 1-D convolution "
                          "kernel) is not offered by the cudnnfe C ABI")


def causal_conv1d_backward(*args: Any, **kwargs: Any) -> Any:
    """cudnn-frontend's causal 1-D convolution backward kernel: not offered by cudnnfe."""
    raise NotOfferedError("causal_conv1d_backward (cudnn-frontend's causal 1-D convolution "
                          "kernel) is not offered by the cudnnfe C ABI")
