"""import-kineto: PyTorch profiler traces in, dtsim workload traces and execution graphs out.

Two kinds of input:
* a hand-written GPU trace in Kineto's layout (`gpu_trace` below), whose expected layer times
  are added up by hand in the comments;
* traces this machine's torch writes of real CPU training runs, 1 and 2 gloo ranks
  (tests/kineto_run.py), whose per-layer times are checked against the profiler's own hooks
  measuring the same steps, and whose gradient bytes against the model's parameters.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import DTSIM, PROFILER_DIR, REPO_ROOT, TESTS_DIR

from dtsim_profile import kineto_cli

PLATFORM = REPO_ROOT / "tests" / "testdata" / "sim_star2_1GBps.json"
BASE_NS = 1_700_000_000 * 10**9  # 2023-11-14 22:13:20 UTC


def _op(name, ts, dur, tid=10, cat="cpu_op", **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def _launch(ts, correlation, tid=10):
    return _op("cudaLaunchKernel", ts, 2, tid, "cuda_runtime", correlation=correlation)


def _kernel(name, ts, dur, correlation, stream=7):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts,
            "dur": dur, "args": {"correlation": correlation, "stream": stream}}


def gpu_trace(rank=0, bucket_nelems=144, group="[0, 1]", world=2, group_name="0"):
    """One step of a tiny model on a GPU, in Kineto's layout: Net_0 = Linear_0, ReLU_0 and an
    add of its own; an MSE loss outside every module; backward on the autograd thread (tid
    20); one DDP all-reduce of the gradients; an SGD step. GPU times (us):
    Linear_0 forward: kernels [400, 450] and [440, 480] on two streams, union 80;
    ReLU_0 forward 20; Net_0's add 10; the loss 5. Backward: loss 6, add 2, ReLU 15,
    Linear_0 40 + AccumulateGrad 3 = 43. Optimizer 30. Gradients: 16x8 + 16 floats = 576 B."""
    backward = 20
    events = [
        _op("ProfilerStep#5", 0, 1000, cat="user_annotation"),
        _op("nn.Module: Net_0", 10, 290, cat="python_function"),
        _op("nn.Module: Linear_0", 20, 100, cat="python_function"),
        _op("aten::linear", 25, 90, **{"Sequence number": 7, "Fwd thread id": 0}),
        _launch(40, 101), _kernel("gemm", 400, 50, 101),
        _launch(60, 102), _kernel("bias_add", 440, 40, 102, stream=8),
        _op("nn.Module: ReLU_0", 130, 50, cat="python_function"),
        _op("aten::relu", 135, 35, **{"Sequence number": 8}),
        _launch(140, 103), _kernel("relu", 500, 20, 103),
        _op("aten::add", 200, 20, **{"Sequence number": 9}),
        _launch(205, 104), _kernel("add", 530, 10, 104),
        _op("aten::mse_loss", 310, 20, **{"Sequence number": 10}),
        _launch(315, 105), _kernel("mse", 545, 5, 105),
        _op("autograd::engine::evaluate_function: MseLossBackward0", 340, 10, backward,
            **{"Sequence number": 10, "Fwd thread id": 1}),
        _launch(342, 106, backward), _kernel("mse_bwd", 560, 6, 106),
        _op("autograd::engine::evaluate_function: AddBackward0", 352, 8, backward,
            **{"Sequence number": 9, "Fwd thread id": 1}),
        _launch(354, 107, backward), _kernel("add_bwd", 570, 2, 107),
        _op("autograd::engine::evaluate_function: ReluBackward0", 362, 8, backward,
            **{"Sequence number": 8, "Fwd thread id": 1}),
        _launch(364, 108, backward), _kernel("relu_bwd", 575, 15, 108),
        _op("autograd::engine::evaluate_function: AddmmBackward0", 372, 18, backward,
            **{"Sequence number": 7, "Fwd thread id": 1}),
        _launch(374, 109, backward), _kernel("gemm_bwd", 600, 40, 109),
        _op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 392, 6,
            backward, **{"Sequence number": -1}),
        _op("torch::autograd::AccumulateGrad", 393, 2, backward,
            **{"Input Dims": [[16, 8]], "Input type": ["float"]}),
        _launch(394, 110, backward), _kernel("accumulate", 645, 3, 110),
        _op("torch::autograd::AccumulateGrad", 396, 1, backward,
            **{"Input Dims": [[16]], "Input type": ["float"]}),
        _op("record_param_comms", 400, 5, backward, **{
            "Collective name": "allreduce", "In msg nelems": bucket_nelems,
            "Out msg nelems": bucket_nelems, "dtype": "Float", "Group size": 2,
            "Process Group Name": group_name, "Process Group Ranks": group, "Rank": rank}),
        _launch(401, 111, backward), _kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 650,
                                             50, 111, stream=9),
        _op("Optimizer.step#SGD.step", 700, 60, cat="user_annotation"),
        _op("aten::add_", 710, 40),
        _launch(712, 112), _kernel("sgd", 760, 30, 112),
        _kernel("orphan", 800, 1, 999),
        {"ph": "s", "id": 101, "pid": 1, "tid": 10, "ts": 40, "cat": "ac2g", "name": "ac2g"},
        {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
    ]
    return {"schemaVersion": 1, "deviceProperties": [{"name": "NVIDIA H200"}],
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world},
            "baseTimeNanoseconds": BASE_NS, "traceEvents": events}


def run_import(args):
    """kineto_cli.main in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = kineto_cli.main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


