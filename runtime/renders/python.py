"""Python-callable renders: `module:function`, called with the RenderRequest in a worker
process (worker.py), so a timeout can stop it and nothing it does (raise, exit, hang,
crash) reaches the runner.

The function writes the artifact under `request.output` (and may write `__error.md` /
`__attest.json` in `request.workspace`). It may return a mapping used as the receipt's
`cost` (see `cost_problem`). An exception fails the render with error `exception`, a
module that cannot be imported with `import`; a timeout, a signal or an exit of the
worker as a command render's would. ROOT is importable. Binding checks only that the
module can be found (without running it): its code runs in the worker, never in the
runner.
"""

from __future__ import annotations

import contextlib
import json
import sys
from dataclasses import dataclass
from importlib.machinery import BuiltinImporter, FrozenImporter, PathFinder
from pathlib import Path
from typing import Any

from ..canonical import loads_strict
from ..fsio import atomic_write_bytes
from . import Binding, BindingError, RenderOutcome, RenderRequest
from .command import render_env, timeout_of
from .environ import pass_env_of
from .process import run_render_process

__all__ = ["PythonRenderer", "request_document"]

REQUEST_FILE = "__python-request.json"
RESULT_FILE = "__python-result.json"
_RESULT_LIMIT = 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class PythonRenderer:
    """Calls a Python function in a worker process."""

    target: str
    pass_env: tuple[str, ...] = ()
    timeout: float | None = None

    @classmethod
    def from_binding(cls, binding: Binding, root: Path) -> PythonRenderer:
        target = binding.options.get("callable")
        if not isinstance(target, str) or ":" not in target:
            raise BindingError(f"{binding.origin}: `callable` must be 'module:function'")
        module_name, _, attr = target.partition(":")
        if not all(part.isidentifier() for part in [*module_name.split("."), attr]):
            raise BindingError(f"{binding.origin}: `callable` must be 'module:function'")
        if not _findable(module_name, root):
            raise BindingError(
                f"{binding.origin}: cannot import {module_name!r}: no such module under "
                f"{root} or on the Python path"
            )
        return cls(target=target, pass_env=pass_env_of(binding), timeout=timeout_of(binding))

    def render(self, request: RenderRequest) -> RenderOutcome:
        request_file = request.workspace / REQUEST_FILE
        result_file = request.workspace / RESULT_FILE
        result_file.unlink(missing_ok=True)
        document = {"callable": self.target, "request": request_document(request)}
        atomic_write_bytes(request_file, json.dumps(document).encode(), durable=False)
        argv = [
            sys.executable,
            "-m",
            "prosec.runtime.renders.worker",
            str(request_file),
            str(result_file),
        ]
        env = render_env(request, None, self.pass_env)
        outcome = run_render_process(argv, request, env, self.timeout or request.timeout)
        if not outcome.ok:
            return outcome
        return _result(result_file)


def request_document(request: RenderRequest) -> dict[str, Any]:
    """The RenderRequest as JSON (paths as strings), for the worker to rebuild."""
    document: dict[str, Any] = {}
    for name in RenderRequest.__slots__:
        value = getattr(request, name)
        if isinstance(value, Path):
            value = str(value)
        elif isinstance(value, tuple):
            value = list(value)
        elif name == "wake":
            value = dict(value)
        elif name == "memory" and value is not None:
            value = value.to_json()
        document[name] = value
    return document


def _result(path: Path) -> RenderOutcome:
    """The worker's report (written last, after the function returned)."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _RESULT_LIMIT:
            raise ValueError(f"no report in {RESULT_FILE}")
        report = loads_strict(path.read_bytes())
        if not isinstance(report, dict) or not isinstance(report.get("ok"), bool):
            raise ValueError(f"{RESULT_FILE} is not a worker report")
    except (OSError, ValueError) as exc:
        detail = f"the python worker exited without a valid report: {exc}"
        return RenderOutcome(ok=False, error="worker", detail=detail)
    finally:
        with contextlib.suppress(OSError):  # a folder a render left is cleared next time
            path.unlink(missing_ok=True)
    return RenderOutcome(
        ok=report["ok"],
        error=str(report.get("error") or "") or None,
        detail=str(report.get("detail") or "")[:2000],
        cost=report.get("cost"),
    )


def _findable(module: str, root: Path) -> bool:
    """Whether `module` can be found, without importing (running) it or its packages."""
    parts = module.split(".")
    search: list[str] | None = [str(root), *sys.path]
    for index in range(len(parts)):
        name = ".".join(parts[: index + 1])
        spec = None
        if index == 0:
            spec = BuiltinImporter.find_spec(name) or FrozenImporter.find_spec(name)
        if spec is None:
            spec = PathFinder.find_spec(name, search)
        if spec is None:
            return False
        search = list(spec.submodule_search_locations or [])
        if index + 1 < len(parts) and not search:
            return False
    return True
