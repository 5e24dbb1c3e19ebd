"""The built-in ingress render for gateways: publish the trigger's data as `data.json`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..canonical import canonical_json
from . import Binding, RenderOutcome, RenderRequest

__all__ = ["IngressRenderer"]


@dataclass(frozen=True, slots=True, kw_only=True)
class IngressRenderer:
    """Publishes the wake data (canonical JSON); a wake without data publishes nothing."""

    @classmethod
    def from_binding(cls, binding: Binding, root: Path) -> IngressRenderer:
        return cls()

    def render(self, request: RenderRequest) -> RenderOutcome:
        wake = json.loads(request.wake_file.read_bytes())
        if "data" in wake:
            (request.output / "data.json").write_bytes(canonical_json(wake["data"]))
        return RenderOutcome(ok=True, cost={"model": "none", "provider": "ingress"})
