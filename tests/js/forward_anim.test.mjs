// node --test tests/js/: the animated forward pass's particle maths and frame-rate policy
import { test } from "node:test";
import assert from "node:assert/strict";
import { particles } from "../../static/js/forward_anim_particles.js";
import { quality } from "../../static/js/forward_anim_quality.js";

function u16bytes(a) { const b = new Uint8Array(2 * a.length); a.forEach((v, i) => { b[2 * i] = v & 255; b[2 * i + 1] = v >> 8; }); return b; }
const F16_HALF = [0x00, 0x38];   // 0.5 as float16, little-endian

// 2 samples x 1 layer x 2 heads x 2 queries x 3 particles; value = a recognisable code of its position
const shape = [2, 1, 2, 2, 3], targets = [], argmax = [];
for (let b = 0; b < 2; b++) for (let h = 0; h < 2; h++) for (let q = 0; q < 2; q++) {
  argmax.push(1000 * b + 100 * h + 10 * q + 9);
  for (let j = 0; j < 3; j++) targets.push(1000 * b + 100 * h + 10 * q + j);
}
const anim = { attention: { shape, queries: [5, 15], targets: u16bytes(targets), argmax: u16bytes(argmax),
                            argmax_weight: new Uint8Array(Array(8).fill(F16_HALF).flat()) } };

test("table: (sample, layer, head, query, particle) row-major, as the Python blob writes it", () => {
  const t = particles.table(anim, 1, 0, 1);
  assert.equal(t.targets(1, 2), 1112);
  assert.equal(t.targets(0, 0), 1100);
  assert.equal(t.argmax(1), 1119);
  assert.equal(t.argmaxWeight(0), 0.5);
  assert.deepEqual(t.queries, [5, 15]);
});

test("subset: n of P particles spread over the row's quantiles, all of them when n >= P", () => {
  assert.deepEqual(particles.subset(12, 3), [2, 6, 10]);
  assert.deepEqual(particles.subset(12, 1), [6]);
  assert.deepEqual(particles.subset(4, 9), [0, 1, 2, 3]);
});

test("at: one lead particle per query flies to the row's argmax, the others to the sampled keys", () => {
  const t = particles.table(anim, 0, 0, 1), got = particles.at(t, 0.37, 3);
  assert.equal(got.length, 2 * (1 + 3));
  const lead = got.filter((p) => p.lead);
  assert.deepEqual(lead.map((p) => [p.query, p.key]), [[5, 109], [15, 119]]);
  assert.deepEqual(got.filter((p) => !p.lead && p.query === 15).map((p) => p.key), [110, 111, 112]);
  got.forEach((p) => assert.ok(p.p >= 0 && p.p < 1));
  assert.deepEqual(particles.at(t, 0.37, 3), got);                       // deterministic in t
  assert.notDeepEqual(particles.at(t, 0.5, 3).map((p) => p.p), got.map((p) => p.p));   // and moving
});

test("bezier: ends at its end points, halfway = (a + 2c + b) / 4", () => {
  assert.deepEqual(particles.bezier(0, [0, 0], [4, 8], [8, 0]), [0, 0]);
  assert.deepEqual(particles.bezier(1, [0, 0], [4, 8], [8, 0]), [8, 0]);
  assert.deepEqual(particles.bezier(0.5, [0, 0], [4, 8], [8, 0]), [4, 4]);
});

test("quality: slow frames halve particles, then halve resolution, then one particle; fast frames undo it", () => {
  let q = { perQuery: 12, maxPerQuery: 12, resolution: 1 };
  const slow = 1000 / 20, fast = 1000 / 60, steps = [];
  for (let i = 0; i < 5; i++) { q = quality.next(q, slow); steps.push([q.perQuery, q.resolution]); }
  assert.deepEqual(steps, [[6, 1], [3, 1], [3, 0.5], [1, 0.5], [1, 0.5]]);
  assert.equal(quality.next(q, slow), q);                                // nothing left to lower: unchanged
  q = quality.next(q, fast);
  assert.deepEqual([q.perQuery, q.resolution], [1, 1]);
  q = quality.next(quality.next(q, fast), fast);
  assert.deepEqual([q.perQuery, q.resolution], [4, 1]);
  const none = quality.next({ perQuery: 12, maxPerQuery: 12, resolution: 1 }, slow, false);   // no particles drawn
  assert.deepEqual([none.perQuery, none.resolution], [12, 0.5]);
  const ok = { perQuery: 12, maxPerQuery: 12, resolution: 1 };
  assert.equal(quality.next(ok, 1000 / 40), ok);                         // between 30 and 50 fps: keep
});
