#!/usr/bin/python3
"""Predict the measured DDP iterations of ddp_bench.py's mixed runs with dtsim and with
closed forms; write results.csv and print a table (see README.md in this folder).

    experiments/local-ddp/predict.py --bench out/local-ddp/bench.jsonl --dir out/local-ddp
    experiments/local-ddp/predict.py --from-campaigns experiments/local-ddp/campaigns.csv \
        --dir out/local-ddp/recomputed --csv experiments/local-ddp/campaigns.csv

For every mixed run (one `tag`, e.g. ``wide_mlp_r2``) in the bench file:

1. **Fit** T(S) = alpha + beta * S to the run's standalone all-reduce medians (one point per
   size), weighted least squares with weights 1/T^2 (i.e. least squares of the relative
   residuals), as in profiler/README.md, "Reference measurements".
2. **Platform** ``platform_<tag>.json``: a 2-host star. dtsim's 2-rank ring all-reduce is
   2 steps of (route latency + (S/2)/B) and a star route crosses 2 links, so
   T(S) = 4 * link_latency + S / link_bandwidth: link_latency = alpha / 4,
   link_bandwidth = 1 / beta.
3. **Trace** ``trace_<tag>.json``: the single-process profile ``profile_<model>.json``
   (per-layer thread-CPU times) with every layer's forward time multiplied by
   F = T_f / sum(forward), every backward time by B = T_b / sum(backward) and the optimizer
   step by O = T_o / optimizer, where T_f, T_b, T_o are the medians over the run's
   *concurrent* iterations (2 processes computing, no communication) of the slower rank's
   phases (ddp_bench.py's ``median``). The spreads
   (``*_iqr_sec``) are scaled alike.
4. ``dtsim simulate --workload trace --platform platform --ranks 2 --algorithm ring
   --iterations 3`` (overlap: bucket all-reduces run while backward continues), and the same
   with ``--overlap none`` (every all-reduce after the whole backward pass, as when
   communication needs the cores that compute: gloo on these 2 CPUs).
5. Closed forms with the same inputs: buckets by DDP's rule over the trace's layers;
   bucket i ready at T_f + (backward of the layers up to its last one);
   overlap = max(T_f + T_b, end_last) + T_o with end_i = max(ready_i, end_{i-1}) + T(S_i)
   (what dtsim computes; checked); no-overlap = T_f + T_b + sum_i T(S_i) + T_o over DDP's
   real bucket sizes; no-overlap + copies = that + the run's measured gradient copy in and
   out (DDP's reducer); and no-overlap with the run's *measured* all-reduce medians.
6. The same closed forms with per-cycle means over the ranks instead of the slower rank
   (``mean_ranks_*`` columns).

Checks (a message on stderr if one fails): dtsim's overlap answer equals the overlap closed form
to 1e-6, and dtsim's ``--overlap none`` answer equals the no-overlap closed form to
NONE_REL_TOL (the platform's latency and bandwidth strings and the trace's times are rounded to
about 9-10 significant digits).

``--from-campaigns CSV`` recomputes the dtsim ``--overlap none`` columns of results.csv rows
kept without their bench file (``campaigns.csv``). With no overlap only the sums of the three
phases and the bucket sizes matter, and the CSV stores them: the platform is rebuilt from the
row's ``link_latency`` and ``link_bandwidth`` (the strings written to platform_<tag>.json), the
trace has one layer per DDP bucket (forward order, so that DDP's rule gives back exactly the
row's ``ddp_bucket_bytes``) with the row's ``compute_*_sec`` split evenly. The CSV keeps 6
significant digits, so the answer equals the original run's to ~1e-5 relative; it is checked
against the no-overlap closed form of the same rounded inputs (NONE_REL_TOL) and against the
row's ``predicted_no_overlap_sec`` (CSV_REL_TOL). The overlap answer depends on the per-layer
shape of the backward pass, which the CSV does not keep: it is not recomputed.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

FIRST_BUCKET = 1 << 20  # DDP: first bucket 1 MiB
BUCKET_CAP = 25 << 20  # bucket_cap_mb 25
NONE_REL_TOL = 1e-8  # dtsim --overlap none vs the no-overlap closed form, same inputs
CSV_REL_TOL = 2e-5  # the same from campaigns.csv's 6-digit inputs vs its 6-digit column


def fit_alpha_beta(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Weighted least squares of T = alpha + beta * S with weights 1/T^2."""
    sw = sx = sy = sxx = sxy = 0.0
    for size, t in points:
        w = 1.0 / (t * t)
        sw += w
        sx += w * size
        sy += w * t
        sxx += w * size * size
        sxy += w * size * t
    det = sw * sxx - sx * sx
    beta = (sw * sxy - sx * sy) / det
    alpha = (sy - beta * sx) / sw
    return alpha, beta


