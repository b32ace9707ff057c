"""NCCL's own cost model, with its protocols, on the one-node NVSwitch all-reduce rows.

Usage: nccl_model.py [--results results/results.csv] [--cases FILE.csv] [--host-cost-us X ...]

Would modelling NCCL's LL / LL128 / Simple protocols bring dtsim closer to the measured
all-reduce times? This answers it without touching dtsim: for every one-node A100 or H200 row of
the validation results, it times the ring all-reduce with each protocol the way NCCL's tuner does
(`sim/collectives/NCCL_MODEL.md` §1–§3, NCCL v2.30.7: t = latency + bytes / algorithm
bandwidth, the smallest wins), keeps dtsim's own `nvls` prediction where the row ran NVLS (that
is NCCL's NVLS model already), and prints the error of each against the measurement, next to
dtsim's. NCCL also times its tree, which on one node is a chain: with the same tables and its
correction factors it is slower than the ring at every size of these rows (checked from 32 KiB
to 16 GiB on both GPUs), so it is left out. `--host-cost-us` adds a fixed per-call cost on top, to show how much of the small-message
error a harness cost of that size would explain; it is a what-if, not a calibrated constant.
"""
import argparse
import csv
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent

# Per GPU model: the preset's bus bandwidth (NCCL's channels x per-channel speed, GB/s,
# platforms/PRESETS.md), NCCL's channel count, llMax on one node and the per-channel LL128 ring
# bandwidth for its architecture (sim/collectives/NCCL_MODEL.md §2.3).
GPUS = {
    "A100": {"bus_gbps": 240.0, "channels": 12, "ll_max_gbps": 87.7, "ll128_per_channel_gbps": 20.0},
    "H200": {"bus_gbps": 370.8, "channels": 18, "ll_max_gbps": 141.0, "ll128_per_channel_gbps": 36.7},
}
# Ring latency over NVLink, µs: base per call and hardware latency per step (§1.1, §1.2).
RING_LATENCY_US = {"LL": (6.6, 0.6), "LL128": (14.0, 1.9), "Simple": (8.4, 3.4)}


def ring_times_us(size_bytes, ranks, gpu):
    """NCCL's estimate of a one-node ring all-reduce, per protocol (§2.3, §2.4)."""
    steps = 2 * (ranks - 1)
    bus = gpu["bus_gbps"]
    bus_by_protocol = {
        "LL": min(gpu["ll_max_gbps"], 0.5 * bus),
        "LL128": min(0.92 * bus, gpu["channels"] * gpu["ll128_per_channel_gbps"]),
        "Simple": bus,
    }
    times = {}
    for protocol, (base_us, step_us) in RING_LATENCY_US.items():
        algorithm_gbps = bus_by_protocol[protocol] * ranks / steps
        times[protocol] = base_us + steps * step_us + size_bytes / (algorithm_gbps * 1e3)
    return times


def gpu_of(case_row):
    for name in GPUS:
        if name in case_row["gpu"]:
            return name
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(HERE / "results" / "results.csv"))
    parser.add_argument("--cases",
                        default=str(HERE / "data" / "published.csv"))
    parser.add_argument("--host-cost-us", type=float, nargs="*", default=[0.0, 25.0])
    args = parser.parse_args()

    for path in (args.cases, args.results):
        if not pathlib.Path(path).is_file():
            print(f"nccl_model.py: {path}: no such file (see --cases and --results)",
                  file=sys.stderr)
            sys.exit(2)
    with open(args.cases, newline="") as f:
        cases = {row["case_id"]: row for row in csv.DictReader(f)}
    rows = []
    with open(args.results, newline="") as f:
        for result in csv.DictReader(f):
            case = cases.get(result["case_id"])
            if (result["kind"] != "allreduce" or case is None or case["nodes"] != "1"
                    or gpu_of(case) is None):
                continue
            rows.append((result, GPUS[gpu_of(case)]))
    if not rows:
        print(f"nccl_model.py: {args.results}: no one-node A100/H200 all-reduce rows",
              file=sys.stderr)
        sys.exit(2)

    costs = args.host_cost_us
    print("| case | bytes | measured µs | dtsim µs (err) | NCCL model | "
          + " | ".join(f"NCCL + {c:g} µs" for c in costs) + " |")
    print("|---|---|---|---|---|" + "---|" * len(costs))
    dtsim_errors, model_errors = [], {c: [] for c in costs}
    for result, gpu in rows:
        size = int(result["bytes"])
        measured = float(result["measured"]) * 1e6
        predicted = float(result["predicted"]) * 1e6
        times = ring_times_us(size, int(result["ranks"]), gpu)
        if result["ran"] == "nvls":
            times = {"NVLS": predicted}
        protocol = min(times, key=times.get)
        dtsim_errors.append(abs(predicted / measured - 1))
        cells = []
        for c in costs:
            error = (times[protocol] + c) / measured - 1
            model_errors[c].append(abs(error))
            cells.append(f"{times[protocol] + c:.1f} ({error:+.0%})")
        print(f"| {result['case_id']} | {size} | {measured:.1f} | "
              f"{predicted:.1f} ({predicted / measured - 1:+.0%}) | {protocol} | "
              + " | ".join(cells) + " |")
    mape = lambda errors: 100 * sum(errors) / len(errors)  # noqa: E731
    print(f"\n{len(rows)} rows. MAPE: dtsim {mape(dtsim_errors):.1f} %; "
          + "; ".join(f"NCCL's model + {c:g} µs {mape(model_errors[c]):.1f} %" for c in costs))


if __name__ == "__main__":
    main()
