"""The Python API: one window of aggregate watts -> a device's attribution over its steps, as arrays.

    >>> from nilmbuild.explain import explain_window
    >>> e = explain_window(loaded, aggregate_w, "2024-06-05T08:00", "kettle", method="occlusion")
    >>> e.attribution.shape        # (480,) Wh per step of the aggregate (W for a point target)

Explained output (`output`): "hard" (default) is the Disaggregation page's output, equal to `run_window`; the
deletion / insertion curves and occlusion always use it as it is. The hard gate is a step function, so the
gradient methods (ig, saliency) take their gradients from the same weights with the smoothstep gate
(`gradients_of` = "soft"); `completeness` reports how far the attributions' sum is from f(x) - f(baseline)
for both outputs, so the cost of that choice is measured for each explanation. output="soft" explains the
soft-gate output with every method.

An imported upstream checkpoint has one, differentiable output (wrapper.py's module doc): every method explains
it and follows its gradients, `completeness` has that one output ("hard"), and output="soft" is a UserError.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from nilmbuild.errors import UserError

from .methods import DEFAULT, METHODS, Settings, attribute, steps_for
from .wrapper import Interval, Target, WattsToDevice, architecture_of, output_label, outputs_of, window_baseline


@dataclass
class Explanation:
    device: str
    method: str
    output: str  # the explained output: "hard" (the page's) or "soft"
    gradients_of: str | None  # the output whose gradients a gradient method used (None for occlusion)
    interval: Interval
    timestamps: np.ndarray  # (L,) datetime64[s]
    aggregate_w: np.ndarray  # (L,) the explained input, watts
    baseline_w: np.ndarray  # (L,) the baseline, watts (the window's minimum at every step)
    device_w: np.ndarray  # (L,) the explained output's watts at the input
    attribution: np.ndarray  # (L,) in interval.unit per step
    value: float  # the target at the input (Wh or W)
    baseline_value: float  # the target at the baseline
    completeness: dict = field(default_factory=dict)  # {output: sum(attribution) - (f(x) - f(baseline))}
    attention: dict | None = None  # point level: attention.attention_vs_attribution at the explained step
    architecture: str = "spec"  # the checkpoint's ("spec", "condinilm", "nilmformer"): what `output` means

    @property
    def output_label(self) -> str:
        return output_label(self, self.output)


def gradient_output(method: str, loaded=None) -> str | None:
    """The output whose gradients `method` follows: the soft gate's for ig and saliency, whichever output is
    explained (the hard gate has no useful gradient); None for occlusion (forward passes of the explained
    output only). An upstream checkpoint has one, differentiable output: "hard" names it."""
    if method == "occlusion":
        return None
    return "soft" if loaded is None or getattr(loaded, "architecture", "spec") == "spec" else "hard"


def make_target(loaded, start, device: str, interval: Interval, gate: str, model=None) -> Target:
    """The explained number for windows starting at `start` (model: another model with the same config, e.g.
    the randomised twin)."""
    f = WattsToDevice(loaded, start, device, gate)
    if model is not None:
        f.model = model
    return Target(f, interval.lo, interval.hi, _step_s(loaded), point=interval.point)


def explain_window(
    loaded,
    aggregate_w,
    start,
    device: str,
    interval: Interval | None = None,
    method: str = "ig",
    output: str = "hard",
    settings: Settings = DEFAULT,
    progress: bool = False,
) -> Explanation:
    """Explain one window (see module docstring); interval None: the device's energy over the whole window."""
    agg = _window(loaded, aggregate_w, device, method, output)
    interval = interval or Interval(0, agg.shape[0])
    x, base = torch.from_numpy(agg)[None], torch.from_numpy(window_baseline(agg))[None]
    grad_gate = gradient_output(method, loaded)
    explained = make_target(loaded, start, device, interval, output)
    attributed = make_target(loaded, start, device, interval, grad_gate or output)
    with _bar(progress, steps_for(method, settings), method) as bar:
        attr = attribute(attributed, x, base, method, settings, bar)[0].double().numpy()
    with torch.no_grad():
        ends = explained(torch.cat([x, base])).double().numpy()
        device_w = explained.device_w(x)[0].numpy()
    return Explanation(
        device=device,
        method=method,
        output=output,
        gradients_of=grad_gate,
        interval=interval,
        timestamps=_timestamps(loaded, start),
        aggregate_w=agg,
        baseline_w=base[0].numpy(),
        device_w=device_w,
        attribution=attr,
        value=float(ends[0]),
        baseline_value=float(ends[1]),
        completeness=completeness(loaded, start, device, interval, x, base, attr, method),
        architecture=architecture_of(loaded),
    )


def completeness(loaded, start, device, interval, x, base, attr, method: str) -> dict:
    """{gate: sum(attribution) - (f(x) - f(baseline))} for each output of the model (outputs_of: hard and soft for
    the spec's, the one output of an upstream model); {} for occlusion, whose values are means over overlapping
    windows and are not meant to add up to the output."""
    out = {}
    if method == "occlusion":
        return out
    for gate in outputs_of(loaded):
        with torch.no_grad():
            v = make_target(loaded, start, device, interval, gate)(torch.cat([x, base])).double().numpy()
        out[gate] = float(attr.sum() - (v[0] - v[1]))
    return out


def _window(loaded, aggregate_w, device: str, method: str, output: str = "hard") -> np.ndarray:
    """Check the arguments; the window as float32 watts (L,)."""
    if output not in outputs_of(loaded):
        raise UserError(
            f"no {output} output (--output {output}): this {architecture_of(loaded)} checkpoint has one output, its "
            f"{output_label(loaded, 'hard')}, explained by default: leave --output out"
        )
    if device not in loaded.devices:
        raise UserError(f"unknown device {device!r}; this checkpoint has {', '.join(loaded.devices)}")
    if method not in METHODS:
        raise UserError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    agg = np.asarray(aggregate_w, dtype=np.float32).reshape(-1)
    if agg.shape[0] != int(loaded.cfg.window) or not np.isfinite(agg).all():
        raise UserError(f"explain needs {loaded.cfg.window} finite aggregate values in watts, got {agg.shape[0]}")
    return agg


def _step_s(loaded) -> int:
    from nilmbuild.api import Model

    return Model(loaded).step_s


def _timestamps(loaded, start) -> np.ndarray:
    from nilmbuild.api import Model

    return Model(loaded).timestamps(start)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


def _bar(progress: bool, total: int, method: str):
    """A tqdm bar on stderr over the method's units of work, or a silent stand-in."""
    if not progress:
        return _NoBar()
    import sys

    from tqdm import tqdm

    return tqdm(total=total, desc=f"explaining ({method})", unit="part", file=sys.stderr, leave=False)
