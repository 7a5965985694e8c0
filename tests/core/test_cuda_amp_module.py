"""``torch.cuda.amp`` as PyTorch's: importable as a module, its autocast and GradScaler
deprecated spellings (FutureWarning), and CUDA autocast disabled with PyTorch's warning where
CUDA is not available (programs written for a GPU run on the CPU unchanged)."""

from __future__ import annotations

import importlib
import warnings

import pytest

import tocha


def test_cuda_amp_imports_as_a_module():
    module = importlib.import_module("tocha.cuda.amp")
    assert module is tocha.cuda.amp
    from tocha.cuda.amp import GradScaler, autocast  # noqa: F401


@pytest.mark.skipif(tocha.cuda.is_available(), reason="CUDA is available here")
def test_cuda_autocast_without_cuda_warns_and_is_off():
    with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported"):
        region = tocha.autocast("cuda")
    with region:
        assert not tocha.is_autocast_enabled()
        assert not tocha.is_autocast_enabled("cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tocha.autocast("cuda", enabled=False):  # nothing to warn about
            pass


def test_deprecated_spellings_warn():
    with pytest.warns(FutureWarning, match=r"cuda\.amp\.GradScaler\(args\.\.\.\)` is deprecated"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            scaler = tocha.cuda.amp.GradScaler()
    assert scaler.is_enabled() == tocha.cuda.is_available()
    with pytest.warns(FutureWarning, match=r"cuda\.amp\.autocast\(args\.\.\.\)` is deprecated"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            tocha.cuda.amp.autocast()
