"""Plots results.csv of experiments/oversubscription (run by run.sh with Debian's python3).

iteration_time.png: per workload, the iteration time at each taper for every placement and
algorithm, split into compute and exposed communication.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

csv_path, out_dir = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(csv_path)))
workloads = list(dict.fromkeys(r["workload"] for r in rows))
tapers = list(dict.fromkeys(r["taper"] for r in rows))
series = list(dict.fromkeys((r["placement"], r["algorithm"]) for r in rows))
colors = {("linear", "ring"): "#1f77b4", ("linear", "tree"): "#aec7e8",
          ("random", "ring"): "#d62728", ("random", "tree"): "#ff9896"}

fig, axes = plt.subplots(1, len(workloads), figsize=(6 * len(workloads), 4.5), squeeze=False)
width = 0.8 / len(series)
for ax, workload in zip(axes[0], workloads):
    for i, s in enumerate(series):
        xs, compute, exposed = [], [], []
        for t, taper in enumerate(tapers):
            r = next(r for r in rows if r["workload"] == workload and r["taper"] == taper
                     and (r["placement"], r["algorithm"]) == s)
            xs.append(t - 0.4 + width * (i + 0.5))
            compute.append(float(r["compute_sec"]) * 1e3)
            exposed.append(float(r["exposed_comm_sec"]) * 1e3)
        ax.bar(xs, compute, width, color="#cccccc", edgecolor="white",
               label="compute" if i == 0 else None)
        ax.bar(xs, exposed, width, bottom=compute, color=colors.get(s, None), edgecolor="white",
               label=f"exposed comm: {s[0]} placement, {s[1]}")
    ax.set_xticks(range(len(tapers)))
    ax.set_xticklabels([f"{t} taper" for t in tapers])
    ax.set_ylabel("iteration time (ms)")
    ax.set_title(f"{workload}, 64 GPUs, 8-ary 2-tree, 100 Gb/s")
    ax.grid(axis="y", alpha=0.3)
axes[0][-1].legend(fontsize=8, loc="upper left")
fig.tight_layout()
fig.savefig(f"{out_dir}/iteration_time.png", dpi=110)
