"""prosec.compiler: discover, parse, check, wire and emit OpenProse contract Markdown."""

# The single source of the version: pyproject.toml reads it (`[tool.setuptools.dynamic]`),
# so `prosec --version` needs no importlib.metadata lookup at start-up.
__version__ = "0.1.0"

__all__ = ["__version__"]
