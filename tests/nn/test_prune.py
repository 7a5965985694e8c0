"""tocha.nn.utils.prune against torch.nn.utils.prune (recorded): masks and pruned values of
every method, parameter/buffer/state_dict names and order, the hooks, pruning twice (the
PruningContainer), forward and backward through the pruned tensor, `remove`,
`global_unstructured`, the random methods on PyTorch's random stream, and the errors."""

from __future__ import annotations

import copy
import importlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tocha
import tocha.nn.utils.prune as prune
from tocha.compat import use_pytorch_random

try:  # PyTorch loads the module only when it is imported; replay runs have no PyTorch
    importlib.import_module("torch.nn.utils.prune")
except ImportError:
    pass

_gen = np.random.default_rng(7)
W = _gen.standard_normal((4, 3))  # tie-free, so topk picks the same entries as PyTorch's
B = _gen.standard_normal(4)
W4 = _gen.standard_normal((5, 2, 3, 3))  # a Conv2d weight
W2 = _gen.standard_normal((2, 4))
X = _gen.standard_normal((2, 3))


def _linear(lib, weight=W, bias=B):
    m = lib.nn.Linear(weight.shape[1], weight.shape[0]).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(weight))
        m.bias.copy_(lib.tensor(bias))
    return m


def _conv(lib):
    m = lib.nn.Conv2d(2, 5, 3).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W4))
    return m


def _names(lib, m) -> dict:
    """What pruning changes in a module's registration, as plain data."""
    hooks = list(m._forward_pre_hooks.values())
    P = lib.nn.utils.prune
    return {
        "parameters": [n for n, _ in m.named_parameters()],
        "buffers": [n for n, _ in m.named_buffers()],
        "state_dict": list(m.state_dict()),
        "hooks": [
            (isinstance(h, P.PruningContainer), isinstance(h, P.BasePruningMethod)) for h in hooks
        ],
        "is_pruned": P.is_pruned(m),
    }


def _pruned(m, name="weight") -> list:
    return [getattr(m, name + "_mask").tolist(), getattr(m, name).tolist()]


# -- the methods, one at a time ----------------------------------------------------------------


L1_AMOUNTS = {"int0": 0, "int3": 3, "int12": 12, "half": 0.5, "third": 0.3, "all": 1.0}


@pytest.mark.parametrize("amount", list(L1_AMOUNTS.values()), ids=list(L1_AMOUNTS))
def test_l1_unstructured_matches_torch(torch, amount):
    def run(lib):
        m = _linear(lib)
        out = lib.nn.utils.prune.l1_unstructured(m, "weight", amount=amount)
        return out is m, _names(lib, m), _pruned(m)

    assert run(tocha) == run(torch)


def test_l1_unstructured_with_importance_scores(torch):
    scores = np.arange(12.0).reshape(4, 3)[::-1].copy()

    def run(lib):
        m = _linear(lib)
        lib.nn.utils.prune.l1_unstructured(m, "weight", 5, importance_scores=lib.tensor(scores))
        return _pruned(m), m.weight_mask.dtype == lib.float64

    assert run(tocha) == run(torch)


def test_identity_and_custom_from_mask(torch):
    mask = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1]])

    def run(lib):
        P = lib.nn.utils.prune
        a = P.identity(_linear(lib), "weight")
        b = P.custom_from_mask(_linear(lib), "bias", mask=lib.tensor([1.0, 0.0, 0.0, 1.0]))
        c = P.custom_from_mask(_linear(lib), "weight", mask=lib.tensor(mask).bool())
        return (
            _names(lib, a),
            _pruned(a),
            _names(lib, b),
            _pruned(b, "bias"),
            _pruned(c),
            str(c.weight_mask.dtype).split(".")[1],
        )

    assert run(tocha) == run(torch)


LN_CASES = {
    "l1-dim0": (1, 0, 2),
    "l2-dim1": (2, 1, 0.5),
    "l2-dim-1": (2, -1, 1),
    "inf-dim0": (float("inf"), 0, 0.4),
    "-inf-dim0": (float("-inf"), 0, 3),
    "l3-dim2": (3, 2, 1),
    "l1.5-dim3": (1.5, 3, 0.67),
    "l2-none": (2, 0, 0),
    "l2-all": (2, 1, 1.0),
}


@pytest.mark.parametrize("case", list(LN_CASES.values()), ids=list(LN_CASES))
def test_ln_structured_matches_torch(torch, case):
    n, dim, amount = case

    def run(lib):
        m = lib.nn.utils.prune.ln_structured(_conv(lib), "weight", amount, n=n, dim=dim)
        return _names(lib, m), _pruned(m)

    assert run(tocha) == run(torch)


