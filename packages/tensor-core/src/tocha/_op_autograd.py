"""The autograd side of operators defined through ``torch.library``: the Function through
which a custom op records its registered backward (and its vmap rule), and the Autograd
kernel that `register_autograd` gives an operator defined by a `Library`."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from ._op_registry import backend_kernel, device_type_of

__all__ = ["make_function", "needs_grad", "register_library_autograd"]


def needs_grad(values) -> bool:
    """Whether grad mode is on and a tensor among `values` (or in a list) requires grad."""
    import tocha

    if not tocha.is_grad_enabled():
        return False
    for value in values:
        if isinstance(value, tocha.Tensor) and value.requires_grad:
            return True
        if isinstance(value, (list, tuple)) and any(
            isinstance(v, tocha.Tensor) and v.requires_grad for v in value
        ):
            return True
    return False


def _takes_keyword_only_inputs(setup_context: Callable) -> bool:
    try:
        return "keyword_only_inputs" in inspect.signature(setup_context).parameters
    except (TypeError, ValueError):
        return False


def _flatten(values: list) -> tuple[list, tuple]:
    """The op's arguments as the Function's inputs: a list of tensors contributes each
    tensor; `spec` (each argument's list length, None for one value) rebuilds them."""
    import tocha

    flat, spec = [], []
    for value in values:
        if isinstance(value, (list, tuple)) and any(isinstance(v, tocha.Tensor) for v in value):
            flat.extend(value)
            spec.append(len(value))
        else:
            flat.append(value)
            spec.append(None)
    return flat, tuple(spec)


def _unflatten(flat, spec: tuple) -> list:
    values, i = [], 0
    for n in spec:
        if n is None:
            values.append(flat[i])
            i += 1
        else:
            values.append(list(flat[i : i + n]))
            i += n
    return values


def make_function(custom):
    """The autograd Function through which a custom op runs when it records a backward or
    has a vmap rule: its inputs are the op's positional then keyword-only values (lists of
    tensors flattened), then the spec that rebuilds them."""
    import tocha

    schema = custom._op.schema
    n_pos = sum(not a.kwarg_only for a in schema.arguments)
    kw_names = [a.name for a in schema.arguments if a.kwarg_only]
    list_return = len(schema.returns) == 1 and schema.returns[0].type.is_list
    label = f"{custom._namespace}.{custom._name}.default"

    def split(args):
        values = _unflatten(args[:-1], args[-1])
        return values[:n_pos], dict(zip(kw_names, values[n_pos:], strict=True))

    class CustomOpFunction:
        @staticmethod
        def forward(*args):
            values, kw = split(args)
            output = custom._run_backend(device_type_of(values, kw), values, kw)
            return tuple(output) if list_return else output

        @staticmethod
        def setup_context(ctx, inputs, output):
            values, kw = split(inputs)
            if custom._setup_context_fn is not None:
                result = list(output) if list_return else output
                if _takes_keyword_only_inputs(custom._setup_context_fn):
                    custom._setup_context_fn(
                        ctx=ctx, inputs=tuple(values), keyword_only_inputs=kw, output=result
                    )
                else:
                    custom._setup_context_fn(ctx=ctx, inputs=tuple(values), output=result)
            ctx._custom_op_spec = inputs[-1]

        @staticmethod
        def backward(ctx, *grads):
            if custom._backward_fn is None:
                raise RuntimeError(
                    f"Trying to backward through {label} but no autograd formula was "
                    "registered. Please use register_autograd to add one."
                )
            if list_return:
                result = custom._backward_fn(ctx, list(grads))
            else:
                result = custom._backward_fn(ctx, *grads)
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            flat = []
            for i, n in enumerate(ctx._custom_op_spec):
                given = result[i] if i < len(result) else None
                if n is None:
                    flat.append(given)
                else:
                    flat.extend(given if given is not None else [None] * n)
            return (*flat, None)

        @staticmethod
        def vmap(info, in_dims, *args):
            values, kw = split(args)
            dims = _unflatten(in_dims[:-1], args[-1])[:n_pos]
            return custom._vmap_fn(info, tuple(dims), *values, **kw)

    body = {k: v for k, v in vars(CustomOpFunction).items() if not k.startswith("__")}
    if custom._vmap_fn is None:
        del body["vmap"]
        body["generate_vmap_rule"] = True
    base = tocha.autograd.Function
    name = f"GeneratedBackwardFor_{custom._namespace}_{custom._name}_default"
    CustomOpFunction = type(base)(name, (base,), body)  # noqa: N806

    class Runner:
        @staticmethod
        def run(custom, values, kw):
            flat, spec = _flatten([*values, *kw.values()])
            if custom._backward_fn is None and not needs_grad(flat):
                with tocha.no_grad():
                    output = CustomOpFunction.apply(*flat, spec)
            else:
                output = CustomOpFunction.apply(*flat, spec)
            return list(output) if list_return else output

    return Runner


def register_library_autograd(target, backward, setup_context) -> None:
    """An operator defined through `Library`: its Autograd kernel becomes a Function
    applying `backward` around its backend kernel."""
    import tocha

    schema = target.schema
    n_pos = sum(not a.kwarg_only for a in schema.arguments)
    kw_names = [a.name for a in schema.arguments if a.kwarg_only]

    class LibraryOpFunction(tocha.autograd.Function):
        @staticmethod
        def forward(*args):
            values, kw = args[:n_pos], dict(zip(kw_names, args[n_pos:], strict=True))
            with tocha.no_grad():
                return backend_kernel(target, device_type_of(values, kw))(*values, **kw)

        @staticmethod
        def setup_context(ctx, inputs, output):
            if setup_context is not None:
                setup_context(ctx=ctx, inputs=tuple(inputs[:n_pos]), output=output)

        @staticmethod
        def backward(ctx, *grads):
            result = backward(ctx, *grads)
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            return (*result, *([None] * len(kw_names)))

    def autograd_kernel(*args, **kwargs):
        return LibraryOpFunction.apply(*args, *(kwargs[k] for k in kw_names))

    target.kernels["Autograd"] = autograd_kernel
