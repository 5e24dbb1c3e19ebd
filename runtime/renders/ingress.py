"""The built-in ingress render for gateways: publish the trigger's data as the truth."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..canonical import canonical_json
from . import Binding, RenderOutcome, RenderRequest

__all__ = ["IngressRenderer"]


_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")


def published_files(data: Any) -> dict[str, bytes]:
    """The files that make `data` the structured truth: an object whose keys are plain
    names publishes `<key>.json` per key (so a facet `urgent` owns `urgent`); any other
    value publishes `data.json` (the truth is then `{"data": …}`)."""
    if isinstance(data, dict) and data and all(_KEY.match(str(key)) for key in data):
        return {f"{key}.json": canonical_json(value) for key, value in data.items()}
    return {"data.json": canonical_json(data)}


@dataclass(frozen=True, slots=True, kw_only=True)
class IngressRenderer:
    """Publishes the wake data (canonical JSON); a wake without data publishes nothing."""

    @classmethod
    def from_binding(cls, binding: Binding, root: Path) -> IngressRenderer:
        return cls()

    def render(self, request: RenderRequest) -> RenderOutcome:
        wake = json.loads(request.wake_file.read_bytes())
        if "data" in wake:
            for name, content in published_files(wake["data"]).items():
                (request.output / name).write_bytes(content)
        return RenderOutcome(ok=True, cost={"model": "none", "provider": "ingress"})
