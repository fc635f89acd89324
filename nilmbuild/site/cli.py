"""The `site` and `serve` commands."""

from __future__ import annotations

from pathlib import Path

import click

from nilmbuild import __version__


@click.command()
@click.option("--checkpoint", "-c", type=click.Path(dir_okay=False), default=None,
              help="Checkpoint to load (default: the shipped one).")
@click.option("--source", "-s", default="synthetic", show_default=True,
              help="Data source: synthetic, csv:PATH, ukdale:PATH, refit:PATH, redd:PATH.")
@click.option("--out", "-o", type=click.Path(file_okay=False), default="site", show_default=True,
              help="Output folder. Only files nilmbuild wrote before are ever removed from it.")
@click.option("--pages", "pages_opt", default=None, metavar="SLUG,SLUG",
              help="Build only these pages (comma-separated slugs); others are left as they are.")
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
def site(checkpoint: str | None, source: str, out: str, pages_opt: str | None, quiet: bool) -> None:
    """Build the static site: one self-contained HTML page per view (no network needed to view it)."""
    from nilmbuild.site.build import build_site
    from nilmbuild.site.pages import capture_for_site, page_specs

    blobs, meta = capture_for_site(checkpoint, source)
    pages = page_specs(blobs, meta)
    context = {"nilmbuild_version": __version__, **meta}
    only = [s.strip() for s in pages_opt.split(",") if s.strip()] if pages_opt else None
    result = build_site(out, pages, context, build_only=only, progress=not quiet)
    if not quiet:
        click.echo(f"wrote {len(result.written)} files to {result.out_dir}/"
                   + (f", removed {len(result.removed)} stale" if result.removed else ""))
        click.echo(f"open {Path(result.out_dir, 'index.html').resolve().as_uri()}  (or: nilmbuild serve --dir {out})")


@click.command()
@click.option("--dir", "directory", type=click.Path(file_okay=False), default="site", show_default=True,
              help="Folder to serve.")
@click.option("--port", "-p", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port on 127.0.0.1 (0 = any free port).")
def serve(directory: str, port: int) -> None:
    """Serve the built site on http://127.0.0.1:PORT/ (Ctrl+C to stop)."""
    from nilmbuild.site.serve import make_server, url_of

    server = make_server(directory, port)
    click.echo(f"serving {directory}/ at {url_of(server)}  (Ctrl+C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
