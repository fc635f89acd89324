/* why_data.js: the Why page's blob "why" (nilmbuild/site/views/why.py, nilmbuild/explain/served.py) and the
 * explanation the controls ask for. No model runs here: occlusion is derived from the stored passes as Captum's
 * Occlusion does (occlusion.js); ig and saliency are the stored Captum results of the targets computed at build.
 *
 *   readWhy(bytes) -> W: {agg, base, L, D, P, passes, windows, targets, attr: {method: Float32Array K*L}, K,
 *                         fractions, curves, randomCurves, quality}
 *   storedIndex(W, d, t)      -> k of the stored target equal to t for device d, or -1
 *   explain(W, method, d, t)  -> {values, value, k, unit} | {message}: t = {lo, hi, point, stepS}
 *   passWatts(W, p)           -> pass p's watts, (D x L) flat (p = 0: the signal)
 */
import { decode as unpack } from "@msgpack/msgpack";
import { decodeF16 } from "./decode.js";
import { attribute, target } from "./occlusion.js";

function f16(e) { return decodeF16(e.data, e.shape.reduce(function (a, b) { return a * b; }, 1)); }
function f32(bytes) { return new Float32Array(bytes.slice().buffer, 0, bytes.length / 4); }

export function readWhy(bytes) {
  var b = unpack(bytes), sh = b.passes.shape, attr = {};
  Object.keys(b.attributions).forEach(function (m) { attr[m] = f16(b.attributions[m]); });
  return {
    agg: f32(b.aggregate_w), base: b.baseline_w, P: sh[0] - 1, D: sh[1], L: sh[2], passes: f16(b.passes),
    windows: b.windows.map(function (w) { return { lo: w[0], hi: w[1] }; }), targets: b.targets, attr: attr,
    K: b.targets.length, pointMethods: b.point_methods, active: b.active, fractions: b.fractions, curves: b.curves, randomCurves: b.random_curves, quality: b.quality,
  };
}

export function passWatts(W, p) { return W.passes.subarray(p * W.D * W.L, (p + 1) * W.D * W.L); }

export function storedIndex(W, d, t) {
  for (var k = 0; k < W.K; k++) {
    var s = W.targets[k];
    if (s.device === d && s.lo === t.lo && s.hi === t.hi && !!s.point === !!t.point) return k;
  }
  return -1;
}

function occlusionFromPasses(W, d, t) {
  var f = [];
  for (var p = 0; p <= W.P; p++) f.push(target(passWatts(W, p), d, W.L, t));
  return attribute(f[0], f.slice(1), W.windows, W.L);
}

export function explain(W, method, d, t) {
  var k = storedIndex(W, d, t), unit = t.point ? "W" : "Wh", value = target(passWatts(W, 0), d, W.L, t);
  var row = k >= 0 ? W.attr[method].subarray(k * W.L, (k + 1) * W.L) : null;
  if (row && row[0] === row[0]) return { values: row, value: value, k: k, unit: unit };   // NaN: not computed
  if (method === "occlusion") return { values: occlusionFromPasses(W, d, t), value: value, k: -1, unit: unit };
  if (W.active && !W.active[d]) return { message: "the model does not predict this device in this window: " + method + " has nothing to explain (occlusion still shows every step's effect)", k: -1, unit: unit, value: value };
  var where = W.pointMethods.indexOf(method) >= 0 ? "the whole window and each device's peak step" : "the whole window";
  return { message: method + " was computed for " + where + " only: pick occlusion for this target", k: -1, unit: unit, value: value };
}

// The largest |value| (the strip's symmetric colour scale), 1 for an all-zero strip.
export function vmaxOf(values) {
  var m = 0;
  for (var i = 0; i < values.length; i++) m = Math.max(m, Math.abs(values[i]));
  return m || 1;
}

// Each device's peak step (its point-level stored target).
export function peaks(W) {
  var out = [];
  W.targets.forEach(function (s) { if (s.point) out[s.device] = s.lo; });
  return out;
}
