"""prose.toml settings and compiled-intent checks: precise errors, sane defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prosec.runtime.config import ConfigError, RunConfig, load_config
from prosec.runtime.intent import IntentError, parse_intent
from prosec.runtime.renders import BindingError, parse_cli_binding, resolve_binding

from .project import intent


def test_missing_prose_toml_means_defaults(tmp_path: Path) -> None:
    assert load_config(tmp_path) == RunConfig()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[run]\njobs = 0\n", "prose.toml:2: run.jobs: "),
        ("[run]\ntimeout = -1\n", "prose.toml:2: run.timeout: "),
        ("[run]\ntimeout = inf\n", "prose.toml:2: run.timeout: "),
        ("[run]\ntimeout = nan\n", "prose.toml:2: run.timeout: "),
        ('[run]\nbackend = "redis"\n', "prose.toml:2: run.backend: "),
        ("[render]\nx = 1\n", "prose.toml:2: render.x: "),
        ("[cadence]\nx = 1\n", "prose.toml:2: cadence.x: "),
        ('[cadence]\nx = "cron:0 0 31 4 *"\n', "prose.toml:2: cadence.x: .*never fires"),
        ("[run\n", "prose.toml:1: invalid TOML"),
    ],
)
def test_config_errors_name_the_setting(tmp_path: Path, text: str, needle: str) -> None:
    # the message is the one every command prints: FILE:LINE: KEY: what is wrong
    (tmp_path / "prose.toml").write_text(text)
    with pytest.raises(ConfigError, match=needle):
        load_config(tmp_path)


def test_render_tables(tmp_path: Path) -> None:
    (tmp_path / "prose.toml").write_text(
        '[render.default]\ncommand = "x"\n[render.a]\nkind = "replay"\ndir = "r"\n'
    )
    config = load_config(tmp_path)
    binding = resolve_binding(
        "a",
        cli={},
        config_nodes=config.render_nodes,
        intent_render=None,
        config_default=config.render_default,
    )
    assert binding.kind == "replay" and "[render.a]" in binding.origin
    cli = dict([parse_cli_binding("a=command:echo hi")])
    assert resolve_binding(
        "a",
        cli=cli,
        config_nodes=config.render_nodes,
        intent_render=None,
        config_default=None,
    ).options == {"kind": "command", "command": "echo hi"}
    for bad in ("a", "a=shell:x", "a=command:"):
        with pytest.raises(BindingError):
            parse_cli_binding(bad)


def mutate(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    *parents, last = path.split(".")
    node: Any = doc
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    node[last] = value
    return doc


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        ("kind", "other", "$.kind"),
        ("topology.entry_points", ["nope"], "$.topology.entry_points[0]"),
        ("canonicalizers", [], "$.canonicalizers"),
        ("contract_fingerprints", {"a": "sha256:x", "b": "sha256:x"}, "$.contract_fingerprints.a"),
        ("canonicalizers.0.spec", {"rules": [{"path": "a..b"}]}, "$.canonicalizers[0].spec"),
    ],
)
def test_intent_errors(path: str, value: Any, where: str) -> None:
    doc = mutate(intent({"a": {}, "b": {}}, [("b", "a", "@atomic")]), path, value)
    with pytest.raises(IntentError) as raised:
        parse_intent(doc)
    assert raised.value.problem is not None
    assert raised.value.problem.path.startswith(where)
    assert str(raised.value).startswith(f"compiled intent: {raised.value.problem.path}: ")


def test_intent_indexes() -> None:
    parsed = parse_intent(intent({"a": {}, "b": {}, "c": {}}, [("c", "a", "@atomic")]))
    assert parsed.order == ("a", "b", "c")
    assert parsed.subscribers_of[("a", "@atomic")] == ("c",)
    assert parsed.ancestors["c"] == 1 << parsed.index["a"]
