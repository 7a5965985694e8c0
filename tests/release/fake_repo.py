"""Helpers of the release tests: a small monorepo written in a folder, crafted wheels and
sdists. Puts scripts/ on the import path, for the scripts under test (monorepo, bump, release).
"""

from __future__ import annotations

import io
import sys
import tarfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from monorepo import Package  # noqa: E402

CHANGELOG = "# Changelog\n\n## Unreleased\n\n- A change.\n\n## 0.1.0\n\n- First release.\n"
# folder -> (distribution, the folder of its version file under src/, its dependencies).
PACKAGES = {
    "tensor-core": ("tocha-core", "tocha", ["numpy>=1.26"]),
    "autograd": ("tocha-autograd", "tocha/autograd", ["tocha-core>=0.1,<0.2"]),
    "nn": ("tocha-nn", "tocha/nn", ["tocha-autograd>=0.1,<0.2"]),
    "mp": ("tocha-mp", "tocha/multiprocessing", ["tocha-core>=0.1,<0.2"]),
}


def write_package(root: Path, folder: str, name: str, module: str, requires: list[str]) -> None:
    """A package folder: pyproject.toml, README.md, CHANGELOG.md and version file at 0.1.0."""
    path = root / "packages" / folder
    (path / "src" / module).mkdir(parents=True)
    (path / "src" / module / "_version.py").write_text('__version__ = "0.1.0"\n')
    deps = ", ".join(f'"{r}"' for r in requires)
    points = '\n[project.entry-points."tocha.backends"]\ncpu = "tocha._cpu:register"\n'
    (path / "pyproject.toml").write_text(
        f'[project]\nname = "{name}"\ndynamic = ["version"]\ndependencies = [{deps}]\n'
        + (points if module == "tocha" else "")
        + f'\n[tool.hatch.version]\npath = "src/{module}/_version.py"\n'
    )
    (path / "README.md").write_text(f"# {name}\n\nWhat {name} does.\n")
    (path / "CHANGELOG.md").write_text(CHANGELOG)


def metadata(package: Package, drop: str = "", **fields: str) -> str:
    """Complete METADATA for `package`, without the field `drop`, with `fields` changed."""
    values = {
        "Name": package.name,
        "Version": str(package.version),
        "Summary": f"{package.name}, a part of tocha.",
        "License-Expression": "MIT",
        "Requires-Python": ">=3.10",
        "Classifier": "Programming Language :: Python :: 3",
        "Project-URL": "Homepage, https://example.org/tocha",
        "Description-Content-Type": "text/markdown",
        **fields,
    }
    head = "".join(f"{k}: {v}\n" for k, v in values.items() if k != drop)
    readme = (package.path / "README.md").read_text()
    return f"Metadata-Version: 2.4\n{head}\n{readme}"


def make_wheel(
    dist: Path,
    package: Package,
    files: list[str] | None = None,
    meta: str | None = None,
    entry_points: str | None = None,
) -> Path:
    """A wheel of `package` in `dist`: by default a module of its own and, for tocha-core,
    tocha/__init__.py; complete metadata; its entry points."""
    if files is None:
        files = [package.import_root + "_version.py"]
        files += ["tocha/__init__.py"] if package.import_root == "tocha/" else []
    if entry_points is None:
        entry_points = "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in names.items())
            for group, names in package.entry_points.items()
        )
    stem = f"{package.name.replace('-', '_')}-{package.version}"
    dist.mkdir(exist_ok=True)
    path = dist / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name in files:
            archive.writestr(name, "")
        archive.writestr(f"{stem}.dist-info/METADATA", meta or metadata(package))
        archive.writestr(f"{stem}.dist-info/entry_points.txt", entry_points)
    return path


def make_sdist(dist: Path, package: Package, content: bytes = b"") -> Path:
    """An sdist of `package` in `dist`, holding one file with `content`."""
    stem = f"{package.name.replace('-', '_')}-{package.version}"
    dist.mkdir(exist_ok=True)
    path = dist / f"{stem}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo(f"{stem}/PKG-INFO")
        info.size = len(content)
        archive.addfile(info, io.BytesIO(content))
    return path
