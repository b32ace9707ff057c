"""single_gpu.py predicts single-GPU times without reading them (issue #23, item 1)."""
import csv
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
DTSIM = os.environ.get("DTSIM", str(REPO / "build/sim/dtsim"))
sys.path.insert(0, str(HERE.parent))
import cases  # noqa: E402


class SingleGpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = pathlib.Path(tempfile.mkdtemp())
        proc = subprocess.run(
            ["/usr/bin/python3", str(HERE.parent / "single_gpu.py"), "--cases",
             str(HERE / "cases_single_gpu.csv"), "--out", str(cls.out), "--dtsim", DTSIM],
            capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        with open(cls.out / "single_gpu.csv") as f:
            cls.rows = {r["rows"]: r for r in csv.DictReader(f)}

    def test_the_measurement_is_not_an_input(self):
        # S-1 and S-2 differ only in their single-GPU value (batch 64 / 300 and / 600 images/s).
        a, b = self.rows["S-1"], self.rows["S-2"]
        self.assertEqual(a["predicted_iter_sec"], b["predicted_iter_sec"])
        self.assertAlmostEqual(float(a["measured_iter_sec"]), 64 / 300, places=5)
        self.assertAlmostEqual(float(b["measured_iter_sec"]), 64 / 600, places=5)
        for r in (a, b):
            predicted, measured = float(r["predicted_iter_sec"]), float(r["measured_iter_sec"])
            self.assertAlmostEqual(float(r["error_pct"]), 100 * (predicted / measured - 1),
                                   places=1)

    def test_mxnet_in_float16_runs_its_recipe(self):
        # NVIDIA's MXNet runner fuses BN + ReLU and runs NHWC in float16; a plain PyTorch AMP row
        # runs neither (NCHW: cuDNN's transposes). Both make the MXNet row faster.
        fused, plain = self.rows["S-3"], self.rows["S-1"]
        self.assertEqual(fused["flags"], "--fuse-norm-relu")
        self.assertEqual(plain["flags"], "--conv-layout nchw")
        self.assertLess(float(fused["predicted_iter_sec"]), float(plain["predicted_iter_sec"]))

    def test_the_fit_subset_is_listed_apart_and_counted_in_no_figure(self):
        self.assertEqual(self.rows["S-4"]["fit_subset"], "yes")
        summary = (self.out / "single_gpu_summary.md").read_text()
        self.assertIn("| **all** |  | 3 |", summary)  # S-1, S-2, S-3; not S-4
        self.assertIn("Chosen on, so in no figure: resnet50 v100 fp32 batch 32 (S-4)", summary)


class ComputeArgs(unittest.TestCase):
    def row(self, source):
        return {"source": source}

    def test_only_mxnet_resnets_in_float16_fuse(self):
        mxnet = self.row("github:NVIDIA/DeepLearningExamples MxNet/Classification/RN50v1.5")
        self.assertEqual(cases.compute_args(mxnet, "resnet50", "fp16"),
                         ["--compute-model", "op-class", "--fuse-norm-relu"])
        self.assertEqual(cases.compute_args(mxnet, "resnet50", "fp32"),  # NCHW: the default
                         ["--compute-model", "op-class", "--conv-layout", "nchw"])
        self.assertEqual(cases.compute_args(self.row("PyTorch"), "resnet50", "fp16"),
                         ["--compute-model", "op-class", "--conv-layout", "nchw"])

    def test_the_recipes_layout(self):
        dle = "github:NVIDIA/DeepLearningExamples PyTorch/Classification/ConvNets"
        # configs.yml: memory_format nhwc for AMP only; main.py's default is nchw.
        self.assertEqual(cases.conv_layout(self.row(dle), "fp16"), "nhwc")
        self.assertEqual(cases.conv_layout(self.row(dle), "tf32"), "nchw")
        self.assertEqual(cases.conv_layout({"source": "PyTorch", "notes": "channels_last"},
                                           "fp16"), "nhwc")
        self.assertEqual(cases.conv_layout(self.row("PyTorch"), "fp16"), "nchw")
        # Transformers have no convolutions: no layout flag.
        self.assertNotIn("--conv-layout", cases.compute_args(self.row("PyTorch"), "bert_large",
                                                             "fp16"))


if __name__ == "__main__":
    unittest.main()
