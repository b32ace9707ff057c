"""CUDA kernel timing (kernels.py) without a GPU: the attribution on synthetic profiler
events, the adapters on stand-ins for torch's event objects, the clock with a fake profiler
session, and the whole kernel path with the real (CPU-only) profiler, the self times of CPU
ops standing in for kernels."""

from __future__ import annotations

import argparse
import os
import tempfile
import unittest
from collections import namedtuple
from statistics import median
from types import SimpleNamespace
from unittest import mock

import helpers  # noqa: F401  (puts the package on sys.path)

import torch

from dtsim_profile import cli
from dtsim_profile.kernels import (CUDA_KERNELS, MARK_PREFIX, NO_MARK, USER_SCOPE,
                                   CudaKernelClock, DeviceEvent, HostEvent, KernelTimeline,
                                   KernelTimingError, ProfiledEvents, cpu_ops_as_device_events,
                                   dump_events, events_from_function_events,
                                   events_from_kineto, load_events)
from dtsim_profile.models import ProfileError, ZooOptions, load_model
from dtsim_profile.profile import PhaseTimes, RunConfig, profile_model
from dtsim_profile.summary import compute_totals
from dtsim_profile.trace import KERNELS_TRACE_CLOCK, trace_clock

MAIN, ENGINE = 1, 2  # torch thread ids: the training thread, the autograd engine's


def mark(mark_id: int, time: int, thread: int = MAIN) -> HostEvent:
    return HostEvent(f"{MARK_PREFIX}{mark_id}", thread, time, time + 1, 10_000 + mark_id,
                     scope=USER_SCOPE)


def op(correlation: int, start: int, end: int, thread: int = MAIN,
       name: str = "aten::op") -> HostEvent:
    return HostEvent(name, thread, start, end, correlation, scope=0)


def launch(cuda_correlation: int, op_correlation: int, time: int,
           thread: int = MAIN) -> HostEvent:
    """The CUDA runtime call that launched kernel `cuda_correlation` from op `op_correlation`."""
    return HostEvent("cudaLaunchKernel", thread, time, time + 3, cuda_correlation,
                     linked=op_correlation)


def kernel(op_correlation: int, gpu_start: int | None, duration: int,
           cuda_correlation: int = 0, stream: int = 7) -> DeviceEvent:
    return DeviceEvent("void kernel<float>", gpu_start, duration, cuda_correlation,
                       op_correlation, stream)


def timeline(host: list[HostEvent], device: list[DeviceEvent],
             end_marks: tuple[int, ...] = ()) -> KernelTimeline:
    return KernelTimeline(ProfiledEvents(host, device, "test"), end_marks)


