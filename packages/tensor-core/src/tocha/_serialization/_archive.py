"""The zip archive of a checkpoint, and files written atomically.

Records are stored uncompressed (``ZIP_STORED``) and each storage's bytes start at a multiple
of 64 bytes in the file (a padding extra field in its local header, as PyTorch's writer
does), so that a load may map them with `np.memmap`. The reader takes only such records: it
never decompresses (no zip bomb), checks that a record lies inside the file before it
allocates its size, and refuses records that together claim more bytes than the file has
(records that overlap to multiply the memory a load takes).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import struct
import zipfile

import numpy as np

ALIGNMENT = 64
_CHUNK = 64 << 20
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, ..., name length, extra length
_PAD_FIELD = 0x4246  # "FB", PyTorch's padding extra field


def is_path(f) -> bool:
    return isinstance(f, (str, os.PathLike))


def name_of(f) -> str:
    """How errors name a file: its path, or the file object's name or repr."""
    if is_path(f):
        return os.fspath(f)
    return str(getattr(f, "name", None) or repr(f))


@contextlib.contextmanager
def atomic_writer(path):
    """A binary file that replaces `path` only once it is completely written and synced.

    The data goes to a temporary file in the same folder, which is fsynced and then renamed
    over `path` (following a symlink at `path`); on any exception it is removed and `path`
    is left as it was. The temporary file's name holds the writer's process id: a later save
    to the same path removes the ones whose writer died (killed mid-save, SIGKILL included).
    """
    target = os.path.realpath(os.fspath(path))
    folder, base = os.path.split(target)
    if not os.path.isdir(folder):
        raise RuntimeError(f"Parent directory {folder} does not exist.")
    tmp = os.path.join(folder, f".{base}.{os.getpid()}-{secrets.token_hex(6)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(tmp, flags, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_folder(folder)
    _remove_stale_temporaries(folder, base)


def _remove_stale_temporaries(folder: str, base: str) -> None:
    """Remove the temporary files of earlier saves to `base` whose writing process is gone."""
    pattern = re.compile(rf"\.{re.escape(base)}\.(\d+)-[0-9a-f]{{12}}\.tmp")
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        match = pattern.fullmatch(name)
        if match is None or _alive(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(folder, name))


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # Windows' os.kill would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # another user's live process, or no way to tell: keep its file
    return True


def _fsync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # platforms that cannot open folders (Windows)
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class ArchiveWriter:
    """Writes the records of one checkpoint under ``archive/`` in a zip file; a context
    manager that writes the zip's central directory on exit."""

    def __init__(self, fileobj, prefix: str = "archive"):
        self._zip = zipfile.ZipFile(fileobj, "w", zipfile.ZIP_STORED, allowZip64=True)
        self._prefix = prefix

    def write(self, name: str, data, to_host=None) -> None:
        """Write `data` (bytes or a 1-D uint8 array) as record `name`, its first byte aligned
        to `ALIGNMENT`; `to_host` copies a device array's chunk to host memory."""
        zf = self._zip
        info = zipfile.ZipInfo(f"{self._prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        size = len(data) if isinstance(data, bytes) else int(data.size)
        info.file_size = size
        zip64 = size * 1.05 > zipfile.ZIP64_LIMIT
        header = 30 + len(info.filename.encode("utf-8")) + 4 + (20 if zip64 else 0)
        pad = -(zf.start_dir + header) % ALIGNMENT
        info.extra = struct.pack("<HH", _PAD_FIELD, pad) + b"Z" * pad
        with zf.open(info, "w", force_zip64=zip64) as out:
            if isinstance(data, bytes):
                out.write(data)
                return
            for start in range(0, size, _CHUNK):
                chunk = data[start : start + _CHUNK]
                out.write(memoryview(chunk if to_host is None else to_host(chunk)))

    def __enter__(self) -> ArchiveWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self._zip.close()


class ArchiveReader:
    """Reads a checkpoint's zip: its records by name (under whatever top folder it has) and
    its storages, read into memory or sliced from a memory map of the file."""

    def __init__(self, fileobj, name: str):
        self.name = name
        self._file = fileobj
        try:
            self._zip = zipfile.ZipFile(fileobj)
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
            raise RuntimeError(
                f"PytorchStreamReader failed reading zip archive {name}: {exc} "
                "(the file is damaged or truncated)"
            ) from None
        pickles = [
            i.filename
            for i in infos
            if i.filename.endswith("/data.pkl") and i.filename.count("/") == 1
        ]
        if len(pickles) != 1:
            names = {i.filename.split("/", 1)[-1] for i in infos}
            what = "a TorchScript archive" if "constants.pkl" in names else "not a checkpoint"
            raise RuntimeError(f"{name} is {what}: it has no archive/data.pkl record")
        self._prefix = pickles[0][: -len("data.pkl")]
        self._infos = {i.filename: i for i in infos}
        self._size = self._unclaimed = fileobj.seek(0, os.SEEK_END)

    def has(self, record: str) -> bool:
        return self._prefix + record in self._infos

    def read(self, record: str) -> bytes:
        """A small record's bytes, its CRC checked."""
        info = self._info(record)
        self._span(info)
        try:
            return self._zip.read(info)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            self._fail(record, str(exc))

    def read_storage(self, record: str, mapped: np.ndarray | None) -> np.ndarray:
        """Record `record` as a 1-D uint8 array: a slice of `mapped` (a memory map of the whole
        file) when given, else read into memory with one call."""
        offset, end = self._span(self._info(record))
        if mapped is not None:
            return mapped[offset:end]
        out = np.empty(end - offset, np.uint8)
        self._file.seek(offset)
        view = memoryview(out)
        done = 0
        while done < out.size:
            n = self._file.readinto(view[done:])
            if not n:
                self._fail(record, "file read failed (the file is truncated)")
            done += n
        return out

    def _info(self, record: str) -> zipfile.ZipInfo:
        info = self._infos.get(self._prefix + record)
        if info is None:
            raise RuntimeError(
                f"PytorchStreamReader failed locating file {record} in {self.name}: file not found"
            )
        return info

    def _span(self, info: zipfile.ZipInfo) -> tuple[int, int]:
        """Where a record's bytes start and end in the file, after checking that it is stored
        uncompressed, lies inside the file and leaves the other records their bytes."""
        record = info.filename[len(self._prefix) :]
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            self._fail(
                record,
                "the record is compressed; checkpoints store records "
                "uncompressed, as torch.save writes them",
            )
        self._file.seek(info.header_offset)
        header = self._file.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size:
            self._fail(record, "file read failed (the file is truncated)")
        signature, name_len, extra_len = _LOCAL_HEADER.unpack(header)
        if signature != b"PK\x03\x04":
            self._fail(record, "bad local header")
        offset = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
        if offset + info.file_size > self._size:
            self._fail(
                record,
                f"its {info.file_size} bytes run past the end of the file "
                "(the file is truncated or damaged)",
            )
        self._unclaimed -= info.file_size
        if self._unclaimed < 0:
            self._fail(record, "records overlap: together they claim more bytes than the file has")
        return offset, offset + info.file_size

    def _fail(self, record: str, why: str):
        raise RuntimeError(
            f"PytorchStreamReader failed reading file {record} of {self.name}: {why}"
        )
