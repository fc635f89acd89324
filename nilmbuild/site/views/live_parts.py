"""What a page needs to carry the live model: its page data and the two shared sibling files (runtime, graph).
The live package (nilmbuild/live) exports and runs the graph; this view helper turns it into page data and files.

    data, files = live_parts(ctx.loaded)
    PageSpec(..., entry="page_playground.js", data={"live": data, ...}, files=files)

The page's JS hands `data` to createLiveModel (static/js/live_model.js), which loads the runtime and the graph
from the sibling files named in it on first use. Everything the JS needs to know about the model (devices,
window, channels, time step, the aggregate scaler, output names and which Trace record each equals, heads,
layers, gate thresholds) is written here, never typed into JS.
"""

from __future__ import annotations

import functools
import threading

from nilmbuild.data.preprocess import scaler_affine
from nilmbuild.live.export import inputs, is_upstream, onnx_bytes, outputs, stages, what_if_defaults
from nilmbuild.live.runtime import RUNTIME_FILE, runtime_script

MODEL_FILE = "nilmbuild-model.js"  # the graph as a shared sibling script: one copy per site (live_parts)


def what_if_inputs(cfg) -> dict:
    """The graph's what-if inputs: name -> {key (the name in JS, runWindow's whatIf), dims, value (the default:
    the checkpoint unchanged, flat)}."""

    def camel(name: str) -> str:
        first, *rest = name.split("_")
        return first + "".join(w.title() for w in rest)

    return {
        k: {"key": camel(k), "dims": list(v.shape), "value": [float(x) for x in v.reshape(-1)]}
        for k, v in what_if_defaults(cfg).items()
    }


def live_data(loaded) -> dict:
    from nilmbuild.api import Model

    cfg = loaded.cfg
    a, b = scaler_affine(loaded.scalers["aggregate"])
    data = {
        "runtime": RUNTIME_FILE,
        "modelFile": MODEL_FILE,
        "devices": list(loaded.devices),
        "window": int(cfg.window),
        "channels": int(cfg.n_channels),
        "stepS": Model(loaded).step_s,
        "aggregate": {"a": a, "b": b},
        "outputs": list(outputs(loaded.cfg)),
        "stages": stages(loaded.cfg),
        "heads": int(cfg.n_head),
        "layers": int(cfg.n_encoder_layers),
        "thresholds": [] if is_upstream(cfg) else [float(d.gate_threshold) for d in cfg.devices],
        "inputs": list(inputs(cfg)),
        "whatIf": what_if_inputs(cfg),
    }
    if is_upstream(cfg):
        data["exo"] = time_feature_periods(cfg)
    return data


def time_feature_periods(cfg) -> list[list] | None:
    """An upstream model's time features for the page's model input (static/js/live_time.js): [name, period] per
    config exo variable, in order, each a sin then a cos channel. None: the spec's six."""
    if not is_upstream(cfg):
        return None
    from nilmbuild.model.upstream.inputs import PERIODS

    return [[name, PERIODS[name]] for name in cfg.exo_variables]


@functools.lru_cache(maxsize=2)  # five pages of a site carry the same graph: gzip and encode it once
def model_script(onnx: bytes) -> bytes:
    """The graph as a classic script that sets self.nilmbuildModel (gzipped, base64), loaded like the runtime
    file; the worker gunzips it (its diagonal-mask constants shrink to nothing: 3.6 -> 2.6 MB)."""
    import base64
    import gzip
    import hashlib

    key = hashlib.sha256(onnx).hexdigest()[:16]
    b64 = base64.b64encode(gzip.compress(onnx, compresslevel=6, mtime=0)).decode("ascii")
    head = "/* nilmbuild live model: the checkpoint's ONNX graph (docs/live-model.md), shared by the pages that run it */\n"
    return (head + f'self.nilmbuildModel = {{sha256: "{key}", gzipBase64: "{b64}"}};\n').encode("ascii")


_FILES_LOCK = threading.Lock()


def live_parts(loaded) -> tuple[dict, dict[str, bytes]]:
    """(page data, site files) for a page that runs the model (the Playground, the what-if pages): the runtime and
    the graph are the shared sibling files RUNTIME_FILE and MODEL_FILE, loaded on first use, so each page stays
    small (one copy per site, not per page) and a build of any one such page writes both. The site builds pages in
    two threads: the first makes (exports, gzips, caches) the files, under a lock, and the others reuse them."""
    from nilmbuild.provenance import ASSET_ROOT as ROOT

    with _FILES_LOCK:
        files = {RUNTIME_FILE: runtime_script(ROOT), MODEL_FILE: model_script(onnx_bytes(loaded))}
    return live_data(loaded), files


WHATIF_BLOB = "whatif_x"
TIE = 1e-4  # a step whose gate probability is this close to the threshold may flip between runtimes


def watts_bounds(loaded) -> dict[str, float]:
    """The issue's exactness bound per device: max(2 W, 1 % of its peak, the top of its training scaler)."""
    out = {}
    for d in loaded.devices:
        a, b = scaler_affine(loaded.scalers["appliances"][d])
        out[d] = max(2.0, 0.01 * (a + b))
    return out


def whatif_page(ctx, samples: list[int]) -> tuple[dict, dict[str, bytes], dict[str, bytes]]:
    """(page data `whatif`, blobs, site files) for a page with the what-if panel (static/js/whatif_panel.js),
    whose sample i is batch index samples[i]: each sample's exact scaled aggregate (float32, the model input's
    channel 0; the capture's `input` record is float16) and start time (the time features are rebuilt in the
    page), the records of the captured final power and its ablation runs, and the bounds."""
    import numpy as np

    from nilmbuild.model.names import ABLATIONS, OUTPUT_POWER, ablation

    spec, files = live_parts(ctx.loaded)
    power = OUTPUT_POWER
    data = {
        "live": spec,
        "input": WHATIF_BLOB,
        "starts": [str(np.datetime64(ctx.t0[s], "s")) for s in samples],
        "power": power,
        "ablations": {k: ablation(k, power) for k in ABLATIONS},
        "bound": watts_bounds(ctx.loaded),
        "tie": TIE,
    }
    x0 = np.ascontiguousarray(np.asarray(ctx.x, np.float32)[samples, 0]).astype("<f4")
    return data, {WHATIF_BLOB: x0.tobytes()}, files
