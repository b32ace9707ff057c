"""Models of the local-ddp experiment that the profiler's zoo does not have.

`wide_mlp` is a user factory in the profiler's sense (profiler/README.md, "Your own model"):
``profiler/dtsim-profile --model local_models:wide_mlp`` with this folder on PYTHONPATH.
It is the communication-heavy case of profiler/README.md, "Reference measurements":
8 x (Linear(2048, 2048) + ReLU) + Linear(2048, 10), 33,591,306 parameters = 134,365,224 gradient
bytes, whose DDP buckets (1 MiB first, 25 MiB cap) are 16,867,368 / 3 x 33,570,816 / 16,785,408
bytes.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

WIDTH, DEPTH, CLASSES = 2048, 8, 10


def wide_mlp() -> tuple[nn.Module, Any, Any]:
    """(model, example_input_fn, loss_fn): random features (batch, 2048), 10 random classes,
    cross-entropy. The profiler and ddp_bench.py give it SGD(momentum 0.9), as for CNNs."""
    layers: list[nn.Module] = []
    for _ in range(DEPTH):
        layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(WIDTH, CLASSES))

    def make_batch(batch: int, device: torch.device) -> tuple[Any, Any]:
        return (torch.randn(batch, WIDTH, device=device),
                torch.randint(0, CLASSES, (batch,), device=device))

    return model, make_batch, F.cross_entropy
