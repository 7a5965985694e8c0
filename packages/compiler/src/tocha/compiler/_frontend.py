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

import numpy as np

import tocha
from tocha.fx.experimental.proxy_tensor import DataDependentValueChanged
from tocha.library import GRAD_MODE

from . import _logging, _passes, _state
from ._backends import Builtin
from ._capture import GraphBreak, capture, flatten
from ._codegen_python import ValueGuardFailed
from ._dynamic import NotGeneral, fit, marked_dims, shadow_args, strip_symbols
from ._errors import Unsupported
from ._guards import MISS, fast_path, miss
from ._optimizer import compilable_step, compile_step
from ._runtime import CompiledGraph
from ._split import Parts, recorded_calls

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
        ref.dynamic_entries.clear()
        ref.static_sizes.clear()
        ref.eager_keys.clear()
        ref.parts.clear()
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
        self.parts: dict[Any, Parts] = {}  # what stays compiled for keys with a graph break
        # entries with a dynamic size: (key without the sizes, shape patterns, entry)
        self.dynamic_entries: list[tuple[Any, dict, _Entry]] = []
        self.static_sizes: set = set()  # keys without sizes whose graphs did not generalise
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
            parts = self.parts.get(key)
            if parts is not None:
                return parts.run(self.fn, args, kwargs)
            return self.fn(*args, **kwargs)
        entries = self.cache.get(key)
        if entries:
            for entry in entries:
                if entry.holds():
                    if entry.fast is not None:
                        self.fast = entry.fast
                    return self._run(entry, key, args, kwargs)
            _logging.recompile(f"{self.name}: a module's parameters or training mode changed")
        elif self.dynamic_entries and (found := self._dynamic_entry(args, kwargs)) is not None:
            if found.fast is not None:
                self.fast = found.fast
            return self._run(found, key, args, kwargs)
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
        if _state.stance[0] != "default" and (self.cache or self.dynamic_entries):
            if _state.stance[0] == "fail_on_recompile":
                raise RuntimeError(
                    "Detected recompile when torch.compile stance is 'fail_on_recompile'"
                )
            return self.fn(*args, **kwargs)  # eager_on_recompile
        entries = self.cache.setdefault(key, [])
        total = sum(len(v) for v in self.cache.values()) + len(self.dynamic_entries)
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
        _state.counters["frames"]["total"] += 1
        _LOCAL.depth += 1
        try:
            with recorded_calls() as seen:
                cap = capture(self.fn, args, kwargs, state, _slots(guards))
        except GraphBreak as exc:
            if self.fullgraph:
                raise Unsupported(f"{exc.args[0]} (fullgraph=True)") from None
            _logging.graph_break(f"{self.name}: {exc.args[0]}")
            _state.counters["graph_break"][exc.args[0]] += 1
            self.eager_keys.add(key)
            parts = Parts.make(seen, self._compiled_part)
            if parts is not None:
                self.parts[key] = parts
                _logging.graph_break(f"{self.name}: compiled on their own: {parts.describe()}")
            return exc.args[1]
        finally:
            _LOCAL.depth -= 1
        extra = cap.inputs[_count_tensors(args, kwargs) + len(state) :]
        _state.counters["frames"]["ok"] += 1
        _state.counters["stats"]["unique_graphs"] += 1
        _logging.graph(self.name, cap.gm)
        graph, patterns = self._build(cap, key, args, kwargs, state)
        entry = _Entry(graph, cap.rebuild, guards, extra)
        if isinstance(graph, CompiledGraph) and not graph.checks_values and not kwargs:
            bare = type(cap.first_result) is tocha.Tensor  # type: ignore[attr-defined]
            rebuild = None if bare else cap.rebuild
            entry.fast = fast_path(
                args, graph.run, entry.tail, guards, rebuild, _LOCAL, dims=patterns
            )
            if entry.fast is not None:
                self.fast = entry.fast
        if patterns is None:
            entries.append(entry)
        else:
            self.dynamic_entries.append((_guard_key(args, kwargs, sizes=False), patterns, entry))
        return cap.first_result  # type: ignore[attr-defined]

    def _compiled_part(self, forward: Callable, module: tocha.nn.Module) -> CompiledFunction:
        """A module's forward, compiled on its own (with this function's settings)."""
        return CompiledFunction(forward, module, self.backend, False, self.dynamic, self.mode)

    def _build(self, cap: Any, key: Any, args: tuple, kwargs: dict, state: list) -> tuple:
        """The compiled graph of `cap`, and the shape patterns of its arguments when its
        sizes are dynamic (None: static)."""
        dims = self._dynamic_dims(key, args, kwargs)
        if dims:
            try:
                symbols = self._generalize(cap, args, kwargs, state, dims)
                graph = self.backend.build(cap, self.name, symbols)
            except NotGeneral as exc:
                _logging.recompile(f"{self.name}: sizes stay static ({exc})")
                strip_symbols(cap.gm)
                self.static_sizes.add(_guard_key(args, kwargs, sizes=False))
            else:
                flat, _ = flatten((args, kwargs))
                patterns = {
                    k: [(1, 0) if d in ds else n for d, n in enumerate(flat[k].shape)]
                    for k, ds in dims.items()
                }
                for k, v in enumerate(flat):
                    if isinstance(v, tocha.Tensor) and k not in patterns:
                        patterns[k] = list(v.shape)
                _logging.recompile(f"{self.name}: compiled for any size of dims {dims}")
                return graph, patterns
        return self.backend.build(cap, self.name), None

    def _dynamic_dims(self, key: Any, args: tuple, kwargs: dict) -> dict[int, list[int]]:
        """The dims to make dynamic, by position among the flat arguments: those
        ``tocha._dynamo.mark_dynamic`` marked (when they have one size); with
        ``dynamic=True``, dim 0 of the tensors whose dim 0 is the first tensor's; by default,
        the dims that changed (all from one size to one other) since an entry of the same
        arguments otherwise."""
        if self.dynamic is False or not isinstance(self.backend, Builtin) or not self.backend.aot:
            return {}
        if _guard_key(args, kwargs, sizes=False) in self.static_sizes:
            return {}  # tried: the traces did not give one graph
        flat, _ = flatten((args, kwargs))
        tensors = {k: v for k, v in enumerate(flat) if isinstance(v, tocha.Tensor)}
        if not tensors or any(t.device.type != "cpu" for t in tensors.values()):
            return {}
        marked = {k: sorted(marked_dims(t)) for k, t in tensors.items() if marked_dims(t)}
        if marked:
            sizes = {tensors[k].shape[d] for k, ds in marked.items() for d in ds}
            return marked if len(sizes) == 1 and min(sizes) >= 2 else {}
        if self.dynamic:
            first = next(iter(tensors.values()))
            size = first.shape[0] if first.dim() else 0
            if size < 2:
                return {}
            return {k: [0] for k, t in tensors.items() if t.dim() and t.shape[0] == size}
        if not _state.config.automatic_dynamic_shapes:
            return {}
        erased = _guard_key(args, kwargs, sizes=False)
        shapes = [t.shape for t in tensors.values()]
        for other in self.cache:
            if other == key or _erase(other) != erased:
                continue
            old = [p[0] for p in other if _is_tensor_part(p)]
            changed: dict[int, list[int]] = {}
            pairs = set()
            for k, before, now in zip(tensors, old, shapes):
                for d, (a, b) in enumerate(zip(before, now)):
                    if a != b:
                        changed.setdefault(k, []).append(d)
                        pairs.add((a, b))
            if len(pairs) == 1 and min(next(iter(pairs))) >= 2:
                return changed
        return {}

    def _generalize(self, cap: Any, args: tuple, kwargs: dict, state: list, dims: dict) -> dict:
        """Trace the call at two more sizes and fit the graph to the size (`_dynamic`)."""
        flat, _ = flatten((args, kwargs))
        k, ds = next(iter(dims.items()))
        size = flat[k].shape[ds[0]]
        sizes = (size, size + 1, size + 2)
        _passes.optimize(cap.gm)
        caps = [cap]
        for shadow in sizes[1:]:
            shadow_call = shadow_args(args, kwargs, dims, shadow)
            caps.append(self._shadow_capture(*shadow_call, state))
            _passes.optimize(caps[-1].gm)
        return fit(caps, sizes)

    def _shadow_capture(self, args: tuple, kwargs: dict, state: list) -> Any:
        """A capture whose effects are undone: module state and the random stream."""
        rng = tocha.get_rng_state()
        saved = [t._data.copy() for t in state]
        _LOCAL.depth += 1
        try:
            return capture(self.fn, args, kwargs, state, _slots(_module_state(self.module)[0]))
        except GraphBreak as exc:
            raise NotGeneral(exc.args[0]) from None
        except Exception as exc:  # the program refuses the other size: keep sizes static
            raise NotGeneral(f"at another size the program raised {exc!r}") from None
        finally:
            _LOCAL.depth -= 1
            for t, data in zip(state, saved):
                np.copyto(t._data, data)
            tocha.set_rng_state(rng)

    def _dynamic_entry(self, args: tuple, kwargs: dict) -> _Entry | None:
        """The entry with a dynamic size that takes this call, if any."""
        erased = _guard_key(args, kwargs, sizes=False)
        flat = None
        for key, patterns, entry in self.dynamic_entries:
            if key != erased:
                continue
            if flat is None:
                flat, _ = flatten((args, kwargs))
            if _fits(flat, patterns) and entry.holds():
                return entry
        return None


