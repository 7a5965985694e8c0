"""`export`: trace a module on example inputs into an `ExportedProgram`."""

from __future__ import annotations

import inspect
import sys
from typing import Any

import tocha
from tocha.fx.graph_module import GraphModule

from ._dims import DynamicDim, read_dynamic_shapes
from ._errors import UserError, with_footer
from ._intercept import recording
from ._layout import flatten, input_checks
from ._symint import SymInt
from ._tracer import Tracer, named_placeholder, state_name
from .exported_program import ExportedProgram
from .graph_signature import (
    ConstantArgument,
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    SymIntArgument,
    TensorArgument,
)

__all__ = ["export"]


def export(
    mod: tocha.nn.Module,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    *,
    dynamic_shapes: dict[str, Any] | tuple[Any, ...] | list[Any] | None = None,
    strict: bool = False,
    preserve_module_call_signature: tuple[str, ...] = (),
) -> ExportedProgram:
    """Trace ``mod(*args, **kwargs)`` once on these example inputs into an `ExportedProgram`.

    The graph is flat: placeholders for the parameters (``p_<path>``), buffers
    (``b_<path>``), constant tensors (``c_<path>``) then the tensor inputs (by argument name),
    ``call_function`` nodes calling tocha's public functions (or ``tocha.export.ops``
    primitives), one output. `dynamic_shapes` marks dimensions dynamic (`Dim`, ``Dim.AUTO``,
    ``Dim.DYNAMIC``; ``Dim.STATIC``, None or an int keep them static), as a dict keyed by
    argument name or a tuple matching the inputs; shapes computed from dynamic sizes follow
    them when the program runs. Python control flow on tensor values raises
    GuardOnDataDependentSymNode. The module's state is left as it was. `strict` and
    `preserve_module_call_signature` are accepted for PyTorch's signature.
    """
    if not isinstance(mod, tocha.nn.Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.")
    if not isinstance(args, tuple):
        raise UserError(
            with_footer(
                f"Expecting `args` to be a tuple of example positional inputs, got {type(args)}"
            )
        )
    kwargs = {} if kwargs is None else kwargs
    if not isinstance(kwargs, dict):
        raise UserError(
            with_footer(f"Expecting `kwargs` to be a dict of example inputs, got {type(kwargs)}")
        )
    names, values = _bind(mod, args, kwargs)
    dynamic = read_dynamic_shapes(names, values, dynamic_shapes)
    return _trace(mod, args, kwargs, names, values, dynamic)


def _bind(mod: tocha.nn.Module, args: tuple, kwargs: dict) -> tuple[list[str], list[Any]]:
    """The inputs by the names of forward's parameters."""
    signature = inspect.signature(mod.forward)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise UserError(with_footer(f"Inputs do not match forward's signature: {exc}")) from exc
    names: list[str] = []
    values: list[Any] = []
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            for i, v in enumerate(value):
                names.append(f"{name}_{i}")
                values.append(v)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            names.extend(value)
            values.extend(value.values())
        else:
            names.append(name)
            values.append(value)
    return names, values


def _state(mod: tocha.nn.Module) -> tuple[dict, dict, dict, set]:
    params = dict(mod.named_parameters())
    buffers = dict(mod.named_buffers())
    non_persistent = set()
    constants: dict[str, tocha.Tensor] = {}
    for prefix, sub in mod.named_modules():
        for name in getattr(sub, "_non_persistent_buffers_set", ()):
            non_persistent.add(f"{prefix}.{name}" if prefix else name)
        for name, value in vars(sub).items():
            if isinstance(value, tocha.Tensor) and not name.startswith("_"):
                constants.setdefault(f"{prefix}.{name}" if prefix else name, value)
    return params, buffers, constants, non_persistent


def _code(mod: tocha.nn.Module) -> tuple[list[dict], list[type]]:
    """The globals of the modules defining `mod`'s classes, and those classes."""
    found: list[dict] = []
    classes: list[type] = []
    for sub in mod.modules():
        for cls in type(sub).__mro__:
            module = sys.modules.get(cls.__module__)
            if module is not None and cls is not object and cls not in classes:
                found.append(vars(module))
                classes.append(cls)
    return found, classes


def _shadow_input(value: tocha.Tensor, dims: dict[int, DynamicDim]) -> tocha.Tensor | None:
    """A copy of `value` whose dynamic dimensions take their shadow sizes."""
    shadow = value.detach()
    for d, dim in dims.items():
        rows = tocha.arange(dim.shadow, device=value.device) % dim.example
        shadow = shadow.index_select(d, rows)
    return shadow.contiguous()


def _trace(
    mod: tocha.nn.Module, args: tuple, kwargs: dict, names: list, values: list, dynamic: list
) -> ExportedProgram:
    """Trace `mod` on its inputs (bound to `names`), with `dynamic`'s dimensions."""
    params, buffers, constants, non_persistent = _state(mod)
    tracer = Tracer()
    for path, sub in mod.named_modules(remove_duplicate=False):
        tracer.module_paths.setdefault(id(sub), path)
    symbols = {id(d): d for leaf in dynamic for d in leaf.values()}
    tracer.symbols = list(symbols.values())
    tracer.dynamic = any(d.shadow != d.example for d in tracer.symbols)
    saved = {k: v.detach().clone() for k, v in {**params, **buffers}.items()}
    input_specs = _place_state(tracer, params, buffers, non_persistent)
    tracer.state_end = tracer.graph.find_nodes(op="placeholder")[-1] if input_specs else None
    tracer.named_constants = {id(t): name for name, t in constants.items()}
    flat = flatten(names, values)
    # The trace runs on copies of the inputs: code writing into an input leaves the caller's
    # examples as they were.
    copies = {
        id(v): v.detach().clone().requires_grad_(v.requires_grad)
        for _, v, is_tensor in flat[0]
        if is_tensor
    }
    user_specs, shadows, shadow_inputs = _place_inputs(tracer, flat, dynamic, copies)
    try:
        with recording(tracer, *_code(mod)):
            traced_args, traced_kwargs = _replace((args, kwargs), copies)
            out = mod(*traced_args, **traced_kwargs)
            out_leaves, output_layout = _output_leaves(out)
            output_args = [tracer.to_args(v) for v in out_leaves]
    finally:
        with tocha.no_grad():
            for target, t in {**params, **buffers}.items():
                t.copy_(saved[target])
    graph = tracer.graph
    lifted_specs = [
        InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(node.name), target)
        for target, _, node in tracer.lifted
    ]
    output_specs = [_output_spec(v, a) for v, a in zip(out_leaves, output_args)]
    graph.output(tuple(output_args))
    signature = ExportGraphSignature(input_specs + lifted_specs + user_specs, output_specs)
    state_dict = {k: v for k, v in params.items()}
    state_dict.update({k: v for k, v in buffers.items() if k not in non_persistent})
    constants_out = {k: v for k, v in buffers.items() if k in non_persistent}
    constants_out.update({target: value for target, value, _ in tracer.lifted})
    graph_module = GraphModule(tocha.nn.Module(), graph)
    live = [d for d in tracer.symbols if d.shadow != d.example and not d.specialized]
    if live and all(d.shadow in d.range for d in live):
        state = [*params.values(), *buffers.values()] + [v for _, v, _ in tracer.lifted]
        shadow_args, shadow_kwargs = _replace((args, kwargs), shadows)
        flat_inputs = state + shadow_inputs
        if not _same_results(mod, graph_module, shadow_args, shadow_kwargs, flat_inputs, saved):
            tracer.generalisation_failed(live)
    ranges = {
        d.symbol: d.range for d in tracer.symbols if d.shadow != d.example and not d.specialized
    }
    return ExportedProgram(
        graph_module,
        signature,
        state_dict,
        constants_out,
        ranges,
        (args, kwargs),
        _input_layout(names, values),
        output_layout,
        input_checks(flat, dynamic),
    )


