"""cudnn-frontend's log, honoured by cudnnfe: ``CUDNN_FRONTEND_LOG_INFO`` and
``CUDNN_FRONTEND_LOG_FILE``, and the graph line for cudnnfe's own ``CUDNNFE_LOG``.

cudnn-frontend logs when ``CUDNN_FRONTEND_LOG_INFO`` reads as a positive integer (C
``atoi``: ``"1"``, ``" 2x"``; ``"yes"`` is 0) *and* ``CUDNN_FRONTEND_LOG_FILE`` is set: a
value starting with ``stdout`` or ``stderr`` names that stream, anything else a file,
truncated when first written in the process. When it validates a graph it writes a banner,
the graph as one line of its serialized JSON (:mod:`cudnnfe._fe_json`), and a closing
banner. cudnnfe writes the same lines at the same point (:meth:`pygraph.validate`, or the
build of a graph not yet validated), so tools that read cudnn-frontend's log (its test
``test_sdpa_fp8_serialization.py``) read cudnnfe's.

With ``CUDNNFE_LOG=info`` (or ``debug``; ``1``, ``2``) the JSON line also goes to cudnnfe's
own log: the function given to :func:`cudnnfe.set_log_callback`, else standard error in
the C library's ``cudnnfe [info] ...`` form. The C library's other log lines are its own
(``docs/loading.md``). Logging never makes a build fail: a graph that cannot be described
logs why instead. Unlike cudnn-frontend, which reads the variables once per process, cudnnfe
reads them at each validation (a file, once opened, stays open until exit).
"""
from __future__ import annotations

import atexit
import os
import re
import sys
import threading
from typing import Any, Callable, Dict, Optional, TextIO

from . import _fe_json

__all__ = ["frontend_log_stream", "log_validating", "log_validated", "close_files"]

_BANNER_WIDTH = 128
_lock = threading.Lock()
# Log files opened (truncated) by this process, by path; None: could not be opened.
_files: Dict[str, Optional[TextIO]] = {}
# What cudnnfe.set_log_callback last set (recorded by _library): the Python function (None:
# standard error) and the level (0 off, 1 info, 2 debug; None: CUDNNFE_LOG decides).
python_log_callback: Optional[Callable[[str, str], None]] = None
python_log_level: Optional[int] = None


def _atoi(text: str) -> int:
    """C ``atoi``: leading blanks, a sign and digits; anything else reads as 0."""
    m = re.match(r"[ \t\n\v\f\r]*([+-]?[0-9]+)", text)
    return int(m.group(1)) if m else 0


def frontend_log_stream() -> Optional[TextIO]:
    """Where cudnn-frontend's log goes under the current environment; None when it is off."""
    if _atoi(os.environ.get("CUDNN_FRONTEND_LOG_INFO", "")) <= 0:
        return None
    dest = os.environ.get("CUDNN_FRONTEND_LOG_FILE")
    if dest is None:
        return None  # cudnn-frontend turns logging off when no destination is set
    if dest.startswith("stdout"):
        return sys.stdout
    if dest.startswith("stderr"):
        return sys.stderr
    with _lock:
        if dest not in _files:
            _files[dest] = _open(dest)
        return _files[dest]


def _open(path: str) -> Optional[TextIO]:
    """The file, truncated; None, said once on standard error, when it cannot be opened
    (cudnn-frontend then writes nothing, and the build goes on either way)."""
    try:
        return open(path, "w", encoding="utf-8")  # noqa: SIM115 (kept open until exit)
    except OSError as exc:
        sys.stderr.write(f"cudnnfe: CUDNN_FRONTEND_LOG_FILE={path!r} cannot be opened ({exc}); "
                         "nothing is logged there\n")
        return None


@atexit.register
def close_files() -> None:
    """Closes the log files; a later line opens (and truncates) its file again."""
    with _lock:
        for f in _files.values():
            if f is not None:
                f.close()
        _files.clear()


def _cudnnfe_log_level() -> int:
    """cudnnfe's log level: set_log_callback's, else CUDNNFE_LOG as the C library reads it
    (0 off, 1 info, 2 debug; any other value is info)."""
    if python_log_level is not None:
        return python_log_level
    value = os.environ.get("CUDNNFE_LOG", "")
    if value in ("", "0", "off"):
        return 0
    return 2 if value in ("2", "debug") else 1


def _banner(title: str) -> str:
    """cudnn-frontend's banner: a rule, the padded title line, a rule."""
    line = f"[cudnn_frontend] ||| === {title} === |||"
    pad = _BANNER_WIDTH - len(line)
    if pad > 0:
        line = line[:-5] + " " * pad + line[-5:]
    rule = "=" * _BANNER_WIDTH
    return f"{rule}\n{line}\n{rule}\n"


def _write(stream: TextIO, text: str) -> None:
    with _lock:
        try:
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):  # a full disk, a closed stream: the build goes on
            pass


def _graph_line(graph: Any) -> str:
    """The graph as cudnn-frontend's one-line JSON, or a line saying why it cannot be."""
    try:
        return _fe_json.dumps(_fe_json.frontend_graph_json(graph._serialize_raw(),
                                                           _backend_version()))
    except Exception as exc:  # the log must not break the build it describes
        return f"[cudnn_frontend] INFO: graph description unavailable: {exc}"


def _backend_version() -> str:
    from ._handle import backend_version_string
    try:
        return backend_version_string()
    except Exception:  # no cuDNN (a CPU reference build): cudnn-frontend would not run
        return ""


def _to_cudnnfe_log(line: str) -> None:
    callback = python_log_callback
    text = f"graph (cudnn-frontend JSON): {line}"
    if callback is not None:
        callback("info", text)
    else:
        _write(sys.stderr, f"cudnnfe [info] {text}\n")


def log_validating(graph: Any) -> None:
    """Called before a graph is validated: cudnn-frontend's banner and graph line."""
    stream = frontend_log_stream()
    to_cudnnfe = _cudnnfe_log_level() > 0
    if stream is None and not to_cudnnfe:
        return
    line = _graph_line(graph)
    if stream is not None:
        _write(stream, _banner("  VALIDATING GRAPH  ") + line + "\n")
    if to_cudnnfe:
        _to_cudnnfe_log(line)


def log_validated() -> None:
    """Called after a graph validated (or built) without error."""
    stream = frontend_log_stream()
    if stream is not None:
        _write(stream, _banner("  VALIDATED ALL OK  "))