class ForwardAttributionTest(unittest.TestCase):
    """Marks 0..3 on the training thread at 100, 200, 300, 400 ns (GPU times are far
    away: only launch times decide the window)."""

    def setUp(self) -> None:
        self.host = [mark(0, 100), mark(1, 200), mark(2, 300), mark(3, 400),
                     op(10, 110, 150),  # window 0-1
                     op(11, 210, 290), op(12, 220, 230),  # window 1-2: 12 nested in 11
                     op(13, 310, 390)]  # window 2-3

    def test_each_kernel_counts_to_the_window_of_its_launching_op(self) -> None:
        line = timeline(self.host, [kernel(10, 5_000, 50), kernel(12, 5_100, 30),
                                    kernel(11, 5_200, 20), kernel(13, 5_300, 7)])
        self.assertAlmostEqual(line.seconds(0, 1), 50e-9)
        self.assertAlmostEqual(line.seconds(1, 2), 50e-9)  # inner op's and outer op's
        self.assertAlmostEqual(line.seconds(2, 3), 7e-9)
        self.assertAlmostEqual(line.seconds(0, 3), 107e-9)

    def test_gpu_idle_time_between_kernels_is_not_counted(self) -> None:
        # two kernels of one window 1 ms apart on the GPU: 2 x 10 ns, not 1 ms
        line = timeline(self.host, [kernel(11, 5_000, 10), kernel(12, 1_005_000, 10)])
        self.assertAlmostEqual(line.seconds(1, 2), 20e-9)

    def test_overlapping_kernels_count_once(self) -> None:
        # two streams: [1000, 1100) and [1050, 1200) overlap -> 200 ns, plus a later one
        line = timeline(self.host, [kernel(11, 1_000, 100, stream=7),
                                    kernel(12, 1_050, 150, stream=8),
                                    kernel(12, 2_000, 25, stream=7)])
        self.assertAlmostEqual(line.seconds(1, 2), 225e-9)

    def test_kernels_without_gpu_start_are_summed(self) -> None:
        line = timeline(self.host, [kernel(11, None, 40), kernel(12, None, 40)])
        self.assertAlmostEqual(line.seconds(1, 2), 80e-9)

    def test_a_plain_mark_does_not_pull_later_kernels_back(self) -> None:
        # op 13 lies after mark 2, which is no end mark: it stays in window 2-3
        line = timeline(self.host, [kernel(13, 5_000, 9)], end_marks=(1,))
        self.assertEqual(line.seconds(1, 2), 0.0)
        self.assertAlmostEqual(line.seconds(2, 3), 9e-9)
        self.assertEqual(line.trailing, 0)

    def test_unlinked_kernels_are_counted_apart(self) -> None:
        line = timeline(self.host, [kernel(0, 5_000, 30), kernel(999, 5_100, 20),
                                    kernel(10, 5_200, 5)])
        self.assertAlmostEqual(line.seconds(0, 3), 5e-9)
        self.assertEqual(line.unlinked_ns, 50)
        self.assertEqual(line.device_ns, 55)

    def test_a_kernel_without_op_is_placed_by_its_runtime_call(self) -> None:
        host = self.host + [launch(77, 0, 320)]
        line = timeline(host, [kernel(0, 5_000, 11, cuda_correlation=77)])
        self.assertAlmostEqual(line.seconds(2, 3), 11e-9)
        self.assertEqual(line.unlinked_ns, 0)

    def test_a_missing_mark_is_an_error(self) -> None:
        with self.assertRaisesRegex(KernelTimingError, "dtsim_profile#9 is missing"):
            timeline(self.host, []).seconds(0, 9)

    def test_an_empty_or_reversed_window_is_zero(self) -> None:
        line = timeline(self.host, [kernel(10, 0, 5)])
        self.assertEqual(line.seconds(1, 1), 0.0)
        self.assertEqual(line.seconds(1, 0), 0.0)


