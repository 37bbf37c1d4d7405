"""cudnn-frontend's ``cudnn.experimental`` namespace: ``experimental.ops.sdpa`` (attention
as a PyTorch operator, :mod:`cudnnfe._torch_sdpa`) and ``experimental.ops.moe_grouped_matmul``
(MoE grouped matmul as a PyTorch operator, :mod:`cudnnfe._torch_moe`).

The package ships as the flat ``cudnnfe`` directory, so these modules are made here and
served by a meta-path finder: ``import cudnnfe.experimental.ops.sdpa`` works, and so does the
same import through any name the ``cudnnfe`` package is registered under (the ``cudnn`` shim of
``scripts/fe_compat.sh``), always giving the same module objects. Nothing imports torch until
``sdpa`` is loaded.
"""
import importlib
import importlib.abc
import importlib.util
import sys
import types
from typing import Any, Optional

__all__ = ["install"]


def moe_grouped_matmul(*args: Any, **kwargs: Any) -> Any:
    """cudnn-frontend's ``moe_grouped_matmul(token, weight, first_token_offset, token_index=None,
    token_ks=None, mode="none", top_k=1)`` (:func:`cudnnfe._torch_moe.moe_grouped_matmul`);
    torch is imported on the first call, not before."""
    return importlib.import_module("cudnnfe._torch_moe").moe_grouped_matmul(*args, **kwargs)


def _module(name: str, doc: str, **attrs: Any) -> types.ModuleType:
    m = types.ModuleType(name, doc)
    m.__dict__.update(attrs)
    return m


def _ops_getattr(name: str) -> Any:
    if name == "sdpa":
        return importlib.import_module("cudnnfe._torch_sdpa")
    if name == "scaled_dot_product_attention":
        return importlib.import_module("cudnnfe._torch_sdpa").scaled_dot_product_attention
    raise AttributeError(f"module 'cudnnfe.experimental.ops' has no attribute {name!r}")


class _CallableModule(types.ModuleType):
    """A module that is also its function: importing the submodule
    ``experimental.ops.moe_grouped_matmul`` rebinds that name on ``ops`` to the module,
    and cudnn-frontend code calls ``ops.moe_grouped_matmul(...)`` either way."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return moe_grouped_matmul(*args, **kwargs)


_moe = _module("cudnnfe.experimental.ops.moe_grouped_matmul", __doc__,
               moe_grouped_matmul=moe_grouped_matmul)
_moe.__class__ = _CallableModule
# As in cudnn-frontend, ops.moe_grouped_matmul is the function (its module also imports by name).
_ops = _module("cudnnfe.experimental.ops", "cudnn-frontend's experimental PyTorch operators.",
               moe_grouped_matmul=moe_grouped_matmul, __getattr__=_ops_getattr, __path__=[])


def _experimental_getattr(name: str) -> Any:
    if name == "scaled_dot_product_attention":
        return _ops_getattr(name)
    raise AttributeError(f"module 'cudnnfe.experimental' has no attribute {name!r}")


_experimental = _module("cudnnfe.experimental", __doc__, ops=_ops, __path__=[],
                        moe_grouped_matmul=moe_grouped_matmul,
                        __getattr__=_experimental_getattr)


def _target(suffix: str) -> Optional[types.ModuleType]:
    """The module for ``<package>.<suffix>``; None for names this finder does not serve."""
    if suffix == "experimental":
        return _experimental
    if suffix == "experimental.ops":
        return _ops
    if suffix == "experimental.ops.moe_grouped_matmul":
        return _moe
    if suffix == "experimental.ops.sdpa":
        return importlib.import_module("cudnnfe._torch_sdpa")
    return None


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``<name>.experimental...`` for every name the cudnnfe package is loaded as."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        top, _, suffix = fullname.partition(".")
        if sys.modules.get(top) is not sys.modules.get("cudnnfe") or suffix not in (
                "experimental", "experimental.ops", "experimental.ops.sdpa",
                "experimental.ops.moe_grouped_matmul"):
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> Any:
        return _target(spec.name.partition(".")[2])

    def exec_module(self, module: Any) -> None:
        pass  # the module is complete: it is the canonical object


def install() -> None:
    """Add the finder once (called when cudnnfe is imported)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
