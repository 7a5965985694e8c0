"""How tocha-onednn loads libdnnl: GNU OpenMP's threads made to spin only briefly before
they sleep (unless the environment chooses), the environment left as it was."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("tocha_onednn", reason="tocha-onednn is not installed")

PROGRAM = """
import ctypes, os
from tocha_onednn import _dnnl, _runtime
seen = []
real = _dnnl.Library
def spy(*args):
    seen.append(f'{os.environ.get("OMP_WAIT_POLICY")}/{os.environ.get("GOMP_SPINCOUNT")}')
    return real(*args)
_dnnl.Library = spy
_runtime.library()
print(seen[0], f'{os.environ.get("OMP_WAIT_POLICY")}/{os.environ.get("GOMP_SPINCOUNT")}')
"""


def _run(**env) -> list[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return out.stdout.split()


def test_openmp_spins_briefly_while_the_environment_is_restored():
    assert _run() == ["None/10000", "None/None"]


def test_a_policy_or_spin_count_in_the_environment_is_kept():
    assert _run(OMP_WAIT_POLICY="PASSIVE") == ["PASSIVE/None", "PASSIVE/None"]
    assert _run(GOMP_SPINCOUNT="1000") == ["None/1000", "None/1000"]
