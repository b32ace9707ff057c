"""CUDA kernel timing ("cuda_kernels"): per-layer GPU kernel time from torch.profiler.

Why: with CUDA events recorded in Python hooks, an event interval is stream time between two
hook calls. When a layer's GPU work is shorter than the Python around it, the GPU idles
waiting for the CPU and that idle time lands in the layer (ResNet-50 batch 32 fp32 on an H200:
layers summed to 189 % of the plain forward). Kernel durations measured by CUPTI do not
contain idle time.

How: each hooked iteration runs inside its own ``torch.profiler.profile`` session with CPU
and CUDA activities (Kineto/CUPTI). The clock's *marks* are empty ``record_function`` ranges
named ``dtsim_profile#<id>``: instants on the profiler's host clock, on the thread that made
them (the main thread in forward, the autograd engine's device thread in backward). After the
iteration, every GPU activity (kernel, memcpy, memset) is given a *launch time*: the start of
the host op that launched it (Kineto links each GPU activity to the innermost torch op on the
launching thread: ``linked_correlation_id``). ``seconds(a, b)`` is the GPU time of the
activities launched between marks a and b, as the union of their GPU intervals (the sum of
their durations unless they overlap, e.g. on two streams). Idle GPU time is never counted.

Two refinements:

* an op that *encloses* marks (``autograd::engine::evaluate_function: XBackward0`` encloses
  the node's pre- and post-hook marks) says nothing about where inside it a kernel was
  launched; for such a kernel the launch time is its CUDA runtime call's start (the
  ``cudaLaunchKernel`` event with the same CUDA correlation id), when present;
* *trailing* work: a kernel launched on a thread after an **end mark** (``mark_end()``: the
  post-hook of an autograd node or AccumulateGrad) and before the next mark on that thread
  counts to the window that end mark closed. This is the autograd engine accumulating the
  node's output gradient into the next node's input buffer (``InputBuffer::add``), which runs
  after the node's post-hook but is that node's work.

GPU activities whose launching op is unknown (no linked op and no runtime call) are
*unlinked*: left out of every window and reported.

The module is split so that the attribution is testable without a GPU: adapters turn
profiler events into plain :class:`HostEvent`/:class:`DeviceEvent` tuples
(:func:`events_from_kineto`, :func:`events_from_function_events`), :class:`KernelTimeline`
attributes them, :class:`CudaKernelClock` drives the profiler sessions.
"""

from __future__ import annotations

import bisect
import gc
import gzip
import itertools
import json
import os
import re
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Sequence

import torch

CUDA_KERNELS = "cuda_kernels"  # the clock's name (profile.RunConfig.clock, RunInfo.clock)
MARK_PREFIX = "dtsim_profile#"
NO_MARK = -1  # what mark() returns outside a profiler session
USER_SCOPE = 7  # at::RecordScope::USER_SCOPE, the scope of record_function ranges
_RUNTIME_NAME = re.compile(r"^(cuda[A-Z]|cu[A-Z]|hip[A-Z])")
# Device-side records that are waits, not work (Kineto's optional CUDA sync activities).
_NOT_WORK = re.compile(r"^(Event Sync|Stream Sync|Context Sync|Device Sync|Stream Wait Event)")
# Set by gpu_profile.sh's dry run: run the kernel path on the CPU, CPU ops' self times standing in
# for kernels (a test of the plumbing; see cli.py).
CPU_OPS_ENV = "DTSIM_PROFILE_CPU_OPS_AS_KERNELS"
# A path: write the events of the second profiled iteration (or of the first that fails)
# there as gzip JSON, for offline analysis with load_events and KernelTimeline.
DUMP_ENV = "DTSIM_PROFILE_DUMP_EVENTS"


class KernelTimingError(RuntimeError):
    """The profiler's events cannot give kernel times (no CUDA activity, marks missing)."""


@dataclass(frozen=True)
class HostEvent:
    """A host-side profiler event: a torch op, a record_function range (our marks among
    them) or a CUDA runtime call."""

    name: str
    thread: int  # torch's thread id (RecordFunction::currentThreadId)
    start_ns: int
    end_ns: int
    correlation: int  # ops and ranges: their own id; runtime calls: the CUDA correlation id
    linked: int = 0  # runtime calls: correlation id of the op that made them; else 0
    scope: int = -1  # RecordScope of ops and ranges (USER_SCOPE for record_function); -1 unknown


