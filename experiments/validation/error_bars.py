"""The validated error of each class of prediction, from this folder's results: what every dtsim
report quotes as "how far to trust this number" (sim/report/error_bars.h).

    error_bars.py [--results DIR] [--check]

Reads results/results.csv (data-parallel training and all-reduce rows), results/single_gpu.csv
(one GPU's compute predicted without its measurement), results/hybrid_results.csv (hybrid
transformer runs), results/memory_results.csv (a rank's peak memory) and
experiments/what-if/results/pairs.csv (what-if speedups against measured
pairs: the error of a predicted speedup s against the measured m is s / m - 1); writes results/error_bars.json and the table dtsim compiles in,
sim/report/error_bars_table.inc. With --check, writes nothing and exits 1 if either file differs
from what the results give (the test suite runs it so that the table cannot drift from them).

Rows that are their own input (one GPU calibrated to itself) and the single-GPU measurement a
constant was chosen on (single_gpu.py's fit subset) count in no class. Per class: the number of
rows, the median and the 90th percentile (nearest rank: the ceil(0.9 n)-th smallest) of the
absolute percentage error.
"""
import argparse
import csv
import json
import math
import pathlib
import statistics
import sys

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
TABLE = REPO / "sim/report/error_bars_table.inc"

# class -> what it covers, in a report's words.
CLASSES = {
    "dp-calibrated-one-node": "data-parallel training on one node, compute calibrated to a "
                              "measured single-GPU time",
    "dp-calibrated-multi-node": "data-parallel training across nodes, compute calibrated to a "
                                "measured single-GPU time",
    "dp-op-class-one-node": "data-parallel training on one node, compute from the op-class model",
    "dp-op-class-multi-node": "data-parallel training across nodes, compute from the op-class "
                              "model",
    "allreduce-one-node": "an all-reduce inside one node",
    "allreduce-multi-node": "an all-reduce across nodes",
    "hybrid-transformer": "a hybrid-parallel transformer run (the hybrid validation's headline "
                          "rows)",
    "memory-transformer": "a transformer rank's peak memory from the memory model (the peak "
                          "memory validation's headline rows: nothing unmodelled)",
}
# What-if speedups, by the what-if's kind (sim/report/error_bars.cpp, whatif_error_bar), and the
# rows of experiments/what-if/results/pairs.csv behind each: (kind, model) of the study.
WHATIF_CLASSES = {
    "whatif-bucket": ("bucket-size what-ifs' speedups (bucket-mb=), with DDP's per-bucket costs "
                      "(--nccl-channels, --bucket-kernels), each row a measured pair",
                      ("bucket 1 MB vs 25 MB", "with bucket cost")),
    "whatif-amp": ("amp and bf16 what-ifs' speedups (datasheet precision ratios), each row a "
                   "measured AMP against TF32 pair", ("AMP vs TF32", "datasheet")),
    "whatif-workload": ("speedups of a what-if that swaps the workload trace (workload=), each "
                        "row a measured pair of AMP and TF32 recipes' traces",
                        ("AMP vs TF32", "op-class recipe")),
}
# A strategy knob's pairs make one class per flag it sets ("whatif-knob-precision", ...): a knob
# no pair changed has no class, so its report says rows 0 rather than borrowing another's.
KNOB_MODEL = "strategy knob"
CLASSES.update({name: description for name, (description, _) in WHATIF_CLASSES.items()})
WHATIF_PAIRS = REPO / "experiments/what-if/results/pairs.csv"
DEVICES = ("v100", "a100", "a100-40gb", "h100", "h200", "b200")
for _device in DEVICES:
    for _model in ("op-class", "roofline"):
        CLASSES[f"compute-{_model}-{_device}"] = f"one {_device} GPU's compute from the " \
                                                 f"{_model} model, without a measurement"


def nearest_rank(sorted_values, fraction):
    return sorted_values[max(0, math.ceil(fraction * len(sorted_values)) - 1)]


def bar(name, errors):
    a = sorted(abs(e) for e in errors)
    entry = {"class": name, "description": CLASSES[name], "rows": len(a)}
    if a:
        entry["median_abs_pct"] = round(statistics.median(a), 1)
        entry["p90_abs_pct"] = round(nearest_rank(a, 0.9), 1)
    return entry


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def collect(results_dir):
    """{class: [signed error %]} from the results files."""
    errors = {name: [] for name in CLASSES}
    for r in read(results_dir / "results.csv"):
        scope = "one-node" if int(r["nodes"]) == 1 else "multi-node"
        if r["kind"] == "allreduce":
            errors[f"allreduce-{scope}"].append(float(r["error_pct"]))
        elif r["kind"] == "training" and r["own_input"] == "no":
            name = f"dp-{r['timing']}-{scope}"
            if name in errors:
                errors[name].append(float(r["error_pct"]))
    for r in read(results_dir / "single_gpu.csv"):
        if r["fit_subset"] == "yes" or r["device"] not in DEVICES:
            continue
        errors[f"compute-op-class-{r['device']}"].append(float(r["error_pct"]))
        errors[f"compute-roofline-{r['device']}"].append(float(r["roofline_error_pct"]))
    if WHATIF_PAIRS.exists():
        for r in read(WHATIF_PAIRS):
            error = 100 * (float(r["predicted_speedup"]) / float(r["measured_speedup"]) - 1)
            for name, (_, (kind, model)) in WHATIF_CLASSES.items():
                if r["model"] == model and kind == r["kind"]:
                    errors[name].append(error)
            if r["model"] == KNOB_MODEL:
                for flag in sorted({kv.split("=", 1)[0] for kv in r["what_if"].split()}):
                    name = f"whatif-knob-{flag}"
                    CLASSES.setdefault(name, f"speedups of a {flag} knob changed on a hybrid "
                                             f"job, each row a measured pair")
                    errors.setdefault(name, []).append(error)
    memory = results_dir / "memory_results.csv"
    if memory.exists():
        for r in read(memory):
            if r["headline"] == "yes":
                errors["memory-transformer"].append(float(r["error_pct"]))
    hybrid = results_dir / "hybrid_results.csv"
    if hybrid.exists():
        for r in read(hybrid):
            if r["headline"] == "yes":
                errors["hybrid-transformer"].append(float(r["error_pct"]))
    return errors


def cpp_table(bars):
    lines = ["// Generated by experiments/validation/error_bars.py from the validation results;",
             "// do not edit (the test suite checks it against them).",
             "// {class, description, rows, median |error| %, 90th percentile |error| %}"]
    for b in bars:
        lines.append(f'{{"{b["class"]}", "{b["description"]}", {b["rows"]}, '
                     f'{b.get("median_abs_pct", 0)}, {b.get("p90_abs_pct", 0)}}},')
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=str(HERE / "results"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    results_dir = pathlib.Path(a.results)
    bars = [bar(name, e) for name, e in collect(results_dir).items()]
    outputs = {results_dir / "error_bars.json": json.dumps(bars, indent=1) + "\n",
               TABLE: cpp_table(bars)}
    if a.check:
        stale = [str(p) for p, text in outputs.items()
                 if not p.exists() or p.read_text() != text]
        if stale:
            print("error_bars.py: out of date (run experiments/validation/error_bars.py): " +
                  ", ".join(stale), file=sys.stderr)
            sys.exit(1)
        return
    for path, text in outputs.items():
        path.write_text(text)


if __name__ == "__main__":
    main()