def _place_inputs(
    tracer: Tracer, flat: Any, dynamic: list, copies: dict[int, tocha.Tensor]
) -> tuple[list[InputSpec], dict[int, tocha.Tensor], list[Any]]:
    """Placeholders for the user inputs (a tensor's copy is traced; a non-tensor is a
    constant input), their specs, the shadow of each tensor input by the input's id, and
    every input as the shadow run sees it."""
    specs: list[InputSpec] = []
    shadows: dict[int, tocha.Tensor] = {}
    shadow_inputs: list[Any] = []
    dims_of = _pad(dynamic)
    for path, value, is_tensor in flat[0]:
        if not is_tensor:
            node = named_placeholder(tracer.graph, path)
            specs.append(InputSpec(InputKind.USER_INPUT, ConstantArgument(node.name, value), None))
            shadow_inputs.append(value)
            continue
        shadow = _shadow_input(value, next(dims_of)) if tracer.dynamic else None
        if shadow is not None:
            shadows[id(value)] = shadow
        node = tracer.placeholder(path, copies[id(value)], shadow)
        specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(node.name), None))
        shadow_inputs.append(shadow)
    return specs, shadows, shadow_inputs


def _place_state(
    tracer: Tracer, params: dict, buffers: dict, non_persistent: set
) -> list[InputSpec]:
    """Placeholders for the parameters then the buffers, and their specs; with dynamic
    dimensions the shadow run gets copies (it may write into buffers)."""
    specs: list[InputSpec] = []
    for target, t in params.items():
        shadow = t.detach().clone() if tracer.dynamic else None
        node = tracer.placeholder(state_name("p", target), t, shadow)
        specs.append(InputSpec(InputKind.PARAMETER, TensorArgument(node.name), target))
    for target, t in buffers.items():
        shadow = t.detach().clone() if tracer.dynamic else None
        node = tracer.placeholder(state_name("b", target), t, shadow)
        persistent = target not in non_persistent
        specs.append(InputSpec(InputKind.BUFFER, TensorArgument(node.name), target, persistent))
    return specs


