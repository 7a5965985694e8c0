"""Higher-level derivatives of functions, as ``torch.autograd.functional``: `vjp`, `jvp`,
`jacobian`, `hessian`, `vhp`, `hvp`.

`vjp`, `vhp` and reverse-mode `jacobian` run backward passes (`grad`). `jvp` and
forward-mode `jacobian` carry tangents forward (`forward_ad`), and `hvp` is forward over
reverse: the tangent of the gradient. Inputs and outputs are a tensor or a tuple of tensors;
a Jacobian block for an output of shape ``O`` and an input of shape ``I`` has shape
``O + I``.

A Jacobian is built one row (reverse mode: one output element) or one column (forward
mode: one input element) at a time; with ``vectorize=True`` all at once by
``tocha.func.vmap`` when tocha-func is installed. tocha-autograd does not depend on
tocha-func: without it ``vectorize=True`` computes the same values one at a time.
"""

from __future__ import annotations

import tocha
from tocha import Tensor

from ._api import grad
from .forward_ad import dual_level, make_dual, unpack_dual

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_OUTPUTS = "outputs of the user-provided function"
_INPUT_IS = "input to the user-provided function is"
_STRATEGIES = ("forward-mode", "reverse-mode")


# -- arguments -------------------------------------------------------------------------------
def _as_tuple(x, what: str, fn_name: str) -> tuple[tuple, bool]:
    """`x` (a tensor or a tuple of tensors) as a tuple, and whether it was one."""
    if isinstance(x, Tensor):
        return (x,), False
    if not isinstance(x, tuple):
        raise TypeError(
            f"The {what} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
            f"the given {what} has type {type(x)}."
        )
    for i, t in enumerate(x):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"The {what} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but the value at index {i} has type {type(t)}."
            )
    return x, True


def _untuple(values, was_tuple: bool):
    return tuple(values) if was_tuple else values[0]


def _prepare(inputs: tuple, create_graph: bool, needs_grad: bool = True) -> tuple:
    """The tensors to differentiate at: views of the inputs that require grad when
    `create_graph` (so that results stay connected to them), else detached copies (that
    require grad when `needs_grad`)."""
    prepared = []
    for t in inputs:
        if not (t.is_floating_point() or t.is_complex()):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if create_graph and t.requires_grad:
            prepared.append(t.view_as(t))
        else:
            prepared.append(t.detach().requires_grad_(needs_grad))
    return tuple(prepared)


def _vector(v, like: tuple, like_is_tuple: bool, fn_name: str, condition: str) -> tuple:
    """`v` checked against `like` (the tensors it multiplies): as many, of the same shapes.
    None only when `like` is one tensor of one element (`condition` says so in the error)."""
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(
                f"The vector v can only be None if the {condition} a single Tensor with a "
                "single element."
            )
        return (tocha.ones_like(like[0]),)
    v, _ = _as_tuple(v, "v", fn_name)
    if len(v) != len(like):
        if like_is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, like)):
        if a.shape != b.shape:
            where = f"Entry {i} in v" if like_is_tuple else "v"
            raise RuntimeError(f"{where} has invalid size: should be {b.shape} but got {a.shape}.")
    return v


def _result(t: Tensor, create_graph: bool) -> Tensor:
    return t if create_graph else t.detach()


# -- strict mode -----------------------------------------------------------------------------
def _check_outputs_require_grad(outputs: tuple, strict: bool) -> None:
    if not strict:
        return
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode."
            )


def _independent(i: int) -> RuntimeError:
    return RuntimeError(
        f"The output of the user-provided function is independent of input {i}. This is not "
        "allowed in strict mode."
    )


def _check_depends(outputs: tuple, inputs: tuple, per_output: bool) -> None:
    """Strict mode: RuntimeError unless every output (all together, or each when
    `per_output`) reaches every input."""
    groups = [(i, (o,)) for i, o in enumerate(outputs)] if per_output else [(None, outputs)]
    for i, group in groups:
        grads = grad(
            group,
            inputs,
            [tocha.zeros_like(o) for o in group],
            retain_graph=True,
            allow_unused=True,
        )
        for j, g in enumerate(grads):
            if g is None:
                if i is None:
                    raise _independent(j)
                raise RuntimeError(
                    f"Output {i} of the user-provided function is independent of input {j}. "
                    "This is not allowed in strict mode."
                )


def _check_hessian_grads(grads: tuple, dependent: list, strict: bool) -> None:
    """Strict mode: the first derivatives `grads` must exist (not None) and depend on the
    inputs (`dependent`, one flag each)."""
    if not strict:
        return
    for i, (g, depends) in enumerate(zip(grads, dependent)):
        if g is None:
            raise _independent(i)
        if not depends:
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)."
            )


