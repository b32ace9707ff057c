"""Single-GPU compute without a measurement: predicts every distinct `single_gpu_value` of a
published-measurements CSV from the architecture and the GPU's datasheet alone, never reading
the value it predicts (issue #23, item 1).

Usage: single_gpu.py [--cases FILE.csv] [--out DIR] [--dtsim PATH] [--fit-cuda-core]
Writes DIR/single_gpu.csv (one line per distinct model, GPU, precision and batch) and
DIR/single_gpu_summary.md (MAPE per GPU and precision), for the op-class compute model
(workloads/COMPUTE.md) beside the roofline's one efficiency (workloads/GENERATOR.md). Each distinct measurement counts once:
rows of one table that repeat the same single-GPU value are one measurement.

The op-class model's CUDA-core efficiency was chosen on FIT_SUBSET (`--fit-cuda-core` finds it
again: the efficiency at which the subset's mean error is zero); those measurements are listed
apart and counted in no figure.
"""
import argparse
import csv
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import cases as cases_mod  # noqa: E402
import phrasing  # noqa: E402
import validate  # noqa: E402

REPO = validate.REPO

# (model, device, precision, batch, measured value): the PyTorch DDP benchmark's single V100
# ResNet-50 iteration (DDPB-01 and the rows calibrated to it).
FIT_SUBSET = {("resnet50", "v100", "fp32", 32, "0.097")}


def in_fit_subset(key):
    model, _, device, precision, batch, _, value, _ = key
    return (model, device, precision, batch, value) in FIT_SUBSET


def distinct_configs(rows):
    """{(model, device, precision, batch, metric kind): (measured single-GPU iteration seconds,
    [case ids])}; rows that cannot be modelled are left out with their reason."""
    configs, skipped = {}, []
    for row in rows:
        row = dict(row, metric=phrasing.metric(row["metric"], row["model"].lower() == "allreduce"))
        if not row["single_gpu_value"].strip() or row["metric"] == "param_count":
            continue
        try:
            model, seq, _ = phrasing.model(row["model"], row["notes"])
            _, device, _ = cases_mod.training_system(row, [])
            if device is None:
                raise cases_mod.Skip(f"the workload generator has no '{row['gpu']}'")
            context = " ".join(row.get(c, "") for c in ("source", "comm_lib", "notes"))
            precision, _, xla = phrasing.precision(row["precision"], device, context)
            batch = cases_mod._int(row, "batch_per_gpu")
            iter_sec, per_sample = cases_mod._training_metric(row, batch, seq)
            value = cases_mod._positive(row, "single_gpu_value")
        except cases_mod.Skip as why:
            skipped.append((row["case_id"], str(why)))
            continue
        kind = "iter_time" if row["metric"].startswith(("iter_time", "step_time")) else "throughput"
        flags = tuple(cases_mod.compute_args(row, model, precision, xla))
        key = (model, seq or 0, device, precision, batch, kind, f"{value:.10g}", flags)
        configs.setdefault(key, (iter_sec, value, []))[2].append(row["case_id"])
    return configs, skipped


def predict(dtsim, key, roofline, work, extra=()):
    """The predicted iteration: the op-class model with the row's framework flags, or today's
    roofline with `roofline`."""
    model, seq, device, precision, batch = key[:5]
    trace = work / f"{model}_{device}_{precision}_{batch}.json"
    args = [dtsim, "workload", "generate", "--model", model, "--batch", str(batch), "--device",
            device, "--precision", precision, "-o", str(trace)]
    if seq:
        args += ["--seq-len", str(seq)]
    if not roofline:
        args += list(key[7]) + list(extra)
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        validate.fail(f"dtsim workload generate failed: {proc.stderr.strip()}")
    w = json.loads(trace.read_text())
    fwd = sum(l["forward_sec"] for l in w["layers"])
    bwd = sum(l["backward_sec"] for l in w["layers"])
    return fwd + bwd + w["optimizer_sec"]


def fit_cuda_core(dtsim, configs, work):
    """Bisects --cuda-core-efficiency until the subset's mean error is zero; prints it."""
    subset = [(k, v[0]) for k, v in configs.items() if in_fit_subset(k)]
    if not subset:
        validate.fail("no row of the cases file is in FIT_SUBSET")

    def mean_error(e):
        errs = [validate.error_pct(predict(dtsim, k, False, work,
                                           ["--cuda-core-efficiency", repr(e)]), t)
                for k, t in subset]
        return statistics.mean(errs)

    low, high = 0.05, 1.0
    for _ in range(30):
        mid = (low + high) / 2
        low, high = (mid, high) if mean_error(mid) > 0 else (low, mid)
    print(f"cuda-core efficiency {low:.4f}: mean error {mean_error(low):+.3f} % on "
          f"{len(subset)} measurement(s)")


