"""tocha.hub and tocha.utils.model_zoo, offline: downloads from ``file://`` URLs into a
temporary hub directory, repositories as a ``hubconf.py`` written into tmp_path, and GitHub
played by a stand-in for `urllib.request.urlopen` (archives, the API, no network at all).
The messages a PyTorch program may match are PyTorch's (checked against it through the
`torch` fixture where the question does not depend on files it would write)."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tocha
import tocha.hub as hub
import tocha.utils

REAL_URLOPEN = urllib.request.urlopen
STATE = {"weight": np.arange(6, dtype=np.float32).reshape(2, 3), "step": np.array([7])}


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    """A fresh hub directory set with `set_dir` (the previous setting restored after)."""
    monkeypatch.setattr(hub, "_hub_dir", None)
    folder = tmp_path / "hub"
    hub.set_dir(folder)
    return folder


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _checkpoint(path: Path) -> Path:
    tocha.save({k: tocha.tensor(v) for k, v in STATE.items()}, path)
    return path


def _assert_state(loaded: dict) -> None:
    assert sorted(loaded) == sorted(STATE)
    for key, value in STATE.items():
        np.testing.assert_array_equal(loaded[key].numpy(), value)


def _no_partial_files(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if p.name.endswith(".partial")]


# -- the hub directory --------------------------------------------------------------------


def test_get_dir_follows_torch_home_then_xdg_cache_home_then_home(tmp_path, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TORCH_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert hub.get_dir() == str(tmp_path / "home" / ".cache" / "torch" / "hub")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    monkeypatch.setenv("TORCH_HOME", "~/th")
    assert hub.get_dir() == str(tmp_path / "home" / "th" / "hub")
    hub.set_dir("~/elsewhere")  # set_dir wins over the environment, ~ expanded
    assert hub.get_dir() == str(tmp_path / "home" / "elsewhere")
    hub.set_dir(tmp_path / "as_path")
    assert hub.get_dir() == str(tmp_path / "as_path")


def test_torch_hub_variable_is_deprecated(hub_dir, monkeypatch):
    monkeypatch.setenv("TORCH_HUB", "/somewhere")
    with pytest.warns(UserWarning, match="TORCH_HUB is deprecated, please use env TORCH_HOME"):
        assert hub.get_dir() == str(hub_dir)


def test_hub_is_an_attribute_of_tocha_and_model_zoo_reexports_it():
    assert tocha.hub is hub
    assert "hub" in dir(tocha)
    assert set(hub.__all__) == {
        "download_url_to_file",
        "get_dir",
        "help",
        "list",
        "load",
        "load_state_dict_from_url",
        "set_dir",
    }
    assert "model_zoo" in dir(tocha.utils)
    assert tocha.utils.model_zoo.load_url is hub.load_state_dict_from_url
    from tocha.utils.model_zoo import load_url

    assert load_url is hub.load_state_dict_from_url


# -- download_url_to_file ---------------------------------------------------------------------


def test_download_writes_the_bytes_and_checks_the_hash_prefix(tmp_path):
    source = tmp_path / "blob.bin"
    source.write_bytes(bytes(range(256)) * 4000)  # several read chunks
    digest = _sha256(source)
    out = tmp_path / "out"
    out.mkdir()
    hub.download_url_to_file(source.as_uri(), str(out / "plain.bin"), progress=False)
    hub.download_url_to_file(source.as_uri(), str(out / "hashed.bin"), digest[:10], False)
    hub.download_url_to_file(source.as_uri(), out / "full.bin", digest, progress=False)
    for name in ("plain.bin", "hashed.bin", "full.bin"):
        assert (out / name).read_bytes() == source.read_bytes()
    assert _no_partial_files(out)


def test_a_wrong_hash_raises_and_leaves_no_file(tmp_path, torch):
    source = tmp_path / "blob.bin"
    source.write_bytes(b"tocha hub")
    messages = []
    for lib in (torch, tocha):
        dst = tmp_path / f"{lib.__name__}.bin"
        with pytest.raises(RuntimeError) as info:
            lib.hub.download_url_to_file(source.as_uri(), str(dst), "0123abcd", progress=False)
        messages.append(str(info.value))
    assert messages[1] == messages[0]
    assert messages[1] == f'invalid hash value (expected "0123abcd", got "{_sha256(source)}")'
    assert not (tmp_path / "tocha.bin").exists() and _no_partial_files(tmp_path)


def test_download_reports_progress_on_stderr(tmp_path, capsys):
    source = tmp_path / "blob.bin"
    source.write_bytes(b"x" * 3000)
    hub.download_url_to_file(source.as_uri(), str(tmp_path / "a.bin"))
    assert "100.0% of 3.0 kB" in capsys.readouterr().err
    hub.download_url_to_file(source.as_uri(), str(tmp_path / "b.bin"), progress=False)
    assert capsys.readouterr().err == ""


def test_a_missing_source_is_a_url_error_naming_it(tmp_path):
    url = (tmp_path / "absent.pt").as_uri()
    with pytest.raises(urllib.error.URLError, match="absent.pt"):
        hub.download_url_to_file(url, str(tmp_path / "x.pt"), progress=False)
    assert not (tmp_path / "x.pt").exists() and _no_partial_files(tmp_path)


# -- load_state_dict_from_url -----------------------------------------------------------------


def test_load_state_dict_from_url_downloads_once_into_checkpoints(tmp_path, hub_dir, capsys):
    source = _checkpoint(tmp_path / "net-weights.pt")
    url = source.as_uri()
    _assert_state(hub.load_state_dict_from_url(url, progress=False))
    cached = hub_dir / "checkpoints" / "net-weights.pt"
    assert cached.read_bytes() == source.read_bytes()
    assert f'Downloading: "{url}" to {cached}\n' in capsys.readouterr().err
    source.unlink()  # the cached copy is used from now on
    _assert_state(hub.load_state_dict_from_url(url))
    assert "Downloading" not in capsys.readouterr().err


def test_load_state_dict_from_url_uses_torch_home(tmp_path, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    source = _checkpoint(tmp_path / "w.pt")
    _assert_state(hub.load_state_dict_from_url(source.as_uri(), progress=False))
    assert (tmp_path / "torch_home" / "hub" / "checkpoints" / "w.pt").is_file()


def test_model_dir_file_name_map_location_and_weights_only(tmp_path, hub_dir):
    source = _checkpoint(tmp_path / "w.pt")
    model_dir = tmp_path / "models"
    loaded = tocha.utils.model_zoo.load_url(
        source.as_uri(),
        model_dir=str(model_dir),
        map_location="cpu",
        progress=False,
        file_name="renamed.pth",
        weights_only=True,
    )
    _assert_state(loaded)
    assert loaded["weight"].device == tocha.device("cpu")
    assert os.listdir(model_dir) == ["renamed.pth"]
    assert not (hub_dir / "checkpoints").exists()


def test_check_hash_takes_the_prefix_from_the_file_name(tmp_path, hub_dir):
    plain = _checkpoint(tmp_path / "w.pt")
    good = tmp_path / f"resnet-{_sha256(plain)[:8]}.pt"
    bad = tmp_path / "resnet-0000beef.pt"
    plain.rename(good)
    bad.write_bytes(good.read_bytes())
    _assert_state(hub.load_state_dict_from_url(good.as_uri(), check_hash=True, progress=False))
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "0000beef", got'):
        hub.load_state_dict_from_url(bad.as_uri(), check_hash=True, progress=False)
    assert not (hub_dir / "checkpoints" / bad.name).exists()
    # Without check_hash, the name is not checked.
    _assert_state(hub.load_state_dict_from_url(bad.as_uri(), progress=False))


def test_a_zip_of_one_file_is_the_legacy_format_extracted_first(tmp_path, hub_dir):
    inner = _checkpoint(tmp_path / "inner.pt")
    archive = tmp_path / "legacy.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(inner, "model.pt")
    with pytest.warns(FutureWarning, match="Falling back to the old format < 1.6"):
        loaded = hub.load_state_dict_from_url(archive.as_uri(), progress=False)
    _assert_state(loaded)
    checkpoints = hub_dir / "checkpoints"
    assert sorted(os.listdir(checkpoints)) == ["legacy.zip", "model.pt"]
    # tocha.save's own zip (several records) is loaded as it is, with no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _assert_state(hub.load_state_dict_from_url(inner.as_uri(), progress=False))
    assert sorted(os.listdir(checkpoints)) == ["inner.pt", "legacy.zip", "model.pt"]


def test_torch_model_zoo_variable_is_deprecated(tmp_path, hub_dir, monkeypatch):
    monkeypatch.setenv("TORCH_MODEL_ZOO", "/somewhere")
    source = _checkpoint(tmp_path / "w.pt")
    with pytest.warns(UserWarning, match="TORCH_MODEL_ZOO is deprecated"):
        hub.load_state_dict_from_url(source.as_uri(), progress=False)


# -- load(source="local") ---------------------------------------------------------------------

HUBCONF = """
dependencies = ["json", "numpy"]
import os
import subprocess
from hubhelper_{tag} import OFFSET

