"""Attributing a PyTorch profiler trace's work to layers, phases and collectives.

The rules (workloads/KINETO.md has them with their sources):

* **Steps**: each ``ProfilerStep#N`` range is one training step; without any, the whole trace
  is one.
* **Layers**: ``nn.Module: <Class>_<k>`` ranges (Kineto's Python tracer, ``with_stack=True``)
  nest into module paths (``Sequential_0.Linear_1``). A leaf module is a layer; work inside a
  container but outside its children is ``<path>.(own)``; work outside every module (the loss)
  is ``(no module)``.
* **Phases**: an ``autograd::engine::evaluate_function: ...`` op is backward, and belongs to
  the layer whose forward op has the same ``Sequence number``; ``AccumulateGrad`` (which the
  autograd engine runs first, as soon as its gradient is ready) belongs to the layer of the
  backward op before it on its thread, and its ``Input Dims`` x ``Input type`` are that
  layer's gradient bytes. Work inside ``Optimizer.step#``/``Optimizer.zero_grad#`` ranges, or
  after the step's last backward op, is the optimizer; the rest is forward.
* **Time**: with GPU activities in the trace, a layer's time is the union of the GPU
  intervals of the kernels, copies and fills its ops launched (linked through the runtime
  call's ``correlation``, else the ``External id``); without, the durations of its outermost
  CPU ops.
* **Collectives**: ``record_param_comms`` ops (``Collective name``, ``In msg nelems``, ``Out
  msg nelems``, ``dtype``, ``Process Group Ranks``); in a trace without them, ``nccl:<op>`` /
  ``gloo:<op>`` ranges with ``Input Dims`` and ``Input type``. Communication ops and kernels
  are never compute.

No torch is needed.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable

from .kineto_events import Event, KinetoError, KinetoTrace, echo

MODULE_PREFIX = "nn.Module: "
BACKWARD_PREFIX = "autograd::engine::evaluate_function: "
ACCUMULATE_GRAD = "torch::autograd::AccumulateGrad"
NO_MODULE = "(no module)"
OWN = "(own)"
_STEP = re.compile(r"^ProfilerStep#(\d+)$")
_OPTIMIZER = re.compile(r"^Optimizer\.(step|zero_grad)#")
_COMM_RANGE = re.compile(r"^(nccl|gloo|mpi|ucc):([a-z_]+)$")
_COMM_OP = re.compile(r"^(record_param_comms$|c10d::|nccl:|gloo:|mpi:|ucc:)")
_COMM_KERNEL = re.compile(r"^nccl", re.IGNORECASE)
_NO_SEQUENCE = (-1, 2**64 - 1)  # AccumulateGrad's sequence number, as torch writes it
_EPS_US = 1e-3  # timestamps are rounded to the nanosecond at best

# Element sizes by the names torch writes (c10::ScalarType names and their C++ spellings).
DTYPE_BYTES = {
    "float": 4, "float32": 4, "double": 8, "float64": 8, "half": 2, "float16": 2,
    "c10::half": 2, "bfloat16": 2, "c10::bfloat16": 2, "int": 4, "int32": 4, "long": 8,
    "int64": 8, "long int": 8, "short": 2, "int16": 2, "char": 1, "signed char": 1, "int8": 1,
    "byte": 1, "unsigned char": 1, "uint8": 1, "bool": 1, "float8_e4m3fn": 1,
    "float8_e5m2": 1, "c10::float8_e4m3fn": 1, "c10::float8_e5m2": 1, "complexfloat": 8,
    "c10::complex<float>": 8, "complexdouble": 16, "c10::complex<double>": 16,
}
# torch's collective names -> the execution graph's ops (sim/graph/GRAPH.md).
COLLECTIVE_OPS = {
    "allreduce": "all-reduce", "all_reduce": "all-reduce", "allreduce_coalesced": "all-reduce",
    "allgather": "all-gather", "all_gather": "all-gather", "_allgather_base": "all-gather",
    "all_gather_into_tensor": "all-gather", "allgather_into_tensor_coalesced": "all-gather",
    "reduce_scatter": "reduce-scatter", "_reduce_scatter_base": "reduce-scatter",
    "reduce_scatter_tensor": "reduce-scatter", "reduce_scatter_tensor_coalesced":
    "reduce-scatter", "broadcast": "broadcast", "reduce": "reduce", "all_to_all": "all-to-all",
    "alltoall": "all-to-all", "all_to_allv": "all-to-all", "alltoall_base": "all-to-all",
}
_GATHERED = ("all-gather",)  # bytes = the gathered result (Out msg nelems)
GRADIENT_REDUCTIONS = ("all-reduce", "reduce-scatter")


@dataclass
class Collective:
    """One collective a rank issued in a step."""

    op: str  # a graph op (COLLECTIVE_OPS values)
    bytes: int
    group: tuple[int, ...] | None  # global ranks; None: every rank of the job
    group_name: str
    issue_us: float
    phase: str  # "forward", "backward" or "optimizer", by when it was issued
    event: int  # index in traceEvents


@dataclass
class StepTimes:
    """What one step of one rank did."""

    forward_sec: dict[str, float] = field(default_factory=dict)
    backward_sec: dict[str, float] = field(default_factory=dict)
    optimizer_sec: float = 0.0
    grad_bytes: dict[str, int] = field(default_factory=dict)
    first_us: dict[tuple[str, str], float] = field(default_factory=dict)  # (phase, layer)
    collectives: list[Collective] = field(default_factory=list)


@dataclass
class RankImport:
    """One rank's trace, attributed."""

    path: str
    rank: int | None
    world_size: int | None
    device_name: str
    timing: str  # "gpu" (GPU activity intervals) or "cpu" (CPU op durations)
    layers: list[str]  # forward order
    steps: list[StepTimes]
    notes: dict[str, int]  # what was left out, counted (KINETO.md, "What is counted")
    base_time_ns: int | None


