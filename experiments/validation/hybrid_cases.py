"""Turns the LLM rows of data/hybrid.csv into `dtsim simulate --model` runs, or reasons to skip.

One rule per column, the same for every row of a source (README.md, "Hybrid parallelism", lists
them with their sources); nothing here depends on a row's measurement. Inputs a row does not
state come from the source's own published configuration (a table of it below, with where it
was read), never from what scores better.
"""
import math
import pathlib
import re
from dataclasses import dataclass, field

import phrasing
from cases import COLLECTIVE_LATENCY, NCCL_ALGORITHMS, PRESET_GPUS, Skip, _int

REPO = pathlib.Path(__file__).resolve().parents[2]
CATALOG_CPP = REPO / "workloads/transformer_catalog.cpp"
LLM_SOURCES = ("TT", "MEG", "NEMO", "LLMF")
# The attention kernel each framework runs (workloads/TRANSFORMER.md, "Attention kernels"):
# torchtitan calls PyTorch's scaled_dot_product_attention (FlashAttention-2); NeMo runs
# Transformer Engine's choice (attention_kernel below). Megatron-LM's rows (2020-2021, V100 and
# A100) are on GPUs where those two are timed alike. llm-foundry's tables were run by
# scripts/train/benchmarking/sweep.sh, which passes no --attn_impl: submit_benchmarks.py's
# default, `triton` (FlashAttention's Triton port) in its 2023 versions (@12a6319, installing
# `.[gpu]`: flash-attn 1.0.x and triton-pre-mlir), so MPT's attention was FlashAttention v1
# (flash1). Its later versions default to `flash` with `.[gpu-flash2]` (FlashAttention-2,
# @51652ea); which version ran each table is not stated (the H100 bf16 table was rerun after
# the fp8 one). One rule for the whole source, as for every column: flash1 is an assumption, and
# the README ("llm-foundry's MPT") gives the figures both ways; this rule was written after the
# long-sequence rows' errors had been seen.
ATTENTION_KERNEL = {"TT": "flash2", "LLMF": "flash1", "NEMO": "cudnn", "MEG": "cudnn"}
# Transformer Engine picks NeMo's attention. Before NeMo 24.05 it ran FlashAttention-2 wherever
# flash-attn could: TE's DotProductAttention of late 2023 returns its FlashAttention path first
# and runs context parallelism with FlashAttention only ("Context parallelism is only
# implemented with Flash Attention!"), and NeMo's memory_optimizations.rst said "By default,
# Flash Attention is enabled" (Flash Attention 2) until NVIDIA/NeMo#9188 (2024-05-22) rewrote it
# to "Transformer Engine prefers cuDNN flash attention on Hopper+ architectures", which TE's
# later get_attention_backend does ("Disabling FlashAttention to give FusedAttention preference
# on Hopper+"). So a row's container decides: before 24.05 flash2, from 24.05 on or
# unstated cudnn. Found from sources after the 24.03 long-sequence rows' errors had been seen
# (the README gives the figures both ways).
NEMO_CUDNN_FROM = (24, 5)
# How each source's framework runs float8's casts (dtsim's --fp8-recipe, workloads/TRANSFORMER.md,
# "Float8"): torchtitan through torchao (dynamic tensorwise scaling, its float8 TP plan);
# llm-foundry calls Transformer Engine's layers without is_first_microbatch, so each forward
# casts the weights again; Megatron-LM and NeMo (Megatron-core) pass it and cast them once a
# step. Taken from the frameworks' code, not from the rows; passed on every row (it matters
# with fp8 only), so that a what-if pair's baseline carries it.
FP8_RECIPE = {"TT": "torchao", "LLMF": "te", "NEMO": "megatron-te", "MEG": "megatron-te"}


def fp8_recipe(source, row):
    """The --fp8-recipe of a row of `source` (FP8_RECIPE; a torchtitan row that states rowwise
    scaling, its rowwise recipe)."""
    if source == "TT" and "rowwise" in row["precision"].lower():
        return "torchao-rowwise"
    return FP8_RECIPE[source]
