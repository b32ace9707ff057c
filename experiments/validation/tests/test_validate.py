"""The validation runner on hand-made rows whose predictions follow from closed forms."""
import csv
import os
import pathlib
import subprocess
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
DTSIM = os.environ.get("DTSIM", str(REPO / "build/sim/dtsim"))


def run_validation(cases_csv):
    """(out folder, results rows, skipped rows) of validate.py on tests/`cases_csv`."""
    out = pathlib.Path(tempfile.mkdtemp())
    proc = subprocess.run(
        ["/usr/bin/python3", str(HERE.parent / "validate.py"), "--cases", str(HERE / cases_csv),
         "--out", str(out), "--dtsim", DTSIM, "--jobs", "2"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with open(out / "results.csv") as f:
        results = list(csv.DictReader(f))
    with open(out / "skipped.csv") as f:
        skipped = list(csv.DictReader(f))
    return out, results, skipped


class ValidationRunner(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out, results, skipped = run_validation("cases_small.csv")
        cls.results = {r["case_id"]: r for r in results}
        cls.skipped = {r["case_id"]: r for r in skipped}

    def test_every_row_is_predicted_or_skipped_with_a_reason(self):
        self.assertEqual(set(self.results) | set(self.skipped),
                         {"T-AR-1", "T-AR-2", "T-TR-1", "T-SK-1", "T-SK-2", "T-PC-1",
                          "T-NV-1", "T-NV-2"})
        self.assertIn("no preset for GPU 'Gaudi2'", self.skipped["T-SK-1"]["reason"])
        self.assertIn("time_to_train", self.skipped["T-SK-2"]["reason"])
        # NCCL ran NVLS (from 2 MiB, says the row) across two nodes: that needs SHARP switches.
        self.assertIn("NVLS across nodes", self.skipped["T-NV-2"]["reason"])

    def test_nvls_rows_run_dtsims_nvls_with_its_own_latency(self):
        # 64 MiB on one hgx-h200 node, where the row says NCCL ran NVLS (from 2 MiB):
        # sim/collectives/nvls.h, 25 us + S (n+1) / (0.85 n B), B = 18 x 20.6 GB/s, and no
        # separate 8.4 us base latency (NVLS replaces it).
        s, n = 67108864, 8
        expected = 25e-6 + s * (n + 1) / (0.85 * n * 18 * 20.6e9)
        self.assertAlmostEqual(float(self.results["T-NV-1"]["predicted"]) / expected, 1, places=5)
        self.assertEqual(self.results["T-NV-1"]["ran"], "nvls")

    def test_ring_allreduce_follows_the_preset_closed_form(self):
        # dgx-a100 (platforms/PRESETS.md): 240 GB/s per GPU link, 3.4 us per NVLink hop; NCCL's
        # 8.4 us per collective. Ring on 8 ranks: 8.4 us + 2(p-1) (3.4 us + S/p / 240 GB/s).
        s, p = 24e6, 8
        expected = 8.4e-6 + 2 * (p - 1) * (3.4e-6 + s / p / 240e9)
        r = self.results["T-AR-1"]
        self.assertAlmostEqual(float(r["predicted"]) / expected, 1, places=5)
        self.assertAlmostEqual(float(r["measured"]), 100e-6)
        self.assertAlmostEqual(float(r["error_pct"]), 100 * (expected - 100e-6) / 100e-6,
                               places=1)

    def test_bus_bandwidth_becomes_a_time_by_the_nccl_tests_formula(self):
        # busbw = (S/t) 2(n-1)/n  =>  t = S 2(n-1)/n / busbw = 80e6 * 14/8 / 100e9 = 1.4 ms.
        self.assertAlmostEqual(float(self.results["T-AR-2"]["measured"]), 1.4e-3)
        # hgx-h200: 18 x 20.6 GB/s per GPU link.
        expected = 8.4e-6 + 14 * (3.4e-6 + 10e6 / (18 * 20.6e9))
        self.assertAlmostEqual(float(self.results["T-AR-2"]["predicted"]) / expected, 1,
                               places=5)

    def test_one_gpu_training_row_predicts_its_calibration_time(self):
        # Calibrated to single_gpu_value = 0.097 s and one rank: nothing to all-reduce.
        r = self.results["T-TR-1"]
        self.assertAlmostEqual(float(r["predicted"]), 0.097, places=6)
        self.assertAlmostEqual(float(r["error_pct"]), -3.0, places=2)

    def test_parameter_count_comes_from_the_generator(self):
        self.assertEqual(float(self.results["T-PC-1"]["predicted"]), 25557032)

    def test_summary_lists_each_source_and_metric(self):
        summary = (self.out / "summary.md").read_text()
        self.assertIn("| T | allreduce_time | A | 3 |", summary)  # T-AR-1, T-AR-2, T-NV-1


class BadRows(unittest.TestCase):
    """Rows a runner must skip with their reason, never crash on or predict wrongly."""

    @classmethod
    def setUpClass(cls):
        cls.out, cls.results, skipped = run_validation("cases_bad.csv")
        cls.skipped = [(r["case_id"], r["reason"]) for r in skipped]

    def test_only_the_good_rows_are_predicted(self):
        self.assertEqual([r["case_id"] for r in self.results],
                         ["B-OK", "B-NOPER", "B-TRAIL", "B-COMMA"])
        # The first B-OK: 24 MB on one A100 node (its measured 100 us, not the duplicate's 200).
        self.assertEqual(float(self.results[0]["measured"]), 100e-6)
        # The same all-reduce, written differently: gpus_per_node left out (8 GPUs on 1 node),
        # "DGX A100" naming the NVSwitch node, lower case, a comma after msg_bytes, thousands
        # separated by commas (24,000,000).
        self.assertEqual({r["predicted"] for r in self.results}, {self.results[0]["predicted"]})

    def test_each_bad_row_is_skipped_with_its_reason_in_file_order(self):
        self.assertEqual(self.skipped, [
            ("B-OK", "line 5: case_id B-OK again (first on line 2)"),
            ("B-ZERO", "column value is '0', not a number > 0"),
            ("B-GPUS", "total_gpus 8 is not nodes 2 x gpus_per_node 8"),
            # A PCIe A100 box across two sockets: no preset (the socket link is the CPU's).
            ("B-PCIE", "PCIe 4.0 box across two sockets: the socket link's bandwidth depends "
                       "on the CPU, and there is no preset (platforms/PRESETS.md)"),
            ("B-SHORT", "line 10: not as many fields as the header"),
        ])

    def test_bad_input_files_exit_2_with_one_line(self):
        empty = self.out / "empty.csv"
        empty.write_text("")
        for cases, message in [(empty, "empty file (expected a header:"),
                               (self.out / "none.csv", "none.csv: No such file or directory")]:
            proc = subprocess.run(
                ["/usr/bin/python3", str(HERE.parent / "validate.py"), "--cases", str(cases),
                 "--out", str(self.out / "x"), "--dtsim", DTSIM], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 2)
            self.assertIn(message, proc.stderr)
            self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)


if __name__ == "__main__":
    unittest.main()
