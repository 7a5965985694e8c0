"""A compiled optimizer step: ``tocha.compile(opt.step)`` for SGD, Adam and AdamW.

An elementwise optimizer updates its parameters with NumPy calls outside tocha's kernels,
which capture cannot record (a program doing so is a graph break). Its maths is known, so the
compiler generates it instead: one numba kernel per optimizer kind and option set (SGD's
momentum, dampening, Nesterov, weight decay, maximize; Adam's and AdamW's weight decay and
maximize), called on each parameter of a group (flat arrays) and updating each element in
one pass: parameter, gradient and state are read and written once, where the eager step
makes a dozen passes with temporaries. (One call over a tuple of the group's arrays costs
numba a compile per group size, 15 s at 50 parameters: one call per parameter costs a
microsecond or two.) Scalars (learning rate, betas...) are
arguments, so a learning-rate scheduler does not recompile. Each step computes what the eager
step computes, operation for operation, in the parameters' dtype, so both give the same
values.

The compiled step is the optimizer's own ``step`` (its hooks, closure, grad mode and checks)
with the per-group update supplied for the duration of the call through the optimizer's
published hook, ``register_group_update``. A group the kernel does not cover is declined
and takes the optimizer's own update: state not made yet (the
first step), a missing, sparse or differently typed gradient, a parameter that is not
C-contiguous, AMSGrad, other devices, unequal ``step`` counts, or numba not loaded yet (it
loads in the background; `_codegen_numba`).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from operator import is_
from typing import Any

import numpy as np

import tocha
from tocha.library import bump_version

from . import _codegen_numba, _logging

__all__ = ["CompiledStep", "compile_step", "compilable_step"]

_KINDS = ("SGD", "Adam", "AdamW")
_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


def compilable_step(fn: Any) -> bool:
    """Whether `fn` is the bound ``step`` of an SGD, Adam or AdamW optimizer (exactly those
    classes, whose maths is known)."""
    owner = getattr(fn, "__self__", None)
    optim = sys.modules.get("tocha.optim")
    if owner is None or optim is None:
        return False
    kind = type(owner)
    return (
        kind.__name__ in _KINDS
        and kind is getattr(optim, kind.__name__)
        and getattr(fn, "__func__", None) is kind.step
    )


class CompiledStep:
    """``opt.step`` compiled: calling it runs the optimizer's step with each group updated by
    a generated kernel where one applies (see the module docstring)."""

    def __init__(self, step: Callable) -> None:
        self.step = step
        self.optimizer = step.__self__  # type: ignore[attr-defined]
        self.plans: dict[int, _Plan] = {}
        self.__wrapped__ = step
        self.__doc__ = step.__doc__
        self.__name__ = getattr(step, "__name__", "step")
        self.__qualname__ = getattr(step, "__qualname__", self.__name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self.optimizer.register_group_update(self.update):
            return self.step(*args, **kwargs)

    def update(self, optimizer: Any, group: dict) -> bool:
        """One group's update by the kernel (the optimizer's ``register_group_update``
        contract): False, nothing done, where the kernel does not apply."""
        plan = self.plans.get(id(group))
        if plan is None or not plan.valid(group, optimizer.state):
            plan = _Plan.make(optimizer, group)
            if plan is None:
                return False
            self.plans[id(group)] = plan
        return plan.run(group)


def compile_step(step: Callable) -> CompiledStep:
    """``tocha.compile(opt.step)`` for a step `compilable_step` accepts."""
    return CompiledStep(step)


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(map(is_, a, b))


class _Plan:
    """One group's compiled update: the parameters, their arrays and state it was made for,
    flat views of them, and the kernel."""

    kind: str
    params: list
    datas: list
    options: tuple
    names: tuple
    checked: tuple
    values: list
    steps: list
    flat: tuple
    state_arrays: list
    kernel: _Kernel
    scalar: Any

    @staticmethod
    def make(opt: Any, group: dict) -> _Plan | None:
        """The plan of `opt`'s `group` as it is now (None when the kernel does not cover
        it)."""
        kind = type(opt).__name__
        if kind == "AdamW":
            kind = "Adam"
        params = list(group["params"])
        if not params or not _codegen_numba.available():
            return None
        if kind == "Adam" and group["amsgrad"]:
            return None
        dtype = params[0]._data.dtype
        names: tuple = ()
        if kind == "Adam":
            names = ("exp_avg", "exp_avg_sq")
        elif group["momentum"] != 0:
            names = ("momentum_buffer",)
        checked = names + (("step",) if kind == "Adam" else ())
        for p in params:
            data = p._data
            if (
                p._device.type != "cpu"
                or type(data) is not np.ndarray
                or data.dtype != dtype
                or not data.flags.c_contiguous
            ):
                return None
            state = opt.state.get(p)
            if checked and (state is None or any(n not in state for n in checked)):
                return None  # the first step makes the state: eagerly
            for n in names:
                s = state[n]._data
                if type(s) is not np.ndarray or s.dtype != dtype or s.shape != data.shape:
                    return None
                if not s.flags.c_contiguous:
                    return None
        if dtype not in _DTYPES:
            return None
        options = _options(kind, group)
        kernel = _Kernel(kind, options)
        states = [opt.state[p] for p in params] if names else []
        plan = _Plan()
        plan.kind = kind
        plan.params = params
        plan.datas = [p._data for p in params]
        plan.options = options
        plan.names = names
        plan.checked = checked
        plan.values = [s[n] for s in states for n in plan.checked]
        plan.steps = [s["step"] for s in states] if kind == "Adam" else []
        plan.flat = tuple(d.reshape(-1) for d in plan.datas)
        plan.state_arrays = [tuple(s[n]._data.reshape(-1) for s in states) for n in names]
        plan.kernel = kernel
        plan.scalar = dtype.type
        _logging.code(kernel.source)
        return plan

    def valid(self, group: dict, state: Any) -> bool:
        params = group["params"]
        if not _same(self.params, params) or _options(self.kind, group) != self.options:
            return False
        if not _same(self.datas, [p._data for p in params]):
            return False
        if self.checked:
            names = self.checked
            if not _same(self.values, [state[p].get(n) for p in params for n in names]):
                return False
        return True

    def run(self, group: dict) -> bool:
        """The group's update; False (nothing done) when the kernel does not apply now."""
        if not _codegen_numba.ready():
            return False
        grads = []
        dtype = self.datas[0].dtype
        for p in self.params:
            g = p.grad
            if g is None or type(g) is not tocha.Tensor:
                return False
            g = g._data
            if type(g) is not np.ndarray or g.dtype != dtype or g.shape != p._data.shape:
                return False
            grads.append(g.reshape(-1))
        s = self.scalar
        lr = group["lr"]
        lr = lr.item() if isinstance(lr, tocha.Tensor) else lr
        if self.kind == "SGD":
            scalars = (s(lr), s(group["momentum"]), s(1 - group["dampening"]))
            scalars += (s(group["weight_decay"]),)
        else:
            step = self._advance()
            if step is None:
                return False
            beta1, beta2 = group["betas"]
            wd = group["weight_decay"]
            w = 1 - beta1
            scalars = (
                s(w if abs(w) < 0.5 else 1 - w),
                s(beta2),
                s(1 - beta2),
                s((1 - beta2**step) ** 0.5),
                s(group["eps"]),
                s(lr / (1 - beta1**step)),
                s(wd),
                s(1 - lr * wd),
            )
        self.kernel(self.flat, grads, self.state_arrays, scalars)
        for p in self.params:
            bump_version(p)
        return True

    def _advance(self) -> float | None:
        """Adam's step counts moved on by one (all equal, else None and nothing moved)."""
        steps = [t._data for t in self.steps]
        count = float(steps[0])
        for data in steps:
            if float(data) != count:
                return None
        for data in steps:
            data += 1
        return float(steps[0])


