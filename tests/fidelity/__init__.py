"""Fidelity instruments: a differential sweep of tocha against PyTorch (`sweep`) and a
bad-input fuzzer (`fuzz`), both driven by plain-data call specs (`calls`) so that a seeded
sample of their cases, with PyTorch's recorded answers, replays in CI without PyTorch."""
