"""Samples/s against GPUs per strategy, one panel per model: results/cnn_strategies.csv ->
results/cnn_strategies.png (log-log; dotted: linear scaling from data parallelism at 8 GPUs)."""
import csv
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

results = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent /
                       "results")
rows = [r for r in csv.DictReader(open(results / "cnn_strategies.csv")) if not r["error"]]
models = list(dict.fromkeys(r["model"] for r in rows))
titles = {"resnet50": "ResNet-50 (224², 32 samples per group)",
          "cosmoflow": "CosmoFlow (128³, 4 samples per group)",
          "cosmoflow512": "CosmoFlow (512³, 1 sample per group)"}
styles = {"data": ("k", "o", "-"), "spatial": ("tab:blue", "s", "-"),
          "filter": ("tab:green", "^", "-"), "channel": ("tab:orange", "v", "-"),
          "pipeline": ("tab:red", "D", "-")}
fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 5), squeeze=False)
for ax, model in zip(axes[0], models):
    mrows = [r for r in rows if r["model"] == model]
    strategies = list(dict.fromkeys(r["strategy"] for r in mrows))
    seen = {}
    for s in strategies:
        sel = sorted((r for r in mrows if r["strategy"] == s), key=lambda r: int(r["gpus"]))
        family = s.split()[0]
        color, marker, _ = styles.get(family, ("grey", "x", "-"))
        k = seen.get(family, 0)
        seen[family] = k + 1
        ax.plot([int(r["gpus"]) for r in sel], [float(r["samples_per_sec"]) for r in sel],
                color=color, marker=marker, ls=["-", "--", ":"][k % 3], lw=1.3, ms=4, label=s)
    base = [r for r in mrows if r["strategy"] == "data"]
    if base:
        b = min(base, key=lambda r: int(r["gpus"]))
        xs = sorted({int(r["gpus"]) for r in mrows})
        per = float(b["samples_per_sec"]) / int(b["gpus"])
        ax.plot(xs, [per * x for x in xs], color="grey", lw=0.8, ls=(0, (1, 3)),
                label="linear from data @ 8")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("GPUs (V100, DGX-1 nodes of 8)")
    ax.set_ylabel("samples/s (global batch / iteration time)")
    ax.set_title(titles.get(model, model))
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    ax.legend(fontsize=7, ncol=2)
fig.suptitle("dtsim: CNN parallelization strategies, weak scaling over data parallelism",
             fontsize=11)
fig.tight_layout()
fig.savefig(results / "cnn_strategies.png", dpi=120)
