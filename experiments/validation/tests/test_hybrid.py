"""The hybrid-parallelism runner (hybrid_cases.py, hybrid_validate.py) on hand-made rows
(cases_hybrid_small.csv) whose commands and conversions are derived by hand."""
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
import hybrid_validate as hv  # noqa: E402

COMMON_TAIL = ["--collective-latency", "8.4us"]


def load_rows():
    with open(HERE / "cases_hybrid_small.csv", newline="") as f:
        return {r["case_id"]: r for r in csv.DictReader(f)}


def without_platform(args):
    """The args with the platform file replaced by its content (files live in a temp folder)."""
    out = list(args)
    i = out.index("--platform")
    out[i + 1] = pathlib.Path(out[i + 1]).read_text().strip()
    return out


class HybridCases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = load_rows()
        cls.catalog = hc.read_catalog()
        cls.work = tempfile.mkdtemp()

    def case(self, case_id):
        return hc.make_hybrid_case(self.rows[case_id], self.work, self.catalog)

    def skip_reason(self, case_id):
        with self.assertRaises(hc.HybridSkip) as ctx:
            self.case(case_id)
        return str(ctx.exception)

    def test_catalogue_is_read_from_its_cpp_source(self):
        self.assertEqual(len(self.catalog), 45)
        # mpt(...): GPT's block at vocab 50368, the position table the run's (no fixed context).
        self.assertEqual(self.catalog["mpt-7b"]["hidden"], 4096)
        self.assertEqual(self.catalog["mpt-7b"]["vocab"], 50368)
        self.assertIsNone(self.catalog["mpt-7b"]["context"])
        self.assertEqual(self.catalog["megatron-gpt-1.7b"]["hidden"], 2304)
        self.assertEqual(self.catalog["megatron-gpt-1.7b"]["ffn"], 4 * 2304)
        self.assertEqual(self.catalog["llama2-70b"]["kv_heads"], 8)
        self.assertEqual(self.catalog["mixtral-8x22b"]["experts"], 8)
        self.assertEqual(self.catalog["llama3.1-405b"]["layers"], 126)
        # nemotron(...): NeMo's Nemotron-4 340B config, GQA with 8 groups, an MLP not gated.
        self.assertEqual(self.catalog["nemotron-340b"]["kv_heads"], 8)
        self.assertEqual(self.catalog["nemotron-340b"]["ffn"], 4 * 18432)
        self.assertFalse(self.catalog["nemotron-340b"]["swiglu"])

    def test_torchtitan_fsdp_row_on_one_h100_node(self):
        c = self.case("TT-H1")
        self.assertEqual(without_platform(c.args), [
            "simulate", "--model", "llama3.1-8b", "--device", "h100@500W", "--precision", "bf16",
            "--platform", '{"preset": "dgx-h100", "nodes": 1}', "--ranks", "8",
            "--parallel", "tp=1,pp=1,dp=8", "--micro-batch", "2", "--global-batch", "16",
            "--seq-len", "8192", "--zero", "3", "--cross-entropy", "pytorch",
            "--attention", "flash2", "--fp8-recipe", "torchao", "--recompute", "selective-op"]
            + COMMON_TAIL
            + ["--algorithm", "ring", "--replay", "fast", "--iterations", "2"])
        self.assertEqual((c.kind, c.flags), ("FSDP", []))
        # The GPU column's "500W limit" is the device's power limit, not an assumption.
        self.assertFalse(any("500W" in a for a in c.assumed))

    def test_torchtitan_compiles_its_loss_from_april_2025_with_compile_on(self):
        # pytorch/torchtitan#1033 (2025-04-01); the date is the benchmark file's.
        row = dict(self.rows["TT-H1"])
        self.assertEqual(hc.cross_entropy("TT", row), "pytorch")
        self.assertIsNone(hc.cross_entropy("NEMO", self.rows["NEMO-H1"]))
        for source, notes, loss in (
                ("benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md", "torch.compile",
                 "compiled"),
                ("benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md", "FSDP, torch.compile",
                 "compiled"),
                ("benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md", "eager", "pytorch"),
                ("benchmarks/llama3_h100_202412_torchtitan.md", "FSDP + torch.compile",
                 "pytorch"),
                ("benchmarks/llama3_h100_202503_x.md", "torch.compile", "pytorch")):
            row.update(source=source, notes=notes, what_if="")
            self.assertEqual(hc.cross_entropy("TT", row), loss, (source, notes))

    def test_each_source_casts_float8_as_its_framework_does(self):
        # torchtitan runs torchao; NeMo and Megatron-LM pass is_first_microbatch to Transformer
        # Engine (workloads/TRANSFORMER.md, "Float8"). No llm-foundry row among the fixtures runs.
        for case_id, recipe in (("TT-H1", "torchao"), ("NEMO-H1", "megatron-te"),
                                ("MEG-H1", "megatron-te")):
            c = self.case(case_id)
            i = c.args.index("--fp8-recipe")
            self.assertEqual(c.args[i + 1], recipe, case_id)
        rowwise = dict(self.rows["TT-H1"], precision="bf16+float8 rowwise")
        self.assertEqual(hc.fp8_recipe("TT", rowwise), "torchao-rowwise")

    def test_a_stated_power_limit_runs_the_gpu_at_it(self):
        for text, device, assumed in (
                ("H100 SXM HBM2e 96GB (Grand Teton, 500W limit)", "h100@500W", False),
                ("H100 SXM (power cap 400 W)", "h100@400W", False),
                ("H100 500 W power-capped", "h100@500W", False),
                ("A100 SXM4 80GB capped at 300W", "a100@300W", False),
                ("H100 power-limited to 450 W", "h100@450W", False),
                ("H100 (power limit of 1,000W)", "h100@1000W", False),  # dtsim refuses it
                ("H100 SXM5 (700W)", "h100", False),  # a rating, not a limit
                # a TDP is the card's rating, not a limit set on it
                ("A100 80GB, TDP 400W", "a100", False),
                # a limit without a figure: the datasheet GPU, said in the assumptions
                ("H100 SXM HBM2e 95GB (lower TDP)", "h100", True),
                ("H100 (power-capped)", "h100", True),
                ("H100 80GB HBM3", "h100", False)):
            row = dict(self.rows["TT-H1"], gpu=text)
            c = hc.make_hybrid_case(row, self.work, self.catalog)
            self.assertEqual(c.args[c.args.index("--device") + 1], device, text)
            self.assertEqual(any("power limit without a figure" in a for a in c.assumed),
                             assumed, text)

    def test_fsdp_sharding_strategies_by_name_are_zero_stages(self):
        # torch.distributed.fsdp.ShardingStrategy's documentation: FULL_SHARD = ZeRO-3 (gathers
        # before the forward and again before the backward: dtsim's default); SHARD_GRAD_OP
        # "unshards before the forward, does not reshard them after the forward, and only
        # reshards them after the backward" (ZeRO-3 with one gather per forward); NO_SHARD = DDP
        # (llm-foundry's rows name them so).
        for text, stage, unshard in (("SHARD_GRAD_OP", "3", "micro-batch"),
                                     ("FULL_SHARD", "3", None), ("NO_SHARD", "0", None),
                                     ("3 (FSDP FULL_SHARD)", "3", None)):
            row = dict(self.rows["TT-H1"], zero_stage=text)
            args = hc.make_hybrid_case(row, self.work, self.catalog).args
            self.assertEqual(args[args.index("--zero") + 1], stage, text)
            got = args[args.index("--fsdp-unshard") + 1] if "--fsdp-unshard" in args else None
            self.assertEqual(got, unshard, text)
        with self.assertRaises(hc.HybridSkip):
            hc.make_hybrid_case(dict(self.rows["TT-H1"], zero_stage="HYBRID_SHARD"), self.work,
                                self.catalog)

    def test_torchtitan_selective_phrasings_map_to_its_op_and_layer_policies(self):
        # torchtitan's "selective (op)", "selective op" and "selective (per-op SAC)" are its
        # op-level policy; its layer-level SAC recomputes every N-th block, N = 2 by default
        # (config_manager.py: selective_ac_option "2").
        row = dict(self.rows["TT-H1"])
        for phrasing in ("selective (op)", "selective op", "selective (per-op SAC)"):
            row["recompute"] = phrasing
            a = hc.make_hybrid_case(row, self.work, self.catalog).args
            self.assertEqual(a[a.index("--recompute") + 1], "selective-op", phrasing)
        row["recompute"] = "selective layer"
        case = hc.make_hybrid_case(row, self.work, self.catalog)
        self.assertEqual(case.args[case.args.index("--recompute") + 1], "full:2")
        self.assertIn(hc.TT_LAYER_SAC_NOTE, case.assumed)

    def test_pytorch_frameworks_full_recompute_stops_early(self):
        # llm-foundry's and torchtitan's checkpointing is PyTorch's non-reentrant one, whose
        # recomputation stops early; Megatron-LM's and NeMo's is their own, reentrant. Only
        # full recomputation (full, full:N) takes the flag; llm-foundry's rows state the
        # assumption about their PyTorch.
        with open(REPO / "experiments/validation/data/hybrid.csv", newline="") as f:
            shared = {r["case_id"]: r for r in csv.DictReader(f)}
        for case_id, early in (("LLMF-001", True), ("LLMF-050", False), ("TT-55", True),
                               ("TT-57", True), ("TT-56", False), ("MEG-39", False)):
            case = hc.make_hybrid_case(shared[case_id], self.work, self.catalog)
            self.assertEqual("--checkpoint-early-stop" in case.args, early, case_id)
            self.assertEqual(hc.EARLY_STOP_NOTES["LLMF"] in case.assumed,
                             early and case_id.startswith("LLMF"), case_id)
        self.assertIn("--recompute full:2",
                      " ".join(hc.make_hybrid_case(shared["TT-57"], self.work, self.catalog).args))
        self.assertIn("--recompute full",
                      " ".join(hc.make_hybrid_case(shared["MEG-39"], self.work, self.catalog).args))

    def test_a_knob_dtsim_does_not_model_is_flagged_with_the_same_command(self):
        self.assertEqual(self.case("TT-H2").args[1:], self.case("TT-H1").args[1:])
        self.assertEqual(self.case("TT-H2").flags, ["torch.compile (fused kernels)"])

    def test_torchtitan_pipeline_cuts_the_local_batch_into_pp_micro_batches(self):
        c = self.case("TT-H3")
        a = without_platform(c.args)
        # local batch 32 / pp 8 = 4; interleaved: torchtitan's 2 stages per rank, as
        # torch.distributed.pipelining runs them (interleaved-torch); 64 nodes.
        self.assertIn('{"preset": "dgx-h100", "nodes": 64}', a)
        self.assertEqual(a[a.index("--micro-batch") + 1], "4")
        self.assertEqual(a[a.index("--schedule") + 1], "interleaved-torch:2")
        self.assertIn("--sequence-parallel", a)
        self.assertEqual(a[a.index("--algorithm") + 1], "auto:ring,double-tree")
        self.assertEqual(c.kind, "tp+pp+FSDP")
        # float8 on an H100 is dtsim's fp8 (an assumption said, no flag); async TP is a flag.
        self.assertEqual(a[a.index("--precision") + 1], "fp8")
        self.assertEqual([f.split(" ")[0] for f in c.flags], ["asynchronous"])
        self.assertIn(hc.FP8_NOTE, c.assumed)

    def test_megatron_2020_row_recomputes_as_its_column_cites(self):
        c = self.case("MEG-H1")
        a = without_platform(c.args)
        self.assertEqual(a[a.index("--platform") + 1], '{"preset": "dgx2h", "nodes": 1}')
        self.assertEqual(a[a.index("--recompute") + 1], "full")
        self.assertEqual(a[a.index("--precision") + 1], "fp16")
        self.assertNotIn("--sequence-parallel", a)
        self.assertNotIn("--schedule", a)  # no pipeline
        self.assertEqual(hc.predicted_value(c, {"iteration_time_sec": 1.25}), 1.25)

    def test_megatron_tflops_are_narayanan_eq3_of_the_predicted_tokens(self):
        c = self.case("MEG-H2")
        # 96 l h^2 (1 + s/6h + V/16lh), l 24, h 1920, s 1024, V 51200:
        # 8,493,465,600 x (1 + 0.0888889 + 0.0694444) = 9.838265e9 FLOP per token.
        per_token = 96 * 24 * 1920**2 * (1 + 1024 / 11520 + 51200 / 737280)
        self.assertAlmostEqual(per_token / 9.838265e9, 1, places=6)
        self.assertAlmostEqual(hc.predicted_value(c, {"tokens_per_sec_per_gpu": 1000.0}),
                               1000 * per_token / 1e12)

    def test_sc21_script_gives_micro_batch_schedule_and_recompute_of_the_apr2021_table(self):
        a = self.case("MEG-H3").args
        # 76B: MBS 2, 5 layers per virtual stage: 60 / (4 x 5) = 3 chunks per device.
        self.assertEqual(a[a.index("--micro-batch") + 1], "2")
        self.assertEqual(a[a.index("--schedule") + 1], "interleaved:3")
        self.assertEqual(a[a.index("--recompute") + 1], "full")

    def test_jan2021_row_borrows_the_micro_batch_but_not_the_interleaving(self):
        c = self.case("MEG-H4")
        self.assertEqual(c.args[c.args.index("--micro-batch") + 1], "2")
        self.assertEqual(c.args[c.args.index("--schedule") + 1], "1f1b")
        self.assertTrue(any("jan2021" in a for a in c.assumed))

    def test_nemo_row_takes_vp_from_the_notes_and_sequence_parallelism_with_tp(self):
        c = self.case("NEMO-H1")
        a = without_platform(c.args)
        self.assertEqual(a[a.index("--parallel") + 1], "tp=4,pp=4,dp=2,cp=2")
        self.assertEqual(a[a.index("--schedule") + 1], "interleaved:5")
        self.assertEqual(a[a.index("--zero") + 1], "1")
        self.assertEqual(a[a.index("--precision") + 1], "fp8")
        self.assertIn("--sequence-parallel", a)
        # Llama 3 70B's launcher configuration overlaps TP (hybrid_cases.NEMO_TP_OVERLAP).
        self.assertIn("--tp-overlap", a)
        self.assertTrue(any(n.startswith("TP overlapped: ") for n in c.assumed))
        # NeMo runs Transformer Engine's fused attention (workloads/TRANSFORMER.md).
        self.assertEqual(a[a.index("--attention") + 1], "cudnn")
        self.assertEqual(a[a.index("--recompute") + 1], "none")
        self.assertIn("recompute not stated: none", c.assumed)
        self.assertEqual(c.flags, [])
        self.assertEqual(c.kind, "tp+pp+cp")

    def test_llm_foundry_rows_run_flashattention_1(self):
        # Its 2023 benchmark script defaulted to MPT's Triton FlashAttention (v1); one rule for
        # every row of the source, fp8 included (hybrid_cases.ATTENTION_KERNEL's sources).
        with open(REPO / "experiments/validation/data/hybrid.csv", newline="") as f:
            shared = {r["case_id"]: r for r in csv.DictReader(f)}
        for case_id, precision in (("LLMF-050", "bf16"), ("LLMF-074", "fp8")):
            a = hc.make_hybrid_case(shared[case_id], self.work, self.catalog).args
            self.assertEqual(a[a.index("--precision") + 1], precision, case_id)
            self.assertEqual(a[a.index("--attention") + 1], "flash1", case_id)

    def test_nemo_rows_run_the_attention_their_containers_transformer_engine_picked(self):
        # Before NeMo 24.05, Transformer Engine ran FlashAttention-2 first (and context
        # parallelism with it only); from then on it prefers cuDNN's on Hopper.
        with open(REPO / "experiments/validation/data/hybrid.csv", newline="") as f:
            shared = {r["case_id"]: r for r in csv.DictReader(f)}
        for case_id, container, kernel in (("NEMO-40", "NeMo 24.03.01", "flash2"),
                                           ("NEMO-11", "24.07", "cudnn")):
            self.assertIn(container, shared[case_id]["source"], case_id)
            a = hc.make_hybrid_case(shared[case_id], self.work, self.catalog).args
            self.assertEqual(a[a.index("--attention") + 1], kernel, case_id)
        unstated = {"source": "a NeMo table that names no container"}
        self.assertEqual(hc.attention_kernel("NEMO", unstated), "cudnn")
        self.assertEqual(hc.attention_kernel("NEMO", {"source": "NeMo 24.05"}), "cudnn")
        self.assertEqual(hc.attention_kernel("NEMO", {"source": "NeMo 23.11"}), "flash2")

    def test_nemo_overlaps_tp_where_its_models_configuration_does(self):
        # ub_tp_comm_overlap: True for GPT-3 175B and Llama 3 70B, false for Llama 2 70B; the
        # TP-1 rows have nothing to overlap (hybrid_cases.NEMO_TP_OVERLAP's sources).
        with open(REPO / "experiments/validation/data/hybrid.csv", newline="") as f:
            shared = {r["case_id"]: r for r in csv.DictReader(f)}
        for case_id, overlapped in (("NEMO-03", True), ("NEMO-12", True), ("NEMO-07", False),
                                    ("NEMO-01", False)):
            a = hc.make_hybrid_case(shared[case_id], self.work, self.catalog).args
            self.assertEqual("--tp-overlap" in a, overlapped, case_id)

    def test_the_2020_scaling_study_recomputes_whatever_its_row_says(self):
        # Its data-parallel rows leave recompute "not stated"; the study's scripts pass
        # --checkpoint-activations, as its model-parallel rows' column names.
        row = {"source": "github:NVIDIA/Megatron-LM images/tables.tex @52819194 (2020)",
               "recompute": "not stated"}
        mode, note = hc._recompute(row, "MEG", sc21=False)
        self.assertEqual(mode, "full")
        self.assertIn("2020 scaling study", note)
        other = dict(row, source="github:NVIDIA/Megatron-LM README.md")
        self.assertEqual(hc._recompute(other, "MEG", sc21=False)[0], "none")

    def test_nemo_tflops_are_the_reports_megatron_formula(self):
        c = self.case("NEMO-H2")
        self.assertEqual(c.formula, "megatron")
        self.assertEqual(hc.predicted_value(c, {"tflops_per_gpu_megatron": 480.0,
                                                "tflops_per_gpu": 1.0}), 480.0)
        # Four GPUs of one node: a node used in part.
        self.assertIn('{"preset": "dgx-h100", "nodes": 1}', without_platform(c.args))

    def test_each_skipped_row_says_why(self):
        expected = {
            "TT-S1": "peak memory: the memory model is another issue",
            "PDL-S1": "CNN rows (PDL): another issue",
            "NEMO-S1": "grade C: configuration incomplete: its what-if partner's configuration "
                       "is not given either, so no ratio",
            "LLMF-S1": "model not in the catalogue: nemotron-4-15b",
            "MEG-S1": "the notes' architecture is not the catalogue's: megatron-gpt-1.7b: hidden "
                      "2048 (catalogue 2304), heads 16 (catalogue 24), vocab 131072 (catalogue "
                      "51200)",
            "NEMO-S2": "LoRA fine-tuning (only adapters train; dtsim models full training)",
            "NEMO-S3": "degrees do not multiply to the GPUs: tp 2 x pp 1 x dp 2 x cp 1 != 8",
            "NEMO-S4": "no datasheet for the GPU: 'AMD Instinct MI300X'",
            "NEMO-S5": "GPUs do not fill the preset's nodes: 12 GPUs on 2 nodes of 8 (dgx-h100)",
            "MEG-S2": "micro-batch not stated",
        }
        for case_id, reason in expected.items():
            with self.subTest(case_id=case_id):
                self.assertEqual(self.skip_reason(case_id), reason)


