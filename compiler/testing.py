"""The pytest plugin (entry point `pytest11`): snapshot-test a project's compiled intent.

    def test_compiled_intent(prosec_compile, prosec_snapshot):
        assert prosec_compile("src") == prosec_snapshot

`prosec_compile(path)` compiles in memory (nothing is written) and returns the compiled
intent as data; `prosec_snapshot` is syrupy's `snapshot` with its JSON extension.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

CompileFixture = Callable[..., dict[str, Any]]


def resolve_root(path: str | os.PathLike[str], base: Path) -> Path:
    """A project root, or its `src/` directory (then the project is its parent)."""
    root = Path(path)
    if not root.is_absolute():
        root = base / root
    if root.name == "src" and not (root / "src").is_dir():
        return root.parent
    return root


def compile_intent(
    path: str | os.PathLike[str],
    *,
    base: Path,
    strict: bool | None = None,
    offline_tools: bool = True,
    allow_errors: bool = False,
) -> dict[str, Any]:
    """Compile the project at `path` (relative paths from `base`) into its intent."""
    from . import config as config_mod
    from .pipeline import compile_project
    from .report import render_text

    root = resolve_root(path, base)
    if not root.is_dir():
        pytest.fail(f"prosec_compile: {root} is not a directory", pytrace=False)
    try:
        config = config_mod.load(root)
    except config_mod.ConfigError as exc:  # the message names the file, each key and line
        pytest.fail(f"prosec_compile: {exc}", pytrace=False)
    config = config.with_overrides(strict=strict, offline_tools=offline_tools)
    host = None
    if not offline_tools:
        from .host import SystemHost

        host = SystemHost(
            root=config.root or root,
            path_env=os.environ.get("PATH"),
            home=Path.home(),
            registries=config.mcp_registries,
            skill_paths=config.skill_paths,
        )
    result = compile_project(root, config, host=host)
    if result.internal or result.intent is None:
        pytest.fail(
            "prosec could not compile " + str(root) + ":\n" + render_text(result.diagnostics)
        )
    if result.has_errors and not allow_errors:
        pytest.fail(
            f"prosec found errors in {root} (pass allow_errors=True to snapshot them):\n"
            + render_text([d for d in result.diagnostics if d.severity.value == "error"]),
            pytrace=False,
        )
    return result.intent


@pytest.fixture
def prosec_compile(request: pytest.FixtureRequest) -> CompileFixture:
    """Compile a project and return its compiled intent as data.

    Relative paths are taken from the pytest rootdir. Keyword arguments: `strict`
    (wiring warnings become errors), `offline_tools` (default True: skip host lookups),
    `allow_errors` (default False: errors fail the test with the diagnostics listed).
    """
    base = Path(request.config.rootpath)

    def compile_(path: str | os.PathLike[str], **options: Any) -> dict[str, Any]:
        return compile_intent(path, base=base, **options)

    return compile_


@pytest.fixture
def prosec_snapshot(request: pytest.FixtureRequest) -> Any:
    """syrupy's `snapshot` with the JSON extension: one readable .json file per test."""
    try:
        from syrupy.extensions.json import JSONSnapshotExtension
    except ModuleNotFoundError:  # the plugin loads without it; only this fixture needs it
        pytest.fail(
            "prosec_snapshot needs syrupy, from the 'pytest' extra: pip install 'prosec[pytest]'",
            pytrace=False,
        )
    return request.getfixturevalue("snapshot").use_extension(JSONSnapshotExtension)
