"""error_bars.py: its statistics by hand, and the compiled-in table against the results."""
import pathlib
import subprocess
import sys
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import error_bars  # noqa: E402


class ErrorBars(unittest.TestCase):
    def test_median_and_nearest_rank_90th_percentile(self):
        # |errors| 1..10: median (5 + 6) / 2 = 5.5; 90th percentile = the ceil(0.9 * 10) = 9th.
        b = error_bars.bar("allreduce-one-node", [1, -2, 3, -4, 5, -6, 7, -8, 9, -10])
        self.assertEqual((b["rows"], b["median_abs_pct"], b["p90_abs_pct"]), (10, 5.5, 9))
        # One row: both are that row; none: no figures at all.
        self.assertEqual(error_bars.bar("allreduce-one-node", [-4.04])["p90_abs_pct"], 4.0)
        self.assertNotIn("median_abs_pct", error_bars.bar("allreduce-one-node", []))

    def test_the_compiled_table_matches_the_committed_results(self):
        proc = subprocess.run(["/usr/bin/python3", str(HERE.parent / "error_bars.py"),
                               "--check"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)


if __name__ == "__main__":
    unittest.main()
