"""The Why page of an imported upstream model (CondiNILM, the original NILMFormer): what differs from the spec's.

- The explained output. The spec's model has a hard gate (a step function: the pages' output) and its smoothstep
  twin (whose gradients ig and saliency follow). An upstream model has one output, the one its own evaluation
  computes (explain/wrapper.py): CondiNILM's power after its external soft gate with each device's stored
  scale, floor and bias (smooth: gradients and forward passes explain the same output), or the original
  NILMFormer's de-normalised conv-head output (it has no gate). The quality table then has one completeness gap.
- Attention. Its encoder attends over L + 1 tokens, the last one the stats token (model/upstream/stem.py). The
  page compares attribution with the weights on the L time steps and states the stats token's share
  (static/js/why_attention.js, explain/attention.py).

Everything here comes from the loaded model: its config (window, stats token index), its outputs
(explain.wrapper.outputs_of) and, for CondiNILM, the gate parameters its capture holds (upstream_gate.gate_params).
"""

from __future__ import annotations

from . import upstream_prose

#: The explained output, as the deletion curve's y axis names it.
OUTPUT = {"condinilm": "after CondiNILM's soft gate", "nilmformer": "the model's output; it has no gate"}


def page_data(ctx) -> dict:
    """The Why page's data keys for an upstream model ({} for the spec's: its page data stays as it was)."""
    from nilmbuild.explain.wrapper import outputs_of

    from .upstream_attention import token_axis

    cfg = ctx.loaded.cfg
    if getattr(cfg, "arch", None) is None:
        return {}
    return {
        "tokens": token_axis(cfg),
        "gap_columns": [[f"completeness_{g}", "gap (Wh)"] for g in outputs_of(ctx.loaded)],
    }


def context(ctx) -> dict | None:
    """The template's `upstream` prose (None for the spec's model: the template keeps the spec's)."""
    cfg = ctx.loaded.cfg
    arch = getattr(cfg, "arch", None)
    if arch is None:
        return None
    L, name = int(cfg.window), upstream_prose.NAMES[arch]
    return {
        "outputs": _outputs(ctx, arch),
        "short": "This model has one output, the one its own evaluation computes (said under the chart): ig and "
        "saliency take its gradients, and occlusion and every curve run it.",
        "link": _link(cfg, arch),
        "output": OUTPUT[arch],
        "randomised": "The randomised model re-initialises every weight of the network"
        + (
            "; the stored gate scale, floor and bias, which the evaluation applies, stay."
            if arch == "condinilm"
            else "."
        ),
        "attention": f"{name[0].upper()}{name[1:]}'s encoder attends over {L} + 1 tokens: the {L} time steps and, last, "
        f"the stats token (token {L + 1}: the window's mean and standard deviation). The attribution has one value per "
        f"time step and none for the stats token, so the lines and rank correlations use the query's weights on the "
        f"{L} time steps as the model computed them (not renormalised: they sum to 1 minus the stats token's share); "
        "the note under the chart and the table's last column give the share that went to the stats token.",
    }


def _outputs(ctx, arch: str) -> str:
    """What is explained, and why there is no hard / soft choice."""
    if arch == "nilmformer":
        return (
            "This is the original NILMFormer, which has no gate: its conv head's output, de-normalised with the stats "
            "token (the window's mean and standard deviation), is the power. There is no hard or soft gate to choose: "
            "ig and saliency take the gradients of that output, and occlusion and every curve run it."
        )
    from .upstream_gate import gate_params

    gates = "; ".join(
        f"{p['device'].replace('_', ' ')}: scale {p['scale']:.3g}, floor {p['floor']:.3g}, bias {p['bias']:.3g}"
        + (f", logit floor {p['logit_floor']:.3g}" if p["logit_floor"] is not None else "")
        for p in gate_params(ctx)
    )
    return (
        "This is CondiNILM, and the explained output is the one its own evaluation computes: the power after its soft "
        f"gate, which the evaluation applies outside the model with each device's stored parameters ({gates}), "
        "then clamped at 0 W. That gate is smooth, so there is no hard or soft version to choose: ig and saliency take the "
        "gradients of this output, and occlusion and every curve run it, the output the Disaggregation page draws."
    )


def _link(cfg, arch: str) -> dict:
    """Where the reader sees the gate, or what the model has instead of one (upstream_prose.absent)."""
    absent = upstream_prose.absent(cfg, "gate")
    if absent is not None:  # the page of what it has instead
        return {"href": absent["href"], "text": "The Disaggregation page draws that output."}
    return {"href": "gate.html", "text": "The Gate page draws the gate, device by device."}
