"""Where tocha.func's names are found: ``tocha.vmap`` (tocha-core resolves it from tocha-func
on first access, without importing it before), ``import torch.func`` under ``tocha.run``,
and torch.func names tocha lacks."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import tocha
import tocha.func


def _run(*args: str) -> str:
    """The standard output of ``python <args>``, which must succeed."""
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _python(code: str) -> str:
    return _run("-c", textwrap.dedent(code))


def test_tocha_vmap_is_tocha_func_vmap():
    assert tocha.vmap is tocha.func.vmap
    assert "vmap" in dir(tocha)


def test_import_tocha_does_not_import_tocha_func():
    out = _python("""
        import sys
        import tocha
        print("tocha.func" in sys.modules)
        tocha.vmap
        print("tocha.func" in sys.modules)
    """)
    assert out.split() == ["False", "True"]


def test_tocha_vmap_without_tocha_func_names_the_distribution():
    out = _python("""
        import sys
        sys.modules["tocha.func"] = None  # as if tocha-func were not installed
        import tocha
        try:
            tocha.vmap
        except ModuleNotFoundError as exc:
            print(exc)
    """)
    assert out.startswith("tocha.vmap comes from the distribution tocha-func")
    assert "pip install tocha-func" in out


def test_torch_func_under_tocha_run(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(
        textwrap.dedent("""
        import torch
        import torch.func
        from torch.func import functional_call, grad, vmap
        assert torch.vmap is torch.func.vmap is vmap
        model = torch.nn.Linear(3, 1)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x):
            return functional_call(model, p, (x,)).sum()

        grads = vmap(grad(loss), in_dims=(None, 0))(params, torch.ones(4, 3))
        print(tuple(grads["weight"].shape))
    """)
    )
    assert _run("-m", "tocha.run", str(program)).strip() == "(4, 1, 3)"


def test_names_tocha_lacks_say_so():
    with pytest.raises(AttributeError, match="torch.func.no_such_transform is not in tocha yet"):
        _ = tocha.func.no_such_transform
