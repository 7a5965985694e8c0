"""Load and save failures in PyTorch's words (recorded by hand from PyTorch
2.13: the oracle cannot hand files to PyTorch)."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

import tocha

_DOCS = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)
_CHANGED = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only if "
    "you got the file from a trusted source."
)
NUMPY_REFUSED = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, "
    "\x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) "
    + _CHANGED
    + "\n\t(2) Alternatively, to load with `weights_only=True` please check the recommended "
    "steps in the following error message.\n\tWeightsUnpickler error: Unsupported global: "
    "GLOBAL numpy._core.multiarray._reconstruct was not an allowed global by default. Please "
    "use `torch.serialization.add_safe_globals([numpy._core.multiarray._reconstruct])` or the "
    "`torch.serialization.safe_globals([numpy._core.multiarray._reconstruct])` context manager "
    "to allowlist this global if you trust this class/function." + _DOCS
)


def _refusal(data: bytes) -> str:
    with pytest.raises(pickle.UnpicklingError) as info:
        tocha.load(io.BytesIO(data))
    return str(info.value).replace("tocha.", "torch.")


def test_a_numpy_array_is_refused_in_pytorchs_words():
    buffer = io.BytesIO()
    tocha.save({"a": np.ones(2)}, buffer)
    assert _refusal(buffer.getvalue()) == NUMPY_REFUSED


def test_a_broken_pickle_is_refused_in_pytorchs_frame():
    message = _refusal(b"garbage data here")
    assert message.startswith("Weights only load failed. " + _CHANGED + "\nPlease file an issue")
    assert message.endswith(_DOCS)


def test_an_empty_file_is_an_eof_error(tmp_path):
    path = tmp_path / "empty.pt"
    path.write_bytes(b"")
    with pytest.raises(EOFError):
        tocha.load(path)
    with pytest.raises(EOFError):
        tocha.load(io.BytesIO())


def test_saving_into_a_missing_folder_names_it(tmp_path):
    folder = tmp_path / "missing"
    with pytest.raises(RuntimeError, match=f"^Parent directory {folder} does not exist.$"):
        tocha.save(tocha.ones(1), folder / "x.pt")
