"""Hostile renders (issue 9): whatever a render writes, returns or does, the runner ends
with a failed receipt naming the reason (or the right published truth), never a crash;
`prosec resume` never crashes either, and `prosec receipts verify` stays ok."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .project import Project, intent

# One command render plays every hostile output; the node name picks the case.
HOSTILE = r"""
import json, os, pathlib, sys
node = os.environ["PROSEC_NODE"]
root = pathlib.Path(os.environ["PROSEC_ROOT"])
out = pathlib.Path(os.environ["PROSEC_OUTPUT"])
ws = pathlib.Path(os.environ["PROSEC_WORKSPACE"])

def write(name, text):
    (out / name).write_text(text)

def nested_block(depth):
    return "".join("  " * i + "k:\n" for i in range(depth)) + "  " * depth + "v\n"

BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
    f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
    f"*{chr(97 + i)}]\n"
    for i in range(8)
)
assert len(BOMB) < 400, len(BOMB)

if node == "json-deep":
    write("t.json", "[" * 990 + "]" * 990)
elif node == "json-1e400":
    write("t.json", '{"x": 1e400}')
elif node == "json-nan":
    write("t.json", '{"x": NaN}')
elif node == "json-infinity":
    write("t.json", '[-Infinity]')
elif node == "json-digits":
    write("t.json", '{"x": ' + "7" * 5000 + "}")
elif node == "yaml-flow-deep":
    write("t.yaml", "[" * 5000 + "]" * 5000)
elif node == "yaml-block-deep":
    write("t.yaml", nested_block(5000))
elif node == "yaml-inf":
    write("t.yaml", "x: .inf\n")
elif node == "yaml-overflow":
    write("t.yaml", "x: 1.0e+400\n")
elif node == "yaml-digits":
    write("t.yaml", "x: " + "7" * 5000 + "\n")
elif node == "yaml-bomb":
    write("t.yaml", BOMB)
elif node == "frontmatter-deep":
    write("t.md", "---\n" + nested_block(5000) + "---\nbody\n")
elif node == "attest-dir":
    write("t.json", "{}")
    (ws / "__attest.json").mkdir()
elif node == "error-dir":
    (ws / "__error.md").mkdir()
elif node == "error-link":
    os.symlink("/dev/zero", ws / "__error.md")
elif node == "fifo":
    os.mkfifo(out / "t.json")
elif node == "folders-deep":
    deep = out.joinpath(*["d"] * 40)
    deep.mkdir(parents=True)
    (deep / "t.json").write_text("1")
elif node == "output-link":
    out.rmdir()
    os.symlink(root.parent / "outside", out)
elif node == "staging-link":
    (root.parent / "outside-staging" / out.name).mkdir(parents=True)
    (root.parent / "outside-staging" / out.name / "secret.json").write_text('{"s": 1}')
    parent = out.parent
    out.rmdir()
    parent.rmdir()
    os.symlink(root.parent / "outside-staging", parent)
elif node == "trap-inputs":  # traps for the next attempt of this node
    for name in ("__inputs.json", "__wake.json"):
        (ws / name).unlink()
        (ws / name).mkdir()
    raise SystemExit(1)
elif node == "trap-log":
    (ws / "__render.log").unlink()
    (ws / "__render.log").mkdir()
    raise SystemExit(1)
elif node == "trap-workspace":
    elsewhere = root.parent / "outside-ws"
    elsewhere.mkdir(exist_ok=True)
    (elsewhere / "__error.md").write_text("# Error: from-outside\n")
    ws.rename(root.parent / f"moved-ws-{os.getpid()}")
    os.symlink(elsewhere, ws)
    write("t.json", "{}")
elif node == "sigkill":
    os.kill(os.getpid(), 9)
elif node == "bad-name":
    fd = os.open(bytes(out) + b"/\xff.json", os.O_WRONLY | os.O_CREAT)
    os.write(fd, b"1")
    os.close(fd)
elif node == "limit-both":  # 31 folders, then a file nested 100 deep: published
    deep = out.joinpath(*["d"] * 31)
    deep.mkdir(parents=True)
    (deep / "t.json").write_text("[" * 100 + "]" * 100)
elif node == "zzz":  # renders last
    write("t.json", "1")
