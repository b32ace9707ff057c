"""How published rows say things, read into what dtsim needs: model names, precisions, GPUs,
systems, sizes, counts and units. Every alias and rule is here, once, and listed in README.md
("Reading the rows"); a phrase none of them reads raises Skip with the phrase in the reason.

Each reader returns what it read and, where it had to interpret, a short note ("read_as") that
the runner keeps beside the prediction.
"""
import math
import re


class Skip(Exception):
    """A row dtsim cannot model, with the reason."""


def _squash(text):
    """Lower case, parentheses dropped, letters and digits only: "ResNet-50 (v1.5)" -> resnet50."""
    return re.sub(r"[^a-z0-9]", "", re.sub(r"\([^)]*\)", "", text.lower()))


# --- models ---------------------------------------------------------------------------------

# (pattern on the squashed name, zoo model or a function of the match, note or None)
_RESNET = re.compile(r"^(?:resnet|rn)(18|34|50|101|152)(v15|v1b|v1c|v1|v2)?")
_RESNEXT = re.compile(r"^(?:resnext|rnx)(50|101)(32x4d|32x8d)?")
_VGG = re.compile(r"^vgg(11|13|16|19)(bn)?")
_BERT = re.compile(r"^bert(large|base)")
_UNMODELLED = {
    "googlenet": "GoogLeNet (Inception v1) is not in the zoo",
    "inceptionv4": "Inception v4 is not in the zoo",
    "mobilenet": "MobileNets are not in the zoo",
    "efficientnet": "EfficientNets are not in the zoo",
    "densenet": "DenseNets are not in the zoo",
    "seresnext": "SE-ResNeXt (squeeze-excitation) is not in the zoo",
    "ssd": "SSD detectors are not in the zoo",
    "maskrcnn": "Mask R-CNN is not in the zoo",
    "unet": "U-Nets are not in the zoo",
    "gnmt": "GNMT is not in the zoo",
    "xlnet": "XLNet is not in the zoo",
}


def sequence_length(text):
    """The tokens per sample a model name or note states, or None: 'seq128', 'seq_len=512',
    'sequence length 384', 'phase 1' (BERT pre-training phase 1 = 128, phase 2 = 512, as in
    NVIDIA's and Google's recipes)."""
    t = text.lower()
    m = re.search(r"seq(?:uence)?[\s_-]*(?:len(?:gth)?)?[\s_=:-]*(\d+)", t)
    if m:
        return int(m.group(1))
    m = re.search(r"phase[\s_-]*([12])\b", t)
    if m:
        return 128 if m.group(1) == "1" else 512
    return None


def model(text, notes="", need_sequence=True):
    """(zoo model, sequence length or None, note or None) for a row's model column. A BERT
    without a sequence length is refused when `need_sequence` (timing needs one)."""
    key = _squash(text)
    m = _RESNET.match(key)
    if m and not key.startswith(("resnext", "rnx")):
        depth, version = m.group(1), m.group(2)
        note = None
        if version in ("v1", "v1b", "v1c"):
            note = f"'{text}' read as resnet{depth} (v1.5; v1 strides the 1x1 convolution: " \
                   "about 3 % fewer multiply-adds)"
        elif version == "v2":
            note = f"'{text}' read as resnet{depth} (v2's pre-activation order has the same layers)"
        return f"resnet{depth}", None, note
    m = _RESNEXT.match(key)
    if m:
        # ResNeXt-50 comes as 32x4d only; ResNeXt-101 as 32x4d, 32x8d or 64x4d: say which.
        depth, width = m.group(1), m.group(2) or ("32x4d" if m.group(1) == "50" else None)
        if (depth, width) not in (("50", "32x4d"), ("101", "32x8d")):
            raise Skip(f"model '{text}': the zoo has resnext50_32x4d and resnext101_32x8d")
        return f"resnext{depth}_{width}", None, None
    if key.startswith(("wideresnet502", "wrn502")):
        return "wide_resnet50_2", None, None
    m = _VGG.match(key)
    if m:
        return f"vgg{m.group(1)}" + ("_bn" if m.group(2) else ""), None, None
    if key.startswith("alexnet"):
        return "alexnet", None, None
    if re.match(r"^inception(v)?3", key):
        return "inception_v3", None, None
    m = _BERT.match(key)
    if m:
        seq = sequence_length(text) or sequence_length(notes)
        if seq is None and need_sequence:
            raise Skip(f"model '{text}': no sequence length in the name or the notes")
        note = None
        if re.search(r"squad|fine[\s_-]*tun|finetun", (text + " " + notes).lower()):
            note = f"'{text}' fine-tuning timed with the pre-training heads (masked LM on 15 % " \
                   "of the tokens, next sentence) in place of its task head: 1.5 % (large) to " \
                   "4 % (base) of the FLOPs"
        return f"bert_{m.group(1)}", seq, note
    if key.startswith("gpt2"):
        return "gpt2", sequence_length(text) or sequence_length(notes), None
    if key.startswith("transformerxl"):
        return _transformer_xl(text, notes)
    for prefix, why in _UNMODELLED.items():
        if key.startswith(prefix):
            raise Skip(f"model '{text}': {why}")
    raise Skip(f"model '{text}' is not in the generator's zoo")


