"""The release flow, proven against a real package index (``nox -s release_check``, run by CI).

It builds every package, starts pypiserver on 127.0.0.1 (uploads need a password made up for
the run, given to twine through TWINE_USERNAME/TWINE_PASSWORD), and publishes with
``scripts/release.py publish``: a package whose dependency the index lacks, and a wheel with
another package's files, are refused first. Then, in fresh virtual environments holding what
the chain needs from PyPI (NumPy, tqdm...), it installs from that index alone: tocha-core,
tocha-nn (bringing tocha-autograd and tocha-core only), tocha-utils (bringing tocha-mp), and
the testdev backend plugin, each used. Last, in a copy of the repository, it bumps tocha-core
to 0.1.1 (admitted by the dependents' ranges) and to 0.2.0 (refused by bump.py, then widened,
but refused by the published tocha-nn chain; a changed tocha-autograd under its old version is
refused too).
The server is stopped at the end, whatever happened.

Needs build, hatchling, twine, packaging and pypiserver[passlib] (the nox session installs
them) and PyPI for NumPy and tqdm. Exits non-zero at the first failed check.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from bump import add_note  # noqa: E402
from monorepo import load_packages, read_version  # noqa: E402
from packaging.requirements import Requirement  # noqa: E402
from packaging.utils import canonicalize_name  # noqa: E402
from release import Index  # noqa: E402

COMMAND_TIMEOUT = 300  # seconds, for any one command
SERVER_START = 60  # seconds the index may take to answer
IGNORE = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")

USE = {
    "tocha-core": (
        "import tocha\n"
        "t = tocha.arange(6.0).reshape(2, 3) @ tocha.ones(3, 2)\n"
        "assert t.tolist() == [[3.0, 3.0], [12.0, 12.0]], t\n"
    ),
    "tocha-nn": (
        "import tocha, tocha.nn as nn\n"
        "layer = nn.Linear(3, 2)\n"
        "layer(tocha.ones(4, 3)).sum().backward()\n"
        "assert tuple(layer.weight.grad.shape) == (2, 3)\n"
    ),
    "tocha-utils": (
        "import tocha\n"
        "from tocha.utils.data import DataLoader, TensorDataset\n"
        "loader = DataLoader(TensorDataset(tocha.arange(10.0)), batch_size=4)\n"
        "assert [len(batch) for (batch,) in loader] == [4, 4, 2]\n"
    ),
    "tocha-testdev": (
        "import tocha\n"
        "t = tocha.ones(3, device='testdev')\n"
        "assert t.device.type == (t + t).device.type == 'testdev', t.device\n"
        "assert (t + t).tolist() == [2.0, 2.0, 2.0]\n"
    ),
}

LIST_DISTRIBUTIONS = (
    "import importlib.metadata as m, json\n"
    "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))\n"
)


class CheckFailed(Exception):
    """A check of the release flow failed; the message says which and shows the output."""


def expect(condition: object, message: str) -> None:
    """Fail the check with `message` unless `condition` holds."""
    if not condition:
        raise CheckFailed(message)


def sh(*command: object, env: dict[str, str] | None = None, ok: bool = True) -> str:
    """Run a command; its output (stdout and stderr), or CheckFailed when it exits zero
    where `ok` is false or non-zero where `ok` is true."""
    args = [str(c) for c in command]
    result = subprocess.run(args, capture_output=True, text=True, env=env, timeout=COMMAND_TIMEOUT)
    output = result.stdout + result.stderr
    if (result.returncode == 0) != ok:
        expected = "success" if ok else "a refusal"
        raise CheckFailed(f"expected {expected}, got {result.returncode}: {args}\n{output}")
    return output


@contextmanager
def step(title: str) -> Iterator[None]:
    """Print a step's title, then its duration when it passes."""
    print(f"- {title}", flush=True)
    start = time.monotonic()
    yield
    print(f"  ok ({time.monotonic() - start:.1f} s)", flush=True)


