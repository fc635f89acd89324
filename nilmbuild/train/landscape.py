"""The loss landscape around a checkpoint's weights (Li et al., "Visualizing the Loss Landscape of Neural
Nets", NeurIPS 2018), with the training trajectory projected onto it.

Two random directions d1, d2 in parameter space (seeded Gaussian), filter-normalised: every row ("filter") of
every weight matrix is rescaled to the norm of the same row of the weights, so a step of 1 along a direction
moves each filter by its own size; 1-D parameters (biases, LayerNorm gains) get zero direction, as in the
paper. The validation loss (the training objective's 8 base components with the device-type weights, soft
gate, exactly as `trainer.validate` computes it) is evaluated at theta* + a d1 + b d2 on a grid of (a, b)
on one fixed, seeded batch of validation windows.

Each epoch's weights (OUT.trajectory.pt) are projected onto the plane by least squares: the point (a, b)
closest to theta_e - theta*, with the fraction of |theta_e - theta*|^2 the plane captures ("in_plane") and the
true loss of theta_e on the same batch. Random directions in ~700k dimensions are nearly orthogonal to any
fixed path, so expect a short projected path with small in_plane fractions: that is the honest picture.

The result is a plain dict stored in the checkpoint as extra["landscape"] (see `landscape_record`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from nilmbuild.errors import UserError

METHOD = (
    "filter-normalised random directions (Li et al. 2018); biases and other 1-D parameters get zero "
    "direction; loss = validation objective (8 base components, device-type weights, soft gate)"
)


@dataclass
class ValBatch:
    x: torch.Tensor  # (B, 7, L)
    y: torch.Tensor  # (B, D, L) scaled target power
    s: torch.Tensor  # (B, D, L) ON/OFF
    lo: torch.Tensor  # (B, D, L) long-OFF mask
    t0: list  # window starts (ISO strings)
    weights: list  # LossWeights per device
    pos_weight: torch.Tensor

    def data(self) -> dict:
        """The batch in `trainer.validate`'s layout."""
        return {"x": self.x, "y": self.y, "s": self.s, "lo": self.lo}


def val_batch(loaded, prepared, n: int, seed: int) -> ValBatch:
    """`n` validation windows picked by `example_batch` (seeded) with the checkpoint's device-type loss weights."""
    from nilmbuild.data.preprocess import example_batch

    from .losses import LossWeights, long_off_mask

    types = (loaded.extra or {}).get("device_types") or {}
    missing = [d for d in loaded.devices if d not in types]
    if missing:
        raise UserError(
            f"checkpoint {loaded.path} has no device types for {', '.join(missing)} (extra['device_types']): "
            "it was not written by `nilmbuild train`; train one with it"
        )
    weights = [LossWeights(**types[d]["weights"]) for d in loaded.devices]
    x, y, t0 = example_batch(prepared, split="val", batch_size=n, seed=seed)
    st = np.asarray(y[:, :, 1])
    lo = long_off_mask(st, [w.long_off_steps for w in weights])
    return ValBatch(
        x=torch.as_tensor(np.asarray(x, np.float32)),
        y=torch.as_tensor(np.asarray(y[:, :, 0], np.float32)),
        s=torch.as_tensor(st.astype(np.float32)),
        lo=torch.as_tensor(lo),
        t0=[str(np.datetime64(t, "m")) for t in t0],
        weights=weights,
        pos_weight=torch.tensor([w.pos_weight for w in weights]),
    )


@torch.no_grad()
def batch_loss(model, b: ValBatch) -> float:
    """The validation objective on the batch (what `trainer.validate` reports as "loss")."""
    from .losses import loss_components, weight_matrix
    from .validation import BASE_COMPONENTS

    soft = model(b.x, gate_mode="soft")
    c = loss_components(soft.power, soft.gate_logit, b.y, b.s, None, b.lo, b.pos_weight)
    wm = weight_matrix(b.weights, 0.0, 0.0)
    return float(sum(wm[k] * v for k, v in c.items() if k in BASE_COMPONENTS).sum())


def filter_normalised(params: dict[str, torch.Tensor], gen: torch.Generator) -> dict[str, torch.Tensor]:
    """A Gaussian direction with each filter (row) scaled to the norm of the weights' row; 1-D -> zeros."""
    out = {}
    for k, w in params.items():
        if w.dim() <= 1:
            out[k] = torch.zeros_like(w)
            continue
        r = torch.randn(w.shape, generator=gen, dtype=torch.float32)
        wn = w.reshape(w.shape[0], -1).norm(dim=1)
        rn = r.reshape(r.shape[0], -1).norm(dim=1)
        out[k] = r * (wn / (rn + 1e-10)).view(-1, *([1] * (w.dim() - 1)))
    return out


def _params(model) -> dict[str, torch.Tensor]:
    return {k: p.detach().clone().float() for k, p in model.named_parameters()}


