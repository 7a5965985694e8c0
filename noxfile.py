"""Sessions of the tocha monorepo: ``nox -s tests`` (every test), ``nox -s tests_package``
(each package alone on its dependency chain), ``build``, ``publish``, ``release_check``,
``lint``, ``typecheck``, ``bench``, ``api_report``, ``array_api``, ``fidelity`` (the full
differential sweep and bad-input fuzzer against PyTorch), ``demo`` (the main job) and ``docs``.

Set ``TOCHA_ORACLE=1`` to install PyTorch as the test oracle in ``tests``, and
``TOCHA_CUDA=1`` (on a GPU machine) to install CuPy for tocha-cuda.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

ROOT = Path(__file__).parent
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

# The packages in dependency order (docs/design.md, section 1): folder -> the folders it depends on.
PACKAGES = {
    "tensor-core": [],
    "autograd": ["tensor-core"],
    "nn": ["autograd"],
    "optim": ["autograd", "nn"],
    "mp": ["tensor-core"],
    "utils": ["tensor-core", "mp"],
    "distributions": ["autograd"],
    "func": ["autograd", "nn"],
    "fx": ["autograd", "nn"],
    "onnx": ["fx"],
    "compiler": ["fx"],
    "distributed": ["tensor-core", "autograd", "nn"],
    "cuda": ["tensor-core"],
    "onednn": ["tensor-core"],
}
# The folders that exist yet, in dependency order.
PRESENT = [name for name in PACKAGES if (ROOT / "packages" / name / "pyproject.toml").exists()]
# Installed with --no-deps: tocha-cuda's CuPy is a 137 MB wheel (cupy-cuda12x 14.2, plus
# cuda-pathfinder) of no use without a GPU; without it the tests marked `cuda` skip and the
# rest test the plugin's logic. TOCHA_CUDA=1 (on a GPU machine) installs CUPY too.
NO_DEPS = {"cuda"}
CUPY = "cupy-cuda12x"
TEST_DEPS = ["pytest", "hypothesis"]
# onnxruntime runs the models that tocha-onnx writes (tests/onnx).
ONNX_TEST_DEPS = ["onnxruntime"]
# numba compiles tocha-compiler's fused CPU kernels (an optional dependency of the package).
COMPILER_TEST_DEPS = ["numba"]
ORACLE = "torch==2.13.0"
# tests/dropin: libraries run unchanged on tocha through the torch alias (safetensors is in
# the tests session's list already). Pinned: transformers' use of torch's internals changes
# between releases; move the pin with scripts/record_hf_fixtures.py.
ECOSYSTEM_TEST_DEPS = ["transformers==5.24.0", "einops==0.8.2"]
# tests/array_api: array-api-compat's torch namespace on tocha against array-api-strict.
ARRAY_API_DEPS = ["array-api-compat>=1.16", "array-api-strict>=2.6"]
# MPI for tests/distributed (also tocha-distributed's dependencies): mpi4py, and MPICH's
# mpiexec and library as a wheel where PyPI has one.
MPI_DEPS = ["mpi4py", "mpich; sys_platform == 'linux' and platform_machine == 'x86_64'"]
# What `demo` installs of the packages, and what `docs` needs to build the site.
DEMO_PACKAGES = {"tensor-core", "autograd", "nn", "optim", "mp", "utils", "cuda", "onednn"}
DOCS_DEPS = ["mkdocs", "mkdocstrings[python]"]
# The type checker of `typecheck`, pinned: a new release may report new errors.
MYPY = "mypy==2.4.1"
# What scripts/release.py and bump.py need.
RELEASE_DEPS = ["twine", "packaging", "tomli; python_version < '3.11'"]
# The backend plugins the tests install: tests/plugins, and the one of examples/.
PLUGINS = sorted(str(p) for p in (ROOT / "tests" / "plugins").glob("*") if p.is_dir()) + [
    str(ROOT / "examples" / "backend-plugin")
]


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
    """Install packages in editable mode, in dependency order, in one pip call; then the GPU
    backends (`NO_DEPS`) without their dependencies, adding CuPy only with TOCHA_CUDA=1."""
    args = []
    for name in names:
        if name not in NO_DEPS:
            args += ["-e", f"packages/{name}"]
    session.install(*args)
    gpu = [name for name in names if name in NO_DEPS]
    for name in gpu:
        session.install("--no-deps", "-e", f"packages/{name}")
    if gpu and os.environ.get("TOCHA_CUDA") == "1":
        session.install(CUPY)


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

    Also installs the test plugins under tests/plugins. PyTorch is the oracle: without
    TOCHA_ORACLE=1 the tests replay its recorded answers (tests/oracle/answers), hiding PyTorch
    even where this virtual environment has it; with TOCHA_ORACLE=1 PyTorch is installed and
    every answer is checked live against its recording (``scripts/record_oracle.py`` writes
    them)."""
    install_packages(session, PRESENT)
    # tensorboard: its own event reader checks the files SummaryWriter writes;
    # scikit-learn and matplotlib: the examples' data and the trainer's loss plots.
    session.install(
        *TEST_DEPS,
        "ml_dtypes",
        "safetensors",
        "tensorboard",
        "scikit-learn",
        "matplotlib",
        *MPI_DEPS,
        *ONNX_TEST_DEPS,
        *COMPILER_TEST_DEPS,
        *ARRAY_API_DEPS,
        *ECOSYSTEM_TEST_DEPS,
        *PLUGINS,
    )
    if os.environ.get("TOCHA_ORACLE") == "1":
        install_oracle(session, required=True)
        env = {}
    else:
        env = {"TOCHA_ORACLE_MODE": "replay"}
    session.run("python", "-m", "pytest", "tests/", *session.posargs, env=env)


