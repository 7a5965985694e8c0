"""tocha.multiprocessing: tensors cross processes over shared memory, in every start method."""

from __future__ import annotations

import importlib.util
import pickle

import mp_workers
import numpy as np
import pytest

import tocha as torch
import tocha.multiprocessing as mp

METHODS = ["fork", "spawn", "forkserver"]
TIMEOUT = 60

DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
]
# bfloat16 is stored with ml_dtypes, tocha-core's optional dependency (tocha-core[bfloat16]).
if importlib.util.find_spec("ml_dtypes") is None:
    DTYPES.remove(torch.bfloat16)
# Tensors that require grad need tocha-autograd, which tocha-mp does not depend on.
NO_AUTOGRAD = "tocha-autograd is not installed (tocha-mp does not depend on it)"


def exchange(method, tensors):
    """Send `tensors` to a child of `method` that fills them with 1; what it saw and what it
    sent back."""
    ctx = mp.get_context(method)
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=mp_workers.fill_and_describe, args=(q_in, q_out))
    p.start()
    try:
        q_in.put(tensors)
        info, back = q_out.get(timeout=TIMEOUT)
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
    return info, back


def test_public_names_of_multiprocessing():
    import multiprocessing

    for name in multiprocessing.__all__:
        assert getattr(mp, name) is getattr(multiprocessing, name)
    assert set(mp.get_all_sharing_strategies()) == {"file_descriptor", "file_system"}
    assert mp.get_sharing_strategy() == "file_descriptor"
    with pytest.raises(AssertionError, match="invalid sharing strategy"):
        mp.set_sharing_strategy("carrier pigeon")


def test_share_memory_in_place_keeps_views():
    t = torch.arange(24.0).reshape(4, 6)
    rows = t[1:3]
    cols = t[:, ::2]
    flipped = t.T
    ptr = t.data_ptr()
    assert not t.is_shared()
    assert rows.share_memory_() is rows
    assert t.is_shared() and rows.is_shared() and cols.is_shared() and flipped.is_shared()
    assert t.data_ptr() != ptr
    assert t.tolist() == np.arange(24.0).reshape(4, 6).tolist()
    assert (rows.storage_offset(), rows.stride()) == (6, (6, 1))
    assert (cols.storage_offset(), cols.stride()) == (0, (6, 2))
    flipped[4, 3] = -1.0
    assert t[3, 4].item() == -1.0 and cols[3, 2].item() == -1.0
    again = t.data_ptr()
    t.share_memory_()
    assert t.data_ptr() == again


def test_module_share_memory():
    nn = pytest.importorskip("tocha.nn")
    model = nn.Linear(3, 2)
    model.weight.grad = torch.ones(2, 3)
    assert model.share_memory() is model
    assert all(p.is_shared() for p in model.parameters())
    assert model.weight.grad.is_shared()
    assert isinstance(model.weight, nn.Parameter)


def test_refuses_non_leaf_requiring_grad():
    pytest.importorskip("tocha.autograd", reason=NO_AUTOGRAD)
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        mp.reducer.ForkingPickler.dumps(x * 2)


def test_same_process_round_trip_shares_and_keeps_requires_grad():
    pytest.importorskip("tocha.autograd", reason=NO_AUTOGRAD)
    x = torch.ones(5, requires_grad=True)
    y = pickle.loads(mp.reducer.ForkingPickler.dumps(x))
    assert y.requires_grad and y.is_leaf and y.data_ptr() == x.data_ptr()


@pytest.mark.parametrize("method", METHODS)
def test_queue_round_trip_shares_memory(method):
    pytest.importorskip("tocha.autograd", reason=NO_AUTOGRAD)
    t = torch.zeros(1000)
    grad_leaf = torch.zeros(4, requires_grad=True)
    info, back = exchange(method, [t, grad_leaf])
    assert t.tolist() == [1.0] * 1000
    assert info[0][5] is True and info[1][6] is True
    assert back[0].data_ptr() == t.data_ptr()
    back[0][0] = 5
    assert t[0].item() == 5
    assert back[1].requires_grad


