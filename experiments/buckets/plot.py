"""Tables and plots of experiments/buckets (run by run.sh with Debian's python3).

Reads results/results.csv and config/ddpb_rn50.csv (the PyTorch DDP benchmark's ResNet-50 rows
with bucket_cap_mb=1, transcribed from experiments/validation/data/published.csv), writes:
  results/ddpb_comparison.csv: per GPU count, the published throughput change of 1 MB buckets
      against 25 MB (p75 of both runs, as the source states it) and dtsim's (1 MiB against
      25 MiB on dgx1-v100: t25 / t1 - 1), ring and tree;
  results/exposed_comm.png: exposed communication against the bucket cap, per platform;
  results/ddpb_comparison.png: the comparison as bars.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

csv_path, out_dir = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
rows = list(csv.DictReader(open(csv_path)))
caps = list(dict.fromkeys(r["bucket_mb"] for r in rows))


def point(platform, ranks, algorithm, cap):
    return next(r for r in rows if r["platform"] == platform and r["ranks"] == str(ranks)
                and r["algorithm"] == algorithm and r["bucket_mb"] == cap)


# Exposed communication against the bucket cap.
platforms = list(dict.fromkeys(r["platform"] for r in rows))
fig, axes = plt.subplots(1, len(platforms), figsize=(6 * len(platforms), 4.5), squeeze=False)
styles = {("8", "ring"): ("#1f77b4", "-"), ("8", "tree"): ("#1f77b4", "--"),
          ("16", "ring"): ("#d62728", "-"), ("16", "tree"): ("#d62728", "--")}
for ax, platform in zip(axes[0], platforms):
    for (ranks, algorithm), (color, ls) in styles.items():
        ys = [float(point(platform, ranks, algorithm, c)["exposed_comm_sec"]) * 1e3 for c in caps]
        ax.plot(range(len(caps)), ys, ls, color=color, marker="o",
                label=f"{ranks} GPUs, {algorithm}")
    ax.set_xticks(range(len(caps)))
    ax.set_xticklabels([c if c == "all" else f"{c}" for c in caps])
    ax.set_xlabel("bucket cap (MiB; 'all': one bucket after DDP's 1 MiB first one)")
    ax.set_ylabel("exposed communication (ms per iteration)")
    ax.set_title(f"ResNet-50 (V100, batch 32), {platform}, 8.4 µs per collective")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(f"{out_dir}/exposed_comm.png", dpi=110)

# The comparison with the published 1 MB vs 25 MB rows.
published = list(csv.DictReader(open(f"{here}/config/ddpb_rn50.csv")))
out = []
for p in published:
    line = {"case_id": p["case_id"], "gpus": p["gpus"],
            "published_throughput_diff_pct": p["throughput_diff_vs_25mb_pct"],
            "published_1mb_p75_sec": p["value_sec"],
            "published_25mb_p50_sec": p["baseline_p50_sec"],
            "baseline_case_id": p["baseline_case_id"]}
    for algorithm in ("ring", "tree"):
        t1 = float(point("dgx1-v100", p["gpus"], algorithm, "1")["iteration_time_sec"])
        t25 = float(point("dgx1-v100", p["gpus"], algorithm, "25")["iteration_time_sec"])
        line[f"dtsim_{algorithm}_1mib_sec"] = f"{t1:.6f}"
        line[f"dtsim_{algorithm}_25mib_sec"] = f"{t25:.6f}"
        line[f"dtsim_{algorithm}_throughput_diff_pct"] = f"{100 * (t25 / t1 - 1):.2f}"
    out.append(line)
with open(f"{out_dir}/ddpb_comparison.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(out[0]))
    w.writeheader()
    w.writerows(out)

fig, ax = plt.subplots(figsize=(6.5, 4))
xs = range(len(out))
width = 0.27
ax.bar([x - width for x in xs], [float(o["published_throughput_diff_pct"]) for o in out], width,
       color="#555555", label="published (DDPB-25..29, p75)")
ax.bar(list(xs), [float(o["dtsim_ring_throughput_diff_pct"]) for o in out], width,
       color="#1f77b4", label="dtsim, ring")
ax.bar([x + width for x in xs], [float(o["dtsim_tree_throughput_diff_pct"]) for o in out], width,
       color="#aec7e8", label="dtsim, tree")
ax.set_xticks(list(xs))
ax.set_xticklabels([f"{o['gpus']} GPU" + ("s" if o["gpus"] != "1" else "") for o in out])
ax.set_ylabel("throughput change, 1 MB vs 25 MB buckets (%)")
ax.set_title("ResNet-50 on DGX-1 V100: 1 MB buckets against 25 MB")
ax.axhline(0, color="black", lw=0.8)
ax.grid(axis="y", alpha=0.3)
ax.legend(fontsize=8, loc="lower left")
fig.tight_layout()
fig.savefig(f"{out_dir}/ddpb_comparison.png", dpi=110)
