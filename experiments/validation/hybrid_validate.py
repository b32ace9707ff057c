"""dtsim against the LLM rows of data/hybrid.csv: one `dtsim simulate --model` run per row it
can model, one run at a time.

Usage: hybrid_validate.py [--cases FILE.csv] [--out DIR] [--dtsim PATH] [--limit-sec S]
                          [--limit-gib G] [--only ID,ID,...]
Writes DIR/hybrid_results.csv, DIR/hybrid_skipped.csv and DIR/hybrid_summary.md. Rows are
handled in input order; a run over --limit-sec seconds of CPU or --limit-gib GiB of memory is
stopped and its row skipped as too large for this machine (CPU time, not wall time, so that
what else the machine runs does not decide which rows are predicted). Rows with the same dtsim
command (a what-if knob dtsim does not model, or two metrics of one run) share one run.
"""
import argparse
import hashlib
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import hybrid_cases as hc  # noqa: E402
import validate  # noqa: E402

HYBRID_COLUMNS = ["tp", "pp", "dp", "cp", "ep", "zero_stage", "micro_batch", "global_batch",
                  "seq_len", "recompute", "what_if"]
TOO_LARGE = "too large for this machine today"
RESULT_FIELDS = ["case_id", "source", "kind", "metric", "grade", "ranks", "unit", "measured",
                 "predicted", "error_pct", "headline", "flags", "assumed", "iteration_time_sec",
                 "tokens_per_sec_per_gpu", "mfu", "bubble_fraction", "exposed_sec", "wall_sec",
                 "command"]


def cpu_seconds(pid):
    """User + system CPU seconds of a running process (/proc/PID/stat: utime, stime); 0 once it
    is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # after the name, which may hold " "
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_watched(dtsim, args, report, limit_sec, limit_kib):
    """(report dict or None, why not, wall seconds, peak RSS in KiB) of one dtsim run, stopped
    when it passes either limit: limit_sec of its CPU time (or 10x that of wall time, should it
    get no CPU at all), limit_kib of resident memory."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen([dtsim] + args + ["--report", str(report)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        return None, f"dtsim failed: {e.strerror}", 0.0, 0
    peak, why = 0, None
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        peak = max(peak, int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError):
            pass
        elapsed, cpu = time.monotonic() - start, cpu_seconds(proc.pid)
        if peak > limit_kib or cpu > limit_sec or elapsed > 10 * limit_sec:
            why = (f"{TOO_LARGE} (over {limit_kib / 2**20:g} GiB after {elapsed:.0f} s)"
                   if peak > limit_kib else f"{TOO_LARGE} (over {limit_sec:g} s of CPU, "
                                            f"{peak / 2**20:.1f} GiB)")
            proc.kill()
            break
        time.sleep(0.2)
    _, err = proc.communicate()
    wall = time.monotonic() - start
    if why:
        return None, why, wall, peak
    if proc.returncode != 0:
        return None, "dtsim failed: " + (err.strip().splitlines() or [f"exit {proc.returncode}"])[-1], \
            wall, peak
    return json.loads(pathlib.Path(report).read_text()), None, wall, peak


def snapshot(dtsim, work):
    """A private copy of the dtsim binary, so that one binary answers every row even if the
    original is rebuilt during the run (waits up to a minute while it is being written)."""
    copy = work / "dtsim"
    for _ in range(12):
        try:
            shutil.copy2(dtsim, copy)
            validate.check_dtsim(str(copy))
            return str(copy), hashlib.sha256(copy.read_bytes()).hexdigest()[:12]
        except OSError:
            time.sleep(5)
    validate.fail(f"--dtsim {dtsim}: could not be copied for a minute")


def failure_category(why):
    """The summary's reason class of a run that gave no report."""
    if why.startswith(TOO_LARGE) or "tasks to replay" in why:
        return TOO_LARGE  # ours, or dtsim's own limit on the graph it replays
    if "max_seq_len" in why:
        return "dtsim refuses a sequence longer than the catalogue's context"
    return "dtsim failed"


