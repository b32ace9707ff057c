"""Which all-reduce algorithm wins where: algorithm x message size x scale x topology.

Usage: study.py [--dtsim PATH] [--out DIR] [--jobs N] [--max-ops N]
Each point is one `dtsim collective` run (SimGrid replay, exact network model). Points whose
schedule would exceed --max-ops transfers are not run and are listed in the CSV as skipped:
replaying millions of pipelined tree chunks takes minutes each on this machine class.
Writes DIR/results.csv, DIR/winners.csv and DIR/crossover.png. Deterministic.
"""
import argparse
import concurrent.futures
import csv
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
KIB = 1024
SIZES = [KIB * 4**k for k in range(11)] + [4 * 1024**3]  # 1 KiB, 4 KiB, ... 1 GiB, 4 GiB
SCALES = [8, 64, 512, 4096]
ALGORITHMS = ["ring", "double-tree", "halving-doubling", "recursive-doubling", "direct"]
CHUNK = 512 * KIB  # NCCL's pipelining step; the trees' chunk
LINK = {"link_bandwidth": "100Gbps", "link_latency": "1us"}  # one HDR-100-like link technology


def fat_tree(p):
    """Non-blocking: one switch up to 16 hosts; else sqrt(p)-ish leaves, each to every spine."""
    if p <= 16:
        return {"topology": "fat-tree", "levels": 1, "down": [p], "up": [1], "parallel": [1],
                **LINK}
    leaf = {64: 8, 512: 16, 4096: 64}[p]
    return {"topology": "fat-tree", "levels": 2, "down": [leaf, p // leaf], "up": [1, leaf],
            "parallel": [1, 1], **LINK}


def torus(p):
    side = round(p ** (1 / 3))
    assert side**3 == p
    return {"topology": "torus", "dims": [side] * 3, **LINK}


TOPOLOGIES = {"fat-tree": fat_tree, "torus-3d": torus}


def transfers(algorithm, p, size):
    """An upper bound of the transfers an algorithm schedules (collapsed ring: one per edge)."""
    chunks = math.ceil(size / CHUNK)
    log_p = math.ceil(math.log2(p))
    return {"ring": p, "double-tree": 4 * p * chunks, "halving-doubling": 2 * p * log_p,
            "recursive-doubling": p * log_p, "direct": 2 * p * p}[algorithm]


def run_point(dtsim, platform, p, size, algorithm, work):
    report = work / f"{platform.stem}_{p}_{size}_{algorithm}.json"
    proc = subprocess.run([dtsim, "collective", "--platform", str(platform), "--ranks", str(p),
                           "--op", "all-reduce", "--bytes", str(size), "--algorithm", algorithm,
                           "--chunk", str(CHUNK), "--report", str(report)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None, proc.stderr.strip()
    return json.loads(report.read_text())["time_sec"], ""


def points(work, max_ops):
    for topo, make in TOPOLOGIES.items():
        for p in SCALES:
            platform = work / f"{topo}_{p}.json"
            platform.write_text(json.dumps(make(p)) + "\n")
            for size in SIZES:
                for algorithm in ALGORITHMS:
                    skip = "" if transfers(algorithm, p, size) <= max_ops else \
                        f"over {max_ops:g} transfers"
                    yield {"topology": topo, "ranks": p, "bytes": size,
                           "algorithm": algorithm}, platform, skip


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtsim", default=os.environ.get("DTSIM", str(REPO / "build/sim/dtsim")))
    ap.add_argument("--out", default=str(REPO / "experiments/allreduce-study"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--max-ops", type=float, default=1.2e5)
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="dtsim-allreduce-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        work = pathlib.Path(tmp)
        jobs = []
        for key, platform, skip in points(work, a.max_ops):
            fut = None if skip else pool.submit(run_point, a.dtsim, platform, key["ranks"],
                                                key["bytes"], key["algorithm"], work)
            jobs.append((key, skip, fut))
        for i, (key, skip, fut) in enumerate(jobs):
            time_sec, error = (None, skip) if fut is None else fut.result()
            busbw = "" if time_sec is None else \
                f"{key['bytes'] * 2 * (key['ranks'] - 1) / key['ranks'] / time_sec / 1e9:.4f}"
            rows.append({**key, "time_sec": "" if time_sec is None else f"{time_sec:.9g}",
                         "bus_bandwidth_GBps": busbw, "skipped": error})
            print(f"\r{i + 1}/{len(jobs)} points", end="", file=sys.stderr)
    print(file=sys.stderr)
    write(out, rows)


def write(out, rows):
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    winners = []
    for topo in TOPOLOGIES:
        for p in SCALES:
            for size in SIZES:
                ran = [r for r in rows if r["topology"] == topo and r["ranks"] == p and
                       r["bytes"] == size and r["time_sec"]]
                best = min(ran, key=lambda r: float(r["time_sec"]))
                ring = next(r for r in ran if r["algorithm"] == "ring")
                winners.append({"topology": topo, "ranks": p, "bytes": size,
                                "fastest": best["algorithm"], "time_sec": best["time_sec"],
                                "ring_over_fastest": f"{float(ring['time_sec']) / float(best['time_sec']):.3f}",
                                "not_run": ";".join(r["algorithm"] for r in rows
                                                    if r["topology"] == topo and
                                                    r["ranks"] == p and r["bytes"] == size and
                                                    not r["time_sec"])})
    with open(out / "winners.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(winners[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(winners)
    plot(out, rows)


def plot(out, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no crossover.png", file=sys.stderr)
        return
    fig, axes = plt.subplots(len(TOPOLOGIES), len(SCALES), figsize=(16, 7.5), sharex=True)
    for i, topo in enumerate(TOPOLOGIES):
        for j, p in enumerate(SCALES):
            ax = axes[i][j]
            for algorithm in ALGORITHMS:
                pts = [r for r in rows if r["topology"] == topo and r["ranks"] == p and
                       r["algorithm"] == algorithm and r["time_sec"]]
                ring = {r["bytes"]: float(r["time_sec"]) for r in rows
                        if r["topology"] == topo and r["ranks"] == p and
                        r["algorithm"] == "ring"}
                ax.plot([r["bytes"] for r in pts],
                        [float(r["time_sec"]) / ring[r["bytes"]] for r in pts],
                        marker="o", ms=3, label=algorithm)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.axhline(1, color="gray", lw=0.6)
            ax.set_title(f"{topo}, {p} ranks", fontsize=10)
            if i == len(TOPOLOGIES) - 1:
                ax.set_xlabel("bytes per rank")
            if j == 0:
                ax.set_ylabel("time / ring's time")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("All-reduce: each algorithm's time relative to the ring's (below 1: faster)")
    fig.tight_layout()
    fig.savefig(out / "crossover.png", dpi=100, metadata={"Software": None})


if __name__ == "__main__":
    main()
