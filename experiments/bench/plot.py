"""Medians of experiments/bench/run.sh's runs: a Markdown table and a log-log plot of wall time
against ranks, with the per-event limit line (ranks x tasks per rank x measured cost per task).

Usage: /usr/bin/python3 experiments/bench/plot.py out/bench/results.csv out/bench
"""
import csv
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KEY = ("kind", "workload", "ranks", "topology", "algorithm", "path")


def medians(rows):
    """One row per configuration: medians of wall, CPU and peak RSS; the rest from the first run."""
    groups = defaultdict(list)
    for row in rows:
        groups[tuple(row[k] for k in KEY)].append(row)
    out = []
    for key, runs in groups.items():
        m = dict(zip(KEY, key))
        m["ranks"] = int(m["ranks"])
        m["repeats"] = len(runs)
        for field in ("wall_sec", "cpu_sec", "peak_rss_mib"):
            m[field] = statistics.median(float(r[field]) for r in runs)
        for field in ("predicted_sec", "tasks_replayed", "all_reduces_memoized"):
            m[field] = runs[0][field]
        out.append(m)
    out.sort(key=lambda m: (m["kind"], m["workload"], m["path"], m["algorithm"], m["ranks"]))
    return out


def per_task_cost(table):
    """Median seconds of wall time per replayed task over the step-level runs, and the ResNet-50
    step-level ring's tasks per rank at its smallest measured size."""
    step = [m for m in table if m["path"] == "step-level" and m["kind"] == "simulate"]
    cost = statistics.median(m["wall_sec"] / int(m["tasks_replayed"]) for m in step)
    ring = min((m for m in step if m["algorithm"] == "ring" and m["workload"].startswith("resnet")),
               key=lambda m: m["ranks"])
    return cost, int(ring["tasks_replayed"]) / ring["ranks"], ring


def write_table(table, path):
    lines = [
        "| what | workload | ranks | topology | algorithm | path | wall (s) | CPU (s) | "
        "peak RSS (MiB) | predicted (s) | tasks replayed | all-reduces memoized | runs |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in table:
        what = "1 GiB all-reduce" if m["kind"] == "collective" else "DP iteration"
        workload = "" if m["kind"] == "collective" else m["workload"]
        lines.append(
            f"| {what} | {workload} | {m['ranks']} | {m['topology']} | {m['algorithm']} | "
            f"{m['path']} | {m['wall_sec']:.2f} | {m['cpu_sec']:.2f} | {m['peak_rss_mib']:.0f} | "
            f"{float(m['predicted_sec']):.6f} | {m['tasks_replayed']} | "
            f"{m['all_reduces_memoized']} | {m['repeats']} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(table, path):
    cost, tasks_per_rank, ring = per_task_cost(table)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for m_kind, workload, algorithm, p, marker in [
        ("simulate", "resnet50_v100_b32", "ring", "collapsed", "o"),
        ("simulate", "bert_large_a100_seq128_b128", "ring", "collapsed", "s"),
        ("simulate", "resnet50_v100_b32", "tree", "fast", "D"),
        ("simulate", "bert_large_a100_seq128_b128", "tree", "fast", "v"),
        ("simulate", "resnet50_v100_b32", "ring", "step-level", "x"),
        ("simulate", "resnet50_v100_b32", "tree", "step-level", "+"),
        ("collective", "ring_1GiB", "ring", "collapsed", "^"),
    ]:
        pts = sorted((m["ranks"], m["wall_sec"]) for m in table
                     if (m["kind"], m["workload"], m["algorithm"], m["path"]) ==
                     (m_kind, workload, algorithm, p))
        if pts:
            label = f"{workload} {algorithm} {p}" if m_kind == "simulate" else "1 GiB ring all-reduce"
            ax.plot(*zip(*pts), marker=marker, label=label)
    ranks = sorted({m["ranks"] for m in table})
    ax.plot(ranks, [r * tasks_per_rank * cost for r in ranks], "k--",
            label=f"limit: ranks x {tasks_per_rank:.0f} tasks x {cost * 1e6:.1f} us")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("simulated ranks (GPUs)")
    ax.set_ylabel("wall time (s), median")
    ax.set_title("dtsim wall time, 3-level fat-trees (tasks per rank: ResNet-50 step-level ring, "
                 f"{ring['ranks']} ranks)", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    csv_path, out_dir = sys.argv[1], sys.argv[2]
    with open(csv_path) as f:
        table = medians(list(csv.DictReader(f)))
    write_table(table, f"{out_dir}/table.md")
    plot(table, f"{out_dir}/wall_vs_ranks.png")
    print(open(f"{out_dir}/table.md").read(), end="")
    print(f"wrote {out_dir}/table.md, {out_dir}/wall_vs_ranks.png")


if __name__ == "__main__":
    main()