# DLE's segment lengths (tgt_len = mem_len) of its WikiText-103 training recipes.
_XL_SEGMENT = {"transformer_xl_base": 192, "transformer_xl_large": 384}


def _transformer_xl(text, notes):
    """NVIDIA DeepLearningExamples' Transformer-XL on WikiText-103, base or large."""
    both = f"{text} {notes}".lower()
    corpus = re.search(r"enwik8|text8|lm1b|one billion|billion word", both)
    if corpus:
        raise Skip(f"model '{text}': Transformer-XL on {corpus.group(0)}; the zoo has the "
                   "WikiText-103 models (267,735 words)")
    size = re.search(r"\b(base|large)\b", both)
    if size is None:
        raise Skip(f"model '{text}': Transformer-XL base or large is not said")
    name = f"transformer_xl_{size.group(1)}"
    stated = re.search(r"tgt[\s_-]*len\D{0,3}(\d+)", both)
    seq = sequence_length(text) or sequence_length(notes) or (
        int(stated.group(1)) if stated else None)
    note = None
    if seq is None:
        seq = _XL_SEGMENT[name]
        note = f"'{text}': segment of {seq} tokens and a memory of as many assumed (DLE's " \
               "WikiText-103 recipe)"
    return name, seq, note


# --- GPUs -----------------------------------------------------------------------------------

# GPU families by generation; `device` is the generator's catalogue entry (None: not in it).
_AMPERE_OR_LATER = {"a100", "a100-40gb", "a100-pcie", "a10", "l4", "l40s", "h100", "h100-pcie",
                    "h200", "b200"}


def gpu(text):
    """(family, generator device or None) for a row's GPU column: 'A100-SXM4-40GB' ->
    ('a100', 'a100-40gb'); 'Tesla P100 (PCIe)' -> ('p100', None)."""
    t = text.lower()
    pcie = re.search(r"pcie|pci-e|\bpci\b", t) is not None
    if "b200" in t or "gb200" in t:
        return "b200", "b200"
    if "h200" in t:
        return "h200", "h200"
    if "h100" in t:
        return "h100", "h100-pcie" if pcie else "h100"
    if "a100" in t:
        if re.search(r"40\s*gb", t):
            return "a100", "a100-40gb"  # SXM4 and PCIe 40GB: the same peaks and 1555 GB/s
        return "a100", "a100-pcie" if pcie else "a100"
    if "v100" in t:
        return "v100", "v100-pcie" if pcie else "v100"
    if "l40s" in t:
        return "l40s", "l40s"
    if re.search(r"\bl4\b", t):
        return "l4", "l4"
    if re.search(r"\ba10\b", t):
        return "a10", "a10"
    if re.search(r"\bt4\b", t):
        return "t4", "t4"
    for family in ("p100", "titan x", "titan v", "titan rtx", "1080", "2080", "3090", "4090",
                   "k80", "a40", "a6000", "l40", "mi100", "mi250", "mi300", "gaudi"):
        if family in t:
            return family, None
    raise Skip(f"GPU '{text}' not recognised")


