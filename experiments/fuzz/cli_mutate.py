#!/usr/bin/python3
"""CLI-level mutation of dtsim (issue #21): runs `dtsim simulate` and `dtsim collective` on
mutated copies of the shipped inputs (a trace, a platform spec, a graph, a SimGrid XML, a job
file) and on mutated flag values, and `dtsim memory` on mutated model flags, and counts what
each run ended with. dtsim may exit 0 (ran) or 2 (bad
input, said on stderr); anything else is a finding: exit 1 (internal error), a signal (crash),
or no end within 30 s of CPU time (hang; CPU time, so that a busy machine does not make hangs:
the wall-clock limit is ten times that).

    [DTSIM=path] experiments/fuzz/cli_mutate.py [SECONDS=600] [SEED=0]

Findings are kept in experiments/fuzz/results/cli-findings/ (the command and its inputs).
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DTSIM = Path(os.environ.get("DTSIM", ROOT / "build" / "sim" / "dtsim"))
TIMEOUT_SEC = 30

INPUTS = {
    "workload": ["tests/testdata/sim_three_layers.json", "tests/testdata/wl_tiny_v3.json"],
    "platform": ["tests/testdata/sim_star4_background_periodic.json",
                 "tests/testdata/sim_fat_tree16.json", "tests/testdata/sim_two_nodes.json",
                 "tests/testdata/sim_torus4x4.json", "tests/testdata/pf_cluster.xml"],
    "graph": ["tests/testdata/graph_pipeline_2stage.json",
              "tests/testdata/graph_two_communicators.json"],
}
FLAG_VALUES = {
    "--algorithm": ["ring", "tree", "double-tree", "halving-doubling", "recursive-doubling",
                    "direct", "hierarchical", "torus-2d", "auto", "auto:ring,tree"],
    "--replay": ["collapsed", "fast", "step"],
    "--iterations": ["1", "2", "3", "0", "-1", "100", "2147483647"],
    "--bucket-mb": ["25", "0.001", "1e-30", "1e30", "nan"],
    "--collective-latency": ["0us", "8.4us", "1e9s", "1e308s", "-1us", "1"],
    "--chunk": ["512KiB", "1", "0", "1PiB"],
    "--placement": ["linear", "round-robin", "random:7", "topology-aware", "random:-1"],
}
# The model flags of `dtsim memory` and hybrid `simulate` (the catalogue's models and the zoo's
# CNNs, valid and invalid values); a switch is None.
MODEL_FLAGS = {
    "--model": ["gpt3-1.3b", "llama3.1-8b", "llama3-70b", "mixtral-8x7b", "resnet50",
                "cosmoflow", "no-such-model"],
    "--parallel": ["tp=2,pp=2,dp=4", "tp=8", "dp=1", "pp=3", "tp=0", "cp=2,dp=2", "ep=2,dp=2",
                   "spatial=2x2", "filter=4", "channel=2,dp=2", "tp=1,pp=1,dp=2147483647", ","],
    "--micro-batch": ["1", "2", "0", "-3", "1000000"],
    "--global-batch": ["16", "0", "7", "2147483647"],
    "--seq-len": ["1024", "8192", "0", "1", "99999999"],
    "--recompute": ["none", "selective", "selective-op", "full", "partial"],
    "--cross-entropy": ["fused", "pytorch", ""],
    "--zero": ["0", "1", "2", "3", "4"],
    "--dp-shard": ["0", "2", "3", "-1"],
    "--schedule": ["1f1b", "gpipe", "interleaved:2", "interleaved:0", "zigzag",
                   "interleaved-torch:2", "interleaved-torch:"],
    "--precision": ["bf16", "fp32", "fp8"],
    "--device": ["h100", "a100", "v100", "tpu", "h100@500W", "a100@200W", "h100@1e308W",
                 "h100@", "@500W", "h100@500W@1W"],
    "--image-size": ["224", "512", "0", "7"],
    "--stage-layers": ["12,12", "0,24", "1", "a,b"],
    "--sequence-parallel": None,
    "--attention": ["flash1", "flash2", "cudnn", "flash3", ""],
    "--fp8-recipe": ["torchao", "torchao-rowwise", "te", "megatron-te", "delayed", ""],
}
JOB = "tests/testdata/job_gpt3_1.3b.json"  # its platform made absolute before mutating
# Texts that broke readers before: huge numbers, deep nesting, bad UTF-8, long strings.
NASTY = [b"1e308", b"-1e308", b"1e-320", b"0", b"-1", b"18446744073709551616", b"null", b"[]",
         b"{}", b'"' + b"x" * 5000 + b'"', b"[" * 50000 + b"]" * 50000, b'"\xff\xfe"',
         b"true", b'"1e308s"', b'"0Bps"', b'"1e308GBps"']


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not data:
            break
        choice = rng.random()
        i = rng.randrange(len(data))
        if choice < 0.3:
            data[i] = rng.randrange(256)
        elif choice < 0.5:
            del data[i:i + rng.randint(1, 16)]
        elif choice < 0.7:
            data[i:i] = data[rng.randrange(len(data)):][:rng.randint(1, 64)]
        else:
            data[i:i] = rng.choice(NASTY)
    return bytes(data)


def mutate_json(data: bytes, rng: random.Random) -> bytes:
    """Replaces one scalar of the document with a nasty value (the structure stays valid)."""
    try:
        doc = json.loads(data)
    except ValueError:
        return mutate_bytes(data, rng)
    slots = []

    def walk(value: object) -> None:
        items = value.items() if isinstance(value, dict) else enumerate(value) \
            if isinstance(value, list) else []
        for key, child in items:
            slots.append((value, key))
            walk(child)

    walk(doc)
    if not slots:
        return mutate_bytes(data, rng)
    container, key = rng.choice(slots)
    container[key] = json.loads(rng.choice(NASTY[:10] + [b'"' + b"y" * 300 + b'"']))
    return json.dumps(doc).encode()


def model_args(rng: random.Random, work: Path) -> list[str]:
    """`memory` with mutated model flags, or `simulate --job` with a mutated job file."""
    if rng.random() < 0.7:
        args = [str(DTSIM), "memory", "--model", rng.choice(MODEL_FLAGS["--model"])]
        for flag in rng.sample(sorted(set(MODEL_FLAGS) - {"--model"}), rng.randint(0, 5)):
            values = MODEL_FLAGS[flag]
            args += [flag] if values is None else [flag, rng.choice(values)]
        return args
    job = json.loads((ROOT / JOB).read_text())
    job["platform"] = str(ROOT / "tests" / "testdata" / job["platform"])
    data = json.dumps(job).encode()
    data = (mutate_json if rng.random() < 0.5 else mutate_bytes)(data, rng)
    (work / "job.json").write_bytes(data)
    return [str(DTSIM), "simulate", "--job", str(work / "job.json")]


def limit_cpu() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (TIMEOUT_SEC, TIMEOUT_SEC + 5))


def outcome_of(args: list[str]) -> int | str:
    """dtsim's exit code (negative: the signal that ended it), or "hang"."""
    try:
        code = subprocess.run(args, cwd=ROOT, capture_output=True, timeout=10 * TIMEOUT_SEC,
                              preexec_fn=limit_cpu).returncode
    except subprocess.TimeoutExpired:
        return "hang"
    return "hang" if code in (-signal.SIGXCPU, -signal.SIGKILL) else code


