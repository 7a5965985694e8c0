"""tocha.futures.Future, as torch.futures.Future (no processes needed)."""

from __future__ import annotations

import pytest

import tocha as torch


def test_then_chains_and_runs_once_the_value_is_set():
    fut = torch.futures.Future()
    doubled = fut.then(lambda f: f.value() * 2)
    assert not fut.done() and not doubled.done()
    fut.set_result(torch.ones(2))
    assert doubled.done() and doubled.wait().tolist() == [2.0, 2.0]
    assert torch.futures.wait_all([fut, doubled])[1].tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="Future can only be marked completed once"):
        fut.set_result(1)


def test_errors_travel_down_the_chain():
    fut = torch.futures.Future()
    failed = fut.then(lambda f: 1 / 0)
    fut.set_result(3)
    with pytest.raises(ZeroDivisionError):
        failed.wait()
    errored = torch.futures.Future()
    errored.set_exception(ValueError("no"))
    with pytest.raises(ValueError, match="no"):
        errored.then(lambda f: f.value()).wait()
    seen = []
    done = torch.futures.Future()
    done.add_done_callback(lambda f: seen.append(f.value()))
    done.set_result(5)
    assert seen == [5] and torch.futures.collect_all([done]).wait() == [done]
