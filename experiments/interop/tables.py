#!/usr/bin/env python3
"""Tables of experiments/interop: dtsim's times against the alpha-beta closed form and against
ASTRA-sim's analytical formula with its extras (see README.md, "Formulas").
Usage: tables.py results.csv training.csv COMMIT  (markdown on stdout)"""
import csv
import sys

# config/switch_1024.json: a star, every host one link of 50 GB/s (10^9 bytes) and 500 ns to the
# switch, so a message crosses two links: alpha = 1 us, B = 50e9 bytes/s.
LINK_LATENCY_SEC = 500e-9
ALPHA_SEC = 2 * LINK_LATENCY_SEC
BANDWIDTH = 50e9
# ASTRA-sim's reading of the same numbers (shared/interop/README.md): "50 GB/s" is 50 * 2^30
# bytes/s; a Switch message pays two hops of link latency; each step adds the endpoint delay of
# its shipped system files (10 ns); each reduction step adds a pass of the step's chunk through
# local memory at local-mem-bw (1600 GB/s in Ring_4chunks.json, also 2^30) -- one pass per
# reduction step is our assumption, not a measured ASTRA-sim figure.
ASTRA_BANDWIDTH = 50 * 2**30
ASTRA_ENDPOINT_SEC = 10e-9
ASTRA_LOCAL_MEM = 1600 * 2**30


def steps(op, p):
    """(network steps, reduction steps) of the ring algorithm."""
    return {"all-reduce": (2 * (p - 1), p - 1), "reduce-scatter": (p - 1, p - 1),
            "all-gather": (p - 1, 0)}.get(op)


def closed_form(op, p, n):
    if op == "all-to-all":  # direct on a star (sim/collectives/direct.h)
        return ALPHA_SEC + (p - 1) / p * n / BANDWIDTH
    s, _ = steps(op, p)
    return s * (ALPHA_SEC + n / p / BANDWIDTH)


def astra(op, p, n):
    """ASTRA-sim's analytical formula and its three extras over the closed form, or None."""
    if op == "all-to-all":
        return None
    s, r = steps(op, p)
    gib = s * (n / p / ASTRA_BANDWIDTH - n / p / BANDWIDTH)  # negative: a larger bandwidth
    endpoint = s * ASTRA_ENDPOINT_SEC
    local = r * n / p / ASTRA_LOCAL_MEM
    return closed_form(op, p, n) + gib + endpoint + local, gib, endpoint, local


def size(n):
    return f"{n >> 20} MiB" if n % 2**20 == 0 else f"{n} B"


def main():
    results, training, commit = sys.argv[1], sys.argv[2], sys.argv[3]
    print(f"Commit {commit}. Times in microseconds; relative differences against the closed form.\n")
    print("| source | op | ranks | size | dtsim | closed form | dtsim - closed | ASTRA-sim formula "
          "| of which GiB | endpoint | local passes | dtsim vs ASTRA-sim | dtsim wall s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for row in csv.DictReader(open(results)):
        op, p, n = row["op"], int(row["ranks"]), int(row["bytes"])
        t = float(row["dtsim_sec"])
        c = closed_form(op, p, n)
        worst = max(worst, abs(t / c - 1))
        a = astra(op, p, n)
        us = lambda x: f"{x * 1e6:.3f}"
        astra_cells = ("n/a",) * 4 + ("n/a",) if a is None else (
            us(a[0]), us(a[1]), us(a[2]), us(a[3]), f"{(t / a[0] - 1) * 100:+.2f} %")
        print(f"| {row['source']} | {op} ({row['algorithm']}) | {p} | {size(n)} | {us(t)} | {us(c)} "
              f"| {(t / c - 1) * 100:+.1e} % | " + " | ".join(astra_cells) +
              f" | {row['wall_sec']} |")
    print(f"\nLargest |dtsim / closed form - 1|: {worst:.1e}.\n")
    print("| job | ranks | iteration s | read back from Chakra s | files | bytes | dump run wall s "
          "| --chakra run wall s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in csv.DictReader(open(training)):
        print(f"| {row['job']} | {row['ranks']} | {float(row['iteration_sec']):.9f} "
              f"| {float(row['chakra_iteration_sec']):.9f} | {row['files']} | {row['bytes']} "
              f"| {row['wall_sec']} | {row['chakra_wall_sec']} |")


if __name__ == "__main__":
    main()
