"""`tocha.hub`: pretrained weights and models from URLs and GitHub repositories, as
`torch.hub`.

- `load_state_dict_from_url` downloads a checkpoint once into ``<hub_dir>/checkpoints`` (a
  ``name-<sha256 prefix>.ext`` file name can be checked against its contents) and returns
  `tocha.load` of it; a zip archive holding a single file (the format before PyTorch 1.6) is
  extracted first.
- `load`, `list` and `help` run a repository's ``hubconf.py``: its ``dependencies`` are
  checked, then its entrypoints (the public callables) are listed, documented or called. The
  repository is a local folder (``source="local"``, `load` only) or a GitHub
  ``owner/name[:ref]`` whose archive is downloaded once into ``<hub_dir>/owner_name_ref``.
- The hub directory is `set_dir`'s, else ``$TORCH_HOME/hub``, where ``TORCH_HOME`` defaults
  to ``$XDG_CACHE_HOME/torch`` and ``XDG_CACHE_HOME`` to ``~/.cache``: the same folder as
  PyTorch's, so the two share downloads.

Downloads go through `urllib` (``http(s)://``, ``file://``...) with a timeout on every
network operation: offline, a call fails with a URLError instead of waiting.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import warnings
import zipfile
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

__all__ = [
    "download_url_to_file",
    "get_dir",
    "help",
    "list",
    "load",
    "load_state_dict_from_url",
    "set_dir",
]

# The hash prefix in a checkpoint's file name: "5c106cde" in "resnet18-5c106cde.pth".
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")

# Seconds that one network operation (connecting, one read) may take before it fails.
_NETWORK_TIMEOUT_S = 30.0
_CHUNK_BYTES = 1 << 17
_HUBCONF = "hubconf.py"
_TRUSTED_LIST = "trusted_list"
# Repositories of these GitHub owners are trusted without asking (as PyTorch's).
_TRUSTED_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")

_hub_dir: str | None = None


# -- the hub directory --------------------------------------------------------------------


def _torch_home() -> str:
    cache = os.getenv("XDG_CACHE_HOME", "~/.cache")
    return os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(cache, "torch")))


def get_dir() -> str:
    """The folder where the hub keeps downloaded repositories and checkpoints.

    It is the folder given to `set_dir` if any, else ``$TORCH_HOME/hub``; ``TORCH_HOME``
    defaults to ``$XDG_CACHE_HOME/torch``, and ``XDG_CACHE_HOME`` to ``~/.cache``.

    Example:
        >>> tocha.hub.get_dir()
        '/home/me/.cache/torch/hub'
    """
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_torch_home(), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Make `d` (``~`` expanded) the hub directory of this process (see `get_dir`)."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


# -- downloading ----------------------------------------------------------------------------


def _open(request: urllib.request.Request):
    """`urlopen` with a timeout. A failure other than an HTTP status is a URLError naming
    the URL (HTTPErrors pass through: their status is the answer)."""
    try:
        return urllib.request.urlopen(request, timeout=_NETWORK_TIMEOUT_S)
    except urllib.error.HTTPError:
        raise
    except urllib.error.URLError as exc:
        raise urllib.error.URLError(f"cannot open {request.full_url}: {exc.reason}") from exc
    except (TimeoutError, OSError) as exc:
        raise urllib.error.URLError(f"cannot open {request.full_url}: {exc}") from exc


class _Progress:
    """A one-line progress report on stderr: the percentage done, or the bytes so far when
    the size is unknown."""

    def __init__(self, total: int | None, enabled: bool):
        self.total = total
        self.enabled = enabled
        self.done = 0
        self.shown = -1.0

    def update(self, count: int) -> None:
        self.done += count
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.shown < 0.1 and (self.total is None or self.done < self.total):
            return
        self.shown = now
        if self.total:
            sys.stderr.write(f"\r{100 * self.done / self.total:5.1f}% of {_size(self.total)}")
        else:
            sys.stderr.write(f"\r{_size(self.done)}")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.shown >= 0:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _size(count: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    raise AssertionError("unreachable")


def download_url_to_file(
    url: str, dst: str, hash_prefix: str | None = None, progress: bool = True
) -> None:
    """Download `url` to the file `dst`.

    The bytes go to a temporary file beside `dst`, renamed to `dst` once complete (and
    checked), so `dst` is never left half written.

    Args:
        url: what to download (``https://``, ``http://``, ``file://``...).
        dst: the file to write (``~`` expanded); its folder must exist.
        hash_prefix: if given, the SHA-256 hex digest of the contents must start with it,
            else RuntimeError ``invalid hash value (expected "...", got "...")`` and `dst`
            is not written.
        progress: report the progress on stderr.

    Example:
        >>> tocha.hub.download_url_to_file("https://example.com/weights.pt", "/tmp/w.pt")
    """
    dst = os.path.expanduser(os.fspath(dst))
    request = urllib.request.Request(url, headers={"User-Agent": "tocha.hub"})
    with _open(request) as response:
        length = response.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        # A fresh name beside `dst`, created here ("x"), with the permissions of open().
        partial = f"{dst}.{uuid.uuid4().hex}.partial"
        out = open(partial, "xb")
        try:
            digest = hashlib.sha256()
            report = _Progress(total, progress)
            with out:
                while chunk := _read(response, url):
                    out.write(chunk)
                    digest.update(chunk)
                    report.update(len(chunk))
            report.close()
            if hash_prefix is not None:
                got = digest.hexdigest()
                if got[: len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(
                        f'invalid hash value (expected "{hash_prefix}", got "{got}")'
                    )
            os.replace(partial, dst)
        finally:
            if os.path.exists(partial):
                os.remove(partial)


def _read(response, url: str) -> bytes:
    try:
        return response.read(_CHUNK_BYTES)
    except TimeoutError as exc:
        raise urllib.error.URLError(
            f"reading {url} timed out ({_NETWORK_TIMEOUT_S:g} s without data)"
        ) from exc


def _is_single_file_zip(path: str) -> bool:
    """Whether `path` is a zip archive of one file: how checkpoints were shipped before
    PyTorch 1.6 made `save`'s own format a zip (of several records)."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
    return len(members) == 1 and not members[0].is_dir()


def load_state_dict_from_url(
    url: str,
    model_dir: str | None = None,
    map_location=None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    weights_only: bool = False,
) -> dict[str, Any]:
    """Load the checkpoint at `url`, downloading it first unless it is already in
    `model_dir`.

    A zip archive holding a single file (how checkpoints were shipped before PyTorch 1.6) is
    extracted into `model_dir` and that file is loaded.

    Args:
        url: where the checkpoint is.
        model_dir: the folder to keep it in; default ``<get_dir()>/checkpoints``.
        map_location: where storages go, as in `tocha.load`.
        progress: report the download's progress on stderr.
        check_hash: the file name must be ``name-<sha256 prefix>.ext``, the prefix being the
            first eight or more hex digits of the SHA-256 of the contents; the download is
            checked against it (RuntimeError if it differs).
        file_name: the name to keep the file under; default the last part of the URL's path.
        weights_only: load with ``weights_only`` (see `tocha.load`): advised for files from
            sources you do not trust.

    Returns:
        What `tocha.load` returns, usually a state dict.

    Example:
        >>> state = tocha.hub.load_state_dict_from_url(
        ...     "https://download.pytorch.org/models/resnet18-f37072fd.pth", map_location="cpu"
        ... )
    """
    from .serialization import load as load_file

    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn(
            "TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2
        )
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name if file_name is not None else os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        sys.stderr.write(f'Downloading: "{url}" to {cached}\n')
        match = HASH_REGEX.search(name) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    if _is_single_file_zip(cached):
        warnings.warn(
            "Falling back to the old format < 1.6. This support will be deprecated in favor of "
            "default zipfile format introduced in 1.6. Please redo torch.save() to save it in "
            "the new zipfile format.",
            FutureWarning,
            stacklevel=2,
        )
        with zipfile.ZipFile(cached) as archive:
            (member,) = archive.infolist()
            cached = archive.extract(member, model_dir)
    return load_file(cached, map_location=map_location, weights_only=weights_only)


# -- repositories: hubconf.py ---------------------------------------------------------------


@contextlib.contextmanager
def _first_on_sys_path(folder: str) -> Iterator[None]:
    """The repository's folder first on `sys.path` for the block, so that ``hubconf.py``
    imports its own modules."""
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)


