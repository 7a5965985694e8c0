"""PyTorch as the tests' oracle, recorded so that the tests keep checking values without it:
`tape` holds the record-and-replay mechanism, `plugin` its pytest side (the `torch` fixture,
the modes, the skip summary), and `answers/` the recordings, one file per test file, written
by ``scripts/record_oracle.py``."""
