"""Turns rows of a published-measurements CSV into dtsim runs, or into reasons to skip them.

One rule per column, the same for every row (experiments/validation/README.md lists them); no
value here depends on a particular row's measurement.
"""
import math
import re
from dataclasses import dataclass, field

# NCCL's fixed cost per collective: the base latency of its Simple protocol (NVIDIA/nccl
# src/graph/tuning.cc; sim/collectives/NCCL_MODEL.md section 1.1). Global, never per row.
COLLECTIVE_LATENCY = "8.4us"
# Horovod's default tensor-fusion buffer (HOROVOD_FUSION_THRESHOLD = 64 MiB): its "bucket".
HOROVOD_FUSION_MB = 64
# NCCL's tuner picks among its own algorithms (ring, double binary tree); MPI libraries have more.
NCCL_ALGORITHMS = "auto:ring,double-tree"
# PyTorch DDP's default bucket_cap_mb.
DDP_BUCKET_MB = 25

UNIT_SEC = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


class Skip(Exception):
    """A row dtsim cannot model, with the reason."""


@dataclass
class Case:
    case_id: str
    source: str  # the case_id prefix, e.g. DBAR
    kind: str  # "allreduce", "training" or "param_count"
    metric: str
    measured: float  # in the unit `compare_unit`
    compare_unit: str
    grade: str
    dtsim_args: list = field(default_factory=list)  # for `dtsim collective` / `simulate`
    generate_args: list = field(default_factory=list)  # `dtsim workload generate`
    # Training: converts the report's iteration time to the row's metric.
    samples_per_iteration: float = 0.0  # all GPUs, one optimizer step
    single_gpu_iter_sec: float = 0.0
    bytes: int = 0
    ranks: int = 0
    model: str = ""
    line: int = 0  # in the CSV
    key: str = ""  # names the case's temporary files (not the case_id: any text may be one)


# GPUs per node of each preset (platforms/PRESETS.md).
PRESET_GPUS = {"hgx-h200": 8, "dgx-a100": 8, "dgx2h": 16, "dgx1-v100": 8, "pcie8-fdr": 8}


def _system(row):
    """(preset, generator device) from the row's GPU and intra-node link columns (words matched
    without regard to case)."""
    gpu = row["gpu"].lower()
    text = gpu + " " + row["intra_link"].lower()

    def says(*words):
        return any(w in text for w in words)

    nvswitch_node = says("nvswitch", "sxm", "dgx", "hgx")
    if "h200" in gpu and nvswitch_node:
        return "hgx-h200", "h200"
    if "a100" in gpu and nvswitch_node:
        return "dgx-a100", "a100"
    if "v100" in gpu:
        if says("dgx-2", "dgx2", "nvswitch"):
            return "dgx2h", "v100"
        if says("nvlink", "dgx-1", "dgx1", "sxm"):
            return "dgx1-v100", "v100"
    # pcie8-fdr follows DeepBench's boxes: P100 and Maxwell Titan X behind PLX switches.
    if ("p100" in gpu or "titan x" in gpu) and says("plx", "pcie"):
        return "pcie8-fdr", None
    raise Skip(f"no preset for GPU '{row['gpu']}' with intra-node link '{row['intra_link']}' "
               "(presets: H200/A100 on NVSwitch, V100 on NVLink or NVSwitch, P100/Titan X "
               "behind PCIe switches)")


def _gpus(row, preset):
    """(total GPUs, nodes), checked against each other and against the preset's nodes."""
    n = _int(row, "total_gpus")
    nodes = _int(row, "nodes")
    if not row["gpus_per_node"].strip() and n % nodes == 0:
        per_node = n // nodes  # not stated: the GPUs spread evenly
    else:
        per_node = _int(row, "gpus_per_node")
    if n != nodes * per_node:
        raise Skip(f"total_gpus {n} is not nodes {nodes} x gpus_per_node {per_node}")
    if per_node > PRESET_GPUS[preset]:
        raise Skip(f"gpus_per_node {per_node}: the {preset} preset has "
                   f"{PRESET_GPUS[preset]} GPUs per node")
    if nodes > 1 and per_node < PRESET_GPUS[preset]:
        raise Skip(f"{per_node} of {PRESET_GPUS[preset]} GPUs per node on {nodes} nodes: dtsim "
                   "places ranks node by node, filling each node")
    return n, nodes


