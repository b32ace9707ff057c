"""The readers of published phrasing (phrasing.py), on phrases written the ways sources write
them; expected values by hand (unit definitions, NVIDIA's and torchvision's names)."""
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import phrasing  # noqa: E402
from phrasing import Skip  # noqa: E402


def row(**columns):
    base = {"gpu": "", "intra_link": "", "inter_network": "", "notes": "", "source": "",
            "nodes": "1"}
    base.update(columns)
    return base


class Models(unittest.TestCase):
    def test_aliases_name_the_zoo_model(self):
        for text, expected in [
                ("resnet50_v1.5", "resnet50"), ("ResNet-50", "resnet50"),
                ("RN50 v1.5", "resnet50"), ("ResNet50 (PyTorch examples/imagenet)", "resnet50"),
                ("ResNet-152", "resnet152"), ("ResNeXt-101 32x8d", "resnext101_32x8d"),
                ("resnext50", "resnext50_32x4d"), ("WRN-50-2", "wide_resnet50_2"),
                ("VGG-16", "vgg16"), ("vgg19_bn", "vgg19_bn"), ("VGG 11 BN", "vgg11_bn"),
                ("AlexNet (OWT)", "alexnet"), ("Inception v3", "inception_v3"),
                ("InceptionV3", "inception_v3"), ("inception_v3 (incl. aux head)", "inception_v3"),
                ("GPT-2 small", "gpt2")]:
            self.assertEqual(phrasing.model(text)[0], expected, text)

    def test_resnet_v1_is_read_as_v15_and_says_so(self):
        name, _, note = phrasing.model("ResNet-50 v1")
        self.assertEqual(name, "resnet50")
        self.assertIn("v1.5", note)
        self.assertIsNone(phrasing.model("ResNet-50 v1.5")[2])

    def test_bert_needs_its_sequence_length(self):
        self.assertEqual(phrasing.model("bert_large_pretrain_seq512")[:2], ("bert_large", 512))
        # NVIDIA's and Google's BERT pre-training: phase 1 at 128 tokens, phase 2 at 512.
        self.assertEqual(phrasing.model("BERT-Large", "pre-training phase 1")[:2],
                         ("bert_large", 128))
        self.assertEqual(phrasing.model("BERT large", "seq_len=384")[:2], ("bert_large", 384))
        with self.assertRaisesRegex(Skip, "no sequence length"):
            phrasing.model("BERT-large")
        self.assertEqual(phrasing.model("BERT-large", need_sequence=False)[:2],
                         ("bert_large", None))
        self.assertEqual(phrasing.model("BERT-Base", "seq 128")[:2], ("bert_base", 128))
        self.assertIn("task head", phrasing.model("BERT-large SQuAD", "seq_len 384")[2])

    def test_transformer_xl_is_dles_wikitext_model(self):
        self.assertEqual(phrasing.model("Transformer-XL base")[:2], ("transformer_xl_base", 192))
        self.assertIn("DLE's", phrasing.model("Transformer-XL base")[2])
        self.assertEqual(phrasing.model("TransformerXL Large", "tgt_len=512")[:2],
                         ("transformer_xl_large", 512))
        with self.assertRaisesRegex(Skip, "enwik8"):
            phrasing.model("Transformer-XL large", "enwik8")
        with self.assertRaisesRegex(Skip, "base or large"):
            phrasing.model("Transformer-XL")

    def test_models_outside_the_zoo_say_why(self):
        with self.assertRaisesRegex(Skip, "GoogLeNet"):
            phrasing.model("GoogLeNet")
        with self.assertRaisesRegex(Skip, "32x8d"):
            phrasing.model("ResNeXt-101")  # 32x4d, 32x8d or 64x4d: not said
        with self.assertRaisesRegex(Skip, "not in the generator's zoo"):
            phrasing.model("Llama-3 8B")


