"""Bump a package's version: ``python scripts/bump.py PACKAGE VERSION [--widen] [--date DATE]``.

PACKAGE is a distribution (``tocha-core``) or its folder (``tensor-core``). The bump:

- writes VERSION into the package's version file (the one hatchling reads);
- moves the notes of its CHANGELOG's ``## Unreleased`` section (or ``## X (unreleased)``)
  under a new heading ``## VERSION (DATE)``, leaving an empty ``## Unreleased`` on top; it
  refuses when there are no notes to move;
- checks that every package depending on it still admits VERSION in its range. A range that
  does not is an error, unless ``--widen``: the range's upper bound is then raised to admit
  VERSION (``>=0.1,<0.2`` becomes ``>=0.1,<0.3`` for 0.2.0) and the dependent's changelog says
  so; that dependent then needs a release of its own.

Nothing is written when the bump is refused. ``python scripts/bump.py --check`` only checks
that every sibling dependency is a range ``>=A,<B`` admitting the sibling's current version.
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path

from monorepo import (
    ROOT,
    VERSION_LINE,
    Package,
    ReleaseError,
    admits,
    compatible_range,
    find_package,
    load_packages,
    range_bounds,
)
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

UNRELEASED = re.compile(r"^## +(?:unreleased|\S+ +\(unreleased\)) *\n", re.I | re.M)
HEADING = re.compile(r"^## ", re.M)


def _unreleased(text: str) -> tuple[re.Match[str] | None, int, str]:
    """The unreleased heading of a changelog, where its section ends, and its notes."""
    match = UNRELEASED.search(text)
    if match is None:
        return None, 0, ""
    after = HEADING.search(text, match.end())
    stop = after.start() if after else len(text)
    return match, stop, text[match.end() : stop].strip()


def _splice(text: str, start: int, stop: int, section: str) -> str:
    """`text` with `text[start:stop]` replaced by `section`, a blank line before what follows."""
    rest = text[stop:]
    return text[:start] + section + ("\n" + rest if rest else "")


def release_notes(text: str, version: Version, date: str) -> str:
    """A changelog with its unreleased notes moved under ``## version (date)``."""
    match, stop, notes = _unreleased(text)
    if match is None:
        raise ReleaseError("it has no '## Unreleased' section")
    if not notes:
        raise ReleaseError("its '## Unreleased' section is empty: write the release notes first")
    return _splice(
        text, match.start(), stop, f"## Unreleased\n\n## {version} ({date})\n\n{notes}\n"
    )


def add_note(text: str, note: str) -> str:
    """A changelog with the line ``- note`` added to its unreleased section (made if missing)."""
    match, stop, notes = _unreleased(text)
    if match is None:
        first = HEADING.search(text)
        at = first.start() if first else len(text)
        return _splice(text, at, at, f"## Unreleased\n\n- {note}\n")
    body = f"{notes}\n- {note}" if notes else f"- {note}"
    return _splice(text, match.start(), stop, f"{match.group(0)}\n{body}\n")


class Edits(dict):
    """New contents of files, by path, written only once the whole bump is accepted."""

    def text(self, path: Path) -> str:
        """The file's pending contents, or what it holds now."""
        if path in self:
            return self[path]
        if not path.is_file():
            raise ReleaseError(f"{path} does not exist")
        return path.read_text()

    def write(self) -> None:
        """Write every pending file."""
        for path, text in self.items():
            path.write_text(text)


def _changelog(edits: Edits, package: Package, change) -> None:
    """Apply `change` (text -> text) to the package's CHANGELOG.md, naming it on refusal."""
    path = package.path / "CHANGELOG.md"
    try:
        edits[path] = change(edits.text(path))
    except ReleaseError as error:
        raise ReleaseError(f"{package.name}'s CHANGELOG.md: {error}") from None


def bump(
    root: Path, name: str, version: str, *, widen: bool = False, date: str | None = None
) -> list[str]:
    """Bump package `name` to `version` in the repository at `root`; returns what it did.

    Raises ReleaseError, having written nothing, when the version is not newer than the
    current one, when the changelog has no notes to release, or when a dependent's range
    does not admit the new version and `widen` is false."""
    packages = load_packages(root)
    package = find_package(packages, name)
    try:
        new = Version(version)
    except InvalidVersion:
        raise ReleaseError(f"{version!r} is not a valid version") from None
    if new <= package.version:
        raise ReleaseError(f"{package.name} is at {package.version}: {new} is not newer")
    edits = Edits()
    edits[package.version_file] = VERSION_LINE.sub(
        f'__version__ = "{new}"', edits.text(package.version_file)
    )
    day = date or datetime.date.today().isoformat()
    _changelog(edits, package, lambda text: release_notes(text, new, day))
    done = [f"{package.name}: {package.version} -> {new}, CHANGELOG.md notes under {new} ({day})"]
    refused = []
    for dependent in packages:
        for raw in dependent.requires:
            requirement = Requirement(raw)
            if canonicalize_name(requirement.name) != package.key:
                continue
            lower, _ = range_bounds(requirement)
            wider = compatible_range(requirement.name, lower, new)
            if admits(requirement, new):
                done.append(f"{dependent.name}: {raw} admits {new}")
            elif not widen or not admits(Requirement(wider), new):
                refused.append(f"{dependent.name} requires {raw}, which excludes {new}")
            else:
                pyproject = dependent.path / "pyproject.toml"
                text = edits.text(pyproject)
                if text.count(f'"{raw}"') != 1:
                    raise ReleaseError(f'{pyproject}: expected "{raw}" once')
                edits[pyproject] = text.replace(f'"{raw}"', f'"{wider}"')
                note = f"Accepts {package.name} {new} (`{wider}`)."
                _changelog(edits, dependent, lambda text, note=note: add_note(text, note))
                done.append(f"{dependent.name}: {raw} widened to {wider}: release it too")
    if refused:
        hint = "pick a version these ranges admit, or pass --widen to widen them"
        raise ReleaseError("\n".join([*refused, hint]))
    edits.write()
    return done


def check_ranges(packages: list[Package]) -> list[str]:
    """Problems with sibling dependencies: a range not ``>=A,<B``, or one that excludes the
    sibling's current version."""
    versions = {p.key: p for p in packages}
    problems = []
    for package in packages:
        for requirement in package.siblings(packages):
            sibling = versions[canonicalize_name(requirement.name)]
            try:
                range_bounds(requirement)
            except ReleaseError as error:
                problems.append(f"{package.name}: {error}")
                continue
            if not admits(requirement, sibling.version):
                problems.append(
                    f"{package.name} requires {requirement}, but {sibling.name} is at "
                    f"{sibling.version}"
                )
    return problems


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", nargs="?", help="distribution (tocha-core) or folder")
    parser.add_argument("version", nargs="?", help="the new version, e.g. 0.1.1")
    parser.add_argument("--widen", action="store_true", help="widen dependents' ranges")
    parser.add_argument("--date", help="release date for the changelog (default: today)")
    parser.add_argument("--check", action="store_true", help="only check the sibling ranges")
    args = parser.parse_args(argv)
    try:
        if args.check:
            problems = check_ranges(load_packages(ROOT))
            for problem in problems:
                print(problem, file=sys.stderr)
            print("sibling ranges: " + ("FAILED" if problems else "ok"))
            return 1 if problems else 0
        if not (args.package and args.version):
            parser.error("PACKAGE and VERSION are required (or --check)")
        for line in bump(ROOT, args.package, args.version, widen=args.widen, date=args.date):
            print(line)
    except ReleaseError as error:
        print(f"bump refused: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