@nox.session
def array_api(session: nox.Session) -> None:
    """The Python array API standard: array-api-compat's torch namespace, wrapping tocha
    through the torch alias, against array-api-strict on hypothesis-drawn inputs
    (tests/array_api; data-apis/array-api-tests itself is not on PyPI)."""
    install_packages(session, chain("tensor-core"))
    session.install(*TEST_DEPS, *ARRAY_API_DEPS)
    session.run("python", "-m", "pytest", "tests/array_api", *session.posargs)


@nox.session
def fidelity(session: nox.Session) -> None:
    """The fidelity instruments in full (tests/fidelity): the differential sweep of every op
    against PyTorch and the bad-input fuzzer, each writing its report under build/fidelity
    (CI runs a recorded sample of both within ``tests``)."""
    install_packages(session, PRESENT)
    session.install("ml_dtypes")
    install_oracle(session, required=True)
    for instrument in ("sweep", "fuzz"):
        report = f"build/fidelity/{instrument}.md"
        session.run("python", "-m", f"tests.fidelity.{instrument}", "--full", "--report", report)


@nox.session
@nox.parametrize("package", PRESENT)
def tests_package(session: nox.Session, package: str) -> None:
    """One package's tests, on its dependency chain alone (catches undeclared imports)."""
    install_packages(session, chain(package))
    session.install(
        *TEST_DEPS,
        "ml_dtypes",
        *PLUGINS,
        *(ONNX_TEST_DEPS if package == "onnx" else ()),
        *(COMPILER_TEST_DEPS if package == "compiler" else ()),
    )
    folder = test_folder(package)
    if not (ROOT / folder).is_dir():
        session.skip(f"{folder} does not exist yet")
    session.run("python", "-m", "pytest", folder, *session.posargs)


@nox.session
def build(session: nox.Session) -> None:
    """Wheel and sdist of every package into dist/, in dependency order, then the pre-upload
    checks of scripts/release.py: only tocha-core's wheel may (and must) ship
    tocha/__init__.py, each wheel holds only its own package's files, metadata is complete,
    and ``twine check`` passes."""
    session.install("build", *RELEASE_DEPS)
    shutil.rmtree(ROOT / "dist", ignore_errors=True)
    session.run("python", "scripts/release.py", "build", "--outdir", "dist")


@nox.session
def publish(session: nox.Session) -> None:
    """Upload dist/ (from ``nox -s build``) in dependency order with twine:
    ``nox -s publish -- --repository-url URL [--index-url URL]``. Credentials come from
    TWINE_USERNAME and TWINE_PASSWORD; files the index already has are skipped."""
    session.install(*RELEASE_DEPS)
    session.run("python", "scripts/release.py", "publish", *session.posargs)