def command_line(args, work):
    """The dtsim command as README.md shows it (platform files named by their content)."""
    words = []
    for a in args:
        if a.startswith(str(work)):
            words.append("'" + pathlib.Path(a).read_text().strip() + "'")
        else:
            words.append(a)
    return "dtsim " + " ".join(words)


def make_cases(rows, work, catalog):
    cases, skipped, seen = [], [], {}
    for row in rows:
        problem = validate.row_problem(row, seen)
        if problem:
            skipped.append({"case_id": row.get("case_id") or "", "metric": row.get("metric") or "",
                            "category": "unreadable row", "reason": problem,
                            "_line": row["_line"]})
            continue
        seen[row["case_id"]] = row["_line"]
        try:
            case = hc.make_hybrid_case(row, work, catalog)
        except hc.Skip as why:
            skipped.append({"case_id": row["case_id"], "metric": row["metric"],
                            "category": getattr(why, "category", str(why)), "reason": str(why),
                            "_line": row["_line"]})
            continue
        case.line, case.key = row["_line"], f"line{row['_line']}"
        cases.append(case)
    return cases, skipped


def predict_all(cases, a, work, skipped):
    results, runs = [], {}
    for c in cases:
        key = tuple(c.args)
        if key not in runs:
            runs[key] = run_watched(a.dtsim, c.args, work / f"{c.key}_report.json",
                                    a.limit_sec, a.limit_gib * 2**20)
            report, why, wall, peak = runs[key]
            print(f"{c.case_id}: {wall:.1f} s, {peak / 2**20:.2f} GiB"
                  + (f" — {why}" if why else ""), file=sys.stderr, flush=True)
        report, why, wall, _ = runs[key]
        if report is None:
            category = failure_category(why)
            skipped.append({"case_id": c.case_id, "metric": c.metric, "category": category,
                            "reason": why.replace(str(work) + os.sep, ""), "_line": c.line})
            continue
        r = report["result"]
        predicted = hc.predicted_value(c, r)
        results.append({
            "case_id": c.case_id, "source": c.source, "kind": c.kind, "metric": c.metric,
            "grade": c.grade, "ranks": c.ranks, "unit": c.unit, "measured": f"{c.measured:.6g}",
            "predicted": f"{predicted:.6g}",
            "error_pct": f"{validate.error_pct(predicted, c.measured):.2f}",
            "headline": "no" if c.flags else "yes", "flags": "; ".join(c.flags),
            "assumed": "; ".join(c.assumed),
            "iteration_time_sec": f"{r['iteration_time_sec']:.6g}",
            "tokens_per_sec_per_gpu": f"{r['tokens_per_sec_per_gpu']:.6g}",
            "mfu": f"{r['mfu']:.4f}", "bubble_fraction": f"{r['bubble_fraction']:.4f}",
            "exposed_sec": " ".join(f"{k}={v:.4g}" for k, v in sorted(r["exposed_sec"].items())),
            "wall_sec": f"{wall:.1f}", "command": command_line(c.args, work)})
    return results


def _stats(rows):
    ape = [abs(float(r["error_pct"])) for r in rows]
    worst = max(rows, key=lambda r: abs(float(r["error_pct"])))
    return (f"{len(rows)} | {statistics.mean(ape):.1f} | {statistics.median(ape):.1f} | "
            f"{max(ape):.1f} | {worst['case_id']} ({float(worst['error_pct']):+.1f} %)")


def _table(title, rows, key, header):
    columns = header.count("|") + 6
    lines = [f"### {title}", "", f"| {header} | rows | MAPE % | median APE % | max APE % | "
             "worst row |", "|" + "---|" * columns]
    groups = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    for k in sorted(groups):
        lines.append(f"| {k} | {_stats(groups[k])} |")
    return lines + [""]


