"""Turns rows of a published-measurements CSV into dtsim runs, or into reasons to skip them.

One rule per column, the same for every row (experiments/validation/README.md lists them); no
value here depends on a particular row's measurement.
"""
import math
import re
from dataclasses import dataclass, field

import phrasing
from phrasing import PRESET_GPUS, Skip

# NCCL's fixed cost per collective: the base latency of its Simple protocol (NVIDIA/nccl
# src/graph/tuning.cc; sim/collectives/NCCL_MODEL.md section 1.1). Global, never per row.
COLLECTIVE_LATENCY = "8.4us"
# Horovod's default tensor-fusion buffer (HOROVOD_FUSION_THRESHOLD = 64 MiB): its "bucket".
HOROVOD_FUSION_MB = 64
# NCCL's tuner picks among its own algorithms (ring, double binary tree); MPI libraries have more.
NCCL_ALGORITHMS = "auto:ring,double-tree"
# PyTorch DDP's default bucket_cap_mb.
DDP_BUCKET_MB = 25


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
    nodes: int = 1
    model: str = ""
    line: int = 0  # in the CSV
    key: str = ""  # names the case's temporary files (not the case_id: any text may be one)
    read_as: list = field(default_factory=list)  # how the row's phrases were interpreted


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


# `key=VALUE` in the notes: a number (thousands separated by commas or not), a power of two, or
# a size with its unit, and what follows if it makes a range ("msg_bytes=1M-1G"), so that a
# range is refused rather than cut short.
_VALUE = (r"(?:2\s*\^\s*\d+|\d{1,3}(?:,\d{3})+(?![\d.])|[0-9]*\.?[0-9]+(?:e[+-]?\d+)?)"
          r"(?:\s*(?:[kmgt]i?b|[kmgt]|bytes?|b)\b)?")
_NOTE_VALUE = rf"({_VALUE}(?:\s*(?:-|–|\.\.|to)\s*{_VALUE})?)"


def _note_token(row, key):
    """The value after `key=` (or `key:`) in the notes, as written, or None."""
    m = re.search(rf"(?:^|[\s;,(]){key}\s*[=:]\s*{_NOTE_VALUE}", row["notes"], re.IGNORECASE)
    if m:
        return m.group(1).strip().replace(",", "")  # "24,000,000": thousands separators
    m = re.search(rf"(?:^|[\s;,(]){key}\s*[=:]\s*([^\s;)]*)", row["notes"], re.IGNORECASE)
    if m:
        raise Skip(f"notes: {key}={m.group(1).rstrip(',.')} is not a number > 0")
    return None


def _note(row, key):
    """The number after `key=` in the notes, or None. Raises Skip unless it is a finite
    number > 0."""
    token = _note_token(row, key)
    if token is None:
        return None
    try:
        value = float(token)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value > 0):
        raise Skip(f"notes: {key}={token} is not a number > 0")
    return value


def _int(row, column, low=1):
    return phrasing.count(row[column], f"column {column}", low)


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


def _platform_arg(preset, nodes, workdir, sharp=False, nic_gbps=None):
    """A platform file of `nodes` nodes of `preset`, its switches reducing with `sharp`, its
    nodes' NICs `nic_gbps` in all where a row says they differ from the datasheet's."""
    extra = ', "sharp": true' if sharp else ""
    if nic_gbps is not None:
        extra += f', "nic_bandwidth": "{nic_gbps:g}Gbps"'
    path = workdir / f"{preset}_{nodes}{'_sharp' if sharp else ''}_{nic_gbps or 0:g}.json"
    path.write_text(f'{{"preset": "{preset}", "nodes": {nodes}{extra}}}\n')
    return str(path)


def _nics(row, preset, nodes, read_as):
    """The row's NICs per node in Gb/s where it states ones other than the preset's, else None
    (one node: the NICs carry nothing)."""
    if nodes == 1 or preset not in phrasing.PRESET_NIC_GBPS:
        return None
    stated = phrasing.node_nic_gbps(row.get("inter_network", ""), phrasing.PRESET_GPUS[preset])
    if stated is None or stated == phrasing.PRESET_NIC_GBPS[preset]:
        return None
    read_as.append(f"NICs {stated:g} Gb/s per node as the row states ({preset}'s datasheet: "
                   f"{phrasing.PRESET_NIC_GBPS[preset]} Gb/s)")
    return stated


def _system(row):
    """(preset, generator device or None, GPU family) of a row."""
    family, device = phrasing.gpu(row["gpu"])
    preset, _ = phrasing.system(row, family)
    return preset, device, family


