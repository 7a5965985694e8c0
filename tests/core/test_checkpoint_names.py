"""The names tocha's classes and functions take in a checkpoint: PyTorch's (see
tocha/_serialization/_names.py), so whole objects move between the frameworks; and the
allowlist matched by those names. Whole modules are tested in tests/nn."""

from __future__ import annotations

import io
import pickle
import sys
import types

import pytest

import tocha
import tocha.serialization as ser
from tocha._serialization._names import tocha_object, torch_aliases, torch_name


@pytest.fixture
def private_module():
    """A function defined in a private module ``tocha._demo_private.kernels`` and published
    by ``tocha.demo_private``."""

    def scale(x):
        return x

    scale.__module__, scale.__qualname__ = "tocha._demo_private.kernels", "scale"
    public = types.ModuleType("tocha.demo_private")
    public.scale = scale
    sys.modules["tocha.demo_private"] = public
    yield scale
    del sys.modules["tocha.demo_private"]


NAMED = [
    ("tensor", tocha.Tensor, "torch.Tensor"),
    ("size", tocha.Size, "torch.Size"),
    ("function", tocha.add, "torch.add"),
    ("not_tocha", len, None),
    ("nested", type("Inner", (), {"__module__": "tocha._tensor", "__qualname__": "T.Inner"}), None),
]


@pytest.mark.parametrize(("obj", "name"), [n[1:] for n in NAMED], ids=[n[0] for n in NAMED])
def test_pytorch_names_of_tocha_objects(obj, name):
    assert torch_name(obj) == name


def test_a_private_definition_is_named_where_it_is_published(private_module):
    assert torch_name(private_module) == "torch.demo_private.scale"


def test_pytorch_names_come_back_as_tocha_objects():
    assert tocha_object("torch.Tensor") is tocha.Tensor
    assert torch_aliases("torch._C._VariableFunctions.add")[-1] == "torch.add"
    assert tocha_object("torch._C._VariableFunctions.add") is tocha.add
    with pytest.raises(AttributeError):
        tocha_object("torch.no_such_function")


def test_a_function_is_written_and_allowlisted_by_its_pytorch_name():
    buffer = io.BytesIO()
    tocha.save({"fn": tocha.add}, buffer)
    data = buffer.getvalue()
    assert b"ctorch\nadd\n" in data  # the GLOBAL opcode, in the uncompressed data.pkl
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL torch.add was not an allowed"):
        tocha.load(io.BytesIO(data))
    with ser.safe_globals([tocha.add]):
        assert tocha.load(io.BytesIO(data))["fn"] is tocha.add
    assert tocha.load(io.BytesIO(data), weights_only=False)["fn"] is tocha.add


class Point:
    """A user's class, pickled under this module's name."""

    def __init__(self, x=0):
        self.x = x


@pytest.mark.parametrize("protocol", [2, 4], ids=["global", "stack_global"])
def test_unsafe_globals_in_checkpoint(protocol):
    buffer = io.BytesIO()
    tocha.save(
        {"p": Point(3), "fn": tocha.add, "t": tocha.ones(2)}, buffer, pickle_protocol=protocol
    )
    data = buffer.getvalue()
    found = ser.get_unsafe_globals_in_checkpoint(io.BytesIO(data))
    assert found == [f"{__name__}.Point", "torch.add"]
    with ser.safe_globals([Point, tocha.add]):
        assert ser.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == []
        assert tocha.load(io.BytesIO(data))["p"].x == 3