def power_limit(text):
    """The power limit in watts a row's GPU column states ('500W limit', '500 W power-capped',
    'power cap 400 W', 'capped at 1,000W', 'power-limited to 450 W'), or None: dtsim runs the
    GPU at it (`--device h100@500W`, workloads/COMPUTE.md, "Power limit"). A TDP is the card's
    rating, not a limit set on it ('TDP 300W'), and a limit without a figure ('lower TDP')
    gives None."""
    t = text.lower()
    number = r"(?P<watts>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
    for pattern in (number + r"\s*w\s*(?:power[- ]?)?(?:limit|cap)",
                    r"(?:power[- ]?limit(?:ed)?|power[- ]?cap(?:ped)?|capped|limited)\s*"
                    r"(?:at|to|of)?\s*" + number + r"\s*w\b"):
        m = re.search(pattern, t)
        if m:
            return float(m.group("watts").replace(",", ""))
    return None


def is_ampere_or_later(device):
    return device in _AMPERE_OR_LATER


# Calibrated rows need a catalogue GPU only for each layer's share of the measured single-GPU
# time: a GPU outside the catalogue borrows the shares of its generation's.
_PROXY = {"p100": "v100", "titan x": "v100", "titan v": "v100", "titan rtx": "v100",
          "1080": "v100", "2080": "v100", "k80": "v100", "3090": "a100", "a40": "a100",
          "a6000": "a100", "4090": "h100", "l40": "h100"}


def proxy_device(family):
    """The catalogue GPU whose layer shares a calibrated row on `family` borrows, or None."""
    return _PROXY.get(family)


# --- precisions -----------------------------------------------------------------------------

def _pytorch_version(context):
    m = re.search(r"(?:pytorch|torch)[\s:=v-]*(\d+)\.(\d+)", context)
    return (int(m.group(1)), int(m.group(2))) if m else None


def fp32_is_tf32(device, context):
    """Whether 'fp32' on `device` ran its matrix multiplies in TF32 by the framework's default:
    Ampere or later, under TensorFlow (2.4+), MXNet or PyTorch in NVIDIA's NGC containers (TF32
    on by default, NVIDIA's NGC release notes), or PyTorch 1.7-1.11 (allow_tf32 defaulted to
    True until 1.12). Convolutions run TF32 under PyTorch anyway (cudnn.allow_tf32)."""
    if not is_ampere_or_later(device):
        return False
    c = context.lower()
    if re.search(r"tensorflow|\btf\s*2|mxnet|\bngc\b|deeplearningexamples", c):
        return True
    version = _pytorch_version(c)
    return version is not None and (1, 7) <= version < (1, 12)


def precision(text, device, context=""):
    """(precision, note or None, xla) for a row's precision column: 'AMP', 'apex O1', 'O2',
    'fp16 (apex)', 'mixed', 'float16' -> fp16; 'bf16'/'bfloat16' -> bf16; 'TF32' -> tf32;
    'fp32'/'float32'/'single' -> fp32, or tf32 where fp32_is_tf32 says so. 'XLA' anywhere is
    returned as a flag (the compiler fuses elementwise work into its producers)."""
    t = text.lower()
    xla = "xla" in t
    if re.search(r"bf16|bfloat16", t):
        p = "bf16"
    elif re.search(r"fp16|float16|half|\bamp\b|mixed|apex|\bo[12]\b", t):
        p = "fp16"
    elif "tf32" in t:
        p = "tf32"
    elif re.search(r"fp32|float32|single|\bfp 32\b", t):
        p = "fp32"
    else:
        raise Skip(f"precision '{text}' not understood")
    note = None
    if p == "fp32" and fp32_is_tf32(device, context):
        p = "tf32"
        note = f"'{text}' on {device} read as tf32 (the framework's default on Ampere and later)"
    if device == "v100" and p in ("tf32", "bf16"):
        raise Skip(f"V100 has no {p}")
    return p, note, xla


# --- metrics --------------------------------------------------------------------------------

