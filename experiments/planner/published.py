#!/usr/bin/python3
"""The planner on the published configurations (experiments/validation/results/
hybrid_results.csv: the hybrid.csv rows dtsim simulates, each with its `dtsim simulate`
command). For every distinct question (model, GPU, platform, GPUs, global batch, sequence) one
`dtsim plan --simulate 0`; then per row: is the published configuration among those the planner
keeps, and how does the planner's best estimate compare with the published one's estimate; and
over pairs of rows of one model on one GPU with different configurations, does the planner's
estimate order them as the measurements do. Usage: published.py DTSIM OUT_DIR"""
import csv
import json
import pathlib
import shlex
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
RESULTS = REPO / "experiments/validation/results/hybrid_results.csv"
sys.path.insert(0, str(REPO / "experiments/validation"))
from hybrid_cases import EARLY_STOP_NOTES  # noqa: E402  the frameworks whose recompute stops early
from hybrid_cases import FP8_RECIPE  # noqa: E402  how each source's framework casts float8


def parse(command):
    words = shlex.split(command)[2:]  # after "dtsim simulate"
    flags, i = {}, 0
    while i < len(words):
        key = words[i][2:]
        if i + 1 < len(words) and not words[i + 1].startswith("--"):
            flags[key], i = words[i + 1], i + 2
        else:
            flags[key], i = "1", i + 1
    degrees = dict(kv.split("=") for kv in flags["parallel"].split(","))
    return flags, {"tp": degrees.get("tp", "1"), "pp": degrees.get("pp", "1"),
                   "dp": degrees.get("dp", "1"), "cp": degrees.get("cp", "1"),
                   "ep": degrees.get("ep", "1"), "micro_batch": flags["micro-batch"],
                   "schedule": flags.get("schedule", "1f1b"), "zero": flags.get("zero", "0"),
                   "recompute": flags.get("recompute", "none"),
                   "sequence_parallel": flags.get("sequence-parallel", "0")}


def same(a, b, *keys):
    return all(a[k] == b[k] for k in keys)


def rate(row, flags):
    """The row's measurement as a per-GPU rate (higher is better)."""
    value = float(row["measured"])
    if row["metric"] == "iter_time":
        return int(flags["global-batch"]) * int(flags["seq-len"]) / value / int(flags["ranks"])
    return value


