"""The bad-input fuzzer: each public callable PyTorch and tocha both have, called with one
argument at a time replaced by something wrong (a wrong type, a wrong shape, an out-of-range
dim or index, a negative or huge size, NaN/inf, an empty tensor, an unknown keyword), in
worker processes with a time bound on each call. A call must return PyTorch's result, or
raise an exception of PyTorch's type; the report counts the hangs, the raw Python/NumPy
errors (AttributeError from inside tocha, NumPy's messages) and the silent acceptances
(PyTorch raises, tocha returns).

    python -m tests.fidelity.fuzz --full --report build/fidelity/fuzz.md
    python -m tests.fidelity.fuzz --record      # rewrite the CI sample's answers and known list
    python -m tests.fidelity.fuzz --relist      # after a fix: rewrite the known list (no torch)

``tests/fidelity/test_fuzz_sample.py`` replays the recorded sample on tocha alone.
"""

from __future__ import annotations

import argparse
import fnmatch
import math
import sys
import zlib
from pathlib import Path

import numpy as np

from tests.fidelity import record
from tests.fidelity.generate import Drawer, draw_call
from tests.fidelity.ops import Param, Signature

NAME = "fuzz"
SAMPLE_EVERY = 8
HUGE = 2**40
TIMEOUT = 10.0
KNOWN_HEADER = """Known disagreements of the fuzzer's CI sample with PyTorch: op | class | reason.
The test fails on a disagreement not listed here, and on a listed one that is gone (fixed:
remove its line, or run `python -m tests.fidelity.fuzz --relist`, which keeps the reasons
written)."""


def _tensor(shape, dtype="float32", fill="normal"):
    return ("T", shape, dtype, "c", zlib.crc32(repr((shape, dtype, fill)).encode()), fill)


def bad_values(param: Param) -> list[tuple[str, tuple]]:
    """``(what, spec)`` pairs that are wrong for a parameter of this kind and name."""
    kind = param.kind.rstrip("?")
    wrong_type = [("str", ("V", "abc")), ("object", ("X", "object"))]
    if kind == "tensor":
        found = wrong_type + [
            ("list", ("V", [[1.0, 2.0], [3.0]])),
            ("wrong-shape", _tensor((7,))),
            ("5-d", _tensor((2, 1, 2, 1, 2))),
            ("empty", _tensor((0,))),
            ("empty-2d", _tensor((0, 4))),
            ("nonfinite", _tensor((3, 4), "float32", "nonfinite")),
            ("int64", _tensor((3, 4), "int64")),
            ("complex", _tensor((3, 4), "complex64")),
        ]
        if param.name in ("index", "indices", "idx", "target"):
            found += [
                ("index-too-big", _tensor((3, 4), "int64", "far")),
                ("index-negative", _tensor((3, 4), "int64", "negative")),
            ]
        if not param.kind.endswith("?"):
            found.append(("none", ("V", None)))
        return found
    if kind == "tensors":
        return wrong_type + [
            ("empty-list", ("L", ())),
            ("mismatched", ("L", (_tensor((3, 4)), _tensor((7,))))),
            ("not-tensors", ("L", (("V", 1), ("V", "x")))),
        ]
    if kind == "int":
        return (
            wrong_type
            + [
                ("float", ("V", 2.5)),
                ("bool", ("V", True)),
                ("negative", ("V", -3)),
                ("out-of-range", ("V", 100)),
                ("huge", ("V", HUGE)),
                ("int64-overflow", ("V", 2**63)),
            ]
            + ([] if param.kind.endswith("?") else [("none", ("V", None))])
        )
    if kind == "ints":
        return wrong_type + [
            ("out-of-range", ("V", (100,))),
            ("negative", ("V", (-2, 3))),
            ("huge", ("V", (HUGE, HUGE))),
            ("floats", ("V", (1.5, 2.0))),
            ("repeated", ("V", (0, 0))),
        ]
    if kind in ("float", "scalar"):
        return wrong_type + [
            ("nan", ("V", math.nan)),
            ("inf", ("V", math.inf)),
            ("negative", ("V", -2.0)),
            ("huge", ("V", 1e300)),
        ]
    if kind == "bool":
        return wrong_type + [("int", ("V", 2))]
    if kind == "dtype":
        return [("str", ("V", "float32")), ("object", ("X", "object"))]
    if kind == "str":
        return [("unknown-choice", ("V", "no-such-choice")), ("int", ("V", 3))]
    return []


