"""Build benchmarks: `nilmbuild site` phases and bytes (pages in Chromium: bench/pages.py)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from nilmbuild.capture import size_report
from nilmbuild.capture.format import decode


def bench_build() -> tuple[list[dict], list[dict], Path]:
    """Time `nilmbuild site` by phase on the shipped checkpoint; return (rows, size rows, site dir)."""
    from nilmbuild.site.context import make_context
    from nilmbuild.site.pages import build_all

    timings: dict = {}
    t = time.perf_counter()
    ctx = make_context(timings=timings)
    out = Path(tempfile.mkdtemp(prefix="nilmbuild-bench-site-"))
    build_all(ctx, out, timings=timings)
    total = time.perf_counter() - t
    rows = [
        {"group": "nilmbuild site (wall time)", "name": k, "seconds": timings[k], "share": timings[k] / total}
        for k in ("load", "capture", "serialize", "render")
    ]
    rows.append({"group": "nilmbuild site (wall time)", "name": "total", "seconds": total, "share": 1.0})
    return rows, size_rows(ctx, out), out


def site_sizes(site_dir: Path) -> dict[str, dict[str, int]]:
    """The built site's bytes as the page budget counts them (issue 12): {"pages": the HTML pages, "shared": the
    sibling files the pages load on demand, once per site (the live model's runtime and graph), "bookkeeping":
    nilmbuild's hidden files (.nojekyll, the manifest)}, each {path relative to the site: bytes}."""
    out: dict[str, dict[str, int]] = {"pages": {}, "shared": {}, "bookkeeping": {}}
    for f in sorted(p for p in Path(site_dir).rglob("*") if p.is_file()):
        rel = f.relative_to(site_dir).as_posix()
        kind = "bookkeeping" if rel.startswith(".") else "pages" if rel.endswith(".html") else "shared"
        out[kind][rel] = f.stat().st_size
    return out


def size_rows(ctx, site_dir: Path) -> list[dict]:
    sizes = site_sizes(site_dir)
    rows = [{"group": "bytes per page", "name": k, "bytes": b} for k, b in sizes["pages"].items()]
    rows.append(
        {"group": "bytes per page", "name": "total pages (the page budget)", "bytes": sum(sizes["pages"].values())}
    )
    total = sum(sum(v.values()) for v in sizes.values())
    rows.append({"group": "bytes per page", "name": "total site (pages + shared files)", "bytes": total})
    shared = "shared sibling files, loaded on demand once per site (not pages)"
    rows += [{"group": shared, "name": k, "bytes": b} for k, b in sizes["shared"].items()]
    rep = size_report(ctx.capture, samples=(0,))
    for g, b in sorted(rep["groups"].items(), key=lambda kv: -kv[1]):
        rows.append({"group": "capture bytes, one sample, per record group", "name": g, "bytes": b})
    rows.append(
        {
            "group": "capture bytes, one sample, per record group",
            "name": "total blob (budget 3 MB)",
            "bytes": rep["blob_bytes"],
        }
    )
    # attention: q, k (f16) + row lse (f32) per layer vs the weights matrix as plain float16
    reader = decode(ctx.blob(["encoder.*.attn.*"], samples=[0]))
    L, H = ctx.x.shape[-1], ctx.loaded.cfg.n_head
    plain = ctx.loaded.cfg.n_encoder_layers * H * L * L * 2
    stored = sum(reader.nbytes(n) for n in reader.names() if n.split(".")[-1] in ("q", "k", "lse"))
    rows.append({"group": "attention store, one sample, 3 layers", "name": "plain float16 weights", "bytes": plain})
    rows.append(
        {
            "group": "attention store, one sample, 3 layers",
            "name": "q + k (f16) + lse (f32)",
            "bytes": stored,
            "ratio": plain / stored,
        }
    )
    return rows