def _measured_allreduce_sec(row, msg_bytes, n):
    """The row's all-reduce time in seconds, from a time or a bus or algorithm bandwidth."""
    metric, unit, value = row["metric"], row["unit"], _positive(row, "value")
    if metric == "allreduce_time":
        return value * phrasing.seconds_per(unit)
    if metric in ("allreduce_busbw", "allreduce_algbw"):
        # nccl-tests: algbw = S/t, busbw = algbw * 2(n-1)/n.
        bytes_per_sec = value * phrasing.bandwidth_bytes_per_sec(unit)
        factor = 2 * (n - 1) / n if metric == "allreduce_busbw" else 1
        return msg_bytes * factor / bytes_per_sec
    raise Skip(f"unknown all-reduce metric '{metric}'")


def _msg_bytes(row):
    token = _note_token(row, "msg_bytes")
    return None if token is None else phrasing.size_bytes(token, "notes: msg_bytes")


def allreduce_case(row, base, workdir):
    alg = row["allreduce_alg"].lower()
    # "NVLS ... from N MiB" (or NVLS alone): NCCL reduced inside the NVSwitch from that size on.
    nvls = re.search(r"nvls\S*(?: from (\d+)\s*mib)?", alg)
    msg_bytes = _msg_bytes(row)
    ran_nvls = bool(nvls) and (msg_bytes or 0) >= int(nvls.group(1) or 0) * 1024 * 1024
    # Across nodes NCCL's NVLS needs SHARP switches (CollNet); NVLS_TREE runs a tree instead.
    sharp = ran_nvls and _int(row, "nodes") > 1
    text = " ".join(row.get(c, "") for c in ("allreduce_alg", "inter_network", "notes")).lower()
    nvls_tree = sharp and re.search(r"nvls[\s_-]*tree", text) is not None
    sharp = sharp and not nvls_tree
    if sharp and not re.search(r"sharp|collnet", text.replace("nvlink sharp", "")):
        raise Skip("NCCL ran NVLS across nodes, and the row does not say the network switches "
                   "reduced (SHARP, CollNet), which that needs")
    preset, _, _ = _system(row)
    if msg_bytes is None:
        raise Skip("notes give no msg_bytes")
    n, nodes = _gpus(row, preset)
    if n < 2:
        raise Skip("an all-reduce on 1 GPU moves nothing")
    measured_sec = _measured_allreduce_sec(row, msg_bytes, n)
    read_as = []
    nic_gbps = _nics(row, preset, nodes, read_as)
    # NVLS: dtsim's nvls algorithm, whose 25 us latency replaces NCCL's base latency (as
    # nvls-tree's, NCCL's NVLS_TREE).
    algorithm = ("nvls-tree" if nvls_tree else "nvls") if ran_nvls else _algorithm(row)
    latency = "0us" if ran_nvls else COLLECTIVE_LATENCY
    return Case(
        case_id=row["case_id"], source=base, kind="allreduce", metric="allreduce_time",
        measured=measured_sec, compare_unit="s", grade=row["grade"], bytes=msg_bytes,
        ranks=n, nodes=nodes, read_as=read_as,
        dtsim_args=["collective", "--platform",
                    _platform_arg(preset, nodes, workdir, sharp, nic_gbps),
                    "--ranks", str(n), "--op", "all-reduce", "--bytes", str(msg_bytes),
                    "--algorithm", algorithm, "--collective-latency", latency])


def conv_layout(row, precision):
    """The activation layout the row's recipe runs its convolutions in (workloads/COMPUTE.md,
    "Layout"): channels-last where the row says so, and in NVIDIA's DeepLearningExamples ConvNets
    with mixed precision (PyTorch's configs.yml sets memory_format nhwc for AMP only; the MXNet
    runner sets NHWC layouts for float16 only); otherwise NCHW, PyTorch's and MXNet's default
    (and TensorFlow's tf_cnn_benchmarks' data_format)."""
    text = " ".join(row.get(k) or "" for k in ("source", "notes", "comm_lib")).lower()
    if any(w in text for w in ("nhwc", "channels_last", "channels-last", "channels last")):
        return "nhwc"
    if "deeplearningexamples" in text and precision in ("fp16", "bf16"):
        return "nhwc"
    return "nchw"


def compute_args(row, model, precision, xla=False):
    """`dtsim workload generate` flags that time a row's compute without a measurement: the
    op-class model, and the fusions and layout its framework's recipe runs. NVIDIA's MXNet
    ResNet-50 runner (DeepLearningExamples MxNet/Classification/RN50v1.5/runner) passes
    --fuse-bn-relu 1 --fuse-bn-add-relu 1 in float16 only; XLA fuses elementwise work into its
    producers. A CNN in NCHW pays cuDNN's transposes around its tensor-core convolutions."""
    args = ["--compute-model", "op-class"]
    mxnet = "mxnet" in row["source"].lower()
    if xla or (mxnet and precision == "fp16" and model.startswith("resnet")):
        args.append("--fuse-norm-relu")
    # Only a CNN's command carries the layout (a transformer has no convolution it would change).
    if not model.startswith(("bert", "gpt")) and conv_layout(row, precision) == "nchw":
        args += ["--conv-layout", "nchw"]
    return args


