"""Small OpenProse projects on disk for the language-server unit tests."""

from __future__ import annotations

from pathlib import Path

from prosec.compiler.lsp.disk import LocalDisk
from prosec.compiler.lsp.workspace import Analysis, Wire, Workspace


def node(name: str, *, kind: str = "responsibility", body: str = "", id_: str | None = None) -> str:
    ident = f"id: {id_}\n" if id_ else ""
    return f"---\nname: {name}\nkind: {kind}\n{ident}---\n\n# {name.title()}\n{body}"


def write(root: Path, files: dict[str, str], toml: str | None = "") -> Path:
    """Write `files` under `root` (with a prose.toml unless `toml` is None)."""
    root.mkdir(parents=True, exist_ok=True)
    if toml is not None:
        (root / "prose.toml").write_text(toml, encoding="utf-8")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root.resolve()


def analyse(root: Path, wire: Wire | None = None) -> tuple[Workspace, Analysis]:
    workspace = Workspace(LocalDisk(), wire)
    return workspace, workspace.analysis(root)
