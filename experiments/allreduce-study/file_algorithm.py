"""A file-defined algorithm among the built-ins: the bidirectional ring (bidirectional_ring.py,
written as an algorithm file) against the ring and halving-doubling, on the study's fat-trees
and tori (study.py), 8, 64 and 512 ranks, 1 KiB ... 1 GiB.

Usage: file_algorithm.py [--dtsim PATH] [--out DIR] [--jobs N]
Each (topology, ranks) is one `dtsim collective --bytes 1KiB..1GiB --step-factor 16` sweep with
the three algorithms. Writes DIR/file_algorithm.csv and DIR/file_algorithm.png. Deterministic.
"""
import argparse
import csv
import json
import pathlib
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bidirectional_ring  # noqa: E402
from study import REPO, TOPOLOGIES  # noqa: E402

SCALES = [8, 64, 512]
FILE = "bidirectional-ring"


def sweep(dtsim, platform, p, algorithm_file, csv_path, jobs):
    subprocess.run([dtsim, "collective", "--platform", str(platform), "--ranks", str(p),
                    "--op", "all-reduce", "--bytes", "1KiB..1GiB", "--step-factor", "16",
                    "--algorithm", "ring", "--algorithm", "halving-doubling",
                    "--algorithm", f"file:{algorithm_file}", "--csv", str(csv_path),
                    "--jobs", str(jobs)], check=True, stdout=subprocess.DEVNULL)
    with open(csv_path) as f:
        return list(csv.DictReader(f))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtsim", default=str(REPO / "build/sim/dtsim"))
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for p in SCALES:
            algorithm_file = work / f"bidirectional_ring_{p}.json"
            algorithm_file.write_text(json.dumps(bidirectional_ring.algorithm(p)))
            for topology, make in TOPOLOGIES.items():
                platform = work / f"{topology}_{p}.json"
                platform.write_text(json.dumps(make(p)))
                for r in sweep(args.dtsim, platform, p, algorithm_file, work / "s.csv", args.jobs):
                    name = FILE if r["algorithm"].startswith("file:") else r["algorithm"]
                    rows.append({"topology": topology, "ranks": p, "bytes": int(r["bytes"]),
                                 "algorithm": name, "time_sec": r["time_sec"],
                                 "bus_bandwidth_bytes_per_sec": r["bus_bandwidth_bytes_per_sec"]})
    with open(out / "file_algorithm.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, out / "file_algorithm.png")


def plot(rows, png):
    """Time relative to the ring, per topology: one line per (algorithm, scale)."""
    ring = {(r["topology"], r["ranks"], r["bytes"]): float(r["time_sec"])
            for r in rows if r["algorithm"] == "ring"}
    fig, axes = plt.subplots(1, len(TOPOLOGIES), figsize=(12, 4.5), sharey=True)
    for ax, topology in zip(axes, TOPOLOGIES):
        for algorithm, style in (("halving-doubling", "--"), (FILE, "-")):
            for p in SCALES:
                points = [(r["bytes"], float(r["time_sec"]) / ring[(topology, p, r["bytes"])])
                          for r in rows
                          if r["topology"] == topology and r["ranks"] == p
                          and r["algorithm"] == algorithm]
                ax.plot([b for b, _ in points], [t for _, t in points], style, marker="o",
                        label=f"{algorithm}, {p} ranks")
        ax.axhline(1, color="black", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("bytes per rank")
        ax.set_title(topology)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("time / ring's time")
    axes[-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main()
