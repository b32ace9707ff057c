"""Plots a `dtsim collective --bytes MIN..MAX --csv F.csv` sweep: bus bandwidth against size, one
line per algorithm (as nccl-tests users plot busbw).

Usage: sweep_plot.py SWEEP.csv OUT.png [--title TEXT]
"""
import argparse
import csv
import collections

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("png")
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    lines = collections.OrderedDict()
    with open(args.csv) as f:
        for row in csv.DictReader(f):
            lines.setdefault(row["algorithm"], []).append(
                (int(row["bytes"]), float(row["bus_bandwidth_bytes_per_sec"]) / 1e9))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for algorithm, points in lines.items():
        ax.plot([b for b, _ in points], [g for _, g in points], marker="o", label=algorithm)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes per rank")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.set_title(args.title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)


if __name__ == "__main__":
    main()
