"""Reading arrays of other libraries without copying them.

An array reaches cudnnfe as one of:

* a ``torch.Tensor`` (read through ``data_ptr()``, ``shape``, ``stride()``:
  the fastest path);
* a NumPy ``ndarray`` (``__array_interface__``): host memory, for the CPU
  reference;
* any object with ``__cuda_array_interface__`` (CuPy, Numba, ...);
* any object with ``__dlpack__`` / ``__dlpack_device__`` (JAX, TensorFlow,
  PyTorch, CuPy, NumPy, ...), read from its DLPack capsule.

Each is described by an :class:`ArrayInfo`: data pointer, shape, strides in
elements, cudnnfe data type and device.
"""
from __future__ import annotations

import ctypes
import sys
from typing import Any, Dict, NamedTuple, Optional, Sequence, Tuple

from ._enums import data_type

__all__ = ["ArrayInfo", "describe", "dtype_of", "is_array", "CPU", "CUDA", "CUDA_HOST"]

# Where an array's memory lives.
CPU = 1        # host memory: the CPU reference reads it
CUDA = 2       # device memory: the GPU reads it
CUDA_HOST = 3  # pinned or managed memory: both can read it

_DEVICE_NAMES = {CPU: "host (CPU)", CUDA: "CUDA device", CUDA_HOST: "pinned/managed"}


class ArrayInfo(NamedTuple):
    """What cudnnfe needs to know of an array to bind it to a tensor."""

    ptr: int
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]  # in elements
    dtype: Optional[data_type]  # None: a type cudnnfe has no equivalent for
    device: int  # CPU, CUDA or CUDA_HOST
    device_id: int  # -1 when unknown
    type_name: str  # e.g. "numpy.float32", "torch.bfloat16" (for messages)
    keepalive: Any = None  # an object that must outlive the use of ptr


def device_name(device: int) -> str:
    return _DEVICE_NAMES.get(device, f"device type {device}")


# --------------------------------------------------------------------------
# Data types
# --------------------------------------------------------------------------

# (kind, itemsize) of NumPy / array-interface type strings.
_TYPESTR: Dict[Tuple[str, int], data_type] = {
    ("f", 2): data_type.HALF,
    ("f", 4): data_type.FLOAT,
    ("f", 8): data_type.DOUBLE,
    ("i", 1): data_type.INT8,
    ("i", 4): data_type.INT32,
    ("i", 8): data_type.INT64,
    ("u", 1): data_type.UINT8,
    ("b", 1): data_type.BOOLEAN,
}
# NumPy extension types (ml_dtypes) by name.
_NUMPY_NAMES: Dict[str, data_type] = {
    "bfloat16": data_type.BFLOAT16,
    "float8_e4m3fn": data_type.FP8_E4M3,
    "float8_e5m2": data_type.FP8_E5M2,
}
# DLPack (code, bits) pairs.
_DLPACK: Dict[Tuple[int, int], data_type] = {
    (0, 8): data_type.INT8,
    (0, 32): data_type.INT32,
    (0, 64): data_type.INT64,
    (1, 8): data_type.UINT8,
    (2, 16): data_type.HALF,
    (2, 32): data_type.FLOAT,
    (2, 64): data_type.DOUBLE,
    (4, 16): data_type.BFLOAT16,
    (6, 8): data_type.BOOLEAN,
    (10, 8): data_type.FP8_E4M3,
    (12, 8): data_type.FP8_E5M2,
}
_TORCH_NAMES: Dict[str, data_type] = {
    "float32": data_type.FLOAT,
    "float16": data_type.HALF,
    "bfloat16": data_type.BFLOAT16,
    "float64": data_type.DOUBLE,
    "int8": data_type.INT8,
    "int32": data_type.INT32,
    "int64": data_type.INT64,
    "uint8": data_type.UINT8,
    "bool": data_type.BOOLEAN,
    "float8_e4m3fn": data_type.FP8_E4M3,
    "float8_e5m2": data_type.FP8_E5M2,
}

_torch_tensor_type: Any = None
_torch_dtypes: Dict[Any, data_type] = {}


def _torch_tensor_class() -> Any:
    """torch.Tensor if torch is already imported (never imports torch itself)."""
    global _torch_tensor_type
    if _torch_tensor_type is None:
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        _torch_tensor_type = torch.Tensor
        for name, dt in _TORCH_NAMES.items():
            if hasattr(torch, name):
                _torch_dtypes[getattr(torch, name)] = dt
    return _torch_tensor_type


def _numpy_dtype(dt: Any) -> Optional[data_type]:
    found = _NUMPY_NAMES.get(dt.name)
    if found is not None:
        return found
    return _TYPESTR.get((dt.kind, dt.itemsize))