def _reverse(outputs: tuple, inputs: tuple, cotangents: tuple, create_graph: bool) -> tuple:
    """The vector-Jacobian product of `outputs` weighted by `cotangents`, one gradient per
    input: zeros where an input does not reach the outputs that require grad."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return tuple(tocha.zeros_like(t) for t in inputs)
    grads = grad(
        [o for o, _ in pairs],
        inputs,
        [c for _, c in pairs],
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )
    return tuple(g if g is not None else tocha.zeros_like(t) for g, t in zip(grads, inputs))


# -- rows of a Jacobian ----------------------------------------------------------------------
def _map_rows(fn, basis: tuple, vectorize: bool) -> tuple:
    """``fn`` applied to each row of `basis` (tensors sharing a dim 0 of size n): the tuple
    of its results, each stacked along a new dim 0. One batched call by ``tocha.func.vmap``
    when `vectorize` and tocha-func is installed, else one call per row."""
    if vectorize:
        try:
            from tocha.func import vmap
        except ImportError:
            pass
        else:
            return vmap(fn)(*basis)
    rows = [fn(*(b[k] for b in basis)) for k in range(basis[0].shape[0])]
    return tuple(tocha.stack(column) for column in zip(*rows))


def _offsets(tensors: tuple) -> list[tuple[int, int]]:
    """``(start, numel)`` of each tensor in the flat concatenation of all of them."""
    spans, start = [], 0
    for t in tensors:
        spans.append((start, t.numel()))
        start += t.numel()
    return spans


def _identity_basis(tensors: tuple) -> tuple:
    """For the flat concatenation of `tensors` (N elements), one ``(N, *t.shape)`` tensor
    each: row r is one-hot at flat position r when r falls in that tensor."""
    total = sum(t.numel() for t in tensors)
    basis = []
    for t, (start, n) in zip(tensors, _offsets(tensors)):
        eye = tocha.eye(total, dtype=t.dtype, device=t.device)
        basis.append(eye[:, start : start + n].reshape((total, *t.shape)))
    return tuple(basis)


# -- the API ---------------------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at `inputs` (v of the
    outputs' shapes; None for a single one-element output)."""
    with tocha.enable_grad():
        inputs, in_tuple = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph)
        outputs, out_tuple = _as_tuple(func(*inputs), _OUTPUTS, "vjp")
        _check_outputs_require_grad(outputs, strict)
        v = _vector(v, outputs, out_tuple, "vjp", "user-provided function returns")
        if strict:
            _check_depends(outputs, inputs, per_output=False)
        result = _reverse(outputs, inputs, v, create_graph)
    outs = [_result(o, create_graph) for o in outputs]
    return _untuple(outs, out_tuple), _untuple([_result(g, create_graph) for g in result], in_tuple)


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``: the Jacobian-vector product at `inputs` in the direction `v`
    (of the inputs' shapes; None for a single one-element input), by forward-mode AD."""
    with tocha.enable_grad():
        inputs, in_tuple = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, needs_grad=create_graph or strict)
        v = _vector(v, inputs, in_tuple, "jvp", _INPUT_IS)
        with dual_level():
            duals = tuple(make_dual(x, t) for x, t in zip(inputs, v))
            outputs, out_tuple = _as_tuple(func(*duals), _OUTPUTS, "jvp")
            _check_outputs_require_grad(outputs, strict)
            if strict:
                _check_depends(outputs, inputs, per_output=False)
            values, tangents = [], []
            for out in outputs:
                value, tangent = unpack_dual(out)
                values.append(_result(value, create_graph))
                tangent = tocha.zeros_like(value) if tangent is None else tangent
                tangents.append(_result(tangent, create_graph))
    return _untuple(values, out_tuple), _untuple(tangents, out_tuple)


def _scalar_output(func, args: tuple, fn_name: str) -> Tensor:
    out, out_tuple = _as_tuple(func(*args), _OUTPUTS, fn_name)
    if out_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if out[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )
    return out[0]


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a function returning one element, H its Hessian at
    `inputs`: forward over reverse, the tangent in the direction `v` of the gradient."""
    with tocha.enable_grad():
        inputs, in_tuple = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prepare(inputs, create_graph)
        v = _vector(v, inputs, in_tuple, "hvp", _INPUT_IS)
        with dual_level():
            duals = tuple(make_dual(x, t) for x, t in zip(inputs, v))
            out = _scalar_output(func, duals, "hvp")
            _check_outputs_require_grad((out,), strict)
            if out.requires_grad:
                grads = grad(out, duals, create_graph=create_graph, allow_unused=True)
            else:
                grads = (None,) * len(duals)
            tangents = [None if g is None else unpack_dual(g).tangent for g in grads]
            _check_hessian_grads(grads, [t is not None for t in tangents], strict)
            result = [tocha.zeros_like(x) if t is None else t for t, x in zip(tangents, inputs)]
            value = unpack_dual(out).primal
    return _result(value, create_graph), _untuple(
        [_result(h, create_graph) for h in result], in_tuple
    )


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a function returning one element: reverse over reverse
    (a backward pass through the gradient)."""
    with tocha.enable_grad():
        inputs, in_tuple = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prepare(inputs, create_graph)
        v = _vector(v, inputs, in_tuple, "vhp", _INPUT_IS)
        out = _scalar_output(func, inputs, "vhp")
        _check_outputs_require_grad((out,), strict)
        if out.requires_grad:
            grads = grad(out, inputs, create_graph=True, allow_unused=True)
        else:
            grads = (None,) * len(inputs)
        _check_hessian_grads(grads, [g is not None and g.requires_grad for g in grads], strict)
        present = tuple(g if g is not None else tocha.zeros_like(x) for g, x in zip(grads, inputs))
        result = _reverse(present, inputs, v, create_graph)
    return _result(out, create_graph), _untuple(
        [_result(h, create_graph) for h in result], in_tuple
    )


