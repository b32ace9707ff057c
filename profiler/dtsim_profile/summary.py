"""From measured iterations to a trace: medians, spreads, coverage, buckets, source text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from . import TOOL_NAME
from .ddp import BUCKET_CAP_BYTES, FIRST_BUCKET_BYTES, bucket_bytes, emulate_buckets
from .profile import PhaseTimes, ProfileResult
from .timing import KIND_UNIT
from .trace import Measurement, Trace, TraceLayer


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile with linear interpolation between order statistics (numpy's default)."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float]) -> float:
    return quantile(values, 0.5)


def iqr(values: Sequence[float]) -> float:
    """Interquartile range p75 - p25 (0 for a single value)."""
    return quantile(values, 0.75) - quantile(values, 0.25)


@dataclass(frozen=True)
class RunInfo:
    """What the trace says about the run besides the measured numbers."""

    model: str
    batch: int
    precision: str
    device: str  # e.g. "NVIDIA H200" or the CPU model
    host: str
    clock: str
    threads: int | None  # CPU intra-op threads; None on CUDA
    warmup: int
    iters: int
    framework: str  # "torch <version>"
    input_desc: str
    command: str  # how to regenerate
    date: str  # UTC YYYY-MM-DD
    note: str = ""  # free text appended to the source


@dataclass(frozen=True)
class Totals:
    """Iteration totals (medians, seconds) and how much of them the layers cover."""

    forward_sec: float  # Σ layer forward medians
    backward_sec: float
    optimizer_sec: float
    unit_forward_sec: float  # Σ over unit layers only
    unit_backward_sec: float
    plain_forward_sec: float  # median plain (hook-free) iteration phases
    plain_backward_sec: float
    plain_optimizer_sec: float
    hooked_over_plain: float  # median hooked iteration / median plain iteration
    param_bytes: int
    bucket_sizes: list[int]  # emulated DDP buckets, bytes

    @property
    def forward_coverage(self) -> float:
        return self.forward_sec / self.plain_forward_sec if self.plain_forward_sec else 0.0

    @property
    def backward_coverage(self) -> float:
        return self.backward_sec / self.plain_backward_sec if self.plain_backward_sec else 0.0


def _phase_medians(phases: list[PhaseTimes]) -> tuple[float, float, float, float]:
    forward = median([p.forward_sec for p in phases])
    backward = median([p.backward_sec for p in phases])
    optimizer = median([p.optimizer_sec for p in phases])
    total = median([p.forward_sec + p.backward_sec + p.optimizer_sec for p in phases])
    return forward, backward, optimizer, total


def compute_totals(result: ProfileResult) -> Totals:
    """Sums, coverage and DDP buckets of a profile."""
    units = [layer for layer in result.layers if layer.kind == KIND_UNIT]
    plain_fwd, plain_bwd, plain_opt, plain_total = _phase_medians(result.plain)
    _, _, _, hooked_total = _phase_medians(result.hooked)
    ready = [result.params[i] for i in result.ready_order]
    return Totals(
        forward_sec=sum(median(layer.forward_sec) for layer in result.layers),
        backward_sec=sum(median(layer.backward_sec) for layer in result.layers),
        optimizer_sec=median([p.optimizer_sec for p in result.plain + result.hooked]),
        unit_forward_sec=sum(median(layer.forward_sec) for layer in units),
        unit_backward_sec=sum(median(layer.backward_sec) for layer in units),
        plain_forward_sec=plain_fwd,
        plain_backward_sec=plain_bwd,
        plain_optimizer_sec=plain_opt,
        hooked_over_plain=hooked_total / plain_total if plain_total else 0.0,
        param_bytes=sum(p.nbytes for p in result.params if p.index not in result.unused_params),
        bucket_sizes=bucket_bytes(emulate_buckets(ready), result.params),
    )


def trace_layers(result: ProfileResult) -> list[TraceLayer]:
    """The trace's layers: medians and IQRs of the per-iteration times."""
    return [
        TraceLayer(
            name=layer.name,
            forward_sec=median(layer.forward_sec),
            backward_sec=median(layer.backward_sec),
            param_bytes=sum(result.params[i].nbytes for i in layer.param_indices),
            forward_iqr_sec=iqr(layer.forward_sec),
            backward_iqr_sec=iqr(layer.backward_sec),
        )
        for layer in result.layers
    ]


