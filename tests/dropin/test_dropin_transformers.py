"""Hugging Face transformers runs unchanged on tocha (``python -m tocha.run``): GPT-2, BERT
and T5 from tiny configs give PyTorch's numbers (logits, loss, gradient norm, the loss after
one AdamW step: within 1e-4) and ``generate``'s tokens, greedy and sampled with a seed,
from the same weights.

PyTorch's answers and the weights are fixtures (tests/dropin/fixtures), recorded by
``python scripts/record_hf_fixtures.py`` with PyTorch installed; the programs run in fresh
interpreters (the alias is process-wide)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None
    or importlib.util.find_spec("safetensors") is None,
    reason="transformers and safetensors are not installed (nox -s tests installs them)",
)

HERE = Path(__file__).parent
ANSWERS = HERE / "fixtures" / "hf_answers.json"
MODELS = ["gpt2", "bert", "t5"]


def run_under_tocha(args: list[str], cwd: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "tocha.run", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(cwd),
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def on_tocha() -> dict:
    return run_under_tocha([str(HERE / "programs" / "dropin_hf.py")], HERE / "programs")


@pytest.mark.parametrize("model", MODELS, ids=MODELS)
def test_model_matches_torch(on_tocha, model):
    want, got = json.loads(ANSWERS.read_text())[model], on_tocha[model]
    np.testing.assert_allclose(got["logits"], want["logits"], rtol=1e-4, atol=1e-5)
    for key in ("loss", "loss_after_adamw"):
        assert abs(got[key] - want[key]) <= 1e-4, (key, got[key], want[key])
    assert got["grad_norm"] == pytest.approx(want["grad_norm"], rel=1e-4)
    assert got.get("greedy") == want.get("greedy")
    assert got.get("sampled") == want.get("sampled")  # tocha's CPU stream is PyTorch's


SAVE_AND_SAMPLE = """
import json, sys
import torch
from transformers import GPT2Config, GPT2LMHeadModel

config = GPT2Config(vocab_size=40, n_positions=16, n_embd=16, n_layer=2, n_head=2,
                    bos_token_id=0, eos_token_id=1, pad_token_id=39)
torch.manual_seed(0)
model = GPT2LMHeadModel(config).eval()
ids = torch.tensor([[2, 7, 11, 5]])
model.save_pretrained(sys.argv[1])
back = GPT2LMHeadModel.from_pretrained(sys.argv[1]).eval()
same = torch.equal(back(ids).logits, model(ids).logits)

def sample(seed):
    torch.manual_seed(seed)
    out = model.generate(ids, max_new_tokens=6, do_sample=True, top_k=5, temperature=0.9)
    return out[0, 4:].tolist()

first, again, other = sample(3), sample(3), sample(4)
print(json.dumps({"same": same, "first": first, "again": again, "other": other,
                  "top5": torch.topk(model(ids).logits[0, -1], 5).indices.tolist()}))
"""


def test_save_pretrained_and_sampling(tmp_path):
    """save_pretrained writes the config and safetensors weights that from_pretrained loads;
    sampling with a seed repeats (test_model_matches_torch compares sampled tokens with
    PyTorch's)."""
    program = tmp_path / "save_and_sample.py"
    program.write_text(textwrap.dedent(SAVE_AND_SAMPLE))
    out = run_under_tocha([str(program), str(tmp_path / "saved")], tmp_path)
    assert (tmp_path / "saved" / "config.json").exists() and out["same"]
    assert out["first"] == out["again"] and 1 <= len(out["first"]) <= 6  # eos may end it
    assert out["first"][0] in out["top5"]


@pytest.fixture(scope="module")
def reloaded(tmp_path_factory) -> dict:
    program = HERE / "programs" / "dropin_hf_pretrained.py"
    folder = tmp_path_factory.mktemp("pretrained")
    return run_under_tocha([str(program), str(folder)], HERE / "programs")


@pytest.mark.parametrize("model", MODELS, ids=MODELS)
def test_from_pretrained_gives_torch_numbers(reloaded, model):
    """from_pretrained (which builds the model on the meta device, then loads the weights)
    reloads a saved model exactly: every tensor on the CPU with the saved values, tied
    weights still one tensor, ``dtype=`` honoured, and PyTorch's logits."""
    got = reloaded[model]
    want = json.loads(ANSWERS.read_text())[model]
    np.testing.assert_allclose(got["logits"], want["logits"], rtol=1e-4, atol=1e-5)
    assert got["same_as_saved"] and got["placed"] and got["tied"]
    assert got["meta_left"] == []
    assert got["wide_dtype"].endswith("float64")
