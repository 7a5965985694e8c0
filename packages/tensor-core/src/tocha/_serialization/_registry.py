"""What a checkpoint may name: the globals the user allows (``add_safe_globals``) and the
Tensor subclasses other distributions register (``register_tensor_type``).

Kept free of heavy imports: tocha-nn imports it to register ``Parameter``.
"""

from __future__ import annotations

from collections.abc import Callable

from ._names import torch_name

_safe_globals: list = []
_tensor_types: dict[str, tuple[type, Callable]] = {}
_names_of_types: dict[type, str] = {}

PARAMETER = "torch.nn.parameter.Parameter"


def qualified_name(obj) -> str:
    """``module.qualname`` of a class or function, as a checkpoint names it."""
    return f"{obj.__module__}.{obj.__qualname__}"


def safe_globals_by_name() -> dict[str, object]:
    """The user's allowed globals, keyed by the names a checkpoint gives them: a tocha class
    or function by PyTorch's name (as tocha and PyTorch write it) and by its own."""
    found = {}
    for entry in _safe_globals:
        if isinstance(entry, tuple):
            obj, name = entry
            found[name] = obj
        else:
            found[qualified_name(entry)] = entry
            torch = torch_name(entry)
            if torch is not None:
                found[torch] = entry
    return found


def _check_safe_globals(safe_globals) -> list:
    if not isinstance(safe_globals, list):
        raise TypeError(f"safe_globals must be a list, got {type(safe_globals).__name__}")
    for entry in safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2 or not isinstance(entry[1], str):
                raise ValueError(f"Expected tuple of (global, str of name), got {entry!r}")
        elif not hasattr(entry, "__module__") or not hasattr(entry, "__qualname__"):
            raise ValueError(f"{entry!r} has no __module__ and __qualname__: pass (obj, name)")
    return safe_globals


def add_safe_globals(safe_globals: list) -> None:
    """Allow these globals (or ``(global, "module.name")`` pairs) in ``weights_only`` loads."""
    _safe_globals.extend(_check_safe_globals(safe_globals))


def get_safe_globals() -> list:
    """The globals the user allowed for ``weights_only`` loads."""
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """Forget every global the user allowed."""
    _safe_globals.clear()


class safe_globals:  # noqa: N801 - PyTorch's name
    """A context manager that allows `safe_globals` for ``weights_only`` loads inside it."""

    def __init__(self, safe_globals: list):
        self.safe_globals = _check_safe_globals(safe_globals)

    def __enter__(self):
        self._saved = list(_safe_globals)
        _safe_globals.extend(self.safe_globals)

    def __exit__(self, *exc_info):
        _safe_globals[:] = self._saved


def register_tensor_type(cls: type, name: str, rebuild: Callable | None = None) -> None:
    """Let checkpoints hold instances of the Tensor subclass `cls`, recorded as `name`.

    `name` is the qualified name the file gives the type: tocha-nn registers ``Parameter``
    as ``"torch.nn.parameter.Parameter"``, so that its checkpoints and PyTorch's interchange.
    A registered type loads under ``weights_only=True``. `rebuild(tensor, requires_grad)`
    makes an instance from a loaded plain Tensor; by default the instance takes the tensor's
    data and the requires_grad flag is set on it.
    """
    from .._tensor import Tensor

    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"register_tensor_type expects a subclass of tocha.Tensor, got {cls!r}")
    _tensor_types[name] = (cls, rebuild or default_rebuild(cls))
    _names_of_types[cls] = name


def tensor_type(name: str):
    """The registered (cls, rebuild) of a recorded name, or None."""
    return _tensor_types.get(name)


def name_of_type(cls: type) -> str | None:
    """The name a registered Tensor subclass is recorded under, or None."""
    return _names_of_types.get(cls)


def default_rebuild(cls: type) -> Callable:
    """A rebuild for `cls` that gives a new instance the loaded tensor's slots."""

    def rebuild(tensor, requires_grad: bool):
        out = object.__new__(cls)
        for slot in ("_data", "_device", "_ag", "_base", "_vc"):
            setattr(out, slot, getattr(tensor, slot))
        if requires_grad:
            out.requires_grad_(True)
        return out

    return rebuild
