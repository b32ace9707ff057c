"""From measured iterations to a trace: medians, spreads, coverage, buckets, source text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from . import TOOL_NAME
from .ddp import BUCKET_CAP_BYTES, FIRST_BUCKET_BYTES, bucket_bytes, emulate_buckets
from .kernels import CUDA_KERNELS
from .profile import PhaseTimes, ProfileResult
from .timing import KIND_UNIT
from .trace import Measurement, Trace, TraceLayer, trace_clock


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
    clock: str  # clocks.CLOCK_NAMES or kernels.CUDA_KERNELS; the trace's via trace.trace_clock
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
    hooked_over_plain: float  # median hooked iteration / median plain iteration (wall)
    param_bytes: int
    bucket_sizes: list[int]  # emulated DDP buckets, bytes
    # Kernel timing only (else None): medians over the hooked iterations of the GPU kernel
    # time per phase, of the kernel time whose launch could not be placed, and the median
    # hooked kernel time / median plain iteration.
    hooked_forward_sec: float | None = None
    hooked_backward_sec: float | None = None
    unlinked_sec: float | None = None
    kernels_over_plain: float | None = None

    @property
    def forward_attribution(self) -> float | None:
        """Kernel timing: Σ layer forward medians / median forward kernel time."""
        if not self.hooked_forward_sec:
            return None
        return self.forward_sec / self.hooked_forward_sec

    @property
    def backward_attribution(self) -> float | None:
        if not self.hooked_backward_sec:
            return None
        return self.backward_sec / self.hooked_backward_sec

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
    hooked_fwd, hooked_bwd, hooked_opt, hooked_total = _phase_medians(result.hooked)
    ready = [result.params[i] for i in result.ready_order]
    kernels: dict[str, float | None] = {}
    optimizer_sec = median([p.optimizer_sec for p in result.plain + result.hooked])
    if result.kernel_timing:
        # every trace time is GPU kernel time: the optimizer's too (hooked iterations only)
        optimizer_sec = hooked_opt
        kernels = dict(
            hooked_forward_sec=hooked_fwd,
            hooked_backward_sec=hooked_bwd,
            unlinked_sec=median([p.unlinked_sec or 0.0 for p in result.hooked]),
            kernels_over_plain=hooked_total / plain_total if plain_total else 0.0,
        )
        hooked_total = median([p.wall_sec if p.wall_sec is not None else _total(p)
                               for p in result.hooked])
    return Totals(
        forward_sec=sum(median(layer.forward_sec) for layer in result.layers),
        backward_sec=sum(median(layer.backward_sec) for layer in result.layers),
        optimizer_sec=optimizer_sec,
        unit_forward_sec=sum(median(layer.forward_sec) for layer in units),
        unit_backward_sec=sum(median(layer.backward_sec) for layer in units),
        plain_forward_sec=plain_fwd,
        plain_backward_sec=plain_bwd,
        plain_optimizer_sec=plain_opt,
        hooked_over_plain=hooked_total / plain_total if plain_total else 0.0,
        param_bytes=sum(p.nbytes for p in result.params if p.index not in result.unused_params),
        bucket_sizes=bucket_bytes(emulate_buckets(ready), result.params),
        **kernels,
    )


def _total(phases: PhaseTimes) -> float:
    return phases.forward_sec + phases.backward_sec + phases.optimizer_sec


def trace_layers(result: ProfileResult) -> list[TraceLayer]:
    """The trace's layers: medians and IQRs of the per-iteration times, output bytes."""
    return [
        TraceLayer(
            name=layer.name,
            forward_sec=median(layer.forward_sec),
            backward_sec=median(layer.backward_sec),
            param_bytes=sum(result.params[i].nbytes for i in layer.param_indices),
            forward_iqr_sec=iqr(layer.forward_sec),
            backward_iqr_sec=iqr(layer.backward_sec),
            activation_bytes=layer.activation_bytes,
        )
        for layer in result.layers
    ]