@dataclass(frozen=True)
class DeviceEvent:
    """A GPU activity: a kernel, memcpy or memset."""

    name: str
    start_ns: int | None  # None: only the duration is known (function-events adapter)
    duration_ns: int
    correlation: int  # CUDA correlation id, shared with its runtime launch call; 0 unknown
    linked: int  # correlation id of the innermost torch op on the launching thread; 0 unknown
    stream: int = 0


@dataclass(frozen=True)
class ProfiledEvents:
    """One profiler session's events, adapted."""

    host: list[HostEvent]
    device: list[DeviceEvent]
    adapter: str  # which adapter read them ("kineto_results", "function_events", "cpu_ops")


# ---- adapters: torch profiler objects -> HostEvent / DeviceEvent ------------------------------


def _ns(event: Any, what: str) -> int:
    """`what` ("start" or "duration") of a KinetoEvent in ns: torch >= 2.1 has *_ns(),
    torch 1.13/2.0 *_us()."""
    method = getattr(event, f"{what}_ns", None)
    if method is not None:
        return int(method())
    return int(round(getattr(event, f"{what}_us")() * 1000))


def _optional(event: Any, method: str, default: Any) -> Any:
    function = getattr(event, method, None)
    if function is None:
        return default
    try:
        return function()
    except (RuntimeError, TypeError, ValueError):
        return default


def _is_runtime(name: str, linked: int) -> bool:
    return linked != 0 or _RUNTIME_NAME.match(name) is not None


def _user_range_names(host: Iterable[HostEvent]) -> set[str]:
    """Names that a GPU-side copy of a record_function range could carry (Kineto's
    ``gpu_user_annotation``: a span over the range's kernels, not a kernel)."""
    hosts = list(host)
    if any(event.scope >= 0 for event in hosts):
        return {event.name for event in hosts if event.scope == USER_SCOPE}
    return {event.name for event in hosts if not _is_runtime(event.name, event.linked)}


def _device_work(device: list[DeviceEvent], host: list[HostEvent],
                 annotations: set[str]) -> list[DeviceEvent]:
    excluded = _user_range_names(host) | annotations
    return [event for event in device
            if event.name not in excluded and not _NOT_WORK.match(event.name)
            and event.duration_ns >= 0]


def events_from_kineto(result: Any, cuda_type: Any, cpu_type: Any) -> ProfiledEvents:
    """Reads a ``torch.autograd._ProfilerResult`` (``prof.profiler.kineto_results``):
    ``events()`` gives ``_KinetoEvent`` objects with name(), device_type(),
    start_ns()/start_us(), duration_ns()/duration_us(), correlation_id(),
    linked_correlation_id(), start_thread_id(), device_resource_id(), scope()."""
    host: list[HostEvent] = []
    device: list[DeviceEvent] = []
    annotations: set[str] = set()
    for event in result.events():
        kind = event.device_type()
        name = event.name()
        if kind == cuda_type:
            if _optional(event, "is_user_annotation", False):
                annotations.add(name)
                continue
            device.append(DeviceEvent(name, _ns(event, "start"), _ns(event, "duration"),
                                      int(event.correlation_id()),
                                      int(event.linked_correlation_id()),
                                      int(_optional(event, "device_resource_id", 0))))
        elif kind == cpu_type:
            if name.startswith("["):  # "[memory]", "[OutOfMemory]" instants
                continue
            start = _ns(event, "start")
            host.append(HostEvent(name, int(event.start_thread_id()), start,
                                  start + _ns(event, "duration"), int(event.correlation_id()),
                                  int(event.linked_correlation_id()),
                                  int(_optional(event, "scope", -1))))
    return ProfiledEvents(host, _device_work(device, host, annotations), "kineto_results")


