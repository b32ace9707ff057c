#!/usr/bin/python3
"""Write the shipped FLOP-model workload traces (trace format v1).

Traces written next to this script:
  resnet50_v100_b32.json          torchvision ResNet-50, ImageNet 224x224, batch 32, fp32, V100-SXM2
  bert_large_a100_seq128_b128.json BERT-large pre-training (seq 128), micro-batch 128, TF32, A100-SXM4-80GB

These are NOT measurements. Per-layer FLOPs come from the architecture, backward FLOPs
from a fixed rule, optimizer time from a memory-bandwidth model, and all forward/backward
times are scaled by ONE factor per trace so that the trace total matches one published
row of /work/shared/validation/published.csv (DDPB-01 for ResNet-50, DLE-111 for BERT).
Time is therefore proportional to FLOPs, which ignores memory-bound layers (bn, relu,
LayerNorm, softmax); per-layer profiles will replace these traces once the profiler lands.

Standard library only; deterministic. Run:  /usr/bin/python3 workloads/traces/generate_flops_traces.py
"""
import json
import os

OUT_DIR = os.path.dirname(os.path.abspath(__file__))


def r9(x):
    """Round a float to 9 significant digits (keeps the files byte-stable)."""
    return float(f"{x:.9g}")


def layer(name, flops, params, bwd_mult=2):
    """One trace layer before calibration: FLOPs, backward FLOPs and parameter count."""
    return {"name": name, "fwd": int(flops), "bwd": int(flops * bwd_mult), "params": int(params)}


# ----------------------------------------------------------------------------- ResNet-50
RN_BATCH = 32
RN_PARAMS = 25_557_032             # torchvision resnet50 (PARAM rows of published.csv)
BN_FLOPS = 8                       # training-mode BN per element: mean 1, var 3, normalize 2, affine 2
V100_HBM_BPS = 900e9               # V100-SXM2 HBM2 datasheet peak
SGD_BYTES_PER_PARAM = 20           # SGD+momentum: read param, grad, momentum; write param, momentum (5 x 4 B)
DDPB01_ITER_SEC = 0.097            # published.csv row DDPB-01: single V100, no DDP wrapper, p50 iteration


def conv(name, cin, cout, k, hout, bwd_mult=2):
    """Bias-free conv (torchvision resnet): 2*K*K*Cin*Cout*Hout*Wout*batch FLOPs."""
    return layer(name, 2 * k * k * cin * cout * hout * hout * RN_BATCH, k * k * cin * cout, bwd_mult)


def bn(name, c, h, relu=False):
    """BatchNorm (weight+bias = 2C params), optionally with the following ReLU merged in."""
    return layer(name, (BN_FLOPS + (1 if relu else 0)) * c * h * h * RN_BATCH, 2 * c)


def bottleneck(prefix, cin, planes, stride, hin):
    """torchvision Bottleneck (v1.5: stride on conv2) in forward execution order."""
    cout, hout = planes * 4, hin // stride
    out = [conv(f"{prefix}.conv1", cin, planes, 1, hin), bn(f"{prefix}.bn1", planes, hin, relu=True),
           conv(f"{prefix}.conv2", planes, planes, 3, hout), bn(f"{prefix}.bn2", planes, hout, relu=True),
           conv(f"{prefix}.conv3", planes, cout, 1, hout), bn(f"{prefix}.bn3", cout, hout)]
    if stride != 1 or cin != cout:
        out += [conv(f"{prefix}.downsample.0", cin, cout, 1, hout), bn(f"{prefix}.downsample.1", cout, hout)]
    out.append(layer(f"{prefix}.add", 2 * cout * hout * hout * RN_BATCH, 0))   # residual add + final ReLU
    return out


def resnet50_layers():
    ls = [conv("conv1", 3, 64, 7, 112, bwd_mult=1),            # no input gradient for the first conv
          bn("bn1", 64, 112), layer("relu", 64 * 112 * 112 * RN_BATCH, 0),
          layer("maxpool", 9 * 64 * 56 * 56 * RN_BATCH, 0)]   # 3x3 window: 9 per output element
    cin, h = 64, 56
    for li, (planes, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], 1):
        for b in range(blocks):
            s = stride if b == 0 else 1
            ls += bottleneck(f"layer{li}.{b}", cin, planes, s, h)
            cin, h = planes * 4, h // s
    ls.append(layer("avgpool", 49 * 2048 * RN_BATCH, 0))      # 7x7 window: 49 per output element
    ls.append(layer("fc", 2 * 2048 * 1000 * RN_BATCH + 1000 * RN_BATCH, 2048 * 1000 + 1000))
    return ls