def _jacobian_reverse(func, inputs, create_graph: bool, strict: bool, vectorize: bool):
    """One row per output element, by backward passes."""
    with tocha.enable_grad():
        inputs, in_tuple = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph)
        outputs, out_tuple = _as_tuple(func(*inputs), _OUTPUTS, "jacobian")
        _check_outputs_require_grad(outputs, strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or "
                "`vectorize=False`."
            )
        if strict:
            _check_depends(outputs, inputs, per_output=True)
        blocks = []
        for out in outputs:
            if out.requires_grad and out.numel():

                def row(cotangent, out=out):
                    return _reverse((out,), inputs, (cotangent,), create_graph)

                rows = _map_rows(row, _identity_basis((out,)), vectorize)
                per_input = [
                    _result(r.reshape(out.shape + x.shape), create_graph)
                    for r, x in zip(rows, inputs)
                ]
            else:
                per_input = [
                    tocha.zeros(out.shape + x.shape, dtype=x.dtype, device=x.device) for x in inputs
                ]
            blocks.append(_untuple(per_input, in_tuple))
    return _untuple(blocks, out_tuple)


def _jacobian_forward(func, inputs):
    """One column per input element, by forward-mode AD. As in PyTorch, the blocks of a
    tuple of inputs come in lists."""
    inputs, in_tuple = _as_tuple(inputs, "inputs", "jacobian")
    inputs = tuple(x.detach() for x in inputs)
    out_tuple = False

    def column(*tangents):
        nonlocal out_tuple
        with dual_level():
            duals = tuple(make_dual(x, t) for x, t in zip(inputs, tangents))
            outputs, out_tuple = _as_tuple(func(*duals), _OUTPUTS, "jacobian")
            found = [unpack_dual(o) for o in outputs]
            return tuple(
                tocha.zeros_like(value) if tangent is None else tangent for value, tangent in found
            )

    columns = _map_rows(column, _identity_basis(inputs), vectorize=True)
    blocks = []
    for cols in columns:
        out_shape = cols.shape[1:]
        per_input = [
            cols[start : start + n].movedim(0, -1).reshape(out_shape + x.shape)
            for x, (start, n) in zip(inputs, _offsets(inputs))
        ]
        blocks.append(per_input if in_tuple else per_input[0])
    if in_tuple:
        return blocks if out_tuple else blocks[0]
    return tuple(blocks) if out_tuple else blocks[0]


def jacobian(
    func,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
):
    """The Jacobian of `func` at `inputs`: for output o and input i a tensor of shape
    ``o.shape + i.shape`` (nested tuples when `func` or `inputs` are tuples).

    ``strategy="reverse-mode"`` builds it one output element at a time by backward passes,
    ``"forward-mode"`` (which needs ``vectorize=True``) one input element at a time by
    forward-mode AD; ``vectorize=True`` builds all of them in one batched call (see the
    module docstring)."""
    if strategy not in _STRATEGIES:
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.'
            )
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `strict=False` or `strategy="reverse-mode"`.'
            )
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`."
            )
        return _jacobian_forward(func, inputs)
    return _jacobian_reverse(func, inputs, create_graph, strict, vectorize)


def hessian(
    func,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
):
    """The Hessian of `func` (returning one element) at `inputs`: the Jacobian, by
    `outer_jacobian_strategy`, of its gradient (reverse mode). ``"forward-mode"`` (forward
    over reverse) needs ``vectorize=True``. For inputs i and j a block of shape
    ``i.shape + j.shape``."""
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    inputs, in_tuple = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*args):
        if outer_jacobian_strategy == "forward-mode":
            args = tuple(a.requires_grad_() for a in args)
        with tocha.enable_grad():
            out = _scalar_output(func, args, "hessian").reshape(())
            _check_outputs_require_grad((out,), strict)
            if out.requires_grad:
                grads = grad(out, args, create_graph=True, allow_unused=True)
            else:
                grads = (None,) * len(args)
        dependent = [
            g is not None and (g.requires_grad or unpack_dual(g).tangent is not None) for g in grads
        ]
        _check_hessian_grads(grads, dependent, strict)
        present = [g if g is not None else tocha.zeros_like(a) for g, a in zip(grads, args)]
        return _untuple(present, in_tuple)

    return jacobian(
        gradient,
        _untuple(inputs, in_tuple),
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
