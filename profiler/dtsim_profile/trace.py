"""Workload traces, format version 3 (workloads/FORMAT.md): value types, checks, writer.

The writer emits the keys in FORMAT.md's order, indents by 2 spaces, rounds times to 9
significant digits and ends the file with a newline, so equal traces give equal bytes.
Before writing, every document passes this module's own checks and, when the
``jsonschema`` package can be imported, workloads/trace.schema.json.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT_VERSION = 3
CLOCKS = ("cuda_events", "thread_cpu", "wall")
# The profiler's CUDA kernel timing (clock "cuda_kernels", kernels.py) has no name of its own
# in format versions 2 and 3, whose readers refuse clocks outside CLOCKS. Its durations are GPU
# timestamps too (CUPTI's start/end of each kernel, from the same GPU timer as CUDA events),
# so it is written as "cuda_events", and the trace's `source` names the method. Once the
# format accepts "cuda_kernels" (a format change: new version), set this to "cuda_kernels"
# and add it to CLOCKS.
KERNELS_TRACE_CLOCK = "cuda_events"


def trace_clock(clock: str) -> str:
    """The measurement.clock written for the profiler's clock `clock`."""
    return KERNELS_TRACE_CLOCK if clock == "cuda_kernels" else clock
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workloads" / "trace.schema.json"

_TOP_KEYS = ("format_version", "model", "device", "precision", "batch_per_device", "source",
             "optimizer_sec", "layers")
_LAYER_REQUIRED = ("name", "forward_sec", "backward_sec", "param_bytes")
_LAYER_TIMES = ("forward_flops", "forward_iqr_sec", "backward_iqr_sec")  # optional numbers
_LAYER_OPTIONAL = _LAYER_TIMES + ("activation_bytes",)
_MEASUREMENT_KEYS = ("tool", "framework", "clock", "warmup_iterations", "timed_iterations",
                     "date", "host")
_INT32_MAX = 2**31 - 1
_UINT64_MAX = 2**64 - 1
_MAX_BYTES = 2**50  # the readers' kMaxBytes (workloads/trace.h)


class TraceCheckError(Exception):
    """A trace that would not be valid; the message lists every problem, one per line."""


@dataclass(frozen=True)
class TraceLayer:
    name: str
    forward_sec: float
    backward_sec: float
    param_bytes: int  # gradient bytes this layer contributes to the all-reduce
    forward_iqr_sec: float | None = None
    backward_iqr_sec: float | None = None
    activation_bytes: int | None = None  # bytes of the output the layer hands on (v3)


@dataclass(frozen=True)
class Measurement:
    tool: str  # e.g. "dtsim_profile 0.1"
    framework: str  # e.g. "torch 2.11.0+cu130"
    clock: str  # one of CLOCKS
    warmup_iterations: int
    timed_iterations: int
    date: str  # UTC day, YYYY-MM-DD
    host: str


@dataclass(frozen=True)
class Trace:
    model: str
    device: str
    precision: str
    batch_per_device: int
    source: str
    optimizer_sec: float
    layers: list[TraceLayer]  # forward order
    measurement: Measurement | None = None


def _r9(value: float) -> float:
    """Rounds to 9 significant digits (sub-nanosecond digits carry no information)."""
    return float(f"{value:.9g}")


def trace_to_dict(trace: Trace) -> dict[str, Any]:
    """Returns the JSON document of `trace`, keys in FORMAT.md order."""
    layers = []
    for layer in trace.layers:
        item: dict[str, Any] = {
            "name": layer.name,
            "forward_sec": _r9(layer.forward_sec),
            "backward_sec": _r9(layer.backward_sec),
            "param_bytes": layer.param_bytes,
        }
        if layer.forward_iqr_sec is not None:
            item["forward_iqr_sec"] = _r9(layer.forward_iqr_sec)
        if layer.backward_iqr_sec is not None:
            item["backward_iqr_sec"] = _r9(layer.backward_iqr_sec)
        if layer.activation_bytes is not None:
            item["activation_bytes"] = layer.activation_bytes
        layers.append(item)
    doc: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "model": trace.model,
        "device": trace.device,
        "precision": trace.precision,
        "batch_per_device": trace.batch_per_device,
        "source": trace.source,
        "optimizer_sec": _r9(trace.optimizer_sec),
        "layers": layers,
    }
    if trace.measurement is not None:
        m = trace.measurement
        doc["measurement"] = {
            "tool": m.tool,
            "framework": m.framework,
            "clock": m.clock,
            "warmup_iterations": m.warmup_iterations,
            "timed_iterations": m.timed_iterations,
            "date": m.date,
            "host": m.host,
        }
    return doc


# ---- checks --------------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_time(value: Any) -> bool:
    """A finite number >= 0."""
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value) and value >= 0


def _check_keys(obj: dict[str, Any], pointer: str, required: tuple[str, ...],
                optional: tuple[str, ...], problems: list[str]) -> None:
    for key in sorted(set(obj) - set(required) - set(optional)):
        problems.append(f"{pointer}/{key}: unknown key")
    for key in required:
        if key not in obj:
            problems.append(f"{pointer}/{key}: missing")