def resnet50_trace():
    ls = resnet50_layers()
    total = sum(l["params"] for l in ls)
    assert total == RN_PARAMS, total
    opt = SGD_BYTES_PER_PARAM * total / V100_HBM_BPS
    target = DDPB01_ITER_SEC - opt
    source = (
        "FLOP model, not measured per layer. Per-layer forward FLOPs from the torchvision resnet50 "
        "architecture (224x224, batch 32; multiply-add = 2 FLOPs): conv 2*K*K*Cin*Cout*Hout*Wout*batch "
        f"(no bias); bn {BN_FLOPS} FLOPs/element (training mode: mean 1, variance 3, normalize 2, affine 2); "
        "relu and residual add 1/element; maxpool 9 and avgpool 49 per output element (per window "
        "element); fc 2*2048*1000*batch + bias. Inside each bottleneck the ReLU after bn1 and bn2 is "
        "merged into that bn layer and the ReLU after the residual add into the '.add' layer (+1 "
        "FLOP/element each); the stem ReLU is its own layer 'relu'. Backward FLOPs = 2 x forward "
        "(input gradient + weight gradient) for every layer, except conv1 = 1 x forward (no input "
        "gradient). Parameters: torchvision counts, total 25,557,032 (convs without bias, bn weight+bias, "
        "fc weight+bias); param_bytes = 4 x params (fp32 gradients). optimizer_sec: SGD with momentum, "
        "memory-bound, 20 B/param (read param, grad, momentum; write param, momentum; 4 B each) x "
        "25,557,032 / 900e9 B/s (V100-SXM2 HBM2 datasheet peak). Forward and backward times = FLOPs x one "
        "common scale factor chosen so that sum(forward_sec) + sum(backward_sec) + optimizer_sec = "
        "0.097 s, the published single-V100 fp32 batch-32 iteration time (p50, no DDP wrapper) of row "
        "DDPB-01 of /work/shared/validation/published.csv (PyTorch DDP benchmark). Time proportional to "
        "FLOPs ignores the memory-bound behaviour of bn/relu/add/pooling (known limitation until the "
        "profiler lands).")
    meta = {"model": "resnet50", "device": "V100-SXM2", "precision": "fp32", "batch_per_device": RN_BATCH}
    return build(meta, source, ls, opt, target, bytes_per_grad=4)


# ----------------------------------------------------------------------------- BERT-large
H, NH, FFN, NL = 1024, 16, 4096, 24
VOCAB, MAXPOS, TYPES = 30522, 512, 2
SEQ = 128
MASKED = 20                        # max_predictions_per_seq at seq 128 (DLE phase 1)
LN_FLOPS, ACT_FLOPS, SOFTMAX_FLOPS, XENT_FLOPS = 8, 8, 7, 5
A100_HBM_BPS = 2039e9              # A100-SXM4-80GB HBM2e datasheet
LAMB_BYTES_PER_PARAM = 40          # 10 fp32 accesses, see source text
DLE_ROW, DLE_THROUGHPUT, DLE_GPUS, DLE_MICRO_BATCH, DLE_ACCUM = "DLE-111", 2486.0, 8, 128, 64


def dense(tokens, fin, fout):
    """Linear layer with bias: GEMM 2*tokens*fin*fout + bias add; params fin*fout + fout."""
    return 2 * tokens * fin * fout + tokens * fout, fin * fout + fout


def bert_embeddings(b):
    t = b * SEQ
    params = (VOCAB + MAXPOS + TYPES) * H + 2 * H
    return layer("embeddings", (2 + LN_FLOPS) * t * H, params)    # 3 lookups summed (2 adds) + LayerNorm


def bert_encoder_layer(i, b):
    t, p = b * SEQ, f"encoder.layer.{i}"
    qkv_f, qkv_p = dense(t, H, 3 * H)
    scores = b * NH * SEQ * SEQ
    self_f = qkv_f + 2 * (2 * t * SEQ * H) + SOFTMAX_FLOPS * scores   # QK^T and P*V; scale+mask+softmax
    ao_f, ao_p = dense(t, H, H)
    in_f, in_p = dense(t, H, FFN)
    out_f, out_p = dense(t, FFN, H)
    return [layer(f"{p}.attention.self", self_f, qkv_p),
            layer(f"{p}.attention.output", ao_f + (1 + LN_FLOPS) * t * H, ao_p + 2 * H),
            layer(f"{p}.intermediate", in_f + ACT_FLOPS * t * FFN, in_p),
            layer(f"{p}.output", out_f + (1 + LN_FLOPS) * t * H, out_p + 2 * H)]


