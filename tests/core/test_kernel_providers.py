"""Kernel providers: plugins that bring kernels for ops of an existing device (cpu here).

A provider wraps an op's kernel when the op's kernel is built; it may decline a call (the
built-in kernel runs), several stack by priority, and one can be switched off by the API or by
``TOCHA_KERNEL_PROVIDERS_DISABLE``. The installed test provider (tests/plugins/
tocha-testkernels) checks the entry-point path; the others are registered at run time.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tocha
from tests.installed import installed
from tocha.backends import KernelProvider
from tocha.library import REGISTRY, call, defop

needs_testkernels = pytest.mark.skipif(
    not installed("tocha-testkernels"),
    reason="the test plugin tocha-testkernels is not installed "
    "(pip install tests/plugins/tocha-testkernels)",
)


def _square_kernel(xp):
    return lambda x: x * x


def _negate_kernel(xp):
    return lambda x: -x


SQUARE = REGISTRY.get("testkernels_square") or defop("testkernels_square", _square_kernel, False)
NEGATE = REGISTRY.get("testkernels_negate") or defop("testkernels_negate", _negate_kernel, False)


class Recording(KernelProvider):
    """Serves testkernels_negate: records its calls, declines those with a float64 input."""

    device_type = "cpu"
    ops = frozenset({"testkernels_negate"})

    def __init__(self, name, priority, log):
        self.name = name
        self.priority = priority
        self.log = log

    def kernel(self, op, fallback):
        def kernel(x):
            if x.dtype == np.float64:
                return fallback(x)
            self.log.append(self.name)
            return fallback(x)

        return kernel


class Refusing(KernelProvider):
    """Lists testkernels_negate but builds no kernel for it."""

    name = "refusing"
    ops = frozenset({"testkernels_negate"})


class Failing(KernelProvider):
    """Raises while building its kernel."""

    name = "failing"
    ops = frozenset({"testkernels_negate"})

    def kernel(self, op, fallback):
        raise ValueError("no kernel today")


@pytest.fixture
def providers():
    """Register providers for the test; all are gone after it."""
    names = []

    def add(provider):
        tocha.backends.register_kernel_provider(provider)
        names.append(provider.name)
        return provider

    yield add
    for name in names:
        tocha.backends.unregister_kernel_provider(name)


def negate(x):
    return call(NEGATE, (x,))


def test_a_provider_runs_and_may_decline(providers):
    log = []
    providers(Recording("rec", 0, log))
    x = tocha.tensor([1.0, -2.0])
    assert negate(x).tolist() == [-1.0, 2.0]
    assert log == ["rec"]
    assert negate(x.double()).tolist() == [-1.0, 2.0]
    assert log == ["rec"]
    assert tocha.backends.provided_kernels()["testkernels_negate"] == "rec"


def test_providers_stack_by_priority(providers):
    log = []
    providers(Recording("low", 1, log))
    providers(Recording("high", 5, log))
    negate(tocha.ones(2))
    assert log == ["high", "low"]
    assert tocha.backends.provided_kernels()["testkernels_negate"] == "high"
    assert tocha.backends.kernel_providers()["high"]["priority"] == 5


def test_the_api_switch_turns_a_provider_off_and_on(providers):
    log = []
    providers(Recording("rec", 0, log))
    negate(tocha.ones(2))
    tocha.backends.set_kernel_provider_enabled("rec", False)
    try:
        assert negate(tocha.ones(2)).tolist() == [-1.0, -1.0]
        assert log == ["rec"]
        assert "testkernels_negate" not in tocha.backends.provided_kernels()
        assert tocha.backends.kernel_providers()["rec"]["enabled"] is False
    finally:
        tocha.backends.set_kernel_provider_enabled("rec", True)
    negate(tocha.ones(2))
    assert log == ["rec", "rec"]


def test_unknown_provider_names_raise():
    with pytest.raises(KeyError, match="no kernel provider is named 'nope'"):
        tocha.backends.set_kernel_provider_enabled("nope", False)


def test_a_provider_that_builds_no_kernel_leaves_the_op(providers):
    providers(Refusing())
    assert negate(tocha.ones(1)).tolist() == [-1.0]
    assert "testkernels_negate" not in tocha.backends.provided_kernels()


def test_a_provider_that_fails_warns_and_the_op_runs(providers):
    providers(Failing())
    with pytest.warns(RuntimeWarning, match="'failing' failed to build a kernel"):
        assert negate(tocha.ones(1)).tolist() == [-1.0]


def test_ops_without_a_provider_keep_the_backend_kernel(providers):
    providers(Recording("rec", 0, []))
    add = REGISTRY["add"]
    assert add.kernels[tocha.device("cpu")] is add.kernels[tocha.device("cpu")]
    assert "add" not in tocha.backends.provided_kernels()


@needs_testkernels
def test_the_installed_provider_is_found_by_its_entry_point():
    import tocha_testkernels

    report = tocha.backends.kernel_providers()["testkernels"]
    assert report["distribution"] == "tocha-testkernels"
    assert report["loaded"] and report["error"] is None
    assert report["ops"] == ["testkernels_square"]
    x = tocha.tensor([3.0])
    before = len(tocha_testkernels.CALLS)
    assert call(SQUARE, (x,)).tolist() == [9.0]
    assert len(tocha_testkernels.CALLS) == before + 1
    assert call(SQUARE, (x.double(),)).tolist() == [9.0]
    assert len(tocha_testkernels.CALLS) == before + 1


def run_python(code: str, **env) -> str:
    import os

    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@needs_testkernels
@pytest.mark.parametrize("value", ["testkernels", "all", "other,testkernels"], ids=str)
def test_the_environment_variable_turns_a_provider_off(value):
    out = run_python(
        "import tocha\nprint(tocha.backends.kernel_providers()['testkernels']['enabled'])",
        TOCHA_KERNEL_PROVIDERS_DISABLE=value,
    )
    assert out.strip() == "False"


def test_import_tocha_reads_no_entry_points():
    out = run_python(
        "import sys, tocha\n"
        "from tocha.backends import _providers\n"
        "print(_providers._entries is None, 'tocha_testkernels' in sys.modules)"
    )
    assert out.split() == ["True", "False"]


def test_backends_mkldnn_answers_without_the_provider():
    out = run_python(
        "import tocha\n"
        "m = tocha.backends.mkldnn\n"
        "m.enabled = False\n"
        "print(m.is_available(), m.enabled)",
        TOCHA_KERNEL_PROVIDERS_DISABLE="onednn",
    )
    installed_onednn = installed("tocha-onednn")
    assert out.split() == [str(installed_onednn), "False"]
