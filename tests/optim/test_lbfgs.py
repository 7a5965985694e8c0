"""L-BFGS against PyTorch on harder problems than test_optimizers' least squares: Rosenbrock's
valley (where the strong Wolfe search brackets and zooms), complex parameters, a parameter
without a gradient; the evaluation budget; the loss `step` returns; the early return at a
stationary point; and checkpoints that one library writes and the other resumes from."""

from __future__ import annotations

import numpy as np
import pytest

import tocha


def rosenbrock(lib):
    """Rosenbrock's function of five variables, split over two parameters, from (-1.2, 1, ...)."""
    params = [
        lib.tensor([-1.2, 1.0, -1.2], dtype=lib.float64, requires_grad=True),
        lib.tensor([[1.0, -1.2]], dtype=lib.float64, requires_grad=True),
    ]

    def valley(a, b):
        return ((1 - a) ** 2 + 100 * (b - a**2) ** 2).sum()

    def loss_fn():
        x, y = params[0], params[1].reshape(-1)
        return valley(x[:-1], x[1:]) + valley(x[-1:], y[:1]) + valley(y[:-1], y[1:])

    return params, loss_fn


def complex_least_squares(lib):
    """A complex linear least-squares fit: L-BFGS sees each complex entry as two reals."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 3)) + 1j * rng.standard_normal((8, 3))
    b = rng.standard_normal((8, 2)) + 1j * rng.standard_normal((8, 2))
    start = 0.1 * (rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2)))
    a, b = lib.from_numpy(a), lib.from_numpy(b)
    params = [lib.tensor(start, dtype=lib.complex128, requires_grad=True)]

    def loss_fn():
        residual = a @ params[0] - b
        return (residual * residual.conj()).real.sum()

    return params, loss_fn


def one_unused(lib):
    """A quartic in the first parameter; the second never receives a gradient."""
    params = [
        lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True),
        lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True),
    ]

    def loss_fn():
        return ((params[0] - 1) ** 4).sum() + (params[0] ** 2).sum()

    return params, loss_fn


# Each problem with the steps compared: near the complex fit's optimum, the rounding of the
# two libraries' gradients grows by 10x a step under the fixed step length.
PROBLEMS = {
    "rosenbrock": (rosenbrock, 10),
    "complex": (complex_least_squares, 6),
    "unused": (one_unused, 10),
}


def closure_of(opt, loss_fn):
    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    return closure


def run(opt, params, loss_fn, steps):
    """The loss `step` returned and the parameters after it, for each of `steps` steps."""
    closure = closure_of(opt, loss_fn)
    out = []
    for _ in range(steps):
        out.append(float(opt.step(closure).detach()))
        for p in params:
            value = p.detach().numpy().ravel()
            out.extend((value.view(np.float64) if value.dtype.kind == "c" else value).copy())
    return np.array(out)


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-10)


def counts(opt, params):
    state = opt.state[params[0]]
    return state["func_evals"], state["n_iter"]


@pytest.mark.parametrize("problem", list(PROBLEMS))
@pytest.mark.parametrize(
    "options",
    [
        dict(line_search_fn="strong_wolfe"),
        dict(line_search_fn="strong_wolfe", max_iter=3, history_size=2),
        dict(lr=0.1, max_iter=7, history_size=4),
    ],
    ids=["wolfe", "wolfe-short", "fixed"],
)
def test_trajectory_matches_torch(torch, problem, options):
    results = []
    for lib in (tocha, torch):
        make, steps = PROBLEMS[problem]
        params, loss_fn = make(lib)
        opt = lib.optim.LBFGS(params, **options)
        results.append((run(opt, params, loss_fn, steps), counts(opt, params)))
    (ours, our_counts), (theirs, their_counts) = results
    close(ours, theirs)
    assert our_counts == their_counts


def wavy(lib):
    """A sum of sines over a shallow bowl: many local minima along each direction."""
    params = [lib.tensor([-0.11, 1.88, 0.62], dtype=lib.float64, requires_grad=True)]

    def loss_fn():
        return (lib.sin(3 * params[0]) + 0.1 * params[0] ** 2).sum()

    return params, loss_fn


def kinked(lib):
    """Absolute values: the slope never flattens near the kink, so the zoom runs until the
    bracket is narrower than `tolerance_change`."""
    params = [lib.tensor([1.0, -0.5, 2.0], dtype=lib.float64, requires_grad=True)]

    def loss_fn():
        return (params[0] - 0.3).abs().sum() + 0.01 * (params[0] ** 2).sum()

    return params, loss_fn


# Problems and step lengths that lead the strong Wolfe search through each of its branches.
LINE_SEARCH_CASES = {
    "zoom-moves-ends": (rosenbrock, dict(lr=3)),
    "zoom-nudges-inside": (wavy, dict(lr=10)),
    "zoom-narrow": (kinked, dict()),
}


@pytest.mark.parametrize("case", list(LINE_SEARCH_CASES))
def test_line_search_branches_match_torch(torch, case):
    make, options = LINE_SEARCH_CASES[case]
    results = []
    for lib in (tocha, torch):
        params, loss_fn = make(lib)
        opt = lib.optim.LBFGS(params, line_search_fn="strong_wolfe", **options)
        results.append((run(opt, params, loss_fn, 4), counts(opt, params)))
    (ours, our_counts), (theirs, their_counts) = results
    close(ours, theirs)
    assert our_counts == their_counts


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("max_eval", [1, 2, 3, 7])
def test_evaluation_budget_matches_torch(torch, line_search_fn, max_eval):
    """`max_eval` ends a step's iterations; the line search spends no more than is left."""
    results = []
    for lib in (tocha, torch):
        params, loss_fn = rosenbrock(lib)
        opt = lib.optim.LBFGS(params, max_eval=max_eval, line_search_fn=line_search_fn)
        per_step = []
        out = []
        for _ in range(4):
            out.append(run(opt, params, loss_fn, 1))
            per_step.append(counts(opt, params))
        results.append((np.concatenate(out), per_step))
    (ours, our_counts), (theirs, their_counts) = results
    close(ours, theirs)
    assert our_counts == their_counts


