"""Reading a PyTorch profiler trace (Kineto's Chrome-trace JSON) into plain, checked events.

No torch is needed. The layout read is the one ``torch.profiler`` writes with Kineto
(``export_chrome_trace``, ``tensorboard_trace_handler``): one JSON object with a
``traceEvents`` array, plain or gzip-compressed; ``distributedInfo`` (``rank``,
``world_size``), ``deviceProperties`` and ``baseTimeNanoseconds`` when present. Only complete
events (``"ph": "X"``) carry work; flows, counters and metadata events are skipped. What each
field means to the importer: workloads/KINETO.md.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass, field
from typing import Any

# GPU-side activities that are work (kernels, copies, fills). Other device categories
# (gpu_user_annotation, synchronisation records) are skipped.
DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
SKIPPED_CATEGORIES = ("gpu_user_annotation", "cuda_sync", "Trace", "overhead")
MAX_DURATION_US = 1e15  # 10^9 s, the longest time a workload trace holds (workloads/FORMAT.md)
MAX_PROBLEMS = 20  # a broken file lists at most this many problems
_MAX_ECHO = 80  # characters of a name echoed in a message


class KinetoError(Exception):
    """A trace the importer cannot use; the message names the file and where, one problem a
    line."""


@dataclass(frozen=True)
class Event:
    """One complete event of the trace."""

    index: int  # position in traceEvents: the JSON pointer /traceEvents/<index>
    cat: str
    name: str
    pid: int | str
    tid: int | str
    start_us: float
    end_us: float
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def thread(self) -> tuple[Any, Any]:
        return (self.pid, self.tid)


@dataclass
class KinetoTrace:
    """The events of one rank's trace file."""

    path: str
    host: list[Event]  # CPU-side events: ops, annotations, Python scopes, runtime calls
    device: list[Event]  # GPU activities (DEVICE_CATEGORIES)
    rank: int | None  # distributedInfo.rank
    world_size: int | None  # distributedInfo.world_size
    device_name: str  # deviceProperties[0].name, "" without it
    base_time_ns: int | None  # baseTimeNanoseconds


def echo(text: Any) -> str:
    """A value for a message, bounded."""
    text = str(text)
    return text if len(text) <= _MAX_ECHO else text[:_MAX_ECHO] + "..."


def _load(path: str) -> Any:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise KinetoError(f"{path}: cannot read: {error.strerror or error}") from error
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise KinetoError(f"{path}: not a readable gzip file: {error}") from error
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise KinetoError(f"{path}: byte {error.start}: not UTF-8") from error
    except json.JSONDecodeError as error:
        raise KinetoError(f"{path}: line {error.lineno} column {error.colno}: not JSON: "
                          f"{error.msg}") from error
    except RecursionError as error:
        raise KinetoError(f"{path}: JSON nested too deep") from error


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and \
        math.isfinite(value)


def _event(raw: Any, index: int, problems: list[str]) -> Event | None:
    where = f"/traceEvents/{index}"
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected an object")
        return None
    if raw.get("ph") != "X":
        return None  # flows, counters, instants, metadata: no work
    name, cat, args = raw.get("name"), raw.get("cat", ""), raw.get("args", {})
    ts, dur = raw.get("ts"), raw.get("dur")
    bad = len(problems)
    if not isinstance(name, str):
        problems.append(f"{where}/name: expected a string")
    if not isinstance(cat, str):
        problems.append(f"{where}/cat: expected a string")
    if not isinstance(args, dict):
        problems.append(f"{where}/args: expected an object")
    if not _number(ts):
        problems.append(f"{where}/ts: expected a finite number (microseconds)")
    if not _number(dur) or not 0 <= dur <= MAX_DURATION_US:
        problems.append(f"{where}/dur: expected a number from 0 to {MAX_DURATION_US:g} "
                        "(microseconds)")
    elif _number(ts) and not math.isfinite(ts + dur):
        problems.append(f"{where}/ts: {ts:g} + dur overflows")
    for key in ("pid", "tid"):
        value = raw.get(key)
        if not isinstance(value, (int, str)) or isinstance(value, bool):
            problems.append(f"{where}/{key}: expected an integer or a string")
    if len(problems) > bad:
        return None
    return Event(index, cat, name, raw["pid"], raw["tid"], float(ts), float(ts) + float(dur),
                 args)


def _optional_int(doc: dict[str, Any], key: str, where: str, low: int,
                  problems: list[str]) -> int | None:
    value = doc.get(key)
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        problems.append(f"{where}/{key}: expected an integer >= {low}")
        return None
    return value


def read_kineto(path: str) -> KinetoTrace:
    """Reads and checks one trace file. Raises KinetoError listing every problem found (at
    most MAX_PROBLEMS)."""
    doc = _load(path)
    if isinstance(doc, list):
        raise KinetoError(
            f"{path}: /: a bare JSON list of events, as torch's legacy profiler (a build without "
            "Kineto, such as Debian's torch 1.13) writes it: its events have no args (no "
            "shapes, sequence numbers or communication sizes). Record with a torch built with "
            "Kineto, or write the trace with dtsim_profile.kineto_export (workloads/KINETO.md)")
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise KinetoError(f"{path}: /traceEvents: expected an object with a traceEvents array "
                          "(a PyTorch profiler Chrome trace)")
    problems: list[str] = []
    host: list[Event] = []
    device: list[Event] = []
    for index, raw in enumerate(doc["traceEvents"]):
        event = _event(raw, index, problems)
        if len(problems) >= MAX_PROBLEMS:
            break
        if event is None or event.cat in SKIPPED_CATEGORIES:
            continue
        (device if event.cat in DEVICE_CATEGORIES else host).append(event)
    info = doc.get("distributedInfo", {})
    rank = world = None
    if not isinstance(info, dict):
        problems.append("/distributedInfo: expected an object")
    else:
        rank = _optional_int(info, "rank", "/distributedInfo", 0, problems)
        world = _optional_int(info, "world_size", "/distributedInfo", 1, problems)
    base = _optional_int(doc, "baseTimeNanoseconds", "", 0, problems)
    if problems:
        raise KinetoError("\n".join(f"{path}: {p}" for p in problems[:MAX_PROBLEMS]))
    if rank is not None and world is not None and rank >= world:
        raise KinetoError(f"{path}: /distributedInfo/rank: {rank} is not below world_size "
                          f"{world}")
    props = doc.get("deviceProperties")
    device_name = ""
    if isinstance(props, list) and props and isinstance(props[0], dict):
        device_name = str(props[0].get("name", ""))
    return KinetoTrace(path, host, device, rank, world, device_name, base)
