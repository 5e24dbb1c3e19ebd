"""Hostile input for every `prosec` command (issue 9): missing paths, a directory where a
file belongs and a file where a directory belongs, FIFOs and devices (which would block a
reader), invalid UTF-8, broken symlinks and symlink loops, malformed JSON and TOML, huge,
deep and non-finite numbers, unknown flags and values.

Each is a usage error: exit 2 with one `prosec: error:` line naming the input, never
exit 3 (a bug), never a traceback, never a hang. The commands whose job is to judge a
file's content (`validate`, `activate`, `lint`, `receipts verify`) report bad content as
a finding instead (exit 1), as their help says; what they cannot read at all is exit 2.
Tests run as root here, so "unreadable" is made with FIFOs, directories, bad bytes and
links rather than with permissions.
"""

from __future__ import annotations

import importlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from prosec.compiler.cli import LAZY_COMMANDS

from ...runtime.project import Project, intent
from .forked import TIMEOUT, run_forked

EDITOR = Path(__file__).parents[1] / "lsp" / "fixtures" / "editor"


def _hostiles(h: Path) -> None:
    """The hostile objects every case may point at, under WORKSPACE/h/."""
    h.mkdir()
    os.mkfifo(h / "fifo")
    os.mkfifo(h / "fifo.json")
    (h / "dir").mkdir()
    (h / "dir.json").mkdir()
    (h / "afile").write_text("just a file\n")
    (h / "bad.json").write_bytes(b'{"x": "\xff\xfe"}')
    (h / "broken").symlink_to(h / "nothing-here")
    (h / "loop").symlink_to(h / "loop")
    (h / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (h / "deep3k.json").write_text("[" * 3_000 + "]" * 3_000)
    (h / "nan.json").write_text('{"x": NaN}')
    (h / "inf.json").write_text('{"x": 1e400}')
    (h / "digits.json").write_text('{"x": ' + "9" * 5_000 + "}")
    (h / "malformed.json").write_text('{"x": ')
    with open(h / "huge.json", "wb") as handle:  # sparse: 300 MB that take no disk
        handle.truncate(300 << 20)
    (h / "deep.toml").write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    (h / "bad.toml").write_bytes(b"[lint]\nignore = ['\xff']\n")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runtime project that has run once (rt/) and a compile project (ed/). Every
    command module is imported here once, so each forked child starts warm."""
    for target in LAZY_COMMANDS.values():
        importlib.import_module(target.partition(":")[0])
    importlib.import_module("prosec.compiler.lsp.server")
    base = tmp_path_factory.mktemp("hostile")
    doc = intent(
        {"a": {}, "g": {"wake_source": "external"}}, [("a", "g", "@atomic")], entry_points=["g"]
    )
    project = Project.create(base / "rt", doc)
    assert project.run()["failed"] == []
    shutil.copytree(EDITOR, base / "ed")
    return base


_FUNCTION = """---
name: fn
kind: function
---

# A function

### Parameters

- `steep`: how long to steep

### Returns

- `done`: when it is done
"""
_GATEWAY = """---
name: gw
kind: gateway
---

# A gateway

### Continuity: external-driven

### Receives

- POST /hooks/x

### Maintains

- `items`: the items
"""


@dataclass(frozen=True)
class Case:
    """`prosec ARGS` run in WORKSPACE/CWD after SETUP; `{w}` in an argument is WORKSPACE."""

    id: str
    args: tuple[str, ...]
    says: str  # in stderr: names the input
    expect: int = 2
    cwd: str = "rt"
    setup: Callable[[Path], None] | None = None


def _put(
    rel: str, content: bytes | str | None = None, kind: str = "file"
) -> Callable[[Path], None]:
    """A setup that puts a file, directory, FIFO or link at WORKSPACE/REL (replacing it)."""

    def setup(w: Path) -> None:
        path = w / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "dir":
            path.mkdir()
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "link":
            assert isinstance(content, str)
            path.symlink_to(content if content.startswith("/") else w / content)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content or "")

    return setup


def _append(rel: str, text: str) -> Callable[[Path], None]:
    def setup(w: Path) -> None:
        with open(w / rel, "a", encoding="utf-8") as handle:
            handle.write(text)

    return setup


MANIFEST = "dist/manifest.active.json"
DEEP = "[" * 100_000 + "]" * 100_000
DEEP_FENCE = (
    "---\nname: deep\nkind: responsibility\nid: deep\n---\n\n# Deep\n\n### Maintains\n\n"
    '- `x`: a value\n\n```json\n{"canonicalizer": ' + DEEP + "}\n```\n"
)


def _toml_setups(cwd: str) -> list[tuple[str, Callable[[Path], None], str]]:
    """prose.toml of the project in CWD, in every shape it can be wrong."""
    toml = f"{cwd}/prose.toml"
    return [
        ("toml-dir", _put(toml, kind="dir"), "prose.toml"),
        ("toml-fifo", _put(toml, kind="fifo"), "prose.toml"),
        ("toml-bad-utf8", _put(toml, b"[lint]\nignore = ['\xff']\n"), "prose.toml"),
        ("toml-deep", _put(toml, "x = " + DEEP + "\n"), "prose.toml"),
        ("toml-malformed", _put(toml, "[lint\n"), "prose.toml"),
        ("toml-broken-link", _put(toml, "h/nothing", kind="link"), "prose.toml"),
        ("toml-loop", _put(toml, toml, kind="link"), "prose.toml"),
        ("toml-nan-timeout", _put(toml, "[run]\ntimeout = nan\n"), "run.timeout"),
        ("toml-huge-int", _put(toml, "[run]\njobs = 9999999999999999999\n"), "run.jobs"),
        ("toml-unknown-key", _put(toml, "[nope]\nx = 1\n"), "prose.toml"),
    ]


# a ROOT argument in every shape it can be wrong
ROOT_CASES: list[tuple[str, str, str]] = [
    ("root-missing", "{w}/h/nothing", "nothing"),
    ("root-file", "{w}/h/afile", "afile"),
    ("root-fifo", "{w}/h/fifo", "fifo"),
    ("root-broken-link", "{w}/h/broken", "broken"),
    ("root-loop", "{w}/h/loop", "loop"),
]

# the compiled intent a runtime command loads
MANIFEST_CASES: list[tuple[str, Callable[[Path], None], str]] = [
    ("manifest-missing", _put(f"rt/{MANIFEST}", "x"), MANIFEST),
    ("manifest-dir", _put(f"rt/{MANIFEST}", kind="dir"), MANIFEST),
    ("manifest-fifo", _put(f"rt/{MANIFEST}", kind="fifo"), MANIFEST),
    ("manifest-broken-link", _put(f"rt/{MANIFEST}", "h/nothing", kind="link"), MANIFEST),
    ("manifest-deep", _put(f"rt/{MANIFEST}", DEEP), MANIFEST),
    ("manifest-nan", _put(f"rt/{MANIFEST}", '{"kind": NaN}'), MANIFEST),
    ("manifest-1e400", _put(f"rt/{MANIFEST}", '{"version": 1e400}'), MANIFEST),
    ("manifest-digits", _put(f"rt/{MANIFEST}", '{"version": ' + "9" * 5000 + "}"), MANIFEST),
    ("manifest-bad-utf8", _put(f"rt/{MANIFEST}", b'{"kind": "\xff"}'), MANIFEST),
    ("manifest-array", _put(f"rt/{MANIFEST}", "[]"), MANIFEST),
]


def _missing_manifest(w: Path) -> None:
    (w / "rt" / MANIFEST).unlink()


MANIFEST_CASES[0] = ("manifest-missing", _missing_manifest, "prosec build")


def _label(command: tuple[str, ...]) -> str:
    """A case id prefix: the command's words, without flags, values and paths."""
    words = [w for w in command if w.isidentifier()]
    return "-".join(words[:2] if words[0] == "receipts" else words[:1])


def _root_cases(command: tuple[str, ...], *, root_flag: bool = False) -> list[Case]:
    cases = []
    for name, root, says in ROOT_CASES:
        args = (*command, "--root", root) if root_flag else (*command, root)
        cases.append(Case(f"{_label(command)}-{name}", args, says))
    return cases


def _toml_cases(command: tuple[str, ...], cwd: str = "rt") -> list[Case]:
    return [
        Case(f"{_label(command)}-{name}", command, says, cwd=cwd, setup=setup)
        for name, setup, says in _toml_setups(cwd)
    ]


def _manifest_cases(command: tuple[str, ...]) -> list[Case]:
    return [
        Case(f"{command[0]}-{name}", command, says, setup=s) for name, s, says in MANIFEST_CASES
    ]


def _lock_cases(command: tuple[str, ...]) -> list[Case]:
    """prose.lock of the compile project, in every shape it can be wrong."""
    lock = "ed/prose.lock"
    setups = [
        ("lock-dir", _put(lock, kind="dir")),
        ("lock-fifo", _put(lock, kind="fifo")),
        ("lock-bad-utf8", _put(lock, b"github.com/a/b \xff\n")),
        ("lock-malformed", _put(lock, "github.com/a/b not-a-commit\n")),
        ("lock-broken-link", _put(lock, "h/nothing", kind="link")),
        ("lock-loop", _put(lock, lock, kind="link")),
    ]
    return [
        Case(f"{command[0]}-{name}", command, "prose.lock", cwd="ed", setup=setup)
        for name, setup in setups
    ]


def _data(name: str, data: str, says: str) -> Case:
    return Case(f"trigger-data-{name}", ("trigger", "g", "--data", data), says)


CASES: list[Case] = [
    # -- lint ---------------------------------------------------------------------------
    Case("lint-missing", ("lint", "{w}/h/nothing"), "nothing"),
    Case("lint-fifo", ("lint", "{w}/h/fifo"), "fifo"),
    Case("lint-broken-link", ("lint", "{w}/h/broken"), "broken"),
    Case("lint-loop", ("lint", "{w}/h/loop"), "loop"),
    Case(
        "lint-fifo-source",
        ("lint", "."),
        "x.prose.md",
        expect=1,
        cwd="ed",
        setup=_put("ed/src/x.prose.md", kind="fifo"),
    ),
    Case(
        "lint-bad-utf8-source",
        ("lint", "."),
        "not UTF-8",
        expect=1,
        cwd="ed",
        setup=_put("ed/src/x.prose.md", b"---\nname: \xff\n---\n"),
    ),
    Case(
        "lint-deep-frontmatter",
        ("lint", "."),
        "x.prose.md",
        expect=1,
        cwd="ed",
        setup=_put(
            "ed/src/x.prose.md", "---\nname: x\nkind: function\nv: " + "[" * 5000 + "\n---\n"
        ),
    ),
    Case(
        "lint-dir-loop",
        ("lint", "."),
        "",
        expect=0,
        cwd="ed",
        setup=_put("ed/src/sub/again", "ed/src", kind="link"),
    ),
    Case("lint-unknown-code", ("lint", "--select", "nope", "."), "nope", cwd="ed"),
    Case("lint-bad-format", ("lint", "--format", "nope", "."), "nope", cwd="ed"),
    Case("lint-unknown-flag", ("lint", "--frobnicate", "."), "--frobnicate", cwd="ed"),
    *_toml_cases(("lint", "."), cwd="ed"),
    # -- build --------------------------------------------------------------------------
    *_root_cases(("build", "--offline-tools")),
    *_toml_cases(("build", "--offline-tools", "."), cwd="ed"),
    Case(
        "build-source-outside",
        ("build", "--offline-tools", "."),
        "build.source",
        cwd="ed",
        setup=_put("ed/prose.toml", '[build]\nsource = "../rt"\n'),
    ),
    Case(
        "build-source-absolute",
        ("build", "--offline-tools", "."),
        "build.source",
        cwd="ed",
        setup=_put("ed/prose.toml", '[build]\nsource = "/etc"\n'),
    ),
    Case(
        "build-source-link-outside",
        ("build", "--offline-tools", "."),
        "build.source",
        cwd="ed",
        setup=lambda w: (
            _put("ed/prose.toml", '[build]\nsource = "out"\n')(w),
            _put("ed/out", "rt", kind="link")(w),
        ),
    ),
    Case(
        "build-source-file",
        ("build", "--offline-tools", "."),
        "build.source",
        cwd="ed",
        setup=_put("ed/prose.toml", '[build]\nsource = "prose.toml"\n'),
    ),
    Case(
        "build-source-missing",
        ("build", "--offline-tools", "."),
        "build.source",
        cwd="ed",
        setup=_put("ed/prose.toml", '[build]\nsource = "nowhere"\n'),
    ),
    *(
        Case(
            f"{command}-deep-json-fence",  # a contract's ```json fence nested 100,000 deep
            args,
            "",
            expect=0,
            cwd="ed",
            setup=_put("ed/src/deep.prose.md", DEEP_FENCE),
        )
        for command, args in (
            ("build", ("build", "--offline-tools", ".")),
            ("lint", ("lint", ".")),
        )
    ),
    Case(
        "build-dist-is-a-file",
        ("build", "--offline-tools", "."),
        "dist",
        cwd="ed",
        setup=_put("ed/dist", "x"),
    ),
    Case(
        "build-next-manifest-is-a-dir",
        ("build", "--offline-tools", "."),
        "manifest.next.json",
        cwd="ed",
        setup=_put("ed/dist/manifest.next.json", kind="dir"),
    ),
    *[
        Case(f"build-mcp-registry-{name}", ("build", "--mcp-registry", path, "."), says, cwd="ed")
        for name, path, says in [
            ("missing", "{w}/h/nothing.json", "nothing.json"),
            ("dir", "{w}/h/dir.json", "dir.json"),
            ("fifo", "{w}/h/fifo.json", "fifo.json"),
            ("bad-utf8", "{w}/h/bad.json", "bad.json"),
            ("deep", "{w}/h/deep.json", "deep.json"),
            ("nan", "{w}/h/nan.json", "nan.json"),
            ("1e400", "{w}/h/inf.json", "inf.json"),
            ("digits", "{w}/h/digits.json", "digits.json"),
            ("malformed", "{w}/h/malformed.json", "malformed.json"),
            ("huge", "{w}/h/huge.json", "huge.json"),
            ("loop", "{w}/h/loop", "loop"),
        ]
    ],
    Case("build-skill-path-file", ("build", "--skill-path", "{w}/h/afile", "."), "afile", cwd="ed"),
    Case("build-skill-path-fifo", ("build", "--skill-path", "{w}/h/fifo", "."), "fifo", cwd="ed"),
    Case("build-bad-format", ("build", "--format", "nope", "."), "nope", cwd="ed"),
    # -- validate -----------------------------------------------------------------------
    *[
        Case(f"validate-{name}", ("validate", path), says, expect=code)
        for name, path, says, code in [
            ("missing", "{w}/h/nothing.json", "nothing.json", 2),
            ("dir", "{w}/h/dir.json", "dir.json", 2),
            ("fifo", "{w}/h/fifo.json", "fifo.json", 2),
            ("broken-link", "{w}/h/broken", "broken", 2),
            ("loop", "{w}/h/loop", "loop", 2),
            ("huge", "{w}/h/huge.json", "huge.json", 2),
            ("bad-utf8", "{w}/h/bad.json", "not UTF-8", 1),
            ("deep", "{w}/h/deep.json", "nested deeper", 1),
            ("nan", "{w}/h/nan.json", "NaN", 1),
            ("1e400", "{w}/h/inf.json", "1e400", 1),
            ("digits", "{w}/h/digits.json", "5000 digits", 1),
            ("malformed", "{w}/h/malformed.json", "not JSON", 1),
        ]
    ],
    # -- activate -----------------------------------------------------------------------
    *_root_cases(("activate",)),
    *[
        Case(f"activate-next-{name}", ("activate", "."), says, expect=code, cwd="ed", setup=s)
        for name, s, says, code in [
            ("dir", _put("ed/dist/manifest.next.json", kind="dir"), "manifest.next.json", 2),
            ("fifo", _put("ed/dist/manifest.next.json", kind="fifo"), "manifest.next.json", 2),
            ("deep", _put("ed/dist/manifest.next.json", DEEP), "nested deeper", 1),
            ("nan", _put("ed/dist/manifest.next.json", '{"a": NaN}'), "NaN", 1),
            ("bad-utf8", _put("ed/dist/manifest.next.json", b"\xff"), "not UTF-8", 1),
        ]
    ],
    # -- explain, graph -----------------------------------------------------------------
    *_root_cases(("explain", "accounts")),
    *_toml_cases(("explain", "accounts", "."), cwd="ed"),
    Case("explain-unknown-node", ("explain", "nope", "."), "nope", cwd="ed"),
    *_root_cases(("graph",)),
    *_toml_cases(("graph", "."), cwd="ed"),
    Case("graph-bad-format", ("graph", "--format", "nope", "."), "nope", cwd="ed"),
    *[
        Case(f"graph-manifest-{name}", ("graph", "--manifest", path, "."), says, cwd="ed")
        for name, path, says in [
            ("missing", "{w}/h/nothing.json", "nothing.json"),
            ("dir", "{w}/h/dir.json", "dir.json"),
            ("fifo", "{w}/h/fifo.json", "fifo.json"),
            ("deep", "{w}/h/deep.json", "deep.json"),
            ("nan", "{w}/h/nan.json", "nan.json"),
            ("bad-utf8", "{w}/h/bad.json", "bad.json"),
            ("huge", "{w}/h/huge.json", "huge.json"),
        ]
    ],
    # -- lsp (only its flags: the protocol has its own tests) ---------------------------
    Case("lsp-log-file-in-missing-dir", ("lsp", "--log-file", "{w}/h/nothing/x.log"), "--log-file"),
    Case("lsp-log-file-dir", ("lsp", "--log-file", "{w}/h/dir"), "dir"),
    Case("lsp-log-file-fifo", ("lsp", "--log-file", "{w}/h/fifo"), "--log-file"),
    Case("lsp-log-file-under-a-file", ("lsp", "--log-file", "{w}/h/afile/x.log"), "--log-file"),
    Case("lsp-negative-debounce", ("lsp", "--debounce-ms", "-1"), "--debounce-ms"),
    Case("lsp-word-debounce", ("lsp", "--debounce-ms", "soon"), "--debounce-ms"),
    # -- run ----------------------------------------------------------------------------
    *_root_cases(("run",)),
    *_toml_cases(("run", ".")),
    *_manifest_cases(("run", ".")),
    Case("run-state-is-a-file", ("run", "."), "state", setup=_put("rt/state", "x")),
    Case("run-bad-input", ("run", ".", "--input", "novalue"), "--input"),
    Case("run-unknown-input", ("run", ".", "--input", "x=1"), "--input x"),
    Case("run-bad-render", ("run", ".", "--render", "a"), "--render"),
    Case("run-render-unknown-node", ("run", ".", "--render", "zz=command:true"), "zz"),
    Case("run-zero-jobs", ("run", ".", "--jobs", "0"), "--jobs"),
    Case("run-nan-timeout", ("run", ".", "--timeout", "nan"), "--timeout"),
    Case("run-inf-timeout", ("run", ".", "--timeout", "inf"), "--timeout"),
    Case("run-bad-backend", ("run", ".", "--backend", "nope"), "--backend"),
    Case("run-bad-model", ("run", ".", "--model", "two words"), "--model"),
    Case(
        "run-dotenv-bad-jobs",
        ("run", "."),
        ".env:2: OPENPROSE_MAX_PARALLEL",
        setup=_put("rt/.env", "# settings\nOPENPROSE_MAX_PARALLEL=lots\n"),
    ),
    Case(
        "run-dotenv-is-a-fifo",
        ("run", ".", "--render", "zz=command:true"),
        "zz",
        setup=_put("rt/.env", kind="fifo"),
    ),
    Case("run-unknown-flag", ("run", ".", "--frobnicate"), "--frobnicate"),
    Case("run-file-not-prose", ("run", "{w}/h/afile"), "not a .prose.md file"),
    Case(
        "run-file-missing-input",
        ("run", "fn.prose.md"),
        "steep: how long",
        cwd="fn",
        setup=_put("fn/fn.prose.md", _FUNCTION),
    ),
    Case(
        "run-file-unknown-input",
        ("run", "fn.prose.md", "--steep", "2", "--colour", "red"),
        "unknown input 'colour'",
        cwd="fn",
        setup=_put("fn/fn.prose.md", _FUNCTION),
    ),
    Case(
        "run-file-input-without-value",
        ("run", "fn.prose.md", "--steep"),
        "--steep: expected a value",
        cwd="fn",
        setup=_put("fn/fn.prose.md", _FUNCTION),
    ),
    Case(
        "run-file-gateway",
        ("run", "gw.prose.md"),
        "is a gateway",
        cwd="fn",
        setup=_put("fn/gw.prose.md", _GATEWAY),
    ),
    Case(
        "run-file-does-not-compile",
        ("run", "bad.prose.md"),
        "does not compile",
        expect=1,
        cwd="fn",
        setup=_put(
            "fn/bad.prose.md", "---\nname: bad\nkind: function\n---\n\n```prose\nlet = \n```\n"
        ),
    ),
    Case(
        "run-file-replay-not-a-run",
        ("run", "fn.prose.md", "--steep", "1", "--replay", "nope"),
        "nope",
        cwd="fn",
        setup=_put("fn/fn.prose.md", _FUNCTION),
    ),
    # -- trigger ------------------------------------------------------------------------
    _data("1e400", "1e400", "1e400"),
    _data("nan", '{"x": NaN}', "NaN"),
    _data("infinity", "-Infinity", "Infinity"),
    _data("digits", "9" * 5000, "5000 digits"),
    _data("deep", "[" * 3000 + "]" * 3000, "nested deeper"),
    _data("malformed", '{"x": ', "not JSON"),
    _data("file-missing", "@{w}/h/nothing.json", "nothing.json"),
    _data("file-dir", "@{w}/h/dir.json", "dir.json"),
    _data("file-fifo", "@{w}/h/fifo.json", "fifo.json"),
    _data("file-dev-zero", "@/dev/zero", "/dev/zero"),
    _data("file-huge", "@{w}/h/huge.json", "huge.json"),
    _data("file-bad-utf8", "@{w}/h/bad.json", "bad.json"),
    _data("file-loop", "@{w}/h/loop", "loop"),
    _data("file-deep", "@{w}/h/deep3k.json", "deep3k.json"),
    _data("file-1e400", "@{w}/h/inf.json", "inf.json"),
    Case("trigger-unknown-gateway", ("trigger", "zz", "--data", "{}"), "zz"),
    Case("trigger-not-a-gateway", ("trigger", "a", "--data", "{}"), "'a'"),
    Case("trigger-no-data", ("trigger", "g"), "--data"),
    *_root_cases(("trigger", "g", "--data", "{}"), root_flag=True),
    *_manifest_cases(("trigger", "g", "--data", "{}")),
    # -- tick ---------------------------------------------------------------------------
    Case("tick-unknown-node", ("tick", "zz"), "zz"),
    Case("tick-path-node", ("tick", "../etc"), "../etc"),
    *_root_cases(("tick", "a"), root_flag=True),
    *_manifest_cases(("tick", "a")),
    # -- worker -------------------------------------------------------------------------
    Case("worker-no-database-url", ("worker",), "OPENPROSE_POSTGRES_URL"),
    Case("worker-zero-concurrency", ("worker", "--concurrency", "0"), "--concurrency"),
    *_manifest_cases(("worker",)),
    # -- resume -------------------------------------------------------------------------
    Case("resume-not-a-ref", ("resume", "nope"), "nope"),
    Case("resume-outside", ("resume", "/etc"), "/etc"),
    Case("resume-unknown-id", ("resume", "20200101-000000-aaaaaa"), "20200101-000000-aaaaaa"),
    Case("resume-latest-far", ("resume", "latest~99"), "latest~99"),
    Case("resume-latest-huge", ("resume", "latest~999999999999"), "latest~999999999999"),
    *_root_cases(("resume", "latest"), root_flag=True),
    # -- status -------------------------------------------------------------------------
    *_root_cases(("status",)),
    *_toml_cases(("status", ".")),
    *_manifest_cases(("status", ".")),
    Case("status-bad-backend", ("status", ".", "--backend", "nope"), "--backend"),
    Case(
        "status-ledger-is-a-fifo",
        ("status", "."),
        "receipts.jsonl",
        setup=_put("rt/state/world-model/a/receipts.jsonl", kind="fifo"),
    ),
    Case(
        "status-ledger-is-a-dir",
        ("status", "."),
        "receipts.jsonl",
        setup=_put("rt/state/world-model/a/receipts.jsonl", kind="dir"),
    ),
    # -- db -----------------------------------------------------------------------------
    *_root_cases(("db", "prune")),
    *_manifest_cases(("db", "prune", ".")),
    Case("db-prune-bad-backend", ("db", "prune", ".", "--backend", "nope"), "--backend"),
    Case("db-prune-negative-keep", ("db", "prune", ".", "--keep", "-1"), "--keep"),
    Case("db-no-subcommand", ("db", "nope"), "nope"),
    # -- inspect ------------------------------------------------------------------------
    Case(
        "inspect-any-state-md",
        ("inspect", "{w}/h/dir"),
        "dir",
        setup=_put("h/dir/state.md", "run: x\n"),
    ),
    Case(
        "inspect-prose-runs-outside-runs",
        ("inspect", "{w}/h/.prose/other/20260115-143052-a7b3c9"),
        "20260115-143052-a7b3c9",
        setup=_put("h/.prose/other/20260115-143052-a7b3c9/state.md", "run: x\n"),
    ),
    Case("inspect-etc", ("inspect", "../../etc"), "../../etc"),
    Case("inspect-missing-id", ("inspect", "20200101-000000-aaaaaa"), "20200101-000000-aaaaaa"),
    Case("inspect-root-file", ("inspect", "latest", "--root", "{w}/h/afile"), "afile"),
    Case("inspect-root-missing", ("inspect", "latest", "--root", "{w}/h/nothing"), "nothing"),
    *_toml_cases(("inspect", "latest")),
    # -- receipts -----------------------------------------------------------------------
    *_root_cases(("receipts", "list")),
    *_manifest_cases(("receipts", "list", ".")),
    Case("receipts-list-unknown-node", ("receipts", "list", ".", "--node", "zz"), "zz"),
    Case("receipts-list-bad-backend", ("receipts", "list", ".", "--backend", "x"), "--backend"),
    *[
        Case(f"receipts-verify-{name}", ("receipts", "verify", path), says, expect=code)
        for name, path, says, code in [
            ("missing", "{w}/h/nothing", "nothing", 2),
            ("fifo", "{w}/h/fifo", "fifo", 2),
            ("broken-link", "{w}/h/broken", "broken", 2),
            ("loop", "{w}/h/loop", "loop", 2),
            ("empty-dir", "{w}/h/dir", "dir", 2),
            ("deep", "{w}/h/deep.json", "nested deeper", 1),
            ("nan", "{w}/h/nan.json", "NaN", 1),
            ("bad-utf8", "{w}/h/bad.json", "not UTF-8", 1),
        ]
    ],
    Case("receipts-verify-bad-backend", ("receipts", "verify", ".", "--backend", "x"), "--backend"),
    *_toml_cases(("receipts", "verify", ".")),
    # -- install, preflight ---------------------------------------------------------
    *_root_cases(("install",)),
    *_toml_cases(("install",), cwd="ed"),
    *_lock_cases(("install",)),
    *_root_cases(("preflight",)),
    *_toml_cases(("preflight",), cwd="ed"),
    *_lock_cases(("preflight",)),
    Case(
        "preflight-fifo-source",
        ("preflight", "{w}/h/x.prose.md"),
        "x.prose.md",
        setup=_put("h/x.prose.md", kind="fifo"),
    ),
    Case(
        "preflight-bad-utf8-source",
        ("preflight", "{w}/h/x.prose.md"),
        "x.prose.md",
        setup=_put("h/x.prose.md", b"---\nname: \xff\n---\n"),
    ),
    Case("install-update-frozen", ("install", "--update", "--frozen"), "--frozen", cwd="ed"),
    *[
        Case(f"receipts-cost-{name}", ("receipts", "cost", "."), says, setup=setup)
        for name, setup, says in MANIFEST_CASES
    ],
    Case("receipts-cost-root-missing", ("receipts", "cost", "{w}/h/nothing"), "nothing"),
    # -- serve, devtools: refused before anything listens ------------------------------
    *_root_cases(("serve",)),
    *_toml_cases(("serve", ".")),
    *_manifest_cases(("serve", ".")),
    Case("serve-open-bind", ("serve", ".", "--host", "0.0.0.0"), "PROSEC_SERVE_TOKEN"),
    Case("serve-unknown-render", ("serve", ".", "--render", "zz=command:x"), "zz"),
    Case("serve-nan-grace", ("serve", ".", "--grace", "nan"), "--grace"),
    Case("serve-bad-port", ("serve", ".", "--port", "70000"), "--port"),
    *_root_cases(("devtools",)),
    *_manifest_cases(("devtools", ".")),
    Case(
        "devtools-fixture-bad-receipts",
        ("devtools", "{w}/h/fx"),
        "receipts.json",
        setup=lambda w: (
            _put("h/fx/world-models", kind="dir")(w),
            _put("h/fx/receipts.json", "[{}]")(w),
        ),
    ),
    Case(
        "devtools-fixture-nan",
        ("devtools", "{w}/h/fx"),
        "NaN",
        setup=lambda w: (
            _put("h/fx/world-models", kind="dir")(w),
            _put("h/fx/receipts.json", "[NaN]")(w),
        ),
    ),
    # -- test -------------------------------------------------------------------------
    Case("test-missing", ("test", "{w}/h/nothing"), "nothing"),
    Case("test-not-prose", ("test", "{w}/h/afile"), "afile"),
    Case("test-no-tests", ("test", "{w}/h/dir"), "dir"),
    Case("test-replay-without-out", ("test", ".", "--judge-replay"), "--out", cwd="ed"),
    Case("test-bad-format", ("test", "--format", "nope", "."), "nope", cwd="ed"),
    Case("test-zero-jobs", ("test", "--jobs", "0", "."), "--jobs", cwd="ed"),
    Case("test-nan-timeout", ("test", "--timeout", "nan", "."), "--timeout", cwd="ed"),
    Case(
        "test-bad-utf8",
        ("test", "{w}/h/t"),
        "x.prose.md",
        setup=_put("h/t/x.prose.md", b"---\nname: \xff\nkind: test\n---\n"),
    ),
    Case(
        "test-fifo-output",
        ("test", "{w}/h/t", "-o", "{w}/h/fifo"),
        "fifo",
        setup=_put("h/t/x.prose.md", "---\nname: x\nkind: test\nsubject: ghost\n---\n"),
    ),
    # -- upgrade ----------------------------------------------------------------------
    Case("upgrade-missing", ("upgrade", "{w}/h/nothing"), "nothing"),
    Case("upgrade-broken-link", ("upgrade", "{w}/h/broken"), "broken"),
    Case("upgrade-link-loop", ("upgrade", "{w}/h/loop"), "loop"),
    Case("upgrade-fifo", ("upgrade", "{w}/h/fifo"), "fifo"),
    Case("upgrade-not-legacy", ("upgrade", "{w}/h/afile"), "afile", expect=1),
    Case(
        "upgrade-bad-utf8",
        ("upgrade", "{w}/h/p/x.prose"),
        "x.prose",
        expect=1,
        setup=_put("h/p/x.prose", b'input a: "\xff"\n'),
    ),
    Case(
        "upgrade-linked-program",
        ("upgrade", "--dry-run", "{w}/h/p"),
        "x.prose",
        expect=1,
        setup=_put("h/p/x.prose", "/etc/hostname", kind="link"),
    ),
    Case(
        "upgrade-huge-program",
        ("upgrade", "--dry-run", "{w}/h/p"),
        "x.prose",
        expect=1,
        setup=lambda w: (
            _put("h/p", kind="dir")(w),
            os.truncate(_touch(w / "h/p/x.prose"), 300 << 20),
        ),
    ),
    Case(
        "upgrade-state-garbage",
        ("upgrade", "--dry-run", "{w}/h/g"),
        "20200101-000000-aaaaaa",
        expect=1,
        setup=lambda w: (
            _put("h/g/.prose/runs/20200101-000000-aaaaaa/state.md", b"\xff\x00" * 64)(w),
            _put("h/g/.prose/runs/20200101-000000-aaaaaa/program.prose", "/dev/zero", kind="link")(
                w
            ),
        ),
    ),
    Case("unknown-command", ("frobnicate",), "frobnicate"),
]


def _touch(path: Path) -> Path:
    path.write_bytes(b"")
    return path


def test_every_command_is_covered() -> None:
    covered = {case.args[0] for case in CASES}
    assert set(LAZY_COMMANDS) <= covered
    assert {case.args[1] for case in CASES if case.args[0] == "receipts"} >= {
        "list",
        "verify",
        "cost",
    }


def test_case_ids_are_unique() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_hostile_input(case: Case, template: Path, tmp_path: Path) -> None:
    w = tmp_path / "w"
    shutil.copytree(template, w, symlinks=True)
    _hostiles(w / "h")
    if case.setup is not None:
        case.setup(w)
    args = [arg.replace("{w}", str(w)) for arg in case.args]
    env = {**os.environ, "PROSEC_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("PROSEC_DEBUG", None)
    outcome = run_forked(args, cwd=w / case.cwd, env=env, timeout=30)
    report = (
        f"exit {outcome.code}\nstdout:\n{outcome.stdout[-2000:]}\nstderr:\n{outcome.stderr[-2000:]}"
    )
    assert outcome.code != TIMEOUT, report
    assert outcome.code == case.expect, report
    assert "Traceback" not in outcome.stderr and "internal error" not in outcome.stderr, report
    if case.expect == 2:
        errors = [line for line in outcome.stderr.splitlines() if "rror" in line]
        assert errors and case.says in outcome.stderr, report
    elif case.says:
        assert case.says in outcome.stdout + outcome.stderr, report


def test_the_forked_runner_runs_the_real_entry_point(tmp_path: Path) -> None:
    outcome = run_forked(["--version"], cwd=tmp_path)
    assert outcome.code == 0 and outcome.stdout.startswith("prosec")
    outcome = run_forked(["lint", "nothing"], cwd=tmp_path)
    assert outcome.code == 2 and "prosec: error: nothing" in outcome.stderr