NOT_CALLABLE = 3


def affine(x, scale=1):
    \"\"\"x * scale + OFFSET.\"\"\"
    return x * scale + OFFSET


def lazy():
    import hublazy_{tag}

    return hublazy_{tag}.VALUE


def _private():
    return None


class Net:
    pass
"""


def _repository(folder: Path, tag: str, monkeypatch, hubconf: str = HUBCONF) -> Path:
    """A repository in `folder`: a hubconf importing a module beside it (forgotten after)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hubconf.py").write_text(textwrap.dedent(hubconf.format(tag=tag)))
    (folder / f"hubhelper_{tag}.py").write_text("OFFSET = 100\n")
    (folder / f"hublazy_{tag}.py").write_text("VALUE = 'lazy'\n")
    for module in (f"hubhelper_{tag}", f"hublazy_{tag}"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    return folder


def test_load_local_calls_the_entrypoint(tmp_path, monkeypatch):
    repo = _repository(tmp_path / "repo", "a", monkeypatch)
    path_before = list(sys.path)
    assert hub.load(str(repo), "affine", 2, source="local", scale=3) == 106
    assert hub.load(repo, "affine", 1, source="LOCAL") == 101  # a Path; any case
    assert hub.load(str(repo), "lazy", source="local") == "lazy"  # imports while called
    assert sys.path == path_before
    assert "hubconf" not in sys.modules


LOCAL_ERRORS = [
    ("unknown_entrypoint", "affine_", "Cannot find callable affine_ in hubconf"),
    ("not_callable", "NOT_CALLABLE", "Cannot find callable NOT_CALLABLE in hubconf"),
    ("missing_dependencies", "deps", "Missing dependencies: hub_absent_one, hub_absent_two"),
]


@pytest.mark.parametrize(
    ("model", "expected"), [e[1:] for e in LOCAL_ERRORS], ids=[e[0] for e in LOCAL_ERRORS]
)
def test_load_local_errors_match_torch(model, expected, tmp_path, monkeypatch, torch):
    hubconf = HUBCONF
    if model == "deps":
        missing = '["json", "hub_absent_one", "os.path", "hub_absent_two"]'
        hubconf = HUBCONF.replace('["json", "numpy"]', missing)
        model = "affine"
    repo = _repository(tmp_path / "repo", "b", monkeypatch, hubconf)
    messages = []
    for lib in (torch, tocha):
        with pytest.raises(RuntimeError) as info:
            lib.hub.load(str(repo), model, 1, source="local")
        messages.append(str(info.value))
    assert messages == [expected, expected]


def test_load_argument_errors_match_torch(tmp_path, monkeypatch, torch):
    repo = _repository(tmp_path / "repo", "c", monkeypatch)
    messages = []
    for lib in (torch, tocha):
        with pytest.raises(ValueError) as source_error:
            lib.hub.load(str(repo), "affine", source="gitlab")
        with pytest.raises(ValueError) as model_error:
            lib.hub.load(str(repo), 3, source="local")
        messages.append((str(source_error.value), str(model_error.value)))
    assert messages[1] == messages[0]
    assert messages[1] == (
        'Unknown source: "gitlab". Allowed values: "github" | "local".',
        "Invalid input: model should be a string of function name",
    )


def test_load_local_without_hubconf_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="hubconf.py"):
        hub.load(str(tmp_path), "anything", source="local")


