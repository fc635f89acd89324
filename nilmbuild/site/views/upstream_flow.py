"""The overview's data-flow diagram for an upstream model (CondiNILM, the original NILMFormer): the nodes and edges
of its own forward pass (model/upstream/model.py), each edge naming the trace record that flows along it.

Same node format as index.nodes (id, label, size line, phase, page, record, column, row); the ids "input", "heads"
and "output" are the ones the page draws specially. Only components the model has get a node: the original has no
FiLM, no gate and no sparse CNN, CondiNILM without FiLM has no condition branch.
"""

from __future__ import annotations

from nilmbuild.model import names

from ._common import model_sizes
from .flow_nodes import encoder_col, node

ENCODER_COLS = (4, 6)  # the encoder layers spread over these columns


def _stem_nodes(cfg, m: dict) -> list[dict]:
    last = names.embed_unit(len(cfg.dilations) - 1, "out")
    return [
        node("input", "Aggregate + time", f"1 + {m['n_exo']} channels", "input", "data", names.INPUT, 0, 1),
        node("norm", "Instance norm", "power channel", "embedding", "embedding", names.INSTANCE_NORM, 1, 1),
        node("embed", "Dilated conv", f"1 -> {m['d_stem']}", "embedding", "embedding", last, 2, 1),
        node("time", "Time features", f"1x1 conv {m['n_exo']} -> {m['d_time']}", "embedding", "embedding",
              "time_proj", 2.5, 2.25),
        node("tokens", "Tokens", f"{m['window']} + stats token", "embedding", "embedding", "tokens", 3, 1),
    ]  # fmt: skip


def _head_nodes(cfg, m: dict) -> list[dict]:
    if cfg.arch == "nilmformer":
        return [
            node("heads", "Conv head", "de-normalised by stats", "output", "disaggregation", "head.conv", 8, 1),
            node(
                "stats", "Stats projection", "stats token -> mean', std'", "output", "embedding", "stats_out", 7, 2.25
            ),
        ]
    out = [node("heads", "Device heads", "shared head + adapters", "output", "gate", "output.power_ungated", 8, 1)]
    out.append(node("gate", "Soft gate", "scale, floor, bias", "output", "gate", "gate.prob", 8, 2.25))
    if cfg.sparse_indices:
        dev = cfg.devices[cfg.sparse_indices[0]]
        out.append(node("sparse", "Sparse CNN", f"{dev}: raw aggregate", "output", "gate",
                         f"sparse.{dev}.amplitude", 6.8, 2.25))  # fmt: skip
    if cfg.use_film:
        film = f"{m['film_in']} -> {m['film_hidden']} ->"
        out += [
            node("cond", "Condition features", f"{m['n_elec']} electrical + {m['n_freq_bands']} bands",
                  "conditioning", "film", names.cond("vector"), 1, 2.25),
            node("film_enc", "Encoder FiLM", f"{film} {m['film_enc_out']}", "conditioning", "film",
                  names.film("film_enc", "gamma_mean"), 4, 2.25),
            node("film_dec", "Output FiLM", f"{film} 1 per device", "conditioning", "film",
                  names.film("film_dec", "gamma"), 5.4, 2.25),
        ]  # fmt: skip
    return out


def nodes(cfg) -> list[dict]:
    m = model_sizes(cfg, cfg.step_s)
    n = m["n_layers"]
    encoders = [
        node(f"enc{l}", f"Encoder {l}", "attn + FFN", "transformer", "attention" if l % 2 else "encoder",
              names.encoder(l, "out"), encoder_col(l, n, ENCODER_COLS), 1)
        for l in range(n)
    ]  # fmt: skip
    final = node("final", "Final LayerNorm", "stats token leaves", "transformer", "encoder", "final_norm", 7, 1)
    output = node("output", "Per-device watts", "", "output", "disaggregation", names.OUTPUT_POWER, 9, 1)
    return [*_stem_nodes(cfg, m), *encoders, final, *_head_nodes(cfg, m), output]


def _e(a: str, b: str, record: str, device: str | None = None) -> dict:
    out = {"from": a, "to": b, "record": record}
    if device is not None:
        out["device"] = device
    return out


def edges(cfg) -> list[dict]:
    """Every edge, as the page reads it (a per-device edge names its device)."""
    n = int(cfg.n_encoder_layers)
    last = names.embed_unit(len(cfg.dilations) - 1, "out")
    out = [
        _e("input", "norm", names.INPUT),
        _e("norm", "embed", names.INSTANCE_NORM),
        _e("embed", "tokens", last),
        _e("input", "time", names.INPUT),
        _e("time", "tokens", "time_proj"),
        _e("tokens", "enc0", "tokens"),
        *(_e(f"enc{l}", f"enc{l + 1}", names.encoder(l, "out")) for l in range(n - 1)),
        _e(f"enc{n - 1}", "final", names.encoder(n - 1, "out")),
        _e("final", "heads", "final_norm"),
    ]
    if cfg.arch == "nilmformer":
        out += [_e("tokens", "stats", "stats_token"), _e("stats", "output", "stats_out")]
        return out + [_e("heads", "output", "head.conv", d) for d in cfg.devices]
    out += [_e("heads", "gate", "output.gate_logit"), _e("gate", "output", "gate.prob")]
    if cfg.sparse_indices:
        dev = cfg.devices[cfg.sparse_indices[0]]
        out += [_e("input", "sparse", names.INPUT), _e("sparse", "heads", f"sparse.{dev}.amplitude")]
    if cfg.use_film:
        gamma = names.film("film_enc", "gamma_mean")
        out += [_e("input", "cond", names.cond("vector")), _e("cond", "film_enc", names.film("film_enc", "input"))]
        out += [_e("cond", "film_dec", names.film("film_dec", "input"))]
        out += [_e("film_enc", f"enc{l}", gamma) for l in range(n)]
        out.append(_e("film_dec", "heads", names.film("film_dec", "gamma")))
    return out + [_e("heads", "output", "output.power_ungated", d) for d in cfg.devices]
