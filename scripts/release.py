"""Build, check and publish the monorepo's distributions, in dependency order.

``python scripts/release.py build [--outdir dist] [--no-isolation]``
    A wheel and an sdist of every package into the folder, in dependency order, then ``check``.
``python scripts/release.py check [DIST]``
    The checks run before any upload, on the wheels and sdists in DIST (default ``dist``): one
    wheel and one sdist per package, of the version in its version file; each wheel holds only
    its own package's files (only tocha-core's wheel ships ``tocha/__init__.py``); complete
    metadata (name, version, summary, README as description, license, Python requirement,
    classifiers, project URLs, the entry points of pyproject.toml); and ``twine check``.
``python scripts/release.py publish --repository-url URL [--index-url URL] [--dist DIST]``
    ``check``, then uploads with twine, one package at a time in dependency order, each once
    the index lists what it depends on. Credentials come from the environment only
    (``TWINE_USERNAME``, ``TWINE_PASSWORD``). A file the index already has with the same
    SHA-256 is skipped; the publish is refused, before anything is uploaded, when a file of the
    same name has other contents there (bump the version) or when a sibling dependency is
    neither on the index nor published earlier in the same run. The index is read through its
    simple API at ``--index-url`` (default: the repository URL followed by ``simple/``).
"""

from __future__ import annotations

import argparse
import configparser
import email.parser
import functools
import hashlib
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from monorepo import ROOT, Package, ReleaseError, admits, load_packages
from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import Version

TIMEOUT = 20  # seconds, for one request to the index
VISIBLE_WAIT = 60  # seconds an uploaded file may take to appear in the index
CORE_INIT = "tocha/__init__.py"


@dataclass
class Artifacts:
    """The wheel and sdist of one package found in the dist folder."""

    package: Package
    wheel: Path
    sdist: Path

    @property
    def files(self) -> list[Path]:
        """Wheel first, then sdist."""
        return [self.wheel, self.sdist]


def build(root: Path, outdir: Path, isolated: bool = True) -> None:
    """Build a wheel and an sdist of every package into `outdir`, in dependency order."""
    for package in load_packages(root):
        command = [sys.executable, "-m", "build", "--outdir", str(outdir), str(package.path)]
        subprocess.run(command + ([] if isolated else ["--no-isolation"]), check=True)


def find_artifacts(dist: Path, packages: list[Package]) -> tuple[list[Artifacts], list[str]]:
    """The packages' files in `dist`, in dependency order, and the problems found.

    Every file must be the wheel or sdist of a package of this repository at the version of
    its version file; a package in `dist` needs both. Packages absent from `dist` are left out.
    """
    found: dict[str, dict[str, Path]] = {}
    problems = []
    by_key = {p.key: p for p in packages}
    for path in sorted(dist.iterdir()):
        try:
            if path.suffix == ".whl":
                name, version, *_ = parse_wheel_filename(path.name)
                kind = "wheel"
            else:
                name, version = parse_sdist_filename(path.name)
                kind = "sdist"
        except ValueError:
            problems.append(f"{path.name}: neither a wheel nor an sdist")
            continue
        package = by_key.get(name)
        if package is None:
            problems.append(f"{path.name}: not a package of this repository")
        elif version != package.version:
            problems.append(
                f"{path.name}: stale, {package.folder} is at {package.version}: rebuild"
            )
        elif kind in found.setdefault(package.key, {}):
            problems.append(f"{path.name}: a second {kind} of {package.name}")
        else:
            found[package.key][kind] = path
    artifacts = []
    for package in packages:
        files = found.get(package.key)
        if files is None:
            continue
        if set(files) != {"wheel", "sdist"}:
            problems.append(f"{package.name}: needs a wheel and an sdist in {dist}")
        else:
            artifacts.append(Artifacts(package, files["wheel"], files["sdist"]))
    return artifacts, problems


def owner(path: str, packages: list[Package]) -> Package | None:
    """The package whose part of the namespace holds `path` (the deepest that does)."""
    roots = [(len(r), p) for p in packages for r in p.import_roots if path.startswith(r)]
    return max(roots, key=lambda found: found[0], default=(0, None))[1]