def summarize(results):
    lines = ["| GPU | precision | measurements | op-class MAPE | max | roofline MAPE | max |",
             "|---|---|---|---|---|---|---|"]
    groups = {}
    results = [r for r in results if r["fit_subset"] == "no"]
    for r in results + [dict(r, device="**all**", precision="") for r in results]:
        groups.setdefault((r["device"], r["precision"]), []).append(
            (abs(float(r["error_pct"])), abs(float(r["roofline_error_pct"]))))
    for (device, precision), errs in sorted(groups.items(),
                                            key=lambda g: (g[0][0] == "**all**", g[0])):
        op, roof = [e[0] for e in errs], [e[1] for e in errs]
        lines.append(f"| {device} | {precision} | {len(errs)} | {statistics.mean(op):.1f} % | "
                     f"{max(op):.1f} % | {statistics.mean(roof):.1f} % | {max(roof):.1f} % |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=str(REPO / "experiments/validation/data/published.csv"))
    ap.add_argument("--out", default=str(REPO / "experiments/validation/results"))
    ap.add_argument("--dtsim", default=os.environ.get("DTSIM", str(REPO / "build/sim/dtsim")))
    ap.add_argument("--fit-cuda-core", action="store_true",
                    help="only find the CUDA-core efficiency that zeroes FIT_SUBSET's mean error")
    a = ap.parse_args()
    validate.check_dtsim(a.dtsim)
    configs, skipped = distinct_configs(validate.read_rows(a.cases))
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.fit_cuda_core:
        with tempfile.TemporaryDirectory(prefix="dtsim-single-gpu-") as tmp:
            fit_cuda_core(a.dtsim, configs, pathlib.Path(tmp))
        return
    results = []
    with tempfile.TemporaryDirectory(prefix="dtsim-single-gpu-") as tmp:
        for key, (measured_sec, value, ids) in sorted(configs.items()):
            predicted_sec = predict(a.dtsim, key, False, pathlib.Path(tmp))
            roofline_sec = predict(a.dtsim, key, True, pathlib.Path(tmp))
            model, seq, device, precision, batch, kind, _, flags = key
            results.append({
                "model": model, "device": device, "precision": precision, "batch": batch,
                "flags": " ".join(flags[2:]),
                "measured_iter_sec": f"{measured_sec:.6g}",
                "predicted_iter_sec": f"{predicted_sec:.6g}",
                "error_pct": f"{validate.error_pct(predicted_sec, measured_sec):.2f}",
                "roofline_iter_sec": f"{roofline_sec:.6g}",
                "roofline_error_pct": f"{validate.error_pct(roofline_sec, measured_sec):.2f}",
                "fit_subset": "yes" if in_fit_subset(key) else "no", "rows": " ".join(ids)})
    validate.write_csv(out / "single_gpu.csv", list(results[0].keys()), results)
    text = ("# Single-GPU iterations predicted without their measurement\n\n"
            f"`experiments/validation/single_gpu.py`, {len(results)} distinct measurements "
            f"({sum(len(c[2]) for c in configs.values())} rows); error of the predicted "
            "iteration time (forward + backward + optimizer), op-class model "
            "(workloads/COMPUTE.md) and roofline (workloads/GENERATOR.md).\n\n" +
            summarize(results) + "\n")
    fit = [r for r in results if r["fit_subset"] == "yes"]
    if fit:
        text += ("\nChosen on, so in no figure: " + "; ".join(
            f"{r['model']} {r['device']} {r['precision']} batch {r['batch']} ({r['rows']}): "
            f"{r['error_pct']} %" for r in fit) + "\n")
    if skipped:
        text += "\nNot modelled: " + "; ".join(f"{i} ({why})" for i, why in skipped) + "\n"
    (out / "single_gpu_summary.md").write_text(text)
    print(text)
    for r in results:
        print(f"{r['model']:18} {r['device']:5} {r['precision']:5} {r['batch']:4} "
              f"{r['measured_iter_sec']:>9} {r['predicted_iter_sec']:>9} {r['error_pct']:>7} % "
              f"(roofline {r['roofline_error_pct']:>7} %) {r['flags']}")


if __name__ == "__main__":
    main()