def main():
    dtsim, out = sys.argv[1], pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    plans, rows = {}, []
    for row in csv.DictReader(open(RESULTS)):
        flags, config = parse(row["command"])
        attention = flags.get("attention", "flash2")  # the framework's kernel (hybrid_cases.py)
        # The framework's recomputation: PyTorch's non-reentrant checkpoint stops early.
        early_stop = ["--checkpoint-early-stop"] if row["source"] in EARLY_STOP_NOTES else []
        recipe = flags.get("fp8-recipe", FP8_RECIPE.get(row["source"], "torchao"))
        question = (flags["model"], flags["device"], flags["precision"], recipe,
                    flags["platform"], flags["ranks"], flags["global-batch"], flags["seq-len"],
                    attention, bool(early_stop))
        if question not in plans:
            n = len(plans)
            platform = out / f"platform_{n}.json"
            platform.write_text(flags["platform"] + "\n")
            report = out / f"plan_{n}.json"
            asked = report.with_suffix(".question")  # what plan_N answers, for a rerun's reuse
            if (report.with_suffix(".csv").exists() and asked.exists()
                    and asked.read_text() == json.dumps(question)):  # the same question
                plans[question] = list(csv.DictReader(open(report.with_suffix(".csv"))))
                rows.append((row, flags, config, plans[question]))
                continue
            asked.write_text(json.dumps(question))
            done = subprocess.run(
                [dtsim, "plan", "--model", flags["model"], "--device", flags["device"],
                 "--precision", flags["precision"], "--fp8-recipe", recipe,
                 "--attention", attention,
                 "--platform", str(platform), "--gpus",
                 flags["ranks"], "--global-batch", flags["global-batch"], "--seq-len",
                 flags["seq-len"], "--simulate", "0", "--report", str(report)] + early_stop,
                capture_output=True, text=True)
            plans[question] = (list(csv.DictReader(open(report.with_suffix(".csv"))))
                               if done.returncode == 0 else done.stderr.strip())
        rows.append((row, flags, config, plans[question]))
    checks = []
    for row, flags, config, plan in rows:
        if isinstance(plan, str):
            checks.append(dict(case_id=row["case_id"], status="plan failed: " + plan))
            continue
        best = plan[0] if plan else None
        match = [p for p in plan if all(p[k] == v for k, v in config.items() if k != "ep")]
        if config["ep"] != "1":
            status = "published uses expert parallelism (not enumerated)"
        elif not match:
            status = "published not kept (out of memory by the memory model, or not enumerated)"
        else:
            status = "ok"
        pub = match[0] if match and status == "ok" else None
        checks.append(dict(
            case_id=row["case_id"], model=flags["model"], device=flags["device"],
            metric=row["metric"], seq_len=flags["seq-len"], precision=flags["precision"],
            global_batch=flags["global-batch"],
            gpus=flags["ranks"], status=status,
            published=" ".join(f"{k}{v}" for k, v in config.items()),
            published_est_sec=pub["estimated_iteration_sec"] if pub else "",
            best=best["configuration"] if best else "",
            best_est_sec=best["estimated_iteration_sec"] if best else "",
            gain_pct=(f"{100 * (1 - float(best['estimated_iteration_sec']) / float(pub['estimated_iteration_sec'])):.1f}"
                      if pub else ""),
            best_no_slower=(float(best["estimated_iteration_sec"])
                            <= float(pub["estimated_iteration_sec"]) if pub else ""),
            measured_rate=rate(row, flags),
            estimated_rate=float(pub["tokens_per_sec_per_gpu"]) if pub else ""))
    with open(out / "published.csv", "w", newline="") as f:
        keys = sorted({k for c in checks for k in c}, key=lambda k: list(checks[0]).index(k)
                      if k in checks[0] else 99)
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(checks)
    pairs = agree = 0
    # The pairs read by kind: most differ in sequence or GPU count, which says little about
    # choosing a configuration; "same job" pairs (also the same GPUs and batch) say the most.
    kinds = {"MPT rows among themselves": lambda a, b: a["model"].startswith("mpt")
             and b["model"].startswith("mpt"),
             "the other rows": lambda a, b: not a["model"].startswith("mpt"),
             "the same sequence and precision": lambda a, b: same(a, b, "seq_len", "precision"),
             "the same sequence, precision and global batch":
                 lambda a, b: same(a, b, "seq_len", "precision", "global_batch"),
             "the same job (also the same GPU count)":
                 lambda a, b: same(a, b, "seq_len", "precision", "global_batch", "gpus")}
    by_kind = {k: [0, 0] for k in kinds}
    kept = [c for c in checks if c.get("status") == "ok"]
    for i, a in enumerate(kept):
        for b in kept[i + 1:]:
            if (a["model"], a["device"], a["metric"]) != (b["model"], b["device"], b["metric"]):
                continue  # one model on one GPU, one metric (a TFLOP/s row is no tokens/s row)
            if a["published"] == b["published"] and a["gpus"] == b["gpus"]:
                continue  # the same configuration (rows differing in a flag dtsim ignores)
            if a["measured_rate"] == b["measured_rate"]:
                continue
            pairs += 1
            agrees = ((a["measured_rate"] > b["measured_rate"])
                      == (a["estimated_rate"] > b["estimated_rate"]))
            agree += agrees
            for kind, holds in kinds.items():
                if holds(a, b):
                    by_kind[kind][0] += 1
                    by_kind[kind][1] += agrees
    ok = sum(1 for c in kept if c["best_no_slower"])
    summary = {"rows": len(checks), "published_kept": len(kept), "best_no_slower": ok,
               "pairs": pairs, "pairs_agreeing": agree,
               "agreement_pct": round(100 * agree / pairs, 1) if pairs else None,
               "pairs_by_kind": {k: {"pairs": n, "agreeing": m,
                                     "agreement_pct": round(100 * m / n, 1) if n else None}
                                 for k, (n, m) in by_kind.items()},
               "not_kept": sorted({c["status"] for c in checks if c.get("status") != "ok"})}
    (out / "published_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
