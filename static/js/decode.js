/* nilmbuild capture blob decoder (docs/format.md). ES module; msgpack from @msgpack/msgpack (npm). Exports decode(bytes) -> Capture.
 *
 *   var cap = decode(uint8array);
 *   cap.meta; cap.names(); cap.record(name);          // metadata: name, shape, axes, stage, section, doc, stats, ...
 *   cap.get(name)          -> Float32Array, row-major, materialised on demand and cached (do not mutate)
 *   cap.slice(name, i)     -> Float32Array view of entry i along axis 0 (a derived record: entry i alone is derived)
 *   cap.attentionRow(name, sample, head, query) -> Float32Array(L), one row of an attention matrix,
 *                             computed from q, k (and lse) without building B x H x L x L
 *
 * Derived ops are implemented exactly as nilmbuild/capture/format.py materialise() does (float64
 * arithmetic, rounded to float32 once at the end).
 */
import { decode as msgpackDecode } from "@msgpack/msgpack";

// ------------------------------------------------------------------ float16
var HALF_TABLE = null;
function halfToFloat(h) {
  var s = h & 0x8000 ? -1 : 1;
  var e = (h >> 10) & 0x1f;
  var f = h & 0x3ff;
  if (e === 0) return s * f * Math.pow(2, -24);            // zero / subnormal
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * Math.pow(2, e - 15);
}
function halfTable() {
  if (!HALF_TABLE) {
    HALF_TABLE = new Float32Array(65536);
    for (var i = 0; i < 65536; i++) HALF_TABLE[i] = halfToFloat(i);
  }
  return HALF_TABLE;
}
function u16le(bytes, n) {
  var out = new Uint16Array(n);
  for (var i = 0, j = 0; i < n; i++, j += 2) out[i] = bytes[j] | (bytes[j + 1] << 8);
  return out;
}
function decodeF16(bytes, n, useNative) {
  var native = useNative !== false && typeof globalThis.Float16Array === "function";
  if (native && LITTLE) {
    var copy = bytes.slice(0, 2 * n);                       // aligned copy
    return Float32Array.from(new globalThis.Float16Array(copy.buffer, 0, n));
  }
  var t = halfTable(), h = u16le(bytes, n), out = new Float32Array(n);
  for (var i = 0; i < n; i++) out[i] = t[h[i]];
  return out;
}
var LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
function decodeF32(bytes, n) {
  if (LITTLE) return new Float32Array(bytes.slice(0, 4 * n).buffer);
  var dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), out = new Float32Array(n);
  for (var i = 0; i < n; i++) out[i] = dv.getFloat32(4 * i, true);
  return out;
}
function decodeBits(bytes, n) {
  var out = new Float32Array(n);
  for (var i = 0; i < n; i++) out[i] = (bytes[i >> 3] >> (i & 7)) & 1;
  return out;
}
function decodeF16z(bytes, n) {
  var nm = (n + 7) >> 3, t = halfTable(), out = new Float32Array(n), j = nm;
  for (var i = 0; i < n; i++) {
    if ((bytes[i >> 3] >> (i & 7)) & 1) { out[i] = t[bytes[j] | (bytes[j + 1] << 8)]; j += 2; }
  }
  return out;
}

// ------------------------------------------------------------------ numerics shared with format.py
function erfc(x) {                                          // Numerical Recipes erfcc, |rel err| < 1.2e-7
  var z = Math.abs(x), t = 1 / (1 + 0.5 * z);
  var ans = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 +
    t * 0.17087277)))))))));
  return x >= 0 ? ans : 2 - ans;
}
function gelu(x) { return 0.5 * x * erfc(-x / Math.SQRT2); }
function numel(shape) { var n = 1; for (var i = 0; i < shape.length; i++) n *= shape[i]; return n; }
function strides(shape) {
  var s = new Array(shape.length), acc = 1;
  for (var i = shape.length - 1; i >= 0; i--) { s[i] = acc; acc *= shape[i]; }
  return s;
}

