"""Gradient bookkeeping for data-parallel training: parameters, their owners, and the
gradient buckets PyTorch DDP would build.

Parameter indices follow DDP's order: ``model.named_parameters()`` with ``requires_grad``,
each parameter once (a tied weight appears under its first name only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from torch import nn

FIRST_BUCKET_BYTES = 1024 * 1024  # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES
BUCKET_CAP_BYTES = 25 * 1024 * 1024  # DistributedDataParallel(bucket_cap_mb=25)


@dataclass(frozen=True)
class ParamInfo:
    """One trainable parameter: DDP index, name, gradient bytes and bucket group."""

    index: int
    name: str
    nbytes: int  # numel x element size of the parameter dtype = its gradient's bytes
    group: str  # dtype and device: DDP never mixes groups in one bucket


def trainable_params(model: nn.Module) -> list[tuple[ParamInfo, nn.Parameter]]:
    """Returns the trainable parameters in DDP index order, with their descriptions."""
    result = []
    for name, param in model.named_parameters():
        if param.requires_grad:
            info = ParamInfo(
                index=len(result),
                name=name,
                nbytes=param.numel() * param.element_size(),
                group=f"{param.dtype}@{param.device}",
            )
            result.append((info, param))
    return result


def param_owners(model: nn.Module, params: Sequence[nn.Parameter]) -> dict[int, nn.Module]:
    """Maps each parameter index to the first module (in ``named_modules()`` order) that
    registers it directly; for tied weights, the first of the modules sharing it."""
    index_of = {id(p): i for i, p in enumerate(params)}
    owners: dict[int, nn.Module] = {}
    for module in model.modules():
        for param in module.parameters(recurse=False):
            index = index_of.get(id(param))
            if index is not None:
                owners.setdefault(index, module)
    return owners


def emulate_buckets(
    ready: Sequence[ParamInfo],
    first_bucket_bytes: int = FIRST_BUCKET_BYTES,
    cap_bytes: int = BUCKET_CAP_BYTES,
) -> list[list[int]]:
    """Returns DDP's rebuilt buckets (lists of parameter indices) for parameters whose
    gradients became ready in the order `ready`.

    Mirrors ``compute_bucket_assignment_by_size`` of torch's reducer: parameters are added
    to the open bucket of their dtype/device group in `ready` order; a bucket closes as soon
    as its size reaches its limit, which is `first_bucket_bytes` for a group's first bucket
    and `cap_bytes` after. Buckets still open at the end close last.
    """
    limits = [first_bucket_bytes, cap_bytes]
    open_buckets: dict[str, tuple[list[int], int, int]] = {}  # group -> indices, bytes, limit#
    closed: list[list[int]] = []
    for param in ready:
        indices, size, limit = open_buckets.get(param.group, ([], 0, 0))
        indices.append(param.index)
        size += param.nbytes
        if size >= limits[limit]:
            closed.append(indices)
            open_buckets[param.group] = ([], 0, min(limit + 1, len(limits) - 1))
        else:
            open_buckets[param.group] = (indices, size, limit)
    closed.extend(indices for indices, _, _ in open_buckets.values() if indices)
    return closed


def bucket_bytes(buckets: Sequence[Sequence[int]], params: Sequence[ParamInfo]) -> list[int]:
    """Returns the size in bytes of each bucket."""
    return [sum(params[i].nbytes for i in bucket) for bucket in buckets]
