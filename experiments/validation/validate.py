"""dtsim against published measurements: one dtsim run per CSV row it can model.

Usage: validate.py [--cases FILE.csv] [--out DIR] [--dtsim PATH] [--jobs N]
                   [--replay collapsed|fast]
Writes DIR/results.csv, DIR/skipped.csv, DIR/summary.md and DIR/scatter.png (if matplotlib is
installed). Deterministic: rows in input order, numbers printed with fixed precision.
"""
import argparse
import concurrent.futures
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

REPO = pathlib.Path(__file__).resolve().parents[2]
REQUIRED_COLUMNS = ["case_id", "model", "gpu", "gpus_per_node", "nodes", "total_gpus",
                    "batch_per_gpu", "precision", "intra_link", "inter_network", "comm_lib",
                    "allreduce_alg", "metric", "value", "unit", "single_gpu_value", "grade",
                    "notes"]


def fail(message):
    """Bad input: one line on stderr, exit 2 (as dtsim itself)."""
    print(f"validate.py: {message}", file=sys.stderr)
    sys.exit(2)


def run_dtsim(dtsim, args, report_path):
    proc = subprocess.run([dtsim] + args + ["--report", str(report_path)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip() or f"dtsim exit {proc.returncode}")
    return json.loads(report_path.read_text())


def generate(dtsim, case, workdir):
    trace = workdir / f"{case.key}_workload.json"
    proc = subprocess.run([dtsim] + case.generate_args + ["-o", str(trace)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    return trace


def predict(dtsim, case, workdir, replay):
    """(predicted value in the row's unit, a short note on what ran)."""
    report_path = workdir / f"{case.key}_report.json"
    replay_args = ["--replay", replay]
    if case.kind == "allreduce":
        r = run_dtsim(dtsim, case.dtsim_args + replay_args, report_path)
        return r["time_sec"], r["algorithm"] if "auto" not in r else \
            "auto:" + r["auto"]["chosen"]
    trace = generate(dtsim, case, workdir)
    if case.kind == "param_count":
        layers = json.loads(trace.read_text())["layers"]
        # fp32 gradients: 4 bytes per parameter.
        return sum(l["param_bytes"] for l in layers) / 4, "generator"
    r = run_dtsim(dtsim, case.dtsim_args + replay_args + ["--workload", str(trace)], report_path)
    iter_sec = r["result"]["iteration_time_sec"]
    algorithms = sorted({b["algorithm"] for b in r["result"]["buckets"]})
    note = "/".join(algorithms) if algorithms else "no all-reduce"
    if case.metric.startswith("iter_time"):
        return iter_sec, note
    return case.samples_per_iteration / iter_sec, note  # throughput, samples/s in total


def error_pct(predicted, measured):
    return 100.0 * (predicted - measured) / measured


def timing(case):
    """How a training case's compute was timed: "calibrated" (the row's single-GPU time),
    "op-class" or "roofline"; "" for other kinds."""
    if case.kind != "training":
        return ""
    if case.single_gpu_iter_sec > 0:
        return "calibrated"
    return "op-class" if "op-class" in case.generate_args else "roofline"


def is_own_input(case):
    """A one-GPU training row calibrated to its own single-GPU time: it proves nothing, and is
    counted in no figure."""
    return case.kind == "training" and case.ranks == 1 and case.single_gpu_iter_sec > 0


def summarize(all_results, skipped, out):
    results = [r for r in all_results if r.get("own_input") != "yes"]
    own = [r["case_id"] for r in all_results if r.get("own_input") == "yes"]
    lines = ["# dtsim vs published measurements", "",
             f"{len(all_results)} rows predicted, {len(skipped)} skipped (skipped.csv says why).",
             "", f"{len(own)} rows are their own input (one GPU calibrated to its own single-GPU "
             f"time) and are counted in no figure below: {', '.join(own) or 'none'}.", "",
             "| source | metric | grade | rows | MAPE % | median APE % | max APE % | worst row |",
             "|---|---|---|---|---|---|---|---|"]
    groups = {}
    for r in results:
        groups.setdefault((r["source"], r["metric"], r["grade"]), []).append(r)
    for key in sorted(groups):
        rows = groups[key]
        ape = [abs(float(r["error_pct"])) for r in rows]
        worst = max(rows, key=lambda r: abs(float(r["error_pct"])))
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {len(rows)} | "
                     f"{statistics.mean(ape):.1f} | {statistics.median(ape):.1f} | "
                     f"{max(ape):.1f} | {worst['case_id']} ({float(worst['error_pct']):+.1f} %) |")
    lines += ["", "| class | rows | MAPE % | max APE % |", "|---|---|---|---|"]
    for name, pick in [
            ("grade-A training rows", lambda r: r["kind"] == "training" and r["grade"] == "A"),
            ("all training rows", lambda r: r["kind"] == "training"),
            ("grade-A all-reduce rows", lambda r: r["kind"] == "allreduce" and r["grade"] == "A"),
            ("parameter counts", lambda r: r["kind"] == "param_count")]:
        ape = [abs(float(r["error_pct"])) for r in results if pick(r)]
        if ape:
            lines.append(f"| {name} | {len(ape)} | {statistics.mean(ape):.1f} | {max(ape):.1f} |")
    lines += ["", "## Every all-reduce row", "",
              "| row | GPUs | bytes | measured | dtsim | error | algorithm |",
              "|---|---|---|---|---|---|---|"]
    for r in results:
        if r["kind"] == "allreduce":
            lines.append(f"| {r['case_id']} | {r['ranks']} | {int(r['bytes']):,} | "
                         f"{_short_time(r['measured'])} | {_short_time(r['predicted'])} | "
                         f"{float(r['error_pct']):+.1f} % | {r['ran']} |")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    return "\n".join(lines)


def _short_time(sec):
    sec = float(sec)
    return f"{sec * 1e6:.1f} us" if sec < 1e-3 else f"{sec * 1e3:.3f} ms"


def scatter(results, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no scatter.png (apt-get install python3-matplotlib)",
              file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    for ax, kind, label in [(axes[0], "allreduce", "all-reduce time (s)"),
                            (axes[1], "training", "iteration time (s)")]:
        for source in sorted({r["source"] for r in results if r["kind"] == kind}):
            pts = [r for r in results if r["kind"] == kind and r["source"] == source]
            if kind == "training":  # compare as time per optimizer step: 1/throughput
                xs = [_as_time(r, "measured") for r in pts]
                ys = [_as_time(r, "predicted") for r in pts]
            else:
                xs = [float(r["measured"]) for r in pts]
                ys = [float(r["predicted"]) for r in pts]
            ax.scatter(xs, ys, s=12, label=source)
        lo, hi = ax.get_xlim()
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="exact")
        ax.plot([lo, hi], [1.1 * lo, 1.1 * hi], ":", color="gray", lw=0.8, label="±10 %")
        ax.plot([lo, hi], [0.9 * lo, 0.9 * hi], ":", color="gray", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("measured " + label)
        ax.set_ylabel("dtsim " + label)
        ax.legend(fontsize=8)
    fig.suptitle("dtsim predictions vs published measurements")
    fig.tight_layout()
    fig.savefig(out / "scatter.png", dpi=110, metadata={"Software": None})


def _as_time(r, which):
    v = float(r[which])
    return v if r["metric"].startswith("iter_time") else float(r["samples"]) / v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases",
                    default=str(REPO / "experiments/validation/data/published.csv"))
    ap.add_argument("--out", default=str(REPO / "experiments/validation/results"))
    ap.add_argument("--dtsim", default=os.environ.get("DTSIM", str(REPO / "build/sim/dtsim")))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--replay", choices=["collapsed", "fast"], default="fast",
                    help="dtsim's --replay: fast (default: trees collapsed too, an "
                         "approximation) or collapsed (trees chunk by chunk, ~50x slower here; "
                         "README: the two differ by at most 0.18 points of error per row)")
    a = ap.parse_args()
    if a.jobs < 1:
        fail(f"--jobs {a.jobs}: expected at least 1")
    rows = read_rows(a.cases)
    check_dtsim(a.dtsim)
    out = pathlib.Path(a.out)
    if out.exists() and not out.is_dir():
        fail(f"--out {out}: not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        fail(f"--out {out}: {e.strerror}")
    for name in ("results.csv", "skipped.csv", "summary.md", "scatter.png"):
        if (out / name).is_dir():
            fail(f"--out {out}: {name} there is a directory")
    with tempfile.TemporaryDirectory(prefix="dtsim-validation-") as tmp:
        run(a, rows, out, pathlib.Path(tmp))


def check_dtsim(dtsim):
    """Fails before any row if `dtsim` is not a working dtsim binary."""
    try:
        proc = subprocess.run([dtsim, "--help"], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        fail(f"--dtsim {dtsim}: --help did not return within 60 s")
    except OSError as e:
        fail(f"--dtsim {dtsim}: {e.strerror} (build it with .ci/setup)")
    if proc.returncode != 0 or "dtsim" not in proc.stdout:
        fail(f"--dtsim {dtsim}: not a working dtsim (its --help exited {proc.returncode})")


def read_rows(path):
    """The CSV's rows, each with its line number under "_line". Fails on a file that is not a
    UTF-8 CSV with the required columns."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames is None:
                fail(f"{path}: empty file (expected a header: {', '.join(REQUIRED_COLUMNS)})")
            missing = [c for c in REQUIRED_COLUMNS if c not in reader.fieldnames]
            if missing:
                fail(f"{path}: missing columns {', '.join(missing)}")
            rows = []
            for row in reader:
                row["_line"] = reader.line_num
                rows.append(row)
            return rows
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    except UnicodeDecodeError as e:
        fail(f"{path}: not UTF-8 ({e.reason} at byte {e.start})")
    except csv.Error as e:
        fail(f"{path}: not a CSV file: {e}")


def row_problem(row, seen):
    """Why `row` cannot be read as a row of the file, or None."""
    if None in row or None in row.values():
        return f"line {row['_line']}: not as many fields as the header"
    if not row["case_id"].strip():
        return f"line {row['_line']}: empty case_id"
    if row["case_id"] in seen:
        return f"line {row['_line']}: case_id {row['case_id']} again (first on line " \
               f"{seen[row['case_id']]})"
    return None


def make_cases(rows, work):
    """(cases, skipped rows with their reason)."""
    cases, skipped, seen = [], [], {}
    for row in rows:
        problem = row_problem(row, seen)
        if problem:
            skipped.append({"case_id": row.get("case_id") or "", "metric": row.get("metric") or "",
                            "reason": problem, "_line": row["_line"]})
            continue
        seen[row["case_id"]] = row["_line"]
        try:
            case = cases_mod.make_case(row, work)
            case.line = row["_line"]
            case.key = f"line{row['_line']}"
            cases.append(case)
        except cases_mod.Skip as why:
            skipped.append({"case_id": row["case_id"], "metric": row["metric"],
                            "reason": str(why), "_line": row["_line"]})
    return cases, skipped


def predict_all(cases, dtsim, jobs, work, skipped, replay):
    """One results.csv row per case that dtsim predicted; failures go to `skipped`."""
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(predict, dtsim, c, work, replay) for c in cases]
        for c, fut in zip(cases, futures):
            try:
                predicted, ran = fut.result()
            except (RuntimeError, KeyError, ValueError) as e:
                # dtsim names its inputs, which live in the temporary folder: not in the reason
                reason = str(e).replace(str(work) + os.sep, "")
                skipped.append({"case_id": c.case_id, "metric": c.metric,
                                "reason": f"dtsim failed: {reason}", "_line": c.line})
                continue
            results.append({
                "case_id": c.case_id, "source": c.source, "kind": c.kind, "metric": c.metric,
                "grade": c.grade, "ranks": c.ranks, "unit": c.compare_unit,
                "measured": f"{c.measured:.10g}", "predicted": f"{predicted:.10g}",
                "error_pct": f"{error_pct(predicted, c.measured):.2f}", "ran": ran,
                "samples": f"{c.samples_per_iteration:g}", "bytes": c.bytes or "",
                "own_input": "yes" if is_own_input(c) else "no", "nodes": c.nodes,
                "timing": timing(c),
                "read_as": "; ".join(c.read_as)})
    return results


def write_csv(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def run(a, rows, out, work):
    cases, skipped = make_cases(rows, work)
    results = predict_all(cases, a.dtsim, a.jobs, work, skipped, a.replay)
    skipped.sort(key=lambda s: s["_line"])
    write_csv(out / "results.csv", list(results[0].keys()) if results else ["case_id"], results)
    write_csv(out / "skipped.csv", ["case_id", "metric", "reason"], skipped)
    print(summarize(results, skipped, out))
    scatter(results, out)


if __name__ == "__main__":
    main()