def events_from_function_events(events: Iterable[Any], cuda_type: Any,
                                cpu_type: Any) -> ProfiledEvents:
    """Reads ``prof.events()`` (FunctionEvent objects): the fallback when the raw Kineto
    events cannot be read. Kernels come from each host op's ``kernels`` list, which gives
    durations but no GPU start times, so windows sum durations (no overlap union), and there
    is no runtime call to refine the launch time of ops that enclose marks."""
    host: list[HostEvent] = []
    device: list[DeviceEvent] = []
    for event in events:
        if event.device_type != cpu_type or getattr(event, "is_async", False):
            continue
        name = event.name
        if name.startswith("["):
            continue
        start = int(round(event.time_range.start * 1000))
        end = int(round(event.time_range.end * 1000))
        correlation = int(event.id)
        runtime = _RUNTIME_NAME.match(name) is not None  # identified by name: linked is 0
        scope = getattr(event, "scope", None)
        host.append(HostEvent(name, int(event.thread), start, end, correlation,
                              scope=int(scope) if scope is not None else -1))
        if runtime or getattr(event, "is_legacy", False):
            continue
        for kernel in getattr(event, "kernels", []) or []:
            device.append(DeviceEvent(kernel.name, None, int(round(kernel.duration * 1000)),
                                      0, correlation))
    del cuda_type  # device-side FunctionEvents carry no link to their op; not used
    return ProfiledEvents(host, _device_work(device, host, set()), "function_events")


def cpu_ops_as_device_events(host: list[HostEvent]) -> list[DeviceEvent]:
    """Stand-ins for kernels on a CPU-only torch (the tests and the CPU dry run drive the
    kernel path with real profiler events this way): each torch op's *self* time (its
    duration minus its child ops', per thread), launched by the op itself, with no GPU start
    time (windows sum them). Marks, record_function ranges and ops that enclose marks
    (``autograd::engine::evaluate_function``: their self time is mostly our hooks' Python)
    are not work."""
    marks: dict[int, list[int]] = {}
    by_thread: dict[int, list[HostEvent]] = {}
    for event in host:
        if event.name.startswith(MARK_PREFIX):
            marks.setdefault(event.thread, []).append(event.start_ns)
        elif not _is_runtime(event.name, event.linked) and event.scope != USER_SCOPE:
            by_thread.setdefault(event.thread, []).append(event)
    device: list[DeviceEvent] = []
    for thread, events in by_thread.items():
        times = sorted(marks.get(thread, []))
        events.sort(key=lambda e: (e.start_ns, -e.end_ns))
        child_ns = [0] * len(events)
        stack: list[int] = []  # indices of the open ancestors
        for i, event in enumerate(events):
            while stack and events[stack[-1]].end_ns <= event.start_ns:
                stack.pop()
            if stack and event.end_ns <= events[stack[-1]].end_ns:
                child_ns[stack[-1]] += event.end_ns - event.start_ns
            stack.append(i)
        for i, event in enumerate(events):
            k = bisect.bisect_right(times, event.start_ns)
            if k < len(times) and times[k] < event.end_ns:
                continue  # encloses a mark
            self_ns = max(0, event.end_ns - event.start_ns - child_ns[i])
            device.append(DeviceEvent(f"cpu:{event.name}", None, self_ns, 0, event.correlation))
    return device


# ---- attribution --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Placed:
    launch_ns: int  # effective launch time on the host clock
    start_ns: int | None
    duration_ns: int


