"""Overview page (architecture.md 1, 4.2, 13.1): the whole forward pass as an animated data flow.

The diagram's nodes and edges are a fixed description of the architecture (which stage feeds which, and
which page shows it); every shape, axis list and doc string on an edge comes from the capture records of
the real forward pass (the ``flow`` blob), and the input/output sparklines from the capture blob.
"""

from __future__ import annotations

import msgpack

from nilmbuild.model import names
from nilmbuild.site import story
from nilmbuild.site.build import PageSpec

from . import upstream_prose
from ._common import io_names, model_sizes, view_page
from .flow_nodes import encoder_col, node


def _built_pages(ctx) -> tuple[list[str], list[str]]:
    """The titles of the pages this site builds for the model's architecture, and of those it does not build."""
    from nilmbuild.site.pages import NAV_ORDER, architecture_of_ctx, nav_order_for, view_module

    cfg = ctx.loaded.cfg
    built = nav_order_for(architecture_of_ctx(ctx))

    def title(slug: str) -> str:
        return upstream_prose.title(slug, view_module(slug).TITLE, cfg)

    return [title(s) for s in built], [title(s) for s in NAV_ORDER if s not in built]


SLUG = "index"
ARCHITECTURES = ("spec", "condinilm", "nilmformer")
TITLE = "Overview"
SECTION = "1, 4.2"
SUMMARY = "The whole pipeline as a data flow, from the household aggregate to per-device watts; a map of every page."

#: Encoder layers share the diagram's columns ENCODER_COLS (first, last); the JS lays columns out to the canvas.
ENCODER_COLS = (5, 7)


def last_unit_out(cfg) -> str:
    """The dilated embedding's last ResUnit output (one unit per dilation)."""
    return names.embed_unit(len(cfg.dilations) - 1, "out")


def nodes(cfg) -> list[dict]:
    """The diagram's nodes: id, label, the size line under it (from the model), phase, page slug, the record whose
    tensor leaves the node, and its position in abstract grid units (column, row)."""
    m = model_sizes(cfg)
    n = m["n_layers"]
    film = f"{m['film_in']} -> {m['film_hidden']} ->"
    encoders = [
        node(f"enc{l}", f"Encoder {l}", "attn + FFN", "transformer", "attention" if l % 2 else "encoder",
              names.encoder(l, "out"), encoder_col(l, n, ENCODER_COLS), 1)
        for l in range(n)
    ]  # fmt: skip
    return [
        node("input", "Aggregate + time", f"1 + {m['n_exo']} channels", "input", "data", names.INPUT, 0, 1),
        node("norm", "Instance norm", "per sample", "embedding", "embedding", names.INSTANCE_NORM, 1, 1),
        node("embed", "Dilated conv", "d = " + ", ".join(str(d) for d in m["dilations"]), "embedding", "embedding",
              last_unit_out(cfg), 2, 1),
        node("pos", "+ Positional", "learnable", "embedding", "embedding", names.EMBED_WITH_POS, 3, 1),
        node("proj", "Projection", "1x1 conv", "embedding", "forward", names.TRANSPOSE_IN, 4, 1),
        *encoders,
        node("heads", "Device heads", "gate x power", "output", "gate", names.TRANSPOSE_OUT, 8, 1),
        node("output", "Per-device watts", "output FiLM", "output", "disaggregation", names.OUTPUT_POWER, 9, 1),
        node("cond", "Condition features", f"{m['n_elec']} electrical + {m['n_freq_bands']} bands", "conditioning",
              "film", names.cond("vector"), 2, 2.25),
        node("film_enc", "Encoder FiLM", f"{film} {m['film_enc_out']}", "conditioning", "film",
              names.film("film_enc", "gamma_mean"), 5, 2.25),
        node("film_dec", "Output FiLM", f"{film} 2", "conditioning", "film", names.film("film_dec", "gamma"), 8, 2.25),
    ]  # fmt: skip


def flow_edges(cfg) -> list[tuple[str, str, str]]:
    """Edges: from, to, the record that flows along it (its shape is shown on hover); one heads -> output edge
    per device (its head's final power)."""
    n = int(cfg.n_encoder_layers)
    gamma = names.film("film_enc", "gamma_mean")
    return [
        ("input", "norm", names.INPUT),
        ("norm", "embed", names.INSTANCE_NORM),
        ("embed", "pos", last_unit_out(cfg)),
        ("pos", "proj", names.EMBED_WITH_POS),
        ("proj", "enc0", names.TRANSPOSE_IN),
        *((f"enc{l}", f"enc{l + 1}", names.encoder(l, "out")) for l in range(n - 1)),
        (f"enc{n - 1}", "heads", names.TRANSPOSE_OUT),
        ("input", "cond", names.cond("vector")),
        ("cond", "film_enc", names.film("film_enc", "input")),
        ("cond", "film_dec", names.film("film_dec", "input")),
        *(("film_enc", f"enc{l}", gamma) for l in range(n)),
        ("film_dec", "output", names.film("film_dec", "gamma")),
        *(("heads", "output", names.head(d, "power")) for d in cfg.device_names),
    ]


def pick_samples(batch: int, n: int = 8) -> list[int]:
    """n batch indices spread evenly over the batch (all of them when the batch is smaller)."""
    if batch <= n:
        return list(range(batch))
    return sorted({int(round(i * (batch - 1) / (n - 1))) for i in range(n)})


