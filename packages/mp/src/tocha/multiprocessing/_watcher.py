"""The file_system strategy's cleaner: unlinks a process's named segments once it is gone.

Run as a script (standard library only, so it starts in milliseconds) by the first process
that creates a named segment. That process writes each segment's path, one per line, to the
script's standard input and never closes it: the end of input means it has ended, however
it ended (an exit, an exception, SIGKILL). The script then unlinks every segment on its list
as soon as no living process holds it (holders keep a shared ``flock``, which the kernel drops
when they die). It detaches itself first (a second fork and a new session), so it outlives
its creator and a Ctrl-C to the creator's terminal does not reach it.
"""

import fcntl
import os
import sys


def unlink_when_free(names: list) -> None:
    """Unlink each named file once this process gets an exclusive lock on it: at once for
    those nobody holds, then, one by one, the others as their holders let go."""
    held = []
    for name in names:
        if not _unlink_locked(name, fcntl.LOCK_EX | fcntl.LOCK_NB):
            held.append(name)
    for name in held:
        _unlink_locked(name, fcntl.LOCK_EX)


def _unlink_locked(name: str, mode: int) -> bool:
    """Unlink `name` under an exclusive lock taken with `mode`; False if it is held."""
    try:
        fd = os.open(name, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, mode)
    except BlockingIOError:
        os.close(fd)
        return False
    try:
        os.unlink(name)
    except FileNotFoundError:
        pass
    os.close(fd)
    return True


def main() -> None:
    if os.fork():
        os._exit(0)
    os.setsid()
    names = [line.rstrip(b"\n").decode() for line in sys.stdin.buffer]
    unlink_when_free([name for name in dict.fromkeys(names) if name])


if __name__ == "__main__":
    main()
