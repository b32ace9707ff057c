"""A Kineto-layout trace from a torch that has no Kineto (Debian's torch 1.13).

Such a torch runs ``torch.profiler`` on its legacy profiler, whose ``export_chrome_trace``
writes a bare list of events without args: no sequence numbers, shapes or step ranges, so
``import-kineto`` cannot attribute it. The profiler's in-memory events do hold them. This
module writes those events in the layout Kineto writes (workloads/KINETO.md), so that a run
on such a torch can be imported the same way::

    with module_ranges(model), torch.profiler.profile(record_shapes=True) as prof:
        for step in range(3):
            with step_range(step):
                ...  # forward, loss.backward(), optimizer.step()
    write_trace(prof, "rank0.json", model, rank=0, world_size=2)

``module_ranges`` stands in for Kineto's Python tracer: a ``record_function`` range named
``nn.Module: <Class>_<k>`` around every module call (k counts the modules of a class in
``model.modules()`` order). ``step_range`` stands in for ``prof.step()``'s ``ProfilerStep#N``.
What the legacy events lack is filled from the model and said in the file's ``exporter`` key:
element types (the legacy profiler records shapes only) are the parameters' dtype, which must
be one dtype.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any, Iterator

import torch
from torch import nn

from .kineto_import import ACCUMULATE_GRAD, MODULE_PREFIX

USER_SCOPE = 7  # at::RecordScope::USER_SCOPE: record_function ranges
_TYPE_NAMES = {torch.float32: "float", torch.float16: "c10::Half", torch.bfloat16:
               "c10::BFloat16", torch.float64: "double"}


def module_names(model: nn.Module) -> dict[int, str]:
    """id(module) -> the range name Kineto's Python tracer gives its calls."""
    counters: dict[str, int] = {}
    names = {}
    for module in model.modules():
        kind = type(module).__name__
        names[id(module)] = f"{MODULE_PREFIX}{kind}_{counters.get(kind, 0)}"
        counters[kind] = counters.get(kind, 0) + 1
    return names


@contextlib.contextmanager
def module_ranges(model: nn.Module) -> Iterator[None]:
    """A record_function range around every module call while the block runs."""
    names = module_names(model)
    open_ranges: dict[int, list[Any]] = {}

    def pre(module: nn.Module, inputs: Any) -> None:
        scope = torch.autograd.profiler.record_function(names[id(module)])
        scope.__enter__()
        open_ranges.setdefault(id(module), []).append(scope)

    def post(module: nn.Module, inputs: Any, output: Any) -> None:
        open_ranges[id(module)].pop().__exit__(None, None, None)

    handles = []
    try:
        for module in model.modules():
            handles.append(module.register_forward_pre_hook(pre))
            handles.append(module.register_forward_hook(post))
        yield
    finally:
        for handle in handles:
            handle.remove()


def step_range(step: int) -> Any:
    """The range torch.profiler's step() opens with Kineto."""
    return torch.autograd.profiler.record_function(f"ProfilerStep#{step}")


def _type_name(model: nn.Module) -> str:
    dtypes = {p.dtype for p in model.parameters()}
    if len(dtypes) != 1 or next(iter(dtypes)) not in _TYPE_NAMES:
        raise ValueError(f"parameters of dtypes {sorted(map(str, dtypes))}: the legacy profiler "
                         "records no element types, and this export needs one known dtype")
    return _TYPE_NAMES[next(iter(dtypes))]


def _category(event: Any) -> str:
    if event.name.startswith(MODULE_PREFIX):
        return "python_function"
    return "user_annotation" if getattr(event, "scope", -1) == USER_SCOPE else "cpu_op"


def kineto_events(prof: Any, model: nn.Module) -> list[dict[str, Any]]:
    """The profiler's events as Kineto writes them (complete events, times in us)."""
    type_name = _type_name(model)
    pid = os.getpid()
    events = []
    for event in prof.events():
        args: dict[str, Any] = {}
        if event.sequence_nr >= 0:
            args["Fwd thread id"] = event.fwd_thread
            args["Sequence number"] = event.sequence_nr
        shapes = [list(shape) for shape in (event.input_shapes or [])]
        if shapes:
            args["Input Dims"] = shapes
            if event.name == ACCUMULATE_GRAD or event.name.startswith("gloo:"):
                args["Input type"] = [type_name if shape else "" for shape in shapes]
        # trace_name: the name Kineto writes ("ProfilerStep#3"; event.name is "ProfilerStep*")
        name = getattr(event, "trace_name", None) or event.name
        events.append({"ph": "X", "cat": _category(event), "name": name, "pid": pid,
                       "tid": event.thread, "ts": event.time_range.start,
                       "dur": event.time_range.end - event.time_range.start, "args": args})
    return events


def write_trace(prof: Any, path: str, model: nn.Module, rank: int = 0,
                world_size: int = 1) -> None:
    """Writes the profiler's events as a Kineto-layout trace."""
    doc = {
        "schemaVersion": 1,
        "exporter": f"dtsim_profile.kineto_export from torch {torch.__version__}'s legacy "
                    "profiler; nn.Module and ProfilerStep ranges are record_function ranges; "
                    "Input type of AccumulateGrad and gloo ops is the parameters' dtype",
        "distributedInfo": {"backend": "gloo", "rank": rank, "world_size": world_size},
        "baseTimeNanoseconds": time.time_ns(),
        "traceEvents": kineto_events(prof, model),
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(doc, handle)