_NEMO_CONTAINER = re.compile(r"NeMo ?(\d{2})\.(\d{2})")


def attention_kernel(source, row):
    """The --attention kernel of a row of `source` (ATTENTION_KERNEL, NeMo by its container)."""
    if source == "NEMO":
        container = _NEMO_CONTAINER.search(row["source"])
        if container and (int(container[1]), int(container[2])) < NEMO_CUDNN_FROM:
            return "flash2"
    return ATTENTION_KERNEL[source]

# NeMo's models whose Transformer Engine training configuration overlaps TP communication
# (`ub_tp_comm_overlap: True`, dtsim's --tp-overlap) in NVIDIA/NeMo-Framework-Launcher
# launcher_scripts/conf/training: gpt3/20b.yaml and gpt3/175b.yaml @056a90ed, their
# *_fp8_performance.yaml @1e46ac6c, llama/llama3_70b.yaml @3dd35614 (the 24.07 table's TP 4, PP 4,
# VP 5, CP 2), whose fp8 launch script picks a userbuffers configuration; NeMo 2.0's performance
# recipes of GPT-3 175B and Llama 3 70B set tp_comm_overlap=True. Llama 2 13B and 70B
# (llama2_*.yaml @0446d2c0: `ub_tp_comm_overlap: false`) and the TP-1 models do not. Looked up
# after the NeMo TP + PP rows were seen 13-16 % slow (README, "Overlapped TP"). Nemotron's
# (nemotron/nemotron_{8b,22b}.yaml @089b90e6, nemotron_340b.yaml @3be81fc1: `ub_tp_comm_overlap:
# True`) were read when those models joined the catalogue, before their rows were predicted.
NEMO_TP_OVERLAP = {"gpt3-20b", "gpt3-175b", "llama3-70b", "nemotron-8b", "nemotron-22b",
                   "nemotron-340b"}
NEMO_TP_OVERLAP_SOURCE = "NeMo-Framework-Launcher training configs (ub_tp_comm_overlap)"

METRICS = {"throughput_per_gpu": "tokens/s/GPU", "tflops_per_gpu": "TFLOP/s/GPU",
           "iter_time": "s", "throughput": "tokens/s"}
# Two iterations: the second is the steady state (equal to the third within 1e-12 on six rows:
# FSDP, TP + FSDP, TP, CP, 1F1B and interleaved pipelines; README), a third costs more run time.
ITERATIONS = 2

# Megatron-LM examples/sc21/run_table_1.sh @cf547dea (NVIDIA/Megatron-LM): the launch script of
# Narayanan et al. 2021's Table 1, which is the apr2021 README table. Model -> (micro-batch,
# --num-layers-per-virtual-pipeline-stage or None). Every case passes
# --activations-checkpoint-method uniform, Megatron's full recomputation.
SC21_TABLE1 = {"megatron-gpt-1.7b": (16, None), "megatron-gpt-3.6b": (16, None),
               "megatron-gpt-7.5b": (16, None), "megatron-gpt-18b": (8, None),
               "megatron-gpt-39b": (4, None), "megatron-gpt-76b": (2, 5),
               "megatron-gpt-145b": (2, 5), "megatron-gpt-310b": (1, 3),
               "megatron-gpt-530b": (1, 1), "megatron-gpt-1t": (1, None)}
SC21 = "Megatron-LM examples/sc21/run_table_1.sh @cf547dea"
# Megatron-LM's 2020 scaling study (images/tables.tex, the README's scaling-mp and scaling-dp
# tables): its model-parallel rows and their 128-way data-parallel versions are one set of
# runs of the 2020 example scripts, which pass --checkpoint-activations (Megatron's full
# recomputation); a data-parallel row's scaling is stated against the single-GPU case. This rule
# was written after the data-parallel rows' errors had been seen (README, "The worst rows"), so
# those rows do not check it.
SCALING_2020 = "Megatron-LM images/tables.tex"


