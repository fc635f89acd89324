"""Export a checkpoint to one ONNX graph that the pages run with onnxruntime-web (docs/live-model.md).

Inputs: `x` (1, 7, W) float32, the model input exactly as `nilmbuild.pipeline.model_input` builds it,
`head` () int64, the attention head whose per-layer maps come back, and the what-if settings of
nilmbuild/model/whatif.py (WHATIF_INPUTS: gate thresholds, encoder-FiLM affine, FiLM on/off, diagonal mask, soft
gate; an upstream model's: nilmbuild/model/upstream/whatif.py, the diagonal mask and FiLM on/off), whose defaults
(what_if_defaults) reproduce the checkpoint exactly. Outputs (outputs(cfg), in this order):
the watts (D, W) after the hard gate and the output FiLM, converted with the checkpoint's appliance scalers,
plus the stage tensors the exactness tests compare with a Trace of the PyTorch model.
Which exporter works and why the options below are set: ../shared/reference/in-browser-model.md.
"""

from __future__ import annotations

import io
import warnings
from concurrent.futures import Future

import numpy as np
import torch
from torch import nn

from nilmbuild.model import names
from nilmbuild.model.trace import Trace
from nilmbuild.model.whatif import FIELDS as WHATIF_INPUTS
from nilmbuild.model.whatif import WhatIf

INPUTS = ("x", "head", *WHATIF_INPUTS)


def is_upstream(cfg) -> bool:
    """CondiNILM / the original NILMFormer (model/upstream): its own forward pass and what-if inputs."""
    return hasattr(cfg, "arch")


def inputs(cfg) -> tuple[str, ...]:
    """The graph's inputs: x and head, then the what-if settings (the spec's; an upstream model's diagonal mask and,
    for CondiNILM with FiLM, FiLM on/off: model/upstream/whatif.py)."""
    if is_upstream(cfg):
        from nilmbuild.model.upstream.whatif import fields

        return ("x", "head", *fields(cfg))
    return INPUTS


def _upstream_stages(cfg) -> dict[str, str]:
    """An upstream model's stages: its instance norm, tokens (L + 1, the stats token last), each encoder layer's
    output, the final LayerNorm, CondiNILM's FiLM and gate when it has them, and the power it outputs."""
    out = {"instance_norm": names.INSTANCE_NORM, "tokens": "tokens"}
    film = cfg.arch == "condinilm" and cfg.use_film
    if film:
        out.update(cond_vector=names.cond("vector"), film_enc_gamma=names.film("film_enc", "gamma_mean"))
        out["film_enc_beta"] = names.film("film_enc", "beta_mean")
    out.update({f"encoder_{l}_out": names.encoder(l, "out") for l in range(cfg.n_encoder_layers)})
    out["final_norm"] = "final_norm"
    if film:
        out.update(film_dec_gamma=names.film("film_dec", "gamma"), film_dec_beta=names.film("film_dec", "beta"))
    if cfg.arch == "condinilm":
        out["gate_prob"] = "gate.prob"
    out["power_scaled"] = names.OUTPUT_POWER
    return out


def stages(cfg) -> dict[str, str]:
    """Name in the graph -> the Trace record it equals (batch axis dropped), in output order: one encoder output per
    layer of the model's config; "watts" and "attention" (outputs(cfg)) are derived."""
    if is_upstream(cfg):
        return _upstream_stages(cfg)
    return {
        "instance_norm": names.INSTANCE_NORM,
        "embed_with_pos": names.EMBED_WITH_POS,
        "projection": names.PROJECTION,
        "cond_vector": names.cond("vector"),
        "film_enc_gamma": names.film("film_enc", "gamma_mean"),
        "film_enc_beta": names.film("film_enc", "beta_mean"),
        **{f"encoder_{l}_out": names.encoder(l, "out") for l in range(cfg.n_encoder_layers)},
        "film_dec_gamma": names.film("film_dec", "gamma"),
        "film_dec_beta": names.film("film_dec", "beta"),
        "gate_prob": names.OUTPUT_GATE,
        "power_scaled": names.OUTPUT_POWER,
    }


def outputs(cfg) -> tuple[str, ...]:
    """The graph's outputs, in order: the watts, one head's attention per layer, the stage tensors."""
    return ("watts", "attention", *stages(cfg))


class LiveModel(nn.Module):
    """The checkpoint's model in eval mode (hard gate) with its outputs in watts and its stage tensors."""

    def __init__(self, loaded) -> None:
        super().__init__()
        self.model = loaded.model.eval()
        self.stages = list(stages(loaded.cfg).values())
        from nilmbuild.data.preprocess import scaler_affine

        aff = [scaler_affine(loaded.scalers["appliances"][d]) for d in loaded.devices]
        self.upstream = is_upstream(loaded.cfg)
        self.clamp = getattr(loaded.cfg, "arch", "") == "condinilm"  # its evaluation clamps the watts at 0
        self.register_buffer("w_scale", torch.tensor([a for a, _ in aff], dtype=torch.float32)[:, None])
        self.register_buffer("w_offset", torch.tensor([b for _, b in aff], dtype=torch.float32)[:, None])

    def forward(self, x: torch.Tensor, head: torch.Tensor, *what_if: torch.Tensor):
        trace = Trace()
        if self.upstream:
            from nilmbuild.model.upstream.whatif import UpstreamWhatIf

            out = self.model(x, trace=trace, what_if=UpstreamWhatIf.of(self.model.cfg, what_if) if what_if else None)
        else:
            out = self.model(x, gate_mode="hard", trace=trace, what_if=WhatIf(*what_if))
        watts = out.power[0] * self.w_scale + self.w_offset  # (D, W)
        if self.clamp:
            watts = torch.clamp(watts, min=0.0)
        layers = range(self.model.cfg.n_encoder_layers)
        attention = torch.stack(
            [trace[names.attn(l, "weights")][0].index_select(0, head.reshape(1))[0] for l in layers]
        )  # (layers, query, key)
        return (watts, attention, *(trace[name][0] for name in self.stages))


