"""Shared test fixtures: the PyTorch oracle (used only when installed) and comparisons."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def torch():
    """PyTorch, the test-only oracle; tests that take it skip when it is not installed."""
    return pytest.importorskip("torch")
