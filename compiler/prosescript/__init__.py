"""ProseScript, the language of ```prose fences: grammar, parser, typed IR and static checks.

Importing the package is cheap: `check` (the lint rule) loads the parser (lark) and the
script IR only when a contract has a ```prose fence to read.
"""

from .rule import check, prose_fences
from .scope import PROSE_INFOS, file_key

__all__ = ["PROSE_INFOS", "check", "file_key", "prose_fences"]
