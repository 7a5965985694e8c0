"""Shared memory segments: created, mapped once per process, found again, freed.

A `Segment` is one shared memory file mapped into this process. Two kinds, one per sharing
strategy:

- ``file_descriptor``: an anonymous ``memfd_create`` file, sent to other processes as a file
  descriptor. The kernel frees it when the last process closes it and unmaps it, so a killed
  process leaks nothing.
- ``file_system``: a named file ``/dev/shm/tocha_<pid>_<n>_<token>``, sent by name. Every
  process that maps one holds a shared ``flock`` on it (the kernel drops it when the process
  dies); a header word counts the messages in flight. The last process to let go, or a
  later sweep of segments whose holders are all dead, unlinks it. So that a killed creator
  leaks nothing either, the first named segment a process creates starts a watcher
  (`_watcher.py`) that learns each name it creates and, once that process is gone, unlinks
  them as their last holders let go.

Space is reserved at creation (``posix_fallocate``), so a full ``/dev/shm`` fails there with
an error that says so, never later with a SIGBUS. Small storages share an arena segment
(bump allocation) so that many small tensors cost one file descriptor, not one each. A
segment stays mapped while any array over it lives: arrays reach their `Storage`, and it its
`Segment`, through their ``base``.
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import fcntl
import itertools
import multiprocessing.util
import os
import secrets
import subprocess
import sys
import threading
import weakref

import numpy as np

__all__ = ["Segment", "Storage", "allocate", "storage_of", "array_over", "open_fd", "open_name"]

SHM_DIR = "/dev/shm"
PREFIX = "tocha_"
# Bytes before the data: the file_system strategy's in-flight counter (int64 at offset 0).
HEADER = 64
ALIGN = 64
# Storages up to SMALL bytes are carved out of ARENA-byte segments.
SMALL = 128 * 1024
ARENA = 4 * 1024 * 1024

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [
    ctypes.c_void_p,
    ctypes.c_size_t,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_long,
]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_PROT_RW = 0x1 | 0x2
_MAP_SHARED = 0x1
_MAP_FAILED = ctypes.c_void_p(-1).value

_lock = threading.RLock()
_cache: dict = {}  # key -> weakref to the Segment mapped in this process
_arenas: dict = {}  # strategy -> (Segment, next free offset)
_counter = itertools.count()
_named = weakref.WeakSet()  # file_system segments this process holds
WATCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_watcher.py")


class Segment:
    """One shared memory file mapped into this process.

    ``fd`` stays open while the segment is mapped (it is what gets sent; for a named segment
    it holds the shared lock); ``name`` is the path of a file_system segment, else
    None; ``key`` identifies the file across processes.
    """

    __slots__ = ("fd", "name", "size", "addr", "key", "__weakref__")

    def __init__(self, fd: int, size: int, name: str | None = None):
        # A mapping holds its file open: a named segment is mapped through a second open
        # file, so that closing `fd` drops this process's lock even while it stays mapped.
        map_fd = fd if name is None else os.open(name, os.O_RDWR | os.O_CLOEXEC)
        addr = _libc.mmap(None, size, _PROT_RW, _MAP_SHARED, map_fd, 0)
        err = ctypes.get_errno()
        if map_fd != fd:
            os.close(map_fd)
        if addr in (None, _MAP_FAILED):
            raise OSError(
                err, f"mmap of a {size}-byte shared memory segment failed: {os.strerror(err)}"
            )
        st = os.fstat(fd)
        self.fd, self.name, self.size, self.addr = fd, name, size, addr
        self.key = ("fs", name) if name is not None else ("fd", st.st_dev, st.st_ino)
        weakref.finalize(self, _release, self.key, fd, addr, size, name).atexit = False
        _cache[self.key] = weakref.ref(self)
        if name is not None:
            _named.add(self)
            _exit_hook()


def _release(key, fd, addr, size, name) -> None:
    """Unmap a segment nothing in this process uses any more (a finalizer)."""
    with _lock:
        ref = _cache.get(key)
        if ref is not None and ref() is None:
            del _cache[key]
    _libc.munmap(addr, size)
    os.close(fd)
    if name is not None:
        _unlink_if_unused(name, creator_dead=False)


class Storage:
    """A storage: `nbytes` bytes at byte `offset` of a `segment` (the root that the arrays of
    a tensor and its views are made over, so their storage offsets count from here)."""

    __slots__ = ("segment", "offset", "nbytes")

    def __init__(self, segment: Segment, offset: int, nbytes: int):
        self.segment, self.offset, self.nbytes = segment, offset, nbytes

    @property
    def __array_interface__(self) -> dict:
        return {
            "shape": (self.nbytes,),
            "typestr": "|u1",
            "data": (self.segment.addr + self.offset, False),
            "version": 3,
        }


def storage_of(array) -> Storage | None:
    """The shared Storage an array's memory lies in, or None if it is not shared."""
    base = array
    while type(base) is np.ndarray:
        base = base.base
    return base if type(base) is Storage else None


