"""The `site` and `serve` commands."""

from __future__ import annotations

from pathlib import Path

import click

from nilmbuild.cli_options import checkpoint_option, house_option, source_option, span_of, unit_option


@click.command()
@checkpoint_option("Checkpoint to load (default: the shipped one, trained on the built-in simulator).")
@source_option()
@house_option
@click.option("--seed", type=int, default=0, show_default=True, help="Seed that picks the example batch.")
@click.option(
    "--out",
    "-o",
    type=click.Path(file_okay=False),
    default="site",
    show_default=True,
    help="Output folder. Only files nilmbuild wrote before are ever removed from it.",
)
@click.option(
    "--pages",
    "pages_opt",
    default=None,
    metavar="SLUG,SLUG",
    help="Build only these pages (comma-separated slugs); others are left as they are.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
@click.option(
    "--no-cache",
    is_flag=True,
    help="Build afresh: neither read nor write the capture, site and explanation caches ($XDG_CACHE_HOME/nilmbuild/"
    "captures, .../sites and .../explanations, default ~/.cache/nilmbuild/). Explanations stored in the checkpoint "
    "(`nilmbuild explain --store`) are still used: they are part of it.",
)
@click.option("--clear-cache", is_flag=True, help="Empty the capture and site caches first (only their *.pkl entries).")
@unit_option
def site(checkpoint, source, house, start, end, seed, out, pages_opt, quiet, no_cache, clear_cache, unit) -> None:
    """Build the static site: one self-contained HTML page per view (no network needed to view it).

    Loads the checkpoint, prepares the data with the checkpoint's scalers, runs the fixed example batch
    (32 windows of 480 minutes from the test split) through the model, captures every intermediate tensor
    and renders the pages from them. Two caches make rebuilds fast: the capture, keyed by a content hash of
    the checkpoint, the example batch and the capture code; and the built files, keyed by the checkpoint,
    these options, the data files' sizes and times and all of nilmbuild's code: a rebuild with nothing
    changed only writes them again (--no-cache redoes everything).

    The Why page's attributions (Captum, ~12 CPU s) come from the checkpoint when it stores them for the
    window served (the shipped one does; `nilmbuild explain --store -c CKPT` adds them to yours), else from
    the explanation cache, else they are computed (docs/attributions.md, "The Why page").

    \b
    Examples:
      nilmbuild site                                   # shipped checkpoint + built-in simulator
      nilmbuild site --out public/ --pages attention   # rebuild one page elsewhere
      nilmbuild site -c runs/ukdale.pt -s csv:../shared/data/ukdale-house2-30s
    """
    import time

    from nilmbuild.errors import UserError
    from nilmbuild.site import site_cache
    from nilmbuild.site.build import write_site
    from nilmbuild.site.pages import NAV_ORDER

    def say(msg):
        if not quiet:
            click.echo(msg, err=True)

    only = [s.strip() for s in pages_opt.split(",") if s.strip()] if pages_opt else None
    unknown = [s for s in only or () if s not in NAV_ORDER]
    if unknown:
        raise UserError(f"unknown page(s) {', '.join(unknown)}; available: {', '.join(NAV_ORDER)}")
    t0 = time.perf_counter()
    if clear_cache:
        from nilmbuild.capture.cache import clear
        from nilmbuild.explain.served_cache import clear as clear_explanations

        n = clear() + site_cache.clear() + clear_explanations()
        say(f"removed {n} cached capture(s), site(s) and Why-page explanation(s)")
    span = [start, end]  # --start/--end choose the data too
    args = {"source": source, "house": house, "span": span, "seed": seed, "unit": unit, "pages": only}
    key = None if no_cache else site_cache.site_key(checkpoint, args)
    files = site_cache.load(key) if key else None
    if files is not None:
        say(
            "checkpoint, data and code unchanged since a build: its files come from the site cache (--no-cache redoes it)"
        )
        result = write_site(out, files, partial=only is not None)
    else:
        _prefetch_runtime()
        from nilmbuild.site.context import make_context
        from nilmbuild.site.pages import build_all

        say("loading checkpoint and data, capturing the example batch ...")
        ctx = make_context(
            checkpoint,
            source,
            seed=seed,
            house=house,
            unit=unit,
            span=span_of(start, end),
            cache=not no_cache,
            export_live=True,
        )
        result = build_all(ctx, out, build_only=only, progress=not quiet)
        if key:
            site_cache.save(key, result.files, ctx.source)
    say(
        f"wrote {len(result.written)} files to {result.out_dir}/"
        + (f", removed {len(result.removed)} stale" if result.removed else "")
        + f" in {time.perf_counter() - t0:.1f} s"
    )
    if not quiet:
        click.echo(f"open {Path(result.out_dir, 'index.html').resolve().as_uri()}  (or: nilmbuild serve --dir {out})")


def _prefetch_runtime() -> None:
    """Start gzipping the live model's runtime (~0.8 s of zlib, which releases the GIL) in a thread now, before torch
    is imported: the import takes ~1 s of one core while the other idles (make_context would start it later)."""
    from nilmbuild.live.runtime import prefetch_gzipped_wasm
    from nilmbuild.provenance import ASSET_ROOT

    prefetch_gzipped_wasm(ASSET_ROOT)


@click.command()
@click.option(
    "--dir", "directory", type=click.Path(file_okay=False), default="site", show_default=True, help="Folder to serve."
)
@click.option(
    "--port",
    "-p",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port on 127.0.0.1 (0 = any free port).",
)
def serve(directory: str, port: int) -> None:
    """Serve the built site on http://127.0.0.1:PORT/ (Ctrl+C to stop).

    The pages also work straight from disk; serving is for previewing them as GitHub Pages would.

    \b
    Example:
      nilmbuild site && nilmbuild serve --port 8080
    """
    from nilmbuild.site.serve import make_server, url_of

    server = make_server(directory, port)
    click.echo(f"serving {directory}/ at {url_of(server)}  (Ctrl+C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
