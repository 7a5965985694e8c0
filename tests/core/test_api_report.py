"""The API coverage report (scripts/api_report.py): it needs no PyTorch, counts at least 300
distinct tensor routines, and every torch name it reports present exists in tocha."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[2] / "scripts" / "api_report.py"


@pytest.fixture(scope="module")
def api_report():
    spec = importlib.util.spec_from_file_location("api_report", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["api_report"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["api_report"]


@pytest.fixture(scope="module")
def report(api_report):
    return api_report.count()


def test_at_least_300_routines(report):
    assert len(report.routines) >= 300
    assert len(set(report.routines)) == len(report.routines)


def test_names_reported_present_exist(api_report, report):
    for coverage in report.coverage:
        for name in coverage.present:
            api_report.resolve(f"{coverage.namespace}.{name}")


def test_names_reported_missing_are_missing(api_report, report):
    import tocha

    for coverage in report.coverage:
        if coverage.namespace == "torch.Tensor":
            for name in coverage.missing:
                assert not hasattr(tocha.Tensor, name), name


def test_every_namespace_is_listed(report):
    namespaces = [c.namespace for c in report.coverage]
    assert namespaces[:3] == ["torch", "torch.Tensor", "torch.linalg"]
    sizes = {c.namespace: len(c.present) + len(c.missing) for c in report.coverage}
    assert sizes["torch"] > 500 and sizes["torch.Tensor"] > 400


def test_routines_are_callable(report):
    import tocha

    for name in report.routines:
        target = tocha
        for part in name.split("."):
            target = getattr(target, part)
        assert callable(target), name


def test_summary_and_main_need_no_torch(api_report, report, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # importing torch would now fail
    assert "| `torch.Tensor` |" in api_report.summary(report)
    assert api_report.main([]) == 0
    assert "Distinct tensor routines" in capsys.readouterr().out
