"""The pytest side of the recorded oracle: the `torch` fixture, the mode of each test, the
writing of recordings, and the summary of skips by reason at the end of a run.

TOCHA_ORACLE_MODE chooses the mode of every test that takes `torch`:

- unset: with PyTorch installed, check each test against its recording (a test without
  one fails: the recordings are stale); a test whose answers cannot be recorded runs on
  PyTorch itself. Without PyTorch, replay the recordings; a test without one skips.
- ``record``: PyTorch answers, and the tapes of passing tests are written.
- ``check``, ``replay``: as above, for every test (``replay`` hides PyTorch, even installed).
- ``live``: PyTorch itself, no recordings.

TOCHA_ORACLE_REPORT names a JSON file that receives each oracle test's outcome (used by
``scripts/record_oracle.py``).
"""

from __future__ import annotations

import collections
import contextlib
import copy
import functools
import importlib.util
import json
import os
import random
import sys
import warnings
from unittest import mock

import numpy as np
import pytest

import tocha
from tests.oracle.tape import RERECORD, Mode, Tape, load_answers, save_answers

MODE = os.environ.get("TOCHA_ORACLE_MODE", "")
if MODE not in ("", "record", "check", "replay", "live"):
    raise pytest.UsageError(f"TOCHA_ORACLE_MODE={MODE!r}: expected record, check, replay or live")
if MODE == "replay":
    sys.modules["torch"] = None  # a replay run proves that the tests need no PyTorch
HAS_TORCH = MODE != "replay" and importlib.util.find_spec("torch") is not None
UNRECORDED = "no recorded PyTorch answers for this test: " + RERECORD

_answers: dict[str, dict] = {}  # test file -> its recordings, as loaded
_recorded: dict[str, dict] = collections.defaultdict(dict)  # test file -> new tapes
_outcomes: dict[str, str] = {}
_gpu_tests: set[str] = set()  # the nodeids marked cuda


def pytest_collection_modifyitems(config, items):
    """TOCHA_ORACLE_ONLY names a file of nodeids, one a line: only those tests run."""
    only = os.environ.get("TOCHA_ORACLE_ONLY")
    if not only:
        return
    with open(only) as stream:
        wanted = set(stream.read().splitlines())
    selected = [item for item in items if item.nodeid in wanted]
    config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in wanted])
    items[:] = selected


def _file_of(item) -> str:
    return item.nodeid.split("::", 1)[0]


def recording(item):
    """The recorded tape of a test (a list of events), the reason it has none (a string),
    or None."""
    test_file = _file_of(item)
    if test_file not in _answers:
        _answers[test_file] = load_answers(test_file)
    return _answers[test_file].get(item.nodeid)


@functools.cache
def _real_torch():
    """PyTorch, imported once, with the warnings it gives only once per process spent."""
    import torch
    import torch.utils.benchmark  # noqa: F401 - a submodule PyTorch does not import itself

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _spend_warnings_given_once(torch)
    return torch


