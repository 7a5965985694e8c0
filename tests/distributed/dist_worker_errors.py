"""Run on 2 ranks by test_dist_errors.py with a mode: ``mismatch`` (shapes or dtypes differ),
``absent`` (rank 1 skips a collective), ``dead`` (rank 1 exits), ``env`` (what the launcher
set). Prints ``PASS``/``FAIL`` lines."""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta

import tocha as torch
import tocha.distributed as dist

MODE = sys.argv[1]
dist.init_process_group("mpi", timeout=timedelta(seconds=2))
RANK = dist.get_rank()


def say(line: str) -> None:
    os.write(1, f"{line}\n".encode())


def expect_mismatch(name: str, fn) -> None:
    try:
        fn()
    except RuntimeError as exc:
        ok = "Detected mismatch between collectives on ranks" in str(exc)
        say(f"{'PASS' if ok else 'FAIL'} {name} rank {RANK}: {exc}")
    else:
        say(f"FAIL {name} rank {RANK}: no error")


if MODE == "mismatch":
    expect_mismatch("shape", lambda: dist.all_reduce(torch.ones(3 + RANK)))
    expect_mismatch(
        "dtype", lambda: dist.broadcast(torch.ones(3, dtype=[torch.float32, torch.int64][RANK]), 0)
    )
    expect_mismatch("root", lambda: dist.broadcast(torch.ones(3), src=RANK))
    expect_mismatch("kind", lambda: dist.all_reduce(torch.ones(2)) if RANK else dist.barrier())
    t = torch.ones(2)
    dist.all_reduce(t)  # the group still works
    say(f"{'PASS' if t.tolist() == [2.0, 2.0] else 'FAIL'} usable rank {RANK}")
elif MODE in ("absent", "dead"):
    if RANK == 1:
        if MODE == "dead":
            sys.exit(3)
        time.sleep(5)  # alive, but never calls the collective
    else:
        start = time.monotonic()
        try:
            dist.all_reduce(torch.ones(1000))
        except dist.DistBackendError as exc:
            say(f"PASS timeout after {time.monotonic() - start:.1f}s: {exc}")
        else:
            say("FAIL no timeout")
elif MODE == "env":
    keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
    env = {k: os.environ.get(k) for k in keys}
    ok = (
        env["RANK"] == env["LOCAL_RANK"] == str(RANK)
        and env["WORLD_SIZE"] == str(dist.get_world_size())
        and None not in env.values()
        and dist.is_torchelastic_launched()
    )
    say(f"{'PASS' if ok else 'FAIL'} env rank {RANK}: {env}")