class HandWrittenGpuTrace(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tmp = Path(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, doc, gz=False):
        path = self.tmp / name
        data = json.dumps(doc).encode()
        path.write_bytes(gzip.compress(data) if gz else data)
        return path

    def test_layers_phases_and_gradients_are_attributed_by_hand(self):
        trace = self.write("rank0.json.gz", gpu_trace(), gz=True)
        out = self.tmp / "t.json"
        code, stdout, stderr = run_import([trace, "--batch", 4, "-o", out])
        self.assertEqual(code, 0, stderr)
        doc = json.loads(out.read_text())
        layers = {l["name"]: l for l in doc["layers"]}
        self.assertEqual([l["name"] for l in doc["layers"]],
                         ["Net_0.Linear_0", "Net_0.ReLU_0", "Net_0.(own)", "(no module)"])
        expected = {"Net_0.Linear_0": (80, 43, 576), "Net_0.ReLU_0": (20, 15, 0),
                    "Net_0.(own)": (10, 2, 0), "(no module)": (5, 6, 0)}  # the docstring's sums
        for name, (forward_us, backward_us, grads) in expected.items():
            self.assertAlmostEqual(layers[name]["forward_sec"], forward_us * 1e-6, places=12)
            self.assertAlmostEqual(layers[name]["backward_sec"], backward_us * 1e-6, places=12)
            self.assertEqual(layers[name]["param_bytes"], grads)
        self.assertAlmostEqual(doc["optimizer_sec"], 30e-6, places=12)
        self.assertEqual(doc["device"], "NVIDIA H200")
        self.assertEqual(doc["batch_per_device"], 4)
        self.assertEqual(doc["measurement"]["date"], "2023-11-14")
        self.assertEqual(doc["measurement"]["clock"], "cuda_events")
        self.assertIn("left out: 1 GPU activities with no launching CPU event", stderr)

    def test_a_zero_width_op_at_its_parents_last_microsecond_is_its_child(self):
        # The legacy profiler truncates both ends to the microsecond: the bias's AccumulateGrad
        # run in the last microsecond of its evaluate_function [392, 398] reads [398, 398].
        # It is still Linear_0's gradient: 16x8 + 16 floats = 576 B, none outside a layer.
        doc = gpu_trace()
        bias = doc["traceEvents"][34]
        self.assertEqual(bias["args"]["Input Dims"], [[16]])
        bias["ts"], bias["dur"] = 398, 0
        out = self.tmp / "t.json"
        code, _, stderr = run_import([self.write("r.json", doc), "--batch", 4, "-o", out])
        self.assertEqual(code, 0, stderr)
        grads = {l["name"]: l["param_bytes"] for l in json.loads(out.read_text())["layers"]}
        self.assertEqual(grads, {"Net_0.Linear_0": 576, "Net_0.ReLU_0": 0, "Net_0.(own)": 0,
                                 "(no module)": 0})

    def test_two_ranks_give_a_graph_with_the_all_reduce_where_it_was_issued(self):
        paths = [self.write(f"r{r}.json", gpu_trace(rank=r)) for r in (1, 0)]  # any order
        graph_path = self.tmp / "g.json"
        code, _, stderr = run_import([*paths, "--batch", 4, "-o", self.tmp / "t.json",
                                      "--graph", graph_path])
        self.assertEqual(code, 0, stderr)
        graph = json.loads(graph_path.read_text())
        self.assertEqual(graph["communicators"], [{"name": "world", "ranks": [0, 1]}])
        nodes = graph["programs"][0]["nodes"]
        kinds = [(n["kind"], n["phase"], n.get("layer", n.get("op"))) for n in nodes]
        self.assertEqual(kinds, [
            ("compute", "forward", "Net_0.Linear_0"), ("compute", "forward", "Net_0.ReLU_0"),
            ("compute", "forward", "Net_0.(own)"), ("compute", "forward", "(no module)"),
            ("compute", "backward", "(no module)"), ("compute", "backward", "Net_0.(own)"),
            ("compute", "backward", "Net_0.ReLU_0"), ("compute", "backward", "Net_0.Linear_0"),
            ("collective", "backward", "all-reduce"), ("compute", "optimizer", None)])
        self.assertEqual(nodes[8]["bytes"], 576)  # 144 floats
        self.assertEqual(nodes[8]["deps"], [7])  # after Linear_0's backward
        self.assertEqual(nodes[9]["deps"], [8])  # the optimizer waits for the gradients
        if DTSIM.exists():
            run = subprocess.run([str(DTSIM), "simulate", "--graph", str(graph_path),
                                  "--platform", str(PLATFORM)], capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)

    def test_groups_smaller_than_the_job_are_communicators_of_their_own(self):
        # 4 ranks in two data-parallel pairs {0, 1} and {2, 3} (process groups "1" and "2").
        paths = [self.write(f"r{r}.json", gpu_trace(r, group="[0, 1]" if r < 2 else "[2, 3]",
                                                     world=4, group_name="1" if r < 2 else "2"))
                 for r in range(4)]
        graph_path = self.tmp / "g.json"
        code, _, stderr = run_import([*paths, "--batch", 4, "-o", self.tmp / "t.json",
                                      "--graph", graph_path])
        self.assertEqual(code, 0, stderr)
        graph = json.loads(graph_path.read_text())
        self.assertEqual(graph["communicators"], [{"name": "pg1", "ranks": [0, 1]},
                                                  {"name": "pg2", "ranks": [2, 3]}])
        self.assertEqual([r["comms"] for r in graph["ranks"]],
                         [{"pg1": "pg1"}, {"pg1": "pg1"}, {"pg2": "pg2"}, {"pg2": "pg2"}])
        if DTSIM.exists():
            run = subprocess.run([str(DTSIM), "simulate", "--graph", str(graph_path),
                                  "--platform", str(REPO_ROOT / "tests/testdata/sim_star16_25GBps.json")],
                                 capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)

    def test_ranks_that_disagree_on_a_collective_are_refused(self):
        paths = [self.write("r0.json", gpu_trace(0)), self.write("r1.json", gpu_trace(1, 145))]
        code, _, stderr = run_import([*paths, "--batch", 4, "-o", self.tmp / "t.json",
                                      "--graph", self.tmp / "g.json"])
        self.assertEqual(code, 2)
        self.assertIn("r1.json: /traceEvents/", stderr)
        self.assertIn("all-reduce of 580 bytes; rank 0's is all-reduce of 576 bytes", stderr)
        self.assertFalse((self.tmp / "t.json").exists())

    def test_bad_inputs_are_located_errors(self):
        legacy = self.write("legacy.json", [{"name": "aten::mm", "ph": "X", "ts": 0, "dur": 1,
                                             "tid": 1, "pid": "CPU functions", "args": {}}])
        broken = self.tmp / "broken.json"
        broken.write_text('{"traceEvents": [\n  {"ph": "X",]}')
        negative = gpu_trace()
        negative["traceEvents"][3]["dur"] = -1
        no_shapes = gpu_trace()
        del no_shapes["traceEvents"][31]["args"]["Input Dims"]
        bad_type = gpu_trace()
        bad_type["traceEvents"][35]["args"]["dtype"] = "Float7"
        cases = [
            (legacy, "a bare JSON list of events, as torch's legacy profiler"),
            (broken, "broken.json: line 2 column 14: not JSON"),
            (self.write("neg.json", negative), "/traceEvents/3/dur: expected a number from 0"),
            (self.write("shapes.json", no_shapes),
             "/traceEvents/31/args/Input Dims: torch::autograd::AccumulateGrad needs the shape"),
            (self.write("type.json", bad_type),
             "/traceEvents/35/args/dtype: unknown element type 'Float7'"),
            (self.tmp / "missing.json", "missing.json: cannot read"),
        ]
        for path, message in cases:
            with self.subTest(path=path.name):
                code, _, stderr = run_import([path, "--batch", 1, "-o", self.tmp / "o.json"])
                self.assertEqual(code, 2)
                self.assertIn(message, stderr)
                self.assertFalse((self.tmp / "o.json").exists())

    def test_an_output_naming_an_input_is_refused(self):
        trace = self.write("rank0.json", gpu_trace())
        before = trace.read_bytes()
        code, _, stderr = run_import([trace, "--batch", 1, "-o", trace])
        self.assertEqual(code, 2)
        self.assertIn("is an input; inputs are never overwritten", stderr)
        self.assertEqual(trace.read_bytes(), before)

    def test_the_same_trace_gives_the_same_bytes(self):
        trace = self.write("rank0.json", gpu_trace())
        outputs = []
        for name in ("a.json", "b.json"):
            run_import([trace, "--batch", 4, "-o", self.tmp / name, "-q"])
            outputs.append((self.tmp / name).read_bytes())
        self.assertEqual(outputs[0], outputs[1])


class MutatedTraces(unittest.TestCase):
    """Every mutation of the hand-written trace is imported or refused with exit 2: no
    traceback, whatever a field holds (seeded, so the same mutations run every time)."""

    VALUES = [None, True, -1, 0, 2**64, 1e308, -1e-9, "", "x", "[0, 1, ...]", [], [[]], [[-1]],
              {}, [["a"]], "18446744073709551615", 3.5]

    def test_mutations_never_crash_the_importer(self):
        import random

        rng = random.Random(21)
        with tempfile.TemporaryDirectory() as tmp:
            for attempt in range(2000):
                docs = [gpu_trace(0), gpu_trace(1)]
                for _ in range(rng.randint(1, 3)):
                    self.mutate(rng, docs[rng.randint(0, 1)])
                paths = []
                for rank, doc in enumerate(docs):
                    paths.append(Path(tmp) / f"m{rank}.json")
                    paths[-1].write_text(json.dumps(doc))
                with self.subTest(attempt=attempt):
                    try:
                        code, _, _ = run_import([*paths, "--batch", 2, "-o", Path(tmp) / "t.json",
                                                 "--graph", Path(tmp) / "g.json", "-q"])
                    except Exception as error:  # a traceback is the finding
                        self.fail(f"attempt {attempt}: {type(error).__name__}: {error}")
                    self.assertIn(code, (0, 2))

    def mutate(self, rng, doc):
        events = doc["traceEvents"]
        if not isinstance(events, list) or not events:
            return
        event = rng.choice(events)
        if not isinstance(event, dict):
            return
        choice = rng.randint(0, 5)
        if choice == 0 and isinstance(event.get("args"), dict) and event["args"]:
            event["args"][rng.choice(sorted(event["args"]))] = rng.choice(self.VALUES)
        elif choice == 1:
            event[rng.choice(["ts", "dur", "name", "cat", "pid", "tid", "ph", "args"])] = \
                rng.choice(self.VALUES)
        elif choice == 2:
            del events[rng.randrange(len(events))]
        elif choice == 3:
            events.append(copy.deepcopy(rng.choice(events)))
        elif choice == 4:
            doc[rng.choice(["distributedInfo", "deviceProperties", "baseTimeNanoseconds",
                            "traceEvents"])] = rng.choice(self.VALUES)
        elif event:
            del event[rng.choice(sorted(event))]


def _run_model(tmp, model, world):
    """Runs tests/kineto_run.py on `world` ranks; returns the trace and hook files."""
    port = str(29700 + os.getpid() % 200)
    procs, files = [], []
    for rank in range(world):
        trace, layers = tmp / f"{model}_{rank}.json", tmp / f"{model}_{rank}_layers.json"
        files.append((trace, layers))
        procs.append(subprocess.Popen(
            [sys.executable, str(TESTS_DIR / "kineto_run.py"), model, str(rank), str(world),
             port, str(trace), str(layers)], cwd=str(PROFILER_DIR), stderr=subprocess.PIPE,
            text=True))
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        if proc.returncode != 0:
            raise AssertionError(f"kineto_run.py failed: {err}")
    return files


class RealCpuRuns(unittest.TestCase):
    """Traces of this machine's torch: 2 warm-up and 3 profiled steps per run."""

    # A layer's time, import over hooks, for the layers with 5 % of the phase or more. Both
    # time the same calls of the same steps. Forward: the hooks' window encloses the layer's
    # ops (its range opens before the hooks' first mark and closes before their last), so the
    # import is at most the hooks' time (+2 % for the legacy profiler's 1-us rounding) and
    # less by the Python between the ops (measured here: 2-11 % less). Backward: the import's
    # evaluate_function also holds the engine's accumulation of the node's output into the
    # next node's input buffer, after the node's post-hook (measured: 0-24 % more, the most
    # on the residual branches of tiny_cnn).
    SHARE = 0.05
    BOUNDS = {"forward_sec": (0.75, 1.02), "backward_sec": (0.85, 1.35)}
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.tmp = Path(cls.dir.name)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def ratios_out_of_bounds(self, trace_doc, hooks):
        """The layers whose import-over-hooks ratio is outside BOUNDS, as readable lines."""
        imported = {l["name"]: l for l in trace_doc["layers"]}
        out = []
        for index, phase in ((0, "forward_sec"), (1, "backward_sec")):
            total = sum(h[index] for h in hooks.values())
            for name, measured in hooks.items():
                if measured[index] < self.SHARE * total:
                    continue
                low, high = self.BOUNDS[phase]
                ratio = imported[name][phase] / measured[index]
                if not low <= ratio <= high:
                    out.append(f"{name} {phase}: {ratio:.3f} not in [{low}, {high}]")
        return out

    def check_param_bytes(self, trace_doc, hooks):
        imported = {l["name"]: l for l in trace_doc["layers"]}
        for name, measured in hooks.items():  # gradient bytes: 4 x the layer's parameters
            self.assertEqual(imported[name]["param_bytes"], measured[2], name)

    def import_runs(self, files, batch, graph=None):
        out = self.tmp / f"{files[0][0].stem}_trace.json"
        args = [trace for trace, _ in files] + ["--batch", batch, "-o", out, "-q"]
        if graph is not None:
            args += ["--graph", graph]
        code, _, stderr = run_import(args)
        self.assertEqual(code, 0, stderr)
        return json.loads(out.read_text())

    def test_one_rank_mlp_cnn_and_bert_layers_match_the_hooks(self):
        for model, batch in (("mlp", 64), ("tiny_cnn", 16), ("tiny_bert", 8)):
            with self.subTest(model=model):
                # Both clocks time the same calls, but on a loaded machine a preemption between
                # a hook and the end of its node skews one small layer's pair (seen: 1.45 on a
                # tiny_cnn convolution's backward while a fuzzer and the suite shared 2 cores;
                # within bounds alone; and 0.14 on a tiny_cnn BatchNorm's forward in both of two
                # runs beside two fuzzers and the suite). A later run must then agree; a real
                # disagreement fails all three.
                for attempt in (1, 2, 3):
                    files = _run_model(self.tmp, model, 1)
                    doc = self.import_runs(files, batch)
                    hooks = json.loads(files[0][1].read_text())
                    if model == "tiny_cnn":  # its ReLU_1 runs twice a step: the hooks time each
                        hooks.pop("TinyCnn_0.TinyBlock_0.ReLU_1")  # call, the import the module
                    outside = self.ratios_out_of_bounds(doc, hooks)
                    if not outside:
                        break
                self.assertEqual(outside, [], f"in all three runs of {model}")
                self.check_param_bytes(doc, hooks)
                self.assertEqual(doc["measurement"]["timed_iterations"], 3)

    def test_two_gloo_ranks_give_ddp_buckets_and_a_graph_dtsim_replays(self):
        files = _run_model(self.tmp, "mlp", 2)
        graph_path = self.tmp / "ddp_graph.json"
        doc = self.import_runs(files, 64, graph_path)
        hooks = [json.loads(layers.read_text()) for _, layers in files]
        for rank_hooks in hooks:
            inner = {k.replace("DistributedDataParallel_0.", "", 1): v
                     for k, v in rank_hooks.items()}
            self.assertEqual(sum(v[2] for v in inner.values()), 4 * 4_208_650)
        grads = {l["name"].replace("DistributedDataParallel_0.", "", 1): l["param_bytes"]
                 for l in doc["layers"]}
        self.assertEqual(sum(grads.values()), 4 * 4_208_650)  # the mlp's 4,208,650 parameters
        graph = json.loads(graph_path.read_text())
        for program in graph["programs"]:
            buckets = [n["bytes"] for n in program["nodes"] if n["kind"] == "collective"]
            # DDP's buckets in gradient-ready order: the first closes at >= 1 MiB (Linear_4's
            # 41,000 B + Linear_3's 4,198,400 B), the rest under the 25 MiB cap (3 x 4,198,400).
            self.assertEqual(buckets, [4_239_400, 12_595_200])
        if DTSIM.exists():
            run = subprocess.run([str(DTSIM), "simulate", "--graph", str(graph_path),
                                  "--platform", str(PLATFORM), "--report",
                                  str(self.tmp / "report.json")],
                                 capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            result = json.loads((self.tmp / "report.json").read_text())["result"]
            # A 2-rank ring all-reduce of S bytes on the 1 GB/s, 1 us star: a reduce-scatter
            # and an all-gather step, each S/2 over two links: 2 (2 us + S/2 / 1 GB/s).
            self.assertEqual([c["bytes"] for c in result["collectives"]], [4_239_400, 12_595_200])
            for collective in result["collectives"]:
                self.assertAlmostEqual(collective["duration_sec"],
                                       4e-6 + collective["bytes"] / 1e9, delta=1e-8)
            self.assertGreaterEqual(result["iteration_time_sec"], result["compute_sec"])
            # Kineto in, Chakra out: the graph written as Chakra and read back is the same job.
            prefix = self.tmp / "chakra" / "ddp"
            prefix.parent.mkdir(exist_ok=True)
            runs = [[str(DTSIM), "simulate", "--graph", str(graph_path), "--platform",
                     str(PLATFORM), "--dump-chakra", str(prefix)],
                    [str(DTSIM), "simulate", "--chakra", str(prefix), "--platform",
                     str(PLATFORM), "--report", str(self.tmp / "chakra.json")]]
            for command in runs:
                run = subprocess.run(command, capture_output=True, text=True)
                self.assertEqual(run.returncode, 0, run.stderr)
            again = json.loads((self.tmp / "chakra.json").read_text())["result"]
            self.assertEqual(again["iteration_time_sec"], result["iteration_time_sec"])


if __name__ == "__main__":
    unittest.main()