def dtype_of(value: Any) -> Optional[data_type]:
    """The cudnnfe data type of a NumPy/torch dtype, a type string or an array; None if none."""
    if isinstance(value, data_type):
        return value
    torch_cls = _torch_tensor_class()
    if torch_cls is not None and value in _torch_dtypes:
        return _torch_dtypes[value]
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            return _numpy_dtype(np.dtype(value))
        except TypeError:
            pass
    if hasattr(value, "dtype"):
        return dtype_of(value.dtype)
    return None


def numpy_dtype(dt: data_type) -> Any:
    """The NumPy dtype for a cudnnfe data type (BFLOAT16 and FP8 need ml_dtypes)."""
    import numpy as np

    for (kind, size), value in _TYPESTR.items():
        if value == dt:
            return np.dtype(f"{kind}{size}") if kind != "b" else np.dtype(bool)
    for name, value in _NUMPY_NAMES.items():
        if value == dt:
            try:
                import ml_dtypes
            except ImportError:
                raise TypeError(f"a NumPy array of {dt.name} needs the ml_dtypes package "
                                "(pip install ml_dtypes)") from None
            return np.dtype(getattr(ml_dtypes, name))
    raise TypeError(f"no NumPy dtype for {dt!r}")


def torch_dtype_or_none(dt: data_type) -> Any:
    """The torch dtype for a cudnnfe data type, None if torch has none (torch imported)."""
    torch = sys.modules.get("torch")
    for name, value in _TORCH_NAMES.items():
        if value == dt and torch is not None and hasattr(torch, name):
            return getattr(torch, name)
    return None


def torch_dtype(dt: data_type) -> Any:
    """The torch dtype for a cudnnfe data type."""
    import torch

    for name, value in _TORCH_NAMES.items():
        if value == dt and hasattr(torch, name):
            return getattr(torch, name)
    raise TypeError(f"no torch dtype for {dt!r}")


# --------------------------------------------------------------------------
# DLPack
# --------------------------------------------------------------------------

_dl_ffi: Any = None
_capsule_get_pointer: Any = None
_capsule_is_valid: Any = None


def _dlpack_setup() -> None:
    global _dl_ffi, _capsule_get_pointer, _capsule_is_valid
    if _dl_ffi is not None:
        return
    import cffi

    f = cffi.FFI()
    f.cdef("""
        typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
        typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
        typedef struct {
            void *data; DLDevice device; int32_t ndim; DLDataType dtype;
            int64_t *shape; int64_t *strides; uint64_t byte_offset;
        } DLTensor;
        typedef struct DLManagedTensor {
            DLTensor dl_tensor; void *manager_ctx; void (*deleter)(struct DLManagedTensor *);
        } DLManagedTensor;
        typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
        typedef struct DLManagedTensorVersioned {
            DLPackVersion version; void *manager_ctx;
            void (*deleter)(struct DLManagedTensorVersioned *); uint64_t flags;
            DLTensor dl_tensor;
        } DLManagedTensorVersioned;
    """)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    valid = ctypes.pythonapi.PyCapsule_IsValid
    valid.restype = ctypes.c_int
    valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    _dl_ffi, _capsule_get_pointer, _capsule_is_valid = f, get, valid


def _describe_dlpack(obj: Any) -> ArrayInfo:
    """Read an array through its DLPack capsule.

    The capsule is not consumed (not renamed to "used_dltensor"): it keeps its
    own destructor, which calls the producer's deleter when the capsule dies.
    The capsule is returned as keepalive, so the memory stays valid while the
    caller holds the ArrayInfo (and the array).
    """
    _dlpack_setup()
    try:
        capsule = obj.__dlpack__(max_version=(1, 0))
    except TypeError:
        capsule = obj.__dlpack__()
    if _capsule_is_valid(capsule, b"dltensor_versioned"):
        addr = _capsule_get_pointer(capsule, b"dltensor_versioned")
        managed = _dl_ffi.cast("DLManagedTensorVersioned *", addr)
        t = managed.dl_tensor
    elif _capsule_is_valid(capsule, b"dltensor"):
        addr = _capsule_get_pointer(capsule, b"dltensor")
        t = _dl_ffi.cast("DLManagedTensor *", addr).dl_tensor
    else:
        raise TypeError(f"{type(obj).__name__}.__dlpack__() returned no DLPack capsule")
    ndim = t.ndim
    shape = tuple(t.shape[i] for i in range(ndim))
    if t.strides == _dl_ffi.NULL:
        strides = _packed(shape)
    else:
        strides = tuple(t.strides[i] for i in range(ndim))
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    dt = _DLPACK.get((code, bits)) if lanes == 1 else None
    dev_type = t.device.device_type
    device = {1: CPU, 2: CUDA, 3: CUDA_HOST, 13: CUDA_HOST}.get(dev_type, -dev_type)
    ptr = int(_dl_ffi.cast("uintptr_t", t.data)) + int(t.byte_offset)
    return ArrayInfo(ptr, shape, strides, dt, device, t.device.device_id,
                     f"{type(obj).__module__}.{type(obj).__name__} (DLPack code {code}, "
                     f"{bits} bits)", (capsule, obj))


