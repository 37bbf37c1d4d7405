"""Memory layouts and the seeded input data of a graph: strides from a dimension order, NumPy
arrays stored in a given order, integer-valued and normal values, and the data types by name."""
import math

import numpy as np

try:  # BFLOAT16 arrays on the host (cudnnfe's Python package depends on ml_dtypes)
    import ml_dtypes
    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - cudnnfe itself needs it
    _BF16 = None

# cuDNN data type name -> NumPy dtype of its arrays.
NUMPY = {"FLOAT": np.dtype(np.float32), "HALF": np.dtype(np.float16), "BFLOAT16": _BF16,
         "INT32": np.dtype(np.int32), "INT64": np.dtype(np.int64), "BOOLEAN": np.dtype(bool)}

FLOAT_TYPES = ("FLOAT", "HALF", "BFLOAT16")


def type_name(array):
    for name, dt in NUMPY.items():
        if dt is not None and array.dtype == dt:
            return name
    raise TypeError(f"no cuDNN data type for NumPy dtype {array.dtype}")


def order_strides(dims, order):
    """Strides (in elements) of dims stored with ``order`` (logical dims, outermost first)."""
    strides = [0] * len(dims)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= dims[d]
    return strides


def contiguous(dims):
    return order_strides(dims, list(range(len(dims))))


def channels_last_order(rank):
    """N, spatial..., C: cudnn-frontend's NHWC stride order for any rank."""
    return [0] + list(range(2, rank)) + [1]


def channels_last(dims):
    return order_strides(dims, channels_last_order(len(dims)))


def elem_strides(array):
    return [s // array.itemsize for s in array.strides]


def span(dims, strides):
    """Elements from the first to the last one a layout reaches."""
    if any(d == 0 for d in dims):
        return 0
    return 1 + sum((d - 1) * s for d, s in zip(dims, strides))


def same_layout(dims, a, b):
    """Two stride lists place the elements of dims identically (dims of size 1 do not count)."""
    return all(d == 1 or x == y for d, x, y in zip(dims, a, b))


def stored(values, order, dtype):
    """An array of ``values``' logical shape whose memory runs in ``order``."""
    dtype = NUMPY[dtype] if isinstance(dtype, str) else dtype
    inverse = np.argsort(order)
    return np.ascontiguousarray(np.asarray(values).transpose(order)).astype(dtype).transpose(
        inverse)


def strided_view(buffer, dims, strides):
    return np.lib.stride_tricks.as_strided(buffer, dims, [s * buffer.itemsize for s in strides])


def empty(dims, strides, dtype, fill=np.nan):
    """A NumPy array of dims at strides, its whole span pre-filled with ``fill`` (NaN for
    floats, so that an element an implementation does not write shows)."""
    dtype = NUMPY[dtype] if isinstance(dtype, str) else dtype
    count = max(span(dims, strides), 1)
    buf = np.full(count, fill if dtype.kind == "f" or dtype == _BF16 else 0, dtype=dtype)
    return strided_view(buf, dims, strides)


def ints(nrng, shape, lo, hi, zero_fraction=0.0):
    """Integer values in [lo, hi] (float64), a fraction of them zero: exact in every float type
    and in fp32 / TF32 accumulation, so convolutions and matmuls can be compared tightly."""
    v = nrng.integers(lo, hi + 1, size=shape).astype(np.float64)
    if zero_fraction:
        v[nrng.random(shape) < zero_fraction] = 0.0
    return v


def normals(nrng, shape, std=1.0, mean=0.0):
    return nrng.normal(mean, std, size=shape)


def rounded(values, dtype):
    """values rounded to dtype and back to float64 (what an array of dtype holds)."""
    return np.asarray(values, dtype=np.float64).astype(NUMPY[dtype]).astype(np.float64)


def count(dims):
    return math.prod(dims)
