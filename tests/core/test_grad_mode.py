"""Grad mode lives in tocha-core: context managers, decorators, threads."""

from __future__ import annotations

import importlib.util
import threading

import pytest

import tocha

HAS_AUTOGRAD = importlib.util.find_spec("tocha.autograd") is not None


@pytest.mark.parametrize(
    "context, inside",
    [
        (tocha.no_grad, False),
        (tocha.enable_grad, True),
        (lambda: tocha.set_grad_enabled(False), False),
        (lambda: tocha.set_grad_enabled(True), True),
        (tocha.inference_mode, False),
    ],
)
def test_context_managers_set_and_restore(context, inside):
    for outer in (True, False):
        tocha.set_grad_enabled(outer)
        try:
            with context():
                assert tocha.is_grad_enabled() is inside
            assert tocha.is_grad_enabled() is outer
        finally:
            tocha.set_grad_enabled(True)


def test_decorators():
    @tocha.no_grad()
    def off():
        return tocha.is_grad_enabled()

    @tocha.set_grad_enabled(False)
    def also_off():
        return tocha.is_grad_enabled()

    @tocha.inference_mode()
    def inference():
        return tocha.is_grad_enabled(), tocha.is_inference_mode_enabled()

    assert off() is False
    assert also_off() is False
    assert inference() == (False, True)
    assert tocha.is_grad_enabled() and not tocha.is_inference_mode_enabled()


def test_set_grad_enabled_as_a_plain_call():
    tocha.set_grad_enabled(False)
    assert not tocha.is_grad_enabled()
    tocha.set_grad_enabled(True)
    assert tocha.is_grad_enabled()


def test_grad_mode_is_per_thread():
    seen = []
    entered, release = threading.Event(), threading.Event()

    def worker():
        with tocha.no_grad():
            entered.set()
            release.wait(5)
            seen.append(tocha.is_grad_enabled())

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait(5)
    assert tocha.is_grad_enabled()  # the other thread's no_grad does not leak here
    release.set()
    thread.join()
    assert seen == [False]


def test_exception_inside_restores_mode():
    with pytest.raises(ZeroDivisionError):
        with tocha.no_grad():
            1 / 0  # noqa: B018
    assert tocha.is_grad_enabled()


@pytest.mark.skipif(HAS_AUTOGRAD, reason="tocha-autograd is installed")
def test_requires_grad_without_autograd_names_the_distribution():
    with pytest.raises(ImportError, match="tocha-autograd"):
        tocha.ones(3, requires_grad=True)
    with pytest.raises(ImportError, match="tocha-autograd"):
        tocha.ones(3).requires_grad_()
    t = tocha.ones(3)
    assert t.requires_grad is False and t.grad is None and t.grad_fn is None and t.is_leaf
