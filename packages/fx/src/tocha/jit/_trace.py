"""`trace`: record a function's or module's tensor operations as scripted code.

Tracing exports the module (`tocha.export.export`, non-strict) on the example inputs and
writes the flat graph as the text of ``forward`` (`_tracecode`), which the interpreter runs
and `save` stores like a scripted method: traced and scripted models share one format.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import difflib
import warnings
from collections.abc import Iterator
from functools import partial
from typing import Any

import numpy as np

import tocha
import tocha.export as export
import tocha.nn as nn
from tocha.export._tracer import specialising

from . import _decorators, _types
from ._compile import compile_saved
from ._module import RecursiveScriptModule, ScriptFunction, ScriptModule
from ._script import trusted
from ._tracecode import GLOBAL_REFS, forward_source

_NONDETERMINISTIC = frozenset(
    {"rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm",
     "bernoulli", "multinomial", "normal", "poisson", "uniform_", "normal_"}
)  # fmt: skip
# Random only in training: the position of their ``training`` argument and its default.
_TRAINING_ARGUMENT = {
    "dropout": (2, True), "dropout1d": (2, True), "dropout2d": (2, True),
    "dropout3d": (2, True), "alpha_dropout": (2, False), "feature_alpha_dropout": (2, False),
    "rrelu": (3, False),
}  # fmt: skip


def _random(node: Any) -> bool:
    name = getattr(node.target, "__name__", "")
    if name in _NONDETERMINISTIC:
        return True
    if name in _TRAINING_ARGUMENT:
        index, default = _TRAINING_ARGUMENT[name]
        training = node.args[index] if len(node.args) > index else default
        return bool(node.kwargs.get("training", training))
    return False


class TracerWarning(Warning):
    """A trace may not generalise: it kept a Python value read from a tensor as a constant,
    its outputs differ from Python's, or it holds random nodes."""

    @staticmethod
    def ignore_lib_warnings() -> None:
        """Ignore the TracerWarnings raised from tocha's own modules (tocha.jit's excepted)."""
        warnings.filterwarnings("ignore", category=TracerWarning, module=r"tocha\.(?!jit)")


class TracingCheckError(Exception):
    """The checks `trace` runs (``check_trace``) found that the trace is not reproducible."""

    def __init__(
        self, graph_diff_error: str, tensor_compare_error: str, extra_msg: str = ""
    ) -> None:
        self.message = "Tracing failed sanity checks!\n" + extra_msg
        self.message += graph_diff_error + tensor_compare_error
        super().__init__(self.message)


class _FunctionModule(nn.Module):
    """A module whose forward is a plain function, so that it can be exported."""

    def __init__(self, fn: Any) -> None:
        super().__init__()
        self.__dict__["forward"] = fn