def _accumulation_steps(notes):
    """Micro-batches per optimizer step the notes state ("gradient accumulation 32 steps",
    "accumulation_steps=4", "grad accum 8"), else 1."""
    m = re.search(r"accum\w*[\s_=:-]*(?:of\s*)?(\d+)", notes, re.IGNORECASE)
    return int(m.group(1)) if m else 1


def _training_metric(row, batch, seq):
    """(single-GPU iteration seconds or 0, per-iteration count factor): what converts dtsim's
    iteration time to the row's metric, from its metric and unit."""
    metric, unit = row["metric"], row["unit"]
    single = row["single_gpu_value"].strip()
    if metric.startswith(("iter_time", "step_time")):
        seconds = phrasing.seconds_per(unit)
        return (_positive(row, "single_gpu_value") * seconds if single else 0.0), 1.0
    if metric == "throughput":
        items = phrasing.throughput_items(unit)
        per_sample = seq if items == "tokens" else 1
        if items == "tokens" and not seq:
            raise Skip(f"throughput in tokens ('{unit}') of a model without a sequence length")
        single_sec = batch * per_sample / _positive(row, "single_gpu_value") if single else 0.0
        return single_sec, per_sample
    raise Skip(f"metric '{metric}' is not predicted (time_to_train needs epochs and "
               "convergence, not one iteration)")


def training_system(row, read_as):
    """(preset, device, family) of a training row; a one-GPU row whose machine no preset
    describes gets any preset (its interconnect carries nothing), said in `read_as`."""
    try:
        return _system(row)
    except Skip:
        if phrasing.int_or_none(row.get("total_gpus", "")) != 1:
            raise
    family, device = phrasing.gpu(row["gpu"])
    read_as.append(f"one GPU: no preset for '{row['gpu']}' in '{row['intra_link']}', and none "
                   "is needed (pcie8-single-root's node, its links unused)")
    return "pcie8-single-root", device, family


def training_case(row, base, workdir):
    model, seq, model_note = phrasing.model(row["model"], row["notes"])
    read_as = [model_note] if model_note else []
    preset, device, family = training_system(row, read_as)
    batch = _int(row, "batch_per_gpu")
    n, nodes = _gpus(row, preset)
    steps = _accumulation_steps(row["notes"])
    if steps < 1:
        raise Skip("notes: accumulation of 0 steps")
    single_iter_sec, per_sample = _training_metric(row, batch, seq)
    if device is None:
        device = phrasing.proxy_device(family) if single_iter_sec > 0 else None
        if device is None:
            raise Skip(f"the workload generator has no '{row['gpu']}' and the row gives no "
                       "single-GPU time to calibrate to")
        read_as.append(f"layer shares of {device} ('{row['gpu']}' is not in the catalogue; the "
                       "row's single-GPU time sets the scale)")
    context = " ".join(row.get(c, "") for c in ("source", "comm_lib", "notes"))
    precision, precision_note, xla = phrasing.precision(row["precision"], device, context)
    if precision_note:
        read_as.append(precision_note)
    if row["metric"] == "throughput" and phrasing.throughput_scope(row["unit"]) == "per_gpu":
        per_sample /= n  # per GPU: the run's samples over its GPUs
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
        generate += compute_args(row, model, precision, xla)
    return Case(
        case_id=row["case_id"], source=base, kind="training", metric=row["metric"],
        measured=_positive(row, "value"), compare_unit=row["unit"], grade=row["grade"], ranks=n,
        nodes=nodes,
        generate_args=generate, samples_per_iteration=n * batch * steps * per_sample,
        single_gpu_iter_sec=single_iter_sec, read_as=read_as,
        dtsim_args=["simulate", "--platform",
                    _platform_arg(preset, nodes, workdir, nic_gbps=_nics(row, preset, nodes,
                                                                         read_as)),
                    "--ranks", str(n), "--algorithm", algorithm, "--bucket-mb", str(bucket_mb),
                    "--accumulation-steps", str(steps),
                    "--collective-latency", COLLECTIVE_LATENCY])


def param_case(row, base, workdir):
    model, _, note = phrasing.model(row["model"], row["notes"], need_sequence=False)
    return Case(case_id=row["case_id"], source=base, kind="param_count", metric="param_count",
                measured=_positive(row, "value"), compare_unit="parameters", grade=row["grade"],
                model=model, read_as=[note] if note else [],
                generate_args=["workload", "generate", "--model", model, "--batch", "1",
                               "--device", "a100", "--precision", "fp32"])


def make_case(row, workdir):
    """A Case for `row`, or raises Skip."""
    base = row["case_id"].split("-")[0]
    allreduce = row["model"].strip().lower() in ("allreduce", "all-reduce", "all_reduce")
    row = dict(row, metric=phrasing.metric(row["metric"], allreduce))
    if row["metric"] == "param_count":
        return param_case(row, base, workdir)
    if allreduce:
        return allreduce_case(row, base, workdir)
    return training_case(row, base, workdir)
