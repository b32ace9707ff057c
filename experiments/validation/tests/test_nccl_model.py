"""nccl_model.py's ring times against NCCL's formulas worked by hand (sim/collectives/NCCL_MODEL.md
§1–§2)."""
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import nccl_model  # noqa: E402


class NcclRingModel(unittest.TestCase):
    def test_a100_protocols_at_32_kib(self):
        times = nccl_model.ring_times_us(32768, 8, nccl_model.GPUS["A100"])
        # 8 ranks: 14 steps; algorithm bandwidth = bus bandwidth x 8 / 14.
        # LL: 6.6 + 14 x 0.6 = 15.0 us; bus min(llMax 87.7, 240 / 2) = 87.7 GB/s.
        self.assertAlmostEqual(times["LL"], 15.0 + 32768 / (87.7 * 8 / 14 * 1e3), places=9)
        # LL128: 14 + 14 x 1.9 = 40.6 us; bus min(0.92 x 240, 12 channels x 20) = 220.8 GB/s.
        self.assertAlmostEqual(times["LL128"], 40.6 + 32768 / (220.8 * 8 / 14 * 1e3), places=9)
        # Simple: 8.4 + 14 x 3.4 = 56.0 us at the full 240 GB/s.
        self.assertAlmostEqual(times["Simple"], 56.0 + 32768 / (240 * 8 / 14 * 1e3), places=9)

    def test_h200_ll128_is_capped_by_the_bus_not_the_channels(self):
        # 18 channels x 36.7 = 660.6 GB/s > 0.92 x 370.8 = 341.136 GB/s.
        times = nccl_model.ring_times_us(1 << 24, 8, nccl_model.GPUS["H200"])
        self.assertAlmostEqual(times["LL128"], 40.6 + (1 << 24) / (341.136 * 8 / 14 * 1e3),
                               places=9)


if __name__ == "__main__":
    unittest.main()


class NaiveClosedForm(unittest.TestCase):
    """naive.py's two-level ring, against hand calculations."""

    def test_one_node_is_a_ring_over_its_gpus(self):
        import sys
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
        import naive
        # 1 GB on one DGX-1 (8 GPUs, NVLink2 line rate 150 GB/s): 2 x 7 steps of
        # 5 us + 1e9 / (8 x 150e9) s = 14 x 838.33 us = 11.7367 ms.
        self.assertAlmostEqual(naive.allreduce_sec(1e9, 8, 1, "dgx1-v100"),
                               14 * (5e-6 + 1e9 / (8 * 150e9)), places=12)
        self.assertAlmostEqual(naive.allreduce_sec(1e9, 8, 1, "dgx1-v100"), 0.0117367, places=6)
        # Two nodes add 2 x 1 steps of 5 us + 1e9 / (2 x 50e9) s across the 4 x 100 Gb/s NICs.
        self.assertAlmostEqual(naive.allreduce_sec(1e9, 8, 2, "dgx1-v100"),
                               0.0117367 + 2 * (5e-6 + 0.01), places=6)
