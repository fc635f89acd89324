"""What a page needs to carry the live model: its page data, its blob (the ONNX graph) and the shared runtime.

    data, blobs, files = live_parts(ctx.loaded)
    PageSpec(..., entry="page_playground.js", data={"live": data, ...}, blobs=blobs, files=files)

The page's JS hands `data` and `blob("model")` to createLiveModel (static/js/live_model.js). Everything the JS
needs to know about the model (devices, window, channels, time step, the aggregate scaler, output names and
which Trace record each equals, heads, layers, gate thresholds) is written here, never typed into JS.
"""

from __future__ import annotations

from nilmbuild.live.export import OUTPUTS, STAGES, inverse_affine, onnx_bytes
from nilmbuild.live.runtime import RUNTIME_FILE, runtime_script

MODEL_BLOB = "model"


def live_data(loaded) -> dict:
    from nilmbuild.api import Model

    cfg = loaded.cfg
    a, b = inverse_affine(loaded.scalers["aggregate"])
    return {
        "runtime": RUNTIME_FILE,
        "blob": MODEL_BLOB,
        "devices": list(loaded.devices),
        "window": int(cfg.window),
        "channels": int(cfg.c_in + cfg.n_exo),
        "stepS": Model(loaded).step_s,
        "aggregate": {"a": a, "b": b},
        "outputs": list(OUTPUTS),
        "stages": dict(STAGES),
        "heads": int(cfg.n_head),
        "layers": int(cfg.n_encoder_layers),
        "thresholds": [float(d.gate_threshold) for d in cfg.devices],
    }


def live_parts(loaded) -> tuple[dict, dict[str, bytes], dict[str, bytes]]:
    """(page data, blobs, site files) for a page that runs the model."""
    from nilmbuild.site.assets import ROOT

    return live_data(loaded), {MODEL_BLOB: onnx_bytes(loaded)}, {RUNTIME_FILE: runtime_script(ROOT)}
