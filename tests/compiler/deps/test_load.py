"""Resolution at compile time: disk only, from deps/, into lint, build and pattern expansion."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from prosec.compiler import config
from prosec.compiler.diagnostics import Diagnostic
from prosec.compiler.discover import discover
from prosec.compiler.lint import lint_refs
from prosec.compiler.pipeline import compile_project

from ...conftest import Runner
from .repos import contract

SHA = "c" * 40
LIB = "deps/example.org/acme/lib"
PRICE = contract(
    "price",
    "function",
    "### Parameters\n\n- `dishes`: the dishes\n\n### Returns\n\n- `priced`: the prices\n",
)
LOOP = contract("loop", "pattern", "### Slots\n\n- `cook`: cooks the dishes\n")
COOK = contract(
    "cook",
    "responsibility",
    "### Maintains\n\n- `dishes`: the dishes\n",
    id="0CK6T3H8W5N2Q7R9M4X1B6V3ZA",
)


def board(
    use: str = "example.org/acme/lib/price", pattern: str = "example.org/acme/lib/loop"
) -> str:
    body = (
        f"```yaml\n- name: tasted\n  pattern: {pattern}\n  with:\n    cook: cook\n```\n\n"
        "### Requires\n\n- `tasted`: the tasted dishes\n\n### Maintains\n\n- `board`: the board\n\n"
        f'### Execution\n\n```prose\nuse "{use}" as price\n\nlet board = call price\n'
        "  dishes: tasted\nreturn board\n```\n"
    )
    return contract("board", "responsibility", body, id="0BD6T3H8W5N2Q7R9M4X1B6V3ZA")


def project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def build(root: Path) -> tuple[list[str], list[Diagnostic], object]:
    result = compile_project(root, config.load(root).with_overrides(offline_tools=True))
    nodes = [n["node"] for n in (result.intent or {}).get("topology", {}).get("nodes", [])]
    return nodes, list(result.diagnostics), result


def lint(root: Path) -> list[Diagnostic]:
    refs = discover([root], root)
    return list(lint_refs(refs, config.Config(), base=root, configs=config.load).diagnostics)


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    return project(
        tmp_path,
        {
            "src/board.prose.md": board(),
            "src/cook.prose.md": COOK,
            f"{LIB}/loop.prose.md": LOOP,
            f"{LIB}/price.prose.md": PRICE,
        },
    )


def test_an_installed_pattern_expands_and_its_files_are_sources(installed: Path) -> None:
    nodes, found, result = build(installed)
    assert found == [] and lint(installed) == []
    assert nodes == ["board", "cook", "tasted"]
    paths = [s["path"] for s in result.intent["sources"]]  # type: ignore[attr-defined]
    assert f"{LIB}/loop.prose.md" in paths and f"{LIB}/price.prose.md" in paths


def test_a_missing_dependency_names_identifier_path_and_install(tmp_path: Path) -> None:
    root = project(tmp_path, {"src/board.prose.md": board(), "src/cook.prose.md": COOK})
    nodes, found, _ = build(root)
    assert [d.code for d in found] == ["dependency_missing", "dependency_missing"]
    message = found[1].message
    assert "`example.org/acme/lib/price`" in message
    assert f"{LIB}/price.prose.md" in message
    assert "`prosec install`" in message
    # one root cause: the instance still becomes its node, nothing cascades from it
    assert nodes == ["board", "cook", "tasted"]
    assert {d.code for d in lint(root)} == {"dependency_missing"}


def test_a_lock_without_deps_says_so(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "src/board.prose.md": board(),
            "src/cook.prose.md": COOK,
            "prose.lock": f"example.org/acme/lib {SHA}\n",
        },
    )
    _, found, _ = build(root)
    assert f"prose.lock pins example.org/acme/lib at {SHA[:12]}" in found[0].message
    assert "run `prosec install`" in found[0].message


def test_index_files_and_explicit_suffixes_resolve(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "src/board.prose.md": board(
                "example.org/acme/lib/price", "example.org/acme/lib/loop.prose.md"
            ),
            "src/cook.prose.md": COOK,
            f"{LIB}/loop.prose.md": LOOP,
            f"{LIB}/price/index.prose.md": PRICE,
        },
    )
    _, found, _ = build(root)
    assert found == []


def test_a_path_the_installed_repository_lacks_is_unresolved(installed: Path) -> None:
    (installed / "src/board.prose.md").write_text(board("example.org/acme/lib/pricing"), "utf-8")
    _, found, _ = build(installed)
    assert [d.code for d in found] == ["dependency_unresolved"]
    assert (
        f"neither {LIB}/pricing.prose.md nor {LIB}/pricing/index.prose.md exists"
        in found[0].message
    )


def test_a_clone_cannot_point_outside_itself(installed: Path) -> None:
    (installed / "secret.prose.md").write_text(PRICE, "utf-8")
    os.symlink(installed / "secret.prose.md", installed / LIB / "leak.prose.md")
    (installed / "src/board.prose.md").write_text(board("example.org/acme/lib/leak"), "utf-8")
    _, found, _ = build(installed)
    assert [d.code for d in found] == ["dependency_unresolved"]


def test_the_bare_form_is_unresolved_with_its_reason(installed: Path) -> None:
    (installed / "src/board.prose.md").write_text(board("acme/lib/price"), "utf-8")
    _, found, _ = build(installed)
    assert [d.code for d in found] == ["dependency_unresolved"]
    assert "reserved for the OpenProse registry" in found[0].message


def test_dependencies_load_transitively_and_locally(installed: Path) -> None:
    helper = contract(
        "helper", "function", "### Parameters\n\n- `x`: x\n\n### Returns\n\n- `y`: y\n"
    )
    tax = contract("tax", "function", "### Parameters\n\n- `x`: x\n\n### Returns\n\n- `y`: y\n")
    using = (
        "### Parameters\n\n- `dishes`: the dishes\n\n### Returns\n\n- `priced`: the prices\n\n"
        '### Execution\n\n```prose\nuse "./helper" as helper\nuse "example.org/other/tax/tax" as tax\n'
        "let priced = call helper\n  x: dishes\nreturn priced\n```\n"
    )
    project(
        installed,
        {
            f"{LIB}/price.prose.md": contract("price", "function", using),
            f"{LIB}/helper.prose.md": helper,
            "deps/example.org/other/tax/tax.prose.md": tax,
        },
    )
    _, found, result = build(installed)
    assert found == []
    paths = {s["path"] for s in result.intent["sources"]}  # type: ignore[attr-defined]
    assert {f"{LIB}/helper.prose.md", "deps/example.org/other/tax/tax.prose.md"} <= paths


def test_a_dependency_is_not_linted_but_its_errors_count(installed: Path) -> None:
    sloppy = PRICE + "\n### Colophon\n\nA section OpenProse does not define.\n"
    project(installed, {f"{LIB}/price.prose.md": sloppy})
    assert build(installed)[1] == [] and lint(installed) == []
    project(installed, {f"{LIB}/price.prose.md": "---\nname: [broken\n---\n"})
    _, found, _ = build(installed)
    assert [(d.code, d.span.path) for d in found] == [
        ("frontmatter_invalid", f"{LIB}/price.prose.md")
    ]
    assert [(d.code, d.span.path) for d in lint(installed)] == [
        ("frontmatter_invalid", f"{LIB}/price.prose.md")
    ]


def test_a_dependency_function_is_called_through_its_alias_only(installed: Path) -> None:
    text = board().replace("let board = call price", "let board = call loop")
    (installed / "src/board.prose.md").write_text(text, "utf-8")
    assert {d.code for d in lint(installed)} == {"prosescript_unknown_call"}


def test_a_changed_dependency_rebuilds(installed: Path, run_prosec: Runner) -> None:
    runner = run_prosec
    env = {"PROSEC_CACHE_DIR": str(installed.parent / "cache")}
    first = runner("build", "--offline-tools", installed, env=env)
    assert first.returncode == 0, first.stderr
    again = runner("build", "--offline-tools", installed, env=env)
    assert "nothing changed since the last build" in again.stderr
    with (installed / LIB / "price.prose.md").open("a", encoding="utf-8") as handle:
        handle.write("\nPrices are rounded up.\n")
    changed = runner("build", "--offline-tools", installed, env=env)
    assert "nothing changed" not in changed.stderr and changed.returncode == 0


def test_services_and_nested_instances_are_references(installed: Path) -> None:
    nested = board().replace(
        "    cook: cook\n",
        "    cook:\n      pattern: example.org/acme/lib/missing-loop\n      with:\n        cook: cook\n",
    )
    services = "### Services\n\n- std/evals/inspector\n- `cook`\n"
    project(installed, {"src/board.prose.md": nested + "\n" + services})
    found = lint(installed)
    assert sorted((d.code, d.span.line) for d in found if d.code.startswith("dependency_")) == [
        ("dependency_missing", _line(installed / "src/board.prose.md", "- std/evals")),
        ("dependency_unresolved", _line(installed / "src/board.prose.md", "```yaml")),
    ]


def _line(path: Path, needle: str) -> int:
    lines = path.read_text(encoding="utf-8").split("\n")
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def test_an_unresolved_local_use_names_both_candidates(installed: Path) -> None:
    (installed / "src/board.prose.md").write_text(board("./nope"), "utf-8")
    found = [d for d in lint(installed) if d.code.startswith("dependency_")]
    assert [d.code for d in found] == ["dependency_unresolved"]
    assert found[0].message == (
        "`./nope` names no file: neither src/nope.prose.md nor src/nope/index.prose.md exists"
    )


def test_the_lint_cache_sees_a_dependency_installed_or_edited(tmp_path: Path) -> None:
    """A missing dependency is never answered from the lint cache (installing one may
    touch only a folder deep under deps/), and an installed one is re-hashed."""
    root = project(tmp_path / "p", {"src/board.prose.md": board(), "src/cook.prose.md": COOK})
    (root / "deps" / "example.org").mkdir(parents=True)  # installing will not touch deps/
    cache = tmp_path / "cache"

    def cached() -> set[str]:
        refs = discover([root], root)
        found = lint_refs(refs, config.Config(), base=root, configs=config.load, cache_dir=cache)
        assert found.diagnostics == tuple(lint(root))  # always what a cold lint says
        return {d.code for d in found.diagnostics}

    assert cached() == {"dependency_missing"}
    project(root, {f"{LIB}/loop.prose.md": LOOP, f"{LIB}/price.prose.md": PRICE})
    assert cached() == set()
    assert cached() == set()  # now answered from the cache
    # a dependency's own error breaks the build: an edit that makes one is seen
    (root / LIB / "price.prose.md").write_text(PRICE.replace("kind: function", "kind: [oops"))
    assert cached() != set()