// ------------------------------------------------------------------ Capture
function Capture(bytes) {
  var obj = msgpackDecode(bytes);
  if (!obj || obj.format !== "nilmbuild-capture") throw new Error("not a nilmbuild capture blob");
  if (obj.version !== 1) throw new Error("capture blob version " + obj.version + ", this page reads version 1");
  this.meta = obj.meta;
  this.version = obj.version;
  this._order = [];
  this._recs = {};
  this._cache = {};
  this._sliceCache = {};
  for (var i = 0; i < obj.records.length; i++) {
    var r = obj.records[i];
    this._order.push(r.name);
    this._recs[r.name] = r;
  }
}

Capture.prototype.names = function () { return this._order.slice(); };
Capture.prototype.has = function (name) { return Object.prototype.hasOwnProperty.call(this._recs, name); };
Capture.prototype._rec = function (name) {
  if (!this.has(name)) throw new Error("capture has no record " + JSON.stringify(name));
  return this._recs[name];
};
Capture.prototype.record = function (name) {
  var r = this._rec(name), out = {};
  for (var k in r) if (k !== "data" && Object.prototype.hasOwnProperty.call(r, k)) out[k] = r[k];
  return out;
};

Capture.prototype.get = function (name) {
  if (this._cache[name]) return this._cache[name];
  var r = this._rec(name), n = numel(r.shape), a;
  switch (r.encoding) {
    case "f16": a = decodeF16(r.data, n); break;
    case "f32": a = decodeF32(r.data, n); break;
    case "f16z": a = decodeF16z(r.data, n); break;
    case "bits": a = decodeBits(r.data, n); break;
    case "u8bool": a = new Float32Array(n); for (var i = 0; i < n; i++) a[i] = r.data[i] ? 1 : 0; break;
    case "derived": a = this._narrowed(r)._derive(r, n); break;
    default: throw new Error("record " + name + ": unknown encoding " + r.encoding);
  }
  if (a.length !== n) throw new Error("record " + name + ": " + a.length + " values for shape " + r.shape);
  this._cache[name] = a;
  return a;
};

// The records each derived op reads (capture/format.py OP_REFS).
var OP_FIELDS = {
  alias: ["src"], permute: ["src"], select: ["src"], add: ["a", "b"], mul: ["a", "b"], gelu: ["src"],
  layernorm: ["src", "weight", "bias"], linear: ["src", "weight", "bias"], film: ["src", "gamma", "beta"],
  attention_scores: ["q", "k"], attention_masked_scores: ["q", "k"], attention_weights: ["q", "k", "lse"],
};

// A partial record (from a run made on some samples only) holds rows for its own `samples` (batch indices), not
// meta.samples; a derived record takes the same rows of each batched record it derives from.
Capture.prototype.rows = function (name) {
  var r = this._rec(name);
  if (r.samples) return r.samples;
  return this.meta.samples || Array.from({ length: r.shape[0] }, function (_, i) { return i; });
};
Capture.prototype._batched = function (name) { return (this._rec(name).axes || [])[0] === "batch"; };
Capture.prototype._sameRows = function (a, b) {
  var ra = this.rows(a), rb = this.rows(b);
  return ra.length === rb.length && ra.every(function (v, i) { return v === rb[i]; });
};
// the row of a batched record that holds sample i of the blob (meta.samples[i])
Capture.prototype._row = function (name, i) {
  var r = this._rec(name);
  if (!r.samples) return i;
  var row = r.samples.indexOf((this.meta.samples || [])[i]);
  if (row < 0) throw new Error(name + " holds samples " + r.samples + " only, not sample " + i + " of the blob");
  return row;
};
// this capture, seen by derived record r: each batched record it derives from narrowed to r's rows
Capture.prototype._narrowed = function (r) {
  var fields = OP_FIELDS[r.op] || [], self = this, rows = {}, any = false;
  if (!this._batched(r.name)) return this;
  for (var f = 0; f < fields.length; f++) {
    var src = r[fields[f]];
    if (src == null || !this._batched(src) || this._sameRows(src, r.name)) continue;
    var have = this.rows(src);
    rows[src] = this.rows(r.name).map(function (s) {
      var at = have.indexOf(s);
      if (at < 0) throw new Error("record " + r.name + ": sample " + s + " is not among " + src + "'s samples");
      return at;
    });
    any = true;
  }
  if (!any) return this;
  return this._view(function (n) {
    return rows[n] && { rows: rows[n].length, get: function () { return self._takeRows(n, rows[n]); } };
  });
};
// this capture with some records narrowed: narrow(name) -> {rows, get()} (that record's rows and values, its
// other axes unchanged) or a falsy value (the record as it is); a view of its own cache
Capture.prototype._view = function (narrow) {
  var self = this, view = Object.create(this);
  view._cache = {};
  view.get = function (n) { var w = narrow(n); return w ? w.get() : self.get(n); };
  view._rec = function (n) {
    var rec = self._rec(n), w = narrow(n);
    return w ? Object.assign({}, rec, { shape: [w.rows].concat(rec.shape.slice(1)) }) : rec;
  };
  return view;
};
Capture.prototype._takeRows = function (name, rows) {
  var a = this.get(name), m = a.length / this._rec(name).shape[0], out = new Float32Array(rows.length * m);
  for (var i = 0; i < rows.length; i++) out.set(a.subarray(rows[i] * m, (rows[i] + 1) * m), i * m);
  return out;
};