def test_ln_structured_frobenius_and_scores(torch):
    scores = np.abs(W)[:, ::-1].copy()

    def run(lib):
        P = lib.nn.utils.prune
        a = P.ln_structured(_linear(lib), "weight", 2, n="fro", dim=0)
        b = P.ln_structured(
            _linear(lib), "weight", 1, n=1, dim=1, importance_scores=lib.tensor(scores)
        )
        return _pruned(a), _pruned(b)

    assert run(tocha) == run(torch)


@pytest.fixture
def pytorch_stream():
    previous = use_pytorch_random(True)
    yield
    use_pytorch_random(previous)


RANDOM_CASES = {
    "unstructured-int": ("random_unstructured", (5,)),
    "unstructured-float": ("random_unstructured", (0.45,)),
    "structured-dim0": ("random_structured", (0.4, 0)),
    "structured-dim1": ("random_structured", (1, 1)),
    "structured-dim-1": ("random_structured", (1, -1)),
}


@pytest.mark.parametrize("case", list(RANDOM_CASES.values()), ids=list(RANDOM_CASES))
def test_random_methods_draw_pytorchs_values(torch, pytorch_stream, case):
    """On PyTorch's random stream (`use_pytorch_random`) the random methods prune what
    PyTorch's do after the same seed: the same draw (``rand_like`` of the tensor, ``rand``
    of the channels), the same choice; twice, the second on what the first kept."""
    func, args = case

    def run(lib):
        lib.manual_seed(3)
        m = _conv(lib)
        getattr(lib.nn.utils.prune, func)(m, "weight", *args)
        first = m.weight_mask.tolist()
        getattr(lib.nn.utils.prune, func)(m, "weight", *args)
        return first, _pruned(m), lib.rand(2).tolist()

    ours, theirs = run(tocha), run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)


def test_random_methods_on_tochas_own_stream():
    """tocha's default stream: the counts and the structure, not PyTorch's draws."""
    for seed in range(5):
        tocha.manual_seed(seed)
        m = prune.random_unstructured(_conv(tocha), "weight", amount=0.3)
        assert int((m.weight_mask == 0).sum()) == round(0.3 * W4.size)
        prune.random_unstructured(m, "weight", amount=10)
        assert int((m.weight_mask == 0).sum()) == round(0.3 * W4.size) + 10
        c = prune.random_structured(_conv(tocha), "weight", amount=2, dim=0)
        per_filter = c.weight_mask.sum(dim=(1, 2, 3)).tolist()
        assert sorted(per_filter) == [0, 0, 18, 18, 18]
        prune.random_structured(c, "weight", amount=0.34, dim=0)  # 1 of the 3 left
        assert sorted(c.weight_mask.sum(dim=(1, 2, 3)).tolist()) == [0, 0, 0, 18, 18]
    masks = set()
    for seed in range(8):
        tocha.manual_seed(seed)
        masks.add(
            tuple(
                prune.random_unstructured(_linear(tocha), "weight", 6).weight_mask.view(-1).tolist()
            )
        )
    assert len(masks) > 1


# -- pruning twice, forward, remove ------------------------------------------------------------


def test_iterative_pruning_composes_masks(torch):
    def run(lib):
        P = lib.nn.utils.prune
        m = _conv(lib)
        seen = []
        P.l1_unstructured(m, "weight", amount=20)
        seen.append((_names(lib, m), m.weight_mask.tolist()))
        P.ln_structured(m, "weight", amount=0.4, n=2, dim=0)  # 2 of 5 filters
        seen.append((_names(lib, m), m.weight_mask.tolist()))
        P.l1_unstructured(m, "weight", amount=0.5)  # half of what is left
        seen.append((_names(lib, m), m.weight_mask.tolist()))
        P.ln_structured(m, "weight", amount=1, n=1, dim=1)  # 1 of 2 input channels
        seen.append((_names(lib, m), m.weight_mask.tolist()))
        P.custom_from_mask(m, "weight", mask=lib.tensor(W4 > -1.0))
        seen.append((_names(lib, m), _pruned(m)))
        hook = list(m._forward_pre_hooks.values())[0]
        kinds = [
            [isinstance(h, getattr(P, k)) for k in ("L1Unstructured", "LnStructured")] for h in hook
        ]
        return seen, len(hook), kinds, hook._tensor_name, isinstance(hook[-1], P.CustomFromMask)

    assert run(tocha) == run(torch)


