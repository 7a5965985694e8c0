"""The dtypes nn.functional's kernels refuse: the exception type and message PyTorch gives
(never a NumPy error, and never a silent result where PyTorch has no kernel)."""

from __future__ import annotations

import pytest

import tocha

DTYPES = ["int64", "int32", "uint8", "bool", "complex64"]


def _labels(lib, *shape):
    return lib.zeros(shape, dtype=lib.int64)


CALLS = {
    "layer_norm": lambda lib, z: lib.nn.functional.layer_norm(z, (4,)),
    "rms_norm": lambda lib, z: lib.nn.functional.rms_norm(z, (4,)),
    "sdpa": lambda lib, z: lib.nn.functional.scaled_dot_product_attention(z, z, z),
    "local_response_norm": lambda lib, z: lib.nn.functional.local_response_norm(z, 2),
    "local_response_norm_4d": lambda lib, z: lib.nn.functional.local_response_norm(z[None], 2),
    "unfold": lambda lib, z: lib.nn.functional.unfold(z[None], (1, 2)),
    "pad_reflect": lambda lib, z: lib.nn.functional.pad(z, (1, 1), mode="reflect"),
    "pad_replicate_2d": lambda lib, z: lib.nn.functional.pad(z[None], (1,) * 4, mode="replicate"),
    "cross_entropy_batch_mismatch": lambda lib, z: lib.nn.functional.cross_entropy(
        z[0], _labels(lib, 4)
    ),
    "cross_entropy_spatial": lambda lib, z: lib.nn.functional.cross_entropy(z, _labels(lib, 2, 4)),
    "dropout": lambda lib, z: lib.nn.functional.dropout(z, 0.5),
    "dropout_all": lambda lib, z: lib.nn.functional.dropout(z, 1.0),
    "dropout2d": lambda lib, z: lib.nn.functional.dropout2d(z[None], 0.5),
    "alpha_dropout": lambda lib, z: lib.nn.functional.alpha_dropout(z, 0.5, True),
    "feature_alpha_dropout": lambda lib, z: lib.nn.functional.feature_alpha_dropout(
        z[None], 0.5, True
    ),
    "hardtanh": lambda lib, z: lib.nn.functional.hardtanh(z),
    "relu6": lambda lib, z: lib.nn.functional.relu6(z),
}


def _outcome(lib, call, dtype):
    z = lib.ones(2, 3, 4, dtype=getattr(lib, dtype))
    try:
        out = call(lib, z)
    except Exception as exc:  # noqa: BLE001 - the type and message are what is compared
        return type(exc).__name__, str(exc)
    return "ok", str(out.dtype).split(".")[-1]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_dtype_outcome_matches_torch(torch, name, dtype):
    assert _outcome(tocha, CALLS[name], dtype) == _outcome(torch, CALLS[name], dtype)