@dataclass
class _Context:
    """What encloses an event on its thread."""

    outer_op: Event | None = None  # the outermost cpu_op enclosing it (itself if it is one)
    module: str | None = None  # the innermost module path
    optimizer: bool = False
    comm: bool = False


@dataclass
class _Window:
    start_us: float
    end_us: float
    backward_start: float = float("inf")
    backward_end: float = float("-inf")
    optimizer_start: float = float("inf")  # the first Optimizer.* range


def _is_op(event: Event) -> bool:
    """A torch op (not a range: steps and optimizer ranges were cpu_ops in early Kineto)."""
    return event.cat in ("cpu_op", "operator", "") and not (
        event.name.startswith(MODULE_PREFIX) or _STEP.match(event.name)
        or _OPTIMIZER.match(event.name))


def _nest(events: list[Event]) -> dict[int, _Context]:
    """Contexts of every host event, from containment on its thread."""
    contexts: dict[int, _Context] = {}
    by_thread: dict[Any, list[Event]] = {}
    for event in events:
        by_thread.setdefault(event.thread, []).append(event)
    for thread_events in by_thread.values():
        thread_events.sort(key=lambda e: (e.start_us, -e.end_us, e.index))
        stack: list[Event] = []
        for event in thread_events:
            while stack and not _inside(event, stack[-1]):
                stack.pop()
            parent = contexts[stack[-1].index] if stack else _Context()
            context = _Context(parent.outer_op, parent.module, parent.optimizer, parent.comm)
            if event.name.startswith(MODULE_PREFIX):
                name = event.name[len(MODULE_PREFIX):]
                context.module = f"{parent.module}.{name}" if parent.module else name
            if _OPTIMIZER.match(event.name):
                context.optimizer = True
            if _is_op(event) and context.outer_op is None:
                context.outer_op = event
            if _COMM_OP.match(event.name):
                context.comm = True
            contexts[event.index] = context
            stack.append(event)
    return contexts


def _inside(event: Event, parent: Event) -> bool:
    """Whether `event`, which starts no earlier than `parent`, is its child.

    Events of one thread nest. One that starts inside another is its child even if it ends a
    little after it (Kineto's ``ts + dur`` rounds). The legacy profiler truncates both ends to
    the microsecond, so a child that starts in its parent's last microsecond starts at the
    parent's end: a zero-width event there is taken as the child (an op's last sub-op, such as
    ``AccumulateGrad``'s ``add_``), not as a sibling after it, which would have to start within
    the microsecond the previous op ended in.
    """
    if event.start_us < parent.end_us - _EPS_US:
        return True
    return event.start_us <= parent.end_us + _EPS_US and event.end_us <= parent.end_us + _EPS_US


def _windows(trace: KinetoTrace) -> list[_Window]:
    steps = sorted((e for e in trace.host if _STEP.match(e.name)), key=lambda e: e.start_us)
    if steps:
        return [_Window(e.start_us, e.end_us) for e in steps]
    events = trace.host + trace.device
    if not events:
        raise KinetoError(f"{trace.path}: /traceEvents: no complete event")
    return [_Window(min(e.start_us for e in events), max(e.end_us for e in events))]