def _note(row, key):
    """The number after `key=` in the notes (a whole `key`, up to ;, ) or a space), or None.
    Raises Skip unless it is a finite number > 0."""
    m = re.search(rf"(?:^|[\s;,(]){key}=([^\s;)]*)", row["notes"])
    if not m:
        return None
    token = m.group(1).rstrip(",.")  # "msg_bytes=400000, 20 iters": a comma ends the number
    try:
        value = float(token)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value > 0):
        raise Skip(f"notes: {key}={token} is not a number > 0")
    return value


def _int(row, column, low=1):
    try:
        value = int(row[column])
    except ValueError:
        raise Skip(f"column {column} is '{row[column]}', not an integer")
    if value < low:
        raise Skip(f"column {column} is {value}, expected at least {low}")
    return value


def _positive(row, column):
    """The column as a finite number > 0."""
    try:
        value = float(row[column])
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value > 0):
        raise Skip(f"column {column} is '{row[column]}', not a number > 0")
    return value


def _algorithm(row):
    """The row's algorithm: the one it names, else what its library would pick among."""
    if row["allreduce_alg"].lower().startswith("ring"):
        return "ring"
    lib = row["comm_lib"].lower()
    if "nccl" in lib or "torch.distributed" in lib:
        # NCCL builds its trees over nodes with a chain of GPUs inside each node, so on one node
        # a tree is a chain with the ring's latency and half its bandwidth: NCCL runs the ring.
        # dtsim's double-tree spans ranks, so it is no stand-in there.
        return "ring" if _int(row, "nodes") == 1 else NCCL_ALGORITHMS
    return "auto"


def _platform_arg(preset, nodes, workdir):
    path = workdir / f"{preset}_{nodes}.json"
    path.write_text(f'{{"preset": "{preset}", "nodes": {nodes}}}\n')
    return str(path)


def allreduce_case(row, base, workdir):
    alg = row["allreduce_alg"].lower()
    # "NVLS ... from N MiB" (or NVLS alone): NCCL reduced inside the NVSwitch from that size on.
    nvls = re.search(r"nvls\S*(?: from (\d+)\s*mib)?", alg)
    msg = _note(row, "msg_bytes") or 0
    ran_nvls = bool(nvls) and msg >= int(nvls.group(1) or 0) * 1024 * 1024
    if ran_nvls and _int(row, "nodes") > 1:
        raise Skip("NCCL ran NVLS across nodes (NVLink SHARP with SHARP network switches), "
                   "which dtsim does not model")
    preset, _ = _system(row)
    msg_bytes = _note(row, "msg_bytes")
    if msg_bytes is None:
        raise Skip("notes give no msg_bytes")
    if msg_bytes != int(msg_bytes):
        raise Skip(f"notes: msg_bytes={msg_bytes!r} is not a whole number of bytes")
    n, nodes = _gpus(row, preset)
    if n < 2:
        raise Skip("an all-reduce on 1 GPU moves nothing")
    unit = row["unit"]
    value = _positive(row, "value")
    if row["metric"] == "allreduce_time":
        if unit not in UNIT_SEC:
            raise Skip(f"unknown time unit '{unit}'")
        measured_sec = value * UNIT_SEC[unit]
    elif row["metric"] == "allreduce_busbw":
        if unit != "GB/s":
            raise Skip(f"unknown bandwidth unit '{unit}'")
        # nccl-tests: busbw = (S/t) * 2(n-1)/n, so t = S * 2(n-1)/n / busbw.
        measured_sec = msg_bytes * 2 * (n - 1) / n / (value * 1e9)
    else:
        raise Skip(f"unknown all-reduce metric '{row['metric']}'")
    # NVLS: dtsim's nvls algorithm, whose 25 us latency replaces NCCL's base latency.
    algorithm = "nvls" if ran_nvls else _algorithm(row)
    latency = "0us" if ran_nvls else COLLECTIVE_LATENCY
    return Case(
        case_id=row["case_id"], source=base, kind="allreduce", metric="allreduce_time",
        measured=measured_sec, compare_unit="s", grade=row["grade"], bytes=int(msg_bytes),
        ranks=n,
        dtsim_args=["collective", "--platform", _platform_arg(preset, nodes, workdir),
                    "--ranks", str(n), "--op", "all-reduce", "--bytes", str(int(msg_bytes)),
                    "--algorithm", algorithm, "--collective-latency", latency])


# Row model names -> the generator's; BERT pre-training rows carry their sequence length.
MODELS = {
    "resnet50": ("resnet50", None), "resnet50_v1.5": ("resnet50", None),
    "resnet101": ("resnet101", None), "resnext50_32x4d": ("resnext50_32x4d", None),
    "resnext101_32x8d": ("resnext101_32x8d", None),
    "bert_large_pretrain_seq128": ("bert_large", 128),
    "bert_large_pretrain_seq512": ("bert_large", 512),
}

