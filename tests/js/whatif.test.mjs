// node --test tests/js/: live_model.js whatIfFeeds (what-if settings -> the graph's inputs) and your_signal.js
// (the Playground's edit in localStorage), without a browser. The spec is shaped as nilmbuild/site/views/live_parts.py writes it.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const load = (f) => import(pathToFileURL(path.join(ROOT, "static", "js", f)).href);
const M = await load("live_model.js");
const Y = await load("your_signal.js");

const spec = {
  window: 4, devices: ["kettle", "fridge"],
  whatIf: {
    thresholds: { key: "thresholds", dims: [2], value: [0.99, 0.5] },
    film_enc_affine: { key: "filmEncAffine", dims: [2, 4], value: [1, 0, 1, 0, 1, 0, 1, 0] },
    film_on: { key: "filmOn", dims: [], value: [1] },
    mask_diagonal: { key: "maskDiagonal", dims: [], value: [1] },
    soft_gate: { key: "softGate", dims: [], value: [0] },
  },
};

test("whatIfFeeds: every input present, defaults for what is left out", () => {
  const f = M.whatIfFeeds(spec, undefined);
  assert.deepEqual(Object.keys(f), ["thresholds", "film_enc_affine", "film_on", "mask_diagonal", "soft_gate"]);
  assert.deepEqual(Array.from(f.thresholds.data), [Math.fround(0.99), 0.5]);
  assert.deepEqual(f.film_enc_affine.dims, [2, 4]);
  assert.deepEqual(f.film_on.dims, []);
});

test("whatIfFeeds: overrides, booleans as 1/0, nested rows flattened", () => {
  const f = M.whatIfFeeds(spec, { thresholds: [1, 0.05], filmEncAffine: [[1, 0, 1, 0], Float32Array.of(2, 0.1, 0.5, -0.25)],
                                   filmOn: false, maskDiagonal: true, softGate: 1 });
  assert.deepEqual(Array.from(f.thresholds.data), [1, Math.fround(0.05)]);
  assert.deepEqual(Array.from(f.film_enc_affine.data), [1, 0, 1, 0, 2, Math.fround(0.1), 0.5, -0.25]);
  assert.equal(f.film_on.data[0], 0);
  assert.equal(f.mask_diagonal.data[0], 1);
  assert.equal(f.soft_gate.data[0], 1);
});

test("whatIfFeeds: wrong length, non-finite values and unknown names are errors that say what to pass", () => {
  assert.throws(() => M.whatIfFeeds(spec, { thresholds: [0.5] }), /thresholds needs 2 finite values, got 0.5/);
  assert.throws(() => M.whatIfFeeds(spec, { thresholds: [0.5, NaN] }), /needs 2 finite values/);
  assert.throws(() => M.whatIfFeeds(spec, { threshold: [0.5, 0.5] }), /unknown what-if 'threshold'; use thresholds, filmEncAffine/);
});

test("modelInputScaled: channel 0 is the scaled aggregate as given", () => {
  const s = { window: 4, channels: 7, stepS: 60 };
  const x = M.modelInputScaled(s, Float32Array.of(0.1, 0.2, 0.3, 0.4), "2024-04-12T08:00");
  assert.deepEqual(Array.from(x.subarray(0, 4)), [0.1, 0.2, 0.3, 0.4].map(Math.fround));
  assert.equal(x.length, 28);
});

test("your signal: saved, read back, refused for another model, absent without storage", () => {
  const store = new Map();
  globalThis.window = { localStorage: { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, String(v)) } };
  assert.equal(Y.loadSignal(spec), null);
  assert.equal(Y.saveSignal(spec, { aggregate: [100, 2500.12345, 300, 0], start: "2024-04-12T08:00", label: "edit" }), true);
  const s = Y.loadSignal(spec);
  assert.deepEqual(Array.from(s.aggregate), [100, Math.fround(2500.123), 300, 0]);
  assert.equal(s.start, "2024-04-12T08:00");
  assert.equal(Y.loadSignal({ ...spec, window: 5 }), null);
  assert.equal(Y.loadSignal({ ...spec, devices: ["kettle"] }), null);
  globalThis.window = { get localStorage() { throw new Error("SecurityError"); } };
  assert.equal(Y.loadSignal(spec), null);
  assert.equal(Y.saveSignal(spec, { aggregate: [1, 2, 3, 4], start: "x", label: "y" }), false);
});
