"""Find, plan and run `kind: test` contracts (`prosec test` and the pytest plugin).

Each test file is compiled with its project (the project's build sources plus the test
files, through the one PIPELINE, whose `tests` pass plans every test); the plans'
diagnostics come back as values, and a plan with an error never runs. Running is the
runtime's (`prosec.runtime.testing`): each test in a folder of its own under `out`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prosec.runtime.config import load_config as load_run_config
from prosec.runtime.testing import Judge, Judgements, TestResult, run_test
from prosec.runtime.testing.runner import run_function_test

from . import diagnostics as diag
from .config import load as load_config
from .diagnostics import Diagnostic
from .discover import SUFFIX, DiscoveryError, discover, project_key
from .ir import ContractKind
from .lint import read_source
from .pipeline import compile_texts, importer, read_sources

__all__ = ["PlannedTest", "Suite", "find_tests", "plan_suite", "run_suite"]

_KIND_TEST = re.compile(r"^kind:\s*test\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedTest:
    """One test to run: its project, display path, and plan document (or why not)."""

    name: str
    path: str  # display path of the test file
    line: int
    subject: str
    root: Path
    document: dict[str, Any] | None = None
    refused: str = ""  # why it cannot run (a function subject, a build that failed)


@dataclass(slots=True, kw_only=True)
class Suite:
    tests: list[PlannedTest] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def has_errors(self) -> bool:
        return diag.has_errors(self.diagnostics)


def find_tests(paths: Sequence[Path], *, recursive: bool = False) -> list[Path]:
    """The `kind: test` files among `paths`: a file as given, a directory's own
    `*.prose.md` files (all below it with `recursive`). DiscoveryError for a missing
    path or a file that is not `.prose.md`."""
    found: list[Path] = []
    for path in paths:
        if path.is_file():
            if not path.name.endswith(SUFFIX):
                raise DiscoveryError(f"{path}: not a `{SUFFIX}` file")
            found.append(path)
            continue
        if not path.is_dir():
            raise DiscoveryError(f"{path}: no such file or directory")
        if recursive:
            candidates = [ref.path for ref in discover([path], Path.cwd())]
        else:
            candidates = sorted(p for p in path.glob(f"*{SUFFIX}") if p.is_file())
        found.extend(p for p in candidates if _is_test(p))
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(path.resolve(), path)
    return sorted(unique.values())


def _is_test(path: Path) -> bool:
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return False
    front, sep, _ = head.removeprefix("---").partition("\n---")
    return bool(sep) and head.startswith("---") and _KIND_TEST.search(front) is not None


def plan_suite(files: Sequence[Path], base: Path | None = None) -> Suite:
    """Compile each test with its project; a plan per test, and every diagnostic that
    keeps one from running (the test files' own, and errors of the project build)."""
    from .codegen.test_plan import plan_document

    base = base or Path.cwd()
    suite = Suite()
    groups: dict[Path, list[Path]] = {}
    for path in files:
        groups.setdefault(project_key(path), []).append(path)
    for root, members in sorted(groups.items()):
        config = load_config(root)
        texts, unreadable = read_sources(root, config)
        known = {display for display, _ in texts}
        tests: dict[str, Path] = {}
        for path in members:
            display = path.resolve().relative_to(root).as_posix()
            tests[display] = path
            if display in known:
                continue
            text, problem = read_source_at(path, display)
            if problem is not None:
                unreadable.append(problem)
            elif text is not None:
                texts.append((display, text))
        result = compile_texts(texts, config, extra=unreadable, imports=importer(root))
        unit = result.unit
        shown = {display: _display(path, base) for display, path in tests.items()}
        build_errors = [
            d
            for d in unit.diagnostics
            if d.severity is diag.Severity.ERROR and d.span.path not in tests
        ]
        for item in unit.diagnostics:
            if item.span.path in tests or item.severity is diag.Severity.ERROR:
                suite.diagnostics.append(_relocated(item, root, shown, base))
        plans = {p.path: p for p in unit.tests}
        for contract in unit.project.contracts:
            if contract.path not in tests or contract.kind != ContractKind.TEST:
                continue
            planned = PlannedTest(
                name=contract.name,
                path=shown[contract.path],
                line=contract.span.line,
                subject=contract.subject or "",
                root=root,
            )
            plan = plans.get(contract.path) if contract.subject else None
            if plan is not None and plan.name == contract.name and unit.intent and not build_errors:
                vm = _vm_section(unit, plan.subject) if plan.function else None
                planned = _with(planned, document=plan_document(plan, unit.intent, vm))
            else:
                planned = _with(planned, refused=_refusal(contract.subject, unit, build_errors))
            suite.tests.append(planned)
    suite.diagnostics.sort(key=Diagnostic.sort_key)
    return suite


def _vm_section(unit: Any, subject: str) -> dict[str, Any]:
    from .codegen.vm import vm_section

    contract = next(c for c in unit.project.contracts if c.name == subject)
    return vm_section(unit.project, contract.path, subject)


def read_source_at(path: Path, display: str) -> tuple[str | None, Diagnostic | None]:
    from .discover import SourceRef

    return read_source(SourceRef(display, path))


def _refusal(subject: str | None, unit: Any, build_errors: Sequence[Diagnostic]) -> str:
    if not subject:
        return "the test has no `subject:`"
    if build_errors:
        return f"the project does not build ({len(build_errors)} errors): `prosec build` says why"
    name = subject.rsplit("/", 1)[-1].removesuffix(SUFFIX)
    contract = next((c for c in unit.project.contracts if c.name == name), None)
    if contract is None:
        return f"the subject `{subject}` names no contract of this project"
    if contract.kind not in (ContractKind.RESPONSIBILITY,):
        return f"the subject `{name}` is a {contract.kind}, not a responsibility or function"
    return f"the subject `{name}` is not a node of the compiled intent (is it under the build's sources?)"


def _with(planned: PlannedTest, **changes: Any) -> PlannedTest:
    from dataclasses import replace

    return replace(planned, **changes)


def _display(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def _relocated(item: Diagnostic, root: Path, shown: dict[str, str], base: Path) -> Diagnostic:
    from dataclasses import replace

    path = shown.get(item.span.path) or _display(root / item.span.path, base)
    return replace(item, span=replace(item.span, path=path))


def output_folder(out: Path, test: PlannedTest) -> Path:
    """Where one test's root lives: `OUT/<test name>` (names are unique per project; the
    project's folder name is added when tests of several projects share a name)."""
    return out / test.name


def replayed(folder: Path) -> Judgements:
    """The verdicts the last run of a test recorded (its newest run's judgements.json)."""
    runs = sorted((folder / "runs").glob("*/judgements.json")) if folder.is_dir() else []
    return Judgements.load(runs[-1]) if runs else Judgements()


def run_suite(
    suite: Suite,
    out: Path,
    *,
    jobs: int = 1,
    timeout: float | None = None,
    judge_replay: bool = False,
    env: dict[str, str] | None = None,
    on_result: Callable[[TestResult], None] | None = None,
) -> list[TestResult]:
    """Run every planned test (none stops the others), `jobs` at a time; results in
    the suite's order. A refused test is an `error` result that never ran."""
    folders: dict[str, int] = {}
    for test in suite.tests:
        folders[test.name] = folders.get(test.name, 0) + 1

    def one(test: PlannedTest) -> TestResult:
        folder = output_folder(out, test)
        if folders[test.name] > 1:
            folder = out / f"{test.root.name}-{test.name}"
        if test.document is None:
            result = TestResult(name=test.name, path=test.path, subject=test.subject)
            result.error = test.refused
        else:
            config = load_run_config(test.root)
            judge = Judge.from_config(config.judge, test.root) if config.judge else None
            replay = replayed(folder) if judge_replay else None
            runner = run_function_test if test.document.get("kind") == "function" else run_test
            result = runner(
                test.document,
                project_root=test.root,
                config=config,
                out=folder,
                judge=judge,
                replay=replay,
                timeout=timeout,
                env=env,
            )
            result.path = test.path
        if on_result is not None:
            on_result(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, suite.tests))


def planned_names(tests: Iterable[PlannedTest]) -> list[str]:
    return [t.name for t in tests]