class KernelTimeline:
    """The GPU activities of one profiled iteration, placed at their launch times.

    `end_marks` are the ids handed out by ``mark_end()``; see the module docstring for the
    trailing rule.
    """

    def __init__(self, events: ProfiledEvents, end_marks: Iterable[int] = ()) -> None:
        self.adapter = events.adapter
        self._marks: dict[int, tuple[int, int]] = {}  # id -> (thread, time)
        ops: dict[int, HostEvent] = {}
        runtime: dict[int, HostEvent] = {}
        for event in events.host:
            if event.name.startswith(MARK_PREFIX):
                suffix = event.name[len(MARK_PREFIX):]
                if suffix.isdigit():
                    self._marks[int(suffix)] = (event.thread, event.start_ns)
            elif _is_runtime(event.name, event.linked):
                runtime[event.correlation] = event
            else:
                ops[event.correlation] = event
        ends = set(end_marks)
        thread_marks: dict[int, list[tuple[int, int]]] = {}  # thread -> [(time, id)] sorted
        for mark, (thread, time) in self._marks.items():
            thread_marks.setdefault(thread, []).append((time, mark))
        for entries in thread_marks.values():
            entries.sort()
        self._thread_times = {thread: [t for t, _ in entries]
                              for thread, entries in thread_marks.items()}
        self._thread_ids = {thread: [m for _, m in entries]
                            for thread, entries in thread_marks.items()}

        placed: list[_Placed] = []
        self.device_count = len(events.device)
        self.device_ns = 0  # every GPU activity of the session
        self.unlinked_ns = 0  # those with no launch time (left out)
        self.refined = 0  # launch times taken from the runtime call (op enclosing marks)
        self.trailing = 0  # moved into the window of the end mark before them
        for event in events.device:
            self.device_ns += event.duration_ns
            launch = self._launch(event, ops, runtime)
            if launch is None:
                self.unlinked_ns += event.duration_ns
                continue
            thread, time = launch
            time = self._trail(thread, time, ends)
            placed.append(_Placed(time, event.start_ns, event.duration_ns))
        placed.sort(key=lambda p: p.launch_ns)
        self._placed = placed
        self._launches = [p.launch_ns for p in placed]

    @property
    def mark_count(self) -> int:
        return len(self._marks)

    def _encloses_mark(self, op: HostEvent) -> bool:
        times = self._thread_times.get(op.thread)
        if not times:
            return False
        i = bisect.bisect_right(times, op.start_ns)
        return i < len(times) and times[i] < op.end_ns

    def _launch(self, event: DeviceEvent, ops: dict[int, HostEvent],
                runtime: dict[int, HostEvent]) -> tuple[int, int] | None:
        op = ops.get(event.linked) if event.linked else None
        call = runtime.get(event.correlation) if event.correlation else None
        if op is not None:
            if (self._encloses_mark(op) and call is not None
                    and op.start_ns <= call.start_ns <= op.end_ns):
                self.refined += 1
                return op.thread, call.start_ns
            return op.thread, op.start_ns
        if call is not None:
            return call.thread, call.start_ns
        return None

    def _trail(self, thread: int, time: int, ends: set[int]) -> int:
        times = self._thread_times.get(thread)
        if not times or not ends:
            return time
        i = bisect.bisect_right(times, time) - 1
        if i >= 0 and self._thread_ids[thread][i] in ends:
            self.trailing += 1
            return times[i] - 1  # just inside the window that the end mark closed
        return time

    def mark_time(self, mark: int) -> int:
        try:
            return self._marks[mark][1]
        except KeyError:
            raise KernelTimingError(
                f"mark {MARK_PREFIX}{mark} is missing from the profiler's events "
                f"({len(self._marks)} marks found)") from None

    def seconds(self, start: int, end: int) -> float:
        """GPU time of the activities launched in [mark `start`, mark `end`): the union of
        their GPU intervals (durations summed where start times are unknown)."""
        low, high = self.mark_time(start), self.mark_time(end)
        if high <= low:
            return 0.0
        first = bisect.bisect_left(self._launches, low)
        last = bisect.bisect_left(self._launches, high)
        return _busy_ns(self._placed[first:last]) / 1e9


def _busy_ns(placed: Sequence[_Placed]) -> int:
    """Union length of the intervals with a start time, plus the durations without one."""
    total = sum(p.duration_ns for p in placed if p.start_ns is None)
    spans = sorted((p.start_ns, p.start_ns + p.duration_ns) for p in placed
                   if p.start_ns is not None)
    current_start = current_end = None
    for start, end in spans:
        if current_end is None or start > current_end:
            if current_end is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        elif end > current_end:
            current_end = end
    if current_end is not None:
        total += current_end - current_start
    return total


# ---- the clock ----------------------------------------------------------------------------------


def kernel_timing_available() -> bool:
    """Whether this torch can time CUDA kernels: a CUDA device and torch.profiler's CUDA
    activity (a Kineto build with CUPTI)."""
    try:
        if not torch.cuda.is_available():
            return False
        from torch.profiler import ProfilerActivity, supported_activities
        return ProfilerActivity.CUDA in supported_activities()
    except Exception:  # an unusual build: report "not available" rather than fail
        return False


def _record_function_marker(name: str) -> None:
    with torch.autograd.profiler.record_function(name):
        pass


def _marker_candidates() -> list[tuple[str, Callable[[str], None]]]:
    """Ways to put an instant into the profiler's events, cheapest first."""
    candidates: list[tuple[str, Callable[[str], None]]] = []
    fast = getattr(getattr(torch._C, "_profiler", None), "_RecordFunctionFast", None)
    if fast is not None:
        def fast_marker(name: str) -> None:
            with fast(name):
                pass
        candidates.append(("_RecordFunctionFast", fast_marker))
    candidates.append(("record_function", _record_function_marker))
    return candidates


