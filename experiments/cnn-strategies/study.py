"""CNN parallelization strategies from 8 to 1024 V100s (experiments/cnn-strategies/README.md).

The kind of result of Kahira et al. (HPDC 2021, the oracle): for ResNet-50 and the 3-D CosmoFlow,
iteration time and throughput of data, spatial, filter, channel and pipeline parallelism (each
with data parallelism around it) on DGX-1 V100 machines, weak scaling over the data-parallel
degree, and the GPU count where each strategy stops scaling with the kind of communication that
limits it. Compute is the roofline generator's (workloads/GENERATOR.md); nothing is fitted.
Usage: study.py [--dtsim PATH] [--out DIR] [--quick]   (--quick: 8..64 GPUs)
Writes DIR/cnn_strategies.csv and DIR/summary.md.
"""
import argparse
import csv
import json
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
GPUS = [8, 16, 32, 64, 128, 256, 512, 1024]
QUICK_GPUS = [8, 16, 32, 64]
GPUS_PER_NODE = 8  # dgx1-v100 (platforms/PRESETS.md)
KINDS = ["dp", "tp", "halo", "spatial", "pp"]  # result.exposed_sec keys
STOP_EFFICIENCY = 0.80  # a strategy stops scaling below 80 % of its first point's samples/s/GPU
DOMINANT_SHARE = 0.10   # a communication kind limits if it is >= 10 % of the iteration
COLLECTIVE_LATENCY = "8.4us"  # NCCL's fixed cost per collective (platforms/PRESETS.md)
ALGORITHM = ["auto:ring,double-tree"]  # set from --algorithm in main()
# Trees as one transfer per edge plus their pipeline's fill (sim/collectives/tree.h): with the
# default (chunked trees) a 1024-GPU run whose all-reduces pick the double tree took 15 min
# here, with fast 2 s, the iteration time within 0.5 % (README, "Limits").
REPLAY = "fast"

# Per model: the dtsim flags, the samples per data-parallel replica (per model-parallel group)
# and the strategies: name -> (model-parallel group size g, --parallel suffix, pipeline?).
MODELS = {
    "resnet50": {
        "flags": ["--model", "resnet50", "--device", "v100", "--precision", "fp32"],
        "per_replica": 32,
        "pipeline_micro_batches": 8,
        "strategies": {
            "data": (1, ""),
            "spatial 2x2": (4, "spatial=2x2"),
            "spatial 2x4": (8, "spatial=2x4"),
            "spatial 4x4": (16, "spatial=4x4"),
            "filter 4": (4, "filter=4"),
            "filter 8": (8, "filter=8"),
            "channel 4": (4, "channel=4"),
            "channel 8": (8, "channel=8"),
            "pipeline 4": (4, "pp=4"),
        },
    },
    "cosmoflow": {
        "flags": ["--model", "cosmoflow", "--image-size", "128", "--device", "v100",
                  "--precision", "fp32"],
        "per_replica": 4,
        "pipeline_micro_batches": 4,
        "strategies": {
            "data": (1, ""),
            "spatial 2x2x2": (8, "spatial=2x2x2"),
            "filter 4": (4, "filter=4"),
            "filter 8": (8, "filter=8"),
            "channel 4": (4, "channel=4"),
            "channel 8": (8, "channel=8"),
            "pipeline 4": (4, "pp=4"),
        },
    },
    # The oracle's case for spatial parallelism: a volume whose data-parallel replica does not
    # fit a 32 GiB V100 (one sample per group; no pipeline: one sample makes one micro-batch).
    "cosmoflow512": {
        "flags": ["--model", "cosmoflow", "--image-size", "512", "--device", "v100",
                  "--precision", "fp32"],
        "per_replica": 1,
        "pipeline_micro_batches": 1,
        "strategies": {
            "data": (1, ""),
            "spatial 2x2x2": (8, "spatial=2x2x2"),
            "spatial 4x4x4": (64, "spatial=4x4x4"),
            "filter 8": (8, "filter=8"),
            "channel 8": (8, "channel=8"),
        },
    },
}
FIELDS = (["model", "strategy", "gpus", "nodes", "parallel", "micro_batch", "micro_batches",
           "global_batch", "iteration_time_sec", "samples_per_sec", "samples_per_sec_per_gpu",
           "efficiency", "compute_sec", "bubble_fraction"] +
          [f"exposed_{k}_sec" for k in KINDS] + ["memory_gib", "wall_sec", "error", "command"])


