"""DCP's storage in a folder: `FileSystemWriter`, `FileSystemReader`, and the checkpoint's
`Metadata`.

A checkpoint is a folder with one data file per rank, ``__{rank}_0.distcp`` (the items that
rank writes, saved with `tocha.save`), and ``.metadata``, which rank 0 writes last: for
every item of the flattened state dict, its kind, shape and dtype, and the file it is in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["FileSystemReader", "FileSystemWriter", "Metadata"]

METADATA = ".metadata"


def data_file(rank: int) -> str:
    return f"__{rank}_0.distcp"


@dataclass
class Metadata:
    """What a checkpoint holds: ``state_dict_metadata[key]`` describes each item (its
    ``kind``, ``shape``, ``dtype``); ``storage_data[key]`` names its file."""

    state_dict_metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    storage_data: dict[str, str] = field(default_factory=dict)
    planner_data: Any = None


class FileSystemWriter:
    """Writes a checkpoint into the folder `path` (made when missing)."""

    def __init__(
        self,
        path: str | os.PathLike,
        single_file_per_rank: bool = True,
        sync_files: bool = True,
        thread_count: int = 1,
        per_thread_copy_ahead: int = 10_000_000,
        cache_staged_state_dict: bool = False,
        overwrite: bool = True,
        **kwargs: Any,
    ) -> None:
        self.path = Path(path)
        self.overwrite = overwrite


class FileSystemReader:
    """Reads a checkpoint from the folder `path`."""

    def __init__(self, path: str | os.PathLike, **kwargs: Any) -> None:
        self.path = Path(path)

    def read_metadata(self) -> Metadata:
        """The checkpoint's `Metadata`."""
        import tocha

        target = self.path / METADATA
        if not target.exists():
            raise FileNotFoundError(f"No checkpoint metadata in {self.path}: {target} is missing")
        return tocha.load(target, weights_only=False)
