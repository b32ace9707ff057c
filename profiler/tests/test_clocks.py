"""Clocks: the CUDA event clock's logic, run on the CPU with a stand-in for torch.cuda.Event."""

from __future__ import annotations

import time
import unittest
from unittest import mock

from helpers import assert_coverage

import torch

from dtsim_profile.clocks import CudaEventClock, HostClock, make_clock
from dtsim_profile.models import ZooOptions, load_model
from dtsim_profile.profile import RunConfig, _tf32_desc, profile_model


class FakeEvent:
    """Records the wall time instead of a stream position; counts instances."""

    created = 0

    def __init__(self, enable_timing: bool = False) -> None:
        assert enable_timing
        FakeEvent.created += 1
        self.ns: int | None = None

    def record(self, stream: object = None) -> None:
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

    def test_profile_with_event_clock_covers_the_iteration(self) -> None:
        bundle = load_model("tiny_cnn", ZooOptions())
        config = RunConfig(torch.device("cpu"), "fp32", "cuda_events", 1, 5)
        created = []

        def measure():
            FakeEvent.created = 0
            result = profile_model(bundle, 8, config, "sgd")
            created.append(FakeEvent.created)
            return result

        # wall time on a shared machine: the same loose bounds as the thread clock tests
        assert_coverage(self, measure)
        self.assertLess(max(created), 400)  # one pool, not new events every iteration


class Tf32DescriptionTest(unittest.TestCase):
    def test_names_both_flags(self) -> None:
        self.assertRegex(_tf32_desc(), r"^TF32 for convolutions (on|off), for matmuls (on|off)$")


if __name__ == "__main__":
    unittest.main()