# -- GitHub repositories ----------------------------------------------------------------------


class FakeGitHub:
    """A stand-in for `urllib.request.urlopen`: GitHub (default-branch probes, the API's
    branches and tags, zipball archives) answered from files, other URLs as usual, and every
    network URL refused when `online` is False."""

    def __init__(self, root: Path, online: bool = True):
        self.root = root
        self.online = online
        self.branches = {"main": "a1b2c3d4e5"}
        self.tags = {"v1.0": "f6e5d4c3b2"}
        self.ambiguous: set[str] = set()
        self.hubconf = HUBCONF
        self.owner = "owner"
        self.requests: list[tuple[str, dict, float | None]] = []

    def __call__(self, request, data=None, timeout=None, **kwargs):
        url = request.full_url if isinstance(request, urllib.request.Request) else request
        headers = dict(request.header_items()) if hasattr(request, "header_items") else {}
        self.requests.append((url, headers, timeout))
        if url.startswith("file:"):
            return REAL_URLOPEN(request, timeout=timeout)
        assert timeout is not None and math.isfinite(timeout), "a network call without timeout"
        if not self.online:
            raise urllib.error.URLError(OSError(-2, "Name or service not known"))
        prefix = f"https://github.com/{self.owner}/repo/"
        api = f"https://api.github.com/repos/{self.owner}/repo/"
        if url == prefix + "tree/main/":
            if "main" in self.branches:
                return io.BytesIO(b"<html>")
            raise self._status(url, 404)
        if url.startswith(api):
            kind, _, query = url[len(api) :].partition("?")
            page = int(query.rpartition("page=")[2])
            names = self.branches if kind == "branches" else self.tags
            entries = [{"name": n, "commit": {"sha": s}} for n, s in names.items()]
            return io.BytesIO(json.dumps(entries if page == 1 else []).encode())
        if url.startswith(prefix + "zipball/"):
            ref = url[len(prefix + "zipball/") :]
            if ref in self.ambiguous:
                raise self._status(url, 300)
            return REAL_URLOPEN(self._archive(ref).as_uri(), timeout=timeout)
        raise self._status(url, 404)

    @staticmethod
    def _status(url: str, code: int) -> urllib.error.HTTPError:
        return urllib.error.HTTPError(url, code, "status", {}, io.BytesIO())  # type: ignore[arg-type]

    def _archive(self, ref: str) -> Path:
        """GitHub's zipball: one folder, owner-repo-<commit>/, holding the repository."""
        path = self.root / f"zipball-{ref.replace('/', '_')}.zip"
        top = f"{self.owner}-repo-a1b2c3d/"
        with zipfile.ZipFile(path, "w") as zipped:
            zipped.writestr(top, "")
            zipped.writestr(top + "hubconf.py", textwrap.dedent(self.hubconf.format(tag="gh")))
            zipped.writestr(top + "hubhelper_gh.py", "OFFSET = 100\n")
            zipped.writestr(top + "hublazy_gh.py", f"VALUE = {ref!r}\n")
            zipped.writestr(top + "sub/data.txt", "data")
        return path


