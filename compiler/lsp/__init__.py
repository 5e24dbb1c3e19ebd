"""The language server behind `prosec lsp`: pure feature modules plus one pygls adapter."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .workspace import Analysis, Workspace

__all__ = ["Analysis", "Workspace"]


def __getattr__(name: str) -> Any:
    """The workspace model loads on first use: `prosec lsp` answers `initialize` (lsp/early.py)
    before it imports anything heavier than the standard library."""
    if name in __all__:
        from . import workspace

        return getattr(workspace, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