def test_forward_recomputes_the_pruned_tensor(torch):
    def run(lib):
        m = lib.nn.utils.prune.l1_unstructured(_linear(lib), "weight", amount=5)
        with lib.no_grad():
            m.weight_orig.mul_(2.0)
        before = m.weight.tolist()
        y = m(lib.tensor(X))
        y.sum().backward()
        return before, m.weight.tolist(), y.tolist(), m.weight_orig.grad.tolist()

    ours, theirs = run(tocha), run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)


def test_remove_makes_pruning_permanent(torch):
    def run(lib):
        P = lib.nn.utils.prune
        m = _linear(lib)
        P.l1_unstructured(m, "weight", amount=4)
        P.random_unstructured(m, "bias", amount=0)
        P.ln_structured(m, "weight", amount=1, n=2, dim=0)
        pruned = m.weight.tolist()
        out = P.remove(m, "weight")
        after_weight = (_names(lib, m), m.weight.tolist(), m.weight.requires_grad)
        P.remove(m, "bias")
        return pruned, out is m, after_weight, _names(lib, m), m(lib.tensor(X)).tolist()

    ours, theirs = run(tocha), run(torch)
    assert ours[:4] == theirs[:4]
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-12)


def test_remove_keeps_the_parameter_object():
    m = _linear(tocha)
    prune.l1_unstructured(m, "weight", amount=2)
    orig = m.weight_orig
    prune.remove(m, "weight")
    assert m.weight is orig and isinstance(orig, tocha.nn.Parameter)
    assert "weight" not in m.__dict__ and not prune.is_pruned(m)


def test_state_dict_round_trip(torch):
    def run(lib):
        P = lib.nn.utils.prune
        a = P.l1_unstructured(_linear(lib), "weight", amount=6)
        b = P.identity(_linear(lib, weight=W * 3.0), "weight")
        result = b.load_state_dict(a.state_dict())
        y = b(lib.tensor(X))
        return list(result.missing_keys), list(result.unexpected_keys), y.tolist(), _pruned(b)

    ours, theirs = run(tocha), run(torch)
    assert ours[:2] == theirs[:2] and ours[3] == theirs[3]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)


def test_is_pruned_looks_into_submodules(torch):
    def run(lib):
        P = lib.nn.utils.prune
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        states = [P.is_pruned(net)]
        P.identity(net[2], "bias")
        states.append(P.is_pruned(net))
        states.append(list(net.state_dict()))
        P.remove(net[2], "bias")
        states.append(P.is_pruned(net))
        return states

    assert run(tocha) == run(torch)


# -- global_unstructured -----------------------------------------------------------------------

GLOBAL_CASES = {"int": {"amount": 9}, "float": {"amount": 0.35}, "none": {"amount": 0}}


@pytest.mark.parametrize("kwargs", list(GLOBAL_CASES.values()), ids=list(GLOBAL_CASES))
def test_global_unstructured_matches_torch(torch, kwargs):
    def run(lib):
        P = lib.nn.utils.prune
        a, b, c = _linear(lib), _linear(lib, weight=W2, bias=B[:2]), _conv(lib)
        pairs = [(a, "weight"), (b, "weight"), (c, "weight"), (a, "bias")]
        out = P.global_unstructured(pairs, pruning_method=P.L1Unstructured, **kwargs)
        return out, [_pruned(a), _pruned(b), _pruned(c), _pruned(a, "bias")], _names(lib, a)

    assert run(tocha) == run(torch)


def test_global_unstructured_over_pruned_tensors_and_scores(torch):
    def run(lib):
        P = lib.nn.utils.prune
        a, b = _linear(lib), _linear(lib, weight=W2, bias=B[:2])
        P.l1_unstructured(a, "weight", amount=3)
        scores = {(b, "weight"): lib.tensor(np.abs(W2)[::-1].copy() * 0.5)}
        P.global_unstructured(
            [(a, "weight"), (b, "weight")], P.L1Unstructured, importance_scores=scores, amount=7
        )
        hooks = [list(m._forward_pre_hooks.values())[0] for m in (a, b)]
        return (
            _pruned(a),
            _pruned(b),
            [len(h) for h in hooks[:1]],
            isinstance(hooks[1], P.CustomFromMask),
        )

    assert run(tocha) == run(torch)


def test_global_random_unstructured_counts():
    a, b = _linear(tocha), _conv(tocha)
    prune.global_unstructured(
        ((a, "weight"), (b, "weight")), pruning_method=prune.RandomUnstructured, amount=0.5
    )
    zeros = int((a.weight_mask == 0).sum()) + int((b.weight_mask == 0).sum())
    assert zeros == round(0.5 * (W.size + W4.size))


