"""One profiled training run, for the import-kineto tests and the GPU session.

    /usr/bin/python3 kineto_run.py MODEL RANK WORLD_SIZE PORT TRACE.json LAYERS.json [--native]
        [--device cuda]

Trains MODEL (a zoo model: mlp, tiny_cnn, tiny_bert, resnet50, ...) for 2 warm-up and 3
profiled steps, with DDP over gloo (nccl on cuda) on 127.0.0.1 when WORLD_SIZE > 1, and writes

* TRACE.json: the torch.profiler run as a Kineto trace: with --native, the one torch's Kineto
  writes (export_chrome_trace, with_stack=True for the module ranges, prof.step() for the
  steps); else written by dtsim_profile.kineto_export (for a torch without Kineto, this
  machine's);
* LAYERS.json: the same steps measured by the profiler's own hooks (timing.LayerRecorder,
  wall clock on the CPU, CUDA events on cuda), per leaf module, as {importer's layer name:
  [forward_sec, backward_sec, gradient bytes]} medians.

The two instruments time the same calls of the same steps, so the importer's per-layer times
can be checked against the hooks'.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402

from dtsim_profile import kineto_export  # noqa: E402
from dtsim_profile.clocks import HostClock, make_clock  # noqa: E402
from dtsim_profile.ddp import param_owners, trainable_params  # noqa: E402
from dtsim_profile.models import ZooOptions, load_model  # noqa: E402
from dtsim_profile.timing import KIND_UNIT, LayerRecorder  # noqa: E402

BATCH = {"mlp": 64, "tiny_cnn": 16, "tiny_bert": 8}
WARMUP, STEPS = 2, 3


def kineto_paths(root: nn.Module, wrapped: nn.Module) -> dict[str, str]:
    """Module path in `root` (timing's layer names) -> the importer's layer name."""
    names = kineto_export.module_names(wrapped)
    prefix = [] if wrapped is root else [names[id(wrapped)][len("nn.Module: "):]]
    paths = {}
    for path, module in root.named_modules():
        chain, node = list(prefix), root
        chain.append(names[id(root)][len("nn.Module: "):])
        for part in path.split(".") if path else []:
            node = getattr(node, part)
            if not isinstance(node, (nn.ModuleList, nn.ModuleDict)):  # never called: no range
                chain.append(names[id(node)][len("nn.Module: "):])
        paths[path] = ".".join(chain)
    return paths


def main() -> None:
    model_name, rank, world, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    trace_path, layers_path = sys.argv[5], sys.argv[6]
    native = "--native" in sys.argv[7:]
    device = torch.device("cuda" if "cuda" in sys.argv[7:] else "cpu")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    bundle = load_model(model_name, ZooOptions(None, None))
    model = bundle.model.to(device)
    net: nn.Module = model
    if world > 1:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port, GLOO_SOCKET_IFNAME="lo")
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo", rank=rank,
                                world_size=world)
        net = nn.parallel.DistributedDataParallel(model)
    inputs, target = bundle.make_batch(BATCH.get(model_name, 32), device)
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    params = [param for _, param in trainable_params(model)]
    clock = make_clock("cuda_events") if device.type == "cuda" else HostClock("wall")
    recorder = LayerRecorder(model, clock, params, param_owners(model, params))
    records = []

    def step(record: bool) -> None:
        if record:
            with recorder.attached():
                recorder.begin_forward()
                loss = bundle.loss_fn(net(*inputs), target)
                recorder.end_forward(loss)
                loss.backward()
            clock.sync()
            records.append(recorder.finish())
        else:
            bundle.loss_fn(net(*inputs), target).backward()
        optimizer.step()
        optimizer.zero_grad()

    for _ in range(WARMUP):
        step(False)
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    if native:  # torch's own Kineto: module ranges from its Python tracer
        with torch.profiler.profile(activities=activities, record_shapes=True,
                                    with_stack=True) as prof:
            for _ in range(STEPS):
                step(True)
                prof.step()
        prof.export_chrome_trace(trace_path)
    else:
        with kineto_export.module_ranges(net), torch.profiler.profile(
                activities=activities, record_shapes=True) as prof:
            for number in range(STEPS):
                with kineto_export.step_range(number):
                    step(True)
        kineto_export.write_trace(prof, trace_path, net, rank, world)
    paths = kineto_paths(model, net)
    layers = {}
    for index, segment in enumerate(records[0].segments):
        if segment.kind != KIND_UNIT or "#" in segment.name:
            continue
        forward = statistics.median(r.forward_sec[index] for r in records)
        backward = statistics.median(r.backward_sec[index] for r in records)
        grads = sum(4 * p.numel() for i, p in enumerate(params)
                    if records[0].param_segment.get(i) == index)
        layers[paths[segment.name]] = [forward, backward, grads]
    Path(layers_path).write_text(json.dumps(layers, indent=1) + "\n", encoding="utf-8")
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
