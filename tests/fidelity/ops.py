"""The public callables PyTorch and tocha both have, with their signatures as PyTorch declares
them (needs PyTorch: used when generating and recording cases, never in CI's replay).

A signature is a tuple of parameters ``(name, kind, required, keyword_only)`` and a flag that
says whether PyTorch accepts ``out=``. Kinds: ``tensor``, ``tensor?``, ``tensors``, ``int``,
``int?``, ``ints``, ``ints?``, ``float``, ``float?``, ``scalar``, ``scalar?``, ``bool``,
``bool?``, ``dtype?``, ``str``, ``str?``, ``other`` (left at its default; an op that requires
one is not generated). Signatures come from PyTorch's operator schemas (``aten::name``, or
``linalg_``/``fft_``/``special_`` prefixed), else from the Python signature of PyTorch's
function, else from tocha's.
"""

from __future__ import annotations

import inspect
from typing import NamedTuple

NAMESPACES = ("torch", "Tensor", "F", "linalg", "fft", "special")
ATEN_PREFIX = {"torch": "", "Tensor": "", "F": "", "linalg": "linalg_", "fft": "fft_"}
ATEN_PREFIX["special"] = "special_"
# Names that are classes, context managers, or whole subsystems rather than ops on tensors.
SKIPPED = {
    "compile",
    "load",
    "save",
    "set_default_dtype",
    "set_default_device",
    "manual_seed",
    "seed",
    "set_rng_state",
    "use_deterministic_algorithms",
    "set_num_threads",
    "set_num_interop_threads",
    "set_printoptions",
    "set_grad_enabled",
    "set_warn_always",
    "set_flush_denormal",
    "set_float32_matmul_precision",
    "set_default_tensor_type",
    "register_hook",
    "register_post_accumulate_grad_hook",
    "backward",
    "share_memory_",
    "pin_memory",
    "cuda",
    "to_sparse",
    "to_sparse_csr",
    "to_sparse_csc",
    "to_sparse_bsr",
    "to_sparse_bsc",
    "to_mkldnn",
    "numpy",
    "tolist",
    "storage",
    "untyped_storage",
    "data_ptr",
    "cpu",
    "is_pinned",
    "vmap",
    "cond",
    "from_file",
    "as_strided",
    "as_strided_",
    "as_strided_copy",
    "set_",
    "resize_",
    "resize_as_",
    "record_stream",
    "sym_int",
    "sym_float",
    "sym_max",
    "sym_min",
    "sym_not",
    "sym_ite",
    "sym_sum",
    "sym_fresh_size",
    "typename",
    "is_storage",
    "export",
    "empty_strided",
    "dropout",
    "alpha_dropout",
    "feature_alpha_dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "rrelu_",
    "get_device",
    "get_default_dtype",
    "apply_",
    "map_",
    "new_tensor",
    "module_load",
    "dim_order",
    "from_dlpack",
    "to_dlpack",
    "frombuffer",
}


class Param(NamedTuple):
    name: str
    kind: str
    required: bool
    keyword_only: bool


class Signature(NamedTuple):
    params: tuple[Param, ...]
    has_out: bool


def _aten_kind(name: str, type_str: str) -> str:
    optional = type_str.startswith("Optional[")
    base = type_str[9:-1] if optional else type_str
    q = "?" if optional else ""
    if name in ("dtype", "out_dtype"):
        return "dtype?"
    if name in ("layout", "memory_format", "device", "pin_memory", "generator"):
        return "other"
    kind = {
        "Tensor": "tensor",
        "List[Tensor]": "tensors",
        "int": "int",
        "SymInt": "int",
        "List[int]": "ints",
        "List[SymInt]": "ints",
        "float": "float",
        "number": "scalar",
        "bool": "bool",
        "str": "str",
    }.get(base)
    if kind is None:
        return "other"
    if kind in ("tensors",):
        return kind
    return kind + q