def _spend_warnings_given_once(torch) -> None:
    """Have now each warning PyTorch gives once per process that a test meets, so that no
    recording holds it: otherwise whichever test asks first in a process records it, and a
    recording made alone disagrees with the same test run after another that asked before."""
    # One-time warnings of the first forward-AD call (torch.jit.script) and of the first
    # sparse COO tensor (invariant checks).
    import torch._decomp.decompositions_for_jvp  # noqa: F401

    torch.sparse_coo_tensor([[0]], [1.0], (1,))
    # PyTorch's warn-once warnings, each once per call site whatever the dtype (an out= form
    # is a site apart): the legacy linear algebra deprecations (cholesky, qr, lu, lu_solve,
    # triangular_solve, chain_matmul, at::nuclear_norm, at::frobenius_norm), cross without
    # dim, meshgrid without indexing, TypedStorage, where's uint8 condition, casting complex
    # to real, ComplexHalf and sparse CSR being experimental, index_reduce in beta, scatter's
    # reduce=, searchsorted's non-contiguous inputs and boundaries, x.T beyond 2-D, adjoint
    # and T, H, mT, mH of a 0-d tensor, stft's and istft's missing window, stft's
    # return_complex=False, padding='same' with an even kernel, LSTM projections without
    # oneDNN, flex_attention without torch.compile.
    m = torch.eye(2)
    for out in ({}, {"out": torch.empty(0)}):
        torch.cholesky(m, **out)
        torch.chain_matmul(m, m, **out)
        torch.nuclear_norm(m, **out)
        torch.nuclear_norm(m, (0, 1), **out)
        torch.frobenius_norm(m, (0, 1), **out)
    torch.qr(m)
    torch.qr(m, out=(torch.empty(0), torch.empty(0)))
    lu, pivots = torch.lu(m)
    torch.lu_solve(m, lu, pivots)
    torch.lu_solve(m, lu, pivots, out=torch.empty(0))
    torch.triangular_solve(m, m)
    torch.cross(torch.ones(3, 3), torch.ones(3, 3))
    torch.meshgrid(torch.ones(2), torch.ones(2))
    torch.ones(2).storage()
    torch.where(torch.ones(2, dtype=torch.uint8), m[0], m[1])
    torch.ones(2, dtype=torch.complex64).to(torch.float32)
    torch.ones(2, dtype=torch.complex32)
    m.to_sparse_csr()
    torch.zeros(2).index_reduce(0, torch.tensor([0, 1]), torch.ones(2), "prod")
    m.scatter(1, torch.zeros(2, 1, dtype=torch.long), m, reduce="add")
    torch.searchsorted(torch.ones(2, 3).T, torch.ones(2, 3).T)
    torch.ones(1, 1, 1).T.clone()
    scalar = torch.tensor(1.0)
    torch.adjoint(scalar)
    for name in ("T", "H", "mT", "mH"):
        getattr(scalar, name)
    signal = torch.ones(32)
    spectrum = torch.stft(signal, 8, return_complex=True)
    torch.istft(spectrum, 8)
    torch.stft(signal, 8, window=torch.ones(8), return_complex=False)
    torch.nn.functional.conv1d(torch.ones(1, 1, 4), torch.ones(1, 1, 2), padding="same")
    torch.nn.LSTM(2, 4, proj_size=1)(torch.ones(1, 1, 2))
    from torch.nn.attention.flex_attention import flex_attention

    # flex_attention warns, then compiles; a process's first compile patches PyTorch for good
    # (Distribution's argument validation off, jit.trace wrapped), so stop it after the warning.
    with mock.patch.object(torch._dynamo, "is_dynamo_supported", lambda: False):
        with contextlib.suppress(RuntimeError):  # 'flex_attention requires dynamo support'
            flex_attention(*[torch.ones(1, 1, 2, 8)] * 3)


_initial_states: dict[tuple[str, str], dict] = {}


def _restart_module_generators(module) -> None:
    """Put each NumPy generator of the test module's globals back in the state it had when
    the first test of the module started: a test draws the same data whichever tests ran
    before it."""
    for name, value in vars(module).items():
        if isinstance(value, np.random.Generator):
            key = (module.__name__, name)
            if key not in _initial_states:
                _initial_states[key] = copy.deepcopy(value.bit_generator.state)
            value.bit_generator.state = copy.deepcopy(_initial_states[key])


def _seeded(torch):
    """PyTorch with its random generator seeded, as at every recording, and its distributions
    validating their arguments, as by default: a process's first torch.compile (flex_attention
    compiles) turns that off for good."""
    torch.manual_seed(0)
    torch.distributions.Distribution.set_default_validate_args(__debug__)
    return torch


