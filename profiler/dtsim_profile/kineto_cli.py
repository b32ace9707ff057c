"""``dtsim-profile import-kineto TRACE... -o T.json [--graph G.json]``: PyTorch profiler traces
in, a dtsim workload trace (workloads/FORMAT.md) and an execution graph (sim/graph/GRAPH.md)
out. No torch is needed. Exit codes: 0 success, 2 bad input (located, on stderr), 1 internal
error. The rules: workloads/KINETO.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from typing import Any, Sequence

from . import TOOL_NAME
from .kineto_events import KinetoError, echo, read_kineto
from .kineto_import import GRADIENT_REDUCTIONS, NO_MODULE, RankImport, attribute, iqr, median
from .trace import Measurement, Trace, TraceCheckError, TraceLayer, write_trace

PROG = "dtsim-profile import-kineto"
MAX_TIME_SEC = 1e9  # workloads/FORMAT.md: every time in a trace


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Read PyTorch profiler (Kineto) Chrome traces, one per rank, and write a "
                    "dtsim workload trace of one rank and, with --graph, an execution graph "
                    "of every rank with its collectives (workloads/KINETO.md).")
    parser.add_argument("traces", nargs="+", help="trace files (.json or .json.gz), one per "
                        "rank; ranks from distributedInfo.rank, else the order given")
    parser.add_argument("--batch", type=int, required=True,
                        help="samples per device per step (the trace does not say)")
    parser.add_argument("--model", help="model name written (default: the first file's name)")
    parser.add_argument("--precision", default="", help="precision written, e.g. bf16")
    parser.add_argument("--rank", type=int, default=0, help="the rank whose trace -o writes")
    parser.add_argument("-o", "--output", required=True, help="workload trace to write")
    parser.add_argument("--graph", help="execution graph of every rank to write")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary on stderr")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except KinetoError as error:
        for line in str(error).splitlines():
            print(f"{PROG}: error: {line}", file=sys.stderr)
        return 2
    except TraceCheckError as error:  # our own bug: the trace would not be valid
        print(f"{PROG}: internal error, invalid trace not written:\n{error}", file=sys.stderr)
        return 1


def _check_output(flag: str, path: str, inputs: list[str]) -> None:
    if not path or os.path.isdir(path):
        raise KinetoError(f"{flag} {path!r}: a file name is needed, not a directory")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise KinetoError(f"{flag} {path}: no such directory {folder}")
    for name in inputs:
        if os.path.exists(path) and os.path.samefile(path, name):
            raise KinetoError(f"{flag} {path}: is an input; inputs are never overwritten")


def _ranked(imports: list[RankImport]) -> list[RankImport]:
    """The imports in rank order, checked to be ranks 0 .. N-1 of one job."""
    count = len(imports)
    ranks = [i.rank if i.rank is not None else position for position, i in enumerate(imports)]
    for imported, rank in zip(imports, ranks):
        if imported.world_size is not None and imported.world_size != count and count > 1:
            raise KinetoError(f"{imported.path}: /distributedInfo/world_size: "
                              f"{imported.world_size}, but {count} trace files were given")
        if rank >= count:
            raise KinetoError(f"{imported.path}: /distributedInfo/rank: {rank}, but only "
                              f"{count} trace files were given (one per rank)")
    if sorted(ranks) != list(range(count)):
        raise KinetoError(f"ranks {sorted(ranks)}: two files are the same rank")
    for imported, rank in zip(imports, ranks):
        imported.rank = rank
    return sorted(imports, key=lambda i: i.rank)


def _spread(imported: RankImport, table: str, layer: str) -> tuple[float, float]:
    values = [getattr(step, table).get(layer, 0.0) for step in imported.steps]
    return median(values), iqr(values)


def _grad_bytes(imported: RankImport) -> dict[str, int]:
    first = imported.steps[0].grad_bytes
    for number, step in enumerate(imported.steps[1:], start=1):
        if step.grad_bytes != first:
            raise KinetoError(f"{imported.path}: step {number} accumulates other gradients than "
                              "step 0 (AccumulateGrad sizes differ): import one kind of step")
    return first


def _measurement(imported: RankImport) -> Measurement | None:
    if imported.base_time_ns is None:
        return None  # the trace does not say when it was measured
    day = datetime.datetime.fromtimestamp(imported.base_time_ns / 1e9, datetime.timezone.utc)
    return Measurement(
        tool=f"{TOOL_NAME} import-kineto", framework="PyTorch profiler (Kineto trace)",
        clock="cuda_events" if imported.timing == "gpu" else "wall", warmup_iterations=0,
        timed_iterations=len(imported.steps), date=day.strftime("%Y-%m-%d"),
        host=imported.device_name or "CPU")


def workload_trace(imported: RankImport, model: str, batch: int, precision: str) -> Trace:
    grads = _grad_bytes(imported)
    layers = []
    for name in imported.layers:
        forward, forward_iqr = _spread(imported, "forward_sec", name)
        backward, backward_iqr = _spread(imported, "backward_sec", name)
        layers.append(TraceLayer(name, forward, backward, grads.get(name, 0), forward_iqr,
                                 backward_iqr))
    timing = ("the union of the GPU intervals of the kernels, copies and fills its ops launched"
              if imported.timing == "gpu" else "the durations of its outermost CPU ops")
    source = (f"imported from the PyTorch profiler trace {os.path.basename(imported.path)} "
              f"(rank {imported.rank}) by {TOOL_NAME} import-kineto: median over "
              f"{len(imported.steps)} step(s) of each layer's time, {timing}; layers are "
              "nn.Module ranges, backward ops matched to them by sequence number, gradient "
              "bytes from AccumulateGrad shapes (workloads/KINETO.md)")
    optimizer = median([step.optimizer_sec for step in imported.steps])
    longest = max([optimizer] + [max(l.forward_sec, l.backward_sec) for l in layers])
    if longest > MAX_TIME_SEC:
        raise KinetoError(f"{imported.path}: a layer or the optimizer takes {longest:g} s in a "
                          f"step, over the {MAX_TIME_SEC:g} s a workload trace holds")
    return Trace(model, imported.device_name or "CPU", precision, batch, source, optimizer,
                 layers, _measurement(imported))


# ---- the execution graph ---------------------------------------------------------------------


def _communicators(imports: list[RankImport]) -> dict[tuple[int, ...], str]:
    world = tuple(range(len(imports)))
    groups: dict[tuple[int, ...], str] = {}
    for imported in imports:
        for collective in imported.steps[0].collectives:
            ranks = collective.group or world
            if imported.rank not in ranks:
                raise KinetoError(f"{imported.path}: /traceEvents/{collective.event}: rank "
                                  f"{imported.rank} issues a collective of group {list(ranks)}, "
                                  "which it is not in")
            if any(r >= len(imports) for r in ranks):
                raise KinetoError(f"{imported.path}: /traceEvents/{collective.event}: group "
                                  f"{echo(list(ranks))} names ranks beyond the "
                                  f"{len(imports)} traces given")
            if ranks not in groups:
                base = "world" if ranks == world else f"pg{collective.group_name or len(groups)}"
                name, k = base, 2
                while name in groups.values():  # two groups of one name: keep both apart
                    name, k = f"{base}.{k}", k + 1
                groups[ranks] = name
    return groups


def _check_matching(imports: list[RankImport], groups: dict[tuple[int, ...], str]) -> None:
    """The k-th collective of every member of a group is the same one (GRAPH.md)."""
    world = tuple(range(len(imports)))
    sequences: dict[tuple[int, ...], dict[int, list[Any]]] = {}
    for imported in imports:
        for collective in imported.steps[0].collectives:
            ranks = collective.group or world
            sequences.setdefault(ranks, {}).setdefault(imported.rank, []).append(collective)
    for ranks, by_rank in sequences.items():
        lists = [by_rank.get(rank, []) for rank in ranks]
        for rank, items in zip(ranks, lists):
            if len(items) != len(lists[0]):
                raise KinetoError(f"{imports[rank].path}: rank {rank} issues {len(items)} "
                                  f"collectives on {groups[ranks]}, rank {ranks[0]} "
                                  f"{len(lists[0])} in step 0")
            for k, (mine, theirs) in enumerate(zip(items, lists[0])):
                if (mine.op, mine.bytes) != (theirs.op, theirs.bytes):
                    raise KinetoError(
                        f"{imports[rank].path}: /traceEvents/{mine.event}: collective {k} on "
                        f"{groups[ranks]} is {mine.op} of {mine.bytes} bytes; rank {ranks[0]}'s "
                        f"is {theirs.op} of {theirs.bytes} bytes")


def _program(imported: RankImport, groups: dict[tuple[int, ...], str],
             world: tuple[int, ...]) -> dict[str, Any]:
    """One rank's nodes, in the order the trace issued them (KINETO.md, "The graph")."""
    step = imported.steps[0]
    items: list[tuple[float, int, Any]] = []
    for (phase, layer), first in step.first_us.items():
        if phase == "optimizer":
            continue
        table = "forward_sec" if phase == "forward" else "backward_sec"
        duration, _ = _spread(imported, table, layer)
        items.append((first, 0, {"kind": "compute", "phase": phase, "layer": layer,
                                 "duration_sec": float(f"{duration:.9g}")}))
    for collective in step.collectives:
        items.append((collective.issue_us, 1, collective))
    items.sort(key=lambda item: (item[0], item[1]))
    nodes: list[dict[str, Any]] = []
    last_compute: int | None = None
    blocking: list[int] = []  # collectives the next compute node waits for
    reductions: list[int] = []  # gradient reductions the optimizer waits for
    for _, _, item in items:
        node_id = len(nodes)
        if isinstance(item, dict):
            node = dict(item, id=node_id)
            if blocking:
                node["deps"], blocking = blocking, []
            last_compute = node_id
        else:
            node = {"id": node_id, "kind": "collective", "phase": item.phase, "op": item.op,
                    "comm": groups[item.group or world], "bytes": item.bytes}
            if last_compute is not None:
                node["deps"] = [last_compute]
            gradient = item.op in GRADIENT_REDUCTIONS and item.phase != "forward"
            (reductions if gradient else blocking).append(node_id)
        nodes.append(node)
    optimizer = {"id": len(nodes), "kind": "compute", "phase": "optimizer",
                 "duration_sec": float(f"{median([s.optimizer_sec for s in imported.steps]):.9g}")}
    if reductions or blocking:
        optimizer["deps"] = reductions + blocking
    nodes.append(optimizer)
    used = sorted({n["comm"] for n in nodes if "comm" in n})
    return {"name": f"rank{imported.rank}", "comms": used, "nodes": nodes}