class HybridSkip(Skip):
    """A row dtsim cannot model; `category` groups the reasons in the summary."""

    def __init__(self, category, detail=""):
        super().__init__(f"{category}: {detail}" if detail else category)
        self.category = category


@dataclass
class HybridCase:
    case_id: str
    source: str  # the case_id prefix
    kind: str  # parallelism kind, e.g. "tp+pp", "FSDP", "dp-only"
    metric: str
    measured: float
    unit: str
    grade: str
    args: list = field(default_factory=list)  # `dtsim simulate ...` without --report
    formula: str = ""  # tflops rows: "6n", "megatron" or "megatron-recompute"
    arch: dict = field(default_factory=dict)  # the catalogue entry
    seq_len: int = 0
    ranks: int = 0
    flags: list = field(default_factory=list)  # what the run did that dtsim does not model
    assumed: list = field(default_factory=list)  # inputs the row does not state
    line: int = 0
    key: str = ""


def read_catalog(path=CATALOG_CPP):
    """{lower-case name: dims} of the transformer catalogue, read from its C++ source so that
    there is one list: gpt(name, layers, hidden, heads, vocab, positions, ...),
    llama(name, layers, hidden, heads, kv_heads, ffn, vocab, context, ...),
    mpt(name, layers, hidden, heads, ...) and nemotron(name, layers, hidden, heads, kv_heads,
    ffn, ...)."""
    text = pathlib.Path(path).read_text()
    catalog = {}
    for m in re.finditer(r'\bgpt\(\s*"([^"]+)",\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),',
                         text):
        name, layers, hidden, heads, vocab, ctx = m.group(1), *map(int, m.groups()[1:])
        catalog[name.lower()] = dict(name=name, layers=layers, hidden=hidden, heads=heads,
                                     kv_heads=heads, ffn=4 * hidden, vocab=vocab, context=ctx,
                                     swiglu=False, experts=0)
    for m in re.finditer(r'(mixtral\(\s*)?\bllama\(\s*"([^"]+)",\s*(\d+),\s*(\d+),\s*(\d+),'
                         r'\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),', text):
        name = m.group(2)
        layers, hidden, heads, kv, ffn, vocab, ctx = map(int, m.groups()[2:])
        catalog[name.lower()] = dict(name=name, layers=layers, hidden=hidden, heads=heads,
                                     kv_heads=kv, ffn=ffn, vocab=vocab, context=ctx, swiglu=True,
                                     experts=8 if m.group(1) else 0)
    # mpt(name, layers, hidden, heads, ...): GPT's block, vocab 50368, a position table as long
    # as the run's sequence (workloads/transformer_catalog.cpp).
    for m in re.finditer(r'\bmpt\(\s*"([^"]+)",\s*(\d+),\s*(\d+),\s*(\d+),', text):
        name, layers, hidden, heads = m.group(1), *map(int, m.groups()[1:])
        catalog[name.lower()] = dict(name=name, layers=layers, hidden=hidden, heads=heads,
                                     kv_heads=heads, ffn=4 * hidden, vocab=50368, context=None,
                                     swiglu=False, experts=0)
    # nemotron(name, layers, hidden, heads, kv_heads, ffn, ...): not gated, vocab 256000,
    # context 4096.
    for m in re.finditer(r'\bnemotron\(\s*"([^"]+)",\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),',
                         text):
        name, layers, hidden, heads, kv, ffn = m.group(1), *map(int, m.groups()[1:])
        catalog[name.lower()] = dict(name=name, layers=layers, hidden=hidden, heads=heads,
                                     kv_heads=kv, ffn=ffn, vocab=256000, context=4096,
                                     swiglu=False, experts=0)
    return catalog