elif node == "limit-depth":  # exactly at the limits: published
    write("t.json", "[" * 100 + "]" * 100)
elif node == "recorded":  # its process group was recorded before it started
    procs = pathlib.Path(os.environ["PROSEC_RUN_DIR"]) / "procs"
    mine = [json.loads(p.read_text()) for p in procs.glob(f"{node}.*.json")]
    write("t.json", json.dumps({"recorded": [r["pgid"] == os.getpgid(0) for r in mine]}))
else:
    raise SystemExit(f"no such case {node}")
"""

PYRENDERS = """
import json, os, sys

def _out(request):
    (request.output / "t.json").write_text("{}")

def cost_text(request):
    _out(request)
    return {"tokens": {"fresh": "lots"}}

def cost_inf(request):
    _out(request)
    return {"tokens": {"fresh": float("inf")}}

def cost_nan(request):
    _out(request)
    return {"model": "m", "tokens": {"reused": float("nan")}}

def cost_object(request):
    _out(request)
    return {"model": object()}

def cost_str(request):
    _out(request)
    return "cheap"

def exits(request):
    sys.exit(7)

def base_exception(request):
    raise BaseException("not an Exception")

def keyboard(request):
    raise KeyboardInterrupt

def os_exit(request):
    os._exit(3)

def recursion(request):
    return recursion(request)

def sigsegv(request):
    os.kill(os.getpid(), 11)

def thread(request):  # a thread that never ends must not keep the worker alive
    import threading, time
    threading.Thread(target=time.sleep, args=(3600,)).start()
    _out(request)

def trap_result(request):
    (request.workspace / "__python-result.json").mkdir()
    _out(request)
