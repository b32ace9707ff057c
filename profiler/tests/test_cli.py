"""The command line, run as a user runs it: python3 -m dtsim_profile ..."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import DTSIM, REPO_ROOT, STAR_PLATFORM, cli_env

from dtsim_profile.trace import check_document


def run_cli(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dtsim_profile", "-q", *args], cwd=cwd,
                          env=cli_env(), capture_output=True, text=True, timeout=120)


class ProfileCommandTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory()
        cls.path = Path(cls.tmp.name) / "tiny_cnn.json"
        cls.completed = run_cli("--model", "tiny_cnn", "--batch", "4", "--warmup", "1", "--iters",
                          "3", "-o", str(cls.path))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def test_writes_a_valid_version_3_trace(self) -> None:
        self.assertEqual(self.completed.returncode, 0, self.completed.stderr)
        doc = json.loads(self.path.read_text())
        self.assertEqual(check_document(doc), [])
        self.assertEqual(doc["format_version"], 3)
        self.assertEqual(doc["model"], "tiny_cnn")
        self.assertEqual(doc["batch_per_device"], 4)
        self.assertEqual(doc["measurement"]["clock"], "thread_cpu")
        self.assertEqual(doc["measurement"]["timed_iterations"], 3)
        self.assertRegex(doc["measurement"]["date"], r"^\d{4}-\d{2}-\d{2}$")
        self.assertIn("Coverage", doc["source"])
        self.assertTrue(all(layer["activation_bytes"] > 0 for layer in doc["layers"]))
        self.assertIn("wrote", self.completed.stdout)

    @unittest.skipUnless(DTSIM.is_file(), "build/sim/dtsim not built")
    def test_dtsim_simulates_the_trace(self) -> None:
        sim = subprocess.run([str(DTSIM), "simulate", "--workload", str(self.path),
                              "--platform", str(STAR_PLATFORM), "--ranks", "2"],
                             cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
        self.assertEqual(sim.returncode, 0, sim.stderr)
        self.assertIn("tiny_cnn", sim.stdout)


class UserModelTest(unittest.TestCase):
    def test_factory_returning_model_input_and_loss(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "t.json"
            run = run_cli("--model", "user_models:regression_mlp", "--batch", "4", "--warmup",
                          "0", "--iters", "2", "-o", str(path))
            self.assertEqual(run.returncode, 0, run.stderr)
            doc = json.loads(path.read_text())
            names = [layer["name"] for layer in doc["layers"]]
            self.assertEqual(names, ["0", "1", "2", "(loss)"])
            self.assertEqual(sum(layer["param_bytes"] for layer in doc["layers"]),
                             4 * (16 * 32 + 32 + 32 * 4 + 4))

    def test_factory_returning_a_bare_classifier(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "t.json"
            run = run_cli("--model", "user_models:bare_classifier", "--batch", "2",
                          "--input-size", "16", "--warmup", "0", "--iters", "1", "-o", str(path))
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("7 classes", json.loads(path.read_text())["source"])


class BadInputTest(unittest.TestCase):
    def check_error(self, message: str, *args: str) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "t.json"
            run = run_cli(*args, "-o", str(path))
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertIn(message, run.stderr)
            self.assertNotIn("Traceback", run.stderr)
            self.assertFalse(path.exists())

    def test_unknown_zoo_model(self) -> None:
        self.check_error("dtsim-profile: error: --model resnet5: unknown model (zoo: resnet18,",
                         "--model", "resnet5", "--batch", "2")

    def test_missing_module(self) -> None:
        self.check_error("--model no_such_module:make: cannot import module 'no_such_module'",
                         "--model", "no_such_module:make", "--batch", "2")

    def test_missing_function(self) -> None:
        self.check_error("--model user_models:nothing: module 'user_models' has no function "
                         "'nothing'", "--model", "user_models:nothing", "--batch", "2")

    def test_factory_returning_something_else(self) -> None:
        self.check_error("the factory must return an nn.Module or a tuple (model, "
                         "example_input_fn, loss_fn), got int",
                         "--model", "user_models:not_a_model", "--batch", "2")

    def test_example_input_fn_with_the_wrong_signature(self) -> None:
        # Issue #21: it failed inside the profiler with a Python traceback.
        self.check_error("--model user_models:wrong_input_signature: example_input_fn is called "
                         "as example_input_fn(batch, device), but its signature is "
                         "example_input_fn(batch: 'int') -> 'tuple[Any, Any]': too many "
                         "positional arguments",
                         "--model", "user_models:wrong_input_signature", "--batch", "2")

    def test_fp16_on_cpu(self) -> None:
        self.check_error("--precision fp16: torch", "--model", "mlp", "--batch", "2",
                         "--precision", "fp16")

    def test_cuda_events_clock_on_cpu(self) -> None:
        self.check_error("--clock cuda_events does not time --device cpu", "--model", "mlp",
                         "--batch", "2", "--clock", "cuda_events")

    def test_zero_batch(self) -> None:
        self.check_error("--batch 0: must be >= 1", "--model", "mlp", "--batch", "0")

    def test_output_in_a_missing_directory_fails_before_profiling(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            run = run_cli("--model", "mlp", "--batch", "2", "-o", str(Path(tmp) / "no" / "t.json"))
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertIn(f"no such directory {Path(tmp) / 'no'}", run.stderr)
            self.assertNotIn("batch 2 on cpu", run.stderr)  # nothing was profiled
            run = run_cli("--model", "mlp", "--batch", "2", "-o", tmp)
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertIn("a file name is needed, not a directory", run.stderr)

    def test_a_model_torch_cannot_run_is_an_error_not_a_traceback(self) -> None:
        # tiny_bert's LayerNorm meets bf16 activations on the CPU: torch raises.
        self.check_error("tiny_bert (batch 2, bf16) did not run on cpu: expected scalar type",
                         "--model", "tiny_bert", "--batch", "2", "--precision", "bf16",
                         "--warmup", "0", "--iters", "1")

    def test_cuda_timing_on_cpu(self) -> None:
        self.check_error("--cuda-timing kernels: only with --device cuda", "--model", "mlp",
                         "--batch", "2", "--cuda-timing", "kernels")


class KernelTimingTestModeTest(unittest.TestCase):
    """gpu_profile.sh's dry run: --cuda-timing kernels on the CPU, CPU ops standing in for
    kernels (DTSIM_PROFILE_CPU_OPS_AS_KERNELS=1)."""

    def test_writes_a_valid_trace_that_says_how_it_was_timed(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "k.json"
            env = dict(cli_env(), DTSIM_PROFILE_CPU_OPS_AS_KERNELS="1")
            run = subprocess.run([sys.executable, "-m", "dtsim_profile", "-q", "--model",
                                  "tiny_cnn", "--batch", "2", "--warmup", "1", "--iters", "2",
                                  "--cuda-timing", "kernels", "-o", str(path)],
                                 cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                                 timeout=120)
            self.assertEqual(run.returncode, 0, run.stderr)
            doc = json.loads(path.read_text())
        self.assertEqual(check_document(doc), [])
        self.assertEqual(doc["measurement"]["clock"], "cuda_events")
        self.assertIn("Clock: cuda_kernels", doc["source"])
        self.assertIn("TEST MODE", doc["source"])
        self.assertIn("--cuda-timing kernels", doc["source"])
        self.assertRegex(run.stdout, r"DDP buckets; cuda_kernels: kernels/plain [0-9.]+ %, "
                                     r"layers/kernels forward [0-9.]+ % backward [0-9.]+ %")


if __name__ == "__main__":
    unittest.main()