def array_over(storage: Storage, offset: int, dtype, shape, strides) -> np.ndarray:
    """An array of `dtype`, `shape` and byte `strides` whose first element is at byte
    `offset` of `storage`."""
    return np.ndarray(shape, dtype, buffer=np.asarray(storage), offset=offset, strides=strides)


def allocate(nbytes: int, strategy: str) -> Storage:
    """A new storage of `nbytes` in shared memory, 64-byte aligned."""
    if nbytes > SMALL:
        return Storage(_create(HEADER + nbytes, strategy), HEADER, nbytes)
    with _lock:
        segment, free = _arenas.get(strategy, (None, 0))
        if segment is None or free + nbytes > segment.size:
            segment, free = _create(ARENA, strategy), HEADER
        _arenas[strategy] = (segment, free + max(-(-nbytes // ALIGN) * ALIGN, ALIGN))
        return Storage(segment, free, nbytes)


def _create(size: int, strategy: str) -> Segment:
    if strategy == "file_system":
        _sweep()
        name = os.path.join(
            SHM_DIR, f"{PREFIX}{os.getpid()}_{next(_counter)}_{secrets.token_hex(4)}"
        )
        fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_SH)
        _watch(name)
    else:
        name = None
        fd = os.memfd_create("tocha", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, size)
        os.posix_fallocate(fd, 0, size)
        return Segment(fd, size, name)
    except OSError as exc:
        os.close(fd)
        if name is not None:
            os.unlink(name)
        raise _no_space(exc, size, name) from None


def _watch(name: str) -> None:
    """Give a new named segment to this process's watcher (started on first use), which
    unlinks it once this process has ended, even by SIGKILL."""
    global _watcher_fd, _watcher_pid
    with _lock:
        if _watcher_pid != os.getpid():
            _watcher_fd, _watcher_pid = _start_watcher(), os.getpid()
        if _watcher_fd is None:
            return
        try:
            os.write(_watcher_fd, name.encode() + b"\n")
        except OSError:
            os.close(_watcher_fd)
            _watcher_fd = None


def _start_watcher() -> int | None:
    """Start a watcher reading from a new pipe; the pipe's write end, or None where it
    could not start (then only the sweeps at exit and at creation clean up)."""
    read_fd, write_fd = os.pipe()
    try:
        subprocess.run(
            [sys.executable, "-I", "-S", WATCHER],
            stdin=read_fd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        os.close(write_fd)
        return None
    finally:
        os.close(read_fd)
    return write_fd


def _no_space(exc: OSError, size: int, name: str | None) -> Exception:
    where = name or "a memfd (shared memory backed by RAM)"
    if exc.errno != errno.ENOSPC:
        return RuntimeError(
            f"unable to allocate {size} bytes of shared memory in {where}: "
            f"{exc.strerror} ({exc.errno})"
        )
    return RuntimeError(
        f"unable to allocate {size} bytes of shared memory in {where}: No space left on "
        f"device ({exc.errno}). The shared memory file system ({SHM_DIR} or the RAM behind "
        "memfd) is full: free space there, enlarge it (docker: --shm-size), or send smaller "
        "tensors."
    )


def open_fd(fd: int, size: int) -> Segment:
    """The Segment of a received file descriptor (which this takes ownership of); the one
    already mapped here if this process has it."""
    st = os.fstat(fd)
    with _lock:
        segment = _cached(("fd", st.st_dev, st.st_ino))
        if segment is not None:
            if fd != segment.fd:  # a spawned child gets one descriptor for many tensors
                os.close(fd)
            return segment
        try:
            return Segment(fd, size)
        except BaseException:
            os.close(fd)
            raise


def open_name(name: str, size: int) -> Segment:
    """The Segment of a received file_system name; the message in flight is accounted for."""
    with _lock:
        segment = _cached(("fs", name))
        if segment is None:
            if not os.path.basename(name).startswith(PREFIX) or os.path.dirname(name) != SHM_DIR:
                raise RuntimeError(f"not a tocha shared memory segment: {name!r}")
            try:
                fd = os.open(name, os.O_RDWR | os.O_CLOEXEC)
            except FileNotFoundError:
                raise RuntimeError(
                    f"shared memory segment {name} no longer exists: the process that sent "
                    "the tensor let go of it before it was received"
                ) from None
            fcntl.flock(fd, fcntl.LOCK_SH)
            try:
                segment = Segment(fd, size, name)
            except BaseException:
                os.close(fd)
                raise
        in_flight(segment, -1)
        return segment


def _cached(key) -> Segment | None:
    ref = _cache.get(key)
    return None if ref is None else ref()


def in_flight(segment: Segment, delta: int) -> None:
    """Add `delta` to a named segment's count of messages in flight (under a POSIX lock)."""
    with _lock:
        fcntl.lockf(segment.fd, fcntl.LOCK_EX, 8, 0)
        try:
            word = ctypes.c_int64.from_address(segment.addr)
            word.value = max(word.value + delta, 0)
        finally:
            fcntl.lockf(segment.fd, fcntl.LOCK_UN, 8, 0)


def _unlink_if_unused(name: str, creator_dead: bool) -> None:
    """Unlink a named segment that no living process holds and no message is carrying
    (or whose creator is dead, when `creator_dead`: nothing will receive its messages)."""
    try:
        fd = os.open(name, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return
    try:
        header = os.pread(fd, 8, 0)
        pending = int.from_bytes(header, "little", signed=True) if len(header) == 8 else 0
        if pending <= 0 or creator_dead:
            os.unlink(name)
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep(exiting: bool = False) -> None:
    """Unlink named segments left by dead processes (and, at exit, this process's own)."""
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return
    me = os.getpid()
    for entry in names:
        if not entry.startswith(PREFIX):
            continue
        try:
            pid = int(entry[len(PREFIX) :].split("_", 1)[0])
        except ValueError:
            continue
        dead = (exiting and pid == me) or (pid != me and not _pid_alive(pid))
        _unlink_if_unused(os.path.join(SHM_DIR, entry), creator_dead=dead)


def _at_exit() -> None:
    """Drop this process's locks on named segments (memory is unmapped by the exit itself),
    then unlink those that nobody else holds. Runs once, at interpreter exit or at the end
    of a multiprocessing child (which skips atexit)."""
    global _exited
    with _lock:
        if _exited:
            return
        _exited = True
        held = list(_named)
        if not held:
            return
        for segment in held:
            try:
                os.close(segment.fd)
            except OSError:
                pass
        _sweep(exiting=True)


def _after_fork_in_child() -> None:
    """A forked child must not carve storages out of its parent's arenas, nor keep its
    parent's watcher waiting: it starts its own when it creates a named segment."""
    global _watcher_fd, _watcher_pid
    _arenas.clear()
    if _watcher_fd is not None:
        os.close(_watcher_fd)
    _watcher_fd = _watcher_pid = None


def _exit_hook() -> None:
    """Run `_at_exit` when this process ends; multiprocessing children skip atexit but run
    multiprocessing's finalizers, which a forked child must register again."""
    global _hooked_pid, _exited
    if _hooked_pid != os.getpid():
        _hooked_pid, _exited = os.getpid(), False
        multiprocessing.util.Finalize(None, _at_exit, exitpriority=-100)


_exited = False
_hooked_pid = None
_watcher_fd: int | None = None  # write end of the pipe to this process's watcher
_watcher_pid: int | None = None  # the process that started it
atexit.register(_at_exit)
os.register_at_fork(after_in_child=_after_fork_in_child)