def _clock_text(info: RunInfo) -> str:
    if info.clock == "cuda_events":
        return ("CUDA events (torch.cuda.Event(enable_timing=True)) recorded on the current "
                "stream by the hooks, read after a synchronize at the end of each iteration")
    threads = f"{info.threads} intra-op thread{'s' if info.threads != 1 else ''}"
    if info.clock == "thread_cpu":
        return (f"CPU time of the training thread (time.thread_time_ns; {threads}; autograd "
                "runs CPU backward on that thread), immune to preemption by other jobs")
    return f"wall time (time.perf_counter_ns; {threads})"


def source_text(result: ProfileResult, info: RunInfo, totals: Totals) -> str:
    """The trace's `source`: exactly how the numbers were made."""
    n = info.iters
    params = sum(1 for p in result.params if p.index not in result.unused_params)
    parts = [
        f"Measured with {TOOL_NAME} (hooks method), {info.framework}, on {info.device}.",
        f"Model: {info.input_desc}; batch {info.batch} per device; precision "
        f"{result.precision_desc}; optimizer {result.optimizer_desc}.",
        "Layers: one per call of a leaf module (a module called k times gives name, name#2 "
        "... name#k); '<container>.(between)' = glue, the autograd ops run between module "
        "calls inside that container (residual adds, flatten, reshapes; '(between)' alone = "
        "the root module); '(loss)' = the loss after the model's forward.",
        "forward_sec: from the module's forward pre-hook to its forward hook (glue and loss: "
        "between the surrounding hook events). backward_sec: sum over the autograd nodes "
        "created during that layer's forward, each from its Node pre-hook to its Node hook, "
        "plus the AccumulateGrad nodes of the layer's parameters.",
        f"Clock: {_clock_text(info)}. {info.warmup} warm-up + {n} timed iterations, each "
        "hooked iteration interleaved with a plain (hook-free) one; layer values are medians "
        f"over the {n} hooked iterations, *_iqr_sec = p75 - p25; optimizer_sec = median "
        f"optimizer step over all {2 * n} timed iterations.",
        f"Plain iteration (medians): forward+loss {totals.plain_forward_sec:.6g} s, backward "
        f"{totals.plain_backward_sec:.6g} s, optimizer {totals.plain_optimizer_sec:.6g} s. "
        f"Coverage, sum of layers / plain: forward {100 * totals.forward_coverage:.1f} % "
        f"(units alone {_percent(totals.unit_forward_sec, totals.plain_forward_sec)}), "
        f"backward {100 * totals.backward_coverage:.1f} % (units alone "
        f"{_percent(totals.unit_backward_sec, totals.plain_backward_sec)}); hooked / plain "
        f"iteration {100 * totals.hooked_over_plain:.1f} %.",
        f"param_bytes: gradient bytes = numel x element size of the parameter dtype (autocast "
        f"keeps parameters and gradients fp32), each parameter once, on the first call of the "
        f"module that registers it (tied weights: the first such module); total "
        f"{totals.param_bytes} bytes, {params} tensors.",
        f"DDP buckets emulated per tensor (gradient-ready order from AccumulateGrad hooks, "
        f"first bucket {FIRST_BUCKET_BYTES} B, cap {BUCKET_CAP_BYTES} B): "
        f"{len(totals.bucket_sizes)} bucket{'s' if len(totals.bucket_sizes) != 1 else ''} of "
        f"{', '.join(map(str, totals.bucket_sizes))} bytes (dtsim re-buckets per layer).",
    ]
    if not result.ready_order_stable:
        parts.append("The gradient-ready order differed between iterations; buckets use the "
                     "first timed iteration's.")
    if result.unused_params:
        parts.append(f"{len(result.unused_params)} trainable parameter tensors were not used "
                     "by the forward pass and are left out.")
    parts.append(f"Regenerate: {info.command}.")
    if info.note:
        parts.append(info.note)
    return " ".join(parts)


def _percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "n/a"


def build_trace(result: ProfileResult, info: RunInfo) -> tuple[Trace, Totals]:
    """The trace of a profile, and its totals."""
    totals = compute_totals(result)
    trace = Trace(
        model=info.model,
        device=info.device,
        precision=info.precision,
        batch_per_device=info.batch,
        source=source_text(result, info, totals),
        optimizer_sec=totals.optimizer_sec,
        layers=trace_layers(result),
        measurement=Measurement(
            tool=TOOL_NAME,
            framework=info.framework,
            clock=info.clock,
            warmup_iterations=info.warmup,
            timed_iterations=info.iters,
            date=info.date,
            host=info.host,
        ),
    )
    return trace, totals
