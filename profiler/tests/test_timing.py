"""Per-layer timing by the hooks method: completeness, naming, in-place ops, coverage."""

from __future__ import annotations

import unittest

from helpers import assert_coverage, profile

import torch
from torch import nn

from dtsim_profile.models import ModelBundle, ZooOptions
from dtsim_profile.profile import ProfileResult, RunConfig, profile_model
from dtsim_profile.summary import compute_totals
from dtsim_profile.timing import KIND_GLUE, KIND_LOSS, KIND_UNIT, LOSS_NAME


class HooksMethodTest(unittest.TestCase):
    """Shared checks; each subclass profiles one model once."""

    result: ProfileResult

    def check_times_are_non_negative_and_complete(self) -> None:
        iters = len(self.result.plain)
        for layer in self.result.layers:
            self.assertEqual(len(layer.forward_sec), iters, layer.name)
            self.assertTrue(all(t >= 0 for t in layer.forward_sec), layer.name)
            self.assertTrue(all(t >= 0 for t in layer.backward_sec), layer.name)
        units = [layer for layer in self.result.layers if layer.kind == KIND_UNIT]
        self.assertTrue(units)
        self.assertTrue(all(max(layer.forward_sec) > 0 for layer in units))

    @classmethod
    def measure(cls) -> ProfileResult:
        raise NotImplementedError

    def check_coverage(self) -> None:
        # The class's profile first, then fresh ones if a load spike moved it out of the window.
        runs = iter([self.result])
        assert_coverage(self, lambda: next(runs, None) or self.measure(), unit_forward=True)

    def names(self) -> list[str]:
        return [layer.name for layer in self.result.layers]

    def check_params_counted_once(self) -> None:
        indices = [i for layer in self.result.layers for i in layer.param_indices]
        self.assertEqual(sorted(indices), list(range(len(self.result.params))))
        self.assertEqual(self.result.unused_params, [])


class TinyCnnTest(HooksMethodTest):
    @classmethod
    def measure(cls) -> ProfileResult:
        return profile("tiny_cnn", batch=8, iters=7)

    @classmethod
    def setUpClass(cls) -> None:
        cls.result = cls.measure()

    def test_every_layer_has_non_negative_times(self) -> None:
        self.check_times_are_non_negative_and_complete()

    def test_layers_cover_the_plain_iteration(self) -> None:
        self.check_coverage()

    def test_reused_inplace_relu_gives_one_layer_per_call(self) -> None:
        names = self.names()
        self.assertIn("layer1.relu", names)
        self.assertIn("layer1.relu#2", names)
        self.assertLess(names.index("layer1.relu"), names.index("layer1.relu#2"))

    def test_inplace_residual_add_is_a_glue_layer_with_backward(self) -> None:
        names = self.names()
        glue = self.result.layers[names.index("layer1.(between)")]
        self.assertEqual(glue.kind, KIND_GLUE)
        self.assertLess(names.index("layer1.bn2"), names.index("layer1.(between)"))
        self.assertLess(names.index("layer1.(between)"), names.index("layer1.relu#2"))
        self.assertTrue(all(t > 0 for t in glue.backward_sec))

    def test_flatten_in_root_module_is_glue_and_loss_is_last(self) -> None:
        names = self.names()
        self.assertEqual(names[-3:], ["(between)", "fc", LOSS_NAME])
        self.assertEqual(self.result.layers[-1].kind, KIND_LOSS)

    def test_layers_are_in_forward_order(self) -> None:
        names = self.names()
        self.assertEqual(names[:3], ["conv1", "bn1", "relu"])
        self.assertLess(names.index("layer2.downsample.0"), names.index("layer2.conv1"))

    def test_each_parameter_belongs_to_exactly_one_layer(self) -> None:
        self.check_params_counted_once()