def _count_tensors(args: tuple, kwargs: dict) -> int:
    flat, _ = flatten((args, kwargs))
    return sum(isinstance(v, tocha.Tensor) for v in flat)


def _is_tensor_part(part: Any) -> bool:
    return isinstance(part, tuple) and len(part) == 4 and isinstance(part[0], tuple)


def _erase(key: tuple) -> tuple:
    """A guard key with each tensor's shape replaced by its number of dims."""
    return tuple((len(p[0]), *p[1:]) if _is_tensor_part(p) else p for p in key)


def _fits(flat: list, patterns: dict) -> bool:
    """Whether the flat arguments' shapes fit an entry's patterns (static sizes, and
    ``(a, c)`` dims that are ``a * s + c`` of one size ``s`` of at least 2)."""
    size = None
    for k, pattern in patterns.items():
        shape = flat[k].shape
        if len(shape) != len(pattern):
            return False
        for n, p in zip(shape, pattern):
            if isinstance(p, int):
                if n != p:
                    return False
                continue
            a, c = p
            if size is None:
                if (n - c) % a or (n - c) // a < 2:
                    return False
                size = (n - c) // a
            elif n != a * size + c:
                return False
    return True


def _guard_key(args: tuple, kwargs: dict, sizes: bool = True) -> Any:
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
            shape = data.shape if sizes else data.ndim
            parts.append((shape, data.dtype, a._device, a.requires_grad))
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


def _slots(guards: list) -> list:
    """Where each tensor of `_module_state` is held: its dict and key, in the same order."""
    return [(store, name) for store, name, v in guards if isinstance(v, tocha.Tensor)]


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
    from ._backends import resolve

    chosen = resolve(backend)
    if isinstance(chosen, Builtin) and chosen.fuse and compilable_step(model):
        return compile_step(model)
    if isinstance(model, tocha.nn.Module):
        compiled = CompiledFunction(model.__call__, model, chosen, fullgraph, dynamic, mode)
        return OptimizedModule(model, compiled)
    owner = getattr(model, "__self__", None)
    module = owner if isinstance(owner, tocha.nn.Module) else None
    return CompiledFunction(model, module, chosen, fullgraph, dynamic, mode)
