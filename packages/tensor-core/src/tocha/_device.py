"""`tocha.device`: where a tensor's memory lives (a device type and an optional index)."""

from __future__ import annotations

from typing import Any

__all__ = ["device"]

_INTERNED: dict[tuple[str, int | None], device] = {}


class device:
    """A device, as `torch.device`: ``device('cpu')``, ``device('cuda:1')``, ``device('cuda', 1)``.
    As a context manager, it is the default device of the tensors made inside.

    Devices are interned: equal devices are the same object, so equality and hashing are
    identity's (C-level, which the dispatcher's per-device kernel caches rely on), and
    ``device('cpu') == 'cpu'`` is False, as in PyTorch.
    """

    __slots__ = ("type", "index", "_backend")
    type: str
    index: int | None
    _backend: Any

    def __new__(cls, type, index: int | None = None):  # noqa: A002
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(): index must be None when passing a device")
            return type
        if isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments: {type!r}")
        key = (type, index)
        found = _INTERNED.get(key)
        if found is not None:
            return found
        name = type
        if ":" in type:
            if index is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was "
                    f"passed explicitly: {type}"
                )
            name, _, digits = type.partition(":")
            if not digits.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(digits)
        if not name or not name.replace("_", "").isalnum() or not name[0].isalpha():
            raise RuntimeError(f"Invalid device string: '{type}'")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index}")
        canonical = _INTERNED.get((name, index))
        if canonical is None:
            if name not in TORCH_DEVICE_TYPES:
                _check_device_type(name)
            canonical = object.__new__(cls)
            object.__setattr__(canonical, "type", name)
            object.__setattr__(canonical, "index", index)
            object.__setattr__(canonical, "_backend", None)
            _INTERNED[name, index] = canonical
        _INTERNED[key] = canonical
        return canonical

    def __setattr__(self, name, value):
        raise AttributeError("device objects are immutable")

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self) -> device:
        """``with device(...)``: the default device (`tocha.set_default_device`) inside."""
        from ._runtime import get_default_device, set_default_device

        _ENTERED.append(get_default_device())
        set_default_device(self)
        return self

    def __exit__(self, *exc) -> None:
        from ._runtime import set_default_device

        set_default_device(_ENTERED.pop())


# The default devices that ``with device(...)`` blocks replaced, innermost last.
_ENTERED: list = []


# The device types PyTorch knows, in the order its error message lists them; any other type
# must come from a backend plugin.
TORCH_DEVICE_TYPES = (
    "cpu cuda ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy vulkan mps meta hpu "
    "mtia privateuseone"
).split()


def _check_device_type(name: str) -> None:
    """RuntimeError, with PyTorch's message, for a type that neither PyTorch nor an
    installed backend plugin knows."""
    from ._backend import has_entry, no_backend_message

    if not has_entry(name):
        raise RuntimeError(
            f"Expected one of {', '.join(TORCH_DEVICE_TYPES)} device type at start of device "
            f"string: {name} ({no_backend_message(name)})"
        )


CPU = device("cpu")
# Where factories put tensors when no device is given (`tocha.set_default_device`).
DEFAULT = CPU
