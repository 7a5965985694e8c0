"""Hugging Face transformers' GPT-2, BERT and T5, built from tiny configs (no downloads),
trained for one step: the numbers tocha must reproduce. Prints one JSON object per model.

With ``--write`` (run by scripts/record_hf_fixtures.py with PyTorch), each model is made from
a fixed seed and its weights are written to ``tests/dropin/fixtures/<model>.safetensors``;
without it (run under ``python -m tocha.run`` by tests/dropin/test_dropin_transformers.py),
the weights are read from there. Either way, for the same inputs: the logits, the loss, the
gradients' norm, the loss after one AdamW step, and ``generate``'s tokens, greedy and sampled
after ``manual_seed`` (top-k with a temperature, and top-p).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    GPT2Config,
    GPT2LMHeadModel,
    T5Config,
    T5ForConditionalGeneration,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
IDS = [[2, 7, 11, 5, 9, 3], [4, 4, 12, 30, 8, 13]]


def build(name: str):
    """The model `name` from a tiny config, dropout off."""
    if name == "gpt2":
        config = GPT2Config(
            vocab_size=40,
            n_positions=16,
            n_embd=16,
            n_layer=2,
            n_head=2,
            bos_token_id=0,
            eos_token_id=1,
            pad_token_id=39,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
        )
        return GPT2LMHeadModel(config)
    if name == "bert":
        config = BertConfig(
            vocab_size=40,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=16,
            num_labels=3,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
        return BertForSequenceClassification(config)
    config = T5Config(
        vocab_size=40,
        d_model=16,
        d_kv=8,
        d_ff=32,
        num_layers=2,
        num_heads=2,
        relative_attention_num_buckets=8,
        dropout_rate=0.0,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
    )
    return T5ForConditionalGeneration(config)


def inputs(name: str) -> dict:
    ids = torch.tensor(IDS)
    if name == "gpt2":
        return {"input_ids": ids, "labels": ids}
    if name == "bert":
        mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]])
        return {"input_ids": ids, "attention_mask": mask, "labels": torch.tensor([0, 2])}
    return {"input_ids": ids, "labels": torch.tensor([[5, 6, 7, 1], [8, 9, 1, 0]])}


def run(name: str, write: bool) -> dict:
    torch.manual_seed(0)
    model = build(name)
    weights = FIXTURES / f"{name}.safetensors"
    if write:
        state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
        save_file(state, weights)
    else:
        model.load_state_dict(load_file(weights))
    batch = inputs(name)
    out = model(**batch)
    out.loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    grad_norm = torch.sqrt(sum((g.double() ** 2).sum() for g in grads)).item()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    optimizer.step()
    optimizer.zero_grad()
    with torch.no_grad():
        after = model(**batch).loss.item()
    answer = {
        "logits": out.logits.detach().double().flatten().tolist(),
        "loss": out.loss.item(),
        "grad_norm": grad_norm,
        "loss_after_adamw": after,
    }
    model.eval()
    if name != "bert":
        tokens = model.generate(torch.tensor(IDS), max_new_tokens=5, do_sample=False)
        answer["greedy"] = tokens.tolist()
        torch.manual_seed(3)
        sampled = model.generate(
            torch.tensor(IDS), max_new_tokens=6, do_sample=True, top_k=5, temperature=0.9
        )
        torch.manual_seed(4)
        nucleus = model.generate(torch.tensor(IDS), max_new_tokens=6, do_sample=True, top_p=0.8)
        answer["sampled"] = [sampled.tolist(), nucleus.tolist()]
    return answer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true", help="write the weights (PyTorch)")
    parser.add_argument("--models", default="gpt2,bert,t5")
    args = parser.parse_args()
    answers = {name: run(name, args.write) for name in args.models.split(",")}
    print(json.dumps(answers))


if __name__ == "__main__":
    main()
