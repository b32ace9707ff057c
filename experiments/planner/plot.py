#!/usr/bin/python3
"""The memory-time front of a plan: every configuration that fits (peak memory per GPU against
estimated step time), the Pareto front (no other is both faster and smaller), and the simulated
ones. Usage: plot.py PLAN.csv OUT.png"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    gib = [int(r["peak_memory_bytes"]) / 2**30 for r in rows]
    est = [float(r["estimated_iteration_sec"]) for r in rows]
    front, best = [], float("inf")
    for g, t, r in sorted(zip(gib, est, rows), key=lambda x: (x[0], x[1])):
        if t < best:
            front.append((g, t, tuple(sorted(r.items()))))
            best = t
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.scatter(gib, est, s=4, alpha=0.3, color="gray", label=f"{len(rows)} configurations that fit")
    front = [(g, t, dict(r)) for g, t, r in front]
    ax.plot([f[0] for f in front], [f[1] for f in front], "o-", color="C0", ms=4,
            label="memory-time front (estimate)")
    sim = [r for r in rows if r["simulated_iteration_sec"]]
    ax.scatter([int(r["peak_memory_bytes"]) / 2**30 for r in sim],
               [float(r["simulated_iteration_sec"]) for r in sim], marker="*", s=120,
               color="C3", label="simulated (SimGrid)", zorder=5)
    picks = {min(range(len(front)), key=lambda i: abs(front[i][0] - m)) for m in (5, 10, 20)}
    picks.add(len(front) - 1)
    for g, t, r in (front[i] for i in sorted(picks)):
        ax.annotate(f"{r['configuration']}\n{t:.1f} s, {g:.1f} GiB", (g, t), fontsize=7,
                    xytext=(6, 18), textcoords="offset points",
                    arrowprops=dict(arrowstyle="-", lw=0.5))
    ax.set_yscale("log")
    ax.set_xlabel("peak memory per GPU (GiB, memory model)")
    ax.set_ylabel("step time (s)")
    ax.set_title("Llama-3 70B on 512 A100-80GB, global batch 512 x 8192: dtsim plan")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)
    with open(sys.argv[2].rsplit(".", 1)[0] + "_front.csv", "w") as out:
        out.write("peak_gib,estimated_sec,configuration\n")
        for g, t, r in front:
            out.write(f"{g:.2f},{t:.6g},{r['configuration']}\n")


if __name__ == "__main__":
    main()