# What the notes say about the architecture: (field, patterns). Checked against the catalogue
# entry of the row's name, because a name can be reused (Megatron-Core's 2024 "1.7B" is not the
# 2021 one).
ARCH_PATTERNS = [
    ("hidden", [r"\bhidden (\d+)", r"\bdim (\d+)", r"\bh(\d{3,})\b", r"\bd(\d{3,})\b"]),
    ("layers", [r"\b(\d+) layers", r"\blayers (\d+)", r"\b(\d+)L\b"]),
    ("heads", [r"\b(\d+) heads", r"\bheads (\d+)", r"\b(\d+)h\b"]),
    ("kv_heads", [r"\b(\d+) KV heads"]),
    ("ffn", [r"\bFFN (\d+)"]),
    ("vocab", [r"\bvocab (\d+)"]),
]


def notes_arch(notes):
    """{field: value} for every architecture figure the notes state."""
    found = {}
    for name, patterns in ARCH_PATTERNS:
        for p in patterns:
            m = re.search(p, notes)
            if m:
                found[name] = int(m.group(1))
                break
    return found


def _system(row):
    """(preset, generator device, note or None): the GPU and the machine as the training rows
    read them (phrasing.gpu and phrasing.system; README.md here, "Reading the rows")."""
    family, device = phrasing.gpu(row["gpu"])
    if device is None:
        raise HybridSkip("no datasheet for the GPU", f"'{row['gpu']}'")
    try:
        preset, note = phrasing.system(row, family)
    except Skip as error:
        raise HybridSkip("no preset for the system", str(error)) from error
    return preset, device, note


# The catalogue's GPUs with fp8 tensor cores (workloads/roofline.cpp, fp8_flops_per_sec).
FP8_DEVICES = ("h100", "h100-pcie", "h200", "b200", "l40s", "l4")
FP8_NOTE = ("float8: the layers' linear GEMMs in fp8 at the datasheet's fp8 peak with casts of "
            "their operands as the source's framework runs them (FP8_RECIPE); attention, norms, "
            "the output head and communication in bf16, but the sequence-parallel TP all-gathers "
            "(fp8 except with torchao's rowwise scaling; workloads/TRANSFORMER.md, \"Float8\")")


def _precision(row, device):
    """(dtsim precision, flag or None, assumption or None): float8 rows run dtsim's fp8 on GPUs
    that have it (else bf16, flagged)."""
    p = row["precision"].lower()
    if "fp8" in p or "float8" in p:
        if device in FP8_DEVICES:
            return "fp8", None, FP8_NOTE
        return "bf16", f"float8 GEMMs (dtsim predicts bf16: {device} has no fp8)", None
    if "bf16" in p:
        if device == "v100":
            raise HybridSkip("precision", "V100 has no bf16")
        return "bf16", None, None
    if "fp16" in p:
        return "fp16", None, None
    raise HybridSkip("precision", f"'{row['precision']}' not understood")


# torchtitan compiles its loss with the model since pytorch/torchtitan#1033 (merged 2025-04-01:
# "compiling the loss fn if job_config.training.compile is set"); before, only the blocks. A
# row's torchtitan date is its benchmark file's (llama3_h100_202412_..., ..._2025-06_...).
TT_COMPILED_LOSS_FROM = (2025, 4)
_TT_BENCHMARK_DATE = re.compile(r"_(20\d\d)-?(\d\d)_")
COMPILE = re.compile(r"compile=on|torch\.compile|\+ compile\b")


def cross_entropy(source, row):
    """The --cross-entropy of a row (None: the default, fused): torchtitan's F.cross_entropy on
    fp32 logits, compiled where the row ran torch.compile with a torchtitan of April 2025 on."""
    if source != "TT":
        return None
    date = _TT_BENCHMARK_DATE.search(row["source"])
    compiled = (date and (int(date[1]), int(date[2])) >= TT_COMPILED_LOSS_FROM
                and COMPILE.search(row["notes"] + " " + row["what_if"]))
    return "compiled" if compiled else "pytorch"


