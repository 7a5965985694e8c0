"""CUDA IPC on a real GPU (marked ``cuda``; skipped without tocha-cuda, CuPy and a GPU): cuda
tensors through tocha.multiprocessing queues to a spawned child, which writes to the same GPU
memory, and back."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

# The queues are tocha-mp's, which tocha-cuda does not depend on: its tests alone skip this
# file (`nox -s tests` runs it, on a GPU).
pytest.importorskip(
    "tocha.multiprocessing", reason="tocha-mp is not installed (tocha-cuda does not need it)"
)

import tocha.multiprocessing as mp  # noqa: E402

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(
        not tocha.cuda.is_available(), reason="no CUDA GPU (tocha-cuda, CuPy and a GPU are needed)"
    ),
]
TIMEOUT = 120


def add_one(q_in, q_out):
    """Child: receive cuda tensors, report what arrived, add 1 to each in place, send them back
    with a tensor made here, and keep that one alive until the parent has read it."""
    tensors = q_in.get(timeout=TIMEOUT)
    info = [(str(t.device), tuple(t.shape), t.stride(), t.is_shared()) for t in tensors]
    with tocha.no_grad():
        for t in tensors:
            t.add_(1)
    made = tocha.full((4,), 5.0, device="cuda")
    q_out.put((info, tensors, made))
    q_in.get(timeout=TIMEOUT)


def exchange(tensors):
    """Send `tensors` to a spawned child running `add_one`: what it saw, what it sent back,
    and the values of the tensor it made (read while the child, its producer, lives)."""
    ctx = mp.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=add_one, args=(q_in, q_out))
    p.start()
    try:
        q_in.put(tensors)
        info, back, made = q_out.get(timeout=TIMEOUT)
        made_values = made.cpu().tolist()
        del made
        q_in.put("done")
        p.join(TIMEOUT)
        assert p.exitcode == 0
    finally:
        if p.is_alive():
            p.kill()
            p.join()
        for q in (q_in, q_out):
            q.close()
            q.join_thread()
    return info, back, made_values


def test_child_writes_are_seen_by_the_parent():
    t = tocha.zeros(1000, device="cuda")
    assert t.share_memory_() is t and t.is_shared()
    info, _, made = exchange([t])
    assert info == [("cuda:0", (1000,), (1,), True)]
    assert t.cpu().tolist() == [1.0] * 1000
    assert made == [5.0] * 4


def test_a_view_with_an_offset():
    base = tocha.arange(60.0, device="cuda").reshape(6, 10)
    view = base[2:5, 1:7]
    info, _, _ = exchange([view])
    assert info == [("cuda:0", (3, 6), (10, 1), True)]
    want = np.arange(60.0).reshape(6, 10)
    want[2:5, 1:7] += 1
    np.testing.assert_array_equal(base.cpu().numpy(), want)


def test_a_tensor_sent_back_and_forth():
    pytest.importorskip(
        "tocha.autograd", reason="tocha-autograd is not installed (tocha-cuda does not need it)"
    )
    t = tocha.zeros(8, device="cuda", requires_grad=True)
    _, back, _ = exchange([t])
    assert back[0].data_ptr() == t.data_ptr()
    assert back[0].requires_grad and back[0].is_leaf
    _, again, _ = exchange(back)
    assert again[0].data_ptr() == t.data_ptr()
    assert t.detach().cpu().tolist() == [2.0] * 8
