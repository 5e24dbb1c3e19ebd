"""The worker process of a python render: `python -m prosec.runtime.renders.worker
REQUEST RESULT` imports `module:function`, calls it with the RenderRequest and writes
how it ended to RESULT as {"ok", "error", "detail", "cost"}.

Whatever the function does (raise any exception, `sys.exit`, return a cost that is not
JSON) becomes a report; a crash, a signal or `os._exit` leaves no report and the runner
judges the worker's exit instead. Tracebacks go to stderr, i.e. `__render.log`.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..agents import AgentMemory
from . import RenderRequest

_PATHS = {"root", "run_dir", "workspace", "output", "inputs_file", "wake_file", "attest_file"}
_OPTIONAL_PATHS = {"prior", "contract"}


def rebuild(document: Mapping[str, Any]) -> RenderRequest:
    """The RenderRequest from its JSON document (python.request_document)."""
    fields: dict[str, Any] = dict(document)
    for name in _PATHS:
        fields[name] = Path(fields[name])
    for name in _OPTIONAL_PATHS:
        fields[name] = Path(fields[name]) if fields.get(name) else None
    fields["attested"] = tuple(fields.get("attested", ()))
    if fields.get("memory") is not None:
        fields["memory"] = AgentMemory.from_json(fields["memory"])
    return RenderRequest(**fields)


def _described(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"SystemExit({exc.code!r}): a python render must return, not exit"
    return f"{type(exc).__name__}: {exc}"[:2000]


def run(target: str, request: RenderRequest) -> dict[str, Any]:
    """Import and call the render; the report of how it ended."""
    module_name, _, attr = target.partition(":")
    root = str(request.root)
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        function = getattr(importlib.import_module(module_name), attr, None)
    except BaseException as exc:  # the render's module: any failure at import is its own
        traceback.print_exc()
        return {"ok": False, "error": "import", "detail": f"{target}: {_described(exc)}"}
    if not callable(function):
        return {"ok": False, "error": "import", "detail": f"{target!r} is not a callable"}
    try:
        result = function(request)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt included
        traceback.print_exc()
        return {"ok": False, "error": "exception", "detail": _described(exc)}
    if result is not None and not isinstance(result, Mapping):
        kind = type(result).__name__
        return {"ok": False, "error": "invalid-cost", "detail": f"the render returned a {kind}"}
    try:
        cost = dict(result) if result is not None else None
        json.dumps(cost, allow_nan=False)
    except Exception as exc:  # not JSON: a type, NaN, a cycle, a mapping that raises
        traceback.print_exc()
        return {"ok": False, "error": "invalid-cost", "detail": f"the cost is not JSON: {exc}"}
    return {"ok": True, "error": None, "detail": "", "cost": cost}


def main(argv: list[str]) -> None:
    spec = json.loads(Path(argv[1]).read_bytes())
    report = run(spec["callable"], rebuild(spec["request"]))
    Path(argv[2]).write_text(json.dumps(report, allow_nan=False), encoding="utf-8")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # the render may have closed or replaced it
            stream.flush()


if __name__ == "__main__":
    main(sys.argv)
    # not a normal exit: threads the render left running, or its atexit hooks, must not
    # keep the worker alive once its report is written
    os._exit(0)
