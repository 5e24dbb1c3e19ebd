"""Legacy `.prose/` runs (seed 000's file-system state), read completely.

A legacy run folder `.prose/runs/{id}/` holds `program.prose`, `state.md` (the header,
the execution trace as an annotated ```prose block, the active constructs, the index of
bindings and agents, the call stack), `bindings/{name}.md` and `{name}__{execution
id}.md`, `agents/{name}/memory.md` with segments `{name}-NNN.md`, and `imports/{handle}--
{slug}/`, the same layout again for each imported program (recursively). Project agents
live in `.prose/agents/`, user agents in `~/.prose/agents/`.

Everything here is untrusted input: files are read with a size limit, undecodable bytes
are replaced, and a malformed part is reported in `problems` rather than raised.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["LIMIT", "env_names", "legacy_runs", "read_legacy_run", "read_state"]

LIMIT = 4 * 1024 * 1024  # bytes read from any one legacy file
_RUN_ID = re.compile(r"\d{8}-\d{6}-[a-z0-9]{6}")
_ANNOTATION = re.compile(
    r"^(?P<code>.*?)\s+#\s+(?P<note>-->\s*\S.*|<--\s*\S.*|\(complete\)|\[not yet entered\]"
    r"|\[\.\.\.next\.\.\.\])\s*$"
)
_RETRY = re.compile(r"RETRYING \(attempt (\d+)/(\d+)\)")
_CONSTRUCT = re.compile(r"^### (?P<kind>\w[\w ]*?) \(lines? (?P<a>\d+)(?:-(?P<b>\d+))?\)\s*$")
_SEGMENT = re.compile(r"^(?P<agent>.+)-(?P<n>\d{3,})\.md$")
_AGENT = re.compile(r"^agent\s+([A-Za-z_][\w-]*)\s*:\s*(?:#.*)?$")
_CUSTOM = re.compile(r'^\s+persist:\s*"([^"]+)"\s*(?:#.*)?$')


def _read(path: Path) -> str:
    if path.is_symlink():  # untrusted: a link may point anywhere outside the run
        raise ValueError(f"{path}: a symbolic link, not read")
    with open(path, "rb") as handle:
        data = handle.read(LIMIT + 1)
    if len(data) > LIMIT:
        raise ValueError(f"{path}: larger than {LIMIT} bytes")
    return data.decode("utf-8", errors="replace")


def _sections(text: str, level: str) -> dict[str, str]:
    """The text under each heading of one level (`## ` or `### `), by heading."""
    out: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith(level) and not line.startswith(level + "#"):
            if current is not None:
                out[current] = "\n".join(lines)
            current, lines = line[len(level) :].strip(), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        out[current] = "\n".join(lines)
    return out


def _table(text: str) -> list[dict[str, str]]:
    """A markdown table's rows as dicts by header (escaped `\\_` unescaped)."""
    rows = [line.strip() for line in text.splitlines() if line.strip().startswith("|")]
    if len(rows) < 2:
        return []

    def cells(row: str) -> list[str]:
        return [c.strip().replace("\\_", "_") for c in row.strip("|").split("|")]

    header = [h.lower().replace(" ", "_") for h in cells(rows[0])]
    out = []
    for row in rows[2:]:
        values = cells(row)
        out.append(dict(zip(header, values + [""] * (len(header) - len(values)), strict=False)))
    return out


def _note(note: str) -> dict[str, Any]:
    """One trace annotation as data: its status, and the file it wrote or the attempt."""
    note = note.strip()
    if note.startswith("-->"):
        target = note[3:].strip()
        complete = target.endswith("(complete)")
        target = target.removesuffix("(complete)").strip()
        return {"status": "complete" if complete else "written", "wrote": target}
    if note.startswith("<--"):
        retry = _RETRY.search(note)
        if retry:
            return {"status": "retrying", "attempt": int(retry[1]), "of": int(retry[2])}
        return {"status": note[3:].strip().lower()}
    return {
        "(complete)": {"status": "complete"},
        "[not yet entered]": {"status": "not yet entered"},
        "[...next...]": {"status": "next"},
    }[note]


