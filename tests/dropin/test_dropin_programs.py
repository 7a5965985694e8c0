"""PyTorch programs run unchanged on tocha (``python -m tocha.run``): each trains for a few
steps, and its losses agree to 1e-4 with the same program run under PyTorch, both starting
from the same NumPy-made weights and data, or (dropin_seeded.py) from nothing but
``torch.manual_seed``: layers' own initialisation, ``randint`` data, a shuffling DataLoader
and dropout draw PyTorch's values under tocha.run. PyTorch's results are recorded in
programs/torch_answers.json (written when TOCHA_ORACLE_MODE=record, as by
scripts/record_oracle.py): without PyTorch the test compares with them, with PyTorch it also
checks that they are current."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tocha

PROGRAMS = Path(__file__).parent / "programs"
CASES = {
    "dropin_gpt.py": ["--steps", "5"],
    "dropin_cnn.py": ["--steps", "5"],
    "dropin_lstm_lm.py": ["--steps", "5"],
    "dropin_vae.py": ["--steps", "5"],
    "dropin_lbfgs.py": ["--steps", "4"],
    "dropin_seeded.py": ["--steps", "6"],
}
HAS_TORCH = importlib.util.find_spec("torch") is not None
TORCH_ANSWERS = PROGRAMS / "torch_answers.json"
RERECORD = "rerun `python scripts/record_oracle.py tests/dropin/test_dropin_programs.py`"


def run_program(command: list[str]) -> dict:
    """Run a program; the JSON object its last line prints."""
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=str(PROGRAMS))
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def needs(program: str) -> None:
    if program == "dropin_lstm_lm.py" and not hasattr(tocha.nn, "LSTM"):
        pytest.skip("tocha.nn.LSTM is not there yet (it comes with tocha-nn's recurrent layers)")


def torch_answer(program: str, args: list[str]) -> dict:
    """What the program prints under PyTorch: run live when PyTorch is installed (and checked
    against the recording), else the recording."""
    recorded = json.loads(TORCH_ANSWERS.read_text()) if TORCH_ANSWERS.exists() else {}
    if not HAS_TORCH:
        if program not in recorded:
            pytest.skip(f"PyTorch is not installed and its answer is not recorded: {RERECORD}")
        return recorded[program]
    live = run_program([sys.executable, *args])
    if os.environ.get("TOCHA_ORACLE_MODE") == "record":
        recorded[program] = live
        TORCH_ANSWERS.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    elif os.environ.get("TOCHA_ORACLE_MODE") != "live":
        assert program in recorded, f"PyTorch's answer for {program} is not recorded: {RERECORD}"
        assert live["losses"] == pytest.approx(recorded[program]["losses"], rel=1e-5, abs=1e-7), (
            f"PyTorch's recorded answer for {program} is stale: {RERECORD}"
        )
    return live


@pytest.mark.parametrize("program", sorted(CASES))
def test_program_runs_on_tocha_and_matches_torch(program):
    needs(program)
    args = [str(PROGRAMS / program), *CASES[program]]
    on_tocha = run_program([sys.executable, "-m", "tocha.run", *args])
    losses = on_tocha["losses"]
    assert losses and all(isinstance(x, float) and x == x for x in losses)
    on_torch = torch_answer(program, args)
    assert len(losses) == len(on_torch["losses"])
    for step, (got, want) in enumerate(zip(losses, on_torch["losses"])):
        assert abs(got - want) <= 1e-4 * max(1.0, abs(want)), (step, losses, on_torch["losses"])
    for key in set(on_torch) - {"losses"}:
        assert on_tocha[key] == pytest.approx(on_torch[key], rel=1e-6, abs=1e-8)


def test_tocha_run_console_script_and_module_agree():
    """``tocha-run`` (the console script) and ``python -m tocha.run`` run the same program."""
    script = Path(sys.executable).with_name("tocha-run")
    if not script.exists():
        pytest.skip("the tocha-run console script is not installed next to this Python")
    args = [str(PROGRAMS / "dropin_vae.py"), "--steps", "2"]
    assert run_program([str(script), *args]) == run_program(
        [sys.executable, "-m", "tocha.run", *args]
    )


def test_the_gpt_compiled_trains_as_torch_eager():
    """nanoGPT's way: ``model = torch.compile(model)`` after building the optimizer; the losses
    are eager PyTorch's."""
    pytest.importorskip("tocha.compiler")
    args = [str(PROGRAMS / "dropin_gpt.py"), *CASES["dropin_gpt.py"]]
    losses = run_program([sys.executable, "-m", "tocha.run", *args, "--compile"])["losses"]
    want = torch_answer("dropin_gpt.py", args)["losses"]
    assert losses == pytest.approx(want, rel=1e-4, abs=1e-4)