def _device_types() -> tuple[Any, Any]:
    """The profiler's DeviceType values for CUDA and CPU events."""
    device_type = getattr(torch.autograd, "DeviceType", None)
    if device_type is None:
        device_type = torch._C._autograd.DeviceType
    return device_type.CUDA, device_type.CPU


def read_session_events(session: Any, cpu_ops_as_kernels: bool = False) -> ProfiledEvents:
    """The events of a finished ``torch.profiler.profile`` session: the raw Kineto events
    when readable, else ``session.events()``."""
    cuda_type, cpu_type = _device_types()
    problems: list[str] = []
    results: list[ProfiledEvents] = []
    try:
        results.append(events_from_kineto(session.profiler.kineto_results, cuda_type, cpu_type))
    except Exception as error:  # API drift: fall back to the public FunctionEvent list
        problems.append(f"kineto_results: {type(error).__name__}: {error}")
    if cpu_ops_as_kernels:
        if not results:
            raise KernelTimingError("; ".join(problems))
        host = results[0].host
        return ProfiledEvents(host, cpu_ops_as_device_events(host), "cpu_ops")
    if not results or not results[0].device:
        try:
            results.append(events_from_function_events(session.events(), cuda_type, cpu_type))
        except Exception as error:
            problems.append(f"events(): {type(error).__name__}: {error}")
    for events in results:
        if events.device:
            return events
    if results:
        return results[0]
    raise KernelTimingError("cannot read the profiler's events (" + "; ".join(problems) + ")")


def _default_session(cpu_only: bool) -> Any:
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU]
    if not cpu_only:
        activities.append(ProfilerActivity.CUDA)
    return profile(activities=activities, record_shapes=False, profile_memory=False,
                   with_stack=False)


