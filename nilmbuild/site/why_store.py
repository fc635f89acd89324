"""`nilmbuild explain --store` without the Click layer: find the window the Why page serves, explain it with a
progress bar and store the result in the checkpoint (nilmbuild/explain/served_store.py), rewriting the file atomically."""

from __future__ import annotations

import sys
from pathlib import Path

from nilmbuild.errors import UserError


def store_explanations(checkpoint, source=None, house=None, unit=None, echo=print) -> dict:
    """Compute the Why page's explanations of the site's served window (the example batch of `nilmbuild site`
    with these data options, seed 0) and store them as extra["why"] in the checkpoint; returns the entry."""
    from tqdm import tqdm

    from nilmbuild.explain.served import PROGRESS_UNITS, SITE, explain_served
    from nilmbuild.explain.served_store import KEY, make_entry
    from nilmbuild.model.checkpoint import default_checkpoint_path, load_checkpoint, update_extra
    from nilmbuild.site.context import make_context
    from nilmbuild.site.views import why

    path = Path(checkpoint) if checkpoint else default_checkpoint_path()
    arch = load_checkpoint(path).architecture
    if arch not in why.ARCHITECTURES:
        raise UserError(f"--store: a {arch!r} checkpoint's site has no Why page ({path})")
    echo("loading checkpoint and data, capturing the example batch ...")
    ctx = make_context(str(path), source, house=house, unit=unit, cache=True)
    sample = why.window_sample(ctx)
    agg, start = why.served_window(ctx, sample)
    with tqdm(total=PROGRESS_UNITS, desc=f"explaining the window at {start}", file=sys.stderr, leave=False) as bar:
        res = explain_served(ctx.loaded, agg, start, SITE, progress=bar.update)
    entry = make_entry(ctx.loaded, res, agg, start, SITE)
    update_extra(path, KEY, entry)
    echo(f"stored extra[{KEY!r}] (the Why page's window at {start}) in {path}")
    return entry
