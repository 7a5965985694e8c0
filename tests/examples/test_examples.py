"""Every script in examples/ runs end to end for a few steps, in a subprocess.

The scripts are run as a user runs them (``python examples/x.py --steps 3``), in a temporary
working directory, with a timeout. Those that need scikit-learn or matplotlib skip without
them; none needs PyTorch (finetune.py's checkpoint is written by tocha when it is missing).
A script whose optional package is missing (hidden by the test) says so in one line and exits
cleanly, or falls back to what it can do without it.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TIMEOUT = 90


def run(tmp_path: Path, script: str, *args: str, hide_torch: bool = False, hide=()):
    """Run ``python examples/<script> <args>`` in `tmp_path`. Each module named in `hide`
    (and ``torch`` with `hide_torch`) is replaced by one that fails to import, put first on
    the path of the script and its children."""
    env = dict(os.environ)
    hide = (*hide, "torch") if hide_torch else tuple(hide)
    if hide:
        (tmp_path / "hidden").mkdir()
        for name in hide:
            (tmp_path / "hidden" / f"{name}.py").write_text(
                "raise ImportError('hidden by the test')"
            )
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(tmp_path / "hidden"), env.get("PYTHONPATH")])
        )
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def succeed(tmp_path: Path, script: str, *args: str, hide_torch: bool = False, hide=()) -> str:
    """The standard output of a run that must succeed."""
    result = run(tmp_path, script, *args, hide_torch=hide_torch, hide=hide)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def needs(*modules: str) -> pytest.MarkDecorator:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


@needs("sklearn", "matplotlib")
def test_digits(tmp_path):
    out = succeed(tmp_path, "digits.py", *"--epochs 1 --limit 96 --workers 1 --out run".split())
    assert "test accuracy" in out and "reloaded" in out
    assert (tmp_path / "run" / "last.pt").is_file() and (tmp_path / "run" / "loss.png").is_file()
    trained = re.search(r"trained .*test accuracy ([\d.]+)%", out)
    reloaded = re.search(r"reloaded: test accuracy ([\d.]+)%", out)
    assert trained and reloaded and trained[1] == reloaded[1], out


def test_digits_without_sklearn_says_so_in_one_line(tmp_path):
    result = run(tmp_path, "digits.py", "--out", "run", hide=("sklearn",))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "digits.py needs scikit-learn for its data: pip install scikit-learn (hidden by the test)"
    ]


@needs("sklearn")
def test_digits_without_matplotlib_skips_the_plot(tmp_path):
    args = "--epochs 1 --limit 32 --workers 0 --out run".split()
    out = succeed(tmp_path, "digits.py", *args, hide=("matplotlib",))
    assert "reloaded" in out
    assert "loss curves not drawn: matplotlib is not installed" in out
    assert not (tmp_path / "run" / "loss.png").exists()


def test_digits_on_cuda_fails_clearly(tmp_path):
    import tocha

    if tocha.backends.status().get("cuda", {}).get("loaded"):
        pytest.skip("a cuda backend is loaded")
    result = run(tmp_path, "digits.py", "--device", "cuda")
    assert result.returncode != 0
    assert "device type 'cuda'" in result.stderr  # no backend installed, or it failed to load
    assert "Traceback" not in result.stderr


def test_char_gpt(tmp_path):
    args = "--steps 3 --batch-size 4 --block 16 --workers 1 --samples 1 --length 10"
    out = succeed(tmp_path, "char_gpt.py", *args.split())
    assert "trained 3 steps" in out and "--- sample 1 ---\ndef " in out


def test_char_gpt_quick_takes_the_smaller_model(tmp_path):
    args = "--quick --steps 2 --workers 0 --samples 1 --length 5"
    out = succeed(tmp_path, "char_gpt.py", *args.split())
    assert "trained 2 steps" in out
    parameters = int(re.search(r"([\d,]+) parameters", out)[1].replace(",", ""))
    assert parameters < 150_000, out  # the full model has about 240,000


def test_lstm_lm(tmp_path):
    out = succeed(tmp_path, "lstm_lm.py", "--epochs", "1", "--steps", "3", "--length", "10")
    assert "held-out loss" in out and "--- sample ---" in out


def test_custom_function(tmp_path):
    out = succeed(tmp_path, "custom_function.py", "--steps", "3")
    assert "gradcheck: True" in out and "gradgradcheck: True" in out
    assert "same values as F.silu: True" in out


def test_custom_op(tmp_path):
    out = succeed(tmp_path, "custom_op.py")
    assert "gradcheck: True" in out and "gradgradcheck: True" in out
    assert "in place, same values: True" in out and "version counter bumped: True" in out
    assert "within its limit: True" in out and "has a gradient: True" in out


@needs("onnxruntime")
def test_graph_mode(tmp_path):
    out = succeed(tmp_path, "graph_mode.py", "--steps", "5")
    assert "folded module vs trained module" in out
    assert "onnxruntime (batch 10) vs tocha: max difference" in out


def test_graph_mode_without_onnxruntime_says_so(tmp_path):
    out = succeed(tmp_path, "graph_mode.py", "--steps", "5", hide=("onnxruntime",))
    assert "onnxruntime is not installed" in out


FINETUNE = ["finetune.py", *"--checkpoint pre.pt --steps 3 --pretrain-steps 3 --samples 16".split()]


@needs("torch")
def test_finetune_from_a_pytorch_checkpoint(tmp_path):
    out = succeed(tmp_path, *FINETUNE)
    assert "written by PyTorch" in out and "everything fine-tuned" in out


def test_finetune_without_pytorch(tmp_path):
    out = succeed(tmp_path, *FINETUNE, hide_torch=True)
    assert "(PyTorch is not installed)" in out and "everything fine-tuned" in out


def test_hogwild(tmp_path):
    succeed(tmp_path, "hogwild.py", "--processes", "2", "--epochs", "1")


def test_hogwild_without_sklearn_trains_on_its_fallback(tmp_path):
    out = succeed(tmp_path, "hogwild.py", "--processes", "2", "--epochs", "3", hide=("sklearn",))
    assert "training on a synthetic regression instead" in out
    before = float(re.search(r"^before: loss (\S+)$", out, re.M)[1])
    after = float(re.search(r"^after .*: loss (\S+)$", out, re.M)[1])
    assert math.isfinite(before) and math.isfinite(after), out
    assert after < before / 2, out


def test_compiled_training(tmp_path):
    pytest.importorskip("tocha.compiler")
    out = succeed(tmp_path, "compiled_training.py", "--steps", "5")
    assert "largest loss difference" in out
    worst = float(re.search(r"largest loss difference ([0-9.e+-]+)", out).group(1))
    assert worst < 1e-4
