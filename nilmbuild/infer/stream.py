"""`nilmbuild disaggregate` in bounded memory: the chain of `load_data_for(whole=True)` + `predict_split` + the CSV,
run chunk by chunk with seams that give exactly the whole-series numbers (tests/test_infer_stream.py).

Three stages, each holding a bounded buffer:

1. `grid_chunks`: the source's samples of [i0 - F, i1 + F) bins (F = the forward-fill limit + 1, so a gap that
   crosses a seam is filled or left exactly as in the whole series) are resampled, forward-filled, validated and
   clipped as `nilmbuild.data.preprocess.prepare` does, and bins [i0, i1) are kept.
2. `ModelStream`: seq2subseq's padded series is kept as a rolling buffer; a batch of windows runs once its last
   window's input is complete, in the same batches of `batch_size` windows as the whole-series run (so the model
   sees identical tensors), and its window centres are handed on.
3. `PostStream`: post-processing needs context. The pools of the long-OFF step need `off_window` samples each
   side; the short-activation step works on ON segments, which can be long, so a block is cut only at a *safe*
   sample p where every device's model decision is OFF for its `min_off_steps` samples before p: an OFF run that
   long is never bridged, so no segment crosses p and the block's segments are the whole series'. Blocks are
   post-processed with that context and their rows written as they are finished.

Peak memory is the model, one chunk of each stage and the source's own reader: a `nilmtk:` store is read by range
(`nilmbuild.data.nilmtk_range`), other sources are loaded whole first (their series is ~30 B per sample).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch

from nilmbuild.data.preprocess import bounded_ffill, resample
from nilmbuild.errors import UserError
from nilmbuild.memory import release_freed_memory

from .postprocess import postprocess
from .seq2subseq import _outputs, geometry, pad_series

#: Grid bins per chunk of stage 1 (a week at the 1-min default).
CHUNK_BINS = 10_080


class HouseholdRange:
    """Range reads of a Household already in memory (every source but `nilmtk:`)."""

    def __init__(self, hh):
        self.hh = hh
        self.meta = hh.meta
        self.devices = tuple(hh.appliances)
        self._sec = hh.timestamps.astype("datetime64[s]").astype(np.int64)

    def extent(self) -> tuple[int, int]:
        """(first, last) sample time in unix seconds."""
        return int(self._sec[0]), int(self._sec[-1])

    def read(self, lo_s: int, hi_s: int):
        """-> (timestamps datetime64[s], aggregate, {device: values}) of the samples in [lo_s, hi_s)."""
        a, b = np.searchsorted(self._sec, [lo_s, hi_s])
        hh = self.hh
        return hh.timestamps[a:b], hh.aggregate[a:b], {d: v[a:b] for d, v in hh.appliances.items()}


@contextlib.contextmanager
def open_source(loaded, source, house, date_from=None, date_to=None, unit=None, span=None):
    """The range reader `disaggregate` streams from: a `nilmtk:` store range by range, else the loaded Household."""
    from nilmbuild.pipeline import load_household_for, nilmtk_source_for

    store = nilmtk_source_for(loaded, source, house, span)
    if store is None:
        hh = load_household_for(loaded, source, house, date_from=date_from, date_to=date_to, unit=unit, span=span)
        yield HouseholdRange(hh)
        return
    from nilmbuild.data.nilmtk_range import NilmtkRange

    path, building, span = store
    with NilmtkRange(Path(path).expanduser(), building, span, (date_from, date_to)) as src:
        yield src


def grid_chunks(src, cfg, chunk_bins: int | None = None) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(timestamps (L,) datetime64[s], clipped aggregate W (L,) float32, valid (L,) bool) per chunk of the grid
    `prepare(hh, cfg)` builds: bins of cfg.resample_s from the first sample, bounded forward-fill, cut-off."""
    from nilmbuild.data.preprocess import _defaults

    step, devs = int(cfg.resample_s), tuple(cfg.devices)
    _, _, cutoff, _, _, _ = _defaults(_MetaOnly(src.meta), cfg)
    first, last = src.extent()
    origin = first // step * step
    n = (last - origin) // step + 1
    max_fill = max(0, int(cfg.ffill_max_s // step))
    ctx = max_fill + 1
    chunk_bins = int(chunk_bins or CHUNK_BINS)
    for i0 in range(0, n, chunk_bins):
        i1 = min(n, i0 + chunk_bins)
        a, b = max(0, i0 - ctx), min(n, i1 + ctx)
        ts, agg, apps = src.read(origin + a * step, origin + b * step)
        grid = [bounded_ffill(resample(ts, agg, origin + a * step, step, b - a), max_fill)[0]]
        grid += [
            bounded_ffill(resample(ts, apps[d], origin + a * step, step, b - a), max_fill)[0] for d in devs if d in apps
        ]
        keep = slice(i0 - a, i1 - a)
        valid = np.isfinite(np.stack(grid)).all(axis=0)[keep]
        agg_w = np.where(valid, np.clip(grid[0][keep], 0, cutoff), 0.0).astype(np.float32)
        yield (origin + np.arange(i0, i1, dtype=np.int64) * step).astype("datetime64[s]"), agg_w, valid


class _MetaOnly:
    """What `preprocess._defaults` reads of a Household: its meta."""

    def __init__(self, meta: dict):
        self.meta = meta


class ModelStream:
    """seq2subseq over a series that arrives in chunks; `push` returns the window centres ready so far."""

    def __init__(self, model, n_total: int, step_s: int, batch_size: int, progress=None):
        self.model, self.step_s, self.B = model, int(step_s), max(1, int(batch_size))
        self.W = int(getattr(getattr(model, "cfg", None), "window", 480))
        self.exo = getattr(getattr(model, "cfg", None), "exo_variables", None)  # an upstream model's time features
        self.g = geometry(n_total, self.W)
        self.T = n_total
        self.buf: np.ndarray | None = None  # padded-coordinate samples [buf_start, buf_start + width)
        self.buf_start = 0
        self.next_window = 0
        self.progress = progress
        model.eval()

    def push(self, x: np.ndarray, ts: np.ndarray, last: bool) -> tuple[np.ndarray, np.ndarray]:
        """Append the (7, L) model input of the next L samples -> (power (D, K), gate (D, K)) of the next K samples."""
        g = self.g
        parts = [] if self.buf is None else [self.buf]
        if self.buf is None:
            parts.append(pad_series(x[:, :1], g.pad_left, 0, ts[:1], self.step_s, self.exo)[:, : g.pad_left])
        parts.append(x)
        if last:
            parts.append(pad_series(x[:, -1:], 0, g.pad_right, ts[-1:], self.step_s, self.exo)[:, 1:])
        self.buf = np.concatenate(parts, axis=1)
        return self._run(last)

    def _run(self, last: bool):
        g, outs, k_prev = self.g, {"power": [], "gate": []}, self.next_window
        while self.next_window < g.n_windows:
            k1 = min(self.next_window + self.B, g.n_windows)
            if (k1 - 1) * g.centre + self.W - self.buf_start > self.buf.shape[1]:
                break  # the batch's last window is not complete yet
            self._batch(self.next_window, k1, outs)
            self.next_window = k1
        self._trim()
        if not outs["power"]:
            return None, None
        n_new = min(self.next_window * g.centre, self.T) - k_prev * g.centre  # the last centre is cropped to T
        return tuple(_stitch(outs[k])[:, :n_new] for k in ("power", "gate"))

    @torch.no_grad()
    def _batch(self, k0: int, k1: int, outs: dict) -> None:
        g = self.g
        starts = np.arange(k0, k1, dtype=np.int64) * g.centre - self.buf_start
        xb = torch.from_numpy(np.stack([self.buf[:, a : a + self.W] for a in starts]))
        out = _outputs(self.model, xb, "hard")  # an upstream model runs as its own evaluation does
        for k in outs:
            outs[k].append(out[k][:, :, g.margin : g.margin + g.centre].float().cpu().numpy())
        if self.progress is not None:
            self.progress(k1, g.n_windows)

    def _trim(self) -> None:
        drop = self.next_window * self.g.centre - self.buf_start
        if drop > 0:
            self.buf = self.buf[:, drop:]
            self.buf_start += drop


def _stitch(parts: list) -> np.ndarray:
    """[(B, D, C)] window centres -> (D, n*C) in time order."""
    a = np.concatenate(parts, axis=0)
    return np.ascontiguousarray(a.transpose(1, 0, 2).reshape(a.shape[1], -1), dtype=np.float32)


class PostStream:
    """Post-processing of stitched output that arrives in order; `push` returns the finished samples."""

    def __init__(self, loaded, pc, devices):
        self.loaded, self.pc, self.devices = loaded, pc, list(devices)
        self.thr = np.array([float(pc.gate_thresholds.get(d, 0.5)) for d in self.devices])[:, None]
        self.min_off = [int(pc.min_off_steps.get(d, 1)) for d in self.devices]
        self.ctx = int(pc.off_window) + 1
        self.hist = max(self.ctx, max(self.min_off, default=1))
        self.power = self.gate = None  # (D, ·) from global index self.start
        self.agg = np.zeros(0, np.float32)
        self.start = 0  # global index of buffer column 0
        self.base = 0  # first sample not yet finished

    def push(self, power, gate, agg: np.ndarray, last: bool):
        """Append stitched (D, K) output and the (K,) aggregate -> (final W (D, L), finished global range)."""
        if power is not None:
            self.power = power if self.power is None else np.concatenate([self.power, power], axis=1)
            self.gate = gate if self.gate is None else np.concatenate([self.gate, gate], axis=1)
            self.agg = np.concatenate([self.agg, agg])
        if self.power is None:
            return None, (self.base, self.base)
        end = self.start + self.power.shape[1]
        p = end if last else self._safe_cut(end)
        if p is None or p <= self.base:
            return None, (self.base, self.base)
        final = self._finish(p, end)
        done = (self.base, p)
        self.base = p
        self._trim()
        return final, done

    def _safe_cut(self, end: int):
        """The last p <= end - ctx where every device was OFF (gate <= its threshold) for min_off samples before p."""
        on = self.gate > self.thr  # (D, N)
        c = np.concatenate([np.zeros((on.shape[0], 1), np.int64), np.cumsum(on, axis=1)], axis=1)  # (D, N + 1)
        ok = np.ones(c.shape[1], bool)
        for i, m in enumerate(self.min_off):
            ok[:m] = False
            ok[m:] &= (c[i, m:] - c[i, :-m]) == 0
        hi = end - self.ctx - self.start
        lo = self.base - self.start + 1
        cand = np.flatnonzero(ok[lo : hi + 1]) if hi >= lo else np.zeros(0, np.int64)
        return None if cand.size == 0 else int(cand[-1] + lo + self.start)

    def _finish(self, p: int, end: int) -> np.ndarray:
        a = max(self.start, self.base - self.hist)
        b = min(end, p + self.ctx)
        s = slice(a - self.start, b - self.start)
        post = postprocess(
            self.power[:, s], self.gate[:, s], self.devices, self.loaded.scalers, self.pc, aggregate_w=self.agg[s]
        )
        return post["final_w"][:, self.base - a : p - a]

    def _trim(self) -> None:
        drop = max(0, self.base - self.hist - self.start)
        if drop:
            self.power, self.gate, self.agg = self.power[:, drop:], self.gate[:, drop:], self.agg[drop:]
            self.start += drop


def csv_lines(times: np.ndarray, cols: dict, valid: np.ndarray) -> str:
    """Rows of the disaggregate CSV: time (UTC, 'Z'), then each column in W with 0.1 W, empty where invalid."""
    table = np.stack([np.where(valid, v, np.nan) for v in cols.values()], axis=1)
    return "".join(
        t + "Z," + ",".join("" if np.isnan(v) else f"{v:.1f}" for v in row) + "\n" for t, row in zip(times, table)
    )


def stream_setup(loaded, src):
    """(PrepConfig, PostConfig) of `disaggregate`: the checkpoint's data settings over the whole series, as
    `pipeline.prepare_for(loaded, hh, whole=True)` and `series.predict_split` set them."""
    from nilmbuild.data.preprocess import _defaults, _to_steps
    from nilmbuild.pipeline import _prep_config, data_settings

    from .postprocess import PostConfig

    cfg = _prep_config(
        data_settings(getattr(loaded, "provenance", {}))["prep"],
        window=loaded.cfg.window,
        fractions=(1.0, 0.0, 0.0),
        val_from=None,
        test_from=None,
    )
    sc = (loaded.scalers or {}).get("appliances", {})
    absent = [d for d in cfg.devices if d not in sc]
    if "aggregate" not in (loaded.scalers or {}) or absent:
        raise UserError(
            f"the checkpoint's scalers do not cover {', '.join(absent) or 'the aggregate'}: "
            "use a checkpoint trained on these devices"
        )
    _, _, _, _, min_on_s, min_off_s = _defaults(_MetaOnly(src.meta), cfg)
    step = int(cfg.resample_s)
    pc = PostConfig.for_model(
        loaded,
        step_s=step,
        min_on_steps={d: _to_steps(min_on_s.get(d, 0), step) for d in cfg.devices},
        min_off_steps={d: _to_steps(min_off_s.get(d, 0), step) for d in cfg.devices},
    )
    return cfg, pc


def stream_rows(loaded, src, cfg, pc, *, batch_size: int, progress: Callable | None = None) -> Iterator[str]:
    """CSV text (header first) of `nilmbuild disaggregate` over `src`, chunk by chunk."""
    from nilmbuild.pipeline import model_input

    devs = loaded.devices
    first, last = src.extent()
    step = int(cfg.resample_s)
    n = (last - first // step * step) // step + 1
    model = ModelStream(loaded.model, n, step, batch_size, progress)
    post = PostStream(loaded, pc, devs)
    yield ",".join(["time", "aggregate", *devs]) + "\n"
    pending = {"ts": [], "agg": [], "valid": []}
    any_valid, seen = False, 0
    for ts, agg, valid in grid_chunks(src, cfg):
        seen += ts.shape[0]
        any_valid |= bool(valid.any())
        for k, v in zip(pending, (ts, agg, valid)):
            pending[k].append(v)
        power, gate = model.push(model_input(loaded, ts, agg), ts, last=seen == n)
        k = 0 if power is None else power.shape[1]
        final, (a, b) = post.push(power, gate, _take(pending, "agg", k, post), last=seen == n)
        if final is not None:
            yield _rows(pending, final, devs, b - a)
        release_freed_memory()  # glibc keeps freed chunk-sized arrays otherwise: RSS would drift up by chunks
    if not any_valid:
        raise UserError(
            f"{src.meta.get('source')}: the train split has no valid data; use more data or other split dates"
        )


def _take(pending: dict, key: str, k: int, post: PostStream) -> np.ndarray:
    """The aggregate of the next k samples handed to the post stage (kept in `pending` for the CSV)."""
    got = post.start + (0 if post.power is None else post.power.shape[1])
    allv = np.concatenate(pending[key]) if pending[key] else np.zeros(0, np.float32)
    off = got - pending.setdefault("_first", 0)
    return allv[off : off + k]


def _rows(pending: dict, final: np.ndarray, devs, L: int) -> str:
    """CSV rows of the next L finished samples; drops them from `pending`."""
    cat = {k: np.concatenate(pending[k]) for k in ("ts", "agg", "valid")}
    times = np.datetime_as_string(cat["ts"][:L], unit="s")
    cols = {"aggregate": cat["agg"][:L], **{d: final[i] for i, d in enumerate(devs)}}
    text = csv_lines(times, cols, cat["valid"][:L])
    for k in ("ts", "agg", "valid"):
        pending[k] = [cat[k][L:]]
    pending["_first"] = pending.get("_first", 0) + L
    return text
