"""`tocha.compile`'s front end: the wrapper it returns, guards, the cache of compiled entries,
recompilation and the fall back to eager code.

Each call computes a *guard key* from its arguments (every tensor's shape, dtype, device and
``requires_grad``; other arguments by value) and the global state a graph depends on (grad
mode, autocast, active function transforms, the default dtype). Under a key, an entry also
checks that the module still holds the same parameters and buffers and that every
submodule's training flag is the one captured. A miss captures the call (`_capture`) and
compiles it (`_runtime`); after ``tocha._dynamo.config.cache_size_limit`` entries for one
function, it warns once and runs eagerly. A program that reads tensor values into Python
where a graph cannot check them (``item()``, printing) is a *graph break*: that call's
arguments run eagerly from then on (``fullgraph=True`` raises instead).
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from typing import Any

import tocha
from tocha.fx.experimental.proxy_tensor import DataDependentValueChanged
from tocha.library import GRAD_MODE

from . import _logging, _state
from ._capture import GraphBreak, capture, flatten
from ._codegen_python import ValueGuardFailed
from ._errors import Unsupported
from ._guards import MISS, fast_path, miss
from ._optimizer import compilable_step, compile_step
from ._runtime import CompiledGraph

__all__ = ["CompiledFunction", "OptimizedModule", "compile_model", "reset_all"]


class _Captures(threading.local):
    depth = 0  # how many captures run on this thread


_LOCAL = _Captures()
_ALL: list[Any] = []


def compiling() -> bool:
    """Whether a capture is running on this thread (``tocha.compiler.is_compiling``)."""
    return _LOCAL.depth > 0


def reset_all() -> None:
    """Forget every compiled entry (``tocha.compiler.reset``)."""
    for ref in list(_ALL):
        ref.cache.clear()
        ref.eager_keys.clear()
        ref.warned = False
        ref.fast = miss


class _Entry:
    """One compiled call: its graph, how to rebuild its result, the module state it was
    captured with, and the tensors read from elsewhere that are its inputs too."""

    def __init__(self, graph: CompiledGraph, rebuild: Any, guards: list, extra: list) -> None:
        self.graph = graph
        self.rebuild = rebuild
        self.state_guards = guards
        self.state = [v for _, _, v in guards if isinstance(v, tocha.Tensor)]
        self.extra = extra
        self.tail = self.state + extra  # the inputs after the arguments' tensors
        self.failures = 0
        self.fast: Any = None

    def holds(self) -> bool:
        for owner, key, value in self.state_guards:
            if owner.get(key) is not value:
                return False
        return True


class CompiledFunction:
    """`fn` compiled: see the module docstring."""

    def __init__(
        self,
        fn: Callable,
        module: tocha.nn.Module | None,
        backend: Any,
        fullgraph: bool,
        dynamic: Any,
        mode: str | None,
    ) -> None:
        self.fn = fn
        self.module = module
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.mode = mode
        self.cache: dict[Any, list[_Entry]] = {}
        self.eager_keys: set = set()
        self.warned = False
        self.fast = miss  # the guards and call of the entry last run, as one function
        self.name = getattr(fn, "__qualname__", None) or type(fn).__name__
        _ALL.append(self)
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            result = self.fast(args)
            if result is not MISS:
                return result
        if GRAD_MODE.transforms or _state.disabled() or compiling():
            # under vmap or forward AD the function runs eagerly, through the transforms
            return self.fn(*args, **kwargs)
        key = _guard_key(args, kwargs)
        if key in self.eager_keys:
            return self.fn(*args, **kwargs)
        entries = self.cache.get(key)
        if entries:
            for entry in entries:
                if entry.holds():
                    if entry.fast is not None:
                        self.fast = entry.fast
                    return self._run(entry, key, args, kwargs)
            _logging.recompile(f"{self.name}: a module's parameters or training mode changed")
        elif self.cache:
            _logging.recompile(f"{self.name}: new argument shapes, dtypes or grad mode")
        return self._compile(key, args, kwargs)

    def _run(self, entry: _Entry, key: Any, args: tuple, kwargs: dict) -> Any:
        if not kwargs and all(type(a) is tocha.Tensor for a in args):
            tensors = [*args, *entry.tail]
        else:
            flat, _ = flatten((args, kwargs))
            tensors = [v for v in flat if isinstance(v, tocha.Tensor)] + entry.tail
        try:
            flat_out = entry.graph(tensors)
        except (ValueGuardFailed, DataDependentValueChanged) as exc:
            entry.failures += 1
            _logging.recompile(f"{self.name}: {exc}")
            if entry.failures >= 3:
                self.eager_keys.add(key)
                _logging.fallback(f"{self.name}: values read into Python keep changing")
            return self.fn(*args, **kwargs)
        return entry.rebuild(flat_out)

    def _compile(self, key: Any, args: tuple, kwargs: dict) -> Any:
        entries = self.cache.setdefault(key, [])
        total = sum(len(v) for v in self.cache.values())
        if total >= _state.config.cache_size_limit:
            if not self.warned:
                self.warned = True
                warnings.warn(
                    f"tocha.compile: {self.name} hit the cache size limit "
                    f"(tocha._dynamo.config.cache_size_limit = "
                    f"{_state.config.cache_size_limit}); it runs eagerly from now on",
                    stacklevel=3,
                )
            _logging.fallback(f"{self.name}: cache size limit reached")
            self.eager_keys.add(key)
            return self.fn(*args, **kwargs)
        guards, state = _module_state(self.module)
        _LOCAL.depth += 1
        try:
            cap = capture(self.fn, args, kwargs, state)
        except GraphBreak as exc:
            if self.fullgraph:
                raise Unsupported(f"{exc.args[0]} (fullgraph=True)") from None
            _logging.graph_break(f"{self.name}: {exc.args[0]}")
            self.eager_keys.add(key)
            return exc.args[1]
        finally:
            _LOCAL.depth -= 1
        extra = cap.inputs[_count_tensors(args, kwargs) + len(state) :]
        _logging.graph(self.name, cap.gm)
        graph = self.backend.build(cap, self.name)
        entry = _Entry(graph, cap.rebuild, guards, extra)
        if isinstance(graph, CompiledGraph) and not graph.checks_values and not kwargs:
            bare = type(cap.first_result) is tocha.Tensor  # type: ignore[attr-defined]
            rebuild = None if bare else cap.rebuild
            entry.fast = fast_path(args, graph.run, entry.tail, guards, rebuild, _LOCAL)
            if entry.fast is not None:
                self.fast = entry.fast
        entries.append(entry)
        return cap.first_result  # type: ignore[attr-defined]


def _count_tensors(args: tuple, kwargs: dict) -> int:
    flat, _ = flatten((args, kwargs))
    return sum(isinstance(v, tocha.Tensor) for v in flat)


def _guard_key(args: tuple, kwargs: dict) -> Any:
    # global state a graph depends on: grad mode, autocast, the default dtype, transforms
    parts: list[Any] = [
        GRAD_MODE.grad_enabled,
        None if GRAD_MODE.autocast is None else tuple(GRAD_MODE.autocast.items()),
        GRAD_MODE.transforms,
        tocha.get_default_dtype(),
    ]
    if kwargs:
        flat, _ = flatten((args, kwargs))
        parts.append(tuple(kwargs))
    else:
        flat = args
    for a in flat:
        if type(a) is tocha.Tensor or isinstance(a, tocha.Tensor):
            data = a._data
            parts.append((data.shape, data.dtype, a._device, a.requires_grad))
        elif a is None or isinstance(a, (bool, int, float, str, tocha.dtype, tocha.device)):
            parts.append((type(a), a))
        else:
            parts.append((type(a), id(a)))
    return tuple(parts)


def _module_state(module: tocha.nn.Module | None) -> tuple[list, list]:
    """The guards on `module`'s parameters and buffers (their dicts, keys and tensors) and its
    submodules' training flags, and the tensors in order."""
    if module is None:
        return [], []
    guards = []
    for sub in module.modules():
        for store in (sub._parameters, sub._buffers):
            for name, value in store.items():
                if value is not None:
                    guards.append((store, name, value))
        guards.append((sub.__dict__, "training", sub.training))
    tensors = [v for _, _, v in guards if isinstance(v, tocha.Tensor)]
    return guards, tensors


