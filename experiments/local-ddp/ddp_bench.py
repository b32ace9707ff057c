#!/usr/bin/python3
"""Ground truth for the local-ddp experiment: real PyTorch DDP over gloo, 2 processes on
127.0.0.1, one compute thread each (see README.md in this folder).

    /usr/bin/python3 experiments/local-ddp/ddp_bench.py --mode mixed --model wide_mlp \
        --batch 64 --warmup 3 --iters 20 --tag wide_mlp_r1 --out out/local-ddp/bench.jsonl

Modes (every timed piece of work starts right after a `dist.barrier()`, so both ranks start
it together):

* ``concurrent``: both processes train their own copy of the model, no communication: the
  compute of one rank while the other rank computes too (2 processes on 2 cores).
* ``ddp``: ``torch.nn.parallel.DistributedDataParallel`` with its defaults (bucket_cap_mb 25,
  first bucket 1 MiB, broadcast_buffers on, gradient_as_bucket_view off).
* ``allreduce``: ``dist.all_reduce`` of float32 tensors of the ``--sizes`` (bytes).
* ``mixed``: per cycle, back to back, one concurrent iteration and one DDP iteration (in
  this order in even cycles, the other way round in odd ones), one
  all-reduce of each size (the small ``--sizes`` plus every DDP bucket size plus all
  gradient bytes), then one gradient copy in and out (below). All kinds see the same machine
  load, which drifts with the other jobs.

Without ``--rank`` the script is the launcher: it starts ranks 0 and 1 as child processes
(same script, ``--rank r``), waits, and appends to ``--out`` one JSON line per kind of work:
per-rank per-cycle times and their medians over the timed cycles (after ``--warmup``
cycles). Iteration times are wall clock (``time.perf_counter``); ``thread_cpu_sec`` is the
main thread's CPU time (``time.thread_time``). Summaries:

* iteration kinds (``median``): per cycle, the phases of the slower rank (the one with the
  longer iteration: a synchronous step waits for it); then the median over cycles of each
  phase (forward = model + loss, backward = ``loss.backward()``, which for DDP includes
  waiting for the bucket all-reduces and DDP's copies, optimizer = ``optimizer.step()``).
  ``median_mean_of_ranks``: the same with the mean over the ranks instead of the slower one;
* all-reduce: per cycle, the minimum over the two ranks (the rank that leaves the barrier
  last sees the collective without the barrier's exit skew); then the median over cycles.
  ``median_process_cpu_sec``: CPU time of the whole process (all threads: gloo's included)
  during the all-reduce, mean over the ranks, median over cycles;
* copy (mixed mode): what DDP's reducer does to each gradient besides the all-reduce, timed
  on both ranks at once on the DDP model's gradients: copy into a flat bucket divided by the
  world size, then copy back; per cycle the slower rank; median over cycles.

Exit codes: 0 success, 2 bad arguments, 1 a rank failed.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path[:0] = [str(REPO / "profiler"), str(HERE)]

MODELS = {  # --model -> the profiler's model spec (zoo name or user factory)
    "resnet18": "resnet18",
    "wide_mlp": "local_models:wide_mlp",
}
MODES = ("concurrent", "ddp", "allreduce", "mixed")
DEFAULT_SMALL_SIZES = (4, 262_144, 1_048_576, 4_194_304)  # bytes, for the fit's intercept
WORLD = 2


def read_loadavg() -> list[float]:
    with open("/proc/loadavg", encoding="ascii") as f:
        return [float(x) for x in f.read().split()[:3]]


def parse_sizes(text: str) -> list[int]:
    sizes = [int(x) for x in text.split(",") if x.strip()]
    for size in sizes:
        if size < 4 or size % 4:
            raise ValueError(f"--sizes: {size} is not a positive multiple of 4 bytes")
    return sizes


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=MODES, required=True)
    parser.add_argument("--model", choices=sorted(MODELS), default="resnet18")
    parser.add_argument("--batch", type=int, default=8, help="samples per rank")
    parser.add_argument("--input-size", type=int, default=224, help="image side (resnet18)")
    parser.add_argument("--warmup", type=int, default=3, help="cycles discarded")
    parser.add_argument("--iters", type=int, default=15, help="cycles timed")
    parser.add_argument("--sizes", default="",
                        help="all-reduce sizes in bytes, comma-separated (allreduce: required; "
                             "mixed: the small sizes, default "
                             + ",".join(map(str, DEFAULT_SMALL_SIZES)) + ")")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--port", type=int, default=0, help="MASTER_PORT (default: a free one)")
    parser.add_argument("--tag", default="", help="label copied into every output line")
    parser.add_argument("--out", help="JSONL file to append to (launcher)")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds, launcher")
    parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)  # worker
    parser.add_argument("--result", help=argparse.SUPPRESS)  # worker: rank 0 writes here
    return parser


# ---- launcher -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(args: argparse.Namespace, argv: list[str]) -> int:
    if not args.out:
        print("ddp_bench.py: --out is required", file=sys.stderr)
        return 2
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(args.port or free_port()),
               WORLD_SIZE=str(WORLD), GLOO_SOCKET_IFNAME="lo", OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    load_before = read_loadavg()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result.json"
        procs = []
        for rank in range(WORLD):
            procs.append(subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), *argv, "--rank", str(rank),
                 "--result", str(result)], env=dict(env, RANK=str(rank))))
        failed = False
        deadline = started + args.timeout
        while any(p.poll() is None for p in procs):
            if any(p.poll() not in (None, 0) for p in procs) or time.perf_counter() > deadline:
                failed = True
                for p in procs:  # our own children, by their handles
                    if p.poll() is None:
                        p.kill()
            time.sleep(0.2)
        if failed or any(p.returncode != 0 for p in procs):
            print(f"ddp_bench.py: a rank failed (exit codes {[p.returncode for p in procs]})",
                  file=sys.stderr)
            return 1
        lines = json.loads(result.read_text())
    load_after = read_loadavg()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as f:
        for line in lines:
            line.update(load_before=load_before, load_after=load_after,
                        launcher_wall_sec=round(time.perf_counter() - started, 3))
            f.write(json.dumps(line, sort_keys=False) + "\n")
    for line in lines:
        print(_one_line(line), file=sys.stderr)
    return 0


def _one_line(line: dict[str, Any]) -> str:
    head = f"[{line['tag']}] {line['model']} {line['kind']}:"
    if line["kind"] == "allreduce":
        parts = [f"{s['bytes']}B {s['median_sec'] * 1e3:.2f}ms" for s in line["sizes"]]
        return head + " " + ", ".join(parts)
    if line["kind"] == "copy":
        return f"{head} gradient copy in+out {line['median_sec'] * 1e3:.1f}ms"
    m = line["median"]
    return (f"{head} iter {m['iter_sec']:.4f}s (fwd {m['forward_sec']:.4f}, bwd "
            f"{m['backward_sec']:.4f}, opt {m['optimizer_sec']:.4f}; thread cpu "
            f"{m['thread_cpu_sec']:.4f}); cpu share {line['cpu_share']:.2f}; load "
            f"{line.get('load_before', ['?'])[0]}")


# ---- worker -------------------------------------------------------------------------------


def worker(args: argparse.Namespace) -> int:
    import torch
    import torch.distributed as dist
    from dtsim_profile.models import ZooOptions, load_model
    from dtsim_profile.profile import make_optimizer

    torch.set_num_threads(1)
    rank = args.rank
    dist.init_process_group("gloo", rank=rank, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=args.timeout))
    want_plain = args.mode in ("concurrent", "mixed")
    want_ddp = args.mode in ("ddp", "mixed")
    want_ar = args.mode in ("allreduce", "mixed")
    options = ZooOptions(input_size=args.input_size)

    def make(wrap: bool) -> dict[str, Any]:
        torch.manual_seed(args.seed)  # identical weights on both ranks (DDP broadcasts anyway)
        bundle = load_model(MODELS[args.model], options)
        model = bundle.model
        model.train()
        if wrap:
            model = torch.nn.parallel.DistributedDataParallel(model)
        params = [p for p in model.parameters() if p.requires_grad]
        optimizer, _ = make_optimizer(bundle.optimizer, params)
        torch.manual_seed(args.seed + 1 + rank)  # each rank its own (random) batch
        inputs, target = bundle.make_batch(args.batch, torch.device("cpu"))
        return {"model": model, "loss_fn": bundle.loss_fn, "optimizer": optimizer,
                "inputs": inputs if isinstance(inputs, tuple) else (inputs,),
                "target": target, "grad_bytes": sum(p.numel() * p.element_size()
                                                    for p in params)}

    def step(job: dict[str, Any]) -> dict[str, float]:
        job["optimizer"].zero_grad(set_to_none=True)
        cpu0 = time.thread_time()
        t0 = time.perf_counter()
        loss = job["loss_fn"](job["model"](*job["inputs"]), job["target"])
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        job["optimizer"].step()
        t3 = time.perf_counter()
        cpu1 = time.thread_time()
        return {"forward_sec": t1 - t0, "backward_sec": t2 - t1, "optimizer_sec": t3 - t2,
                "iter_sec": t3 - t0, "thread_cpu_sec": cpu1 - cpu0}

    plain = make(False) if want_plain else None
    ddp = make(True) if want_ddp else None
    buckets: list[int] = []
    if ddp is not None:
        # DDP all-reduces one bucket of all gradients in iteration 1, rebuilds its buckets
        # from the observed gradient-ready order at the start of iteration 2 and logs them
        # (rebuilt_bucket_sizes) from iteration 3 on.
        for _ in range(3):
            dist.barrier()
            step(ddp)
        logged = ddp["model"]._get_ddp_logging_data()
        text = str(logged.get("rebuilt_bucket_sizes") or logged.get("bucket_sizes") or "")
        buckets = [int(x) for x in text.split(",") if x.strip()]
    sizes: list[int] = []
    if args.mode == "allreduce":
        sizes = parse_sizes(args.sizes)
    elif args.mode == "mixed":
        small = parse_sizes(args.sizes) if args.sizes else list(DEFAULT_SMALL_SIZES)
        grad_bytes = ddp["grad_bytes"]
        sizes = sorted(set(small) | set(buckets) | {grad_bytes})
    tensors = {n: torch.ones(n // 4, dtype=torch.float32) for n in sizes}
    copy_pairs: list[tuple[Any, Any]] = []
    if args.mode == "mixed":  # DDP's reducer copies, on gradients shaped like the model's
        grads = [p.grad for p in ddp["model"].parameters() if p.grad is not None]
        flat = torch.empty(sum(g.numel() for g in grads), dtype=torch.float32)
        views, offset = [], 0
        for g in grads:
            views.append(flat[offset:offset + g.numel()].view_as(g))
            offset += g.numel()
        copy_pairs = list(zip(grads, views))

    def copy_in_out(pairs: list[tuple[Any, Any]]) -> float:
        """What DDP's reducer does to every gradient besides all-reducing it (torch 1.13,
        gradient_as_bucket_view=False): copy into its bucket divided by the world size
        (mark_variable_ready_dense: mul_out), and after the all-reduce copy back
        (finalize_bucket_dense: copy_bucket_to_grad)."""
        t0 = time.perf_counter()
        for grad, view in pairs:
            torch.mul(grad, 1.0 / WORLD, out=view)
        for grad, view in pairs:
            grad.copy_(view)
        return time.perf_counter() - t0

    cycles: list[dict[str, Any]] = []
    wall0 = cpu0 = 0.0
    for cycle in range(args.warmup + args.iters):
        if cycle == args.warmup:
            wall0, cpu0 = time.perf_counter(), time.process_time()
        record: dict[str, Any] = {}
        kinds = [("concurrent", plain), ("ddp", ddp)]
        if cycle % 2:  # A-B, B-A, ...: a drift of the outside load hits both kinds alike
            kinds.reverse()
        for kind, job in kinds:
            if job is not None:
                dist.barrier()
                record[kind] = step(job)
        if want_ar:
            ar, ar_cpu = {}, {}
            for n in sizes:
                dist.barrier()
                c0 = time.process_time()
                t0 = time.perf_counter()
                dist.all_reduce(tensors[n])
                ar[str(n)] = time.perf_counter() - t0
                ar_cpu[str(n)] = time.process_time() - c0
            record["allreduce"] = ar
            record["allreduce_cpu"] = ar_cpu
        if args.mode == "mixed":
            dist.barrier()
            record["copy"] = copy_in_out(copy_pairs)
        cycles.append(record)
    # process CPU (all threads: compute and gloo's) over the timed cycles / wall
    usage = {"wall_sec": time.perf_counter() - wall0, "process_cpu_sec": time.process_time() - cpu0}
    gathered: list[Any] = [None] * WORLD
    dist.all_gather_object(gathered, {"cycles": cycles[args.warmup:], "usage": usage})
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        Path(args.result).write_text(json.dumps(summarize(args, gathered, buckets, sizes)))
    return 0


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def summarize(args: argparse.Namespace, gathered: list[dict[str, Any]], buckets: list[int],
              sizes: list[int]) -> list[dict[str, Any]]:
    import torch

    ranks = [g["cycles"] for g in gathered]
    cpu_share = (sum(g["usage"]["process_cpu_sec"] for g in gathered)
                 / (WORLD * max(g["usage"]["wall_sec"] for g in gathered)))
    common = {
        "tag": args.tag, "model": args.model, "batch": args.batch,
        "input_size": args.input_size if args.model == "resnet18" else None,
        "mode": args.mode, "warmup": args.warmup, "iters": args.iters,
        "ddp_bucket_bytes": buckets,
        "cpu_share": round(cpu_share, 4),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": f"{platform.node()} ({os.cpu_count()} CPUs)",
        "framework": f"torch {torch.__version__}",
    }
    lines = []
    cycles = range(len(ranks[0]))
    for kind in ("concurrent", "ddp"):
        if kind not in ranks[0][0]:
            continue
        phases = list(ranks[0][0][kind])
        per_rank = {ph: [[c[kind][ph] for c in r] for r in ranks] for ph in phases}
        mean_of_ranks = {ph: [statistics.fmean(v) for v in zip(*per_rank[ph])] for ph in phases}
        # the slower rank of each cycle (larger iteration): a synchronous step waits for it
        slow = [max(range(WORLD), key=lambda r: per_rank["iter_sec"][r][i]) for i in cycles]
        straggler = {ph: [per_rank[ph][slow[i]][i] for i in cycles] for ph in phases}
        iter_q = _quartiles(straggler["iter_sec"])
        lines.append(dict(common, kind=kind,
                          median={ph: _median(v) for ph, v in straggler.items()},
                          iter_p25_sec=iter_q[0], iter_p75_sec=iter_q[1],
                          median_mean_of_ranks={ph: _median(v)
                                                for ph, v in mean_of_ranks.items()},
                          median_per_rank={ph: [_median(r) for r in per_rank[ph]]
                                           for ph in phases},
                          per_rank_per_cycle=per_rank))
    if "allreduce" in ranks[0][0]:
        rows = []
        for n in sizes:
            values = [min(r[i]["allreduce"][str(n)] for r in ranks)
                      for i in range(len(ranks[0]))]
            q = _quartiles(values)
            cpu = [statistics.fmean(r[i]["allreduce_cpu"][str(n)] for r in ranks)
                   for i in range(len(ranks[0]))]
            rows.append({"bytes": n, "median_sec": _median(values), "p25_sec": q[0],
                         "p75_sec": q[1], "median_process_cpu_sec": _median(cpu),
                         "per_cycle_min_of_ranks_sec": values})
        lines.append(dict(common, kind="allreduce", sizes=rows))
    if "copy" in ranks[0][0]:
        values = [max(r[i]["copy"] for r in ranks) for i in cycles]
        q = _quartiles(values)
        lines.append(dict(common, kind="copy", median_sec=_median(values), p25_sec=q[0],
                          p75_sec=q[1], per_rank_per_cycle=[[c["copy"] for c in r]
                                                            for r in ranks]))
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.mode == "allreduce" and not args.sizes:
        parser.error("--mode allreduce needs --sizes")
    try:
        if args.sizes:
            parse_sizes(args.sizes)
    except ValueError as error:
        parser.error(str(error))
    if args.rank is None:
        return launch(args, argv)
    return worker(args)


if __name__ == "__main__":
    sys.exit(main())
