"""Plan control: what a built graph's plans are, how it was built, the plan caches.

The graph methods that use these (``get_plan_info``, ``get_build_info``,
``autotune``, ``serialize_plan``...) are on :class:`cudnnfe.pygraph`; this
module holds their result types, the conversions of build-option values, and
the process-wide plan cache functions (``docs/plans.md``).
"""
from __future__ import annotations

import os
import re
from typing import Any, Iterable, List, NamedTuple, Optional, Union

from ._enums import behavior_note, build_plan_policy, numerical_note, plan_source
from . import _structs
from ._errors import raise_global_error
from ._lib import ffi, lib

__all__ = ["PlanInfo", "BuildInfo", "PlanCacheStats", "plan_cache_stats", "plan_cache_clear",
           "is_plan_blob", "PLAN_BLOB_MAGIC"]

#: The first bytes of a serialized plan (:meth:`pygraph.serialize_plan`); a
#: graph description (:meth:`pygraph.serialize`) is JSON and starts with ``{``.
PLAN_BLOB_MAGIC = b"CUDNNFE-PLAN "


class PlanInfo(NamedTuple):
    """One plan of a built graph (``cudnnfe_plan_info_t``)."""

    index: int
    #: Engine and knob choices, e.g. ``"eng9_k2=3_k13=1"``; ``"cpu_reference"``.
    name: str
    #: cuDNN's global engine index (the N of ``engN``); -1 for the CPU reference.
    engine_id: int
    #: Bytes of device workspace the plan needs.
    workspace_size: int
    numerical_notes: numerical_note
    behavior_notes: behavior_note
    #: Median time of one execute measured by the last autotune, in
    #: milliseconds; None when the plan was not timed.
    autotune_time_ms: Optional[float]
    #: True for the plan that execute runs.
    selected: bool
    #: True when autotune chose it (kept in plan blobs and caches).
    chosen_by_autotune: bool


class BuildInfo(NamedTuple):
    """How a graph was built (``cudnnfe_build_info_t``); times in ms of host wall clock.

    A stage that did not run takes 0.
    """

    source: plan_source
    total_ms: float
    validate_ms: float
    cache_ms: float
    lower_ms: float
    heuristics_ms: float
    plan_build_ms: float


class PlanCacheStats(NamedTuple):
    """Counters of this process's plan caches (``cudnnfe_plan_cache_stats_t``)."""

    entries: int
    hits: int
    misses: int
    disk_hits: int
    disk_writes: int
    disk_errors: int


def plan_info_from_c(index: int, c: Any) -> PlanInfo:
    name = "" if c.name == ffi.NULL else ffi.string(c.name).decode("utf-8", "replace")
    time = float(c.autotune_time_ms)
    return PlanInfo(index, name, int(c.engine_id), int(c.workspace_size),
                    numerical_note(int(c.numerical_notes)), behavior_note(int(c.behavior_notes)),
                    None if time < 0 else time, bool(c.selected), bool(c.chosen_by_autotune))


def build_info_from_c(c: Any) -> BuildInfo:
    try:
        source = plan_source(int(c.source))
    except ValueError:  # a newer library's source
        source = int(c.source)  # type: ignore[assignment]
    return BuildInfo(source, float(c.total_ms), float(c.validate_ms), float(c.cache_ms),
                     float(c.lower_ms), float(c.heuristics_ms), float(c.plan_build_ms))


def plan_cache_stats() -> PlanCacheStats:
    """Counters of this process's plan caches: entries held, hits, misses, and the
    cache directory's hits, writes and errors (``cudnnfe_plan_cache_get_stats``).

    Only GPU builds use the caches; CPU reference builds leave them alone.
    """
    out = _structs.new("cudnnfe_plan_cache_stats_t")
    status = lib.cudnnfe_plan_cache_get_stats(out)
    if status:
        raise_global_error(status)
    return PlanCacheStats(int(out.entries), int(out.hits), int(out.misses), int(out.disk_hits),
                          int(out.disk_writes), int(out.disk_errors))


def plan_cache_clear() -> None:
    """Empty this process's plan cache and zero its counters (``cudnnfe_plan_cache_clear``).

    Graphs built from it keep their plans; the cache directory is not touched.
    """
    status = lib.cudnnfe_plan_cache_clear()
    if status:
        raise_global_error(status)


def is_plan_blob(data: Union[bytes, bytearray, memoryview]) -> bool:
    """True when ``data`` starts as a serialized plan does (not a graph description)."""
    return bytes(data[:len(PLAN_BLOB_MAGIC)]) == PLAN_BLOB_MAGIC


# ---- conversions of build-option values ------------------------------------


def policy_value(value: Any) -> int:
    if isinstance(value, str):
        try:
            return int(build_plan_policy[value.upper()])
        except KeyError:
            pass
    elif not isinstance(value, bool):
        try:
            return int(build_plan_policy(value))
        except (ValueError, TypeError):
            pass
    raise ValueError(f"unknown build plan policy {value!r}; expected "
                     "build_plan_policy.HEURISTICS_CHOICE or build_plan_policy.ALL")


def notes_value(value: Any, enum: Any, what: str) -> int:
    """Bits from a flag, an int mask, a name, or an iterable of those (None/empty: 0)."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise TypeError(f"{what}: expected {enum.__name__} flags, not a bool")
    if isinstance(value, int):
        bits = int(value)
        if bits < 0 or bits & ~int(enum.ALL):
            raise ValueError(f"{what}: {bits:#x} has bits that are no {enum.__name__}")
        return bits
    if isinstance(value, str):
        try:
            return int(enum[value.upper()] if value.upper() in enum.__members__ else enum[value])
        except KeyError:
            raise ValueError(f"{what}: unknown {enum.__name__} {value!r}; expected one of "
                             f"{', '.join(m.name for m in enum)}") from None
    if not hasattr(value, "__iter__"):
        raise TypeError(f"{what}: expected {enum.__name__} flags or a list of them, not "
                        f"{type(value).__name__}")
    bits = 0
    for item in value:
        bits |= notes_value(item, enum, what)
    return bits


def notes_list(bits: int, enum: Any) -> List[Any]:
    """The single-bit members set in ``bits``, in bit order (cudnn-frontend returns lists)."""
    return [m for m in enum if m.value & bits and m.value & (m.value - 1) == 0]


_ENGINE_NAME = re.compile(r"eng(\d+)")


def engine_ids(values: Optional[Iterable[Any]], what: str = "exclude_engines") -> List[int]:
    """Engine ids from ints or names ``"engN"`` (cudnn-frontend's spelling)."""
    if values is None:
        return []
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        values = [values]
    out = []
    for v in values:
        if isinstance(v, str):
            m = _ENGINE_NAME.fullmatch(v.strip())
            if m is None:
                raise ValueError(
                    f"{what}: {v!r} is not an engine name \"engN\"; filters act on whole "
                    "engines (every knob choice of engine N), so name the engine or give N")
            out.append(int(m.group(1)))
        elif isinstance(v, int) and not isinstance(v, bool):
            if v < 0:
                raise ValueError(f"{what}: engine id {v} is negative")
            out.append(int(v))
        else:
            raise TypeError(f"{what}: expected engine ids (int) or names \"engN\", not {v!r}")
    return out


def cache_dir_value(value: Any) -> Optional[bytes]:
    """None (the environment's CUDNNFE_PLAN_CACHE_DIR), "" (none) or a directory."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(f"plan_cache_dir must be a path, not {type(value).__name__}")
    raw = os.fsencode(value)
    if b"\0" in raw:
        raise ValueError("plan_cache_dir contains a NUL character")
    return raw
