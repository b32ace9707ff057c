"""Trace writer: format version 3, key order, checks, and dtsim reading what we write."""

from __future__ import annotations

import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from helpers import DTSIM, REPO_ROOT, STAR_PLATFORM

from dtsim_profile.trace import (Measurement, Trace, TraceCheckError, TraceLayer, check_document,
                                 dumps, trace_to_dict, write_trace)


def _trace(**changes: object) -> Trace:
    fields = dict(
        model="tiny",
        device="test-device",
        precision="fp32",
        batch_per_device=8,
        source="test data",
        optimizer_sec=0.0005,
        layers=[TraceLayer("fc1", 0.001, 0.002, 4000, 0.0001, 0.0002, activation_bytes=32),
                TraceLayer("relu", 0.0001, 0.0001, 0),
                TraceLayer("fc2", 0.003, 0.006, 2_000_000, 0.0, 0.0)],
        measurement=Measurement("dtsim_profile 0.1", "torch 1.13.0", "thread_cpu", 1, 3,
                                "2025-01-02", "test host"),
    )
    fields.update(changes)
    return Trace(**fields)  # type: ignore[arg-type]


class TraceDocumentTest(unittest.TestCase):
    def test_keys_follow_format_md_order(self) -> None:
        doc = trace_to_dict(_trace())
        self.assertEqual(list(doc), ["format_version", "model", "device", "precision",
                                     "batch_per_device", "source", "optimizer_sec", "layers",
                                     "measurement"])
        self.assertEqual(doc["format_version"], 3)
        self.assertEqual(list(doc["layers"][0]), ["name", "forward_sec", "backward_sec",
                                                  "param_bytes", "forward_iqr_sec",
                                                  "backward_iqr_sec", "activation_bytes"])
        self.assertEqual(list(doc["layers"][1]), ["name", "forward_sec", "backward_sec",
                                                  "param_bytes"])
        self.assertEqual(list(doc["measurement"]), ["tool", "framework", "clock",
                                                    "warmup_iterations", "timed_iterations",
                                                    "date", "host"])

    def test_valid_trace_has_no_problems(self) -> None:
        self.assertEqual(check_document(trace_to_dict(_trace())), [])

    def test_checks_report_every_problem_with_its_pointer(self) -> None:
        doc = trace_to_dict(_trace())
        doc["layers"][2]["name"] = "fc1"
        doc["layers"][1]["forward_sec"] = -1
        doc["batch_per_device"] = 0
        doc["measurement"]["clock"] = "sundial"
        doc["comment"] = "x"
        self.assertEqual(check_document(doc), [
            "/comment: unknown key",
            "/batch_per_device: expected an integer between 1 and 2147483647",
            "/layers/1/forward_sec: expected a finite number >= 0",
            '/layers/2/name: "fc1" already names /layers/0',
            "/measurement/clock: expected one of cuda_events, thread_cpu, wall",
        ])

    def test_version_1_must_not_carry_version_2_keys(self) -> None:
        doc = trace_to_dict(_trace())
        doc["format_version"] = 1
        del doc["layers"][0]["activation_bytes"]
        self.assertEqual(check_document(doc), [
            "/layers/0/forward_iqr_sec: needs format_version 2",
            "/layers/0/backward_iqr_sec: needs format_version 2",
            "/layers/2/forward_iqr_sec: needs format_version 2",
            "/layers/2/backward_iqr_sec: needs format_version 2",
            "/measurement: needs format_version 2",
        ])

    def test_versions_before_3_must_not_carry_activation_bytes(self) -> None:
        doc = trace_to_dict(_trace())
        doc["format_version"] = 2
        self.assertEqual(check_document(doc),
                         ["/layers/0/activation_bytes: needs format_version 3"])

    def test_activation_bytes_are_integers_up_to_1_pib(self) -> None:
        doc = trace_to_dict(_trace())
        doc["layers"][0]["activation_bytes"] = 2**50
        self.assertEqual(check_document(doc), [])
        for bad in (2**50 + 1, -1, 1.5, "8"):
            doc["layers"][0]["activation_bytes"] = bad
            self.assertEqual(check_document(doc), [
                "/layers/0/activation_bytes: expected an integer between 0 and 2^50"], bad)

    def test_integers_stay_integer_literals(self) -> None:
        text = dumps(trace_to_dict(_trace()))
        self.assertIn('"param_bytes": 2000000,', text)
        self.assertIn('"batch_per_device": 8,', text)
        self.assertTrue(text.endswith("}\n"))


class WriteTraceTest(unittest.TestCase):
    def test_writing_twice_gives_identical_bytes(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            first, second = Path(tmp) / "a.json", Path(tmp) / "b.json"
            write_trace(_trace(), first)
            write_trace(_trace(), second)
            self.assertEqual(first.read_bytes(), second.read_bytes())
            self.assertEqual(json.loads(first.read_text()), trace_to_dict(_trace()))

    def test_invalid_trace_is_not_written(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bad.json"
            bad = _trace(layers=[TraceLayer("a", 1.0, 1.0, 0), TraceLayer("a", 1.0, 1.0, 0)])
            with self.assertRaises(TraceCheckError) as raised:
                write_trace(bad, path)
            self.assertIn('/layers/1/name: "a" already names /layers/0', str(raised.exception))
            self.assertFalse(path.exists())


@unittest.skipUnless(DTSIM.is_file(), "build/sim/dtsim not built")
class DtsimReadsTraceTest(unittest.TestCase):
    def test_dtsim_simulates_a_written_trace(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "t.json"
            write_trace(_trace(), path)
            run = subprocess.run([str(DTSIM), "simulate", "--workload", str(path), "--platform",
                                  str(STAR_PLATFORM), "--ranks", "2"],
                                 cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 0, run.stderr)


if __name__ == "__main__":
    unittest.main()
