"""The capture blob: a versioned msgpack map of records (docs/format.md), its writer and its Python reader.

Writer: `encode(capture, names=None, samples=None) -> bytes` (deterministic: same capture -> same bytes).
Reader: `decode(bytes) -> CaptureReader` with `.meta`, `.names()`, `.record(name)`, `.get(name)`.

Encodings
    f16      little-endian IEEE binary16, raw bytes (default for large float tensors)
    f32      little-endian IEEE binary32 (small tensors, lse, anything f16 cannot hold well)
    bits     0/1 tensors packed 8 per byte, least significant bit first
    f16z     sparse f16 (ReLU outputs): a bit mask (nonzero, LSB first, ceil(n/8) bytes) then the f16 values
             of the nonzero entries in order; decodes to exactly what f16 would
    u8bool   0/1 tensors, one byte each (the reader accepts it; the writer prefers bits)
    derived  no data: the tensor is an exact function (`op`) of other records, rebuilt by the reader.

Every derived op below is implemented identically (float64 arithmetic, rounded to float32 at the end) in
static/js/decode.js; tests/test_format.py and tests/js/decode.test.mjs hold both to the true tensors.
"""

from __future__ import annotations

import fnmatch
import functools
import math
from collections.abc import Callable

import msgpack
import numpy as np

from nilmbuild.errors import UserError

FORMAT = "nilmbuild-capture"
VERSION = 1
STORED_ENCODINGS = ("f16", "f32", "f16z", "bits", "u8bool")

# op name -> the record fields that name other records (dependencies), in a fixed order
OP_REFS: dict[str, tuple[str, ...]] = {
    "alias": ("src",),
    "permute": ("src",),
    "select": ("src",),
    "add": ("a", "b"),
    "mul": ("a", "b"),
    "gelu": ("src",),
    "layernorm": ("src", "weight", "bias"),
    "linear": ("src", "weight", "bias"),
    "film": ("src", "gamma", "beta"),
    "attention_scores": ("q", "k"),
    "attention_masked_scores": ("q", "k"),
    "attention_weights": ("q", "k", "lse"),
}


# ---------------------------------------------------------------------------------------------- numerics
#: erfc's Horner coefficients, innermost last: erfcc's polynomial in t
_ERFC_POLY = (1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398, 1.48851587, -0.82215223)
_ERFC_LAST = 0.17087277
_GELU_BLOCK = 1 << 14  # values per block: gelu's float64 temporaries stay in the CPU's cache