@torch.no_grad()
def _set(model, base, d1, d2, a: float, b: float) -> None:
    for k, p in model.named_parameters():
        p.copy_(base[k] + a * d1[k] + b * d2[k])


def _flat(tensors: dict, keys) -> torch.Tensor:
    return torch.cat([tensors[k].reshape(-1).float() for k in keys])


def project(state: dict, base, d1, d2) -> dict:
    """Least-squares (a, b) of state - base on span(d1, d2), and the fraction of its norm in that plane."""
    keys = list(base)
    missing = [k for k in keys if k not in state]
    if missing:
        raise UserError(
            f"the trajectory's weights lack {missing[0]} ({len(missing)} parameters): "
            "it belongs to another model; pass the trajectory written with this checkpoint"
        )
    delta = _flat(state, keys) - _flat(base, keys)
    D = torch.stack([_flat(d1, keys), _flat(d2, keys)], dim=1).double()
    coef = torch.linalg.lstsq(D, delta.double().unsqueeze(1)).solution.squeeze(1)
    norm = float(delta.double().norm())
    resid = float((delta.double() - D @ coef).norm())
    frac = 1.0 - (resid / norm) ** 2 if norm > 0 else 1.0
    return {"alpha": float(coef[0]), "beta": float(coef[1]), "distance": norm, "in_plane": max(0.0, frac)}


def trajectory_states(traj: dict | None, epochs_upto: int | None) -> list[tuple[int, dict]]:
    """(epoch, state) pairs of a loaded trajectory file, epochs 1..epochs_upto only when given."""
    if traj is None:
        return []
    pairs = [(int(e), s) for e, s in zip(traj["epochs"], traj["states"])]
    if epochs_upto is not None:
        pairs = [(e, s) for e, s in pairs if e <= epochs_upto]
    return pairs


def grid_axis(grid: int, span: float) -> list[float]:
    """`grid` evenly spaced steps from -span to span (odd grid: 0 is the middle one)."""
    return [float(v) for v in np.linspace(-span, span, grid)]


def compute_landscape(
    model, batch: ValBatch, *, grid: int, span: float, seed: int, trajectory: list[tuple[int, dict]] = (), progress=None
) -> dict:
    """Loss on the (grid x grid) plane around the model's weights, and the trajectory projected onto it.

    progress: called with the number of forward passes done after each one (None: silent). The model's
    weights are restored afterwards. Returns the dict `landscape_record` stores.
    """
    if grid < 3 or grid % 2 == 0:
        raise UserError(f"--grid {grid}: use an odd number >= 3 so the checkpoint itself is the middle point")
    was = model.training
    model.eval()
    base = _params(model)
    gen = torch.Generator().manual_seed(seed)
    d1, d2 = filter_normalised(base, gen), filter_normalised(base, gen)
    axis = grid_axis(grid, span)
    tick = progress or (lambda n: None)
    loss = np.zeros((grid, grid))
    try:
        for i, b in enumerate(axis):  # rows: beta (direction 2)
            for j, a in enumerate(axis):  # columns: alpha (direction 1)
                _set(model, base, d1, d2, a, b)
                loss[i, j] = batch_loss(model, batch)
                tick(1)
        points = []
        for epoch, state in trajectory:
            p = project(state, base, d1, d2)
            _set_state(model, state, base)
            points.append({"epoch": epoch, **p, "loss": batch_loss(model, batch)})
            tick(1)
    finally:
        _set(model, base, d1, d2, 0.0, 0.0)
        model.train(was)
    return _record(loss, axis, span, seed, batch, points)


@torch.no_grad()
def _set_state(model, state: dict, base: dict) -> None:
    for k, p in model.named_parameters():
        p.copy_(state[k].float() if k in state else base[k])


def _record(loss: np.ndarray, axis: list, span: float, seed: int, batch: ValBatch, points: list) -> dict:
    g = len(axis)
    i, j = np.unravel_index(int(np.argmin(loss)), loss.shape)
    return {
        "format": "nilmbuild-landscape",
        "version": 1,
        "method": METHOD,
        "seed": int(seed),
        "grid": g,
        "span": float(span),
        "alpha": axis,
        "beta": axis,
        "loss": [[float(v) for v in row] for row in loss],  # loss[i][j]: beta = axis[i], alpha = axis[j]
        "centre_loss": float(loss[g // 2, g // 2]),
        "min": {"alpha": axis[j], "beta": axis[i], "loss": float(loss[i, j])},
        "batch": {
            "split": "val",
            "windows": int(batch.x.shape[0]),
            "seed": int(seed),
            "chosen_by": "example_batch",
            "t0_first": batch.t0[0] if batch.t0 else None,
            "t0_last": batch.t0[-1] if batch.t0 else None,
        },
        "trajectory": points,
    }
