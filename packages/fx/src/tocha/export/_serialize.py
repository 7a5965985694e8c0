"""`save` and `load` of an `ExportedProgram`.

The file is a zip archive (stored, not compressed) holding:

``program.json``
    ``{"format": "tocha.export", "version": 1, "nodes": [...], "input_specs": [...],
    "output_specs": [...], "range_constraints": [[symbol, lower, upper or null], ...],
    "input_layout": [[argument name, layout], ...], "output_layout": layout,
    "input_checks": [[label, sizes (null where dynamic), {dim: [min, max or null, symbol]}],
    ...]}``.

    A node is ``{"name", "op" ("placeholder", "call_function" or "output"), "target" (a
    dotted name, below), "args", "kwargs", "meta", "nn_module_stack"}``: the module calls it
    was made in are ``[[key, qualified path, module type], ...]``, outermost first; its meta
    is ``{"dtype", "shape"}`` (a dynamic size written ``{"size": example, "name": "s0"}``),
    ``{"tuple": [meta or null, ...]}`` for a tuple of tensors, or ``{"int": example,
    "expr": "s0"}`` for a size.
    Arguments are JSON values, and ``{"node": name}``, ``{"tuple": [...]}``,
    ``{"list": [...]}``, ``{"dict": [[key, value], ...]}``, ``{"slice": [start, stop,
    step]}``, ``{"ellipsis": true}``, ``{"dtype": "float32"}``, ``{"device": "cpu"}``,
    ``{"memory_format": "contiguous_format"}``.
    A spec is ``{"kind", "arg": {"tensor": name} | {"symint": name} | {"const": value},
    "target", "persistent"}``. A layout nests the flat inputs or outputs: ``{"leaf": i}``,
    ``{"tuple": [...]}``, ``{"list": [...]}``, ``{"dict": [[key, layout], ...]}``,
    ``{"const": value}``.
``tensors.pt``
    ``{"state_dict": {...}, "constants": {...}, "examples": {"args": [...], "kwargs":
    {...}}}``, written by `tocha.save` (the example inputs only when they hold nothing but
    tensors and plain values).
``extra/<name>``
    the caller's extra files.

Loading runs no code from the file: the JSON is data, the tensors are read with
``tocha.load(weights_only=True)``, and each call target is resolved by its dotted name
against an allowlist (tocha's public functions and Tensor methods, ``tocha.export.ops``
primitives, ``operator`` functions, ``builtins.getattr`` of a public attribute named in the
file); any other name (``os.system``) raises ValueError.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import zipfile
from typing import IO, Any

import tocha
from tocha.fx.graph import Graph
from tocha.fx.graph_module import GraphModule

from ._dims import Symbol, ValueRanges, int_oo
from ._symint import SizeName
from ._targets import resolve, target_name
from ._tracer import named_placeholder, tensor_metadata
from .exported_program import ExportedProgram
from .graph_signature import (
    ConstantArgument,
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    SymIntArgument,
    TensorArgument,
)

__all__ = ["load", "save"]

_FORMAT = "tocha.export"
_VERSION = 1


def save(
    ep: ExportedProgram,
    f: str | os.PathLike[str] | IO[bytes],
    *,
    extra_files: dict[str, Any] | None = None,
    opset_version: dict[str, int] | None = None,
    pickle_protocol: int = 2,
) -> None:
    """Write `ep` to `f` (a path or a binary file) in the format of this module's docstring.
    `opset_version` and `pickle_protocol` are accepted for PyTorch's signature."""
    if not isinstance(ep, ExportedProgram):
        raise TypeError(
            "The 'ep' parameter must be an instance of 'ExportedProgram', got "
            f"'{type(ep).__name__}' instead."
        )
    program = {
        "format": _FORMAT,
        "version": _VERSION,
        "nodes": [_node(n) for n in ep.graph.nodes],
        "input_specs": [_spec(s) for s in ep.graph_signature.input_specs],
        "output_specs": [_spec(s) for s in ep.graph_signature.output_specs],
        "range_constraints": [
            [str(k), v.lower, v.upper if isinstance(v.upper, int) else None]
            for k, v in ep.range_constraints.items()
        ],
        "input_layout": [[name, layout] for name, layout in ep.call_spec[0]],
        "output_layout": ep.call_spec[1],
        "input_checks": ep._input_checks,
    }
    tensors = io.BytesIO()
    args, kwargs = ep.example_inputs
    examples = (
        {"args": list(args), "kwargs": dict(kwargs)} if _plain_tensors(ep.example_inputs) else {}
    )
    tocha.save(
        {"state_dict": dict(ep.state_dict), "constants": dict(ep.constants), "examples": examples},
        tensors,
    )
    target = f if not isinstance(f, (str, os.PathLike)) else open(f, "wb")
    try:
        with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
            archive.writestr("program.json", json.dumps(program))
            archive.writestr("tensors.pt", tensors.getvalue())
            for name, content in (extra_files or {}).items():
                archive.writestr(f"extra/{name}", content)
    finally:
        if target is not f:
            target.close()


