"""Model zoo and user models: what to train, on which batch, with which loss.

Every zoo model is built with random weights (``weights=None``); nothing is downloaded.
Batches are random data made once and reused every iteration; losses are cross-entropy on
random labels.

A user model is named ``pkg.module:function``. The module must be importable (on
PYTHONPATH or in the current directory) and the function is called without arguments. It
returns either

* an ``nn.Module``, taken to be an image classifier: input a float tensor
  ``(batch, 3, S, S)`` with S = ``--input-size`` (default 224), output logits
  ``(batch, classes)``; loss = cross-entropy on random labels; or
* a tuple ``(model, example_input_fn, loss_fn)``: ``example_input_fn(batch_size, device)``
  returns ``(inputs, target)`` where `inputs` is a tensor or a tuple of tensors passed
  positionally to the model, and ``loss_fn(output, target)`` returns the scalar loss.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import nn
from torch.nn import functional as F

from .transformers import Bert, BertConfig, Gpt2, GptConfig

MakeBatch = Callable[[int, torch.device], tuple[Any, Any]]
LossFn = Callable[[Any, Any], torch.Tensor]


class ProfileError(Exception):
    """Bad user input (unknown model, unsupported precision, ...): exit code 2."""


@dataclass
class ModelBundle:
    """A model ready to profile."""

    model: nn.Module
    make_batch: MakeBatch
    loss_fn: LossFn
    optimizer: str  # "sgd" (SGD with momentum) or "adamw"
    input_desc: str  # for the trace's source text, e.g. "3x224x224 images, 1000 classes"


@dataclass(frozen=True)
class ZooOptions:
    """Command-line shape options; None means the model's default."""

    input_size: int | None = None
    seq_len: int | None = None


def image_batch(size: int, classes: int) -> MakeBatch:
    """Random images ``(batch, 3, size, size)`` and labels in ``[0, classes)``."""

    def make(batch: int, device: torch.device) -> tuple[Any, Any]:
        images = torch.randn(batch, 3, size, size, device=device)
        labels = torch.randint(0, classes, (batch,), device=device)
        return images, labels

    return make


