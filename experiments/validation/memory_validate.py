"""dtsim memory against the peak_memory rows of data/hybrid.csv: one `dtsim memory` run per row
it can model (the rows turned into flags by hybrid_cases.py's rules, the same as for the
throughput rows), the worst rank's peak compared with the measured one.

Usage: memory_validate.py [--cases FILE.csv] [--out DIR] [--dtsim PATH] [--only ID,ID,...]
Writes DIR/memory_results.csv and DIR/memory_summary.md. dtsim memory simulates nothing: each
row takes milliseconds. No constant of the memory model is fitted to a row (README.md, "Peak
memory").
"""
import argparse
import hashlib
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import hybrid_cases as hc  # noqa: E402
import validate  # noqa: E402

FIELDS = ["case_id", "kind", "grade", "ranks", "unit", "measured", "predicted", "error_pct",
          "headline", "worst_stage", "parameters", "gradients", "optimizer", "activations",
          "fsdp_buffers", "communication_buffers", "framework_reserve", "oom", "flags", "assumed",
          "command"]
PARTS = ["parameters", "gradients", "optimizer", "activations", "fsdp_buffers",
         "communication_buffers", "framework_reserve"]


def run_memory(dtsim, case, work):
    """The report's "memory" of one `dtsim memory` run, or (None, why)."""
    report = work / f"{case.key}_memory.json"
    proc = subprocess.run([dtsim] + case.args + ["--report", str(report)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None, "dtsim failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
    return json.loads(report.read_text())["memory"], None


def result_row(case, memory, work):
    scale = hc.MEMORY_UNITS[case.unit]
    worst = memory["stages"][memory["worst_stage"]]
    predicted = memory["peak_bytes"] / scale
    row = {"case_id": case.case_id, "kind": case.kind, "grade": case.grade, "ranks": case.ranks,
           "unit": case.unit, "measured": f"{case.measured:.6g}", "predicted": f"{predicted:.4f}",
           "error_pct": f"{validate.error_pct(predicted, case.measured):.2f}",
           "headline": "no" if case.flags else "yes", "worst_stage": memory["worst_stage"],
           "oom": "yes" if memory["oom"] else "no", "flags": "; ".join(case.flags),
           "assumed": "; ".join(case.assumed),
           "command": "dtsim " + " ".join(a if not a.startswith(str(work)) else
                                          "'" + pathlib.Path(a).read_text().strip() + "'"
                                          for a in case.args)}
    for part in PARTS:
        row[part] = f"{worst[part + '_bytes'] / scale:.4f}"
    return row


def mape_line(name, rows):
    ape = [abs(float(r["error_pct"])) for r in rows]
    worst = max(rows, key=lambda r: abs(float(r["error_pct"])))
    return (f"| {name} | {len(rows)} | {statistics.mean(ape):.1f} | {statistics.median(ape):.1f} "
            f"| {max(ape):.1f} | {worst['case_id']} ({float(worst['error_pct']):+.1f} %) |")


def stamp(dtsim):
    """'dtsim binary sha256 0123456789ab…, source commit abc1234' of this run."""
    sha = hashlib.sha256(pathlib.Path(dtsim).read_bytes()).hexdigest()[:12]
    proc = subprocess.run(["git", "-C", str(validate.REPO), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    commit = proc.stdout.strip() if proc.returncode == 0 else "unknown"
    return f"dtsim binary sha256 {sha}…, source commit {commit}"


def summarize(results, skipped, out, binary=""):
    head = [r for r in results if r["headline"] == "yes"]
    lines = ["# dtsim memory vs the peak_memory rows of hybrid.csv", "",
             f"{len(results)} rows predicted ({len(head)} headline, {len(results) - len(head)} "
             f"flagged: they ran something dtsim does not model), {len(skipped)} skipped"
             + (f" ({binary})." if binary else "."), "",
             "| class | rows | MAPE % | median APE % | max APE % | worst row |",
             "|---|---|---|---|---|---|"]
    for name, rows in [("all predicted rows", results), ("headline rows", head),
                       ("flagged rows", [r for r in results if r["headline"] == "no"])]:
        if rows:
            lines.append(mape_line(name, rows))
    lines += ["", "### Every predicted row (the worst stage's breakdown, in the row's unit)", "",
              "| row | kind | GPUs | measured | dtsim | error | params | grads | optimizer | "
              "activations | FSDP | comm | reserve | flags |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['case_id']} | {r['kind']} | {r['ranks']} | {r['measured']} "
                     f"{r['unit']} | {float(r['predicted']):.2f} | "
                     f"{float(r['error_pct']):+.1f} % | "
                     + " | ".join(f"{float(r[p]):.2f}" for p in PARTS) + f" | {r['flags']} |")
    if skipped:
        lines += ["", "### Skipped rows", "", "| row | why |", "|---|---|"]
        lines += [f"| {s['case_id']} | {s['reason']} |" for s in skipped]
    text = "\n".join(lines) + "\n"
    (out / "memory_summary.md").write_text(text)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=str(validate.REPO / "experiments/validation/data/hybrid.csv"))
    ap.add_argument("--out", default=str(validate.REPO / "experiments/validation/results"))
    ap.add_argument("--dtsim", default=os.environ.get("DTSIM",
                                                      str(validate.REPO / "build/sim/dtsim")))
    ap.add_argument("--only", default="", help="comma-separated case_ids to run (default: all)")
    a = ap.parse_args()
    validate.check_dtsim(a.dtsim)
    rows = [r for r in validate.read_rows(a.cases) if r.get("metric") == "peak_memory"]
    if a.only:
        rows = [r for r in rows if r["case_id"] in set(a.only.split(","))]
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    results, skipped = [], []
    catalog = hc.read_catalog()
    with tempfile.TemporaryDirectory(prefix="dtsim-memory-") as tmp:
        work = pathlib.Path(tmp)
        for row in rows:
            try:
                case = hc.make_hybrid_case(row, work, catalog, memory=True)
            except hc.Skip as why:
                skipped.append({"case_id": row["case_id"], "reason": str(why)})
                continue
            case.key = f"line{row['_line']}"
            memory, why = run_memory(a.dtsim, case, work)
            if memory is None:
                skipped.append({"case_id": row["case_id"], "reason": why})
                continue
            results.append(result_row(case, memory, work))
    validate.write_csv(out / "memory_results.csv", FIELDS, results)
    print(summarize(results, skipped, out, stamp(a.dtsim)))


if __name__ == "__main__":
    main()