class HybridRunner(unittest.TestCase):
    """hybrid_validate.py end to end on the small rows (dtsim runs in well under a second)."""

    @classmethod
    def setUpClass(cls):
        cls.out = pathlib.Path(tempfile.mkdtemp())
        proc = subprocess.run(
            ["/usr/bin/python3", str(HERE.parent / "hybrid_validate.py"),
             "--cases", str(HERE / "cases_hybrid_small.csv"), "--out", str(cls.out),
             "--dtsim", DTSIM, "--only", "TT-H1,TT-H2,MEG-H1,MEG-H2,NEMO-H2,TT-S1,MEG-S1"],
            capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        with open(cls.out / "hybrid_results.csv") as f:
            cls.results = {r["case_id"]: r for r in csv.DictReader(f)}
        with open(cls.out / "hybrid_skipped.csv") as f:
            cls.skipped = {r["case_id"]: r for r in csv.DictReader(f)}

    def test_every_row_is_predicted_or_skipped(self):
        self.assertEqual(set(self.results), {"TT-H1", "TT-H2", "MEG-H1", "MEG-H2", "NEMO-H2"})
        self.assertEqual(set(self.skipped), {"TT-S1", "MEG-S1"})
        self.assertEqual(self.skipped["TT-S1"]["category"],
                         "peak memory: the memory model is another issue")

    def test_flagged_rows_are_out_of_the_headline(self):
        self.assertEqual(self.results["TT-H1"]["headline"], "yes")
        self.assertEqual(self.results["TT-H2"]["headline"], "no")
        self.assertEqual(self.results["TT-H1"]["predicted"], self.results["TT-H2"]["predicted"])

    def test_iteration_and_tflops_rows_of_one_run_agree(self):
        it, tf = self.results["MEG-H1"], self.results["MEG-H2"]
        self.assertEqual(it["iteration_time_sec"], tf["iteration_time_sec"])
        # 8 sequences of 1024 tokens on one GPU, 9.838265e9 FLOP per token (Eq. 3).
        tokens_per_sec = 8 * 1024 / float(it["predicted"])
        self.assertAlmostEqual(float(tf["predicted"]) / (tokens_per_sec * 9.838265e9 / 1e12), 1,
                               places=4)

    def test_nemo_tflops_use_megatron_flops_per_token(self):
        r = self.results["NEMO-H2"]
        # 12 l h^2 ((1 + g/a + s/h) + 1.5 f/h + V/(2 l h)), llama2-7b at s = 4096:
        # 6,442,450,944 x (3 + 4.03125 + 0.1220703125) = 4.60846e10 FLOP per token.
        per_token = 12 * 32 * 4096**2 * (3 + 1.5 * 11008 / 4096 + 32000 / (2 * 32 * 4096))
        self.assertAlmostEqual(
            float(r["predicted"]) / (float(r["tokens_per_sec_per_gpu"]) * per_token / 1e12), 1,
            places=4)

    def test_summary_has_the_headline_and_skip_tables(self):
        summary = (self.out / "hybrid_summary.md").read_text()
        self.assertIn("| headline rows (nothing unmodelled) | 4 |", summary)
        self.assertIn("| TT: torch.compile (fused kernels) | 1 |", summary)
        self.assertIn("| peak memory: the memory model is another issue | 1 |", summary)


class WatchedRuns(unittest.TestCase):
    """run_watched's limit is the run's CPU time: a run that waits is not stopped by the clock,
    one that computes is."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tmp = pathlib.Path(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def fake_dtsim(self, body):
        path = self.tmp / "dtsim"
        # The runner appends "--report PATH": the last argument.
        path.write_text("#!/bin/sh\n" + body + '\nfor a; do out=$a; done; echo "{}" > "$out"\n')
        path.chmod(0o755)
        return str(path)

    def test_a_run_that_sleeps_past_the_limit_is_not_stopped(self):
        dtsim = self.fake_dtsim("sleep 1.5")  # 1.5 s of wall time, almost no CPU
        report, why, wall, _ = hv.run_watched(dtsim, [], self.tmp / "r.json", 1.0, 2**20)
        self.assertIsNone(why)
        self.assertEqual(report, {})
        self.assertGreater(wall, 1.0)

    def test_a_run_that_computes_past_the_limit_is_stopped(self):
        dtsim = self.fake_dtsim("while :; do :; done")  # CPU until killed
        report, why, _, _ = hv.run_watched(dtsim, [], self.tmp / "r.json", 0.5, 2**20)
        self.assertIsNone(report)
        self.assertTrue(why.startswith(hv.TOO_LARGE + " (over 0.5 s of CPU"), why)


if __name__ == "__main__":
    unittest.main()
