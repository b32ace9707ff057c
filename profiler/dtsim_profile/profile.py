"""The measurement loop: training iterations of one model, plain and hooked, interleaved.

Each cycle runs one *plain* iteration (no hooks: the reference totals) and then one
*hooked* iteration (per-layer times), so both see the same machine load. The first
`warmup` cycles are discarded. An iteration is ``zero_grad(set_to_none=True)``, forward
and loss (under autocast for fp16/bf16), backward, optimizer step.

With kernel timing (``RunConfig.clock == "cuda_kernels"``) the plain iterations are timed
with CUDA events and the hooked ones with the kernel clock (kernels.CudaKernelClock): their
phases are GPU kernel times, and a CUDA event pair gives their wall time as well.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass
from typing import Any, Callable, ContextManager

import torch

from .clocks import Clock, make_clock
from .ddp import ParamInfo, param_owners, trainable_params
from .kernels import CUDA_KERNELS, CudaKernelClock
from .models import ModelBundle, ProfileError
from .timing import IterationRecord, LayerRecorder

_AUTOCAST_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
PRECISIONS = ("fp32", "fp16", "bf16")


@dataclass(frozen=True)
class RunConfig:
    """How to measure."""

    device: torch.device
    precision: str  # one of PRECISIONS
    clock: str  # one of clocks.CLOCK_NAMES, or kernels.CUDA_KERNELS
    warmup: int  # cycles discarded
    iters: int  # cycles timed


@dataclass(frozen=True)
class PhaseTimes:
    """One iteration's phases, in seconds."""

    forward_sec: float  # forward and loss
    backward_sec: float
    optimizer_sec: float
    # Kernel timing, hooked iterations only (None otherwise): the iteration's wall time by
    # CUDA events, and the GPU time of activities whose launch could not be placed.
    wall_sec: float | None = None
    unlinked_sec: float | None = None


@dataclass
class LayerTimes:
    """One trace layer: its per-iteration times over the timed hooked iterations."""

    name: str
    kind: str  # timing.KIND_UNIT, KIND_GLUE or KIND_LOSS
    forward_sec: list[float]
    backward_sec: list[float]
    param_indices: list[int]
    # Bytes of the tensors the layer hands on (timing.py), the same in every timed hooked
    # iteration; None if they differed (data-dependent shapes).
    activation_bytes: int | None = None


@dataclass
class ProfileResult:
    """Everything measured for one model."""

    layers: list[LayerTimes]  # forward order
    plain: list[PhaseTimes]  # timed plain iterations
    hooked: list[PhaseTimes]  # timed hooked iterations
    params: list[ParamInfo]
    ready_order: list[int]  # gradient-ready order of the first timed hooked iteration
    ready_order_stable: bool  # the same in every timed hooked iteration
    unused_params: list[int]  # trainable parameters no layer used
    optimizer_desc: str
    precision_desc: str
    kernel_timing: bool = False  # hooked phases and layers are GPU kernel times
    kernel_adapter: str = ""  # kernel timing: how the profiler's events were read


def check_precision(device: torch.device, precision: str) -> None:
    """Raises ProfileError unless autocast to `precision` works on `device`."""
    if precision not in PRECISIONS:
        raise ProfileError(f"--precision {precision}: expected one of {', '.join(PRECISIONS)}")
    if precision == "fp32":
        return
    dtype = _AUTOCAST_DTYPES[precision]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autocast(device_type=device.type, dtype=dtype):
                probe = torch.ones(2, 2, device=device) @ torch.ones(2, 2, device=device)
    except RuntimeError as error:
        probe, reason = None, str(error).splitlines()[0]
    else:
        reason = f"a matmul under autocast stayed {probe.dtype}"
    if probe is None or probe.dtype != dtype:
        raise ProfileError(f"--precision {precision}: torch {torch.__version__} does not "
                           f"support {precision} autocast on {device.type} ({reason}); "
                           "use --precision bf16 or fp32")


def autocast(device: torch.device, precision: str) -> ContextManager[Any]:
    """The forward pass's autocast context (none for fp32)."""
    if precision == "fp32":
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=_AUTOCAST_DTYPES[precision])


