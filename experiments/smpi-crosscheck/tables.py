#!/usr/bin/env python3
"""Prints the README's result tables from run.sh's results.csv (standard library only).

    python3 experiments/smpi-crosscheck/tables.py out/smpi-crosscheck/results.csv
"""
import csv
import sys
from collections import defaultdict

PAIRS = [  # (op, dtsim algorithm, SMPI algorithm), as run.sh pairs them
    ("all-reduce", "ring", "lr"),
    ("all-reduce", "halving-doubling", "rab_rdb"),
    ("all-reduce", "recursive-doubling", "rdb"),
    ("reduce-scatter", "ring", "ompi_ring"),
    ("reduce-scatter", "halving-doubling", "ompi_basic_recursivehalving"),
    ("all-gather", "ring", "NTSLR"),
    ("all-gather", "halving-doubling", "rdb"),
]


def us(seconds: str) -> str:
    return f"{float(seconds) * 1e6:.3f}"


def diff(row: dict) -> str:
    d = float(row["diff_pct"])
    text = f"{d:+.4f} %"
    return f"**{text}**" if abs(d) >= 1 else text


def main(path: str) -> None:
    rows = list(csv.DictReader(open(path)))
    matrix = [r for r in rows if not r["note"]]
    diagnostics = [r for r in rows if r["note"]]
    commit = rows[0]["git_commit"] if rows else "?"
    print(f"Commit {commit}. Times in µs; diff = (dtsim − SMPI) / SMPI; bold: 1 % or more.\n")

    cases = sorted({(r["platform"], int(r["ranks"]), int(r["bytes"])) for r in matrix},
                   key=lambda c: (c[0], c[1], c[2]))
    index = {(r["platform"], int(r["ranks"]), int(r["bytes"]), r["op"], r["dtsim_algorithm"],
              r["smpi_algorithm"]): r for r in matrix}
    print("| platform | ranks | bytes | op | dtsim | SMPI | dtsim µs | SMPI µs | diff |")
    print("|---|---|---|---|---|---|---|---|---|")
    for platform, ranks, size in cases:
        for op, ours, theirs in PAIRS + [("all-reduce", "halving-doubling", "rab")]:
            r = index.get((platform, ranks, size, op, ours, theirs))
            if r:
                print(f"| {platform} | {ranks} | {size} | {op} | {ours} | {theirs} | "
                      f"{us(r['dtsim_sec'])} | {us(r['smpi_sec'])} | {diff(r)} |")

    print("\nDiagnostics (one thing changed on one side, to test an explanation):\n")
    print("| platform | ranks | op | bytes | dtsim | SMPI | dtsim µs | SMPI µs | diff | what changed |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in diagnostics:
        print(f"| {r['platform']} | {r['ranks']} | {r['op']} | {r['bytes']} | "
              f"{r['dtsim_algorithm']} | {r['smpi_algorithm']} | {us(r['dtsim_sec'])} | "
              f"{us(r['smpi_sec'])} | {diff(r)} | {r['note']} |")

    print("\nAgreement by pair (all platforms, rank counts and sizes):\n")
    print("| pair | runs | within 1 % | largest absolute diff |")
    print("|---|---|---|---|")
    by_pair = defaultdict(list)
    for r in matrix:
        by_pair[(r["op"], r["dtsim_algorithm"], r["smpi_algorithm"])].append(float(r["diff_pct"]))
    for pair in PAIRS:
        diffs = by_pair.get(pair, [])
        if diffs:
            within = sum(abs(d) < 1 for d in diffs)
            print(f"| {pair[0]} {pair[1]} ↔ {pair[2]} | {len(diffs)} | {within} | "
                  f"{max(abs(d) for d in diffs):.4f} % |")


if __name__ == "__main__":
    main(sys.argv[1])