def metric(text, allreduce):
    """The runner's name of a row's metric: iteration times keep theirs (iter_time_p50, ...),
    others ('step_time', 'time_per_iteration') become iter_time; 'images_per_sec',
    'samples/s', 'tokens_per_sec', 'throughput_total' ... become throughput; for an all-reduce,
    a time or latency becomes allreduce_time, a bus bandwidth allreduce_busbw, an algorithm
    bandwidth allreduce_algbw. Anything else is returned as written (and refused later)."""
    t = re.sub(r"[\s-]+", "_", text.strip().lower())
    if allreduce:
        if re.search(r"bus_?b(?:w|andwidth)", t):
            return "allreduce_busbw"
        if re.search(r"alg(?:orithm)?_?b(?:w|andwidth)", t):
            return "allreduce_algbw"
        if re.search(r"time|latency", t):
            return "allreduce_time"
        return text
    if t == "param_count" or re.fullmatch(r"param(?:eter)?s?(?:_count)?", t):
        return "param_count"
    if t.startswith("iter_time"):
        return t
    if re.search(r"(?:iter|step)\w*_?time|time_per_(?:iter|step)", t):
        return "iter_time"
    if re.search(r"throughput|per_sec|/s\b|_ps\b|^ips$", t):
        return "throughput"
    return text


# --- counts, sizes and units ----------------------------------------------------------------

_RANGE = re.compile(r"\d\s*[a-z]{0,3}\s*(?:-|–|\.\.|\bto\b)\s*\d", re.IGNORECASE)


def count(text, what, low=1):
    """The leading integer of `text` ('256', '256 (per GPU)', '8 GPUs'); Skip for a range
    ('64-256') or anything else."""
    t = text.strip()
    if _RANGE.search(t):
        raise Skip(f"{what} is a range '{text}', not one value")
    m = re.match(r"^(\d+)(?![\d.])", t)
    if not m:
        raise Skip(f"{what} is '{text}', not an integer")
    value = int(m.group(1))
    if value < low:
        raise Skip(f"{what} is {value}, expected at least {low}")
    return value