def make_optimizer(name: str, params: list[torch.nn.Parameter]) -> tuple[Any, str]:
    """Returns the optimizer `name` ("sgd" or "adamw") and its description."""
    if name == "sgd":
        return (torch.optim.SGD(params, lr=0.01, momentum=0.9, weight_decay=1e-4),
                "SGD(lr=0.01, momentum=0.9, weight_decay=1e-4)")
    if name == "adamw":
        return (torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01),
                "AdamW(lr=1e-4, weight_decay=0.01)")
    raise ProfileError(f"--optimizer {name}: expected sgd or adamw")


def _grad_scaler(device: torch.device, precision: str) -> Any:
    """A loss scaler for fp16 on CUDA (as in real fp16 training), else None."""
    if precision != "fp16" or device.type != "cuda":
        return None
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):  # torch >= 2.3
        return torch.amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


def _precision_desc(device: torch.device, precision: str) -> str:
    if precision == "fp32":
        text = "fp32 (no autocast)"
    else:
        text = (f"{precision} autocast on {device.type}, fp32 parameters and gradients"
                + (", GradScaler loss scaling" if _grad_scaler(device, precision) else ""))
    if device.type == "cuda":
        text += f"; {_tf32_desc()}; cudnn.benchmark "
        text += "on" if torch.backends.cudnn.benchmark else "off"
    return text


