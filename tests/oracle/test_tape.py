"""The recorded oracle itself, on a small stand-in for PyTorch: what a test receives is the
same recorded, checked and replayed; a changed question or a changed answer is caught."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest

from tests.oracle.tape import Handle, Mode, StaleOracle, Tape, load_answers, save_answers


class LibraryError(RuntimeError):
    """An exception class of the stand-in library's own."""


class Box:
    """A stand-in tensor: wraps an array, supports a few operators."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float32)
        self.shape = tuple(self.values.shape)

    def __add__(self, other):
        other = other.values if isinstance(other, Box) else other
        return Box(self.values + other)

    def __len__(self):
        return len(self.values)

    def __iter__(self):
        return iter(self.values.tolist())

    def numpy(self):
        return self.values

    def fill_(self, value):
        self.values[...] = value
        return self

    def __repr__(self):
        return f"Box({self.values.tolist()})"


def make_library(scale: float = 1.0) -> types.ModuleType:
    lib = types.ModuleType("fakelib")
    lib.Box = Box
    lib.tensor = lambda values: Box(np.asarray(values) * scale)

    def noisy(box):
        warnings.warn("noisy is deprecated", DeprecationWarning, stacklevel=2)
        return box

    def fails(message):
        raise LibraryError(message)

    lib.noisy, lib.fails = noisy, fails
    lib.apply = lambda fn, box: fn(box)
    return lib


def conversation(lib) -> dict:
    """What a test might ask: calls, operators, identity, iteration, errors, warnings, and a
    callback that asks the library inside a call."""
    a = lib.tensor([1.0, 2.0])
    b = a + 1
    seen = {"sum": (a + b).numpy().tolist(), "len": len(b), "list": list(b), "repr": repr(b)}
    seen["same"] = a.fill_(3.0) is a
    seen["shape"] = a.shape
    with pytest.raises(RuntimeError, match="bad input") as raised:
        lib.fails("bad input")
    seen["error"] = type(raised.value).__name__
    with pytest.warns(DeprecationWarning, match="deprecated"):
        lib.noisy(a)
    seen["callback"] = lib.apply(lambda box: lib.tensor(box.numpy() * 2), a).numpy().tolist()
    seen["isinstance"] = isinstance(a, lib.Box)
    return seen


def record(lib) -> tuple[dict, list]:
    tape = Tape(Mode.RECORD, "t", torch=lib)
    return conversation(tape.root), tape.events


def test_recorded_answers_are_what_the_library_answers():
    direct = conversation(make_library())
    recorded, events = record(make_library())
    assert recorded == direct
    assert events, "nothing was recorded"


def test_replay_needs_no_library_and_answers_alike():
    expected, events = record(make_library())
    tape = Tape(Mode.REPLAY, "t", events)
    assert conversation(tape.root) == expected
    tape.finish()


def test_check_passes_on_the_same_answers():
    _, events = record(make_library())
    tape = Tape(Mode.CHECK, "t", events, torch=make_library())
    conversation(tape.root)
    tape.finish()


def test_check_fails_when_the_library_answers_differently():
    _, events = record(make_library())
    tape = Tape(Mode.CHECK, "t", events, torch=make_library(scale=2.0))
    with pytest.raises(StaleOracle, match="record_oracle.py"):
        conversation(tape.root)


def test_replay_fails_on_a_question_that_was_not_recorded():
    _, events = record(make_library())
    root = Tape(Mode.REPLAY, "t", events).root
    with pytest.raises(StaleOracle, match="was recorded as"):
        root.tensor([1.0, 2.0, 3.0])


def test_replay_fails_when_questions_are_left_unasked():
    _, events = record(make_library())
    tape = Tape(Mode.REPLAY, "t", events)
    tape.root.tensor([1.0, 2.0])
    with pytest.raises(StaleOracle, match="questions"):
        tape.finish()


def test_a_library_exception_keeps_its_name_message_and_builtin_base():
    tape = Tape(Mode.RECORD, "t", torch=make_library())
    with pytest.raises(RuntimeError) as raised:
        tape.root.fails("boom")
    replayed = Tape(Mode.REPLAY, "t", tape.events)
    with pytest.raises(RuntimeError) as again:
        replayed.root.fails("boom")
    for exc in (raised.value, again.value):
        assert type(exc).__name__ == "LibraryError" and str(exc) == "boom"


def test_arrays_handed_out_are_copies():
    tape = Tape(Mode.RECORD, "t", torch=make_library())
    box = tape.root.tensor([1.0, 2.0])
    array = box.numpy()
    array[0] = 100.0
    assert box.numpy().tolist() == [1.0, 2.0]


def test_handles_stand_for_objects_and_keep_identity():
    tape = Tape(Mode.RECORD, "t", torch=make_library())
    box = tape.root.tensor([1.0])
    assert isinstance(box, Handle)
    assert box.fill_(2.0) is box


def test_answers_round_trip_through_their_file(tmp_path, monkeypatch):
    monkeypatch.setattr("tests.oracle.tape.ANSWERS", tmp_path)
    expected, events = record(make_library())
    save_answers("tests/x/test_y.py", {"tests/x/test_y.py::t": events, "other": "a reason"})
    assert (tmp_path / "x" / "test_y.pkl.xz").exists()
    answers = load_answers("tests/x/test_y.py")
    assert answers["other"] == "a reason"
    assert conversation(Tape(Mode.REPLAY, "t", answers["tests/x/test_y.py::t"]).root) == expected