# --------------------------------------------------------------------------
# describe()
# --------------------------------------------------------------------------


def _packed(shape: Sequence[int]) -> Tuple[int, ...]:
    strides = []
    acc = 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(int(d), 1)
    return tuple(reversed(strides))


def _byte_strides_to_elements(strides: Sequence[int], itemsize: int, what: str) -> Tuple[int, ...]:
    out = []
    for s in strides:
        if s % itemsize:
            raise ValueError(f"{what}: stride of {s} bytes is not a multiple of the element "
                             f"size ({itemsize} bytes)")
        out.append(s // itemsize)
    return tuple(out)


def is_array(value: Any) -> bool:
    """True for an object :func:`describe` can read."""
    torch_cls = _torch_tensor_class()
    if torch_cls is not None and isinstance(value, torch_cls):
        return True
    return (hasattr(value, "__array_interface__") or hasattr(value, "__cuda_array_interface__")
            or hasattr(value, "__dlpack__"))


def describe(value: Any) -> ArrayInfo:
    """Describe an array (torch, NumPy, CUDA array interface, DLPack) without copying it."""
    torch_cls = _torch_tensor_class()
    if torch_cls is not None and isinstance(value, torch_cls):
        dt = _torch_dtypes.get(value.dtype)
        if value.is_cuda:
            device, device_id = CUDA, value.get_device()
        else:
            device, device_id = (CUDA_HOST if value.is_pinned() else CPU), -1
        return ArrayInfo(value.data_ptr(), tuple(value.shape), tuple(value.stride()), dt,
                         device, device_id, str(value.dtype), value)
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        typestr = cai["typestr"]
        itemsize = int(typestr[2:])
        dt = _TYPESTR.get((typestr[1], itemsize))
        shape = tuple(int(d) for d in cai["shape"])
        raw = cai.get("strides")
        strides = (_packed(shape) if raw is None else
                   _byte_strides_to_elements(raw, itemsize, type(value).__name__))
        ptr = cai["data"][0] or 0
        return ArrayInfo(ptr, shape, strides, dt, CUDA, -1,
                         f"{type(value).__module__}.{type(value).__name__} ({typestr})", value)
    ai = getattr(value, "__array_interface__", None)
    if ai is not None and hasattr(value, "dtype") and hasattr(value, "strides"):
        # NumPy arrays (and subclasses).
        dtype = value.dtype
        dt = _numpy_dtype(dtype)
        strides = _byte_strides_to_elements(value.strides, dtype.itemsize, "numpy array")
        return ArrayInfo(ai["data"][0] or 0, tuple(value.shape), strides, dt, CPU, -1,
                         f"numpy.{dtype.name}", value)
    if hasattr(value, "__dlpack__"):
        return _describe_dlpack(value)
    if ai is not None:
        typestr = ai["typestr"]
        itemsize = int(typestr[2:])
        shape = tuple(int(d) for d in ai["shape"])
        raw = ai.get("strides")
        strides = (_packed(shape) if raw is None else
                   _byte_strides_to_elements(raw, itemsize, type(value).__name__))
        return ArrayInfo(ai["data"][0] or 0, shape, strides, _TYPESTR.get((typestr[1], itemsize)),
                         CPU, -1, f"{type(value).__name__} ({typestr})", value)
    raise TypeError(
        f"{type(value).__module__}.{type(value).__name__} is not an array cudnnfe can read: "
        "pass a torch.Tensor, a NumPy array, or an object with __dlpack__ or "
        "__cuda_array_interface__")


def nbytes(info: ArrayInfo, itemsize: int) -> int:
    """Bytes spanned by an array (max offset + 1 element)."""
    if any(d == 0 for d in info.shape):
        return 0
    span = 1 + sum((d - 1) * s for d, s in zip(info.shape, info.strides))
    return span * itemsize


def host_scalar(value: Any) -> Optional[float]:
    """The value of a one-element array in host memory, else None (a number option given as
    an array: ``epsilon=np.float32(1e-5)``-like one-element host arrays)."""
    try:
        info = describe(value)
    except (TypeError, ValueError):
        return None
    if info.device != CPU or info.dtype is None or any(d != 1 for d in info.shape):
        return None
    import numpy as np

    from ._lib import ffi

    dt = numpy_dtype(info.dtype)
    raw = ffi.buffer(ffi.cast("char *", info.ptr), dt.itemsize)
    return float(np.frombuffer(bytes(raw), dtype=dt)[0])