def _options(kind: str, group: dict) -> tuple:
    """What the kernel's code depends on (its scalars are arguments)."""
    if kind == "SGD":
        return (
            group["momentum"] != 0,
            bool(group["nesterov"]),
            group["weight_decay"] != 0,
            bool(group["maximize"]),
        )
    return (
        group["weight_decay"] != 0,
        bool(group["decoupled_weight_decay"]),
        bool(group["maximize"]),
        abs(1 - group["betas"][0]) < 0.5,  # how the first moment's lerp is written
    )


class _Kernel:
    """The numba kernel of one optimizer kind and option set (compiled on first call, per
    dtype, cached on disk), called on each parameter's arrays."""

    def __init__(self, kind: str, options: tuple) -> None:
        self.source = _source(kind, options)
        self.fn: Any = None

    def __call__(self, params: tuple, grads: list, states: list, scalars: tuple) -> None:
        fn = self.fn
        if fn is None:
            import numba

            text = f"opt|{numba.__version__}|{self.source}"
            digest = hashlib.sha256(text.encode()).hexdigest()[:32]
            fn = self.fn = _codegen_numba._load(self.source, digest).kernel
        for arrays in zip(params, grads, *states):
            fn(*arrays, *scalars)


def _source(kind: str, options: tuple) -> str:
    """The numba source of one update. Each line is one of the eager step's array
    operations, in its order, so rounding is the same."""
    if kind == "SGD":
        momentum, nesterov, decay, maximize = options
        arrays = ["p_", "g_"] + (["b_"] if momentum else [])
        head = f"def kernel({', '.join(arrays)}, lr, momentum, keep, weight_decay):"
        body = _grad_lines(decay, maximize)
        if momentum:
            body += ["b = b_[k] * momentum + d * keep", "b_[k] = b"]
            body += ["u = b * momentum + d" if nesterov else "u = b"]
        else:
            body += ["u = d"]
        body += ["p_[k] = p_[k] - u * lr"]
    else:
        decay, decoupled, maximize, small = options
        head = (
            "def kernel(p_, g_, m_, v_, w, beta2, one_minus_beta2, bc2, eps, step_size, "
            "weight_decay, shrink):"
        )
        body = ["p_[k] = p_[k] * shrink"] if decay and decoupled else []
        body += _grad_lines(decay and not decoupled, maximize)
        body += [
            "m = m_[k]",
            "m = m + (d - m) * w" if small else "m = d - (d - m) * w",
            "m_[k] = m",
            "v = v_[k] * beta2 + d * one_minus_beta2 * d",
            "v_[k] = v",
            "p_[k] = p_[k] - m / (math.sqrt(v) / bc2 + eps) * step_size",
        ]
    lines = [
        "# Generated by tocha.compiler: an optimizer's step on one parameter's arrays.",
        "import math",
        "",
        "import numba",
        "",
        "",
        '@numba.njit(cache=True, nogil=True, error_model="numpy")',
        head,
        "    for k in range(p_.shape[0]):",
        *(f"        {line}" for line in body),
    ]
    return "\n".join(lines) + "\n"


def _grad_lines(decay: bool, maximize: bool) -> list[str]:
    if decay:
        return [f"d = p_[k] * weight_decay {'-' if maximize else '+'} g_[k]"]
    return ["d = -g_[k]" if maximize else "d = g_[k]"]
