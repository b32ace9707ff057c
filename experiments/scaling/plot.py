"""Plots results.csv of experiments/scaling (run by run.sh with Debian's python3).

efficiency.png: per workload, scaling efficiency (single-GPU iteration / predicted iteration)
against the number of GPUs, for each topology and algorithm; points not run are left out.
iteration_time.png: the same points' predicted iteration times (log scale).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import ScalarFormatter  # noqa: E402

csv_path, out_dir = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(csv_path)))
workloads = list(dict.fromkeys(r["workload"] for r in rows))
series = list(dict.fromkeys((r["topology"], r["algorithm"]) for r in rows))
colors = {"fat-tree": "#1f77b4", "torus": "#d62728"}
lines = {"ring": "-", "tree": "--", "auto": ":"}


def plot(metric, ylabel, log_y, path):
    fig, axes = plt.subplots(1, len(workloads), figsize=(6 * len(workloads), 4.5), squeeze=False)
    for ax, workload in zip(axes[0], workloads):
        for topology, algorithm in series:
            pts = [r for r in rows if r["workload"] == workload and r["topology"] == topology
                   and r["algorithm"] == algorithm and r["status"] == "ok"]
            if not pts:
                continue
            ax.plot([int(r["ranks"]) for r in pts], [metric(r) for r in pts],
                    lines.get(algorithm, ":"), color=colors.get(topology), marker="o",
                    label=f"{topology}, {algorithm}")
        ax.set_xscale("log", base=2)
        scales = sorted({int(r["ranks"]) for r in rows})  # every scale of the grid, run or not
        ax.set_xlim(scales[0] / 1.5, scales[-1] * 1.5)
        ax.set_xticks(scales)
        ax.set_xticklabels([str(n) for n in scales])
        ax.set_xlabel("GPUs (data-parallel ranks)")
        ax.set_ylabel(ylabel)
        if log_y:
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(ScalarFormatter())
            ax.yaxis.set_minor_formatter(ScalarFormatter())
        else:
            ax.set_ylim(0, 102)
        ax.set_title(f"{workload}: 100 Gb/s links, 1 µs per link")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8, loc="upper left" if log_y else "lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


plot(lambda r: 100 * float(r["scaling_efficiency"]), "scaling efficiency (%)", False,
     f"{out_dir}/efficiency.png")
plot(lambda r: float(r["iteration_time_sec"]), "predicted iteration time (s)", True,
     f"{out_dir}/iteration_time.png")
