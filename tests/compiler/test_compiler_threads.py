"""tocha-compiler's numba kernels keep within tocha's thread count, as PyTorch's kernels keep
within torch.set_num_threads: one thread means serial loops."""

from __future__ import annotations

import pytest

pytest.importorskip("numba")
import tocha  # noqa: E402
from tocha.compiler import _codegen_numba  # noqa: E402


@pytest.fixture
def restore_threads():
    before = tocha.get_num_threads()
    yield
    tocha.set_num_threads(before)


def test_kernels_follow_tocha_set_num_threads(restore_threads):
    import numba

    tocha.set_num_threads(1)
    assert _codegen_numba._threads() == 1
    if numba.config.NUMBA_NUM_THREADS > 1:
        tocha.set_num_threads(2)
        assert _codegen_numba._threads() == 2
        assert numba.get_num_threads() == 2


def test_a_large_kernel_at_one_thread_gives_eager_values(restore_threads):
    tocha.set_num_threads(1)
    x = tocha.randn(1 << 17)
    f = tocha.compile(lambda x: (x * 2 + 1).tanh().relu())
    _codegen_numba.wait_for_numba()
    expected = (x * 2 + 1).tanh().relu()
    for _ in range(2):
        assert tocha.allclose(f(x), expected, atol=1e-6)
