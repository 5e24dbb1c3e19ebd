"""prosec.compiler: discover, parse, check, wire and emit OpenProse contract Markdown."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("prosec")
except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
    __version__ = "0.0.0"

__all__ = ["__version__", "compile_project"]


def __getattr__(name: str) -> object:
    """`compile_project` is imported on first use, so `prosec lint` stays light."""
    if name == "compile_project":
        from .pipeline import compile_project

        return compile_project
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