def _window_of(windows: list[_Window], time_us: float) -> int | None:
    for index, window in enumerate(windows):
        if window.start_us - _EPS_US <= time_us <= window.end_us + _EPS_US:
            return index
    return None


def _int_arg(event: Event, key: str) -> int | None:
    value = event.args.get(key)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dtype_bytes(path: str, event: Event, key: str, value: Any) -> int:
    size = DTYPE_BYTES.get(str(value).strip().lower())
    if size is None:
        raise KinetoError(f"{path}: /traceEvents/{event.index}/args/{key}: unknown element "
                          f"type {echo(value)!r} (expected one of "
                          f"{', '.join(sorted(DTYPE_BYTES))})")
    return size


def _numel(dims: Any) -> int | None:
    if not isinstance(dims, list) or not all(isinstance(d, int) and d >= 0 for d in dims):
        return None
    count = 1
    for d in dims:
        count *= d
    return count


def _first_tensor_bytes(path: str, event: Event) -> int:
    """Bytes of the first input tensor (Input Dims[0] x Input type[0])."""
    dims, types = event.args.get("Input Dims"), event.args.get("Input type")
    where = f"{path}: /traceEvents/{event.index}/args"
    if not isinstance(dims, list) or not dims or _numel(dims[0]) is None:
        raise KinetoError(f"{where}/Input Dims: {echo(event.name)} needs the shape of its "
                          "tensor: record the trace with record_shapes=True")
    if not isinstance(types, list) or not types:
        raise KinetoError(f"{where}/Input type: {echo(event.name)} needs its element type: "
                          "record the trace with record_shapes=True")
    return _numel(dims[0]) * _dtype_bytes(path, event, "Input type", types[0])


def _group(path: str, event: Event, world_size: int | None) -> tuple[int, ...] | None:
    raw = event.args.get("Process Group Ranks")
    if raw is None or raw == "":
        return None
    text = raw if isinstance(raw, str) else str(list(raw)) if isinstance(raw, list) else None
    where = f"{path}: /traceEvents/{event.index}/args/Process Group Ranks"
    if text is None:
        raise KinetoError(f"{where}: expected a list of ranks")
    if "..." in text:  # torch truncates long lists; the whole job is the only safe reading
        size = _int_arg(event, "Group size")
        if size is not None and size == world_size:
            return None
        raise KinetoError(f"{where}: {echo(text)}: a truncated list of ranks whose group is "
                          "not the whole job")
    body = text.strip().strip("[]").strip()
    try:
        return tuple(int(part) for part in body.split(",")) if body else None
    except ValueError as error:
        raise KinetoError(f"{where}: {echo(text)}: expected a list of ranks") from error


def _collective(path: str, event: Event, world_size: int | None) -> Collective | None:
    """The collective an event stands for; None for one the graph has no op for (barrier)."""
    if event.name == "record_param_comms":
        name = str(event.args.get("Collective name", ""))
        op = COLLECTIVE_OPS.get(name)
        if op is None:
            return None
        key = "Out msg nelems" if op in _GATHERED else "In msg nelems"
        count = _int_arg(event, key)
        if count is None or count < 0:
            raise KinetoError(f"{path}: /traceEvents/{event.index}/args/{key}: expected an "
                              f"integer >= 0 for the {echo(name)} collective")
        size = count * _dtype_bytes(path, event, "dtype", event.args.get("dtype"))
    else:
        op = COLLECTIVE_OPS.get(_COMM_RANGE.match(event.name).group(2))
        if op is None:
            return None
        size = _first_tensor_bytes(path, event)
    group = _group(path, event, world_size)
    group_name = str(event.args.get("Process Group Name", "") or "")
    return Collective(op, size, group, group_name, event.start_us, "", event.index)


