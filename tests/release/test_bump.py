"""scripts/bump.py on a small monorepo: the version file and changelog, the dependents' ranges
checked, refused or widened, and nothing written when a bump is refused."""

from __future__ import annotations

from pathlib import Path

import bump
import pytest
from fake_repo import CHANGELOG, write_package
from monorepo import ROOT, ReleaseError, load_packages, next_breaking
from packaging.version import Version

DATE = "2025-01-02"


def snapshot(root: Path) -> dict[Path, str]:
    """Every file of the repository and its contents."""
    return {p: p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def version_of(repo: Path, folder: str) -> str:
    return str(next(p for p in load_packages(repo) if p.folder == folder).version)


def test_packages_come_in_dependency_order(packages):
    assert [p.name for p in packages] == ["tocha-core", "tocha-autograd", "tocha-mp", "tocha-nn"]
    assert [p.import_root for p in packages][:2] == ["tocha/", "tocha/autograd/"]


def test_a_dependency_cycle_is_refused(repo):
    pyproject = repo / "packages" / "tensor-core" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("numpy>=1.26", "tocha-nn>=0.1,<0.2"))
    with pytest.raises(ReleaseError, match="dependency cycle"):
        load_packages(repo)


def test_patch_bump_moves_the_notes_and_keeps_the_ranges(repo):
    before = snapshot(repo)
    done = bump.bump(repo, "tocha-core", "0.1.1", date=DATE)
    assert version_of(repo, "tensor-core") == "0.1.1"
    changelog = (repo / "packages" / "tensor-core" / "CHANGELOG.md").read_text()
    assert changelog == (
        "# Changelog\n\n## Unreleased\n\n## 0.1.1 (2025-01-02)\n\n- A change.\n\n"
        "## 0.1.0\n\n- First release.\n"
    )
    assert "tocha-autograd: tocha-core>=0.1,<0.2 admits 0.1.1" in done
    assert "tocha-mp: tocha-core>=0.1,<0.2 admits 0.1.1" in done
    changed = {p for p, text in snapshot(repo).items() if before[p] != text}
    assert {p.name for p in changed} == {"_version.py", "CHANGELOG.md"}


def test_the_folder_name_works_too(repo):
    bump.bump(repo, "autograd", "0.1.1", date=DATE)
    assert version_of(repo, "autograd") == "0.1.1"


def test_a_bump_outside_a_dependents_range_is_refused_and_writes_nothing(repo):
    before = snapshot(repo)
    with pytest.raises(ReleaseError) as refusal:
        bump.bump(repo, "tocha-core", "0.2.0", date=DATE)
    message = str(refusal.value)
    assert "tocha-autograd requires tocha-core>=0.1,<0.2, which excludes 0.2.0" in message
    assert "tocha-mp requires tocha-core>=0.1,<0.2, which excludes 0.2.0" in message
    assert "--widen" in message
    assert snapshot(repo) == before


def test_widen_raises_the_upper_bounds_and_notes_it(repo):
    done = bump.bump(repo, "tocha-core", "0.2.0", widen=True, date=DATE)
    note = "- Accepts tocha-core 0.2.0 (`tocha-core>=0.1,<0.3`)."
    for folder in ("autograd", "mp"):
        path = repo / "packages" / folder
        assert '"tocha-core>=0.1,<0.3"' in (path / "pyproject.toml").read_text()
        changelog = (path / "CHANGELOG.md").read_text()
        assert f"## Unreleased\n\n- A change.\n{note}\n\n## 0.1.0" in changelog
    widened = "tocha-core>=0.1,<0.2 widened to tocha-core>=0.1,<0.3: release it too"
    assert f"tocha-autograd: {widened}" in done
    nn = (repo / "packages" / "nn" / "pyproject.toml").read_text()
    assert '"tocha-autograd>=0.1,<0.2"' in nn
    assert bump.check_ranges(load_packages(repo)) == []


def test_widening_past_1_0_uses_the_next_major(repo):
    bump.bump(repo, "tocha-core", "1.0.0", widen=True, date=DATE)
    pyproject = (repo / "packages" / "autograd" / "pyproject.toml").read_text()
    assert '"tocha-core>=0.1,<2"' in pyproject