def check_wheel_files(wheel: Path, package: Package, packages: list[Package]) -> list[str]:
    """Problems with the files of `package`'s wheel: any file outside its own part of the
    namespace, ``tocha/__init__.py`` in any wheel but tocha-core's (and not in tocha-core's)."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    problems = []
    if package.import_root == "tocha/" and CORE_INIT not in names:
        problems.append(f"{wheel.name}: lacks {CORE_INIT}")
    for name in names:
        if name.split("/")[0].endswith((".dist-info", ".data")):
            continue
        holder = owner(name, packages)
        if name == CORE_INIT and holder is not package:
            problems.append(f"{wheel.name}: only tocha-core's wheel may ship {CORE_INIT}")
        elif holder is None:
            problems.append(f"{wheel.name}: {name} belongs to no package of this repository")
        elif holder is not package:
            problems.append(f"{wheel.name}: {name} belongs to {holder.name}")
    return problems


def read_dist_info(wheel: Path, filename: str) -> str | None:
    """The text of ``*.dist-info/<filename>`` in a wheel, or None if it has none."""
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            parts = name.split("/")
            if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == filename:
                return archive.read(name).decode()
    return None


def check_metadata(wheel: Path, package: Package) -> list[str]:
    """Problems with a wheel's metadata: name, version, summary, the README as description,
    license, Python requirement, classifiers, project URLs, and the package's entry points."""
    text = read_dist_info(wheel, "METADATA")
    if text is None:
        return [f"{wheel.name}: no METADATA"]
    meta = email.parser.Parser().parsestr(text)
    problems = []

    def need(ok: object, what: str) -> None:
        if not ok:
            problems.append(f"{wheel.name}: {what}")

    need(canonicalize_name(meta.get("Name", "")) == package.key, f"Name is not {package.name}")
    need(meta.get("Version") == str(package.version), f"Version is not {package.version}")
    need(meta.get("Summary"), "no Summary (description in pyproject.toml)")
    readme = (package.path / "README.md").read_text().strip()
    need(meta.get_payload().strip() == readme, "the description is not the README.md")
    need(meta.get("Description-Content-Type") == "text/markdown", "README not text/markdown")
    need(meta.get("License-Expression") or meta.get("License"), "no license")
    need(meta.get("Requires-Python"), "no Requires-Python")
    need(meta.get_all("Classifier"), "no classifiers")
    need(meta.get_all("Project-URL"), "no project URLs")
    points = configparser.ConfigParser(interpolation=None)
    points.optionxform = str  # entry-point names are case-sensitive
    points.read_string(read_dist_info(wheel, "entry_points.txt") or "")
    shipped = {group: dict(points[group]) for group in points.sections()}
    need(shipped == package.entry_points, f"entry points {shipped} != {package.entry_points}")
    return problems


def twine_check(files: list[Path]) -> list[str]:
    """Problems found by ``twine check --strict`` (the description renders, fields valid)."""
    command = [sys.executable, "-m", "twine", "check", "--strict", *map(str, files)]
    result = subprocess.run(command, capture_output=True, text=True)
    return [] if result.returncode == 0 else [f"twine check:\n{result.stdout}{result.stderr}"]


def check(
    dist: Path, packages: list[Package], run_twine: bool = True, every: bool = False
) -> list[Artifacts]:
    """Every pre-upload check on the files in `dist` (which must hold `every` package if
    asked); raises ReleaseError listing the problems."""
    if not dist.is_dir():
        raise ReleaseError(f"{dist} does not exist: build first (nox -s build)")
    artifacts, problems = find_artifacts(dist, packages)
    if every:
        built = {found.package.key for found in artifacts}
        problems += [f"{p.name}: not built in {dist}" for p in packages if p.key not in built]
    for found in artifacts:
        problems += check_wheel_files(found.wheel, found.package, packages)
        problems += check_metadata(found.wheel, found.package)
    if run_twine and artifacts:
        problems += twine_check([f for found in artifacts for f in found.files])
    if not artifacts and not problems:
        problems.append(f"{dist} holds nothing to publish")
    if problems:
        raise ReleaseError("\n".join(problems))
    return artifacts


class _Links(HTMLParser):
    """The links of a PEP 503 simple page: file name -> SHA-256 (None when not given)."""

    def __init__(self) -> None:
        super().__init__()
        self.files: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href") if tag == "a" else None
        if href:
            url, _, fragment = href.partition("#")
            digest = fragment.removeprefix("sha256=") if fragment.startswith("sha256=") else None
            self.files[url.rsplit("/", 1)[-1]] = digest


class Index:
    """A package index read through its simple API (PEP 503)."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/") + "/"

    def files(self, name: str) -> dict[str, str | None]:
        """The files the index has for distribution `name`: file name -> SHA-256 or None."""
        try:
            with urllib.request.urlopen(
                f"{self.url}{canonicalize_name(name)}/", timeout=TIMEOUT
            ) as response:
                page = response.read().decode()
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return {}
            raise ReleaseError(f"index {self.url}: {error}") from None
        except OSError as error:
            raise ReleaseError(f"index {self.url} unreachable: {error}") from None
        links = _Links()
        links.feed(page)
        return links.files


def versions(files: dict[str, str | None]) -> set[Version]:
    """The versions of a distribution's files on an index."""
    found = set()
    for name in files:
        try:
            found.add(
                parse_wheel_filename(name)[1]
                if name.endswith(".whl")
                else parse_sdist_filename(name)[1]
            )
        except ValueError:
            continue  # a file of another kind (.egg, .zip...): its version does not matter here
    return found