def load(
    f: str | os.PathLike[str] | IO[bytes],
    *,
    extra_files: dict[str, Any] | None = None,
    expected_opset_version: dict[str, int] | None = None,
) -> ExportedProgram:
    """Read an `ExportedProgram` written by `save`; `extra_files`' keys are filled with the
    saved extra files. Refuses (ValueError) a file that names a call target outside the
    allowlist or is not in this format."""
    source = f if not isinstance(f, (str, os.PathLike)) else open(f, "rb")
    try:
        with zipfile.ZipFile(source) as archive:
            program = json.loads(archive.read("program.json"))
            tensors = tocha.load(io.BytesIO(archive.read("tensors.pt")), weights_only=True)
            for name in list(extra_files or {}):
                extra_files[name] = archive.read(f"extra/{name}").decode()  # type: ignore[index]
    finally:
        if source is not f:
            source.close()
    if not isinstance(program, dict) or program.get("format") != _FORMAT:
        raise ValueError("not a tocha.export file")
    if program.get("version") != _VERSION:
        raise ValueError(f"unsupported tocha.export file version {program.get('version')!r}")
    graph = Graph()
    nodes: dict[str, Any] = {}
    for record in program["nodes"]:
        _load_node(graph, record, nodes)
    signature = ExportGraphSignature(
        [_load_input_spec(s) for s in program["input_specs"]],
        [_load_output_spec(s) for s in program["output_specs"]],
    )
    ranges = {
        Symbol(name): ValueRanges(lower, int_oo if upper is None else upper)
        for name, lower, upper in program["range_constraints"]
    }
    return ExportedProgram(
        GraphModule(tocha.nn.Module(), graph),
        signature,
        dict(tensors["state_dict"]),
        dict(tensors["constants"]),
        ranges,
        _examples(tensors.get("examples")),
        [(name, layout) for name, layout in program["input_layout"]],
        program["output_layout"],
        program["input_checks"],
    )


# -- writing --------------------------------------------------------------------------------


def _node(node: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"name": node.name, "op": node.op}
    if node.op == "call_function":
        record["target"] = target_name(node.target)
    elif node.op != "placeholder" and node.op != "output":
        raise ValueError(f"cannot save a node of kind {node.op}")
    record["args"] = _encode(node.args)
    record["kwargs"] = _encode(node.kwargs)
    meta = node.meta.get("tensor_meta")
    if hasattr(meta, "shape") and hasattr(meta, "dtype"):
        record["meta"] = _tensor_meta(meta)
    elif isinstance(meta, tuple):
        record["meta"] = {"tuple": [None if m is None else _tensor_meta(m) for m in meta]}
    elif isinstance(node.meta.get("val"), int):
        record["meta"] = {"int": int(node.meta["val"]), "expr": repr(node.meta["val"])}
    stack = node.meta.get("nn_module_stack")
    if stack:
        record["nn_module_stack"] = [[key, path, kind] for key, (path, kind) in stack.items()]
    return record


def _tensor_meta(meta: Any) -> dict[str, Any]:
    return {
        "dtype": _dtype_name(meta.dtype),
        "shape": [
            {"size": int(d), "name": repr(d)} if isinstance(d, SizeName) else int(d)
            for d in meta.shape
        ],
    }


