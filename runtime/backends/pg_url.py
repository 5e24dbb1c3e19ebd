"""The PostgreSQL connection string: where it is looked up (ROOT/.env, the environment,
DATABASE_URL) and how it is kept out of every message (it is an opaque capability)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["URL_VARIABLES", "USER_URL_VARIABLE", "find_url", "redact"]

URL_VARIABLES = ("OPENPROSE_POSTGRES_URL", "DATABASE_URL")
USER_URL_VARIABLE = "OPENPROSE_POSTGRES_USER_URL"


def find_url(root: Path, env: Mapping[str, str]) -> tuple[str, str] | None:
    """(variable name, URL) by the seed's precedence: ROOT/.env, environment, DATABASE_URL."""
    from ..project_toml import load_dotenv

    value = load_dotenv(root).get("OPENPROSE_POSTGRES_URL")
    if value:
        return "OPENPROSE_POSTGRES_URL", value
    for name in URL_VARIABLES:
        if env.get(name):
            return name, env[name]
    return None


def redact(message: str, url: str) -> str:
    """Remove the URL and its secret parts (password, user, whole authority) from text."""
    secrets = {url}
    match = re.match(r"^[a-z]+://(?P<auth>[^@/]*)@", url)
    if match:
        auth = match.group("auth")
        secrets.add(auth)
        secrets.update(part for part in auth.split(":") if len(part) >= 3)
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            message = message.replace(secret, "***")
    return message