def memory_gib(report):
    """The worst rank's peak memory in GiB if the report has a "memory" object, else ''."""
    mem = report.get("memory") or report.get("result", {}).get("memory")
    if not isinstance(mem, dict):
        return ""
    peaks = [mem.get("peak_bytes")] + [s.get("peak_bytes") for s in mem.get("stages", [])
                                       if isinstance(s, dict)]
    peaks = [p for p in peaks if isinstance(p, (int, float))]
    return f"{max(peaks) / 2**30:.3f}" if peaks else ""


def run_one(dtsim, model, spec, strategy, gpus, platforms, work):
    g, split = spec["strategies"][strategy]
    dp = gpus // g
    pipeline = split.startswith("pp=")
    parallel = f"dp={dp}" + (f",{split}" if split else "")
    if pipeline:
        m = spec["pipeline_micro_batches"]
        micro_batch = spec["per_replica"] // m
    else:
        m, micro_batch = 1, spec["per_replica"]
    global_batch = micro_batch * m * dp
    nodes = max(1, gpus // GPUS_PER_NODE)
    platform = platforms / f"dgx1_v100_{nodes}nodes.json"
    if not platform.exists():
        platform.write_text(json.dumps({"preset": "dgx1-v100", "nodes": nodes}) + "\n")
    report = work / f"{model}_{strategy.replace(' ', '_')}_{gpus}.json"
    args = spec["flags"] + ["--micro-batch", str(micro_batch), "--global-batch",
                            str(global_batch), "--parallel", parallel, "--ranks", str(gpus),
                            "--platform", str(platform), "--collective-latency",
                            COLLECTIVE_LATENCY, "--algorithm", ALGORITHM[0], "--replay", REPLAY]
    if pipeline:
        args += ["--schedule", "1f1b"]
    row = {"model": model, "strategy": strategy, "gpus": gpus, "nodes": nodes,
           "parallel": parallel, "micro_batch": micro_batch, "micro_batches": m,
           "global_batch": global_batch, "error": "",
           "command": "dtsim simulate " + " ".join(args).replace(str(platforms) + "/", "")}
    start = time.monotonic()
    proc = subprocess.run(["nice", dtsim, "simulate"] + args + ["--report", str(report)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    row["wall_sec"] = f"{time.monotonic() - start:.2f}"
    if proc.returncode != 0:
        row["error"] = (proc.stderr.strip().splitlines() or ["rc %d" % proc.returncode])[-1]
        return row
    rep = json.loads(report.read_text())
    res = rep["result"]
    it = res["iteration_time_sec"]
    exposed = res.get("exposed_sec", {})
    unknown = set(exposed) - set(KINDS)
    if unknown:
        print(f"study.py: unexpected exposed_sec kinds {sorted(unknown)}", file=sys.stderr)
    row.update({"iteration_time_sec": f"{it:.6f}", "samples_per_sec": f"{global_batch / it:.1f}",
                "samples_per_sec_per_gpu": f"{global_batch / it / gpus:.3f}",
                "compute_sec": f"{res.get('compute_sec', 0):.6f}",
                "bubble_fraction": f"{res.get('bubble_fraction', 0):.4f}",
                "memory_gib": memory_gib(rep)})
    for k in KINDS:
        row[f"exposed_{k}_sec"] = f"{exposed.get(k, 0.0):.6f}"
    report.unlink()
    return row


def stop_point(rows):
    """(last N that scales, first N below the rule or None, the row where the rule is read)."""
    ok = [r for r in rows if not r["error"]]
    if not ok:
        return None, None, None
    base = float(ok[0]["samples_per_sec_per_gpu"])
    last = ok[0]
    for r in ok:
        r["efficiency"] = f"{float(r['samples_per_sec_per_gpu']) / base:.3f}"
    for r in ok:
        if float(r["efficiency"]) < STOP_EFFICIENCY:
            return last["gpus"], r["gpus"], r
        last = r
    return last["gpus"], None, last


def limiter(row, base):
    """The exposed-communication kind with the largest share of the iteration at `row` (compute
    if none reaches DOMINANT_SHARE), its share, and the kind whose exposed time grew most since
    `base` (the strategy's first point)."""
    it = float(row["iteration_time_sec"])
    shares = {k: float(row[f"exposed_{k}_sec"]) / it for k in KINDS}
    kind = max(shares, key=shares.get)
    growth = {k: float(row[f"exposed_{k}_sec"]) - float(base[f"exposed_{k}_sec"]) for k in KINDS}
    grew = max(growth, key=growth.get)
    name = kind if shares[kind] >= DOMINANT_SHARE else "compute"
    return name, shares[kind], (grew if growth[grew] > 0 else "-"), shares


def fmt_time(v):
    return f"{float(v) * 1e3:.1f}" if v not in ("", None) else "—"


def summary(rows, gpus, out, runtime):
    lines = ["# CNN strategies: iteration time and throughput, 8 to 1024 V100s", "",
             f"dtsim simulate, DGX-1 V100 preset (8 GPUs per node), algorithm {ALGORITHM[0]} "
             f"(--replay {REPLAY}), NCCL latency "
             f"{COLLECTIVE_LATENCY} per collective; compute from the roofline generator (fp32). "
             f"Weak scaling over the data-parallel degree: fixed samples per model-parallel "
             f"group. samples/s = global batch / iteration time. Runs: {len(rows)}, "
             f"{sum(1 for r in rows if r['error'])} failed; study time {runtime:.0f} s.", "",
             f"**Stop rule.** A strategy stops scaling at the first GPU count where its "
             f"samples/s per GPU falls below {STOP_EFFICIENCY:.0%} of its value at its first "
             f"point (8 GPUs; 16 for spatial 4x4). \"Scales to\" is the last count before that. "
             f"**Limiter** at that point: the exposed-communication kind (result.exposed_sec: "
             f"{', '.join(KINDS)}) with the largest share of the iteration, or compute if none "
             f"reaches {DOMINANT_SHARE:.0%}; \"grew most\" is the kind whose exposed seconds "
             f"grew most since the first point. Strategies that never fall below the rule show "
             f"the limiter at their last point.", "",
             "Memory per GPU: the reports of these runs have no \"memory\" object (dtsim has no "
             "CNN memory model yet), so memory_gib in the CSV is empty."
             if not any(r.get("memory_gib") for r in rows) else
             "Memory per GPU: memory_gib is the report's \"memory\" object's worst-rank peak "
             "(sim/strategies/CNN.md, \"Memory\"; capacity of a V100: 32 GiB).", ""]
    for model, spec in MODELS.items():
        mrows = [r for r in rows if r["model"] == model]
        lines += [f"## {model}" + {"cosmoflow": " (128^3 cube)", "cosmoflow512": " (512^3 cube)"}
                  .get(model, " (224^2)"), "",
                  f"{spec['per_replica']} samples per data-parallel replica (model-parallel "
                  f"group); pipeline: {spec['pipeline_micro_batches']} micro-batches of "
                  f"{spec['per_replica'] // spec['pipeline_micro_batches']}, 1F1B.", "",
                  "### Iteration time (ms)", "",
                  "| strategy | " + " | ".join(str(n) for n in gpus) + " |",
                  "|---|" + "---:|" * len(gpus)]
        by = {(r["strategy"], r["gpus"]): r for r in mrows}
        for s in spec["strategies"]:
            cells = []
            for n in gpus:
                r = by.get((s, n))
                cells.append("—" if r is None else ("error" if r["error"] else
                                                      fmt_time(r["iteration_time_sec"])))
            lines.append(f"| {s} | " + " | ".join(cells) + " |")
        if any(r.get("memory_gib") for r in mrows):
            lines += ["", "### Memory per GPU (GiB, the report's worst-rank peak)", "",
                      "| strategy | " + " | ".join(str(n) for n in gpus) + " |",
                      "|---|" + "---:|" * len(gpus)]
            for s in spec["strategies"]:
                cells = []
                for n in gpus:
                    r = by.get((s, n))
                    cells.append("—" if r is None or r["error"] or not r["memory_gib"] else
                                 f"{float(r['memory_gib']):.2f}")
                lines.append(f"| {s} | " + " | ".join(cells) + " |")
        lines += ["", "### Samples/s (whole job; best per GPU count in bold)", "",
                  "| strategy | " + " | ".join(str(n) for n in gpus) + " |",
                  "|---|" + "---:|" * len(gpus)]
        best = {}
        for n in gpus:
            cand = [r for r in mrows if r["gpus"] == n and not r["error"]]
            if cand:
                best[n] = max(cand, key=lambda r: float(r["samples_per_sec"]))["strategy"]
        for s in spec["strategies"]:
            cells = []
            for n in gpus:
                r = by.get((s, n))
                if r is None:
                    cells.append("—")
                elif r["error"]:
                    cells.append("error")
                else:
                    v = f"{float(r['samples_per_sec']):,.0f}"
                    cells.append(f"**{v}**" if best.get(n) == s else v)
            lines.append(f"| {s} | " + " | ".join(cells) + " |")
        lines += ["", "Best strategy: " + ", ".join(f"{n} GPUs {best[n]}" for n in gpus
                                                     if n in best) + ".", "",
                  "### Where each stops scaling", "",
                  "| strategy | samples/s/GPU at first point | efficiency at last | scales to "
                  "| falls below at | limiter (share) | grew most | exposed shares at that point |",
                  "|---|---:|---:|---:|---:|---|---|---|"]
        for s in spec["strategies"]:
            srows = sorted((r for r in mrows if r["strategy"] == s), key=lambda r: r["gpus"])
            ok = [r for r in srows if not r["error"]]
            if not ok:
                lines.append(f"| {s} | — | — | — | — | all runs failed | — | — |")
                continue
            upto, stop, at = stop_point(srows)
            name, share, grew, shares = limiter(at, ok[0])
            sh = ", ".join(f"{k} {v:.0%}" for k, v in shares.items() if v >= 0.005) or "none"
            bub = float(at["bubble_fraction"])
            if bub > 0:
                sh += f"; bubble {bub:.0%}"
            lines.append(f"| {s} | {float(ok[0]['samples_per_sec_per_gpu']):.1f} "
                         f"({ok[0]['gpus']} GPUs) | {float(ok[-1]['efficiency']):.2f} | {upto} | "
                         f"{stop if stop else 'no stop to ' + str(ok[-1]['gpus'])} | "
                         f"{name} ({share:.0%}) at {at['gpus']} | {grew} | {sh} |")
        lines.append("")
    failed = [r for r in rows if r["error"]]
    if failed:
        lines += ["## Failed runs", ""] + [f"- {r['model']} {r['strategy']} {r['gpus']} GPUs: "
                                           f"{r['error']}" for r in failed] + [""]
    (out / "summary.md").write_text("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtsim", default=str(ROOT / "build" / "sim" / "dtsim"))
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--quick", action="store_true", help="8..64 GPUs only")
    ap.add_argument("--algorithm", default="auto:ring,double-tree",
                    help="collective algorithm (default: NCCL's choice between ring and tree)")
    opts = ap.parse_args()
    ALGORITHM[0] = opts.algorithm
    gpus = QUICK_GPUS if opts.quick else GPUS
    out = pathlib.Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cnn-strategies-") as tmp:
        tmp = pathlib.Path(tmp)
        for model, spec in MODELS.items():
            for s, (g, _) in spec["strategies"].items():
                for n in gpus:
                    if g > n or n % g:
                        continue
                    r = run_one(opts.dtsim, model, spec, s, n, tmp, tmp)
                    rows.append(r)
                    print(f"{model:10s} {s:14s} {n:5d} GPUs  "
                          + (f"error: {r['error']}" if r["error"] else
                             f"{float(r['iteration_time_sec']) * 1e3:8.2f} ms  "
                             f"{float(r['samples_per_sec']):10.0f} samples/s")
                          + f"  ({r['wall_sec']} s)", flush=True)
    runtime = time.monotonic() - start
    for model, spec in MODELS.items():  # efficiencies
        for s in spec["strategies"]:
            stop_point(sorted((r for r in rows if r["model"] == model and r["strategy"] == s),
                              key=lambda r: r["gpus"]))
    with open(out / "cnn_strategies.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, restval="")
        w.writeheader()
        w.writerows(rows)
    summary(rows, gpus, out, runtime)
    print(f"study.py: {len(rows)} runs in {runtime:.0f} s -> {out}")
    return 1 if all(r["error"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