def erfc(x: np.ndarray) -> np.ndarray:
    """Complementary error function, Numerical Recipes `erfcc` (fractional error < 1.2e-7), float64.

    The JS decoder uses the same formula so that derived GELU agrees between the two readers:
    t = 1 / (1 + z/2), z = |x|; erfc = t exp(-z^2 - 1.26551223 + t (1.00002368 + t (0.37409196 + ...))) for x >= 0,
    2 - that below. Evaluated in place, each step rounded as the formula written out would be.
    """
    x = np.asarray(x, dtype=np.float64)
    z = np.abs(x)
    t = np.multiply(z, 0.5)
    t += 1.0
    np.divide(1.0, t, out=t)
    p = np.multiply(t, _ERFC_LAST)
    for c in reversed(_ERFC_POLY):  # p = t * (c + p), innermost first
        p += c
        p *= t
    e = np.negative(z, out=z)
    e *= np.abs(x)  # -z * z
    e -= 1.26551223
    e += p
    np.exp(e, out=e)
    e *= t
    return np.where(x >= 0, e, 2.0 - e)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, x * Phi(x) = 0.5 x erfc(-x / sqrt 2), in float64 (elementwise, in blocks of _GELU_BLOCK
    values so that erfc's float64 temporaries stay in cache)."""
    x = np.asarray(x)
    flat = x.reshape(-1)
    out = np.empty(flat.shape, dtype=np.float64)
    for i in range(0, flat.size, _GELU_BLOCK):
        v = flat[i : i + _GELU_BLOCK].astype(np.float64)
        e = erfc(-v / math.sqrt(2.0))
        v *= 0.5
        np.multiply(v, e, out=out[i : i + v.size])
    return out.reshape(x.shape)


def attention_scores64(q: np.ndarray, k: np.ndarray, scale: float, out: np.ndarray | None = None) -> np.ndarray:
    """(..., L, E) x (..., S, E) -> (..., L, S) float64 scaled dot products (into `out` if given).

    The readers' sum (decode.js does the same): term by term in order e = 0, 1, ... from 0, each product and sum
    rounded to float64. The product of two float32 values is exact in float64 (so a fused multiply-add rounds as a
    product then a sum would), and any loop that also adds the E terms in order gives the same bits: BLAS through
    numpy.matmul does for the model's small head size (~7x faster than einsum), numpy's einsum over (E, S)-laid-out
    keys does in a single thread (~3x faster than the explicit sum). `_fast_in_order` checks each of them once per
    shape, and only a path that passed is used.
    """
    fast = _fast_in_order(q.shape, k.shape)
    if fast is not None:
        return globals()[fast](q, k, scale, out)
    scores = _scores_in_order(q, k, scale)
    if out is None:
        return scores
    out[...] = scores
    return out


def _scores_blas(q: np.ndarray, k: np.ndarray, scale: float, out: np.ndarray | None = None) -> np.ndarray:
    q64 = np.ascontiguousarray(q, dtype=np.float64)
    k64 = np.ascontiguousarray(k, dtype=np.float64)  # (..., S, E), passed transposed: one layout always
    out = np.matmul(q64, np.swapaxes(k64, -1, -2), out=out)
    out *= float(scale)
    return out


def _scores_fast(q: np.ndarray, k: np.ndarray, scale: float, out: np.ndarray | None = None) -> np.ndarray:
    q64 = np.ascontiguousarray(q, dtype=np.float64)
    kt64 = np.ascontiguousarray(np.swapaxes(k, -1, -2), dtype=np.float64)  # (..., E, S): one layout always
    out = np.einsum("...le,...es->...ls", q64, kt64, out=out)
    out *= float(scale)
    return out


#: The fast ways to attention_scores64, fastest first (names: looked up when called).
_FAST_PATHS = ("_scores_blas", "_scores_fast")


def _scores_in_order(q: np.ndarray, k: np.ndarray, scale: float) -> np.ndarray:
    """attention_scores64 summed explicitly term by term (the definition; the fast path must equal it)."""
    q64, k64 = q.astype(np.float64), k.astype(np.float64)
    lead, L, S = q.shape[:-2], q.shape[-2], k.shape[-2]
    out = np.zeros(q.shape[:-1] + (S,), dtype=np.float64)
    rows = max(1, (1 << 17) // max(1, S * math.prod(lead)))  # blocks of query rows of about 1 MB: in cache
    term = np.empty(lead + (rows, S), dtype=np.float64)
    for i in range(0, L, rows):
        o, t = out[..., i : i + rows, :], term[..., : min(rows, L - i), :]
        for e in range(q.shape[-1]):
            np.multiply(q64[..., i : i + rows, e, None], k64[..., None, :, e], out=t)
            o += t
    out *= float(scale)
    return out


@functools.lru_cache(maxsize=64)
def _fast_in_order(q_shape: tuple, k_shape: tuple) -> str | None:
    """The first of _FAST_PATHS that sums (q_shape) x (k_shape) scores in the readers' order on this machine, or
    None. Checked bit for bit on random float32 operands of exactly these shapes (the loop order depends on the
    shapes and layout, not the values; full-mantissa random values make any other order show within a few of the
    products' sums)."""
    rng = np.random.default_rng(0)
    q = rng.standard_normal(q_shape).astype(np.float32)
    k = rng.standard_normal(k_shape).astype(np.float32)
    exact = _scores_in_order(q, k, 0.5)
    return next((f for f in _FAST_PATHS if np.array_equal(globals()[f](q, k, 0.5), exact)), None)


def logsumexp_rows(s: np.ndarray, work: np.ndarray | None = None) -> np.ndarray:
    """log sum exp over the last axis; work: an array of s's shape and dtype to hold exp(s - max) (same bits,
    without allocating, and page-faulting in, an array of that size per call)."""
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(np.subtract(s, m, out=work), out=work)
    return (m + np.log(e.sum(axis=-1, keepdims=True)))[..., 0]


def f16_round(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float32).astype("<f2").astype(np.float32)


# ---------------------------------------------------------------------------------------------- derived ops
def _batched(get, rec, fn):
    """Apply fn per leading (batch) index to keep memory bounded for (B, H, L, L) outputs."""
    out = np.empty(rec["shape"], dtype=np.float32)
    for b in range(out.shape[0]):
        out[b] = fn(b)
    return out


def _weight_rows(rec: dict, q: np.ndarray, k: np.ndarray, lse: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows `rows` (query steps) of one sample's attention weights, (H, len(rows), L) float64: exp(score - lse),
    the diagonal masked. Each score sums its own terms, so a subset of rows is bit-identical to the same rows of
    the whole matrix."""
    s = attention_scores64(q[..., rows, :], k, float(rec["scale"]))
    r = np.arange(len(rows))
    if rec["mask_diagonal"]:
        s[..., r, rows] = float(rec["mask_value"])
    w = np.exp(s - lse[..., rows, None])
    if rec["mask_diagonal"]:
        w[..., r, rows] = 0.0
    return w


def attention_weight_rows(rec: dict, get: Callable[[str], np.ndarray], rows) -> np.ndarray:
    """(B, H, len(rows), L) float32 rows of a derived attention_weights record, equal to materialise(rec)[:, :, rows]
    at a fraction of the cost (the rows only, never a (H, L, L) matrix)."""
    if rec.get("op") != "attention_weights":
        raise ValueError(f"record {rec.get('name')!r} is not derived attention weights")
    q, k, lse = get(rec["q"]), get(rec["k"]), get(rec["lse"]).astype(np.float64)
    rows = np.asarray(rows, dtype=np.int64)
    out = np.empty((q.shape[0], q.shape[1], len(rows), int(rec["shape"][-1])), dtype=np.float32)
    for b in range(out.shape[0]):
        out[b] = _weight_rows(rec, q[b], k[b], lse[b], rows)
    return out


def materialise(rec: dict, get: Callable[[str], np.ndarray]) -> np.ndarray:
    """Rebuild a derived record from the records it names (`get(name) -> float32 array`)."""
    op = rec["op"]
    shape = tuple(rec["shape"])
    if op == "alias":
        return get(rec["src"]).reshape(shape)
    if op == "permute":
        return np.ascontiguousarray(np.transpose(get(rec["src"]), rec["perm"])).reshape(shape)
    if op == "select":
        return np.ascontiguousarray(np.take(get(rec["src"]), rec["index"], axis=rec["axis"])).reshape(shape)
    if op == "add":
        return (get(rec["a"]) + get(rec["b"])).astype(np.float32).reshape(shape)
    if op == "mul":  # float32 product, as PyTorch computes it
        return (get(rec["a"]) * get(rec["b"])).astype(np.float32).reshape(shape)
    if op == "gelu":
        return gelu(get(rec["src"])).astype(np.float32).reshape(shape)
    if op == "layernorm":
        x = get(rec["src"]).astype(np.float64)
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        y = (x - mean) / np.sqrt(var + float(rec["eps"]))
        y = y * get(rec["weight"]).astype(np.float64) + get(rec["bias"]).astype(np.float64)
        return y.astype(np.float32).reshape(shape)
    if op == "linear":
        x = get(rec["src"]).astype(np.float64)
        channels_first = rec.get("axis", -1) == 1  # (B, C, L) -> (B, F, L), e.g. a 1x1 conv
        if channels_first:
            x = np.swapaxes(x, 1, 2)
        y = x @ get(rec["weight"]).astype(np.float64).reshape(get(rec["weight"]).shape[0], -1).T
        if rec.get("bias") is not None:
            y = y + get(rec["bias"]).astype(np.float64)
        if channels_first:
            y = np.swapaxes(y, 1, 2)
        heads = rec.get("heads")
        if heads:  # (B, L, H*E) -> (B, H, L, E)
            B, L, F = y.shape
            y = y.reshape(B, L, heads, F // heads).transpose(0, 2, 1, 3)
        return np.ascontiguousarray(y.astype(np.float32)).reshape(shape)
    if op == "film":
        x = get(rec["src"]).astype(np.float64)  # (B, L, F)
        i = rec["index"]
        g = get(rec["gamma"]).astype(np.float64)[:, i][:, None, :]  # (B, 1, F)
        b = get(rec["beta"]).astype(np.float64)[:, i][:, None, :]
        y = np.nan_to_num((1.0 + g) * x + b, nan=0.0, posinf=1e4, neginf=-1e4)
        return y.astype(np.float32).reshape(shape)
    if op in ("attention_scores", "attention_masked_scores", "attention_weights"):
        q, k = get(rec["q"]), get(rec["k"])
        scale = float(rec["scale"])
        L = shape[-1]
        diag = np.arange(L)
        if op == "attention_scores":
            return _batched(get, rec, lambda b: attention_scores64(q[b], k[b], scale))
        if op == "attention_masked_scores":

            def masked(b):
                s = attention_scores64(q[b], k[b], scale)
                s[..., diag, diag] = float(rec["mask_value"])
                return s

            return _batched(get, rec, masked)
        lse = get(rec["lse"]).astype(np.float64)
        return _batched(get, rec, lambda b: _weight_rows(rec, q[b], k[b], lse[b], diag))
    raise ValueError(f"record {rec['name']}: unknown derived op {op!r}")


def deps_of(rec: dict) -> list[str]:
    if rec.get("encoding") != "derived":
        return []
    return [rec[f] for f in OP_REFS[rec["op"]] if rec.get(f) is not None]


# ---------------------------------------------------------------------------------------------- partial records
# A record of a run made on some samples only (e.g. ablation.no_mask, on the attention page's samples) holds rows
# for those batch indices only: its `samples`. A derived record rebuilds its own rows, from the same rows of each
# batched record it derives from.
def take_rows(a: np.ndarray, have, want) -> np.ndarray:
    """The rows of batched `a` (row i is batch index have[i]) for batch indices `want`; `a` itself when equal."""
    have, want = [int(s) for s in have], [int(s) for s in want]
    if have == want:
        return a
    pos = {s: i for i, s in enumerate(have)}
    missing = [s for s in want if s not in pos]
    if missing:
        raise ValueError(f"sample {missing[0]} is not among the record's samples {have}")
    return a[[pos[s] for s in want]]


def derive_rows(rec_rows, batched: Callable[[str], bool], rows: Callable[[str], list], get) -> Callable:
    """get(name) for materialise()ing a record whose rows are batch indices `rec_rows`: each batched dependency
    (batched(name)) narrowed to those rows (rows(name): the batch indices of its own rows)."""

    def narrowed(name: str) -> np.ndarray:
        a = get(name)
        return take_rows(a, rows(name), rec_rows) if batched(name) else a

    return narrowed


# ---------------------------------------------------------------------------------------------- stored data
def pack_data(arr: np.ndarray, encoding: str) -> bytes:
    flat = np.ascontiguousarray(arr, dtype=np.float32).reshape(-1)
    if encoding == "f16":
        return flat.astype("<f2").tobytes()
    if encoding == "f32":
        return flat.astype("<f4").tobytes()
    if encoding == "f16z":
        h = flat.astype("<f2")
        nz = h != 0
        return np.packbits(nz, bitorder="little").tobytes() + h[nz].tobytes()
    if encoding == "bits":
        return np.packbits(flat != 0, bitorder="little").tobytes()
    if encoding == "u8bool":
        return (flat != 0).astype(np.uint8).tobytes()
    raise ValueError(f"unknown encoding {encoding!r}")


def unpack_data(data: bytes, encoding: str, shape) -> np.ndarray:
    n = int(np.prod(shape)) if len(shape) else 1
    if encoding == "f16":
        a = np.frombuffer(data, dtype="<f2", count=n).astype(np.float32)
    elif encoding == "f32":
        a = np.frombuffer(data, dtype="<f4", count=n).astype(np.float32)
    elif encoding == "f16z":
        nm = (n + 7) // 8
        nz = np.unpackbits(np.frombuffer(data[:nm], dtype=np.uint8), count=n, bitorder="little").astype(bool)
        a = np.zeros(n, dtype=np.float32)
        a[nz] = np.frombuffer(data[nm:], dtype="<f2", count=int(nz.sum())).astype(np.float32)
    elif encoding == "bits":
        a = np.unpackbits(np.frombuffer(data, dtype=np.uint8), count=n, bitorder="little").astype(np.float32)
    elif encoding == "u8bool":
        a = np.frombuffer(data, dtype=np.uint8, count=n).astype(np.float32)
    else:
        raise ValueError(f"unknown encoding {encoding!r}")
    return a.reshape(tuple(shape))


def quantise(arr: np.ndarray, encoding: str) -> np.ndarray:
    """What a reader gets back for `arr` stored with `encoding` (float32)."""
    return unpack_data(pack_data(arr, encoding), encoding, arr.shape)


# ---------------------------------------------------------------------------------------------- stats
def moments(a: np.ndarray, work: np.ndarray | None = None) -> tuple[int, float, float, float, float]:
    """(n, min, max, mean, M2) of a float32 array, in float64; work: a float64 array of a's size to use for the
    copy (same bits, no allocation)."""
    with np.errstate(invalid="ignore"):
        a32 = np.asarray(a, dtype=np.float32).reshape(-1)
        a = a32.astype(np.float64) if work is None else work.reshape(-1)[: a32.size]
        if work is not None:
            np.copyto(a, a32)
    if a.size == 0:
        return (0, math.nan, math.nan, math.nan, 0.0)
    mn, mx = a32.min(), a32.max()  # the float64 copy's, at half the bytes
    mean = float(a.mean())
    with np.errstate(invalid="ignore"):  # a record holding +-inf (a logit floor of "none") has no finite moments
        d = np.subtract(a, mean, out=a)  # a is our own float64 copy: square the deviations in place
        return (int(a.size), float(mn), float(mx), mean, float(np.square(d, out=d).sum()))


def merge_moments(parts) -> tuple[int, float, float, float, float]:
    """Chan et al. pairwise combination of (n, min, max, mean, M2) moments -> the moments of all of their values."""
    n, mn, mx, mean, m2 = 0, math.inf, -math.inf, 0.0, 0.0
    for nb, mnb, mxb, meanb, m2b in parts:
        if nb == 0:
            continue
        delta = meanb - mean
        tot = n + nb
        mean = mean + delta * nb / tot
        m2 = m2 + m2b + delta * delta * n * nb / tot
        n = tot
        mn, mx = min(mn, mnb), max(mx, mxb)
    return (n, mn, mx, mean, m2) if n else (0, math.nan, math.nan, math.nan, 0.0)


def combine_moments(parts) -> dict:
    """Per-sample moments (merge_moments) -> {min, max, mean, std} (population std)."""
    n, mn, mx, mean, m2 = merge_moments(parts)
    if n == 0:
        return {"min": math.nan, "max": math.nan, "mean": math.nan, "std": math.nan}
    return {"min": mn, "max": mx, "mean": mean, "std": math.sqrt(m2 / n)}


# ---------------------------------------------------------------------------------------------- writer
def _jsonable(o):
    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in sorted(o.items(), key=lambda kv: str(kv[0]))}
    if isinstance(o, (list, tuple)):
        return [_jsonable(v) for v in o]
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return _jsonable(o.tolist())
    if isinstance(o, (str, int, float, bool)) or o is None:
        return o
    return str(o)


def select_names(capture, names) -> list[str]:
    """Expand names/glob patterns to record names (capture order), plus everything derived records need."""
    all_names = list(capture.records)
    if names is None:
        chosen = set(all_names)
    else:
        if isinstance(names, str):
            names = [names]
        chosen = set()
        for pat in names:
            if any(c in pat for c in "*?["):
                hit = fnmatch.filter(all_names, pat)
            else:
                hit = [pat] if pat in capture.records else []
            if not hit:
                raise KeyError(f"no capture record matches {pat!r}")
            chosen.update(hit)
    stack = list(chosen)
    while stack:  # dependency closure
        for d in capture.records[stack.pop()].deps():
            if d not in chosen:
                chosen.add(d)
                stack.append(d)
    return [n for n in all_names if n in chosen]


def _kept_rows(r, idx: list[int]) -> tuple[list[int], list[int]]:
    """(rows of record r, their batch indices) for the blob's batch indices idx, in idx order: all of idx unless r
    holds only some samples (CaptureRecord.rows)."""
    pos = {s: i for i, s in enumerate(r.rows())}
    kept = [s for s in idx if s in pos]
    return [pos[s] for s in kept], kept


def encode(capture, names=None, samples=None) -> bytes:
    """Serialise `capture` (nilmbuild.capture.Capture) to a blob.

    names: None (all) or a list of record names / glob patterns; records that derived ones need come along.
    samples: None (all) or a list of batch indices; records with a leading "batch" axis are sliced and
    `meta.samples` lists the kept original indices (meta.t0 is sliced the same way). A partial record (one with
    `samples` of its own) keeps those of them it holds, and says which (its `samples`) unless that is all of them.
    """
    B = capture.batch_size
    idx = list(range(B)) if samples is None else [int(i) for i in samples]
    for i in idx:
        if not 0 <= i < B:
            raise IndexError(f"sample {i} out of range for a batch of {B}")
    meta = dict(capture.meta)
    meta["samples"] = idx
    meta["batch_size"] = len(idx)
    if isinstance(meta.get("t0"), list) and len(meta["t0"]) == B:
        meta["t0"] = [meta["t0"][i] for i in idx]
    out_records = []
    for name in select_names(capture, names):
        r = capture.records[name]
        batched = bool(r.axes) and r.axes[0] == "batch"
        rec = {
            "name": name,
            "shape": list(r.shape),
            "axes": list(r.axes),
            "dtype": "float32",
            "stage": r.stage,
            "section": r.section,
            "doc": r.doc,
            "encoding": r.encoding,
            "err": float(r.err),
        }
        rows = None
        if batched:
            rows, kept = _kept_rows(r, idx)
            rec["shape"][0] = len(rows)
            if kept != idx:
                rec["samples"] = kept
        rec["stats"] = combine_moments(r.moments if rows is None else [r.moments[i] for i in rows])
        if r.encoding == "derived":
            rec.update(r.derive)
        else:
            rec["data"] = pack_data(r.tensor[rows] if batched else r.tensor, r.encoding)
        out_records.append(
            _jsonable(rec)
            if r.encoding == "derived"
            else {k: (_jsonable(v) if k != "data" else v) for k, v in sorted(rec.items())}
        )
    blob = {"format": FORMAT, "version": VERSION, "meta": _jsonable(meta), "records": out_records}
    return msgpack.packb(blob, use_bin_type=True, use_single_float=False)


# ---------------------------------------------------------------------------------------------- reader
class BlobError(UserError, ValueError):
    """A blob that is not a readable capture (one line; a ValueError too, for older callers)."""


def _check_record(r, names: set) -> str | None:
    """What is wrong with one record's structure (None if nothing): reading it must then not fail."""
    if not isinstance(r, dict) or not isinstance(r.get("name"), str):
        return "a record without a name"
    shape, enc = r.get("shape"), r.get("encoding")
    if not isinstance(shape, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2**31 for d in shape
    ):
        return f"record {r['name']!r}: bad shape {shape!r}"
    rows = r.get("samples")
    if rows is not None and (
        not isinstance(rows, list)
        or len(rows) != (shape[0] if shape else -1)
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in rows)
    ):
        return f"record {r['name']!r}: bad samples"
    if enc == "derived":
        if r.get("op") not in OP_REFS:
            return f"record {r['name']!r}: unknown derived op {r.get('op')!r}"
        if any(d not in names for d in deps_of(r)):
            return f"record {r['name']!r}: needs records that are not in the blob"
        return None
    if enc not in STORED_ENCODINGS or not isinstance(r.get("data"), bytes):
        return f"record {r['name']!r}: unknown encoding {enc!r} or no data"
    n = math.prod(shape)
    need = {"f16": 2 * n, "f32": 4 * n, "f16z": (n + 7) // 8, "bits": (n + 7) // 8, "u8bool": n}[enc]
    if len(r["data"]) < need:
        return f"record {r['name']!r}: {len(r['data'])} data bytes, its shape needs {need}"
    return None


class CaptureReader:
    """A decoded blob. get() materialises (and caches) float32 arrays; derived records are rebuilt.
    A blob that is not a readable capture raises BlobError (a one-line UserError), in decode or get."""

    def __init__(self, blob: bytes) -> None:
        try:
            obj = msgpack.unpackb(blob, raw=False, strict_map_key=False)
        except Exception as e:  # msgpack raises many types (ValueError, FormatError, StackError, UnicodeDecodeError)
            raise BlobError(f"not a nilmbuild capture blob (msgpack: {type(e).__name__})") from None
        if not isinstance(obj, dict) or obj.get("format") != FORMAT:
            raise BlobError("not a nilmbuild capture blob")
        if obj.get("version") != VERSION:
            raise BlobError(f"capture blob version {str(obj.get('version'))[:20]}, this reader reads version {VERSION}")
        recs = obj.get("records")
        if not isinstance(obj.get("meta"), dict) or not isinstance(recs, list):
            raise BlobError("capture blob without meta or records")
        names = {r["name"] for r in recs if isinstance(r, dict) and isinstance(r.get("name"), str)}
        for r in recs:
            bad = _check_record(r, names)
            if bad:
                raise BlobError(f"damaged capture blob: {bad[:120]}")
        self.meta: dict = obj["meta"]
        self.version: int = obj["version"]
        self._recs: dict[str, dict] = {r["name"]: r for r in recs}
        self._cache: dict[str, np.ndarray] = {}

    def names(self) -> list[str]:
        return list(self._recs)

    def __contains__(self, name: str) -> bool:
        return name in self._recs

    def record(self, name: str) -> dict:
        """Metadata of one record (everything but its data)."""
        return {k: v for k, v in self._recs[name].items() if k != "data"}

    def nbytes(self, name: str) -> int:
        return len(self._recs[name].get("data", b""))

    def query_rows(self, name: str, rows) -> np.ndarray:
        """get(name)[:, :, rows] of a (batch, head, query, key) record; derived attention weights rebuild just those
        rows (bit-identical, far cheaper than the whole matrix)."""
        rec = self._recs[name]
        if name not in self._cache and rec["encoding"] == "derived" and rec.get("op") == "attention_weights":
            return attention_weight_rows(rec, derive_rows(self.rows(name), self._batched, self.rows, self.get), rows)
        return self.get(name)[:, :, list(rows), :]

    def get(self, name: str) -> np.ndarray:
        if name not in self._cache:
            rec = self._recs[name]
            if rec["encoding"] == "derived":
                a = self._derive(rec)
            else:
                a = unpack_data(rec["data"], rec["encoding"], rec["shape"])
            a.setflags(write=False)
            self._cache[name] = a
        return self._cache[name]

    def rows(self, name: str) -> list[int]:
        """The batch indices of a batched record's rows: meta.samples, or the record's own `samples` (a partial
        record: from a run made on some samples only)."""
        rec = self._recs[name]
        if rec.get("samples") is not None:
            return rec["samples"]
        return self.meta.get("samples") or list(range(rec["shape"][0]))

    def _batched(self, name: str) -> bool:
        return (self._recs[name].get("axes") or [None])[0] == "batch"

    def _derive(self, rec: dict) -> np.ndarray:
        """materialise(), with a damaged blob's inconsistent fields (shapes, axes, scale) as a BlobError."""
        try:
            get = self.get
            if self._batched(rec["name"]):  # each batched record it derives from, at this record's rows
                get = derive_rows(self.rows(rec["name"]), self._batched, self.rows, self.get)
            a = np.asarray(materialise(rec, get), dtype=np.float32)
        except BlobError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, RecursionError) as e:
            raise BlobError(
                f"damaged capture blob: record {rec['name']!r} cannot be rebuilt ({type(e).__name__})"
            ) from None
        if list(a.shape) != list(rec["shape"]):
            raise BlobError(
                f"damaged capture blob: record {rec['name']!r} rebuilds to shape {list(a.shape)}, not {rec['shape']}"
            )
        return a

    def slice(self, name: str, i: int) -> np.ndarray:
        """Sample i of the blob (meta.samples[i]) of a batched record (IndexError if a partial record lacks it)."""
        rows = self.rows(name)
        want = (self.meta.get("samples") or rows)[i]
        if want not in rows:
            raise IndexError(f"{name} holds samples {rows} only, not {want}")
        return self.get(name)[rows.index(want)]


def decode(blob: bytes) -> CaptureReader:
    return CaptureReader(blob)
