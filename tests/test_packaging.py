"""Every Python package in the source tree ships: pyproject.toml lists its packages by
hand (the tree maps compiler/ to prosec.compiler), so a new subpackage must join the list."""

from __future__ import annotations

import tomllib

from .conftest import REPO

ROOTS = {"compiler": "prosec.compiler", "runtime": "prosec.runtime", "schemas": "prosec.schemas"}


def _packages_on_disk() -> set[str]:
    found: set[str] = set()
    for folder, dotted in ROOTS.items():
        for init in (REPO / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(REPO / folder).parts
            found.add(".".join((dotted, *relative)))
    return found


def test_every_package_in_the_tree_is_listed_in_pyproject() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    assert _packages_on_disk() - listed == set()
    assert listed - _packages_on_disk() == set()


def test_package_data_names_only_listed_packages() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    assert set(config["tool"]["setuptools"]["package-data"]) <= listed