"""

COMMAND_CASES: dict[str, tuple[str, str]] = {
    "json-deep": ("invalid-artifact", "t.json: nested deeper than 100 levels"),
    "json-1e400": ("invalid-artifact", "t.json: the number 1e400 is out of range"),
    "json-nan": ("invalid-artifact", "t.json: NaN is not a JSON number"),
    "json-infinity": ("invalid-artifact", "t.json: -Infinity is not a JSON number"),
    "json-digits": ("invalid-artifact", "t.json: an integer of 5000 digits is too long"),
    "yaml-flow-deep": ("invalid-artifact", "t.yaml: "),
    "yaml-block-deep": ("invalid-artifact", "t.yaml: "),
    "yaml-inf": ("invalid-artifact", "t.yaml: YAML value inf is not a JSON number"),
    "yaml-overflow": ("invalid-artifact", "t.yaml: YAML value inf is not a JSON number"),
    "yaml-digits": ("invalid-artifact", "t.yaml: invalid YAML value"),
    "yaml-bomb": ("invalid-artifact", "t.yaml: YAML with more than 100,000 values"),
    "frontmatter-deep": ("invalid-artifact", "t.md: "),
    "attest-dir": ("invalid-attestation", "__attest.json is not a plain file"),
    "error-dir": ("invalid-signal", "__error.md is not a plain file"),
    "error-link": ("invalid-signal", "__error.md is not a plain file"),
    "fifo": ("invalid-artifact", "is not a regular file"),
    "folders-deep": ("invalid-artifact", "key path nested deeper than 32 folders"),
    "output-link": ("invalid-artifact", "symlink"),
    "staging-link": ("invalid-artifact", "symlink"),
    "sigkill": ("killed-by-SIGKILL", "killed by SIGKILL"),
    "bad-name": ("invalid-artifact", "surrogates not allowed"),
    "trap-inputs": ("exit-1", "status 1"),
    "trap-log": ("exit-1", "status 1"),
    "trap-workspace": ("invalid-signal", "the workspace was replaced by a symlink"),
}
PYTHON_CASES: dict[str, tuple[str, str]] = {
    "py-cost-text": ("invalid-cost", "tokens.fresh"),
    "py-cost-inf": ("invalid-cost", "the cost is not JSON: Out of range float"),
    "py-cost-nan": ("invalid-cost", "the cost is not JSON"),
    "py-cost-object": ("invalid-cost", "the cost is not JSON"),
    "py-cost-str": ("invalid-cost", "the render returned a str"),
    "py-exits": ("exception", "SystemExit(7)"),
    "py-base-exception": ("exception", "BaseException: not an Exception"),
    "py-keyboard": ("exception", "KeyboardInterrupt"),
    "py-os-exit": ("exit-3", "status 3"),
    "py-recursion": ("exception", "RecursionError"),
    "py-sigsegv": ("killed-by-SIGSEGV", "killed by SIGSEGV"),
    "py-import-raises": ("import", "ZeroDivisionError"),
    "py-syntax-error": ("import", "SyntaxError"),
    "py-import-exits": ("import", "SystemExit(4)"),
    "py-trap-result": ("exit-1", "status 1"),
}
CALLABLES = {
    "py-import-raises": "bad_import:render",
    "py-syntax-error": "bad_syntax:render",
    "py-import-exits": "bad_exit:render",
}
PUBLISHED = ("limit-depth", "limit-both", "recorded", "py-thread")


def hostile_project(root: Path) -> Project:
    nodes = [*COMMAND_CASES, *PYTHON_CASES, *PUBLISHED]
    python = [*PYTHON_CASES, "py-thread"]
    project = Project.create(root, intent({node: {} for node in nodes}, []))
    (root / "renders/hostile.py").write_text(HOSTILE)
    (root / "pyrenders.py").write_text(PYRENDERS)
    (root / "bad_import.py").write_text("1 / 0\n")
    (root / "bad_syntax.py").write_text("def render(request:\n")
    (root / "bad_exit.py").write_text("import sys\nsys.exit(4)\n")
    toml = f'[render.default]\nkind = "command"\ncommand = ["{sys.executable}", "renders/hostile.py"]\n'
    for node in python:
        function = node.removeprefix("py-").replace("-", "_")
        target = CALLABLES.get(node, f"pyrenders:{function}")
        toml += f'\n[render.{node}]\nkind = "python"\ncallable = "{target}"\n'
    (root / "prose.toml").write_text(toml)
    return project


def failures(summary: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {item["node"]: (item["error"], item["reason"]) for item in summary["failed"]}


def assert_verified(project: Project) -> None:
    verify = project.prosec("receipts", "verify", ".")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_every_hostile_output_is_a_failed_receipt_and_resume_never_crashes(
    tmp_path: Path,
) -> None:
    project = hostile_project(tmp_path / "p")
    # the runner dies right after the first render ends: resume judges them all
    crashed = project.prosec("run", ".", "--json", env={"PROSEC_CRASH_AT": "after-render"})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    started = time.monotonic()
    resumed = project.prosec("resume", "latest", "--json")
    elapsed = time.monotonic() - started
    assert resumed.returncode == 1, resumed.stderr
    summary = json.loads(resumed.stdout)
    got = failures(summary)
    expected = {**COMMAND_CASES, **PYTHON_CASES}
    assert sorted(got) == sorted(expected)
    for node, (error, reason) in expected.items():
        assert got[node][0] == error, (node, got[node])
        assert reason in got[node][1], (node, got[node])
    assert sorted(summary["rendered"]) == sorted(PUBLISHED)
    assert project.published("limit-depth") is None  # its truth is t.json
    published = project.root / "state/world-model"
    assert json.loads((published / "recorded/published/t.json").read_text()) == {"recorded": [True]}
    # each failure is a receipt that keeps the prior (cold-start) tokens
    for node in expected:
        (receipt,) = project.ledger(node)
        assert receipt["status"] == "failed"
        assert receipt["semantic_diff"]["error"] == expected[node][0]
        assert not (published / node / "published").exists()
    # nothing outside the root was published, and the bomb was refused quickly
    assert not any(published.rglob("secret.json"))
    assert elapsed < 120
    again = project.prosec("resume", "latest")
    assert again.returncode == 0 and "already finished" in again.stdout
    rerun = project.prosec("run", ".", "--json")  # failures set no memo: they retry
    assert rerun.returncode == 1, rerun.stderr
    assert sorted(failures(json.loads(rerun.stdout))) == sorted(expected)
    assert_verified(project)


def test_traps_left_in_the_workspace_never_crash_the_next_attempt(tmp_path: Path) -> None:
    """Renders that replace the VM's workspace files (or the workspace) with folders or
    links; resume renders them again in the same workspace."""
    traps = ["trap-inputs", "trap-log", "trap-workspace", "py-trap-result"]
    project = hostile_project(tmp_path / "p")
    doc = intent({node: {} for node in [*traps, "zzz"]}, [])
    project.set_intent(doc)
    toml = (project.root / "prose.toml").read_text()
    keep = [t for t in toml.split("\n\n") if "[render.py-" not in t or "py-trap" in t]
    (project.root / "prose.toml").write_text("\n\n".join(keep))
    crash = {"PROSEC_CRASH_AT": "after-render:zzz"}
    crashed = project.prosec("run", ".", "--jobs", "1", env=crash)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    resumed = project.prosec("resume", "latest", "--json", "--jobs", "1")
    assert resumed.returncode == 1, resumed.stderr
    summary = json.loads(resumed.stdout)
    expected = {**COMMAND_CASES, **PYTHON_CASES}
    assert failures(summary) == {
        node: (expected[node][0], failures(summary)[node][1]) for node in traps
    }
    assert summary["rendered"] == ["zzz"]
    run = project.run_dir(summary["run_id"])
    for node in traps:
        # failed on resume, in the workspace the crashed runner's attempt left trapped;
        # whether the crashed runner had committed its own failure too depends on whether
        # its group commit (groupcommit.py) ran before zzz's render ended
        receipts = (run / "receipts" / f"{node}.jsonl").read_text().splitlines()
        assert len(receipts) in (1, 2), node
        assert json.loads(receipts[-1])["status"] == "failed"
        assert json.loads(receipts[-1])["semantic_diff"]["error"] == expected[node][0]
    assert_verified(project)


def test_1e400_after_null_is_refused_not_fingerprinted_as_null(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    (project.root / "renders/value.py").write_text(
        "import os, pathlib\n"
        "root = pathlib.Path(os.environ['PROSEC_ROOT'])\n"
        "text = (root / 'value.txt').read_text()\n"
        "(pathlib.Path(os.environ['PROSEC_OUTPUT']) / 'x.json').write_text(text)\n"
    )
    (project.root / "value.txt").write_text('{"x": null}')
    render = f"a=command:{sys.executable} renders/value.py"
    first = project.run("--render", render)
    assert first["rendered"] == ["a"]
    for hostile in ('{"x": 1e400}', '{"x": -1e400}', '{"x": NaN}', '{"x": Infinity}'):
        (project.root / "value.txt").write_text(hostile)
        result = project.prosec("tick", "a", "--json", "--render", render)
        assert result.returncode == 1, result.stderr
        summary = json.loads(result.stdout)
        assert summary["skipped"] == [] and summary["rendered"] == []
        (failure,) = summary["failed"]
        assert failure["error"] == "invalid-artifact" and failure["reason"].startswith("x.json: ")
        published = project.root / "state/world-model/a/published/x.json"
        assert json.loads(published.read_text()) == {"x": None}
    assert_verified(project)


@pytest.mark.parametrize(
    "data", ["1e400", '{"x": -1e400}', "NaN", "[Infinity]", "7" * 5000, "[" * 3000 + "]" * 3000]
)
def test_trigger_data_without_a_canonical_form_is_a_usage_error(tmp_path: Path, data: str) -> None:
    doc = intent({"g": {"wake_source": "external", "render": {"kind": "ingress"}}}, [], ["g"])
    project = Project.create(tmp_path / "p", doc)
    (project.root / "data.json").write_text(data)
    for given in (data, "@data.json"):
        result = project.prosec("trigger", "g", "--data", given)
        assert result.returncode == 2, result.stderr
        where = "--data @data.json" if given.startswith("@") else "--data"
        assert result.stderr.startswith(f"prosec: error: {where}: "), result.stderr
    assert project.ledger("g") == []


def test_a_ledger_line_with_1e400_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    assert project.run()["rendered"] == ["a"]
    ledger = project.root / "state/world-model/a/receipts.jsonl"
    ledger.write_bytes(ledger.read_bytes().replace(b'"fresh":0', b'"fresh":1e400', 1))
    verify = project.prosec("receipts", "verify", "state", "--json")
    assert verify.returncode == 1, verify.stderr
    assert "out of range" in verify.stdout


def test_a_pinned_input_written_by_a_render_fails_that_render_and_is_rebuilt(
    tmp_path: Path,
) -> None:
    edges = [("b", "a", "@atomic"), ("c", "a", "@atomic")]
    project = Project.create(tmp_path / "p", intent({"a": {}, "b": {}, "c": {}}, edges))
    project.world("a", {"v": 1})
    assert project.run()["failed"] == []
    (project.root / "renders/tamper.py").write_text(
        "import json, os, pathlib, stat\n"
        "pinned = json.loads(pathlib.Path(os.environ['PROSEC_INPUTS']).read_text())\n"
        "path = pathlib.Path(pinned['inputs'][0]['path']) / 'truth.json'\n"
        "assert not path.stat().st_mode & 0o222, 'pinned inputs are read-only'\n"
        "path.chmod(stat.S_IRUSR | stat.S_IWUSR)\n"
        'path.write_text(\'{"own": {"v": 666}, "inputs": {}}\')\n'
        "(pathlib.Path(os.environ['PROSEC_OUTPUT']) / 't.json').write_text('{\"b\": 2}')\n"
    )
    project.world("a", {"v": 2})
    render = f"b=command:{sys.executable} renders/tamper.py"
    result = project.prosec("tick", "a", "--json", "--jobs", "1", "--render", render)
    assert result.returncode == 1, result.stderr
    summary = json.loads(result.stdout)
    got = failures(summary)
    assert got["b"][0] == "input-changed" and "a" in got["b"][1]
    # c read either the verified copy (rendered) or the tampered one (then it failed too)
    if "c" in got:
        assert got["c"][0] == "input-changed"
    else:
        assert project.published("c")["inputs"]["a"]["own"] == {"v": 2}
    run = project.run_dir(summary["run_id"])
    truth = json.loads((run / "world-model/a/truth.json").read_text())
    assert truth["own"] == {"v": 2}  # rebuilt from its version
    assert_verified(project)


def test_render_log_keeps_its_last_megabytes_and_says_so(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    (project.root / "renders/loud.py").write_text(
        "import os, sys\n"
        "chunk = b'x' * 1023 + b'\\n'\n"
        "for _ in range(12 * 1024):\n"
        "    sys.stdout.buffer.write(chunk)\n"
        "sys.stdout.buffer.write(b'the last line\\n')\n"
        "sys.stdout.flush()\n"
        "open(os.path.join(os.environ['PROSEC_OUTPUT'], 't.json'), 'w').write('1')\n"
    )
    summary = project.run("--render", f"a=command:{sys.executable} renders/loud.py")
    assert summary["rendered"] == ["a"]
    log = project.run_dir(summary["run_id"]) / "workspace/a/__render.log"
    data = log.read_bytes()
    assert len(data) <= 4 * 1024 * 1024 + 200
    assert data.startswith(b"[prosec: __render.log keeps the last 4 MiB")
    assert b"earlier bytes were dropped" in data.splitlines()[0]
    assert data.endswith(b"the last line\n")


def test_render_log_left_as_a_symlink_is_never_written_through(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    (project.root / "renders/link.py").write_text(
        "import os, pathlib\n"
        "ws = pathlib.Path(os.environ['PROSEC_WORKSPACE'])\n"
        "print('render output')\n"
        "(ws / '__render.log').unlink()\n"
        f"os.symlink({str(victim)!r}, ws / '__render.log')\n"
        "(pathlib.Path(os.environ['PROSEC_OUTPUT']) / 't.json').write_text('1')\n"
    )
    render = f"a=command:{sys.executable} renders/link.py"
    assert project.run("--render", render)["rendered"] == ["a"]
    again = project.prosec("tick", "a", "--render", render)
    assert again.returncode == 0, again.stderr
    assert victim.read_text() == "untouched\n"


def test_render_environment_is_scrubbed_and_no_secret_lands_in_any_file(tmp_path: Path) -> None:
    secrets_env = {
        "OPENPROSE_POSTGRES_URL": "postgresql://prosec:PLANTED-PG-SECRET@127.0.0.1:1/x",
        "DATABASE_URL": "postgresql://u:PLANTED-DB-SECRET@127.0.0.1:1/db",
        "GITHUB_TOKEN": "PLANTED-GH-TOKEN",
        "AWS_SECRET_ACCESS_KEY": "PLANTED-AWS-SECRET",
        "MY_API_KEY": "PLANTED-PASSED-KEY",
    }
    project = Project.create(tmp_path / "p", intent({"cmd": {}, "agent": {}, "py": {}}, []))
    dump = (
        "import json, os, pathlib\n"
        "print('\\n'.join(f'{k}={v}' for k, v in sorted(os.environ.items())), flush=True)\n"
        "out = pathlib.Path(os.environ['PROSEC_OUTPUT'])\n"
        "(out / 'env.json').write_text(json.dumps(dict(os.environ)))\n"
    )
    (project.root / "renders/dump.py").write_text(dump)
    (project.root / "pydump.py").write_text(
        dump.replace("out = ", "def render(request):\n    out = ").replace(
            "(out / 'env", "    (out / 'env"
        )
    )
    (project.root / "prose.toml").write_text(
        f'[render.cmd]\nkind = "command"\ncommand = ["{sys.executable}", "renders/dump.py"]\n'
        'pass_env = ["MY_API_KEY"]\nenv = {LITERAL = "given"}\n'
        f'\n[render.agent]\nkind = "agent"\ncommand = ["{sys.executable}", "renders/dump.py"]\n'
        '\n[render.py]\nkind = "python"\ncallable = "pydump:render"\n'
    )
    summary = project.run(env=secrets_env)
    assert sorted(summary["rendered"]) == ["agent", "cmd", "py"], summary
    published = project.root / "state/world-model"
    seen = {
        node: json.loads((published / node / "published/env.json").read_text())
        for node in ("cmd", "agent", "py")
    }
    assert seen["cmd"]["MY_API_KEY"] == "PLANTED-PASSED-KEY"
    assert seen["cmd"]["LITERAL"] == "given"
    for node, env in seen.items():
        assert "PATH" in env and env["PROSEC_NODE"] == node
        assert not {"OPENPROSE_POSTGRES_URL", "DATABASE_URL", "GITHUB_TOKEN"} & set(env)
        if node != "cmd":
            assert "MY_API_KEY" not in env
    planted = [v.encode() for k, v in secrets_env.items() if k != "MY_API_KEY"]
    written = [path for path in project.root.rglob("*") if path.is_file()]
    assert any(path.name == "__render.log" for path in written)
    for path in written:
        content = path.read_bytes()
        for secret in planted:
            assert secret not in content, (path, secret)


@pytest.mark.parametrize("bad", ['"MY_API_KEY"', '["MY-KEY"]', "[1]", '["$(id)"]'])
def test_a_bad_pass_env_is_a_usage_error(tmp_path: Path, bad: str) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    toml = (project.root / "prose.toml").read_text()
    (project.root / "prose.toml").write_text(toml + f"pass_env = {bad}\n")
    in_toml = project.prosec("run", ".")
    assert in_toml.returncode == 2 and "pass_env" in in_toml.stderr, in_toml.stderr
    doc = intent({"a": {"render": {"kind": "command", "command": "true", "pass_env": 0}}}, [])
    manifest = json.dumps(doc).replace('"pass_env": 0', f'"pass_env": {bad}')
    (project.root / "dist/manifest.active.json").write_text(manifest)
    (project.root / "prose.toml").write_text("")
    in_intent = project.prosec("run", ".")
    assert in_intent.returncode == 2 and "pass_env" in in_intent.stderr, in_intent.stderr
    assert project.ledger("a") == []


@pytest.mark.postgres
def test_postgres_password_never_reaches_a_render(postgres_url: str, tmp_path: Path) -> None:
    import secrets as random_names

    import psycopg
    from psycopg.conninfo import make_conninfo

    url = make_conninfo(postgres_url, password="PLANTED-PG-PASSWORD")
    schema = f"prosec_t_{random_names.token_hex(4)}"
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    (project.root / "renders/dump.py").write_text(
        "import os\nprint(dict(os.environ), flush=True)\n"
        "open(os.path.join(os.environ['PROSEC_OUTPUT'], 'e.json'), 'w').write('1')\n"
    )
    env = {"OPENPROSE_POSTGRES_URL": url, "OPENPROSE_POSTGRES_SCHEMA": schema}
    try:
        render = f"a=command:{sys.executable} renders/dump.py"
        summary = project.run("--backend", "postgres", "--render", render, env=env)
        assert summary["rendered"] == ["a"]
        for path in project.root.rglob("*"):
            if path.is_file():
                assert b"PLANTED-PG-PASSWORD" not in path.read_bytes(), path
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "-1", "0"])
def test_non_finite_or_non_positive_timeouts_are_refused_everywhere(
    tmp_path: Path, bad: str
) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    cli = project.prosec("run", ".", "--timeout", bad)
    assert cli.returncode == 2 and "--timeout" in cli.stderr, cli.stderr
    toml = (project.root / "prose.toml").read_text()
    (project.root / "prose.toml").write_text(toml + f"timeout = {bad}\n")
    per_render = project.prosec("run", ".")
    assert per_render.returncode == 2 and "timeout" in per_render.stderr, per_render.stderr
    (project.root / "prose.toml").write_text(f"[run]\ntimeout = {bad}\n\n" + toml)
    run_table = project.prosec("run", ".")
    assert run_table.returncode == 2 and "timeout" in run_table.stderr, run_table.stderr
    doc = intent({"a": {"render": {"kind": "command", "command": "true", "timeout": 0}}}, [])
    manifest = json.dumps(doc).replace('"timeout": 0', f'"timeout": {_json_number(bad)}')
    (project.root / "dist/manifest.active.json").write_text(manifest)
    (project.root / "prose.toml").write_text("")
    in_intent = project.prosec("run", ".")
    assert in_intent.returncode == 2, in_intent.stderr
    assert project.ledger("a") == []


def _json_number(text: str) -> str:
    return {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}.get(text, text)


def test_python_render_timeout_is_enforced(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"sleeps": {}, "spins": {}}, []))
    (project.root / "slow.py").write_text(
        "import time\n"
        "def sleeps(request):\n    time.sleep(120)\n"
        "def spins(request):\n    while True:\n        pass\n"
    )
    started = time.monotonic()
    result = project.prosec(
        "run",
        ".",
        "--json",
        "--timeout",
        "1.5",
        "--render",
        "sleeps=python:slow:sleeps",
        "--render",
        "spins=python:slow:spins",
    )
    assert time.monotonic() - started < 60
    assert result.returncode == 1, result.stderr
    got = failures(json.loads(result.stdout))
    assert got == {
        "sleeps": ("timeout", "render exceeded 1.5s"),
        "spins": ("timeout", "render exceeded 1.5s"),
    }
    assert_verified(project)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def test_a_render_is_done_when_its_process_is(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    (project.root / "renders/fork.py").write_text(
        "import os, pathlib, subprocess, sys\n"
        "root = pathlib.Path(os.environ['PROSEC_ROOT'])\n"
        "out = pathlib.Path(os.environ['PROSEC_OUTPUT'])\n"
        "(out / 't.json').write_text('1')\n"
        "writer = ('import os, time, pathlib\\n'\n"
        "          'out = pathlib.Path(os.environ[\"PROSEC_OUTPUT\"])\\n'\n"
        "          'for i in range(600):\\n'\n"
        "          '    time.sleep(0.05)\\n'\n"
        "          '    out.mkdir(parents=True, exist_ok=True)\\n'\n"
        '          \'    (out / f"late-{i}.json").write_text("2")\\n\')\n'
        "child = subprocess.Popen([sys.executable, '-c', writer])\n"
        "(root / 'child.pid').write_text(str(child.pid))\n"
    )
    summary = project.run("--render", f"a=command:{sys.executable} renders/fork.py")
    assert summary["rendered"] == ["a"]
    child = int((project.root / "child.pid").read_text())
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child)
    published = project.root / "state/world-model/a/published"
    assert sorted(p.name for p in published.iterdir()) == [".version", "t.json"]
    assert not (project.run_dir(summary["run_id"]) / "procs").exists() or not any(
        (project.run_dir(summary["run_id"]) / "procs").iterdir()
    )
