"""Predicted against measured speedups of published what-if pairs (experiments/what-if/README.md).

Every pair is the same model on the same hardware with and without one change; dtsim predicts the
change with `dtsim whatif` (the baseline row's job, and --apply for the change), nothing fitted.
Usage: study.py [--dtsim PATH] [--out DIR] [--quick]   (--quick leaves out the runs over a minute)
Writes DIR/pairs.csv and DIR/summary.md.
"""
import argparse
import csv
import json
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "experiments" / "validation"))
import cases as dp_cases  # noqa: E402
import hybrid_cases as hc  # noqa: E402

PUBLISHED = ROOT / "experiments" / "validation" / "data" / "published.csv"
HYBRID = ROOT / "experiments" / "validation" / "data" / "hybrid.csv"
DGX1 = ROOT / "experiments" / "buckets" / "config" / "dgx1_v100_2nodes.json"
# NCCL builds 4 rings on a DGX-1, one channel (CUDA block, one SM) each: NVIDIA/nccl#299.
DGX1_CHANNELS = 4
# The rows' PyTorch 1.4 prescales each bucket with one div_ kernel on the compute stream
# (c10d's reducer.cpp, Reducer::mark_variable_ready; WHATIF.md, "Bucket cost").
DDP_BUCKET_KERNELS = 1
# --quick leaves out the pairs of more GPUs than this (their runs take from seconds to minutes:
# Megatron-LM's 2520-GPU pair about 6), and lists them.
QUICK_MAX_RANKS = 64
FIELDS = ["pair", "kind", "baseline", "changed", "what_if", "gpus", "measured_speedup",
          "predicted_speedup", "error_pp", "sign_right", "model", "command"]


