"""Finite-difference checks of gradients (`gradcheck`) and of second derivatives
(`gradgradcheck`), with PyTorch's arguments and tolerances.

Complex inputs and outputs are checked as PyTorch does, as functions of their real and
imaginary parts: a complex input element is two real variables (perturbed by ``eps`` and
``eps * 1j``), a complex output element two real outputs. Reverse mode gives the row of
``Re w`` for the gradient 1 of w and that of ``Im w`` for the gradient 1j (PyTorch's
convention: the gradient of z is ``dL/dx + i dL/dy``); forward mode gives the columns for
the tangents 1 and 1j."""

from __future__ import annotations

import numpy as np

import tocha
from tocha import Tensor

from ._api import grad as autograd_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """A gradient computed by autograd differs from its finite-difference estimate."""


def _as_tuple(x) -> tuple:
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _differentiable_outputs(outputs) -> list:
    return [o for o in _as_tuple(outputs) if isinstance(o, Tensor) and o.requires_grad]


def _float_outputs(outputs) -> list:
    return [
        o
        for o in _as_tuple(outputs)
        if isinstance(o, Tensor) and (o.is_floating_point() or o.is_complex())
    ]


def _zeros(t: Tensor) -> Tensor:
    """Contiguous zeros like `t` (whose strides may not allow a flat view)."""
    return tocha.zeros(t.shape, dtype=t.dtype, device=t.device)


def _parts(t: Tensor) -> tuple:
    """The directions of one element of `t`: 1, and 1j for a complex tensor."""
    return (1, 1j) if t.is_complex() else (1,)


def _of_kind(a: np.ndarray, t: Tensor) -> np.ndarray:
    """`a` as complex where `t` is complex, its real part where t is real."""
    return a.astype(np.complex128) if t.is_complex() else np.real(a)