def _encode(value: Any) -> Any:
    if hasattr(value, "op") and hasattr(value, "graph"):
        return {"node": value.name}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value
    if isinstance(value, tuple):
        return {"tuple": [_encode(v) for v in value]}
    if isinstance(value, list):
        return {"list": [_encode(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[k, _encode(v)] for k, v in value.items()]}
    if isinstance(value, slice):
        return {"slice": [_encode(value.start), _encode(value.stop), _encode(value.step)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, tocha.dtype):
        return {"dtype": _dtype_name(value)}
    if isinstance(value, tocha.device):
        return {"device": str(value)}
    if isinstance(value, tocha.memory_format):
        return {"memory_format": str(value).removeprefix("tocha.").removeprefix("torch.")}
    raise ValueError(f"cannot save an argument of type {type(value).__name__}: {value!r}")


def _spec(spec: Any) -> dict[str, Any]:
    arg = spec.arg
    if isinstance(arg, TensorArgument):
        encoded: dict[str, Any] = {"tensor": arg.name}
    elif isinstance(arg, SymIntArgument):
        encoded = {"symint": arg.name}
    else:
        encoded = {"const": _encode(arg.value), "name": arg.name}
    record = {"kind": spec.kind.name, "arg": encoded, "target": spec.target}
    if isinstance(spec, InputSpec):
        record["persistent"] = spec.persistent
    return record


def _plain_tensors(value: Any) -> bool:
    """Whether `value` holds only tensors, numbers, strings and None (in tuples, lists and
    dicts with string keys): what a weights-only load reads back."""
    if isinstance(value, (tuple, list)):
        return all(_plain_tensors(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_tensors(v) for k, v in value.items())
    return value is None or isinstance(value, (tocha.Tensor, bool, int, float, str))


# -- reading --------------------------------------------------------------------------------


def _examples(saved: Any) -> tuple[tuple, dict]:
    if not isinstance(saved, dict) or "args" not in saved:
        return (), {}
    return tuple(saved["args"]), dict(saved["kwargs"])


def _load_node(graph: Graph, record: dict[str, Any], nodes: dict[str, Any]) -> None:
    op = record["op"]
    name = record["name"]
    args = _decode(record.get("args", []), nodes)
    kwargs = _decode(record.get("kwargs", {}), nodes)
    if op == "placeholder":
        node = named_placeholder(graph, name)
    elif op == "call_function":
        target = resolve(str(record["target"]))
        if target is builtins.getattr and not (
            len(args) == 2 and isinstance(args[1], str) and not args[1].startswith("_")
        ):
            raise ValueError("refusing to load a getattr of a private or computed attribute")
        node = graph.create_node("call_function", target, tuple(args), dict(kwargs), name=name)
    elif op == "output":
        node = graph.output(args[0])
    else:
        raise ValueError(f"refusing to load a node of kind {op!r}")
    meta = record.get("meta")
    if isinstance(meta, dict) and "dtype" in meta:
        node.meta["val"], node.meta["tensor_meta"] = _load_tensor_meta(meta)
    elif isinstance(meta, dict) and "tuple" in meta:
        loaded = [None if m is None else _load_tensor_meta(m) for m in meta["tuple"]]
        node.meta["val"] = tuple(None if m is None else m[0] for m in loaded)
        node.meta["tensor_meta"] = tuple(None if m is None else m[1] for m in loaded)
    elif isinstance(meta, dict) and "int" in meta:
        node.meta["val"] = SizeName(int(meta["int"]), str(meta["expr"]))
    stack = record.get("nn_module_stack")
    if stack:
        node.meta["nn_module_stack"] = {str(k): (str(p), str(t)) for k, p, t in stack}
    nodes[name] = node


def _load_tensor_meta(meta: dict[str, Any]) -> tuple[tocha.Tensor, Any]:
    """An example (zeros) of the recorded dtype and sizes, and its tensor_meta."""
    shape = [
        SizeName(int(d["size"]), str(d["name"])) if isinstance(d, dict) else int(d)
        for d in meta["shape"]
    ]
    example = tocha.zeros([int(d) for d in shape], dtype=_dtype(meta["dtype"]))
    return example, tensor_metadata(example, shape)


def _decode(value: Any, nodes: dict[str, Any]) -> Any:
    if isinstance(value, list):
        return [_decode(v, nodes) for v in value]
    if not isinstance(value, dict):
        return value
    if "node" in value:
        return nodes[value["node"]]
    if "tuple" in value:
        return tuple(_decode(v, nodes) for v in value["tuple"])
    if "list" in value:
        return [_decode(v, nodes) for v in value["list"]]
    if "dict" in value:
        return {k: _decode(v, nodes) for k, v in value["dict"]}
    if "slice" in value:
        return slice(*(_decode(v, nodes) for v in value["slice"]))
    if "ellipsis" in value:
        return Ellipsis
    if "dtype" in value:
        return _dtype(value["dtype"])
    if "device" in value:
        return tocha.device(str(value["device"]))
    if "memory_format" in value:
        return _memory_format(str(value["memory_format"]))
    return {k: _decode(v, nodes) for k, v in value.items()}


def _memory_format(name: str) -> Any:
    value = getattr(tocha, name, None) if name.endswith("_format") else None
    if not isinstance(value, tocha.memory_format):
        raise ValueError(f"refusing to load memory format {name!r}")
    return value


def _dtype_name(dtype: Any) -> str:
    """A dtype's name without its module (``float32``), however dtypes are shown (under the
    torch alias they print as ``torch.float32``)."""
    return str(dtype).rpartition(".")[2]


def _dtype(name: str) -> Any:
    dtype = getattr(tocha, str(name).removeprefix("torch.").removeprefix("tocha."), None)
    if not isinstance(dtype, tocha.dtype):
        raise ValueError(f"unknown dtype {name!r}")
    return dtype


def _load_arg(arg: dict[str, Any]) -> Any:
    if "tensor" in arg:
        return TensorArgument(str(arg["tensor"]))
    if "symint" in arg:
        return SymIntArgument(str(arg["symint"]))
    return ConstantArgument(str(arg.get("name", "")), _decode(arg.get("const"), {}))


def _load_input_spec(record: dict[str, Any]) -> InputSpec:
    return InputSpec(
        InputKind[record["kind"]],
        _load_arg(record["arg"]),
        record["target"],
        record.get("persistent"),
    )


def _load_output_spec(record: dict[str, Any]) -> OutputSpec:
    return OutputSpec(OutputKind[record["kind"]], _load_arg(record["arg"]), record["target"])
