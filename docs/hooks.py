"""mkdocs hook: one source tree of the whole `tocha` namespace for mkdocstrings.

The namespace is spread over the packages' ``src`` folders (``tocha/nn`` in packages/nn,
``tocha/optim`` in packages/optim...). griffe, mkdocstrings' reader of Python source, takes
the first ``tocha/__init__.py`` it finds for the whole package and would miss the rest, so
this hook links every package's pieces into ``build/docs-src`` before the pages are read.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "docs-src"


def on_startup(command, dirty):
    """Rebuild ``build/docs-src``: a link to every top-level entry of each package's ``src``
    folder, the entries of ``tocha/`` linked one by one into a single ``tocha`` folder."""
    shutil.rmtree(TREE, ignore_errors=True)
    (TREE / "tocha").mkdir(parents=True)
    for src in sorted(ROOT.glob("packages/*/src")):
        for entry in src.iterdir():
            if entry.name == "tocha":
                for part in entry.iterdir():
                    if part.name != "__pycache__":
                        (TREE / "tocha" / part.name).symlink_to(part)
            elif entry.name.isidentifier():
                (TREE / entry.name).symlink_to(entry)