def cases_for(op: str, signatures: list[Signature]) -> list:
    """One valid call of `op` per signature (float32, 3x4), then that call with one
    argument replaced by each of its `bad_values` (the argument given by keyword when it
    was not given; a method's receiver stays a tensor), and with an unknown keyword."""
    found = []
    for number, signature in enumerate(signatures[:2]):
        rng = np.random.default_rng(zlib.crc32(f"{op}:fuzz:{number}".encode()))
        base = draw_call(op, signature, Drawer(rng, (3, 4), "float32", "c", False))
        if base is None:
            continue
        _, args, kwargs = base
        found.append((op, args, kwargs + (("no_such_argument", ("V", 1)),)))
        positional = [p for p in signature.params if not p.keyword_only][: len(args)]
        for i, param in enumerate(positional):
            if i == 0 and op.startswith("Tensor."):
                continue  # a method's receiver is a Tensor by construction
            for _, spec in bad_values(param):
                found.append((op, args[:i] + (spec,) + args[i + 1 :], kwargs))
        for param in signature.params[len(positional) :]:
            if param.kind == "other":
                continue
            for _, spec in bad_values(param):
                rest = tuple(kv for kv in kwargs if kv[0] != param.name)
                found.append((op, args, rest + ((param.name, spec),)))
    unique, seen = [], set()
    for case in found:
        if repr(case) not in seen:
            seen.add(repr(case))
            unique.append(case)
    return unique


def all_cases(patterns: list[str]) -> tuple[list, int]:
    import torch

    import tocha
    from tests.fidelity.ops import enumerate_ops

    ops = enumerate_ops(torch, tocha)
    if patterns:
        ops = {op: s for op, s in ops.items() if any(fnmatch.fnmatch(op, p) for p in patterns)}
    cases = []
    for op, signatures in ops.items():
        cases.extend(cases_for(op, signatures))
    return cases, len(ops)


def in_sample(case) -> bool:
    return zlib.crc32(repr(case).encode()) % SAMPLE_EVERY == 0


def headline(counts) -> str:
    """The fuzzer's own counts: hangs, raw errors and silent acceptances."""
    raw = sum(n for cls, n in counts.items() if cls.endswith("-raw"))
    return (
        f"hangs: {counts['hang']}; crashes: {counts['crash']}; raw Python/NumPy errors: {raw}; "
        f"silent acceptances: {counts['torch-refuses-tocha-accepts']}"
    )


def main(argv: list[str] | None = None) -> int:
    from tests.fidelity.sweep import replay_found, run_all, summarize

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="every case, not the CI sample")
    parser.add_argument("--record", action="store_true", help="rewrite the CI sample's answers")
    parser.add_argument(
        "--relist",
        action="store_true",
        help="replay the recorded sample on tocha alone and rewrite the known list (no PyTorch)",
    )
    parser.add_argument("--report", type=Path, help="write a Markdown report here")
    parser.add_argument("--ops", nargs="*", default=[], help="glob patterns of ops")
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=TIMEOUT)
    options = parser.parse_args(argv)
    if options.relist:
        record.save_known(NAME, replay_found(NAME, TIMEOUT), KNOWN_HEADER)
        return 0
    cases, n_ops = all_cases(options.ops)
    if not options.full:
        cases = [case for case in cases if in_sample(case)]
    print(f"{len(cases)} calls over {n_ops} ops", file=sys.stderr)
    records = run_all(cases, options.workers, options.timeout)
    counts, examples, per_key = summarize(records)
    text = record.report("tocha under bad input: the fuzzer", counts, examples, per_key, n_ops)
    text = text.replace("\n\n| class", f"\n\n{headline(counts)}\n\n| class", 1)
    print(text.split("## Disagreements")[0])
    if options.report:
        options.report.parent.mkdir(parents=True, exist_ok=True)
        options.report.write_text(text)
    if options.record:
        sample = [r for r in records if in_sample(r[0])]
        record.save_answers(NAME, [r[:3] for r in sample])
        record.save_known(NAME, summarize(sample)[1], KNOWN_HEADER)
    return 0


if __name__ == "__main__":
    sys.exit(main())
