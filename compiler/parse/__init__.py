"""Parsing: source text → typed IR (markdown-it and YAML stay inside this package; Lark in
`prosec.compiler.prosescript`)."""

from .markdown import parse_source

__all__ = ["parse_source"]