def execution_graph(imports: list[RankImport]) -> dict[str, Any]:
    """Every rank's program, its communicators and bindings (sim/graph/GRAPH.md)."""
    world = tuple(range(len(imports)))
    groups = _communicators(imports)
    _check_matching(imports, groups)
    programs = [_program(imported, groups, world) for imported in imports]
    layers: list[str] = []
    for imported in imports:
        layers += [name for name in imported.layers if name not in layers]
    communicators = [{"name": name, "ranks": list(ranks)} for ranks, name in groups.items()]
    ranks = [{"rank": rank, "program": program["name"],
              "comms": {comm: comm for comm in program["comms"]}}
             for rank, program in enumerate(programs)]
    return {"format": "dtsim-execution-graph", "version": 1, "layers": layers, "labels": [],
            "communicators": communicators, "programs": programs, "ranks": ranks}


def _run(args: argparse.Namespace) -> int:
    if args.batch < 1:
        raise KinetoError(f"--batch {args.batch}: must be >= 1")
    _check_output("-o", args.output, args.traces)
    if args.graph:
        _check_output("--graph", args.graph, args.traces)
    imports = _ranked([attribute(read_kineto(path)) for path in args.traces])
    if not 0 <= args.rank < len(imports):
        raise KinetoError(f"--rank {args.rank}: the traces are ranks 0 to {len(imports) - 1}")
    chosen = imports[args.rank]
    model = args.model or os.path.basename(args.traces[0]).split(".")[0]
    trace = workload_trace(chosen, model, args.batch, args.precision)
    graph = execution_graph(imports) if args.graph else None
    write_trace(trace, args.output)
    if graph is not None:
        with open(args.graph, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(graph, indent=1) + "\n")
    if not args.quiet:
        for imported in imports:
            _summarize(imported)
    print(f"{TOOL_NAME}: wrote {args.output}: {len(trace.layers)} layers of rank {chosen.rank}, "
          f"forward {sum(l.forward_sec for l in trace.layers):.6g} s, backward "
          f"{sum(l.backward_sec for l in trace.layers):.6g} s, optimizer "
          f"{trace.optimizer_sec:.6g} s, param_bytes {sum(l.param_bytes for l in trace.layers)}"
          + (f"; {args.graph}: {len(imports)} ranks" if graph is not None else ""))
    return 0


def _summarize(imported: RankImport) -> None:
    step = imported.steps[0]
    print(f"{PROG}: {imported.path}: rank {imported.rank}, {len(imported.steps)} step(s), "
          f"{len(imported.layers)} layers, {len(step.collectives)} collectives in step 0, "
          f"timing {imported.timing}", file=sys.stderr)
    for what, count in sorted(imported.notes.items()):
        print(f"{PROG}: {imported.path}: left out: {count} {what}", file=sys.stderr)
    if NO_MODULE in imported.layers:
        print(f"{PROG}: {imported.path}: work outside every nn.Module range is layer "
              f"{NO_MODULE!r}", file=sys.stderr)
