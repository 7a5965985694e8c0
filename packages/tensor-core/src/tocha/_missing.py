"""The error for a name that PyTorch has and tocha does not (yet): tocha's modules and
subpackages raise it from their module ``__getattr__``, so a program written for PyTorch
learns which ``torch.`` name it needs instead of failing deep inside tocha."""

from __future__ import annotations

__all__ = ["missing_attribute"]


def missing_attribute(module: str, name: str) -> AttributeError:
    """The AttributeError for ``<module>.<name>``, naming ``torch.<...>.<name>``."""
    torch_module = "torch" + module[len("tocha") :] if module.startswith("tocha") else module
    return AttributeError(
        f"module {module!r} has no attribute {name!r}: {torch_module}.{name} is not in tocha yet"
    )