def check_document(doc: Any) -> list[str]:
    """Returns the problems of a trace document ("<JSON pointer>: <problem>"), [] if valid.
    Checks what FORMAT.md requires, including what the schema cannot (unique names)."""
    if not isinstance(doc, dict):
        return ["/: expected an object"]
    problems: list[str] = []
    _check_keys(doc, "", _TOP_KEYS, ("measurement",), problems)
    version = doc.get("format_version")
    if "format_version" in doc and (not _is_int(version) or version not in (1, 2, 3)):
        problems.append("/format_version: expected 1, 2 or 3")
    if not isinstance(doc.get("model", ""), str) or doc.get("model") == "":
        problems.append("/model: expected a non-empty string")
    for key in ("device", "precision", "source"):
        if not isinstance(doc.get(key, ""), str):
            problems.append(f"/{key}: expected a string")
    batch = doc.get("batch_per_device", 1)
    if not _is_int(batch) or not 1 <= batch <= _INT32_MAX:
        problems.append("/batch_per_device: expected an integer between 1 and 2147483647")
    if not _is_time(doc.get("optimizer_sec", 0)):
        problems.append("/optimizer_sec: expected a finite number >= 0")
    _check_layers(doc.get("layers", []), version, problems)
    if "measurement" in doc:
        if version == 1:
            problems.append("/measurement: needs format_version 2")
        _check_measurement(doc["measurement"], problems)
    return problems


def _check_layers(layers: Any, version: Any, problems: list[str]) -> None:
    if not isinstance(layers, list) or not layers:
        problems.append("/layers: expected a non-empty array of layers")
        return
    seen: dict[str, int] = {}
    for i, layer in enumerate(layers):
        pointer = f"/layers/{i}"
        if not isinstance(layer, dict):
            problems.append(f"{pointer}: expected an object")
            continue
        _check_keys(layer, pointer, _LAYER_REQUIRED, _LAYER_OPTIONAL, problems)
        name = layer.get("name")
        if not isinstance(name, str) or not name:
            problems.append(f"{pointer}/name: expected a non-empty string")
        elif name in seen:
            problems.append(f'{pointer}/name: "{name}" already names /layers/{seen[name]}')
        else:
            seen[name] = i
        for key in ("forward_sec", "backward_sec") + _LAYER_TIMES:
            if key in layer and not _is_time(layer[key]):
                problems.append(f"{pointer}/{key}: expected a finite number >= 0")
        param_bytes = layer.get("param_bytes", 0)
        if not _is_int(param_bytes) or not 0 <= param_bytes <= _UINT64_MAX:
            problems.append(f"{pointer}/param_bytes: expected an integer >= 0")
        for key in ("forward_iqr_sec", "backward_iqr_sec"):
            if key in layer and version == 1:
                problems.append(f"{pointer}/{key}: needs format_version 2")
        if "activation_bytes" in layer:
            value = layer["activation_bytes"]
            if not _is_int(value) or not 0 <= value <= _MAX_BYTES:
                problems.append(f"{pointer}/activation_bytes: expected an integer between 0 "
                                "and 2^50")
            if version in (1, 2):
                problems.append(f"{pointer}/activation_bytes: needs format_version 3")


def _check_measurement(m: Any, problems: list[str]) -> None:
    if not isinstance(m, dict):
        problems.append("/measurement: expected an object")
        return
    _check_keys(m, "/measurement", _MEASUREMENT_KEYS, (), problems)
    for key in ("tool", "framework", "date", "host"):
        if not isinstance(m.get(key, ""), str):
            problems.append(f"/measurement/{key}: expected a string")
    if "clock" in m and m["clock"] not in CLOCKS:
        problems.append(f"/measurement/clock: expected one of {', '.join(CLOCKS)}")
    for key, low in (("warmup_iterations", 0), ("timed_iterations", 1)):
        value = m.get(key, low)
        if not _is_int(value) or not low <= value <= _INT32_MAX:
            problems.append(f"/measurement/{key}: expected an integer >= {low}")
    if isinstance(m.get("date"), str) and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", m["date"]):
        problems.append("/measurement/date: expected YYYY-MM-DD")


def schema_problems(doc: Any, schema_path: Path = SCHEMA_PATH) -> list[str]:
    """Problems found by workloads/trace.schema.json; [] when the ``jsonschema`` package or
    the schema file is not available (the own checks still apply)."""
    try:
        import jsonschema  # type: ignore[import-not-found]
    except ImportError:
        return []
    if not schema_path.is_file():
        return []
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    problems = []
    for error in validator_class(schema).iter_errors(doc):
        message = error.message if len(error.message) <= 160 else error.message[:157] + "..."
        problems.append(f"/{'/'.join(str(p) for p in error.absolute_path)}: {message} (schema)")
    return problems


def dumps(doc: dict[str, Any]) -> str:
    """The file text of a trace document."""
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_trace(trace: Trace, path: str | Path) -> dict[str, Any]:
    """Checks `trace` and writes it to `path`; returns the document written.
    Raises TraceCheckError (nothing written) if the document would be invalid."""
    doc = trace_to_dict(trace)
    problems = check_document(doc) + schema_problems(doc)
    if problems:
        raise TraceCheckError("\n".join(f"{path}: {problem}" for problem in problems))
    Path(path).write_text(dumps(doc), encoding="utf-8")
    return doc
