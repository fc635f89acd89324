"""Overview page (architecture.md 1, 4.2, 13.1): the whole forward pass as an animated data flow.

The diagram's nodes and edges are a fixed description of the architecture (which stage feeds which, and
which page shows it); every shape, axis list and doc string on an edge comes from the capture records of
the real forward pass (the ``flow`` blob), and the input/output sparklines from the capture blob.
"""

from __future__ import annotations

import msgpack

from nilmbuild.model import names
from nilmbuild.site.build import PageSpec

from ._common import io_names, view_page

#: The dilated embedding's last ResUnit output (the shipped config's four dilations 1, 2, 4, 8).
LAST_UNIT_OUT = names.embed_unit(3, "out")

SLUG = "index"
TITLE = "Overview"
SECTION = "1, 4.2"
SUMMARY = "The whole pipeline as a data flow, from the household aggregate to per-device watts; a map of every page."

#: Nodes: id, label, phase, page slug (if that page exists), the record whose tensor leaves the node.
#: Column/row position is in abstract grid units; the JS lays them out to the canvas size.
NODES = [
    {
        "id": "input",
        "label": "Aggregate + time",
        "sub": "1 + 6 channels",
        "phase": "input",
        "page": "data",
        "record": names.INPUT,
        "col": 0,
        "row": 1,
    },
    {
        "id": "norm",
        "label": "Instance norm",
        "sub": "per sample",
        "phase": "embedding",
        "page": "embedding",
        "record": names.INSTANCE_NORM,
        "col": 1,
        "row": 1,
    },
    {
        "id": "embed",
        "label": "Dilated conv",
        "sub": "d = 1, 2, 4, 8",
        "phase": "embedding",
        "page": "embedding",
        "record": LAST_UNIT_OUT,
        "col": 2,
        "row": 1,
    },
    {
        "id": "pos",
        "label": "+ Positional",
        "sub": "learnable",
        "phase": "embedding",
        "page": "embedding",
        "record": names.EMBED_WITH_POS,
        "col": 3,
        "row": 1,
    },
    {
        "id": "proj",
        "label": "Projection",
        "sub": "1x1 conv",
        "phase": "embedding",
        "page": "forward",
        "record": names.TRANSPOSE_IN,
        "col": 4,
        "row": 1,
    },
    {
        "id": "enc0",
        "label": "Encoder 0",
        "sub": "attn + FFN",
        "phase": "transformer",
        "page": "encoder",
        "record": names.encoder(0, "out"),
        "col": 5,
        "row": 1,
    },
    {
        "id": "enc1",
        "label": "Encoder 1",
        "sub": "attn + FFN",
        "phase": "transformer",
        "page": "attention",
        "record": names.encoder(1, "out"),
        "col": 6,
        "row": 1,
    },
    {
        "id": "enc2",
        "label": "Encoder 2",
        "sub": "attn + FFN",
        "phase": "transformer",
        "page": "encoder",
        "record": names.encoder(2, "out"),
        "col": 7,
        "row": 1,
    },
    {
        "id": "heads",
        "label": "Device heads",
        "sub": "gate x power",
        "phase": "output",
        "page": "gate",
        "record": names.TRANSPOSE_OUT,
        "col": 8,
        "row": 1,
    },
    {
        "id": "output",
        "label": "Per-device watts",
        "sub": "output FiLM",
        "phase": "output",
        "page": "disaggregation",
        "record": names.OUTPUT_POWER,
        "col": 9,
        "row": 1,
    },
    {
        "id": "cond",
        "label": "Condition features",
        "sub": "5 electrical + 8 bands",
        "phase": "conditioning",
        "page": "film",
        "record": names.cond("vector"),
        "col": 2,
        "row": 2.25,
    },
    {
        "id": "film_enc",
        "label": "Encoder FiLM",
        "sub": "45 -> 32 -> 576",
        "phase": "conditioning",
        "page": "film",
        "record": names.film("film_enc", "gamma_mean"),
        "col": 5,
        "row": 2.25,
    },
    {
        "id": "film_dec",
        "label": "Output FiLM",
        "sub": "45 -> 32 -> 2",
        "phase": "conditioning",
        "page": "film",
        "record": names.film("film_dec", "gamma"),
        "col": 8,
        "row": 2.25,
    },
]

#: Edges: from, to, the record that flows along it (its shape is shown on hover).
EDGES = [
    ("input", "norm", names.INPUT),
    ("norm", "embed", names.INSTANCE_NORM),
    ("embed", "pos", LAST_UNIT_OUT),
    ("pos", "proj", names.EMBED_WITH_POS),
    ("proj", "enc0", names.TRANSPOSE_IN),
    ("enc0", "enc1", names.encoder(0, "out")),
    ("enc1", "enc2", names.encoder(1, "out")),
    ("enc2", "heads", names.TRANSPOSE_OUT),
    ("input", "cond", names.cond("vector")),
    ("cond", "film_enc", names.film("film_enc", "input")),
    ("cond", "film_dec", names.film("film_dec", "input")),
    ("film_enc", "enc0", names.film("film_enc", "gamma_mean")),
    ("film_enc", "enc1", names.film("film_enc", "gamma_mean")),
    ("film_enc", "enc2", names.film("film_enc", "gamma_mean")),
    ("film_dec", "output", names.film("film_dec", "gamma")),
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


def flow_edges(devices) -> list[tuple[str, str, str]]:
    """The fixed edges plus one heads -> output edge per device (its head's final power)."""
    return EDGES + [("heads", "output", names.head(d, "power")) for d in devices]


def _edge(a: str, b: str, record: str, devices) -> dict:
    """One edge as the page reads it; a per-device edge names its device (the JS never parses record names)."""
    out = {"from": a, "to": b, "record": record}
    dev = [d for d in devices if a == "heads" and record == names.head(d, "power")]
    if dev:
        out["device"] = dev[0]
    return out


def flow_blob(capture) -> bytes:
    devices = capture.meta.get("devices") or []
    edges = flow_edges(devices)
    names = sorted({n["record"] for n in NODES} | {e[2] for e in edges})
    missing = [n for n in names if n not in capture.records]
    if missing:
        raise KeyError(f"overview: capture has no record {missing}")
    return msgpack.packb(
        {
            "nodes": NODES,
            "edges": [_edge(a, b, r, devices) for a, b, r in edges],
            "records": {n: _record_meta(capture, n) for n in names},
            "batch_size": int(capture.batch_size),
        },
        use_bin_type=True,
    )


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
    return view_page(
        __name__,
        data={"names": io_names()},
        blobs={"capture": ctx.blob(list(io_names().values()), samples), "flow": flow_blob(ctx.capture)},
        context={"provenance": provenance, "notes": ctx.notes_for(SLUG), "all_notes": ctx.notes},
    )
