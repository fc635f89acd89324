// node --test tests/js/  (NB_CAPTURE_FIXTURE=DIR from tests/test_js_decoder.py; generated here if unset)
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
let FIX = process.env.NB_CAPTURE_FIXTURE;
if (!FIX) {
  FIX = fs.mkdtempSync(path.join(os.tmpdir(), "nbcap-"));
  // standalone `node --test tests/js`: the fixture needs nilmbuild + torch, so prefer the project's venv
  const venv = path.join(ROOT, ".venv", "bin", "python");
  const py = process.env.PYTHON || (fs.existsSync(venv) ? venv : "python3");
  execFileSync(py, [path.join(ROOT, "tests", "test_js_decoder.py"), FIX], { cwd: ROOT, stdio: "inherit" });
}

// the decoder is an ES module; it imports @msgpack/msgpack from node_modules, as the page bundle does
const { decode, decodeF16, halfToFloat } = await import(pathToFileURL(path.join(ROOT, "static/js/decode.js")).href);
const manifest = JSON.parse(fs.readFileSync(path.join(FIX, "manifest.json"), "utf8"));

function expected(key, i) {
  const b = fs.readFileSync(path.join(FIX, key, `${i}.f32`));
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}
function load(key) { return decode(new Uint8Array(fs.readFileSync(path.join(FIX, `${key}.msgpack`)))); }
const plain = (x) => JSON.parse(JSON.stringify(x));   // plain JSON values (arrays of strings, numbers)
function maxAbs(a) { let m = 0; for (const v of a) if (Math.abs(v) > m) m = Math.abs(v); return m; }

test("stored encodings decode bit-exactly (f16 special values, f32, bits, u8bool, f16z)", () => {
  const cap = load("special");
  assert.deepEqual(plain(cap.names()), manifest.special.names);
  manifest.special.names.forEach((n, i) => {
    const got = cap.get(n), want = expected("special", i);
    assert.equal(got.length, want.length, n);
    for (let j = 0; j < want.length; j++) {
      if (Number.isNaN(want[j])) assert.ok(Number.isNaN(got[j]), `${n}[${j}] NaN`);
      else assert.ok(Object.is(got[j], want[j]), `${n}[${j}]: ${got[j]} != ${want[j]}`);
    }
  });
});

test("manual float16 fallback: subnormals, zeros, inf, nan, every pattern", () => {
  const h = halfToFloat;
  assert.equal(h(0x0001), Math.pow(2, -24));
  assert.equal(h(0x03ff), 1023 * Math.pow(2, -24));
  assert.equal(h(0x0400), Math.pow(2, -14));
  assert.equal(h(0x3c00), 1);
  assert.equal(h(0xc000), -2);
  assert.equal(h(0x7bff), 65504);
  assert.equal(h(0x7c00), Infinity);
  assert.equal(h(0xfc00), -Infinity);
  assert.ok(Number.isNaN(h(0x7e00)) && Number.isNaN(h(0xfc01)));
  assert.ok(Object.is(h(0x8000), -0));
  const all = new Uint8Array(131072);
  for (let i = 0; i < 65536; i++) { all[2 * i] = i & 255; all[2 * i + 1] = i >> 8; }
  const fallback = decodeF16(all, 65536, false), want = expected("special", 0);
  for (let i = 0; i < 65536; i++) {
    if (Number.isNaN(want[i])) assert.ok(Number.isNaN(fallback[i]));
    else assert.ok(Object.is(fallback[i], want[i]), `pattern ${i}`);
  }
});

test("every record of a real capture equals the Python reader's values", () => {
  const cap = load("capture");
  assert.deepEqual(plain(cap.names()), manifest.capture.names);
  assert.deepEqual(plain(cap.meta.samples), [0, 2]);
  manifest.capture.names.forEach((n, i) => {
    const rec = cap.record(n), got = cap.get(n), want = expected("capture", i);
    assert.equal(rec.data, undefined);
    assert.equal(got.length, want.length, n);
    if (rec.encoding !== "derived") {
      for (let j = 0; j < want.length; j++) assert.ok(Object.is(got[j], want[j]) || (got[j] === want[j]), `${n}[${j}]`);
    } else {
      const tol = 1e-5 * Math.max(1, maxAbs(want));           // float64 in both, summation order differs
      let e = 0;
      for (let j = 0; j < want.length; j++) e = Math.max(e, Math.abs(got[j] - want[j]));
      assert.ok(e <= tol, `${n} (${rec.op}): max diff ${e} > ${tol}`);
    }
    if (rec.shape.length && rec.axes[0] === "batch") {
      const row = cap.rows(n).indexOf(2), s = cap.slice(n, 1);  // the blob's sample 1 is batch index 2
      assert.equal(s.length, got.length / rec.shape[0]);
      assert.equal(s[0], got[row * got.length / rec.shape[0]]);
    }
  });
});

test("a partial record (a run on some samples only) holds the rows the Python reader says, and rebuilds them", () => {
  const cap = load("capture"), names = Object.keys(manifest.partial);
  assert.ok(names.some((n) => cap.record(n).op === "alias"), "an alias of a record that holds every sample");
  for (const n of names) {
    assert.deepEqual(plain(cap.rows(n)), manifest.partial[n], n);
    assert.equal(cap.get(n).length / cap.record(n).shape[0], cap.slice(n, 1).length, n);
    assert.throws(() => cap.slice(n, 0), /holds samples/, n);         // batch index 0: not in the run
  }
});

test("slice of a derived record, derived for that entry alone, is bit-identical to get's entry", () => {
  const full = load("capture"), lazy = load("capture");
  let alone = 0;
  for (const n of manifest.capture.names) {
    const rec = full.record(n);
    if (rec.encoding !== "derived" || !rec.shape.length || rec.axes[0] !== "batch") continue;
    const all = full.get(n), m = all.length / rec.shape[0], rows = full.rows(n);
    for (let i = rec.shape[0] - 1; i >= 0; i--) {
      const s = lazy.slice(n, full.meta.samples.indexOf(rows[i])), want = all.subarray(i * m, (i + 1) * m);
      assert.equal(s.length, m, n);
      for (let j = 0; j < m; j++) assert.ok(Object.is(s[j], want[j]), `${n} (${rec.op})[${i}][${j}]: ${s[j]} != ${want[j]}`);
    }
    if (lazy._cache[n] === undefined) alone++;             // entry by entry, never the whole batch
  }
  assert.ok(alone >= 10, `only ${alone} derived records were derived per entry`);
});

test("attentionRow matches the Python reader without materialising the matrix; rows sum to 1", () => {
  const cap = load("capture");
  for (const r of manifest.rows) {
    const fresh = load("capture");                             // nothing cached
    const row = fresh.attentionRow(r.name, r.b, r.h, r.q);
    assert.equal(fresh._cache[r.name], undefined);
    let e = 0, sum = 0;
    for (let s = 0; s < row.length; s++) { e = Math.max(e, Math.abs(row[s] - r.row[s])); sum += row[s]; }
    assert.ok(e <= 1e-5 * Math.max(1, maxAbs(r.row)), `${r.name} row: ${e}`);
    if (r.name.endsWith("attn.weights")) {
      assert.ok(Math.abs(sum - 1) < 1e-5, `sum ${sum}`);
      if (cap.record(r.name).mask_diagonal) assert.equal(row[r.q], 0);
    }
  }
});