def _record_meta(capture, name: str) -> dict:
    r = capture.records[name]
    return {
        "name": name,
        "shape": [int(s) for s in r.shape],
        "axes": list(r.axes),
        "stage": str(r.stage),
        "section": str(r.section),
        "doc": str(r.doc),
    }


def _edge(a: str, b: str, record: str, devices) -> dict:
    """One edge as the page reads it; a per-device edge names its device (the JS never parses record names)."""
    out = {"from": a, "to": b, "record": record}
    dev = [d for d in devices if a == "heads" and record == names.head(d, "power")]
    if dev:
        out["device"] = dev[0]
    return out


def _graph(cfg) -> tuple[list[dict], list[dict], str]:
    """(nodes, edges, the encoder layers' caption) of the checkpoint's own architecture."""
    if hasattr(cfg, "arch"):
        from . import upstream_flow

        film = ", FiLM" if cfg.arch == "condinilm" and cfg.use_film else ""
        caption = f"attention over {cfg.window} + 1 tokens (stats token last), FFN{film}"
        return upstream_flow.nodes(cfg), upstream_flow.edges(cfg), caption
    devices = list(cfg.device_names)
    edges = [_edge(a, b, r, devices) for a, b, r in flow_edges(cfg)]
    return nodes(cfg), edges, "masked attention, FFN, FiLM"


def flow_blob(capture, cfg) -> bytes:
    node_list, edges, caption = _graph(cfg)
    names = sorted({n["record"] for n in node_list} | {e["record"] for e in edges})
    missing = [n for n in names if n not in capture.records]
    if missing:
        raise KeyError(f"overview: capture has no record {missing}")
    return msgpack.packb(
        {
            "nodes": node_list,
            "edges": edges,
            "encoder_caption": caption,
            "records": {n: _record_meta(capture, n) for n in names},
            "batch_size": int(capture.batch_size),
        },
        use_bin_type=True,
    )


ARCHITECTURE_NAMES = {
    "spec": "nilmbuild's NILMFormer (the prose spec)",
    "condinilm": "CondiNILM (github.com/davidzha712/CondiNILM), as its own code computes it",
    "nilmformer": "the original NILMFormer (Petralia et al., KDD 2025), as its own code computes it",
}


def architecture_rows(loaded) -> list[tuple[str, str]]:
    """The architecture, and for an imported checkpoint the upstream file it came from: its name and sha256 as the
    import recorded them (provenance["upstream"]["files"]; never a local path). Nothing for the spec's model."""
    arch = getattr(loaded.cfg, "arch", "spec")
    if arch == "spec":
        return []
    rows = [("Architecture", ARCHITECTURE_NAMES[arch])]
    up = (loaded.provenance or {}).get("upstream") or {}
    for role, f in (up.get("files") or {}).items():
        if isinstance(f, dict) and f.get("name"):
            rows.append((f"Upstream {role}", f"{f['name']} (sha256 {f.get('sha256', 'not recorded')})"))
    conf = loaded.cfg.upstream or {}
    parts = [conf[k] for k in ("dataset", "sampling_rate", "app") if conf.get(k) is not None]
    trained = ", ".join(", ".join(map(str, p)) if isinstance(p, (list, tuple)) else str(p) for p in parts)
    rows.append(("Trained on (upstream config)", trained or "not recorded in the upstream config"))
    return rows


def build(ctx) -> PageSpec:
    samples = pick_samples(ctx.capture.batch_size)
    meta = ctx.meta
    prov = ctx.loaded.provenance or {}
    provenance = [
        ("Checkpoint", str(meta.get("checkpoint"))),
        ("Checkpoint written by", f"nilmbuild {meta.get('checkpoint_version')}"),
        (
            "Trained on",
            f"{meta.get('trained_on')}"
            + (f", {prov['days']} days" if prov.get("days") else "")
            + (f", seed {prov['seed']}" if prov.get("seed") is not None else ""),
        ),
        ("Example data", f"{meta.get('data_source')} (test split, {int(ctx.capture.batch_size)} windows)"),
        ("Devices", ", ".join(meta.get("devices") or [])),
        ("No ground truth in this data", ", ".join(ctx.prepared.stats.get("missing") or []) or "none"),
        (
            "Data columns no device maps to (ignored)",
            ", ".join(ctx.prepared.meta.get("unknown_columns") or []) or "none",
        ),
        ("Site built with", f"nilmbuild {meta.get('nilmbuild_version')}"),
    ]
    if hasattr(ctx.loaded.cfg, "arch"):  # trained by the upstream's code: what its config says, not nilmbuild's data
        provenance = [(k, v) for k, v in provenance if k != "Trained on"]
        provenance[1:1] = architecture_rows(ctx.loaded)
    return view_page(
        __name__,
        data={"names": io_names(), "story": story.index_story(ctx)},
        blobs={"capture": ctx.blob(list(io_names().values()), samples), "flow": flow_blob(ctx.capture, ctx.loaded.cfg)},
        context={
            "provenance": provenance,
            "notes": ctx.notes_for(SLUG),
            "all_notes": ctx.notes,
            "upstream": upstream_prose.overview(ctx.loaded.cfg, *_built_pages(ctx)),
            "upstream_subject": upstream_prose.subject(ctx.loaded.cfg, ctx.loaded.provenance),
            "upstream_name": upstream_prose.display_name(ctx.loaded.cfg),
        },
    )
