"""What `nilmbuild explain` prints and writes: the explanation as text / JSON / PNG, the quality table."""

from __future__ import annotations

import io

import numpy as np

from .batch import COLUMNS


def explanation_dict(e) -> dict:
    """An Explanation as JSON-ready lists (watts, Wh or W per step, ISO times)."""
    from nilmbuild.infer import json_safe

    times = np.datetime_as_string(e.timestamps.astype("datetime64[s]"), unit="s")
    iv = e.interval
    return json_safe(
        {
            "device": e.device,
            "method": e.method,
            "architecture": e.architecture,
            "output": e.output,
            "gradients_of": e.gradients_of,
            "target": {
                "level": "point" if iv.point else "sequence",
                "unit": iv.unit,
                "steps": [iv.lo, iv.hi],
                "from": str(times[iv.lo]),
                "to": str(times[iv.hi - 1]),
                "value": e.value,
                "baseline_value": e.baseline_value,
            },
            "baseline_w": float(e.baseline_w[0]),
            "completeness": e.completeness,
            "attention_spearman": e.attention,
            "timestamps": [str(t) for t in times],
            "aggregate_w": e.aggregate_w.astype(float).tolist(),
            "device_w": e.device_w.astype(float).tolist(),
            "attribution": e.attribution.astype(float).tolist(),
        }
    )


def explanation_text(e, top: int = 10) -> str:
    """A summary and the `top` most-attributed steps."""
    d = explanation_dict(e)
    tg, unit = d["target"], d["target"]["unit"]
    lines = [
        f"{e.device}, {tg['level']} level, {tg['from']} .. {tg['to']}: {tg['value']:.4g} {unit} "
        f"(at the baseline, {d['baseline_w']:.0f} W at every step: {tg['baseline_value']:.4g} {unit})",
        _method_line(e),
        _sum_line(e, unit),
        f"top {top} steps:   time                 aggregate W   attribution {unit}",
    ]
    if e.attention:
        layers = ", ".join(f"{v:.2f}" for v in e.attention["layers"])
        lines.insert(3, f"attention of query step {e.interval.lo} vs |attribution| (Spearman), layers 0..: {layers}")
    if e.attention and "stats_share" in e.attention:
        share = ", ".join(f"{v:.3f}" for v in e.attention["stats_share"]["layers"])
        lines.insert(
            4, f"  over the time steps only; the query's weight on the stats token (head mean), layers 0..: {share}"
        )
    for i in np.argsort(-np.abs(e.attribution), kind="stable")[:top]:
        lines.append(f"  {i:5d}   {d['timestamps'][i]}  {e.aggregate_w[i]:11.1f}   {e.attribution[i]:+.4g}")
    return "\n".join(lines)


def _method_line(e) -> str:
    """Which output is explained and whose gradients a gradient method used (the spec's words unchanged)."""
    if e.architecture == "spec":
        grads = f", gradients of the {e.gradients_of}-gate output" if e.gradients_of else ""
        return f"method {e.method}, explained output: {e.output}-gate{grads}"
    grads = ", and its gradients" if e.gradients_of else ""
    return f"method {e.method}, explained: the {e.output_label}{grads}"


def _sum_line(e, unit: str) -> str:
    if not e.completeness:
        return "occlusion: each value is the mean drop of the target when a window covering the step is occluded"
    if e.architecture != "spec":
        (gap,) = e.completeness.values()
        return f"sum of attributions {e.attribution.sum():.4g} {unit}; minus (f(x) - f(baseline)): {gap:+.3g}"
    gaps = ", ".join(f"{k} output {v:+.3g}" for k, v in e.completeness.items())
    return f"sum of attributions {e.attribution.sum():.4g} {unit}; minus (f(x) - f(baseline)): {gaps}"


SHORT = {
    "deletion_area": "del",
    "insertion_area": "ins",
    "random_deletion_area": "del_rnd",
    "random_insertion_area": "ins_rnd",
    "max_sensitivity": "maxsens",
    "effective_steps": "steps90",
    "randomised_spearman": "rho_rand",
    "input_spearman": "rho_inp",
    "completeness_hard": "gap_hard",
    "completeness_soft": "gap_soft",
    "seconds": "s",
}


def quality_text(rows: list[dict], outputs=("hard", "soft")) -> str:
    """The quality table, one line per (device, method), and a legend of the columns. outputs: the model's
    (wrapper.outputs_of): an imported upstream model has one, so its table has one completeness gap."""
    gaps = {f"completeness_{g}" for g in outputs}
    keys = [k for k, _ in COLUMNS if not k.startswith("completeness_") or k in gaps]
    head = f"{'device':<16}{'method':<10}" + "".join(f"{SHORT[k]:>10}" for k in keys)
    out = [head]
    for r in rows:
        out.append(f"{r['device']:<16}{r['method']:<10}" + "".join(f"{_num(r[k]):>10}" for k in keys))
    out.append("")
    out += [f"{SHORT[k]:>9}: {_label(k, label, outputs)}" for k, label in COLUMNS if k in keys]
    return "\n".join(out)


def _label(key: str, label: str, outputs) -> str:
    """A column's legend; the one gap of a model with one output (not a "hard" one) says so."""
    if key == "completeness_hard" and tuple(outputs) == ("hard",):
        return "sum(attr) - (f(x) - f(baseline)), the model's one output, Wh"
    return label


def _num(v) -> str:
    return "-" if v is None or not np.isfinite(v) else f"{v:.3g}"


def explanation_png(e) -> bytes:
    """Two panels over time: the aggregate with the attribution as a strip under it (RdBu_r, a colour-blind-safe
    diverging colormap, symmetric around 0), and the device's explained output in watts."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.arange(e.aggregate_w.shape[0])
    fig, (ax, strip, dev) = plt.subplots(
        3, 1, figsize=(10, 5.5), sharex=True, gridspec_kw={"height_ratios": [3, 0.6, 2]}, constrained_layout=True
    )
    ax.plot(t, e.aggregate_w, color="#000000", lw=0.8, label="aggregate")
    ax.axhline(e.baseline_w[0], color="#0072B2", ls="--", lw=0.8, label="baseline (window minimum)")
    if e.interval.hi - e.interval.lo < t.size:
        ax.axvspan(e.interval.lo - 0.5, e.interval.hi - 0.5, color="#E69F00", alpha=0.25, label="explained steps")
    ax.set_ylabel("aggregate (W)")
    ax.legend(loc="upper right", fontsize=8)
    what = f"{e.output}-gate output" if e.architecture == "spec" else e.output_label
    ax.set_title(f"{e.device}: {e.method} attribution ({e.interval.unit} per step), {what}")
    lim = float(np.abs(e.attribution).max()) or 1.0
    im = strip.imshow(
        e.attribution[None], aspect="auto", cmap="RdBu_r", vmin=-lim, vmax=lim, extent=(-0.5, t[-1] + 0.5, 0, 1)
    )
    strip.set_yticks([])
    fig.colorbar(im, ax=strip, label=e.interval.unit, fraction=0.05)
    dev.plot(t, e.device_w, color="#D55E00", lw=0.9)
    dev.set_ylabel(f"{e.device} (W)")
    dev.set_xlabel(f"step of the window (from {np.datetime_as_string(e.timestamps[0], unit='m')})")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()
