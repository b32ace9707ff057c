"""Command line: ``python3 -m dtsim_profile --model resnet50 --batch 32 -o trace.json``.

Exit codes: 0 success, 2 bad input (message on stderr), 1 internal error.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from typing import Sequence

import torch

from . import TOOL_NAME
from .clocks import CLOCK_NAMES
from .kernels import CPU_OPS_ENV, CUDA_KERNELS, CudaKernelClock, KernelTimingError, \
    kernel_timing_available
from .models import ZOO, ProfileError, ZooOptions, load_model
from .profile import PRECISIONS, RunConfig, profile_model
from .summary import RunInfo, Totals, build_trace
from .trace import TraceCheckError, write_trace

PROG = "dtsim-profile"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Measure one device's per-layer forward/backward times, gradient and "
                    "output activation bytes and optimizer step of a PyTorch model and write "
                    "a dtsim workload trace (workloads/FORMAT.md, version 3).")
    parser.add_argument("--model", required=True,
                        help=f"zoo model ({', '.join(ZOO)}) or a factory pkg.module:function "
                             "(see profiler/README.md)")
    parser.add_argument("--batch", type=int, required=True, help="samples per device")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--precision", choices=PRECISIONS, default="fp32",
                        help="fp16/bf16 = torch.autocast; parameters and gradients stay fp32")
    parser.add_argument("--iters", type=int, default=20, help="timed iterations (default 20)")
    parser.add_argument("--warmup", type=int, default=5,
                        help="warm-up iterations, discarded (default 5)")
    parser.add_argument("--input-size", type=int,
                        help="image side in pixels for CNNs (default 224; inception_v3 299)")
    parser.add_argument("--seq-len", type=int,
                        help="tokens per sample for transformers (default bert 128, gpt2 1024)")
    parser.add_argument("--clock", choices=CLOCK_NAMES,
                        help="default: cuda_events on cuda, thread_cpu on cpu")
    parser.add_argument("--cuda-timing", choices=("events", "kernels"),
                        help="--device cuda: 'kernels' = GPU kernel time per layer from "
                             "torch.profiler (Kineto/CUPTI), immune to CPU-side gaps; "
                             "'events' = CUDA events recorded by the hooks (default; "
                             "'kernels' is not yet checked on a GPU)")
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU intra-op threads (default 1; thread_cpu needs 1)")
    parser.add_argument("--optimizer", choices=("sgd", "adamw"),
                        help="default: sgd (momentum 0.9) for CNNs and MLPs, adamw for "
                             "transformers")
    parser.add_argument("--seed", type=int, default=0, help="torch.manual_seed (default 0)")
    parser.add_argument("--name", help="model name written in the trace (default: --model)")
    parser.add_argument("--note", default="", help="text appended to the trace's source")
    parser.add_argument("-o", "--output", required=True, help="trace file to write")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except ProfileError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except TraceCheckError as error:  # our own bug: the trace would not be valid
        print(f"{PROG}: internal error, invalid trace not written:\n{error}", file=sys.stderr)
        return 1
    except KernelTimingError as error:  # the profiler's events did not give kernel times
        print(f"{PROG}: error: --cuda-timing kernels: {error}", file=sys.stderr)
        return 1


def _cpu_ops_as_kernels() -> bool:
    """The CPU dry-run test hook (kernels.CPU_OPS_ENV): --cuda-timing kernels on the CPU,
    the self times of CPU ops standing in for kernels."""
    return os.environ.get(CPU_OPS_ENV, "") == "1"


def _check_args(args: argparse.Namespace) -> str:
    """Validates the numeric and device options; returns the clock to use (clocks.CLOCK_NAMES
    or kernels.CUDA_KERNELS)."""
    for flag, value, low in (("--batch", args.batch, 1), ("--iters", args.iters, 1),
                             ("--warmup", args.warmup, 0), ("--threads", args.threads, 1)):
        if value < low:
            raise ProfileError(f"{flag} {value}: must be >= {low}")
    for flag, value in (("--input-size", args.input_size), ("--seq-len", args.seq_len)):
        if value is not None and value < 1:
            raise ProfileError(f"{flag} {value}: must be >= 1")
    _check_output(args.output)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise ProfileError(f"--device cuda: this torch ({torch.__version__}) sees no CUDA device")
    clock = args.clock or ("cuda_events" if args.device == "cuda" else "thread_cpu")
    if (clock == "cuda_events") != (args.device == "cuda"):
        raise ProfileError(f"--clock {clock} does not time --device {args.device} "
                           "(cuda needs cuda_events; cpu needs thread_cpu or wall)")
    if clock == "thread_cpu" and args.threads != 1:
        raise ProfileError("--clock thread_cpu times only the calling thread: use --threads 1, "
                           "or --clock wall")
    if args.device != "cuda":
        if args.cuda_timing == "kernels" and _cpu_ops_as_kernels():
            return clock  # test hook: the kernel path on the CPU (see _run)
        if args.cuda_timing is not None:
            raise ProfileError(f"--cuda-timing {args.cuda_timing}: only with --device cuda")
        return clock
    # Events stay the default until kernel timing has been checked on a GPU (it has only run
    # against synthetic and CPU profiler events so far; profiler/README.md).
    timing = args.cuda_timing or "events"
    if timing == "kernels":
        if not kernel_timing_available():
            raise ProfileError(f"--cuda-timing kernels: this torch ({torch.__version__}) has no "
                               "torch.profiler CUDA activity (Kineto with CUPTI); use "
                               "--cuda-timing events")
        return CUDA_KERNELS
    return clock


def _check_output(path: str) -> None:
    """Fails before profiling if the trace could not be written to `path`."""
    if not path or os.path.isdir(path):
        raise ProfileError(f"-o {path!r}: a file name is needed, not a directory")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise ProfileError(f"-o {path}: no such directory {folder}")


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "CPU"


def _command(args: argparse.Namespace, cuda_timing: str | None = None) -> str:
    """The command that regenerates the trace (without the output path); `cuda_timing` is
    the --cuda-timing used (None: not applicable)."""
    words = [PROG, "--model", args.model, "--batch", str(args.batch), "--device", args.device,
             "--precision", args.precision, "--warmup", str(args.warmup), "--iters",
             str(args.iters)]
    for flag, value in (("--input-size", args.input_size), ("--seq-len", args.seq_len),
                        ("--optimizer", args.optimizer)):
        if value is not None:
            words += [flag, str(value)]
    if args.clock is not None:
        words += ["--clock", args.clock]
    if cuda_timing is not None:
        words += ["--cuda-timing", cuda_timing]
    if args.threads != 1:
        words += ["--threads", str(args.threads)]
    return " ".join(words)


def _run(args: argparse.Namespace) -> int:
    clock = _check_args(args)
    kernel_clock = None
    if args.device != "cuda" and args.cuda_timing == "kernels":  # the CPU test hook
        kernel_clock = CudaKernelClock(cpu_ops_as_kernels=True)
    cuda_timing = None
    if args.device == "cuda" or kernel_clock is not None:
        cuda_timing = "kernels" if clock == CUDA_KERNELS or kernel_clock else "events"
    device = torch.device(args.device)
    log = (lambda message: None) if args.quiet else (
        lambda message: print(f"{PROG}: {message}", file=sys.stderr, flush=True))
    if device.type == "cpu":
        torch.set_num_threads(args.threads)
    else:
        torch.backends.cudnn.benchmark = True  # fixed shapes: let cuDNN pick its kernels
    torch.manual_seed(args.seed)
    bundle = load_model(args.model, ZooOptions(args.input_size, args.seq_len))
    log(f"{args.model}: {bundle.input_desc}; batch {args.batch} on {args.device}, "
        f"{args.precision}, clock "
        f"{clock if kernel_clock is None else CUDA_KERNELS + ' (CPU ops as kernels: test mode)'}")
    config = RunConfig(device, args.precision, clock, args.warmup, args.iters)
    try:
        result = profile_model(bundle, args.batch, config, args.optimizer or bundle.optimizer,
                               log, kernel_clock)
    except KernelTimingError:
        raise  # main() says what the kernel timing lacked
    except (RuntimeError, MemoryError) as error:
        # torch's own failures on this input: out of memory, an unsupported dtype. Subclasses
        # (NotImplementedError, RecursionError) and our invariants (AssertionError) are bugs.
        out_of_memory = isinstance(error, (MemoryError, torch.cuda.OutOfMemoryError))
        if not out_of_memory and type(error) is not RuntimeError:
            raise
        first_line = (str(error).strip() or repr(error)).splitlines()[0]
        raise ProfileError(f"{args.model} (batch {args.batch}, {args.precision}) did not run on "
                           f"{args.device}: {first_line}") from error
    device_name = _device_name(device)
    info = RunInfo(
        model=args.name or args.model,
        batch=args.batch,
        precision=args.precision,
        device=device_name,
        host=f"{device_name} on {platform.node() or 'unknown host'} "
             f"({os.cpu_count()} CPUs, {platform.system()} {platform.machine()})",
        clock=CUDA_KERNELS if kernel_clock is not None else clock,
        threads=args.threads if device.type == "cpu" else None,
        warmup=args.warmup,
        iters=args.iters,
        framework=f"torch {torch.__version__}",
        input_desc=bundle.input_desc,
        command=_command(args, cuda_timing),
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        note=args.note,
    )
    trace, totals = build_trace(result, info)
    write_trace(trace, args.output)
    print(_summary_line(args.output, len(trace.layers), totals))
    return 0


def _summary_line(path: str, layers: int, totals: Totals) -> str:
    line = (f"{TOOL_NAME}: wrote {path}: {layers} layers, forward {totals.forward_sec:.6g} s, "
            f"backward {totals.backward_sec:.6g} s, optimizer {totals.optimizer_sec:.6g} s, "
            f"param_bytes {totals.param_bytes}, coverage forward "
            f"{100 * totals.forward_coverage:.1f} % backward "
            f"{100 * totals.backward_coverage:.1f} %, hooked/plain "
            f"{100 * totals.hooked_over_plain:.1f} %, {len(totals.bucket_sizes)} DDP buckets")
    if totals.kernels_over_plain is not None:  # kernel timing: appended, the rest unchanged
        forward, backward = totals.forward_attribution, totals.backward_attribution
        line += (f"; cuda_kernels: kernels/plain {100 * totals.kernels_over_plain:.1f} %, "
                 f"layers/kernels forward {100 * (forward or 0.0):.1f} % backward "
                 f"{100 * (backward or 0.0):.1f} %, unlinked {totals.unlinked_sec or 0.0:.3g} s")
    return line