def _aten_signatures(torch, name: str) -> list[Signature]:
    plain, has_out = [], False
    for schema in _schemas(torch).get("aten::" + name, []):
        args = schema.arguments
        if any(
            a.name == "out" or (a.alias_info and a.alias_info.is_write and a.kwarg_only)
            for a in args
        ):
            has_out = True
            continue
        if any("Dimname" in str(a.type) for a in args):
            continue
        params = tuple(
            Param(
                a.name,
                _aten_kind(a.name, str(a.type)),
                a.default_value is None and not str(a.type).startswith("Optional["),
                a.kwarg_only,
            )
            for a in args
        )
        takes_tensors = any(p.kind.startswith("tensor") for p in params)
        factory = bool(params) and params[0].name in FACTORY_FIRST
        if not (takes_tensors or factory) or any(p.kind == "other" and p.required for p in params):
            continue
        plain.append(params)
    return [Signature(params, has_out) for params in plain]


# The first parameter of PyTorch's factories (zeros(size), arange(end), eye(n), ...).
FACTORY_FIRST = {"size", "end", "start", "n", "window_length", "low", "high", "N", "steps"}
_SCHEMAS: dict = {}


def _schemas(torch) -> dict:
    if not _SCHEMAS:
        for schema in torch._C._jit_get_all_schemas():
            _SCHEMAS.setdefault(schema.name, []).append(schema)
    return _SCHEMAS


def _python_kind(param: inspect.Parameter) -> str:
    annotation = param.annotation
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    if annotation is not inspect.Parameter.empty and not isinstance(annotation, str):
        text = str(annotation)
    optional = "Optional" in text or "None" in text
    q = "?" if optional else ""
    name = param.name
    if name in ("dtype",):
        return "dtype?"
    if "Tensor" in text:
        many = "List" in text or "Sequence" in text or "tuple" in text
        return "tensors" if many else "tensor" + q
    if "bool" in text:
        return "bool" + q
    if "float" in text:
        return "float" + q
    if "int" in text:
        return ("ints" if "List" in text or "list" in text else "int") + q
    if "str" in text:
        return "str" + q
    if name in ("input", "other", "weight", "target", "x", "y", "A", "B", "tensor", "self"):
        return "tensor"
    if name in ("bias",):
        return "tensor?"
    if name == "tensors":
        return "tensors"
    if name == "dim":
        return "int?"
    if name == "keepdim":
        return "bool"
    return "other"


def _python_signature(function) -> Signature | None:
    try:
        sig = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    params = []
    has_out = False
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            return None
        if p.name == "out":
            has_out = True
            continue
        if p.name.startswith("_"):
            continue
        params.append(
            Param(p.name, _python_kind(p), p.default is p.empty, p.kind == p.KEYWORD_ONLY)
        )
    if any(p.kind == "other" and p.required for p in params):
        return None
    return Signature(tuple(params), has_out)


def enumerate_ops(torch, tocha) -> dict[str, list[Signature]]:
    """``op -> signatures`` for every public callable both libraries have."""
    spaces = {
        "torch": (torch, tocha),
        "Tensor": (torch.Tensor, tocha.Tensor),
        "F": (torch.nn.functional, tocha.nn.functional),
        "linalg": (torch.linalg, tocha.linalg),
        "fft": (torch.fft, tocha.fft),
        "special": (torch.special, tocha.special),
    }
    found: dict[str, list[Signature]] = {}
    for space, (theirs, ours) in spaces.items():
        for name in sorted(dir(theirs)):
            if name.startswith("_") or name in SKIPPED or name.startswith(("is_", "set_")):
                continue
            mine = getattr(ours, name, None)
            function = getattr(theirs, name, None)
            if mine is None or not callable(function) or isinstance(function, type):
                continue
            if space == "torch" and getattr(function, "__module__", "") in ("typing",):
                continue
            python = space == "F" and inspect.isfunction(function)
            signatures = [] if python else _aten_signatures(torch, ATEN_PREFIX[space] + name)
            if not signatures:
                fallback = _python_signature(function) or _python_signature(mine)
                signatures = [fallback] if fallback else []
            if space == "Tensor":
                signatures = [
                    Signature(s.params, False)
                    for s in signatures
                    if s.params and s.params[0].kind == "tensor"
                ]
            if signatures:
                found[f"{space}.{name}"] = signatures
    return found
