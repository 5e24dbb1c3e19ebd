"""Python-callable renders: `module:function`, called with the RenderRequest.

The function writes the artifact under `request.output` (and may write
`__error.md` / `__attest.json` in `request.workspace`). It may return a mapping used as
the receipt's `cost`. An exception fails the render with error `exception`. ROOT is put
on `sys.path` when the binding is resolved, so project-local modules import.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import Binding, BindingError, RenderOutcome, RenderRequest

__all__ = ["PythonRenderer"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PythonRenderer:
    """Calls a Python function in-process (from a worker thread)."""

    target: str
    function: Callable[[RenderRequest], Any]

    @classmethod
    def from_binding(cls, binding: Binding, root: Path) -> PythonRenderer:
        target = binding.options.get("callable")
        if not isinstance(target, str) or ":" not in target:
            raise BindingError(f"{binding.origin}: `callable` must be 'module:function'")
        module_name, _, attr = target.partition(":")
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise BindingError(f"{binding.origin}: cannot import {module_name!r}: {exc}") from exc
        function = getattr(module, attr, None)
        if not callable(function):
            raise BindingError(f"{binding.origin}: {target!r} is not a callable")
        return cls(target=target, function=function)

    def render(self, request: RenderRequest) -> RenderOutcome:
        try:
            result = self.function(request)
        except Exception as exc:  # the render's own failure, recorded on the receipt
            log = request.workspace / "__render.log"
            log.write_text(traceback.format_exc(), encoding="utf-8")
            return RenderOutcome(ok=False, error="exception", detail=f"{type(exc).__name__}: {exc}")
        cost = result if isinstance(result, Mapping) else None
        return RenderOutcome(ok=True, cost=cost)
