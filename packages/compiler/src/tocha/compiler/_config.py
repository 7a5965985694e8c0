"""Settings modules as ``torch._dynamo.config`` and ``torch._inductor.config`` are: attributes
with defaults, ``patch`` (a context manager and decorator that sets some for a while) and
``get_config_copy``. A closed module refuses a name it does not know (AttributeError, as
PyTorch's); an open one (the inductor's settings, which tocha reads none of) takes any name
set on it, so that programs tuning inductor run unchanged."""

from __future__ import annotations

import contextlib
import copy
import functools
import types
from collections.abc import Callable
from typing import Any

__all__ = ["ConfigModule", "dynamo_config", "inductor_config"]


class ConfigModule(types.ModuleType):
    """`defaults` by name; `aliases` maps an old name to the name it reads and writes
    (``cache_size_limit`` is ``recompile_limit``); `children` are nested modules
    (``config.triton.cudagraphs``). Settings are plain instance attributes, so that reading
    one costs what reading any attribute does (the compiled functions' guards read
    ``disable`` on every call)."""

    def __init__(
        self,
        name: str,
        defaults: dict[str, Any],
        *,
        aliases: dict[str, str] | None = None,
        children: dict[str, ConfigModule] | None = None,
        open: bool = False,
    ) -> None:
        super().__init__(name)
        own = object.__setattr__
        own(self, "_cm_name", name)
        own(self, "_cm_defaults", copy.deepcopy(dict(defaults)))
        own(self, "_cm_aliases", dict(aliases or {}))
        own(self, "_cm_children", dict(children or {}))
        own(self, "_cm_open", open)
        for key, value in defaults.items():
            own(self, key, value)
        for key, child in self._cm_children.items():
            own(self, key, child)

    @property
    def _values(self) -> dict[str, Any]:
        return {
            k: v
            for k, v in vars(self).items()
            if not k.startswith(("_cm_", "__")) and k not in self._cm_children
        }

    def __getattr__(self, name: str) -> Any:  # only for names that are not attributes
        if name.startswith("__") or name.startswith("_cm_"):
            raise AttributeError(name)
        target = self._cm_aliases.get(name)
        if target is not None:
            return getattr(self, target)
        raise AttributeError(f"{self._cm_name}.{name} does not exist")

    def __setattr__(self, name: str, value: Any) -> None:
        key = self._cm_aliases.get(name, name)
        if key in self._cm_children:
            raise AttributeError(f"{self._cm_name}.{name} is a group of settings")
        if key.startswith("__") and key.endswith("__"):  # a module's own: __spec__...
            object.__setattr__(self, key, value)
            return
        if key.startswith("_cm_") or (key not in vars(self) and not self._cm_open):
            raise AttributeError(f"{self._cm_name}.{name} does not exist")
        object.__setattr__(self, key, value)

    def __delattr__(self, name: str) -> None:
        key = self._cm_aliases.get(name, name)
        if key not in self._values:
            raise AttributeError(f"{self._cm_name}.{name} does not exist")
        if key in self._cm_defaults:
            object.__setattr__(self, key, copy.deepcopy(self._cm_defaults[key]))
        else:
            object.__delattr__(self, key)

    def __dir__(self) -> list[str]:
        return sorted({*self._values, *self._cm_aliases, *self._cm_children, "patch"})

    def __repr__(self) -> str:
        return f"<config module {self._cm_name}>"

    def get_config_copy(self) -> dict[str, Any]:
        """Every setting (a nested one as ``"triton.cudagraphs"``), copied."""
        out = copy.deepcopy(self._values)
        for child_name, child in self._cm_children.items():
            for key, value in child.get_config_copy().items():
                out[f"{child_name}.{key}"] = value
        return out

    def load_config(self, config: dict[str, Any]) -> None:
        """Set the settings of a `get_config_copy` dict."""
        for key, value in config.items():
            self._set_path(key, value)

    def _set_path(self, key: str, value: Any) -> None:
        head, dot, rest = key.partition(".")
        if dot and head in self._cm_children:
            self._cm_children[head]._set_path(rest, value)
        else:
            setattr(self, key, value)

    def _get_path(self, key: str) -> Any:
        head, dot, rest = key.partition(".")
        if dot and head in self._cm_children:
            return self._cm_children[head]._get_path(rest)
        return getattr(self, key)

    def patch(
        self, arg1: str | dict[str, Any] | None = None, arg2: Any = None, **kwargs: Any
    ) -> _Patch:
        """Settings changed for the duration of a ``with`` block or of each call of a
        decorated function: ``patch("verbose", True)``, ``patch({"verbose": True})`` or
        ``patch(verbose=True)``."""
        changes: dict[str, Any] = {}
        if isinstance(arg1, str):
            changes[arg1] = arg2
        elif isinstance(arg1, dict):
            changes.update(arg1)
        elif arg1 is not None:
            raise TypeError("patch takes a name and a value, a dict, or keyword arguments")
        changes.update(kwargs)
        for key in changes:
            self._get_path(key)  # an unknown name raises now, as PyTorch's
        return _Patch(self, changes)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, module: ConfigModule, changes: dict[str, Any]) -> None:
        self.module = module
        self.changes = changes
        self.saved: list[dict[str, Any]] = []

    def __enter__(self) -> None:
        self.saved.append({key: self.module._get_path(key) for key in self.changes})
        for key, value in self.changes.items():
            self.module._set_path(key, value)

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.pop().items():
            self.module._set_path(key, value)

    def __call__(self, fn: Callable) -> Callable:  # type: ignore[override]
        @functools.wraps(fn)
        def patched(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return patched


# The settings of ``torch._dynamo.config`` in PyTorch 2.13, with their defaults. tocha reads
# ``recompile_limit`` (``cache_size_limit``), ``automatic_dynamic_shapes``, ``disable`` and
# ``suppress_errors``; the rest are kept for programs that set or read them.
DYNAMO_DEFAULTS: dict[str, Any] = {
    "accumulated_recompile_limit": 256,
    "allow_empty_graphs": False,
    "allow_ignore_mark_dynamic": False,
    "allow_rnn": False,
    "allow_unspec_int_on_nn_module": False,
    "assume_dunder_attributes_remain_unchanged": True,
    "assume_static_by_default": True,
    "automatic_dynamic_exclusion_guard": False,
    "automatic_dynamic_local_pgo": True,
    "automatic_dynamic_remote_pgo": None,
    "automatic_dynamic_shapes": True,
    "automatic_dynamic_shapes_mark_as": "dynamic",
    "caching_precompile": False,
    "capture_autograd_function": True,
    "capture_dynamic_output_shape_ops": False,
    "capture_func_transforms": True,
    "capture_profiler_record_function": False,
    "capture_scalar_outputs": False,
    "capture_sparse_compute": True,
    "compiled_autograd": False,
    "constant_fold_autograd_profiler_enabled": False,
    "cprofile": False,
    "cudagraph_backend_keep_input_mutation": False,
    "cudagraph_backend_support_input_mutation": False,
    "dead_code_elimination": None,
    "debug_backend_override": "",
    "debug_disable_compile_counter": False,
    "debug_dynamo_config_override": "",
    "debug_force_graph_break_on_leaf_return": False,
    "debug_force_nested_calls": False,
    "debug_inductor_config_override": "",
    "disable": False,
    "do_not_emit_runtime_asserts": False,
    "dont_skip_tracing": False,
    "dynamic_shapes": True,
    "dynamo_profiler": False,
    "enable_aot_compile": True,
    "enable_compiler_collectives": False,
    "enable_cpp_framelocals_guard_eval": True,
    "enable_cpp_guard_manager": True,
    "enable_cpp_symbolic_shape_guards": False,
    "enable_dynamo_decompositions": True,
    "enable_faithful_generator_behavior": True,
    "enable_invoke_subgraph_regional_compile": False,
    "enable_p2p_compilation": False,
    "enable_trace_contextlib": True,
    "enable_trace_load_build_class": False,
    "enable_trace_unittest": False,
    "error_on_dynamo_callback_in_fullgraph_compiled_code": False,
    "error_on_nested_fx_trace": True,
    "error_on_nested_jit_trace": True,
    "error_on_recompile": False,
    "fail_on_recompile_limit_hit": False,
    "fake_tensor_cache_crosscheck_enabled": False,
    "fake_tensor_cache_enabled": True,
    "fake_tensor_disable_inference_mode": True,
    "force_compile_during_fx_trace": False,
    "force_nn_module_property_static_shapes": True,
    "force_parameter_static_shapes": True,
    "force_unspec_int_unbacked_size_like_on_torchrec_kjt": False,
    "generate_pycode": False,
    "graph_break_on_nn_param_ctor": True,
    "graph_deduplication_lint": False,
    "guard_nn_modules": True,
    "guard_nn_modules_using_dict_tags": True,
    "inject_BUILD_SET_unimplemented_TESTING_ONLY": False,
    "inline_inbuilt_nn_modules": True,
    "inline_invoke_subgraph": False,
    "inline_single_use_invoke_subgraph": True,
    "inline_torch_dispatch_torch_compile": True,
    "install_free_tensors": False,
    "install_free_tensors_for_export": True,
    "invalidate_compile_context_weakrefs": None,
    "issue_3_13_0_warning": True,
    "leaf_function_check_escaped_gradients": False,
    "leaf_function_validate_outputs": False,
    "log_compilation_metrics": True,
    "log_file_name": None,
    "log_graph_in_out_metadata": False,
    "max_saved_pointers_for_recursive_dict_tags_check": 256,
    "minimum_call_count": 1,
    "nested_graph_breaks": False,
    "numpy_default_complex": "complex128",
    "numpy_default_float": "float64",
    "numpy_default_int": "int64",
    "only_allow_pt2_compliant_ops": False,
    "optimize_ddp": True,
    "optimize_ddp_lazy_compile": False,
    "prefer_deferred_runtime_asserts_over_guards": False,
    "prepare_freezing": False,
    "pt2_compile_id_prefix": None,
    "raise_on_ctx_manager_usage": True,
    "raise_on_unsafe_aot_autograd": False,
    "recompile_limit": 8,
    "record_compile_time_instruction_count": False,
    "record_runtime_overhead": True,
    "replay_record_enabled": False,
    "replay_side_effects": True,
    "report_guard_failures": True,
    "repro_after": None,
    "repro_forward_only": False,
    "repro_ignore_non_fp": False,
    "repro_level": 2,
    "repro_tolerance": 0.001,
    "rewrite_assert_with_torch_assert": True,
    "run_gc_after_compile": True,
    "same_two_models_use_fp64": True,
    "side_effect_replay_policy": "info",
    "skip_code_recursive_on_recompile_limit_hit": True,
    "skip_fsdp_guards": True,
    "skip_fwd_side_effects_in_bwd_under_checkpoint": False,
    "skip_guards_on_constant_func_defaults": False,
    "skip_nnmodule_hook_guards": True,
    "skip_no_tensor_aliasing_guards_on_parameters": True,
    "skip_tensor_guards_with_matching_dict_tags": True,
    "skip_torchrec": True,
    "specialize_float": False,
    "specialize_int": False,
    "strict_precompile": False,
    "suppress_errors": False,
    "trace_autograd_ops": False,
    "trace_numpy": True,
    "track_nodes_for_deduplication": False,
    "use_graph_deduplication": False,
    "use_lamba_guard_for_object_aliasing": True,
    "use_lazy_graph_module": True,
    "use_numpy_random_stream": False,
    "use_recursive_dict_tags_for_guards": False,
    "verbose": False,
    "verify_correctness": False,
    "wrap_top_frame": False,
}


# Settings of ``torch._inductor.config`` that programs commonly set or read (tocha reads
# none of them; the module takes any other name too).
INDUCTOR_DEFAULTS: dict[str, Any] = {
    "coordinate_descent_tuning": False,
    "coordinate_descent_check_all_directions": False,
    "coordinate_descent_search_radius": 1,
    "fx_graph_cache": True,
    "fx_graph_remote_cache": None,
    "autotune_local_cache": True,
    "autotune_remote_cache": None,
    "force_fuse_int_mm_with_mul": False,
    "use_mixed_mm": True,
    "epilogue_fusion": True,
    "conv_1x1_as_mm": False,
    "freezing": False,
    "freezing_discard_parameters": False,
    "max_autotune": False,
    "max_autotune_gemm": False,
    "max_autotune_pointwise": False,
    "max_autotune_gemm_backends": "ATEN,TRITON,CPP",
    "benchmark_kernel": False,
    "fallback_random": False,
    "debug": False,
    "cpp_wrapper": False,
    "split_reductions": True,
    "aggressive_fusion": False,
    "shape_padding": True,
    "comprehensive_padding": True,
    "layout_optimization": True,
    "keep_output_stride": True,
    "size_asserts": True,
    "emulate_precision_casts": False,
    "allow_buffer_reuse": True,
    "memory_planning": False,
    "reorder_for_compute_comm_overlap": False,
    "unroll_reductions_threshold": 8,
    "group_fusion": False,
    "pattern_matcher": True,
    "split_cat_fx_passes": True,
    "realize_opcount_threshold": None,
    "joint_graph_constant_folding": True,
    "online_softmax": True,
    "search_autotune_cache": False,
    "save_args": False,
    "verbose_progress": False,
    "permute_fusion": False,
    "benchmark_fusion": False,
    "benchmark_epilogue_fusion": True,
    "use_fast_math": False,
    "generate_intermediate_hooks": False,
    "profile_bandwidth": False,
    "disable_cpp_codegen": False,
    "implicit_fallbacks": True,
    "assume_aligned_inputs": False,
    "optimize_scatter_upon_const_tensor": True,
    "max_fusion_size": 64,
    "graph_partition": True,
}
INDUCTOR_TRITON: dict[str, Any] = {
    "cudagraphs": False,
    "cudagraph_trees": True,
    "cudagraph_skip_dynamic_graphs": False,
    "unique_kernel_names": True,
    "use_block_ptr": False,
    "autotune_pointwise": True,
    "max_tiles": None,
    "descriptive_names": "original_aten",
    "store_cubin": False,
    "persistent_reductions": True,
    "multi_kernel": 0,
    "cudagraph_support_input_mutation": True,
    "enable_persistent_tma_matmul": False,
}
INDUCTOR_CPP: dict[str, Any] = {
    "simdlen": None,
    "threads": -1,
    "enable_kernel_profile": False,
    "vec_isa_ok": None,
    "fallback_scatter_reduce_sum": True,
    "weight_prepack": True,
    "dynamic_threads": False,
    "enable_tiling_heuristics": True,
}
INDUCTOR_TRACE: dict[str, Any] = {
    "enabled": False,
    "debug_log": False,
    "info_log": False,
    "fx_graph": True,
    "ir_pre_fusion": True,
    "ir_post_fusion": True,
    "output_code": True,
    "graph_diagram": False,
    "compile_profile": False,
}
INDUCTOR_AOT_INDUCTOR: dict[str, Any] = {
    "output_path": "",
    "debug_compile": False,
    "package": False,
}


def dynamo_config() -> ConfigModule:
    """A fresh ``tocha._dynamo.config``."""
    return ConfigModule(
        "torch._dynamo.config",
        DYNAMO_DEFAULTS,
        aliases={"cache_size_limit": "recompile_limit"},
    )


def inductor_config() -> ConfigModule:
    """A fresh ``tocha._inductor.config``."""
    children = {
        name: ConfigModule(f"torch._inductor.config.{name}", defaults, open=True)
        for name, defaults in (
            ("triton", INDUCTOR_TRITON),
            ("cpp", INDUCTOR_CPP),
            ("trace", INDUCTOR_TRACE),
            ("aot_inductor", INDUCTOR_AOT_INDUCTOR),
        )
    }
    for name in ("cuda", "rocm", "xpu", "halide", "cutlass", "test_configs"):
        children[name] = ConfigModule(f"torch._inductor.config.{name}", {}, open=True)
    return ConfigModule("torch._inductor.config", INDUCTOR_DEFAULTS, children=children, open=True)
