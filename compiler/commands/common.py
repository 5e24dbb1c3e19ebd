"""Options and helpers shared by the CLI subcommands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .. import config as config_mod
from ..diagnostics import CODES, code_families
from .errors import user_errors
from .inputs import require_dir

F = TypeVar("F", bound=Callable[..., Any])


def _split_codes(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...] | None:
    if not values:
        return None
    codes = tuple(code.strip() for value in values for code in value.split(",") if code.strip())
    families = code_families()
    for code in codes:
        # the same rule as prose.toml's [lint] select / ignore (config.schema.json)
        if code not in CODES and code not in families:
            raise click.BadParameter(
                f"{code!r} is not a diagnostic code or a `family_*` prefix of codes",
                ctx=ctx,
                param=param,
            )
    return codes


def codes_option(name: str, help_text: str) -> Callable[[F], F]:
    return click.option(name, multiple=True, metavar="CODES", callback=_split_codes, help=help_text)


def load_config(start: Path) -> config_mod.Config:
    """The project config for `start` (the whole prose.toml checked), or exit 2 naming the
    file, each bad key and its line."""
    with user_errors():
        config = config_mod.load(start if start.exists() else Path.cwd())
    return config


def system_host(root: Path, config: config_mod.Config) -> Any:
    """The real host for tool and skill lookups, from this process's environment."""
    import os

    from ..host import SystemHost

    return SystemHost(
        root=config.root or root,
        path_env=os.environ.get("PATH"),
        home=Path.home(),
        registries=config.mcp_registries,
        skill_paths=config.skill_paths,
    )


def project_config(
    root: Path,
    *,
    strict: bool | None = None,
    offline_tools: bool | None = None,
    mcp_registries: tuple[str, ...] = (),
    skill_paths: tuple[str, ...] = (),
    select: tuple[str, ...] | None = None,
    ignore: tuple[str, ...] | None = None,
) -> config_mod.Config:
    """The config of the project at `root` with command-line flags applied (flags win)."""
    require_dir(root)
    config = load_config(root)
    return config.with_overrides(
        strict=strict,
        offline_tools=offline_tools,
        mcp_registries=mcp_registries or None,
        skill_paths=skill_paths or None,
        select=select,
        ignore=ignore,
    )


def strict_option(function: F) -> F:
    return click.option(
        "--strict/--no-strict",
        default=None,
        help="Treat wiring warnings (ambiguous, unsatisfied) and missing ids as errors.",
    )(function)


def offline_option(function: F) -> F:
    return click.option(
        "--offline-tools",
        is_flag=True,
        default=None,
        help="Skip the PATH, MCP registry and skill lookups (for CI machines).",
    )(function)


def cache_base() -> Path:
    """Where caches live: $PROSEC_CACHE_DIR, else the user cache directory (what
    `prosec build` uses too: one folder per project holds its build and lint caches)."""
    import os

    override = os.environ.get("PROSEC_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("prosec"))