def trace(
    func: Any,
    example_inputs: Any = None,
    optimize: Any = None,
    check_trace: bool = True,
    check_inputs: list[Any] | None = None,
    check_tolerance: float = 1e-5,
    strict: bool = True,
    _force_outplace: bool = False,
    _module_class: Any = None,
    _compilation_unit: Any = None,
    example_kwarg_inputs: dict | None = None,
    _store_inputs: bool = True,
) -> Any:
    """Run ``func`` on ``example_inputs`` and record its tensor operations as code.

    Python control flow and Python values are fixed at their traced values: converting a
    traced tensor to a Python value (``if x.sum() > 0``, ``x.item()``, ``int(t)``,
    ``t.tolist()``, comparing ``x.size(0)``) warns `TracerWarning` at that line and the value
    becomes a constant. Sizes read by the traced code are recorded, so that
    ``x.view(x.size(0), -1)`` follows the input's batch size. The result runs the recorded
    operations on new inputs of the same kind. ``check_trace`` traces again on
    ``check_inputs`` (default: the example), warns `TracerWarning` when the traced outputs
    differ from the Python function's beyond ``check_tolerance`` (random operations, another
    branch) and raises `TracingCheckError` when the recorded operations or constants differ.

    Args:
        func: an ``nn.Module`` (its ``forward`` is traced) or a Python function.
        example_inputs: a Tensor or a tuple of them (possibly nested in tuples, lists, dicts).
        check_trace: whether to run the checks above.
        check_inputs: a list of input tuples to check with.
        check_tolerance: the relative and absolute tolerance of the output check.
        strict: refuse lists and dicts among the outputs (their structure is fixed).

    Returns:
        A `RecursiveScriptModule` for a module (sharing its parameters and buffers), a
        `ScriptFunction` for a function; both have ``.code`` and ``.graph``.

    Example::

        >>> traced = tocha.jit.trace(tocha.nn.Linear(3, 2), tocha.randn(4, 3))
        >>> traced(tocha.randn(5, 3)).shape
        tocha.Size([5, 2])
    """
    if isinstance(func, (ScriptModule, ScriptFunction)):
        warnings.warn(
            "The input to trace is already a ScriptModule, tracing it is a no-op. Returning the "
            "object as is.",
            stacklevel=2,
        )
        return func
    by_name = example_kwarg_inputs is not None
    example = example_kwarg_inputs if by_name else example_inputs
    if isinstance(func, nn.Module):
        per_method = [{"forward": c} for c in check_inputs] if check_inputs else None
        return trace_module(
            func, {"forward": example}, None, check_trace, per_method, check_tolerance, strict,
            example_inputs_is_kwarg=by_name,
        )  # fmt: skip
    inputs, kwargs = _example(example, by_name)
    module = _FunctionModule(func)
    ep = _export(module, inputs, kwargs)
    if strict:
        _check_strict_outputs(ep.call_spec[1])
    name = getattr(func, "__name__", "fn")
    source, _ = forward_source(ep, name=name, method=False)
    qualname = f"{getattr(func, '__module__', '__main__')}.{getattr(func, '__qualname__', name)}"
    traced = ScriptFunction(compile_saved(source, qualname, False, GLOBAL_REFS, {}, {}), qualname)
    if check_trace:
        checks = [_example(c, by_name) for c in check_inputs or ()] or [(inputs, kwargs)]
        _check(func, traced, ep, partial(_export, module), checks, check_tolerance)
    return traced