class BackwardAttributionTest(unittest.TestCase):
    """The training thread marks the phases (forward end 500, backward end 900); the engine
    thread runs node A (pre-hook 600, post-hook 650) and node B (700, 760) inside an
    evaluate_function op each, as autograd does."""

    def setUp(self) -> None:
        self.host = [
            mark(0, 100), mark(1, 500), mark(9, 900),  # phases, training thread
            op(40, 590, 680, ENGINE, "autograd::engine::evaluate_function: AddmmBackward0"),
            mark(2, 600, ENGINE), op(41, 610, 640, ENGINE, "AddmmBackward0"),
            op(42, 615, 630, ENGINE, "aten::mm"), mark(3, 650, ENGINE),
            op(43, 660, 670, ENGINE, "aten::add"),  # InputBuffer::add after A's post-hook
            op(50, 690, 790, ENGINE, "autograd::engine::evaluate_function: ReluBackward0"),
            mark(4, 700, ENGINE), op(51, 710, 740, ENGINE, "aten::threshold_backward"),
            mark(5, 760, ENGINE),
        ]

    def test_node_windows_on_the_engine_thread_and_phase_windows_across_threads(self) -> None:
        line = timeline(self.host, [kernel(42, 5_000, 100), kernel(51, 6_000, 30)],
                        end_marks=(3, 5))
        self.assertAlmostEqual(line.seconds(2, 3), 100e-9)
        self.assertAlmostEqual(line.seconds(4, 5), 30e-9)
        self.assertAlmostEqual(line.seconds(1, 9), 130e-9)  # backward phase: both
        self.assertEqual(line.seconds(0, 1), 0.0)

    def test_work_after_an_end_mark_counts_to_the_node_it_closed(self) -> None:
        line = timeline(self.host, [kernel(42, 5_000, 100), kernel(43, 5_200, 8)],
                        end_marks=(3, 5))
        self.assertAlmostEqual(line.seconds(2, 3), 108e-9)
        self.assertEqual(line.seconds(3, 4), 0.0)
        self.assertAlmostEqual(line.seconds(1, 9), 108e-9)
        self.assertEqual(line.trailing, 1)

    def test_without_end_marks_that_work_is_between_nodes(self) -> None:
        line = timeline(self.host, [kernel(43, 5_200, 8)])
        self.assertEqual(line.seconds(2, 3), 0.0)
        self.assertAlmostEqual(line.seconds(3, 4), 8e-9)

    def test_an_op_enclosing_marks_uses_the_runtime_call_time(self) -> None:
        # kernels linked straight to evaluate_function (op 50, which encloses marks 4, 5):
        # one launched at 720 (inside node B), one whose runtime call is unknown (-> 690)
        host = self.host + [launch(88, 50, 720, ENGINE)]
        line = timeline(host, [kernel(50, 5_000, 12, cuda_correlation=88),
                               kernel(50, 5_100, 5, cuda_correlation=89)], end_marks=(3, 5))
        self.assertAlmostEqual(line.seconds(4, 5), 12e-9)
        self.assertEqual(line.refined, 1)
        # 690 comes after A's end mark 650 and before B's pre-hook: trailing work of A
        self.assertAlmostEqual(line.seconds(2, 3), 5e-9)

    def test_an_op_inside_a_window_ignores_its_runtime_call_time(self) -> None:
        # the runtime call's clock may be skewed: an op that encloses no mark decides
        host = self.host + [launch(90, 51, 765, ENGINE)]
        line = timeline(host, [kernel(51, 5_000, 6, cuda_correlation=90)], end_marks=(3, 5))
        self.assertAlmostEqual(line.seconds(4, 5), 6e-9)
        self.assertEqual(line.refined, 0)


class FakeKinetoEvent:
    """A torch 2.x ``_KinetoEvent`` (start_ns, duration_ns, ...) or, with `legacy`, a
    torch 1.13 one (start_us, duration_us; no is_user_annotation)."""

    def __init__(self, name: str, device: str, start_ns: int, duration_ns: int,
                 correlation: int, linked: int = 0, thread: int = MAIN, scope: int = 0,
                 stream: int = 0, user_annotation: bool = False, legacy: bool = False):
        self._values = dict(name=name, device_type=device, correlation_id=correlation,
                            linked_correlation_id=linked, start_thread_id=thread, scope=scope,
                            device_resource_id=stream)
        if legacy:
            self._values.update(start_us=start_ns / 1000, duration_us=duration_ns / 1000)
        else:
            self._values.update(start_ns=start_ns, duration_ns=duration_ns,
                                is_user_annotation=user_annotation)

    def __getattr__(self, method: str):
        if method.startswith("_") or method not in self._values:
            raise AttributeError(method)
        return lambda: self._values[method]


class FakeResult:
    def __init__(self, events: list[FakeKinetoEvent]) -> None:
        self._events = events

    def events(self) -> list[FakeKinetoEvent]:
        return self._events