def _flags(row):
    """What the row ran that dtsim does not model (README: such rows are predicted, flagged, and
    kept out of the headline MAPE)."""
    notes, what_if = row["notes"], row["what_if"]
    text = notes + " " + what_if
    flags = []
    if COMPILE.search(text):
        flags.append("torch.compile (fused kernels)")
    if re.search(r"async[\s_-]?tp(?!=off)", text, re.IGNORECASE):
        flags.append("asynchronous TP")
    if "tp-comm-overlap" in notes:
        flags.append("TP communication overlap")
    if re.search(r"fine-tuning \(SFT\)", notes):
        flags.append("packed SFT (attention within the packed sequences)")
    return flags


# torchtitan's "selective layer" checkpointing recomputes every N-th block whole; a row that
# does not say N ran torchtitan's default, --activation_checkpoint.selective_ac_option "2" ("2 =
# checkpoint every other layer", torchtitan's config_manager.py).
TT_LAYER_SAC_NOTE = ("recompute: torchtitan's layer-level selective checkpointing at its default "
                     "frequency, every 2nd block whole (selective_ac_option '2'): --recompute "
                     "full:2")


# PyTorch's non-reentrant checkpoint stops a block's recomputation once backward's last saved
# tensor is rebuilt (torch.utils.checkpoint's early stop, the default since PyTorch 2.1):
# --checkpoint-early-stop. llm-foundry's benchmark script sets activation_checkpointing_reentrant
# False (scripts/train/benchmarking/submit_benchmarks.py); its tables do not state the PyTorch.
# torchtitan wraps blocks with PyTorch's checkpoint_wrapper, non-reentrant, and left early stop
# at PyTorch's default until its activation_checkpoint.early_stop option (default false, pull
# request #1580, August 2025), later than every torchtitan row here.
EARLY_STOP_NOTES = {
    "LLMF": ("recompute: llm-foundry's non-reentrant checkpointing (activation_checkpointing_"
             "reentrant False) on PyTorch 2.1 or later, which stops recomputing early (the "
             "tables do not state the PyTorch): --checkpoint-early-stop"),
    "TT": None,
}


def _recompute(row, source, sc21):
    """(dtsim --recompute, assumption or None)."""
    r = row["recompute"].strip().lower()
    if r.startswith("full"):
        return "full", None
    if r.startswith("selective"):
        if "layer" in r:  # torchtitan's layer-level SAC: every N-th block fully recomputed
            return "full:2", TT_LAYER_SAC_NOTE
        if source == "TT" and re.search(r"(^|[^a-z])op([^a-z]|$)", r):  # (op), op, per-op SAC
            return "selective-op", None  # torchtitan's op-level policy (sim/strategies/MEMORY.md)
        return "selective", None
    if r == "none":
        return "none", None
    if r.startswith("not stated"):
        if "--checkpoint-activations" in r:
            # The column names the source's own setting: Megatron-LM's full recomputation.
            return "full", "recompute: the source's --checkpoint-activations (full)"
        if sc21:
            return "full", f"recompute: {SC21} (--activations-checkpoint-method uniform, full)"
        if source == "MEG" and SCALING_2020 in row["source"]:
            return "full", ("recompute: the 2020 scaling study's example scripts' "
                            "--checkpoint-activations (full), as for its model-parallel rows")
        return "none", "recompute not stated: none"
    raise HybridSkip("recompute", f"'{row['recompute']}' not understood")


def _degree(row, column):
    value = row[column].strip()
    if not value:
        raise HybridSkip("degrees not stated", f"column {column} is empty")
    return _int(row, column)


def parallel_kind(tp, pp, dp, cp, ep, zero):
    """'tp+pp', 'cp', 'FSDP', 'tp+FSDP', 'dp-only', 'single GPU' …"""
    parts = [name for name, d in (("tp", tp), ("pp", pp), ("cp", cp), ("ep", ep)) if d > 1]
    if zero == 3 and dp > 1:
        parts.append("FSDP")
    if parts:
        return "+".join(parts)
    return "dp-only" if dp > 1 else "single GPU"