def _run_hubconf(folder: str) -> ModuleType:
    """``<folder>/hubconf.py``, executed as a fresh module (not kept in `sys.modules`)."""
    spec = importlib.util.spec_from_file_location("hubconf", os.path.join(folder, _HUBCONF))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a dotted name whose parent is missing
        return False


def _entrypoint(hubconf: ModuleType, model: str) -> Callable:
    """The callable `model` of `hubconf`, once its ``dependencies`` are all installed."""
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [
        name for name in getattr(hubconf, "dependencies", None) or () if not _installed(name)
    ]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    entry = getattr(hubconf, model, None) if model in dir(hubconf) else None
    if entry is None or not callable(entry):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return entry


# -- repositories on GitHub -----------------------------------------------------------------


def _repository(github: str) -> tuple[str, str, str]:
    """``owner/name[:ref]`` -> (owner, name, ref). Without a ref, the default branch: "main"
    if the repository has one, else "master"; offline, whichever of the two is cached."""
    repo, colon, ref = github.partition(":")
    owner, slash, name = repo.partition("/")
    if not (owner and slash and name) or "/" in name or (colon and (not ref or ":" in ref)):
        raise ValueError(
            f"{github!r} is not a GitHub repository: expected 'repo_owner/repo_name[:ref]'"
        )
    if colon:
        return owner, name, ref
    probe = urllib.request.Request(f"https://github.com/{owner}/{name}/tree/main/")
    try:
        with _open(probe):
            return owner, name, "main"
    except urllib.error.HTTPError as exc:
        if exc.code != 404:
            raise
        return owner, name, "master"
    except urllib.error.URLError as exc:
        for branch in ("main", "master"):
            if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{branch}")):
                return owner, name, branch
        raise RuntimeError(
            "It looks like there is no internet connection and the repo could not be found in "
            f"the cache ({get_dir()})"
        ) from exc


