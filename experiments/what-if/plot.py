"""Predicted against measured speedup of every what-if pair: results/pairs.csv -> results/*.png."""
import csv
import itertools
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

results = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent /
                       "results")
rows = list(csv.DictReader(open(results / "pairs.csv")))


def group(r):
    """The legend entry of a pair: its set, the hybrid.csv groups (one kind each) together."""
    kind = "hybrid.csv what-if groups" if r["model"] == "strategy knob" else r["kind"]
    return f"{kind} ({r['model']})"


groups = sorted({group(r) for r in rows})
markers = dict(zip(groups, itertools.cycle("osD^v<>pPX*")))
colors = {name: f"C{i % 10}" for i, name in enumerate(groups)}  # one colour in both panels
fig, axes = plt.subplots(1, 2, figsize=(11, 5))
for ax, small in zip(axes, (False, True)):
    for name in groups:  # every pair is drawn: the left panel or the right one
        sel = [r for r in rows if group(r) == name and
               (abs(float(r["measured_speedup"]) - 1) < 0.06) == small]
        if sel:
            ax.scatter([float(r["measured_speedup"]) for r in sel],
                       [float(r["predicted_speedup"]) for r in sel], marker=markers[name],
                       color=colors[name], label=name, alpha=0.8)
    lo, hi = ax.get_xlim()
    lo, hi = min(lo, ax.get_ylim()[0]), max(hi, ax.get_ylim()[1])
    ax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="predicted = measured")
    ax.axhline(1, color="grey", lw=0.5)
    ax.axvline(1, color="grey", lw=0.5)
    ax.set_xlabel("measured speedup (changed / baseline)")
    ax.set_ylabel("dtsim's predicted speedup")
    ax.set_title("pairs within ±6 %" if small else "pairs beyond ±6 %")
    ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(results / "predicted_vs_measured.png", dpi=120)
