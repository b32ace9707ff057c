"""Where the op-class model's tensor-core and memory efficiencies come from: the repository's
own H200 profiles (workloads/traces/*_h200_*), never a validation row.

Usage: compute_constants.py [--dtsim PATH]
For each profile, dtsim's op-class trace of the same model, batch and precision is compared
layer by layer with the measured one. Where dtsim's layer is compute-bound, its time scales as
1 / efficiency, so the efficiency the measurement implies is 0.5 x dtsim / measured (dtsim run
at the default 0.5). The profiles ran PyTorch's default NCHW layout, so their convolutions also
hold cuDNN's transposes (COMPUTE.md, "Layout"): dtsim's convolutions are generated with
--conv-layout nchw, and the efficiency a convolution implies is 0.5 x G / (measured - T), G its
GEMM time at 0.5 and T its transposes (the NCHW trace less the NHWC one). Prints the medians
(workloads/COMPUTE.md quotes them).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
TRACES = REPO / "workloads" / "traces"
PASSES = ("forward_sec", "backward_sec")


def generate(dtsim, work, model, batch, precision, seq=None, layout="nhwc"):
    out = work / f"{model}_{layout}.json"
    args = [dtsim, "workload", "generate", "--model", model, "--batch", str(batch), "--device",
            "h200", "--precision", precision, "--compute-model", "op-class", "--conv-layout",
            layout, "-o", str(out)]
    if seq:
        args += ["--seq-len", str(seq)]
    subprocess.run(args, check=True, capture_output=True)
    return {l["name"]: l for l in json.loads(out.read_text())["layers"]}


def measured(name):
    return {l["name"]: l for l in json.loads((TRACES / name).read_text())["layers"]}


def ratios(model, meas, names):
    return [model[n][p] / meas[n][p] for n in names for p in PASSES]


def implied_with_transposes(gemm, nchw, meas, names):
    """0.5 x G / (measured - T) per pass. A pass measured no longer than its transposes T
    implies nothing and is left out (none is, for VGG-16: the count is printed)."""
    out = []
    for n in names:
        for p in PASSES:
            transposes = nchw[n][p] - gemm[n][p]
            if meas[n][p] > transposes:
                out.append(0.5 * gemm[n][p] / (meas[n][p] - transposes))
    return out


def sums(model, meas, names):
    """dtsim / measured of the layers' summed time, per pass."""
    def ratio(p):
        return sum(model[n][p] for n in names) / sum(meas[n][p] for n in names)
    return " ".join(f"{p.split('_')[0]} {ratio(p):.3f}" for p in PASSES)


def report(what, values, scale=0.5):
    """Prints the median ratio and, for a rate that scales as 1 / efficiency, what it implies."""
    m = statistics.median(values)
    implied = f"; implied efficiency {scale * m:.3f}" if scale else ""
    print(f"{what}: dtsim / measured median {m:.3f} over {len(values)} passes "
          f"(quartiles {statistics.quantiles(values, n=4)[0]:.3f} .. "
          f"{statistics.quantiles(values, n=4)[2]:.3f}){implied}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtsim", default=os.environ.get("DTSIM", str(REPO / "build/sim/dtsim")))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dtsim-constants-") as tmp:
        work = pathlib.Path(tmp)
        # VGG-16 fp32 on the H200: convolutions in TF32 (cuDNN's default), ReLUs memory-bound.
        vgg = generate(a.dtsim, work, "vgg16", 32, "fp32")
        vgg_nchw = generate(a.dtsim, work, "vgg16", 32, "fp32", layout="nchw")
        vgg_meas = measured("vgg16_h200_b32_fp32.json")
        convs = [n for n in vgg if vgg_meas.get(n) and n.startswith("features.")
                 and int(n.split(".")[1]) in (0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28)]
        report("VGG-16 TF32 convolutions, NCHW (dtsim with the transposes)",
               ratios(vgg_nchw, vgg_meas, convs), scale=None)
        values = implied_with_transposes(vgg, vgg_nchw, vgg_meas, convs)
        print(f"  efficiency implied with the transposes subtracted: median "
              f"{statistics.median(values):.3f} over {len(values)} passes; without the layout "
              f"rule: {0.5 * statistics.median(ratios(vgg, vgg_meas, convs)):.3f}")
        relus = [n for n in vgg if n.startswith("features.") and n not in convs
                 and vgg[n]["param_bytes"] == 0
                 and int(n.split(".")[1]) not in (4, 9, 16, 23, 30)]  # not the max pools
        report("VGG-16 ReLUs (memory-bound)", ratios(vgg, vgg_meas, relus), scale=0.9)
        # GPT-2 small bf16: dtsim's mlp layer is the profile's c_fc + act + c_proj + dropout.
        gpt = generate(a.dtsim, work, "gpt2", 8, "bf16", seq=1024)
        gpt_meas = measured("gpt2_h200_b8_seq1024_bf16.json")
        values = []
        for i in range(12):
            parts = [f"h.{i}.mlp.{p}" for p in ("c_fc", "act", "c_proj", "dropout")]
            for p in PASSES:
                values.append(gpt[f"transformer.h.{i}.mlp"][p] / sum(gpt_meas[n][p] for n in parts))
        report("GPT-2 bf16 MLP blocks (two GEMMs and a GELU)", values)
        # ResNet-50 bf16 NCHW: a check of the layout rule (nothing is chosen on it).
        rn = generate(a.dtsim, work, "resnet50", 128, "bf16")
        rn_nchw = generate(a.dtsim, work, "resnet50", 128, "bf16", layout="nchw")
        rn_meas = measured("resnet50_h200_b128_bf16.json")
        convs = [n for n in rn if n in rn_meas and (n.split(".")[-1].startswith("conv")
                                                    or n.endswith("downsample.0"))]
        report("ResNet-50 bf16 NCHW convolutions, without the layout rule",
               ratios(rn, rn_meas, convs))
        report("ResNet-50 bf16 NCHW convolutions, with it", ratios(rn_nchw, rn_meas, convs),
               scale=None)
        print(f"  summed over the convolutions, dtsim / measured: without "
              f"{sums(rn, rn_meas, convs)}; with {sums(rn_nchw, rn_meas, convs)}")


if __name__ == "__main__":
    sys.exit(main())
