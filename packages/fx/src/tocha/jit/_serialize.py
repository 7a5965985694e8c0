"""`save` and `load`: scripted and traced models in a zip of JSON, sources and tensors.

The format is described in `tocha.jit`'s module docstring.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from typing import Any

import tocha
import tocha.nn as nn

from ._compile import CompiledFunction, compile_saved
from ._module import (
    RecursiveScriptModule,
    ScriptFunction,
    ScriptModule,
    reserved,
    wrap_native,
)
from ._resolve import ResolutionError, from_path, path_of

FORMAT = "tocha-jit"
VERSION = 1
_INFRA = frozenset(vars(nn.Module()))


def save(m: ScriptModule | ScriptFunction, f: Any, _extra_files: dict | None = None) -> None:
    """Save a scripted or traced module (or a scripted function) to ``f``.

    Args:
        m: what `tocha.jit.script` or `tocha.jit.trace` returned.
        f: a path or a writable binary file.
        _extra_files: names mapped to ``str``/``bytes`` contents, stored beside the model.

    Raises:
        RuntimeError: if the model calls a function marked `tocha.jit.ignore` (PyTorch
            refuses to export those calls) or holds state that cannot be saved.
    """
    if not isinstance(m, (ScriptModule, ScriptFunction)):
        raise AttributeError(f"'{type(m).__name__}' object has no attribute 'save'")
    writer = _Writer()
    if isinstance(m, ScriptFunction):
        writer.function(m)
        root: dict = {"kind": "function", "name": m.qualified_name}
    else:
        root = writer.module(m)
    document = {"format": FORMAT, "version": VERSION, "root": root, "functions": writer.functions}
    tensors = io.BytesIO()
    tocha.save(writer.tensors, tensors)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("model.json", json.dumps(document, indent=1))
        archive.writestr("tensors.pt", tensors.getvalue())
        for name, content in (_extra_files or {}).items():
            archive.writestr(f"extra/{name}", content)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            out.write(buffer.getvalue())
    else:
        f.write(buffer.getvalue())


class _Writer:
    def __init__(self) -> None:
        self.tensors: dict[str, tocha.Tensor] = {}
        self.functions: dict[str, dict] = {}
        self._keys: dict[int, str] = {}

    def tensor(self, t: tocha.Tensor) -> str:
        key = self._keys.get(id(t))
        if key is None:
            key = self._keys[id(t)] = str(len(self._keys))
            self.tensors[key] = t
        return key

    def value(self, v: Any, where: str) -> Any:
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, tocha.Tensor):
            return {"tensor": self.tensor(v)}
        if isinstance(v, tuple):
            return {"tuple": [self.value(x, where) for x in v]}
        if isinstance(v, list):
            return {"list": [self.value(x, where) for x in v]}
        if isinstance(v, set):
            return {"set": [self.value(x, where) for x in sorted(v, key=repr)]}
        if isinstance(v, dict):
            return {"dict": [[self.value(k, where), self.value(x, where)] for k, x in v.items()]}
        path = path_of(v)
        if path is not None:
            return {"path": path}
        if isinstance(v, tocha.device):
            return {"device": str(v)}
        raise RuntimeError(f"cannot save {where}: a value of type '{type(v).__name__}'")

    def method(self, compiled: Any, where: str) -> dict:
        if not isinstance(compiled, CompiledFunction):
            raise RuntimeError(
                f"Could not export Python function call '{compiled.__name__}'. Remove calls to "
                "Python functions before export. Did you forget to add @script or "
                "@script_method annotation? If this is a nn.ModuleList, add it to __constants__"
            )
        for key, ref in compiled.refs.items():
            if ref["kind"] == "ignored":
                raise RuntimeError(
                    f"Could not export Python function call '{ref['name']}'. Remove calls to "
                    "Python functions before export. Did you forget to add @script or "
                    "@script_method annotation? If this is a nn.ModuleList, add it to "
                    "__constants__"
                )
            if ref["kind"] == "class":
                raise RuntimeError(
                    f"Could not save code using the TorchScript class '{ref['name']}': tocha's "
                    "files hold no class definitions"
                )
            if ref["kind"] == "function":
                self.function(compiled.globals[key])
        return {
            "code": compiled.code,
            "refs": {k: self._ref(k, compiled) for k in compiled.refs},
            "defaults": {k: self.value(v, where) for k, v in compiled.defaults.items()},
            "unused": compiled.unused,
        }

    def _ref(self, key: str, compiled: CompiledFunction) -> dict:
        ref = compiled.refs[key]
        if ref["kind"] == "const":
            return {"kind": "const", "value": self.value(ref["value"], "a constant")}
        if ref["kind"] == "tensor":
            return {"kind": "tensor", "key": self.tensor(compiled.globals[key])}
        return ref

    def function(self, fn: ScriptFunction) -> None:
        if fn.qualified_name not in self.functions:
            self.functions[fn.qualified_name] = {}
            self.functions[fn.qualified_name] = self.method(fn._compiled, fn.qualified_name)

    def members(self, m: nn.Module) -> dict:
        return {
            "training": m.training,
            "parameters": {
                n: None if p is None else self.tensor(p) for n, p in m._parameters.items()
            },
            "buffers": {n: None if b is None else self.tensor(b) for n, b in m._buffers.items()},
            "non_persistent": sorted(m._non_persistent_buffers_set),
            "modules": {n: None if c is None else self.module(c) for n, c in m._modules.items()},
        }

    def module(self, m: nn.Module) -> dict:
        if isinstance(m, ScriptModule):
            m = m.compiled()
        if isinstance(m, ScriptModule) and m._native is not None:
            m = m._native
        if isinstance(m, ScriptModule):
            return {
                "kind": "script",
                "original_name": m.original_name,
                "qualified_name": m.qualified_name,
                **self.members(m),
                "attributes": {
                    n: self.value(m.__dict__[n], f"attribute '{n}'")
                    for n in sorted(m._script_attrs)
                },
                "methods": {n: self.method(c, n) for n, c in m._methods.items()},
            }
        from ._script import trusted

        cls = type(m)
        if not trusted(cls):
            raise RuntimeError(f"cannot save module of type '{cls.__name__}': script it first")
        state = {
            n: self.value(v, f"attribute '{n}' of {cls.__name__}")
            for n, v in vars(m).items()
            if n not in _INFRA
        }
        return {"kind": "native", "class": f"tocha.nn.{cls.__name__}", **self.members(m),
                "state": state}  # fmt: skip


def load(f: Any, map_location: Any = None, _extra_files: dict | None = None) -> Any:
    """Load a model written by `save`, without importing the model's Python classes.

    Args:
        f: a path or a readable binary file.
        map_location: where tensors go, as for `tocha.load`.
        _extra_files: names to read back; their contents (bytes) are filled in.

    Returns:
        A `RecursiveScriptModule` (or a `ScriptFunction` for a saved function).

    Raises:
        RuntimeError: for a file that is not a tocha.jit archive, or whose code or state
            uses anything outside what scripted code may use.
    """
    if isinstance(f, (str, os.PathLike)):
        if not os.path.exists(f):
            raise ValueError(f"The provided filename {os.fspath(f)} does not exist")
        if os.path.isdir(f):
            raise ValueError(f"The provided filename {os.fspath(f)} is a directory")
        with open(f, "rb") as stream:
            data = stream.read()
    else:
        data = f.read()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        if "model.json" not in archive.namelist() and any(
            n.endswith("constants.pkl") or "/code/" in n for n in archive.namelist()
        ):
            raise RuntimeError(
                "this is a TorchScript archive written by PyTorch (compiled TorchScript code); "
                "tocha.jit.load reads the archives tocha.jit.save writes. Load the model's "
                "state_dict with tocha.load instead, or export it again from PyTorch."
            )
        document = json.loads(archive.read("model.json"))
        tensor_bytes = archive.read("tensors.pt")
    except (zipfile.BadZipFile, KeyError, ValueError) as error:
        raise RuntimeError(f"not a tocha.jit archive: {error}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise RuntimeError("not a tocha.jit archive (no 'tocha-jit' format marker)")
    tensors = tocha.load(io.BytesIO(tensor_bytes), map_location=map_location, weights_only=True)
    if _extra_files is not None:
        present = set(archive.namelist())
        for name in _extra_files:
            if f"extra/{name}" in present:
                _extra_files[name] = archive.read(f"extra/{name}")
    try:
        return _Reader(document, tensors).root()
    except ResolutionError:
        raise
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as error:
        raise RuntimeError(f"malformed tocha.jit archive: {error!r}") from None


class _Reader:
    def __init__(self, document: dict, tensors: dict) -> None:
        self.document = document
        self.tensors = tensors
        self.functions: dict[str, ScriptFunction] = {
            name: ScriptFunction(None, name) for name in document.get("functions", {})
        }
        for name, entry in document.get("functions", {}).items():
            self.functions[name]._compiled = self.method(entry, name, method=False)

    def root(self) -> Any:
        root = self.document["root"]
        if root.get("kind") == "function":
            return self.functions[root["name"]]
        module = self.module(root)
        return module if isinstance(module, ScriptModule) else wrap_native(module)

    def method(self, entry: dict, qualname: str, method: bool) -> CompiledFunction:
        refs = {k: self.ref(r) for k, r in entry["refs"].items()}
        defaults = {k: self.value(v) for k, v in entry["defaults"].items()}
        compiled = compile_saved(entry["code"], qualname, method, refs, defaults, self.functions)
        compiled.unused = bool(entry.get("unused"))
        return compiled

    def ref(self, ref: dict) -> dict:
        if ref.get("kind") == "const":
            return {"kind": "const", "value": self.value(ref["value"])}
        if ref.get("kind") == "tensor":
            return {"kind": "tensor", "value": self.tensors[ref["key"]]}
        return ref

    def value(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if not isinstance(v, dict) or len(v) != 1:
            raise ResolutionError(f"malformed value in tocha.jit archive: {v!r}")
        ((tag, body),) = v.items()
        if tag == "tensor":
            return self.tensors[body]
        if tag in ("tuple", "list", "set"):
            items = [self.value(x) for x in body]
            return {"tuple": tuple, "list": list, "set": set}[tag](items)
        if tag == "dict":
            return {self.value(k): self.value(x) for k, x in body}
        if tag == "path":
            return from_path(body)
        if tag == "device":
            return tocha.device(body)
        raise ResolutionError(f"unknown value tag '{tag}' in tocha.jit archive")

    def members(self, module: nn.Module, node: dict) -> None:
        module.training = bool(node["training"])
        for name, key in node["parameters"].items():
            param = None if key is None else self.tensors[key]
            if param is not None and not isinstance(param, nn.Parameter):
                param = nn.Parameter(param, requires_grad=param.requires_grad)
            module._parameters[name] = param
        for name, key in node["buffers"].items():
            module._buffers[name] = None if key is None else self.tensors[key]
        module._non_persistent_buffers_set.update(node["non_persistent"])
        for name, child in node["modules"].items():
            module._modules[name] = None if child is None else self.module(child)

    def module(self, node: dict) -> nn.Module:
        kind = node.get("kind")
        if kind == "native":
            return self.native(node)
        if kind != "script":
            raise ResolutionError(f"unknown module kind '{kind}' in tocha.jit archive")
        module = RecursiveScriptModule(str(node["original_name"]), str(node["qualified_name"]))
        self.members(module, node)
        for name, value in node["attributes"].items():
            _check_name(name)
            if reserved(name):
                raise ResolutionError(f"attribute name '{name}' is reserved")
            module.__dict__[name] = self.value(value)
            module._script_attrs.add(name)
        for name, entry in node["methods"].items():
            _check_name(name)
            qualname = f"{module.qualified_name}.{name}"
            module._methods[name] = self.method(entry, qualname, method=True)
        return module

    def native(self, node: dict) -> nn.Module:
        from ._script import trusted

        path = node["class"]
        cls = from_path(path) if isinstance(path, str) and path.startswith("tocha.nn.") else None
        if not (isinstance(cls, type) and issubclass(cls, nn.Module) and trusted(cls)):
            raise ResolutionError(f"'{path}' is not a built-in tocha.nn module")
        module = cls.__new__(cls)
        nn.Module.__init__(module)
        for name, value in node["state"].items():
            if name in _INFRA or not isinstance(name, str) or name.startswith("__"):
                raise ResolutionError(f"attribute '{name}' may not be set on {cls.__name__}")
            module.__dict__[name] = self.value(value)
        self.members(module, node)
        return module


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
        raise ResolutionError(f"invalid member name {name!r} in tocha.jit archive")
