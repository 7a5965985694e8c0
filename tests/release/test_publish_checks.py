"""scripts/release.py before any upload: crafted wheels with another package's files or
incomplete metadata, stale or missing files, a dependency the index lacks, a version it already
has; and the upload order. No network: the index is a fake."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
import release
from fake_repo import make_sdist, make_wheel, metadata
from monorepo import ReleaseError
from packaging.utils import canonicalize_name


class FakeIndex:
    """An index in memory: distribution -> {file name: SHA-256}; `upload` adds to it."""

    url = "fake://index/"

    def __init__(self) -> None:
        self.data: dict[str, dict[str, str | None]] = {}
        self.uploaded: list[str] = []

    def files(self, name: str) -> dict[str, str | None]:
        return dict(self.data.get(canonicalize_name(name), {}))

    def upload(self, files: list[Path]) -> None:
        for path in files:
            name = canonicalize_name(path.name.split("-")[0])
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            self.data.setdefault(name, {})[path.name] = digest
            self.uploaded.append(path.name)


def by_name(packages, name):
    return next(p for p in packages if p.name == name)


def publish(dist, packages, index):
    return release.publish(dist, packages, index, index.upload, run_twine=False)


def test_complete_artifacts_pass(dist, packages):
    found = release.check(dist, packages, run_twine=False, every=True)
    assert [a.package.name for a in found] == [p.name for p in packages]


def test_a_wheel_with_tocha_init_outside_tocha_core_is_refused(dist, packages):
    nn = by_name(packages, "tocha-nn")
    make_wheel(dist, nn, files=["tocha/nn/_version.py", "tocha/__init__.py"])
    with pytest.raises(ReleaseError) as refusal:
        release.check(dist, packages, run_twine=False)
    assert str(refusal.value) == (
        "tocha_nn-0.1.0-py3-none-any.whl: only tocha-core's wheel may ship tocha/__init__.py"
    )


@pytest.mark.parametrize(
    ("name", "files", "message"),
    [
        (
            "tocha-core",
            ["tocha/x.py"],
            "tocha_core-0.1.0-py3-none-any.whl: lacks tocha/__init__.py",
        ),
        (
            "tocha-core",
            ["tocha/__init__.py", "tocha/nn/linear.py"],
            "tocha_core-0.1.0-py3-none-any.whl: tocha/nn/linear.py belongs to tocha-nn",
        ),
        (
            "tocha-autograd",
            ["tocha/autograd/a.py", "tocha/multiprocessing/b.py"],
            "tocha_autograd-0.1.0-py3-none-any.whl: tocha/multiprocessing/b.py belongs to tocha-mp",
        ),
        (
            "tocha-mp",
            ["tocha/multiprocessing/a.py", "numpy/__init__.py"],
            "tocha_mp-0.1.0-py3-none-any.whl: numpy/__init__.py belongs to no package of this "
            "repository",
        ),
    ],
)
def test_a_wheel_with_another_packages_files_is_refused(dist, packages, name, files, message):
    make_wheel(dist, by_name(packages, name), files=files)
    with pytest.raises(ReleaseError, match="^" + message.replace(".", r"\.") + "$"):
        release.check(dist, packages, run_twine=False)


def test_a_package_may_own_several_parts_of_the_namespace(dist, packages):
    """``[tool.tocha] also-owns`` (tocha-fx owns tocha/jit and tocha/export too)."""
    packages = [
        replace(p, other_roots=("tocha/jit/",)) if p.name == "tocha-nn" else p for p in packages
    ]
    make_wheel(dist, by_name(packages, "tocha-nn"), files=["tocha/nn/a.py", "tocha/jit/b.py"])
    release.check(dist, packages, run_twine=False)
    make_wheel(dist, by_name(packages, "tocha-mp"), files=["tocha/jit/c.py"])
    with pytest.raises(ReleaseError, match="tocha/jit/c.py belongs to tocha-nn$"):
        release.check(dist, packages, run_twine=False)


@pytest.mark.parametrize(
    ("drop", "fields", "message"),
    [
        ("Classifier", {}, "no classifiers"),
        ("Project-URL", {}, "no project URLs"),
        ("License-Expression", {}, "no license"),
        ("Requires-Python", {}, "no Requires-Python"),
        ("Summary", {}, "no Summary"),
        ("Description-Content-Type", {}, "README not text/markdown"),
        ("", {"Version": "0.1.5"}, "Version is not 0.1.0"),
        ("", {"Name": "tocha-other"}, "Name is not tocha-mp"),
    ],
)
def test_incomplete_metadata_is_refused(dist, packages, drop, fields, message):
    mp = by_name(packages, "tocha-mp")
    make_wheel(dist, mp, meta=metadata(mp, drop, **fields))
    with pytest.raises(ReleaseError, match=f"^tocha_mp-0.1.0-py3-none-any.whl: {message}"):
        release.check(dist, packages, run_twine=False)


def test_the_description_must_be_the_readme(dist, packages):
    mp = by_name(packages, "tocha-mp")
    make_wheel(dist, mp, meta=metadata(mp).replace("What tocha-mp does.", "Old text."))
    with pytest.raises(ReleaseError, match="the description is not the README.md"):
        release.check(dist, packages, run_twine=False)


def test_the_entry_points_must_be_those_of_pyproject(dist, packages):
    make_wheel(dist, by_name(packages, "tocha-core"), entry_points="")
    with pytest.raises(ReleaseError, match=r"entry points \{\} != \{'tocha.backends'"):
        release.check(dist, packages, run_twine=False)


def test_stale_unknown_and_missing_files_are_refused(dist, packages):
    (dist / "tocha_mp-0.1.0.tar.gz").unlink()
    (dist / "tocha_nn-0.0.9-py3-none-any.whl").write_bytes(b"")
    (dist / "other-1.0.tar.gz").write_bytes(b"")
    with pytest.raises(ReleaseError) as refusal:
        release.check(dist, packages, run_twine=False, every=True)
    assert str(refusal.value).splitlines() == [
        "other-1.0.tar.gz: not a package of this repository",
        "tocha_nn-0.0.9-py3-none-any.whl: stale, nn is at 0.1.0: rebuild",
        "tocha-mp: needs a wheel and an sdist in " + str(dist),
        "tocha-mp: not built in " + str(dist),
    ]


def test_publish_uploads_in_dependency_order_then_skips(dist, packages):
    index = FakeIndex()
    log = publish(dist, packages, index)
    assert index.uploaded == [
        f"{stem}-0.1.0{suffix}"
        for stem in ("tocha_core", "tocha_autograd", "tocha_mp", "tocha_nn")
        for suffix in ("-py3-none-any.whl", ".tar.gz")
    ]
    assert log[0].startswith("tocha-core 0.1.0: uploaded tocha_core-0.1.0-py3-none-any.whl")
    index.uploaded.clear()
    assert publish(dist, packages, index) == [
        f"{p.name} 0.1.0: already on the index, skipped" for p in packages
    ]
    assert index.uploaded == []


def test_a_dependency_missing_from_the_index_refuses_everything(tmp_path, dist, packages):
    only_nn = tmp_path / "only-nn"
    for path in dist.glob("tocha_nn-*"):
        only_nn.mkdir(exist_ok=True)
        path.rename(only_nn / path.name)
    index = FakeIndex()
    with pytest.raises(ReleaseError) as refusal:
        publish(only_nn, packages, index)
    assert str(refusal.value) == (
        "tocha-nn 0.1.0 needs tocha-autograd<0.2,>=0.1: not on the index (it has: none) nor in "
        "this upload; publish that first"
    )
    assert index.uploaded == []


def test_a_dependency_on_the_index_in_another_range_refuses(tmp_path, packages):
    index = FakeIndex()
    index.data["tocha-autograd"] = {"tocha_autograd-0.2.0-py3-none-any.whl": "0" * 64}
    nn = by_name(packages, "tocha-nn")
    make_wheel(tmp_path / "d", nn)
    make_sdist(tmp_path / "d", nn)
    with pytest.raises(ReleaseError, match=r"needs tocha-autograd.*\(it has: 0\.2\.0\)"):
        publish(tmp_path / "d", packages, index)
    index.data["tocha-autograd"]["tocha_autograd-0.1.3.tar.gz"] = "0" * 64
    assert publish(tmp_path / "d", packages, index)[0].startswith("tocha-nn 0.1.0: uploaded")


def test_a_version_already_there_with_other_contents_refuses_everything(dist, packages):
    index = FakeIndex()
    index.data["tocha-mp"] = {"tocha_mp-0.1.0.tar.gz": "0" * 64}
    with pytest.raises(ReleaseError) as refusal:
        publish(dist, packages, index)
    assert str(refusal.value) == (
        "tocha_mp-0.1.0.tar.gz is already on the index with other contents: bump tocha-mp's "
        "version (scripts/bump.py)"
    )
    assert index.uploaded == []


def test_a_file_the_index_lacks_is_uploaded_beside_the_ones_it_has(dist, packages):
    index = FakeIndex()
    wheel = dist / "tocha_core-0.1.0-py3-none-any.whl"
    index.data["tocha-core"] = {wheel.name: hashlib.sha256(wheel.read_bytes()).hexdigest()}
    publish(dist, packages, index)
    assert index.uploaded[0] == "tocha_core-0.1.0.tar.gz"


def test_simple_page_links_are_read_with_their_hashes():
    links = release._Links()
    links.feed(
        '<a href="/packages/tocha_core-0.1.0.tar.gz#sha256=abc">x</a>'
        '<a href="../tocha_core-0.1.1-py3-none-any.whl">y</a>'
    )
    assert links.files == {
        "tocha_core-0.1.0.tar.gz": "abc",
        "tocha_core-0.1.1-py3-none-any.whl": None,
    }
    assert release.versions(links.files) == {release.Version("0.1.0"), release.Version("0.1.1")}


def test_publish_needs_credentials_in_the_environment(monkeypatch, capsys):
    monkeypatch.delenv("TWINE_USERNAME", raising=False)
    monkeypatch.setenv("TWINE_PASSWORD", "secret")
    assert release.main(["publish", "--repository-url", "http://127.0.0.1:1/"]) == 1
    assert "set TWINE_USERNAME in the environment" in capsys.readouterr().err
