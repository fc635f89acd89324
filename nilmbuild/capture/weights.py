"""The weights the pages draw, captured as float32 copies of the state dict under names.param(...) names
(weights.encoder.0.attn.wq, weights.film_enc.fc1.weight, ...), for any number of encoder layers and devices."""

from __future__ import annotations

from nilmbuild.model import names

from .planner import Planner


def store_weights(planner: Planner, model) -> None:
    """Store the weights the pages draw (float32 copies of the state dict), named weights.*."""
    cfg = model.cfg
    sd = {k: v.detach().float().cpu().numpy() for k, v in model.state_dict().items()}
    upstream = hasattr(cfg, "arch")  # CondiNILM / the original NILMFormer: model/upstream's module names
    for l in range(cfg.n_encoder_layers):
        _weights_encoder_layer(planner, sd, cfg, l, "encoder_layers" if upstream else "layers")
    if upstream:
        _weights_upstream(planner, sd, model)
        return
    _weights_projection(planner, sd, cfg)
    for gen, mod, st in (("film_enc", "encoder_film", "6c"), ("film_dec", "decoder_film", "8")):
        _weights_film(planner, sd, gen, mod, st)
    for dev in cfg.devices:
        key = f"heads.{dev.name}.amp"
        if key in sd:
            planner.store(
                names.param(names.head(dev.name, "amp")),
                sd[key],
                (),
                "10",
                "architecture.md 9.1",
                "softplus amplitude parameter a (output scale softplus(a))",
                encoding="f32",
            )


def _weights_upstream(planner: Planner, sd: dict, model) -> None:
    """An upstream model's FiLM generators (CondiNILM with FiLM) and its soft gate's stored per-device scale, floor
    and bias (CondiNILM's criterion.gate_*)."""
    if getattr(model, "has_film", False):
        for gen, mod, st in (("film_enc", "encoder_film", "6c"), ("film_dec", "decoder_film", "8")):
            _weights_film(planner, sd, gen, mod, st)
    gate = getattr(model, "criterion", None)
    if gate is None:
        return
    scale, floor, bias = (t.reshape(-1).detach().float().numpy() for t in gate.parameters_used())
    used = {"scale": scale, "floor": floor, "bias": bias, "logit_floor": gate.gate_logits_floors.float().numpy()}
    for part, doc in GATE_PARAMS.items():
        planner.store(names.param(f"gate.{part}"), used[part], ("device",), "12", "CondiNILM", doc, encoding="f32")


#: CondiNILM's external soft gate, per device, as its evaluation uses them (criterion.gate_* clamped).
GATE_PARAMS = {
    "scale": "gate sharpness s (criterion.gate_soft_scales clamped to [0.5, 6]): p = sigmoid(l s + b)",
    "bias": "gate bias b (criterion.gate_biases)",
    "floor": "gate floor f (criterion.gate_floors clamped to [0.01, 0.5]): power (f + (1 - f) p)",
    "logit_floor": "gate-logit floor: l = max(logit, floor) (-3 for sparse high-power devices, -inf: none)",
}


def _weights_encoder_layer(planner: Planner, sd: dict, cfg, l: int, prefix: str = "layers") -> None:
    """Attention projections, both LayerNorms and the FFN expansion of encoder layer `l`."""
    p = f"{prefix}.{l}"  # the state dict's prefix
    for m in ("wq", "wk", "wv", "wo"):
        doc = f"layer {l} attention projection {m[1].upper()} (out, in): y = x @ W^T"
        planner.store(
            names.param(names.attn(l, m)),
            sd[f"{p}.attn.{m}.weight"],
            ("out_feature", "in_feature"),
            "7b",
            "attention.md 7.4",
            doc,
        )
    for n, st, sec in (("norm1", "7a", "encoder-film.md 6.4"), ("norm2", "7d", "encoder-film.md 6.5")):
        for part, what in (("weight", "gain"), ("bias", "bias")):
            doc = f"layer {l} LayerNorm {n[-1]} {what}"
            planner.store(
                names.param(names.encoder(l, f"{n}.{part}")), sd[f"{p}.{n}.{part}"], ("feature",), st, sec, doc
            )
    lin = f"Linear({cfg.d_model}, {cfg.d_ff})"
    sec = "encoder-film.md 6.5"
    planner.store(
        names.param(names.encoder(l, "ffn.layer1.weight")),
        sd[f"{p}.pffn.layer1.weight"],
        ("hidden", "feature"),
        "7e",
        sec,
        f"layer {l} FFN expansion {lin} weight",
    )
    planner.store(
        names.param(names.encoder(l, "ffn.layer1.bias")),
        sd[f"{p}.pffn.layer1.bias"],
        ("hidden",),
        "7e",
        sec,
        f"layer {l} FFN expansion bias",
    )


def _weights_projection(planner: Planner, sd: dict, cfg) -> None:
    """The 1x1 conv c_embedding -> d_model (stage 4), stored as a (feature, channel) matrix."""
    conv = f"1x1 conv {cfg.c_embedding} -> {cfg.d_model}"
    w, b = sd["input_projection.weight"][:, :, 0], sd["input_projection.bias"]
    planner.store(
        names.param("input_projection.weight"),
        w,
        ("feature", "channel"),
        "4",
        "forward-pass.md 4",
        f"{conv} weight (out, in)",
    )
    planner.store(names.param("input_projection.bias"), b, ("feature",), "4", "forward-pass.md 4", f"{conv} bias")


def _weights_film(planner: Planner, sd: dict, gen: str, mod: str, st: str) -> None:
    """One FiLM generator: its learned device embeddings and its two-layer MLP (architecture.md 8.3)."""
    sec, g = "architecture.md 8.3", f"{mod}.gen"
    emb = sd[f"{g}.device_embed.weight"]
    planner.store(
        names.param(names.film(gen, "device_embed")),
        emb,
        ("device", "film_hidden"),
        st,
        sec,
        f"{gen} learned device embeddings",
    )
    for fc, ax in (("fc1", ("film_hidden", "film_in")), ("fc2", ("film_out", "film_hidden"))):
        planner.store(
            names.param(names.film(gen, f"{fc}.weight")),
            sd[f"{g}.{fc}.weight"],
            ax,
            st,
            sec,
            f"{gen} MLP {fc} weight (out, in)",
        )
        planner.store(
            names.param(names.film(gen, f"{fc}.bias")), sd[f"{g}.{fc}.bias"], ax[:1], st, sec, f"{gen} MLP {fc} bias"
        )