def kineto_events(legacy: bool) -> list[FakeKinetoEvent]:
    return [
        FakeKinetoEvent(f"{MARK_PREFIX}0", "CPU", 100_000, 1_000, 1, scope=USER_SCOPE,
                        legacy=legacy),
        FakeKinetoEvent("aten::mm", "CPU", 110_000, 20_000, 2, legacy=legacy),
        FakeKinetoEvent("cudaLaunchKernel", "CPU", 115_000, 3_000, 501, linked=2,
                        legacy=legacy),
        FakeKinetoEvent("Optimizer.step#SGD.step", "CPU", 140_000, 9_000, 3,
                        scope=USER_SCOPE, legacy=legacy),
        FakeKinetoEvent("[memory]", "CPU", 120_000, 0, 0, legacy=legacy),
        FakeKinetoEvent(f"{MARK_PREFIX}1", "CPU", 150_000, 1_000, 4, scope=USER_SCOPE,
                        legacy=legacy),
        FakeKinetoEvent("sm90_gemm", "CUDA", 900_000, 40_000, 501, linked=2, stream=7,
                        legacy=legacy),
        FakeKinetoEvent("Memset (Device)", "CUDA", 950_000, 2_000, 502, linked=2, stream=7,
                        legacy=legacy),
        # Kineto's GPU-side span of a record_function range, and a sync record: not work
        FakeKinetoEvent("Optimizer.step#SGD.step", "CUDA", 960_000, 9_000, 3, stream=7,
                        user_annotation=not legacy, legacy=legacy),
        FakeKinetoEvent("Stream Sync", "CUDA", 980_000, 5_000, 503, stream=7, legacy=legacy),
    ]


class KinetoAdapterTest(unittest.TestCase):
    def check(self, legacy: bool) -> None:
        events = events_from_kineto(FakeResult(kineto_events(legacy)), "CUDA", "CPU")
        self.assertEqual(events.adapter, "kineto_results")
        self.assertEqual([e.name for e in events.device], ["sm90_gemm", "Memset (Device)"])
        gemm = events.device[0]
        self.assertEqual((gemm.start_ns, gemm.duration_ns, gemm.correlation, gemm.linked,
                          gemm.stream), (900_000, 40_000, 501, 2, 7))
        self.assertNotIn("[memory]", [e.name for e in events.host])
        runtime = [e for e in events.host if e.name == "cudaLaunchKernel"][0]
        self.assertEqual((runtime.correlation, runtime.linked), (501, 2))
        line = KernelTimeline(events)
        self.assertAlmostEqual(line.seconds(0, 1), 42e-6)

    def test_torch_2_events(self) -> None:
        self.check(legacy=False)

    def test_torch_1_13_events_in_microseconds(self) -> None:
        self.check(legacy=True)


Kernel = namedtuple("Kernel", ["name", "device", "duration"])


def function_event(event_id: int, name: str, start_us: float, end_us: float,
                   kernels: list[Kernel] = (), device: str = "CPU", thread: int = MAIN,
                   scope: int = 0) -> SimpleNamespace:
    return SimpleNamespace(id=event_id, name=name, thread=thread, device_type=device,
                           time_range=SimpleNamespace(start=start_us, end=end_us),
                           kernels=list(kernels), is_async=False, is_legacy=False, scope=scope)


class FunctionEventAdapterTest(unittest.TestCase):
    def test_kernels_of_host_ops_with_durations_only(self) -> None:
        events = events_from_function_events([
            function_event(1, f"{MARK_PREFIX}0", 1.0, 1.5, scope=USER_SCOPE),
            function_event(2, "aten::mm", 2.0, 4.0, [Kernel("gemm", 0, 3.25)]),
            # a runtime call with the same kernel attached (older torch did that): not twice
            function_event(3, "cudaLaunchKernel", 2.5, 2.6, [Kernel("gemm", 0, 3.25)]),
            function_event(4, f"{MARK_PREFIX}1", 5.0, 5.5, scope=USER_SCOPE),
            function_event(5, "gemm", 10.0, 13.25, device="CUDA"),
        ], "CUDA", "CPU")
        self.assertEqual(events.adapter, "function_events")
        self.assertEqual(events.device, [DeviceEvent("gemm", None, 3250, 0, 2)])
        self.assertAlmostEqual(KernelTimeline(events).seconds(0, 1), 3.25e-6)


