// node --test tests/js/: the Why page's pure parts: Spearman as quality.spearman (hand-computed, ties and signs),
// the stored target a control selects, and occlusion of any target from the stored passes (Captum's rule by hand).
import { test } from "node:test";
import assert from "node:assert/strict";
import { compare, rows, spearman } from "../../static/js/why_attention.js";
import { explain, storedIndex } from "../../static/js/why_data.js";

test("spearman of |a| and |b| with average ranks for ties", () => {
  // ranks [1, 2.5, 2.5, 4] and [1, 3, 2, 4]: deviations [-1.5, 0, 0, 1.5] and [-1.5, .5, -.5, 1.5] -> 4.5 / sqrt(4.5 * 5)
  assert.ok(Math.abs(spearman([1, 2, 2, 4], [1, 3, 2, 4]) - 4.5 / Math.sqrt(22.5)) < 1e-12);
  assert.equal(spearman([-3, 1, 2], [3, 1, 2]), 1);   // absolute values are ranked
  assert.ok(Number.isNaN(spearman([1, 1, 1], [1, 2, 3])));   // a constant map has no ranking
});

// One device, 4 steps, occlusion windows [0, 2) and [2, 4): pass 0 is the signal, passes 1-2 the occluded copies.
function toy() {
  var watts = [[10, 20, 30, 40], [0, 0, 30, 40], [10, 20, 5, 5]];
  return {
    L: 4, D: 1, P: 2, K: 2, pointMethods: ["occlusion", "saliency"],
    passes: Float32Array.from(watts.flat()), windows: [{ lo: 0, hi: 2 }, { lo: 2, hi: 4 }],
    targets: [{ device: 0, lo: 0, hi: 4, point: false }, { device: 0, lo: 3, hi: 4, point: true }],
    attr: { ig: Float32Array.from([1, 2, 3, 4, NaN, NaN, NaN, NaN]), occlusion: Float32Array.from([9, 9, 9, 9, 8, 8, 8, 8]) },
  };
}

test("a control's target is stored, or derived from the passes (occlusion), or not available", () => {
  var W = toy(), stepS = 60;
  assert.equal(storedIndex(W, 0, { lo: 0, hi: 4, point: false }), 0);
  assert.equal(storedIndex(W, 0, { lo: 3, hi: 4, point: true }), 1);
  assert.equal(storedIndex(W, 0, { lo: 1, hi: 2, point: true }), -1);
  assert.deepEqual(Array.from(explain(W, "ig", 0, { lo: 0, hi: 4, point: false, stepS }).values), [1, 2, 3, 4]);
  assert.ok(explain(W, "ig", 0, { lo: 3, hi: 4, point: true, stepS }).message);   // NaN row: ig has no point targets
  // occlusion of the power at step 2 (not stored): window 0 drops 30 - 30 = 0, window 1 drops 30 - 5 = 25
  var ex = explain(W, "occlusion", 0, { lo: 2, hi: 3, point: true, stepS });
  assert.equal(ex.k, -1);
  assert.deepEqual(Array.from(ex.values), [0, 0, 25, 25]);
  assert.equal(ex.value, 30);
  // energy over steps 0-1 (Wh at 60 s): f(x) = 30 W min = 0.5 Wh; window 0 drops it all, window 1 nothing
  var en = explain(W, "occlusion", 0, { lo: 0, hi: 2, point: false, stepS });
  assert.deepEqual(Array.from(en.values), [0.5, 0.5, 0, 0]);
});

// An upstream model's attention row: 4 time steps, then the stats token (key 4). Two heads that give the stats
// token 0.2 and 0.8 of their weight. Over the time steps, as computed (not renormalised), the head mean is
// [0.25, 0.075, 0.075, 0.1]: ranks [4, 1.5, 1.5, 3], those of the attribution [4, 1, 1, 2], so rho = 1.
// Renormalising each head first would give [0.3125, 0.1875, 0.1875, 0.3125] (ranks [3.5, 1.5, 1.5, 3.5], rho < 1).
test("attention over the time steps only, the stats token's weight kept apart", () => {
  var heads = [[0.5, 0.1, 0.1, 0.1, 0.2], [0.0, 0.05, 0.05, 0.1, 0.8]];
  var cap = { record: () => ({ shape: [1, 2, 5, 5] }), attentionRow: (name, b, h) => Float32Array.from(heads[h]) };
  var layers = rows(cap, ["layer0"], 0, 1, 4);
  assert.equal(layers[0].heads[1].length, 4);
  assert.deepEqual(Array.from(layers[0].heads[1]), Array.from(Float32Array.from([0.0, 0.05, 0.05, 0.1])));
  assert.deepEqual(layers[0].stats.heads, [Math.fround(0.2), Math.fround(0.8)]);
  var cmp = compare(layers, [4, 1, 1, 2]);
  assert.ok(Math.abs(cmp[0].mean - 1) < 1e-12);
  assert.ok(Math.abs(cmp[0].stats - 0.5) < 1e-7);
  var spec = rows(cap, ["layer0"], 0, 1);   // the spec's model: no stats token, the row as it is
  assert.equal(spec[0].heads[0].length, 5);
  assert.equal(spec[0].stats, null);
  assert.equal(compare(spec, [4, 1, 1, 2, 0])[0].stats, null);
});