def whatif(dtsim, args, applies, work, name):
    """runs[1] of `dtsim whatif ARGS --apply ...`'s report: the transformed run."""
    report = work / f"{name}.json"
    cmd = [dtsim, "whatif"] + args + sum((["--apply", a] for a in applies), []) + [
        "--report", str(report)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.loads(report.read_text())["runs"], " ".join(cmd[1:-2])


def generate(dtsim, model, device, precision, batch, iter_sec, path):
    subprocess.run([dtsim, "workload", "generate", "--model", model, "--batch", str(batch),
                    "--device", device, "--precision", precision, "--calibrate-iter-sec",
                    f"{iter_sec:.6g}", "-o", str(path)], check=True, stdout=subprocess.DEVNULL)


def sign(speedup):
    """+1 faster, -1 slower, 0 unchanged (within 1e-6: the last digits of a replay)."""
    return 0 if abs(speedup - 1) < 1e-6 else (1 if speedup > 1 else -1)


def row(pair, kind, base, changed, what_if, gpus, measured, predicted, model, command):
    return {"pair": pair, "kind": kind, "baseline": base, "changed": changed, "what_if": what_if,
            "gpus": gpus, "measured_speedup": f"{measured:.4f}",
            "predicted_speedup": f"{predicted:.4f}",
            "error_pp": f"{100 * (predicted - measured):.2f}",
            "sign_right": int(sign(predicted) == sign(measured)),
            "model": model, "command": command}


def bucket_pairs(dtsim, work):
    """DDPB-25..44: bucket_cap_mb=1 against 25, ResNet/ResNeXt on DGX-1 V100, the stated p75
    throughput difference; without and with the compute-side bucket cost."""
    out, traces = [], {}
    for r in csv.DictReader(open(PUBLISHED)):
        m = re.search(r"throughput diff (-?[\d.]+)% at p75", r["notes"])
        if not (r["case_id"].startswith("DDPB") and "bucket_cap_mb=1 (test)" in r["notes"] and m):
            continue
        model, n = r["model"], int(r["total_gpus"])
        trace = traces.get(model)
        if trace is None:  # batch 32 fp32 on a V100, calibrated to the row's single-GPU time
            trace = traces[model] = work / f"{model}_v100_b32.json"
            generate(dtsim, model, "v100", "fp32", 32, float(r["single_gpu_value"]), trace)
        measured = 1 + float(m.group(1)) / 100
        for variant, extra in (("network only", []),
                               ("NCCL's SMs only", ["--nccl-channels", str(DGX1_CHANNELS)]),
                               ("with bucket cost", ["--nccl-channels", str(DGX1_CHANNELS),
                                                     "--bucket-kernels",
                                                     str(DDP_BUCKET_KERNELS)])):
            args = ["--workload", str(trace), "--platform", str(DGX1), "--ranks", str(n),
                    "--bucket-mb", "25", "--algorithm", "ring", "--collective-latency",
                    "8.4us"] + extra
            name = f"{r['case_id']}_{variant.replace(' ', '_').replace(chr(39), '')}"
            runs, cmd = whatif(dtsim, args, ["bucket-mb=1"], work, name)
            out.append(row(r["case_id"], "bucket 1 MB vs 25 MB", "bucket_cap_mb=25",
                           "bucket_cap_mb=1", "bucket-mb=1", n, measured, runs[1]["speedup"],
                           variant, cmd))
    return out


def amp_pairs(dtsim, work):
    """DeepLearningExamples ResNet-50 on DGX A100: TF32 against AMP at the same batch and GPUs;
    throughput ratio. Twice: the datasheet pass (`--apply amp` on a TF32 trace calibrated to the
    TF32 row's single-GPU throughput), and the recipes (both sides generated by the op-class
    model with each row's layout and fusions, uncalibrated; `--apply workload=` the AMP trace)."""
    rows = [r for r in csv.DictReader(open(PUBLISHED))
            if r["case_id"].startswith("DLE") and r["model"].startswith("resnet50")
            and r["gpu"].startswith("A100")]
    out = []
    for base in rows:
        if base["precision"] != "TF32":
            continue
        for amp in rows:
            same = all(amp[k] == base[k] for k in ("gpu", "total_gpus", "batch_per_gpu"))
            if not (same and amp["precision"] == "AMP fp16"
                    and amp["source"].split()[0] == base["source"].split()[0]
                    and amp["source"].split("/")[2:3] == base["source"].split("/")[2:3]):
                continue
            b, n = int(base["batch_per_gpu"]), int(base["total_gpus"])
            trace = work / f"{base['case_id']}_trace.json"
            generate(dtsim, "resnet50", "a100", "tf32", b, b / float(base["single_gpu_value"]),
                     trace)
            platform = work / f"dgx_a100_{max(1, n // 8)}.json"
            platform.write_text(json.dumps({"preset": "dgx-a100", "nodes": max(1, n // 8)}))
            args = ["--workload", str(trace), "--platform", str(platform), "--ranks", str(n),
                    "--algorithm",
                "ring", "--collective-latency", "8.4us"]
            runs, cmd = whatif(dtsim, args, ["amp"], work, base["case_id"])
            measured = float(amp["value"]) / float(base["value"])
            pair = f"{base['case_id']}/{amp['case_id']}"
            out.append(row(pair, "AMP vs TF32", "TF32", "AMP fp16", "amp", n, measured,
                           runs[1]["speedup"], "datasheet", cmd))
            # The recipe: both sides from the op-class model with each row's own layout and
            # fusions (cases.compute_args), uncalibrated; the change is the AMP trace.
            sides = []
            for r, precision in ((base, "tf32"), (amp, "fp16")):
                path = work / f"{r['case_id']}_recipe.json"
                subprocess.run([dtsim, "workload", "generate", "--model", "resnet50", "--batch",
                                str(b), "--device", "a100", "--precision", precision, "-o",
                                str(path)] + dp_cases.compute_args(r, "resnet50", precision),
                               check=True, stdout=subprocess.DEVNULL)
                sides.append(path)
            recipe_args = ["--workload", str(sides[0])] + args[2:]  # args[:2]: --workload
            runs, cmd = whatif(dtsim, recipe_args, [f"workload={sides[1]}"], work,
                               base["case_id"] + "_recipe")
            out.append(row(pair, "AMP vs TF32", "TF32", "AMP fp16", "workload=AMP trace", n,
                           measured, runs[1]["speedup"], "op-class recipe", cmd))
    return out


def knob_diff(base_args, other_args):
    """The flags `other_args` sets differently from `base_args`, as --apply KEY=VALUE."""
    def flags(args):
        d, i = {}, 0
        while i < len(args):
            if args[i].startswith("--"):
                has_value = i + 1 < len(args) and not args[i + 1].startswith("--")
                d[args[i][2:]] = args[i + 1] if has_value else "on"
                i += 2 if has_value else 1
            else:
                i += 1
        return d
    a, b = flags(base_args[1:]), flags(other_args[1:])
    applies = [f"{k}={v}" for k, v in b.items() if a.get(k) != v]
    applies += [f"{k}=off" for k in a if k not in b]
    return applies


def settings(what_if):
    """'TT-W1:compile=on,float8=off' -> {'compile': 'on', 'float8': 'off'}."""
    return dict(kv.split("=", 1) for kv in what_if.split(":", 1)[1].split(","))


def one_knob_pairs(cases):
    """Pairs (earlier, later) of a group's rows, in file order, whose what_if settings differ in
    exactly one key: the published change alone (compile on, float8 off -> on), never two at
    once (compile and float8 together, which the measured ratio would mix)."""
    out = []
    for i, (a_row, a) in enumerate(cases):
        for b_row, b in cases[i + 1:]:
            sa, sb = settings(a_row["what_if"]), settings(b_row["what_if"])
            if sa.keys() == sb.keys() and sum(sa[k] != sb[k] for k in sa) == 1:
                out.append(((a_row, a), (b_row, b)))
    return out


def hybrid_pairs(dtsim, work, quick, skipped):
    """hybrid.csv what-if groups: one-knob pairs of rows dtsim models whose flags differ."""
    catalog = hc.read_catalog()
    groups = {}
    for r in csv.DictReader(open(HYBRID)):
        if r["what_if"] and r["metric"] in ("throughput_per_gpu", "tflops_per_gpu", "iter_time"):
            groups.setdefault(r["what_if"].split(":")[0], []).append(r)
    out = []
    for group, rows in groups.items():
        cases = []
        for r in rows:
            try:
                cases.append((r, hc.make_hybrid_case(r, work, catalog)))
            except hc.Skip:
                pass
        for (base_row, base), (other_row, other) in one_knob_pairs(cases):
            applies = knob_diff(base.args, other.args)
            if not applies or other.metric != base.metric or other.ranks != base.ranks:
                continue  # a knob dtsim does not model (compile, async TP, ...): nothing to predict
            if quick and base.ranks > QUICK_MAX_RANKS:
                skipped.append(f"{base_row['case_id']}/{other_row['case_id']} ({group}, "
                               f"{' '.join(applies)}): {base.ranks} GPUs, over the "
                               f"{QUICK_MAX_RANKS} --quick simulates")
                continue
            runs, cmd = whatif(dtsim, base.args[1:], applies, work, other_row["case_id"])
            ratio = (hc.predicted_value(other, runs[1]["report"]["result"]) /
                     hc.predicted_value(base, runs[0]["report"]["result"]))
            measured = other.measured / base.measured
            if base.metric == "iter_time":
                ratio, measured = 1 / ratio, 1 / measured
            out.append(row(f"{base_row['case_id']}/{other_row['case_id']}", group,
                           base_row["what_if"].split(":", 1)[1],
                           other_row["what_if"].split(":", 1)[1], " ".join(applies), base.ranks,
                           measured, ratio, "strategy knob", cmd))
    return out


def summary(rows):
    lines = ["| set | model | pairs | sign right | mean abs. error (pp) |", "|---|---|---|---|---|"]

    def line(kind, model, sel):
        sign = sum(int(r["sign_right"]) for r in sel)
        mae = sum(abs(float(r["error_pp"])) for r in sel) / len(sel)
        return (f"| {kind} | {model} | {len(sel)} | {sign} ({100 * sign / len(sel):.0f} %) "
                f"| {mae:.2f} |")

    keys = sorted({(r["kind"], r["model"]) for r in rows})
    for kind, model in keys:
        lines.append(line(kind, model, [r for r in rows if (r["kind"], r["model"]) == (kind, model)]))
    # Every pair once: the bucket pairs with the bucket cost (the model dtsim has), not before
    # it; the AMP pairs as their recipes change them (precision, layout, fusions), not by the
    # datasheet pass, which changes the precision alone.
    once = [r for r in rows if r["model"] not in ("network only", "NCCL's SMs only", "datasheet")]
    if once:
        lines.append(line("**all pairs**", "buckets with the cost, AMP by recipe", once))
        rest = [r for r in once if r["kind"] != "AMP vs TF32"]
        if rest:
            lines.append(line("all but AMP", "", rest))
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dtsim", default=str(ROOT / "build" / "sim" / "dtsim"))
    p.add_argument("--out", default=str(HERE / "results"))
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        rows = bucket_pairs(a.dtsim, work) + amp_pairs(a.dtsim, work)
        skipped = []
        rows += hybrid_pairs(a.dtsim, work, a.quick, skipped)
    for r in rows:
        r["command"] = r["command"].replace(str(work) + "/", "").replace(str(ROOT) + "/", "")
    with open(out / "pairs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    text = summary(rows) + "".join(f"\nLeft out: {s}" for s in skipped) + "\n"
    (out / "summary.md").write_text(text)
    print(summary(rows))


if __name__ == "__main__":
    main()
