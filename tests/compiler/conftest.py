"""Fixtures the compiler's tests share."""

from __future__ import annotations

import logging

import pytest

import tocha


@pytest.fixture
def fresh_compiler():
    """The compiler's caches emptied before and after the test."""
    tocha.compiler.reset()
    yield
    tocha.compiler.reset()


@pytest.fixture
def captures(caplog):
    """The number of captures made so far (read from the compiler's DEBUG log)."""
    caplog.set_level(logging.DEBUG, logger="tocha.compiler")
    return lambda: sum("captured" in r.getMessage() for r in caplog.records)
