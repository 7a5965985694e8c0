"""tocha.jit.trace keeps Python values read from tensors (branches, ``item()``...) as
constants of the trace, warning torch.jit.TracerWarning at the user's line, as
torch.jit.trace does; check_trace catches inputs that would take another path."""

from __future__ import annotations

import inspect
import io
import warnings

import numpy as np
import pytest

import tocha
import tocha.export as export
import tocha.jit as jit
import tocha.nn as nn

POSITIVE = [1.0, 2.0, 3.0]
NEGATIVE = [-1.0, -2.0, -4.0]


def branch(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def scale(x):
    return x * x.sum().item()


def conversions(x):
    flag = bool(x[0] > 0)
    whole = int(x[0])
    real = float(x[1])
    values = x.tolist()
    array = x.numpy()
    number = complex(x[2])
    picked = [10, 20, 30][x[0].long()]
    return (
        x + (2 if flag else 0) + whole + real + len(values) + float(array[0]) + number.real + picked
    )


def _tracer_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if w.category.__name__ == "TracerWarning"]


def _trace_both(torch, fn, example, **kwargs):
    """Trace `fn` with torch and tocha; each result with the TracerWarning messages."""
    with warnings.catch_warnings(record=True) as theirs_caught:
        warnings.simplefilter("always")
        theirs = torch.jit.trace(fn, torch.tensor(example), **kwargs)
    with warnings.catch_warnings(record=True) as ours_caught:
        warnings.simplefilter("always")
        ours = jit.trace(fn, tocha.tensor(example), **kwargs)
    return (ours, _tracer_warnings(ours_caught)), (theirs, _tracer_warnings(theirs_caught))


