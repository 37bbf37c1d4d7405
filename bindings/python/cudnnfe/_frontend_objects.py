"""cudnn-frontend module objects that cudnnfe keeps so its code runs: the kernel cache,
device properties, engine knobs and the causal_conv1d entry points.

The kernel cache and device properties are the C ABI's (``cudnnfe_kernel_cache_*``,
``cudnnfe_device_properties_*``); what needs a C ABI feature cudnnfe lacks (engine knobs,
causal_conv1d) raises :class:`NotOfferedError` naming it when used.
"""
from __future__ import annotations

from typing import Any

from ._enums import knob_type
from ._errors import NotOfferedError, raise_global_error
from ._lib import ffi, lib

__all__ = ["KernelCache", "create_kernel_cache", "DeviceProperties",
           "create_device_properties", "knob",
           "causal_conv1d_forward", "causal_conv1d_backward"]

class KernelCache:
    """What ``pygraph(kernel_cache=...)`` takes: compiled kernels shared by the GPU builds of
    graphs of one topology and different shapes (``cudnnfe_kernel_cache_t``; a graph given
    one is built as a dynamic-shape graph). The CPU reference leaves it empty.

    :meth:`serialize` gives cuDNN's JSON of the cache (an empty cache raises
    :class:`WrongStateError`); :meth:`deserialize` loads it into an empty cache.
    """

    def __init__(self) -> None:
        out = ffi.new("cudnnfe_kernel_cache_t **")
        status = lib.cudnnfe_kernel_cache_create(out)
        if status:
            raise_global_error(status)
        self._ptr = ffi.gc(out[0], lib.cudnnfe_kernel_cache_destroy)

    def serialize(self) -> str:
        """cuDNN's JSON of the cache (``cudnnfe_kernel_cache_serialize``)."""
        size = ffi.new("size_t *")
        status = lib.cudnnfe_kernel_cache_serialize(self._ptr, ffi.NULL, 0, size)
        if status:
            raise_global_error(status)
        buf = ffi.new("char[]", max(size[0], 1))
        status = lib.cudnnfe_kernel_cache_serialize(self._ptr, buf, size[0], size)
        if status:
            raise_global_error(status)
        return ffi.unpack(buf, size[0]).decode("utf-8")

    def deserialize(self, data: Any) -> None:
        """Load what :meth:`serialize` wrote into this empty cache."""
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        status = lib.cudnnfe_kernel_cache_deserialize(self._ptr, raw, len(raw))
        if status:
            raise_global_error(status)

    def __repr__(self) -> str:
        return "<cudnnfe.KernelCache>"


def create_kernel_cache() -> KernelCache:
    """A kernel cache for ``pygraph(kernel_cache=...)`` (see :class:`KernelCache`)."""
    return KernelCache()


class DeviceProperties:
    """What ``pygraph(device_property=...)`` takes: one GPU as cuDNN describes it
    (``cudnnfe_device_properties_t``; cuDNN 9.8 or later). A graph given them builds for that
    GPU without using one (no handle); its :meth:`~cudnnfe.pygraph.serialize` then writes the
    plan blob, which :meth:`~cudnnfe.pygraph.deserialize` loads with a handle on such a GPU
    (``docs/plans.md``). Make them with :func:`create_device_properties`.
    """

    def __init__(self, ptr: Any) -> None:
        self._ptr = ffi.gc(ptr, lib.cudnnfe_device_properties_destroy)

    def serialize(self) -> str:
        """cuDNN's JSON of the properties (``cudnnfe_device_properties_serialize``), which
        :func:`create_device_properties` takes back."""
        size = ffi.new("size_t *")
        status = lib.cudnnfe_device_properties_serialize(self._ptr, ffi.NULL, 0, size)
        if status:
            raise_global_error(status)
        buf = ffi.new("char[]", max(size[0], 1))
        status = lib.cudnnfe_device_properties_serialize(self._ptr, buf, size[0], size)
        if status:
            raise_global_error(status)
        return ffi.unpack(buf, size[0]).decode("utf-8")

    def __repr__(self) -> str:
        return "<cudnnfe.DeviceProperties>"


def create_device_properties(source: Any) -> DeviceProperties:
    """Device properties (cudnn-frontend's ``create_device_properties``): of CUDA device
    ``source`` (an int; needs that GPU), or loaded from what :meth:`DeviceProperties.serialize`
    wrote (a str or bytes; needs cuDNN, not a GPU). Bad JSON raises
    :class:`BadSerializedDataError` saying why; a cuDNN older than 9.8 raises
    :class:`GraphNotSupportedError` naming its version."""
    out = ffi.new("cudnnfe_device_properties_t **")
    if isinstance(source, bool) or not isinstance(source, (int, str, bytes, bytearray)):
        raise TypeError("create_device_properties takes a CUDA device index (int) or the JSON "
                        f"that DeviceProperties.serialize() wrote (str), not "
                        f"{type(source).__name__}")
    if isinstance(source, int):
        status = lib.cudnnfe_device_properties_create(out, source)
    else:
        raw = source.encode("utf-8") if isinstance(source, str) else bytes(source)
        status = lib.cudnnfe_device_properties_create_from_json(out, raw, len(raw))
    if status:
        raise_global_error(status)
    return DeviceProperties(out[0])


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
