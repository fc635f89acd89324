"""Page prose for an upstream model (CondiNILM, the original NILMFormer), written from its own config: where a
page's spec prose would describe stages the model computes differently, or components it does not have.

Every function returns None for the spec's model (its pages keep their own prose); sizes come from the config.
"""

from __future__ import annotations

NAMES = {"condinilm": "CondiNILM", "nilmformer": "the original NILMFormer"}

#: The titles of the pages whose upstream version explains something else than the spec's page of that slug.
TITLES = {
    "gate": "Gate: CondiNILM's soft gate",
    "embedding": "Embedding: stem and stats token",
    "film": "FiLM",
    "attention": "Attention: time steps and the stats token",
    "forward": "Forward pass: stage by stage",
}


def title(slug: str, spec_title: str, cfg) -> str:
    """A page's title for the loaded model's architecture (a component it lacks: that it is not in the model)."""
    if not _arch(cfg):
        return spec_title
    component = {"gate": "gate", "film": "FiLM"}.get(slug)
    if component and absent(cfg, component):
        return f"{component[0].upper()}{component[1:]}: not in this model"
    return TITLES.get(slug, spec_title)


#: The leads of the pages whose upstream version shows other figures than the spec's page of that slug (pages.py's
#: READING_ORDER has the spec's).
LEADS = {
    "forward": "Each thumbnail is one stage's real tensor for the chosen window, in the order the model's own code "
    "runs them, from the meter's signal to each device's power. Click one to see its values large below.",
    "attention": "Each square shows, for every token of the window (a row), where one head looks (the columns); the "
    "last row and column are the stats token. Compare the heads: which time steps read the stats token most?",
    "film": "FiLM lets a summary of the window scale and shift the network's features, per device. Look first at the "
    "output FiLM: each device's power before it, after it and after the ReLU.",
    "gate": "CondiNILM's gate is soft: each device's power is multiplied by f + (1 − f) p, p from the head's gate logit "
    "with the device's stored scale and bias, so nothing is cut at a threshold. Compare the power before the gate "
    "(solid) with what is left (dashed).",
    "embedding": "The stem turns the meter's signal into tokens: the instance-normalised power through a dilated "
    "convolution, beside features of the time of day and date, and the window's mean and spread as one more token "
    "at the end.",
}

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


def display_name(cfg) -> str | None:
    """The architecture's name as a title spells it ("CondiNILM", "The original NILMFormer"); None for the spec."""
    arch = _arch(cfg)
    return None if arch is None else f"{NAMES[arch][0].upper()}{NAMES[arch][1:]}"


def site_title(cfg) -> str | None:
    """The site's title for an upstream model (every page's header and <title>): its architecture, not the generic
    "NILMFormer". None for the spec's model (the default title)."""
    name = display_name(cfg)
    return None if name is None else f"{name}, tensor by tensor"


def subject(cfg, provenance: dict | None) -> str | None:
    """The overview lead's subject for an upstream model: which architecture this is and the upstream file it was
    imported from, by name and sha256 as the import recorded them (never a local path). None for the spec's model."""
    arch = _arch(cfg)
    if arch is None:
        return None
    files = ((provenance or {}).get("upstream") or {}).get("files") or {}
    f = files.get("checkpoint") if isinstance(files.get("checkpoint"), dict) else None
    src = f" imported from {f['name']} (sha256 {str(f.get('sha256', ''))[:12]})" if f and f.get("name") else ""
    return f"This checkpoint, {NAMES[arch]}{src},"


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


def overview(cfg, built: list[str], missing: list[str] = ()) -> list[str] | None:
    """The Overview's explanation for an upstream model (None: the spec's prose). built: the titles of the pages
    this site has for it; missing: those of the pages it does not have for it yet."""
    arch = _arch(cfg)
    if arch is None:
        return None
    L, d, E = int(cfg.window), int(cfg.d_model), 2 * len(cfg.exo_variables)
    devices = ", ".join(d_.replace("_", " ") for d_ in cfg.devices)
    if arch == "condinilm":
        tail = (
            "Its shared head with per-device adapters gives each device an ungated power and a gate logit"
            + (" (the output FiLM applied before the ReLU)" if cfg.use_film else "")
            + (", a sparse CNN on the raw aggregate replaces the kettle's" if cfg.sparse_indices else "")
            + "; CondiNILM's evaluation then applies its soft gate with each device's stored scale, floor and bias."
        )
    else:
        tail = "Its conv head gives the power, de-normalised with a learned projection of the stats token; it has no FiLM and no gate."
    return [
        f"This checkpoint is {NAMES[arch]}, imported from the code it was trained with, and explained as that code "
        f"computes it. It splits a household's total power into the power of {devices}. The diagram is its whole "
        f"forward pass on one window of the example batch: the aggregate enters on the left (1 power channel + {E} "
        f"time features over {L} steps), becomes {L} tokens of {d} features plus the stats token (token {L + 1}), "
        f"goes through {int(cfg.n_encoder_layers)} encoder layers and a final LayerNorm, and leaves as per-device "
        f"power in watts on the right. {tail} Hover a connection for the exact shape of the tensor it carries; "
        "click a stage to open its page.",
        f"Pages built for this architecture: {', '.join(built)}."
        + (
            f" Not available for this architecture yet: {', '.join(missing)} (they explain stages of nilmbuild's "
            "own model)."
            if missing
            else " Every page explains this model as its own code computes it."
        ),
    ]


def disaggregation(cfg) -> list[str] | None:
    """The Disaggregation page's explanation for an upstream model (None: the spec's prose)."""
    arch = _arch(cfg)
    if arch is None:
        return None
    L, C = int(cfg.window), int(cfg.window) // 2
    out = (
        "CondiNILM's output after its soft gate, clamped at 0 W as its evaluation clamps it"
        if arch == "condinilm"
        else "the original NILMFormer's output, de-normalised with its stats token"
    )
    return [
        f"The model's answer: on top the household aggregate it sees, below one lane per appliance with the "
        f"predicted power (filled area) against the ground truth (dashed), in watts: {out}, converted with the "
        f"checkpoint's scalers. Play split slides the stacked predictions apart into their own lanes. Full day "
        f"predicts one day of the test split window by window (seq2subseq): each {L}-step window contributes its "
        f"centre {C} steps, and the dashed seams mark the hand-over. The post-processing selector shows the raw "
        "stitched output, the clamp at 0 W and the cap of the devices' sum at the aggregate (nilmbuild's); the "
        "gate-based suppression steps of nilmbuild's own model do not apply to this architecture. The table "
        "gives the day's metrics. Hover or focus the plot and use the arrow keys for exact values.",
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