Capture.prototype.slice = function (name, i) {
  var r = this._rec(name);
  if (!(i >= 0 && i < (r.samples ? (this.meta.samples || []).length : r.shape[0])))
    throw new Error(name + ": index " + i + " out of range " + r.shape[0]);
  return this._sliceRow(name, this._row(name, i));
};
// row i of a batched record (its own rows: see rows())
Capture.prototype._sliceRow = function (name, i) {
  var r = this._rec(name);
  if (!this._cache[name] && r.encoding === "derived") {   // derive entry i alone (pages show one sample at a time)
    var key = name + "#" + i, one = this._sliceCache[key] || this._deriveSlice(r, i);
    if (one) return (this._sliceCache[key] = one);
  }
  var a = this.get(name), m = a.length / r.shape[0];
  return a.subarray(i * m, (i + 1) * m);
};

// The fields of each derived op whose records share the output's axis 0 (the batch): entry i of the output
// needs only entry i of those (and all of the others, e.g. weights). Same arithmetic, same order: the values
// are bit-identical to get(name)'s entry i.
var PER_ENTRY = {
  alias: ["src"], add: ["a", "b"], mul: ["a", "b"], gelu: ["src"], permute: ["src"], select: ["src"],
  layernorm: ["src"], linear: ["src"], film: ["src", "gamma", "beta"],
  attention_scores: ["q", "k"], attention_masked_scores: ["q", "k"], attention_weights: ["q", "k", "lse"],
};
Capture.prototype._deriveSlice = function (r, i) {
  var fields = PER_ENTRY[r.op], self = this, batched = {};
  if (!fields || (r.op === "permute" && r.perm[0] !== 0) || (r.op === "select" && r.axis === 0)) return null;
  for (var f = 0; f < fields.length; f++) {
    var src = r[fields[f]];
    if (src == null) continue;
    if (this._rec(src).shape[0] !== r.shape[0] || !this._sameRows(src, r.name)) return null;
    batched[src] = true;
  }
  var one = [1].concat(r.shape.slice(1));
  var sub = this._view(function (n) {
    return batched[n] && { rows: 1, get: function () { return self._sliceRow(n, i); } };
  });
  return sub._derive(Object.assign({}, r, { shape: one }), numel(one));
};