def bert_heads(b):
    pool_f, pool_p = dense(b, H, H)                 # first token only, + tanh
    m = b * MASKED                                  # dense sequence output: masked tokens only
    tr_f, tr_p = dense(m, H, H)
    pred_f = tr_f + (ACT_FLOPS + LN_FLOPS) * m * H + 2 * m * H * VOCAB + (1 + XENT_FLOPS) * m * VOCAB
    nsp_f, nsp_p = dense(b, H, 2)
    return [layer("pooler", pool_f + ACT_FLOPS * b * H, pool_p),
            layer("cls.predictions", pred_f, tr_p + 2 * H + VOCAB),   # decoder weight tied: bias only
            layer("cls.seq_relationship", nsp_f + XENT_FLOPS * b * 2, nsp_p)]


def bert_trace():
    b = DLE_MICRO_BATCH
    ls = [bert_embeddings(b)]
    for i in range(NL):
        ls += bert_encoder_layer(i, b)
    ls += bert_heads(b)
    total = sum(l["params"] for l in ls)
    assert total == 336_226_108, total
    opt = LAMB_BYTES_PER_PARAM * total / A100_HBM_BPS
    sec_per_seq = DLE_GPUS / DLE_THROUGHPUT
    target = sec_per_seq * b - opt / DLE_ACCUM
    source = (
        "FLOP model, not measured per layer. BERT-large encoder (24 layers, hidden 1024, 16 heads, FFN "
        "4096, vocab 30522, 512 positions, 2 token types) with pre-training heads, sequence length 128, "
        "micro-batch 128 per GPU, TF32 (all tensors fp32). Forward FLOPs per layer from the architecture "
        "(multiply-add = 2 FLOPs; every dense layer = GEMM + bias add): embeddings = sum of 3 lookups "
        f"(2/element) + LayerNorm ({LN_FLOPS}/element); attention.self = QKV dense + QK^T (2*S*S*H per "
        f"sequence) + scale/mask/softmax ({SOFTMAX_FLOPS} per score) + probs x V (2*S*S*H); "
        "attention.output and output = dense + residual add (1/element) + LayerNorm; intermediate = dense "
        f"1024->4096 + GELU ({ACT_FLOPS}/element); pooler = dense on the first token + tanh "
        f"({ACT_FLOPS}/element); cls.predictions = transform dense + GELU + LayerNorm + decoder matmul to "
        f"the vocab + bias + softmax cross-entropy ({XENT_FLOPS}/logit), on {MASKED} masked tokens per "
        "sequence only (DeepLearningExamples dense sequence output, max_predictions_per_seq 20); "
        "cls.seq_relationship = dense 1024->2 + loss. Dropout not counted. Backward FLOPs = 2 x forward "
        "for every layer. Parameters: 336,226,108 (BertModel 335,141,888 incl. pooler + MLM transform "
        "dense+LayerNorm + decoder bias + NSP classifier); the MLM decoder weight is tied to the word "
        "embeddings, so cls.predictions carries only transform params + decoder bias and the tied "
        "weight's gradient is counted in 'embeddings' (ready last in backward). published.csv PARAM-12 "
        "('330M') is a rounded README figure; DeepLearningExamples pads the vocab to 30528 (+6,150 params), "
        "not modelled. param_bytes = 4 x params (TF32 run: fp32 gradients all-reduced). optimizer_sec = "
        "one full LAMB step, memory-bound: 10 fp32 accesses per param (stage 1 reads grad, param, m, v "
        "and writes m, v, update; stage 2 reads update, param and writes param) = 40 B x 336,226,108 / "
        "2039e9 B/s (A100-SXM4-80GB HBM2e datasheet). Calibration: row DLE-111 of "
        "/work/shared/validation/published.csv (DeepLearningExamples PyTorch BERT-large pre-training "
        "seq 128, DGX A100, 1 node x 8 GPUs, TF32, 2486 sequences/s total, micro-batch 128 per GPU, "
        "64 accumulation steps = 8192 sequences per GPU per optimizer step). Per-GPU time per sequence "
        f"= 8 / 2486 s; per micro-batch = 128 x 8 / 2486 = {sec_per_seq * b:.9g} s, which contains 1/64 of an "
        "optimizer step. Forward and backward times = FLOPs x one common scale factor chosen so that "
        "sum(forward_sec) + sum(backward_sec) = 128 x 8 / 2486 - optimizer_sec / 64; the trace total "
        "(with one full optimizer step) is therefore larger than the per-micro-batch time by "
        "63/64 x optimizer_sec. Limitations: this is a multi-GPU throughput row, so the calibrated compute "
        "also absorbs the part of the once-per-64-micro-batches gradient all-reduce (and data loading) "
        "that was not hidden, amortized over 64 micro-batches; time proportional to FLOPs ignores the "
        "memory-bound behaviour of LayerNorm/softmax/GELU/dropout and fused kernels.")
    meta = {"model": "bert_large", "device": "A100-SXM4-80GB", "precision": "tf32", "batch_per_device": b}
    return build(meta, source, ls, opt, target, bytes_per_grad=4)