def _line_of(fn, text: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_branch_on_a_tensor_warns_torchs_message(torch):
    (_, ours), (_, theirs) = _trace_both(torch, branch, POSITIVE, check_trace=False)
    assert ours == theirs
    assert ours[0].startswith("Converting a tensor to a Python boolean might cause the trace")


def test_warning_points_at_the_users_line():
    with pytest.warns(jit.TracerWarning) as caught:
        jit.trace(branch, tocha.tensor(POSITIVE), check_trace=False)
    (warning,) = caught
    assert warning.filename == __file__
    assert warning.lineno == _line_of(branch, "if x.sum() > 0")


def test_the_traced_branch_is_kept_for_other_inputs(torch):
    (ours, _), (theirs, _) = _trace_both(torch, branch, POSITIVE, check_trace=False)
    got = ours(tocha.tensor(NEGATIVE))
    want = np.asarray(theirs(torch.tensor(NEGATIVE)))
    np.testing.assert_allclose(got.numpy(), want)
    np.testing.assert_allclose(got.numpy(), np.array(NEGATIVE) * 2)


def test_specialised_trace_saves_and_loads():
    with pytest.warns(jit.TracerWarning):
        traced = jit.trace(branch, tocha.tensor(POSITIVE), check_trace=False)
    buffer = io.BytesIO()
    jit.save(traced, buffer)
    buffer.seek(0)
    loaded = jit.load(buffer)
    np.testing.assert_allclose(loaded(tocha.tensor(NEGATIVE)).numpy(), np.array(NEGATIVE) * 2)


def test_item_becomes_a_constant(torch):
    (ours, ours_warned), (theirs, theirs_warned) = _trace_both(
        torch, scale, POSITIVE, check_trace=False
    )
    assert ours_warned == theirs_warned
    assert ours_warned[0].startswith("Converting a tensor to a Python number")
    assert "item" not in ours.code and "6.0" in ours.code
    got = ours(tocha.tensor(NEGATIVE))
    np.testing.assert_allclose(got.numpy(), np.asarray(theirs(torch.tensor(NEGATIVE))))
    np.testing.assert_allclose(got.numpy(), np.array(NEGATIVE) * 6.0)


def test_each_conversion_warns_as_torch(torch):
    (ours, ours_warned), (theirs, theirs_warned) = _trace_both(
        torch, conversions, POSITIVE, check_trace=False
    )
    assert ours_warned == theirs_warned
    kinds = [m.split(" might")[0].removeprefix("Converting a tensor to ") for m in ours_warned]
    assert kinds == [
        "a Python boolean",
        "a Python integer",
        "a Python float",
        "a Python list",
        "a NumPy array",
        "a Python complex",
    ]
    got = ours(tocha.tensor(NEGATIVE))
    np.testing.assert_allclose(got.numpy(), np.asarray(theirs(torch.tensor(NEGATIVE))))


class Branching(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


def test_module_branch_warns_and_specialises(torch):
    _, (_, theirs) = _trace_both(torch, branch, POSITIVE, check_trace=False)
    with pytest.warns(jit.TracerWarning) as caught:
        traced = jit.trace(Branching(), tocha.tensor(POSITIVE), check_trace=False)
    assert _tracer_warnings(caught) == theirs
    assert caught[0].lineno == _line_of(Branching.forward, "if x.sum() > 0")
    np.testing.assert_allclose(traced(tocha.tensor(NEGATIVE)).numpy(), np.array(NEGATIVE) * 2)


def _check_both(torch, fn, check):
    """Trace `fn` on POSITIVE with check input `check` in torch and tocha: each one's
    exception (or None) and TracerWarning messages."""
    outcomes = []
    for lib, trace in ((tocha, jit.trace), (torch, torch.jit.trace)):
        error = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                trace(fn, lib.tensor(POSITIVE), check_inputs=[(lib.tensor(check),)])
            except Exception as exc:  # noqa: BLE001 - compared with torch's below
                error = exc
        outcomes.append((error, _tracer_warnings(caught)))
    return outcomes


def _first_lines(messages: list[str]) -> list[str]:
    return [m.splitlines()[0] for m in messages]


# torch's graph diff names the traced function's file: copies compiled under a fixed file name
# keep its message, which the oracle records, the same wherever the repository lives.
_FIXED_NAME: dict = {"__name__": __name__}
exec(
    compile(inspect.getsource(branch) + inspect.getsource(scale), "<jit-trace-cases>", "exec"),
    _FIXED_NAME,
)


@pytest.mark.parametrize("name", ["branch", "scale"])
def test_check_inputs_taking_another_path_raise_as_torch(torch, name):
    fn = _FIXED_NAME[name]
    (ours, ours_warned), (theirs, theirs_warned) = _check_both(torch, fn, NEGATIVE)
    assert type(ours).__name__ == type(theirs).__name__ == "TracingCheckError"
    assert isinstance(ours, jit.TracingCheckError)
    header = "Tracing failed sanity checks!\nERROR: Graphs differed across invocations!\n"
    assert str(theirs).startswith(header + "\tGraph diff:\n")
    assert str(ours).startswith(header + "\tGraph diff:\n")
    # the conversion warns in the trace and in the check's trace, then the outputs differ
    assert _first_lines(ours_warned) == _first_lines(theirs_warned)
    assert ours_warned[-1].startswith("Output nr 1. of the traced function does not match")


def test_check_inputs_taking_the_same_branch_pass_as_torch(torch):
    (ours, ours_warned), (theirs, theirs_warned) = _check_both(torch, branch, [5.0, 2.0, 1.0])
    assert ours is None and theirs is None
    assert ours_warned == theirs_warned
    assert len(ours_warned) == 2


def test_default_check_on_the_example_passes():
    with pytest.warns(jit.TracerWarning) as caught:
        traced = jit.trace(scale, tocha.tensor(POSITIVE))
    assert len(_tracer_warnings(caught)) == 2  # the trace and the check's trace
    np.testing.assert_allclose(traced(tocha.tensor(POSITIVE)).numpy(), np.array(POSITIVE) * 6)


def test_export_still_refuses_data_dependent_branches():
    with pytest.warns(jit.TracerWarning):
        jit.trace(branch, tocha.tensor(POSITIVE), check_trace=False)
    with pytest.raises(export.GuardOnDataDependentSymNode, match="data-dependent"):
        export.export(Branching(), (tocha.tensor(POSITIVE),))


def test_specialising_ends_with_a_failed_trace():
    def broken(x):
        bool(x.sum() > 0)
        raise ValueError("boom")

    with pytest.warns(jit.TracerWarning), pytest.raises(ValueError, match="boom"):
        jit.trace(broken, tocha.tensor(POSITIVE))
    with pytest.raises(export.GuardOnDataDependentSymNode):
        export.export(Branching(), (tocha.tensor(POSITIVE),))


def test_conversions_outside_a_trace_do_not_warn():
    with pytest.warns(jit.TracerWarning):
        jit.trace(branch, tocha.tensor(POSITIVE), check_trace=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bool(tocha.tensor(POSITIVE).sum() > 0)
        assert tocha.tensor(POSITIVE).sum().item() == 6.0


def flatten(x):
    return x.view(x.size(0), -1) + x.shape[1]


def test_sizes_are_recorded_as_torch_records_aten_size(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("error", jit.TracerWarning)
        ours = jit.trace(flatten, tocha.ones(2, 3, 4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        theirs = torch.jit.trace(flatten, torch.ones(2, 3, 4))
    assert _tracer_warnings(caught) == []
    assert "tocha.Tensor.size(x, 0)" in ours.code
    assert "size(x, 2)" not in ours.code  # read by x.shape, unused: left out
    got = ours(tocha.arange(30.0).reshape(5, 3, 2))
    want = np.asarray(theirs(torch.arange(30.0).reshape(5, 3, 2)))
    assert tuple(got.shape) == want.shape == (5, 6)
    np.testing.assert_allclose(got.numpy(), want)
    buffer = io.BytesIO()
    jit.save(ours, buffer)
    buffer.seek(0)
    assert tuple(jit.load(buffer)(tocha.ones(7, 3, 1)).shape) == (7, 3)


def by_size(x):
    if x.shape[0] > 2:
        return x * 2
    return x - 1


def test_branch_on_a_size_warns_as_torch(torch):
    (ours, ours_warned), (_, theirs_warned) = _trace_both(
        torch, by_size, POSITIVE, check_trace=False
    )
    assert ours_warned == theirs_warned
    assert len(ours_warned) == 1 and "Python boolean" in ours_warned[0]
    np.testing.assert_allclose(ours(tocha.ones(1)).numpy(), [2.0])
    with pytest.warns(jit.TracerWarning) as caught:
        jit.trace(by_size, tocha.ones(3), check_inputs=[(tocha.ones(4),)])
    assert caught[0].lineno == _line_of(by_size, "if x.shape[0] > 2")


def test_dead_branch_conditions_are_left_out_of_the_code():
    with pytest.warns(jit.TracerWarning):
        traced = jit.trace(branch, tocha.tensor(POSITIVE), check_trace=False)
    assert "sum" not in traced.code and "gt" not in traced.code


def test_tochas_own_modules_never_give_a_wrong_answer_at_other_sizes():
    # nn.LSTM's Python code uses its sizes as plain counts: a trace of it either
    # generalises or refuses the other sequence length, never computing wrong numbers
    lstm = nn.LSTM(3, 4, 2).eval()
    traced = jit.trace(lstm, tocha.randn(5, 2, 3))
    other = tocha.randn(6, 2, 3)
    try:
        got = traced(other)[0]
    except RuntimeError:
        return
    np.testing.assert_allclose(got.detach().numpy(), lstm(other)[0].detach().numpy(), atol=1e-5)


class Flattening(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 2)

    def forward(self, x):
        return self.fc(x.view(x.size(0), -1))


def test_module_reading_the_batch_size_generalises():
    model = Flattening().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error", jit.TracerWarning)
        traced = jit.trace(model, tocha.randn(2, 3, 4))
    other = tocha.randn(5, 3, 4)
    np.testing.assert_allclose(
        traced(other).detach().numpy(), model(other).detach().numpy(), rtol=1e-6
    )


def size_arithmetic(x):
    rows = int(x.size(0))
    double = x.size(0) * 2
    half = x.size(1) // 2
    return x.new_zeros(rows, double) + half, x.reshape(-1, half)


def test_size_arithmetic_is_recorded_and_int_of_a_size_warns_as_torch(torch):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        theirs = torch.jit.trace(size_arithmetic, torch.ones(2, 4), check_trace=False)
    with pytest.warns(jit.TracerWarning) as ours_caught:
        ours = jit.trace(size_arithmetic, tocha.ones(2, 4), check_trace=False)
    assert _tracer_warnings(ours_caught) == _tracer_warnings(caught)
    assert "Python integer" in _tracer_warnings(ours_caught)[0]
    assert ours_caught[0].lineno == _line_of(size_arithmetic, "rows = int(x.size(0))")
    got = ours(tocha.ones(3, 6))
    want = theirs(torch.ones(3, 6))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), np.asarray(b))


def test_ignore_lib_warnings_keeps_the_users_warnings():
    with warnings.catch_warnings():
        jit.TracerWarning.ignore_lib_warnings()
        assert warnings.filters[0][2] is jit.TracerWarning
        with pytest.warns(jit.TracerWarning, match="Python boolean"):
            jit.trace(branch, tocha.tensor(POSITIVE), check_trace=False)


def test_module_check_inputs_on_the_other_branch_raise():
    with pytest.warns(jit.TracerWarning), pytest.raises(jit.TracingCheckError) as error:
        jit.trace(Branching(), tocha.tensor(POSITIVE), check_inputs=[(tocha.tensor(NEGATIVE),)])
    assert "Graphs differed across invocations!" in str(error.value)
    assert "sub" in str(error.value)