// Each derived op: (out Float32Array(n), its inputs get(field) / shapeOf(field), the record r, the capture) ->
// out filled. One small function per op (the browser compiles each on its own, soon after its loop starts).
var DERIVE = {
  alias: function (out, n, get) { out.set(get("src")); },
  add: function (out, n, get) { var a = get("a"), b = get("b"); for (var i = 0; i < n; i++) out[i] = a[i] + b[i]; },
  mul: function (out, n, get) { var a = get("a"), b = get("b"); for (var i = 0; i < n; i++) out[i] = a[i] * b[i]; },
  gelu: function (out, n, get) { var x = get("src"); for (var i = 0; i < n; i++) out[i] = gelu(x[i]); },
  permute: derivePermute,
  select: deriveSelect,
  layernorm: deriveLayernorm,
  linear: deriveLinear,
  film: deriveFilm,
  attention_scores: deriveAttention,
  attention_masked_scores: deriveAttention,
  attention_weights: deriveAttention,
};
function derivePermute(out, n, get, shapeOf, r) {
  var s = get("src"), ss = shapeOf("src"), st = strides(ss), perm = r.perm;
  var pshape = Int32Array.from(perm, function (p) { return ss[p]; }), pst = Int32Array.from(perm, function (p) { return st[p]; });
  var nd = pshape.length, idx = new Int32Array(nd), off = 0;
  for (var i = 0; i < n; i++) {
    out[i] = s[off];
    for (var d = nd - 1; d >= 0; d--) {                     // odometer over the permuted shape
      idx[d]++; off += pst[d];
      if (idx[d] < pshape[d]) break;
      off -= pst[d] * pshape[d]; idx[d] = 0;
    }
  }
}
function deriveSelect(out, n, get, shapeOf, r) {
  var s = get("src"), sh = shapeOf("src"), ax = r.axis, k = r.index;
  var outer = numel(sh.slice(0, ax)), inner = numel(sh.slice(ax + 1)), dim = sh[ax];
  for (var i = 0; i < outer; i++) out.set(s.subarray((i * dim + k) * inner, (i * dim + k + 1) * inner), i * inner);
}
function deriveLayernorm(out, n, get, shapeOf, r) {
  var x = get("src"), w = get("weight"), b = get("bias"), F = w.length, rows = n / F, eps = r.eps;
  for (var i = 0; i < rows; i++) {
    var o = i * F, mean = 0, v = 0, j;
    for (j = 0; j < F; j++) mean += x[o + j];
    mean /= F;
    for (j = 0; j < F; j++) { var d = x[o + j] - mean; v += d * d; }
    var inv = 1 / Math.sqrt(v / F + eps);
    for (j = 0; j < F; j++) out[o + j] = (x[o + j] - mean) * inv * w[j] + b[j];
  }
}
// y = W x (+ bias) over the feature axis: axis 1 of (B, F, L) inputs (r.axis = 1, a 1x1 convolution) or the last
// axis; with r.heads, the output features are split into heads: (B, heads, L, E).
function deriveLinear(out, n, get, shapeOf, r) {
  var x = get("src"), xsh = shapeOf("src"), W = get("weight"), wsh = shapeOf("weight");
  var Fo = wsh[0], Fi = numel(wsh) / Fo, bias = r.bias != null ? get("bias") : null, B = xsh[0];
  if (r.axis === 1) { linearChannels(out, x, W, bias, B, Fi, Fo, xsh[2]); return; }
  var L = numel(xsh) / (B * Fi);
  if (!r.heads) { linearLast(out, x, W, bias, B * L, Fi, Fo); return; }
  var flat = new Float32Array(n), E = Fo / r.heads;           // (B, L, Fo) -> (B, heads, L, E)
  linearLast(flat, x, W, bias, B * L, Fi, Fo);
  for (var i = 0; i < B * L; i++) for (var f = 0; f < Fo; f++) {
    var b = (i / L) | 0, t = i - b * L;
    out[((b * r.heads + ((f / E) | 0)) * L + t) * E + (f % E)] = flat[i * Fo + f];
  }
}
function linearChannels(out, x, W, bias, B, Fi, Fo, L) {     // (B, Fi, L) -> (B, Fo, L)
  for (var b = 0; b < B; b++) for (var t = 0; t < L; t++) linearVector(out, b * Fo * L + t, L, x, b * Fi * L + t, L, W, bias, Fi, Fo);
}
function linearLast(out, x, W, bias, rows, Fi, Fo) {        // (rows, Fi) -> (rows, Fo)
  for (var i = 0; i < rows; i++) linearVector(out, i * Fo, 1, x, i * Fi, 1, W, bias, Fi, Fo);
}
// out[oo + f * os] = sum over c of W[f, c] * x[xo + c * xs] (+ bias[f]), for every output f of one input vector.
// Four outputs at a time: four independent sums instead of one chain of dependent adds (~2x faster in V8), each
// still adding its terms in order c = 0, 1, ... and then the bias: the same bits as one output at a time.
function linearVector(out, oo, os, x, xo, xs, W, bias, Fi, Fo) {
  var f = 0, f4 = Fo - (Fo % 4);
  for (; f < f4; f += 4) {
    var a0 = 0, a1 = 0, a2 = 0, a3 = 0, w0 = f * Fi, w1 = w0 + Fi, w2 = w1 + Fi, w3 = w2 + Fi;
    for (var c = 0; c < Fi; c++) {
      var xc = x[xo + c * xs];
      a0 += W[w0 + c] * xc; a1 += W[w1 + c] * xc; a2 += W[w2 + c] * xc; a3 += W[w3 + c] * xc;
    }
    if (bias) { a0 += bias[f]; a1 += bias[f + 1]; a2 += bias[f + 2]; a3 += bias[f + 3]; }
    out[oo + f * os] = a0; out[oo + (f + 1) * os] = a1; out[oo + (f + 2) * os] = a2; out[oo + (f + 3) * os] = a3;
  }
  for (; f < Fo; f++) {
    var acc = 0, wo = f * Fi;
    for (var k = 0; k < Fi; k++) acc += W[wo + k] * x[xo + k * xs];
    if (bias) acc += bias[f];
    out[oo + f * os] = acc;
  }
}
function deriveFilm(out, n, get, shapeOf, r) {
  var x = get("src"), xs = shapeOf("src"), g = get("gamma"), be = get("beta"), gs = shapeOf("gamma");
  var B = xs[0], L = xs[1], F = xs[2], NL = gs[1], li = r.index;
  for (var b = 0; b < B; b++) for (var t = 0; t < L; t++) for (var f = 0; f < F; f++) {
    var gi = (b * NL + li) * F + f, xi = (b * L + t) * F + f;
    var y = (1 + g[gi]) * x[xi] + be[gi];
    if (y !== y) y = 0; else if (y === Infinity) y = 1e4; else if (y === -Infinity) y = -1e4;
    out[xi] = y;
  }
}
function deriveAttention(out, n, get, shapeOf, r, cap) {
  var sh = r.shape, B = sh[0], H = sh[1], L = sh[2];
  for (var b = 0; b < B; b++) for (var h = 0; h < H; h++) for (var q = 0; q < L; q++) {
    out.set(cap._attnRow(r, b, h, q), ((b * H + h) * L + q) * L);
  }
}