class RealProfilerEventsTest(unittest.TestCase):
    """Both adapters on the installed torch's own (CPU-only) profiler events."""

    @classmethod
    def setUpClass(cls) -> None:
        from torch.profiler import ProfilerActivity, profile
        from dtsim_profile.kernels import _device_types, _record_function_marker
        cls.types = _device_types()
        leaf = torch.ones(3, requires_grad=True)
        with profile(activities=[ProfilerActivity.CPU]) as session:
            _record_function_marker(f"{MARK_PREFIX}0")
            loss = (leaf * 2).sum()
            loss.grad_fn.register_prehook(
                lambda grads: _record_function_marker(f"{MARK_PREFIX}1"))
            loss.backward()
            _record_function_marker(f"{MARK_PREFIX}2")
        cls.session = session

    def check(self, events: ProfiledEvents) -> None:
        marks = [e for e in events.host if e.name.startswith(MARK_PREFIX)]
        self.assertEqual([e.name[len(MARK_PREFIX):] for e in marks], ["0", "1", "2"])
        self.assertEqual(sorted(marks, key=lambda e: e.start_ns), marks)
        self.assertTrue(any(e.name == "aten::mul" for e in events.host))
        self.assertEqual(events.device, [])  # no CUDA here

    def test_kineto_results(self) -> None:
        self.check(events_from_kineto(self.session.profiler.kineto_results, *self.types))

    def test_function_events(self) -> None:
        self.check(events_from_function_events(self.session.events(), *self.types))


class CpuOpsTest(unittest.TestCase):
    def test_self_times_of_ops_stand_in_for_kernels(self) -> None:
        host = [op(1, 100, 200), op(2, 120, 150), op(3, 160, 170),  # 1 holds 2 and 3
                op(4, 300, 500, name="autograd::engine::evaluate_function: X"),
                mark(7, 350), op(5, 360, 380),  # 4 encloses a mark: not work
                HostEvent("Optimizer.step#SGD.step", MAIN, 600, 700, 6, scope=USER_SCOPE)]
        device = {e.linked: e.duration_ns for e in cpu_ops_as_device_events(host)}
        self.assertEqual(device, {1: 60, 2: 30, 3: 10, 5: 20})


class FakeSession:
    """Stands in for torch.profiler.profile: collects the marks made while entered."""

    active: "FakeSession | None" = None

    def __init__(self) -> None:
        self.entered = self.exited = False
        self.marks: list[HostEvent] = []

    def __enter__(self) -> "FakeSession":
        self.entered = True
        FakeSession.active = self
        return self

    def __exit__(self, *exc: object) -> None:
        self.exited = True
        FakeSession.active = None


def fake_marker(name: str) -> None:
    session = FakeSession.active
    assert session is not None, "a mark outside the session"
    time = 1_000 * (len(session.marks) + 1)
    session.marks.append(HostEvent(name, MAIN, time, time, 0, scope=USER_SCOPE))


def read_fake(session: FakeSession) -> ProfiledEvents:
    # one 100 ns kernel launched right after every mark
    host, device = list(session.marks), []
    for i, marked in enumerate(session.marks):
        host.append(op(100 + i, marked.start_ns + 10, marked.start_ns + 20))
        device.append(kernel(100 + i, 50_000 * i, 100))
    return ProfiledEvents(host, device, "fake")


