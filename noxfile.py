"""Sessions of the tocha monorepo: ``nox -s tests`` (every test), ``nox -s tests_package``
(each package alone on its dependency chain), ``build``, ``lint``, ``bench``, ``api_report``
and ``demo``.

Set ``TOCHA_ORACLE=1`` to install PyTorch as the test oracle in ``tests``.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import nox

ROOT = Path(__file__).parent
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

# The packages in dependency order (DESIGN.md, section 1): folder -> the folders it depends on.
PACKAGES = {
    "tensor-core": [],
    "autograd": ["tensor-core"],
    "nn": ["autograd"],
    "optim": ["autograd"],
    "mp": ["tensor-core"],
    "utils": ["tensor-core", "mp"],
    "cuda": ["tensor-core"],
}
# The folders that exist yet, in dependency order.
PRESENT = [name for name in PACKAGES if (ROOT / "packages" / name / "pyproject.toml").exists()]
TEST_DEPS = ["pytest", "hypothesis"]
ORACLE = "torch==2.13.0"
PLUGINS = sorted(str(p) for p in (ROOT / "tests" / "plugins").glob("*") if p.is_dir())


def chain(name: str) -> list[str]:
    """`name` and the packages it depends on, directly or not, in dependency order."""
    needed = {name}
    for package in reversed(PACKAGES):
        if package in needed:
            needed.update(PACKAGES[package])
    return [package for package in PACKAGES if package in needed]


def test_folder(name: str) -> str:
    """Where a package's tests live: tests/core for tensor-core, tests/<folder> otherwise."""
    return "tests/core" if name == "tensor-core" else f"tests/{name}"


def install_packages(session: nox.Session, names: list[str]) -> None:
    """Install packages in editable mode, in dependency order, in one pip call."""
    args = []
    for name in names:
        args += ["-e", f"packages/{name}"]
    session.install(*args)


def install_oracle(session: nox.Session, required: bool) -> None:
    """Install PyTorch, the test oracle; only warn when it is optional and unavailable."""
    try:
        session.install(ORACLE)
    except nox.command.CommandFailed:
        if required:
            raise
        session.warn(f"{ORACLE} is not available: running without PyTorch")


@nox.session
def tests(session: nox.Session) -> None:
    """Every test suite, on all the packages installed together.

    Also installs the test plugins under tests/plugins, and PyTorch as the oracle when
    TOCHA_ORACLE=1."""
    install_packages(session, PRESENT)
    session.install(*TEST_DEPS, "ml_dtypes", *PLUGINS)
    if os.environ.get("TOCHA_ORACLE") == "1":
        install_oracle(session, required=True)
    session.run("python", "-m", "pytest", "tests/", *session.posargs)


@nox.session
@nox.parametrize("package", PRESENT)
def tests_package(session: nox.Session, package: str) -> None:
    """One package's tests, on its dependency chain alone (catches undeclared imports)."""
    install_packages(session, chain(package))
    session.install(*TEST_DEPS, *PLUGINS)
    folder = test_folder(package)
    if not (ROOT / folder).is_dir():
        session.skip(f"{folder} does not exist yet")
    session.run("python", "-m", "pytest", folder, *session.posargs)


@nox.session
def build(session: nox.Session) -> None:
    """Wheel and sdist of every package into dist/, each wheel checked.

    Packages are built in dependency order; only tocha-core's wheel may ship
    tocha/__init__.py."""
    session.install("build")
    shutil.rmtree(ROOT / "dist", ignore_errors=True)
    for name in PRESENT:
        session.run("python", "-m", "build", "--outdir", "dist", f"packages/{name}")
    wheels = sorted((ROOT / "dist").glob("*.whl"))
    if len(wheels) != len(PRESENT):
        session.error(f"expected {len(PRESENT)} wheels in dist/, found {len(wheels)}")
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
        is_core = wheel.name.startswith("tocha_core-")
        if is_core != ("tocha/__init__.py" in names):
            session.error(
                f"{wheel.name}: only tocha-core's wheel may (and must) ship tocha/__init__.py"
            )
        session.log(f"{wheel.name}: {len(names)} files, checked")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check (settings in ruff.toml)."""
    session.install("ruff")
    paths = [
        p
        for p in ("packages", "tests", "benchmarks", "examples", "noxfile.py")
        if (ROOT / p).exists()
    ]
    session.run("ruff", "check", *paths)
    session.run("ruff", "format", "--check", *paths)


@nox.session
def bench(session: nox.Session) -> None:
    """The benchmarks, tocha beside PyTorch when PyTorch can be installed."""
    install_packages(session, PRESENT)
    install_oracle(session, required=False)
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session
def api_report(session: nox.Session) -> None:
    """How much of PyTorch's public API tocha has, per namespace (from the committed list of
    torch's names: PyTorch is not needed)."""
    install_packages(session, PRESENT)
    session.run("python", "scripts/api_report.py", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """The example: a classifier of scikit-learn's digits, written as a PyTorch program."""
    install_packages(session, PRESENT)
    session.install("scikit-learn")
    session.run("python", "examples/digits.py", *session.posargs)