def _tf32_desc() -> str:
    """Whether fp32 convolutions and matmuls may use TF32 (torch's legacy flags, which newer
    torch versions still answer, possibly with a deprecation warning)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            conv = torch.backends.cudnn.allow_tf32
            matmul = torch.backends.cuda.matmul.allow_tf32
    except Exception:  # a torch that no longer answers: say so rather than fail the run
        return "TF32 settings unknown"
    return (f"TF32 for convolutions {'on' if conv else 'off'}, for matmuls "
            f"{'on' if matmul else 'off'}")


@dataclass
class _Trainer:
    """One model's training step, with a clock around its phases. `kernel_clock`, when set,
    times the hooked iterations (and `clock` their wall time)."""

    bundle: ModelBundle
    config: RunConfig
    clock: Clock
    inputs: tuple[Any, ...]
    target: Any
    optimizer: Any
    scaler: Any
    kernel_clock: CudaKernelClock | None = None

    @property
    def layer_clock(self) -> Clock:
        """The clock of the hooked iterations (the recorder's)."""
        return self.kernel_clock if self.kernel_clock is not None else self.clock

    def iteration(
        self, recorder: LayerRecorder | None
    ) -> tuple[PhaseTimes, IterationRecord | None]:
        """One training iteration; with a recorder, also its per-layer record."""
        clock, model, wall = self.clock, self.bundle.model, None
        if recorder is not None and self.kernel_clock is not None:
            clock, wall = self.kernel_clock, self.clock
        self.optimizer.zero_grad(set_to_none=True)
        clock.begin()
        start = clock.mark()
        wall_start = wall.mark() if wall is not None else None
        if recorder is not None:
            recorder.begin_forward()
        with autocast(self.config.device, self.config.precision):
            loss = self.bundle.loss_fn(model(*self.inputs), self.target)
            if self.scaler is not None:
                loss = self.scaler.scale(loss)
        if recorder is not None:
            recorder.end_forward(loss)
        forward_end = clock.mark()
        loss.backward()
        backward_end = clock.mark()
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        step_end = clock.mark()
        wall_end = wall.mark() if wall is not None else None
        clock.sync()
        wall_sec = unlinked_sec = None
        if wall is not None:
            wall.sync()
            wall_sec = wall.seconds(wall_start, wall_end)
            wall.recycle()
            unlinked_sec = self.kernel_clock.last_unlinked_sec if self.kernel_clock else None
        phases = PhaseTimes(clock.seconds(start, forward_end),
                            clock.seconds(forward_end, backward_end),
                            clock.seconds(backward_end, step_end), wall_sec, unlinked_sec)
        record = recorder.finish() if recorder is not None else None
        clock.recycle()
        return phases, record


def profile_model(
    bundle: ModelBundle,
    batch_size: int,
    config: RunConfig,
    optimizer_name: str,
    log: Callable[[str], None] = lambda message: None,
    kernel_clock: CudaKernelClock | None = None,
) -> ProfileResult:
    """Trains `bundle` for warmup + iters cycles on `config.device` and returns the
    per-layer and per-phase times. Raises ProfileError for bad settings.

    `config.clock` "cuda_kernels" times the hooked iterations with a CudaKernelClock and the
    plain ones with CUDA events; a given `kernel_clock` (tests: CPU ops standing in for
    kernels) times the hooked iterations with `config.clock` timing the plain ones."""
    check_precision(config.device, config.precision)
    model = bundle.model.to(config.device)
    model.train()
    described = trainable_params(model)
    infos = [info for info, _ in described]
    params = [param for _, param in described]
    if not params:
        raise ProfileError("the model has no trainable parameters")
    optimizer, optimizer_desc = make_optimizer(optimizer_name, params)
    inputs, target = bundle.make_batch(batch_size, config.device)
    clock_name = config.clock
    if clock_name == CUDA_KERNELS:
        kernel_clock = kernel_clock or CudaKernelClock()
        clock_name = "cuda_events"
    trainer = _Trainer(bundle, config, make_clock(clock_name),
                       inputs if isinstance(inputs, tuple) else (inputs,), target,
                       optimizer, _grad_scaler(config.device, config.precision), kernel_clock)
    recorder = LayerRecorder(model, trainer.layer_clock, params, param_owners(model, params))
    plain: list[PhaseTimes] = []
    hooked: list[PhaseTimes] = []
    records: list[IterationRecord] = []
    for cycle in range(config.warmup + config.iters):
        plain_times, _ = trainer.iteration(None)
        with recorder.attached():
            hooked_times, record = trainer.iteration(recorder)
        timed = cycle >= config.warmup
        hooked_text = f"hooked {_total(hooked_times):.4f} s"
        if hooked_times.wall_sec is not None and kernel_clock is not None:
            hooked_text = (f"hooked {hooked_times.wall_sec:.4f} s wall, "
                           f"{_total(hooked_times):.4f} s kernels ({kernel_clock.last_summary})")
        log(f"cycle {cycle + 1}/{config.warmup + config.iters} ({'timed' if timed else 'warm-up'}):"
            f" plain {_total(plain_times):.4f} s, {hooked_text}")
        if timed:
            plain.append(plain_times)
            hooked.append(hooked_times)
            records.append(record)
    result = _summarize(records, plain, hooked, infos, optimizer_desc,
                        _precision_desc(config.device, config.precision))
    if kernel_clock is not None:
        result.kernel_timing = True
        result.kernel_adapter = kernel_clock.adapter
    return result


def _total(phases: PhaseTimes) -> float:
    return phases.forward_sec + phases.backward_sec + phases.optimizer_sec


def _same_in_all(values: list[int]) -> int | None:
    """The value every iteration gave, or None if they differed."""
    return values[0] if all(value == values[0] for value in values) else None


def _summarize(
    records: list[IterationRecord],
    plain: list[PhaseTimes],
    hooked: list[PhaseTimes],
    infos: list[ParamInfo],
    optimizer_desc: str,
    precision_desc: str,
) -> ProfileResult:
    first = records[0]
    names = [segment.name for segment in first.segments]
    for record in records[1:]:
        if [segment.name for segment in record.segments] != names:
            raise ProfileError("the model ran different layers in different iterations "
                               "(data-dependent control flow?); cannot make one trace")
    by_segment: dict[int, list[int]] = {}
    for index, segment in sorted(first.param_segment.items()):
        by_segment.setdefault(segment, []).append(index)
    layers = [
        LayerTimes(
            name=segment.name,
            kind=segment.kind,
            forward_sec=[record.forward_sec[i] for record in records],
            backward_sec=[record.backward_sec[i] for record in records],
            param_indices=by_segment.get(i, []),
            activation_bytes=_same_in_all([record.output_bytes[i] for record in records]),
        )
        for i, segment in enumerate(first.segments)
    ]
    unused = [info.index for info in infos if info.index not in first.param_segment]
    stable = all(record.ready_order == first.ready_order for record in records)
    return ProfileResult(layers, plain, hooked, infos, first.ready_order, stable, unused,
                         optimizer_desc, precision_desc)