@pytest.fixture
def torch(request):
    """PyTorch, the test oracle: live, recorded or replayed (see the module's docstring).

    Python's, NumPy's and tocha's global random generators are seeded before each such test,
    and PyTorch's where it runs: the questions and answers are the same at every run."""
    item = request.node
    random.seed(0)
    np.random.seed(0)
    tocha.manual_seed(0)
    _restart_module_generators(request.module)
    if MODE == "live":
        if not HAS_TORCH:
            pytest.skip("PyTorch is not installed")
        yield _seeded(_real_torch())
        return
    if MODE == "record":
        tape = Tape(Mode.RECORD, item.nodeid, torch=_seeded(_real_torch()))
        item.oracle_tape = tape
        yield tape.root
        return
    recorded = recording(item)
    if isinstance(recorded, str):  # answers that cannot be recorded: PyTorch itself
        if not HAS_TORCH:
            pytest.skip(f"PyTorch is not installed, and {recorded}")
        yield _seeded(_real_torch())
        return
    if recorded is None:
        if HAS_TORCH:
            pytest.fail(UNRECORDED, pytrace=False)
        pytest.skip(UNRECORDED)
    if HAS_TORCH:
        tape = Tape(Mode.CHECK, item.nodeid, recorded, torch=_seeded(_real_torch()))
    else:
        tape = Tape(Mode.REPLAY, item.nodeid, recorded)
    yield tape.root
    if getattr(item, "oracle_passed", False):
        tape.finish()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if item.get_closest_marker("cuda") is not None:
        _gpu_tests.add(item.nodeid)
    if "torch" not in getattr(item, "fixturenames", ()):
        return
    if report.when == "call":
        item.oracle_passed = report.passed
        item.oracle_recordable = report.passed or report.skipped  # skips and xfails replay too
    if report.failed:
        _outcomes[item.nodeid] = "failed: " + _reason(report)
    elif report.skipped and report.when != "teardown":
        _outcomes.setdefault(item.nodeid, "skipped")
    elif report.when == "teardown":
        _outcomes.setdefault(item.nodeid, "passed")
        tape = getattr(item, "oracle_tape", None)
        if tape is not None and getattr(item, "oracle_recordable", False):
            _recorded[_file_of(item)][item.nodeid] = tape.events


def _reason(report) -> str:
    text = str(report.longrepr)
    lines = [line for line in text.splitlines() if line.startswith("E ")] or text.splitlines()
    return (lines[0] if lines else "failed").removeprefix("E").strip()[:300]


def pytest_sessionfinish(session):
    if MODE == "record":
        for test_file, tapes in _recorded.items():
            answers = load_answers(test_file)
            answers.update(tapes)
            save_answers(test_file, answers)
    report = os.environ.get("TOCHA_ORACLE_REPORT")
    if report:
        with open(report, "w") as stream:
            json.dump(_outcomes, stream, indent=0, sort_keys=True)


def pytest_terminal_summary(terminalreporter):
    """The skips counted by reason, and the share of the tests that skipped (GPU tests, which
    need a machine with a GPU, counted apart)."""
    stats = terminalreporter.stats
    skipped = [r for r in stats.get("skipped", []) if getattr(r, "when", "") != "teardown"]
    ran = sum(
        len(stats.get(key, [])) for key in ("passed", "failed", "error", "xfailed", "xpassed")
    )
    gpu = [r for r in skipped if r.nodeid in _gpu_tests]
    others = [r for r in skipped if r.nodeid not in _gpu_tests]
    if not skipped:
        return
    reasons = collections.Counter(_skip_reason(r) for r in others)
    total = ran + len(others)
    terminalreporter.section("skips by reason")
    for reason, count in reasons.most_common():
        terminalreporter.write_line(f"{count:6d}  {reason}")
    share = 100.0 * len(others) / total if total else 0.0
    terminalreporter.write_line(
        f"{len(others)} of {total} tests skipped ({share:.1f}%), "
        f"not counting {len(gpu)} GPU tests (marked cuda) skipped without a GPU"
    )


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ").split(" (")[0][:160]  # without the details