class OptimizedModule(tocha.nn.Module):
    """What `tocha.compile` returns for a module: it holds the original as ``_orig_mod`` (so
    its state dict keys start with ``_orig_mod.``) and runs it compiled. Attributes it does
    not have are the original module's."""

    def __init__(self, mod: tocha.nn.Module, compiled: CompiledFunction) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", compiled)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    def __getstate__(self) -> dict:
        """Pickled and deep-copied without its compiled entries, which are made again."""
        state = dict(self.__dict__)
        compiled = state.pop("_compiled")
        state["_settings"] = (compiled.backend, compiled.fullgraph, compiled.dynamic, compiled.mode)
        return state

    def __setstate__(self, state: dict) -> None:
        backend, fullgraph, dynamic, mode = state.pop("_settings")
        self.__dict__.update(state)
        mod = self._orig_mod
        compiled = CompiledFunction(mod.__call__, mod, backend, fullgraph, dynamic, mode)
        object.__setattr__(self, "_compiled", compiled)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)


def compile_model(
    model: Callable, *, fullgraph: bool, dynamic: Any, backend: Any, mode: str | None
) -> Any:
    """The compiled form of `model` (see `tocha.compile`)."""
    from ._backends import Builtin, resolve

    chosen = resolve(backend)
    if isinstance(chosen, Builtin) and chosen.fuse and compilable_step(model):
        return compile_step(model)
    if isinstance(model, tocha.nn.Module):
        compiled = CompiledFunction(model.__call__, model, chosen, fullgraph, dynamic, mode)
        return OptimizedModule(model, compiled)
    owner = getattr(model, "__self__", None)
    module = owner if isinstance(owner, tocha.nn.Module) else None
    return CompiledFunction(model, module, chosen, fullgraph, dynamic, mode)
