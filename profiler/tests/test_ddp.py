"""DDP bookkeeping: bucket emulation against torch's own assignment and real DDP."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from helpers import profile

import torch
import torch.distributed as dist
from torch import nn

from dtsim_profile.ddp import (BUCKET_CAP_BYTES, FIRST_BUCKET_BYTES, ParamInfo, bucket_bytes,
                               emulate_buckets, param_owners, trainable_params)
from dtsim_profile.models import ZooOptions, load_model
from dtsim_profile.profile import ProfileResult, RunConfig, profile_model


def _param(index: int, nbytes: int, group: str = "float32") -> ParamInfo:
    return ParamInfo(index=index, name=f"p{index}", nbytes=nbytes, group=group)


class EmulateBucketsTest(unittest.TestCase):
    def test_first_bucket_closes_at_one_mebibyte_then_at_the_cap(self) -> None:
        mib = 1024 * 1024
        ready = [_param(3, mib // 2), _param(2, mib // 2), _param(1, 20 * mib),
                 _param(0, 6 * mib)]
        buckets = emulate_buckets(ready)
        self.assertEqual(buckets, [[3, 2], [1, 0]])
        self.assertEqual(bucket_bytes(buckets, sorted(ready, key=lambda p: p.index)),
                         [mib, 26 * mib])

    def test_a_tensor_larger_than_the_cap_is_a_bucket_of_its_own(self) -> None:
        ready = [_param(0, 100), _param(1, 2 * BUCKET_CAP_BYTES), _param(2, 100)]
        self.assertEqual(emulate_buckets(ready), [[0, 1], [2]])

    def test_groups_of_different_dtypes_never_share_a_bucket(self) -> None:
        ready = [_param(0, 10, "float32"), _param(1, 10, "float16"), _param(2, 10, "float32")]
        self.assertEqual(emulate_buckets(ready), [[0, 2], [1]])


class MatchesTorchAssignmentTest(unittest.TestCase):
    """The emulation equals torch.distributed._compute_bucket_assignment_by_size fed with
    the gradient-ready order the profiler measured (what DDP does after iteration 1)."""

    def check_model(self, result: ProfileResult, model: nn.Module) -> list[list[int]]:
        params = [p for _, p in trainable_params(model)]
        ready = result.ready_order
        self.assertEqual(sorted(ready), list(range(len(params))))
        expected, _ = dist._compute_bucket_assignment_by_size(
            [params[i] for i in ready], [FIRST_BUCKET_BYTES, BUCKET_CAP_BYTES],
            [False] * len(ready), ready)
        ours = emulate_buckets([result.params[i] for i in ready])
        self.assertEqual(ours, expected)
        return ours

    def profile_and_check(self, name: str, batch: int,
                          options: ZooOptions = ZooOptions()) -> list[list[int]]:
        bundle = load_model(name, options)
        torch.manual_seed(0)
        result = profile_model(bundle, batch,
                               RunConfig(torch.device("cpu"), "fp32", "thread_cpu", 0, 1),
                               bundle.optimizer)
        return self.check_model(result, bundle.model)

    def test_resnet18(self) -> None:
        self.profile_and_check("resnet18", 2, ZooOptions(input_size=64))

    def test_tiny_cnn(self) -> None:
        self.profile_and_check("tiny_cnn", 4)

    def test_mlp_has_several_buckets(self) -> None:
        self.assertGreater(len(self.profile_and_check("mlp", 4)), 1)

    def test_tiny_transformer_with_tied_weights(self) -> None:
        self.profile_and_check("tiny_transformer", 2)


class ParamOwnersTest(unittest.TestCase):
    def test_tied_weight_belongs_to_the_first_registering_module(self) -> None:
        model = load_model("tiny_transformer", ZooOptions()).model
        params = [p for _, p in trainable_params(model)]
        owners = param_owners(model, params)
        wte = params.index(model.wte.weight)
        self.assertIs(model.lm_head.weight, model.wte.weight)
        self.assertEqual(sum(p is model.wte.weight for p in params), 1)
        self.assertIs(owners[wte], model.wte)

    def test_gradient_bytes_are_numel_times_element_size(self) -> None:
        model = nn.Sequential(nn.Linear(3, 5), nn.Linear(5, 2).to(torch.float64))
        infos = [info for info, _ in trainable_params(model)]
        self.assertEqual([info.nbytes for info in infos], [60, 20, 80, 16])


@unittest.skipUnless(dist.is_available() and dist.is_gloo_available(), "needs gloo")
class RealDdpTest(unittest.TestCase):
    """One-process gloo DDP reports the buckets it rebuilt after iteration 1."""

    def test_resnet18_buckets_equal_ddp_rebuilt_buckets(self) -> None:
        result = profile("resnet18", batch=2, iters=1, warmup=0, options=ZooOptions(input_size=64))
        ours = emulate_buckets([result.params[i] for i in result.ready_order])
        torch.manual_seed(0)
        bundle = load_model("resnet18", ZooOptions(input_size=64))
        with tempfile.TemporaryDirectory() as tmp:
            init = (Path(tmp) / "rendezvous").as_uri()
            dist.init_process_group("gloo", init_method=init, rank=0, world_size=1)
            try:
                ddp = nn.parallel.DistributedDataParallel(bundle.model)
                inputs, target = bundle.make_batch(2, torch.device("cpu"))
                for _ in range(3):
                    ddp.zero_grad(set_to_none=True)
                    bundle.loss_fn(ddp(inputs), target).backward()
                logged = ddp._get_ddp_logging_data()
            finally:
                dist.destroy_process_group()
        sizes = [int(s) for s in logged["rebuilt_bucket_sizes"].split(",")]
        self.assertEqual(bucket_bytes(ours, result.params), sizes)
        self.assertEqual(sizes, [2_052_000, 28_852_224, 15_853_824])  # profiler/README.md
        indices = [[int(i) for i in bucket.split()]
                   for bucket in logged["rebuilt_per_bucket_param_indices"].split(",")]
        self.assertEqual(ours, indices)


if __name__ == "__main__":
    unittest.main()
