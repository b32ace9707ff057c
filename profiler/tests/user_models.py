"""User model factories for the --model pkg.module:function tests."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F


def regression_mlp() -> tuple[nn.Module, Any, Any]:
    """A (model, example_input_fn, loss_fn) factory: 2-layer MLP, mean-squared error."""
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))

    def example_input_fn(batch: int, device: torch.device) -> tuple[Any, Any]:
        return torch.randn(batch, 16, device=device), torch.randn(batch, 4, device=device)

    def loss_fn(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(output, target)

    return model, example_input_fn, loss_fn


def bare_classifier() -> nn.Module:
    """A factory returning only a module: an image classifier with 7 classes."""
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(4, 7))


def not_a_model() -> int:
    """A factory returning something else."""
    return 42


def wrong_input_signature() -> tuple[nn.Module, Any, Any]:
    """A factory whose example_input_fn takes no device (it is called as fn(batch, device))."""
    model = nn.Linear(16, 4)

    def example_input_fn(batch: int) -> tuple[Any, Any]:
        return torch.randn(batch, 16), torch.randn(batch, 4)

    return model, example_input_fn, F.mse_loss

