"""``torch.library.opcheck``: checks that an operator is registered consistently, on
sample arguments: its schema declares every argument it writes to (test_schema), it has an
autograd kernel where its outputs require grad (test_autograd_registration), its fake
kernel gives the real kernel's shapes and dtypes (test_faketensor), and it differentiates
(test_aot_dispatch_*: tocha runs every op eagerly, so this runs its backward)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._custom_ops import CustomOpDef
from ._fake_impl import FakeImplCtx, run_fake_with
from ._op_registry import OpOverload, OpOverloadPacket

__all__ = ["MetadataMismatchError", "OpCheckError", "opcheck"]

DEFAULT_UTILS = (
    "test_schema",
    "test_autograd_registration",
    "test_faketensor",
    "test_aot_dispatch_dynamic",
)
ALL_UTILS = (
    "test_schema",
    "test_autograd_registration",
    "test_faketensor",
    "test_aot_dispatch_static",
    "test_aot_dispatch_dynamic",
)


class OpCheckError(Exception):
    """An opcheck test failed."""


class MetadataMismatchError(Exception):
    """The fake kernel's output differs from the real kernel's in shape or dtype."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __repr__(self) -> str:
        return f"MetadataMismatchError(reason={self.reason!r})"


class UnsupportedOperatorException(RuntimeError):
    """The operator has no fake (meta) kernel."""

    def __init__(self, func) -> None:
        super().__init__(func)
        self.func = func

    def __repr__(self) -> str:
        return f"UnsupportedOperatorException(func={self.func!r})"


def opcheck(
    op: OpOverload | OpOverloadPacket | CustomOpDef,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    *,
    test_utils: str | Sequence[str] = DEFAULT_UTILS,
    raise_exception: bool = True,
    atol=None,
    rtol=None,
) -> dict[str, str]:
    """Run the checks `test_utils` names on ``op(*args, **kwargs)``. Returns a dict from
    each test's name to ``"SUCCESS"`` or, with `raise_exception` False, the exception it
    failed with; with it True, the first failure raises OpCheckError."""
    if isinstance(op, CustomOpDef):
        op = op._opoverload
    if isinstance(op, OpOverloadPacket):
        op = op.default
    if not isinstance(op, OpOverload):
        raise ValueError(
            "opcheck(op, ...): op must be instance of torch._ops.OpOverload, e.g. "
            f"torch.ops.aten.sin.default, got {type(op)}"
        )
    utils = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    if not set(utils) <= set(ALL_UTILS):
        raise ValueError(
            f"opcheck(op, ..., test_utils={utils}), expected test_utils to be subset of "
            f"{ALL_UTILS} but it was not"
        )
    kwargs = dict(kwargs or {})
    tests = {
        "test_schema": _test_schema,
        "test_autograd_registration": _test_autograd_registration,
        "test_faketensor": _test_faketensor,
        "test_aot_dispatch_static": _test_aot_dispatch,
        "test_aot_dispatch_dynamic": _test_aot_dispatch,
    }
    results: dict[str, Any] = {}
    for name in utils:
        try:
            tests[name](op, args, kwargs)
        except Exception as exc:
            if raise_exception:
                raise OpCheckError(
                    f"opcheck(op, ...): {name} failed with {exc} (scroll up for stack trace)"
                ) from exc
            results[name] = exc
        else:
            results[name] = "SUCCESS"
    return results


