"""oneDNN after a fork: GNU OpenMP's thread pool does not survive one, so a child process
(a DataLoader worker, a forked multiprocessing child) runs oneDNN's kernels on one thread
instead of hanging."""

from __future__ import annotations

import multiprocessing
import sys

import pytest

import tocha
import tocha.nn.functional as F

pytest.importorskip("tocha_onednn", reason="tocha-onednn is not installed")


def _child(queue) -> None:
    x, w = tocha.randn(4, 3, 16, 16), tocha.randn(8, 3, 3, 3)
    queue.put(float(F.conv2d(x, w).abs().sum()))


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method: Linux")
def test_a_forked_child_runs_onednn_kernels():
    previous = tocha.get_num_threads()
    tocha.set_num_threads(2)
    try:
        x, w = tocha.randn(4, 3, 16, 16), tocha.randn(8, 3, 3, 3)
        F.conv2d(x, w)  # oneDNN and its OpenMP pool start in the parent
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        child = context.Process(target=_child, args=(queue,))
        child.start()
        child.join(60)
        assert not child.is_alive(), "the child hung in oneDNN"
        assert child.exitcode == 0 and queue.get(timeout=5) > 0
    finally:
        if child.is_alive():
            child.kill()
        tocha.set_num_threads(previous)