# Suffixes of a size: SI for KB/MB/GB (10^3), binary for KiB/MiB/GiB and for a bare K/M/G
# (nccl-tests' -b/-e convention: 128M = 2^27 bytes).
_SIZE_UNITS = {"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
               "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
               "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def size_bytes(text, what):
    """Bytes of a size: '400000', '4e8', '256MB' (SI), '1 GiB', '128M' (binary), '2^28'."""
    t = text.strip().lower()
    if _RANGE.search(t):
        raise Skip(f"{what} is a range '{text}', not one size")
    m = re.fullmatch(r"2\s*\^\s*(\d+)\s*(b|bytes)?", t)
    if m:
        return 2 ** int(m.group(1))
    m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*([kmgt]i?b?|b|bytes)?", t)
    if not m:
        raise Skip(f"{what} '{text}' is not a size")
    unit = (m.group(2) or "").replace("bytes", "b")
    value = float(m.group(1)) * _SIZE_UNITS[unit]
    if not (math.isfinite(value) and value > 0) or value != int(value):
        raise Skip(f"{what} '{text}' is not a whole number of bytes > 0")
    return int(value)


_TIME_UNITS = {"s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
               "ms": 1e-3, "msec": 1e-3, "millisecond": 1e-3, "milliseconds": 1e-3,
               "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "usec": 1e-6, "microseconds": 1e-6,
               "ns": 1e-9, "nsec": 1e-9}


def seconds_per(unit):
    """Seconds in one `unit` ('ms', 'usec', 'µs', ...); Skip for another."""
    u = unit.strip().lower().rstrip(".")
    if u not in _TIME_UNITS:
        raise Skip(f"unknown time unit '{unit}'")
    return _TIME_UNITS[u]


def bandwidth_bytes_per_sec(unit):
    """Bytes/s in one bandwidth `unit`: GB/s and MB/s (SI bytes, as nccl-tests), GiB/s, and
    Gb/s or Gbps (bits: one eighth)."""
    u = unit.strip().replace(" ", "")
    table = {"GB/s": 1e9, "MB/s": 1e6, "GiB/s": 2**30, "MiB/s": 2**20, "TB/s": 1e12,
             "Gb/s": 1e9 / 8, "Gbps": 1e9 / 8, "Gbit/s": 1e9 / 8, "Mb/s": 1e6 / 8}
    if u not in table:
        raise Skip(f"unknown bandwidth unit '{unit}'")
    return table[u]


def throughput_scope(unit):
    """'total' or 'per_gpu' for a throughput unit ('images/s (total)', 'img/s per GPU');
    unstated means total, as benchmark tables report a run's throughput."""
    u = unit.lower()
    return "per_gpu" if re.search(r"per[\s-]*gpu|/\s*gpu\b|per[\s-]*device", u) else "total"


def throughput_items(unit):
    """What a throughput counts: 'samples' (images, sequences, samples) or 'tokens'."""
    u = unit.lower()
    if re.search(r"token|words?\b|wps\b|tok/s", u):
        return "tokens"
    if re.search(r"image|img|sequence|seq|sample|sentence", u):
        return "samples"
    raise Skip(f"throughput unit '{unit}' counts neither samples nor tokens")


# --- systems --------------------------------------------------------------------------------

# GPUs per node of each preset (platforms/PRESETS.md).
PRESET_GPUS = {"hgx-h200": 8, "dgx-h100": 8, "hgx-b200": 8, "dgx-a100": 8, "aws-p4d": 8,
               "aws-p5": 8, "dgx2h": 16, "dgx1-v100": 8, "pcie8-fdr": 8, "pcie8-single-root": 8,
               "pcie8-dual-root": 8, "pcie8-gen4-single-root": 8, "pcie8-gen5-single-root": 8,
               "pcie4-25gbe": 4}


def system(row, family):
    """(preset, note or None) for the machine a row ran on, from its GPU, intra-node link,
    network, notes and source: words matched without regard to case. Rules, first match wins:
    AWS instance names (p4d/p4de, p5/p5e/p5en); B200, H200, H100 and A100 in SXM/HGX/DGX/NVSwitch
    nodes; V100 on NVSwitch/DGX-2 or NVLink/DGX-1/SXM2; PCIe boxes of 8 GPUs by their wiring
    (dual-root: two CPUs, QPI/UPI between them; single-root: one CPU), with FDR InfiniBand as
    DeepBench's machines."""
    node_text = " ".join(row.get(c, "") for c in ("gpu", "intra_link")).lower()
    text = " ".join(row.get(c, "") for c in ("gpu", "intra_link", "inter_network", "notes",
                                             "source")).lower()

    def says(*words):
        return any(re.search(w, node_text) for w in words)

    nvswitch = says("nvswitch", "sxm", "dgx", "hgx", r"nvlink\s*[345]", "nvl18")
    if re.search(r"\bp4de?\b|p4de?\.24xlarge", text) and family == "a100":
        return "aws-p4d", None
    if re.search(r"\bp5(e|en)?\b|p5(e|en)?\.48xlarge", text) and family in ("h100", "h200"):
        return "aws-p5", None
    if family == "b200" and (nvswitch or says("nvlink")):
        return "hgx-b200", None
    if family == "h200" and (nvswitch or says("nvlink")):
        return "hgx-h200", None
    if family == "h100" and (nvswitch or says("nvlink")):
        return "dgx-h100", None
    if family == "a100" and nvswitch:
        if "efa" in text:
            return "aws-p4d", None
        return "dgx-a100", None
    if family == "v100":
        if says("dgx-2", "dgx2", "nvswitch", "sxm3"):
            return "dgx2h", None
        if says("nvlink", "dgx-1", "dgx1", "sxm", "cube"):
            if int_or_none(row.get("nodes", "")) not in (None, 1) and re.search(
                    r"p3dn|p3\.16xlarge", text):
                raise Skip("AWS p3 instances across nodes (25-100 Gb/s networks): no preset")
            return "dgx1-v100", None
    pcie = says("pcie", "plx", "pci-e", "pci express")
    generation = {"a100": 4, "a10": 4, "l4": 4, "l40s": 4, "h100": 5, "h200": 5}.get(family)
    if pcie and generation:  # PCIe 4.0 and 5.0 cards
        if re.search(r"dual[\s-]*root|two[\s-]*(cpu|socket)|2[\s-]*socket|qpi|upi", text):
            raise Skip(f"PCIe {generation}.0 box across two sockets: the socket link's bandwidth "
                       "depends on the CPU, and there is no preset (platforms/PRESETS.md)")
        return f"pcie8-gen{generation}-single-root", (
            None if re.search(r"single[\s-]*root|one[\s-]*(cpu|socket)|pcie[\s\d.-]*switch|plx", text)
            else f"'{row.get('intra_link', '')}': the GPUs read as behind PCIe {generation}.0 "
                 "switches of one CPU (single-root)")
    if pcie and family in ("v100", "p100", "titan x", "titan v", "titan rtx", "1080", "2080",
                           "t4", "k80"):
        dual = re.search(r"dual[\s-]*root|two[\s-]*(cpu|socket)|2[\s-]*socket|qpi|upi", text)
        single = re.search(r"single[\s-]*root|one[\s-]*(cpu|socket)", text)
        if dual and "fdr" in text:
            return "pcie8-fdr", None
        if dual:
            return "pcie8-dual-root", None
        if single:
            return "pcie8-single-root", None
        raise Skip(f"PCIe box '{row.get('intra_link', '')}': its wiring (single- or dual-root) "
                   "is not stated")
    raise Skip(f"no preset for GPU '{row.get('gpu', '')}' with intra-node link "
               f"'{row.get('intra_link', '')}' (presets: platforms/PRESETS.md)")


def int_or_none(text):
    m = re.match(r"^\s*(\d+)", text or "")
    return int(m.group(1)) if m else None


# Each preset's NICs per node, summed, in Gb/s (platforms/PRESETS.md).
PRESET_NIC_GBPS = {"dgx1-v100": 400, "dgx2h": 800, "dgx-a100": 1600, "hgx-h200": 3200,
                   "dgx-h100": 3200, "hgx-b200": 3200, "aws-p4d": 400, "aws-p5": 3200,
                   "pcie8-fdr": 56, "pcie8-single-root": 100, "pcie8-dual-root": 100,
                   "pcie8-gen4-single-root": 200, "pcie8-gen5-single-root": 400,
                   "pcie4-25gbe": 25}
# InfiniBand generations' 4x port rates, Gb/s.
_IB_GBPS = {"fdr": 56, "edr": 100, "hdr": 200, "ndr": 400, "xdr": 800}


def node_nic_gbps(text, gpus_per_node):
    """A node's NICs summed, in Gb/s, as a row's network column states them, or None: 'N x R
    Gb/s' (or Gbps, GbE), 'R Gb/s per GPU' (x the node's GPUs), one 'R Gb/s', or an InfiniBand
    generation with a count ('4x EDR'). A generation alone ('HDR InfiniBand': one port or
    eight?) is None: the preset's datasheet stands. Bits, not bytes."""
    t = text.lower()
    rate = r"(\d+(?:\.\d+)?)\s*g(?:b/s|bps|bit/s|be|b\b|\b)"
    # "8x 200Gb/s", "2x InfiniBand EDR 100 Gb/s", "8x ConnectX-7 400 Gb/s": a few words between.
    m = re.search(rf"(\d+)\s*[x×]\s*(?:[a-z][a-z0-9-]*\s+){{0,3}}{rate}", t)
    if m:
        return int(m.group(1)) * float(m.group(2))
    m = re.search(rf"{rate}\s*(?:per|/|each)\s*gpu", t)
    if m:
        return float(m.group(1)) * gpus_per_node
    m = re.search(rate, t)
    if m:
        return float(m.group(1))
    for name, gbps in _IB_GBPS.items():
        m = re.search(rf"(\d+)\s*[x×]\s*(?:infiniband\s*)?{name}\b", t)
        if m:
            return int(m.group(1)) * gbps
    return None
