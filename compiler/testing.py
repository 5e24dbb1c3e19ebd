"""The pytest plugin (entry point `pytest11`): snapshot-test a project's compiled intent,
and (opted in) run `kind: test` contracts as pytest items (compiler/pytest_contracts.py).

    def test_compiled_intent(prosec_compile, prosec_snapshot):
        assert prosec_compile("../src") == prosec_snapshot

`prosec_compile(path)` compiles in memory (nothing is written) and returns the compiled
intent as data; a relative path is taken from the test file's directory, or from the
`prosec_root` ini option when it is set. `prosec_snapshot` is syrupy's `snapshot` with
prosec's extension: the file holds the bytes `prosec build` writes, and a mismatch names
the edges, nodes, facets and rules that changed before the fingerprints that moved.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

CompileFixture = Callable[..., dict[str, Any]]
INI_ROOT = "prosec_root"
PROJECT_MARKERS = ("prose.toml", "prose.lock")


class PluginError(Exception):
    """A path `prosec_compile` refuses, with the sentence that says why."""


def pytest_addoption(parser: pytest.Parser) -> None:
    from .pytest_contracts import INI_TESTS, OPTION

    parser.addoption(
        OPTION,
        action="store_true",
        dest="prosec_tests",
        default=False,
        help="Collect *.test.prose.md files: one item per `kind: test` contract.",
    )
    parser.addini(
        INI_TESTS,
        "Collect *.test.prose.md files as pytest items (one per `kind: test` contract).",
        default="false",
    )
    parser.addini(
        INI_ROOT,
        "Directory that prosec_compile(path) resolves relative paths against (relative to "
        "the ini file); default: the directory of the test file.",
        default=None,
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A `*.test.prose.md` file is collected when `--prosec-tests` or `prosec_tests` asks."""
    from .pytest_contracts import SUFFIX, ContractFile, collects

    if file_path.name.endswith(SUFFIX) and collects(parent.config):
        return ContractFile.from_parent(parent, path=file_path)
    return None


def base_directory(config: pytest.Config, test_file: Path) -> tuple[Path, str]:
    """Where relative paths start, and how to name that place in an error."""
    value = config.getini(INI_ROOT)
    if value:
        anchor = config.inipath.parent if config.inipath is not None else config.rootpath
        return (anchor / str(value)).resolve(), f"the `{INI_ROOT}` ini option ({value})"
    return test_file.parent.resolve(), f"the test file's directory ({test_file.name})"


def resolve_root(path: str | os.PathLike[str], base: Path, origin: str = "") -> Path:
    """The project `path` names: a project folder (holding `src/`, `prose.toml` or
    `prose.lock`), or its `src/` folder (then the project is its parent). Raises
    PluginError naming the resolved path when it does not exist or is no project, so a
    test never compiles an empty folder, a home or a temporary directory by accident."""
    given = Path(path)
    root = given if given.is_absolute() else base / given
    root = Path(os.path.normpath(root))
    where = f" ({str(given)!r} from {origin})" if origin and not given.is_absolute() else ""
    if not root.exists():
        raise PluginError(f"prosec_compile: {root} does not exist{where}")
    if not root.is_dir():
        raise PluginError(f"prosec_compile: {root} is not a directory{where}")
    if root.name == "src" and not _is_project(root):
        root = root.parent
    if not _is_project(root):
        raise PluginError(
            f"prosec_compile: {root} is not an OpenProse project (it has no src/ folder, "
            f"no prose.toml and no prose.lock){where}; name the project folder or its src/"
        )
    return root


def _is_project(folder: Path) -> bool:
    return (folder / "src").is_dir() or any((folder / name).is_file() for name in PROJECT_MARKERS)


def compile_intent(
    path: str | os.PathLike[str],
    *,
    base: Path,
    origin: str = "",
    strict: bool | None = None,
    offline_tools: bool = True,
    allow_errors: bool = False,
) -> dict[str, Any]:
    """Compile the project at `path` (relative paths from `base`) into its intent."""
    from . import config as config_mod
    from .pipeline import compile_project
    from .report import render_text

    try:
        root = resolve_root(path, base, origin)
    except PluginError as exc:
        pytest.fail(str(exc), pytrace=False)
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

    A relative path is taken from the test file's directory, or from the `prosec_root`
    ini option when set; it must name a project (a folder with `src/`, `prose.toml` or
    `prose.lock`) or its `src/`. Keyword arguments: `strict` (wiring warnings become
    errors), `offline_tools` (default True: skip host lookups), `allow_errors` (default
    False: errors fail the test with the diagnostics listed).
    """
    base, origin = base_directory(request.config, Path(request.path))

    def compile_(path: str | os.PathLike[str], **options: Any) -> dict[str, Any]:
        return compile_intent(path, base=base, origin=origin, **options)

    return compile_


@pytest.fixture
def prosec_snapshot(request: pytest.FixtureRequest) -> Any:
    """syrupy's `snapshot`, one .json file per test holding exactly the bytes `prosec
    build` writes; a mismatch lists the changed edges, nodes, facets and rules first."""
    try:
        from .snapshot import CompiledIntentExtension
    except ModuleNotFoundError:  # the plugin loads without syrupy; only this fixture needs it
        pytest.fail(
            "prosec_snapshot needs syrupy, from the 'pytest' extra: pip install 'prosec[pytest]'",
            pytrace=False,
        )
    return request.getfixturevalue("snapshot").use_extension(CompiledIntentExtension)
