"""What a family's graph builder works with: the seeded input data (Data) and a Builder that
declares graph tensors from it and records the outputs, through whichever ``cudnn`` module
(cudnnfe, or NVIDIA's cudnn-frontend) it is given. The same builder code runs with both."""
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np

from . import layout


class Data:
    """Input arrays of one graph.

    ``bind[name]`` is the NumPy array bound to the graph tensor (in its memory layout; a flat
    buffer for a ragged tensor); ``values[name]`` its logical values in float64 for the
    reference; ``geometry[name]`` the (dims, strides) of a tensor whose array is a flat
    buffer."""

    def __init__(self):
        self.bind: Dict[str, np.ndarray] = {}
        self.values: Dict[str, np.ndarray] = {}
        self.geometry: Dict[str, tuple] = {}

    def add(self, name, array, values=None, dims=None, strides=None):
        self.bind[name] = array
        self.values[name] = (np.asarray(array, dtype=np.float64) if values is None
                             else np.asarray(values, dtype=np.float64))
        if dims is not None:
            self.geometry[name] = (list(dims), list(strides))
        return array


@dataclass
class Ragged:
    """A packed (THD) tensor: rows [0, lengths[n]) of batch n start at offsets[n] elements."""
    offsets: List[int]
    lengths: List[int]
    row_axis: int = 2


@dataclass
class Output:
    name: str
    tensor: Any
    dims: List[int]
    dtype: str
    user_strides: Optional[List[int]]
    strides: Optional[List[int]] = None  # set explicitly on the tensor
    ragged: Optional[Ragged] = None
    buffer_elements: int = 0  # a ragged output's buffer size


@dataclass
class Input:
    tensor: Any
    by_value: bool = False


class Builder:
    """Declares graph tensors for the arrays of ``data`` and records outputs.

    ``explicit``: outputs get their user strides with ``set_stride`` (as cudnn-frontend's
    samples do for dgrad / wgrad outputs); otherwise the implementation infers them."""

    def __init__(self, cudnn, graph, data: Data, explicit: bool):
        self.cudnn = cudnn
        self.g = graph
        self.data = data
        self.explicit = explicit
        self.inputs: Dict[str, Input] = {}
        self.outputs: Dict[str, Output] = {}

    def dtype(self, name):
        return getattr(self.cudnn.data_type, name)

    def tensor(self, name, by_value=False):
        """The graph tensor of input ``name`` (declared on first use)."""
        if name in self.inputs:
            return self.inputs[name].tensor
        array = self.data.bind[name]
        dims, strides = self.data.geometry.get(name, (list(array.shape),
                                                      layout.elem_strides(array)))
        t = self.g.tensor(name=name, dim=dims, stride=strides,
                          data_type=self.dtype(layout.type_name(array)),
                          is_pass_by_value=by_value)
        self.inputs[name] = Input(t, by_value)
        return t

    def output(self, t, name, dims, dtype, user_strides, set_dim=False, strides=None,
               ragged=None, buffer_elements=0):
        """Mark t an output. ``user_strides``: how user code allocates it without asking the
        graph (channels-last for conv outputs, contiguous for matmul, like the input for
        norms; None: no convention, user code sets the strides, as for attention outputs);
        ``strides``: set on the tensor whatever ``explicit`` says."""
        t.set_output(True).set_data_type(self.dtype(dtype))
        if strides is None and self.explicit and user_strides is not None:
            strides = list(user_strides)
        if set_dim or strides is not None:
            t.set_dim(list(dims))
        if strides is not None:
            t.set_stride(list(strides))
        self.outputs[name] = Output(name, t, list(dims), dtype,
                                    None if user_strides is None else list(user_strides),
                                    None if strides is None else list(strides), ragged,
                                    buffer_elements)
        return t


@dataclass
class Expected:
    """A reference output: values (float64, logical dims) and the elements to compare (None:
    all); ``exact_reference`` False when the reference cannot predict it (dropout on the GPU:
    compared between implementations only)."""
    values: np.ndarray
    mask: Optional[np.ndarray] = None
    exact_reference: bool = True
    tolerance: float = 1.0  # multiplies the data type's tolerance
    notes: List[str] = field(default_factory=list)
