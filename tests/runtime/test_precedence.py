"""Where the default model and the parallelism come from: flag > .env > environment >
prose.toml > built-in, each layer on its own; and the model an agent render uses:
`### Runtime` model > its binding's `model` > the default model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from prosec.runtime.config import ConfigError, load_config
from prosec.runtime.project_toml import load_dotenv

from .project import PROSEC, Project, intent

FAKE_AGENT = Path(__file__).with_name("renders") / "fake_agent.py"
ALL_LAYERS = {"flag", ".env", "environment", "prose.toml"}


def write_layers(root: Path, layers: set[str]) -> dict[str, str]:
    """Set jobs and the default model in each of `layers` but the flag; the environment."""
    root.mkdir(exist_ok=True)
    if "prose.toml" in layers:
        (root / "prose.toml").write_text('[run]\njobs = 3\ndefault_model = "toml-model"\n')
    if ".env" in layers:
        (root / ".env").write_text(
            "# settings\nexport OPENPROSE_MAX_PARALLEL=5\nOPENPROSE_DEFAULT_MODEL='dotenv-model'\n"
        )
    env = {}
    if "environment" in layers:
        env = {"OPENPROSE_MAX_PARALLEL": "4", "OPENPROSE_DEFAULT_MODEL": "env-model"}
    return env


EXPECTED = {  # the highest layer present decides
    "flag": (7, "flag-model", "--jobs", "--model"),
    ".env": (5, "dotenv-model", ".env:2", ".env:3"),  # origin ends with the file's line
    "environment": (4, "env-model", "environment", "environment"),
    "prose.toml": (3, "toml-model", "prose.toml", "prose.toml"),
    "built-in": (2, "unspecified", "default", "default"),
}


@pytest.mark.parametrize("top", list(EXPECTED))
def test_each_layer_wins_over_every_layer_below_it(tmp_path: Path, top: str) -> None:
    order = list(EXPECTED)
    layers = set(order[order.index(top) :]) & ALL_LAYERS
    env = write_layers(tmp_path, layers)
    config = load_config(tmp_path, env)
    if "flag" in layers:
        config = config.overridden(jobs=7, default_model="flag-model")
    jobs, model, jobs_origin, model_origin = EXPECTED[top]
    assert (config.jobs, config.default_model) == (jobs, model)
    assert config.origins["jobs"].endswith(jobs_origin)
    assert config.origins["default_model"].endswith(model_origin)
    if top == ".env":
        assert config.origins["jobs"] == f"{tmp_path / '.env'}:2"


@pytest.mark.parametrize("layer", sorted(ALL_LAYERS - {"flag"}))
def test_each_layer_alone_is_honoured(tmp_path: Path, layer: str) -> None:
    env = write_layers(tmp_path, {layer})
    config = load_config(tmp_path, env)
    jobs, model, _, _ = EXPECTED[layer]
    assert (config.jobs, config.default_model) == (jobs, model)


@pytest.mark.parametrize(
    ("where", "text", "words"),
    [
        (
            ".env",
            "OPENPROSE_MAX_PARALLEL=many\n",
            ".env:1: OPENPROSE_MAX_PARALLEL: expected a whole",
        ),
        (".env", "\nOPENPROSE_MAX_PARALLEL=0\n", ".env:2: OPENPROSE_MAX_PARALLEL"),
        (".env", "OPENPROSE_DEFAULT_MODEL=two words\n", ".env:1: OPENPROSE_DEFAULT_MODEL"),
        ("env", "OPENPROSE_MAX_PARALLEL=2000", "environment variable OPENPROSE_MAX_PARALLEL: "),
        ("prose.toml", '[run]\ndefault_model = ""\n', "prose.toml:2: run.default_model"),
    ],
)
def test_a_bad_value_names_its_file_and_line_or_its_variable(
    tmp_path: Path, where: str, text: str, words: str
) -> None:
    env: dict[str, str] = {}
    if where == "env":
        name, _, value = text.partition("=")
        env[name] = value
    else:
        (tmp_path / where).write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, env)
    assert words in str(caught.value)


def test_dotenv_lines_quotes_comments_and_the_last_assignment(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "\ufeff# a comment\n\nA=1\nexport B=\"two words\"\nnot a setting\nA=3\nC='x'\n"
    )
    dotenv = load_dotenv(tmp_path)
    assert dict(dotenv.values) == {"A": "3", "B": "two words", "C": "x"}
    assert dotenv.lines["A"] == 6
    assert load_dotenv(tmp_path / "missing").values == {}
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / ".env").mkdir()
    assert load_dotenv(tmp_path / "dir").values == {}


def cli(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OPENPROSE_", "PROSEC_CRASH"))}
    full.update(env or {})
    return subprocess.run(
        [str(PROSEC), *args], cwd=root, env=full, capture_output=True, text=True, timeout=120
    )


def agent_project(
    tmp_path: Path, runtime: dict[str, str] | None, binding_model: str | None
) -> Project:
    doc = intent({"keeper": {}}, [])
    if runtime is not None:
        doc["topology"]["nodes"][0]["runtime"] = runtime
    toml = f'[render.keeper]\nkind = "agent"\ncommand = ["{sys.executable}", "fake_agent.py"]\n' + (
        f'model = "{binding_model}"\n' if binding_model else ""
    )
    project = Project.create(tmp_path / "p", doc, toml)
    shutil.copy(FAKE_AGENT, project.root / "fake_agent.py")
    return project


@pytest.mark.parametrize(
    ("runtime", "binding", "expected"),
    [
        ({"model": "runtime-model"}, "binding-model", "runtime-model"),
        (None, "binding-model", "binding-model"),
        (None, None, "flag-model"),
    ],
)
def test_the_agent_model_runtime_then_binding_then_default(
    tmp_path: Path, runtime: dict[str, str] | None, binding: str | None, expected: str
) -> None:
    project = agent_project(tmp_path, runtime, binding)
    (project.root / ".env").write_text("OPENPROSE_DEFAULT_MODEL=dotenv-model\n")
    result = cli(project.root, "run", ".", "--model", "flag-model")
    assert result.returncode == 0, result.stderr
    assert project.ledger("keeper")[-1]["cost"]["model"] == expected
    truth = project.root / "state/world-model/keeper/published/model.json"
    assert json.loads(truth.read_text()) == expected  # PROSEC_MODEL said the same


def test_the_default_model_reaches_the_agent_from_each_layer(tmp_path: Path) -> None:
    project = agent_project(tmp_path, None, None)
    seen = []
    (project.root / "prose.toml").write_text(
        (project.root / "prose.toml").read_text() + '\n[run]\ndefault_model = "toml-model"\n'
    )
    for step, env in enumerate(({}, {"OPENPROSE_DEFAULT_MODEL": "env-model"})):
        (project.root / "world").mkdir(exist_ok=True)
        assert cli(project.root, "tick", "keeper", env=env).returncode == 0, step
        seen.append(project.ledger("keeper")[-1]["cost"]["model"])
    (project.root / ".env").write_text("OPENPROSE_DEFAULT_MODEL=dotenv-model\n")
    assert (
        cli(project.root, "tick", "keeper", env={"OPENPROSE_DEFAULT_MODEL": "env-model"}).returncode
        == 0
    )
    seen.append(project.ledger("keeper")[-1]["cost"]["model"])
    assert seen == ["toml-model", "env-model", "dotenv-model"]


def test_bad_flag_and_bad_dotenv_are_usage_errors(tmp_path: Path) -> None:
    project = agent_project(tmp_path, None, None)
    bad_flag = cli(project.root, "run", ".", "--model", "no spaces")
    assert bad_flag.returncode == 2 and "--model" in bad_flag.stderr
    (project.root / ".env").write_text("OPENPROSE_MAX_PARALLEL=lots\n")
    bad_env = cli(project.root, "run", ".")
    assert bad_env.returncode == 2
    assert f"{(project.root / '.env').resolve()}:1: OPENPROSE_MAX_PARALLEL" in bad_env.stderr
    assert "Traceback" not in bad_env.stderr


def test_status_says_where_each_setting_came_from(tmp_path: Path) -> None:
    project = agent_project(tmp_path, None, None)
    (project.root / ".env").write_text("# team defaults\nOPENPROSE_DEFAULT_MODEL=dotenv-model\n")
    result = cli(project.root, "status", "--json", env={"OPENPROSE_MAX_PARALLEL": "6"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["settings"] == {
        "jobs": {"value": 6, "from": "environment"},
        "default_model": {"value": "dotenv-model", "from": f"{project.root / '.env'}:2"},
    }
    text = cli(project.root, "status").stdout
    assert "settings: jobs 2 (from default), default model dotenv-model (from .env:2)" in text


def test_a_program_file_run_passes_the_default_model_too(tmp_path: Path) -> None:
    from ..conftest import REPO

    root = tmp_path / "tea-timer"
    shutil.copytree(REPO / "corpus" / "tea-timer", root)
    (root / "prose.toml").write_text(
        '[render.tea-timer]\nkind = "command"\n'
        'command = ["sh", "-c", "echo $PROSEC_MODEL >> model.log; exec python3 renders/tea.py"]\n'
    )
    run = ("run", "src/tea-timer.prose.md", "--tea", "green", "--strength", "strong")
    assert cli(root, *run).returncode == 0
    (root / ".env").write_text("OPENPROSE_DEFAULT_MODEL=dotenv-model\n")
    assert cli(root, *run).returncode == 0
    result = cli(root, *run, "--model", "flag-model")
    assert result.returncode == 0, result.stderr
    assert (root / "model.log").read_text().split() == ["unspecified", "dotenv-model", "flag-model"]
