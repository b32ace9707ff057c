"""The peak-memory runner (memory_validate.py, hybrid_cases.py with memory=True) on the hand-made
rows of cases_hybrid_small.csv: the command, the unit conversions (GiB = 2^30 bytes, GB = 10^9)
and a breakdown derived by hand."""
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
import hybrid_cases as hc  # noqa: E402
import memory_validate as mv  # noqa: E402

# llama3.1-8b's parameter count (workloads/TRANSFORMER.md, the Hugging Face total).
LLAMA_8B_PARAMS = 8_030_261_248


def load_rows():
    with open(HERE / "cases_hybrid_small.csv", newline="") as f:
        return {r["case_id"]: r for r in csv.DictReader(f)}


class MemoryCases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = load_rows()
        cls.catalog = hc.read_catalog()
        cls.work = tempfile.mkdtemp()

    def test_a_peak_memory_row_is_a_dtsim_memory_run(self):
        c = hc.make_hybrid_case(self.rows["TT-S1"], self.work, self.catalog, memory=True)
        self.assertEqual(c.args[0], "memory")
        self.assertEqual(c.args[c.args.index("--parallel") + 1], "tp=1,pp=1,dp=8")
        self.assertEqual(c.unit, "GiB")
        self.assertEqual(c.measured, 80.0)

    def test_other_metrics_are_not_memory_rows(self):
        with self.assertRaises(hc.HybridSkip) as e:
            hc.make_hybrid_case(self.rows["TT-H1"], self.work, self.catalog, memory=True)
        self.assertEqual(e.exception.category, "not a peak_memory row")

    def test_gib_and_gb_rows_are_converted_from_bytes(self):
        c = hc.make_hybrid_case(self.rows["TT-S1"], self.work, self.catalog, memory=True)
        stage = {f"{p}_bytes": 0 for p in mv.PARTS}
        memory = {"worst_stage": 0, "peak_bytes": 80 * 2**30, "oom": False, "stages": [stage]}
        self.assertEqual(mv.result_row(c, memory, pathlib.Path(self.work))["predicted"],
                         "80.0000")
        c.unit = "GB"  # 80 * 2^30 bytes are 85.899 GB
        self.assertEqual(mv.result_row(c, memory, pathlib.Path(self.work))["predicted"],
                         "85.8993")


class MemoryRunner(unittest.TestCase):
    """memory_validate.py end to end on TT-S1: Llama 3.1 8B, plain data parallelism on 8 H100s,
    ZeRO 0, bf16."""

    @classmethod
    def setUpClass(cls):
        cls.out = pathlib.Path(tempfile.mkdtemp())
        proc = subprocess.run(
            ["/usr/bin/python3", str(HERE.parent / "memory_validate.py"),
             "--cases", str(HERE / "cases_hybrid_small.csv"), "--out", str(cls.out),
             "--dtsim", DTSIM, "--only", "TT-S1,TT-H1"],
            capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        with open(cls.out / "memory_results.csv") as f:
            cls.results = {r["case_id"]: r for r in csv.DictReader(f)}

    def test_only_the_peak_memory_row_is_predicted(self):
        self.assertEqual(set(self.results), {"TT-S1"})

    def test_states_are_18_bytes_per_parameter_in_gib(self):
        # ZeRO 0, mixed precision (sim/strategies/MEMORY.md): 2 + 4 + 12 bytes per parameter.
        r = self.results["TT-S1"]
        self.assertAlmostEqual(float(r["parameters"]), 2 * LLAMA_8B_PARAMS / 2**30, places=3)
        self.assertAlmostEqual(float(r["gradients"]), 4 * LLAMA_8B_PARAMS / 2**30, places=3)
        self.assertAlmostEqual(float(r["optimizer"]), 12 * LLAMA_8B_PARAMS / 2**30, places=3)
        parts = sum(float(r[p]) for p in mv.PARTS)
        self.assertAlmostEqual(float(r["predicted"]), parts, places=2)
        self.assertEqual(r["oom"], "yes")  # 18 x 8.03e9 bytes alone pass 80 GiB

    def test_summary_has_the_mape_table(self):
        summary = (self.out / "memory_summary.md").read_text()
        self.assertIn("| all predicted rows | 1 |", summary)


if __name__ == "__main__":
    unittest.main()
