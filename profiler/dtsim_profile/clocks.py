"""Clocks for the profiler: one interface over CPU timers and CUDA events.

A clock hands out opaque *marks*; the time between two marks is only read after
``sync()``, so the same timing code works for host clocks (read at once) and for CUDA
events (recorded into the stream now, resolved after the iteration's synchronize).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Protocol

import torch

Mark = Any  # an int (nanoseconds) for host clocks, a torch.cuda.Event for CUDA


class Clock(Protocol):
    """What the layer recorder and the iteration loop need from a clock."""

    name: str  # the trace's measurement.clock: "thread_cpu", "wall" or "cuda_events"

    def mark(self) -> Mark:
        """Returns a mark of the current point (CPU) or stream position (CUDA)."""

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

    def mark(self) -> Mark:
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

    def mark(self) -> Mark:
        event = self._free.pop() if self._free else torch.cuda.Event(enable_timing=True)
        event.record()
        self._used.append(event)
        return event

    def sync(self) -> None:
        torch.cuda.synchronize()

    def seconds(self, start: Mark, end: Mark) -> float:
        return start.elapsed_time(end) / 1e3  # elapsed_time() is in milliseconds

    def recycle(self) -> None:
        self._free.extend(self._used)
        self._used.clear()


CLOCK_NAMES = ("thread_cpu", "wall", "cuda_events")


def make_clock(name: str) -> Clock:
    """Returns the clock called `name` (one of CLOCK_NAMES)."""
    if name == "cuda_events":
        return CudaEventClock()
    return HostClock(name)