def _real_view(a: np.ndarray) -> np.ndarray:
    """A flat float64 array: the elements of `a`, each complex one as its real and imaginary
    parts in turn."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return np.stack([a.real, a.imag], -1).reshape(-1).astype(np.float64)
    return a.reshape(-1).astype(np.float64)


def _numerical_jacobians(func, inputs, targets, eps: float) -> list:
    """jac[o][i]: (numel of output o) x (numel of input i), by central differences."""
    with tocha.no_grad():
        sizes = [o.numel() * len(_parts(o)) for o in _float_outputs(func(*inputs))]
    n_out = len(sizes)
    jacobians = [[None] * len(targets) for _ in range(n_out)]
    for i, t in enumerate(targets):
        data = t._data
        columns = [[] for _ in range(n_out)]
        for index in np.ndindex(data.shape):
            original = data[index].copy()
            for part in _parts(t):
                data[index] = original + eps * part
                with tocha.no_grad():
                    plus = [_real_view(o.numpy(force=True)) for o in _float_outputs(func(*inputs))]
                data[index] = original - eps * part
                with tocha.no_grad():
                    minus = [_real_view(o.numpy(force=True)) for o in _float_outputs(func(*inputs))]
                data[index] = original
                for o in range(n_out):
                    columns[o].append((plus[o] - minus[o]) / (2 * eps))
        for o in range(n_out):
            jacobians[o][i] = (
                np.stack(columns[o], axis=1) if columns[o] else np.zeros((sizes[o], 0))
            )
    return jacobians


def _analytical_jacobians(outputs, targets) -> list:
    jacobians = []
    for out in outputs:
        rows = [[] for _ in targets]
        for k in range(out.numel()):
            for part in _parts(out):
                one_hot = _zeros(out)
                one_hot.view(-1)[k] = part
                grads = autograd_grad(out, targets, one_hot, retain_graph=True, allow_unused=True)
                for i, (t, g) in enumerate(zip(targets, grads)):
                    if g is not None and g.shape != t.shape:
                        raise GradcheckError(
                            f"Gradient for input {i} has shape {tuple(g.shape)}, expected "
                            f"{tuple(t.shape)}"
                        )
                    width = t.numel() * len(_parts(t))
                    if g is None:
                        rows[i].append(np.zeros(width))
                    else:
                        rows[i].append(_real_view(_of_kind(g.numpy(force=True), t)))
        jacobians.append(
            [
                np.stack(r) if r else np.zeros((0, t.numel() * len(_parts(t))))
                for r, t in zip(rows, targets)
            ]
        )
    return jacobians


def _forward_jacobians(func, inputs, targets, n_outputs: int) -> list:
    """jac[o][i] by forward mode: one dual pass per element of each target (tangent: that
    element's unit vector), the outputs' tangents as columns."""
    from . import forward_ad

    jacobians = [[None] * len(targets) for _ in range(n_outputs)]
    for i, t in enumerate(targets):
        columns = [[] for _ in range(n_outputs)]
        for k in range(t.numel()):
            for part in _parts(t):
                unit = _zeros(t)
                unit.view(-1)[k] = part
                with forward_ad.dual_level():
                    dual = forward_ad.make_dual(t.detach().requires_grad_(t.requires_grad), unit)
                    args = [dual if a is t else a for a in inputs]
                    outputs = _float_outputs(func(*args))
                    for o, out in enumerate(outputs):
                        tangent = forward_ad.unpack_dual(out).tangent
                        columns[o].append(
                            np.zeros(out.numel() * len(_parts(out)))
                            if tangent is None
                            else _real_view(_of_kind(tangent.numpy(force=True), out))
                        )
        for o in range(n_outputs):
            jacobians[o][i] = np.stack(columns[o], axis=1) if columns[o] else None
    return jacobians


def _compare(numerical, analytical_of, rtol, atol, raise_exception, what) -> bool:
    for o, num_row in enumerate(numerical):
        for i, num in enumerate(num_row):
            ana = analytical_of(o, i, num)
            if ana.shape != num.shape or not np.allclose(ana, num, rtol=rtol, atol=atol):
                message = (
                    f"{what} mismatch for output {o} with respect to input {i},\n"
                    f"numerical:{num}\nanalytical:{ana}\n"
                )
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the gradients autograd computes for `func` at `inputs` (tensors with
    ``requires_grad=True``, ideally float64) against central finite differences:
    ``|analytical - numerical| <= atol + rtol * |numerical|`` elementwise. Reverse mode is
    checked with `check_backward_ad`, forward mode (`tocha.autograd.forward_ad`) with
    `check_forward_ad`."""
    inputs = _as_tuple(inputs)
    targets = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    if not targets:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of the them have requires_grad=True."
        )
    outputs = _float_outputs(func(*inputs))
    differentiable = [o for o in outputs if o.requires_grad]
    numerical = _numerical_jacobians(func, inputs, targets, eps)
    if check_backward_ad:
        analytical = _analytical_jacobians(differentiable, targets)
        diff_index = [k for k, o in enumerate(outputs) if o.requires_grad]

        def backward_column(o, i, num):
            if o in diff_index:
                return analytical[diff_index.index(o)][i]
            return np.zeros_like(num)

        if not _compare(numerical, backward_column, rtol, atol, raise_exception, "Jacobian"):
            return False
    if check_forward_ad:
        forward = _forward_jacobians(func, inputs, targets, len(numerical))

        def forward_column(o, i, num):
            column = forward[o][i]
            return np.zeros_like(num) if column is None else column

        if not _compare(
            numerical,
            forward_column,
            rtol,
            atol,
            raise_exception,
            "Jacobian computed with forward mode",
        ):
            return False
    return True


def _uniform_like(o: Tensor) -> Tensor:
    """Uniform in [-1, 1), in o's shape and dtype (both parts of a complex one)."""
    if o.is_complex():
        real = tocha.empty(o.shape, dtype=o.real.dtype, device=o.device)
        return tocha.complex(real.uniform_(-1, 1), real.clone().uniform_(-1, 1))
    return tocha.empty(o.shape, dtype=o.dtype, device=o.device).uniform_(-1, 1)


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: `gradcheck` of the map (inputs, grad_outputs) ->
    gradients of `func`, computed with ``create_graph=True``: by reverse mode
    (`check_rev_over_rev`) and by forward mode through the backward (`check_fwd_over_rev`)."""
    inputs = _as_tuple(inputs)
    if grad_outputs is None:  # uniform in [-1, 1), from the default generator, as PyTorch's
        grad_outputs = tuple(
            _uniform_like(o).requires_grad_() for o in _differentiable_outputs(func(*inputs))
        )
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_derivatives(*args):
        with tocha.enable_grad():
            outputs = _differentiable_outputs(func(*args[:n]))
            chosen = [a for a in args[:n] if isinstance(a, Tensor) and a.requires_grad]
            grads = autograd_grad(outputs, chosen, args[n:], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivatives,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
    )
