"""Clocks for the profiler: one interface over CPU timers, CUDA events and CUDA kernels.

A clock hands out opaque *marks*; the time between two marks is only read after
``sync()``, so the same timing code works for host clocks (read at once), for CUDA
events (recorded into the stream now, resolved after the iteration's synchronize) and for
the kernel clock (kernels.CudaKernelClock: marks in a torch.profiler session, resolved into
kernel times when the session closes).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Protocol

import torch

from .kernels import CUDA_KERNELS, CudaKernelClock

Mark = Any  # an int (nanoseconds) for host clocks, a torch.cuda.Event for CUDA events, an
# int (mark id) for the kernel clock


class Clock(Protocol):
    """What the layer recorder and the iteration loop need from a clock."""

    name: str  # "thread_cpu", "wall", "cuda_events" or "cuda_kernels" (kernels.CUDA_KERNELS)

    def begin(self) -> None:
        """Starts measuring an iteration (the kernel clock opens its profiler session)."""

    def mark(self) -> Mark:
        """Returns a mark of the current point (CPU) or stream position (CUDA)."""

    def mark_end(self) -> Mark:
        """A mark that ends an autograd node's interval (its post-hook). The same as mark()
        except for the kernel clock, which gives it the work the autograd engine launches
        right after the node (kernels.KernelTimeline)."""

    def sync(self) -> None:
        """Waits until every mark handed out so far can be read."""

    def seconds(self, start: Mark, end: Mark) -> float:
        """Seconds from `start` to `end`. REQUIRES: sync() was called after both marks."""

    def recycle(self) -> None:
        """Says that no mark handed out so far will be read again (CUDA reuses events)."""


class HostClock:
    """A CPU clock in integer nanoseconds: ``thread_cpu`` (CPU time of the calling thread,
    immune to preemption by other jobs) or ``wall`` (monotonic wall time)."""

    _SOURCES: dict[str, Callable[[], int]] = {
        "thread_cpu": time.thread_time_ns,
        "wall": time.perf_counter_ns,
    }

    def __init__(self, name: str) -> None:
        self.name = name
        self._now = self._SOURCES[name]

    def begin(self) -> None:
        pass

    def mark(self) -> Mark:
        return self._now()

    def mark_end(self) -> Mark:
        return self._now()

    def sync(self) -> None:
        pass

    def seconds(self, start: Mark, end: Mark) -> float:
        return (end - start) / 1e9

    def recycle(self) -> None:
        pass


class CudaEventClock:
    """Times the current CUDA stream with ``torch.cuda.Event(enable_timing=True)``.

    A mark records a fresh event; events are pooled and reused after ``recycle()``, so a
    steady-state iteration creates no new events.
    """

    name = "cuda_events"

    def __init__(self) -> None:
        self._free: list[torch.cuda.Event] = []
        self._used: list[torch.cuda.Event] = []

    def begin(self) -> None:
        pass

    def mark(self) -> Mark:
        event = self._free.pop() if self._free else torch.cuda.Event(enable_timing=True)
        event.record()
        self._used.append(event)
        return event

    def mark_end(self) -> Mark:
        return self.mark()

    def sync(self) -> None:
        torch.cuda.synchronize()

    def seconds(self, start: Mark, end: Mark) -> float:
        return start.elapsed_time(end) / 1e3  # elapsed_time() is in milliseconds

    def recycle(self) -> None:
        self._free.extend(self._used)
        self._used.clear()


CLOCK_NAMES = ("thread_cpu", "wall", "cuda_events")  # what --clock accepts


def make_clock(name: str) -> Clock:
    """Returns the clock called `name` (one of CLOCK_NAMES, or kernels.CUDA_KERNELS)."""
    if name == "cuda_events":
        return CudaEventClock()
    if name == CUDA_KERNELS:
        return CudaKernelClock()
    return HostClock(name)
