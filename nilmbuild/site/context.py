"""SiteContext: everything the page builders draw from, computed once per `nilmbuild site` run.

Every number on every page comes from here: the loaded checkpoint, the prepared data (scaled with the
checkpoint's own scalers), the fixed example batch, and the capture of a real forward pass of it.
Page builders (nilmbuild/site/views/*.py) take a SiteContext and return a PageSpec; they call
`ctx.blob(patterns, samples)` to get a small msgpack blob holding only the records their page draws.
"""

from __future__ import annotations

import time
from concurrent import futures
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from nilmbuild import __version__
from nilmbuild.memory import release_freed_memory
from nilmbuild.model.checkpoint import Loaded, load_checkpoint
from nilmbuild.model.spec_notes import as_dicts as spec_notes


@dataclass
class SiteContext:
    loaded: Loaded
    source: str
    household: object  # nilmbuild.data.Household
    prepared: object  # nilmbuild.data.preprocess.Prepared (checkpoint scalers)
    x: np.ndarray  # (B, 7, L) example batch, model input
    y: np.ndarray  # (B, M, 2, L) ground truth [scaled power, state]
    t0: np.ndarray  # (B,) window start times, datetime64[s]
    capture: object  # nilmbuild.capture.Capture of the example batch
    seed: int = 0
    notes: list = field(default_factory=spec_notes)
    cache: bool = False  # read and write the build caches (capture, the Why page's explanations)

    def blob(self, names, samples=None) -> bytes:
        """msgpack blob with only `names` (names or glob patterns) for `samples` (batch indices; None = all)."""
        from nilmbuild.capture.format import encode

        return encode(self.capture, names=names, samples=samples)

    def notes_for(self, page: str) -> list[dict]:
        return [n for n in self.notes if page in n["pages"]]

    @cached_property
    def checkpoint_label(self) -> str:
        """File name + short content hash: identifies the weights without leaking (or depending on) local paths."""
        from pathlib import Path

        return f"{Path(self.loaded.path).name} (sha256 {self.loaded.fingerprint[:12]})"

    @cached_property
    def private_names(self) -> dict[str, str]:
        """Local spellings of the inputs (data source and checkpoint paths, as given and absolute) -> the
        public names pages show instead (file or folder name + content hash; nilmbuild.site.privacy)."""
        from pathlib import Path

        from nilmbuild.pipeline import data_settings
        from nilmbuild.site.privacy import source_replacements

        names = {}
        for spec in (data_settings(self.loaded.provenance)["source"], self.source):
            names.update(source_replacements(spec))
        if self.loaded.path:
            for spelling in (str(self.loaded.path), str(Path(self.loaded.path).resolve())):
                names[spelling] = self.checkpoint_label
        return names

    def public(self, obj):
        """`obj` (JSON-like) with every local path replaced by a public name: use for anything a page shows."""
        from nilmbuild.site.privacy import scrub

        return scrub(obj, self.private_names)

    @property
    def meta(self) -> dict:
        """Provenance shown in every page footer (no local paths: see `public`)."""
        prov = self.loaded.provenance or {}
        return {
            "nilmbuild_version": __version__,
            "checkpoint": self.checkpoint_label,
            "checkpoint_version": self.loaded.nilmbuild_version,
            "data_source": self.public(self.source),
            "trained_on": self.public(str(prov.get("source", "unknown"))),
            "devices": self.loaded.devices,
        }

    @cached_property
    def disaggregation(self) -> dict:
        """A full day of the test split, stitched by seq2subseq and post-processed (nilmbuild.infer)."""
        from nilmbuild.infer import disaggregate_series

        test = self.prepared.test
        day = int(round(86400 / self.prepared.resample_s))
        return disaggregate_series(self.loaded, self.prepared, start=0, length=min(day, len(test.timestamps)))


def cached_capture(loaded, x, y, t0, *, cache: bool = True):
    """capture_batch(loaded, x, y, t0), or the same Capture from the cache (nilmbuild.capture.cache) when the
    checkpoint's fingerprint, the batch, the settings and the capture code are all unchanged."""
    from pathlib import Path

    from nilmbuild.capture import cache as capture_cache
    from nilmbuild.capture import capture_batch

    if not cache or not loaded.fingerprint:
        return capture_batch(loaded, x, y, t0)
    settings = {"ablations": True, "checkpoint_file": Path(loaded.path).name, "nilmbuild": __version__}
    key = capture_cache.capture_key(loaded.fingerprint, x, y, t0, settings)
    cap = capture_cache.load(key)
    if cap is None:
        cap = capture_batch(loaded, x, y, t0)
        capture_cache.save(key, cap)
    return cap


def _prefetch_live(loaded) -> futures.Future:
    """Start the live model's slow build products in threads while the data loads: the runtime's gzip (zlib, which
    releases the GIL; overlaps the capture too) and the ONNX export (-> its Future)."""
    from nilmbuild.live.export import prefetch_onnx
    from nilmbuild.live.runtime import prefetch_gzipped_wasm
    from nilmbuild.provenance import ASSET_ROOT

    prefetch_gzipped_wasm(ASSET_ROOT)
    return prefetch_onnx(loaded)


def make_context(
    checkpoint: str | None = None,
    source: str | None = None,
    *,
    batch: int = 32,
    seed: int = 0,
    house: int | None = None,
    unit: str | None = None,
    span: tuple | None = None,
    timings: dict | None = None,
    cache: bool = False,
    export_live: bool = False,
) -> SiteContext:
    """Load the checkpoint, prepare the data with its scalers, pick the example batch and capture it.

    source/house/unit/span default to what the checkpoint was trained on (the simulator is re-run with the same
    days and seed, so its test split is the held-out part the model never saw).
    cache: reuse (and store) the capture in the capture cache (`nilmbuild site` does unless --no-cache).
    export_live: for a build whose pages run the model, gzip the live model's runtime and export its graph in
    threads (nilmbuild/live/runtime.py, export.py) while the data loads.
    """
    from nilmbuild.data.preprocess import example_batch
    from nilmbuild.pipeline import data_settings, load_household_for, prepare_for

    t = time.perf_counter()
    loaded = load_checkpoint(checkpoint)
    exporting = _prefetch_live(loaded) if export_live else None
    household = load_household_for(loaded, source, house, unit=unit, span=span)
    prepared = prepare_for(loaded, household)
    x, y, t0 = example_batch(prepared, split="test", batch_size=batch, seed=seed)
    release_freed_memory()  # the simulator's and the preparation's temporaries
    if exporting is not None:
        # the exporter traces the model: done before the capture runs it (the page that needs the graph reports a
        # failed export)
        futures.wait([exporting])
    t_load = time.perf_counter()
    cap = cached_capture(loaded, x, y, t0, cache=cache)
    if timings is not None:
        timings["load"], timings["capture"] = t_load - t, time.perf_counter() - t_load
    ctx = SiteContext(
        loaded=loaded,
        source=source or data_settings(loaded.provenance)["source"],
        household=household,
        prepared=prepared,
        x=x,
        y=y,
        t0=t0,
        capture=cap,
        seed=seed,
        cache=cache,
    )
    cap.meta = ctx.public(cap.meta)  # provenance and command lines go into every page's blob
    return ctx
