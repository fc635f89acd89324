"""Training page (architecture.md 10): the checkpoint's own training log (nilmbuild/train/trainer.py) and the
device-type classification stored with it (``loaded.extra["device_types"]``).

Nothing here is recomputed: the per-epoch records (loss components per device, PCGrad mean pairwise cosines
and projection counts, the anti-collapse / output-stats schedule, validation loss, MAE and F1, the
mean-per-appliance baseline) are shipped as they were logged. A checkpoint without a log (e.g. a randomly
initialised development checkpoint) gets a page that says so and draws nothing.
"""

from __future__ import annotations

import math

import msgpack

from nilmbuild.site import story
from nilmbuild.site.build import PageSpec

from ._common import view_page

SLUG = "training"
ARCHITECTURES = ("spec", "condinilm", "nilmformer")
TITLE = "Training"
SECTION = "10"
SUMMARY = "The checkpoint's training log: loss components per device, PCGrad conflicts, schedules, validation metrics, device types."


def _clean(d):
    if isinstance(d, dict):
        return {str(k): _clean(v) for k, v in d.items()}
    if isinstance(d, (list, tuple)):
        return [_clean(v) for v in d]
    if isinstance(d, bool) or d is None or isinstance(d, str):
        return d
    if isinstance(d, int):
        return int(d)
    try:
        v = float(d)
    except (TypeError, ValueError):
        return str(d)
    return v if math.isfinite(v) else None


def train_summary(loaded) -> dict:
    log = dict(loaded.train_log or {})
    extra = dict(loaded.extra or {})
    return _clean(
        {
            "epochs": log.get("epochs") or [],
            "devices": log.get("devices") or list(loaded.devices or []),
            "components": log.get("components") or [],
            "steps_per_epoch": log.get("steps_per_epoch"),
            "pcgrad": log.get("pcgrad"),
            "world_size": log.get("world_size"),
            "warmup_epochs": log.get("warmup_epochs"),
            "baseline_val": log.get("baseline_val") or {},
            "device_types": extra.get("device_types") or {},
            "best_epoch": extra.get("best_epoch"),
            "best_val_loss": extra.get("best_val_loss"),
            "landscape": extra.get("landscape"),  # `nilmbuild landscape` (nilmbuild/train/landscape.py), or None
            "train_config": {
                k: v
                for k, v in (extra.get("train_config") or {}).items()
                if k in ("epochs", "batch_size", "lr", "weight_decay", "grad_clip", "pcgrad", "days", "seed", "source")
            },
        }
    )


def _landscape_context(ls: dict | None) -> dict | None:
    """What the template states about the landscape (grid, seed, batch, trajectory) without the surface."""
    if not ls:
        return None
    return {
        k: ls.get(k)
        for k in ("grid", "span", "seed", "batch", "method", "centre_loss", "min", "epochs_upto", "trajectory_file")
    } | {"n_points": len(ls.get("trajectory") or [])}


def build(ctx) -> PageSpec:
    summary = ctx.public(train_summary(ctx.loaded))  # train_config holds the source and output paths
    has_log = bool(summary["epochs"])
    return view_page(
        __name__,
        data={"has_log": has_log, "story": story.training_story(ctx)},
        blobs={"train": msgpack.packb(summary, use_bin_type=True)},
        context={
            "has_log": has_log,
            "n_epochs": len(summary["epochs"]),
            "device_types": summary["device_types"],
            "checkpoint_path": ctx.checkpoint_label,
            "notes": ctx.notes_for(SLUG),
            "train_config": summary["train_config"],
            "best_epoch": summary["best_epoch"],
            "landscape": _landscape_context(summary["landscape"]),
        },
    )
