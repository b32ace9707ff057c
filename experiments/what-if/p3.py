#!/usr/bin/env python3
"""What P3 would buy (issue #18): the predicted speedup of `--apply p3=SLICE` (priority-based
parameter propagation: gradient slices sent in the order the next forward pass needs them,
per-bucket updates) for ResNet-50 and VGG-16 data-parallel on 16 V100s of a fat-tree, as the
network's bandwidth shrinks. No published P3 pair is in the validation data, so this is a
prediction, not a check: it shows where the rule says P3 pays (a network too slow to hide the
all-reduces behind the backward pass) and what the slice size does.

Usage: p3.py [--dtsim build/sim/dtsim] [--out results]  (about 2 s; writes p3.csv and p3.md)
"""
import argparse
import csv
import json
import pathlib
import subprocess
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PLATFORM = "platforms/files/fat_tree_256.json"  # 100 Gb/s links, 2-level fat-tree
RANKS = 16
NETWORKS = ["1x", "0.5x", "0.25x", "0.1x", "0.05x"]  # of the platform's link bandwidth
SLICES = ["1MB", "4MB", "25MB"]
MODELS = [("resnet50", 32), ("vgg16", 32)]  # fp32 on V100, the generator's roofline


def iteration_times(dtsim, trace, network, work):
    """The job's iteration time on the network slowed to `network`, then with each p3 slice on
    top of that (dtsim simulate --apply network=... --apply p3=...)."""
    report = work / "r.json"
    times = []
    for extra in [[]] + [["--apply", f"p3={s}"] for s in SLICES]:
        cmd = [dtsim, "simulate", "--workload", str(trace), "--platform", PLATFORM, "--ranks",
               str(RANKS), "--apply", f"network={network}"] + extra + ["--report", str(report)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        times.append(json.loads(report.read_text())["result"]["iteration_time_sec"])
    return times


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dtsim", default=str(ROOT / "build" / "sim" / "dtsim"))
    p.add_argument("--out", default=str(HERE / "results"))
    a = p.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for model, batch in MODELS:
            trace = work / f"{model}.json"
            subprocess.run([a.dtsim, "workload", "generate", "--model", model, "--batch",
                            str(batch), "--device", "v100", "--precision", "fp32", "-o",
                            str(trace)], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
            for network in NETWORKS:
                times = iteration_times(a.dtsim, trace, network, work)
                row = {"model": model, "network": network, "baseline_sec": f"{times[0]:.6f}"}
                for s, t in zip(SLICES, times[1:]):
                    row[f"p3_{s}_speedup"] = f"{times[0] / t:.4f}"
                rows.append(row)
    with open(out / "p3.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    lines = ["| model | network | iteration (s) | " + " | ".join(f"p3={s}" for s in SLICES) + " |",
             "|---|---|---|" + "---|" * len(SLICES)]
    for r in rows:
        lines.append(f"| {r['model']} | {r['network']} | {r['baseline_sec']} | " +
                     " | ".join(f"{float(r[f'p3_{s}_speedup']):.3f}x" for s in SLICES) + " |")
    (out / "p3.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
