"""`freeze` and `optimize_for_inference`: parameters and buffers become constants."""

from __future__ import annotations

import ast
import copy
from typing import Any

import tocha
import tocha.nn as nn

from ._compile import CompiledFunction
from ._module import RecursiveScriptModule, ScriptModule, wrap_native


def freeze(
    mod: ScriptModule, preserved_attrs: list[str] | None = None, optimize_numerics: bool = True
) -> RecursiveScriptModule:
    """A copy of a scripted module in eval mode whose parameters and buffers are constants.

    The frozen module has no parameters: its methods read detached tensors, which ``.code``
    names ``CONSTANTS_c0``, ``CONSTANTS_c1``... instead of ``self.weight``. Methods other than
    ``forward`` are kept only when listed in ``preserved_attrs``.

    Raises:
        RuntimeError: if ``mod`` is not a ScriptModule or is in training mode.
    """
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "Freezing expects a ScriptModule as input. Please use torch.jit.script or "
            "torch.jit.trace to script your 'nn.Module'."
        )
    if mod.training:
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. Please call "
            ".eval() on your module before freezing."
        )
    keep = {"forward", *(preserved_attrs or ())}
    frozen = _freeze(mod, keep)
    result = frozen if isinstance(frozen, ScriptModule) else wrap_native(frozen)
    result.__dict__["_frozen"] = True
    return result


def _constant(t: tocha.Tensor | None) -> tocha.Tensor | None:
    return None if t is None else t.detach()


def _freeze(module: nn.Module, keep: set[str]) -> nn.Module:
    if isinstance(module, ScriptModule) and module._native is not None:
        return _freeze(module._native, keep)
    if not isinstance(module, ScriptModule):
        copied = type(module).__new__(type(module))
        copied.__dict__.update(module.__dict__)
        copied.__dict__["_parameters"] = {}
        copied.__dict__["_buffers"] = {
            **{n: _constant(p) for n, p in module._parameters.items()},
            **{n: _constant(b) for n, b in module._buffers.items()},
        }
        copied.__dict__["_modules"] = {
            n: None if c is None else _freeze(c, {"forward"}) for n, c in module._modules.items()
        }
        return copied
    frozen = RecursiveScriptModule(module.original_name, module.qualified_name)
    frozen.training = False
    constants = {
        **{n: _constant(p) for n, p in module._parameters.items()},
        **{n: _constant(b) for n, b in module._buffers.items()},
    }
    for name, value in constants.items():
        frozen.__dict__[name] = value
        frozen._script_attrs.add(name)
    for name in module._script_attrs:
        frozen.__dict__[name] = module.__dict__[name]
        frozen._script_attrs.add(name)
    for name, child in module._modules.items():
        frozen._modules[name] = None if child is None else _freeze(child, set(keep) | {"forward"})
    for name, method in module._methods.items():
        if name in keep or not isinstance(method, CompiledFunction):
            frozen._methods[name] = (
                _inline(method, constants) if isinstance(method, CompiledFunction) else method
            )
    for name, method in module._methods.items():
        if name not in frozen._methods and _called(frozen, name):
            frozen._methods[name] = _inline(method, constants)
    return frozen


def _called(frozen: RecursiveScriptModule, name: str) -> bool:
    return any(
        isinstance(m, CompiledFunction) and f"self.{name}(" in m.code
        for m in frozen._methods.values()
    )


class _Inliner(ast.NodeTransformer):
    def __init__(self, self_name: str, constants: dict[str, Any]) -> None:
        self.self_name = self_name
        self.constants = constants
        self.names: dict[str, str] = {}

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:  # noqa: N802
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == self.self_name
            and isinstance(node.ctx, ast.Load)
            and node.attr in self.constants
            and self.constants[node.attr] is not None
        ):
            name = self.names.setdefault(node.attr, f"CONSTANTS_c{len(self.names)}")
            return ast.copy_location(ast.Name(name, ast.Load()), node)
        return self.generic_visit(node)


def _inline(method: CompiledFunction, constants: dict[str, Any]) -> CompiledFunction:
    tree = copy.deepcopy(method.tree)
    self_name = tree.args.args[0].arg if tree.args.args else "self"
    inliner = _Inliner(self_name, constants)
    tree = inliner.visit(tree)
    ast.fix_missing_locations(tree)
    globals_ = dict(method.globals)
    refs = dict(method.refs)
    for attr, name in inliner.names.items():
        globals_[name] = constants[attr]
        refs[name] = {"kind": "tensor"}
    inlined = CompiledFunction(
        tree, method.source, method=method.method, qualname=method.qualname,
        defaults=method.defaults, globals_=globals_, refs=refs,
    )  # fmt: skip
    if getattr(method, "unused", False):
        inlined.unused = True
    return inlined


def optimize_for_inference(
    mod: ScriptModule, other_methods: list[str] | None = None
) -> ScriptModule:
    """Freeze ``mod`` (switching it to eval mode first) for running inference.

    Raises:
        RuntimeError: if ``mod`` is not a ScriptModule.
    """
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "optimize_for_inference expects a ScriptModule as input. Please use torch.jit.script "
            "or torch.jit.trace to script your 'nn.Module'."
        )
    if getattr(mod, "_frozen", False):
        return mod
    return freeze(mod.eval(), preserved_attrs=other_methods)