def classification_loss(output: Any, target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of logits; for a (logits, aux_logits) pair such as Inception v3's in
    training, ``CE(logits) + 0.4 * CE(aux_logits)`` as in torchvision's reference recipe."""
    if isinstance(output, tuple):
        logits, aux = output[0], output[1]
        return F.cross_entropy(logits, target) + 0.4 * F.cross_entropy(aux, target)
    return F.cross_entropy(output, target)


# ---- CNNs ------------------------------------------------------------------------------


def _torchvision(name: str, default_size: int,
                 **kwargs: Any) -> Callable[[ZooOptions], ModelBundle]:
    def build(options: ZooOptions) -> ModelBundle:
        import torchvision

        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        size = options.input_size or default_size
        return ModelBundle(model, image_batch(size, 1000), classification_loss, "sgd",
                           f"torchvision {name}, {size}x{size} images, 1000 classes")

    return build


class TinyBlock(nn.Module):
    """A torchvision-BasicBlock-like block: one in-place ReLU module called twice and an
    in-place residual add (``out += identity``)."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample: nn.Module | None = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class TinyCnn(nn.Module):
    """A small ResNet-like CNN for tests (32x32 images, 10 classes)."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = TinyBlock(16, 16, 1)
        self.layer2 = TinyBlock(16, 32, 2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layer2(self.layer1(self.relu(self.bn1(self.conv1(x)))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def _tiny_cnn(options: ZooOptions) -> ModelBundle:
    size = options.input_size or 32
    return ModelBundle(TinyCnn(), image_batch(size, 10), classification_loss, "sgd",
                       f"tiny ResNet-like CNN, {size}x{size} images, 10 classes")


def _mlp(options: ZooOptions) -> ModelBundle:
    width, depth, classes = 1024, 4, 10
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(width, classes))

    def make(batch: int, device: torch.device) -> tuple[Any, Any]:
        return (torch.randn(batch, width, device=device),
                torch.randint(0, classes, (batch,), device=device))

    return ModelBundle(model, make, classification_loss, "sgd",
                       f"MLP {depth}x Linear({width},{width})+ReLU, {classes} classes")


# ---- transformers ------------------------------------------------------------------------


def _check_seq(seq: int, limit: int, name: str) -> int:
    if not 1 <= seq <= limit:
        raise ProfileError(f"--seq-len {seq}: {name} takes 1 to {limit} tokens")
    return seq


def _bert(config: BertConfig, default_seq: int, label: str) -> Callable[[ZooOptions], ModelBundle]:
    def build(options: ZooOptions) -> ModelBundle:
        seq = _check_seq(options.seq_len or default_seq, config.max_positions, label)

        def make(batch: int, device: torch.device) -> tuple[Any, Any]:
            tokens = torch.randint(0, config.vocab, (batch, seq), device=device)
            mlm = torch.randint(0, config.vocab, (batch, seq), device=device)
            nsp = torch.randint(0, 2, (batch,), device=device)
            return tokens, (mlm, nsp)

        return ModelBundle(Bert(config), make, bert_loss, "adamw",
                           f"{label} ({config.layers} layers, hidden {config.hidden}, "
                           f"{config.heads} heads, FFN {config.ffn}, vocab {config.vocab}), "
                           f"seq {seq}, MLM loss on all tokens + NSP loss")

    return build


def bert_loss(output: tuple[torch.Tensor, torch.Tensor], target: Any) -> torch.Tensor:
    """Pre-training loss: masked-LM cross-entropy over every token (real pre-training
    predicts ~15 % of them; this costs the MLM head more) + next-sentence cross-entropy."""
    mlm_logits, nsp_logits = output
    mlm_labels, nsp_labels = target
    mlm = F.cross_entropy(mlm_logits.reshape(-1, mlm_logits.shape[-1]), mlm_labels.reshape(-1))
    return mlm + F.cross_entropy(nsp_logits, nsp_labels)


def _gpt(config: GptConfig, default_seq: int, label: str) -> Callable[[ZooOptions], ModelBundle]:
    def build(options: ZooOptions) -> ModelBundle:
        seq = _check_seq(options.seq_len or default_seq, config.max_positions, label)

        def make(batch: int, device: torch.device) -> tuple[Any, Any]:
            tokens = torch.randint(0, config.vocab, (batch, seq), device=device)
            return tokens, torch.randint(0, config.vocab, (batch, seq), device=device)

        return ModelBundle(Gpt2(config), make, lm_loss, "adamw",
                           f"{label} ({config.layers} layers, hidden {config.hidden}, "
                           f"{config.heads} heads, vocab {config.vocab}, tied lm_head), "
                           f"seq {seq}, next-token loss on random labels")

    return build


def lm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Language-model cross-entropy over every position."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


TINY_BERT = BertConfig(layers=2, hidden=64, heads=4, ffn=256, vocab=1000, max_positions=64)
TINY_GPT = GptConfig(layers=2, hidden=64, heads=4, vocab=1000, max_positions=64)

ZOO: dict[str, Callable[[ZooOptions], ModelBundle]] = {
    "resnet18": _torchvision("resnet18", 224),
    "resnet50": _torchvision("resnet50", 224),
    "resnet101": _torchvision("resnet101", 224),
    "vgg16": _torchvision("vgg16", 224),
    "inception_v3": _torchvision("inception_v3", 299, aux_logits=True, init_weights=True),
    "bert_large": _bert(BertConfig(), 128, "BERT-large-like encoder"),
    "gpt2": _gpt(GptConfig(), 1024, "GPT-2-small-like decoder"),
    "tiny_cnn": _tiny_cnn,
    "mlp": _mlp,
    "tiny_bert": _bert(TINY_BERT, 32, "tiny BERT-like encoder"),
    "tiny_transformer": _gpt(TINY_GPT, 32, "tiny GPT-like decoder"),
}


# ---- user models -------------------------------------------------------------------------


def load_model(spec: str, options: ZooOptions) -> ModelBundle:
    """Returns the zoo model `spec`, or the user model ``pkg.module:function``.
    Raises ProfileError with a message naming the problem."""
    if ":" not in spec:
        if spec not in ZOO:
            raise ProfileError(f"--model {spec}: unknown model (zoo: {', '.join(ZOO)}; "
                               "or a factory as pkg.module:function)")
        return ZOO[spec](options)
    return _load_user_model(spec, options)


def _load_user_model(spec: str, options: ZooOptions) -> ModelBundle:
    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name:
        raise ProfileError(f"--model {spec}: expected pkg.module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ProfileError(f"--model {spec}: cannot import module '{module_name}': {error}")
    factory = getattr(module, function_name, None)
    if not callable(factory):
        raise ProfileError(f"--model {spec}: module '{module_name}' has no function "
                           f"'{function_name}'")
    try:
        made = factory()
    except Exception as error:  # the user's code failed: report it as bad input
        raise ProfileError(f"--model {spec}: the factory raised {type(error).__name__}: {error}")
    if isinstance(made, nn.Module):
        size = options.input_size or 224
        return _bare_classifier(made, size)
    if (isinstance(made, tuple) and len(made) == 3 and isinstance(made[0], nn.Module)
            and callable(made[1]) and callable(made[2])):
        _check_arguments(spec, "example_input_fn", made[1], "(batch, device)")
        _check_arguments(spec, "loss_fn", made[2], "(output, target)")
        return ModelBundle(made[0], made[1], made[2], "sgd", f"user model {spec}")
    raise ProfileError(f"--model {spec}: the factory must return an nn.Module or a tuple "
                       f"(model, example_input_fn, loss_fn), got {type(made).__name__}")


def _check_arguments(spec: str, name: str, function: Any, arguments: str) -> None:
    """Raises ProfileError unless `function` can be called with the two arguments named in
    `arguments`: a wrong signature failed deep inside the profiler with a traceback."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin without a signature: let the call decide
        return
    try:
        signature.bind(None, None)
    except TypeError as error:
        raise ProfileError(f"--model {spec}: {name} is called as {name}{arguments}, but its "
                           f"signature is {name}{signature}: {error}") from None


def _bare_classifier(model: nn.Module, size: int) -> ModelBundle:
    """A user module taken as an image classifier; the class count is read from one
    probing forward pass (eval mode, no gradients, on the model's current device)."""
    try:
        device = next(model.parameters()).device
    except StopIteration:
        device = torch.device("cpu")
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits = model(torch.randn(2, 3, size, size, device=device))
    except Exception as error:  # the model's own error: say what we tried
        raise ProfileError(f"user model: a forward pass on a (2, 3, {size}, {size}) image "
                           f"batch failed ({error}); return (model, example_input_fn, "
                           "loss_fn) to describe its input")
    finally:
        model.train(was_training)
    if not isinstance(logits, torch.Tensor) or logits.dim() != 2:
        raise ProfileError("user model: expected logits (batch, classes) for an image batch; "
                           "return (model, example_input_fn, loss_fn) instead")
    classes = logits.shape[1]
    return ModelBundle(model, image_batch(size, classes), classification_loss, "sgd",
                       f"user model, {size}x{size} images, {classes} classes")