def sha256(path: Path) -> str:
    """The SHA-256 of a file, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def plan(
    artifacts: list[Artifacts], packages: list[Package], index: Index
) -> tuple[list[tuple[Artifacts, list[Path]]], list[str]]:
    """What to upload, per package in order, and the problems that forbid any upload.

    A file the index has with the same SHA-256 is skipped; one it has with other contents is
    a problem, as is a sibling dependency that no version on the index or earlier in this
    upload satisfies."""
    uploads: list[tuple[Artifacts, list[Path]]] = []
    problems = []
    available: dict[str, set[Version]] = {}
    for found in artifacts:
        on_index = index.files(found.package.name)
        available[found.package.key] = versions(on_index) | {found.package.version}
        for requirement in found.package.siblings(packages):
            key = canonicalize_name(requirement.name)
            if key not in available:
                available[key] = versions(index.files(key))
            if not any(admits(requirement, v) for v in available[key]):
                have = ", ".join(sorted(map(str, available[key]))) or "none"
                problems.append(
                    f"{found.package.name} {found.package.version} needs {requirement}: not on "
                    f"the index (it has: {have}) nor in this upload; publish that first"
                )
        todo = []
        for path in found.files:
            if path.name not in on_index:
                todo.append(path)
            elif on_index[path.name] != sha256(path):
                how = "with other contents" if on_index[path.name] else "(no hash to compare)"
                problems.append(
                    f"{path.name} is already on the index {how}: "
                    f"bump {found.package.name}'s version (scripts/bump.py)"
                )
        uploads.append((found, todo))
    return uploads, problems


def twine_upload(repository_url: str, files: list[Path]) -> None:
    """Upload files with twine; credentials come from TWINE_USERNAME/TWINE_PASSWORD."""
    command = [sys.executable, "-m", "twine", "upload", "--non-interactive"]
    command += ["--disable-progress-bar", "--repository-url", repository_url]
    subprocess.run(command + list(map(str, files)), check=True)


def wait_until_listed(index: Index, name: str, files: list[Path]) -> None:
    """Wait (a bounded time) until the index lists every one of `files`."""
    deadline = time.monotonic() + VISIBLE_WAIT
    while not {f.name for f in files} <= index.files(name).keys():
        if time.monotonic() > deadline:
            raise ReleaseError(f"{name}: uploaded, but not listed by {index.url} after a minute")
        time.sleep(0.5)


def publish(
    dist: Path,
    packages: list[Package],
    index: Index,
    upload: Callable[[list[Path]], None],
    run_twine: bool = True,
) -> list[str]:
    """Check everything, then upload package by package in dependency order; returns a log.

    Raises ReleaseError before any upload when a check fails."""
    artifacts = check(dist, packages, run_twine)
    uploads, problems = plan(artifacts, packages, index)
    if problems:
        raise ReleaseError("\n".join(problems))
    log = []
    for found, todo in uploads:
        label = f"{found.package.name} {found.package.version}"
        if not todo:
            log.append(f"{label}: already on the index, skipped")
            continue
        upload(todo)
        wait_until_listed(index, found.package.name, todo)
        log.append(f"{label}: uploaded {', '.join(p.name for p in todo)}")
    return log


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_cmd = commands.add_parser("build", help="build every package, then check")
    build_cmd.add_argument("--outdir", type=Path, default=ROOT / "dist")
    build_cmd.add_argument("--no-isolation", action="store_true", help="use this environment")
    check_cmd = commands.add_parser("check", help="the pre-upload checks")
    check_cmd.add_argument("dist", type=Path, nargs="?", default=ROOT / "dist")
    publish_cmd = commands.add_parser("publish", help="check, then upload in dependency order")
    publish_cmd.add_argument("--repository-url", required=True, help="the upload URL")
    publish_cmd.add_argument("--index-url", help="its simple API (default: URL + simple/)")
    publish_cmd.add_argument("--dist", type=Path, default=ROOT / "dist")
    args = parser.parse_args(argv)
    try:
        packages = load_packages(ROOT)
        if args.command == "build":
            build(ROOT, args.outdir, isolated=not args.no_isolation)
            args.dist = args.outdir
        if args.command in ("build", "check"):
            for found in check(args.dist, packages, every=True):
                print(f"{found.wheel.name}, {found.sdist.name}: checked")
            return 0
        missing = [v for v in ("TWINE_USERNAME", "TWINE_PASSWORD") if not os.environ.get(v)]
        if missing:
            raise ReleaseError(f"set {' and '.join(missing)} in the environment to upload")
        repository = args.repository_url.rstrip("/") + "/"
        index = Index(args.index_url or repository + "simple/")
        upload = functools.partial(twine_upload, repository)
        for line in publish(args.dist, packages, index, upload):
            print(line)
    except ReleaseError as error:
        print(f"{args.command} refused:\n{error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
