"""prosec.compiler: discover, parse, check, wire and emit OpenProse contract Markdown."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("prosec")
except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
    __version__ = "0.0.0"

__all__ = ["__version__"]