@pytest.mark.parametrize("method", METHODS)
def test_views_non_contiguous_and_empty(method):
    base = torch.arange(60.0).reshape(6, 10)
    views = [base[2:5, 1:7], base.T, base[:, ::3], base.T[1::3, 4:], torch.empty(0, 3), base[6:]]
    expected = [(tuple(v.shape), v.stride(), v.storage_offset(), v.tolist()) for v in views[:4]]
    info, back = exchange(method, views)
    for (_, shape, stride, offset, values, shared, _), want in zip(info, expected):
        assert (shape, stride, offset, values) == want and shared
    assert info[4][1] == (0, 3) and info[5][1] == (0, 10)
    assert base.tolist() == [[1.0] * 10] * 6
    assert back[1].data_ptr() == base.data_ptr()


@pytest.mark.parametrize("method", METHODS)
def test_every_dtype(method):
    tensors = [torch.arange(6).reshape(2, 3).to(dtype) for dtype in DTYPES]
    wanted = [t.to(torch.float64).tolist() for t in tensors]
    info, _ = exchange(method, tensors)
    for (dtype, shape, _, _, values, _, _), t, want in zip(info, tensors, wanted):
        assert dtype == str(t.dtype) and shape == (2, 3)
        assert [[complex(v) for v in row] for row in values] == want
        assert t.to(torch.float64).tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("method", METHODS)
def test_pool_map(method):
    tensors = [torch.full((100,), float(i)) for i in range(8)]
    with mp.get_context(method).Pool(2) as pool:
        results = pool.map(mp_workers.add_one, tensors, chunksize=1)
    for i, (t, r) in enumerate(zip(tensors, results)):
        assert t.tolist() == [i + 1.0] * 100
        assert r.data_ptr() == t.data_ptr()


@pytest.mark.parametrize("method", METHODS)
def test_large_tensor(method):
    # 256 MB (not the gigabytes a real model may have) to keep CI fast.
    t = torch.zeros(64 * 1024 * 1024)
    info, back = exchange(method, [t[:4], t])
    assert t[0].item() == 1.0 and t[-1].item() == 1.0 and back[1].data_ptr() == t.data_ptr()


@pytest.mark.parametrize("method", METHODS)
def test_process_arguments_and_pipe(method):
    ctx = mp.get_context(method)
    t, u = torch.zeros(10), torch.zeros(3)
    if method == "fork":  # fork copies the parent without pickling: share first, as in torch
        t.share_memory_()
        u.share_memory_()
    p = ctx.Process(target=mp_workers.add_one_to_all, args=(t, u, t[2:]))
    p.start()
    p.join(TIMEOUT)
    assert p.exitcode == 0 and t.tolist() == [1.0] * 2 + [2.0] * 8 and u.tolist() == [1.0] * 3
    a, b = ctx.Pipe()
    a.send(t)
    assert b.recv().data_ptr() == t.data_ptr()
    a.close()
    b.close()


def test_spawn_helper_runs_and_reports_failures():
    t = torch.zeros(4)
    mp.spawn(mp_workers.write_index, args=(t,), nprocs=2)
    assert t.tolist() == [1.0, 2.0, 0.0, 0.0]
    with pytest.raises(mp.ProcessRaisedException, match="child failed on purpose"):
        mp.spawn(mp_workers.fail_second, nprocs=2, start_method="forkserver")


def test_full_shm_is_an_error_not_sigbus():
    import os

    from tocha.multiprocessing import _segments

    st = os.statvfs(_segments.SHM_DIR)
    before = set(os.listdir(_segments.SHM_DIR))
    with pytest.raises(RuntimeError, match="No space left on device"):
        _segments.allocate(st.f_blocks * st.f_frsize + 2**30, "file_system")
    assert set(os.listdir(_segments.SHM_DIR)) <= before | _own_arenas()


def _own_arenas() -> set:
    import os

    return {f for f in os.listdir("/dev/shm") if f.startswith(f"tocha_{os.getpid()}_")}
