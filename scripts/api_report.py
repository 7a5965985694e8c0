"""How much of PyTorch's public API tocha has.

``python scripts/api_report.py`` prints, per namespace (``torch``, ``torch.Tensor``,
``torch.linalg``, ``torch.fft``, ``torch.special``, ``torch.nn.functional``), how many of
PyTorch's public names tocha has and which are missing, the names left out of tocha's scope
with the reason (`OUT_OF_SCOPE`: TorchScript, quantization, vendor-only kernels...; the share
counts the names in scope), then the number of distinct tensor routines tocha offers. It
reads the names from ``scripts/torch_api_names.txt`` and needs no PyTorch.

``python scripts/api_report.py --generate`` rewrites that file from the installed PyTorch (the
only place this repository imports torch): the public functions and classes of each
namespace and the public attributes of ``torch.Tensor``, one qualified name a line.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import inspect
import sys
from dataclasses import dataclass, field
from pathlib import Path

NAMES_FILE = Path(__file__).with_name("torch_api_names.txt")
# Namespaces in report order: torch's name -> tocha's module (None: the Tensor class).
NAMESPACES = {
    "torch": "tocha",
    "torch.Tensor": None,
    "torch.linalg": "tocha.linalg",
    "torch.fft": "tocha.fft",
    "torch.special": "tocha.special",
    "torch.nn.functional": "tocha.nn.functional",
}
# Namespaces whose functions count as tensor routines (with the Tensor's methods).
ROUTINE_MODULES = ("tocha", "tocha.linalg", "tocha.fft", "tocha.special")
# torch names out of tocha's scope, per namespace: reason -> name patterns (fnmatch). The report
# lists them with their reason and leaves them out of the share unless tocha has them.
OUT_OF_SCOPE = {
    "torch": {
        "TorchScript and its IR (tocha.compile runs eagerly)": [
            "AliasDb",
            "AnyType",
            "Argument",
            "ArgumentSpec",
            "AwaitType",
            "Block",
            "BoolType",
            "CallStack",
            "Capsule",
            "ClassType",
            "Code",
            "CompilationUnit",
            "CompleteArgumentSpec",
            "ComplexType",
            "ConcreteModuleType*",
            "DeepCopyMemoTable",
            "DeviceObjType",
            "DictType",
            "EnumType",
            "ErrorReport",
            "ExecutionPlan",
            "FileCheck",
            "FloatType",
            "FunctionSchema",
            "Future",
            "FutureType",
            "Gradient",
            "Graph",
            "GraphExecutorState",
            "IODescriptor",
            "InferredType",
            "IntType",
            "InterfaceType",
            "JITException",
            "ListType",
            "LiteScriptModule",
            "Node",
            "NoneType",
            "NumberType",
            "OptionalType",
            "PyObjectType",
            "RRefType",
            "Script*",
            "StaticModule",
            "StreamObjType",
            "StringType",
            "SymBoolType",
            "SymIntType",
            "TensorType",
            "TracingState",
            "TupleType",
            "Type",
            "UnionType",
            "Use",
            "Value",
            "fork",
            "wait",
            "import_ir_module*",
            "merge_type_from_type_comment",
            "parse_ir",
            "parse_schema",
            "parse_type_comment",
            "unify_type_list",
        ],
        "torch.compile's symbolic shapes and control-flow operators": [
            "Sym*",
            "sym_*",
            "cond",
            "while_loop",
        ],
        "quantization": [
            "Q*Storage",
            "dequantize",
            "int_repr",
            "q_*",
            "qscheme",
            "quantize_*",
            "quantized_*",
            "fake_quantize_*",
            "fused_moving_avg_obs_fake_quant",
            "choose_qparams_optimized",
            "empty_quantized",
            "fbgemm_*",
        ],
        "CUDA-, ROCm-, oneDNN- or other vendor-only kernels and settings": [
            "cudnn_*",
            "miopen_*",
            "mkldnn_*",
            "is_vulkan_available",
            "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12",
            "batch_norm_backward_*",
            "batch_norm_elemt",
            "batch_norm_gather_stats*",
            "batch_norm_stats",
            "batch_norm_update_stats",
            "get_autocast_gpu_dtype",
            "get_autocast_ipu_dtype",
            "get_autocast_xla_dtype",
            "set_autocast_gpu_dtype",
            "set_autocast_ipu_dtype",
            "set_autocast_xla_dtype",
            "is_autocast_ipu_enabled",
            "is_autocast_xla_enabled",
            "set_autocast_ipu_enabled",
            "set_autocast_xla_enabled",
            "compiled_with_cxx11_abi",
        ],
        "compressed sparse layouts (tocha.sparse has COO only)": [
            "sparse_bsc_tensor",
            "sparse_bsr_tensor",
            "sparse_compressed_tensor",
            "sparse_csc_tensor",
            "sparse_csr_tensor",
            "ccol_indices_copy",
            "col_indices_copy",
            "crow_indices_copy",
            "row_indices_copy",
        ],
        "internal to PyTorch's own machinery (benchmarking, logging, dispatch keys, build)": [
            "AggregationType",
            "BenchmarkConfig",
            "BenchmarkExecutionStats",
            "ThroughputBenchmark",
            "DispatchKey",
            "DispatchKeySet",
            "ExcludeDispatchKeyGuard",
            "LockingLogger",
            "LoggerBase",
            "NoopLogger",
            "OperatorInfo",
            "Tag",
            "PyTorchFileReader",
            "PyTorchFileWriter",
            "SerializationStorageContext",
            "DeserializationStorageContext",
            "classproperty",
            "get_file_path",
            "prepare_multiprocessing_environment",
            "thread_safe_generator",
            "autocast_decrement_nesting",
            "autocast_increment_nesting",
        ],
    },
    "torch.Tensor": {
        "first-class dimensions (functorch.dim)": ["index"],
        "quantization": [
            "dequantize",
            "int_repr",
            "q_*",
            "qscheme",
            "is_quantized",
        ],
        "CUDA-, oneDNN- or other vendor-only devices and layouts": [
            "ipu",
            "xpu",
            "mtia",
            "to_mkldnn",
            "record_stream",
        ],
        "compressed sparse layouts (tocha.sparse has COO only)": [
            "ccol_indices",
            "col_indices",
            "crow_indices",
            "row_indices",
            "to_sparse_bsc",
            "to_sparse_bsr",
            "to_sparse_csc",
            "to_sparse_csr",
        ],
    },
    "torch.nn.functional": {
        "internal to PyTorch (the __torch_function__ protocol, typing helpers)": [
            "DType",
            "ScalingType",
            "SwizzleType",
            "Tensor",
            "assert_int_or_pair",
            "boolean_dispatch",
            "handle_torch_function",
            "has_torch_function*",
        ],
        "CUDA-only low-precision and grouped matrix products": [
            "grouped_mm",
            "scaled_grouped_mm",
            "scaled_mm",
        ],
    },
}


# -- generating the list of names from PyTorch -----------------------------------------------
def _public(module) -> list[str]:
    """The public functions and classes of a torch module (not submodules, constants, dtypes
    or names it imports from outside torch, such as typing's)."""
    names = []
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name, None)
        if inspect.ismodule(obj) or not callable(obj):
            continue
        origin = getattr(obj, "__module__", None) or "torch"
        if origin.split(".")[0] in ("torch", "builtins") or origin == "torch._C._VariableFunctions":
            names.append(name)
    return names