def _check_trusted(owner: str, name: str, cache_name: str, trust_repo) -> None:
    """Ask whether to trust ``owner/name`` when `trust_repo` is False, or is "check" and the
    repository is not trusted yet; remember it as trusted in ``<hub_dir>/trusted_list``.

    Trusted are: the repositories listed there, those already downloaded (under
    `cache_name`, before the list existed) and those of a few owners (PyTorch's)."""
    hub_dir = get_dir()
    listing = os.path.join(hub_dir, _TRUSTED_LIST)
    if not os.path.exists(listing):
        open(listing, "a").close()
    with open(listing) as stream:
        trusted = {line.strip() for line in stream}
    owner_name = f"{owner}_{name}"
    downloaded = os.path.isdir(os.path.join(hub_dir, cache_name))
    is_trusted = owner_name in trusted or downloaded or owner in _TRUSTED_OWNERS
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        answer = input(
            f"The repository {owner_name} does not belong to the list of trusted repositories "
            "and as such cannot be downloaded. Do you trust this repository and wish to add it "
            "to the trusted list of repositories (y/N)?"
        ).lower()
        if answer in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # PyTorch's type and message
        if answer not in ("y", "yes"):
            raise ValueError(f"Unrecognized response {answer}.")
        if is_trusted:
            print("The repository is already trusted.")
    if not is_trusted:
        with open(listing, "a") as stream:
            stream.write(owner_name + "\n")


def _github_json(url: str) -> Any:
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get("GITHUB_TOKEN")
    if token is not None:
        headers["Authorization"] = f"token {token}"
    with _open(urllib.request.Request(url, headers=headers)) as response:
        return json.loads(response.read().decode("utf-8"))