def ddp_buckets(layers: list[dict[str, Any]], t_forward: float) -> list[tuple[int, float]]:
    """(bytes, ready time from the iteration start) of each bucket by DDP's rule, per layer
    (as dtsim: reverse layer order, layers without gradients skipped, a bucket closes once it
    reaches its cap, 1 MiB for the first)."""
    buckets: list[tuple[int, float]] = []
    size, clock = 0, t_forward
    for layer in reversed(layers):
        clock += layer["backward_sec"]
        if layer["param_bytes"] == 0:
            continue
        size += layer["param_bytes"]
        if size >= (FIRST_BUCKET if not buckets else BUCKET_CAP):
            buckets.append((size, clock))
            size = 0
    if size:
        buckets.append((size, clock))
    return buckets


def scale_trace(profile: dict[str, Any], t_f: float, t_b: float, t_o: float,
                tag: str) -> tuple[dict[str, Any], tuple[float, float, float]]:
    layers = profile["layers"]
    sum_f = sum(layer["forward_sec"] for layer in layers)
    sum_b = sum(layer["backward_sec"] for layer in layers)
    factors = (t_f / sum_f, t_b / sum_b, t_o / profile["optimizer_sec"])
    trace = json.loads(json.dumps(profile))
    for layer in trace["layers"]:
        for key, factor in (("forward_sec", factors[0]), ("forward_iqr_sec", factors[0]),
                            ("backward_sec", factors[1]), ("backward_iqr_sec", factors[1])):
            if key in layer:
                layer[key] = float(f"{layer[key] * factor:.9g}")
    trace["optimizer_sec"] = float(f"{t_o:.9g}")
    trace["source"] = (
        f"experiments/local-ddp: the profile below, scaled to the 2-process concurrent "
        f"wall-clock medians of ddp_bench.py run '{tag}' (forward x{factors[0]:.4f}, "
        f"backward x{factors[1]:.4f}, optimizer x{factors[2]:.4f}; the per-layer shape "
        f"stays the profile's). Profile: " + profile["source"])
    trace["measurement"]["clock"] = "wall"
    return trace, factors


