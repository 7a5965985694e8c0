"""The torch.func tutorials of examples/ (per_sample_grads.py, model_ensembling.py) run
unchanged on tocha (``python -m tocha.run``), their vmap results equal their loops, and
their numbers agree with the same programs run under PyTorch. Both start from NumPy-made
weights and data.

PyTorch's numbers are recorded in torch_answers.json (written when TOCHA_ORACLE_MODE=record,
as by ``scripts/record_oracle.py tests/examples/test_func_examples.py``): without PyTorch the
test compares with them, with PyTorch it also checks that they are current."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CASES = {
    "per_sample_grads.py": ["--batch-size", "8"],
    "model_ensembling.py": ["--models", "4", "--batch-size", "16"],
}
HAS_TORCH = importlib.util.find_spec("torch") is not None
TORCH_ANSWERS = Path(__file__).parent / "torch_answers.json"
RERECORD = "rerun `python scripts/record_oracle.py tests/examples/test_func_examples.py`"


def run_example(command: list[str], cwd: Path) -> dict:
    """Run an example; the JSON object its last line prints."""
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _numbers(answer: dict) -> dict:
    return {k: v for k, v in answer.items() if k != "agree"}


def torch_answer(script: str, args: list[str], cwd: Path) -> dict:
    """What the example prints under PyTorch: run live when PyTorch is installed (and checked
    against the recording), else the recording."""
    recorded = json.loads(TORCH_ANSWERS.read_text()) if TORCH_ANSWERS.exists() else {}
    if not HAS_TORCH:
        if script not in recorded:
            pytest.skip(f"PyTorch is not installed and its answer is not recorded: {RERECORD}")
        return recorded[script]
    live = run_example([sys.executable, *args], cwd)
    if os.environ.get("TOCHA_ORACLE_MODE") == "record":
        recorded[script] = live
        TORCH_ANSWERS.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    elif os.environ.get("TOCHA_ORACLE_MODE") != "live":
        assert script in recorded, f"PyTorch's answer for {script} is not recorded: {RERECORD}"
        for key, values in _numbers(live).items():
            assert values == pytest.approx(recorded[script][key], rel=1e-5, abs=1e-7), (
                f"PyTorch's recorded answer for {script} is stale: {RERECORD}"
            )
    return live


@pytest.mark.parametrize("script", sorted(CASES))
def test_example_runs_on_tocha_and_matches_torch(script, tmp_path):
    args = [str(EXAMPLES / script), *CASES[script]]
    on_tocha = run_example([sys.executable, "-m", "tocha.run", *args], tmp_path)
    assert on_tocha["agree"] is True, "vmap's result differs from the loop's"
    on_torch = torch_answer(script, args, tmp_path)
    assert on_torch["agree"] is True
    for key, want in _numbers(on_torch).items():
        assert on_tocha[key] == pytest.approx(want, rel=1e-4, abs=1e-5), key