def one_run(rng: random.Random, work: Path) -> tuple[list[str], int | str]:
    verb = rng.choice(["simulate", "simulate", "collective", "model"])
    if verb == "model":
        args = model_args(rng, work) + ["--report", str(work / "report.json")]
        return args, outcome_of(args)
    args = [str(DTSIM), verb]
    kinds = ["platform"] + (["workload" if rng.random() < 0.6 else "graph"]
                            if verb == "simulate" else [])
    for kind in kinds:
        source = ROOT / rng.choice(INPUTS[kind])
        data = source.read_bytes()
        if rng.random() < 0.8:
            data = (mutate_json if rng.random() < 0.5 else mutate_bytes)(data, rng)
        target = work / (kind + source.suffix)
        target.write_bytes(data)
        args += ["--" + kind, str(target)]
    if verb == "collective" or "--workload" in args:
        args += ["--ranks", rng.choice(["2", "4", "3", "16", "0"])]
    if verb == "collective":
        args += ["--bytes", rng.choice(["1MB", "1", "0", "1PiB", "100MB"])]
    for flag in rng.sample(sorted(FLAG_VALUES), rng.randint(0, 3)):
        args += [flag, rng.choice(FLAG_VALUES[flag])]
    args += ["--report", str(work / "report.json")]
    return args, outcome_of(args)


def main() -> int:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 600
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    findings_dir = ROOT / "experiments" / "fuzz" / "results" / "cli-findings"
    counts: dict[str, int] = {}
    runs = findings = 0
    end = time.monotonic() + seconds
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        while time.monotonic() < end:
            args, outcome = one_run(rng, work)
            runs += 1
            key = f"exit {outcome}" if isinstance(outcome, int) and outcome >= 0 else \
                f"signal {-outcome}" if isinstance(outcome, int) else str(outcome)
            counts[key] = counts.get(key, 0) + 1
            if outcome not in (0, 2):
                findings += 1
                keep = findings_dir / f"finding-{findings}"
                keep.mkdir(parents=True, exist_ok=True)
                for path in work.iterdir():
                    shutil.copy(path, keep / path.name)
                (keep / "command").write_text(" ".join(args) + f"\n# {key}\n")
    print(f"cli_mutate: {runs} runs in {seconds:.0f} s, {findings} findings; "
          + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
