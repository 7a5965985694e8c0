"""The parts of ``torch._dynamo`` and ``torch.compiler`` that scripts call around
``torch.compile``: the config modules, explain, marking dims, stances, the compiled module's
class."""

from __future__ import annotations

import pytest

import tocha
import tocha._dynamo as dynamo
import tocha._inductor.config as inductor_config
import tocha.nn as nn


def test_dynamo_config_names_defaults_and_patch():
    config = dynamo.config
    assert config.suppress_errors is False and config.capture_scalar_outputs is False
    assert config.cache_size_limit == config.recompile_limit == 8
    with config.patch(cache_size_limit=3, verbose=True):
        assert config.recompile_limit == 3 and config.verbose is True
    assert config.recompile_limit == 8 and config.verbose is False

    @config.patch("suppress_errors", True)
    def inside():
        return config.suppress_errors

    assert inside() is True and config.suppress_errors is False
    with pytest.raises(AttributeError, match="torch._dynamo.config.no_such_setting does not exist"):
        config.no_such_setting = 1
    with pytest.raises(AttributeError, match="does not exist"):
        config.no_such_setting  # noqa: B018
    with pytest.raises(AttributeError):
        config.patch(no_such_setting=1)
    assert config.get_config_copy()["recompile_limit"] == 8


def test_inductor_config_takes_what_programs_set():
    assert inductor_config.coordinate_descent_tuning is False
    assert inductor_config.triton.cudagraphs is False
    assert tocha._inductor.config is inductor_config
    with inductor_config.patch({"triton.unique_kernel_names": True, "freezing": True}):
        assert inductor_config.triton.unique_kernel_names is True
        assert inductor_config.freezing is True
    assert inductor_config.freezing is False
    inductor_config.some_new_knob = 3  # a setting of a newer PyTorch: kept, unread
    assert inductor_config.get_config_copy()["some_new_knob"] == 3
    del inductor_config.some_new_knob


def test_explain_counts_graphs_ops_and_breaks(fresh_compiler):
    def fn(a, b):
        return (a / (a.abs() + 1)) * b

    out = dynamo.explain(fn)(tocha.randn(4), tocha.randn(4))
    assert isinstance(out, dynamo.ExplainOutput)
    assert (out.graph_count, out.graph_break_count, len(out.graphs)) == (1, 0, 1)
    assert out.op_count >= 3 and "Graph Count: 1" in str(out)

    def breaks(a):
        return a * a.sum().item()

    out = dynamo.explain(breaks)(tocha.randn(3))
    assert out.graph_break_count == 1 and len(out.break_reasons) == 1
    assert "Break Reason 1:" in str(out)
    with pytest.warns(FutureWarning, match="explain"):
        dynamo.explain(fn, tocha.randn(2), tocha.randn(2))


def test_marking_dims_and_compiled_module_class(fresh_compiler):
    x = tocha.randn(4, 3)
    dynamo.mark_dynamic(x, 0)
    dynamo.mark_static(x, 0)
    dynamo.maybe_mark_dynamic(x, 1)
    dynamo.mark_static_address(x)
    with pytest.raises(TypeError):
        dynamo.mark_static_address([1])
    compiled = tocha.compile(nn.Linear(3, 2))
    assert isinstance(compiled, dynamo.eval_frame.OptimizedModule)
    assert compiled(x).shape == (4, 2)
    assert dynamo.is_dynamo_supported() and not dynamo.is_compiling()
    dynamo.graph_break()


def test_stances(fresh_compiler):
    def check(x):
        return x + (1 if tocha.compiler.is_compiling() else -1)

    compiled = tocha.compile(check)
    assert compiled(tocha.zeros(1)).item() == 1
    with tocha.compiler.set_stance("force_eager"):
        assert compiled(tocha.zeros(1)).item() == -1
    assert compiled(tocha.zeros(1)).item() == 1
    with tocha.compiler.set_stance("fail_on_recompile"):
        assert compiled(tocha.zeros(1)).item() == 1  # compiled already
        with pytest.raises(RuntimeError, match="fail_on_recompile"):
            compiled(tocha.zeros(2))
    with tocha.compiler.set_stance("eager_on_recompile"):
        assert compiled(tocha.zeros(3)).tolist() == [-1, -1, -1]

    @tocha.compiler.set_stance("force_eager")
    def eager_inside():
        return compiled(tocha.zeros(1)).item()

    assert eager_inside() == -1 and compiled(tocha.zeros(1)).item() == 1
    with pytest.raises(RuntimeError, match="invalid torch.compile stance"):
        tocha.compiler.set_stance("sometimes")
