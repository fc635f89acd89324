"""Scalers (spec 2.2): fitted on the training split (NaN ignored), applied elementwise, stored in checkpoints as
JSON-able dicts; every one inverts as watts = z * a + b (`affine`), which is all the pages receive."""

from __future__ import annotations

import numpy as np

from nilmbuild.errors import UserError


class Scaler:
    """fit on train values (NaN ignored), transform / inverse elementwise, JSON-able state."""

    kind = ""
    keys: tuple[str, ...] = ()

    def __init__(self, **state: float):
        for k in self.keys:
            setattr(self, k, float(state.get(k, 0.0)))

    def to_dict(self) -> dict:
        return {"kind": self.kind, **{k: getattr(self, k) for k in self.keys}}

    @staticmethod
    def from_dict(d: dict) -> Scaler:
        cls = SCALERS.get(d["kind"]) or FIXED_SCALERS[d["kind"]]
        return cls(**{k: d[k] for k in cls.keys})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k):.6g}' for k in self.keys)})"

    def affine(self) -> tuple[float, float]:
        """(a, b) with inverse(z) = z * a + b: every scaler here is affine, and this is its one inverse."""
        raise NotImplementedError

    def inverse(self, z):
        a, b = self.affine()
        return z * a + b if b else z * a


def _safe(d: float) -> float:
    """A divisor that is never 0 (a constant training series scales by 1)."""
    return d if np.isfinite(d) and abs(d) > 1e-6 else 1.0


class MaxScaling(Scaler):
    """x / max(x) (default)."""

    kind, keys = "max", ("max",)

    def fit(self, x):
        self.max = _safe(float(np.nanmax(x)))
        return self

    def transform(self, x):
        return x / self.max

    def affine(self):
        return self.max, 0.0


class StandardScaling(Scaler):
    """(x - mean) / std."""

    kind, keys = "standard", ("mean", "std")

    def fit(self, x):
        self.mean, self.std = float(np.nanmean(x)), _safe(float(np.nanstd(x)))
        return self

    def transform(self, x):
        return (x - self.mean) / self.std

    def affine(self):
        return self.std, self.mean


class MinMaxScaling(Scaler):
    """(x - min) / (max - min)."""

    kind, keys = "minmax", ("min", "max")

    def fit(self, x):
        self.min, self.max = float(np.nanmin(x)), float(np.nanmax(x))
        self.max = self.min + _safe(self.max - self.min)
        return self

    def transform(self, x):
        return (x - self.min) / (self.max - self.min)

    def affine(self):
        return self.max - self.min, self.min


class MeanScaling(Scaler):
    """x / mean(x)."""

    kind, keys = "mean", ("mean",)

    def fit(self, x):
        self.mean = _safe(float(np.nanmean(x)))
        return self

    def transform(self, x):
        return x / self.mean

    def affine(self):
        return self.mean, 0.0


class AffineScaling(Scaler):
    """(x - offset) / scale with fixed statistics: how an imported upstream checkpoint's NILMscaler scales
    (nilmbuild/model/upstream/inputs.py); never fitted by nilmbuild."""

    kind, keys = "affine", ("offset", "scale")

    def fit(self, x):
        raise UserError("the affine scaler holds an imported checkpoint's statistics: it is never fitted")

    def transform(self, x):
        return (x - self.offset) / self.scale

    def affine(self):
        return self.scale, self.offset


SCALERS = {c.kind: c for c in (MaxScaling, StandardScaling, MinMaxScaling, MeanScaling)}  # what `prep` fits
#: Scalers a checkpoint may hold but nilmbuild never fits (imported statistics).
FIXED_SCALERS = {AffineScaling.kind: AffineScaling}


def scaler_affine(d: dict) -> tuple[float, float]:
    """A scaler's dict (a checkpoint's or a Prepared's `scalers` entry) -> (a, b) with watts = z * a + b: its
    `affine()`, the one inverse every scaler uses."""
    a, b = Scaler.from_dict(d).affine()
    return float(a), float(b)


def scaler_affines(scalers: dict) -> dict:
    """``{"aggregate": {"a", "b"}, "appliances": {name: {"a", "b"}}}``: scaled units -> watts as ``z * a + b``
    per channel, from a prepared dataset's (or checkpoint's) scalers. What the pages receive, so the JS does no
    scaler arithmetic of its own."""

    def ab(d: dict) -> dict:
        a, b = scaler_affine(d)
        return {"a": a, "b": b}

    return {
        "aggregate": ab(scalers["aggregate"]),
        "appliances": {name: ab(d) for name, d in (scalers.get("appliances") or {}).items()},
    }


def make_scaler(kind: str) -> Scaler:
    if kind not in SCALERS:
        raise UserError(f"unknown scaler {kind!r}; use one of {', '.join(SCALERS)}")
    return SCALERS[kind]()


def scaler_from_dict(d: dict) -> Scaler:
    return Scaler.from_dict(d)
