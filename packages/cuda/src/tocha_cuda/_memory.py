"""Device memory: an allocator over CuPy's memory pool that tracks peaks per device and, out
of memory, empties the cache once and retries before raising `tocha.cuda.OutOfMemoryError`.
"""

from __future__ import annotations

_GIB, _MIB = 1 << 30, 1 << 20


def format_bytes(n: int) -> str:
    """Bytes as PyTorch's messages write them: GiB above 1 GiB, else MiB."""
    return f"{n / _GIB:.2f} GiB" if n >= _GIB else f"{n / _MIB:.2f} MiB"


class TrackingAllocator:
    """A CuPy allocator (``cupy.cuda.set_allocator``): ``allocator(size) -> MemoryPointer``.

    Args:
        pool: CuPy's memory pool (``malloc``, ``used_bytes``, ``total_bytes``,
            ``free_all_blocks``), whose byte counts are those of the current device.
        oom_error: the exception the pool raises when the device is full.
        mem_info: ``mem_info() -> (free, total)`` bytes of the current device.
        current_device: ``current_device() -> int``, the current device's index.
    """

    def __init__(self, pool, oom_error, mem_info, current_device):
        self.pool = pool
        self.oom_error = oom_error
        self.mem_info = mem_info
        self.current_device = current_device
        self.peak_allocated: dict[int, int] = {}
        self.peak_reserved: dict[int, int] = {}
        self.retries: dict[int, int] = {}
        self.ooms: dict[int, int] = {}

    def __call__(self, size: int):
        try:
            ptr = self.pool.malloc(size)
        except self.oom_error:
            ptr = self._retry(size)
        index = ptr.device_id
        used, total = self.pool.used_bytes(), self.pool.total_bytes()
        if used > self.peak_allocated.get(index, 0):
            self.peak_allocated[index] = used
        if total > self.peak_reserved.get(index, 0):
            self.peak_reserved[index] = total
        return ptr

    def _retry(self, size: int):
        from tocha.cuda import OutOfMemoryError

        index = self.current_device()
        self.retries[index] = self.retries.get(index, 0) + 1
        self.pool.free_all_blocks()
        try:
            return self.pool.malloc(size)
        except self.oom_error:
            self.ooms[index] = self.ooms.get(index, 0) + 1
            free, total = self.mem_info()
            used, reserved = self.pool.used_bytes(), self.pool.total_bytes()
            raise OutOfMemoryError(
                f"CUDA out of memory. Tried to allocate {format_bytes(size)}. GPU {index} has a "
                f"total capacity of {format_bytes(total)} of which {format_bytes(free)} is "
                f"free. Of the allocated memory {format_bytes(used)} is allocated by tocha, "
                f"and {format_bytes(reserved - used)} is reserved by tocha but unallocated."
            ) from None

    def stats(self, index: int) -> dict:
        """PyTorch's memory statistics of device `index` (its pool's counts are current)."""
        used, total = self.pool.used_bytes(), self.pool.total_bytes()
        return {
            "allocated_bytes.all.current": used,
            "allocated_bytes.all.peak": max(self.peak_allocated.get(index, 0), used),
            "reserved_bytes.all.current": total,
            "reserved_bytes.all.peak": max(self.peak_reserved.get(index, 0), total),
            "active_bytes.all.current": used,
            "inactive_split_bytes.all.current": total - used,
            "num_alloc_retries": self.retries.get(index, 0),
            "num_ooms": self.ooms.get(index, 0),
        }

    def reset_peaks(self, index: int) -> None:
        self.peak_allocated[index] = self.pool.used_bytes()
        self.peak_reserved[index] = self.pool.total_bytes()