@nox.session
def release_check(session: nox.Session) -> None:
    """The release flow against a real index: pypiserver on 127.0.0.1, publish, installs in
    fresh virtual environments, bumps in a copy of the repository (tests/release)."""
    session.install("build", "hatchling", "pypiserver[passlib]", *RELEASE_DEPS)
    session.run("python", "tests/release/release_check.py", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check (settings in ruff.toml)."""
    session.install("ruff")
    paths = [
        p
        for p in ("packages", "tests", "benchmarks", "examples", "scripts", "docs", "noxfile.py")
        if (ROOT / p).exists()
    ]
    session.run("ruff", "check", *paths)
    session.run("ruff", "format", "--check", *paths)


def public_sources() -> list[str]:
    """The packages' public modules: every .py and .pyi under packages/*/src outside
    underscore folders, less private modules (``_x.py``) and modules a stub replaces; the stubs
    themselves (tocha/_tensor.pyi included) are the public surface."""
    files = []
    for path in sorted(ROOT.glob("packages/*/src/**/*.py*")):
        inside = path.relative_to(ROOT).parts[3:]
        if path.suffix not in (".py", ".pyi") or any(p.startswith("_") for p in inside[:-1]):
            continue
        private = path.name.startswith("_") and path.stem != "__init__"
        if path.suffix == ".py" and (private or path.with_suffix(".pyi").exists()):
            continue
        files.append(str(path.relative_to(ROOT)))
    return files


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy, with the settings of mypy.ini: the packages' public modules and stubs, checked
    for undefined attributes and names, wrong arguments and missing imports; then examples/
    and tests/typing/user_program.py with ``--strict``, as a user's program is checked.
    mypy reads the packages from their source folders (mypy.ini's ``mypy_path``), so only
    mypy and NumPy, whose types tocha's use, are installed. mypy takes about 20 s (10 s with
    its cache)."""
    session.install(MYPY, "numpy")
    session.run("mypy", *public_sources())
    session.run("mypy", "--strict", "examples", "tests/typing/user_program.py")


@nox.session
def bench(session: nox.Session) -> None:
    """The benchmarks, tocha beside PyTorch when PyTorch can be installed."""
    install_packages(session, PRESENT)
    session.install(*MPI_DEPS, "matplotlib")
    install_oracle(session, required=False)
    session.run("python", "benchmarks/run.py", *session.posargs)
    session.run("python", "benchmarks/peak_memory.py")


@nox.session
def api_report(session: nox.Session) -> None:
    """How much of PyTorch's public API tocha has, per namespace (from the committed list of
    torch's names: PyTorch is not needed)."""
    install_packages(session, PRESENT)
    session.run("python", "scripts/api_report.py", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """The main job: a CNN on scikit-learn's digits (test accuracy, a checkpoint reloaded, the
    loss curves in build/demo/digits/loss.png), then a character-level GPT on Python's own
    sources, which prints generated samples. About 20 seconds of training on a 2-core AVX-512
    machine with tocha-onednn (4.7 s and 15.6 s; 24 s and 9 min 47 s on a busy AVX2 one before
    matrix products ran on oneDNN); ``--quick`` (3 epochs, then 100 steps of a smaller GPT)
    2.3 s and 1.6 s.

    Arguments after ``--`` go to both scripts: ``--quick``, ``--device cuda`` (tocha-cuda;
    TOCHA_CUDA=1 installs CuPy), ``--workers N``, ``--seed N``."""
    install_packages(session, [p for p in PRESENT if p in DEMO_PACKAGES])
    session.install("scikit-learn", "matplotlib")
    session.run("python", "examples/digits.py", *session.posargs)
    session.run("python", "examples/char_gpt.py", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """The API documentation of every package, from the docstrings, into build/docs
    (mkdocs + mkdocstrings; ``mkdocs build --strict``, so a warning fails it)."""
    install_packages(session, [p for p in PRESENT if p not in NO_DEPS])
    session.install(*DOCS_DEPS)
    session.run("mkdocs", "build", "--strict", "-f", "docs/mkdocs.yml", *session.posargs)