PRECISIONS = {"fp32": "fp32", "tf32": "tf32", "amp fp16": "fp16", "fp16": "fp16",
              "amp": "fp16", "bf16": "bf16"}


def compute_args(row, model, precision):
    """`dtsim workload generate` flags that time a row's compute without a measurement: the
    op-class model, and the fusions its framework's recipe turns on. NVIDIA's MXNet ResNet-50
    runner (DeepLearningExamples MxNet/Classification/RN50v1.5/runner) passes --fuse-bn-relu 1
    --fuse-bn-add-relu 1 in float16 only."""
    args = ["--compute-model", "op-class"]
    mxnet = "mxnet" in row["source"].lower()
    if mxnet and precision == "fp16" and model.startswith("resnet"):
        args.append("--fuse-norm-relu")
    return args


def training_case(row, base, workdir):
    if row["model"] not in MODELS:
        raise Skip(f"model '{row['model']}' is not in the generator's zoo")
    model, seq = MODELS[row["model"]]
    preset, device = _system(row)
    precision = PRECISIONS.get(row["precision"].strip().lower())
    if precision is None:
        raise Skip(f"precision '{row['precision']}' not understood")
    if device == "v100" and precision in ("tf32", "bf16"):
        raise Skip(f"V100 has no {precision}")
    if device is None:
        raise Skip(f"the workload generator has no '{row['gpu']}'")
    batch = _int(row, "batch_per_gpu")
    n, nodes = _gpus(row, preset)
    m = re.search(r"accumulation (\d+) steps", row["notes"])
    steps = int(m.group(1)) if m else 1
    if steps < 1:
        raise Skip("notes: accumulation of 0 steps")
    metric, unit, value = row["metric"], row["unit"], _positive(row, "value")
    single = row["single_gpu_value"].strip()
    single_iter_sec = 0.0
    if metric in ("iter_time_p50", "iter_time_p75"):
        if unit != "s":
            raise Skip(f"iteration time in '{unit}'")
        if single:
            single_iter_sec = _positive(row, "single_gpu_value")
    elif metric == "throughput":
        if "total" not in unit:
            raise Skip(f"throughput unit '{unit}' is not a total over all GPUs")
        if single:
            single_iter_sec = batch / _positive(row, "single_gpu_value")  # per GPU
    else:
        raise Skip(f"metric '{metric}' is not predicted (time_to_train needs epochs and "
                   "convergence, not one iteration)")
    bucket_mb = _note(row, "bucket_cap_mb") or DDP_BUCKET_MB
    lib = row["comm_lib"].lower()
    if "horovod" in lib:
        bucket_mb = HOROVOD_FUSION_MB
    algorithm = _algorithm(row)
    generate = ["workload", "generate", "--model", model, "--batch", str(batch),
                "--device", device, "--precision", precision]
    if seq:
        generate += ["--seq-len", str(seq)]
    if single_iter_sec > 0:
        generate += ["--calibrate-iter-sec", repr(single_iter_sec)]
    else:
        generate += compute_args(row, model, precision)
    return Case(
        case_id=row["case_id"], source=base, kind="training", metric=metric, measured=value,
        compare_unit=unit, grade=row["grade"], ranks=n, generate_args=generate,
        samples_per_iteration=n * batch * steps, single_gpu_iter_sec=single_iter_sec,
        dtsim_args=["simulate", "--platform", _platform_arg(preset, nodes, workdir),
                    "--ranks", str(n), "--algorithm", algorithm, "--bucket-mb", str(bucket_mb),
                    "--accumulation-steps", str(steps),
                    "--collective-latency", COLLECTIVE_LATENCY])


PARAM_MODELS = {"resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
                "resnext101_32x8d", "wide_resnet50_2", "vgg16", "bert_large"}


def param_case(row, base, workdir):
    if row["model"] not in PARAM_MODELS:
        raise Skip(f"model '{row['model']}' is not in the generator's zoo")
    return Case(case_id=row["case_id"], source=base, kind="param_count", metric="param_count",
                measured=_positive(row, "value"), compare_unit="parameters", grade=row["grade"],
                model=row["model"],
                generate_args=["workload", "generate", "--model", row["model"], "--batch", "1",
                               "--device", "a100", "--precision", "fp32"])


def make_case(row, workdir):
    """A Case for `row`, or raises Skip."""
    base = row["case_id"].split("-")[0]
    if row["metric"] == "param_count":
        return param_case(row, base, workdir)
    if row["model"] == "allreduce":
        return allreduce_case(row, base, workdir)
    return training_case(row, base, workdir)