def summarize(results, skipped, elapsed, out, binary=""):
    head = [r for r in results if r["headline"] == "yes"]
    flagged = [r for r in results if r["headline"] == "no"]
    lines = ["# dtsim vs the LLM rows of hybrid.csv", "",
             f"{len(results)} rows predicted ({len(head)} headline, {len(flagged)} flagged: they "
             "ran something dtsim does not model), "
             f"{len(skipped)} skipped (hybrid_skipped.csv says why). Whole run: {elapsed:.0f} s"
             + (f" ({binary})." if binary else "."), ""]
    lines += ["| class | rows | MAPE % | median APE % | max APE % | worst row |",
              "|---|---|---|---|---|---|"]
    for name, rows in [("headline rows (nothing unmodelled)", head),
                       ("flagged rows", flagged), ("all predicted rows", results)]:
        if rows:
            lines.append(f"| {name} | {_stats(rows)} |")
    lines.append("")
    if head:
        lines += _table("Headline rows per source and metric", head,
                        lambda r: f"{r['source']} | {r['metric']}", "source | metric")
        lines += _table("Headline rows per parallelism kind", head, lambda r: r["kind"], "kind")
    if flagged:
        lines += _table("Flagged rows per source and first flag", flagged,
                        lambda r: f"{r['source']}: {r['flags'].split('; ')[0]}", "source: flag")
    lines += ["### Every predicted row", "",
              "| row | kind | GPUs | metric | measured | dtsim | error | MFU | bubble | "
              "exposed s (mean over stages) | flags |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['case_id']} | {r['kind']} | {r['ranks']} | {r['metric']} | "
                     f"{r['measured']} | {r['predicted']} | {float(r['error_pct']):+.1f} % | "
                     f"{100 * float(r['mfu']):.1f} % | {100 * float(r['bubble_fraction']):.1f} % | "
                     f"{r['exposed_sec']} | {r['flags']} |")
    counts = {}
    for s in skipped:
        counts[s["category"]] = counts.get(s["category"], 0) + 1
    lines += ["", "### Skipped rows per reason", "", "| reason | rows |", "|---|---|"]
    for k in sorted(counts, key=lambda k: (-counts[k], k)):
        lines.append(f"| {k} | {counts[k]} |")
    (out / "hybrid_summary.md").write_text("\n".join(lines) + "\n")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=str(validate.REPO / "experiments/validation/data/hybrid.csv"))
    ap.add_argument("--out", default=str(validate.REPO / "experiments/validation/results"))
    ap.add_argument("--dtsim", default=os.environ.get("DTSIM",
                                                      str(validate.REPO / "build/sim/dtsim")))
    ap.add_argument("--limit-sec", type=float, default=400.0,
                    help="stop a dtsim run after this many seconds of CPU (default 400)")
    ap.add_argument("--limit-gib", type=float, default=8.0,
                    help="stop a dtsim run above this resident memory (default 8 GiB)")
    ap.add_argument("--only", default="", help="comma-separated case_ids to run (default: all)")
    a = ap.parse_args()
    if a.limit_sec <= 0 or a.limit_gib <= 0:
        validate.fail("--limit-sec and --limit-gib must be > 0")
    rows = validate.read_rows(a.cases)
    missing = [c for c in HYBRID_COLUMNS if rows and c not in rows[0]]
    if missing:
        validate.fail(f"{a.cases}: missing columns {', '.join(missing)}")
    if a.only:
        wanted = set(a.only.split(","))
        rows = [r for r in rows if r["case_id"] in wanted]
    validate.check_dtsim(a.dtsim)
    out = pathlib.Path(a.out)
    if out.exists() and not out.is_dir():
        validate.fail(f"--out {out}: not a directory")
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dtsim-hybrid-") as tmp:
        work = pathlib.Path(tmp)
        a.dtsim, sha = snapshot(a.dtsim, work)
        cases, skipped = make_cases(rows, work, hc.read_catalog())
        results = predict_all(cases, a, work, skipped)
    skipped.sort(key=lambda s: s["_line"])
    validate.write_csv(out / "hybrid_results.csv", RESULT_FIELDS, results)
    validate.write_csv(out / "hybrid_skipped.csv", ["case_id", "metric", "category", "reason"],
                       skipped)
    print(summarize(results, skipped, time.monotonic() - start, out,
                    f"dtsim binary sha256 {sha}…"))


if __name__ == "__main__":
    main()