def test_step_returns_the_first_loss_with_its_graph(torch):
    """`step` returns the closure's first result, computed with grad enabled (even under
    no_grad) before the parameters moved."""
    values = []
    for lib in (tocha, torch):
        params, loss_fn = rosenbrock(lib)
        opt = lib.optim.LBFGS(params, max_iter=5)
        first = float(loss_fn().detach())
        with lib.no_grad():
            loss = opt.step(closure_of(opt, loss_fn))
        assert loss.requires_grad and loss.grad_fn is not None
        assert float(loss.detach()) == first
        values.append((first, counts(opt, params)))
    assert values[0] == values[1]


def test_step_returns_the_closures_own_tensor():
    params, loss_fn = rosenbrock(tocha)
    opt = tocha.optim.LBFGS(params, max_iter=5)
    returned = []

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        returned.append(loss)
        return loss

    assert opt.step(closure) is returned[0]
    assert len(returned) == opt.state[params[0]]["func_evals"] == 5


def test_stationary_start_returns_at_once(torch):
    """A gradient already within `tolerance_grad`: one evaluation, no iteration, and the
    state holds only the counters."""
    for lib in (tocha, torch):
        p = lib.ones(3, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([p])
        closure = closure_of(opt, lambda p=p: ((p - 1) ** 2).sum())
        assert float(opt.step(closure).detach()) == 0.0
        assert p.tolist() == [1.0, 1.0, 1.0]
        assert dict(opt.state_dict()["state"][0]) == {"func_evals": 1, "n_iter": 0}


STATE_KEYS = [
    "func_evals",
    "n_iter",
    "al",
    "d",
    "t",
    "old_dirs",
    "old_stps",
    "ro",
    "H_diag",
    "prev_flat_grad",
    "prev_loss",
]


def torch_state_to_tocha(torch, state_dict):
    """A PyTorch LBFGS state dict as tocha's: tensors through NumPy, lists entry by entry."""

    def convert(value):
        if torch.is_tensor(value):
            return tocha.from_numpy(np.array(value.numpy()))
        if value is None or isinstance(value, (bool, int, float)):
            return value
        return [convert(v) for v in value]

    state = state_dict["state"][0]
    return {
        "state": {0: {key: convert(state[key]) for key in list(state)}},
        "param_groups": state_dict["param_groups"],
    }


def tocha_state_to_torch(torch, state_dict):
    """A tocha LBFGS state dict as PyTorch's: tensors through NumPy, lists entry by entry."""

    def convert(value):
        if isinstance(value, tocha.Tensor):
            return torch.from_numpy(value.numpy().copy())
        if isinstance(value, list):
            return [convert(v) for v in value]
        return value

    state = state_dict["state"][0]
    return {
        "state": {0: {key: convert(value) for key, value in state.items()}},
        "param_groups": state_dict["param_groups"],
    }


@pytest.mark.parametrize("writer", ["torch", "tocha"])
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_checkpoint_of_one_resumes_in_the_other(torch, writer, line_search_fn):
    """Three steps in the writer; its state dict (PyTorch's keys) loaded into the other
    library's fresh optimizer over the same parameter values; three more steps there follow
    the writer's own three more."""
    libs = {"torch": torch, "tocha": tocha}
    write_lib = libs[writer]
    read_lib = libs["tocha" if writer == "torch" else "torch"]
    options = dict(lr=0.5, max_iter=4, history_size=3, line_search_fn=line_search_fn)

    params, loss_fn = rosenbrock(write_lib)
    writer_opt = write_lib.optim.LBFGS(params, **options)
    run(writer_opt, params, loss_fn, 3)
    saved = writer_opt.state_dict()
    assert list(saved["state"][0]) == STATE_KEYS
    values = [p.detach().numpy().copy() for p in params]
    if writer == "torch":
        saved = torch_state_to_tocha(torch, saved)
    else:
        saved = tocha_state_to_torch(torch, saved)

    read_params, read_loss_fn = rosenbrock(read_lib)
    with read_lib.no_grad():
        for p, value in zip(read_params, values):
            p.copy_(read_lib.from_numpy(value))
    reader_opt = read_lib.optim.LBFGS(read_params, **options)
    reader_opt.load_state_dict(saved)
    assert list(reader_opt.state_dict()["state"][0]) == STATE_KEYS

    close(
        run(reader_opt, read_params, read_loss_fn, 3),
        run(writer_opt, params, loss_fn, 3),
    )
    assert counts(reader_opt, read_params) == counts(writer_opt, params)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_step_reads_the_loss_without_a_warning(line_search_fn):
    """The closure's loss requires grad; PyTorch's LBFGS reads it without the warning that
    ``float`` of such a tensor gives."""
    import warnings

    params, loss_fn = rosenbrock(tocha)
    opt = tocha.optim.LBFGS(params, max_iter=3, line_search_fn=line_search_fn)

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step(closure)