# -- the method objects ------------------------------------------------------------------------


def test_method_objects(torch):
    t = np.array([[0.5, -2.0, 1.5], [3.0, -0.25, 1.0]])

    def run(lib):
        P = lib.nn.utils.prune
        x = lib.tensor(t)
        l1 = P.L1Unstructured(amount=2)
        ln = P.LnStructured(amount=1, n=2, dim=1)
        scores = lib.tensor(t[::-1].copy())
        return (
            l1.prune(x).tolist(),
            l1.prune(x, importance_scores=scores).tolist(),
            l1.prune(x, default_mask=lib.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])).tolist(),
            ln.prune(x).tolist(),
            ln.compute_mask(x, default_mask=lib.ones_like(x)).tolist(),
            P.Identity().compute_mask(x, lib.ones_like(x)).tolist(),
            [l1.amount, ln.amount, ln.n, ln.dim, P.RandomStructured(0.5).dim],
            [
                getattr(P, k).PRUNING_TYPE
                for k in (
                    "Identity",
                    "RandomUnstructured",
                    "L1Unstructured",
                    "RandomStructured",
                    "LnStructured",
                    "CustomFromMask",
                )
            ],
        )

    assert run(tocha) == run(torch)


def test_pruning_container(torch):
    def run(lib):
        P = lib.nn.utils.prune
        m = _linear(lib)
        first = P.L1Unstructured.apply(m, "weight", amount=2)
        container = P.PruningContainer(first)
        second = P.L1Unstructured(1)
        second._tensor_name = "weight"
        container.add_pruning_method(second)
        mask = container.compute_mask(m.weight_orig, default_mask=m.weight_mask)
        errors = []
        with pytest.raises(TypeError, match="is not a BasePruningMethod subclass") as e:
            container.add_pruning_method(3)
        errors.append(str(e.value))
        other = P.Identity()
        other._tensor_name = "bias"
        with pytest.raises(ValueError, match="Can only add pruning methods acting on the"):
            container.add_pruning_method(other)
        return len(container), container._tensor_name, mask.tolist(), errors

    assert run(tocha) == run(torch)