def _clock_text(info: RunInfo, result: ProfileResult) -> str:
    if info.clock == CUDA_KERNELS:
        pseudo = result.kernel_adapter == "cpu_ops"
        return (
            "cuda_kernels (written as measurement.clock "
            f"'{trace_clock(CUDA_KERNELS)}': GPU timestamps, like CUDA events): each hooked "
            "iteration runs in its own torch.profiler session (Kineto/CUPTI, CPU and CUDA "
            "activities); the hooks put empty record_function marks on the profiler's host "
            "timeline; every GPU activity (kernel, memcpy, memset) is placed at the host start "
            "of the torch op that launched it (Kineto's link by correlation id; the runtime "
            "launch call when that op encloses marks, e.g. an autograd engine "
            "evaluate_function) and counts to the window between the marks around that point; "
            "a window's time is the union of its activities' GPU intervals (the sum of their "
            "durations on one stream); GPU idle time is not counted anywhere. Work the autograd "
            "engine launches right after a node's post-hook (gradient accumulation into the "
            "next node's input buffer) counts to that node"
            + (". TEST MODE: no GPU; the self times of CPU ops stood in for kernels"
               if pseudo else "")
            + f" (events read via {result.kernel_adapter or 'n/a'})")
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
    kernels = result.kernel_timing
    if kernels:
        method = (
            "forward_sec: GPU kernel time of the kernels launched from the module's forward "
            "pre-hook to its forward hook (glue and loss: between the surrounding hook events). "
            "backward_sec: the same for the kernels launched by the autograd nodes created "
            "during that layer's forward, each from its Node pre-hook to its Node hook, plus "
            "the AccumulateGrad nodes of the layer's parameters.")
        optimizer = (f"optimizer_sec = median GPU kernel time of the optimizer step over the "
                     f"{n} hooked iterations.")
        overhead = (f"hooked / plain iteration wall time (CUDA events; profiler and hooks "
                    f"slow the CPU side, which does not enter kernel times) "
                    f"{100 * totals.hooked_over_plain:.1f} %.")
    else:
        method = (
            "forward_sec: from the module's forward pre-hook to its forward hook (glue and "
            "loss: between the surrounding hook events). backward_sec: sum over the autograd "
            "nodes created during that layer's forward, each from its Node pre-hook to its "
            "Node hook, plus the AccumulateGrad nodes of the layer's parameters.")
        optimizer = (f"optimizer_sec = median optimizer step over all {2 * n} timed "
                     "iterations.")
        overhead = f"hooked / plain iteration {100 * totals.hooked_over_plain:.1f} %."
    parts = [
        f"Measured with {TOOL_NAME} (hooks method"
        f"{', CUDA kernel timing' if kernels else ''}), {info.framework}, on {info.device}.",
        f"Model: {info.input_desc}; batch {info.batch} per device; precision "
        f"{result.precision_desc}; optimizer {result.optimizer_desc}.",
        "Layers: one per call of a leaf module (a module called k times gives name, name#2 "
        "... name#k); '<container>.(between)' = glue, the autograd ops run between module "
        "calls inside that container (residual adds, flatten, reshapes; '(between)' alone = "
        "the root module); '(loss)' = the loss after the model's forward.",
        method,
        f"Clock: {_clock_text(info, result)}. {info.warmup} warm-up + {n} timed iterations, "
        "each hooked iteration interleaved with a plain (hook-free) one; layer values are "
        f"medians over the {n} hooked iterations, *_iqr_sec = p75 - p25; {optimizer}",
        f"Plain iteration (medians): forward+loss {totals.plain_forward_sec:.6g} s, backward "
        f"{totals.plain_backward_sec:.6g} s, optimizer {totals.plain_optimizer_sec:.6g} s. "
        f"Coverage, sum of layers / plain: forward {100 * totals.forward_coverage:.1f} % "
        f"(units alone {_percent(totals.unit_forward_sec, totals.plain_forward_sec)}), "
        f"backward {100 * totals.backward_coverage:.1f} % (units alone "
        f"{_percent(totals.unit_backward_sec, totals.plain_backward_sec)}); {overhead}",
        f"param_bytes: gradient bytes = numel x element size of the parameter dtype (autocast "
        f"keeps parameters and gradients fp32), each parameter once, on the first call of the "
        f"module that registers it (tied weights: the first such module); total "
        f"{totals.param_bytes} bytes, {params} tensors.",
        "activation_bytes: numel x element size (the dtype computed, e.g. bf16 under autocast) "
        "of the distinct tensors a layer hands on: a unit's forward output (tensor or tuple "
        "of tensors), a glue layer's tensors created by it and passed to the next hook event, "
        "the loss for '(loss)'"
        + ("; left out where the timed iterations disagreed."
           if any(layer.activation_bytes is None for layer in result.layers) else "."),
        f"DDP buckets emulated per tensor (gradient-ready order from AccumulateGrad hooks, "
        f"first bucket {FIRST_BUCKET_BYTES} B, cap {BUCKET_CAP_BYTES} B): "
        f"{len(totals.bucket_sizes)} bucket{'s' if len(totals.bucket_sizes) != 1 else ''} of "
        f"{', '.join(map(str, totals.bucket_sizes))} bytes (dtsim re-buckets per layer).",
    ]
    if kernels:
        parts.insert(6, _kernel_text(totals))
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


def _kernel_text(totals: Totals) -> str:
    forward = totals.forward_attribution
    backward = totals.backward_attribution
    return (
        f"GPU kernel time of the hooked iterations (medians): forward+loss "
        f"{totals.hooked_forward_sec or 0.0:.6g} s, backward "
        f"{totals.hooked_backward_sec or 0.0:.6g} s, optimizer {totals.optimizer_sec:.6g} s; "
        f"the layers hold "
        f"{_ratio(forward)} of the forward and {_ratio(backward)} of the backward kernel time "
        f"(the rest was launched outside every layer's window, e.g. between module calls "
        f"without autograd ops); kernel time / plain iteration "
        f"{_ratio(totals.kernels_over_plain)} (under 100 %: the GPU idles during part of a "
        f"plain iteration, e.g. waiting for kernel launches; that idle time is in no layer); "
        f"GPU time with no launching op found, left out: {totals.unlinked_sec or 0.0:.3g} s "
        f"per iteration.")


def _ratio(value: float | None) -> str:
    return f"{100 * value:.1f} %" if value is not None else "n/a"


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
            clock=trace_clock(info.clock),
            warmup_iterations=info.warmup,
            timed_iterations=info.iters,
            date=info.date,
            host=info.host,
        ),
    )
    return trace, totals
