"""The language server behind `prosec lsp`: pure feature modules plus one pygls adapter."""

from .workspace import Analysis, Workspace

__all__ = ["Analysis", "Workspace"]