@pytest.mark.parametrize(
    ("version", "after"), [("0.1.7", "0.2"), ("0.9.0rc1", "0.10"), ("1.4.2", "2"), ("3.0", "4")]
)
def test_next_breaking(version, after):
    assert next_breaking(Version(version)) == Version(after)


@pytest.mark.parametrize(
    ("version", "message"),
    [("0.1.0", "is at 0.1.0: 0.1.0 is not newer"), ("0.0.9", "not newer"), ("x.y", "not a valid")],
)
def test_a_version_not_newer_is_refused(repo, version, message):
    with pytest.raises(ReleaseError, match=message):
        bump.bump(repo, "tocha-core", version)


def test_an_unknown_package_is_refused(repo):
    with pytest.raises(ReleaseError, match="no package 'tocha-foo'"):
        bump.bump(repo, "tocha-foo", "0.2.0")


@pytest.mark.parametrize(
    ("changelog", "message"),
    [
        ("# Changelog\n\n## Unreleased\n\n## 0.1.0\n\n- First.\n", "section is empty"),
        ("# Changelog\n\n## 0.1.0\n\n- First.\n", "no '## Unreleased' section"),
    ],
)
def test_a_changelog_without_notes_is_refused(repo, changelog, message):
    path = repo / "packages" / "tensor-core" / "CHANGELOG.md"
    path.write_text(changelog)
    before = snapshot(repo)
    with pytest.raises(ReleaseError, match=f"tocha-core's CHANGELOG.md: .*{message}"):
        bump.bump(repo, "tocha-core", "0.1.1")
    assert snapshot(repo) == before


def test_a_version_marked_unreleased_is_released_under_the_new_heading(repo):
    path = repo / "packages" / "tensor-core" / "CHANGELOG.md"
    path.write_text("# Changelog\n\n## 0.1.1 (unreleased)\n\n- Fix.\n")
    bump.bump(repo, "tocha-core", "0.1.1", date=DATE)
    assert path.read_text() == "# Changelog\n\n## Unreleased\n\n## 0.1.1 (2025-01-02)\n\n- Fix.\n"


def test_add_note_makes_the_unreleased_section_when_missing():
    text = "# Changelog\n\n## 0.1.0\n\n- First.\n"
    assert bump.add_note(text, "New.") == "# Changelog\n\n## Unreleased\n\n- New.\n\n" + text[13:]
    assert bump.add_note(CHANGELOG, "New.").startswith(
        "# Changelog\n\n## Unreleased\n\n- A change.\n- New.\n\n## 0.1.0\n"
    )


def test_a_sibling_dependency_must_be_a_compatible_range(repo):
    pyproject = repo / "packages" / "mp" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("tocha-core>=0.1,<0.2", "tocha-core>=0.1"))
    assert bump.check_ranges(load_packages(repo)) == [
        "tocha-mp: tocha-core>=0.1: a sibling dependency must be a compatible range "
        "`tocha-core>=A,<B`"
    ]
    with pytest.raises(ReleaseError, match="compatible range"):
        bump.bump(repo, "tocha-core", "0.1.1")


def test_check_ranges_finds_a_range_that_excludes_the_current_version(repo):
    write_package(repo, "optim", "tocha-optim", "tocha/optim", ["tocha-autograd>=0.2,<0.3"])
    assert bump.check_ranges(load_packages(repo)) == [
        "tocha-optim requires tocha-autograd<0.3,>=0.2, but tocha-autograd is at 0.1.0"
    ]


def test_the_command_line_reports_a_refusal(repo, monkeypatch, capsys):
    monkeypatch.setattr(bump, "ROOT", repo)
    assert bump.main(["tocha-core", "0.2.0"]) == 1
    assert "bump refused: tocha-autograd requires" in capsys.readouterr().err
    assert bump.main(["tocha-core", "0.1.1", "--date", DATE]) == 0
    assert "tocha-core: 0.1.0 -> 0.1.1" in capsys.readouterr().out


def test_this_repositorys_ranges_admit_its_versions():
    assert bump.check_ranges(load_packages(ROOT)) == []