def run_dtsim(dtsim: str, trace: Path, platform: Path, report: Path,
              overlap: str = "backward") -> dict[str, Any]:
    command = [dtsim, "simulate", "--workload", str(trace), "--platform", str(platform),
               "--ranks", "2", "--algorithm", "ring", "--iterations", "3",
               "--overlap", overlap, "--report", str(report)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return json.loads(report.read_text())["result"]


def load_runs(bench: Path) -> dict[str, dict[str, Any]]:
    runs: dict[str, dict[str, Any]] = {}
    for text in bench.read_text().splitlines():
        if text.strip():
            line = json.loads(text)
            if line["mode"] == "mixed":
                runs.setdefault(line["tag"], {})[line["kind"]] = line
    return runs


def load_gates(path: Path) -> dict[str, dict[str, Any]]:
    gates: dict[str, dict[str, Any]] = {}
    if path.exists():
        for text in path.read_text().splitlines():
            if text.strip():
                gate = json.loads(text)
                gates[gate["phase"]] = gate
    return gates


def ar_cpu_cores(ar: dict[str, Any], sizes: list[int]) -> Any:
    """Process CPU time / wall time of the standalone all-reduces of `sizes` (sums), or ""
    for bench files without CPU times."""
    rows = [row for row in ar["sizes"] if row["bytes"] in sizes]
    if not rows or any("median_process_cpu_sec" not in row for row in rows):
        return ""
    return (sum(row["median_process_cpu_sec"] for row in rows)
            / sum(row["median_sec"] for row in rows))


def pct(predicted: float, measured: float) -> float:
    return 100.0 * (predicted - measured) / measured


def closed_forms(profile: dict[str, Any], t_f: float, t_b: float, t_o: float,
                 ar_fit: Any, real_buckets: list[int], measured_ar: dict[int, float],
                 copy: float) -> dict[str, float]:
    """The closed forms for compute phases (t_f, t_b, t_o) and all-reduce cost ar_fit(S)."""
    scale_b = t_b / sum(layer["backward_sec"] for layer in profile["layers"])
    layers = [dict(layer, backward_sec=layer["backward_sec"] * scale_b)
              for layer in profile["layers"]]
    end = 0.0
    for size, ready in ddp_buckets(layers, t_f):
        end = max(ready, end) + ar_fit(size)
    compute = t_f + t_b + t_o
    sum_ar = sum(ar_fit(s) for s in real_buckets)
    return {
        "overlap": max(t_f + t_b, end) + t_o,
        "no_overlap": compute + sum_ar,
        "no_overlap_measured_ar": compute + sum(measured_ar[s] for s in real_buckets),
        "no_overlap_copy": compute + sum_ar + copy,
    }


def predict_run(tag: str, run: dict[str, Any], out: Path, dtsim: str,
                gates: dict[str, dict[str, Any]]) -> dict[str, Any]:
    conc, ddp, ar, copy_line = run["concurrent"], run["ddp"], run["allreduce"], run["copy"]
    model = conc["model"]
    # compute of the synchronized step: per cycle the slower rank's phases, medians
    t_f = conc["median"]["forward_sec"]
    t_b = conc["median"]["backward_sec"]
    t_o = conc["median"]["optimizer_sec"]
    measured = ddp["median"]["iter_sec"]
    copy = copy_line["median_sec"]

    points = [(row["bytes"], row["median_sec"]) for row in ar["sizes"]]
    alpha, beta = fit_alpha_beta(points)
    residuals = [abs(alpha + beta * s - t) / t for s, t in points]
    platform = {"topology": "star", "hosts": 2,
                "link_bandwidth": f"{1.0 / beta:.1f}Bps",
                "link_latency": f"{alpha / 4 * 1e9:.3f}ns"}
    platform_path = out / f"platform_{tag}.json"
    platform_path.write_text(json.dumps(platform) + "\n")

    profile = json.loads((out / f"profile_{model}.json").read_text())
    trace, factors = scale_trace(profile, t_f, t_b, t_o, tag)
    trace_path = out / f"trace_{tag}.json"
    trace_path.write_text(json.dumps(trace, indent=2) + "\n")
    report = run_dtsim(dtsim, trace_path, platform_path, out / f"report_{tag}.json")
    dtsim_iter = report["iteration_time_sec"]
    report_none = run_dtsim(dtsim, trace_path, platform_path,
                            out / f"report_none_{tag}.json", overlap="none")
    dtsim_none = report_none["iteration_time_sec"]

    def ar_fit(size: int) -> float:
        return alpha + beta * size

    real_buckets = ddp["ddp_bucket_bytes"]
    measured_ar = {row["bytes"]: row["median_sec"] for row in ar["sizes"]}
    forms = closed_forms(profile, t_f, t_b, t_o, ar_fit, real_buckets, measured_ar, copy)
    if abs(forms["overlap"] - dtsim_iter) > 1e-6 * dtsim_iter:
        print(f"predict.py: {tag}: dtsim {dtsim_iter:.6f} s differs from the overlap closed "
              f"form {forms['overlap']:.6f} s", file=sys.stderr)
    if abs(dtsim_none - forms["no_overlap"]) > NONE_REL_TOL * forms["no_overlap"]:
        print(f"predict.py: {tag}: dtsim --overlap none {dtsim_none:.9f} s differs from the "
              f"no-overlap closed form {forms['no_overlap']:.9f} s", file=sys.stderr)
    mean = conc["median_mean_of_ranks"]
    forms_mean = closed_forms(profile, mean["forward_sec"], mean["backward_sec"],
                              mean["optimizer_sec"], ar_fit, real_buckets, measured_ar, copy)
    measured_mean = ddp["median_mean_of_ranks"]["iter_sec"]
    sum_ar_fit = sum(ar_fit(s) for s in real_buckets)
    measured_exposed = measured - conc["median"]["iter_sec"]
    gate = gates.get(tag, {})
    return {
        "model": model,
        "repeat": int(tag.rsplit("_r", 1)[1]) if "_r" in tag else 1,
        "tag": tag,
        "load_1min_before": ddp["load_before"][0],
        "load_1min_after": ddp["load_after"][0],
        "others_busy_cores_before": gate.get("busy_cores", ""),
        "waited_sec": gate.get("waited_sec", ""),
        "cpu_share": ddp["cpu_share"],
        "measured_iter_sec": measured,
        "measured_p25_sec": ddp["iter_p25_sec"],
        "measured_p75_sec": ddp["iter_p75_sec"],
        "predicted_dtsim_sec": dtsim_iter,
        "predicted_dtsim_no_overlap_sec": dtsim_none,
        "predicted_no_overlap_sec": forms["no_overlap"],
        "predicted_no_overlap_copy_sec": forms["no_overlap_copy"],
        "predicted_no_overlap_measured_ar_sec": forms["no_overlap_measured_ar"],
        "error_pct": pct(dtsim_iter, measured),
        "error_dtsim_no_overlap_pct": pct(dtsim_none, measured),
        "error_no_overlap_pct": pct(forms["no_overlap"], measured),
        "error_no_overlap_copy_pct": pct(forms["no_overlap_copy"], measured),
        "error_no_overlap_measured_ar_pct": pct(forms["no_overlap_measured_ar"], measured),
        "predicted_overlap_closed_sec": forms["overlap"],
        "concurrent_iter_sec": conc["median"]["iter_sec"],
        "compute_forward_sec": t_f,
        "compute_backward_sec": t_b,
        "compute_optimizer_sec": t_o,
        "dtsim_compute_sec": report["compute_sec"],
        "scale_forward": factors[0],
        "scale_backward": factors[1],
        "scale_optimizer": factors[2],
        "alpha_us": alpha * 1e6,
        "beta_ns_per_byte": beta * 1e9,
        "fit_median_rel_residual_pct": 100 * statistics.median(residuals),
        "fit_max_rel_residual_pct": 100 * max(residuals),
        "link_latency": platform["link_latency"],
        "link_bandwidth": platform["link_bandwidth"],
        "ddp_bucket_bytes": " ".join(map(str, real_buckets)),
        "dtsim_bucket_bytes": " ".join(str(b["bytes"]) for b in report["buckets"]),
        "sum_ar_fit_sec": sum_ar_fit,
        "sum_ar_measured_sec": sum(measured_ar[s] for s in real_buckets),
        "copy_sec": copy,
        "measured_exposed_sec": measured_exposed,
        "dtsim_exposed_sec": report["exposed_comm_sec"],
        # share of the bucket all-reduces hidden behind compute (1: all, 0: none, < 0: DDP
        # costs more than compute + all-reduces)
        "overlap_fraction_measured": 1 - measured_exposed / sum_ar_fit,
        "overlap_fraction_dtsim": 1 - report["exposed_comm_sec"] / sum_ar_fit,
        # CPU cores each rank's process keeps busy during a standalone bucket all-reduce
        "allreduce_cpu_cores_per_rank": ar_cpu_cores(ar, real_buckets),
        "concurrent_thread_cpu_sec": conc["median"]["thread_cpu_sec"],
        "ddp_thread_cpu_sec": ddp["median"]["thread_cpu_sec"],
        "ddp_forward_sec": ddp["median"]["forward_sec"],
        "ddp_backward_sec": ddp["median"]["backward_sec"],
        "ddp_optimizer_sec": ddp["median"]["optimizer_sec"],
        # the same with per-cycle means over the two ranks instead of the slower rank
        "mean_ranks_measured_iter_sec": measured_mean,
        "mean_ranks_concurrent_iter_sec": conc["median_mean_of_ranks"]["iter_sec"],
        "mean_ranks_error_overlap_pct": pct(forms_mean["overlap"], measured_mean),
        "mean_ranks_error_no_overlap_pct": pct(forms_mean["no_overlap"], measured_mean),
        "mean_ranks_error_no_overlap_copy_pct": pct(forms_mean["no_overlap_copy"],
                                                    measured_mean),
        "cycles": ddp["iters"],
    }


# The columns of the dtsim --overlap none prediction, each with the column it follows.
NONE_COLUMNS = (("predicted_dtsim_no_overlap_sec", "predicted_dtsim_sec"),
                ("error_dtsim_no_overlap_pct", "error_pct"))


def quantity(text: str, unit: str, scale: float) -> float:
    """'88722.661ns' -> 8.8722661e-05 with unit 'ns', scale 1e-9."""
    if not text.endswith(unit):
        raise ValueError(f"{text!r}: expected a number followed by {unit}")
    return float(text[:-len(unit)]) * scale


def recompute_none(row: dict[str, str], out: Path, dtsim: str) -> dict[str, float]:
    """dtsim --overlap none for one campaigns.csv row, from the inputs the row stores."""
    name = f"{row['campaign']}_{row['tag']}"
    buckets = [int(b) for b in row["ddp_bucket_bytes"].split()]
    t_f, t_b, t_o = (float(row[f"compute_{phase}_sec"])
                     for phase in ("forward", "backward", "optimizer"))
    # One layer per bucket, in forward order (bucket 0 holds the last layer's gradients).
    layers = [{"name": f"bucket{i}", "forward_sec": t_f / len(buckets),
               "backward_sec": t_b / len(buckets), "param_bytes": buckets[i]}
              for i in reversed(range(len(buckets)))]
    if [size for size, _ in ddp_buckets(layers, 0.0)] != buckets:
        raise ValueError(f"{name}: one layer per bucket does not give back {buckets}")
    trace = {"format_version": 2, "model": row["model"], "device": "", "precision": "fp32",
             "batch_per_device": 1,
             "source": f"experiments/local-ddp/predict.py --from-campaigns: campaign "
                       f"{row['campaign']} run {row['tag']}, phases and buckets only (no "
                       f"per-layer shape; batch not stored)",
             "optimizer_sec": t_o, "layers": layers}
    trace_path = out / f"trace_{name}.json"
    trace_path.write_text(json.dumps(trace, indent=2) + "\n")
    platform = {"topology": "star", "hosts": 2, "link_bandwidth": row["link_bandwidth"],
                "link_latency": row["link_latency"]}
    platform_path = out / f"platform_{name}.json"
    platform_path.write_text(json.dumps(platform) + "\n")
    report = run_dtsim(dtsim, trace_path, platform_path, out / f"report_none_{name}.json",
                       overlap="none")
    if [b["bytes"] for b in report["buckets"]] != buckets:
        raise ValueError(f"{name}: dtsim's buckets differ from {buckets}")
    dtsim_none = report["iteration_time_sec"]
    # The same closed form as predict_run's, of exactly these inputs: a 2-rank ring on the
    # star takes 4 link latencies + S / bandwidth.
    latency = quantity(row["link_latency"], "ns", 1e-9)
    bandwidth = quantity(row["link_bandwidth"], "Bps", 1.0)
    closed = t_f + t_b + t_o + sum(4 * latency + size / bandwidth for size in buckets)
    stored = float(row["predicted_no_overlap_sec"])
    return {"dtsim": dtsim_none,
            "error_pct": pct(dtsim_none, float(row["measured_iter_sec"])),
            "rel_closed": abs(dtsim_none - closed) / closed,
            "rel_stored": abs(dtsim_none - stored) / stored}


def from_campaigns(path: Path, out: Path, dtsim: str, csv_path: Path) -> int:
    """Adds the dtsim --overlap none columns to campaigns.csv's rows; 1 if a check fails."""
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    for column, after in NONE_COLUMNS:
        if column not in fields:
            fields.insert(fields.index(after) + 1, column)
    out.mkdir(parents=True, exist_ok=True)
    failed = False
    worst_closed = worst_stored = 0.0
    by_model: dict[str, list[float]] = {}
    for row in rows:
        r = recompute_none(row, out, dtsim)
        row["predicted_dtsim_no_overlap_sec"] = fmt(r["dtsim"])
        row["error_dtsim_no_overlap_pct"] = fmt(r["error_pct"])
        by_model.setdefault(row["model"], []).append(r["error_pct"])
        worst_closed = max(worst_closed, r["rel_closed"])
        worst_stored = max(worst_stored, r["rel_stored"])
        if r["rel_closed"] > NONE_REL_TOL or r["rel_stored"] > CSV_REL_TOL:
            print(f"predict.py: {row['campaign']} {row['tag']}: dtsim --overlap none "
                  f"{r['dtsim']:.9f} s: {r['rel_closed']:.2e} from the closed form of the same "
                  f"inputs, {r['rel_stored']:.2e} from predicted_no_overlap_sec "
                  f"{row['predicted_no_overlap_sec']}", file=sys.stderr)
            failed = True
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    print(f"dtsim --overlap none, {len(rows)} rows: at most {worst_closed:.1e} relative from the "
          f"closed form of the same inputs, {worst_stored:.1e} from predicted_no_overlap_sec")
    for model, errors in by_model.items():
        within = sum(abs(e) <= 5 for e in errors)
        print(f"{model}: error mean {statistics.fmean(errors):+.1f} % ({min(errors):+.1f} .. "
              f"{max(errors):+.1f}), {within} of {len(errors)} within 5 %")
    print(f"wrote {csv_path}")
    return 1 if failed else 0


def fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", default="out/local-ddp/bench.jsonl")
    parser.add_argument("--dir", default="out/local-ddp",
                        help="holds profile_<model>.json; gets traces, platforms, reports")
    parser.add_argument("--dtsim", default="build/sim/dtsim")
    parser.add_argument("--csv", help="default: DIR/results.csv (DIR/campaigns.csv)")
    parser.add_argument("--from-campaigns", metavar="CSV",
                        help="no bench file: add the dtsim --overlap none columns to these "
                             "results.csv rows (with a campaign column) from what they store")
    args = parser.parse_args()
    out = Path(args.dir)
    if args.from_campaigns:
        return from_campaigns(Path(args.from_campaigns), out, args.dtsim,
                              Path(args.csv) if args.csv else out / "campaigns.csv")
    runs = load_runs(Path(args.bench))
    if not runs:
        print(f"predict.py: no mixed runs in {args.bench}", file=sys.stderr)
        return 2
    gates = load_gates(out / "gates.jsonl")
    rows = [predict_run(tag, runs[tag], out, args.dtsim, gates)
            for tag in sorted(runs, key=lambda t: (runs[t]["ddp"]["model"], t))]
    csv_path = Path(args.csv) if args.csv else out / "results.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: fmt(v) for k, v in row.items()})
    print_table(rows)
    print(f"\nwrote {csv_path}")
    return 0


def print_table(rows: list[dict[str, Any]]) -> None:
    print("times in s; errors (predicted - measured) / measured in %; exposed = DDP iteration "
          "- concurrent iteration; hid = 1 - exposed / sumAR: share of the all-reduces hidden")
    head = (f"{'model':<9}{'rep':>4}{'load':>6}{'share':>6}{'conc':>8}{'DDP':>8}"
            f"{'dtsim':>8}{'err':>7}{'no-ovl':>8}{'err':>7}{'+copy':>8}{'err':>7}"
            f"{'alpha_us':>9}{'beta_ns':>8}{'sumAR':>7}{'copy':>7}{'exposed':>8}{'hid':>6}")
    print(head)
    for r in rows:
        print(f"{r['model']:<9}{r['repeat']:>4}{r['load_1min_before']:>6.2f}"
              f"{r['cpu_share']:>6.2f}{r['concurrent_iter_sec']:>8.4f}"
              f"{r['measured_iter_sec']:>8.4f}{r['predicted_dtsim_sec']:>8.4f}"
              f"{r['error_pct']:>+7.1f}{r['predicted_no_overlap_sec']:>8.4f}"
              f"{r['error_no_overlap_pct']:>+7.1f}{r['predicted_no_overlap_copy_sec']:>8.4f}"
              f"{r['error_no_overlap_copy_pct']:>+7.1f}{r['alpha_us']:>9.1f}"
              f"{r['beta_ns_per_byte']:>8.3f}{r['sum_ar_fit_sec']:>7.4f}{r['copy_sec']:>7.4f}"
              f"{r['measured_exposed_sec']:>8.4f}{r['overlap_fraction_measured']:>+6.2f}")
    by_model: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_model.setdefault(r["model"], []).append(r)
    print()
    for model, group in by_model.items():
        def span(key: str) -> str:
            values = [r[key] for r in group]
            return (f"mean {statistics.fmean(values):+.1f} % "
                    f"({min(values):+.1f} .. {max(values):+.1f})")
        print(f"{model}: dtsim (overlap) {span('error_pct')}; dtsim --overlap none "
              f"{span('error_dtsim_no_overlap_pct')}; no-overlap closed form "
              f"{span('error_no_overlap_pct')}; no-overlap + copies "
              f"{span('error_no_overlap_copy_pct')}")


if __name__ == "__main__":
    sys.exit(main())
