"""`prosec upgrade`'s plan: what migrates a legacy program or `.prose/` state tree.

Each change is planned before anything is written, so `--dry-run` lists exactly what
an upgrade would do:

| legacy | current |
|---|---|
| `x.prose` | `x.prose.md` beside it (compiler/legacy.py), then `x.prose` removed |
| `.prose/.env` | `<root>/.env` (its setting names listed, never the values) |
| `.prose/agents/{name}/` | `<root>/state/agents/{name}/` |
| `.prose/runs/{id}/` | `<root>/runs/{id}/`, a VM run adopted with the journal of what it finished; the legacy folder kept whole in it as `legacy/` |
| `~/.prose/` (user scope: named as a PATH, or with no PATH) | the user root (`$OPENPROSE_USER_ROOT`, else `~/.agents/prose/`) the same way: `agents/{name}/` to `state/agents/{name}/` |

`<root>` is the folder holding `.prose/`. Every step is one atomic write or rename;
a step that would overwrite something is refused (an error, the rest still done), and a
step an interrupted upgrade already did is recognised, so running it again finishes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .discover import LEGACY_SUFFIX, SKIPPED_DIRS

__all__ = ["Change", "Plan", "plan_upgrade"]


@dataclass(slots=True)
class Change:
    action: str  # write | remove | move | adopt
    path: Path
    target: Path | None
    detail: str
    apply: Callable[[], None] = field(repr=False)

    def as_json(self, shown: Callable[[Path], str]) -> dict[str, Any]:
        return {
            "action": self.action,
            "path": shown(self.path),
            "to": shown(self.target) if self.target is not None else None,
            "detail": self.detail,
        }


@dataclass(slots=True)
class Plan:
    changes: list[Change] = field(default_factory=list)
    errors: list[tuple[Path, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _programs(folder: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        found += [Path(dirpath) / n for n in sorted(filenames) if n.endswith(LEGACY_SUFFIX)]
    return found


def plan_upgrade(
    paths: list[Path], home: Path, *, user: bool = False, env: Mapping[str, str] | None = None
) -> Plan:
    """Every change that migrates `paths` (legacy files, folders holding them or a
    `.prose/` tree, `.prose/` folders themselves). `home` is the user's home: a `.prose/`
    there (seed 000's user scope, `~/.prose/agents/`) migrates to the user root
    (`$OPENPROSE_USER_ROOT` in `env`, else `home/.agents/prose/`); with `user` it is
    migrated though no path names it (`prosec upgrade` with no PATH)."""
    plan = Plan()
    at_home = home / ".prose"
    named = {p.resolve() for p in paths} | {(p / ".prose").resolve() for p in paths}
    if at_home.is_dir() and not at_home.is_symlink() and at_home.resolve() not in named:
        if user:
            paths = [*paths, at_home]
        else:
            plan.notes.append(
                f"{at_home} (user-scope agent memory) is left as it is when PATHs are "
                f"given: `prosec upgrade` with no PATH, or `prosec upgrade {at_home}`, "
                "migrates it"
            )
    for path in paths:
        if path.is_file() or path.is_symlink():
            if not path.name.endswith(LEGACY_SUFFIX):
                plan.errors.append((path, "not a legacy `.prose` program or folder"))
                continue
            _program(plan, path)
        elif path.name == ".prose" and path.is_dir():
            _tree(plan, path, home, env)
        else:
            for program in _programs(path):
                _program(plan, program)
            if (path / ".prose").is_dir():
                _tree(plan, path / ".prose", home, env)
    return plan


def _program(plan: Plan, path: Path) -> None:
    from prosec.runtime.fsio import atomic_write_text

    from .legacy import convert
    from .lint import SOURCE_LIMIT

    target = path.with_name(path.name + ".md")
    if path.is_symlink() or not path.is_file():
        plan.errors.append((path, "not a regular file (a link or a special file): left as it is"))
        return
    try:
        if path.stat().st_size > SOURCE_LIMIT:
            raise ValueError(f"larger than {SOURCE_LIMIT} bytes")
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        plan.errors.append((path, f"cannot be read: {exc}"))
        return
    form = convert(text, path.name)
    plan.notes += form.notes
    done = False
    if target.exists():
        try:
            done = target.read_text(encoding="utf-8") == form.markdown
        except (OSError, UnicodeDecodeError):
            done = False
        if not done:
            plan.errors.append(
                (path, f"{target.name} exists and differs: left both as they are (merge by hand)")
            )
            return
    counts = f"{len(form.inputs)} parameter(s), {len(form.outputs) or 'no'} output(s)"
    if not done:
        plan.changes.append(
            Change(
                "write",
                target,
                None,
                f"kind: function `{form.name}` from {path.name} ({counts})",
                lambda: atomic_write_text(target, form.markdown),
            )
        )
    plan.changes.append(
        Change("remove", path, None, f"migrated to {target.name}", lambda: _unlink(path))
    )


def _unlink(path: Path) -> None:
    from prosec.runtime.fsio import fsync_dir

    path.unlink()
    fsync_dir(path.parent)


def _move(source: Path, target: Path) -> Callable[[], None]:
    def run() -> None:
        from prosec.runtime.fsio import fsync_dir

        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():  # checked again: something appeared since the plan
            raise FileExistsError(f"{target} exists")
        os.rename(source, target)
        fsync_dir(target.parent)
        fsync_dir(source.parent)

    return run


def _tree(plan: Plan, prose: Path, home: Path, environ: Mapping[str, str] | None) -> None:
    from prosec.runtime.agents import USER_ROOT_VARIABLE
    from prosec.runtime.legacy import env_names, legacy_runs

    at_home = prose.resolve().parent == home.resolve()
    root = prose.parent
    if at_home:  # the user root as the runtime finds it (runtime/agents.py user_root)
        variable = (os.environ if environ is None else environ).get(USER_ROOT_VARIABLE)
        root = Path(variable).expanduser() if variable else home / ".agents" / "prose"
    env = prose / ".env"
    if env.is_file() and not env.is_symlink():
        if (root / ".env").exists():
            plan.errors.append((env, f"{root / '.env'} exists: merge the settings by hand"))
        else:
            names = ", ".join(env_names(prose)) or "no settings"
            plan.changes.append(
                Change("move", env, root / ".env", f"sets {names}", _move(env, root / ".env"))
            )
    agents = prose / "agents"
    for folder in sorted(agents.iterdir()) if agents.is_dir() else []:
        if not folder.is_dir() or folder.is_symlink():
            continue
        target = root / "state" / "agents" / folder.name
        if target.exists():
            plan.errors.append(
                (
                    folder,
                    f"{target} exists (agent {folder.name}'s memory in the current layout, "
                    "kept since a run used it): both left as they are; merge them by hand",
                )
            )
            continue
        count = len(list(folder.glob(f"{folder.name}-*.md")))
        scope = "user-scope " if at_home else ""
        plan.changes.append(
            Change(
                "move",
                folder,
                target,
                f"{scope}agent {folder.name}'s memory, {count} segment(s)",
                _move(folder, target),
            )
        )
    for run in legacy_runs(prose.parent):
        _run(plan, run, root)
    plan.changes.append(
        Change("remove", prose, None, "when nothing is left in it", lambda: _prune(prose))
    )


def _prune(prose: Path) -> None:
    """Remove `.prose/` and its `runs/` and `agents/` when they are empty (else keep)."""
    for folder in (prose / "runs", prose / "agents", prose):
        try:
            folder.rmdir()
        except OSError:
            continue


def _run(plan: Plan, folder: Path, root: Path) -> None:
    """A legacy run adopted as runs/{id}/, then moved into it as legacy/."""
    from prosec.runtime.inspection import inspect_run
    from prosec.runtime.userjson import loads
    from prosec.runtime.vm.legacy_adopt import adopt_legacy, legacy_seed

    from .legacy_compile import LegacyProgramError, compile_legacy

    current = root / "runs" / folder.name
    kept = current / "legacy"
    if current.exists():
        info: Any = None
        with contextlib.suppress(OSError, ValueError):
            info = loads((current / "run.json").read_bytes(), source=str(current))
        ours = isinstance(info, dict) and info.get("legacy_run") == _relative(folder, root)
        if not ours or kept.exists():
            plan.errors.append((folder, f"{current} exists: left as it is"))
            return
        plan.changes.append(
            Change("move", folder, kept, "the legacy files, kept whole", _move(folder, kept))
        )
        return
    data = inspect_run(folder)
    try:
        raw, compiled, origin = compile_legacy(root, folder)
    except LegacyProgramError as exc:
        lines = exc.report.strip().splitlines()
        first = next((line for line in lines if " error " in line), lines[0] if lines else "")
        detail = f"; {first}" if first else ""  # the first error, not a warning before it
        plan.errors.append((folder, f"{exc}{detail}: left as it is"))
        return
    seed = legacy_seed(root.resolve(), raw, data, compiled)
    nested = ""
    if seed.nested:  # a half-done import continues as a nested run of its own
        inner = sum(len(below.steps) for _, _, _, below in seed.nested)
        nested = f" (and {inner} in {len(seed.nested)} half-done import(s))"

    def adopt() -> None:
        adopt_legacy(
            root.resolve(),
            raw,
            folder.resolve(),
            data,
            compiled=compiled,
            origin=origin,
            backend="filesystem",
            seed=seed,
        )

    plan.changes.append(
        Change(
            "adopt",
            folder,
            current,
            f"{data['status']} run of {origin}: {len(seed.steps)} finished step(s) journaled{nested}"
            + ("; `prosec resume` continues it" if data["status"] != "complete" else ""),
            adopt,
        )
    )
    plan.changes.append(
        Change("move", folder, kept, "the legacy files, kept whole", _move(folder, kept))
    )


def _relative(folder: Path, root: Path) -> str:
    try:
        return folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return folder.name