def _map(value, fn):
    import tocha

    if isinstance(value, tocha.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return value


def _clone(args, kwargs):
    def copy(t):
        c = t.detach().clone()
        return c.requires_grad_() if t.requires_grad and c.is_floating_point() else c

    return _map(args, copy), _map(kwargs, copy)


def _flat_tensors(value) -> list:
    import tocha

    if isinstance(value, tocha.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flat_tensors(v)]
    return []


def _test_schema(op: OpOverload, args, kwargs) -> None:
    import tocha

    args, kwargs = _clone(args, kwargs)
    schema = op._schema
    positional = [a for a in schema.arguments if not a.kwarg_only]
    named = {a.name: value for a, value in zip(positional, args, strict=False)}
    named.update(kwargs)
    before = {
        name: [t.detach().clone() for t in _flat_tensors(value)] for name, value in named.items()
    }
    with tocha.no_grad():
        op(*args, **kwargs)
    for arg in schema.arguments:
        if arg.name not in named or arg.is_write:
            continue
        after = _flat_tensors(named[arg.name])
        for old, new in zip(before[arg.name], after, strict=True):
            if not _same_with_nans(old, new):
                raise RuntimeError(f"Argument {arg.name} is not defined as mutable but was mutated")


def _same_with_nans(old, new) -> bool:
    new = new.detach()
    both_nan = old.isnan() & new.isnan() if old.is_floating_point() else old != old
    return bool(((old == new) | both_nan).all())


def _test_autograd_registration(op: OpOverload, args, kwargs) -> None:
    entry = op._op
    if entry.custom is not None:
        return
    if not any(t.requires_grad for t in _flat_tensors((args, kwargs))):
        return
    kernels = entry.kernels
    if "Autograd" in kernels or "CompositeImplicitAutograd" in kernels:
        return
    raise AssertionError(
        f"{entry.qualname}: at least one output of this operator has requires_grad=True but "
        "the operator does not have an autograd kernel defined at an autograd key (e.g. "
        "DispatchKey::Autograd). This could mean that you have incorrectly registered an "
        "autograd kernel to a non-Autograd DispatchKey, which may lead to silently incorrect "
        "results. If your operator consists of regular PyTorch operations, consider not "
        "using an operator at all or registering your operator as CompositeImplicitAutograd. "
        "If you have an autograd.Function registered to a backend (CPU/CUDA/XPU) key, the "
        "correct location for it is the Autograd key."
    )


def _no_fake(op: OpOverload) -> Exception:
    entry = op._op
    if entry.custom is not None:
        return entry.custom._no_fake()
    return UnsupportedOperatorException(op)


def _fake_kernel(op: OpOverload):
    entry = op._op
    if entry.fake is not None:
        return entry.fake
    if entry.custom is not None and not entry.schema.returns:
        return _returns_nothing
    kernels = entry.kernels
    for key in ("CompositeImplicitAutograd", "CompositeExplicitAutograd"):
        if key in kernels and entry.custom is None:
            return kernels[key]
    return None


def _returns_nothing(*args, **kwargs) -> None:
    """The fake of a custom op that returns nothing (it only writes to its arguments)."""


def _test_faketensor(op: OpOverload, args, kwargs) -> None:
    import tocha

    fake = _fake_kernel(op)
    if fake is None:
        raise _no_fake(op)
    args, kwargs = _clone(args, kwargs)
    with tocha.no_grad():
        real = op(*args, **kwargs)
    values, kw = op._schema.bind(*_map((args, kwargs), lambda t: t.detach().to("meta")))
    ctx = FakeImplCtx()
    with tocha.no_grad():
        faked = run_fake_with(fake, ctx, values, kw)
    real_tensors, fake_tensors = _flat_tensors(real), _flat_tensors(faked)
    where = f"When comparing the output of {op} on FakeTensor and concrete Tensors, found"
    if len(real_tensors) != len(fake_tensors):
        raise MetadataMismatchError(
            f"{where} mismatched number of outputs: {len(real_tensors)} and {len(fake_tensors)}"
        )
    for r, f in zip(real_tensors, fake_tensors, strict=True):
        rshape, fshape = tuple(r.shape), tuple(f.shape)
        if rshape != fshape and not (ctx.dynamic and len(rshape) == len(fshape)):
            raise MetadataMismatchError(
                f"{where} mismatched tensor metadata: Shapes torch.Size({list(rshape)}) and "
                f"torch.Size({list(fshape)}) are not equal!"
            )
        if r.dtype != f.dtype:
            raise MetadataMismatchError(
                f"{where} mismatched tensor metadata: Dtypes {_name(r.dtype)} and "
                f"{_name(f.dtype)} are not equal!"
            )


def _name(dtype) -> str:
    return "torch." + str(dtype).rsplit(".", 1)[-1]


def _test_aot_dispatch(op: OpOverload, args, kwargs) -> None:

    custom = op._op.custom is not None
    if not custom and _fake_kernel(op) is None:
        raise _no_fake(op)
    args, kwargs = _clone(args, kwargs)
    inputs = [t for t in _flat_tensors((args, kwargs)) if t.requires_grad]
    outputs = [t for t in _flat_tensors(op(*args, **kwargs)) if t.requires_grad]
    if inputs and outputs:
        _check_backward(op, inputs, outputs)
    if custom and _fake_kernel(op) is None:
        raise _no_fake(op)


def _check_backward(op: OpOverload, inputs, outputs) -> None:
    import tocha

    entry = op._op
    kernels = entry.kernels
    composite = "CompositeImplicitAutograd" in kernels and not any(
        k not in ("Autograd", "CompositeImplicitAutograd", "Meta") for k in kernels
    )
    if entry.custom is None and "Autograd" not in kernels and not composite:
        raise AssertionError(
            "Gradients of the operator are different in eager-mode PyTorch vs AOTDispatcher. "
            "This means the operator will have incorrect gradients underneath torch.compile. "
            "This could be because the operator's backward is incorrectly registered or not "
            "traceable."
        )
    tocha.autograd.grad(outputs, inputs, [tocha.ones_like(t) for t in outputs], allow_unused=True)
