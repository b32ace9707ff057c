"""Model zoo: parameter counts of the large models, shapes, precision checks."""

from __future__ import annotations

import unittest
import warnings

from helpers import profile

import torch

from dtsim_profile.models import ProfileError, ZooOptions, classification_loss, load_model
from dtsim_profile.profile import RunConfig, check_precision, profile_model


def _count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())  # parameters() yields tied ones once


class ZooTest(unittest.TestCase):
    def test_bert_large_has_bert_large_pretraining_parameter_count(self) -> None:
        # BertModel with pooler 335,141,888 + MLM transform/bias and NSP heads 1,084,220
        # (decoder weight tied to the word embeddings), as workloads/traces/README.md says.
        self.assertEqual(_count(load_model("bert_large", ZooOptions()).model), 336_226_108)

    def test_gpt2_has_gpt2_small_parameter_count(self) -> None:
        self.assertEqual(_count(load_model("gpt2", ZooOptions()).model), 124_439_808)

    def test_batches_have_the_requested_shapes(self) -> None:
        cpu = torch.device("cpu")
        images, labels = load_model("tiny_cnn", ZooOptions(input_size=20)).make_batch(3, cpu)
        self.assertEqual(tuple(images.shape), (3, 3, 20, 20))
        self.assertEqual(tuple(labels.shape), (3,))
        tokens, _ = load_model("tiny_bert", ZooOptions(seq_len=16)).make_batch(2, cpu)
        self.assertEqual(tuple(tokens.shape), (2, 16))

    def test_sequence_longer_than_positions_is_refused(self) -> None:
        with self.assertRaisesRegex(ProfileError, "--seq-len 65: tiny GPT-like decoder takes "
                                                  "1 to 64 tokens"):
            load_model("tiny_transformer", ZooOptions(seq_len=65))

    def test_bf16_autocast_on_cpu_profiles(self) -> None:
        check_precision(torch.device("cpu"), "bf16")
        bundle = load_model("tiny_transformer", ZooOptions(seq_len=8))
        result = profile_model(bundle, 2, RunConfig(torch.device("cpu"), "bf16", "thread_cpu",
                                                    0, 1), "adamw")
        self.assertTrue(all(p.nbytes % 4 == 0 for p in result.params))  # fp32 gradients
        self.assertIn("bf16 autocast", result.precision_desc)

    def test_fp16_autocast_on_cpu_is_refused_when_torch_lacks_it(self) -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with torch.autocast(device_type="cpu", dtype=torch.float16):
                    supported = (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float16
        except RuntimeError:
            supported = False
        if supported:
            self.skipTest("this torch supports fp16 autocast on the CPU")
        with self.assertRaisesRegex(ProfileError, "--precision fp16: torch .* does not support "
                                                  "fp16 autocast on cpu"):
            check_precision(torch.device("cpu"), "fp16")


class LossAndHeadsTest(unittest.TestCase):
    def test_inception_style_tuple_output_is_handled_by_the_loss(self) -> None:
        logits = torch.zeros(2, 5, requires_grad=True)
        aux = torch.zeros(2, 5, requires_grad=True)
        target = torch.tensor([0, 1])
        loss = classification_loss((logits, aux), target)
        self.assertAlmostEqual(loss.item(), 1.4 * torch.log(torch.tensor(5.0)).item(), places=5)

    def test_bert_like_model_profiles_with_its_two_heads(self) -> None:
        result = profile("tiny_bert", batch=2, iters=1, warmup=0)
        names = [layer.name for layer in result.layers]
        self.assertEqual(names[-5:], ["pooler.(between)", "pooler.dense", "pooler.activation",
                                      "nsp", "(loss)"])
        self.assertIn("mlm.decoder", names)


if __name__ == "__main__":
    unittest.main()