def megatron_recompute_flops_per_token(arch, seq_len):
    """Narayanan et al. 2021, Appendix, Eq. (3), per token: 96 l h^2 (1 + s/(6h) + V/(16 l h)):
    the FLOPs Megatron-LM 2020-2021 reports, which count the recomputed forward."""
    l, h, v = arch["layers"], arch["hidden"], arch["vocab"]
    return 96 * l * h * h * (1 + seq_len / (6 * h) + v / (16 * l * h))


def _gpus(row, preset):
    """(total GPUs, nodes): one node, used in part or whole, or whole nodes of the preset (dtsim
    places ranks node by node)."""
    n, nodes, per_node = _int(row, "total_gpus"), _int(row, "nodes"), PRESET_GPUS[preset]
    if nodes == 1 and n <= per_node:
        return n, 1
    if n != nodes * per_node:
        raise HybridSkip("GPUs do not fill the preset's nodes",
                         f"{n} GPUs on {nodes} nodes of {per_node} ({preset})")
    return n, nodes


def _platform(preset, nodes, workdir):
    path = pathlib.Path(workdir) / f"{preset}_{nodes}.json"
    path.write_text(f'{{"preset": "{preset}", "nodes": {nodes}}}\n')
    return str(path)


# Units of the peak_memory rows `dtsim memory` predicts (memory_validate.py), in bytes.
MEMORY_UNITS = {"GiB": 2**30, "GB": 1e9}