def trace_module(
    mod: nn.Module,
    inputs: dict[str, Any],
    optimize: Any = None,
    check_trace: bool = True,
    check_inputs: list[dict[str, Any]] | None = None,
    check_tolerance: float = 1e-5,
    strict: bool = True,
    _force_outplace: bool = False,
    _module_class: Any = None,
    _compilation_unit: Any = None,
    example_inputs_is_kwarg: bool = False,
    _store_inputs: bool = True,
) -> RecursiveScriptModule:
    """Trace methods of ``mod``: ``inputs`` maps each method's name to its example inputs.

    ``trace_module(m, {"forward": x})`` is ``trace(m, x)``; other methods are traced the same
    way and become methods of the result. ``check_inputs`` is a list of such dicts. With
    ``example_inputs_is_kwarg``, each method's example is a dict of keyword arguments.

    Example::

        >>> traced = tocha.jit.trace_module(model, {"forward": x, "encode": (x,)})
    """
    if not isinstance(mod, nn.Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    root = _tree(mod, top=True)
    programs = {}
    for name, example in inputs.items():
        args, kwargs = _example(example, example_inputs_is_kwarg)
        programs[name] = ep = _export_method(mod, name, args, kwargs)
        if strict:
            _check_strict_outputs(ep.call_spec[1])
        _add_method(root, name, ep)
    if check_trace:
        for name, ep in programs.items():
            examples = [c[name] for c in check_inputs or () if name in c] or [inputs[name]]
            checks = [_example(c, example_inputs_is_kwarg) for c in examples]
            again = partial(_export_method, mod, name)
            _check(getattr(mod, name), root._bound(name), ep, again, checks, check_tolerance)
    return root


def _example(example: Any, by_name: bool) -> tuple[tuple, dict]:
    """Positional and keyword example inputs, checked to be (nested) Tensors."""
    if not by_name:
        return _as_tuple(example), {}
    if not isinstance(example, dict):
        raise RuntimeError("example_kwarg_inputs should be a dict")
    _as_tuple(tuple(example.values()))
    return (), dict(example)


def _as_tuple(example_inputs: Any) -> tuple:
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    if not _traceable(inputs):
        raise RuntimeError(
            f"Type '{_types.type_of(inputs)}' cannot be traced. Only Tensors and (possibly "
            "nested) Lists, Dicts, and Tuples of Tensors can be traced"
        )
    return inputs


def _traceable(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_traceable(item) for item in value)
    if isinstance(value, dict):
        return all(_traceable(item) for item in value.values())
    return isinstance(value, tocha.Tensor)


class ScriptCall:
    """The target of a traced call of a scripted submodule: traced code calls it as
    ``self.<path>(...)``, so that its control flow stays (as torch.jit.trace keeps a
    ScriptModule it meets)."""

    def __init__(self, path: str, module: nn.Module) -> None:
        self.path = path
        self.module = module
        self.__name__ = path.replace(".", "_")
        self.__qualname__ = self.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def __repr__(self) -> str:
        return f"self.{self.path}"


@contextlib.contextmanager
def _scripted_leaves(module: nn.Module) -> Iterator[None]:
    """Within the block, a scripted submodule of `module` called with traced tensors is
    recorded as one call (a `ScriptCall`) instead of the operations it runs."""
    from tocha.export._intercept import _ACTIVE_TRACER

    def leaf(path: str, child: nn.Module, forward: Any) -> Any:
        target = ScriptCall(path, child)

        def call(*args: Any, **kwargs: Any) -> Any:
            tracer = _ACTIVE_TRACER[-1] if _ACTIVE_TRACER else None
            if tracer is None or tracer.passive():
                return forward(*args, **kwargs)
            return tracer.record_call(target, forward, args, kwargs)

        return call

    patched = []
    for path, child in module.named_modules():
        if path and isinstance(child, ScriptModule) and "forward" not in child.__dict__:
            child.__dict__["forward"] = leaf(path, child, child.forward)
            patched.append(child)
    try:
        yield
    finally:
        for child in patched:
            del child.__dict__["forward"]


def _export(module: nn.Module, inputs: tuple, kwargs: dict | None = None) -> Any:
    """Export as tracing does: Python values read from tensors become constants, with a
    `TracerWarning` at the line reading them; scripted submodules stay calls."""
    _decorators._TRACING[0] += 1
    try:
        with specialising(TracerWarning), _scripted_leaves(module):
            return export.export(module, inputs, kwargs, strict=False)
    finally:
        _decorators._TRACING[0] -= 1


def _check_strict_outputs(layout: Any) -> None:
    if "list" in layout or "dict" in layout:
        kind = "list" if "list" in layout else "dict"
        raise RuntimeError(
            f"Encountering a {kind} at the output of the tracer might cause the trace to be "
            "incorrect, this is only valid if the container structure does not change based "
            "on the module's inputs. Consider using a constant container instead (e.g. for "
            "`list`, use a `tuple` instead. for `dict`, use a `NamedTuple` instead). If you "
            "absolutely need this and know the side effects, pass strict=False to trace() to "
            "allow this behavior."
        )
    for key in ("tuple",):
        for item in layout.get(key, ()):
            _check_strict_outputs(item)


def _export_method(module: nn.Module, name: str, inputs: tuple, kwargs: dict | None = None) -> Any:
    """Export ``module.<name>`` by making it the module's forward for the time of the call."""
    if name == "forward":
        return _export(module, inputs, kwargs)
    method = getattr(module, name)
    saved = module.__dict__.get("forward")
    module.__dict__["forward"] = method
    try:
        return _export(module, inputs, kwargs)
    finally:
        if saved is None:
            del module.__dict__["forward"]
        else:
            module.__dict__["forward"] = saved


def _add_method(root: RecursiveScriptModule, name: str, ep: Any) -> None:
    """Compile ``ep`` as method ``name`` of ``root``, adding the constants it reads."""
    for target, value in ep.constants.items():
        owner, _, attribute = target.rpartition(".")
        holder = root.get_submodule(owner) if owner else root
        if attribute not in holder._buffers and attribute not in holder._parameters:
            holder.__dict__[attribute] = value
            holder._script_attrs.add(attribute)
    source, _ = forward_source(ep, name=name)
    qualname = f"{root.qualified_name}.{name}"
    root._methods[name] = compile_saved(source, qualname, True, GLOBAL_REFS, {}, {})


def _tree(module: nn.Module, top: bool = False) -> nn.Module:
    """The module tree that a traced module's code reads its state from, sharing tensors;
    containers stay containers so that ``traced.layers[0]`` works as on the original."""
    cls = type(module)
    containers = (nn.ModuleList, nn.ModuleDict, nn.Sequential)
    if not top and isinstance(module, containers) and trusted(cls):
        container = cls()
        for name, child in module._modules.items():
            container.add_module(name, None if child is None else _tree(child))
        container.train(module.training)
        return container
    node = RecursiveScriptModule(cls.__name__, f"{cls.__module__}.{cls.__qualname__}")
    node.training = module.training
    node._parameters.update(module._parameters)
    node._buffers.update(module._buffers)
    node._non_persistent_buffers_set.update(module._non_persistent_buffers_set)
    for name, child in module._modules.items():
        # A scripted submodule is kept whole: traced code calls it (`ScriptCall`).
        keep = child is None or isinstance(child, ScriptModule)
        node._modules[name] = child if keep else _tree(child)
    return node


def _graph_text(ep: Any) -> list[str]:
    """The lines of ``ep``'s graph, then its constant tensors' values: two traces on which
    these agree record the same computation."""
    lines = str(ep.graph).splitlines()
    for target, value in sorted(ep.constants.items()):
        lines.append(
            f"{target} = {value.detach().tolist() if isinstance(value, tocha.Tensor) else value}"
        )
    return lines


def _check(
    func: Any,
    traced: Any,
    ep: Any,
    again: Any,
    check_inputs: list[tuple[tuple, dict]],
    tolerance: float,
) -> None:
    """``check_trace``: warn for random nodes, then for each of ``check_inputs`` trace again
    (with ``again``), compare the outputs with ``func``'s (a `TracerWarning` when they differ)
    and raise `TracingCheckError` when the second trace recorded another computation (code
    whose Python values, branches included, depend on the inputs)."""
    random_names = {n.name for n in ep.graph.nodes if n.op == "call_function" and _random(n)}
    random = [
        ast.unparse(s)
        for s in ast.parse(traced.code).body[0].body
        if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) in random_names
    ]
    if random:
        warnings.warn(
            TracerWarning(
                "Trace had nondeterministic nodes. Did you forget call .eval() on your model? "
                "Nodes:\n\t" + "\n\t".join(random) + "\nThis may cause errors in trace checking. "
                "To disable trace checking, pass check_trace=False to torch.jit.trace()"
            ),
            stacklevel=3,
        )
    expected = _graph_text(ep)
    for inputs, kwargs in check_inputs:
        retraced = _graph_text(again(copy.deepcopy(inputs), copy.deepcopy(kwargs)))
        with tocha.no_grad():
            got = traced(*copy.deepcopy(inputs), **copy.deepcopy(kwargs))
            want = func(*copy.deepcopy(inputs), **copy.deepcopy(kwargs))
        _compare_outputs(got, want, tolerance)
        if retraced != expected:
            diff = "".join(f"\t\t{line.rstrip()}\n" for line in difflib.ndiff(expected, retraced))
            raise TracingCheckError(
                f"ERROR: Graphs differed across invocations!\n\tGraph diff:\n{diff}", ""
            )


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    return [value]


def _compare_outputs(got: Any, want: Any, tolerance: float) -> None:
    for index, (a, b) in enumerate(zip(_leaves(got), _leaves(want)), start=1):
        if not isinstance(a, tocha.Tensor) or not isinstance(b, tocha.Tensor):
            continue
        try:
            np.testing.assert_allclose(
                a.detach().numpy(), b.detach().numpy(), rtol=tolerance, atol=tolerance
            )
        except AssertionError as error:
            warnings.warn(
                TracerWarning(
                    f"Output nr {index}. of the traced function does not match the "
                    f"corresponding output of the Python function. Detailed error:\n{error}"
                ),
                stacklevel=4,
            )