class CudaKernelClock:
    """The ``cuda_kernels`` clock: marks are instants in a torch.profiler session, and the
    time between two marks is the GPU time of the kernels launched between them.

    One session per measured iteration: ``begin()`` opens it, ``sync()`` waits for the GPU,
    closes it and attributes the kernels. Marks made outside a session (hooks firing after
    the iteration) are ignored and return NO_MARK.

    `cpu_ops_as_kernels` (tests and the CPU dry run only): no CUDA activity; the self time of
    every CPU op stands in for a kernel. `session_factory`, `read_events` and `marker` replace
    the profiler (tests).
    """

    name = CUDA_KERNELS

    def __init__(
        self,
        cpu_ops_as_kernels: bool = False,
        session_factory: Callable[[], Any] | None = None,
        read_events: Callable[[Any], ProfiledEvents] | None = None,
        marker: Callable[[str], None] | None = None,
        dump_path: str | None = None,
    ) -> None:
        self.cpu_ops_as_kernels = cpu_ops_as_kernels
        self._session_factory = session_factory or (lambda: _default_session(cpu_ops_as_kernels))
        self._read_events = read_events or (
            lambda session: read_session_events(session, cpu_ops_as_kernels))
        self._marker = marker
        self.marker_name = "custom" if marker is not None else ""
        self._dump_path = dump_path if dump_path is not None else os.environ.get(DUMP_ENV)
        self._session: Any = None
        self._counter = itertools.count()
        self._end_marks: set[int] = set()
        self._timeline: KernelTimeline | None = None
        self._sessions = 0
        self.adapter = ""  # which adapter read the last session's events
        self.last_unlinked_sec = 0.0
        self.last_device_sec = 0.0
        self.last_summary = ""  # the last session's counts, for the progress log

    def begin(self) -> None:
        if self._session is not None:
            raise AssertionError("CudaKernelClock.begin(): a session is already open")
        if self._marker is None:
            self._marker = self._choose_marker()
        self._timeline = None
        self._end_marks = set()
        session = self._session_factory()
        session.__enter__()
        self._session = session

    def mark(self) -> int:
        if self._session is None:
            return NO_MARK
        mark = next(self._counter)
        assert self._marker is not None
        self._marker(f"{MARK_PREFIX}{mark}")
        return mark

    def mark_end(self) -> int:
        mark = self.mark()
        if mark != NO_MARK:
            self._end_marks.add(mark)
        return mark

    def sync(self) -> None:
        session, self._session = self._session, None
        if session is None:
            return
        if not self.cpu_ops_as_kernels and torch.cuda.is_available():
            torch.cuda.synchronize()
        session.__exit__(None, None, None)
        events = self._read_events(session)
        del session
        # Repeated CUDA profiler sessions grow the host memory until a collection runs
        # (pytorch/pytorch#193348, torch 2.11): collect after each one.
        gc.collect()
        self._sessions += 1
        timeline = KernelTimeline(events, self._end_marks)
        problem = ""
        if not events.device:
            problem = ("torch.profiler recorded no CUDA kernels (is CUPTI usable here?); "
                       "use --cuda-timing events")
        elif timeline.mark_count == 0:
            problem = (f"none of the {MARK_PREFIX}* marks is in the profiler's events "
                       f"(adapter {events.adapter}, marker {self.marker_name})")
        if self._dump_path and (self._sessions == 2 or problem):
            dump_events(events, self._end_marks, self._dump_path)
        if problem:
            raise KernelTimingError(problem)
        self.adapter = events.adapter
        self.last_unlinked_sec = timeline.unlinked_ns / 1e9
        self.last_device_sec = timeline.device_ns / 1e9
        self.last_summary = (f"{timeline.device_count} GPU activities, {timeline.mark_count} "
                             f"marks, {timeline.trailing} trailing, {timeline.refined} by runtime "
                             f"call, {timeline.unlinked_ns / 1e3:.0f} us unlinked")
        self._timeline = timeline

    def seconds(self, start: int, end: int) -> float:
        if self._timeline is None:
            raise AssertionError("CudaKernelClock.seconds(): sync() first")
        return self._timeline.seconds(start, end)

    def recycle(self) -> None:
        self._timeline = None
        self._end_marks = set()

    def _choose_marker(self) -> Callable[[str], None]:
        """The cheapest marker whose instants show up in a (CPU-only) profiler session, made
        both on this thread and from an autograd node's pre-hook (on CUDA: the autograd
        engine's device thread, where the backward hooks run)."""
        from torch.profiler import ProfilerActivity, profile
        device = "cuda" if torch.cuda.is_available() and not self.cpu_ops_as_kernels else "cpu"
        tried = []
        for name, marker in _marker_candidates():
            probes = [f"{MARK_PREFIX}{10**9 + 2 * len(tried)}",
                      f"{MARK_PREFIX}{10**9 + 2 * len(tried) + 1}"]
            try:
                leaf = torch.ones(2, device=device, requires_grad=True)
                with profile(activities=[ProfilerActivity.CPU]) as session:
                    marker(probes[0])
                    loss = (leaf * 2).sum()
                    loss.grad_fn.register_prehook(lambda grads: marker(probes[1]))
                    loss.backward()
                cuda_type, cpu_type = _device_types()
                try:
                    names = {event.name for event in events_from_kineto(
                        session.profiler.kineto_results, cuda_type, cpu_type).host}
                except Exception:  # the FunctionEvent list, as read_session_events would
                    names = {getattr(event, "name", "") for event in session.events()}
            except Exception as error:  # try the next way
                tried.append(f"{name}: {type(error).__name__}: {error}")
                continue
            if all(probe in names for probe in probes):
                self.marker_name = name
                return marker
            tried.append(f"{name}: {sum(p in names for p in probes)} of 2 probes in the events")
        raise KernelTimingError("no way to mark the profiler's timeline: " + "; ".join(tried))


def dump_events(events: ProfiledEvents, end_marks: Iterable[int], path: str) -> None:
    """Writes one session's adapted events as gzip JSON (read back with load_events)."""
    document = {"adapter": events.adapter, "end_marks": sorted(end_marks),
                "host": [asdict(e) for e in events.host],
                "device": [asdict(e) for e in events.device]}
    with gzip.open(path, "wt", encoding="utf-8") as stream:
        json.dump(document, stream)


def load_events(path: str) -> tuple[ProfiledEvents, list[int]]:
    """Reads a dump_events file: the events and the end marks."""
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        document = json.load(stream)
    return (ProfiledEvents([HostEvent(**e) for e in document["host"]],
                           [DeviceEvent(**e) for e in document["device"]],
                           document["adapter"]),
            document["end_marks"])
