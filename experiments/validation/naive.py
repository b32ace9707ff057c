"""The naive closed form beside dtsim, on the same rows (issue #23, item 0).

data/README.md, "A naive baseline", describes the predictor scored on the shared file by whoever
assembled it (4.9 % on 58 grade-A training rows, 41 % on 103 grade-A all-reduce rows); its
script is not public. This is this repository's implementation of that description, so that it
can be scored on exactly the rows dtsim is:
  - training: per-GPU compute = the row's single-GPU time (rows without one are not scored),
    plus the gradient all-reduce, not overlapped;
  - all-reduce of S bytes on n nodes of g GPUs: a two-level ring, reduce-scatter and all-gather
    inside the node, then a ring across nodes over each node's NIC:
        t = 2(g-1) (alpha + S / (g B_gpu)) + 2(n-1) (alpha + S / (n B_nic)),
    alpha = 5 us per step, B_gpu and B_nic the line rates of the row's system (datasheets, as
    platforms/PRESETS.md lists them beside what NCCL achieves).
Usage: naive.py [--results results/results.csv] [--out results/naive.csv]; reads the rows of
data/published.csv, needs build/sim/dtsim only to count gradient bytes (workload generate).
"""
import argparse
import csv
import json
import pathlib
import subprocess
import sys
import tempfile

import cases as cases_mod
import validate

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
ALPHA_SEC = 5e-6
# Line rates per GPU (inside the node, one direction) and per node NIC total, bytes/s:
# platforms/PRESETS.md's "line rate" figures.
LINE_RATES = {
    "dgx1-v100": (150e9, 4 * 100e9 / 8),   # NVLink2 6 x 25 GB/s; 4 x 100 Gb/s EDR
    "dgx2h": (150e9, 8 * 100e9 / 8),       # NVLink2 via NVSwitch; 8 x 100 Gb/s
    "dgx-a100": (300e9, 8 * 200e9 / 8),    # NVLink3 12 x 25 GB/s; 8 x 200 Gb/s HDR
    "hgx-h200": (450e9, 8 * 400e9 / 8),    # NVLink4 18 x 25 GB/s; 8 x 400 Gb/s NDR
    "pcie8-fdr": (15.75e9 / 2, 56e9 / 8),  # a PCIe 3.0 x16 uplink per 2 GPUs; 56 Gb/s FDR
    "pcie4-25gbe": (15.75e9, 25e9 / 8),    # PCIe 3.0 x16; 25 GbE
    "dgx-h100": (450e9, 8 * 400e9 / 8),    # as hgx-h200
    "hgx-b200": (900e9, 8 * 400e9 / 8),    # NVLink5 18 x 50 GB/s; 8 x 400 Gb/s
    "aws-p4d": (300e9, 4 * 100e9 / 8),     # NVLink3 via NVSwitch; 4 x 100 Gb/s EFA
    "aws-p5": (450e9, 32 * 100e9 / 8),     # NVLink4 via NVSwitch; 32 x 100 Gb/s EFA
    "pcie8-single-root": (15.75e9, 100e9 / 8),    # PCIe 3.0 x16; 100 Gb/s
    "pcie8-dual-root": (15.75e9 / 2, 100e9 / 8),  # as pcie8-fdr; 100 Gb/s
    "pcie8-gen4-single-root": (31.5e9, 200e9 / 8),  # PCIe 4.0 x16 (16 GT/s x 16 x 128/130); 200 Gb/s
    "pcie8-gen5-single-root": (63.0e9, 400e9 / 8),  # PCIe 5.0 x16; 400 Gb/s
}


def allreduce_sec(msg_bytes, gpus_per_node, nodes, preset, nic_bytes_per_sec=None):
    b_gpu, b_nic = LINE_RATES[preset]
    b_nic = nic_bytes_per_sec or b_nic
    g, n = gpus_per_node, nodes
    return (2 * (g - 1) * (ALPHA_SEC + msg_bytes / (g * b_gpu)) +
            2 * (n - 1) * (ALPHA_SEC + msg_bytes / (n * b_nic)))


def platform_of(case):
    """(preset, nodes, NIC bytes/s per node where the row overrides the preset's, else None) of
    the case's --platform file."""
    path = case.dtsim_args[case.dtsim_args.index("--platform") + 1]
    spec = json.loads(pathlib.Path(path).read_text())
    nic = spec.get("nic_bandwidth")
    nic_bytes_per_sec = float(nic.removesuffix("Gbps")) * 1e9 / 8 if nic else None
    return spec["preset"], spec["nodes"], nic_bytes_per_sec