def read_state(text: str) -> dict[str, Any]:
    """`state.md`: header fields, trace, active constructs, index and call stack."""
    header = dict(
        re.findall(r"^(run|program|started|updated): (.+)$", text.split("\n## ")[0], re.M)
    )
    top = _sections(text, "## ")
    trace: list[dict[str, Any]] = []
    block = re.search(r"```prose\n(.*?)\n```", top.get("Execution Trace", ""), re.S)
    for number, line in enumerate(block.group(1).splitlines() if block else [], start=1):
        match = _ANNOTATION.match(line)
        entry: dict[str, Any] = {"line": number, "code": match["code"] if match else line}
        if match:
            entry.update(_note(match["note"]))
        trace.append(entry)
    constructs = []
    for heading, body in _sections(top.get("Active Constructs", ""), "### ").items():
        found = _CONSTRUCT.match("### " + heading)
        items = dict(re.findall(r"^- ([^:]+): (.*)$", body, re.M))
        if found:
            first = int(found["a"])
            constructs.append(
                {
                    "kind": found["kind"].lower(),
                    "lines": [first, int(found["b"] or first)],
                    "items": items,
                }
            )
    index = _sections(top.get("Index", ""), "### ")
    indexed = [
        {**row, "execution_id": _int(row.get("execution_id"))}
        for row in _table(index.get("Bindings", ""))
    ]
    return {
        **header,
        "trace": [e for e in trace if e["code"].strip() or "status" in e],
        "position": [e["line"] for e in trace if e.get("status") in ("executing", "retrying")],
        "constructs": constructs,
        "index": {
            "bindings": indexed,
            "agents": _table(index.get("Agents", "")),
        },
        "call_stack": [
            {
                "execution_id": _int(row.get("execution_id")),
                "block": row.get("block", ""),
                "depth": _int(row.get("depth")),
                "status": row.get("status", ""),
            }
            for row in _table(top.get("Call Stack", ""))
        ],
    }


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


def _binding(path: Path) -> dict[str, Any]:
    text = _read(path)
    head, sep, value = text.partition("\n---\n")
    name, _, scope = path.stem.partition("__")
    kind = re.search(r"^kind: (\w+)", head, re.M)
    execution = re.search(r"^execution_id: (\d+)", head, re.M)
    source = re.search(r"```prose\n(.*?)\n```", head, re.S)
    return {
        "name": name,
        "kind": kind[1] if kind else None,
        "execution_id": int(execution[1]) if execution else _int(scope),
        "source": source[1] if source else None,
        "value": value.strip("\n") if sep else "",
        "path": f"bindings/{path.name}",
    }


def _agent(folder: Path, scope: str, name: str | None = None) -> dict[str, Any]:
    memory = folder / "memory.md"
    segments: list[dict[str, Any]] = []
    for item in sorted(folder.glob("*.md")):
        found = _SEGMENT.match(item.name)
        if not found or found["agent"] != (name or folder.name):
            continue
        text = _read(item)
        stamp = re.search(r"^timestamp: (.+)$", text, re.M)
        prompt = re.search(r'^prompt: "?(.*?)"?$', text, re.M)
        summary = text.partition("## Summary")[2].strip()
        segments.append(
            {
                "number": int(found["n"]),
                "timestamp": stamp[1].strip() if stamp else None,
                "prompt": prompt[1] if prompt else None,
                "summary": summary,
            }
        )
    segments.sort(key=lambda s: int(s["number"]))  # 999 < 1000 (four digits)
    return {
        "name": name or folder.name,
        "scope": scope,
        "memory": _read(memory) if memory.is_file() else None,
        "segments": segments,
    }


def _agents(folder: Path, scope: str) -> list[dict[str, Any]]:
    if not folder.is_dir():
        return []
    return [_agent(p, scope) for p in sorted(folder.iterdir()) if p.is_dir()]


