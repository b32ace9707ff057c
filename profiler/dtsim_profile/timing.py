"""Per-layer forward and backward times by the "hooks" method.

Layers, in forward order, are of three kinds:

* **unit**: one call of a leaf module (a module without child modules). Every leaf module
  that is called is a unit, with or without parameters (conv, bn, relu, dropout, ...). A
  leaf called k times per iteration (torchvision's ResNet blocks reuse one ``relu``) gives
  k layers, named ``<module path>``, ``<module path>#2``, ... ``#k``.
* **glue**: the autograd operations run *between* unit calls inside one container module
  (residual adds, ``torch.flatten``, attention reshapes): one layer per stretch between two
  module-hook events that created autograd nodes, named ``<container path>.(between)``
  (``(between)`` for the root module), with ``#2``, ``#3`` ... for later stretches in the
  same container. Stretches that create no autograd node do no differentiable work and are
  not layers; their time shows up as missing coverage.
* **loss**: ``(loss)``, everything from the end of the model's forward to the loss.

Forward time of a layer: between module pre/post hooks (units) or between the two hook
events around the stretch (glue, loss). Backward time: the sum, over every autograd node
created during that layer's forward, of the time from the node's pre-hook to its post-hook
(``Node.register_prehook``/``Node.register_hook``, torch >= 1.13), plus the
``AccumulateGrad`` nodes of the parameters the layer owns (a post-hook's mark is a
``clock.mark_end()``: the kernel clock also gives the node the work the autograd engine
launches right after it). Nodes are found at each hook
event by walking back from the tensors at hand (inputs at a pre-hook, outputs at a
post-hook) through ``next_functions`` until reaching nodes already tagged: a node belongs
to the layer whose event first reaches it. ``register_full_backward_hook`` is never used
(it breaks on in-place residual adds).

Output bytes of a layer (the trace's ``activation_bytes``): Σ numel × element size over the
tensors it hands on, each tensor object once: a unit's forward output (a tensor, or the tensors
in a tuple/list/dict), a glue stretch's tensors at the closing hook event whose autograd node
the stretch created, the loss tensor for ``(loss)``. Sizes are read after the layer's end mark,
outside every timed window.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Iterator

import torch
from torch import nn

from .clocks import Clock, Mark

KIND_UNIT = "unit"
KIND_GLUE = "glue"
KIND_LOSS = "loss"
LOSS_NAME = "(loss)"
_TAG = "dtsim_profile"  # key of our tag in Node.metadata


@dataclass(frozen=True)
class Segment:
    """One trace layer as seen in one iteration."""

    name: str
    kind: str  # KIND_UNIT, KIND_GLUE or KIND_LOSS


@dataclass
class IterationRecord:
    """What one hooked iteration measured. Lists are indexed like `segments`."""

    segments: list[Segment]
    forward_sec: list[float]
    backward_sec: list[float]
    ready_order: list[int]  # parameter indices in the order their gradients were ready
    param_segment: dict[int, int]  # parameter index -> owning segment (absent: unused)
    output_bytes: list[int]  # bytes of the tensors each segment hands on (module docstring)


def iter_tensors(obj: Any) -> Iterator[torch.Tensor]:
    """Yields the tensors in a (possibly nested) tuple/list/dict/namedtuple."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from iter_tensors(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from iter_tensors(item)


def tensor_bytes(tensors: Any) -> int:
    """Σ numel × element size over the distinct tensors in `tensors` (see iter_tensors)."""
    distinct = {id(t): t for t in iter_tensors(tensors)}
    return sum(t.numel() * t.element_size() for t in distinct.values())


def _is_accumulator(node: Any) -> bool:
    return node.name().endswith("AccumulateGrad")


@dataclass
class _IterationState:
    """Mutable bookkeeping of the iteration in progress."""

    number: int
    gap_start: Mark
    segments: list[Segment] = field(default_factory=list)
    forward: list[tuple[int, Mark, Mark]] = field(default_factory=list)
    backward: list[tuple[int, Mark, Mark]] = field(default_factory=list)
    accumulate: list[tuple[int, Mark, Mark]] = field(default_factory=list)
    calls: dict[int, int] = field(default_factory=dict)  # id(module) -> calls so far
    first_call: dict[int, int] = field(default_factory=dict)  # id(module) -> segment
    glue_names: dict[str, int] = field(default_factory=dict)
    consumer: dict[int, int] = field(default_factory=dict)  # param index -> first segment
    output_bytes: dict[int, int] = field(default_factory=dict)  # segment -> bytes handed on
    stack: list[str] = field(default_factory=list)  # active container paths
    open_unit: tuple[nn.Module, Mark] | None = None


