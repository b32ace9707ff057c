"""Plots experiments/llm-parallelism results: iteration time and exposed communication per
(tp, pp) factorization, full fat-tree vs 2:1 tapered. Usage: plot.py results.csv out.png"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(path, png):
    rows = [r for r in csv.DictReader(open(path)) if r["iteration_sec"]]
    configs = sorted({(int(r["tp"]), int(r["pp"])) for r in rows})
    labels = [f"tp{tp} pp{pp}" for tp, pp in configs]
    by = {(r["fabric"], int(r["tp"]), int(r["pp"])): r for r in rows}
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    x = range(len(configs))
    width = 0.4
    for k, (fabric, name) in enumerate([("full", "non-blocking"), ("taper2", "2:1 tapered")]):
        xs = [i + (k - 0.5) * width for i in x]
        top.bar(xs, [float(by[(fabric, tp, pp)]["iteration_sec"]) for tp, pp in configs],
                width, label=name)
        base = [0.0] * len(configs)
        for kind, hatch in [("tp", ""), ("pp", "//"), ("dp", "..")]:
            vals = [float(by[(fabric, tp, pp)][f"exposed_{kind}_sec"]) for tp, pp in configs]
            bottom.bar(xs, vals, width, bottom=base, hatch=hatch, color=f"C{k}",
                       edgecolor="black", linewidth=0.3,
                       label=f"{name}: {kind}" if True else None)
            base = [b + v for b, v in zip(base, vals)]
    top.set_ylabel("iteration time (s)")
    top.legend()
    top.set_title("GPT-3 13B on 1024 A100s (128 DGX-like nodes), global batch 256 x 2048, 1F1B")
    bottom.set_ylabel("exposed communication (s)\n(pp includes the bubble)")
    bottom.set_xticks(list(x))
    bottom.set_xticklabels(labels, rotation=60, ha="right")
    bottom.legend(ncol=2, fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
