"""What PyTorch keeps per process does not reach from one test to the next: its warnings given
once per process are spent when the oracle starts, so no recording holds one, and each test
starts with its distributions validating their arguments."""

from __future__ import annotations

import lzma
import pickle
import warnings
from pathlib import Path
from unittest import mock

import pytest

from tests.oracle import plugin

# Each warning PyTorch 2.13 gives once per process that a test meets: a call that gives it
# (as the tests make it, in other forms and dtypes than the oracle's start), and how its
# message begins.
GIVEN_ONCE = [
    ("torch.cholesky(torch.eye(3, dtype=torch.float64), upper=True)", "torch.cholesky is"),
    ("torch.cholesky(torch.eye(3), out=torch.empty(0))", "torch.cholesky is"),
    ("torch.eye(3).qr(some=False)", "torch.qr is"),
    ("torch.eye(3).lu(get_infos=True)", "torch.lu is"),
    ("torch.ones(3, 1).lu_solve(*torch.linalg.lu_factor(torch.eye(3)))", "torch.lu_solve is"),
    ("torch.ones(3, 1).triangular_solve(torch.eye(3), upper=False)", "torch.triangular_solve"),
    ("torch.chain_matmul(torch.eye(2), torch.eye(2), torch.eye(2))", "torch.chain_matmul is"),
    ("torch.nuclear_norm(torch.ones(3, 4), out=torch.empty(0))", "at::nuclear_norm"),
    ("torch.nuclear_norm(torch.ones(2, 3, 4), (1, 2), keepdim=True)", "at::nuclear_norm"),
    ("torch.frobenius_norm(torch.ones(3, 4), (0, 1), out=torch.empty(0))", "at::frobenius_norm"),
    ("torch.ones(4, 3).cross(torch.ones(4, 3))", "Using torch.cross without"),
    ("torch.meshgrid(torch.ones(3), torch.ones(2), torch.ones(2))", "torch.meshgrid: in an"),
    ("torch.FloatStorage(3)", "TypedStorage is deprecated"),
    ("torch.ones(2).where(torch.ones(2, dtype=torch.uint8), 0.0)", "where received a uint8"),
    ("torch.ones(2, dtype=torch.complex128).long()", "Casting complex values to real"),
    (
        "torch.ones(2, dtype=torch.bool) + (1 + 2j) * torch.ones(1, dtype=torch.chalf)",
        "ComplexHalf",
    ),
    ("torch.eye(3, dtype=torch.float64).to_sparse_csr()", "Sparse CSR tensor support"),
    (
        "torch.ones(3).index_reduce_(0, torch.tensor([0, 1]), torch.ones(2), 'amax')",
        "index_reduce() is in beta",
    ),
    (
        "torch.ones(3, 3, dtype=torch.float64).scatter_("
        "1, torch.zeros(3, 1, dtype=torch.long), torch.ones(3, 1, dtype=torch.float64), "
        "reduce='multiply')",
        "The reduce argument of torch.scatter",
    ),
    (
        "torch.searchsorted(torch.arange(12.0).reshape(4, 3).T, torch.ones(4, 3).T, right=True)",
        "torch.searchsorted(): ",
    ),
    ("torch.ones(2, 3, 4, dtype=torch.float64).T", "The use of `x.T` on tensors"),
    ("torch.tensor(1.0).adjoint()", "adjoint() is deprecated on 0-D"),
    ("torch.tensor(1.0).mT", "Tensor.mT is deprecated on 0-D"),
    ("torch.ones(64, dtype=torch.float64).stft(16, return_complex=True)", "A window was not"),
    (
        "torch.istft(torch.stft(torch.ones(64), 16, window=torch.ones(16), return_complex=True),"
        " 16)",
        "A window was not",
    ),
    ("torch.stft(torch.ones(64), 16, return_complex=False)", "stft with return_complex=False"),
    (
        "torch.nn.Conv2d(1, 1, 2, padding='same', dtype=torch.float64)("
        "torch.ones(1, 1, 5, 5, dtype=torch.float64))",
        "Using padding='same' with even",
    ),
    (
        "torch.nn.LSTM(4, 8, proj_size=2, num_layers=2, batch_first=True)(torch.ones(1, 3, 4))",
        "LSTM with projections",
    ),
]

FLEX_ATTENTION = "flex_attention called without torch.compile"
MESSAGES = [message for _, message in GIVEN_ONCE] + [FLEX_ATTENTION]

# A recording that asks PyTorch to warn every time holds the warning by design.
WARNS_ALWAYS_ON_PURPOSE = {
    "tests/core/test_storage.py::test_typed_storage_warns_once_with_torchs_message",
}


@pytest.mark.parametrize("call, message", GIVEN_ONCE, ids=[call for call, _ in GIVEN_ONCE])
def test_the_oracle_starts_with_the_warning_spent(call, message):
    pytest.importorskip("torch")
    torch = plugin._real_torch()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eval(call, {"torch": torch})
    assert [str(w.message) for w in caught if str(w.message).startswith(message)] == []


def test_flex_attention_warning_is_spent_without_compiling():
    """The oracle stops flex_attention after its warning: a process's first compile would
    patch PyTorch for every later test (Distribution's argument validation off)."""
    pytest.importorskip("torch")
    torch = plugin._real_torch()
    from torch.nn.attention.flex_attention import flex_attention

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with mock.patch.object(torch._dynamo, "is_dynamo_supported", lambda: False):
            with pytest.raises(RuntimeError, match="requires dynamo support"):
                flex_attention(*[torch.ones(1, 2, 4, 8, dtype=torch.float64)] * 3)
    assert [str(w.message) for w in caught if str(w.message).startswith(FLEX_ATTENTION)] == []


def test_each_test_starts_with_distributions_validating_their_arguments():
    pytest.importorskip("torch")
    torch = plugin._real_torch()
    torch.distributions.Distribution.set_default_validate_args(False)  # as torch.compile does
    plugin._seeded(torch)
    with pytest.raises(ValueError, match="constraint GreaterThan"):
        torch.distributions.Gamma(torch.ones(1), -torch.ones(1))


def test_no_recording_holds_a_warning_given_once():
    held = []
    for path in sorted((Path(__file__).parent / "answers").rglob("*.pkl.xz")):
        with lzma.open(path, "rb") as stream:
            raw = stream.read()
        if not any(message.encode() in raw for message in MESSAGES):
            continue  # unpickled only where a message occurs: the largest takes seconds
        for nodeid, events in pickle.loads(raw).items():
            if isinstance(events, str) or nodeid in WARNS_ALWAYS_ON_PURPOSE:
                continue
            held += [
                (nodeid, spec[3][:60])
                for event in events
                for spec in event[4]
                if spec[:2] == ("builtins", "UserWarning")  # NumPy has a ComplexWarning alike
                and any(spec[3].startswith(message) for message in MESSAGES)
            ]
    assert held == []
