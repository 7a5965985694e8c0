"""Shared test set-up: the PyTorch oracle (`torch` fixture, recorded answers, skip summary)
lives in tests/oracle/plugin.py."""

pytest_plugins = ["tests.oracle.plugin"]
