"""Fixtures of the release tests: a small monorepo in a temporary folder, a dist of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_repo import PACKAGES, make_sdist, make_wheel, write_package
from monorepo import Package, load_packages


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A monorepo of four packages: tocha-core <- tocha-autograd <- tocha-nn, tocha-mp."""
    root = tmp_path / "repo"
    for folder, (name, module, requires) in PACKAGES.items():
        write_package(root, folder, name, module, requires)
    return root


@pytest.fixture
def packages(repo: Path) -> list[Package]:
    """The packages of `repo`, in dependency order."""
    return load_packages(repo)


@pytest.fixture
def dist(tmp_path: Path, packages: list[Package]) -> Path:
    """A dist folder with a complete wheel and sdist of every package."""
    folder = tmp_path / "dist"
    for package in packages:
        make_wheel(folder, package)
        make_sdist(folder, package)
    return folder