class CudaKernelClockTest(unittest.TestCase):
    def make(self, read=read_fake) -> tuple[CudaKernelClock, list[FakeSession]]:
        sessions: list[FakeSession] = []

        def factory() -> FakeSession:
            sessions.append(FakeSession())
            return sessions[-1]

        clock = CudaKernelClock(session_factory=factory, read_events=read, marker=fake_marker,
                                dump_path="")
        return clock, sessions

    def test_one_session_per_iteration(self) -> None:
        clock, sessions = self.make()
        self.assertEqual(clock.mark(), NO_MARK)  # no session yet: ignored
        for _ in range(2):
            clock.begin()
            first, second, third, fourth = (clock.mark(), clock.mark(), clock.mark_end(),
                                            clock.mark())
            clock.sync()
            self.assertTrue(sessions[-1].exited)
            self.assertAlmostEqual(clock.seconds(first, second), 100e-9)
            # its own kernel and the one launched after the end mark
            self.assertAlmostEqual(clock.seconds(second, third), 200e-9)
            self.assertEqual(clock.seconds(third, fourth), 0.0)
            self.assertEqual(clock.last_unlinked_sec, 0.0)
            clock.recycle()
        self.assertEqual(len(sessions), 2)
        self.assertEqual(clock.mark(), NO_MARK)  # after sync: ignored again
        self.assertEqual(clock.adapter, "fake")

    def test_no_kernels_is_an_error(self) -> None:
        clock, _ = self.make(read=lambda session: ProfiledEvents(session.marks, [], "fake"))
        clock.begin()
        clock.mark()
        with self.assertRaisesRegex(KernelTimingError, "no CUDA kernels"):
            clock.sync()

    def test_seconds_before_sync_is_an_error(self) -> None:
        # An AssertionError: the profiler's own mistake, never reported as bad input.
        clock, _ = self.make()
        clock.begin()
        with self.assertRaises(AssertionError):
            clock.seconds(clock.mark(), clock.mark())

    def test_dump_and_load_give_the_same_times(self) -> None:
        events = ProfiledEvents([mark(0, 100), op(5, 110, 120), mark(1, 200)],
                                [kernel(5, 1_000, 30), kernel(5, None, 4)], "test")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "events.json.gz")
            dump_events(events, [1], path)
            loaded, ends = load_events(path)
        self.assertEqual(loaded, events)
        self.assertEqual(ends, [1])


class KernelPathOnCpuTest(unittest.TestCase):
    """The whole kernel path with torch's own profiler (CPU-only here): marks from module
    and autograd hooks, one session per hooked iteration, attribution, totals."""

    @classmethod
    def setUpClass(cls) -> None:
        bundle = load_model("tiny_cnn", ZooOptions())
        torch.manual_seed(0)
        cls.clock = CudaKernelClock(cpu_ops_as_kernels=True, dump_path="")
        config = RunConfig(torch.device("cpu"), "fp32", "thread_cpu", 1, 3)
        cls.result = profile_model(bundle, 4, config, "sgd", kernel_clock=cls.clock)
        torch.manual_seed(0)
        cls.reference = profile_model(load_model("tiny_cnn", ZooOptions()), 4,
                                      RunConfig(torch.device("cpu"), "fp32", "thread_cpu", 0, 1),
                                      "sgd")

    def test_same_layers_as_the_cpu_clock(self) -> None:
        self.assertEqual([(l.name, l.kind, l.param_indices) for l in self.result.layers],
                         [(l.name, l.kind, l.param_indices) for l in self.reference.layers])
        self.assertTrue(self.result.kernel_timing)
        self.assertEqual(self.result.kernel_adapter, "cpu_ops")

    def test_times_are_non_negative_and_the_layers_hold_the_kernel_time(self) -> None:
        for layer in self.result.layers:
            self.assertTrue(all(t >= 0 for t in layer.forward_sec + layer.backward_sec),
                            layer.name)
        for i, phases in enumerate(self.result.hooked):
            forward = sum(layer.forward_sec[i] for layer in self.result.layers)
            backward = sum(layer.backward_sec[i] for layer in self.result.layers)
            # per iteration: Σ layers <= the phase's kernel time, and nearly all of it (the
            # rest: ops between module calls that are no glue, the backward's ones_like)
            self.assertLessEqual(forward, phases.forward_sec * 1.000001)
            self.assertGreater(forward, 0.85 * phases.forward_sec)
            self.assertLessEqual(backward, phases.backward_sec * 1.000001)
            self.assertGreater(backward, 0.9 * phases.backward_sec)
            self.assertGreater(phases.optimizer_sec, 0.0)
            self.assertIsNotNone(phases.wall_sec)
            self.assertEqual(phases.unlinked_sec, 0.0)
        self.assertTrue(all(p.wall_sec is None for p in self.result.plain))

    def test_totals_use_kernel_times(self) -> None:
        totals = compute_totals(self.result)
        self.assertIsNotNone(totals.kernels_over_plain)
        # Attribution is Σ of the layers' medians over the median kernel time of the phase (its
        # per-iteration share, > 0.85, is the test above): medians of different iterations, so
        # on a loaded machine one preempted op can halve it (0.36 seen); the definition holds.
        for phase in ("forward", "backward"):
            layers = sum(median(getattr(l, f"{phase}_sec")) for l in self.result.layers)
            kernels = median(getattr(p, f"{phase}_sec") for p in self.result.hooked)
            self.assertAlmostEqual(getattr(totals, f"{phase}_attribution"), layers / kernels)
        self.assertEqual(totals.optimizer_sec,
                         sorted(p.optimizer_sec for p in self.result.hooked)[1])
        self.assertIsNone(compute_totals(self.reference).kernels_over_plain)


