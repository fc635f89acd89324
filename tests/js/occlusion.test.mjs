// node --test tests/js/: occlusion.js (the arithmetic of the Playground's live occlusion, issue 32 item 4) on
// hand-computed cases, and explain_strip.js's clock ticks. The windows follow Captum's Occlusion: for
// f(x) = sum(x * [1..5]) at x = 1 against 0, windows of 2 every 2 give [3, 3, 7, 7, 5]; for f = sum(x * [1..6]),
// windows of 4 every 2 give [10, 10, 14, 14, 18, 18] (captum 0.9 prints exactly these).
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const load = (f) => import(pathToFileURL(path.join(ROOT, "static", "js", f)).href);
const O = await load("occlusion.js");
const X = await load("explain_strip.js");

// f(x) = sum(x_t * w_t), occluded to 0, as the runner does it: f at x and at each occluded copy.
function occlusionOfLinear(w, size, stride) {
  const n = w.length, x = new Float32Array(n).fill(1), xb = new Float32Array(n);
  const f = (v) => v.reduce((s, vt, t) => s + vt * w[t], 0);
  const wins = O.windows(n, size, stride);
  return O.attribute(f(x), wins.map((win) => f(O.occluded(x, xb, win))), wins, n);
}

test("windows: Captum's count and the last window cut at the end", () => {
  assert.deepEqual(O.windows(5, 2, 2), [{ lo: 0, hi: 2 }, { lo: 2, hi: 4 }, { lo: 4, hi: 5 }]);
  assert.deepEqual(O.windows(6, 4, 2), [{ lo: 0, hi: 4 }, { lo: 2, hi: 6 }]);
  assert.equal(O.windows(480, 16, 8).length, 59);
  assert.deepEqual(O.windows(480, 16, 8).at(-1), { lo: 464, hi: 480 });
});

test("attribute: the mean drop over the windows covering each step", () => {
  assert.deepEqual(Array.from(occlusionOfLinear([1, 2, 3, 4, 5], 2, 2)), [3, 3, 7, 7, 5]);
  assert.deepEqual(Array.from(occlusionOfLinear([1, 2, 3, 4, 5, 6], 4, 2)), [10, 10, 14, 14, 18, 18]);
});

test("occluded and unchanged: channel 0's steps [lo, hi) from the baseline input, the rest kept", () => {
  const x = Float32Array.from([5, 6, 7, 8, 1, 2, 3, 4]), xb = Float32Array.from([0, 0, 0, 0, 9, 9, 9, 9]);
  assert.deepEqual(Array.from(O.occluded(x, xb, { lo: 1, hi: 3 })), [5, 0, 0, 8, 1, 2, 3, 4]);
  assert.deepEqual(Array.from(x), [5, 6, 7, 8, 1, 2, 3, 4]);
  assert.equal(O.unchanged(Float32Array.from([0, 0, 7, 1]), xb, { lo: 0, hi: 2 }), true);
  assert.equal(O.unchanged(Float32Array.from([0, 0, 7, 1]), xb, { lo: 1, hi: 3 }), false);
});

test("target: energy in Wh over [lo, hi) of a device's row, or the power at one step", () => {
  const watts = Float32Array.from([1, 2, 3, 4, 600, 1200, 1800, 2400]); // 2 devices x 4 steps
  assert.equal(O.target(watts, 1, 4, { lo: 1, hi: 3, point: false, stepS: 60 }), (1200 + 1800) * 60 / 3600);
  assert.equal(O.target(watts, 1, 4, { lo: 3, hi: 4, point: true, stepS: 60 }), 2400);
  assert.deepEqual(Array.from(O.baseline([300, 120.5, 4000])), [120.5, 120.5, 120.5]);
});

test("clockTicks: whole hours of an 8-hour window at 60 s, UTC", () => {
  const t0 = Date.UTC(2024, 5, 9, 16, 0);
  const ticks = X.clockTicks(t0, 60, 480, 9);
  assert.deepEqual(ticks.map((k) => k.label), ["16:00", "17:00", "18:00", "19:00", "20:00", "21:00", "22:00", "23:00"]);
  assert.deepEqual(ticks.map((k) => k.step), [0, 60, 120, 180, 240, 300, 360, 420]);
  const late = X.clockTicks(Date.UTC(2024, 5, 9, 23, 50), 60, 30, 4);
  assert.deepEqual(late.map((k) => k.label), ["23:50", "00:00", "00:10"]); // 29 min: every 10 min
  assert.deepEqual(late.map((k) => k.step), [0, 10, 20]);
});
