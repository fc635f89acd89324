/* forward_anim_data.js: what the animated forward pass draws, read from the page's blobs (no values of its own).
 *   animData(pg, cap, anim, matrix) -> {
 *     from,                        {conv: [a, b], projection: [a, b], transpose: [a]}: record names (from Python)
 *     tensor(name, sample)         {values, rows, cols, range, shape, binned} of a stage record (page_forward's
 *                                  stages: exact, or the binned means it carries for the large ones); range =
 *                                  99th percentile of this sample's |value| (the colour scale's ends)
 *     ffn(part, sample, layer)     {values, units, range}: each FFN unit's mean over the window (range: max |mean|), part "in" (ln2),
 *                                  "hidden" (GELU) or "out" (before FiLM)
 *     film(sample, layer)          {gamma, beta, out, filmed, range, gammaRange, betaRange}: the layer's real γ, β
 *                                  (ranges: largest |γ|, |β| over the batch)
 *                                  (mean over devices, as the encoder applies them) and the FFN output's unit means
 *                                  before / after FiLM: (1 + γ) * out + β (exact for means over time)
 *     table(sample, layer, head)   the attention particle table (forward_anim_particles.js)
 *   }
 */
import { decodeF16 } from "./decode.js";
import { particles } from "./forward_anim_particles.js";

function maxAbs(a) { var m = 0; for (var i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i])); return m || 1; }

function robust(a) {   // the 99th percentile of |value|: one outlier does not wash out the rest of the colours
  var s = Float32Array.from(a, Math.abs).sort();
  return s[Math.floor(0.99 * (s.length - 1))] || maxAbs(a);
}

function statRange(rec) { return Math.max(Math.abs(rec.stats.min), Math.abs(rec.stats.max)) || 1; }

export function animData(pg, cap, anim, matrix) {
  var ffnCache = {}, tensorCache = {};
  function tensor(name, sample) {
    var k = name + "#" + sample;
    if (!tensorCache[k]) { var t = matrix(name, sample); tensorCache[k] = Object.assign({}, t, { range: robust(t.values) }); }
    return tensorCache[k];
  }
  function ffnAll(part) {
    var e = anim.ffn[part];
    if (!ffnCache[part]) {
      var v = decodeF16(e.data, e.shape[0] * e.shape[1] * e.shape[2]);
      ffnCache[part] = { values: v, shape: e.shape, range: maxAbs(v), source: e.source };
    }
    return ffnCache[part];
  }
  function ffn(part, sample, layer) {
    var a = ffnAll(part), U = a.shape[2], o = (sample * a.shape[1] + layer) * U;
    var v = a.values.subarray(o, o + U);
    return { values: v, units: U, range: maxAbs(v), source: a.source[layer] };
  }
  function film(sample, layer) {
    var names = pg.data.anim.film, out = ffn("out", sample, layer), d = out.units;
    var g = names ? cap.slice(names.gamma, sample).subarray(layer * d, (layer + 1) * d) : new Float32Array(d);
    var b = names ? cap.slice(names.beta, sample).subarray(layer * d, (layer + 1) * d) : new Float32Array(d);
    var filmed = new Float32Array(d);
    for (var i = 0; i < d; i++) filmed[i] = (1 + g[i]) * out.values[i] + b[i];
    return { gamma: g, beta: b, out: out.values, filmed: filmed, range: Math.max(maxAbs(out.values), maxAbs(filmed)),
             gammaRange: names ? statRange(cap.record(names.gamma)) : 1, betaRange: names ? statRange(cap.record(names.beta)) : 1,
             names: names };
  }
  return {
    from: pg.data.anim.from,
    tensor: tensor,
    ffn: ffn,
    film: film,
    table: function (sample, layer, head) { return particles.table(anim, sample, layer, head); },
  };
}
