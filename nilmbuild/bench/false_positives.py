"""Where a device's false positives come from, on the built-in simulator: which unlabelled appliance was
running during each false-positive minute.

    python -m nilmbuild.bench.false_positives [--device microwave] [--checkpoint PATH] [--split test]

The checkpoint's own simulator settings (days, seed) are re-simulated with every unlabelled appliance kept
(simulate_household(keep_unlabelled=True): same random stream, same arrays), prepared and run exactly as
`nilmbuild evaluate` does. A minute is a false positive when the post-processed prediction is above the
device's ON threshold while its ground-truth state is OFF; it is attributed to every unlabelled appliance
drawing more than 50 W in that minute (so the counts may overlap).
"""

from __future__ import annotations

import argparse

import numpy as np

from nilmbuild.errors import UserError

RUNNING_W = 50.0


def _unlabelled_at(hh, timestamps: np.ndarray) -> dict[str, np.ndarray]:
    """Each unlabelled appliance's mean watts over the resampled step that starts at each timestamp."""
    step = int((timestamps[1] - timestamps[0]).astype("timedelta64[s]").astype(np.int64))
    per = step // hh.rate_s
    first = ((timestamps - hh.timestamps[0]).astype("timedelta64[s]").astype(np.int64)) // hh.rate_s
    out = {}
    for name, w in hh.meta["unlabelled"].items():
        means = w[: (w.size // per) * per].reshape(-1, per).mean(axis=1)
        out[name] = means[np.minimum(first // per, means.size - 1)]
    return out


def false_positive_sources(loaded, device: str = "microwave", split: str = "test") -> dict:
    """-> {"device", "split", "fp_minutes", "on_minutes_true", "fp_share_of_abs_error", "overlap": {name: minutes}}."""
    from nilmbuild.data.simulate import simulate_household
    from nilmbuild.infer.series import predict_split
    from nilmbuild.pipeline import data_settings, prepare_for, thresholds_for

    s = data_settings(loaded.provenance)
    if s["source"] not in ("synthetic", None):
        raise UserError(f"this checkpoint was trained on {s['source']!r}; the diagnosis needs the built-in simulator")
    if device not in loaded.devices:
        raise UserError(f"unknown device {device!r}; this checkpoint has {', '.join(loaded.devices)}")
    hh = simulate_household(days=s["days"], seed=s["seed"], keep_unlabelled=True)
    prepared = prepare_for(loaded, hh)
    sp = prepared.splits[split]
    post = predict_split(loaded, prepared, split)
    i, j = list(loaded.devices).index(device), list(prepared.devices).index(device)
    pred, y, on = post["final_w"][i], sp.appliances_w[j], sp.states[j] > 0
    fp = (pred > thresholds_for(prepared, [device])[device]) & ~on & sp.valid
    err = np.abs(pred - y)[sp.valid]
    running = _unlabelled_at(hh, sp.timestamps)
    return {
        "device": device,
        "split": split,
        "fp_minutes": int(fp.sum()),
        "on_minutes_true": int((on & sp.valid).sum()),
        "fp_share_of_abs_error": float(np.abs(pred - y)[fp].sum() / max(err.sum(), 1e-9)),
        "overlap": {n: int((fp & (w > RUNNING_W)).sum()) for n, w in running.items()},
    }


def main(argv=None) -> None:
    from nilmbuild.model.checkpoint import load_checkpoint

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="microwave")
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--split", default="test", choices=("train", "val", "test"))
    a = ap.parse_args(argv)
    r = false_positive_sources(load_checkpoint(a.checkpoint), a.device, a.split)
    print(
        f"{r['device']} on the {r['split']} split: {r['fp_minutes']} false-positive minutes "
        f"({r['on_minutes_true']} true ON minutes); they carry {r['fp_share_of_abs_error']:.0%} of the absolute error"
    )
    for name, m in sorted(r["overlap"].items(), key=lambda kv: -kv[1]):
        print(f"  {name:<10} running during {m:4d} of them")


if __name__ == "__main__":
    main()