class Precisions(unittest.TestCase):
    def test_mixed_precision_spellings(self):
        for text in ["AMP", "AMP fp16", "apex O1", "O2", "fp16 (apex)", "mixed", "float16",
                     "Mixed Precision", "half"]:
            self.assertEqual(phrasing.precision(text, "v100")[0], "fp16", text)
        self.assertEqual(phrasing.precision("bfloat16", "a100")[0], "bf16")
        self.assertEqual(phrasing.precision("TF32", "a100")[0], "tf32")

    def test_fp32_on_ampere_is_tf32_where_the_framework_defaults_to_it(self):
        # TensorFlow 2.4+, NGC containers and PyTorch 1.7-1.11 enable TF32 matmuls by default.
        for context in ["TensorFlow 2.4", "NGC 21.03", "PyTorch 1.8.0", "mxnet-22.10 NGC"]:
            precision, note, _ = phrasing.precision("FP32", "a100", context)
            self.assertEqual(precision, "tf32", context)
            self.assertIn("tf32", note)
        # PyTorch 1.12+ keeps fp32 matmuls; a V100 has no TF32 at all.
        self.assertEqual(phrasing.precision("fp32", "a100", "torch 2.1")[0], "fp32")
        self.assertEqual(phrasing.precision("fp32", "v100", "TensorFlow 2.4")[0], "fp32")
        self.assertEqual(phrasing.precision("FP32", "h100", "pytorch 1.11")[0], "tf32")

    def test_xla_is_a_flag_beside_the_precision(self):
        self.assertEqual(phrasing.precision("fp16 XLA", "v100"), ("fp16", None, True))
        with self.assertRaisesRegex(Skip, "V100 has no bf16"):
            phrasing.precision("bf16", "v100")
        with self.assertRaisesRegex(Skip, "not understood"):
            phrasing.precision("int8", "a100")


class Gpus(unittest.TestCase):
    def test_skus_name_the_catalogue_gpu(self):
        self.assertEqual(phrasing.gpu("A100-SXM4-40GB"), ("a100", "a100-40gb"))
        self.assertEqual(phrasing.gpu("A100 80GB SXM"), ("a100", "a100"))
        self.assertEqual(phrasing.gpu("NVIDIA H100 80GB HBM3"), ("h100", "h100"))
        self.assertEqual(phrasing.gpu("Tesla V100-SXM2-16GB"), ("v100", "v100"))
        self.assertEqual(phrasing.gpu("Tesla P100 (PCIe)"), ("p100", None))
        for text, device in [("Tesla V100-PCIE-16GB", "v100-pcie"), ("A100 PCIe 80GB", "a100-pcie"),
                             ("A100-PCIE-40GB", "a100-40gb"), ("H100 PCIe", "h100-pcie"),
                             ("NVIDIA L4", "l4"), ("L40S", "l40s"), ("NVIDIA A10", "a10"),
                             ("Tesla T4", "t4"), ("A40", None)]:
            self.assertEqual(phrasing.gpu(text)[1], device, text)
        self.assertEqual(phrasing.proxy_device("p100"), "v100")


class Systems(unittest.TestCase):
    def test_common_names_pick_the_preset(self):
        cases = [
            (row(gpu="A100-SXM4-40GB", intra_link="NVSwitch", inter_network="4x100 Gbps EFA",
                 source="AWS p4d.24xlarge"), "a100", "aws-p4d"),
            (row(gpu="H100 SXM5", intra_link="NVLink4 NVSwitch", inter_network="8x400G NDR"),
             "h100", "dgx-h100"),
            (row(gpu="H100", source="AWS p5.48xlarge", intra_link="NVSwitch"), "h100", "aws-p5"),
            (row(gpu="B200", intra_link="NVLink5"), "b200", "hgx-b200"),
            (row(gpu="V100-SXM3-32GB (DGX-2)", intra_link="NVSwitch"), "v100", "dgx2h"),
            (row(gpu="V100", intra_link="NVLink2 hybrid cube-mesh"), "v100", "dgx1-v100"),
            (row(gpu="GTX 1080 Ti", intra_link="8-GPU PCIe, single root (PLX)"), "1080",
             "pcie8-single-root"),
            (row(gpu="Titan X", intra_link="8-GPU dual-root PLX PCIe3", inter_network="FDR"),
             "titan x", "pcie8-fdr"),
            (row(gpu="V100 PCIe", intra_link="PCIe 3.0, 2 sockets (QPI)"), "v100",
             "pcie8-dual-root")]
        for r, family, preset in cases:
            self.assertEqual(phrasing.system(r, family)[0], preset, r)

    def test_pcie4_and_pcie5_cards_are_single_root_boxes(self):
        row = {"gpu": "A100-PCIE-40GB", "intra_link": "PCIe 4.0 switch", "inter_network": "",
               "notes": "", "source": "", "nodes": "1"}
        self.assertEqual(phrasing.system(row, "a100"), ("pcie8-gen4-single-root", None))
        row.update(gpu="H100 PCIe", intra_link="PCIe")
        preset, note = phrasing.system(row, "h100")
        self.assertEqual(preset, "pcie8-gen5-single-root")
        self.assertIn("single-root", note)  # not stated: said
        row.update(intra_link="PCIe, dual-root (2 sockets)")
        with self.assertRaisesRegex(Skip, "depends on the CPU"):
            phrasing.system(row, "h100")

    def test_unknown_wiring_is_refused(self):
        with self.assertRaisesRegex(Skip, "single- or dual-root"):
            phrasing.system(row(gpu="RTX 2080 Ti", intra_link="PCIe"), "2080")
        with self.assertRaisesRegex(Skip, "no preset"):
            phrasing.system(row(gpu="A100 PCIe", intra_link="PCIe 4.0, 2 sockets"), "a100")