# ----------------------------------------------------------------------------- common
def build(meta, source, ls, opt, target_fwd_bwd, bytes_per_grad):
    """Scale FLOPs to seconds with one factor so that sum(fwd)+sum(bwd) == target_fwd_bwd."""
    scale = target_fwd_bwd / sum(l["fwd"] + l["bwd"] for l in ls)
    layers = [{"name": l["name"], "forward_sec": r9(l["fwd"] * scale), "backward_sec": r9(l["bwd"] * scale),
               "param_bytes": l["params"] * bytes_per_grad, "forward_flops": l["fwd"]} for l in ls]
    trace = {"format_version": 1, **meta, "source": source, "optimizer_sec": r9(opt), "layers": layers}
    return trace, scale


def check(trace):
    """Validate the v1 format invariants and return totals for printing."""
    assert list(trace) == ["format_version", "model", "device", "precision", "batch_per_device", "source",
                           "optimizer_sec", "layers"]
    names = [l["name"] for l in trace["layers"]]
    assert len(names) == len(set(names)), "duplicate layer names"
    for l in trace["layers"]:
        assert set(l) <= {"name", "forward_sec", "backward_sec", "param_bytes", "forward_flops"}, l
        assert l["forward_sec"] >= 0 and l["backward_sec"] >= 0 and l["forward_flops"] >= 0, l
        assert isinstance(l["param_bytes"], int) and l["param_bytes"] >= 0, l
    assert trace["optimizer_sec"] >= 0
    fwd = sum(l["forward_sec"] for l in trace["layers"])
    bwd = sum(l["backward_sec"] for l in trace["layers"])
    return fwd, bwd


def write(filename, trace):
    path = os.path.join(OUT_DIR, filename)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(trace, f, indent=2, sort_keys=False)
        f.write("\n")
    with open(path, encoding="utf-8") as f:
        return check(json.load(f))


def report(filename, trace, scale, fwd, bwd):
    ls = trace["layers"]
    pb = sum(l["param_bytes"] for l in ls)
    flops = sum(l["forward_flops"] for l in ls)
    opt = trace["optimizer_sec"]
    print(f"{filename}: {len(ls)} layers, params {pb // 4:,}, param_bytes {pb:,}")
    print(f"  forward {fwd:.9g} s  backward {bwd:.9g} s  optimizer {opt:.9g} s  total {fwd + bwd + opt:.9g} s")
    print(f"  forward FLOPs {flops:.6g}; implied rate {1 / scale / 1e12:.4g} TFLOP/s (scale {scale:.6g} s/FLOP)")


def main():
    rn, rn_scale = resnet50_trace()
    rn_file = "resnet50_v100_b32.json"
    fwd, bwd = write(rn_file, rn)
    assert abs(fwd + bwd + rn["optimizer_sec"] - DDPB01_ITER_SEC) < 1e-8
    report(rn_file, rn, rn_scale, fwd, bwd)

    bert, bert_scale = bert_trace()
    bert_file = "bert_large_a100_seq128_b128.json"
    fwd, bwd = write(bert_file, bert)
    target = DLE_MICRO_BATCH * DLE_GPUS / DLE_THROUGHPUT - bert["optimizer_sec"] / DLE_ACCUM
    assert abs(fwd + bwd - target) < 1e-8
    report(bert_file, bert, bert_scale, fwd, bwd)
    print(f"  calibration {DLE_ROW}: per-micro-batch time {DLE_MICRO_BATCH * DLE_GPUS / DLE_THROUGHPUT:.9g} s "
          f"= fwd+bwd + optimizer/{DLE_ACCUM}")


if __name__ == "__main__":
    main()