def _union_sec(intervals: Iterable[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total * 1e-6


class _Attributor:
    """Walks one trace's events once and fills StepTimes."""

    def __init__(self, trace: KinetoTrace) -> None:
        self.trace = trace
        self.contexts = _nest(trace.host)
        self.windows = _windows(trace)
        self.steps = [StepTimes() for _ in self.windows]
        self.notes: dict[str, int] = {}
        scopes = [c.module for c in self.contexts.values() if c.module]
        self.containers = {m.rsplit(".", 1)[0] for m in scopes if "." in m}
        # sequence number -> (thread, start, layer) of the forward op that created the node
        self.forward_layer: dict[int, tuple[Any, float, str]] = {}
        self.backward_layer: dict[int, str] = {}  # event index of a backward op -> layer
        self.layer_order: list[str] = []

    def note(self, what: str, count: int = 1) -> None:
        self.notes[what] = self.notes.get(what, 0) + count

    def module_layer(self, context: _Context) -> str:
        if context.module is None:
            return NO_MODULE
        if context.module in self.containers:
            return f"{context.module}.{OWN}"
        return context.module

    def outer_ops(self) -> list[Event]:
        ops = [e for e in self.trace.host if self.contexts[e.index].outer_op is e]
        return sorted(ops, key=lambda e: (e.start_us, e.index))

    def run(self) -> RankImport:
        ops = self.outer_ops()
        self.map_forward(ops)
        self.map_backward(ops)
        phases = {e.index: self.classify(e) for e in ops}
        self.add_time(ops, phases)
        self.add_gradients()
        self.add_collectives(phases)
        return RankImport(self.trace.path, self.trace.rank, self.trace.world_size,
                          self.trace.device_name, "gpu" if self.trace.device else "cpu",
                          self.layer_order, self.steps, self.notes, self.trace.base_time_ns)

    def map_forward(self, ops: list[Event]) -> None:
        """Sequence numbers of forward ops -> their layer, and the step windows' backward
        spans."""
        for event in self.trace.host:
            context = self.contexts[event.index]
            outer = context.outer_op
            if outer is None or outer.name.startswith(BACKWARD_PREFIX) or context.optimizer:
                continue
            sequence = _int_arg(event, "Sequence number")
            if sequence is None or sequence in _NO_SEQUENCE or sequence < 0:
                continue
            layer = self.module_layer(self.contexts[outer.index])
            known = self.forward_layer.get(sequence)
            if known is not None and known[0] != event.thread:
                raise KinetoError(f"{self.trace.path}: /traceEvents/{event.index}/args/Sequence "
                                  f"number: {sequence} is used by forward ops of two threads; "
                                  "backward ops cannot be matched to their layers")
            # An op records the thread's next sequence number whether or not it creates an
            # autograd node, so ops before the node's creator share its number: the creator
            # is the last of them (or an op nested in it: the same layer).
            if known is None or known[1] <= event.start_us:
                self.forward_layer[sequence] = (event.thread, event.start_us, layer)
        for event in self.trace.host:
            window = _window_of(self.windows, event.start_us)
            if window is not None and _OPTIMIZER.match(event.name):
                w = self.windows[window]
                w.optimizer_start = min(w.optimizer_start, event.start_us)
        for op in ops:
            if op.name.startswith(BACKWARD_PREFIX):
                window = _window_of(self.windows, op.start_us)
                if window is not None:
                    w = self.windows[window]
                    w.backward_start = min(w.backward_start, op.start_us)
                    w.backward_end = max(w.backward_end, op.end_us)

    def map_backward(self, ops: list[Event]) -> None:
        last: dict[Any, str] = {}  # thread -> layer of its last backward op
        for op in ops:
            if not op.name.startswith(BACKWARD_PREFIX):
                continue
            if op.name.endswith(ACCUMULATE_GRAD):
                layer = last.get(op.thread)
                if layer is None:
                    self.note("AccumulateGrad ops with no backward op before them")
                    layer = NO_MODULE
            else:
                sequence = _int_arg(op, "Sequence number")
                match = self.forward_layer.get(sequence) if sequence is not None else None
                if match is None:
                    self.note("backward ops whose forward op is not in the trace")
                    layer = NO_MODULE
                else:
                    layer = match[2]
                last[op.thread] = layer
            self.backward_layer[op.index] = layer

    def classify(self, op: Event) -> tuple[int, str, str] | None:
        """(step, phase, layer) of an outermost op; None: not compute, or outside steps."""
        context = self.contexts[op.index]
        window = _window_of(self.windows, op.start_us)
        if context.comm:
            return None
        if window is None:
            self.note("ops outside every ProfilerStep")
            return None
        w = self.windows[window]
        if context.optimizer:
            return (window, "optimizer", "")
        if op.index in self.backward_layer:
            return (window, "backward", self.backward_layer[op.index])
        if op.start_us >= w.backward_end:
            return (window, "optimizer", "")
        if op.start_us >= w.backward_start:
            return (window, "backward", NO_MODULE)
        return (window, "forward", self.module_layer(context))

    def add_time(self, ops: list[Event], phases: dict[int, Any]) -> None:
        spans: dict[tuple[int, str, str], list[tuple[float, float]]] = {}
        for op in ops:
            where = phases[op.index]
            if where is None:
                continue
            step, phase, layer = where
            first = self.steps[step].first_us
            first.setdefault((phase, layer), op.start_us)
            if phase == "forward" and layer not in self.layer_order:
                self.layer_order.append(layer)
            if not self.trace.device:
                spans.setdefault(where, []).append((op.start_us, op.end_us))
        if self.trace.device:
            self.add_device_time(phases, spans)
        for (step, phase, layer), intervals in spans.items():
            seconds = _union_sec(intervals)
            times = self.steps[step]
            if phase == "optimizer":
                times.optimizer_sec += seconds
            else:
                table = times.forward_sec if phase == "forward" else times.backward_sec
                table[layer] = table.get(layer, 0.0) + seconds
        for times in self.steps:  # layers seen only in backward come last, in backward order
            for layer in sorted(times.backward_sec, key=lambda l: times.first_us[("backward", l)]):
                if layer not in self.layer_order:
                    self.layer_order.append(layer)

    def add_device_time(self, phases: dict[int, Any],
                        spans: dict[tuple[int, str, str], list[tuple[float, float]]]) -> None:
        runtime = {}
        by_external = {}
        for event in self.trace.host:
            correlation = _int_arg(event, "correlation")
            if correlation is not None and event.cat in ("cuda_runtime", "cuda_driver",
                                                         "hip_runtime"):
                runtime[correlation] = event
            external = _int_arg(event, "External id")
            if external is not None and _is_op(event):
                by_external.setdefault(external, event)
        for kernel in self.trace.device:
            if _COMM_KERNEL.match(kernel.name) or "Collective name" in kernel.args:
                continue
            launch = runtime.get(_int_arg(kernel, "correlation"))
            if launch is None:
                launch = by_external.get(_int_arg(kernel, "External id"))
            if launch is None:
                self.note("GPU activities with no launching CPU event")
                continue
            context = self.contexts[launch.index]
            if context.comm:
                continue
            outer = context.outer_op
            where = phases.get(outer.index) if outer is not None else None
            if where is None:
                self.note("GPU activities launched outside ops or steps")
                continue
            spans.setdefault(where, []).append((kernel.start_us, kernel.end_us))

    def add_gradients(self) -> None:
        for event in self.trace.host:
            if event.name != ACCUMULATE_GRAD:
                continue
            outer = self.contexts[event.index].outer_op
            window = _window_of(self.windows, event.start_us)
            if outer is None or window is None:
                continue
            layer = self.backward_layer.get(outer.index, NO_MODULE)
            grads = self.steps[window].grad_bytes
            grads[layer] = grads.get(layer, 0) + _first_tensor_bytes(self.trace.path, event)

    def add_collectives(self, phases: dict[int, Any]) -> None:
        named = any(e.name == "record_param_comms" for e in self.trace.host)
        for event in sorted(self.trace.host, key=lambda e: (e.start_us, e.index)):
            if named and event.name != "record_param_comms":
                continue
            if not named and not _COMM_RANGE.match(event.name):
                continue
            window = _window_of(self.windows, event.start_us)
            if window is None:
                self.note("collectives outside every ProfilerStep")
                continue
            collective = _collective(self.trace.path, event, self.trace.world_size)
            if collective is None:
                name = echo(event.args.get("Collective name", event.name))
                self.note(f"collectives with no graph op ({name})")
                continue
            w = self.windows[window]
            # DDP's last bucket is issued as backward ends: backward up to the optimizer.
            collective.phase = ("forward" if event.start_us < w.backward_start else
                                "backward" if event.start_us < w.optimizer_start else
                                "optimizer")
            self.steps[window].collectives.append(collective)


def attribute(trace: KinetoTrace) -> RankImport:
    """Attributes one rank's trace."""
    result = _Attributor(trace).run()
    # torch.profiler's last prof.step() opens a step that nothing runs in; a step without a
    # backward pass is not a training step.
    complete = [step for step in result.steps if step.backward_sec]
    if len(complete) < len(result.steps):
        result.notes["steps without a backward pass"] = len(result.steps) - len(complete)
    if not complete:
        raise KinetoError(f"{trace.path}: no step has a backward pass (no autograd::engine::"
                          "evaluate_function op): profile training steps")
    result.steps = complete
    if not result.layers:
        raise KinetoError(f"{trace.path}: no forward work in any step (no CPU op, or no GPU "
                          "activity linked to one)")
    return result


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def iqr(values: list[float]) -> float:
    if len(values) < 2:
        return 0.0
    quartiles = statistics.quantiles(values, n=4, method="inclusive")
    return quartiles[2] - quartiles[0]
