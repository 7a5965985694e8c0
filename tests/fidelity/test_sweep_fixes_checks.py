"""The order of PyTorch's checks, where the sweep found tocha raising another of them (or
none), checked against PyTorch (recorded): scatter's src of other dims than self (an
IndexError from reading src's sizes, or a RuntimeError naming src), scatter's reduce checked
even with an empty index, index_put's value shape checked before its indices' bounds;
empty_permuted's layout, range's dtypes, mv/unflatten of a 0-dim tensor, the FFTs' dims
before their dtype, fftfreq's dtypes."""

from __future__ import annotations

import pytest

from tests.fidelity.test_sweep_fixes_signatures import same_outcome

I34 = "lib.zeros(3, 4, dtype=lib.int64)"
I234 = "(lib.arange(24).reshape(2, 3, 4) % 4)"

CALLS = [
    f"lib.scatter(x, 1, {I34}, lib.zeros(4, dtype=lib.float64))",
    f"lib.scatter(x, 0, {I34}, lib.zeros(4, dtype=lib.float64))",
    f"lib.scatter(x, -1, {I34}, lib.zeros(4, dtype=lib.float64), reduce='add')",
    f"lib.scatter(x, 1, {I34}, lib.tensor(1.0, dtype=lib.float64))",
    f"lib.scatter(x, 1, {I34}, lib.zeros(3, 4, 2, dtype=lib.float64))",
    f"lib.scatter(x, 0, {I34}[0], lib.zeros(4, dtype=lib.float64))",
    f"lib.scatter(x, 2, {I34}, x)",
    f"lib.scatter_add(x, 1, {I34}, lib.zeros(4, dtype=lib.float64))",
    f"lib.scatter_reduce(x, 1, {I34}, lib.zeros(4, dtype=lib.float64), 'sum')",
    f"x.scatter_(1, {I34}, lib.zeros(4, dtype=lib.float64))",
    "lib.zeros(4, 1, 3).scatter(2, lib.zeros(4, 1, 3, dtype=lib.int64), lib.zeros(1, 3))",
    "lib.zeros(4, 1, 3).scatter(1, lib.zeros(4, 1, 3, dtype=lib.int64), lib.zeros(3))",
    "lib.zeros(2, 3, 4).scatter(0, lib.zeros(2, 3, 4, dtype=lib.int64), lib.zeros(3, 4))",
    f"lib.scatter(x, 1, {I34}, 1.0, reduce='sum')",
    "lib.scatter(lib.zeros(0), 0, lib.zeros(0, dtype=lib.int64), lib.zeros(0), reduce='sum')",
    f"lib.scatter(x, 1, {I34}, x, reduce='multiply')",
    f"lib.zeros(2, 3, 4).index_put([{I234}, {I234}], lib.zeros(3, 4))",
    f"lib.zeros(2, 3, 4).index_put_([{I234}[0, 0], {I234}], lib.zeros(2, 3, 4))",
    f"lib.zeros(2, 3, 4).index_put([{I234} % 2, {I234} % 3], lib.zeros(3, 4))",
    f"lib.zeros(2, 3, 4).index_put([{I234} % 2, {I234} % 3], lib.zeros(2, 3, 4, 4))",
]


@pytest.mark.parametrize("expression", CALLS)
def test_check_order(torch, expression):
    same_outcome(torch, expression)


MORE = [
    "lib.empty_permuted((2, 3), (1,))",
    "lib.empty_permuted((2, 3), (1, 0, 2))",
    "lib.empty_permuted((2, 3), (0, 0))",
    "lib.empty_permuted((2, 3), (0, 2))",
    "lib.empty_permuted((2, 3), (1, 0)).fill_(1)",
    "lib.range(0, 5, dtype=lib.complex64)",
    "lib.range(0, 5, dtype=lib.bool)",
    "lib.range(0, 5, dtype=lib.int64)",
    "lib.mv(full((), 1, 'float32'), full((), 1, 'float32'))",
    "lib.mv(full((3, 3), 1, 'float32'), full((), 1, 'float32'))",
    "full((), 1, 'float32').unflatten(-1, (-1,))",
    "full((3,), 1, 'float32').unflatten(1, (1,))",
    "lib.fft.fft2(full((5,), 1, 'bfloat16'))",
    "lib.fft.fftn(full((), 1, 'bfloat16'), dim=(0,))",
    "lib.fft.fftn(full((), 1, 'float32'), dim=(0,))",
    "lib.fft.irfft2(full((), 1, 'float16'))",
    "lib.fft.rfft2(full((3, 4), 1, 'float16'))",
    "lib.fft.fftfreq(2, dtype=lib.int64)",
    "lib.fft.fftfreq(2, dtype=lib.complex64)",
    "lib.fft.rfftfreq(3, dtype=lib.bool)",
    "lib.fft.rfftfreq(3, dtype=lib.float64)",
]


@pytest.mark.parametrize("expression", MORE)
def test_more_checks(torch, expression):
    same_outcome(torch, expression, values="fill_" in expression or "freq" in expression)


INDEXING = [
    "lib.take_along_dim(full((), 1, 'float64'), full((), 0, 'int64'), dim=-1)",
    "lib.take_along_dim(full((), 1, 'float32'), full((), 0, 'int64'), dim=0)",
    "lib.take_along_dim(full((), 1, 'float32'), full((), 0, 'int64'))",
    "lib.index_fill(x, 0, x, x)",
    "lib.index_fill(x, 0, full((2,), 0, 'int64'), full((), 5, 'float64'))",
    "lib.index_select(x, 1, x)",
    "lib.index_select(x, 1, full((2,), 0, 'float32'))",
]


@pytest.mark.parametrize("expression", INDEXING)
def test_indexing_check_order(torch, expression):
    same_outcome(torch, expression)


STFT = [
    "lib.stft(full((5,), 1, 'bool'), 1)",
    "lib.stft(full((5,), 1, 'bool'), 4, return_complex=True)",
    "lib.stft(full((5,), 1, 'bool'), 1, center=False)",
    "lib.stft(full((5,), 1, 'int64'), 1)",
]


@pytest.mark.parametrize("expression", STFT)
def test_stft_pads_first(torch, expression):
    same_outcome(torch, expression)


INDEX_ADD_ADDCMUL = [
    "lib.zeros(()).index_add_(0, lib.tensor([2]), lib.ones(()))",
    "lib.zeros(3).index_add_(0, lib.tensor([5]), lib.ones(1))",
    "lib.index_add(x, 1, x, x)",
    "lib.zeros(3).index_add(0, lib.tensor([1, 1]), lib.ones(2))",
    "lib.zeros(3, 2).index_add(0, lib.tensor([3]), lib.ones(1, 2))",
    "lib.addcmul(full((3,), 1, 'bool'), full((3,), 1, 'bool'), full((3,), 1, 'bool'))",
    "lib.addcmul(full((0,), 1, 'bool'), full((0,), 1, 'bool'), full((0,), 1, 'bool'))",
    "full((3,), 1, 'bool').addcmul_(full((3,), 1, 'bool'), full((3,), 1, 'bool'))",
    "lib.addcmul(full((3,), 1, 'bool'), full((3,), 2, 'int64'), full((3,), 1, 'bool'))",
]


@pytest.mark.parametrize("expression", INDEX_ADD_ADDCMUL)
def test_index_add_and_addcmul(torch, expression):
    same_outcome(torch, expression)
