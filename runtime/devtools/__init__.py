"""The devtools' model: a topology laid out as SVG and the receipt timeline over it.

Read-only views of a prosec project or an upstream devtools state directory; the HTTP
layer (`prosec.runtime.http`) serves them with the static page in `static/`.
"""

from __future__ import annotations

from .fixture import FixtureError, FixtureState, is_fixture
from .scene import Inspector, Scene, fixture_scene, project_scene

__all__ = [
    "FixtureError",
    "FixtureState",
    "Inspector",
    "Scene",
    "fixture_scene",
    "is_fixture",
    "project_scene",
]