class IndexServer:
    """pypiserver on 127.0.0.1, uploads behind a password made up for this run; a context
    manager that stops it on exit, whatever happened."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.user = "release-check"
        self.password = secrets.token_urlsafe(16)
        self.process: subprocess.Popen | None = None
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.simple = self.url + "simple/"

    def __enter__(self) -> IndexServer:
        from passlib.apache import HtpasswdFile

        (self.workdir / "packages").mkdir(parents=True)
        passwords = HtpasswdFile(str(self.workdir / "htpasswd"), new=True)
        passwords.set_password(self.user, self.password)
        passwords.save()
        self.log = (self.workdir / "server.log").open("w")
        command = [sys.executable, "-m", "pypiserver", "run", "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--disable-fallback", "--hash-algo", "sha256"]
        command += ["--passwords", str(self.workdir / "htpasswd"), "--authenticate", "update"]
        command += [str(self.workdir / "packages")]
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        try:
            self._wait_until_up()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + SERVER_START
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise CheckFailed(f"pypiserver exited:\n{self.server_log()}")
            try:
                with urllib.request.urlopen(self.simple, timeout=5):
                    return
            except OSError:
                time.sleep(0.2)
        raise CheckFailed(f"pypiserver did not answer in {SERVER_START} s:\n{self.server_log()}")

    def server_log(self) -> str:
        """What the server printed."""
        return (self.workdir / "server.log").read_text()

    def __exit__(self, *exc_info: object) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.log.close()
        print(f"- index server stopped (exit status {self.process.returncode})", flush=True)

    def publish(self, dist: Path, root: Path = ROOT, ok: bool = True) -> str:
        """``scripts/release.py publish`` of `dist` to this index, credentials in the
        environment; its output."""
        env = dict(os.environ, TWINE_USERNAME=self.user, TWINE_PASSWORD=self.password)
        script = root / "scripts" / "release.py"
        publish = [sys.executable, script, "publish", "--repository-url", self.url]
        output = sh(*publish, "--dist", dist, env=env, ok=ok)
        print("    " + output.strip().replace("\n", "\n    "), flush=True)
        return output

    def files(self, name: str) -> set[str]:
        """The file names the index has for distribution `name`."""
        return set(Index(self.simple).files(name))


def index_only_env() -> dict[str, str]:
    """The environment for pip to see the local index alone: no pip configuration file nor
    PIP_* variables (find-links, extra index URLs) of this machine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return dict(env, PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")


def pypi_requirements(name: str) -> list[str]:
    """The requirements of distribution `name` and of the siblings it depends on, directly or
    not, that come from PyPI (numpy, tqdm...)."""
    packages = {p.key: p for p in load_packages(ROOT)}
    todo, seen, external = [name], set(), []
    while todo:
        package = packages[todo.pop()]
        seen.add(package.key)
        for raw in package.requires:
            key = canonicalize_name(Requirement(raw).name)
            if key not in packages and raw not in external:
                external.append(raw)
            elif key in packages and key not in seen:
                todo.append(key)
    return external


class Venv:
    """A fresh virtual environment, filled by this environment's pip from the local index and
    from a folder of wheels downloaded from PyPI (what tocha needs from elsewhere) alone."""

    def __init__(self, path: Path, server: IndexServer, wheelhouse: Path) -> None:
        sh(sys.executable, "-m", "venv", "--without-pip", path)
        self.python = path / "bin" / "python"
        self.server = server
        self.wheelhouse = wheelhouse

    def pip(self, *args: object, ok: bool = True) -> str:
        """Run pip on this environment, blind to this machine's pip configuration."""
        pip = [sys.executable, "-m", "pip", "--python", self.python]
        return sh(*pip, *args, env=index_only_env(), ok=ok)

    def install(self, *args: object, ok: bool = True) -> str:
        """``pip install`` from the local index and the wheelhouse alone."""
        sources = ["--index-url", self.server.simple, "--find-links", self.wheelhouse]
        return self.pip("install", "--no-cache-dir", *sources, *args, ok=ok)

    def tocha(self) -> dict[str, str]:
        """The tocha distributions installed: name -> version."""
        listed = json.loads(sh(self.python, "-c", LIST_DISTRIBUTIONS))
        names = {canonicalize_name(name): version for name, version in listed.items()}
        return {name: version for name, version in names.items() if name.startswith("tocha")}

    def use(self, name: str) -> None:
        """Run the snippet that uses distribution `name`."""
        sh(self.python, "-c", USE[name])


def copy_files(files: list[Path], folder: Path) -> Path:
    """A new folder holding copies of `files`."""
    folder.mkdir()
    for path in files:
        shutil.copy2(path, folder)
    return folder


def tamper(wheel: Path, folder: Path, name: str) -> Path:
    """A copy of `wheel` in a new `folder` with a file `name` added."""
    folder.mkdir()
    shutil.copy2(wheel, folder)
    with zipfile.ZipFile(folder / wheel.name, "a") as archive:
        archive.writestr(name, "")
    return folder


def bad_input(work: Path, dist: Path, server: IndexServer) -> None:
    """Refusals before any upload: a missing dependency, another package's files."""
    with step("publish tocha-nn alone: refused, tocha-autograd is not on the index"):
        only_nn = copy_files(sorted(dist.glob("tocha_nn-*")), work / "only-nn")
        output = server.publish(only_nn, ok=False)
        expect("needs tocha-autograd" in output, "the refusal does not name tocha-autograd")
        expect(not server.files("tocha-nn"), "tocha-nn was uploaded all the same")
    with step("publish a tocha-core wheel holding tocha/nn files: refused"):
        wheel = next(dist.glob("tocha_core-*.whl"))
        bad = tamper(wheel, work / "tampered", "tocha/nn/stray.py")
        shutil.copy2(next(dist.glob("tocha_core-*.tar.gz")), bad)
        output = server.publish(bad, ok=False)
        expect("tocha/nn/stray.py belongs to tocha-nn" in output, "no clear refusal")
        expect(not server.files("tocha-core"), "tocha-core was uploaded all the same")


def installs(work: Path, server: IndexServer) -> dict[str, Venv]:
    """Install from the index alone, in fresh virtual environments; the environments."""
    cases = {
        "tocha-core": {"tocha-core"},
        "tocha-nn": {"tocha-core", "tocha-autograd", "tocha-nn"},
        "tocha-utils": {"tocha-core", "tocha-mp", "tocha-utils"},
    }
    wheelhouse = work / "wheelhouse"
    with step("download what the packages need from PyPI (NumPy, tqdm...) into a wheelhouse"):
        needed = sorted({r for name in cases for r in pypi_requirements(name)})
        download = [sys.executable, "-m", "pip", "download", "--only-binary", ":all:"]
        sh(*download, "--dest", wheelhouse, *needed)
        tocha = [p.name for p in wheelhouse.iterdir() if p.name.startswith("tocha")]
        expect(not tocha, f"the wheelhouse holds tocha files: {tocha}")
    venvs = {}
    for name, expected in cases.items():
        with step(f"fresh venv: pip install {name} from the index alone, then use it"):
            venv = venvs[name] = Venv(work / f"venv-{name}", server, wheelhouse)
            venv.install(name)
            expect(set(venv.tocha()) == expected, f"{name} brought {venv.tocha()}")
            venv.use(name)
    with step("fresh venv: the tocha-testdev plugin (built here), tocha-core from the index"):
        plugin = work / "plugin"
        testdev = ROOT / "tests" / "plugins" / "tocha-testdev"
        sh(sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", plugin, testdev)
        venv = Venv(work / "venv-plugin", server, wheelhouse)
        venv.install(next(plugin.glob("*.whl")))
        expect(set(venv.tocha()) == {"tocha-core", "tocha-testdev"}, f"got {venv.tocha()}")
        venv.use("tocha-testdev")
    return venvs


def bumps(work: Path, server: IndexServer, venvs: dict[str, Venv]) -> None:
    """tocha-core 0.1.1 then 0.2.0, bumped and published from a copy of the repository."""
    copy = work / "repo"
    for folder in ("packages", "scripts"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=IGNORE)
    core = copy / "packages" / "tensor-core"
    changelog = core / "CHANGELOG.md"
    bump = [sys.executable, copy / "scripts" / "bump.py", "tocha-core"]

    def build(folder: str, outdir: Path) -> None:
        source = copy / "packages" / folder
        sh(sys.executable, "-m", "build", "--no-isolation", "--outdir", outdir, source)

    with step("bump tocha-core to 0.1.1 in a copy; publish; tocha-nn's chain admits it"):
        changelog.write_text(add_note(changelog.read_text(), "A fix."))
        output = sh(*bump, "0.1.1")
        expect("tocha-core>=0.1,<0.2 admits 0.1.1" in output, output)
        real = read_version(ROOT / "packages" / "tensor-core" / "src" / "tocha" / "_version.py")
        expect(str(real) == "0.1.0", f"the real tree was changed: {real}")
        build("tensor-core", work / "dist-0.1.1")
        server.publish(work / "dist-0.1.1", root=copy)
        venv = venvs["tocha-nn"]
        venv.install("--upgrade", "tocha-core")
        expect(venv.tocha()["tocha-core"] == "0.1.1", f"got {venv.tocha()}")
        venv.pip("check")
        venv.use("tocha-nn")
    with step("bump tocha-core to 0.2.0: refused by bump.py, then --widen (in the copy)"):
        changelog.write_text(add_note(changelog.read_text(), "A breaking change."))
        output = sh(*bump, "0.2.0", ok=False)
        refusal = "tocha-autograd requires tocha-core>=0.1,<0.2, which excludes 0.2.0"
        expect(refusal in output, output)
        expect(str(read_version(core / "src" / "tocha" / "_version.py")) == "0.1.1", "written")
        output = sh(*bump, "0.2.0", "--widen")
        expect("widened to tocha-core>=0.1,<0.3" in output, output)
    with step("publish the widened tocha-autograd under its old version 0.1.0: refused"):
        build("tensor-core", work / "dist-0.2.0")
        build("autograd", work / "dist-0.2.0")
        output = server.publish(work / "dist-0.2.0", root=copy, ok=False)
        expect("already on the index with other contents" in output, output)
        expect(not any("0.2.0" in f for f in server.files("tocha-core")), "uploaded anyway")
    with step("publish tocha-core 0.2.0; tocha-nn's chain refuses it, tocha-core alone takes it"):
        for path in (work / "dist-0.2.0").glob("tocha_autograd-*"):
            path.unlink()
        server.publish(work / "dist-0.2.0", root=copy)
        venv = venvs["tocha-nn"]
        output = venv.install("tocha-nn", "tocha-core==0.2.0", ok=False)
        expect("tocha-autograd" in output and "conflict" in output.lower(), output)
        venv.install("--upgrade", "--upgrade-strategy", "eager", "tocha-nn")
        expect(venv.tocha()["tocha-core"] == "0.1.1", f"got {venv.tocha()}")
        venvs["tocha-core"].install("--upgrade", "tocha-core")
        expect(venvs["tocha-core"].tocha()["tocha-core"] == "0.2.0", "0.2.0 not installable")
        venvs["tocha-core"].use("tocha-core")


def main() -> int:
    """Run every check; the exit status."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("release_check: terminated"))
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tocha-release-") as tmp:
        work = Path(tmp)
        dist = work / "dist"
        try:
            with step("build every package, then the pre-upload checks (release.py build)"):
                release = [sys.executable, ROOT / "scripts" / "release.py"]
                out = sh(*release, "build", "--no-isolation", "--outdir", dist)
                checked = [line for line in out.splitlines() if "checked" in line]
                print("    " + "\n    ".join(checked), flush=True)
            with IndexServer(work / "index") as server:
                print(f"- index server up at {server.url}", flush=True)
                bad_input(work, dist, server)
                with step("publish every package in dependency order; again: all skipped"):
                    server.publish(dist)
                    output = server.publish(dist)
                    expect(output.count("skipped") == len(load_packages(ROOT)), output)
                venvs = installs(work, server)
                bumps(work, server, venvs)
        except CheckFailed as failure:
            print(f"release_check FAILED: {failure}", file=sys.stderr)
            return 1
    print(f"release_check: every check passed in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