class Metrics(unittest.TestCase):
    def test_metric_names(self):
        for text, allreduce, expected in [
                ("iter_time_p75", False, "iter_time_p75"), ("step_time", False, "iter_time"),
                ("time per iteration", False, "iter_time"), ("images_per_sec", False, "throughput"),
                ("tokens/s", False, "throughput"), ("throughput_total", False, "throughput"),
                ("busbw", True, "allreduce_busbw"), ("bus bandwidth", True, "allreduce_busbw"),
                ("algbw", True, "allreduce_algbw"), ("latency", True, "allreduce_time"),
                ("parameters", False, "param_count"), ("time_to_train", False, "time_to_train")]:
            self.assertEqual(phrasing.metric(text, allreduce), expected, text)


class Networks(unittest.TestCase):
    def test_a_nodes_nics_in_gigabits(self):
        for text, gbps in [
                ("8x 200Gb/s HDR InfiniBand ConnectX-6 per node", 1600),
                ("4x 100Gb/s InfiniBand per machine", 400),
                ("ABCI: 2x InfiniBand EDR 100 Gb/s per node (12.5 GB/s)", 200),
                ("DGX H100 spec: 8x ConnectX-7 400 Gb/s NDR IB", 3200),
                ("RDMA 400 Gb/s per GPU (Mellanox CX-7)", 3200),  # 8 GPUs
                ("1600 Gbps node-node interconnect (RoCE)", 1600),
                ("InfiniBand FDR (56 Gb/s) between nodes", 56), ("2x EDR", 200),
                ("25GbE", 25)]:
            self.assertEqual(phrasing.node_nic_gbps(text, 8), gbps, text)
        # One port or eight? Not said: the preset's datasheet stands.
        for text in ["not stated", "n/a (single node)", "HDR InfiniBand", "InfiniBand FDR"]:
            self.assertIsNone(phrasing.node_nic_gbps(text, 8), text)


class Units(unittest.TestCase):
    def test_sizes(self):
        self.assertEqual(phrasing.size_bytes("400000", "x"), 400000)
        self.assertEqual(phrasing.size_bytes("256MB", "x"), 256 * 10**6)  # SI
        self.assertEqual(phrasing.size_bytes("256 MiB", "x"), 256 * 2**20)
        self.assertEqual(phrasing.size_bytes("128M", "x"), 128 * 2**20)  # nccl-tests' -e 128M
        self.assertEqual(phrasing.size_bytes("2^28", "x"), 2**28)
        self.assertEqual(phrasing.size_bytes("4e8", "x"), 4 * 10**8)
        with self.assertRaisesRegex(Skip, "range"):
            phrasing.size_bytes("1M-1G", "x")
        with self.assertRaisesRegex(Skip, "whole number"):
            phrasing.size_bytes("0.5", "x")

    def test_bandwidth_bits_are_an_eighth_of_bytes(self):
        self.assertEqual(phrasing.bandwidth_bytes_per_sec("GB/s"), 1e9)
        self.assertEqual(phrasing.bandwidth_bytes_per_sec("Gb/s"), 1e9 / 8)
        self.assertEqual(phrasing.bandwidth_bytes_per_sec("Gbps"), 1e9 / 8)
        self.assertEqual(phrasing.bandwidth_bytes_per_sec("GiB/s"), 2**30)

    def test_times_counts_and_throughputs(self):
        self.assertEqual(phrasing.seconds_per("µs"), 1e-6)
        self.assertEqual(phrasing.seconds_per("msec"), 1e-3)
        self.assertEqual(phrasing.count("256 (per GPU)", "batch"), 256)
        with self.assertRaisesRegex(Skip, "range"):
            phrasing.count("64-256", "batch")
        self.assertEqual(phrasing.throughput_scope("images/s (total)"), "total")
        self.assertEqual(phrasing.throughput_scope("img/s per GPU"), "per_gpu")
        self.assertEqual(phrasing.throughput_scope("images/sec"), "total")
        self.assertEqual(phrasing.throughput_items("tokens/s"), "tokens")
        self.assertEqual(phrasing.throughput_items("sequences/s (total)"), "samples")


