"""tocha.torch_version (``torch.torch_version``): TorchVersion compares as a version, as
PyTorch's does, against strings, tuples and other versions."""

from __future__ import annotations

import pytest

from tocha.torch_version import TorchVersion, __version__

COMPARISONS = [
    ("2.13.0", "2.6"),
    ("2.13.0", "2.13"),
    ("2.13.0", "2.13.0.dev20250101"),
    ("2.13.0", "2.13.0rc1"),
    ("2.13.0", "2.13.0+cpu"),
    ("2.13.0", "2.13.1"),
    ("2.13.0", "10.0"),
    ("2.13.0a0", "2.13.0.dev1"),
    ("2.13.0.post1", "2.13.0"),
    ("1.0rc2", "1.0b10"),
]


@pytest.mark.parametrize("pair", COMPARISONS, ids=[f"{a}-vs-{b}" for a, b in COMPARISONS])
def test_comparisons_match_torch(torch, pair):
    a, b = pair
    got, want = TorchVersion(a), torch.torch_version.TorchVersion(a)
    for op in ("__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__"):
        assert getattr(got, op)(b) == getattr(want, op)(b), (op, a, b)


def test_tuples_strings_and_errors():
    v = TorchVersion("2.13.0")
    assert v >= (2, 0) and v < (3,) and v == [2, 13] and v > "2.12.9"
    assert isinstance(v, str) and v.split(".")[0] == "2" and hash(v) == hash("2.13.0")
    assert (v == None) is False  # noqa: E711
    with pytest.raises(ValueError, match="Invalid version: 'not a version'"):
        v < "not a version"  # noqa: B015
    assert __version__ == "2.13.0" and isinstance(__version__, TorchVersion)