@pytest.fixture
def github(tmp_path, hub_dir, monkeypatch):
    fake = FakeGitHub(tmp_path / "served")
    fake.root.mkdir()
    monkeypatch.setattr(urllib.request, "urlopen", fake)
    for module in ("hubhelper_gh", "hublazy_gh"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    return fake


def _forget_repo_modules():
    for module in ("hubhelper_gh", "hublazy_gh"):
        sys.modules.pop(module, None)


def test_github_download_layout_and_cache(github, hub_dir, capsys):
    assert hub.load("owner/repo", "affine", 1, trust_repo=True) == 101
    folder = hub_dir / "owner_repo_main"
    assert sorted(p.name for p in hub_dir.iterdir()) == ["owner_repo_main", "trusted_list"]
    assert sorted(p.name for p in folder.iterdir()) == [
        "hubconf.py",
        "hubhelper_gh.py",
        "hublazy_gh.py",
        "sub",
    ]
    err = capsys.readouterr().err
    zip_path = hub_dir / "main.zip"
    assert f'Downloading: "https://github.com/owner/repo/zipball/main" to {zip_path}\n' in err
    assert (hub_dir / "trusted_list").read_text() == "owner_repo\n"
    # The ref was checked against the repository's branches (the API), once.
    api = [url for url, *_ in github.requests if "api.github.com" in url]
    assert api == ["https://api.github.com/repos/owner/repo/branches?per_page=100&page=1"]
    github.requests.clear()
    assert hub.list("owner/repo:main") == ["Net", "affine", "lazy"]
    assert hub.help("owner/repo:main", "affine") == "x * scale + OFFSET."
    assert github.requests == []  # the cached copy: nothing asked of the network
    assert capsys.readouterr().err == f"Using cache found in {folder}\n" * 2
    hub.list("owner/repo:main", verbose=False)
    assert capsys.readouterr().err == ""


def test_default_branch_is_main_else_master(github, hub_dir):
    del github.branches["main"]
    github.branches["master"] = "0a0b0c0d"
    assert hub.list("owner/repo", trust_repo=True) == ["Net", "affine", "lazy"]
    assert (hub_dir / "owner_repo_master").is_dir()


def test_tags_commits_and_refs_with_slashes(github, hub_dir):
    github.branches["feature/x"] = "9999aaaa"
    _forget_repo_modules()
    assert hub.load("owner/repo:v1.0", "lazy", trust_repo=True) == "v1.0"
    _forget_repo_modules()
    assert hub.load("owner/repo:feature/x", "lazy", trust_repo=True) == "feature/x"
    _forget_repo_modules()
    assert hub.load("owner/repo:f6e5d4", "lazy", trust_repo=True) == "f6e5d4"  # a tag's commit
    names = {p.name for p in hub_dir.iterdir() if p.is_dir()}
    assert names == {"owner_repo_v1.0", "owner_repo_feature_x", "owner_repo_f6e5d4"}
    with pytest.raises(ValueError) as info:
        hub.load("owner/repo:deadbeef", "lazy", trust_repo=True)
    assert str(info.value) == (
        "Cannot find deadbeef in https://github.com/owner/repo. If it's a commit from a forked "
        "repo, please call hub.load() with forked repo directly."
    )
    github.requests.clear()
    hub.load("owner/repo:deadbeef", "lazy", trust_repo=True, skip_validation=True)
    assert not [url for url, *_ in github.requests if "api.github.com" in url]


def test_github_token_goes_to_the_api(github, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "secret-token")
    hub.list("owner/repo:main", trust_repo=True)
    api = [headers for url, headers, _ in github.requests if "api.github.com" in url]
    assert api and all(h.get("Authorization") == "token secret-token" for h in api)


def test_force_reload_downloads_again(github, hub_dir):
    hub.list("owner/repo:main", trust_repo=True)
    (hub_dir / "owner_repo_main" / "stale.txt").write_text("old")
    github.hubconf = HUBCONF.replace("def _private", "def added():\n    return 1\n\n\ndef _p")
    assert hub.list("owner/repo:main") == ["Net", "affine", "lazy"]  # cached
    assert "added" in hub.list("owner/repo:main", force_reload=True)
    assert not (hub_dir / "owner_repo_main" / "stale.txt").exists()
    assert not [p for p in hub_dir.iterdir() if p.suffix == ".zip" or p.name.startswith("owner-")]


def test_an_ambiguous_ref_downloads_the_branch(github, hub_dir):
    github.branches["v1.0"] = "1111"
    github.ambiguous.add("v1.0")
    _forget_repo_modules()
    with pytest.warns(UserWarning, match="ambiguous"):
        value = hub.load("owner/repo:v1.0", "lazy", trust_repo=True)
    assert value == "refs/heads/v1.0"


def test_offline_fails_fast_and_cleanly(github, hub_dir):
    github.online = False
    with pytest.raises(RuntimeError) as info:
        hub.list("owner/repo", trust_repo=True)
    assert str(info.value) == (
        "It looks like there is no internet connection and the repo could not be found in the "
        f"cache ({hub_dir})"
    )
    with pytest.raises(urllib.error.URLError, match="cannot open https://api.github.com/"):
        hub.load("owner/repo:main", "affine", 1, trust_repo=True)
    with pytest.raises(urllib.error.URLError, match="cannot open https://github.com/owner/"):
        hub.load("owner/repo:main", "affine", 1, trust_repo=True, skip_validation=True)
    assert not [p for p in hub_dir.iterdir() if p.is_dir()]
    # Offline, a cached default branch is found without the network.
    github.online = True
    hub.list("owner/repo:main")
    github.online = False
    assert hub.load("owner/repo", "affine", 2) == 102
    assert all(timeout is not None for url, _, timeout in github.requests if "://" in url)


def test_malformed_repository_names(github):
    for name in ("owner", "owner/repo/extra", "owner/repo:", "/repo", "owner/repo:a:b"):
        with pytest.raises(ValueError, match="repo_owner/repo_name"):
            hub.list(name, trust_repo=True)


def test_cached_repository_matches_torch(tmp_path, monkeypatch, torch):
    """list, help and load on a repository already in the hub directory (no download)."""
    answers = []
    for lib in (torch, tocha):
        folder = tmp_path / lib.__name__
        _repository(folder / "owner_repo_main", "d", monkeypatch)
        lib.hub.set_dir(str(folder))
        answers.append(
            (
                lib.hub.list("owner/repo:main", trust_repo=True),
                lib.hub.help("owner/repo:main", "affine", trust_repo=True),
                lib.hub.load("owner/repo:main", "affine", 4, scale=2, trust_repo=True),
            )
        )
    monkeypatch.setattr(hub, "_hub_dir", None)
    assert answers[1] == answers[0] == (["Net", "affine", "lazy"], "x * scale + OFFSET.", 108)


# -- trusting repositories --------------------------------------------------------------------


def _answering(monkeypatch, *answers: str) -> list[str]:
    prompts: list[str] = []
    replies = iter(answers)

    def fake_input(prompt=""):
        prompts.append(prompt)
        return next(replies)

    monkeypatch.setattr("builtins.input", fake_input)
    return prompts


PROMPT = (
    "The repository owner_repo does not belong to the list of trusted repositories and as such "
    "cannot be downloaded. Do you trust this repository and wish to add it to the trusted list "
    "of repositories (y/N)?"
)


def test_check_asks_once_then_remembers(github, hub_dir, monkeypatch):
    prompts = _answering(monkeypatch, "n")
    with pytest.raises(Exception, match="^Untrusted repository.$"):
        hub.list("owner/repo:main")  # trust_repo="check" by default
    assert prompts == [PROMPT]
    assert (hub_dir / "trusted_list").read_text() == ""
    prompts = _answering(monkeypatch, "Yes")
    hub.list("owner/repo:main", trust_repo="check")
    assert prompts == [PROMPT]
    assert (hub_dir / "trusted_list").read_text() == "owner_repo\n"
    prompts = _answering(monkeypatch)
    hub.list("owner/repo:main", trust_repo="check")
    assert prompts == []


def test_false_always_asks(github, hub_dir, monkeypatch, capsys):
    _answering(monkeypatch, "y", "y", "maybe")
    hub.list("owner/repo:main", trust_repo=False)
    hub.list("owner/repo:main", trust_repo=False)
    assert "The repository is already trusted." in capsys.readouterr().out
    with pytest.raises(ValueError, match="^Unrecognized response maybe.$"):
        hub.list("owner/repo:main", trust_repo=False)
    assert (hub_dir / "trusted_list").read_text() == "owner_repo\n"


def test_true_none_and_known_owners_do_not_ask(github, hub_dir, monkeypatch):
    prompts = _answering(monkeypatch)
    hub.list("owner/repo:main", trust_repo=None)
    assert (hub_dir / "trusted_list").read_text() == "owner_repo\n"
    # A repository already downloaded (before the trusted list existed) is trusted.
    (hub_dir / "trusted_list").unlink()
    hub.list("owner/repo:main")
    assert prompts == []
    # PyTorch's own owners are trusted without being written down.
    github.owner = "pytorch"
    hub.list("pytorch/repo:main", trust_repo="check")
    assert prompts == []
    assert (hub_dir / "pytorch_repo_main").is_dir()
    assert (hub_dir / "trusted_list").read_text() == ""


# -- a PyTorch program run by tocha.run --------------------------------------------------------

PROGRAM = """
import sys

import torch
import torch.hub
from torch.hub import load_state_dict_from_url
from torch.utils.model_zoo import load_url

assert torch.hub.__name__ == "tocha.hub" and load_url is load_state_dict_from_url
url, model_dir, repo = sys.argv[1:]
state = load_url(url, model_dir=model_dir, progress=False, map_location="cpu")
print(sorted(state), state["weight"].sum().item())
print(torch.hub.load(repo, "ones", 3, source="local").tolist())
"""

TORCH_HUBCONF = """
dependencies = ["torch"]
import torch


def ones(n):
    return torch.ones(n)
"""


def test_a_torch_program_under_tocha_run(tmp_path):
    source = _checkpoint(tmp_path / "w.pt")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(TORCH_HUBCONF)
    (tmp_path / "prog.py").write_text(PROGRAM)
    args = [source.as_uri(), str(tmp_path / "models"), str(repo)]
    proc = subprocess.run(
        [sys.executable, "-m", "tocha.run", "prog.py", *args],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["['step', 'weight'] 15.0", "[1.0, 1.0, 1.0]"]
    assert (tmp_path / "models" / "w.pt").is_file()