def generate(path: Path = NAMES_FILE) -> int:
    """Write the qualified public names of the installed PyTorch to `path`; returns how many."""
    import torch

    lines = []
    for namespace in NAMESPACES:
        if namespace == "torch.Tensor":
            names = [n for n in dir(torch.Tensor) if not n.startswith("_")]
        else:
            names = _public(importlib.import_module(namespace))
        lines += [f"{namespace}.{n}" for n in sorted(set(names))]
    path.write_text(
        f"# torch {torch.__version__.split('+')[0]}: public API names, written by "
        "scripts/api_report.py --generate\n" + "\n".join(lines) + "\n"
    )
    return len(lines)


# -- counting what tocha has -----------------------------------------------------------------
@dataclass
class Coverage:
    """One namespace's torch names split into those tocha has and those it lacks."""

    namespace: str
    present: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    # Names tocha lacks that are out of its scope: name -> the reason (`OUT_OF_SCOPE`).
    out_of_scope: dict[str, str] = field(default_factory=dict)


@dataclass
class Report:
    coverage: list[Coverage]
    routines: list[str]
    torch_version: str


def read_names(path: Path = NAMES_FILE) -> tuple[str, dict[str, list[str]]]:
    """The torch version and, per namespace, the unqualified names the file lists."""
    version = ""
    names: dict[str, list[str]] = {ns: [] for ns in NAMESPACES}
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            version = line.split(":")[0].removeprefix("# torch ").strip()
            continue
        if not line.strip():
            continue
        namespace, name = line.rsplit(".", 1)
        names[namespace].append(name)
    return version, names


