"""TorchScript classes: ``tocha.jit.script`` of a class compiles its methods and returns the
class; scripted code naming a class (scripted or not) builds objects whose methods run in
the interpreter. Expected values are torch 2.13's, recorded by hand."""

from __future__ import annotations

import io

import pytest

import tocha
from tocha.jit.frontend import NotSupportedError, UnsupportedNodeError


@tocha.jit.script
class Counter:
    def __init__(self, start: int):
        self.count = start
        self.items: list[int] = []

    def add(self, n: int) -> int:
        self.count += n
        self.items.append(n)
        return self.count

    def scaled(self, x: tocha.Tensor) -> tocha.Tensor:
        return x * self.count


class Shift:
    def __init__(self, k: float):
        self.k = k

    def apply(self, x: tocha.Tensor) -> tocha.Tensor:
        return x + self.k


@tocha.jit.script
def counted(x: tocha.Tensor) -> tocha.Tensor:
    c = Counter(1)
    for i in range(3):
        c.add(i)
    return c.scaled(x)


def test_scripting_a_class_returns_the_class():
    assert isinstance(Counter, type) and Counter.__name__ == "Counter"
    c = Counter(2)
    assert c.add(3) == 5 and c.items == [3]


def test_scripted_code_builds_and_uses_objects_of_the_class():
    assert counted(tocha.ones(2)).tolist() == [4.0, 4.0]


def test_a_class_named_by_scripted_code_is_compiled_too():
    @tocha.jit.script
    def shifted(x: tocha.Tensor) -> tocha.Tensor:
        return Shift(0.5).apply(x)

    assert shifted(tocha.zeros(2)).tolist() == [0.5, 0.5]


def test_an_object_returned_to_python_keeps_its_attributes_and_methods():
    @tocha.jit.script
    def make(n: int):
        return Counter(n)

    obj = make(4)
    assert obj.count == 4
    assert obj.add(1) == 5


def test_methods_are_checked_against_the_subset():
    class Bad:
        def run(self, x: tocha.Tensor) -> tocha.Tensor:
            double = lambda v: v * 2  # noqa: E731
            return double(x)

    with pytest.raises(UnsupportedNodeError, match="Lambda"):
        tocha.jit.script(Bad)


def test_a_module_class_is_still_refused():
    with pytest.raises(NotSupportedError):
        tocha.jit.script(tocha.nn.Linear)


def test_saving_code_that_uses_a_class_raises_a_clear_error():
    with pytest.raises(RuntimeError, match="TorchScript class"):
        tocha.jit.save(counted, io.BytesIO())