class TorchvisionResnet18Test(HooksMethodTest):
    """Batch 2 at 64x64: the real torchvision blocks (out += identity, reused relu)."""

    @classmethod
    def measure(cls) -> ProfileResult:
        return profile("resnet18", batch=2, iters=5, options=ZooOptions(input_size=64))

    @classmethod
    def setUpClass(cls) -> None:
        cls.result = cls.measure()

    def test_every_layer_has_non_negative_times(self) -> None:
        self.check_times_are_non_negative_and_complete()

    def test_layers_cover_the_plain_iteration(self) -> None:
        self.check_coverage()

    def test_inplace_residual_adds_are_glue_layers(self) -> None:
        names = self.names()
        for block in ("layer1.0", "layer1.1", "layer2.0", "layer4.1"):
            self.assertIn(f"{block}.(between)", names)
            self.assertIn(f"{block}.relu#2", names)
        # 52 leaf modules + 8 second relu calls, 8 residual adds, flatten, loss
        self.assertEqual(len(names), 70)

    def test_activation_bytes_are_the_output_sizes(self) -> None:
        # fp32, batch 2, 64x64: conv1 (stride 2) 2x64x32x32; maxpool halves to 16x16, where
        # layer1's residual sums are 2x64x16x16; flatten 2x512; fc 2x1000 logits; a scalar loss.
        by_name = {layer.name: layer.activation_bytes for layer in self.result.layers}
        self.assertEqual(by_name["conv1"], 2 * 64 * 32 * 32 * 4)
        self.assertEqual(by_name["maxpool"], 2 * 64 * 16 * 16 * 4)
        self.assertEqual(by_name["layer1.0.(between)"], 2 * 64 * 16 * 16 * 4)
        self.assertEqual(by_name["layer4.1.(between)"], 2 * 512 * 2 * 2 * 4)
        self.assertEqual(by_name["(between)"], 2 * 512 * 4)
        self.assertEqual(by_name["fc"], 2 * 1000 * 4)
        self.assertEqual(by_name[LOSS_NAME], 4)

    def test_gradient_bytes_match_torchvision(self) -> None:
        # PARAM-01 of experiments/validation/data/published.csv: 11,689,512 parameters (fp32).
        self.check_params_counted_once()
        total = sum(p.nbytes for p in self.result.params)
        self.assertEqual(total, 11_689_512 * 4)
        self.assertEqual(total, 46_758_048)


class TinyTransformerTest(HooksMethodTest):
    @classmethod
    def measure(cls) -> ProfileResult:
        return profile("tiny_transformer", batch=4, iters=7)

    @classmethod
    def setUpClass(cls) -> None:
        cls.result = cls.measure()

    def test_every_layer_has_non_negative_times(self) -> None:
        self.check_times_are_non_negative_and_complete()

    def test_layers_cover_the_plain_iteration(self) -> None:
        self.check_coverage()

    def test_attention_core_and_residual_adds_are_layers(self) -> None:
        names = self.names()
        for name in ("h.0.attn.core", "h.0.attn.(between)", "h.0.(between)", "h.0.(between)#2"):
            self.assertIn(name, names)

    def test_tied_lm_head_weight_belongs_to_the_embedding(self) -> None:
        self.check_params_counted_once()
        by_name = {layer.name: layer for layer in self.result.layers}
        self.assertEqual(by_name["lm_head"].param_indices, [])
        wte = [self.result.params[i].name for i in by_name["wte"].param_indices]
        self.assertEqual(wte, ["wte.weight"])


class TinyBertAndMlpTest(unittest.TestCase):
    def test_tiny_bert_layers_cover_the_plain_iteration(self) -> None:
        result = profile("tiny_bert", batch=4, iters=5)
        totals = compute_totals(result)
        runs = iter([result])
        assert_coverage(self, lambda: next(runs, None) or profile("tiny_bert", batch=4, iters=5))
        names = [layer.name for layer in result.layers]
        self.assertIn("layers.1.attention_output.(between)", names)
        self.assertEqual(sum(p.nbytes for p in result.params), totals.param_bytes)

    def test_mlp_layers_cover_the_plain_iteration(self) -> None:
        assert_coverage(self, lambda: profile("mlp", batch=16, iters=7))