class CudaTimingOptionTest(unittest.TestCase):
    """Which clock --device cuda gets, with CUDA faked present."""

    def clock(self, *argv: str, available: bool = True) -> str:
        args = cli.build_parser().parse_args(
            ["--model", "mlp", "--batch", "2", "--device", "cuda", "-o", "x.json", *argv])
        with mock.patch.object(torch.cuda, "is_available", lambda: True), \
                mock.patch.object(cli, "kernel_timing_available", lambda: available):
            return cli._check_args(args)

    def test_events_by_default_until_kernels_are_checked_on_a_gpu(self) -> None:
        self.assertEqual(self.clock(), "cuda_events")
        self.assertEqual(self.clock(available=False), "cuda_events")
        self.assertEqual(self.clock("--cuda-timing", "events"), "cuda_events")

    def test_kernels_when_asked(self) -> None:
        self.assertEqual(self.clock("--cuda-timing", "kernels"), CUDA_KERNELS)

    def test_kernels_asked_but_unavailable_is_bad_input(self) -> None:
        with self.assertRaisesRegex(ProfileError, "no torch.profiler CUDA activity"):
            self.clock("--cuda-timing", "kernels", available=False)

    def test_regenerate_command_names_the_timing(self) -> None:
        args = argparse.Namespace(model="m", batch=2, device="cuda", precision="fp32", warmup=1,
                                  iters=2, input_size=None, seq_len=None, optimizer=None,
                                  clock=None, threads=1)
        self.assertTrue(cli._command(args, "kernels").endswith("--cuda-timing kernels"))
        self.assertNotIn("--cuda-timing", cli._command(args))

    def test_the_trace_clock_of_kernel_timing(self) -> None:
        self.assertEqual(trace_clock(CUDA_KERNELS), KERNELS_TRACE_CLOCK)
        self.assertEqual(trace_clock("wall"), "wall")


class PhaseTimesTest(unittest.TestCase):
    def test_old_positional_form_still_works(self) -> None:
        phases = PhaseTimes(1.0, 2.0, 3.0)
        self.assertIsNone(phases.wall_sec)
        self.assertIsNone(phases.unlinked_sec)


if __name__ == "__main__":
    unittest.main()