class _EveryOther(prune.BasePruningMethod):
    """The documented way to write a method: a PRUNING_TYPE and a compute_mask."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def test_custom_method_subclass():
    m = _linear(tocha)
    _EveryOther.apply(m, "weight")
    assert m.weight_mask.view(-1).tolist() == [0.0, 1.0] * 6
    _EveryOther.apply(m, "weight")  # on the 6 entries left: 3 more pruned
    assert m.weight_mask.view(-1).tolist() == [0.0, 0.0, 0.0, 1.0] * 3
    hook = next(iter(m._forward_pre_hooks.values()))
    assert isinstance(hook, prune.PruningContainer) and len(hook) == 2
    with pytest.raises(TypeError, match="abstract"):
        prune.BasePruningMethod()  # type: ignore[abstract]


def test_l1_ties_are_deterministic():
    m = _linear(tocha, weight=np.ones((4, 3)))
    prune.l1_unstructured(m, "weight", amount=5)
    first = m.weight_mask.tolist()
    for _ in range(3):
        again = prune.l1_unstructured(_linear(tocha, weight=np.ones((4, 3))), "weight", amount=5)
        assert again.weight_mask.tolist() == first
    assert int((m.weight_mask == 0).sum()) == 5


def test_deepcopy_and_float32_module():
    m = prune.l1_unstructured(tocha.nn.Linear(3, 4), "weight", amount=0.5)
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(m)  # as PyTorch: the pruned weight is computed, not a leaf
    prune.remove(m, "weight")
    m = prune.l1_unstructured(m, "weight", amount=0.5)
    del m.weight  # the pre-hook computes it again on the next call
    twin = copy.deepcopy(m)
    m(tocha.ones(1, 3))
    assert prune.is_pruned(twin) and twin.weight_mask.dtype == tocha.float32
    y = twin(tocha.ones(1, 3))
    assert y.shape == (1, 4)
    np.testing.assert_array_equal(
        twin.weight.detach().numpy(), (m.weight_orig * m.weight_mask).detach().numpy()
    )


# -- errors ------------------------------------------------------------------------------------

BAD_AMOUNTS = {"negative": -1, "above-one": 1.5, "negative-float": -0.1, "two-float": 2.0}


@pytest.mark.parametrize("amount", list(BAD_AMOUNTS.values()), ids=list(BAD_AMOUNTS))
def test_amount_out_of_range(torch, amount):
    for lib in (tocha, torch):
        P = lib.nn.utils.prune
        for cls in (P.L1Unstructured, P.RandomUnstructured):
            with pytest.raises(ValueError, match=r"should either be a float in the range \[0, 1\]"):
                cls(amount)
        with pytest.raises(ValueError, match=f"amount={amount} should either"):
            P.ln_structured(_linear(lib), "weight", amount, n=2, dim=0)


def test_errors(torch):
    for lib in (tocha, torch):
        P = lib.nn.utils.prune
        for amount in ("3", None):
            with pytest.raises(TypeError, match=f"Invalid type for amount: {amount}. Must be"):
                P.l1_unstructured(_linear(lib), "weight", amount)
        m = _linear(lib)
        with pytest.raises(ValueError, match="amount=13 should be smaller than the number of"):
            P.l1_unstructured(m, "weight", 13)
        assert [n for n, _ in m.named_parameters()] == ["bias", "weight"]  # moved to the end
        assert not P.is_pruned(m)
        with pytest.raises(ValueError, match="amount=5 should be smaller than the number of "):
            P.random_structured(_linear(lib), "weight", 5, dim=0)
        with pytest.raises(ValueError, match=r"multidimensional tensors. Found tensor of sha"):
            P.random_structured(_linear(lib), "bias", 0.5, dim=0)
        with pytest.raises(IndexError, match=r"Invalid index 2 for tensor of size torch.Size"):
            P.ln_structured(_linear(lib), "weight", 1, n=2, dim=2)
        with pytest.raises(IndexError, match="tuple index out of range"):
            P.random_structured(_linear(lib), "weight", 1, dim=-3)
        with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
            P.ln_structured(_conv(lib), "weight", 1, n="fro", dim=0)
        with pytest.raises(AssertionError, match="importance_scores should have the same shape"):
            P.l1_unstructured(_linear(lib), "weight", 1, importance_scores=lib.ones(3))
        with pytest.raises(AssertionError, match="importance_scores should have the same shape"):
            P.L1Unstructured(1).prune(lib.ones(3), importance_scores=lib.ones(2))
        with pytest.raises(AssertionError, match="default_mask shape torch.Size"):
            P.custom_from_mask(_linear(lib), "weight", mask=lib.ones(3))
        with pytest.raises(AttributeError, match="object has no attribute 'nope'"):
            P.identity(_linear(lib), "nope")
        with pytest.raises(ValueError, match="Parameter 'weight' of module Linear"):
            P.remove(_linear(lib), "weight")
        with pytest.raises(TypeError, match="parameters is not an Iterable"):
            P.global_unstructured(5, P.L1Unstructured, amount=1)
        with pytest.raises(TypeError, match="importance_scores must be of type dict"):
            P.global_unstructured([(m, "bias")], P.L1Unstructured, importance_scores=[1], amount=1)
        with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
            P.global_unstructured([(m, "bias")], P.RandomStructured, amount=1, dim=0)
        with pytest.raises(ValueError, match="expected a non-empty list of Tensors"):
            P.global_unstructured(iter([(m, "bias")]), P.L1Unstructured, amount=1)
        m.register_buffer("stats", lib.ones(3))
        with pytest.raises(TypeError, match="object to parameter 'stats_orig'"):
            P.identity(m, "stats")


def test_failed_second_pruning_drops_the_hook(torch):
    """As PyTorch's: a second pruning that fails keeps the reparametrization but has taken
    the old hook off."""

    def run(lib):
        P = lib.nn.utils.prune
        m = P.l1_unstructured(_linear(lib), "weight", 3)
        with pytest.raises(ValueError, match="amount=10 should be smaller"):
            P.l1_unstructured(m, "weight", 10)
        return _names(lib, m)

    assert run(tocha) == run(torch)


# -- how programs reach it ---------------------------------------------------------------------


def test_module_paths():
    import tocha.nn.utils

    assert tocha.nn.utils.prune is prune
    assert tocha.nn.utils.prune.l1_unstructured is prune.l1_unstructured


def test_torch_program_under_tocha_run(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(
        textwrap.dedent(
            """
            import torch
            import torch.nn.utils.prune as prune

            m = torch.nn.Linear(3, 4)
            prune.l1_unstructured(m, name="weight", amount=0.5)
            assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]
            prune.remove(m, "weight")
            print(int((m.weight == 0).sum()), type(prune).__name__, prune.__name__)
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "tocha.run", str(program)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["6", "module", "tocha.nn.utils.prune"]
