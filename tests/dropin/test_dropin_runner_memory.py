"""``python -m tocha.run`` owns the process, so glibc keeps freed memory for reuse there (what
``TOCHA_MALLOC_TUNING=1`` does for a plain ``import tocha``): an array of a few MB comes from
glibc's heap, whose freed pages are reused, not from a fresh mapping that page-faults anew
each time. ``TOCHA_MALLOC_TUNING=0`` leaves glibc as it is."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc on Linux")

# How many of glibc's blocks a 16 MB array adds that are their own mapping (mallinfo2's
# hblks): 1 with glibc's default threshold (128 kB, raised only as such blocks are freed),
# 0 once tocha raised it.
PROGRAM = textwrap.dedent(
    """
    import ctypes
    import numpy as np

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )]

    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallinfo2"):
        print("no mallinfo2")
    else:
        libc.mallinfo2.restype = MallInfo2
        before = libc.mallinfo2().hblks
        block = np.empty(16 * 2**20, np.uint8)
        print(libc.mallinfo2().hblks - before)
    """
)


def _mapped_blocks(tmp_path, tuning: str | None) -> int:
    script = tmp_path / "allocate.py"
    script.write_text(PROGRAM)
    env = dict(os.environ)
    env.pop("TOCHA_MALLOC_TUNING", None)
    if tuning is not None:
        env["TOCHA_MALLOC_TUNING"] = tuning
    done = subprocess.run(
        [sys.executable, "-m", "tocha.run", str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    answer = done.stdout.strip().splitlines()[-1]
    if answer == "no mallinfo2":
        pytest.skip("this C library has no mallinfo2 (glibc 2.33+)")
    return int(answer)


def test_the_runner_keeps_large_arrays_in_glibcs_heap(tmp_path):
    assert _mapped_blocks(tmp_path, None) == 0


def test_malloc_tuning_zero_leaves_glibc_alone(tmp_path):
    assert _mapped_blocks(tmp_path, "0") == 1
