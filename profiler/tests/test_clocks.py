"""Clocks: the CUDA event clock's logic, run on the CPU with a stand-in for torch.cuda.Event."""

from __future__ import annotations

import itertools
import math
import time
import unittest
from unittest import mock

import helpers  # noqa: F401  (one thread, the package on sys.path)

import torch

from dtsim_profile.clocks import CudaEventClock, HostClock, make_clock
from dtsim_profile.models import ZooOptions, load_model
from dtsim_profile.profile import ProfileResult, RunConfig, _tf32_desc, profile_model


class FakeEvent:
    """Records the wall time instead of a stream position; counts instances."""

    created = 0
    recorded = 0

    def __init__(self, enable_timing: bool = False) -> None:
        assert enable_timing
        FakeEvent.created += 1
        self.ns: int | None = None

    def record(self, stream: object = None) -> None:
        FakeEvent.recorded += 1
        self.ns = time.perf_counter_ns()

    def elapsed_time(self, end: "FakeEvent") -> float:
        assert self.ns is not None and end.ns is not None
        return (end.ns - self.ns) / 1e6  # milliseconds, like torch.cuda.Event


class HostClockTest(unittest.TestCase):
    def test_marks_are_nanoseconds_and_seconds_are_their_difference(self) -> None:
        clock = HostClock("thread_cpu")
        self.assertEqual(clock.seconds(1_000, 3_500_000_000), 3.499999)
        self.assertIsInstance(clock.mark(), int)

    def test_make_clock_picks_by_name(self) -> None:
        self.assertEqual(make_clock("wall").name, "wall")
        self.assertEqual(make_clock("cuda_events").name, "cuda_events")


@mock.patch.object(torch.cuda, "synchronize", lambda: None)
@mock.patch.object(torch.cuda, "Event", FakeEvent)
class CudaEventClockTest(unittest.TestCase):
    def test_events_are_reused_after_recycle(self) -> None:
        FakeEvent.created = 0
        clock = CudaEventClock()
        first = [clock.mark() for _ in range(3)]
        clock.sync()
        self.assertGreaterEqual(clock.seconds(first[0], first[2]), 0.0)
        clock.recycle()
        second = [clock.mark() for _ in range(3)]
        self.assertEqual(FakeEvent.created, 3)
        self.assertEqual({id(e) for e in first}, {id(e) for e in second})

    def test_profile_with_event_clock_equals_a_host_clock_on_the_same_source(self) -> None:
        # Both clocks read one deterministic source that advances 1 µs per reading, so the two
        # profiles must agree exactly (to float rounding: ms / 1e3 against ns / 1e9): a mark
        # paired with the wrong event, or an event re-recorded from the pool before its time
        # was read, changes some layer's time. Whether layers cover the iteration is the host
        # clock tests' subject (test_timing): on a loaded machine, wall time cannot say it for
        # a model this small (a wall-clock version of this test flaked both ways under load).
        readings = itertools.count(0, 1_000)

        def profile(clock: str) -> ProfileResult:
            nonlocal readings
            readings = itertools.count(0, 1_000)
            FakeEvent.created = FakeEvent.recorded = 0
            return profile_model(load_model("tiny_cnn", ZooOptions()), 8,
                                 RunConfig(torch.device("cpu"), "fp32", clock, 1, 5), "sgd")

        def tick() -> int:
            return next(readings)

        with mock.patch.object(time, "perf_counter_ns", tick), \
                mock.patch.dict(HostClock._SOURCES, {"wall": tick}):
            events = profile("cuda_events")
            created, recorded = FakeEvent.created, FakeEvent.recorded
            host = profile("wall")
        self.assertEqual([layer.name for layer in events.layers],
                         [layer.name for layer in host.layers])
        self.assertGreater(len(events.layers), 3)
        for e, h in zip(events.layers, host.layers):
            for got, want in ((e.forward_sec, h.forward_sec), (e.backward_sec, h.backward_sec)):
                self.assertEqual(len(got), 5)
                for g, w in zip(got, want):
                    self.assertGreater(w, 0.0, e.name)
                    self.assertTrue(math.isclose(g, w, rel_tol=1e-12), (e.name, g, w))
        for got, want in ((events.plain, host.plain), (events.hooked, host.hooked)):
            for g, w in zip(got, want):
                for field in ("forward_sec", "backward_sec", "optimizer_sec"):
                    self.assertTrue(math.isclose(getattr(g, field), getattr(w, field),
                                                 rel_tol=1e-12), field)
        # One pool, reused: 6 hooked iterations (1 warm-up + 5) each record at least as many
        # marks as the largest iteration's events, so without reuse `created` would be
        # `recorded`, with it at most a sixth of it.
        self.assertLessEqual(6 * created, recorded)


class Tf32DescriptionTest(unittest.TestCase):
    def test_names_both_flags(self) -> None:
        self.assertRegex(_tf32_desc(), r"^TF32 for convolutions (on|off), for matmuls (on|off)$")


if __name__ == "__main__":
    unittest.main()
