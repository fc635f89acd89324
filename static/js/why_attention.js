/* why_attention.js: attention against attribution at one query step (nilmbuild/explain/attention.py's
 * comparison, in the page). The attention rows come from the capture's q, k and lse of the window
 * (decode.js attentionRow: one row rebuilt exactly as the reader rebuilds the whole matrix).
 *
 *   rows(cap, names, sample, query, stats)
 *                                    -> per layer: {heads: [Float32Array L], mean: Float64Array L, stats}: the
 *                                       weights on the L time steps; stats: the key index of an upstream model's
 *                                       stats token (page().data.tokens.stats_index; undefined: none), whose
 *                                       weight is taken out of the rows, not renormalised away, and kept as
 *                                       stats = {heads: [weight per head], mean} (null without one)
 *   spearman(a, b)                   -> Spearman rank correlation of |a| and |b| (average ranks for ties;
 *                                       NaN when either is constant), as quality.spearman
 *   compare(layers, attribution)     -> per layer {mean: rho of the head mean, heads: [rho per head],
 *                                       stats: the head-mean weight on the stats token, or null}
 */

function timeSteps(row, stats) {   // the row without the stats token's key
  if (stats === undefined) return row;
  var out = new Float32Array(row.length - 1);
  out.set(row.subarray(0, stats));
  out.set(row.subarray(stats + 1), stats);
  return out;
}

export function rows(cap, names, sample, query, stats) {
  return names.map(function (name) {
    var H = cap.record(name).shape[1], heads = [], mean = null, on = stats === undefined ? null : { heads: [], mean: 0 };
    for (var h = 0; h < H; h++) {
      var full = cap.attentionRow(name, sample, h, query), r = timeSteps(full, stats);
      heads.push(r);
      if (on) { on.heads.push(full[stats]); on.mean += full[stats] / H; }
      if (!mean) mean = new Float64Array(r.length);
      for (var s = 0; s < r.length; s++) mean[s] += r[s] / H;
    }
    return { heads: heads, mean: mean, stats: on };
  });
}

function ranks(v) {
  var n = v.length, order = Array.from({ length: n }, function (_, i) { return i; });
  order.sort(function (a, b) { return v[a] - v[b] || a - b; });
  var out = new Float64Array(n);
  for (var i = 0; i < n;) {
    var j = i;
    while (j + 1 < n && v[order[j + 1]] === v[order[i]]) j++;
    var r = (i + j) / 2 + 1;
    for (var k = i; k <= j; k++) out[order[k]] = r;
    i = j + 1;
  }
  return out;
}

function corr(a, b) {
  var n = a.length, ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
  for (var i = 0; i < n; i++) { ma += a[i] / n; mb += b[i] / n; }
  for (var k = 0; k < n; k++) {
    var x = a[k] - ma, y = b[k] - mb;
    sab += x * y; saa += x * x; sbb += y * y;
  }
  return saa === 0 || sbb === 0 ? NaN : sab / Math.sqrt(saa * sbb);
}

export function spearman(a, b) {
  var abs = function (v) { return Float64Array.from(v, Math.abs); };
  return corr(ranks(abs(a)), ranks(abs(b)));
}

export function compare(layers, attribution) {
  return layers.map(function (l) {
    return { mean: spearman(l.mean, attribution), heads: l.heads.map(function (h) { return spearman(h, attribution); }),
             stats: l.stats ? l.stats.mean : null };
  });
}
