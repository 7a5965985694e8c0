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
    frozen = _freeze(mod.compiled(), keep)
    result = frozen if isinstance(frozen, ScriptModule) else wrap_native(frozen)
    result.__dict__["_frozen"] = True
    return result


def _constant(t: tocha.Tensor | None) -> tocha.Tensor | None:
    return None if t is None else t.detach()


def _freeze(module: nn.Module, keep: set[str]) -> nn.Module:
    """The frozen copy of ``module``'s tree; methods are inlined once the tree is built."""
    frozen = _copy(module, keep)
    stored = {
        id(node): _stored(node) | (keep - {"forward"}) if node is frozen else _stored(node)
        for node in frozen.modules()
    }
    for node in frozen.modules():
        if isinstance(node, ScriptModule):
            for name, method in node._methods.items():
                if isinstance(method, CompiledFunction):
                    node._methods[name] = _inline(method, node, stored)
    return frozen


def _stored(module: nn.Module) -> set[str]:
    """The attributes a module's methods assign (``self.x = ...``, ``self.x += ...``): they
    stay attributes, as PyTorch keeps the state that forward mutates."""
    if not isinstance(module, ScriptModule):
        return set()
    names = set()
    for method in module._methods.values():
        if isinstance(method, CompiledFunction):
            self_name = method.tree.args.args[0].arg if method.tree.args.args else "self"
            for node in ast.walk(method.tree):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Store)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == self_name
                ):
                    names.add(node.attr)
    return names


def _copy(module: nn.Module, keep: set[str]) -> nn.Module:
    if isinstance(module, ScriptModule) and module._native is not None:
        return _copy(module._native, keep)
    constants = {
        **{n: _constant(p) for n, p in module._parameters.items()},
        **{n: _constant(b) for n, b in module._buffers.items()},
    }
    children = {n: None if c is None else _copy(c, {"forward"}) for n, c in module._modules.items()}
    if not isinstance(module, ScriptModule):
        copied = type(module).__new__(type(module))
        copied.__dict__.update(module.__dict__)
        copied.__dict__.update(_parameters={}, _buffers=constants, _modules=children)
        return copied
    frozen = RecursiveScriptModule(module.original_name, module.qualified_name)
    frozen.training = False
    for name, value in constants.items():
        frozen.__dict__[name] = value
        frozen._script_attrs.add(name)
    for name in module._script_attrs:
        frozen.__dict__[name] = module.__dict__[name]
        frozen._script_attrs.add(name)
    frozen._modules.update(children)
    pending = [n for n in module._methods if n in keep]
    while pending:
        name = pending.pop()
        if name in frozen._methods:
            continue
        frozen._methods[name] = method = module._methods[name]
        code = method.code if isinstance(method, CompiledFunction) else ""
        pending.extend(n for n in module._methods if f".{n}(" in code)
    return frozen


class _Inliner(ast.NodeTransformer):
    """Replaces reads of frozen state (``self.weight``, ``self.fc.bias``,
    ``getattr(self.layers, '0').weight``) by names bound to the constant tensors."""

    def __init__(self, self_name: str, root: nn.Module, stored: dict[int, set[str]]) -> None:
        self.self_name = self_name
        self.root = root
        self.stored = stored
        self.constants: dict[str, tocha.Tensor] = {}
        self.ids: dict[int, str] = {}

    def member(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Name):
            return self.root if node.id == self.self_name else None
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            base, name = self.member(node.value), node.attr
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) == 2
            and not node.keywords
            and isinstance(node.args[1], ast.Constant)
        ):
            base, name = self.member(node.args[0]), node.args[1].value
        else:
            return None
        if not isinstance(base, nn.Module) or name in self.stored.get(id(base), ()):
            return None
        if name in base._modules:
            return base._modules[name]
        if name in base._buffers:
            return base._buffers[name]
        if isinstance(base, ScriptModule) and name in base._script_attrs:
            value = base.__dict__[name]
            return value if isinstance(value, tocha.Tensor) else None
        return None

    def replace(self, node: ast.AST) -> ast.AST | None:
        value = self.member(node)
        if not isinstance(value, tocha.Tensor):
            return None
        name = self.ids.setdefault(id(value), f"CONSTANTS_c{len(self.ids)}")
        self.constants[name] = value
        return ast.copy_location(ast.Name(name, ast.Load()), node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:  # noqa: N802
        return self.replace(node) or self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:  # noqa: N802
        return self.replace(node) or self.generic_visit(node)


def _inline(
    method: CompiledFunction, owner: nn.Module, stored: dict[int, set[str]]
) -> CompiledFunction:
    tree = copy.deepcopy(method.tree)
    self_name = tree.args.args[0].arg if tree.args.args else "self"
    inliner = _Inliner(self_name, owner, stored)
    tree.body = [inliner.visit(statement) for statement in tree.body]
    ast.fix_missing_locations(tree)
    globals_ = dict(method.globals)
    refs = dict(method.refs)
    for name, value in inliner.constants.items():
        globals_[name] = value
        refs[name] = {"kind": "tensor"}
    inlined = CompiledFunction(
        tree, method.source, method=method.method, qualname=method.qualname,
        defaults=method.defaults, globals_=globals_, refs=refs,
    )  # fmt: skip
    inlined.unused = method.unused
    return inlined


def optimize_for_inference(
    mod: ScriptModule, other_methods: list[str] | None = None
) -> ScriptModule:
    """Freeze ``mod`` (switching it to eval mode first) and fold batch norms into the
    convolutions they follow in ``Sequential`` containers, for running inference.

    Raises:
        RuntimeError: if ``mod`` is not a ScriptModule.
    """
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "optimize_for_inference expects a ScriptModule as input. Please use torch.jit.script "
            "or torch.jit.trace to script your 'nn.Module'."
        )
    frozen = mod if getattr(mod, "_frozen", False) else freeze(mod.eval(), other_methods)
    for module in [frozen._native, *frozen.modules()]:
        if isinstance(module, nn.Sequential):
            _fold_conv_batch_norm(module)
    return frozen


_CONVS = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
_NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)


def _fold_conv_batch_norm(sequential: nn.Sequential) -> None:
    """Fold each batch norm that follows a convolution in ``sequential`` into the
    convolution's (constant) weight and bias, and replace it by ``Identity``:
    ``w' = w * g / sqrt(v + eps)``, ``b' = (b - m) * g / sqrt(v + eps) + beta``."""
    names = list(sequential._modules)
    for first, second in zip(names, names[1:]):
        conv, norm = sequential._modules[first], sequential._modules[second]
        if not (isinstance(conv, _CONVS) and isinstance(norm, _NORMS)):
            continue
        mean, var = norm._buffers.get("running_mean"), norm._buffers.get("running_var")
        if mean is None or var is None:
            continue
        gamma = norm._buffers.get("weight")
        beta = norm._buffers.get("bias")
        scale = tocha.rsqrt(var + norm.eps)
        if gamma is not None:
            scale = scale * gamma
        weight = conv._buffers["weight"]
        bias = conv._buffers.get("bias")
        shift = -mean if bias is None else bias - mean
        conv._buffers["weight"] = weight * scale.reshape(-1, *([1] * (weight.dim() - 1)))
        conv._buffers["bias"] = shift * scale + (0 if beta is None else beta)
        sequential._modules[second] = nn.Identity()