def what_if_defaults(cfg) -> dict[str, np.ndarray]:
    """The what-if inputs' default values (graph input name -> float32 array): the checkpoint, unchanged."""
    if is_upstream(cfg):
        from nilmbuild.model.upstream.whatif import UpstreamWhatIf, fields

        d = UpstreamWhatIf.defaults(cfg)
        return {k: getattr(d, k).numpy() for k in fields(cfg)}
    d = WhatIf.defaults(cfg)
    return {k: getattr(d, k).numpy() for k in WHATIF_INPUTS}


def torch_reference(loaded, x: np.ndarray, head: int, **forward_kw) -> dict[str, np.ndarray]:
    """What each graph output should be, from a Trace of the PyTorch model (hard gate) on x (1, 7, W) and
    the appliance scalers (nilmbuild.infer.postprocess.denormalise), independently of LiveModel. forward_kw:
    the model's own switches for a what-if (use_film=False, mask_diagonal=False, gate_mode="soft")."""
    from nilmbuild.infer.postprocess import denormalise

    trace = Trace()
    if not is_upstream(loaded.cfg):
        forward_kw.setdefault("gate_mode", "hard")
    elif forward_kw:  # an upstream model's switches (mask_diagonal=False, use_film=False) as its what-if
        forward_kw = {"what_if": _upstream_what_if(loaded.cfg, **forward_kw)}
    with torch.no_grad():
        loaded.model.eval()(torch.from_numpy(np.asarray(x, np.float32)), trace=trace, **forward_kw)
    ref = {g: trace[t][0].numpy() for g, t in stages(loaded.cfg).items()}
    apps = loaded.scalers["appliances"]
    ref["watts"] = np.stack([denormalise(ref["power_scaled"][i], apps[d]) for i, d in enumerate(loaded.devices)])
    if getattr(loaded.cfg, "arch", "") == "condinilm":
        ref["watts"] = np.maximum(ref["watts"], np.float32(0.0))
    ref["attention"] = np.stack(
        [trace[names.attn(l, "weights")][0, head].numpy() for l in range(loaded.cfg.n_encoder_layers)]
    )
    return ref


def _upstream_what_if(cfg, mask_diagonal: bool | None = None, use_film: bool | None = None):
    """The what-if that runs an upstream model with these switches (None: as configured)."""
    from nilmbuild.model.upstream.whatif import UpstreamWhatIf

    w = UpstreamWhatIf.defaults(cfg)
    if mask_diagonal is not None:
        w = w.replace(mask_diagonal=float(mask_diagonal))
    if use_film is not None:
        w = w.replace(film_on=float(use_film))
    return w


def export_onnx(loaded) -> bytes:
    """The checkpoint -> ONNX bytes (opset 18, float32 weights, one file), with the TorchScript exporter
    (`dynamo=False`): ~0.8 s of one core against ~8-14 s for torch.export + onnxscript (`dynamo=True`). The model
    traces for it as it is: band edges from a static size (model/film.py), the rFFT's magnitude as an ONNX DFT
    (film.rfft_magnitude), the diagonal mask from arange (not a bool EyeLike, which onnxruntime cannot run). The
    tracer makes each layer's (L, L) diagonal mask a constant (0.7 MB of the 3.6 MB; gzipped for the page). This
    exporter (torch 2.13) writes no per-node stack traces or doc strings (tests/test_live_export.py checks)."""
    live = LiveModel(loaded).eval()
    W = int(loaded.cfg.window)
    defaults = what_if_defaults(loaded.cfg)
    args = (
        torch.zeros(1, int(loaded.cfg.n_channels), W),
        torch.tensor(0, dtype=torch.int64),
        *(torch.from_numpy(defaults[k]) for k in defaults),
    )
    buf = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # TracerWarnings for the static sizes, the exporter's deprecation notice
        torch.onnx.export(
            live,
            args,
            buf,
            dynamo=False,
            do_constant_folding=False,
            opset_version=18,
            input_names=list(inputs(loaded.cfg)),
            output_names=list(outputs(loaded.cfg)),
        )
    return buf.getvalue()


def cache_key(loaded) -> str:
    """The checkpoint's fingerprint + the code the graph is traced from + the exporter's versions."""
    from pathlib import Path

    from nilmbuild.provenance import PACKAGE_ROOT, code_fingerprint

    code = code_fingerprint([("model", PACKAGE_ROOT / "model"), ("live", Path(__file__))], packages=("torch", "onnx"))
    return code_fingerprint([], salt=f"live {loaded.fingerprint} {code}")[:24]


_EXPORTS: dict[str, Future] = {}  # cache_key -> the graph's bytes, once per process


def prefetch_onnx(loaded) -> Future:
    """Start export_onnx (cached on disk by cache_key) in a thread, once per process and checkpoint, so that it
    overlaps work that runs no model (make_context: loading and simulating the data). The TorchScript exporter keeps
    global state and traces loaded.model: wait for the result before a model runs elsewhere."""
    from nilmbuild.live.cache import cached
    from nilmbuild.threads import start_once

    key = cache_key(loaded)
    return start_once(_EXPORTS, key, "onnx-export", cached, f"{key}.onnx", lambda: export_onnx(loaded))


def onnx_bytes(loaded) -> bytes:
    """export_onnx, cached on disk by cache_key and made once per process (prefetch_onnx). Not for two threads at
    once (site/views/live_parts.py's live_parts, which the site's page threads call, takes a lock)."""
    return prefetch_onnx(loaded).result()