class RowsInOtherWords(unittest.TestCase):
    """The runner end to end on rows written as other sources write them (cases_phrasing.csv)."""

    @classmethod
    def setUpClass(cls):
        from test_validate import run_validation
        _, results, skipped = run_validation("cases_phrasing.csv")
        cls.results = {r["case_id"]: r for r in results}
        cls.skipped = {r["case_id"]: r["reason"] for r in skipped}

    def test_bandwidths_in_bus_algorithm_and_bit_terms_become_times(self):
        s = 2**28  # 256 MiB, "256 MiB" and "2^28"
        # nccl-tests: busbw = algbw * 2(n-1)/n; algbw = S / t; 800 Gb/s = 100 GB/s.
        self.assertAlmostEqual(float(self.results["P-BUS"]["measured"]), s * 2 * 7 / 8 / 175e9)
        self.assertAlmostEqual(float(self.results["P-ALG"]["measured"]), s / 100e9)
        self.assertAlmostEqual(float(self.results["P-BITS"]["measured"]), s / 100e9)
        # The same all-reduce each time: one prediction.
        self.assertEqual(len({self.results[c]["predicted"] for c in ("P-BUS", "P-ALG", "P-BITS")}),
                         1)

    def test_token_throughput_of_one_calibrated_gpu_is_its_own_input(self):
        # One GPU calibrated to 20480 tokens/s at 16 sequences of 128 (phase 1): the iteration is
        # 16 * 128 / 20480 = 0.1 s, so the prediction is the input, in tokens/s.
        r = self.results["P-TOK"]
        self.assertAlmostEqual(float(r["predicted"]), 20480, places=3)
        self.assertEqual(r["own_input"], "yes")

    def test_per_gpu_throughput_is_the_total_over_the_gpus(self):
        total = float(self.results["P-TOT"]["predicted"])
        self.assertAlmostEqual(float(self.results["P-PER"]["predicted"]), total / 8, places=6)
        # A P100 is not in the catalogue: its calibrated rows borrow V100's layer shares.
        self.assertIn("layer shares of v100", self.results["P-TOT"]["read_as"])

    def test_nvls_across_sharp_switches(self):
        # 2 DGX H100 nodes (dgx-h100: 18 x 20.6 GB/s GPU links, 400 GB/s NIC and fabric links,
        # 3.4 us inside a node, 14 us between), 1 GiB, nvls with "sharp": t = 25 us - 14 us +
        # max(3.4 us + S (g+1) / (0.85 g B), 14 us + S / B_nic) (sim/collectives/nvls.h).
        s, g = 2**30, 8
        expected = 25e-6 - 14e-6 + max(3.4e-6 + s * (g + 1) / (0.85 * g * 18 * 20.6e9),
                                       14e-6 + s / 400e9)
        r = self.results["P-SHARP"]
        self.assertEqual(r["ran"], "nvls")
        self.assertAlmostEqual(float(r["predicted"]) / expected, 1, places=5)

    def test_nvls_tree_across_nodes_without_sharp(self):
        # The same 2 nodes without SHARP, NCCL's NVLSTree (nvls-tree, sim/collectives/nvls.h):
        # each GPU's shard over the two trees of 2 nodes, so the NIC carries S each way, and
        # NCCL's NVLSTree latency 25 us + 2 x 20.9 us: t = 66.8 us - 14 us + max(3.4 us +
        # S (g+1) / (0.85 g B), 14 us + S / B_nic).
        s, g = 2**30, 8
        expected = 66.8e-6 - 14e-6 + max(3.4e-6 + s * (g + 1) / (0.85 * g * 18 * 20.6e9),
                                         14e-6 + s / 400e9)
        r = self.results["P-NVLSTREE"]
        self.assertEqual(r["ran"], "nvls-tree")
        self.assertAlmostEqual(float(r["predicted"]) / expected, 1, places=5)

    def test_a_network_other_than_the_datasheets_is_modelled_as_stated(self):
        # Two DGX-1 nodes, a ring of 16 over their NICs: 4 x 100 Gb/s is the preset's own (no
        # note); with one 100 Gb/s port the ring's cross-node steps run 4x slower, so the
        # prediction grows by at least 2x (the NVLink steps do not slow down).
        four, one = self.results["P-NIC4"], self.results["P-NIC1"]
        self.assertEqual(four["read_as"], "")
        self.assertIn("NICs 100 Gb/s per node", one["read_as"])
        self.assertGreater(float(one["predicted"]), 2 * float(four["predicted"]))

    def test_one_gpu_needs_no_preset(self):
        # A T4 in a cloud VM: no preset describes the machine, and one GPU needs none; its compute
        # comes from the op-class model on the T4's datasheet.
        r = self.results["P-T4"]
        self.assertIn("one GPU: no preset", r["read_as"])
        self.assertEqual(r["timing"], "op-class")
        self.assertGreater(float(r["predicted"]), 0)

    def test_a_batch_range_is_refused(self):
        self.assertIn("range", self.skipped["P-RANGE"])


if __name__ == "__main__":
    unittest.main()
