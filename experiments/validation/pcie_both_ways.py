"""DeepBench's PCIe all-reduce rows both ways: with the dual-root box's 6 GB/s (NCCL's QPI
bandwidth, BDW_QPI_BW: the `pcie8-fdr` preset, what the runner uses) and with peer-to-peer at
NCCL's PCIe 3.0 x16 rate of 12 GB/s (`pcie8-single-root` with the rows' 56 Gb/s FDR NICs), the
figure the 6 GB/s replaced.

    pcie_both_ways.py [--dtsim PATH] [--out DIR]

Runs validate.py twice on the DBAR rows of data/published.csv, the second time with their
system described as a single-root box (GPU and intra-node columns rewritten, network stated as
one 56 Gb/s port), and writes DIR/pcie_both_ways.md (default: results/). Nothing is fitted: the
two bandwidths are NCCL's own constants (platforms/PRESETS.md).
"""
import argparse
import csv
import os
import pathlib
import subprocess
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]


def read_rows(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, [r for r in reader if r["case_id"].startswith("DBAR-")]


def as_single_root(row):
    r = dict(row)
    r["gpu"] = "Tesla P100 (PCIe)" if "P100" in row["gpu"] else "GTX Titan X (Maxwell)"
    r["intra_link"] = "8-GPU single-root PLX PCIe3 box (peer-to-peer at PCIe 3.0 x16)"
    r["inter_network"] = "n/a (single node)" if row["nodes"] == "1" else "1x 56 Gb/s FDR"
    r["source"] = "DeepBench rows, system rewritten for pcie_both_ways.py"
    return r


def run(dtsim, fields, rows, work, name):
    cases = work / f"{name}.csv"
    with open(cases, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    out = work / name
    subprocess.run(["/usr/bin/python3", str(HERE / "validate.py"), "--cases", str(cases),
                    "--out", str(out), "--dtsim", dtsim, "--jobs", "2"], check=True,
                   capture_output=True)
    with open(out / "results.csv", newline="") as f:
        return {r["case_id"]: r for r in csv.DictReader(f)}


def mape(results, keep):
    errors = [abs(float(r["error_pct"])) for r in results.values() if keep(r)]
    return sum(errors) / len(errors), len(errors)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtsim", default=os.environ.get("DTSIM", str(REPO / "build/sim/dtsim")))
    ap.add_argument("--out", default=str(HERE / "results"))
    a = ap.parse_args()
    fields, rows = read_rows(HERE / "data/published.csv")
    work = pathlib.Path(tempfile.mkdtemp())
    dual = run(a.dtsim, fields, rows, work, "dual_root")
    single = run(a.dtsim, fields, [as_single_root(r) for r in rows], work, "single_root")
    nodes = {r["case_id"]: int(r["nodes"]) for r in rows}
    lines = ["# DeepBench's PCIe all-reduce rows both ways", "",
             "`experiments/validation/pcie_both_ways.py`: the same rows with each GPU link at "
             "NCCL's QPI rate (6 GB/s, `pcie8-fdr`, the runner's) and at its PCIe 3.0 x16 rate "
             "(12 GB/s, `pcie8-single-root` with the rows' 56 Gb/s FDR).", "",
             "| rows | count | MAPE, 6 GB/s | MAPE, 12 GB/s |", "|---|---|---|---|"]
    for label, keep in [("one node", lambda r: nodes[r["case_id"]] == 1),
                        ("across nodes", lambda r: nodes[r["case_id"]] > 1),
                        ("all", lambda r: True)]:
        d, n = mape(dual, keep)
        s, _ = mape(single, keep)
        lines.append(f"| {label} | {n} | {d:.1f} % | {s:.1f} % |")
    path = pathlib.Path(a.out) / "pcie_both_ways.md"
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
