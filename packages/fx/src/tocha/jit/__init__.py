"""tocha.jit: TorchScript's API: `script`, `trace`, `save`/`load`, `freeze`.

`script` checks a function's or module's source against TorchScript's subset and runs it
in a small interpreter of that subset (never ``exec``); `trace` records a module's tensor
operations through `tocha.export` and keeps them as generated code the same interpreter
runs. Both give `ScriptFunction`/`RecursiveScriptModule` objects with ``.code`` and
``.graph``.

File format (`save`/`load`): a zip archive (stored, not compressed) holding

- ``model.json``: ``{"format": "tocha-jit", "version": 1, "root": node, "functions": {...}}``.
  A *node* is a module: ``{"kind": "script", "original_name", "qualified_name",
  "training", "parameters": {name: key}, "buffers": {name: key}, "non_persistent": [...],
  "modules": {name: node}, "attributes": {name: value}, "methods": {name: method}}``, or
  a built-in ``tocha.nn`` module, ``{"kind": "native", "class": "tocha.nn.Linear",
  "training", "parameters", "buffers", "non_persistent", "modules", "state": {name:
  value}}`` (``state`` is its ``__dict__`` less ``nn.Module``'s own entries), or, as the
  root only, ``{"kind": "function", "name": ...}`` for a saved function. A *method* (and
  each entry of ``functions``, keyed by qualified name) is ``{"code": source text,
  "refs": {global name: reference}, "defaults": {argument: value}, "unused": bool}``. A
  reference says what a free name of the code is: ``{"kind": "path", "path":
  "tocha.nn.functional.relu"}``, ``{"kind": "builtin", "name": "range"}``, ``{"kind":
  "const", "value": value}``, ``{"kind": "typing", "name": "List"}``, ``{"kind":
  "tensor", "key": key}`` (a constant of a frozen model) or ``{"kind": "function",
  "name": ...}`` (an entry of ``functions``). A value is JSON (None, bool, int, float,
  str) or a one-key object: ``{"tuple": [...]}``, ``{"list": [...]}``, ``{"set": [...]}``,
  ``{"dict": [[key, value], ...]}``, ``{"tensor": key}``, ``{"path": "tocha.float32"}``
  (a dtype or another allowlisted object) or ``{"device": "cpu"}``.
- ``tensors.pt``: ``{key: tensor}`` for every parameter, buffer and tensor value, written by
  `tocha.save` (PyTorch's checkpoint format) and read with ``weights_only=True``.
- ``extra/<name>``: the ``_extra_files``.

Loading never imports the model's classes: code is parsed and checked like scripted source,
names resolve only through the allowlist of `tocha.jit._resolve` (public functions of
``tocha``, ``tocha.nn.functional``, ``math``...; no attribute whose name starts with
``_``; nothing that reads or writes files), built-in modules are re-created only from
classes published in ``tocha.nn``, so a file cannot run arbitrary code.
"""

from typing import Final

from . import frontend
from ._decorators import (
    Attribute,
    annotate,
    export,
    ignore,
    interface,
    is_scripting,
    is_tracing,
    isinstance,
    script_if_tracing,
    script_method,
    unused,
)
from ._freeze import freeze, optimize_for_inference
from ._fusion import enable_onednn_fusion, onednn_fusion_enabled, set_fusion_strategy, strict_fusion
from ._futures import Future, fork, wait
from ._interp import Error
from ._module import RecursiveScriptModule, ScriptFunction, ScriptModule
from ._script import script
from ._serialize import load, save
from ._trace import TracerWarning, TracingCheckError, trace, trace_module

__all__ = [
    "Attribute",
    "Error",
    "Final",
    "Future",
    "RecursiveScriptModule",
    "ScriptFunction",
    "ScriptModule",
    "TracerWarning",
    "TracingCheckError",
    "annotate",
    "enable_onednn_fusion",
    "export",
    "fork",
    "freeze",
    "frontend",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "isinstance",
    "load",
    "onednn_fusion_enabled",
    "optimize_for_inference",
    "save",
    "script",
    "script_if_tracing",
    "script_method",
    "set_fusion_strategy",
    "strict_fusion",
    "trace",
    "trace_module",
    "unused",
    "wait",
]