def _custom_agents(program: Path, root: Path, problems: list[str]) -> list[dict[str, Any]]:
    """The agents the run's program declares with `persist: "path"` (seed 000's custom
    scope: memory in that folder, relative to the project), read as the others are;
    a path that leaves the project (or is a link) is a problem, never read."""
    try:
        text = _read(program) if program.is_file() else ""
    except (OSError, ValueError):
        return []
    declared: list[tuple[str, str]] = []
    agent = None
    for line in text.splitlines():
        found = _AGENT.match(line)
        if found:
            agent = found[1]
            continue
        if line.strip() and not line[:1].isspace():
            agent = None
        persist = _CUSTOM.match(line)
        if agent is not None and persist:
            declared.append((agent, persist[1]))
    out = []
    top = root.resolve()
    for name, where in declared:
        folder = root.joinpath(*where.split("/"))
        inside = folder.resolve().is_relative_to(top) and not folder.is_symlink()
        if not inside:
            problems.append(f"{program}: agent {name}'s memory {where!r} is outside the project")
        elif folder.is_dir():
            out.append({**_agent(folder, "custom", name), "path": where})
    return out


def read_legacy_run(
    path: Path, *, project: Path | None = None, home: Path | None = None, depth: int = 0
) -> dict[str, Any]:
    """Everything seed 000 keeps for one run folder (or an import folder inside one):
    `project` is the `.prose/` folder (project agents), `home` the user's `~/.prose/`."""
    problems: list[str] = []
    try:
        state = read_state(_read(path / "state.md"))
    except (OSError, ValueError) as exc:
        problems.append(f"{path / 'state.md'}: {exc}")
        state = {"trace": [], "position": [], "constructs": [], "index": {}, "call_stack": []}
    bindings = []
    for item in sorted((path / "bindings").glob("*.md")) if (path / "bindings").is_dir() else []:
        try:
            bindings.append(_binding(item))
        except (OSError, ValueError) as exc:
            problems.append(f"{item}: {exc}")
    agents = _agents(path / "agents", "execution")
    if depth == 0:
        agents += _agents(project / "agents", "project") if project else []
        agents += _agents(home / "agents", "user") if home else []
        if project is not None:
            agents += _custom_agents(path / "program.prose", project.parent, problems)
    imports = []
    if (path / "imports").is_dir():
        for item in sorted((path / "imports").iterdir()):
            if not item.is_dir() or depth >= 16:
                continue
            handle, _, slug = item.name.partition("--")
            nested = read_legacy_run(item, depth=depth + 1)
            problems += nested.pop("problems")
            imports.append(
                {"handle": handle, "slug": slug, "path": f"imports/{item.name}", **nested}
            )
    for row in state["index"].get("bindings", []):
        if row.get("path") and not (path / row["path"]).is_file():
            problems.append(f"{path / 'state.md'}: the index names {row['path']}, which is missing")
    statuses = {e.get("status") for e in state["trace"]}
    ended = not statuses & {"executing", "retrying", "not yet entered", "next"}
    return {
        **state,
        "status": "complete" if ended else "interrupted",
        "program_source": (path / "program.prose").is_file(),
        "bindings": bindings,
        "agents": agents,
        "imports": imports,
        "problems": problems,
    }


def env_names(prose: Path) -> list[str]:
    """The setting names of `.prose/.env` (`NAME=value` lines), never their values: the
    file may hold tokens, so nothing but the names leaves this function."""
    path = prose / ".env"
    if not path.is_file():
        return []
    try:
        text = _read(path)
    except (OSError, ValueError):
        return []
    names = []
    for line in text.splitlines():
        name, sep, _ = line.strip().removeprefix("export ").partition("=")
        if sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name.strip()):
            names.append(name.strip())
    return sorted(set(names))


def legacy_runs(root: Path) -> list[Path]:
    """ROOT/.prose/runs/{id}/ folders with a state.md, oldest first (ids sort by time)."""
    runs = root / ".prose" / "runs"
    if not runs.is_dir():
        return []
    return sorted(
        p for p in runs.iterdir() if _RUN_ID.fullmatch(p.name) and (p / "state.md").is_file()
    )
