"""The packages of the monorepo as the release scripts see them (scripts/bump.py, release.py).

Each folder ``packages/<folder>`` with a ``pyproject.toml`` is one distribution. Its version
lives in the file named by ``[tool.hatch.version] path`` (``__version__ = "0.1.0"``), and the
folder holding that file is the part of the ``tocha`` namespace it owns (``tocha/nn/``;
``tocha/`` for tocha-core). A dependency on a sibling is a compatible range ``>=A,<B``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the backport that pip, pytest and hatchling use there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
VERSION_LINE = re.compile(r'^__version__ = "([^"]+)"$', re.M)


class ReleaseError(Exception):
    """A refusal of the release scripts; its message says what is wrong and what to do."""


@dataclass(frozen=True)
class Package:
    """One distribution of the monorepo, read from its folder."""

    folder: str
    path: Path
    name: str
    version: Version
    version_file: Path
    requires: tuple[str, ...]
    import_root: str
    entry_points: dict[str, dict[str, str]]
    # Further parts of the namespace the package owns beside `import_root` (tocha-fx owns
    # tocha/jit/ and tocha/export/ too), from ``[tool.tocha] also-owns`` in its pyproject.
    other_roots: tuple[str, ...] = ()

    @property
    def import_roots(self) -> tuple[str, ...]:
        """Every part of the namespace the package's wheel may hold."""
        return (self.import_root, *self.other_roots)

    @property
    def key(self) -> str:
        """The canonical distribution name (``tocha-core``), as indexes spell it."""
        return canonicalize_name(self.name)

    def siblings(self, packages: list[Package]) -> list[Requirement]:
        """This package's requirements on other packages of the monorepo."""
        keys = {p.key for p in packages}
        reqs = (Requirement(r) for r in self.requires)
        return [r for r in reqs if canonicalize_name(r.name) in keys]


def read_version(version_file: Path) -> Version:
    """The version in a ``_version.py`` file."""
    found = VERSION_LINE.findall(version_file.read_text())
    if len(found) != 1:
        raise ReleaseError(f'{version_file}: expected one line `__version__ = "X.Y.Z"`')
    return Version(found[0])


def entry_points(project: dict) -> dict[str, dict[str, str]]:
    """The entry points a wheel built from this ``[project]`` table declares, by group
    (``[project.scripts]`` and ``gui-scripts`` as ``console_scripts`` and ``gui_scripts``)."""
    groups = dict(project.get("entry-points", {}))
    for table, group in (("scripts", "console_scripts"), ("gui-scripts", "gui_scripts")):
        if project.get(table):
            groups[group] = project[table]
    return groups


def load_package(path: Path) -> Package:
    """Read the package in folder `path` from its pyproject.toml and version file."""
    pyproject = tomllib.loads((path / "pyproject.toml").read_text())
    project = pyproject["project"]
    version_path = pyproject["tool"]["hatch"]["version"]["path"]
    version_file = path / version_path
    root = Path(version_path).parent.relative_to("src").as_posix()
    return Package(
        folder=path.name,
        path=path,
        name=project["name"],
        version=read_version(version_file),
        version_file=version_file,
        requires=tuple(project.get("dependencies", ())),
        import_root=root + "/",
        entry_points=entry_points(project),
        other_roots=tuple(
            r.rstrip("/") + "/"
            for r in pyproject.get("tool", {}).get("tocha", {}).get("also-owns", ())
        ),
    )


def load_packages(root: Path = ROOT) -> list[Package]:
    """Every package under ``root/packages``, in dependency order.

    A package comes after everything it depends on; among packages at the same depth of the
    dependency graph, in order of name."""
    found = [load_package(p.parent) for p in sorted(root.glob("packages/*/pyproject.toml"))]
    by_key = {p.key: p for p in found}
    depth: dict[str, int] = {}

    def depth_of(package: Package, seen: tuple[str, ...]) -> int:
        if package.key in seen:
            raise ReleaseError(f"dependency cycle: {' -> '.join(seen + (package.key,))}")
        if package.key not in depth:
            deps = [by_key[canonicalize_name(r.name)] for r in package.siblings(found)]
            inner = seen + (package.key,)
            depth[package.key] = max((1 + depth_of(d, inner) for d in deps), default=0)
        return depth[package.key]

    return sorted(found, key=lambda p: (depth_of(p, ()), p.name))


def find_package(packages: list[Package], name: str) -> Package:
    """The package named `name` (distribution name such as tocha-core, or folder name)."""
    for package in packages:
        if canonicalize_name(name) in (package.key, canonicalize_name(package.folder)):
            return package
    known = ", ".join(p.name for p in packages)
    raise ReleaseError(f"no package {name!r} in this repository (packages: {known})")


def next_breaking(version: Version) -> Version:
    """The first version incompatible with `version`: the next minor before 1.0, else major."""
    if version.major == 0:
        return Version(f"0.{version.minor + 1}")
    return Version(f"{version.major + 1}")


def range_bounds(requirement: Requirement) -> tuple[Version, Version]:
    """The bounds A, B of a sibling requirement ``name>=A,<B``; refuses any other form."""
    bounds = {spec.operator: spec.version for spec in requirement.specifier}
    if set(bounds) != {">=", "<"} or len(requirement.specifier) != 2 or requirement.marker:
        raise ReleaseError(
            f"{requirement}: a sibling dependency must be a compatible range "
            f"`{requirement.name}>=A,<B`"
        )
    return Version(bounds[">="]), Version(bounds["<"])


def compatible_range(name: str, lower: Version, version: Version) -> str:
    """The range ``name>=lower,<B`` that admits `version` and every version compatible with it."""
    return f"{name}>={lower},<{next_breaking(version)}"


def admits(requirement: Requirement, version: Version) -> bool:
    """Whether `version` (pre-releases included) satisfies `requirement`."""
    return SpecifierSet(str(requirement.specifier)).contains(version, prereleases=True)
