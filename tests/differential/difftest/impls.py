"""The implementations a graph runs on, behind one interface: cudnnfe on its CPU reference
(NumPy arrays), cudnnfe on the GPU and NVIDIA's cudnn-frontend on the GPU (torch arrays).

Each makes graphs with its own ``cudnn`` module (so the families' builders run unchanged on
both), builds them with heuristics A then FALLBACK, makes and reads arrays, and says whether an
exception is a refusal (cudnn-frontend's ``cudnnGraphNotSupportedError``; cudnnfe's
``GraphNotSupportedError`` is the same name there)."""
import os
import sys

import numpy as np

from . import layout

CUDNNFE = "cudnnfe"
FRONTEND = "cudnn-frontend"


class Unavailable(Exception):
    """An implementation cannot run here; the message says why."""


class Implementation:
    name = ""
    mod = None

    def graph_kwargs(self):
        return {}

    def new_graph(self, io, intermediate="FLOAT", compute="FLOAT"):
        dt = self.mod.data_type
        return self.mod.pygraph(io_data_type=getattr(dt, io),
                                intermediate_data_type=getattr(dt, intermediate),
                                compute_data_type=getattr(dt, compute), **self.graph_kwargs())

    def build(self, g):
        """cudnn-frontend's five steps (validate has been called already)."""
        g.build_operation_graph()
        g.create_execution_plans([self.mod.heur_mode.A, self.mod.heur_mode.FALLBACK])
        g.check_support()
        g.build_plans()

    def is_refusal(self, exc):
        return isinstance(exc, self.mod.cudnnGraphNotSupportedError)

    def poison(self, a):
        """Overwrites an output with NaN (0 for integer types) before a repeated execute."""
        a[...] = np.nan if np.issubdtype(np.asarray(a).dtype, np.inexact) or \
            layout.type_name(a) == "BFLOAT16" else 0


class CudnnfeCpu(Implementation):
    """cudnnfe's CPU reference executor (target CPU_REFERENCE), on NumPy arrays."""
    name = CUDNNFE
    device = "cpu"

    def __init__(self):
        import cudnnfe
        self.mod = cudnnfe

    def graph_kwargs(self):
        return {"target": self.mod.target.CPU_REFERENCE}

    def array(self, a, by_value=False):
        return a

    def empty(self, dims, strides, dtype):
        return layout.empty(dims, strides, dtype)

    def flat(self, elements, dtype):
        return layout.empty([elements], [1], dtype)

    def host(self, a):
        return np.asarray(a, dtype=np.float64)

    def execute(self, g, pack):
        size = g.get_workspace_size()
        g.execute(pack, np.zeros(size, np.uint8) if size else None)


class _Gpu(Implementation):
    device = "gpu"

    def __init__(self):
        import torch
        self.torch = torch
        self.dev = torch.device("cuda")

    def _torch_dtype(self, a):
        name = layout.type_name(a)
        t = self.torch
        return {"FLOAT": t.float32, "HALF": t.float16, "BFLOAT16": t.bfloat16,
                "INT32": t.int32, "INT64": t.int64, "BOOLEAN": t.bool}[name]

    def array(self, a, by_value=False):
        """A torch copy of a with a's dims and strides, on the GPU (host for pass-by-value)."""
        t = self.torch
        dtype = self._torch_dtype(a)
        src = np.ascontiguousarray(a)
        if layout.type_name(a) == "BFLOAT16":
            src_t = t.from_numpy(src.astype(np.float32)).to(dtype)
        else:
            src_t = t.from_numpy(src)
        strides = layout.elem_strides(a)
        device = t.device("cpu") if by_value else self.dev
        buf = t.empty(max(layout.span(a.shape, strides), 1), dtype=dtype, device=device)
        out = buf.as_strided(tuple(a.shape), tuple(strides))
        out.copy_(src_t)
        return out

    def empty(self, dims, strides, dtype):
        t = self.torch
        tdt = self._torch_dtype(np.empty(0, layout.NUMPY[dtype]))
        buf = t.empty(max(layout.span(dims, strides), 1), dtype=tdt, device=self.dev)
        buf.fill_(float("nan") if tdt.is_floating_point else 0)
        return buf.as_strided(tuple(dims), tuple(strides))

    def flat(self, elements, dtype):
        return self.empty([elements], [1], dtype)

    def host(self, a):
        return a.detach().to(self.torch.float64).cpu().numpy()

    def poison(self, a):
        a.fill_(float("nan") if a.is_floating_point() else 0)

    def execute(self, g, pack):
        ws = self.torch.empty(max(g.get_workspace_size(), 1), dtype=self.torch.uint8,
                              device=self.dev)
        g.execute(pack, ws, handle=self.handle)
        self.torch.cuda.synchronize()


class CudnnfeGpu(_Gpu):
    name = CUDNNFE

    def __init__(self):
        super().__init__()
        import cudnnfe
        self.mod = cudnnfe
        self.handle = cudnnfe.create_handle()

    def graph_kwargs(self):
        return {"target": self.mod.target.GPU, "handle": self.handle}


class FrontendGpu(_Gpu):
    """NVIDIA's cudnn-frontend (the nvidia-cudnn-frontend wheel, imported as ``cudnn``)."""
    name = FRONTEND

    def __init__(self):
        super().__init__()
        self.mod = import_frontend()
        self.handle = self.mod.create_handle()

    def graph_kwargs(self):
        return {"handle": self.handle}


def import_frontend():
    """NVIDIA's ``cudnn`` module, refusing cudnnfe's own package under that name."""
    try:
        import cudnn
    except Exception as e:  # ImportError, or the wheel's own start-up failing
        raise Unavailable(f"cannot import NVIDIA's cudnn-frontend (`import cudnn`): "
                          f"{type(e).__name__}: {e}") from None
    if getattr(cudnn, "__name__", "") != "cudnn" or hasattr(cudnn, "library_info"):
        raise Unavailable("`import cudnn` is not NVIDIA's cudnn-frontend")
    return cudnn


def gpu_reason():
    """Why the GPU target cannot run here ("" when it can)."""
    try:
        import torch
    except ImportError:
        return "the GPU target needs torch, which is not installed"
    if not torch.cuda.is_available():
        return "the GPU target needs a CUDA device; torch sees none"
    return ""


def make(target, want_frontend=True):
    """(implementations, {name: reason} of those left out) for a target."""
    skipped = {}
    if target == "cpu":
        skipped[FRONTEND] = "not on the CPU target (cudnn-frontend runs on the GPU only)"
        return [CudnnfeCpu()], skipped
    impls = [CudnnfeGpu()]
    if not want_frontend:
        skipped[FRONTEND] = "left out with --no-frontend"
        return impls, skipped
    try:
        impls.append(FrontendGpu())
    except Unavailable as e:
        skipped[FRONTEND] = str(e)
    except Exception as e:  # creating its handle failed
        skipped[FRONTEND] = f"cudnn-frontend could not start: {type(e).__name__}: {e}"
    return impls, skipped


def describe_versions(impls):
    out = {}
    for impl in impls:
        mod = impl.mod
        version = getattr(mod, "__version__", "?")
        try:
            backend = mod.backend_version() if impl.device == "gpu" else None
        except Exception:  # noqa: BLE001 - informative only
            backend = None
        out[impl.name] = {"version": version, "cudnn_backend": backend,
                          "module": os.path.dirname(getattr(mod, "__file__", "") or "")}
    out["python"] = sys.version.split()[0]
    return out
