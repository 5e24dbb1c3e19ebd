"""Parsing: source text → typed IR (markdown-it, YAML and Lark stay inside this package)."""

from .markdown import parse_source

__all__ = ["parse_source"]