Capture.prototype._derive = function (r, n) {
  var self = this, out = new Float32Array(n), op = DERIVE[r.op];
  if (!op) throw new Error("record " + r.name + ": unknown derived op " + r.op);
  op(out, n, function (f) { return self.get(r[f]); }, function (f) { return self._rec(r[f]).shape; }, r, this);
  return out;
};

// one row (query q of head h of sample b) of a derived attention matrix, as float32
Capture.prototype._attnRow = function (r, b, h, q) {
  var Q = this.get(r.q), K = this.get(r.k), qs = this._rec(r.q).shape;
  var H = qs[1], L = qs[2], E = qs[3], scale = r.scale, row = new Float32Array(L);
  var qo = ((b * H + h) * L + q) * E, ko = (b * H + h) * L * E;
  var masked = r.op === "attention_masked_scores" || (r.op === "attention_weights" && r.mask_diagonal);
  var lse = r.op === "attention_weights" ? this.get(r.lse)[(b * H + h) * L + q] : 0;
  for (var s = 0; s < L; s++) {
    var acc = 0, o = ko + s * E;
    for (var e = 0; e < E; e++) acc += Q[qo + e] * K[o + e];
    var sc = acc * scale;
    if (masked && s === q) sc = r.mask_value;
    if (r.op === "attention_weights") row[s] = (masked && s === q) ? 0 : Math.exp(sc - lse);
    else row[s] = sc;
  }
  return row;
};

Capture.prototype.attentionRow = function (name, sample, head, query) {
  var r = this._rec(name);
  sample = this._row(name, sample);
  if (r.encoding === "derived" && /^attention_/.test(r.op)) return this._narrowed(r)._attnRow(r, sample, head, query);
  var sh = r.shape, L = sh[3], a = this.get(name), o = ((sample * sh[1] + head) * sh[2] + query) * L;
  return a.slice(o, o + L);
};

export const decode = function (bytes) { return new Capture(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)); };
export { Capture, decodeF16, halfToFloat };
