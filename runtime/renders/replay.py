"""Replay renders: copy recorded outputs (for tests and demos) instead of computing them.

`dir` (relative to ROOT, confined to it) holds `<node>/`: its files become the published
artifact, except `__error.md` and `__attest.json`, which go to the workspace as a real
render would write them.

A VM step (`prosec run FILE`: a call, session or question, see `runtime/vm/calls.py`)
takes `<dir>/<node>/<step>/` when it exists (`<step>` is the step's folder under
`workspace/<node>/`, so each call, loop iteration and question of a node has its own
recording), else `<dir>/<node>/` as a node render does.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from ..fsio import PathEscapeError, confined
from . import Binding, BindingError, RenderOutcome, RenderRequest

__all__ = ["ReplayRenderer"]

_WORKSPACE_FILES = ("__error.md", "__attest.json")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayRenderer:
    """Copies `<dir>/<node>/` into the render's output."""

    directory: Path

    @classmethod
    def from_binding(cls, binding: Binding, root: Path) -> ReplayRenderer:
        value = binding.options.get("dir")
        if not isinstance(value, str):
            raise BindingError(f"{binding.origin}: replay needs `dir`")
        try:
            directory = confined(root, value, "replay dir")
        except PathEscapeError as exc:
            raise BindingError(f"{binding.origin}: {exc}") from exc
        return cls(directory=directory)

    def render(self, request: RenderRequest) -> RenderOutcome:
        try:
            recorded = confined(self.directory, request.node, "replay recording")
        except PathEscapeError as exc:
            return RenderOutcome(ok=False, error="replay", detail=str(exc))
        if request.step:
            try:
                step = confined(recorded, request.step, "replay recording")
            except PathEscapeError as exc:
                return RenderOutcome(ok=False, error="replay", detail=str(exc))
            if step.is_dir():
                recorded = step
        if not recorded.is_dir():
            return RenderOutcome(ok=False, error="replay", detail=f"no recording at {recorded}")
        for path in sorted(recorded.rglob("*")):
            if path.is_symlink():
                return RenderOutcome(ok=False, error="replay", detail=f"{path} is a symlink")
            if not path.is_file():
                continue
            rel = path.relative_to(recorded)
            base = request.workspace if rel.as_posix() in _WORKSPACE_FILES else request.output
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, base / rel)
        return RenderOutcome(ok=True, cost={"model": "none", "provider": "replay"})
