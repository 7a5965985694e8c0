"""The fixes the fidelity instruments led to, each checked against PyTorch (recorded): the
exception type and message, or the result, of calls that once disagreed."""

from __future__ import annotations

import builtins

import numpy as np
import pytest

import tocha


def _outcome(call):
    try:
        return call()
    except Exception as exc:  # the outcome compared is the exception itself
        return exc


def _builtin_base(exc: BaseException) -> str:
    return next(c.__name__ for c in type(exc).__mro__ if hasattr(builtins, c.__name__))


def assert_same_error(want_call, got_call) -> None:
    """Both calls raise: exceptions of the same builtin class, with the same message."""
    want, got = _outcome(want_call), _outcome(got_call)
    assert isinstance(want, Exception), f"PyTorch returned {want!r}"
    assert isinstance(got, Exception), f"tocha returned {got!r} where PyTorch raised {want!r}"
    assert (_builtin_base(got), str(got)) == (_builtin_base(want), str(want))


@pytest.mark.parametrize("name", ["rfft", "rfftn", "rfft2", "ihfft", "ihfftn"])
def test_real_input_transforms_refuse_complex(torch, name):
    z = np.zeros((2, 4), np.complex64)
    assert_same_error(
        lambda: getattr(torch.fft, name)(torch.from_numpy(z)),
        lambda: getattr(tocha.fft, name)(tocha.from_numpy(z)),
    )