class LayerRecorder:
    """Records per-layer times of hooked iterations of one model.

    Usage, per iteration::

        with recorder.attached():
            recorder.begin_forward()
            loss = loss_fn(model(x), y)
            recorder.end_forward(loss)
            loss.backward()
        clock.sync()
        record = recorder.finish()

    `params` are the model's trainable parameters in DDP's index order; `owners[i]` is the
    module that registers parameter i (see ddp.param_owners). A parameter belongs to its
    owner's first call; if the owner is not a unit (a container) or is never called, to the
    first layer whose autograd graph uses it.
    """

    def __init__(
        self,
        model: nn.Module,
        clock: Clock,
        params: list[nn.Parameter],
        owners: dict[int, nn.Module],
    ) -> None:
        self._model = model
        self._clock = clock
        self._params = params
        self._owners = owners
        self._param_index = {id(p): i for i, p in enumerate(params)}
        self._labels = {id(m): name for name, m in model.named_modules()}
        self._iterations = 0
        self._state: _IterationState | None = None
        self._active = False

    # ---- attaching hooks ---------------------------------------------------------------

    @contextlib.contextmanager
    def attached(self) -> Iterator[None]:
        """Attaches the module and AccumulateGrad hooks for the duration of the block."""
        handles: list[Any] = []
        accumulators: list[Any] = []
        try:
            for module in self._model.modules():
                if next(module.children(), None) is None:
                    handles.append(module.register_forward_pre_hook(self._on_leaf_pre))
                    handles.append(module.register_forward_hook(self._on_leaf_post))
                else:
                    handles.append(module.register_forward_pre_hook(self._on_container_pre))
                    handles.append(module.register_forward_hook(self._on_container_post))
            for index, param in enumerate(self._params):
                # DDP's trick: the node that accumulates the parameter's gradient. The
                # parameter holds it only weakly, so keep it alive while hooked.
                accumulator = param.expand_as(param).grad_fn.next_functions[0][0]
                accumulators.append(accumulator)
                handles.extend(self._time_accumulator(accumulator, index))
            yield
        finally:
            for handle in handles:
                handle.remove()

    def _time_accumulator(self, node: Any, index: int) -> list[Any]:
        start: list[Mark] = []

        def pre(grad_outputs: Any) -> None:
            start.append(self._clock.mark())

        def post(grad_inputs: Any, grad_outputs: Any) -> None:
            end = self._clock.mark_end()
            if start and self._state is not None:
                self._state.accumulate.append((index, start.pop(), end))

        return [node.register_prehook(pre), node.register_hook(post)]

    # ---- iteration boundaries ----------------------------------------------------------

    def begin_forward(self) -> None:
        """Starts recording an iteration. Call right before the model's forward."""
        self._iterations += 1
        self._state = _IterationState(self._iterations, self._clock.mark())
        self._active = True

    def end_forward(self, loss: torch.Tensor) -> None:
        """Closes the forward pass: the ops since the model's forward returned, up to
        `loss` (the tensor whose backward() is called next), form the ``(loss)`` layer."""
        state = self._require_state()
        end = self._clock.mark()
        segment = self._add_segment(Segment(LOSS_NAME, KIND_LOSS))
        self._claim([loss], segment)
        state.output_bytes[segment] = tensor_bytes(loss)
        state.forward.append((segment, state.gap_start, end))
        self._active = False

    def finish(self) -> IterationRecord:
        """Returns the iteration's times. REQUIRES: backward is done and clock.sync()."""
        state = self._require_state()
        seconds = self._clock.seconds
        count = len(state.segments)
        forward = [0.0] * count
        backward = [0.0] * count
        for segment, start, end in state.forward:
            forward[segment] += seconds(start, end)
        for segment, start, end in state.backward:
            backward[segment] += seconds(start, end)
        param_segment = self._param_segments(state)
        for index, start, end in state.accumulate:
            if index in param_segment:
                backward[param_segment[index]] += seconds(start, end)
        ready = [index for index, _, _ in state.accumulate]
        output_bytes = [state.output_bytes.get(i, 0) for i in range(count)]
        self._state = None
        return IterationRecord(state.segments, forward, backward, ready, param_segment,
                               output_bytes)

    def _require_state(self) -> _IterationState:
        if self._state is None:
            raise AssertionError("LayerRecorder: begin_forward() was not called")
        return self._state

    def _param_segments(self, state: _IterationState) -> dict[int, int]:
        result: dict[int, int] = {}
        for index in range(len(self._params)):
            owner = self._owners.get(index)
            segment = state.first_call.get(id(owner)) if owner is not None else None
            if segment is None:
                segment = state.consumer.get(index)
            if segment is not None:
                result[index] = segment
        return result

    # ---- module hooks ------------------------------------------------------------------

    def _listening(self) -> _IterationState | None:
        """The current state if hook events count now (inside forward, no unit open)."""
        state = self._state
        if not self._active or state is None or state.open_unit is not None:
            return None
        return state

    def _on_leaf_pre(self, module: nn.Module, inputs: Any) -> None:
        state = self._listening()
        if state is None:
            return  # outside forward, or a module called from inside a unit: part of it
        self._close_gap(state, inputs, self._clock.mark())
        state.open_unit = (module, self._clock.mark())

    def _on_leaf_post(self, module: nn.Module, inputs: Any, output: Any) -> None:
        state = self._state
        if not self._active or state is None or state.open_unit is None:
            return
        opened, start = state.open_unit
        if opened is not module:
            return
        end = self._clock.mark()
        segment = self._add_segment(Segment(self._unit_name(state, module), KIND_UNIT))
        state.first_call.setdefault(id(module), segment)
        self._claim(output, segment)
        state.output_bytes[segment] = tensor_bytes(output)
        state.forward.append((segment, start, end))
        state.open_unit = None
        state.gap_start = self._clock.mark()

    def _on_container_pre(self, module: nn.Module, inputs: Any) -> None:
        state = self._listening()
        if state is None:
            return
        self._close_gap(state, inputs, self._clock.mark())
        state.stack.append(self._labels.get(id(module), "?"))
        state.gap_start = self._clock.mark()

    def _on_container_post(self, module: nn.Module, inputs: Any, output: Any) -> None:
        state = self._listening()
        if state is None:
            return
        self._close_gap(state, output, self._clock.mark())
        if state.stack:
            state.stack.pop()
        state.gap_start = self._clock.mark()

    # ---- segments and autograd nodes ---------------------------------------------------

    def _unit_name(self, state: _IterationState, module: nn.Module) -> str:
        calls = state.calls.get(id(module), 0) + 1
        state.calls[id(module)] = calls
        label = self._labels.get(id(module), "?") or "(model)"
        return label if calls == 1 else f"{label}#{calls}"

    def _add_segment(self, segment: Segment) -> int:
        state = self._require_state()
        state.segments.append(segment)
        return len(state.segments) - 1

    def _close_gap(self, state: _IterationState, tensors: Any, end: Mark) -> None:
        """Ends the stretch since the last hook event; it becomes a glue layer if it
        created autograd nodes reachable from `tensors`."""
        segment = len(state.segments)
        if self._claim(tensors, segment) == 0:
            return
        container = state.stack[-1] if state.stack else ""
        base = f"{container}.(between)" if container else "(between)"
        seen = state.glue_names.get(base, 0) + 1
        state.glue_names[base] = seen
        name = base if seen == 1 else f"{base}#{seen}"
        self._add_segment(Segment(name, KIND_GLUE))
        # What the stretch hands on: the tensors at hand whose node it created.
        state.output_bytes[segment] = tensor_bytes(
            [t for t in iter_tensors(tensors)
             if t.grad_fn is not None and t.grad_fn.metadata.get(_TAG) == (state.number, segment)])
        state.forward.append((segment, state.gap_start, end))

    def _claim(self, tensors: Any, segment: int) -> int:
        """Tags every untagged autograd node reachable from `tensors` as `segment`'s and
        times it. Returns how many nodes were tagged."""
        state = self._require_state()
        stack = [t.grad_fn for t in iter_tensors(tensors) if t.grad_fn is not None]
        claimed = 0
        while stack:
            node = stack.pop()
            if node is None:
                continue
            if _is_accumulator(node):
                index = self._param_index.get(id(node.variable))
                if index is not None:
                    state.consumer.setdefault(index, segment)
                continue
            metadata = node.metadata
            if _TAG in metadata:
                continue  # an earlier layer's node (or a graph kept from an old iteration)
            metadata[_TAG] = (state.number, segment)
            self._time_node(node, segment, state.backward)
            claimed += 1
            stack.extend(next_node for next_node, _ in node.next_functions)
        return claimed

    def _time_node(self, node: Any, segment: int, sink: list[tuple[int, Mark, Mark]]) -> None:
        # `sink` is this iteration's list: hooks left on a graph that outlives the
        # iteration write into a list nobody reads any more.
        clock = self._clock
        start: list[Mark] = []

        def pre(grad_outputs: Any) -> None:
            start.append(clock.mark())

        def post(grad_inputs: Any, grad_outputs: Any) -> None:
            end = clock.mark_end()
            if start:
                sink.append((segment, start.pop(), end))

        node.register_prehook(pre)
        node.register_hook(post)