def _output_spec(value: Any, arg: Any) -> OutputSpec:
    if isinstance(value, tocha.Tensor):
        return OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(arg.name), None)
    if isinstance(value, SymInt):
        return OutputSpec(OutputKind.USER_OUTPUT, SymIntArgument(arg.name), None)
    return OutputSpec(OutputKind.USER_OUTPUT, ConstantArgument("", value), None)


def _replace(value: Any, shadows: dict[int, tocha.Tensor]) -> Any:
    """`value` with the inputs that have a shadow replaced by it."""
    if isinstance(value, tocha.Tensor):
        return shadows.get(id(value), value)
    if isinstance(value, (tuple, list)):
        return type(value)(_replace(v, shadows) for v in value)
    if isinstance(value, dict):
        return {k: _replace(v, shadows) for k, v in value.items()}
    return value


def _same_results(
    mod: tocha.nn.Module,
    graph_module: GraphModule,
    args: tuple,
    kwargs: dict,
    flat_inputs: list,
    saved: dict[str, tocha.Tensor],
) -> bool:
    """Whether the graph computes what the module computes at the other sizes: Python code
    that used a dynamic size as a plain number (``range(n)``, ``[b] * n``) left the example's
    value in the graph. Both run from the same state and random seed; the state is put back."""
    state = {**dict(mod.named_parameters()), **dict(mod.named_buffers())}
    rng = tocha.get_rng_state()
    try:
        with tocha.no_grad():
            tocha.manual_seed(_SEED)
            expected, _ = _output_leaves(mod(*args, **kwargs))
            _restore(state, saved)
            tocha.manual_seed(_SEED)
            got = list(graph_module(*flat_inputs))
    except Exception:
        return False
    finally:
        _restore(state, saved)
        tocha.set_rng_state(rng)
    return len(got) == len(expected) and all(_same(a, b) for a, b in zip(got, expected))


_SEED = 20261126


def _restore(state: dict[str, tocha.Tensor], saved: dict[str, tocha.Tensor]) -> None:
    with tocha.no_grad():
        for name, t in state.items():
            t.copy_(saved[name])


def _same(got: Any, expected: Any) -> bool:
    if isinstance(expected, tocha.Tensor):
        return (
            isinstance(got, tocha.Tensor)
            and got.shape == expected.shape
            and bool(tocha.allclose(got, expected, rtol=1e-4, atol=1e-5, equal_nan=True))
        )
    return int(got) == int(expected) if isinstance(expected, int) else got == expected


def _pad(dynamic: list) -> Any:
    yield from dynamic
    while True:
        yield {}


def _input_layout(names: list[str], values: list[Any]) -> list[tuple[str, Any]]:
    from ._layout import template

    counter = iter(range(1 << 30))
    return [(name, template(value, counter)) for name, value in zip(names, values)]


def _output_leaves(out: Any) -> tuple[list[Any], Any]:
    from ._layout import template

    leaves: list[Any] = []
    counter = iter(range(1 << 30))
    layout = template(out, counter, leaves, all_leaves=True)
    return leaves, layout
