"""The environment of a render process: an allow-list, never the runner's whole environment.

The runner's environment may hold secrets a render has no business seeing (the
PostgreSQL URL, cloud tokens), and a render that logs its environment would write them
into `__render.log`. A render process gets only:

1. the runner's variables named in `ALLOWED` or matching `ALLOWED_PATTERNS` (paths,
   locale, terminal: what programs need to start, nothing that authenticates);
2. the runner's variables named by the binding's `pass_env` (names, or patterns with
   `*`), e.g. `pass_env = ["MY_API_KEY", "AWS_*"]`;
3. the binding's `env` table (literal values);
4. the `PROSEC_*` context of the render (see command.py).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence

from . import Binding, BindingError

__all__ = ["ALLOWED", "ALLOWED_PATTERNS", "pass_env_of", "scrubbed"]

ALLOWED = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "TERM",
        "COLORTERM",
        "NO_COLOR",
        "PYTHONPATH",
        "VIRTUAL_ENV",
        "SYSTEMROOT",
        "COMSPEC",
        "PATHEXT",
    }
)
ALLOWED_PATTERNS = ("LC_*", "XDG_*")

_NAME = re.compile(r"^[A-Za-z0-9_*]+$")


def pass_env_of(binding: Binding) -> tuple[str, ...]:
    """The binding's `pass_env`: variable names or `*` patterns (BindingError if bad)."""
    value = binding.options.get("pass_env", [])
    if not isinstance(value, list) or not all(
        isinstance(item, str) and _NAME.match(item) for item in value
    ):
        raise BindingError(
            f"{binding.origin}: `pass_env` must be a list of variable names "
            '(letters, digits, `_`, and `*` as a wildcard), e.g. ["MY_API_KEY"]'
        )
    return tuple(value)


def scrubbed(source: Mapping[str, str], pass_env: Sequence[str] = ()) -> dict[str, str]:
    """The variables of `source` a render may see (steps 1 and 2 above)."""
    patterns = (*ALLOWED_PATTERNS, *pass_env)
    return {
        name: value
        for name, value in source.items()
        if name in ALLOWED or any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
    }
