"""A save killed before it finished (SIGKILL included) leaves its temporary file; the next
save to the same path removes the temporaries whose writer is gone, and keeps those of live
writers (issue 25, loading and saving under attack)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import tocha

KILLED_MID_SAVE = """
import os, signal, sys
from tocha._serialization._archive import atomic_writer
with atomic_writer(sys.argv[1]) as f:
    f.write(b"x" * 100000)
    f.flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _temporaries(folder, base="model.pt"):
    return sorted(n for n in os.listdir(folder) if n.startswith(f".{base}.") and n.endswith(".tmp"))


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL and process ids as on POSIX")
def test_a_later_save_removes_the_temporaries_of_killed_saves(tmp_path):
    path = tmp_path / "model.pt"
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", KILLED_MID_SAVE, str(path)], timeout=60)
        assert done.returncode == -9
    assert len(_temporaries(tmp_path)) == 2
    assert not path.exists()
    tocha.save({"w": tocha.ones(3)}, path)
    assert _temporaries(tmp_path) == []
    assert tocha.load(path)["w"].tolist() == [1.0, 1.0, 1.0]


@pytest.mark.skipif(os.name == "nt", reason="process ids as on POSIX")
def test_temporaries_of_live_writers_and_other_files_stay(tmp_path):
    live = tmp_path / f".model.pt.{os.getppid()}-0123456789ab.tmp"
    other = tmp_path / f".other.pt.{2**22 + 12345}-0123456789ab.tmp"
    unrelated = tmp_path / ".model.pt.notes.tmp"
    for f in (live, other, unrelated):
        f.write_bytes(b"partial")
    tocha.save(tocha.zeros(2), tmp_path / "model.pt")
    assert live.exists() and other.exists() and unrelated.exists()
