"""prosec.compiler: discover, parse, check, wire and emit OpenProse contract Markdown."""

# The single source of the version: pyproject.toml reads it (`[tool.setuptools.dynamic]`),
# so `prosec --version` needs no importlib.metadata lookup at start-up.
__version__ = "0.1.0"

__all__ = ["__version__", "compile_project"]


def __getattr__(name: str) -> object:
    """`compile_project` is imported on first use, so `prosec lint` stays light."""
    if name == "compile_project":
        from .pipeline import compile_project

        return compile_project
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