def _target(namespace: str):
    """tocha's object for a torch namespace, or None when its distribution is missing."""
    import tocha

    module = NAMESPACES[namespace]
    if module is None:
        return tocha.Tensor
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def resolve(qualified: str):
    """The tocha object a torch name names (``torch.Tensor.add`` -> ``tocha.Tensor.add``);
    AttributeError when tocha lacks it."""
    namespace, name = qualified.rsplit(".", 1)
    target = _target(namespace)
    if target is None:
        raise AttributeError(f"{NAMESPACES[namespace]} is not installed")
    return getattr(target, name)


def _has(target, name: str) -> bool:
    try:
        getattr(target, name)
    except (AttributeError, ImportError):
        return False
    return True


def routines() -> list[str]:
    """The distinct tensor routines of tocha: the functions of tocha, tocha.linalg, tocha.fft
    and tocha.special (qualified), and the Tensor's methods whose name no top-level function
    has (``Tensor.add`` and ``tocha.add`` count once)."""
    import tocha

    found = set()
    for module_name in ROUTINE_MODULES:
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if name.startswith("_") or inspect.ismodule(obj) or inspect.isclass(obj):
                continue
            if callable(obj) and getattr(obj, "__module__", "").startswith("tocha"):
                found.add(name if module_name == "tocha" else f"{module_name[6:]}.{name}")
    for name, obj in vars(tocha.Tensor).items():
        if not name.startswith("_") and callable(obj) and name not in found:
            found.add(f"Tensor.{name}")
    return sorted(found)


def scope_reason(namespace: str, name: str) -> str | None:
    """Why torch's `namespace`.`name` is out of tocha's scope, or None when it is in scope."""
    for reason, patterns in OUT_OF_SCOPE.get(namespace, {}).items():
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
            return reason
    return None


def _load_tocha() -> None:
    """Import tocha with tocha-autograd when installed (it adds Tensor methods: backward...)."""
    import tocha

    try:
        tocha.autograd  # noqa: B018
    except ImportError:
        pass


def count(path: Path = NAMES_FILE) -> Report:
    """The coverage of every namespace and tocha's tensor routines."""
    _load_tocha()
    version, names = read_names(path)
    coverage = []
    for namespace, listed in names.items():
        target = _target(namespace)
        entry = Coverage(namespace)
        for name in listed:
            reason = scope_reason(namespace, name)
            if target is not None and _has(target, name):
                entry.present.append(name)
            elif reason is not None:
                entry.out_of_scope[name] = reason
            else:
                entry.missing.append(name)
        coverage.append(entry)
    return Report(coverage, routines(), version)


def summary(report: Report) -> str:
    """The report's table in Markdown (what the README's "API coverage" section holds)."""
    lines = [
        f"Against torch {report.torch_version} (`python scripts/api_report.py`):",
        "",
        "| namespace | tocha has | of torch's in scope | share | out of scope |",
        "|---|---|---|---|---|",
    ]
    for c in report.coverage:
        total = len(c.present) + len(c.missing)
        share = f"{100 * len(c.present) / total:.0f}%" if total else "-"
        lines.append(
            f"| `{c.namespace}` | {len(c.present)} | {total} | {share} | {len(c.out_of_scope)} |"
        )
    lines += [
        "",
        f"Distinct tensor routines (functions of `tocha`, `tocha.linalg`, `tocha.fft`, "
        f"`tocha.special` and Tensor methods, each name once): {len(report.routines)}.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--generate",
        action="store_true",
        help="rewrite scripts/torch_api_names.txt from the installed torch",
    )
    parser.add_argument("--markdown", action="store_true", help="print only the summary table")
    args = parser.parse_args(argv)
    if args.generate:
        print(f"wrote {generate()} names to {NAMES_FILE}")
        return 0
    report = count()
    if not args.markdown:
        for c in report.coverage:
            print(f"{c.namespace}: {len(c.present)} of {len(c.present) + len(c.missing)}")
            if c.missing:
                print("  missing: " + ", ".join(c.missing))
            by_reason: dict[str, list[str]] = {}
            for name, reason in c.out_of_scope.items():
                by_reason.setdefault(reason, []).append(name)
            for reason, names in by_reason.items():
                print(f"  out of scope, {reason}: " + ", ".join(names))
        print()
    print(summary(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
