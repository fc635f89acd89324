"""Page prose for an upstream model (CondiNILM, the original NILMFormer), written from its own config: where a
page's spec prose would describe stages the model computes differently, or components it does not have.

Every function returns None for the spec's model (its pages keep their own prose); sizes come from the config.
"""

from __future__ import annotations

NAMES = {"condinilm": "CondiNILM", "nilmformer": "the original NILMFormer"}

#: What an upstream model has instead of a component it lacks: (the page that shows it, its link text).
INSTEAD = {
    "FiLM": (
        "encoder.html",
        "It conditions on the window through its stats token instead (the window's mean and standard deviation as "
        "one more token that every step attends to, and that de-normalises the output): see the Encoder page.",
    ),
    "gate": (
        "disaggregation.html",
        "Its conv head's output, de-normalised with the stats token, is the power: see the Disaggregation page.",
    ),
}


def _arch(cfg) -> str | None:
    return getattr(cfg, "arch", None)


def encoder(cfg) -> list[str] | None:
    """The Encoder page's explanation for an upstream model (None: the spec's prose)."""
    arch = _arch(cfg)
    if arch is None:
        return None
    L, d, n = int(cfg.window), int(cfg.d_model), int(cfg.n_encoder_layers)
    film = arch == "condinilm" and cfg.use_film
    tail = ", then the encoder FiLM (1 + gamma) FFN + beta" if film else ""
    return [
        f"The encoder of {NAMES[arch]} is {n} layers, as its own code computes them. Each layer normalises the "
        f"stream first and keeps the normalised tensor as the residual: x = LN1(x); x = x + attention(x); "
        f"x = LN2(x); x = x + FFN(x){tail}. (The spec's pre-norm layer adds to the un-normalised stream instead.) "
        f"The FFN expands each token's {d} features to {int(cfg.d_ff)} with GELU and compresses back to {d}.",
        f"The stream holds {L} + 1 = {L + 1} tokens of {d} features: the {L} time steps and, last, the stats token "
        f"(the window's mean and standard deviation projected to {d} features), which every step can attend to. "
        "After the last layer a final LayerNorm normalises every token, and the stats token leaves the stream "
        "before the head. Every strip below is the real tensor at that sub-step for the selected sample: tokens "
        "left to right (the last column is the stats token), features top to bottom; blue is negative, red positive.",
    ]


def absent(cfg, component: str) -> dict | None:
    """{text, href, link} for a component the model does not have (None when it has it or for the spec)."""
    arch = _arch(cfg)
    if arch is None:
        return None
    has = {"FiLM": arch == "condinilm" and cfg.use_film, "gate": arch == "condinilm"}[component]
    if has:
        return None
    href, link = INSTEAD[component]
    if component == "FiLM" and arch == "condinilm":
        link = "This run was trained with FiLM switched off (use_film false): see the Encoder page for what it has."
        href = "encoder.html"
    return {"text": f"{NAMES[arch][0].upper()}{NAMES[arch][1:]} has no {component}.", "href": href, "link": link}