def make_hybrid_case(row, workdir, catalog, memory=False):
    """A HybridCase for `row`, or raises HybridSkip. With `memory`, a `dtsim memory` run of a
    peak_memory row (memory_validate.py), every other metric skipped; the same rules else."""
    source = row["case_id"].split("-")[0]
    if source == "PDL":
        raise HybridSkip("CNN rows (PDL): another issue")
    if source not in LLM_SOURCES:
        raise HybridSkip("not an LLM source", source)
    metric = row["metric"]
    if memory and metric != "peak_memory":
        raise HybridSkip("not a peak_memory row", metric)
    if not memory and metric == "peak_memory":
        raise HybridSkip("peak memory: the memory model is another issue")
    if not memory and metric not in METRICS:
        raise HybridSkip("metric not predicted", metric)
    if row["grade"].strip() == "C":
        raise HybridSkip("grade C: configuration incomplete",
                         "its what-if partner's configuration is not given either, so no ratio")
    arch = catalog.get(row["model"].strip().lower())
    if arch is None:
        raise HybridSkip("model not in the catalogue", row["model"])
    stated = notes_arch(row["notes"])
    differ = [f"{k} {v} (catalogue {arch[k]})" for k, v in stated.items() if arch[k] != v]
    if differ:
        raise HybridSkip("the notes' architecture is not the catalogue's",
                         f"{arch['name']}: " + ", ".join(differ))
    if re.search(r"task=LoRA|fine-tuning \(LoRA\)", row["what_if"] + " " + row["notes"]):
        raise HybridSkip("LoRA fine-tuning (only adapters train; dtsim models full training)")
    if row["unit"] != METRICS.get(metric) and not (memory and row["unit"] in MEMORY_UNITS):
        raise HybridSkip("unit", f"'{row['unit']}' for {metric}")
    measured = float(row["value"])
    if not (math.isfinite(measured) and measured > 0):
        raise HybridSkip("value", f"'{row['value']}' is not a number > 0")

    preset, device, system_note = _system(row)
    precision, precision_flag, precision_note = _precision(row, device)
    watts = phrasing.power_limit(row["gpu"])
    if watts is not None:
        # the datasheet GPU under the stated limit (workloads/COMPUTE.md, "Power limit")
        device = f"{device}@{watts:g}W"
        assumed_gpu = None
    elif re.search(r"lower TDP|power[- ](?:capped|limited)|power (?:limit|cap)", row["gpu"],
                   re.IGNORECASE):
        assumed_gpu = (f"'{row['gpu']}': a power limit without a figure; dtsim runs the "
                       "datasheet GPU at its TDP")
    else:
        assumed_gpu = None
    ranks, nodes = _gpus(row, preset)
    tp, pp, dp, cp, ep = (_degree(row, c) for c in ("tp", "pp", "dp", "cp", "ep"))
    if tp * pp * dp * cp != ranks:
        raise HybridSkip("degrees do not multiply to the GPUs",
                         f"tp {tp} x pp {pp} x dp {dp} x cp {cp} != {ranks}")
    zero_text = row["zero_stage"].strip()
    # PyTorch FSDP's sharding strategies by name, as llm-foundry's rows name them
    # (torch.distributed.fsdp.ShardingStrategy's documentation): FULL_SHARD is ZeRO-3;
    # NO_SHARD is DDP; SHARD_GRAD_OP "unshards before the forward, does not reshard them after
    # the forward, and only reshards them after the backward computation", gradients
    # reduce-scattered after the backward: FSDP's per-unit flow with one gather per forward,
    # dtsim's ZeRO-3 with --fsdp-unshard micro-batch, not ZeRO-2's bucketed reduce-scatter and
    # gather after the optimizer step.
    fsdp_unshard = None
    if zero_text.upper() == "SHARD_GRAD_OP":
        fsdp_unshard = "micro-batch"
    fsdp = {"FULL_SHARD": "3", "SHARD_GRAD_OP": "3", "NO_SHARD": "0"}.get(zero_text.upper())
    zero_text = fsdp or zero_text
    if not zero_text or zero_text[0] not in "0123":
        raise HybridSkip("ZeRO stage not understood", f"'{row['zero_stage']}'")
    zero = int(zero_text[0])
    seq_len = _int(row, "seq_len")
    global_batch = _int(row, "global_batch")
    name = arch["name"]
    readme = re.search(r"\b(jan|apr)2021\b", row["what_if"] + " " + row["notes"])
    sc21 = source == "MEG" and readme is not None and name in SC21_TABLE1
    assumed = [a for a in (system_note, assumed_gpu, precision_note) if a]

    # Micro-batch and schedule.
    virtual = 1
    if row["micro_batch"].strip():
        micro = _int(row, "micro_batch")
    elif sc21:
        micro = SC21_TABLE1[name][0]
        assumed.append(f"micro-batch {micro}: {SC21}"
                       + (" (the apr2021 table's script, for this jan2021 row)"
                          if readme.group(1) == "jan" else ""))
    else:
        raise HybridSkip("micro-batch not stated")
    if source == "TT" and pp > 1:
        # torchtitan's default: as many micro-batches as pipeline ranks (TT-25's notes,
        # config_manager.py @9dec370), so the local batch is cut into pp micro-batches.
        if micro % pp:
            raise HybridSkip("micro-batch", f"local batch {micro} not a multiple of pp {pp}")
        micro //= pp
        if re.search(r"interleaved", row["what_if"] + " " + row["notes"], re.IGNORECASE):
            # torchtitan's generate_split_points: 2 stages per rank for multi-stage schedules.
            virtual = 2
            assumed.append("interleaved: torchtitan's default of 2 stages per rank")
    m = re.search(r"\bVP=(\d+)", row["notes"])
    if m:
        virtual = int(m.group(1))
    if sc21 and pp > 1:
        per_virtual = SC21_TABLE1[name][1]
        if readme.group(1) == "apr" and per_virtual:
            virtual = arch["layers"] // (pp * per_virtual)
        elif readme.group(1) == "jan":
            assumed.append("schedule 1F1B (the jan2021 row gives no virtual stages)")
    if global_batch % (micro * dp):
        raise HybridSkip("global batch", f"{global_batch} not a multiple of micro-batch {micro} "
                                         f"x dp {dp}")
    recompute, recompute_note = _recompute(row, source, sc21)
    if recompute_note:
        assumed.append(recompute_note)
    early_stop = recompute.startswith("full") and source in EARLY_STOP_NOTES
    if early_stop and EARLY_STOP_NOTES[source]:
        assumed.append(EARLY_STOP_NOTES[source])
    # Sequence parallelism: torchtitan's TP plan (SequenceParallel norms) and NeMo's configs use
    # it with TP; Megatron-LM 2020-2021 predates it (Korthikanti et al. 2022).
    sequence_parallel = tp > 1 and source in ("TT", "NEMO")

    flags = _flags(row)
    if precision_flag:
        flags.insert(0, precision_flag)
    formula = ""
    if metric == "tflops_per_gpu":
        formula = {"MEG": "megatron-recompute", "NEMO": "megatron", "TT": "6n",
                   "LLMF": "6n"}[source]

    args = ["memory" if memory else "simulate", "--model", name, "--device", device, "--precision", precision,
            "--platform", _platform(preset, nodes, workdir), "--ranks", str(ranks),
            "--parallel", f"tp={tp},pp={pp},dp={dp}" + (f",cp={cp}" if cp > 1 else "")
            + (f",ep={ep}" if ep > 1 else ""),
            "--micro-batch", str(micro), "--global-batch", str(global_batch),
            "--seq-len", str(seq_len)]
    if pp > 1:
        # torchtitan runs torch.distributed.pipelining's schedules (interleaved-torch:V:
        # sim/strategies/HYBRID.md); Megatron-LM and NeMo their own.
        interleaved = "interleaved-torch" if source == "TT" else "interleaved"
        args += ["--schedule", f"{interleaved}:{virtual}" if virtual > 1 else "1f1b"]
    args += ["--zero", str(zero)]
    if fsdp_unshard:
        args += ["--fsdp-unshard", fsdp_unshard]
    if sequence_parallel:
        args.append("--sequence-parallel")
        if source == "NEMO" and name in NEMO_TP_OVERLAP:
            args.append("--tp-overlap")
            assumed.append(f"TP overlapped: {NEMO_TP_OVERLAP_SOURCE}")
    loss = cross_entropy(source, row)  # torchtitan's F.cross_entropy, maybe compiled (MEMORY.md)
    if loss:
        args += ["--cross-entropy", loss]
    args += ["--attention", attention_kernel(source, row), "--fp8-recipe", fp8_recipe(source, row)]
    args += ["--recompute", recompute] + (["--checkpoint-early-stop"] if early_stop else [])
    args += ["--collective-latency", COLLECTIVE_LATENCY,
             "--algorithm", "ring" if nodes == 1 else NCCL_ALGORITHMS, "--replay", "fast",
             "--iterations", str(ITERATIONS)]
    return HybridCase(case_id=row["case_id"], source=source,
                      kind=parallel_kind(tp, pp, dp, cp, ep, zero), metric=metric,
                      measured=measured, unit=row["unit"], grade=row["grade"], args=args,
                      formula=formula, arch=arch, seq_len=seq_len, ranks=ranks, flags=flags,
                      assumed=assumed)


def predicted_value(case, result):
    """The report's `result` in the row's metric and unit."""
    if case.metric == "throughput_per_gpu":
        return result["tokens_per_sec_per_gpu"]
    if case.metric == "throughput":
        return result["tokens_per_sec_per_gpu"] * case.ranks
    if case.metric == "iter_time":
        return result["iteration_time_sec"]
    if case.formula == "megatron-recompute":
        return (result["tokens_per_sec_per_gpu"]
                * megatron_recompute_flops_per_token(case.arch, case.seq_len) / 1e12)
    if case.formula == "megatron":
        return result["tflops_per_gpu_megatron"]
    return result["tflops_per_gpu"]
