/* forward_anim_particles.js: the attention particles of the animated forward pass (forward-pass.md 4.4), pure maths.
 * The "anim" blob carries, per (sample, layer, head, query), the key steps of P particles sampled in Python by the
 * attention row's real weights (stratified inverse CDF, nilmbuild/site/views/forward_anim.py) and the row's argmax.
 *   particles.table(anim, sample, layer, head) -> {queries, P, targets(q, j), argmax(q), argmaxWeight(q)}
 *   particles.subset(P, n)      -> n of the P particle indices, evenly spread over the row's quantiles
 *   particles.at(table, t, n)   -> [{query, key, lead, p}] at scene time t in [0, 1]: every query sends its n
 *                                  sampled particles and one "lead" particle to the row's argmax key; p in [0, 1)
 *                                  is how far along its flight each particle is (deterministic in t)
 *   particles.bezier(p, a, c, b) -> the point at p on the quadratic Bezier a -> c -> b
 */
import { decodeF16 } from "./decode.js";

var FLIGHTS = 3;   // flights per particle over one scene

function u16(bytes, n) {
  var out = new Uint16Array(n);
  for (var i = 0, j = 0; i < n; i++, j += 2) out[i] = bytes[j] | (bytes[j + 1] << 8);
  return out;
}

function table(anim, sample, layer, head) {
  var a = anim.attention, sh = a.shape, Q = sh[3], P = sh[4];
  var cache = a._decoded || (a._decoded = {
    targets: u16(a.targets, sh.reduce(function (x, y) { return x * y; }, 1)),
    argmax: u16(a.argmax, sh[0] * sh[1] * sh[2] * Q),
    weight: decodeF16(a.argmax_weight, sh[0] * sh[1] * sh[2] * Q),
  });
  var row0 = ((sample * sh[1] + layer) * sh[2] + head) * Q;
  return {
    queries: a.queries, P: P, sample: sample, layer: layer, head: head,
    targets: function (q, j) { return cache.targets[(row0 + q) * P + j]; },
    argmax: function (q) { return cache.argmax[row0 + q]; },
    argmaxWeight: function (q) { return cache.weight[row0 + q]; },
  };
}

function subset(P, n) {
  n = Math.max(1, Math.min(P, n));
  var out = [];
  for (var i = 0; i < n; i++) out.push(Math.min(P - 1, Math.floor((i + 0.5) * P / n)));
  return out;
}

function frac(x) { return x - Math.floor(x); }

function at(tab, t, n) {
  var out = [], js = subset(tab.P, n), Q = tab.queries.length;
  for (var q = 0; q < Q; q++) {
    var phase0 = frac(q * 0.618034);   // queries start out of step, so the flow looks continuous
    out.push({ query: tab.queries[q], key: tab.argmax(q), lead: true, p: frac(t * FLIGHTS + phase0) });
    js.forEach(function (j, i) {
      out.push({ query: tab.queries[q], key: tab.targets(q, j), lead: false, p: frac(t * FLIGHTS + phase0 + (i + 1) / (js.length + 1)) });
    });
  }
  return out;
}

function bezier(p, a, c, b) {
  var u = 1 - p;
  return [u * u * a[0] + 2 * u * p * c[0] + p * p * b[0], u * u * a[1] + 2 * u * p * c[1] + p * p * b[1]];
}

export const particles = { table: table, subset: subset, at: at, bezier: bezier, FLIGHTS: FLIGHTS };