def _check_ref_of_repository(owner: str, name: str, ref: str) -> None:
    """ValueError unless `ref` names a branch or a tag of ``owner/name`` (or is a prefix of
    one's commit): a commit of a fork cannot be fetched through its parent's name."""
    for kind in ("branches", "tags"):
        page = 1
        while entries := _github_json(
            f"https://api.github.com/repos/{owner}/{name}/{kind}?per_page=100&page={page}"
        ):
            for entry in entries:
                if entry["name"] == ref or entry["commit"]["sha"].startswith(ref):
                    return
            page += 1
    raise ValueError(
        f"Cannot find {ref} in https://github.com/{owner}/{name}. If it's a commit from a forked "
        "repo, please call hub.load() with forked repo directly."
    )


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def _github_folder(
    github: str, force_reload: bool, trust_repo, verbose: bool, skip_validation: bool
) -> str:
    """The local folder of the GitHub repository `github` (``owner/name[:ref]``):
    ``<hub_dir>/<owner>_<name>_<ref>`` (a ``/`` in the ref as ``_``), downloaded unless it is
    there already (or `force_reload`)."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _repository(github)
    flat_ref = ref.replace("/", "_")
    cache_name = f"{owner}_{name}_{flat_ref}"
    folder = os.path.join(hub_dir, cache_name)
    _check_trusted(owner, name, cache_name, trust_repo)
    if not force_reload and os.path.exists(folder):
        if verbose:
            sys.stderr.write(f"Using cache found in {folder}\n")
        return folder
    if not skip_validation:
        _check_ref_of_repository(owner, name, ref)
    archive = os.path.join(hub_dir, f"{flat_ref}.zip")
    _remove(archive)
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    sys.stderr.write(f'Downloading: "{url}" to {archive}\n')
    try:
        download_url_to_file(url, archive, progress=False)
    except urllib.error.HTTPError as exc:
        if exc.code != 300:  # 300: both a branch and a tag have this name
            raise
        warnings.warn(
            f"The ref {ref} is ambiguous (perhaps both a tag and a branch of the repository): "
            "downloading the branch. Pass refs/heads/<name> or refs/tags/<name> as the ref to "
            "choose (with skip_validation=True).",
            stacklevel=3,
        )
        url = f"https://github.com/{owner}/{name}/zipball/refs/heads/{ref}"
        download_url_to_file(url, archive, progress=False)
    try:
        with zipfile.ZipFile(archive) as zipped:
            # GitHub's archive holds one folder, "<owner>-<name>-<commit>/".
            top = zipped.namelist()[0].split("/")[0]
            extracted = os.path.join(hub_dir, top)
            _remove(extracted)
            zipped.extractall(hub_dir)
    finally:
        _remove(archive)
    _remove(folder)
    shutil.move(extracted, folder)
    return folder


# -- the public entry points ----------------------------------------------------------------


def list(  # torch.hub's name, shadowing the builtin here (hence builtins.list)
    github: str,
    force_reload: bool = False,
    skip_validation: bool = False,
    trust_repo="check",
    verbose: bool = True,
) -> builtins.list[str]:
    """The entrypoints of the GitHub repository `github`: the callables of its
    ``hubconf.py`` whose name does not start with ``_``.

    Args:
        github: ``repo_owner/repo_name[:ref]``; the ref (a branch, a tag or a commit)
            defaults to ``main`` if the repository has one, else ``master``.
        force_reload: download the repository again even if it is cached.
        skip_validation: do not ask GitHub's API whether the ref belongs to the repository
            (``GITHUB_TOKEN`` gives the API a token).
        trust_repo: ``"check"`` asks whether to trust a repository not trusted yet; False
            always asks; True (or None) trusts it. A trusted repository is remembered in
            ``<hub_dir>/trusted_list``.
        verbose: say on stderr when the cached copy is used.

    Example:
        >>> tocha.hub.list("pytorch/vision")
    """
    folder = _github_folder(github, force_reload, trust_repo, verbose, skip_validation)
    with _first_on_sys_path(folder):
        hubconf = _run_hubconf(folder)
    return [n for n in dir(hubconf) if not n.startswith("_") and callable(getattr(hubconf, n))]


def help(  # torch.hub's name
    github: str,
    model: str,
    force_reload: bool = False,
    skip_validation: bool = False,
    trust_repo="check",
) -> str | None:
    """The docstring of the entrypoint `model` of the GitHub repository `github` (the
    arguments as in `list`).

    Example:
        >>> print(tocha.hub.help("pytorch/vision", "resnet18"))
    """
    folder = _github_folder(github, force_reload, trust_repo, True, skip_validation)
    with _first_on_sys_path(folder):
        hubconf = _run_hubconf(folder)
    return _entrypoint(hubconf, model).__doc__


def load(
    repo_or_dir: str | os.PathLike,
    model: str,
    *args,
    source: str = "github",
    trust_repo="check",
    force_reload: bool = False,
    verbose: bool = True,
    skip_validation: bool = False,
    **kwargs,
) -> Any:
    """Call the entrypoint `model` of a repository's ``hubconf.py`` with `args` and `kwargs`
    and return what it returns (usually a model).

    The packages named in the hubconf's ``dependencies`` must be installed (RuntimeError
    ``Missing dependencies: ...`` otherwise); the repository's folder is first on `sys.path`
    while the hubconf runs and while the entrypoint is called.

    Args:
        repo_or_dir: with ``source="github"``, ``repo_owner/repo_name[:ref]`` (see `list`);
            with ``source="local"``, the folder holding ``hubconf.py``.
        model: the entrypoint's name.
        source: ``"github"`` or ``"local"``.
        trust_repo, force_reload, skip_validation: as in `list` (GitHub only).
        verbose: say on stderr when the cached copy of a GitHub repository is used.

    Example:
        >>> net = tocha.hub.load("path/to/repo", "resnet18", source="local", pretrained=False)
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        folder = _github_folder(
            os.fspath(repo_or_dir), force_reload, trust_repo, verbose, skip_validation
        )
    else:
        folder = os.fspath(repo_or_dir)
    with _first_on_sys_path(folder):
        hubconf = _run_hubconf(folder)
        return _entrypoint(hubconf, model)(*args, **kwargs)