def gradient_bytes(dtsim, case, work, cache):
    key = tuple(a for a in case.generate_args if a != "--calibrate-iter-sec")
    if key not in cache:
        out = work / f"{case.key}_naive.json"
        args = [a for a in case.generate_args]
        if "--calibrate-iter-sec" in args:
            i = args.index("--calibrate-iter-sec")
            del args[i:i + 2]
        subprocess.run([dtsim] + args + ["-o", str(out)], check=True, capture_output=True)
        cache[key] = sum(l["param_bytes"] for l in json.loads(out.read_text())["layers"])
    return cache[key]


def predict(dtsim, case, work, cache):
    """The naive value in the case's unit, or None where it has no prediction."""
    if case.kind not in ("allreduce", "training"):
        return None  # parameter counts
    preset, nodes, nic = platform_of(case)
    per_node = case.ranks // nodes
    if case.kind == "allreduce":
        return allreduce_sec(case.bytes, per_node, nodes, preset, nic)
    if case.kind != "training" or case.single_gpu_iter_sec <= 0:
        return None  # needs the row's single-GPU time
    steps = int(case.dtsim_args[case.dtsim_args.index("--accumulation-steps") + 1])
    comm = allreduce_sec(gradient_bytes(dtsim, case, work, cache), per_node, nodes, preset, nic) \
        if case.ranks > 1 else 0.0
    iteration = steps * case.single_gpu_iter_sec + comm
    if case.metric.startswith("iter_time"):
        return iteration
    return case.samples_per_iteration / iteration


def mape(errors):
    return sum(abs(e) for e in errors) / len(errors) if errors else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=str(REPO / "experiments/validation/data/published.csv"))
    ap.add_argument("--results", default=str(HERE / "results/results.csv"),
                    help="dtsim's predictions (validate.py's results.csv)")
    ap.add_argument("--out", default=str(HERE / "results/naive.csv"))
    ap.add_argument("--dtsim", default=str(REPO / "build/sim/dtsim"))
    a = ap.parse_args()
    dtsim_rows = {r["case_id"]: r for r in csv.DictReader(open(a.results, newline=""))}
    rows = validate.read_rows(a.csv)
    out_rows, cache = [], {}
    with tempfile.TemporaryDirectory(prefix="dtsim-naive-") as tmp:
        work = pathlib.Path(tmp)
        cases, _ = validate.make_cases(rows, work)
        for c in cases:
            d = dtsim_rows.get(c.case_id)
            if d is None or d["own_input"] == "yes":
                continue  # not predicted by dtsim, or its own input: in no figure
            naive = predict(a.dtsim, c, work, cache)
            if naive is None:
                continue
            out_rows.append({"case_id": c.case_id, "kind": c.kind, "grade": c.grade,
                             "ranks": c.ranks, "measured": d["measured"],
                             "dtsim": d["predicted"], "naive": f"{naive:.10g}",
                             "dtsim_error_pct": d["error_pct"],
                             "naive_error_pct": f"{validate.error_pct(naive, c.measured):.2f}"})
    validate.write_csv(pathlib.Path(a.out), list(out_rows[0].keys()), out_rows)
    lines = ["| rows (dtsim and the naive form on the same rows) | rows | dtsim MAPE | naive MAPE |",
             "|---|---|---|---|"]
    groups = [
        ("grade-A training, multi-GPU", lambda r: r["kind"] == "training" and r["grade"] == "A"
         and int(r["ranks"]) > 1),
        ("all training rows with a single-GPU time", lambda r: r["kind"] == "training"),
        ("grade-A all-reduce", lambda r: r["kind"] == "allreduce" and r["grade"] == "A"),
    ]
    for name, keep in groups:
        sel = [r for r in out_rows if keep(r)]
        lines.append(f"| {name} | {len(sel)} | "
                     f"{mape([float(r['dtsim_error_pct']) for r in sel]):.1f} % | "
                     f"{mape([float(r['naive_error_pct']) for r in sel]):.1f} % |")
    summary = pathlib.Path(a.out).with_name("naive_summary.md")
    summary.write_text("# dtsim and the naive closed form on the same rows (naive.py)\n\n" +
                       "\n".join(lines) + "\n\nRows that are their own input are in neither "
                       "figure; training rows without a single-GPU time have no naive "
                       "prediction and are left out of both.\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