class _ScaledLinear(nn.Module):
    """A container that owns a parameter and uses it between its child's calls."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.scale = nn.Parameter(torch.ones(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) * self.scale


def _profile_module(model: nn.Module, input_shape: tuple[int, ...] = (4,),
                    precision: str = "fp32") -> ProfileResult:
    """Two timed iterations of `model` on a batch of 2 inputs of `input_shape`."""
    def make_batch(batch: int, device: torch.device) -> tuple[torch.Tensor, None]:
        return torch.randn(batch, *input_shape, device=device), None

    def loss_fn(output: torch.Tensor, target: None) -> torch.Tensor:
        return output.float().square().mean()

    bundle = ModelBundle(model, make_batch, loss_fn, "sgd", "test module")
    config = RunConfig(torch.device("cpu"), precision, "thread_cpu", 0, 2)
    return profile_model(bundle, 2, config, "sgd")


class UnusualOwnersTest(unittest.TestCase):
    def test_root_leaf_module_is_one_unit(self) -> None:
        result = _profile_module(nn.Linear(4, 3))
        self.assertEqual([layer.name for layer in result.layers], ["(model)", LOSS_NAME])
        self.assertEqual(result.layers[0].param_indices, [0, 1])

    def test_container_parameter_belongs_to_the_glue_that_uses_it(self) -> None:
        result = _profile_module(_ScaledLinear())
        names = [layer.name for layer in result.layers]
        self.assertEqual(names, ["fc", "(between)", LOSS_NAME])
        scale = [p.index for p in result.params if p.name == "scale"]
        self.assertEqual(result.layers[1].param_indices, scale)
        self.assertEqual(result.unused_params, [])


class _LstmNet(nn.Module):
    """An nn.LSTM (a leaf module whose output is a nested tuple), then a head on its last step."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(4, 3, batch_first=True)
        self.head = nn.Linear(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


class ActivationBytesTest(unittest.TestCase):
    """Output bytes of tiny models, by hand: batch 2, elements x 4 bytes in fp32."""

    def sizes(self, result: ProfileResult) -> list[tuple[str, int | None]]:
        return [(layer.name, layer.activation_bytes) for layer in result.layers]

    def test_sequential_layers_output_their_tensors(self) -> None:
        model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 5))
        self.assertEqual(self.sizes(_profile_module(model)),
                         [("0", 2 * 3 * 4), ("1", 2 * 3 * 4), ("2", 2 * 5 * 4), (LOSS_NAME, 4)])

    def test_tuple_output_counts_every_tensor(self) -> None:
        # LSTM on 2 x 5 steps x 4 features, hidden 3: output 2x5x3 + h 1x2x3 + c 1x2x3 = 42
        # elements; the glue out[:, -1] hands on 2x3; the head 2x2.
        result = _profile_module(_LstmNet(), input_shape=(5, 4))
        self.assertEqual(self.sizes(result), [("lstm", 42 * 4), ("(between)", 2 * 3 * 4),
                                              ("head", 2 * 2 * 4), (LOSS_NAME, 4)])

    def test_glue_counts_what_it_computed(self) -> None:
        # fc(x) * scale: both 2x3.
        self.assertEqual(self.sizes(_profile_module(_ScaledLinear())),
                         [("fc", 2 * 3 * 4), ("(between)", 2 * 3 * 4), (LOSS_NAME, 4)])

    def test_autocast_outputs_count_their_own_dtype(self) -> None:
        # bf16 autocast on the CPU: the Linear layers output bf16 (2 bytes); ReLU keeps it.
        model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 5))
        sizes = self.sizes(_profile_module(model, precision="bf16"))
        self.assertEqual(sizes[:3], [("0", 2 * 3 * 2), ("1", 2 * 3 * 2), ("2", 2 * 5 * 2)])

    def test_trace_carries_them(self) -> None:
        from dtsim_profile.summary import trace_layers

        result = _profile_module(nn.Sequential(nn.Linear(4, 3), nn.ReLU()))
        self.assertEqual([layer.activation_bytes for layer in trace_layers(result)],
                         [24, 24, 4])


if __name__ == "__main__":
    unittest.main()
